/*
 * filter.c — amq_filter, the one dynamic interface over every structure.
 *
 *   amq_filter ──► type (amq__type: table of callbacks, registry.c)
 *        │
 *        ├──► impl   the structure's own object (bloom, sbbf, ...)
 *        └──► hasher keys → 64-bit hashes, once, here
 *
 * This layer owns what is common to all types: hashing byte keys, refusing
 * updates on read-only views, argument checks, capabilities, and the
 * serialization frame. A one-key query goes straight to the structure's
 * kernel (impl->contains: chosen by the structure for its shape and CPU,
 * else the type's contains callback), so the generic path costs one
 * indirect call beyond the typed one and no per-call switch. The frame's parameter block starts with two generic
 * fields (capacity u64, target fpr f64) followed by the type's own block.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "amq/query.h"
#include "core/mem.h"
#include "type/frame_io.h"
#include "filter/make.h"
#include "type/maplet_ops.h"

struct amq_filter {
    const amq__type *type;
    amq__obj *impl;
    amq__mem mem;
    amq_hasher hasher;
    amq__generic g; /* capacity, target; the bound outside an intersection */
    bool view;
};

static amq_status check_target(uint64_t capacity, double fpr, amq_diag *diag) {
    if (capacity == 0 && fpr == 0.0)
        return AMQ_OK; /* explicit parameters expected in the spec */
    if (capacity == 0)
        return amq__diag(diag, AMQ_ERR_INVALID, 0,
                         "capacity must be at least 1");
    if (!(fpr > 0.0 && fpr < 1.0))
        return amq__diag(diag, AMQ_ERR_INVALID, 0,
                         "false-positive rate must be in (0, 1), got %g", fpr);
    return AMQ_OK;
}

/* The order map is for range filters only, and range queries need it: a
 * point filter fed unhashed keys would lose its bound. */
static amq_status check_hasher(const amq__type *t, const amq_hasher *h,
                               amq_diag *diag) {
    if (h->kind == AMQ_HASH_ORDER && !(t->info.caps & AMQ_CAP_RANGE))
        return amq__diag(diag, AMQ_ERR_HASH, 0,
                         "hash 'order' keeps keys in order for range filters; "
                         "%s needs a hash that spreads them (xxh3, xxh64, "
                         "siphash)",
                         t->info.name);
    return AMQ_OK;
}

/* A structure that chose no query kernel answers through its type. */
static void set_kernel(const amq__type *t, amq__obj *o) {
    if (o->contains == NULL)
        o->contains = t->contains;
}

static void destroy(const amq__type *t, amq__obj *o) {
    if (t->destroy != NULL)
        t->destroy(o);
    else
        amq__obj_free(o);
}

static amq_status wrap(const amq__type *t, const amq_options *opt,
                       amq_filter **out) {
    amq__mem mem;
    amq__mem_init(&mem, opt);
    amq_filter *f = amq__zalloc(&mem, sizeof *f);
    if (f == NULL)
        return AMQ_ERR_NOMEM;
    f->type = t;
    f->mem = mem;
    *out = f;
    return AMQ_OK;
}

/* The type name nearest to a misspelt (or capitalised) one, or NULL. */
static const char *nearest_type(const char *spec) {
    const char *names[64];
    size_t n = amq_filter_type_count(), len = strcspn(spec, ":");
    char word[AMQ__SPEC_NAME_MAX];
    if (n > sizeof names / sizeof names[0] || len >= sizeof word)
        return NULL;
    for (size_t i = 0; i < n; i++)
        names[i] = amq_filter_type_at(i)->name;
    memcpy(word, spec, len);
    word[len] = '\0';
    return amq__type_by_name(word) != NULL ? NULL : amq_suggest(word, names, n);
}

