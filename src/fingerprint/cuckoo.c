/*
 * cuckoo.c — the cuckoo filter (Fan, Andersen, Kaminsky, Mitzenmacher,
 * CoNEXT 2014) and the bucket table it shares with the vacuum filter
 * (vacuum.c, which only picks other table sizes and alternate ranges).
 *
 * A key's 64-bit hash h gives an f-bit fingerprint and two buckets:
 *
 *   h:  [ high 32 bits ──► i1 = reduce(h >> 32, m) ][ low 32 ──► fp ]
 *       fp = 1 + reduce(h mod 2^32, 2^f - 1)        (0 marks an empty slot)
 *       i2 = alt(i1, fp) = i1 xor (1 + reduce(mix(fp) >> 32, L - 1))
 *
 *   words (64-bit, little-endian), f = 12: bucket b = slots 4b .. 4b+3
 *   +------------+------------+------------+------------+------------+--
 *   | b0 s0      | b0 s1      | b0 s2      | b0 s3      | b1 s0      | ..
 *   +------------+------------+------------+------------+------------+--
 *   bit 0        12           24           36           48   (64: next word)
 *
 * Because i2 depends on i1 and the fingerprint only (partial-key cuckoo
 * hashing), a resident fingerprint can be moved to its other bucket without
 * knowing its key. alt is an involution and never fixes a bucket, so every
 * key has two distinct buckets; L is the table size for a cuckoo filter and
 * a smaller chunk for a vacuum filter (cuckoo_table.h).
 *
 * Insert: an empty slot in i1, else in i2, else a random walk: evict a
 * slot's fingerprint from the current bucket, carry it to its alternate
 * bucket, repeat up to max_kicks times. The walk is a deterministic function
 * of (h, step, bucket), and every step is a swap whose inverse is known
 * (the previous bucket is alt(current bucket, carried fingerprint)), so a
 * walk that fails is undone step by step without recording it: AMQ_ERR_FULL
 * leaves the table bit-for-bit as it was and no victim is ever lost.
 * Duplicates are stored as copies, so a key can be held at most 8 times
 * (two buckets of four); the ninth add fails with AMQ_ERR_FULL.
 *
 * Invariants: m in [2, 2^31]; 4 <= f <= 32; every range is a power of two
 * >= 2 dividing m; `items` equals the number of non-zero slots (checked on
 * load); the bits after the last slot are zero.
 *
 * False positives. An absent key x with fingerprint φ and buckets {a, a'}
 * is reported iff some stored key y has fp(y) = φ and i1(y) ∈ {a, a'}:
 * equal fingerprints give equal deltas, so then y's own pair is {a, a'} and
 * y sits in one of them — wherever the walks moved it. Under a uniform hash
 * fp and i1 are independent, P(fp(y) = φ) <= q = ceil(2^32/(2^f-1))/2^32
 * and P(i1(y) ∈ {a, a'}) <= p2 = 2 ceil(2^32/m)/2^32, independently for each
 * distinct key, so
 *     P(fp) <= 1 - (1 - q p2)^distinct <= 1 - (1 - q p2)^items,
 * which is the certified bound (exact for distinct keys in the hash model;
 * ~ 8 α 2^-f at load α). It does not depend on where keys were placed.
 *
 * Bucket compare: a bucket is 4f <= 128 bits; f <= 16 reads it as one
 * 64-bit word, f > 16 as two, and tests all lanes for the fingerprint with
 * the zero-lane trick ((x - lo) & ~x & hi) on x = word ^ (fp * lo). The
 * scalar per-slot loop is the reference (AMQ_OPT_SCALAR), and f = 8, 16
 * get their own instance of the same inline code with f a constant.
 *
 * Failure modes: construction fails cleanly (bad arguments, overflow,
 * allocation); add returns AMQ_ERR_FULL with the table unchanged; removing
 * a key that was never added may remove another key's copy (see header).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/bits.h"
#include "fingerprint/cuckoo_table.h"

#define SLOTS AMQ_CUCKOO_SLOTS
#define BATCH 16
#define PARAMS_LEN 40

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

INLINE uint32_t alt_bucket(const amq__ctab *t, uint32_t b, uint32_t fp) {
    uint64_t m = amq__mix64(fp);
    uint32_t range = t->range[m & 3];
    return b ^ (1 + amq__reduce32((uint32_t)(m >> 32), range - 1));
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

/* ---- insertion ------------------------------------------------------------ */

/* The slot a walk evicts at `step` in bucket b: a pure function, so the
 * walk can be replayed backwards. */
