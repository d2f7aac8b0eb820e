/*
 * rng.h — the simulator's random numbers: deterministic for a seed, the
 * same on every platform (no libc rand, no global state).
 *
 * splitmix64 (Steele, Lea & Flood 2014) for the stream; normals by the
 * Marsaglia polar method; gammas by Marsaglia & Tsang (2000), with the
 * u^(1/a) boost for a < 1; Dirichlet as normalised gammas.
 */
#ifndef AMQ_SRC_LSM_RNG_H
#define AMQ_SRC_LSM_RNG_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

typedef struct lsm_rng {
    uint64_t s;
    double spare; /* the polar method's second normal */
    int has_spare;
} lsm_rng;

static inline void lsm_rng_init(lsm_rng *r, uint64_t seed) {
    r->s = seed;
    r->has_spare = 0;
    r->spare = 0;
}

static inline uint64_t lsm_rng_u64(lsm_rng *r) {
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform in (0, 1): never 0, so logs are safe. */
static inline double lsm_rng_unit(lsm_rng *r) {
    return ((double)(lsm_rng_u64(r) >> 11) + 0.5) * 0x1.0p-53;
}

static inline double lsm_rng_normal(lsm_rng *r) {
    if (r->has_spare) {
        r->has_spare = 0;
        return r->spare;
    }
    double u, v, s;
    do {
        u = 2 * lsm_rng_unit(r) - 1;
        v = 2 * lsm_rng_unit(r) - 1;
        s = u * u + v * v;
    } while (s >= 1 || s == 0);
    double m = sqrt(-2 * log(s) / s);
    r->spare = v * m;
    r->has_spare = 1;
    return u * m;
}

static inline double lsm_rng_gamma(lsm_rng *r, double a) {
    if (a < 1) /* G(a) = G(a + 1) U^(1/a) */
        return lsm_rng_gamma(r, a + 1) * pow(lsm_rng_unit(r), 1 / a);
    double d = a - 1.0 / 3, c = 1 / sqrt(9 * d);
    for (;;) {
        double x = lsm_rng_normal(r), v = 1 + c * x;
        if (v <= 0)
            continue;
        v = v * v * v;
        double u = lsm_rng_unit(r);
        if (log(u) < 0.5 * x * x + d - d * v + d * log(v))
            return d * v;
    }
}

/* out[0..n) ~ Dirichlet(a, ..., a). */
static inline void lsm_rng_dirichlet(lsm_rng *r, double a, double *out,
                                     size_t n) {
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += out[i] = lsm_rng_gamma(r, a);
    for (size_t i = 0; i < n; i++)
        out[i] /= sum;
}

#endif
