/*
 * blocked.c — the cache-line blocked Bloom filter (Putze, Sanders and
 * Singler, "Cache-, hash- and space-efficient Bloom filters", WEA 2007).
 *
 * A classic Bloom filter touches k random cache lines per key. Here the key
 * first picks one 64-byte block and then sets k bits inside it, so every add
 * and every query costs one cache miss. The price is a higher FPR at equal
 * memory: blocks receive a Poisson number of keys, and the crowded ones
 * answer "yes" too often.
 *
 *   64-bit hash h
 *   ├── high 32 bits ─► block = reduce(h >> 32, B)       (reduce64(h, B) when
 *   │                                                     B >= 2^32)
 *   └── low 32 bits t ─► k bit positions, 9 bits each (0..511 in the block),
 *                        by the filter's layout:
 *         layout 1 (salted, every new filter):
 *           p_j = (uint32_t)(t * SALT[j]) >> 23        j = 0..k-1
 *         layout 0 (mix, frames written before; `blocked:layout=0`):
 *           p0..p2   9-bit fields of t
 *           p3..p9   of g  = mix64(h)
 *           p10..p15 of g2 = mix64(g)
 *
 *   block b: 16 little-endian uint32 words (= 8 uint64 words), 512 bits,
 *   one cache line
 *   +----+----+----+----+----+----+----+----+----+----+-- ... --+----+
 *   | v0 | v1 | v2 | v3 | v4 | v5 | v6 | v7 | v8 | v9 |         |v15 |
 *   +----+----+----+----+----+----+----+----+----+----+-- ... --+----+
 *     bit p is bit p & 31 of 32-bit word p >> 5, the same bit as bit
 *     p & 63 of 64-bit word p >> 6 (the table is little-endian).
 *
 * Why the salted layout. A one-key-at-a-time query far beyond cache is
 * bound by how many queries the core keeps in flight, so each instruction
 * of a query counts (docs/bench.md, "Where the time goes"). Layout 0
 * spends one or two 64-bit mixes (two multiplies each, in sequence) before
 * the first position is known; layout 1 needs one 16-lane 32-bit multiply
 * for all k positions (multiply-shift, as in the split-block filter).
 *
 * The salts below are splitmix64 outputs (seed 0x616d712d626c6b, "amq-blk",
 * high halves forced odd), each kept only if its lattice with every salt
 * before has no vector shorter than 2^14 in the max norm (the minimum over
 * the 120 pairs is 18219), so no pair of positions crowds onto a few lines
 * of the 512 x 512 grid. Why that criterion: docs/structures.md §blocked,
 * The salts; test_blocked_layout re-checks it and measures the FPR.
 *
 * Invariants: B >= 1, 1 <= k <= 16, the owned table is 64-byte aligned (one
 * block per line); `items` counts adds.
 *
 * FPR. Positions are drawn with replacement, so a key may set fewer than k
 * distinct bits, and the curve counts that exactly: per block load i,
 * fpr_block(i) = sum_{j=0..k} c_j r_j^i with r_j = (1 - j/m)^k and c_j =
 * (-1)^j sum_{d>=j} P_k(d) C(d,j) (inclusion–exclusion), averaged over the
 * Poisson load (poisson.h): the expected rate of a filter of n keys, which
 * sizing uses. fpr_bound() is the rate of this very table, from its blocks'
 * popcounts. Both layouts approximate the model of k independent positions
 * (layout 1's come from 32 bits), and their measured rates stay within
 * sampling error of it (test_blocked_layout, 4 sigma). Derivation and
 * measurements: docs/structures.md §blocked, Bound and curve, and "Does the
 * FPR model hold for layout 1?".
 *
 * SIMD. With AVX-512 the block is one register. Layout 1: one vpmulld
 * of t by the 16 salts, shifts give each lane's word (p >> 5, picked with
 * vpermd) and bit (vprold of 1 by p, the rotate taking p mod 32), and one
 * masked vptestnmd over the k live lanes answers. Layout 0: eight 64-bit
 * lanes per vector cut from h and the mixes (two vectors for k > 8).
 * AVX2 holds the block in two registers: layout 1 takes eight positions
 * per vector, picks each lane's word in both 256-bit halves and blends by
 * p >> 8 (the product's sign bit); layout 0 four positions per vector.
 * Kernels (single query and the prefetching batch) are chosen when the
 * filter is made, for its layout, k and the CPU; the scalar loop is the
 * reference (AMQ_OPT_SCALAR). Adds stay scalar.
 *
 * Frame params: blocks u64 | k u32 | layout u32 (0 or 1) | items u64; the
 * word that is the layout was reserved (0) before layout 1 existed, so
 * older frames load as layout 0 and save back byte for byte. Only filters
 * of one layout merge.
 *
 * Failure modes: construction fails cleanly (bad arguments, overflow,
 * allocation); adds cannot fail; views are read-only (generic layer).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define BLOCKED_X86 1
#endif

#include "amq/bloom.h"
#include "core/poisson.h"
#include "core/bits.h"
#include "core/mem.h"
#include "core/tally.h"
#include "bloom/fill.h"
#include "type/type.h"

#define BLOCK_BITS 512
#define BLOCK_WORDS 8
#define BLOCK_BYTES 64
#define MAX_K 16
#define DEFAULT_K 8 /* explicit blocks= with neither k nor a target */
#define MAX_BLOCKS (UINT64_C(1) << 52)
#define AHEAD 24 /* keys prefetched ahead in a batch (see sbbf.c) */