static unsigned kick_slot(uint64_t h, unsigned step, uint32_t b) {
    return (unsigned)(amq__mix64(h ^ (((uint64_t)step << 32) | b)) >> 62);
}

/* Random walk from bucket b carrying fp; on failure undo every swap. */
static amq_status kick(amq__ctab *t, uint64_t h, uint32_t b, uint32_t fp) {
    uint32_t cur = fp;
    unsigned step;
    for (step = 0; step < t->max_kicks; step++) {
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

amq_status amq_cuckoo_add_hash(amq_cuckoo *t, uint64_t h) {
    key_loc k = locate(t, h, t->fbits);
    amq_status st = AMQ_OK;
    if (!place(t, k.b1, k.fp) && !place(t, k.b2, k.fp))
        st = kick(t, h, (amq__mix64(~h) & 1) ? k.b2 : k.b1, k.fp);
    if (st == AMQ_OK)
        t->items++;
    return st;
}

/* ---- queries ---------------------------------------------------------------- */

INLINE bool lookup(const amq__ctab *t, uint64_t h, unsigned f) {
    key_loc k = locate(t, h, f);
    return bucket_has(t->rd, k.b1, k.fp, f) || bucket_has(t->rd, k.b2, k.fp, f);
}

static bool lookup_scalar(const amq__ctab *t, uint64_t h) {
    key_loc k = locate(t, h, t->fbits);
    return bucket_has_scalar(t, k.b1, k.fp) || bucket_has_scalar(t, k.b2, k.fp);
}

bool amq_cuckoo_contains_hash(const amq_cuckoo *t, uint64_t h) {
    if (t->scalar)
        return lookup_scalar(t, h);
    switch (t->fbits) {
    case 8: return lookup(t, h, 8);
    case 16: return lookup(t, h, 16);
    default: return lookup(t, h, t->fbits);
    }
}

static void prefetch_bucket(const amq__ctab *t, uint32_t b) {
    uint64_t pos = slot_pos(b, 0, t->fbits);
    amq__prefetch(&t->rd[pos >> 6]);
    amq__prefetch(&t->rd[(pos + SLOTS * t->fbits - 1) >> 6]);
}

/* Locate a group of keys and prefetch both buckets of each before testing
 * any, so the group's cache misses overlap. */
static void batch_group(const amq__ctab *t, const uint64_t *h, size_t n,
                        uint8_t *out) {
    key_loc k[BATCH];
    unsigned f = t->fbits;
    for (size_t j = 0; j < n; j++) {
        k[j] = locate(t, h[j], f);
        prefetch_bucket(t, k[j].b1);
        prefetch_bucket(t, k[j].b2);
    }
    for (size_t j = 0; j < n; j++) {
        if (t->scalar)
            out[j] = bucket_has_scalar(t, k[j].b1, k[j].fp) ||
                     bucket_has_scalar(t, k[j].b2, k[j].fp);
        else
            out[j] = bucket_has(t->rd, k[j].b1, k[j].fp, f) ||
                     bucket_has(t->rd, k[j].b2, k[j].fp, f);
    }
}

void amq_cuckoo_contains_batch(const amq_cuckoo *t, const uint64_t *h,
                               size_t n, uint8_t *out) {
    for (size_t i = 0; i < n; i += BATCH)
        batch_group(t, h + i, n - i < BATCH ? n - i : BATCH, out + i);
}

amq_status amq_cuckoo_remove_hash(amq_cuckoo *t, uint64_t h) {
    key_loc k = locate(t, h, t->fbits);
    if (!take(t, k.b1, k.fp) && !take(t, k.b2, k.fp))
        return AMQ_ERR_NOT_FOUND;
    t->items--;
    return AMQ_OK;
}

uint64_t amq_cuckoo_count_hash(const amq_cuckoo *t, uint64_t h) {
    key_loc k = locate(t, h, t->fbits);
    return bucket_count(t, k.b1, k.fp) + bucket_count(t, k.b2, k.fp);
}

/* ---- properties -------------------------------------------------------------- */

uint64_t amq_cuckoo_items(const amq_cuckoo *t) { return t->items; }
uint64_t amq_cuckoo_buckets(const amq_cuckoo *t) { return t->buckets; }
unsigned amq_cuckoo_fp_bits(const amq_cuckoo *t) { return t->fbits; }

void amq_cuckoo_ranges(const amq_cuckoo *t, uint64_t ranges[4]) {
    for (unsigned i = 0; i < AMQ__CT_RANGES; i++)
        ranges[i] = t->range[i];
}

double amq_cuckoo_load(const amq_cuckoo *t) {
    return (double)t->items / ((double)t->buckets * SLOTS);
}

size_t amq_cuckoo_size_bytes(const amq_cuckoo *t) {
    return (size_t)(t->nwords * 8);
}

double amq_cuckoo_fpr_bound(const amq_cuckoo *t) {
    double p = fp_match_prob(t->fbits) * pair_prob(t->buckets);
    if (t->items == 0)
        return 0.0;
    return -expm1((double)t->items * log1p(-p));
}

/* ---- construction ------------------------------------------------------------ */

uint64_t amq__ctab_words(uint64_t buckets, unsigned fbits) {
    if (buckets > AMQ_CUCKOO_MAX_BUCKETS || fbits > AMQ_CUCKOO_MAX_FP)
        return 0;
    return (buckets * SLOTS * fbits + 63) / 64;
}

static bool is_pow2(uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }

static bool shape_ok(uint64_t buckets, unsigned fbits,
                     const uint32_t range[AMQ__CT_RANGES], unsigned kicks) {
    if (buckets < 2 || buckets > AMQ_CUCKOO_MAX_BUCKETS ||
        fbits < AMQ_CUCKOO_MIN_FP || fbits > AMQ_CUCKOO_MAX_FP ||
        kicks > AMQ_CUCKOO_MAX_KICKS)
        return false;
    for (unsigned i = 0; i < AMQ__CT_RANGES; i++)
        if (!is_pow2(range[i]) || range[i] < 2 || range[i] > range[0] ||
            buckets % range[i] != 0)
            return false;
    return true;
}

amq_status amq__ctab_new(uint64_t buckets, unsigned fbits,
                         const uint32_t range[AMQ__CT_RANGES],
                         unsigned max_kicks, const amq_options *opt,
                         const uint64_t *borrow, amq__ctab **out) {
    amq__mem mem;
    amq__ctab *t;
    size_t bytes;
    if (!shape_ok(buckets, fbits, range, max_kicks))
        return AMQ_ERR_INVALID;
    uint64_t nwords = amq__ctab_words(buckets, fbits);
    if (nwords == 0 || !amq__mul((size_t)nwords, 8, &bytes))
        return AMQ_ERR_OVERFLOW;
    amq__mem_init(&mem, opt);
    t = amq__zalloc(&mem, sizeof *t);
    if (t == NULL)
        return AMQ_ERR_NOMEM;
    t->mem = mem;
    t->nwords = nwords;
    t->buckets = (uint32_t)buckets;
    memcpy(t->range, range, sizeof t->range);
    t->fbits = fbits;
    t->max_kicks = max_kicks;
    t->scalar = opt != NULL && (opt->flags & AMQ_OPT_SCALAR);
    if (borrow != NULL) {
        t->rd = borrow;
    } else {
        amq_status st = amq__block_alloc(&mem, bytes, 64, &t->table);
        if (st != AMQ_OK) {
            amq__free(&mem, t, sizeof *t);
            return st;
        }
        t->wr = t->table.ptr;
        t->rd = t->wr;
    }
    *out = t;
    return AMQ_OK;
}

void amq_cuckoo_free(amq_cuckoo *t) {
    if (t == NULL)
        return;
    amq__mem mem = t->mem;
    if (t->table.raw != NULL)
        amq__block_free(&mem, &t->table);
    amq__free(&mem, t, sizeof *t);
}

/* The first failure of a random-walk table of m buckets comes at a load
 * that is ~0.955-0.97 for large m and spreads lower for small m (measured,
 * docs/parts/cuckoo.md): keep capacity below the design load, with extra
 * room for small tables (the 3.5/sqrt(slots) term). */
amq_status amq__ctab_slots_for(uint64_t capacity, uint64_t *buckets) {
    if (capacity == 0)
        return AMQ_ERR_INVALID;
    double n = (double)capacity;
    double slots = n / AMQ__CT_DESIGN_LOAD + 3.5 * sqrt(n) + 8.0;
    double m = ceil(slots / SLOTS);
    if (!(m <= (double)AMQ_CUCKOO_MAX_BUCKETS))
        return AMQ_ERR_OVERFLOW;
    *buckets = m < 2 ? 2 : (uint64_t)m;
    return AMQ_OK;
}

static uint64_t next_pow2(uint64_t x) {
    uint64_t p = 1;
    while (p < x)
        p <<= 1;
    return p;
}

static void single_range(uint64_t buckets, uint32_t range[AMQ__CT_RANGES]) {
    for (unsigned i = 0; i < AMQ__CT_RANGES; i++)
        range[i] = (uint32_t)buckets;
}

amq_status amq_cuckoo_new_explicit(uint64_t buckets, unsigned fp_bits,
                                   unsigned max_kicks, const amq_options *opt,
                                   amq_cuckoo **out) {
    uint32_t range[AMQ__CT_RANGES];
    if (out == NULL)
        return AMQ_ERR_INVALID;
    *out = NULL;
    if (!is_pow2(buckets) || buckets > AMQ_CUCKOO_MAX_BUCKETS)
        return AMQ_ERR_INVALID;
    single_range(buckets, range);
    return amq__ctab_new(buckets, fp_bits, range, max_kicks, opt, NULL, out);
}

static amq_status cuckoo_shape(uint64_t capacity, uint64_t *buckets) {
    uint64_t m;
    AMQ_RETURN_IF_ERR(amq__ctab_slots_for(capacity, &m));
    m = next_pow2(m);
    if (m > AMQ_CUCKOO_MAX_BUCKETS)
        return AMQ_ERR_OVERFLOW;
    *buckets = m;
    return AMQ_OK;
}

amq_status amq_cuckoo_new(uint64_t capacity, double fpr, const amq_options *opt,
                          amq_cuckoo **out) {
    uint64_t m;
    unsigned f = amq_cuckoo_fp_bits_for(fpr);
    if (out == NULL)
        return AMQ_ERR_INVALID;
    *out = NULL;
    if (f == 0)
        return AMQ_ERR_INVALID;
    AMQ_RETURN_IF_ERR(cuckoo_shape(capacity, &m));
    return amq_cuckoo_new_explicit(m, f, AMQ_CUCKOO_DEFAULT_KICKS, opt, out);
}

/* ---- spec helpers (shared with vacuum.c) ------------------------------------ */

amq_status amq__ctab_spec_fp(amq__spec *spec, double fpr, unsigned *fbits,
                             amq_diag *diag) {
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
    *fbits = amq_cuckoo_fp_bits_for(fpr);
    if (*fbits == 0)
        return amq__diag(diag, AMQ_ERR_INVALID, 0,
                         "fpr %g is outside (0, 1) or below what 32-bit "
                         "fingerprints reach", fpr);
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

/* ---- the generic interface (shared callbacks) ------------------------------- */

void amq__ctab_t_destroy(void *impl) { amq_cuckoo_free(impl); }
amq_status amq__ctab_t_add(void *impl, uint64_t h) {
    return amq_cuckoo_add_hash(impl, h);
}
bool amq__ctab_t_contains(const void *impl, uint64_t h) {
    return amq_cuckoo_contains_hash(impl, h);
}
void amq__ctab_t_batch(const void *impl, const uint64_t *h, size_t n,
                       uint8_t *out) {
    amq_cuckoo_contains_batch(impl, h, n, out);
}
amq_status amq__ctab_t_remove(void *impl, uint64_t h) {
    return amq_cuckoo_remove_hash(impl, h);
}
amq_status amq__ctab_t_count(const void *impl, uint64_t h, uint64_t *out) {
    *out = amq_cuckoo_count_hash(impl, h);
    return AMQ_OK;
}
uint64_t amq__ctab_t_items(const void *impl) {
    return ((const amq__ctab *)impl)->items;
}
size_t amq__ctab_t_size(const void *impl) { return amq_cuckoo_size_bytes(impl); }
double amq__ctab_t_bound(const void *impl) { return amq_cuckoo_fpr_bound(impl); }

/* Curve: a table at load α with f-bit fingerprints has b = f / α bits per
 * key and rate 1 - exp(-8 α q_f). With fp= fixed, α = f / b; without it the
 * ideal real-valued f = α b at the design load (q = 1 / (2^f - 1)). */
static amq_status curve_spec(amq__spec *spec, uint64_t *f, amq_diag *diag) {
    uint64_t ignored;
    *f = 0;
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "fp", AMQ_CUCKOO_MIN_FP,
                                    AMQ_CUCKOO_MAX_FP, f, NULL, diag));
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "buckets", 0, UINT64_MAX, &ignored,
                                    NULL, diag));
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "max_kicks", 0, UINT64_MAX,
                                    &ignored, NULL, diag));
    return amq__spec_u64(spec, "chunk", 0, UINT64_MAX, &ignored, NULL, diag);
}

