/*
 * grafite.c — Grafite, a static range filter whose bound holds for every
 * query, however it relates to the keys (Costa, Ferragina, Vinciguerra,
 * "Grafite: Taming Adversarial Queries with Optimal Range Filters",
 * SIGMOD 2024).
 *
 * The n keys are 64-bit integers (byte strings go through the order map,
 * amq_range_key). A hash h that keeps order inside blocks of r keys maps
 * them into [0, r):
 *
 *     h(x) = (q(x div r) + x mod r) mod r,   q(b) = ((c1 b + c2) mod p) mod r
 *
 * with p = 2^61 - 1 and (c1, c2) drawn from the seed: q is a pairwise
 * independent shift per block, and inside a block h is a rotation, so a
 * range of keys maps to at most two ranges of codes per block. The codes,
 * sorted and without repeats, are an Elias-Fano set (ef.h). A query
 * [lo, hi] of length l < r touches one or two blocks; it asks the set
 * whether any code lies in the image of its part of each block (one or
 * two code ranges per block, so at most four emptiness questions, one for
 * a point).
 *
 * Bound. Let y be a key outside [lo, hi]. A key in the same block as a
 * part of the query maps outside that part's image (the rotation is
 * one-to-one on a block); for any other block, pairwise independence
 * makes its shift uniform given the query's blocks' shifts, so y lands in
 * an image of length l_j with probability at most l_j ceil(p / r) / p.
 * Summed over the query's parts and the keys:
 *
 *     P[false positive] <= min(1, l n ceil(p / r) / p) ~ l n / r,
 *
 * for every query range of length l, chosen without knowing (c1, c2). A
 * range of r keys or more answers true (the bound is 1 there). Built for
 * a rate e on ranges of length L, r = L n / e (rounded so the bound, 1/p
 * term included, stays at e), and the set takes log2(r / n) + 2.24 to
 * 2.40 bits a key, directory included: B bits a key give a rate of at
 * most l / 2^(B - 2.41) for ranges of length l (the paper's l / 2^(B - 2)
 * counts the Elias-Fano bits alone, without a select directory).
 *
 * Space rounding. Elias-Fano costs l + 1 + 1.25 t bits a value for
 * r / n = 2^l t, t in [1, 2): past t = 1.8 a universe of 2^(l+1) n costs
 * no more and halves the rate, so the build takes it.
 *
 * Failure modes: AMQ_ERR_INVALID when r would pass 2^60 (n / e too
 * large) or a spec's r is outside 16 .. 2^60; a corrupt payload can make
 * queries answer true, never read outside it (ef.h).
 */
#include <math.h>
#include <string.h>

#include "amq/range.h"
#include "core/bits.h"
#include "core/divide.h"
#include "core/mem.h"
#include "core/sort.h"
#include "range/ef.h"
#include "type/range_ops.h"

#define P61 ((UINT64_C(1) << 61) - 1)
#define R_MIN UINT64_C(16)
#define R_MAX (UINT64_C(1) << 60)
#define RANGE_MAX (UINT64_C(1) << 40)
#define DEFAULT_RATE 0.01 /* on ranges of `range` keys, with no target */
#define T_SWITCH 1.8      /* r / (n 2^l) past which 2^(l+1) n is taken */

typedef struct amq_grafite amq_grafite;
struct amq_grafite {
    amq__obj o;    /* items: distinct keys */
    uint64_t r;    /* code universe, also the block length */
    uint64_t c1;   /* in [1, p) */
    uint64_t c2;   /* in [0, p) */
    uint64_t m;    /* distinct codes */
    uint64_t span; /* the range length the build was sized for */
    amq_range_keys keys;
    amq__divisor by_r;
    amq__ef ef;
    bool (*range)(const amq_grafite *g, uint64_t lo, uint64_t hi);
};

static inline uint64_t mod_p61(unsigned __int128 x) {
    uint64_t s = ((uint64_t)x & P61) + (uint64_t)(x >> 61);
    s = (s & P61) + (s >> 61);
    return s >= P61 ? s - P61 : s;
}

static inline uint64_t shift_of(const amq_grafite *g, uint64_t block) {
    return amq__mod(&g->by_r,
                    mod_p61((unsigned __int128)g->c1 * block + g->c2));
}

