/*
 * counters.c — the counter array behind counting.c and spectral.c (layouts,
 * invariants and saturation rule in counters.h).
 *
 * Every update and query has one reference form, a loop over
 * amq__ctr_probe (the layout's global counter index) and the packed
 * get/set. The blocked layout adds kernels that read the key's one block
 * directly: AVX-512 (the block is one register: one vpmulld gives all k
 * in-block indices, vpermd picks each index's 32-bit word, a variable
 * shift brings the counter down and one masked test over the k live lanes
 * answers), AVX2 (the block in two registers, as blocked.c does it) and a
 * prefetching batch around each. They are chosen when the array is made
 * or loaded (AMQ_OPT_SCALAR keeps the reference) and test_kernels holds
 * them to the reference's answers.
 *
 * The in-block index of probe j is the top log2(C) bits of t·SALT_j mod
 * 2^32 (t the low half of the hash). The salts are splitmix64 outputs from
 * seed 0x616d712d636e74 ("amq-cnt"), high halves forced odd, each kept
 * only if the lattice {(u·SALT_i, u·SALT_j) mod 2^32} with every earlier
 * salt has no vector shorter than 2^14 in the max norm (the least over the
 * 120 pairs is 17078): no pair of probes crowds onto a few lines of the
 * C × C grid, the criterion blocked.c's salts meet (test_counting
 * re-checks it).
 */
#include <math.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CTR_X86 1
#endif

#include "amq/bloom.h"
#include "bloom/counters.h"
#include "core/fpr.h"

#define CTR_BATCH 16
#define CTR_AHEAD 24 /* keys prefetched ahead by the blocked batches */
/* Fixed seed of the probe multipliers ("counting" in ASCII). Part of the
 * file format: never edit. */
#define CTR_MUL_SEED 0x636f756e74696e67ULL
#define CTR_MAX_M (UINT64_C(1) << 58)
#define CTR_BLOCK_BYTES 64

/* Part of the file format: never edit (see the essay above). */
const uint32_t amq__ctr_salt[AMQ__CTR_BLOCK_MAX_K] __attribute__((
    aligned(64))) = {0xe732b5cbu, 0xac116dd5u, 0xe0172611u, 0x7f3826e7u,
                     0x03db78d1u, 0x87382ce1u, 0x108dc529u, 0x303734dfu,
                     0xeb78f761u, 0x38b11581u, 0xb04bb1b3u, 0xc6731c17u,
                     0x81a39f21u, 0x4e18c191u, 0x13713195u, 0x2842f6a9u};

