/*
 * scalable.c — the scalable Bloom filter (Almeida, Baquero, Preguica,
 * Hutchison, "Scalable Bloom Filters", IPL 101, 2007): a filter that grows
 * with its input while keeping a fixed false-positive target.
 *
 * It is a list of stages, each a partitioned Bloom filter (partitioned.c,
 * the paper's choice: slices fill evenly, so "full" is well defined). Stage
 * i is sized for n_i = n_0 g^i keys at eps_i = eps (1 - r) r^i; when the
 * newest stage holds n_i keys the next add opens stage i + 1. A key is
 * reported if any stage reports it, so
 *
 *   P(false positive) = 1 - prod_i (1 - P_i)  <=  sum_i P_i  <  eps,
 *
 * because sum_i eps (1 - r) r^i = eps (1 - r^S) < eps for any number S of
 * stages. Defaults as in the paper and RedisBloom: g = 2, r = 0.5 (first
 * stage at eps/2).
 *
 *   stage 0: n_0,   eps/2   [slice|slice|...|slice]        (full)
 *   stage 1: 2 n_0, eps/4   [slice |slice |...|slice ]      (full)
 *   stage 2: 4 n_0, eps/8   [slice  |slice  |...|slice  ]   <- adds go here
 *
 * Certified bound at the current load: each stage's exact bound b_i is
 * prod over its slices of ones/slice_bits; the filter reports
 * 1 - prod_i (1 - b_i), exact when the stages' answers are independent
 * (they use the same hash, but disjoint tables of different sizes).
 *
 * Space: stage i needs n_i log2(1/eps_i) / ln 2 bits; with g = 2, r = 1/2
 * the total per key approaches that of one filter at eps/4 or so, about
 * 2 bits per key over a filter sized in advance (docs/structures.md).
 *
 * Invariants: 1 <= stages <= max_stages <= 64; items is the sum of the
 * stages' items; the newest stage is the only one that receives adds.
 *
 * Failure modes: an add that needs a new stage fails with AMQ_ERR_FULL
 * when the stage count or byte cap would be exceeded or eps_i needs more
 * than 64 hashes, and with AMQ_ERR_NOMEM when its table cannot be
 * allocated; in both cases nothing changes.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bloom/partitioned.h"
#include "core/bits.h"
#include "filter/type.h"

#define SC_BATCH 64

struct amq_scalable {
    amq__mem mem;
    amq_scalable_config cfg; /* resolved: no zero defaults left */
    unsigned nstages;
    uint64_t items;
    size_t bytes;
    amq_partitioned *stage[AMQ_SCALABLE_MAX_STAGES];
    uint64_t cap[AMQ_SCALABLE_MAX_STAGES]; /* n_i */
    double eps[AMQ_SCALABLE_MAX_STAGES];   /* eps_i */
};

/* ---- configuration ------------------------------------------------------ */

static amq_status resolve(const amq_scalable_config *in,
                          amq_scalable_config *out) {
    *out = *in;
    if (out->growth == 0)
        out->growth = 2;
    if (out->ratio == 0.0)
        out->ratio = 0.5;
    if (out->max_stages == 0)
        out->max_stages = AMQ_SCALABLE_MAX_STAGES;
    if (out->initial_capacity == 0 || !(out->fpr > 0.0 && out->fpr < 1.0) ||
        out->growth > 16 || !(out->ratio > 0.0 && out->ratio < 1.0) ||
        out->max_stages > AMQ_SCALABLE_MAX_STAGES)
        return AMQ_ERR_INVALID;
    return AMQ_OK;
}

static bool same_config(const amq_scalable_config *a,
                        const amq_scalable_config *b) {
    return a->initial_capacity == b->initial_capacity && a->fpr == b->fpr &&
           a->growth == b->growth && a->ratio == b->ratio &&
           a->max_stages == b->max_stages && a->max_bytes == b->max_bytes;
}

/* n_i and eps_i of the stage after the newest (i = nstages), computed
 * step by step from the previous stage so every platform agrees. */
