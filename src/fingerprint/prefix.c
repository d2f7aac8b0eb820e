/*
 * prefix.c — the prefix filter (Even, Even, Morrison, "Prefix Filter:
 * Practically and Theoretically Better Than Bloom", PVLDB 15, 2022).
 *
 * A table of m bins, each a pocket dictionary (pocket.h) in one half (R = 8)
 * or whole (R = 16) cache line, and a spare for what the bins turn away. A
 * key's 64-bit hash h gives a bin and a fingerprint fp in [0, Q 2^R):
 *
 *   h:  [ high 32 ──► bin = reduce(h >> 32, m) ][ low 32 = t ]
 *       fp = (t Q 2^R) >> 32 = q 2^R + r   (list q < Q, remainder r < 2^R)
 *
 *   R = 8:  K = 25 slots, Q = 25 lists, 32 bytes
 *   +---------------------------+--------------------------------------+
 *   | header 56 bits            | 25 x 8-bit remainders                |
 *   +---------------------------+--------------------------------------+
 *     bits 0-49: the pocket;      bytes 7-31
 *     bit 55: overflowed
 *   R = 16: K = 28, Q = 27, 64 bytes: header 64 bits (pocket 0-54,
 *           overflowed 63), then 28 x 16-bit remainders (bytes 8-63)
 *
 * The invariant that names the filter: a bin holds the smallest
 * fingerprints of all the keys it was given (a prefix of their sorted
 * sequence) and remembers whether it ever turned one away. Insert: a bin
 * with room appends fp to its list; a full bin first sorts its last list
 * (so that its last slot is its largest), keeps the smaller of fp and its
 * largest, marks itself overflowed and forwards the other, as the pair
 * (bin, fingerprint), to the spare; its last list stays sorted from then
 * on (the paper's code does the same). Query: if the bin overflowed and
 * fp exceeds its largest, the answer is the spare's (every fingerprint of
 * this bin above the largest was forwarded, and only those); otherwise
 * the bin's list q is searched for r (one vector compare of the line, two
 * selects). A query reads one line: the bin's, or the spare's when routed.
 *
 * Speed. A byte per bin beside the table (the list of its largest, or
 * none: "route bytes", derived, not saved) tells a query which line to
 * read before either arrives, so the route never waits for the bin; the
 * kernels return on a predicted branch when no slot matches and leave
 * the select (and the exact route, for keys of the largest's list) out
 * of line. An insert
 * (a function per instruction set and layout, chosen at creation) finds
 * its list's end by one select, opens the slot there with vector code
 * (pocket.h) and updates the pocket by PDEP; a full bin's rule (keep the
 * smaller, forward the larger) runs as one sequence for both outcomes,
 * out of line. Appending rather than keeping every list sorted spares the
 * insert a compare of the line, a popcount and a second select, all
 * waiting for the bin's line. The portable select, amq__pk_open_slot and the
 * shift-and-mask pocket update are the reference (AMQ_OPT_SCALAR);
 * test_pocket holds every path to the same bytes and answers.
 *
 * The spare is a split-block Bloom filter (sbbf_core.h; the paper's
 * "BBF" spare) over mix(bin, fp), sized for the forwards expected at
 * capacity, about m E[(X - K)+] for a Poisson(n / m) bin load X. So an
 * insert never fails: past the capacity more keys overflow and the
 * spare's rate, and the bound, rise. No removes (a removed fingerprint
 * would leave room that later, smaller ones could not tell from
 * forwarded ones).
 *
 * Invariants (load checks them): every pocket has exactly Q ones and only
 * pocket and flag bits set; slots past a bin's fill are 0; an overflowed
 * bin is full and its last list sorted; fills plus forwards (spare_items)
 * add up to items; a bin's route byte is the list of its largest if it
 * overflowed, else RB_NONE (rebuilt by load).
 *
 * False positives: a stored key with the same (bin, fp), or the spare
 * erring for a routed key, so fpr_bound() = 1 - (1 - pb pf)^n +
 * min(1, pb pf above) * spare rate, with pb and pf the largest
 * probabilities of one bin and one fingerprint and "above" the sum over
 * overflowed bins of the values above the bin's largest, which the filter
 * keeps as it goes. Derivation: docs/structures.md §"Prefix filter", Bound.
 * Sized from (capacity, fpr): the smaller of R = 8 and R = 16 whose bins
 * (m = capacity / (K load) at least, more if 90% of fpr needs it) and
 * spare (the last 10%) meet fpr. The load is the paper's 0.95 unless the
 * spec says otherwise (load=, from 0.5 to 1): at 0.95, 11.5 bits per key
 * and 0.41% for R = 8 (5.9% of keys forwarded at capacity); at 1, 11.2
 * bits and 0.43% (8%), with slower inserts and queries.
 *
 * Failure modes: construction fails cleanly (bad arguments, overflow,
 * allocation); adds cannot fail; views are read-only.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#define PF_X86 1
#endif

#include "amq/dynamic.h"
#include "core/poisson.h"
#include "core/sbbf_core.h"
#include "core/fpr.h"
#include "core/mem.h"
#include "type/type.h"
#include "fingerprint/lines.h"
#include "fingerprint/pocket.h"

#define MAX_BINS UINT64_C(0xffffffff)
#define AHEAD 16
#define SPARE_SHARE 0.1   /* of the target rate left to the spare */
#define LOAD_DEFAULT 0.95 /* keys per bin slot at capacity (load=)  */
#define LOAD_MIN 0.5

typedef struct pf_shape {
    unsigned r;     /* remainder bits                          */
    unsigned slots; /* K                                       */
    unsigned lists; /* Q                                       */
    unsigned hdr;   /* header bytes (the slots follow)         */
    unsigned bytes; /* bin bytes                               */
    unsigned flag;  /* header bit: overflowed                  */
} pf_shape;

static const pf_shape SHAPE8 = {8, 25, 25, 7, 32, 55};
static const pf_shape SHAPE16 = {16, 28, 27, 8, 64, 63};

