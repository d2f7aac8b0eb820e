/*
 * counting.c — the counting Bloom filter (Fan, Cao, Almeida & Broder 2000,
 * "Summary cache: a scalable wide-area web cache sharing protocol"): a Bloom
 * filter whose bits are small counters, so keys can be deleted.
 *
 *   counters (width 4: sixteen per 64-bit word)
 *   +---+---+---+---+---+---+---+---+---+---+---+---+---+ ... +---+
 *   | 0 | 2 | 0 | 1 | 0 | 0 | 3 | 0 | 1 | 0 |15*| 0 | 1 |     | 0 |
 *   +---+---+---+---+---+---+---+---+---+---+---+---+---+ ... +---+
 *         ^ g_0(x)    ^ g_2(x)    ^ g_1(x)    ^ saturated: sticky
 *
 * insert x: counter[g_j(x)] += 1 for j < k (a counter at 2^w - 1 stays);
 * remove x: counter[g_j(x)] -= 1, refused with AMQ_ERR_NOT_FOUND (and no
 *           change) if any of them is zero — x was certainly never inserted;
 * contains: every counter nonzero; count: their minimum.
 *
 * Two layouts (counters.h): blocked (the default), where a key's k counters
 * share one 64-byte block of 128 (width 4) or 64 (width 8) counters, so an
 * insert or a query touches one cache line, at about 13% more counters for
 * the same rate at 1% (the crowded blocks answer yes more often; sizing
 * and the bound average over the blocks' Poisson load); and classic
 * (Fan et al.'s k independent probes, every frame written before the
 * blocked layout existed; `counting:layout=classic`). The counter array,
 * probes and saturation rule are shared with the spectral filter. With
 * 4-bit counters overflow is vanishingly rare for sets at the optimal k
 * (Fan et al. bound the chance that any counter reaches 16 by
 * 1.37e-15 · m classic; docs/structures.md works the blocked case); width 8
 * is for multisets with repeated keys.
 *
 * Invariants (counters.h): nonzero and saturated counts exact; items = adds
 * minus successful removes. An add and then a remove of the same key give
 * back the byte-identical filter, unless the add saturated a counter.
 *
 * Frame params: m u64 | k u32 | width u32 | items u64, then for a blocked
 * filter layout u32 (= 1): 24 bytes classic (as every earlier frame, which
 * loads and saves back byte for byte), 28 blocked (which readers from
 * before refuse by its length rather than misread).
 *
 * Failure modes: removing a never-inserted key that happens to be a false
 * positive cannot be detected; it decrements counters other keys rely on
 * and may later produce false negatives for them (the classic hazard of
 * every counting filter). Union is a saturating counter-wise sum.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "amq/counting.h"
#include "bloom/counters.h"
#include "type/type.h"

#define COUNTING_WIDTHS ((UINT64_C(1) << 4) | (UINT64_C(1) << 8))
/* The counter block and the layout word (no other type's parameters are 28
 * bytes long, so a blocked frame relabelled as another type is refused by
 * its length). */
#define COUNTING_PARAMS_BLOCKED (AMQ__CTR_PARAMS + 4)

struct amq_counting {
    amq__ctr c;
};

static amq_status alloc_counting(uint64_t m, unsigned k, unsigned width,
                                 unsigned layout, const amq_options *opt,
                                 amq_counting **out) {
    amq__ctr *c;
    if (width != 4 && width != 8)
        return AMQ_ERR_INVALID;
    AMQ_RETURN_IF_ERR(
        amq__ctr_new(sizeof(amq_counting), m, width, k, layout, opt, NULL, &c));
    *out = (amq_counting *)(void *)c;
    return AMQ_OK;
}

/* ---- the getters of amq/counting.h ------------------------------------- */

uint64_t amq_counting_saturated(const amq_counting *f) {
    return f->c.saturated;
}
uint64_t amq_counting_counters(const amq_counting *f) { return f->c.m; }
unsigned amq_counting_k(const amq_counting *f) { return f->c.k; }
unsigned amq_counting_width(const amq_counting *f) { return f->c.width; }
bool amq_counting_blocked(const amq_counting *f) {
    return f->c.layout == AMQ__CTR_BLOCKED;
}

/* ---- the generic interface --------------------------------------------- */

static amq_status spec_width(amq__spec *spec, unsigned *width, amq_diag *diag) {
    uint64_t w = 4;
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "width", 4, 8, &w, NULL, diag));
    if (w != 4 && w != 8)
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "counting: width must be 4 or 8, got %llu",
                         (unsigned long long)w);
    *width = (unsigned)w;
    return AMQ_OK;
}

