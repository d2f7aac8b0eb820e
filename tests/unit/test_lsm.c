/*
 * test_lsm.c — the LSM layer (amq/lsm.h): the CSV parser against good and
 * bad files, generated trees and workloads, Monkey on the paper's H0 setup
 * (the repository's numbers to 1e-9), and each law against its closed
 * form:
 *   - log-law on the model: slope 1/c exactly, R^2 = 1;
 *   - robustness on the model: excess equals the exact form
 *     sum e^-(delta - mean)/n - 1 when no run is clipped, a common factor
 *     costs nothing, the slope on D is ~1/2 for small errors;
 *   - frontier: linear drift follows the README's r^2/(6G) at small drift,
 *     a random walk follows r^2/(4G) instead (the README's form is 1.5x
 *     too low there); no drift leaves nothing behind;
 *   - measuring a real filter agrees with its curve.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amq/amq.h"
#include "amq/lsm.h"
#include "check.h"

#define C_BLOOM AMQ_ALLOC_BLOOM_C

static amq_alloc_curve *model(void) {
    amq_alloc_curve *m = NULL;
    CHECK_OK(amq_alloc_curve_model(C_BLOOM, NULL, &m));
    return m;
}

/* ---- CSV ----------------------------------------------------------------- */

static void test_csv_good(void) {
    const char *text = "# a tree\n"
                       "name,keys,lookups\r\n"
                       "\n"
                       "  L1 , 1000 , 5\r\n"
                       "L2,1e4,0\n"
                       "L3,100000,0.5";
    amq_lsm_run runs[3];
    size_t n = 0;
    amq_diag d = {0};
    check_seed = 31;
    CHECK_STATUS(amq_lsm_parse_csv(text, strlen(text), NULL, 0, &n, &d),
                 AMQ_ERR_BUFFER);
    CHECK(n == 3);
    CHECK_STATUS(amq_lsm_parse_csv(text, strlen(text), runs, 2, &n, &d),
                 AMQ_ERR_BUFFER);
    CHECK_OK(amq_lsm_parse_csv(text, strlen(text), runs, 3, &n, &d));
    CHECK(n == 3 && strcmp(runs[0].name, "L1") == 0 && runs[0].keys == 1000 &&
          runs[0].lookups == 5 && runs[1].keys == 1e4 && runs[1].lookups == 0 &&
          strcmp(runs[2].name, "L3") == 0 && runs[2].lookups == 0.5);
}

/* Each bad file must fail with the line it names and the byte offset of
 * the bad field. */
static void test_csv_bad(void) {
    static const struct {
        const char *text;
        const char *line; /* expected in the message */
        size_t offset;
    } cases[] = {
        {"a,1,1\nb,2\n", "line 2", 6},
        {"a,1,1\nb,2,3,4\n", "line 2", 6},
        {"a,-1,1\n", "line 1", 2},
        {"a,0,1\n", "line 1", 2},
        {"a,1,-0.5\n", "line 1", 4},
        {"a,nan,1\n", "line 1", 2},
        {"a,1,inf\n", "line 1", 4},
        {"a,1e999,1\n", "line 1", 2},
        {"a,12x,1\n", "line 1", 2},
        {"a,,1\n", "line 1", 2},
        {"# c\n,1,1\n", "line 2", 4},
        {"\"q\",1,1\n", "line 1", 0},
        {"name_that_is_far_too_long_for_a_run,1,1\n", "line 1", 0},
        {"a,1,0\nb,2,0\n", "0 lookups", 12},
        {"", "no runs", 0},
        {"name,keys,lookups\n", "no runs", 18},
    };
    check_seed = 32;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        amq_lsm_run runs[4];
        size_t n = 99;
        amq_diag d = {0};
        amq_status st = amq_lsm_parse_csv(cases[i].text, strlen(cases[i].text),
                                          runs, 4, &n, &d);
        CHECK_MSG(st == AMQ_ERR_INVALID, "case %zu: %s", i,
                  amq_status_name(st));
        CHECK_MSG(strstr(d.message, cases[i].line) != NULL,
                  "case %zu: '%.100s'", i, d.message);
        CHECK_MSG(d.offset == cases[i].offset, "case %zu: offset %zu", i,
                  d.offset);
    }
    const char nul[] = "a,1,1\nb\0,1,1\n";
    amq_lsm_run runs[2];
    size_t n;
    amq_diag d = {0};
    CHECK_STATUS(amq_lsm_parse_csv(nul, sizeof nul - 1, runs, 2, &n, &d),
                 AMQ_ERR_INVALID);
    CHECK(strstr(d.message, "line 2") != NULL);
    CHECK_STATUS(amq_lsm_parse_csv(NULL, 1, runs, 2, &n, NULL),
                 AMQ_ERR_INVALID);
}

