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
 *   ribbon    standard Ribbon, Dillinger & Walzer 2021: a banded linear
 *             system over GF(2) with 64- (or 128-) bit coefficient rows,
 *             ~1.11 (1.04) rows per key at 10^6 keys, solved by
 *             on-the-fly Gaussian elimination and back-substitution;
 *             fractional bits per key (e.g. 6.5) by giving some 64-row
 *             blocks one more solution column than the others.
 *
 * Guarantee: no false negatives for the keys given to the build; a key not
 * given is reported with probability exactly 2^-w for xor and fuse (the
 * bound amq_xor_fpr_bound returns), and with the block-weighted average of
 * 2^-r over the solution widths r for ribbon. Width w is 8, 16 or 32.
 *
 * Builds: duplicates are tolerated (removed by sorting when the first
 * attempt fails); n == 0 gives an empty filter that answers false; a
 * failed attempt is retried with the next seed of a fixed sequence (so a
 * build is deterministic) and, for small n, a slightly larger table. After
 * AMQ_STATIC_MAX_ATTEMPTS failures the build returns AMQ_ERR_FULL (never
 * observed; the bound exists so a build always ends).
 *
 * Ownership: _build returns an object released with _free (NULL accepted).
 * Thread-safety: queries are safe from any number of threads.
 * Complexity: build O(n) expected; contains O(1): 3-4 memory accesses (xor,
 * fuse) or two 64-bit words per solution column (ribbon).
 * Every type is also reachable through amq/filter.h: "xor8" "xor16"
 * "xor32" "fuse8" "fuse16" "fuse32" (":ways=4") and "ribbon" (":bits=R").
 */
#ifndef AMQ_STATIC_H
#define AMQ_STATIC_H

#include "amq/core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define AMQ_STATIC_MAX_ATTEMPTS 64

/* ---- xor and binary fuse filters (one handle) ------------------------- */

typedef struct amq_xor amq_xor;

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
 * for xor. 0 on overflow. */
AMQ_API size_t amq_xor_build_memory(size_t n, unsigned width, unsigned ways);

/* ---- standard ribbon ------------------------------------------------- */

typedef struct amq_ribbon amq_ribbon;

/* bits in [1, 32]: solution columns per row, fractional values allowed in
 * steps of 1/64 (rounded); fpr = mean over keys' blocks of 2^-r. band: the
 * coefficient width W, 64 or 128 (rows per key ~1.11 or ~1.04 at 10^6
 * keys; 128 queries a little slower). Errors as amq_xor_build. */
AMQ_API amq_status amq_ribbon_build(const uint64_t *hashes, size_t n,
                                    double bits, unsigned band,
                                    const amq_options *opt, amq_ribbon **out);
AMQ_API void amq_ribbon_free(amq_ribbon *f);
AMQ_API bool amq_ribbon_contains_hash(const amq_ribbon *f, uint64_t hash);
AMQ_API void amq_ribbon_contains_batch(const amq_ribbon *f, const uint64_t *h,
                                       size_t n, uint8_t *out);
AMQ_API uint64_t amq_ribbon_items(const amq_ribbon *f);
AMQ_API size_t amq_ribbon_size_bytes(const amq_ribbon *f);
AMQ_API double amq_ribbon_fpr_bound(const amq_ribbon *f);
/* Solution columns per row the build used (e.g. 6.5). */
AMQ_API double amq_ribbon_bits(const amq_ribbon *f);
AMQ_API unsigned amq_ribbon_band(const amq_ribbon *f);
/* Peak bytes a build of n keys allocates besides the filter (band state
 * and grouped keys; plus 8 n if duplicates force a sorted copy). */
AMQ_API size_t amq_ribbon_build_memory(size_t n, unsigned band);

#ifdef __cplusplus
}
#endif
#endif
