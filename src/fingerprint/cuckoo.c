/*
 * cuckoo.c — the cuckoo filter (Fan, Andersen, Kaminsky, Mitzenmacher,
 * CoNEXT 2014), the bucket table it shares with the vacuum filter (vacuum.c,
 * which only picks other table sizes and alternate ranges), and the chain
 * of tables a growing filter keeps.
 *
 * A key's 64-bit hash h gives an f-bit fingerprint and two buckets:
 *
 *   h:  [ high 32 bits ──► i1 = reduce(h >> 32, m) ][ low 32 ──► fp ]
 *       fp = 1 + reduce(h mod 2^32, 2^f - 1)        (0 marks an empty slot)
 *       i2 = alt(i1, fp):
 *         xor form  i1 xor (1 + reduce(mix(fp) >> 32, L - 1))   m = 2^k
 *         sum form  (H - i1) mod m,                            m even
 *                   H = 2 reduce(mix(fp) >> 32, m / 2) + 1
 *
 *   words (64-bit, little-endian), f = 12: bucket b = slots 4b .. 4b+3
 *   +------------+------------+------------+------------+------------+--
 *   | b0 s0      | b0 s1      | b0 s2      | b0 s3      | b1 s0      | ..
 *   +------------+------------+------------+------------+------------+--
 *   bit 0        12           24           36           48   (64: next word)
 *
 * Because i2 depends on i1 and the fingerprint only (partial-key cuckoo
 * hashing), a resident fingerprint can be moved to its other bucket without
 * knowing its key. Both forms of alt are involutions without a fixed point,
 * so every key has two distinct buckets. The xor form needs a power-of-two
 * range (the whole table for a cuckoo filter, a chunk for a vacuum filter);
 * the sum form (i1 + i2 ≡ H mod m) works for any even m, which is what
 * lets a cuckoo table be sized to its capacity instead of to the next power
 * of two. H is odd and m even, so i1 and i2 have opposite parities and
 * never coincide (an odd m cannot have a fixed-point-free involution at
 * all, hence even tables). The reduction is a multiply-shift and the mod a
 * conditional add: no division on any path. Power-of-two tables keep the
 * xor form, so frames written before the sum form existed keep their
 * meaning.
 *
 * Insert: an empty slot in i1, else in i2, else a random walk: at each
 * full bucket first look one move ahead (does a resident's own alternate
 * bucket have an empty slot? then move it there and take its slot — the
 * four alternates are prefetched together, so this costs about one miss
 * and finishes a walk at high load about three times sooner than the plain
 * walk), else evict a slot's fingerprint, carry it to its alternate bucket
 * and repeat, up to max_kicks times. The walk is a deterministic function
 * of (h, step, bucket), every step is a swap whose inverse is known (the
 * previous bucket is alt(current bucket, carried fingerprint)), and a
 * lookahead that fails changes nothing, so a walk that fails is undone
 * step by step without recording it: AMQ_ERR_FULL leaves the table
 * bit-for-bit as it was and no victim is ever lost.
 * Duplicates are stored as copies, so a key can be held at most 8 times
 * (two buckets of four) per table; the ninth add fails with AMQ_ERR_FULL.
 *
 * Growth (optional, max_links > 1): the chain
 *
 *   table 0: m0 buckets, f bits       (full)
 *   table 1: 2 m0 buckets, f + 1 bits (full)
 *   table 2: 4 m0 buckets, f + 2 bits <- adds go here
 *
 * An add goes to the newest table; when that table refuses it (and not
 * because the key already holds all 8 slots of its buckets there), a table
 * of twice the buckets (the type's shape for that size) and one more
 * fingerprint bit (at most 32) is appended and takes the key. A query asks
 * every table; count sums them; remove takes a copy from the newest table
 * whose buckets hold the fingerprint. The cap (max_links tables, max_bytes
 * of tables) makes the add fail with AMQ_ERR_FULL, the filter unchanged.
 *
 * Invariants: per table m in [2, 2^31]; 4 <= f <= 32; ranges as in
 * cuckoo_table.h; `items` equals the number of non-zero slots (checked on
 * load); the bits after the last slot are zero. Table i + 1 is exactly the
 * type's shape for twice table i's buckets, at min(f_i + 1, 32) bits.
 *
 * False positives: table i holding n_i fingerprints reports an absent key
 * with probability at most b_i = 1 - (1 - q_i p2_i)^(n_i), q =
 * ceil(2^32/(2^f-1))/2^32 and p2 = 2 ceil(2^32/m)/2^32 (~ 8 α 2^-f at load
 * α, whatever the placement and the form of alt), and a chain at most
 * 1 - Π (1 - b_i), the certified bound; one more bit per table keeps it
 * below about 2 b_0 however far the chain grows. Derivation:
 * docs/structures.md §"Cuckoo family", Guarantee and fpr_bound().
 *
 * Bucket compare: a bucket is 4f <= 128 bits; f <= 16 reads it as one
 * 64-bit word, f > 16 as two, and tests all lanes for the fingerprint with
 * the zero-lane trick ((x - lo) & ~x & hi) on x = word ^ (fp * lo). The
 * scalar per-slot loop is the reference (AMQ_OPT_SCALAR), and f = 8, 16
 * get their own instance of the same inline code with f a constant. The
 * one-table query kernels (f <= 16) read a bucket by one 8-byte load from
 * its first byte, which may reach 7 bytes past the table: see table_init
 * for why those bytes are always there; with the alternate table, f = 8,
 * 10, 12 and 16 have kernels with the width a constant.
 *
 * Failure modes: construction fails cleanly (bad arguments, overflow,
 * allocation); add returns AMQ_ERR_FULL (or AMQ_ERR_NOMEM when a new table
 * cannot be allocated) with the filter unchanged; removing a key that was
 * never added may remove another key's copy, and in a chain so may, rarely,
 * removing a held key (see the header).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/bits.h"
#include "fingerprint/cuckoo_table.h"

#define SLOTS AMQ_CUCKOO_SLOTS
#define BATCH 16
#define LINK_LEN 40  /* one table's parameters                          */
#define CHAIN_LEN 16 /* nlinks u32 | max_links u32 | max_bytes u64       */

/* ---- the mathematics ---------------------------------------------------- */

/* Largest probability of one fingerprint value: reduce32 onto 2^f - 1
 * values gives each ceil or floor of 2^32 / (2^f - 1) of the 2^32 inputs. */
static double fp_match_prob(unsigned f) {
    uint64_t vals = (UINT64_C(1) << f) - 1;
    uint64_t most = ((UINT64_C(1) << 32) + vals - 1) / vals;
    return ldexp((double)most, -32);
}

/* Largest probability that i1 lands on a given pair of buckets. */
static double pair_prob(uint64_t m) {
    uint64_t most = ((UINT64_C(1) << 32) + m - 1) / m;
    return 2.0 * ldexp((double)most, -32);
}

unsigned amq_cuckoo_fp_bits_for(double fpr) {
    if (!(fpr > 0.0 && fpr < 1.0))
        return 0;
    double f = ceil(log2(2.0 * SLOTS / fpr));
    if (f > AMQ_CUCKOO_MAX_FP)
        return 0;
    return f < AMQ_CUCKOO_MIN_FP ? AMQ_CUCKOO_MIN_FP : (unsigned)f;
}

double amq_cuckoo_fpr(double load, unsigned fp_bits) {
    if (fp_bits < AMQ_CUCKOO_MIN_FP || fp_bits > AMQ_CUCKOO_MAX_FP ||
        !(load > 0.0))
        return 0.0;
    return -expm1(-2.0 * SLOTS * load * fp_match_prob(fp_bits));
}

/* ---- bit-packed slots ---------------------------------------------------- */

#define INLINE static inline __attribute__((always_inline))

/* width <= 64 bits at bit pos; the field lies inside the table. Words are
 * read through memcpy (amq__get_u64) so load can validate a payload that is
 * not 8-byte aligned; on x86-64 this is the same single load. */
INLINE uint64_t get_bits(const void *table, uint64_t pos, unsigned width) {
    const uint8_t *bytes = table;
    uint64_t w = pos >> 6;
    unsigned off = (unsigned)(pos & 63);
    uint64_t v = amq__get_u64(bytes + 8 * w) >> off;
    if (off + width > 64)
        v |= amq__get_u64(bytes + 8 * (w + 1)) << (64 - off);
    return width == 64 ? v : v & ((UINT64_C(1) << width) - 1);
}

