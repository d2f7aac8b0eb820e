/*
 * amq/lsm.h — filter memory for LSM trees: Monkey's allocation through the
 * allocation engine (amq/alloc.h), and a simulator for the laws of the
 * "value of adaptivity" paper (docs/lsm.md).
 *
 * A run (a level, or a segment of one) holds `keys` keys and receives a
 * share `lookups` of the lookups that probe it without finding the key;
 * its filter's false-positive rate f is the chance such a probe costs a
 * wasted read. With weights normalised to sum 1 the expected wasted reads
 * per lookup are sum w_i f_i; Monkey minimises it under a memory budget.
 *
 * The laws (the paper's formulas, restored in docs/lsm.md; c = (ln 2)^2
 * for the ideal Bloom filter f = e^(-c b)):
 *   log-law      b_i = max(0, ln(c w_i / (lambda n_i)) / c): bits per key
 *                affine in ln w_i with slope 1/c = 2.0814;
 *   robustness   allocating with w_i e^(delta_i) instead of w_i costs
 *                about Var_n(delta) / 2 more (exactly, without clipping,
 *                sum_i (n_i/N) e^(-(delta_i - mean_n delta)) - 1);
 *   frontier     re-allocating only at compaction, under drift r per
 *                epoch, leaves V ~ k r^2 / G of the benefit of tracking,
 *                G = C_uniform / C_opt - 1 (k = 1/6 for linear drift,
 *                1/4 for a random walk; the simulator measures it).
 *
 * Everything here is deterministic for a given seed. Functions that fill
 * caller arrays take their length; those that need scratch memory say so
 * and take an amq_options for the allocator.
 * Thread-safety: no shared state; curves may be shared (see amq/alloc.h).
 */
#ifndef AMQ_LSM_H
#define AMQ_LSM_H

#include "amq/alloc.h"

