/*
 * amq/quotient.h — the quotient filter family: qf and cqf (and aqf, eqf).
 *
 *   qf   rank-and-select quotient filter (Bender et al. 2012, with the
 *        metadata of Pandey et al. 2017): every key is a fingerprint
 *        f = floor(h * N * 2^r / 2^64) split into a quotient f >> r (its home
 *        slot among N) and an r-bit remainder stored in the slot; a key
 *        inserted c times occupies c slots. Supports remove, count, hash-order
 *        enumeration, linear-time merge and resize without the keys.
 *   cqf  counting quotient filter (Pandey et al. 2017): same table, but
 *        repeated remainders are run-length encoded with a variable-length
 *        counter kept in remainder slots, so a key inserted c times takes
 *        O(log c / r) slots. insert/remove take a count.
 *
 * Two more types share the table and live behind amq/filter.h alone:
 * "aqf", adaptive (amq_filter_report_fp), and "eqf", expandable: it
 * doubles when full, without the keys, and keeps its bound under its
 * target at any size (params q=/slots=, l=, growth=; docs/structures.md,
 * "Expandable quotient filter"); amq_eqf_from_qf below turns a full qf
 * into one.
 *
 * Both are made, updated and queried through amq/filter.h as "qf" and
 * "cqf" (amq_filter_new, _add_hash, _add_batch, _remove_hash,
 * _contains_hash, _contains_batch, _count_hash, _union, ...) with parameters
 *   q=LOG2_SLOTS   or   slots=N (a multiple of 64)   and   r=REMAINDER_BITS
 * (r: 1..58 for qf, 2..58 for cqf; ceil(log2 N) + r <= 64, since the
 * fingerprint is cut from one 64-bit hash, else AMQ_ERR_OVERFLOW) and
 * concurrent=1 (as AMQ_OPT_CONCURRENT, below); AMQ_OPT_SCALAR in the
 * options keeps the portable select and slot-by-slot moves, the reference
 * the fast paths are tested against. From a target (capacity n, fpr eps):
 * r = ceil(log2(1/eps)) and N = n / 0.95 rounded up to a multiple of 64
 * (at most 95% load at capacity). amq_qf_of gives the structure behind
 * such a filter for the calls below, which the generic API does not have:
 * counted updates, enumeration, resize, a merge into a new filter, and
 * the shape.
 *
 * Space: N + E slots (E = min(N, 128) overflow slots past the last home slot)
 * of r bits each, plus 2.125 bits of metadata per slot (one occupied bit, one
 * run-end bit, and an 8-bit offset per block of 64 slots).
 *
 * False positives: a key never inserted is reported iff its fingerprint equals
 * a stored one. With D distinct stored fingerprints its probability is at most
 * D * (1/(N 2^r) + 2^-64) (amq_filter_fpr_bound()), which is < 0.95 * 2^-r up
 * to capacity (docs/structures.md, "Quotient filters").
 *
 * Errors: AMQ_ERR_FULL when an insert finds no free slot before the end of
 * the table (the filter is unchanged); AMQ_ERR_NOT_FOUND when a remove asks
 * for more copies than are held (unchanged); AMQ_ERR_INCOMPATIBLE for merges
 * of different shapes or modes; AMQ_ERR_UNSUPPORTED for an update of a view
 * (amq_filter_view, amq_filter_open_file: its table is the caller's
 * read-only buffer); AMQ_ERR_INVALID, AMQ_ERR_OVERFLOW, AMQ_ERR_NOMEM
 * (unchanged) elsewhere.
 *
 * Ownership: the amq_qf of a filter belongs to it (amq_filter_free);
 * amq_qf_merge returns a new filter the caller releases with
 * amq_filter_free.
 *
 * Thread-safety. By default queries are safe from any number of threads
 * while nobody modifies, and updates need external locking. A filter
 * created with AMQ_OPT_CONCURRENT in its options (or the spec parameter
 * concurrent=1; the type lists AMQ_CAP_CONCURRENT) is in concurrent mode:
 * the table is cut into regions of 4096 slots with one spin lock each, and
 *   - amq_filter_add_hash/remove_hash/contains_hash/count_hash,
 *     amq_filter_contains_batch, amq_filter_add_batch (key by key) and
 *     amq_cqf_insert/remove may be called from any number of threads at
 *     once, in any mix; each call on one key is atomic: the final state is
 *     the one of some sequential order of those calls, so counts are exact
 *     and FULL / NOT_FOUND answers are those of that order;
 *   - each call on quotient Q locks Q's region and the next one (in
 *     increasing order); if the slots it must shift or read reach past them
 *     (a cluster longer than the window, or a saturated offset looking back
 *     before it) it releases them before changing anything and retakes
 *     every region lock in increasing order, so it never deadlocks;
 *   - union, merge, resize, iteration, serialization and free need the
 *     filter quiet (no call in flight); amq_qf_distinct and
 *     amq_qf_used_slots may be read at any time and are exact once the
 *     calls are done (amq_filter_items and amq_filter_fpr_bound too, once
 *     they are done).
 * Concurrent mode costs one uncontended lock pair per call; the table and
 * its frame are the same in both modes (the mode is not saved: a loaded
 * filter takes it from the load options).
 *
 * Complexity: insert, remove, contains and count cost O(1) expected at
 * bounded load plus the length of the cluster they shift (O(1/(1-load)^2)
 * expected, moved a 64-bit word at a time); merge and resize are linear in
 * the table size.
 */
