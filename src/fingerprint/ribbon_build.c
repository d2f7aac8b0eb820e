/*
 * ribbon_build.c — building a Ribbon filter (ribbon.c describes it): the
 * keys sorted by their mixed hash (core/sort.h), banded layer by layer
 * (bumped layers overloaded on purpose, their failures moved to the next
 * layer bucket by bucket; the last layer standard, retried with the next
 * seed), then back-substituted into one table.
 */
#include <string.h>

#include "core/sort.h"
#include "fingerprint/ribbon_impl.h"

/* ---- construction: banding ---------------------------------------------- */

typedef struct rb_band {
    uint64_t *c64; /* W = 64: coefficients, 0 = empty row */
    rb_u128 *c128; /* W = 128                             */
    uint32_t *res; /* right-hand sides (where the coefficient is not 0) */
    uint64_t rows;
} rb_band;

static void rb_band_free(const amq__mem *m, rb_band *bd) {
    amq__free(m, bd->c64, (size_t)bd->rows * sizeof *bd->c64);
    amq__free(m, bd->c128, (size_t)bd->rows * sizeof *bd->c128);
    amq__free(m, bd->res, (size_t)bd->rows * sizeof *bd->res);
    memset(bd, 0, sizeof *bd);
}

static amq_status rb_band_alloc(const amq__mem *m, uint64_t rows, unsigned band,
                                rb_band *bd) {
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
    uint32_t mask; /* fingerprint bits solved (r or r + 1) */
    /* a pair (rb_build): the value's bits, above the fingerprint's */
    uint32_t vmask, shift;
    bool pair;
    uint32_t bucket_log2;
    uint32_t thr[4];
    const rb_values *vals; /* retrieval: values by layer-0 key, or NULL */
    const amq_ribbon *f;   /* the coefficient form; retrieval: seeds     */
    uint32_t layer;
} rb_shape;

/* Retrieval: the value of the key whose layer-i hash is x (i >= 1: the
 * keys of layer 0 carry theirs, aligned). Undo the mixes of layers i..1
 * to its layer-0 key, then find it in the sorted layer-0 keys: start
 * where a uniform hash would sit, widen until bracketed, bisect. */
static uint32_t rb_value_of(const rb_shape *g, uint64_t x) {
    const rb_values *vs = g->vals;
    for (uint32_t j = g->layer + 1; j-- > 1;)
        x = rb_unmix(x) - g->f->layer[j].seed;
    size_t lo = (size_t)amq__reduce64(x, vs->n), hi = lo + 1, step = 64;
    while (lo > 0 && vs->h[lo] > x) {
        hi = lo;
        lo = lo > step ? lo - step : 0;
        step *= 2;
    }
    while (hi < vs->n && vs->h[hi - 1] < x) {
        lo = hi - 1;
        hi = vs->n - hi > step ? hi + step : vs->n;
        step *= 2;
    }
    while (hi - lo > 1) { /* h[lo] <= x <= h[hi - 1] */
        size_t mid = lo + (hi - lo) / 2;
        if (vs->h[mid] <= x)
            lo = mid;
        else
            hi = mid;
    }
    return vs->v[lo];
}

/* Key x's equation; kv: its value when the caller has it (retrieval,
 * layer 0), else NULL. */
static inline rb_eq rb_equation(uint64_t x, const uint32_t *kv,
                                const rb_shape *g, unsigned band) {
    rb_eq e;
    e.start = amq__reduce64(x, g->starts);
    bool v3 = g->f->version >= 3;
    e.coef = rb_coef_lo(x, v3);
    if (band == 128)
        e.coef |= (rb_u128)rb_coef_hi(x, v3) << 64;
    if (g->pair) {
        uint32_t v = kv != NULL ? *kv : rb_value_of(g, x);
        e.fp = (rb_fp(x) & g->mask) | (v & g->vmask) << g->shift;
    } else {
        e.fp = (kv != NULL        ? *kv
                : g->vals != NULL ? rb_value_of(g, x)
                                  : rb_fp(x)) &
               g->mask;
    }
    return e;
}

