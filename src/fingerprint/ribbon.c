/*
 * ribbon.c — Ribbon filters: bumped Ribbon (BuRR) by default, standard
 * Ribbon on request. Sources: P. C. Dillinger, S. Walzer, "Ribbon filter:
 * practically smaller than Bloom and Xor" (2021); P. C. Dillinger,
 * L. Hübschle-Schneider, P. Sanders, S. Walzer, "Fast Succinct Retrieval
 * and Approximate Membership using Ribbon", SEA 2022 (BuRR).
 *
 * One layer. A key's mixed hash x gives a start row s in [0, m - W] (band
 * width W = 64, or 128), a W-bit coefficient row c with bit 0 set and a
 * fingerprint f. The layer stores a solution S (m rows, one bit per
 * column) such that for every key it holds and every column j it checks,
 *
 *     parity(c & S_j[s .. s+W-1]) == bit j of f.
 *
 * A key never added matches one column with probability 1/2 (its f is
 * independent of S, s and c), so with r columns its rate is exactly 2^-r.
 * Banding is on-the-fly Gaussian elimination: at row s an empty row takes
 * the equation; otherwise xor that row in, skip to the new lowest set bit,
 * go on. A row is only ever written while empty, so forgetting the last
 * equations inserted is clearing the rows they took (bumping relies on it).
 *
 * Standard Ribbon (bump=0) is one such layer with m a little above n; one
 * key that reduces to 0 = 1 fails the whole attempt, so m must leave room
 * for the most crowded window: ~11% more rows than keys at W = 64 and ~4%
 * at W = 128 for 10^6 keys, growing with log n (rb_overhead).
 *
 * Bumped Ribbon lets keys fail. Layer 0 gets fewer rows than keys (0.97 n
 * at W = 64, 0.99 n at W = 128). Its starts are cut into buckets of B
 * (128 at W = 64, 256 at W = 128). Keys are banded bucket by bucket in
 * start order and, inside a bucket, from the highest offset down. When a
 * key at offset o fails, the bucket's threshold becomes the least of
 * {0, t1, t2, B} above o and every key of the bucket below it is "bumped":
 * those already banded were the last ones inserted, so their rows are
 * cleared again. A 2-bit code per bucket names the threshold. Bumped keys
 * (~3%) are the next layer's keys, with their own seed; a layer of fewer
 * than RB_BUMP_MIN keys (or the eighth) is a standard layer sized
 * generously and retried with new seeds if it fails.
 *
 *   layer 0  [ 0.97 n0 rows x r(+1) columns ]  codes: 2 bits / bucket
 *   layer 1  [ 0.97 n1 rows                 ]  codes      (n1 ~ 3% n0)
 *     ...
 *   last     [ ~1.05 nL + W + 64 rows       ]  no codes   (nL < 1024)
 *
 * Query: x0 = mix(h + seed0); in layer i, if the layer has codes and s's
 * offset in its bucket is below the bucket's threshold, go on to layer i+1
 * with x(i+1) = mix(xi + seed(i+1)); otherwise check layer i's columns.
 * Exactly one layer is checked. Empty rows cost ~0.15% and the codes 2/B
 * bits per row: at 10^6 and 10^7 keys a filter takes 1.0017 (W = 64) or
 * 1.0014 (W = 128) rows per key plus the codes, 0.2-0.4% above the
 * solution bits per key (docs/structures.md, "Ribbon"). The price is banding
 * time: a key's elimination walks from its start to the first free row,
 * ~20 steps in an overloaded band (~4 in a standard one), so a build
 * takes ~1.6x (W = 64) to ~3x (W = 128) as long as a standard one.
 *
 * Rate, exactly: fpr_bound() = sum_i reach_i * sum_b open_i(b)
 * 2^-cols_i(b) / starts_i, with open_i(b) the starts of block b that stay in
 * layer i, reach_0 = 1 and reach_(i+1) = reach_i * bumped_i / starts_i,
 * computed from the codes at build and at load. Derivation:
 * docs/structures.md §"Ribbon", Guarantee and bound (exact).
 *
 * Storage: a layer is column-major, interleaved in 64-row blocks (the
 * "ICML" layout): block b holds one 64-bit word per column, so a query
 * reads two (W = 128: three) words per column it checks. The codes of all
 * bumped layers follow the solutions, 32 codes per word: 2 bits per 128
 * (or 256) rows, small enough to stay in cache.
 *
 *   block:        0          1              L-1         L  ..  B-1
 *              +------+   +------+       +------+   +---------+
 *   columns    |r words|  |r words| ...  |r words|  |r+1 words| ...
 *              +------+   +------+       +------+   +---------+
 *                 lower blocks: r columns     upper blocks: r+1 columns
 *
 * Fractional bits per key (bits = r + φ): in each layer the last U blocks
 * store one more column. Columns never decrease with the block index, so a
 * key starting in block b finds every column it checks in blocks b+1 (b+2)
 * too; back-substitution solves all r+1 columns everywhere and stores
 * fewer in lower blocks (a key's equation only involves rows at or after
 * its start). A key checks the columns of its start block. U is the fewest
 * last blocks holding a share φ of the layer's unbumped starts, so every
 * layer, hence the filter, stays at or below 2^-r (1 - φ/2); a target fpr
 * is met by choosing φ from that mixed formula (amq__rb_bits_for), which
 * is worse than 2^-(r + φ) by convexity (docs/structures.md §"Ribbon",
 * Fractional bits).
 *
 * Build steps: sort the mixed hashes (partition by top bits, counting sort
 * on the next bits, insertion sort for the rare ties; this also drops
 * duplicate keys, which are equal hashes); band layer by layer (the
 * bumped keys are compacted in place and sorted by their next hash into the
 * space the layer's keys freed); size U per layer; back-substitute every
 * layer into one table. Only the last layer can fail: it retries with the
 * next seed of a fixed sequence (every 8th also adds ~1/8 rows) and after
 * AMQ_STATIC_MAX_ATTEMPTS returns AMQ_ERR_FULL. Builds are deterministic.
 *
 * Frames: version-1 parameters (40 bytes, one standard layer, from before
 * bumping) still load and save back unchanged; versions 2 and 3 carry one
 * 24-byte record per layer (t_params_write). They differ in the key's
 * equation only: version 3 (new filters) derives the coefficients from x
 * by a multiply, version 2 by a second mix (rb_coef_lo). Each loaded
 * filter keeps its version, and its kernels are chosen for it.
 *
 * Invariants: 1 <= r <= 32, r + (U > 0) <= 32 per layer; W in {64, 128};
 * items == 0 iff layers == 0 (an empty filter has no table and answers
 * false); every layer has blocks >= W/64 + 1; every layer but the last has
 * codes, the last has none; bucket B is a power of two in [64, 1024] and
 * t1 <= t2 <= B.
 */
