/*
 * tdigest.c — the merging t-digest (Dunning & Ertl 2019, "Computing
 * extremely accurate quantiles using t-digests", §2.2 and Algorithm 1).
 *
 * One array holds the merged centroids, sorted by mean, and after them the
 * buffer of values added since the last merge:
 *
 *   a: | c_0 c_1 ... c_{m-1} | x_0 x_1 ... x_{b-1} |  free  |
 *        merged (mean, weight)  buffered (value, weight)
 *
 * A merge sorts a[0, m + b) by mean and walks it once, left to right,
 * folding each item into the current centroid while the centroid's end
 * stays within one unit of the scale function past its start:
 *
 *   k(q) = (delta / 2 pi) asin(2q - 1),   k^-1(k) = (sin(2 pi k / delta) + 1) / 2
 *   fold x into the current centroid iff (W_before + w_cur + w_x) / W <= q_lim,
 *   q_lim = k^-1(k(W_before / W) + 1),  W_before = weight of the centroids
 *   already emitted, W = the total weight.
 *
 * Each emitted centroid spans at most one unit of k; two neighbours span
 * more than one together (else the first would have taken the second's
 * first item), and k runs over delta / 2 units from q = 0 to 1, so a merge
 * leaves at most delta + 2 centroids. A centroid at quantile q therefore
 * holds at most about dq = 2 pi sqrt(q(1-q)) / delta of the weight (1/dq =
 * dk/dq), small at the tails: (pi / delta)^2 at q = 0, so the first and last
 * ~1000 values at delta = 100 stay singletons.
 *
 * Reading. Centroid i holds the ranks [c_i, c_i + w_i) (c_i: the weight
 * before it) and stands at its centre z_i = c_i + w_i / 2. quantile(q) takes
 * t = q W and interpolates linearly between the neighbouring centres, with
 * three refinements of the paper's §2.9: a singleton (w = 1) is its value
 * over its whole unit of rank; the first unit is the minimum and the last
 * the maximum, which are kept exactly; between min and the first centre
 * (and the last centre and max) the line runs from those ends. cdf(x) is
 * the inverse of the same piecewise-linear map, plus half of the weight of
 * centroids whose mean equals x.
 *
 * State and view. The state is a[0, m + b): what the calls made of it,
 * merged only when the buffer fills, so two digests given the same calls
 * hold the same state whatever was asked of them (a Redis replica, which
 * runs the writes but not the reads, stays byte-identical to its primary).
 * Queries read the merged view: a[0, m) itself when the buffer is empty,
 * else the state merged into a side array, made by the first query that
 * needs it and dropped by the next update. The frame holds the state,
 * buffer included.
 *
 * Room: cap = delta + 16 + 5 delta entries (about RedisBloom's 6 delta + 10),
 * centroids and buffer together; the buffer is merged when they fill it,
 * and a merge leaves at most delta + 2 centroids.
 *
 * Invariants: m + b <= cap; a[0, m) sorted by mean; every value and
 * mean within [min, max]; weights >= 1; total = the sum of all weights <
 * 2^53; an empty digest has total 0, m = b = 0 and min = max = 0 (reported
 * as NaN).
 *
 * Failure modes: add refuses NaN, infinities, weight 0 and a total reaching
 * 2^53 (AMQ_ERR_INVALID / AMQ_ERR_OVERFLOW, nothing changed); merge checks
 * the total first. Load checks every field before allocating.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "amq/filter.h"
#include "amq/sketch.h"
#include "core/bits.h"
#include "core/diag.h"
#include "core/frame.h"
#include "core/mem.h"
#include "type/type.h"

#define TD_PARAMS 16   /* compression f64, reserved u64 */
#define TD_HEAD 40     /* min, max, total, m and b, merges */
#define TD_CENTROID 16 /* mean f64, weight u64 */
#define TD_MAX_TOTAL (UINT64_C(1) << 53)
#define TD_PI 3.14159265358979323846

