/*
 * counters.h — the counter array shared by the counting Bloom filter
 * (counting.c) and the spectral Bloom filter (spectral.c).
 *
 * Both structures are m small counters addressed by k probes of one 64-bit
 * key hash; they differ only in how an insert changes the counters and what
 * a query reads from them. What they share lives here: the packed array, the
 * probes, sticky saturation, the bookkeeping behind the certified bound, the
 * sizing and FPR curve, and the serialised parameter block.
 *
 *   words[0] (width 4: sixteen counters per 64-bit word)    words[1]
 *   +----+----+----+----+-- ... --+----+   +----+----+-- ... --+----+
 *   | c0 | c1 | c2 | c3 |         |c15 |   |c16 |c17 |         |c31 |
 *   +----+----+----+----+-- ... --+----+   +----+----+-- ... --+----+
 *   bit 0 ...                     bit 63
 *
 * Counter i sits at bits [(i mod per)·w, +w) of word ⌊i/per⌋, per = 64/w,
 * w in {4, 8, 16, 32}: one implementation for every width, no counter ever
 * straddles two words.
 *
 * Two layouts of the same packed array (`layout=`, AMQ__CTR_CLASSIC or
 * AMQ__CTR_BLOCKED):
 *
 *   classic  probe j of hash h is counter reduce((h · A_j) mod 2^64, m), A_j
 *            odd multipliers drawn from splitmix64 at a fixed seed when the
 *            array is made (c->mul; part of the file format):
 *            independent multiply-shift probes, not double hashing, for the
 *            reason bloom.c gives. k random cache lines per key.
 *   blocked  the array is B blocks of 64 bytes (one cache line, C = 512/w
 *            counters: 128 of 4 bits, 64 of 8, 32 of 16, 16 of 32); the
 *            high 32 bits of h pick the block by multiply-shift (all of h
 *            past 2^32 blocks), and probe j is counter
 *            ((uint32_t)h · SALT_j mod 2^32) >> (32 − log2 C) inside it,
 *            SALT_j sixteen odd 32-bit constants (amq__ctr_salt). One cache
 *            line per key; k <= 16.
 *
 *   block b = words[8b .. 8b+7]                 (width 4: 128 counters)
 *   +------------------+------------------+-- ... --+------------------+
 *   | c0 c1 ... c15    | c16 ... c31      |         | c112 ... c127    |
 *   +------------------+------------------+-- ... --+------------------+
 *
 * Either way counter i of the array is the same packed field, so every
 * update and query below goes through amq__ctr_probe (the layout's global
 * counter index) and the packed get/set; the blocked kernels in counters.c
 * are faster paths to the same answers, tested against that reference.
 *
 * Saturation (how the literature since Fan et al. 2000 treats the rare
 * overflow): a counter that reaches max = 2^w − 1 is never incremented or
 * decremented again. It stays nonzero forever, so a
 * saturated counter can never cause a false negative; it can only keep a
 * false positive alive after every key on it is removed.
 *
 * Invariants: m > 0 and a multiple of per (classic) or of C (blocked: m =
 * B·C); 1 <= k <= AMQ__CTR_MAX_K (16 when blocked);
 * `nonzero` and `saturated` equal the numbers of nonzero and of saturated
 * counters (kept exact on every update, recomputed after merge and load).
 */
#ifndef AMQ_SRC_BLOOM_COUNTERS_H
#define AMQ_SRC_BLOOM_COUNTERS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/bits.h"
#include "core/mem.h"
#include "core/spec.h"
#include "type/type.h"

#define AMQ__CTR_MAX_K 32
#define AMQ__CTR_BLOCK_MAX_K 16
#define AMQ__CTR_BLOCK_WORDS 8

enum { AMQ__CTR_CLASSIC = 0, AMQ__CTR_BLOCKED = 1 };

typedef struct amq__ctr amq__ctr;
typedef void amq__ctr_batch_fn(const amq__ctr *c, const uint64_t *h, size_t n,
                               uint8_t *out);

struct amq__ctr {
    amq__obj o; /* o.items counts adds minus removes; o.table; o.contains */
    uint64_t *words;
    uint64_t m;     /* counters */
    unsigned width; /* bits per counter: 4, 8, 16 or 32 */
    unsigned lw;    /* log2(width) */
    unsigned k;
    unsigned layout;  /* AMQ__CTR_CLASSIC or AMQ__CTR_BLOCKED */
    unsigned bshift;  /* blocked: 32 - log2(counters per block) */
    uint64_t nblocks; /* blocked: m / counters per block */
    uint64_t max;     /* 2^width - 1: the sticky value */
    uint64_t nonzero;
    uint64_t saturated;
    amq__ctr_batch_fn *batch; /* the batch query of o.contains' kind */
    uint16_t live16;          /* blocked kernels: lane j live when j < k */
    int32_t live32[AMQ__CTR_BLOCK_MAX_K]; /* the same as 32-bit lanes */
    bool reference; /* AMQ_OPT_SCALAR: updates too take the reference loop */
    uint64_t mul[AMQ__CTR_MAX_K];
};

