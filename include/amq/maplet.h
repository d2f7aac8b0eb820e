/*
 * amq/maplet.h — maplets: approximate maps from keys to small values.
 *
 * A maplet represents a map M from keys to values the way a filter
 * represents a set (Bender, Conway, Farach-Colton, Johnson, Pandey, "Time
 * to replace your filter: how maplets simplify system design"). Querying a
 * key k returns m[k], which is never less than M[k] in the operator's
 * order: values are combined with an associative, commutative operator
 * (+) for which a, b <= a (+) b, and
 *
 *   - a key put and not deleted is always found (no false negatives);
 *   - strong maplet property: m[k] = M[k] (+) M[k_1] (+) ... (+) M[k_l]
 *     where k_1..k_l are the other keys stored under k's fingerprint, and
 *     P(l >= L) <= eps^L for eps = amq_filter_fpr_bound(); a key never put
 *     is reported with probability at most eps (then M[k] is "absent").
 *
 * Three families, all amq_filter objects (every amq_filter_* call works on
 * a maplet: contains, save / load / view, union = merge, describe, info,
 * fpr_bound, and the generic add, which puts the value 1):
 *
 *   maplet   the quotient maplet (dynamic): a quotient filter whose slots
 *            hold a remainder and a v-bit value (v = 1..64), so values move
 *            with their fingerprints in every shift, resize and merge.
 *            Spec: maplet:op=sum|max|min|or,v=BITS[,multiset=1]
 *            [,kbits=K (exact mode)][,concurrent=1][,q=|slots=,r=].
 *   emaplet  the expandable maplet: the expandable quotient filter's
 *            table (eqf, amq/quotient.h) with a v-bit value (v = 1..32)
 *            under each variable-length fingerprint, so it doubles when
 *            full without its pairs, values kept, at the eqf's rate. A
 *            get combines every entry matching the key (its own of each
 *            length, and colliding keys'); a sum delete takes from the
 *            longest first; a sum past 2^v - 1 takes a second entry.
 *            Combine mode only. Spec: emaplet:op=..,v=BITS[,q=|slots=,
 *            l=,growth=] (docs/structures.md, "The maplet that grows").
 *   smaplet  the static maplet (Bloomier filter): a bumped Ribbon
 *            retrieval structure holding each key's value (v bits per key
 *            and ~0.3% more) beside a membership filter (Ribbon by
 *            default, or member=fuse8|fuse16|...): log2(1/eps) + v bits
 *            per key plus under 3%. Built once from all pairs; answers for
 *            absent keys that pass the membership test are arbitrary (no
 *            strong property for them). Spec: smaplet:op=..,v=..[,member=].
 *
 * Operators (the order <= is the one (+) respects):
 *   sum  counters; a group, so delete subtracts. A sum of 0 is the same as
 *        no entry (a put of 0 changes nothing; a delete down to 0 removes
 *        the key). Counts up to 2^64 - 1 whatever v is: a count of 2^v or
 *        more takes a variable-length counter of k + 2 slots (the counting
 *        quotient filter's encoding, one base-(2^(r+v) - 1) digit per
 *        slot), so skewed counts cost few slots. v bounds each value put.
 *   max  the largest value put;  min  the smallest (<= is reversed);
 *   or   bitwise or: sets of up to v ids as bit masks.
 * Multiset mode (multiset=1) stores each (key, value) pair in its own slot
 * and combines when read, so delete(key, value) works for every operator
 * (it removes one stored copy of the pair). In combine mode (the default)
 * a key takes one slot (sum: one or a counter) and delete is
 * AMQ_ERR_UNSUPPORTED for max, min and or: what was combined cannot be
 * taken apart.
 *
 * Exact mode (kbits=K, 8 <= K <= 64): keys are integers below 2^K given
 * through amq_maplet_exact_hash, whose hash is a bijection of the key; the
 * table is sized so that fingerprints are the whole key, so there are no
 * false positives and no collisions: an exact map (e.g. 2-bit packed
 * k-mers, K = 2k <= 64). Byte keys and other hashes still work as in a
 * filter with eps = 2^-K.
 *
 * Space (quotient maplet): (r + v + 2.125) bits per slot (r = remainder
 * bits, r = ceil(log2(1/eps)) for a target eps; 2.125 bits of metadata),
 * N slots for capacity n at 95% load (N = n / 0.95 rounded up to 64) plus
 * min(N, 128) overflow slots; sum counters add their extra slots.
 *
 * Errors: AMQ_ERR_INVALID (a value wider than v bits, NULL arguments),
 * AMQ_ERR_FULL (no room; unchanged), AMQ_ERR_OVERFLOW (a sum past
 * 2^64 - 1: a key's, or, for the quotient maplet's sum, the total of all
 * keys' counts, which amq_filter_items reports; unchanged), AMQ_ERR_NOT_FOUND (get of an absent key, delete of
 * a pair not held; unchanged), AMQ_ERR_UNSUPPORTED (an operation the
 * maplet's mode cannot do, an update of a static maplet, or a filter
 * that is not a maplet), AMQ_ERR_INCOMPATIBLE (merge of different shapes,
 * operators, value widths, modes or hashers), AMQ_ERR_READONLY (an update
 * of a view).
 * A failing call leaves the maplet as it was.
 *
 * Thread-safety: as amq/filter.h. A quotient maplet created with
 * AMQ_OPT_CONCURRENT (or concurrent=1) takes put, delete, get and
 * get_batch from any number of threads at once (each call atomic, under
 * the quotient filter's region locks, amq/quotient.h); merge, resize,
 * drop_value, keep_values, iteration and saving need it quiet.
 *
 * Complexity (quotient maplet): put, get and delete are O(1) expected plus
 * the cluster they shift, as a quotient filter; merge, resize,
 * drop_value and keep_values are one linear pass, built aside (unchanged
 * on failure).
 */
