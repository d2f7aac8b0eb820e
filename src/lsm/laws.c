/*
 * laws.c — the static laws behind `amq-lab lsm simulate`, checked numerically
 * with the paper's own setups, on any curve (drift.c has the frontier).
 *
 *   log-law      equal runs, Dirichlet hotness: regress the optimal bits
 *                on ln w; slope 1/c (2.0814 for Bloom's c = (ln 2)^2).
 *   robustness   allocate from misestimated hotness w e^delta, pay under
 *                the true w: excess ~ Var(delta) / 2; a common factor is
 *                absorbed by the multiplier and costs nothing. Exactly,
 *                for the model with no run clipped at 0 bits: the optimum
 *                has w_i f_i = lambda n_i / c, the misestimate multiplies
 *                f_i by e^-(delta_i - mean delta), so the excess is
 *                sum (n_i/N) e^-(delta_i - mean delta) - 1 = D/2 - skew
 *                term/6 + ... (the D/2 is its second-order term).
 *   measure      build a real filter at a curve's pick and count false
 *                positives: the data the effective exponent is fitted on.
 *
 * Every allocation goes through amq_alloc_min_cost on the given curve, so
 * the same code measures the laws on the model e^(-c b) and on a real
 * type's curve. Costs are sum w_i f_i with the realised picks' rates.
 *
 * Scratch memory: one block per call from the caller's allocator, freed
 * before returning; a failure leaves the outputs untouched.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "amq/lsm.h"
#include "core/mem.h"
#include "lsm/rng.h"
#include "lsm/work.h"

/* ---- scratch and shared helpers (work.h) --------------------------------- */

amq_status amq__lsm_work_new(amq__lsm_work *w, const amq_options *opt, size_t n,
                             size_t nd) {
    size_t per =
        sizeof(amq_alloc_group) + sizeof(amq_alloc_pick) + nd * sizeof(double);
    memset(w, 0, sizeof *w);
    amq__mem_init(&w->mem, opt);
    if (n == 0 || nd > AMQ__LSM_WORK_ARRAYS || !amq__mul(n, per, &w->size))
        return AMQ_ERR_INVALID;
    w->block = amq__alloc(&w->mem, w->size);
    if (w->block == NULL)
        return AMQ_ERR_NOMEM;
    w->g = w->block;
    w->p = (amq_alloc_pick *)(w->g + n);
    double *d = (double *)(w->p + n);
    for (size_t k = 0; k < nd; k++)
        w->d[k] = d + k * n;
    return AMQ_OK;
}

void amq__lsm_work_free(amq__lsm_work *w) {
    amq__free(&w->mem, w->block, w->size);
}

void amq__lsm_equal_groups(amq__lsm_work *w, size_t n, double keys,
                           const double *wt, const amq_alloc_curve *curve) {
    for (size_t i = 0; i < n; i++)
        w->g[i] = (amq_alloc_group){keys, wt[i], curve};
}

double amq__lsm_cost_under(const double *wt, const amq_alloc_pick *p,
                           size_t n) {
    double c = 0, s = 0;
    for (size_t i = 0; i < n; i++)
        c += wt[i] * p[i].fpr, s += wt[i];
    return c / s;
}

void amq__lsm_zipf(double *out, size_t n, double s) {
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += out[i] = pow((double)(i + 1), -s);
    for (size_t i = 0; i < n; i++)
        out[i] /= sum;
}

double amq__lsm_variance(const double *x, size_t n, double *mean) {
    double m = 0, v = 0;
    for (size_t i = 0; i < n; i++)
        m += x[i];
    m /= (double)n;
    for (size_t i = 0; i < n; i++)
        v += (x[i] - m) * (x[i] - m);
    if (mean)
        *mean = m;
    return v / (double)n;
}

/* ---- log-law ------------------------------------------------------------- */

amq_status amq_lsm_loglaw(size_t runs, double alpha, double bits_per_key,
                          uint64_t seed, const amq_alloc_curve *curve,
                          const amq_options *opt, double *ln_w, double *bits,
                          amq_lsm_fit *fit) {
    amq__lsm_work w;
    lsm_rng rng;
    if (runs < 2 || !(alpha > 0) || !isfinite(alpha) || !(bits_per_key >= 0) ||
        !isfinite(bits_per_key) || curve == NULL || fit == NULL)
        return AMQ_ERR_INVALID;
    AMQ_RETURN_IF_ERR(amq__lsm_work_new(&w, opt, runs, 3));
    double *wt = w.d[0], *x = w.d[1], *y = w.d[2];
    lsm_rng_init(&rng, seed);
    lsm_rng_dirichlet(&rng, alpha, wt, runs);
    amq__lsm_equal_groups(&w, runs, 1000, wt, curve);
    amq_status st = amq_alloc_min_cost(
        w.g, runs, bits_per_key * 1000 * (double)runs, w.p, NULL);
    size_t m = 0;
    for (size_t i = 0; st == AMQ_OK && i < runs; i++) {
        if (ln_w)
            ln_w[i] = log(wt[i]);
        if (bits)
            bits[i] = w.p[i].bits_per_key;
        if (w.p[i].bits_per_key > 0 && wt[i] > 0)
            x[m] = log(wt[i]), y[m++] = w.p[i].bits_per_key;
    }
    if (st == AMQ_OK)
        st = amq_lsm_fit_line(x, y, NULL, m, false, fit);
    amq__lsm_work_free(&w);
    return st;
}