typedef void blocked_batch_fn(const amq_blocked *b, const uint64_t *h, size_t n,
                              uint8_t *out);

struct amq_blocked {
    amq__obj o;            /* o.items counts adds; o.table the blocks    */
    const uint64_t *words; /* what queries read                          */
    uint64_t *mut;         /* the same table when writable; NULL if view */
    uint64_t nblocks;
    unsigned k;
    unsigned layout; /* AMQ_BLOCKED_LAYOUT_* */
    bool concurrent;
    amq__tally *tally;       /* concurrent mode: the adds counted by thread   */
    blocked_batch_fn *batch; /* the batch query of o.contains' kind */
    /* Layout 0, AVX2: lane j of vector v is live when 4v + j < k. */
    uint64_t lane_live[MAX_K];
    /* Layout 1, AVX2: 32-bit lane j (0..15) is live when j < k. */
    int32_t live32[MAX_K];
    /* Layout 0, AVX-512: lane j of vector v is live when 8v + j < k. */
    uint8_t live512[2];
    /* Layout 1, AVX-512: lane j is live when j < k. */
    uint16_t live16;
};

/* ---- the mathematics ---------------------------------------------------- */

/* The per-block false-positive polynomial for k positions in m bits. */
typedef struct blk_model {
    unsigned k;
    double c[MAX_K + 1];
    double r[MAX_K + 1];
} blk_model;

static double choose(unsigned n, unsigned j) {
    double v = 1.0;
    for (unsigned t = 1; t <= j; t++)
        v = v * (double)(n - j + t) / (double)t;
    return v;
}

static void model_init(blk_model *mo, unsigned k, double m) {
    double pd[MAX_K + 1] = {1.0}; /* distinct cells after 0 draws: none */
    for (unsigned t = 1; t <= k; t++) {
        for (unsigned d = t; d >= 1; d--)
            pd[d] = pd[d] * (double)d / m + pd[d - 1] * (m - (d - 1)) / m;
        pd[0] = 0.0;
    }
    mo->k = k;
    for (unsigned j = 0; j <= k; j++) {
        double s = 0.0;
        for (unsigned d = j; d <= k; d++)
            s += pd[d] * choose(d, j);
        mo->c[j] = (j & 1) ? -s : s;
        mo->r[j] = (double)j < m ? pow(1.0 - (double)j / m, (double)k) : 0.0;
    }
}

static double clamp01(double x) { return x < 0.0 ? 0.0 : x > 1.0 ? 1.0 : x; }

/* fpr_block at a (possibly fractional) load. */
static double model_at(const blk_model *mo, double load) {
    double f = 0.0;
    for (unsigned j = 0; j <= mo->k; j++)
        f += mo->c[j] * pow(mo->r[j], load);
    return clamp01(f);
}

/* Poisson-averaged FPR at lambda keys per block; r_j^i is carried along the
 * window by one multiply per step. */
static double model_mix(const blk_model *mo, double lambda) {
    double pw[MAX_K + 1], sum = 0.0;
    amq__pois w;
    if (!(lambda > 0.0))
        return 0.0;
    if (lambda > AMQ__POIS_MAX_LAMBDA)
        return model_at(mo, lambda);
    amq__pois_begin(&w, lambda);
    for (unsigned j = 0; j <= mo->k; j++)
        pw[j] = pow(mo->r[j], w.i);
    for (; amq__pois_more(&w); amq__pois_next(&w)) {
        double f = 0.0;
        for (unsigned j = 0; j <= mo->k; j++) {
            f += mo->c[j] * pw[j];
            pw[j] *= mo->r[j];
        }
        sum += w.p * clamp01(f);
    }
    return clamp01(sum);
}

/* Above 16 positions the alternating sum cancels badly; fall back to the
 * textbook per-block rate (1 - (1 - 1/m)^{ki})^k under the same mixture. */
static double textbook_mix(double lambda, unsigned k, double m) {
    amq__pois w;
    double sum = 0.0, per_key = (double)k * log1p(-1.0 / m);
    if (!(lambda > 0.0))
        return 0.0;
    if (lambda > AMQ__POIS_MAX_LAMBDA)
        return pow(-expm1(lambda * per_key), (double)k);
    for (amq__pois_begin(&w, lambda); amq__pois_more(&w); amq__pois_next(&w))
        sum += w.p * pow(-expm1(w.i * per_key), (double)k);
    return clamp01(sum);
}

double amq_blocked_fpr(double bits_per_key, unsigned k, unsigned block_bits) {
    blk_model mo;
    if (!(bits_per_key > 0.0) || k == 0 || block_bits == 0)
        return 1.0;
    double lambda = (double)block_bits / bits_per_key;
    if (k > MAX_K)
        return textbook_mix(lambda, k, (double)block_bits);
    model_init(&mo, k, (double)block_bits);
    return model_mix(&mo, lambda);
}

/* The best k (1..16) at b bits/key, and its rate. */
static unsigned best_k(double bits_per_key, double *fpr) {
    unsigned best = 1;
    double lowest = 2.0;
    for (unsigned k = 1; k <= MAX_K; k++) {
        double f = amq_blocked_fpr(bits_per_key, k, BLOCK_BITS);
        if (f < lowest) {
            lowest = f;
            best = k;
        }
    }
    if (fpr != NULL)
        *fpr = lowest;
    return best;
}

