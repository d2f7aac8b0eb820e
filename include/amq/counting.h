/*
 * amq/counting.h — filters that delete and count: the counting Bloom filter,
 * the d-left counting Bloom filter and the spectral Bloom filter.
 *
 * These typed APIs are the fast path: they take 64-bit hashes (hash byte keys
 * with amq_hash64 and the hasher of your choice). Every type is also reachable
 * through amq/filter.h as "counting", "dleft" and "spectral".
 *
 *   counting  m counters of 4 or 8 bits, k multiply-shift probes of one hash
 *             (Fan, Cao, Almeida & Broder 2000, "Summary cache"). Insert adds
 *             1 to the k counters, remove subtracts 1. FPR as a Bloom filter
 *             with m cells: (1 - e^{-kn/m})^k, at `width` times the space.
 *   dleft     d-left counting Bloom filter (Bonomi, Mitzenmacher, Panigrahy,
 *             Singh & Varghese 2006): d subtables of B buckets of c cells,
 *             each cell a remainder of r bits and a small counter. A key's
 *             fingerprint goes to the least loaded of its d buckets. FPR at
 *             most (stored fingerprints) / (B 2^r); about half the space of
 *             `counting` at the same rate (docs/structures.md).
 *   spectral  spectral Bloom filter (Cohen & Matias 2003): counters read as
 *             multiplicity estimates, the minimum over the key's k counters.
 *             Two insert rules: minimal increase (AMQ_SPECTRAL_MI, default:
 *             raise only the smallest counters; more accurate, no delete)
 *             and minimum selection (AMQ_SPECTRAL_MS: raise all k; deletes).
 *
 * Counts never undercount. A counter (or cell counter) that reaches its
 * maximum is sticky: never changed again, so it can never produce a false
 * negative; a count read from a saturated counter is reported as
 * UINT64_MAX, meaning "at least the maximum, exact value lost".
 *
 * Deleting a key that was never inserted: if the structure can tell (one of
 * its counters is zero, no matching fingerprint), remove returns
 * AMQ_ERR_NOT_FOUND and changes nothing. A never-inserted key that is a
 * false positive cannot be told apart from a member: removing it decrements
 * other keys' counters and may create false negatives for them later. Only
 * remove keys you inserted.
 *
 * Ownership: _new returns an object released with _free (NULL accepted).
 * Thread-safety: queries are safe from any number of threads while nobody
 * modifies; updates need external locking.
 * Complexity: counting and spectral O(k) per operation; dleft O(d c) cell
 * comparisons in d buckets (d cache misses).
 */
#ifndef AMQ_COUNTING_H
#define AMQ_COUNTING_H

#include "amq/core.h"
#include "amq/filter.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- counting Bloom filter --------------------------------------------- */

typedef struct amq_counting amq_counting;

/* The structure of a filter of type "counting" made with amq/filter.h (its own
 * object, valid while the filter lives); NULL for any other filter. */
AMQ_API amq_counting *amq_counting_of(const amq_filter *f);

/* Sized for capacity keys at fpr (the classic Bloom sizing in counters),
 * width 4 or 8 bits per counter.
 * Errors: AMQ_ERR_INVALID, AMQ_ERR_OVERFLOW, AMQ_ERR_NOMEM. */
AMQ_API amq_status amq_counting_new(uint64_t capacity, double fpr,
                                    unsigned width, const amq_options *opt,
                                    amq_counting **out);
/* m >= 1 counters (rounded up to whole 64-bit words), 1 <= k <= 32. */
AMQ_API amq_status amq_counting_new_explicit(uint64_t m, unsigned k,
                                             unsigned width,
                                             const amq_options *opt,
                                             amq_counting **out);
AMQ_API void amq_counting_free(amq_counting *c);
AMQ_API void amq_counting_add_hash(amq_counting *c, uint64_t hash);
/* AMQ_ERR_NOT_FOUND (filter unchanged) if one of the key's counters is 0. */
AMQ_API amq_status amq_counting_remove_hash(amq_counting *c, uint64_t hash);
AMQ_API bool amq_counting_contains_hash(const amq_counting *c, uint64_t hash);
AMQ_API void amq_counting_contains_batch(const amq_counting *c,
                                         const uint64_t *h, size_t n,
                                         uint8_t *out);
/* Smallest of the key's counters (never an undercount; UINT64_MAX when
 * saturated). */
AMQ_API uint64_t amq_counting_count_hash(const amq_counting *c, uint64_t hash);
/* dst += src counter-wise, saturating: the filter of the multiset union.
 * AMQ_ERR_INCOMPATIBLE unless m, k and width are equal. */
AMQ_API amq_status amq_counting_union(amq_counting *dst,
                                      const amq_counting *src);
/* Distinct keys from the fill: -(m/k) ln(1 - X/m), X nonzero counters. */
AMQ_API double amq_counting_estimate_items(const amq_counting *c);
/* Counters stuck at their maximum (2^width - 1). */
AMQ_API uint64_t amq_counting_saturated(const amq_counting *c);
AMQ_API uint64_t amq_counting_counters(const amq_counting *c);
AMQ_API unsigned amq_counting_k(const amq_counting *c);
AMQ_API unsigned amq_counting_width(const amq_counting *c);
AMQ_API uint64_t amq_counting_items(const amq_counting *c);
/* (X/m)^k with X the nonzero counters. */
AMQ_API double amq_counting_fpr_bound(const amq_counting *c);

/* ---- d-left counting Bloom filter -------------------------------------- */