static inline uint64_t code_of(const amq_grafite *g, uint64_t x) {
    uint64_t b = amq__div(&g->by_r, x);
    uint64_t c = (x - b * g->r) + shift_of(g, b);
    return c >= g->r ? c - g->r : c;
}

/* Whether a key may lie at offsets [o1, o2] of block b. */
static inline __attribute__((always_inline)) bool part(const amq_grafite *g,
                                                       uint64_t b, uint64_t o1,
                                                       uint64_t o2, bool fast) {
    uint64_t s = o1 + shift_of(g, b);
    if (s >= g->r)
        s -= g->r;
    uint64_t e = s + (o2 - o1);
    if (e < g->r)
        return amq__ef_any_k(&g->ef, s, e, fast);
    return amq__ef_any_k(&g->ef, s, g->r - 1, fast) ||
           amq__ef_any_k(&g->ef, 0, e - g->r, fast);
}

static inline __attribute__((always_inline)) bool range_k(const amq_grafite *g,
                                                          uint64_t lo,
                                                          uint64_t hi,
                                                          bool fast) {
    if (g->m == 0)
        return false;
    if (hi - lo >= g->r - 1)
        return true;
    uint64_t b1 = amq__div(&g->by_r, lo), b2 = amq__div(&g->by_r, hi);
    uint64_t o1 = lo - b1 * g->r, o2 = hi - b2 * g->r;
    if (b1 == b2)
        return part(g, b1, o1, o2, fast);
    return part(g, b1, o1, g->r - 1, fast) || part(g, b2, 0, o2, fast);
}

static inline __attribute__((always_inline)) bool point_k(const amq_grafite *g,
                                                          uint64_t x,
                                                          bool fast) {
    uint64_t c = code_of(g, x);
    return g->m != 0 && amq__ef_any_k(&g->ef, c, c, fast);
}

/* The kernels: portable, and for CPUs with POPCNT and BMI2 (the avx2
 * level of cpu.c and above), chosen when the shape is set. */
static bool range_portable(const amq_grafite *g, uint64_t lo, uint64_t hi) {
    return range_k(g, lo, hi, false);
}

static bool point_portable(const amq__obj *o, uint64_t x) {
    return point_k((const amq_grafite *)o, x, false);
}

#if defined(AMQ__HAVE_PDEP)
__attribute__((target("popcnt,bmi,bmi2"))) static bool range_bmi2(
    const amq_grafite *g, uint64_t lo, uint64_t hi) {
    return range_k(g, lo, hi, true);
}

__attribute__((target("popcnt,bmi,bmi2"))) static bool point_bmi2(
    const amq__obj *o, uint64_t x) {
    return point_k((const amq_grafite *)o, x, true);
}
#else
#define range_bmi2 range_portable
#define point_bmi2 point_portable
#endif

static void choose(amq_grafite *g, const amq_options *opt) {
    bool scalar = opt != NULL && (opt->flags & AMQ_OPT_SCALAR);
    g->o.contains =
        amq__obj_pick(scalar, point_portable, point_bmi2, point_bmi2);
    g->range = g->o.contains == point_bmi2 ? range_bmi2 : range_portable;
}

static amq_range_keys gr_keys(const amq__obj *o) {
    return ((const amq_grafite *)o)->keys;
}

static uint64_t gr_span(const amq__obj *o) {
    return ((const amq_grafite *)o)->span;
}

static bool gr_range(const amq__obj *o, uint64_t lo, uint64_t hi) {
    const amq_grafite *g = (const amq_grafite *)o;
    return g->range(g, lo, hi);
}

/* ceil(p / r) / p: the most any code's probability can be. */
static double per_code(uint64_t r) {
    return (double)((P61 + r - 1) / r) / (double)P61;
}

static double range_bound_of(uint64_t n, uint64_t r, uint64_t len) {
    if (n == 0 || len == 0)
        return 0.0;
    if (len >= r)
        return 1.0;
    double b = (double)len * (double)n * per_code(r);
    return b < 1.0 ? b : 1.0;
}

static double gr_range_bound(const amq__obj *o, uint64_t len) {
    const amq_grafite *g = (const amq_grafite *)o;
    return range_bound_of(o->items, g->r, len);
}

static double gr_fpr_bound(const amq__obj *o) { return gr_range_bound(o, 1); }

