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
 *   - horizon=2 keeps every key of the last 2 x capacity adds, and has
 *     forgotten the oldest ones after 10 x;
 *   - the default (capacity, eps) design is the paper's: 2-bit cells, its
 *     stable FPR is eps and measured there after a long stream, and keys
 *     are kept at least as long as the decrement rate promises.
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

static void fill(amq_filter *f, uint64_t *rng, size_t n) {
    for (size_t i = 0; i < n; i++)
        CHECK_OK(amq_filter_add_hash(f, check_next(rng)));
}

static double measure(const amq_filter *f, uint64_t seed, size_t t) {
    uint64_t r = seed;
    size_t fp = 0;
    for (size_t i = 0; i < t; i++)
        fp += amq_filter_contains_hash(f, check_next(&r));
    return (double)fp / (double)t;
}

/* "stable:m=M,k=K,max=MAX,p=P": explicit, no capacity. */
static amq_status explicit_stable(uint64_t m, unsigned k, unsigned max,
                                  uint64_t p, amq_filter **out) {
    char spec[128];
    snprintf(spec, sizeof spec, "stable:m=%llu,k=%u,max=%u,p=%llu",
             (unsigned long long)m, k, max, (unsigned long long)p);
    return amq_filter_new(spec, 0, 0.0, NULL, out, NULL);
}

static void convergence_case(unsigned max, unsigned k, double target) {
    uint64_t m = check_quick() ? 8192 : 32768;
    size_t t = check_quick() ? 100000 : 400000;
    double p = round(amq_stable_p_for((double)m, k, max, target));
    amq_filter *f = NULL;
    check_seed = 100 + max;
    CHECK_OK(explicit_stable(m, k, max, (uint64_t)p, &f));
    if (f == NULL)
        return;
    double stable = amq_stable_fpr((double)m, k, max, p);
    double z = amq_stable_zero_fraction((double)m, k, max, p);
    uint64_t rng = check_seed;
    fill(f, &rng, (size_t)(20 * m));
    /* the exact bound tells the fill: (nonzero/m)^k */
    double nonzero = pow(amq_filter_fpr_bound(f), 1.0 / k);
    double zeros = 1 - nonzero;
    CHECK_MSG(fabs(zeros / z - 1) < 0.03,
              "max %u k %u p %g: zeros %g vs "
              "limit %g",
              max, k, p, zeros, z);
    double meas = measure(f, ~check_seed, t);
    double sigma = sqrt(stable * (1 - stable) / (double)t);
    CHECK_MSG(fabs(meas - stable) <= 0.10 * stable + 4 * sigma,
              "max %u k %u p %g: measured %g vs stable FPR %g", max, k, p, meas,
              stable);
    double bound = amq_filter_fpr_bound(f);
    CHECK_MSG(meas <= bound * 1.02 + 4 * sigma, "measured %g bound %g", meas,
              bound);
    /* ... and it stays there: another 5 m adds move it by little */
    fill(f, &rng, (size_t)(5 * m));
    double later = measure(f, check_seed * 3, t);
    CHECK_MSG(fabs(later - stable) <= 0.10 * stable + 4 * sigma,
              "drifted to %g from %g", later, stable);
    printf("stable max=%u k=%u p=%g m=%llu: stable FPR %.4f, measured %.4f "
           "(then %.4f), zeros %.4f vs %.4f\n",
           max, k, p, (unsigned long long)m, stable, meas, later, zeros, z);
    amq_filter_free(f);
}

static void test_convergence(void) {
    convergence_case(1, 3, 0.05);
    convergence_case(3, 4, 0.02);
    convergence_case(15, 4, 0.02);
    convergence_case(255, 5, 0.01);
}

