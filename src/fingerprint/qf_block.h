/*
 * qf_block.h — the quotient filter's table: block fields, slots, moves of
 * slots a word at a time, and rank/select over the table (the layout and
 * the invariants are in qf_impl.h).
 *
 * Everything here is inline: the operations in qf_ops.c are compiled twice
 * (any CPU; POPCNT/BMI2), and each copy flattens these helpers into itself
 * so popcount and select become single instructions in the second. The
 * rare, long paths (a run that spills past its block, a saturated offset)
 * are static noinline functions here, and select in a word without BMI2 is
 * out of line in qf_block.c.
 */
#ifndef AMQ_SRC_FINGERPRINT_QF_BLOCK_H
#define AMQ_SRC_FINGERPRINT_QF_BLOCK_H

#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "fingerprint/qf_impl.h"
#include "fingerprint/qf_lock.h"

#if defined(__x86_64__)
__attribute__((target("popcnt"))) static inline uint64_t popcnt_hw(uint64_t x) {
    return (uint64_t)__builtin_popcountll(x);
}
#else
static inline uint64_t popcnt_hw(uint64_t x) { return amq__popcount64(x); }
#endif

/* Select with PDEP + TZCNT (BMI2, core/bits.h); inline, so the operations
 * compiled for POPCNT/BMI2 (qf_ops.c) take it as two instructions. */
#if defined(AMQ__HAVE_PDEP)
__attribute__((target("bmi,bmi2"))) static inline uint64_t select64_pdep(
    uint64_t x, unsigned k) {
    return amq__select64_pdep(x, k);
}
#else
static inline uint64_t select64_pdep(uint64_t x, unsigned k) {
    return amq__qf_select64_scalar(x, k);
}
#endif

/* Machines with BMI2 all have POPCNT; the portable build may not use it. */
static inline uint64_t popcnt(const amq_qf *f, uint64_t x) {
    return f->use_pdep ? popcnt_hw(x) : amq__popcount64(x);
}

static inline uint64_t select64(const amq_qf *f, uint64_t x, unsigned k) {
    return f->use_pdep ? select64_pdep(x, k) : amq__qf_select64_scalar(x, k);
}

/* ---- block fields and slots ---------------------------------------------- */

static inline uint8_t *blk(const amq_qf *f, uint64_t b) {
    return f->data + (size_t)b * f->bsize;
}
static inline unsigned off_get(const amq_qf *f, uint64_t b) {
    return blk(f, b)[0];
}
static inline void off_set(amq_qf *f, uint64_t b, uint64_t v) {
    blk(f, b)[0] = (uint8_t)(v < QF_OFF_SAT ? v : QF_OFF_SAT);
}
static inline uint64_t occ_word(const amq_qf *f, uint64_t b) {
    return amq__get_u64(blk(f, b) + 1);
}
static inline uint64_t rend_word(const amq_qf *f, uint64_t b) {
    return amq__get_u64(blk(f, b) + 9);
}
static inline void rend_word_set(amq_qf *f, uint64_t b, uint64_t w) {
    amq__put_u64(blk(f, b) + 9, w);
}
static inline bool occ_get(const amq_qf *f, uint64_t q) {
    return (occ_word(f, q >> 6) >> (q & 63)) & 1;
}
static inline bool rend_get(const amq_qf *f, uint64_t i) {
    return (rend_word(f, i >> 6) >> (i & 63)) & 1;
}
static inline void bit_put(uint8_t *p, unsigned j, bool v) {
    uint64_t w = amq__get_u64(p);
    w = v ? w | (1ULL << j) : w & ~(1ULL << j);
    amq__put_u64(p, w);
}
static inline void occ_put(amq_qf *f, uint64_t q, bool v) {
    bit_put(blk(f, q >> 6) + 1, (unsigned)(q & 63), v);
}
static inline void rend_put(amq_qf *f, uint64_t i, bool v) {
    bit_put(blk(f, i >> 6) + 9, (unsigned)(i & 63), v);
}