/* ---- robustness ---------------------------------------------------------- */

/* The relative excess of allocating from wt e^delta, paid under wt. */
static amq_status excess_of(amq__lsm_work *w, size_t n, double keys,
                            const double *wt, const double *delta, double *hat,
                            const amq_alloc_curve *curve, double budget,
                            double c_opt, double *out) {
    for (size_t i = 0; i < n; i++)
        hat[i] = wt[i] * exp(delta[i]);
    amq__lsm_equal_groups(w, n, keys, hat, curve);
    AMQ_RETURN_IF_ERR(amq_alloc_min_cost(w->g, n, budget, w->p, NULL));
    *out = amq__lsm_cost_under(wt, w->p, n) / c_opt - 1;
    return AMQ_OK;
}

static bool robust_cfg_ok(const amq_lsm_robust_cfg *c) {
    return c != NULL && c->segments >= 2 && c->draws >= 2 &&
           c->bits_per_key >= 0 && isfinite(c->bits_per_key) && c->skew >= 0 &&
           isfinite(c->skew) && c->scale_lo > 0 && c->scale_hi >= c->scale_lo &&
           isfinite(c->scale_hi);
}

/* Common-factor errors against differential ones of the same size. */
static amq_status common_vs_differential(amq__lsm_work *w,
                                         const amq_lsm_robust_cfg *c,
                                         lsm_rng *rng, const double *wt,
                                         const amq_alloc_curve *curve,
                                         double budget, double c_opt,
                                         amq_lsm_robust *out) {
    size_t n = c->segments;
    double *delta = w->d[1], *hat = w->d[2], sum_c = 0, sum_d = 0, e;
    size_t pairs = c->draws / 2;
    for (size_t k = 0; k < pairs; k++) {
        double m = 0.1 + 0.5 * lsm_rng_unit(rng), mean;
        for (size_t i = 0; i < n; i++)
            delta[i] = m * lsm_rng_normal(rng);
        amq__lsm_variance(delta, n, &mean);
        for (size_t i = 0; i < n; i++)
            delta[i] -= mean;
        AMQ_RETURN_IF_ERR(
            excess_of(w, n, 1, wt, delta, hat, curve, budget, c_opt, &e));
        sum_d += e;
        double g = m * lsm_rng_normal(rng);
        for (size_t i = 0; i < n; i++)
            delta[i] = g;
        AMQ_RETURN_IF_ERR(
            excess_of(w, n, 1, wt, delta, hat, curve, budget, c_opt, &e));
        sum_c += e;
    }
    out->common_excess = sum_c / (double)pairs;
    out->differential_excess = sum_d / (double)pairs;
    return AMQ_OK;
}

/* Least squares through the origin, accumulated point by point (the
 * caller's arrays are optional, so the points may not be kept). */
typedef struct origin_fit {
    double sxy, sxx, sy, syy;
    size_t n;
} origin_fit;

static void origin_add(origin_fit *f, double x, double y) {
    f->sxy += x * y, f->sxx += x * x, f->sy += y, f->syy += y * y, f->n++;
}

static amq_lsm_fit origin_finish(const origin_fit *f) {
    double s = f->sxy / f->sxx;
    double res = f->syy - 2 * s * f->sxy + s * s * f->sxx;
    double tot = f->syy - f->sy * f->sy / (double)f->n;
    return (amq_lsm_fit){s, 0, tot > 0 ? 1 - res / tot : 1.0, f->n};
}

