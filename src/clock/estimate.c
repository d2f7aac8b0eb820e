/*
 * estimate.c — how likely a Bloom clock's "before" verdict is wrong.
 *
 * The estimates (derivation in docs/clock.md). A verdict "A before B" on
 * Bloom clocks is false when A and B are concurrent yet B >= A cell-wise.
 *
 *   paper, eq. (3):  (1 - (1 - 1/m)^S_B)^S_A        S = sum of all cells
 *
 *   ours:  write A = X + a, B = X + b with X their common causal past and
 *   a, b the increments private to each. Concurrent means a holds at least
 *   one event, k increments on cells c_1..c_k. B covers them only if b put
 *   at least one increment on each c_j; b has D + |a| increments where
 *   D = S_B - S_A is observable. With |a| = k (one private event — the
 *   likeliest way to be dominated by chance; more private increments must
 *   all be covered and only lower the chance) and uniform hashing,
 *
 *      P = P(D + k uniform throws into m cells hit k given cells)
 *        = sum_{j=0..k} (-1)^j C(k, j) (1 - j/m)^(D + k).
 *
 *   It depends on D only, not on the age of the system, which is where
 *   eq. (3) goes wrong: its S_A and S_B grow without bound, so it tends to
 *   1 for every pair in a long run. The alternating sum cancels badly when
 *   P is tiny; there we condition on T ~ Bin(D + k, k/m), the throws that
 *   land in the k target cells: P = sum_t P(T = t) * cover_k(t), with
 *   cover_k(t) (t throws into k cells reach all) from a k-state recurrence.
 *
 * Both are public (amq/clock.h): amq_clock_fp_paper and amq_clock_fp_exact.
 *
 * They depend on nothing but the arithmetic, so the clock files sit on top
 * of them without a loop: clock.c -> bloomclock.c -> estimate.c.
 */
#include <math.h>
#include <stdbool.h>

#include "amq/clock.h"

double amq_clock_fp_paper(uint32_t m, double s_low, double s_high) {
    if (m == 0 || !(s_low >= 0) || !(s_high >= 0))
        return 1.0;
    if (s_low == 0)
        return 1.0; /* x^0: the empty clock is dominated by anything */
    double miss = exp(s_high * log1p(-1.0 / m)); /* a cell still untouched */
    if (miss >= 1.0)
        return 0.0;
    return exp(s_low * log1p(-miss));
}

/* P = sum_t P(T = t) cover_k(t), T ~ Bin(n, k/m) the throws that land in
 * the k target cells. cover_k follows a k-state recurrence in t; the
 * binomial log-weights follow theirs (no lgamma: it is not thread-safe).
 * The sum stops where the binomial tail is negligible, or where cover_k is
 * 1 to double precision (deficit <= k e^(-t/k) < 1e-19), adding the
 * remaining binomial mass whole; cost O(k * min(mu + 12 sqrt(mu), k ln k +
 * 45 k)). */
static double fp_mixture(uint32_t m, uint32_t k, double n) {
    double q = (double)k / m, mu = n * q;
    double t_tail = ceil(mu + 12.0 * sqrt(mu) + 64.0 + k);
    double t_sat = ceil(k * (log((double)k) + 45.0));
    double tend = t_tail < n ? t_tail : n;
    bool saturate = t_sat < tend;
    tend = saturate ? t_sat : tend;
    if (q >= 1.0)
        tend = n < t_sat ? n : t_sat;         /* every throw hits a target */
    double dist[AMQ_CLOCK_MAX_K + 1] = {1.0}; /* covered cells after t */
    double lp = q < 1 ? n * log1p(-q) : 0;    /* log P(T = 0)             */
    double lodds = q < 1 ? log(q) - log1p(-q) : 0, total = 0, mass = 0;
    for (double t = 1; t <= tend; t++) {
        for (uint32_t s = k; s > 0; s--)
            dist[s] = dist[s] * ((double)s / k) +
                      dist[s - 1] * ((double)(k - s + 1) / k);
        dist[0] = 0;
        lp += log((n - t + 1) / t) + lodds;
        double w = q < 1 ? exp(lp) : (t == n ? 1.0 : 0.0);
        mass += w;
        if (t >= k)
            total += w * dist[k];
    }
    if (q >= 1.0)
        return n <= t_sat ? dist[k] : 1.0;
    if (saturate) {
        double rest = 1.0 - mass - exp(n * log1p(-q));
        total += rest > 0 ? rest : 0;
    }
    return total < 1 ? total : 1;
}

double amq_clock_fp_exact(uint32_t m, uint32_t k, double d) {
    if (m == 0 || k == 0 || k > m || k > AMQ_CLOCK_MAX_K || !(d >= 0))
        return 1.0;
    double n = d + k;
    long double sum = 0, binom = 1;
    for (uint32_t j = 0; j <= k; j++) {
        long double term =
            j == m ? 0 : binom * expl(n * log1pl(-(long double)j / m));
        sum += (j & 1) ? -term : term;
        binom = binom * (k - j) / (j + 1);
    }
    /* Cancellation costs about 2^k ulps of long double. */
    if (sum > ldexpl(1e-13L, (int)k)) {
        double p = (double)sum;
        return p < 0 ? 0 : (p > 1 ? 1 : p);
    }
    return fp_mixture(m, k, n);
}
