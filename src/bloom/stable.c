/*
 * stable.c — the stable Bloom filter (Deng & Rafiei, "Approximately
 * Detecting Duplicates for Streaming Data using Stable Bloom Filters",
 * SIGMOD 2006): a filter for an endless stream in fixed memory, which
 * forgets old keys so that its false-positive rate settles at a constant
 * instead of climbing to 1.
 *
 * m cells of w bits (w = 1, 2, 4 or 8: the least width holding Max). An
 * add first decrements P cells (saturating at 0), then sets the key's k
 * cells to Max; a query reports a key when all its k cells are nonzero.
 * The P cells are consecutive from a pseudo-random start, an option the
 * paper allows: every cell is still decremented with probability P/m per
 * add, which is all the analysis uses, and a run is a few word operations
 * (SWAR: one saturating decrement of every w-bit lane of a word).
 *
 *   words   [ c0 c1 c2 ... c7 ][ c8 ... c15 ] ...   (w = 8 shown)
 *   add x:  decrement cells start .. start+P-1 (wrapping), then
 *           cells reduce(h * M_i, m), i < k  := Max
 *
 * Stable point (the paper's Theorem 1): the fraction of zero cells tends to
 * z = (A / (1 + A))^Max with A = P (1/k - 1/m), and the stable FPR to
 * (1 - z)^k (amq_stable_fpr; derivation: docs/structures.md §"Stable Bloom
 * filter", Stable point).
 *
 * Sizing for (capacity n, fpr eps), the paper's design: cells and k as the
 * Bloom filter for (n, eps), Max = DEFAULT_MAX (3, 2-bit cells), and P the
 * fewest decrements per add whose stable FPR is at most eps (stable_p).
 * "stable=RATE" sets P for another stable FPR; "horizon=H" takes Max =
 * HOLD_MAX (255) and the largest P that loses no key within H n later adds
 * but with probability <= 1e-12 (recency_p), a Bloom filter up to capacity
 * with a stable FPR near 0.5 (docs/structures.md, "Keeping every recent
 * key").
 *
 * Invariants: m is a positive multiple of 64; 1 <= k <= 64; 1 <= Max <= 255
 * and every cell holds 0..Max; P <= m; `nonzero` counts nonzero cells, so
 * the certified bound (nonzero/m)^k is exact for a key never added.
 *
 * Failure modes: false negatives for keys added long ago, by design (the
 * last key added is always reported). Adds cannot fail otherwise; views
 * refuse updates. No union or intersection: cells carry ages, and neither
 * max nor min of two ages means anything for the stream.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bloom/partitioned.h"
#include "core/bits.h"
#include "type/type.h"

#define STABLE_MAX 255u
#define DEFAULT_MAX 3u /* the paper's design: 2-bit cells */
#define HOLD_MAX 255u  /* horizon=H: 8-bit cells */
#define TAIL 1e-12
#define STABLE_BATCH 16

struct amq_stable {
    amq__obj o; /* o.items counts adds; o.table the cells */
    uint64_t *words;
    uint64_t m; /* cells, multiple of 64 */
    unsigned w; /* bits per cell */
    unsigned k, max;
    uint64_t p;
    uint64_t nonzero;
};

/* ---- the mathematics ---------------------------------------------------- */

double amq_stable_zero_fraction(double m, unsigned k, unsigned max, double p) {
    double a = p * (1.0 / (double)k - 1.0 / m);
    if (k == 0 || !(a > 0.0))
        return 0.0;
    return pow(a / (1.0 + a), (double)max);
}

double amq_stable_fpr(double m, unsigned k, unsigned max, double p) {
    return pow(1.0 - amq_stable_zero_fraction(m, k, max, p), (double)k);
}

double amq_stable_p_for(double m, unsigned k, unsigned max, double fpr) {
    if (k == 0 || max == 0 || !(fpr > 0.0 && fpr < 1.0) || !(m > (double)k))
        return 0.0;
    double z = -expm1(log(fpr) / (double)k); /* 1 - fpr^{1/k} */
    double r = pow(z, 1.0 / (double)max);
    return r / (1.0 - r) / (1.0 / (double)k - 1.0 / m);
}

/* P(Poisson(lambda) >= t), summed from t up (the terms fall for i > lambda,
 * which holds for the lambdas searched below). */
static double pois_tail(double lambda, unsigned t) {
    double log_fact = 0.0, sum = 0.0; /* ln t!, without lgamma's global */
    for (unsigned i = 2; i <= t; i++)
        log_fact += log((double)i);
    double term = exp(-lambda + t * log(lambda) - log_fact);
    for (unsigned i = t; term > 1e-300 && i < t + 10000; i++) {
        sum += term;
        term *= lambda / (double)(i + 1);
    }
    return sum;
}