/* The newest key always answers yes, even when each add wipes the array. */
static void test_last_key(void) {
    amq_filter *f = NULL;
    check_seed = 3;
    CHECK_OK(explicit_stable(128, 4, 1, 128, &f));
    if (f == NULL)
        return;
    uint64_t r = 3;
    size_t bad = 0;
    for (int i = 0; i < 10000; i++) {
        uint64_t h = check_next(&r);
        CHECK_OK(amq_filter_add_hash(f, h));
        bad += !amq_filter_contains_hash(f, h);
        /* p = m: everything else was decremented to 0 first */
        bad += amq_filter_fpr_bound(f) > pow(4.0 / 128, 4) + 1e-15;
    }
    CHECK_MSG(bad == 0, "%zu misses of the newest key", bad);
    amq_filter_free(f);
    f = NULL;
    CHECK_STATUS(explicit_stable(128, 4, 1, 129, &f), AMQ_ERR_SPEC);
    CHECK_STATUS(explicit_stable(128, 4, 256, 1, &f), AMQ_ERR_SPEC);
    CHECK_STATUS(explicit_stable(128, 0, 3, 1, &f), AMQ_ERR_SPEC);
    CHECK(f == NULL);
}

/* horizon=2: nothing lost within 2n adds, the old forgotten later, memory
 * fixed (8-bit cells). */
static void test_horizon(void) {
    const size_t n = check_quick() ? 2000 : 10000;
    amq_filter *f = NULL;
    check_seed = 5;
    CHECK_OK(amq_filter_new("stable:horizon=2", n, 0.01, NULL, &f, NULL));
    if (f == NULL)
        return;
    char shape[128];
    amq_filter_describe(f, shape, sizeof shape);
    CHECK_MSG(strstr(shape, ",max=255,") != NULL, "%s", shape);
    size_t bytes = amq_filter_size_bytes(f);
    uint64_t *keys = malloc(12 * n * sizeof *keys), r = 5;
    if (keys == NULL) {
        amq_filter_free(f);
        return;
    }
    size_t worst = 0;
    for (size_t i = 0; i < 12 * n; i++) {
        keys[i] = check_next(&r);
        CHECK_OK(amq_filter_add_hash(f, keys[i]));
        if ((i + 1) % (n / 2) == 0) {
            size_t from = i + 1 > 2 * n ? i + 1 - 2 * n : 0, miss = 0;
            for (size_t j = from; j <= i; j++)
                miss += !amq_filter_contains_hash(f, keys[j]);
            if (miss > worst)
                worst = miss;
        }
    }
    CHECK_MSG(worst == 0, "%zu of the last 2n keys missing", worst);
    size_t old = 0;
    for (size_t j = 0; j < n; j++)
        old += amq_filter_contains_hash(f, keys[j]);
    /* 12n adds later the first n keys are mostly gone; what still answers
     * yes does so at about the stable FPR, which the bound tracks. */
    double bound = amq_filter_fpr_bound(f);
    CHECK_MSG((double)old <= (bound * 1.2 + 0.02) * (double)n,
              "%zu of %zu old keys remain (bound %g)", old, n, bound);
    CHECK(amq_filter_size_bytes(f) == bytes);
    CHECK(amq_filter_items(f) == 12 * n);
    printf("stable horizon=2 n=%zu eps=0.01: %s, %zu/%zu of the oldest keys "
           "still reported\n",
           n, shape, old, n);
    free(keys);
    amq_filter_free(f);
}

/* P(Poisson(lambda) < t). */
static double pois_below(double lambda, unsigned t) {
    double term = exp(-lambda), sum = 0;
    for (unsigned i = 0; i < t; i++) {
        sum += term;
        term *= lambda / (double)(i + 1);
    }
    return sum;
}

/* The default (capacity n, eps) design is the paper's: 2-bit cells (max 3,
 * a quarter of an 8-bit design's memory), cells and k as a Bloom filter's,
 * and p chosen so the stable FPR is eps. After a long stream the measured
 * rate sits at eps; a key of age a (adds since it) is still reported at
 * least with probability P(Poisson(a p / m) < 3)^k (its cells are
 * decremented p/m per add; being set again by later keys only helps). */