/* (c1, c2) from the seed and, when given, the secret key. */
static void draw_shifts(const amq_options *opt, uint64_t *c1, uint64_t *c2) {
    uint64_t s = opt->hash_seed;
    if (opt->hash_key != NULL)
        s ^= amq__mix64(amq__get_u64(opt->hash_key)) ^
             amq__get_u64(opt->hash_key + 8);
    *c1 = 1 + amq__mix64(s ^ UINT64_C(0x6772616669746531)) % (P61 - 1);
    *c2 = amq__mix64(s + UINT64_C(0x9e3779b97f4a7c15)) % P61;
}

/* The universe for n keys at rate e on ranges of `span` keys: the least r
 * with span n ceil(p / r) / p <= e, then the space rounding above. */
static amq_status universe_for(uint64_t n, double e, uint64_t span,
                               uint64_t *out, amq_diag *diag) {
    long double need = (long double)e / ((long double)span * (long double)n) -
                       1.0L / (long double)P61;
    long double r = need > 0 ? ceill(1.0L / need) : 0;
    if (r <= 0 || r > (long double)R_MAX)
        return amq__diag(diag, AMQ_ERR_INVALID, 0,
                         "grafite: %llu keys at %g for ranges of %llu need a "
                         "code universe above 2^60",
                         (unsigned long long)n, e, (unsigned long long)span);
    uint64_t u = (uint64_t)r;
    while (u < R_MAX && range_bound_of(n, u, span) > e)
        u++;
    if (u < R_MIN)
        u = R_MIN;
    unsigned l = amq__ef_low_bits(n, u);
    if ((double)u / ((double)n * ldexp(1.0, (int)l)) > T_SWITCH &&
        l < AMQ__EF_MAX_LOW && n <= (R_MAX >> (l + 1)))
        u = n << (l + 1);
    *out = u;
    return AMQ_OK;
}

static amq_status gr_alloc(uint64_t r, uint64_t m, const amq_options *opt,
                           const void *borrow, amq_grafite **out,
                           uint64_t **wr) {
    unsigned l = amq__ef_low_bits(m, r);
    size_t words = amq__ef_words(m, r, l), bytes;
    amq_grafite *g;
    if (words == 0 || !amq__mul(words, 8, &bytes))
        return AMQ_ERR_OVERFLOW;
    AMQ_RETURN_IF_ERR(amq__obj_new(sizeof *g, opt, (void **)&g));
    void *w = NULL;
    amq_status st = amq__obj_table(&g->o, bytes, borrow, &w);
    if (st != AMQ_OK) {
        amq__obj_free(&g->o);
        return st;
    }
    g->r = r;
    g->by_r = amq__divisor_of(r);
    g->m = m;
    choose(g, opt);
    amq__ef_view(&g->ef, g->o.table, m, r, l);
    *wr = w;
    *out = g;
    return AMQ_OK;
}

/* The filter over the keys keys[0..n) (ascending, distinct, scratch
 * holds n words): their codes, sorted without repeats, in Elias-Fano
 * form. */
static amq_status gr_fill(const amq__mem *mem, uint64_t *keys, uint64_t *codes,
                          size_t n, uint64_t r, uint64_t span,
                          const amq_options *opt, amq_grafite **out) {
    amq_grafite probe = {.r = r, .by_r = amq__divisor_of(r)};
    size_t m = 0;
    uint64_t *wr;
    draw_shifts(opt, &probe.c1, &probe.c2);
    for (size_t i = 0; i < n; i++)
        keys[i] = code_of(&probe, keys[i]);
    if (n != 0)
        AMQ_RETURN_IF_ERR(
            amq__sort_keys(mem, keys, n, false, 0, true, codes, &m));
    AMQ_RETURN_IF_ERR(gr_alloc(r, m, opt, NULL, out, &wr));
    amq__ef_fill(codes, m, r, (*out)->ef.l, wr);
    (*out)->c1 = probe.c1;
    (*out)->c2 = probe.c2;
    (*out)->span = span;
    (*out)->o.items = n;
    return AMQ_OK;
}

/* ---- the generic interface ----------------------------------------------- */

#define PARAMS                                                                 \
    "range=L (the target rate, 1% if none is given, holds for "                \
    "ranges of L keys; default 1), r=R (code universe 16..2^60; "              \
    "overrides the target)"

