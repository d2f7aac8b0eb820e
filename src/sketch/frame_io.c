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
 * payload, written and validated by the type's own callbacks. So a typed
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
#include <string.h>

#include "amq/sketch.h"
#include "core/bits.h"
#include "core/cursor.h"
#include "core/frame.h"
#include "filter/type.h"

static size_t params_len(const amq__type *t, const amq__obj *o) {
    amq__wr w = {NULL, 0};
    t->params_write(o, &w);
    return AMQ__FRAME_GENERIC_PARAMS + w.pos;
}

static size_t payload_len(const amq__type *t, const amq__obj *o) {
    return t->payload_size != NULL ? t->payload_size(o) : o->table_bytes;
}

static size_t frame_len(const amq__type *t, const amq__obj *o) {
    return amq__frame_size(params_len(t, o), payload_len(t, o), NULL);
}

static amq_status save(const amq__type *t, const amq__obj *o,
                       const amq_hasher *h, void *buf, size_t cap,
                       size_t *written) {
    size_t plen = params_len(t, o), llen = payload_len(t, o);
    size_t total = amq__frame_size(plen, llen, NULL);
    uint8_t *params, *payload;
    if (written != NULL)
        *written = 0;
    if (h == NULL)
        return AMQ_ERR_INVALID;
    if (total == 0 || plen > AMQ__FRAME_PARAMS_MAX)
        return AMQ_ERR_OVERFLOW;
    if (buf == NULL || cap < total)
        return AMQ_ERR_BUFFER;
    amq__frame_begin(buf, total, t->info.type_id, h, plen, llen, &params,
                     &payload);
    amq__put_u64(params, 0);
    amq__put_f64(params + 8, 0.0);
    amq__wr w = {params + AMQ__FRAME_GENERIC_PARAMS, 0};
    t->params_write(o, &w);
    if (t->payload_write != NULL)
        t->payload_write(o, payload);
    else if (o->table_bytes != 0)
        memcpy(payload, o->table, o->table_bytes);
    amq__frame_seal(buf, total);
    if (written != NULL)
        *written = total;
    return AMQ_OK;
}

/* Parse the frame, require type t, and let the type load it with the
 * caller's allocator and the frame's hasher. */
static amq_status load(const amq__type *t, const void *buf, size_t len,
                       const amq_options *opt, amq__obj **out,
                       amq_hasher *hasher, amq_diag *diag) {
    amq__frame fr;
    amq__rd rd;
    amq_options o;
    if (out == NULL)
        return AMQ_ERR_INVALID;
    *out = NULL;
    if (buf == NULL)
        return AMQ_ERR_INVALID;
    AMQ_RETURN_IF_ERR(amq__frame_parse(buf, len, &fr, diag));
    if (fr.type_id != t->info.type_id)
        return amq__diag(diag, AMQ_ERR_INCOMPATIBLE, AMQ__FRAME_OFF_TYPE,
                         "frame holds type id %u, not %s", fr.type_id,
                         t->info.name);
    if (fr.params_len < AMQ__FRAME_GENERIC_PARAMS)
        return amq__diag(diag, AMQ_ERR_CORRUPT, AMQ__FRAME_OFF_PARAMS_LEN,
                         "parameter block too short");
    memset(&o, 0, sizeof o);
    if (opt != NULL)
        o = *opt;
    o.hash = fr.hasher.kind;
    o.hash_seed = fr.hasher.seed;
    o.hash_key = fr.hasher.key;
    amq__rd_init(&rd, fr.params + AMQ__FRAME_GENERIC_PARAMS,
                 fr.params_len - AMQ__FRAME_GENERIC_PARAMS,
                 AMQ__FRAME_OFF_TYPE_PARAMS, t->info.name, diag);
    rd.payload_at = (size_t)(fr.payload - (const uint8_t *)buf);
    AMQ_RETURN_IF_ERR(
        t->load(t, &rd, fr.payload, fr.payload_len, false, &o, out));
    if (hasher != NULL)
        *hasher = fr.hasher;
    return AMQ_OK;
}

/* Every typed structure starts with its amq__obj header. */
static const amq__obj *obj(const void *p) { return p; }

size_t amq_cms_serialized_size(const amq_cms *c) {
    return frame_len(&amq__type_cms, obj(c));
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
    return frame_len(&amq__type_topk, obj(t));
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
