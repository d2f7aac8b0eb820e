/*
 * amq_leveldb.c — the LevelDB filter policy (amq_leveldb.h), over the
 * public amq API only.
 *
 *   LevelDB table:  [data block][data block]...[filter block][meta][index]
 *                                                  |
 *       one filter per 2 KiB of data:  [amq frame][amq frame]...[offsets]
 *
 * Building: the block's user keys are hashed with the policy's hasher
 * (resolved once, so every filter of the policy agrees) and given to
 * amq_filter_build with the engine's pick; the frame is what LevelDB
 * stores. Querying: the frame is viewed where it lies (or copied to an
 * aligned buffer), the key hashed with the frame's own hasher.
 *
 * Trusted form (amq_leveldb_policy_new_trusted, sbbf only): the filter is
 * the split-block bitset itself and one tag byte, no frame. A query reads
 * the one block its hash names (amq_sbbf_parquet_contains: memory-safe
 * for any bytes, nothing validated but the length), as LevelDB trusts its
 * own Bloom filters; the policy's name carries the hasher, so only a
 * policy that hashes alike reads them.
 *
 * Failure modes. A build that fails (out of memory) must still give
 * LevelDB a filter, and an empty one would mean "no keys here" (LevelDB's
 * rule for empty filters): a false negative. So a failed build stores one
 * zero byte, which no frame starts with, and a filter that does not load
 * answers "may match". LevelDB frees what create_filter returns with
 * free(), so it comes from malloc whatever allocator amq uses.
 */
#include "amq_leveldb.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STACK_FRAME 4096 /* frames up to this size are copied on the stack */
#define TRUSTED_TAG 0xa7 /* the last byte of a trusted filter */

struct amq_leveldb_policy {
    leveldb_filterpolicy_t *lp;
    amq_alloc_pick pick;
    amq_hasher hasher;
    amq_allocator allocator;
    amq_options opt; /* the caller's allocator and flags, our hasher */
    char name[AMQ_ALLOC_SPEC_MAX + 48];
    _Atomic uint64_t filters, keys, filter_bytes, payload_bytes;
    _Atomic uint64_t probes, positives, corrupt;
    _Atomic uint64_t bound_bits; /* a double's bits: sum of bounds */
    atomic_bool track_bounds;
    bool trusted; /* bitset + TRUSTED_TAG instead of a frame */
};

/* ---- building ----------------------------------------------------------- */

/* The one-byte "answer yes" filter for a build that failed. */
static char *always_yes(size_t *len) {
    char *b = malloc(1);
    *len = b != NULL;
    if (b != NULL)
        b[0] = 0;
    return b;
}

/* The trusted form of f: its bitset and the tag (f is freed). */
static char *trusted_filter(amq_leveldb_policy *p, amq_filter *f, size_t count,
                            size_t *len) {
    size_t blen = 0;
    const uint8_t *bits = amq_sbbf_parquet_bitset(amq_sbbf_of(f), &blen);
    char *out = bits != NULL ? malloc(blen + 1) : NULL;
    if (out == NULL) {
        amq_filter_free(f);
        return always_yes(len);
    }
    memcpy(out, bits, blen);
    out[blen] = (char)TRUSTED_TAG;
    atomic_fetch_add(&p->filters, 1);
    atomic_fetch_add(&p->keys, count);
    atomic_fetch_add(&p->filter_bytes, blen + 1);
    atomic_fetch_add(&p->payload_bytes, blen);
    amq_filter_free(f);
    *len = blen + 1;
    return out;
}

static char *create_filter(void *state, const char *const *keys,
                           const size_t *lens, int n, size_t *len) {
    amq_leveldb_policy *p = state;
    size_t count = n > 0 ? (size_t)n : 0, written = 0;
    uint64_t *h = malloc(count ? count * sizeof *h : 1);
    amq_filter *f = NULL;
    if (h == NULL)
        return always_yes(len);
    for (size_t i = 0; i < count; i++)
        h[i] = amq_hash64(&p->hasher, keys[i], lens[i]);
    amq_status st = amq_filter_build(p->pick.spec, h, count, p->pick.fpr,
                                     &p->opt, &f, NULL);
    free(h);
    if (st != AMQ_OK)
        return always_yes(len);
    if (p->trusted)
        return trusted_filter(p, f, count, len);
    size_t size = amq_filter_serialized_size(f);
    char *out = malloc(size);
    if (out == NULL || amq_filter_save(f, out, size, &written) != AMQ_OK) {
        free(out);
        amq_filter_free(f);
        return always_yes(len);
    }
    atomic_fetch_add(&p->filters, 1);
    atomic_fetch_add(&p->keys, count);
    atomic_fetch_add(&p->filter_bytes, written);
    atomic_fetch_add(&p->payload_bytes, amq_filter_size_bytes(f));
    amq_filter_free(f);
    *len = written;
    return out;
}

