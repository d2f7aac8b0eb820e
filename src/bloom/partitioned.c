/*
 * partitioned.c — the partitioned Bloom filter: the m-bit array is cut into
 * k disjoint slices of m/k bits, and probe i of a key lands in slice i
 * (Mullin 1983 in the database literature; Almeida et al. 2007 use it for
 * the stages of the scalable filter; Kirsch & Mitzenmacher 2006 analyse it).
 * All k probes come from the key's one 64-bit hash h by multiply-shift with
 * k fixed odd multipliers, as in bloom.c but with this file's own table.
 *
 *   slice 0 (s bits)     slice 1 (s bits)          slice k-1 (s bits)
 *   +----------------+ +----------------+ ...  +----------------+
 *   |0 1 0 0 1 ... 0 | |1 0 0 0 1 ... 0 |      |0 0 1 0 ... 1 0 |
 *   +----------------+ +----------------+      +----------------+
 *        ^ reduce(h*M0, s)    ^ reduce(h*M1, s)       ^ reduce(h*M_{k-1}, s)
 *
 * Why slices: no two probes of one key can collide, every slice fills at
 * the same rate, and the false-positive probability of a key never
 * inserted is exactly prod_i (ones_i / s) when its k probes are independent
 * and uniform — one factor per slice, from the slice's own fill. The
 * expected rate at n keys is (1 - (1 - 1/s)^n)^k ~ (1 - e^{-kn/m})^k, a
 * hair above the classic filter's (Kirsch & Mitzenmacher), and the same
 * curve for sizing.
 *
 * Invariants: s = slice bits is a positive multiple of 64 (slices start on
 * word boundaries); 1 <= k <= 64; ones[i] equals the number of set bits of
 * slice i (kept exact on insert, recomputed after merge and load).
 *
 * Failure modes: none after construction (adds cannot fail); views refuse
 * updates in the generic layer; merges of different shapes are refused
 * (AMQ_ERR_INCOMPATIBLE) before anything changes.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bloom/partitioned.h"
#include "core/bits.h"
#include "core/fpr.h"
#include "type/type.h"

#define PART_BATCH 16

/* splitmix64 from the seed "PARTITND", odd, 24-40 bits set. */
const uint64_t amq__part_mul[AMQ__PART_MAX_K] = {
    0x3439f3deb2163e5fULL, 0xa522a1a84fbc2213ULL, 0x5d0707d3e32934c3ULL,
    0x8f2989a6847087afULL, 0x658d6343deae8fabULL, 0x6e7b3c83b61b5cb3ULL,
    0x990bee1e335ee38bULL, 0x3a5dcb93c57a009bULL, 0xeb982678972ac167ULL,
    0x92d5790e53a4690dULL, 0x4030d209962697c3ULL, 0x69336d04f25a8bd1ULL,
    0x2b92d0de03579e99ULL, 0xe19ec46256fc4071ULL, 0x17c26819e28b59adULL,
    0x1fba0077e0442ea3ULL, 0xe16503613e7ca01bULL, 0x6971d5249ed15e31ULL,
    0xe810ef470b1b0045ULL, 0xc021e4bc772ee085ULL, 0xb85bc974b4d975ffULL,
    0x1ec6a3c9a859ee8dULL, 0x060f8b6235d965afULL, 0xf8fa9d52465e91e9ULL,
    0x0cf26542b5bf89b3ULL, 0x0c1a164851b1633dULL, 0x920c52c0bbc95d7dULL,
    0x26b8fdc84d1d59a5ULL, 0x64a62eaad2a534bfULL, 0x2edaffe2417c69d5ULL,
    0xa9f37b82f0a6c327ULL, 0xdcf0391e3b89f3d9ULL, 0xdbe266e2cb852429ULL,
    0x5dd67145d459808dULL, 0xe3a849c69cbba151ULL, 0x5caad1f353d93a75ULL,
    0xb96781ed3abb8629ULL, 0xb84d89407b36ffc1ULL, 0x443029ca9a6ac5abULL,
    0x1d0c64cdf2e963e7ULL, 0xdd7ac36da2068445ULL, 0x4948f50e8c2cd439ULL,
    0x760d92a7f3394553ULL, 0xcfbbd18df2e9891bULL, 0xf089b6397a3878fdULL,
    0xd6c4949d55070045ULL, 0x9623cd2701cb492fULL, 0xb4d9146015adcf85ULL,
    0x58c01553b2ce12f5ULL, 0x1b9e9b6e60a1fd5fULL, 0x8dfd25aa94da08c7ULL,
    0x6a15a42b3d0d3fa5ULL, 0x8b636aa6c54366efULL, 0x5bf631b02a8db88fULL,
    0x4444797eb2e25911ULL, 0x7b74e9775d356079ULL, 0x08d0ce7d522b2e7bULL,
    0x4a712b2887f25dabULL, 0xddb548b233b02e33ULL, 0x156e88526e6df7a3ULL,
    0x4acc13db1bd97b63ULL, 0x980bd246e848ebbdULL, 0x7c3c7afb9b8baad9ULL,
    0xf709372f88d35857ULL};

