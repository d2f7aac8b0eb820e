/*
 * ribbon.c — the standard Ribbon filter (Dillinger & Walzer, "Ribbon
 * filter: practically smaller than Bloom and Xor", 2021; Dillinger, Hübschle-
 * Schneider, Sanders & Walzer, "Fast Succinct Retrieval and Approximate
 * Membership using Ribbon", SEA 2022).
 *
 * A key's mixed hash x = mix64(h + seed) gives a start row s <= m - W, a
 * W-bit coefficient row c (W = 64, or 128 with w=128; bit 0 set: row s is
 * its pivot) and a fingerprint f. The filter stores a solution matrix S
 * (m rows, one bit per column) such that for every key and every column j
 * it uses,
 *
 *     parity(c & S_j[s .. s+W-1]) == bit j of f.
 *
 * A key never added matches one column with probability 1/2 (its f is
 * independent of S, s and c), so with r columns the rate is exactly 2^-r.
 *
 * Construction ("banding"): insert each equation into a band of m rows by
 * on-the-fly Gaussian elimination: at row s, if the row is empty the
 * equation lands there; otherwise xor the row's equation into it, skip to
 * the new lowest set bit, and go on. An equation that reduces to 0 = 0 is
 * a duplicate (or a dependent row); 0 = 1 is a contradiction. Either way the
 * attempt fails: the first failure removes duplicates by sorting a copy of
 * the hashes, and every failure moves to the next seed of a fixed sequence
 * (every 8th also adds ~1/8 more rows). Back-substitution then solves the
 * triangular band from the last row up.
 *
 * Storage: column-major, interleaved in 64-row blocks (the "ICML" layout of
 * Dillinger & Walzer): block b holds one 64-bit word per column, so a query
 * reads the two (W = 128: three) words covering its window per column.
 *
 * Width: the band must be wider for more keys (a longer band has more
 * places where a window is locally overloaded), so rows per key grow with
 * log n: W = 64 needs ~11% more rows than keys at n = 10^6, W = 128 ~4%
 * (rb_overhead; measured, docs/parts/static.md). W = 128 costs a third word
 * per column at query time and 16-byte coefficients during the build.
 *
 *   block:        0            1                 L-1           L  .. B-1
 *              +------+    +------+         +------+   +-------+
 *   columns    |r words|   |r words|  ...   |r words|  |r+1 words| ...
 *              +------+    +------+         +------+   +-------+
 *                 lower blocks: r columns      upper blocks: r+1 columns
 *
 * Fractional bits per key: the last U of the B blocks store one more
 * column. Columns never decrease with the block index, so a key starting in
 * block b finds every column it checks (those of block b) in block b+1
 * too, and back-substitution solves all r+1 columns everywhere and simply
 * stores fewer in lower blocks (each key's equation only involves rows at
 * or after its start). A key checks the columns of its start block, so
 *
 *     fpr = ((#starts in lower blocks) 2^-r + (#starts in upper) 2^-(r+1))
 *           / (m - W + 1),
 *
 * which fpr_bound() returns exactly. Mixing 2^-r and 2^-(r+1) linearly is
 * worse than 2^-(r + U/B) by convexity (at most 0.086 bits, at U/B = 1/2):
 * bits=6.5 gives 2^-6.415, and a target fpr is met by choosing U from the
 * mixed formula, not from the log.
 *
 * Invariants: 1 <= r <= 32, r + (U > 0) <= 32, U <= B; W in {64, 128};
 * items == 0 iff B == 0 (an empty filter has no table and answers false);
 * otherwise 64 B >= W + 64.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amq/static.h"
#include "core/bits.h"
#include "core/mem.h"
#include "filter/type.h"

#define RB_BATCH 16
#define RB_GROW_EVERY 8
#define RB_SORT_BITS 10
/* The curve's key count: rows per key as at n = 10^6. */
#define RB_CURVE_N 1000000

typedef unsigned __int128 rb_u128;