typedef struct td_c {
    double mean;
    uint64_t w;
} td_c;

/* The merged view of a state with a buffer (made by a query). */
typedef struct td_view {
    size_t m;
    td_c *v; /* cap entries, or NULL: no view */
} td_view;

struct amq_tdigest {
    amq__mem mem;
    double delta;
    size_t cap;  /* entries of a: centroids and buffer */
    size_t m, b; /* merged centroids, buffered values */
    uint64_t total;
    uint64_t merges; /* buffer merges so far (part of the state) */
    double min, max;
    td_c *a;       /* cap entries */
    td_view *view; /* written by const queries: see "State and view" */
};

static size_t entries(const amq_tdigest *t) { return t->cap; }

static size_t cap_for(double delta) {
    size_t buffer = (size_t)ceil(5.0 * delta);
    return (size_t)ceil(delta) + 16 + (buffer < 16 ? 16 : buffer);
}

static amq_status alloc_digest(double delta, const amq_options *opt,
                               amq_tdigest **out) {
    amq__mem mem;
    amq__mem_init(&mem, opt);
    amq_tdigest *t = amq__zalloc(&mem, sizeof *t);
    if (t == NULL)
        return AMQ_ERR_NOMEM;
    t->mem = mem;
    t->delta = delta;
    t->cap = cap_for(delta);
    t->a = amq__alloc(&mem, entries(t) * sizeof *t->a);
    t->view = amq__zalloc(&mem, sizeof *t->view);
    if (t->a == NULL || t->view == NULL) {
        amq_tdigest_free(t);
        return AMQ_ERR_NOMEM;
    }
    *out = t;
    return AMQ_OK;
}

amq_status amq_tdigest_new(double compression, const amq_options *opt,
                           amq_tdigest **out) {
    if (out == NULL)
        return AMQ_ERR_INVALID;
    *out = NULL;
    if (compression == 0.0)
        compression = AMQ_TDIGEST_DEFAULT_COMPRESSION;
    if (!(compression >= 1.0 && compression <= AMQ_TDIGEST_MAX_COMPRESSION))
        return AMQ_ERR_INVALID;
    return alloc_digest(compression, opt, out);
}

void amq_tdigest_free(amq_tdigest *t) {
    if (t == NULL)
        return;
    amq__mem mem = t->mem;
    if (t->view != NULL && t->view->v != NULL)
        amq__free(&mem, t->view->v, entries(t) * sizeof *t->a);
    amq__free(&mem, t->view, sizeof *t->view);
    amq__free(&mem, t->a, entries(t) * sizeof *t->a);
    amq__free(&mem, t, sizeof *t);
}

/* An update: the merged view no longer holds. */
static void drop_view(amq_tdigest *t) {
    if (t->view->v != NULL) {
        amq__free(&t->mem, t->view->v, entries(t) * sizeof *t->a);
        t->view->v = NULL;
    }
}

void amq_tdigest_reset(amq_tdigest *t) {
    if (t == NULL)
        return;
    t->m = t->b = 0;
    t->total = 0;
    t->merges = 0;
    t->min = t->max = 0.0;
    drop_view(t);
}

/* ---- merging -------------------------------------------------------------- */

static int by_mean(const void *x, const void *y) {
    const td_c *p = x, *q = y;
    if (p->mean != q->mean)
        return p->mean < q->mean ? -1 : 1;
    return (p->w > q->w) - (p->w < q->w);
}

/* The largest end (as a fraction of the weight) of a centroid that starts
 * at q0: k^-1(k(q0) + 1). */
static double q_limit(double q0, double delta) {
    double a = asin(2.0 * q0 - 1.0) + 2.0 * TD_PI / delta;
    return a >= TD_PI / 2 ? 1.0 : (sin(a) + 1.0) / 2.0;
}

