/*
 * quotient.c — the rank-and-select quotient filter (qf) and, in counting
 * mode, the counting quotient filter (cqf).
 *
 * Papers: Bender et al., "Don't thrash: how to cache your hash on flash"
 * (VLDB 2012) for the quotient filter; Pandey, Bender, Johnson, Patro, "A
 * general-purpose counting filter: making every bit count" (SIGMOD 2017) for
 * the rank/select metadata, the counter encoding and the per-region locks.
 * All are re-derived here; the code and the exact encoding are our own.
 *
 * Fingerprints. A 64-bit hash h becomes f = floor(h * N * 2^r / 2^64): the
 * quotient Q = f >> r is the high word of h*N (multiply-shift, so N need not
 * be a power of two) and the remainder R = f mod 2^r is the top r bits of the
 * low word. f is monotone in h, so "fingerprint order" is hash order, and
 * doubling N while dropping one remainder bit leaves every f unchanged:
 * resize needs no keys.
 *
 * Layout. T = N + E slots (E = min(N, 128) overflow slots past the last
 * home slot) in blocks of 64; block b is 17 + 8w bytes (w = slot width):
 *
 *   +--------+---------------+---------------+---------------------------+
 *   | off u8 | occupieds u64 | runends u64   | 64 slots x w bits, packed |
 *   +--------+---------------+---------------+---------------------------+
 *
 *   occupieds bit j : some key has quotient 64b + j
 *   runends bit j   : slot 64b + j ends a run
 *   off             : min(255, slots of block b used by runs of quotients
 *                     < 64b), the "offset"; 255 means "look back".
 *
 * The slot width w is the remainder width today; a maplet (later issue)
 * stores w = r + v bits, remainder above value, and reuses the shifting.
 *
 * Invariants (checked in full by validate() on load):
 *   - the keys with quotient Q form one run; runs appear in quotient order
 *     and run Q starts at max(Q, end of the previous run): clusters have no
 *     holes, so the layout is a function of the stored multiset;
 *   - inside a run, groups of equal remainders in strictly increasing order;
 *     qf: a group is c copies of R; cqf: the counter encoding below;
 *   - slots outside every run hold 0; runends has one bit per run;
 *   - every offset equals min(255, recomputed offset).
 *
 * Rank/select. end(x) = first slot after the runs of quotients <= x (at
 * least 64*block(x)): take the block's offset o, count d occupied quotients
 * in [64b, x], and select the d-th run end at or after 64b + o. Run Q spans
 * [max(Q, end(Q-1)), end(Q)), both read from Q's own block. A slot i is
 * free iff end(i) <= i. Select in a word uses PDEP+TZCNT when the CPU has
 * BMI2 (checked at run time), else a portable byte scan; tests compare them.
 *
 * Updates open or close one slot at a time, and each is a word-level shift:
 * inserting a slot at P shifts the stretch [P, F) (F the first free slot)
 * up by one slot — per block, the w 64-bit words of the slots shifted by w
 * bits and the runends word by one bit, the top slot carried into the next
 * block — and adds one to the offsets of blocks (block(Q), block(F)]. A
 * removal shifts [P+1, S) down (S = the first slot after P that is free or
 * starts a run at its home) and subtracts one from the offsets below S.
 *
 * Fast paths (the common case at any load up to 95%): locate_block finds
 * run Q and r's place from Q's block words alone (two selects), and when
 * the free slot is in the same block, open_in_block shifts, sets the bits
 * and writes r with that block's words loaded once; no offset changes.
 * Anything else takes the general path (run_of, find_in_run, first_free,
 * open_slot). The hot operations are compiled twice from the same inline
 * code, once for any CPU and once with POPCNT/BMI2 (chosen at run time).
 * AMQ_OPT_SCALAR turns off BMI2 and every fast path: the slot-by-slot
 * moves and general lookups are the reference, and the model tests run a
 * reference twin beside each filter and require identical bytes.
 *
 * cqf counter encoding (group of remainder x with count c, M = 2^r):
 *   c = 1: x            c = 2: x x
 *   c >= 3, x > 0: x [0] d_1..d_k x — digits of c-3 in base M-2, most
 *       significant first, written as symbols in 1..M-1 skipping x; the 0
 *       marker is present iff the first symbol exceeds x (a slot after x
 *       that is below x announces a counter, since remainders increase);
 *   c >= 3, x = 0: 0 d_1..d_k 0 0 — digits of c-3 in base M-1 as symbols
 *       1..M-1. The pair "0 0" after non-zero symbols never occurs in a
 *       later group (their 0 marker is followed by a non-zero symbol).
 *   k >= 1 and there are no leading zero digits, so the encoding is unique
 *   and c takes 2 + k (+1) slots: O(log c / r).
 *
 * Concurrent mode (AMQ_OPT_CONCURRENT or spec concurrent=1). The table is
 * cut into regions of QF_REGION_BLOCKS blocks, one spin lock each. Every
 * operation on quotient Q reads and writes only blocks at or after
 * block(Q) (run bounds come from Q's own block; a saturated offset looks
 * back, but only inside the locked window). It locks region(Q) and the
 * next region, in increasing order, and works inside that window of
 * 2 regions (>= 4096 slots past Q). If anything it must read or write lies
 * outside — a shift stretch past the window, or a saturated offset whose
 * look-back leaves it — it has changed nothing yet: it drops its locks,
 * takes every region lock in increasing order (the global fallback) and
 * starts again. Since a writer holds the lock of every region it touches
 * and a reader of every region it reads, and all locks are taken in
 * increasing order, operations are serialisable and deadlock-free. Item
 * counters are atomic. Queries take the same locks, so they may run beside
 * updates; merge, resize, iteration and saving need the filter quiet.
 *
 * Failure modes: AMQ_ERR_FULL when the slots an insert needs would run past
 * the table (checked before anything moves); removes of absent keys
 * AMQ_ERR_NOT_FOUND; merges and resizes build aside and swap, so a failure
 * leaves the filter as it was. Loading validates everything above, so a
 * crafted frame with a valid checksum cannot make a query read out of bounds.
 */
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "amq/quotient.h"
#include "core/bits.h"
#include "core/mem.h"
#include "filter/type.h"

#define QF_HDR 17u          /* offset byte + occupieds + runends */
#define QF_OFF_SAT 255u
#define QF_MAX_GROUP 72u    /* longest cqf group: 2 + 64 digits + marker */
#define QF_MIN_RBITS_CQF 2u
#define QF_PREFETCH 16      /* batch queries: keys prefetched ahead */
#define QF_INSERT_AHEAD 8   /* batch inserts: keys prefetched ahead */
#define QF_REGION_BLOCKS 64u /* concurrent mode: blocks per lock region */
#define QF_NOWHERE UINT64_MAX
#define QF_COLD __attribute__((noinline, cold))

struct amq_qf {
    amq__obj o;       /* o.items: copies held; o.table_bytes: nblocks * bsize
                         (the owned block has 16 bytes of padding more) */
    uint8_t *data;
    uint64_t nslots;  /* N: home slots (quotients) */
    uint64_t tslots;  /* T = N + E */
    uint64_t nblocks; /* T / 64 */
    size_t bsize;     /* 17 + 8 * width */
    unsigned rbits;
    unsigned width;   /* slot bits (rbits + value bits; value bits = 0) */
    uint64_t rmask;
    uint64_t wmask;   /* 2^width - 1 */
    uint64_t fast_blocks; /* block-local fast paths serve blocks below */
    bool counting;
    bool use_pdep;
    bool scalar;      /* AMQ_OPT_SCALAR: reference slot moves too */
    bool concurrent;
    uint8_t *locks;   /* concurrent mode: one spin lock per region */
    uint64_t nregions;
    uint64_t widenings; /* operations that took every lock (tests) */
    uint64_t distinct; /* D: distinct fingerprints */
    uint64_t used;     /* slots in use */
};

/* ---- select in one word -------------------------------------------------- */

uint64_t amq__qf_select64_scalar(uint64_t x, unsigned k);
uint64_t amq__qf_select64_pdep(uint64_t x, unsigned k);
bool amq__qf_have_pdep(void);

/* Position of the k-th (from 0) set bit of x; 64 if x has <= k bits.
 * Never inlined: the compiler would otherwise compute it beside the PDEP
 * version and pick one with a conditional move, paying for both. */
