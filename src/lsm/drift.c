/*
 * drift.c — the adaptivity frontier: how much re-allocating filter bits
 * only at compaction leaves behind when the workload drifts.
 *
 * Compaction rewrites runs and so rebuilds their filters for free; the
 * question is whether tracking hotness between compactions pays. Four
 * policies at equal memory over the same hotness path:
 *
 *   step:      0    1    2  ...  30   31  ...  60  ...
 *   uniform    =================================================
 *   static     [alloc(w0)] ==================================== (never)
 *   compact    [alloc(w0)] ...... [alloc(w30)] ...... [alloc(w60)]
 *   oracle     [alloc(w_t)] every step
 *
 *   V = (C_compact - C_oracle) / (C_uniform - C_oracle)
 *
 * Hotness: ln w_i starts at a Zipf profile and either walks (N(0, sigma^2)
 * a step, pulled back by theta toward the profile: Ornstein-Uhlenbeck, so
 * a long run stays stationary) or moves at a constant velocity drawn at
 * each compaction (the same pull folded into the velocity), the drift the
 * paper's sigma^2/6 derivation assumes. r is the mean over epochs of the
 * run-weighted standard deviation of the change of ln w across the epoch.
 *
 * The closed form to test: the stale allocation's excess at time t into
 * an epoch is ~ Var(delta_t) / 2; averaged over the epoch that is
 * r^2/6 for linear drift (Var grows as t^2) and r^2/4 for a random walk
 * (Var grows as t), so V ~ k r^2 / G with k = 1/6 or 1/4, i.e.
 * V ~ 2k (r / r*)^2 with r* = sqrt(2 G). frontier_fit measures that k.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "amq/lsm.h"
#include "lsm/rng.h"
#include "lsm/work.h"

static bool drift_cfg_ok(const amq_lsm_drift_cfg *c, double sigma) {
    return c != NULL && c->segments >= 2 && c->keys > 0 && isfinite(c->keys) &&
           c->bits_per_key >= 0 && isfinite(c->bits_per_key) && c->skew >= 0 &&
           c->theta >= 0 && c->theta < 1 && c->epoch > 0 &&
           c->steps > c->warmup &&
           (c->kind == AMQ_LSM_DRIFT_WALK || c->kind == AMQ_LSM_DRIFT_LINEAR) &&
           sigma >= 0 && isfinite(sigma);
}

/* w = softmax(ln w): normalised hotness from the log profile. */
static void normalise(const double *lw, double *w, size_t n) {
    double top = lw[0], sum = 0;
    for (size_t i = 1; i < n; i++)
        top = lw[i] > top ? lw[i] : top;
    for (size_t i = 0; i < n; i++)
        sum += w[i] = exp(lw[i] - top);
    for (size_t i = 0; i < n; i++)
        w[i] /= sum;
}

/* The hotness process. */
typedef struct path {
    const amq_lsm_drift_cfg *c;
    double sigma;
    double *base, *lw, *vel; /* log profile, current, velocity (linear) */
    lsm_rng rng;
    unsigned t;
} path;

static void path_step(path *h) {
    size_t n = h->c->segments;
    double th = h->c->theta;
    if (h->c->kind == AMQ_LSM_DRIFT_LINEAR) {
        if (h->t % h->c->epoch == 0)
            for (size_t i = 0; i < n; i++)
                h->vel[i] = h->sigma * lsm_rng_normal(&h->rng) -
                            th * (h->lw[i] - h->base[i]);
        for (size_t i = 0; i < n; i++)
            h->lw[i] += h->vel[i];
    } else {
        for (size_t i = 0; i < n; i++)
            h->lw[i] += h->sigma * lsm_rng_normal(&h->rng) -
                        th * (h->lw[i] - h->base[i]);
    }
    h->t++;
}

/* The four policies' picks live side by side in one array of 4n. */
enum { P_UNIFORM, P_STATIC, P_COMPACT, P_ORACLE, P_COUNT };

typedef struct sim {
    amq__lsm_work w;
    amq_alloc_pick *picks; /* P_COUNT * n                                */
    size_t psize;
    double *wt, *start; /* current hotness, hotness at the epoch start */
    double budget;
    const amq_alloc_curve *curve;
} sim;

static amq_status allocate(sim *s, size_t n, const double *wt,
                           amq_alloc_pick *out) {
    amq__lsm_equal_groups(&s->w, n, 1, wt, s->curve);
    return amq_alloc_min_cost(s->w.g, n, s->budget, out, NULL);
}

/* sqrt of the variance of ln(w_end / w_start) across runs. */
static double epoch_drift(const double *a, const double *b, double *tmp,
                          size_t n) {
    for (size_t i = 0; i < n; i++)
        tmp[i] = log(b[i]) - log(a[i]);
    return sqrt(amq__lsm_variance(tmp, n, NULL));
}