#ifndef AMQ_QUOTIENT_H
#define AMQ_QUOTIENT_H

#include "amq/core.h"
#include "amq/filter.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One type for both: a cqf is an amq_qf in counting mode
 * (amq_qf_is_counting tells). Every amq_qf_* function works on both, and
 * amq_cqf_insert/remove on a qf insert or remove count single copies. */
typedef struct amq_qf amq_qf;

/* The structure of a filter of type "qf" or "cqf" made with amq/filter.h (its own
 * object, valid while the filter lives); NULL for any other filter. */
AMQ_API amq_qf *amq_qf_of(const amq_filter *f);

#define AMQ_QF_MAX_LOAD 0.95
#define AMQ_QF_MAX_RBITS 58 /* 64-bit hash = log2(N >= 64) + r bits */

/* ---- counting (cqf; on a qf they count single copies) ----------------- */

/* count more copies of hash (count >= 1), in O(log count / r) slots for a
 * cqf. AMQ_ERR_FULL / AMQ_ERR_OVERFLOW (the count or the item total would
 * pass 2^64 - 1) leave the filter unchanged; on a qf a count above the
 * longest group (72 copies) is AMQ_ERR_UNSUPPORTED. AMQ_ERR_INVALID for
 * NULL f or count 0, AMQ_ERR_UNSUPPORTED for a view. */
AMQ_API amq_status amq_cqf_insert(amq_qf *f, uint64_t hash, uint64_t count);
/* count fewer copies; AMQ_ERR_NOT_FOUND if fewer are held (unchanged).
 * AMQ_ERR_INVALID for NULL f or count 0, AMQ_ERR_UNSUPPORTED for a view. */
AMQ_API amq_status amq_cqf_remove(amq_qf *f, uint64_t hash, uint64_t count);

/* ---- fingerprints and enumeration ------------------------------------- */

/* hash's fingerprint in [0, N * 2^r): quotient << r | remainder. Equal
 * fingerprints are indistinguishable to the filter. */
AMQ_API uint64_t amq_qf_fingerprint(const amq_qf *f, uint64_t hash);

/* Iterates the distinct fingerprints in increasing order (= hash order),
 * each with its count. The filter must not change during the iteration. */
typedef struct amq_qf_iter {
    const amq_qf *f;
    uint64_t quotient; /* current run's quotient */
    uint64_t pos;      /* next slot to decode */
    uint64_t runend;   /* end of the current run */
    bool in_run;
} amq_qf_iter;

