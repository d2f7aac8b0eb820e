/*
 * test_alloc.c — the allocation engine (amq/alloc.h).
 *
 * What is checked, and against what:
 *   - the model's water-filling against its own closed form, written out
 *     here independently (b_i = max(0, ln(c p_i / (lambda n_i)) / c)), and
 *     its KKT residuals (<= 1e-9) in both directions;
 *   - against brute force: two or three groups, every split of the budget
 *     on a fine grid (continuous curves) or every combination of
 *     realisable points (fingerprint widths);
 *   - duality (the memory min_cost spends buys back its cost in
 *     min_memory), monotonicity in the budget and in eps;
 *   - degenerate inputs: empty problems, zero weights or keys, M = 0, a
 *     huge M, eps at or beyond the trivial bounds, NaN, NULL;
 *   - the picks are real: building each pick's spec at its rate gives a
 *     filter of about the promised bits per key and rate;
 *   - the hull of every sampled curve is convex and decreasing;
 *   - the cascade (p_0 plus interval masses, eq. 6-7) and a shard split
 *     through caller curves;
 *   - curve construction under allocation failure (every N).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amq/amq.h"
#include "check.h"

#define C_BLOOM AMQ_ALLOC_BLOOM_C

static double urand(uint64_t *s) {
    return (double)(check_next(s) >> 11) * 0x1.0p-53;
}

static amq_alloc_curve *model(double c) {
    amq_alloc_curve *m = NULL;
    CHECK_OK(amq_alloc_curve_model(c, NULL, &m));
    return m;
}

static amq_alloc_curve *spec_curve(const char *spec) {
    amq_alloc_curve *c = NULL;
    amq_diag d = {0};
    amq_status st = amq_alloc_curve_spec(spec, NULL, &c, &d);
    CHECK_MSG(st == AMQ_OK, "%.60s: %s %.100s", spec, amq_status_name(st),
              d.message);
    return c;
}

/* Random groups: keys over three decades, weights over four. */
static void random_groups(amq_alloc_group *g, size_t n, uint64_t *s,
                          const amq_alloc_curve *c) {
    for (size_t i = 0; i < n; i++) {
        g[i].keys = floor(pow(10, 2 + 3 * urand(s)));
        g[i].weight = pow(10, -4 * urand(s));
        g[i].curve = c;
    }
}

static double sum_keys(const amq_alloc_group *g, size_t n) {
    double k = 0;
    for (size_t i = 0; i < n; i++)
        k += g[i].keys;
    return k;
}

static double sum_weights(const amq_alloc_group *g, size_t n) {
    double w = 0;
    for (size_t i = 0; i < n; i++)
        w += g[i].weight;
    return w;
}

static double cost_of(const amq_alloc_group *g, const amq_alloc_pick *p,
                      size_t n) {
    double c = 0;
    for (size_t i = 0; i < n; i++)
        c += g[i].weight * p[i].fpr;
    return c;
}

static double memory_of(const amq_alloc_group *g, const amq_alloc_pick *p,
                        size_t n) {
    double m = 0;
    for (size_t i = 0; i < n; i++)
        m += g[i].keys * p[i].bits_per_key;
    return m;
}

/* ---- the model --------------------------------------------------------- */

/* The closed form at the engine's lambda, recomputed here. */
static void check_closed_form(const amq_alloc_group *g, size_t n,
                              const amq_alloc_pick *p, double lambda,
                              double c) {
    for (size_t i = 0; i < n; i++) {
        double b = log(c * g[i].weight / (lambda * g[i].keys)) / c;
        b = b > 0 ? b : 0;
        CHECK_MSG(fabs(b - p[i].bits_per_key) <= 1e-9 * (1 + b),
                  "group %zu: closed form %.15g, engine %.15g", i, b,
                  p[i].bits_per_key);
        CHECK(fabs(p[i].fpr - exp(-c * p[i].bits_per_key)) <= 1e-15);
    }
}

static void test_model_min_cost(void) {
    amq_alloc_curve *m = model(C_BLOOM);
    uint64_t s = check_seed = 11;
    for (int trial = 0; trial < 200; trial++) {
        amq_alloc_group g[40];
        amq_alloc_pick p[40];
        amq_alloc_summary sum;
        size_t n = 1 + check_next(&s) % 40;
        random_groups(g, n, &s, m);
        double M = sum_keys(g, n) * 16 * urand(&s);
        CHECK_OK(amq_alloc_min_cost(g, n, M, p, &sum));
        CHECK_MSG(sum.kkt_residual <= 1e-9, "trial %d: kkt %g", trial,
                  sum.kkt_residual);
        CHECK(fabs(memory_of(g, p, n) - M) <= 1e-9 * (M + 1));
        CHECK(fabs(sum.memory_bits - M) <= 1e-9 * (M + 1));
        CHECK(fabs(sum.cost - cost_of(g, p, n)) <= 1e-12);
        CHECK(sum.rounded == 0 && sum.relaxed_cost == sum.cost);
        if (sum.lambda > 0)
            check_closed_form(g, n, p, sum.lambda, C_BLOOM);
        for (size_t i = 0; i < n; i++)
            CHECK(strcmp(p[i].spec, p[i].bits_per_key > 0 ? "model" : "") == 0);
    }
    amq_alloc_curve_free(m);
}

