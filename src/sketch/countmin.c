/*
 * countmin.c — the Count-Min sketch (Cormode & Muthukrishnan, "An improved
 * data stream summary: the count-min sketch and its applications", J.
 * Algorithms 2005) with conservative update (Estan & Varghese, "New
 * directions in traffic measurement and accounting", SIGCOMM 2002).
 *
 * d rows of w counters, each 8, 16 or 32 bits (one implementation; the width
 * only changes how a cell is read and written). Row r sends key hash h to
 * column reduce(h K_r, w), K_r = mix64((r+1)·φ) | 1, φ the 64-bit golden
 * ratio (row mapping 1): one 64-bit hash yields d independent-looking
 * columns at a multiply and a multiply-high each. Sketches saved before it
 * (mapping 0) keep column reduce(mix64(h + (r+1)·φ), w). Either way a row's
 * column is a bijection of h reduced, so two keys share it with probability
 * at most 1/w + 2^-64, all the per-row step of the bound below needs
 * (docs/structures.md §"Count-Min sketch").
 *
 *            col:  0    1    2    3    4   ...  w-1
 *   row 0        | 0 | 3 | 0 | 1 | 7 | ... | 0 |      estimate(x) =
 *   row 1        | 2 | 0 | 0 | 9 | 0 | ... | 1 |        min over rows of
 *   ...                   ^x         ^x                 C[r][col_r(x)]
 *   row d-1      | 0 | 0 | 4 | 0 | 0 | ... | 3 |
 *
 * Update rules (incr x by c, m = current estimate of x):
 *   standard      C[r][col_r(x)] += c for every row;
 *   conservative  C[r][col_r(x)] = max(C[r][col_r(x)], m + c): only the
 *                 counters that must grow do, never beyond the new estimate.
 * Invariant (both rules, and merges by counter-wise sums): every counter is
 * at least the true count of every key mapped to it, capped at MAX, so
 * est(x) >= min(f(x), MAX). Conservative counters are never above the
 * standard ones, so the standard bound est(x) <= f(x) + (e/w)·N with
 * probability >= 1 - e^{-d} (Markov per row, independent rows) holds too.
 * Counters saturate at MAX instead of wrapping; `saturated` counts them.
 *
 * As a membership filter (amq/filter.h "cms"): contains = estimate > 0, and
 * the nonzero counters are those of a partitioned Bloom filter with d parts
 * of w cells whatever the update rule, so fpr_bound() = prod_r (nonzero_r /
 * w), `nonzero[r]` kept exact on every update and recomputed after merge
 * and load. Sized from (capacity n, fpr) like a Bloom filter in cells (the
 * fewest cells per key c at which the best integer depth d gives
 * (1 - e^{-d/c})^d <= fpr, w = ceil(c·n/d)). Derivations, and what that
 * sizing means for the frequency guarantee: docs/structures.md §"Count-Min
 * sketch".
 *
 * Failure modes: none after construction (updates neither allocate nor
 * fail; saturation is reported, not refused). Construction and load fail
 * cleanly on bad arguments, overflow, allocation failure or corrupt input.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "amq/sketch.h"
#include "core/bits.h"
#include "core/fpr.h"
#include "core/mem.h"
#include "type/type.h"

#define CMS_BATCH 8
#define CMS_GOLDEN 0x9e3779b97f4a7c15ULL

struct amq_cms {
    amq__obj o;     /* o.items: N, the increments (saturating); o.table */
    uint8_t *cells; /* depth rows of width cells of cbits bits, LE */
    uint64_t width;
    unsigned depth;
    unsigned cbits;
    bool conservative;
    uint64_t max;       /* 2^cbits - 1 */
    uint64_t saturated; /* cells equal to max */
    bool scalar;        /* AMQ_OPT_SCALAR: the reference query only */
    bool mulshift;      /* row mapping 1 (below); false: mapping 0 */
    uint64_t nonzero[AMQ_CMS_MAX_DEPTH];
    uint64_t mul[AMQ_CMS_MAX_DEPTH]; /* mapping 1: K_r */
};

