/*
 * counters.c — the counter array behind counting.c and spectral.c (layout,
 * invariants and saturation rule in counters.h).
 */
#include <math.h>
#include <string.h>

#include "bloom/counters.h"
#include "core/fpr.h"

#define CTR_BATCH 16
/* Fixed seed of the probe multipliers ("counting" in ASCII). Part of the
 * file format: never edit. */
#define CTR_MUL_SEED 0x636f756e74696e67ULL
#define CTR_MAX_M (UINT64_C(1) << 58)

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

amq_status amq__ctr_new(size_t self_bytes, uint64_t m, unsigned width,
                        unsigned k, const amq_options *opt,
                        const uint64_t *borrow, amq__ctr **out) {
    unsigned lw = log2_width(width);
    uint64_t per, state = CTR_MUL_SEED;
    amq__ctr *c;
    void *wr;
    if (m == 0 || lw == 0 || k == 0 || k > AMQ__CTR_MAX_K)
        return AMQ_ERR_INVALID;
    if (m > CTR_MAX_M)
        return AMQ_ERR_OVERFLOW;
    per = 64u / width;
    m = (m + per - 1) / per * per;
    if (m / per > SIZE_MAX / 8)
        return AMQ_ERR_OVERFLOW;
    AMQ_RETURN_IF_ERR(amq__obj_new(self_bytes, opt, (void **)&c));
    c->m = m;
    c->width = width;
    c->lw = lw;
    c->k = k;
    c->max = (UINT64_C(1) << width) - 1;
    for (unsigned j = 0; j < k; j++)
        c->mul[j] = splitmix64(&state) | 1u;
    amq_status st = amq__obj_table(&c->o, (size_t)(m / per) * 8, borrow, &wr);
    if (st != AMQ_OK) {
        amq__obj_free(&c->o);
        return st;
    }
    c->words = borrow != NULL ? (uint64_t *)borrow : wr;
    *out = c;
    return AMQ_OK;
}

/* ---- updates and queries ------------------------------------------------ */

