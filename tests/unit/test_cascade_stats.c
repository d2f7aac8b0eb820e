/*
 * test_cascade_stats.c — every formula under the cascade's bound and
 * thresholds, checked numerically (src/learned/stats.c, partition.c,
 * calib.c):
 *
 *   - I_x(a, b) against its closed forms (a or b = 1), the symmetry, and
 *     binomial tails summed term by term;
 *   - Q(a, x) against e^-x and Poisson sums; χ² survival with df = 2;
 *   - Clopper-Pearson limits: the defining tail equals α, the k = 0 and
 *     k = n closed forms, and coverage >= 1 - α on simulated draws;
 *   - the partition DP against brute force over every cut of small random
 *     histograms, for every right end and interval count;
 *   - bins: edges increase, a score's bin matches a linear scan, and
 *     quantile bins split an even mixture evenly;
 *   - isotonic regression (monotone output, pooling of a violation,
 *     identity on sorted data) and Platt scaling (recovers a known
 *     logistic link).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "learned/learned.h"

static double binom_cdf(uint64_t k, uint64_t n, double p) {
    double s = 0.0;
    for (uint64_t i = 0; i <= k; i++)
        s += exp(lgamma(n + 1.0) - lgamma(i + 1.0) - lgamma(n - i + 1.0) +
                 i * log(p) + (n - i) * log1p(-p));
    return s;
}

static bool close_rel(double a, double b, double tol) {
    return fabs(a - b) <= tol * fmax(fabs(b), 1e-300);
}

static void test_ibeta(void) {
    for (double x = 0.05; x < 1.0; x += 0.1) {
        CHECK(close_rel(amq__ibeta(x, 1, 1), x, 1e-12));
        CHECK(close_rel(amq__ibeta(x, 3.5, 1), pow(x, 3.5), 1e-12));
        CHECK(close_rel(amq__ibeta(x, 1, 7), 1 - pow(1 - x, 7), 1e-12));
        CHECK(close_rel(amq__ibeta(x, 2.5, 9.0),
                        1 - amq__ibeta(1 - x, 9.0, 2.5), 1e-10));
    }
    const uint64_t ns[] = {5, 40, 300};
    for (size_t t = 0; t < 3; t++)
        for (uint64_t k = 0; k < ns[t]; k += 1 + ns[t] / 7)
            for (double p = 0.01; p < 1.0; p += 0.17) {
                double want = binom_cdf(k, ns[t], p);
                double got = amq__ibeta(1 - p, (double)(ns[t] - k), k + 1.0);
                CHECK_MSG(fabs(got - want) <= 1e-11 + 1e-9 * want,
                          "n=%llu k=%llu p=%g: %.15g vs %.15g",
                          (unsigned long long)ns[t], (unsigned long long)k, p,
                          got, want);
            }
}

static void test_gamma(void) {
    for (double x = 0.1; x < 30; x *= 1.7) {
        CHECK(close_rel(amq__gammaq(1.0, x), exp(-x), 1e-12));
        CHECK(close_rel(amq__chi2_sf(x, 2.0), exp(-x / 2), 1e-12));
        for (int a = 2; a <= 12; a += 5) {
            double s = 0.0, term = 1.0;
            for (int i = 0; i < a; i++) {
                s += term;
                term *= x / (i + 1);
            }
            CHECK(close_rel(amq__gammaq(a, x), s * exp(-x), 1e-10));
        }
    }
}

static void test_clopper_pearson(void) {
    const double alphas[] = {0.05, 1e-3, 1e-6};
    for (size_t t = 0; t < 3; t++) {
        double a = alphas[t];
        for (uint64_t n = 10; n <= 100000; n *= 10) {
            CHECK(close_rel(amq__cp_upper(0, n, a), 1 - pow(a, 1.0 / n), 1e-9));
            CHECK(close_rel(amq__cp_lower(n, n, a), pow(a, 1.0 / n), 1e-9));
            CHECK(amq__cp_upper(n, n, a) == 1.0 &&
                  amq__cp_lower(0, n, a) == 0.0);
            for (uint64_t k = 1; k < n && n <= 1000; k += n / 5) {
                double u = amq__cp_upper(k, n, a), l = amq__cp_lower(k, n, a);
                CHECK_MSG(close_rel(binom_cdf(k, n, u), a, 1e-6),
                          "upper n=%llu k=%llu", (unsigned long long)n,
                          (unsigned long long)k);
                CHECK(close_rel(1 - binom_cdf(k - 1, n, l), a, 1e-6));
                CHECK(l < (double)k / n && (double)k / n < u);
            }
        }
    }
    /* coverage on simulated draws: the limit misses p in <= ~α of runs */
    uint64_t s = check_seed = 11;
    const double p = 0.02, alpha = 0.05;
    int misses = 0, runs = 2000;
    for (int r = 0; r < runs; r++) {
        uint64_t k = 0, n = 500;
        for (uint64_t i = 0; i < n; i++)
            k += (check_next(&s) >> 11) * 0x1p-53 < p;
        misses += amq__cp_upper(k, n, alpha) < p;
    }
    CHECK_MSG(misses <= runs * alpha * 1.3, "misses %d of %d", misses, runs);
}