/* ---- cells ---------------------------------------------------------------- */

static inline uint64_t cell_get(const amq_cms *c, size_t i) {
    switch (c->cbits) {
    case 8: return c->cells[i];
    case 16: return amq__get_u16(c->cells + 2 * i);
    default: return amq__get_u32(c->cells + 4 * i);
    }
}

static inline void cell_put(amq_cms *c, size_t i, uint64_t v) {
    switch (c->cbits) {
    case 8: c->cells[i] = (uint8_t)v; break;
    case 16: amq__put_u16(c->cells + 2 * i, (uint16_t)v); break;
    default: amq__put_u32(c->cells + 4 * i, (uint32_t)v); break;
    }
}

static inline const uint8_t *cell_addr(const amq_cms *c, size_t i) {
    return c->cells + i * (c->cbits / 8);
}

/* Index of key h's cell in row r (row-major). Mapping 1 (new sketches):
 * column reduce(h K_r, w), a multiply-shift of the key's one hash, with
 * K_r = mix((r + 1) phi) | 1; mapping 0 (frames before it): column
 * reduce(mix(h + (r + 1) phi), w), a mix per row. */
static inline size_t cell_of(const amq_cms *c, uint64_t h, unsigned r) {
    uint64_t x = c->mulshift ? h * c->mul[r]
                             : amq__mix64(h + (uint64_t)(r + 1) * CMS_GOLDEN);
    return (size_t)((uint64_t)r * c->width + amq__reduce64(x, c->width));
}

/* The same for a sketch known to use mapping 1 (the kernels). */
static inline size_t cell_of_ms(const amq_cms *c, uint64_t h, unsigned r) {
    return (size_t)((uint64_t)r * c->width +
                    amq__reduce64(h * c->mul[r], c->width));
}

/* min(a + b, max) for a <= max, without overflow. */
static inline uint64_t sat_add(uint64_t a, uint64_t b, uint64_t max) {
    return b > max - a ? max : a + b;
}

/* ---- query kernels ------------------------------------------------------- */

/* A cell of `bytes` bytes (1, 2 or 4), a constant where inlined. */
static inline uint64_t cell_load(const amq_cms *c, size_t i, unsigned bytes) {
    const uint8_t *p = c->cells + i * bytes;
    return bytes == 1 ? p[0] : bytes == 2 ? amq__get_u16(p) : amq__get_u32(p);
}

/* contains for `bytes`-byte cells and depth d: every row read, no branch
 * on the counters (their loads do not wait for one another). */
static inline bool contains_k(const amq_cms *c, uint64_t h, unsigned d,
                              unsigned bytes, bool ms) {
    unsigned zero = 0;
    for (unsigned r = 0; r < d; r++)
        zero |= cell_load(c, ms ? cell_of_ms(c, h, r) : cell_of(c, h, r),
                          bytes) == 0;
    return zero == 0;
}

/* Mapping 0, any width and depth (cell_of reads the mapping). */
static bool k_any(const amq__obj *o, uint64_t h) {
    const amq_cms *c = (const amq_cms *)o;
    return contains_k(c, h, c->depth, c->cbits / 8, false);
}
static bool k8(const amq__obj *o, uint64_t h) {
    const amq_cms *c = (const amq_cms *)o;
    return contains_k(c, h, c->depth, 1, true);
}
static bool k16(const amq__obj *o, uint64_t h) {
    const amq_cms *c = (const amq_cms *)o;
    return contains_k(c, h, c->depth, 2, true);
}
static bool k32(const amq__obj *o, uint64_t h) {
    const amq_cms *c = (const amq_cms *)o;
    return contains_k(c, h, c->depth, 4, true);
}
static bool k32_d4(const amq__obj *o, uint64_t h) {
    return contains_k((const amq_cms *)o, h, 4, 4, true);
}
static bool k32_d5(const amq__obj *o, uint64_t h) {
    return contains_k((const amq_cms *)o, h, 5, 4, true);
}
static bool k32_d7(const amq__obj *o, uint64_t h) {
    return contains_k((const amq_cms *)o, h, 7, 4, true);
}

