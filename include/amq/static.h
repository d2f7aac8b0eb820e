/*
 * amq/static.h — static fingerprint filters: built once from every key,
 * never updated. Smaller and faster to query than any dynamic filter.
 *
 *   xor       Graf & Lemire 2020. Three blocks of c = 1.23 n + 32 slots in
 *             all; a key's fingerprint equals the xor of the three slots it
 *             hashes to (one per block). Space 1.23 w + 32 w / n bits per
 *             key for w-bit fingerprints.
 *   fuse      binary fuse filters, Graf & Lemire 2022. The slots form
 *             segments; a key picks a start segment and hashes to one slot
 *             in each of the next `ways` (3 or 4) segments. Space ~1.125 w
 *             (3-wise) or ~1.075 w (4-wise) bits per key for large n, and
 *             the build is local in memory, so faster than xor's.
 *   ribbon    bumped Ribbon (BuRR; Dillinger, Hübschle-Schneider, Sanders
 *             & Walzer, SEA 2022): banded linear systems over GF(2) with
 *             64- (or 128-) bit coefficient rows in a few layers. Layer 0
 *             has 3% (W = 128: 1%) fewer rows than keys; keys that do not
 *             fit ("bumped", named by a 2-bit threshold per bucket of 128
 *             or 256 rows) go to the next layer, and a small standard
 *             layer ends the chain. At 10^6 keys and more, bits per key
 *             are 0.2-0.4% above the solution bits per row, codes and
 *             empty rows included. Fractional bits per key (e.g. 6.5) by
 *             giving some 64-row blocks one more solution column. With
 *             bump=0: standard Ribbon, one layer with ~11% (W = 64) or ~4%
 *             (W = 128) more rows than keys at 10^6 keys.
 *
 * Guarantee: no false negatives for the keys given to the build; a key not
 * given is reported with probability exactly 2^-w for xor and fuse (the
 * bound amq_xor_fpr_bound returns), and for ribbon with exactly the rate
 * amq_ribbon_fpr_bound returns: the average of 2^-r over the layer and
 * block where an absent key's query ends (every query checks the r or
 * r + 1 solution columns of exactly one layer). Width w is 8, 16 or 32.
 *
 * Builds: duplicates are tolerated (removed by sorting when the first
 * attempt fails; ribbon sorts every build and drops them up front);
 * n == 0 gives an empty filter that answers false; a failed attempt
 * (ribbon: of its small last layer) is retried with the next seed of a
 * fixed sequence (so a build is deterministic) and, for small n, a
 * slightly larger table. After
 * AMQ_STATIC_MAX_ATTEMPTS failures the build returns AMQ_ERR_FULL (never
 * observed; the bound exists so a build always ends).
 *
 * Ownership: _build returns an object released with _free (NULL accepted).
 * Thread-safety: queries are safe from any number of threads.
 * Complexity: build O(n) expected; contains O(1): 3-4 memory accesses (xor,
 * fuse) or, for ribbon, one 2-bit code and two (W = 128: three) 64-bit
 * words per solution column, in one layer (a second layer for ~3% of
 * queries).
 * Every type is also reachable through amq/filter.h: "xor8" "xor16"
 * "xor32" "fuse8" "fuse16" "fuse32" (":ways=4") and "ribbon" (":bits=R",
 * ":w=128", ":bump=0").
 */
#ifndef AMQ_STATIC_H
#define AMQ_STATIC_H

#include "amq/core.h"
#include "amq/filter.h"

