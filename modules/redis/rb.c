/*
 * rb.c — keys in RedisBloom 2.4's own layouts: what a RedisBloom RDB,
 * DUMP payload or SCANDUMP stream brings into the module. This file holds
 * the hashes, the values and their fields; each layout is in its own file
 * (rb_bf.c, rb_cf.c, rb_cms.c, rb_topk.c), their shared inside in rb.h.
 *
 * A migrated BF, CF, CMS or TOPK key keeps RedisBloom's hashing and bit layout,
 * so it answers every query exactly as RedisBloom did (its false
 * positives included) and goes on growing by RedisBloom's rules:
 *
 *   BF   a chain of Bloom links (libbloom's layout). An item's two hashes
 *        are MurmurHash64A(item, 0xc6a4a7935bd1e995) = a and
 *        MurmurHash64A(item, a) = b (MurmurHash2 with seed 0x9747b28c for
 *        chains without the 64-bit option); bit i of k is (a + i·b) mod m,
 *        m = 2^n2 or the link's bit count. Links are checked newest
 *        first; a full link is followed by one of entries·growth at half
 *        the error rate.
 *   CF   1-byte fingerprints, fp = h mod 255 + 1 of h = MurmurHash64A(item,
 *        0); buckets h mod B and (h xor fp·0x5bd1e995) mod B in each
 *        sub-filter, sub-filter j of B·expansion^j buckets.
 *   CMS  depth rows of 32-bit counters, row i indexed by
 *        MurmurHash2(item, i) mod width; plain (not conservative) update.
 *   TOPK HeavyKeeper: depth rows of (fingerprint, count) buckets, row i at
 *        MurmurHash2(item, i) mod width, fingerprint MurmurHash2(item,
 *        1919); the list a min-heap of k (fingerprint, item, count).
 *
 * A RedisBloom t-digest is not kept in its layout: it becomes an amq
 * t-digest holding the same centroids (load_tdigest).
 *
 * The value's fields are read and written as RedisBloom's RDB saves them
 * (a sequence of unsigned, double and string fields, through rb_io), so
 * the module saves a migrated key in RedisBloom's encoding under
 * RedisBloom's type name and RedisBloom can read it back. Inside an amq
 * blob (COPY, the AOF's and SCANDUMP's amq form) the same fields are one
 * frame in a tagged byte form (rbs_*). Every field is checked before
 * anything is allocated for it: RedisBloom itself asserts on a bad file,
 * this code refuses it.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rb.h"

/* ---- the hashes (Austin Appleby's MurmurHash2 family, public domain) --- */

uint32_t rb_murmur2(const void *key, size_t len, uint32_t seed) {
    const uint32_t m = 0x5bd1e995u;
    const uint8_t *p = key;
    uint32_t h = seed ^ (uint32_t)len;
    for (; len >= 4; p += 4, len -= 4) {
        uint32_t k = le32(p) * m;
        k = (k ^ (k >> 24)) * m;
        h = (h * m) ^ k;
    }
    switch (len) {
    case 3:
        h ^= (uint32_t)p[2] << 16;
        /* fall through */
    case 2:
        h ^= (uint32_t)p[1] << 8;
        /* fall through */
    case 1: h = (h ^ p[0]) * m;
    }
    h = (h ^ (h >> 13)) * m;
    return h ^ (h >> 15);
}

uint64_t rb_murmur64a(const void *key, size_t len, uint64_t seed) {
    const uint64_t m = 0xc6a4a7935bd1e995ull;
    const uint8_t *p = key;
    uint64_t h = seed ^ ((uint64_t)len * m);
    size_t blocks = len / 8;
    for (size_t i = 0; i < blocks; i++, p += 8) {
        uint64_t k = le64(p) * m;
        k = (k ^ (k >> 47)) * m;
        h = (h ^ k) * m;
    }
    unsigned rest = (unsigned)(len & 7);
    if (rest != 0) {
        for (unsigned i = rest; i-- > 0;)
            h ^= (uint64_t)p[i] << (8 * i);
        h *= m;
    }
    h = (h ^ (h >> 47)) * m;
    return h ^ (h >> 47);
}

/* ---- values ------------------------------------------------------------- */

void rb_free(rval *v) {
    struct rb_value *r = v->rb;
    if (r == NULL)
        return;
    if (r->fam == FAM_BF)
        rb__free_bf(v);
    else if (r->fam == FAM_CF)
        rb__free_cf(v);
    else if (r->fam == FAM_CMS)
        rb__free_cms(v);
    else if (r->fam == FAM_TOPK)
        rb__free_topk(v);
    mem_free(v, r, sizeof *r);
    v->rb = NULL;
}

