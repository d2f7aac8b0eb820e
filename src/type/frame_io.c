/*
 * frame_io.c — one structure object in and out of the serialization frame
 * (docs/format.md). The frame codec (core/frame.c) checks the header and
 * checksum; the type's own callbacks write and validate its parameters and
 * payload.
 */
#include <string.h>

#include "core/bits.h"
#include "core/cursor.h"
#include "core/frame.h"
#include "type/frame_io.h"

/* 16 bytes, or 24 for an intersection. */
static size_t generic_len(const amq__generic *g) {
    return AMQ__FRAME_GENERIC_PARAMS + (g->outside_bound > 0.0 ? 8 : 0);
}

static uint32_t incompat_of(const amq__generic *g) {
    return g->outside_bound > 0.0 ? AMQ__FRAME_INCOMPAT_INTERSECTION : 0;
}

static size_t params_len(const amq__type *t, const amq__obj *o,
                         const amq__generic *g) {
    amq__wr w = {NULL, 0};
    t->params_write(o, &w);
    return generic_len(g) + w.pos;
}

static size_t payload_len(const amq__type *t, const amq__obj *o) {
    return t->payload_size != NULL ? t->payload_size(o) : o->table_bytes;
}

size_t amq__obj_frame_size(const amq__type *t, const amq__obj *o,
                           const amq__generic *g) {
    return amq__frame_size(params_len(t, o, g), payload_len(t, o), NULL);
}

/* The generic fields, then the type's own. */
static void write_params(const amq__type *t, const amq__obj *o,
                         const amq__generic *g, uint8_t *params) {
    amq__put_u64(params, g->capacity);
    amq__put_f64(params + 8, g->target_fpr);
    if (g->outside_bound > 0.0)
        amq__put_f64(params + AMQ__FRAME_GENERIC_PARAMS, g->outside_bound);
    amq__wr w = {params + generic_len(g), 0};
    t->params_write(o, &w);
}

amq_status amq__obj_save(const amq__type *t, const amq__obj *o,
                         const amq_hasher *h, const amq__generic *g, void *buf,
                         size_t cap, size_t *written) {
    size_t plen = params_len(t, o, g), llen = payload_len(t, o);
    size_t total = amq__frame_size(plen, llen, NULL);
    uint8_t *params, *payload;
    if (written != NULL)
        *written = 0;
    if (total == 0 || plen > AMQ__FRAME_PARAMS_MAX)
        return AMQ_ERR_OVERFLOW;
    if (buf == NULL || cap < total)
        return AMQ_ERR_BUFFER;
    amq__frame_begin(buf, total, t->info.type_id, h, incompat_of(g), plen, llen,
                     &params, &payload);
    write_params(t, o, g, params);
    if (t->payload_write != NULL)
        t->payload_write(o, payload);
    else if (o->table_bytes != 0)
        memcpy(payload, o->table, o->table_bytes);
    amq__frame_seal(buf, total);
    if (written != NULL)
        *written = total;
    return AMQ_OK;
}

bool amq__obj_pieces(const amq__type *t, const amq__obj *o, const amq_hasher *h,
                     const amq__generic *g, uint8_t head[AMQ__FRAME_HEAD_MAX],
                     const uint8_t tail[8], amq__piece out[3]) {
    size_t plen = params_len(t, o, g), llen = o->table_bytes, off = 0;
    if (t->payload_write != NULL || t->payload_size != NULL ||
        plen > AMQ__FRAME_PARAMS_MAX)
        return false;
    size_t total = amq__frame_size(plen, llen, &off);
    if (total == 0 || off > AMQ__FRAME_HEAD_MAX)
        return false;
    uint8_t *params, *payload;
    amq__frame_begin(head, off, t->info.type_id, h, incompat_of(g), plen, llen,
                     &params, &payload);
    write_params(t, o, g, params);
    out[0] = (amq__piece){head, off};
    out[1] = (amq__piece){o->table, llen};
    out[2] = (amq__piece){tail, total - 8 - off - llen};
    return true;
}

/* The generic fields: capacity, a target rate in [0, 1), and for an
 * intersection a bound in (0, 1]. */
static amq_status read_generic(const amq__frame *fr, amq__generic *g,
                               amq_diag *diag) {
    bool inter = (fr->incompat & AMQ__FRAME_INCOMPAT_INTERSECTION) != 0;
    size_t need = AMQ__FRAME_GENERIC_PARAMS + (inter ? 8 : 0);
    if (fr->params_len < need)
        return amq__diag(diag, AMQ_ERR_CORRUPT, AMQ__FRAME_OFF_PARAMS_LEN,
                         "parameter block too short");
    g->capacity = amq__get_u64(fr->params);
    g->target_fpr = amq__get_f64(fr->params + 8);
    if (!(g->target_fpr >= 0.0 && g->target_fpr < 1.0))
        return amq__diag(diag, AMQ_ERR_CORRUPT, AMQ__FRAME_OFF_TARGET_FPR,
                         "target false-positive rate out of range");
    g->outside_bound =
        inter ? amq__get_f64(fr->params + AMQ__FRAME_GENERIC_PARAMS) : 0.0;
    if (inter && !(g->outside_bound > 0.0 && g->outside_bound <= 1.0))
        return amq__diag(diag, AMQ_ERR_CORRUPT, AMQ__FRAME_OFF_TYPE_PARAMS,
                         "intersection bound out of range");
    return AMQ_OK;
}

amq_status amq__obj_open(const void *buf, size_t len, const amq__type *want,
                         const amq_options *opt, bool view, amq__obj **out,
                         amq__opened *info, amq_diag *diag) {
    amq__frame fr;
    amq__rd rd;
    amq_options o;
    amq__generic g;
    *out = NULL;
    if (view && ((uintptr_t)buf & 7u) != 0)
        return amq__diag(diag, AMQ_ERR_ALIGN, 0,
                         "a view needs an 8-byte aligned buffer");
    AMQ_RETURN_IF_ERR(amq__frame_parse(
        buf, len, AMQ__FRAME_INCOMPAT_INTERSECTION, &fr, diag));
    const amq__type *t = amq__type_by_id(fr.type_id);
    if (want != NULL && t != want)
        return amq__diag(diag, AMQ_ERR_INCOMPATIBLE, AMQ__FRAME_OFF_TYPE,
                         "frame holds type id %u, not %s", fr.type_id,
                         want->info.name);
    if (t == NULL)
        return amq__frame_not(fr.type_id, "a filter", diag);
    AMQ_RETURN_IF_ERR(read_generic(&fr, &g, diag));
    if (g.outside_bound > 0.0 && !(t->info.caps & AMQ_CAP_INTERSECT))
        return amq__diag(diag, AMQ_ERR_CORRUPT, AMQ__FRAME_OFF_INCOMPAT,
                         "%s cannot be an intersection", t->info.name);
    memset(&o, 0, sizeof o);
    if (opt != NULL)
        o = *opt;
    o.hash = fr.hasher.kind;
    o.hash_seed = fr.hasher.seed;
    o.hash_key = fr.hasher.key;
    /* The type validates its parameters before it allocates anything. */
    size_t gl = generic_len(&g);
    amq__rd_init(&rd, fr.params + gl, fr.params_len - gl,
                 AMQ__FRAME_OFF_PARAMS + gl, t->info.name, diag);
    rd.payload_at = (size_t)(fr.payload - (const uint8_t *)buf);
    AMQ_RETURN_IF_ERR(
        t->load(t, &rd, fr.payload, fr.payload_len, view, &o, out));
    info->type = t;
    info->hasher = fr.hasher;
    info->generic = g;
    return AMQ_OK;
}
