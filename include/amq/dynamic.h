/*
 * amq/dynamic.h — the fast dynamic filters: one or two cache lines per
 * insert and per query, built for one-key-at-a-time use.
 *
 * All three are made, filled, queried, saved and freed through
 * amq/filter.h as "vqf", "prefix" and "morton" (spec keys below); this
 * header has what the generic interface does not say: their layouts'
 * constants and the getters of a filter's shape and state (amq_X_of gives
 * the structure of such a filter: its own object, released with it by
 * amq_filter_free). docs/structures.md derives each bound; docs/format.md
 * has the frames.
 *
 *   vqf     Pandey, Conway, Durie, Bender, Farach-Colton, Johnson, "Vector
 *           Quotient Filters: Overcoming the Time/Space Trade-Off in Filter
 *           Design" (SIGMOD 2021). 64-byte blocks, each a small quotient
 *           filter (48 8-bit or 28 16-bit remainders in 80 or 36 lists);
 *           two candidate blocks per key, the less full takes it. Inserts,
 *           queries and removes touch the two lines; no relocation.
 *   prefix  Even, Even, Morrison, "Prefix Filter: Practically and
 *           Theoretically Better Than Bloom" (PVLDB 15, 2022). One bin per
 *           key (a pocket dictionary of 25 8-bit or 28 16-bit remainders in
 *           one half or whole cache line) keeping the smallest
 *           fingerprints it was given; the rest go to a small spare (a
 *           split-block Bloom filter here). A query reads one bin, and the
 *           spare only when its fingerprint exceeds a full bin's largest.
 *           Inserts only (no removes) and an insert never fails: past the
 *           capacity the spare's rate, and the bound, rise.
 *   morton  Breslow, Jayasena, "Morton Filters: Faster, Space-Efficient
 *           Cuckoo Filters via Biasing, Compression, and Decoupled Logical
 *           Sparsity" (PVLDB 11, 2018). A compressed cuckoo filter: 64-byte
 *           blocks of 64 logical buckets (2-bit fullness counters) sharing
 *           46 8-bit fingerprint slots (or 32 buckets and 26 16-bit
 *           slots), an overflow-tracking bit array per block so that most
 *           negative queries read one line, inserts biased to the first
 *           bucket; cuckoo evictions when both are full; removes.
 *
 * Guarantees. No false negatives for every key added (and, where removes
 * exist, not removed). amq_filter_fpr_bound() is an upper bound on the
 * probability that a key never added is reported, at the current load.
 * Sized from (capacity, fpr), each builds the smaller of its two
 * remainder widths whose bound at `capacity` keys meets fpr, and holds
 * capacity keys at or below its design load.
 *
 * Thread-safety: queries and the getters are safe from any number of
 * threads while no thread modifies the filter; updates need exclusive
 * access (except a vqf in concurrent mode, below).
 *
 * Failure modes. vqf and morton adds can fail with AMQ_ERR_FULL (vqf: both
 * blocks full; morton: no room after max_kicks evictions); the filter is
 * then exactly as before. Removing a key never added may remove another
 * key's fingerprint (a false-positive delete) and so create a false
 * negative: remove only keys you added. amq_filter_new returns
 * AMQ_ERR_SPEC (a bad spec key or value), AMQ_ERR_INVALID (capacity or fpr
 * out of range), AMQ_ERR_OVERFLOW (too large) or AMQ_ERR_NOMEM.
 */
#ifndef AMQ_DYNAMIC_H
#define AMQ_DYNAMIC_H

#include "amq/core.h"
#include "amq/filter.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- vector quotient filter ------------------------------------------- */

typedef struct amq_vqf amq_vqf;

/* The structure of a filter of type "vqf" made with amq/filter.h (its own
 * object, valid while the filter lives); NULL for any other filter. */
AMQ_API amq_vqf *amq_vqf_of(const amq_filter *f);

/* Design loads: capacity keys fill at most this share of the slots. The
 * first insert to fail comes at 93.9-94.6% (r = 8) and 89.4-89.8%
 * (r = 16) with 2 10^6 blocks, later for fewer blocks (measured;
 * test_dynamic checks the margin). */
#define AMQ_VQF_LOAD8 0.92
#define AMQ_VQF_LOAD16 0.86

/* Spec "vqf": from (capacity, fpr) the smaller of the two layouts (8- or
 * 16-bit remainders) whose bound 1 - (1 - 2 pb pqr)^capacity (about
 * 2 capacity / (B Q 2^r)) meets fpr: 11.6 bits per key and ~0.43% at
 * r = 8. Keys: r=8|16 (that layout), blocks=N (1 .. 2^32 - 1 64-byte
 * blocks, instead of capacity), concurrent=1 (as AMQ_OPT_CONCURRENT,
 * below).
 * Updates: an add fails with AMQ_ERR_FULL when both of the key's blocks
 * are full (nothing changes); O(1), one or two cache lines. The batch add
 * prefetches a few keys ahead, the batch query both blocks 16 keys ahead.
 * A remove takes one copy; AMQ_ERR_NOT_FOUND if neither block holds the
 * key's remainder.
 * Concurrent mode (AMQ_OPT_CONCURRENT in the options or concurrent=1; the
 * type lists AMQ_CAP_CONCURRENT), the exception to the thread-safety
 * rule above: one spin lock per block (one byte each, beside the table),
 * and
 *   - amq_filter_add_hash/remove_hash/contains_hash,
 *     amq_filter_contains_batch and amq_filter_add_batch (key by key) may
 *     be called from any number of threads at once, in any mix; each call
 *     on one key is atomic: the final state is the one of some sequential
 *     order of those calls, so the count is exact and FULL / NOT_FOUND
 *     answers and query answers are those of that order;
 *   - an add locks the key's first block, and its second too (lower index
 *     first) when the first is 3/4 full; a remove likewise when the first
 *     holds no copy; a query locks both;
 *   - serialization and free need the filter quiet (no call in flight);
 *     amq_filter_items and amq_filter_fpr_bound are exact once the calls
 *     are done.
 * The table and its frame are the same in both modes (the mode is not
 * saved: a loaded filter takes it from the load options); the mode costs
 * one uncontended lock per call (two for a query, or for an add whose
 * first block is 3/4 full) and a byte per block. */

