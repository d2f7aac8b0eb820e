/*
 * spectral.c — the spectral Bloom filter (Cohen & Matias 2003, "Spectral
 * Bloom filters", SIGMOD): a counting Bloom filter read as a multiplicity
 * sketch. The estimate of x's multiplicity f_x is the smallest of its k
 * counters, m_x = min_j C[g_j(x)].
 *
 *   C: m counters of w bits (4, 8, 16 or 32), k probes per key
 *   +---+---+---+---+---+---+---+---+---+---+ ... +---+
 *   | 0 | 3 | 0 | 5 | 3 | 0 | 1 | 0 | 3 | 0 |     | 2 |
 *   +---+---+---+---+---+---+---+---+---+---+ ... +---+
 *         ^ g_0(x)    ^ g_1(x)        ^ g_2(x)      m_x = min(3, 3, 3) = 3
 *
 * Two insert rules from the paper:
 *   minimum selection (MS)  C[g_j(x)] += 1 for every j. Counters are sums of
 *                           the multiplicities of the keys on them, so each
 *                           is >= f_x and a delete is the exact inverse.
 *   minimal increase (MI)   raise only the counters equal to m_x, by one.
 *                           Every counter of x stays >= f_x (the ones above
 *                           the minimum already exceed f_x), so estimates
 *                           never undercount, and a counter shared with a
 *                           heavier key is not inflated: the paper reports
 *                           far smaller errors than MS.
 *
 * Why MI cannot delete: its counters are no longer sums. If x and y share a
 * counter, y's insert may have skipped it (it was above y's minimum), so the
 * counter carries less than f_x + f_y; decrementing it for a removal of y
 * can take it below f_x — an undercount, and at zero a false negative. So
 * remove returns AMQ_ERR_UNSUPPORTED in MI mode (the paper discusses the
 * same problem and proposes recurring minimum instead). Union by counter-wise
 * sum is sound for both rules: each counter of x is >= x's multiplicity on
 * each side.
 *
 * The counter array, its two layouts, probes, saturation (sticky at 2^w - 1;
 * an estimate read from a saturated counter is UINT64_MAX, "at least
 * 2^w - 1") and the certified bound are shared with the counting filter
 * (counters.h). Both rules only ever read and raise the key's own k
 * counters, so they hold unchanged in either layout: blocked (a key's
 * counters in one 64-byte block, one cache line per insert and query; the
 * default for widths 4 and 8) or classic (k independent probes; the
 * default for widths 16 and 32, whose blocks of 32 or 16 counters cost
 * 1.6-2.2x the memory at 1%, and every frame written before the blocked
 * layout). After any insert every probe of x is >= 1 under both rules, so
 * contains (all k counters nonzero, i.e. m_x > 0) has the counting
 * filter's false-positive rate and bound.
 *
 * Frame params: the counter block | mode u32 | layout u32 (0 classic,
 * 1 blocked). The layout word was reserved (0) before the blocked layout:
 * earlier frames load as classic and save back byte for byte; readers from
 * before refuse a blocked frame (a nonzero reserved word).
 */
#include <stdio.h>
#include <string.h>

#include "amq/counting.h"
#include "bloom/counters.h"
#include "type/type.h"

#define SPECTRAL_WIDTHS                                                        \
    ((UINT64_C(1) << 4) | (UINT64_C(1) << 8) | (UINT64_C(1) << 16) |           \
     (UINT64_C(1) << 32))
#define SPECTRAL_DEFAULT_WIDTH 8
#define SPECTRAL_PARAMS (AMQ__CTR_PARAMS + 8) /* + mode u32 | layout u32 */

struct amq_spectral {
    amq__ctr c;
    amq_spectral_mode mode;
};

static bool valid_width(unsigned w) {
    return w < 64 && (SPECTRAL_WIDTHS & (UINT64_C(1) << w)) != 0;
}

static amq_status alloc_spectral(uint64_t m, unsigned k, unsigned width,
                                 unsigned layout, amq_spectral_mode mode,
                                 const amq_options *opt, amq_spectral **out) {
    amq__ctr *c;
    if (!valid_width(width) ||
        (mode != AMQ_SPECTRAL_MI && mode != AMQ_SPECTRAL_MS))
        return AMQ_ERR_INVALID;
    AMQ_RETURN_IF_ERR(
        amq__ctr_new(sizeof(amq_spectral), m, width, k, layout, opt, NULL, &c));
    *out = (amq_spectral *)(void *)c;
    (*out)->mode = mode;
    return AMQ_OK;
}

/* Minimal increase: raise the counters that hold the minimum. Re-reading
 * each counter makes a probe that repeats count once. Blocked: the same
 * over the one block, found once; under AMQ_OPT_SCALAR the reference loop
 * through amq__ctr_probe, which test_spectral holds it to. */
