/*
 * range.c — the range queries of amq/range.h over the registry: a type
 * with AMQ_CAP_RANGE answers them through its contains_range and
 * range_bound callbacks; the keys' order comes from AMQ_HASH_ORDER.
 */
#include "amq/range.h"

#include <string.h>

#include "filter/make.h"
#include "type/range_ops.h"

static amq_status ranged(const amq_filter *f, const amq__type **t) {
    if (f == NULL)
        return AMQ_ERR_INVALID;
    *t = amq__filter_type(f);
    if ((*t)->range == NULL)
        return AMQ_ERR_UNSUPPORTED;
    if (amq_filter_hasher(f)->kind != AMQ_HASH_ORDER)
        return AMQ_ERR_HASH;
    return AMQ_OK;
}

amq_status amq_range_query(const amq_filter *f, uint64_t lo, uint64_t hi,
                           bool *maybe) {
    const amq__type *t;
    if (maybe == NULL || lo > hi)
        return AMQ_ERR_INVALID;
    AMQ_RETURN_IF_ERR(ranged(f, &t));
    *maybe = t->range->contains(amq__filter_obj(f), lo, hi);
    return AMQ_OK;
}

/* memcmp order, a proper prefix first. */
static int bytes_cmp(const void *a, size_t na, const void *b, size_t nb) {
    int c = memcmp(a, b, na < nb ? na : nb);
    return c != 0 ? c : (na > nb) - (na < nb);
}

amq_status amq_range_query_bytes(const amq_filter *f, const void *lo,
                                 size_t lo_len, const void *hi, size_t hi_len,
                                 bool *maybe) {
    if ((lo == NULL && lo_len != 0) || (hi == NULL && hi_len != 0))
        return AMQ_ERR_INVALID;
    if (lo_len != 0 && hi_len != 0 && bytes_cmp(lo, lo_len, hi, hi_len) > 0)
        return AMQ_ERR_INVALID;
    if (lo_len != 0 && hi_len == 0)
        return AMQ_ERR_INVALID;
    return amq_range_query(f, amq_range_key(lo, lo_len),
                           amq_range_key(hi, hi_len), maybe);
}

amq_status amq_range_query_batch(const amq_filter *f, const uint64_t *lo,
                                 const uint64_t *hi, size_t n, uint8_t *out) {
    const amq__type *t;
    if (n != 0 && (lo == NULL || hi == NULL || out == NULL))
        return AMQ_ERR_INVALID;
    AMQ_RETURN_IF_ERR(ranged(f, &t));
    const amq__obj *o = amq__filter_obj(f);
    for (size_t i = 0; i < n; i++) {
        if (lo[i] > hi[i])
            return AMQ_ERR_INVALID;
        out[i] = t->range->contains(o, lo[i], hi[i]);
    }
    return AMQ_OK;
}

double amq_range_fpr_bound(const amq_filter *f, uint64_t len) {
    const amq__type *t;
    if (f == NULL || (t = amq__filter_type(f))->range == NULL)
        return -1.0;
    return t->range->bound(amq__filter_obj(f), len);
}

int amq_range_key_form(const amq_filter *f) {
    const amq__type *t;
    if (f == NULL || (t = amq__filter_type(f))->range == NULL)
        return -1;
    return (int)t->range->keys(amq__filter_obj(f));
}

uint64_t amq_range_design_length(const amq_filter *f) {
    const amq__type *t;
    if (f == NULL || (t = amq__filter_type(f))->range == NULL)
        return 0;
    return t->range->design_length(amq__filter_obj(f));
}

uint64_t amq_range_key(const void *key, size_t len) {
    amq_hasher h;
    amq_hasher_init(&h, AMQ_HASH_ORDER, 0, NULL);
    return amq_hash64(&h, key, len);
}
