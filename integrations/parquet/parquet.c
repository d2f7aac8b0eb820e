/*
 * parquet.c — a Parquet file's footer, its Bloom filters and its keys.
 *
 *   "PAR1" | column chunks (pages) | Bloom filters | FileMetaData | len | "PAR1"
 *
 * amq_pq_open reads the last 8 bytes, then the FileMetaData (Thrift
 * compact), and keeps of it what a lookup needs: the leaf columns (from
 * the schema's depth-first list of elements, each group giving its
 * children's count) and, per row group, each chunk's page range, codec,
 * value count and Bloom filter offset. Every offset is checked to lie
 * between the leading magic and the metadata before it is kept, so a
 * later read can only fail on I/O. The pages themselves are read by
 * pages.c.
 */
#include "parquet_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "amq/bloom.h"

/* Footers and filters larger than this are refused as corrupt rather
 * than read (a 2^31-byte footer is no one's). */
#define MAX_META (256u << 20)
#define MAX_BLOOM (512u << 20)
#define MAX_SCHEMA_DEPTH 64

amq_status amq__pq_fail(amq_pq_diag *diag, uint64_t offset, const char *what,
                        amq_status st) {
    if (diag != NULL) {
        diag->offset = offset;
        diag->what = what;
    }
    return st;
}

amq_status amq__pq_read(const amq_pq_file *f, uint64_t off, void *dst,
                        size_t len) {
    if (off > f->size || len > f->size - off)
        return AMQ_ERR_CORRUPT;
    if (f->mem != NULL) {
        memcpy(dst, f->mem + off, len);
        return AMQ_OK;
    }
    uint8_t *d = dst;
    while (len > 0) {
        ssize_t got = pread(f->fd, d, len, (off_t)off);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return AMQ_ERR_IO;
        d += got;
        off += (uint64_t)got;
        len -= (size_t)got;
    }
    return AMQ_OK;
}

bool amq__pq_uleb(const uint8_t **p, const uint8_t *end, uint64_t *v) {
    *v = 0;
    for (unsigned s = 0; s < 64 && *p < end; s += 7) {
        uint8_t b = *(*p)++;
        *v |= (uint64_t)(b & 0x7f) << s;
        if ((b & 0x80) == 0)
            return true;
    }
    return false;
}