/* Sort a[0, n) by mean and fold it into centroids in place; returns how
 * many. total: the weight of a[0, n). */
static size_t compress(td_c *a, size_t n, uint64_t total, double delta) {
    if (n == 0)
        return 0;
    qsort(a, n, sizeof *a, by_mean);
    const double W = (double)total;
    uint64_t before = 0; /* weight of the centroids emitted */
    double lim = q_limit(0.0, delta);
    td_c cur = a[0];
    size_t out = 0;
    for (size_t i = 1; i < n; i++) {
        td_c x = a[i];
        if ((double)(before + cur.w + x.w) / W <= lim) {
            /* the weighted mean, kept between the two means it joins */
            uint64_t w = cur.w + x.w;
            double mean = cur.mean + (x.mean - cur.mean) * ((double)x.w / w);
            cur.mean = mean < cur.mean ? cur.mean
                       : mean > x.mean ? x.mean
                                       : mean;
            cur.w = w;
            continue;
        }
        a[out++] = cur;
        before += cur.w;
        lim = q_limit((double)before / W, delta);
        cur = x;
    }
    a[out++] = cur;
    return out;
}

static void merge_buffer(amq_tdigest *t) {
    if (t->b == 0)
        return;
    t->m = compress(t->a, t->m + t->b, t->total, t->delta);
    t->b = 0;
    t->merges++;
}

/* The merged view of the state: its centroids and their number; NULL
 * (m = 0) if the view cannot be allocated. */
static const td_c *merged(const amq_tdigest *t, size_t *m) {
    if (t->b == 0) {
        *m = t->m;
        return t->a;
    }
    td_view *v = t->view;
    if (v->v == NULL) {
        v->v = amq__alloc(&t->mem, entries(t) * sizeof *t->a);
        if (v->v == NULL) {
            *m = 0;
            return NULL;
        }
        memcpy(v->v, t->a, (t->m + t->b) * sizeof *t->a);
        v->m = compress(v->v, t->m + t->b, t->total, t->delta);
    }
    *m = v->m;
    return v->v;
}

static void push(amq_tdigest *t, double value, uint64_t w) {
    if (t->m + t->b == t->cap)
        merge_buffer(t);
    if (t->total == 0) {
        t->min = t->max = value;
    } else {
        t->min = value < t->min ? value : t->min;
        t->max = value > t->max ? value : t->max;
    }
    t->a[t->m + t->b++] = (td_c){value, w};
    t->total += w;
    drop_view(t);
}

amq_status amq_tdigest_add(amq_tdigest *t, double value, uint64_t w) {
    if (t == NULL || !isfinite(value) || w == 0)
        return AMQ_ERR_INVALID;
    if (w >= TD_MAX_TOTAL - t->total)
        return AMQ_ERR_OVERFLOW;
    push(t, value, w);
    return AMQ_OK;
}

amq_status amq_tdigest_merge(amq_tdigest *dst, const amq_tdigest *src) {
    if (dst == NULL || src == NULL)
        return AMQ_ERR_INVALID;
    if (src->total >= TD_MAX_TOTAL - dst->total)
        return AMQ_ERR_OVERFLOW;
    if (src->total == 0)
        return AMQ_OK;
    size_t m;
    const td_c *c = merged(src, &m);
    if (c == NULL)
        return AMQ_ERR_NOMEM;
    if (dst ==
        src) { /* every centroid twice: the same shape, twice the weight */
        merge_buffer(dst);
        for (size_t i = 0; i < dst->m; i++)
            dst->a[i].w *= 2;
        dst->total *= 2;
        drop_view(dst);
        return AMQ_OK;
    }
    double lo = src->min, hi = src->max;
    for (size_t i = 0; i < m; i++)
        push(dst, c[i].mean, c[i].w);
    /* the centroids' means lie inside [min, max]; the ends come along */
    dst->min = lo < dst->min ? lo : dst->min;
    dst->max = hi > dst->max ? hi : dst->max;
    return AMQ_OK;
}

