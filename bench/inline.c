/*
 * inline.c — the inline path: one-key queries compiled into the bench's
 * loop through amq/query.h's query objects (fuse8, cuckoo, vacuum).
 *
 * The filter is made as its generic row's is, from the same (n, ε):
 * amq_filter_new for a dynamic type, amq_filter_build for a static one,
 * so the two rows differ only in the call path. The one-key query goes
 * through the filter's query object (amq_filter_fuse8_query,
 * amq_filter_cuckoo_query), made once per timed loop as a program makes
 * it once per filter; the batch query is amq_filter_contains_batch, as in
 * the generic row. A dynamic type inserts one key at a time here (a loop
 * of amq_filter_add_hash): its insert column is the single-insert figure,
 * beside the generic row's batch insert. A static type builds in "insert",
 * as its generic row does.
 *
 * A filter its query object refuses (a cuckoo table too small to carry
 * its alternate table, see amq/query.h) is asked through
 * amq_filter_contains_hash instead, and its parameters column says so.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amq/amq.h"
#include "amq/query.h"
#include "bench.h"

typedef struct inl_obj {
    char spec[64];
    double fpr;
    bool is_static; /* built at insert */
    amq_filter *f;
} inl_obj;

static int inl_create(const char *name, uint64_t n, double fpr, void **obj,
                      char *err, size_t cap) {
    const amq_type_info *info = amq_filter_type_find(name);
    inl_obj *o = calloc(1, sizeof *o);
    if (o == NULL) {
        snprintf(err, cap, "out of memory");
        return -1;
    }
    snprintf(o->spec, sizeof o->spec, "%s", name);
    o->fpr = fpr;
    o->is_static = info != NULL && (info->caps & AMQ_CAP_STATIC) != 0;
    amq_status st = AMQ_OK;
    if (!o->is_static)
        st = amq_filter_new(name, n, fpr, bench_options(), &o->f, NULL);
    if (st != AMQ_OK) {
        free(o);
        snprintf(err, cap, "amq_filter_new: %s", amq_strerror(st));
        return -1;
    }
    *obj = o;
    return 0;
}

static void inl_destroy(void *obj) {
    inl_obj *o = obj;
    if (o != NULL)
        amq_filter_free(o->f);
    free(o);
}

static int inl_insert(void *obj, const uint64_t *k, size_t n) {
    inl_obj *o = obj;
    if (o->is_static) {
        amq_filter_free(o->f);
        return bench_build(o->spec, k, n, o->fpr, &o->f);
    }
    for (size_t i = 0; i < n; i++)
        if (amq_filter_add_hash(o->f, k[i]) != AMQ_OK)
            return 1;
    return 0;
}

/* The loops, each over a query object of its own (a copy in the loop's
 * frame, so its numbers stay in registers). */
static uint64_t fuse8_hits(amq_fuse8_query q, const uint64_t *k, size_t n) {
    uint64_t hits = 0;
    for (size_t i = 0; i < n; i++)
        hits += amq_fuse8_query_contains(&q, k[i]);
    return hits;
}

static uint64_t cuckoo_hits(amq_cuckoo_query q, const uint64_t *k, size_t n) {
    uint64_t hits = 0;
    for (size_t i = 0; i < n; i++)
        hits += amq_cuckoo_query_contains(&q, k[i]);
    return hits;
}

static uint64_t call_hits(const amq_filter *f, const uint64_t *k, size_t n) {
    uint64_t hits = 0;
    for (size_t i = 0; i < n; i++)
        hits += amq_filter_contains_hash(f, k[i]);
    return hits;
}

static uint64_t inl_query(void *obj, const uint64_t *k, size_t n) {
    const inl_obj *o = obj;
    amq_fuse8_query fq;
    amq_cuckoo_query cq;
    if (amq_filter_fuse8_query(o->f, &fq) == AMQ_OK)
        return fuse8_hits(fq, k, n);
    if (amq_filter_cuckoo_query(o->f, &cq) == AMQ_OK)
        return cuckoo_hits(cq, k, n);
    return call_hits(o->f, k, n);
}

static void inl_batch(void *obj, const uint64_t *k, size_t n, uint8_t *out) {
    const inl_obj *o = obj;
    amq_filter_contains_batch(o->f, k, n, out);
}

static size_t inl_size(void *obj) {
    const inl_obj *o = obj;
    return amq_filter_size_bytes(o->f);
}

static double inl_bound(void *obj, uint64_t n) {
    const inl_obj *o = obj;
    (void)n;
    return amq_filter_fpr_bound(o->f);
}

static void inl_describe(void *obj, char *buf, size_t cap) {
    const inl_obj *o = obj;
    amq_fuse8_query fq;
    amq_cuckoo_query cq;
    amq_filter_describe(o->f, buf, cap);
    if (amq_filter_fuse8_query(o->f, &fq) != AMQ_OK &&
        amq_filter_cuckoo_query(o->f, &cq) != AMQ_OK) {
        size_t len = strlen(buf);
        snprintf(buf + len, cap - len, " (no query object: calls)");
    }
}

static const bench_ops inline_ops = {
    .path = "inline",
    .create = inl_create,
    .destroy = inl_destroy,
    .insert = inl_insert,
    .query_scalar = inl_query,
    .query_batch = inl_batch,
    .size_bytes = inl_size,
    .fpr_bound = inl_bound,
    .describe = inl_describe,
};

/* The specs amq/query.h has a query object for: the 3-way binary fuse
 * filter of 8-bit fingerprints ("fuse8" as the registry builds it; its
 * other shapes have none) and the cuckoo and vacuum filters. */
const bench_ops *bench_inline_ops(const char *spec) {
    const amq_type_info *info = amq_filter_type_find(spec);
    if (info == NULL)
        return NULL;
    bool fuse8 = strcmp(spec, "fuse8") == 0;
    bool cuckoo =
        strcmp(info->name, "cuckoo") == 0 || strcmp(info->name, "vacuum") == 0;
    return fuse8 || cuckoo ? &inline_ops : NULL;
}
