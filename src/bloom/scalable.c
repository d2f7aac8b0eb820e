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
#include "core/frame.h"
#include "type/type.h"

#define SC_BATCH 64
#define SC_MAX_STAGES 64

/* Stage i (from 0) is a partitioned filter for n_i = n0 growth^i keys at
 * eps_i = eps (1 - ratio) ratio^i; the spec keys of the same names, all
 * resolved (create and load validate them). */
typedef struct scal_config {
    uint64_t initial_capacity; /* n_0 >= 1                            */
    double fpr;                /* eps, the total target, in (0, 1)    */
    unsigned growth;           /* 1..16                               */
    double ratio;              /* tightening, in (0, 1)               */
    unsigned max_stages;       /* 1..64                               */
    uint64_t max_bytes;        /* cap on all tables; 0 = none         */
} scal_config;

typedef struct scal_stage {
    amq_partitioned *f;
    uint64_t cap; /* n_i   */
    double eps;   /* eps_i */
} scal_stage;

/* The stages live in an array that grows with them (doubling, up to
 * max_stages), so a filter that never grows pays for one stage, not 64. */
struct amq_scalable {
    amq__obj o; /* o.items counts adds; o.table_bytes all stages' tables */
    scal_config cfg;
    unsigned nstages, room; /* stages in use, and st's length */
    scal_stage *st;
};

/* ---- configuration ------------------------------------------------------ */

static bool same_config(const scal_config *a, const scal_config *b) {
    return a->initial_capacity == b->initial_capacity && a->fpr == b->fpr &&
           a->growth == b->growth && a->ratio == b->ratio &&
           a->max_stages == b->max_stages && a->max_bytes == b->max_bytes;
}

/* Room in s->st for want stages (want <= max_stages); on AMQ_ERR_NOMEM
 * nothing changed. */
static amq_status reserve(amq_scalable *s, unsigned want) {
    if (want <= s->room)
        return AMQ_OK;
    unsigned room = s->room == 0 ? 1 : s->room;
    while (room < want)
        room *= 2;
    if (room > s->cfg.max_stages)
        room = s->cfg.max_stages;
    scal_stage *st = amq__zalloc(&s->o.mem, room * sizeof *st);
    if (st == NULL)
        return AMQ_ERR_NOMEM;
    if (s->nstages > 0)
        memcpy(st, s->st, s->nstages * sizeof *st);
    amq__free(&s->o.mem, s->st, s->room * sizeof *st);
    s->st = st;
    s->room = room;
    return AMQ_OK;
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
    if (s->st[i - 1].cap > UINT64_MAX / s->cfg.growth)
        return AMQ_ERR_FULL;
    *n = s->st[i - 1].cap * s->cfg.growth;
    *eps = s->st[i - 1].eps * s->cfg.ratio;
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
    if (!amq__add(s->o.table_bytes, bytes, &total) ||
        (s->cfg.max_bytes != 0 && total > s->cfg.max_bytes))
        return s->nstages == 0 ? AMQ_ERR_INVALID : AMQ_ERR_FULL;
    AMQ_RETURN_IF_ERR(reserve(s, s->nstages + 1));
    AMQ_RETURN_IF_ERR(amq__partitioned_make(&s->o.mem, slice, k, NULL, &p));
    s->st[s->nstages] = (scal_stage){p, n, eps};
    s->nstages++;
    s->o.table_bytes = total;
    return AMQ_OK;
}

static amq_status alloc_scalable(const scal_config *cfg, const amq_options *opt,
                                 amq_scalable **out) {
    amq_scalable *s;
    AMQ_RETURN_IF_ERR(amq__obj_new(sizeof *s, opt, (void **)&s));
    s->cfg = *cfg;
    *out = s;
    return AMQ_OK;
}

static void scal_destroy(amq__obj *o) {
    amq_scalable *s = (amq_scalable *)o;
    for (unsigned i = 0; i < s->nstages; i++)
        amq__obj_free(&s->st[i].f->o);
    amq__free(&o->mem, s->st, s->room * sizeof *s->st);
    amq__obj_free(o);
}

/* ---- updates and queries ------------------------------------------------ */

