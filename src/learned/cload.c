/*
 * cload.c — loading a cascade frame (layout in cframe.c and
 * docs/format.md). Order: the common frame (checksum first), the fixed
 * parameters and every range in them, the model (weights finite, the
 * isotonic table increasing, the stored id recomputed), then the cascade:
 * bin edges, histogram sums, regions (contiguous, inside the bins, n no
 * larger than the members of their bins), nested filter frames (each
 * validated by amq_filter_load, with the cascade's hasher and its region's
 * item count). Nothing is trusted before it is checked; the only
 * allocations are the model (2^dim_bits entries, which the payload must
 * hold) and the cascade (bins entries, which the payload must hold).
 */
#include <math.h>
#include <string.h>

#include "core/bits.h"
#include "core/frame.h"
#include "core/spec.h"
#include "type/ids.h"
#include "type/type.h"
#include "learned/learned.h"

#define TYPE_CASCADE AMQ__ID_cascade
/* the fixed parameters: 472 bytes in version 1, 480 (+ the plain
 * filter's bytes) in version 2 */
#define FIXED(h) ((h)->params_version == 1 ? 472u : 480u)
#define REGION_BYTES 32
#define SPEC_BYTES 96
#define RFLAG_FILTER 0x1u
#define RFLAG_ACCEPT 0x2u

typedef struct reader {
    const uint8_t *p;
    size_t len, at;
    size_t base; /* offset of p in the frame, for diagnostics */
    amq_diag *diag;
} reader;

static amq_status need(reader *r, size_t n, const char *what) {
    if (r->len - r->at < n)
        return amq__diag(r->diag, AMQ_ERR_CORRUPT, r->base + r->at,
                         "payload ends inside the %s", what);
    return AMQ_OK;
}

static amq_status bad(amq_diag *diag, size_t off, const char *what) {
    return amq__diag(diag, AMQ_ERR_CORRUPT, off, "%s", what);
}

/* ---- parameters ------------------------------------------------------------------ */

typedef struct header {
    uint32_t method, bins, nregions, accept_bin, max_accept, reject_bins, flags;
    uint64_t version, model_id, members, certify_n, tune_n, added, removed,
        stale_other, tail_members, max_stale;
    double build_seconds;
    amq_cascade_config cfg;
    char residual[SPEC_BYTES], aux[SPEC_BYTES];
    double scale, bias, platt_a, platt_b, plain_bytes;
    uint32_t iso_n, params_version;
} header;

static bool spec_ok(const uint8_t *p, char *out) {
    size_t n = strnlen((const char *)p, SPEC_BYTES);
    if (n == SPEC_BYTES)
        return false;
    for (size_t i = n; i < SPEC_BYTES; i++)
        if (p[i] != 0)
            return false;
    memcpy(out, p, n + 1);
    return amq_filter_type_find(out) != NULL;
}

static bool model_params(const uint8_t *p, header *h) {
    amq_model_config *m = &h->cfg.model;
    m->features.dim_bits = amq__get_u32(p);
    m->features.ngram_max = amq__get_u32(p + 4);
    uint32_t quant = amq__get_u32(p + 8), calib = amq__get_u32(p + 12);
    m->quantize = quant == 1;
    m->calibration = (amq_calibration)calib;
    h->scale = amq__get_f64(p + 16);
    h->bias = amq__get_f64(p + 24);
    h->platt_a = amq__get_f64(p + 32);
    h->platt_b = amq__get_f64(p + 40);
    h->iso_n = amq__get_u32(p + 48);
    m->epochs = amq__get_u32(p + 52);
    m->learning_rate = amq__get_f64(p + 56);
    m->l2 = amq__get_f64(p + 64);
    m->member_weight = amq__get_f64(p + 72);
    m->tail_weight = amq__get_f64(p + 80);
    m->seed = amq__get_u64(p + 88);
    amq_model_config chk;
    return quant <= 1 && calib <= AMQ_CALIB_ISOTONIC &&
           amq__model_config_resolve(m, &chk) == AMQ_OK &&
           chk.features.dim_bits == m->features.dim_bits &&
           chk.features.ngram_max == m->features.ngram_max && m->l2 >= 0.0 &&
           isfinite(h->scale) && h->scale > 0.0 && isfinite(h->bias) &&
           isfinite(h->platt_a) && isfinite(h->platt_b) &&
           (h->iso_n == 0 || calib == AMQ_CALIB_ISOTONIC) &&
           h->iso_n <= AMQ__ISO_MAX;
}

