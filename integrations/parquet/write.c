/*
 * write.c — split-block Bloom filters added to a Parquet file that lacks
 * them (amq_pq_add_filters).
 *
 *   in:   PAR1 | pages ...                     | FileMetaData | len | PAR1
 *   out:  PAR1 | pages ... (the same bytes)    | header bitset (per row
 *         group) | FileMetaData' | len' | PAR1
 *
 * Nothing before the old footer moves, so every offset the footer holds
 * (pages, indexes, other filters) stays right. The new footer is the old
 * one re-encoded field by field: every value is copied byte for byte, and
 * the column's ColumnMetaData gets bloom_filter_offset (14) and
 * bloom_filter_length (15) in place of any it had, in field-id order.
 * Only field headers are re-encoded (their ids are deltas from the field
 * before, and two fields may have been added).
 *
 * Each row group's filter holds its distinct values (amq_pq_values),
 * hashed as Parquet does, in an `sbbf` sized by amq for that many values
 * at the rate asked, whose bitset is the Parquet layout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amq/bloom.h"
#include "parquet_impl.h"

/* ---- the footer, re-encoded -------------------------------------------------- */

typedef struct rewrite {
    thrift_reader r;
    thrift_buf w;
    size_t col, group;
    const int64_t *offset; /* per row group */
    const int32_t *length;
} rewrite;

static void copy_value(rewrite *x, int type) {
    const uint8_t *s = x->r.p;
    thrift_skip(&x->r, type);
    thrift_put_bytes(&x->w, s, (size_t)(x->r.p - s));
}

static void copy_field(rewrite *x, int16_t *wlast, int16_t id, int type) {
    thrift_put_field(&x->w, wlast, id, type);
    copy_value(x, type);
}

static void put_bloom(rewrite *x, int16_t *wlast) {
    thrift_put_field(&x->w, wlast, 14, THRIFT_I64);
    thrift_put_i64(&x->w, x->offset[x->group]);
    thrift_put_field(&x->w, wlast, 15, THRIFT_I32);
    thrift_put_i64(&x->w, x->length[x->group]);
}

static void rw_colmeta(rewrite *x) {
    int16_t last = 0, wlast = 0, id;
    int t;
    bool put = false;
    thrift_struct_begin(&x->r);
    while (thrift_field(&x->r, &last, &id, &t)) {
        if (id == 14 || id == 15) {
            thrift_skip(&x->r, t);
            continue;
        }
        if (id > 15 && !put) {
            put_bloom(x, &wlast);
            put = true;
        }
        copy_field(x, &wlast, id, t);
    }
    thrift_struct_end(&x->r);
    if (!put)
        put_bloom(x, &wlast);
    thrift_put_stop(&x->w);
}

static void rw_chunk(rewrite *x, bool target) {
    int16_t last = 0, wlast = 0, id;
    int t;
    thrift_struct_begin(&x->r);
    while (thrift_field(&x->r, &last, &id, &t)) {
        if (target && id == 3 && t == THRIFT_STRUCT) {
            thrift_put_field(&x->w, &wlast, id, t);
            rw_colmeta(x);
        } else
            copy_field(x, &wlast, id, t);
    }
    thrift_struct_end(&x->r);
    thrift_put_stop(&x->w);
}

/* A list of structs, each rewritten by fn(x, index). */
static void rw_list(rewrite *x, void (*fn)(rewrite *, uint32_t)) {
    int et;
    uint32_t n = thrift_list(&x->r, &et);
    thrift_put_list(&x->w, et, n);
    if (et != THRIFT_STRUCT) {
        x->r.bad = true;
        return;
    }
    for (uint32_t i = 0; i < n && !x->r.bad; i++)
        fn(x, i);
}

static void rw_column_at(rewrite *x, uint32_t i) { rw_chunk(x, i == x->col); }