static void test_model_min_memory(void) {
    amq_alloc_curve *m = model(0.3);
    uint64_t s = check_seed = 12;
    for (int trial = 0; trial < 200; trial++) {
        amq_alloc_group g[40];
        amq_alloc_pick p[40];
        amq_alloc_summary sum;
        size_t n = 1 + check_next(&s) % 40;
        random_groups(g, n, &s, m);
        double total = sum_weights(g, n);
        double p0 = total * 0.1 * urand(&s);
        double eps = p0 + total * pow(10, -6 * urand(&s));
        CHECK_OK(amq_alloc_min_memory(g, n, p0, eps, p, &sum));
        CHECK_MSG(sum.kkt_residual <= 1e-9, "trial %d: kkt %g", trial,
                  sum.kkt_residual);
        CHECK_MSG(fabs(sum.cost - eps) <= 1e-9 * eps,
                  "trial %d: cost %.15g eps %.15g", trial, sum.cost, eps);
        CHECK(fabs(p0 + cost_of(g, p, n) - sum.cost) <= 1e-12);
        CHECK(fabs(memory_of(g, p, n) - sum.memory_bits) <=
              1e-9 * sum.memory_bits);
        if (sum.lambda > 0)
            check_closed_form(g, n, p, sum.lambda, 0.3);
    }
    amq_alloc_curve_free(m);
}

/* min_memory at the cost min_cost reached needs exactly its memory. */
static void test_duality(void) {
    const char *specs[] = {"model", "bloom", "sbbf", "ribbon"};
    uint64_t s = check_seed = 13;
    for (size_t k = 0; k < 4; k++) {
        amq_alloc_curve *c = k == 0 ? model(C_BLOOM) : spec_curve(specs[k]);
        for (int trial = 0; trial < 20; trial++) {
            amq_alloc_group g[12];
            amq_alloc_pick p[12];
            amq_alloc_summary a, b;
            random_groups(g, 12, &s, c);
            double M = sum_keys(g, 12) * (2 + 12 * urand(&s));
            CHECK_OK(amq_alloc_min_cost(g, 12, M, p, &a));
            CHECK_OK(amq_alloc_min_memory(g, 12, 0, a.relaxed_cost, p, &b));
            /* the relaxations are each other's optimum */
            CHECK_MSG(fabs(b.relaxed_memory - a.relaxed_memory) <=
                          1e-6 * a.relaxed_memory,
                      "%s: M %.9g, back %.9g", specs[k], a.relaxed_memory,
                      b.relaxed_memory);
            CHECK(b.cost <= a.relaxed_cost * (1 + 1e-9));
        }
        amq_alloc_curve_free(c);
    }
}

/* ---- brute force --------------------------------------------------------- */

/* Two groups on continuous curves: every split of M with one group on a
 * 1/256-bit grid and the other taking the rest, both ways round. */
static double brute_two(const amq_alloc_group *g, double M) {
    double best = INFINITY;
    for (int side = 0; side < 2; side++) {
        const amq_alloc_group *a = &g[side], *o = &g[1 - side];
        double top = fmin(M / a->keys, AMQ_ALLOC_MAX_BITS) + 1e-12;
        for (double ba = 0; ba <= top; ba += 1.0 / 256) {
            amq_alloc_pick pa, po;
            double bo = (M - a->keys * ba) / o->keys;
            amq_alloc_curve_at(a->curve, ba, &pa);
            amq_alloc_curve_at(o->curve, bo > 0 ? bo : 0, &po);
            double c = a->weight * pa.fpr + o->weight * po.fpr;
            best = c < best ? c : best;
        }
    }
    return best;
}

static void test_brute_continuous(void) {
    const char *specs[] = {"model", "bloom", "blocked", "sbbf", "bloom:k=4"};
    uint64_t s = check_seed = 14;
    for (size_t k = 0; k < 5; k++) {
        amq_alloc_curve *c = k == 0 ? model(C_BLOOM) : spec_curve(specs[k]);
        for (int trial = 0; trial < 6; trial++) {
            amq_alloc_group g[2];
            amq_alloc_pick p[2];
            amq_alloc_summary sum;
            random_groups(g, 2, &s, c);
            double M = (g[0].keys + g[1].keys) * (1 + 12 * urand(&s));
            CHECK_OK(amq_alloc_min_cost(g, 2, M, p, &sum));
            double bf = brute_two(g, M);
            CHECK(memory_of(g, p, 2) <= M * (1 + 1e-12));
            /* brute force walks a finer grid than the engine's hull, so
             * each may win by the grid's second-order error */
            CHECK_MSG(sum.cost <= bf * (1 + 1e-4), "%s: engine %.9g brute %.9g",
                      specs[k], sum.cost, bf);
            CHECK_MSG(sum.cost >= bf * (1 - 1e-4),
                      "%s: engine %.9g beats brute %.9g by too much", specs[k],
                      sum.cost, bf);
            CHECK(sum.relaxed_cost <= sum.cost * (1 + 1e-4));
        }
        amq_alloc_curve_free(c);
    }
}

