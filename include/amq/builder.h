/*
 * amq/builder.h — building a filter from keys whose number is not known in
 * advance, for every type alike.
 *
 *     amq_builder *b;
 *     amq_builder_new("fuse8", NULL, &b, &diag);     spec parsed, hasher fixed
 *     while (next key) amq_builder_add(b, key, len); 8 bytes a key, held
 *     amq_builder_finish(b, 0.01, &f, &diag);        sized for the keys
 *     amq_builder_free(b);
 *
 * The builder parses the spec once, resolves the filter's hasher once (the
 * type's default hash unless the options choose one; SipHash without a key
 * draws a secret key, which the built filter keeps), hashes each key as it
 * arrives and keeps the 64-bit hashes until finish, which then builds:
 *
 *   - a static type (AMQ_CAP_STATIC: xor, fuse, ribbon) from the distinct
 *     keys: repeats are dropped before sizing, so a list with every key
 *     twice gives the same filter size as the list without repeats (the
 *     distinct hashes then come in sorted order; without repeats, in the
 *     order given);
 *   - a dynamic type sized for every key taken (capacity = count: a
 *     counting filter holds each copy) and filled in the order taken.
 *
 * Failures fill the optional diag (position and sentence) and leave the
 * builder as it was: a key that could not be taken is not taken, and a
 * failed finish keeps every key, so the caller may finish again (say, at
 * another rate). A finished builder may also be finished again or freed.
 *
 * Threads: finish sorts and builds a static type on several threads (by
 * default as many as the process may run on, at most 16; see
 * amq_builder_set_threads). The filter is the same, byte for byte, for
 * every thread count: the work is divided so that no result depends on
 * which thread did it. Small builds (under ~65,000 keys) stay on one
 * thread. The allocator is only called from the thread calling finish.
 *
 * Memory: 8 bytes per key taken, from the options' allocator, plus what
 * the build itself needs (docs/structures.md gives static builds' peaks;
 * each further thread adds a few megabytes of scratch at most, whatever
 * the number of keys).
 * Thread-safety: one builder per thread.
 */
#ifndef AMQ_BUILDER_H
#define AMQ_BUILDER_H

#include "amq/filter.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct amq_builder amq_builder;

/* A builder for spec with the given options (may be NULL; its allocator,
 * flags and hash fields go to the filter).
 * Errors: AMQ_ERR_SPEC (unknown name, malformed spec; diag says where),
 * AMQ_ERR_HASH (bad hash options), AMQ_ERR_INVALID (NULL spec or out),
 * AMQ_ERR_NOMEM. Parameters are checked against the type at finish. */
AMQ_API amq_status amq_builder_new(const char *spec, const amq_options *opt,
                                   amq_builder **out, amq_diag *diag);
AMQ_API void amq_builder_free(amq_builder *b);

/* The hasher the filter will have, and a key hashed with it. */
AMQ_API const amq_hasher *amq_builder_hasher(const amq_builder *b);
AMQ_API uint64_t amq_builder_hash(const amq_builder *b, const void *key,
                                  size_t len);

/* Take one key (hashed now), or a hash from amq_builder_hasher, or n of
 * them. Errors: AMQ_ERR_NOMEM (nothing of the call taken), AMQ_ERR_INVALID
 * (NULL arguments). */
AMQ_API amq_status amq_builder_add(amq_builder *b, const void *key, size_t len);
AMQ_API amq_status amq_builder_add_hash(amq_builder *b, uint64_t hash);
AMQ_API amq_status amq_builder_add_hashes(amq_builder *b,
                                          const uint64_t *hashes, size_t n);

/* The number of threads finish may use: 0 (the default) = one per core
 * this process may run on, at most 16; 1 = the calling thread only; more
 * than 16 counts as 16. The output does not depend on it. Errors:
 * AMQ_ERR_INVALID (NULL b). amq_builder_threads gives the count finish
 * will use (0 resolved). */
AMQ_API amq_status amq_builder_set_threads(amq_builder *b, unsigned threads);
AMQ_API unsigned amq_builder_threads(const amq_builder *b);

/* Keys taken so far, repeats included. */
AMQ_API uint64_t amq_builder_count(const amq_builder *b);

/* Build the filter for false-positive rate fpr (0 < fpr < 1; 0 when the
 * spec fixes the parameters) from the keys taken, as described above. The
 * filter is the caller's (amq_filter_free). Errors: those of
 * amq_filter_new / amq_filter_build (AMQ_ERR_SPEC, AMQ_ERR_INVALID, e.g. a
 * fixed-width type that cannot reach fpr, AMQ_ERR_FULL naming the key
 * that did not fit, AMQ_ERR_NOMEM, ...), with diag filled. */
AMQ_API amq_status amq_builder_finish(amq_builder *b, double fpr,
                                      amq_filter **out, amq_diag *diag);

#ifdef __cplusplus
}
#endif
#endif
