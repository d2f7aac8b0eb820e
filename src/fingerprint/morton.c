/*
 * morton.c — the Morton filter (Breslow, Jayasena, "Morton Filters:
 * Faster, Space-Efficient Cuckoo Filters via Biasing, Compression, and
 * Decoupled Logical Sparsity", PVLDB 11, 2018). (The review "Bloom
 * filters at fifty" credits Morton filters to Putze et al. with time
 * decay; that is another structure: see docs/structures.md.)
 *
 * A cuckoo filter whose buckets are compressed into 64-byte blocks: a
 * block has BK logical buckets of up to 3 fingerprints, but only S
 * physical slots shared by all of them (a fullness counter per bucket
 * says how many of the slots are whose), and an overflow-tracking array
 * (OTA) of bits that says whether a key of this block may have gone to
 * its other bucket:
 *
 *   R = 8:  BK = 64, S = 46                  R = 16: BK = 32, S = 26
 *   +--------------------+--------+-----+   +---------------------+-------+-----+
 *   | 46 x 8-bit slots   | 64 x 2 | OTA |   | 26 x 16-bit slots   | 32x2  | OTA |
 *   |  (FSA)             |  (FCA) | 16  |   |                     |       | 32  |
 *   +--------------------+--------+-----+   +---------------------+-------+-----+
 *     bytes 0-45          46-61    62-63      0-51                  52-59   60-63
 *
 * Bucket i of a block holds the slots [c_0 + .. + c_(i-1), + c_i), c_j
 * its counters (2 bits each, little-endian): the fingerprints of the
 * buckets in order, each bucket's in insertion order; slots past the sum
 * are 0. A key's hash h gives, with M = B BK buckets,
 *
 *   b1 = reduce(h >> 32, M)           fp = the top R bits of h's low half
 *   b2 = (H(fp) - b1) mod M,          H(fp) = 2 reduce(mix(fp) >> 32, M/2) + 1
 *
 * (the sum form of the cuckoo filter's alternate bucket: an involution
 * without fixed points, M being even). Insert is biased: into b1 if its
 * bucket and block have room, else into b2 (and the OTA bit
 * (lbi(b1) xor fp) mod |OTA| of b1's block is set), else a cuckoo walk from
 * b1: a resident of the full bucket (or, when it is the block that is
 * full, of any bucket of the block) is evicted, the carried fingerprint takes its
 * place, the OTA bit of the bucket the victim leaves is set, and the
 * victim goes to its other bucket, up to max_kicks steps; a walk that
 * fails is undone from a log of the blocks it changed, so AMQ_ERR_FULL
 * leaves the filter as it was. Query: b1's bucket (one compare of the
 * line), then b2's only if the OTA bit says a key of b1 may have moved:
 * most negative queries read one line. Remove: one copy from b1, or from
 * b2 if the OTA bit allows (OTA bits are never cleared: a stale one costs
 * a second line, never an answer).
 *
 * Why the OTA is enough: a key sits in its b2 only if it was put there
 * (its OTA bit in b1's block is then set) or a walk moved it out of b1
 * (which sets exactly that bit too: the bit of the bucket a victim leaves).
 *
 * False positives: the cuckoo filter's bound, fpr_bound() = 1 - (1 -
 * 2^-R p2)^items with p2 = 2 ceil(2^32 / M) / 2^32, ~ 2 (S / BK) load
 * 2^-R; it keeps both buckets, since weighting b2 by the share of OTA bits
 * set is not an upper bound. Derivation: docs/structures.md §"Morton
 * filter", Bound.
 *
 * Invariants (load checks them): counters sum to at most S per block,
 * slots past the sum are 0, the blocks' sums add up to items.
 *
 * Failure modes: construction fails cleanly (bad arguments, overflow,
 * allocation); add returns AMQ_ERR_FULL (no room after max_kicks) or
 * AMQ_ERR_NOMEM (the walk's undo log could not be allocated) with the
 * filter unchanged; removing a key never added may remove another key's
 * fingerprint.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#define MF_X86 1
/* Code that may use POPCNT/BMI2 (chosen at run time). */
#define MF_BMI __attribute__((flatten, target("bmi,bmi2,popcnt,lzcnt")))
#else
#define MF_BMI
#endif

#include "amq/dynamic.h"
#include "core/fpr.h"
#include "core/mem.h"
#include "type/type.h"
#include "fingerprint/lines.h"
#include "fingerprint/pocket.h"

#define LINE 64
#define AHEAD 16
#define MAX_BUCKETS (UINT64_C(1) << 31)
#define BUCKET_CAP 3

typedef struct mf_shape {
    unsigned r;       /* fingerprint bits                          */
    unsigned buckets; /* BK per block                              */
    unsigned slots;   /* S                                         */
    unsigned fca;     /* byte offset of the counters               */
    unsigned ota;     /* byte offset of the OTA                    */
    unsigned ota_bits;
    double b2; /* share of absent keys reading b2 (design load) */
} mf_shape;