INLINE void put_bits(uint64_t *wr, uint64_t pos, unsigned width, uint64_t v) {
    uint64_t w = pos >> 6, mask = (UINT64_C(1) << width) - 1;
    unsigned off = (unsigned)(pos & 63);
    wr[w] = (wr[w] & ~(mask << off)) | (v << off);
    if (off + width > 64) {
        unsigned hi = 64 - off;
        wr[w + 1] = (wr[w + 1] & ~(mask >> hi)) | (v >> hi);
    }
}

INLINE uint64_t slot_pos(uint32_t b, unsigned s, unsigned f) {
    return ((uint64_t)b * SLOTS + s) * f;
}

INLINE uint32_t get_slot(const amq__ctab *t, uint32_t b, unsigned s) {
    return (uint32_t)get_bits(t->rd, slot_pos(b, s, t->fbits), t->fbits);
}

INLINE void put_slot(amq__ctab *t, uint32_t b, unsigned s, uint32_t v) {
    put_bits(t->wr, slot_pos(b, s, t->fbits), t->fbits, v);
}

/* ---- a key's fingerprint and buckets ------------------------------------ */

INLINE uint32_t fingerprint(uint64_t h, unsigned f) {
    uint32_t values = (uint32_t)((UINT64_C(1) << f) - 1);
    return amq__reduce32((uint32_t)h, values) + 1;
}

INLINE uint32_t bucket1(const amq__ctab *t, uint64_t h) {
    return amq__reduce32((uint32_t)(h >> 32), t->buckets);
}

/* The two forms of cuckoo_table.h. In the sum form H is odd and below m,
 * b below m: H - b lies in (-m, m) and one conditional add brings it back
 * (the branch is on data, compilers emit a select). */
INLINE uint32_t alt_bucket(const amq__ctab *t, uint32_t b, uint32_t fp) {
    uint64_t x = amq__mix64(fp);
    if (t->half != 0) {
        uint32_t H = 2 * amq__reduce32((uint32_t)(x >> 32), t->half) + 1;
        return H >= b ? H - b : H - b + t->buckets;
    }
    uint32_t range = t->range[x & 3];
    return b ^ (1 + amq__reduce32((uint32_t)(x >> 32), range - 1));
}

typedef struct key_loc {
    uint32_t fp, b1, b2;
} key_loc;

INLINE key_loc locate(const amq__ctab *t, uint64_t h, unsigned f) {
    key_loc k;
    k.fp = fingerprint(h, f);
    k.b1 = bucket1(t, h);
    k.b2 = alt_bucket(t, k.b1, k.fp);
    return k;
}

/* ---- bucket operations ---------------------------------------------------- */

/* The reference: compare slot by slot. */
static bool bucket_has_scalar(const amq__ctab *t, uint32_t b, uint32_t fp) {
    for (unsigned s = 0; s < SLOTS; s++)
        if (get_slot(t, b, s) == fp)
            return true;
    return false;
}

/* 1 in the low bit of each of `lanes` f-bit lanes. */
INLINE uint64_t lane_ones(unsigned f, unsigned lanes) {
    uint64_t lo = 1 | (UINT64_C(1) << f);
    return lanes == 4 ? lo | (lo << (2 * f)) : lo;
}

INLINE uint64_t zero_lanes(uint64_t x, uint64_t lo, unsigned f) {
    return (x - lo) & ~x & (lo << (f - 1));
}

/* All four slots at once (SWAR); f may be a constant at the call site. */
INLINE bool bucket_has(const uint64_t *rd, uint32_t b, uint32_t fp,
                       unsigned f) {
    uint64_t base = slot_pos(b, 0, f);
    if (f <= 16) {
        uint64_t lo = lane_ones(f, 4);
        return zero_lanes(get_bits(rd, base, 4 * f) ^ (fp * lo), lo, f) != 0;
    }
    uint64_t lo = lane_ones(f, 2), pat = fp * lo;
    uint64_t x = get_bits(rd, base, 2 * f) ^ pat;
    uint64_t y = get_bits(rd, base + 2 * f, 2 * f) ^ pat;
    return (zero_lanes(x, lo, f) | zero_lanes(y, lo, f)) != 0;
}

static unsigned bucket_count(const amq__ctab *t, uint32_t b, uint32_t fp) {
    unsigned n = 0;
    for (unsigned s = 0; s < SLOTS; s++)
        n += get_slot(t, b, s) == fp;
    return n;
}

/* Put fp in an empty slot of bucket b, if there is one. */
static bool place(amq__ctab *t, uint32_t b, uint32_t fp) {
    for (unsigned s = 0; s < SLOTS; s++) {
        if (get_slot(t, b, s) == 0) {
            put_slot(t, b, s, fp);
            return true;
        }
    }
    return false;
}

/* Clear one slot of b holding fp, if any. */
static bool take(amq__ctab *t, uint32_t b, uint32_t fp) {
    for (unsigned s = 0; s < SLOTS; s++) {
        if (get_slot(t, b, s) == fp) {
            put_slot(t, b, s, 0);
            return true;
        }
    }
    return false;
}

static uint32_t swap_slot(amq__ctab *t, uint32_t b, unsigned s, uint32_t fp) {
    uint32_t old = get_slot(t, b, s);
    put_slot(t, b, s, fp);
    return old;
}

/* ---- one table: insert, query, remove -------------------------------------- */

/* The slot a walk evicts at `step` in bucket b: a pure function, so the
 * walk can be replayed backwards. */
static unsigned kick_slot(uint64_t h, unsigned step, uint32_t b) {
    return (unsigned)(amq__mix64(h ^ (((uint64_t)step << 32) | b)) >> 62);
}

/* One move of lookahead: if a resident of the full bucket b has an empty
 * slot in its own alternate bucket, move it there and put fp in its
 * place. The four alternates are prefetched first so their misses
 * overlap. Changes nothing when it fails. */
static bool relocate_one(amq__ctab *t, uint32_t b, uint32_t fp) {
    uint32_t v[SLOTS], a[SLOTS];
    for (unsigned s = 0; s < SLOTS; s++) {
        v[s] = get_slot(t, b, s);
        a[s] = alt_bucket(t, b, v[s]);
        amq__prefetch(&t->rd[slot_pos(a[s], 0, t->fbits) >> 6]);
    }
    for (unsigned s = 0; s < SLOTS; s++) {
        if (place(t, a[s], v[s])) {
            put_slot(t, b, s, fp);
            return true;
        }
    }
    return false;
}

/* Random walk from bucket b carrying fp, with one move of lookahead at
 * every bucket; on failure undo every swap (a lookahead that fails
 * changes nothing, so the walk's swaps are all there is to undo). */
static amq_status kick(amq__ctab *t, unsigned max_kicks, uint64_t h, uint32_t b,
                       uint32_t fp) {
    uint32_t cur = fp;
    unsigned step;
    for (step = 0; step < max_kicks; step++) {
        if (relocate_one(t, b, cur))
            return AMQ_OK;
        cur = swap_slot(t, b, kick_slot(h, step, b), cur);
        b = alt_bucket(t, b, cur);
        if (place(t, b, cur))
            return AMQ_OK;
    }
    while (step-- > 0) {
        b = alt_bucket(t, b, cur); /* the bucket cur was evicted from */
        cur = swap_slot(t, b, kick_slot(h, step, b), cur);
    }
    return AMQ_ERR_FULL;
}

static void prefetch_bucket(const amq__ctab *t, uint32_t b) {
    uint64_t pos = slot_pos(b, 0, t->fbits);
    amq__prefetch(&t->rd[pos >> 6]);
    amq__prefetch(&t->rd[(pos + SLOTS * t->fbits - 1) >> 6]);
}

static amq_status table_add(amq__ctab *t, unsigned max_kicks, uint64_t h) {
    key_loc k = locate(t, h, t->fbits);
    amq_status st = AMQ_OK;
    prefetch_bucket(t, k.b2); /* its miss overlaps b1's */
    if (!place(t, k.b1, k.fp) && !place(t, k.b2, k.fp))
        st = kick(t, max_kicks, h, (amq__mix64(~h) & 1) ? k.b2 : k.b1, k.fp);
    if (st == AMQ_OK)
        t->items++;
    return st;
}

