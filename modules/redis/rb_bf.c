/*
 * rb_bf.c — RedisBloom's Bloom chain (MBbloom--): libbloom links,
 * MurmurHash64A double hashing, RedisBloom's growth and SCANDUMP stream
 * (rb.c says how).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rb.h"

/* libbloom's bits per entry, -ln(error) / ln(2)^2 with its own constant
 * for ln(2)^2 (not LN2 · LN2: the last bit differs, and with it the
 * sizes RedisBloom stores). */
static double bpe_of(double error) {
    return fabs(-(log(error) / 0.480453013918201));
}
static uint32_t hashes_of(double bpe) { return (uint32_t)ceil(LN2 * bpe); }

/* libbloom's sizing of a link for `entries` at `error` under `options`
 * (its bloom_init); false when it refuses. */
static bool link_size(rb_link *l, uint64_t entries, double error,
                      uint32_t options) {
    uint64_t bits;
    if (entries < 1 || !(error > 0 && error < 1))
        return false;
    memset(l, 0, sizeof *l);
    l->error = error;
    l->entries = entries;
    l->bpe = bpe_of(error);
    if (options & OPT_ENTS_IS_BITS) {
        if (entries >= 64)
            return false;
        l->n2 = (uint8_t)entries;
        bits = (uint64_t)1 << entries;
        l->entries = (uint64_t)((double)bits / l->bpe);
    } else if (options & OPT_NOROUND) {
        double b = (double)entries * l->bpe;
        if (!(b < 9.2e18))
            return false;
        bits = (uint64_t)b;
        l->n2 = 0;
    } else {
        double bn2 = logb((double)entries * l->bpe);
        if (bn2 > 62 || isinf(bn2))
            return false;
        l->n2 = (uint8_t)(bn2 + 1);
        bits = (uint64_t)1 << l->n2;
        double diff = (double)bits - (double)entries * l->bpe;
        l->entries += (uint64_t)((uint64_t)diff / l->bpe);
    }
    l->bytes = bits % 64 ? (bits / 64 + 1) * 8 : bits / 8;
    l->bits = l->bytes * 8;
    l->hashes = hashes_of(l->bpe);
    return l->bytes > 0 && l->hashes >= 1 && l->hashes <= BF_MAX_HASHES;
}

/* libbloom's check of a loaded link (bloom_validate_integrity), with the
 * limits this module needs on top. A link from encoding 0 stores no bit
 * count: RedisBloom takes entries · bpe, fewer than its bytes hold, and
 * saves that again in later encodings, so only a SCANDUMP header (which
 * RedisBloom checks with libbloom's rule) must fill its bytes exactly. */
static bool link_valid(const rb_link *l, bool exact) {
    if (!(l->error > 0 && l->error < 1) || l->bits == 0 || l->n2 > 63 ||
        l->hashes == 0 || l->hashes > BF_MAX_HASHES ||
        !(l->bpe > 0 && l->bpe < BF_MAX_HASHES / LN2))
        return false;
    if (l->n2 != 0 && l->bits < ((uint64_t)1 << l->n2))
        return false;
    if (exact ? l->bits != l->bytes * 8
              : l->bits > l->bytes * 8 || (l->n2 != 0 && l->bits % 8 != 0))
        return false;
    return l->hashes == hashes_of(l->bpe) && l->size <= l->bytes * 8;
}

typedef struct bfh {
    uint64_t a, b;
} bfh;

static bfh bf_hash(const rval *v, const void *p, size_t n) {
    bfh h;
    if (BF(v)->options & OPT_FORCE64) {
        h.a = rb_murmur64a(p, n, 0xc6a4a7935bd1e995ull);
        h.b = rb_murmur64a(p, n, h.a);
    } else {
        h.a = rb_murmur2(p, n, 0x9747b28cu);
        h.b = rb_murmur2(p, n, (uint32_t)h.a);
    }
    return h;
}

/* Check (set = false) or set the link's k bits; returns whether all were
 * set before. */
static bool link_probe(rb_link *l, bfh h, bool set) {
    uint64_t mod = l->n2 ? (uint64_t)1 << l->n2 : l->bits;
    bool all = true;
    for (uint64_t i = 0; i < l->hashes; i++) {
        uint64_t x = (h.a + i * h.b) % mod;
        uint8_t bit = (uint8_t)(1u << (x & 7));
        if (!(l->bf[x >> 3] & bit)) {
            if (!set)
                return false;
            all = false;
            l->bf[x >> 3] |= bit;
        }
    }
    return all;
}