__attribute__((noinline)) uint64_t amq__qf_select64_scalar(uint64_t x,
                                                           unsigned k) {
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
__attribute__((target("bmi,bmi2"))) uint64_t
amq__qf_select64_pdep(uint64_t x, unsigned k) {
    if (k >= 64)
        return 64;
    return _tzcnt_u64(_pdep_u64(1ULL << k, x));
}
bool amq__qf_have_pdep(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("bmi");
}
#else
uint64_t amq__qf_select64_pdep(uint64_t x, unsigned k) {
    return amq__qf_select64_scalar(x, k);
}
bool amq__qf_have_pdep(void) { return false; }
#endif

#if defined(__x86_64__)
__attribute__((target("popcnt"))) static inline uint64_t
popcnt_hw(uint64_t x) {
    return (uint64_t)__builtin_popcountll(x);
}
#else
static inline uint64_t popcnt_hw(uint64_t x) { return amq__popcount64(x); }
#endif

/* Machines with BMI2 all have POPCNT; the portable build may not use it. */
static inline uint64_t popcnt(const amq_qf *f, uint64_t x) {
    return f->use_pdep ? popcnt_hw(x) : amq__popcount64(x);
}

static inline uint64_t select64(const amq_qf *f, uint64_t x, unsigned k) {
    return f->use_pdep ? amq__qf_select64_pdep(x, k)
                       : amq__qf_select64_scalar(x, k);
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
static uint64_t slot_get_slow(const amq_qf *f, size_t at, unsigned sh) {
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

static void slot_set(amq_qf *f, uint64_t i, uint64_t v) {
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
static void bits_up(uint8_t *p, uint64_t lo, uint64_t hi, unsigned s) {
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
static void bits_down(uint8_t *p, uint64_t lo, uint64_t hi, unsigned s,
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

static void move_slot(amq_qf *f, uint64_t from, uint64_t to) {
    slot_set(f, to, slot_get(f, from));
    rend_put(f, to, rend_get(f, from));
}

/* Slots (and run-end bits) [a, e) move to [a + 1, e + 1); slot a keeps its
 * old contents. Reference: one slot at a time. */
static void shift_up_ref(amq_qf *f, uint64_t a, uint64_t e) {
    for (uint64_t k = e; k > a; k--)
        move_slot(f, k - 1, k);
}

static void shift_up(amq_qf *f, uint64_t a, uint64_t e) {
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
            bits_up(blk(f, b) + QF_HDR, lo * f->width, hi * f->width,
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
static void shift_down(amq_qf *f, uint64_t a, uint64_t e) {
    if (f->scalar) {
        for (uint64_t k = a; k + 1 < e; k++)
            move_slot(f, k + 1, k);
    } else {
        uint64_t ab = a >> 6, lb = (e - 1) >> 6;
        for (uint64_t b = ab; b <= lb; b++) {
            uint64_t lo = b == ab ? a & 63 : 0;
            uint64_t top = b == lb ? (e - 1) & 63 : 63;
            if (lo < top) {
                bits_down(blk(f, b) + QF_HDR, lo * f->width, top * f->width,
                          f->width, f->width);
                uint64_t w = rend_word(f, b), m = span_mask(lo, top);
                rend_word_set(f, b, (w & ~m) | ((w >> 1) & m));
            }
            if (b < lb)
                move_slot(f, b * 64 + 64, b * 64 + 63);
        }
    }
    slot_set(f, e - 1, 0);
    rend_put(f, e - 1, false);
}

/* ---- the window an operation may touch (concurrent mode) ----------------- */

/* Blocks [lob, hib) may be read and written: the whole table, or in
 * concurrent mode the regions r0..r1 this operation holds. */
typedef struct qwin {
    uint64_t lob, hib;
    uint64_t r0, r1; /* held regions; r0 > r1 when none */
    bool widen;      /* the operation needs more than the window */
} qwin;

static inline void cpu_relax(void) {
#if defined(__x86_64__)
    __builtin_ia32_pause();
#endif
}

static void region_lock(const amq_qf *f, uint64_t r) {
    uint8_t *l = &f->locks[r];
    unsigned spins = 0;
    while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE) != 0) {
        while (__atomic_load_n(l, __ATOMIC_RELAXED) != 0) {
            cpu_relax();
            if (++spins % 1024 == 0)
                sched_yield(); /* the holder may have lost its core */
        }
    }
}

static void region_unlock(const amq_qf *f, uint64_t r) {
    __atomic_store_n(&f->locks[r], 0, __ATOMIC_RELEASE);
}

static void win_lock(const amq_qf *f, qwin *w, uint64_t r0,
                             uint64_t r1) {
    for (uint64_t r = r0; r <= r1; r++)
        region_lock(f, r);
    w->r0 = r0;
    w->r1 = r1;
    w->lob = r0 * QF_REGION_BLOCKS;
    w->hib = r1 + 1 >= f->nregions ? f->nblocks
                                   : (r1 + 1) * QF_REGION_BLOCKS;
}

/* Enter for an operation on quotient q: region(q) and the next one. */
static inline void win_enter(const amq_qf *f, uint64_t q, qwin *w) {
    w->widen = false;
    if (!f->concurrent) {
        *w = (qwin){0, f->nblocks, 1, 0, false};
        return;
    }
    uint64_t r0 = (q >> 6) / QF_REGION_BLOCKS;
    win_lock(f, w, r0, r0 + 1 < f->nregions ? r0 + 1 : r0);
}

static inline void win_leave(const amq_qf *f, qwin *w) {
    for (uint64_t r = w->r1 + 1; r-- > w->r0;)
        region_unlock(f, r);
    w->r0 = 1;
    w->r1 = 0;
}

/* The global fallback: every region, in increasing order. */
static QF_COLD void win_widen(const amq_qf *f, qwin *w) {
    __atomic_fetch_add(&((amq_qf *)f)->widenings, 1, __ATOMIC_RELAXED);
    win_leave(f, w);
    w->widen = false;
    win_lock(f, w, 0, f->nregions - 1);
}

static inline amq_status need_more(qwin *w) {
    w->widen = true;
    return AMQ_ERR_FULL; /* never returned: the caller widens and retries */
}

static inline bool whole(const amq_qf *f, const qwin *w) {
    return w->lob == 0 && w->hib == f->nblocks;
}

/* ---- rank and select over the table -------------------------------------- */

/* The (d >= 1)-th run end at or after slot `from`, looking only at blocks
 * below hib; hib * 64 if there is none there. The first word is inline;
 * runs that spill into later blocks take the loop. */
static __attribute__((noinline)) uint64_t select_rend_far(const amq_qf *f, uint64_t b,
                                        uint64_t d, uint64_t hib) {
    for (;;) {
        if (++b >= hib)
            return hib * 64;
        uint64_t w = rend_word(f, b), c = popcnt(f, w);
        if (d <= c)
            return b * 64 + select64(f, w, (unsigned)(d - 1));
        d -= c;
    }
}

static inline uint64_t select_rend(const amq_qf *f, uint64_t from,
                                   uint64_t d, uint64_t hib) {
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
static inline uint64_t next_rend(const amq_qf *f, uint64_t from,
                                 uint64_t hib) {
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
static uint64_t next_off(const amq_qf *f, uint64_t k, uint64_t t,
                         uint64_t hib) {
    uint64_t e = end_with(f, k, t, k * 64 + 63, hib), base = (k + 1) * 64;
    if (e == QF_NOWHERE)
        return QF_NOWHERE;
    return e > base ? e - base : 0;
}

/* A saturated offset: recompute forward from the nearest unsaturated block
 * before b, which must lie in the window (false otherwise). */
static QF_COLD bool true_off_far(const amq_qf *f, uint64_t b, const qwin *w,
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
static inline uint64_t first_free(const amq_qf *f, uint64_t i,
                                  const qwin *w) {
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
static uint64_t stretch_end(const amq_qf *f, uint64_t p, const qwin *w) {
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
static uint64_t next_occupied(const amq_qf *f, uint64_t from, uint64_t limit) {
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

/* ---- fingerprints and groups --------------------------------------------- */

static inline uint64_t quotient_of(const amq_qf *f, uint64_t h) {
    return (uint64_t)(((unsigned __int128)h * f->nslots) >> 64);
}

static inline void split(const amq_qf *f, uint64_t h, uint64_t *q,
                         uint64_t *r) {
    unsigned __int128 p = (unsigned __int128)h * f->nslots;
    *q = (uint64_t)(p >> 64);
    *r = (uint64_t)p >> (64 - f->rbits);
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

typedef struct group {
    uint64_t x, count, len;
} group;

/* Counter base and symbol mapping for remainder x (cqf). */
static inline uint64_t cbase(const amq_qf *f, uint64_t x) {
    return x > 0 ? f->rmask - 1 : f->rmask; /* M - 2 or M - 1 */
}
static inline uint64_t to_sym(uint64_t x, uint64_t d) {
    return x == 0 ? d + 1 : (d + 1 < x ? d + 1 : d + 2);
}
static inline uint64_t from_sym(uint64_t x, uint64_t s) {
    return x == 0 ? s - 1 : (s < x ? s - 1 : s - 2);
}

/* cqf encoding of (x, c >= 1) into out; returns its length. */
static unsigned encode(const amq_qf *f, uint64_t x, uint64_t c,
                       uint64_t out[QF_MAX_GROUP]) {
    unsigned n = 0, k = 0;
    uint64_t dig[64], v, b = cbase(f, x);
    out[n++] = x;
    if (c <= 2) {
        if (c == 2)
            out[n++] = x;
        return n;
    }
    v = c - 3;
    do {
        dig[k++] = v % b;
        v /= b;
    } while (v > 0);
    if (x > 0 && to_sym(x, dig[k - 1]) > x)
        out[n++] = 0;
    while (k > 0)
        out[n++] = to_sym(x, dig[--k]);
    out[n++] = x;
    if (x == 0)
        out[n++] = 0;
    return n;
}

static uint64_t group_len(const amq_qf *f, uint64_t x, uint64_t c) {
    uint64_t tmp[QF_MAX_GROUP];
    if (c == 0)
        return 0;
    return f->counting ? encode(f, x, c, tmp) : c;
}

static void write_group(amq_qf *f, uint64_t pos, uint64_t x, uint64_t c) {
    if (!f->counting) {
        for (uint64_t i = 0; i < c; i++)
            slot_set(f, pos + i, x);
        return;
    }
    uint64_t tmp[QF_MAX_GROUP];
    unsigned n = encode(f, x, c, tmp);
    for (unsigned i = 0; i < n; i++)
        slot_set(f, pos + i, tmp[i]);
}

/* Digits in slots [from, to) of a counter for x; false on overflow or a bad
 * symbol (only possible in unvalidated input). */
static bool read_counter(const amq_qf *f, uint64_t x, uint64_t from,
                         uint64_t to, uint64_t *c) {
    uint64_t v = 0, b = cbase(f, x);
    if (from >= to)
        return false;
    for (uint64_t i = from; i < to; i++) {
        uint64_t s = slot_get(f, i);
        if (s == 0 || s == x || __builtin_mul_overflow(v, b, &v) ||
            __builtin_add_overflow(v, from_sym(x, s), &v))
            return false;
    }
    return !__builtin_add_overflow(v, 3, c);
}

/* Decode the group at pos of a run ending before `end`. */
static bool decode_cqf(const amq_qf *f, uint64_t pos, uint64_t end, group *g) {
    uint64_t x = slot_get(f, pos), y, i;
    *g = (group){x, 1, 1};
    if (pos + 1 >= end)
        return true;
    y = slot_get(f, pos + 1);
    if (x > 0) {
        if (y > x)
            return true;
        if (y == x) {
            *g = (group){x, 2, 2};
            return true;
        }
        i = pos + 1 + (y == 0);
        uint64_t j = i;
        while (j < end && slot_get(f, j) != x)
            j++;
        if (j >= end || !read_counter(f, x, i, j, &g->count))
            return false;
        g->len = j + 1 - pos;
        return true;
    }
    if (y == 0) {
        *g = (group){0, 2, 2};
        return true;
    }
    for (i = pos + 1; i < end && slot_get(f, i) != 0; i++)
        ;
    if (i + 1 >= end || slot_get(f, i + 1) != 0)
        return true; /* a lone 0; the next group starts at pos + 1 */
    if (!read_counter(f, 0, pos + 1, i, &g->count))
        return false;
    g->len = i + 2 - pos;
    return true;
}

static bool decode(const amq_qf *f, uint64_t pos, uint64_t end, group *g) {
    if (f->counting)
        return decode_cqf(f, pos, end, g);
    uint64_t x = slot_get(f, pos), n = 1;
    while (pos + n < end && slot_get(f, pos + n) == x)
        n++;
    *g = (group){x, n, n};
    return true;
}

/* ---- locating a remainder ------------------------------------------------ */

typedef struct spot {
    uint64_t rs, re;  /* run [rs, re); re == rs if the run is empty */
    uint64_t pos;     /* the group's first slot, or the insertion point */
    group g;          /* g.count == 0 if r is absent */
    bool run;         /* run q exists */
} spot;

/* Bounds of run q, read from q's block onward: it starts at
 * max(q, end(q - 1)) and ends at the next run end. false if they lie past
 * the window. */
static bool run_of(const amq_qf *f, uint64_t q, const qwin *w, spot *s) {
    uint64_t b = q >> 6, occ = occ_word(f, b), o, st;
    unsigned j = (unsigned)(q & 63);
    if (!true_off(f, b, w, &o))
        return false;
    uint64_t d = popcnt(f, occ & ((1ULL << j) - 1));
    st = b * 64 + o;
    if (d > 0) {
        st = select_rend(f, st, d, w->hib);
        if (st >= w->hib * 64)
            return false;
        st++;
    }
    s->rs = st > q ? st : q;
    s->run = (occ >> j) & 1;
    s->re = s->rs;
    if (s->run) {
        uint64_t e = next_rend(f, s->rs, w->hib);
        if (e >= w->hib * 64)
            return false;
        s->re = e + 1;
    }
    return true;
}

/* Find remainder r's group in the run s (bounds set): s->g, or the
 * insertion point s->pos with s->g.count == 0. */
static void find_in_run(const amq_qf *f, uint64_t r, spot *s) {
    s->pos = s->rs;
    s->g = (group){r, 0, 0};
    if (!f->counting) {
        uint64_t p = s->rs, v = 0, n = 1;
        while (p < s->re && (v = slot_get(f, p)) < r)
            p++;
        s->pos = p;
        if (p >= s->re || v != r)
            return;
        while (p + n < s->re && slot_get(f, p + n) == r)
            n++;
        s->g = (group){r, n, n};
        return;
    }
    while (s->pos < s->re) {
        group g;
        if (!decode_cqf(f, s->pos, s->re, &g) || g.x > r)
            return;
        if (g.x == r) {
            s->g = g;
            return;
        }
        s->pos += g.len;
    }
}

/* The common case of locating r in run q, read from q's block alone:
 * the block's offset o < 64 and the run (or the place of a new one) lies
 * in the block, at block-local slots [st, en): st after the d-th run end
 * at or after o (d = quotients of the block below q), en after the next.
 * A qf run is sorted; a cqf run is used only while its slots strictly
 * increase up to r and none is 0, which means every group there has count
 * 1 (a counter for x > 0, and "x x", repeat or decrease at once; one for
 * x = 0 starts with 0). Fills s as run_of and
 * find_in_run would; false when it cannot (the caller takes that path).
 * Unaligned 8-byte slot reads stay inside the table: the caller excludes
 * the last block (a borrowed table has no padding) and widths over 56. */
static inline bool locate_block(const amq_qf *f, uint64_t q, uint64_t r,
                                spot *s) {
    const uint8_t *b = blk(f, q >> 6), *p = b + QF_HDR;
    unsigned j = (unsigned)(q & 63), o = b[0], wd = f->width;
    uint64_t occ = amq__get_u64(b + 1), base = q - j, v = 0, prev = 0, k;
    uint64_t ends = amq__get_u64(b + 9) & (~0ULL << (o & 63));
    uint64_t d = popcnt(f, occ & ((1ULL << j) - 1)), run = (occ >> j) & 1;
    if (o >= 64 || popcnt(f, ends) < d + run)
        return false;
    uint64_t st = d > 0 ? select64(f, ends, (unsigned)(d - 1)) + 1 : o;
    st = st > j ? st : j;
    uint64_t en = run ? select64(f, ends, (unsigned)d) + 1 : st;
    for (k = st; k < en; k++) {
        uint64_t bit = k * wd;
        v = (amq__get_u64(p + (bit >> 3)) >> (bit & 7)) & f->wmask;
        if (v >= r)
            break;
        if (f->counting && (v == 0 || (k > st && v <= prev)))
            return false; /* may be a counter ("0 d .. 0 0" rises) */
        prev = v;
    }
    *s = (spot){base + st, base + en, base + k, {r, 0, 0}, run != 0};
    if (k == en || v > r)
        return true;
    if (f->counting) {
        if (r == 0)
            return false; /* "0 d .. 0 0" counters need decoding */
        uint64_t nx = k + 1 < en ? slot_get(f, base + k + 1) : r + 1;
        if (nx < r)
            return false; /* a counter */
        s->g = nx == r ? (group){r, 2, 2} : (group){r, 1, 1};
        return true;
    }
    uint64_t n = 1;
    while (k + n < en && slot_get(f, base + k + n) == r)
        n++;
    s->g = (group){r, n, n};
    return true;
}

/* Run q and r's group (or place) in s: the block-local fast path, else
 * run_of and find_in_run; false if that lies past the window. */
static inline bool locate(const amq_qf *f, uint64_t q, uint64_t r,
                          const qwin *w, spot *s) {
    if ((q >> 6) < f->fast_blocks && locate_block(f, q, r, s))
        return true;
    if (!run_of(f, q, w, s))
        return false;
    find_in_run(f, r, s);
    return true;
}

/* ---- counters -------------------------------------------------------------- */

static inline uint64_t ctr_get(const uint64_t *c) {
    return __atomic_load_n(c, __ATOMIC_RELAXED);
}

static inline void ctr_add(const amq_qf *f, uint64_t *c, uint64_t v) {
    if (f->concurrent)
        __atomic_fetch_add(c, v, __ATOMIC_RELAXED);
    else
        *c += v;
}

/* k more items, or AMQ_ERR_OVERFLOW past 2^64 - 1 (nothing counted). */
static amq_status items_reserve(amq_qf *f, uint64_t k) {
    uint64_t old = ctr_get(&f->o.items);
    if (!f->concurrent) {
        if (old > UINT64_MAX - k)
            return AMQ_ERR_OVERFLOW;
        f->o.items = old + k;
        return AMQ_OK;
    }
    do {
        if (old > UINT64_MAX - k)
            return AMQ_ERR_OVERFLOW;
    } while (!__atomic_compare_exchange_n(&f->o.items, &old, old + k, true,
                                          __ATOMIC_RELAXED,
                                          __ATOMIC_RELAXED));
    return AMQ_OK;
}

/* ---- opening and closing one slot ------------------------------------------ */

/* One slot was opened for quotient q and the cluster shifted up to the
 * free slot e: blocks (block(q), block(e)] have one more slot of earlier
 * runs in them (a saturated offset stays saturated). */
static void offsets_up(amq_qf *f, uint64_t q, uint64_t e) {
    for (uint64_t b = (q >> 6) + 1; b <= e >> 6; b++) {
        unsigned o = off_get(f, b);
        if (o < QF_OFF_SAT)
            blk(f, b)[0] = (uint8_t)(o + 1);
    }
}

/* One slot of run q was removed and the cluster shifted down up to s:
 * blocks (block(q), block(s - 1)] have one slot fewer. A saturated offset
 * is recomputed from its predecessor's new true offset (the caller made
 * sure the window allows it). */
static void offsets_down(amq_qf *f, uint64_t q, uint64_t s, const qwin *w) {
    uint64_t t = QF_NOWHERE;
    for (uint64_t b = (q >> 6) + 1; b <= (s - 1) >> 6; b++) {
        unsigned o = off_get(f, b);
        if (o < QF_OFF_SAT) {
            t = o > 0 ? o - 1 : 0;
        } else {
            if (t == QF_NOWHERE && !true_off(f, b - 1, w, &t))
                t = QF_NOWHERE;
            if (t != QF_NOWHERE)
                t = next_off(f, b - 1, t, w->hib);
        }
        off_set(f, b, t);
    }
}

/* Any saturated offset in blocks [b0, b1]? */
static bool saturated_in(const amq_qf *f, uint64_t b0, uint64_t b1) {
    for (uint64_t b = b0; b <= b1; b++)
        if (off_get(f, b) == QF_OFF_SAT)
            return true;
    return false;
}

typedef enum open_kind { OPEN_NEW_RUN, OPEN_APPEND, OPEN_INSIDE } open_kind;

/* A slot at p joins run q (a new run, its new last slot, or inside it);
 * e is the first free slot at or after p. */
static void open_slot(amq_qf *f, uint64_t q, uint64_t p, uint64_t e,
                      open_kind kind) {
    shift_up(f, p, e);
    if (kind == OPEN_NEW_RUN) {
        occ_put(f, q, true);
        rend_put(f, p, true);
    } else if (kind == OPEN_APPEND) {
        rend_put(f, p - 1, false);
        rend_put(f, p, true);
    } else {
        rend_put(f, p, false);
    }
    offsets_up(f, q, e);
}

/* open_slot when the stretch [p, e) lies in q's block (block-local p < e
 * < 64 or p == e), followed by writing r into the new slot: the common
 * insert, with the block's words loaded and stored once. */
static inline void open_in_block(amq_qf *f, uint64_t q, uint64_t p,
                                 uint64_t e, open_kind kind, uint64_t r) {
    uint8_t *b = blk(f, q >> 6);
    uint64_t occ = amq__get_u64(b + 1), ends = amq__get_u64(b + 9);
    uint64_t bit = p * f->width;
    if (e > p) {
        uint64_t m = span_mask(p + 1, e + 1);
        bits_up(b + QF_HDR, bit, e * f->width, f->width);
        ends = (ends & ~m) | ((ends << 1) & m);
    }
    if (kind == OPEN_NEW_RUN)
        occ |= 1ULL << (q & 63), ends |= 1ULL << p;
    else if (kind == OPEN_APPEND)
        ends = (ends & ~(1ULL << (p - 1))) | (1ULL << p);
    else
        ends &= ~(1ULL << p);
    amq__put_u64(b + 1, occ);
    amq__put_u64(b + 9, ends);
    uint8_t *at = b + QF_HDR + (bit >> 3);
    uint64_t m = f->wmask << (bit & 7), x = amq__get_u64(at);
    amq__put_u64(at, (x & ~m) | ((r << (bit & 7)) & m));
}

/* Slot p of run s (quotient q) goes; s_end is stretch_end(p). */
static void close_slot(amq_qf *f, uint64_t q, uint64_t p, uint64_t s_end,
                       spot *s, const qwin *w) {
    if (p == s->re - 1) {
        if (p == s->rs)
            occ_put(f, q, false);
        else
            rend_put(f, p - 1, true);
    }
    shift_down(f, p, s_end);
    s->re--;
    offsets_down(f, q, s_end, w);
}

/* ---- insert, remove, count inside a window --------------------------------- */

static amq_status insert_in(amq_qf *f, uint64_t q, uint64_t r, uint64_t k,
                            qwin *w) {
    uint64_t newc, ln, g, p, e[QF_MAX_GROUP], found = 0;
    spot s;
    if (!locate(f, q, r, w, &s))
        return need_more(w);
    if (__builtin_add_overflow(s.g.count, k, &newc) ||
        ctr_get(&f->o.items) > UINT64_MAX - k)
        return AMQ_ERR_OVERFLOW;
    if (!f->counting && newc > f->tslots)
        return AMQ_ERR_FULL;
    if (!f->counting && k > QF_MAX_GROUP)
        return AMQ_ERR_UNSUPPORTED; /* copies: one slot each */
    ln = group_len(f, r, newc);
    g = ln - s.g.len; /* lengths grow with the count */
    if (ln < s.g.len || g > QF_MAX_GROUP)
        return AMQ_ERR_FULL;
    p = s.pos + s.g.len;
    open_kind kind = !s.run ? OPEN_NEW_RUN
                            : p == s.re ? OPEN_APPEND : OPEN_INSIDE;
    if (g == 1 && (p >> 6) == (q >> 6) && (q >> 6) < f->fast_blocks) {
        /* Usually the free slot is in q's block too (p >= its offset):
         * then nothing but that block changes. */
        uint64_t x = free_in_block(f, q >> 6, p & 63);
        if (x < 64 && (!f->counting || newc <= 2)) {
            AMQ_RETURN_IF_ERR(items_reserve(f, k));
            open_in_block(f, q, p & 63, x, kind, r); /* r: its last copy */
            ctr_add(f, &f->distinct, s.g.count == 0);
            ctr_add(f, &f->used, 1);
            return AMQ_OK;
        }
        if (x < 64)
            e[found++] = (q & ~63ULL) + x;
    }
    if (found < g) /* a long cluster: fetch the next blocks together */
        for (uint64_t b = (p >> 6) + 1; b < (p >> 6) + 4 && b < w->hib; b++)
            prefetch_block(f, b * 64);
    for (uint64_t i = found; i < g; i++) {
        uint64_t x = first_free(f, i > 0 ? e[i - 1] + 1 : p, w);
        if (x == QF_NOWHERE)
            return need_more(w);
        if (x >= f->tslots)
            return AMQ_ERR_FULL;
        e[i] = x;
    }
    AMQ_RETURN_IF_ERR(items_reserve(f, k));
    for (uint64_t i = 0; i < g; i++)
        open_slot(f, q, p, e[i], i == 0 ? kind : OPEN_INSIDE);
    write_group(f, s.pos, r, newc);
    ctr_add(f, &f->distinct, s.g.count == 0);
    ctr_add(f, &f->used, g);
    return AMQ_OK;
}

static amq_status remove_in(amq_qf *f, uint64_t q, uint64_t r, uint64_t k,
                            qwin *w) {
    uint64_t newc, ln, cut, p, s_end = 0;
    spot s;
    if (!occ_get(f, q))
        return AMQ_ERR_NOT_FOUND;
    if (!locate(f, q, r, w, &s))
        return need_more(w);
    if (s.g.count < k)
        return AMQ_ERR_NOT_FOUND;
    newc = s.g.count - k;
    ln = group_len(f, r, newc);
    if (ln > s.g.len)
        return AMQ_ERR_CORRUPT; /* lengths grow with the count */
    cut = s.g.len - ln;
    p = s.pos + ln;
    if (cut > 0) {
        s_end = stretch_end(f, p, w);
        if (s_end == QF_NOWHERE ||
            (!whole(f, w) && saturated_in(f, q >> 6, (s_end - 1) >> 6)))
            return need_more(w);
    }
    write_group(f, s.pos, r, newc);
    for (uint64_t i = 0; i < cut; i++) {
        if (i > 0)
            s_end = stretch_end(f, p, w); /* only shrinks: in the window */
        close_slot(f, q, p, s_end, &s, w);
    }
    ctr_add(f, &f->o.items, 0 - k);
    ctr_add(f, &f->distinct, 0 - (uint64_t)(newc == 0));
    ctr_add(f, &f->used, 0 - cut);
    return AMQ_OK;
}

/* Copies of (q, r) into *c; false if the answer lies past the window. */
static inline bool count_in(const amq_qf *f, uint64_t q, uint64_t r,
                            const qwin *w, uint64_t *c) {
    spot s;
    *c = 0;
    if (!occ_get(f, q))
        return true;
    if (!locate(f, q, r, w, &s))
        return false;
    *c = s.g.count;
    return true;
}

/* ---- the public operations: windows, locks, one widening ------------------ */


/* The global fallback: the operation again under every region lock
 * (kept out of line: it is rare). */
static QF_COLD amq_status update_wide(amq_qf *f, uint64_t q, uint64_t r,
                                      uint64_t k, bool add, qwin *w) {
    amq_status st = AMQ_ERR_CORRUPT;
    if (!whole(f, w)) {
        win_widen(f, w);
        st = add ? insert_in(f, q, r, k, w) : remove_in(f, q, r, k, w);
    }
    return w->widen ? AMQ_ERR_CORRUPT : st; /* a whole valid table suffices */
}

/* A whole update: window (locks), the operation, and at most one
 * widening to every region. */
static inline amq_status update(amq_qf *f, uint64_t h, uint64_t k,
                                bool add) {
    uint64_t q, r;
    qwin w;
    split(f, h, &q, &r);
    prefetch_block(f, q);
    if (add && (q >> 6) + 1 < f->nblocks)
        prefetch_block(f, q + 64); /* shifts often reach the next block */
    win_enter(f, q, &w);
    amq_status st = add ? insert_in(f, q, r, k, &w) : remove_in(f, q, r, k, &w);
    if (w.widen)
        st = update_wide(f, q, r, k, add, &w);
    if (f->concurrent)
        win_leave(f, &w);
    return st;
}

/* prefetch: false when the caller already did (batches). */
static inline uint64_t lookup(const amq_qf *f, uint64_t h, bool prefetch) {
    uint64_t q, r, c;
    qwin w;
    split(f, h, &q, &r);
    if (prefetch)
        prefetch_block(f, q);
    win_enter(f, q, &w);
    if (!count_in(f, q, r, &w, &c) && !whole(f, &w)) {
        win_widen(f, &w);
        if (!count_in(f, q, r, &w, &c))
            c = 0;
    }
    if (f->concurrent)
        win_leave(f, &w);
    return c;
}

/* Batch: each key's block is prefetched QF_PREFETCH keys ahead. */
static inline void lookup_batch(const amq_qf *f, const uint64_t *h,
                                size_t n, uint8_t *out) {
    size_t ahead = n < QF_PREFETCH ? n : QF_PREFETCH;
    for (size_t i = 0; i < ahead; i++)
        prefetch_block(f, quotient_of(f, h[i]));
    for (size_t i = 0; i < n; i++) {
        if (i + QF_PREFETCH < n)
            prefetch_block(f, quotient_of(f, h[i + QF_PREFETCH]));
        out[i] = lookup(f, h[i], false) != 0;
    }
}

/* Batch insert: each key's block is prefetched (for writing) a few keys
 * ahead, so the misses of consecutive inserts overlap. Stops at the first
 * failure. */
static inline amq_status insert_batch(amq_qf *f, const uint64_t *h,
                                      size_t n, size_t *done) {
    size_t ahead = n < QF_INSERT_AHEAD ? n : QF_INSERT_AHEAD, i;
    amq_status st = AMQ_OK;
    for (i = 0; i < ahead; i++)
        prefetch_block(f, quotient_of(f, h[i]));
    for (i = 0; i < n && st == AMQ_OK; i++) {
        if (i + QF_INSERT_AHEAD < n)
            prefetch_block(f, quotient_of(f, h[i + QF_INSERT_AHEAD]));
        st = update(f, h[i], 1, true);
    }
    *done = st == AMQ_OK ? n : i - 1;
    return st;
}

/* The hot paths are instantiated twice from the same inline code: once
 * for any CPU, once (x86-64) with POPCNT/BMI2 enabled so select and
 * popcount become single instructions; f->use_pdep picks one per call
 * (AMQ_OPT_SCALAR: always the first). */
#define QF_ANY __attribute__((flatten))
#if defined(__x86_64__)
#define QF_ISA __attribute__((flatten, target("popcnt,bmi,bmi2")))
#else
#define QF_ISA QF_ANY
#endif

static QF_ANY amq_status insert_any(amq_qf *f, uint64_t h, uint64_t k) {
    return update(f, h, k, true);
}
static QF_ISA amq_status insert_isa(amq_qf *f, uint64_t h, uint64_t k) {
    return update(f, h, k, true);
}
static QF_ANY amq_status remove_any(amq_qf *f, uint64_t h, uint64_t k) {
    return update(f, h, k, false);
}
static QF_ISA amq_status remove_isa(amq_qf *f, uint64_t h, uint64_t k) {
    return update(f, h, k, false);
}
static QF_ANY amq_status insert_batch_any(amq_qf *f, const uint64_t *h,
                                          size_t n, size_t *done) {
    return insert_batch(f, h, n, done);
}
static QF_ISA amq_status insert_batch_isa(amq_qf *f, const uint64_t *h,
                                          size_t n, size_t *done) {
    return insert_batch(f, h, n, done);
}
static QF_ANY uint64_t lookup_any(const amq_qf *f, uint64_t h) {
    return lookup(f, h, true);
}
static QF_ISA uint64_t lookup_isa(const amq_qf *f, uint64_t h) {
    return lookup(f, h, true);
}
static QF_ANY void batch_any(const amq_qf *f, const uint64_t *h, size_t n,
                             uint8_t *out) {
    lookup_batch(f, h, n, out);
}
static QF_ISA void batch_isa(const amq_qf *f, const uint64_t *h, size_t n,
                             uint8_t *out) {
    lookup_batch(f, h, n, out);
}

static amq_status insert(amq_qf *f, uint64_t h, uint64_t k) {
    if (k == 0)
        return AMQ_ERR_INVALID;
    return f->use_pdep ? insert_isa(f, h, k) : insert_any(f, h, k);
}
static amq_status remove_k(amq_qf *f, uint64_t h, uint64_t k) {
    if (k == 0)
        return AMQ_ERR_INVALID;
    return f->use_pdep ? remove_isa(f, h, k) : remove_any(f, h, k);
}

amq_status amq_qf_insert(amq_qf *f, uint64_t h) { return insert(f, h, 1); }
amq_status amq_qf_remove(amq_qf *f, uint64_t h) { return remove_k(f, h, 1); }

amq_status amq_qf_insert_batch(amq_qf *f, const uint64_t *h, size_t n,
                               size_t *done) {
    size_t dummy;
    if (done == NULL)
        done = &dummy;
    *done = 0;
    if (f == NULL || (h == NULL && n > 0))
        return AMQ_ERR_INVALID;
    return f->use_pdep ? insert_batch_isa(f, h, n, done)
                       : insert_batch_any(f, h, n, done);
}

amq_status amq_cqf_insert(amq_cqf *f, uint64_t h, uint64_t count) {
    if (f == NULL || count == 0)
        return AMQ_ERR_INVALID;
    return insert(f, h, count);
}

amq_status amq_cqf_remove(amq_cqf *f, uint64_t h, uint64_t count) {
    if (f == NULL || count == 0)
        return AMQ_ERR_INVALID;
    return remove_k(f, h, count);
}

uint64_t amq_qf_count(const amq_qf *f, uint64_t h) {
    return f->use_pdep ? lookup_isa(f, h) : lookup_any(f, h);
}

bool amq_qf_contains(const amq_qf *f, uint64_t h) {
    return amq_qf_count(f, h) != 0;
}

void amq_qf_contains_batch(const amq_qf *f, const uint64_t *h, size_t n,
                           uint8_t *out) {
    if (f->use_pdep)
        batch_isa(f, h, n, out);
    else
        batch_any(f, h, n, out);
}

uint64_t amq_qf_fingerprint(const amq_qf *f, uint64_t h) {
    uint64_t q, r;
    split(f, h, &q, &r);
    return q << f->rbits | r;
}

/* ---- enumeration --------------------------------------------------------- */

void amq_qf_iter_init(const amq_qf *f, amq_qf_iter *it) {
    memset(it, 0, sizeof *it);
    it->f = f;
}

bool amq_qf_iter_next(amq_qf_iter *it, uint64_t *fp, uint64_t *count) {
    const amq_qf *f = it->f;
    group g;
    if (!it->in_run) {
        uint64_t q = next_occupied(f, it->quotient, f->nslots);
        if (q >= f->nslots)
            return false;
        it->quotient = q;
        it->pos = q > it->pos ? q : it->pos;
        it->runend = select_rend(f, it->pos, 1, f->nblocks) + 1;
        it->in_run = true;
    }
    if (!decode(f, it->pos, it->runend, &g))
        g = (group){slot_get(f, it->pos), 1, 1}; /* unreachable if valid */
    it->pos += g.len;
    *fp = it->quotient << f->rbits | g.x;
    *count = g.count;
    if (it->pos >= it->runend) {
        it->in_run = false;
        it->quotient++;
    }
    return true;
}

/* ---- construction -------------------------------------------------------- */

static unsigned ceil_log2(uint64_t n) {
    return n <= 1 ? 0 : 64u - (unsigned)__builtin_clzll(n - 1);
}

static amq_status check_shape(uint64_t n, unsigned r, bool counting) {
    if (n < 64 || n % 64 != 0 || r < (counting ? QF_MIN_RBITS_CQF : 1u) ||
        r > AMQ_QF_MAX_RBITS)
        return AMQ_ERR_INVALID;
    if (ceil_log2(n) + r > 64 || n > (UINT64_C(1) << 56))
        return AMQ_ERR_OVERFLOW;
    return AMQ_OK;
}

static uint64_t extra_slots(uint64_t n) { return n < 128 ? n : 128; }

/* Table bytes for n home slots of width w. */
static amq_status table_bytes(uint64_t n, unsigned w, size_t *out) {
    uint64_t t = n + extra_slots(n);
    size_t bs = QF_HDR + 8 * (size_t)w;
    if (t / 64 > SIZE_MAX || !amq__mul((size_t)(t / 64), bs, out))
        return AMQ_ERR_OVERFLOW;
    return AMQ_OK;
}

static amq_status alloc_qf(uint64_t n, unsigned r, bool counting,
                           const amq_options *opt, const uint8_t *borrow,
                           amq_qf **out) {
    amq_qf *f;
    size_t bytes, padded;
    void *wr;
    AMQ_RETURN_IF_ERR(check_shape(n, r, counting));
    AMQ_RETURN_IF_ERR(table_bytes(n, r, &bytes));
    if (!amq__add(bytes, 16, &padded))
        return AMQ_ERR_OVERFLOW;
    AMQ_RETURN_IF_ERR(amq__obj_new(sizeof *f, opt, (void **)&f));
    f->nslots = n;
    f->tslots = n + extra_slots(n);
    f->nblocks = f->tslots / 64;
    f->rbits = r;
    f->width = r;
    f->rmask = (1ULL << r) - 1;
    f->wmask = (1ULL << f->width) - 1;
    f->scalar = opt != NULL && (opt->flags & AMQ_OPT_SCALAR);
    /* The block-local fast paths (8-byte slot access: widths up to 56, not
     * the last block, since a borrowed table has no padding); none under
     * AMQ_OPT_SCALAR, which keeps the reference paths. */
    f->fast_blocks = !f->scalar && f->width <= 56 ? f->nblocks - 1 : 0;
    f->bsize = QF_HDR + 8 * (size_t)f->width;
    f->counting = counting;
    f->use_pdep = !f->scalar && amq__qf_have_pdep();
    f->concurrent = opt != NULL && (opt->flags & AMQ_OPT_CONCURRENT);
    f->nregions = (f->nblocks + QF_REGION_BLOCKS - 1) / QF_REGION_BLOCKS;
    if (f->concurrent) {
        f->locks = amq__zalloc(&f->o.mem, (size_t)f->nregions);
        if (f->locks == NULL) {
            amq__obj_free(&f->o);
            return AMQ_ERR_NOMEM;
        }
    }
    amq_status st = amq__obj_table(&f->o, borrow ? bytes : padded, borrow, &wr);
    if (st != AMQ_OK) {
        amq_qf_free(f);
        return st;
    }
    f->o.table_bytes = bytes;
    f->data = borrow != NULL ? (uint8_t *)borrow : wr;
    *out = f;
    return AMQ_OK;
}

/* Home slots for capacity keys at <= 95% load, and r for fpr. */
static amq_status size_for(uint64_t capacity, double fpr, uint64_t *n,
                           unsigned *r) {
    if (capacity == 0 || !(fpr > 0.0 && fpr < 1.0))
        return AMQ_ERR_INVALID;
    double slots = ceil((double)capacity / AMQ_QF_MAX_LOAD);
    if (!(slots < 0x1p56))
        return AMQ_ERR_OVERFLOW;
    *n = ((uint64_t)slots + 63) / 64 * 64;
    double rr = ceil(-log2(fpr));
    *r = rr < 1 ? 1u : rr > AMQ_QF_MAX_RBITS ? AMQ_QF_MAX_RBITS : (unsigned)rr;
    return AMQ_OK;
}

static amq_status new_mode(uint64_t capacity, double fpr, bool counting,
                           const amq_options *opt, amq_qf **out) {
    uint64_t n;
    unsigned r;
    if (out == NULL)
        return AMQ_ERR_INVALID;
    *out = NULL;
    AMQ_RETURN_IF_ERR(size_for(capacity, fpr, &n, &r));
    if (counting && r < QF_MIN_RBITS_CQF)
        r = QF_MIN_RBITS_CQF;
    return alloc_qf(n, r, counting, opt, NULL, out);
}

amq_status amq_qf_new(uint64_t capacity, double fpr, const amq_options *opt,
                      amq_qf **out) {
    return new_mode(capacity, fpr, false, opt, out);
}
amq_status amq_cqf_new(uint64_t capacity, double fpr, const amq_options *opt,
                       amq_cqf **out) {
    return new_mode(capacity, fpr, true, opt, out);
}
amq_status amq_qf_new_explicit(uint64_t slots, unsigned rbits,
                               const amq_options *opt, amq_qf **out) {
    if (out == NULL)
        return AMQ_ERR_INVALID;
    *out = NULL;
    return alloc_qf(slots, rbits, false, opt, NULL, out);
}
amq_status amq_cqf_new_explicit(uint64_t slots, unsigned rbits,
                                const amq_options *opt, amq_cqf **out) {
    if (out == NULL)
        return AMQ_ERR_INVALID;
    *out = NULL;
    return alloc_qf(slots, rbits, true, opt, NULL, out);
}

void amq_qf_free(amq_qf *f) {
    if (f == NULL)
        return;
    if (f->locks != NULL)
        amq__free(&f->o.mem, f->locks, (size_t)f->nregions);
    amq__obj_free(&f->o);
}

/* ---- building in fingerprint order (merge, resize) ----------------------- */

typedef struct builder {
    amq_qf *f;
    uint64_t pos, q;
    bool run;
} builder;

static amq_status build_append(builder *b, uint64_t fp, uint64_t c) {
    amq_qf *f = b->f;
    uint64_t q = fp >> f->rbits, x = fp & f->rmask, len;
    if (q >= f->nslots)
        return AMQ_ERR_INVALID;
    if (!b->run || q != b->q) {
        if (b->run)
            rend_put(f, b->pos - 1, true);
        b->pos = q > b->pos ? q : b->pos;
        b->q = q;
        b->run = true;
        occ_put(f, q, true);
    }
    if (!f->counting && c > f->tslots)
        return AMQ_ERR_FULL;
    len = group_len(f, x, c);
    if (b->pos + len > f->tslots)
        return AMQ_ERR_FULL;
    write_group(f, b->pos, x, c);
    b->pos += len;
    f->o.items += c;
    f->distinct++;
    f->used += len;
    return AMQ_OK;
}

static void build_finish(builder *b) {
    amq_qf *f = b->f;
    uint64_t t = 0;
    if (b->run)
        rend_put(f, b->pos - 1, true);
    off_set(f, 0, 0);
    for (uint64_t k = 1; k < f->nblocks; k++) {
        t = next_off(f, k - 1, t, f->nblocks);
        off_set(f, k, t);
    }
}

static bool same_shape(const amq_qf *a, const amq_qf *b) {
    return a->nslots == b->nslots && a->rbits == b->rbits &&
           a->width == b->width && a->counting == b->counting;
}

amq_status amq_qf_merge(const amq_qf *a, const amq_qf *b,
                        const amq_options *opt, amq_qf **out) {
    amq_qf_iter ia, ib;
    uint64_t fa = 0, ca = 0, fb = 0, cb = 0;
    builder bld;
    amq_status st;
    if (a == NULL || b == NULL || out == NULL)
        return AMQ_ERR_INVALID;
    *out = NULL;
    if (!same_shape(a, b))
        return AMQ_ERR_INCOMPATIBLE;
    if (a->o.items > UINT64_MAX - b->o.items)
        return AMQ_ERR_OVERFLOW;
    AMQ_RETURN_IF_ERR(alloc_qf(a->nslots, a->rbits, a->counting, opt, NULL,
                               &bld.f));
    bld.pos = bld.q = 0;
    bld.run = false;
    amq_qf_iter_init(a, &ia);
    amq_qf_iter_init(b, &ib);
    bool ha = amq_qf_iter_next(&ia, &fa, &ca);
    bool hb = amq_qf_iter_next(&ib, &fb, &cb);
    st = AMQ_OK;
    while (st == AMQ_OK && (ha || hb)) {
        if (ha && hb && fa == fb) {
            st = build_append(&bld, fa, ca + cb);
            ha = amq_qf_iter_next(&ia, &fa, &ca);
            hb = amq_qf_iter_next(&ib, &fb, &cb);
        } else if (ha && (!hb || fa < fb)) {
            st = build_append(&bld, fa, ca);
            ha = amq_qf_iter_next(&ia, &fa, &ca);
        } else {
            st = build_append(&bld, fb, cb);
            hb = amq_qf_iter_next(&ib, &fb, &cb);
        }
    }
    if (st != AMQ_OK) {
        amq_qf_free(bld.f);
        return st;
    }
    build_finish(&bld);
    *out = bld.f;
    return AMQ_OK;
}

/* Options that give a new filter f's allocator and modes. */
static void opts_like(const amq_qf *f, amq_options *opt) {
    memset(opt, 0, sizeof *opt);
    opt->allocator = &f->o.mem.a;
    opt->flags = (f->scalar ? AMQ_OPT_SCALAR : 0u) |
                 (f->concurrent ? AMQ_OPT_CONCURRENT : 0u);
}

/* Move g's table, locks and counters into f and free what f had. */
static void adopt(amq_qf *f, amq_qf *g) {
    amq__block old = f->o.block;
    if (f->locks != NULL)
        amq__free(&f->o.mem, f->locks, (size_t)f->nregions);
    f->locks = g->locks;
    f->nregions = g->nregions;
    f->o.block = g->o.block;
    f->o.table = g->o.table;
    f->o.table_bytes = g->o.table_bytes;
    f->data = g->data;
    f->nslots = g->nslots;
    f->tslots = g->tslots;
    f->nblocks = g->nblocks;
    f->bsize = g->bsize;
    f->rbits = g->rbits;
    f->width = g->width;
    f->rmask = g->rmask;
    f->wmask = g->wmask;
    f->fast_blocks = g->fast_blocks;
    f->o.items = g->o.items;
    f->distinct = g->distinct;
    f->used = g->used;
    if (old.raw != NULL)
        amq__block_free(&f->o.mem, &old);
    amq__free(&g->o.mem, g, g->o.self_bytes); /* its table is f's now */
}

amq_status amq_qf_merge_into(amq_qf *dst, const amq_qf *src) {
    amq_qf *m;
    amq_options opt;
    if (dst == NULL || src == NULL)
        return AMQ_ERR_INVALID;
    opts_like(dst, &opt);
    AMQ_RETURN_IF_ERR(amq_qf_merge(dst, src, &opt, &m));
    adopt(dst, m);
    return AMQ_OK;
}

amq_status amq_qf_resize(amq_qf *f) {
    amq_qf *g;
    amq_options opt;
    amq_qf_iter it;
    uint64_t fp, c;
    builder bld;
    if (f == NULL)
        return AMQ_ERR_INVALID;
    if (f->rbits < (f->counting ? QF_MIN_RBITS_CQF + 1 : 2u))
        return AMQ_ERR_INVALID;
    if (f->nslots > UINT64_MAX / 2)
        return AMQ_ERR_OVERFLOW;
    opts_like(f, &opt);
    AMQ_RETURN_IF_ERR(
        alloc_qf(f->nslots * 2, f->rbits - 1, f->counting, &opt, NULL, &g));
    bld = (builder){g, 0, 0, false};
    amq_qf_iter_init(f, &it);
    while (amq_qf_iter_next(&it, &fp, &c)) {
        amq_status st = build_append(&bld, fp, c);
        if (st != AMQ_OK) {
            amq_qf_free(g);
            return st;
        }
    }
    build_finish(&bld);
    adopt(f, g);
    return AMQ_OK;
}

/* ---- properties ---------------------------------------------------------- */

uint64_t amq_qf_slots(const amq_qf *f) { return f->nslots; }
uint64_t amq_qf_table_slots(const amq_qf *f) { return f->tslots; }
unsigned amq_qf_rbits(const amq_qf *f) { return f->rbits; }
bool amq_qf_is_counting(const amq_qf *f) { return f->counting; }
uint64_t amq_qf_items(const amq_qf *f) { return ctr_get(&f->o.items); }
uint64_t amq_qf_distinct(const amq_qf *f) { return ctr_get(&f->distinct); }
uint64_t amq_qf_used_slots(const amq_qf *f) { return ctr_get(&f->used); }
bool amq_qf_is_concurrent(const amq_qf *f) { return f->concurrent; }
size_t amq_qf_size_bytes(const amq_qf *f) { return f->o.table_bytes; }
double amq_qf_metadata_bits_per_slot(void) { return 2.0 + 8.0 / 64.0; }

/* A stranger's fingerprint is floor(h N 2^r / 2^64) for a uniform h: each of
 * the N 2^r values has probability at most 1/(N 2^r) + 2^-64, and it is a
 * false positive iff it hits one of the D stored fingerprints. */
double amq_qf_fpr_bound(const amq_qf *f) {
    double space = (double)f->nslots * ldexp(1.0, (int)f->rbits);
    double p = (double)ctr_get(&f->distinct) * (1.0 / space + 0x1p-64);
    return p < 1.0 ? p : 1.0;
}

/* ---- validation of loaded tables ----------------------------------------- */

/* AMQ_ERR_CORRUPT about slot `at`, located at its block in the frame's
 * payload (r may be NULL: a live filter's self-check). */
static amq_status corrupt(const amq_qf *f, const amq__rd *r, const char *what,
                          uint64_t at) {
    if (r == NULL)
        return AMQ_ERR_CORRUPT;
    return amq__rd_bad(r, r->payload_at + (size_t)(at / 64) * f->bsize,
                       "%s at slot %llu", what, (unsigned long long)at);
}

/* Every group of run [rs, re) decodes, is canonical and increases. */
static amq_status check_run(amq_qf *f, uint64_t rs, uint64_t re,
                            const amq__rd *r) {
    uint64_t pos = rs, prev = 0, tmp[QF_MAX_GROUP];
    bool first = true;
    while (pos < re) {
        group g;
        if (!decode(f, pos, re, &g))
            return corrupt(f, r, "undecodable counter", pos);
        if (!first && g.x <= prev)
            return corrupt(f, r, "remainders out of order", pos);
        if (f->counting) {
            unsigned n = encode(f, g.x, g.count, tmp);
            if (n != g.len)
                return corrupt(f, r, "non-canonical counter", pos);
            for (unsigned i = 0; i < n; i++)
                if (slot_get(f, pos + i) != tmp[i])
                    return corrupt(f, r, "non-canonical counter", pos);
        }
        if (__builtin_add_overflow(f->o.items, g.count, &f->o.items))
            return corrupt(f, r, "count overflow", pos);
        f->distinct++;
        f->used += g.len;
        prev = g.x;
        first = false;
        pos += g.len;
    }
    return AMQ_OK;
}

static amq_status check_free(const amq_qf *f, uint64_t from, uint64_t to,
                             const amq__rd *r) {
    for (uint64_t i = from; i < to; i++)
        if (slot_get(f, i) != 0)
            return corrupt(f, r, "non-zero free slot", i);
    return AMQ_OK;
}

static amq_status validate(amq_qf *f, const amq__rd *r) {
    uint64_t runs = 0, ends = 0, prev = 0, t = 0;
    for (uint64_t b = 0; b < f->nblocks; b++) {
        uint64_t occ = occ_word(f, b);
        if (b * 64 >= f->nslots && occ != 0)
            return corrupt(f, r, "occupied bit past the home slots", b * 64);
        runs += amq__popcount64(occ);
        ends += amq__popcount64(rend_word(f, b));
    }
    if (runs != ends)
        return corrupt(f, r, "run ends do not match occupied bits", 0);
    f->o.items = f->distinct = f->used = 0;
    for (uint64_t q = next_occupied(f, 0, f->nslots); q < f->nslots;
         q = next_occupied(f, q + 1, f->nslots)) {
        uint64_t rs = q > prev ? q : prev;
        uint64_t re = select_rend(f, rs, 1, f->nblocks);
        if (re >= f->tslots)
            return corrupt(f, r, "run without an end", rs);
        AMQ_RETURN_IF_ERR(check_free(f, prev, rs, r));
        AMQ_RETURN_IF_ERR(check_run(f, rs, re + 1, r));
        prev = re + 1;
    }
    AMQ_RETURN_IF_ERR(check_free(f, prev, f->tslots, r));
    if (off_get(f, 0) != 0)
        return corrupt(f, r, "bad offset", 0);
    for (uint64_t k = 1; k < f->nblocks; k++) {
        t = next_off(f, k - 1, t, f->nblocks);
        if (t == QF_NOWHERE || off_get(f, k) != (t < QF_OFF_SAT ? t : QF_OFF_SAT))
            return corrupt(f, r, "bad offset", k * 64);
    }
    return AMQ_OK;
}

/* For tests: full invariant check of a live filter (counters included). */
amq_status amq__qf_check(amq_qf *f);
amq_status amq__qf_check(amq_qf *f) {
    uint64_t items = f->o.items, distinct = f->distinct, used = f->used;
    amq_status st = validate(f, NULL);
    if (st == AMQ_OK && (f->o.items != items || f->distinct != distinct ||
                         f->used != used))
        st = AMQ_ERR_CORRUPT;
    f->o.items = items;
    f->distinct = distinct;
    f->used = used;
    return st;
}

/* ---- the generic interface ----------------------------------------------- */

/* The variant: qf and cqf differ only in the counting mode. */
typedef struct qf_mode {
    const char *name;
    bool counting;
    unsigned rmin;
} qf_mode;

static const qf_mode mode_qf = {"qf", false, 1};
static const qf_mode mode_cqf = {"cqf", true, QF_MIN_RBITS_CQF};

typedef struct qf_spec {
    uint64_t q, slots, r, conc;
    bool has_q, has_slots, has_r, has_conc;
} qf_spec;

static amq_status read_spec(amq__spec *spec, const qf_mode *m, qf_spec *p,
                            amq_diag *diag) {
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "q", 6, 56, &p->q, &p->has_q, diag));
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "slots", 64, UINT64_C(1) << 56,
                                    &p->slots, &p->has_slots, diag));
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "r", m->rmin, AMQ_QF_MAX_RBITS,
                                    &p->r, &p->has_r, diag));
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "concurrent", 0, 1, &p->conc,
                                    &p->has_conc, diag));
    if (p->has_q && p->has_slots)
        return amq__diag(diag, AMQ_ERR_SPEC, 0, "give q= or slots=, not both");
    if (p->has_slots && p->slots % 64 != 0)
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "slots=%llu is not a multiple of 64",
                         (unsigned long long)p->slots);
    return AMQ_OK;
}

static amq_status t_create(const amq__type *self, amq__spec *spec,
                           uint64_t capacity, double fpr,
                           const amq_options *opt, amq__obj **out,
                           amq_diag *diag) {
    const qf_mode *m = self->variant;
    qf_spec p = {0};
    uint64_t n = 0;
    unsigned rr = 0;
    amq_options o2 = *opt;
    amq_qf *f;
    AMQ_RETURN_IF_ERR(read_spec(spec, m, &p, diag));
    if (p.conc)
        o2.flags |= AMQ_OPT_CONCURRENT;
    if ((!p.has_q && !p.has_slots) || !p.has_r) {
        if (capacity == 0)
            return amq__diag(diag, AMQ_ERR_SPEC, 0,
                             "%s needs a capacity and fpr, or q= (or slots=) "
                             "and r=", m->name);
        amq_status st = size_for(capacity, fpr, &n, &rr);
        if (st != AMQ_OK)
            return amq__diag(diag, st, 0, "capacity %llu / fpr %g out of range",
                             (unsigned long long)capacity, fpr);
    }
    if (p.has_q)
        n = UINT64_C(1) << p.q;
    else if (p.has_slots)
        n = p.slots;
    if (p.has_r)
        rr = (unsigned)p.r;
    else if (rr < m->rmin)
        rr = m->rmin;
    amq_status st = alloc_qf(n, rr, m->counting, &o2, NULL, &f);
    if (st == AMQ_ERR_INVALID || st == AMQ_ERR_OVERFLOW)
        return amq__diag(diag, st, 0, "%llu slots of %u bits: %s",
                         (unsigned long long)n, rr,
                         st == AMQ_ERR_OVERFLOW ? "too large"
                                                : "invalid shape");
    AMQ_RETURN_IF_ERR(st);
    *out = &f->o;
    return AMQ_OK;
}

static void t_destroy(amq__obj *o) { amq_qf_free((amq_qf *)o); }
static amq_status t_add(amq__obj *o, uint64_t h) {
    return insert((amq_qf *)o, h, 1);
}
static amq_status t_add_batch(amq__obj *o, const uint64_t *h, size_t n,
                              size_t *done) {
    return amq_qf_insert_batch((amq_qf *)o, h, n, done);
}
static bool t_contains(const amq__obj *o, uint64_t h) {
    return amq_qf_contains((const amq_qf *)o, h);
}
static void t_batch(const amq__obj *o, const uint64_t *h, size_t n,
                    uint8_t *out) {
    amq_qf_contains_batch((const amq_qf *)o, h, n, out);
}
static amq_status t_remove(amq__obj *o, uint64_t h) {
    return remove_k((amq_qf *)o, h, 1);
}
static amq_status t_count(const amq__obj *o, uint64_t h, uint64_t *out) {
    *out = amq_qf_count((const amq_qf *)o, h);
    return AMQ_OK;
}
static amq_status t_merge(amq__obj *dst, const amq__obj *src,
                          amq__merge_op op) {
    if (op != AMQ__UNION)
        return AMQ_ERR_UNSUPPORTED;
    return amq_qf_merge_into((amq_qf *)dst, (const amq_qf *)src);
}
static double t_bound(const amq__obj *o) {
    return amq_qf_fpr_bound((const amq_qf *)o);
}
/* The shape only: concurrent mode is how this process uses the table (a
 * loaded frame gets it from the load options), not part of the frame. */
static size_t t_describe(const amq__obj *o, char *buf, size_t cap) {
    const amq_qf *f = (const amq_qf *)o;
    if ((f->nslots & (f->nslots - 1)) == 0)
        return amq__describe(buf, cap, "q=%u,r=%u", ceil_log2(f->nslots),
                             f->rbits);
    return amq__describe(buf, cap, "slots=%llu,r=%u",
                         (unsigned long long)f->nslots, f->rbits);
}

/* The family's curve: a filter at its maximum load a = 0.95 spends
 * (r + 2.125) / a bits per key and has fpr a * 2^-r; r taken as real.
 * concurrent= does not change it and is accepted, so any valid spec has a
 * curve. */
static amq_status t_curve(const amq__type *self, amq__spec *spec, double x,
                          bool inverse, double *out, amq_diag *diag) {
    uint64_t conc;
    (void)self;
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "concurrent", 0, 1, &conc, NULL,
                                    diag));
    double meta = amq_qf_metadata_bits_per_slot();
    if (inverse) {
        double r = log2(AMQ_QF_MAX_LOAD / x);
        *out = (r + meta) / AMQ_QF_MAX_LOAD;
    } else {
        double p = AMQ_QF_MAX_LOAD * exp2(-(AMQ_QF_MAX_LOAD * x - meta));
        *out = p < 1.0 ? p : 1.0;
    }
    return AMQ_OK;
}

/* params: N u64 | r u8 | width u8 | mode u8 (1 = counting) | reserved u8 |
 * reserved u32 | items u64 */
#define PARAMS_LEN 24
static void t_params_write(const amq__obj *o, amq__wr *w) {
    const amq_qf *f = (const amq_qf *)o;
    amq__wr_u64(w, f->nslots);
    amq__wr_u32(w, (uint32_t)f->rbits | (uint32_t)f->width << 8 |
                       (f->counting ? 1u : 0u) << 16);
    amq__wr_u32(w, 0);
    amq__wr_u64(w, o->items);
}

static amq_status t_load(const amq__type *self, amq__rd *r,
                         const uint8_t *payload, size_t len, bool view,
                         const amq_options *opt, amq__obj **out) {
    const qf_mode *m = self->variant;
    uint64_t n, items;
    uint32_t shape;
    size_t bytes;
    amq_qf *f;
    AMQ_RETURN_IF_ERR(amq__rd_expect(r, PARAMS_LEN));
    size_t at_n = amq__rd_u64(r, &n);
    size_t at_shape = amq__rd_u32(r, &shape);
    AMQ_RETURN_IF_ERR(amq__rd_zero32(r));
    amq__rd_u64(r, &items);
    unsigned rbits = shape & 0xff, width = (shape >> 8) & 0xff;
    unsigned mode = (shape >> 16) & 0xff;
    if (width != rbits)
        return amq__rd_bad(r, at_shape + 1, "slot width %u with %u-bit "
                           "remainders", width, rbits);
    if (mode != (m->counting ? 1u : 0u))
        return amq__rd_bad(r, at_shape + 2, "mode %u is not %s's", mode,
                           m->name);
    if ((shape >> 24) != 0)
        return amq__rd_bad(r, at_shape + 3, "reserved field is not zero");
    if (check_shape(n, rbits, m->counting) != AMQ_OK)
        return amq__rd_bad(r, at_shape, "%u-bit remainders with %llu slots",
                           rbits, (unsigned long long)n);
    if (table_bytes(n, rbits, &bytes) != AMQ_OK || bytes != len)
        return amq__rd_bad(r, at_n, "%llu slots of %u bits do not match a "
                           "%zu-byte payload", (unsigned long long)n, rbits,
                           len);
    AMQ_RETURN_IF_ERR(alloc_qf(n, rbits, m->counting, opt,
                               view ? payload : NULL, &f));
    if (!view)
        memcpy(f->data, payload, len);
    amq_status st = validate(f, r);
    if (st == AMQ_OK && f->o.items != items)
        st = amq__rd_bad(r, r->payload_at, "item count %llu does not match "
                         "the table", (unsigned long long)items);
    if (st != AMQ_OK) {
        amq_qf_free(f);
        return st;
    }
    *out = &f->o;
    return AMQ_OK;
}

#define QF_PARAMS                                                              \
    "q=LOG2_SLOTS (6-56), slots=HOME_SLOTS (multiple of 64, instead of q), "   \
    "r=REMAINDER_BITS (default ceil(log2(1/fpr))), "                          \
    "concurrent=1 (per-region locks: add, remove and queries from many "     \
    "threads; as AMQ_OPT_CONCURRENT)"

#define QF_CALLBACKS                                                           \
    .create = t_create, .load = t_load, .destroy = t_destroy, .add = t_add,   \
    .add_batch = t_add_batch, .contains = t_contains,                         \
    .contains_batch = t_batch, .remove = t_remove, .count = t_count,          \
    .merge = t_merge, .fpr_bound = t_bound, .describe = t_describe,           \
    .curve = t_curve, .params_write = t_params_write

const amq__type amq__type_qf = {
    .info = {.name = "qf",
             .type_id = AMQ__ID_qf,
             .caps = AMQ_CAP_REMOVE | AMQ_CAP_COUNT | AMQ_CAP_UNION |
                     AMQ_CAP_CONCURRENT,
             .summary = "rank-and-select quotient filter (copies per key)",
             .params = QF_PARAMS,
             .default_hash = AMQ_HASH_XXH3},
    .variant = &mode_qf,
    QF_CALLBACKS};

const amq__type amq__type_cqf = {
    .info = {.name = "cqf",
             .type_id = AMQ__ID_cqf,
             .caps = AMQ_CAP_REMOVE | AMQ_CAP_COUNT | AMQ_CAP_UNION |
                     AMQ_CAP_CONCURRENT,
             .summary = "counting quotient filter (variable-length counters)",
             .params = QF_PARAMS,
             .default_hash = AMQ_HASH_XXH3},
    .variant = &mode_cqf,
    QF_CALLBACKS};

/* For tests: operations that fell back to every region lock. */
uint64_t amq__qf_widenings(const amq_qf *f);
uint64_t amq__qf_widenings(const amq_qf *f) {
    return __atomic_load_n(&f->widenings, __ATOMIC_RELAXED);
}

/* For tests: the raw table (the frame's payload). */
const uint8_t *amq__qf_table(const amq_qf *f, size_t *len);
const uint8_t *amq__qf_table(const amq_qf *f, size_t *len) {
    *len = f->o.table_bytes;
    return f->data;
}