INLINE bool lookup(const amq__ctab *t, uint64_t h, unsigned f) {
    key_loc k = locate(t, h, f);
    return bucket_has(t->rd, k.b1, k.fp, f) || bucket_has(t->rd, k.b2, k.fp, f);
}

static bool lookup_scalar(const amq__ctab *t, uint64_t h) {
    key_loc k = locate(t, h, t->fbits);
    return bucket_has_scalar(t, k.b1, k.fp) || bucket_has_scalar(t, k.b2, k.fp);
}

INLINE bool table_contains(const amq__ctab *t, bool scalar, uint64_t h) {
    if (scalar)
        return lookup_scalar(t, h);
    switch (t->fbits) {
    case 8: return lookup(t, h, 8);
    case 16: return lookup(t, h, 16);
    default: return lookup(t, h, t->fbits);
    }
}

/* ---- the one-table query kernels ------------------------------------------ */

/* Bucket b's 4f bits (f <= 16): amq/query.h's unaligned load (no branch
 * on straddling a word, as get_bits has; it may read 7 bytes past the
 * table, which are there: see table_init). */
INLINE uint64_t bucket_word(const amq__ctab *t, uint32_t b) {
    return amq__cuckoo_word((const uint8_t *)t->rd, 4 * t->fbits, b);
}

/* The other bucket of fp, the reference way (mix of fp, then the form). */
INLINE uint32_t alt_of(const amq__ctab *t, uint32_t b1, uint32_t fp, bool sum) {
    uint64_t x = amq__mix64(fp);
    if (sum) {
        uint32_t H = 2 * amq__reduce32((uint32_t)(x >> 32), t->half) + 1;
        return H >= b1 ? H - b1 : H - b1 + t->buckets;
    }
    uint32_t range = t->range[x & 3];
    return b1 ^ (1 + amq__reduce32((uint32_t)(x >> 32), range - 1));
}

/* A one-table filter with f <= 16, without the switches and the chain
 * loop: the two buckets' loads depend only on h, and the answer is one
 * branch-free test of both. `sum`: the sum form of alt, computed here
 * (the filters too small for the alternate table; with the table the
 * kernel is amq/query.h's, below). */
INLINE bool table_probe(const amq__obj *o, uint64_t h, bool sum) {
    const amq_cuckoo *c = (const amq_cuckoo *)o;
    const amq__ctab *t = &c->base;
    uint32_t fp = amq__reduce32((uint32_t)h, t->fp_values) + 1;
    uint32_t b1 = bucket1(t, h), b2 = alt_of(t, b1, fp, sum);
    uint64_t lo = t->lanes, pat = fp * lo;
    uint64_t a = bucket_word(t, b1) ^ pat, b = bucket_word(t, b2) ^ pat;
    return (((a - lo) & ~a) | ((b - lo) & ~b)) & t->lanes_hi;
}

/* The kernels: the sum or xor form, the alternate bucket computed or read
 * from the alternate table (then the query object's kernel, c->q, the
 * form a constant); each twice, plain x86-64 and, for CPUs with BMI2
 * (chosen at run time), compiled for it: the buckets' variable shifts
 * become SHRX, with no count moved through CL. */
#if defined(__x86_64__)
#define CK_BMI2 __attribute__((target("bmi,bmi2")))
#else
#define CK_BMI2
#endif
#define CK_KERNELS(P, ATTR)                                                    \
    ATTR static bool P##sum(const amq__obj *o, uint64_t h) {                   \
        return table_probe(o, h, true);                                        \
    }                                                                          \
    ATTR static bool P## xor (const amq__obj *o, uint64_t h) {                 \
        return table_probe(o, h, false);                                       \
    } ATTR static bool P##sum_tab(const amq__obj *o, uint64_t h) {             \
        return amq__cuckoo_probe(&((const amq_cuckoo *)o)->q, h, 0,            \
                                 AMQ__CK_BITS);                                \
    }                                                                          \
    ATTR static bool P##xor_tab(const amq__obj *o, uint64_t h) {               \
        return amq__cuckoo_probe(&((const amq_cuckoo *)o)->q, h, 1,            \
                                 AMQ__CK_BITS);                                \
    }
CK_KERNELS(probe_, )
CK_KERNELS(probeb_, CK_BMI2)

/* [BMI2][alternate table][xor form] */
static const amq__contains_fn ck_kernels[2][2][2] = {
    {{probe_sum, probe_xor}, {probe_sum_tab, probe_xor_tab}},
    {{probeb_sum, probeb_xor}, {probeb_sum_tab, probeb_xor_tab}}};

/* With the alternate table and a common (even) width, the width a
 * constant: a bucket's byte is one LEA from b, with no shift, and the
 * fingerprint's range is folded into the code. No shift is variable, so
 * one build serves every x86-64 CPU. */
#define CK_WIDTH(F)                                                            \
    static bool probe##F##_sum(const amq__obj *o, uint64_t h) {                \
        return amq__cuckoo_probe(&((const amq_cuckoo *)o)->q, h, 0, F);        \
    }                                                                          \
    static bool probe##F##_xor(const amq__obj *o, uint64_t h) {                \
        return amq__cuckoo_probe(&((const amq_cuckoo *)o)->q, h, 1, F);        \
    }
CK_WIDTH(8)
CK_WIDTH(10)
CK_WIDTH(12)
CK_WIDTH(16)

/* The constant-width kernel for f (f = 8, 10, 12, 16), or NULL. */
static amq__contains_fn width_kernel(unsigned f, bool xor_form) {
    switch (f) {
    case 8: return xor_form ? probe8_xor : probe8_sum;
    case 10: return xor_form ? probe10_xor : probe10_sum;
    case 12: return xor_form ? probe12_xor : probe12_sum;
    case 16: return xor_form ? probe16_xor : probe16_sum;
    default: return NULL;
    }
}

/* The alternate table's entries: 2^f of them, worth their cache footprint
 * only beside a table 64 times their size (one far beyond cache). */
static size_t alt_table_bytes(const amq__ctab *t) {
    return ((size_t)1 << t->fbits) * sizeof(uint32_t);
}

static void alt_table_free(amq_cuckoo *c) {
    if (c->alt != NULL)
        amq__free(&c->o.mem, c->alt, alt_table_bytes(&c->base));
    c->alt = NULL;
}

/* Fills c->alt (H or the xor delta of every fingerprint) for a big
 * one-table filter; without it (small table, or no memory: it is an
 * accelerator, not state) the kernel computes the same numbers. */
static void alt_table_build(amq_cuckoo *c) {
    const amq__ctab *t = &c->base;
    size_t bytes = alt_table_bytes(t);
    if (c->alt != NULL || (size_t)t->nwords * 8 < 64 * bytes)
        return;
    c->alt = amq__alloc(&c->o.mem, bytes);
    for (uint32_t fp = 1; c->alt != NULL && fp <= t->fp_values; fp++)
        c->alt[fp] =
            t->half != 0 ? alt_of(t, 0, fp, true) : alt_of(t, 0, fp, false);
}

/* The query for c's current shape: a kernel for one table of f <= 16,
 * else the chain loop (which under AMQ_OPT_SCALAR is the slot-by-slot
 * reference). Called whenever the chain changes. */
static void choose_kernel(amq_cuckoo *c) {
    const amq__ctab *t = &c->base;
    bool one = c->nlinks == 1 && !c->scalar && t->fbits <= 16;
    if (one)
        alt_table_build(c);
    else
        alt_table_free(c);
    if (!one) {
        c->o.contains = amq__ctab_contains;
        return;
    }
    if (c->alt != NULL) {
        amq_cuckoo_query q = {(const uint8_t *)t->rd,
                              c->alt,
                              t->lanes,
                              t->lanes_hi,
                              t->buckets,
                              t->fp_values,
                              4 * t->fbits,
                              t->half == 0};
        c->q = q;
    }
    /* (amq__cpu_has_avx2 answers for BMI2 too) */
    c->o.contains =
        ck_kernels[amq__cpu_has_avx2() != 0][c->alt != NULL][t->half == 0];
    amq__contains_fn fixed = width_kernel(t->fbits, t->half == 0);
    if (c->alt != NULL && fixed != NULL)
        c->o.contains = fixed;
}