#include <math.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "core/sort.h"
#include "fingerprint/ribbon_impl.h"

/* Buckets of bumped layers: B starts, thresholds 0 < t1 < t2 < B for the
 * codes 1 and 2 (code 0: nothing bumped, code 3: all B). Measured at
 * n = 10^6 to cost < 0.2% of empty rows with ~3% of keys bumped. Stored in
 * every frame, so they can change without breaking old files. */
typedef struct rb_bucket_shape {
    uint32_t size, t1, t2;
} rb_bucket_shape;
static const rb_bucket_shape rb_bucket64 = {128, 16, 32};
static const rb_bucket_shape rb_bucket128 = {256, 32, 64};

/* ---- query -------------------------------------------------------------- */

/* Layer l's check of a key at start s. Rather than assembling each
 * column's window, the coefficients are shifted once to the window's bit
 * position and split over the two (three) words they cover; a column is
 * then two ANDs, an XOR and a parity. The columns always run to the
 * layer's rmax (r, or r + 1 if it has upper blocks), a count fixed per
 * layer, so the loop's exit is predicted; a lower block's extra column
 * reads the next block's first word (which exists: the last block is
 * upper) and is masked off. One implementation for both band widths;
 * callers pass a constant. Blocks read exist: s <= m - W puts block
 * s/64 + W/64 (needed only when s % 64 != 0) inside the layer. */
typedef struct rb_probe {
    const uint64_t *w0, *w1, *w2; /* column j of the window: word j of each */
    uint64_t c0, c1, c2;          /* the coefficients over those words      */
    uint32_t rmax, cols, fp;
} rb_probe;

static inline __attribute__((always_inline)) rb_probe rb_probe_at(
    const rb_layer *l, uint32_t r, uint64_t x, uint64_t s, unsigned band,
    bool v3) {
    rb_probe p;
    uint64_t b = s / 64;
    unsigned sh = (unsigned)(s % 64);
    p.cols = rb_cols(l, r, b);
    p.w0 = l->sol + rb_offset(l, r, b);
    p.w1 = sh != 0 || band == 128 ? p.w0 + p.cols : p.w0;
    p.w2 = sh != 0 && band == 128 ? p.w1 + rb_cols(l, r, b + 1) : p.w1;
    uint64_t lo = rb_coef_lo(x, v3);
    p.c0 = lo << sh;
    p.c1 = rb_spill(lo, sh);
    p.c2 = 0;
    if (band == 128) {
        uint64_t hi = rb_coef_hi(x, v3);
        p.c1 |= hi << sh;
        p.c2 = rb_spill(hi, sh);
    }
    p.rmax = r + (l->upper != 0);
    p.fp = rb_fp(x);
    return p;
}

