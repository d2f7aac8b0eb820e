/*
 * pocket.h — the metadata word of a pocket (Bender, Farach-Colton,
 * Kuszmaul, Kuszmaul, Liu, "On the optimal time/space tradeoff for hash
 * tables", STOC 2022: the pocket dictionary), shared by the vector quotient
 * filter's blocks (vqf.c) and the prefix filter's bins (prefix.c).
 *
 * A pocket holds up to S small values in Q lists (a key's list is its
 * quotient). The metadata is a bit vector with one 1 per list end and one
 * 0 per value, lists in order, values of a list in slot order:
 *
 *   bit:  0 1 2 3 4 5 6 7 8 ...
 *         0 0 1 1 0 1 0 1 1 ...   list 0: slots 0, 1; list 1: none;
 *         ^ ^ ^                   list 2: slot 2; list 3: slot 3; ...
 *         values, then list 0's end
 *
 * A value in slot i of list q sits at bit i + q (q ones precede it). List q
 * holds slots [sel(q - 1) + 1 - q, sel(q) - q), sel(j) the position of the
 * j-th one (from 0). Bits past the Q-th one are 0, so the pocket holds
 * (position of the last one) + 1 - Q values. A word of w bits holds
 * Q + S <= w of them.
 *
 * Everything here is inline. The update functions come in a portable form
 * (the reference) and forms for BMI2 (PDEP inserts a pocket's 0) and for
 * vector registers (a slot opened in a line with one load, a move, two
 * blends and one store: AVX2, AVX-512BW, VBMI; with AVX-512, the pocket
 * at the line's start takes its 0 in the same register and store); a
 * structure picks its update paths once, at creation (amq__pk_isa), as
 * it picks its query kernels.
 */
#ifndef AMQ_SRC_FINGERPRINT_POCKET_H
#define AMQ_SRC_FINGERPRINT_POCKET_H

#include "core/bits.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#define AMQ__PK_INLINE static inline __attribute__((always_inline))

typedef unsigned __int128 amq__u128;

/* `bmi` (a constant at every call site): the caller is compiled for
 * BMI1/BMI2/LZCNT (a kernel chosen at run time), so select is PDEP +
 * TZCNT and the highest bit LZCNT, without branches; else the portable
 * reference. */

/* Position of the k-th one (k < 64); 64 if there is none. */
AMQ__PK_INLINE unsigned amq__pk_sel64(uint64_t x, unsigned k, bool bmi) {
#if defined(AMQ__HAVE_PDEP)
    if (bmi)
        return (unsigned)amq__select64_pdep_lt64(x, k);
#endif
    (void)bmi;
    return (unsigned)amq__select64(x, k);
}

/* Index of the highest set bit; -1 (all ones) for 0. */
AMQ__PK_INLINE unsigned amq__pk_hibit(uint64_t x, bool bmi) {
#if defined(AMQ__HAVE_PDEP)
    if (bmi)
        return 63u - (unsigned)amq__lzcnt64(x);
#endif
    (void)bmi;
    return x ? 63u - (unsigned)__builtin_clzll(x) : ~0u;
}

/* All ones if c, else 0: selects without branches (the operands are
 * random per key, a branch would be mispredicted half the time). */
AMQ__PK_INLINE uint64_t amq__pk_mask(bool c) { return 0 - (uint64_t)c; }

/* ---- one 64-bit word --------------------------------------------------- */

/* Slots [*lo, *hi) of list q (q < Q). */
AMQ__PK_INLINE void amq__pk_range64(uint64_t md, unsigned q, bool bmi,
                                    unsigned *lo, unsigned *hi) {
    unsigned end = amq__pk_sel64(md, q, bmi);
    /* the previous list's end: the highest one below `end` (none: -1) */
    unsigned prev = amq__pk_hibit(md & ((UINT64_C(1) << end) - 1), bmi);
    *lo = prev + 1 - q;
    *hi = end - q;
}

/* Values held: the last one's position + 1 - Q (md has Q >= 1 ones). */
AMQ__PK_INLINE unsigned amq__pk_fill64(uint64_t md, unsigned nlists, bool bmi) {
    return amq__pk_hibit(md, bmi) + 1 - nlists;
}

/* A 0 inserted at bit pos (the bits from pos on move up one; the top bit
 * of the word must be 0 and is lost). */
