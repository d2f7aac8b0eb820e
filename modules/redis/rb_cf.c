/*
 * rb_cf.c — RedisBloom's cuckoo filter (MBbloomCF): 1-byte fingerprints
 * in sub-filters, its kick-out walk, compaction and SCANDUMP stream.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rb.h"

typedef struct cfh {
    uint64_t h1, h2;
    uint8_t fp;
} cfh;

static uint64_t alt_of(uint8_t fp, uint64_t i) {
    return i ^ ((uint64_t)fp * 0x5bd1e995u);
}

static cfh cf_hash(const void *p, size_t n) {
    cfh k;
    uint64_t h = rb_murmur64a(p, n, 0);
    k.fp = (uint8_t)(h % 255 + 1);
    k.h1 = h;
    k.h2 = alt_of(k.fp, h);
    return k;
}

/* A bucket's first slot: RedisBloom keeps the product in 32 bits. */
static uint8_t *bucket(const rval *v, const rb_sub *s, uint64_t h) {
    uint32_t at = (uint32_t)((h % s->nbuckets) * CF(v)->bucket_size);
    return s->data + at;
}

static uint8_t *slot_with(const rval *v, uint8_t *b, uint8_t fp) {
    for (uint32_t i = 0; i < CF(v)->bucket_size; i++)
        if (b[i] == fp)
            return b + i;
    return NULL;
}

static bool sub_has(const rval *v, const rb_sub *s, const cfh *k) {
    return slot_with(v, bucket(v, s, k->h1), k->fp) != NULL ||
           slot_with(v, bucket(v, s, k->h2), k->fp) != NULL;
}

static bool cf_has(const rval *v, const cfh *k) {
    for (uint32_t i = 0; i < CF(v)->n; i++)
        if (sub_has(v, &CF(v)->sub[i], k))
            return true;
    return false;
}

bool rb_cf_contains(const rval *v, const void *p, size_t n) {
    cfh k = cf_hash(p, n);
    return cf_has(v, &k);
}

uint64_t rb_cf_count(const rval *v, const void *p, size_t n) {
    cfh k = cf_hash(p, n);
    uint64_t c = 0;
    for (uint32_t i = 0; i < CF(v)->n; i++) {
        const uint8_t *b1 = bucket(v, &CF(v)->sub[i], k.h1);
        const uint8_t *b2 = bucket(v, &CF(v)->sub[i], k.h2);
        for (uint32_t j = 0; j < CF(v)->bucket_size; j++)
            c += (b1[j] == k.fp) + (b2[j] == k.fp);
    }
    return c;
}

static uint8_t *free_slot(const rval *v, const rb_sub *s, const cfh *k) {
    uint8_t *e = slot_with(v, bucket(v, s, k->h1), 0);
    return e ? e : slot_with(v, bucket(v, s, k->h2), 0);
}

/* Kick-out insertion into the newest sub-filter, undone when it fails
 * (RedisBloom's walk: start at h1's bucket, victims rotate through the
 * slots). */
static bool kick_insert(rval *v, const cfh *k) {
    rb_sub *s = &CF(v)->sub[CF(v)->n - 1];
    uint32_t nb = (uint32_t)s->nbuckets, bs = CF(v)->bucket_size;
    uint32_t victim = 0, i = (uint32_t)(k->h1 % nb);
    uint8_t fp = k->fp;
    if (nb == 0) /* 2^32 buckets or more: RedisBloom divides by zero */
        return false;
    for (uint32_t c = 0; c < CF(v)->max_iter; c++) {
        uint8_t *b = s->data + (size_t)i * bs, t = b[victim];
        b[victim] = fp;
        fp = t;
        i = (uint32_t)(alt_of(fp, i) % nb);
        uint8_t *e = slot_with(v, s->data + (size_t)i * bs, 0);
        if (e != NULL) {
            *e = fp;
            return true;
        }
        victim = (victim + 1) % bs;
    }
    for (uint32_t c = 0; c < CF(v)->max_iter; c++) {
        victim = (victim + bs - 1) % bs;
        i = (uint32_t)(alt_of(fp, i) % nb);
        uint8_t *b = s->data + (size_t)i * bs, t = b[victim];
        b[victim] = fp;
        fp = t;
    }
    return false;
}

/* The sub-filter array resized to exactly `room` entries (MEMORY USAGE
 * counts what the value holds, the same after a reload). */