AMQ_API void amq_qf_iter_init(const amq_qf *f, amq_qf_iter *it);
/* false when done; else the next fingerprint and its count. */
AMQ_API bool amq_qf_iter_next(amq_qf_iter *it, uint64_t *fingerprint,
                              uint64_t *count);

/* ---- whole-filter operations -------------------------------------------- */

/* A new filter holding the multiset union of a and b (counts add), built by
 * one linear pass in fingerprint order without copying either; the union
 * in place is amq_filter_union(dst, src). a and b must be filters of one
 * type ("qf" or "cqf"), N, r and hasher (AMQ_ERR_INCOMPATIBLE); the result
 * has their type and hasher, no capacity or target fpr, and opt's
 * allocator and flags (AMQ_OPT_CONCURRENT, AMQ_OPT_SCALAR; opt may be
 * NULL; its hash fields are not read). AMQ_ERR_INVALID for a NULL
 * argument or a filter of another type, AMQ_ERR_FULL if the union does
 * not fit, AMQ_ERR_OVERFLOW if the item total would pass 2^64 - 1,
 * AMQ_ERR_NOMEM; *out = NULL on error. */
AMQ_API amq_status amq_qf_merge(const amq_filter *a, const amq_filter *b,
                                const amq_options *opt, amq_filter **out);
/* Double N and move one bit from the remainder to the quotient (r >= 2,
 * cqf r >= 3, else AMQ_ERR_INVALID): fingerprints are unchanged, so no key
 * is lost and the false-positive rate of the stored set is unchanged, but
 * the filter now fills toward 0.95 * 2^-(r-1): twice the rate it was
 * sized for (docs). Built aside, then swapped: AMQ_ERR_NOMEM,
 * AMQ_ERR_OVERFLOW leave it unchanged. AMQ_ERR_UNSUPPORTED for a view. */
AMQ_API amq_status amq_qf_resize(amq_qf *f);

/* A filter that grows ("eqf", amq/filter.h: it doubles when full, without
 * the keys) holding what the qf `qf` holds: each remainder becomes a
 * fingerprint of the same length, so every key is still there and the
 * bound of the keys held is unchanged; keys added later get fingerprints
 * long enough that the bound stays under qf's target fpr for at least 10
 * doublings (under twice the qf's own bound when that is already above
 * its target), and under twice that at any size (docs/structures.md,
 * "Expandable quotient filter"). The result has qf's hasher, capacity and
 * target, and opt's allocator (opt may be NULL; its hash fields are not
 * read); qf is not changed. What a caller does when a qf it cannot
 * rebuild is full (AMQ_ERR_FULL). AMQ_ERR_INVALID for a NULL argument, a
 * filter of another type or a concurrent qf; AMQ_ERR_OVERFLOW for
 * r > 54; AMQ_ERR_NOMEM; *out = NULL on error. */
AMQ_API amq_status amq_eqf_from_qf(const amq_filter *qf, const amq_options *opt,
                                   amq_filter **out);

/* ---- properties --------------------------------------------------------- */

AMQ_API uint64_t amq_qf_slots(const amq_qf *f);       /* N (home slots)   */
AMQ_API uint64_t amq_qf_table_slots(const amq_qf *f); /* N + E            */
AMQ_API unsigned amq_qf_rbits(const amq_qf *f);
AMQ_API bool amq_qf_is_counting(const amq_qf *f);
AMQ_API bool amq_qf_is_concurrent(const amq_qf *f);
AMQ_API uint64_t amq_qf_distinct(const amq_qf *f); /* D                */
AMQ_API uint64_t amq_qf_used_slots(const amq_qf *f);
/* Metadata bits per slot: 2.125. */
AMQ_API double amq_qf_metadata_bits_per_slot(void);

#ifdef __cplusplus
}
#endif
#endif