#ifndef AMQ_MAPLET_H
#define AMQ_MAPLET_H

#include "amq/filter.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A maplet is a filter whose keys carry values. */
typedef struct amq_filter amq_maplet;

typedef enum amq_maplet_op {
    AMQ_MAPLET_SUM = 1,
    AMQ_MAPLET_MAX = 2,
    AMQ_MAPLET_MIN = 3,
    AMQ_MAPLET_OR = 4
} amq_maplet_op;

/* Name of an operator ("sum", "max", "min", "or"; "?" otherwise). */
AMQ_API const char *amq_maplet_op_name(amq_maplet_op op);
/* a (+) b; a sum is saturated at 2^64 - 1 and *overflow (may be NULL) set. */
AMQ_API uint64_t amq_maplet_combine(amq_maplet_op op, uint64_t a, uint64_t b,
                                    bool *overflow);

typedef struct amq_maplet_shape {
    amq_maplet_op op;
    unsigned value_bits; /* v                                          */
    bool multiset;
    bool is_static;          /* smaplet                                    */
    unsigned key_bits;       /* exact mode: K; 0 otherwise                 */
    unsigned remainder_bits; /* quotient maplet: r; smaplet: 0             */
    uint64_t slots;          /* quotient maplet: N home slots; smaplet: 0  */
    uint64_t used_slots;     /* quotient maplet: slots in use              */
    uint64_t distinct;       /* distinct fingerprints (smaplet: keys)      */
} amq_maplet_shape;

/* Is f a maplet (a type answering the calls below)? */
AMQ_API bool amq_maplet_is(const amq_filter *f);

/* ---- construction -------------------------------------------------------- */

/* An empty dynamic maplet sized for `capacity` keys at false-positive rate
 * fpr, or from explicit spec parameters (capacity = fpr = 0). Errors as
 * amq_filter_new; AMQ_ERR_UNSUPPORTED for a static or non-maplet spec. */
AMQ_API amq_status amq_maplet_new(const char *spec, uint64_t capacity,
                                  double fpr, const amq_options *opt,
                                  amq_maplet **out, amq_diag *diag);

/* The home slots one key whose values sum to count takes in a sum
 * maplet of v value bits and r remainder bits: 1 up to 2^v - 1, 2 up to
 * twice that, more for larger counts. Sizing a table from a count
 * distribution: capacity = the sum over keys, for a table at its maximum
 * load. 0 for count 0, v outside 1..64 or r outside 1..64. */
AMQ_API uint64_t amq_maplet_sum_slots(unsigned v, unsigned r, uint64_t count);

/* A maplet from n (hash, value) pairs: a static maplet is built from them
 * (repeated hashes have their values combined first), a dynamic one is
 * sized for n and filled in order. Hashes must come from the maplet's
 * hasher (amq_filter_resolve_hasher, as amq_filter_build) or from
 * amq_maplet_exact_hash. Errors as amq_filter_build, plus AMQ_ERR_INVALID
 * for a value wider than v bits (diag names the pair). */
AMQ_API amq_status amq_maplet_build(const char *spec, const uint64_t *hashes,
                                    const uint64_t *values, size_t n,
                                    double fpr, const amq_options *opt,
                                    amq_maplet **out, amq_diag *diag);

AMQ_API void amq_maplet_free(amq_maplet *m);

/* ---- updates and queries ------------------------------------------------- */

/* M[key] = M[key] (+) value (multiset mode: one more stored pair). */
AMQ_API amq_status amq_maplet_put(amq_maplet *m, const void *key, size_t len,
                                  uint64_t value);
AMQ_API amq_status amq_maplet_put_hash(amq_maplet *m, uint64_t hash,
                                       uint64_t value);

/* put_hash of (hashes[i], values[i]) in order, stopping at the first
 * failure, whose status is returned (the pairs before it are in, it and
 * the rest are not); *done (may be NULL) = pairs put. The same result as
 * the loop; the quotient maplet prefetches each key's block a few keys
 * ahead, so the cache misses of consecutive puts overlap. */
AMQ_API amq_status amq_maplet_put_batch(amq_maplet *m, const uint64_t *hashes,
                                        const uint64_t *values, size_t n,
                                        size_t *done);

/* m[key] into *value: AMQ_OK, or AMQ_ERR_NOT_FOUND (*value = 0). */
AMQ_API amq_status amq_maplet_get(const amq_maplet *m, const void *key,
                                  size_t len, uint64_t *value);