static void rw_group(rewrite *x, uint32_t g) {
    int16_t last = 0, wlast = 0, id;
    int t;
    x->group = g;
    thrift_struct_begin(&x->r);
    while (thrift_field(&x->r, &last, &id, &t)) {
        if (id == 1 && t == THRIFT_LIST) {
            thrift_put_field(&x->w, &wlast, id, t);
            rw_list(x, rw_column_at);
        } else
            copy_field(x, &wlast, id, t);
    }
    thrift_struct_end(&x->r);
    thrift_put_stop(&x->w);
}

static void rw_meta(rewrite *x) {
    int16_t last = 0, wlast = 0, id;
    int t;
    thrift_struct_begin(&x->r);
    while (thrift_field(&x->r, &last, &id, &t)) {
        if (id == 4 && t == THRIFT_LIST) {
            thrift_put_field(&x->w, &wlast, id, t);
            rw_list(x, rw_group);
        } else
            copy_field(x, &wlast, id, t);
    }
    thrift_struct_end(&x->r);
    thrift_put_stop(&x->w);
}

/* ---- the filters ---------------------------------------------------------------- */

typedef struct hash_set {
    uint64_t *h;
    size_t n, cap;
    bool nomem;
} hash_set;

static bool take_hash(void *ctx, const uint8_t *v, size_t len) {
    hash_set *s = ctx;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 1024;
        uint64_t *h = realloc(s->h, cap * sizeof *h);
        if (h == NULL) {
            s->nomem = true;
            return false;
        }
        s->h = h;
        s->cap = cap;
    }
    s->h[s->n++] = amq_pq_hash(v, len);
    return true;
}

/* The BloomFilterHeader of a bitset of n bytes: split-block, XXH64,
 * uncompressed (each a union whose field 1 is an empty struct). */
static void put_header(thrift_buf *w, size_t n) {
    static const uint8_t unions[] = {0x1c, 0x1c, 0x00, 0x00, 0x1c, 0x1c, 0x00,
                                     0x00, 0x1c, 0x1c, 0x00, 0x00, 0x00};
    int16_t last = 0;
    thrift_put_field(w, &last, 1, THRIFT_I32);
    thrift_put_i64(w, (int64_t)n);
    thrift_put_bytes(w, unions, sizeof unions);
}

/* Chunk (g, c)'s filter, header first, appended to w. */
static amq_status group_filter(const amq_pq_file *f, size_t g, size_t c,
                               double fpr, thrift_buf *w,
                               amq_pq_filter_stats *st, amq_pq_diag *diag) {
    hash_set s = {NULL, 0, 0, false};
    amq_filter *b = NULL;
    amq_options opt = {.hash = AMQ_HASH_XXH64};
    size_t distinct = 0, len;
    amq_status rc = amq_pq_values(f, g, c, take_hash, &s, diag);
    if (rc == AMQ_OK && s.nomem)
        rc = AMQ_ERR_NOMEM;
    if (rc == AMQ_OK) {
        distinct = amq__pq_distinct(s.h, s.n);
        rc = amq_filter_new("sbbf", distinct ? distinct : 1, fpr, &opt, &b,
                            NULL);
    }
    for (size_t i = 0; rc == AMQ_OK && i < distinct; i++)
        rc = amq_filter_add_hash(b, s.h[i]);
    if (rc == AMQ_OK) {
        const uint8_t *bits = amq_sbbf_parquet_bitset(amq_sbbf_of(b), &len);
        put_header(w, len);
        thrift_put_bytes(w, bits, len);
        double bound = amq_filter_fpr_bound(b);
        st->worst_bound = bound > st->worst_bound ? bound : st->worst_bound;
        st->values += distinct;
        st->bytes += len;
    }
    amq_filter_free(b);
    free(s.h);
    return rc;
}

/* ---- the file ------------------------------------------------------------------- */