static bool sub_room(rval *v, uint32_t room) {
    rb_sub *ns = room ? mem(v, (size_t)room * sizeof *ns) : NULL;
    if (room > 0 && ns == NULL)
        return false;
    uint32_t keep = CF(v)->n < room ? CF(v)->n : room;
    if (keep > 0)
        memcpy(ns, CF(v)->sub, keep * sizeof *ns);
    mem_free(v, CF(v)->sub, CF(v)->room * sizeof *ns);
    CF(v)->sub = ns;
    CF(v)->room = room;
    return true;
}

static bool cf_grow(host *h, rval *v) {
    uint64_t nb = CF(v)->nbuckets;
    for (uint32_t i = 0; i < CF(v)->n; i++) {
        if (CF(v)->expansion != 0 && nb > CF_MAX_BUCKETS / CF(v)->expansion)
            return false;
        nb *= CF(v)->expansion;
    }
    if (CF(v)->n >= CF_MAX_FILTERS || nb == 0 ||
        nb > SIZE_MAX / 2 / CF(v)->bucket_size)
        return false;
    size_t bytes = (size_t)nb * CF(v)->bucket_size;
    if (h != NULL && !h->ops->budget(h, (double)bytes))
        return false;
    uint32_t n = CF(v)->n;
    if (n == CF(v)->room && !sub_room(v, n + 1))
        return false;
    uint8_t *data = mem(v, bytes);
    if (data == NULL)
        return false;
    CF(v)->sub[n].nbuckets = nb;
    CF(v)->sub[n].data = data;
    CF(v)->n = n + 1;
    return true;
}

/* 1 inserted, 0 present (nx), -1 full, -2 no memory. */
int rb_cf_insert(host *h, rval *v, const void *p, size_t n, bool nx) {
    cfh k = cf_hash(p, n);
    if (nx && cf_has(v, &k))
        return 0;
    for (;;) {
        for (uint32_t i = CF(v)->n; i-- > 0;) {
            uint8_t *e = free_slot(v, &CF(v)->sub[i], &k);
            if (e != NULL) {
                *e = k.fp;
                CF(v)->items++;
                return 1;
            }
        }
        if (kick_insert(v, &k)) {
            CF(v)->items++;
            return 1;
        }
        if (CF(v)->expansion == 0)
            return -1;
        if (!cf_grow(h, v))
            return -2;
    }
}

/* Move the slots of sub-filter f into older ones where they fit; the
 * newest sub-filter goes once it is empty. RELOC in RedisBloom. */
static bool compact_one(rval *v, uint32_t f) {
    rb_sub *s = &CF(v)->sub[f];
    uint32_t bs = CF(v)->bucket_size;
    bool all = true;
    for (uint64_t b = 0; b < s->nbuckets; b++) {
        for (uint32_t j = 0; j < bs; j++) {
            uint8_t *slot = s->data + (size_t)b * bs + j;
            if (*slot == 0)
                continue;
            cfh k = {b, alt_of(*slot, b), *slot};
            bool moved = false;
            for (uint32_t o = 0; o < f && !moved; o++) {
                uint8_t *e = free_slot(v, &CF(v)->sub[o], &k);
                if (e != NULL) {
                    *e = k.fp;
                    *slot = 0;
                    moved = true;
                }
            }
            all = all && moved;
        }
    }
    if (all && f == CF(v)->n - 1) {
        mem_free(v, s->data, s->nbuckets * bs);
        CF(v)->n--;
        sub_room(v, CF(v)->n); /* smaller: cannot fail but for memory */
    }
    return all;
}

void rb_cf_compact(rval *v, bool cont) {
    for (uint32_t f = CF(v)->n; f > 1; f--)
        if (!compact_one(v, f - 1) && !cont)
            break;
    CF(v)->deletes = 0;
}

bool rb_cf_delete(rval *v, const void *p, size_t n) {
    cfh k = cf_hash(p, n);
    for (uint32_t i = CF(v)->n; i-- > 0;) {
        rb_sub *s = &CF(v)->sub[i];
        uint8_t *e = slot_with(v, bucket(v, s, k.h1), k.fp);
        if (e == NULL)
            e = slot_with(v, bucket(v, s, k.h2), k.fp);
        if (e != NULL) {
            *e = 0;
            CF(v)->items--;
            CF(v)->deletes++;
            if (CF(v)->n > 1 &&
                (double)CF(v)->deletes > (double)CF(v)->items * 0.10)
                rb_cf_compact(v, false);
            return true;
        }
    }
    return false;
}