static void read_counters(const uint8_t *p, header *h) {
    uint32_t *u32s[7] = {&h->method,     &h->bins,       &h->nregions,
                         &h->accept_bin, &h->max_accept, &h->reject_bins,
                         &h->flags};
    for (int i = 0; i < 7; i++)
        *u32s[i] = amq__get_u32(p + 4 + 4 * i);
    uint64_t *u64s[10] = {&h->version,   &h->model_id,    &h->members,
                          &h->certify_n, &h->tune_n,      &h->added,
                          &h->removed,   &h->stale_other, &h->tail_members,
                          &h->max_stale};
    for (int i = 0; i < 10; i++)
        *u64s[i] = amq__get_u64(p + 32 + 8 * i);
}

static amq_status read_header(const amq__frame *f, header *h, amq_diag *diag) {
    const uint8_t *p = f->params;
    memset(h, 0, sizeof *h);
    if (f->params_len < 4)
        return bad(diag, 48, "cascade parameters are too short");
    h->params_version = amq__get_u32(p);
    if (h->params_version != 1 && h->params_version != 2)
        return amq__diag(diag, AMQ_ERR_VERSION, 64,
                         "cascade parameters version %u (this library reads "
                         "1 and 2)",
                         h->params_version);
    if (f->params_len < FIXED(h))
        return bad(diag, 48, "cascade parameters are too short");
    if (h->params_version >= 2) {
        h->plain_bytes = amq__get_f64(p + 472);
        if (!(h->plain_bytes >= 0.0 && h->plain_bytes < 1e300))
            return bad(diag, 64 + 472, "bad plain filter size");
    }
    read_counters(p, h);
    amq_cascade_config *k = &h->cfg;
    k->method = (amq_learned_method)h->method;
    k->eta = amq__get_f64(p + 112);
    k->fpr = amq__get_f64(p + 120);
    k->bits_per_key = amq__get_f64(p + 128);
    h->build_seconds = amq__get_f64(p + 136);
    k->aux_capacity = amq__get_u64(p + 144);
    k->aux_fpr = amq__get_f64(p + 152);
    k->tail = (amq_tail)amq__get_u32(p + 160);
    k->partition = (amq_partition)amq__get_u32(p + 164);
    k->delta = amq__get_f64(p + 168);
    k->headroom = amq__get_u32(p + 176);
    k->levels = amq__get_u32(p + 180);
    k->bins = h->bins;
    k->max_stale = h->max_stale;
    if (!spec_ok(p + 184, h->residual) || !spec_ok(p + 280, h->aux))
        return bad(diag, 64 + 184, "bad residual or buffer spec");
    if (!model_params(p + 376, h))
        return bad(diag, 64 + 376, "bad model parameters");
    return AMQ_OK;
}

static amq_status check_header(const amq__frame *f, header *h, amq_diag *diag) {
    amq_cascade_config rc;
    if (h->nregions > AMQ_CASCADE_MAX_LEVELS ||
        f->params_len != FIXED(h) + (size_t)REGION_BYTES * h->nregions)
        return bad(diag, 64, "region count disagrees with the parameters");
    if (h->bins == 0 || h->bins > AMQ_CASCADE_MAX_BINS ||
        h->reject_bins > h->accept_bin || h->accept_bin > h->max_accept ||
        h->max_accept > h->bins || (h->flags & ~7u) != 0 ||
        ((h->flags & 4u) && !(h->flags & 1u)) || h->version == 0 ||
        h->max_stale == 0 || !(h->build_seconds >= 0.0))
        return bad(diag, 68, "bins, thresholds or flags out of range");
    amq_cascade_config probe = h->cfg;
    probe.bins = probe.bins < 8 ? 8 : probe.bins; /* merged bins may be few */
    if (amq__cascade_config_resolve(&probe, &rc, NULL) != AMQ_OK ||
        rc.eta != h->cfg.eta || rc.aux_fpr != h->cfg.aux_fpr)
        return bad(diag, 64 + 112, "configuration out of range");
    return AMQ_OK;
}