static bool bf_has(const rval *v, bfh h) {
    for (uint32_t i = BF(v)->n; i-- > 0;)
        if (link_probe(&BF(v)->link[i], h, false))
            return true;
    return false;
}

bool rb_bf_contains(const rval *v, const void *p, size_t n) {
    return bf_has(v, bf_hash(v, p, n));
}

static bool bf_push_link(rval *v, const rb_link *shape) {
    rb_link *old = BF(v)->link;
    uint32_t n = BF(v)->n;
    rb_link *nl = mem(v, (n + 1) * sizeof *nl);
    uint8_t *bits = nl ? mem(v, (size_t)shape->bytes) : NULL;
    if (bits == NULL) {
        if (nl != NULL)
            mem_free(v, nl, (n + 1) * sizeof *nl);
        return false;
    }
    if (n > 0)
        memcpy(nl, old, n * sizeof *nl);
    nl[n] = *shape;
    nl[n].bf = bits;
    mem_free(v, old, n * sizeof *old);
    BF(v)->link = nl;
    BF(v)->n = n + 1;
    return true;
}

rval *rb_bf_new(host *h, double eps, uint64_t cap, uint32_t growth,
                bool nonscaling, char *err, size_t errcap) {
    rb_link first;
    uint32_t options =
        OPT_FORCE64 | OPT_NOROUND | (nonscaling ? OPT_NO_SCALING : 0);
    /* RedisBloom's first link: the whole rate without scaling, else half */
    if (!link_size(&first, cap, nonscaling ? eps : eps * 0.5, options)) {
        fail(err, errcap, "ERR could not create filter");
        return NULL;
    }
    if (!h->ops->budget(h, (double)first.bytes)) {
        fail(err, errcap, "ERR capacity too large for the memory limit");
        return NULL;
    }
    rval *v = rb__new(FAM_BF);
    if (v == NULL || !bf_push_link(v, &first)) {
        rv_free(v);
        fail(err, errcap, "ERR out of memory");
        return NULL;
    }
    BF(v)->options = options;
    BF(v)->growth = growth;
    return v;
}

int rb_bf_add(host *h, rval *v, const void *p, size_t n, const char **err) {
    bfh x = bf_hash(v, p, n);
    if (bf_has(v, x))
        return 0;
    rb_link *cur = &BF(v)->link[BF(v)->n - 1];
    if (cur->size >= cur->entries) {
        rb_link next;
        if (BF(v)->options & OPT_NO_SCALING) {
            *err = "ERR non scaling filter is full";
            return -1;
        }
        if (BF(v)->n >= BF_MAX_LINKS ||
            cur->entries > UINT64_MAX / (BF(v)->growth ? BF(v)->growth : 1) ||
            !link_size(&next, cur->entries * BF(v)->growth, cur->error * 0.5,
                       BF(v)->options)) {
            *err = "ERR filter reached its maximum size";
            return -1;
        }
        if (!h->ops->budget(h, (double)next.bytes) || !bf_push_link(v, &next)) {
            *err = "ERR the filter's next stage is larger than the memory "
                   "limit allows";
            return -1;
        }
        cur = &BF(v)->link[BF(v)->n - 1];
    }
    link_probe(cur, x, true);
    cur->size++;
    BF(v)->size++;
    return 1;
}

uint64_t rb_bf_items(const rval *v) { return BF(v)->size; }

void rb_bf_info(const rval *v, long long out[5]) {
    uint64_t cap = 0, bytes = 32; /* RedisBloom's struct sizes */
    for (uint32_t i = 0; i < BF(v)->n; i++) {
        cap += BF(v)->link[i].entries;
        bytes += 64 + BF(v)->link[i].bytes;
    }
    out[0] = (long long)cap;
    out[1] = (long long)bytes;
    out[2] = BF(v)->n;
    out[3] = (long long)BF(v)->size;
    out[4] = (BF(v)->options & OPT_NO_SCALING) ? -1 : (long long)BF(v)->growth;
}

int rb_bf_debug(const rval *v, char *buf, size_t cap, unsigned i) {
    if (i == 0)
        return snprintf(buf, cap, "size:%llu", (unsigned long long)BF(v)->size);
    const rb_link *l = &BF(v)->link[i - 1];
    return snprintf(buf, cap,
                    "bytes:%llu bits:%llu hashes:%u hashwidth:%u "
                    "capacity:%llu size:%llu ratio:%g",
                    (unsigned long long)l->bytes, (unsigned long long)l->bits,
                    l->hashes, (BF(v)->options & OPT_FORCE64) ? 64 : 32,
                    (unsigned long long)l->entries, (unsigned long long)l->size,
                    l->error);
}
unsigned rb_bf_links(const rval *v) { return BF(v)->n; }