static inline bool rb_verdict(const rb_probe *p, uint32_t acc) {
    return ((acc ^ p->fp) & rb_mask(p->cols)) == 0;
}

/* The column parities one at a time: the reference. */
static inline __attribute__((always_inline)) uint32_t rb_acc_scalar(
    const rb_probe *p, unsigned band) {
    uint32_t acc = 0;
    for (uint32_t j = 0; j < p->rmax; j++) {
        uint64_t v = (p->w0[j] & p->c0) ^ (p->w1[j] & p->c1);
        if (band == 128)
            v ^= p->w2[j] & p->c2;
        acc |= (uint32_t)__builtin_parityll(v) << j;
    }
    return acc;
}

static inline __attribute__((always_inline)) bool rb_check_w(
    const rb_layer *l, uint32_t r, uint64_t x, uint64_t s, unsigned band,
    bool v3) {
    rb_probe p = rb_probe_at(l, r, x, s, band, v3);
    return rb_verdict(&p, rb_acc_scalar(&p, band));
}

/* The key's column parities and the number of columns stored there
 * (retrieval reads them as the value). */
static inline __attribute__((always_inline)) uint32_t rb_product_w(
    const rb_layer *l, uint32_t r, uint64_t x, uint64_t s, unsigned band,
    bool v3, uint32_t *ncols) {
    rb_probe p = rb_probe_at(l, r, x, s, band, v3);
    *ncols = p.cols;
    return rb_acc_scalar(&p, band);
}

static inline unsigned rb_code(const uint64_t *meta, uint64_t bucket) {
    return (unsigned)(meta[bucket / 32] >> (bucket % 32 * 2)) & 3;
}

/* Is start s of coded layer l bumped to the next layer? */
static inline bool rb_goes_on(const amq_ribbon *f, const rb_layer *l,
                              uint64_t s) {
    uint64_t bucket = s >> f->bucket_log2;
    uint64_t off = s & ((UINT64_C(1) << f->bucket_log2) - 1);
    return off < f->thr[rb_code(l->meta, bucket)];
}

/* The layer a key ends in, from layer i on; *x is the previous layer's
 * hash (h for layer 0) and becomes the key's hash there, *s its start.
 * The last layer has no codes, so the loop ends there. */
static inline __attribute__((always_inline)) const rb_layer *rb_layer_of(
    const amq_ribbon *f, uint64_t *x, uint64_t *s, uint32_t i) {
    for (;; i++) {
        const rb_layer *l = &f->layer[i];
        *x = rb_mix(*x, l->seed);
        *s = amq__reduce64(*x, l->starts);
        if (!l->coded || !rb_goes_on(f, l, *s))
            return l;
    }
}

static inline __attribute__((always_inline)) bool rb_query_w(
    const amq_ribbon *f, uint64_t x, uint32_t i, unsigned band, bool v3) {
    uint64_t s;
    const rb_layer *l = rb_layer_of(f, &x, &s, i);
    return rb_check_w(l, f->r, x, s, band, v3);
}

/* Retrieval: the key's columns are its value (a retrieval structure has
 * no upper blocks: every layer stores r columns). */
static inline __attribute__((always_inline)) uint32_t rb_retrieve_w(
    const amq_ribbon *f, uint64_t x, unsigned band, bool v3) {
    uint64_t s;
    uint32_t cols;
    const rb_layer *l = rb_layer_of(f, &x, &s, 0);
    return rb_product_w(l, f->r, x, s, band, v3, &cols) & rb_mask(cols);
}

/* Every cache line of words [p, p + n). */
static inline void rb_prefetch_words(const uint64_t *p, uint64_t n) {
    uintptr_t a = (uintptr_t)p & ~(uintptr_t)63;
    uintptr_t e = (uintptr_t)(p + n);
    for (; a < e; a += 64)
        amq__prefetch((const void *)a);
}

/* Batch: a rolling pipeline. Key i + RB_AHEAD's layer-0 start is
 * computed and its code and solution words prefetched while key i is
 * answered, so every key's lines were requested RB_AHEAD keys earlier. A
 * key bumped out of layer 0 (~3%) finishes on the scalar path. */
static inline __attribute__((always_inline)) void rb_stage(
    const amq_ribbon *f, const rb_layer *l, uint64_t h, uint64_t span,
    uint64_t *x, uint64_t *s) {
    *x = rb_mix(h, l->seed);
    *s = amq__reduce64(*x, l->starts);
    if (l->coded)
        amq__prefetch(l->meta + (*s >> f->bucket_log2) / 32);
    uint64_t o = rb_offset(l, f->r, *s / 64);
    rb_prefetch_words(l->sol + o, span < l->words - o ? span : l->words - o);
}

