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
 * solution bits per key (docs/drafts/ribbon.md). The price is banding
 * time: a key's elimination walks from its start to the first free row,
 * ~20 steps in an overloaded band (~4 in a standard one), so a build
 * takes ~1.6x (W = 64) to ~3x (W = 128) as long as a standard one.
 *
 * Rate, exactly. Whether a query leaves layer i depends only on its start
 * there, uniform over the layer's m - W + 1 starts, and its next hash is
 * independent of that start. With open_i(b) the starts of block b that stay
 * in layer i, reach_0 = 1 and reach_(i+1) = reach_i * bumped_i / starts_i,
 *
 *     fpr = sum_i reach_i * sum_b open_i(b) 2^-cols_i(b) / starts_i,
 *
 * which fpr_bound() returns (computed from the codes, at build and load).
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
 * layer, hence the filter, stays at or below 2^-r (1 - φ/2). Mixing 2^-r
 * and 2^-(r+1) linearly is worse than 2^-(r + φ) by convexity (at most
 * 0.086 bits, at φ = 1/2): bits=6.5 gives 2^-6.415; a target fpr is met by
 * choosing φ from the mixed formula, not from the log.
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
 * bumping) still load and save back unchanged; new frames carry version 2
 * with one 24-byte record per layer (t_params_write).
 *
 * Invariants: 1 <= r <= 32, r + (U > 0) <= 32 per layer; W in {64, 128};
 * items == 0 iff layers == 0 (an empty filter has no table and answers
 * false); every layer has blocks >= W/64 + 1; every layer but the last has
 * codes, the last has none; bucket B is a power of two in [64, 1024] and
 * t1 <= t2 <= B.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amq/static.h"
#include "core/bits.h"
#include "core/mem.h"
#include "core/frame.h"
#include "core/sort.h"
#include "filter/type.h"

#define RB_MAX_LAYERS 8
/* Batch queries: keys between a prefetch and its use (a power of 2). */
#define RB_AHEAD 16
#define RB_GROW_EVERY 8
/* Fewer keys than this: the layer is the last, a standard one. */
#define RB_BUMP_MIN 1024
/* Rows per key of a bumped layer (overloaded on purpose). More rows cost
 * empty rows but shorten banding: a key's elimination walks from its start
 * to the first free row, and that gap grows with the overload. At 10^6
 * keys: W = 64 at 0.97, ~20 steps per key, 0.15% empty rows; W = 128
 * (whose steps cost more) at 0.99, ~37 steps, 0.15% (47 steps at 0.97). */
#define RB_LOAD64 0.97
#define RB_LOAD128 0.99
#define RB_VERSION 2
/* The curve's key count: rows per key as at n = 10^6, for standard
 * Ribbon from rb_overhead, for bumped Ribbon measured (all layers' rows
 * over keys, docs/drafts/ribbon.md). */
#define RB_CURVE_N 1000000
#define RB_CURVE_RHO64 1.0017
#define RB_CURVE_RHO128 1.0014
/* Sorting: partitions of ~2^11 keys, at most 2^12 of them. */
#define RB_MAX_BUCKET 1024
/* Largest bucket the build uses (the stack of one bucket's rows). */
#define RB_BUILD_BUCKET 256
#define RB_NO_ROW UINT64_MAX
/* Blocks per layer: keeps U in 32 bits (2.7e11 rows). */
#define RB_MAX_BLOCKS UINT64_C(0xffffffff)

typedef unsigned __int128 rb_u128;

/* Multipliers deriving the coefficients and the fingerprint from the mixed
 * hash (odd, from splitmix64). Part of the file format: never edit. */
#define COEF_XOR 0x3c6ef372fe94f82bULL
#define COEF_XOR_HI 0x510e527fade682d1ULL
#define FP_MUL 0xa54ff53a5f1d36f1ULL
/* Inverses mod 2^64 of amq__mix64's multipliers (undo a seed on retry). */
#define UNMIX_MUL1 0x4f74430c22a54005ULL
#define UNMIX_MUL2 0x9cb4b2f8129337dbULL

/* Buckets of bumped layers: B starts, thresholds 0 < t1 < t2 < B for the
 * codes 1 and 2 (code 0: nothing bumped, code 3: all B). Measured at
 * n = 10^6 to cost < 0.2% of empty rows with ~3% of keys bumped. Stored in
 * every frame, so they can change without breaking old files. */
typedef struct rb_bucket_shape {
    uint32_t size, t1, t2;
} rb_bucket_shape;
static const rb_bucket_shape rb_bucket64 = {128, 16, 32};
static const rb_bucket_shape rb_bucket128 = {256, 32, 64};

typedef struct rb_layer {
    const uint64_t *sol;  /* blocks * r + upper words                  */
    const uint64_t *meta; /* 2-bit codes per bucket; NULL in the last  */
    uint64_t seed;
    uint64_t blocks;      /* rows m = 64 blocks                        */
    uint64_t starts;      /* m - W + 1                                 */
    uint64_t lower;       /* blocks - upper: blocks with r columns     */
    uint64_t words;       /* solution words                            */
    uint32_t upper;       /* U: the last U blocks store r + 1 columns  */
    bool coded;           /* has codes (every layer but the last)      */
} rb_layer;

struct amq_ribbon {
    amq__obj o; /* o.items: keys; o.table: every layer's solution and codes
                   (none for an empty filter) */
    rb_layer layer[RB_MAX_LAYERS];
    double fpr;
    uint32_t layers;
    uint32_t r;           /* columns in lower blocks                   */
    uint32_t bits64;      /* requested bits per key in 1/64 steps      */
    uint32_t band;        /* W: 64 or 128                              */
    uint32_t bucket_log2; /* bumped layers: 2^this starts per bucket   */
    uint32_t thr[4];      /* threshold per code: 0, t1, t2, B          */
    bool bump;            /* built as BuRR (else standard)             */
    bool legacy;          /* loaded from a version-1 frame             */
    bool fast;            /* query with POPCNT (not AMQ_OPT_SCALAR)    */
};

/* ---- a key's equation --------------------------------------------------- */

static inline uint64_t rb_mix(uint64_t x, uint64_t seed) {
    return amq__mix64(x + seed);
}

/* The inverse of amq__mix64 (each step of it is a bijection). */
static uint64_t rb_unmix(uint64_t x) {
    x ^= x >> 33;
    x *= UNMIX_MUL2;
    x ^= x >> 33;
    x *= UNMIX_MUL1;
    x ^= x >> 33;
    return x;
}

static inline uint64_t rb_coef_lo(uint64_t x) {
    return amq__mix64(x ^ COEF_XOR) | 1;
}
static inline uint64_t rb_coef_hi(uint64_t x) {
    return amq__mix64(x ^ COEF_XOR_HI);
}
static inline uint32_t rb_fp(uint64_t x) {
    return (uint32_t)((x * FP_MUL) >> 32);
}
static inline uint32_t rb_mask(uint32_t cols) {
    return (uint32_t)((UINT64_C(1) << cols) - 1);
}