/* ---- the model -------------------------------------------------------------------- */

static amq_status read_model(reader *r, const header *h, const amq__mem *mem,
                             amq_model **out) {
    amq_model *m;
    AMQ_RETURN_IF_ERR(amq__model_alloc(&h->cfg.model, mem, &m));
    size_t wb = m->q != NULL ? m->dim : (size_t)m->dim * 4;
    amq_status st =
        need(r, ((wb + 7) & ~(size_t)7) + (size_t)h->iso_n * 16, "model");
    if (st == AMQ_OK && m->q != NULL)
        memcpy(m->q, r->p + r->at, wb);
    else if (st == AMQ_OK)
        memcpy(m->w, r->p + r->at, wb);
    for (uint32_t i = 0; st == AMQ_OK && m->w != NULL && i < m->dim; i++)
        if (!isfinite(m->w[i]))
            st = bad(r->diag, r->base + r->at + 4 * (size_t)i,
                     "weight is not finite");
    r->at += (wb + 7) & ~(size_t)7;
    m->scale = h->scale;
    m->bias = h->bias;
    m->platt_a = h->platt_a;
    m->platt_b = h->platt_b;
    if (st == AMQ_OK && h->iso_n > 0) {
        m->iso_x = amq__alloc(mem, (size_t)h->iso_n * 8);
        m->iso_p = amq__alloc(mem, (size_t)h->iso_n * 8);
        m->iso_n = h->iso_n;
        st = m->iso_x && m->iso_p ? AMQ_OK : AMQ_ERR_NOMEM;
    }
    for (uint32_t i = 0; st == AMQ_OK && i < h->iso_n; i++, r->at += 16) {
        m->iso_x[i] = amq__get_f64(r->p + r->at);
        m->iso_p[i] = amq__get_f64(r->p + r->at + 8);
        bool okx =
            isfinite(m->iso_x[i]) && (i == 0 || m->iso_x[i] > m->iso_x[i - 1]);
        bool okp = m->iso_p[i] >= 0.0 && m->iso_p[i] <= 1.0 &&
                   (i == 0 || m->iso_p[i] >= m->iso_p[i - 1]);
        if (!okx || !okp)
            st = bad(r->diag, r->base + r->at, "isotonic table not monotone");
    }
    if (st == AMQ_OK) {
        amq__model_seal(m);
        if (m->id != h->model_id)
            st = bad(r->diag, 64 + 40, "model id does not match the model");
    }
    if (st != AMQ_OK) {
        amq_model_free(m);
        return st;
    }
    *out = m;
    return AMQ_OK;
}

/* ---- tables and regions ------------------------------------------------------------ */

static amq_status read_tables(reader *r, amq_cascade *c, const header *h) {
    size_t counts = (size_t)h->bins * 12;
    AMQ_RETURN_IF_ERR(
        need(r, (size_t)(h->bins - 1) * 8 + ((counts + 7) & ~(size_t)7),
             "bin tables"));
    for (uint32_t b = 0; b + 1 < h->bins; b++, r->at += 8) {
        c->edges[b] = amq__get_f64(r->p + r->at);
        if (!isfinite(c->edges[b]) || (b > 0 && c->edges[b] <= c->edges[b - 1]))
            return bad(r->diag, r->base + r->at, "bin edges not increasing");
    }
    uint32_t *cols[3] = {c->memb, c->tune, c->cert};
    const uint64_t want[3] = {h->members, h->tune_n, h->certify_n};
    for (int k = 0; k < 3; k++) {
        uint64_t sum = 0;
        for (uint32_t b = 0; b < h->bins; b++, r->at += 4)
            sum += cols[k][b] = amq__get_u32(r->p + r->at);
        if (sum != want[k])
            return bad(r->diag, r->base + r->at, "histogram sum disagrees");
    }
    r->at += ((counts + 7) & ~(size_t)7) - counts;
    return AMQ_OK;
}