/* Fewest blocks meeting fpr at capacity keys with model mo (bisection on
 * the monotone curve); 0 if even MAX_BLOCKS falls short. */
static uint64_t blocks_needed(const blk_model *mo, double n, double fpr) {
    uint64_t lo = 1, hi = MAX_BLOCKS;
    if (model_mix(mo, n / (double)hi) > fpr)
        return 0;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (model_mix(mo, n / (double)mid) <= fpr)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* The smallest filter meeting (capacity, fpr): every k in 1..16 (or just
 * fixed_k) is tried, ties going to the smaller k (fewer bits to test). */
static amq_status shape_for(uint64_t capacity, double fpr, unsigned fixed_k,
                            uint64_t *blocks, unsigned *k) {
    uint64_t best = 0;
    unsigned first = fixed_k ? fixed_k : 1, last = fixed_k ? fixed_k : MAX_K;
    if (capacity == 0 || !(fpr > 0.0 && fpr < 1.0))
        return AMQ_ERR_INVALID;
    for (unsigned kk = first; kk <= last; kk++) {
        blk_model mo;
        model_init(&mo, kk, BLOCK_BITS);
        uint64_t nb = blocks_needed(&mo, (double)capacity, fpr);
        if (nb != 0 && (best == 0 || nb < best)) {
            best = nb;
            *k = kk;
        }
    }
    if (best == 0)
        return AMQ_ERR_OVERFLOW;
    *blocks = best;
    return AMQ_OK;
}

/* The curve at b bits/key for k positions (0: the best k at that size). */
static double curve_at(double bits_per_key, unsigned k) {
    double f;
    if (k != 0)
        return amq_blocked_fpr(bits_per_key, k, BLOCK_BITS);
    best_k(bits_per_key, &f);
    return f;
}

/* Smallest bits/key meeting fpr with k (0: the best k at each size). */
static double bits_for(double fpr, unsigned k) {
    double lo = 1e-3, hi = 16.0;
    while (curve_at(hi, k) > fpr && hi < 1e6)
        hi *= 2.0;
    for (int i = 0; i < 100 && hi - lo > 1e-9 * hi; i++) {
        double mid = 0.5 * (lo + hi);
        if (curve_at(mid, k) <= fpr)
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

/* ---- positions, the portable reference ---------------------------------- */

static inline uint64_t block_of(uint64_t h, uint64_t nblocks) {
    if (nblocks <= UINT32_MAX)
        return amq__reduce32((uint32_t)(h >> 32), (uint32_t)nblocks);
    return amq__reduce64(h, nblocks);
}

/* Layout 1's multipliers, one per position (see the essay for how they
 * were chosen; test_blocked_layout re-checks the property). */
static const uint32_t SALT[MAX_K] __attribute__((aligned(64))) = {
    0x2560fc7du, 0x65e488b5u, 0x2148f0c9u, 0xb26426c3u,
    0x78c74d37u, 0x8de33921u, 0x55ca90edu, 0x10aea1b1u,
    0x4e4096a5u, 0x00de3e8du, 0x28ba03bbu, 0xa5fd7c0bu,
    0xdb4dd0b7u, 0x1c35618fu, 0x667de3a9u, 0xd989113du};

/* Layout 0: the three words the positions are cut from (see the picture
 * above); the third costs a second mix and only k > 10 needs it. */
static inline void mix_sources(uint64_t h, unsigned k, uint64_t src[3]) {
    src[0] = h & 0xffffffffu;
    src[1] = amq__mix64(h);
    src[2] = k > 10 ? amq__mix64(src[1]) : 0;
}

static inline unsigned mix_position(const uint64_t src[3], unsigned j) {
    if (j < 3)
        return (unsigned)(src[0] >> (9 * j)) & 511u;
    if (j < 10)
        return (unsigned)(src[1] >> (9 * (j - 3))) & 511u;
    return (unsigned)(src[2] >> (9 * (j - 10))) & 511u;
}

/* The key's k positions in its block, by the filter's layout. */
static inline void positions(uint64_t h, unsigned k, unsigned layout,
                             unsigned pos[MAX_K]) {
    if (layout == AMQ_BLOCKED_LAYOUT_SALTED) {
        uint32_t t = (uint32_t)h;
        for (unsigned j = 0; j < k; j++)
            pos[j] = (uint32_t)(t * SALT[j]) >> 23;
        return;
    }
    uint64_t src[3];
    mix_sources(h, k, src);
    for (unsigned j = 0; j < k; j++)
        pos[j] = mix_position(src, j);
}

static inline bool block_test(const uint64_t *blk, uint64_t h, unsigned k,
                              unsigned layout) {
    unsigned pos[MAX_K];
    positions(h, k, layout, pos);
    for (unsigned j = 0; j < k; j++)
        if (((blk[pos[j] >> 6] >> (pos[j] & 63)) & 1u) == 0)
            return false;
    return true;
}

/* Set the key's bits in blk (which may be a scratch mask). */
static inline void block_set(uint64_t *blk, uint64_t h, unsigned k,
                             unsigned layout) {
    unsigned pos[MAX_K];
    positions(h, k, layout, pos);
    for (unsigned j = 0; j < k; j++)
        blk[pos[j] >> 6] |= UINT64_C(1) << (pos[j] & 63);
}

/* Concurrent add: gather the key's bits into a mask first, then at most
 * eight atomic ORs, skipping words that already hold their bits (no write,
 * so no cache-line ping-pong on a well-filled block). */
static void block_set_atomic(uint64_t *blk, uint64_t h, unsigned k,
                             unsigned layout) {
    uint64_t m[BLOCK_WORDS] = {0};
    block_set(m, h, k, layout);
    for (unsigned w = 0; w < BLOCK_WORDS; w++)
        if (m[w] != 0 &&
            (__atomic_load_n(&blk[w], __ATOMIC_RELAXED) & m[w]) != m[w])
            __atomic_fetch_or(&blk[w], m[w], __ATOMIC_RELAXED);
}

static const uint64_t *block_ptr(const amq_blocked *b, uint64_t h) {
    return b->words + BLOCK_WORDS * block_of(h, b->nblocks);
}

/* A kernel's two entry points around one block test test(b, blk, h): the
 * single query (amq__obj.contains) and the batch, which prefetches the
 * block AHEAD keys before it is tested. */
#define BLOCKED_KERNEL(name, attrs, test)                                      \
    attrs static bool name##_one(const amq__obj *o, uint64_t h) {              \
        const amq_blocked *b = (const amq_blocked *)o;                         \
        return test(b, block_ptr(b, h), h);                                    \
    }                                                                          \
    attrs static void name##_batch(const amq_blocked *b, const uint64_t *h,    \
                                   size_t n, uint8_t *out) {                   \
        size_t ahead = n < AHEAD ? n : AHEAD, i = 0;                           \
        for (size_t j = 0; j < ahead; j++)                                     \
            amq__prefetch(block_ptr(b, h[j]));                                 \
        for (; i + AHEAD < n; i++) {                                           \
            amq__prefetch(block_ptr(b, h[i + AHEAD]));                         \
            out[i] = test(b, block_ptr(b, h[i]), h[i]);                        \
        }                                                                      \
        for (; i < n; i++)                                                     \
            out[i] = test(b, block_ptr(b, h[i]), h[i]);                        \
    }

static inline bool test_ref(const amq_blocked *b, const uint64_t *blk,
                            uint64_t h) {
    return block_test(blk, h, b->k, b->layout);
}

BLOCKED_KERNEL(kernel_ref, , test_ref)

/* ---- AVX2 ---------------------------------------------------------------- */

#ifdef BLOCKED_X86
#define AVX2_FN __attribute__((target("avx2"), always_inline)) static inline

static const uint64_t LANE_SHIFT[MAX_K] = {0,  9,  18, 0, 9,  18, 27, 36,
                                           45, 54, 0,  9, 18, 27, 36, 45};

/* The block word each lane's position lives in: permute inside both
 * halves of the block (words 0-3 and 4-7), then keep the right half. */
AVX2_FN __m256i pick_words(__m256i lo, __m256i hi, __m256i word) {
    const __m256i three = _mm256_set1_epi64x(3);
    /* 32-bit lane pair (2w, 2w+1) holds 64-bit word w of a half. */
    __m256i two_w = _mm256_slli_epi64(_mm256_and_si256(word, three), 1);
    __m256i idx =
        _mm256_add_epi64(_mm256_or_si256(two_w, _mm256_slli_epi64(two_w, 32)),
                         _mm256_set1_epi64x(INT64_C(1) << 32));
    __m256i from_lo = _mm256_permutevar8x32_epi32(lo, idx);
    __m256i from_hi = _mm256_permutevar8x32_epi32(hi, idx);
    __m256i upper = _mm256_cmpgt_epi64(word, three);
    return _mm256_blendv_epi8(from_lo, from_hi, upper);
}

/* Bits of positions 4v..4v+3 the block lacks (lanes past k count as
 * present). src holds, lane by lane, the word each position is cut from. */
AVX2_FN __m256i missing4(__m256i lo, __m256i hi, __m256i src, unsigned v,
                         const uint64_t *live) {
    const __m256i shift =
        _mm256_loadu_si256((const __m256i *)(LANE_SHIFT + 4 * v));
    __m256i p = _mm256_and_si256(_mm256_srlv_epi64(src, shift),
                                 _mm256_set1_epi64x(511));
    __m256i bit = _mm256_sllv_epi64(
        _mm256_set1_epi64x(1), _mm256_and_si256(p, _mm256_set1_epi64x(63)));
    bit = _mm256_and_si256(bit,
                           _mm256_loadu_si256((const __m256i *)(live + 4 * v)));
    __m256i word = pick_words(lo, hi, _mm256_srli_epi64(p, 6));
    return _mm256_andnot_si256(word, bit);
}

/* nvec = ceil(k / 4) is a constant at every call site below, so the
 * compiler unrolls this and drops the vectors a small k does not need. */
AVX2_FN bool test_nvec(const uint64_t *blk, uint64_t h, const uint64_t *live,
                       unsigned nvec) {
    __m256i lo = _mm256_loadu_si256((const __m256i *)blk);
    __m256i hi = _mm256_loadu_si256((const __m256i *)(blk + 4));
    uint64_t g = amq__mix64(h);
    __m256i vh = _mm256_set1_epi64x((long long)h);
    __m256i vg = _mm256_set1_epi64x((long long)g);
    /* lanes: [h h h g] [g g g g] [g g g2 g2] [g2 g2 g2 g2] */
    __m256i miss = missing4(lo, hi, _mm256_blend_epi32(vh, vg, 0xc0), 0, live);
    if (nvec > 1)
        miss = _mm256_or_si256(miss, missing4(lo, hi, vg, 1, live));
    if (nvec > 2) {
        __m256i vg2 = _mm256_set1_epi64x((long long)amq__mix64(g));
        miss = _mm256_or_si256(
            miss, missing4(lo, hi, _mm256_blend_epi32(vg, vg2, 0xf0), 2, live));
        if (nvec > 3)
            miss = _mm256_or_si256(miss, missing4(lo, hi, vg2, 3, live));
    }
    return _mm256_testz_si256(miss, miss) != 0;
}

AVX2_FN bool test_avx2_mix(const amq_blocked *b, const uint64_t *blk,
                           uint64_t h) {
    switch ((b->k + 3) / 4) {
    case 1: return test_nvec(blk, h, b->lane_live, 1);
    case 2: return test_nvec(blk, h, b->lane_live, 2);
    case 3: return test_nvec(blk, h, b->lane_live, 3);
    default: return test_nvec(blk, h, b->lane_live, 4);
    }
}

/* Layout 1: the live bits of positions 8v..8v+7 that the block (32-bit
 * words 0-7 in lo, 8-15 in hi) lacks. */
AVX2_FN __m256i salted_missing8(__m256i lo, __m256i hi, __m256i t, unsigned v,
                                const int32_t *live) {
    __m256i prod = _mm256_mullo_epi32(
        t, _mm256_load_si256((const __m256i *)(SALT + 8 * v)));
    /* vpermd reads the low 3 bits of p >> 5 (product bits 28..30); the
     * half is p >> 8, the product's sign bit, which blendv reads. */
    __m256i idx = _mm256_srli_epi32(prod, 28);
    __m256 from_lo = _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(lo, idx));
    __m256 from_hi = _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(hi, idx));
    __m256i word = _mm256_castps_si256(
        _mm256_blendv_ps(from_lo, from_hi, _mm256_castsi256_ps(prod)));
    __m256i bit = _mm256_sllv_epi32(
        _mm256_set1_epi32(1),
        _mm256_and_si256(_mm256_srli_epi32(prod, 23), _mm256_set1_epi32(31)));
    bit = _mm256_and_si256(bit,
                           _mm256_loadu_si256((const __m256i *)(live + 8 * v)));
    return _mm256_andnot_si256(word, bit);
}

