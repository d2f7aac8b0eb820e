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
 * Every type is built through amq/filter.h, amq_filter_build (or
 * amq_builder, amq/builder.h), from the spec names:
 *   "xor8" "xor16" "xor32"      xor filters, w = 8, 16, 32;
 *   "fuse8" "fuse16" "fuse32"   binary fuse filters, ":ways=3" (default)
 *                               or ":ways=4";
 *   "ribbon"                    bumped Ribbon: ":bits=B" (solution bits
 *                               per key, 1-32 in steps of 1/64; else from
 *                               the target fpr, amq_ribbon_bits_for),
 *                               ":w=64" (default) or ":w=128" (the band
 *                               width W), ":bump=0" for standard Ribbon.
 * Queries, sizes, bounds, frames and freeing are the generic API's
 * (amq_filter_contains_hash, amq_filter_contains_batch, amq_filter_items,
 * amq_filter_size_bytes, amq_filter_fpr_bound, amq_filter_free, ...). This
 * header keeps what the generic API does not say: the structure behind a
 * filter (amq_xor_of, amq_ribbon_of), its shape's getters, and the sizing
 * arithmetic (no object needed). amq/query.h compiles a fuse8 query into
 * the caller's loop.
 *
 * Guarantee: no false negatives for the keys given to the build; a key not
 * given is reported with probability exactly 2^-w for xor and fuse (the
 * bound amq_filter_fpr_bound returns), and for ribbon with exactly the
 * rate amq_filter_fpr_bound returns: the average of 2^-r over the layer
 * and block where an absent key's query ends (every query checks the r or
 * r + 1 solution columns of exactly one layer). An empty filter answers
 * false and its bound is 0.
 *
 * Builds: duplicates are tolerated (removed by sorting when the first
 * attempt fails; ribbon sorts every build and drops them up front), and
 * amq_filter_items counts the distinct keys; n == 0 gives an empty filter;
 * a failed attempt (ribbon: of its small last layer) is retried with the
 * next seed of a fixed sequence (so a build is deterministic) and, for
 * small n, a slightly larger table. After AMQ_STATIC_MAX_ATTEMPTS failures
 * the build returns AMQ_ERR_FULL (never observed; the bound exists so a
 * build always ends). Other build errors: AMQ_ERR_SPEC (a bad key or value:
 * ways=5, w=96, bits=40; ribbon with neither bits= nor a target fpr),
 * AMQ_ERR_INVALID (a target fpr the filter cannot meet: below 2^-w, below
 * ribbon's rate at its bits=, or past 32 bits),
 * AMQ_ERR_OVERFLOW (too many keys; xor and fuse take up to ~3.4e9),
 * AMQ_ERR_NOMEM.
 *
 * Ribbon's space, all layers and codes counted: bits x 1.0036 (W = 64)
 * or x 1.0024 (W = 128) at 10^6-10^7 keys and bits = 8 (W = 128 builds
 * ~2x slower, queries a little slower); a few hundred keys pay one band
 * of rows (W + 64) more. Standard Ribbon: ~1.11 (W = 64) or ~1.04
 * (W = 128) rows per key at 10^6 keys, growing with log n. Fractional
 * bits give fpr = the mean over absent keys' final blocks of 2^-r, at
 * most 2^-floor(bits) (1 - frac(bits)/2).
 *
 * Thread-safety: queries are safe from any number of threads.
 * Complexity: build O(n) expected; contains O(1): 3-4 memory accesses (xor,
 * fuse) or, for ribbon, one 2-bit code and two (W = 128: three) 64-bit
 * words per solution column, in one layer (a second layer for ~3% of
 * queries). Batch queries (amq_filter_contains_batch) prefetch every
 * key's 3-4 slots (xor, fuse) or its code and solution words (ribbon)
 * ahead of reading them.
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

/* The structure of a filter of type "xor8/16/32" or "fuse8/16/32" made
 * with amq/filter.h (its own object, valid while the filter lives); NULL
 * for any other filter. */
AMQ_API amq_xor *amq_xor_of(const amq_filter *f);

/* Fingerprint bits w: 8, 16 or 32. */
AMQ_API unsigned amq_xor_width(const amq_xor *f);
/* Slots a key hashes to: 3 (xor, fuse) or 4 ("fuse*:ways=4"). */
AMQ_API unsigned amq_xor_ways(const amq_xor *f);
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

/* The fewest solution bits per key (a multiple of 1/64, at least 1) whose
 * rate 2^-floor(b) (1 - frac(b)/2) is at most fpr: what "ribbon" built for
 * a target fpr uses as bits. 0 when fpr is outside (0, 1) or needs more
 * than 32. */
AMQ_API double amq_ribbon_bits_for(double fpr);
/* Solution columns per row the build used (e.g. 6.5; "ribbon:bits="). */
AMQ_API double amq_ribbon_bits(const amq_ribbon *f);
/* The band width W, 64 or 128 ("ribbon:w="). */
AMQ_API unsigned amq_ribbon_band(const amq_ribbon *f);
/* Layers (0 when empty; 1 for standard Ribbon and for fewer than ~1000
 * keys). */
AMQ_API unsigned amq_ribbon_layers(const amq_ribbon *f);
/* true for bumped Ribbon, false for standard ("ribbon:bump=0"). */
AMQ_API bool amq_ribbon_bumped(const amq_ribbon *f);
/* Peak bytes a build of n keys allocates besides the filter: the sorted
 * hashes (8 n), the band state (12 or 20 bytes per row) and a few sorting
 * partitions (~20-30 n bytes in all). 0 on overflow or a bad band. */
AMQ_API size_t amq_ribbon_build_memory(size_t n, unsigned band);

#ifdef __cplusplus
}
#endif
#endif
