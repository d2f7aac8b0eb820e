/*
 * amq/bloom_variants.h — the Bloom variants: partitioned, scalable, stable
 * and compressed (included by amq/bloom.h).
 */
#ifndef AMQ_BLOOM_VARIANTS_H
#define AMQ_BLOOM_VARIANTS_H

#include "amq/core.h"
#include "amq/filter.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================
 * Bloom variants: partitioned, scalable, stable, compressed.
 * Reachable through amq/filter.h as "partitioned", "scalable", "stable" and
 * "compressed"; docs/structures.md has the mathematics. Same conventions as
 * above (64-bit hashes in, _free accepts NULL, queries thread-safe while
 * nobody modifies; none of these supports concurrent adds).
 * ====================================================================== */

/* ---- partitioned Bloom: k disjoint slices, one probe per slice --------- */

typedef struct amq_partitioned amq_partitioned;

/* The structure of a filter of type "partitioned" made with amq/filter.h (its own
 * object, valid while the filter lives); NULL for any other filter. */
AMQ_API amq_partitioned *amq_partitioned_of(const amq_filter *f);

/* Expected FPR of m bits in k slices holding n keys:
 * (1 - (1 - k/m)^n)^k, a hair above the classic (1 - e^{-kn/m})^k. */
AMQ_API double amq_partitioned_fpr(double m_bits, double n, unsigned k);
/* Sized like amq_bloom_new (smallest bits per key at which the best integer
 * k meets fpr), each slice rounded up to whole 64-bit words.
 * Errors: AMQ_ERR_INVALID, AMQ_ERR_OVERFLOW, AMQ_ERR_NOMEM, AMQ_ERR_HASH. */
AMQ_API amq_status amq_partitioned_new(uint64_t capacity, double fpr,
                                       const amq_options *opt,
                                       amq_partitioned **out);
/* m_bits split into k slices of ceil(m/k) bits rounded up to a multiple of
 * 64; 1 <= k <= 64, 1 <= m_bits <= 2^62. */
AMQ_API amq_status amq_partitioned_new_explicit(uint64_t m_bits, unsigned k,
                                                const amq_options *opt,
                                                amq_partitioned **out);
AMQ_API void amq_partitioned_free(amq_partitioned *p);
AMQ_API void amq_partitioned_add_hash(amq_partitioned *p, uint64_t hash);
AMQ_API bool amq_partitioned_contains_hash(const amq_partitioned *p,
                                           uint64_t hash);
AMQ_API void amq_partitioned_contains_batch(const amq_partitioned *p,
                                            const uint64_t *h, size_t n,
                                            uint8_t *out);
/* dst |= src, dst &= src. AMQ_ERR_INCOMPATIBLE unless slices and k match. */
AMQ_API amq_status amq_partitioned_union(amq_partitioned *dst,
                                         const amq_partitioned *src);
AMQ_API amq_status amq_partitioned_intersect(amq_partitioned *dst,
                                             const amq_partitioned *src);
/* Mean over slices of -s ln(1 - ones_i/s); infinity if a slice is full. */
AMQ_API double amq_partitioned_estimate_items(const amq_partitioned *p);
/* prod_i ones_i / s: exact for independent uniform probes. */
AMQ_API double amq_partitioned_fpr_bound(const amq_partitioned *p);
AMQ_API uint64_t amq_partitioned_bits(const amq_partitioned *p);
AMQ_API unsigned amq_partitioned_k(const amq_partitioned *p);
AMQ_API uint64_t amq_partitioned_items(const amq_partitioned *p);

/* ---- scalable Bloom (Almeida, Baquero, Preguica, Hutchison 2007) ------- */

typedef struct amq_scalable amq_scalable;

/* The structure of a filter of type "scalable" made with amq/filter.h (its own
 * object, valid while the filter lives); NULL for any other filter. */
AMQ_API amq_scalable *amq_scalable_of(const amq_filter *f);

#define AMQ_SCALABLE_MAX_STAGES 64

/* Stage i (from 0) is a partitioned filter for
 *   capacity n_i = n_0 * growth^i  keys at  eps_i = eps (1 - ratio) ratio^i,
 * so sum_i eps_i < eps for any number of stages. A stage is full when it
 * holds n_i keys; the next add opens stage i + 1. */