/* What a spec fixes: the range length the target is for, an explicit
 * universe (0: from the target), the key form. */
typedef struct gr_spec {
    uint64_t span, r;
    amq_range_keys keys;
} gr_spec;

static amq_status spec_of(amq__spec *spec, gr_spec *g, amq_diag *diag) {
    static const char *const forms[] = {"int", "bytes", NULL};
    unsigned keys = AMQ_RANGE_KEYS_INT;
    g->span = 1;
    g->r = 0;
    AMQ_RETURN_IF_ERR(
        amq__spec_u64(spec, "range", 1, RANGE_MAX, &g->span, NULL, diag));
    AMQ_RETURN_IF_ERR(
        amq__spec_u64(spec, "r", R_MIN, R_MAX, &g->r, NULL, diag));
    AMQ_RETURN_IF_ERR(amq__spec_word(spec, "keys", forms, &keys, diag));
    g->keys = (amq_range_keys)keys;
    return AMQ_OK;
}

static amq_status t_build(const amq__type *self, amq__spec *spec,
                          const uint64_t *h, size_t n, double fpr,
                          const amq_options *opt, amq__obj **out,
                          amq_diag *diag) {
    uint64_t *keys = NULL, *codes = NULL;
    size_t distinct = 0, bytes = 0;
    gr_spec sp;
    amq__mem mem;
    amq_grafite *g = NULL;
    amq_status st = AMQ_OK;
    (void)self;
    AMQ_RETURN_IF_ERR(spec_of(spec, &sp, diag));
    if (fpr == 0.0)
        fpr = DEFAULT_RATE;
    amq__mem_init(&mem, opt);
    if (n != 0) {
        if (!amq__mul(n, sizeof *h, &bytes))
            return AMQ_ERR_OVERFLOW;
        keys = amq__alloc(&mem, bytes);
        codes = amq__alloc(&mem, bytes);
        st = keys == NULL || codes == NULL ? AMQ_ERR_NOMEM : AMQ_OK;
        if (st == AMQ_OK)
            st = amq__sort_keys(&mem, h, n, false, 0, true, keys, &distinct);
    }
    if (st == AMQ_OK && sp.r == 0)
        st = universe_for(distinct ? distinct : 1, fpr, sp.span, &sp.r, diag);
    if (st == AMQ_OK)
        st = gr_fill(&mem, keys, codes, distinct, sp.r, sp.span, opt, &g);
    if (keys != NULL)
        amq__free(&mem, keys, bytes);
    if (codes != NULL)
        amq__free(&mem, codes, bytes);
    AMQ_RETURN_IF_ERR(st);
    g->keys = sp.keys;
    *out = &g->o;
    return AMQ_OK;
}

static size_t t_describe(const amq__obj *o, char *buf, size_t cap) {
    const amq_grafite *g = (const amq_grafite *)o;
    return amq__describe(buf, cap, "range=%llu,r=%llu%s",
                         (unsigned long long)g->span, (unsigned long long)g->r,
                         g->keys == AMQ_RANGE_KEYS_BYTES ? ",keys=bytes" : "");
}

/* The curve: bits a key <-> the rate on ranges of `range` keys, as
 * log2(r / n) + CURVE_OVER. After the space rounding the set costs
 * l + 1 + 1.25 t bits a key for r / n = 2^l t, t in [1, 1.8], which is
 * log2(r / n) + (1 + 1.25 t - log2 t): between 2.236 and 2.402 above
 * log2(r / n). The curve takes the upper end, so a built filter is at
 * most 0.17 bits a key below it and never above (test_range). */
#define CURVE_OVER 2.41
static amq_status t_curve(const amq__type *self, amq__spec *spec, double x,
                          bool inverse, double *out, amq_diag *diag) {
    gr_spec sp;
    (void)self;
    AMQ_RETURN_IF_ERR(spec_of(spec, &sp, diag));
    if (inverse) {
        *out = log2((double)sp.span / x) + CURVE_OVER;
        return AMQ_OK;
    }
    double rate = (double)sp.span * exp2(-(x - CURVE_OVER));
    *out = rate < 1.0 ? rate : 1.0;
    return AMQ_OK;
}

