/*
 * amq/range.h — range filters: "may any key lie in [lo, hi]?" before a
 * seek or a scan.
 *
 *   grafite   Costa, Ferragina & Vinciguerra, SIGMOD 2024. Static: built
 *             once from every key (amq_filter_build, amq_builder). For a
 *             query range of l keys none of which was added, the answer is
 *             a false positive with probability at most about l n / r,
 *             for every query, correlated with the keys or not, as long as
 *             it is chosen without the filter's seed; r is set from the
 *             target rate e and `range=L` (the rate e holds for ranges of
 *             L keys, l e / L for l keys). log2(L / e) + 2.4 bits a key
 *             at most. Spec: "grafite", "grafite:range=1024",
 *             "grafite:r=R", "grafite:keys=bytes" (below).
 *   memento   Eslami & Dayan, SIGMOD 2025. Dynamic: amq_filter_new, then
 *             adds and removes (amq_filter_add_hash with the integer,
 *             amq_filter_remove_hash), and it doubles as keys arrive. A
 *             range of l keys none of which is held answers yes with
 *             probability at most (ceil((l - 1) / 2^m) + 1) P, 2^m the
 *             least power of two >= L, P the bound of one prefix, which
 *             the target e / 2 caps for ranges of L keys (e for L = 1);
 *             ranges visiting more than 64 prefixes answer yes. Spec:
 *             "memento:range=L", with keys=bytes, and q=/slots=, l=,
 *             growth= as for eqf (amq/quotient.h).
 *
 * Keys are 64-bit integers in their natural order. A range filter's
 * filter-level calls (amq_filter_add, amq_filter_contains, the builder's
 * add) take byte keys through the order map AMQ_HASH_ORDER, the filters'
 * only and default hash: the first 8 bytes read big-endian, shorter keys
 * padded with zero bytes. It keeps order (a <= b as byte strings gives
 * map(a) <= map(b)), so a byte range is the range of its ends' maps; keys
 * that share their first 8 bytes are one key to the filter, and a byte
 * range is as long as its ends' maps lie apart (every key with a given
 * p-byte prefix is a range of 2^(64 - 8 p) values: size `range=` for
 * that). For integer keys give the integer itself (amq_builder_add_hash,
 * amq_filter_build's hashes, amq_range_query) or its 8 bytes big-endian.
 *
 * Everything else — build, frames, files, sizes, point bounds, freeing —
 * is the generic API (amq/filter.h); amq_filter_fpr_bound is the bound for
 * a range of one key.
 */
#ifndef AMQ_RANGE_H
#define AMQ_RANGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "amq/filter.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a range filter's keys are, fixed when it is built (spec
 * "keys=int", the default, or "keys=bytes"): integers, whose text form
 * is their digits and whose byte form is their 8 bytes big-endian; or
 * byte strings, mapped by their first 8 bytes. Either way a query is on
 * the 64-bit values; the CLI and the Redis module read it to parse the
 * ends of a range as the keys were given. */
typedef enum amq_range_keys {
    AMQ_RANGE_KEYS_INT = 0,
    AMQ_RANGE_KEYS_BYTES = 1
} amq_range_keys;

/* f's key form; -1 when f is not a range filter. */
AMQ_API int amq_range_key_form(const amq_filter *f);

/* *maybe = whether a key of f may lie in [lo, hi] (integers, lo <= hi).
 * No false negatives. Errors: AMQ_ERR_INVALID (NULL f or maybe, lo > hi),
 * AMQ_ERR_UNSUPPORTED (f is not a range filter: AMQ_CAP_RANGE),
 * AMQ_ERR_HASH (f was made with a hash that does not keep key order). */
AMQ_API amq_status amq_range_query(const amq_filter *f, uint64_t lo,
                                   uint64_t hi, bool *maybe);

/* The same for byte-string ends, through the order map (lo <= hi as
 * byte strings, compared as memcmp with a shorter prefix first). */
AMQ_API amq_status amq_range_query_bytes(const amq_filter *f, const void *lo,
                                         size_t lo_len, const void *hi,
                                         size_t hi_len, bool *maybe);

/* out[i] = amq_range_query(f, lo[i], hi[i]) for i < n; stops at the first
 * error (lo[i] > hi[i]: AMQ_ERR_INVALID) and returns it. */
AMQ_API amq_status amq_range_query_batch(const amq_filter *f,
                                         const uint64_t *lo, const uint64_t *hi,
                                         size_t n, uint8_t *out);

/* The certified bound on a false positive for a query range of len keys
 * none of which was added (len = 1: amq_filter_fpr_bound). 1 for ranges
 * the filter cannot tell apart; 0 for an empty filter or len = 0; -1 when
 * f is not a range filter. */
AMQ_API double amq_range_fpr_bound(const amq_filter *f, uint64_t len);

/* The range length f's target rate is for (spec "range=L"), the rate
 * being amq_filter_target_fpr; 0 when f is not a range filter. */
AMQ_API uint64_t amq_range_design_length(const amq_filter *f);

/* The order map: len bytes at key as a 64-bit value (AMQ_HASH_ORDER). */
AMQ_API uint64_t amq_range_key(const void *key, size_t len);

#ifdef __cplusplus
}
#endif
#endif