static unsigned table_count(const amq__ctab *t, uint64_t h) {
    key_loc k = locate(t, h, t->fbits);
    return bucket_count(t, k.b1, k.fp) + bucket_count(t, k.b2, k.fp);
}

static bool table_remove(amq__ctab *t, uint64_t h) {
    key_loc k = locate(t, h, t->fbits);
    if (!take(t, k.b1, k.fp) && !take(t, k.b2, k.fp))
        return false;
    t->items--;
    return true;
}

/* Locate a group of keys and prefetch both buckets of each before testing
 * any, so the group's cache misses overlap. `accumulate` ORs into earlier
 * answers (the chain's later tables). */
static void batch_group(const amq__ctab *t, bool scalar, const uint64_t *h,
                        size_t n, uint8_t *out, bool accumulate) {
    key_loc k[BATCH];
    unsigned f = t->fbits;
    for (size_t j = 0; j < n; j++) {
        k[j] = locate(t, h[j], f);
        prefetch_bucket(t, k[j].b1);
        prefetch_bucket(t, k[j].b2);
    }
    for (size_t j = 0; j < n; j++) {
        bool hit;
        if (scalar)
            hit = bucket_has_scalar(t, k[j].b1, k[j].fp) ||
                  bucket_has_scalar(t, k[j].b2, k[j].fp);
        else
            hit = bucket_has(t->rd, k[j].b1, k[j].fp, f) ||
                  bucket_has(t->rd, k[j].b2, k[j].fp, f);
        out[j] = (uint8_t)((accumulate && out[j]) || hit);
    }
}

/* ---- the chain -------------------------------------------------------------- */

INLINE const amq__ctab *link_at(const amq_cuckoo *c, unsigned i) {
    return i == 0 ? &c->base : &c->more[i - 1];
}

INLINE amq__ctab *link_mut(amq_cuckoo *c, unsigned i) {
    return i == 0 ? &c->base : &c->more[i - 1];
}

static amq__ctab *newest(amq_cuckoo *c) { return link_mut(c, c->nlinks - 1); }

static size_t table_bytes(const amq__ctab *t) {
    return (size_t)(t->nwords * 8);
}

static uint64_t chain_bytes(const amq_cuckoo *c) {
    uint64_t sum = 0;
    for (unsigned i = 0; i < c->nlinks; i++)
        sum += table_bytes(link_at(c, i));
    return sum;
}

/* The key's fingerprint fills both its buckets: the duplicate limit, which
 * a new table must not paper over (8 more copies per table, forever). */
static bool holds_all_slots(const amq__ctab *t, uint64_t h) {
    return table_count(t, h) == 2 * SLOTS;
}

static amq_status table_init(amq_cuckoo *c, amq__ctab *t, uint64_t buckets,
                             unsigned fbits, const uint32_t range[4],
                             const uint64_t *borrow);
static void table_release(amq_cuckoo *c, amq__ctab *t);

/* The next table's shape: the kind's table for twice the buckets, one
 * more fingerprint bit (at most 32). */
static amq_status next_shape(const amq_cuckoo *c, const amq__ctab *last,
                             uint64_t *buckets, unsigned *fbits,
                             uint32_t range[4]) {
    AMQ_RETURN_IF_ERR(
        c->kind->shape(2 * (uint64_t)last->buckets, buckets, range));
    *fbits =
        last->fbits < AMQ_CUCKOO_MAX_FP ? last->fbits + 1 : AMQ_CUCKOO_MAX_FP;
    return AMQ_OK;
}

/* Appends a table and puts h there; AMQ_ERR_FULL past the caps, the
 * filter unchanged on every failure. */
static amq_status grow_and_add(amq_cuckoo *c, uint64_t h) {
    uint64_t m;
    unsigned f;
    uint32_t range[4];
    if (c->nlinks >= c->max_links ||
        next_shape(c, newest(c), &m, &f, range) != AMQ_OK)
        return AMQ_ERR_FULL;
    if (c->max_bytes != 0 &&
        chain_bytes(c) + amq__ctab_words(m, f) * 8 > c->max_bytes)
        return AMQ_ERR_FULL;
    size_t old = (size_t)(c->nlinks - 1) * sizeof *c->more;
    amq__ctab *more = amq__alloc(&c->o.mem, old + sizeof *more);
    if (more == NULL)
        return AMQ_ERR_NOMEM;
    amq__ctab *t = &more[c->nlinks - 1];
    amq_status st = table_init(c, t, m, f, range, NULL);
    if (st != AMQ_OK) {
        amq__free(&c->o.mem, more, old + sizeof *more);
        return st;
    }
    if (old != 0)
        memcpy(more, c->more, old);
    st = table_add(t, c->max_kicks, h); /* an empty table takes any key */
    if (st != AMQ_OK) {
        table_release(c, t);
        amq__free(&c->o.mem, more, old + sizeof *more);
        return st;
    }
    if (c->more != NULL)
        amq__free(&c->o.mem, c->more, old);
    c->more = more;
    c->nlinks++;
    c->o.items++;
    c->o.table_bytes = (size_t)chain_bytes(c);
    choose_kernel(c);
    return AMQ_OK;
}

amq_status amq__ctab_add(amq__obj *o, uint64_t h) {
    amq_cuckoo *c = (amq_cuckoo *)o;
    amq__ctab *t = newest(c);
    amq_status st = table_add(t, c->max_kicks, h);
    if (st == AMQ_OK) {
        c->o.items++;
        return AMQ_OK;
    }
    if (c->max_links > 1 && !holds_all_slots(t, h))
        st = grow_and_add(c, h);
    return st;
}

bool amq__ctab_contains(const amq__obj *o, uint64_t h) {
    const amq_cuckoo *c = (const amq_cuckoo *)o;
    if (table_contains(&c->base, c->scalar, h))
        return true;
    for (unsigned i = 1; i < c->nlinks; i++)
        if (table_contains(&c->more[i - 1], c->scalar, h))
            return true;
    return false;
}

amq_status amq_cuckoo_query_of(const amq_cuckoo *c, amq_cuckoo_query *q) {
    if (c == NULL || q == NULL)
        return AMQ_ERR_INVALID;
    /* not one big table of f <= 16, scalar, or a table that may grow */
    if (c->alt == NULL || c->max_links > 1)
        return AMQ_ERR_UNSUPPORTED;
    *q = c->q;
    return AMQ_OK;
}

/* How many keys ahead the batch insert prefetches: enough misses in flight
 * to overlap, few enough that the lines are still cached when used. */
#define ADD_AHEAD 8

/* Both buckets of h in the table an add would try first. */
static void prefetch_add(amq_cuckoo *c, uint64_t h) {
    const amq__ctab *t = newest(c);
    key_loc k = locate(t, h, t->fbits);
    prefetch_bucket(t, k.b1);
    prefetch_bucket(t, k.b2);
}

amq_status amq__ctab_add_batch(amq__obj *o, const uint64_t *h, size_t n,
                               size_t *done) {
    amq_cuckoo *c = (amq_cuckoo *)o;
    size_t i = 0;
    amq_status st = AMQ_OK;
    for (size_t j = 0; j < n && j < ADD_AHEAD; j++)
        prefetch_add(c, h[j]);
    for (; i < n; i++) {
        if (i + ADD_AHEAD < n)
            prefetch_add(c, h[i + ADD_AHEAD]);
        if ((st = amq__ctab_add(o, h[i])) != AMQ_OK)
            break;
    }
    *done = i;
    return st;
}

/* Both buckets of a group's keys prefetched before any is tested. */
void amq__ctab_contains_batch(const amq__obj *o, const uint64_t *h, size_t n,
                              uint8_t *out) {
    const amq_cuckoo *c = (const amq_cuckoo *)o;
    for (size_t i = 0; i < n; i += BATCH) {
        size_t g = n - i < BATCH ? n - i : BATCH;
        for (unsigned l = 0; l < c->nlinks; l++)
            batch_group(link_at(c, l), c->scalar, h + i, g, out + i, l > 0);
    }
}