/* ---- trees and workloads ------------------------------------------------- */

static void test_tree(void) {
    amq_lsm_run r[5];
    amq_diag d = {0};
    check_seed = 33;
    CHECK_OK(amq_lsm_levels(5, 10, 1e6, r));
    double sum = 0;
    for (int i = 0; i < 5; i++)
        sum += r[i].keys;
    CHECK(fabs(sum - 1e6) < 1e-6);
    for (int i = 1; i < 5; i++)
        CHECK(fabs(r[i].keys / r[i - 1].keys - 10) < 1e-9);
    CHECK(strcmp(r[4].name, "L5") == 0);
    CHECK_STATUS(amq_lsm_levels(0, 10, 1, r), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_lsm_levels(3, 1, 1, r), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_lsm_levels(3, 10, NAN, r), AMQ_ERR_INVALID);

    CHECK_OK(amq_lsm_workload("uniform", r, 5, &d));
    CHECK(r[0].lookups == 0.2 && r[4].lookups == 0.2);
    CHECK_OK(amq_lsm_workload("zipf:1", r, 5, &d));
    CHECK(fabs(r[0].lookups / r[1].lookups - 2) < 1e-12);
    CHECK_OK(amq_lsm_workload("weights:100,50,10,2,1", r, 5, &d));
    CHECK(fabs(r[0].lookups - 100.0 / 163) < 1e-15);
    static const char *bad[] = {"weights:1,2",
                                "weights:1,2,3,4,5,6",
                                "weights:1,x,1,1,1",
                                "weights:0,0,0,0,0",
                                "zipf:",
                                "zipf:-1",
                                "zipf:nan",
                                "pareto",
                                "weights:1,,1,1,1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        d.message[0] = '\0';
        CHECK_MSG(amq_lsm_workload(bad[i], r, 5, &d) == AMQ_ERR_SPEC, "%s",
                  bad[i]);
        CHECK(d.message[0] != '\0');
    }
}

/* ---- Monkey on H0 -------------------------------------------------------- */

static void test_h0(void) {
    amq_lsm_run r[5];
    amq_alloc_pick opt[5], uni[5];
    amq_lsm_totals t;
    amq_alloc_curve *m = model();
    check_seed = 34;
    CHECK_OK(amq_lsm_levels(5, 10, 1e6, r));
    CHECK_OK(amq_lsm_workload("weights:100,50,10,2,1", r, 5, NULL));
    CHECK_OK(amq_lsm_plan(r, 5, m, 8, NULL, opt, uni, &t));
    /* the paper's repository: 0.02141584712068372, 0.00020566673914825952 */
    CHECK(fabs(t.cost_uniform - exp(-8 * C_BLOOM)) < 1e-15);
    CHECK(fabs(t.cost_uniform / 0.02141584712068372 - 1) < 1e-9);
    CHECK_MSG(fabs(t.cost_optimal / 0.00020566673914825952 - 1) < 1e-9,
              "Monkey %.17g", t.cost_optimal);
    CHECK(t.optimal.kkt_residual <= 1e-9);
    CHECK(fabs(t.optimal.memory_bits - 8e6) < 1e-3);
    /* Monkey's rates are proportional to n_i / w_i */
    for (int i = 1; i < 5; i++)
        CHECK(fabs(opt[i].fpr / opt[0].fpr -
                   (r[i].keys / r[i].lookups) / (r[0].keys / r[0].lookups)) <
              1e-9 * opt[i].fpr / opt[0].fpr);
    /* a real curve builds every pick */
    amq_alloc_curve *b = NULL;
    CHECK_OK(amq_alloc_curve_spec("bloom", NULL, &b, NULL));
    CHECK_OK(amq_lsm_plan(r, 5, b, 8, NULL, opt, NULL, &t));
    for (int i = 0; i < 5; i++)
        CHECK(strncmp(opt[i].spec, "bloom:k=", 8) == 0);
    CHECK(t.cost_optimal < t.cost_uniform / 50);
    r[2].keys = 0;
    CHECK_STATUS(amq_lsm_plan(r, 5, b, 8, NULL, opt, NULL, &t),
                 AMQ_ERR_INVALID);
    CHECK_STATUS(amq_lsm_plan(r, 5, NULL, 8, NULL, opt, NULL, &t),
                 AMQ_ERR_INVALID);
    amq_alloc_curve_free(b);
    amq_alloc_curve_free(m);
}