static amq_status simulate(sim *s, path *h, amq_lsm_drift *out) {
    const amq_lsm_drift_cfg *c = h->c;
    size_t n = c->segments, epochs = 0;
    amq_alloc_pick *pk[P_COUNT];
    double acc[P_COUNT] = {0}, rsum = 0, *tmp = s->w.d[5];
    unsigned counted = 0;
    for (int k = 0; k < P_COUNT; k++)
        pk[k] = s->picks + (size_t)k * n;
    normalise(h->lw, s->wt, n);
    memcpy(s->start, s->wt, n * sizeof *s->wt);
    amq__lsm_equal_groups(&s->w, n, 1, s->wt, s->curve);
    AMQ_RETURN_IF_ERR(
        amq_alloc_uniform(s->w.g, n, s->budget, pk[P_UNIFORM], NULL));
    AMQ_RETURN_IF_ERR(allocate(s, n, s->wt, pk[P_STATIC]));
    memcpy(pk[P_COMPACT], pk[P_STATIC], n * sizeof **pk);
    for (unsigned t = 0; t < c->steps; t++) {
        path_step(h);
        normalise(h->lw, s->wt, n);
        if (h->t % c->epoch == 0) {
            rsum += epoch_drift(s->start, s->wt, tmp, n), epochs++;
            AMQ_RETURN_IF_ERR(allocate(s, n, s->wt, pk[P_COMPACT]));
            memcpy(s->start, s->wt, n * sizeof *s->wt);
        }
        if (t < c->warmup)
            continue;
        AMQ_RETURN_IF_ERR(allocate(s, n, s->wt, pk[P_ORACLE]));
        for (int k = 0; k < P_COUNT; k++)
            acc[k] += amq__lsm_cost_under(s->wt, pk[k], n);
        counted++;
    }
    out->c_uniform = acc[P_UNIFORM] / counted;
    out->c_static = acc[P_STATIC] / counted;
    out->c_compact = acc[P_COMPACT] / counted;
    out->c_oracle = acc[P_ORACLE] / counted;
    out->r = epochs ? rsum / (double)epochs : 0;
    return AMQ_OK;
}

amq_status amq_lsm_drift_run(const amq_lsm_drift_cfg *cfg, double sigma,
                             const amq_alloc_curve *curve,
                             const amq_options *opt, amq_lsm_drift *out) {
    sim s = {.curve = curve};
    size_t n;
    if (!drift_cfg_ok(cfg, sigma) || curve == NULL || out == NULL)
        return AMQ_ERR_INVALID;
    n = cfg->segments;
    AMQ_RETURN_IF_ERR(amq__lsm_work_new(&s.w, opt, n, 6));
    if (!amq__mul(n, P_COUNT * sizeof(amq_alloc_pick), &s.psize) ||
        (s.picks = amq__alloc(&s.w.mem, s.psize)) == NULL) {
        amq__lsm_work_free(&s.w);
        return AMQ_ERR_NOMEM;
    }
    path h = {.c = cfg,
              .sigma = sigma,
              .base = s.w.d[0],
              .lw = s.w.d[1],
              .vel = s.w.d[2]};
    s.wt = s.w.d[3];
    s.start = s.w.d[4];
    lsm_rng_init(&h.rng, cfg->seed);
    amq__lsm_zipf(h.base, n, cfg->skew);
    for (size_t i = 0; i < n; i++)
        h.lw[i] = h.base[i] = log(h.base[i]);
    /* equal runs of keys / n: only bits per key matter, so each run is
     * given 1 key and the budget n bits_per_key */
    s.budget = cfg->bits_per_key * (double)n;
    amq_lsm_drift d = {.sigma = sigma};
    amq_status st = simulate(&s, &h, &d);
    amq__free(&s.w.mem, s.picks, s.psize);
    amq__lsm_work_free(&s.w);
    if (st != AMQ_OK)
        return st;
    double gap = d.c_uniform - d.c_oracle;
    d.V = gap > 0 ? (d.c_compact - d.c_oracle) / gap : 0;
    d.G = d.c_oracle > 0 ? d.c_uniform / d.c_oracle - 1 : 0;
    d.rstar = sqrt(2 * d.G);
    *out = d;
    return AMQ_OK;
}

/* ---- the frontier -------------------------------------------------------- */

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

amq_status amq_lsm_frontier_fit(const amq_lsm_drift *runs, size_t n,
                                amq_lsm_frontier *out) {
    double rs[256], x[256], y[256], ks[256];
    size_t m = 0, nk = 0;
    if (runs == NULL || out == NULL || n == 0 || n > 256)
        return AMQ_ERR_INVALID;
    for (size_t i = 0; i < n; i++)
        rs[i] = runs[i].rstar;
    qsort(rs, n, sizeof *rs, cmp_double);
    amq_lsm_frontier f = {.rstar = n % 2 ? rs[n / 2]
                                         : (rs[n / 2 - 1] + rs[n / 2]) / 2,
                          .r_fallback = NAN};
    for (size_t i = 0; i < n; i++) {
        const amq_lsm_drift *d = &runs[i];
        if (d->r <= f.rstar && f.rstar > 0)
            x[m] = (d->r / f.rstar) * (d->r / f.rstar), y[m++] = d->V;
        if (d->r > 0 && d->r <= 0.35 * f.rstar)
            ks[nk++] = d->V * d->G / (d->r * d->r);
        if (d->V <= 0.1 && d->r > f.r_coarse)
            f.r_coarse = d->r;
        if (d->V >= 1 && !(d->r >= f.r_fallback))
            f.r_fallback = d->r;
    }
    amq_lsm_fit q = {NAN, 0, NAN, m};
    if (m >= 2)
        amq_lsm_fit_line(x, y, NULL, m, true, &q);
    f.quad_k = q.slope;
    f.quad_r2 = q.r2;
    qsort(ks, nk, sizeof *ks, cmp_double);
    f.small_k = nk == 0  ? NAN
                : nk % 2 ? ks[nk / 2]
                         : (ks[nk / 2 - 1] + ks[nk / 2]) / 2;
    *out = f;
    return AMQ_OK;
}