/* One copy, from the newest table holding the key's fingerprint in its
 * buckets. */
amq_status amq__ctab_remove(amq__obj *o, uint64_t h) {
    amq_cuckoo *c = (amq_cuckoo *)o;
    for (unsigned i = c->nlinks; i-- > 0;) {
        if (table_remove(link_mut(c, i), h)) {
            c->o.items--;
            return AMQ_OK;
        }
    }
    return AMQ_ERR_NOT_FOUND;
}

/* Copies in the key's two buckets of every table. */
amq_status amq__ctab_count(const amq__obj *o, uint64_t h, uint64_t *out) {
    const amq_cuckoo *c = (const amq_cuckoo *)o;
    uint64_t n = 0;
    for (unsigned i = 0; i < c->nlinks; i++)
        n += table_count(link_at(c, i), h);
    *out = n;
    return AMQ_OK;
}

/* ---- properties -------------------------------------------------------------- */

uint64_t amq_cuckoo_buckets(const amq_cuckoo *c) { return c->base.buckets; }
unsigned amq_cuckoo_fp_bits(const amq_cuckoo *c) { return c->base.fbits; }
unsigned amq_cuckoo_links(const amq_cuckoo *c) { return c->nlinks; }

amq_status amq_cuckoo_link_info(const amq_cuckoo *c, unsigned i,
                                uint64_t *buckets, unsigned *fp_bits,
                                uint64_t *items) {
    if (c == NULL || i >= c->nlinks)
        return AMQ_ERR_INVALID;
    const amq__ctab *t = link_at(c, i);
    if (buckets != NULL)
        *buckets = t->buckets;
    if (fp_bits != NULL)
        *fp_bits = t->fbits;
    if (items != NULL)
        *items = t->items;
    return AMQ_OK;
}

void amq_cuckoo_ranges(const amq_cuckoo *c, uint64_t ranges[4]) {
    for (unsigned i = 0; i < AMQ__CT_RANGES; i++)
        ranges[i] = c->base.range[i];
}

double amq_cuckoo_load(const amq_cuckoo *c) {
    double slots = 0;
    for (unsigned i = 0; i < c->nlinks; i++)
        slots += (double)link_at(c, i)->buckets * SLOTS;
    return (double)c->o.items / slots;
}

/* 1 - Π (1 - b_i) with 1 - b_i = (1 - q_i p2_i)^(n_i): one expm1 of a sum
 * of logs, accurate at tiny rates. */
double amq__ctab_bound(const amq__obj *o) {
    const amq_cuckoo *c = (const amq_cuckoo *)o;
    double log_none = 0.0;
    for (unsigned i = 0; i < c->nlinks; i++) {
        const amq__ctab *t = link_at(c, i);
        double p = fp_match_prob(t->fbits) * pair_prob(t->buckets);
        log_none += (double)t->items * log1p(-p);
    }
    return -expm1(log_none);
}

/* ---- construction ------------------------------------------------------------ */

uint64_t amq__ctab_words(uint64_t buckets, unsigned fbits) {
    if (buckets > AMQ_CUCKOO_MAX_BUCKETS || fbits > AMQ_CUCKOO_MAX_FP)
        return 0;
    return (buckets * SLOTS * fbits + 63) / 64;
}

static bool is_pow2(uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }

/* Every range the whole of an even table that is not a power of two. */
static bool sum_form(uint64_t buckets, const uint32_t range[AMQ__CT_RANGES]) {
    for (unsigned i = 0; i < AMQ__CT_RANGES; i++)
        if (range[i] != buckets)
            return false;
    return buckets % 2 == 0 && !is_pow2(buckets);
}

static bool shape_ok(uint64_t buckets, unsigned fbits,
                     const uint32_t range[AMQ__CT_RANGES], unsigned kicks) {
    if (buckets < 2 || buckets > AMQ_CUCKOO_MAX_BUCKETS ||
        fbits < AMQ_CUCKOO_MIN_FP || fbits > AMQ_CUCKOO_MAX_FP ||
        kicks > AMQ_CUCKOO_MAX_KICKS)
        return false;
    if (sum_form(buckets, range))
        return true;
    for (unsigned i = 0; i < AMQ__CT_RANGES; i++)
        if (!is_pow2(range[i]) || range[i] < 2 || range[i] > range[0] ||
            buckets % range[i] != 0)
            return false;
    return true;
}

/* A zeroed table, or one reading `borrow` (a view). The shape is checked
 * by the caller. */
static amq_status table_init(amq_cuckoo *c, amq__ctab *t, uint64_t buckets,
                             unsigned fbits, const uint32_t range[4],
                             const uint64_t *borrow) {
    size_t bytes;
    uint64_t nwords = amq__ctab_words(buckets, fbits);
    if (nwords == 0 || !amq__mul((size_t)nwords, 8, &bytes))
        return AMQ_ERR_OVERFLOW;
    memset(t, 0, sizeof *t);
    t->nwords = nwords;
    t->buckets = (uint32_t)buckets;
    memcpy(t->range, range, sizeof t->range);
    t->half = sum_form(buckets, range) ? (uint32_t)(buckets / 2) : 0;
    t->fbits = fbits;
    t->fp_values = (uint32_t)((UINT64_C(1) << fbits) - 1);
    t->lanes = fbits <= 16 ? lane_ones(fbits, 4) : 0;
    t->lanes_hi = t->lanes << (fbits - 1);
    /* A bucket is read by one 8-byte load from its first byte (the query
     * kernels, amq/query.h), which may reach 7 bytes past the last
     * bucket: an owned table is allocated 8 bytes longer (zeros, never
     * part of the table or its frame); a view's table lies in its
     * frame's payload, which the frame's 8-byte checksum follows. */
    if (borrow != NULL) {
        t->rd = borrow;
        return AMQ_OK;
    }
    if (!amq__add(bytes, 8, &bytes))
        return AMQ_ERR_OVERFLOW;
    AMQ_RETURN_IF_ERR(amq__block_alloc(&c->o.mem, bytes, 64, &t->table));
    t->wr = t->table.ptr;
    t->rd = t->wr;
    return AMQ_OK;
}

static void table_release(amq_cuckoo *c, amq__ctab *t) {
    if (t->table.raw != NULL)
        amq__block_free(&c->o.mem, &t->table);
}

/* The handle without any table (nlinks = 0 until the first is set). */
static amq_cuckoo *handle_new(const amq__ctab_kind *kind, unsigned max_kicks,
                              const amq_options *opt) {
    amq_cuckoo *c;
    if (amq__obj_new(sizeof *c, opt, (void **)&c) != AMQ_OK)
        return NULL;
    c->o.variant = kind;
    c->kind = kind;
    c->max_links = 1;
    c->max_kicks = max_kicks;
    c->scalar = opt != NULL && (opt->flags & AMQ_OPT_SCALAR);
    return c;
}

amq_status amq__ctab_new(const amq__ctab_kind *kind, uint64_t buckets,
                         unsigned fbits, const uint32_t range[AMQ__CT_RANGES],
                         unsigned max_kicks, const amq_options *opt,
                         amq_cuckoo **out) {
    if (!shape_ok(buckets, fbits, range, max_kicks) ||
        !kind->ranges_ok(buckets, range))
        return AMQ_ERR_INVALID;
    amq_cuckoo *c = handle_new(kind, max_kicks, opt);
    if (c == NULL)
        return AMQ_ERR_NOMEM;
    amq_status st = table_init(c, &c->base, buckets, fbits, range, NULL);
    if (st != AMQ_OK) {
        amq__obj_free(&c->o);
        return st;
    }
    c->nlinks = 1;
    c->o.table_bytes = (size_t)chain_bytes(c);
    choose_kernel(c);
    *out = c;
    return AMQ_OK;
}

void amq__ctab_destroy(amq__obj *o) {
    amq_cuckoo *c = (amq_cuckoo *)o;
    alt_table_free(c);
    for (unsigned i = c->nlinks; i-- > 0;)
        table_release(c, link_mut(c, i));
    if (c->more != NULL)
        amq__free(&c->o.mem, c->more,
                  (size_t)(c->nlinks - 1) * sizeof *c->more);
    amq__obj_free(&c->o);
}