static amq_status next_target(const amq_scalable *s, uint64_t *n, double *eps) {
    unsigned i = s->nstages;
    if (i == 0) {
        *n = s->cfg.initial_capacity;
        *eps = s->cfg.fpr * (1.0 - s->cfg.ratio);
        return AMQ_OK;
    }
    if (s->cap[i - 1] > UINT64_MAX / s->cfg.growth)
        return AMQ_ERR_FULL;
    *n = s->cap[i - 1] * s->cfg.growth;
    *eps = s->eps[i - 1] * s->cfg.ratio;
    return AMQ_OK;
}

/* Open the next stage; all checks happen before anything changes. */
static amq_status open_stage(amq_scalable *s) {
    uint64_t n, slice;
    double eps;
    unsigned k = 0;
    amq_partitioned *p;
    if (s->nstages >= s->cfg.max_stages)
        return AMQ_ERR_FULL;
    AMQ_RETURN_IF_ERR(next_target(s, &n, &eps));
    amq_status st = amq__partitioned_size_for(n, eps, &k, &slice);
    if (st != AMQ_OK)
        return s->nstages == 0 ? st : AMQ_ERR_FULL;
    size_t bytes, total;
    if (slice / 8 > SIZE_MAX / k)
        return s->nstages == 0 ? AMQ_ERR_OVERFLOW : AMQ_ERR_FULL;
    bytes = (size_t)(slice / 8) * k;
    if (!amq__add(s->bytes, bytes, &total) ||
        (s->cfg.max_bytes != 0 && total > s->cfg.max_bytes))
        return s->nstages == 0 ? AMQ_ERR_INVALID : AMQ_ERR_FULL;
    AMQ_RETURN_IF_ERR(amq__partitioned_make(&s->mem, slice, k, NULL, &p));
    s->stage[s->nstages] = p;
    s->cap[s->nstages] = n;
    s->eps[s->nstages] = eps;
    s->nstages++;
    s->bytes = total;
    return AMQ_OK;
}

static amq_status alloc_scalable(const amq_scalable_config *cfg,
                                 const amq_options *opt, amq_scalable **out) {
    amq__mem mem;
    amq_scalable *s;
    amq__mem_init(&mem, opt);
    s = amq__zalloc(&mem, sizeof *s);
    if (s == NULL)
        return AMQ_ERR_NOMEM;
    s->mem = mem;
    s->cfg = *cfg;
    *out = s;
    return AMQ_OK;
}

amq_status amq_scalable_new(const amq_scalable_config *cfg,
                            const amq_options *opt, amq_scalable **out) {
    amq_scalable_config c;
    amq_scalable *s;
    if (out == NULL || cfg == NULL)
        return AMQ_ERR_INVALID;
    *out = NULL;
    AMQ_RETURN_IF_ERR(resolve(cfg, &c));
    AMQ_RETURN_IF_ERR(alloc_scalable(&c, opt, &s));
    amq_status st = open_stage(s);
    if (st != AMQ_OK) {
        amq_scalable_free(s);
        return st;
    }
    *out = s;
    return AMQ_OK;
}

void amq_scalable_free(amq_scalable *s) {
    if (s == NULL)
        return;
    for (unsigned i = 0; i < s->nstages; i++)
        amq_partitioned_free(s->stage[i]);
    amq__mem mem = s->mem;
    amq__free(&mem, s, sizeof *s);
}

/* ---- updates and queries ------------------------------------------------ */

amq_status amq_scalable_add_hash(amq_scalable *s, uint64_t h) {
    unsigned last = s->nstages - 1;
    if (amq_partitioned_items(s->stage[last]) >= s->cap[last]) {
        AMQ_RETURN_IF_ERR(open_stage(s));
        last++;
    }
    amq_partitioned_add_hash(s->stage[last], h);
    s->items++;
    return AMQ_OK;
}

/* Newest first: the newest stage is the largest and holds the most keys. */
bool amq_scalable_contains_hash(const amq_scalable *s, uint64_t h) {
    for (unsigned i = s->nstages; i-- > 0;)
        if (amq_partitioned_contains_hash(s->stage[i], h))
            return true;
    return false;
}