static amq_status read_regions(const amq__frame *f, amq_cascade *c,
                               const header *h, amq_diag *diag) {
    uint32_t expect = h->reject_bins;
    memset(c->hold, AMQ__HOLD_NONE, h->bins);
    for (uint32_t b = 0; b < h->reject_bins; b++)
        c->hold[b] = AMQ__HOLD_REJECT;
    for (uint32_t i = 0; i < h->nregions; i++) {
        const uint8_t *q = f->params + FIXED(h) + REGION_BYTES * i;
        amq__region *g = &c->regions[i];
        g->bin_lo = amq__get_u32(q);
        g->bin_hi = amq__get_u32(q + 4);
        g->n = amq__get_u64(q + 8);
        g->stale = amq__get_u64(q + 16);
        uint32_t fl = amq__get_u32(q + 24);
        g->accept_all = (fl & RFLAG_ACCEPT) != 0;
        uint64_t held = 0;
        if (g->bin_lo != expect || g->bin_hi <= g->bin_lo ||
            g->bin_hi > h->bins || (fl & ~3u) != 0 ||
            amq__get_u32(q + 28) != 0 || (fl == (RFLAG_FILTER | RFLAG_ACCEPT)))
            return bad(diag, 64 + FIXED(h) + REGION_BYTES * i, "bad region");
        for (uint32_t b = g->bin_lo; b < g->bin_hi; b++) {
            c->hold[b] = (uint8_t)i;
            held += c->memb[b];
        }
        if (g->n > held || g->stale > g->n)
            return bad(diag, 64 + FIXED(h) + REGION_BYTES * i + 8,
                       "region count");
        expect = g->bin_hi;
    }
    if (expect != (h->nregions ? h->max_accept : h->accept_bin) ||
        (h->nregions == 0 && h->max_accept != h->accept_bin))
        return bad(diag, 64 + 20, "regions do not reach the accept threshold");
    c->nregions = h->nregions;
    return AMQ_OK;
}

static bool same_hasher(const amq_hasher *a, const amq_hasher *b) {
    return a->kind == b->kind &&
           (a->kind == AMQ_HASH_SIPHASH
                ? memcmp(a->key, b->key, AMQ_HASH_KEY_BYTES) == 0
                : a->seed == b->seed);
}

static amq_status read_filter(reader *r, const amq_cascade *c,
                              const amq_options *o, amq_filter **out) {
    AMQ_RETURN_IF_ERR(need(r, 8, "filter length"));
    uint64_t n = amq__get_u64(r->p + r->at);
    size_t at = r->at + 8;
    if (n > r->len - at || ((n + 7) & ~7ULL) > r->len - at)
        return bad(r->diag, r->base + r->at, "filter length past the payload");
    amq_diag inner = {0, ""};
    amq_status st = amq_filter_load(r->p + at, (size_t)n, o, out, &inner);
    if (st != AMQ_OK)
        return amq__diag(r->diag, st, r->base + at + inner.offset,
                         "nested filter: %s", inner.message);
    if (!same_hasher(amq_filter_hasher(*out), &c->hasher)) {
        amq_filter_free(*out);
        *out = NULL;
        return bad(r->diag, r->base + at, "nested filter has another hasher");
    }
    for (size_t i = at + n; i < at + ((n + 7) & ~7ULL); i++)
        if (r->p[i] != 0) {
            amq_filter_free(*out);
            *out = NULL;
            return bad(r->diag, r->base + i, "filter padding is not zero");
        }
    r->at = at + (size_t)((n + 7) & ~7ULL);
    return AMQ_OK;
}

static amq_status read_filters(reader *r, const amq__frame *f, amq_cascade *c,
                               const header *h) {
    amq_options o = {.allocator = &c->mem.a};
    for (uint32_t i = 0; i < c->nregions; i++) {
        amq__region *g = &c->regions[i];
        if (!(amq__get_u32(f->params + FIXED(h) + REGION_BYTES * i + 24) &
              RFLAG_FILTER))
            continue;
        AMQ_RETURN_IF_ERR(read_filter(r, c, &o, &g->f));
        if (amq_filter_items(g->f) != g->n)
            return bad(r->diag, r->base + r->at,
                       "filter items disagree with n");
    }
    if (h->flags & 1u)
        AMQ_RETURN_IF_ERR(read_filter(r, c, &o, &c->front));
    if (h->flags & 2u)
        AMQ_RETURN_IF_ERR(read_filter(r, c, &o, &c->aux));
    c->fallback = (h->flags & 4u) != 0;
    if (r->at != r->len)
        return bad(r->diag, r->base + r->at, "bytes after the last section");
    return AMQ_OK;
}