typedef struct amq_scalable_config {
    uint64_t initial_capacity; /* n_0 >= 1                                */
    double fpr;                /* eps, the total target, in (0, 1)        */
    unsigned growth;           /* 1..16, default (0) 2                    */
    double ratio;              /* tightening, in (0, 1); default (0) 0.5  */
    unsigned max_stages;       /* 1..64, default (0) 64                   */
    uint64_t max_bytes;        /* cap on all tables; 0 = none             */
} amq_scalable_config;

/* Errors: AMQ_ERR_INVALID, AMQ_ERR_OVERFLOW, AMQ_ERR_NOMEM, AMQ_ERR_HASH. */
AMQ_API amq_status amq_scalable_new(const amq_scalable_config *cfg,
                                    const amq_options *opt, amq_scalable **out);
AMQ_API void amq_scalable_free(amq_scalable *s);
/* AMQ_ERR_FULL when a new stage would exceed max_stages or max_bytes (or
 * its eps_i is too small for 64 hashes); AMQ_ERR_NOMEM. Either way the
 * filter is unchanged. */
AMQ_API amq_status amq_scalable_add_hash(amq_scalable *s, uint64_t hash);
AMQ_API bool amq_scalable_contains_hash(const amq_scalable *s, uint64_t hash);
AMQ_API void amq_scalable_contains_batch(const amq_scalable *s,
                                         const uint64_t *h, size_t n,
                                         uint8_t *out);
/* Stage-wise OR; stages src has and dst lacks are copied. Requires the
 * same configuration (AMQ_ERR_INCOMPATIBLE); AMQ_ERR_NOMEM leaves dst as
 * it was. Intersection is not offered: a key common to both filters may
 * sit in different stages of each. */
AMQ_API amq_status amq_scalable_union(amq_scalable *dst,
                                      const amq_scalable *src);
/* 1 - prod_i (1 - b_i) over the stages' exact bounds b_i (each the product
 * of its slices' fill), at most sum_i b_i. */
AMQ_API double amq_scalable_fpr_bound(const amq_scalable *s);
/* sum of the design targets eps_i of the stages opened so far (< eps). */
AMQ_API double amq_scalable_target_sum(const amq_scalable *s);
AMQ_API unsigned amq_scalable_stages(const amq_scalable *s);
AMQ_API uint64_t amq_scalable_items(const amq_scalable *s);
AMQ_API size_t amq_scalable_bytes(const amq_scalable *s);

/* ---- stable Bloom (Deng & Rafiei 2006) --------------------------------- */

/* m cells of w bits (w = 1, 2, 4 or 8, the least that holds max). An add
 * first decrements p consecutive cells from a pseudo-random start (saturating
 * at 0), then sets the key's k cells to max. Memory never grows, and old
 * keys fade: FALSE NEGATIVES ARE POSSIBLE FOR OLD KEYS BY DESIGN. The key
 * added last is always reported; see amq_stable_new for the horizon within
 * which keys are kept. */
typedef struct amq_stable amq_stable;

/* The structure of a filter of type "stable" made with amq/filter.h (its own
 * object, valid while the filter lives); NULL for any other filter. */
AMQ_API amq_stable *amq_stable_of(const amq_filter *f);

/* Fraction of zero cells at the stable point (the paper's limit):
 *   z = (1 / (1 + 1/(p (1/k - 1/m))))^max,
 * and the stable false-positive rate (1 - z)^k. */
AMQ_API double amq_stable_zero_fraction(double m_cells, unsigned k,
                                        unsigned max, double p);
AMQ_API double amq_stable_fpr(double m_cells, unsigned k, unsigned max,
                              double p);
/* The p (real, >= 0) whose stable FPR is stable_fpr: the inverse above. */
AMQ_API double amq_stable_p_for(double m_cells, unsigned k, unsigned max,
                                double stable_fpr);

/* Sized for capacity keys at fpr: m cells and k as amq_bloom_new, cells of
 * 8 bits (max 255) and p the largest number of decrements per add such that
 * a cell receives `max` decrements within 2 * capacity adds with probability
 * at most 1e-12 (Poisson tail). So a key is forgotten only after more than
 * 2 * capacity later adds (probability < k * 1e-12 before), and the FPR at
 * capacity is the Bloom filter's. Memory is 8 x the Bloom filter's.
 * Errors: AMQ_ERR_INVALID, AMQ_ERR_OVERFLOW, AMQ_ERR_NOMEM, AMQ_ERR_HASH. */