void amq_scalable_contains_batch(const amq_scalable *s, const uint64_t *h,
                                 size_t n, uint8_t *out) {
    uint8_t tmp[SC_BATCH];
    for (size_t i = 0; i < n; i += SC_BATCH) {
        size_t len = n - i < SC_BATCH ? n - i : SC_BATCH;
        memset(out + i, 0, len);
        for (unsigned j = s->nstages; j-- > 0;) {
            amq_partitioned_contains_batch(s->stage[j], h + i, len, tmp);
            for (size_t t = 0; t < len; t++)
                out[i + t] |= tmp[t];
        }
    }
}

static bool same_shape(const amq_partitioned *a, const amq_partitioned *b) {
    return amq_partitioned_k(a) == amq_partitioned_k(b) &&
           amq__partitioned_slice_bits(a) == amq__partitioned_slice_bits(b);
}

/* Copies of src's stages [from, src->nstages), all or nothing. */
static amq_status copy_stages(amq_scalable *dst, const amq_scalable *src,
                              unsigned from, amq_partitioned **copies) {
    for (unsigned i = from; i < src->nstages; i++) {
        const amq_partitioned *p = src->stage[i];
        amq_status st = amq__partitioned_make(
            &dst->mem, amq__partitioned_slice_bits(p), amq_partitioned_k(p),
            NULL, &copies[i]);
        if (st != AMQ_OK) {
            while (i-- > from)
                amq_partitioned_free(copies[i]);
            return st;
        }
        memcpy(amq__partitioned_words(copies[i]), amq__partitioned_cwords(p),
               amq__partitioned_bytes(p));
        amq__partitioned_recount(copies[i]);
        amq__partitioned_set_items(copies[i], amq_partitioned_items(p));
    }
    return AMQ_OK;
}

amq_status amq_scalable_union(amq_scalable *dst, const amq_scalable *src) {
    amq_partitioned *copies[AMQ_SCALABLE_MAX_STAGES];
    unsigned common;
    if (dst == NULL || src == NULL)
        return AMQ_ERR_INVALID;
    if (!same_config(&dst->cfg, &src->cfg))
        return AMQ_ERR_INCOMPATIBLE;
    common = dst->nstages < src->nstages ? dst->nstages : src->nstages;
    for (unsigned i = 0; i < common; i++)
        if (!same_shape(dst->stage[i], src->stage[i]) ||
            dst->cap[i] != src->cap[i] || dst->eps[i] != src->eps[i])
            return AMQ_ERR_INCOMPATIBLE;
    AMQ_RETURN_IF_ERR(copy_stages(dst, src, common, copies));
    for (unsigned i = 0; i < common; i++)
        amq_partitioned_union(dst->stage[i], src->stage[i]);
    for (unsigned i = common; i < src->nstages; i++) {
        dst->stage[i] = copies[i];
        dst->cap[i] = src->cap[i];
        dst->eps[i] = src->eps[i];
        dst->bytes += amq__partitioned_bytes(copies[i]);
    }
    if (src->nstages > dst->nstages)
        dst->nstages = src->nstages;
    dst->items = amq__sat_add64(dst->items, src->items);
    return AMQ_OK;
}

double amq_scalable_fpr_bound(const amq_scalable *s) {
    double miss = 1.0;
    for (unsigned i = 0; i < s->nstages; i++)
        miss *= 1.0 - amq_partitioned_fpr_bound(s->stage[i]);
    return 1.0 - miss;
}

double amq_scalable_target_sum(const amq_scalable *s) {
    double sum = 0.0;
    for (unsigned i = 0; i < s->nstages; i++)
        sum += s->eps[i];
    return sum;
}

unsigned amq_scalable_stages(const amq_scalable *s) { return s->nstages; }
uint64_t amq_scalable_items(const amq_scalable *s) { return s->items; }
size_t amq_scalable_bytes(const amq_scalable *s) { return s->bytes; }

/* ---- the generic interface --------------------------------------------- */