amq_status amq__filter_lookup(const char *spec, amq__spec *s,
                              const amq__type **t, amq_diag *diag) {
    amq_status st = amq__spec_parse(spec, s, diag);
    const char *near =
        st == AMQ_ERR_SPEC && spec != NULL ? nearest_type(spec) : NULL;
    if (near != NULL) /* "Bloom": names are lower case */
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "unknown structure '%.*s' (did you mean '%s'?)",
                         (int)strcspn(spec, ":"), spec, near);
    AMQ_RETURN_IF_ERR(st);
    *t = amq__type_by_name(s->name);
    if (*t == NULL && (near = nearest_type(s->name)) != NULL)
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "unknown structure '%s' (did you mean '%s'?)", s->name,
                         near);
    if (*t == NULL)
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "unknown structure '%s' (see amq help types)",
                         s->name);
    return AMQ_OK;
}

/* The structure behind a new filter: created empty for a target, or (a
 * static type) built from every key's hash. The spec is a copy: its keys
 * are marked as the type reads them. */
static amq_status make_impl(amq_filter *f, amq__spec s, const amq__make *a,
                            const amq_options *opt, amq_diag *diag) {
    const amq__type *t = f->type;
    amq_status st;
    if (t->build != NULL && a->values != NULL)
        st = t->maplet->build(t, &s, a->hashes, a->values, a->n, a->fpr, opt,
                              &f->impl, diag);
    else if (t->build != NULL)
        st = t->build(t, &s, a->hashes, a->n, a->fpr, opt, &f->impl, diag);
    else
        st = t->create(t, &s, a->capacity, a->fpr, opt, &f->impl, diag);
    if (st == AMQ_OK &&
        (st = amq__spec_finish(&s, t->info.params, diag)) != AMQ_OK)
        destroy(t, f->impl);
    else if (st == AMQ_OK)
        set_kernel(t, f->impl);
    return st;
}

static amq_status check_make(const amq__type *t, const amq__make *a,
                             amq_diag *diag) {
    if (t->build == NULL && a->hashes == NULL)
        return check_target(a->capacity, a->fpr, diag);
    if (a->fpr != 0.0 && !(a->fpr > 0.0 && a->fpr < 1.0))
        return amq__diag(diag, AMQ_ERR_INVALID, 0,
                         "false-positive rate must be in (0, 1), got %g",
                         a->fpr);
    return AMQ_OK;
}

/* A dynamic type given keys: sized for them, then filled in order (a
 * dynamic maplet given values is filled by maplet.c). */
static amq_status fill(amq_filter *f, const amq__make *a, amq_diag *diag) {
    size_t done = 0;
    amq_status st = amq_filter_add_batch(f, a->hashes, a->n, &done);
    if (st != AMQ_OK)
        return amq__diag(diag, st, done, "adding key %zu of %zu: %s", done + 1,
                         a->n, amq_strerror(st));
    return AMQ_OK;
}

amq_status amq__filter_make(const amq__type *t, const amq__spec *s,
                            const amq__make *args, const amq_options *opt,
                            amq_filter **out, amq_diag *diag) {
    static const amq_options defaults;
    amq__make a = *args;
    amq_filter *f = NULL;
    if (opt == NULL)
        opt = &defaults;
    if (t->build == NULL && a.hashes != NULL) /* sized for the keys */
        a.capacity = a.fpr == 0.0 ? 0 : (a.n ? a.n : 1);
    AMQ_RETURN_IF_ERR(check_make(t, &a, diag));
    AMQ_RETURN_IF_ERR(wrap(t, opt, &f));
    amq_status st =
        amq__hasher_from_options(opt, t->info.default_hash, &f->hasher);
    if (st == AMQ_OK)
        st = check_hasher(t, &f->hasher, diag);
    if (st == AMQ_OK)
        st = make_impl(f, *s, &a, opt, diag);
    if (st != AMQ_OK) {
        amq__free(&f->mem, f, sizeof *f);
        return st;
    }
    f->g.capacity = t->build != NULL ? a.n : a.capacity;
    f->g.target_fpr = a.fpr;
    if (t->build == NULL && a.hashes != NULL &&
        (st = fill(f, &a, diag)) != AMQ_OK) {
        amq_filter_free(f);
        return st;
    }
    *out = f;
    return AMQ_OK;
}