amq_status amq__ctab_curve_fpr(amq__spec *spec, double bpk, double *out,
                               amq_diag *diag) {
    uint64_t f;
    const double a = AMQ__CT_DESIGN_LOAD;
    AMQ_RETURN_IF_ERR(curve_spec(spec, &f, diag));
    if (f != 0)
        *out = -expm1(-2.0 * SLOTS * (double)f * fp_match_prob((unsigned)f) /
                      bpk);
    else
        *out = -expm1(-2.0 * SLOTS * a / expm1(a * bpk * M_LN2));
    return AMQ_OK;
}

amq_status amq__ctab_curve_bits(amq__spec *spec, double fpr, double *out,
                                amq_diag *diag) {
    uint64_t f;
    const double a = AMQ__CT_DESIGN_LOAD;
    AMQ_RETURN_IF_ERR(curve_spec(spec, &f, diag));
    double y = -log1p(-fpr); /* = 8 α q */
    if (f != 0)
        *out = 2.0 * SLOTS * (double)f * fp_match_prob((unsigned)f) / y;
    else
        *out = log2(1.0 + 2.0 * SLOTS * a / y) / a;
    return AMQ_OK;
}

/* params: buckets u64 | fp bits u32 | max_kicks u32 | range[4] u32 |
 *         items u64 */
