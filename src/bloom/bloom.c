/*
 * bloom.c — the classic Bloom filter (Bloom 1970). All k probes come from
 * one 64-bit key hash h, in the spirit of Kirsch & Mitzenmacher (2006): no
 * second hash of the key. Probe i reads bit reduce(h * A[i], m), where A is a
 * fixed table of odd 64-bit multipliers and reduce is multiply-shift.
 *
 * Not K–M double hashing g_i = h1 + i*h2: its ~m^2 distinct probe sets give
 * small filters a false-positive floor well above (X/m)^k, where k
 * multiply-shift hashes of h match (X/m)^k at every size for the same cost
 * (tests/unit/test_bloom.c checks it). Derivation and measurements:
 * docs/structures.md §bloom, "Why not Kirsch–Mitzenmacher double
 * hashing".
 *
 *   words[0]            words[1]                   words[m/64 - 1]
 *   +------------------+------------------+ ... +------------------+
 *   |0 1 0 0 1 ... 0 1 |1 0 0 0 0 ... 1 0 |     |0 0 1 0 1 ... 0 0 |
 *   +------------------+------------------+ ... +------------------+
 *      ^ g_0(x)            ^ g_3(x)                  ^ g_1(x)
 *
 * Invariants: m is a positive multiple of 64; 1 <= k <= 64; `ones` (with,
 * in concurrent mode, the tally's count: core/tally.h) equals the number
 * of set bits (kept exact on insert, recomputed after merge and load),
 * which makes the certified bound exact for this very filter:
 * a key never inserted is reported with probability (ones/m)^k when its k
 * probes are independent and uniform (docs/structures.md).
 *
 * Sizing: m/n is the smallest bits-per-key at which the best *integer* k
 * meets the target, so the filter meets ε at capacity (the textbook
 * 1.44·log2(1/ε) assumes a real k and undershoots by < 0.1%).
 *
 * Failure modes: none after construction; adds cannot fail, and a view
 * refuses updates in the generic layer. Construction fails cleanly on bad
 * arguments, overflow or allocation failure.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "amq/bloom.h"
#include "core/bits.h"
#include "core/fpr.h"
#include "core/mem.h"
#include "core/tally.h"
#include "type/type.h"

#define BLOOM_MAX_K 64
#define BLOOM_BATCH 16

/* Probe multipliers: odd, 24-40 bits set, from splitmix64 with a fixed seed.
 * Part of the file format (they decide which bits a key sets): never edit. */
static const uint64_t probe_mul[BLOOM_MAX_K] = {
    0xc0e16b163a85a4ddULL, 0x890acd8dd443c47dULL, 0xb3889d8a6dc47761ULL,
    0x6a0398e528f0ae6bULL, 0x048344ece48a855fULL, 0xf175cfea21871331ULL,
    0x391ceef02702c2fdULL, 0x4baf8cac4784cb13ULL, 0x3547744583a3f88fULL,
    0xd9cf2b15c6b6c90fULL, 0x961facc76d5fe21dULL, 0x0094ab49d50f11f9ULL,
    0xe3211e37bdbeb6ddULL, 0x62fe6c274ff3511bULL, 0x5ac30b329fdf0575ULL,
    0x1450582c6b65b407ULL, 0x7a30fcc7888eb791ULL, 0x5540f5ba6a15576fULL,
    0x16cef0559096d3e9ULL, 0x2cf8f14b06874899ULL, 0xc9c9263b6e2ce103ULL,
    0xd6ff920b0a9faa6dULL, 0x53192697db998dc1ULL, 0x73ea9b9bc7cd18d7ULL,
    0x102713f872c33fcfULL, 0xf4183a0e5d2a033fULL, 0x71b63e307eebb517ULL,
    0xda61f5713d036001ULL, 0x46eb7409ae691b21ULL, 0xb23ad691d6707699ULL,
    0x67c8fe11d22fc4b9ULL, 0x7eb4661419481339ULL, 0x98077547fb070efdULL,
    0x1ee63336c2e3a9a9ULL, 0xbc353656348c36f7ULL, 0xce3898cbf1bb1bd9ULL,
    0x265b1c23c82915cbULL, 0xfd1948c91687e355ULL, 0xd976893961980ffbULL,
    0x336e77a6288e4c35ULL, 0x16f8956d7b76d269ULL, 0xda7cd844690d4669ULL,
    0x1e8cf85f253a581fULL, 0x3ea68129e923e53bULL, 0xa080a077c9e9fd79ULL,
    0x4469a19c673c14cfULL, 0xbd5b9351b2d0963dULL, 0xb46a749cad9df6b7ULL,
    0x07da714e59c7d363ULL, 0x393a84bb5af17619ULL, 0xb3ae08f3c86dfc0dULL,
    0x642a350ed7c82c93ULL, 0x547bdec029cd3fa3ULL, 0x778debb21b67fc3dULL,
    0xb1e26d886eaed22bULL, 0x49fb5996898a7303ULL, 0x5e245bcec3e007b3ULL,
    0x1f6818e4a739f61bULL, 0xad694562d6313affULL, 0xded7c324e96e3a09ULL,
    0x0e181ef86a661cf9ULL, 0x675448d833ac146bULL, 0xf047e1b493d6b255ULL,
    0xe3d9f8b33d92678dULL};

