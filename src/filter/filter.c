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
 * serialization frame. The frame's parameter block starts with two generic
 * fields (capacity u64, target fpr f64) followed by the type's own block.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/bits.h"
#include "core/frame.h"
#include "core/mem.h"
#include "filter/make.h"
#include "maplet/ops.h"


struct amq_filter {
    const amq__type *type;
    amq__obj *impl;
    amq__mem mem;
    amq_hasher hasher;
    uint64_t capacity;
    double target_fpr;
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

amq_status amq__filter_lookup(const char *spec, amq__spec *s,
                              const amq__type **t, amq_diag *diag) {
    AMQ_RETURN_IF_ERR(amq__spec_parse(spec, s, diag));
    *t = amq__type_by_name(s->name);
    if (*t == NULL)
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "unknown structure '%s' (see amq help types)",
                         s->name);
    return AMQ_OK;
}

/* The structure behind a new filter: created empty for a target, or (a
 * static type) built from every key's hash. The spec is a copy: its keys
 * are marked as the type reads them. */
static amq_status make_impl(amq_filter *f, amq__spec s,
                            const amq__make *a, const amq_options *opt,
                            amq_diag *diag) {
    const amq__type *t = f->type;
    amq_status st;
    if (t->build != NULL && a->values != NULL)
        st = t->maplet->build(t, &s, a->hashes, a->values, a->n, a->fpr, opt,
                              &f->impl, diag);
    else if (t->build != NULL)
        st = t->build(t, &s, a->hashes, a->n, a->fpr, opt, &f->impl, diag);
    else
        st = t->create(t, &s, a->capacity, a->fpr, opt, &f->impl, diag);
    if (st == AMQ_OK && (st = amq__spec_finish(&s, diag)) != AMQ_OK)
        destroy(t, f->impl);
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
 * maplet given values: each pair put). */