/* Multipliers deriving the coefficients and the fingerprint from the mixed
 * hash (odd, from splitmix64). Part of the file format: never edit. */
#define COEF_XOR 0x3c6ef372fe94f82bULL
#define COEF_XOR_HI 0x510e527fade682d1ULL
#define FP_MUL 0xa54ff53a5f1d36f1ULL

struct amq_ribbon {
    amq__mem mem;
    amq__block table; /* raw == NULL for a view or an empty filter */
    const uint64_t *sol;
    uint64_t seed, items;
    uint64_t blocks; /* B; rows m = 64 B                          */
    uint32_t r;      /* columns in lower blocks                   */
    uint32_t upper;  /* U: blocks with r + 1 columns (the last U) */
    uint32_t bits64; /* requested bits per key in 1/64 steps      */
    uint32_t band;   /* W: 64 or 128                              */
};

/* ---- a key's equation --------------------------------------------------- */

typedef struct rb_eq {
    uint64_t start;
    rb_u128 coef;
    uint32_t fp;
} rb_eq;

static inline uint64_t rb_mix(uint64_t h, uint64_t seed) {
    return amq__mix64(h + seed);
}

static inline uint64_t rb_start(uint64_t x, uint64_t rows, unsigned band) {
    return amq__reduce64(x, rows - band + 1);
}

static inline rb_eq rb_equation(uint64_t x, uint64_t rows, unsigned band) {
    rb_eq e;
    uint64_t hi = band == 128 ? amq__mix64(x ^ COEF_XOR_HI) : 0;
    e.start = rb_start(x, rows, band);
    e.coef = (rb_u128)hi << 64 | (amq__mix64(x ^ COEF_XOR) | 1);
    e.fp = (uint32_t)((x * FP_MUL) >> 32);
    return e;
}

/* Columns stored in block b, and where its words start. */
static inline uint32_t rb_cols(const amq_ribbon *f, uint64_t b) {
    return f->r + (b >= f->blocks - f->upper);
}
static inline uint64_t rb_offset(const amq_ribbon *f, uint64_t b) {
    uint64_t lower = f->blocks - f->upper;
    return b * f->r + (b > lower ? b - lower : 0);
}

/* 64 window bits from words a, b starting sh bits into a. */
static inline uint64_t rb_window(uint64_t a, uint64_t b, unsigned sh) {
    return sh ? (a >> sh) | (b << (64 - sh)) : a;
}

/* One implementation for both band widths; callers pass a constant. The
 * window's blocks exist: s <= m - W puts block s/64 + W/64 (needed only
 * when s % 64 != 0) inside the table. */
static inline bool rb_check_w(const amq_ribbon *f, uint64_t x,
                              unsigned band) {
    rb_eq e = rb_equation(x, f->blocks * 64, band);
    uint64_t b = e.start / 64;
    unsigned sh = (unsigned)(e.start % 64);
    uint32_t cols = rb_cols(f, b);
    const uint64_t *w0 = f->sol + rb_offset(f, b);
    const uint64_t *w1 = sh || band == 128 ? f->sol + rb_offset(f, b + 1) : w0;
    const uint64_t *w2 = band == 128 && sh ? f->sol + rb_offset(f, b + 2) : w1;
    uint64_t clo = (uint64_t)e.coef, chi = (uint64_t)(e.coef >> 64);
    /* Column by column, stopping at the first mismatch: a key never added
     * fails each column with probability 1/2, so it costs ~2 columns. */
    for (uint32_t j = 0; j < cols; j++) {
        uint64_t par = rb_window(w0[j], w1[j], sh) & clo;
        if (band == 128)
            par ^= rb_window(w1[j], w2[j], sh) & chi;
        if (((unsigned)__builtin_parityll(par) ^ (e.fp >> j)) & 1)
            return false;
    }
    return true;
}

static inline bool rb_check(const amq_ribbon *f, uint64_t x) {
    return f->band == 128 ? rb_check_w(f, x, 128) : rb_check_w(f, x, 64);
}

