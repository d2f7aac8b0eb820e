/*
 * typed.c — from a generic filter to its structure, for the calls only the
 * structure's own header has (explicit getters, folds, iterators, query
 * objects).
 *
 * Each amq_X_of names the spec names whose objects are a struct amq_X and
 * answers NULL for a filter of any other type (or NULL). The pointer is the
 * filter's own object: it lives as long as the filter does, and a change
 * made through it is a change of the filter.
 */
#include "amq/amq.h"

#include "filter/make.h"

static void *of_types(const amq_filter *f, const amq__type *const *types,
                      size_t n) {
    if (f == NULL)
        return NULL;
    const amq__type *t = amq__filter_type(f);
    for (size_t i = 0; i < n; i++)
        if (t == types[i])
            return amq__filter_obj(f);
    return NULL;
}

#define AMQ__OF(handle, ...)                                                   \
    amq_##handle *amq_##handle##_of(const amq_filter *f) {                     \
        static const amq__type *const types[] = {__VA_ARGS__};                 \
        return of_types(f, types, sizeof types / sizeof types[0]);             \
    }

AMQ__OF(bloom, &amq__type_bloom)
AMQ__OF(blocked, &amq__type_blocked)
AMQ__OF(sbbf, &amq__type_sbbf)
AMQ__OF(partitioned, &amq__type_partitioned)
AMQ__OF(scalable, &amq__type_scalable)
AMQ__OF(stable, &amq__type_stable)
AMQ__OF(compressed, &amq__type_compressed)
AMQ__OF(counting, &amq__type_counting)
AMQ__OF(dleft, &amq__type_dleft)
AMQ__OF(spectral, &amq__type_spectral)
AMQ__OF(cuckoo, &amq__type_cuckoo, &amq__type_vacuum)
AMQ__OF(qf, &amq__type_qf, &amq__type_cqf)
AMQ__OF(xor, &amq__type_xor8, &amq__type_xor16, &amq__type_xor32,
        &amq__type_fuse8, &amq__type_fuse16, &amq__type_fuse32)
AMQ__OF(ribbon, &amq__type_ribbon)
AMQ__OF(vqf, &amq__type_vqf)
AMQ__OF(prefix, &amq__type_prefix)
AMQ__OF(morton, &amq__type_morton)