/* Every realisable point of a step curve: what amq_alloc_curve_at gives
 * on a grid finer than any width's spacing. */
static size_t realisable(const amq_alloc_curve *c, double *b, double *f,
                         size_t cap) {
    size_t n = 0;
    for (double x = 0; x <= AMQ_ALLOC_MAX_BITS && n < cap; x += 1.0 / 64) {
        amq_alloc_pick p;
        amq_alloc_curve_at(c, x, &p);
        if (n == 0 || p.bits_per_key != b[n - 1])
            b[n] = p.bits_per_key, f[n++] = p.fpr;
    }
    return n;
}

/* Three groups on step curves: every combination of realisable points. */
static void test_brute_discrete(void) {
    const char *specs[] = {"fuse", "xor", "cuckoo", "qf"};
    uint64_t s = check_seed = 15;
    for (size_t k = 0; k < 4; k++) {
        amq_alloc_curve *c = spec_curve(specs[k]);
        double vb[64], vf[64];
        size_t nv = realisable(c, vb, vf, 64);
        double max_jump = 0;
        for (size_t v = 0; v + 1 < nv; v++)
            max_jump = fmax(max_jump, vf[v] - vf[v + 1]);
        for (int trial = 0; trial < 20; trial++) {
            amq_alloc_group g[3];
            amq_alloc_pick p[3];
            amq_alloc_summary sum;
            random_groups(g, 3, &s, c);
            double keys = g[0].keys + g[1].keys + g[2].keys;
            double M = keys * (2 + 25 * urand(&s)), best = INFINITY;
            for (size_t a = 0; a < nv; a++)
                for (size_t b = 0; b < nv; b++)
                    for (size_t d = 0; d < nv; d++) {
                        double m = g[0].keys * vb[a] + g[1].keys * vb[b] +
                                   g[2].keys * vb[d];
                        double cost = g[0].weight * vf[a] +
                                      g[1].weight * vf[b] + g[2].weight * vf[d];
                        if (m <= M && cost < best)
                            best = cost;
                    }
            CHECK_OK(amq_alloc_min_cost(g, 3, M, p, &sum));
            CHECK(memory_of(g, p, 3) <= M * (1 + 1e-12));
            CHECK(sum.relaxed_cost <= best * (1 + 1e-12));
            CHECK(sum.cost >= best * (1 - 1e-12));
            double wmax = fmax(g[0].weight, fmax(g[1].weight, g[2].weight));
            CHECK_MSG(sum.cost <= best + wmax * max_jump,
                      "%s: greedy %.9g, best %.9g", specs[k], sum.cost, best);
            CHECK(sum.kkt_residual <= 1e-9);
        }
        amq_alloc_curve_free(c);
    }
}

/* ---- monotonicity -------------------------------------------------------- */

static void test_monotone(void) {
    const char *specs[] = {"model", "bloom", "ribbon", "fuse", "cuckoo"};
    uint64_t s = check_seed = 16;
    for (size_t k = 0; k < 5; k++) {
        amq_alloc_curve *c = k == 0 ? model(C_BLOOM) : spec_curve(specs[k]);
        amq_alloc_group g[8];
        amq_alloc_pick p[8];
        amq_alloc_summary sum;
        random_groups(g, 8, &s, c);
        double keys = sum_keys(g, 8), prev = INFINITY;
        double prev_relaxed = INFINITY;
        for (double bpk = 0; bpk <= 40; bpk += 0.5) {
            CHECK_OK(amq_alloc_min_cost(g, 8, bpk * keys, p, &sum));
            CHECK_MSG(sum.relaxed_cost <= prev_relaxed * (1 + 1e-12),
                      "%s at %.1f bits/key", specs[k], bpk);
            if (k < 3) /* continuous enough that rounding keeps order */
                CHECK_MSG(sum.cost <= prev * (1 + 1e-9), "%s at %.1f", specs[k],
                          bpk);
            prev = sum.cost;
            prev_relaxed = sum.relaxed_cost;
        }
        double total = sum_weights(g, 8), prev_mem = 0;
        for (double e = 0.9; e > 1e-7; e /= 3) {
            CHECK_OK(amq_alloc_min_memory(g, 8, 0, e * total, p, &sum));
            CHECK(sum.relaxed_memory >= prev_mem * (1 - 1e-12));
            CHECK(sum.cost <= e * total * (1 + 1e-12));
            prev_mem = sum.relaxed_memory;
        }
        amq_alloc_curve_free(c);
    }
}

