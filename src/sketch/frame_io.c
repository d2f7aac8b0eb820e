/*
 * frame_io.c — the serialization frame for the typed sketches (amq_cms,
 * amq_topk), so a program that drives them through sketch.h — the Redis
 * module's CMS.* and TOPK.*, which need increments by any amount, weighted
 * merges and the named top-k list the generic interface does not offer —
 * can still save and load them.
 *
 * The bytes are exactly the frame amq_filter_save writes for a "cms" or
 * "topk" filter (docs/format.md) built from explicit parameters: generic
 * block capacity 0 and target fpr 0, then the type's own parameters and
 * payload; type/frame_io.c writes and opens both. So a typed
 * sketch saved here opens with amq_filter_load (and `amq info`), and a
 * frame saved from a generic "cms"/"topk" filter opens here.
 *
 *   amq_cms  ──save──►  [header | generic 0,0 | cms params | counters | xxh64]
 *            ◄──load──  (the frame codec checks everything, then the type's
 *                        load checks its parameters against the payload)
 *
 * Failure modes: a frame of another type is AMQ_ERR_INCOMPATIBLE; every
 * other refusal is the frame codec's or the type's own (AMQ_ERR_CORRUPT,
 * AMQ_ERR_CHECKSUM, AMQ_ERR_VERSION), made before anything is allocated.
 */
#include "amq/sketch.h"
#include "type/frame_io.h"

/* A typed sketch has no target: the generic fields are zero. */
static const amq__generic no_target;

static amq_status save(const amq__type *t, const amq__obj *o,
                       const amq_hasher *h, void *buf, size_t cap,
                       size_t *written) {
    if (written != NULL)
        *written = 0;
    if (h == NULL)
        return AMQ_ERR_INVALID;
    return amq__obj_save(t, o, h, &no_target, buf, cap, written);
}

/* Open a frame of type t only, with the caller's allocator and the
 * frame's hasher. */
static amq_status load(const amq__type *t, const void *buf, size_t len,
                       const amq_options *opt, amq__obj **out,
                       amq_hasher *hasher, amq_diag *diag) {
    amq__opened info;
    if (out == NULL)
        return AMQ_ERR_INVALID;
    *out = NULL;
    if (buf == NULL)
        return AMQ_ERR_INVALID;
    AMQ_RETURN_IF_ERR(amq__obj_open(buf, len, t, opt, false, out, &info, diag));
    if (hasher != NULL)
        *hasher = info.hasher;
    return AMQ_OK;
}

/* Every typed structure starts with its amq__obj header. */
static const amq__obj *obj(const void *p) { return p; }

size_t amq_cms_serialized_size(const amq_cms *c) {
    return amq__obj_frame_size(&amq__type_cms, obj(c), &no_target);
}

amq_status amq_cms_save(const amq_cms *c, const amq_hasher *hasher, void *buf,
                        size_t cap, size_t *written) {
    if (c == NULL)
        return AMQ_ERR_INVALID;
    return save(&amq__type_cms, obj(c), hasher, buf, cap, written);
}

amq_status amq_cms_load(const void *buf, size_t len, const amq_options *opt,
                        amq_cms **out, amq_hasher *hasher, amq_diag *diag) {
    return load(&amq__type_cms, buf, len, opt, (amq__obj **)out, hasher, diag);
}

size_t amq_topk_serialized_size(const amq_topk *t) {
    return amq__obj_frame_size(&amq__type_topk, obj(t), &no_target);
}

amq_status amq_topk_save(const amq_topk *t, void *buf, size_t cap,
                         size_t *written) {
    amq_hasher h;
    if (t == NULL)
        return AMQ_ERR_INVALID;
    amq_topk_hasher(t, &h);
    return save(&amq__type_topk, obj(t), &h, buf, cap, written);
}

amq_status amq_topk_load(const void *buf, size_t len, const amq_options *opt,
                         amq_topk **out, amq_diag *diag) {
    return load(&amq__type_topk, buf, len, opt, (amq__obj **)out, NULL, diag);
}