/* Brute force: best Σ G ln(G/H) over every cut of [lo, j) into k. */
static double brute(const double *cg, const double *ch, uint32_t lo, uint32_t j,
                    uint32_t k) {
    if (k == 1) {
        double g = cg[j] - cg[lo], h = ch[j] - ch[lo];
        return g > 0 ? g * log(g / h) : 0.0;
    }
    double best = -INFINITY;
    for (uint32_t i = lo + 1; i + k - 1 <= j; i++) {
        double g = cg[i] - cg[lo], h = ch[i] - ch[lo];
        double v = (g > 0 ? g * log(g / h) : 0.0) + brute(cg, ch, i, j, k - 1);
        best = fmax(best, v);
    }
    return best;
}

static void test_dp(void) {
    amq__mem mem;
    amq__mem_init(&mem, NULL);
    uint64_t s = check_seed = 5;
    for (int trial = 0; trial < 30; trial++) {
        enum { B = 10 };
        double cg[B + 1] = {0}, ch[B + 1] = {0};
        for (int b = 0; b < B; b++) {
            cg[b + 1] = cg[b] + (check_next(&s) % 4 == 0
                                     ? 0.0
                                     : (check_next(&s) % 100) / 100.0);
            ch[b + 1] = ch[b] + 0.01 + (check_next(&s) % 100) / 100.0;
        }
        uint32_t lo = trial % 3;
        amq__dp dp;
        CHECK_OK(amq__dp_run(&dp, &mem, cg, ch, lo, B, 5));
        for (uint32_t j = lo + 1; j <= B; j++)
            for (uint32_t k = 1; k <= 5 && lo + k <= j; k++) {
                uint32_t cuts[6];
                CHECK(amq__dp_cut(&dp, j, k, cuts));
                double v = 0.0;
                for (uint32_t r = 0; r < k; r++) {
                    CHECK(cuts[r + 1] > cuts[r]);
                    double g = cg[cuts[r + 1]] - cg[cuts[r]];
                    double h = ch[cuts[r + 1]] - ch[cuts[r]];
                    v += g > 0 ? g * log(g / h) : 0.0;
                }
                double want = brute(cg, ch, lo, j, k);
                CHECK_MSG(fabs(v - want) < 1e-12, "j=%u k=%u %g vs %g", j, k, v,
                          want);
            }
        amq__dp_free(&dp, &mem);
    }
    /* equal cuts: non-empty, balanced to within one bin's share */
    double c[101];
    for (int i = 0; i <= 100; i++)
        c[i] = i;
    uint32_t cuts[5];
    CHECK(amq__equal_cut(c, 0, 100, 4, cuts));
    CHECK(cuts[1] == 25 && cuts[2] == 50 && cuts[3] == 75 && cuts[4] == 100);
    CHECK(!amq__equal_cut(c, 0, 3, 4, cuts));
}