static const mf_shape SHAPE8 = {8, 64, 46, 46, 62, 16, AMQ_MORTON_B2_8};
static const mf_shape SHAPE16 = {16, 32, 26, 52, 60, 32, AMQ_MORTON_B2_16};

static const mf_shape *shape_of(unsigned r) {
    return r == 8 ? &SHAPE8 : r == 16 ? &SHAPE16 : NULL;
}

/* One block changed by a walk, as it was before. */
typedef struct mf_undo {
    uint64_t block;
    uint8_t bytes[LINE];
} mf_undo;

struct amq_morton {
    amq__obj o; /* o.items: fingerprints held; o.table: blocks  */
    const uint8_t *rd;
    uint8_t *wr;       /* NULL for a view                              */
    uint64_t nblocks;  /* B                                            */
    uint64_t nbuckets; /* M = B BK                                     */
    uint64_t ota_set;  /* OTA bits set (the bound's b2 share)          */
    const mf_shape *s;
    unsigned max_kicks;
    bool bmi;     /* inserts compiled for POPCNT (not AMQ_OPT_SCALAR) */
    mf_undo *log; /* the walk's undo log (2 max_kicks + 2), lazily */
};

/* ---- a key's place ------------------------------------------------------ */

static inline uint32_t fp_of(const mf_shape *s, uint64_t h) {
    return (uint32_t)h >> (32 - s->r);
}

static inline uint64_t bucket1(const amq_morton *f, uint64_t h) {
    return amq__reduce32((uint32_t)(h >> 32), (uint32_t)f->nbuckets);
}

static inline uint64_t alt_bucket(const amq_morton *f, uint64_t b,
                                  uint32_t fp) {
    uint64_t x = amq__mix64(fp);
    uint64_t H = 2 * (uint64_t)amq__reduce32((uint32_t)(x >> 32),
                                             (uint32_t)(f->nbuckets / 2)) +
                 1;
    return H >= b ? H - b : H - b + f->nbuckets;
}

/* ---- a block ------------------------------------------------------------ */

static inline uint8_t *block_mut(const amq_morton *f, uint64_t blk) {
    return f->wr + (size_t)blk * LINE;
}

static inline const uint8_t *block_at(const amq_morton *f, uint64_t blk) {
    return f->rd + (size_t)blk * LINE;
}

/* The counters as two words (R = 16: one; the second is 0). */
static inline void fca_get(const uint8_t *p, const mf_shape *s, uint64_t *lo,
                           uint64_t *hi) {
    *lo = amq__get_u64(p + s->fca);
    *hi = s->r == 8 ? amq__get_u64(p + s->fca + 8) : 0;
}

static inline void fca_put(uint8_t *p, const mf_shape *s, uint64_t lo,
                           uint64_t hi) {
    amq__put_u64(p + s->fca, lo);
    if (s->r == 8)
        amq__put_u64(p + s->fca + 8, hi);
}

/* Sum of the 2-bit counters in x (value = bits + high bits). */
static inline unsigned sum2(uint64_t x) {
    return amq__popcount64(x) +
           amq__popcount64(x & UINT64_C(0xaaaaaaaaaaaaaaaa));
}

/* Bucket i's first slot and its count, without a branch on i. */
static inline void bucket_span(uint64_t lo, uint64_t hi, unsigned i,
                               unsigned *start, unsigned *count) {
    unsigned bit = 2 * i;
    uint64_t high = 0 - (uint64_t)(bit >= 64);
    uint64_t below = (UINT64_C(1) << (bit & 63)) - 1;
    *start = sum2(lo & (below | high)) + sum2(hi & below & high);
    uint64_t w = (hi & high) | (lo & ~high);
    *count = (unsigned)(w >> (bit & 63)) & 3;
}

static inline unsigned block_fill(const uint8_t *p, const mf_shape *s) {
    uint64_t lo, hi;
    fca_get(p, s, &lo, &hi);
    return sum2(lo) + sum2(hi);
}

static inline unsigned slot_get(const uint8_t *p, const mf_shape *s,
                                unsigned i) {
    return s->r == 8 ? p[i] : amq__get_u16(p + 2 * i);
}

static inline void slot_put(uint8_t *p, const mf_shape *s, unsigned i,
                            unsigned v) {
    if (s->r == 8)
        p[i] = (uint8_t)v;
    else
        amq__put_u16(p + 2 * i, (uint16_t)v);
}

static inline unsigned ota_index(const mf_shape *s, unsigned lbi, uint32_t fp) {
    return (lbi ^ fp) & (s->ota_bits - 1);
}

static inline bool ota_get(const uint8_t *p, const mf_shape *s, unsigned i) {
    uint32_t w =
        s->r == 8 ? amq__get_u16(p + s->ota) : amq__get_u32(p + s->ota);
    return (w >> i) & 1;
}