AVX2_FN bool test_avx2_salted(const amq_blocked *b, const uint64_t *blk,
                              uint64_t h) {
    __m256i lo = _mm256_loadu_si256((const __m256i *)blk);
    __m256i hi = _mm256_loadu_si256((const __m256i *)(blk + 4));
    __m256i t = _mm256_set1_epi32((int)(uint32_t)h);
    __m256i miss = salted_missing8(lo, hi, t, 0, b->live32);
    if (b->k > 8)
        miss = _mm256_or_si256(miss, salted_missing8(lo, hi, t, 1, b->live32));
    return _mm256_testz_si256(miss, miss) != 0;
}

BLOCKED_KERNEL(kernel_avx2_mix, __attribute__((target("avx2"))), test_avx2_mix)
BLOCKED_KERNEL(kernel_avx2_salted, __attribute__((target("avx2"))),
               test_avx2_salted)

/* ---- AVX-512 ------------------------------------------------------------- */

/* The whole block is one register. Layout 0: eight positions per vector,
 * each lane's word picked by one permute, so k <= 8 is one vector and one
 * test, k <= 16 two; lanes as in the AVX2 code, eight at a time:
 * [h h h g g g g g] [g g g2 g2 g2 g2 g2 g2]. Layout 1: all 16 positions
 * are one vector of 32-bit lanes. */