static void test_bins(void) {
    amq__mem mem;
    amq__mem_init(&mem, NULL);
    uint64_t s = check_seed = 9;
    enum { N = 20000, B = 64 };
    double *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
    double edges[B];
    for (int i = 0; i < N; i++) {
        a[i] = 3.0 + (check_next(&s) >> 11) * 0x1p-53; /* members high */
        b[i] = (check_next(&s) >> 11) * 0x1p-53 * 4.0; /* overlapping */
    }
    uint32_t bins = 0;
    CHECK_OK(amq__bin_edges(&mem, a, N, b, N, B, edges, &bins));
    CHECK(bins == B);
    for (uint32_t e = 1; e + 1 < bins; e++)
        CHECK(edges[e] > edges[e - 1]);
    uint32_t count[B] = {0};
    for (int i = 0; i < N; i++) {
        uint32_t ba = amq__bin_of(edges, bins, a[i]);
        uint32_t lin = 0;
        while (lin + 1 < bins && edges[lin] <= a[i])
            lin++;
        CHECK(ba == lin);
        count[ba]++;
        count[amq__bin_of(edges, bins, b[i])]++;
    }
    for (uint32_t k = 0; k < bins; k++)
        CHECK_MSG(abs((int)count[k] - 2 * N / B) <= 3, "bin %u: %u", k,
                  count[k]);
    /* few distinct scores: fewer bins */
    double few[6] = {1, 1, 2, 2, 3, 3};
    CHECK_OK(amq__bin_edges(&mem, few, 6, few, 6, B, edges, &bins));
    CHECK(bins == 3 && edges[0] == 1.5 && edges[1] == 2.5);
    free(a);
    free(b);
}

static void test_calibration(void) {
    double x[6] = {1, 2, 3, 4, 5, 6}, y[6] = {0, 1, 0, 1, 1, 1};
    double ox[6], op[6], wt[6];
    size_t n = amq__isotonic(x, y, 6, ox, op, wt);
    CHECK(n == 3 && op[0] == 0.0 && op[1] == 0.5 && op[2] == 1.0);
    CHECK(ox[0] == 1 && ox[1] == 2 && ox[2] == 4);
    double ys[6] = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6};
    CHECK(amq__isotonic(x, ys, 6, ox, op, wt) == 6 && op[5] == 0.6);
    /* Platt recovers a logistic link p = σ(2 z - 1) */
    amq__mem mem;
    amq__mem_init(&mem, NULL);
    uint64_t s = check_seed = 3;
    enum { N = 40000 };
    double *pos = malloc(N * sizeof *pos), *neg = malloc(N * sizeof *neg);
    size_t np = 0, nn = 0;
    for (int i = 0; i < N; i++) {
        double z = ((check_next(&s) >> 11) * 0x1p-53 - 0.5) * 8;
        double p = 1 / (1 + exp(-(2 * z - 1)));
        if ((check_next(&s) >> 11) * 0x1p-53 < p)
            pos[np++] = z;
        else
            neg[nn++] = z;
    }
    double a, b;
    CHECK_OK(amq__platt(&mem, pos, np, neg, nn, &a, &b));
    CHECK_MSG(fabs(a - 2) < 0.1 && fabs(b + 1) < 0.1, "a=%g b=%g", a, b);
    /* AUC against the pairwise definition (ties one half) */
    size_t mp = np < 1500 ? np : 1500, mn = nn < 1500 ? nn : 1500;
    for (size_t i = 0; i < mp; i++)
        pos[i] = floor(pos[i] * 20) / 20; /* make ties */
    double pairs = 0.0, auc;
    for (size_t i = 0; i < mp; i++)
        for (size_t j = 0; j < mn; j++)
            pairs += pos[i] > neg[j] ? 1.0 : (pos[i] == neg[j] ? 0.5 : 0.0);
    CHECK_OK(amq__auc(&mem, pos, mp, neg, mn, &auc));
    CHECK_MSG(fabs(auc - pairs / ((double)mp * mn)) < 1e-12, "%g", auc);
    double tied[2] = {1, 1};
    CHECK_OK(amq__auc(&mem, tied, 1, tied + 1, 1, &auc));
    CHECK(auc == 0.5);
    free(pos);
    free(neg);
}

int main(void) {
    test_ibeta();
    test_gamma();
    test_clopper_pearson();
    test_dp();
    test_bins();
    test_calibration();
    return check_report("test_cascade_stats");
}
