/*
 * score_avx512.c — the scorer's kernels with AVX-512 (F, BW, DQ): sixteen
 * 32-bit lanes, a lane mask is a mask register. The kernels are
 * score_kernel.h's (the hash without 64-bit multiplies, the list of one
 * key, float keys side by side, why each gives features.c's score bit for
 * bit); this file gives them their primitives.
 *
 * The key is never copied: 64 bytes of the frame STX key ETX are one
 * byte-masked load from key - 1, the masked-off lanes (before the key,
 * past its end) neither read nor fault, and STX, ETX and the zeros come
 * from the load's pass-through vector:
 *
 *     lane:   0    1      2     ...  len   len+1  ...  63
 *     frame:  STX  k[0]   k[1]  ...  k[..] ETX    0 ... 0
 *
 * The windows of 16 positions are two dword permutes of that register
 * (and of the next 64 bytes for the last 16) and two shifts; the class
 * scan is byte compares into mask registers. model.c chooses these
 * kernels when amq__cpu_has_avx512() says so; test_score holds them
 * against the scalar reference.
 */
#include "learned/learned.h"

#if defined(__x86_64__)
#include <immintrin.h>
#include <string.h>

#define SK_W 16
#define SK_ATTR                                                                \
    __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,bmi2,"      \
                          "popcnt")))
#define SK_FN SK_ATTR __attribute__((always_inline)) static inline
#define SK_ENTRY SK_ATTR static

typedef __m512i vu;
typedef __m512 vf;
typedef __mmask16 vm;

SK_FN vu sk_set1(uint32_t x) { return _mm512_set1_epi32((int)x); }
SK_FN vf sk_setf0(void) { return _mm512_setzero_ps(); }
SK_FN vu sk_and(vu a, vu b) { return _mm512_and_si512(a, b); }
SK_FN vu sk_add(vu a, vu b) { return _mm512_add_epi32(a, b); }
SK_FN vu sk_sub(vu a, vu b) { return _mm512_sub_epi32(a, b); }
SK_FN vf sk_addf(vf a, vf b) { return _mm512_add_ps(a, b); }
SK_FN vu sk_load(const uint32_t *p) { return _mm512_loadu_si512(p); }
SK_FN void sk_store(uint32_t *p, vu v) { _mm512_storeu_si512(p, v); }
SK_FN void sk_storef(float *p, vf v) { _mm512_storeu_ps(p, v); }
SK_FN vu sk_srl(vu v, unsigned c) {
    return _mm512_srl_epi32(v, _mm_cvtsi32_si128((int)c));
}
SK_FN vu sk_sll(vu v, unsigned c) {
    return _mm512_sll_epi32(v, _mm_cvtsi32_si128((int)c));
}

/* hi32(x · c): the even lanes' products, then the odd lanes'. */
SK_FN vu sk_mulhi(vu x, uint32_t c) {
    const vu l = sk_set1(c);
    vu even = _mm512_mul_epu32(x, l);
    vu odd = _mm512_mul_epu32(_mm512_srli_epi64(x, 32), l);
    return _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(even, 32), odd);
}
SK_FN vu sk_mullo(vu x, uint32_t c) {
    return _mm512_mullo_epi32(x, sk_set1(c));
}

SK_FN vm sk_gt(vu a, uint32_t b) {
    return _mm512_cmpgt_epi32_mask(a, sk_set1(b));
}

/* ---- the framed key ------------------------------------------------------- */

typedef struct sk_fr {
    const uint8_t *key;
    size_t len;
} sk_fr;

SK_FN void sk_fr_init(sk_fr *f, const uint8_t *key, size_t len) {
    f->key = key;
    f->len = len;
}

SK_FN const uint8_t *sk_fr_key(const sk_fr *f) { return f->key; }

/* Bits [lo, hi) of a lane mask, lo <= hi <= 64. */
SK_FN __mmask64 sk_span(size_t lo, size_t hi) {
    uint64_t top = hi >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << hi) - 1;
    return (__mmask64)(top & ~((UINT64_C(1) << lo) - 1));
}