bool amq_ribbon_contains_hash(const amq_ribbon *f, uint64_t h) {
    return f->blocks != 0 && rb_check(f, rb_mix(h, f->seed));
}

/* Batch: prefetch both blocks of a group of keys, then check them. */
void amq_ribbon_contains_batch(const amq_ribbon *f, const uint64_t *h,
                               size_t n, uint8_t *out) {
    if (f->blocks == 0) {
        memset(out, 0, n);
        return;
    }
    uint64_t rows = f->blocks * 64;
    for (size_t i = 0; i < n; i += RB_BATCH) {
        size_t m = n - i < RB_BATCH ? n - i : RB_BATCH;
        uint64_t x[RB_BATCH];
        for (size_t j = 0; j < m; j++) {
            x[j] = rb_mix(h[i + j], f->seed);
            uint64_t b = rb_start(x[j], rows, f->band) / 64;
            for (uint64_t k = 0; k <= f->band / 64 && b + k < f->blocks; k++)
                amq__prefetch(f->sol + rb_offset(f, b + k));
        }
        for (size_t j = 0; j < m; j++)
            out[i + j] = rb_check(f, x[j]);
    }
}

/* ---- shape -------------------------------------------------------------- */

/* Rows per key beyond one that a band of width W needs to succeed at the
 * first attempt most of the time. It grows with log n: more keys, more
 * places where a window of the band is locally overloaded. Measured
 * first-attempt successes, W = 64: n = 10^4: 6% 39/40, 7% 40/40; 10^5:
 * 8% 17/20, 9% 19/20, 10% 20/20; 10^6: 9% 6/8, 10% 8/8. W = 128: 10^5:
 * 3% 9/10, 3.5% 10/10; 10^6: 3.5% 3/4, 4% 4/4 (docs/parts/static.md). */
static double rb_overhead(size_t n, unsigned band) {
    double l = log10((double)(n ? n : 1));
    double ov = band == 128 ? 0.01 * l - 0.02 : 0.02 * l - 0.01;
    double floor_ov = band == 128 ? 0.015 : 0.05;
    return ov < floor_ov ? floor_ov : ov;
}

/* Blocks for n keys: n (1 + overhead) rows plus one band of slack (so the
 * table is never narrower than a window), in whole 64-row blocks. */
static amq_status rb_blocks_for(size_t n, unsigned band, uint64_t *blocks) {
    double rows = (double)n * (1.0 + rb_overhead(n, band)) + band + 64;
    if (n == 0) {
        *blocks = 0;
        return AMQ_OK;
    }
    if (rows > 0x1p56)
        return AMQ_ERR_OVERFLOW;
    *blocks = (uint64_t)ceil(rows / 64.0);
    return AMQ_OK;
}

/* Starts in upper blocks: the last U blocks less the W - 1 rows no window
 * starts at. */
static double rb_upper_starts(uint32_t upper, unsigned band) {
    double u = (double)upper * 64.0 - (band - 1);
    return u > 0 ? u : 0;
}

/* The fewest upper blocks that give at least a share frac of the starts,
 * so the rate never exceeds the mix formula 2^-r (1 - frac/2). */
static uint32_t rb_upper(uint64_t blocks, unsigned band, double frac) {
    if (frac <= 0 || blocks == 0)
        return 0;
    double starts = (double)blocks * 64.0 - (band - 1);
    double u = ceil((frac * starts + (band - 1)) / 64.0);
    return (uint32_t)(u > (double)blocks ? (double)blocks : u);
}

/* ---- construction: banding ---------------------------------------------- */

typedef struct rb_work {
    rb_u128 *coef;  /* [rows] 0: empty row */
    uint32_t *res;  /* [rows]              */
    uint64_t *key;  /* [n] mixed hashes, grouped by start */
    uint64_t rows;
    size_t n;
} rb_work;

static void rb_work_free(const amq__mem *m, rb_work *w) {
    amq__free(m, w->coef, (size_t)w->rows * sizeof *w->coef);
    amq__free(m, w->res, (size_t)w->rows * sizeof *w->res);
    amq__free(m, w->key, w->n * sizeof *w->key);
    memset(w, 0, sizeof *w);
}

