/*
 * xor.c — xor filters (Graf & Lemire, "Xor Filters: Faster and Smaller Than
 * Bloom and Cuckoo Filters", JEA 2020) and binary fuse filters (Graf &
 * Lemire, "Binary Fuse Filters: Fast and Smaller Than Xor Filters", JEA
 * 2022), one implementation: a xor filter is the one-segment case of the
 * segmented layout, and both are built by the same hypergraph peeling.
 *
 * Layout: `slots` w-bit fingerprints in segments of L slots. A key's 64-bit
 * hash h is mixed with the build's seed, x = mix64(h + seed); x picks a
 * start segment s < S and one slot in each of segments s, s+1, .., s+ways-1:
 *
 *   segment:  0        1        2        3        4    ...   S+ways-2
 *           +--------+--------+--------+--------+--------+ +--------+
 *   fuse    |        |   p0   |  p1    |   p2   |        | |        |
 *           +--------+--------+--------+--------+--------+ +--------+
 *                     ^ s = 1           (ways = 3: three consecutive
 *                                        segments; S start segments)
 *   xor     |   p0   |   p1   |   p2   |   S = 1, L = (1.23 n + 32) / 3
 *
 * Way i's offset in its segment is (x M_i) >> (64 - lg) (mapping 0). A
 * 3-way fuse filter with 2^lg slots a segment is built with mapping 1
 * (amq/query.h): p0 = reduce(x, S 2^lg) gives the start segment and way
 * 0's offset at once, ways 1 and 2 take slices of x below it, xored into
 * the same position of the next segments: one multiply a query instead
 * of four. The frame carries the mapping; loaded filters keep theirs.
 * Query: fp(x) == T[p0] ^ T[p1] ^ ... ^ T[p_{ways-1}], where fp(x) is w bits
 * of x taken independently of the bits that choose the slots.
 *
 * Build (peeling): every slot keeps the number of keys hitting it and the
 * xor of their mixed hashes. A slot hit by exactly one key names that key;
 * remove the key from its other slots (which may expose new such slots)
 * and record (key, slot). If every key is removed, assign in reverse
 * order: T[slot] = fp(key) ^ (the key's other slots), which later
 * assignments never touch again. Peeling fails when a 2-core remains:
 * rare at these sizes (Molloy 2005; Walzer's fuse analysis), certain for a
 * duplicated key (two equal edges), so the first failure removes duplicates
 * by sorting a copy of the hashes and every failure moves to the next seed
 * of a fixed sequence (builds are deterministic); for small n, where the
 * failure rate is not negligible, every 8th failure also grows the table by
 * ~1/8. After AMQ_STATIC_MAX_ATTEMPTS failures: AMQ_ERR_FULL.
 *
 * Speed: past the caches a build is bound by memory, not arithmetic (a xor
 * key's slots are anywhere in ~20 bytes of peeling state per key), so each
 * pass knows its accesses XF_AHEAD steps early and prefetches them: the
 * counting pass key by key; the peeling by taking the count-1 slots first
 * in, first out (the textbook stack shows its next entry only once the
 * current removal is done, so every removal waits for memory; a queue
 * shows the next XF_AHEAD); the assignment in reverse peeling order. A
 * fuse build first groups the keys by start segment, so that counting
 * works in a window of a few segments. The peeling order decides which of
 * the valid tables a build produces: changing it changes the bytes built
 * from the same keys (old frames still load; tests/golden/legacy/).
 *
 * Invariants: ways in {3, 4}; width in {8, 16, 32}; slots = (S + ways - 1)
 * L (xor: S = 1); items <= slots; items == 0 iff slots == 0 (an empty
 * filter has no table and answers false, which a zero table would not: it
 * would accept every key whose fingerprint is 0).
 *
 * Failure modes: only at build (NOMEM, OVERFLOW past 2^32 slots, FULL as
 * above); load refuses parameters that do not match the payload length.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amq/query.h"
#include "amq/static.h"
#include "core/bits.h"
#include "core/mem.h"
#include "core/par.h"
#include "core/sort.h"
#include "type/type.h"

#define XF_BATCH 16
#define XF_GROW_EVERY 8

/* Multipliers deriving each way's slot offset and the fingerprint from the
 * mixed hash (odd, from splitmix64). Part of the file format: never edit. */
static const uint64_t way_mul[4] = {AMQ__FUSE_MUL0, AMQ__FUSE_MUL1,
                                    AMQ__FUSE_MUL2, AMQ__FUSE_MUL3};
#define FP_MUL AMQ__FUSE_MULFP

typedef enum xf_family { XF_XOR, XF_FUSE } xf_family;

typedef struct xf_shape {
    uint32_t ways, width;
    uint32_t seg_len, seg_count; /* both 0 for an empty filter */
    uint32_t lg;      /* log2(seg_len) if a power of two, else XF_ANY_LEN */
    uint32_t mapping; /* 1: slices (amq/query.h; 3-way fuse, lg known),
                         0: offsets by multiplies */
} xf_shape;

#define XF_ANY_LEN 255u

/* The slot mapping as the hot loops use it (xf_map_of): copied out of the
 * shape, so that stores into tables cannot alias it. */
typedef struct xf_map {
    uint64_t seg_count, seg_len;
    unsigned shift; /* 64 - lg when seg_len = 2^lg */
} xf_map;

struct amq_xor {
    amq__obj o; /* o.items: distinct keys; o.table: the slots (none
                          for an empty filter); o.contains: xf_choose */
    const uint8_t *fp;
    xf_shape s;
    xf_family fam;
    size_t slots;
    uint64_t seed;
    xf_map map;
};

/* ---- hashing a key to its slots and fingerprint ------------------------- */

static inline uint64_t xf_mix(uint64_t h, uint64_t seed) {
    return amq__mix64(h + seed);
}

static inline uint32_t xf_fingerprint(uint64_t x, unsigned width) {
    return (uint32_t)((x * FP_MUL) >> (64 - width));
}

#define XF_INLINE static inline __attribute__((always_inline))

/* How the hot loops map a key (a constant in each, from dispatchers):
 * offsets by multiplies in segments of any length or of 2^lg slots, or
 * mapping 1's slices. */
enum { XF_ANY, XF_POW2, XF_SLICE };

static inline unsigned xf_form(const xf_shape *s) {
    return s->mapping ? XF_SLICE : s->lg != XF_ANY_LEN ? XF_POW2 : XF_ANY;
}

/* The hot loops get `ways` and `form` (XF_POW2: seg_len is 2^lg, lg >= 1)
 * as constants from dispatchers, so each loop is compiled once per
 * combination. reduce(y, L) = floor(y L / 2^64) is the shift
 * y >> (64 - lg) when L = 2^lg (always so for fuse, except a grown
 * one-segment table); a segment of one slot takes the general form, whose
 * reduce gives 0 as well. */
static inline xf_map xf_map_of(const xf_shape *s) {
    xf_map m = {s->seg_count, s->seg_len, 64 - (s->lg & 63)};
    return m;
}

/* The first slot of x's start segment. */
XF_INLINE uint64_t xf_first(xf_map m, bool pow2, uint64_t x) {
    uint64_t start = amq__reduce64(x, m.seg_count);
    return pow2 ? start << (64 - m.shift) : start * m.seg_len;
}

/* Way i's slot: segment start + i, offset from x * way_mul[i]. One way at
 * a time, so a query's ways stay scalar code (as a loop over an array the
 * vectoriser takes them and emulates the 64-bit multiplies). */
XF_INLINE uint32_t xf_way(xf_map m, bool pow2, uint64_t first, uint64_t x,
                          unsigned i) {
    uint64_t y = x * way_mul[i];
    uint64_t off = pow2 ? y >> m.shift : amq__reduce64(y, m.seg_len);
    return (uint32_t)(first + i * m.seg_len + off);
}

XF_INLINE void xf_map_slots(xf_map m, unsigned ways, unsigned form, uint64_t x,
                            uint32_t p[4]) {
    if (form == XF_SLICE) { /* 3-way */
        amq__fuse_slots3(x, m.seg_count, m.shift, m.seg_len, p);
        return;
    }
    uint64_t first = xf_first(m, form == XF_POW2, x);
    for (unsigned i = 0; i < ways; i++)
        p[i] = xf_way(m, form == XF_POW2, first, x, i);
}

static inline void xf_slots(const xf_shape *s, uint64_t x, uint32_t p[4]) {
    xf_map_slots(xf_map_of(s), s->ways, xf_form(s), x, p);
}

/* Fills s->lg from s->seg_len; call after every change of seg_len. */
static void xf_set_lg(xf_shape *s) {
    s->lg = XF_ANY_LEN;
    for (uint32_t k = 1; k < 32; k++)
        if (s->seg_len == 1u << k)
            s->lg = k;
}