amq_status amq_cuckoo_set_growth(amq_cuckoo *c, unsigned max_links,
                                 uint64_t max_bytes) {
    if (c == NULL)
        return AMQ_ERR_INVALID;
    if (c->base.table.raw == NULL) /* a view: borrowed, read-only tables */
        return AMQ_ERR_UNSUPPORTED;
    if (max_links < 1 || max_links > AMQ_CUCKOO_MAX_LINKS ||
        max_links < c->nlinks || (max_links == 1 && max_bytes != 0) ||
        (max_bytes != 0 && max_bytes < chain_bytes(c)))
        return AMQ_ERR_INVALID;
    c->max_links = max_links;
    c->max_bytes = max_bytes;
    return AMQ_OK;
}

/* With the lookahead walk and 500 kicks, the first failure of a table
 * comes at a load of 0.962-0.973 for large m (every width, up to 2^22
 * buckets; 0.967 and up for f >= 6) and spreads lower for small m, with a
 * standard deviation of about 0.2 / sqrt(slots) (measured,
 * docs/structures.md ("Cuckoo family")): keep capacity below the design load, with room
 * for small tables (1.5 sqrt(n) + 8 slots keep capacity more than five
 * deviations below the mean first failure at every size). */
amq_status amq__ctab_slots_for(uint64_t capacity, double load,
                               uint64_t *buckets) {
    if (capacity == 0)
        return AMQ_ERR_INVALID;
    double n = (double)capacity;
    double slots = n / load + 1.5 * sqrt(n) + 8.0;
    double m = ceil(slots / SLOTS);
    if (!(m <= (double)AMQ_CUCKOO_MAX_BUCKETS))
        return AMQ_ERR_OVERFLOW;
    *buckets = m < 2 ? 2 : (uint64_t)m;
    return AMQ_OK;
}

static void single_range(uint64_t buckets, uint32_t range[AMQ__CT_RANGES]) {
    for (unsigned i = 0; i < AMQ__CT_RANGES; i++)
        range[i] = (uint32_t)buckets;
}

/* The cuckoo kind: one range, the whole table, of any even size. */
static bool cuckoo_ranges_ok(uint64_t buckets, const uint32_t range[4]) {
    for (unsigned i = 0; i < AMQ__CT_RANGES; i++)
        if (range[i] != buckets)
            return false;
    return buckets % 2 == 0;
}

static amq_status cuckoo_shape(uint64_t m0, uint64_t *buckets,
                               uint32_t range[4]) {
    uint64_t m = m0 < 2 ? 2 : m0 + (m0 & 1);
    if (m > AMQ_CUCKOO_MAX_BUCKETS)
        return AMQ_ERR_OVERFLOW;
    *buckets = m;
    single_range(m, range);
    return AMQ_OK;
}

const amq__ctab_kind amq__ctab_cuckoo_kind = {.name = "cuckoo",
                                              .load = AMQ__CT_CUCKOO_LOAD,
                                              .chunked = false,
                                              .ranges_ok = cuckoo_ranges_ok,
                                              .shape = cuckoo_shape};

static amq_status cuckoo_size(uint64_t capacity, uint64_t *buckets) {
    uint64_t m0;
    uint32_t range[AMQ__CT_RANGES];
    AMQ_RETURN_IF_ERR(amq__ctab_slots_for(capacity, AMQ__CT_CUCKOO_LOAD, &m0));
    return cuckoo_shape(m0, buckets, range);
}

/* ---- spec helpers (shared with vacuum.c) ------------------------------------ */

amq_status amq__ctab_spec_fp(amq__spec *spec, double fpr, bool grow,
                             unsigned *fbits, amq_diag *diag) {
    uint64_t f = 0;
    bool has;
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "fp", AMQ_CUCKOO_MIN_FP,
                                    AMQ_CUCKOO_MAX_FP, &f, &has, diag));
    if (has) {
        *fbits = (unsigned)f;
        return AMQ_OK;
    }
    if (fpr == 0.0)
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "%s needs fp=BITS or a target fpr", spec->name);
    *fbits = amq_cuckoo_fp_bits_for(grow ? fpr / 2 : fpr);
    if (*fbits == 0)
        return amq__diag(diag, AMQ_ERR_INVALID, 0,
                         "fpr %g is outside (0, 1) or below what 32-bit "
                         "fingerprints reach",
                         fpr);
    return AMQ_OK;
}

amq_status amq__ctab_spec_kicks(amq__spec *spec, unsigned *kicks,
                                amq_diag *diag) {
    uint64_t k = AMQ_CUCKOO_DEFAULT_KICKS;
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "max_kicks", 0, AMQ_CUCKOO_MAX_KICKS,
                                    &k, NULL, diag));
    *kicks = (unsigned)k;
    return AMQ_OK;
}

amq_status amq__ctab_spec_growth(amq__spec *spec, unsigned *max_links,
                                 uint64_t *max_bytes, amq_diag *diag) {
    uint64_t grow = 0, links = AMQ_CUCKOO_MAX_LINKS;
    bool has_links, has_bytes;
    *max_bytes = 0;
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "grow", 0, 1, &grow, NULL, diag));
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "max_links", 2, AMQ_CUCKOO_MAX_LINKS,
                                    &links, &has_links, diag));
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "max_bytes", 0, UINT64_C(1) << 60,
                                    max_bytes, &has_bytes, diag));
    if (!grow && (has_links || has_bytes))
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "%s: max_links and max_bytes "
                         "need grow=1",
                         spec->name);
    *max_links = grow ? (unsigned)links : 1;
    return AMQ_OK;
}

size_t amq__ctab_describe_growth(const amq_cuckoo *c, char *buf, size_t cap) {
    int n = 0;
    if (c->max_links > 1)
        n = snprintf(buf, cap, ",grow=1,max_links=%u,max_bytes=%llu",
                     c->max_links, (unsigned long long)c->max_bytes);
    else if (cap > 0)
        buf[0] = '\0';
    return n > 0 ? (size_t)n : 0;
}

/* ---- the generic interface (shared callbacks) ------------------------------- */

size_t amq__ctab_describe(const amq__obj *o, char *buf, size_t cap) {
    const amq_cuckoo *c = (const amq_cuckoo *)o;
    size_t used =
        c->kind->chunked
            ? amq__describe(buf, cap, "fp=%u,buckets=%u,chunk=%u,max_kicks=%u",
                            c->base.fbits, c->base.buckets, c->base.range[0],
                            c->max_kicks)
            : amq__describe(buf, cap, "fp=%u,buckets=%u,max_kicks=%u",
                            c->base.fbits, c->base.buckets, c->max_kicks);
    return used + amq__ctab_describe_growth(c, used < cap ? buf + used : NULL,
                                            used < cap ? cap - used : 0);
}

amq_status amq__ctab_apply_growth(amq_cuckoo *c, unsigned links,
                                  uint64_t max_bytes, amq_diag *diag) {
    if (amq_cuckoo_set_growth(c, links, max_bytes) != AMQ_OK) {
        amq__ctab_destroy(&c->o);
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "max_bytes=%llu is smaller "
                         "than the first table",
                         (unsigned long long)max_bytes);
    }
    return AMQ_OK;
}

/* Curve: a table at load α with f-bit fingerprints has b = f / α bits per
 * key and rate 1 - exp(-8 α q_f). With fp= fixed, α = f / b; without it the
 * ideal real-valued f = α b at the design load (q = 1 / (2^f - 1)). */
static amq_status curve_spec(amq__spec *spec, uint64_t *f, amq_diag *diag) {
    static const char *const ignored_keys[] = {
        "buckets", "max_kicks", "chunk", "grow", "max_links", "max_bytes"};
    uint64_t ignored;
    *f = 0;
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "fp", AMQ_CUCKOO_MIN_FP,
                                    AMQ_CUCKOO_MAX_FP, f, NULL, diag));
    for (size_t i = 0; i < sizeof ignored_keys / sizeof *ignored_keys; i++)
        AMQ_RETURN_IF_ERR(amq__spec_u64(spec, ignored_keys[i], 0, UINT64_MAX,
                                        &ignored, NULL, diag));
    return AMQ_OK;
}