/* Byte index and shift of slot i's first bit. */
static inline size_t slot_at(const amq_qf *f, uint64_t i, unsigned *sh) {
    uint64_t bit = (i & 63) * f->width;
    *sh = (unsigned)(bit & 7);
    return (size_t)(i >> 6) * f->bsize + QF_HDR + (size_t)(bit >> 3);
}

/* Slots of width <= 57 fit one unaligned 64-bit word; wider ones, and the
 * last bytes of a borrowed (unpadded) table, take the byte path. */
static inline uint64_t slot_get_slow(const amq_qf *f, size_t at, unsigned sh) {
    unsigned __int128 acc = 0;
    if (at + 16 <= f->o.table_bytes) {
        memcpy(&acc, f->data + at, 16);
        return (uint64_t)(acc >> sh) & f->wmask;
    }
    unsigned nbytes = (sh + f->width + 7) / 8;
    for (unsigned k = 0; k < nbytes; k++)
        acc |= (unsigned __int128)f->data[at + k] << (8 * k);
    return (uint64_t)(acc >> sh) & f->wmask;
}

static inline uint64_t slot_get(const amq_qf *f, uint64_t i) {
    unsigned sh;
    size_t at = slot_at(f, i, &sh);
    if (at + 8 <= f->o.table_bytes && sh + f->width <= 64)
        return (amq__get_u64(f->data + at) >> sh) & f->wmask;
    return slot_get_slow(f, at, sh);
}

static inline void slot_set(amq_qf *f, uint64_t i, uint64_t v) {
    unsigned sh;
    size_t at = slot_at(f, i, &sh);
    if (at + 8 <= f->o.table_bytes && sh + f->width <= 64) {
        uint64_t m = f->wmask << sh, x = amq__get_u64(f->data + at);
        amq__put_u64(f->data + at, (x & ~m) | ((v << sh) & m));
        return;
    }
    unsigned nbytes = (sh + f->width + 7) / 8;
    unsigned __int128 mask = (unsigned __int128)f->wmask << sh;
    unsigned __int128 acc = 0;
    for (unsigned k = 0; k < nbytes; k++)
        acc |= (unsigned __int128)f->data[at + k] << (8 * k);
    acc = (acc & ~mask) | (((unsigned __int128)v << sh) & mask);
    for (unsigned k = 0; k < nbytes; k++)
        f->data[at + k] = (uint8_t)(acc >> (8 * k));
}

/* ---- word-level moves ------------------------------------------------------ */

/* Bits [a, b) of a 64-bit word, 0 <= a <= b <= 64. */
static inline uint64_t span_mask(uint64_t a, uint64_t b) {
    uint64_t hi = b >= 64 ? ~0ULL : (1ULL << b) - 1;
    return hi & (~0ULL << a);
}

/* In the bit string at p (little-endian 64-bit words), move bits [lo, hi)
 * up by s (0 < s < 64) to [lo + s, hi + s); bits [lo, lo + s) keep their
 * value. Words are rewritten from the top, each from its old value and its
 * old lower neighbour. */
static inline void bits_up(uint8_t *p, uint64_t lo, uint64_t hi, unsigned s) {
    uint64_t dlo = lo + s, dhi = hi + s;
    if (hi <= lo)
        return;
    for (uint64_t k = (dhi - 1) >> 6;; k--) {
        uint64_t cur = amq__get_u64(p + 8 * k);
        uint64_t below = k > 0 ? amq__get_u64(p + 8 * (k - 1)) : 0;
        uint64_t v = (cur << s) | (below >> (64 - s));
        uint64_t a = dlo > 64 * k ? dlo - 64 * k : 0;
        uint64_t b = dhi - 64 * k < 64 ? dhi - 64 * k : 64;
        uint64_t m = span_mask(a, b);
        amq__put_u64(p + 8 * k, (cur & ~m) | (v & m));
        if (64 * k <= dlo)
            return;
    }
}

/* Move bits [lo + s, hi + s) down to [lo, hi) in a string of `words`
 * words; the top s bits of the range keep their value. */