/* The reference: row by row, stopping at the first zero counter. */
static bool contains(const amq_cms *c, uint64_t h) {
    for (unsigned r = 0; r < c->depth; r++)
        if (cell_get(c, cell_of(c, h, r)) == 0)
            return false;
    return true;
}

static bool contains_ref(const amq__obj *o, uint64_t h) {
    return contains((const amq_cms *)o, h);
}

/* The row multipliers and the one-key kernel for c's mapping, counter
 * width and depth. */
static void choose_kernel(amq_cms *c) {
    for (unsigned r = 0; r < c->depth; r++)
        c->mul[r] = amq__mix64((uint64_t)(r + 1) * CMS_GOLDEN) | 1;
    if (c->scalar)
        c->o.contains = contains_ref;
    else if (!c->mulshift)
        c->o.contains = k_any;
    else if (c->cbits == 8)
        c->o.contains = k8;
    else if (c->cbits == 16)
        c->o.contains = k16;
    else
        c->o.contains = c->depth == 4   ? k32_d4
                        : c->depth == 5 ? k32_d5
                        : c->depth == 7 ? k32_d7
                                        : k32;
}

/* The minimum over the rows, without a branch on the counters. */
static inline uint64_t query_k(const amq_cms *c, uint64_t h, unsigned bytes) {
    uint64_t m = UINT64_MAX;
    for (unsigned r = 0; r < c->depth; r++) {
        uint64_t v = cell_load(c, cell_of(c, h, r), bytes);
        m = v < m ? v : m;
    }
    return m;
}

/* Ask for key h's d cells (for writing when `w`). */
static inline void prefetch_rows(const amq_cms *c, uint64_t h, bool w) {
    for (unsigned r = 0; r < c->depth; r++) {
        const uint8_t *p = cell_addr(c, cell_of(c, h, r));
        if (w)
            amq__prefetch_w(p);
        else
            amq__prefetch(p);
    }
}

static size_t cell_count(const amq_cms *c) {
    return (size_t)(c->width * c->depth);
}

/* Recount nonzero cells per row and saturated cells (after merge, load). */
static void recount(amq_cms *c) {
    c->saturated = 0;
    for (unsigned r = 0; r < c->depth; r++) {
        uint64_t nz = 0;
        for (uint64_t j = 0; j < c->width; j++) {
            uint64_t v = cell_get(c, (size_t)(r * c->width + j));
            nz += v != 0;
            c->saturated += v == c->max;
        }
        c->nonzero[r] = nz;
    }
}

/* ---- construction --------------------------------------------------------- */

static bool valid_bits(uint64_t b) { return b == 8 || b == 16 || b == 32; }

/* Bytes of a width x depth table of cbits cells; false on overflow. */
static bool shape_bytes(uint64_t width, unsigned depth, unsigned cbits,
                        size_t *bytes) {
    size_t cells;
    if (width > SIZE_MAX)
        return false;
    return amq__mul((size_t)width, depth, &cells) &&
           amq__mul(cells, cbits / 8, bytes);
}

static amq_status alloc_cms(uint64_t width, unsigned depth, unsigned cbits,
                            bool conservative, bool mulshift,
                            const amq_options *opt, const uint8_t *borrow,
                            amq_cms **out) {
    amq_cms *c;
    size_t bytes;
    void *wr;
    if (width == 0 || depth == 0 || depth > AMQ_CMS_MAX_DEPTH ||
        !valid_bits(cbits))
        return AMQ_ERR_INVALID;
    if (!shape_bytes(width, depth, cbits, &bytes) || bytes > (SIZE_MAX >> 2))
        return AMQ_ERR_OVERFLOW;
    AMQ_RETURN_IF_ERR(amq__obj_new(sizeof *c, opt, (void **)&c));
    c->width = width;
    c->depth = depth;
    c->cbits = cbits;
    c->conservative = conservative;
    c->mulshift = mulshift;
    c->max = cbits == 32 ? UINT32_MAX : (UINT64_C(1) << cbits) - 1;
    amq_status st = amq__obj_table(&c->o, bytes, borrow, &wr);
    if (st != AMQ_OK) {
        amq__obj_free(&c->o);
        return st;
    }
    c->cells = borrow != NULL ? (uint8_t *)borrow : wr;
    c->scalar = opt != NULL && (opt->flags & AMQ_OPT_SCALAR) != 0;
    choose_kernel(c);
    *out = c;
    return AMQ_OK;
}