/* ---- the mathematics ---------------------------------------------------- */

double amq__partitioned_curve(double b, unsigned k) {
    return amq__fpr_probes(b, k ? k : amq__best_probes(b, AMQ__PART_MAX_K));
}

double amq__partitioned_bits_for(double fpr, unsigned k) {
    return amq__cells_for(fpr, k, AMQ__PART_MAX_K);
}

double amq_partitioned_fpr(double m_bits, double n, unsigned k) {
    double s = m_bits / (double)k;
    if (k == 0 || !(s >= 1.0))
        return 1.0;
    return pow(-expm1(n * log1p(-1.0 / s)), (double)k);
}

/* ---- construction ------------------------------------------------------- */

amq_status amq__partitioned_make(const amq__mem *mem, uint64_t slice_bits,
                                 unsigned k, const uint64_t *borrow,
                                 amq_partitioned **out) {
    size_t words, bytes;
    if (slice_bits == 0 || slice_bits % 64 != 0 || k == 0 ||
        k > AMQ__PART_MAX_K)
        return AMQ_ERR_INVALID;
    if (slice_bits / 64 > SIZE_MAX ||
        !amq__mul((size_t)(slice_bits / 64), k, &words) ||
        !amq__mul(words, 8, &bytes))
        return AMQ_ERR_OVERFLOW;
    amq_partitioned *p;
    void *wr;
    AMQ_RETURN_IF_ERR(
        amq__obj_new_in(sizeof *p + k * sizeof p->ones[0], mem, (void **)&p));
    p->slice = slice_bits;
    p->slice_words = slice_bits / 64;
    p->k = k;
    amq_status st = amq__obj_table(&p->o, bytes, borrow, &wr);
    if (st != AMQ_OK) {
        amq__obj_free(&p->o);
        return st;
    }
    p->words = borrow != NULL ? (uint64_t *)borrow : wr;
    *out = p;
    return AMQ_OK;
}

amq_status amq__partitioned_size_for(uint64_t capacity, double fpr, unsigned *k,
                                     uint64_t *slice_bits) {
    if (capacity == 0 || !(fpr > 0.0 && fpr < 1.0))
        return AMQ_ERR_INVALID;
    double bpk = amq__partitioned_bits_for(fpr, *k);
    if (*k == 0)
        *k = amq_bloom_optimal_k(bpk);
    if (*k > AMQ__PART_MAX_K)
        return AMQ_ERR_INVALID;
    double s = ceil(bpk * (double)capacity / (double)*k / 64.0) * 64.0;
    if (!(s * (double)*k < 0x1p62))
        return AMQ_ERR_OVERFLOW;
    *slice_bits = (uint64_t)s;
    return AMQ_OK;
}

amq_status amq__partitioned_explicit(const amq__mem *mem, uint64_t m_bits,
                                     unsigned k, amq_partitioned **out) {
    if (k == 0 || k > AMQ__PART_MAX_K || m_bits == 0 ||
        m_bits > (UINT64_C(1) << 62))
        return AMQ_ERR_INVALID;
    uint64_t s = (m_bits + k - 1) / k;
    s = (s + 63) / 64 * 64;
    return amq__partitioned_make(mem, s, k, NULL, out);
}

/* ---- updates and queries ------------------------------------------------ */

/* Bit index of probe i, relative to the start of the array. */
static inline uint64_t probe(const amq_partitioned *p, uint64_t h, unsigned i) {
    return (uint64_t)i * p->slice +
           amq__reduce64(h * amq__part_mul[i], p->slice);
}

amq_status amq__partitioned_add(amq__obj *o, uint64_t h) {
    amq_partitioned *p = (amq_partitioned *)o;
    for (unsigned i = 0; i < p->k; i++) {
        uint64_t bit = probe(p, h, i);
        uint64_t mask = 1ULL << (bit & 63), old = p->words[bit >> 6];
        p->words[bit >> 6] = old | mask;
        p->ones[i] += (old & mask) == 0;
    }
    p->o.items++;
    return AMQ_OK;
}