amq_status amq__filter_adopt(const amq__type *t, amq__obj *o,
                             const amq_options *opt, amq_filter **out) {
    static const amq_options defaults;
    amq_filter *f = NULL;
    amq_status st = wrap(t, opt != NULL ? opt : &defaults, &f);
    if (st == AMQ_OK)
        st = amq__hasher_from_options(opt != NULL ? opt : &defaults,
                                      t->info.default_hash, &f->hasher);
    if (st == AMQ_OK)
        st = check_hasher(t, &f->hasher, NULL);
    if (st != AMQ_OK) {
        if (f != NULL)
            amq__free(&f->mem, f, sizeof *f);
        destroy(t, o);
        return st;
    }
    f->impl = o;
    set_kernel(t, o);
    *out = f;
    return AMQ_OK;
}

amq_status amq_filter_new(const char *spec, uint64_t capacity, double fpr,
                          const amq_options *opt, amq_filter **out,
                          amq_diag *diag) {
    amq__spec s;
    const amq__type *t;
    amq__make a = {.capacity = capacity, .fpr = fpr};
    if (out == NULL)
        return AMQ_ERR_INVALID;
    *out = NULL;
    AMQ_RETURN_IF_ERR(amq__filter_lookup(spec, &s, &t, diag));
    if (t->create == NULL)
        return amq__diag(diag, AMQ_ERR_UNSUPPORTED, 0,
                         "%s is static: build it from all keys with "
                         "amq_filter_build",
                         t->info.name);
    return amq__filter_make(t, &s, &a, opt, out, diag);
}

amq_status amq_filter_build(const char *spec, const uint64_t *hashes, size_t n,
                            double fpr, const amq_options *opt,
                            amq_filter **out, amq_diag *diag) {
    static const uint64_t none[1];
    amq__spec s;
    const amq__type *t;
    amq__make a = {.fpr = fpr, .hashes = hashes ? hashes : none, .n = n};
    if (out == NULL || (hashes == NULL && n != 0))
        return AMQ_ERR_INVALID;
    *out = NULL;
    AMQ_RETURN_IF_ERR(amq__filter_lookup(spec, &s, &t, diag));
    return amq__filter_make(t, &s, &a, opt, out, diag);
}

amq_status amq_filter_resolve_hasher(const char *spec, const amq_options *opt,
                                     amq_hasher *out) {
    amq__spec s;
    const amq__type *t;
    if (out == NULL)
        return AMQ_ERR_INVALID;
    AMQ_RETURN_IF_ERR(amq__filter_lookup(spec, &s, &t, NULL));
    AMQ_RETURN_IF_ERR(amq__hasher_from_options(opt, t->info.default_hash, out));
    return check_hasher(t, out, NULL);
}

void amq_filter_free(amq_filter *f) {
    if (f == NULL)
        return;
    destroy(f->type, f->impl);
    amq__mem mem = f->mem;
    memset(f, 0, sizeof *f);
    amq__free(&mem, f, sizeof *f);
}

const amq__type *amq__filter_type(const amq_filter *f) { return f->type; }
amq__obj *amq__filter_obj(const amq_filter *f) { return f->impl; }

/* ---- updates and queries ----------------------------------------------- */

uint64_t amq_filter_hash(const amq_filter *f, const void *key, size_t len) {
    return amq_hash64(&f->hasher, key, len);
}

/* An intersection is final: a key added to it would void its bound for
 * keys in only some of the inputs (filter.h), so it takes none. */
static bool takes_keys(const amq_filter *f) {
    return f->type->add != NULL && f->g.outside_bound == 0.0;
}

amq_status amq_filter_add_hash(amq_filter *f, uint64_t hash) {
    if (f->view)
        return AMQ_ERR_READONLY;
    if (!takes_keys(f))
        return AMQ_ERR_UNSUPPORTED;
    return f->type->add(f->impl, hash);
}

amq_status amq_filter_add_batch(amq_filter *f, const uint64_t *hashes, size_t n,
                                size_t *done) {
    size_t i = 0;
    amq_status st = AMQ_OK;
    if (f == NULL || (hashes == NULL && n != 0))
        st = AMQ_ERR_INVALID;
    else if (f->view)
        st = AMQ_ERR_READONLY;
    else if (!takes_keys(f))
        st = AMQ_ERR_UNSUPPORTED;
    else if (f->type->add_batch != NULL)
        st = f->type->add_batch(f->impl, hashes, n, &i);
    else
        for (; i < n && (st = f->type->add(f->impl, hashes[i])) == AMQ_OK; i++)
            ;
    if (done != NULL)
        *done = i;
    return st;
}