amq_status amq_cms_new(uint64_t width, unsigned depth, unsigned counter_bits,
                       bool conservative, const amq_options *opt,
                       amq_cms **out) {
    if (out == NULL)
        return AMQ_ERR_INVALID;
    *out = NULL;
    amq_hasher h;
    AMQ_RETURN_IF_ERR(amq__hasher_from_options(opt, AMQ_HASH_XXH3, &h));
    return alloc_cms(width, depth, counter_bits, conservative, true, opt, NULL,
                     out);
}

/* width = ceil(e/eps), depth = ceil(ln(1/delta)). */
static amq_status shape_for_error(double eps, double delta, uint64_t *width,
                                  unsigned *depth) {
    if (!(eps > 0.0 && eps < 1.0) || !(delta > 0.0 && delta < 1.0))
        return AMQ_ERR_INVALID;
    double w = ceil(M_E / eps), d = ceil(-log(delta));
    if (!(w < 0x1p60))
        return AMQ_ERR_OVERFLOW;
    if (d > AMQ_CMS_MAX_DEPTH)
        return AMQ_ERR_INVALID;
    *width = (uint64_t)w;
    *depth = d < 1.0 ? 1u : (unsigned)d;
    return AMQ_OK;
}

amq_status amq_cms_new_error(double eps, double delta, unsigned counter_bits,
                             bool conservative, const amq_options *opt,
                             amq_cms **out) {
    uint64_t w;
    unsigned d;
    if (out == NULL)
        return AMQ_ERR_INVALID;
    *out = NULL;
    AMQ_RETURN_IF_ERR(shape_for_error(eps, delta, &w, &d));
    return amq_cms_new(w, d, counter_bits, conservative, opt, out);
}

void amq_cms_free(amq_cms *c) { amq__obj_free(c ? &c->o : NULL); }

/* ---- updates and queries -------------------------------------------------- */

/* The reference: row by row through cell_get. */
static uint64_t query_ref(const amq_cms *c, uint64_t h) {
    uint64_t m = UINT64_MAX;
    for (unsigned r = 0; r < c->depth; r++) {
        uint64_t v = cell_get(c, cell_of(c, h, r));
        if (v < m)
            m = v;
    }
    return m;
}

uint64_t amq_cms_query(const amq_cms *c, uint64_t h) {
    if (c->scalar)
        return query_ref(c, h);
    switch (c->cbits) {
    case 8: return query_k(c, h, 1);
    case 16: return query_k(c, h, 2);
    default: return query_k(c, h, 4);
    }
}

static void set_cell(amq_cms *c, size_t i, unsigned r, uint64_t old,
                     uint64_t v) {
    if (v == old)
        return;
    c->nonzero[r] += old == 0;
    c->saturated += v == c->max;
    cell_put(c, i, v);
}

uint64_t amq_cms_incr(amq_cms *c, uint64_t h, uint64_t by) {
    size_t idx[AMQ_CMS_MAX_DEPTH];
    uint64_t val[AMQ_CMS_MAX_DEPTH], m = UINT64_MAX;
    for (unsigned r = 0; r < c->depth; r++) {
        idx[r] = cell_of(c, h, r);
        val[r] = cell_get(c, idx[r]);
        if (val[r] < m)
            m = val[r];
    }
    if (by == 0)
        return m;
    uint64_t target = sat_add(m, by, c->max);
    for (unsigned r = 0; r < c->depth; r++) {
        uint64_t v = c->conservative ? (val[r] > target ? val[r] : target)
                                     : sat_add(val[r], by, c->max);
        set_cell(c, idx[r], r, val[r], v);
    }
    c->o.items = sat_add(c->o.items, by, UINT64_MAX);
    return target;
}