bool amq__partitioned_contains(const amq__obj *o, uint64_t h) {
    const amq_partitioned *p = (const amq_partitioned *)o;
    for (unsigned i = 0; i < p->k; i++) {
        uint64_t bit = probe(p, h, i);
        if ((p->words[bit >> 6] & (1ULL << (bit & 63))) == 0)
            return false;
    }
    return true;
}

/* Prefetch the first two probes of a group before testing any key of it:
 * most absent keys stop at one of them. */
void amq__partitioned_batch(const amq__obj *o, const uint64_t *h, size_t n,
                            uint8_t *out) {
    const amq_partitioned *p = (const amq_partitioned *)o;
    size_t i = 0;
    for (; i + PART_BATCH <= n; i += PART_BATCH) {
        for (size_t j = 0; j < PART_BATCH; j++) {
            amq__prefetch(&p->words[probe(p, h[i + j], 0) >> 6]);
            if (p->k > 1)
                amq__prefetch(&p->words[probe(p, h[i + j], 1) >> 6]);
        }
        for (size_t j = 0; j < PART_BATCH; j++)
            out[i + j] = amq__partitioned_contains(o, h[i + j]);
    }
    for (; i < n; i++)
        out[i] = amq__partitioned_contains(o, h[i]);
}

void amq__partitioned_recount(amq_partitioned *p) {
    for (unsigned i = 0; i < p->k; i++) {
        const uint64_t *w = p->words + (size_t)i * p->slice_words;
        uint64_t ones = 0;
        for (uint64_t j = 0; j < p->slice_words; j++)
            ones += amq__popcount64(w[j]);
        p->ones[i] = ones;
    }
}

amq_status amq__partitioned_merge(amq__obj *o, const amq__obj *other,
                                  amq__merge_op op) {
    amq_partitioned *dst = (amq_partitioned *)o;
    const amq_partitioned *src = (const amq_partitioned *)other;
    if (dst->slice != src->slice || dst->k != src->k)
        return AMQ_ERR_INCOMPATIBLE;
    size_t words = (size_t)dst->slice_words * dst->k;
    amq__bits_merge(dst->words, src->words, words * sizeof *dst->words,
                    op == AMQ__INTERSECT);
    amq__partitioned_recount(dst);
    dst->o.items =
        amq__merged_items(dst->o.items, src->o.items, op == AMQ__INTERSECT);
    return AMQ_OK;
}

/* Each slice is a one-hash Bloom filter of s bits holding every key:
 * n_i = -s ln(1 - ones_i/s); the slices' mean is the estimate. */
amq_status amq__partitioned_estimate(const amq__obj *o, double *out) {
    const amq_partitioned *p = (const amq_partitioned *)o;
    double s = (double)p->slice, sum = 0.0;
    for (unsigned i = 0; i < p->k; i++) {
        if (p->ones[i] >= p->slice) {
            *out = INFINITY;
            return AMQ_OK;
        }
        sum += -s * log1p(-(double)p->ones[i] / s);
    }
    *out = sum / (double)p->k;
    return AMQ_OK;
}

double amq__partitioned_bound(const amq__obj *o) {
    const amq_partitioned *p = (const amq_partitioned *)o;
    double prod = 1.0, s = (double)p->slice;
    for (unsigned i = 0; i < p->k; i++)
        prod *= (double)p->ones[i] / s;
    return prod;
}

uint64_t amq_partitioned_bits(const amq_partitioned *p) {
    return p->slice * p->k;
}
unsigned amq_partitioned_k(const amq_partitioned *p) { return p->k; }

/* ---- internal access ---------------------------------------------------- */

size_t amq__partitioned_bytes(const amq_partitioned *p) {
    return (size_t)p->slice_words * p->k * 8;
}

void amq__partitioned_params_write(const amq__obj *o, amq__wr *w) {
    const amq_partitioned *p = (const amq_partitioned *)o;
    amq__wr_u64(w, p->slice);
    amq__wr_u32(w, p->k);
    amq__wr_u32(w, 0);
    amq__wr_u64(w, p->o.items);
}

amq_status amq__partitioned_params_read(amq__rd *r, size_t bytes,
                                        uint64_t *slice_bits, unsigned *k,
                                        uint64_t *items) {
    uint64_t s;
    uint32_t kk;
    size_t at_s = amq__rd_u64(r, &s);
    size_t at_k = amq__rd_u32(r, &kk);
    AMQ_RETURN_IF_ERR(amq__rd_zero32(r));
    amq__rd_u64(r, items);
    if (kk == 0 || kk > AMQ__PART_MAX_K)
        return amq__rd_bad(r, at_k, "hash count %u out of range", kk);
    if (s == 0 || s % 64 != 0 || s / 8 > bytes / kk || s / 8 * kk != bytes)
        return amq__rd_bad(r, at_s,
                           "slices of %llu bits do not fill %zu "
                           "bytes",
                           (unsigned long long)s, bytes);
    *slice_bits = s;
    *k = kk;
    return AMQ_OK;
}