struct amq_bloom {
    amq__obj o;      /* o.items counts adds; o.table is the bit array */
    uint64_t *words; /* the table (written only when owned)             */
    uint64_t m;      /* bits, multiple of 64 */
    unsigned k;
    bool concurrent;
    uint64_t ones;     /* set bits (concurrent mode: and the tally's)    */
    amq__tally *tally; /* concurrent mode: adds (0), set bits (1) by thread */
};

/* The tally's counts. */
enum { T_ITEMS, T_ONES };

/* ---- the mathematics ---------------------------------------------------- */

double amq_bloom_fpr(double m_bits, double n, unsigned k) {
    if (m_bits <= 0.0 || k == 0)
        return 1.0;
    return pow(-expm1(-(double)k * n / m_bits), (double)k);
}

/* FPR at b bits per key with k hashes. */
static double fpr_at(double b, unsigned k) { return amq__fpr_probes(b, k); }

unsigned amq_bloom_optimal_k(double bits_per_key) {
    return amq__best_probes(bits_per_key, BLOOM_MAX_K);
}

double amq_bloom_bits_for_fpr(double fpr) { return -log2(fpr) / M_LN2; }

/* Smallest bits per key at which k hashes (k = 0: the best integer k) give
 * at most fpr. */
static double bits_for(double fpr, unsigned k) {
    return amq__cells_for(fpr, k, BLOOM_MAX_K);
}

/* ---- construction ------------------------------------------------------- */

static amq_status alloc_bloom(uint64_t m_bits, unsigned k,
                              const amq_options *opt, const uint64_t *borrow,
                              amq_bloom **out) {
    amq_bloom *b;
    void *wr;
    if (m_bits == 0 || k == 0 || k > BLOOM_MAX_K)
        return AMQ_ERR_INVALID;
    if (m_bits > UINT64_MAX - 63 || (m_bits + 63) / 64 > SIZE_MAX / 8)
        return AMQ_ERR_OVERFLOW;
    m_bits = (m_bits + 63) / 64 * 64;
    bool conc = opt != NULL && (opt->flags & AMQ_OPT_CONCURRENT);
    AMQ_RETURN_IF_ERR(amq__obj_new(sizeof *b + (conc ? AMQ__TALLY_ROOM : 0),
                                   opt, (void **)&b));
    b->m = m_bits;
    b->k = k;
    b->concurrent = conc;
    b->tally = conc ? amq__tally_in(b + 1) : NULL;
    amq_status st = amq__obj_table(&b->o, (size_t)(m_bits / 8), borrow, &wr);
    if (st != AMQ_OK) {
        amq__obj_free(&b->o);
        return st;
    }
    b->words = borrow != NULL ? (uint64_t *)borrow : wr;
    *out = b;
    return AMQ_OK;
}

/* m for capacity keys at fpr with k hashes (0: best integer k). */
static amq_status size_for(uint64_t capacity, double fpr, unsigned *k,
                           uint64_t *m) {
    double bpk, mbits;
    if (capacity == 0 || !(fpr > 0.0 && fpr < 1.0))
        return AMQ_ERR_INVALID;
    bpk = bits_for(fpr, *k);
    mbits = ceil(bpk * (double)capacity);
    if (!(mbits < 0x1p62))
        return AMQ_ERR_OVERFLOW;
    *m = (uint64_t)mbits;
    if (*k == 0)
        *k = amq_bloom_optimal_k(bpk);
    return AMQ_OK;
}

/* ---- updates and queries ------------------------------------------------ */

static inline uint64_t probe(const amq_bloom *b, uint64_t h, unsigned i) {
    return amq__reduce64(h * probe_mul[i], b->m);
}