#define AVX512_FN                                                              \
    __attribute__((target("avx512f,avx2,bmi2"), always_inline)) static inline
#define AVX512_ATTR __attribute__((target("avx512f,avx2,bmi2")))

/* Lanes of positions 8v..8v+7 (within `live`) whose bit the block lacks. */
AVX512_FN __mmask8 missing8(__m512i blk, __m512i src, unsigned v,
                            __mmask8 live) {
    __m512i shift = _mm512_loadu_si512((const void *)(LANE_SHIFT + 8 * v));
    __m512i p =
        _mm512_and_si512(_mm512_srlv_epi64(src, shift), _mm512_set1_epi64(511));
    __m512i word = _mm512_permutexvar_epi64(_mm512_srli_epi64(p, 6), blk);
    __m512i bit = _mm512_sllv_epi64(_mm512_set1_epi64(1),
                                    _mm512_and_si512(p, _mm512_set1_epi64(63)));
    return _mm512_mask_testn_epi64_mask(live, word, bit);
}

AVX512_FN bool block_test_avx512(const uint64_t *blk, uint64_t h,
                                 const uint8_t live[2], bool two) {
    __m512i block = _mm512_loadu_si512((const void *)blk);
    uint64_t g = amq__mix64(h);
    __m512i vh = _mm512_set1_epi64((long long)(h & 0xffffffffu));
    __m512i vg = _mm512_set1_epi64((long long)g);
    __mmask8 miss =
        missing8(block, _mm512_mask_blend_epi64(0xf8, vh, vg), 0, live[0]);
    if (two) {
        __m512i vg2 = _mm512_set1_epi64((long long)amq__mix64(g));
        miss |=
            missing8(block, _mm512_mask_blend_epi64(0xfc, vg, vg2), 1, live[1]);
    }
    return miss == 0;
}