static void add_minimal_increase(amq__ctr *c, uint64_t h) {
    if (c->layout == AMQ__CTR_BLOCKED && !c->reference) {
        uint64_t *blk = amq__ctr_block_at(c, h), lo = c->max;
        unsigned p[AMQ__CTR_BLOCK_MAX_K];
        for (unsigned j = 0; j < c->k; j++) {
            uint64_t v =
                amq__ctr_block_get(c, blk, p[j] = amq__ctr_slot(c, h, j));
            lo = v < lo ? v : lo;
        }
        for (unsigned j = 0; j < c->k && lo != c->max; j++)
            if (amq__ctr_block_get(c, blk, p[j]) == lo)
                amq__ctr_block_inc(c, blk, p[j]);
        c->o.items++;
        return;
    }
    uint64_t lo = amq__ctr_min(c, h);
    for (unsigned j = 0; j < c->k && lo != c->max; j++) {
        uint64_t i = amq__ctr_probe(c, h, j);
        if (amq__ctr_get(c, i) == lo)
            amq__ctr_inc(c, i);
    }
    c->o.items++;
}

static void add_minimum_selection(amq__ctr *c, uint64_t h) {
    (void)amq__ctr_add(&c->o, h);
}

static amq_status spectral_add(amq__obj *o, uint64_t h) {
    amq_spectral *s = (amq_spectral *)o;
    if (s->mode == AMQ_SPECTRAL_MI) {
        add_minimal_increase(&s->c, h);
        return AMQ_OK;
    }
    return amq__ctr_add(o, h);
}

static amq_status spectral_add_batch(amq__obj *o, const uint64_t *h, size_t n,
                                     size_t *done) {
    amq_spectral *s = (amq_spectral *)o;
    amq__ctr_add_batch_with(&s->c, h, n,
                            s->mode == AMQ_SPECTRAL_MI ? add_minimal_increase
                                                       : add_minimum_selection);
    *done = n;
    return AMQ_OK;
}

/* Sound for both modes, but only between equal modes: a union of MI and
 * MS counters would let an MS filter remove from MI counters. */
static amq_status spectral_merge(amq__obj *dst, const amq__obj *src,
                                 amq__merge_op op) {
    const amq_spectral *d = (const amq_spectral *)dst;
    const amq_spectral *s = (const amq_spectral *)src;
    if (d->mode != s->mode)
        return AMQ_ERR_INCOMPATIBLE;
    return amq__ctr_merge(dst, src, op);
}

/* ---- the getters of amq/counting.h ------------------------------------- */

amq_spectral_mode amq_spectral_get_mode(const amq_spectral *s) {
    return s->mode;
}
uint64_t amq_spectral_saturated(const amq_spectral *s) {
    return s->c.saturated;
}
bool amq_spectral_blocked(const amq_spectral *s) {
    return s->c.layout == AMQ__CTR_BLOCKED;
}

/* ---- the generic interface --------------------------------------------- */

/* mode=mi|ms. */
static amq_status spec_mode(amq__spec *spec, amq_spectral_mode *mode,
                            amq_diag *diag) {
    static const char *const words[] = {"mi", "ms", NULL};
    unsigned w = 0;
    AMQ_RETURN_IF_ERR(amq__spec_word(spec, "mode", words, &w, diag));
    *mode = w == 1 ? AMQ_SPECTRAL_MS : AMQ_SPECTRAL_MI;
    return AMQ_OK;
}

static amq_status spec_width(amq__spec *spec, unsigned *width, amq_diag *diag) {
    uint64_t w = SPECTRAL_DEFAULT_WIDTH;
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "width", 4, 32, &w, NULL, diag));
    if (!valid_width((unsigned)w))
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "spectral: width must be 4, 8, 16 or 32, got %llu",
                         (unsigned long long)w);
    *width = (unsigned)w;
    return AMQ_OK;
}

static amq_status t_create(const amq__type *self, amq__spec *spec,
                           uint64_t capacity, double fpr,
                           const amq_options *opt, amq__obj **out,
                           amq_diag *diag) {
    amq_spectral_mode mode;
    unsigned width = 0, k = 0, layout;
    uint64_t m = 0;
    amq_spectral *s;
    (void)self;
    AMQ_RETURN_IF_ERR(spec_mode(spec, &mode, diag));
    AMQ_RETURN_IF_ERR(spec_width(spec, &width, diag));
    AMQ_RETURN_IF_ERR(amq__ctr_spec_layout(spec, width, &layout, diag));
    AMQ_RETURN_IF_ERR(amq__ctr_spec_shape(spec, capacity, fpr, width, layout,
                                          &k, &m, "spectral", diag));
    AMQ_RETURN_IF_ERR(alloc_spectral(m, k, width, layout, mode, opt, &s));
    *out = &s->c.o;
    return AMQ_OK;
}

/* Minimum selection can remove; minimal increase cannot (the generic
 * layer refuses what caps leave out). */
