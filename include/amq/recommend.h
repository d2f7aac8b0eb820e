/*
 * amq/recommend.h — which structure to build for a need, and what one of
 * its queries costs in memory reads.
 *
 * A need is n keys at a false-positive rate fpr, with or without deletes
 * and counts, and with or without every key known before the build (only
 * then may a static type serve). amq_recommend lists every registered
 * type that meets it, smallest first:
 *
 *   - bits per key come from the type's own curve (amq_curve_bits, the
 *     curve the allocation engine sizes with), which does not depend on n;
 *   - a static type is built once from 2048 fixed hashes at fpr: a type
 *     that cannot reach fpr (a fingerprint too narrow, Ribbon past 32
 *     bits per key) is left out, and a fixed-width type (xor8/16/32,
 *     fuse8/16/32) whose certified rate is well below fpr (under fpr/1.5)
 *     is listed at that rate and its bits, with `fixed` set: the width,
 *     not fpr, sets its size;
 *   - memory reads per query come from the type's layout
 *     (docs/structures.md): one cache line for blocked, sbbf and the
 *     prefix filter, 1-2 for the quotient filters, maplets, Ribbon and the
 *     Morton filter, two buckets for cuckoo and vacuum, both blocks for
 *     vqf, three slots for xor and fuse, and for the types whose reads are
 *     a parameter (k for the Bloom family, d for dleft, depth for cms) that
 *     parameter resolved for a small filter at fpr.
 *
 * Never listed: sketches (AMQ_CAP_SKETCH: topk), types that forget keys by
 * design (AMQ_CAP_FORGETS: stable), types without the capabilities asked
 * for (deletes: AMQ_CAP_REMOVE, counts: AMQ_CAP_COUNT) and, unless
 * allow_static, static types (AMQ_CAP_STATIC). The capabilities are the
 * type's at its default parameters (amq_type_info.caps). Ranking by reads
 * instead of space (the fastest type) is the caller's: every row carries
 * its reads.
 *
 * The library prints nothing: a caller that explains why a type is absent
 * does so from amq_type_info.caps, or, for a static type that passes
 * them, from the diagnostic of amq_filter_build at fpr.
 *
 * Thread-safety: no state is kept; any number of threads may call at once.
 * Complexity: one curve evaluation per type, plus one build of 2048 hashes
 * per static type (with allow_static) and one small filter (1000 keys) per
 * type whose reads are a parameter: a few milliseconds, independent of n.
 * Memory: those probes allocate through the C library and are freed before
 * the call returns.
 */
#ifndef AMQ_RECOMMEND_H
#define AMQ_RECOMMEND_H

#include "amq/filter.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Room for a row's reads_text, terminating NUL included. */
#define AMQ_READS_TEXT_MAX 32
/* The reads of a type no fixed count bounds (scalable: k in every stage,
 * and stages are added as it grows), or whose count is unknown
 * (reads_text "?"): it ranks after every fixed count. */
#define AMQ_READS_MANY 99u

/* What the filter must do. */
typedef struct amq_need {
    uint64_t n;        /* keys, at least 1                                */
    double fpr;        /* target false-positive rate, 0 < fpr < 1         */
    bool deletes;      /* keys are removed: AMQ_CAP_REMOVE                */
    bool counts;       /* multiplicities are asked: AMQ_CAP_COUNT         */
    bool allow_static; /* every key is known before the build: static
                          types (AMQ_CAP_STATIC) may serve               */
} amq_need;

/* One type that meets the need. Plain fields only (no pointer besides
 * type), so that bindings can mirror the layout. */
typedef struct amq_choice {
    const amq_type_info *type; /* static storage, never freed            */
    double bits_per_key;       /* what it really spends (see fixed)      */
    double fpr;                /* what it really gives: the need's fpr,
                                  or with fixed the type's own rate      */
    unsigned reads;            /* memory reads per query, the upper end;
                                  AMQ_READS_MANY when unbounded/unknown  */
    char reads_text[AMQ_READS_TEXT_MAX]; /* how they are said: "1", "1-2",
                                  "3 (nearby)", "k = 7", "k per stage"  */
    bool fixed; /* a fixed-width static type well below the need's fpr:
                   bits_per_key and fpr are at its own rate              */
} amq_choice;

/* Every type that meets *need, smallest bits_per_key first (ties in the
 * order of amq_filter_type_at). The first min(cap, *count) rows go to
 * out[0..]; *count (may be NULL) = how many types meet the need, even when
 * that is more than cap, so cap = 0 (out may then be NULL) asks only how
 * many. *count = 0 with AMQ_OK: no type meets it.
 * Errors: AMQ_ERR_INVALID (need NULL, out NULL with cap > 0, n = 0, fpr
 * outside (0, 1)), AMQ_ERR_NOMEM (a probe could not allocate); out and
 * *count are not written then. */
AMQ_API amq_status amq_recommend(const amq_need *need, amq_choice *out,
                                 size_t cap, size_t *count);

/* Memory reads per query of this filter, as amq_recommend counts them
 * (for a type whose reads are a parameter, from f's resolved value of it),
 * and how they are said, NUL-terminated in text[0..cap) (truncated to
 * fit; text may be NULL when cap = 0). AMQ_READS_MANY and "?" when the
 * count cannot be found. f must not be NULL. */
AMQ_API unsigned amq_filter_reads(const amq_filter *f, char *text, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