static amq_status robustness(amq__lsm_work *w, const amq_lsm_robust_cfg *c,
                             const amq_alloc_curve *curve, double *D,
                             double *excess, double *exact,
                             amq_lsm_robust *out) {
    size_t n = c->segments;
    double *wt = w->d[0], *delta = w->d[1], *hat = w->d[2];
    double budget = c->bits_per_key * (double)n, err = 0;
    origin_fit acc = {0};
    lsm_rng rng;
    lsm_rng_init(&rng, c->seed);
    amq__lsm_zipf(wt, n, c->skew);
    amq__lsm_equal_groups(w, n, 1, wt, curve);
    AMQ_RETURN_IF_ERR(amq_alloc_min_cost(w->g, n, budget, w->p, NULL));
    double c_opt = amq__lsm_cost_under(wt, w->p, n);
    for (size_t k = 0; k < c->draws; k++) {
        double s =
            c->scale_lo + (c->scale_hi - c->scale_lo) * lsm_rng_unit(&rng);
        double mean, ex = 0, e;
        for (size_t i = 0; i < n; i++)
            delta[i] = s * lsm_rng_normal(&rng);
        double d = amq__lsm_variance(delta, n, &mean);
        for (size_t i = 0; i < n; i++)
            delta[i] -= mean, ex += exp(-delta[i]) / (double)n;
        AMQ_RETURN_IF_ERR(
            excess_of(w, n, 1, wt, delta, hat, curve, budget, c_opt, &e));
        if (D)
            D[k] = d;
        if (excess)
            excess[k] = e;
        if (exact)
            exact[k] = ex - 1;
        err += fabs(e - d / 2) / (d / 2);
        origin_add(&acc, d, e);
    }
    out->fit = origin_finish(&acc);
    out->rel_err_half_law = err / (double)c->draws;
    return common_vs_differential(w, c, &rng, wt, curve, budget, c_opt, out);
}

amq_status amq_lsm_robustness(const amq_lsm_robust_cfg *cfg,
                              const amq_alloc_curve *curve,
                              const amq_options *opt, double *D, double *excess,
                              double *exact, amq_lsm_robust *out) {
    amq__lsm_work w;
    amq_lsm_robust r;
    if (!robust_cfg_ok(cfg) || curve == NULL || out == NULL)
        return AMQ_ERR_INVALID;
    AMQ_RETURN_IF_ERR(amq__lsm_work_new(&w, opt, cfg->segments, 3));
    memset(&r, 0, sizeof r);
    amq_status st = robustness(&w, cfg, curve, D, excess, exact, &r);
    amq__lsm_work_free(&w);
    if (st == AMQ_OK)
        *out = r;
    return st;
}

/* ---- measuring a real filter --------------------------------------------- */

#define MEASURE_BATCH 4096

static amq_status count_fp(const amq_filter *f, uint64_t queries, lsm_rng *rng,
                           uint64_t *fp) {
    uint64_t h[MEASURE_BATCH];
    uint8_t out[MEASURE_BATCH];
    uint64_t hits = 0;
    for (uint64_t done = 0; done < queries;) {
        size_t n = queries - done < MEASURE_BATCH ? (size_t)(queries - done)
                                                  : MEASURE_BATCH;
        for (size_t i = 0; i < n; i++)
            h[i] = lsm_rng_u64(rng);
        amq_filter_contains_batch(f, h, n, out);
        for (size_t i = 0; i < n; i++)
            hits += out[i];
        done += n;
    }
    *fp = hits;
    return AMQ_OK;
}

amq_status amq_lsm_measure(const amq_alloc_curve *curve, double bits_per_key,
                           size_t keys, uint64_t queries, uint64_t seed,
                           const amq_options *opt, amq_alloc_pick *pick,
                           double *bits_actual, uint64_t *fp) {
    amq_alloc_pick p;
    amq__mem mem;
    size_t sz;
    if (curve == NULL || keys == 0 || queries == 0 || pick == NULL ||
        bits_actual == NULL || fp == NULL ||
        !amq__mul(keys, sizeof(uint64_t), &sz))
        return AMQ_ERR_INVALID;
    AMQ_RETURN_IF_ERR(amq_alloc_curve_at(curve, bits_per_key, &p));
    if (p.spec[0] == '\0') { /* no filter: every probe reads */
        *pick = p, *bits_actual = 0, *fp = queries;
        return AMQ_OK;
    }
    if (amq_filter_type_find(p.spec) == NULL)
        return AMQ_ERR_UNSUPPORTED; /* "model" or a caller's label */
    amq__mem_init(&mem, opt);
    uint64_t *h = amq__alloc(&mem, sz);
    if (h == NULL)
        return AMQ_ERR_NOMEM;
    lsm_rng rng;
    lsm_rng_init(&rng, seed);
    for (size_t i = 0; i < keys; i++)
        h[i] = lsm_rng_u64(&rng);
    amq_filter *f = NULL;
    amq_status st = amq_filter_build(p.spec, h, keys, p.fpr, opt, &f, NULL);
    amq__free(&mem, h, sz);
    if (st != AMQ_OK)
        return st;
    count_fp(f, queries, &rng, fp);
    *bits_actual = 8.0 * (double)amq_filter_size_bytes(f) / (double)keys;
    *pick = p;
    amq_filter_free(f);
    return AMQ_OK;
}
