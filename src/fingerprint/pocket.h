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
 * Everything here is inline.
 */
#ifndef AMQ_SRC_FINGERPRINT_POCKET_H
#define AMQ_SRC_FINGERPRINT_POCKET_H

#include "core/bits.h"

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

AMQ__PK_INLINE unsigned amq__pk_fill128(amq__u128 md, unsigned nlists,
                                        bool bmi) {
    uint64_t l = amq__pk_lo(md), h = amq__pk_hi(md);
    uint64_t mh = amq__pk_mask(h != 0);
    unsigned top = ((amq__pk_hibit(h, bmi) + 64) & (unsigned)mh) |
                   (amq__pk_hibit(l, bmi) & (unsigned)~mh);
    return top + 1 - nlists;
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

AMQ__PK_INLINE amq__u128 amq__pk_ins128(amq__u128 md, unsigned pos) {
    amq__u128 low = ((amq__u128)1 << pos) - 1;
    return (md & low) | ((md & ~low) << 1);
}

AMQ__PK_INLINE amq__u128 amq__pk_del128(amq__u128 md, unsigned pos) {
    amq__u128 low = ((amq__u128)1 << pos) - 1;
    return (md & low) | ((md >> 1) & ~low);
}

#endif
