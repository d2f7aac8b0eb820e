/*
 * amq/bloom.h — the Bloom core: classic, cache-line-blocked and split-block;
 * and (second half of this header) the Bloom variants: partitioned,
 * scalable, stable and compressed.
 *
 * The filters are made, filled and queried through amq/filter.h, as
 * "bloom", "blocked" and "sbbf" (e.g. "bloom:m=8000000,k=6",
 * "blocked:blocks=4096,k=8,layout=0", "sbbf:blocks=1024"). This header adds
 * what the generic interface cannot say: the mathematics of each type, the
 * structure behind a filter (amq_X_of) with its own parameters, and the
 * split-block filter's Parquet operations (import, bitset, fold).
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
 * What amq/filter.h reports for these types: amq_filter_fpr_bound is the
 * false-positive rate of this very table for a key never added: (ones/m)^k
 * for bloom; from the blocks' popcounts for blocked and sbbf, O(blocks)
 * (for sbbf exact at a power-of-two block count, else an upper bound
 * within 1 + B/2^32). For bloom amq_filter_estimate_items is
 * -(m/k) ln(1 - X/m), X bits set (Swamidass & Baldi 2007; infinity when
 * every bit is set). Union and intersection need equal shapes (m and k;
 * blocks, k and layout; blocks), else AMQ_ERR_INCOMPATIBLE.
 *
 * Ownership: an amq_X * from amq_X_of is the filter's own object, valid
 * while the filter lives; amq_sbbf_from_parquet returns a filter released
 * with amq_filter_free.
 * Thread-safety: the getters are queries, safe from any number of threads
 * while nobody modifies the filter; amq_sbbf_fold modifies it. A filter made
 * with AMQ_OPT_CONCURRENT takes concurrent adds (atomic OR on words; the
 * item count is atomic too).
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

/* Sizing ("bloom" with capacity n and fpr): m = ceil(n b) bits rounded up
 * to whole 64-bit words, b the fewest bits per key at which the best
 * integer k meets fpr, k that k. Spec keys: m=BITS (rounded up to a
 * multiple of 64), k=1..64. */

/* m, the bits of the table (a multiple of 64). */
AMQ_API uint64_t amq_bloom_bits(const amq_bloom *b);
/* k, the probes a key sets and a query tests. */
AMQ_API unsigned amq_bloom_k(const amq_bloom *b);

/* ---- blocked Bloom (512-bit blocks) ------------------------------------ */

typedef struct amq_blocked amq_blocked;

/* The structure of a filter of type "blocked" made with amq/filter.h (its own
 * object, valid while the filter lives); NULL for any other filter. */
AMQ_API amq_blocked *amq_blocked_of(const amq_filter *f);

/* Position layouts (see the top of this header and docs/structures.md);
 * both answer with the same FPR curve and bound. */
#define AMQ_BLOCKED_LAYOUT_MIX 0u    /* mix64-derived; older frames */
#define AMQ_BLOCKED_LAYOUT_SALTED 1u /* one multiply per position  */

/* Sizing ("blocked" with capacity n and fpr): the fewest blocks at which the
 * blocked FPR curve meets fpr, k (1..16) the one needing fewest; layout
 * AMQ_BLOCKED_LAYOUT_SALTED. Spec keys: blocks=N, k=1..16 (8 with blocks=
 * and no target), layout=0|1. */

/* The 64-byte blocks of the table. */
AMQ_API uint64_t amq_blocked_blocks(const amq_blocked *b);
/* k, the bits a key sets in its block. */
AMQ_API unsigned amq_blocked_k(const amq_blocked *b);
/* AMQ_BLOCKED_LAYOUT_MIX or AMQ_BLOCKED_LAYOUT_SALTED. */
AMQ_API unsigned amq_blocked_layout(const amq_blocked *b);

/* ---- split-block Bloom (Apache Parquet) -------------------------------- */

typedef struct amq_sbbf amq_sbbf;

/* The structure of a filter of type "sbbf" made with amq/filter.h (its own
 * object, valid while the filter lives); NULL for any other filter. */
AMQ_API amq_sbbf *amq_sbbf_of(const amq_filter *f);

#define AMQ_SBBF_BLOCK_BYTES 32

/* Sizing ("sbbf" with capacity n and fpr): the fewest 32-byte blocks at
 * which amq_sbbf_fpr meets fpr. Spec keys: blocks=N (below 2^32), pow2=1
 * (round up to a power of two, as Parquet writers do). */

/* A new filter holding a copy of a Parquet bitset (the bytes after the
 * BloomFilterHeader: a multiple of 32 bytes, little-endian 32-bit words),
 * its item count estimated from the fill. opt (may be NULL) gives the
 * allocator, flags and hasher: XXH64 seed 0 unless it chooses another, so
 * byte keys are hashed as Parquet does. The filter is released with
 * amq_filter_free. Errors: AMQ_ERR_INVALID (NULL bitset or out, a length
 * of 0 or not a multiple of 32, 2^32 blocks or more), AMQ_ERR_NOMEM,
 * AMQ_ERR_HASH. */
AMQ_API amq_status amq_sbbf_from_parquet(const void *bitset, size_t len,
                                         const amq_options *opt,
                                         amq_filter **out);
/* The filter's bitset in Parquet's layout (borrowed; valid until the filter
 * is modified or freed). */
AMQ_API const uint8_t *amq_sbbf_parquet_bitset(const amq_sbbf *b, size_t *len);
/* Parquet's check of hash against a bitset where it lies (the bytes after
 * the BloomFilterHeader, at any alignment; nothing is copied or checked
 * but the length): false only when one of the eight bits hash needs is
 * clear. Bytes that cannot be a bitset (NULL, a length of 0 or not a
 * multiple of 32, 2^32 blocks or more) answer true, "may be there", so a
 * caller never gets a false negative from them. For bitsets a program
 * wrote itself and keeps (a storage engine's filter blocks): the same
 * answer as amq_sbbf_from_parquet's filter, without making one. */
AMQ_API bool amq_sbbf_parquet_contains(const void *bitset, size_t len,
                                       uint64_t hash);
/* The certified bound of such a bitset: amq_filter_fpr_bound of the filter
 * amq_sbbf_from_parquet would make of it (1 for bytes that are not a
 * bitset). O(len). */
AMQ_API double amq_sbbf_parquet_bound(const void *bitset, size_t len);
/* Halve the filter in place: new block j = old block 2j | old block 2j+1.
 * Exact under Parquet's multiply-shift block index (no false negatives);
 * the FPR rises to that of the smaller filter.
 * AMQ_ERR_INVALID if b is NULL, the block count is odd or 1, or b is a
 * view's (its table is the caller's read-only buffer); b is then
 * unchanged. */
AMQ_API amq_status amq_sbbf_fold(amq_sbbf *b);
/* The 32-byte blocks of the table. */
AMQ_API uint64_t amq_sbbf_blocks(const amq_sbbf *b);

#ifdef __cplusplus
}
#endif

/* The variants (partitioned, scalable, stable, compressed). */
#include "amq/bloom_variants.h"

#endif
