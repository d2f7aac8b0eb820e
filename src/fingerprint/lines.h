/*
 * lines.h — one value against every lane of a 64-byte line, the step each
 * query of the line-sized filters (vqf.c, prefix.c, morton.c) starts with:
 * the lanes (8 or 16 bits, little-endian) equal to v as a bitmask, lane i
 * at bit i. The caller then keeps the bits of the slots it asks about.
 *
 * AVX-512BW compares the line in one instruction, AVX2 in two (16-bit
 * lanes are packed back to one bit each, in order). Both are inline and
 * compiled for their instruction set: only kernels compiled for it (and
 * chosen at run time, amq__obj_pick) call them.
 */
#ifndef AMQ_SRC_FINGERPRINT_LINES_H
#define AMQ_SRC_FINGERPRINT_LINES_H

#include <stdint.h>

#if defined(__x86_64__)
#include <immintrin.h>
#define AMQ__HAVE_LINE_EQ 1

__attribute__((target("avx512f,avx512bw"),
               always_inline)) static inline uint64_t
amq__line_eq512(const uint8_t *p, unsigned w, unsigned v) {
    __m512i line = _mm512_loadu_si512((const void *)p);
    if (w == 8)
        return _mm512_cmpeq_epi8_mask(line, _mm512_set1_epi8((char)v));
    return _mm512_cmpeq_epi16_mask(line, _mm512_set1_epi16((short)v));
}

/* The first 32 bytes' 8-bit lanes (a half-line bin). */
__attribute__((target("avx2"), always_inline)) static inline uint64_t
amq__half_eq256(const uint8_t *p, unsigned v) {
    __m256i a = _mm256_loadu_si256((const __m256i *)p);
    return (uint32_t)_mm256_movemask_epi8(
        _mm256_cmpeq_epi8(a, _mm256_set1_epi8((char)v)));
}

__attribute__((target("avx2"), always_inline)) static inline uint64_t
amq__line_eq256(const uint8_t *p, unsigned w, unsigned v) {
    if (w == 8)
        return amq__half_eq256(p, v) | amq__half_eq256(p + 32, v) << 32;
    __m256i a = _mm256_loadu_si256((const __m256i *)p);
    __m256i b = _mm256_loadu_si256((const __m256i *)(p + 32));
    __m256i x = _mm256_set1_epi16((short)v);
    /* 16-bit lanes to bytes: pack, then undo the pack's interleave of the
     * two 128-bit halves */
    __m256i q =
        _mm256_packs_epi16(_mm256_cmpeq_epi16(a, x), _mm256_cmpeq_epi16(b, x));
    q = _mm256_permute4x64_epi64(q, 0xd8);
    return (uint32_t)_mm256_movemask_epi8(q);
}

#endif

#endif