/* Sets the bit; whether it was clear before. */
static bool ota_set(uint8_t *p, const mf_shape *s, unsigned i) {
    bool was = ota_get(p, s, i);
    if (s->r == 8)
        amq__put_u16(p + s->ota,
                     (uint16_t)(amq__get_u16(p + s->ota) | 1u << i));
    else
        amq__put_u32(p + s->ota, amq__get_u32(p + s->ota) | 1u << i);
    return !was;
}

/* Add d (+1 or -1) to bucket i's counter. */
static void count_add(uint8_t *p, const mf_shape *s, unsigned i, int d) {
    uint64_t lo, hi, one = UINT64_C(1) << (2 * i % 64);
    fca_get(p, s, &lo, &hi);
    if (2 * i < 64)
        lo = d > 0 ? lo + one : lo - one;
    else
        hi = d > 0 ? hi + one : hi - one;
    fca_put(p, s, lo, hi);
}

/* fp appended to bucket i of a block whose bucket and block have room. */
static void slot_insert(uint8_t *p, const mf_shape *s, unsigned i,
                        uint32_t fp) {
    uint64_t lo, hi;
    unsigned start, count, w = s->r / 8;
    fca_get(p, s, &lo, &hi);
    bucket_span(lo, hi, i, &start, &count);
    /* the block has room: its last slot is empty and may be dropped */
    amq__pk_open_slot(p, LINE, (start + count) * w, s->slots * w, w, fp);
    count_add(p, s, i, +1);
}

/* Slot j of the block taken out (its bucket i loses one). */
static void slot_remove(uint8_t *p, const mf_shape *s, unsigned i, unsigned j) {
    unsigned w = s->r / 8, fill = block_fill(p, s);
    memmove(p + j * w, p + (j + 1) * w, (fill - 1 - j) * w);
    slot_put(p, s, fill - 1, 0);
    count_add(p, s, i, -1);
}

/* ---- one key: the reference and the kernels ------------------------------ */

/* The reference: bucket i's slots one by one. */
static bool bucket_has_ref(const uint8_t *p, const mf_shape *s, unsigned i,
                           uint32_t fp) {
    uint64_t lo, hi;
    unsigned start, count;
    fca_get(p, s, &lo, &hi);
    bucket_span(lo, hi, i, &start, &count);
    for (unsigned j = start; j < start + count; j++)
        if (slot_get(p, s, j) == fp)
            return true;
    return false;
}

static bool contains_ref(const amq__obj *o, uint64_t h) {
    const amq_morton *f = (const amq_morton *)o;
    const mf_shape *s = f->s;
    uint32_t fp = fp_of(s, h);
    uint64_t b1 = bucket1(f, h);
    const uint8_t *p = block_at(f, b1 / s->buckets);
    unsigned i1 = (unsigned)(b1 % s->buckets);
    if (bucket_has_ref(p, s, i1, fp))
        return true;
    if (!ota_get(p, s, ota_index(s, i1, fp)))
        return false;
    uint64_t b2 = alt_bucket(f, b1, fp);
    return bucket_has_ref(block_at(f, b2 / s->buckets), s,
                          (unsigned)(b2 % s->buckets), fp);
}

#ifdef MF_X86
#define MF_INL inline __attribute__((always_inline))
#define MF_AVX2 __attribute__((flatten, target("avx2,bmi,bmi2,popcnt,lzcnt")))
#define MF_AVX512                                                              \
    __attribute__((flatten,                                                    \
                   target("avx512f,avx512bw,avx2,bmi,bmi2,popcnt,lzcnt")))

/* Matches of fp in bucket i, given the block's equal slots. */
static MF_INL bool in_bucket(const uint8_t *p, const mf_shape *s, unsigned i,
                             uint64_t eq) {
    uint64_t lo, hi;
    unsigned start, count;
    fca_get(p, s, &lo, &hi);
    bucket_span(lo, hi, i, &start, &count);
    uint64_t span = ((UINT64_C(1) << count) - 1) << start;
    return (eq & span) != 0;
}

/* Bucket i1 of block p, then (its OTA bit set and no match) bucket b2:
 * for keys with a slot of p equal to fp or the OTA bit set. Out of line,
 * so the kernels' common path saves no registers for it. */
#define MF_REST(NAME, ATTR, EQ, W)                                             \
    __attribute__((noinline)) ATTR static bool NAME(                           \
        const amq_morton *f, const uint8_t *p, uint64_t b1, uint32_t fp,       \
        uint64_t eq, bool ota) {                                               \
        const mf_shape *s = W == 8 ? &SHAPE8 : &SHAPE16;                       \
        bool hit = in_bucket(p, s, (unsigned)(b1 % s->buckets), eq);           \
        if ((unsigned)hit | (unsigned)!ota)                                    \
            return hit;                                                        \
        uint64_t b2 = alt_bucket(f, b1, fp);                                   \
        const uint8_t *q = block_at(f, b2 / s->buckets);                       \
        return in_bucket(q, s, (unsigned)(b2 % s->buckets), EQ(q, W, fp));     \
    }

