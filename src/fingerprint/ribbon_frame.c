/*
 * ribbon_frame.c — "ribbon" in the generic interface, and its frames
 * (version 1, standard Ribbon from before bumping, and version 2, the
 * coefficients by a second mix, still load and save back unchanged;
 * version 3, new filters, has version 2's layout).
 */
#include <math.h>
#include <string.h>

#include "core/frame.h"
#include "core/sort.h"
#include "fingerprint/ribbon_impl.h"
#include "type/type.h"

/* ---- the generic interface ---------------------------------------------- */

static amq_status spec_shape(amq__spec *spec, unsigned *band, bool *bump,
                             amq_diag *diag) {
    uint64_t w = 64, b = 1;
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "w", 64, 128, &w, NULL, diag));
    if (w != 64 && w != 128)
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "ribbon: w=%llu; the band is 64 or 128 wide",
                         (unsigned long long)w);
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "bump", 0, 1, &b, NULL, diag));
    *band = (unsigned)w;
    *bump = b != 0;
    return AMQ_OK;
}

static amq_status spec_bits(amq__spec *spec, double fpr, uint32_t *bits64,
                            amq_diag *diag) {
    double bits = 0;
    bool found;
    AMQ_RETURN_IF_ERR(
        amq__spec_f64(spec, "bits", 1.0, 32.0, &bits, &found, diag));
    if (found) {
        *bits64 = (uint32_t)floor(bits * 64 + 0.5);
        double r = *bits64 / 64.0;
        if (fpr != 0.0 && amq__rb_mixed_fpr(r) > fpr)
            return amq__diag(diag, AMQ_ERR_INVALID, 0,
                             "ribbon:bits=%g gives a false-positive rate of "
                             "%g, above the target %g",
                             r, amq__rb_mixed_fpr(r), fpr);
        return AMQ_OK;
    }
    if (fpr == 0.0)
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "ribbon needs a target fpr or bits=B (1 to 32)");
    double b = amq_ribbon_bits_for(fpr);
    if (b == 0)
        return amq__diag(diag, AMQ_ERR_INVALID, 0,
                         "ribbon: fpr %g needs more than 32 bits per key", fpr);
    *bits64 = (uint32_t)(b * 64);
    return AMQ_OK;
}

double amq_ribbon_bits_for(double fpr) {
    if (!(fpr > 0.0 && fpr < 1.0))
        return 0;
    double b = ceil(amq__rb_bits_for(fpr) * 64) / 64;
    return b > 32 ? 0 : b < 1 ? 1 : b;
}

static amq_status t_build(const amq__type *self, amq__spec *spec,
                          const uint64_t *h, size_t n, double fpr,
                          const amq_options *opt, amq__obj **out,
                          amq_diag *diag) {
    uint32_t bits64 = 0;
    unsigned band = 64;
    bool bump = true;
    amq_ribbon *f;
    (void)self;
    AMQ_RETURN_IF_ERR(spec_bits(spec, fpr, &bits64, diag));
    AMQ_RETURN_IF_ERR(spec_shape(spec, &band, &bump, diag));
    amq_status st = amq__rb_build(h, n, bits64, band, bump, opt, &f);
    if (st == AMQ_ERR_FULL)
        return amq__diag(diag, st, 0,
                         "ribbon: %zu keys did not band in %d "
                         "attempts",
                         n, AMQ_STATIC_MAX_ATTEMPTS);
    AMQ_RETURN_IF_ERR(st);
    *out = &f->o;
    return AMQ_OK;
}

/* The type's query, for a caller holding the descriptor and the object
 * (the static maplet's member): the kernel rb_choose picked. */
static bool rb_contains(const amq__obj *o, uint64_t h) {
    return o->contains(o, h);
}

/* Exact: computed from the layers and codes at build and load (0 when
 * empty). */
static double rb_fpr_bound(const amq__obj *o) {
    return ((const amq_ribbon *)o)->fpr;
}

static size_t t_describe(const amq__obj *o, char *buf, size_t cap) {
    const amq_ribbon *f = (const amq_ribbon *)o;
    char bits[AMQ_REAL_TEXT_MAX];
    return amq__describe(buf, cap, "bits=%s,w=%u%s",
                         amq_real_text(f->bits64 / 64.0, bits), f->band,
                         f->bump ? "" : ",bump=0");
}

