/*
 * rb.c — keys in RedisBloom 2.4's own layouts: what a RedisBloom RDB,
 * DUMP payload or SCANDUMP stream brings into the module.
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

#include "amqr.h"

/* ---- the hashes (Austin Appleby's MurmurHash2 family, public domain) --- */

static uint32_t le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}
static uint64_t le64(const uint8_t *p) {
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

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

/* ---- the layouts ------------------------------------------------------------ */

#define OPT_NOROUND 1u
#define OPT_ENTS_IS_BITS 2u
#define OPT_FORCE64 4u
#define OPT_NO_SCALING 8u
#define OPT_ALL 15u
#define LN2 0.693147180559945

#define BF_MAX_LINKS 1000u /* RedisBloom's own load limit */
#define BF_MAX_HASHES 4096u
#define CF_MAX_FILTERS 65535u
#define CF_MAX_BUCKETS 0x00FFFFFFFFFFFFFFull

typedef struct rb_link {
    uint64_t entries, bits, bytes, size;
    double error, bpe;
    uint32_t hashes;
    uint8_t n2;
    uint8_t *bf;
} rb_link;

typedef struct rb_sub {
    uint64_t nbuckets;
    uint8_t *data;
} rb_sub;

struct rb_value {
    int fam;
    union {
        struct {
            uint64_t size;
            uint32_t n, options, growth;
            rb_link *link;
        } bf;
        struct {
            uint64_t nbuckets, items, deletes;
            uint32_t n, room; /* sub-filters, and room for them */
            uint32_t bucket_size, max_iter, expansion;
            rb_sub *sub;
        } cf;
        struct {
            uint64_t width, depth, counter;
            uint32_t *cells;
        } cms;
        struct {
            uint32_t k, width, depth;
            double decay;
            uint32_t *cells; /* (fingerprint, count) per bucket */
            struct rb_heap *heap;
        } topk;
    } u;
};

/* A Top-K list entry: RedisBloom's min-heap on count. item NULL: empty. */
typedef struct rb_heap {
    uint32_t fp, len, count;
    uint8_t *item;
} rb_heap;

#define BF(v) (&(v)->rb->u.bf)
#define CF(v) (&(v)->rb->u.cf)
#define CMS(v) (&(v)->rb->u.cms)
#define TOPK(v) (&(v)->rb->u.topk)

static void *mem(rval *v, size_t n) {
    void *p = v->alloc.alloc(v->alloc.ctx, n);
    if (p != NULL)
        memset(p, 0, n);
    return p;
}
static void mem_free(rval *v, void *p, size_t n) {
    v->alloc.free(v->alloc.ctx, p, n);
}

static bool fail(char *err, size_t cap, const char *msg) {
    snprintf(err, cap, "%s", msg);
    return false;
}

void rb_free(rval *v) {
    struct rb_value *r = v->rb;
    if (r == NULL)
        return;
    if (r->fam == FAM_BF) {
        for (uint32_t i = 0; i < r->u.bf.n; i++)
            mem_free(v, r->u.bf.link[i].bf, r->u.bf.link[i].bytes);
        mem_free(v, r->u.bf.link, r->u.bf.n * sizeof *r->u.bf.link);
    } else if (r->fam == FAM_CF) {
        for (uint32_t i = 0; i < r->u.cf.n; i++)
            mem_free(v, r->u.cf.sub[i].data,
                     r->u.cf.sub[i].nbuckets * r->u.cf.bucket_size);
        mem_free(v, r->u.cf.sub, r->u.cf.room * sizeof *r->u.cf.sub);
    } else if (r->fam == FAM_CMS) {
        mem_free(v, r->u.cms.cells,
                 r->u.cms.width * r->u.cms.depth * sizeof(uint32_t));
    } else if (r->fam == FAM_TOPK) {
        mem_free(v, r->u.topk.cells,
                 (size_t)r->u.topk.width * r->u.topk.depth * 8);
        for (uint32_t i = 0; r->u.topk.heap != NULL && i < r->u.topk.k; i++)
            if (r->u.topk.heap[i].item != NULL)
                mem_free(v, r->u.topk.heap[i].item,
                         (size_t)r->u.topk.heap[i].len + 1);
        mem_free(v, r->u.topk.heap, r->u.topk.k * sizeof *r->u.topk.heap);
    }
    mem_free(v, r, sizeof *r);
    v->rb = NULL;
}

static rval *rb_new(int fam) {
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

/* ---- BF ----------------------------------------------------------------------- */

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
    rval *v = rb_new(FAM_BF);
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

/* SCANDUMP's header: u64 size, u32 nfilters, options, growth, then per
 * link u64 bytes, bits, size, f64 error, bpe, u32 hashes, u64 entries,
 * u8 n2 (packed, little-endian). */
#define BF_HEAD 20u
#define BF_LINK 53u

static void put_u64(uint8_t *p, uint64_t x) {
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(x >> (8 * i));
}
static void put_u32(uint8_t *p, uint32_t x) {
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(x >> (8 * i));
}
static void put_u16(uint8_t *p, uint16_t x) {
    p[0] = (uint8_t)x;
    p[1] = (uint8_t)(x >> 8);
}
static void put_f64(uint8_t *p, double d) {
    uint64_t x;
    memcpy(&x, &d, 8);
    put_u64(p, x);
}
static double le_f64(const uint8_t *p) {
    uint64_t x = le64(p);
    double d;
    memcpy(&d, &x, 8);
    return d;
}

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
    rval *v = rb_new(FAM_BF);
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

/* ---- CF ----------------------------------------------------------------------- */

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
    rval *v = rb_new(FAM_CF);
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

/* ---- CMS ---------------------------------------------------------------------- */

/* The estimate after adding `by`; UINT32_MAX when a counter saturated
 * (RedisBloom answers that with an overflow error). */
uint64_t rb_cms_incr(rval *v, const void *p, size_t n, uint64_t by) {
    uint64_t w = CMS(v)->width, est = UINT64_MAX;
    for (uint64_t i = 0; i < CMS(v)->depth; i++) {
        uint32_t *c = &CMS(v)->cells[rb_murmur2(p, n, (uint32_t)i) % w + i * w];
        uint32_t x = *c + (uint32_t)by;
        if (x < by)
            x = UINT32_MAX;
        *c = x;
        if (x < est)
            est = x;
    }
    CMS(v)->counter += by;
    return est;
}

uint64_t rb_cms_query(const rval *v, const void *p, size_t n) {
    uint64_t w = CMS(v)->width, est = UINT64_MAX;
    for (uint64_t i = 0; i < CMS(v)->depth; i++) {
        uint32_t c = CMS(v)->cells[rb_murmur2(p, n, (uint32_t)i) % w + i * w];
        if (c < est)
            est = c;
    }
    return est;
}

void rb_cms_info(const rval *v, uint64_t *w, uint64_t *d, uint64_t *count) {
    *w = CMS(v)->width;
    *d = CMS(v)->depth;
    *count = CMS(v)->counter;
}

/* dst = Σ weight_i · src_i, cell by cell in 32 bits, as RedisBloom sums
 * (dst may be a source: the sums are made aside first). */
bool rb_cms_merge(rval *dst, rval *const *src, const long long *w, int n) {
    uint64_t cells = CMS(dst)->width * CMS(dst)->depth;
    uint32_t *acc = mem(dst, (size_t)cells * sizeof *acc);
    if (acc == NULL)
        return false;
    uint64_t total = 0;
    for (uint64_t c = 0; c < cells; c++) {
        uint64_t s = 0; /* the low 32 bits, as RedisBloom keeps them */
        for (int k = 0; k < n; k++)
            s += (uint64_t)CMS(src[k])->cells[c] * (uint64_t)w[k];
        acc[c] = (uint32_t)s;
    }
    for (int k = 0; k < n; k++)
        total += CMS(src[k])->counter * (uint64_t)w[k];
    mem_free(dst, CMS(dst)->cells, (size_t)cells * sizeof *acc);
    CMS(dst)->cells = acc;
    CMS(dst)->counter = total;
    return true;
}

bool rb_cms_same_shape(const rval *a, const rval *b) {
    return CMS(a)->width == CMS(b)->width && CMS(a)->depth == CMS(b)->depth;
}

/* ---- TOPK ---------------------------------------------------------------------- */

#define TOPK_FP_SEED 1919u

/* decay^c as RedisBloom computes it (from a table of decay^i, i < 256,
 * which caches these same pow calls): decay^c below 256, beyond it
 * (decay^255)^(c / 255) · decay^(c mod 255). */
static double decay_of(const rval *v, uint32_t c) {
    double d = TOPK(v)->decay;
    return c < 256 ? pow(d, c)
                   : pow(pow(d, 255), (double)(c / 255)) * pow(d, c % 255);
}

/* RedisBloom draws its decay coin from rand(), which no replica can
 * repeat; this one is a hash of the bucket's state and the step, so the
 * same commands make the same sketch everywhere. */
static double coin(uint32_t fp, uint64_t cell, uint32_t count, uint32_t step) {
    uint64_t x = ((uint64_t)fp << 32 | count) ^ (cell * 0x9e3779b97f4a7c15ull) ^
                 ((uint64_t)step << 17);
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return (double)(x >> 11) * 0x1.0p-53;
}

static rb_heap *heap_find(const rval *v, uint32_t fp, const void *p, size_t n) {
    for (uint32_t i = TOPK(v)->k; i-- > 0;) {
        rb_heap *e = &TOPK(v)->heap[i];
        /* the empty item has no bytes: its fingerprint and length alone
         * (as RedisBloom compares an entry it saved as "") */
        if (e->fp == fp && e->len == n &&
            (n == 0 || (e->item != NULL && memcmp(e->item, p, n) == 0)))
            return e;
    }
    return NULL;
}

/* Restore the min-heap below `at` (RedisBloom's sift-down, ties kept). */
static void heap_down(rb_heap *a, size_t len, size_t at) {
    if (len < 2 || (len - 2) / 2 < at)
        return;
    size_t c = 2 * at + 1;
    if (c + 1 < len && a[c].count > a[c + 1].count)
        c++;
    if (a[c].count > a[at].count)
        return;
    rb_heap top = a[at];
    do {
        a[at] = a[c];
        at = c;
        if ((len - 2) / 2 < c)
            break;
        c = 2 * c + 1;
        if (c + 1 < len && a[c].count > a[c + 1].count)
            c++;
    } while (a[c].count < top.count);
    a[at] = top;
}

/* HeavyKeeper's add of `by` arrivals. *out is the expelled item (bytes in
 * the value's memory, the caller frees it with rb_topk_free_item) or NULL;
 * false if out of memory (nothing changed but the buckets). */
bool rb_topk_add(rval *v, const void *p, size_t n, uint32_t by,
                 rb_topk_item *out) {
    uint32_t fp = rb_murmur2(p, n, TOPK_FP_SEED), best = 0;
    uint32_t heap_min = TOPK(v)->heap[0].count;
    memset(out, 0, sizeof *out);
    for (uint32_t i = 0; i < TOPK(v)->depth; i++) {
        uint64_t cell =
            (uint64_t)i * TOPK(v)->width + rb_murmur2(p, n, i) % TOPK(v)->width;
        uint32_t *b = &TOPK(v)->cells[2 * cell];
        if (b[1] == 0) {
            b[0] = fp;
            b[1] = by;
            best = b[1] > best ? b[1] : best;
        } else if (b[0] == fp) {
            b[1] += by;
            best = b[1] > best ? b[1] : best;
        } else {
            for (uint32_t left = by; left > 0; left--) {
                if (coin(fp, cell, b[1], left) < decay_of(v, b[1]) &&
                    --b[1] == 0) {
                    b[0] = fp;
                    b[1] = left;
                    best = b[1] > best ? b[1] : best;
                    break;
                }
            }
        }
    }
    if (best < heap_min)
        return true;
    rb_heap *e = heap_find(v, fp, p, n);
    if (e != NULL) {
        e->count = best; /* not the larger of the two: it may have decayed */
        heap_down(TOPK(v)->heap, TOPK(v)->k, (size_t)(e - TOPK(v)->heap));
        return true;
    }
    uint8_t *copy = n > 0 ? mem(v, n + 1) : NULL;
    if (n > 0 && copy == NULL)
        return false;
    if (n > 0)
        memcpy(copy, p, n);
    rb_heap *h0 = &TOPK(v)->heap[0];
    out->item = h0->item;
    out->len = h0->len;
    *h0 = (rb_heap){fp, (uint32_t)n, best, copy};
    heap_down(TOPK(v)->heap, TOPK(v)->k, 0);
    return true;
}

rval *rb_topk_new(host *h, uint32_t k, uint32_t width, uint32_t depth,
                  double decay, char *err, size_t errcap) {
    double bytes = (double)width * depth * 8 + (double)k * sizeof(rb_heap);
    if (k == 0 || width == 0 || depth == 0 || !(decay > 0 && decay <= 1) ||
        (double)width * depth > 4294967296.0) {
        fail(err, errcap, "TopK: invalid dimensions");
        return NULL;
    }
    if (!h->ops->budget(h, bytes)) {
        fail(err, errcap,
             "TopK: the sketch is larger than the memory limit "
             "allows");
        return NULL;
    }
    rval *v = rb_new(FAM_TOPK);
    if (v == NULL) {
        fail(err, errcap, "TopK: out of memory");
        return NULL;
    }
    TOPK(v)->k = k;
    TOPK(v)->width = width;
    TOPK(v)->depth = depth;
    TOPK(v)->decay = decay;
    TOPK(v)->cells = mem(v, (size_t)width * depth * 8);
    TOPK(v)->heap = mem(v, (size_t)k * sizeof *TOPK(v)->heap);
    if (TOPK(v)->cells == NULL || TOPK(v)->heap == NULL) {
        rv_free(v);
        fail(err, errcap, "TopK: out of memory");
        return NULL;
    }
    return v;
}

void rb_topk_free_item(rval *v, rb_topk_item *it) {
    if (it->item != NULL)
        mem_free(v, it->item, (size_t)it->len + 1);
    it->item = NULL;
}

bool rb_topk_query(const rval *v, const void *p, size_t n) {
    return heap_find(v, rb_murmur2(p, n, TOPK_FP_SEED), p, n) != NULL;
}

uint64_t rb_topk_count(const rval *v, const void *p, size_t n) {
    uint32_t fp = rb_murmur2(p, n, TOPK_FP_SEED), best = 0;
    uint32_t heap_min = TOPK(v)->heap[0].count;
    bool listed = heap_find(v, fp, p, n) != NULL;
    for (uint32_t i = 0; i < TOPK(v)->depth; i++) {
        uint64_t cell =
            (uint64_t)i * TOPK(v)->width + rb_murmur2(p, n, i) % TOPK(v)->width;
        const uint32_t *b = &TOPK(v)->cells[2 * cell];
        if (b[0] == fp && (!listed || b[1] >= heap_min) && b[1] > best)
            best = b[1];
    }
    return best;
}

/* The list by count, largest first (ties in heap order), entries of count
 * 0 left out; out has room for k. Returns the number written. */
size_t rb_topk_list(const rval *v, rb_topk_item *out) {
    size_t n = 0;
    for (uint32_t i = 0; i < TOPK(v)->k; i++) {
        const rb_heap *e = &TOPK(v)->heap[i];
        size_t j = n++;
        while (j > 0 && out[j - 1].count < e->count) {
            out[j] = out[j - 1];
            j--;
        }
        out[j] = (rb_topk_item){e->item, e->len, e->count};
    }
    while (n > 0 && out[n - 1].count == 0)
        n--;
    return n;
}

void rb_topk_info(const rval *v, uint32_t *k, uint32_t *w, uint32_t *d,
                  double *decay) {
    *k = TOPK(v)->k;
    *w = TOPK(v)->width;
    *d = TOPK(v)->depth;
    *decay = TOPK(v)->decay;
}

/* ---- RDB fields ----------------------------------------------------------------- */

#define GET_U(x)                                                               \
    do {                                                                       \
        if (!in->u64(in, &(x)))                                                \
            goto short_read;                                                   \
    } while (0)
#define GET_D(x)                                                               \
    do {                                                                       \
        if (!in->dbl(in, &(x)))                                                \
            goto short_read;                                                   \
    } while (0)

/* The next string field copied into n bytes of the value's memory; NULL
 * when it is missing or not exactly n bytes long. */
static uint8_t *get_exact(rval *v, rb_io *in, uint64_t n) {
    size_t len;
    const uint8_t *s = in->str(in, &len);
    if (s == NULL || len != n || n > SIZE_MAX / 2)
        return NULL;
    uint8_t *p = mem(v, (size_t)n);
    if (p != NULL && n > 0)
        memcpy(p, s, (size_t)n);
    return p;
}

static bool load_bf(rval *v, int encver, rb_io *in, char *err, size_t cap) {
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

static bool load_cf(rval *v, int encver, rb_io *in, char *err, size_t cap) {
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
        uint8_t *d = get_exact(v, in, b * bs);
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

static bool load_cms(rval *v, rb_io *in, char *err, size_t cap) {
    uint64_t w, d, counter;
    GET_U(w);
    GET_U(d);
    GET_U(counter);
    if (w == 0 || d == 0 || w > UINT32_MAX || d > 4096 ||
        w * d > ((uint64_t)1 << 34))
        return fail(err, cap, "Count-Min dimensions out of range");
    uint32_t *cells = (uint32_t *)get_exact(v, in, w * d * 4);
    if (cells == NULL)
        return fail(err, cap, "Count-Min counters of the wrong size");
    /* the counters are little-endian on disk, as on every host we build */
    CMS(v)->width = w;
    CMS(v)->depth = d;
    CMS(v)->counter = counter;
    CMS(v)->cells = cells;
    return true;
short_read:
    return fail(err, cap, "truncated Count-Min value");
}

/* k, width, depth, decay; the buckets (u32 fingerprint, u32 count); the
 * heap as RedisBloom's 24-byte structs (fp, length, a pointer, count);
 * then each item as a NUL-terminated string ("" for an empty entry). An
 * item RedisBloom cut at a NUL byte comes back cut there; this module
 * saves every item whole (its length + 1 bytes), which RedisBloom reads
 * too. */
static bool load_topk(rval *v, rb_io *in, char *err, size_t cap) {
    uint64_t k, w, d;
    double decay;
    size_t len;
    GET_U(k);
    GET_U(w);
    GET_U(d);
    GET_D(decay);
    if (k == 0 || k > 65536 || w == 0 || d == 0 || w > UINT32_MAX ||
        d > UINT32_MAX || w * d > ((uint64_t)1 << 32) ||
        !(decay > 0 && decay <= 1))
        return fail(err, cap, "Top-K dimensions out of range");
    TOPK(v)->k = (uint32_t)k;
    TOPK(v)->width = (uint32_t)w;
    TOPK(v)->depth = (uint32_t)d;
    TOPK(v)->decay = decay;
    TOPK(v)->cells = (uint32_t *)get_exact(v, in, w * d * 8);
    if (TOPK(v)->cells == NULL)
        return fail(err, cap, "Top-K buckets of the wrong size");
    const uint8_t *hs = in->str(in, &len);
    if (hs == NULL || len != k * 24)
        return fail(err, cap, "Top-K heap of the wrong size");
    TOPK(v)->heap = mem(v, (size_t)k * sizeof *TOPK(v)->heap);
    if (TOPK(v)->heap == NULL)
        return fail(err, cap, "out of memory");
    for (uint64_t i = 0; i < k; i++) {
        rb_heap *e = &TOPK(v)->heap[i];
        e->fp = le32(hs + 24 * i);
        e->len = le32(hs + 24 * i + 4);
        e->count = le32(hs + 24 * i + 16);
    }
    for (uint64_t i = 0; i < k; i++) {
        rb_heap *e = &TOPK(v)->heap[i];
        const uint8_t *item = in->str(in, &len);
        if (item == NULL)
            goto short_read;
        if (len == 0 || item[len - 1] != 0)
            return fail(err, cap, "Top-K item without its terminating NUL");
        if (len == 1) {
            e->len = 0;
            continue;
        }
        /* whole (this module saves len + 1 bytes, NULs and all), or cut
         * at its first NUL as RedisBloom saves it */
        if (len - 1 != e->len) {
            size_t n = strnlen((const char *)item, len - 1);
            if (e->len > n)
                e->len = (uint32_t)n;
        }
        if (e->len == 0) /* the empty item: as an empty entry's bytes */
            continue;
        e->item = mem(v, (size_t)e->len + 1);
        if (e->item == NULL)
            return fail(err, cap, "out of memory");
        memcpy(e->item, item, e->len);
    }
    return true;
short_read:
    return fail(err, cap, "truncated Top-K value");
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
    rval *v = rb_new(fam);
    if (v == NULL) {
        fail(err, cap, "out of memory");
        return NULL;
    }
    bool ok = fam == FAM_BF    ? load_bf(v, encver, in, err, cap)
              : fam == FAM_CF  ? load_cf(v, encver, in, err, cap)
              : fam == FAM_CMS ? load_cms(v, in, err, cap)
                               : load_topk(v, in, err, cap);
    if (!ok) {
        rv_free(v);
        return NULL;
    }
    return v;
}

void rb_save(const rval *v, rb_io *out) {
    if (v->rb->fam == FAM_BF) {
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
    } else if (v->rb->fam == FAM_CF) {
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
    } else if (v->rb->fam == FAM_TOPK) {
        size_t n = (size_t)TOPK(v)->k * 24;
        uint8_t *hs = rv_sys_alloc(n);
        out->put_u64(out, TOPK(v)->k);
        out->put_u64(out, TOPK(v)->width);
        out->put_u64(out, TOPK(v)->depth);
        out->put_dbl(out, TOPK(v)->decay);
        out->put_str(out, TOPK(v)->cells,
                     (size_t)TOPK(v)->width * TOPK(v)->depth * 8);
        if (hs != NULL) { /* the pointer field is written as 0 */
            memset(hs, 0, n);
            for (uint32_t i = 0; i < TOPK(v)->k; i++) {
                put_u32(hs + 24 * i, TOPK(v)->heap[i].fp);
                put_u32(hs + 24 * i + 4, TOPK(v)->heap[i].len);
                put_u32(hs + 24 * i + 16, TOPK(v)->heap[i].count);
            }
        }
        out->put_str(out, hs != NULL ? hs : (const uint8_t *)"", hs ? n : 0);
        rv_sys_free(hs);
        for (uint32_t i = 0; i < TOPK(v)->k; i++) {
            const rb_heap *e = &TOPK(v)->heap[i];
            if (e->item == NULL)
                out->put_str(out, "", 1);
            else
                out->put_str(out, e->item, (size_t)e->len + 1);
        }
    } else {
        out->put_u64(out, CMS(v)->width);
        out->put_u64(out, CMS(v)->depth);
        out->put_u64(out, CMS(v)->counter);
        out->put_str(out, CMS(v)->cells,
                     (size_t)(CMS(v)->width * CMS(v)->depth * 4));
    }
}

/* ---- the fields as bytes (inside an amq blob; the fuzz target) ------------------ */

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
