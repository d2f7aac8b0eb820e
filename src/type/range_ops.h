/*
 * range_ops.h — what a range filter type (AMQ_CAP_RANGE) adds to its
 * amq__type (type/type.h): the calls of amq/range.h, which
 * filter/range.c dispatches through amq__type.range.
 */
#ifndef AMQ_SRC_TYPE_RANGE_OPS_H
#define AMQ_SRC_TYPE_RANGE_OPS_H

#include "amq/range.h"
#include "type/type.h"

typedef struct amq__range_ops {
    /* Whether a key may lie in [lo, hi] (lo <= hi; no false negatives). */
    bool (*contains)(const amq__obj *o, uint64_t lo, uint64_t hi);
    /* The certified bound for a range of len keys none of which was
     * added. */
    double (*bound)(const amq__obj *o, uint64_t len);
    /* What the keys are: AMQ_RANGE_KEYS_INT or AMQ_RANGE_KEYS_BYTES. */
    amq_range_keys (*keys)(const amq__obj *o);
    /* The range length the target rate is for. */
    uint64_t (*design_length)(const amq__obj *o);
} amq__range_ops;

#endif
