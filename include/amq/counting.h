/*
 * amq/counting.h — filters that delete and count: the counting Bloom filter,
 * the d-left counting Bloom filter and the spectral Bloom filter.
 *
 * Create, update, query, merge and save them through amq/filter.h as
 * "counting", "dleft" and "spectral" (amq_filter_new, amq_filter_add_hash,
 * amq_filter_remove_hash, amq_filter_count_hash, amq_filter_union, ...).
 * This header adds what the generic interface does not report: each
 * structure's own parameters and state, read through amq_X_of(f).
 *
 *   counting  m counters of 4 or 8 bits, k probes of one hash (Fan, Cao,
 *             Almeida & Broder 2000, "Summary cache"). Insert adds 1 to the
 *             k counters, remove subtracts 1. Two layouts: blocked (the
 *             default) keeps a key's k counters in one 64-byte block of
 *             512/width counters, one cache line per operation, sized by
 *             the blocked Bloom curve over the blocks' Poisson load (13%
 *             more counters than classic at 1% with width 4: 43.4 bits/key
 *             against 38.4); classic makes k independent multiply-shift
 *             probes, FPR (1 - e^{-kn/m})^k at `width` times a Bloom
 *             filter's space. Spec: "counting:width=4|8,layout=blocked|
 *             classic,k=HASHES,m=COUNTERS" (m instead of capacity/fpr; k
 *             defaults to the optimum, at most 16 when blocked). Union is
 *             the saturating counter-wise sum (m, k, width and layout
 *             equal, else AMQ_ERR_INCOMPATIBLE), the filter of the multiset
 *             union. With X the nonzero counters, classic:
 *             amq_filter_estimate_items gives -(m/k) ln(1 - X/m) and
 *             amq_filter_fpr_bound (X/m)^k; blocked: the same per block
 *             (X_b of C counters), the estimate summed and the bound
 *             ceil(2^32/B)/2^32 sum_b (X_b/C)^k (an O(B) pass).
 *   dleft     d-left counting Bloom filter (Bonomi, Mitzenmacher, Panigrahy,
 *             Singh & Varghese 2006): d subtables of B buckets of c cells,
 *             each cell a remainder of r bits and a small counter. A key's
 *             fingerprint goes to the least loaded of its d buckets. FPR at
 *             most (stored fingerprints) / (B 2^r); about half the space of
 *             `counting` at the same rate (docs/structures.md).
 *             Spec: "dleft:d=2..8,cells=1..32,cbits=1..8,rbits=1..32,
 *             buckets=PER_SUBTABLE" (defaults d=2, cells=16 filled to 12
 *             on average at capacity, cbits=2, r = ceil(log2(capacity /
 *             (B fpr)))). amq_filter_add_hash returns AMQ_ERR_FULL (filter
 *             unchanged) when the key's fingerprint is new and all d of its
 *             buckets are full; count is the fingerprint's cell counter (0
 *             if absent).
 *   spectral  spectral Bloom filter (Cohen & Matias 2003): counters read as
 *             multiplicity estimates, the minimum over the key's k counters.
 *             Two insert rules: minimal increase (mode=mi, AMQ_SPECTRAL_MI,
 *             default: raise only the smallest counters; more accurate, no
 *             delete) and minimum selection (mode=ms, AMQ_SPECTRAL_MS: raise
 *             all k; deletes). Spec: "spectral:mode=mi|ms,width=4|8|16|32,
 *             layout=blocked|classic,k=HASHES,m=COUNTERS" (width 8 by
 *             default; the layouts are counting's, blocked by default for
 *             widths 4 and 8, classic for 16 and 32). Under minimal
 *             increase amq_filter_remove_hash returns AMQ_ERR_UNSUPPORTED
 *             (its counters are not sums of the keys on them, so a decrement
 *             can take a counter below another key's multiplicity: a false
 *             negative). Union is the saturating counter-wise sum (sound for
 *             both modes: every counter of a key is at least its
 *             multiplicity on each side); AMQ_ERR_INCOMPATIBLE unless m, k,
 *             width and mode are equal. contains == (count > 0).
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
 * Ownership: amq_X_of returns the filter's own structure, valid while the
 * filter lives; nothing here allocates or frees.
 * Thread-safety: the getters are queries, safe from any number of threads
 * while nobody modifies the filter.
 * Complexity: counting and spectral O(k) per operation (one cache line
 * blocked, k classic; fpr_bound and the estimate of a blocked filter O(m));
 * dleft O(d c) cell
 * comparisons in d buckets (d cache misses). Every getter is O(1).
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

/* Counters stuck at their maximum (2^width - 1). */
AMQ_API uint64_t amq_counting_saturated(const amq_counting *c);
/* m: the counters (the spec's m rounded up to whole 64-bit words). */
AMQ_API uint64_t amq_counting_counters(const amq_counting *c);
AMQ_API unsigned amq_counting_k(const amq_counting *c);
/* Bits per counter: 4 or 8. */
AMQ_API unsigned amq_counting_width(const amq_counting *c);
/* Whether a key's counters share one 64-byte block (layout=blocked, the
 * default) rather than k independent probes (layout=classic). */
AMQ_API bool amq_counting_blocked(const amq_counting *c);

/* ---- d-left counting Bloom filter -------------------------------------- */

typedef struct amq_dleft amq_dleft;

/* The structure of a filter of type "dleft" made with amq/filter.h (its own
 * object, valid while the filter lives); NULL for any other filter. */
AMQ_API amq_dleft *amq_dleft_of(const amq_filter *f);

/* Distinct fingerprints stored (occupied cells); amq_filter_fpr_bound is
 * this over B 2^r. */
AMQ_API uint64_t amq_dleft_fingerprints(const amq_dleft *f);

/* ---- spectral Bloom filter --------------------------------------------- */

typedef struct amq_spectral amq_spectral;

/* The structure of a filter of type "spectral" made with amq/filter.h (its own
 * object, valid while the filter lives); NULL for any other filter. */
AMQ_API amq_spectral *amq_spectral_of(const amq_filter *f);

typedef enum amq_spectral_mode {
    AMQ_SPECTRAL_MI = 0, /* minimal increase: raise only the minimum    */
    AMQ_SPECTRAL_MS = 1  /* minimum selection: raise all k; can delete  */
} amq_spectral_mode;

/* The insert rule: the spec's mode= (mi by default). */
AMQ_API amq_spectral_mode amq_spectral_get_mode(const amq_spectral *s);
/* Counters stuck at their maximum (2^width - 1). */
AMQ_API uint64_t amq_spectral_saturated(const amq_spectral *s);
/* Whether a key's counters share one 64-byte block (layout=blocked, the
 * default for widths 4 and 8) rather than k independent probes. */
AMQ_API bool amq_spectral_blocked(const amq_spectral *s);

#ifdef __cplusplus
}
#endif
#endif