/* ---- fitting ------------------------------------------------------------- */

static void test_fit(void) {
    double x[5] = {1, 2, 3, 4, 5}, y[5], w[5] = {1, 2, 3, 4, 5};
    amq_lsm_fit f;
    check_seed = 35;
    for (int i = 0; i < 5; i++)
        y[i] = 3 * x[i] - 2;
    CHECK_OK(amq_lsm_fit_line(x, y, NULL, 5, false, &f));
    CHECK(fabs(f.slope - 3) < 1e-12 && fabs(f.intercept + 2) < 1e-12 &&
          fabs(f.r2 - 1) < 1e-12);
    CHECK_OK(amq_lsm_fit_line(x, y, w, 5, false, &f));
    CHECK(fabs(f.slope - 3) < 1e-12);
    for (int i = 0; i < 5; i++)
        y[i] = 2 * x[i];
    CHECK_OK(amq_lsm_fit_line(x, y, NULL, 5, true, &f));
    CHECK(fabs(f.slope - 2) < 1e-12 && f.intercept == 0);
    CHECK_STATUS(amq_lsm_fit_line(x, y, NULL, 1, false, &f), AMQ_ERR_INVALID);
    double same[3] = {1, 1, 1};
    CHECK_STATUS(amq_lsm_fit_line(same, y, NULL, 3, false, &f),
                 AMQ_ERR_INVALID);
}

/* ---- the laws ------------------------------------------------------------ */

static void test_loglaw(void) {
    amq_alloc_curve *m = model();
    amq_lsm_fit f;
    double lw[50], b[50];
    check_seed = 36;
    CHECK_OK(amq_lsm_loglaw(50, 0.3, 8, 0, m, NULL, lw, b, &f));
    CHECK_MSG(fabs(f.slope - 1 / C_BLOOM) < 1e-9, "slope %.12g", f.slope);
    CHECK(f.r2 > 1 - 1e-12 && f.n >= 10 && f.n <= 50);
    /* clipped runs are exactly those below the line's zero */
    for (int i = 0; i < 50; i++)
        CHECK((b[i] > 0) == (f.slope * lw[i] + f.intercept > 0));
    CHECK_STATUS(amq_lsm_loglaw(1, 0.3, 8, 0, m, NULL, NULL, NULL, &f),
                 AMQ_ERR_INVALID);
    amq_alloc_curve_free(m);
}

static void test_robustness(void) {
    amq_alloc_curve *m = model();
    amq_lsm_robust_cfg cfg = {64, 10, 0.9, 100, 0.02, 0.25, 1};
    amq_lsm_robust r;
    double D[100], E[100], X[100];
    check_seed = 37;
    CHECK_OK(amq_lsm_robustness(&cfg, m, NULL, D, E, X, &r));
    for (int i = 0; i < 100; i++)
        CHECK_MSG(fabs(E[i] - X[i]) <= 1e-9 * (1 + X[i]),
                  "draw %d: excess %.12g exact %.12g", i, E[i], X[i]);
    CHECK_MSG(r.fit.slope > 0.48 && r.fit.slope < 0.53, "slope %g",
              r.fit.slope);
    CHECK(r.fit.r2 > 0.99);
    CHECK(fabs(r.common_excess) < 1e-9 && r.differential_excess > 0.01);
    cfg.scale_lo = 0;
    CHECK_STATUS(amq_lsm_robustness(&cfg, m, NULL, NULL, NULL, NULL, &r),
                 AMQ_ERR_INVALID);
    amq_alloc_curve_free(m);
}

