/*
 * amq/query.h — one-key queries compiled into the caller's loop.
 *
 * amq_filter_contains_hash, like every library entry point, is a call: the
 * caller's loop jumps into the library, the library jumps to the kernel
 * chosen for the filter's shape, and back. In cache that costs a few
 * nanoseconds. Far beyond cache it costs more than it seems: a loop of
 * one-key queries runs at the speed of the cache misses the core keeps in
 * flight, and the instructions and branches of the call take room in the
 * core's windows that later queries' reads would otherwise use. On the
 * development machine, around a three-line query, that is about two
 * random memory reads per key (docs/bench.md, "Where the time goes").
 *
 * A query object removes it. The library copies the few numbers a query
 * needs out of a filter (amq_*_query_of); a static inline function here
 * reads them, so the compiler places the whole query in the caller's loop,
 * with the numbers in registers. It answers exactly as the filter's own
 * query does (the library's kernel for that shape is this same function),
 * because what it computes is the file format's: the mixer and the
 * multipliers below are part of the frame and never change within a
 * format version.
 *
 * Lifetime: a query object borrows the filter's table. It is valid while
 * the filter lives; static filters never change, so it never goes stale.
 * It is a plain value: copy it, share it between threads.
 *
 * Needs a compiler with a 64 x 64 -> 128-bit multiply (GCC, Clang: every
 * target amq builds on has one).
 */
#ifndef AMQ_QUERY_H
#define AMQ_QUERY_H

#include <stdbool.h>
#include <stdint.h>

#include <string.h>

#include "amq/cuckoo.h"
#include "amq/filter.h"
#include "amq/mix.h"
#include "amq/static.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- binary fuse filters ------------------------------------------------ */

/* Binary fuse filters: a key's mixed hash x = mix64(h + seed) picks its
 * start segment reduce64(x, S) and, in each of the next `ways` segments of
 * 2^lg slots, the slot (x M_i) >> (64 - lg); its fingerprint is the top w
 * bits of x M_fp. The multipliers are odd constants (from splitmix64).
 * That is mapping 0. Mapping 1 (3-way filters built now): slot
 * p0 = reduce64(x, S 2^lg), its start segment's and the offset in it at
 * once, then p1 = (p0 + 2^lg) xor ((x >> 18) mod 2^lg) and
 * p2 = (p0 + 2 2^lg) xor (x mod 2^lg): the offsets in the next segments
 * are bits of x below those that place p0 (lg <= 18), as in Graf and
 * Lemire's binary fuse filters; the same fingerprint. */
#define AMQ__FUSE_MUL0 0x9e3779b97f4a7c15ULL
#define AMQ__FUSE_MUL1 0xc2b2ae3d27d4eb4fULL
#define AMQ__FUSE_MUL2 0x165667b19e3779f9ULL
#define AMQ__FUSE_MUL3 0xd6e8feb86659fd93ULL
#define AMQ__FUSE_MULFP 0xa0761d6478bd642fULL

/* Slot i of a table of `width`-bit slots (8, 16, 32; little-endian, as
 * the formats are: amq builds only for little-endian targets). */
static inline uint32_t amq__fuse_get(const uint8_t *t, unsigned width,
                                     size_t i) {
    uint16_t v16;
    uint32_t v32;
    switch (width) {
    case 8: return t[i];
    case 16: memcpy(&v16, t + 2 * i, 2); return v16;
    default: memcpy(&v32, t + 4 * i, 4); return v32;
    }
}

/* The query of a segmented table (segments of 2^lg slots, shift =
 * 64 - lg, seg_len = 2^lg): straight-line code, `width` and `ways`
 * constants at every call site. */
static inline __attribute__((always_inline)) bool amq__fuse_probe(
    const uint8_t *t, uint64_t seed, uint64_t seg_count, unsigned shift,
    uint64_t seg_len, uint64_t h, unsigned width, unsigned ways) {
    uint64_t x = amq_mix64(h + seed);
    uint64_t first = amq_reduce64(x, seg_count) << (64 - shift);
    uint32_t v = (uint32_t)((x * AMQ__FUSE_MULFP) >> (64 - width));
    v ^= amq__fuse_get(t, width,
                       (uint32_t)(first + ((x * AMQ__FUSE_MUL0) >> shift)));
    v ^= amq__fuse_get(
        t, width,
        (uint32_t)(first + seg_len + ((x * AMQ__FUSE_MUL1) >> shift)));
    v ^= amq__fuse_get(
        t, width,
        (uint32_t)(first + 2 * seg_len + ((x * AMQ__FUSE_MUL2) >> shift)));
    if (ways == 4)
        v ^= amq__fuse_get(
            t, width,
            (uint32_t)(first + 3 * seg_len + ((x * AMQ__FUSE_MUL3) >> shift)));
    return v == 0;
}

