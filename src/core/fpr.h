/*
 * fpr.h — the false-positive arithmetic of k hashed probes.
 *
 * Bloom filters, their partitioned, counting, stable and spectral cousins
 * and the Count-Min sketch used as a membership test all answer "maybe"
 * when each of a key's k probes lands on a nonzero cell. With c cells per
 * key (over all probes' cells) and independent uniform probes, a stranger
 * passes with probability
 *
 *     f(c, k) = (1 - e^(-k/c))^k,
 *
 * minimised near k = c ln 2. These are the shared pieces: the curve, the
 * best integer k, and the inverse (cells per key for a target rate).
 */
#ifndef AMQ_SRC_CORE_FPR_H
#define AMQ_SRC_CORE_FPR_H

#include <stdint.h>

/* f(c, k); 1 when c <= 0 or k == 0. */
double amq__fpr_probes(double cells, unsigned k);

/* The integer k in 1..max_k with the lowest f(c, k): floor or ceil of
 * c ln 2, max_k once that reaches max_k. */
unsigned amq__best_probes(double cells, unsigned max_k);

/* The fewest cells per key with f(c, k) <= fpr for k probes; k = 0 means
 * the best integer k (at most max_k) at every c, whose envelope is
 * monotone in c and is bisected to a relative 1e-12. */
double amq__cells_for(double fpr, unsigned k, unsigned max_k);

/* The largest probability of one of n >= 1 values when a uniform 32-bit
 * value is mapped onto them by multiply-shift (reduce32): each value takes
 * floor or ceil of 2^32 / n of the inputs, so ceil(2^32 / n) / 2^32. The
 * fingerprint filters' bounds multiply these for blocks and tags. */
double amq__mulshift_top(uint64_t n);

#endif