static amq_status scal_add(amq__obj *o, uint64_t h) {
    amq_scalable *s = (amq_scalable *)o;
    unsigned last = s->nstages - 1;
    if (s->st[last].f->o.items >= s->st[last].cap) {
        AMQ_RETURN_IF_ERR(open_stage(s));
        last++;
    }
    amq__partitioned_add(&s->st[last].f->o, h);
    o->items++;
    return AMQ_OK;
}

/* Newest first: the newest stage is the largest and holds the most keys. */
static bool scal_contains(const amq__obj *o, uint64_t h) {
    const amq_scalable *s = (const amq_scalable *)o;
    for (unsigned i = s->nstages; i-- > 0;)
        if (amq__partitioned_contains(&s->st[i].f->o, h))
            return true;
    return false;
}

static void scal_batch(const amq__obj *o, const uint64_t *h, size_t n,
                       uint8_t *out) {
    const amq_scalable *s = (const amq_scalable *)o;
    uint8_t tmp[SC_BATCH];
    for (size_t i = 0; i < n; i += SC_BATCH) {
        size_t len = n - i < SC_BATCH ? n - i : SC_BATCH;
        memset(out + i, 0, len);
        for (unsigned j = s->nstages; j-- > 0;) {
            amq__partitioned_batch(&s->st[j].f->o, h + i, len, tmp);
            for (size_t t = 0; t < len; t++)
                out[i + t] |= tmp[t];
        }
    }
}

static bool same_shape(const amq_partitioned *a, const amq_partitioned *b) {
    return a->k == b->k && a->slice == b->slice;
}

/* Copies of src's stages [from, src->nstages), all or nothing. */
static amq_status copy_stages(amq_scalable *dst, const amq_scalable *src,
                              unsigned from, amq_partitioned **copies) {
    for (unsigned i = from; i < src->nstages; i++) {
        const amq_partitioned *p = src->st[i].f;
        amq_status st = amq__partitioned_make(&dst->o.mem, p->slice, p->k, NULL,
                                              &copies[i]);
        if (st != AMQ_OK) {
            while (i-- > from)
                amq__obj_free(&copies[i]->o);
            return st;
        }
        memcpy(copies[i]->words, p->words, amq__partitioned_bytes(p));
        amq__partitioned_recount(copies[i]);
        copies[i]->o.items = p->o.items;
    }
    return AMQ_OK;
}

/* Stage-wise OR; stages src has and dst lacks are copied. Union only (the
 * caps keep intersect away): a key common to both filters may sit in
 * different stages of each. */
static amq_status scal_union(amq__obj *o, const amq__obj *other,
                             amq__merge_op op) {
    amq_scalable *dst = (amq_scalable *)o;
    const amq_scalable *src = (const amq_scalable *)other;
    amq_partitioned *copies[SC_MAX_STAGES];
    unsigned common;
    (void)op;
    if (!same_config(&dst->cfg, &src->cfg))
        return AMQ_ERR_INCOMPATIBLE;
    common = dst->nstages < src->nstages ? dst->nstages : src->nstages;
    for (unsigned i = 0; i < common; i++)
        if (!same_shape(dst->st[i].f, src->st[i].f) ||
            dst->st[i].cap != src->st[i].cap ||
            dst->st[i].eps != src->st[i].eps)
            return AMQ_ERR_INCOMPATIBLE;
    AMQ_RETURN_IF_ERR(reserve(dst, src->nstages));
    AMQ_RETURN_IF_ERR(copy_stages(dst, src, common, copies));
    for (unsigned i = 0; i < common; i++)
        amq__partitioned_merge(&dst->st[i].f->o, &src->st[i].f->o, AMQ__UNION);
    for (unsigned i = common; i < src->nstages; i++) {
        dst->st[i] = (scal_stage){copies[i], src->st[i].cap, src->st[i].eps};
        dst->o.table_bytes += amq__partitioned_bytes(copies[i]);
    }
    if (src->nstages > dst->nstages)
        dst->nstages = src->nstages;
    dst->o.items = amq__sat_add64(dst->o.items, src->o.items);
    return AMQ_OK;
}

/* 1 - prod_i (1 - b_i) over the stages' exact bounds b_i. */
static double scal_bound(const amq__obj *o) {
    const amq_scalable *s = (const amq_scalable *)o;
    double miss = 1.0;
    for (unsigned i = 0; i < s->nstages; i++)
        miss *= 1.0 - amq__partitioned_bound(&s->st[i].f->o);
    return 1.0 - miss;
}