/* Most absent keys find no slot of their block equal to fp (at the design
 * load 1 - (1 - 2^-R)^S of them find one: 16% at R = 8) and their OTA bit
 * clear: they return on a predicted branch, before the counters' prefix
 * sums that find the bucket, which would wait for the line in the core's
 * schedulers and hold the next keys' reads back. b2 is read only when b1
 * misses and its OTA bit is set. */
#define MF_KERNEL(NAME, REST, ATTR, EQ, W)                                     \
    ATTR static bool NAME(const amq__obj *o, uint64_t h) {                     \
        const amq_morton *f = (const amq_morton *)o;                           \
        const mf_shape *s = W == 8 ? &SHAPE8 : &SHAPE16;                       \
        uint32_t fp = fp_of(s, h);                                             \
        uint64_t b1 = bucket1(f, h);                                           \
        const uint8_t *p = block_at(f, b1 / s->buckets);                       \
        unsigned i1 = (unsigned)(b1 % s->buckets);                             \
        uint64_t eq = EQ(p, W, fp) & ((UINT64_C(1) << s->slots) - 1);          \
        bool ota = ota_get(p, s, ota_index(s, i1, fp));                        \
        if (__builtin_expect((eq | (uint64_t)ota) == 0, 1))                    \
            return false;                                                      \
        return REST(f, p, b1, fp, eq, ota);                                    \
    }

MF_REST(rest512_8, MF_AVX512, amq__line_eq512, 8)
MF_REST(rest512_16, MF_AVX512, amq__line_eq512, 16)
MF_REST(rest256_8, MF_AVX2, amq__line_eq256, 8)
MF_REST(rest256_16, MF_AVX2, amq__line_eq256, 16)
MF_KERNEL(k512_8, rest512_8, MF_AVX512, amq__line_eq512, 8)
MF_KERNEL(k512_16, rest512_16, MF_AVX512, amq__line_eq512, 16)
MF_KERNEL(k256_8, rest256_8, MF_AVX2, amq__line_eq256, 8)
MF_KERNEL(k256_16, rest256_16, MF_AVX2, amq__line_eq256, 16)
#endif

static void choose(amq_morton *f, bool scalar) {
    bool w8 = f->s->r == 8;
#ifdef MF_X86
    f->o.contains = amq__obj_pick(scalar, contains_ref, w8 ? k256_8 : k256_16,
                                  w8 ? k512_8 : k512_16);
    f->bmi = !scalar && amq__cpu_has_avx2();
#else
    (void)w8;
    f->o.contains = contains_ref;
    f->bmi = false;
#endif
}

/* First blocks prefetched AHEAD keys before the kernel answers for them. */
static void contains_batch(const amq__obj *o, const uint64_t *h, size_t n,
                           uint8_t *out) {
    const amq_morton *f = (const amq_morton *)o;
    const mf_shape *s = f->s;
    for (size_t i = 0; i < n && i < AHEAD; i++)
        amq__prefetch(block_at(f, bucket1(f, h[i]) / s->buckets));
    for (size_t i = 0; i < n; i++) {
        if (i + AHEAD < n)
            amq__prefetch(block_at(f, bucket1(f, h[i + AHEAD]) / s->buckets));
        out[i] = f->o.contains(&f->o, h[i]);
    }
}

/* ---- inserts: biased placement, then the walk ----------------------------- */

/* Whether bucket b can take one more fingerprint. */
static bool has_room(const amq_morton *f, uint64_t b) {
    const mf_shape *s = f->s;
    const uint8_t *p = block_at(f, b / s->buckets);
    uint64_t lo, hi;
    unsigned start, count;
    fca_get(p, s, &lo, &hi);
    bucket_span(lo, hi, (unsigned)(b % s->buckets), &start, &count);
    return count < BUCKET_CAP && block_fill(p, s) < s->slots;
}

static void put(amq_morton *f, uint64_t b, uint32_t fp) {
    const mf_shape *s = f->s;
    slot_insert(block_mut(f, b / s->buckets), s, (unsigned)(b % s->buckets),
                fp);
}

/* OTA bit of (bucket b, fp): a fingerprint of b may now be in its other
 * bucket. */
static void mark(amq_morton *f, uint64_t b, uint32_t fp) {
    const mf_shape *s = f->s;
    unsigned i = (unsigned)(b % s->buckets);
    f->ota_set += ota_set(block_mut(f, b / s->buckets), s, ota_index(s, i, fp));
}

typedef struct mf_walk {
    amq_morton *f;
    size_t logged;
    uint64_t ota_before;
} mf_walk;

static void log_block(mf_walk *w, uint64_t blk) {
    mf_undo *u = &w->f->log[w->logged++];
    u->block = blk;
    memcpy(u->bytes, block_at(w->f, blk), LINE);
}