/* ---- the generic interface --------------------------------------------- */

static amq_status t_create(const amq__type *self, amq__spec *spec,
                           uint64_t capacity, double fpr,
                           const amq_options *opt, amq__obj **out,
                           amq_diag *diag) {
    uint64_t k = 0, m = 0;
    bool has_m;
    amq_partitioned *p;
    amq__mem mem;
    (void)self;
    AMQ_RETURN_IF_ERR(
        amq__spec_u64(spec, "k", 1, AMQ__PART_MAX_K, &k, NULL, diag));
    AMQ_RETURN_IF_ERR(
        amq__spec_u64(spec, "m", 64, UINT64_C(1) << 60, &m, &has_m, diag));
    amq__mem_init(&mem, opt);
    if (!has_m) {
        unsigned kk = (unsigned)k;
        uint64_t s;
        if (capacity == 0)
            return amq__diag(diag, AMQ_ERR_SPEC, 0,
                             "partitioned needs a "
                             "capacity and fpr, or m=BITS");
        AMQ_RETURN_IF_ERR(amq__partitioned_size_for(capacity, fpr, &kk, &s));
        AMQ_RETURN_IF_ERR(amq__partitioned_make(&mem, s, kk, NULL, &p));
    } else {
        if (k == 0)
            k = capacity ? amq_bloom_optimal_k((double)m / (double)capacity)
                         : 7;
        AMQ_RETURN_IF_ERR(amq__partitioned_explicit(&mem, m, (unsigned)k, &p));
    }
    *out = &p->o;
    return AMQ_OK;
}

size_t amq__partitioned_describe(const amq__obj *o, char *buf, size_t cap) {
    const amq_partitioned *p = (const amq_partitioned *)o;
    return amq__describe(buf, cap, "m=%llu,k=%u",
                         (unsigned long long)(p->slice * p->k), p->k);
}

static amq_status t_curve(const amq__type *self, amq__spec *spec, double x,
                          bool inverse, double *out, amq_diag *diag) {
    uint64_t k = 0;
    (void)self;
    AMQ_RETURN_IF_ERR(
        amq__spec_u64(spec, "k", 1, AMQ__PART_MAX_K, &k, NULL, diag));
    *out = inverse ? amq__partitioned_bits_for(x, (unsigned)k)
                   : amq__partitioned_curve(x, (unsigned)k);
    return AMQ_OK;
}

static amq_status t_load(const amq__type *self, amq__rd *r,
                         const uint8_t *payload, size_t len, bool view,
                         const amq_options *opt, amq__obj **out) {
    uint64_t s = 0, items = 0;
    unsigned k = 0;
    amq_partitioned *f;
    amq__mem mem;
    (void)self;
    AMQ_RETURN_IF_ERR(amq__rd_expect(r, AMQ__PART_PARAMS));
    AMQ_RETURN_IF_ERR(amq__partitioned_params_read(r, len, &s, &k, &items));
    amq__mem_init(&mem, opt);
    AMQ_RETURN_IF_ERR(amq__partitioned_make(
        &mem, s, k, view ? (const uint64_t *)payload : NULL, &f));
    if (!view)
        memcpy(f->words, payload, len);
    f->o.items = items;
    amq__partitioned_recount(f);
    *out = &f->o;
    return AMQ_OK;
}

const amq__type amq__type_partitioned = {
    .info = {.name = "partitioned",
             .type_id = AMQ__ID_partitioned,
             .caps = AMQ_CAP_UNION | AMQ_CAP_INTERSECT | AMQ_CAP_ESTIMATE,
             .summary = "partitioned Bloom filter: k disjoint slices, one "
                        "probe per slice",
             .params = "k=HASHES (slices, 1-64, default optimal), m=BITS "
                       "(explicit total size instead of capacity/fpr)",
             .default_hash = AMQ_HASH_XXH3},
    .reads_param = "k",
    .kernel_shapes = amq__defaults_only,
    .create = t_create,
    .load = t_load,
    .add = amq__partitioned_add,
    .contains = amq__partitioned_contains,
    .contains_batch = amq__partitioned_batch,
    .merge = amq__partitioned_merge,
    .estimate = amq__partitioned_estimate,
    .fpr_bound = amq__partitioned_bound,
    .describe = amq__partitioned_describe,
    .curve = t_curve,
    .params_write = amq__partitioned_params_write,
};