amq_status amq__ctr_add(amq__obj *o, uint64_t h) {
    amq__ctr *c = (amq__ctr *)o;
    for (unsigned j = 0; j < c->k; j++)
        amq__ctr_inc(c, amq__ctr_probe(c, h, j));
    c->o.items++;
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

/* Prefetch the words of the first two probes of a group of keys before
 * testing any of them, so their misses overlap. */
void amq__ctr_contains_batch(const amq__obj *o, const uint64_t *h, size_t n,
                             uint8_t *out) {
    const amq__ctr *c = (const amq__ctr *)o;
    size_t i = 0;
    for (; i + CTR_BATCH <= n; i += CTR_BATCH) {
        for (size_t j = 0; j < CTR_BATCH; j++) {
            amq__prefetch(amq__ctr_word(c, amq__ctr_probe(c, h[i + j], 0)));
            if (c->k > 1)
                amq__prefetch(amq__ctr_word(c, amq__ctr_probe(c, h[i + j], 1)));
        }
        for (size_t j = 0; j < CTR_BATCH; j++)
            out[i + j] = amq__ctr_contains(o, h[i + j]);
    }
    for (; i < n; i++)
        out[i] = amq__ctr_contains(o, h[i]);
}

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
    if (d->m != s->m || d->k != s->k || d->width != s->width)
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

double amq__ctr_fpr_bound(const amq__obj *o) {
    const amq__ctr *c = (const amq__ctr *)o;
    return pow((double)c->nonzero / (double)c->m, (double)c->k);
}

amq_status amq__ctr_estimate(const amq__obj *o, double *out) {
    const amq__ctr *c = (const amq__ctr *)o;
    double m = (double)c->m, x = (double)c->nonzero;
    *out = c->nonzero >= c->m ? INFINITY : -(m / (double)c->k) * log1p(-x / m);
    return AMQ_OK;
}

/* ---- sizing and curve --------------------------------------------------- */

static unsigned best_k(double cells) {
    return amq__best_probes(cells, AMQ__CTR_MAX_K);
}

double amq__ctr_curve_fpr(double cells, unsigned k) {
    return amq__fpr_probes(cells, k ? k : best_k(cells));
}

double amq__ctr_curve_cells(double fpr, unsigned k) {
    return amq__cells_for(fpr, k, AMQ__CTR_MAX_K);
}

/* m and k (k = 0 on entry: chosen) for capacity keys at fpr. */
static amq_status size_for(uint64_t capacity, double fpr, unsigned *k,
                           uint64_t *m) {
    double cells, mm;
    if (capacity == 0 || !(fpr > 0.0 && fpr < 1.0))
        return AMQ_ERR_INVALID;
    cells = amq__ctr_curve_cells(fpr, *k);
    mm = ceil(cells * (double)capacity);
    if (!(mm <= (double)CTR_MAX_M))
        return AMQ_ERR_OVERFLOW;
    *m = (uint64_t)mm;
    if (*k == 0)
        *k = best_k(cells);
    return AMQ_OK;
}

amq_status amq__ctr_spec_shape(amq__spec *spec, uint64_t capacity, double fpr,
                               unsigned *k, uint64_t *m, const char *name,
                               amq_diag *diag) {
    uint64_t kk = 0, mm = 0;
    bool has_m;
    AMQ_RETURN_IF_ERR(
        amq__spec_u64(spec, "k", 1, AMQ__CTR_MAX_K, &kk, NULL, diag));
    AMQ_RETURN_IF_ERR(
        amq__spec_u64(spec, "m", 1, CTR_MAX_M, &mm, &has_m, diag));
    *k = (unsigned)kk;
    if (!has_m) {
        if (capacity == 0)
            return amq__diag(diag, AMQ_ERR_SPEC, 0,
                             "%s needs a capacity and fpr, or m=COUNTERS",
                             name);
        return size_for(capacity, fpr, k, m);
    }
    if (*k == 0)
        *k = capacity ? best_k((double)mm / (double)capacity) : 7;
    *m = mm;
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

amq_status amq__ctr_params_read(amq__rd *r, size_t payload_len,
                                uint64_t width_ok, amq__ctr_shape *s) {
    uint64_t m;
    uint32_t k, w;
    size_t at_m = amq__rd_u64(r, &m);
    size_t at_k = amq__rd_u32(r, &k);
    size_t at_w = amq__rd_u32(r, &w);
    amq__rd_u64(r, &s->items);
    if (w >= 64 || log2_width(w) == 0 || !(width_ok & (UINT64_C(1) << w)))
        return amq__rd_bad(r, at_w, "counter width %u not allowed", w);
    if (k == 0 || k > AMQ__CTR_MAX_K)
        return amq__rd_bad(r, at_k, "probe count %u out of range", k);
    if (m == 0 || m > CTR_MAX_M || m % (64u / w) != 0 ||
        m / (64u / w) != payload_len / 8 || payload_len % 8 != 0)
        return amq__rd_bad(r, at_m,
                           "%llu counters of %u bits do not match "
                           "a %zu-byte payload",
                           (unsigned long long)m, w, payload_len);
    s->m = m;
    s->k = k;
    s->width = w;
    return AMQ_OK;
}

amq_status amq__ctr_open(size_t self_bytes, const amq__ctr_shape *s,
                         const uint8_t *payload, size_t len, bool view,
                         const amq_options *opt, amq__ctr **out) {
    amq__ctr *c;
    AMQ_RETURN_IF_ERR(amq__ctr_new(self_bytes, s->m, s->width, s->k, opt,
                                   view ? (const uint64_t *)payload : NULL,
                                   &c));
    if (!view)
        memcpy(c->words, payload, len);
    c->o.items = s->items;
    recount(c);
    *out = c;
    return AMQ_OK;
}
