/*
 * maplet.c — amq/maplet.h: the calls that carry values, on any filter
 * whose type has maplet callbacks (type/maplet_ops.h). A maplet is an amq_filter, so
 * this layer only checks arguments and modes, hashes byte keys with the
 * filter's hasher, refuses updates of views, and dispatches:
 *
 *   amq_maplet_put(m, key, v) ──► amq__type.maplet->put(obj, hash, v)
 *                                     │
 *              quotient maplet (mqf_*.c)   static maplet (smaplet.c)
 */
#include <string.h>

#include "filter/make.h"
#include "maplet/mqf.h"
#include "type/maplet_ops.h"

static const amq__maplet_ops *ops_of(const amq_filter *f) {
    return f != NULL ? amq__filter_type(f)->maplet : NULL;
}

bool amq_maplet_is(const amq_filter *f) { return ops_of(f) != NULL; }

const char *amq_maplet_op_name(amq_maplet_op op) {
    static const char *const names[] = {"sum", "max", "min", "or"};
    return op >= AMQ_MAPLET_SUM && op <= AMQ_MAPLET_OR ? names[op - 1] : "?";
}

uint64_t amq_maplet_combine(amq_maplet_op op, uint64_t a, uint64_t b,
                            bool *overflow) {
    bool over = false;
    uint64_t v = mq_combine((unsigned)op, a, b, &over);
    if (over && overflow != NULL)
        *overflow = true;
    return over ? UINT64_MAX : v;
}

/* ---- construction ---------------------------------------------------------- */

/* The type a maplet spec names: AMQ_ERR_UNSUPPORTED (with a message) when
 * it is not a maplet. */
static amq_status lookup(const char *spec, amq__spec *s, const amq__type **t,
                         amq_diag *diag) {
    AMQ_RETURN_IF_ERR(amq__filter_lookup(spec, s, t, diag));
    if ((*t)->maplet == NULL)
        return amq__diag(diag, AMQ_ERR_UNSUPPORTED, 0,
                         "%s is a filter, not a maplet (maplet, smaplet)",
                         (*t)->info.name);
    return AMQ_OK;
}

amq_status amq_maplet_new(const char *spec, uint64_t capacity, double fpr,
                          const amq_options *opt, amq_maplet **out,
                          amq_diag *diag) {
    amq__spec s;
    const amq__type *t;
    if (out == NULL)
        return AMQ_ERR_INVALID;
    *out = NULL;
    AMQ_RETURN_IF_ERR(lookup(spec, &s, &t, diag));
    return amq_filter_new(spec, capacity, fpr, opt, out, diag);
}

/* A dynamic maplet from pairs: empty, sized for n keys at fpr (or from
 * explicit spec parameters when fpr is 0), then the pairs put in order;
 * freed again if one fails. */
static amq_status build_dynamic(const amq__type *t, const amq__spec *s,
                                const uint64_t *hashes, const uint64_t *values,
                                size_t n, double fpr, const amq_options *opt,
                                amq_maplet **out, amq_diag *diag) {
    amq__make a = {.capacity = fpr == 0.0 ? 0 : (n ? n : 1), .fpr = fpr};
    size_t done = 0;
    AMQ_RETURN_IF_ERR(amq__filter_make(t, s, &a, opt, out, diag));
    amq_status st = amq_maplet_put_batch(*out, hashes, values, n, &done);
    if (st != AMQ_OK) {
        amq_filter_free(*out);
        *out = NULL;
        return amq__diag(diag, st, done, "putting pair %zu of %zu: %s",
                         done + 1, n, amq_strerror(st));
    }
    return AMQ_OK;
}

uint64_t amq_maplet_sum_slots(unsigned v, unsigned r, uint64_t count) {
    if (count == 0 || v < 1 || v > 64 || r < 1 || r > 64)
        return 0;
    return mq_sum_slots(r + v, v >= 64 ? ~0ULL : (1ULL << v) - 1, count);
}

amq_status amq_maplet_build(const char *spec, const uint64_t *hashes,
                            const uint64_t *values, size_t n, double fpr,
                            const amq_options *opt, amq_maplet **out,
                            amq_diag *diag) {
    static const uint64_t none[1];
    amq__spec s;
    const amq__type *t;
    if (out == NULL || ((hashes == NULL || values == NULL) && n != 0))
        return AMQ_ERR_INVALID;
    *out = NULL;
    AMQ_RETURN_IF_ERR(lookup(spec, &s, &t, diag));
    if (t->build == NULL) /* dynamic: sized for the pairs, then each put */
        return build_dynamic(t, &s, hashes, values, n, fpr, opt, out, diag);
    amq__make a = {.fpr = fpr,
                   .hashes = hashes ? hashes : none,
                   .n = n,
                   .values = values ? values : none};
    return amq__filter_make(t, &s, &a, opt, out, diag);
}

