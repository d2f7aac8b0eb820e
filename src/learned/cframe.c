/*
 * cframe.c — the cascade in the common frame (docs/format.md, type 302).
 *
 *   header (64)  the common frame header; its hasher is the residuals'
 *   params       fixed block (480 bytes: counters, targets, specs, the
 *                model's shape and calibration constants) + 32 bytes per
 *                region (bins, n, stale, flags)
 *   payload      8-byte aligned sections, in this order:
 *                  weights   2^dim_bits float32, or int8
 *                  isotonic  iso_n x (f64 start, f64 probability)
 *                  edges     bins - 1 f64, strictly increasing
 *                  counts    members, tune, certify per bin: 3 x bins u32
 *                  filters   each region's filter, then the initial filter
 *                            (sandwich), then the insert buffer: u64 length
 *                            + a complete amq filter frame
 *   checksum     XXH64 of everything before it
 *
 * Routes are not stored: they follow from the regions' bin ranges and the
 * reject tail, and are rebuilt on load. Loading checks every field against
 * every other (ranges, sums of the histograms against the sample sizes,
 * each filter's item count against its region's n, the model id against
 * the weights it names, the filters' hashers against the frame's) before
 * a cascade exists; nested filter frames are validated by amq_filter_load.
 */
#include <math.h>
#include <string.h>

#include "core/bits.h"
#include "core/frame.h"
#include "core/spec.h"
#include "type/ids.h"
#include "learned/learned.h"

#define TYPE_CASCADE AMQ__ID_cascade
#define PARAMS_VERSION 2
/* version 1 frames (472 bytes, no plain size) save back as they came */
#define FIXED(c) ((c)->params_version == 1 ? 472u : 480u)
#define REGION_BYTES 32
#define SPEC_BYTES 96
#define FLAG_FRONT 0x1u
#define FLAG_AUX 0x2u
#define FLAG_FALLBACK 0x4u
#define RFLAG_FILTER 0x1u
#define RFLAG_ACCEPT 0x2u

static size_t pad8(size_t n) { return (n + 7) & ~(size_t)7; }

static size_t weights_bytes(const amq_model *m) {
    return pad8(m->q != NULL ? m->dim : (size_t)m->dim * 4);
}

static size_t filter_bytes(const amq_filter *f) {
    return f == NULL ? 0 : 8 + pad8(amq_filter_serialized_size(f));
}

static size_t payload_size(const amq_cascade *c) {
    size_t n = weights_bytes(c->model) + (size_t)c->model->iso_n * 16 +
               (size_t)(c->bins - 1) * 8 + pad8((size_t)c->bins * 12);
    for (uint32_t r = 0; r < c->nregions; r++)
        n += filter_bytes(c->regions[r].f);
    return n + filter_bytes(c->front) + filter_bytes(c->aux);
}

size_t amq_cascade_save_size(const amq_cascade *c) {
    if (c == NULL)
        return 0;
    if (c->model == NULL) /* a plain filter is saved as its own frame */
        return amq_filter_serialized_size(c->regions[0].f);
    return amq__frame_size(FIXED(c) + REGION_BYTES * c->nregions,
                           payload_size(c), NULL);
}

/* ---- writing --------------------------------------------------------------------- */

static void put_spec(uint8_t *p, const char *s) {
    memset(p, 0, SPEC_BYTES);
    memcpy(p, s, strnlen(s, SPEC_BYTES - 1));
}

static void write_model_params(const amq_model *m, uint8_t *p) {
    const amq_model_config *k = &m->cfg;
    amq__put_u32(p, k->features.dim_bits);
    amq__put_u32(p + 4, k->features.ngram_max);
    amq__put_u32(p + 8, k->quantize ? 1 : 0);
    amq__put_u32(p + 12, (uint32_t)k->calibration);
    amq__put_f64(p + 16, m->scale);
    amq__put_f64(p + 24, m->bias);
    amq__put_f64(p + 32, m->platt_a);
    amq__put_f64(p + 40, m->platt_b);
    amq__put_u32(p + 48, m->iso_n);
    amq__put_u32(p + 52, k->epochs);
    amq__put_f64(p + 56, k->learning_rate);
    amq__put_f64(p + 64, k->l2);
    amq__put_f64(p + 72, k->member_weight);
    amq__put_f64(p + 80, k->tail_weight);
    amq__put_u64(p + 88, k->seed);
}