static const pf_shape *shape_of(unsigned r) {
    return r == 8 ? &SHAPE8 : r == 16 ? &SHAPE16 : NULL;
}

struct amq_prefix {
    amq__obj o;        /* o.items: keys added; o.table: bins, then spare */
    const uint8_t *rd; /* the bins                                      */
    uint8_t *wr;       /* the same when writable; NULL for a view       */
    const uint32_t *spare_rd;
    uint32_t *spare_wr;
    uint64_t nbins; /* m                                             */
    uint64_t spare_blocks;
    uint64_t spare_items; /* fingerprints forwarded                       */
    uint64_t above;       /* sum over overflowed bins of values above max  */
    uint64_t span;        /* Q 2^R                                         */
    uint8_t *route;       /* a route byte per bin (below)                  */
    size_t route_bytes;
    const pf_shape *s;
    /* the insert for the layout and the CPU, chosen with the kernel */
    void (*add)(amq_prefix *f, uint64_t h);
};

/* ---- a key's place ------------------------------------------------------ */

static inline uint64_t bin_of(const amq_prefix *f, uint64_t h) {
    return amq__reduce32((uint32_t)(h >> 32), (uint32_t)f->nbins);
}

static inline uint32_t fp_of(const amq_prefix *f, uint64_t h) {
    return (uint32_t)(((h & 0xffffffffu) * f->span) >> 32);
}

/* The spare's key for (bin, fp): mixed, since the spare reads its block
 * from the high half and its bits from the low half. */
static inline uint64_t spare_key(uint64_t bin, uint32_t fp) {
    return amq__mix64((bin << 24) ^ fp ^ 0x5851f42d4c957f2dULL);
}

/* ---- a bin -------------------------------------------------------------- */

static inline const uint8_t *bin_at(const amq_prefix *f, uint64_t b) {
    return f->rd + (size_t)b * f->s->bytes;
}

/* ---- route bytes ----------------------------------------------------------
 *
 * Beside the table (not in the frame: load recomputes them from the
 * bins), a byte per bin says where a query of list q is answered: for an
 * overflowed bin, the list qm of its largest fingerprint (q < qm: in the
 * bin; q > qm: in the spare alone; q = qm: the bin's last slot decides);
 * RB_NONE for a bin that never overflowed (every q: in the bin). The
 * bytes fit in cache where the bins do not (0.34 bits per key at R = 8),
 * so a query's route does not wait for its bin's line. (Two codes to a
 * byte, 4 bits each with an escape for the rare bins whose largest sits
 * in a low list, are slower: the decode's instructions wait for the
 * code's load.) */
#define RB_NONE 0xffu

static inline unsigned rb_get(const amq_prefix *f, uint64_t b) {
    return f->route[b];
}

static inline void rb_put(amq_prefix *f, uint64_t b, unsigned v) {
    f->route[b] = (uint8_t)v;
}

static inline uint64_t pocket_mask(const pf_shape *s) {
    return (UINT64_C(1) << (s->lists + s->slots)) - 1;
}

/* The header: pocket and flag (the 7-byte header's load also reads the
 * first slot, masked off). */
static inline uint64_t hdr_get(const uint8_t *bin, const pf_shape *s) {
    uint64_t h = amq__get_u64(bin);
    return s->hdr == 8 ? h : h & ((UINT64_C(1) << 56) - 1);
}

/* (A 7-byte header goes back as one word with the first slot.) */
static inline void hdr_put(uint8_t *bin, const pf_shape *s, uint64_t h) {
    if (s->hdr == 7)
        h = (h & ((UINT64_C(1) << 56) - 1)) | (uint64_t)bin[7] << 56;
    amq__put_u64(bin, h);
}

static inline unsigned slot_get(const uint8_t *bin, const pf_shape *s,
                                unsigned i) {
    return s->r == 8 ? bin[s->hdr + i] : amq__get_u16(bin + s->hdr + 2 * i);
}

static inline void slot_put(uint8_t *bin, const pf_shape *s, unsigned i,
                            unsigned v) {
    if (s->r == 8)
        bin[s->hdr + i] = (uint8_t)v;
    else
        amq__put_u16(bin + s->hdr + 2 * i, (uint16_t)v);
}

static inline bool overflowed(uint64_t hdr, const pf_shape *s) {
    return (hdr >> s->flag) & 1;
}

/* The largest fingerprint of a full bin: its last slot, in the list that
 * the pocket's last 0 belongs to (K zeros and Q ones fill the pocket, so
 * that 0 is the highest one below the top). */
static inline uint32_t bin_max(const uint8_t *bin, uint64_t hdr,
                               const pf_shape *s) {
    uint64_t zeros = ~hdr & pocket_mask(s);
    unsigned z = 63u - (unsigned)__builtin_clzll(zeros | 1);
    unsigned q = z - (s->slots - 1);
    return (uint32_t)(q << s->r) | slot_get(bin, s, s->slots - 1);
}

/* Whether the bin holds K values: the pocket's top bit is then its last
 * one (K zeros and Q ones fill it). */
static inline bool bin_full(uint64_t hdr, const pf_shape *s) {
    return (hdr >> (s->lists + s->slots - 1)) & 1;
}

/* Values of [0, Q 2^R) above m: what a query routed past m could be. */
static inline uint64_t values_above(const amq_prefix *f, uint32_t m) {
    return f->span - 1 - m;
}

/* The reference: list q's slots one by one. */
static bool bin_has_ref(const uint8_t *bin, const pf_shape *s, unsigned q,
                        unsigned r) {
    unsigned lo, hi;
    amq__pk_range64(hdr_get(bin, s) & pocket_mask(s), q, false, &lo, &hi);
    for (unsigned i = lo; i < hi; i++)
        if (slot_get(bin, s, i) == r)
            return true;
    return false;
}

/* ---- queries ------------------------------------------------------------ */

static bool spare_has(const amq_prefix *f, uint64_t bin, uint32_t fp) {
    return amq__sbbf_has(f->spare_rd, f->spare_blocks, spare_key(bin, fp));
}