static uint32_t t_caps(const amq__obj *o) {
    const amq_spectral *s = (const amq_spectral *)o;
    return AMQ_CAP_COUNT | AMQ_CAP_UNION |
           (s->mode == AMQ_SPECTRAL_MS ? AMQ_CAP_REMOVE : 0);
}
static size_t t_describe(const amq__obj *o, char *buf, size_t cap) {
    const amq_spectral *s = (const amq_spectral *)o;
    return amq__describe(buf, cap, "m=%llu,k=%u,width=%u,mode=%s,layout=%s",
                         (unsigned long long)s->c.m, s->c.k, s->c.width,
                         s->mode == AMQ_SPECTRAL_MS ? "ms" : "mi",
                         s->c.layout == AMQ__CTR_BLOCKED ? "blocked"
                                                         : "classic");
}

static amq_status t_curve(const amq__type *self, amq__spec *spec, double x,
                          bool inverse, double *out, amq_diag *diag) {
    amq_spectral_mode mode;
    unsigned width = 0;
    (void)self;
    AMQ_RETURN_IF_ERR(spec_mode(spec, &mode, diag)); /* no effect on FPR */
    AMQ_RETURN_IF_ERR(spec_width(spec, &width, diag));
    return amq__ctr_curve(spec, width, x, inverse, out, diag);
}

/* params: the counter block | mode u32 | layout u32 */
static void t_params_write(const amq__obj *o, amq__wr *w) {
    const amq_spectral *s = (const amq_spectral *)o;
    amq__ctr_params_write(o, w);
    amq__wr_u32(w, (uint32_t)s->mode);
    amq__wr_u32(w, s->c.layout);
}

static amq_status t_load(const amq__type *self, amq__rd *r,
                         const uint8_t *payload, size_t len, bool view,
                         const amq_options *opt, amq__obj **out) {
    amq__ctr_shape shape;
    uint32_t mode;
    amq__ctr *c;
    (void)self;
    AMQ_RETURN_IF_ERR(amq__rd_expect(r, SPECTRAL_PARAMS));
    AMQ_RETURN_IF_ERR(amq__ctr_params_read(r, SPECTRAL_WIDTHS, &shape));
    size_t at_mode = amq__rd_u32(r, &mode);
    if (mode > AMQ_SPECTRAL_MS)
        return amq__rd_bad(r, at_mode, "mode %u unknown", mode);
    AMQ_RETURN_IF_ERR(amq__ctr_layout_read(r, &shape));
    AMQ_RETURN_IF_ERR(amq__ctr_shape_check(r, len, &shape));
    AMQ_RETURN_IF_ERR(amq__ctr_open(sizeof(amq_spectral), &shape, payload, len,
                                    view, opt, &c));
    ((amq_spectral *)(void *)c)->mode = (amq_spectral_mode)mode;
    *out = &c->o;
    return AMQ_OK;
}

/* Shapes beside the default (blocked, width 8) that take other kernels or
 * paths (test_kernels): the blocked kernels at widths 4, 16 and 32 (a prime
 * block count at 16), and the classic layout. */
static const char *const kernel_shapes[] = {
    "spectral:width=4",
    "spectral:width=16,layout=blocked,m=3104",
    "spectral:width=32,layout=blocked",
    "spectral:layout=classic",
    "spectral:mode=ms,width=16",
    NULL};

/* The type's caps are the default (MI) mode's; a filter built with mode=ms
 * also reports AMQ_CAP_REMOVE through amq_filter_caps. */
const amq__type amq__type_spectral = {
    .info = {.name = "spectral",
             .type_id = AMQ__ID_spectral,
             .caps = AMQ_CAP_COUNT | AMQ_CAP_UNION,
             .summary = "spectral Bloom filter: multiplicity estimates "
                        "(minimal increase or minimum selection)",
             .params = "mode=mi|ms (minimal increase, default; minimum "
                       "selection allows remove), width=BITS (4, 8, 16, 32; "
                       "default 8), layout=blocked|classic (a key's k "
                       "counters in one 64-byte block, the default for "
                       "widths 4 and 8; or k independent probes, the "
                       "default for 16 and 32), k=HASHES (1-16 blocked, "
                       "1-32 classic; default optimal), m=COUNTERS "
                       "(explicit size)",
             .default_hash = AMQ_HASH_XXH3},
    .reads = 1,
    .reads_text = "1 (layout=classic: k)",
    .kernel_shapes = kernel_shapes,
    .create = t_create,
    .load = t_load,
    .add = spectral_add,
    .add_batch = spectral_add_batch,
    .contains = amq__ctr_contains,
    .contains_batch = amq__ctr_contains_batch,
    .remove = amq__ctr_remove, /* mode=ms only: see t_caps */
    .count = amq__ctr_count,
    .merge = spectral_merge,
    .caps = t_caps,
    .fpr_bound = amq__ctr_fpr_bound,
    .describe = t_describe,
    .curve = t_curve,
    .params_write = t_params_write,
};