static inline __attribute__((always_inline)) void rb_batch_w(
    const amq_ribbon *f, const uint64_t *h, size_t n, uint8_t *out,
    unsigned band, bool v3) {
    const rb_layer *l = &f->layer[0];
    uint64_t span = (band / 64 + 1) * (uint64_t)(f->r + 1);
    uint64_t x[RB_AHEAD], s[RB_AHEAD];
    size_t ahead = n < RB_AHEAD ? n : RB_AHEAD;
    for (size_t j = 0; j < ahead; j++)
        rb_stage(f, l, h[j], span, &x[j], &s[j]);
    for (size_t i = 0; i < n; i++) {
        size_t k = i % RB_AHEAD;
        uint64_t xi = x[k], si = s[k];
        if (i + RB_AHEAD < n)
            rb_stage(f, l, h[i + RB_AHEAD], span, &x[k], &s[k]);
        if (l->coded && rb_goes_on(f, l, si))
            out[i] = rb_query_w(f, xi, 1, band, v3);
        else
            out[i] = rb_check_w(l, f->r, xi, si, band, v3);
    }
}

/* Retrieval in a batch: key i + RB_AHEAD's layer-0 lines are requested
 * while key i is answered by the one-key path (its value, or 0 where
 * want[i] is 0: those keys are neither fetched nor answered). */
static inline __attribute__((always_inline)) void rb_retrieve_batch_w(
    const amq_ribbon *f, const uint64_t *h, const uint8_t *want, size_t n,
    uint32_t *out, unsigned band, bool v3) {
    const rb_layer *l = &f->layer[0];
    uint64_t span = (band / 64 + 1) * (uint64_t)(f->r + 1), x, s;
    for (size_t j = 0; j < n && j < RB_AHEAD; j++)
        if (want == NULL || want[j])
            rb_stage(f, l, h[j], span, &x, &s);
    for (size_t i = 0; i < n; i++) {
        size_t a = i + RB_AHEAD;
        if (a < n && (want == NULL || want[a]))
            rb_stage(f, l, h[a], span, &x, &s);
        out[i] = want == NULL || want[i] ? rb_retrieve_w(f, h[i], band, v3) : 0;
    }
}

/* The portable paths (the reference) and, on x86-64 with POPCNT, the same
 * code compiled for it: a parity is then one instruction instead of a
 * six-step fold. AMQ_OPT_SCALAR forces the portable paths; elsewhere than
 * x86-64 the "fast" paths are the portable code again, never chosen
 * (rb_cpu_fast is false). Each is instantiated per band and coefficient
 * form (RB_FORMS). */
#define RB_FORMS(CALL)                                                         \
    (f->band == 128 ? (f->version >= 3 ? CALL(128, true) : CALL(128, false))   \
                    : (f->version >= 3 ? CALL(64, true) : CALL(64, false)))
#define RB_QUERY(B, V) rb_query_w(f, h, 0, B, V)
#define RB_RETRIEVE(B, V) rb_retrieve_w(f, h, B, V)
#define RB_BATCH(B, V) rb_batch_w(f, h, n, out, B, V)
#define RB_RETRIEVE_BATCH(B, V) rb_retrieve_batch_w(f, h, want, n, out, B, V)

#if defined(__x86_64__)
#define RB_POPCNT __attribute__((target("popcnt")))
static bool rb_cpu_fast(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("popcnt");
}
#else
#define RB_POPCNT
static bool rb_cpu_fast(void) { return false; }
#endif

/* The one-key queries of a non-empty filter (amq__obj.contains). */
static bool rb_k_ref(const amq__obj *o, uint64_t h) {
    const amq_ribbon *f = (const amq_ribbon *)o;
    return RB_FORMS(RB_QUERY);
}
RB_POPCNT static bool rb_k_fast(const amq__obj *o, uint64_t h) {
    const amq_ribbon *f = (const amq_ribbon *)o;
    return RB_FORMS(RB_QUERY);
}

static void rb_batch_ref(const amq_ribbon *f, const uint64_t *h, size_t n,
                         uint8_t *out) {
    RB_FORMS(RB_BATCH);
}
RB_POPCNT static void rb_batch_fast(const amq_ribbon *f, const uint64_t *h,
                                    size_t n, uint8_t *out) {
    RB_FORMS(RB_BATCH);
}

static uint32_t rb_retrieve_ref(const amq_ribbon *f, uint64_t h) {
    return RB_FORMS(RB_RETRIEVE);
}
RB_POPCNT static uint32_t rb_retrieve_fast(const amq_ribbon *f, uint64_t h) {
    return RB_FORMS(RB_RETRIEVE);
}