AMQ__PK_INLINE uint64_t amq__pk_ins64(uint64_t md, unsigned pos) {
    uint64_t low = (UINT64_C(1) << pos) - 1;
    return (md & low) | ((md & ~low) << 1);
}

#if defined(AMQ__HAVE_PDEP)
__attribute__((target("bmi2"))) static inline uint64_t amq__pk_pdep(
    uint64_t x, uint64_t m) {
    return _pdep_u64(x, m);
}
#endif

/* The same by PDEP when `bmi`: md's bits deposited on every bit but pos. */
AMQ__PK_INLINE uint64_t amq__pk_ins64b(uint64_t md, unsigned pos, bool bmi) {
#if defined(AMQ__HAVE_PDEP)
    if (bmi)
        return amq__pk_pdep(md, ~(UINT64_C(1) << pos));
#endif
    (void)bmi;
    return amq__pk_ins64(md, pos);
}

/* Bit pos removed (the bits above move down one; a 0 enters at the top). */
AMQ__PK_INLINE uint64_t amq__pk_del64(uint64_t md, unsigned pos) {
    uint64_t low = (UINT64_C(1) << pos) - 1;
    return (md & low) | ((md >> 1) & ~low);
}

/* ---- a 128-bit word (two 64-bit halves) ---------------------------------- */

AMQ__PK_INLINE uint64_t amq__pk_lo(amq__u128 x) { return (uint64_t)x; }
AMQ__PK_INLINE uint64_t amq__pk_hi(amq__u128 x) { return (uint64_t)(x >> 64); }

/* Position of the k-th one (k < 128; the word has more than k): in the
 * low half (c ones) or, past them, the high half, chosen by masks. */
AMQ__PK_INLINE unsigned amq__pk_sel128(uint64_t lo, uint64_t hi, unsigned c,
                                       unsigned k, bool bmi) {
    uint64_t m = amq__pk_mask(k >= c);
    uint64_t w = (hi & m) | (lo & ~m);
    unsigned kk = k - (unsigned)(c & m);
    return amq__pk_sel64(w, kk, bmi) + (unsigned)(64 & m);
}

/* Position of the k-th one of a 128-bit word with more than k. */
AMQ__PK_INLINE unsigned amq__pk_sel128w(amq__u128 md, unsigned k, bool bmi) {
    uint64_t l = amq__pk_lo(md);
    return amq__pk_sel128(l, amq__pk_hi(md), amq__popcount64(l), k, bmi);
}

/* Two selects sharing one popcount; list 0 starts at slot 0. */
AMQ__PK_INLINE void amq__pk_range128(amq__u128 md, unsigned q, bool bmi,
                                     unsigned *lo, unsigned *hi) {
    uint64_t l = amq__pk_lo(md), h = amq__pk_hi(md);
    unsigned c = amq__popcount64(l);
    unsigned end = amq__pk_sel128(l, h, c, q, bmi);
    unsigned prev = amq__pk_sel128(l, h, c, (q - 1) & 127, bmi);
    prev |= (unsigned)amq__pk_mask(q == 0); /* list 0: from slot 0 */
    *lo = prev + 1 - q;
    *hi = end - q;
}

/* ---- slots in a line ------------------------------------------------------ */

/* Bytes [lo, hi) of the 8-byte word starting at byte b, as a mask. */
AMQ__PK_INLINE uint64_t amq__pk_bytes(unsigned b, unsigned lo, unsigned hi) {
    unsigned from = lo > b ? lo - b : 0, to = hi > b ? hi - b : 0;
    from = from < 8 ? from : 8;
    to = to < 8 ? to : 8;
    uint64_t below_to = to == 8 ? ~UINT64_C(0) : (UINT64_C(1) << (8 * to)) - 1;
    uint64_t below_from =
        from == 8 ? ~UINT64_C(0) : (UINT64_C(1) << (8 * from)) - 1;
    return below_to & ~below_from;
}

/* Open a w-byte slot (w = 1 or 2) at byte `at` of the n-byte line p
 * (n a multiple of 8) and write v there: bytes [at, end - w) move up by
 * w, the w bytes at end - w (an empty slot) are dropped, bytes outside
 * [at, end) stay. Word by word from the top, each word built from itself
 * and the one below by masks: a fixed amount of work and no branch on
 * where the slot opens (a memmove's size tests would be, on the line the
 * insert has just missed on). */
