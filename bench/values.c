/*
 * values.c — the maplets doing a maplet's work, as bench subjects: every
 * key carries a value and queries read it back. Beside the maplet's
 * generic row (membership only) and qf's in the same run, its bits per key
 * and query times are the cost of value support (docs/maplets.md).
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

/* The maplet's own calls: every key carries a value (its low bits), put
 * with amq_maplet_put_hash (a static maplet: built from the pairs) and read
 * back with amq_maplet_get_hash / get_batch, so the row is a maplet doing
 * a maplet's work. Its bits/key and query times beside qf's in the same
 * run are the cost of value support. */
typedef struct map_obj {
    char spec[64];
    double fpr;
    uint64_t n, vmask;
    bool is_static; /* smaplet: built at insert */
    amq_maplet *m;
    uint64_t *vals; /* get_batch's values */
} map_obj;

static int map_create(const char *name, uint64_t n, double fpr, void **obj,
                      char *err, size_t cap) {
    map_obj *o = calloc(1, sizeof *o);
    if (o == NULL)
        return report_status("calloc", AMQ_ERR_NOMEM, err, cap);
    snprintf(o->spec, sizeof o->spec, "%s:op=or,v=8", name);
    o->fpr = fpr;
    o->n = n;
    o->vmask = 0xff;
    o->is_static = strcmp(name, "smaplet") == 0;
    amq_status st = AMQ_OK;
    if (!o->is_static)
        st = amq_maplet_new(o->spec, n, fpr, bench_options(), &o->m, NULL);
    if (st != AMQ_OK) {
        free(o);
        return report_status("amq_maplet_new", st, err, cap);
    }
    *obj = o;
    return 0;
}

static void map_destroy(void *obj) {
    map_obj *o = obj;
    if (o != NULL) {
        amq_maplet_free(o->m);
        free(o->vals);
    }
    free(o);
}

static int map_insert(void *obj, const uint64_t *k, size_t n) {
    map_obj *o = obj;
    if (o->is_static) {
        uint64_t *v = malloc(n * sizeof *v);
        if (v == NULL)
            return 1;
        for (size_t i = 0; i < n; i++)
            v[i] = k[i] & o->vmask;
        amq_maplet_free(o->m);
        o->m = NULL;
        amq_status st = amq_maplet_build(o->spec, k, v, n, o->fpr,
                                         bench_options(), &o->m, NULL);
        free(v);
        return st != AMQ_OK;
    }
    uint64_t *v = malloc(n * sizeof *v);
    if (v == NULL)
        return 1;
    for (size_t i = 0; i < n; i++)
        v[i] = k[i] & o->vmask;
    amq_status st = amq_maplet_put_batch(o->m, k, v, n, NULL);
    free(v);
    return st != AMQ_OK;
}

static uint64_t map_query(void *obj, const uint64_t *k, size_t n) {
    map_obj *o = obj;
    uint64_t hits = 0, v;
    for (size_t i = 0; i < n; i++)
        hits += amq_maplet_get_hash(o->m, k[i], &v) == AMQ_OK;
    return hits;
}

static void map_batch(void *obj, const uint64_t *k, size_t n, uint8_t *out) {
    map_obj *o = obj;
    if (o->vals == NULL && (o->vals = malloc(65536 * sizeof *o->vals)) == NULL)
        return;
    for (size_t i = 0; i < n; i += 65536)
        amq_maplet_get_batch(o->m, k + i, n - i < 65536 ? n - i : 65536,
                             o->vals, out + i);
}

static size_t map_size(void *obj) {
    return amq_filter_size_bytes(((map_obj *)obj)->m);
}
static double map_bound(void *obj, uint64_t n) {
    (void)n;
    return amq_filter_fpr_bound(((map_obj *)obj)->m);
}
static void map_describe(void *obj, char *buf, size_t cap) {
    amq_filter_describe(((map_obj *)obj)->m, buf, cap);
}

static const bench_ops bench_values_ops = {
    .path = "values",
    .create = map_create,
    .destroy = map_destroy,
    .insert = map_insert,
    .query_scalar = map_query,
    .query_batch = map_batch,
    .size_bytes = map_size,
    .fpr_bound = map_bound,
    .describe = map_describe,
};

const bench_ops *bench_values_for(const char *spec) {
    if (strcmp(spec, "maplet") == 0 || strcmp(spec, "smaplet") == 0)
        return &bench_values_ops;
    return NULL;
}