static amq_status t_curve(const amq__type *self, amq__spec *spec, double x,
                          bool inverse, double *out, amq_diag *diag) {
    unsigned band = 64;
    bool bump = true;
    double bits = 0, rho, mu;
    (void)self;
    AMQ_RETURN_IF_ERR(spec_shape(spec, &band, &bump, diag));
    /* bits= names a point of the curve, not its shape: accepted, unused. */
    AMQ_RETURN_IF_ERR(
        amq__spec_f64(spec, "bits", 1.0, 32.0, &bits, NULL, diag));
    amq__rb_curve_shape(band, bump, &rho, &mu);
    *out = inverse ? amq__rb_bits_for(x) * rho + mu
                   : amq__rb_mixed_fpr((x - mu) / rho);
    return AMQ_OK;
}

/* ---- frames ---------------------------------------------------------------
 *
 * Version 1 (standard Ribbon before bumping; still loaded and saved back
 * as it came), 40 bytes: seed u64 | items u64 | blocks u64 | r u32 |
 * upper u32 | bits64 u32 | band u32.
 *
 * Versions 2 and 3, 48 + 24 L bytes (never 40): version u32 | band u32 |
 * bits64 u32 | r u32 | items u64 | layers L u32 (0..8) | flags u32 (bit 0:
 * bumped) | bucket u32 (B) | t1 u16 | t2 u16 | reserved u64 = 0; then per
 * layer: seed u64 | blocks u64
 * | upper u32 | reserved u32 = 0. Standard filters have B = t1 = t2 = 0
 * and L <= 1. The payload: every layer's solution words (u64, block by
 * block), then the codes of layers 0..L-2 (u64 words, bucket k at bits
 * 2(k mod 32) of word k/32; bits past the last bucket are 0). The
 * version names the key's equation: 3, the coefficients as products of
 * the mixed hash; 2, as a second mix of it (rb_coef_lo, rb_coef_hi). */
#define V1_LEN 40
#define V2_HEAD 48
#define V2_LAYER 24

static void t_params_write(const amq__obj *o, amq__wr *w) {
    const amq_ribbon *f = (const amq_ribbon *)o;
    if (f->version == 1) {
        amq__wr_u64(w, f->layer[0].seed);
        amq__wr_u64(w, o->items);
        amq__wr_u64(w, f->layer[0].blocks);
        amq__wr_u32(w, f->r);
        amq__wr_u32(w, f->layer[0].upper);
        amq__wr_u32(w, f->bits64);
        amq__wr_u32(w, f->band);
        return;
    }
    amq__wr_u32(w, f->version);
    amq__wr_u32(w, f->band);
    amq__wr_u32(w, f->bits64);
    amq__wr_u32(w, f->r);
    amq__wr_u64(w, o->items);
    amq__wr_u32(w, f->layers);
    amq__wr_u32(w, f->bump ? 1 : 0);
    amq__wr_u32(w, f->thr[3]);
    amq__wr_u32(w, f->thr[1] | f->thr[2] << 16);
    amq__wr_u64(w, 0);
    for (uint32_t i = 0; i < f->layers; i++) {
        amq__wr_u64(w, f->layer[i].seed);
        amq__wr_u64(w, f->layer[i].blocks);
        amq__wr_u32(w, f->layer[i].upper);
        amq__wr_u32(w, 0);
    }
}

/* The fewest upper blocks giving at least a share frac of the starts
 * (version 1 sizing of U). */
static uint32_t rb_v1_upper(uint64_t blocks, unsigned band, double frac) {
    if (frac <= 0 || blocks == 0)
        return 0;
    double starts = (double)blocks * 64.0 - (band - 1);
    double u = ceil((frac * starts + (band - 1)) / 64.0);
    return (uint32_t)(u > (double)blocks ? (double)blocks : u);
}

static amq_status v1_parse(amq__rd *r, size_t len, amq_ribbon *f) {
    uint64_t seed, items, blocks;
    uint32_t cols, upper, bits64, band;
    amq__rd_u64(r, &seed);
    size_t at_items = amq__rd_u64(r, &items);
    size_t at_blocks = amq__rd_u64(r, &blocks);
    size_t at_cols = amq__rd_u32(r, &cols);
    size_t at_upper = amq__rd_u32(r, &upper);
    size_t at_bits = amq__rd_u32(r, &bits64);
    size_t at_band = amq__rd_u32(r, &band);
    if (band != 64 && band != 128)
        return amq__rd_bad(r, at_band, "band %u", band);
    if (bits64 / 64 < 1 || bits64 > 32 * 64)
        return amq__rd_bad(r, at_bits, "bits %u/64", bits64);
    if (cols != bits64 / 64)
        return amq__rd_bad(r, at_cols, "%u columns at %u/64 bits", cols,
                           bits64);
    if ((blocks == 0) != (items == 0) || items > blocks * 64)
        return amq__rd_bad(r, at_items, "%llu keys in %llu blocks",
                           (unsigned long long)items,
                           (unsigned long long)blocks);
    if (blocks > len / 8 || (blocks != 0 && blocks < rb_min_blocks(band)) ||
        blocks * cols + upper != (uint64_t)len / 8 || len % 8 != 0)
        return amq__rd_bad(r, at_blocks,
                           "%llu blocks do not match %zu "
                           "payload bytes",
                           (unsigned long long)blocks, len);
    if (upper != rb_v1_upper(blocks, band, (bits64 % 64) / 64.0) ||
        (upper != 0 && cols == 32))
        return amq__rd_bad(r, at_upper, "%u upper blocks", upper);
    amq__rb_header(f, bits64, band, false);
    f->version = 1;
    f->o.items = items;
    f->layers = blocks != 0;
    f->layer[0].seed = seed;
    f->layer[0].upper = upper;
    if (blocks != 0)
        rb_set_blocks(&f->layer[0], blocks, band);
    return AMQ_OK;
}