double amq_scalable_target_sum(const amq_scalable *s) {
    double sum = 0.0;
    for (unsigned i = 0; i < s->nstages; i++)
        sum += s->st[i].eps;
    return sum;
}

unsigned amq_scalable_stages(const amq_scalable *s) { return s->nstages; }

amq_status amq_scalable_stage_info(const amq_scalable *s, unsigned i,
                                   amq_scalable_stage *out) {
    if (s == NULL || out == NULL || i >= s->nstages)
        return AMQ_ERR_INVALID;
    const scal_stage *st = &s->st[i];
    *out = (amq_scalable_stage){.capacity = st->cap,
                                .items = st->f->o.items,
                                .bits = amq_partitioned_bits(st->f),
                                .fpr = st->eps,
                                .k = amq_partitioned_k(st->f),
                                .bytes = st->f->o.table_bytes};
    return AMQ_OK;
}

/* ---- the generic interface --------------------------------------------- */

static amq_status read_spec(amq__spec *spec, scal_config *c, amq_diag *diag) {
    uint64_t growth = 2, stages = SC_MAX_STAGES;
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "n0", 1, UINT64_C(1) << 48,
                                    &c->initial_capacity, NULL, diag));
    AMQ_RETURN_IF_ERR(
        amq__spec_f64(spec, "eps", 1e-300, 0.999999999, &c->fpr, NULL, diag));
    AMQ_RETURN_IF_ERR(
        amq__spec_u64(spec, "growth", 1, 16, &growth, NULL, diag));
    c->ratio = 0.5;
    AMQ_RETURN_IF_ERR(
        amq__spec_f64(spec, "ratio", 0.01, 0.99, &c->ratio, NULL, diag));
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "max_stages", 1, SC_MAX_STAGES,
                                    &stages, NULL, diag));
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "max_bytes", 0, UINT64_C(1) << 60,
                                    &c->max_bytes, NULL, diag));
    c->growth = (unsigned)growth;
    c->max_stages = (unsigned)stages;
    return AMQ_OK;
}

static amq_status t_create(const amq__type *self, amq__spec *spec,
                           uint64_t capacity, double fpr,
                           const amq_options *opt, amq__obj **impl,
                           amq_diag *diag) {
    (void)self;
    scal_config c = {.initial_capacity = capacity, .fpr = fpr};
    amq_scalable *s;
    AMQ_RETURN_IF_ERR(read_spec(spec, &c, diag));
    if (c.initial_capacity == 0 || c.fpr == 0.0)
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "scalable needs a capacity "
                         "and fpr, or n0=KEYS,eps=RATE");
    AMQ_RETURN_IF_ERR(alloc_scalable(&c, opt, &s));
    amq_status st = open_stage(s);
    if (st != AMQ_OK) {
        scal_destroy(&s->o);
        if (st == AMQ_ERR_INVALID && c.max_bytes != 0)
            return amq__diag(diag, AMQ_ERR_SPEC, 0,
                             "max_bytes=%llu is smaller "
                             "than the first stage",
                             (unsigned long long)c.max_bytes);
        return st;
    }
    *impl = &s->o;
    return AMQ_OK;
}

static size_t t_describe(const amq__obj *o, char *buf, size_t cap) {
    const scal_config *c = &((const amq_scalable *)o)->cfg;
    char eps[AMQ_REAL_TEXT_MAX], ratio[AMQ_REAL_TEXT_MAX];
    return amq__describe(buf, cap,
                         "n0=%llu,eps=%s,growth=%u,ratio=%s,"
                         "max_stages=%u,max_bytes=%llu",
                         (unsigned long long)c->initial_capacity,
                         amq_real_text(c->fpr, eps), c->growth,
                         amq_real_text(c->ratio, ratio), c->max_stages,
                         (unsigned long long)c->max_bytes);
}

/* The curve is that of one stage: at capacity the filter is its first
 * stage (eps (1 - r) of the target). */
static amq_status t_curve(const amq__type *self, amq__spec *spec, double x,
                          bool inverse, double *out, amq_diag *diag) {
    (void)self, (void)spec, (void)diag;
    *out = inverse ? amq__partitioned_bits_for(x, 0)
                   : amq__partitioned_curve(x, 0);
    return AMQ_OK;
}