/* Batches: a group's cells asked for (every row), then read; the group's
 * misses overlap. */
void amq_cms_query_batch(const amq_cms *c, const uint64_t *h, size_t n,
                         uint64_t *out) {
    for (size_t i = 0; i < n; i += CMS_BATCH) {
        size_t g = n - i < CMS_BATCH ? n - i : CMS_BATCH;
        for (size_t j = 0; j < g && !c->scalar; j++)
            prefetch_rows(c, h[i + j], false);
        for (size_t j = 0; j < g; j++)
            out[i + j] = amq_cms_query(c, h[i + j]);
    }
}

static void contains_batch(const amq_cms *c, const uint64_t *h, size_t n,
                           uint8_t *out) {
    for (size_t i = 0; i < n; i += CMS_BATCH) {
        size_t g = n - i < CMS_BATCH ? n - i : CMS_BATCH;
        for (size_t j = 0; j < g && !c->scalar; j++)
            prefetch_rows(c, h[i + j], false);
        for (size_t j = 0; j < g; j++)
            out[i + j] = c->o.contains(&c->o, h[i + j]);
    }
}

amq_status amq_cms_merge(amq_cms *dst, const amq_cms *src) {
    if (dst == NULL || src == NULL)
        return AMQ_ERR_INVALID;
    if (dst->width != src->width || dst->depth != src->depth ||
        dst->cbits != src->cbits || dst->mulshift != src->mulshift)
        return AMQ_ERR_INCOMPATIBLE;
    size_t n = cell_count(dst);
    for (size_t i = 0; i < n; i++)
        cell_put(dst, i, sat_add(cell_get(dst, i), cell_get(src, i), dst->max));
    dst->o.items = sat_add(dst->o.items, src->o.items, UINT64_MAX);
    recount(dst);
    return AMQ_OK;
}

uint64_t amq_cms_width(const amq_cms *c) { return c->width; }
unsigned amq_cms_depth(const amq_cms *c) { return c->depth; }
unsigned amq_cms_counter_bits(const amq_cms *c) { return c->cbits; }
uint64_t amq_cms_counter_max(const amq_cms *c) { return c->max; }
bool amq_cms_conservative(const amq_cms *c) { return c->conservative; }
uint64_t amq_cms_total(const amq_cms *c) { return c->o.items; }
uint64_t amq_cms_saturated(const amq_cms *c) { return c->saturated; }
double amq_cms_epsilon(const amq_cms *c) { return M_E / (double)c->width; }
double amq_cms_delta(const amq_cms *c) { return exp(-(double)c->depth); }

double amq_cms_fpr_bound(const amq_cms *c) {
    double p = 1.0;
    for (unsigned r = 0; r < c->depth; r++)
        p *= (double)c->nonzero[r] / (double)c->width;
    return p;
}

/* ---- the membership curve ------------------------------------------------- */

/* FPR at `cells` cells per key with depth d: every row is one probe's
 * slice, as in a partitioned Bloom filter. */
static double fpr_cells(double cells, unsigned d) {
    return amq__fpr_probes(cells, d);
}

static unsigned best_depth(double cells) {
    return amq__best_probes(cells, AMQ_CMS_MAX_DEPTH);
}

/* Fewest cells per key reaching fpr with depth d (0: the best depth). */
static double cells_for(double fpr, unsigned d) {
    return amq__cells_for(fpr, d, AMQ_CMS_MAX_DEPTH);
}