/* ---- querying ------------------------------------------------------------ */

static void add_bound(amq_leveldb_policy *p, double b) {
    uint64_t old = atomic_load(&p->bound_bits), next;
    do {
        double sum;
        memcpy(&sum, &old, sizeof sum);
        sum += b;
        memcpy(&next, &sum, sizeof next);
    } while (!atomic_compare_exchange_weak(&p->bound_bits, &old, next));
}

/* Query a frame at an 8-byte aligned address; -1 if it does not load. */
static int query_aligned(amq_leveldb_policy *p, const void *frame, size_t len,
                         const char *key, size_t klen) {
    amq_filter *f = NULL;
    if (amq_filter_view(frame, len, &p->opt, &f, NULL) != AMQ_OK)
        return -1;
    bool yes = amq_filter_contains(f, key, klen);
    if (atomic_load_explicit(&p->track_bounds, memory_order_relaxed))
        add_bound(p, amq_filter_fpr_bound(f));
    amq_filter_free(f);
    return yes;
}

/* A trusted filter: the bitset before the tag, asked where it lies; -1
 * for bytes without the tag (a failed build's). */
static int query_trusted(amq_leveldb_policy *p, const char *filter, size_t len,
                         const char *key, size_t klen) {
    if (len < 2 || (uint8_t)filter[len - 1] != TRUSTED_TAG)
        return -1;
    if (atomic_load_explicit(&p->track_bounds, memory_order_relaxed))
        add_bound(p, amq_sbbf_parquet_bound(filter, len - 1));
    return amq_sbbf_parquet_contains(filter, len - 1,
                                     amq_hash64(&p->hasher, key, klen));
}

static uint8_t key_may_match(void *state, const char *key, size_t klen,
                             const char *filter, size_t len) {
    amq_leveldb_policy *p = state;
    uint64_t stack[STACK_FRAME / 8];
    int r;
    atomic_fetch_add(&p->probes, 1);
    if (p->trusted) {
        r = query_trusted(p, filter, len, key, klen);
    } else if ((uintptr_t)filter % 8 == 0) {
        r = query_aligned(p, filter, len, key, klen);
    } else if (len <= sizeof stack) {
        memcpy(stack, filter, len);
        r = query_aligned(p, stack, len, key, klen);
    } else {
        void *copy = malloc(len); /* malloc aligns to at least 8 */
        if (copy != NULL)
            memcpy(copy, filter, len);
        r = copy != NULL ? query_aligned(p, copy, len, key, klen) : -1;
        free(copy);
    }
    if (r < 0) /* not a frame we can read: let LevelDB read the block */
        atomic_fetch_add(&p->corrupt, 1);
    if (r != 0)
        atomic_fetch_add(&p->positives, 1);
    return r != 0;
}

/* ---- the policy object --------------------------------------------------- */

static const char *policy_name(void *state) {
    return ((amq_leveldb_policy *)state)->name;
}

static void policy_destroy(void *state) { free(state); }

/* The engine's pick for spec at bits_per_key: what every filter is. */
static amq_status pick_for(const char *spec, double bits_per_key,
                           amq_alloc_pick *pick, amq_diag *diag) {
    amq_alloc_curve *c = NULL;
    AMQ_RETURN_IF_ERR(amq_alloc_curve_spec(spec, NULL, &c, diag));
    amq_status st = amq_alloc_curve_at(c, bits_per_key, pick);
    amq_alloc_curve_free(c);
    if (st == AMQ_OK && pick->spec[0] == '\0')
        st = AMQ_ERR_INVALID; /* below the type's smallest filter */
    return st;
}

static void options_from(amq_leveldb_policy *p, const amq_options *opt) {
    if (opt != NULL)
        p->opt = *opt;
    if (opt != NULL && opt->allocator != NULL) {
        p->allocator = *opt->allocator;
        p->opt.allocator = &p->allocator;
    }
    p->opt.hash = p->hasher.kind;
    p->opt.hash_seed = p->hasher.seed;
    p->opt.hash_key = p->hasher.kind == AMQ_HASH_SIPHASH ? p->hasher.key : NULL;
}