/* ---- reading -------------------------------------------------------------- */

amq_status amq_tdigest_from_centroids(double compression, const double *mean,
                                      const uint64_t *weight, size_t n,
                                      double min, double max, uint64_t merges,
                                      const amq_options *opt,
                                      amq_tdigest **out) {
    uint64_t total = 0;
    amq_tdigest *t;
    if (out == NULL || (n > 0 && (mean == NULL || weight == NULL)))
        return AMQ_ERR_INVALID;
    *out = NULL;
    if (!(compression >= 1.0 && compression <= AMQ_TDIGEST_MAX_COMPRESSION))
        return AMQ_ERR_INVALID;
    if (n > 0 && !(isfinite(min) && isfinite(max) && min <= max))
        return AMQ_ERR_INVALID;
    for (size_t i = 0; i < n; i++) {
        if (!(mean[i] >= (i ? mean[i - 1] : min) && mean[i] <= max) ||
            weight[i] == 0 || weight[i] >= TD_MAX_TOTAL - total)
            return AMQ_ERR_INVALID;
        total += weight[i];
    }
    AMQ_RETURN_IF_ERR(alloc_digest(compression, opt, &t));
    if (n <= t->cap) {
        for (size_t i = 0; i < n; i++)
            t->a[i] = (td_c){mean[i], weight[i]};
        t->m = n;
        t->total = total;
    } else {
        for (size_t i = 0; i < n; i++)
            push(t, mean[i], weight[i]);
        merge_buffer(t);
    }
    if (n > 0) {
        t->min = min;
        t->max = max;
    }
    t->merges += merges;
    *out = t;
    return AMQ_OK;
}

uint64_t amq_tdigest_count(const amq_tdigest *t) {
    return t == NULL ? 0 : t->total;
}
double amq_tdigest_compression(const amq_tdigest *t) {
    return t == NULL ? NAN : t->delta;
}
size_t amq_tdigest_centroids(const amq_tdigest *t) {
    size_t m = 0;
    if (t != NULL)
        (void)merged(t, &m);
    return m;
}
double amq_tdigest_min(const amq_tdigest *t) {
    return t == NULL || t->total == 0 ? NAN : t->min;
}
double amq_tdigest_max(const amq_tdigest *t) {
    return t == NULL || t->total == 0 ? NAN : t->max;
}

/* Does centroid i hold one value over its whole rank interval? A
 * singleton does, and so does a centroid with a neighbour of the same
 * mean: centroids hold consecutive runs of the sorted values, so two
 * neighbours of equal mean m both hold only m (the right end of the first
 * is at least m, the left end of the second at most m, and the first ends
 * below where the second starts): a point mass larger than a centroid. */
static bool flat(const td_c *a, size_t m, size_t i) {
    return a[i].w == 1 || (i > 0 && a[i - 1].mean == a[i].mean) ||
           (i + 1 < m && a[i + 1].mean == a[i].mean);
}

/* Where the line between centroids i and i + 1 starts and ends, in rank:
 * at the centres, or past a flat centroid's whole interval. c: weight
 * before i. */
static void span(const td_c *a, size_t m, size_t i, double c, double *left,
                 double *right) {
    double c1 = c + (double)a[i].w;
    *left = flat(a, m, i) ? c1 : c + (double)a[i].w / 2.0;
    *right = flat(a, m, i + 1) ? c1 : c1 + (double)a[i + 1].w / 2.0;
}

static double lerp(double x0, double x1, double f) {
    double v = x0 + (x1 - x0) * f;
    return v < x0 ? x0 : v > x1 ? x1 : v;
}

