/*
 * qf_vbmi.h — the quotient family's quick negative test on a CPU with
 * AVX-512 VBMI: may run q hold a slot whose bits under km equal key? It
 * reads q's block once, with no select, and answers "no" for most absent
 * keys; a "maybe" goes on to the exact run test. The qf asks it with
 * (r, wmask), the maplet with (rem << v, rmask << v): its value bits are
 * masked off.
 *
 * The slots of q's block are spread one to a lane and compared at once:
 *   - up to 8 bits: one byte lane per slot, one register for 64 slots
 *     (VPERMB puts the w bytes holding slots 8L..8L+7 in qword L, where
 *     slot 8L starts at bit 0; VPMULTISHIFTQB takes slot 8L+m from bit
 *     m*w);
 *   - 9 to 16 bits: one word lane per slot, 32 slots a register, two
 *     registers a block. Qword L of half H holds slots 32H+4L..32H+4L+3;
 *     they start at bit (32H+4L)w, which is byte 4wH + floor(Lw/2) and
 *     then bit 4(Lw mod 2), so the four slots end within 4 + 4w <= 64
 *     bits of the qword's first byte (w = 16 starts on a byte). VPERMI2B
 *     fetches those bytes from the block's 8w bytes of slots (two
 *     registers), and VPMULTISHIFTQB takes each slot's low and high byte;
 *     the one bit that can wrap around the qword (w = 15) lands above the
 *     slot, where km has no bit.
 * Then the key can be in run q only if
 *   - q is occupied, and
 *   - a slot at or after q's (j = q mod 64: run q starts at or after j)
 *     matches, or run q spills past the block.
 * Run q spills only if the next block's offset o' exceeds a, the
 * quotients of the block after q: the a runs after run q take a slot each
 * before end(64b + 63) = 64(b + 1) + o'; a saturated o' (255) exceeds
 * any a, and an offset o >= 64 of q's own block makes run q spill, hence
 * o' > a too. At r = 7 and 95% load, 25% of absent keys pass (13% match
 * a slot at or after j, 14% have o' > a). ~20 instructions wait for the
 * lines instead of ~50 (qf_ops.c, "the one-key query kernels").
 *
 * The caller checks that q's block is a fast one (not the table's last)
 * and that the width is at most 16, and prefetched the block.
 */
#ifndef AMQ_SRC_FINGERPRINT_QF_VBMI_H
#define AMQ_SRC_FINGERPRINT_QF_VBMI_H

#include "fingerprint/qf_block.h"

#if defined(__x86_64__)
#define QF_VBMI                                                                \
    __attribute__((flatten, target("popcnt,bmi,bmi2,avx512f,avx512bw,"         \
                                   "avx512vbmi")))

/* The lane tables (qf_block.c): byte lanes for widths 0..8, word lanes
 * for 9..16 (row w - 9; the second half's bytes are 4w further on). */
extern const _Alignas(64) uint8_t amq__qf_perm8[9][64];
extern const _Alignas(64) uint8_t amq__qf_shift8[9][64];
extern const _Alignas(64) uint8_t amq__qf_perm16[8][64];
extern const _Alignas(64) uint8_t amq__qf_shift16[8][64];

/* The slots of block p (at p + QF_HDR) that match key under km: bit i
 * for slot i. */
QF_VBMI static inline uint64_t qf_vbmi_matches(const uint8_t *p, unsigned w,
                                               uint64_t key, uint64_t km) {
    const uint8_t *s = p + QF_HDR;
    if (w <= 8) {
        __m512i v = _mm512_maskz_loadu_epi8(_bzhi_u64(~0ULL, 8 * w), s);
        v = _mm512_permutexvar_epi8(_mm512_load_si512(amq__qf_perm8[w]), v);
        v = _mm512_multishift_epi64_epi8(_mm512_load_si512(amq__qf_shift8[w]),
                                         v);
        v = _mm512_xor_si512(v, _mm512_set1_epi8((char)key));
        return _mm512_testn_epi8_mask(v, _mm512_set1_epi8((char)km));
    }
    __m512i a = _mm512_loadu_si512((const void *)s);
    __m512i b = _mm512_maskz_loadu_epi8(_bzhi_u64(~0ULL, 8 * w - 64), s + 64);
    __m512i idx = _mm512_load_si512(amq__qf_perm16[w - 9]);
    __m512i sh = _mm512_load_si512(amq__qf_shift16[w - 9]);
    __m512i lo = _mm512_permutex2var_epi8(a, idx, b);
    __m512i hi = _mm512_permutex2var_epi8(
        a, _mm512_add_epi8(idx, _mm512_set1_epi8((char)(4 * w))), b);
    __m512i k = _mm512_set1_epi16((short)key), m = _mm512_set1_epi16((short)km);
    lo = _mm512_xor_si512(_mm512_multishift_epi64_epi8(sh, lo), k);
    hi = _mm512_xor_si512(_mm512_multishift_epi64_epi8(sh, hi), k);
    return (uint64_t)_mm512_testn_epi16_mask(lo, m) |
           (uint64_t)_mm512_testn_epi16_mask(hi, m) << 32;
}

/* May run q hold a slot matching key under km? false: it holds none. */
QF_VBMI static inline bool qf_vbmi_may(const amq_qf *f, uint64_t q,
                                       uint64_t key, uint64_t km) {
    const uint8_t *p = blk(f, q >> 6);
    unsigned j = (unsigned)(q & 63);
    uint64_t eq = qf_vbmi_matches(p, f->width, key, km);
    uint64_t occ = amq__get_u64(p + 1) >> j;
    uint64_t a = popcnt_hw(occ >> 1), o_next = p[f->bsize];
    return (occ & 1) & (((eq >> j) != 0) | (o_next > a));
}

/* This CPU runs the test, and f's slots fit it (use_pdep: the CPU has
 * BMI2 and f is not in scalar mode). */
static inline bool qf_vbmi_fits(const amq_qf *f) {
    return f->use_pdep && f->width <= 16 && f->fast_blocks > 0 &&
           amq__cpu_has_vbmi();
}
#else
static inline bool qf_vbmi_fits(const amq_qf *f) {
    (void)f;
    return false;
}
#endif

#endif