static int cmp_u64(const void *x, const void *y) {
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

size_t amq__pq_distinct(uint64_t *h, size_t n) {
    size_t out = 0;
    if (n > 1)
        qsort(h, n, sizeof *h, cmp_u64);
    for (size_t i = 0; i < n; i++)
        if (out == 0 || h[i] != h[out - 1])
            h[out++] = h[i];
    return out;
}

/* ---- the schema ------------------------------------------------------------ */

typedef struct schema_el {
    int32_t type; /* -1: a group */
    int32_t type_length, repetition, children;
    const uint8_t *name;
    size_t name_len;
} schema_el;

static void parse_schema_el(thrift_reader *r, schema_el *e) {
    int16_t last = 0, id;
    int t;
    memset(e, 0, sizeof *e);
    e->type = -1;
    thrift_struct_begin(r);
    while (thrift_field(r, &last, &id, &t)) {
        if (id == 1 && t == THRIFT_I32)
            e->type = (int32_t)thrift_i64(r);
        else if (id == 2 && t == THRIFT_I32)
            e->type_length = (int32_t)thrift_i64(r);
        else if (id == 3 && t == THRIFT_I32)
            e->repetition = (int32_t)thrift_i64(r);
        else if (id == 4 && t == THRIFT_BINARY)
            e->name = thrift_binary(r, &e->name_len);
        else if (id == 5 && t == THRIFT_I32)
            e->children = (int32_t)thrift_i64(r);
        else
            thrift_skip(r, t);
    }
    thrift_struct_end(r);
}

typedef struct schema_walk {
    const schema_el *el;
    size_t n, next;
    amq_pq_file *f;
    char path[4096];
} schema_walk;

static amq_status add_leaf(schema_walk *w, const schema_el *e, size_t plen,
                           int def, int rep) {
    amq_pq_file *f = w->f;
    amq_pq_column *col;
    char *p;
    if (e->type < AMQ_PQ_BOOLEAN || e->type > AMQ_PQ_FIXED_LEN_BYTE_ARRAY)
        return AMQ_ERR_CORRUPT;
    if (e->type == AMQ_PQ_FIXED_LEN_BYTE_ARRAY &&
        (e->type_length <= 0 || e->type_length > AMQ_PQ_KEY_MAX))
        return AMQ_ERR_CORRUPT;
    p = malloc(plen + 1);
    if (p == NULL)
        return AMQ_ERR_NOMEM;
    memcpy(p, w->path, plen);
    p[plen] = '\0';
    col = &f->cols[f->ncols++];
    col->path = p;
    col->type = (amq_pq_type)e->type;
    col->type_length =
        e->type == AMQ_PQ_FIXED_LEN_BYTE_ARRAY ? e->type_length : 0;
    col->max_def = def;
    col->max_rep = rep;
    return AMQ_OK;
}

/* Element w->next and its subtree; the path so far is w->path[0..plen). */
static amq_status walk(schema_walk *w, size_t plen, int def, int rep,
                       int depth) {
    const schema_el *e;
    if (depth > MAX_SCHEMA_DEPTH || w->next >= w->n)
        return AMQ_ERR_CORRUPT;
    e = &w->el[w->next++];
    if (e->repetition == 1) /* OPTIONAL */
        def++;
    else if (e->repetition == 2) { /* REPEATED */
        def++;
        rep++;
    }
    size_t sep = plen > 0 ? 1 : 0;
    if (plen + sep + e->name_len >= sizeof w->path)
        return AMQ_ERR_UNSUPPORTED;
    if (sep)
        w->path[plen] = '.';
    if (e->name_len > 0)
        memcpy(w->path + plen + sep, e->name, e->name_len);
    plen += sep + e->name_len;
    if (e->children <= 0)
        return add_leaf(w, e, plen, def, rep);
    if ((size_t)e->children > w->n - w->next)
        return AMQ_ERR_CORRUPT;
    for (int32_t i = 0; i < e->children; i++)
        AMQ_RETURN_IF_ERR(walk(w, plen, def, rep, depth + 1));
    return AMQ_OK;
}

static amq_status parse_schema(thrift_reader *r, amq_pq_file *f) {
    int et;
    uint32_t n = thrift_list(r, &et);
    schema_el *el;
    amq_status st = AMQ_OK;
    if (r->bad || et != THRIFT_STRUCT || n == 0 || f->cols != NULL)
        return AMQ_ERR_CORRUPT;
    el = calloc(n, sizeof *el);
    f->cols = calloc(n, sizeof *f->cols);
    if (el == NULL || f->cols == NULL) {
        free(el);
        return AMQ_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < n && !r->bad; i++)
        parse_schema_el(r, &el[i]);
    if (r->bad || el[0].children <= 0 || (uint32_t)el[0].children >= n)
        st = AMQ_ERR_CORRUPT;
    else {
        schema_walk w = {.el = el, .n = n, .next = 1, .f = f};
        for (int32_t i = 0; i < el[0].children && st == AMQ_OK; i++)
            st = walk(&w, 0, 0, 0, 1);
        if (st == AMQ_OK && w.next != n)
            st = AMQ_ERR_CORRUPT;
    }
    free(el);
    return st;
}

/* ---- row groups ------------------------------------------------------------ */

typedef struct col_meta {
    int32_t type;
    int64_t data_off, dict_off;
    bool has_dict;
} col_meta;

static void parse_col_meta(thrift_reader *r, amq_pq_chunk *ch, col_meta *m) {
    int16_t last = 0, id;
    int t;
    thrift_struct_begin(r);
    while (thrift_field(r, &last, &id, &t)) {
        if (id == 1 && t == THRIFT_I32)
            m->type = (int32_t)thrift_i64(r);
        else if (id == 4 && t == THRIFT_I32)
            ch->codec = (int32_t)thrift_i64(r);
        else if (id == 5 && t == THRIFT_I64)
            ch->values = thrift_i64(r);
        else if (id == 7 && t == THRIFT_I64)
            ch->bytes = thrift_i64(r);
        else if (id == 9 && t == THRIFT_I64)
            m->data_off = thrift_i64(r);
        else if (id == 11 && t == THRIFT_I64) {
            m->dict_off = thrift_i64(r);
            m->has_dict = true;
        } else if (id == 14 && t == THRIFT_I64)
            ch->bloom_offset = thrift_i64(r);
        else if (id == 15 && t == THRIFT_I32)
            ch->bloom_length = (int32_t)thrift_i64(r);
        else
            thrift_skip(r, t);
    }
    thrift_struct_end(r);
}

/* The chunk's ranges lie in the data part of the file: [4, data_end). */
static bool chunk_ok(const amq_pq_chunk *ch, uint64_t data_end) {
    if (ch->start < 4 || ch->bytes < 0 || (uint64_t)ch->start > data_end ||
        (uint64_t)ch->bytes > data_end - (uint64_t)ch->start || ch->values < 0)
        return false;
    if (ch->bloom_offset == -1)
        return true;
    return ch->bloom_offset >= 4 && (uint64_t)ch->bloom_offset < data_end &&
           ch->bloom_length >= 0 &&
           (uint64_t)ch->bloom_length <= data_end - (uint64_t)ch->bloom_offset;
}

/* One ColumnChunk: *ok false when it names another file or has no
 * (plaintext) metadata, which amq cannot read. */
static void parse_chunk(thrift_reader *r, amq_pq_chunk *ch, col_meta *m,
                        bool *external, bool *has_meta) {
    int16_t last = 0, id;
    int t;
    thrift_struct_begin(r);
    while (thrift_field(r, &last, &id, &t)) {
        if (id == 1 && t == THRIFT_BINARY) {
            size_t n;
            thrift_binary(r, &n);
            *external = true;
        } else if (id == 3 && t == THRIFT_STRUCT) {
            parse_col_meta(r, ch, m);
            *has_meta = true;
        } else
            thrift_skip(r, t);
    }
    thrift_struct_end(r);
}

static amq_status parse_columns(thrift_reader *r, amq_pq_file *f, size_t g) {
    int et;
    uint32_t n = thrift_list(r, &et);
    if (r->bad || et != THRIFT_STRUCT || f->cols == NULL || n != f->ncols)
        return AMQ_ERR_CORRUPT;
    for (uint32_t c = 0; c < n && !r->bad; c++) {
        amq_pq_chunk *ch = &f->chunks[g * f->ncols + c];
        col_meta m = {.type = -1};
        bool external = false, has_meta = false;
        ch->bloom_offset = -1;
        parse_chunk(r, ch, &m, &external, &has_meta);
        if (r->bad)
            return AMQ_ERR_CORRUPT;
        if (external || !has_meta)
            return AMQ_ERR_UNSUPPORTED;
        if (m.type != (int32_t)f->cols[c].type)
            return AMQ_ERR_CORRUPT;
        /* Some writers put 0 for "no dictionary"; a dictionary page
         * always comes before the chunk's data pages. */
        ch->start = m.has_dict && m.dict_off > 0 && m.dict_off < m.data_off
                        ? m.dict_off
                        : m.data_off;
        if (!chunk_ok(ch, f->data_end))
            return AMQ_ERR_CORRUPT;
    }
    return AMQ_OK;
}

static amq_status parse_group(thrift_reader *r, amq_pq_file *f, size_t g) {
    int16_t last = 0, id;
    int t;
    bool cols = false;
    thrift_struct_begin(r);
    while (thrift_field(r, &last, &id, &t)) {
        if (id == 1 && t == THRIFT_LIST && !cols) {
            AMQ_RETURN_IF_ERR(parse_columns(r, f, g));
            cols = true;
        } else if (id == 3 && t == THRIFT_I64)
            f->group_rows[g] = thrift_i64(r);
        else
            thrift_skip(r, t);
    }
    thrift_struct_end(r);
    return r->bad || !cols || f->group_rows[g] < 0 ? AMQ_ERR_CORRUPT : AMQ_OK;
}

static amq_status parse_groups(thrift_reader *r, amq_pq_file *f) {
    int et;
    uint32_t n = thrift_list(r, &et);
    if (r->bad || et != THRIFT_STRUCT || f->cols == NULL || f->chunks != NULL)
        return AMQ_ERR_CORRUPT;
    f->group_rows = calloc(n ? n : 1, sizeof *f->group_rows);
    f->chunks = calloc(n ? (size_t)n * f->ncols : 1, sizeof *f->chunks);
    if (f->group_rows == NULL || f->chunks == NULL)
        return AMQ_ERR_NOMEM;
    f->ngroups = n;
    for (uint32_t g = 0; g < n; g++)
        AMQ_RETURN_IF_ERR(parse_group(r, f, g));
    return AMQ_OK;
}

static amq_status parse_meta(amq_pq_file *f, const uint8_t *meta, size_t len,
                             amq_pq_diag *diag) {
    thrift_reader r;
    int16_t last = 0, id;
    int t;
    amq_status st = AMQ_OK;
    uint64_t at = f->data_end;
    thrift_init(&r, meta, len);
    thrift_struct_begin(&r);
    while (st == AMQ_OK && thrift_field(&r, &last, &id, &t)) {
        if (id == 2 && t == THRIFT_LIST)
            st = parse_schema(&r, f);
        else if (id == 3 && t == THRIFT_I64)
            f->rows = thrift_i64(&r);
        else if (id == 4 && t == THRIFT_LIST)
            st = parse_groups(&r, f);
        else if (id == 6 && t == THRIFT_BINARY && f->created_by == NULL) {
            size_t n;
            const uint8_t *s = thrift_binary(&r, &n);
            if ((f->created_by = malloc(n + 1)) == NULL)
                st = AMQ_ERR_NOMEM;
            else {
                if (n > 0)
                    memcpy(f->created_by, s, n);
                f->created_by[n] = '\0';
            }
        } else if (id == 8) {
            st = AMQ_ERR_UNSUPPORTED; /* encryption_algorithm */
        } else
            thrift_skip(&r, t);
    }
    if (st == AMQ_OK && (r.bad || f->cols == NULL || f->chunks == NULL))
        st = AMQ_ERR_CORRUPT;
    if (st == AMQ_ERR_UNSUPPORTED)
        return amq__pq_fail(diag, at + thrift_offset(&r, meta),
                            "an encrypted file or a chunk in another file", st);
    if (st != AMQ_OK)
        return amq__pq_fail(diag, at + thrift_offset(&r, meta),
                            st == AMQ_ERR_NOMEM ? "out of memory"
                                                : "malformed file metadata",
                            st);
    return AMQ_OK;
}

/* ---- opening ---------------------------------------------------------------- */

static amq_status open_footer(amq_pq_file *f, amq_pq_diag *diag) {
    uint8_t tail[8], head[4];
    uint8_t *meta;
    uint32_t mlen;
    amq_status st;
    if (f->size < 12)
        return amq__pq_fail(diag, 0, "shorter than a Parquet file",
                            AMQ_ERR_CORRUPT);
    AMQ_RETURN_IF_ERR(amq__pq_read(f, 0, head, 4));
    AMQ_RETURN_IF_ERR(amq__pq_read(f, f->size - 8, tail, 8));
    if (memcmp(tail + 4, "PARE", 4) == 0)
        return amq__pq_fail(diag, f->size - 4, "an encrypted footer",
                            AMQ_ERR_UNSUPPORTED);
    if (memcmp(head, "PAR1", 4) != 0 || memcmp(tail + 4, "PAR1", 4) != 0)
        return amq__pq_fail(diag, 0,
                            "not a Parquet file (no PAR1 at its start and end)",
                            AMQ_ERR_CORRUPT);
    mlen = (uint32_t)tail[0] | (uint32_t)tail[1] << 8 |
           (uint32_t)tail[2] << 16 | (uint32_t)tail[3] << 24;
    if (mlen == 0 || mlen > MAX_META || mlen > f->size - 12)
        return amq__pq_fail(diag, f->size - 8, "a footer length past the file",
                            AMQ_ERR_CORRUPT);
    f->data_end = f->size - 8 - mlen;
    if ((meta = malloc(mlen)) == NULL)
        return AMQ_ERR_NOMEM;
    st = amq__pq_read(f, f->data_end, meta, mlen);
    if (st == AMQ_OK)
        st = parse_meta(f, meta, mlen, diag);
    free(meta);
    return st;
}

static amq_status open_common(amq_pq_file *f, amq_pq_file **out,
                              amq_pq_diag *diag) {
    amq_status st = open_footer(f, diag);
    if (st != AMQ_OK) {
        amq_pq_close(f);
        return st;
    }
    *out = f;
    return AMQ_OK;
}

amq_status amq_pq_open(const char *path, amq_pq_file **out, amq_pq_diag *diag) {
    struct stat sb;
    amq_pq_file *f;
    if (path == NULL || out == NULL)
        return AMQ_ERR_INVALID;
    if ((f = calloc(1, sizeof *f)) == NULL)
        return AMQ_ERR_NOMEM;
    f->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (f->fd < 0 || fstat(f->fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        amq_pq_close(f);
        return amq__pq_fail(diag, 0, "cannot read the file", AMQ_ERR_IO);
    }
    f->size = (uint64_t)sb.st_size;
    return open_common(f, out, diag);
}

amq_status amq_pq_open_memory(const void *buf, size_t len, amq_pq_file **out,
                              amq_pq_diag *diag) {
    amq_pq_file *f;
    if ((buf == NULL && len > 0) || out == NULL)
        return AMQ_ERR_INVALID;
    if ((f = calloc(1, sizeof *f)) == NULL)
        return AMQ_ERR_NOMEM;
    f->fd = -1;
    f->mem = buf != NULL ? buf : (const uint8_t *)"";
    f->size = len;
    return open_common(f, out, diag);
}

void amq_pq_close(amq_pq_file *f) {
    if (f == NULL)
        return;
    if (f->fd >= 0)
        close(f->fd);
    for (size_t c = 0; c < f->ncols; c++)
        free((char *)f->cols[c].path);
    free(f->cols);
    free(f->chunks);
    free(f->group_rows);
    free(f->created_by);
    free(f);
}

/* ---- accessors ---------------------------------------------------------- */

size_t amq_pq_columns(const amq_pq_file *f) { return f->ncols; }
const amq_pq_column *amq_pq_column_at(const amq_pq_file *f, size_t c) {
    return c < f->ncols ? &f->cols[c] : NULL;
}
int amq_pq_column_find(const amq_pq_file *f, const char *name) {
    for (size_t c = 0; c < f->ncols; c++)
        if (strcmp(f->cols[c].path, name) == 0)
            return (int)c;
    return -1;
}
size_t amq_pq_groups(const amq_pq_file *f) { return f->ngroups; }
int64_t amq_pq_group_rows(const amq_pq_file *f, size_t g) {
    return g < f->ngroups ? f->group_rows[g] : 0;
}
int64_t amq_pq_rows(const amq_pq_file *f) { return f->rows; }
const char *amq_pq_created_by(const amq_pq_file *f) {
    return f->created_by != NULL ? f->created_by : "";
}
uint64_t amq_pq_file_bytes(const amq_pq_file *f) { return f->size; }
const amq_pq_chunk *amq_pq_chunk_at(const amq_pq_file *f, size_t g, size_t c) {
    return g < f->ngroups && c < f->ncols ? &f->chunks[g * f->ncols + c] : NULL;
}

const char *amq_pq_codec_name(int32_t codec) {
    static const char *const names[] = {"none",   "snappy", "gzip", "lzo",
                                        "brotli", "lz4",    "zstd", "lz4_raw"};
    return codec >= 0 && codec < 8 ? names[codec] : "unknown";
}

const char *amq_pq_type_name(amq_pq_type t) {
    static const char *const names[] = {
        "BOOLEAN", "INT32",  "INT64",      "INT96",
        "FLOAT",   "DOUBLE", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"};
    return (int)t >= 0 && (int)t < 8 ? names[t] : "?";
}

/* ---- Bloom filters -------------------------------------------------------- */

/* A union (algorithm, hash, compression) whose only known member is
 * field 1, an empty struct. */
static bool union_is_first(thrift_reader *r) {
    int16_t last = 0, id;
    int t;
    int seen = 0;
    bool ok = true;
    thrift_struct_begin(r);
    while (thrift_field(r, &last, &id, &t)) {
        seen++;
        ok = ok && id == 1 && t == THRIFT_STRUCT;
        thrift_skip(r, t);
    }
    thrift_struct_end(r);
    return ok && seen == 1;
}

/* The header at hdr[0..n): the bitset's length and where it starts. */
static amq_status parse_bloom_header(const uint8_t *hdr, size_t n,
                                     int64_t *bytes, size_t *hlen) {
    thrift_reader r;
    int16_t last = 0, id;
    int t;
    bool known = true;
    *bytes = -1;
    thrift_init(&r, hdr, n);
    thrift_struct_begin(&r);
    while (thrift_field(&r, &last, &id, &t)) {
        if (id == 1 && t == THRIFT_I32)
            *bytes = thrift_i64(&r);
        else if (id >= 2 && id <= 4 && t == THRIFT_STRUCT)
            known = union_is_first(&r) && known;
        else
            thrift_skip(&r, t);
    }
    if (r.bad || *bytes < 0)
        return AMQ_ERR_CORRUPT;
    if (!known)
        return AMQ_ERR_UNSUPPORTED;
    *hlen = thrift_offset(&r, hdr);
    return AMQ_OK;
}

amq_status amq_pq_bloom_read(const amq_pq_file *f, size_t g, size_t c,
                             uint8_t **bitset, size_t *len, amq_pq_diag *diag) {
    const amq_pq_chunk *ch = amq_pq_chunk_at(f, g, c);
    uint8_t hdr[256];
    size_t n, hlen;
    int64_t bytes;
    amq_status st;
    uint64_t off;
    if (ch == NULL || bitset == NULL || len == NULL)
        return AMQ_ERR_INVALID;
    if (ch->bloom_offset < 0)
        return AMQ_ERR_NOT_FOUND;
    off = (uint64_t)ch->bloom_offset;
    n = f->data_end - off < sizeof hdr ? (size_t)(f->data_end - off)
                                       : sizeof hdr;
    if (ch->bloom_length > 0 && (size_t)ch->bloom_length < n)
        n = (size_t)ch->bloom_length;
    AMQ_RETURN_IF_ERR(amq__pq_read(f, off, hdr, n));
    st = parse_bloom_header(hdr, n, &bytes, &hlen);
    if (st != AMQ_OK)
        return amq__pq_fail(diag, off,
                            st == AMQ_ERR_UNSUPPORTED
                                ? "a Bloom filter other than split-block, "
                                  "XXH64, uncompressed"
                                : "a malformed Bloom filter header",
                            st);
    if (bytes == 0 || bytes % 32 != 0 || bytes > MAX_BLOOM ||
        (uint64_t)bytes > f->data_end - off - hlen ||
        (ch->bloom_length > 0 &&
         (uint64_t)bytes + hlen > (uint64_t)ch->bloom_length))
        return amq__pq_fail(diag, off, "a Bloom filter length past its bytes",
                            AMQ_ERR_CORRUPT);
    if ((*bitset = malloc((size_t)bytes)) == NULL)
        return AMQ_ERR_NOMEM;
    st = amq__pq_read(f, off + hlen, *bitset, (size_t)bytes);
    if (st != AMQ_OK) {
        free(*bitset);
        *bitset = NULL;
        return amq__pq_fail(diag, off + hlen, "cannot read the Bloom filter",
                            st);
    }
    *len = (size_t)bytes;
    return AMQ_OK;
}

amq_status amq_pq_probe(const amq_pq_file *f, size_t g, size_t c, uint64_t hash,
                        bool *maybe, amq_pq_diag *diag) {
    uint8_t *bits;
    size_t len;
    amq_status st = amq_pq_bloom_read(f, g, c, &bits, &len, diag);
    if (st == AMQ_ERR_NOT_FOUND) {
        *maybe = true;
        return AMQ_OK;
    }
    AMQ_RETURN_IF_ERR(st);
    *maybe = amq_sbbf_parquet_contains(bits, len, hash);
    free(bits);
    return AMQ_OK;
}

/* ---- keys ------------------------------------------------------------------- */

static void put_le(uint8_t *d, uint64_t v, unsigned n) {
    for (unsigned i = 0; i < n; i++)
        d[i] = (uint8_t)(v >> (8 * i));
}

/* A decimal integer in [lo, hi] (hi may exceed INT64_MAX: unsigned). */
static bool parse_int(const char *s, size_t n, int64_t lo, uint64_t hi,
                      uint64_t *out) {
    char buf[32], *end;
    if (n == 0 || n >= sizeof buf)
        return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    errno = 0;
    if (buf[0] == '-') {
        long long v = strtoll(buf, &end, 10);
        if (errno != 0 || *end != '\0' || v < lo)
            return false;
        *out = (uint64_t)v;
        return true;
    }
    if (buf[0] < '0' || buf[0] > '9')
        return false;
    unsigned long long u = strtoull(buf, &end, 10);
    if (errno != 0 || *end != '\0' || u > hi)
        return false;
    *out = u;
    return true;
}

static bool parse_real(const char *s, size_t n, double *out) {
    char buf[64], *end;
    if (n == 0 || n >= sizeof buf)
        return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    errno = 0;
    *out = strtod(buf, &end);
    return *end == '\0' && buf[0] != ' ' && errno != ERANGE;
}

amq_status amq_pq_encode_key(const amq_pq_column *col, const char *text,
                             size_t n, uint8_t *key, size_t *len) {
    uint64_t u;
    double d;
    if (col == NULL || (text == NULL && n > 0) || key == NULL || len == NULL)
        return AMQ_ERR_INVALID;
    switch (col->type) {
    case AMQ_PQ_INT32:
        if (!parse_int(text, n, INT32_MIN, UINT32_MAX, &u))
            return AMQ_ERR_INVALID;
        put_le(key, u, 4);
        *len = 4;
        return AMQ_OK;
    case AMQ_PQ_INT64:
        if (!parse_int(text, n, INT64_MIN, UINT64_MAX, &u))
            return AMQ_ERR_INVALID;
        put_le(key, u, 8);
        *len = 8;
        return AMQ_OK;
    case AMQ_PQ_FLOAT: {
        float x;
        uint32_t b;
        if (!parse_real(text, n, &d) || (isfinite(d) && fabs(d) > 3.4028235e38))
            return AMQ_ERR_INVALID;
        x = (float)d;
        memcpy(&b, &x, 4);
        put_le(key, b, 4);
        *len = 4;
        return AMQ_OK;
    }
    case AMQ_PQ_DOUBLE:
        if (!parse_real(text, n, &d))
            return AMQ_ERR_INVALID;
        memcpy(&u, &d, 8);
        put_le(key, u, 8);
        *len = 8;
        return AMQ_OK;
    case AMQ_PQ_FIXED_LEN_BYTE_ARRAY:
        if (n != (size_t)col->type_length)
            return AMQ_ERR_INVALID;
        /* fall through */
    case AMQ_PQ_BYTE_ARRAY:
        if (n > AMQ_PQ_KEY_MAX)
            return AMQ_ERR_INVALID;
        if (n > 0)
            memcpy(key, text, n);
        *len = n;
        return AMQ_OK;
    default: return AMQ_ERR_UNSUPPORTED;
    }
}

uint64_t amq_pq_hash(const void *value, size_t len) {
    return XXH64(value, len, 0);
}