/* Frame bytes 64c .. 64c + 63: key byte g - 1 at frame byte g. */
SK_FN __m512i sk_fr_chunk(const sk_fr *f, size_t c) {
    size_t lo = 64 * c, len = f->len;
    __m512i src = _mm512_setzero_si512();
    if (c == 0)
        src = _mm512_mask_set1_epi8(src, 1, (char)AMQ__FEAT_STX);
    if (len + 1 >= lo && len + 1 < lo + 64)
        src = _mm512_mask_set1_epi8(src, (__mmask64)1 << (len + 1 - lo),
                                    (char)AMQ__FEAT_ETX);
    size_t a = lo == 0 ? 1 : lo, b = len < lo + 63 ? len : lo + 63;
    if (b < a)
        return src;
    /* the address is formed as an integer: key - 1 is before the key,
     * and only lanes at or past the key are read */
    const void *base = (const void *)((uintptr_t)f->key + lo - 1);
    return _mm512_mask_loadu_epi8(src, sk_span(a - lo, b - lo + 1), base);
}

/* Lane j: the little-endian 32-bit word at frame position i + j, i a
 * multiple of 16: the dword holding position i + j and the next one,
 * shifted together. */
SK_FN vu sk_fr_windows(const sk_fr *f, size_t i) {
    const vu quarter =
        _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
    const vu shift = _mm512_setr_epi32(0, 8, 16, 24, 0, 8, 16, 24, 0, 8, 16, 24,
                                       0, 8, 16, 24);
    size_t c = i / 64, k = (i / 16) % 4;
    vu lo = sk_fr_chunk(f, c);
    vu hi = k == 3 ? sk_fr_chunk(f, c + 1) : lo;
    vu at = sk_add(quarter, sk_set1((uint32_t)(4 * k)));
    vu p0 = _mm512_permutexvar_epi32(at, lo);
    vu p1 = _mm512_permutex2var_epi32(lo, sk_add(at, sk_set1(1)), hi);
    return _mm512_or_si512(_mm512_srlv_epi32(p0, shift),
                           _mm512_sllv_epi32(p1, sk_sub(sk_set1(32), shift)));
}

/* amq__shape_scan with byte compares into masks, 64 bytes at a time;
 * reads k[0..len) only. */
SK_FN void sk_scan(const uint8_t *k, size_t len, amq__key_shape *s) {
    const __m512i c0 = _mm512_set1_epi8('0'), c9 = _mm512_set1_epi8(9);
    const __m512i ca = _mm512_set1_epi8('a'), c25 = _mm512_set1_epi8(25);
    const __m512i low = _mm512_set1_epi8(0x20);
    const char sep[5] = {'.', '/', ':', '-', '_'};
    size_t found = 0;
    memset(s, 0, sizeof *s);
    s->first = s->second = len;
    for (size_t at = 0; at < len; at += 64) {
        __m512i b = _mm512_maskz_loadu_epi8(sk_span(0, len - at), k + at);
        s->digits += (size_t)__builtin_popcountll(
            _mm512_cmple_epu8_mask(_mm512_sub_epi8(b, c0), c9));
        s->letters += (size_t)__builtin_popcountll(_mm512_cmple_epu8_mask(
            _mm512_sub_epi8(_mm512_or_si512(b, low), ca), c25));
        uint64_t any = 0;
        for (unsigned j = 0; j < 5; j++) {
            uint64_t m = _mm512_cmpeq_epi8_mask(b, _mm512_set1_epi8(sep[j]));
            s->seps[j] += (size_t)__builtin_popcountll(m);
            any |= m;
        }
        if (any == 0)
            continue;
        s->last = at + 64 - (size_t)__builtin_clzll(any);
        for (; any != 0 && found < 2; found++, any &= any - 1)
            *(found == 0 ? &s->first : &s->second) =
                at + (size_t)__builtin_ctzll(any);
    }
    s->len = len;
    for (unsigned j = 0; j < 5; j++)
        s->nsep += s->seps[j];
}

/* ---- weights -------------------------------------------------------------- */

/* Σ ±q over the list (zeros to a whole vector after it), eight lanes a
 * gather: two 256-bit gathers cost less than one 512-bit gather of the
 * same lanes on the machine measured (docs/cascade.md, "Speed"). The
 * sign bit moved to bit 31 is set for +1; VPSIGND negates where its
 * second operand is negative, so the negation is subtracted. */