AVX512_FN bool test_avx512_mix1(const amq_blocked *b, const uint64_t *blk,
                                uint64_t h) {
    return block_test_avx512(blk, h, b->live512, false);
}

AVX512_FN bool test_avx512_mix2(const amq_blocked *b, const uint64_t *blk,
                                uint64_t h) {
    return block_test_avx512(blk, h, b->live512, true);
}

/* Layout 1: word p >> 5 by vpermd (which reads the low four bits of the
 * product's top four), bit p & 31 by rotating 1 left by p (vprolvd takes
 * the count mod 32), then one test over the k live lanes. */
AVX512_FN bool test_avx512_salted(const amq_blocked *b, const uint64_t *blk,
                                  uint64_t h) {
    __m512i block = _mm512_loadu_si512((const void *)blk);
    __m512i prod = _mm512_mullo_epi32(_mm512_set1_epi32((int)(uint32_t)h),
                                      _mm512_load_si512((const void *)SALT));
    __m512i word = _mm512_permutexvar_epi32(_mm512_srli_epi32(prod, 28), block);
    __m512i bit =
        _mm512_rolv_epi32(_mm512_set1_epi32(1), _mm512_srli_epi32(prod, 23));
    return _mm512_mask_testn_epi32_mask(b->live16, word, bit) == 0;
}

BLOCKED_KERNEL(kernel_avx512_mix1, AVX512_ATTR, test_avx512_mix1)
BLOCKED_KERNEL(kernel_avx512_mix2, AVX512_ATTR, test_avx512_mix2)
BLOCKED_KERNEL(kernel_avx512_salted, AVX512_ATTR, test_avx512_salted)
#endif

/* The query kernels for b's layout, k and the CPU (AMQ_OPT_SCALAR: the
 * reference). */
static void choose_kernel(amq_blocked *b, const amq_options *opt) {
    bool scalar = opt != NULL && (opt->flags & AMQ_OPT_SCALAR);
    bool salted = b->layout == AMQ_BLOCKED_LAYOUT_SALTED;
    b->o.contains = kernel_ref_one;
    b->batch = kernel_ref_batch;
#ifdef BLOCKED_X86
    if (scalar)
        return;
    if (amq__cpu_has_avx512()) {
        if (salted) {
            b->o.contains = kernel_avx512_salted_one;
            b->batch = kernel_avx512_salted_batch;
        } else {
            b->o.contains =
                b->k > 8 ? kernel_avx512_mix2_one : kernel_avx512_mix1_one;
            b->batch =
                b->k > 8 ? kernel_avx512_mix2_batch : kernel_avx512_mix1_batch;
        }
    } else if (amq__cpu_has_avx2()) {
        b->o.contains = salted ? kernel_avx2_salted_one : kernel_avx2_mix_one;
        b->batch = salted ? kernel_avx2_salted_batch : kernel_avx2_mix_batch;
    }
#else
    (void)scalar;
    (void)salted;
#endif
}

/* ---- construction ------------------------------------------------------- */

/* A blocked filter of nblocks blocks, k positions and the given layout:
 * zeroed and owned, or borrowing `view`. */
static amq_status blocked_alloc(uint64_t nblocks, unsigned k, unsigned layout,
                                const amq_options *opt, const uint8_t *view,
                                amq_blocked **out) {
    amq_blocked *b;
    size_t bytes;
    void *wr;
    if (nblocks == 0 || k == 0 || k > MAX_K ||
        layout > AMQ_BLOCKED_LAYOUT_SALTED)
        return AMQ_ERR_INVALID;
    if (nblocks > MAX_BLOCKS || !amq__mul((size_t)nblocks, BLOCK_BYTES, &bytes))
        return AMQ_ERR_OVERFLOW;
    bool conc = opt != NULL && (opt->flags & AMQ_OPT_CONCURRENT);
    AMQ_RETURN_IF_ERR(amq__obj_new(sizeof *b + (conc ? AMQ__TALLY_ROOM : 0),
                                   opt, (void **)&b));
    b->nblocks = nblocks;
    b->k = k;
    b->layout = layout;
    b->concurrent = conc;
    b->tally = conc ? amq__tally_in(b + 1) : NULL;
    for (unsigned j = 0; j < MAX_K; j++) {
        b->lane_live[j] = j < k ? UINT64_MAX : 0;
        b->live32[j] = j < k ? -1 : 0;
    }
    b->live16 = (uint16_t)((UINT32_C(1) << k) - 1);
    b->live512[0] = (uint8_t)(k >= 8 ? 0xff : (1u << k) - 1);
    b->live512[1] = (uint8_t)(k >= 16 ? 0xff : k > 8 ? (1u << (k - 8)) - 1 : 0);
    choose_kernel(b, opt);
    amq_status st = amq__obj_table(&b->o, bytes, view, &wr);
    if (st != AMQ_OK) {
        amq__obj_free(&b->o);
        return st;
    }
    b->mut = wr;
    b->words = b->o.table;
    *out = b;
    return AMQ_OK;
}