/* Whether fp goes to the spare: the bin overflowed and fp is above its
 * largest (computed either way: the flag is a coin toss at full load, a
 * branch on it would be mispredicted; the route itself is rare). */
static inline bool routed(const uint8_t *bin, uint64_t hdr, const pf_shape *s,
                          uint32_t fp) {
    return (unsigned)overflowed(hdr, s) & (unsigned)(fp > bin_max(bin, hdr, s));
}

/* The same without the largest fingerprint, for the kernels. The zeros
 * of an overflowed (so full) bin's pocket end at bit qm + K - 1, qm the
 * largest's list; the bits of ~hdr kept besides them are the flag's
 * (clear when overflowed, else set, and above every pocket bit). So
 * t = (those bits) >> (q + K - 1) is 0 when fp's list q is above qm (fp
 * routed), 1 when it is qm (routed iff r is above the last slot), 2 or
 * more when q is below qm or the bin never overflowed (not routed): a
 * shift, a load and two compares. */
static inline bool routed_fast(const uint8_t *bin, uint64_t hdr,
                               const pf_shape *s, uint32_t fp) {
    uint64_t keep = pocket_mask(s) | UINT64_C(1) << s->flag;
    uint64_t t = (~hdr & keep) >> ((fp >> s->r) + s->slots - 1);
    unsigned r = fp & ((1u << s->r) - 1);
    return t <= (uint64_t)(r > slot_get(bin, s, s->slots - 1));
}

static bool contains_ref(const amq__obj *o, uint64_t h) {
    const amq_prefix *f = (const amq_prefix *)o;
    const pf_shape *s = f->s;
    uint64_t b = bin_of(f, h);
    uint32_t fp = fp_of(f, h);
    const uint8_t *bin = bin_at(f, b);
    if (routed(bin, hdr_get(bin, s), s, fp))
        return spare_has(f, b, fp);
    return bin_has_ref(bin, s, fp >> s->r, fp & ((1u << s->r) - 1));
}

#ifdef PF_X86
#define PF_INL inline __attribute__((always_inline))
#define PF_AVX2 __attribute__((flatten, target("avx2,bmi,bmi2,popcnt,lzcnt")))
#define PF_AVX512                                                              \
    __attribute__((flatten,                                                    \
                   target("avx512f,avx512bw,avx2,bmi,bmi2,popcnt,lzcnt")))

/* Slots equal to r, one bit each (slot i at bit i): the bin's lanes
 * (lines.h) past the header (7 bytes, or 4 16-bit lanes). */
PF_AVX2 static PF_INL uint64_t eq_avx2(const uint8_t *bin, unsigned w,
                                       unsigned r) {
    return w == 8 ? amq__half_eq256(bin, r) >> 7
                  : amq__line_eq256(bin, 16, r) >> 4;
}

PF_AVX512 static PF_INL uint64_t eq_avx512(const uint8_t *bin, unsigned w,
                                           unsigned r) {
    return w == 8 ? amq__half_eq256(bin, r) >> 7
                  : amq__line_eq512(bin, 16, r) >> 4;
}

/* Out of line: a key whose line matched r somewhere (9% of absent keys
 * at R = 8), or whose route its bin's last slot decides (`exact`: its
 * list is the largest's). It has the line: the exact route, then the
 * list's range. */
#define PF_REST(NAME, W)                                                       \
    __attribute__((noinline)) PF_BMI_REST static bool NAME(                    \
        const amq_prefix *f, uint64_t b, uint32_t fp, uint64_t eq,             \
        bool exact) {                                                          \
        const pf_shape *s = W == 8 ? &SHAPE8 : &SHAPE16;                       \
        const uint8_t *bin = f->rd + (size_t)b * s->bytes;                     \
        uint64_t hdr = amq__get_u64(bin);                                      \
        unsigned lo, hi;                                                       \
        if (exact && routed_fast(bin, hdr, s, fp))                             \
            return spare_has(f, b, fp);                                        \
        amq__pk_range64(hdr &pocket_mask(s), fp >> W, true, &lo, &hi);         \
        return (eq & ((UINT64_C(1) << hi) - (UINT64_C(1) << lo))) != 0;        \
    }

#define PF_BMI_REST __attribute__((target("bmi,bmi2,popcnt,lzcnt")))
PF_REST(rest8, 8)
PF_REST(rest16, 16)

/* The spare's answer for (b, fp), by its block's AVX2 test. */
PF_AVX2 static PF_INL bool spare_has256(const amq_prefix *f, uint64_t b,
                                        uint32_t fp) {
    uint64_t k = spare_key(b, fp);
    return amq__sbbf_test256(
        f->spare_rd + AMQ__SBBF_WORDS * amq__sbbf_block_of(k, f->spare_blocks),
        (uint32_t)k);
}

/* The bin's route byte (in cache) picks the one line a key reads, before
 * either line arrives: keys of lists below the largest's read the bin
 * (all keys of a bin that never overflowed), keys above it read the
 * spare alone. Both branches wait only for the route byte (a cache
 * hit), so a mispredicted one costs a few cycles, not a line. In the bin, most
 * absent keys match no slot (at R = 8, 1 - (1 - 2^-8)^K of them match
 * one: 9% at full load) and return on a predicted branch; the rest,
 * whose instructions would otherwise all wait for the line in the
 * schedulers, go out of line. */
#define PF_KERNEL(NAME, ATTR, EQ, W)                                           \
    ATTR static bool NAME(const amq__obj *o, uint64_t h) {                     \
        const amq_prefix *f = (const amq_prefix *)o;                           \
        const pf_shape *s = W == 8 ? &SHAPE8 : &SHAPE16;                       \
        uint64_t b = bin_of(f, h);                                             \
        uint32_t fp = fp_of(f, h);                                             \
        const uint8_t *bin = f->rd + (size_t)b * s->bytes; /* s constant */    \
        unsigned q = fp >> W, qm = rb_get(f, b);                               \
        if (__builtin_expect(q < qm, 1)) {                                     \
            uint64_t eq = EQ(bin, W, fp & ((1u << W) - 1));                    \
            if (__builtin_expect(eq == 0, 1))                                  \
                return false;                                                  \
            return (W == 8 ? rest8 : rest16)(f, b, fp, eq, false);             \
        }                                                                      \
        if (q > qm)                                                            \
            return spare_has256(f, b, fp);                                     \
        return (W == 8 ? rest8 : rest16)(                                      \
            f, b, fp, EQ(bin, W, fp & ((1u << W) - 1)), true);                 \
    }

