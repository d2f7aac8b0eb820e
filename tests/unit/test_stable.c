/*
 * test_stable.c — the stable Bloom filter on an endless stream.
 *
 *   - the stable-point formulas: p_for inverts fpr; the limit fraction of
 *     zero cells matches a direct Markov-chain iteration of one cell;
 *   - convergence: after 20 x m adds of distinct keys, the measured fraction
 *     of zero cells is within 3% (relative) of the paper's limit and the
 *     measured FPR within 10% of the stable FPR, for 1-, 2-, 4- and 8-bit
 *     cells; memory never changes; the certified bound (nonzero/m)^k is
 *     above the measured rate;
 *   - the most recent key is always found (every add, even with P = m);
 *   - the default (capacity, eps) design keeps every key of the last
 *     2 x capacity adds, and has forgotten the oldest ones after 10 x.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static void test_formulas(void) {
    check_seed = 1;
    static const unsigned maxes[] = {1, 3, 15, 255};
    for (size_t i = 0; i < 4; i++) {
        for (double eps = 0.3; eps > 1e-4; eps /= 3) {
            double p = amq_stable_p_for(100000, 4, maxes[i], eps);
            double back = amq_stable_fpr(100000, 4, maxes[i], p);
            CHECK_MSG(p > 0 && fabs(back / eps - 1) < 1e-9,
                      "max %u eps %g: p %g gives %g", maxes[i], eps, p, back);
        }
    }
    /* The limit against the chain of one cell: per add, set with
     * probability s = 1 - (1 - 1/m)^k, else decremented with probability
     * P/m. Iterate the distribution of its value to convergence. */
    const double m = 4096, pp = 37;
    const unsigned k = 3, max = 3;
    double dist[4] = {1, 0, 0, 0}, set = 1 - pow(1 - 1 / m, k), dec = pp / m;
    for (int it = 0; it < 200000; it++) {
        double nd[4] = {0, 0, 0, 0};
        for (unsigned v = 0; v <= max; v++) {
            nd[max] += dist[v] * set;
            double keep = dist[v] * (1 - set);
            nd[v > 0 ? v - 1 : 0] += keep * dec;
            nd[v] += keep * (1 - dec);
        }
        memcpy(dist, nd, sizeof dist);
    }
    double z = amq_stable_zero_fraction(m, k, max, pp);
    CHECK_MSG(fabs(dist[0] / z - 1) < 0.01, "chain %g vs formula %g", dist[0],
              z);
}

static void fill(amq_stable *s, uint64_t *rng, size_t n) {
    for (size_t i = 0; i < n; i++)
        amq_stable_add_hash(s, check_next(rng));
}

static double measure(const amq_stable *s, uint64_t seed, size_t t) {
    uint64_t r = seed;
    size_t fp = 0;
    for (size_t i = 0; i < t; i++)
        fp += amq_stable_contains_hash(s, check_next(&r));
    return (double)fp / (double)t;
}

static void convergence_case(unsigned max, unsigned k, double target) {
    uint64_t m = check_quick() ? 8192 : 32768;
    size_t t = check_quick() ? 100000 : 400000;
    double p = round(amq_stable_p_for((double)m, k, max, target));
    amq_stable *s = NULL;
    check_seed = 100 + max;
    CHECK_OK(amq_stable_new_explicit(m, k, max, (uint64_t)p, NULL, &s));
    if (s == NULL)
        return;
    double stable = amq_stable_fpr((double)m, k, max, p);
    double z = amq_stable_zero_fraction((double)m, k, max, p);
    uint64_t rng = check_seed;
    fill(s, &rng, (size_t)(20 * m));
    /* the exact bound tells the fill: (nonzero/m)^k */
    double nonzero = pow(amq_stable_fpr_bound(s), 1.0 / k);
    double zeros = 1 - nonzero;
    CHECK_MSG(fabs(zeros / z - 1) < 0.03, "max %u k %u p %g: zeros %g vs "
              "limit %g", max, k, p, zeros, z);
    double meas = measure(s, ~check_seed, t);
    double sigma = sqrt(stable * (1 - stable) / (double)t);
    CHECK_MSG(fabs(meas - stable) <= 0.10 * stable + 4 * sigma,
              "max %u k %u p %g: measured %g vs stable FPR %g", max, k, p,
              meas, stable);
    double bound = amq_stable_fpr_bound(s);
    CHECK_MSG(meas <= bound * 1.02 + 4 * sigma, "measured %g bound %g", meas,
              bound);
    /* ... and it stays there: another 5 m adds move it by little */
    fill(s, &rng, (size_t)(5 * m));
    double later = measure(s, check_seed * 3, t);
    CHECK_MSG(fabs(later - stable) <= 0.10 * stable + 4 * sigma,
              "drifted to %g from %g", later, stable);
    printf("stable max=%u k=%u p=%g m=%llu: stable FPR %.4f, measured %.4f "
           "(then %.4f), zeros %.4f vs %.4f\n",
           max, k, p, (unsigned long long)m, stable, meas, later, zeros, z);
    amq_stable_free(s);
}

static void test_convergence(void) {
    convergence_case(1, 3, 0.05);
    convergence_case(3, 4, 0.02);
    convergence_case(15, 4, 0.02);
    convergence_case(255, 5, 0.01);
}

