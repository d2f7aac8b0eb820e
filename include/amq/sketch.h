/*
 * amq/sketch.h — frequency sketches: Count-Min (with conservative update)
 * and Top-K by HeavyKeeper, the pair RedisBloom exposes as CMS.* and TOPK.*.
 *
 *   cms    d rows of w counters (8, 16 or 32 bits). A key adds to one
 *          counter per row; its estimate is the smallest of its d counters
 *          (Cormode & Muthukrishnan 2005). Conservative update (Estan &
 *          Varghese 2002, on by default) raises only the counters that must
 *          rise. Guarantee, for a key x with true count f(x), N the total of
 *          all increments, MAX the counter maximum:
 *              est(x) >= min(f(x), MAX)                 always;
 *              est(x) <= f(x) + (e/w) N    with probability >= 1 - e^{-d}
 *          (the probability is over the hash function, for each key).
 *          Through amq/filter.h ("cms") it is also a membership filter:
 *          contains = estimate > 0, no false negatives.
 *
 *   topk   HeavyKeeper (Gong et al., USENIX ATC 2018): d arrays of w buckets
 *          holding (fingerprint, count); a colliding item decays a bucket's
 *          count by one with probability decay^-count and takes the bucket
 *          when the count reaches zero; a min-heap keeps the k items with
 *          the largest estimates, with (a prefix of) their key bytes.
 *          Guarantee: no overestimation unless two items share a bucket and
 *          a 32-bit fingerprint — est(x) <= f(x); the heap's counts too.
 *          Underestimates are the price of decay; the paper bounds them in
 *          probability (docs/structures.md). Not a membership filter.
 *
 * These typed APIs take 64-bit hashes (amq_hash64 with the hasher of your
 * choice); amq_topk_add_key also takes the key bytes so TOPK.LIST can name
 * items, and hashes them with the hasher chosen by the constructor's options.
 *
 * Ownership: _new returns an object released with _free (NULL accepted).
 * Item views returned by amq_topk_list / add point into the object and stay
 * valid until the next update or free.
 * Thread-safety: queries are safe from any number of threads while nobody
 * modifies; updates need external locking.
 * Complexity: cms incr/query O(d); topk add O(d) plus O(k) when the item's
 * estimate reaches the heap's minimum, O(log k) heap update; list O(k log k).
 */
#ifndef AMQ_SKETCH_H
#define AMQ_SKETCH_H

#include "amq/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Count-Min sketch ---------------------------------------------------- */

typedef struct amq_cms amq_cms;

#define AMQ_CMS_MAX_DEPTH 64

/* width >= 1, 1 <= depth <= 64, counter_bits 8, 16 or 32.
 * Errors: AMQ_ERR_INVALID, AMQ_ERR_OVERFLOW, AMQ_ERR_NOMEM, AMQ_ERR_HASH. */
AMQ_API amq_status amq_cms_new(uint64_t width, unsigned depth,
                               unsigned counter_bits, bool conservative,
                               const amq_options *opt, amq_cms **out);
/* From the error target: width = ceil(e / eps), depth = ceil(ln(1/delta)),
 * so est(x) <= f(x) + eps N with probability >= 1 - delta.
 * 0 < eps < 1, 0 < delta < 1. */
AMQ_API amq_status amq_cms_new_error(double eps, double delta,
                                     unsigned counter_bits, bool conservative,
                                     const amq_options *opt, amq_cms **out);
AMQ_API void amq_cms_free(amq_cms *c);

/* Add `by` to the key's count and return its new estimate. A counter never
 * wraps: it stops at amq_cms_counter_max(), and an estimate equal to that
 * maximum means "at least this much" (amq_cms_saturated counts such
 * counters). by == 0 only queries. */
AMQ_API uint64_t amq_cms_incr(amq_cms *c, uint64_t hash, uint64_t by);
/* The estimate: the minimum of the key's d counters. */
AMQ_API uint64_t amq_cms_query(const amq_cms *c, uint64_t hash);
/* out[i] = amq_cms_query(c, hashes[i]), with prefetching. */
AMQ_API void amq_cms_query_batch(const amq_cms *c, const uint64_t *hashes,
                                 size_t n, uint64_t *out);