static inline void bits_down(uint8_t *p, uint64_t lo, uint64_t hi, unsigned s,
                             uint64_t words) {
    if (hi <= lo)
        return;
    for (uint64_t k = lo >> 6; 64 * k < hi; k++) {
        uint64_t cur = amq__get_u64(p + 8 * k);
        uint64_t above = k + 1 < words ? amq__get_u64(p + 8 * (k + 1)) : 0;
        uint64_t v = (cur >> s) | (above << (64 - s));
        uint64_t a = lo > 64 * k ? lo - 64 * k : 0;
        uint64_t b = hi - 64 * k < 64 ? hi - 64 * k : 64;
        uint64_t m = span_mask(a, b);
        amq__put_u64(p + 8 * k, (cur & ~m) | (v & m));
    }
}

/* The same for any shift s >= 1 (a slot wider than 63 bits moves in
 * steps of at most 63). */
static inline void bits_up_by(uint8_t *p, uint64_t lo, uint64_t hi,
                              unsigned s) {
    while (s > 63) {
        bits_up(p, lo, hi, 63);
        lo += 63, hi += 63, s -= 63;
    }
    bits_up(p, lo, hi, s);
}

static inline void bits_down_by(uint8_t *p, uint64_t lo, uint64_t hi,
                                unsigned s, uint64_t words) {
    unsigned steps = (s - 1) / 63, last = s - 63 * steps;
    bits_down(p, lo + 63 * steps, hi + 63 * steps, last, words);
    while (steps-- > 0)
        bits_down(p, lo + 63 * steps, hi + 63 * steps, 63, words);
}

/* ---- slots wider than 64 bits (maplets with wide values) ----------------- */

/* n <= 64 bits at bit `bit` of block b's slot area (w 64-bit words, so a
 * field that crosses a word boundary always has its next word). */
static inline uint64_t area_get(const amq_qf *f, uint64_t b, uint64_t bit,
                                unsigned n) {
    const uint8_t *p = blk(f, b) + QF_HDR + 8 * (size_t)(bit >> 6);
    unsigned o = (unsigned)(bit & 63);
    uint64_t v = amq__get_u64(p) >> o;
    if (o + n > 64)
        v |= amq__get_u64(p + 8) << (64 - o);
    return n == 64 ? v : v & ((1ULL << n) - 1);
}

static inline void area_put(amq_qf *f, uint64_t b, uint64_t bit, unsigned n,
                            uint64_t v) {
    uint8_t *p = blk(f, b) + QF_HDR + 8 * (size_t)(bit >> 6);
    unsigned o = (unsigned)(bit & 63);
    uint64_t m = n == 64 ? ~0ULL : (1ULL << n) - 1, x = amq__get_u64(p);
    v &= m;
    amq__put_u64(p, (x & ~(m << o)) | (v << o));
    if (o + n > 64) {
        uint64_t m2 = m >> (64 - o), y = amq__get_u64(p + 8);
        amq__put_u64(p + 8, (y & ~m2) | (v >> (64 - o)));
    }
}

/* Slot i as a 128-bit number, and back: any width up to 128. */
static inline unsigned __int128 slot_get2(const amq_qf *f, uint64_t i) {
    if (f->width <= 64)
        return slot_get(f, i);
    uint64_t bit = (i & 63) * f->width;
    uint64_t lo = area_get(f, i >> 6, bit, 64);
    uint64_t hi = area_get(f, i >> 6, bit + 64, f->width - 64);
    return (unsigned __int128)hi << 64 | lo;
}

static inline void slot_set2(amq_qf *f, uint64_t i, unsigned __int128 v) {
    if (f->width <= 64) {
        slot_set(f, i, (uint64_t)v);
        return;
    }
    uint64_t bit = (i & 63) * f->width;
    area_put(f, i >> 6, bit, 64, (uint64_t)v);
    area_put(f, i >> 6, bit + 64, f->width - 64, (uint64_t)(v >> 64));
}

static inline void move_slot(amq_qf *f, uint64_t from, uint64_t to) {
    if (f->width > 64)
        slot_set2(f, to, slot_get2(f, from));
    else
        slot_set(f, to, slot_get(f, from));
    rend_put(f, to, rend_get(f, from));
}