void amq_maplet_free(amq_maplet *m) { amq_filter_free(m); }

/* ---- updates and queries ----------------------------------------------------- */

/* The callbacks of a maplet that may change: UNSUPPORTED for a non-maplet
 * or a missing slot (checked by the caller), READONLY for a view. */
static amq_status writable(const amq_maplet *m, const amq__maplet_ops **o) {
    *o = ops_of(m);
    if (*o == NULL)
        return m == NULL ? AMQ_ERR_INVALID : AMQ_ERR_UNSUPPORTED;
    return amq_filter_is_view(m) ? AMQ_ERR_READONLY : AMQ_OK;
}

amq_status amq_maplet_put_hash(amq_maplet *m, uint64_t hash, uint64_t value) {
    const amq__maplet_ops *o;
    amq_status st = writable(m, &o);
    if (st == AMQ_OK && o->put == NULL)
        st = AMQ_ERR_UNSUPPORTED;
    return st == AMQ_OK ? o->put(amq__filter_obj(m), hash, value) : st;
}

amq_status amq_maplet_put_batch(amq_maplet *m, const uint64_t *hashes,
                                const uint64_t *values, size_t n,
                                size_t *done) {
    const amq__maplet_ops *o;
    size_t i = 0;
    amq_status st = (hashes == NULL || values == NULL) && n != 0
                        ? AMQ_ERR_INVALID
                        : writable(m, &o);
    if (st == AMQ_OK && o->put == NULL)
        st = AMQ_ERR_UNSUPPORTED;
    if (st == AMQ_OK && o->put_batch != NULL)
        st = o->put_batch(amq__filter_obj(m), hashes, values, n, &i);
    else if (st == AMQ_OK)
        while (i < n && (st = o->put(amq__filter_obj(m), hashes[i],
                                     values[i])) == AMQ_OK)
            i++;
    if (done != NULL)
        *done = i;
    return st;
}

amq_status amq_maplet_put(amq_maplet *m, const void *key, size_t len,
                          uint64_t value) {
    if (m == NULL || (key == NULL && len != 0))
        return AMQ_ERR_INVALID;
    return amq_maplet_put_hash(m, amq_filter_hash(m, key, len), value);
}

amq_status amq_maplet_get_hash(const amq_maplet *m, uint64_t hash,
                               uint64_t *value) {
    const amq__maplet_ops *o = ops_of(m);
    if (value == NULL || m == NULL)
        return AMQ_ERR_INVALID;
    *value = 0;
    if (o == NULL)
        return AMQ_ERR_UNSUPPORTED;
    return o->get(amq__filter_obj(m), hash, value);
}

amq_status amq_maplet_get(const amq_maplet *m, const void *key, size_t len,
                          uint64_t *value) {
    if (m == NULL || value == NULL || (key == NULL && len != 0))
        return AMQ_ERR_INVALID;
    return amq_maplet_get_hash(m, amq_filter_hash(m, key, len), value);
}

void amq_maplet_get_batch(const amq_maplet *m, const uint64_t *hashes, size_t n,
                          uint64_t *values, uint8_t *found) {
    const amq__maplet_ops *o = ops_of(m);
    if (o != NULL && o->get_batch != NULL) {
        if (n != 0)
            o->get_batch(amq__filter_obj(m), hashes, n, values, found);
        return;
    }
    for (size_t i = 0; i < n; i++)
        found[i] = amq_maplet_get_hash(m, hashes[i], &values[i]) == AMQ_OK;
}

amq_status amq_maplet_get_all(const amq_maplet *m, uint64_t hash,
                              uint64_t *values, size_t cap, size_t *n) {
    const amq__maplet_ops *o = ops_of(m);
    if (m == NULL || n == NULL || (values == NULL && cap != 0))
        return AMQ_ERR_INVALID;
    *n = 0;
    if (o == NULL)
        return AMQ_ERR_UNSUPPORTED;
    if (o->get_all != NULL)
        return o->get_all(amq__filter_obj(m), hash, values, cap, n);
    uint64_t v;
    AMQ_RETURN_IF_ERR(o->get(amq__filter_obj(m), hash, &v));
    if (cap > 0)
        values[0] = v;
    *n = 1;
    return AMQ_OK;
}

amq_status amq_maplet_delete_hash(amq_maplet *m, uint64_t hash,
                                  uint64_t value) {
    const amq__maplet_ops *o;
    amq_status st = writable(m, &o);
    if (st == AMQ_OK && o->del == NULL)
        st = AMQ_ERR_UNSUPPORTED;
    return st == AMQ_OK ? o->del(amq__filter_obj(m), hash, value) : st;
}

