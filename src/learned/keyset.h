/*
 * keyset.h — owned key sets and the training chores of keyset.c: the
 * deterministic hash split, duplicate removal, overlap counting.
 */
#ifndef AMQ_SRC_LEARNED_KEYSET_H
#define AMQ_SRC_LEARNED_KEYSET_H

#include "learned/learned.h"

/* A key set that owns its arrays; view is what the API functions take. */
typedef struct amq__owned_keys {
    amq_keys view;
    uint8_t *bytes;
    uint64_t *offsets;
    size_t cap_bytes, cap_keys;
} amq__owned_keys;

void amq__owned_keys_free(const amq__mem *mem, amq__owned_keys *k);

/* u(k) in [0, 1): the top 53 bits of XXH3(k, seed). */
double amq__key_unit(const uint8_t *p, size_t len, uint64_t seed);

/* The keys of in with lo <= u(k) < hi, in input order. */
amq_status amq__split(const amq__mem *mem, const amq_keys *in, uint64_t seed,
                      double lo, double hi, amq__owned_keys *out);

/* How many keys of b are also keys of a (byte-exact). */
amq_status amq__overlap(const amq__mem *mem, const amq_keys *a,
                        const amq_keys *b, size_t *count);

/* The distinct keys of in (first occurrences, input order); *dropped =
 * how many repeats were removed. */
amq_status amq__dedupe(const amq__mem *mem, const amq_keys *in,
                       amq__owned_keys *out, size_t *dropped);

#endif
