/*
 * quotient.c — the rank-and-select quotient filter (qf) and, in counting
 * mode, the counting quotient filter (cqf).
 *
 * Papers: Bender et al., "Don't thrash: how to cache your hash on flash"
 * (VLDB 2012) for the quotient filter; Pandey, Bender, Johnson, Patro, "A
 * general-purpose counting filter: making every bit count" (SIGMOD 2017) for
 * the rank/select metadata and the counter encoding. Both are re-derived
 * here; the code and the exact encoding are our own.
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
 * in [64b, x], and select the d-th run end at or after 64b + o. A slot i is
 * free iff end(i) <= i. Select in a word uses PDEP+TZCNT when the CPU has
 * BMI2 (checked at run time), else a portable byte scan; tests compare them.
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
 * Failure modes: AMQ_ERR_FULL when the slots an insert needs would run past
 * the table (checked before anything moves); removes of absent keys
 * AMQ_ERR_NOT_FOUND; merges and resizes build aside and swap, so a failure
 * leaves the filter as it was. Loading validates everything above, so a
 * crafted frame with a valid checksum cannot make a query read out of bounds.
 */
#include <math.h>
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
#define QF_BATCH 16
#define QF_MIN_RBITS_CQF 2u

struct amq_qf {
    amq__mem mem;
    amq__block table; /* raw == NULL for a view */
    uint8_t *data;
    size_t data_len;  /* nblocks * bsize */
    uint64_t nslots;  /* N: home slots (quotients) */
    uint64_t tslots;  /* T = N + E */
    uint64_t nblocks; /* T / 64 */
    size_t bsize;     /* 17 + 8 * width */
    unsigned rbits;
    unsigned width;   /* slot bits (rbits + value bits; value bits = 0) */
    uint64_t rmask;
    bool counting;
    bool use_pdep;
    uint64_t items;    /* copies held */
    uint64_t distinct; /* D: distinct fingerprints */
    uint64_t used;     /* slots in use */
};

/* ---- select in one word -------------------------------------------------- */

uint64_t amq__qf_select64_scalar(uint64_t x, unsigned k);
uint64_t amq__qf_select64_pdep(uint64_t x, unsigned k);
bool amq__qf_have_pdep(void);