size_t amq__ctab_t_params_size(const void *impl) {
    (void)impl;
    return PARAMS_LEN;
}

void amq__ctab_t_params_write(const void *impl, uint8_t *p) {
    const amq__ctab *t = impl;
    amq__put_u64(p, t->buckets);
    amq__put_u32(p + 8, t->fbits);
    amq__put_u32(p + 12, t->max_kicks);
    for (unsigned i = 0; i < AMQ__CT_RANGES; i++)
        amq__put_u32(p + 16 + 4 * i, t->range[i]);
    amq__put_u64(p + 32, t->items);
}

size_t amq__ctab_t_payload_size(const void *impl) {
    return amq_cuckoo_size_bytes(impl);
}

void amq__ctab_t_payload_write(const void *impl, uint8_t *dst) {
    const amq__ctab *t = impl;
    memcpy(dst, t->rd, (size_t)(t->nwords * 8));
}

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

static amq_status load_shape(const uint8_t *p, const amq__ctab_kind *kind,
                             uint64_t *buckets, unsigned *f, unsigned *kicks,
                             uint32_t range[AMQ__CT_RANGES], amq_diag *diag) {
    *buckets = amq__get_u64(p);
    *f = amq__get_u32(p + 8);
    *kicks = amq__get_u32(p + 12);
    for (unsigned i = 0; i < AMQ__CT_RANGES; i++)
        range[i] = amq__get_u32(p + 16 + 4 * i);
    if (!shape_ok(*buckets, *f, range, *kicks))
        return amq__diag(diag, AMQ_ERR_CORRUPT, 64, "%s shape out of range: "
                         "%llu buckets, %u-bit fingerprints, ranges %u/%u/"
                         "%u/%u", kind->name, (unsigned long long)*buckets,
                         *f, range[0], range[1], range[2], range[3]);
    if (!kind->ranges_ok(*buckets, range))
        return amq__diag(diag, AMQ_ERR_CORRUPT, 80, "ranges %u/%u/%u/%u are "
                         "not those of a %s table of %llu buckets", range[0],
                         range[1], range[2], range[3], kind->name,
                         (unsigned long long)*buckets);
    return AMQ_OK;
}