/* One implementation for every width: the width is a run-time parameter
 * that the callers below pass as a constant, so each gets specialised.
 * Reading a slot is amq/query.h's (the format's one reader); writing: */
static inline void xf_put(uint8_t *t, unsigned width, size_t i, uint32_t v) {
    switch (width) {
    case 8: t[i] = (uint8_t)v; break;
    case 16: amq__put_u16(t + 2 * i, (uint16_t)v); break;
    default: amq__put_u32(t + 4 * i, v); break;
    }
}

/* ---- one key: the reference and the kernels ------------------------------ */

/* The reference: the documented mapping, read off the shape. */
static bool xf_contains_ref(const amq__obj *o, uint64_t h) {
    const amq_xor *f = (const amq_xor *)o;
    uint32_t p[4];
    uint64_t x = xf_mix(h, f->seed);
    xf_slots(&f->s, x, p);
    uint32_t v = xf_fingerprint(x, f->s.width);
    for (unsigned i = 0; i < f->s.ways; i++)
        v ^= amq__fuse_get(f->fp, f->s.width, p[i]);
    return v == 0;
}

static bool xf_contains_none(const amq__obj *o, uint64_t h) {
    (void)o;
    (void)h;
    return false;
}

/* A kernel: width, ways and form are constants. `one`: a single segment
 * (every xor filter, a small fuse filter), whose start is always 0; else
 * segments of 2^lg slots. Straight-line code: the mix, the slots, the
 * loads and one compare, nothing else to wait for. */
XF_INLINE bool xf_probe(const amq__obj *o, uint64_t h, unsigned width,
                        unsigned ways, bool one) {
    const amq_xor *f = (const amq_xor *)o;
    const xf_map m = f->map;
    const uint8_t *t = f->fp;
    if (!one) /* the query amq/query.h compiles into callers */
        return amq__fuse_probe(t, f->seed, m.seg_count, m.shift, m.seg_len, h,
                               width, ways);
    uint64_t x = xf_mix(h, f->seed);
    uint32_t v = xf_fingerprint(x, width);
    v ^= amq__fuse_get(t, width, xf_way(m, false, 0, x, 0));
    v ^= amq__fuse_get(t, width, xf_way(m, false, 0, x, 1));
    v ^= amq__fuse_get(t, width, xf_way(m, false, 0, x, 2));
    if (ways == 4)
        v ^= amq__fuse_get(t, width, xf_way(m, false, 0, x, 3));
    return v == 0;
}

/* Mapping 1 (3-way, segments of 2^lg slots, any number of them). */
XF_INLINE bool xf_probe_sliced(const amq__obj *o, uint64_t h, unsigned width) {
    const amq_xor *f = (const amq_xor *)o;
    const xf_map m = f->map;
    return amq__fuse_probe3s(f->fp, f->seed, m.seg_count, m.shift, m.seg_len, h,
                             width);
}

/* The kernels, per form, width and ways; each twice: plain x86-64 and,
 * for CPUs with BMI2 (chosen at run time), compiled for it, which turns
 * the variable shifts of the slot mapping into SHLX/SHRX (no shift count
 * moved through CL first). */
#if defined(__x86_64__)
#define XF_BMI2 __attribute__((target("bmi,bmi2")))
#else
#define XF_BMI2
#endif
#define XF_KERNELS(P, ATTR)                                                    \
    ATTR static bool P##one8_3(const amq__obj *o, uint64_t h) {                \
        return xf_probe(o, h, 8, 3, true);                                     \
    }                                                                          \
    ATTR static bool P##one8_4(const amq__obj *o, uint64_t h) {                \
        return xf_probe(o, h, 8, 4, true);                                     \
    }                                                                          \
    ATTR static bool P##one16_3(const amq__obj *o, uint64_t h) {               \
        return xf_probe(o, h, 16, 3, true);                                    \
    }                                                                          \
    ATTR static bool P##one16_4(const amq__obj *o, uint64_t h) {               \
        return xf_probe(o, h, 16, 4, true);                                    \
    }                                                                          \
    ATTR static bool P##one32_3(const amq__obj *o, uint64_t h) {               \
        return xf_probe(o, h, 32, 3, true);                                    \
    }                                                                          \
    ATTR static bool P##one32_4(const amq__obj *o, uint64_t h) {               \
        return xf_probe(o, h, 32, 4, true);                                    \
    }                                                                          \
    ATTR static bool P##seg8_3(const amq__obj *o, uint64_t h) {                \
        return xf_probe(o, h, 8, 3, false);                                    \
    }                                                                          \
    ATTR static bool P##seg8_4(const amq__obj *o, uint64_t h) {                \
        return xf_probe(o, h, 8, 4, false);                                    \
    }                                                                          \
    ATTR static bool P##seg16_3(const amq__obj *o, uint64_t h) {               \
        return xf_probe(o, h, 16, 3, false);                                   \
    }                                                                          \
    ATTR static bool P##seg16_4(const amq__obj *o, uint64_t h) {               \
        return xf_probe(o, h, 16, 4, false);                                   \
    }                                                                          \
    ATTR static bool P##seg32_3(const amq__obj *o, uint64_t h) {               \
        return xf_probe(o, h, 32, 3, false);                                   \
    }                                                                          \
    ATTR static bool P##seg32_4(const amq__obj *o, uint64_t h) {               \
        return xf_probe(o, h, 32, 4, false);                                   \
    }                                                                          \
    ATTR static bool P##sl8(const amq__obj *o, uint64_t h) {                   \
        return xf_probe_sliced(o, h, 8);                                       \
    }                                                                          \
    ATTR static bool P##sl16(const amq__obj *o, uint64_t h) {                  \
        return xf_probe_sliced(o, h, 16);                                      \
    }                                                                          \
    ATTR static bool P##sl32(const amq__obj *o, uint64_t h) {                  \
        return xf_probe_sliced(o, h, 32);                                      \
    }

XF_KERNELS(xf_, )
XF_KERNELS(xfb_, XF_BMI2)

