/*
 * typed_bloom.c — the Bloom core's constructors a spec string cannot
 * express, as filters: the structure makes its object (src/bloom/), and
 * the filter adopts it with opt's hasher.
 */
#include "amq/amq.h"

#include "bloom/sbbf.h"
#include "filter/make.h"

amq_status amq_sbbf_from_parquet(const void *bitset, size_t len,
                                 const amq_options *opt, amq_filter **out) {
    amq__obj *o;
    if (out == NULL)
        return AMQ_ERR_INVALID;
    *out = NULL;
    AMQ_RETURN_IF_ERR(amq__sbbf_from_parquet(bitset, len, opt, &o));
    return amq__filter_adopt(&amq__type_sbbf, o, opt, out);
}
