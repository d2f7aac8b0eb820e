/*
 * poisson.h — walking the Poisson distribution of a block's load.
 *
 * Blocked and split-block Bloom filters send every key to one block, so a
 * block holds a Binomial(n, 1/B) number of keys, which for the sizes that
 * matter is Poisson with mean lambda = n / B = block_bits / bits_per_key.
 * Their false-positive rate is the per-block rate averaged over that load:
 *
 *     FPR(lambda) = sum_i  e^-lambda lambda^i / i!  *  fpr_block(i)
 *
 * (Poisson is a shade more spread out than the binomial it stands for, and
 * fpr_block is convex where it matters, so the mixture errs on the high side.)
 *
 * amq__pois_begin picks a window [lo, hi] of loads holding all but about
 * e^-50 of the mass (ten standard deviations either side, plus a margin for
 * small lambda where the distribution is skewed), and the caller steps
 * through it with amq__pois_next, which updates the probability by the ratio
 * p(i+1)/p(i) = lambda/(i+1) instead of recomputing factorials. The first
 * probability comes from lgamma in log space, so it cannot overflow even
 * when lambda is in the thousands. lambda must be positive (callers answer
 * an empty filter, FPR 0, before walking).
 */
#ifndef AMQ_SRC_CORE_POISSON_H
#define AMQ_SRC_CORE_POISSON_H

#include <math.h>
#include <stdint.h>

typedef struct amq__pois {
    double lambda;
    double i;  /* current load                    */
    double hi; /* last load of the window          */
    double p;  /* P(load == i)                     */
} amq__pois;

/* Beyond this mean the window would hold hundreds of thousands of terms;
 * callers treat such loads as a point mass at lambda (the relative spread
 * 1/sqrt(lambda) is then below 0.4%). */
#define AMQ__POIS_MAX_LAMBDA 65536.0

static inline void amq__pois_begin(amq__pois *w, double lambda) {
    double sd = sqrt(lambda);
    double lo = floor(lambda - 10.0 * sd - 5.0);
    if (lo < 0.0)
        lo = 0.0;
    w->lambda = lambda;
    w->i = lo;
    w->hi = ceil(lambda + 10.0 * sd + 25.0);
    w->p = exp(-lambda + lo * log(lambda) - lgamma(lo + 1.0));
}

static inline int amq__pois_more(const amq__pois *w) { return w->i <= w->hi; }

static inline void amq__pois_next(amq__pois *w) {
    w->i += 1.0;
    w->p *= w->lambda / w->i;
}

#endif