amq_status amq_maplet_delete(amq_maplet *m, const void *key, size_t len,
                             uint64_t value) {
    if (m == NULL || (key == NULL && len != 0))
        return AMQ_ERR_INVALID;
    return amq_maplet_delete_hash(m, amq_filter_hash(m, key, len), value);
}

amq_status amq_maplet_drop_value(amq_maplet *m, uint64_t value) {
    const amq__maplet_ops *o;
    amq_status st = writable(m, &o);
    if (st == AMQ_OK && o->drop_value == NULL)
        st = AMQ_ERR_UNSUPPORTED;
    return st == AMQ_OK ? o->drop_value(amq__filter_obj(m), value) : st;
}

amq_status amq_maplet_keep_values(amq_maplet *m, uint64_t lo, uint64_t hi) {
    const amq__maplet_ops *o;
    amq_status st = writable(m, &o);
    if (st == AMQ_OK && o->keep_values == NULL)
        st = AMQ_ERR_UNSUPPORTED;
    if (st == AMQ_OK && lo > hi)
        st = AMQ_ERR_INVALID;
    return st == AMQ_OK ? o->keep_values(amq__filter_obj(m), lo, hi) : st;
}

/* ---- whole-maplet operations ---------------------------------------------------- */

amq_status amq_maplet_merge(amq_maplet *dst, const amq_maplet *src) {
    if (dst == NULL || src == NULL)
        return AMQ_ERR_INVALID;
    if (!amq_maplet_is(dst) || !amq_maplet_is(src))
        return AMQ_ERR_UNSUPPORTED;
    return amq_filter_union(dst, src);
}

amq_status amq_maplet_resize(amq_maplet *m) {
    const amq__maplet_ops *o;
    amq_status st = writable(m, &o);
    if (st == AMQ_OK && o->resize == NULL)
        st = AMQ_ERR_UNSUPPORTED;
    return st == AMQ_OK ? o->resize(amq__filter_obj(m)) : st;
}

double amq_maplet_capacity_bound(const amq_maplet *m) {
    const amq__maplet_ops *o = ops_of(m);
    if (o == NULL)
        return 1.0;
    if (o->capacity_bound == NULL)
        return amq_filter_fpr_bound(m);
    return o->capacity_bound(amq__filter_obj(m));
}

/* ---- fingerprints, exact mode, enumeration --------------------------------------- */

amq_status amq_maplet_get_shape(const amq_maplet *m, amq_maplet_shape *out) {
    const amq__maplet_ops *o = ops_of(m);
    if (out == NULL)
        return AMQ_ERR_INVALID;
    if (o == NULL)
        return m == NULL ? AMQ_ERR_INVALID : AMQ_ERR_UNSUPPORTED;
    o->shape(amq__filter_obj(m), out);
    return AMQ_OK;
}

uint64_t amq_maplet_fingerprint(const amq_maplet *m, uint64_t hash) {
    const amq__maplet_ops *o = ops_of(m);
    return o != NULL && o->fingerprint != NULL
               ? o->fingerprint(amq__filter_obj(m), hash)
               : hash;
}

amq_status amq_maplet_exact_hash(const amq_maplet *m, uint64_t key,
                                 uint64_t *hash) {
    const amq__maplet_ops *o = ops_of(m);
    if (m == NULL || hash == NULL)
        return AMQ_ERR_INVALID;
    if (o == NULL || o->exact_hash == NULL)
        return AMQ_ERR_UNSUPPORTED;
    return o->exact_hash(amq__filter_obj(m), key, hash);
}

amq_status amq_maplet_exact_key(const amq_maplet *m, uint64_t fingerprint,
                                uint64_t *key) {
    const amq__maplet_ops *o = ops_of(m);
    if (m == NULL || key == NULL)
        return AMQ_ERR_INVALID;
    if (o == NULL || o->exact_key == NULL)
        return AMQ_ERR_UNSUPPORTED;
    return o->exact_key(amq__filter_obj(m), fingerprint, key);
}

amq_status amq_maplet_iter_init(const amq_maplet *m, amq_maplet_iter *it) {
    const amq__maplet_ops *o = ops_of(m);
    if (it == NULL || m == NULL)
        return AMQ_ERR_INVALID;
    memset(it, 0, sizeof *it);
    if (o == NULL || o->next == NULL)
        return AMQ_ERR_UNSUPPORTED;
    it->m = m;
    return AMQ_OK;
}

bool amq_maplet_iter_next(amq_maplet_iter *it, uint64_t *fingerprint,
                          uint64_t *value, uint64_t *entries) {
    uint64_t fp, v, e;
    if (it == NULL || it->m == NULL ||
        !ops_of(it->m)->next(amq__filter_obj(it->m), it->state, &fp, &v, &e))
        return false;
    if (fingerprint != NULL)
        *fingerprint = fp;
    if (value != NULL)
        *value = v;
    if (entries != NULL)
        *entries = e;
    return true;
}