/* The newest key always answers yes, even when each add wipes the array. */
static void test_last_key(void) {
    amq_stable *s = NULL;
    check_seed = 3;
    CHECK_OK(amq_stable_new_explicit(128, 4, 1, 128, NULL, &s));
    if (s == NULL)
        return;
    uint64_t r = 3;
    size_t bad = 0;
    for (int i = 0; i < 10000; i++) {
        uint64_t h = check_next(&r);
        amq_stable_add_hash(s, h);
        bad += !amq_stable_contains_hash(s, h);
        /* p = m: everything else was decremented to 0 first */
        bad += amq_stable_fpr_bound(s) > pow(4.0 / 128, 4) + 1e-15;
    }
    CHECK_MSG(bad == 0, "%zu misses of the newest key", bad);
    amq_stable_free(s);
    CHECK_STATUS(amq_stable_new_explicit(128, 4, 1, 129, NULL, &s),
                 AMQ_ERR_INVALID);
    CHECK_STATUS(amq_stable_new_explicit(128, 4, 256, 1, NULL, &s),
                 AMQ_ERR_INVALID);
    CHECK_STATUS(amq_stable_new_explicit(128, 0, 3, 1, NULL, &s),
                 AMQ_ERR_INVALID);
}

/* The default design: nothing lost within 2n adds, the old forgotten
 * later, memory fixed. */
static void test_default_horizon(void) {
    const size_t n = check_quick() ? 2000 : 10000;
    amq_stable *s = NULL;
    check_seed = 5;
    CHECK_OK(amq_stable_new(n, 0.01, NULL, &s));
    if (s == NULL)
        return;
    CHECK(amq_stable_max(s) == 255);
    size_t bytes = (size_t)amq_stable_cells(s);
    uint64_t *keys = malloc(12 * n * sizeof *keys), r = 5;
    if (keys == NULL) {
        amq_stable_free(s);
        return;
    }
    size_t worst = 0;
    for (size_t i = 0; i < 12 * n; i++) {
        keys[i] = check_next(&r);
        amq_stable_add_hash(s, keys[i]);
        if ((i + 1) % (n / 2) == 0) {
            size_t from = i + 1 > 2 * n ? i + 1 - 2 * n : 0, miss = 0;
            for (size_t j = from; j <= i; j++)
                miss += !amq_stable_contains_hash(s, keys[j]);
            if (miss > worst)
                worst = miss;
        }
    }
    CHECK_MSG(worst == 0, "%zu of the last 2n keys missing", worst);
    size_t old = 0;
    for (size_t j = 0; j < n; j++)
        old += amq_stable_contains_hash(s, keys[j]);
    /* 12n adds later the first n keys are mostly gone; what still answers
     * yes does so at about the stable FPR */
    double stable = amq_stable_fpr((double)amq_stable_cells(s),
                                   amq_stable_k(s), 255,
                                   (double)amq_stable_p(s));
    CHECK_MSG((double)old <= (stable * 1.2 + 0.02) * (double)n,
              "%zu of %zu old keys remain (stable FPR %g)", old, n, stable);
    CHECK(amq_stable_cells(s) == bytes); /* cells of 8 bits: m bytes */
    CHECK(amq_stable_items(s) == 12 * n);
    printf("stable default n=%zu eps=0.01: m=%llu k=%u p=%llu, stable FPR "
           "%.3f, %zu/%zu of the oldest keys still reported\n",
           n, (unsigned long long)amq_stable_cells(s), amq_stable_k(s),
           (unsigned long long)amq_stable_p(s), stable, old, n);
    free(keys);
    amq_stable_free(s);
}

static void test_generic(void) {
    amq_filter *f = NULL;
    char buf[128];
    check_seed = 6;
    CHECK_OK(amq_filter_new("stable:m=10000,k=3,max=3,stable=0.05", 0, 0.0,
                            NULL, &f, NULL));
    if (f != NULL) {
        amq_filter_describe(f, buf, sizeof buf);
        double p = round(amq_stable_p_for(10048, 3, 3, 0.05));
        char want[128];
        snprintf(want, sizeof want, "stable:m=10048,k=3,max=3,p=%.0f", p);
        CHECK_MSG(strcmp(buf, want) == 0, "%.60s vs %.60s", buf, want);
        CHECK(amq_filter_size_bytes(f) == 10048 / 4); /* 2-bit cells */
        /* memory never grows */
        for (uint64_t i = 0; i < 100000; i++)
            CHECK_OK(amq_filter_add_hash(f, i * 0x9e3779b97f4a7c15ULL));
        CHECK(amq_filter_size_bytes(f) == 10048 / 4);
    }
    amq_filter_free(f);
    amq_diag d;
    memset(&d, 0, sizeof d);
    CHECK_STATUS(amq_filter_new("stable:m=1000", 0, 0.0, NULL, &f, &d),
                 AMQ_ERR_SPEC);
    CHECK_STATUS(amq_filter_new("stable:p=3,stable=0.1", 100, 0.01, NULL, &f,
                                &d),
                 AMQ_ERR_SPEC);
    CHECK_STATUS(amq_filter_new("stable:m=64,p=65", 0, 0.0, NULL, &f, &d),
                 AMQ_ERR_SPEC);
    CHECK_OK(amq_filter_new("stable:max=1", 1000, 0.01, NULL, &f, &d));
    if (f != NULL) /* 1-bit cells: a Bloom filter's size */
        CHECK_MSG(amq_filter_size_bytes(f) * 8 < 9700,
                  "%zu bytes", amq_filter_size_bytes(f));
    amq_filter_free(f);
}

int main(void) {
    test_formulas();
    test_convergence();
    test_last_key();
    test_default_horizon();
    test_generic();
    return check_report("test_stable");
}