AMQ__PK_INLINE void amq__pk_open_slot(uint8_t *p, unsigned n, unsigned at,
                                      unsigned end, unsigned w, unsigned v) {
    unsigned sh = 8 * w;
    for (unsigned b = n - 8;; b -= 8) {
        uint64_t old = amq__get_u64(p + b);
        uint64_t below = b ? amq__get_u64(p + b - 8) : 0;
        uint64_t moved = (old << sh) | (below >> (64 - sh));
        uint64_t m = amq__pk_bytes(b, at + w, end);
        amq__put_u64(p + b, (old & ~m) | (moved & m));
        if (b == 0)
            break;
    }
    p[at] = (uint8_t)v;
    if (w == 2)
        p[at + 1] = (uint8_t)(v >> 8);
}

/* ---- the same with vector registers ---------------------------------------
 *
 * One load of the line, the line moved up by w bytes, two blends and one
 * store: a dozen instructions where the word loop above takes about 120,
 * and no branch. Compiled for their instruction sets, not forced inline
 * (see bits.h): a caller compiled for the same set (an update path chosen
 * at creation, amq__cpu_*) inlines them, and the portable path never runs
 * them. w = 2 needs an even `at` (16-bit slots sit at even bytes in both
 * users). Each is tested byte for byte against amq__pk_open_slot. */
#if defined(__x86_64__)
#define AMQ__HAVE_PK_VEC 1

/* Bits [lo, hi) of a 64-bit mask, lo <= hi <= 64 (BZHI: 64 keeps all). */
__attribute__((target("bmi2"))) static inline uint64_t amq__pk_span(
    unsigned lo, unsigned hi) {
    return _bzhi_u64(~UINT64_C(0), hi) & ~_bzhi_u64(~UINT64_C(0), lo);
}

/* A 64-byte line, AVX-512BW: each qword shifted up by 8 w bits, the bits
 * it loses carried into the next one from the line moved up a qword
 * (VALIGNQ against zero). */
__attribute__((target("avx512f,avx512bw,bmi2"))) static inline __m512i
amq__pk_open512(__m512i line, unsigned at, unsigned end, unsigned w,
                unsigned v) {
    __m512i below = _mm512_alignr_epi64(line, _mm512_setzero_si512(), 7);
    __m512i up = _mm512_or_si512(_mm512_slli_epi64(line, 8 * w),
                                 _mm512_srli_epi64(below, 64 - 8 * w));
    up = w == 1 ? _mm512_mask_set1_epi8(up, UINT64_C(1) << at, (char)v)
                : _mm512_mask_set1_epi16(up, UINT32_C(1) << (at / 2), (short)v);
    return _mm512_mask_blend_epi8(amq__pk_span(at, end), line, up);
}

__attribute__((target("avx512f,avx512bw,bmi2"))) static inline void
amq__pk_open_slot512(uint8_t *p, unsigned at, unsigned end, unsigned w,
                     unsigned v) {
    __m512i line = _mm512_loadu_si512((const void *)p);
    _mm512_storeu_si512((void *)p, amq__pk_open512(line, at, end, w, v));
}

/* The same with VBMI: the move is one byte permute (lane i takes lane
 * i - w), merged under the mask of the bytes that move. */
__attribute__((
    target("avx512f,avx512bw,avx512vbmi,bmi2"))) static inline __m512i
amq__pk_open_vbmi(__m512i line, unsigned at, unsigned end, unsigned w,
                  unsigned v) {
    static const uint8_t from1[64] = {
        0,  0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14,
        15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30,
        31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46,
        47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62};
    static const uint8_t from2[64] = {
        0,  0,  0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13,
        14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29,
        30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45,
        46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61};
    __m512i from = _mm512_loadu_si512((const void *)(w == 1 ? from1 : from2));
    __m512i x = _mm512_mask_permutexvar_epi8(line, amq__pk_span(at + w, end),
                                             from, line);
    return w == 1
               ? _mm512_mask_set1_epi8(x, UINT64_C(1) << at, (char)v)
               : _mm512_mask_set1_epi16(x, UINT32_C(1) << (at / 2), (short)v);
}