void rb_bf_first(const rval *v, double *eps, uint64_t *cap) {
    const rb_link *l = &BF(v)->link[0];
    bool scaling = !(BF(v)->options & OPT_NO_SCALING);
    /* a scaling chain's first link takes half the key's rate */
    *eps = BF(v)->n > 0 ? (scaling ? 2 * l->error : l->error) : 0.01;
    *cap = BF(v)->n > 0 ? l->entries : 0;
}

/* SCANDUMP's header: u64 size, u32 nfilters, options, growth, then per
 * link u64 bytes, bits, size, f64 error, bpe, u32 hashes, u64 entries,
 * u8 n2 (packed, little-endian). */
#define BF_HEAD 20u
#define BF_LINK 53u

size_t rb_bf_header(const rval *v, uint8_t *out, size_t cap) {
    size_t n = BF_HEAD + (size_t)BF_LINK * BF(v)->n;
    if (out == NULL || cap < n)
        return n;
    put_u64(out, BF(v)->size);
    put_u32(out + 8, BF(v)->n);
    put_u32(out + 12, BF(v)->options);
    put_u32(out + 16, BF(v)->growth);
    for (uint32_t i = 0; i < BF(v)->n; i++) {
        const rb_link *l = &BF(v)->link[i];
        uint8_t *q = out + BF_HEAD + (size_t)BF_LINK * i;
        put_u64(q, l->bytes);
        put_u64(q + 8, l->bits);
        put_u64(q + 16, l->size);
        put_f64(q + 24, l->error);
        put_f64(q + 32, l->bpe);
        put_u32(q + 40, l->hashes);
        put_u64(q + 44, l->entries);
        q[52] = l->n2;
    }
    return n;
}

static bool chain_valid(const rval *v, bool exact, char *err, size_t cap) {
    uint64_t total = 0;
    if ((BF(v)->options & ~OPT_ALL) != 0)
        return fail(err, cap, "unknown Bloom options");
    for (uint32_t i = 0; i < BF(v)->n; i++) {
        if (!link_valid(&BF(v)->link[i], exact))
            return fail(err, cap, "inconsistent Bloom link");
        if (BF(v)->link[i].size > UINT64_MAX - total)
            return fail(err, cap, "Bloom item count overflows");
        total += BF(v)->link[i].size;
    }
    if (total != BF(v)->size)
        return fail(err, cap, "Bloom item count differs from its links'");
    if (!(BF(v)->options & OPT_NO_SCALING) && BF(v)->growth == 0)
        return fail(err, cap, "Bloom growth of 0");
    return true;
}

rval *rb_bf_from_header(host *h, const uint8_t *p, size_t n, char *err,
                        size_t cap) {
    if (n < BF_HEAD) {
        fail(err, cap, "ERR received bad data");
        return NULL;
    }
    uint32_t links = le32(p + 8);
    if (links == 0 || links > BF_MAX_LINKS ||
        n != BF_HEAD + (size_t)BF_LINK * links) {
        fail(err, cap, "ERR received bad data");
        return NULL;
    }
    double bytes = 0;
    for (uint32_t i = 0; i < links; i++)
        bytes += (double)le64(p + BF_HEAD + (size_t)BF_LINK * i);
    if (!h->ops->budget(h, bytes)) {
        fail(err, cap,
             "ERR the filter is larger than the memory limit "
             "allows");
        return NULL;
    }
    rval *v = rb__new(FAM_BF);
    if (v == NULL) {
        fail(err, cap, "ERR out of memory");
        return NULL;
    }
    BF(v)->size = le64(p);
    BF(v)->options = le32(p + 12);
    BF(v)->growth = le32(p + 16);
    for (uint32_t i = 0; i < links; i++) {
        const uint8_t *q = p + BF_HEAD + (size_t)BF_LINK * i;
        rb_link l = {le64(q + 44), le64(q + 8),    le64(q),
                     le64(q + 16), le_f64(q + 24), le_f64(q + 32),
                     le32(q + 40), q[52],          NULL};
        if (!link_valid(&l, true) || l.bytes > SIZE_MAX / 2 ||
            !bf_push_link(v, &l)) {
            rv_free(v);
            fail(err, cap, "ERR received bad data");
            return NULL;
        }
    }
    if (!chain_valid(v, true, err, cap)) {
        rv_free(v);
        fail(err, cap, "ERR received bad data");
        return NULL;
    }
    return v;
}

/* The link holding byte `off` of the links' concatenation, and the offset
 * in it; NULL past the end. */