/* params: r u64 | c1 u64 | c2 u64 | items u64 | codes u64 | range u64 |
 * keys u32 (0 integers, 1 byte strings) | reserved u32 (0) */
#define PARAMS_LEN 56
static void t_params_write(const amq__obj *o, amq__wr *w) {
    const amq_grafite *g = (const amq_grafite *)o;
    amq__wr_u64(w, g->r);
    amq__wr_u64(w, g->c1);
    amq__wr_u64(w, g->c2);
    amq__wr_u64(w, o->items);
    amq__wr_u64(w, g->m);
    amq__wr_u64(w, g->span);
    amq__wr_u32(w, (uint32_t)g->keys);
    amq__wr_u32(w, 0);
}

static amq_status t_load(const amq__type *self, amq__rd *rd,
                         const uint8_t *payload, size_t len, bool view,
                         const amq_options *opt, amq__obj **out) {
    uint64_t r, c1, c2, items, m, span, *wr;
    uint32_t keys;
    amq_grafite *g;
    (void)self;
    AMQ_RETURN_IF_ERR(amq__rd_expect(rd, PARAMS_LEN));
    size_t at_r = amq__rd_u64(rd, &r);
    size_t at_c1 = amq__rd_u64(rd, &c1);
    size_t at_c2 = amq__rd_u64(rd, &c2);
    size_t at_n = amq__rd_u64(rd, &items);
    size_t at_m = amq__rd_u64(rd, &m);
    size_t at_span = amq__rd_u64(rd, &span);
    size_t at_keys = amq__rd_u32(rd, &keys);
    AMQ_RETURN_IF_ERR(amq__rd_zero32(rd));
    if (r < R_MIN || r > R_MAX)
        return amq__rd_bad(rd, at_r, "code universe %llu outside 16..2^60",
                           (unsigned long long)r);
    if (c1 == 0 || c1 >= P61)
        return amq__rd_bad(rd, at_c1, "c1 outside 1..2^61-2");
    if (c2 >= P61)
        return amq__rd_bad(rd, at_c2, "c2 outside 0..2^61-2");
    if (m > items || m > r || (items != 0) != (m != 0))
        return amq__rd_bad(rd, at_m, "%llu codes for %llu keys below %llu",
                           (unsigned long long)m, (unsigned long long)items,
                           (unsigned long long)r);
    (void)at_n;
    if (span == 0 || span > RANGE_MAX)
        return amq__rd_bad(rd, at_span, "range %llu outside 1..2^40",
                           (unsigned long long)span);
    if (keys > AMQ_RANGE_KEYS_BYTES)
        return amq__rd_bad(rd, at_keys, "key form %u", keys);
    size_t words = amq__ef_words(m, r, amq__ef_low_bits(m, r));
    if (words == 0 || len / 8 != words || len % 8 != 0)
        return amq__rd_bad(rd, at_m, "%zu payload bytes for %llu codes", len,
                           (unsigned long long)m);
    AMQ_RETURN_IF_ERR(gr_alloc(r, m, opt, view ? payload : NULL, &g, &wr));
    if (!view)
        memcpy(wr, payload, len);
    g->c1 = c1;
    g->c2 = c2;
    g->span = span;
    g->keys = (amq_range_keys)keys;
    g->o.items = items;
    *out = &g->o;
    return AMQ_OK;
}

static const amq__range_ops gr_range_ops = {.contains = gr_range,
                                            .bound = gr_range_bound,
                                            .keys = gr_keys,
                                            .design_length = gr_span};

const amq__type amq__type_grafite = {
    .info = {.name = "grafite",
             .type_id = AMQ__ID_grafite,
             .caps = AMQ_CAP_STATIC | AMQ_CAP_RANGE,
             .summary = "Grafite range filter: any key in [lo, hi]? "
                        "(static)",
             .params = PARAMS,
             .default_hash = AMQ_HASH_ORDER},
    .reads = 3,
    .reads_text = "3 (directory, bucket, low bits)",
    .kernel_shapes = amq__defaults_only,
    .build = t_build,
    .load = t_load,
    .contains = point_portable,
    .fpr_bound = gr_fpr_bound,
    .describe = t_describe,
    .curve = t_curve,
    .params_write = t_params_write,
    .range = &gr_range_ops,
};