/* Mapping 1's three slots (segments of 2^lg slots, shift = 64 - lg). */
static inline __attribute__((always_inline)) void amq__fuse_slots3(
    uint64_t x, uint64_t seg_count, unsigned shift, uint64_t seg_len,
    uint32_t p[3]) {
    uint64_t p0 = amq_reduce64(x, seg_count << (64 - shift));
    uint64_t mask = seg_len - 1;
    p[0] = (uint32_t)p0;
    p[1] = (uint32_t)((p0 + seg_len) ^ ((x >> 18) & mask));
    p[2] = (uint32_t)((p0 + 2 * seg_len) ^ (x & mask));
}

/* The query of a 3-way table of mapping 1: straight-line code, `width` a
 * constant at every call site. */
static inline __attribute__((always_inline)) bool amq__fuse_probe3s(
    const uint8_t *t, uint64_t seed, uint64_t seg_count, unsigned shift,
    uint64_t seg_len, uint64_t h, unsigned width) {
    uint64_t x = amq_mix64(h + seed);
    uint32_t p[3];
    amq__fuse_slots3(x, seg_count, shift, seg_len, p);
    uint32_t v = (uint32_t)((x * AMQ__FUSE_MULFP) >> (64 - width));
    v ^= amq__fuse_get(t, width, p[0]);
    v ^= amq__fuse_get(t, width, p[1]);
    v ^= amq__fuse_get(t, width, p[2]);
    return v == 0;
}

/* ---- 3-way binary fuse filters with 8-bit fingerprints ------------------ */

typedef struct amq_fuse8_query {
    const uint8_t *slots; /* the filter's table (borrowed)            */
    uint64_t seed;
    uint64_t seg_count; /* start segments                           */
    uint64_t seg_len;   /* slots per segment, 2^lg                  */
    uint32_t shift;     /* 64 - lg                                  */
    uint32_t reserved;  /* 0                                        */
} amq_fuse8_query;

/* Fills *q for f, the structure of a filter of type "fuse8"
 * (amq_xor_of). Errors: AMQ_ERR_INVALID (NULL arguments),
 * AMQ_ERR_UNSUPPORTED (any other width or ways, an xor filter, an empty
 * filter, a small one grown to a segment length that is not a power of
 * two, or one of slot mapping 0, loaded from a frame saved before mapping
 * 1; for those, amq_filter_contains_hash, or build the filter again). *q
 * is unchanged on error. */
AMQ_API amq_status amq_fuse8_query_of(const amq_xor *f, amq_fuse8_query *q);

/* The same for a generic filter of type "fuse8" (built, loaded or a view;
 * a view's query borrows the caller's buffer as the view does).
 * Errors: AMQ_ERR_INVALID (NULL), AMQ_ERR_UNSUPPORTED (another type or
 * shape, as above; a generic filter's keys are hashed by its hasher, so
 * pass amq_filter_hash(f, key, len) or the hashes given to the build). */
AMQ_API amq_status amq_filter_fuse8_query(const amq_filter *f,
                                          amq_fuse8_query *q);

/* Exactly amq_filter_contains_hash(f, h) for the f that q was made from
 * (slot mapping 1: one mapping, so no branch per key; compilers do not
 * hoist a branch on the mapping out of the caller's loop). */
static inline bool amq_fuse8_query_contains(const amq_fuse8_query *q,
                                            uint64_t h) {
    return amq__fuse_probe3s(q->slots, q->seed, q->seg_count, q->shift,
                             q->seg_len, h, 8);
}

/* ---- cuckoo and vacuum filters (one table, fingerprints of <= 16 bits) -- */

/* A key's fingerprint fp = 1 + reduce32(h mod 2^32, 2^f - 1) and bucket
 * b1 = reduce32(h >> 32, m); its other bucket b2 = (A - b1) mod m (sum
 * form) or b1 xor A (xor form), A read from the filter's alternate table
 * (one entry per fingerprint). A bucket is 4 f-bit slots at bit 4 f b of
 * the table: one unaligned 64-bit load from the byte holding its first
 * bit, and a zero-lane test of bucket xor fp x lanes. The load may read
 * up to 7 bytes past the table's end; they are always there (the library
 * allocates a table 8 bytes longer than its buckets, and a view's table
 * is followed in its frame by the frame's checksum), so no clamp waits
 * on the address. */
typedef struct amq_cuckoo_query {
    const uint8_t *table; /* the bucket table (borrowed)             */
    const uint32_t *alt;  /* A per fingerprint (borrowed)            */
    uint64_t lanes;       /* bit 0 of each of the 4 slots            */
    uint64_t lanes_hi;    /* bit f - 1 of each                       */
    uint32_t buckets;     /* m                                       */
    uint32_t fp_values;   /* 2^f - 1                                 */
    uint32_t bucket_bits; /* 4 f                                     */
    uint32_t xor_form;    /* 1: b1 xor A; 0: (A - b1) mod m          */
} amq_cuckoo_query;