typedef struct amq_dleft amq_dleft;

/* The structure of a filter of type "dleft" made with amq/filter.h (its own
 * object, valid while the filter lives); NULL for any other filter. */
AMQ_API amq_dleft *amq_dleft_of(const amq_filter *f);

/* d = 4 subtables, 8 cells per bucket filled to 6 on average at capacity,
 * 2-bit cell counters, remainder bits r = ceil(log2(capacity / (B fpr))).
 * Errors: AMQ_ERR_INVALID, AMQ_ERR_OVERFLOW, AMQ_ERR_NOMEM. */
AMQ_API amq_status amq_dleft_new(uint64_t capacity, double fpr,
                                 const amq_options *opt, amq_dleft **out);
/* 2 <= d <= 8, 1 <= cells <= 32, 1 <= buckets <= 2^32 per subtable,
 * 1 <= rbits <= 32, 1 <= cbits <= 8. */
AMQ_API amq_status amq_dleft_new_explicit(unsigned d, unsigned cells,
                                          uint64_t buckets, unsigned rbits,
                                          unsigned cbits,
                                          const amq_options *opt,
                                          amq_dleft **out);
AMQ_API void amq_dleft_free(amq_dleft *f);
/* AMQ_ERR_FULL (filter unchanged) when the key's fingerprint is new and all
 * d of its buckets are full. */
AMQ_API amq_status amq_dleft_add_hash(amq_dleft *f, uint64_t hash);
/* AMQ_ERR_NOT_FOUND (filter unchanged) if the fingerprint is not stored. */
AMQ_API amq_status amq_dleft_remove_hash(amq_dleft *f, uint64_t hash);
AMQ_API bool amq_dleft_contains_hash(const amq_dleft *f, uint64_t hash);
AMQ_API void amq_dleft_contains_batch(const amq_dleft *f, const uint64_t *h,
                                      size_t n, uint8_t *out);
/* The fingerprint's cell counter: 0 if absent, UINT64_MAX if saturated. */
AMQ_API uint64_t amq_dleft_count_hash(const amq_dleft *f, uint64_t hash);
/* Distinct fingerprints stored (occupied cells). */
AMQ_API uint64_t amq_dleft_fingerprints(const amq_dleft *f);
AMQ_API uint64_t amq_dleft_items(const amq_dleft *f);
AMQ_API size_t amq_dleft_size_bytes(const amq_dleft *f);
/* fingerprints / (B 2^r). */
AMQ_API double amq_dleft_fpr_bound(const amq_dleft *f);

/* ---- spectral Bloom filter --------------------------------------------- */

typedef struct amq_spectral amq_spectral;

/* The structure of a filter of type "spectral" made with amq/filter.h (its own
 * object, valid while the filter lives); NULL for any other filter. */
AMQ_API amq_spectral *amq_spectral_of(const amq_filter *f);

typedef enum amq_spectral_mode {
    AMQ_SPECTRAL_MI = 0, /* minimal increase: raise only the minimum    */
    AMQ_SPECTRAL_MS = 1  /* minimum selection: raise all k; can delete  */
} amq_spectral_mode;

/* width 4, 8, 16 or 32 bits per counter.
 * Errors: AMQ_ERR_INVALID, AMQ_ERR_OVERFLOW, AMQ_ERR_NOMEM. */
AMQ_API amq_status amq_spectral_new(uint64_t capacity, double fpr,
                                    amq_spectral_mode mode, unsigned width,
                                    const amq_options *opt, amq_spectral **out);
AMQ_API amq_status amq_spectral_new_explicit(uint64_t m, unsigned k,
                                             unsigned width,
                                             amq_spectral_mode mode,
                                             const amq_options *opt,
                                             amq_spectral **out);
AMQ_API void amq_spectral_free(amq_spectral *s);
AMQ_API void amq_spectral_add_hash(amq_spectral *s, uint64_t hash);
/* Minimum selection only: AMQ_ERR_NOT_FOUND as amq_counting_remove_hash.
 * Minimal increase: AMQ_ERR_UNSUPPORTED (its counters are not sums of the
 * keys on them, so a decrement can take a counter below another key's
 * multiplicity: a false negative). */
AMQ_API amq_status amq_spectral_remove_hash(amq_spectral *s, uint64_t hash);
/* Multiplicity estimate: never below the true count (UINT64_MAX when
 * saturated). contains == (count > 0). */
AMQ_API uint64_t amq_spectral_count_hash(const amq_spectral *s, uint64_t hash);
AMQ_API bool amq_spectral_contains_hash(const amq_spectral *s, uint64_t hash);
AMQ_API void amq_spectral_contains_batch(const amq_spectral *s,
                                         const uint64_t *h, size_t n,
                                         uint8_t *out);
/* dst += src counter-wise, saturating (sound for both modes: every counter
 * of a key is at least its multiplicity on each side). AMQ_ERR_INCOMPATIBLE
 * unless m, k, width and mode are equal. */
AMQ_API amq_status amq_spectral_union(amq_spectral *dst,
                                      const amq_spectral *src);
AMQ_API amq_spectral_mode amq_spectral_get_mode(const amq_spectral *s);
AMQ_API uint64_t amq_spectral_saturated(const amq_spectral *s);
AMQ_API uint64_t amq_spectral_items(const amq_spectral *s);
AMQ_API double amq_spectral_fpr_bound(const amq_spectral *s);

#ifdef __cplusplus
}
#endif
#endif