SK_FN int32_t sk_sum_q(const uint32_t *hi, size_t total, unsigned bits,
                       const int8_t *q) {
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m128i c_word = _mm_cvtsi32_si128((int)(34 - bits));
    const __m128i c_byte = _mm_cvtsi32_si128((int)(29 - bits));
    const __m128i c_sign = _mm_cvtsi32_si128((int)bits);
    __m256i acc = _mm256_setzero_si256();
    for (size_t i = 0; i < total; i += 8) {
        __m256i h = _mm256_loadu_si256((const __m256i *)(hi + i));
        __m256i live =
            _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(total - i)), iota);
        __m256i word = _mm256_mask_i32gather_epi32(
            _mm256_setzero_si256(), (const int *)(const void *)q,
            _mm256_srl_epi32(h, c_word), live, 4);
        __m256i up = _mm256_andnot_si256(_mm256_srl_epi32(h, c_byte),
                                         _mm256_set1_epi32(24));
        __m256i v = _mm256_srai_epi32(_mm256_sllv_epi32(word, up), 24);
        __m256i neg_if_pos =
            _mm256_or_si256(_mm256_sll_epi32(h, c_sign), _mm256_set1_epi32(1));
        acc = _mm256_sub_epi32(acc, _mm256_sign_epi32(v, neg_if_pos));
    }
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(acc),
                              _mm256_extracti128_si256(acc, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
    return _mm_cvtsi128_si32(s);
}

/* hi[0..W) becomes the indices, one[0..W) the factors (float)±1. */
SK_FN void sk_index_sign(uint32_t *hi, float *one, unsigned bits) {
    vu h = sk_load(hi);
    vu flip = _mm512_andnot_si512(sk_sll(h, bits), sk_set1(0x80000000u));
    _mm512_storeu_ps(one,
                     _mm512_castsi512_ps(_mm512_xor_si512(
                         _mm512_castps_si512(_mm512_set1_ps(1.0f)), flip)));
    sk_store(hi, sk_srl(h, 32 - bits));
}

/* (float)±1 · w[idx] for every lane (indices are always in range), the
 * weights gathered eight lanes at a time as in sk_sum_q. */
SK_FN vf sk_signed_w(const float *w, vu hi, unsigned bits) {
    vu idx = sk_srl(hi, 32 - bits);
    vf x = _mm512_insertf32x8(
        _mm512_castps256_ps512(
            _mm256_i32gather_ps(w, _mm512_castsi512_si256(idx), 4)),
        _mm256_i32gather_ps(w, _mm512_extracti32x8_epi32(idx, 1), 4), 1);
    vu flip = _mm512_andnot_si512(sk_sll(hi, bits), sk_set1(0x80000000u));
    vf one = _mm512_castsi512_ps(
        _mm512_xor_si512(_mm512_castps_si512(_mm512_set1_ps(1.0f)), flip));
    return _mm512_mul_ps(x, one);
}

/* acc + sw in the lanes of m; the others keep acc exactly. */
SK_FN vf sk_acc_f(vf acc, vf sw, vm m) {
    return _mm512_mask_add_ps(acc, m, acc, sw);
}

/* ---- keys side by side ---------------------------------------------------- */

/* Lane l's row starts l · row bytes into the rows. */
SK_FN vu sk_row_offsets(uint32_t row) {
    return _mm512_mullo_epi32(
        _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
        sk_set1(row));
}
SK_FN vu sk_gather_win(const uint8_t *rows, vu offs, vm m) {
    return _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), m, offs, rows,
                                       1);
}
/* The window s positions after g0's: shifts past 31 give zero. */
SK_FN vu sk_window_between(vu g0, vu g4, uint32_t s) {
    return _mm512_or_si512(sk_srl(g0, 8 * s), sk_sll(g4, 32 - 8 * s));
}

#include "learned/score_kernel.h"

const amq__score_kernels amq__score_avx512 = {
    .name = "avx512",
    .lanes = SK_W,
    .dot_q = sk_dot_q,
    .dot_f = sk_dot_f,
    .batch_f = sk_batch_f,
};
#endif