static amq_status bloom_add(amq__obj *o, uint64_t h) {
    amq_bloom *b = (amq_bloom *)o;
    uint64_t fresh = 0;
    for (unsigned i = 0; i < b->k; i++) {
        uint64_t bit = probe(b, h, i);
        uint64_t mask = 1ULL << (bit & 63), old;
        if (b->concurrent) {
            /* a bit already set is not written: no locked operation, and
             * the line stays shared between the cores */
            old = __atomic_load_n(&b->words[bit >> 6], __ATOMIC_RELAXED);
            if ((old & mask) == 0)
                old = __atomic_fetch_or(&b->words[bit >> 6], mask,
                                        __ATOMIC_RELAXED);
        } else {
            old = b->words[bit >> 6];
            b->words[bit >> 6] = old | mask;
        }
        fresh += (old & mask) == 0;
    }
    if (b->concurrent) {
        if (fresh != 0)
            amq__tally_add(b->tally, T_ONES, fresh);
        amq__tally_add(b->tally, T_ITEMS, 1);
    } else {
        b->ones += fresh;
        b->o.items++;
    }
    return AMQ_OK;
}

static bool bloom_contains(const amq__obj *o, uint64_t h) {
    const amq_bloom *b = (const amq_bloom *)o;
    for (unsigned i = 0; i < b->k; i++) {
        uint64_t bit = probe(b, h, i);
        if ((b->words[bit >> 6] & (1ULL << (bit & 63))) == 0)
            return false;
    }
    return true;
}

/* Batch: prefetch the first two probes of a group of keys before testing
 * any of them, so their cache misses overlap; a negative key usually stops
 * at the first or second probe. */
static void bloom_batch(const amq__obj *o, const uint64_t *h, size_t n,
                        uint8_t *out) {
    const amq_bloom *b = (const amq_bloom *)o;
    size_t i = 0;
    for (; i + BLOOM_BATCH <= n; i += BLOOM_BATCH) {
        for (size_t j = 0; j < BLOOM_BATCH; j++) {
            amq__prefetch(&b->words[probe(b, h[i + j], 0) >> 6]);
            if (b->k > 1)
                amq__prefetch(&b->words[probe(b, h[i + j], 1) >> 6]);
        }
        for (size_t j = 0; j < BLOOM_BATCH; j++)
            out[i + j] = bloom_contains(o, h[i + j]);
    }
    for (; i < n; i++)
        out[i] = bloom_contains(o, h[i]);
}

/* The adds: the saved count and, in concurrent mode, the threads'. */
static uint64_t bloom_items(const amq__obj *o) {
    const amq_bloom *b = (const amq_bloom *)o;
    return o->items +
           (b->tally != NULL ? amq__tally_sum(b->tally, T_ITEMS) : 0);
}

/* The set bits, the same way. */
static uint64_t ones_of(const amq_bloom *b) {
    return b->ones + (b->tally != NULL ? amq__tally_sum(b->tally, T_ONES) : 0);
}

static uint64_t count_ones(const amq_bloom *b) {
    uint64_t ones = 0;
    for (uint64_t i = 0; i < b->m / 64; i++)
        ones += amq__popcount64(b->words[i]);
    return ones;
}

/* dst op= src; the generic layer has checked the type, the hasher and that
 * dst owns its table. */
static amq_status bloom_merge(amq__obj *dst_o, const amq__obj *src_o,
                              amq__merge_op op) {
    amq_bloom *dst = (amq_bloom *)dst_o;
    const amq_bloom *src = (const amq_bloom *)src_o;
    if (dst->m != src->m || dst->k != src->k)
        return AMQ_ERR_INCOMPATIBLE;
    amq__bits_merge(dst->words, src->words, (size_t)(dst->m / 8),
                    op == AMQ__INTERSECT);
    dst->ones = count_ones(dst);
    dst->o.items = amq__merged_items(bloom_items(dst_o), bloom_items(src_o),
                                     op == AMQ__INTERSECT);
    if (dst->tally != NULL) {
        amq__tally_clear(dst->tally, T_ITEMS);
        amq__tally_clear(dst->tally, T_ONES);
    }
    return AMQ_OK;
}

/* Distinct keys from the fill: -(m/k) ln(1 - X/m), X bits set (Swamidass
 * & Baldi 2007); infinity when every bit is set. */
static amq_status bloom_estimate(const amq__obj *o, double *out) {
    const amq_bloom *b = (const amq_bloom *)o;
    uint64_t ones = ones_of(b);
    double m = (double)b->m, x = (double)ones;
    *out = ones >= b->m ? INFINITY : -(m / (double)b->k) * log1p(-x / m);
    return AMQ_OK;
}

/* (ones/m)^k: the rate of this very table (see the top of the file). */
static double bloom_bound(const amq__obj *o) {
    const amq_bloom *b = (const amq_bloom *)o;
    return pow((double)ones_of(b) / (double)b->m, (double)b->k);
}

uint64_t amq_bloom_bits(const amq_bloom *b) { return b->m; }
unsigned amq_bloom_k(const amq_bloom *b) { return b->k; }