/* The header fields (first 48 bytes) of a version-2 or -3 frame; *at_items:
 * where the key count sits. */
static amq_status v2_head(amq__rd *r, amq_ribbon *f, size_t *at_items) {
    uint32_t version, band, bits64, cols, layers, flags, bucket, thr;
    uint64_t items;
    size_t at_version = amq__rd_u32(r, &version);
    size_t at_band = amq__rd_u32(r, &band);
    size_t at_bits = amq__rd_u32(r, &bits64);
    size_t at_cols = amq__rd_u32(r, &cols);
    *at_items = amq__rd_u64(r, &items);
    size_t at_layers = amq__rd_u32(r, &layers);
    size_t at_flags = amq__rd_u32(r, &flags);
    size_t at_bucket = amq__rd_u32(r, &bucket);
    size_t at_thr = amq__rd_u32(r, &thr);
    AMQ_RETURN_IF_ERR(amq__rd_zero64(r));
    uint32_t t1 = thr & 0xffff, t2 = thr >> 16;
    if (version != 2 && version != RB_VERSION)
        return amq__rd_bad(r, at_version, "unknown parameter version %u",
                           version);
    if (band != 64 && band != 128)
        return amq__rd_bad(r, at_band, "band %u", band);
    if (bits64 < 64 || bits64 > 32 * 64)
        return amq__rd_bad(r, at_bits, "bits %u/64", bits64);
    if (cols != bits64 / 64)
        return amq__rd_bad(r, at_cols, "%u columns at %u/64 bits", cols,
                           bits64);
    if (layers > RB_MAX_LAYERS || r->len != V2_HEAD + V2_LAYER * layers)
        return amq__rd_bad(r, at_layers, "layer count %u", layers);
    if (flags > 1 || (flags == 0 && layers > 1))
        return amq__rd_bad(r, at_flags, "flags %u with %u layers", flags,
                           layers);
    if (flags == 0 ? bucket != 0
                   : (bucket < 64 || bucket > RB_MAX_BUCKET ||
                      (bucket & (bucket - 1)) != 0))
        return amq__rd_bad(r, at_bucket, "bucket of %u rows", bucket);
    if (flags == 0 ? thr != 0 : (t1 > t2 || t2 > bucket))
        return amq__rd_bad(r, at_thr, "thresholds %u, %u", t1, t2);
    amq__rb_header(f, bits64, band, flags == 1);
    f->version = version;
    if (flags == 1) {
        f->bucket_log2 = amq__log2_floor(bucket);
        f->thr[1] = t1;
        f->thr[2] = t2;
        f->thr[3] = bucket;
    }
    f->o.items = items;
    f->layers = layers;
    return AMQ_OK;
}

static amq_status v2_parse(amq__rd *r, size_t len, amq_ribbon *f) {
    size_t at_items;
    AMQ_RETURN_IF_ERR(v2_head(r, f, &at_items));
    uint64_t rows = 0;
    for (uint32_t i = 0; i < f->layers; i++) {
        rb_layer *l = &f->layer[i];
        uint64_t blocks;
        amq__rd_u64(r, &l->seed);
        size_t at_blocks = amq__rd_u64(r, &blocks);
        size_t at_upper = amq__rd_u32(r, &l->upper);
        AMQ_RETURN_IF_ERR(amq__rd_zero32(r));
        l->coded = i + 1 < f->layers;
        if (blocks < rb_min_blocks(f->band) || blocks > len / 8 ||
            blocks > RB_MAX_BLOCKS)
            return amq__rd_bad(r, at_blocks, "layer %u of %llu blocks", i,
                               (unsigned long long)blocks);
        if (l->upper > blocks || (l->upper != 0 && f->r == 32))
            return amq__rd_bad(r, at_upper, "layer %u: %u upper blocks", i,
                               l->upper);
        rb_set_blocks(l, blocks, f->band);
        rows += blocks * 64;
    }
    if ((f->o.items == 0) != (f->layers == 0) || f->o.items > rows)
        return amq__rd_bad(r, at_items, "%llu keys in %llu rows",
                           (unsigned long long)f->o.items,
                           (unsigned long long)rows);
    return AMQ_OK;
}