/* Position of the k-th (from 0) set bit of x; 64 if x has <= k bits. */
uint64_t amq__qf_select64_scalar(uint64_t x, unsigned k) {
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
__attribute__((target("popcnt"))) static uint64_t popcnt_hw(uint64_t x) {
    return (uint64_t)__builtin_popcountll(x);
}
#else
static uint64_t popcnt_hw(uint64_t x) { return amq__popcount64(x); }
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
static inline bool occ_get(const amq_qf *f, uint64_t q) {
    return (occ_word(f, q >> 6) >> (q & 63)) & 1;
}
static inline bool rend_get(const amq_qf *f, uint64_t i) {
    return (rend_word(f, i >> 6) >> (i & 63)) & 1;
}
static void bit_put(uint8_t *p, unsigned j, bool v) {
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

static uint64_t slot_get(const amq_qf *f, uint64_t i) {
    unsigned sh;
    size_t at = slot_at(f, i, &sh);
    uint64_t mask = (1ULL << f->width) - 1;
    unsigned __int128 acc = 0;
    if (at + 16 <= f->data_len) {
        memcpy(&acc, f->data + at, 16);
        return (uint64_t)(acc >> sh) & mask;
    }
    /* Near the end of the table: read only the bytes the slot covers. */
    unsigned nbytes = (sh + f->width + 7) / 8;
    for (unsigned k = 0; k < nbytes; k++)
        acc |= (unsigned __int128)f->data[at + k] << (8 * k);
    return (uint64_t)(acc >> sh) & mask;
}

static void slot_set(amq_qf *f, uint64_t i, uint64_t v) {
    unsigned sh;
    size_t at = slot_at(f, i, &sh);
    unsigned nbytes = (sh + f->width + 7) / 8;
    unsigned __int128 mask = (((unsigned __int128)1 << f->width) - 1) << sh;
    unsigned __int128 acc = 0;
    if (at + 16 <= f->data_len) {
        memcpy(&acc, f->data + at, 16);
        acc = (acc & ~mask) | (((unsigned __int128)v << sh) & mask);
        memcpy(f->data + at, &acc, 16);
        return;
    }
    for (unsigned k = 0; k < nbytes; k++)
        acc |= (unsigned __int128)f->data[at + k] << (8 * k);
    acc = (acc & ~mask) | (((unsigned __int128)v << sh) & mask);
    for (unsigned k = 0; k < nbytes; k++)
        f->data[at + k] = (uint8_t)(acc >> (8 * k));
}

/* ---- rank and select over the table -------------------------------------- */

/* The (d >= 1)-th run end at or after slot `from`; T if there is none. */
static uint64_t select_rend(const amq_qf *f, uint64_t from, uint64_t d) {
    uint64_t b = from >> 6;
    if (b >= f->nblocks)
        return f->tslots;
    uint64_t w = rend_word(f, b) & (~0ULL << (from & 63));
    for (;;) {
        uint64_t c = popcnt(f, w);
        if (d <= c)
            return b * 64 + select64(f, w, (unsigned)(d - 1));
        d -= c;
        if (++b >= f->nblocks)
            return f->tslots;
        w = rend_word(f, b);
    }
}

/* end(x) given block b = x / 64 and its true offset o. */
static uint64_t end_with(const amq_qf *f, uint64_t b, uint64_t o, uint64_t x) {
    uint64_t base = b * 64;
    unsigned j = (unsigned)(x - base);
    uint64_t occ = occ_word(f, b) & (j == 63 ? ~0ULL : (2ULL << j) - 1);
    uint64_t d = popcnt(f, occ);
    if (d == 0)
        return base + o;
    uint64_t e = select_rend(f, base + o, d);
    return e < f->tslots ? e + 1 : f->tslots + 1;
}

/* Offset of block k+1 from block k's true offset t. */
static uint64_t next_off(const amq_qf *f, uint64_t k, uint64_t t) {
    uint64_t e = end_with(f, k, t, k * 64 + 63), base = (k + 1) * 64;
    return e > base ? e - base : 0;
}

/* True offset of block b: the stored one unless saturated, else recomputed
 * forward from the nearest unsaturated block before it. */
static uint64_t true_off(const amq_qf *f, uint64_t b) {
    if (off_get(f, b) < QF_OFF_SAT)
        return off_get(f, b);
    uint64_t j = b;
    while (j > 0 && off_get(f, j) == QF_OFF_SAT)
        j--;
    uint64_t t = off_get(f, j);
    for (; j < b; j++)
        t = next_off(f, j, t);
    return t;
}

static uint64_t end_of(const amq_qf *f, uint64_t x) {
    return end_with(f, x >> 6, true_off(f, x >> 6), x);
}

/* Where run q starts (or would start). */
static uint64_t run_start(const amq_qf *f, uint64_t q) {
    if (q == 0)
        return 0;
    uint64_t e = end_of(f, q - 1);
    return e > q ? e : q;
}

static uint64_t first_free(const amq_qf *f, uint64_t i) {
    while (i < f->tslots) {
        uint64_t e = end_of(f, i);
        if (e <= i)
            return i;
        i = e;
    }
    return f->tslots;
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

/* Recompute offsets of blocks from..(the block holding slot `upto`). */
static void fix_offsets(amq_qf *f, uint64_t from, uint64_t upto) {
    if (from == 0 || from >= f->nblocks)
        return;
    uint64_t t = true_off(f, from - 1);
    for (uint64_t b = from; b < f->nblocks && b * 64 <= upto; b++) {
        t = next_off(f, b - 1, t);
        off_set(f, b, t);
    }
}

/* ---- fingerprints and groups --------------------------------------------- */

static inline void split(const amq_qf *f, uint64_t h, uint64_t *q,
                         uint64_t *r) {
    unsigned __int128 p = (unsigned __int128)h * f->nslots;
    *q = (uint64_t)(p >> 64);
    *r = (uint64_t)p >> (64 - f->rbits);
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

/* Locate remainder r in run q: where its group is (or would go). */
typedef struct spot {
    uint64_t rs, re;  /* run [rs, re); re == rs if the run is empty */
    uint64_t pos;     /* the group's first slot, or the insertion point */
    group g;          /* g.count == 0 if r is absent */
    bool run;         /* run q exists */
} spot;

static void locate(const amq_qf *f, uint64_t q, uint64_t r, spot *s) {
    s->run = occ_get(f, q);
    s->rs = run_start(f, q);
    s->re = s->run ? end_of(f, q) : s->rs;
    s->pos = s->rs;
    s->g = (group){r, 0, 0};
    while (s->pos < s->re) {
        group g;
        if (!decode(f, s->pos, s->re, &g) || g.x > r)
            return;
        if (g.x == r) {
            s->g = g;
            return;
        }
        s->pos += g.len;
    }
}

/* ---- moving slots -------------------------------------------------------- */

static void move_slot(amq_qf *f, uint64_t from, uint64_t to) {
    slot_set(f, to, slot_get(f, from));
    rend_put(f, to, rend_get(f, from));
}

static void clear_slot(amq_qf *f, uint64_t i) {
    slot_set(f, i, 0);
    rend_put(f, i, false);
}

/* Open g free slots at position a by pushing what follows to the right,
 * each stretch up to the next free slot; *end gets the first slot after
 * the moved region. AMQ_ERR_FULL before touching anything if the table
 * lacks g free slots after a. */
static amq_status open_gap(amq_qf *f, uint64_t a, uint64_t g, uint64_t *end) {
    uint64_t e[QF_MAX_GROUP], i = a;
    *end = a;
    if (g == 0)
        return AMQ_OK;
    if (g > QF_MAX_GROUP)
        return AMQ_ERR_FULL;
    for (uint64_t j = 0; j < g; j++) {
        e[j] = first_free(f, i);
        if (e[j] >= f->tslots)
            return AMQ_ERR_FULL;
        i = e[j] + 1;
    }
    for (uint64_t j = g; j-- > 0;) {
        uint64_t start = j == 0 ? a : e[j - 1] + 1, amt = g - j;
        for (uint64_t k = e[j]; k-- > start;)
            move_slot(f, k, k + amt);
    }
    for (uint64_t k = a; k < a + g; k++)
        clear_slot(f, k);
    *end = e[g - 1] + 1;
    return AMQ_OK;
}

/* After run q lost s slots at its end (now [rs, re)), slide the following
 * runs of the cluster left while they sit right of their home. Returns the
 * first slot after everything touched. */
static uint64_t close_gap(amq_qf *f, uint64_t q, uint64_t new_end,
                          uint64_t old_end) {
    for (;;) {
        uint64_t nq = next_occupied(f, q + 1, old_end + 1);
        if (nq > old_end || nq >= f->nslots)
            return old_end;
        uint64_t os = nq > old_end ? nq : old_end;
        uint64_t ns = nq > new_end ? nq : new_end;
        if (ns == os)
            return old_end;
        uint64_t oe = select_rend(f, os, 1) + 1, len = oe - os;
        for (uint64_t i = 0; i < len; i++) {
            slot_set(f, ns + i, slot_get(f, os + i));
            rend_put(f, ns + i, false);
        }
        rend_put(f, ns + len - 1, true);
        for (uint64_t i = ns + len; i < oe; i++)
            clear_slot(f, i);
        q = nq;
        new_end = ns + len;
        old_end = oe;
    }
}

/* ---- insert and remove --------------------------------------------------- */

static amq_status insert(amq_qf *f, uint64_t h, uint64_t k) {
    uint64_t q, r, newc, ln, end;
    spot s;
    if (k == 0)
        return AMQ_ERR_INVALID;
    split(f, h, &q, &r);
    locate(f, q, r, &s);
    if (__builtin_add_overflow(s.g.count, k, &newc) ||
        f->items > UINT64_MAX - k)
        return AMQ_ERR_OVERFLOW;
    if (!f->counting && newc > f->tslots)
        return AMQ_ERR_FULL;
    if (!f->counting && k > QF_MAX_GROUP)
        return AMQ_ERR_UNSUPPORTED; /* copies: one gap per slot */
    ln = group_len(f, r, newc);
    /* g.len == 0 for a new group; open the slots after the old group. */
    bool at_end = s.pos + s.g.len == s.re;
    AMQ_RETURN_IF_ERR(open_gap(f, s.pos + s.g.len, ln - s.g.len, &end));
    write_group(f, s.pos, r, newc);
    if (!s.run) {
        occ_put(f, q, true);
        rend_put(f, s.pos + ln - 1, true);
    } else if (at_end) {
        rend_put(f, s.re - 1, false);
        rend_put(f, s.pos + ln - 1, true);
    }
    fix_offsets(f, (q >> 6) + 1, end > s.pos + ln ? end : s.pos + ln);
    f->items += k;
    f->distinct += s.g.count == 0;
    f->used += ln - s.g.len;
    return AMQ_OK;
}

static amq_status remove_k(amq_qf *f, uint64_t h, uint64_t k) {
    uint64_t q, r, newc, ln, cut, touched;
    spot s;
    if (k == 0)
        return AMQ_ERR_INVALID;
    split(f, h, &q, &r);
    if (!occ_get(f, q))
        return AMQ_ERR_NOT_FOUND;
    locate(f, q, r, &s);
    if (s.g.count < k)
        return AMQ_ERR_NOT_FOUND;
    newc = s.g.count - k;
    ln = group_len(f, r, newc);
    cut = s.g.len - ln;
    write_group(f, s.pos, r, newc);
    /* Slide the rest of run q over the cut slots. */
    for (uint64_t i = s.pos + s.g.len; i < s.re; i++)
        slot_set(f, i - cut, slot_get(f, i));
    for (uint64_t i = s.re - cut; i < s.re; i++)
        clear_slot(f, i);
    touched = s.re;
    if (cut > 0) {
        if (s.re - cut > s.rs)
            rend_put(f, s.re - cut - 1, true);
        else
            occ_put(f, q, false);
        touched = close_gap(f, q, s.re - cut, s.re);
    }
    fix_offsets(f, (q >> 6) + 1, touched);
    f->items -= k;
    f->distinct -= newc == 0;
    f->used -= cut;
    return AMQ_OK;
}

amq_status amq_qf_insert(amq_qf *f, uint64_t h) { return insert(f, h, 1); }
amq_status amq_qf_remove(amq_qf *f, uint64_t h) { return remove_k(f, h, 1); }

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
    uint64_t q, r;
    spot s;
    split(f, h, &q, &r);
    if (!occ_get(f, q))
        return 0;
    locate(f, q, r, &s);
    return s.g.count;
}

bool amq_qf_contains(const amq_qf *f, uint64_t h) {
    return amq_qf_count(f, h) != 0;
}

void amq_qf_contains_batch(const amq_qf *f, const uint64_t *h, size_t n,
                           uint8_t *out) {
    size_t i = 0;
    for (; i + QF_BATCH <= n; i += QF_BATCH) {
        for (size_t j = 0; j < QF_BATCH; j++) {
            uint64_t q, r;
            split(f, h[i + j], &q, &r);
            amq__prefetch(blk(f, q >> 6));
            amq__prefetch(blk(f, q >> 6) + QF_HDR + (q & 63) * f->width / 8);
        }
        for (size_t j = 0; j < QF_BATCH; j++)
            out[i + j] = amq_qf_contains(f, h[i + j]);
    }
    for (; i < n; i++)
        out[i] = amq_qf_contains(f, h[i]);
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
        it->runend = select_rend(f, it->pos, 1) + 1;
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
    amq__mem mem;
    amq_qf *f;
    size_t bytes, padded;
    AMQ_RETURN_IF_ERR(check_shape(n, r, counting));
    AMQ_RETURN_IF_ERR(table_bytes(n, r, &bytes));
    if (!amq__add(bytes, 16, &padded))
        return AMQ_ERR_OVERFLOW;
    amq__mem_init(&mem, opt);
    f = amq__zalloc(&mem, sizeof *f);
    if (f == NULL)
        return AMQ_ERR_NOMEM;
    f->mem = mem;
    f->nslots = n;
    f->tslots = n + extra_slots(n);
    f->nblocks = f->tslots / 64;
    f->rbits = r;
    f->width = r;
    f->rmask = (1ULL << r) - 1;
    f->bsize = QF_HDR + 8 * (size_t)f->width;
    f->data_len = bytes;
    f->counting = counting;
    f->use_pdep = !(opt != NULL && (opt->flags & AMQ_OPT_SCALAR)) &&
                  amq__qf_have_pdep();
    if (borrow != NULL) {
        f->data = (uint8_t *)borrow;
    } else {
        amq_status st = amq__block_alloc(&mem, padded, 64, &f->table);
        if (st != AMQ_OK) {
            amq__free(&mem, f, sizeof *f);
            return st;
        }
        f->data = f->table.ptr;
    }
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
    amq__mem mem = f->mem;
    if (f->table.raw != NULL)
        amq__block_free(&mem, &f->table);
    amq__free(&mem, f, sizeof *f);
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
    f->items += c;
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
        t = next_off(f, k - 1, t);
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
    if (a->items > UINT64_MAX - b->items)
        return AMQ_ERR_OVERFLOW;
    AMQ_RETURN_IF_ERR(alloc_qf(a->nslots, a->rbits, a->counting, opt, NULL,
                               &bld.f));
    bld.f->use_pdep = a->use_pdep;
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

/* Move g's table and counters into f and free what f had. */
static void adopt(amq_qf *f, amq_qf *g) {
    amq__block old = f->table;
    amq__mem mem = f->mem;
    f->table = g->table;
    f->data = g->data;
    f->data_len = g->data_len;
    f->nslots = g->nslots;
    f->tslots = g->tslots;
    f->nblocks = g->nblocks;
    f->bsize = g->bsize;
    f->rbits = g->rbits;
    f->width = g->width;
    f->rmask = g->rmask;
    f->items = g->items;
    f->distinct = g->distinct;
    f->used = g->used;
    if (old.raw != NULL)
        amq__block_free(&mem, &old);
    amq__free(&g->mem, g, sizeof *g);
}

amq_status amq_qf_merge_into(amq_qf *dst, const amq_qf *src) {
    amq_qf *m;
    amq_options opt;
    if (dst == NULL || src == NULL)
        return AMQ_ERR_INVALID;
    memset(&opt, 0, sizeof opt);
    opt.allocator = &dst->mem.a;
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
    memset(&opt, 0, sizeof opt);
    opt.allocator = &f->mem.a;
    AMQ_RETURN_IF_ERR(
        alloc_qf(f->nslots * 2, f->rbits - 1, f->counting, &opt, NULL, &g));
    g->use_pdep = f->use_pdep;
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
uint64_t amq_qf_items(const amq_qf *f) { return f->items; }
uint64_t amq_qf_distinct(const amq_qf *f) { return f->distinct; }
uint64_t amq_qf_used_slots(const amq_qf *f) { return f->used; }
size_t amq_qf_size_bytes(const amq_qf *f) { return f->data_len; }
double amq_qf_metadata_bits_per_slot(void) { return 2.0 + 8.0 / 64.0; }

/* A stranger's fingerprint is floor(h N 2^r / 2^64) for a uniform h: each of
 * the N 2^r values has probability at most 1/(N 2^r) + 2^-64, and it is a
 * false positive iff it hits one of the D stored fingerprints. */
double amq_qf_fpr_bound(const amq_qf *f) {
    double space = (double)f->nslots * ldexp(1.0, (int)f->rbits);
    double p = (double)f->distinct * (1.0 / space + 0x1p-64);
    return p < 1.0 ? p : 1.0;
}

/* ---- validation of loaded tables ----------------------------------------- */

static amq_status corrupt(amq_diag *diag, const char *what, uint64_t at) {
    return amq__diag(diag, AMQ_ERR_CORRUPT, 64, "quotient filter: %s at %llu",
                     what, (unsigned long long)at);
}

/* Every group of run [rs, re) decodes, is canonical and increases. */
static amq_status check_run(amq_qf *f, uint64_t rs, uint64_t re,
                            amq_diag *diag) {
    uint64_t pos = rs, prev = 0, tmp[QF_MAX_GROUP];
    bool first = true;
    while (pos < re) {
        group g;
        if (!decode(f, pos, re, &g))
            return corrupt(diag, "undecodable counter", pos);
        if (!first && g.x <= prev)
            return corrupt(diag, "remainders out of order", pos);
        if (f->counting) {
            unsigned n = encode(f, g.x, g.count, tmp);
            if (n != g.len)
                return corrupt(diag, "non-canonical counter", pos);
            for (unsigned i = 0; i < n; i++)
                if (slot_get(f, pos + i) != tmp[i])
                    return corrupt(diag, "non-canonical counter", pos);
        }
        if (__builtin_add_overflow(f->items, g.count, &f->items))
            return corrupt(diag, "count overflow", pos);
        f->distinct++;
        f->used += g.len;
        prev = g.x;
        first = false;
        pos += g.len;
    }
    return AMQ_OK;
}

static amq_status check_free(const amq_qf *f, uint64_t from, uint64_t to,
                             amq_diag *diag) {
    for (uint64_t i = from; i < to; i++)
        if (slot_get(f, i) != 0)
            return corrupt(diag, "non-zero free slot", i);
    return AMQ_OK;
}

static amq_status validate(amq_qf *f, amq_diag *diag) {
    uint64_t runs = 0, ends = 0, prev = 0, t = 0;
    for (uint64_t b = 0; b < f->nblocks; b++) {
        uint64_t occ = occ_word(f, b);
        if (b * 64 >= f->nslots && occ != 0)
            return corrupt(diag, "occupied bit past the home slots", b * 64);
        runs += amq__popcount64(occ);
        ends += amq__popcount64(rend_word(f, b));
    }
    if (runs != ends)
        return corrupt(diag, "run ends do not match occupied bits", 0);
    f->items = f->distinct = f->used = 0;
    for (uint64_t q = next_occupied(f, 0, f->nslots); q < f->nslots;
         q = next_occupied(f, q + 1, f->nslots)) {
        uint64_t rs = q > prev ? q : prev;
        uint64_t re = select_rend(f, rs, 1);
        if (re >= f->tslots)
            return corrupt(diag, "run without an end", rs);
        AMQ_RETURN_IF_ERR(check_free(f, prev, rs, diag));
        AMQ_RETURN_IF_ERR(check_run(f, rs, re + 1, diag));
        prev = re + 1;
    }
    AMQ_RETURN_IF_ERR(check_free(f, prev, f->tslots, diag));
    if (off_get(f, 0) != 0)
        return corrupt(diag, "bad offset", 0);
    for (uint64_t k = 1; k < f->nblocks; k++) {
        t = next_off(f, k - 1, t);
        if (off_get(f, k) != (t < QF_OFF_SAT ? t : QF_OFF_SAT))
            return corrupt(diag, "bad offset", k * 64);
    }
    return AMQ_OK;
}

/* For tests: full invariant check of a live filter (counters included). */
amq_status amq__qf_check(amq_qf *f);
amq_status amq__qf_check(amq_qf *f) {
    uint64_t items = f->items, distinct = f->distinct, used = f->used;
    amq_status st = validate(f, NULL);
    if (st == AMQ_OK && (f->items != items || f->distinct != distinct ||
                         f->used != used))
        st = AMQ_ERR_CORRUPT;
    f->items = items;
    f->distinct = distinct;
    f->used = used;
    return st;
}

/* ---- the generic interface ----------------------------------------------- */

static amq_status t_create_mode(amq__spec *spec, uint64_t capacity, double fpr,
                                const amq_options *opt, void **impl,
                                amq_diag *diag, bool counting) {
    uint64_t q = 0, slots = 0, r = 0, n = 0;
    bool has_q, has_slots, has_r;
    unsigned rr = 0;
    unsigned rmin = counting ? QF_MIN_RBITS_CQF : 1u;
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "q", 6, 56, &q, &has_q, diag));
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "slots", 64, UINT64_C(1) << 56,
                                    &slots, &has_slots, diag));
    AMQ_RETURN_IF_ERR(
        amq__spec_u64(spec, "r", rmin, AMQ_QF_MAX_RBITS, &r, &has_r, diag));
    if (has_q && has_slots)
        return amq__diag(diag, AMQ_ERR_SPEC, 0, "give q= or slots=, not both");
    if (has_slots && slots % 64 != 0)
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "slots=%llu is not a multiple of 64",
                         (unsigned long long)slots);
    if ((!has_q && !has_slots) || !has_r) {
        if (capacity == 0)
            return amq__diag(diag, AMQ_ERR_SPEC, 0,
                             "%s needs a capacity and fpr, or q= (or slots=) "
                             "and r=", counting ? "cqf" : "qf");
        amq_status st = size_for(capacity, fpr, &n, &rr);
        if (st != AMQ_OK)
            return amq__diag(diag, st, 0, "capacity %llu / fpr %g out of range",
                             (unsigned long long)capacity, fpr);
    }
    if (has_q)
        n = UINT64_C(1) << q;
    else if (has_slots)
        n = slots;
    if (has_r)
        rr = (unsigned)r;
    else if (rr < rmin)
        rr = rmin;
    amq_status st = alloc_qf(n, rr, counting, opt, NULL, (amq_qf **)impl);
    if (st == AMQ_ERR_INVALID || st == AMQ_ERR_OVERFLOW)
        return amq__diag(diag, st, 0, "%llu slots of %u bits: %s",
                         (unsigned long long)n, rr,
                         st == AMQ_ERR_OVERFLOW ? "too large"
                                                : "invalid shape");
    return st;
}