static uint64_t splitmix64(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static unsigned log2_width(unsigned width) {
    switch (width) {
    case 4: return 2;
    case 8: return 3;
    case 16: return 4;
    case 32: return 5;
    default: return 0;
    }
}

/* Counters per 64-byte block at a width. */
static uint64_t per_block(unsigned width) { return 512u / width; }

static void choose_kernels(amq__ctr *c, const amq_options *opt);

amq_status amq__ctr_new(size_t self_bytes, uint64_t m, unsigned width,
                        unsigned k, unsigned layout, const amq_options *opt,
                        const uint64_t *borrow, amq__ctr **out) {
    unsigned lw = log2_width(width);
    uint64_t per, state = CTR_MUL_SEED;
    amq__ctr *c;
    void *wr;
    bool blocked = layout == AMQ__CTR_BLOCKED;
    if (m == 0 || lw == 0 || k == 0 || k > AMQ__CTR_MAX_K ||
        layout > AMQ__CTR_BLOCKED || (blocked && k > AMQ__CTR_BLOCK_MAX_K))
        return AMQ_ERR_INVALID;
    if (m > CTR_MAX_M)
        return AMQ_ERR_OVERFLOW;
    per = blocked ? per_block(width) : 64u / width;
    m = (m + per - 1) / per * per;
    per = 64u / width;
    if (m / per > SIZE_MAX / 8)
        return AMQ_ERR_OVERFLOW;
    AMQ_RETURN_IF_ERR(amq__obj_new(self_bytes, opt, (void **)&c));
    c->m = m;
    c->width = width;
    c->lw = lw;
    c->k = k;
    c->layout = layout;
    c->bshift = 23 + lw; /* 32 - log2(512 / width) */
    c->nblocks = m / per_block(width);
    c->max = (UINT64_C(1) << width) - 1;
    c->live16 = (uint16_t)((UINT32_C(1) << (k < 16 ? k : 16)) - 1);
    for (unsigned j = 0; j < AMQ__CTR_BLOCK_MAX_K; j++)
        c->live32[j] = j < k ? -1 : 0;
    for (unsigned j = 0; j < k; j++)
        c->mul[j] = splitmix64(&state) | 1u;
    amq_status st = amq__obj_table(&c->o, (size_t)(m / per) * 8, borrow, &wr);
    if (st != AMQ_OK) {
        amq__obj_free(&c->o);
        return st;
    }
    c->words = borrow != NULL ? (uint64_t *)borrow : wr;
    choose_kernels(c, opt);
    *out = c;
    return AMQ_OK;
}

/* ---- updates and queries: the reference --------------------------------- */

/* Blocked: the block found once (the fast path); classic, and under
 * AMQ_OPT_SCALAR, the reference loop over amq__ctr_probe. */
static void add_one(amq__ctr *c, uint64_t h) {
    if (c->layout == AMQ__CTR_BLOCKED && !c->reference) {
        uint64_t *blk = amq__ctr_block_at(c, h);
        for (unsigned j = 0; j < c->k; j++)
            amq__ctr_block_inc(c, blk, amq__ctr_slot(c, h, j));
    } else {
        for (unsigned j = 0; j < c->k; j++)
            amq__ctr_inc(c, amq__ctr_probe(c, h, j));
    }
    c->o.items++;
}

amq_status amq__ctr_add(amq__obj *o, uint64_t h) {
    add_one((amq__ctr *)o, h);
    return AMQ_OK;
}

/* Where key h's counters live, prefetched for writing: its block, or its
 * k words. */
static inline void prefetch_key_w(const amq__ctr *c, uint64_t h) {
    if (c->layout == AMQ__CTR_BLOCKED) {
        amq__prefetch_w(c->words + AMQ__CTR_BLOCK_WORDS * amq__ctr_block(c, h));
        return;
    }
    for (unsigned j = 0; j < c->k; j++)
        amq__prefetch_w(amq__ctr_word(c, amq__ctr_probe(c, h, j)));
}

void amq__ctr_add_batch_with(amq__ctr *c, const uint64_t *h, size_t n,
                             void (*add)(amq__ctr *c, uint64_t h)) {
    /* classic keys touch k lines each: fewer of them in flight */
    size_t ahead = c->layout == AMQ__CTR_BLOCKED ? CTR_AHEAD : 4;
    size_t first = n < ahead ? n : ahead, i = 0;
    for (size_t j = 0; j < first; j++)
        prefetch_key_w(c, h[j]);
    for (; i + ahead < n; i++) {
        prefetch_key_w(c, h[i + ahead]);
        add(c, h[i]);
    }
    for (; i < n; i++)
        add(c, h[i]);
}

amq_status amq__ctr_add_batch(amq__obj *o, const uint64_t *h, size_t n,
                              size_t *done) {
    amq__ctr_add_batch_with((amq__ctr *)o, h, n, add_one);
    *done = n;
    return AMQ_OK;
}

/* Decrement every probe; at the first zero, put back what was taken (probes
 * may repeat, so the check must happen while decrementing). Saturated
 * counters are left alone both ways. */
amq_status amq__ctr_remove(amq__obj *o, uint64_t h) {
    amq__ctr *c = (amq__ctr *)o;
    uint32_t taken = 0;
    for (unsigned j = 0; j < c->k; j++) {
        uint64_t i = amq__ctr_probe(c, h, j), v = amq__ctr_get(c, i);
        if (v == 0) {
            for (unsigned t = 0; t < j; t++)
                if (taken & (UINT32_C(1) << t))
                    amq__ctr_inc(c, amq__ctr_probe(c, h, t));
            return AMQ_ERR_NOT_FOUND;
        }
        if (v == c->max)
            continue;
        amq__ctr_set(c, i, v - 1);
        c->nonzero -= v == 1;
        taken |= UINT32_C(1) << j;
    }
    c->o.items--;
    return AMQ_OK;
}

uint64_t amq__ctr_min(const amq__ctr *c, uint64_t h) {
    uint64_t lo = c->max;
    for (unsigned j = 0; j < c->k && lo != 0; j++) {
        uint64_t v = amq__ctr_get(c, amq__ctr_probe(c, h, j));
        lo = v < lo ? v : lo;
    }
    return lo;
}

amq_status amq__ctr_count(const amq__obj *o, uint64_t h, uint64_t *out) {
    const amq__ctr *c = (const amq__ctr *)o;
    uint64_t lo = amq__ctr_min(c, h);
    *out = lo == c->max ? UINT64_MAX : lo;
    return AMQ_OK;
}

bool amq__ctr_contains(const amq__obj *o, uint64_t h) {
    const amq__ctr *c = (const amq__ctr *)o;
    for (unsigned j = 0; j < c->k; j++)
        if (amq__ctr_get(c, amq__ctr_probe(c, h, j)) == 0)
            return false;
    return true;
}

/* Classic batch: prefetch every probe's word of a group of keys before
 * testing any of them, so their misses overlap. */
static void classic_batch(const amq__ctr *c, const uint64_t *h, size_t n,
                          uint8_t *out) {
    size_t i = 0;
    for (; i + CTR_BATCH <= n; i += CTR_BATCH) {
        for (size_t j = 0; j < CTR_BATCH; j++)
            for (unsigned p = 0; p < c->k; p++)
                amq__prefetch(amq__ctr_word(c, amq__ctr_probe(c, h[i + j], p)));
        for (size_t j = 0; j < CTR_BATCH; j++)
            out[i + j] = amq__ctr_contains(&c->o, h[i + j]);
    }
    for (; i < n; i++)
        out[i] = amq__ctr_contains(&c->o, h[i]);
}

/* The reference for a blocked shape under AMQ_OPT_SCALAR: no prefetch. */
static void reference_batch(const amq__ctr *c, const uint64_t *h, size_t n,
                            uint8_t *out) {
    for (size_t i = 0; i < n; i++)
        out[i] = amq__ctr_contains(&c->o, h[i]);
}

void amq__ctr_contains_batch(const amq__obj *o, const uint64_t *h, size_t n,
                             uint8_t *out) {
    const amq__ctr *c = (const amq__ctr *)o;
    c->batch(c, h, n, out);
}

/* ---- blocked kernels ---------------------------------------------------- */

static inline const uint64_t *block_ptr(const amq__ctr *c, uint64_t h) {
    return c->words + AMQ__CTR_BLOCK_WORDS * amq__ctr_block(c, h);
}

/* A kernel's two entry points around one block test: the single query
 * (amq__obj.contains) and the batch, which prefetches the block CTR_AHEAD
 * keys before it is tested. */
#define CTR_KERNEL(name, attrs, test)                                          \
    attrs static bool name##_one(const amq__obj *o, uint64_t h) {              \
        const amq__ctr *c = (const amq__ctr *)o;                               \
        return test(c, block_ptr(c, h), h);                                    \
    }                                                                          \
    attrs static void name##_batch(const amq__ctr *c, const uint64_t *h,       \
                                   size_t n, uint8_t *out) {                   \
        size_t ahead = n < CTR_AHEAD ? n : CTR_AHEAD, i = 0;                   \
        for (size_t j = 0; j < ahead; j++)                                     \
            amq__prefetch(block_ptr(c, h[j]));                                 \
        for (; i + CTR_AHEAD < n; i++) {                                       \
            amq__prefetch(block_ptr(c, h[i + CTR_AHEAD]));                     \
            out[i] = test(c, block_ptr(c, h[i]), h[i]);                        \
        }                                                                      \
        for (; i < n; i++)                                                     \
            out[i] = test(c, block_ptr(c, h[i]), h[i]);                        \
    }