amq_status amq__ctab_curve(const amq__type *self, amq__spec *spec, double x,
                           bool inverse, double *out, amq_diag *diag) {
    const amq__ctab_kind *kind = self->variant;
    double a = kind->load;
    uint64_t f;
    AMQ_RETURN_IF_ERR(curve_spec(spec, &f, diag));
    double q = f != 0 ? fp_match_prob((unsigned)f) : 0.0;
    if (!inverse) {
        *out = f != 0 ? -expm1(-2.0 * SLOTS * (double)f * q / x)
                      : -expm1(-2.0 * SLOTS * a / expm1(a * x * M_LN2));
        return AMQ_OK;
    }
    double y = -log1p(-x); /* = 8 α q */
    *out = f != 0 ? 2.0 * SLOTS * (double)f * q / y
                  : log2(1.0 + 2.0 * SLOTS * a / y) / a;
    return AMQ_OK;
}

/* params, one table:   buckets u64 | fp bits u32 | max_kicks u32 |
 *                      range[4] u32 | items u64                   (40 bytes)
 * a growing filter:    table 0 as above | nlinks u32 | max_links u32 |
 *                      max_bytes u64 | tables 1 .. nlinks-1 as above
 * A filter without growth writes exactly the one-table layout, so frames
 * of earlier versions and of non-growing filters are the same bytes. */
static void link_write(const amq_cuckoo *c, const amq__ctab *t, amq__wr *w) {
    amq__wr_u64(w, t->buckets);
    amq__wr_u32(w, t->fbits);
    amq__wr_u32(w, c->max_kicks);
    for (unsigned i = 0; i < AMQ__CT_RANGES; i++)
        amq__wr_u32(w, t->range[i]);
    amq__wr_u64(w, t->items);
}

void amq__ctab_params_write(const amq__obj *o, amq__wr *w) {
    const amq_cuckoo *c = (const amq_cuckoo *)o;
    link_write(c, &c->base, w);
    if (c->max_links == 1)
        return;
    amq__wr_u32(w, c->nlinks);
    amq__wr_u32(w, c->max_links);
    amq__wr_u64(w, c->max_bytes);
    for (unsigned i = 1; i < c->nlinks; i++)
        link_write(c, &c->more[i - 1], w);
}

void amq__ctab_payload_write(const amq__obj *o, uint8_t *dst) {
    const amq_cuckoo *c = (const amq_cuckoo *)o;
    for (unsigned i = 0; i < c->nlinks; i++) {
        const amq__ctab *t = link_at(c, i);
        memcpy(dst, t->rd, table_bytes(t));
        dst += table_bytes(t);
    }
}

/* ---- load ---------------------------------------------------------------------- */

/* Occupied slots of a payload, or UINT64_MAX if bits past the last slot
 * are set. Reads the caller's buffer before anything is allocated. */
static uint64_t payload_items(const uint8_t *words, uint64_t nwords,
                              uint64_t buckets, unsigned f) {
    uint64_t used = buckets * SLOTS * f, n = 0;
    uint64_t last = amq__get_u64(words + 8 * (nwords - 1));
    if (used % 64 != 0 && (last >> (used % 64)) != 0)
        return UINT64_MAX;
    for (uint64_t s = 0; s < buckets * SLOTS; s++)
        n += get_bits(words, s * f, f) != 0;
    return n;
}

/* One table's record, decoded and checked on its own. */
typedef struct link_rec {
    uint64_t buckets, items, nwords;
    unsigned f, kicks;
    uint32_t range[AMQ__CT_RANGES];
    size_t at, at_range, at_items; /* where the record sits in the frame */
} link_rec;

static amq_status link_read(amq__rd *r, unsigned i, link_rec *l) {
    uint32_t f, kicks;
    l->at = amq__rd_u64(r, &l->buckets);
    size_t at_f = amq__rd_u32(r, &f);
    size_t at_kicks = amq__rd_u32(r, &kicks);
    l->at_range = amq__rd_at(r);
    for (unsigned j = 0; j < AMQ__CT_RANGES; j++)
        amq__rd_u32(r, &l->range[j]);
    l->at_items = amq__rd_u64(r, &l->items);
    l->f = f;
    l->kicks = kicks;
    if (f < AMQ_CUCKOO_MIN_FP || f > AMQ_CUCKOO_MAX_FP)
        return amq__rd_bad(r, at_f, "table %u: %u-bit fingerprints", i, f);
    if (kicks > AMQ_CUCKOO_MAX_KICKS)
        return amq__rd_bad(r, at_kicks, "table %u: max_kicks %u", i, kicks);
    if (l->buckets < 2 || l->buckets > AMQ_CUCKOO_MAX_BUCKETS)
        return amq__rd_bad(r, l->at, "table %u: %llu buckets", i,
                           (unsigned long long)l->buckets);
    if (!shape_ok(l->buckets, f, l->range, kicks))
        return amq__rd_bad(r, l->at_range,
                           "table %u: ranges %u/%u/%u/%u do "
                           "not fit %llu buckets",
                           i, l->range[0], l->range[1], l->range[2],
                           l->range[3], (unsigned long long)l->buckets);
    l->nwords = amq__ctab_words(l->buckets, f);
    return AMQ_OK;
}

/* Table i (> 0) must be exactly what growth appends after `prev`. */
static bool link_follows(const amq__ctab_kind *kind, const link_rec *prev,
                         const link_rec *r) {
    uint64_t m;
    uint32_t range[AMQ__CT_RANGES];
    unsigned f = prev->f < AMQ_CUCKOO_MAX_FP ? prev->f + 1 : AMQ_CUCKOO_MAX_FP;
    if (kind->shape(2 * prev->buckets, &m, range) != AMQ_OK)
        return false;
    return r->buckets == m && r->f == f && r->kicks == prev->kicks &&
           memcmp(r->range, range, sizeof range) == 0;
}

/* The chain part of the parameters: counts, caps, every table's record
 * and its payload, all against the input before anything is allocated. */
typedef struct chain_rec {
    unsigned nlinks, max_links;
    uint64_t max_bytes;
    size_t at_max_bytes;
    link_rec link[AMQ_CUCKOO_MAX_LINKS];
} chain_rec;

static amq_status chain_head(amq__rd *r, chain_rec *ch) {
    uint32_t nlinks, max_links;
    size_t extra = r->len - LINK_LEN - CHAIN_LEN;
    size_t at_n = amq__rd_u32(r, &nlinks);
    amq__rd_u32(r, &max_links);
    ch->at_max_bytes = amq__rd_u64(r, &ch->max_bytes);
    if (max_links < 2 || max_links > AMQ_CUCKOO_MAX_LINKS || nlinks < 1 ||
        nlinks > max_links || nlinks != 1 + extra / LINK_LEN)
        return amq__rd_bad(r, at_n,
                           "chain of %u tables (cap %u) does not "
                           "fit %zu bytes of parameters",
                           nlinks, max_links, r->len);
    ch->nlinks = nlinks;
    ch->max_links = max_links;
    return AMQ_OK;
}

static amq_status chain_read(amq__rd *r, const amq__ctab_kind *kind,
                             chain_rec *ch) {
    ch->nlinks = 1;
    ch->max_links = 1;
    ch->max_bytes = 0;
    ch->at_max_bytes = 0;
    if (r->len != LINK_LEN && (r->len < LINK_LEN + CHAIN_LEN ||
                               (r->len - LINK_LEN - CHAIN_LEN) % LINK_LEN != 0))
        return amq__rd_bad(r, r->base,
                           "parameter block of %zu bytes, "
                           "expected %d or %d + %d per extra table",
                           r->len, LINK_LEN, LINK_LEN + CHAIN_LEN, LINK_LEN);
    for (unsigned i = 0; i < ch->nlinks; i++) {
        link_rec *l = &ch->link[i];
        AMQ_RETURN_IF_ERR(link_read(r, i, l));
        if (i == 0 && !kind->ranges_ok(l->buckets, l->range))
            return amq__rd_bad(r, l->at_range,
                               "ranges %u/%u/%u/%u are not "
                               "those of a %s table of %llu buckets",
                               l->range[0], l->range[1], l->range[2],
                               l->range[3], kind->name,
                               (unsigned long long)l->buckets);
        if (i > 0 && !link_follows(kind, &ch->link[i - 1], l))
            return amq__rd_bad(r, l->at,
                               "table %u is not what growth "
                               "appends after table %u",
                               i, i - 1);
        if (i == 0 && r->len != LINK_LEN)
            AMQ_RETURN_IF_ERR(chain_head(r, ch));
    }
    return AMQ_OK;
}