static amq_status policy_new(const char *spec, double bits_per_key,
                             const amq_options *opt, bool trusted,
                             amq_leveldb_policy **out, amq_diag *diag) {
    if (spec == NULL || out == NULL || !(bits_per_key > 0) ||
        bits_per_key > AMQ_ALLOC_MAX_BITS)
        return AMQ_ERR_INVALID;
    amq_leveldb_policy *p = calloc(1, sizeof *p);
    if (p == NULL)
        return AMQ_ERR_NOMEM;
    amq_status st = pick_for(spec, bits_per_key, &p->pick, diag);
    if (st == AMQ_OK)
        st = amq_filter_resolve_hasher(p->pick.spec, opt, &p->hasher);
    const amq_type_info *t = amq_filter_type_find(p->pick.spec);
    if (st == AMQ_OK && trusted &&
        (t == NULL || strcmp(t->name, "sbbf") != 0 ||
         p->hasher.kind == AMQ_HASH_SIPHASH))
        st = AMQ_ERR_UNSUPPORTED; /* a bitset layout, a hasher a name says */
    if (st != AMQ_OK) {
        free(p);
        return st;
    }
    options_from(p, opt);
    p->trusted = trusted;
    if (trusted)
        snprintf(p->name, sizeof p->name, "amq-trusted:%s@%g:%s:%llu", spec,
                 bits_per_key,
                 p->hasher.kind == AMQ_HASH_XXH3 ? "xxh3" : "xxh64",
                 (unsigned long long)p->hasher.seed);
    else
        snprintf(p->name, sizeof p->name, "amq:%s@%g", spec, bits_per_key);
    p->lp = leveldb_filterpolicy_create(p, policy_destroy, create_filter,
                                        key_may_match, policy_name);
    if (p->lp == NULL) {
        free(p);
        return AMQ_ERR_NOMEM;
    }
    *out = p;
    return AMQ_OK;
}

amq_status amq_leveldb_policy_new(const char *spec, double bits_per_key,
                                  const amq_options *opt,
                                  amq_leveldb_policy **out, amq_diag *diag) {
    return policy_new(spec, bits_per_key, opt, false, out, diag);
}

amq_status amq_leveldb_policy_new_trusted(const char *spec, double bits_per_key,
                                          const amq_options *opt,
                                          amq_leveldb_policy **out,
                                          amq_diag *diag) {
    return policy_new(spec, bits_per_key, opt, true, out, diag);
}

leveldb_filterpolicy_t *amq_leveldb_policy_get(amq_leveldb_policy *p) {
    return p->lp;
}

const char *amq_leveldb_policy_spec(const amq_leveldb_policy *p) {
    return p->pick.spec;
}

double amq_leveldb_policy_fpr(const amq_leveldb_policy *p) {
    return p->pick.fpr;
}

void amq_leveldb_policy_stats(const amq_leveldb_policy *p,
                              amq_leveldb_stats *s) {
    amq_leveldb_policy *q = (amq_leveldb_policy *)p;
    uint64_t bits = atomic_load(&q->bound_bits);
    s->filters = atomic_load(&q->filters);
    s->keys = atomic_load(&q->keys);
    s->filter_bytes = atomic_load(&q->filter_bytes);
    s->payload_bytes = atomic_load(&q->payload_bytes);
    s->probes = atomic_load(&q->probes);
    s->positives = atomic_load(&q->positives);
    s->corrupt = atomic_load(&q->corrupt);
    memcpy(&s->bound_sum, &bits, sizeof s->bound_sum);
}

void amq_leveldb_policy_reset_stats(amq_leveldb_policy *p) {
    atomic_store(&p->filters, 0);
    atomic_store(&p->keys, 0);
    atomic_store(&p->filter_bytes, 0);
    atomic_store(&p->payload_bytes, 0);
    atomic_store(&p->probes, 0);
    atomic_store(&p->positives, 0);
    atomic_store(&p->corrupt, 0);
    atomic_store(&p->bound_bits, 0);
}

void amq_leveldb_policy_track_bounds(amq_leveldb_policy *p, bool on) {
    atomic_store(&p->track_bounds, on);
}

void amq_leveldb_policy_free(amq_leveldb_policy *p) {
    if (p != NULL)
        leveldb_filterpolicy_destroy(p->lp); /* calls policy_destroy */
}

leveldb_filterpolicy_t *amq_leveldb_filterpolicy(const char *spec,
                                                 double bits_per_key) {
    amq_leveldb_policy *p = NULL;
    if (amq_leveldb_policy_new(spec, bits_per_key, NULL, &p, NULL) != AMQ_OK)
        return NULL;
    return p->lp;
}