/* ---- updates and queries ------------------------------------------------ */

/* h's bits into its block blk, by the filter's mode. */
static inline void set_in(const amq_blocked *b, uint64_t *blk, uint64_t h) {
    if (b->concurrent)
        block_set_atomic(blk, h, b->k, b->layout);
    else
        block_set(blk, h, b->k, b->layout);
}

static amq_status blocked_add(amq__obj *o, uint64_t h) {
    amq_blocked *b = (amq_blocked *)o;
    set_in(b, b->mut + BLOCK_WORDS * block_of(h, b->nblocks), h);
    amq__fill_count(b->tally, &b->o.items, 1);
    return AMQ_OK;
}

static inline uint64_t fill_block_of(const amq_blocked *b, uint64_t h) {
    return block_of(h, b->nblocks);
}

AMQ__FILL(fill, amq_blocked, uint64_t, BLOCK_WORDS, fill_block_of, set_in)

/* The batch kernel chosen with o.contains (choose_kernel). */
static void blocked_batch(const amq__obj *o, const uint64_t *h, size_t n,
                          uint8_t *out) {
    const amq_blocked *b = (const amq_blocked *)o;
    b->batch(b, h, n, out);
}

/* The adds: the saved count and, in concurrent mode, the threads'. */
static uint64_t blocked_items(const amq__obj *o) {
    const amq_blocked *b = (const amq_blocked *)o;
    return o->items + (b->tally != NULL ? amq__tally_sum(b->tally, 0) : 0);
}

/* dst op= src; the generic layer has checked the type, the hasher and that
 * dst owns its table. */
static amq_status blocked_merge(amq__obj *dst_o, const amq__obj *src_o,
                                amq__merge_op op) {
    amq_blocked *dst = (amq_blocked *)dst_o;
    const amq_blocked *src = (const amq_blocked *)src_o;
    if (dst->nblocks != src->nblocks || dst->k != src->k ||
        dst->layout != src->layout)
        return AMQ_ERR_INCOMPATIBLE;
    size_t nw = (size_t)dst->nblocks * BLOCK_WORDS;
    amq__bits_merge(dst->mut, src->words, nw * sizeof *dst->mut,
                    op == AMQ__INTERSECT);
    dst->o.items = amq__merged_items(blocked_items(dst_o), blocked_items(src_o),
                                     op == AMQ__INTERSECT);
    if (dst->tally != NULL)
        amq__tally_clear(dst->tally, 0);
    return AMQ_OK;
}

uint64_t amq_blocked_blocks(const amq_blocked *b) { return b->nblocks; }
unsigned amq_blocked_k(const amq_blocked *b) { return b->k; }
unsigned amq_blocked_layout(const amq_blocked *b) { return b->layout; }

/* The rate of this very table. A stranger's k positions are independent
 * and uniform over the block's 512 bits (the ideal-hash model, as for the
 * curve; both layouts measure within sampling error of it, see FPR above), so in a block with X bits set all k are set with probability
 * (X / 512)^k, repeats included; the block is picked by multiply-shift,
 * each block by at most ceil(2^s / B) of the 2^s values it is computed
 * from (s = 32, or 64 past 2^32 blocks). So the rate is at most
 *     ceil(2^s / B) / 2^s * sum_X count(X) (X / 512)^k,
 * count(X) the blocks with X bits set. O(B) popcounts. */
static double blocked_bound(const amq__obj *o) {
    static const double two32 = 4294967296.0;
    const amq_blocked *b = (const amq_blocked *)o;
    uint64_t count[BLOCK_BITS + 1];
    double sum = 0.0, per_hash;
    memset(count, 0, sizeof count);
    for (uint64_t j = 0; j < b->nblocks; j++) {
        const uint64_t *w = b->words + j * BLOCK_WORDS;
        unsigned x = 0;
        for (unsigned i = 0; i < BLOCK_WORDS; i++)
            x += amq__popcount64(w[i]);
        count[x]++;
    }
    for (unsigned x = 1; x <= BLOCK_BITS; x++)
        if (count[x] != 0)
            sum += (double)count[x] * pow((double)x / BLOCK_BITS, b->k);
    if (b->nblocks <= UINT32_MAX)
        per_hash = ceil(two32 / (double)b->nblocks) / two32;
    else
        per_hash = ceil(two32 * two32 / (double)b->nblocks) / (two32 * two32);
    double rate = sum * per_hash;
    return rate < 1.0 ? rate : 1.0;
}

/* ---- the generic interface --------------------------------------------- */

static amq_status t_create(const amq__type *self, amq__spec *spec,
                           uint64_t capacity, double fpr,
                           const amq_options *opt, amq__obj **out,
                           amq_diag *diag) {
    uint64_t k = 0, blocks = 0, layout = AMQ_BLOCKED_LAYOUT_SALTED;
    bool has_k, has_blocks;
    unsigned kk;
    (void)self;
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "k", 1, MAX_K, &k, &has_k, diag));
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "layout", AMQ_BLOCKED_LAYOUT_MIX,
                                    AMQ_BLOCKED_LAYOUT_SALTED, &layout, NULL,
                                    diag));
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "blocks", 1, MAX_BLOCKS, &blocks,
                                    &has_blocks, diag));
    kk = (unsigned)k;
    if (!has_blocks) {
        if (capacity == 0)
            return amq__diag(diag, AMQ_ERR_SPEC, 0,
                             "blocked needs a capacity and fpr, or blocks=N");
        amq_status st = shape_for(capacity, fpr, kk, &blocks, &kk);
        if (st != AMQ_OK)
            return amq__diag(diag, st, 0,
                             "blocked cannot meet fpr %g for %llu keys", fpr,
                             (unsigned long long)capacity);
    } else if (!has_k) {
        kk = capacity ? best_k(512.0 * (double)blocks / (double)capacity, NULL)
                      : DEFAULT_K;
    }
    amq_blocked *b;
    AMQ_RETURN_IF_ERR(
        blocked_alloc(blocks, kk, (unsigned)layout, opt, NULL, &b));
    *out = &b->o;
    return AMQ_OK;
}

