/*
 * typed_quotient.c — the quotient filters' constructor the spec string
 * cannot say: amq_qf_merge, a new filter holding the union of two
 * (amq/quotient.h). The structure merges the tables (amq__qf_merge,
 * fingerprint/qf_impl.h); this layer checks that the two filters agree
 * on type and hasher and gives the result theirs; and amq_eqf_from_qf,
 * a growing filter that takes over what a full qf holds.
 */
#include <string.h>

#include "amq/quotient.h"
#include "filter/make.h"
#include "fingerprint/qf_impl.h"

static bool same_hasher(const amq_hasher *a, const amq_hasher *b) {
    return a->kind == b->kind && a->seed == b->seed &&
           memcmp(a->key, b->key, sizeof a->key) == 0;
}

amq_status amq_qf_merge(const amq_filter *a, const amq_filter *b,
                        const amq_options *opt, amq_filter **out) {
    static const amq_options defaults;
    const amq_qf *qa = amq_qf_of(a), *qb = amq_qf_of(b);
    if (out == NULL)
        return AMQ_ERR_INVALID;
    *out = NULL;
    if (qa == NULL || qb == NULL)
        return AMQ_ERR_INVALID;
    const amq_hasher *h = amq_filter_hasher(a);
    if (amq__filter_type(a) != amq__filter_type(b) ||
        !same_hasher(h, amq_filter_hasher(b)))
        return AMQ_ERR_INCOMPATIBLE;
    amq_options o = opt != NULL ? *opt : defaults;
    o.hash = h->kind;
    o.hash_seed = h->seed;
    o.hash_key = h->key;
    amq_qf *m;
    AMQ_RETURN_IF_ERR(amq__qf_merge(qa, qb, &o, &m));
    return amq__filter_adopt(amq__filter_type(a), &m->o, &o, out);
}

amq_status amq_eqf_from_qf(const amq_filter *qf, const amq_options *opt,
                           amq_filter **out) {
    static const amq_options defaults;
    const amq_qf *q = amq_qf_of(qf);
    if (out == NULL)
        return AMQ_ERR_INVALID;
    *out = NULL;
    if (q == NULL)
        return AMQ_ERR_INVALID;
    const amq_hasher *h = amq_filter_hasher(qf);
    amq_options o = opt != NULL ? *opt : defaults;
    o.hash = h->kind;
    o.hash_seed = h->seed;
    o.hash_key = h->key;
    amq__obj *e;
    AMQ_RETURN_IF_ERR(amq__eqf_from_qf(q, amq_filter_target_fpr(qf), &o, &e));
    AMQ_RETURN_IF_ERR(amq__filter_adopt(&amq__type_eqf, e, &o, out));
    amq__filter_set_target(*out, amq_filter_capacity(qf),
                           amq_filter_target_fpr(qf));
    return AMQ_OK;
}