static amq_status t_create(amq__spec *spec, uint64_t capacity, double fpr,
                           const amq_options *opt, void **impl,
                           amq_diag *diag) {
    amq_scalable_config c = {.initial_capacity = capacity, .fpr = fpr};
    uint64_t growth = 2, stages = AMQ_SCALABLE_MAX_STAGES;
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "n0", 1, UINT64_C(1) << 48,
                                    &c.initial_capacity, NULL, diag));
    AMQ_RETURN_IF_ERR(
        amq__spec_f64(spec, "eps", 1e-300, 0.999999999, &c.fpr, NULL, diag));
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "growth", 1, 16, &growth, NULL, diag));
    c.ratio = 0.5;
    AMQ_RETURN_IF_ERR(
        amq__spec_f64(spec, "ratio", 0.01, 0.99, &c.ratio, NULL, diag));
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "max_stages", 1,
                                    AMQ_SCALABLE_MAX_STAGES, &stages, NULL,
                                    diag));
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "max_bytes", 0, UINT64_C(1) << 60,
                                    &c.max_bytes, NULL, diag));
    if (c.initial_capacity == 0 || c.fpr == 0.0)
        return amq__diag(diag, AMQ_ERR_SPEC, 0, "scalable needs a capacity "
                         "and fpr, or n0=KEYS,eps=RATE");
    c.growth = (unsigned)growth;
    c.max_stages = (unsigned)stages;
    amq_status st = amq_scalable_new(&c, opt, (amq_scalable **)impl);
    if (st == AMQ_ERR_INVALID && c.max_bytes != 0)
        return amq__diag(diag, AMQ_ERR_SPEC, 0, "max_bytes=%llu is smaller "
                         "than the first stage",
                         (unsigned long long)c.max_bytes);
    return st;
}

static void t_destroy(void *impl) { amq_scalable_free(impl); }
static amq_status t_add(void *impl, uint64_t h) {
    return amq_scalable_add_hash(impl, h);
}
static bool t_contains(const void *impl, uint64_t h) {
    return amq_scalable_contains_hash(impl, h);
}
static void t_batch(const void *impl, const uint64_t *h, size_t n,
                    uint8_t *out) {
    amq_scalable_contains_batch(impl, h, n, out);
}
static amq_status t_merge(void *dst, const void *src, amq__merge_op op) {
    if (op != AMQ__UNION)
        return AMQ_ERR_UNSUPPORTED;
    return amq_scalable_union(dst, src);
}
static uint64_t t_items(const void *impl) {
    return ((const amq_scalable *)impl)->items;
}
static size_t t_size(const void *impl) {
    return ((const amq_scalable *)impl)->bytes;
}
static double t_bound(const void *impl) { return amq_scalable_fpr_bound(impl); }
static size_t t_describe(const void *impl, char *buf, size_t cap) {
    const amq_scalable_config *c = &((const amq_scalable *)impl)->cfg;
    int n = snprintf(buf, cap,
                     "n0=%llu,eps=%.17g,growth=%u,ratio=%.17g,max_stages=%u,"
                     "max_bytes=%llu",
                     (unsigned long long)c->initial_capacity, c->fpr,
                     c->growth, c->ratio, c->max_stages,
                     (unsigned long long)c->max_bytes);
    return n > 0 ? (size_t)n : 0;
}

/* The curve is that of one stage: at capacity the filter is its first
 * stage (eps (1 - r) of the target). */
static amq_status t_curve_fpr(amq__spec *spec, double bpk, double *out,
                              amq_diag *diag) {
    (void)spec;
    (void)diag;
    *out = amq__partitioned_curve(bpk, 0);
    return AMQ_OK;
}

static amq_status t_curve_bits(amq__spec *spec, double fpr, double *out,
                               amq_diag *diag) {
    (void)spec;
    (void)diag;
    *out = amq__partitioned_bits_for(fpr, 0);
    return AMQ_OK;
}

/* params: n0 u64 | eps f64 | growth u32 | max_stages u32 | ratio f64 |
 * max_bytes u64 | stages u32 | rsv u32 | items u64, then per stage
 * n_i u64 | eps_i f64 | the partitioned block (24 bytes). */