static void test_frontier(void) {
    amq_alloc_curve *m = model();
    amq_lsm_drift_cfg cfg = {
        64, 1e6, 10, 0.9, 0.03, 30, 600, 60, AMQ_LSM_DRIFT_WALK, 2};
    amq_lsm_drift d;
    check_seed = 38;
    /* no drift: compaction-only is the oracle */
    CHECK_OK(amq_lsm_drift_run(&cfg, 0, m, NULL, &d));
    CHECK(d.r == 0 && fabs(d.V) < 1e-9 && d.G > 0.1);
    CHECK(fabs(d.c_static - d.c_oracle) < 1e-12 * d.c_oracle);
    /* a small random walk: V ~ r^2/(4G), well above the README's r^2/(6G) */
    CHECK_OK(amq_lsm_drift_run(&cfg, 0.02, m, NULL, &d));
    double walk = d.r * d.r / (4 * d.G), readme = d.r * d.r / (6 * d.G);
    CHECK_MSG(d.V > 0.9 * walk && d.V < 1.35 * walk && d.V > 1.3 * readme,
              "walk: V %g, r^2/4G %g, r^2/6G %g", d.V, walk, readme);
    CHECK(d.c_oracle <= d.c_compact && d.c_compact <= d.c_static * 1.5);
    /* linear drift: the README's sigma^2/6 */
    cfg.kind = AMQ_LSM_DRIFT_LINEAR;
    CHECK_OK(amq_lsm_drift_run(&cfg, 0.0005, m, NULL, &d));
    readme = d.r * d.r / (6 * d.G);
    CHECK_MSG(fabs(d.V / readme - 1) < 0.1, "linear: V %g, r^2/6G %g", d.V,
              readme);
    /* the summary of synthetic points */
    amq_lsm_drift pts[4] = {{.r = 0.1, .V = 0.01, .rstar = 1},
                            {.r = 0.5, .V = 0.08, .rstar = 1},
                            {.r = 1, .V = 0.4, .rstar = 1.2},
                            {.r = 3, .V = 1.2, .rstar = 2}};
    amq_lsm_frontier f;
    CHECK_OK(amq_lsm_frontier_fit(pts, 4, &f));
    CHECK(f.rstar == 1.1 && f.r_coarse == 0.5 && f.r_fallback == 3);
    CHECK_STATUS(amq_lsm_frontier_fit(pts, 0, &f), AMQ_ERR_INVALID);
    cfg.steps = cfg.warmup;
    CHECK_STATUS(amq_lsm_drift_run(&cfg, 0.1, m, NULL, &d), AMQ_ERR_INVALID);
    amq_alloc_curve_free(m);
}

/* A real filter's measured rate agrees with its curve: within 4 binomial
 * standard deviations plus 15% (small filters sit a little off the
 * asymptotic curve). */
static void test_measure(void) {
    const char *specs[] = {"bloom", "sbbf", "ribbon", "fuse"};
    check_seed = 39;
    for (size_t k = 0; k < 4; k++) {
        amq_alloc_curve *c = NULL;
        amq_alloc_pick p;
        double bits;
        uint64_t fp, q = 400000;
        CHECK_OK(amq_alloc_curve_spec(specs[k], NULL, &c, NULL));
        CHECK_OK(amq_lsm_measure(c, 10, 20000, q, 7, NULL, &p, &bits, &fp));
        double want = p.fpr * (double)q, sd = sqrt(want);
        CHECK_MSG(fabs((double)fp - want) <= 4 * sd + 0.15 * want,
                  "%s: %llu false positives, curve says %.0f", specs[k],
                  (unsigned long long)fp, want);
        CHECK(bits > 0.9 * p.bits_per_key && bits < 1.2 * p.bits_per_key);
        amq_alloc_curve_free(c);
    }
    amq_alloc_curve *m = model();
    amq_alloc_pick p;
    double bits;
    uint64_t fp;
    CHECK_STATUS(amq_lsm_measure(m, 10, 100, 100, 1, NULL, &p, &bits, &fp),
                 AMQ_ERR_UNSUPPORTED);
    CHECK_OK(amq_lsm_measure(m, 0, 100, 100, 1, NULL, &p, &bits, &fp));
    CHECK(fp == 100 && bits == 0);
    amq_alloc_curve_free(m);
}

int main(void) {
    test_csv_good();
    test_csv_bad();
    test_tree();
    test_h0();
    test_fit();
    test_loglaw();
    test_robustness();
    test_frontier();
    test_measure();
    return check_report("test_lsm");
}
