/*
 * subjects.c — the generic paths as bench subjects, for every registered
 * type alike.
 *
 * generic: a dynamic type through amq_filter_* (the path the CLI, the
 *          cascade and the Redis module take: one indirect call per key).
 *          Its byte-key row asks amq_filter_contains on 16-byte keys
 *          (hashing included), the call most users make.
 * build:   a static type built by amq_filter_build from all n keys, then
 *          queried as the generic path does.
 *
 * Each loop lives here so the benchmark's own indirection is paid once per
 * loop, not once per key (inline.c has the inline path, peer_libbloom.c
 * the peer).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amq/amq.h"
#include "bench.h"

static int report_status(const char *what, amq_status st, char *err,
                         size_t cap) {
    snprintf(err, cap, "%s: %s", what, amq_strerror(st));
    return -1;
}

/* ---- generic: amq_filter ------------------------------------------------ */

static int gen_create(const char *name, uint64_t n, double fpr, void **obj,
                      char *err, size_t cap) {
    amq_filter *f = NULL;
    amq_diag d;
    memset(&d, 0, sizeof d);
    amq_status st = amq_filter_new(name, n, fpr, bench_options(), &f, &d);
    if (st != AMQ_OK)
        return report_status("amq_filter_new", st, err, cap);
    *obj = f;
    return 0;
}

static void gen_destroy(void *obj) { amq_filter_free(obj); }

/* The generic bulk path: amq_filter_add_batch (a loop of add_hash for
 * every type but qf/cqf, which overlap consecutive inserts' misses). */
static int gen_insert(void *obj, const uint64_t *k, size_t n) {
    return amq_filter_add_batch(obj, k, n, NULL) != AMQ_OK;
}

static uint64_t gen_query(void *obj, const uint64_t *k, size_t n) {
    uint64_t hits = 0;
    for (size_t i = 0; i < n; i++)
        hits += amq_filter_contains_hash(obj, k[i]);
    return hits;
}

static void gen_batch(void *obj, const uint64_t *k, size_t n, uint8_t *out) {
    amq_filter_contains_batch(obj, k, n, out);
}

static uint64_t gen_bytes(void *obj, const uint64_t *k, size_t n) {
    uint64_t hits = 0;
    uint8_t key[16];
    for (size_t i = 0; i < n; i++) {
        bench_byte_key(k[i], key);
        hits += amq_filter_contains(obj, key, sizeof key);
    }
    return hits;
}

static size_t gen_size(void *obj) { return amq_filter_size_bytes(obj); }

static double gen_bound(void *obj, uint64_t n) {
    (void)n;
    return amq_filter_fpr_bound(obj);
}

static void gen_describe(void *obj, char *buf, size_t cap) {
    amq_filter_describe(obj, buf, cap);
}

const bench_ops bench_generic_ops = {
    .path = "generic",
    .create = gen_create,
    .destroy = gen_destroy,
    .insert = gen_insert,
    .query_scalar = gen_query,
    .query_batch = gen_batch,
    .query_bytes = gen_bytes,
    .size_bytes = gen_size,
    .fpr_bound = gen_bound,
    .describe = gen_describe,
};

/* ---- static: amq_filter_build -------------------------------------------- */

/* A static type has nothing to create before its keys are known: create
 * records the request, insert builds from all n keys at once (so "insert
 * ns/key" is build time per key), and queries go through the generic path. */
typedef struct static_obj {
    char name[64];
    double fpr;
    amq_filter *f;
} static_obj;

static int st_create(const char *name, uint64_t n, double fpr, void **obj,
                     char *err, size_t cap) {
    (void)n;
    static_obj *s = calloc(1, sizeof *s);
    if (s == NULL) {
        snprintf(err, cap, "out of memory");
        return -1;
    }
    snprintf(s->name, sizeof s->name, "%s", name);
    s->fpr = fpr;
    *obj = s;
    return 0;
}

static void st_destroy(void *obj) {
    static_obj *s = obj;
    if (s != NULL)
        amq_filter_free(s->f);
    free(s);
}

int bench_build(const char *spec, const uint64_t *k, size_t n, double fpr,
                amq_filter **f) {
    *f = NULL;
    /* A width whose rate cannot meet the target (xor16 at 1% meets it;
     * ribbon sizes itself) is built from the spec alone. */
    if (amq_filter_build(spec, k, n, fpr, bench_options(), f, NULL) == AMQ_OK)
        return 0;
    return amq_filter_build(spec, k, n, 0.0, bench_options(), f, NULL) !=
           AMQ_OK;
}

static int st_insert(void *obj, const uint64_t *k, size_t n) {
    static_obj *s = obj;
    amq_filter_free(s->f);
    return bench_build(s->name, k, n, s->fpr, &s->f);
}

static uint64_t st_query(void *obj, const uint64_t *k, size_t n) {
    return gen_query(((static_obj *)obj)->f, k, n);
}
static void st_batch(void *obj, const uint64_t *k, size_t n, uint8_t *out) {
    gen_batch(((static_obj *)obj)->f, k, n, out);
}
static uint64_t st_bytes(void *obj, const uint64_t *k, size_t n) {
    return gen_bytes(((static_obj *)obj)->f, k, n);
}
static size_t st_size(void *obj) { return gen_size(((static_obj *)obj)->f); }
static double st_bound(void *obj, uint64_t n) {
    return gen_bound(((static_obj *)obj)->f, n);
}
static void st_describe(void *obj, char *buf, size_t cap) {
    gen_describe(((static_obj *)obj)->f, buf, cap);
}

/* ---- static: amq_builder at 1 and N threads ------------------------------ */

unsigned bench_build_threads = 2;

static int builder_build(static_obj *s, const uint64_t *k, size_t n,
                         unsigned threads) {
    amq_builder *b = NULL;
    amq_filter_free(s->f);
    s->f = NULL;
    if (amq_builder_new(s->name, bench_options(), &b, NULL) != AMQ_OK)
        return 1;
    amq_status st = amq_builder_set_threads(b, threads);
    if (st == AMQ_OK)
        st = amq_builder_add_hashes(b, k, n);
    if (st == AMQ_OK && amq_builder_finish(b, s->fpr, &s->f, NULL) != AMQ_OK)
        st = amq_builder_finish(b, 0.0, &s->f, NULL);
    amq_builder_free(b);
    return st != AMQ_OK;
}

static int bd1_insert(void *obj, const uint64_t *k, size_t n) {
    return builder_build(obj, k, n, 1);
}
static int bdj_insert(void *obj, const uint64_t *k, size_t n) {
    return builder_build(obj, k, n, bench_build_threads);
}

#define BUILDER_OPS(path_, insert_)                                            \
    {                                                                          \
        .path = path_, .create = st_create, .destroy = st_destroy,             \
        .insert = insert_, .query_scalar = st_query, .query_batch = st_batch,  \
        .query_bytes = st_bytes, .size_bytes = st_size, .fpr_bound = st_bound, \
        .describe = st_describe                                                \
    }
const bench_ops bench_builder1_ops = BUILDER_OPS("builder", bd1_insert);
const bench_ops bench_builderj_ops = BUILDER_OPS("builder-j", bdj_insert);

const bench_ops bench_static_ops = {
    .path = "build",
    .create = st_create,
    .destroy = st_destroy,
    .insert = st_insert,
    .query_scalar = st_query,
    .query_batch = st_batch,
    .query_bytes = st_bytes,
    .size_bytes = st_size,
    .fpr_bound = st_bound,
    .describe = st_describe,
};