/* The victim a walk takes at `step` from bucket b (block p, bucket i): a
 * resident of the bucket if the bucket is full, else (its block is full)
 * of any bucket of the block, so the walk has the block's S residents to
 * choose from, not the bucket's one or two (with those it was caught in
 * cycles of a few blocks at 87% load). A pure function of (h, step, b)
 * and the block's contents. */
static unsigned victim_slot(const uint8_t *p, const mf_shape *s, unsigned i,
                            uint64_t h, unsigned step, uint64_t b,
                            unsigned *owner) {
    uint64_t lo, hi, x = amq__mix64(h ^ ((uint64_t)step << 40) ^ b);
    unsigned start, count;
    fca_get(p, s, &lo, &hi);
    bucket_span(lo, hi, i, &start, &count);
    *owner = i;
    if (count == BUCKET_CAP)
        return start + (unsigned)(x % count);
    unsigned j = (unsigned)(x % s->slots), k = 0;
    while (k + 1 < s->buckets) { /* the bucket holding slot j */
        bucket_span(lo, hi, k + 1, &start, &count);
        if (start > j)
            break;
        k++;
    }
    *owner = k;
    return j;
}

/* One step at bucket b carrying *cur: evict, set the OTA bit of the
 * bucket the victim leaves, put *cur in; *cur becomes the victim and *b
 * its other bucket. */
static void walk_step(mf_walk *w, uint64_t h, unsigned step, uint64_t *b,
                      uint32_t *cur) {
    amq_morton *f = w->f;
    const mf_shape *s = f->s;
    uint64_t blk = *b / s->buckets;
    unsigned i = (unsigned)(*b % s->buckets), owner;
    uint8_t *p = block_mut(f, blk);
    log_block(w, blk);
    unsigned j = victim_slot(p, s, i, h, step, *b, &owner);
    uint32_t victim = slot_get(p, s, j);
    if (owner == i) {
        slot_put(p, s, j, *cur);
    } else {
        slot_remove(p, s, owner, j);
        slot_insert(p, s, i, *cur);
    }
    uint64_t vb = blk * s->buckets + owner;
    mark(f, vb, victim);
    *cur = victim;
    *b = alt_bucket(f, vb, victim);
}

static void undo(mf_walk *w) {
    while (w->logged > 0) {
        mf_undo *u = &w->f->log[--w->logged];
        memcpy(block_mut(w->f, u->block), u->bytes, LINE);
    }
    w->f->ota_set = w->ota_before;
}

static __attribute__((noinline)) amq_status walk(amq_morton *f, uint64_t h,
                                                 uint64_t b, uint32_t fp) {
    if (f->log == NULL) {
        f->log = amq__alloc(&f->o.mem,
                            (2 * (size_t)f->max_kicks + 2) * sizeof *f->log);
        if (f->log == NULL)
            return AMQ_ERR_NOMEM;
    }
    mf_walk w = {f, 0, f->ota_set};
    uint32_t cur = fp;
    for (unsigned step = 0; step < f->max_kicks; step++) {
        walk_step(&w, h, step, &b, &cur);
        if (has_room(f, b)) {
            put(f, b, cur);
            return AMQ_OK;
        }
    }
    undo(&w);
    return AMQ_ERR_FULL;
}

/* The common case inline, compiled twice (portable, POPCNT): room in b1,
 * else in b2; the walk out of line. */
static inline amq_status add_in(amq_morton *f, uint64_t h) {
    const mf_shape *s = f->s;
    uint32_t fp = fp_of(s, h);
    uint64_t b1 = bucket1(f, h);
    amq_status st = AMQ_OK;
    if (has_room(f, b1)) {
        put(f, b1, fp);
    } else {
        uint64_t b2 = alt_bucket(f, b1, fp);
        if (has_room(f, b2)) {
            put(f, b2, fp);
            mark(f, b1, fp);
        } else {
            st = walk(f, h, b1, fp);
        }
    }
    if (st == AMQ_OK)
        f->o.items++;
    return st;
}

static amq_status add_any(amq_morton *f, uint64_t h) { return add_in(f, h); }
MF_BMI static amq_status add_bmi(amq_morton *f, uint64_t h) {
    return add_in(f, h);
}

/* The copy compiled for the CPU (chosen with the kernel). */
static amq_status add_hash(amq__obj *o, uint64_t h) {
    amq_morton *f = (amq_morton *)o;
    return f->bmi ? add_bmi(f, h) : add_any(f, h);
}

/* Batch insert: b1's block prefetched for writing AHEAD keys early; the
 * same result as the loop, which stops at the first failure. */