amq_status amq__ctab_load(const uint8_t *p, size_t plen,
                          const uint8_t *payload, size_t len, bool view,
                          const amq_options *opt, const amq__ctab_kind *kind,
                          void **impl, amq_diag *diag) {
    uint64_t buckets, items;
    unsigned f, kicks;
    uint32_t range[AMQ__CT_RANGES];
    amq__ctab *t;
    if (plen != PARAMS_LEN)
        return amq__diag(diag, AMQ_ERR_CORRUPT, 64, "%s parameters: %zu bytes,"
                         " expected %d", kind->name, plen, PARAMS_LEN);
    AMQ_RETURN_IF_ERR(load_shape(p, kind, &buckets, &f, &kicks, range, diag));
    items = amq__get_u64(p + 32);
    uint64_t nwords = amq__ctab_words(buckets, f);
    if (nwords == 0 || nwords > SIZE_MAX / 8 || nwords * 8 != len)
        return amq__diag(diag, AMQ_ERR_CORRUPT, 64, "table of %llu buckets "
                         "does not match a %zu-byte payload",
                         (unsigned long long)buckets, len);
    if (payload_items(payload, nwords, buckets, f) != items)
        return amq__diag(diag, AMQ_ERR_CORRUPT, 96, "item count %llu does "
                         "not match the table's occupied slots",
                         (unsigned long long)items);
    AMQ_RETURN_IF_ERR(amq__ctab_new(buckets, f, range, kicks, opt,
                                    view ? (const uint64_t *)payload : NULL,
                                    &t));
    if (!view)
        memcpy(t->wr, payload, len);
    t->items = items;
    *impl = t;
    return AMQ_OK;
}