/* dst += src counter by counter (saturating), for sketches of equal width,
 * depth and counter width (either update rule). Both guarantees hold for
 * the union of the two streams. AMQ_ERR_INCOMPATIBLE otherwise (dst
 * unchanged). */
AMQ_API amq_status amq_cms_merge(amq_cms *dst, const amq_cms *src);

AMQ_API uint64_t amq_cms_width(const amq_cms *c);
AMQ_API unsigned amq_cms_depth(const amq_cms *c);
AMQ_API unsigned amq_cms_counter_bits(const amq_cms *c);
AMQ_API uint64_t amq_cms_counter_max(const amq_cms *c);
AMQ_API bool amq_cms_conservative(const amq_cms *c);
/* N: the sum of every increment (saturating at UINT64_MAX). */
AMQ_API uint64_t amq_cms_total(const amq_cms *c);
/* Counters that reached the maximum (0: every estimate is exact-bounded). */
AMQ_API uint64_t amq_cms_saturated(const amq_cms *c);
/* The (eps, delta) of the guarantee: e / width and e^{-depth}. */
AMQ_API double amq_cms_epsilon(const amq_cms *c);
AMQ_API double amq_cms_delta(const amq_cms *c);
/* Probability that a key never added has a nonzero estimate: the product
 * over rows of (nonzero counters / width). Exact for this sketch under
 * independent uniform row hashes. */
AMQ_API double amq_cms_fpr_bound(const amq_cms *c);

/* ---- Top-K (HeavyKeeper) ------------------------------------------------- */

typedef struct amq_topk amq_topk;

#define AMQ_TOPK_MAX_K 65536u
#define AMQ_TOPK_MAX_DEPTH 16u
#define AMQ_TOPK_MAX_KEYLEN 1024u
/* key_len of an item added by hash only (no key bytes known). */
#define AMQ_TOPK_NO_KEY 0xffffffffu

/* One entry of the top-k list. key points to the first key_stored bytes of
 * the item's key (key_stored = min(key_len, the sketch's keylen)); key_len
 * is the original length, or AMQ_TOPK_NO_KEY for items added by hash. */
typedef struct amq_topk_item {
    uint64_t hash;
    uint64_t count;
    const uint8_t *key;
    uint32_t key_len;
    uint32_t key_stored;
} amq_topk_item;

/* An expelled item: a copy, so it outlives the next update. */
typedef struct amq_topk_expelled {
    uint64_t hash;
    uint64_t count;
    uint32_t key_len;
    uint32_t key_stored;
    uint8_t key[AMQ_TOPK_MAX_KEYLEN];
} amq_topk_expelled;

/* k items (1 <= k <= 65536); width buckets per row and depth rows (0: the
 * defaults, width = max(64, 8k), depth = 4 (tests/unit/test_topk.c measures
 * them)); decay in (1, 100] (the paper's b; 1.08 is its choice); keylen: key
 * bytes kept per heap entry (<= 1024, rounded up to a multiple of 8).
 * Errors: AMQ_ERR_INVALID, AMQ_ERR_OVERFLOW, AMQ_ERR_NOMEM, AMQ_ERR_HASH. */
AMQ_API amq_status amq_topk_new(unsigned k, uint64_t width, unsigned depth,
                                double decay, unsigned keylen,
                                const amq_options *opt, amq_topk **out);
AMQ_API void amq_topk_free(amq_topk *t);

/* Count one arrival of the item (by its hash). Returns true and fills *out
 * (if not NULL) when the item entered the top-k list and pushed another
 * out — RedisBloom's TOPK.ADD reply. Never fails, never allocates. */
AMQ_API bool amq_topk_add_hash(amq_topk *t, uint64_t hash,
                               amq_topk_expelled *out);
