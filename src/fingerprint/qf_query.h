/*
 * qf_query.h — the pieces of the quotient filter's one-key query kernel
 * that every table of the family shares, whatever its slots hold (qf
 * remainders, cqf counters, a maplet's remainder and value): popcount and
 * select with the instruction set fixed at compile time, the field
 * pattern of each slot width, and run q's slots read as one word from q's
 * block. qf_ops.c ("the one-key query kernels") describes the word-wide
 * compare these feed; the maplet's kernels (maplet/mqf_ops.c) mask the
 * value bits out of each field first.
 *
 * Everything is inline and always inlined: a kernel compiled with
 * POPCNT/BMI2 (QF_ISA) turns popcount and select into single
 * instructions, and its answer waits on as few instructions as possible.
 */
#ifndef AMQ_SRC_FINGERPRINT_QF_QUERY_H
#define AMQ_SRC_FINGERPRINT_QF_QUERY_H

#include "fingerprint/qf_block.h"

/* lo for widths 0..63: a 1 at bit k*w for every k*w < 64 (compile-time). */
#define QF_BIT(w, k) ((k) * (w) < 64 ? 1ULL << ((k) * (w) % 64) : 0)
#define QF_B8(w, k)                                                            \
    (QF_BIT(w, k) | QF_BIT(w, k + 1) | QF_BIT(w, k + 2) | QF_BIT(w, k + 3) |   \
     QF_BIT(w, k + 4) | QF_BIT(w, k + 5) | QF_BIT(w, k + 6) |                  \
     QF_BIT(w, k + 7))
#define QF_REP(w)                                                              \
    (QF_B8(w, 0) | QF_B8(w, 8) | QF_B8(w, 16) | QF_B8(w, 24) | QF_B8(w, 32) |  \
     QF_B8(w, 40) | QF_B8(w, 48) | QF_B8(w, 56))
#define QF_REP8(w)                                                             \
    QF_REP(w), QF_REP(w + 1), QF_REP(w + 2), QF_REP(w + 3), QF_REP(w + 4),     \
        QF_REP(w + 5), QF_REP(w + 6), QF_REP(w + 7)
static const uint64_t qf_fields[64] = {QF_REP8(0),  QF_REP8(8),  QF_REP8(16),
                                       QF_REP8(24), QF_REP8(32), QF_REP8(40),
                                       QF_REP8(48), QF_REP8(56)};

/* isa: compiled with POPCNT/BMI2 (a constant after inlining). */
static inline __attribute__((always_inline)) uint64_t pc_k(const amq_qf *f,
                                                           uint64_t x,
                                                           bool isa) {
    return isa ? popcnt_hw(x) : popcnt(f, x);
}
static inline __attribute__((always_inline)) uint64_t sel_k(const amq_qf *f,
                                                            uint64_t x,
                                                            uint64_t k,
                                                            bool isa) {
#if defined(AMQ__HAVE_PDEP)
    if (isa)
        return amq__select64_pdep_lt64(x, (unsigned)k);
#endif
    return select64(f, x, (unsigned)k);
}

/* Run q's slots (q occupied, its block a fast one) as one word: the bits
 * from the run's first slot on, *mask the run's len * w of them. *out
 * when the word cannot hold the run: a saturated offset, a run that ends
 * past the block, or len * w > 57 (one unaligned read from byte st*w/8
 * holds at least 57 bits of the slots); the caller then takes a slower
 * path and ignores the word. No branch: the selects and the read wait
 * for the block's lines, the answer's test comes after. */
static inline __attribute__((always_inline)) uint64_t run_word(
    const amq_qf *f, uint64_t q, bool isa, uint64_t *mask, bool *out) {
    const uint8_t *p = blk(f, q >> 6);
    unsigned w = f->width, j = (unsigned)(q & 63);
    uint64_t o = p[0], occ = amq__get_u64(p + 1);
    uint64_t ends = amq__get_u64(p + 9) & (~0ULL << (o & 63));
    uint64_t d = pc_k(f, occ & ((1ULL << j) - 1), isa);
    /* run q starts after the d-th run end at or after o (at o if d = 0):
     * the d-th set bit of the ends moved up one, with o's bit below them;
     * it ends at the (d+1)-th run end */
    uint64_t st = sel_k(f, (ends << 1) | (1ULL << (o & 63)), d, isa);
    uint64_t en = sel_k(f, ends, d, isa) + 1;
    st = st > j ? st : j;
    uint64_t len = en - st, bit = st * w;
    *out = (o >= 64) | (pc_k(f, ends, isa) <= d) | (len * w > 57);
    *mask = (1ULL << ((len * w) & 63)) - 1;
    return amq__get_u64(p + QF_HDR + (bit >> 3)) >> (bit & 7);
}

#endif