static amq_status t_create_qf(amq__spec *spec, uint64_t capacity, double fpr,
                              const amq_options *opt, void **impl,
                              amq_diag *diag) {
    return t_create_mode(spec, capacity, fpr, opt, impl, diag, false);
}
static amq_status t_create_cqf(amq__spec *spec, uint64_t capacity, double fpr,
                               const amq_options *opt, void **impl,
                               amq_diag *diag) {
    return t_create_mode(spec, capacity, fpr, opt, impl, diag, true);
}

static void t_destroy(void *impl) { amq_qf_free(impl); }
static amq_status t_add(void *impl, uint64_t h) { return insert(impl, h, 1); }
static bool t_contains(const void *impl, uint64_t h) {
    return amq_qf_contains(impl, h);
}
static void t_batch(const void *impl, const uint64_t *h, size_t n,
                    uint8_t *out) {
    amq_qf_contains_batch(impl, h, n, out);
}
static amq_status t_remove(void *impl, uint64_t h) {
    return remove_k(impl, h, 1);
}
static amq_status t_count(const void *impl, uint64_t h, uint64_t *out) {
    *out = amq_qf_count(impl, h);
    return AMQ_OK;
}
static amq_status t_merge(void *dst, const void *src, amq__merge_op op) {
    if (op != AMQ__UNION)
        return AMQ_ERR_UNSUPPORTED;
    return amq_qf_merge_into(dst, src);
}
static uint64_t t_items(const void *impl) {
    return ((const amq_qf *)impl)->items;
}
static size_t t_size(const void *impl) { return amq_qf_size_bytes(impl); }
static double t_bound(const void *impl) { return amq_qf_fpr_bound(impl); }
static size_t t_describe(const void *impl, char *buf, size_t cap) {
    const amq_qf *f = impl;
    int n;
    if ((f->nslots & (f->nslots - 1)) == 0)
        n = snprintf(buf, cap, "q=%u,r=%u", ceil_log2(f->nslots), f->rbits);
    else
        n = snprintf(buf, cap, "slots=%llu,r=%u",
                     (unsigned long long)f->nslots, f->rbits);
    return n > 0 ? (size_t)n : 0;
}