/* Columns stored in block b, and where its words start. */
static inline uint32_t rb_cols(const rb_layer *l, uint32_t r, uint64_t b) {
    return r + (b >= l->lower);
}
static inline uint64_t rb_offset(const rb_layer *l, uint32_t r, uint64_t b) {
    return b * r + (b > l->lower ? b - l->lower : 0);
}

/* The bits of v that a shift left by sh pushes out of the word (sh < 64;
 * 0 for sh = 0, without a shift by 64). */
static inline uint64_t rb_spill(uint64_t v, unsigned sh) {
    return (v >> 1) >> (63 - sh);
}

/* ---- query -------------------------------------------------------------- */

/* Layer l's check of a key at start s. Rather than assembling each
 * column's window, the coefficients are shifted once to the window's bit
 * position and split over the two (three) words they cover; a column is
 * then two ANDs, an XOR and a parity. The loop always runs over the
 * layer's rmax columns (r, or r + 1 if it has upper blocks), a count fixed
 * per layer, so its exit is predicted; a lower block's extra column reads
 * the next block's first word (which exists: the last block is upper) and
 * is masked off. One implementation for both band widths; callers pass a
 * constant. Blocks read exist: s <= m - W puts block s/64 + W/64 (needed
 * only when s % 64 != 0) inside the layer. */