/* The primitives of each width, then the template (ribbon_band.h) once
 * per width. */
static inline uint64_t *rb_rows_64(const rb_band *bd) { return bd->c64; }
static inline rb_u128 *rb_rows_128(const rb_band *bd) { return bd->c128; }
static inline unsigned rb_ctz_64(uint64_t c) {
    return (unsigned)__builtin_ctzll(c);
}
static inline unsigned rb_ctz_128(rb_u128 c) {
    uint64_t lo = (uint64_t)c;
    return lo ? (unsigned)__builtin_ctzll(lo)
              : 64 + (unsigned)__builtin_ctzll((uint64_t)(c >> 64));
}
static inline unsigned rb_parity_64(uint64_t v) {
    return (unsigned)__builtin_parityll(v);
}
static inline unsigned rb_parity_128(rb_u128 v) {
    return (unsigned)__builtin_parityll((uint64_t)v ^ (uint64_t)(v >> 64));
}

#define RB_W 64
#define RB_COEF uint64_t
#include "fingerprint/ribbon_band.h"
#undef RB_W
#undef RB_COEF
#define RB_W 128
#define RB_COEF rb_u128
#include "fingerprint/ribbon_band.h"
#undef RB_W
#undef RB_COEF

static inline uint64_t rb_insert(rb_band *bd, rb_eq e, unsigned band) {
    return band == 128 ? rb_insert_128(bd, e.start, e.coef, e.fp)
                       : rb_insert_64(bd, e.start, (uint64_t)e.coef, e.fp);
}

static inline void rb_clear_row(rb_band *bd, uint64_t i, unsigned band) {
    if (band == 128)
        bd->c128[i] = 0;
    else
        bd->c64[i] = 0;
}

/* One bucket's keys k[0..cnt) (ascending start from base), banded from the
 * highest offset down; kv: their values, aligned (or NULL). Returns the
 * bucket's code; the keys below its threshold are not in the band (those
 * inserted were the last ones, and their rows are cleared again). A
 * bucket fills at most B + W - 1 rows. */