/* The family's curve: a filter at its maximum load a = 0.95 spends
 * (r + 2.125) / a bits per key and has fpr a * 2^-r; r taken as real. */
static amq_status t_curve_fpr(amq__spec *spec, double bpk, double *out,
                              amq_diag *diag) {
    (void)spec;
    (void)diag;
    if (!(bpk > 0.0) || isinf(bpk))
        return AMQ_ERR_INVALID;
    double r = AMQ_QF_MAX_LOAD * bpk - amq_qf_metadata_bits_per_slot();
    double p = AMQ_QF_MAX_LOAD * exp2(-r);
    *out = p < 1.0 ? p : 1.0;
    return AMQ_OK;
}

static amq_status t_curve_bits(amq__spec *spec, double fpr, double *out,
                               amq_diag *diag) {
    (void)spec;
    (void)diag;
    if (!(fpr > 0.0 && fpr < 1.0))
        return AMQ_ERR_INVALID;
    double r = log2(AMQ_QF_MAX_LOAD / fpr);
    *out = (r + amq_qf_metadata_bits_per_slot()) / AMQ_QF_MAX_LOAD;
    return AMQ_OK;
}

/* params: N u64 | r u8 | width u8 | mode u8 (1 = counting) | reserved u8 |
 * reserved u32 | items u64 */