static rb_link *link_at(const rval *v, uint64_t off, uint64_t *in) {
    for (uint32_t i = 0; i < BF(v)->n; i++) {
        if (off < BF(v)->link[i].bytes) {
            *in = off;
            return &BF(v)->link[i];
        }
        off -= BF(v)->link[i].bytes;
    }
    return NULL;
}

const uint8_t *rb_bf_chunk(const rval *v, long long *iter, size_t *len) {
    uint64_t in;
    rb_link *l = *iter >= 1 ? link_at(v, (uint64_t)*iter - 1, &in) : NULL;
    if (l == NULL) {
        *iter = 0;
        *len = 0;
        return NULL;
    }
    uint64_t n = l->bytes - in;
    *len = n < CHUNK_MAX ? (size_t)n : CHUNK_MAX;
    *iter += (long long)*len;
    return l->bf + in;
}

bool rb_bf_load_chunk(rval *v, long long iter, const uint8_t *p, size_t n,
                      const char **err) {
    uint64_t in;
    *err = "ERR received bad data";
    if (iter <= 0 || (uint64_t)iter < n)
        return false;
    rb_link *l = (uint64_t)iter - n >= 1
                     ? link_at(v, (uint64_t)iter - n - 1, &in)
                     : NULL;
    if (l == NULL) {
        *err = "ERR invalid offset - no link found";
        return false;
    }
    if (n > l->bytes - in) {
        *err = "ERR invalid chunk - Too big for current filter";
        return false;
    }
    memcpy(l->bf + in, p, n);
    return true;
}

/* ---- RDB fields --------------------------------------------------------- */

bool rb__load_bf(rval *v, int encver, rb_io *in, char *err, size_t cap) {
    uint64_t size, n, options = 0, growth = 2;
    GET_U(size);
    GET_U(n);
    if (encver >= 2)
        GET_U(options);
    if (encver >= 4)
        GET_U(growth);
    if (n == 0 || n > BF_MAX_LINKS || options > OPT_ALL || growth > UINT32_MAX)
        return fail(err, cap, "Bloom chain header out of range");
    BF(v)->size = size;
    BF(v)->options = (uint32_t)options;
    BF(v)->growth = (uint32_t)growth;
    for (uint64_t i = 0; i < n; i++) {
        rb_link l;
        uint64_t hashes, n2 = 0;
        memset(&l, 0, sizeof l);
        GET_U(l.entries);
        GET_D(l.error);
        GET_U(hashes);
        GET_D(l.bpe);
        if (encver == 0) {
            double b = (double)l.entries * l.bpe;
            l.bits = b >= 0 && b < 1.8e19 ? (uint64_t)b : 0;
        } else {
            GET_U(l.bits);
            GET_U(n2);
        }
        if (hashes > BF_MAX_HASHES || n2 > 63)
            return fail(err, cap, "inconsistent Bloom link");
        l.hashes = (uint32_t)hashes;
        l.n2 = (uint8_t)n2;
        size_t len;
        const uint8_t *s = in->str(in, &len);
        if (s == NULL)
            goto short_read;
        l.bytes = len;
        GET_U(l.size);
        if (!link_valid(&l, false))
            return fail(err, cap, "inconsistent Bloom link");
        if (!bf_push_link(v, &l))
            return fail(err, cap, "out of memory");
        if (len > 0)
            memcpy(BF(v)->link[BF(v)->n - 1].bf, s, len);
    }
    return chain_valid(v, false, err, cap);
short_read:
    return fail(err, cap, "truncated Bloom value");
}

void rb__save_bf(const rval *v, rb_io *out) {
    out->put_u64(out, BF(v)->size);
    out->put_u64(out, BF(v)->n);
    out->put_u64(out, BF(v)->options);
    out->put_u64(out, BF(v)->growth);
    for (uint32_t i = 0; i < BF(v)->n; i++) {
        const rb_link *l = &BF(v)->link[i];
        out->put_u64(out, l->entries);
        out->put_dbl(out, l->error);
        out->put_u64(out, l->hashes);
        out->put_dbl(out, l->bpe);
        out->put_u64(out, l->bits);
        out->put_u64(out, l->n2);
        out->put_str(out, l->bf, (size_t)l->bytes);
        out->put_u64(out, l->size);
    }
}

void rb__free_bf(rval *v) {
    for (uint32_t i = 0; i < BF(v)->n; i++)
        mem_free(v, BF(v)->link[i].bf, BF(v)->link[i].bytes);
    mem_free(v, BF(v)->link, BF(v)->n * sizeof *BF(v)->link);
}