static amq_status rb_work_alloc(const amq__mem *m, uint64_t rows, size_t n,
                                rb_work *w) {
    size_t a, b, c;
    memset(w, 0, sizeof *w);
    if (rows > SIZE_MAX || !amq__mul((size_t)rows, sizeof *w->coef, &a) ||
        !amq__mul((size_t)rows, sizeof *w->res, &b) ||
        !amq__mul(n, sizeof *w->key, &c))
        return AMQ_ERR_OVERFLOW;
    w->rows = rows;
    w->n = n;
    w->coef = amq__alloc(m, a);
    w->res = w->coef ? amq__alloc(m, b) : NULL;
    w->key = w->res ? amq__alloc(m, c) : NULL;
    if (w->key == NULL) {
        rb_work_free(m, w);
        return AMQ_ERR_NOMEM;
    }
    return AMQ_OK;
}

/* Mixed hashes grouped by their top bits (start rows are monotone in x),
 * so banding walks the band roughly in order and stays in cache. */
static void rb_group(uint64_t seed, const uint64_t *h, size_t n, rb_work *w) {
    size_t start[(1u << RB_SORT_BITS) + 1];
    memset(start, 0, sizeof start);
    for (size_t i = 0; i < n; i++)
        start[(rb_mix(h[i], seed) >> (64 - RB_SORT_BITS)) + 1]++;
    for (size_t b = 1; b <= (1u << RB_SORT_BITS); b++)
        start[b] += start[b - 1];
    for (size_t i = 0; i < n; i++) {
        uint64_t x = rb_mix(h[i], seed);
        w->key[start[x >> (64 - RB_SORT_BITS)]++] = x;
    }
}

static inline unsigned rb_ctz(rb_u128 c) {
    uint64_t lo = (uint64_t)c;
    return lo ? (unsigned)__builtin_ctzll(lo)
              : 64 + (unsigned)__builtin_ctzll((uint64_t)(c >> 64));
}

static inline unsigned rb_parity(rb_u128 c) {
    return (unsigned)__builtin_parityll((uint64_t)c ^ (uint64_t)(c >> 64));
}

/* Insert one equation; false if it reduces to nothing (duplicate,
 * dependent or contradictory). */
static inline bool rb_insert(rb_work *w, rb_eq e) {
    uint64_t i = e.start;
    rb_u128 c = e.coef;
    uint32_t r = e.fp;
    for (;;) {
        if (w->coef[i] == 0) {
            w->coef[i] = c;
            w->res[i] = r;
            return true;
        }
        c ^= w->coef[i];
        r ^= w->res[i];
        if (c == 0)
            return false;
        unsigned tz = rb_ctz(c);
        i += tz;
        c >>= tz;
    }
}

static bool rb_band(uint64_t seed, const uint64_t *h, size_t n, rb_work *w,
                    uint64_t rows, unsigned band) {
    memset(w->coef, 0, (size_t)rows * sizeof *w->coef);
    rb_group(seed, h, n, w);
    for (size_t i = 0; i < n; i++)
        if (!rb_insert(w, rb_equation(w->key[i], rows, band)))
            return false;
    return true;
}

/* Back-substitution, last row first. state[j] bit k holds column j of row
 * i + 1 + k; columns a block does not store are solved but dropped. */