amq_status amq_filter_add(amq_filter *f, const void *key, size_t len) {
    if (key == NULL && len != 0)
        return AMQ_ERR_INVALID;
    return amq_filter_add_hash(f, amq_hash64(&f->hasher, key, len));
}

bool amq_filter_contains_hash(const amq_filter *f, uint64_t hash) {
    const amq__obj *o = f->impl;
    return o->contains(o, hash);
}

amq_status amq_filter_fuse8_query(const amq_filter *f, amq_fuse8_query *q) {
    if (f == NULL || q == NULL)
        return AMQ_ERR_INVALID;
    if (f->type != &amq__type_fuse8)
        return AMQ_ERR_UNSUPPORTED;
    return amq_fuse8_query_of((const amq_xor *)f->impl, q);
}

amq_status amq_filter_cuckoo_query(const amq_filter *f, amq_cuckoo_query *q) {
    if (f == NULL || q == NULL)
        return AMQ_ERR_INVALID;
    if (f->type != &amq__type_cuckoo && f->type != &amq__type_vacuum)
        return AMQ_ERR_UNSUPPORTED;
    return amq_cuckoo_query_of((const amq_cuckoo *)f->impl, q);
}

bool amq_filter_contains(const amq_filter *f, const void *key, size_t len) {
    if (key == NULL && len != 0)
        return false;
    const amq__obj *o = f->impl;
    return o->contains(o, amq_hash64(&f->hasher, key, len));
}

void amq_filter_contains_batch(const amq_filter *f, const uint64_t *hashes,
                               size_t n, uint8_t *out) {
    if (f->type->contains_batch != NULL) {
        if (n != 0)
            f->type->contains_batch(f->impl, hashes, n, out);
        return;
    }
    const amq__obj *o = f->impl;
    for (size_t i = 0; i < n; i++)
        out[i] = o->contains(o, hashes[i]);
}

amq_status amq_filter_remove_hash(amq_filter *f, uint64_t hash) {
    if (f->type->remove == NULL || !(amq_filter_caps(f) & AMQ_CAP_REMOVE))
        return AMQ_ERR_UNSUPPORTED;
    if (f->view)
        return AMQ_ERR_READONLY;
    return f->type->remove(f->impl, hash);
}

amq_status amq_filter_remove(amq_filter *f, const void *key, size_t len) {
    if (key == NULL && len != 0)
        return AMQ_ERR_INVALID;
    return amq_filter_remove_hash(f, amq_hash64(&f->hasher, key, len));
}

amq_status amq_filter_report_fp_hash(amq_filter *f, uint64_t hash,
                                     bool *fixed) {
    bool dummy;
    if (f == NULL)
        return AMQ_ERR_INVALID;
    if (f->type->report_fp == NULL)
        return AMQ_ERR_UNSUPPORTED;
    if (f->view)
        return AMQ_ERR_READONLY;
    return f->type->report_fp(f->impl, hash, fixed != NULL ? fixed : &dummy);
}

amq_status amq_filter_report_fp(amq_filter *f, const void *key, size_t len,
                                bool *fixed) {
    if (f == NULL || (key == NULL && len != 0))
        return AMQ_ERR_INVALID;
    return amq_filter_report_fp_hash(f, amq_hash64(&f->hasher, key, len),
                                     fixed);
}

amq_status amq_filter_adapt_stats(const amq_filter *f, amq_adapt_stats *out) {
    if (f == NULL || out == NULL)
        return AMQ_ERR_INVALID;
    if (f->type->adapt_stats == NULL)
        return AMQ_ERR_UNSUPPORTED;
    f->type->adapt_stats(f->impl, out);
    return AMQ_OK;
}

amq_status amq_filter_count_hash(const amq_filter *f, uint64_t hash,
                                 uint64_t *out) {
    if (f->type->count == NULL)
        return AMQ_ERR_UNSUPPORTED;
    if (out == NULL)
        return AMQ_ERR_INVALID;
    return f->type->count(f->impl, hash, out);
}