/* ---- the generic interface --------------------------------------------- */

static amq_status t_create(const amq__type *self, amq__spec *spec,
                           uint64_t capacity, double fpr,
                           const amq_options *opt, amq__obj **out,
                           amq_diag *diag) {
    uint64_t k = 0, m = 0;
    bool has_m;
    unsigned kk;
    (void)self;
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "k", 1, BLOOM_MAX_K, &k, NULL, diag));
    AMQ_RETURN_IF_ERR(
        amq__spec_u64(spec, "m", 64, UINT64_C(1) << 60, &m, &has_m, diag));
    kk = (unsigned)k;
    if (!has_m) {
        if (capacity == 0)
            return amq__diag(diag, AMQ_ERR_SPEC, 0,
                             "bloom needs a capacity and fpr, or m=BITS");
        AMQ_RETURN_IF_ERR(size_for(capacity, fpr, &kk, &m));
    } else if (kk == 0) {
        kk = capacity ? amq_bloom_optimal_k((double)m / (double)capacity) : 7;
    }
    amq_bloom *b;
    AMQ_RETURN_IF_ERR(alloc_bloom(m, kk, opt, NULL, &b));
    *out = &b->o;
    return AMQ_OK;
}

static size_t t_describe(const amq__obj *o, char *buf, size_t cap) {
    const amq_bloom *b = (const amq_bloom *)o;
    return amq__describe(buf, cap, "m=%llu,k=%u", (unsigned long long)b->m,
                         b->k);
}

static amq_status t_curve(const amq__type *self, amq__spec *spec, double x,
                          bool inverse, double *out, amq_diag *diag) {
    uint64_t k = 0;
    (void)self;
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "k", 1, BLOOM_MAX_K, &k, NULL, diag));
    *out = inverse ? bits_for(x, (unsigned)k)
                   : fpr_at(x, k ? (unsigned)k : amq_bloom_optimal_k(x));
    return AMQ_OK;
}

/* params: m u64 | k u32 | reserved u32 (0) | items u64 */
static void t_params_write(const amq__obj *o, amq__wr *w) {
    const amq_bloom *b = (const amq_bloom *)o;
    amq__wr_u64(w, b->m);
    amq__wr_u32(w, b->k);
    amq__wr_u32(w, 0);
    amq__wr_u64(w, bloom_items(o));
}

static amq_status t_load(const amq__type *self, amq__rd *r,
                         const uint8_t *payload, size_t len, bool view,
                         const amq_options *opt, amq__obj **out) {
    uint64_t m, items;
    uint32_t k;
    amq_bloom *b;
    (void)self;
    AMQ_RETURN_IF_ERR(amq__rd_expect(r, 24));
    size_t at_m = amq__rd_u64(r, &m);
    size_t at_k = amq__rd_u32(r, &k);
    AMQ_RETURN_IF_ERR(amq__rd_zero32(r));
    amq__rd_u64(r, &items);
    if (m == 0 || m % 64 != 0 || m / 8 != len)
        return amq__rd_bad(r, at_m,
                           "size %llu bits does not match a %zu-byte "
                           "payload",
                           (unsigned long long)m, len);
    if (k == 0 || k > BLOOM_MAX_K)
        return amq__rd_bad(r, at_k, "hash count %u out of range", k);
    AMQ_RETURN_IF_ERR(
        alloc_bloom(m, k, opt, view ? (const uint64_t *)payload : NULL, &b));
    if (!view)
        memcpy(b->words, payload, len);
    b->o.items = items;
    b->ones = count_ones(b);
    *out = &b->o;
    return AMQ_OK;
}

const amq__type amq__type_bloom = {
    .info = {.name = "bloom",
             .type_id = AMQ__ID_bloom,
             .caps = AMQ_CAP_UNION | AMQ_CAP_INTERSECT | AMQ_CAP_CONCURRENT |
                     AMQ_CAP_ESTIMATE,
             .summary =
                 "classic Bloom filter, k multiply-shift probes of one hash",
             .params = "k=HASHES (1-64, default optimal), m=BITS (explicit "
                       "size instead of capacity/fpr)",
             .default_hash = AMQ_HASH_XXH3},
    .reads_param = "k",
    .kernel_shapes = amq__defaults_only,
    .create = t_create,
    .load = t_load,
    .add = bloom_add,
    .contains = bloom_contains,
    .contains_batch = bloom_batch,
    .merge = bloom_merge,
    .estimate = bloom_estimate,
    .fpr_bound = bloom_bound,
    .items = bloom_items,
    .describe = t_describe,
    .curve = t_curve,
    .params_write = t_params_write,
};