double amq_tdigest_value_at(const amq_tdigest *t, double r) {
    if (t == NULL || t->total == 0 || !(r >= 0.0 && r <= (double)t->total))
        return NAN;
    size_t m;
    const td_c *a = merged(t, &m);
    if (a == NULL)
        return NAN;
    const double W = (double)t->total;
    if (r < 1.0)
        return t->min;
    if (r > W - 1.0)
        return t->max;
    double first = (double)a[0].w / 2.0;
    if (r < first) /* between the minimum's unit and the first centre */
        return lerp(t->min, a[0].mean, (r - 1.0) / (first - 1.0));
    double c = 0.0;
    for (size_t i = 0; i + 1 < m; i++) {
        double left, right, c1 = c + (double)a[i].w;
        span(a, m, i, c, &left, &right);
        double end1 = flat(a, m, i + 1) ? c1 + (double)a[i + 1].w
                                        : c1 + (double)a[i + 1].w / 2.0;
        if (r < end1) {
            if (r < left)
                return a[i].mean;
            if (r >= right)
                return a[i + 1].mean;
            return lerp(a[i].mean, a[i + 1].mean, (r - left) / (right - left));
        }
        c = c1;
    }
    /* past the last centre: towards the maximum's unit */
    double last = c + (double)a[m - 1].w / 2.0;
    if (a[m - 1].w == 1 || r <= last || W - 1.0 <= last)
        return a[m - 1].mean;
    return lerp(a[m - 1].mean, t->max, (r - last) / (W - 1.0 - last));
}

double amq_tdigest_quantile(const amq_tdigest *t, double q) {
    if (t == NULL || t->total == 0 || !(q >= 0.0 && q <= 1.0))
        return NAN;
    return amq_tdigest_value_at(t, q * (double)t->total);
}

double amq_tdigest_rank(const amq_tdigest *t, double x) {
    if (t == NULL || t->total == 0 || isnan(x))
        return NAN;
    const double W = (double)t->total;
    if (x < t->min)
        return 0.0;
    if (x > t->max)
        return W;
    if (t->min == t->max)
        return W / 2.0;
    size_t m;
    const td_c *a = merged(t, &m);
    if (a == NULL)
        return NAN;
    /* centroids with mean x: half of their weight is below x */
    size_t j = 0;
    double c = 0.0;
    while (j < m && a[j].mean < x)
        c += (double)a[j++].w;
    if (j < m && a[j].mean == x) {
        double eq = 0.0;
        for (size_t k = j; k < m && a[k].mean == x; k++)
            eq += (double)a[k].w;
        return c + eq / 2.0;
    }
    if (x == t->min)
        return 0.5;
    if (x == t->max)
        return W - 0.5;
    if (j == 0) { /* min < x < first mean */
        double first = (double)a[0].w / 2.0;
        return 1.0 + (x - t->min) / (a[0].mean - t->min) * (first - 1.0);
    }
    if (j == m) { /* last mean < x < max */
        double clast = c - (double)a[m - 1].w;
        double last = clast + (double)a[m - 1].w / 2.0;
        if (a[m - 1].w == 1)
            last = clast + 1.0;
        if (W - 1.0 <= last)
            return last;
        return last + (x - a[m - 1].mean) / (t->max - a[m - 1].mean) *
                          (W - 1.0 - last);
    }
    /* a[j - 1].mean < x < a[j].mean */
    double left, right, cprev = c - (double)a[j - 1].w;
    span(a, m, j - 1, cprev, &left, &right);
    double f = (x - a[j - 1].mean) / (a[j].mean - a[j - 1].mean);
    return left + (right - left) * f;
}

double amq_tdigest_cdf(const amq_tdigest *t, double x) {
    double r = amq_tdigest_rank(t, x);
    return isnan(r) ? r : r / (double)t->total;
}