#define PARAMS_LEN 24
static size_t t_params_size(const void *impl) {
    (void)impl;
    return PARAMS_LEN;
}
static void t_params_write(const void *impl, uint8_t *p) {
    const amq_qf *f = impl;
    memset(p, 0, PARAMS_LEN);
    amq__put_u64(p, f->nslots);
    p[8] = (uint8_t)f->rbits;
    p[9] = (uint8_t)f->width;
    p[10] = f->counting ? 1 : 0;
    amq__put_u64(p + 16, f->items);
}
static size_t t_payload_size(const void *impl) { return t_size(impl); }
static void t_payload_write(const void *impl, uint8_t *dst) {
    const amq_qf *f = impl;
    memcpy(dst, f->data, f->data_len);
}

static amq_status t_load_mode(const uint8_t *p, size_t plen,
                              const uint8_t *payload, size_t len, bool view,
                              const amq_options *opt, void **impl,
                              amq_diag *diag, bool counting) {
    uint64_t n, items;
    size_t bytes;
    amq_qf *f;
    if (plen != PARAMS_LEN)
        return amq__diag(diag, AMQ_ERR_CORRUPT, 64, "quotient filter "
                         "parameters: %zu bytes, expected %d", plen,
                         PARAMS_LEN);
    n = amq__get_u64(p);
    items = amq__get_u64(p + 16);
    if (p[9] != p[8] || p[10] != (counting ? 1 : 0) || p[11] != 0 ||
        amq__get_u32(p + 12) != 0)
        return amq__diag(diag, AMQ_ERR_CORRUPT, 72,
                         "quotient filter: bad mode or reserved field");
    if (check_shape(n, p[8], counting) != AMQ_OK ||
        table_bytes(n, p[8], &bytes) != AMQ_OK || bytes != len)
        return amq__diag(diag, AMQ_ERR_CORRUPT, 64,
                         "quotient filter: %llu slots of %u bits do not match "
                         "a %zu-byte payload", (unsigned long long)n, p[8],
                         len);
    AMQ_RETURN_IF_ERR(alloc_qf(n, p[8], counting, opt, view ? payload : NULL,
                               &f));
    if (!view)
        memcpy(f->data, payload, len);
    amq_status st = validate(f, diag);
    if (st == AMQ_OK && f->items != items)
        st = corrupt(diag, "item count does not match the table", items);
    if (st != AMQ_OK) {
        amq_qf_free(f);
        return st;
    }
    *impl = f;
    return AMQ_OK;
}