AMQ_API amq_status amq_stable_new(uint64_t capacity, double fpr,
                                  const amq_options *opt, amq_stable **out);
/* Explicit: m_cells >= 1 (rounded up to a multiple of 64), 1 <= k <= 64,
 * 1 <= max <= 255, 0 <= p <= m (after rounding). */
AMQ_API amq_status amq_stable_new_explicit(uint64_t m_cells, unsigned k,
                                           unsigned max, uint64_t p,
                                           const amq_options *opt,
                                           amq_stable **out);
AMQ_API void amq_stable_free(amq_stable *s);
AMQ_API void amq_stable_add_hash(amq_stable *s, uint64_t hash);
AMQ_API bool amq_stable_contains_hash(const amq_stable *s, uint64_t hash);
AMQ_API void amq_stable_contains_batch(const amq_stable *s, const uint64_t *h,
                                       size_t n, uint8_t *out);
/* (nonzero cells / m)^k: exact for a key never added, at the current state. */
AMQ_API double amq_stable_fpr_bound(const amq_stable *s);
AMQ_API uint64_t amq_stable_cells(const amq_stable *s);
AMQ_API unsigned amq_stable_k(const amq_stable *s);
AMQ_API unsigned amq_stable_max(const amq_stable *s);
AMQ_API uint64_t amq_stable_p(const amq_stable *s);
AMQ_API uint64_t amq_stable_items(const amq_stable *s);

/* ---- compressed Bloom (Mitzenmacher 2002) ------------------------------ */

/* A partitioned filter tuned for transmission (few hashes, a large sparse
 * array), serialized as a Golomb-Rice code of the gaps between set bits
 * (or between clear bits, or raw, whichever is shortest). In memory it is
 * the uncompressed array. */
typedef struct amq_compressed amq_compressed;

/* The structure of a filter of type "compressed" made with amq/filter.h (its own
 * object, valid while the filter lives); NULL for any other filter. */
AMQ_API amq_compressed *amq_compressed_of(const amq_filter *f);

/* Entropy of the array per key at b bits per key and k hashes:
 * b H(1 - e^{-k/b}), H the binary entropy: what an ideal coder sends. */
AMQ_API double amq_compressed_entropy_bits(double bits_per_key, unsigned k);
/* Sized for capacity keys at fpr with k hashes (0: 2, the default), the
 * smallest array meeting fpr. Errors as amq_partitioned_new. */
AMQ_API amq_status amq_compressed_new(uint64_t capacity, double fpr, unsigned k,
                                      const amq_options *opt,
                                      amq_compressed **out);
/* The k and array size minimising the FPR when the entropy per key may be
 * at most z_bits (>= 1), for capacity keys (Mitzenmacher's design). */
AMQ_API amq_status amq_compressed_new_for_size(uint64_t capacity, double z_bits,
                                               const amq_options *opt,
                                               amq_compressed **out);
AMQ_API amq_status amq_compressed_new_explicit(uint64_t m_bits, unsigned k,
                                               const amq_options *opt,
                                               amq_compressed **out);
AMQ_API void amq_compressed_free(amq_compressed *c);
AMQ_API void amq_compressed_add_hash(amq_compressed *c, uint64_t hash);
AMQ_API bool amq_compressed_contains_hash(const amq_compressed *c,
                                          uint64_t hash);
AMQ_API void amq_compressed_contains_batch(const amq_compressed *c,
                                           const uint64_t *h, size_t n,
                                           uint8_t *out);
AMQ_API amq_status amq_compressed_union(amq_compressed *dst,
                                        const amq_compressed *src);
AMQ_API amq_status amq_compressed_intersect(amq_compressed *dst,
                                            const amq_compressed *src);
/* Bytes of the coded array (the frame's payload). O(m). */
AMQ_API size_t amq_compressed_encoded_bytes(const amq_compressed *c);
AMQ_API double amq_compressed_fpr_bound(const amq_compressed *c);
AMQ_API uint64_t amq_compressed_bits(const amq_compressed *c);
AMQ_API unsigned amq_compressed_k(const amq_compressed *c);
AMQ_API uint64_t amq_compressed_items(const amq_compressed *c);

#ifdef __cplusplus
}
#endif
#endif