/* ---- the cuckoo type --------------------------------------------------------- */

static amq_status t_create(amq__spec *spec, uint64_t capacity, double fpr,
                           const amq_options *opt, void **impl,
                           amq_diag *diag) {
    uint64_t m = 0;
    bool has_m;
    unsigned f, kicks;
    AMQ_RETURN_IF_ERR(amq__ctab_spec_fp(spec, fpr, &f, diag));
    AMQ_RETURN_IF_ERR(amq__ctab_spec_kicks(spec, &kicks, diag));
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "buckets", 2,
                                    AMQ_CUCKOO_MAX_BUCKETS, &m, &has_m, diag));
    if (has_m && !is_pow2(m))
        return amq__diag(diag, AMQ_ERR_SPEC, 0, "cuckoo buckets=%llu is not "
                         "a power of two (vacuum takes any multiple of its "
                         "chunk)", (unsigned long long)m);
    if (!has_m) {
        if (capacity == 0)
            return amq__diag(diag, AMQ_ERR_SPEC, 0,
                             "cuckoo needs a capacity, or buckets=N");
        amq_status st = cuckoo_shape(capacity, &m);
        if (st != AMQ_OK)
            return amq__diag(diag, st, 0, "capacity %llu: %s",
                             (unsigned long long)capacity, amq_strerror(st));
    }
    return amq_cuckoo_new_explicit(m, f, kicks, opt, (amq_cuckoo **)impl);
}

static size_t t_describe(const void *impl, char *buf, size_t cap) {
    const amq__ctab *t = impl;
    int n = snprintf(buf, cap, "fp=%u,buckets=%u,max_kicks=%u", t->fbits,
                     t->buckets, t->max_kicks);
    return n > 0 ? (size_t)n : 0;
}

/* A cuckoo table is one power-of-two chunk. */
static bool cuckoo_ranges_ok(uint64_t buckets, const uint32_t range[4]) {
    for (unsigned i = 0; i < AMQ__CT_RANGES; i++)
        if (range[i] != buckets)
            return false;
    return is_pow2(buckets);
}

static const amq__ctab_kind cuckoo_kind = {"cuckoo", cuckoo_ranges_ok};

static amq_status t_load(const uint8_t *p, size_t plen, const uint8_t *payload,
                         size_t len, bool view, const amq_options *opt,
                         void **impl, amq_diag *diag) {
    return amq__ctab_load(p, plen, payload, len, view, opt, &cuckoo_kind, impl,
                          diag);
}

const amq__type amq__type_cuckoo = {
    .info = {.name = "cuckoo",
             .type_id = 100,
             .caps = AMQ_CAP_REMOVE | AMQ_CAP_COUNT,
             .summary = "cuckoo filter, buckets of 4, partial-key cuckoo "
                        "hashing (Fan et al. 2014)",
             .params = "fp=BITS (4-32, default ceil(log2(8/fpr))), "
                       "buckets=N (power of two, instead of capacity), "
                       "max_kicks=N (evictions per insert, default 500)",
             .default_hash = AMQ_HASH_XXH3},
    .create = t_create,
    .destroy = amq__ctab_t_destroy,
    .add = amq__ctab_t_add,
    .contains = amq__ctab_t_contains,
    .contains_batch = amq__ctab_t_batch,
    .remove = amq__ctab_t_remove,
    .count = amq__ctab_t_count,
    .items = amq__ctab_t_items,
    .size_bytes = amq__ctab_t_size,
    .fpr_bound = amq__ctab_t_bound,
    .describe = t_describe,
    .curve_fpr = amq__ctab_curve_fpr,
    .curve_bits = amq__ctab_curve_bits,
    .params_size = amq__ctab_t_params_size,
    .params_write = amq__ctab_t_params_write,
    .payload_size = amq__ctab_t_payload_size,
    .payload_write = amq__ctab_t_payload_write,
    .load = t_load,
};
