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
#include "amq/filter.h"

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

/* The structure of a filter of type "bloom" made with amq/filter.h (its own
 * object, valid while the filter lives); NULL for any other filter. */
AMQ_API amq_bloom *amq_bloom_of(const amq_filter *f);

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

/* The structure of a filter of type "blocked" made with amq/filter.h (its own
 * object, valid while the filter lives); NULL for any other filter. */
AMQ_API amq_blocked *amq_blocked_of(const amq_filter *f);

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

/* The structure of a filter of type "sbbf" made with amq/filter.h (its own
 * object, valid while the filter lives); NULL for any other filter. */
AMQ_API amq_sbbf *amq_sbbf_of(const amq_filter *f);

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

#ifdef __cplusplus
}
#endif

/* The variants (partitioned, scalable, stable, compressed). */
#include "amq/bloom_variants.h"

#endif