/* Slots (and run-end bits) [a, e) move to [a + 1, e + 1); slot a keeps its
 * old contents. Reference: one slot at a time. */
static inline void shift_up_ref(amq_qf *f, uint64_t a, uint64_t e) {
    for (uint64_t k = e; k > a; k--)
        move_slot(f, k - 1, k);
}

static inline void shift_up(amq_qf *f, uint64_t a, uint64_t e) {
    if (f->scalar) {
        shift_up_ref(f, a, e);
        return;
    }
    if (e <= a)
        return;
    uint64_t ab = a >> 6, eb = e >> 6;
    for (uint64_t b = eb;; b--) {
        uint64_t lo = b == ab ? a & 63 : 0, hi = b == eb ? e & 63 : 63;
        if (lo < hi) {
            bits_up_by(blk(f, b) + QF_HDR, lo * f->width, hi * f->width,
                       f->width);
            uint64_t w = rend_word(f, b), m = span_mask(lo + 1, hi + 1);
            rend_word_set(f, b, (w & ~m) | ((w << 1) & m));
        }
        if (b == ab)
            return;
        move_slot(f, b * 64 - 1, b * 64); /* carry across the boundary */
    }
}

/* Slots [a + 1, e) move to [a, e - 1) and slot e - 1 is cleared. */
static inline void shift_down(amq_qf *f, uint64_t a, uint64_t e) {
    if (f->scalar) {
        for (uint64_t k = a; k + 1 < e; k++)
            move_slot(f, k + 1, k);
    } else {
        uint64_t ab = a >> 6, lb = (e - 1) >> 6;
        for (uint64_t b = ab; b <= lb; b++) {
            uint64_t lo = b == ab ? a & 63 : 0;
            uint64_t top = b == lb ? (e - 1) & 63 : 63;
            if (lo < top) {
                bits_down_by(blk(f, b) + QF_HDR, lo * f->width, top * f->width,
                             f->width, f->width);
                uint64_t w = rend_word(f, b), m = span_mask(lo, top);
                rend_word_set(f, b, (w & ~m) | ((w >> 1) & m));
            }
            if (b < lb)
                move_slot(f, b * 64 + 64, b * 64 + 63);
        }
    }
    slot_set2(f, e - 1, 0);
    rend_put(f, e - 1, false);
}

/* ---- rank and select over the table -------------------------------------- */

/* The (d >= 1)-th run end at or after slot `from`, looking only at blocks
 * below hib; hib * 64 if there is none there. The first word is inline;
 * runs that spill into later blocks take this loop. Out of line but
 * static: the compiler still sees that it keeps no pointer, so callers'
 * locals stay in registers (unused in files that never select). */
static __attribute__((noinline, unused)) uint64_t select_rend_far(
    const amq_qf *f, uint64_t b, uint64_t d, uint64_t hib) {
    for (;;) {
        if (++b >= hib)
            return hib * 64;
        uint64_t w = rend_word(f, b), c = popcnt(f, w);
        if (d <= c)
            return b * 64 + select64(f, w, (unsigned)(d - 1));
        d -= c;
    }
}

static inline uint64_t select_rend(const amq_qf *f, uint64_t from, uint64_t d,
                                   uint64_t hib) {
    uint64_t b = from >> 6;
    if (b >= hib)
        return hib * 64;
    uint64_t w = rend_word(f, b) & (~0ULL << (from & 63));
    uint64_t c = popcnt(f, w);
    if (d <= c)
        return b * 64 + select64(f, w, (unsigned)(d - 1));
    return select_rend_far(f, b, d - c, hib);
}

/* First run end at or after `from` (below block hib), else hib * 64. */
static inline uint64_t next_rend(const amq_qf *f, uint64_t from, uint64_t hib) {
    uint64_t b = from >> 6;
    if (b >= hib)
        return hib * 64;
    uint64_t w = rend_word(f, b) & (~0ULL << (from & 63));
    while (w == 0) {
        if (++b >= hib)
            return hib * 64;
        w = rend_word(f, b);
    }
    return b * 64 + (uint64_t)__builtin_ctzll(w);
}