PF_KERNEL(k256_8, PF_AVX2, eq_avx2, 8)
PF_KERNEL(k256_16, PF_AVX2, eq_avx2, 16)
PF_KERNEL(k512_16, PF_AVX512, eq_avx512, 16)
#endif

/* ---- inserts ------------------------------------------------------------ */

/* fp appended to its list q in a bin with room whose header is hdr: at
 * slot end - q, end the list's end (its q-th one), one select. isa: the
 * code that opens the slot (pocket.h). */
AMQ__PK_INLINE void bin_put(uint8_t *bin, const pf_shape *s, uint64_t hdr,
                            uint32_t fp, unsigned isa) {
    unsigned q = fp >> s->r, r = fp & ((1u << s->r) - 1);
    uint64_t pocket = hdr & pocket_mask(s);
    unsigned w = s->r / 8;
    unsigned end = amq__pk_sel64(pocket, q, isa != AMQ__PK_PORTABLE);
    /* the bin has room: its last slot is empty and may be dropped */
    amq__pk_open(bin, s->bytes, s->hdr + (end - q) * w, s->hdr + s->slots * w,
                 w, r, isa);
    pocket = amq__pk_ins64b(pocket, end, isa != AMQ__PK_PORTABLE);
    hdr_put(bin, s, pocket | (hdr & ~pocket_mask(s)));
}

/* The slots of a full bin's last list (the one its pocket's last 0 is
 * in): [*lo, K). */
static inline void last_list(const uint8_t *bin, const pf_shape *s,
                             unsigned *lo) {
    uint64_t pocket = hdr_get(bin, s) & pocket_mask(s);
    unsigned z = 63u - (unsigned)__builtin_clzll(~pocket & pocket_mask(s));
    unsigned hi;
    amq__pk_range64(pocket, z - (s->slots - 1), false, lo, &hi);
}

/* A full bin's last list sorted, so that its last slot is the bin's
 * largest fingerprint (insertion sort: the list is short, and this runs
 * only when a full bin is given a key). */
static void sort_last(uint8_t *bin, const pf_shape *s) {
    unsigned lo;
    last_list(bin, s, &lo);
    for (unsigned i = lo + 1; i < s->slots; i++) {
        unsigned v = slot_get(bin, s, i), j = i;
        for (; j > lo && slot_get(bin, s, j - 1) > v; j--)
            slot_put(bin, s, j, slot_get(bin, s, j - 1));
        slot_put(bin, s, j, v);
    }
}

/* The last slot of a full bin taken out; the new header. */
static inline uint64_t bin_drop_last(uint8_t *bin, const pf_shape *s,
                                     uint64_t hdr, uint32_t max) {
    uint64_t pocket = hdr & pocket_mask(s);
    unsigned last = s->slots - 1;
    slot_put(bin, s, last, 0);
    pocket = amq__pk_del64(pocket, last + (max >> s->r));
    return pocket | (hdr & ~pocket_mask(s));
}

static void forward(amq_prefix *f, uint64_t b, uint32_t fp) {
    amq__sbbf_put(f->spare_wr, f->spare_blocks, spare_key(b, fp));
    f->spare_items++;
}

/* A full bin keeps the smaller of fp and its largest and forwards the
 * other. Both cases as one: the largest is taken out and the smaller put
 * in (when that is the largest itself it goes back to the same slot and
 * the same pocket bit: the bin is unchanged, as the rule says), so no
 * branch on a comparison that goes either way at random. */
AMQ__PK_INLINE void add_full(amq_prefix *f, uint64_t b, uint8_t *bin,
                             uint64_t hdr, uint32_t fp, const pf_shape *s,
                             unsigned isa) {
    if (!overflowed(hdr, s)) /* an overflowed bin's last list is sorted */
        sort_last(bin, s);
    uint32_t max = bin_max(bin, hdr, s);
    uint32_t keep = fp < max ? fp : max, out = fp < max ? max : fp;
    if (overflowed(hdr, s))
        f->above -= values_above(f, max);
    bin_put(bin, s, bin_drop_last(bin, s, hdr, max), keep, isa);
    /* keep may have joined the last list, or emptied it of the largest
     * and left an earlier list last */
    sort_last(bin, s);
    forward(f, b, out);
    hdr = hdr_get(bin, s) | UINT64_C(1) << s->flag;
    hdr_put(bin, s, hdr);
    uint32_t top = bin_max(bin, hdr, s);
    f->above += values_above(f, top);
    rb_put(f, b, top >> s->r);
}

/* One insert per (code, layout), the shape a constant in each (a 32-byte
 * bin takes the AVX2 code on an AVX-512 CPU too). A bin with room takes
 * fp; a full one goes out of line (add_full), so
 * the common path saves no registers for it. The branch on the bin's
 * fill remains: a full bin forwards to the spare, a write elsewhere. */
#define PF_ADD(NAME, ATTR, ISA, SHAPE)                                         \
    __attribute__((noinline)) ATTR static void NAME##_full(                    \
        amq_prefix *f, uint64_t b, uint8_t *bin, uint64_t hdr, uint32_t fp) {  \
        add_full(f, b, bin, hdr, fp, &SHAPE, ISA);                             \
    }                                                                          \
    ATTR static void NAME(amq_prefix *f, uint64_t h) {                         \
        uint64_t b = bin_of(f, h);                                             \
        uint32_t fp = fp_of(f, h);                                             \
        uint8_t *bin = f->wr + (size_t)b * SHAPE.bytes;                        \
        uint64_t hdr = hdr_get(bin, &SHAPE);                                   \
        f->o.items++;                                                          \
        if (bin_full(hdr, &SHAPE))                                             \
            NAME##_full(f, b, bin, hdr, fp);                                   \
        else                                                                   \
            bin_put(bin, &SHAPE, hdr, fp, ISA);                                \
    }