/* params: n0 u64 | eps f64 | growth u32 | max_stages u32 | ratio f64 |
 * max_bytes u64 | stages u32 | rsv u32 | items u64, then per stage
 * n_i u64 | eps_i f64 | the partitioned block (24 bytes). */
#define HEAD_LEN 56
#define STAGE_LEN (16 + AMQ__PART_PARAMS)

static void t_params_write(const amq__obj *o, amq__wr *w) {
    const amq_scalable *s = (const amq_scalable *)o;
    amq__wr_u64(w, s->cfg.initial_capacity);
    amq__wr_f64(w, s->cfg.fpr);
    amq__wr_u32(w, s->cfg.growth);
    amq__wr_u32(w, s->cfg.max_stages);
    amq__wr_f64(w, s->cfg.ratio);
    amq__wr_u64(w, s->cfg.max_bytes);
    amq__wr_u32(w, s->nstages);
    amq__wr_u32(w, 0);
    amq__wr_u64(w, o->items);
    for (unsigned i = 0; i < s->nstages; i++) {
        amq__wr_u64(w, s->st[i].cap);
        amq__wr_f64(w, s->st[i].eps);
        amq__partitioned_params_write(&s->st[i].f->o, w);
    }
}

static void t_payload_write(const amq__obj *o, uint8_t *dst) {
    const amq_scalable *s = (const amq_scalable *)o;
    for (unsigned i = 0; i < s->nstages; i++) {
        size_t b = amq__partitioned_bytes(s->st[i].f);
        memcpy(dst, s->st[i].f->words, b);
        dst += b;
    }
}

/* Where the header fields that later checks refer to sit. */
typedef struct head_at {
    size_t max_bytes, items;
} head_at;

/* The header block, validated into cfg, the stage count and the total
 * item count. */
static amq_status parse_head(amq__rd *r, scal_config *c, unsigned *stages,
                             uint64_t *items, head_at *at) {
    uint32_t growth, max_stages, n;
    if (r->len < HEAD_LEN)
        return amq__rd_bad(r, r->base, "parameter block too short");
    size_t at_n0 = amq__rd_u64(r, &c->initial_capacity);
    size_t at_fpr = amq__rd_f64(r, &c->fpr);
    size_t at_growth = amq__rd_u32(r, &growth);
    size_t at_max = amq__rd_u32(r, &max_stages);
    size_t at_ratio = amq__rd_f64(r, &c->ratio);
    at->max_bytes = amq__rd_u64(r, &c->max_bytes);
    size_t at_n = amq__rd_u32(r, &n);
    AMQ_RETURN_IF_ERR(amq__rd_zero32(r));
    at->items = amq__rd_u64(r, items);
    c->growth = growth;
    c->max_stages = max_stages;
    if (c->initial_capacity == 0)
        return amq__rd_bad(r, at_n0, "first stage of 0 keys");
    if (!(c->fpr > 0.0 && c->fpr < 1.0))
        return amq__rd_bad(r, at_fpr, "target rate out of range");
    if (growth == 0 || growth > 16)
        return amq__rd_bad(r, at_growth, "growth %u outside 1..16", growth);
    if (max_stages == 0 || max_stages > SC_MAX_STAGES)
        return amq__rd_bad(r, at_max, "max_stages %u outside 1..%d", max_stages,
                           SC_MAX_STAGES);
    if (!(c->ratio > 0.0 && c->ratio < 1.0))
        return amq__rd_bad(r, at_ratio, "tightening ratio out of range");
    if (n == 0 || n > max_stages || r->len != HEAD_LEN + (size_t)STAGE_LEN * n)
        return amq__rd_bad(r, at_n,
                           "stage count %u does not match the "
                           "parameter block",
                           n);
    *stages = n;
    return AMQ_OK;
}

typedef struct stage_rec {
    uint64_t cap, slice, items;
    double eps;
    unsigned k;
    size_t bytes;
} stage_rec;

