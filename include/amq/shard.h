/*
 * amq/shard.h — one logical filter split over the shards of a Redis
 * Cluster (the amq-redis module's AMQ.* keys, or BF/CF keys), with one
 * false-positive budget for the whole.
 *
 * Keys. A logical filter NAME of S shards is S keys "NAME{TAG_s}". Redis
 * Cluster places a key by its hash tag (the text between the first "{"
 * and the next "}", when not empty; else the whole key): slot =
 * CRC16-XMODEM(tag) mod 16384 (amq_shard_slot). amq_shard_tag finds the
 * shortest decimal tag whose slot lies in a slot range, so a client that
 * read CLUSTER SLOTS can place one shard on each primary.
 *
 * Routing. An item belongs to shard amq_shard_of(item, S): a multiply-
 * shift of its XXH3 hash with seed AMQ_SHARD_SEED. The seed differs from
 * the filters' (0 by default), so which shard an item goes to says
 * nothing about where it lands inside that shard's filter.
 *
 * Budget. A query for an item never added probes one shard; if a share
 * w_s of those queries lands on shard s (the client measures it: queries
 * shard s answered "absent", over all such answers), the logical filter's
 * false-positive rate is sum_s w_s eps_s. amq_shard_plan chooses each
 * eps_s — and the structure's own knob: Bloom hashes, fingerprint width,
 * Ribbon bits — to minimise the memory sum_s n_s b_s subject to
 * sum_s w_s eps_s <= eps, with the allocation engine (amq/alloc.h,
 * amq_alloc_min_memory over the type's real curve). Shards that take few
 * absent queries get larger eps_s (fewer bits); the uniform split
 * (every eps_s = eps) meets the same budget and is reported beside it.
 *
 * Thread-safety: the functions keep no state. Complexity: slot and tag
 * O(length) (tag: a few thousand candidates at most); plan as
 * amq_alloc_min_memory plus one curve construction.
 */
#ifndef AMQ_SHARD_H
#define AMQ_SHARD_H

#include "amq/alloc.h"

#ifdef __cplusplus
extern "C" {
#endif

#define AMQ_SHARD_SLOTS 16384u
#define AMQ_SHARD_SEED UINT64_C(0x736861726473) /* "shards" */

/* The Redis Cluster slot of a key (hash tags included). key may be NULL
 * when len == 0. */
AMQ_API uint16_t amq_shard_slot(const void *key, size_t len);

/* The shard (0 .. shards-1) of an item; 0 when shards is 0. */
AMQ_API size_t amq_shard_of(const void *item, size_t len, size_t shards);

/* The shortest decimal tag ("0", "1", ... "10", ...) whose slot lies in
 * [lo, hi], NUL-terminated in buf. Errors: AMQ_ERR_INVALID (lo > hi or
 * hi >= 16384, buf NULL), AMQ_ERR_BUFFER (cap too small for the tag). */
AMQ_API amq_status amq_shard_tag(uint16_t lo, uint16_t hi, char *buf,
                                 size_t cap);

/* The plan of a logical filter. */
typedef struct amq_shard_plan_summary {
    double fpr;          /* sum_s w_s eps_s of the picks (<= the target) */
    double memory_bits;  /* sum_s n_s b_s of the picks                   */
    double uniform_bits; /* the same with eps_s = eps for every shard    */
} amq_shard_plan_summary;

/* Shard s holds keys[s] >= 0 items and received queries[s] >= 0 of the
 * absent-item queries (any scale; all zero: equal shares). picks[s] names
 * what to build and at which rate (amq_filter_new(picks[s].spec, keys[s],
 * picks[s].fpr), or AMQ.RESERVE ... CAPACITY keys[s] ERROR picks[s].fpr);
 * an empty spec means the shard needs no filter (no keys, or its share of
 * the budget lets every query through). summary may be NULL.
 * Errors: AMQ_ERR_INVALID (shards = 0, NULL arrays, a negative or NaN
 * count, eps outside (0, 1), or eps below what the type can reach),
 * AMQ_ERR_SPEC / AMQ_ERR_UNSUPPORTED (the type has no curve: topk),
 * AMQ_ERR_NOMEM; picks are untouched then. */
AMQ_API amq_status amq_shard_plan(const char *spec, size_t shards,
                                  const double *keys, const double *queries,
                                  double eps, const amq_options *opt,
                                  amq_alloc_pick *picks,
                                  amq_shard_plan_summary *summary,
                                  amq_diag *diag);

#ifdef __cplusplus
}
#endif
#endif