__attribute__((target("avx512f,avx512bw,avx512vbmi,bmi2"))) static inline void
amq__pk_open_slot_vbmi(uint8_t *p, unsigned at, unsigned end, unsigned w,
                       unsigned v) {
    __m512i line = _mm512_loadu_si512((const void *)p);
    _mm512_storeu_si512((void *)p, amq__pk_open_vbmi(line, at, end, w, v));
}

/* amq__pk_ins128 (words = 2) or amq__pk_ins64 (words = 1) on a pocket
 * held in a line's first 8 words bytes (the rest of the line is left as
 * it is): the bits at or above pos masked out, moved up one (within each
 * qword, then the carry across by a byte shift of the 128-bit lane) and
 * merged back, about ten vector instructions with no PDEP and no branch
 * on which half pos is in. */
__attribute__((target("avx512f,avx512bw"))) static inline __m512i amq__pk_ins_z(
    __m512i line, unsigned pos, unsigned words) {
    __m512i c = _mm512_max_epi64(
        _mm512_sub_epi64(_mm512_set1_epi64((long long)pos),
                         _mm512_set_epi64(0, 0, 0, 0, 0, 0, 64, 0)),
        _mm512_setzero_si512());
    /* each qword's bits at or above pos (a count past 63 gives 0) */
    __m512i hi = _mm512_sllv_epi64(_mm512_set1_epi64(-1), c);
    __m512i m = _mm512_and_si512(line, hi);
    __m512i up = _mm512_slli_epi64(m, 1);
    if (words == 2)
        up = _mm512_or_si512(up,
                             _mm512_bslli_epi128(_mm512_srli_epi64(m, 63), 8));
    __m512i md = _mm512_ternarylogic_epi64(hi, line, up, 0xae); /* l&~h|u */
    return _mm512_mask_blend_epi64(words == 2 ? 0x3 : 0x1, line, md);
}

/* A 64-byte line that starts with a pocket of `words` 64-bit words: a
 * w-byte slot opened at `at` (past the pocket) for v, as
 * amq__pk_open_slot does, and a 0 put in the pocket at pos, as
 * amq__pk_ins128 or amq__pk_ins64 do; one load and one store. */
__attribute__((target("avx512f,avx512bw,bmi2"))) static inline void
amq__pk_open_ins512(uint8_t *p, unsigned at, unsigned end, unsigned w,
                    unsigned v, unsigned pos, unsigned words) {
    __m512i line = _mm512_loadu_si512((const void *)p);
    __m512i x = amq__pk_open512(line, at, end, w, v);
    _mm512_storeu_si512((void *)p, amq__pk_ins_z(x, pos, words));
}

__attribute__((target("avx512f,avx512bw,avx512vbmi,bmi2"))) static inline void
amq__pk_open_ins_vbmi(uint8_t *p, unsigned at, unsigned end, unsigned w,
                      unsigned v, unsigned pos, unsigned words) {
    __m512i line = _mm512_loadu_si512((const void *)p);
    __m512i x = amq__pk_open_vbmi(line, at, end, w, v);
    _mm512_storeu_si512((void *)p, amq__pk_ins_z(x, pos, words));
}

/* 32 bytes moved up by w inside a 64-byte line, AVX2: `lo` holds the 32
 * bytes below (zero for the first half); VPALIGNR works per 128-bit lane,
 * so it takes its carry from a vector whose lanes are (lo's high lane,
 * this one's low lane). `base`: the half's first byte. */
__attribute__((target("avx2"))) static inline __m256i amq__pk_open_half256(
    __m256i half, __m256i lo, unsigned base, unsigned at, unsigned end,
    unsigned w, unsigned v) {
    const __m256i iota = _mm256_setr_epi8(
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19,
        20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31);
    __m256i carry = _mm256_permute2x128_si256(lo, half, 0x21);
    __m256i up = w == 1 ? _mm256_alignr_epi8(half, carry, 15)
                        : _mm256_alignr_epi8(half, carry, 14);
    __m256i i = _mm256_add_epi8(iota, _mm256_set1_epi8((char)base));
    __m256i from_at = _mm256_cmpgt_epi8(i, _mm256_set1_epi8((char)(at - 1)));
    __m256i moved = _mm256_cmpgt_epi8(i, _mm256_set1_epi8((char)(at + w - 1)));
    __m256i below_end = _mm256_cmpgt_epi8(_mm256_set1_epi8((char)end), i);
    __m256i val =
        w == 1 ? _mm256_set1_epi8((char)v) : _mm256_set1_epi16((short)v);
    half = _mm256_blendv_epi8(half, up, _mm256_and_si256(moved, below_end));
    return _mm256_blendv_epi8(half, val, _mm256_andnot_si256(moved, from_at));
}