void rb_cf_info(const rval *v, long long out[8]) {
    uint64_t cells = 0;
    for (uint32_t i = 0; i < CF(v)->n; i++)
        cells += CF(v)->sub[i].nbuckets * CF(v)->bucket_size;
    out[0] = (long long)(40 + 16 * (uint64_t)CF(v)->n + cells);
    out[1] = (long long)CF(v)->nbuckets;
    out[2] = CF(v)->n;
    out[3] = (long long)CF(v)->items;
    out[4] = (long long)CF(v)->deletes;
    out[5] = CF(v)->bucket_size;
    out[6] = CF(v)->expansion;
    out[7] = CF(v)->max_iter;
}

uint64_t rb_cf_items(const rval *v) { return CF(v)->items; }

/* SCANDUMP's header: u64 items, buckets, deletes, filters, u16 bucket
 * size, max iterations, expansion (packed). */
#define CF_HEAD 38u

size_t rb_cf_header(const rval *v, uint8_t out[CF_HEAD]) {
    put_u64(out, CF(v)->items);
    put_u64(out + 8, CF(v)->nbuckets);
    put_u64(out + 16, CF(v)->deletes);
    put_u64(out + 24, CF(v)->n);
    put_u16(out + 32, (uint16_t)CF(v)->bucket_size);
    put_u16(out + 34, (uint16_t)CF(v)->max_iter);
    put_u16(out + 36, (uint16_t)CF(v)->expansion);
    return CF_HEAD;
}

static bool cf_shape_valid(uint64_t nb, uint64_t bs, uint64_t n, uint64_t mi,
                           uint64_t ex) {
    return bs >= 1 && bs <= 255 && nb >= 1 && nb <= CF_MAX_BUCKETS &&
           (nb & (nb - 1)) == 0 && n >= 1 && n <= CF_MAX_FILTERS && mi >= 1 &&
           mi <= 65535 && ex <= 32768;
}

rval *rb_cf_from_header(host *h, const uint8_t *p, size_t n, char *err,
                        size_t cap) {
    if (n != CF_HEAD) {
        fail(err, cap, "Invalid header");
        return NULL;
    }
    uint64_t nb = le64(p + 8), nf = le64(p + 24);
    uint32_t bs = (uint32_t)p[32] | (uint32_t)p[33] << 8;
    uint32_t mi = (uint32_t)p[34] | (uint32_t)p[35] << 8;
    uint32_t ex = (uint32_t)p[36] | (uint32_t)p[37] << 8;
    double bytes = 0, db = (double)nb * bs;
    for (uint64_t i = 0; i < nf && i <= CF_MAX_FILTERS; i++, db *= ex)
        bytes += db;
    if (!cf_shape_valid(nb, bs, nf, mi, ex) || (nf > 1 && ex == 0) ||
        bytes > 1e15) {
        fail(err, cap, "Couldn't create filter!");
        return NULL;
    }
    if (!h->ops->budget(h, bytes)) {
        fail(err, cap,
             "ERR the filter is larger than the memory limit "
             "allows");
        return NULL;
    }
    rval *v = rb__new(FAM_CF);
    if (v == NULL) {
        fail(err, cap, "ERR out of memory");
        return NULL;
    }
    CF(v)->items = le64(p);
    CF(v)->nbuckets = nb;
    CF(v)->deletes = le64(p + 16);
    CF(v)->bucket_size = bs;
    CF(v)->max_iter = mi;
    CF(v)->expansion = ex;
    if (!sub_room(v, (uint32_t)nf)) {
        rv_free(v);
        fail(err, cap, "ERR out of memory");
        return NULL;
    }
    /* sub-filter j of nb·ex^j buckets, as RedisBloom's header load makes
     * them (its total checked against the budget above) */
    uint64_t b = nb;
    for (uint64_t i = 0; i < nf; i++) {
        uint8_t *d =
            b > 0 && b <= SIZE_MAX / 2 / bs ? mem(v, (size_t)b * bs) : NULL;
        if (d == NULL) {
            rv_free(v);
            fail(err, cap, "Couldn't create filter!");
            return NULL;
        }
        CF(v)->sub[i] = (rb_sub){b, d};
        CF(v)->n = (uint32_t)i + 1;
        b = ex != 0 && b <= CF_MAX_BUCKETS / ex ? b * ex : 0;
    }
    return v;
}