static amq_status size_for(uint64_t capacity, double fpr, uint64_t *width,
                           unsigned *depth) {
    double c = cells_for(fpr, 0);
    unsigned d = best_depth(c);
    double w = ceil(c * (double)capacity / (double)d);
    if (!(w < 0x1p56))
        return AMQ_ERR_OVERFLOW;
    *width = w < 1.0 ? 1 : (uint64_t)w;
    *depth = d;
    return AMQ_OK;
}

/* ---- the generic interface ------------------------------------------------ */

typedef struct cms_spec {
    uint64_t width, depth, cbits, conservative, map;
    double eps, delta;
    bool has_width, has_depth, has_eps, has_delta;
} cms_spec;

static amq_status read_spec(amq__spec *s, cms_spec *p, amq_diag *diag) {
    p->cbits = 32;
    p->conservative = 1;
    p->map = 1;
    p->delta = 0.01;
    AMQ_RETURN_IF_ERR(amq__spec_u64(s, "width", 1, UINT64_C(1) << 56, &p->width,
                                    &p->has_width, diag));
    AMQ_RETURN_IF_ERR(amq__spec_u64(s, "depth", 1, AMQ_CMS_MAX_DEPTH, &p->depth,
                                    &p->has_depth, diag));
    AMQ_RETURN_IF_ERR(
        amq__spec_f64(s, "eps", 1e-15, 0.999, &p->eps, &p->has_eps, diag));
    AMQ_RETURN_IF_ERR(amq__spec_f64(s, "delta", 1e-27, 0.999, &p->delta,
                                    &p->has_delta, diag));
    AMQ_RETURN_IF_ERR(
        amq__spec_u64(s, "counter", 8, 32, &p->cbits, NULL, diag));
    AMQ_RETURN_IF_ERR(
        amq__spec_u64(s, "conservative", 0, 1, &p->conservative, NULL, diag));
    AMQ_RETURN_IF_ERR(amq__spec_u64(s, "map", 0, 1, &p->map, NULL, diag));
    if (!valid_bits(p->cbits))
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "cms counter width must be 8, 16 or 32 bits");
    return AMQ_OK;
}

/* Width and depth from whichever of the three ways the spec chose. */
static amq_status resolve_shape(const cms_spec *p, uint64_t capacity,
                                double fpr, uint64_t *w, unsigned *d,
                                amq_diag *diag) {
    bool dims = p->has_width || p->has_depth, err = p->has_eps || p->has_delta;
    if (dims && err)
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "cms takes width= and depth=, "
                         "or eps= (and delta=), not both");
    if (dims) {
        if (!(p->has_width && p->has_depth))
            return amq__diag(diag, AMQ_ERR_SPEC, 0,
                             "cms needs both width= and depth=");
        *w = p->width;
        *d = (unsigned)p->depth;
        return AMQ_OK;
    }
    if (err) {
        if (!p->has_eps)
            return amq__diag(diag, AMQ_ERR_SPEC, 0, "cms: delta= needs eps=");
        amq_status st = shape_for_error(p->eps, p->delta, w, d);
        if (st != AMQ_OK)
            return amq__diag(diag, AMQ_ERR_SPEC, 0,
                             "cms: eps=%g, delta=%g give no usable shape",
                             p->eps, p->delta);
        return AMQ_OK;
    }
    if (capacity == 0)
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "cms needs a capacity and "
                         "fpr, or width= and depth=, or eps=[,delta=]");
    return size_for(capacity, fpr, w, d);
}

static amq_status t_create(const amq__type *self, amq__spec *spec,
                           uint64_t capacity, double fpr,
                           const amq_options *opt, amq__obj **out,
                           amq_diag *diag) {
    cms_spec p;
    uint64_t w = 0;
    unsigned d = 0;
    amq_cms *c;
    (void)self;
    memset(&p, 0, sizeof p);
    AMQ_RETURN_IF_ERR(read_spec(spec, &p, diag));
    AMQ_RETURN_IF_ERR(resolve_shape(&p, capacity, fpr, &w, &d, diag));
    AMQ_RETURN_IF_ERR(alloc_cms(w, d, (unsigned)p.cbits, p.conservative != 0,
                                p.map != 0, opt, NULL, &c));
    *out = &c->o;
    return AMQ_OK;
}