double amq_tdigest_trimmed_mean(const amq_tdigest *t, double lo, double hi) {
    if (t == NULL || t->total == 0 || !(lo >= 0.0 && lo < hi && hi <= 1.0))
        return NAN;
    size_t m;
    const td_c *a = merged(t, &m);
    if (a == NULL)
        return NAN;
    const double W = (double)t->total, rlo = lo * W, rhi = hi * W;
    double c = 0.0, sum = 0.0, in = 0.0;
    for (size_t i = 0; i < m && c < rhi; i++) {
        double c1 = c + (double)a[i].w;
        double from = c > rlo ? c : rlo, to = c1 < rhi ? c1 : rhi;
        if (to > from) {
            sum += (to - from) * a[i].mean;
            in += to - from;
        }
        c = c1;
    }
    return in > 0.0 ? sum / in : NAN;
}

void amq_tdigest_get_info(const amq_tdigest *t, amq_tdigest_info *out) {
    memset(out, 0, sizeof *out);
    if (t == NULL)
        return;
    out->compression = t->delta;
    out->capacity = t->cap;
    out->merged_nodes = t->m;
    out->unmerged_nodes = t->b;
    for (size_t i = 0; i < t->m; i++)
        out->merged_weight += t->a[i].w;
    out->unmerged_weight = t->total - out->merged_weight;
    out->merges = t->merges;
    out->bytes = sizeof *t + sizeof *t->view +
                 (t->view->v != NULL ? 2 : 1) * entries(t) * sizeof *t->a;
}

/* ---- the frame ------------------------------------------------------------ */

static size_t payload_len(size_t n) { return TD_HEAD + n * TD_CENTROID; }

size_t amq_tdigest_serialized_size(const amq_tdigest *t) {
    size_t off;
    if (t == NULL)
        return 0;
    return amq__frame_size(TD_PARAMS, payload_len(t->m + t->b), &off);
}

amq_status amq_tdigest_save(const amq_tdigest *t, void *buf, size_t cap,
                            size_t *written) {
    if (written != NULL)
        *written = 0;
    if (t == NULL)
        return AMQ_ERR_INVALID;
    size_t total = amq_tdigest_serialized_size(t), n = t->m + t->b;
    if (total == 0)
        return AMQ_ERR_OVERFLOW;
    if (buf == NULL || cap < total)
        return AMQ_ERR_BUFFER;
    amq_hasher plain;
    (void)amq_hasher_init(&plain, AMQ_HASH_XXH3, 0, NULL);
    uint8_t *params, *p;
    amq__frame_begin(buf, total, AMQ__ID_tdigest, &plain, 0, TD_PARAMS,
                     payload_len(n), &params, &p);
    amq__put_f64(params, t->delta);
    amq__put_u64(params + 8, 0);
    amq__put_f64(p, t->min);
    amq__put_f64(p + 8, t->max);
    amq__put_u64(p + 16, t->total);
    amq__put_u32(p + 24, (uint32_t)t->m);
    amq__put_u32(p + 28, (uint32_t)t->b);
    amq__put_u64(p + 32, t->merges);
    for (size_t i = 0; i < n; i++) {
        amq__put_f64(p + TD_HEAD + i * TD_CENTROID, t->a[i].mean);
        amq__put_u64(p + TD_HEAD + i * TD_CENTROID + 8, t->a[i].w);
    }
    amq__frame_seal(buf, total);
    if (written != NULL)
        *written = total;
    return AMQ_OK;
}