static void rb_retrieve_batch_ref(const amq_ribbon *f, const uint64_t *h,
                                  const uint8_t *want, size_t n,
                                  uint32_t *out) {
    RB_FORMS(RB_RETRIEVE_BATCH);
}
RB_POPCNT static void rb_retrieve_batch_fast(const amq_ribbon *f,
                                             const uint64_t *h,
                                             const uint8_t *want, size_t n,
                                             uint32_t *out) {
    RB_FORMS(RB_RETRIEVE_BATCH);
}

/* ---- the one-key kernels (amq__obj.contains) ----------------------------- */

/* Layer 0's start of h: the layer to check, or NULL when the key is
 * bumped on (the rest of the walk is rb_query_w's). */
static inline __attribute__((always_inline)) const rb_layer *rb_first(
    const amq_ribbon *f, uint64_t h, uint64_t *x, uint64_t *s) {
    const rb_layer *l = &f->layer[0];
    *x = rb_mix(h, l->seed);
    *s = amq__reduce64(*x, l->starts);
    return l->coded && rb_goes_on(f, l, *s) ? NULL : l;
}

static bool rb_k_none(const amq__obj *o, uint64_t h) {
    (void)o;
    (void)h;
    return false;
}

#if defined(__x86_64__)
#define RB_AVX2 __attribute__((target("avx2,popcnt,bmi2")))
#define RB_AVX512                                                              \
    __attribute__((target("avx512f,avx512vl,avx512dq,avx2,popcnt,bmi2")))
#define RB_VPOP                                                                \
    __attribute__((                                                            \
        target("avx512f,avx512vl,avx512dq,avx512vpopcntdq,avx2,popcnt,bmi2")))
#define RB_INL inline __attribute__((always_inline))

/* Column parities four at a time: each lane xors its masked words, then
 * folds the word onto bit 0. Masked loads read only the rmax columns. */
RB_AVX2 static RB_INL uint32_t rb_acc_avx2(const rb_probe *p, unsigned band) {
    const __m256i lane = _mm256_setr_epi64x(0, 1, 2, 3);
    __m256i c0 = _mm256_set1_epi64x((long long)p->c0);
    __m256i c1 = _mm256_set1_epi64x((long long)p->c1);
    __m256i c2 = _mm256_set1_epi64x((long long)p->c2);
    uint32_t acc = 0;
    for (uint32_t j = 0; j < p->rmax; j += 4) {
        __m256i m = _mm256_cmpgt_epi64(
            _mm256_set1_epi64x((long long)(p->rmax - j)), lane);
        const long long *a = (const long long *)p->w0 + j;
        const long long *b = (const long long *)p->w1 + j;
        __m256i v =
            _mm256_xor_si256(_mm256_and_si256(_mm256_maskload_epi64(a, m), c0),
                             _mm256_and_si256(_mm256_maskload_epi64(b, m), c1));
        if (band == 128) {
            const long long *c = (const long long *)p->w2 + j;
            v = _mm256_xor_si256(
                v, _mm256_and_si256(_mm256_maskload_epi64(c, m), c2));
        }
        for (int sh = 32; sh >= 1; sh /= 2)
            v = _mm256_xor_si256(v, _mm256_srli_epi64(v, sh));
        v = _mm256_slli_epi64(v, 63);
        acc |= (uint32_t)_mm256_movemask_pd(_mm256_castsi256_pd(v)) << j;
    }
    return acc;
}

/* Eight columns a vector; vpop: one VPOPCNTQ per vector, else the fold. */
#define RB_ACC512(NAME, ATTR, PARITY)                                          \
    ATTR static RB_INL uint32_t NAME(const rb_probe *p, unsigned band) {       \
        __m512i c0 = _mm512_set1_epi64((long long)p->c0);                      \
        __m512i c1 = _mm512_set1_epi64((long long)p->c1);                      \
        __m512i c2 = _mm512_set1_epi64((long long)p->c2);                      \
        uint32_t acc = 0;                                                      \
        for (uint32_t j = 0; j < p->rmax; j += 8) {                            \
            uint32_t left = p->rmax - j;                                       \
            __mmask8 m = (__mmask8)(left >= 8 ? 0xff : (1u << left) - 1);      \
            __m512i v = _mm512_xor_si512(                                      \
                _mm512_and_si512(_mm512_maskz_loadu_epi64(m, p->w0 + j), c0),  \
                _mm512_and_si512(_mm512_maskz_loadu_epi64(m, p->w1 + j), c1)); \
            if (band == 128)                                                   \
                v = _mm512_xor_si512(                                          \
                    v, _mm512_and_si512(                                       \
                           _mm512_maskz_loadu_epi64(m, p->w2 + j), c2));       \
            v = PARITY(v);                                                     \
            acc |= (uint32_t)_mm512_test_epi64_mask(v, _mm512_set1_epi64(1))   \
                   << j;                                                       \
        }                                                                      \
        return acc;                                                            \
    }