/* ---- degenerate inputs --------------------------------------------------- */

static void test_degenerate(void) {
    amq_alloc_curve *m = model(C_BLOOM), *b = spec_curve("bloom");
    amq_alloc_group g[3] = {{1000, 0.5, m}, {0, 0.3, m}, {500, 0, b}};
    amq_alloc_pick p[3];
    amq_alloc_summary sum;
    check_seed = 17;

    /* zero keys: nothing to store, rate 0; zero weight: no filter */
    CHECK_OK(amq_alloc_min_cost(g, 3, 8000, p, &sum));
    CHECK(fabs(p[0].bits_per_key - 8.0) < 1e-12 && p[1].bits_per_key == 0 &&
          p[1].fpr == 0 && p[2].bits_per_key == 0 && p[2].fpr == 1);
    CHECK(strcmp(p[1].spec, "") == 0 && strcmp(p[2].spec, "") == 0);

    /* M = 0: no bits, cost = every weight with keys */
    CHECK_OK(amq_alloc_min_cost(g, 3, 0, p, &sum));
    CHECK(sum.memory_bits == 0 && fabs(sum.cost - 0.5) < 1e-15);

    /* huge M on sampled curves: everything at its end, lambda 0 */
    amq_alloc_group h[2] = {{1000, 1, b}, {10, 1, b}};
    CHECK_OK(amq_alloc_min_cost(h, 2, 1e300, p, &sum));
    CHECK(sum.lambda == 0 && p[0].bits_per_key == AMQ_ALLOC_MAX_BITS &&
          p[1].bits_per_key == AMQ_ALLOC_MAX_BITS);
    /* huge M on the model: finite, exact budget */
    CHECK_OK(amq_alloc_min_cost(g, 1, 1e12, p, &sum));
    CHECK(fabs(p[0].bits_per_key - 1e9) < 1e-3 && p[0].fpr == 0);

    /* no groups */
    CHECK_OK(amq_alloc_min_cost(NULL, 0, 10, NULL, &sum));
    CHECK(sum.cost == 0 && sum.memory_bits == 0);
    CHECK_OK(amq_alloc_min_memory(NULL, 0, 0.1, 0.2, NULL, NULL));

    /* eps beyond p0 + sum p: no memory; eps <= p0: impossible */
    CHECK_OK(amq_alloc_min_memory(g, 3, 0.1, 0.6, p, &sum));
    CHECK(sum.memory_bits == 0 && fabs(sum.cost - 0.6) < 1e-15);
    CHECK_STATUS(amq_alloc_min_memory(g, 3, 0.1, 0.1, p, &sum),
                 AMQ_ERR_INVALID);
    /* below what a sampled curve reaches at its end */
    CHECK_STATUS(amq_alloc_min_memory(h, 2, 0, 1e-30, p, &sum),
                 AMQ_ERR_INVALID);

    /* bad numbers and pointers, picks untouched */
    memset(p, 0x5a, sizeof p);
    amq_alloc_group bad[2] = {{NAN, 1, m}, {1, 1, m}};
    CHECK_STATUS(amq_alloc_min_cost(bad, 2, 10, p, &sum), AMQ_ERR_INVALID);
    bad[0] = (amq_alloc_group){1, -1, m};
    CHECK_STATUS(amq_alloc_min_cost(bad, 2, 10, p, &sum), AMQ_ERR_INVALID);
    bad[0] = (amq_alloc_group){1, 1, NULL};
    CHECK_STATUS(amq_alloc_min_cost(bad, 2, 10, p, &sum), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_alloc_min_cost(g, 3, NAN, p, &sum), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_alloc_min_cost(g, 3, -1, p, &sum), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_alloc_min_cost(g, 3, INFINITY, p, &sum), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_alloc_min_cost(g, 3, 1, NULL, &sum), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_alloc_min_memory(g, 3, NAN, 0.1, p, &sum),
                 AMQ_ERR_INVALID);
    CHECK_STATUS(amq_alloc_uniform(bad, 2, 10, p, &sum), AMQ_ERR_INVALID);
    unsigned char untouched = 0x5a;
    CHECK(memcmp(&p[0], &(amq_alloc_pick){0}, 1) != 0 &&
          ((unsigned char *)p)[0] == untouched);

    amq_alloc_curve *dummy = NULL;
    CHECK_STATUS(amq_alloc_curve_model(0, NULL, &dummy), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_alloc_curve_model(NAN, NULL, &dummy), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_alloc_curve_at(m, -1, p), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_alloc_curve_at(m, NAN, p), AMQ_ERR_INVALID);
    CHECK(dummy == NULL);
    amq_alloc_curve_free(NULL);
    amq_alloc_curve_free(m);
    amq_alloc_curve_free(b);
}