static bool same_hasher(const amq_hasher *a, const amq_hasher *b) {
    return a->kind == b->kind && a->seed == b->seed &&
           memcmp(a->key, b->key, sizeof a->key) == 0;
}

static amq_status merge(amq_filter *dst, const amq_filter *src,
                        amq__merge_op op, uint32_t cap) {
    if (dst == NULL || src == NULL)
        return AMQ_ERR_INVALID;
    if (dst->type->merge == NULL || (amq_filter_caps(dst) & cap) == 0)
        return AMQ_ERR_UNSUPPORTED;
    if (dst->view)
        return AMQ_ERR_READONLY;
    if (dst->type != src->type || !same_hasher(&dst->hasher, &src->hasher))
        return AMQ_ERR_INCOMPATIBLE;
    if (op == AMQ__UNION && src->g.outside_bound > 0.0)
        return AMQ_ERR_UNSUPPORTED; /* would carry src's keys-in-one-input */
    return dst->type->merge(dst->impl, src->impl, op);
}

amq_status amq_filter_union(amq_filter *dst, const amq_filter *src) {
    return merge(dst, src, AMQ__UNION, AMQ_CAP_UNION);
}

/* A key outside the intersection is missing from some input, whose table
 * it then passes at most at that input's rate (its probes are set in the
 * AND only where they are set in every input): the largest of the inputs'
 * bounds covers every such key, keys in no input included. */
amq_status amq_filter_intersect(amq_filter *dst, const amq_filter *src) {
    if (dst == NULL || src == NULL)
        return AMQ_ERR_INVALID;
    double before = fmax(amq_filter_fpr_bound(dst), amq_filter_fpr_bound(src));
    AMQ_RETURN_IF_ERR(merge(dst, src, AMQ__INTERSECT, AMQ_CAP_INTERSECT));
    /* A bound of 0 (an empty input) still marks the filter: the smallest
     * positive double stands for it. */
    dst->g.outside_bound = fmin(1.0, fmax(before, DBL_MIN));
    return AMQ_OK;
}

bool amq_filter_is_intersection(const amq_filter *f, double *none_bound) {
    if (f == NULL || f->g.outside_bound == 0.0)
        return false;
    if (none_bound != NULL)
        *none_bound = f->type->fpr_bound(f->impl);
    return true;
}

amq_status amq_filter_estimate_items(const amq_filter *f, double *out) {
    if (f->type->estimate == NULL)
        return AMQ_ERR_UNSUPPORTED;
    if (out == NULL)
        return AMQ_ERR_INVALID;
    return f->type->estimate(f->impl, out);
}

/* ---- properties -------------------------------------------------------- */

const amq_type_info *amq_filter_info(const amq_filter *f) {
    return &f->type->info;
}
uint32_t amq_filter_caps(const amq_filter *f) {
    uint32_t caps =
        f->type->caps != NULL ? f->type->caps(f->impl) : f->type->info.caps;
    if (f->g.outside_bound > 0.0) /* final: no keys, no union */
        caps = (caps & ~(uint32_t)AMQ_CAP_UNION) | AMQ_CAP_STATIC;
    return caps;
}
uint64_t amq_filter_items(const amq_filter *f) {
    return f->type->items != NULL ? f->type->items(f->impl) : f->impl->items;
}
uint64_t amq_filter_capacity(const amq_filter *f) { return f->g.capacity; }
void amq__filter_set_target(amq_filter *f, uint64_t capacity, double fpr) {
    f->g.capacity = capacity;
    f->g.target_fpr = fpr;
}
size_t amq_filter_size_bytes(const amq_filter *f) {
    return f->type->size_bytes != NULL ? f->type->size_bytes(f->impl)
                                       : f->impl->table_bytes;
}
/* Per key: a summing maplet's items are the sum of its values, its keys
 * the fingerprints it holds. */