static void adopt_counters(amq_cascade *c, const header *h) {
    c->accept_bin = h->accept_bin;
    c->max_accept = h->max_accept;
    c->reject_bins = h->reject_bins;
    c->version = h->version;
    c->members = h->members;
    c->certify_n = h->certify_n;
    c->tune_n = h->tune_n;
    c->added = h->added;
    c->removed = h->removed;
    c->stale_other = h->stale_other;
    c->tail_members = h->tail_members;
    c->max_stale = h->max_stale;
    c->build_seconds = h->build_seconds;
    c->frame_seconds = h->build_seconds;
    c->plain_bytes = h->plain_bytes;
    c->params_version = h->params_version;
    memcpy(c->residual_spec, h->residual, sizeof c->residual_spec);
    memcpy(c->aux_spec, h->aux, sizeof c->aux_spec);
    c->cfg.residual = c->residual_spec;
    c->cfg.aux = c->aux_spec;
}

static amq_status load_body(const amq__frame *f, const header *h,
                            const amq__mem *mem, amq_cascade **out,
                            amq_diag *diag) {
    reader r = {f->payload, f->payload_len, 0,
                (size_t)(f->payload - f->params) + 64, diag};
    amq_model *m = NULL;
    amq_cascade *c = NULL;
    AMQ_RETURN_IF_ERR(need(&r, (size_t)h->bins * 12, "bin tables"));
    AMQ_RETURN_IF_ERR(read_model(&r, h, mem, &m));
    amq_status st =
        amq__cascade_alloc(m, h->bins, &h->cfg, &f->hasher, mem, &c);
    amq_model_free(m);
    if (st != AMQ_OK)
        return st;
    adopt_counters(c, h);
    st = read_tables(&r, c, h);
    if (st == AMQ_OK)
        st = read_regions(f, c, h, diag);
    if (st == AMQ_OK)
        st = read_filters(&r, f, c, h);
    if (st != AMQ_OK) {
        amq_cascade_free(c);
        return st;
    }
    amq__cascade_reroute(c);
    *out = c;
    return AMQ_OK;
}

/* A filter's frame is a plain cascade: what training writes when no
 * learned cascade is smaller. */
static amq_status load_plain(const uint8_t *buf, size_t len,
                             const amq_options *opt, amq_cascade **out,
                             amq_diag *diag) {
    amq_filter *flt;
    amq_cascade_config cfg;
    amq__mem mem;
    AMQ_RETURN_IF_ERR(amq_filter_load(buf, len, opt, &flt, diag));
    amq_cascade_config_init(&cfg);
    cfg.fpr = amq_filter_target_fpr(flt);
    if (!(cfg.fpr > 0.0 && cfg.fpr < 1.0))
        cfg.fpr = amq_filter_fpr_bound(flt);
    if (!(cfg.fpr > 0.0 && cfg.fpr < 1.0))
        cfg.fpr = 0.5;
    amq__mem_init(&mem, opt);
    return amq__cascade_plain(flt, &cfg, &mem, out);
}

amq_status amq_cascade_load(const uint8_t *buf, size_t len,
                            const amq_options *opt, amq_cascade **out,
                            amq_diag *diag) {
    amq__frame f;
    header h;
    amq__mem mem;
    if (out == NULL || (buf == NULL && len > 0))
        return AMQ_ERR_INVALID;
    *out = NULL;
    AMQ_RETURN_IF_ERR(amq__frame_parse(buf, len, 0, &f, diag));
    if (f.type_id != TYPE_CASCADE && amq__type_by_id(f.type_id) != NULL)
        return load_plain(buf, len, opt, out, diag);
    if (f.type_id != TYPE_CASCADE)
        return amq__frame_not(f.type_id, "a cascade", diag);
    AMQ_RETURN_IF_ERR(read_header(&f, &h, diag));
    AMQ_RETURN_IF_ERR(check_header(&f, &h, diag));
    amq__mem_init(&mem, opt);
    return load_body(&f, &h, &mem, out, diag);
}