/* The same by `by` arrivals at once (TOPK.INCRBY); by == 0 does nothing. */
AMQ_API bool amq_topk_incr_hash(amq_topk *t, uint64_t hash, uint64_t by,
                                amq_topk_expelled *out);
/* Hash the key with the sketch's hasher, count it, and remember (up to
 * keylen bytes of) the key while the item is in the list.
 * Errors: AMQ_ERR_INVALID (key NULL with len > 0; len >= 2^32 - 1). */
AMQ_API amq_status amq_topk_add_key(amq_topk *t, const void *key, size_t len,
                                    amq_topk_expelled *out, bool *expelled);
AMQ_API uint64_t amq_topk_hash(const amq_topk *t, const void *key, size_t len);
/* The hasher amq_topk_add_key and amq_topk_hash use. */
AMQ_API void amq_topk_hasher(const amq_topk *t, amq_hasher *out);

/* Is the item in the top-k list right now (TOPK.QUERY)? */
AMQ_API bool amq_topk_query(const amq_topk *t, uint64_t hash);
/* Estimated count (TOPK.COUNT): the larger of the bucket estimate and the
 * list's count; never above the true count (see the guarantee above). */
AMQ_API uint64_t amq_topk_count(const amq_topk *t, uint64_t hash);
/* Fill items[0..n) with the list sorted by count, largest first (ties by
 * hash); returns n = min(cap, list size). items may be NULL when cap = 0. */
AMQ_API size_t amq_topk_list(const amq_topk *t, amq_topk_item *items,
                             size_t cap);

AMQ_API unsigned amq_topk_k(const amq_topk *t);
AMQ_API uint64_t amq_topk_width(const amq_topk *t);
AMQ_API unsigned amq_topk_depth(const amq_topk *t);
AMQ_API double amq_topk_decay(const amq_topk *t);
AMQ_API unsigned amq_topk_keylen(const amq_topk *t);
/* Number of arrivals counted (sum of increments, saturating). */
AMQ_API uint64_t amq_topk_total(const amq_topk *t);
/* Items in the list now (<= k). */
AMQ_API size_t amq_topk_size(const amq_topk *t);

/* ---- frames for the typed sketches ------------------------------------- */

/* A typed sketch is saved in the frame amq_filter_save writes for a "cms"
 * or "topk" filter with explicit parameters (docs/format.md; generic
 * capacity and fpr 0), so the bytes also open with amq_filter_load, and a
 * generic filter's "cms"/"topk" frame opens here.
 *
 * _serialized_size: the exact bytes _save writes.
 * _save: AMQ_ERR_BUFFER if cap is too small (nothing written past cap),
 *   AMQ_ERR_INVALID for NULL arguments. A Count-Min sketch keeps no hasher
 *   (it takes hashes), so the caller names the one its hashes came from.
 * _load: validates every field and the checksum before allocating (with
 *   opt's allocator; the hasher comes from the frame, and for cms is
 *   returned in *hasher if not NULL). Errors: AMQ_ERR_CORRUPT,
 *   AMQ_ERR_CHECKSUM, AMQ_ERR_VERSION, AMQ_ERR_INCOMPATIBLE (a frame of
 *   another type), AMQ_ERR_NOMEM, AMQ_ERR_INVALID (NULL arguments).
 * Ownership: the loaded sketch is the caller's (_free). */
struct amq_diag; /* amq/filter.h */
AMQ_API size_t amq_cms_serialized_size(const amq_cms *c);
AMQ_API amq_status amq_cms_save(const amq_cms *c, const amq_hasher *hasher,
                                void *buf, size_t cap, size_t *written);
AMQ_API amq_status amq_cms_load(const void *buf, size_t len,
                                const amq_options *opt, amq_cms **out,
                                amq_hasher *hasher, struct amq_diag *diag);
AMQ_API size_t amq_topk_serialized_size(const amq_topk *t);
AMQ_API amq_status amq_topk_save(const amq_topk *t, void *buf, size_t cap,
                                 size_t *written);