#ifdef __cplusplus
extern "C" {
#endif

#define AMQ_STATIC_MAX_ATTEMPTS 64

/* ---- xor and binary fuse filters (one handle) ------------------------- */

typedef struct amq_xor amq_xor;

/* The structure of a filter of type "xor8/16/32" or "fuse8/16/32" made with amq/filter.h (its own
 * object, valid while the filter lives); NULL for any other filter. */
AMQ_API amq_xor *amq_xor_of(const amq_filter *f);

/* Xor filter over hashes[0..n) with w-bit fingerprints (w = 8, 16, 32).
 * Errors: AMQ_ERR_INVALID (width, NULL arguments), AMQ_ERR_OVERFLOW (more
 * than ~3.4e9 keys), AMQ_ERR_NOMEM, AMQ_ERR_FULL (see above). */
AMQ_API amq_status amq_xor_build(const uint64_t *hashes, size_t n,
                                 unsigned width, const amq_options *opt,
                                 amq_xor **out);
/* Binary fuse filter, ways = 3 or 4. Errors as amq_xor_build. */
AMQ_API amq_status amq_fuse_build(const uint64_t *hashes, size_t n,
                                  unsigned width, unsigned ways,
                                  const amq_options *opt, amq_xor **out);
AMQ_API void amq_xor_free(amq_xor *f);
AMQ_API bool amq_xor_contains_hash(const amq_xor *f, uint64_t hash);
/* out[i] = contains(hashes[i]); prefetches every key's 3-4 slots for a
 * group of keys before reading any of them. */
AMQ_API void amq_xor_contains_batch(const amq_xor *f, const uint64_t *h,
                                    size_t n, uint8_t *out);
/* Distinct keys stored. */
AMQ_API uint64_t amq_xor_items(const amq_xor *f);
/* Bytes of the fingerprint array. */
AMQ_API size_t amq_xor_size_bytes(const amq_xor *f);
AMQ_API unsigned amq_xor_width(const amq_xor *f);
AMQ_API unsigned amq_xor_ways(const amq_xor *f);
/* 2^-w, or 0 for an empty filter. */
AMQ_API double amq_xor_fpr_bound(const amq_xor *f);
/* Peak bytes a build of n keys allocates besides the filter itself
 * (peeling state; plus 8 n if duplicates force a sorted copy). ways = 0
 * for xor, 3 or 4 for fuse. Returns 0 for n = 0, for any other ways, and
 * on overflow. Assumes the shape of the first attempt: for a tiny n a
 * retry may grow the table, and then the build uses a little more. */
AMQ_API size_t amq_xor_build_memory(size_t n, unsigned width, unsigned ways);

/* ---- ribbon ------------------------------------------------------------ */

typedef struct amq_ribbon amq_ribbon;

/* The structure of a filter of type "ribbon" made with amq/filter.h (its own
 * object, valid while the filter lives); NULL for any other filter. */
AMQ_API amq_ribbon *amq_ribbon_of(const amq_filter *f);

/* Bumped Ribbon (BuRR) over hashes[0..n). bits in [1, 32]: solution
 * columns per row, fractional values allowed in steps of 1/64 (rounded);
 * fpr = the mean over absent keys' final blocks of 2^-r, at most
 * 2^-floor(bits) (1 - frac(bits)/2). band: the coefficient width W, 64 or
 * 128 (128: ~0.13% fewer bits per key; builds ~2x slower, queries a
 * little slower). Bits per key, all layers and codes counted: bits x
 * 1.0036 (W = 64) or x 1.0024 (W = 128) at 10^6-10^7 keys and bits = 8;
 * a few hundred keys pay one band of rows (W + 64) more. Errors as
 * amq_xor_build (AMQ_ERR_FULL only if the small last layer fails
 * AMQ_STATIC_MAX_ATTEMPTS seeds: never observed). */
AMQ_API amq_status amq_ribbon_build(const uint64_t *hashes, size_t n,
                                    double bits, unsigned band,
                                    const amq_options *opt, amq_ribbon **out);
/* The fewest solution bits per key (a multiple of 1/64, at least 1) whose
 * rate 2^-floor(b) (1 - frac(b)/2) is at most fpr: what "ribbon" built for
 * a target fpr passes as `bits`. 0 when fpr is outside (0, 1) or needs
 * more than 32. */
AMQ_API double amq_ribbon_bits_for(double fpr);
/* Standard Ribbon ("ribbon:bump=0"): one layer, ~1.11 (W = 64) or ~1.04
 * (W = 128) rows per key at 10^6 keys, growing with log n. Arguments and
 * errors as amq_ribbon_build. */
AMQ_API amq_status amq_ribbon_build_standard(const uint64_t *hashes, size_t n,
                                             double bits, unsigned band,
                                             const amq_options *opt,
                                             amq_ribbon **out);
AMQ_API void amq_ribbon_free(amq_ribbon *f);
AMQ_API bool amq_ribbon_contains_hash(const amq_ribbon *f, uint64_t hash);
/* out[i] = contains(hashes[i]); prefetches each key's code and solution
 * words 16 keys before it reads them. */
AMQ_API void amq_ribbon_contains_batch(const amq_ribbon *f, const uint64_t *h,
                                       size_t n, uint8_t *out);
/* Distinct keys stored. */
AMQ_API uint64_t amq_ribbon_items(const amq_ribbon *f);
/* Bytes of all layers' solutions and codes. */
AMQ_API size_t amq_ribbon_size_bytes(const amq_ribbon *f);
/* The false-positive probability of a key not built, exactly (0 when
 * empty). */
AMQ_API double amq_ribbon_fpr_bound(const amq_ribbon *f);
/* Solution columns per row the build used (e.g. 6.5). */
AMQ_API double amq_ribbon_bits(const amq_ribbon *f);
AMQ_API unsigned amq_ribbon_band(const amq_ribbon *f);
/* Layers (0 when empty; 1 for standard Ribbon and for fewer than ~1000
 * keys). */
AMQ_API unsigned amq_ribbon_layers(const amq_ribbon *f);
/* true for bumped Ribbon, false for standard. */
AMQ_API bool amq_ribbon_bumped(const amq_ribbon *f);
/* Peak bytes a build of n keys allocates besides the filter: the sorted
 * hashes (8 n), the band state (12 or 20 bytes per row) and a few sorting
 * partitions (~20-30 n bytes in all). 0 on overflow or a bad band. */
AMQ_API size_t amq_ribbon_build_memory(size_t n, unsigned band);

#ifdef __cplusplus
}
#endif
#endif
