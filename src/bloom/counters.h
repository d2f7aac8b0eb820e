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
 * Probes: probe j of hash h is counter reduce((h · A_j) mod 2^64, m), A_j odd
 * multipliers drawn from splitmix64 at a fixed seed when the array is made
 * (amq__ctr_muls; they are part of the file format). Independent
 * multiply-shift probes, not double hashing, for the reason bloom.c gives.
 *
 * Saturation (how the literature since Fan et al. 2000 treats the rare
 * overflow): a counter that reaches max = 2^w − 1 is never incremented or
 * decremented again. It stays nonzero forever, so a
 * saturated counter can never cause a false negative; it can only keep a
 * false positive alive after every key on it is removed.
 *
 * Invariants: m > 0 and a multiple of per; 1 <= k <= AMQ__CTR_MAX_K;
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

typedef struct amq__ctr {
    amq__obj o; /* o.items counts adds minus removes; o.table */
    uint64_t *words;
    uint64_t m;     /* counters */
    unsigned width; /* bits per counter: 4, 8, 16 or 32 */
    unsigned lw;    /* log2(width) */
    unsigned k;
    uint64_t max; /* 2^width - 1: the sticky value */
    uint64_t nonzero;
    uint64_t saturated;
    uint64_t mul[AMQ__CTR_MAX_K];
} amq__ctr;

static inline uint64_t amq__ctr_probe(const amq__ctr *c, uint64_t h,
                                      unsigned j) {
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

/* A new object of self_bytes (>= sizeof(amq__ctr), the array first) with
 * m counters of `width` bits (m rounded up to fill whole words) and k
 * probes; the table is zeroed, or `borrow` read-only for a view.
 * AMQ_ERR_INVALID / AMQ_ERR_OVERFLOW / AMQ_ERR_NOMEM. */
amq_status amq__ctr_new(size_t self_bytes, uint64_t m, unsigned width,
                        unsigned k, const amq_options *opt,
                        const uint64_t *borrow, amq__ctr **out);

/* Smallest of the key's k counters (0 at the first zero). */
uint64_t amq__ctr_min(const amq__ctr *c, uint64_t h);

/* ---- type callbacks shared by counting and spectral --------------------- */

/* Each takes an object that starts with its amq__ctr, and has the slot's
 * signature in amq__type (type/type.h), so a descriptor points at it. */

/* Increment all k counters (Fan et al.; spectral minimum selection).
 * Always AMQ_OK: a saturated counter just stays. */
amq_status amq__ctr_add(amq__obj *o, uint64_t h);
/* Undo add: AMQ_ERR_NOT_FOUND (and no change) if a probe reads 0. */
amq_status amq__ctr_remove(amq__obj *o, uint64_t h);
/* Every one of the key's counters nonzero. */
bool amq__ctr_contains(const amq__obj *o, uint64_t h);
void amq__ctr_contains_batch(const amq__obj *o, const uint64_t *h, size_t n,
                             uint8_t *out);
/* The minimum as a multiplicity: UINT64_MAX when it is saturated (then the
 * true count is at least max and unknown). */
amq_status amq__ctr_count(const amq__obj *o, uint64_t h, uint64_t *out);
/* dst += src counter-wise, saturating: the filter of the multiset union
 * (union only: the caps keep intersect away). AMQ_ERR_INCOMPATIBLE unless
 * m, k and width agree. */
amq_status amq__ctr_merge(amq__obj *dst, const amq__obj *src, amq__merge_op op);
/* -(m/k) ln(1 - nonzero/m). */
amq_status amq__ctr_estimate(const amq__obj *o, double *out);
/* (nonzero / m)^k. */
double amq__ctr_fpr_bound(const amq__obj *o);

/* ---- sizing and curve (cells = counters per key) ---------------------- */

/* FPR of a counter array at `cells` counters per key with k probes
 * (0: best integer k for cells). */
double amq__ctr_curve_fpr(double cells, unsigned k);
/* Smallest cells per key meeting fpr (k = 0: best integer k). */
double amq__ctr_curve_cells(double fpr, unsigned k);
/* Read k= and m= from a spec and resolve the shape: m given, or m and k
 * (k unless given) for capacity keys at fpr. */
amq_status amq__ctr_spec_shape(amq__spec *spec, uint64_t capacity, double fpr,
                               unsigned *k, uint64_t *m, const char *name,
                               amq_diag *diag);

/* ---- serialisation ------------------------------------------------------ */

/* The common parameter block: m u64 (counters) | k u32 | width u32 |
 * items u64. */
#define AMQ__CTR_PARAMS 24
typedef struct amq__ctr_shape {
    uint64_t m, items;
    unsigned k, width;
} amq__ctr_shape;

/* The common block alone: counting's params_write. */
void amq__ctr_params_write(const amq__obj *o, amq__wr *w);
/* Read and validate the common block against a payload of payload_len
 * bytes; width_ok has bit w set for each allowed width. */
amq_status amq__ctr_params_read(amq__rd *r, size_t payload_len,
                                uint64_t width_ok, amq__ctr_shape *s);
/* The object of a validated shape with its table from the payload (copied,
 * or borrowed for a view). */
amq_status amq__ctr_open(size_t self_bytes, const amq__ctr_shape *s,
                         const uint8_t *payload, size_t len, bool view,
                         const amq_options *opt, amq__ctr **out);

#endif
