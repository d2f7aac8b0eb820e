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
 * Made, filled, queried, merged, saved and freed through amq/filter.h as
 * "partitioned", "scalable", "stable" and "compressed" (the spec keys are
 * in amq_filter_type_at(i)->params); docs/structures.md has the
 * mathematics. What is here is only what amq/filter.h does not say: the
 * sizing formulas and each structure's own parameters and state, read
 * through amq_X_of(f). None of these supports concurrent adds; the getters
 * are safe while nobody modifies the filter.
 * ====================================================================== */

/* ---- partitioned Bloom: k disjoint slices, one probe per slice --------- */

/* Spec: "partitioned" sized for (capacity, fpr) like "bloom" (the smallest
 * bits per key at which the best integer k meets fpr, each slice rounded up
 * to whole 64-bit words); "partitioned:m=BITS,k=K" splits m bits into k
 * slices of ceil(m/k) bits rounded up to a multiple of 64. fpr_bound is
 * prod_i ones_i / s, exact for independent uniform probes; estimate_items
 * is the mean over slices of -s ln(1 - ones_i/s) (infinity once a slice is
 * full); union and intersect need the same slices and k
 * (AMQ_ERR_INCOMPATIBLE). */
typedef struct amq_partitioned amq_partitioned;

/* The structure of a filter of type "partitioned" made with amq/filter.h (its own
 * object, valid while the filter lives); NULL for any other filter. */
AMQ_API amq_partitioned *amq_partitioned_of(const amq_filter *f);

/* Expected FPR of m bits in k slices holding n keys:
 * (1 - (1 - k/m)^n)^k, a hair above the classic (1 - e^{-kn/m})^k. */
AMQ_API double amq_partitioned_fpr(double m_bits, double n, unsigned k);
/* Total bits (k slices of a multiple of 64) and the number of slices. */
AMQ_API uint64_t amq_partitioned_bits(const amq_partitioned *p);
AMQ_API unsigned amq_partitioned_k(const amq_partitioned *p);

/* ---- scalable Bloom (Almeida, Baquero, Preguica, Hutchison 2007) ------- */

/* Spec: "scalable" (n0 = capacity, eps = fpr) or
 * "scalable:n0=KEYS,eps=RATE,growth=G,ratio=R,max_stages=S,max_bytes=B".
 * Stage i (from 0) is a partitioned filter for
 *   capacity n_i = n0 * G^i  keys at  eps_i = eps (1 - R) R^i,
 * so sum_i eps_i < eps for any number of stages. A stage is full when it
 * holds n_i keys; the next add opens stage i + 1, and fails with
 * AMQ_ERR_FULL (the filter unchanged) when that stage would exceed S
 * stages or B bytes of tables, or its eps_i needs more than 64 hashes.
 * fpr_bound is 1 - prod_i (1 - b_i) over the stages' exact bounds b_i.
 * Union is stage-wise (stages only src has are copied) and needs the same
 * configuration (AMQ_ERR_INCOMPATIBLE); there is no intersection: a key
 * common to both filters may sit in different stages of each. */
typedef struct amq_scalable amq_scalable;

/* The structure of a filter of type "scalable" made with amq/filter.h (its own
 * object, valid while the filter lives); NULL for any other filter. */
AMQ_API amq_scalable *amq_scalable_of(const amq_filter *f);

/* sum of the design targets eps_i of the stages opened so far (< eps). */
AMQ_API double amq_scalable_target_sum(const amq_scalable *s);
/* Stages opened so far (at least 1). */
AMQ_API unsigned amq_scalable_stages(const amq_scalable *s);
/* Stage i (0 = the first) as built: its design capacity n_i and target
 * eps_i, the keys added to it, its bits, hashes and table bytes. */
typedef struct amq_scalable_stage {
    uint64_t capacity, items, bits;
    double fpr;
    unsigned k;
    size_t bytes;
} amq_scalable_stage;
/* AMQ_ERR_INVALID for i >= amq_scalable_stages(s) (out unchanged). */
AMQ_API amq_status amq_scalable_stage_info(const amq_scalable *s, unsigned i,
                                           amq_scalable_stage *out);

/* ---- stable Bloom (Deng & Rafiei 2006) --------------------------------- */

/* m cells of w bits (w = 1, 2, 4 or 8, the least that holds max). An add
 * first decrements p consecutive cells from a pseudo-random start (saturating
 * at 0), then sets the key's k cells to max. Memory never grows, and old
 * keys fade: FALSE NEGATIVES ARE POSSIBLE FOR OLD KEYS BY DESIGN. The key
 * added last is always reported.
 *
 * Spec: "stable" sized for (capacity, fpr) as the paper designs it: m cells
 * and k as a Bloom filter's, max = 3 (2-bit cells) and the fewest p whose
 * stable FPR is fpr. "stable:stable=RATE" chooses p for another stable
 * FPR; "stable:horizon=H" takes max = 255 and the largest p that forgets a
 * key within H * capacity later adds with probability at most k * 1e-12;
 * "stable:m=CELLS,k=K,max=MAX,p=P" is explicit (m rounded up to a multiple
 * of 64, 1 <= k <= 64, 1 <= max <= 255, 0 <= p <= m). fpr_bound is
 * (nonzero cells / m)^k: exact for a key never added, at the current
 * state. No union or intersection. */
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

/* The resolved parameters: cells m, hashes k, cell maximum, decrements p
 * per add. */
AMQ_API uint64_t amq_stable_cells(const amq_stable *s);
AMQ_API unsigned amq_stable_k(const amq_stable *s);
AMQ_API unsigned amq_stable_max(const amq_stable *s);
AMQ_API uint64_t amq_stable_p(const amq_stable *s);

/* ---- compressed Bloom (Mitzenmacher 2002) ------------------------------ */

/* A partitioned filter tuned for transmission (few hashes, a large sparse
 * array), serialized as a Golomb-Rice code of the gaps between set bits
 * (or between clear bits, or raw, whichever is shortest). In memory it is
 * the uncompressed array, and it adds, queries, merges and bounds as the
 * partitioned filter does.
 *
 * Spec: "compressed" sized for (capacity, fpr) with k = 2 hashes, the
 * smallest array meeting fpr ("compressed:k=K" for another k);
 * "compressed:m=BITS,k=K" explicit; "compressed:z=BITS" for capacity keys
 * (fpr is not used) picks the k and array size minimising the FPR when the
 * entropy per key may be at most z >= 1 bits (Mitzenmacher's design). */
typedef struct amq_compressed amq_compressed;

/* The structure of a filter of type "compressed" made with amq/filter.h (its own
 * object, valid while the filter lives); NULL for any other filter. */
AMQ_API amq_compressed *amq_compressed_of(const amq_filter *f);

/* Entropy of the array per key at b bits per key and k hashes:
 * b H(1 - e^{-k/b}), H the binary entropy: what an ideal coder sends. */
AMQ_API double amq_compressed_entropy_bits(double bits_per_key, unsigned k);
/* Bytes of the coded array (the frame's payload). O(m). */
AMQ_API size_t amq_compressed_encoded_bytes(const amq_compressed *c);
/* Bits of the working array and the number of hashes. */
AMQ_API uint64_t amq_compressed_bits(const amq_compressed *c);
AMQ_API unsigned amq_compressed_k(const amq_compressed *c);

#ifdef __cplusplus
}
#endif
#endif