static amq_status t_add(amq__obj *o, uint64_t h) {
    amq_cms_incr((amq_cms *)o, h, 1);
    return AMQ_OK;
}
/* The increments in order, a group's cells asked for (to write) first. */
static amq_status t_add_batch(amq__obj *o, const uint64_t *h, size_t n,
                              size_t *done) {
    amq_cms *c = (amq_cms *)o;
    for (size_t i = 0; i < n; i += CMS_BATCH) {
        size_t g = n - i < CMS_BATCH ? n - i : CMS_BATCH;
        for (size_t j = 0; j < g && !c->scalar; j++)
            prefetch_rows(c, h[i + j], true);
        for (size_t j = 0; j < g; j++)
            amq_cms_incr(c, h[i + j], 1);
    }
    *done = n;
    return AMQ_OK;
}
static void t_batch(const amq__obj *o, const uint64_t *h, size_t n,
                    uint8_t *out) {
    contains_batch((const amq_cms *)o, h, n, out);
}
static amq_status t_count(const amq__obj *o, uint64_t h, uint64_t *out) {
    *out = amq_cms_query((const amq_cms *)o, h);
    return AMQ_OK;
}
static amq_status t_merge(amq__obj *dst, const amq__obj *src,
                          amq__merge_op op) {
    (void)op; /* union only: the caps keep intersect away */
    return amq_cms_merge((amq_cms *)dst, (const amq_cms *)src);
}
static double t_bound(const amq__obj *o) {
    return amq_cms_fpr_bound((const amq_cms *)o);
}
static size_t t_describe(const amq__obj *o, char *buf, size_t cap) {
    const amq_cms *c = (const amq_cms *)o;
    return amq__describe(
        buf, cap, "width=%llu,depth=%u,counter=%u,conservative=%u%s",
        (unsigned long long)c->width, c->depth, c->cbits,
        c->conservative ? 1u : 0u, c->mulshift ? "" : ",map=0");
}

/* The curve reads counter= and a fixed depth (depth=, or delta=); the keys
 * that only size a sketch are accepted and do not change it. */
static amq_status t_curve(const amq__type *self, amq__spec *spec, double x,
                          bool inverse, double *out, amq_diag *diag) {
    cms_spec p;
    (void)self;
    memset(&p, 0, sizeof p);
    AMQ_RETURN_IF_ERR(read_spec(spec, &p, diag));
    unsigned cbits = (unsigned)p.cbits;
    unsigned d = p.has_depth ? (unsigned)p.depth : 0;
    if (!p.has_depth && p.has_delta)
        d = (unsigned)fmax(1.0, ceil(-log(p.delta)));
    if (inverse) {
        *out = cells_for(x, d) * cbits;
    } else {
        double cells = x / cbits;
        *out = fpr_cells(cells, d ? d : best_depth(cells));
    }
    return AMQ_OK;
}

/* params: width u64 | depth u32 | counter bits u32 | flags u32 (bit 0:
 * conservative; bit 1: row mapping 1, clear in frames from before it) |
 * reserved u32 (0) | total u64 */
#define PARAMS_LEN 32
#define FLAG_CONSERVATIVE 0x1u
#define FLAG_MULSHIFT 0x2u

static void t_params_write(const amq__obj *o, amq__wr *w) {
    const amq_cms *c = (const amq_cms *)o;
    amq__wr_u64(w, c->width);
    amq__wr_u32(w, c->depth);
    amq__wr_u32(w, c->cbits);
    amq__wr_u32(w, (c->conservative ? FLAG_CONSERVATIVE : 0) |
                       (c->mulshift ? FLAG_MULSHIFT : 0));
    amq__wr_u32(w, 0);
    amq__wr_u64(w, o->items);
}

typedef struct cms_shape {
    uint64_t width, total;
    uint32_t depth, bits, flags;
    size_t at_total;
} cms_shape;

