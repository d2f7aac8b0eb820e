/*
 * builder.c — amq_builder: keys in, one filter out (amq/builder.h).
 *
 *   amq_builder_new   parse the spec, find the type, resolve the hasher
 *   amq_builder_add   hash the key, append to hashes[] (grown by doubling)
 *   amq_builder_finish
 *       static type:  distinct hashes (sorted copy, only if there are
 *                     repeats) -> one build
 *       dynamic type: sized for count -> every hash added in order
 *       both on the builder's threads (core/par.h: set for this call)
 *
 * The filter's options are the caller's with the hash fields replaced by
 * the resolved hasher, so the filter hashes exactly as the builder did
 * (and a drawn SipHash key is the filter's key). Finish works on the
 * builder's keys without consuming them.
 */
#include <string.h>

#include "amq/builder.h"
#include "core/mem.h"
#include "core/par.h"
#include "core/sort.h"
#include "filter/make.h"

struct amq_builder {
    amq__mem mem;
    const amq__type *type;
    amq__spec spec;  /* parsed once; copied by each finish         */
    amq_options opt; /* the caller's, hash fields = hasher's       */
    amq_hasher hasher;
    uint64_t *hashes;
    size_t n, cap;
    unsigned threads; /* as asked: 0 = every core (par.h) */
};

amq_status amq_builder_new(const char *spec, const amq_options *opt,
                           amq_builder **out, amq_diag *diag) {
    amq__spec s;
    const amq__type *t;
    amq_hasher h;
    amq__mem mem;
    if (spec == NULL || out == NULL)
        return AMQ_ERR_INVALID;
    *out = NULL;
    AMQ_RETURN_IF_ERR(amq__filter_lookup(spec, &s, &t, diag));
    amq_status st = amq__hasher_from_options(opt, t->info.default_hash, &h);
    if (st != AMQ_OK)
        return amq__diag(diag, st, 0, "%s: %s", spec, amq_strerror(st));
    amq__mem_init(&mem, opt);
    amq_builder *b = amq__zalloc(&mem, sizeof *b);
    if (b == NULL)
        return AMQ_ERR_NOMEM;
    b->mem = mem;
    b->type = t;
    b->spec = s;
    if (opt != NULL)
        b->opt = *opt;
    b->hasher = h;
    b->opt.hash = h.kind;
    b->opt.hash_seed = h.seed;
    b->opt.hash_key = h.kind == AMQ_HASH_SIPHASH ? b->hasher.key : NULL;
    *out = b;
    return AMQ_OK;
}

void amq_builder_free(amq_builder *b) {
    if (b == NULL)
        return;
    amq__mem mem = b->mem;
    amq__free(&mem, b->hashes, b->cap * sizeof *b->hashes);
    memset(b, 0, sizeof *b); /* the SipHash key too */
    amq__free(&mem, b, sizeof *b);
}

const amq_hasher *amq_builder_hasher(const amq_builder *b) {
    return &b->hasher;
}

uint64_t amq_builder_hash(const amq_builder *b, const void *key, size_t len) {
    return amq_hash64(&b->hasher, key, len);
}

uint64_t amq_builder_count(const amq_builder *b) { return b->n; }

amq_status amq_builder_set_threads(amq_builder *b, unsigned threads) {
    if (b == NULL)
        return AMQ_ERR_INVALID;
    b->threads = threads;
    return AMQ_OK;
}

unsigned amq_builder_threads(const amq_builder *b) {
    return amq__par_resolve(b->threads);
}

/* Room for `more` keys: capacity doubled (or to fit), old keys copied. */
static amq_status reserve(amq_builder *b, size_t more) {
    size_t need, cap = b->cap ? b->cap : 1024, bytes;
    if (!amq__add(b->n, more, &need))
        return AMQ_ERR_NOMEM;
    if (need <= b->cap)
        return AMQ_OK;
    while (cap < need)
        if (!amq__mul(cap, 2, &cap))
            return AMQ_ERR_NOMEM;
    if (!amq__mul(cap, sizeof *b->hashes, &bytes))
        return AMQ_ERR_NOMEM;
    uint64_t *h = amq__alloc(&b->mem, bytes);
    if (h == NULL)
        return AMQ_ERR_NOMEM;
    if (b->n != 0)
        memcpy(h, b->hashes, b->n * sizeof *h);
    amq__free(&b->mem, b->hashes, b->cap * sizeof *b->hashes);
    b->hashes = h;
    b->cap = cap;
    return AMQ_OK;
}

amq_status amq_builder_add_hashes(amq_builder *b, const uint64_t *hashes,
                                  size_t n) {
    if (b == NULL || (hashes == NULL && n != 0))
        return AMQ_ERR_INVALID;
    AMQ_RETURN_IF_ERR(reserve(b, n));
    if (n != 0)
        memcpy(b->hashes + b->n, hashes, n * sizeof *hashes);
    b->n += n;
    return AMQ_OK;
}

amq_status amq_builder_add_hash(amq_builder *b, uint64_t hash) {
    if (b == NULL)
        return AMQ_ERR_INVALID;
    if (b->n == b->cap)
        AMQ_RETURN_IF_ERR(reserve(b, 1));
    b->hashes[b->n++] = hash;
    return AMQ_OK;
}

amq_status amq_builder_add(amq_builder *b, const void *key, size_t len) {
    if (b == NULL || (key == NULL && len != 0))
        return AMQ_ERR_INVALID;
    return amq_builder_add_hash(b, amq_hash64(&b->hasher, key, len));
}

/* A static type's keys without repeats: the builder's own array when it
 * has none (order kept), else a sorted distinct copy in *copy. */
static amq_status distinct(const amq_builder *b, const uint64_t **keys,
                           size_t *n, uint64_t **copy, amq_diag *diag) {
    size_t bytes;
    *keys = b->hashes;
    *n = b->n;
    *copy = NULL;
    if (b->n < 2)
        return AMQ_OK;
    if (!amq__mul(b->n, sizeof **copy, &bytes) ||
        (*copy = amq__alloc(&b->mem, bytes)) == NULL)
        return amq__diag(diag, AMQ_ERR_NOMEM, 0, "no memory to sort %zu keys",
                         b->n);
    size_t d = 0;
    amq_status st =
        amq__sort_keys(&b->mem, b->hashes, b->n, false, 0, true, *copy, &d);
    if (st != AMQ_OK || d == b->n) {
        amq__free(&b->mem, *copy, bytes);
        *copy = NULL;
        return st == AMQ_OK ? AMQ_OK
                            : amq__diag(diag, st, 0, "sorting %zu keys", b->n);
    }
    *keys = *copy;
    *n = d;
    return AMQ_OK;
}

amq_status amq_builder_finish(amq_builder *b, double fpr, amq_filter **out,
                              amq_diag *diag) {
    static const uint64_t none[1];
    uint64_t *copy = NULL;
    if (b == NULL || out == NULL)
        return AMQ_ERR_INVALID;
    *out = NULL;
    amq__make a = {.fpr = fpr, .hashes = b->hashes, .n = b->n};
    unsigned outer = amq__par_scope(b->threads);
    amq_status st = AMQ_OK;
    if (b->type->build != NULL)
        st = distinct(b, &a.hashes, &a.n, &copy, diag);
    if (a.hashes == NULL)
        a.hashes = none;
    if (st == AMQ_OK)
        st = amq__filter_make(b->type, &b->spec, &a, &b->opt, out, diag);
    amq__par_restore(outer);
    amq__free(&b->mem, copy, b->n * sizeof *copy); /* its allocated size */
    return st;
}