/* Portable: the k counters read from the block in turn. */
static inline bool test_portable(const amq__ctr *c, const uint64_t *blk,
                                 uint64_t h) {
    for (unsigned j = 0; j < c->k; j++)
        if (amq__ctr_block_get(c, blk, amq__ctr_slot(c, h, j)) == 0)
            return false;
    return true;
}

CTR_KERNEL(kernel_portable, , test_portable)

#ifdef CTR_X86
/* In 32-bit words: probe p's word is the product's top four bits (p >>
 * (5 - lw) with p = prod >> (23 + lw)), its shift in that word the next
 * bits down, (prod >> 23) & (32 - width) (the low 5 - lw bits of p, times
 * the width). */
#define AVX2_FN __attribute__((target("avx2"), always_inline)) static inline

/* Lanes 8v..8v+7: all-ones where probe 8v + j's counter is zero (live or
 * not: the caller masks). */
AVX2_FN __m256i avx2_zero8(__m256i lo, __m256i hi, __m256i t, unsigned v,
                           __m256i shm, __m256i max) {
    __m256i prod = _mm256_mullo_epi32(
        t, _mm256_load_si256((const __m256i *)(amq__ctr_salt + 8 * v)));
    __m256i idx = _mm256_srli_epi32(prod, 28);
    __m256 from_lo = _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(lo, idx));
    __m256 from_hi = _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(hi, idx));
    /* the word's half is bit 3 of idx: the product's sign, blendv's pick */
    __m256i word = _mm256_castps_si256(
        _mm256_blendv_ps(from_lo, from_hi, _mm256_castsi256_ps(prod)));
    __m256i sh = _mm256_and_si256(_mm256_srli_epi32(prod, 23), shm);
    __m256i val = _mm256_and_si256(_mm256_srlv_epi32(word, sh), max);
    return _mm256_cmpeq_epi32(val, _mm256_setzero_si256());
}