/* The blocked layout's in-block multipliers (counters.c; part of the file
 * format). */
extern const uint32_t amq__ctr_salt[AMQ__CTR_BLOCK_MAX_K];

/* Blocked: the block of hash h. */
static inline uint64_t amq__ctr_block(const amq__ctr *c, uint64_t h) {
    if (c->nblocks <= UINT32_MAX)
        return amq__reduce32((uint32_t)(h >> 32), (uint32_t)c->nblocks);
    return amq__reduce64(h, c->nblocks);
}

/* Blocked: probe j's counter inside its block. */
static inline unsigned amq__ctr_slot(const amq__ctr *c, uint64_t h,
                                     unsigned j) {
    return (unsigned)(((uint32_t)h * amq__ctr_salt[j]) >> c->bshift);
}

/* Probe j of h as an index into the whole array, for either layout: the
 * reference every faster path is tested against. */
static inline uint64_t amq__ctr_probe(const amq__ctr *c, uint64_t h,
                                      unsigned j) {
    if (c->layout == AMQ__CTR_BLOCKED)
        return (amq__ctr_block(c, h) << (32 - c->bshift)) +
               amq__ctr_slot(c, h, j);
    return amq__reduce64(h * c->mul[j], c->m);
}

static inline const uint64_t *amq__ctr_word(const amq__ctr *c, uint64_t i) {
    return &c->words[i >> (6 - c->lw)];
}

static inline uint64_t amq__ctr_get(const amq__ctr *c, uint64_t i) {
    unsigned sh = (unsigned)(i & ((64u >> c->lw) - 1)) << c->lw;
    return (*amq__ctr_word(c, i) >> sh) & c->max;
}

static inline void amq__ctr_set(amq__ctr *c, uint64_t i, uint64_t v) {
    unsigned sh = (unsigned)(i & ((64u >> c->lw) - 1)) << c->lw;
    uint64_t *w = &c->words[i >> (6 - c->lw)];
    *w = (*w & ~(c->max << sh)) | (v << sh);
}

/* Sticky increment of counter i, keeping nonzero/saturated exact. Returns
 * whether the counter changed. */
static inline bool amq__ctr_inc(amq__ctr *c, uint64_t i) {
    uint64_t v = amq__ctr_get(c, i);
    if (v == c->max)
        return false;
    amq__ctr_set(c, i, v + 1);
    c->nonzero += v == 0;
    c->saturated += v + 1 == c->max;
    return true;
}

/* Blocked: the key's block, and counter p (< 512/width) of a block. */
static inline uint64_t *amq__ctr_block_at(const amq__ctr *c, uint64_t h) {
    return c->words + AMQ__CTR_BLOCK_WORDS * amq__ctr_block(c, h);
}

static inline uint64_t amq__ctr_block_get(const amq__ctr *c,
                                          const uint64_t *blk, unsigned p) {
    unsigned sh = (p & ((64u >> c->lw) - 1)) << c->lw;
    return (blk[p >> (6 - c->lw)] >> sh) & c->max;
}

/* Sticky increment of counter p of the block, as amq__ctr_inc. */
static inline void amq__ctr_block_inc(amq__ctr *c, uint64_t *blk, unsigned p) {
    unsigned sh = (p & ((64u >> c->lw) - 1)) << c->lw;
    uint64_t *w = &blk[p >> (6 - c->lw)];
    uint64_t v = (*w >> sh) & c->max;
    if (v == c->max)
        return;
    *w += UINT64_C(1) << sh;
    c->nonzero += v == 0;
    c->saturated += v + 1 == c->max;
}

/* A new object of self_bytes (>= sizeof(amq__ctr), the array first) with
 * m counters of `width` bits (m rounded up to fill whole words, or whole
 * blocks), k probes and the layout; the table is zeroed, or `borrow`
 * read-only for a view. The query kernels are chosen here (AMQ_OPT_SCALAR:
 * the reference). AMQ_ERR_INVALID / AMQ_ERR_OVERFLOW / AMQ_ERR_NOMEM. */
amq_status amq__ctr_new(size_t self_bytes, uint64_t m, unsigned width,
                        unsigned k, unsigned layout, const amq_options *opt,
                        const uint64_t *borrow, amq__ctr **out);

/* Smallest of the key's k counters (0 at the first zero). */
uint64_t amq__ctr_min(const amq__ctr *c, uint64_t h);

/* ---- type callbacks shared by counting and spectral --------------------- */

/* Each takes an object that starts with its amq__ctr, and has the slot's
 * signature in amq__type (type/type.h), so a descriptor points at it. */

/* Increment all k counters (Fan et al.; spectral minimum selection).
 * Always AMQ_OK: a saturated counter just stays. */