/* end(x) given block b = x / 64 and its true offset o; QF_NOWHERE when the
 * run ends lie past block hib. */
static inline uint64_t end_with(const amq_qf *f, uint64_t b, uint64_t o,
                                uint64_t x, uint64_t hib) {
    uint64_t base = b * 64;
    unsigned j = (unsigned)(x - base);
    uint64_t occ = occ_word(f, b) & (j == 63 ? ~0ULL : (2ULL << j) - 1);
    uint64_t d = popcnt(f, occ);
    if (d == 0)
        return base + o;
    uint64_t e = select_rend(f, base + o, d, hib);
    return e < hib * 64 ? e + 1 : QF_NOWHERE;
}

/* Offset of block k+1 from block k's true offset t (QF_NOWHERE if it
 * cannot be known below block hib). */
static inline uint64_t next_off(const amq_qf *f, uint64_t k, uint64_t t,
                                uint64_t hib) {
    uint64_t e = end_with(f, k, t, k * 64 + 63, hib), base = (k + 1) * 64;
    if (e == QF_NOWHERE)
        return QF_NOWHERE;
    return e > base ? e - base : 0;
}

/* A saturated offset: recompute forward from the nearest unsaturated block
 * before b, which must lie in the window (false otherwise). Rare: out of
 * line, static for the reason given at select_rend_far. */
static QF_COLD __attribute__((unused)) bool true_off_far(const amq_qf *f,
                                                         uint64_t b,
                                                         const qwin *w,
                                                         uint64_t *out) {
    uint64_t j = b, t;
    while (j > w->lob && off_get(f, j) == QF_OFF_SAT)
        j--;
    if (off_get(f, j) == QF_OFF_SAT)
        return false;
    for (t = off_get(f, j); j < b && t != QF_NOWHERE; j++)
        t = next_off(f, j, t, w->hib);
    *out = t;
    return t != QF_NOWHERE;
}

/* True offset of block b: the stored one unless saturated. */
static inline bool true_off(const amq_qf *f, uint64_t b, const qwin *w,
                            uint64_t *out) {
    uint64_t t = off_get(f, b);
    if (t < QF_OFF_SAT) {
        *out = t;
        return true;
    }
    return true_off_far(f, b, w, out);
}

/* end(x) within the window, or QF_NOWHERE. */
static inline uint64_t end_of(const amq_qf *f, uint64_t x, const qwin *w) {
    uint64_t o;
    if (!true_off(f, x >> 6, w, &o))
        return QF_NOWHERE;
    return end_with(f, x >> 6, o, x, w->hib);
}

/* A lower bound on end(i) - i from i's block alone (no select, and a
 * saturated offset counts as 255, itself a lower bound), which is 0 only
 * when slot i is free. With d quotients of the block at or below i and o
 * its offset: if o > j (= i mod 64) those d runs start at or after 64b + o,
 * so end(i) >= 64b + o + d; else, with c run ends in [64b + o, i), slot i
 * is free iff c >= d, and otherwise the d - c remaining ends lie at or
 * after i. */
static inline uint64_t used_ahead(const amq_qf *f, uint64_t i) {
    uint64_t b = i >> 6, o = off_get(f, b);
    unsigned j = (unsigned)(i & 63);
    uint64_t occ = occ_word(f, b) & (j == 63 ? ~0ULL : (2ULL << j) - 1);
    uint64_t d = popcnt(f, occ);
    if (o > j)
        return o - j + d;
    uint64_t c = popcnt(f, rend_word(f, b) & span_mask(o, j));
    return d > c ? d - c : 0;
}

/* First free slot at or after slot 64b + i (i >= the block's offset o)
 * within block b, as a block-local index; 64 if there is none there or it
 * depends on later blocks. Slot i is free iff end(i) <= i, and end(i) - 1
 * is the d-th run end at or after o (d = occupied quotients <= i). */