/* two = k > 8: a constant at each call site below. */
AVX2_FN bool avx2_test(const amq__ctr *c, const uint64_t *blk, uint64_t h,
                       bool two) {
    __m256i lo = _mm256_loadu_si256((const __m256i *)blk);
    __m256i hi = _mm256_loadu_si256((const __m256i *)(blk + 4));
    __m256i t = _mm256_set1_epi32((int)(uint32_t)h);
    __m256i shm = _mm256_set1_epi32((int)(32 - c->width));
    __m256i max = _mm256_set1_epi32((int)(uint32_t)c->max);
    __m256i zero =
        _mm256_and_si256(avx2_zero8(lo, hi, t, 0, shm, max),
                         _mm256_loadu_si256((const __m256i *)c->live32));
    if (two)
        zero = _mm256_or_si256(
            zero, _mm256_and_si256(
                      avx2_zero8(lo, hi, t, 1, shm, max),
                      _mm256_loadu_si256((const __m256i *)(c->live32 + 8))));
    return _mm256_testz_si256(zero, zero) != 0;
}

AVX2_FN bool test_avx2_k8(const amq__ctr *c, const uint64_t *blk, uint64_t h) {
    return avx2_test(c, blk, h, false);
}

AVX2_FN bool test_avx2_k16(const amq__ctr *c, const uint64_t *blk, uint64_t h) {
    return avx2_test(c, blk, h, true);
}

CTR_KERNEL(kernel_avx2_k8, __attribute__((target("avx2"))), test_avx2_k8)
CTR_KERNEL(kernel_avx2_k16, __attribute__((target("avx2"))), test_avx2_k16)

#define AVX512_FN                                                              \
    __attribute__((target("avx512f,avx2"), always_inline)) static inline
#define AVX512_ATTR __attribute__((target("avx512f,avx2")))

AVX512_FN bool test_avx512(const amq__ctr *c, const uint64_t *blk, uint64_t h) {
    __m512i block = _mm512_loadu_si512((const void *)blk);
    __m512i prod =
        _mm512_mullo_epi32(_mm512_set1_epi32((int)(uint32_t)h),
                           _mm512_load_si512((const void *)amq__ctr_salt));
    __m512i word = _mm512_permutexvar_epi32(_mm512_srli_epi32(prod, 28), block);
    __m512i sh = _mm512_and_si512(_mm512_srli_epi32(prod, 23),
                                  _mm512_set1_epi32((int)(32 - c->width)));
    __m512i val = _mm512_srlv_epi32(word, sh);
    return _mm512_mask_testn_epi32_mask(
               c->live16, val, _mm512_set1_epi32((int)(uint32_t)c->max)) == 0;
}

