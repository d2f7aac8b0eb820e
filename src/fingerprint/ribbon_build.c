/*
 * ribbon_build.c — building a Ribbon filter (ribbon.c describes it): the
 * keys sorted by their mixed hash (core/sort.h), banded layer by layer
 * (bumped layers overloaded on purpose, their failures moved to the next
 * layer bucket by bucket; the last layer standard, retried with the next
 * seed), then back-substituted into one table.
 *
 * Threads (core/par.h): the sorts; a bumped layer's banding by segments
 * of buckets, each started on a guess and settled in order (a bucket's
 * keys land in rows its successor bands into, so the buckets are a chain:
 * see "a coded layer on several threads"); and the back-substitution by
 * columns (each column of the solution is its own recurrence). The last,
 * standard layer is banded on one thread. Every step gives the bytes of
 * the one-thread build.
 */
#include <string.h>

#include "core/par.h"
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
 * highest offset down into bd, whose row 0 is the layer's row row0 (0: the
 * layer's band; else a bucket's scratch rows); kv: their values, aligned
 * (or NULL). Returns the bucket's code; the keys below its threshold are
 * not in the band (those inserted were the last ones, and their rows are
 * cleared again). A bucket fills at most B + W - 1 rows. */
static unsigned rb_band_bucket(rb_band *bd, const uint64_t *k,
                               const uint32_t *kv, size_t cnt, uint64_t base,
                               const rb_shape *g, unsigned band,
                               uint64_t row0) {
    uint64_t row[RB_BUILD_BUCKET + 128];
    uint32_t off[RB_BUILD_BUCKET + 128];
    size_t top = 0;
    for (size_t q = cnt; q-- > 0;) {
        rb_eq e = rb_equation(k[q], kv != NULL ? kv + q : NULL, g, band);
        uint32_t o = (uint32_t)(e.start - base);
        e.start -= row0;
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
                                       j - i, base, g, band, 0);
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

/* ---- a coded layer on several threads ------------------------------------
 *
 * Bucket b's keys start in [base_b, base_b + B) and land in rows below
 * base_b + B + W - 1, so with B >= W - 1 what a bucket does depends only on
 * its keys and the W - 1 rows its predecessor spilled into it (the rows
 * [base_b, base_b + W - 1) when it starts; the rest of its rows are empty
 * then). The layer is cut into segments of whole buckets. Segment 0 is
 * banded in place; every other segment guesses that its first bucket gets
 * no spill, bands that bucket in scratch rows, writes the spill this gives
 * into the band and bands the rest of its buckets in place, logging the
 * spills of its next RB_SPEC_LOG buckets. Then, segment by segment in
 * order, the real spill is known: the first buckets are banded again in
 * scratch from it (their rows copied into the band) until a bucket's spill
 * equals the one the guess produced — from there on the band is what one
 * thread would have built. (The spill is made by the bucket's high keys,
 * which are banded first and never reach the incoming rows, so it differs
 * only when the bucket bumps all of its keys in one run and not in the
 * other; measured, the two runs agree again after ~100-250 buckets of a
 * segment's tens of thousands.) If no logged spill matches, the rest of the segment is banded
 * again in place. The codes go to the meta words as in one pass, and the
 * bumped keys are compacted afterwards from the codes. Segments start at
 * multiples of 32 buckets, so no two threads write one meta word. */
#define RB_SPEC_LOG 1024 /* measured: a guess settles within ~100-250 buckets */
#define RB_SEG_MIN 64    /* buckets a segment has at least               */

typedef struct rb_seg {
    size_t i0, i1;   /* its keys                                     */
    uint64_t b0, b1; /* its buckets                                  */
    rb_band scratch; /* B + W rows, then RB_SPEC_LOG spills of W - 1 */
    unsigned logged; /* spills logged                                */
} rb_seg;

typedef struct rb_par_band {
    rb_band *bd;
    uint64_t *k, *meta;
    const uint32_t *kv; /* the keys' values, aligned (retrieval), or NULL */
    const rb_shape *g;
    unsigned band;
    uint64_t B, spill; /* rows of a bucket, rows of a spill (W - 1)   */
    rb_seg seg[AMQ__PAR_MAX];
    unsigned segs;
} rb_par_band;

static inline const uint32_t *rb_kv(const rb_par_band *p, size_t i) {
    return p->kv != NULL ? p->kv + i : NULL;
}

static void rb_copy_rows(rb_band *dst, uint64_t di, const rb_band *src,
                         uint64_t si, uint64_t cnt) {
    if (dst->c128 != NULL)
        memcpy(dst->c128 + di, src->c128 + si, cnt * sizeof *dst->c128);
    else
        memcpy(dst->c64 + di, src->c64 + si, cnt * sizeof *dst->c64);
    memcpy(dst->res + di, src->res + si, cnt * sizeof *dst->res);
}

static void rb_zero_rows(rb_band *bd, uint64_t i, uint64_t cnt) {
    if (bd->c128 != NULL)
        memset(bd->c128 + i, 0, cnt * sizeof *bd->c128);
    else
        memset(bd->c64 + i, 0, cnt * sizeof *bd->c64);
}

/* The same rows: equal coefficients, and equal right-hand sides where the
 * coefficient is not 0 (an empty row's is not kept). */
static bool rb_same_rows(const rb_band *a, uint64_t ai, const rb_band *b,
                         uint64_t bi, uint64_t cnt) {
    for (uint64_t r = 0; r < cnt; r++) {
        bool empty;
        if (a->c128 != NULL) {
            if (a->c128[ai + r] != b->c128[bi + r])
                return false;
            empty = a->c128[ai + r] == 0;
        } else {
            if (a->c64[ai + r] != b->c64[bi + r])
                return false;
            empty = a->c64[ai + r] == 0;
        }
        if (!empty && a->res[ai + r] != b->res[bi + r])
            return false;
    }
    return true;
}

static inline uint64_t rb_bucket_of(const rb_shape *g, uint64_t x) {
    return amq__reduce64(x, g->starts) >> g->bucket_log2;
}

/* The end of the keys of bucket b, from i on. */
static size_t rb_bucket_end(const rb_shape *g, const uint64_t *k, size_t i,
                            size_t n, uint64_t b) {
    while (i < n && rb_bucket_of(g, k[i]) == b)
        i++;
    return i;
}

static void rb_set_code(uint64_t *meta, uint64_t b, unsigned code) {
    unsigned sh = (unsigned)(b % 32 * 2);
    meta[b / 32] = (meta[b / 32] & ~((uint64_t)3 << sh)) | (uint64_t)code << sh;
}

/* Log the spills out of buckets b0 + 1 .. upto (each is in the rows at
 * the next bucket's start until that bucket is banded); not the last
 * bucket's, which settling never compares. */
static void rb_log_spills(const rb_par_band *p, rb_seg *log, uint64_t upto) {
    for (; log->logged < RB_SPEC_LOG; log->logged++) {
        uint64_t lb = log->b0 + 1 + log->logged;
        if (lb > upto || lb + 1 >= log->b1)
            return;
        rb_copy_rows(&log->scratch, p->B + p->spill + log->logged * p->spill,
                     p->bd, (lb + 1) << p->g->bucket_log2, p->spill);
    }
}

/* Band the buckets of keys [i, e) in place, logging spills if log. */
static void rb_band_run(rb_par_band *p, size_t i, size_t e, rb_seg *log) {
    const rb_shape *g = p->g;
    while (i < e) {
        uint64_t b = rb_bucket_of(g, p->k[i]), base = b << g->bucket_log2;
        size_t j = rb_bucket_end(g, p->k, i + 1, e, b);
        if (log != NULL)
            rb_log_spills(p, log, b - 1);
        rb_set_code(p->meta, b,
                    rb_band_bucket(p->bd, p->k + i, rb_kv(p, i), j - i, base, g,
                                   p->band, 0));
        if (log != NULL)
            rb_log_spills(p, log, b);
        i = j;
    }
}

static void rb_seg_task(void *ctx, size_t s, unsigned worker) {
    rb_par_band *p = ctx;
    rb_seg *sg = &p->seg[s];
    const rb_shape *g = p->g;
    (void)worker;
    if (s == 0) {
        rb_band_run(p, sg->i0, sg->i1, NULL);
        return;
    }
    /* the first bucket on a guess of no spill, in scratch */
    uint64_t base = sg->b0 << g->bucket_log2;
    size_t j = rb_bucket_end(g, p->k, sg->i0, sg->i1, sg->b0);
    rb_band_bucket(&sg->scratch, p->k + sg->i0, rb_kv(p, sg->i0), j - sg->i0,
                   base, g, p->band, base);
    rb_copy_rows(p->bd, base + p->B, &sg->scratch, p->B, p->spill);
    rb_band_run(p, j, sg->i1, sg);
}

/* cnt rows from row i, cut at the band's end. */
static uint64_t rb_clip(const rb_par_band *p, uint64_t i, uint64_t cnt) {
    return i >= p->bd->rows ? 0 : cnt < p->bd->rows - i ? cnt : p->bd->rows - i;
}

/* Segment s from the real spill now in the band's rows at its start. */
static void rb_seg_settle(rb_par_band *p, unsigned s, rb_band *tmp) {
    rb_seg *sg = &p->seg[s];
    const rb_shape *g = p->g;
    size_t i = sg->i0;
    rb_zero_rows(tmp, 0, p->B + p->spill);
    rb_copy_rows(tmp, 0, p->bd, sg->b0 << g->bucket_log2, p->spill);
    for (uint64_t b = sg->b0;; b++) {
        uint64_t base = b << g->bucket_log2;
        size_t j = rb_bucket_end(g, p->k, i, sg->i1, b);
        rb_set_code(p->meta, b,
                    rb_band_bucket(tmp, p->k + i, rb_kv(p, i), j - i, base, g,
                                   p->band, base));
        i = j;
        rb_copy_rows(p->bd, base, tmp, 0, rb_clip(p, base, p->B));
        const rb_band *guess = &sg->scratch;
        uint64_t at =
            b == sg->b0 ? p->B : p->B + p->spill + (b - sg->b0 - 1) * p->spill;
        bool logged = b == sg->b0 || b - sg->b0 - 1 < sg->logged;
        if (logged && rb_same_rows(tmp, p->B, guess, at, p->spill))
            return;
        if (!logged || b + 1 == sg->b1) {
            /* band the rest of the segment again, from this spill */
            uint64_t next = base + p->B;
            uint64_t end = (sg->b1 << g->bucket_log2) + p->spill;
            rb_zero_rows(p->bd, next, rb_clip(p, next, end - next));
            rb_copy_rows(p->bd, next, tmp, p->B, rb_clip(p, next, p->spill));
            for (uint64_t c = b + 1; c < sg->b1; c++)
                rb_set_code(p->meta, c, 0);
            rb_band_run(p, i, sg->i1, NULL);
            return;
        }
        /* the next bucket starts from this spill */
        memmove(tmp->res, tmp->res + p->B, p->spill * sizeof *tmp->res);
        if (tmp->c128 != NULL)
            memmove(tmp->c128, tmp->c128 + p->B, p->spill * sizeof *tmp->c128);
        else
            memmove(tmp->c64, tmp->c64 + p->B, p->spill * sizeof *tmp->c64);
        rb_zero_rows(tmp, p->spill, p->B);
    }
}

/* The bumped keys of k[0..n) moved to its front from the codes. */
static size_t rb_compact_bumped(const rb_par_band *p, uint64_t *k, size_t n) {
    const rb_shape *g = p->g;
    size_t out = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t st = amq__reduce64(k[i], g->starts), b = st >> g->bucket_log2;
        unsigned code = (unsigned)(p->meta[b / 32] >> (b % 32 * 2)) & 3;
        if (code != 0 && st < (b << g->bucket_log2) + g->thr[code])
            k[out++] = k[i];
    }
    return out;
}