static inline uint64_t free_in_block(const amq_qf *f, uint64_t b, uint64_t i) {
    const uint8_t *p = blk(f, b);
    uint64_t o = p[0], occ = amq__get_u64(p + 1);
    uint64_t ends = amq__get_u64(p + 9) & (~0ULL << (o & 63));
    uint64_t total = popcnt(f, ends);
    while (i < 64) {
        uint64_t d = popcnt(f, occ & (i == 63 ? ~0ULL : (2ULL << i) - 1));
        if (d == 0)
            return i;
        if (d > total)
            return 64;
        uint64_t e = select64(f, ends, (unsigned)(d - 1));
        if (e < i)
            return i;
        i = e + 1;
    }
    return 64;
}

/* First free slot at or after i; T when the table is full from i on;
 * QF_NOWHERE when the answer lies past the window. */
static inline uint64_t first_free(const amq_qf *f, uint64_t i, const qwin *w) {
    while (i < w->hib * 64) {
        uint64_t t = used_ahead(f, i);
        if (t == 0)
            return i;
        i += t;
    }
    return w->hib == f->nblocks ? f->tslots : QF_NOWHERE;
}

/* Where the cluster shifts left after slot p is removed: the first slot
 * s > p that is free or starts a run at its home (end(s-1) <= s); T if
 * the cluster runs to the end of the table; QF_NOWHERE past the window. */
static inline uint64_t stretch_end(const amq_qf *f, uint64_t p, const qwin *w) {
    uint64_t s = p + 1;
    while (s < w->hib * 64) {
        uint64_t e = end_of(f, s - 1, w);
        if (e == QF_NOWHERE)
            return QF_NOWHERE;
        if (e <= s)
            return s;
        s = e;
    }
    return w->hib == f->nblocks ? f->tslots : QF_NOWHERE;
}

/* First occupied quotient in [from, limit), or limit. */
static inline uint64_t next_occupied(const amq_qf *f, uint64_t from,
                                     uint64_t limit) {
    if (limit > f->nslots)
        limit = f->nslots;
    while (from < limit) {
        uint64_t w = occ_word(f, from >> 6) & (~0ULL << (from & 63));
        if (w != 0) {
            uint64_t q = (from & ~63ULL) + (uint64_t)__builtin_ctzll(w);
            return q < limit ? q : limit;
        }
        from = (from | 63) + 1;
    }
    return limit;
}

/* ---- writing a table in fingerprint order ----------------------------------- */

/* Enter run q (a later quotient than the current run's, or the same):
 * end the previous run and start q's at max(q, the next slot). */
static inline void writer_enter(amq_qf *f, qf_writer *wr, uint64_t q) {
    if (wr->run && q == wr->q)
        return;
    if (wr->run)
        rend_put(f, wr->pos - 1, true);
    wr->pos = q > wr->pos ? q : wr->pos;
    wr->q = q;
    wr->run = true;
    occ_put(f, q, true);
}

/* ---- fingerprints ---------------------------------------------------------- */

static inline uint64_t quotient_of(const amq_qf *f, uint64_t h) {
    return (uint64_t)(((unsigned __int128)h * f->nslots) >> 64);
}

static inline void split(const amq_qf *f, uint64_t h, uint64_t *q,
                         uint64_t *r) {
    unsigned __int128 p = (unsigned __int128)h * f->nslots;
    *q = (uint64_t)(p >> 64);
    *r = (uint64_t)p >> (64 - f->rbits);
}

/* quotient << r | remainder = floor(h N 2^r / 2^64). */
static inline uint64_t fingerprint_of(const amq_qf *f, uint64_t h) {
    uint64_t q, r;
    split(f, h, &q, &r);
    return q << f->rbits | r;
}

/* Every line of q's block: the header and the run's slots then arrive
 * together instead of one miss after the other. */
static inline void prefetch_block(const amq_qf *f, uint64_t q) {
    const uint8_t *b = blk(f, q >> 6);
    amq__prefetch(b);
    amq__prefetch(b + 64);
    if (f->bsize > 128)
        amq__prefetch(b + QF_HDR + (((q & 63) * f->width) >> 3));
}

#endif