/* [BMI2][segmented][width 8, 16, 32][ways 3, 4] */
#define XF_TABLE(P)                                                            \
    {                                                                          \
        {{P##one8_3, P##one8_4},                                               \
         {P##one16_3, P##one16_4},                                             \
         {P##one32_3, P##one32_4}},                                            \
        {                                                                      \
            {P##seg8_3, P##seg8_4}, {P##seg16_3, P##seg16_4}, {                \
                P##seg32_3, P##seg32_4                                         \
            }                                                                  \
        }                                                                      \
    }
static const amq__contains_fn xf_kernels[2][2][3][2] = {XF_TABLE(xf_),
                                                        XF_TABLE(xfb_)};
/* [BMI2][width 8, 16, 32]: mapping 1 */
static const amq__contains_fn xf_sliced[2][3] = {{xf_sl8, xf_sl16, xf_sl32},
                                                 {xfb_sl8, xfb_sl16, xfb_sl32}};

/* The query for f's shape: a kernel where one fits, else the reference
 * (also under AMQ_OPT_SCALAR, so tests can hold one against the other). */
static void xf_choose(amq_xor *f, bool scalar) {
    unsigned w = f->s.width == 8 ? 0 : f->s.width == 16 ? 1 : 2;
    unsigned bmi2 = amq__cpu_has_avx2() != 0; /* AVX2 implies BMI2 here */
    f->map = xf_map_of(&f->s);
    if (f->slots == 0)
        f->o.contains = xf_contains_none;
    else if (scalar)
        f->o.contains = xf_contains_ref;
    else if (f->s.mapping)
        f->o.contains = xf_sliced[bmi2][w];
    else if (f->s.seg_count == 1)
        f->o.contains = xf_kernels[bmi2][0][w][f->s.ways == 4];
    else if (f->s.lg != XF_ANY_LEN)
        f->o.contains = xf_kernels[bmi2][1][w][f->s.ways == 4];
    else
        f->o.contains = xf_contains_ref;
}

/* The type's query, for a caller holding the descriptor and the object
 * (the static maplet's member): the kernel xf_choose picked. */
static bool xf_contains(const amq__obj *o, uint64_t h) {
    return o->contains(o, h);
}

amq_status amq_fuse8_query_of(const amq_xor *f, amq_fuse8_query *q) {
    if (f == NULL || q == NULL)
        return AMQ_ERR_INVALID;
    if (f->fam != XF_FUSE || f->s.width != 8 || f->s.ways != 3 ||
        f->slots == 0 || !f->s.mapping)
        return AMQ_ERR_UNSUPPORTED;
    amq_fuse8_query r = {f->fp,          f->seed,      f->map.seg_count,
                         f->map.seg_len, f->map.shift, 0};
    *q = r;
    return AMQ_OK;
}

/* Batch: compute and prefetch every slot of a group of keys, then read
 * them; the group's 48-64 cache misses overlap. */
XF_INLINE void xf_batch_k(const amq_xor *f, const uint64_t *h, size_t n,
                          uint8_t *out, unsigned width, unsigned ways,
                          unsigned form) {
    const xf_map m = xf_map_of(&f->s);
    const uint8_t *t = f->fp;
    const uint64_t seed = f->seed;
    size_t bytes = width / 8;
    for (size_t i = 0; i < n; i += XF_BATCH) {
        size_t len = n - i < XF_BATCH ? n - i : XF_BATCH;
        uint64_t x[XF_BATCH];
        uint32_t p[XF_BATCH][4];
        for (size_t j = 0; j < len; j++) {
            x[j] = xf_mix(h[i + j], seed);
            xf_map_slots(m, ways, form, x[j], p[j]);
            for (unsigned k = 0; k < ways; k++)
                amq__prefetch(t + (size_t)p[j][k] * bytes);
        }
        for (size_t j = 0; j < len; j++) {
            uint32_t v = xf_fingerprint(x[j], width);
            for (unsigned k = 0; k < ways; k++)
                v ^= amq__fuse_get(t, width, p[j][k]);
            out[i + j] = v == 0;
        }
    }
}

XF_INLINE void xf_batch_w(const amq_xor *f, const uint64_t *h, size_t n,
                          uint8_t *out, unsigned width) {
    unsigned form = xf_form(&f->s);
    if (form == XF_SLICE)
        xf_batch_k(f, h, n, out, width, 3, XF_SLICE);
    else if (f->s.ways == 3 && form == XF_POW2)
        xf_batch_k(f, h, n, out, width, 3, XF_POW2);
    else if (f->s.ways == 3)
        xf_batch_k(f, h, n, out, width, 3, XF_ANY);
    else if (form == XF_POW2)
        xf_batch_k(f, h, n, out, width, 4, XF_POW2);
    else
        xf_batch_k(f, h, n, out, width, 4, XF_ANY);
}

static void xf_contains_batch(const amq__obj *o, const uint64_t *h, size_t n,
                              uint8_t *out) {
    const amq_xor *f = (const amq_xor *)o;
    if (f->slots == 0) {
        memset(out, 0, n);
        return;
    }
    switch (f->s.width) {
    case 8: xf_batch_w(f, h, n, out, 8); break;
    case 16: xf_batch_w(f, h, n, out, 16); break;
    default: xf_batch_w(f, h, n, out, 32); break;
    }
}

/* ---- shapes ------------------------------------------------------------- */

/* Slots per key the layout aims for, and its asymptotic value (the FPR
 * curve's constant). Fuse constants: Graf & Lemire 2022, sec. 4. */
static double xf_factor(xf_family fam, unsigned ways, double n) {
    if (fam == XF_XOR)
        return 1.23;
    if (n < 2)
        n = 2;
    if (ways == 3)
        return fmax(1.125, 0.875 + 0.25 * log(1e6) / log(n));
    return fmax(1.075, 0.77 + 0.305 * log(6e5) / log(n));
}

static double xf_asymptotic(xf_family fam, unsigned ways) {
    return fam == XF_XOR ? 1.23 : ways == 3 ? 1.125 : 1.075;
}

static uint32_t xf_seg_len(unsigned ways, double n) {
    double e = ways == 3 ? log(n) / log(3.33) + 2.25 : log(n) / log(2.91) - 0.5;
    if (n < 2 || e < 0)
        e = 0;
    if (e > 18)
        e = 18;
    return 1u << (unsigned)floor(e);
}

static amq_status xf_shape_for(xf_family fam, unsigned ways, unsigned width,
                               size_t n, xf_shape *s) {
    s->ways = ways;
    s->width = width;
    s->seg_len = s->seg_count = 0;
    s->lg = XF_ANY_LEN;
    s->mapping = 0;
    if (n == 0)
        return AMQ_OK;
    double dn = (double)n, want = dn * xf_factor(fam, ways, dn);
    if (fam == XF_XOR) {
        want += 32;
        s->seg_count = 1;
        if (want / 3 > 4e9)
            return AMQ_ERR_OVERFLOW;
        s->seg_len = (uint32_t)ceil(want / 3);
        xf_set_lg(s);
        return AMQ_OK;
    }
    s->seg_len = xf_seg_len(ways, dn);
    double segs = ceil(want / s->seg_len) - (ways - 1);
    if (segs < 1)
        segs = 1;
    if ((segs + ways) * s->seg_len > 4e9)
        return AMQ_ERR_OVERFLOW;
    s->seg_count = (uint32_t)segs;
    xf_set_lg(s);
    s->mapping = ways == 3 && s->lg != XF_ANY_LEN;
    return AMQ_OK;
}

static size_t xf_slot_count(const xf_shape *s) {
    return (size_t)(s->seg_count + s->ways - 1) * s->seg_len *
           (s->seg_count != 0);
}

/* A larger table for the next attempts (small n fails more often). */
static void xf_grow(xf_shape *s) {
    if (s->seg_count == 1)
        s->seg_len += s->seg_len / 8 + 1; /* xor, or a one-segment fuse */
    else
        s->seg_count += s->seg_count / 8 + 1;
    xf_set_lg(s);
    if (s->lg == XF_ANY_LEN) /* a one-segment fuse filter grown */
        s->mapping = 0;
}

/* Seed of attempt i: a fixed sequence, so builds are deterministic. */
static uint64_t xf_seed(unsigned attempt) {
    return amq__mix64(0x5851f42d4c957f2dULL + attempt * 0x9e3779b97f4a7c15ULL);
}

/* ---- peeling (shared by xor and fuse) ------------------------------------ */

/* A slot's peeling state: count and xor in one 16-byte record, so that a
 * slot costs one cache miss, not two (the build is bound by misses: a xor
 * key's three slots are anywhere in the table, and a fuse key's span a
 * window of segments larger than the caches once n is large). */
typedef struct xf_slot {
    uint64_t x; /* xor of the mixed hashes of the keys hitting it   */
    /* the number of keys hitting it (low 32 bits) and the peeling round
     * after the last removal from it (high 32; 0: none), one word so that
     * a peeling member reads both at once (xf_peel_member) */
    uint64_t state;
} xf_slot;

#define XF_COUNT(state) ((uint32_t)(state))
#define XF_STAMP(state) ((uint32_t)((state) >> 32))

#define XF_GROUP_BITS 10 /* xf_group */
#define XF_GROUPS (1u << XF_GROUP_BITS)

/* A removal one peeling member hands to the member owning the slot. */
typedef struct xf_defer {
    uint64_t x;
    uint32_t slot, pad;
} xf_defer;

/* Entries from one member to another per exchange: 16,384 on two
 * members, fewer on more (the buffers take 16 T^2 XF_DEFER(T) bytes). */
#define XF_DEFER(members) ((size_t)32768 / (members))

typedef struct xf_work {
    amq__block table; /* xf_slot[slots], zeroed; huge pages when large */
    xf_slot *slot;
    uint32_t *queue; /* [slots + members]: each member's, xf_peel_member */
    uint64_t *key;   /* [keys]: fuse: the grouped keys; then the peeled  */
    size_t (*group)[XF_GROUPS]; /* fuse: [workers] grouping positions */
    unsigned workers;           /* group's length (0: not grouped)     */
    size_t slots, n, keys;
    /* The peel's team (xf_team_layout): member m owns slots [lo[m],
     * lo[m + 1]); its queue is queue + qoff[m] (its slots + 1 entries),
     * its keys key + koff[m] (min(n, its slots)); done[m] it peeled. */
    unsigned members, planned;
    size_t lo[AMQ__PAR_MAX + 1], qoff[AMQ__PAR_MAX], koff[AMQ__PAR_MAX];
    size_t done[AMQ__PAR_MAX];
    uint32_t *ends; /* members > 1: [planned][rcap], done at each round's end */
    xf_defer *defer; /* members > 1: [planned][planned][XF_DEFER]         */
    size_t rcap, rounds;
    bool dirty; /* slot[] holds an earlier attempt's counts      */
} xf_work;

/* The rounds a team records (more make it peel again on one thread):
 * a fuse table peels in about one round per 10^4 slots, a xor table in
 * tens. */
static size_t xf_round_cap(size_t slots) { return slots / 1024 + 4096; }

/* Split the slots among `members` (member m from ceil(m slots / members))
 * and place each member's queue and keys. */
static void xf_team_layout(xf_work *w, unsigned members) {
    size_t keys = 0;
    w->members = members;
    for (unsigned m = 0; m <= members; m++)
        w->lo[m] = (w->slots * m + members - 1) / members;
    for (unsigned m = 0; m < members; m++) {
        size_t own = w->lo[m + 1] - w->lo[m];
        w->qoff[m] = w->lo[m] + m;
        w->koff[m] = keys;
        keys += own < w->n ? own : w->n;
    }
    w->keys = keys;
}

/* The members a peel of n keys into `slots` plans for. */
static unsigned xf_members(size_t slots, size_t n) {
    unsigned m = amq__par_workers(n);
    return slots < (size_t)m * 64 ? 1 : m;
}

static void xf_work_free(const amq__mem *m, xf_work *w) {
    if (w->table.raw != NULL)
        amq__block_free(m, &w->table);
    amq__free(m, w->queue, (w->slots + w->planned) * sizeof *w->queue);
    amq__free(m, w->key, w->keys * sizeof *w->key);
    amq__free(m, w->group, w->workers * sizeof *w->group);
    if (w->planned > 1) {
        amq__free(m, w->ends, w->planned * w->rcap * sizeof *w->ends);
        amq__free(m, w->defer,
                  (size_t)w->planned * w->planned * XF_DEFER(w->planned) *
                      sizeof *w->defer);
    }
    memset(w, 0, sizeof *w);
}

static amq_status xf_work_alloc(const amq__mem *m, size_t slots, size_t n,
                                bool grouped, xf_work *w) {
    size_t a, b, c;
    memset(w, 0, sizeof *w);
    w->slots = slots;
    w->n = n;
    w->planned = xf_members(slots, n);
    xf_team_layout(w, w->planned);
    if (!amq__mul(slots, sizeof *w->slot, &a) ||
        !amq__mul(slots + w->planned, sizeof *w->queue, &b) ||
        !amq__mul(w->keys, sizeof *w->key, &c))
        return AMQ_ERR_OVERFLOW;
    amq_status st = amq__block_alloc(m, a, 64, &w->table);
    if (st != AMQ_OK)
        return st;
    w->slot = w->table.ptr;
    w->workers = grouped ? amq__par_workers(n) : 0;
    w->queue = amq__alloc(m, b);
    w->key = w->queue ? amq__alloc(m, c) : NULL;
    if (w->key != NULL && grouped)
        w->group = amq__alloc(m, w->workers * sizeof *w->group);
    bool ok = w->key != NULL && (!grouped || w->group != NULL);
    if (ok && w->planned > 1) {
        w->rcap = xf_round_cap(slots);
        w->ends = amq__alloc(m, w->planned * w->rcap * sizeof *w->ends);
        w->defer =
            w->ends == NULL
                ? NULL
                : amq__alloc(m, (size_t)w->planned * w->planned *
                                    XF_DEFER(w->planned) * sizeof *w->defer);
        ok = w->defer != NULL;
    }
    if (!ok) {
        xf_work_free(m, w);
        return AMQ_ERR_NOMEM;
    }
    return AMQ_OK;
}

/* The mixed hashes of a fuse build, grouped by their top XF_GROUP_BITS
 * bits (a counting sort into out). The start segment reduce(x, S) is
 * monotone in x, so consecutive keys then update neighbouring segments:
 * the counting pass touches a window of a few segments, not the table.
 * On several threads the input is cut into consecutive pieces, each
 * counted and scattered by one thread behind the earlier pieces' keys of
 * each group: the same order as one pass. start[g] ends as group g's end. */
typedef struct xf_group_job {
    uint64_t seed;
    const uint64_t *h;
    uint64_t *out;
    size_t n, pieces;
    size_t (*at)[XF_GROUPS]; /* [pieces]: counts, then write positions */
} xf_group_job;

static void xf_piece(const xf_group_job *j, size_t c, size_t *a, size_t *e) {
    *a = j->n * c / j->pieces;
    *e = j->n * (c + 1) / j->pieces;
}

static void xf_group_count(void *ctx, size_t c, unsigned worker) {
    const xf_group_job *j = ctx;
    size_t a, e, *at = j->at[c];
    (void)worker;
    xf_piece(j, c, &a, &e);
    for (size_t i = a; i < e; i++)
        at[xf_mix(j->h[i], j->seed) >> (64 - XF_GROUP_BITS)]++;
}

static void xf_group_scatter(void *ctx, size_t c, unsigned worker) {
    const xf_group_job *j = ctx;
    size_t a, e, *at = j->at[c];
    (void)worker;
    xf_piece(j, c, &a, &e);
    for (size_t i = a; i < e; i++) {
        uint64_t x = xf_mix(j->h[i], j->seed);
        j->out[at[x >> (64 - XF_GROUP_BITS)]++] = x;
    }
}

static void xf_group(uint64_t seed, const uint64_t *h, size_t n, uint64_t *out,
                     size_t (*at)[XF_GROUPS], unsigned workers,
                     size_t end[XF_GROUPS]) {
    xf_group_job j = {seed, h, out, n, workers, at};
    memset(at, 0, workers * sizeof *at);
    amq__par_for(workers, workers, xf_group_count, &j);
    size_t pos = 0;
    for (size_t g = 0; g < XF_GROUPS; g++) {
        for (size_t c = 0; c < workers; c++) {
            size_t k = at[c][g];
            at[c][g] = pos;
            pos += k;
        }
        end[g] = pos;
    }
    amq__par_for(workers, workers, xf_group_scatter, &j);
}

/* How far ahead the loops below work: enough entries to cover a memory
 * access with the work of those in between. A power of two. */
#define XF_AHEAD 16

/* Count the keys hitting each slot and xor their mixed hashes (the order
 * does not change the result). v holds mixed hashes if `mixed`, else the
 * caller's hashes. Each key's slots are computed and prefetched XF_AHEAD
 * keys before they are updated. */
XF_INLINE void xf_count_k(const xf_shape *s, unsigned ways, unsigned form,
                          uint64_t seed, const uint64_t *v, bool mixed,
                          size_t n, xf_slot *t, bool shared) {
    const xf_map m = xf_map_of(s);
    uint32_t p[XF_AHEAD][4];
    uint64_t x[XF_AHEAD];
    for (size_t i = 0; i < n + XF_AHEAD; i++) {
        size_t r = i % XF_AHEAD;
        if (i >= XF_AHEAD) {
            for (unsigned k = 0; k < ways; k++) {
                xf_slot *e = &t[p[r][k]];
                if (shared) {
                    __atomic_fetch_xor(&e->x, x[r], __ATOMIC_RELAXED);
                    __atomic_fetch_add(&e->state, 1, __ATOMIC_RELAXED);
                } else {
                    e->x ^= x[r];
                    e->state++;
                }
            }
        }
        if (i < n) {
            x[r] = mixed ? v[i] : xf_mix(v[i], seed);
            xf_map_slots(m, ways, form, x[r], p[r]);
            for (unsigned k = 0; k < ways; k++)
                amq__prefetch_w(&t[p[r][k]]);
        }
    }
}

XF_INLINE void xf_count(const xf_shape *s, unsigned ways, unsigned form,
                        uint64_t seed, const uint64_t *v, bool mixed, size_t n,
                        xf_slot *t) {
    xf_count_k(s, ways, form, seed, v, mixed, n, t, false);
}

/* Counting on several threads: each task updates slots no other task
 * running at the same time updates, so the table is the one a single pass
 * gives (a slot's count and xor do not depend on the order of updates).
 *
 * Fuse (grouped keys): the groups are cut into one run a worker, of about
 * equal keys. A run's keys touch segments s_lo(first group) to s_hi(last
 * group) + ways - 1; its last groups, up to those that reach the next
 * run's first segment, are held back and counted once the runs are done.
 *
 * Xor (one segment): a key's slots are anywhere, so the threads take
 * consecutive pieces of the keys and update the table with atomic xor and
 * add (splitting the updates by slot range instead made every thread read
 * every key, and measured slower than one thread). */

typedef struct xf_count_job {
    const xf_shape *s;
    unsigned ways, form;
    uint64_t seed;
    const uint64_t *v;
    bool mixed;
    size_t n;
    xf_slot *t;
    const size_t *run; /* xf_fuse_runs */
    unsigned pieces;   /* xf_count_shared */
} xf_count_job;

static void xf_count_dispatch(const xf_count_job *j, const uint64_t *v,
                              size_t n) {
    const xf_shape *s = j->s;
    if (j->form == XF_SLICE)
        xf_count(s, 3, XF_SLICE, j->seed, v, j->mixed, n, j->t);
    else if (j->ways == 3 && j->form == XF_POW2)
        xf_count(s, 3, XF_POW2, j->seed, v, j->mixed, n, j->t);
    else if (j->ways == 3)
        xf_count(s, 3, XF_ANY, j->seed, v, j->mixed, n, j->t);
    else if (j->form == XF_POW2)
        xf_count(s, 4, XF_POW2, j->seed, v, j->mixed, n, j->t);
    else
        xf_count(s, 4, XF_ANY, j->seed, v, j->mixed, n, j->t);
}

static void xf_count_shared(void *ctx, size_t i, unsigned worker) {
    const xf_count_job *j = ctx;
    size_t a = j->n * i / j->pieces, e = j->n * (i + 1) / j->pieces;
    (void)worker;
    if (j->form == XF_POW2)
        xf_count_k(j->s, 3, XF_POW2, j->seed, j->v + a, j->mixed, e - a, j->t,
                   true);
    else
        xf_count_k(j->s, 3, XF_ANY, j->seed, j->v + a, j->mixed, e - a, j->t,
                   true);
}

static void xf_count_run(void *ctx, size_t i, unsigned worker) {
    const xf_count_job *j = ctx;
    (void)worker;
    xf_count_dispatch(j, j->v + j->run[2 * i],
                      j->run[2 * i + 1] - j->run[2 * i]);
}

/* Fuse runs: run[2 t], run[2 t + 1] the keys counted at once by task t,
 * then run[2 workers + 2 t] .. the held-back keys (counted one run after
 * another). end[g] is group g's end in the grouped keys. false when the
 * runs are too short to leave anything to count at once. */
static bool xf_fuse_runs(const xf_shape *s, const size_t end[XF_GROUPS],
                         unsigned workers, size_t n, size_t *run) {
    size_t first[AMQ__PAR_MAX + 1];
    size_t g = 0;
    for (unsigned t = 0; t <= workers; t++) { /* runs of ~n / workers keys */
        size_t want = n * t / workers;
        while (t < workers && g < XF_GROUPS && (g ? end[g - 1] : 0) < want)
            g++;
        first[t] = t == workers ? XF_GROUPS : g;
    }
    first[0] = 0;
    unsigned runs = 0;
    for (unsigned t = 0; t < workers; t++) {
        size_t a = first[t], e = first[t + 1], h = e;
        if (t + 1 < workers) {
            uint64_t next = amq__reduce64((uint64_t)e << (64 - XF_GROUP_BITS),
                                          s->seg_count);
            while (h > a &&
                   amq__reduce64(((uint64_t)h << (64 - XF_GROUP_BITS)) - 1,
                                 s->seg_count) +
                           s->ways >
                       next)
                h--;
        }
        size_t ka = a ? end[a - 1] : 0, kh = h ? end[h - 1] : 0;
        size_t ke = e ? end[e - 1] : 0;
        if (kh < ka)
            kh = ka;
        run[2 * t] = ka;
        run[2 * t + 1] = kh;
        run[2 * workers + 2 * t] = kh;
        run[2 * workers + 2 * t + 1] = ke;
        runs += kh > ka;
    }
    return runs >= 2;
}

static void xf_count_par(const xf_shape *s, unsigned ways, unsigned form,
                         uint64_t seed, const uint64_t *v, bool mixed, size_t n,
                         xf_slot *t, unsigned workers,
                         const size_t end[XF_GROUPS]) {
    size_t run[4 * AMQ__PAR_MAX];
    xf_count_job j = {s, ways, form, seed, v, mixed, n, t, run, workers};
    if (workers > 1 && end != NULL && xf_fuse_runs(s, end, workers, n, run)) {
        amq__par_for(workers, workers, xf_count_run, &j);
        for (unsigned i = 0; i < workers; i++)
            xf_count_run(&j, workers + i, 0);
        return;
    }
    if (workers > 1 && end == NULL && ways == 3 && form != XF_SLICE) {
        amq__par_for(workers, workers, xf_count_shared, &j);
        return;
    }
    xf_count_dispatch(&j, v, n);
}

/* Peeling, in rounds. Round 1 takes the slots a single key hits after
 * counting; round r + 1 the slots whose count fell to 1 during round r.
 * A key leaves in the first round in which one of its slots holds it
 * alone, through the lowest such slot. A slot of a key still present
 * holds it alone at the start of round r when its count is 1 and its last
 * removal (the stamp in its state word) came before round r; a count of 0
 * on a slot of the key means another member is removing it. So which slot
 * each key leaves through, hence the table, does not depend on the order
 * a round's slots are taken in, nor on how many threads take them.
 *
 * Each member of the team owns a range of slots: it takes its own slots'
 * round, removes each key from its own slots, and hands the removals from
 * other members' slots to their owners in buffers of XF_DEFER entries,
 * which the owners apply after a barrier. Applying them early, before the
 * round is over, changes nothing: they lower the counts of slots that do
 * not hold their key alone (stamping them r + 1, after round r's start),
 * or empty a slot whose key has already left. A member reads another's
 * slots only for the rule, each state word in one load. One member is the
 * one-thread peel, with no buffer and no barrier.
 *
 * A member's queue starts with its slots of count 1 in table order and
 * grows at the tail (a slot enters when its count becomes 1, so at most
 * once: its slots + 1 entries suffice, the + 1 for the branch-free
 * append). The record of the slot 2 XF_AHEAD entries ahead is
 * prefetched, and when an entry comes within XF_AHEAD of the head its
 * key's slots are computed, kept in a ring for when the entry is taken,
 * and prefetched (the slot's xor changes only with its count, so if the
 * count is still 1 at the head, the slots computed earlier are its
 * key's). A peeled slot is written back over the queue's consumed front:
 * queue[0..done) ends as the slot each key left through, key[0..done) as
 * the key, round after round (ends[] marks them on several members). */
typedef struct xf_peel_job {
    const xf_shape *s;
    xf_work *w;
    amq__par_barrier bar;
    size_t given[AMQ__PAR_MAX][AMQ__PAR_MAX]; /* [from][to] this exchange */
    unsigned char more[2][AMQ__PAR_MAX];      /* round not finished      */
    unsigned char next[2][AMQ__PAR_MAX];      /* a slot waits for r + 1  */
    bool overflow; /* more rounds than ends[] holds: peel on one thread */
} xf_peel_job;

static inline uint64_t xf_state(const xf_slot *e) {
    return __atomic_load_n(&e->state, __ATOMIC_RELAXED);
}

/* Remove x from own slot e in round r if `take` (else write it back as
 * it is: no branch waits for e's line); a count falling to 1 queues it. */
static inline void xf_remove(xf_slot *e, uint32_t slot, uint64_t x, uint32_t r,
                             bool take, uint32_t *q, size_t *tail) {
    uint64_t st = e->state;
    uint32_t count = XF_COUNT(st) - take;
    e->x ^= take ? x : 0;
    __atomic_store_n(&e->state, take ? (uint64_t)(r + 1) << 32 | count : st,
                     __ATOMIC_RELAXED);
    q[*tail] = slot;
    *tail += take & (count == 1);
}

static unsigned xf_owner(const xf_work *w, uint32_t slot) {
    unsigned m = (unsigned)((uint64_t)slot * w->members / w->slots);
    return slot >= w->lo[m + 1] ? m + 1 : m;
}

XF_INLINE void xf_peel_member_k(xf_peel_job *j, unsigned me, unsigned ways,
                                unsigned form, bool solo) {
    xf_work *w = j->w;
    const xf_map m = xf_map_of(j->s);
    const unsigned size = w->members;
    const size_t lo = w->lo[me], hi = w->lo[me + 1];
    xf_slot *t = w->slot;
    uint32_t *q = w->queue + w->qoff[me], ring[XF_AHEAD][4];
    uint64_t *key = w->key + w->koff[me];
    const size_t cap = XF_DEFER(w->planned);
    xf_defer *out = w->defer + (size_t)me * size * cap;
    size_t tail = 0, done = 0, head = 0, seen = 0, end;
    uint32_t r = 1;
    for (size_t i = lo; i < hi; i++) {
        q[tail] = (uint32_t)i;
        tail += XF_COUNT(t[i].state) == 1;
    }
    end = tail;
    amq__par_barrier_wait(&j->bar);
    for (unsigned turn = 0;; turn ^= 1) {
        size_t *given = j->given[me], most = 0;
        for (unsigned v = 0; v < size; v++)
            given[v] = 0;
        for (; head < end && (solo || most + ways <= cap); head++) {
            if (head + 2 * XF_AHEAD < tail)
                amq__prefetch_w(&t[q[head + 2 * XF_AHEAD]]);
            for (; seen < tail && seen < head + XF_AHEAD; seen++) {
                uint32_t *p = ring[seen % XF_AHEAD];
                xf_map_slots(m, ways, form, t[q[seen]].x, p);
                for (unsigned k = 0; k < ways; k++)
                    amq__prefetch_w(&t[p[k]]);
            }
            uint32_t at = q[head];
            if (XF_COUNT(t[at].state) != 1)
                continue;
            const uint32_t *p = ring[head % XF_AHEAD];
            uint32_t first = UINT32_MAX, gone = 0;
            for (unsigned k = 0; k < ways; k++) {
                uint64_t st = xf_state(&t[p[k]]);
                bool waits = XF_COUNT(st) == 1 && XF_STAMP(st) <= r;
                uint32_t c = waits ? p[k] : UINT32_MAX;
                first = c < first ? c : first;
                gone |= XF_COUNT(st) == 0;
            }
            /* whether the key leaves here waits for its slots' lines:
             * no branch on it, a key that stays is removed as nothing */
            bool take = (first == at) & !gone;
            uint64_t x = t[at].x;
            key[done] = x;
            q[done] = at;
            done += take;
            for (unsigned k = 0; k < ways; k++) {
                uint32_t pk = p[k];
                if (solo || (pk >= lo && pk < hi)) {
                    xf_remove(&t[pk], pk, x, r, take, q, &tail);
                } else {
                    unsigned v = size == 2 ? 1 - me : xf_owner(w, pk);
                    xf_defer *d = &out[(size_t)v * cap + given[v]];
                    d->x = x;
                    d->slot = pk;
                    given[v] += take;
                    most = given[v] > most ? given[v] : most;
                }
            }
        }
        amq__par_barrier_wait(&j->bar);
        for (unsigned v = 0; v < size; v++) {
            const xf_defer *in = w->defer + ((size_t)v * size + me) * cap;
            size_t got = v == me ? 0 : j->given[v][me];
            for (size_t i = 0; i < got && i < 4 * XF_AHEAD; i++)
                amq__prefetch_w(&t[in[i].slot]);
            for (size_t i = 0; i < got; i++) {
                if (i + 4 * XF_AHEAD < got) /* little work an entry */
                    amq__prefetch_w(&t[in[i + 4 * XF_AHEAD].slot]);
                xf_remove(&t[in[i].slot], in[i].slot, in[i].x, r, true, q,
                          &tail);
            }
        }
        j->more[turn][me] = head < end;
        j->next[turn][me] = tail > end;
        amq__par_barrier_wait(&j->bar);
        bool more = false, next = false;
        for (unsigned v = 0; v < size; v++) {
            more |= j->more[turn][v];
            next |= j->next[turn][v];
        }
        if (more)
            continue;
        if (size > 1) {
            if (r > w->rcap) {
                if (me == 0)
                    j->overflow = true;
                break;
            }
            w->ends[me * w->rcap + r - 1] = (uint32_t)done;
        }
        if (!next)
            break;
        r++;
        end = tail;
    }
    w->done[me] = done;
    if (me == 0)
        w->rounds = r;
}

static void xf_peel_member(void *ctx, unsigned me, unsigned size) {
    xf_peel_job *j = ctx;
    const xf_shape *s = j->s;
    if (size != j->w->members)
        return; /* a thread did not start: the caller peels on one */
    /* one member: the hot loop without the exchange, whose registers it
     * would otherwise spill */
    bool solo = size == 1;
#define XF_PEEL(ways, form)                                                    \
    (solo ? xf_peel_member_k(j, me, ways, form, true)                          \
          : xf_peel_member_k(j, me, ways, form, false))
    switch (xf_form(s) * 2 + (s->ways == 4)) {
    case XF_SLICE * 2: XF_PEEL(3, XF_SLICE); break;
    case XF_POW2 * 2: XF_PEEL(3, XF_POW2); break;
    case XF_POW2 * 2 + 1: XF_PEEL(4, XF_POW2); break;
    case XF_ANY * 2: XF_PEEL(3, XF_ANY); break;
    default: XF_PEEL(4, XF_ANY); break;
    }
#undef XF_PEEL
}

/* Count, then peel on a team of `members`: 1 if every key was peeled, 0
 * if some were not, -1 if the team could not do it (a thread did not
 * start, or more rounds than ends[] holds). */
static int xf_count_peel(const xf_shape *s, uint64_t seed, const uint64_t *h,
                         size_t n, unsigned members, xf_work *w) {
    unsigned ways = s->ways, form = xf_form(s);
    unsigned workers = amq__par_workers(n);
    if (w->dirty)
        memset(w->slot, 0, w->slots * sizeof *w->slot);
    w->dirty = true;
    if (s->seg_count > 1) {
        size_t end[XF_GROUPS];
        xf_group(seed, h, n, w->key, w->group, w->workers, end);
        xf_count_par(s, ways, form, seed, w->key, true, n, w->slot, workers,
                     end);
    } else {
        xf_count_par(s, ways, form, seed, h, false, n, w->slot, workers, NULL);
    }
    xf_team_layout(w, members);
    xf_peel_job j = {.s = s, .w = w};
    amq__par_barrier_init(&j.bar, members);
    if (amq__par_team(members, xf_peel_member, &j) != members || j.overflow)
        return -1;
    size_t done = 0;
    for (unsigned m = 0; m < members; m++)
        done += w->done[m];
    return done == n;
}

/* Peel the hypergraph of `n` keys; true if every key was peeled. A fuse
 * build first groups the keys (the counting pass then stays in a window
 * of segments); a xor build has no window to gain. A team that could not
 * start, or ran out of rounds to record, leaves the work to one thread:
 * the same table. */
static bool xf_peel(const xf_shape *s, uint64_t seed, const uint64_t *h,
                    size_t n, xf_work *w) {
    int peeled = xf_count_peel(s, seed, h, n, w->planned, w);
    if (peeled < 0)
        peeled = xf_count_peel(s, seed, h, n, 1, w);
    return peeled == 1;
}

/* Fingerprints in reverse peeling order: a key's slot is assigned after
 * every key peeled later, none of which use it, so the xor with its other
 * slots is final. Each key's slots are computed XF_AHEAD keys early, kept
 * in a ring and prefetched. */
XF_INLINE void xf_assign_k(const xf_shape *s, unsigned width, unsigned ways,
                           unsigned form, const uint32_t *q,
                           const uint64_t *key, size_t n, uint8_t *tab) {
    const xf_map m = xf_map_of(s);
    uint32_t ring[XF_AHEAD][4];
    size_t bytes = width / 8;
    for (size_t i = n + XF_AHEAD; i-- > 0;) {
        if (i < n) {
            const uint32_t *p = ring[i % XF_AHEAD];
            uint32_t at = q[i], v = xf_fingerprint(key[i], width);
            for (unsigned k = 0; k < ways; k++)
                if (p[k] != at)
                    v ^= amq__fuse_get(tab, width, p[k]);
            xf_put(tab, width, at, v);
        }
        if (i >= XF_AHEAD && i - XF_AHEAD < n) {
            uint32_t *p = ring[i % XF_AHEAD]; /* i's entry is consumed */
            xf_map_slots(m, ways, form, key[i - XF_AHEAD], p);
            for (unsigned k = 0; k < ways; k++)
                amq__prefetch_w(tab + (size_t)p[k] * bytes);
        }
    }
}

XF_INLINE void xf_assign_w(const xf_shape *s, unsigned width, const uint32_t *q,
                           const uint64_t *key, size_t n, uint8_t *tab) {
    unsigned form = xf_form(s);
    if (form == XF_SLICE)
        xf_assign_k(s, width, 3, XF_SLICE, q, key, n, tab);
    else if (s->ways == 3 && form == XF_POW2)
        xf_assign_k(s, width, 3, XF_POW2, q, key, n, tab);
    else if (s->ways == 3)
        xf_assign_k(s, width, 3, XF_ANY, q, key, n, tab);
    else if (form == XF_POW2)
        xf_assign_k(s, width, 4, XF_POW2, q, key, n, tab);
    else
        xf_assign_k(s, width, 4, XF_ANY, q, key, n, tab);
}

/* Assign the keys q[0..n), key[0..n) from the last to the first. */
static void xf_assign_part(const xf_shape *s, const uint32_t *q,
                           const uint64_t *key, size_t n, uint8_t *tab) {
    switch (s->width) {
    case 8: xf_assign_w(s, 8, q, key, n, tab); break;
    case 16: xf_assign_w(s, 16, q, key, n, tab); break;
    default: xf_assign_w(s, 32, q, key, n, tab); break;
    }
}

/* On a team, round after round from the last: a key's other slots belong
 * to keys of later rounds (a slot that held it alone in its round held no
 * other key of that round), so the members of one round never read what
 * another writes. */
typedef struct xf_assign_job {
    const xf_shape *s;
    const xf_work *w;
    uint8_t *tab;
    amq__par_barrier bar;
} xf_assign_job;

/* Assign the keys member m peeled in round r (1-based). */
static void xf_assign_round(const xf_shape *s, const xf_work *w, unsigned m,
                            size_t r, uint8_t *tab) {
    const uint32_t *ends = w->ends + m * w->rcap;
    size_t a = r > 1 ? ends[r - 2] : 0, e = ends[r - 1];
    xf_assign_part(s, w->queue + w->qoff[m] + a, w->key + w->koff[m] + a, e - a,
                   tab);
}

static void xf_assign_member(void *ctx, unsigned me, unsigned size) {
    xf_assign_job *j = ctx;
    if (size != j->w->members)
        return;
    for (size_t r = j->w->rounds; r > 0; r--) {
        xf_assign_round(j->s, j->w, me, r, j->tab);
        amq__par_barrier_wait(&j->bar);
    }
}

static void xf_assign(const xf_shape *s, const xf_work *w, size_t n,
                      uint8_t *tab) {
    if (w->members > 1) {
        xf_assign_job j = {.s = s, .w = w, .tab = tab};
        amq__par_barrier_init(&j.bar, w->members);
        if (amq__par_team(w->members, xf_assign_member, &j) == w->members)
            return;
        /* a thread did not start: the rounds on this one, last first */
        for (size_t r = w->rounds; r > 0; r--)
            for (unsigned m = 0; m < w->members; m++)
                xf_assign_round(s, w, m, r, tab);
        return;
    }
    xf_assign_part(s, w->queue, w->key, n, tab);
}

/* A sorted copy of h without duplicates (its length in *n). */
static amq_status xf_dedupe(const amq__mem *m, const uint64_t *h, size_t *n,
                            uint64_t **out, size_t *cap) {
    size_t bytes;
    if (!amq__mul(*n, sizeof *h, &bytes))
        return AMQ_ERR_OVERFLOW;
    uint64_t *c = amq__alloc(m, bytes); /* n >= 1 here */
    if (c == NULL)
        return AMQ_ERR_NOMEM;
    size_t k = 0;
    amq_status st = amq__sort_keys(m, h, *n, false, 0, true, c, &k);
    if (st != AMQ_OK) {
        amq__free(m, c, bytes);
        return st;
    }
    *cap = *n;
    *n = k;
    *out = c;
    return AMQ_OK;
}

/* ---- construction -------------------------------------------------------- */

static amq_status xf_alloc(const xf_shape *s, const amq_options *opt,
                           const uint8_t *borrow, amq_xor **out) {
    size_t slots = xf_slot_count(s), bytes;
    amq_xor *f;
    void *wr = NULL;
    if (!amq__mul(slots, s->width / 8, &bytes))
        return AMQ_ERR_OVERFLOW;
    AMQ_RETURN_IF_ERR(amq__obj_new(sizeof *f, opt, (void **)&f));
    f->s = *s;
    f->slots = slots;
    if (slots != 0 || borrow != NULL) {
        amq_status st = amq__obj_table(&f->o, bytes, borrow, &wr);
        if (st != AMQ_OK) {
            amq__obj_free(&f->o);
            return st;
        }
    }
    f->fp = borrow != NULL ? borrow : wr;
    xf_choose(f, opt != NULL && (opt->flags & AMQ_OPT_SCALAR));
    *out = f;
    return AMQ_OK;
}

/* Try seeds until the keys peel; the shape may grow for small n. */
static amq_status xf_attempts(const amq__mem *m, xf_shape *s, const uint64_t *h,
                              size_t n, uint64_t *seed, uint64_t *items,
                              xf_work *w) {
    uint64_t *dedup = NULL;
    size_t dcap = 0;
    amq_status st = AMQ_OK;
    bool ok = false;
    for (unsigned a = 0; a < AMQ_STATIC_MAX_ATTEMPTS && st == AMQ_OK; a++) {
        size_t slots = xf_slot_count(s);
        if (slots != w->slots || w->slot == NULL ||
            (s->seg_count > 1) != (w->group != NULL)) {
            xf_work_free(m, w);
            st = xf_work_alloc(m, slots, n, s->seg_count > 1, w);
            if (st != AMQ_OK)
                break;
        }
        *seed = xf_seed(a);
        if ((ok = xf_peel(s, *seed, dedup ? dedup : h, n, w)))
            break;
        if (a == 0)
            st = xf_dedupe(m, h, &n, &dedup, &dcap);
        else if (a % XF_GROW_EVERY == 0)
            xf_grow(s);
    }
    amq__free(m, dedup, dcap * sizeof *dedup);
    *items = n;
    if (st == AMQ_OK && !ok)
        st = AMQ_ERR_FULL;
    return st;
}

static amq_status xf_build(const uint64_t *h, size_t n, xf_family fam,
                           unsigned width, unsigned ways,
                           const amq_options *opt, amq_xor **out) {
    xf_shape s;
    xf_work w;
    amq__mem mem;
    uint64_t seed = 0, items = 0;
    if (out == NULL || (h == NULL && n != 0) ||
        (width != 8 && width != 16 && width != 32) || (ways != 3 && ways != 4))
        return AMQ_ERR_INVALID;
    *out = NULL;
    AMQ_RETURN_IF_ERR(xf_shape_for(fam, ways, width, n, &s));
    amq__mem_init(&mem, opt);
    memset(&w, 0, sizeof w);
    amq_status st = AMQ_OK;
    if (n != 0)
        st = xf_attempts(&mem, &s, h, n, &seed, &items, &w);
    if (st == AMQ_OK)
        st = xf_alloc(&s, opt, NULL, out);
    if (st == AMQ_OK && n != 0)
        xf_assign(&s, &w, (size_t)items, (*out)->o.block.ptr);
    if (st == AMQ_OK) {
        (*out)->fam = fam;
        (*out)->seed = seed;
        (*out)->o.items = items;
    }
    xf_work_free(&mem, &w);
    return st;
}

/* What xf_work_alloc takes for the first attempt's shape: the records
 * (plus the block's alignment slack), the queue, the key array and, for
 * a fuse table of several segments, the grouping's positions (8 KiB per
 * thread of the build in progress); on several threads, the peeling
 * team's round marks and exchange buffers. */
size_t amq_xor_build_memory(size_t n, unsigned width, unsigned ways) {
    xf_shape s;
    size_t slots, a, b, c;
    (void)width; /* the peeling state does not depend on it */
    if (n == 0 || (ways != 0 && ways != 3 && ways != 4) ||
        xf_shape_for(ways ? XF_FUSE : XF_XOR, ways ? ways : 3, 8, n, &s) !=
            AMQ_OK)
        return 0;
    slots = xf_slot_count(&s);
    xf_work w;
    memset(&w, 0, sizeof w);
    w.slots = slots;
    w.n = n;
    w.planned = xf_members(slots, n);
    xf_team_layout(&w, w.planned);
    size_t team = w.planned < 2
                      ? 0
                      : w.planned * xf_round_cap(slots) * sizeof(uint32_t) +
                            (size_t)w.planned * w.planned *
                                XF_DEFER(w.planned) * sizeof(xf_defer);
    if (!amq__mul(slots, sizeof(xf_slot), &a) || !amq__add(a, 63, &a) ||
        !amq__mul(slots + w.planned, sizeof(uint32_t), &b) ||
        !amq__mul(w.keys, sizeof(uint64_t), &c) || !amq__add(a, b, &a) ||
        !amq__add(a, c, &a) || !amq__add(a, team, &a) ||
        !amq__add(a,
                  s.seg_count > 1
                      ? amq__par_workers(n) * sizeof(size_t[XF_GROUPS])
                      : 0,
                  &a))
        return 0;
    return a;
}

unsigned amq_xor_width(const amq_xor *f) { return f->s.width; }
unsigned amq_xor_ways(const amq_xor *f) { return f->s.ways; }

/* 2^-w, or 0 for an empty filter (it answers false). */
static double xf_fpr_bound(const amq__obj *o) {
    const amq_xor *f = (const amq_xor *)o;
    return o->items == 0 ? 0.0 : ldexp(1.0, -(int)f->s.width);
}

/* ---- the generic interface ----------------------------------------------- */

/* The six spec names share this code; each descriptor's variant is its
 * family and width. */
typedef struct xf_kind {
    const char *name;
    xf_family fam;
    unsigned width;
} xf_kind;

/* Parse ways= (fuse: 3 or 4; xor: only 3, which describe() writes). */
static amq_status spec_ways(amq__spec *spec, const xf_kind *k, unsigned *ways,
                            amq_diag *diag) {
    uint64_t w = 3;
    bool found;
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "ways", 3, 4, &w, &found, diag));
    if (k->fam == XF_XOR && w != 3)
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "%s is 3-wise; use fuse%u:ways=4", k->name, k->width);
    *ways = (unsigned)w;
    return AMQ_OK;
}

static amq_status t_build(const amq__type *self, amq__spec *spec,
                          const uint64_t *h, size_t n, double fpr,
                          const amq_options *opt, amq__obj **out,
                          amq_diag *diag) {
    const xf_kind *k = self->variant;
    unsigned ways = 3;
    amq_xor *f;
    AMQ_RETURN_IF_ERR(spec_ways(spec, k, &ways, diag));
    if (fpr != 0.0 && fpr < ldexp(1.0, -(int)k->width))
        return amq__diag(diag, AMQ_ERR_INVALID, 0,
                         "%s gives a false-positive rate of 2^-%u = %g; "
                         "%g needs wider fingerprints",
                         k->name, k->width, ldexp(1.0, -(int)k->width), fpr);
    amq_status st = xf_build(h, n, k->fam, k->width, ways, opt, &f);
    if (st == AMQ_ERR_FULL)
        return amq__diag(diag, st, 0,
                         "%s: %zu keys did not peel in %d "
                         "attempts",
                         k->name, n, AMQ_STATIC_MAX_ATTEMPTS);
    AMQ_RETURN_IF_ERR(st);
    *out = &f->o;
    return AMQ_OK;
}

static size_t t_describe(const amq__obj *o, char *buf, size_t cap) {
    const amq_xor *f = (const amq_xor *)o;
    return amq__describe(buf, cap, "ways=%u", f->s.ways);
}

/* The family's curve: w-bit fingerprints at c slots per key give 2^-w at
 * c w bits per key, c the asymptotic slot factor (xor 1.23, fuse 1.125 or
 * 1.075). A fixed-width filter sits on it at its own bits per key once n
 * is large; small n pays more bits for the same 2^-w. */
static amq_status t_curve(const amq__type *self, amq__spec *spec, double x,
                          bool inverse, double *out, amq_diag *diag) {
    const xf_kind *k = self->variant;
    unsigned ways = 3;
    AMQ_RETURN_IF_ERR(spec_ways(spec, k, &ways, diag));
    double c = xf_asymptotic(k->fam, ways);
    *out = inverse ? -c * log2(x) : exp2(-x / c);
    return AMQ_OK;
}

/* params: seed u64 | items u64 | seg_len u32 | seg_count u32 | ways u32 |
 * width u32 | family u32 (0 xor, 1 fuse) | mapping u32 (0: offsets by
 * multiplies, every xor filter and the fuse filters of earlier releases;
 * 1: slices, the 3-way fuse filters built now; a reader from before it
 * refuses 1, the word it required to be 0). The family tells a
 * one-segment fuse filter from a xor filter of the same shape. */
#define PARAMS_LEN 40
static void t_params_write(const amq__obj *o, amq__wr *w) {
    const amq_xor *f = (const amq_xor *)o;
    amq__wr_u64(w, f->seed);
    amq__wr_u64(w, o->items);
    amq__wr_u32(w, f->s.seg_len);
    amq__wr_u32(w, f->s.seg_count);
    amq__wr_u32(w, f->s.ways);
    amq__wr_u32(w, f->s.width);
    amq__wr_u32(w, f->fam == XF_XOR ? 0 : 1);
    amq__wr_u32(w, f->s.mapping);
}

/* Where each parameter of a frame sits. */
typedef struct xf_at {
    size_t items, seg_len, seg_count, ways, width, fam;
} xf_at;

static amq_status check_shape(const amq__rd *r, const xf_kind *k,
                              const xf_shape *s, uint64_t items, size_t len,
                              const xf_at *at) {
    bool empty = s->seg_len == 0 && s->seg_count == 0;
    if (s->width != k->width)
        return amq__rd_bad(r, at->width, "width %u", s->width);
    if (s->ways < 3 || s->ways > 4 || (k->fam == XF_XOR && s->ways != 3))
        return amq__rd_bad(r, at->ways, "%u-wise", s->ways);
    if (k->fam == XF_XOR && !empty && s->seg_count != 1)
        return amq__rd_bad(r, at->seg_count, "xor filter with %u segments",
                           s->seg_count);
    if (empty != (items == 0) ||
        (!empty && (s->seg_len == 0 || s->seg_count == 0)))
        return amq__rd_bad(r, at->items, "%llu keys in %u x %u slots",
                           (unsigned long long)items, s->seg_count, s->seg_len);
    uint64_t slots = ((uint64_t)s->seg_count + s->ways - 1) * s->seg_len;
    if (empty)
        slots = 0;
    if (slots > UINT32_MAX || items > slots ||
        slots * (s->width / 8) != (uint64_t)len)
        return amq__rd_bad(r, at->seg_len,
                           "%llu slots, %llu keys, %zu "
                           "payload bytes",
                           (unsigned long long)slots, (unsigned long long)items,
                           len);
    return AMQ_OK;
}

/* The frame's type id decides the kind; a frame relabelled to a sibling
 * type is refused by check_shape. */
static amq_status t_load(const amq__type *self, amq__rd *r,
                         const uint8_t *payload, size_t len, bool view,
                         const amq_options *opt, amq__obj **out) {
    const xf_kind *k = self->variant;
    uint64_t seed, items;
    uint32_t fam;
    xf_shape s;
    xf_at at;
    amq_xor *f;
    AMQ_RETURN_IF_ERR(amq__rd_expect(r, PARAMS_LEN));
    amq__rd_u64(r, &seed);
    at.items = amq__rd_u64(r, &items);
    at.seg_len = amq__rd_u32(r, &s.seg_len);
    at.seg_count = amq__rd_u32(r, &s.seg_count);
    at.ways = amq__rd_u32(r, &s.ways);
    at.width = amq__rd_u32(r, &s.width);
    at.fam = amq__rd_u32(r, &fam);
    size_t at_mapping = amq__rd_u32(r, &s.mapping);
    xf_set_lg(&s);
    if (fam != (k->fam == XF_XOR ? 0u : 1u))
        return amq__rd_bad(r, at.fam, "family %u does not match", fam);
    AMQ_RETURN_IF_ERR(check_shape(r, k, &s, items, len, &at));
    /* mapping 1: a 3-way fuse filter of 2^lg slots a segment, lg <= 18
     * (its two offset slices must not overlap) */
    if (s.mapping > 1 || (s.mapping == 1 && (k->fam != XF_FUSE || s.ways != 3 ||
                                             s.lg == XF_ANY_LEN || s.lg > 18)))
        return amq__rd_bad(r, at_mapping, "slot mapping %u", s.mapping);
    AMQ_RETURN_IF_ERR(xf_alloc(&s, opt, view ? payload : NULL, &f));
    if (!view && len != 0)
        memcpy(f->o.block.ptr, payload, len);
    f->seed = seed;
    f->o.items = items;
    f->fam = k->fam;
    *out = &f->o;
    return AMQ_OK;
}

#define XOR_PARAMS "ways=3 (fixed; xor filters are 3-wise)"
#define FUSE_PARAMS "ways=3 or 4 (segments per key, default 3)"
/* Three slots a query reads; fuse's lie in adjacent segments. */
#define XOR_READS "3"
#define FUSE_READS "3 (nearby)"

/* Everything but the info, the variant and the reads' wording is shared. */
#define XF_COMMON                                                              \
    .build = t_build, .load = t_load, .contains = xf_contains,                 \
    .contains_batch = xf_contains_batch, .fpr_bound = xf_fpr_bound,            \
    .describe = t_describe, .curve = t_curve, .params_write = t_params_write

#define XF_INFO(nm, id, sum, prm, shp)                                         \
    {                                                                          \
        .name = nm, .type_id = id, .caps = AMQ_CAP_STATIC, .summary = sum,     \
        .params = prm, .default_hash = AMQ_HASH_XXH3, .shapes = shp            \
    }

/* 4-wise fuse filters: the kernels of four segments (test_kernels); the
 * 8-bit one is measured beside the defaults too (info.shapes: the
 * smallest fuse filter at a given rate). */
static const char *const fuse8_shapes[] = {"fuse8:ways=4", NULL};
static const char *const fuse16_shapes[] = {"fuse16:ways=4", NULL};

#define XF_TYPE(NAME, FAM, WIDTH, SUMMARY, PARAMS, READS, SHAPES, MEASURE)     \
    static const xf_kind kind_##NAME = {#NAME, FAM, WIDTH};                    \
    const amq__type amq__type_##NAME = {                                       \
        .info = XF_INFO(#NAME, AMQ__ID_##NAME, SUMMARY, PARAMS, MEASURE),      \
        .variant = &kind_##NAME,                                               \
        .reads = 3,                                                            \
        .reads_text = READS,                                                   \
        .kernel_shapes = SHAPES,                                               \
        XF_COMMON}

XF_TYPE(xor8, XF_XOR, 8, "xor filter, 8-bit fingerprints (static)", XOR_PARAMS,
        XOR_READS, amq__defaults_only, NULL);
XF_TYPE(xor16, XF_XOR, 16, "xor filter, 16-bit fingerprints (static)",
        XOR_PARAMS, XOR_READS, amq__defaults_only, NULL);
XF_TYPE(xor32, XF_XOR, 32, "xor filter, 32-bit fingerprints (static)",
        XOR_PARAMS, XOR_READS, amq__defaults_only, NULL);
XF_TYPE(fuse8, XF_FUSE, 8, "binary fuse filter, 8-bit fingerprints (static)",
        FUSE_PARAMS, FUSE_READS, fuse8_shapes, fuse8_shapes);
XF_TYPE(fuse16, XF_FUSE, 16, "binary fuse filter, 16-bit fingerprints (static)",
        FUSE_PARAMS, FUSE_READS, fuse16_shapes, NULL);
XF_TYPE(fuse32, XF_FUSE, 32, "binary fuse filter, 32-bit fingerprints (static)",
        FUSE_PARAMS, FUSE_READS, amq__defaults_only, NULL);