static amq_status t_load_qf(const uint8_t *p, size_t plen,
                            const uint8_t *payload, size_t len, bool view,
                            const amq_options *opt, void **impl,
                            amq_diag *diag) {
    return t_load_mode(p, plen, payload, len, view, opt, impl, diag, false);
}
static amq_status t_load_cqf(const uint8_t *p, size_t plen,
                             const uint8_t *payload, size_t len, bool view,
                             const amq_options *opt, void **impl,
                             amq_diag *diag) {
    return t_load_mode(p, plen, payload, len, view, opt, impl, diag, true);
}

#define QF_PARAMS                                                              \
    "q=LOG2_SLOTS (6-56), slots=HOME_SLOTS (multiple of 64, instead of q), "   \
    "r=REMAINDER_BITS (default ceil(log2(1/fpr)))"

const amq__type amq__type_qf = {
    .info = {.name = "qf",
             .type_id = 102,
             .caps = AMQ_CAP_REMOVE | AMQ_CAP_COUNT | AMQ_CAP_UNION,
             .summary = "rank-and-select quotient filter (copies per key)",
             .params = QF_PARAMS,
             .default_hash = AMQ_HASH_XXH3},
    .create = t_create_qf,
    .destroy = t_destroy,
    .add = t_add,
    .contains = t_contains,
    .contains_batch = t_batch,
    .remove = t_remove,
    .count = t_count,
    .merge = t_merge,
    .items = t_items,
    .size_bytes = t_size,
    .fpr_bound = t_bound,
    .describe = t_describe,
    .curve_fpr = t_curve_fpr,
    .curve_bits = t_curve_bits,
    .params_size = t_params_size,
    .params_write = t_params_write,
    .payload_size = t_payload_size,
    .payload_write = t_payload_write,
    .load = t_load_qf,
};

const amq__type amq__type_cqf = {
    .info = {.name = "cqf",
             .type_id = 103,
             .caps = AMQ_CAP_REMOVE | AMQ_CAP_COUNT | AMQ_CAP_UNION,
             .summary = "counting quotient filter (variable-length counters)",
             .params = QF_PARAMS,
             .default_hash = AMQ_HASH_XXH3},
    .create = t_create_cqf,
    .destroy = t_destroy,
    .add = t_add,
    .contains = t_contains,
    .contains_batch = t_batch,
    .remove = t_remove,
    .count = t_count,
    .merge = t_merge,
    .items = t_items,
    .size_bytes = t_size,
    .fpr_bound = t_bound,
    .describe = t_describe,
    .curve_fpr = t_curve_fpr,
    .curve_bits = t_curve_bits,
    .params_size = t_params_size,
    .params_write = t_params_write,
    .payload_size = t_payload_size,
    .payload_write = t_payload_write,
    .load = t_load_cqf,
};