static amq_status t_create(const amq__type *self, amq__spec *spec,
                           uint64_t capacity, double fpr,
                           const amq_options *opt, amq__obj **out,
                           amq_diag *diag) {
    unsigned width = 0, k = 0, layout;
    uint64_t m = 0;
    (void)self;
    AMQ_RETURN_IF_ERR(spec_width(spec, &width, diag));
    AMQ_RETURN_IF_ERR(amq__ctr_spec_layout(spec, width, &layout, diag));
    AMQ_RETURN_IF_ERR(amq__ctr_spec_shape(spec, capacity, fpr, width, layout,
                                          &k, &m, "counting", diag));
    amq_counting *f;
    AMQ_RETURN_IF_ERR(alloc_counting(m, k, width, layout, opt, &f));
    *out = &f->c.o;
    return AMQ_OK;
}

static size_t t_describe(const amq__obj *o, char *buf, size_t cap) {
    const amq__ctr *c = (const amq__ctr *)o;
    return amq__describe(buf, cap, "m=%llu,k=%u,width=%u,layout=%s",
                         (unsigned long long)c->m, c->k, c->width,
                         c->layout == AMQ__CTR_BLOCKED ? "blocked" : "classic");
}

/* FPR at b bits per key: b / width counters per key, in blocks (blocked
 * Bloom's curve over blocks of 512 / width counters) or classic (the Bloom
 * curve). */
static amq_status t_curve(const amq__type *self, amq__spec *spec, double x,
                          bool inverse, double *out, amq_diag *diag) {
    unsigned width = 0;
    (void)self;
    AMQ_RETURN_IF_ERR(spec_width(spec, &width, diag));
    return amq__ctr_curve(spec, width, x, inverse, out, diag);
}

/* params: the counter block, and for a blocked filter layout u32 (= 1; a
 * classic filter writes the 24-byte block of every earlier frame). */
static void t_params_write(const amq__obj *o, amq__wr *w) {
    const amq__ctr *c = (const amq__ctr *)o;
    amq__ctr_params_write(o, w);
    if (c->layout == AMQ__CTR_BLOCKED)
        amq__wr_u32(w, AMQ__CTR_BLOCKED);
}

static amq_status t_load(const amq__type *self, amq__rd *r,
                         const uint8_t *payload, size_t len, bool view,
                         const amq_options *opt, amq__obj **out) {
    amq__ctr_shape shape;
    (void)self;
    if (r->len != COUNTING_PARAMS_BLOCKED)
        AMQ_RETURN_IF_ERR(amq__rd_expect(r, AMQ__CTR_PARAMS));
    AMQ_RETURN_IF_ERR(amq__ctr_params_read(r, COUNTING_WIDTHS, &shape));
    if (r->len == COUNTING_PARAMS_BLOCKED) {
        size_t at = amq__rd_at(r);
        AMQ_RETURN_IF_ERR(amq__ctr_layout_read(r, &shape));
        /* classic filters are written in the short form */
        if (shape.layout != AMQ__CTR_BLOCKED)
            return amq__rd_bad(r, at,
                               "counter layout %u in the 28-byte form "
                               "(classic parameters are 24 bytes)",
                               shape.layout);
    }
    AMQ_RETURN_IF_ERR(amq__ctr_shape_check(r, len, &shape));
    amq__ctr *c;
    AMQ_RETURN_IF_ERR(amq__ctr_open(sizeof(amq_counting), &shape, payload, len,
                                    view, opt, &c));
    *out = &c->o;
    return AMQ_OK;
}

/* Shapes beside the default (blocked, width 4) that take other kernels or
 * paths (test_kernels): blocked width 8, k past one AVX2 vector, a prime
 * block count, and the classic layout. */
static const char *const kernel_shapes[] = {
    "counting:width=8", "counting:m=12416,k=11", "counting:layout=classic",
    "counting:layout=classic,width=8", NULL};

const amq__type amq__type_counting = {
    .info = {.name = "counting",
             .type_id = AMQ__ID_counting,
             .caps = AMQ_CAP_REMOVE | AMQ_CAP_COUNT | AMQ_CAP_UNION |
                     AMQ_CAP_ESTIMATE,
             .summary = "counting Bloom filter: 4- or 8-bit sticky counters, "
                        "deletes; a key's counters in one cache line",
             .params = "width=BITS (4 or 8, default 4), layout=blocked|classic "
                       "(blocked, the default: a key's k counters in one "
                       "64-byte block; classic: k independent probes), "
                       "k=HASHES (1-16 blocked, 1-32 classic; default "
                       "optimal), m=COUNTERS (explicit size instead of "
                       "capacity/fpr)",
             .default_hash = AMQ_HASH_XXH3},
    .reads = 1,
    .reads_text = "1 (layout=classic: k)",
    .kernel_shapes = kernel_shapes,
    .create = t_create,
    .load = t_load,
    .add = amq__ctr_add,
    .add_batch = amq__ctr_add_batch,
    .contains = amq__ctr_contains,
    .contains_batch = amq__ctr_contains_batch,
    .remove = amq__ctr_remove,
    .count = amq__ctr_count,
    .merge = amq__ctr_merge,
    .estimate = amq__ctr_estimate,
    .fpr_bound = amq__ctr_fpr_bound,
    .describe = t_describe,
    .curve = t_curve,
    .params_write = t_params_write,
};
