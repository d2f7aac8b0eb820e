/*
 * amq/mix.h — the two arithmetic steps every amq file format is made of,
 * inline: a 64-bit mixer and the multiply-shift that maps a uniform 64-bit
 * value onto [0, n). The structures derive positions, fingerprints and
 * seeds from a key's hash with them, so they are part of the formats and
 * never change. The library and the inline queries of amq/query.h use
 * these very definitions.
 *
 * Needs a compiler with a 64 x 64 -> 128-bit multiply (GCC, Clang).
 */
#ifndef AMQ_MIX_H
#define AMQ_MIX_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* MurmurHash3's 64-bit finaliser: a bijection of 64-bit words whose
 * every output bit depends on every input bit. */
static inline uint64_t amq_mix64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

/* (__extension__: the 128-bit type is a GNU C extension; pedantic builds
 * of callers stay quiet.) */
__extension__ typedef unsigned __int128 amq__mix_u128;

/* floor(x n / 2^64): a uniform x onto [0, n) without a division
 * (Lemire's multiply-shift reduction). */
static inline uint64_t amq_reduce64(uint64_t x, uint64_t n) {
    return (uint64_t)(((amq__mix_u128)x * n) >> 64);
}

#ifdef __cplusplus
}
#endif

#endif