static void rb_solve(const rb_work *w, amq_ribbon *f, uint64_t *sol) {
    rb_u128 state[33];
    uint32_t rmax = f->r + (f->upper > 0);
    memset(state, 0, sizeof state);
    for (uint64_t b = f->blocks; b-- > 0;) {
        uint64_t words[33];
        memset(words, 0, sizeof words);
        for (unsigned k = 64; k-- > 0;) {
            uint64_t i = b * 64 + k;
            rb_u128 c = w->coef[i];
            for (uint32_t j = 0; j < rmax; j++) {
                uint64_t bit = 0;
                if (c != 0)
                    bit = ((w->res[i] >> j) ^ rb_parity((c >> 1) & state[j])) &
                          1;
                state[j] = (state[j] << 1) | bit;
                words[j] |= bit << k;
            }
        }
        memcpy(sol + rb_offset(f, b), words, rb_cols(f, b) * sizeof *words);
    }
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static amq_status rb_dedupe(const amq__mem *m, const uint64_t *h, size_t *n,
                            uint64_t **out, size_t *cap) {
    size_t bytes;
    if (!amq__mul(*n, sizeof *h, &bytes))
        return AMQ_ERR_OVERFLOW;
    uint64_t *c = amq__alloc(m, bytes);
    if (c == NULL)
        return AMQ_ERR_NOMEM;
    memcpy(c, h, bytes);
    qsort(c, *n, sizeof *c, cmp_u64);
    size_t k = 0;
    for (size_t i = 0; i < *n; i++)
        if (k == 0 || c[i] != c[k - 1])
            c[k++] = c[i];
    *cap = *n;
    *n = k;
    *out = c;
    return AMQ_OK;
}

static uint64_t rb_seed(unsigned attempt) {
    return amq__mix64(0x2545f4914f6cdd1dULL + attempt * 0x9e3779b97f4a7c15ULL);
}

/* Try seeds until every equation bands; blocks may grow. */
static amq_status rb_attempts(const amq__mem *m, uint64_t *blocks,
                              unsigned band, const uint64_t *h, size_t n,
                              uint64_t *seed, uint64_t *items, rb_work *w) {
    uint64_t *dedup = NULL;
    size_t dcap = 0;
    amq_status st = AMQ_OK;
    bool ok = false;
    for (unsigned a = 0; a < AMQ_STATIC_MAX_ATTEMPTS && st == AMQ_OK; a++) {
        uint64_t rows = *blocks * 64;
        if (rows > w->rows || w->coef == NULL) {
            rb_work_free(m, w);
            if ((st = rb_work_alloc(m, rows, n, w)) != AMQ_OK)
                break;
        }
        *seed = rb_seed(a);
        if ((ok = rb_band(*seed, dedup ? dedup : h, n, w, rows, band)))
            break;
        if (a == 0)
            st = rb_dedupe(m, h, &n, &dedup, &dcap);
        else if (a % RB_GROW_EVERY == 0)
            *blocks += *blocks / 8 + 1;
    }
    amq__free(m, dedup, dcap * sizeof *dedup);
    *items = n;
    if (st == AMQ_OK && !ok)
        st = AMQ_ERR_FULL;
    return st;
}

static size_t rb_words(uint64_t blocks, uint32_t r, uint32_t upper) {
    return (size_t)(blocks * r + upper);
}

static amq_status rb_alloc(uint64_t blocks, uint32_t r, uint32_t upper,
                           uint32_t bits64, unsigned band,
                           const amq_options *opt, const uint64_t *borrow,
                           amq_ribbon **out) {
    amq__mem mem;
    size_t bytes;
    if (blocks > SIZE_MAX / 64 / 33 ||
        !amq__mul(rb_words(blocks, r, upper), 8, &bytes))
        return AMQ_ERR_OVERFLOW;
    amq__mem_init(&mem, opt);
    amq_ribbon *f = amq__zalloc(&mem, sizeof *f);
    if (f == NULL)
        return AMQ_ERR_NOMEM;
    f->mem = mem;
    f->blocks = blocks;
    f->r = r;
    f->upper = upper;
    f->bits64 = bits64;
    f->band = band;
    if (borrow != NULL || blocks == 0) {
        f->sol = borrow;
    } else {
        amq_status st = amq__block_alloc(&mem, bytes, 64, &f->table);
        if (st != AMQ_OK) {
            amq__free(&mem, f, sizeof *f);
            return st;
        }
        f->sol = f->table.ptr;
    }
    *out = f;
    return AMQ_OK;
}

void amq_ribbon_free(amq_ribbon *f) {
    if (f == NULL)
        return;
    amq__mem mem = f->mem;
    if (f->table.raw != NULL)
        amq__block_free(&mem, &f->table);
    amq__free(&mem, f, sizeof *f);
}

/* bits in 1/64 steps, 64..2048. */
static amq_status rb_build(const uint64_t *h, size_t n, uint32_t bits64,
                           unsigned band, const amq_options *opt,
                           amq_ribbon **out) {
    amq__mem mem;
    rb_work w;
    uint64_t blocks, seed = 0, items = 0;
    if (out == NULL || (h == NULL && n != 0) || bits64 < 64 ||
        bits64 > 32 * 64 || (band != 64 && band != 128))
        return AMQ_ERR_INVALID;
    *out = NULL;
    AMQ_RETURN_IF_ERR(rb_blocks_for(n, band, &blocks));
    amq__mem_init(&mem, opt);
    memset(&w, 0, sizeof w);
    amq_status st = AMQ_OK;
    if (n != 0)
        st = rb_attempts(&mem, &blocks, band, h, n, &seed, &items, &w);
    uint32_t r = bits64 / 64;
    uint32_t upper = rb_upper(blocks, band, (double)(bits64 % 64) / 64.0);
    if (st == AMQ_OK)
        st = rb_alloc(blocks, r, upper, bits64, band, opt, NULL, out);
    if (st == AMQ_OK) {
        (*out)->seed = seed;
        (*out)->items = items;
        if (n != 0)
            rb_solve(&w, *out, (*out)->table.ptr);
    }
    rb_work_free(&mem, &w);
    return st;
}

amq_status amq_ribbon_build(const uint64_t *hashes, size_t n, double bits,
                            unsigned band, const amq_options *opt,
                            amq_ribbon **out) {
    if (!(bits >= 1.0 && bits <= 32.0))
        return AMQ_ERR_INVALID;
    return rb_build(hashes, n, (uint32_t)floor(bits * 64 + 0.5), band, opt,
                    out);
}

size_t amq_ribbon_build_memory(size_t n, unsigned band) {
    uint64_t blocks;
    size_t a, b;
    if ((band != 64 && band != 128) ||
        rb_blocks_for(n, band, &blocks) != AMQ_OK ||
        blocks > SIZE_MAX / 64 ||
        !amq__mul((size_t)blocks * 64, sizeof(rb_u128) + 4, &a) ||
        !amq__mul(n, sizeof(uint64_t), &b) || !amq__add(a, b, &a))
        return 0;
    return a;
}

uint64_t amq_ribbon_items(const amq_ribbon *f) { return f->items; }
size_t amq_ribbon_size_bytes(const amq_ribbon *f) {
    return rb_words(f->blocks, f->r, f->upper) * 8;
}
double amq_ribbon_bits(const amq_ribbon *f) { return f->bits64 / 64.0; }
unsigned amq_ribbon_band(const amq_ribbon *f) { return f->band; }

double amq_ribbon_fpr_bound(const amq_ribbon *f) {
    if (f->items == 0 || f->blocks == 0)
        return 0.0;
    double starts = (double)(f->blocks * 64 - f->band + 1);
    double upper_starts = rb_upper_starts(f->upper, f->band);
    return ((starts - upper_starts) * ldexp(1.0, -(int)f->r) +
            upper_starts * ldexp(1.0, -(int)f->r - 1)) /
           starts;
}

/* ---- the curve ---------------------------------------------------------- */

/* Rate at b solution bits per row: 2^-r (1 - f/2), r = floor(b), f = b - r
 * (the block mix above with U/B = f). */
static double rb_mixed_fpr(double b) {
    double r = floor(b), f = b - r;
    return ldexp(1.0 - f / 2.0, -(int)r);
}

/* Its inverse: the fewest solution bits per row for fpr. */
static double rb_bits_for(double fpr) {
    double r = floor(-log2(fpr));
    double f = 2.0 * (1.0 - fpr * exp2(r));
    return r + (f < 0 ? 0 : f);
}

/* ---- the generic interface ----------------------------------------------- */

static amq_status spec_band(amq__spec *spec, unsigned *band,
                            amq_diag *diag) {
    uint64_t w = 64;
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "w", 64, 128, &w, NULL, diag));
    if (w != 64 && w != 128)
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "ribbon: w=%llu; the band is 64 or 128 wide",
                         (unsigned long long)w);
    *band = (unsigned)w;
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