CTR_KERNEL(kernel_avx512, AVX512_ATTR, test_avx512)
#endif

static void choose_kernels(amq__ctr *c, const amq_options *opt) {
    bool scalar = opt != NULL && (opt->flags & AMQ_OPT_SCALAR);
    c->reference = scalar;
    if (c->layout != AMQ__CTR_BLOCKED) {
        c->o.contains = amq__ctr_contains;
        c->batch = scalar ? reference_batch : classic_batch;
        return;
    }
#ifdef CTR_X86
    bool two = c->k > 8;
    amq__contains_fn avx2_one = two ? kernel_avx2_k16_one : kernel_avx2_k8_one;
    c->o.contains =
        amq__obj_pick(scalar, amq__ctr_contains, avx2_one, kernel_avx512_one);
    if (c->o.contains == kernel_avx512_one)
        c->batch = kernel_avx512_batch;
    else if (c->o.contains == avx2_one)
        c->batch = two ? kernel_avx2_k16_batch : kernel_avx2_k8_batch;
    else
        c->batch = scalar ? reference_batch : kernel_portable_batch;
    if (!scalar && c->o.contains == amq__ctr_contains)
        c->o.contains = kernel_portable_one;
#else
    c->o.contains = scalar ? amq__ctr_contains : kernel_portable_one;
    c->batch = scalar ? reference_batch : kernel_portable_batch;
#endif
}

/* ---- merge, estimate, bound --------------------------------------------- */

static void recount(amq__ctr *c) {
    c->nonzero = 0;
    c->saturated = 0;
    for (uint64_t i = 0; i < c->m; i++) {
        uint64_t v = amq__ctr_get(c, i);
        c->nonzero += v != 0;
        c->saturated += v == c->max;
    }
}

amq_status amq__ctr_merge(amq__obj *dst, const amq__obj *src,
                          amq__merge_op op) {
    amq__ctr *d = (amq__ctr *)dst;
    const amq__ctr *s = (const amq__ctr *)src;
    (void)op; /* union only: the caps keep intersect away */
    if (d->m != s->m || d->k != s->k || d->width != s->width ||
        d->layout != s->layout)
        return AMQ_ERR_INCOMPATIBLE;
    for (uint64_t i = 0; i < d->m; i++) {
        uint64_t v = amq__ctr_get(d, i) + amq__ctr_get(s, i);
        amq__ctr_set(d, i, v < d->max ? v : d->max);
    }
    recount(d);
    /* Adds minus removes of both sides: the union's multiset size. */
    d->o.items = amq__sat_add64(d->o.items, s->o.items);
    return AMQ_OK;
}

/* Nonzero counters in one 64-bit word: fold each field onto its low bit. */
static unsigned word_nonzero(uint64_t w, unsigned width) {
    uint64_t low = UINT64_MAX / ((UINT64_C(1) << (width - 1)) * 2 - 1);
    for (unsigned s = 1; s < width; s <<= 1)
        w |= w >> s;
    return amq__popcount64(w & low);
}

/* count[x]: blocks with x nonzero counters (x <= C). */
static void block_histogram(const amq__ctr *c, uint64_t *count) {
    uint64_t per = per_block(c->width);
    memset(count, 0, (per + 1) * sizeof *count);
    for (uint64_t b = 0; b < c->nblocks; b++) {
        const uint64_t *w = c->words + AMQ__CTR_BLOCK_WORDS * b;
        unsigned x = 0;
        for (unsigned i = 0; i < AMQ__CTR_BLOCK_WORDS; i++)
            x += word_nonzero(w[i], c->width);
        count[x]++;
    }
}

/* A stranger's k in-block probes are independent and uniform over the
 * block's C counters (the ideal-hash model the curve uses; the salts'
 * lattices keep pairs spread, test_counting measures the rate), so a block
 * with X nonzero counters answers yes with probability (X/C)^k, repeats
 * included; each block is picked by at most ceil(2^s / B) of the 2^s values
 * of the hash it is reduced from (s = 32, or 64 past 2^32 blocks). */
