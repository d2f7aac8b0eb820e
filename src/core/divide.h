/*
 * divide.h — division by a divisor fixed at run time, by a multiply and
 * shifts (Granlund & Montgomery, "Division by invariant integers using
 * multiplication", PLDI 1994, the round-up method with an add-back):
 *
 *   l = ceil(log2 d),  m = floor(2^64 (2^l - d) / d) + 1,
 *   t = (m x) >> 64,   x / d = (t + ((x - t) >> 1)) >> (l - 1)
 *
 * exact for every 64-bit x and 2 <= d <= 2^63. A 64-bit divide costs
 * 35-90 cycles on the CPUs amq runs on; this costs about 5.
 */
#ifndef AMQ_SRC_CORE_DIVIDE_H
#define AMQ_SRC_CORE_DIVIDE_H

#include <stdint.h>

typedef struct amq__divisor {
    uint64_t d, m;
    unsigned shift; /* l - 1 */
} amq__divisor;

static inline amq__divisor amq__divisor_of(uint64_t d) {
    amq__divisor v = {.d = d};
    unsigned l = 0;
    while (l < 63 && (UINT64_C(1) << l) < d)
        l++;
    v.m =
        (uint64_t)((((unsigned __int128)((UINT64_C(1) << l) - d)) << 64) / d) +
        1;
    v.shift = l - 1;
    return v;
}

static inline uint64_t amq__div(const amq__divisor *v, uint64_t x) {
    uint64_t t = (uint64_t)(((unsigned __int128)v->m * x) >> 64);
    return (t + ((x - t) >> 1)) >> v->shift;
}

static inline uint64_t amq__mod(const amq__divisor *v, uint64_t x) {
    return x - amq__div(v, x) * v->d;
}

#endif