static amq_status add_batch(amq__obj *o, const uint64_t *h, size_t n,
                            size_t *done) {
    const amq_morton *f = (const amq_morton *)o;
    const mf_shape *s = f->s;
    size_t i = 0;
    amq_status st = AMQ_OK;
    for (size_t j = 0; j < n && j < AHEAD; j++)
        amq__prefetch_w(block_at(f, bucket1(f, h[j]) / s->buckets));
    for (; i < n; i++) {
        if (i + AHEAD < n)
            amq__prefetch_w(block_at(f, bucket1(f, h[i + AHEAD]) / s->buckets));
        if ((st = add_hash(o, h[i])) != AMQ_OK)
            break;
    }
    *done = i;
    return st;
}

/* One copy of fp out of bucket b; false if it holds none. */
static bool take(amq_morton *f, uint64_t b, uint32_t fp) {
    const mf_shape *s = f->s;
    uint8_t *p = block_mut(f, b / s->buckets);
    unsigned i = (unsigned)(b % s->buckets), start, count;
    uint64_t lo, hi;
    fca_get(p, s, &lo, &hi);
    bucket_span(lo, hi, i, &start, &count);
    for (unsigned j = start; j < start + count; j++) {
        if (slot_get(p, s, j) == fp) {
            slot_remove(p, s, i, j);
            return true;
        }
    }
    return false;
}

/* One copy from b1, or from b2 when b1's OTA bit says it may be there. */
static amq_status remove_hash(amq__obj *o, uint64_t h) {
    amq_morton *f = (amq_morton *)o;
    const mf_shape *s = f->s;
    uint32_t fp = fp_of(s, h);
    uint64_t b1 = bucket1(f, h);
    const uint8_t *p = block_at(f, b1 / s->buckets);
    unsigned i1 = (unsigned)(b1 % s->buckets);
    if (!take(f, b1, fp) && !(ota_get(p, s, ota_index(s, i1, fp)) &&
                              take(f, alt_bucket(f, b1, fp), fp)))
        return AMQ_ERR_NOT_FOUND;
    f->o.items--;
    return AMQ_OK;
}

/* ---- the mathematics ---------------------------------------------------- */

static double bound_for(const mf_shape *s, uint64_t blocks, double items) {
    double p =
        2.0 * amq__mulshift_top(blocks * s->buckets) * ldexp(1.0, -(int)s->r);
    return items <= 0 ? 0.0 : -expm1(items * log1p(-p));
}

/* Blocks for capacity keys at the design load (with the cuckoo filter's
 * margin for small tables), and for the bound to meet fpr. */
static uint64_t blocks_for(const mf_shape *s, uint64_t capacity, double fpr) {
    double n = (double)capacity;
    double slots = n / AMQ_MORTON_LOAD + 1.5 * sqrt(n) + 8.0;
    double want = ceil(slots / s->slots);
    double p = 2.0 * ldexp(1.0, -(int)s->r) / s->buckets;
    double by_rate = ceil(n * p / -log1p(-fpr));
    double b = fmax(1.0, fmax(want, by_rate));
    if (b * s->buckets > (double)MAX_BUCKETS)
        return 0;
    uint64_t nb = (uint64_t)b;
    while ((nb + 1) * s->buckets <= MAX_BUCKETS && bound_for(s, nb, n) > fpr)
        nb++;
    return nb;
}

/* ---- construction ------------------------------------------------------- */

static amq_status mf_alloc(const mf_shape *s, uint64_t blocks, unsigned kicks,
                           const amq_options *opt, const uint8_t *view,
                           amq_morton **out) {
    amq_morton *f;
    size_t bytes;
    void *wr = NULL;
    if (blocks == 0 || kicks > AMQ_MORTON_MAX_KICKS)
        return AMQ_ERR_INVALID;
    if (blocks * s->buckets > MAX_BUCKETS ||
        !amq__mul((size_t)blocks, LINE, &bytes))
        return AMQ_ERR_OVERFLOW;
    AMQ_RETURN_IF_ERR(amq__obj_new(sizeof *f, opt, (void **)&f));
    f->s = s;
    f->nblocks = blocks;
    f->nbuckets = blocks * s->buckets;
    f->max_kicks = kicks;
    amq_status st = amq__obj_table(&f->o, bytes, view, &wr);
    if (st != AMQ_OK) {
        amq__obj_free(&f->o);
        return st;
    }
    f->wr = wr;
    f->rd = f->o.table;
    choose(f, opt != NULL && (opt->flags & AMQ_OPT_SCALAR));
    *out = f;
    return AMQ_OK;
}

static const mf_shape *shape_for(uint64_t capacity, double fpr,
                                 uint64_t *blocks) {
    uint64_t b8 = blocks_for(&SHAPE8, capacity, fpr);
    uint64_t b16 = blocks_for(&SHAPE16, capacity, fpr);
    bool use8 = b8 != 0 && (b16 == 0 || b8 <= b16);
    *blocks = use8 ? b8 : b16;
    return use8 ? &SHAPE8 : &SHAPE16;
}

/* The undo log (if a walk allocated it), then the object and its table. */
static void destroy(amq__obj *o) {
    amq_morton *f = (amq_morton *)o;
    if (f->log != NULL)
        amq__free(&o->mem, f->log,
                  (2 * (size_t)f->max_kicks + 2) * sizeof *f->log);
    amq__obj_free(o);
}

