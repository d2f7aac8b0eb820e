/*
 * amq/bloom.h — the Bloom core: classic, cache-line-blocked and split-block;
 * and (second half of this header) the Bloom variants: partitioned,
 * scalable, stable and compressed.
 *
 * These typed APIs are the fast path: they take 64-bit hashes (hash byte keys
 * with amq_hash64 and the hasher of your choice). Every type is also reachable
 * through amq/filter.h as "bloom", "blocked" and "sbbf".
 *
 *   classic   m bits, k positions reduce(h * A[i], m) from one hash,
 *             FPR (1 - e^{-kn/m})^k, optimal k = (m/n) ln 2.
 *   blocked   512-bit (cache-line) blocks; the key picks one block and sets k
 *             bits inside it (Putze, Sanders, Singler 2007). One cache miss.
 *             Two position layouts: 1 (salted, every new filter) takes
 *             position j as the top 9 bits of (uint32_t)(t * SALT_j), t the
 *             hash's low half, one vector multiply for all k; 0 (mix) cuts
 *             them from t and one or two 64-bit mixes, as frames written
 *             before layout 1 do (they load and save as layout 0). Spec:
 *             blocked:layout=0 makes filters older readers understand.
 *   sbbf      Apache Parquet split-block Bloom filter: 256-bit blocks of eight
 *             32-bit words, one bit per word chosen with the spec's eight salts.
 *             Bit-for-bit compatible with Parquet when byte keys are hashed
 *             with XXH64 seed 0 (amq's default for this type).
 *
 * Ownership: _new returns an object released with _free (NULL accepted).
 * Thread-safety: queries are safe from any number of threads while nobody
 * modifies. add_hash may run concurrently only on an object created with
 * AMQ_OPT_CONCURRENT (atomic OR on words; the item count is atomic too).
 * Complexity: add and contains O(k) (O(1) cache lines for blocked / sbbf).
 * Space: see amq_*_fpr below and docs/structures.md.
 */
#ifndef AMQ_BLOOM_H
#define AMQ_BLOOM_H

#include "amq/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the mathematics (pure functions) ---------------------------------- */

/* Classic Bloom FPR (1 - e^{-kn/m})^k for m bits, n keys, k hashes. */
AMQ_API double amq_bloom_fpr(double m_bits, double n, unsigned k);
/* k minimising the FPR at b bits per key: round(b ln 2), at least 1. */
AMQ_API unsigned amq_bloom_optimal_k(double bits_per_key);
/* Bits per key at optimal (real) k for a target fpr: log2(1/fpr) / ln 2. */
AMQ_API double amq_bloom_bits_for_fpr(double fpr);
/* Blocked Bloom FPR at b bits/key, k bits per key, blocks of block_bits:
 * the classic FPR averaged over the Poisson load of a block. */
AMQ_API double amq_blocked_fpr(double bits_per_key, unsigned k,
                               unsigned block_bits);
/* Split-block FPR at b bits/key (k = 8, 32-bit words, 256-bit blocks). */
AMQ_API double amq_sbbf_fpr(double bits_per_key);

/* ---- classic Bloom ----------------------------------------------------- */

typedef struct amq_bloom amq_bloom;

/* Sized for capacity keys at fpr: m = ceil(n log2(1/fpr)/ln 2) bits rounded
 * up to whole 64-bit words, k = optimal for m/n.
 * Errors: AMQ_ERR_INVALID, AMQ_ERR_OVERFLOW, AMQ_ERR_NOMEM, AMQ_ERR_HASH. */
AMQ_API amq_status amq_bloom_new(uint64_t capacity, double fpr,
                                 const amq_options *opt, amq_bloom **out);
/* m_bits >= 1 (rounded up to a multiple of 64), 1 <= k <= 64. */
AMQ_API amq_status amq_bloom_new_explicit(uint64_t m_bits, unsigned k,
                                          const amq_options *opt,
                                          amq_bloom **out);
AMQ_API void amq_bloom_free(amq_bloom *b);
AMQ_API void amq_bloom_add_hash(amq_bloom *b, uint64_t hash);
AMQ_API bool amq_bloom_contains_hash(const amq_bloom *b, uint64_t hash);
AMQ_API void amq_bloom_contains_batch(const amq_bloom *b, const uint64_t *h,
                                      size_t n, uint8_t *out);
/* dst |= src, dst &= src. AMQ_ERR_INCOMPATIBLE unless m and k are equal. */
AMQ_API amq_status amq_bloom_union(amq_bloom *dst, const amq_bloom *src);
AMQ_API amq_status amq_bloom_intersect(amq_bloom *dst, const amq_bloom *src);
/* Distinct keys estimated from the fill: -(m/k) ln(1 - X/m), X bits set
 * (Swamidass & Baldi 2007). Infinity when every bit is set. */
AMQ_API double amq_bloom_estimate_items(const amq_bloom *b);
AMQ_API uint64_t amq_bloom_bits(const amq_bloom *b);
AMQ_API unsigned amq_bloom_k(const amq_bloom *b);
AMQ_API uint64_t amq_bloom_items(const amq_bloom *b);
AMQ_API double amq_bloom_fpr_bound(const amq_bloom *b);

/* ---- blocked Bloom (512-bit blocks) ------------------------------------ */

typedef struct amq_blocked amq_blocked;

/* Position layouts (see the top of this header and docs/structures.md);
 * both answer with the same FPR curve and bound. */