static amq_status t_create(amq__spec *spec, uint64_t capacity, double fpr,
                           const amq_options *opt, void **impl,
                           amq_diag *diag) {
    (void)spec, (void)capacity, (void)fpr, (void)opt, (void)impl;
    return amq__diag(diag, AMQ_ERR_UNSUPPORTED, 0,
                     "ribbon is static: build it from all keys with "
                     "amq_filter_build");
}

static amq_status t_build(amq__spec *spec, const uint64_t *h, size_t n,
                          double fpr, const amq_options *opt, void **impl,
                          amq_diag *diag) {
    uint32_t bits64 = 0;
    unsigned band = 64;
    AMQ_RETURN_IF_ERR(spec_bits(spec, fpr, &bits64, diag));
    AMQ_RETURN_IF_ERR(spec_band(spec, &band, diag));
    amq_status st = rb_build(h, n, bits64, band, opt, (amq_ribbon **)impl);
    if (st == AMQ_ERR_FULL)
        return amq__diag(diag, st, 0, "ribbon: %zu keys did not band in %d "
                         "attempts", n, AMQ_STATIC_MAX_ATTEMPTS);
    return st;
}

static void t_destroy(void *impl) { amq_ribbon_free(impl); }
static amq_status t_add(void *impl, uint64_t h) {
    (void)impl, (void)h;
    return AMQ_ERR_UNSUPPORTED;
}
static bool t_contains(const void *impl, uint64_t h) {
    return amq_ribbon_contains_hash(impl, h);
}
static void t_batch(const void *impl, const uint64_t *h, size_t n,
                    uint8_t *out) {
    amq_ribbon_contains_batch(impl, h, n, out);
}
static uint64_t t_items(const void *impl) { return amq_ribbon_items(impl); }
static size_t t_size(const void *impl) { return amq_ribbon_size_bytes(impl); }
static double t_bound(const void *impl) { return amq_ribbon_fpr_bound(impl); }
static size_t t_describe(const void *impl, char *buf, size_t cap) {
    int n = snprintf(buf, cap, "bits=%.17g,w=%u", amq_ribbon_bits(impl),
                     amq_ribbon_band(impl));
    return n > 0 ? (size_t)n : 0;
}