RB_AVX512 static RB_INL __m512i rb_fold512(__m512i v) {
    for (int sh = 32; sh >= 1; sh /= 2)
        v = _mm512_xor_si512(v, _mm512_srli_epi64(v, sh));
    return v;
}
RB_VPOP static RB_INL __m512i rb_pop512(__m512i v) {
    return _mm512_popcnt_epi64(v);
}
RB_ACC512(rb_acc_avx512, RB_AVX512, rb_fold512)
RB_ACC512(rb_acc_vpop, RB_VPOP, rb_pop512)

/* One kernel per (instruction set, band): layer 0 with the vector column
 * loop; a key bumped on finishes on the scalar walk. */
#define RB_KERNEL(NAME, ATTR, ACC, BAND, V3)                                   \
    ATTR static bool NAME(const amq__obj *o, uint64_t h) {                     \
        const amq_ribbon *f = (const amq_ribbon *)o;                           \
        uint64_t x, s;                                                         \
        const rb_layer *l = rb_first(f, h, &x, &s);                            \
        if (l == NULL)                                                         \
            return rb_query_w(f, x, 1, BAND, V3);                              \
        rb_probe p = rb_probe_at(l, f->r, x, s, BAND, V3);                     \
        return rb_verdict(&p, ACC(&p, BAND));                                  \
    }