double amq_filter_bits_per_key(const amq_filter *f) {
    uint64_t n = amq_filter_items(f);
    amq_maplet_shape s;
    if (f->type->maplet != NULL) {
        f->type->maplet->shape(f->impl, &s);
        if (s.op == AMQ_MAPLET_SUM && !s.multiset)
            n = s.distinct;
    }
    return 8.0 * (double)amq_filter_size_bytes(f) / (double)(n ? n : 1);
}
double amq_filter_fpr_bound(const amq_filter *f) {
    return fmax(f->type->fpr_bound(f->impl), f->g.outside_bound);
}
double amq_filter_target_fpr(const amq_filter *f) { return f->g.target_fpr; }
const amq_hasher *amq_filter_hasher(const amq_filter *f) { return &f->hasher; }
bool amq_filter_is_view(const amq_filter *f) { return f->view; }

size_t amq_filter_describe(const amq_filter *f, char *buf, size_t cap) {
    int n = snprintf(buf, cap, "%s:", f->type->info.name);
    size_t used = n > 0 ? (size_t)n : 0;
    size_t rest = used < cap ? cap - used : 0;
    return used + f->type->describe(f->impl, rest ? buf + used : NULL, rest);
}

/* ---- curves ------------------------------------------------------------ */

static amq_status curve(const char *spec, double x, double *out, bool inverse) {
    amq__spec s;
    const amq__type *t;
    if (out == NULL)
        return AMQ_ERR_INVALID;
    AMQ_RETURN_IF_ERR(amq__filter_lookup(spec, &s, &t, NULL));
    if (inverse ? !(x > 0.0 && x < 1.0) : !(x > 0.0 && isfinite(x)))
        return AMQ_ERR_INVALID;
    if (t->curve == NULL)
        return AMQ_ERR_UNSUPPORTED;
    AMQ_RETURN_IF_ERR(t->curve(t, &s, x, inverse, out, NULL));
    return amq__spec_finish(&s, t->info.params, NULL);
}

amq_status amq_curve_fpr(const char *spec, double bits_per_key, double *fpr) {
    return curve(spec, bits_per_key, fpr, false);
}

amq_status amq_curve_bits(const char *spec, double fpr, double *bits_per_key) {
    return curve(spec, fpr, bits_per_key, true);
}

/* ---- serialization ----------------------------------------------------- */

size_t amq_filter_serialized_size(const amq_filter *f) {
    return amq__obj_frame_size(f->type, f->impl, &f->g);
}

amq_status amq_filter_save(const amq_filter *f, void *buf, size_t cap,
                           size_t *written) {
    return amq__obj_save(f->type, f->impl, &f->hasher, &f->g, buf, cap,
                         written);
}

bool amq__filter_pieces(const amq_filter *f, uint8_t head[AMQ__FRAME_HEAD_MAX],
                        const uint8_t tail[8], amq__piece out[3]) {
    return amq__obj_pieces(f->type, f->impl, &f->hasher, &f->g, head, tail,
                           out);
}

static amq_status open_frame(const void *buf, size_t len,
                             const amq_options *opt, bool view,
                             amq_filter **out, amq_diag *diag) {
    static const amq_options defaults;
    amq__opened info;
    amq__obj *impl = NULL;
    amq_filter *f = NULL;
    if (out == NULL)
        return AMQ_ERR_INVALID;
    *out = NULL;
    if (opt == NULL)
        opt = &defaults;
    AMQ_RETURN_IF_ERR(
        amq__obj_open(buf, len, NULL, opt, view, &impl, &info, diag));
    set_kernel(info.type, impl);
    amq_status st = check_hasher(info.type, &info.hasher, diag);
    if (st == AMQ_OK)
        st = wrap(info.type, opt, &f);
    if (st != AMQ_OK) {
        destroy(info.type, impl);
        return st;
    }
    f->impl = impl;
    f->hasher = info.hasher;
    f->g = info.generic;
    f->view = view;
    *out = f;
    return AMQ_OK;
}

amq_status amq_filter_load(const void *buf, size_t len, const amq_options *opt,
                           amq_filter **out, amq_diag *diag) {
    return open_frame(buf, len, opt, false, out, diag);
}

amq_status amq_filter_view(const void *buf, size_t len, const amq_options *opt,
                           amq_filter **out, amq_diag *diag) {
    return open_frame(buf, len, opt, true, out, diag);
}