/* The curve: bits per key = rows per key at 10^6 keys x solution bits
 * per row. */
static amq_status curve_rows(amq__spec *spec, double *rows, amq_diag *diag) {
    unsigned band = 64;
    double bits = 0;
    AMQ_RETURN_IF_ERR(spec_band(spec, &band, diag));
    /* bits= names a point of the curve, not its shape: accepted, unused. */
    AMQ_RETURN_IF_ERR(amq__spec_f64(spec, "bits", 1.0, 32.0, &bits, NULL,
                                    diag));
    *rows = 1.0 + rb_overhead(RB_CURVE_N, band);
    return AMQ_OK;
}

static amq_status t_curve_fpr(amq__spec *spec, double bpk, double *out,
                              amq_diag *diag) {
    double rows;
    AMQ_RETURN_IF_ERR(curve_rows(spec, &rows, diag));
    *out = rb_mixed_fpr(bpk / rows);
    return AMQ_OK;
}

static amq_status t_curve_bits(amq__spec *spec, double fpr, double *out,
                               amq_diag *diag) {
    double rows;
    AMQ_RETURN_IF_ERR(curve_rows(spec, &rows, diag));
    *out = rb_bits_for(fpr) * rows;
    return AMQ_OK;
}

/* params: seed u64 | items u64 | blocks u64 | r u32 | upper u32 |
 * bits64 u32 | band u32 (64 or 128) */