/* Fills *q for f (amq_cuckoo_of): a cuckoo or vacuum filter of one table
 * that cannot grow (made without growth: not "cuckoo:grow=1"),
 * fingerprints of at most 16 bits, big enough to carry its alternate
 * table (at least 64 x 2^(f + 2) bytes: 1 MiB at f = 12, where the table
 * outgrows the caches and a call's cost shows), made without
 * AMQ_OPT_SCALAR. Errors:
 * AMQ_ERR_INVALID (NULL arguments), AMQ_ERR_UNSUPPORTED (any other
 * filter: use amq_filter_contains_hash). *q is unchanged on error. The
 * object reads the live table, so it answers as the filter does after
 * every add and remove (with the filter's own rules for threads: queries
 * concurrent with adds need the caller's lock); valid until the filter is
 * freed or allowed to grow (amq_cuckoo_set_growth with max_links > 1). */
AMQ_API amq_status amq_cuckoo_query_of(const amq_cuckoo *f,
                                       amq_cuckoo_query *q);
/* The same for a generic filter of type "cuckoo" or "vacuum". */
AMQ_API amq_status amq_filter_cuckoo_query(const amq_filter *f,
                                           amq_cuckoo_query *q);

/* Bucket b's bits in the low bits of one unaligned 64-bit load from the
 * byte holding its first bit (the table is followed by at least 8
 * readable bytes, see above). Bits above the bucket are a neighbour's;
 * the zero-lane test never looks at them (a borrow only travels upwards).
 * With f even (4 f a whole number of bytes) the shift is 0. */
static inline uint64_t amq__cuckoo_word(const uint8_t *table,
                                        uint32_t bucket_bits, uint32_t b) {
    uint64_t pos = (uint64_t)b * bucket_bits, w;
    memcpy(&w, table + (pos >> 3), 8); /* little-endian hosts */
    return w >> (pos & 7);
}

/* How a probe finds a bucket, a constant at every call site: */
enum {
    AMQ__CK_BITS = 0, /* f from q, any: bit offset 4 f b, a load, a shift  */
    AMQ__CK_BYTES = 1 /* f from q, even: byte offset (f / 2) b, no shift    */
    /* f >= 4 (even): that width, a constant: the byte offset one LEA and
     * the fingerprint's range folded into the code (the library's kernels
     * of the common widths) */
};

/* 1 in the low bit of each of a bucket's 4 f-bit slots. */
#define AMQ__CUCKOO_LANES(f)                                                   \
    (UINT64_C(1) | UINT64_C(1) << (f) | UINT64_C(1) << 2 * (f) |               \
     UINT64_C(1) << 3 * (f))

/* The query; `xor_form` (1: b1 xor A, 0: the sum form) and `how` (above)
 * constants at every call site. The lanes are constants only while they
 * fit a multiply's 32-bit immediate (f <= 10); wider ones come from q,
 * since a 64-bit constant's product with fp became a chain of shifts and
 * adds. */
static inline __attribute__((always_inline)) bool amq__cuckoo_probe(
    const amq_cuckoo_query *q, uint64_t h, int xor_form, unsigned how) {
    uint32_t fp_values = how >= 4 ? (1u << how) - 1 : q->fp_values;
    bool fold = how >= 4 && how <= 10;
    uint64_t lo = fold ? AMQ__CUCKOO_LANES(how) : q->lanes, x, y;
    uint64_t hi = fold ? lo << (fold ? how - 1 : 0) : q->lanes_hi;
    uint32_t fp = (uint32_t)(((uint64_t)(uint32_t)h * fp_values) >> 32) + 1;
    uint32_t b1 = (uint32_t)(((h >> 32) * q->buckets) >> 32);
    uint32_t a = q->alt[fp];
    uint32_t b2 = xor_form ? b1 ^ a : a >= b1 ? a - b1 : a - b1 + q->buckets;
    if (how == AMQ__CK_BITS) {
        x = amq__cuckoo_word(q->table, q->bucket_bits, b1);
        y = amq__cuckoo_word(q->table, q->bucket_bits, b2);
    } else {
        uint64_t bytes = how >= 4 ? how / 2 : q->bucket_bits / 8;
        memcpy(&x, q->table + b1 * bytes, 8); /* little-endian hosts */
        memcpy(&y, q->table + b2 * bytes, 8);
    }
    uint64_t pat = fp * lo;
    x ^= pat;
    y ^= pat;
    return ((((x - lo) & ~x) | ((y - lo) & ~y)) & hi) != 0;
}

/* Exactly amq_filter_contains_hash(f, h) for the f that q was made from:
 * both buckets' loads depend on h only, and the branches are on the
 * table's form and on whether f is even, the same for every key (so
 * predicted, and in a loop compilers hoist them; selecting the form by
 * masks instead is slower: two more registers live across the loop). */
static inline bool amq_cuckoo_query_contains(const amq_cuckoo_query *q,
                                             uint64_t h) {
    if (q->bucket_bits % 8 != 0)
        return q->xor_form ? amq__cuckoo_probe(q, h, 1, AMQ__CK_BITS)
                           : amq__cuckoo_probe(q, h, 0, AMQ__CK_BITS);
    return q->xor_form ? amq__cuckoo_probe(q, h, 1, AMQ__CK_BYTES)
                       : amq__cuckoo_probe(q, h, 0, AMQ__CK_BYTES);
}

#ifdef __cplusplus
}
#endif

#endif