#define HEAD_LEN 56
#define STAGE_LEN (16 + AMQ__PART_PARAMS)

static size_t t_params_size(const void *impl) {
    return HEAD_LEN + STAGE_LEN * ((const amq_scalable *)impl)->nstages;
}

static void t_params_write(const void *impl, uint8_t *p) {
    const amq_scalable *s = impl;
    amq__put_u64(p, s->cfg.initial_capacity);
    amq__put_f64(p + 8, s->cfg.fpr);
    amq__put_u32(p + 16, s->cfg.growth);
    amq__put_u32(p + 20, s->cfg.max_stages);
    amq__put_f64(p + 24, s->cfg.ratio);
    amq__put_u64(p + 32, s->cfg.max_bytes);
    amq__put_u32(p + 40, s->nstages);
    amq__put_u32(p + 44, 0);
    amq__put_u64(p + 48, s->items);
    for (unsigned i = 0; i < s->nstages; i++) {
        uint8_t *q = p + HEAD_LEN + STAGE_LEN * i;
        amq__put_u64(q, s->cap[i]);
        amq__put_f64(q + 8, s->eps[i]);
        amq__partitioned_params_write(s->stage[i], q + 16);
    }
}

static size_t t_payload_size(const void *impl) { return t_size(impl); }
static void t_payload_write(const void *impl, uint8_t *dst) {
    const amq_scalable *s = impl;
    for (unsigned i = 0; i < s->nstages; i++) {
        size_t b = amq__partitioned_bytes(s->stage[i]);
        memcpy(dst, amq__partitioned_cwords(s->stage[i]), b);
        dst += b;
    }
}

static amq_status corrupt(amq_diag *diag, size_t off, const char *what) {
    return amq__diag(diag, AMQ_ERR_CORRUPT, off, "scalable: %s", what);
}

/* The header block, validated into cfg and the stage count. */
static amq_status parse_head(const uint8_t *p, size_t plen,
                             amq_scalable_config *c, unsigned *stages,
                             amq_diag *diag) {
    if (plen < HEAD_LEN)
        return corrupt(diag, 80, "parameter block too short");
    c->initial_capacity = amq__get_u64(p);
    c->fpr = amq__get_f64(p + 8);
    c->growth = amq__get_u32(p + 16);
    c->max_stages = amq__get_u32(p + 20);
    c->ratio = amq__get_f64(p + 24);
    c->max_bytes = amq__get_u64(p + 32);
    *stages = amq__get_u32(p + 40);
    if (c->initial_capacity == 0 || !(c->fpr > 0.0 && c->fpr < 1.0) ||
        c->growth == 0 || c->growth > 16 ||
        !(c->ratio > 0.0 && c->ratio < 1.0) || c->max_stages == 0 ||
        c->max_stages > AMQ_SCALABLE_MAX_STAGES)
        return corrupt(diag, 80, "configuration out of range");
    if (*stages == 0 || *stages > c->max_stages || amq__get_u32(p + 44) != 0)
        return corrupt(diag, 120, "stage count out of range");
    if (plen != HEAD_LEN + (size_t)STAGE_LEN * *stages)
        return corrupt(diag, 120, "parameter block does not match the "
                       "stage count");
    return AMQ_OK;
}

/* Stage i's shape, checked against what is left of the payload. */
static amq_status parse_stage(const uint8_t *q, size_t left, size_t off,
                              uint64_t *slice, unsigned *k, uint64_t *items,
                              size_t *bytes, amq_diag *diag) {
    uint64_t s = amq__get_u64(q + 16);
    uint32_t kk = amq__get_u32(q + 24);
    double eps = amq__get_f64(q + 8);
    if (amq__get_u64(q) == 0 || !(eps > 0.0 && eps < 1.0))
        return corrupt(diag, off, "stage target out of range");
    if (kk == 0 || kk > AMQ__PART_MAX_K || s == 0 || s % 64 != 0 ||
        s / 8 > left / kk)
        return corrupt(diag, off + 16, "stage larger than the payload");
    *bytes = (size_t)(s / 8) * kk;
    return amq__partitioned_params_parse(q + 16, *bytes, off + 16, slice, k,
                                         items, diag);
}