/* An n-byte line (n = 32 or 64), AVX2: one or two halves. */
__attribute__((target("avx2"))) static inline void amq__pk_open_slot256(
    uint8_t *p, unsigned n, unsigned at, unsigned end, unsigned w, unsigned v) {
    __m256i a = _mm256_loadu_si256((const __m256i *)p);
    if (n == 64) {
        __m256i b = _mm256_loadu_si256((const __m256i *)(p + 32));
        _mm256_storeu_si256((__m256i *)(p + 32),
                            amq__pk_open_half256(b, a, 32, at, end, w, v));
    }
    _mm256_storeu_si256(
        (__m256i *)p,
        amq__pk_open_half256(a, _mm256_setzero_si256(), 0, at, end, w, v));
}
#endif

/* The code an update path runs (a constant at every call site; the
 * structure picks its paths once, at creation, amq__pk_isa). */
enum { AMQ__PK_PORTABLE, AMQ__PK_AVX2, AMQ__PK_AVX512, AMQ__PK_VBMI };

static inline unsigned amq__pk_isa(bool scalar) {
    if (scalar)
        return AMQ__PK_PORTABLE;
    if (amq__cpu_has_vbmi())
        return AMQ__PK_VBMI;
    if (amq__cpu_has_avx512())
        return AMQ__PK_AVX512;
    return amq__cpu_has_avx2() ? AMQ__PK_AVX2 : AMQ__PK_PORTABLE;
}

/* amq__pk_open_slot by the widest code `isa` allows (an n = 32 line: AVX2
 * at most). */
AMQ__PK_INLINE void amq__pk_open(uint8_t *p, unsigned n, unsigned at,
                                 unsigned end, unsigned w, unsigned v,
                                 unsigned isa) {
#if defined(AMQ__HAVE_PK_VEC)
    if (isa == AMQ__PK_VBMI && n == 64) {
        amq__pk_open_slot_vbmi(p, at, end, w, v);
        return;
    }
    if (isa == AMQ__PK_AVX512 && n == 64) {
        amq__pk_open_slot512(p, at, end, w, v);
        return;
    }
    if (isa != AMQ__PK_PORTABLE) {
        amq__pk_open_slot256(p, n, at, end, w, v);
        return;
    }
#endif
    (void)isa;
    amq__pk_open_slot(p, n, at, end, w, v);
}

AMQ__PK_INLINE amq__u128 amq__pk_ins128(amq__u128 md, unsigned pos) {
    amq__u128 low = ((amq__u128)1 << pos) - 1;
    return (md & low) | ((md & ~low) << 1);
}

/* The same by PDEP when `bmi`: the half holding pos takes the 0 (the low
 * half's top bit carried into the high half when it is the low one),
 * chosen by masks. */
AMQ__PK_INLINE amq__u128 amq__pk_ins128b(amq__u128 md, unsigned pos, bool bmi) {
#if defined(AMQ__HAVE_PDEP)
    if (bmi) {
        uint64_t l = amq__pk_lo(md), h = amq__pk_hi(md);
        uint64_t in_lo = amq__pk_mask(pos < 64);
        uint64_t hole = UINT64_C(1) << (pos & 63);
        uint64_t up = (h << 1) | (l >> 63);
        l = amq__pk_pdep(l, ~(hole & in_lo));
        h = amq__pk_pdep((up & in_lo) | (h & ~in_lo), ~(hole & ~in_lo));
        return (amq__u128)h << 64 | l;
    }
#endif
    (void)bmi;
    return amq__pk_ins128(md, pos);
}

AMQ__PK_INLINE amq__u128 amq__pk_del128(amq__u128 md, unsigned pos) {
    amq__u128 low = ((amq__u128)1 << pos) - 1;
    return (md & low) | ((md >> 1) & ~low);
}

#endif