static double blocked_bound(const amq__ctr *c) {
    static const double two32 = 4294967296.0;
    uint64_t count[129];
    double per = (double)per_block(c->width), sum = 0.0, per_hash;
    block_histogram(c, count);
    for (unsigned x = 1; x <= per; x++)
        if (count[x] != 0)
            sum += (double)count[x] * pow((double)x / per, (double)c->k);
    if (c->nblocks <= UINT32_MAX)
        per_hash = ceil(two32 / (double)c->nblocks) / two32;
    else
        per_hash = ceil(two32 * two32 / (double)c->nblocks) / (two32 * two32);
    double rate = sum * per_hash;
    return rate < 1.0 ? rate : 1.0;
}

double amq__ctr_fpr_bound(const amq__obj *o) {
    const amq__ctr *c = (const amq__ctr *)o;
    if (c->layout == AMQ__CTR_BLOCKED)
        return blocked_bound(c);
    return pow((double)c->nonzero / (double)c->m, (double)c->k);
}

amq_status amq__ctr_estimate(const amq__obj *o, double *out) {
    const amq__ctr *c = (const amq__ctr *)o;
    if (c->layout == AMQ__CTR_BLOCKED) {
        uint64_t count[129];
        double per = (double)per_block(c->width), sum = 0.0;
        block_histogram(c, count);
        if (count[(unsigned)per] != 0) {
            *out = INFINITY;
            return AMQ_OK;
        }
        for (unsigned x = 1; x < per; x++)
            sum += (double)count[x] * -(per / (double)c->k) *
                   log1p(-(double)x / per);
        *out = sum;
        return AMQ_OK;
    }
    double m = (double)c->m, x = (double)c->nonzero;
    *out = c->nonzero >= c->m ? INFINITY : -(m / (double)c->k) * log1p(-x / m);
    return AMQ_OK;
}

/* ---- sizing and curve --------------------------------------------------- */

/* Classic, in cells (counters) per key. */
static unsigned classic_best_k(double cells) {
    return amq__best_probes(cells, AMQ__CTR_MAX_K);
}

/* Blocked: the rate of blocks of `per` counters at `cells` counters per
 * key and k probes: blocked Bloom's model (the Poisson load of a block,
 * repeated probes counted exactly) with counters for bits. */
static double blocked_fpr(double cells, unsigned k, double per) {
    return amq_blocked_fpr(cells, k, (unsigned)per);
}

static unsigned blocked_best_k(double cells, double per, double *fpr) {
    unsigned best = 1;
    double lowest = 2.0;
    for (unsigned k = 1; k <= AMQ__CTR_BLOCK_MAX_K; k++) {
        double f = blocked_fpr(cells, k, per);
        if (f < lowest) {
            lowest = f;
            best = k;
        }
    }
    if (fpr != NULL)
        *fpr = lowest;
    return best;
}

/* The best k at m counters for capacity keys, in the layout. */
static unsigned best_k_for(uint64_t m, uint64_t capacity, unsigned width,
                           unsigned layout) {
    double cells = (double)m / (double)capacity;
    if (layout == AMQ__CTR_BLOCKED)
        return blocked_best_k(cells, (double)per_block(width), NULL);
    return classic_best_k(cells);
}

double amq__ctr_curve_fpr(double bits, unsigned width, unsigned layout,
                          unsigned k) {
    double cells = bits / (double)width, f;
    if (layout != AMQ__CTR_BLOCKED)
        return amq__fpr_probes(cells, k ? k : classic_best_k(cells));
    if (k != 0)
        return blocked_fpr(cells, k, (double)per_block(width));
    blocked_best_k(cells, (double)per_block(width), &f);
    return f;
}

