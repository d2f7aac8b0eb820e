/*
 * stats.c — the few special functions the certified bound and the audits
 * need, written from their textbook definitions.
 *
 *   I_x(a, b)  regularised incomplete beta, by its continued fraction
 *              (evaluated with the modified Lentz method) on the side of
 *              x where it converges fast, and the symmetry
 *              I_x(a, b) = 1 - I_{1-x}(b, a) on the other;
 *   Q(a, x)    regularised upper incomplete gamma: the power series of
 *              P = 1 - Q below x = a + 1, the continued fraction of Q
 *              above;
 *   Clopper-Pearson: with K ~ Bin(n, p), P(K <= k) = I_{1-p}(n - k, k + 1)
 *              and P(K >= k) = I_p(k, n - k + 1). The one-sided upper
 *              limit at confidence 1 - α is the p where P(K <= k) = α, the
 *              lower limit the p where P(K >= k) = α; both found by
 *              bisection on the monotone tail (60+ halvings: below 1e-17
 *              absolute). Solving on the tail that equals α, never on
 *              1 - α, keeps full relative precision for α ~ 1e-6.
 *   χ² survival P(X > x) = Q(df / 2, x / 2).
 *
 * tests/unit/test_cascade_stats.c checks each against closed forms and
 * direct binomial sums.
 */
#include <math.h>

#include "learned/learned.h"

#define CF_ITER 400
#define CF_EPS 1e-15
#define TINY 1e-300

/* Continued fraction of the incomplete beta (modified Lentz). */
static double beta_cf(double x, double a, double b) {
    double c = 1.0, d = 1.0 - (a + b) * x / (a + 1.0);
    if (fabs(d) < TINY)
        d = TINY;
    d = 1.0 / d;
    double f = d;
    for (int m = 1; m <= CF_ITER; m++) {
        double m2 = 2.0 * m;
        /* even step: m (b - m) x / ((a + 2m - 1)(a + 2m)) */
        double num = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2));
        d = 1.0 + num * d;
        c = 1.0 + num / c;
        d = fabs(d) < TINY ? 1.0 / TINY : 1.0 / d;
        if (fabs(c) < TINY)
            c = TINY;
        f *= d * c;
        /* odd step: -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)) */
        num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0));
        d = 1.0 + num * d;
        c = 1.0 + num / c;
        d = fabs(d) < TINY ? 1.0 / TINY : 1.0 / d;
        if (fabs(c) < TINY)
            c = TINY;
        double step = d * c;
        f *= step;
        if (fabs(step - 1.0) < CF_EPS)
            break;
    }
    return f;
}

double amq__ibeta(double x, double a, double b) {
    if (x <= 0.0)
        return 0.0;
    if (x >= 1.0)
        return 1.0;
    double ln_front =
        lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
    double front = exp(ln_front);
    if (x < (a + 1.0) / (a + b + 2.0))
        return front * beta_cf(x, a, b) / a;
    return 1.0 - front * beta_cf(1.0 - x, b, a) / b;
}

double amq__gammaq(double a, double x) {
    if (x <= 0.0)
        return 1.0;
    double ln_front = a * log(x) - x - lgamma(a);
    if (x < a + 1.0) {
        /* P(a, x) = e^-x x^a / Γ(a + 1) Σ_n x^n / ((a + 1) ... (a + n)) */
        double term = 1.0 / a, sum = term;
        for (int n = 1; n <= CF_ITER; n++) {
            term *= x / (a + n);
            sum += term;
            if (fabs(term) < fabs(sum) * CF_EPS)
                break;
        }
        return 1.0 - sum * exp(ln_front);
    }
    /* Q(a, x) = e^-x x^a / Γ(a) · 1 / (x + 1 - a - 1(1-a)/(x + 3 - a - ...)) */
    double b = x + 1.0 - a, c = 1.0 / TINY, d = 1.0 / b, f = d;
    for (int n = 1; n <= CF_ITER; n++) {
        double an = -n * (n - a);
        b += 2.0;
        d = an * d + b;
        if (fabs(d) < TINY)
            d = TINY;
        c = b + an / c;
        if (fabs(c) < TINY)
            c = TINY;
        d = 1.0 / d;
        double step = d * c;
        f *= step;
        if (fabs(step - 1.0) < CF_EPS)
            break;
    }
    return exp(ln_front) * f;
}

/* Bracket [lo, hi] around the p where g(p) (or g(1 - p) with complement)
 * equals target, narrowed by bisection to a relative width of 1e-14; g is
 * increasing in p when rising. Returns the end the caller asks for, so a
 * limit is never on the optimistic side of the root. */
static double bisect(double (*g)(double, double, double), double ga, double gb,
                     double target, bool rising, double lo, double hi,
                     bool complement, bool want_hi) {
    for (int i = 0; i < 200 && hi - lo > 1e-14 * hi; i++) {
        double mid = 0.5 * (lo + hi);
        double v = g(complement ? 1.0 - mid : mid, ga, gb);
        if ((v < target) == rising)
            lo = mid;
        else
            hi = mid;
    }
    return want_hi ? hi : lo;
}

double amq__cp_upper(uint64_t k, uint64_t n, double alpha) {
    if (n == 0 || k >= n)
        return 1.0;
    if (k == 0) /* closed form: (1 - p)^n = alpha */
        return -expm1(log(alpha) / (double)n);
    /* P(K <= k) = I_{1-p}(n - k, k + 1) falls as p rises. */
    return bisect(amq__ibeta, (double)(n - k), (double)(k + 1), alpha, false,
                  (double)k / (double)n, 1.0, true, true);
}

double amq__cp_lower(uint64_t k, uint64_t n, double alpha) {
    if (n == 0 || k == 0)
        return 0.0;
    if (k >= n) /* p^n = alpha */
        return exp(log(alpha) / (double)n);
    /* P(K >= k) = I_p(k, n - k + 1) rises with p. */
    return bisect(amq__ibeta, (double)k, (double)(n - k + 1), alpha, true, 0.0,
                  (double)k / (double)n, false, false);
}

double amq__chi2_sf(double x, double df) {
    if (df <= 0.0)
        return 1.0;
    return amq__gammaq(0.5 * df, 0.5 * x);
}