const uint8_t *rb_cf_chunk(const rval *v, long long *pos, size_t *len) {
    uint64_t off = *pos >= 1 ? (uint64_t)*pos - 1 : UINT64_MAX;
    for (uint32_t i = 0; i < CF(v)->n; i++) {
        uint64_t size = CF(v)->sub[i].nbuckets * CF(v)->bucket_size;
        if (off < size) {
            uint64_t rest = size - off;
            *len = rest < CHUNK_MAX ? (size_t)rest : CHUNK_MAX;
            *pos += (long long)*len;
            return CF(v)->sub[i].data + off;
        }
        off -= size;
    }
    return NULL;
}

bool rb_cf_load_chunk(rval *v, long long pos, const uint8_t *p, size_t n) {
    if (n == 0 || pos <= 0 || (uint64_t)(pos - 1) < n)
        return false;
    uint64_t off = (uint64_t)pos - n - 1;
    for (uint32_t i = 0; i < CF(v)->n; i++) {
        uint64_t size = CF(v)->sub[i].nbuckets * CF(v)->bucket_size;
        if (off < size) {
            if (n > size - off)
                return false;
            memcpy(CF(v)->sub[i].data + off, p, n);
            return true;
        }
        off -= size;
    }
    return false;
}

/* ---- RDB fields --------------------------------------------------------- */

bool rb__load_cf(rval *v, int encver, rb_io *in, char *err, size_t cap) {
    uint64_t nf, nb, items, deletes = 0, bs = 2, mi = 20, ex = 1;
    GET_U(nf);
    GET_U(nb);
    GET_U(items);
    if (encver >= 4) {
        GET_U(deletes);
        GET_U(bs);
        GET_U(mi);
        GET_U(ex);
    }
    if (!cf_shape_valid(nb, bs, nf, mi, ex))
        return fail(err, cap, "cuckoo filter header out of range");
    CF(v)->nbuckets = nb;
    CF(v)->items = items;
    CF(v)->deletes = deletes;
    CF(v)->bucket_size = (uint32_t)bs;
    CF(v)->max_iter = (uint32_t)mi;
    CF(v)->expansion = (uint32_t)ex;
    CF(v)->sub = mem(v, (size_t)nf * sizeof *CF(v)->sub);
    CF(v)->room = (uint32_t)nf;
    if (CF(v)->sub == NULL)
        return fail(err, cap, "out of memory");
    for (uint64_t i = 0; i < nf; i++) {
        uint64_t b = nb;
        if (encver >= 4)
            GET_U(b);
        if (b == 0 || b > CF_MAX_BUCKETS)
            return fail(err, cap, "cuckoo sub-filter size out of range");
        uint8_t *d = rb__get_exact(v, in, b * bs);
        if (d == NULL)
            return fail(err, cap, "cuckoo sub-filter data of the wrong size");
        CF(v)->sub[i].nbuckets = b;
        CF(v)->sub[i].data = d;
        CF(v)->n = (uint32_t)i + 1;
    }
    return true;
short_read:
    return fail(err, cap, "truncated cuckoo value");
}

void rb__save_cf(const rval *v, rb_io *out) {
    out->put_u64(out, CF(v)->n);
    out->put_u64(out, CF(v)->nbuckets);
    out->put_u64(out, CF(v)->items);
    out->put_u64(out, CF(v)->deletes);
    out->put_u64(out, CF(v)->bucket_size);
    out->put_u64(out, CF(v)->max_iter);
    out->put_u64(out, CF(v)->expansion);
    for (uint32_t i = 0; i < CF(v)->n; i++) {
        out->put_u64(out, CF(v)->sub[i].nbuckets);
        out->put_str(out, CF(v)->sub[i].data,
                     (size_t)(CF(v)->sub[i].nbuckets * CF(v)->bucket_size));
    }
}

void rb__free_cf(rval *v) {
    for (uint32_t i = 0; i < CF(v)->n; i++)
        mem_free(v, CF(v)->sub[i].data,
                 CF(v)->sub[i].nbuckets * CF(v)->bucket_size);
    mem_free(v, CF(v)->sub, CF(v)->room * sizeof *CF(v)->sub);
}