#define PARAMS_LEN 40
static size_t t_params_size(const void *impl) {
    (void)impl;
    return PARAMS_LEN;
}
static void t_params_write(const void *impl, uint8_t *p) {
    const amq_ribbon *f = impl;
    amq__put_u64(p, f->seed);
    amq__put_u64(p + 8, f->items);
    amq__put_u64(p + 16, f->blocks);
    amq__put_u32(p + 24, f->r);
    amq__put_u32(p + 28, f->upper);
    amq__put_u32(p + 32, f->bits64);
    amq__put_u32(p + 36, f->band);
}
static size_t t_payload_size(const void *impl) { return t_size(impl); }
static void t_payload_write(const void *impl, uint8_t *dst) {
    const amq_ribbon *f = impl;
    if (f->blocks != 0)
        memcpy(dst, f->sol, amq_ribbon_size_bytes(f));
}

static amq_status t_load(const uint8_t *p, size_t plen, const uint8_t *payload,
                         size_t len, bool view, const amq_options *opt,
                         void **impl, amq_diag *diag) {
    if (plen != PARAMS_LEN)
        return amq__diag(diag, AMQ_ERR_CORRUPT, 64, "ribbon parameters: %zu "
                         "bytes, expected %d", plen, PARAMS_LEN);
    uint64_t seed = amq__get_u64(p), items = amq__get_u64(p + 8);
    uint64_t blocks = amq__get_u64(p + 16);
    uint32_t r = amq__get_u32(p + 24), upper = amq__get_u32(p + 28);
    uint32_t bits64 = amq__get_u32(p + 32), band = amq__get_u32(p + 36);
    if (r < 1 || r > 32 || bits64 / 64 != r || bits64 > 32 * 64 ||
        (band != 64 && band != 128))
        return amq__diag(diag, AMQ_ERR_CORRUPT, 64 + 16 + 24,
                         "ribbon: %u columns, bits %u/64, band %u", r,
                         bits64, band);
    if ((blocks == 0) != (items == 0) || blocks > len / 8 ||
        (blocks != 0 && blocks * 64 < band + 64) ||
        items > blocks * 64 ||
        upper != rb_upper(blocks, band, (bits64 % 64) / 64.0) ||
        (uint64_t)rb_words(blocks, r, upper) * 8 != (uint64_t)len)
        return amq__diag(diag, AMQ_ERR_CORRUPT, 64 + 16 + 16,
                         "ribbon: %llu blocks, %llu keys, %zu payload bytes",
                         (unsigned long long)blocks,
                         (unsigned long long)items, len);
    amq_ribbon *f;
    AMQ_RETURN_IF_ERR(rb_alloc(blocks, r, upper, bits64, band, opt,
                               view ? (const uint64_t *)payload : NULL, &f));
    if (!view && len != 0)
        memcpy(f->table.ptr, payload, len);
    f->seed = seed;
    f->items = items;
    *impl = f;
    return AMQ_OK;
}

const amq__type amq__type_ribbon = {
    .info = {.name = "ribbon",
             .type_id = 110,
             .caps = AMQ_CAP_STATIC,
             .summary = "standard Ribbon filter, 64-bit bands, fractional "
                        "bits per key (static)",
             .params = "bits=B (solution bits per key, 1-32 in steps of "
                       "1/64; default from the target fpr), w=64 or 128 "
                       "(band width; 128 needs fewer rows)",
             .default_hash = AMQ_HASH_XXH3},
    .create = t_create,
    .build = t_build,
    .destroy = t_destroy,
    .add = t_add,
    .contains = t_contains,
    .contains_batch = t_batch,
    .items = t_items,
    .size_bytes = t_size,
    .fpr_bound = t_bound,
    .describe = t_describe,
    .curve_fpr = t_curve_fpr,
    .curve_bits = t_curve_bits,
    .params_size = t_params_size,
    .params_write = t_params_write,
    .payload_size = t_payload_size,
    .payload_write = t_payload_write,
    .load = t_load,
};
