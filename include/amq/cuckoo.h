/*
 * amq/cuckoo.h — cuckoo and vacuum filters: fingerprints in a table of
 * buckets of four slots, two candidate buckets per key, deletions and
 * duplicate counting.
 *
 * These typed APIs take 64-bit hashes (hash byte keys with amq_hash64). Both
 * structures are also reachable through amq/filter.h as "cuckoo" and
 * "vacuum".
 *
 *   cuckoo   Fan, Andersen, Kaminsky, Mitzenmacher, "Cuckoo filter:
 *            practically better than Bloom" (CoNEXT 2014). A power-of-two
 *            table of buckets of 4 slots; a key stores an f-bit fingerprint
 *            (4 <= f <= 32) in bucket i1 or i2 = i1 xor delta(fingerprint)
 *            (partial-key cuckoo hashing), evicting residents along a
 *            random walk of at most max_kicks steps when both are full.
 *   vacuum   Wang, Zhou, Shi, Qian, "Vacuum filters: more space-efficient
 *            and faster replacement for Bloom and cuckoo filters" (PVLDB 13,
 *            2019). The same table, but delta stays inside an aligned chunk
 *            of L buckets (four alternate ranges L0 >= L1 >= L2 >= L3 chosen
 *            by a balls-into-bins bound), so the table needs only be a
 *            multiple of L0, not a power of two: the same keys at the same
 *            fingerprint width in up to ~2x less memory.
 *
 * A vacuum filter is a cuckoo filter with alternate ranges: both use the
 * amq_cuckoo handle and every amq_cuckoo_* function below.
 *
 * Guarantees. No false negatives for every key added and not removed. A key
 * never added is reported with probability at most
 *     1 - (1 - q * p2)^items,  q = ceil(2^32 / (2^f - 1)) / 2^32,
 *                              p2 = 2 * ceil(2^32 / m) / 2^32
 * (about 8 * load / 2^f; m buckets): amq_cuckoo_fpr_bound, derived in
 * docs/structures.md. Sized from (capacity, fpr), f = ceil(log2(8 / fpr))
 * and the table holds capacity keys below the load where inserts start to
 * fail.
 *
 * Failure modes. An add can fail with AMQ_ERR_FULL (table too full, or the
 * same key added more than 8 times); the filter is then exactly as before
 * (the eviction walk is undone) and every key added before is still found.
 * Removing a key that was never added may remove another key's fingerprint
 * (a false-positive delete) and so create a false negative: remove only
 * keys you added.
 *
 * Ownership: _new returns an object released with amq_cuckoo_free (NULL
 * accepted). Thread-safety: queries are safe from any number of threads
 * while nobody modifies; updates need external locking.
 * Complexity: contains reads two buckets (two cache lines at most); add is
 * O(1) expected, O(max_kicks) worst case; remove and count read two buckets.
 */
#ifndef AMQ_CUCKOO_H
#define AMQ_CUCKOO_H

#include "amq/core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define AMQ_CUCKOO_SLOTS 4          /* slots per bucket                     */
#define AMQ_CUCKOO_MIN_FP 4         /* fingerprint bits                     */
#define AMQ_CUCKOO_MAX_FP 32
#define AMQ_CUCKOO_MAX_BUCKETS (UINT64_C(1) << 31)
#define AMQ_CUCKOO_MAX_KICKS 100000
#define AMQ_CUCKOO_DEFAULT_KICKS 500

typedef struct amq_cuckoo amq_cuckoo;

/* ---- the mathematics (pure functions) ---------------------------------- */

/* Fingerprint bits for a target rate: ceil(log2(2 * 4 / fpr)), at least 4;
 * 0 if fpr is outside (0, 1) or needs more than 32 bits. */
AMQ_API unsigned amq_cuckoo_fp_bits_for(double fpr);
/* Expected false-positive rate of a table at load factor `load` (items per
 * slot) with f-bit fingerprints: 1 - exp(-8 * load * q), q as above. */
AMQ_API double amq_cuckoo_fpr(double load, unsigned fp_bits);

