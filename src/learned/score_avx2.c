/*
 * score_avx2.c — the scorer's kernels with AVX2: eight 32-bit lanes, a
 * lane mask is a vector of all-ones or zero lanes. The kernels are
 * score_kernel.h's (the hash without 64-bit multiplies, the list of one
 * key, float keys side by side, why each gives features.c's score bit for
 * bit); this file gives them their primitives. AVX2 has no byte-masked
 * loads, so a key is framed in a buffer (STX key ETX, zeros after) and
 * read from there. model.c chooses these kernels when amq__cpu_has_avx2()
 * says so; test_score holds them against the scalar reference.
 */
#include "learned/learned.h"

#if defined(__x86_64__)
#include <immintrin.h>
#include <string.h>

#define SK_W 8
#define SK_ATTR __attribute__((target("avx2,bmi2,popcnt")))
#define SK_FN SK_ATTR __attribute__((always_inline)) static inline
#define SK_ENTRY SK_ATTR static

typedef __m256i vu;
typedef __m256 vf;
typedef __m256i vm;

SK_FN vu sk_set1(uint32_t x) { return _mm256_set1_epi32((int)x); }
SK_FN vf sk_setf0(void) { return _mm256_setzero_ps(); }
SK_FN vu sk_and(vu a, vu b) { return _mm256_and_si256(a, b); }
SK_FN vu sk_add(vu a, vu b) { return _mm256_add_epi32(a, b); }
SK_FN vu sk_sub(vu a, vu b) { return _mm256_sub_epi32(a, b); }
SK_FN vf sk_addf(vf a, vf b) { return _mm256_add_ps(a, b); }
SK_FN vu sk_load(const uint32_t *p) {
    return _mm256_loadu_si256((const __m256i *)p);
}
SK_FN void sk_store(uint32_t *p, vu v) { _mm256_storeu_si256((__m256i *)p, v); }
SK_FN void sk_storef(float *p, vf v) { _mm256_storeu_ps(p, v); }
SK_FN vu sk_srl(vu v, unsigned c) {
    return _mm256_srl_epi32(v, _mm_cvtsi32_si128((int)c));
}
SK_FN vu sk_sll(vu v, unsigned c) {
    return _mm256_sll_epi32(v, _mm_cvtsi32_si128((int)c));
}

/* hi32(x · c): the even lanes' products, then the odd lanes'. */
SK_FN vu sk_mulhi(vu x, uint32_t c) {
    const vu l = sk_set1(c);
    vu even = _mm256_mul_epu32(x, l);
    vu odd = _mm256_mul_epu32(_mm256_srli_epi64(x, 32), l);
    return _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
}
SK_FN vu sk_mullo(vu x, uint32_t c) {
    return _mm256_mullo_epi32(x, sk_set1(c));
}

SK_FN vm sk_first(size_t n) {
    const vu iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(sk_set1((uint32_t)n), iota);
}
SK_FN vm sk_gt(vu a, uint32_t b) { return _mm256_cmpgt_epi32(a, sk_set1(b)); }

/* ---- the framed key ------------------------------------------------------- */

#define SK_PAD 32 /* zeros after ETX: window loads and the class scan */

typedef struct sk_fr {
    uint8_t buf[AMQ_FEATURE_MAX_BYTES + 2 + SK_PAD];
} sk_fr;

SK_FN void sk_fr_init(sk_fr *f, const uint8_t *key, size_t len) {
    f->buf[0] = AMQ__FEAT_STX;
    if (len > 0)
        memcpy(f->buf + 1, key, len);
    f->buf[len + 1] = AMQ__FEAT_ETX;
    memset(f->buf + len + 2, 0, SK_PAD);
}

/* The key's bytes, as sk_scan wants them (padded). */
SK_FN const uint8_t *sk_fr_key(const sk_fr *f) { return f->buf + 1; }

/* Lane j: the little-endian 32-bit word at frame position i + j (each
 * 128-bit half shuffles the 16 bytes loaded at its own offset). */
SK_FN vu sk_fr_windows(const sk_fr *f, size_t i) {
    const vu ctl =
        _mm256_setr_epi8(0, 1, 2, 3, 1, 2, 3, 4, 2, 3, 4, 5, 3, 4, 5, 6, 0, 1,
                         2, 3, 1, 2, 3, 4, 2, 3, 4, 5, 3, 4, 5, 6);
    const uint8_t *p = f->buf + i;
    vu v = _mm256_loadu2_m128i((const __m128i *)(p + 4), (const __m128i *)p);
    return _mm256_shuffle_epi8(v, ctl);
}

/* amq__shape_scan with byte compares, 32 bytes at a time. k must be
 * readable, and free of digits, letters and separators, for 32 bytes
 * past len (a frame's ETX and padding are). */