static void test_spec_errors(void) {
    static const struct {
        const char *spec;
        amq_status st;
    } cases[] = {
        {"nosuchtype", AMQ_ERR_SPEC},    {"bloom:k=99", AMQ_ERR_SPEC},
        {"bloom:k=2.5", AMQ_ERR_SPEC},   {"bloom:m=1000", AMQ_ERR_SPEC},
        {"sbbf:blocks=4", AMQ_ERR_SPEC}, {"ribbon:bits=0.5", AMQ_ERR_SPEC},
        {"fuse:ways=7", AMQ_ERR_SPEC},   {"bloom:zz=1", AMQ_ERR_SPEC},
        {"topk", AMQ_ERR_UNSUPPORTED},   {"BLOOM", AMQ_ERR_SPEC},
        {"cuckoo:fp=3", AMQ_ERR_SPEC},
    };
    check_seed = 18;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        amq_alloc_curve *c = NULL;
        amq_diag d = {0};
        amq_status st = amq_alloc_curve_spec(cases[i].spec, NULL, &c, &d);
        CHECK_MSG(st == cases[i].st, "%s: %s", cases[i].spec,
                  amq_status_name(st));
        CHECK(c == NULL && d.message[0] != '\0');
    }
    char longspec[200];
    memset(longspec, 'a', sizeof longspec - 1);
    longspec[sizeof longspec - 1] = '\0';
    amq_alloc_curve *c = NULL;
    CHECK_STATUS(amq_alloc_curve_spec(longspec, NULL, &c, NULL), AMQ_ERR_SPEC);
    CHECK_STATUS(amq_alloc_curve_spec(NULL, NULL, &c, NULL), AMQ_ERR_INVALID);
}

/* ---- the curves themselves ----------------------------------------------- */

static void check_hull(const amq_alloc_curve *c, const char *what) {
    double b0, f0, b1, f1, b2, f2;
    CHECK(amq_alloc_curve_vertex(c, 0, &b0, &f0) && b0 == 0);
    for (size_t i = 1; amq_alloc_curve_vertex(c, i, &b1, &f1); i++) {
        amq_alloc_curve_vertex(c, i - 1, &b0, &f0);
        CHECK_MSG(b1 > b0 && f1 < f0, "%s vertex %zu", what, i);
        if (amq_alloc_curve_vertex(c, i + 1, &b2, &f2)) {
            double s0 = (f0 - f1) / (b1 - b0), s1 = (f1 - f2) / (b2 - b1);
            CHECK_MSG(s1 <= s0 * (1 + 1e-9), "%s: not convex at %zu (%g %g)",
                      what, i, s0, s1);
        }
    }
}

static void test_curves(void) {
    const char *specs[] = {
        "bloom",     "blocked",      "sbbf",        "ribbon",
        "fuse",      "xor8",         "cuckoo",      "vacuum",
        "qf",        "cqf",          "partitioned", "counting",
        "bloom:k=3", "ribbon:w=128", "fuse:ways=4", "dleft"};
    check_seed = 19;
    for (size_t k = 0; k < sizeof specs / sizeof *specs; k++) {
        amq_alloc_curve *c = spec_curve(specs[k]);
        if (c == NULL)
            continue;
        check_hull(c, specs[k]);
        CHECK(strcmp(amq_alloc_curve_label(c), specs[k]) == 0);
        /* curve_at never promises more bits than asked, and matches the
         * type's curve where the pick is a size-free configuration */
        for (double b = 0; b <= 40; b += 0.37) {
            amq_alloc_pick p;
            CHECK_OK(amq_alloc_curve_at(c, b, &p));
            CHECK(p.bits_per_key <= b + 1e-12);
            CHECK(p.fpr >= 0 && p.fpr <= 1);
            CHECK((p.spec[0] == '\0') == (p.bits_per_key == 0));
        }
        amq_alloc_curve_free(c);
    }
    /* Bloom at 10 bits: the best integer k is 7, and the rate is the
     * type's own curve there */
    amq_alloc_curve *c = spec_curve("bloom");
    amq_alloc_pick p;
    double f;
    CHECK_OK(amq_alloc_curve_at(c, 10, &p));
    CHECK_OK(amq_curve_fpr("bloom:k=7", 10, &f));
    CHECK(strcmp(p.spec, "bloom:k=7") == 0 && p.fpr == f);
    amq_alloc_curve_free(c);
    /* fixed widths are step functions: fuse8 at 8.9 bits is nothing */
    c = spec_curve("fuse8");
    CHECK_OK(amq_alloc_curve_at(c, 8.9, &p));
    CHECK(p.bits_per_key == 0 && p.fpr == 1 && p.spec[0] == '\0');
    CHECK_OK(amq_alloc_curve_at(c, 20, &p));
    CHECK(p.bits_per_key == 9.0 && p.fpr == 1.0 / 256 &&
          strcmp(p.spec, "fuse8") == 0);
    amq_alloc_curve_free(c);
    /* ribbon: whole multiples of 1/64 solution bits */
    c = spec_curve("ribbon");
    CHECK_OK(amq_alloc_curve_at(c, 7.3, &p));
    CHECK(strncmp(p.spec, "ribbon:bits=", 12) == 0);
    double r = atof(p.spec + 12);
    CHECK(r * 64 == floor(r * 64) && r > 7.0 && r < 7.3);
    amq_alloc_curve_free(c);
}