static void test_default_design(void) {
    const size_t n = check_quick() ? 4000 : 20000;
    amq_filter *f = NULL;
    check_seed = 7;
    CHECK_OK(amq_filter_new("stable", n, 0.01, NULL, &f, NULL));
    const amq_stable *s = amq_stable_of(f);
    if (s == NULL) {
        amq_filter_free(f);
        return;
    }
    uint64_t m = amq_stable_cells(s), p = amq_stable_p(s);
    unsigned k = amq_stable_k(s);
    CHECK(amq_stable_max(s) == 3);
    double stable = amq_stable_fpr((double)m, k, 3, (double)p);
    CHECK_MSG(stable <= 0.01 && stable > 0.009,
              "stable FPR %g for eps 0.01 "
              "(p rounded up to %llu)",
              stable, (unsigned long long)p);
    const size_t total = 20 * n, window = n / 10;
    uint64_t *keys = malloc(total * sizeof *keys), r = 7;
    if (keys == NULL) {
        amq_filter_free(f);
        return;
    }
    for (size_t i = 0; i < total; i++) {
        keys[i] = check_next(&r);
        CHECK_OK(amq_filter_add_hash(f, keys[i]));
    }
    CHECK(amq_filter_contains_hash(f, keys[total - 1]));
    /* Retention by age, in ten bands of the last n adds. */
    for (size_t band = 0; band < 10; band++) {
        size_t kept = 0;
        for (size_t a = band * window; a < (band + 1) * window; a++)
            kept += amq_filter_contains_hash(f, keys[total - 1 - a]);
        double age = ((double)band + 1) * (double)window;
        double floor_p = pow(pois_below(age * (double)p / (double)m, 3), k);
        double w = (double)window, got = (double)kept / w;
        CHECK_MSG(got >=
                      floor_p - 4 * sqrt(floor_p * (1 - floor_p) / w) - 1.0 / w,
                  "age < %.0f: %.3f kept, floor %.3f", age, got, floor_p);
    }
    /* The rate for keys never added, at the stable point. */
    size_t fp = 0, trials = check_quick() ? 100000 : 400000;
    for (size_t i = 0; i < trials; i++)
        fp += amq_filter_contains_hash(f, check_next(&r));
    double meas = (double)fp / (double)trials, t = (double)trials;
    CHECK_MSG(fabs(meas - stable) <=
                  0.10 * stable + 4 * sqrt(stable * (1 - stable) / t),
              "measured %g, stable FPR %g", meas, stable);
    CHECK(meas <= amq_filter_fpr_bound(f) * 1.1 + 4 * sqrt(stable / t));
    printf("stable default n=%zu eps=0.01: m=%llu (2-bit cells, %.2f bits "
           "per key) k=%u p=%llu, stable FPR %.4f, measured %.4f\n",
           n, (unsigned long long)m, 2.0 * (double)m / (double)n, k,
           (unsigned long long)p, stable, meas);
    free(keys);
    amq_filter_free(f);
}

static void test_generic(void) {
    amq_filter *f = NULL;
    char buf[128];
    check_seed = 6;
    CHECK_OK(amq_filter_new("stable:m=10000,k=3,max=3,stable=0.05", 0, 0.0,
                            NULL, &f, NULL));
    if (f != NULL) {
        amq_filter_describe(f, buf, sizeof buf);
        double p = ceil(amq_stable_p_for(10048, 3, 3, 0.05));
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
    CHECK_STATUS(
        amq_filter_new("stable:p=3,stable=0.1", 100, 0.01, NULL, &f, &d),
        AMQ_ERR_SPEC);
    CHECK_STATUS(amq_filter_new("stable:m=64,p=65", 0, 0.0, NULL, &f, &d),
                 AMQ_ERR_SPEC);
    CHECK_OK(amq_filter_new("stable:max=1", 1000, 0.01, NULL, &f, &d));
    if (f != NULL) /* 1-bit cells: a Bloom filter's size */
        CHECK_MSG(amq_filter_size_bytes(f) * 8 < 9700, "%zu bytes",
                  amq_filter_size_bytes(f));
    amq_filter_free(f);
}

int main(void) {
    test_formulas();
    test_convergence();
    test_last_key();
    test_horizon();
    test_default_design();
    test_generic();
    return check_report("test_stable");
}