#ifdef __cplusplus
extern "C" {
#endif

#define AMQ_LSM_NAME_MAX 32

typedef struct amq_lsm_run {
    char name[AMQ_LSM_NAME_MAX];
    double keys;    /* > 0                                              */
    double lookups; /* >= 0, any scale                                  */
} amq_lsm_run;

/* ---- describing a tree --------------------------------------------------- */

/* Parse CSV text of rows "name,keys,lookups" (fields trimmed; an optional
 * header row "name,keys,lookups"; blank lines and lines starting with '#'
 * skipped; no quoting). Names are 1..31 bytes without '"'; keys a number
 * in (0, 1e18]; lookups a number in [0, 1e18], some run's above 0. Fills
 * runs[0..cap) and sets *count to the number of rows; with cap too small
 * (or runs NULL) returns AMQ_ERR_BUFFER and *count the rows needed.
 * Errors: AMQ_ERR_INVALID with diag (byte offset of the bad field and a
 * message naming the line), AMQ_ERR_BUFFER. */
AMQ_API amq_status amq_lsm_parse_csv(const char *text, size_t len,
                                     amq_lsm_run *runs, size_t cap,
                                     size_t *count, amq_diag *diag);

/* A leveled tree of `levels` levels (1..64) with size ratio T > 1 holding
 * `keys` keys: level i (1 the smallest) holds keys (T-1)/T^(L+1-i),
 * normalised so the levels sum to keys. Names "L1", "L2", ...; lookups
 * left at 0. Errors: AMQ_ERR_INVALID. */
AMQ_API amq_status amq_lsm_levels(unsigned levels, double ratio, double keys,
                                  amq_lsm_run *runs);

/* Set the runs' lookups from a workload spec, normalised to sum 1:
 *   "uniform"         every run probed equally (an absent key probes all)
 *   "zipf:S"          run i (from 1) proportional to i^-S, S >= 0
 *   "weights:a,b,..." one non-negative weight per run, not all zero
 * Errors: AMQ_ERR_SPEC (diag says where), AMQ_ERR_INVALID (count 0). */
AMQ_API amq_status amq_lsm_workload(const char *spec, amq_lsm_run *runs,
                                    size_t count, amq_diag *diag);

/* ---- planning ------------------------------------------------------------ */

typedef struct amq_lsm_totals {
    double bits_per_key; /* the budget: memory_bits / sum keys          */
    double memory_bits;
    double cost_uniform; /* sum w f, w normalised, same bits everywhere  */
    double cost_optimal; /* sum w f of the engine's allocation          */
    amq_alloc_summary optimal; /* the engine's summary (unnormalised w)  */
} amq_lsm_totals;

/* Monkey: minimise sum w_i f_i(b_i) subject to sum n_i b_i = bits_per_key
 * sum n_i on `curve`; optimal[i] and uniform[i] (either may be NULL)
 * receive run i's pick. Allocates O(count) scratch through opt (NULL: the
 * C library). Errors: AMQ_ERR_INVALID (no runs, keys <= 0, lookups < 0 or
 * all 0, bits_per_key < 0 or not finite, NULL curve), AMQ_ERR_NOMEM. */
AMQ_API amq_status amq_lsm_plan(const amq_lsm_run *runs, size_t count,
                                const amq_alloc_curve *curve,
                                double bits_per_key, const amq_options *opt,
                                amq_alloc_pick *optimal,
                                amq_alloc_pick *uniform,
                                amq_lsm_totals *totals);

/* ---- fitting ------------------------------------------------------------- */

typedef struct amq_lsm_fit {
    double slope, intercept, r2;
    size_t n; /* points used */
} amq_lsm_fit;

/* Least squares y = slope x + intercept over the n points (intercept
 * forced to 0 when through_origin; r2 then measured against the mean
 * as usual). weights may be NULL (all 1). AMQ_ERR_INVALID for n < 2 or
 * no spread in x. */
AMQ_API amq_status amq_lsm_fit_line(const double *x, const double *y,
                                    const double *weights, size_t n,
                                    bool through_origin, amq_lsm_fit *fit);

/* ---- the laws ------------------------------------------------------------ */

/* Log-law: `runs` runs of equal size, hotness drawn from Dirichlet(alpha),
 * `bits_per_key` on average; the optimal bits regressed on ln w over the
 * runs that get bits. ln_w and bits (length runs, may be NULL) receive
 * the points. The functions below allocate their O(runs) scratch through
 * opt. Errors: AMQ_ERR_INVALID (runs < 2, alpha <= 0, ...), AMQ_ERR_NOMEM. */
AMQ_API amq_status amq_lsm_loglaw(size_t runs, double alpha,
                                  double bits_per_key, uint64_t seed,
                                  const amq_alloc_curve *curve,
                                  const amq_options *opt, double *ln_w,
                                  double *bits, amq_lsm_fit *fit);

typedef struct amq_lsm_robust_cfg {
    size_t segments;     /* equal-size runs (64)                          */
    double bits_per_key; /* 10                                            */
    double skew;         /* Zipf exponent of the true hotness (0.9)       */
    size_t draws;        /* misestimates drawn (600)                      */
    double scale_lo, scale_hi; /* log-error sd ~ U(lo, hi) per draw
                                  (0.02, 0.25)                     */
    uint64_t seed;
} amq_lsm_robust_cfg;

typedef struct amq_lsm_robust {
    amq_lsm_fit fit;            /* excess on D, through the origin           */
    double rel_err_half_law;    /* mean |excess - D/2| / (D/2)               */
    double common_excess;       /* mean excess of common-factor errors       */
    double differential_excess; /* ... of differential errors, same size  */
} amq_lsm_robust;

/* Robustness law: for each draw, log-errors delta_i ~ N(0, s^2) (s drawn
 * per draw, centred), allocation from w_i e^(delta_i), the relative excess
 * cost under the true w against D = Var_n(delta). D, excess (length draws,
 * may be NULL) receive the points; exact (may be NULL) the closed form
 * sum (n_i/N) e^(-(delta_i - mean delta)) - 1, exact for the model when no
 * run is clipped at 0 bits. Then draws/2 pairs of common-factor and
 * differential errors of the same size (sd ~ U(0.1, 0.6)). Errors:
 * AMQ_ERR_INVALID, AMQ_ERR_NOMEM. */
AMQ_API amq_status amq_lsm_robustness(const amq_lsm_robust_cfg *cfg,
                                      const amq_alloc_curve *curve,
                                      const amq_options *opt, double *D,
                                      double *excess, double *exact,
                                      amq_lsm_robust *out);

typedef enum amq_lsm_drift_kind {
    AMQ_LSM_DRIFT_WALK = 0,  /* ln w_i gets N(0, sigma^2) each step, pulled
                                back toward its start by theta (OU)      */
    AMQ_LSM_DRIFT_LINEAR = 1 /* ln w_i moves at a constant rate per epoch
                                (N(0, sigma^2) per step), fresh each epoch */
} amq_lsm_drift_kind;

typedef struct amq_lsm_drift_cfg {
    size_t segments;     /* equal-size runs (64)                          */
    double keys;         /* all runs together (1e6)                       */
    double bits_per_key; /* 10                                            */
    double skew;         /* Zipf exponent of the starting hotness (0.9)   */
    double theta;        /* OU pull per step (0.03)                       */
    unsigned epoch;      /* steps between compactions (30)                */
    unsigned steps;      /* 1500                                          */
    unsigned warmup;     /* steps before costs count (100)                */
    amq_lsm_drift_kind kind;
    uint64_t seed;
} amq_lsm_drift_cfg;

typedef struct amq_lsm_drift {
    double sigma;
    double r;     /* mean over epochs of sqrt Var_n(ln w change)   */
    double V;     /* (C_compact - C_oracle) / (C_uniform - C_oracle) */
    double G;     /* C_uniform / C_oracle - 1                      */
    double rstar; /* sqrt(2 G)                                     */
    double c_uniform, c_oracle, c_compact, c_static;
} amq_lsm_drift;

/* One drift simulation: uniform bits, the allocation of the first step
 * kept forever (static), re-allocated at each compaction from the hotness
 * then (compact), and re-allocated every step (oracle); time-averaged
 * costs after the warm-up. Errors: AMQ_ERR_INVALID. */
AMQ_API amq_status amq_lsm_drift_run(const amq_lsm_drift_cfg *cfg, double sigma,
                                     const amq_alloc_curve *curve,
                                     const amq_options *opt,
                                     amq_lsm_drift *out);

typedef struct amq_lsm_frontier {
    double rstar;  /* median of the runs' sqrt(2 G)                 */
    double quad_k; /* V = quad_k (r / rstar)^2 over r <= rstar      */
    double quad_r2;
    double small_k;    /* median of V G / r^2 over r <= 0.35 rstar: the
                            k of V = k r^2 / G at small drift (1/6 for
                            linear drift, 1/4 for a random walk); NaN if
                            no run is that small                         */
    double r_coarse;   /* largest r with V <= 0.1 (0 if none)           */
    double r_fallback; /* smallest r with V >= 1 (NaN if none)          */
} amq_lsm_frontier;

/* Summarise drift runs (any order). Errors: AMQ_ERR_INVALID (n == 0 or
 * more than 256). */
AMQ_API amq_status amq_lsm_frontier_fit(const amq_lsm_drift *runs, size_t n,
                                        amq_lsm_frontier *out);

/* Build a filter of `keys` random keys at the curve's realisable choice
 * for bits_per_key (amq_alloc_curve_at) and count false positives over
 * `queries` random strangers. *pick receives the choice, *bits_actual the
 * built filter's bits per key (0 and every query positive when the choice
 * is no filter), *fp the false positives. Errors: as amq_filter_build,
 * AMQ_ERR_INVALID (keys or queries 0), AMQ_ERR_UNSUPPORTED (a model or
 * caller's curve: nothing to build), AMQ_ERR_NOMEM. */
AMQ_API amq_status amq_lsm_measure(const amq_alloc_curve *curve,
                                   double bits_per_key, size_t keys,
                                   uint64_t queries, uint64_t seed,
                                   const amq_options *opt, amq_alloc_pick *pick,
                                   double *bits_actual, uint64_t *fp);

#ifdef __cplusplus
}
#endif
#endif