static void write_params(const amq_cascade *c, uint8_t *p) {
    const amq_cascade_config *k = &c->cfg;
    uint32_t flags = (c->front ? FLAG_FRONT : 0) | (c->aux ? FLAG_AUX : 0) |
                     (c->fallback ? FLAG_FALLBACK : 0);
    const uint32_t u32s[8] = {c->params_version == 1 ? 1u : PARAMS_VERSION,
                              (uint32_t)k->method,
                              c->bins,
                              c->nregions,
                              c->accept_bin,
                              c->max_accept,
                              c->reject_bins,
                              flags};
    for (int i = 0; i < 8; i++)
        amq__put_u32(p + 4 * i, u32s[i]);
    const uint64_t u64s[10] = {c->version,   c->model->id,   c->members,
                               c->certify_n, c->tune_n,      c->added,
                               c->removed,   c->stale_other, c->tail_members,
                               c->max_stale};
    for (int i = 0; i < 10; i++)
        amq__put_u64(p + 32 + 8 * i, u64s[i]);
    amq__put_f64(p + 112, k->eta);
    amq__put_f64(p + 120, k->fpr);
    amq__put_f64(p + 128, k->bits_per_key);
    amq__put_f64(p + 136, c->frame_seconds); /* not the training's time */
    amq__put_u64(p + 144, k->aux_capacity);
    amq__put_f64(p + 152, k->aux_fpr);
    amq__put_u32(p + 160, (uint32_t)k->tail);
    amq__put_u32(p + 164, (uint32_t)k->partition);
    amq__put_f64(p + 168, k->delta);
    amq__put_u32(p + 176, k->headroom);
    amq__put_u32(p + 180, k->levels);
    put_spec(p + 184, c->residual_spec);
    put_spec(p + 280, c->aux_spec);
    write_model_params(c->model, p + 376);
    if (c->params_version != 1)
        amq__put_f64(p + 472, c->plain_bytes);
    for (uint32_t r = 0; r < c->nregions; r++) {
        const amq__region *g = &c->regions[r];
        uint8_t *q = p + FIXED(c) + REGION_BYTES * r;
        amq__put_u32(q, g->bin_lo);
        amq__put_u32(q + 4, g->bin_hi);
        amq__put_u64(q + 8, g->n);
        amq__put_u64(q + 16, g->stale);
        amq__put_u32(q + 24, (g->f ? RFLAG_FILTER : 0) |
                                 (g->accept_all ? RFLAG_ACCEPT : 0));
    }
}

static uint8_t *write_filter(const amq_filter *f, uint8_t *p) {
    if (f == NULL)
        return p;
    size_t n = amq_filter_serialized_size(f), w = 0;
    amq__put_u64(p, n);
    (void)amq_filter_save(f, p + 8, n, &w);
    return p + 8 + pad8(n);
}

static void write_payload(const amq_cascade *c, uint8_t *p) {
    const amq_model *m = c->model;
    if (m->q != NULL)
        memcpy(p, m->q, m->dim);
    else
        memcpy(p, m->w, (size_t)m->dim * 4);
    p += weights_bytes(m);
    for (uint32_t i = 0; i < m->iso_n; i++, p += 16) {
        amq__put_f64(p, m->iso_x[i]);
        amq__put_f64(p + 8, m->iso_p[i]);
    }
    for (uint32_t b = 0; b + 1 < c->bins; b++, p += 8)
        amq__put_f64(p, c->edges[b]);
    const uint32_t *cols[3] = {c->memb, c->tune, c->cert};
    for (int k = 0; k < 3; k++)
        for (uint32_t b = 0; b < c->bins; b++, p += 4)
            amq__put_u32(p, cols[k][b]);
    p += pad8((size_t)c->bins * 12) - (size_t)c->bins * 12;
    for (uint32_t r = 0; r < c->nregions; r++)
        p = write_filter(c->regions[r].f, p);
    p = write_filter(c->front, p);
    (void)write_filter(c->aux, p);
}

amq_status amq_cascade_save(const amq_cascade *c, uint8_t *buf, size_t cap,
                            size_t *len) {
    if (c == NULL || len == NULL)
        return AMQ_ERR_INVALID;
    if (c->model == NULL)
        return amq_filter_save(c->regions[0].f, buf, cap, len);
    size_t plen = FIXED(c) + REGION_BYTES * c->nregions, total;
    total = amq__frame_size(plen, payload_size(c), NULL);
    *len = total;
    if (total == 0)
        return AMQ_ERR_OVERFLOW;
    if (buf == NULL || cap < total)
        return AMQ_ERR_BUFFER;
    uint8_t *params, *payload;
    amq__frame_begin(buf, total, TYPE_CASCADE, &c->hasher, 0, plen,
                     payload_size(c), &params, &payload);
    write_params(c, params);
    write_payload(c, payload);
    amq__frame_seal(buf, total);
    return AMQ_OK;
}