static amq_status fill(amq_filter *f, const amq__make *a, amq_diag *diag) {
    size_t done = 0;
    amq_status st = AMQ_OK;
    if (a->values != NULL)
        st = amq_maplet_put_batch(f, a->hashes, a->values, a->n, &done);
    else
        st = amq_filter_add_batch(f, a->hashes, a->n, &done);
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
        st = make_impl(f, *s, &a, opt, diag);
    if (st != AMQ_OK) {
        amq__free(&f->mem, f, sizeof *f);
        return st;
    }
    f->capacity = t->build != NULL ? a.n : a.capacity;
    f->target_fpr = a.fpr;
    if (t->build == NULL && a.hashes != NULL &&
        (st = fill(f, &a, diag)) != AMQ_OK) {
        amq_filter_free(f);
        return st;
    }
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

amq_status amq_filter_build(const char *spec, const uint64_t *hashes,
                            size_t n, double fpr, const amq_options *opt,
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
    return amq__hasher_from_options(opt, t->info.default_hash, out);
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

amq_status amq_filter_add_hash(amq_filter *f, uint64_t hash) {
    if (f->view)
        return AMQ_ERR_READONLY;
    if (f->type->add == NULL)
        return AMQ_ERR_UNSUPPORTED;
    return f->type->add(f->impl, hash);
}

amq_status amq_filter_add_batch(amq_filter *f, const uint64_t *hashes,
                                size_t n, size_t *done) {
    size_t i = 0;
    amq_status st = AMQ_OK;
    if (f == NULL || (hashes == NULL && n != 0))
        st = AMQ_ERR_INVALID;
    else if (f->view)
        st = AMQ_ERR_READONLY;
    else if (f->type->add == NULL)
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
    return f->type->contains(f->impl, hash);
}

bool amq_filter_contains(const amq_filter *f, const void *key, size_t len) {
    if (key == NULL && len != 0)
        return false;
    return f->type->contains(f->impl, amq_hash64(&f->hasher, key, len));
}

void amq_filter_contains_batch(const amq_filter *f, const uint64_t *hashes,
                               size_t n, uint8_t *out) {
    if (f->type->contains_batch != NULL) {
        if (n != 0)
            f->type->contains_batch(f->impl, hashes, n, out);
        return;
    }
    for (size_t i = 0; i < n; i++)
        out[i] = f->type->contains(f->impl, hashes[i]);
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
    return dst->type->merge(dst->impl, src->impl, op);
}

amq_status amq_filter_union(amq_filter *dst, const amq_filter *src) {
    return merge(dst, src, AMQ__UNION, AMQ_CAP_UNION);
}

amq_status amq_filter_intersect(amq_filter *dst, const amq_filter *src) {
    return merge(dst, src, AMQ__INTERSECT, AMQ_CAP_INTERSECT);
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
    return f->type->caps != NULL ? f->type->caps(f->impl) : f->type->info.caps;
}
uint64_t amq_filter_items(const amq_filter *f) { return f->impl->items; }
uint64_t amq_filter_capacity(const amq_filter *f) { return f->capacity; }
size_t amq_filter_size_bytes(const amq_filter *f) {
    return f->impl->table_bytes;
}
double amq_filter_bits_per_key(const amq_filter *f) {
    uint64_t n = amq_filter_items(f);
    return 8.0 * (double)amq_filter_size_bytes(f) / (double)(n ? n : 1);
}
double amq_filter_fpr_bound(const amq_filter *f) {
    return f->type->fpr_bound(f->impl);
}
double amq_filter_target_fpr(const amq_filter *f) { return f->target_fpr; }
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
    return amq__spec_finish(&s, NULL);
}

amq_status amq_curve_fpr(const char *spec, double bits_per_key, double *fpr) {
    return curve(spec, bits_per_key, fpr, false);
}

amq_status amq_curve_bits(const char *spec, double fpr, double *bits_per_key) {
    return curve(spec, fpr, bits_per_key, true);
}

/* ---- serialization ----------------------------------------------------- */

static size_t params_len(const amq_filter *f) {
    amq__wr w = {NULL, 0};
    f->type->params_write(f->impl, &w);
    return AMQ__FRAME_GENERIC_PARAMS + w.pos;
}

static size_t payload_len(const amq_filter *f) {
    return f->type->payload_size != NULL ? f->type->payload_size(f->impl)
                                         : f->impl->table_bytes;
}

static void payload_write(const amq_filter *f, uint8_t *dst) {
    if (f->type->payload_write != NULL)
        f->type->payload_write(f->impl, dst);
    else if (f->impl->table_bytes != 0)
        memcpy(dst, f->impl->table, f->impl->table_bytes);
}

size_t amq_filter_serialized_size(const amq_filter *f) {
    return amq__frame_size(params_len(f), payload_len(f), NULL);
}

amq_status amq_filter_save(const amq_filter *f, void *buf, size_t cap,
                           size_t *written) {
    size_t plen = params_len(f), llen = payload_len(f);
    size_t total = amq__frame_size(plen, llen, NULL);
    uint8_t *params, *payload;
    if (written != NULL)
        *written = 0;
    if (total == 0 || plen > AMQ__FRAME_PARAMS_MAX)
        return AMQ_ERR_OVERFLOW;
    if (buf == NULL || cap < total)
        return AMQ_ERR_BUFFER;
    amq__frame_begin(buf, total, f->type->info.type_id, &f->hasher, plen, llen,
                     &params, &payload);
    amq__put_u64(params, f->capacity);
    amq__put_f64(params + 8, f->target_fpr);
    amq__wr w = {params + AMQ__FRAME_GENERIC_PARAMS, 0};
    f->type->params_write(f->impl, &w);
    payload_write(f, payload);
    amq__frame_seal(buf, total);
    if (written != NULL)
        *written = total;
    return AMQ_OK;
}

static amq_status check_generic(const amq__frame *fr, amq_diag *diag) {
    double fpr;
    if (fr->params_len < AMQ__FRAME_GENERIC_PARAMS)
        return amq__diag(diag, AMQ_ERR_CORRUPT, AMQ__FRAME_OFF_PARAMS_LEN,
                         "parameter block too short");
    fpr = amq__get_f64(fr->params + 8);
    if (!(fpr >= 0.0 && fpr < 1.0))
        return amq__diag(diag, AMQ_ERR_CORRUPT, AMQ__FRAME_OFF_TARGET_FPR,
                         "target false-positive rate out of range");
    return AMQ_OK;
}

static amq_status open_frame(const void *buf, size_t len,
                             const amq_options *opt, bool view,
                             amq_filter **out, amq_diag *diag) {
    static const amq_options defaults;
    amq__frame fr;
    amq_filter *f = NULL;
    if (out == NULL)
        return AMQ_ERR_INVALID;
    *out = NULL;
    if (opt == NULL)
        opt = &defaults;
    if (view && ((uintptr_t)buf & 7u) != 0)
        return amq__diag(diag, AMQ_ERR_ALIGN, 0,
                         "a view needs an 8-byte aligned buffer");
    AMQ_RETURN_IF_ERR(amq__frame_parse(buf, len, &fr, diag));
    const amq__type *t = amq__type_by_id(fr.type_id);
    if (t == NULL)
        return amq__diag(diag, AMQ_ERR_VERSION, AMQ__FRAME_OFF_TYPE,
                         "unknown structure type id %u (newer amq?)",
                         fr.type_id);
    AMQ_RETURN_IF_ERR(check_generic(&fr, diag));
    /* The type validates its parameters before it allocates anything. */
    amq__obj *impl = NULL;
    amq__rd rd;
    amq__rd_init(&rd, fr.params + AMQ__FRAME_GENERIC_PARAMS,
                 fr.params_len - AMQ__FRAME_GENERIC_PARAMS,
                 AMQ__FRAME_OFF_TYPE_PARAMS, t->info.name, diag);
    rd.payload_at = (size_t)(fr.payload - (const uint8_t *)buf);
    AMQ_RETURN_IF_ERR(
        t->load(t, &rd, fr.payload, fr.payload_len, view, opt, &impl));
    amq_status st = wrap(t, opt, &f);
    if (st != AMQ_OK) {
        destroy(t, impl);
        return st;
    }
    f->impl = impl;
    f->hasher = fr.hasher;
    f->capacity = amq__get_u64(fr.params);
    f->target_fpr = amq__get_f64(fr.params + 8);
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