/* Largest mean number of decrements that reaches max with probability at
 * most TAIL. */
static double safe_lambda(unsigned max) {
    double lo = 0.0, hi = (double)max;
    for (int i = 0; i < 100; i++) {
        double mid = 0.5 * (lo + hi);
        if (mid > 0.0 && pois_tail(mid, max) <= TAIL)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

static unsigned width_for(unsigned max) {
    return max <= 1 ? 1 : max <= 3 ? 2 : max <= 15 ? 4 : 8;
}

/* ---- construction ------------------------------------------------------- */

static amq_status alloc_stable(const amq__mem *mem, uint64_t m, unsigned k,
                               unsigned max, uint64_t p, const uint64_t *borrow,
                               amq_stable **out) {
    if (m == 0 || m % 64 != 0 || k == 0 || k > AMQ__PART_MAX_K || max == 0 ||
        max > STABLE_MAX || p > m)
        return AMQ_ERR_INVALID;
    unsigned w = width_for(max);
    if (m / 8 > SIZE_MAX / w)
        return AMQ_ERR_OVERFLOW;
    amq_stable *s;
    void *wr;
    AMQ_RETURN_IF_ERR(amq__obj_new_in(sizeof *s, mem, (void **)&s));
    s->m = m;
    s->w = w;
    s->k = k;
    s->max = max;
    s->p = p;
    amq_status st = amq__obj_table(&s->o, (size_t)(m / 8) * w, borrow, &wr);
    if (st != AMQ_OK) {
        amq__obj_free(&s->o);
        return st;
    }
    s->words = borrow != NULL ? (uint64_t *)borrow : wr;
    *out = s;
    return AMQ_OK;
}

static uint64_t round_cells(uint64_t m) { return (m + 63) / 64 * 64; }

/* P for m cells such that a cell reaches max decrements within `adds`
 * adds with probability at most TAIL; at least 1. */
static uint64_t recency_p(uint64_t m, unsigned max, double adds) {
    double p = floor(safe_lambda(max) * (double)m / adds);
    return p < 1.0 ? 1 : p > (double)m ? m : (uint64_t)p;
}

/* The fewest decrements per add whose stable FPR is at most `rate` (the
 * real solution rounded up: more decrements, fewer nonzero cells), within
 * 1..m. */
static uint64_t stable_p(uint64_t m, unsigned k, unsigned max, double rate) {
    double p = ceil(amq_stable_p_for((double)m, k, max, rate));
    return p < 1.0 ? 1 : p > (double)m ? m : (uint64_t)p;
}

/* Cells and k as the Bloom filter for (capacity, fpr). */
static amq_status size_for(uint64_t capacity, double fpr, unsigned *k,
                           uint64_t *m) {
    if (capacity == 0 || !(fpr > 0.0 && fpr < 1.0))
        return AMQ_ERR_INVALID;
    double bpk = amq__partitioned_bits_for(fpr, *k);
    double cells = ceil(bpk * (double)capacity);
    if (!(cells < 0x1p58))
        return AMQ_ERR_OVERFLOW;
    if (*k == 0)
        *k = amq_bloom_optimal_k(bpk);
    *m = round_cells((uint64_t)cells);
    return AMQ_OK;
}

/* ---- cells -------------------------------------------------------------- */

/* The least significant bit of every w-bit lane. */
static uint64_t lane_lsb(unsigned w) {
    return w == 1   ? ~0ULL
           : w == 2 ? 0x5555555555555555ULL
           : w == 4 ? 0x1111111111111111ULL
                    : 0x0101010101010101ULL;
}

/* Per lane: its lsb position set iff any bit of the lane is set. */
static uint64_t fold(uint64_t x, unsigned w) {
    for (unsigned sh = 1; sh < w; sh <<= 1)
        x |= x >> sh;
    return x & lane_lsb(w);
}

static uint64_t cell_mask(const amq_stable *s) { return (1ULL << s->w) - 1; }

static unsigned cell_get(const amq_stable *s, uint64_t i) {
    uint64_t bit = i * s->w;
    return (unsigned)((s->words[bit >> 6] >> (bit & 63)) & cell_mask(s));
}

/* Lanes [lo, hi] of a word, as a mask of their lsb positions. */
static uint64_t lanes(const amq_stable *s, unsigned lo, unsigned hi) {
    unsigned from = lo * s->w, to = (hi + 1) * s->w;
    uint64_t upto = to >= 64 ? ~0ULL : (1ULL << to) - 1;
    return lane_lsb(s->w) & upto & ~((1ULL << from) - 1);
}

/* Saturating decrement of the lanes of word *x whose lsb is in `mask`;
 * returns how many of them reached zero. One implementation for every
 * width: callers pass w as a constant so the folds unroll. */
static inline unsigned dec_word(uint64_t *x, uint64_t mask, unsigned w) {
    uint64_t v = *x, nz = fold(v, w) & mask;
    uint64_t above_one = fold(v & ~lane_lsb(w), w);
    *x = v - nz;
    return amq__popcount64(nz & ~above_one);
}

/* Whole words [from, to): the hot loop of an add. */
static inline uint64_t dec_words(uint64_t *words, uint64_t from, uint64_t to,
                                 unsigned w) {
    uint64_t zeroed = 0, all = lane_lsb(w);
    for (uint64_t i = from; i < to; i++)
        zeroed += dec_word(&words[i], all, w);
    return zeroed;
}

static uint64_t dec_words_w(uint64_t *words, uint64_t from, uint64_t to,
                            unsigned w) {
    switch (w) {
    case 1: return dec_words(words, from, to, 1);
    case 2: return dec_words(words, from, to, 2);
    case 4: return dec_words(words, from, to, 4);
    default: return dec_words(words, from, to, 8);
    }
}

/* Saturating decrement of cells [a, a + len), a + len <= m: a partial
 * word at each end, whole words between. */
static void decrement_run(amq_stable *s, uint64_t a, uint64_t len) {
    unsigned per = 64 / s->w;
    uint64_t last = a + len - 1, wa = a / per, wl = last / per;
    unsigned lo = (unsigned)(a % per), hi = (unsigned)(last % per);
    if (wa == wl) {
        s->nonzero -= dec_word(&s->words[wa], lanes(s, lo, hi), s->w);
        return;
    }
    s->nonzero -= dec_word(&s->words[wa], lanes(s, lo, per - 1), s->w);
    s->nonzero -= dec_words_w(s->words, wa + 1, wl, s->w);
    s->nonzero -= dec_word(&s->words[wl], lanes(s, 0, hi), s->w);
}

/* The run's start: a pseudo-random function of the key and the add count,
 * so equal streams give equal filters (and frames). */
static uint64_t run_start(const amq_stable *s, uint64_t h) {
    return amq__reduce64(
        amq__mix64(h ^ (s->o.items * 0x9e3779b97f4a7c15ULL + 0x5354424cULL)),
        s->m);
}

static inline uint64_t probe(const amq_stable *s, uint64_t h, unsigned i) {
    return amq__reduce64(h * amq__part_mul[i], s->m);
}

static amq_status stable_add(amq__obj *o, uint64_t h) {
    amq_stable *s = (amq_stable *)o;
    if (s->p > 0) {
        uint64_t a = run_start(s, h), first = s->m - a;
        if (s->p <= first) {
            decrement_run(s, a, s->p);
        } else {
            decrement_run(s, a, first);
            decrement_run(s, 0, s->p - first);
        }
    }
    uint64_t full = (uint64_t)s->max;
    for (unsigned i = 0; i < s->k; i++) {
        uint64_t c = probe(s, h, i), bit = c * s->w;
        uint64_t *word = &s->words[bit >> 6];
        unsigned sh = (unsigned)(bit & 63);
        s->nonzero += ((*word >> sh) & cell_mask(s)) == 0;
        *word = (*word & ~(cell_mask(s) << sh)) | (full << sh);
    }
    s->o.items++;
    return AMQ_OK;
}

static bool stable_contains(const amq__obj *o, uint64_t h) {
    const amq_stable *s = (const amq_stable *)o;
    for (unsigned i = 0; i < s->k; i++)
        if (cell_get(s, probe(s, h, i)) == 0)
            return false;
    return true;
}

static void stable_batch(const amq__obj *o, const uint64_t *h, size_t n,
                         uint8_t *out) {
    const amq_stable *s = (const amq_stable *)o;
    size_t i = 0;
    for (; i + STABLE_BATCH <= n; i += STABLE_BATCH) {
        for (size_t j = 0; j < STABLE_BATCH; j++)
            amq__prefetch(&s->words[(probe(s, h[i + j], 0) * s->w) >> 6]);
        for (size_t j = 0; j < STABLE_BATCH; j++)
            out[i + j] = stable_contains(o, h[i + j]);
    }
    for (; i < n; i++)
        out[i] = stable_contains(o, h[i]);
}

/* Recount nonzero cells; false if a cell holds more than max. */
static bool recount(amq_stable *s) {
    uint64_t nz = 0;
    for (uint64_t i = 0; i < s->m; i++) {
        unsigned v = cell_get(s, i);
        if (v > s->max)
            return false;
        nz += v != 0;
    }
    s->nonzero = nz;
    return true;
}

/* (nonzero cells / m)^k: exact for a key never added, at the current
 * state. */
static double stable_bound(const amq__obj *o) {
    const amq_stable *s = (const amq_stable *)o;
    return pow((double)s->nonzero / (double)s->m, (double)s->k);
}

uint64_t amq_stable_cells(const amq_stable *s) { return s->m; }
unsigned amq_stable_k(const amq_stable *s) { return s->k; }
unsigned amq_stable_max(const amq_stable *s) { return s->max; }
uint64_t amq_stable_p(const amq_stable *s) { return s->p; }

/* ---- the generic interface --------------------------------------------- */

typedef struct stable_spec {
    uint64_t m, k, max, p;
    double target, horizon;
    bool has_m, has_max, has_p, has_target, has_horizon;
} stable_spec;

static amq_status read_spec(amq__spec *spec, stable_spec *v, amq_diag *diag) {
    AMQ_RETURN_IF_ERR(
        amq__spec_u64(spec, "k", 1, AMQ__PART_MAX_K, &v->k, NULL, diag));
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "m", 64, UINT64_C(1) << 58, &v->m,
                                    &v->has_m, diag));
    AMQ_RETURN_IF_ERR(
        amq__spec_u64(spec, "max", 1, STABLE_MAX, &v->max, &v->has_max, diag));
    AMQ_RETURN_IF_ERR(
        amq__spec_u64(spec, "p", 0, UINT64_C(1) << 58, &v->p, &v->has_p, diag));
    AMQ_RETURN_IF_ERR(amq__spec_f64(spec, "horizon", 0.01, 1e6, &v->horizon,
                                    &v->has_horizon, diag));
    AMQ_RETURN_IF_ERR(amq__spec_f64(spec, "stable", 1e-12, 0.999999, &v->target,
                                    &v->has_target, diag));
    if (v->has_p + v->has_target + v->has_horizon > 1)
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "stable: give one of p=, "
                         "stable= and horizon=");
    if (!v->has_max)
        v->max = v->has_horizon ? HOLD_MAX : DEFAULT_MAX;
    return AMQ_OK;
}