AMQ_API amq_status amq_topk_load(const void *buf, size_t len,
                                 const amq_options *opt, amq_topk **out,
                                 struct amq_diag *diag);

/* ---- t-digest ----------------------------------------------------------- */

/* The merging t-digest (Dunning & Ertl, "Computing extremely accurate
 * quantiles using t-digests", 2019): a sorted list of centroids (mean,
 * weight) over the values seen, with a buffer of recent values merged into
 * it when full. Centroids are small near the tails and large in the middle,
 * under the scale function k1(q) = (delta / 2 pi) asin(2q - 1): every
 * centroid spans at most one unit of k, so at most about 2 pi sqrt(q(1-q)) /
 * delta of the rank at quantile q (delta = compression).
 *
 * Guarantee, with R(x) the exact rank of x (any fraction from that of the
 * values below x to that of the values at or below x) and e(p) = 2 pi
 * sqrt(p(1-p)) / delta + 1/n: quantile(q) returns an x with |R(x) - q| <= e,
 * and |cdf(x) - R(x)| <= e, e the largest e(p) for p between the two
 * fractions compared. test_tdigest checks it against the exact data
 * (uniform, exponential, normal, 20-valued, ascending and descending
 * streams, delta 30, 100 and 500, values one by one, weighted and merged
 * from ten parts; one seed a stream, and it prints its largest miss); run
 * over 12 seeds, the largest miss was 0.89 e for quantile and 0.27 e for
 * cdf. The ends are exact: quantile(0) = min,
 * quantile(1) = max.
 * Memory: 6 delta + 32 entries of 16 bytes for centroids (at most delta +
 * 2 after a merge) and buffer together, as much again for the merged view
 * while one is kept.
 *
 * Values are finite doubles (NaN and infinities are refused); weights are
 * integers >= 1, the total below 2^53 so that ranks stay exact in a double.
 * The state (centroids and buffer) is a function of the updates alone: the
 * buffer is merged only when it fills, and queries read a merged view kept
 * beside the state, so the same updates give the same bytes whatever was
 * queried in between (a replica that runs only the writes stays
 * identical). That view is made by the first query after an update that
 * needs one (NaN, or AMQ_ERR_NOMEM from merge, if it cannot be allocated)
 * and dropped by the next update: queries, though const, need the same
 * external lock as updates.
 *
 * Frame: type 13 (a sketch, not a filter: amq_filter_load refuses it and
 * names the reader), params compression f64; payload min, max f64, total
 * weight u64, centroid and buffered counts u32, merges u64, then the
 * centroids and the buffered values as (mean f64, weight u64) (docs/structures.md,
 * "t-digest"). */
typedef struct amq_tdigest amq_tdigest;

#define AMQ_TDIGEST_DEFAULT_COMPRESSION 100.0
#define AMQ_TDIGEST_MAX_COMPRESSION 100000.0

/* compression in [1, 100000] (0 takes the default, 100).
 * Errors: AMQ_ERR_INVALID, AMQ_ERR_NOMEM. */
AMQ_API amq_status amq_tdigest_new(double compression, const amq_options *opt,
                                   amq_tdigest **out);
AMQ_API void amq_tdigest_free(amq_tdigest *t);
/* Forget every value; compression stays. */
AMQ_API void amq_tdigest_reset(amq_tdigest *t);

/* Add value with weight w >= 1. AMQ_ERR_INVALID for NaN, an infinity or
 * w == 0; AMQ_ERR_OVERFLOW when the total weight would reach 2^53; the
 * digest is unchanged on an error. */
AMQ_API amq_status amq_tdigest_add(amq_tdigest *t, double value, uint64_t w);
/* dst takes every centroid of src's merged view (dst == src doubles every
 * weight); compressions may differ (dst keeps its own). AMQ_ERR_OVERFLOW
 * (dst unchanged) when the total weight would reach 2^53; AMQ_ERR_NOMEM. */
AMQ_API amq_status amq_tdigest_merge(amq_tdigest *dst, const amq_tdigest *src);