AMQ_API uint64_t amq_vqf_blocks(const amq_vqf *f);
AMQ_API unsigned amq_vqf_rbits(const amq_vqf *f);
/* items / slots. */
AMQ_API double amq_vqf_load(const amq_vqf *f);

/* ---- prefix filter ------------------------------------------------------ */

typedef struct amq_prefix amq_prefix;

/* The structure of a filter of type "prefix" made with amq/filter.h (its own
 * object, valid while the filter lives); NULL for any other filter. */
AMQ_API amq_prefix *amq_prefix_of(const amq_filter *f);

/* Spec "prefix": from (capacity, fpr) the smaller of the two layouts (8-
 * or 16-bit remainders) meeting fpr at capacity keys: bins for load 0.95
 * (capacity / (0.95 K) bins, the paper's) or more if 90% of fpr needs
 * them, a spare sized for the expected forwards with the other 10%, and a
 * route byte per bin: about 11.8 bits per key and 0.41% at r = 8. Keys:
 * r=8|16, load=X (keys per bin slot at capacity, 0.5-1), bins=N,spare=M
 * (1 .. 2^32 - 1 bins of 32 bytes for r = 8, 64 for 16, and 32-byte spare
 * blocks; instead of capacity).
 * An add never fails: a full bin forwards to the spare (O(1): one bin,
 * sometimes one spare block); past the capacity the spare's rate, and
 * the bound, rise. The batches prefetch bins 16 keys ahead. No removes.
 * amq_filter_size_bytes counts the bins, the spare and the route bytes
 * (one per bin, kept beside the table and rebuilt when a frame is loaded,
 * not saved). The bound: 1 - (1 - pb pf)^items + min(1, pb pf above) *
 * spare rate, "above" the fingerprint values a routed query could take
 * (docs/structures.md). */

AMQ_API uint64_t amq_prefix_bins(const amq_prefix *f);
AMQ_API unsigned amq_prefix_rbits(const amq_prefix *f);
/* Fingerprints the bins forwarded to the spare. */
AMQ_API uint64_t amq_prefix_spare_items(const amq_prefix *f);

/* ---- Morton filter ----------------------------------------------------- */

typedef struct amq_morton amq_morton;

/* The structure of a filter of type "morton" made with amq/filter.h (its own
 * object, valid while the filter lives); NULL for any other filter. */
AMQ_API amq_morton *amq_morton_of(const amq_filter *f);

/* Design load: capacity keys fill at most this share of the slots (plus
 * the cuckoo filter's margin for small tables, 1.5 sqrt(n) + 8 slots). */
#define AMQ_MORTON_LOAD 0.95
#define AMQ_MORTON_DEFAULT_KICKS 256
#define AMQ_MORTON_MAX_KICKS 4096
/* The second bucket's share of the rate at the design load: absent keys
 * are reported at about (1 + B2) items / (M 2^r), measured at 10^5 and
 * 10^6 keys (docs/structures.md): the curve's model. 8- and 16-bit
 * layouts. (The OTA bits set are fewer, 14.5% and 7.8%, but a key whose
 * bit is set is likelier to find its own fingerprint's twin in b2.) */
#define AMQ_MORTON_B2_8 0.20
#define AMQ_MORTON_B2_16 0.17

/* Spec "morton": from (capacity, fpr) the smaller of the two layouts (8-
 * or 16-bit fingerprints) whose bound 1 - (1 - 2^-r p2)^capacity meets
 * fpr: about 11.7 bits per key at r = 8 (bound 0.54%, measured 0.32%).
 * Keys: fp=8|16, blocks=N (64-byte blocks, at most 2^31 buckets in all,
 * instead of capacity), max_kicks=N (0 .. AMQ_MORTON_MAX_KICKS, default
 * AMQ_MORTON_DEFAULT_KICKS).
 * An add fails with AMQ_ERR_FULL (no room within max_kicks evictions) or
 * AMQ_ERR_NOMEM (the first eviction walk allocates its undo log,
 * (2 max_kicks + 2) x 72 bytes), the filter then unchanged; amortised
 * O(1), one line when the first bucket has room. The batches prefetch
 * first blocks a few keys ahead. A remove takes one copy;
 * AMQ_ERR_NOT_FOUND if neither bucket holds the fingerprint. The bound:
 * 1 - (1 - 2^-r p2)^items, p2 = 2 ceil(2^32 / M) / 2^32 (the cuckoo
 * filter's: both buckets, whatever the OTA says). */

AMQ_API uint64_t amq_morton_blocks(const amq_morton *f);
AMQ_API unsigned amq_morton_fp_bits(const amq_morton *f);
/* items / slots. */
AMQ_API double amq_morton_load(const amq_morton *f);
/* Share of OTA bits set: about the share of absent keys that read two
 * lines. */
AMQ_API double amq_morton_ota_share(const amq_morton *f);

#ifdef __cplusplus
}
#endif
#endif