PF_ADD(add_p8, , AMQ__PK_PORTABLE, SHAPE8)
PF_ADD(add_p16, , AMQ__PK_PORTABLE, SHAPE16)
#ifdef PF_X86
#define PF_VBMI                                                                \
    __attribute__((flatten, target("avx512f,avx512bw,avx512vbmi,avx2,bmi,"     \
                                   "bmi2,popcnt,lzcnt")))
PF_ADD(add_a8, PF_AVX2, AMQ__PK_AVX2, SHAPE8)
PF_ADD(add_a16, PF_AVX2, AMQ__PK_AVX2, SHAPE16)
PF_ADD(add_x16, PF_AVX512, AMQ__PK_AVX512, SHAPE16)
PF_ADD(add_v16, PF_VBMI, AMQ__PK_VBMI, SHAPE16)
#endif

/* The insert chosen for the layout and the CPU; it cannot fail. */
static amq_status add_hash(amq__obj *o, uint64_t h) {
    amq_prefix *f = (amq_prefix *)o;
    f->add(f, h);
    return AMQ_OK;
}

/* The kernel for f's layout and the CPU (AMQ_OPT_SCALAR: the reference). */
static void choose(amq_prefix *f, bool scalar) {
    bool w8 = f->s->r == 8;
#ifdef PF_X86
    /* a 32-byte bin is one AVX2 compare: no AVX-512 kernel for it */
    f->o.contains = amq__obj_pick(scalar, contains_ref, w8 ? k256_8 : k256_16,
                                  w8 ? NULL : k512_16);
    /* indexed by amq__pk_isa; a 32-byte bin's inserts are AVX2 at most */
    static void (*const add8[])(amq_prefix *, uint64_t) = {add_p8, add_a8,
                                                           add_a8, add_a8};
    static void (*const add16[])(amq_prefix *, uint64_t) = {add_p16, add_a16,
                                                            add_x16, add_v16};
    f->add = (w8 ? add8 : add16)[amq__pk_isa(scalar)];
#else
    f->o.contains = contains_ref;
    f->add = w8 ? add_p8 : add_p16;
#endif
}

/* Bins prefetched AHEAD keys before the kernel answers for them. */
static void contains_batch(const amq__obj *o, const uint64_t *h, size_t n,
                           uint8_t *out) {
    const amq_prefix *f = (const amq_prefix *)o;
    for (size_t i = 0; i < n && i < AHEAD; i++)
        amq__prefetch(bin_at(f, bin_of(f, h[i])));
    for (size_t i = 0; i < n; i++) {
        if (i + AHEAD < n)
            amq__prefetch(bin_at(f, bin_of(f, h[i + AHEAD])));
        out[i] = f->o.contains(&f->o, h[i]);
    }
}

/* Batch insert: bins prefetched for writing AHEAD keys early; the same
 * result as the loop (adds cannot fail). */
static amq_status add_batch(amq__obj *o, const uint64_t *h, size_t n,
                            size_t *done) {
    amq_prefix *f = (amq_prefix *)o;
    for (size_t j = 0; j < n && j < AHEAD; j++)
        amq__prefetch_w(bin_at(f, bin_of(f, h[j])));
    for (size_t i = 0; i < n; i++) {
        if (i + AHEAD < n)
            amq__prefetch_w(bin_at(f, bin_of(f, h[i + AHEAD])));
        f->add(f, h[i]);
    }
    *done = n;
    return AMQ_OK;
}

/* ---- the mathematics ---------------------------------------------------- */

static double pair_prob(const pf_shape *s, uint64_t bins) {
    return amq__mulshift_top(bins) *
           amq__mulshift_top((uint64_t)s->lists << s->r);
}

static double bins_bound(const pf_shape *s, uint64_t bins, double items) {
    return items <= 0 ? 0.0 : -expm1(items * log1p(-pair_prob(s, bins)));
}

/* For a Poisson(lambda) bin load X: the expected forwards E[(X - K)+] and
 * the expected routed share E[(X + 1 - K) / (X + 1); X > K] of queries
 * (the bin keeps the K smallest of X uniform fingerprints). */
static void overflow_model(const pf_shape *s, double lambda, double *fwd,
                           double *route) {
    amq__pois w;
    *fwd = *route = 0.0;
    if (!(lambda > 0.0))
        return;
    for (amq__pois_begin(&w, lambda); amq__pois_more(&w); amq__pois_next(&w))
        if (w.i > s->slots) {
            *fwd += w.p * (w.i - s->slots);
            *route += w.p * (w.i + 1 - s->slots) / (w.i + 1);
        }
}

typedef struct pf_size {
    uint64_t bins, spare_blocks;
    size_t bytes;
} pf_size;

/* The spare for `bins` bins holding n keys, its rate aimed at a share of
 * fpr. */
static amq_status spare_for(const pf_shape *s, uint64_t bins, double n,
                            double fpr, uint64_t *blocks) {
    double fwd, route;
    overflow_model(s, n / (double)bins, &fwd, &route);
    double cap = ceil(1.25 * fwd * (double)bins) + 16;
    double rate = SPARE_SHARE * fpr / fmax(route, 1e-12);
    rate = fmin(0.5, fmax(1e-9, rate));
    return amq__sbbf_blocks_for((uint64_t)cap, rate, blocks);
}

/* One layout's table for (capacity, fpr): bins for the load (keys per
 * slot at capacity) and for 90% of fpr, the spare for the rest. */