/* Total weight (values added), compression, and centroids after merging. */
AMQ_API uint64_t amq_tdigest_count(const amq_tdigest *t);
AMQ_API double amq_tdigest_compression(const amq_tdigest *t);
AMQ_API size_t amq_tdigest_centroids(const amq_tdigest *t);
/* Smallest and largest value added; NaN when empty. */
AMQ_API double amq_tdigest_min(const amq_tdigest *t);
AMQ_API double amq_tdigest_max(const amq_tdigest *t);
/* The value at fraction q of the weight (0 <= q <= 1; NaN outside or when
 * empty). */
AMQ_API double amq_tdigest_quantile(const amq_tdigest *t, double q);
/* The fraction of the weight below x plus half of the weight at x: 0 below
 * min, 1 above max; NaN when empty or x is NaN. */
AMQ_API double amq_tdigest_cdf(const amq_tdigest *t, double x);
/* The same in weight units: the value at rank r (0 <= r <= count; NaN
 * outside or when empty), and the rank of x, the weight below it plus half
 * the weight at it (0 below min, count above max; NaN when empty or x is
 * NaN). quantile(q) = value_at(q count), cdf(x) = rank(x) / count. */
AMQ_API double amq_tdigest_value_at(const amq_tdigest *t, double r);
AMQ_API double amq_tdigest_rank(const amq_tdigest *t, double x);
/* The mean of the values between fractions lo and hi of the weight
 * (0 <= lo < hi <= 1; a centroid cut by a bound counts for the part inside);
 * NaN when empty or the bounds are out of range. */
AMQ_API double amq_tdigest_trimmed_mean(const amq_tdigest *t, double lo,
                                        double hi);

/* What TDIGEST.INFO reports: room (entries), the merged centroids and the
 * buffered values with their weights, the buffer merges so far (part of the
 * state: it travels in the frame) and the bytes held. */
typedef struct amq_tdigest_info {
    double compression;
    uint64_t capacity;
    uint64_t merged_nodes, unmerged_nodes;
    uint64_t merged_weight, unmerged_weight;
    uint64_t merges;
    size_t bytes;
} amq_tdigest_info;
AMQ_API void amq_tdigest_get_info(const amq_tdigest *t, amq_tdigest_info *out);

/* A digest holding the given centroids (means ascending within [min,
 * max], weights >= 1, total below 2^53) at this compression, having merged
 * `merges` times so far: kept as they are when they fit, else merged by
 * the digest's own rule. For state brought from another t-digest (a
 * RedisBloom key). Errors: AMQ_ERR_INVALID (a field out of range),
 * AMQ_ERR_NOMEM. */
AMQ_API amq_status amq_tdigest_from_centroids(
    double compression, const double *mean, const uint64_t *weight, size_t n,
    double min, double max, uint64_t merges, const amq_options *opt,
    amq_tdigest **out);

AMQ_API size_t amq_tdigest_serialized_size(const amq_tdigest *t);
/* The state as it is, buffer included. AMQ_ERR_BUFFER if cap is too small
 * (nothing written past cap), AMQ_ERR_INVALID for NULL arguments. */
AMQ_API amq_status amq_tdigest_save(const amq_tdigest *t, void *buf, size_t cap,
                                    size_t *written);
/* Validates every field (finite, sorted centroid means and buffered
 * values within [min, max], weights >= 1 summing to the total, at most the
 * entries the compression allows) and the checksum before allocating. Errors: AMQ_ERR_CORRUPT,
 * AMQ_ERR_CHECKSUM, AMQ_ERR_VERSION, AMQ_ERR_KIND (a frame of another
 * type), AMQ_ERR_NOMEM, AMQ_ERR_INVALID (NULL arguments). */
AMQ_API amq_status amq_tdigest_load(const void *buf, size_t len,
                                    const amq_options *opt, amq_tdigest **out,
                                    struct amq_diag *diag);

#ifdef __cplusplus
}
#endif
#endif