/* Decrements per add: given, from a stable rate (stable=, else the target
 * fpr: the paper's design), or from a horizon in multiples of capacity. */
static amq_status resolve_p(stable_spec *v, unsigned k, uint64_t capacity,
                            double fpr, amq_diag *diag) {
    unsigned max = (unsigned)v->max;
    if (v->has_target) {
        v->p = stable_p(v->m, k, max, v->target);
    } else if (v->has_horizon || !v->has_p) {
        if (capacity == 0)
            return amq__diag(diag, AMQ_ERR_SPEC, 0,
                             "stable: m= without a "
                             "capacity needs p= or stable=");
        v->p = v->has_horizon
                   ? recency_p(v->m, max, v->horizon * (double)capacity)
                   : stable_p(v->m, k, max, fpr);
    }
    if (v->p > v->m)
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "stable: p=%llu exceeds the "
                         "%llu cells",
                         (unsigned long long)v->p, (unsigned long long)v->m);
    return AMQ_OK;
}

static amq_status t_create(const amq__type *self, amq__spec *spec,
                           uint64_t capacity, double fpr,
                           const amq_options *opt, amq__obj **impl,
                           amq_diag *diag) {
    (void)self;
    stable_spec v = {0};
    unsigned k;
    amq__mem mem;
    AMQ_RETURN_IF_ERR(read_spec(spec, &v, diag));
    k = (unsigned)v.k;
    if (!v.has_m) {
        if (capacity == 0)
            return amq__diag(diag, AMQ_ERR_SPEC, 0,
                             "stable needs a capacity "
                             "and fpr, or m=CELLS with p= or stable=");
        AMQ_RETURN_IF_ERR(size_for(capacity, fpr, &k, &v.m));
    } else {
        v.m = round_cells(v.m);
        if (k == 0)
            k = capacity ? amq_bloom_optimal_k((double)v.m / (double)capacity)
                         : 7;
    }
    AMQ_RETURN_IF_ERR(resolve_p(&v, k, capacity, fpr, diag));
    amq__mem_init(&mem, opt);
    amq_stable *s;
    AMQ_RETURN_IF_ERR(
        alloc_stable(&mem, v.m, k, (unsigned)v.max, v.p, NULL, &s));
    *impl = &s->o;
    return AMQ_OK;
}