static amq_status size_for(const pf_shape *s, uint64_t capacity, double fpr,
                           double load, pf_size *z) {
    double n = (double)capacity;
    double pf = amq__mulshift_top((uint64_t)s->lists << s->r);
    double want = ceil(n / (s->slots * load));
    double keep = (1.0 - SPARE_SHARE) * fpr;
    double by_rate = ceil(n * pf / -log1p(-keep));
    double b = fmax(1.0, fmax(want, by_rate));
    if (b > (double)MAX_BINS)
        return AMQ_ERR_OVERFLOW;
    z->bins = (uint64_t)b;
    while (z->bins < MAX_BINS && bins_bound(s, z->bins, n) > keep)
        z->bins++;
    AMQ_RETURN_IF_ERR(spare_for(s, z->bins, n, fpr, &z->spare_blocks));
    size_t a, c;
    if (!amq__mul((size_t)z->bins, s->bytes, &a) ||
        !amq__mul((size_t)z->spare_blocks, AMQ_SBBF_BLOCK_BYTES, &c) ||
        !amq__add(a, c, &z->bytes))
        return AMQ_ERR_OVERFLOW;
    return AMQ_OK;
}

static const pf_shape *shape_for(uint64_t capacity, double fpr, double load,
                                 pf_size *z) {
    pf_size a, b;
    amq_status s8 = size_for(&SHAPE8, capacity, fpr, load, &a);
    amq_status s16 = size_for(&SHAPE16, capacity, fpr, load, &b);
    if (s8 != AMQ_OK && s16 != AMQ_OK)
        return NULL;
    bool use8 = s8 == AMQ_OK && (s16 != AMQ_OK || a.bytes <= b.bytes);
    *z = use8 ? a : b;
    return use8 ? &SHAPE8 : &SHAPE16;
}

/* The model of a filter of this shape holding n keys (the curve of a
 * describe() spec): bins part plus expected routing times the spare. */
static double model_fpr(const pf_shape *s, uint64_t bins, uint64_t spare_blocks,
                        double n) {
    double fwd, route;
    overflow_model(s, n / (double)bins, &fwd, &route);
    uint64_t forwarded = (uint64_t)llround(fwd * (double)bins);
    return fmin(1.0, bins_bound(s, bins, n) +
                         route * amq__sbbf_fpr_at(spare_blocks, forwarded));
}

/* ---- construction ------------------------------------------------------- */

/* The route bytes, then the object and its table. */
static void destroy(amq__obj *o) {
    amq_prefix *f = (amq_prefix *)o;
    amq__free(&o->mem, f->route, f->route_bytes);
    amq__obj_free(o);
}

/* Every bin's route byte from its header (after a load). */
static void route_fill(amq_prefix *f) {
    for (uint64_t b = 0; b < f->nbins; b++) {
        const uint8_t *bin = bin_at(f, b);
        uint64_t hdr = hdr_get(bin, f->s);
        rb_put(f, b,
               overflowed(hdr, f->s) ? bin_max(bin, hdr, f->s) >> f->s->r
                                     : RB_NONE);
    }
}

static amq_status pf_alloc(const pf_shape *s, uint64_t bins,
                           uint64_t spare_blocks, const amq_options *opt,
                           const uint8_t *view, amq_prefix **out) {
    amq_prefix *f;
    size_t a, c, bytes;
    void *wr = NULL;
    if (bins == 0 || spare_blocks == 0)
        return AMQ_ERR_INVALID;
    if (bins > MAX_BINS || spare_blocks > MAX_BINS ||
        !amq__mul((size_t)bins, s->bytes, &a) ||
        !amq__mul((size_t)spare_blocks, AMQ_SBBF_BLOCK_BYTES, &c) ||
        !amq__add(a, c, &bytes))
        return AMQ_ERR_OVERFLOW;
    AMQ_RETURN_IF_ERR(amq__obj_new(sizeof *f, opt, (void **)&f));
    f->route_bytes = (size_t)bins;
    f->route = amq__alloc(&f->o.mem, f->route_bytes);
    if (f->route == NULL) {
        amq__obj_free(&f->o);
        return AMQ_ERR_NOMEM;
    }
    memset(f->route, RB_NONE, f->route_bytes); /* no bin overflowed */
    f->s = s;
    f->nbins = bins;
    f->spare_blocks = spare_blocks;
    f->span = (uint64_t)s->lists << s->r;
    amq_status st = amq__obj_table(&f->o, bytes, view, &wr);
    if (st != AMQ_OK) {
        destroy(&f->o);
        return st;
    }
    f->wr = wr;
    f->rd = f->o.table;
    f->spare_rd = (const uint32_t *)(f->rd + a);
    f->spare_wr = wr != NULL ? (uint32_t *)(f->wr + a) : NULL;
    choose(f, opt != NULL && (opt->flags & AMQ_OPT_SCALAR));
    for (uint64_t b = 0; wr != NULL && b < bins; b++) /* empty pockets */
        hdr_put(f->wr + (size_t)b * s->bytes, s, (UINT64_C(1) << s->lists) - 1);
    *out = f;
    return AMQ_OK;
}

uint64_t amq_prefix_bins(const amq_prefix *f) { return f->nbins; }
unsigned amq_prefix_rbits(const amq_prefix *f) { return f->s->r; }
uint64_t amq_prefix_spare_items(const amq_prefix *f) { return f->spare_items; }

/* ---- the generic interface ---------------------------------------------- */

/* The bins and the spare (the table), and the route bytes beside them. */
static size_t size_bytes(const amq__obj *o) {
    return o->table_bytes + ((const amq_prefix *)o)->route_bytes;
}

static double fpr_bound(const amq__obj *o) {
    const amq_prefix *f = (const amq_prefix *)o;
    double p = pair_prob(f->s, f->nbins);
    double route = fmin(1.0, p * (double)f->above);
    double b = bins_bound(f->s, f->nbins, (double)f->o.items) +
               route * amq__sbbf_fpr_at(f->spare_blocks, f->spare_items);
    return fmin(1.0, b);
}

