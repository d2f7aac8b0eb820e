/*
 * bits.h — word-level helpers shared by every structure: range reduction,
 * little-endian field access, prefetch, popcount, mixing.
 */
#ifndef AMQ_SRC_CORE_BITS_H
#define AMQ_SRC_CORE_BITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "amq/mix.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "amq currently requires a little-endian target (see docs/format.md)"
#endif

/* Lemire's multiply-shift reduction of a 32-bit value into [0, n). */
static inline uint32_t amq__reduce32(uint32_t x, uint32_t n) {
    return (uint32_t)(((uint64_t)x * n) >> 32);
}
/* 64-bit version into [0, n) (amq/mix.h: part of the formats). */
static inline uint64_t amq__reduce64(uint64_t x, uint64_t n) {
    return amq_reduce64(x, n);
}

static inline uint64_t amq__rotl64(uint64_t x, unsigned r) {
    return (x << (r & 63)) | (x >> ((64 - r) & 63));
}

/* Murmur3's 64-bit finaliser (amq/mix.h): a bijective mixer used to
 * derive a second, independent-looking hash from the first. */
static inline uint64_t amq__mix64(uint64_t x) { return amq_mix64(x); }

static inline unsigned amq__popcount64(uint64_t x) {
    return (unsigned)__builtin_popcountll(x);
}

#define amq__prefetch(p) __builtin_prefetch((p), 0, 3)
#define amq__prefetch_w(p) __builtin_prefetch((p), 1, 3)

/* Little-endian stores and loads (the target is little-endian, see above;
 * memcpy keeps them alignment-safe). */
static inline void amq__put_u16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static inline void amq__put_u32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void amq__put_u64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static inline void amq__put_f64(uint8_t *p, double v) { memcpy(p, &v, 8); }
static inline uint16_t amq__get_u16(const uint8_t *p) {
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}
static inline uint32_t amq__get_u32(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}
static inline uint64_t amq__get_u64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}
static inline double amq__get_f64(const uint8_t *p) {
    double v;
    memcpy(&v, p, 8);
    return v;
}

/* Position of the k-th (from 0) set bit of x; 64 if x has <= k set bits.
 * Portable: a popcount per byte, then the bits of one byte. */
static inline uint64_t amq__select64(uint64_t x, unsigned k) {
    unsigned base = 0;
    for (; base < 64; base += 8) {
        unsigned c = amq__popcount64((x >> base) & 0xff);
        if (k < c)
            break;
        k -= c;
    }
    if (base >= 64)
        return 64;
    uint64_t b = (x >> base) & 0xff;
    for (unsigned i = 0; i < k; i++)
        b &= b - 1;
    return base + (uint64_t)__builtin_ctzll(b);
}

#if defined(__x86_64__)
#include <immintrin.h>
#define AMQ__HAVE_PDEP 1
/* The same with PDEP and TZCNT, and the BMI/LZCNT pieces the pocket
 * structures use: functions compiled for those instructions, which a
 * caller compiled for them (a kernel chosen at run time, see cpu.c)
 * inlines, and any other caller may call on a CPU that has them. */
__attribute__((target("bmi,bmi2"))) static inline uint64_t amq__select64_pdep(
    uint64_t x, unsigned k) {
    if (k >= 64)
        return 64;
    return _tzcnt_u64(_pdep_u64(UINT64_C(1) << k, x));
}
/* k < 64 (no check: no branch). */
__attribute__((target("bmi,bmi2"))) static inline uint64_t
amq__select64_pdep_lt64(uint64_t x, unsigned k) {
    return _tzcnt_u64(_pdep_u64(UINT64_C(1) << (k & 63), x));
}
/* Leading zeros, 64 for 0. */
__attribute__((target("lzcnt"))) static inline uint64_t amq__lzcnt64(
    uint64_t x) {
    return _lzcnt_u64(x);
}
#endif

/* a + b saturating at UINT64_MAX (item counts after merges). */
static inline uint64_t amq__sat_add64(uint64_t a, uint64_t b) {
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* dst = dst | src (union) or dst & src (intersection) over `bytes` bytes,
 * a multiple of 8: the merge of any bit-array filter of equal shape. Works
 * on tables of 32- or 64-bit words alike (memcpy keeps it alias-safe; the
 * compiler vectorises the loop). */
static inline void amq__bits_merge(void *dst, const void *src, size_t bytes,
                                   bool intersect) {
    uint8_t *d = dst;
    const uint8_t *s = src;
    for (size_t i = 0; i + 8 <= bytes; i += 8) {
        uint64_t a, b;
        memcpy(&a, d + i, 8);
        memcpy(&b, s + i, 8);
        a = intersect ? a & b : a | b;
        memcpy(d + i, &a, 8);
    }
}

/* Item count after merging two filters: the union holds at most both
 * sides' keys, the intersection at most the smaller side's. Either keeps
 * the count an upper bound on the distinct keys held, so bounds stay safe. */
static inline uint64_t amq__merged_items(uint64_t dst, uint64_t src,
                                         bool intersect) {
    if (intersect)
        return src < dst ? src : dst;
    return amq__sat_add64(dst, src);
}

/* Run-time CPU feature checks (cached), below the ceiling amq__cpu_cap
 * sets. AVX2 implies BMI2 and POPCNT; AVX-512 means F, BW, VL and DQ (and
 * AVX2); VPOPCNTDQ and VBMI imply AVX-512. The ceilings: scalar, AVX2,
 * AVX-512 without its extensions (the Skylake-X set), and everything
 * (AMQ__CPU_MAX: VPOPCNTDQ and VBMI too), so a machine with all of them
 * runs every kernel a narrower one would choose. */
enum {
    AMQ__CPU_SCALAR = 0,
    AMQ__CPU_AVX2 = 1,
    AMQ__CPU_AVX512 = 2,
    AMQ__CPU_AVX512_EXT = 3,
    AMQ__CPU_MAX = AMQ__CPU_AVX512_EXT
};
int amq__cpu_has_avx2(void);
int amq__cpu_has_avx512(void);
int amq__cpu_has_vpopcntdq(void);
int amq__cpu_has_vbmi(void); /* AVX-512 with VBMI (byte permutes) */
/* Tests: let structures created from now on use at most `level`
 * (AMQ__CPU_*), so every kernel runs on a machine that has the widest. */
void amq__cpu_cap(int level);

#endif