static amq_status copy_prefix(const amq_pq_file *f, FILE *out) {
    uint8_t buf[1 << 16];
    for (uint64_t off = 0; off < f->data_end;) {
        size_t n = f->data_end - off < sizeof buf ? (size_t)(f->data_end - off)
                                                  : sizeof buf;
        AMQ_RETURN_IF_ERR(amq__pq_read(f, off, buf, n));
        if (fwrite(buf, 1, n, out) != n)
            return AMQ_ERR_IO;
        off += n;
    }
    return AMQ_OK;
}

static amq_status write_file(const amq_pq_file *f, const char *path,
                             const thrift_buf *filters,
                             const thrift_buf *meta) {
    char tmp[4096];
    uint8_t tail[8] = {0, 0, 0, 0, 'P', 'A', 'R', '1'};
    amq_status st;
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp)
        return AMQ_ERR_INVALID;
    FILE *out = fopen(tmp, "wb");
    if (out == NULL)
        return AMQ_ERR_IO;
    for (int i = 0; i < 4; i++)
        tail[i] = (uint8_t)(meta->len >> (8 * i));
    st = copy_prefix(f, out);
    if (st == AMQ_OK &&
        (fwrite(filters->p, 1, filters->len, out) != filters->len ||
         fwrite(meta->p, 1, meta->len, out) != meta->len ||
         fwrite(tail, 1, 8, out) != 8))
        st = AMQ_ERR_IO;
    if (fclose(out) != 0 && st == AMQ_OK)
        st = AMQ_ERR_IO;
    if (st == AMQ_OK && rename(tmp, path) != 0)
        st = AMQ_ERR_IO;
    if (st != AMQ_OK)
        remove(tmp);
    return st;
}

amq_status amq_pq_add_filters(const amq_pq_file *f, size_t c, double fpr,
                              const char *path, amq_pq_filter_stats *st,
                              amq_pq_diag *diag) {
    thrift_buf filters = {NULL, 0, 0, false};
    rewrite x;
    uint8_t *meta = NULL;
    size_t mlen = (size_t)(f->size - 8 - f->data_end);
    int64_t *offset = calloc(f->ngroups + 1, sizeof *offset);
    int32_t *length = calloc(f->ngroups + 1, sizeof *length);
    amq_status rc = offset && length ? AMQ_OK : AMQ_ERR_NOMEM;
    memset(st, 0, sizeof *st);
    if (c >= f->ncols || path == NULL || !(fpr > 0 && fpr < 1))
        rc = AMQ_ERR_INVALID;
    for (size_t g = 0; rc == AMQ_OK && g < f->ngroups; g++) {
        size_t at = filters.len;
        offset[g] = (int64_t)(f->data_end + at);
        rc = group_filter(f, g, c, fpr, &filters, st, diag);
        if (rc == AMQ_OK && filters.len - at > INT32_MAX)
            rc = AMQ_ERR_OVERFLOW;
        length[g] = (int32_t)(filters.len - at);
        st->groups++;
    }
    if (rc == AMQ_OK && filters.nomem)
        rc = AMQ_ERR_NOMEM;
    if (rc == AMQ_OK && (meta = malloc(mlen)) == NULL)
        rc = AMQ_ERR_NOMEM;
    if (rc == AMQ_OK)
        rc = amq__pq_read(f, f->data_end, meta, mlen);
    if (rc == AMQ_OK) {
        x = (rewrite){.col = c, .offset = offset, .length = length};
        thrift_init(&x.r, meta, mlen);
        rw_meta(&x);
        rc = x.r.bad     ? amq__pq_fail(diag, f->data_end, "a malformed footer",
                                        AMQ_ERR_CORRUPT)
             : x.w.nomem ? AMQ_ERR_NOMEM
             : x.w.len > UINT32_MAX ? AMQ_ERR_OVERFLOW
                                    : write_file(f, path, &filters, &x.w);
        if (rc == AMQ_ERR_IO)
            amq__pq_fail(diag, 0, "cannot write the output file", rc);
        free(x.w.p);
    }
    free(meta);
    free(filters.p);
    free(offset);
    free(length);
    return rc;
}