uint64_t amq_morton_blocks(const amq_morton *f) { return f->nblocks; }
unsigned amq_morton_fp_bits(const amq_morton *f) { return f->s->r; }
double amq_morton_load(const amq_morton *f) {
    return (double)f->o.items / ((double)f->nblocks * f->s->slots);
}
double amq_morton_ota_share(const amq_morton *f) {
    return (double)f->ota_set / ((double)f->nblocks * f->s->ota_bits);
}

/* ---- the generic interface ---------------------------------------------- */

static double fpr_bound(const amq__obj *o) {
    const amq_morton *f = (const amq_morton *)o;
    return bound_for(f->s, f->nblocks, (double)o->items);
}

static amq_status t_create(const amq__type *self, amq__spec *spec,
                           uint64_t capacity, double fpr,
                           const amq_options *opt, amq__obj **out,
                           amq_diag *diag) {
    uint64_t r = 0, blocks = 0, kicks = AMQ_MORTON_DEFAULT_KICKS;
    bool has_r, has_b;
    amq_morton *f;
    (void)self;
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "fp", 8, 16, &r, &has_r, diag));
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "blocks", 1, MAX_BUCKETS / 32,
                                    &blocks, &has_b, diag));
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "max_kicks", 0, AMQ_MORTON_MAX_KICKS,
                                    &kicks, NULL, diag));
    const mf_shape *s = has_r ? shape_of((unsigned)r) : &SHAPE8;
    if (s == NULL)
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "morton: fp=%llu; fingerprints are 8 or 16 bits",
                         (unsigned long long)r);
    if (!has_b) {
        if (capacity == 0)
            return amq__diag(diag, AMQ_ERR_SPEC, 0,
                             "morton needs a capacity and fpr, or blocks=N");
        if (has_r)
            blocks = blocks_for(s, capacity, fpr);
        else
            s = shape_for(capacity, fpr, &blocks);
        if (blocks == 0)
            return amq__diag(diag, AMQ_ERR_OVERFLOW, 0,
                             "morton: %llu keys at fpr %g need 2^31 buckets "
                             "or more",
                             (unsigned long long)capacity, fpr);
    }
    AMQ_RETURN_IF_ERR(mf_alloc(s, blocks, (unsigned)kicks, opt, NULL, &f));
    *out = &f->o;
    return AMQ_OK;
}

static size_t t_describe(const amq__obj *o, char *buf, size_t cap) {
    const amq_morton *f = (const amq_morton *)o;
    return amq__describe(buf, cap, "fp=%u,blocks=%llu,max_kicks=%u", f->s->r,
                         (unsigned long long)f->nblocks, f->max_kicks);
}

/* bits per key <-> fpr. The family: real R at the design load, the
 * counters' and OTA's 3.13 bits per slot (R = 8's layout), b1's bucket
 * plus b2's for the measured share of keys that read it (AMQ_MORTON_B2_*):
 * bits = (R + 3.13) / load, fpr = (1 + B2) (S / BK) load 2^-R. With fp=:
 * that layout at the load the bits give. */
#define CURVE_META (144.0 / 46.0)

static double shape_fpr(const mf_shape *s, double bits) {
    double per_slot = 8.0 * LINE / s->slots;
    double load = fmin(1.0, per_slot / bits);
    return fmin(1.0, (1.0 + s->b2) * load * s->slots / s->buckets *
                         ldexp(1.0, -(int)s->r));
}

static double shape_bits(const mf_shape *s, double fpr) {
    double per_slot = 8.0 * LINE / s->slots;
    double at_full =
        (1.0 + s->b2) * s->slots / s->buckets * ldexp(1.0, -(int)s->r);
    return per_slot * fmax(1.0, at_full / fpr);
}

static amq_status t_curve(const amq__type *self, amq__spec *spec, double x,
                          bool inverse, double *out, amq_diag *diag) {
    uint64_t r = 0, blocks, kicks;
    bool has_r;
    (void)self;
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "fp", 8, 16, &r, &has_r, diag));
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "blocks", 1, MAX_BUCKETS / 32,
                                    &blocks, NULL, diag));
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "max_kicks", 0, AMQ_MORTON_MAX_KICKS,
                                    &kicks, NULL, diag));
    const mf_shape *s = has_r ? shape_of((unsigned)r) : NULL;
    if (has_r && s == NULL)
        return amq__diag(diag, AMQ_ERR_SPEC, 0, "morton: fp is 8 or 16");
    if (s != NULL) {
        *out = inverse ? shape_bits(s, x) : shape_fpr(s, x);
        return AMQ_OK;
    }
    double k = (1.0 + AMQ_MORTON_B2_8) * AMQ_MORTON_LOAD * 46.0 / 64.0;
    *out = inverse ? (log2(k / x) + CURVE_META) / AMQ_MORTON_LOAD
                   : fmin(1.0, k * exp2(CURVE_META - AMQ_MORTON_LOAD * x));
    return AMQ_OK;
}

