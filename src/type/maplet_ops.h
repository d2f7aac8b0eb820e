/*
 * maplet_ops.h — what a maplet type adds to its amq__type (type/type.h): the
 * calls of amq/maplet.h, which filter/maplet.c dispatches through
 * amq__type.maplet. Slots marked "opt" may be NULL (the call is then
 * AMQ_ERR_UNSUPPORTED). The generic filter callbacks of a maplet type see
 * it as a filter whose add puts the value 1.
 */
#ifndef AMQ_SRC_TYPE_MAPLET_OPS_H
#define AMQ_SRC_TYPE_MAPLET_OPS_H

#include "amq/maplet.h"
#include "type/type.h"

typedef struct amq__maplet_ops {
    amq_status (*put)(amq__obj *o, uint64_t h, uint64_t v); /* opt: static */
    /* put of h[0..n) with v[0..n) in order, stopping at the first
     * failure; *done = pairs put. opt: the loop */
    amq_status (*put_batch)(amq__obj *o, const uint64_t *h, const uint64_t *v,
                            size_t n, size_t *done);
    /* AMQ_OK or AMQ_ERR_NOT_FOUND (*v = 0). */
    amq_status (*get)(const amq__obj *o, uint64_t h, uint64_t *v);
    void (*get_batch)(const amq__obj *o, const uint64_t *h, size_t n,
                      uint64_t *v, uint8_t *found); /* opt: the loop */
    amq_status (*get_all)(const amq__obj *o, uint64_t h, uint64_t *v,
                          size_t cap, size_t *n);           /* opt: get */
    amq_status (*del)(amq__obj *o, uint64_t h, uint64_t v); /* opt */
    amq_status (*drop_value)(amq__obj *o, uint64_t v);      /* opt */
    amq_status (*keep_values)(amq__obj *o, uint64_t lo, uint64_t hi); /* opt */
    amq_status (*resize)(amq__obj *o);                                /* opt */
    double (*capacity_bound)(const amq__obj *o);                      /* opt */
    /* Static types: build from (hash, value) pairs, repeated hashes'
     * values combined by the operator. NULL for dynamic types. */
    amq_status (*build)(const amq__type *self, amq__spec *spec,
                        const uint64_t *h, const uint64_t *v, size_t n,
                        double fpr, const amq_options *opt, amq__obj **out,
                        amq_diag *diag);
    /* Operator, value bits, mode and sizes. */
    void (*shape)(const amq__obj *o, amq_maplet_shape *out);
    uint64_t (*fingerprint)(const amq__obj *o, uint64_t h); /* opt */
    amq_status (*exact_hash)(const amq__obj *o, uint64_t key,
                             uint64_t *h); /* opt */
    amq_status (*exact_key)(const amq__obj *o, uint64_t fp,
                            uint64_t *key); /* opt */
    /* The next fingerprint from state st (zeroed to start). opt */
    bool (*next)(const amq__obj *o, uint64_t st[4], uint64_t *fp, uint64_t *v,
                 uint64_t *entries);
} amq__maplet_ops;

#endif