/* [coefficient form: version 3, versions 1-2][band: 64, 128] */
#define RB_KERNELS(NAME, ATTR, ACC)                                            \
    RB_KERNEL(NAME##_64, ATTR, ACC, 64, true)                                  \
    RB_KERNEL(NAME##_128, ATTR, ACC, 128, true)                                \
    RB_KERNEL(NAME##_64_v2, ATTR, ACC, 64, false)                              \
    RB_KERNEL(NAME##_128_v2, ATTR, ACC, 128, false)                            \
    static bool (*const NAME[2][2])(const amq__obj *, uint64_t) = {            \
        {NAME##_64, NAME##_128}, {NAME##_64_v2, NAME##_128_v2}};

RB_KERNELS(rb_k_avx2, RB_AVX2, rb_acc_avx2)
RB_KERNELS(rb_k_avx512, RB_AVX512, rb_acc_avx512)
RB_KERNELS(rb_k_vpop, RB_VPOP, rb_acc_vpop)
#endif

/* The kernel for f's band and the CPU: the portable reference under
 * AMQ_OPT_SCALAR (f->fast false), else the widest vector code the CPU
 * has. */
static void rb_choose(amq_ribbon *f) {
    unsigned w128 = f->band == 128, v2 = f->version < 3;
    f->o.contains = f->layers == 0 ? rb_k_none : f->fast ? rb_k_fast : rb_k_ref;
    if (f->layers == 0 || !f->fast)
        return;
#if defined(__x86_64__)
    if (amq__cpu_has_vpopcntdq())
        f->o.contains = rb_k_vpop[v2][w128];
    else if (amq__cpu_has_avx512())
        f->o.contains = rb_k_avx512[v2][w128];
    else if (amq__cpu_has_avx2())
        f->o.contains = rb_k_avx2[v2][w128];
#else
    (void)w128;
    (void)v2;
#endif
}

uint32_t amq__rb_retrieve(const amq_ribbon *f, uint64_t h) {
    if (f->layers == 0)
        return 0;
    return f->fast ? rb_retrieve_fast(f, h) : rb_retrieve_ref(f, h);
}

void amq__rb_retrieve_batch(const amq_ribbon *f, const uint64_t *h,
                            const uint8_t *want, size_t n, uint32_t *out) {
    if (f->layers == 0)
        memset(out, 0, n * sizeof *out);
    else if (f->fast)
        rb_retrieve_batch_fast(f, h, want, n, out);
    else
        rb_retrieve_batch_ref(f, h, want, n, out);
}

void amq__rb_contains_batch(const amq__obj *o, const uint64_t *h, size_t n,
                            uint8_t *out) {
    const amq_ribbon *f = (const amq_ribbon *)o;
    if (f->layers == 0)
        memset(out, 0, n);
    else if (f->fast)
        rb_batch_fast(f, h, n, out);
    else
        rb_batch_ref(f, h, n, out);
}

/* ---- the exact rate and the upper blocks -------------------------------- */

/* Starts of block b that stay in layer l (are not bumped). A block lies in
 * one bucket (buckets are 2^k >= 64 starts, aligned). */
static uint64_t rb_open(const amq_ribbon *f, const rb_layer *l, uint64_t b) {
    uint64_t first = b * 64;
    if (first >= l->starts)
        return 0;
    uint64_t n = l->starts - first < 64 ? l->starts - first : 64;
    if (!l->coded)
        return n;
    uint64_t bucket = first >> f->bucket_log2;
    uint64_t into = first - (bucket << f->bucket_log2);
    uint64_t t = f->thr[rb_code(l->meta, bucket)];
    uint64_t bumped = t > into ? t - into : 0;
    return bumped < n ? n - bumped : 0;
}

/* The fewest last blocks holding a share frac of the layer's open
 * starts: the layer's rate is then at most 2^-r (1 - frac/2). */
uint64_t amq__rb_choose_upper(const amq_ribbon *f, const rb_layer *l,
                              double frac) {
    if (frac <= 0)
        return 0;
    double total = 0, got = 0;
    for (uint64_t b = 0; b < l->blocks; b++)
        total += (double)rb_open(f, l, b);
    uint64_t u = 0;
    for (; u < l->blocks && got < frac * total; u++)
        got += (double)rb_open(f, l, l->blocks - 1 - u);
    return u;
}

/* The false-positive probability, exactly (see the opening comment). */
double amq__rb_rate(const amq_ribbon *f) {
    double fpr = 0, reach = 1;
    for (uint32_t i = 0; i < f->layers; i++) {
        const rb_layer *l = &f->layer[i];
        double lower = 0, upper = 0;
        for (uint64_t b = 0; b < l->blocks; b++) {
            if (b < l->lower)
                lower += (double)rb_open(f, l, b);
            else
                upper += (double)rb_open(f, l, b);
        }
        double starts = (double)l->starts;
        fpr += reach *
               (lower * ldexp(1.0, -(int)f->r) +
                upper * ldexp(1.0, -(int)f->r - 1)) /
               starts;
        reach *= (starts - lower - upper) / starts;
    }
    return fpr;
}

/* ---- shape -------------------------------------------------------------- */

/* Rows per key beyond one that a standard band of width W needs to succeed
 * at the first attempt most of the time. It grows with log n: more keys,
 * more places where a window of the band is locally overloaded. Measured
 * first-attempt successes, W = 64: n = 10^4: 6% 39/40, 7% 40/40; 10^5:
 * 8% 17/20, 9% 19/20, 10% 20/20; 10^6: 9% 6/8, 10% 8/8. W = 128: 10^5:
 * 3% 9/10, 3.5% 10/10; 10^6: 3.5% 3/4, 4% 4/4. */
static double rb_overhead(size_t n, unsigned band) {
    double l = log10((double)(n ? n : 1));
    double ov = band == 128 ? 0.01 * l - 0.02 : 0.02 * l - 0.01;
    double floor_ov = band == 128 ? 0.015 : 0.05;
    return ov < floor_ov ? floor_ov : ov;
}

static amq_status rb_rows_to_blocks(double rows, unsigned band,
                                    uint64_t *blocks) {
    double b = ceil(rows / 64.0);
    if (!(b <= (double)RB_MAX_BLOCKS))
        return AMQ_ERR_OVERFLOW;
    *blocks =
        (uint64_t)b < rb_min_blocks(band) ? rb_min_blocks(band) : (uint64_t)b;
    return AMQ_OK;
}

/* A standard layer of n keys: n (1 + overhead) rows plus one band of
 * slack (so the table is never narrower than a window). */
amq_status amq__rb_standard_blocks(size_t n, unsigned band, uint64_t *blocks) {
    return rb_rows_to_blocks(
        (double)n * (1.0 + rb_overhead(n, band)) + band + 64, band, blocks);
}

amq_status amq__rb_bumped_blocks(size_t n, unsigned band, uint64_t *blocks) {
    double load = band == 128 ? RB_LOAD128 : RB_LOAD64;
    return rb_rows_to_blocks(ceil((double)n * load), band, blocks);
}

/* Seeds: one fixed sequence per layer, indexed by the attempt. */
uint64_t amq__rb_seed(uint32_t layer, unsigned attempt) {
    uint64_t i = (uint64_t)attempt * RB_MAX_LAYERS + layer;
    return amq__mix64(0x2545f4914f6cdd1dULL + i * 0x9e3779b97f4a7c15ULL);
}

/* ---- the object --------------------------------------------------------- */

/* Words of f's table: the solutions layer by layer, then the codes of
 * the coded layers. Sets each layer's lower and words. false on
 * overflow. */
bool amq__rb_layout(amq_ribbon *f, size_t *words) {
    size_t total = 0;
    for (uint32_t i = 0; i < f->layers; i++) {
        rb_layer *l = &f->layer[i];
        size_t sw;
        if (l->blocks > RB_MAX_BLOCKS || l->upper > l->blocks ||
            !amq__mul((size_t)l->blocks, f->r, &sw) ||
            !amq__add(sw, l->upper, &sw) || !amq__add(total, sw, &total))
            return false;
        l->lower = l->blocks - l->upper;
        l->words = sw;
    }
    for (uint32_t i = 0; i < f->layers; i++)
        if (f->layer[i].coded &&
            !amq__add(total, rb_meta_words(&f->layer[i], f->bucket_log2),
                      &total))
            return false;
    *words = total;
    return true;
}

/* Point the layers at a table laid out as rb_layout says. */
void amq__rb_point(amq_ribbon *f, const uint64_t *t) {
    for (uint32_t i = 0; i < f->layers; i++) {
        f->layer[i].sol = t;
        t += f->layer[i].words;
    }
    for (uint32_t i = 0; i < f->layers; i++) {
        f->layer[i].meta = f->layer[i].coded ? t : NULL;
        if (f->layer[i].coded)
            t += rb_meta_words(&f->layer[i], f->bucket_log2);
    }
}

/* A new object holding a copy of the header fields of hdr (layers,
 * geometry; no table). */
amq_status amq__rb_new(const amq_ribbon *hdr, const amq_options *opt,
                       amq_ribbon **out) {
    amq_ribbon *f;
    AMQ_RETURN_IF_ERR(amq__obj_new(sizeof *f, opt, (void **)&f));
    amq__obj o = f->o;
    *f = *hdr;
    o.items = hdr->o.items;
    f->o = o;
    bool scalar = opt != NULL && (opt->flags & AMQ_OPT_SCALAR);
    f->fast = !scalar && rb_cpu_fast();
    rb_choose(f);
    *out = f;
    return AMQ_OK;
}

/* Give f its table: borrowed (a view) or allocated (zeroed). */
amq_status amq__rb_attach(amq_ribbon *f, size_t words, const uint64_t *borrow) {
    void *wr = NULL;
    if (words > SIZE_MAX / 8)
        return AMQ_ERR_OVERFLOW;
    if (borrow != NULL || words != 0)
        AMQ_RETURN_IF_ERR(amq__obj_table(&f->o, words * 8, borrow, &wr));
    amq__rb_point(f, borrow != NULL ? borrow : wr);
    return AMQ_OK;
}

void amq__rb_header(amq_ribbon *f, uint32_t bits64, unsigned band, bool bump) {
    const rb_bucket_shape *b = band == 128 ? &rb_bucket128 : &rb_bucket64;
    memset(f, 0, sizeof *f);
    f->version = RB_VERSION;
    f->r = bits64 / 64;
    f->bits64 = bits64;
    f->band = band;
    f->bump = bump;
    if (bump) {
        f->bucket_log2 = amq__log2_floor(b->size);
        f->thr[1] = b->t1;
        f->thr[2] = b->t2;
        f->thr[3] = b->size;
    }
}

double amq_ribbon_bits(const amq_ribbon *f) { return f->bits64 / 64.0; }
unsigned amq_ribbon_band(const amq_ribbon *f) { return f->band; }
unsigned amq_ribbon_layers(const amq_ribbon *f) { return f->layers; }
bool amq_ribbon_bumped(const amq_ribbon *f) { return f->bump; }

/* ---- the curve ---------------------------------------------------------- */

/* Rate at b solution bits per row: 2^-r (1 - f/2), r = floor(b), f = b - r
 * (the block mix above with U/B = f). */
double amq__rb_mixed_fpr(double b) {
    if (b <= 0)
        return 1.0;
    double r = floor(b), f = b - r;
    return ldexp(1.0 - f / 2.0, -(int)r);
}

/* Its inverse: the fewest solution bits per row for fpr. */
double amq__rb_bits_for(double fpr) {
    double r = floor(-log2(fpr));
    double f = 2.0 * (1.0 - fpr * exp2(r));
    return r + (f < 0 ? 0 : f);
}

/* bits per key = rho (rows per key) x solution bits per row + mu (code
 * bits per key). Standard: rho at 10^6 keys. Bumped: measured empty rows
 * at 10^6 keys (docs/structures.md, "Ribbon") and 2 code bits per bucket of the
 * 0.97 n rows of layer 0. */
void amq__rb_curve_shape(unsigned band, bool bump, double *rho, double *mu) {
    if (!bump) {
        *rho = 1.0 + rb_overhead(RB_CURVE_N, band);
        *mu = 0;
        return;
    }
    const rb_bucket_shape *b = band == 128 ? &rb_bucket128 : &rb_bucket64;
    *rho = band == 128 ? RB_CURVE_RHO128 : RB_CURVE_RHO64;
    *mu = 2.0 * (band == 128 ? RB_LOAD128 : RB_LOAD64) / b->size;
}