/* params: blocks u64 | items u64 | fp bits u32 | max_kicks u32 */
static void t_params_write(const amq__obj *o, amq__wr *w) {
    const amq_morton *f = (const amq_morton *)o;
    amq__wr_u64(w, f->nblocks);
    amq__wr_u64(w, o->items);
    amq__wr_u32(w, f->s->r);
    amq__wr_u32(w, f->max_kicks);
}

/* Counters within the block, slots past them 0: false at the first block
 * that breaks this (*bad); else the sums in *total, OTA bits in *ota. */
static bool blocks_ok(const mf_shape *s, const uint8_t *p, uint64_t blocks,
                      uint64_t *bad, uint64_t *total, uint64_t *ota) {
    *total = *ota = 0;
    for (uint64_t b = 0; b < blocks; b++, p += LINE) {
        unsigned fill = block_fill(p, s);
        for (unsigned i = fill; i < s->slots && fill <= s->slots; i++)
            if (slot_get(p, s, i) != 0)
                fill = s->slots + 1;
        if (fill > s->slots) {
            *bad = b;
            return false;
        }
        *total += fill;
        for (unsigned i = 0; i < s->ota_bits; i++)
            *ota += ota_get(p, s, i);
    }
    return true;
}

static amq_status t_load(const amq__type *self, amq__rd *r,
                         const uint8_t *payload, size_t len, bool view,
                         const amq_options *opt, amq__obj **out) {
    uint64_t blocks, items, bad, total, ota;
    uint32_t fbits, kicks;
    amq_morton *f;
    (void)self;
    AMQ_RETURN_IF_ERR(amq__rd_expect(r, 24));
    size_t at_blocks = amq__rd_u64(r, &blocks);
    size_t at_items = amq__rd_u64(r, &items);
    size_t at_fp = amq__rd_u32(r, &fbits);
    size_t at_kicks = amq__rd_u32(r, &kicks);
    const mf_shape *s = shape_of(fbits);
    if (s == NULL)
        return amq__rd_bad(r, at_fp, "fingerprint bits %u (8 or 16)", fbits);
    if (kicks > AMQ_MORTON_MAX_KICKS)
        return amq__rd_bad(r, at_kicks, "max_kicks %u", kicks);
    if (blocks == 0 || blocks > MAX_BUCKETS / s->buckets || len % LINE != 0 ||
        len / LINE != blocks)
        return amq__rd_bad(r, at_blocks, "%llu blocks in %zu payload bytes",
                           (unsigned long long)blocks, len);
    if (!blocks_ok(s, payload, blocks, &bad, &total, &ota))
        return amq__rd_bad(r, r->payload_at + (size_t)bad * LINE,
                           "block %llu: counters past %u slots, or a "
                           "nonzero empty slot",
                           (unsigned long long)bad, s->slots);
    if (total != items)
        return amq__rd_bad(r, at_items, "%llu items, the blocks hold %llu",
                           (unsigned long long)items,
                           (unsigned long long)total);
    AMQ_RETURN_IF_ERR(
        mf_alloc(s, blocks, kicks, opt, view ? payload : NULL, &f));
    if (!view)
        memcpy(f->wr, payload, len);
    f->o.items = items;
    f->ota_set = ota;
    *out = &f->o;
    return AMQ_OK;
}

/* Shapes beside the defaults that reach the other kernels (test_kernels):
 * 16-bit fingerprints; full tables of a few blocks. */
static const char *const kernel_shapes[] = {"morton:fp=16", "morton:blocks=2",
                                            "morton:fp=16,blocks=3", NULL};

const amq__type amq__type_morton = {
    .info = {.name = "morton",
             .type_id = AMQ__ID_morton,
             .caps = AMQ_CAP_REMOVE,
             .summary = "Morton filter: a compressed cuckoo filter, 64-byte "
                        "blocks of 64 (32) buckets sharing 46 (26) slots, "
                        "overflow tracking (Breslow, Jayasena 2018)",
             .params = "fp=8|16 (fingerprint bits; default: the smaller "
                       "table meeting fpr), blocks=N (64-byte blocks, "
                       "instead of capacity), max_kicks=N (evictions per "
                       "insert, default 256)",
             .default_hash = AMQ_HASH_XXH3},
    .reads = 2,
    .reads_text = "1-2",
    .kernel_shapes = kernel_shapes,
    .create = t_create,
    .load = t_load,
    .destroy = destroy,
    .add = add_hash,
    .add_batch = add_batch,
    .contains = contains_ref,
    .contains_batch = contains_batch,
    .remove = remove_hash,
    .fpr_bound = fpr_bound,
    .describe = t_describe,
    .curve = t_curve,
    .params_write = t_params_write,
};