static amq_status read_params(amq__rd *r, size_t len, cms_shape *s) {
    size_t bytes;
    AMQ_RETURN_IF_ERR(amq__rd_expect(r, PARAMS_LEN));
    size_t at_w = amq__rd_u64(r, &s->width);
    size_t at_d = amq__rd_u32(r, &s->depth);
    size_t at_bits = amq__rd_u32(r, &s->bits);
    size_t at_flags = amq__rd_u32(r, &s->flags);
    AMQ_RETURN_IF_ERR(amq__rd_zero32(r));
    s->at_total = amq__rd_u64(r, &s->total);
    if (s->depth == 0 || s->depth > AMQ_CMS_MAX_DEPTH)
        return amq__rd_bad(r, at_d, "depth %u out of range", s->depth);
    if (!valid_bits(s->bits))
        return amq__rd_bad(r, at_bits, "counter width %u out of range",
                           s->bits);
    if ((s->flags & ~(FLAG_CONSERVATIVE | FLAG_MULSHIFT)) != 0)
        return amq__rd_bad(r, at_flags, "unknown flags %#x", s->flags);
    if (s->width == 0 || !shape_bytes(s->width, s->depth, s->bits, &bytes) ||
        bytes != len)
        return amq__rd_bad(r, at_w,
                           "%llu x %u cells of %u bits do not match "
                           "a %zu-byte payload",
                           (unsigned long long)s->width, s->depth, s->bits,
                           len);
    return AMQ_OK;
}

/* No counter can exceed N, the sum of every increment. */
static bool counters_within(const amq_cms *c) {
    size_t n = cell_count(c);
    for (size_t i = 0; i < n; i++)
        if (cell_get(c, i) > c->o.items)
            return false;
    return true;
}

static amq_status t_load(const amq__type *self, amq__rd *r,
                         const uint8_t *payload, size_t len, bool view,
                         const amq_options *opt, amq__obj **out) {
    cms_shape sh;
    amq_cms *c;
    (void)self;
    AMQ_RETURN_IF_ERR(read_params(r, len, &sh));
    AMQ_RETURN_IF_ERR(alloc_cms(
        sh.width, sh.depth, sh.bits, sh.flags & FLAG_CONSERVATIVE,
        (sh.flags & FLAG_MULSHIFT) != 0, opt, view ? payload : NULL, &c));
    if (!view)
        memcpy(c->cells, payload, len);
    c->o.items = sh.total;
    if (!counters_within(c)) {
        amq_cms_free(c);
        return amq__rd_bad(r, sh.at_total,
                           "a counter is above the total "
                           "count");
    }
    recount(c);
    *out = &c->o;
    return AMQ_OK;
}

const amq__type amq__type_cms = {
    .info = {.name = "cms",
             .type_id = AMQ__ID_cms,
             .caps = AMQ_CAP_COUNT | AMQ_CAP_UNION,
             .summary = "Count-Min sketch (conservative update); contains = "
                        "estimate > 0",
             .params = "width=COUNTERS per row and depth=ROWS (1-64), or "
                       "eps=ERROR (width e/eps) and delta=PROB (depth "
                       "ln 1/delta, default 0.01); counter=BITS (8, 16, 32; "
                       "default 32), conservative=0|1 (default 1), map=0|1 "
                       "(row columns: 0 a mix per row, as frames before "
                       "map 1; default 1 a multiply-shift); without "
                       "them: sized so an absent key reads nonzero with "
                       "probability fpr at capacity",
             .default_hash = AMQ_HASH_XXH3},
    .reads_param = "depth",
    .kernel_shapes = amq__defaults_only,
    .create = t_create,
    .load = t_load,
    .add = t_add,
    .add_batch = t_add_batch,
    .contains = contains_ref,
    .contains_batch = t_batch,
    .count = t_count,
    .merge = t_merge,
    .fpr_bound = t_bound,
    .describe = t_describe,
    .curve = t_curve,
    .params_write = t_params_write,
};