static size_t t_describe(const amq__obj *o, char *buf, size_t cap) {
    const amq_stable *s = (const amq_stable *)o;
    return amq__describe(buf, cap, "m=%llu,k=%u,max=%u,p=%llu",
                         (unsigned long long)s->m, s->k, s->max,
                         (unsigned long long)s->p);
}

/* The curve at capacity: cells and k as a Bloom filter's over cells of
 * w bits, so the Bloom curve at b / w cells per key (the paper's design
 * settles there: its p is chosen for a stable rate equal to the target).
 * Keys that fix one filter (m, p, stable, horizon) are accepted and do
 * not move the curve; max= chooses w. */
static amq_status t_curve(const amq__type *self, amq__spec *spec, double x,
                          bool inverse, double *out, amq_diag *diag) {
    stable_spec v = {0};
    (void)self;
    AMQ_RETURN_IF_ERR(read_spec(spec, &v, diag));
    double w = (double)width_for((unsigned)v.max);
    *out = inverse ? w * amq__partitioned_bits_for(x, (unsigned)v.k)
                   : amq__partitioned_curve(x / w, (unsigned)v.k);
    return AMQ_OK;
}

/* params: m u64 | k u32 | max u32 | p u64 | items u64 */
static void t_params_write(const amq__obj *o, amq__wr *w) {
    const amq_stable *s = (const amq_stable *)o;
    amq__wr_u64(w, s->m);
    amq__wr_u32(w, s->k);
    amq__wr_u32(w, s->max);
    amq__wr_u64(w, s->p);
    amq__wr_u64(w, o->items);
}

