/*
 * registry.c — the list of structure types amq_filter can create.
 * Later families append their amq__type here; ids are pinned in
 * docs/format.md and never reused.
 */
#include <string.h>

#include "filter/type.h"

static const amq__type *const types[] = {
    /* Bloom core (bloom.h) */
    &amq__type_bloom,
    &amq__type_blocked,
    &amq__type_sbbf,
    /* counting family (counting.h): counting, dleft, spectral */
    &amq__type_counting,
    &amq__type_dleft,
    &amq__type_spectral,
    /* Bloom variants (bloom.h): scalable, stable, partitioned, compressed */
    &amq__type_scalable,
    &amq__type_stable,
    &amq__type_partitioned,
    &amq__type_compressed,
    /* sketches (sketch.h): cms, topk */
    &amq__type_cms,
    &amq__type_topk,
    /* cuckoo family (cuckoo.h): cuckoo, vacuum */
    &amq__type_cuckoo,
    &amq__type_vacuum,
    /* quotient family (quotient.h): qf, cqf */
    &amq__type_qf,
    &amq__type_cqf,
    /* static fingerprint filters (static.h): xor*, fuse*, ribbon */
    &amq__type_xor8,
    &amq__type_xor16,
    &amq__type_xor32,
    &amq__type_fuse8,
    &amq__type_fuse16,
    &amq__type_fuse32,
    &amq__type_ribbon,
};

#define NTYPES (sizeof types / sizeof types[0])

size_t amq_filter_type_count(void) { return NTYPES; }

const amq_type_info *amq_filter_type_at(size_t i) {
    return i < NTYPES ? &types[i]->info : NULL;
}

const amq__type *amq__type_by_name(const char *name) {
    for (size_t i = 0; i < NTYPES; i++)
        if (strcmp(types[i]->info.name, name) == 0)
            return types[i];
    return NULL;
}

const amq__type *amq__type_by_id(uint16_t id) {
    for (size_t i = 0; i < NTYPES; i++)
        if (types[i]->info.type_id == id)
            return types[i];
    return NULL;
}

const amq_type_info *amq_filter_type_find(const char *spec) {
    amq__spec s;
    if (amq__spec_parse(spec, &s, NULL) != AMQ_OK)
        return NULL;
    const amq__type *t = amq__type_by_name(s.name);
    return t != NULL ? &t->info : NULL;
}