/* Stage i's shape, checked against what is left of the payload. */
static amq_status parse_stage(amq__rd *r, size_t left, stage_rec *st) {
    uint64_t s;
    uint32_t kk;
    size_t at_cap = amq__rd_u64(r, &st->cap);
    size_t at_eps = amq__rd_f64(r, &st->eps);
    amq__rd peek = *r;
    size_t at_s = amq__rd_u64(&peek, &s);
    size_t at_k = amq__rd_u32(&peek, &kk);
    if (st->cap == 0)
        return amq__rd_bad(r, at_cap, "stage of 0 keys");
    if (!(st->eps > 0.0 && st->eps < 1.0))
        return amq__rd_bad(r, at_eps, "stage rate out of range");
    if (kk == 0 || kk > AMQ__PART_MAX_K)
        return amq__rd_bad(r, at_k, "stage hash count %u out of range", kk);
    if (s == 0 || s % 64 != 0 || s / 8 > left / kk)
        return amq__rd_bad(r, at_s, "stage larger than the payload");
    st->bytes = (size_t)(s / 8) * kk;
    return amq__partitioned_params_read(r, st->bytes, &st->slice, &st->k,
                                        &st->items);
}

/* Every stage's shape; they must fill the payload, respect max_bytes and
 * add up to the total item count. */
static amq_status parse_stages(amq__rd *r, const scal_config *c,
                               unsigned stages, size_t len, uint64_t items,
                               const head_at *at_head, stage_rec *rec) {
    size_t used = 0;
    uint64_t sum = 0;
    for (unsigned i = 0; i < stages; i++) {
        size_t at = amq__rd_at(r);
        AMQ_RETURN_IF_ERR(parse_stage(r, len - used, &rec[i]));
        used += rec[i].bytes;
        if (rec[i].items > UINT64_MAX - sum)
            return amq__rd_bad(r, at + 16 + 16, "item counts overflow");
        sum += rec[i].items;
    }
    if (used != len)
        return amq__rd_bad(r, AMQ__FRAME_OFF_PAYLOAD_LEN,
                           "stages do not fill the payload");
    if (c->max_bytes != 0 && used > c->max_bytes)
        return amq__rd_bad(r, at_head->max_bytes, "stages exceed max_bytes");
    if (sum != items)
        return amq__rd_bad(r, at_head->items,
                           "item count is not the stages' sum");
    return AMQ_OK;
}

static amq_status t_load(const amq__type *self, amq__rd *r,
                         const uint8_t *payload, size_t len, bool view,
                         const amq_options *opt, amq__obj **out) {
    scal_config c;
    unsigned stages = 0;
    uint64_t items = 0;
    head_at at = {0, 0};
    stage_rec rec[SC_MAX_STAGES];
    amq_scalable *s;
    (void)self;
    AMQ_RETURN_IF_ERR(parse_head(r, &c, &stages, &items, &at));
    AMQ_RETURN_IF_ERR(parse_stages(r, &c, stages, len, items, &at, rec));
    AMQ_RETURN_IF_ERR(alloc_scalable(&c, opt, &s));
    amq_status e0 = reserve(s, stages);
    if (e0 != AMQ_OK) {
        scal_destroy(&s->o);
        return e0;
    }
    for (unsigned i = 0; i < stages; i++) {
        const uint8_t *src = payload + s->o.table_bytes;
        amq_partitioned *st;
        amq_status e = amq__partitioned_make(
            &s->o.mem, rec[i].slice, rec[i].k,
            view ? (const uint64_t *)(const void *)src : NULL, &st);
        if (e != AMQ_OK) {
            scal_destroy(&s->o);
            return e;
        }
        if (!view)
            memcpy(st->words, src, rec[i].bytes);
        amq__partitioned_recount(st);
        st->o.items = rec[i].items;
        s->st[i] = (scal_stage){st, rec[i].cap, rec[i].eps};
        s->nstages = i + 1;
        s->o.table_bytes += rec[i].bytes;
    }
    s->o.items = items;
    *out = &s->o;
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
    .reads = AMQ_READS_MANY,
    .reads_text = "k per stage",
    .kernel_shapes = amq__defaults_only,
    .create = t_create,
    .load = t_load,
    .destroy = scal_destroy,
    .add = scal_add,
    .contains = scal_contains,
    .contains_batch = scal_batch,
    .merge = scal_union,
    .fpr_bound = scal_bound,
    .describe = t_describe,
    .curve = t_curve,
    .params_write = t_params_write,
    .payload_write = t_payload_write,
};