AMQ_API amq_status amq_maplet_get_hash(const amq_maplet *m, uint64_t hash,
                                       uint64_t *value);
/* values[i], found[i] (1 or 0) for hashes[i]; the cache misses of
 * consecutive keys overlap. Same answers as get_hash. */
AMQ_API void amq_maplet_get_batch(const amq_maplet *m, const uint64_t *hashes,
                                  size_t n, uint64_t *values, uint8_t *found);
/* Multiset mode: every value stored under hash's fingerprint, in
 * increasing order, into values[0..cap) and their number into *n (which
 * may exceed cap: then only cap are written). Combine mode: the one
 * combined value. AMQ_ERR_NOT_FOUND when there is none. */
AMQ_API amq_status amq_maplet_get_all(const amq_maplet *m, uint64_t hash,
                                      uint64_t *values, size_t cap, size_t *n);

/* Undo a put of (key, value): sum subtracts (AMQ_ERR_NOT_FOUND if the
 * maplet holds less), multiset mode removes one stored copy of the pair
 * (AMQ_ERR_NOT_FOUND if none). AMQ_ERR_UNSUPPORTED for max, min and or in
 * combine mode and for static maplets. */
AMQ_API amq_status amq_maplet_delete(amq_maplet *m, const void *key, size_t len,
                                     uint64_t value);
AMQ_API amq_status amq_maplet_delete_hash(amq_maplet *m, uint64_t hash,
                                          uint64_t value);

/* Multiset mode: remove every stored pair whose value is `value`, without
 * the keys (e.g. a run of an LSM node compacted away), in one linear pass.
 * AMQ_ERR_UNSUPPORTED in combine mode. */
AMQ_API amq_status amq_maplet_drop_value(amq_maplet *m, uint64_t value);

/* Keep only the entries whose value lies in [lo, hi] (a key's combined
 * value in combine mode, e.g. k-mers counted lo to hi times; each pair's
 * value in multiset mode), in one linear pass built aside. Afterwards
 * amq_filter_items is the kept pairs (multiset), the sum of the kept
 * values (sum), or the kept keys. AMQ_ERR_INVALID for lo > hi,
 * AMQ_ERR_UNSUPPORTED for a static maplet. */
AMQ_API amq_status amq_maplet_keep_values(amq_maplet *m, uint64_t lo,
                                          uint64_t hi);

/* ---- whole-maplet operations ---------------------------------------------- */

/* dst = dst (+) src: equal fingerprints combine (multiset: pairs join), one
 * linear pass, the same bytes as putting everything into one maplet. Same
 * type, hasher, operator, value width, mode and shape required. */
AMQ_API amq_status amq_maplet_merge(amq_maplet *dst, const amq_maplet *src);
/* Twice the home slots without the keys: one remainder bit moves into the
 * quotient, so fingerprints and values are unchanged (an exact maplet
 * stays exact) and the bound of the stored set is unchanged, but the
 * maplet now fills toward twice the rate it was sized for: the bound at
 * the new capacity is amq_maplet_resized_bound(). Needs r >= 2 (else
 * AMQ_ERR_INVALID). */
AMQ_API amq_status amq_maplet_resize(amq_maplet *m);
/* The bound amq_filter_fpr_bound() will report when the maplet holds as
 * many keys as it has home slots times 0.95 (its capacity). */
AMQ_API double amq_maplet_capacity_bound(const amq_maplet *m);

/* ---- fingerprints, exact mode, enumeration -------------------------------- */

AMQ_API amq_status amq_maplet_get_shape(const amq_maplet *m,
                                        amq_maplet_shape *out);
/* The fingerprint a hash is stored under (quotient << r | remainder):
 * keys with equal fingerprints share their values. */
AMQ_API uint64_t amq_maplet_fingerprint(const amq_maplet *m, uint64_t hash);
/* Exact mode: the hash of integer key < 2^K (AMQ_ERR_INVALID otherwise,
 * AMQ_ERR_UNSUPPORTED if not exact), and the key of a fingerprint. */
AMQ_API amq_status amq_maplet_exact_hash(const amq_maplet *m, uint64_t key,
                                         uint64_t *hash);
AMQ_API amq_status amq_maplet_exact_key(const amq_maplet *m,
                                        uint64_t fingerprint, uint64_t *key);

/* Every stored fingerprint in increasing order with its combined value
 * and its number of stored pairs (1 in combine mode). The maplet must not
 * change during the iteration. init: AMQ_ERR_UNSUPPORTED for a static
 * maplet. */
typedef struct amq_maplet_iter {
    const amq_maplet *m;
    uint64_t state[4];
} amq_maplet_iter;

AMQ_API amq_status amq_maplet_iter_init(const amq_maplet *m,
                                        amq_maplet_iter *it);
AMQ_API bool amq_maplet_iter_next(amq_maplet_iter *it, uint64_t *fingerprint,
                                  uint64_t *value, uint64_t *entries);

#ifdef __cplusplus
}
#endif
#endif