rval *rb__new(int fam) {
    rval *v = rv_new(fam);
    if (v == NULL)
        return NULL;
    v->rb = mem(v, sizeof *v->rb);
    if (v->rb == NULL) {
        rv_free(v);
        return NULL;
    }
    v->rb->fam = fam;
    return v;
}

const char *rb_type_name(int fam) {
    return fam == FAM_BF        ? "MBbloom--"
           : fam == FAM_CF      ? "MBbloomCF"
           : fam == FAM_CMS     ? "CMSk-TYPE"
           : fam == FAM_TOPK    ? "TopK-TYPE"
           : fam == FAM_TDIGEST ? "TDIS-TYPE"
                                : NULL;
}

/* The encoding version RedisBloom 2.4 writes (and the newest it reads). */
int rb_encver(int fam) { return fam == FAM_BF || fam == FAM_CF ? 4 : 0; }

/* ---- RDB fields --------------------------------------------------------- */

/* The next string field copied into n bytes of the value's memory; NULL
 * when it is missing or not exactly n bytes long. */
uint8_t *rb__get_exact(rval *v, rb_io *in, uint64_t n) {
    size_t len;
    const uint8_t *s = in->str(in, &len);
    if (s == NULL || len != n || n > SIZE_MAX / 2)
        return NULL;
    uint8_t *p = mem(v, (size_t)n);
    if (p != NULL && n > 0)
        memcpy(p, s, (size_t)n);
    return p;
}

/* A t-digest becomes an amq digest holding RedisBloom's centroids (its
 * fields: compression, min, max, cap, merged and unmerged counts, the
 * compressions so far, merged and unmerged weights, then the merged
 * centroids' means and weights; RedisBloom compresses before it saves, so
 * nothing is unmerged). Queries then interpolate amq's way over the same
 * centroids (docs/redis.md says how far that moves an answer). */
static rval *load_tdigest(rb_io *in, char *err, size_t cap) {
    double delta, lo, hi, mw, uw;
    uint64_t room, m, u, comps;
    double *mean = NULL;
    uint64_t *w = NULL;
    rval *v = NULL;
    GET_D(delta);
    GET_D(lo);
    GET_D(hi);
    GET_U(room);
    GET_U(m);
    GET_U(u);
    GET_U(comps);
    GET_D(mw);
    GET_D(uw);
    (void)uw;
    if (!(delta >= 1 && delta <= 100000) || m > room ||
        room > 6 * 100000 + 10 || (int64_t)u < 0) {
        fail(err, cap, "t-digest header out of range");
        return NULL;
    }
    mean = rv_sys_alloc((size_t)(m ? m : 1) * sizeof *mean);
    w = rv_sys_alloc((size_t)(m ? m : 1) * sizeof *w);
    if (mean == NULL || w == NULL) {
        fail(err, cap, "out of memory");
        goto done;
    }
    for (uint64_t i = 0; i < m; i++)
        if (!in->dbl(in, &mean[i]))
            goto short_read;
    double sum = 0;
    for (uint64_t i = 0; i < m; i++) {
        double x;
        if (!in->dbl(in, &x))
            goto short_read;
        if (!(x >= 1 && x < 9007199254740992.0) || x != floor(x)) {
            fail(err, cap, "t-digest weight not a whole count");
            goto done;
        }
        w[i] = (uint64_t)x;
        sum += x;
    }
    if (m > 0 && fabs(sum - mw) > 0.5) {
        fail(err, cap, "t-digest weights differ from its total");
        goto done;
    }
    v = rv_new(FAM_TDIGEST);
    if (v == NULL) {
        fail(err, cap, "out of memory");
        goto done;
    }
    amq_options o = rv_options(v);
    amq_status st = amq_tdigest_from_centroids(
        delta, mean, w, (size_t)m, lo, hi, (int64_t)comps < 0 ? 0 : comps, &o,
        &v->u.td.t);
    if (st != AMQ_OK) {
        rv_free(v);
        v = NULL;
        fail(err, cap,
             st == AMQ_ERR_NOMEM ? "out of memory"
                                 : "t-digest centroids out of order "
                                   "or outside [min, max]");
    }
    goto done;
short_read:
    fail(err, cap, "truncated t-digest value");
done:
    rv_sys_free(mean);
    rv_sys_free(w);
    return v;
}