double amq__ctr_curve_bits(double fpr, unsigned width, unsigned layout,
                           unsigned k) {
    double lo = 1e-3, hi = 16.0;
    if (layout != AMQ__CTR_BLOCKED)
        return width * amq__cells_for(fpr, k, AMQ__CTR_MAX_K);
    while (amq__ctr_curve_fpr(hi, width, layout, k) > fpr && hi < 1e7)
        hi *= 2.0;
    for (int i = 0; i < 100 && hi - lo > 1e-9 * hi; i++) {
        double mid = 0.5 * (lo + hi);
        if (amq__ctr_curve_fpr(mid, width, layout, k) <= fpr)
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

/* Fewest blocks meeting fpr at n keys with k probes (bisection on the
 * monotone curve); 0 if even the largest array falls short. */
static uint64_t blocks_needed(double n, double fpr, unsigned k, double per) {
    uint64_t lo = 1, hi = CTR_MAX_M / (uint64_t)per;
    if (blocked_fpr(per * (double)hi / n, k, per) > fpr)
        return 0;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (blocked_fpr(per * (double)mid / n, k, per) <= fpr)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* m and k (k = 0 on entry: chosen) for capacity keys at fpr. Blocked:
 * the smallest array over every k in 1..16 (or the given one), ties to
 * the smaller k. */
static amq_status size_for(uint64_t capacity, double fpr, unsigned width,
                           unsigned layout, unsigned *k, uint64_t *m) {
    if (capacity == 0 || !(fpr > 0.0 && fpr < 1.0))
        return AMQ_ERR_INVALID;
    if (layout == AMQ__CTR_BLOCKED) {
        double per = (double)per_block(width);
        uint64_t best = 0;
        unsigned first = *k ? *k : 1, last = *k ? *k : AMQ__CTR_BLOCK_MAX_K;
        for (unsigned kk = first; kk <= last; kk++) {
            uint64_t nb = blocks_needed((double)capacity, fpr, kk, per);
            if (nb != 0 && (best == 0 || nb < best)) {
                best = nb;
                *k = kk;
            }
        }
        if (best == 0)
            return AMQ_ERR_OVERFLOW;
        *m = best * (uint64_t)per;
        return AMQ_OK;
    }
    double cells = amq__cells_for(fpr, *k, AMQ__CTR_MAX_K);
    double mm = ceil(cells * (double)capacity);
    if (!(mm <= (double)CTR_MAX_M))
        return AMQ_ERR_OVERFLOW;
    *m = (uint64_t)mm;
    if (*k == 0)
        *k = classic_best_k(cells);
    return AMQ_OK;
}

amq_status amq__ctr_spec_layout(amq__spec *spec, unsigned width,
                                unsigned *layout, amq_diag *diag) {
    *layout = width <= 8 ? AMQ__CTR_BLOCKED : AMQ__CTR_CLASSIC;
    for (size_t i = 0; i < spec->nkv; i++) {
        amq__spec_kv *kv = &spec->kv[i];
        if (strcmp(kv->key, "layout") != 0)
            continue;
        kv->used = true;
        if (strcmp(kv->val, "blocked") == 0)
            *layout = AMQ__CTR_BLOCKED;
        else if (strcmp(kv->val, "classic") == 0)
            *layout = AMQ__CTR_CLASSIC;
        else
            return amq__diag(diag, AMQ_ERR_SPEC, kv->offset,
                             "'layout' must be blocked or classic, got '%s'",
                             kv->val);
    }
    return AMQ_OK;
}

/* k= of a spec, within the layout's range. */
static amq_status spec_k(amq__spec *spec, unsigned layout, unsigned *k,
                         amq_diag *diag) {
    uint64_t kk = 0;
    bool has_k;
    AMQ_RETURN_IF_ERR(
        amq__spec_u64(spec, "k", 1, AMQ__CTR_MAX_K, &kk, &has_k, diag));
    if (has_k && layout == AMQ__CTR_BLOCKED && kk > AMQ__CTR_BLOCK_MAX_K)
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "k=%llu: the blocked layout takes 1-16 probes "
                         "(layout=classic for more)",
                         (unsigned long long)kk);
    *k = (unsigned)kk;
    return AMQ_OK;
}

amq_status amq__ctr_spec_shape(amq__spec *spec, uint64_t capacity, double fpr,
                               unsigned width, unsigned layout, unsigned *k,
                               uint64_t *m, const char *name, amq_diag *diag) {
    uint64_t mm = 0;
    bool has_m;
    AMQ_RETURN_IF_ERR(spec_k(spec, layout, k, diag));
    AMQ_RETURN_IF_ERR(
        amq__spec_u64(spec, "m", 1, CTR_MAX_M, &mm, &has_m, diag));
    if (!has_m) {
        if (capacity == 0)
            return amq__diag(diag, AMQ_ERR_SPEC, 0,
                             "%s needs a capacity and fpr, or m=COUNTERS",
                             name);
        return size_for(capacity, fpr, width, layout, k, m);
    }
    if (*k == 0)
        *k = capacity ? best_k_for(mm, capacity, width, layout) : 7;
    *m = mm;
    return AMQ_OK;
}

amq_status amq__ctr_curve(amq__spec *spec, unsigned width, double x,
                          bool inverse, double *out, amq_diag *diag) {
    unsigned layout, k = 0;
    AMQ_RETURN_IF_ERR(amq__ctr_spec_layout(spec, width, &layout, diag));
    AMQ_RETURN_IF_ERR(spec_k(spec, layout, &k, diag));
    *out = inverse ? amq__ctr_curve_bits(x, width, layout, k)
                   : amq__ctr_curve_fpr(x, width, layout, k);
    return AMQ_OK;
}

/* ---- serialisation ------------------------------------------------------ */

void amq__ctr_params_write(const amq__obj *o, amq__wr *w) {
    const amq__ctr *c = (const amq__ctr *)o;
    amq__wr_u64(w, c->m);
    amq__wr_u32(w, c->k);
    amq__wr_u32(w, c->width);
    amq__wr_u64(w, c->o.items);
}

amq_status amq__ctr_params_read(amq__rd *r, uint64_t width_ok,
                                amq__ctr_shape *s) {
    uint64_t m;
    uint32_t k, w;
    s->at_m = amq__rd_u64(r, &m);
    s->at_k = amq__rd_u32(r, &k);
    size_t at_w = amq__rd_u32(r, &w);
    amq__rd_u64(r, &s->items);
    if (w >= 64 || log2_width(w) == 0 || !(width_ok & (UINT64_C(1) << w)))
        return amq__rd_bad(r, at_w, "counter width %u not allowed", w);
    if (k == 0 || k > AMQ__CTR_MAX_K)
        return amq__rd_bad(r, s->at_k, "probe count %u out of range", k);
    s->m = m;
    s->k = k;
    s->width = w;
    s->layout = AMQ__CTR_CLASSIC;
    return AMQ_OK;
}

amq_status amq__ctr_layout_read(amq__rd *r, amq__ctr_shape *s) {
    uint32_t layout;
    size_t at = amq__rd_u32(r, &layout);
    if (layout > AMQ__CTR_BLOCKED)
        return amq__rd_bad(r, at,
                           "counter layout %u unknown (0: classic, 1: "
                           "blocked)",
                           layout);
    s->layout = layout;
    return AMQ_OK;
}

amq_status amq__ctr_shape_check(const amq__rd *r, size_t payload_len,
                                const amq__ctr_shape *s) {
    bool blocked = s->layout == AMQ__CTR_BLOCKED;
    uint64_t unit = blocked ? per_block(s->width) : 64u / s->width;
    if (blocked && s->k > AMQ__CTR_BLOCK_MAX_K)
        return amq__rd_bad(
            r, s->at_k, "probe count %u: the blocked layout takes 1-16", s->k);
    if (s->m == 0 || s->m > CTR_MAX_M || s->m % unit != 0 ||
        s->m / (64u / s->width) != payload_len / 8 || payload_len % 8 != 0)
        return amq__rd_bad(r, s->at_m,
                           "%llu counters of %u bits do not match "
                           "a %zu-byte payload%s",
                           (unsigned long long)s->m, s->width, payload_len,
                           blocked ? " of whole 64-byte blocks" : "");
    return AMQ_OK;
}

amq_status amq__ctr_open(size_t self_bytes, const amq__ctr_shape *s,
                         const uint8_t *payload, size_t len, bool view,
                         const amq_options *opt, amq__ctr **out) {
    amq__ctr *c;
    AMQ_RETURN_IF_ERR(amq__ctr_new(self_bytes, s->m, s->width, s->k, s->layout,
                                   opt, view ? (const uint64_t *)payload : NULL,
                                   &c));
    if (!view)
        memcpy(c->words, payload, len);
    c->o.items = s->items;
    recount(c);
    *out = c;
    return AMQ_OK;
}