amq_status amq__ctr_add(amq__obj *o, uint64_t h);
/* add of h[0..n), the lines of keys a few places ahead prefetched. */
amq_status amq__ctr_add_batch(amq__obj *o, const uint64_t *h, size_t n,
                              size_t *done);
/* The same around another insert rule (spectral's minimal increase). */
void amq__ctr_add_batch_with(amq__ctr *c, const uint64_t *h, size_t n,
                             void (*add)(amq__ctr *c, uint64_t h));
/* Undo add: AMQ_ERR_NOT_FOUND (and no change) if a probe reads 0. */
amq_status amq__ctr_remove(amq__obj *o, uint64_t h);
/* Every one of the key's counters nonzero: the reference query (the
 * descriptor's contains; o.contains is the kernel chosen for the shape). */
bool amq__ctr_contains(const amq__obj *o, uint64_t h);
/* The batch kernel of the shape (c->batch), prefetching ahead. */
void amq__ctr_contains_batch(const amq__obj *o, const uint64_t *h, size_t n,
                             uint8_t *out);
/* The minimum as a multiplicity: UINT64_MAX when it is saturated (then the
 * true count is at least max and unknown). */
amq_status amq__ctr_count(const amq__obj *o, uint64_t h, uint64_t *out);
/* dst += src counter-wise, saturating: the filter of the multiset union
 * (union only: the caps keep intersect away). AMQ_ERR_INCOMPATIBLE unless
 * m, k, width and layout agree. */
amq_status amq__ctr_merge(amq__obj *dst, const amq__obj *src, amq__merge_op op);
/* Classic: -(m/k) ln(1 - X/m), X the nonzero counters; blocked: the same
 * per block, summed. */
amq_status amq__ctr_estimate(const amq__obj *o, double *out);
/* Classic: (X/m)^k. Blocked: ceil(2^32/B)/2^32 · sum_b (X_b/C)^k over the
 * blocks' nonzero counts X_b (docs/structures.md, counting). */
double amq__ctr_fpr_bound(const amq__obj *o);

/* ---- sizing and curve -------------------------------------------------- */

/* The layout a spec asks for (layout=blocked|classic); without one,
 * blocked for widths 4 and 8, classic for 16 and 32 (whose blocks hold too
 * few counters to pay: docs/structures.md, counting). */
amq_status amq__ctr_spec_layout(amq__spec *spec, unsigned width,
                                unsigned *layout, amq_diag *diag);
/* The FPR curve at `bits` bits per key with k probes (0: the best k), and
 * its inverse, for counters of `width` bits in the layout. */
double amq__ctr_curve_fpr(double bits, unsigned width, unsigned layout,
                          unsigned k);
double amq__ctr_curve_bits(double fpr, unsigned width, unsigned layout,
                           unsigned k);
/* Read k= and m= from a spec and resolve the shape for the width and
 * layout: m given, or m and k (k unless given) for capacity keys at fpr. */
amq_status amq__ctr_spec_shape(amq__spec *spec, uint64_t capacity, double fpr,
                               unsigned width, unsigned layout, unsigned *k,
                               uint64_t *m, const char *name, amq_diag *diag);
/* The curve callback of counting and spectral: width from the caller
 * (already read), layout= and k= from the spec. */
amq_status amq__ctr_curve(amq__spec *spec, unsigned width, double x,
                          bool inverse, double *out, amq_diag *diag);

/* ---- serialisation ------------------------------------------------------ */

/* The common parameter block: m u64 (counters) | k u32 | width u32 |
 * items u64. */
#define AMQ__CTR_PARAMS 24
typedef struct amq__ctr_shape {
    uint64_t m, items;
    unsigned k, width, layout;
    size_t at_m, at_k; /* frame offsets of m and k, for diagnostics */
} amq__ctr_shape;

/* The common block (counting writes it alone for a classic filter). */
void amq__ctr_params_write(const amq__obj *o, amq__wr *w);
/* Read the common block; width_ok has bit w set for each allowed width.
 * Checks the width and the probe count's range; s->layout is set to
 * classic (a type with a layout word reads it next). */
amq_status amq__ctr_params_read(amq__rd *r, uint64_t width_ok,
                                amq__ctr_shape *s);
/* Read a layout word (0 classic, 1 blocked) into s->layout. */
amq_status amq__ctr_layout_read(amq__rd *r, amq__ctr_shape *s);
/* What depends on the layout: k <= 16 when blocked, and m a whole number
 * of words (blocks) matching a payload of payload_len bytes. */
amq_status amq__ctr_shape_check(const amq__rd *r, size_t payload_len,
                                const amq__ctr_shape *s);
/* The object of a validated shape with its table from the payload (copied,
 * or borrowed for a view). */
amq_status amq__ctr_open(size_t self_bytes, const amq__ctr_shape *s,
                         const uint8_t *payload, size_t len, bool view,
                         const amq_options *opt, amq__ctr **out);

#endif