/* Code bits past a coded layer's last bucket must be 0 (one encoding per
 * filter, so frames re-save identically). */
static bool rb_meta_clean(const amq_ribbon *f, const uint64_t *payload) {
    const uint64_t *t = payload;
    for (uint32_t i = 0; i < f->layers; i++)
        t += f->layer[i].words;
    for (uint32_t i = 0; i < f->layers; i++) {
        const rb_layer *l = &f->layer[i];
        if (!l->coded)
            continue;
        uint64_t buckets = ((l->starts - 1) >> f->bucket_log2) + 1;
        size_t words = rb_meta_words(l, f->bucket_log2);
        uint64_t last;
        memcpy(&last, t + words - 1, sizeof last);
        if (buckets % 32 != 0 && (last >> (buckets % 32 * 2)) != 0)
            return false;
        t += words;
    }
    return true;
}

static amq_status t_load(const amq__type *self, amq__rd *r,
                         const uint8_t *payload, size_t len, bool view,
                         const amq_options *opt, amq__obj **out) {
    amq_ribbon hdr;
    size_t words;
    (void)self;
    memset(&hdr, 0, sizeof hdr);
    if (r->len == V1_LEN)
        AMQ_RETURN_IF_ERR(v1_parse(r, len, &hdr));
    else if (r->len >= V2_HEAD)
        AMQ_RETURN_IF_ERR(v2_parse(r, len, &hdr));
    else
        return amq__rd_bad(r, r->base, "parameter block of %zu bytes", r->len);
    if (!amq__rb_layout(&hdr, &words) || len % 8 != 0 || words != len / 8)
        return amq__rd_bad(r, AMQ__FRAME_OFF_PAYLOAD_LEN,
                           "the layers need "
                           "other than %zu payload bytes",
                           len);
    /* Codes are read in place (the payload is 8-byte aligned). */
    amq__rb_point(&hdr, (const uint64_t *)payload);
    if (words != 0 && !rb_meta_clean(&hdr, (const uint64_t *)payload))
        return amq__rd_bad(r, r->payload_at,
                           "bits set past the last "
                           "bucket");
    amq_ribbon *f;
    AMQ_RETURN_IF_ERR(amq__rb_new(&hdr, opt, &f));
    amq_status st =
        amq__rb_attach(f, words, view ? (const uint64_t *)payload : NULL);
    if (st != AMQ_OK) {
        amq__obj_free(&f->o);
        return st;
    }
    if (!view && len != 0)
        memcpy(f->o.block.ptr, payload, len);
    f->fpr = amq__rb_rate(f);
    *out = &f->o;
    return AMQ_OK;
}

/* Shapes beside the defaults that reach the other kernels (test_kernels):
 * standard (unbumped) Ribbon, the 128-bit band, a fractional width. */
static const char *const kernel_shapes[] = {"ribbon:bump=0", "ribbon:w=128",
                                            "ribbon:bits=12.5", NULL};

/* Measured beside the defaults: the 128-bit band (fewer bumped keys,
 * a smaller table, a longer query). */
static const char *const ribbon_shapes[] = {"ribbon:w=128", NULL};

const amq__type amq__type_ribbon = {
    .info = {.name = "ribbon",
             .type_id = AMQ__ID_ribbon,
             .caps = AMQ_CAP_STATIC,
             .summary = "bumped Ribbon filter (BuRR), within ~0.5% of "
                        "r + phi bits per key, fractional bits (static)",
             .params = "bits=B (solution bits per key, 1-32 in steps of "
                       "1/64; default from the target fpr), w=64 or 128 "
                       "(band width), bump=1 (BuRR, default) or 0 "
                       "(standard Ribbon)",
             .default_hash = AMQ_HASH_XXH3,
             .shapes = ribbon_shapes},
    .reads = 2,
    .reads_text = "1-2",
    .kernel_shapes = kernel_shapes,
    .build = t_build,
    .load = t_load,
    .contains = rb_contains,
    .contains_batch = amq__rb_contains_batch,
    .fpr_bound = rb_fpr_bound,
    .describe = t_describe,
    .curve = t_curve,
    .params_write = t_params_write,
};