/* Every field of the payload, before anything is allocated. */
static amq_status check_payload(const uint8_t *p, size_t len, double delta,
                                amq_diag *diag) {
    if (len < TD_HEAD)
        return amq__diag(diag, AMQ_ERR_CORRUPT, 0, "payload too short");
    double lo = amq__get_f64(p), hi = amq__get_f64(p + 8);
    uint64_t total = amq__get_u64(p + 16);
    size_t m = amq__get_u32(p + 24), b = amq__get_u32(p + 28);
    if (m + b > cap_for(delta))
        return amq__diag(diag, AMQ_ERR_CORRUPT, 24,
                         "%zu centroids and %zu buffered, above the %zu "
                         "entries compression %g allows",
                         m, b, cap_for(delta), delta);
    if (len != payload_len(m + b))
        return amq__diag(diag, AMQ_ERR_CORRUPT, 24,
                         "payload is %zu bytes, %zu entries need %zu", len,
                         m + b, payload_len(m + b));
    if (total == 0)
        return m + b == 0 && lo == 0.0 && hi == 0.0
                   ? AMQ_OK
                   : amq__diag(diag, AMQ_ERR_CORRUPT, 0,
                               "an empty digest with entries or ends");
    if (total >= TD_MAX_TOTAL || m + b == 0 || !isfinite(lo) || !isfinite(hi) ||
        lo > hi)
        return amq__diag(diag, AMQ_ERR_CORRUPT, 0,
                         "bad total, ends or entry count");
    uint64_t sum = 0;
    double prev = lo;
    for (size_t i = 0; i < m + b; i++) {
        size_t at = TD_HEAD + i * TD_CENTROID;
        double mean = amq__get_f64(p + at);
        uint64_t w = amq__get_u64(p + at + 8);
        /* centroids in order; buffered values anywhere in [min, max] */
        if (!(mean >= (i < m ? prev : lo) && mean <= hi))
            return amq__diag(diag, AMQ_ERR_CORRUPT, at,
                             "entry %zu: mean out of order or range", i);
        if (w == 0 || w > total - sum)
            return amq__diag(diag, AMQ_ERR_CORRUPT, at + 8,
                             "entry %zu: bad weight", i);
        sum += w;
        prev = mean;
    }
    if (sum != total)
        return amq__diag(diag, AMQ_ERR_CORRUPT, 16,
                         "weights sum to %llu, total %llu",
                         (unsigned long long)sum, (unsigned long long)total);
    return AMQ_OK;
}

amq_status amq_tdigest_load(const void *buf, size_t len, const amq_options *opt,
                            amq_tdigest **out, amq_diag *diag) {
    amq__frame f;
    if (out == NULL || (buf == NULL && len > 0))
        return AMQ_ERR_INVALID;
    *out = NULL;
    AMQ_RETURN_IF_ERR(amq__frame_parse(buf, len, 0, &f, diag));
    if (f.type_id != AMQ__ID_tdigest)
        return amq__frame_not(f.type_id, "a t-digest", diag);
    if (f.params_len != TD_PARAMS)
        return amq__diag(diag, AMQ_ERR_CORRUPT, AMQ__FRAME_OFF_PARAMS,
                         "params are %zu bytes", f.params_len);
    double delta = amq__get_f64(f.params);
    if (!(delta >= 1.0 && delta <= AMQ_TDIGEST_MAX_COMPRESSION) ||
        amq__get_u64(f.params + 8) != 0)
        return amq__diag(diag, AMQ_ERR_CORRUPT, AMQ__FRAME_OFF_PARAMS,
                         "bad compression or reserved field");
    AMQ_RETURN_IF_ERR(check_payload(f.payload, f.payload_len, delta, diag));
    amq_options o = {.allocator = opt != NULL ? opt->allocator : NULL};
    amq_tdigest *t;
    AMQ_RETURN_IF_ERR(alloc_digest(delta, &o, &t));
    const uint8_t *p = f.payload;
    t->min = amq__get_f64(p);
    t->max = amq__get_f64(p + 8);
    t->total = amq__get_u64(p + 16);
    t->m = amq__get_u32(p + 24);
    t->b = amq__get_u32(p + 28);
    t->merges = amq__get_u64(p + 32);
    for (size_t i = 0; i < t->m + t->b; i++) {
        t->a[i].mean = amq__get_f64(p + TD_HEAD + i * TD_CENTROID);
        t->a[i].w = amq__get_u64(p + TD_HEAD + i * TD_CENTROID + 8);
    }
    *out = t;
    return AMQ_OK;
}
