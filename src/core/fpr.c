/*
 * fpr.c — the k-probe false-positive curve and its inverse (fpr.h).
 */
#include "core/fpr.h"

#include <math.h>

double amq__fpr_probes(double cells, unsigned k) {
    if (cells <= 0.0 || k == 0)
        return 1.0;
    return pow(-expm1(-(double)k / cells), (double)k);
}

unsigned amq__best_probes(double cells, unsigned max_k) {
    double real = cells * M_LN2;
    unsigned lo = real < 1.0 ? 1u : (unsigned)real;
    if (lo >= max_k)
        return max_k;
    return amq__fpr_probes(cells, lo + 1) < amq__fpr_probes(cells, lo) ? lo + 1
                                                                       : lo;
}

double amq__cells_for(double fpr, unsigned k, unsigned max_k) {
    if (k != 0)
        return -(double)k / log1p(-pow(fpr, 1.0 / (double)k));
    /* The optimum is log2(1/fpr) / ln 2 cells; bracket it generously. */
    double lo = 0.5 * -log2(fpr) / M_LN2, hi = 2.0 * lo + 2.0;
    for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
        double mid = 0.5 * (lo + hi);
        if (amq__fpr_probes(mid, amq__best_probes(mid, max_k)) <= fpr)
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

double amq__mulshift_top(uint64_t n) {
    uint64_t most = ((UINT64_C(1) << 32) + n - 1) / n;
    return ldexp((double)most, -32);
}