/* ---- construction ------------------------------------------------------- */

/* Cuckoo filter for capacity keys at fpr: f from fpr, the smallest
 * power-of-two table that holds capacity keys at a safe load.
 * Errors: AMQ_ERR_INVALID, AMQ_ERR_OVERFLOW, AMQ_ERR_NOMEM, AMQ_ERR_HASH. */
AMQ_API amq_status amq_cuckoo_new(uint64_t capacity, double fpr,
                                  const amq_options *opt, amq_cuckoo **out);
/* buckets a power of two in [2, AMQ_CUCKOO_MAX_BUCKETS], 4 <= fp_bits <= 32,
 * max_kicks <= AMQ_CUCKOO_MAX_KICKS. */
AMQ_API amq_status amq_cuckoo_new_explicit(uint64_t buckets, unsigned fp_bits,
                                           unsigned max_kicks,
                                           const amq_options *opt,
                                           amq_cuckoo **out);

/* Vacuum filter for capacity keys at fpr: the minimum table rounded up to
 * whole chunks (8192-65536 buckets) instead of a power of two; e.g. 10^6
 * keys at fpr 0.01 take 11.1 bits/key against 21.0 for amq_cuckoo_new.
 * Small capacities (one chunk) get the cuckoo table. */
AMQ_API amq_status amq_vacuum_new(uint64_t capacity, double fpr,
                                  const amq_options *opt, amq_cuckoo **out);
/* buckets in [2, AMQ_CUCKOO_MAX_BUCKETS]; chunk a power of two >= 8 dividing
 * buckets, or 0 to choose it (then buckets must be a multiple of the chosen
 * range; AMQ_ERR_INVALID otherwise). The three smaller ranges follow from
 * buckets and chunk. */
AMQ_API amq_status amq_vacuum_new_explicit(uint64_t buckets, unsigned fp_bits,
                                           uint64_t chunk, unsigned max_kicks,
                                           const amq_options *opt,
                                           amq_cuckoo **out);

AMQ_API void amq_cuckoo_free(amq_cuckoo *c);

/* ---- updates and queries ------------------------------------------------ */

/* AMQ_ERR_FULL: no room after max_kicks evictions; the filter is unchanged. */
AMQ_API amq_status amq_cuckoo_add_hash(amq_cuckoo *c, uint64_t hash);
AMQ_API bool amq_cuckoo_contains_hash(const amq_cuckoo *c, uint64_t hash);
/* out[i] = contains(h[i]); prefetches both buckets of a group first. */
AMQ_API void amq_cuckoo_contains_batch(const amq_cuckoo *c, const uint64_t *h,
                                       size_t n, uint8_t *out);
/* Removes one copy. AMQ_ERR_NOT_FOUND if no slot of the key's two buckets
 * holds its fingerprint (then nothing changes). */
AMQ_API amq_status amq_cuckoo_remove_hash(amq_cuckoo *c, uint64_t hash);
/* Copies of the key's fingerprint in its two buckets (0..8): never below the
 * number of times the key was added and not removed. */
AMQ_API uint64_t amq_cuckoo_count_hash(const amq_cuckoo *c, uint64_t hash);

/* ---- properties --------------------------------------------------------- */

AMQ_API uint64_t amq_cuckoo_items(const amq_cuckoo *c);
AMQ_API uint64_t amq_cuckoo_buckets(const amq_cuckoo *c);
AMQ_API unsigned amq_cuckoo_fp_bits(const amq_cuckoo *c);
/* The four alternate ranges (all equal to buckets for a cuckoo filter). */
AMQ_API void amq_cuckoo_ranges(const amq_cuckoo *c, uint64_t ranges[4]);
/* items / (4 * buckets). */
AMQ_API double amq_cuckoo_load(const amq_cuckoo *c);
AMQ_API size_t amq_cuckoo_size_bytes(const amq_cuckoo *c);
AMQ_API double amq_cuckoo_fpr_bound(const amq_cuckoo *c);

#ifdef __cplusplus
}
#endif
#endif