static amq_status chain_check_payload(const chain_rec *ch,
                                      const uint8_t *payload, size_t len,
                                      const amq__rd *r) {
    uint64_t total = 0;
    for (unsigned i = 0; i < ch->nlinks; i++)
        total += ch->link[i].nwords * 8; /* <= 32 tables of < 2^40 bytes */
    if (total != len)
        return amq__rd_bad(r, ch->link[0].at,
                           "tables take %llu bytes, the "
                           "payload has %zu",
                           (unsigned long long)total, len);
    if (ch->max_bytes != 0 && total > ch->max_bytes)
        return amq__rd_bad(r, ch->at_max_bytes,
                           "tables take %llu bytes, "
                           "over the cap of %llu",
                           (unsigned long long)total,
                           (unsigned long long)ch->max_bytes);
    for (unsigned i = 0; i < ch->nlinks; i++) {
        const link_rec *l = &ch->link[i];
        if (payload_items(payload, l->nwords, l->buckets, l->f) != l->items)
            return amq__rd_bad(r, l->at_items,
                               "table %u: item count %llu "
                               "does not match its occupied slots",
                               i, (unsigned long long)l->items);
        payload += l->nwords * 8;
    }
    return AMQ_OK;
}

/* Builds the handle from checked records (copying or borrowing). */
static amq_status chain_build(const chain_rec *ch, const uint8_t *payload,
                              bool view, const amq_options *opt,
                              const amq__ctab_kind *kind, amq_cuckoo **out) {
    amq_cuckoo *c = handle_new(kind, ch->link[0].kicks, opt);
    if (c == NULL)
        return AMQ_ERR_NOMEM;
    c->max_links = ch->max_links;
    c->max_bytes = ch->max_bytes;
    if (ch->nlinks > 1) {
        c->more = amq__zalloc(&c->o.mem, (ch->nlinks - 1) * sizeof *c->more);
        if (c->more == NULL) {
            amq__obj_free(&c->o);
            return AMQ_ERR_NOMEM;
        }
    }
    c->nlinks = ch->nlinks; /* free() releases tables not yet allocated:
                               their blocks are zero */
    for (unsigned i = 0; i < ch->nlinks; i++) {
        const link_rec *r = &ch->link[i];
        amq__ctab *t = link_mut(c, i);
        amq_status st = table_init(c, t, r->buckets, r->f, r->range,
                                   view ? (const uint64_t *)payload : NULL);
        if (st != AMQ_OK) {
            amq__ctab_destroy(&c->o);
            return st;
        }
        if (!view)
            memcpy(t->wr, payload, table_bytes(t));
        t->items = r->items;
        c->o.items += r->items;
        payload += table_bytes(t);
    }
    c->o.table_bytes = (size_t)chain_bytes(c);
    choose_kernel(c);
    *out = c;
    return AMQ_OK;
}

amq_status amq__ctab_load(const amq__type *self, amq__rd *r,
                          const uint8_t *payload, size_t len, bool view,
                          const amq_options *opt, amq__obj **out) {
    const amq__ctab_kind *kind = self->variant;
    chain_rec ch;
    amq_cuckoo *c;
    AMQ_RETURN_IF_ERR(chain_read(r, kind, &ch));
    AMQ_RETURN_IF_ERR(chain_check_payload(&ch, payload, len, r));
    AMQ_RETURN_IF_ERR(chain_build(&ch, payload, view, opt, kind, &c));
    *out = &c->o;
    return AMQ_OK;
}

/* ---- the cuckoo type --------------------------------------------------------- */

static amq_status spec_buckets(amq__spec *spec, uint64_t capacity, uint64_t *m,
                               amq_diag *diag) {
    bool has_m;
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "buckets", 2, AMQ_CUCKOO_MAX_BUCKETS,
                                    m, &has_m, diag));
    if (has_m && *m % 2 != 0)
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "cuckoo buckets=%llu is odd "
                         "(two distinct buckets per key need an even table)",
                         (unsigned long long)*m);
    if (has_m)
        return AMQ_OK;
    if (capacity == 0)
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "cuckoo needs a capacity, or buckets=N");
    amq_status st = cuckoo_size(capacity, m);
    if (st != AMQ_OK)
        return amq__diag(diag, st, 0, "capacity %llu: %s",
                         (unsigned long long)capacity, amq_strerror(st));
    return AMQ_OK;
}

static amq_status t_create(const amq__type *self, amq__spec *spec,
                           uint64_t capacity, double fpr,
                           const amq_options *opt, amq__obj **out,
                           amq_diag *diag) {
    uint64_t m = 0, max_bytes;
    uint32_t range[AMQ__CT_RANGES];
    unsigned f, kicks, links = 1;
    amq_cuckoo *c = NULL;
    (void)self;
    AMQ_RETURN_IF_ERR(amq__ctab_spec_growth(spec, &links, &max_bytes, diag));
    AMQ_RETURN_IF_ERR(amq__ctab_spec_fp(spec, fpr, links > 1, &f, diag));
    AMQ_RETURN_IF_ERR(amq__ctab_spec_kicks(spec, &kicks, diag));
    AMQ_RETURN_IF_ERR(spec_buckets(spec, capacity, &m, diag));
    single_range(m, range);
    AMQ_RETURN_IF_ERR(
        amq__ctab_new(&amq__ctab_cuckoo_kind, m, f, range, kicks, opt, &c));
    AMQ_RETURN_IF_ERR(amq__ctab_apply_growth(c, links, max_bytes, diag));
    *out = &c->o;
    return AMQ_OK;
}

/* Shapes beside the defaults that reach the other kernels (test_kernels):
 * fingerprint widths with kernels of their own or none (4-20 bits); small tables whose buckets reach the table's last bytes (the loads past the last bucket); tables 64 times their fingerprint count (the alternate-table kernels) at the widths that have one (8, 10, 12, 16); growth. */
static const char *const kernel_shapes[] = {"cuckoo:fp=4",
                                            "cuckoo:fp=5,buckets=6",
                                            "cuckoo:fp=7,buckets=1026",
                                            "cuckoo:fp=12",
                                            "cuckoo:fp=13,buckets=4096",
                                            "cuckoo:fp=16",
                                            "cuckoo:fp=20",
                                            "cuckoo:grow=1",
                                            "cuckoo:fp=4,buckets=4096",
                                            "cuckoo:fp=5,buckets=6000",
                                            "cuckoo:fp=8,buckets=16384",
                                            "cuckoo:fp=10,buckets=60000",
                                            "cuckoo:fp=10,buckets=65536",
                                            "cuckoo:fp=12,buckets=180000",
                                            "cuckoo:fp=16,buckets=2097152",
                                            NULL};

/* Measured beside the defaults: the 12-bit fingerprints of the reference
 * cuckoo filter (Fan et al.) and of the peers. */
static const char *const cuckoo_shapes[] = {"cuckoo:fp=12", NULL};

const amq__type amq__type_cuckoo = {
    .variant = &amq__ctab_cuckoo_kind,
    .info = {.name = "cuckoo",
             .type_id = AMQ__ID_cuckoo,
             .caps = AMQ_CAP_REMOVE | AMQ_CAP_COUNT,
             .summary = "cuckoo filter, buckets of 4, partial-key cuckoo "
                        "hashing (Fan et al. 2014), any even table size, "
                        "optional growth by chaining",
             .params = "fp=BITS (4-32, default ceil(log2(8/fpr))), "
                       "buckets=N (even, instead of capacity), "
                       "max_kicks=N (evictions per insert, default 500), "
                       "grow=1 (append tables of 2x buckets and +1 bit when "
                       "full; fp from fpr/2), max_links=N (2-32, default "
                       "32), max_bytes=B (cap on all tables, 0 = none)",
             .default_hash = AMQ_HASH_XXH3,
             .shapes = cuckoo_shapes},
    .reads = 2,
    .reads_text = "2",
    .kernel_shapes = kernel_shapes,
    .create = t_create,
    AMQ__CTAB_SLOTS};