/* Cut k[0..n) into segments of whole buckets, each starting at a multiple
 * of 32 buckets and long enough for its guess to settle; false if fewer
 * than two segments result. */
static bool rb_plan_segments(rb_par_band *p, size_t n, unsigned workers) {
    const rb_shape *g = p->g;
    uint64_t buckets = ((g->starts - 1) >> g->bucket_log2) + 1, prev = 0;
    unsigned segs = 0;
    for (unsigned s = 0; s < workers; s++) {
        uint64_t b0 =
            s == 0 ? 0 : rb_bucket_of(g, p->k[n / workers * s]) / 32 * 32;
        if (s > 0 && (b0 < prev + RB_SEG_MIN || b0 + RB_SEG_MIN > buckets))
            continue;
        p->seg[segs++].b0 = b0;
        prev = b0;
    }
    for (unsigned s = 0; s < segs; s++) {
        rb_seg *sg = &p->seg[s];
        sg->b1 = s + 1 < segs ? p->seg[s + 1].b0 : buckets;
        size_t lo = 0, hi = n; /* first key of bucket >= b0 */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (rb_bucket_of(g, p->k[mid]) < sg->b0)
                lo = mid + 1;
            else
                hi = mid;
        }
        sg->i0 = lo;
        if (s > 0)
            p->seg[s - 1].i1 = lo;
        sg->logged = 0;
    }
    if (segs > 0)
        p->seg[segs - 1].i1 = n;
    p->segs = segs;
    return segs >= 2;
}