static unsigned rb_band_bucket(rb_band *bd, const uint64_t *k,
                               const uint32_t *kv, size_t cnt, uint64_t base,
                               const rb_shape *g, unsigned band) {
    uint64_t row[RB_BUILD_BUCKET + 128];
    uint32_t off[RB_BUILD_BUCKET + 128];
    size_t top = 0;
    for (size_t q = cnt; q-- > 0;) {
        rb_eq e = rb_equation(k[q], kv != NULL ? kv + q : NULL, g, band);
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

/* A coded layer: band k[0..n) (ascending start; kv their values or NULL)
 * bucket by bucket, write the codes, and move the bumped keys to
 * k[0..return) in order. */
static size_t rb_band_coded(rb_band *bd, uint64_t *k, const uint32_t *kv,
                            size_t n, const rb_shape *g, uint64_t *meta,
                            unsigned band) {
    size_t i = 0, out = 0;
    while (i < n) {
        uint64_t bucket = amq__reduce64(k[i], g->starts) >> g->bucket_log2;
        uint64_t base = bucket << g->bucket_log2;
        size_t j = i + 1;
        while (j < n &&
               (amq__reduce64(k[j], g->starts) >> g->bucket_log2) == bucket)
            j++;
        unsigned code = rb_band_bucket(bd, k + i, kv != NULL ? kv + i : NULL,
                                       j - i, base, g, band);
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
static bool rb_band_all(rb_band *bd, const uint64_t *k, const uint32_t *kv,
                        size_t n, const rb_shape *g, unsigned band) {
    for (size_t i = 0; i < n; i++)
        if (rb_insert(bd,
                      rb_equation(k[i], kv != NULL ? kv + i : NULL, g, band),
                      band) == RB_NO_ROW)
            return false;
    return true;
}

/* ---- construction: the layers ------------------------------------------- */

typedef struct rb_work {
    rb_band band[RB_MAX_LAYERS];
    uint64_t *meta[RB_MAX_LAYERS];
    size_t meta_words[RB_MAX_LAYERS];
    uint64_t *keys;
    size_t nkeys;
    const rb_values *vals; /* retrieval, or NULL */
    unsigned pair_bits;    /* a pair's value bits, else 0 */
} rb_work;

static void rb_work_free(const amq__mem *m, rb_work *w) {
    for (uint32_t i = 0; i < RB_MAX_LAYERS; i++) {
        rb_band_free(m, &w->band[i]);
        amq__free(m, w->meta[i], w->meta_words[i] * sizeof *w->meta[i]);
    }
    amq__free(m, w->keys, w->nkeys * sizeof *w->keys);
    memset(w, 0, sizeof *w);
}

/* Retrieval: the values aligned with layer i's keys, which layer 0's
 * are (its keys are the given ones, in order; a retry re-mixes them in
 * place); NULL otherwise. */
static const uint32_t *rb_aligned(const rb_work *w, uint32_t i) {
    return w->vals != NULL && i == 0 ? w->vals->v : NULL;
}

static rb_shape rb_shape_of(const amq_ribbon *f, const rb_work *w, uint32_t i) {
    rb_shape g;
    g.starts = f->layer[i].starts;
    g.mask = rb_mask(f->r + (f->bits64 % 64 != 0));
    g.pair = w->pair_bits > 0;
    g.shift = f->r + (f->bits64 % 64 != 0);
    g.vmask = rb_mask(w->pair_bits);
    g.bucket_log2 = f->bucket_log2;
    memcpy(g.thr, f->thr, sizeof g.thr);
    g.vals = w->vals;
    g.f = f;
    g.layer = i;
    return g;
}

/* The last, standard layer i over k[0..n) (their hashes for this layer,
 * mixed with its seed). On failure: the next seed (the keys are unmixed
 * back to the previous layer's hashes and mixed again) and, every 8th
 * time, ~1/8 more rows. */
static amq_status rb_last_layer(const amq__mem *m, amq_ribbon *f, rb_work *w,
                                uint64_t *k, size_t n, uint32_t i) {
    rb_layer *l = &f->layer[i];
    uint64_t blocks;
    AMQ_RETURN_IF_ERR(amq__rb_standard_blocks(n, f->band, &blocks));
    f->layers = i + 1;
    l->coded = false;
    for (unsigned a = 0; a < AMQ_STATIC_MAX_ATTEMPTS; a++) {
        if (a > 0) {
            uint64_t seed = amq__rb_seed(i, a);
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
        rb_shape g = rb_shape_of(f, w, i);
        if (rb_band_all(&w->band[i], k, rb_aligned(w, i), n, &g, f->band))
            return AMQ_OK;
    }
    return AMQ_ERR_FULL;
}

/* Coded layer i over k[0..n) (sorted); returns the bumped count, the
 * bumped keys compacted to k[0..). */
static amq_status rb_coded_layer(const amq__mem *m, amq_ribbon *f, rb_work *w,
                                 uint64_t *k, size_t n, uint32_t i,
                                 size_t *bumped) {
    rb_layer *l = &f->layer[i];
    uint64_t blocks;
    AMQ_RETURN_IF_ERR(amq__rb_bumped_blocks(n, f->band, &blocks));
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
    rb_shape g = rb_shape_of(f, w, i);
    *bumped = rb_band_coded(&w->band[i], k, rb_aligned(w, i), n, &g, w->meta[i],
                            f->band);
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
static amq_status rb_band_layers(const amq__mem *m, amq_ribbon *f, rb_work *w,
                                 size_t n) {
    uint64_t *k = w->keys;
    bool coded = rb_next_coded(f, 0, n, 0);
    for (uint32_t i = 0;; i++) {
        if (!coded)
            return rb_last_layer(m, f, w, k, n, i);
        size_t nb;
        AMQ_RETURN_IF_ERR(rb_coded_layer(m, f, w, k, n, i, &nb));
        if (nb == 0)
            return AMQ_OK;
        uint64_t seed = amq__rb_seed(i + 1, 0);
        f->layer[i + 1].seed = seed;
        coded = rb_next_coded(f, i + 1, nb, n);
        if (coded) {
            size_t got;
            AMQ_RETURN_IF_ERR(
                amq__sort_keys(m, k, nb, true, seed, false, k + nb, &got));
            k += nb;
        } else {
            for (size_t j = 0; j < nb; j++)
                k[j] = rb_mix(k[j], seed);
        }
        n = nb;
    }
}

/* After banding: U per layer, the table, the solutions and the codes. */
static amq_status rb_finish(amq_ribbon *hdr, const rb_work *w, unsigned shift,
                            const amq_options *opt, amq_ribbon **out) {
    double frac = (double)(hdr->bits64 % 64) / 64.0;
    size_t words;
    for (uint32_t i = 0; i < hdr->layers; i++) {
        rb_layer *l = &hdr->layer[i]; /* frac == 0 when r == 32 */
        l->upper = (uint32_t)amq__rb_choose_upper(hdr, l, frac);
    }
    if (!amq__rb_layout(hdr, &words))
        return AMQ_ERR_OVERFLOW;
    amq_ribbon *f;
    AMQ_RETURN_IF_ERR(amq__rb_new(hdr, opt, &f));
    amq_status st = amq__rb_attach(f, words, NULL);
    if (st != AMQ_OK) {
        amq__obj_free(&f->o);
        return st;
    }
    for (uint32_t i = 0; i < f->layers; i++) {
        rb_layer *l = &f->layer[i];
        uint64_t *sol = (uint64_t *)(uintptr_t)l->sol;
        if (f->band == 128)
            rb_solve_128(&w->band[i], l, f->r, shift, sol);
        else
            rb_solve_64(&w->band[i], l, f->r, shift, sol);
        if (l->coded)
            memcpy((uint64_t *)(uintptr_t)l->meta, w->meta[i],
                   w->meta_words[i] * sizeof *w->meta[i]);
    }
    f->fpr = amq__rb_rate(f);
    *out = f;
    return AMQ_OK;
}

/* Layer 0's keys: h mixed with its seed, sorted, repeats dropped; or,
 * premixed, h itself (already those keys). */
static amq_status rb_keys0(const amq__mem *mem, const uint64_t *h, size_t n,
                           bool premixed, uint64_t seed, uint64_t *keys,
                           size_t *distinct) {
    if (!premixed)
        return amq__sort_keys(mem, h, n, true, seed, true, keys, distinct);
    memcpy(keys, h, n * sizeof *keys);
    *distinct = n;
    return AMQ_OK;
}

/* What rb_build makes: a filter of bits64 (bits in 1/64 steps,
 * 64..2048) or, with vals, a retrieval structure; with pair_bits > 0 and
 * vals, both: the filter in *out and a retrieval structure of pair_bits
 * value bits in *vout. premixed: h holds layer 0's keys. */
typedef struct rb_req {
    uint32_t bits64;
    unsigned band, pair_bits;
    bool bump, premixed;
    const rb_values *vals;
} rb_req;

/* A pair's retrieval structure: the filter's layers and codes (the
 * banding is the same) with pair_bits columns, solved from the bits of
 * the right-hand sides above the filter's. */
static amq_status rb_finish_pair(const amq_ribbon *hdr, const rb_work *w,
                                 const rb_req *q, const amq_options *opt,
                                 amq_ribbon **vout) {
    amq_ribbon vh;
    amq__rb_header(&vh, q->pair_bits * 64, q->band, q->bump);
    vh.layers = hdr->layers;
    memcpy(vh.layer, hdr->layer, sizeof vh.layer);
    vh.o.items = hdr->o.items;
    return rb_finish(&vh, w, hdr->r + (hdr->bits64 % 64 != 0), opt, vout);
}

/* Band once, then solve the filter (and a pair's retrieval structure). */
static amq_status rb_finish_all(amq_ribbon *hdr, const rb_work *w,
                                const rb_req *q, const amq_options *opt,
                                amq_ribbon **out, amq_ribbon **vout) {
    amq_ribbon copy = *hdr;
    AMQ_RETURN_IF_ERR(rb_finish(hdr, w, 0, opt, out));
    if (q->pair_bits == 0)
        return AMQ_OK;
    amq_status st = rb_finish_pair(&copy, w, q, opt, vout);
    if (st != AMQ_OK) {
        amq__obj_free(&(*out)->o);
        *out = NULL;
    }
    return st;
}

static amq_status rb_build(const uint64_t *h, size_t n, const rb_req *q,
                           const amq_options *opt, amq_ribbon **out,
                           amq_ribbon **vout) {
    amq__mem mem;
    amq_ribbon hdr;
    rb_work w;
    if (out == NULL || (h == NULL && n != 0) || q->bits64 < 64 ||
        q->bits64 > 32 * 64 || (q->band != 64 && q->band != 128))
        return AMQ_ERR_INVALID;
    *out = NULL;
    amq__rb_header(&hdr, q->bits64, q->band, q->bump);
    if (n == 0)
        return rb_finish_all(&hdr, NULL, q, opt, out, vout);
    if (n > SIZE_MAX / 8 || (double)n > (double)RB_MAX_BLOCKS * 32)
        return AMQ_ERR_OVERFLOW;
    amq__mem_init(&mem, opt);
    memset(&w, 0, sizeof w);
    w.vals = q->vals;
    w.pair_bits = q->pair_bits;
    w.nkeys = n;
    w.keys = amq__alloc(&mem, n * sizeof *w.keys);
    amq_status st = w.keys != NULL ? AMQ_OK : AMQ_ERR_NOMEM;
    size_t distinct = 0;
    if (st == AMQ_OK) {
        hdr.layer[0].seed = amq__rb_seed(0, 0);
        st = rb_keys0(&mem, h, n, q->premixed, hdr.layer[0].seed, w.keys,
                      &distinct);
        hdr.o.items = distinct;
    }
    if (st == AMQ_OK)
        st = rb_band_layers(&mem, &hdr, &w, distinct);
    if (st == AMQ_OK)
        st = rb_finish_all(&hdr, &w, q, opt, out, vout);
    rb_work_free(&mem, &w);
    return st;
}

amq_status amq__rb_build(const uint64_t *h, size_t n, uint32_t bits64,
                         unsigned band, bool bump, const amq_options *opt,
                         amq_ribbon **out) {
    rb_req q = {bits64, band, 0, bump, false, NULL};
    return rb_build(h, n, &q, opt, out, NULL);
}

amq_status amq__rb_build_mixed(const uint64_t *keys, size_t n, uint32_t bits64,
                               unsigned band, bool bump, const amq_options *opt,
                               amq_ribbon **out) {
    rb_req q = {bits64, band, 0, bump, true, NULL};
    return rb_build(keys, n, &q, opt, out, NULL);
}

amq_status amq__rb_build_values(const rb_values *vals, unsigned bits,
                                const amq_options *opt, amq_ribbon **out) {
    if (vals == NULL || bits < 1 || bits > 32)
        return AMQ_ERR_INVALID;
    rb_req q = {bits * 64, 64, 0, true, true, vals};
    return rb_build(vals->h, vals->n, &q, opt, out, NULL);
}

amq_status amq__rb_build_pair(const rb_values *vals, uint32_t bits64,
                              unsigned bits, const amq_options *opt,
                              amq_ribbon **member, amq_ribbon **values) {
    if (vals == NULL || member == NULL || values == NULL || bits < 1 ||
        bits64 < 64 || bits64 > 32 * 64 ||
        bits64 / 64 + (bits64 % 64 != 0) + bits > 32)
        return AMQ_ERR_INVALID;
    *values = NULL;
    rb_req q = {bits64, 64, bits, true, true, vals};
    return rb_build(vals->h, vals->n, &q, opt, member, values);
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
        amq__rb_standard_blocks(n, band, &blocks) != AMQ_OK ||
        blocks > SIZE_MAX / 64 || !amq__mul((size_t)blocks * 68, row, &a) ||
        !amq__mul(n, sizeof(uint64_t), &b) || !amq__add(a, b, &a))
        return 0;
    c = (4 * (n >> 11) + 64) * 8 + ((size_t)1 << 16) * 4 + 4097 * 8;
    return amq__add(a, c, &a) ? a : 0;
}