rval *rb_load(int fam, int encver, rb_io *in, char *err, size_t cap) {
    if (fam == FAM_TDIGEST && encver == 0)
        return load_tdigest(in, err, cap);
    if (encver < 0 || encver > rb_encver(fam) || rb_type_name(fam) == NULL ||
        fam == FAM_TDIGEST) {
        snprintf(err, cap, "RedisBloom encoding version %d is not known",
                 encver);
        return NULL;
    }
    rval *v = rb__new(fam);
    if (v == NULL) {
        fail(err, cap, "out of memory");
        return NULL;
    }
    bool ok = fam == FAM_BF    ? rb__load_bf(v, encver, in, err, cap)
              : fam == FAM_CF  ? rb__load_cf(v, encver, in, err, cap)
              : fam == FAM_CMS ? rb__load_cms(v, in, err, cap)
                               : rb__load_topk(v, in, err, cap);
    if (!ok) {
        rv_free(v);
        return NULL;
    }
    return v;
}

void rb_save(const rval *v, rb_io *out) {
    if (v->rb->fam == FAM_BF)
        rb__save_bf(v, out);
    else if (v->rb->fam == FAM_CF)
        rb__save_cf(v, out);
    else if (v->rb->fam == FAM_TOPK)
        rb__save_topk(v, out);
    else
        rb__save_cms(v, out);
}

/* ---- the fields as bytes (inside an amq blob; the fuzz target) ---------- */

/* Each field: a tag byte ('u' unsigned, 'd' double: 8 bytes each,
 * little-endian; 's' string: u64 length then the bytes). */

static bool rbs_u64(rb_io *io, uint64_t *x) {
    rbs_reader *r = (rbs_reader *)io;
    if (r->end - r->at < 9 || r->at[0] != 'u')
        return false;
    *x = le64(r->at + 1);
    r->at += 9;
    return true;
}
static bool rbs_dbl(rb_io *io, double *x) {
    rbs_reader *r = (rbs_reader *)io;
    if (r->end - r->at < 9 || r->at[0] != 'd')
        return false;
    *x = le_f64(r->at + 1);
    r->at += 9;
    return true;
}
static const uint8_t *rbs_str(rb_io *io, size_t *n) {
    rbs_reader *r = (rbs_reader *)io;
    if (r->end - r->at < 9 || r->at[0] != 's')
        return NULL;
    uint64_t len = le64(r->at + 1);
    if (len > (uint64_t)(r->end - r->at - 9))
        return NULL;
    const uint8_t *s = r->at + 9;
    r->at += 9 + len;
    *n = (size_t)len;
    return s;
}

void rbs_reader_init(rbs_reader *r, const uint8_t *p, size_t n) {
    memset(r, 0, sizeof *r);
    r->io.u64 = rbs_u64;
    r->io.dbl = rbs_dbl;
    r->io.str = rbs_str;
    r->at = p;
    r->end = p + n;
}

static void w_bytes(rbs_writer *w, const void *p, size_t n) {
    if (w->buf != NULL && w->len + n <= w->cap && n > 0)
        memcpy(w->buf + w->len, p, n);
    w->len += n;
}
static void w_tag(rbs_writer *w, char tag, uint64_t x) {
    uint8_t b[9];
    b[0] = (uint8_t)tag;
    put_u64(b + 1, x);
    w_bytes(w, b, 9);
}
static void rbs_put_u64(rb_io *io, uint64_t x) {
    w_tag((rbs_writer *)io, 'u', x);
}
static void rbs_put_dbl(rb_io *io, double d) {
    uint64_t x;
    memcpy(&x, &d, 8);
    w_tag((rbs_writer *)io, 'd', x);
}
static void rbs_put_str(rb_io *io, const void *p, size_t n) {
    w_tag((rbs_writer *)io, 's', n);
    w_bytes((rbs_writer *)io, p, n);
}

void rbs_writer_init(rbs_writer *w, uint8_t *buf, size_t cap) {
    memset(w, 0, sizeof *w);
    w->io.put_u64 = rbs_put_u64;
    w->io.put_dbl = rbs_put_dbl;
    w->io.put_str = rbs_put_str;
    w->buf = buf;
    w->cap = cap;
}

/* The value as a blob frame: 'u' encver, then its fields. */
size_t rb_frame(const rval *v, uint8_t *buf, size_t cap) {
    rbs_writer w;
    rbs_writer_init(&w, buf, cap);
    w.io.put_u64(&w.io, (uint64_t)rb_encver(v->rb->fam));
    rb_save(v, &w.io);
    return w.len;
}

rval *rb_from_frame(int fam, const uint8_t *p, size_t n, char *err,
                    size_t cap) {
    rbs_reader r;
    uint64_t encver;
    rbs_reader_init(&r, p, n);
    if (!r.io.u64(&r.io, &encver) || encver > 1023) {
        fail(err, cap, "RedisBloom-layout frame without its version");
        return NULL;
    }
    rval *v = rb_load(fam, (int)encver, &r.io, err, cap);
    if (v != NULL && r.at != r.end) {
        rv_free(v);
        fail(err, cap, "trailing bytes in a RedisBloom-layout frame");
        return NULL;
    }
    return v;
}