static void rb_par_free(const amq__mem *m, rb_par_band *p, rb_band *tmp) {
    for (unsigned s = 0; s < AMQ__PAR_MAX; s++)
        rb_band_free(m, &p->seg[s].scratch);
    rb_band_free(m, tmp);
}

/* The coded layer banded on several threads; SIZE_MAX if it cannot be
 * (too few buckets, no memory for the scratch rows): the caller bands it
 * on one thread. */
static size_t rb_band_coded_par(const amq__mem *m, rb_band *bd, uint64_t *k,
                                const uint32_t *kv, size_t n, const rb_shape *g,
                                uint64_t *meta, unsigned band,
                                unsigned workers) {
    rb_par_band p;
    rb_band tmp;
    memset(&p, 0, sizeof p);
    memset(&tmp, 0, sizeof tmp);
    p.bd = bd;
    p.k = k;
    p.kv = kv;
    p.meta = meta;
    p.g = g;
    p.band = band;
    p.B = (uint64_t)1 << g->bucket_log2;
    p.spill = band - 1;
    if (p.B < p.spill || !rb_plan_segments(&p, n, workers))
        return SIZE_MAX;
    uint64_t rows = p.B + p.spill + RB_SPEC_LOG * p.spill;
    bool ok = rb_band_alloc(m, p.B + p.spill, band, &tmp) == AMQ_OK;
    for (unsigned s = 1; ok && s < p.segs; s++)
        ok = rb_band_alloc(m, rows, band, &p.seg[s].scratch) == AMQ_OK;
    if (!ok) {
        rb_par_free(m, &p, &tmp);
        return SIZE_MAX;
    }
    amq__par_for(workers, p.segs, rb_seg_task, &p);
    for (unsigned s = 1; s < p.segs; s++)
        rb_seg_settle(&p, s, &tmp);
    rb_par_free(m, &p, &tmp);
    return rb_compact_bumped(&p, k, n);
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
    unsigned workers = amq__par_workers(n);
    const uint32_t *kv = rb_aligned(w, i);
    *bumped = workers > 1 ? rb_band_coded_par(m, &w->band[i], k, kv, n, &g,
                                              w->meta[i], f->band, workers)
                          : SIZE_MAX;
    if (*bumped == SIZE_MAX)
        *bumped = rb_band_coded(&w->band[i], k, kv, n, &g, w->meta[i], f->band);
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

/* The solutions: one task per layer and column range. A layer's columns
 * are split so that each task has about the same rows times columns
 * (RB_SOLVE_COLS columns at least); the ranges write disjoint words. */
#define RB_SOLVE_COLS 2

typedef struct rb_solve_job {
    const amq_ribbon *f;
    const rb_work *w;
    unsigned shift; /* the right-hand sides' first bit (rb_solve) */
    uint32_t task_layer[RB_MAX_LAYERS * 17];
    uint32_t task_j0[RB_MAX_LAYERS * 17], task_j1[RB_MAX_LAYERS * 17];
    size_t tasks;
} rb_solve_job;

static void rb_solve_task(void *ctx, size_t t, unsigned worker) {
    const rb_solve_job *j = ctx;
    const amq_ribbon *f = j->f;
    const rb_layer *l = &f->layer[j->task_layer[t]];
    const rb_band *bd = &j->w->band[j->task_layer[t]];
    uint64_t *sol = (uint64_t *)(uintptr_t)l->sol;
    (void)worker;
    if (f->band == 128)
        rb_solve_128(bd, l, f->r, j->shift, j->task_j0[t], j->task_j1[t], sol);
    else
        rb_solve_64(bd, l, f->r, j->shift, j->task_j0[t], j->task_j1[t], sol);
}

static void rb_solve_all(const amq_ribbon *f, const rb_work *w,
                         unsigned shift) {
    rb_solve_job j;
    j.f = f;
    j.w = w;
    j.shift = shift;
    j.tasks = 0;
    unsigned workers = amq__par_workers((size_t)f->layer[0].blocks * 64);
    for (uint32_t i = 0; i < f->layers; i++) {
        uint32_t cols = f->r + (f->layer[i].upper > 0), parts = 1;
        if (workers > 1 && i == 0) /* the other layers are far smaller */
            parts =
                cols / RB_SOLVE_COLS < workers ? cols / RB_SOLVE_COLS : workers;
        if (parts < 1)
            parts = 1;
        for (uint32_t p = 0; p < parts; p++) {
            j.task_layer[j.tasks] = i;
            j.task_j0[j.tasks] = cols * p / parts;
            j.task_j1[j.tasks++] = cols * (p + 1) / parts;
        }
    }
    amq__par_for(workers, j.tasks, rb_solve_task, &j);
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
    if (f->layers > 0)
        rb_solve_all(f, w, shift);
    for (uint32_t i = 0; i < f->layers; i++) {
        rb_layer *l = &f->layer[i];
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