#define AMQ_BLOCKED_LAYOUT_MIX 0u    /* mix64-derived; older frames */
#define AMQ_BLOCKED_LAYOUT_SALTED 1u /* one multiply per position  */

/* Sized so the blocked FPR curve meets fpr; k chosen to minimise it.
 * Layout AMQ_BLOCKED_LAYOUT_SALTED. */
AMQ_API amq_status amq_blocked_new(uint64_t capacity, double fpr,
                                   const amq_options *opt, amq_blocked **out);
/* blocks >= 1, 1 <= k <= 16; layout AMQ_BLOCKED_LAYOUT_SALTED. */
AMQ_API amq_status amq_blocked_new_explicit(uint64_t blocks, unsigned k,
                                            const amq_options *opt,
                                            amq_blocked **out);
/* The same with a chosen layout (AMQ_BLOCKED_LAYOUT_*; another value:
 * AMQ_ERR_INVALID). */
AMQ_API amq_status amq_blocked_new_layout(uint64_t blocks, unsigned k,
                                          unsigned layout,
                                          const amq_options *opt,
                                          amq_blocked **out);
AMQ_API void amq_blocked_free(amq_blocked *b);
AMQ_API void amq_blocked_add_hash(amq_blocked *b, uint64_t hash);
AMQ_API bool amq_blocked_contains_hash(const amq_blocked *b, uint64_t hash);
AMQ_API void amq_blocked_contains_batch(const amq_blocked *b, const uint64_t *h,
                                        size_t n, uint8_t *out);
/* Union / intersection need equal blocks, k and layout, else
 * AMQ_ERR_INCOMPATIBLE. */
AMQ_API amq_status amq_blocked_union(amq_blocked *dst, const amq_blocked *src);
AMQ_API amq_status amq_blocked_intersect(amq_blocked *dst,
                                         const amq_blocked *src);
AMQ_API uint64_t amq_blocked_blocks(const amq_blocked *b);
AMQ_API unsigned amq_blocked_k(const amq_blocked *b);
AMQ_API unsigned amq_blocked_layout(const amq_blocked *b);
AMQ_API uint64_t amq_blocked_items(const amq_blocked *b);
/* The false-positive rate of this very table for a key never added (from
 * its blocks' popcounts; see docs/structures.md). O(blocks). */
AMQ_API double amq_blocked_fpr_bound(const amq_blocked *b);

/* ---- split-block Bloom (Apache Parquet) -------------------------------- */

typedef struct amq_sbbf amq_sbbf;

#define AMQ_SBBF_BLOCK_BYTES 32

/* Sized so amq_sbbf_fpr meets fpr at capacity keys (whole 32-byte blocks). */
AMQ_API amq_status amq_sbbf_new(uint64_t capacity, double fpr,
                                const amq_options *opt, amq_sbbf **out);
AMQ_API amq_status amq_sbbf_new_explicit(uint64_t blocks,
                                         const amq_options *opt,
                                         amq_sbbf **out);
/* Copy a Parquet bitset (the bytes after the BloomFilterHeader: a multiple
 * of 32 bytes, little-endian 32-bit words). AMQ_ERR_INVALID otherwise. */
AMQ_API amq_status amq_sbbf_from_parquet(const void *bitset, size_t len,
                                         const amq_options *opt,
                                         amq_sbbf **out);
/* The filter's bitset in Parquet's layout (borrowed; valid until the filter
 * is modified or freed). */
AMQ_API const uint8_t *amq_sbbf_parquet_bitset(const amq_sbbf *b, size_t *len);
AMQ_API void amq_sbbf_free(amq_sbbf *b);
AMQ_API void amq_sbbf_add_hash(amq_sbbf *b, uint64_t hash);
AMQ_API bool amq_sbbf_contains_hash(const amq_sbbf *b, uint64_t hash);
AMQ_API void amq_sbbf_contains_batch(const amq_sbbf *b, const uint64_t *h,
                                     size_t n, uint8_t *out);
AMQ_API amq_status amq_sbbf_union(amq_sbbf *dst, const amq_sbbf *src);
AMQ_API amq_status amq_sbbf_intersect(amq_sbbf *dst, const amq_sbbf *src);
/* Halve the filter in place: new block j = old block 2j | old block 2j+1.
 * Exact under Parquet's multiply-shift block index (no false negatives);
 * the FPR rises to that of the smaller filter.
 * AMQ_ERR_INVALID if the block count is odd or 1. */
AMQ_API amq_status amq_sbbf_fold(amq_sbbf *b);
AMQ_API uint64_t amq_sbbf_blocks(const amq_sbbf *b);
AMQ_API uint64_t amq_sbbf_items(const amq_sbbf *b);
/* The false-positive rate of this very table for a key never added (from
 * its words' popcounts; exact for a power-of-two block count, else an upper
 * bound within 1 + B/2^32). O(blocks). */
AMQ_API double amq_sbbf_fpr_bound(const amq_sbbf *b);

/* ======================================================================
 * Bloom variants: partitioned, scalable, stable, compressed.
 * Reachable through amq/filter.h as "partitioned", "scalable", "stable" and
 * "compressed"; docs/structures.md has the mathematics. Same conventions as
 * above (64-bit hashes in, _free accepts NULL, queries thread-safe while
 * nobody modifies; none of these supports concurrent adds).
 * ====================================================================== */

/* ---- partitioned Bloom: k disjoint slices, one probe per slice --------- */

typedef struct amq_partitioned amq_partitioned;

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