SK_FN void sk_scan(const uint8_t *k, size_t len, amq__key_shape *s) {
    const __m256i c0 = _mm256_set1_epi8('0'), c9 = _mm256_set1_epi8(9);
    const __m256i ca = _mm256_set1_epi8('a'), c25 = _mm256_set1_epi8(25);
    const __m256i low = _mm256_set1_epi8(0x20);
    const __m256i sep[5] = {_mm256_set1_epi8('.'), _mm256_set1_epi8('/'),
                            _mm256_set1_epi8(':'), _mm256_set1_epi8('-'),
                            _mm256_set1_epi8('_')};
    size_t found = 0;
    memset(s, 0, sizeof *s);
    s->first = s->second = len;
    for (size_t at = 0; at < len; at += 32) {
        __m256i b = _mm256_loadu_si256((const __m256i *)(k + at));
        __m256i d = _mm256_sub_epi8(b, c0);
        __m256i l = _mm256_sub_epi8(_mm256_or_si256(b, low), ca);
        /* unsigned x <= c  <=>  min(x, c) == x */
        s->digits += (size_t)__builtin_popcount((unsigned)_mm256_movemask_epi8(
            _mm256_cmpeq_epi8(_mm256_min_epu8(d, c9), d)));
        s->letters += (size_t)__builtin_popcount((unsigned)_mm256_movemask_epi8(
            _mm256_cmpeq_epi8(_mm256_min_epu8(l, c25), l)));
        uint32_t any = 0;
        for (unsigned j = 0; j < 5; j++) {
            uint32_t m =
                (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(b, sep[j]));
            s->seps[j] += (size_t)__builtin_popcount(m);
            any |= m;
        }
        if (any == 0)
            continue;
        s->last = at + 32 - (size_t)__builtin_clz(any);
        for (; any != 0 && found < 2; found++, any &= any - 1)
            *(found == 0 ? &s->first : &s->second) =
                at + (size_t)__builtin_ctz(any);
    }
    s->len = len;
    for (unsigned j = 0; j < 5; j++)
        s->nsep += s->seps[j];
}

/* ---- weights -------------------------------------------------------------- */

/* The int8 weights of the lanes in m (0 elsewhere): the aligned word
 * holding q[idx] (idx >> 2, scale 4; the table's length is a multiple of
 * 4, so no load leaves it), its byte idx & 3 shifted to the top (by
 * 24 - 8 (idx & 3), the complement of bits 29-bits.. of hi) and
 * sign-extended down. */
SK_FN vu sk_gather_q(const int8_t *q, vu hi, unsigned bits, vm m) {
    vu word = _mm256_mask_i32gather_epi32(_mm256_setzero_si256(),
                                          (const int *)(const void *)q,
                                          sk_srl(hi, 34 - bits), m, 4);
    vu up = _mm256_andnot_si256(sk_srl(hi, 29 - bits), sk_set1(24));
    return _mm256_srai_epi32(_mm256_sllv_epi32(word, up), 24);
}

SK_FN int32_t sk_hsum(vu v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v),
                              _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
    return _mm_cvtsi128_si32(s);
}

/* Σ ±q over the list (zeros to a whole vector after it): a gather per W
 * features, the last masked to the list. The sign bit moved to bit 31 is
 * set for +1; VPSIGND negates where its second operand is negative, so
 * the negation is subtracted. */
SK_FN int32_t sk_sum_q(const uint32_t *hi, size_t total, unsigned bits,
                       const int8_t *q) {
    vu acc = sk_set1(0);
    for (size_t i = 0; i < total; i += SK_W) {
        vu h = sk_load(hi + i);
        vm live = sk_first(total - i < SK_W ? total - i : SK_W);
        vu neg_if_pos = _mm256_or_si256(sk_sll(h, bits), sk_set1(1));
        acc = _mm256_sub_epi32(
            acc, _mm256_sign_epi32(sk_gather_q(q, h, bits, live), neg_if_pos));
    }
    return sk_hsum(acc);
}

/* hi[0..W) becomes the indices, one[0..W) the factors (float)±1. */
SK_FN void sk_index_sign(uint32_t *hi, float *one, unsigned bits) {
    vu h = sk_load(hi);
    vu flip = _mm256_andnot_si256(sk_sll(h, bits), sk_set1(0x80000000u));
    _mm256_storeu_ps(one,
                     _mm256_castsi256_ps(_mm256_xor_si256(
                         _mm256_castps_si256(_mm256_set1_ps(1.0f)), flip)));
    sk_store(hi, sk_srl(h, 32 - bits));
}

/* (float)±1 · w[idx] for every lane (indices are always in range). */
SK_FN vf sk_signed_w(const float *w, vu hi, unsigned bits) {
    vf x = _mm256_i32gather_ps(w, sk_srl(hi, 32 - bits), 4);
    vu flip = _mm256_andnot_si256(sk_sll(hi, bits), sk_set1(0x80000000u));
    vf one = _mm256_castsi256_ps(
        _mm256_xor_si256(_mm256_castps_si256(_mm256_set1_ps(1.0f)), flip));
    return _mm256_mul_ps(x, one);
}

/* acc + sw in the lanes of m; the others keep acc exactly. */
SK_FN vf sk_acc_f(vf acc, vf sw, vm m) {
    return _mm256_blendv_ps(acc, _mm256_add_ps(acc, sw),
                            _mm256_castsi256_ps(m));
}

/* ---- keys side by side ---------------------------------------------------- */

/* Lane l's row starts l · row bytes into the rows. */
SK_FN vu sk_row_offsets(uint32_t row) {
    return _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                              sk_set1(row));
}
SK_FN vu sk_gather_win(const uint8_t *rows, vu offs, vm m) {
    return _mm256_mask_i32gather_epi32(
        _mm256_setzero_si256(), (const int *)(const void *)rows, offs, m, 1);
}
/* The window s positions after g0's: shifts past 31 give zero. */
SK_FN vu sk_window_between(vu g0, vu g4, uint32_t s) {
    return _mm256_or_si256(sk_srl(g0, 8 * s), sk_sll(g4, 32 - 8 * s));
}

#include "learned/score_kernel.h"

const amq__score_kernels amq__score_avx2 = {
    .name = "avx2",
    .lanes = SK_W,
    .dot_q = sk_dot_q,
    .dot_f = sk_dot_f,
    .batch_f = sk_batch_f,
};
#endif