static size_t t_describe(const amq__obj *o, char *buf, size_t cap) {
    const amq_blocked *b = (const amq_blocked *)o;
    /* layout=0 only where it is not the default, as a spec would say it */
    return amq__describe(
        buf, cap, "blocks=%llu,k=%u%s", (unsigned long long)b->nblocks, b->k,
        b->layout == AMQ_BLOCKED_LAYOUT_MIX ? ",layout=0" : "");
}

static amq_status t_curve(const amq__type *self, amq__spec *spec, double x,
                          bool inverse, double *out, amq_diag *diag) {
    uint64_t k = 0, layout = 0;
    (void)self;
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "k", 1, MAX_K, &k, NULL, diag));
    /* one curve for both layouts (the ideal-hash model; see FPR above) */
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "layout", AMQ_BLOCKED_LAYOUT_MIX,
                                    AMQ_BLOCKED_LAYOUT_SALTED, &layout, NULL,
                                    diag));
    *out = inverse ? bits_for(x, (unsigned)k) : curve_at(x, (unsigned)k);
    return AMQ_OK;
}

/* params: blocks u64 | k u32 | layout u32 | items u64 (the layout word
 * was reserved, 0, before layout 1: older frames are layout 0) */
static void t_params_write(const amq__obj *o, amq__wr *w) {
    const amq_blocked *b = (const amq_blocked *)o;
    amq__wr_u64(w, b->nblocks);
    amq__wr_u32(w, b->k);
    amq__wr_u32(w, b->layout);
    amq__wr_u64(w, blocked_items(o));
}

static amq_status t_load(const amq__type *self, amq__rd *r,
                         const uint8_t *payload, size_t len, bool view,
                         const amq_options *opt, amq__obj **out) {
    uint64_t blocks, items;
    uint32_t k, layout;
    amq_blocked *b;
    (void)self;
    AMQ_RETURN_IF_ERR(amq__rd_expect(r, 24));
    size_t at_blocks = amq__rd_u64(r, &blocks);
    size_t at_k = amq__rd_u32(r, &k);
    size_t at_layout = amq__rd_u32(r, &layout);
    amq__rd_u64(r, &items);
    if (blocks == 0 || blocks > MAX_BLOCKS || len % BLOCK_BYTES != 0 ||
        len / BLOCK_BYTES != blocks)
        return amq__rd_bad(r, at_blocks,
                           "block count %llu does not match a "
                           "%zu-byte payload",
                           (unsigned long long)blocks, len);
    if (k == 0 || k > MAX_K)
        return amq__rd_bad(r, at_k, "bit count k=%u outside 1..%d", k, MAX_K);
    if (layout > AMQ_BLOCKED_LAYOUT_SALTED)
        return amq__rd_bad(r, at_layout,
                           "position layout %u unknown (0: mix, 1: salted)",
                           layout);
    AMQ_RETURN_IF_ERR(
        blocked_alloc(blocks, k, layout, opt, view ? payload : NULL, &b));
    if (!view)
        memcpy(b->mut, payload, len);
    b->o.items = items;
    *out = &b->o;
    return AMQ_OK;
}

/* Shapes beside the defaults that reach the other kernels (test_kernels):
 * blocks of a prime count, the fewest and the most probes. */
static const char *const kernel_shapes[] = {"blocked:blocks=97,k=3",
                                            "blocked:blocks=97,k=12", NULL};

const amq__type amq__type_blocked = {
    .info = {.name = "blocked",
             .type_id = AMQ__ID_blocked,
             .caps = AMQ_CAP_UNION | AMQ_CAP_INTERSECT | AMQ_CAP_CONCURRENT,
             .summary = "cache-line blocked Bloom filter, k bits in one "
                        "512-bit block",
             .params = "k=BITS per key (1-16, default best for the target; "
                       "8 with blocks= and no target), blocks=N (64-byte "
                       "blocks, explicit size instead of capacity/fpr), "
                       "layout=0|1 (bit positions: 1 = one multiply per "
                       "position, the default; 0 = the mix layout of "
                       "frames older readers understand)",
             .default_hash = AMQ_HASH_XXH3},
    .reads = 1,
    .reads_text = "1",
    .kernel_shapes = kernel_shapes,
    .create = t_create,
    .load = t_load,
    .add = blocked_add,
    .add_batch = fill_add_batch, /* fill.h: by block, on the build's threads */
    .contains = kernel_ref_one,
    .contains_batch = blocked_batch,
    .merge = blocked_merge,
    .fpr_bound = blocked_bound,
    .items = blocked_items,
    .describe = t_describe,
    .curve = t_curve,
    .params_write = t_params_write,
};