static amq_status t_create(const amq__type *self, amq__spec *spec,
                           uint64_t capacity, double fpr,
                           const amq_options *opt, amq__obj **out,
                           amq_diag *diag) {
    uint64_t r = 0, bins = 0, spare = 0;
    double load = LOAD_DEFAULT;
    bool has_r, has_b, has_s, has_l;
    pf_size z;
    amq_prefix *f;
    (void)self;
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "r", 8, 16, &r, &has_r, diag));
    AMQ_RETURN_IF_ERR(
        amq__spec_u64(spec, "bins", 1, MAX_BINS, &bins, &has_b, diag));
    AMQ_RETURN_IF_ERR(
        amq__spec_u64(spec, "spare", 1, MAX_BINS, &spare, &has_s, diag));
    AMQ_RETURN_IF_ERR(
        amq__spec_f64(spec, "load", LOAD_MIN, 1.0, &load, &has_l, diag));
    const pf_shape *s = has_r ? shape_of((unsigned)r) : &SHAPE8;
    if (s == NULL)
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "prefix: r=%llu; remainders are 8 or 16 bits",
                         (unsigned long long)r);
    if (has_b != has_s)
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "prefix: bins= and spare= go together");
    if (has_b && has_l)
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "prefix: load= sizes the bins; not with bins=");
    if (!has_b) {
        if (capacity == 0)
            return amq__diag(diag, AMQ_ERR_SPEC, 0,
                             "prefix needs a capacity "
                             "and fpr, or bins=N,spare=M");
        amq_status st = has_r
                            ? size_for(s, capacity, fpr, load, &z)
                            : ((s = shape_for(capacity, fpr, load, &z)) != NULL
                                   ? AMQ_OK
                                   : AMQ_ERR_OVERFLOW);
        if (st != AMQ_OK)
            return amq__diag(diag, st, 0, "prefix: %llu keys at fpr %g: %s",
                             (unsigned long long)capacity, fpr,
                             amq_strerror(st));
        bins = z.bins;
        spare = z.spare_blocks;
    }
    AMQ_RETURN_IF_ERR(pf_alloc(s, bins, spare, opt, NULL, &f));
    *out = &f->o;
    return AMQ_OK;
}

static size_t t_describe(const amq__obj *o, char *buf, size_t cap) {
    const amq_prefix *f = (const amq_prefix *)o;
    return amq__describe(buf, cap, "r=%u,bins=%llu,spare=%llu", f->s->r,
                         (unsigned long long)f->nbins,
                         (unsigned long long)f->spare_blocks);
}

/* bits per key <-> fpr. The family: R real, bins at the default load L
 * (keys per slot), the pocket header's 2.24 bits and the route byte's
 * 0.32 bits per slot, ~0.6 bits of spare per key: bits = (R + 2.56) / L
 * + 0.6, fpr = 1.25 L 2^-R (the bins' share and the spare's). With bins= and spare= (a describe()
 * string): that very table at the load the bits give, from the model.
 * With only r=: the bins' rate at the load the bits give (spare bits
 * counted as in the family). */
#define CURVE_HDR 2.56
#define CURVE_SPARE 0.6
#define CURVE_FACTOR 1.25

static double shape_fpr(const pf_shape *s, uint64_t bins, uint64_t spare,
                        double x) {
    if (bins != 0) {
        double bytes = (double)bins * (s->bytes + 1) /* and its route byte */
                       + (double)spare * AMQ_SBBF_BLOCK_BYTES;
        return model_fpr(s, bins, spare, 8.0 * bytes / x);
    }
    double per_slot = 8.0 * (s->bytes + 1.0) / s->slots + CURVE_SPARE;
    double load = fmin(1.0, per_slot / x);
    return fmin(1.0, CURVE_FACTOR * load * s->slots /
                         ((double)s->lists * ldexp(1.0, (int)s->r)));
}

/* Inverse of a decreasing curve by bisection on [1, 1e6] bits. */
static double shape_bits(const pf_shape *s, uint64_t bins, uint64_t spare,
                         double fpr) {
    double lo = 1.0, hi = 1e6;
    for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
        double mid = 0.5 * (lo + hi);
        if (shape_fpr(s, bins, spare, mid) <= fpr)
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

static amq_status t_curve(const amq__type *self, amq__spec *spec, double x,
                          bool inverse, double *out, amq_diag *diag) {
    uint64_t r = 0, bins = 0, spare = 0;
    bool has_r;
    (void)self;
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "r", 8, 16, &r, &has_r, diag));
    AMQ_RETURN_IF_ERR(
        amq__spec_u64(spec, "bins", 1, MAX_BINS, &bins, NULL, diag));
    AMQ_RETURN_IF_ERR(
        amq__spec_u64(spec, "spare", 1, MAX_BINS, &spare, NULL, diag));
    const pf_shape *s = has_r ? shape_of((unsigned)r) : NULL;
    if (has_r && s == NULL)
        return amq__diag(diag, AMQ_ERR_SPEC, 0, "prefix: r is 8 or 16");
    if (s == NULL)
        *out = inverse ? (log2(CURVE_FACTOR * LOAD_DEFAULT / x) + CURVE_HDR) /
                                 LOAD_DEFAULT +
                             CURVE_SPARE
                       : fmin(1.0, CURVE_FACTOR * LOAD_DEFAULT *
                                       exp2(CURVE_HDR -
                                            LOAD_DEFAULT * (x - CURVE_SPARE)));
    else
        *out = inverse ? shape_bits(s, bins, spare ? spare : 1, x)
                       : shape_fpr(s, bins, spare ? spare : 1, x);
    return AMQ_OK;
}

/* params: bins u64 | items u64 | spare blocks u64 | spare items u64 |
 * rbits u32 | reserved u32 (0) */
static void t_params_write(const amq__obj *o, amq__wr *w) {
    const amq_prefix *f = (const amq_prefix *)o;
    amq__wr_u64(w, f->nbins);
    amq__wr_u64(w, o->items);
    amq__wr_u64(w, f->spare_blocks);
    amq__wr_u64(w, f->spare_items);
    amq__wr_u32(w, f->s->r);
    amq__wr_u32(w, 0);
}