static inline __attribute__((always_inline)) bool
rb_check_w(const rb_layer *l, uint32_t r, uint64_t x, uint64_t s,
           unsigned band) {
    uint64_t b = s / 64;
    unsigned sh = (unsigned)(s % 64);
    uint32_t cols = rb_cols(l, r, b);
    const uint64_t *w0 = l->sol + rb_offset(l, r, b);
    const uint64_t *w1 = sh != 0 || band == 128 ? w0 + cols : w0;
    const uint64_t *w2 =
        sh != 0 && band == 128 ? w1 + rb_cols(l, r, b + 1) : w1;
    uint64_t lo = rb_coef_lo(x);
    uint64_t c0 = lo << sh, c1 = rb_spill(lo, sh), c2 = 0;
    if (band == 128) {
        uint64_t hi = rb_coef_hi(x);
        c1 |= hi << sh;
        c2 = rb_spill(hi, sh);
    }
    uint32_t acc = 0, rmax = r + (l->upper != 0);
    for (uint32_t j = 0; j < rmax; j++) {
        uint64_t v = (w0[j] & c0) ^ (w1[j] & c1);
        if (band == 128)
            v ^= w2[j] & c2;
        acc |= (uint32_t)__builtin_parityll(v) << j;
    }
    return ((acc ^ rb_fp(x)) & rb_mask(cols)) == 0;
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

/* From layer i on; x is the previous layer's hash (h for layer 0). The
 * last layer has no codes, so the loop ends there. */
static inline __attribute__((always_inline)) bool
rb_query_w(const amq_ribbon *f, uint64_t x, uint32_t i, unsigned band) {
    for (;; i++) {
        const rb_layer *l = &f->layer[i];
        x = rb_mix(x, l->seed);
        uint64_t s = amq__reduce64(x, l->starts);
        if (!l->coded || !rb_goes_on(f, l, s))
            return rb_check_w(l, f->r, x, s, band);
    }
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
static inline __attribute__((always_inline)) void
rb_stage(const amq_ribbon *f, const rb_layer *l, uint64_t h, uint64_t span,
         uint64_t *x, uint64_t *s) {
    *x = rb_mix(h, l->seed);
    *s = amq__reduce64(*x, l->starts);
    if (l->coded)
        amq__prefetch(l->meta + (*s >> f->bucket_log2) / 32);
    uint64_t o = rb_offset(l, f->r, *s / 64);
    rb_prefetch_words(l->sol + o, span < l->words - o ? span : l->words - o);
}

static inline __attribute__((always_inline)) void
rb_batch_w(const amq_ribbon *f, const uint64_t *h, size_t n, uint8_t *out,
           unsigned band) {
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
            out[i] = rb_query_w(f, xi, 1, band);
        else
            out[i] = rb_check_w(l, f->r, xi, si, band);
    }
}

/* The portable paths (the reference) and, on x86-64 with POPCNT, the same
 * code compiled for it: a parity is then one instruction instead of a
 * six-step fold. AMQ_OPT_SCALAR forces the portable paths. */
static bool rb_contains_ref(const amq_ribbon *f, uint64_t h) {
    return f->band == 128 ? rb_query_w(f, h, 0, 128) : rb_query_w(f, h, 0, 64);
}
static void rb_batch_ref(const amq_ribbon *f, const uint64_t *h, size_t n,
                         uint8_t *out) {
    if (f->band == 128)
        rb_batch_w(f, h, n, out, 128);
    else
        rb_batch_w(f, h, n, out, 64);
}

#if defined(__x86_64__)
__attribute__((target("popcnt"))) static bool
rb_contains_fast(const amq_ribbon *f, uint64_t h) {
    return f->band == 128 ? rb_query_w(f, h, 0, 128) : rb_query_w(f, h, 0, 64);
}
__attribute__((target("popcnt"))) static void
rb_batch_fast(const amq_ribbon *f, const uint64_t *h, size_t n,
              uint8_t *out) {
    if (f->band == 128)
        rb_batch_w(f, h, n, out, 128);
    else
        rb_batch_w(f, h, n, out, 64);
}
static bool rb_cpu_fast(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("popcnt");
}
#else
static bool rb_contains_fast(const amq_ribbon *f, uint64_t h) {
    return rb_contains_ref(f, h);
}
static void rb_batch_fast(const amq_ribbon *f, const uint64_t *h, size_t n,
                          uint8_t *out) {
    rb_batch_ref(f, h, n, out);
}
static bool rb_cpu_fast(void) { return false; }
#endif

bool amq_ribbon_contains_hash(const amq_ribbon *f, uint64_t h) {
    if (f->layers == 0)
        return false;
    return f->fast ? rb_contains_fast(f, h) : rb_contains_ref(f, h);
}

void amq_ribbon_contains_batch(const amq_ribbon *f, const uint64_t *h,
                               size_t n, uint8_t *out) {
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
static uint64_t rb_choose_upper(const amq_ribbon *f, const rb_layer *l,
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
static double rb_rate(const amq_ribbon *f) {
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
        fpr += reach * (lower * ldexp(1.0, -(int)f->r) +
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

static uint64_t rb_min_blocks(unsigned band) { return band / 64 + 1; }

static amq_status rb_rows_to_blocks(double rows, unsigned band,
                                    uint64_t *blocks) {
    double b = ceil(rows / 64.0);
    if (!(b <= (double)RB_MAX_BLOCKS))
        return AMQ_ERR_OVERFLOW;
    *blocks = (uint64_t)b < rb_min_blocks(band) ? rb_min_blocks(band)
                                                : (uint64_t)b;
    return AMQ_OK;
}

/* A standard layer of n keys: n (1 + overhead) rows plus one band of
 * slack (so the table is never narrower than a window). */
static amq_status rb_standard_blocks(size_t n, unsigned band,
                                     uint64_t *blocks) {
    return rb_rows_to_blocks(
        (double)n * (1.0 + rb_overhead(n, band)) + band + 64, band, blocks);
}

static amq_status rb_bumped_blocks(size_t n, unsigned band,
                                   uint64_t *blocks) {
    double load = band == 128 ? RB_LOAD128 : RB_LOAD64;
    return rb_rows_to_blocks(ceil((double)n * load), band, blocks);
}

static void rb_set_blocks(rb_layer *l, uint64_t blocks, unsigned band) {
    l->blocks = blocks;
    l->starts = blocks * 64 - band + 1;
}

/* Seeds: one fixed sequence per layer, indexed by the attempt. */
static uint64_t rb_seed(uint32_t layer, unsigned attempt) {
    uint64_t i = (uint64_t)attempt * RB_MAX_LAYERS + layer;
    return amq__mix64(0x2545f4914f6cdd1dULL + i * 0x9e3779b97f4a7c15ULL);
}

/* ---- construction: sorting the mixed hashes ----------------------------- */

/* ---- construction: banding ---------------------------------------------- */

typedef struct rb_band {
    uint64_t *c64;  /* W = 64: coefficients, 0 = empty row */
    rb_u128 *c128;  /* W = 128                             */
    uint32_t *res;  /* right-hand sides (where the coefficient is not 0) */
    uint64_t rows;
} rb_band;

static void rb_band_free(const amq__mem *m, rb_band *bd) {
    amq__free(m, bd->c64, (size_t)bd->rows * sizeof *bd->c64);
    amq__free(m, bd->c128, (size_t)bd->rows * sizeof *bd->c128);
    amq__free(m, bd->res, (size_t)bd->rows * sizeof *bd->res);
    memset(bd, 0, sizeof *bd);
}

static amq_status rb_band_alloc(const amq__mem *m, uint64_t rows,
                                unsigned band, rb_band *bd) {
    size_t c, r;
    memset(bd, 0, sizeof *bd);
    if (rows > SIZE_MAX ||
        !amq__mul((size_t)rows, band == 128 ? sizeof(rb_u128) : 8, &c) ||
        !amq__mul((size_t)rows, sizeof *bd->res, &r))
        return AMQ_ERR_OVERFLOW;
    bd->rows = rows;
    if (band == 128)
        bd->c128 = amq__zalloc(m, c);
    else
        bd->c64 = amq__zalloc(m, c);
    bd->res = bd->c64 != NULL || bd->c128 != NULL ? amq__alloc(m, r) : NULL;
    if (bd->res == NULL) {
        rb_band_free(m, bd);
        return AMQ_ERR_NOMEM;
    }
    return AMQ_OK;
}

static void rb_band_clear(rb_band *bd) {
    if (bd->c128 != NULL)
        memset(bd->c128, 0, (size_t)bd->rows * sizeof *bd->c128);
    else
        memset(bd->c64, 0, (size_t)bd->rows * sizeof *bd->c64);
}

typedef struct rb_eq {
    uint64_t start;
    rb_u128 coef;
    uint32_t fp;
} rb_eq;

/* What banding a layer needs to know. */
typedef struct rb_shape {
    uint64_t starts;
    uint32_t mask;        /* fingerprint bits solved (r or r + 1) */
    uint32_t bucket_log2;
    uint32_t thr[4];
} rb_shape;

static inline rb_eq rb_equation(uint64_t x, const rb_shape *g,
                                unsigned band) {
    rb_eq e;
    e.start = amq__reduce64(x, g->starts);
    e.coef = rb_coef_lo(x);
    if (band == 128)
        e.coef |= (rb_u128)rb_coef_hi(x) << 64;
    e.fp = rb_fp(x) & g->mask;
    return e;
}

static inline unsigned rb_ctz128(rb_u128 c) {
    uint64_t lo = (uint64_t)c;
    return lo ? (unsigned)__builtin_ctzll(lo)
              : 64 + (unsigned)__builtin_ctzll((uint64_t)(c >> 64));
}

/* The row where the equation lands, or RB_NO_ROW if it reduces to 0 = 0
 * or 0 = 1 (a dependent row: the key cannot be added). */
static inline uint64_t rb_insert64(rb_band *bd, uint64_t i, uint64_t c,
                                   uint32_t r) {
    for (;;) {
        uint64_t cur = bd->c64[i];
        if (cur == 0) {
            bd->c64[i] = c;
            bd->res[i] = r;
            return i;
        }
        c ^= cur;
        r ^= bd->res[i];
        if (c == 0)
            return RB_NO_ROW;
        unsigned tz = (unsigned)__builtin_ctzll(c);
        i += tz;
        c >>= tz;
    }
}

static inline uint64_t rb_insert128(rb_band *bd, uint64_t i, rb_u128 c,
                                    uint32_t r) {
    for (;;) {
        rb_u128 cur = bd->c128[i];
        if (cur == 0) {
            bd->c128[i] = c;
            bd->res[i] = r;
            return i;
        }
        c ^= cur;
        r ^= bd->res[i];
        if (c == 0)
            return RB_NO_ROW;
        unsigned tz = rb_ctz128(c);
        i += tz;
        c >>= tz;
    }
}

static inline uint64_t rb_insert(rb_band *bd, rb_eq e, unsigned band) {
    return band == 128 ? rb_insert128(bd, e.start, e.coef, e.fp)
                       : rb_insert64(bd, e.start, (uint64_t)e.coef, e.fp);
}

static inline void rb_clear_row(rb_band *bd, uint64_t i, unsigned band) {
    if (band == 128)
        bd->c128[i] = 0;
    else
        bd->c64[i] = 0;
}

/* One bucket's keys k[0..cnt) (ascending start from base), banded from the
 * highest offset down. Returns the bucket's code; the keys below its
 * threshold are not in the band (those inserted were the last ones, and
 * their rows are cleared again). A bucket fills at most B + W - 1 rows. */
static unsigned rb_band_bucket(rb_band *bd, const uint64_t *k, size_t cnt,
                               uint64_t base, const rb_shape *g,
                               unsigned band) {
    uint64_t row[RB_BUILD_BUCKET + 128];
    uint32_t off[RB_BUILD_BUCKET + 128];
    size_t top = 0;
    for (size_t q = cnt; q-- > 0;) {
        rb_eq e = rb_equation(k[q], g, band);
        uint32_t o = (uint32_t)(e.start - base);
        uint64_t at = rb_insert(bd, e, band);
        if (at != RB_NO_ROW) {
            row[top] = at;
            off[top++] = o;
            continue;
        }
        unsigned code = 1;
        while (g->thr[code] <= o) /* thr[3] = B > o */
            code++;
        while (top > 0 && off[top - 1] < g->thr[code])
            rb_clear_row(bd, row[--top], band);
        return code;
    }
    return 0;
}

/* A coded layer: band k[0..n) (ascending start) bucket by bucket, write
 * the codes, and move the bumped keys to k[0..return) in order. */
static size_t rb_band_coded(rb_band *bd, uint64_t *k, size_t n,
                            const rb_shape *g, uint64_t *meta,
                            unsigned band) {
    size_t i = 0, out = 0;
    while (i < n) {
        uint64_t bucket = amq__reduce64(k[i], g->starts) >> g->bucket_log2;
        uint64_t base = bucket << g->bucket_log2;
        size_t j = i + 1;
        while (j < n && (amq__reduce64(k[j], g->starts) >> g->bucket_log2) ==
                            bucket)
            j++;
        unsigned code = rb_band_bucket(bd, k + i, j - i, base, g, band);
        if (code != 0) {
            uint64_t cut = base + g->thr[code];
            meta[bucket / 32] |= (uint64_t)code << (bucket % 32 * 2);
            for (; i < j && amq__reduce64(k[i], g->starts) < cut; i++)
                k[out++] = k[i];
        }
        i = j;
    }
    return out;
}

/* A standard layer: every key must band. */
static bool rb_band_all(rb_band *bd, const uint64_t *k, size_t n,
                        const rb_shape *g, unsigned band) {
    for (size_t i = 0; i < n; i++)
        if (rb_insert(bd, rb_equation(k[i], g, band), band) == RB_NO_ROW)
            return false;
    return true;
}

/* ---- construction: back-substitution ------------------------------------ */

/* Last row first. state[j] bit k holds column j of row i + 1 + k; after a
 * block's 64 rows its low word is the block's word of column j. Columns a
 * block does not store are solved but dropped. Empty rows get 0. */
static void rb_solve64(const rb_band *bd, const rb_layer *l, uint32_t r,
                       uint64_t *sol) {
    uint64_t state[33];
    uint32_t rmax = r + (l->upper > 0);
    memset(state, 0, sizeof state);
    for (uint64_t b = l->blocks; b-- > 0;) {
        for (unsigned k = 64; k-- > 0;) {
            uint64_t i = b * 64 + k, c = bd->c64[i];
            uint32_t res = c != 0 ? bd->res[i] : 0;
            c >>= 1;
            for (uint32_t j = 0; j < rmax; j++) {
                uint64_t bit = ((res >> j) ^
                                (unsigned)__builtin_parityll(c & state[j])) &
                               1;
                state[j] = state[j] << 1 | bit;
            }
        }
        memcpy(sol + rb_offset(l, r, b), state,
               rb_cols(l, r, b) * sizeof *state);
    }
}

static void rb_solve128(const rb_band *bd, const rb_layer *l, uint32_t r,
                        uint64_t *sol) {
    rb_u128 state[33];
    uint64_t words[33];
    uint32_t rmax = r + (l->upper > 0);
    memset(state, 0, sizeof state);
    for (uint64_t b = l->blocks; b-- > 0;) {
        for (unsigned k = 64; k-- > 0;) {
            uint64_t i = b * 64 + k;
            rb_u128 c = bd->c128[i];
            uint32_t res = c != 0 ? bd->res[i] : 0;
            c >>= 1;
            for (uint32_t j = 0; j < rmax; j++) {
                rb_u128 v = c & state[j];
                uint64_t bit =
                    ((res >> j) ^ (unsigned)__builtin_parityll(
                                      (uint64_t)v ^ (uint64_t)(v >> 64))) &
                    1;
                state[j] = state[j] << 1 | bit;
            }
        }
        for (uint32_t j = 0; j < rmax; j++)
            words[j] = (uint64_t)state[j];
        memcpy(sol + rb_offset(l, r, b), words,
               rb_cols(l, r, b) * sizeof *words);
    }
}

/* ---- construction: the layers ------------------------------------------- */

typedef struct rb_work {
    rb_band band[RB_MAX_LAYERS];
    uint64_t *meta[RB_MAX_LAYERS];
    size_t meta_words[RB_MAX_LAYERS];
    uint64_t *keys;
    size_t nkeys;
} rb_work;

static void rb_work_free(const amq__mem *m, rb_work *w) {
    for (uint32_t i = 0; i < RB_MAX_LAYERS; i++) {
        rb_band_free(m, &w->band[i]);
        amq__free(m, w->meta[i], w->meta_words[i] * sizeof *w->meta[i]);
    }
    amq__free(m, w->keys, w->nkeys * sizeof *w->keys);
    memset(w, 0, sizeof *w);
}

static size_t rb_meta_words(const rb_layer *l, uint32_t bucket_log2) {
    uint64_t buckets = ((l->starts - 1) >> bucket_log2) + 1;
    return (size_t)((buckets + 31) / 32);
}

static rb_shape rb_shape_of(const amq_ribbon *f, const rb_layer *l) {
    rb_shape g;
    g.starts = l->starts;
    g.mask = rb_mask(f->r + (f->bits64 % 64 != 0));
    g.bucket_log2 = f->bucket_log2;
    memcpy(g.thr, f->thr, sizeof g.thr);
    return g;
}

/* The last, standard layer i over k[0..n) (their hashes for this layer,
 * mixed with its seed). On failure: the next seed (the keys are unmixed
 * back to the previous layer's hashes and mixed again) and, every 8th
 * time, ~1/8 more rows. */
static amq_status rb_last_layer(const amq__mem *m, amq_ribbon *f,
                                rb_work *w, uint64_t *k, size_t n,
                                uint32_t i) {
    rb_layer *l = &f->layer[i];
    uint64_t blocks;
    AMQ_RETURN_IF_ERR(rb_standard_blocks(n, f->band, &blocks));
    f->layers = i + 1;
    l->coded = false;
    for (unsigned a = 0; a < AMQ_STATIC_MAX_ATTEMPTS; a++) {
        if (a > 0) {
            uint64_t seed = rb_seed(i, a);
            for (size_t j = 0; j < n; j++)
                k[j] = rb_mix(rb_unmix(k[j]) - l->seed, seed);
            l->seed = seed;
            if (a % RB_GROW_EVERY == 0 &&
                (blocks += blocks / 8 + 1) > RB_MAX_BLOCKS)
                return AMQ_ERR_OVERFLOW;
        }
        rb_set_blocks(l, blocks, f->band);
        if (w->band[i].rows != blocks * 64) {
            rb_band_free(m, &w->band[i]);
            AMQ_RETURN_IF_ERR(
                rb_band_alloc(m, blocks * 64, f->band, &w->band[i]));
        } else if (a > 0) {
            rb_band_clear(&w->band[i]);
        }
        rb_shape g = rb_shape_of(f, l);
        if (rb_band_all(&w->band[i], k, n, &g, f->band))
            return AMQ_OK;
    }
    return AMQ_ERR_FULL;
}

/* Coded layer i over k[0..n) (sorted); returns the bumped count, the
 * bumped keys compacted to k[0..). */
static amq_status rb_coded_layer(const amq__mem *m, amq_ribbon *f,
                                 rb_work *w, uint64_t *k, size_t n,
                                 uint32_t i, size_t *bumped) {
    rb_layer *l = &f->layer[i];
    uint64_t blocks;
    AMQ_RETURN_IF_ERR(rb_bumped_blocks(n, f->band, &blocks));
    rb_set_blocks(l, blocks, f->band);
    l->coded = true;
    f->layers = i + 1;
    AMQ_RETURN_IF_ERR(rb_band_alloc(m, blocks * 64, f->band, &w->band[i]));
    w->meta_words[i] = rb_meta_words(l, f->bucket_log2);
    w->meta[i] = amq__zalloc(m, w->meta_words[i] * sizeof *w->meta[i]);
    if (w->meta[i] == NULL) {
        w->meta_words[i] = 0;
        return AMQ_ERR_NOMEM;
    }
    l->meta = w->meta[i];
    rb_shape g = rb_shape_of(f, l);
    *bumped = rb_band_coded(&w->band[i], k, n, &g, w->meta[i], f->band);
    if (*bumped == 0) { /* nothing went on: this is the last layer */
        l->coded = false;
        l->meta = NULL;
    }
    return AMQ_OK;
}

/* Whether keys go to a coded layer i: enough of them, not the last
 * possible layer, and (i > 0) at most half of the previous layer's keys,
 * so their sorted copy fits in the space that layer's keys used. */
static bool rb_next_coded(const amq_ribbon *f, uint32_t i, size_t n,
                          size_t prev) {
    return f->bump && n >= RB_BUMP_MIN && i + 1 < RB_MAX_LAYERS &&
           (i == 0 || 2 * n <= prev);
}

/* Band every layer. w->keys holds layer 0's keys, sorted and without
 * repeats; each coded layer leaves its bumped keys at the front of its
 * range, and the next layer's keys go right after them. */
static amq_status rb_band_layers(const amq__mem *m, amq_ribbon *f,
                                 rb_work *w, size_t n) {
    uint64_t *k = w->keys;
    bool coded = rb_next_coded(f, 0, n, 0);
    for (uint32_t i = 0;; i++) {
        if (!coded)
            return rb_last_layer(m, f, w, k, n, i);
        size_t nb;
        AMQ_RETURN_IF_ERR(rb_coded_layer(m, f, w, k, n, i, &nb));
        if (nb == 0)
            return AMQ_OK;
        uint64_t seed = rb_seed(i + 1, 0);
        f->layer[i + 1].seed = seed;
        coded = rb_next_coded(f, i + 1, nb, n);
        if (coded) {
            size_t got;
            AMQ_RETURN_IF_ERR(amq__sort_keys(m, k, nb, true, seed, false, k + nb, &got));
            k += nb;
        } else {
            for (size_t j = 0; j < nb; j++)
                k[j] = rb_mix(k[j], seed);
        }
        n = nb;
    }
}

/* ---- the object --------------------------------------------------------- */

/* Words of f's table: the solutions layer by layer, then the codes of
 * the coded layers. Sets each layer's lower and words. false on
 * overflow. */
static bool rb_layout(amq_ribbon *f, size_t *words) {
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
static void rb_point(amq_ribbon *f, const uint64_t *t) {
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
static amq_status rb_new(const amq_ribbon *hdr, const amq_options *opt,
                         amq_ribbon **out) {
    amq_ribbon *f;
    AMQ_RETURN_IF_ERR(amq__obj_new(sizeof *f, opt, (void **)&f));
    amq__obj o = f->o;
    *f = *hdr;
    o.items = hdr->o.items;
    f->o = o;
    f->fast = !(opt != NULL && (opt->flags & AMQ_OPT_SCALAR)) && rb_cpu_fast();
    *out = f;
    return AMQ_OK;
}

/* Give f its table: borrowed (a view) or allocated (zeroed). */
static amq_status rb_attach(amq_ribbon *f, size_t words,
                            const uint64_t *borrow) {
    void *wr = NULL;
    if (words > SIZE_MAX / 8)
        return AMQ_ERR_OVERFLOW;
    if (borrow != NULL || words != 0)
        AMQ_RETURN_IF_ERR(amq__obj_table(&f->o, words * 8, borrow, &wr));
    rb_point(f, borrow != NULL ? borrow : wr);
    return AMQ_OK;
}

void amq_ribbon_free(amq_ribbon *f) { amq__obj_free(f ? &f->o : NULL); }

/* After banding: U per layer, the table, the solutions and the codes. */
static amq_status rb_finish(amq_ribbon *hdr, const rb_work *w,
                            const amq_options *opt, amq_ribbon **out) {
    double frac = (double)(hdr->bits64 % 64) / 64.0;
    size_t words;
    for (uint32_t i = 0; i < hdr->layers; i++) {
        rb_layer *l = &hdr->layer[i]; /* frac == 0 when r == 32 */
        l->upper = (uint32_t)rb_choose_upper(hdr, l, frac);
    }
    if (!rb_layout(hdr, &words))
        return AMQ_ERR_OVERFLOW;
    amq_ribbon *f;
    AMQ_RETURN_IF_ERR(rb_new(hdr, opt, &f));
    amq_status st = rb_attach(f, words, NULL);
    if (st != AMQ_OK) {
        amq_ribbon_free(f);
        return st;
    }
    for (uint32_t i = 0; i < f->layers; i++) {
        rb_layer *l = &f->layer[i];
        uint64_t *sol = (uint64_t *)(uintptr_t)l->sol;
        if (f->band == 128)
            rb_solve128(&w->band[i], l, f->r, sol);
        else
            rb_solve64(&w->band[i], l, f->r, sol);
        if (l->coded)
            memcpy((uint64_t *)(uintptr_t)l->meta, w->meta[i],
                   w->meta_words[i] * sizeof *w->meta[i]);
    }
    f->fpr = rb_rate(f);
    *out = f;
    return AMQ_OK;
}

static void rb_header(amq_ribbon *f, uint32_t bits64, unsigned band,
                      bool bump) {
    const rb_bucket_shape *b = band == 128 ? &rb_bucket128 : &rb_bucket64;
    memset(f, 0, sizeof *f);
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

/* bits in 1/64 steps, 64..2048. */
static amq_status rb_build(const uint64_t *h, size_t n, uint32_t bits64,
                           unsigned band, bool bump, const amq_options *opt,
                           amq_ribbon **out) {
    amq__mem mem;
    amq_ribbon hdr;
    rb_work w;
    if (out == NULL || (h == NULL && n != 0) || bits64 < 64 ||
        bits64 > 32 * 64 || (band != 64 && band != 128))
        return AMQ_ERR_INVALID;
    *out = NULL;
    rb_header(&hdr, bits64, band, bump);
    if (n == 0)
        return rb_finish(&hdr, NULL, opt, out);
    if (n > SIZE_MAX / 8 || (double)n > (double)RB_MAX_BLOCKS * 32)
        return AMQ_ERR_OVERFLOW;
    amq__mem_init(&mem, opt);
    memset(&w, 0, sizeof w);
    w.nkeys = n;
    w.keys = amq__alloc(&mem, n * sizeof *w.keys);
    amq_status st = w.keys != NULL ? AMQ_OK : AMQ_ERR_NOMEM;
    size_t distinct = 0;
    if (st == AMQ_OK) {
        hdr.layer[0].seed = rb_seed(0, 0);
        st = amq__sort_keys(&mem, h, n, true, hdr.layer[0].seed, true, w.keys,
                           &distinct);
        hdr.o.items = distinct;
    }
    if (st == AMQ_OK)
        st = rb_band_layers(&mem, &hdr, &w, distinct);
    if (st == AMQ_OK)
        st = rb_finish(&hdr, &w, opt, out);
    rb_work_free(&mem, &w);
    return st;
}

amq_status amq_ribbon_build(const uint64_t *hashes, size_t n, double bits,
                            unsigned band, const amq_options *opt,
                            amq_ribbon **out) {
    if (!(bits >= 1.0 && bits <= 32.0))
        return AMQ_ERR_INVALID;
    return rb_build(hashes, n, (uint32_t)floor(bits * 64 + 0.5), band, true,
                    opt, out);
}

amq_status amq_ribbon_build_standard(const uint64_t *hashes, size_t n,
                                     double bits, unsigned band,
                                     const amq_options *opt,
                                     amq_ribbon **out) {
    if (!(bits >= 1.0 && bits <= 32.0))
        return AMQ_ERR_INVALID;
    return rb_build(hashes, n, (uint32_t)floor(bits * 64 + 0.5), band, false,
                    opt, out);
}

/* Peak for random keys: the sorted keys (8 n), every layer's band
 * (coefficient and right-hand side per row; bounded by a standard layer's
 * rows, with 1/16 to spare) and the sorter's scratch (a few partitions).
 * Measured at 10^6 and 10^7 keys: 20.0 (W = 64) and 28.0 (W = 128) bytes
 * per key; standard Ribbon 21.3-21.6. */
size_t amq_ribbon_build_memory(size_t n, unsigned band) {
    uint64_t blocks;
    size_t row = (band == 128 ? sizeof(rb_u128) : 8) + sizeof(uint32_t);
    size_t a, b, c;
    if ((band != 64 && band != 128) ||
        rb_standard_blocks(n, band, &blocks) != AMQ_OK ||
        blocks > SIZE_MAX / 64 ||
        !amq__mul((size_t)blocks * 68, row, &a) ||
        !amq__mul(n, sizeof(uint64_t), &b) || !amq__add(a, b, &a))
        return 0;
    c = (4 * (n >> 11) + 64) * 8 + ((size_t)1 << 16) * 4 + 4097 * 8;
    return amq__add(a, c, &a) ? a : 0;
}

uint64_t amq_ribbon_items(const amq_ribbon *f) { return f->o.items; }
size_t amq_ribbon_size_bytes(const amq_ribbon *f) {
    size_t words = 0;
    for (uint32_t i = 0; i < f->layers; i++)
        words += f->layer[i].words +
                 (f->layer[i].coded
                      ? rb_meta_words(&f->layer[i], f->bucket_log2)
                      : 0);
    return words * 8;
}
double amq_ribbon_bits(const amq_ribbon *f) { return f->bits64 / 64.0; }
unsigned amq_ribbon_band(const amq_ribbon *f) { return f->band; }
unsigned amq_ribbon_layers(const amq_ribbon *f) { return f->layers; }
bool amq_ribbon_bumped(const amq_ribbon *f) { return f->bump; }
double amq_ribbon_fpr_bound(const amq_ribbon *f) { return f->fpr; }

/* ---- the curve ---------------------------------------------------------- */

/* Rate at b solution bits per row: 2^-r (1 - f/2), r = floor(b), f = b - r
 * (the block mix above with U/B = f). */
static double rb_mixed_fpr(double b) {
    if (b <= 0)
        return 1.0;
    double r = floor(b), f = b - r;
    return ldexp(1.0 - f / 2.0, -(int)r);
}

/* Its inverse: the fewest solution bits per row for fpr. */
static double rb_bits_for(double fpr) {
    double r = floor(-log2(fpr));
    double f = 2.0 * (1.0 - fpr * exp2(r));
    return r + (f < 0 ? 0 : f);
}

/* bits per key = rho (rows per key) x solution bits per row + mu (code
 * bits per key). Standard: rho at 10^6 keys. Bumped: measured empty rows
 * at 10^6 keys (docs/drafts/ribbon.md) and 2 code bits per bucket of the
 * 0.97 n rows of layer 0. */
static void rb_curve_shape(unsigned band, bool bump, double *rho,
                           double *mu) {
    if (!bump) {
        *rho = 1.0 + rb_overhead(RB_CURVE_N, band);
        *mu = 0;
        return;
    }
    const rb_bucket_shape *b = band == 128 ? &rb_bucket128 : &rb_bucket64;
    *rho = band == 128 ? RB_CURVE_RHO128 : RB_CURVE_RHO64;
    *mu = 2.0 * (band == 128 ? RB_LOAD128 : RB_LOAD64) / b->size;
}

/* ---- the generic interface ---------------------------------------------- */

static amq_status spec_shape(amq__spec *spec, unsigned *band, bool *bump,
                             amq_diag *diag) {
    uint64_t w = 64, b = 1;
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "w", 64, 128, &w, NULL, diag));
    if (w != 64 && w != 128)
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "ribbon: w=%llu; the band is 64 or 128 wide",
                         (unsigned long long)w);
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "bump", 0, 1, &b, NULL, diag));
    *band = (unsigned)w;
    *bump = b != 0;
    return AMQ_OK;
}

static amq_status spec_bits(amq__spec *spec, double fpr, uint32_t *bits64,
                            amq_diag *diag) {
    double bits = 0;
    bool found;
    AMQ_RETURN_IF_ERR(amq__spec_f64(spec, "bits", 1.0, 32.0, &bits, &found,
                                    diag));
    if (found) {
        *bits64 = (uint32_t)floor(bits * 64 + 0.5);
        double r = *bits64 / 64.0;
        if (fpr != 0.0 && rb_mixed_fpr(r) > fpr)
            return amq__diag(diag, AMQ_ERR_INVALID, 0,
                             "ribbon:bits=%g gives a false-positive rate of "
                             "%g, above the target %g", r, rb_mixed_fpr(r),
                             fpr);
        return AMQ_OK;
    }
    if (fpr == 0.0)
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "ribbon needs a target fpr or bits=B (1 to 32)");
    double b = ceil(rb_bits_for(fpr) * 64) / 64;
    if (b > 32)
        return amq__diag(diag, AMQ_ERR_INVALID, 0,
                         "ribbon: fpr %g needs more than 32 bits per key",
                         fpr);
    *bits64 = (uint32_t)(b < 1 ? 64 : b * 64);
    return AMQ_OK;
}

static amq_status t_build(const amq__type *self, amq__spec *spec,
                          const uint64_t *h, size_t n, double fpr,
                          const amq_options *opt, amq__obj **out,
                          amq_diag *diag) {
    uint32_t bits64 = 0;
    unsigned band = 64;
    bool bump = true;
    amq_ribbon *f;
    (void)self;
    AMQ_RETURN_IF_ERR(spec_bits(spec, fpr, &bits64, diag));
    AMQ_RETURN_IF_ERR(spec_shape(spec, &band, &bump, diag));
    amq_status st = rb_build(h, n, bits64, band, bump, opt, &f);
    if (st == AMQ_ERR_FULL)
        return amq__diag(diag, st, 0, "ribbon: %zu keys did not band in %d "
                         "attempts", n, AMQ_STATIC_MAX_ATTEMPTS);
    AMQ_RETURN_IF_ERR(st);
    *out = &f->o;
    return AMQ_OK;
}

static bool t_contains(const amq__obj *o, uint64_t h) {
    return amq_ribbon_contains_hash((const amq_ribbon *)o, h);
}
static void t_batch(const amq__obj *o, const uint64_t *h, size_t n,
                    uint8_t *out) {
    amq_ribbon_contains_batch((const amq_ribbon *)o, h, n, out);
}
static double t_bound(const amq__obj *o) {
    return amq_ribbon_fpr_bound((const amq_ribbon *)o);
}
static size_t t_describe(const amq__obj *o, char *buf, size_t cap) {
    const amq_ribbon *f = (const amq_ribbon *)o;
    return amq__describe(buf, cap, "bits=%.17g,w=%u%s", amq_ribbon_bits(f),
                         f->band, f->bump ? "" : ",bump=0");
}

static amq_status t_curve(const amq__type *self, amq__spec *spec, double x,
                          bool inverse, double *out, amq_diag *diag) {
    unsigned band = 64;
    bool bump = true;
    double bits = 0, rho, mu;
    (void)self;
    AMQ_RETURN_IF_ERR(spec_shape(spec, &band, &bump, diag));
    /* bits= names a point of the curve, not its shape: accepted, unused. */
    AMQ_RETURN_IF_ERR(amq__spec_f64(spec, "bits", 1.0, 32.0, &bits, NULL,
                                    diag));
    rb_curve_shape(band, bump, &rho, &mu);
    *out = inverse ? rb_bits_for(x) * rho + mu : rb_mixed_fpr((x - mu) / rho);
    return AMQ_OK;
}

/* ---- frames ---------------------------------------------------------------
 *
 * Version 1 (standard Ribbon before bumping; still loaded and saved back
 * as it came), 40 bytes: seed u64 | items u64 | blocks u64 | r u32 |
 * upper u32 | bits64 u32 | band u32.
 *
 * Version 2, 48 + 24 L bytes (never 40): version u32 = 2 | band u32 |
 * bits64 u32 | r u32 | items u64 | layers L u32 (0..8) | flags u32 (bit 0:
 * bumped) | bucket u32 (B) | t1 u16 | t2 u16 | reserved u64 = 0; then per
 * layer: seed u64 | blocks u64
 * | upper u32 | reserved u32 = 0. Standard filters have B = t1 = t2 = 0
 * and L <= 1. The payload: every layer's solution words (u64, block by
 * block), then the codes of layers 0..L-2 (u64 words, bucket k at bits
 * 2(k mod 32) of word k/32; bits past the last bucket are 0). */
#define V1_LEN 40
#define V2_HEAD 48
#define V2_LAYER 24

static void t_params_write(const amq__obj *o, amq__wr *w) {
    const amq_ribbon *f = (const amq_ribbon *)o;
    if (f->legacy) {
        amq__wr_u64(w, f->layer[0].seed);
        amq__wr_u64(w, o->items);
        amq__wr_u64(w, f->layer[0].blocks);
        amq__wr_u32(w, f->r);
        amq__wr_u32(w, f->layer[0].upper);
        amq__wr_u32(w, f->bits64);
        amq__wr_u32(w, f->band);
        return;
    }
    amq__wr_u32(w, RB_VERSION);
    amq__wr_u32(w, f->band);
    amq__wr_u32(w, f->bits64);
    amq__wr_u32(w, f->r);
    amq__wr_u64(w, o->items);
    amq__wr_u32(w, f->layers);
    amq__wr_u32(w, f->bump ? 1 : 0);
    amq__wr_u32(w, f->thr[3]);
    amq__wr_u32(w, f->thr[1] | f->thr[2] << 16);
    amq__wr_u64(w, 0);
    for (uint32_t i = 0; i < f->layers; i++) {
        amq__wr_u64(w, f->layer[i].seed);
        amq__wr_u64(w, f->layer[i].blocks);
        amq__wr_u32(w, f->layer[i].upper);
        amq__wr_u32(w, 0);
    }
}

/* The fewest upper blocks giving at least a share frac of the starts
 * (version 1 sizing of U). */
static uint32_t rb_v1_upper(uint64_t blocks, unsigned band, double frac) {
    if (frac <= 0 || blocks == 0)
        return 0;
    double starts = (double)blocks * 64.0 - (band - 1);
    double u = ceil((frac * starts + (band - 1)) / 64.0);
    return (uint32_t)(u > (double)blocks ? (double)blocks : u);
}

static amq_status v1_parse(amq__rd *r, size_t len, amq_ribbon *f) {
    uint64_t seed, items, blocks;
    uint32_t cols, upper, bits64, band;
    amq__rd_u64(r, &seed);
    size_t at_items = amq__rd_u64(r, &items);
    size_t at_blocks = amq__rd_u64(r, &blocks);
    size_t at_cols = amq__rd_u32(r, &cols);
    size_t at_upper = amq__rd_u32(r, &upper);
    size_t at_bits = amq__rd_u32(r, &bits64);
    size_t at_band = amq__rd_u32(r, &band);
    if (band != 64 && band != 128)
        return amq__rd_bad(r, at_band, "band %u", band);
    if (bits64 / 64 < 1 || bits64 > 32 * 64)
        return amq__rd_bad(r, at_bits, "bits %u/64", bits64);
    if (cols != bits64 / 64)
        return amq__rd_bad(r, at_cols, "%u columns at %u/64 bits", cols,
                           bits64);
    if ((blocks == 0) != (items == 0) || items > blocks * 64)
        return amq__rd_bad(r, at_items, "%llu keys in %llu blocks",
                           (unsigned long long)items,
                           (unsigned long long)blocks);
    if (blocks > len / 8 || (blocks != 0 && blocks < rb_min_blocks(band)) ||
        blocks * cols + upper != (uint64_t)len / 8 || len % 8 != 0)
        return amq__rd_bad(r, at_blocks, "%llu blocks do not match %zu "
                           "payload bytes", (unsigned long long)blocks, len);
    if (upper != rb_v1_upper(blocks, band, (bits64 % 64) / 64.0) ||
        (upper != 0 && cols == 32))
        return amq__rd_bad(r, at_upper, "%u upper blocks", upper);
    rb_header(f, bits64, band, false);
    f->legacy = true;
    f->o.items = items;
    f->layers = blocks != 0;
    f->layer[0].seed = seed;
    f->layer[0].upper = upper;
    if (blocks != 0)
        rb_set_blocks(&f->layer[0], blocks, band);
    return AMQ_OK;
}

/* The header fields (first 48 bytes) of a version-2 frame; *at_items:
 * where the key count sits. */
static amq_status v2_head(amq__rd *r, amq_ribbon *f, size_t *at_items) {
    uint32_t version, band, bits64, cols, layers, flags, bucket, thr;
    uint64_t items;
    size_t at_version = amq__rd_u32(r, &version);
    size_t at_band = amq__rd_u32(r, &band);
    size_t at_bits = amq__rd_u32(r, &bits64);
    size_t at_cols = amq__rd_u32(r, &cols);
    *at_items = amq__rd_u64(r, &items);
    size_t at_layers = amq__rd_u32(r, &layers);
    size_t at_flags = amq__rd_u32(r, &flags);
    size_t at_bucket = amq__rd_u32(r, &bucket);
    size_t at_thr = amq__rd_u32(r, &thr);
    AMQ_RETURN_IF_ERR(amq__rd_zero64(r));
    uint32_t t1 = thr & 0xffff, t2 = thr >> 16;
    if (version != RB_VERSION)
        return amq__rd_bad(r, at_version, "unknown parameter version %u",
                           version);
    if (band != 64 && band != 128)
        return amq__rd_bad(r, at_band, "band %u", band);
    if (bits64 < 64 || bits64 > 32 * 64)
        return amq__rd_bad(r, at_bits, "bits %u/64", bits64);
    if (cols != bits64 / 64)
        return amq__rd_bad(r, at_cols, "%u columns at %u/64 bits", cols,
                           bits64);
    if (layers > RB_MAX_LAYERS || r->len != V2_HEAD + V2_LAYER * layers)
        return amq__rd_bad(r, at_layers, "layer count %u", layers);
    if (flags > 1 || (flags == 0 && layers > 1))
        return amq__rd_bad(r, at_flags, "flags %u with %u layers", flags,
                           layers);
    if (flags == 0 ? bucket != 0
                   : (bucket < 64 || bucket > RB_MAX_BUCKET ||
                      (bucket & (bucket - 1)) != 0))
        return amq__rd_bad(r, at_bucket, "bucket of %u rows", bucket);
    if (flags == 0 ? thr != 0 : (t1 > t2 || t2 > bucket))
        return amq__rd_bad(r, at_thr, "thresholds %u, %u", t1, t2);
    rb_header(f, bits64, band, flags == 1);
    if (flags == 1) {
        f->bucket_log2 = amq__log2_floor(bucket);
        f->thr[1] = t1;
        f->thr[2] = t2;
        f->thr[3] = bucket;
    }
    f->o.items = items;
    f->layers = layers;
    return AMQ_OK;
}

static amq_status v2_parse(amq__rd *r, size_t len, amq_ribbon *f) {
    size_t at_items;
    AMQ_RETURN_IF_ERR(v2_head(r, f, &at_items));
    uint64_t rows = 0;
    for (uint32_t i = 0; i < f->layers; i++) {
        rb_layer *l = &f->layer[i];
        uint64_t blocks;
        amq__rd_u64(r, &l->seed);
        size_t at_blocks = amq__rd_u64(r, &blocks);
        size_t at_upper = amq__rd_u32(r, &l->upper);
        AMQ_RETURN_IF_ERR(amq__rd_zero32(r));
        l->coded = i + 1 < f->layers;
        if (blocks < rb_min_blocks(f->band) || blocks > len / 8 ||
            blocks > RB_MAX_BLOCKS)
            return amq__rd_bad(r, at_blocks, "layer %u of %llu blocks", i,
                               (unsigned long long)blocks);
        if (l->upper > blocks || (l->upper != 0 && f->r == 32))
            return amq__rd_bad(r, at_upper, "layer %u: %u upper blocks", i,
                               l->upper);
        rb_set_blocks(l, blocks, f->band);
        rows += blocks * 64;
    }
    if ((f->o.items == 0) != (f->layers == 0) || f->o.items > rows)
        return amq__rd_bad(r, at_items, "%llu keys in %llu rows",
                           (unsigned long long)f->o.items,
                           (unsigned long long)rows);
    return AMQ_OK;
}

/* Code bits past a coded layer's last bucket must be 0 (one encoding per
 * filter, so frames re-save identically). */
static bool rb_meta_clean(const amq_ribbon *f, const uint64_t *payload) {
    const uint64_t *t = payload;
    for (uint32_t i = 0; i < f->layers; i++)
        t += f->layer[i].words;
    for (uint32_t i = 0; i < f->layers; i++) {
        const rb_layer *l = &f->layer[i];
        if (!l->coded)
            continue;
        uint64_t buckets = ((l->starts - 1) >> f->bucket_log2) + 1;
        size_t words = rb_meta_words(l, f->bucket_log2);
        uint64_t last;
        memcpy(&last, t + words - 1, sizeof last);
        if (buckets % 32 != 0 && (last >> (buckets % 32 * 2)) != 0)
            return false;
        t += words;
    }
    return true;
}

static amq_status t_load(const amq__type *self, amq__rd *r,
                         const uint8_t *payload, size_t len, bool view,
                         const amq_options *opt, amq__obj **out) {
    amq_ribbon hdr;
    size_t words;
    (void)self;
    memset(&hdr, 0, sizeof hdr);
    if (r->len == V1_LEN)
        AMQ_RETURN_IF_ERR(v1_parse(r, len, &hdr));
    else if (r->len >= V2_HEAD)
        AMQ_RETURN_IF_ERR(v2_parse(r, len, &hdr));
    else
        return amq__rd_bad(r, r->base, "parameter block of %zu bytes",
                           r->len);
    if (!rb_layout(&hdr, &words) || len % 8 != 0 || words != len / 8)
        return amq__rd_bad(r, AMQ__FRAME_OFF_PAYLOAD_LEN, "the layers need "
                           "other than %zu payload bytes", len);
    /* Codes are read in place (the payload is 8-byte aligned). */
    rb_point(&hdr, (const uint64_t *)payload);
    if (words != 0 && !rb_meta_clean(&hdr, (const uint64_t *)payload))
        return amq__rd_bad(r, r->payload_at, "bits set past the last "
                           "bucket");
    amq_ribbon *f;
    AMQ_RETURN_IF_ERR(rb_new(&hdr, opt, &f));
    amq_status st =
        rb_attach(f, words, view ? (const uint64_t *)payload : NULL);
    if (st != AMQ_OK) {
        amq_ribbon_free(f);
        return st;
    }
    if (!view && len != 0)
        memcpy(f->o.block.ptr, payload, len);
    f->fpr = rb_rate(f);
    *out = &f->o;
    return AMQ_OK;
}

const amq__type amq__type_ribbon = {
    .info = {.name = "ribbon",
             .type_id = AMQ__ID_ribbon,
             .caps = AMQ_CAP_STATIC,
             .summary = "bumped Ribbon filter (BuRR), within ~0.5% of "
                        "r + phi bits per key, fractional bits (static)",
             .params = "bits=B (solution bits per key, 1-32 in steps of "
                       "1/64; default from the target fpr), w=64 or 128 "
                       "(band width), bump=1 (BuRR, default) or 0 "
                       "(standard Ribbon)",
             .default_hash = AMQ_HASH_XXH3},
    .build = t_build,
    .load = t_load,
    .contains = t_contains,
    .contains_batch = t_batch,
    .fpr_bound = t_bound,
    .describe = t_describe,
    .curve = t_curve,
    .params_write = t_params_write,
};