static amq_status t_load(const amq__type *self, amq__rd *r,
                         const uint8_t *payload, size_t len, bool view,
                         const amq_options *opt, amq__obj **out) {
    uint64_t m, sp, items;
    uint32_t k, max;
    amq_stable *s;
    amq__mem mem;
    (void)self;
    AMQ_RETURN_IF_ERR(amq__rd_expect(r, 32));
    size_t at_m = amq__rd_u64(r, &m);
    size_t at_k = amq__rd_u32(r, &k);
    size_t at_max = amq__rd_u32(r, &max);
    size_t at_p = amq__rd_u64(r, &sp);
    amq__rd_u64(r, &items);
    if (k == 0 || k > AMQ__PART_MAX_K)
        return amq__rd_bad(r, at_k, "k=%u out of range", k);
    if (max == 0 || max > STABLE_MAX)
        return amq__rd_bad(r, at_max, "max=%u out of range", max);
    if (m == 0 || m % 64 != 0 || m / 8 > len / width_for(max) ||
        m / 8 * width_for(max) != len)
        return amq__rd_bad(r, at_m,
                           "%llu cells do not match a %zu-byte "
                           "payload",
                           (unsigned long long)m, len);
    if (sp > m)
        return amq__rd_bad(r, at_p, "p=%llu exceeds the %llu cells",
                           (unsigned long long)sp, (unsigned long long)m);
    amq__mem_init(&mem, opt);
    AMQ_RETURN_IF_ERR(alloc_stable(
        &mem, m, k, max, sp, view ? (const uint64_t *)payload : NULL, &s));
    if (!view)
        memcpy(s->words, payload, len);
    s->o.items = items;
    if (!recount(s)) {
        amq__obj_free(&s->o);
        return amq__rd_bad(r, r->payload_at, "a cell exceeds max=%u", max);
    }
    *out = &s->o;
    return AMQ_OK;
}

const amq__type amq__type_stable = {
    .info = {.name = "stable",
             .type_id = AMQ__ID_stable,
             .caps = AMQ_CAP_FORGETS,
             .summary = "stable Bloom filter: fixed memory for endless "
                        "streams, forgets old keys (false negatives by "
                        "design for old keys)",
             .params = "m=CELLS, k=HASHES (1-64), max=CELL_MAX (1-255, "
                       "default 3), p=DECREMENTS per add, stable=RATE "
                       "(p for this stable FPR; default: the target fpr), "
                       "horizon=H (p such that no key is forgotten within "
                       "H x capacity adds; max 255 by default)",
             .default_hash = AMQ_HASH_XXH3},
    /* k cells of one table, as the Bloom filter (from the layout) */
    .reads_param = "k",
    .kernel_shapes = amq__defaults_only,
    .create = t_create,
    .load = t_load,
    .add = stable_add,
    .contains = stable_contains,
    .contains_batch = stable_batch,
    .fpr_bound = stable_bound,
    .describe = t_describe,
    .curve = t_curve,
    .params_write = t_params_write,
};