/* ---- picks build what they promise --------------------------------------- */

static void test_picks_build(void) {
    const char *specs[] = {"bloom", "blocked", "sbbf", "ribbon",     "fuse",
                           "xor",   "cuckoo",  "qf",   "partitioned"};
    size_t n = check_quick() ? 20000 : 100000;
    double slack = check_quick() ? 0.12 : 0.07;
    uint64_t *h = malloc(n * sizeof *h), s = check_seed = 20;
    CHECK(h != NULL);
    if (h == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        h[i] = check_next(&s);
    for (size_t k = 0; k < sizeof specs / sizeof *specs; k++) {
        amq_alloc_curve *c = spec_curve(specs[k]);
        amq_alloc_group g[3] = {{(double)n, 0.6, c},
                                {(double)n * 10, 0.3, c},
                                {(double)n * 100, 0.1, c}};
        amq_alloc_pick p[3];
        CHECK_OK(amq_alloc_min_cost(g, 3, 10.0 * n * 111, p, NULL));
        for (size_t i = 0; i < 3; i++) {
            if (p[i].spec[0] == '\0')
                continue;
            amq_filter *f = NULL;
            amq_diag d = {0};
            amq_status st =
                amq_filter_build(p[i].spec, h, n, p[i].fpr, NULL, &f, &d);
            CHECK_MSG(st == AMQ_OK, "%.60s: %s %.100s", p[i].spec,
                      amq_status_name(st), d.message);
            if (st != AMQ_OK)
                continue;
            double bpk = 8.0 * (double)amq_filter_size_bytes(f) / (double)n;
            /* xor/fuse curves are asymptotic: 10^5 keys pay ~6% more,
             * 2 10^4 keys ~9% */
            CHECK_MSG(fabs(bpk - p[i].bits_per_key) <=
                          slack * p[i].bits_per_key + 0.1,
                      "%.60s: built %.4f bits/key, promised %.4f", p[i].spec,
                      bpk, p[i].bits_per_key);
            double bound = amq_filter_fpr_bound(f);
            CHECK_MSG(
                bound <= p[i].fpr * 1.25 + 1e-12 && bound >= p[i].fpr * 0.5,
                "%.60s: bound %.4g, promised %.4g", p[i].spec, bound, p[i].fpr);
            amq_filter_free(f);
        }
        amq_alloc_curve_free(c);
    }
    free(h);
}

/* ---- the cascade and the shards ------------------------------------------ */

/* Eq. 6-7 of the cascade paper: at the optimum every interval with bits
 * has p_l c e^(-c m_l / n_l) / n_l = lambda, and the bound is met with
 * equality. */
static void test_cascade(void) {
    amq_alloc_curve *m = model(C_BLOOM);
    const double p[5] = {0.02, 0.05, 0.1, 0.3, 0.5};     /* non-member mass */
    const double n[5] = {50000, 20000, 8000, 2000, 100}; /* members */
    const double p0 = 0.001, eps = 0.004;
    amq_alloc_group g[5];
    amq_alloc_pick pk[5];
    amq_alloc_summary sum;
    check_seed = 21;
    for (size_t l = 0; l < 5; l++)
        g[l] = (amq_alloc_group){n[l], p[l], m};
    CHECK_OK(amq_alloc_min_memory(g, 5, p0, eps, pk, &sum));
    double bound = p0;
    for (size_t l = 0; l < 5; l++) {
        double ml = pk[l].bits_per_key * n[l];
        bound += p[l] * exp(-C_BLOOM * ml / n[l]);
        if (ml > 0) {
            double lhs = p[l] * exp(-C_BLOOM * ml / n[l]) * C_BLOOM / n[l];
            CHECK(fabs(lhs - sum.lambda) <= 1e-9 * sum.lambda);
            double eq7 =
                n[l] / C_BLOOM * log(p[l] * C_BLOOM / (sum.lambda * n[l]));
            CHECK(fabs(eq7 - ml) <= 1e-9 * ml);
        }
    }
    CHECK(fabs(bound - eps) <= 1e-12);
    /* real residual filters: the certified bound must hold for the picks */
    amq_alloc_curve *rb = spec_curve("blocked");
    for (size_t l = 0; l < 5; l++)
        g[l].curve = rb;
    CHECK_OK(amq_alloc_min_memory(g, 5, p0, eps, pk, &sum));
    CHECK(p0 + cost_of(g, pk, 5) <= eps * (1 + 1e-12));
    CHECK(sum.memory_bits >= sum.relaxed_memory * (1 - 1e-12));
    amq_alloc_curve_free(rb);
    amq_alloc_curve_free(m);
}

/* A shard's cascade summarised as a caller curve: eps(b) = a + (1-a) 2^-b/s
 * with a shard-specific floor a and efficiency s; sum w_m eps_m <= target. */
typedef struct shard {
    double floor, scale;
} shard;

static double shard_fpr(void *ctx, double b) {
    const shard *s = ctx;
    return s->floor + (1 - s->floor) * exp2(-b / s->scale);
}

static double shard_bits(void *ctx, double e) {
    const shard *s = ctx;
    double x = (e - s->floor) / (1 - s->floor);
    return x <= 0 ? 1e9 : -s->scale * log2(x);
}

static void test_shards(void) {
    shard sh[3] = {{0.0001, 1.2}, {0.001, 1.0}, {0.00001, 1.6}};
    amq_alloc_curve *c[3], *d[3];
    check_seed = 22;
    for (int i = 0; i < 3; i++) {
        amq_alloc_custom u = {.fpr = shard_fpr,
                              .ctx = &sh[i],
                              .max_bits = 40,
                              .label = "cascade"};
        CHECK_OK(amq_alloc_curve_custom(&u, NULL, &c[i]));
        amq_alloc_custom v = {.bits = shard_bits,
                              .ctx = &sh[i],
                              .max_bits = 40,
                              .samples = 4000,
                              .min_fpr = 1e-6};
        CHECK_OK(amq_alloc_curve_custom(&v, NULL, &d[i]));
        check_hull(c[i], "shard fpr");
        check_hull(d[i], "shard bits");
    }
    const double w[3] = {0.5, 0.3, 0.2}, keys[3] = {1e6, 3e5, 2e6};
    amq_alloc_group g[3], h[3];
    amq_alloc_pick p[3], q[3];
    amq_alloc_summary a, b;
    for (int i = 0; i < 3; i++) {
        g[i] = (amq_alloc_group){keys[i], w[i], c[i]};
        h[i] = (amq_alloc_group){keys[i], w[i], d[i]};
    }
    CHECK_OK(amq_alloc_min_memory(g, 3, 0, 0.002, p, &a));
    CHECK_OK(amq_alloc_min_memory(h, 3, 0, 0.002, q, &b));
    double total = 0;
    for (int i = 0; i < 3; i++) {
        total += w[i] * p[i].fpr;
        CHECK(strcmp(p[i].spec, "cascade") == 0);
        CHECK(strcmp(q[i].spec, "custom") == 0);
        /* the pick's rate is the curve's (interpolated within a step) */
        CHECK(fabs(p[i].fpr - shard_fpr(&sh[i], p[i].bits_per_key)) <=
              1e-3 * p[i].fpr);
    }
    CHECK(total <= 0.002 * (1 + 1e-12));
    /* both directions describe the same curves: the same memory */
    CHECK_MSG(fabs(a.memory_bits - b.memory_bits) <= 0.01 * a.memory_bits,
              "fpr direction %g, bits direction %g", a.memory_bits,
              b.memory_bits);
    for (int i = 0; i < 3; i++) {
        amq_alloc_curve_free(c[i]);
        amq_alloc_curve_free(d[i]);
    }
    amq_alloc_custom bad = {.fpr = shard_fpr, .bits = shard_bits};
    amq_alloc_curve *x = NULL;
    CHECK_STATUS(amq_alloc_curve_custom(&bad, NULL, &x), AMQ_ERR_INVALID);
    bad = (amq_alloc_custom){.fpr = shard_fpr, .ctx = &sh[0], .step = 1e-9};
    CHECK_STATUS(amq_alloc_curve_custom(&bad, NULL, &x), AMQ_ERR_INVALID);
    CHECK(x == NULL);
}

/* A discrete caller curve is rounded like a fingerprint width. */
static double steps(void *ctx, double b) {
    (void)ctx;
    return exp2(-floor(b));
}

static void test_discrete_custom(void) {
    amq_alloc_custom u = {.fpr = steps,
                          .max_bits = 30,
                          .step = 1,
                          .discrete = true,
                          .label = "steps"};
    amq_alloc_curve *c = NULL;
    check_seed = 23;
    CHECK_OK(amq_alloc_curve_custom(&u, NULL, &c));
    amq_alloc_group g[2] = {{100, 1, c}, {300, 0.5, c}};
    amq_alloc_pick p[2];
    amq_alloc_summary s;
    CHECK_OK(amq_alloc_min_cost(g, 2, 1234.5, p, &s));
    for (int i = 0; i < 2; i++)
        CHECK(p[i].bits_per_key == floor(p[i].bits_per_key) &&
              p[i].fpr == exp2(-p[i].bits_per_key));
    CHECK(memory_of(g, p, 2) <= 1234.5);
    amq_alloc_curve_free(c);
}

/* Model and step curves in one problem: the chord search holds fuse
 * groups while the model groups re-solve around them; the budget and the
 * rate must hold, and the model groups share one marginal gain. */
static void test_mixed(void) {
    amq_alloc_curve *m = model(C_BLOOM), *f = spec_curve("fuse"),
                    *b = spec_curve("sbbf");
    uint64_t s = check_seed = 25;
    for (int trial = 0; trial < 20; trial++) {
        amq_alloc_group g[9];
        amq_alloc_pick p[9];
        amq_alloc_summary sum;
        random_groups(g, 9, &s, m);
        for (int i = 3; i < 6; i++)
            g[i].curve = f;
        for (int i = 6; i < 9; i++)
            g[i].curve = b;
        double w = sum_weights(g, 9);
        double M = sum_keys(g, 9) * (4 + 16 * urand(&s));
        CHECK_OK(amq_alloc_min_cost(g, 9, M, p, &sum));
        CHECK_MSG(memory_of(g, p, 9) <= M * (1 + 1e-9), "trial %d: %g > %g",
                  trial, memory_of(g, p, 9), M);
        CHECK(sum.relaxed_cost <= sum.cost * (1 + 1e-4));
        double gain[3];
        for (int i = 0; i < 3; i++)
            gain[i] = p[i].bits_per_key > 0
                          ? g[i].weight * C_BLOOM * p[i].fpr / g[i].keys
                          : NAN;
        for (int i = 1; i < 3; i++)
            if (!isnan(gain[0]) && !isnan(gain[i]))
                CHECK_MSG(fabs(gain[i] / gain[0] - 1) < 1e-9,
                          "trial %d: model gains %g %g", trial, gain[0],
                          gain[i]);
        double eps = w * pow(10, -1 - 3 * urand(&s));
        CHECK_OK(amq_alloc_min_memory(g, 9, 0, eps, p, &sum));
        CHECK_MSG(cost_of(g, p, 9) <= eps * (1 + 1e-9), "trial %d: %g > %g",
                  trial, cost_of(g, p, 9), eps);
        CHECK(sum.memory_bits >= sum.relaxed_memory * (1 - 1e-4));
    }
    amq_alloc_curve_free(m);
    amq_alloc_curve_free(f);
    amq_alloc_curve_free(b);
}

/* ---- allocation failure -------------------------------------------------- */

typedef struct failing {
    unsigned long calls, fail_at, live;
} failing;

static void *f_alloc(void *ctx, size_t size) {
    failing *f = ctx;
    if (++f->calls == f->fail_at)
        return NULL;
    void *p = malloc(size);
    f->live += p != NULL;
    return p;
}
static void *f_realloc(void *ctx, void *p, size_t old, size_t size) {
    (void)ctx, (void)old;
    return realloc(p, size);
}
static void f_free(void *ctx, void *p, size_t size) {
    failing *f = ctx;
    (void)size;
    f->live -= p != NULL;
    free(p);
}

static void test_oom(void) {
    const char *specs[] = {"model", "bloom", "fuse", "cuckoo", "custom"};
    check_seed = 24;
    for (size_t k = 0; k < 5; k++) {
        for (unsigned long n = 1;; n++) {
            failing f = {0, n, 0};
            amq_allocator al = {f_alloc, f_realloc, f_free, &f};
            amq_options opt = {.allocator = &al};
            amq_alloc_curve *c = NULL;
            amq_status st;
            if (k == 0) {
                st = amq_alloc_curve_model(1.0, &opt, &c);
            } else if (k == 4) {
                amq_alloc_custom u = {.fpr = steps, .max_bits = 10};
                st = amq_alloc_curve_custom(&u, &opt, &c);
            } else {
                st = amq_alloc_curve_spec(specs[k], &opt, &c, NULL);
            }
            if (st == AMQ_OK) {
                amq_alloc_curve_free(c);
                CHECK(f.live == 0);
                CHECK(n > 1);
                break;
            }
            CHECK_MSG(st == AMQ_ERR_NOMEM && c == NULL && f.live == 0,
                      "%s, failing allocation %lu: %s, %lu live", specs[k], n,
                      amq_status_name(st), f.live);
            if (n > 200)
                break;
        }
    }
}

int main(void) {
    test_model_min_cost();
    test_model_min_memory();
    test_duality();
    test_brute_continuous();
    test_brute_discrete();
    test_monotone();
    test_degenerate();
    test_spec_errors();
    test_curves();
    test_picks_build();
    test_cascade();
    test_shards();
    test_discrete_custom();
    test_mixed();
    test_oom();
    return check_report("test_alloc");
}