/* One bin against the invariants; adds its fill and its share of
 * `above`. */
static bool bin_ok(const amq_prefix *f, const uint8_t *bin, uint64_t *fills,
                   uint64_t *above) {
    const pf_shape *s = f->s;
    uint64_t hdr = hdr_get(bin, s), pocket = hdr & pocket_mask(s);
    uint64_t flag = UINT64_C(1) << s->flag;
    if ((hdr & ~pocket_mask(s) & ~flag) != 0 ||
        amq__popcount64(pocket) != s->lists)
        return false;
    unsigned fill = amq__pk_fill64(pocket, s->lists, false);
    if (fill > s->slots || (overflowed(hdr, s) && fill != s->slots))
        return false;
    for (unsigned i = fill; i < s->slots; i++)
        if (slot_get(bin, s, i) != 0)
            return false;
    if (overflowed(hdr, s)) { /* its last slot must be its largest */
        unsigned lo;
        last_list(bin, s, &lo);
        for (unsigned i = lo; i + 1 < s->slots; i++)
            if (slot_get(bin, s, i) > slot_get(bin, s, i + 1))
                return false;
    }
    *fills += fill;
    if (overflowed(hdr, s))
        *above += values_above(f, bin_max(bin, hdr, s));
    return true;
}

typedef struct pf_params {
    uint64_t bins, items, spare_blocks, spare_items;
    uint32_t r;
    size_t at_bins, at_items, at_r;
} pf_params;

static amq_status read_params(amq__rd *r, pf_params *p) {
    AMQ_RETURN_IF_ERR(amq__rd_expect(r, 40));
    p->at_bins = amq__rd_u64(r, &p->bins);
    p->at_items = amq__rd_u64(r, &p->items);
    amq__rd_u64(r, &p->spare_blocks);
    amq__rd_u64(r, &p->spare_items);
    p->at_r = amq__rd_u32(r, &p->r);
    return amq__rd_zero32(r);
}

/* Every bin of f (a shape over the payload) against the invariants, the
 * counts against the items; f->above from the overflowed bins. */
static amq_status check_bins(const amq__rd *r, amq_prefix *f,
                             const pf_params *p) {
    uint64_t fills = 0;
    f->above = 0;
    for (uint64_t b = 0; b < f->nbins; b++)
        if (!bin_ok(f, bin_at(f, b), &fills, &f->above))
            return amq__rd_bad(r, r->payload_at + (size_t)b * f->s->bytes,
                               "bin %llu breaks the prefix invariants",
                               (unsigned long long)b);
    if (fills > p->items || p->items - fills != p->spare_items)
        return amq__rd_bad(r, p->at_items,
                           "%llu items, the bins hold "
                           "%llu and %llu went to the spare",
                           (unsigned long long)p->items,
                           (unsigned long long)fills,
                           (unsigned long long)p->spare_items);
    return AMQ_OK;
}

static amq_status t_load(const amq__type *self, amq__rd *r,
                         const uint8_t *payload, size_t len, bool view,
                         const amq_options *opt, amq__obj **out) {
    pf_params p;
    amq_prefix *f;
    (void)self;
    AMQ_RETURN_IF_ERR(read_params(r, &p));
    const pf_shape *s = shape_of(p.r);
    if (s == NULL)
        return amq__rd_bad(r, p.at_r, "remainder bits %u (8 or 16)", p.r);
    if (p.bins == 0 || p.bins > MAX_BINS || p.spare_blocks == 0 ||
        p.spare_blocks > MAX_BINS ||
        len != p.bins * s->bytes + p.spare_blocks * AMQ_SBBF_BLOCK_BYTES)
        return amq__rd_bad(r, p.at_bins,
                           "%llu bins and %llu spare blocks "
                           "in %zu payload bytes",
                           (unsigned long long)p.bins,
                           (unsigned long long)p.spare_blocks, len);
    /* the checks read the payload through a shape-only object */
    amq_prefix chk;
    memset(&chk, 0, sizeof chk);
    chk.s = s;
    chk.nbins = p.bins;
    chk.span = (uint64_t)s->lists << s->r;
    chk.rd = payload;
    AMQ_RETURN_IF_ERR(check_bins(r, &chk, &p));
    AMQ_RETURN_IF_ERR(
        pf_alloc(s, p.bins, p.spare_blocks, opt, view ? payload : NULL, &f));
    if (!view)
        memcpy(f->wr, payload, len);
    f->o.items = p.items;
    f->spare_items = p.spare_items;
    f->above = chk.above;
    route_fill(f);
    *out = &f->o;
    return AMQ_OK;
}

/* Shapes beside the defaults that reach the other kernels (test_kernels):
 * the 16-bit layout; a few bins that overflow into the spare. */
static const char *const kernel_shapes[] = {
    "prefix:r=16", "prefix:bins=8,spare=1", "prefix:r=16,bins=8,spare=1", NULL};

const amq__type amq__type_prefix = {
    .info = {.name = "prefix",
             .type_id = AMQ__ID_prefix,
             .caps = 0,
             .summary = "prefix filter: one pocket-dictionary bin per key "
                        "holding its smallest fingerprints, the rest in a "
                        "small spare (Even, Even, Morrison 2022)",
             .params = "r=8|16 (remainder bits; default: the smaller table "
                       "meeting fpr), load=X (keys per bin slot at "
                       "capacity, 0.5-1; default 0.95), bins=N,spare=M "
                       "(32- or 64-byte bins and 32-byte spare blocks, "
                       "instead of capacity)",
             .default_hash = AMQ_HASH_XXH3},
    .reads = 1,
    .reads_text = "1",
    .kernel_shapes = kernel_shapes,
    .create = t_create,
    .load = t_load,
    .destroy = destroy,
    .add = add_hash,
    .add_batch = add_batch,
    .contains = contains_ref,
    .contains_batch = contains_batch,
    .fpr_bound = fpr_bound,
    .size_bytes = size_bytes,
    .describe = t_describe,
    .curve = t_curve,
    .params_write = t_params_write,
};