static amq_status check_stages(const uint8_t *p, const amq_scalable_config *c,
                               unsigned stages, size_t len, amq_diag *diag) {
    size_t used = 0;
    uint64_t items = 0, slice, it;
    unsigned k;
    for (unsigned i = 0; i < stages; i++) {
        size_t off = 80 + HEAD_LEN + (size_t)STAGE_LEN * i, b = 0;
        AMQ_RETURN_IF_ERR(parse_stage(p + HEAD_LEN + STAGE_LEN * i,
                                      len - used, off, &slice, &k, &it, &b,
                                      diag));
        used += b;
        if (it > UINT64_MAX - items)
            return corrupt(diag, off + 32, "item counts overflow");
        items += it;
    }
    if (used != len)
        return corrupt(diag, 56, "stages do not fill the payload");
    if (c->max_bytes != 0 && used > c->max_bytes)
        return corrupt(diag, 112, "stages exceed max_bytes");
    if (items != amq__get_u64(p + 48))
        return corrupt(diag, 128, "item count is not the stages' sum");
    return AMQ_OK;
}

static amq_status t_load(const uint8_t *p, size_t plen, const uint8_t *payload,
                         size_t len, bool view, const amq_options *opt,
                         void **impl, amq_diag *diag) {
    amq_scalable_config c;
    unsigned stages = 0, k;
    amq_scalable *s;
    AMQ_RETURN_IF_ERR(parse_head(p, plen, &c, &stages, diag));
    AMQ_RETURN_IF_ERR(check_stages(p, &c, stages, len, diag));
    AMQ_RETURN_IF_ERR(alloc_scalable(&c, opt, &s));
    for (unsigned i = 0; i < stages; i++) {
        const uint8_t *q = p + HEAD_LEN + STAGE_LEN * i;
        uint64_t slice = amq__get_u64(q + 16), items = amq__get_u64(q + 32);
        amq_partitioned *st;
        k = amq__get_u32(q + 24);
        amq_status r = amq__partitioned_make(
            &s->mem, slice, k,
            view ? (const uint64_t *)(payload + s->bytes) : NULL, &st);
        if (r != AMQ_OK) {
            amq_scalable_free(s);
            return r;
        }
        if (!view)
            memcpy(amq__partitioned_words(st), payload + s->bytes,
                   amq__partitioned_bytes(st));
        amq__partitioned_recount(st);
        amq__partitioned_set_items(st, items);
        s->stage[i] = st;
        s->cap[i] = amq__get_u64(q);
        s->eps[i] = amq__get_f64(q + 8);
        s->nstages = i + 1;
        s->bytes += amq__partitioned_bytes(st);
    }
    s->items = amq__get_u64(p + 48);
    *impl = s;
    return AMQ_OK;
}

const amq__type amq__type_scalable = {
    .info = {.name = "scalable",
             .type_id = AMQ__ID_scalable,
             .caps = AMQ_CAP_UNION,
             .summary = "scalable Bloom filter: growing stages of partitioned "
                        "filters at geometrically tighter rates",
             .params = "n0=KEYS (first stage, default capacity), eps=RATE "
                       "(total target, default fpr), growth=G (1-16, "
                       "default 2), ratio=R (tightening 0.01-0.99, default "
                       "0.5), max_stages=S (1-64, default 64), max_bytes=B "
                       "(cap on all tables, 0 = none)",
             .default_hash = AMQ_HASH_XXH3},
    .create = t_create,
    .destroy = t_destroy,
    .add = t_add,
    .contains = t_contains,
    .contains_batch = t_batch,
    .merge = t_merge,
    .items = t_items,
    .size_bytes = t_size,
    .fpr_bound = t_bound,
    .describe = t_describe,
    .curve_fpr = t_curve_fpr,
    .curve_bits = t_curve_bits,
    .params_size = t_params_size,
    .params_write = t_params_write,
    .payload_size = t_payload_size,
    .payload_write = t_payload_write,
    .load = t_load,
};
