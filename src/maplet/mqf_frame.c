/*
 * mqf_frame.c — the quotient maplet as a registered type ("maplet"): its
 * spec, its frame, and its descriptor, whose filter callbacks (add puts
 * the value 1) and maplet calls (type/maplet_ops.h) are mqf_ops.c's and
 * mqf_table.c's.
 *
 * Frame parameters (after the generic block):
 *
 *   N u64 | r u8 | w u8 | v u8 | op u8 | flags u8 | K u8 | 0 u16 | items u64
 *
 * w = r + v is the slot width; flags bit 0 is multiset mode; K is the key
 * width of exact mode (0 otherwise), which fixes r = K - floor(log2 N).
 * The payload is the quotient filter's table (qf_impl.h) with the slots of
 * mqf.h; loading checks every invariant of both before the maplet is used.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "maplet/mqf.h"
#include "type/maplet_ops.h"

#define MQ_DEFAULT_V 8
#define MQ_MIN_KBITS 8

static const char *const op_names[] = {"sum", "max", "min", "or"};

/* ---- sizes ------------------------------------------------------------------ */

/* Exact mode: r = K - floor(log2 N), so N 2^r >= 2^K (injective
 * fingerprints); N is a power of two when K = 64 (the fingerprint must fit
 * 64 bits) and at most 2^(K-1) (r >= 1). */
static amq_status exact_shape(uint64_t *n, unsigned k, unsigned *r) {
    unsigned lg = 63u - (unsigned)__builtin_clzll(*n);
    if (k == 64 && (*n & (*n - 1)) != 0)
        *n = UINT64_C(1) << ++lg;
    if (lg >= k) {
        lg = k - 1;
        *n = UINT64_C(1) << lg;
    }
    if (*n < 64)
        return AMQ_ERR_INVALID;
    *r = k - lg;
    return *r <= AMQ_QF_MAX_RBITS ? AMQ_OK : AMQ_ERR_INVALID;
}

/* Home slots for capacity keys at <= 95% load. */
static amq_status slots_for(uint64_t capacity, uint64_t *n) {
    double slots = ceil((double)capacity / AMQ_QF_MAX_LOAD);
    if (!(slots < 0x1p56))
        return AMQ_ERR_OVERFLOW;
    *n = ((uint64_t)slots + 63) / 64 * 64;
    return AMQ_OK;
}

/* ---- the spec ---------------------------------------------------------------- */

typedef struct mq_spec {
    uint64_t n, r, v, op, multiset, kbits, conc;
    bool has_n, has_r, has_k;
} mq_spec;

/* op=NAME, the one spec value that is a word. */
static amq_status read_op(amq__spec *spec, uint64_t *op, amq_diag *diag) {
    for (size_t i = 0; i < spec->nkv; i++) {
        amq__spec_kv *kv = &spec->kv[i];
        if (strcmp(kv->key, "op") != 0)
            continue;
        kv->used = true;
        for (unsigned k = 0; k < 4; k++)
            if (strcmp(kv->val, op_names[k]) == 0) {
                *op = k + 1;
                return AMQ_OK;
            }
        return amq__diag(diag, AMQ_ERR_SPEC, kv->offset,
                         "'op' must be sum, max, min or or, got '%s'", kv->val);
    }
    return AMQ_OK;
}

/* The keys a maplet spec and its curve share. */
static amq_status read_common(amq__spec *spec, mq_spec *p, amq_diag *diag) {
    p->v = MQ_DEFAULT_V;
    p->op = AMQ_MAPLET_SUM;
    AMQ_RETURN_IF_ERR(read_op(spec, &p->op, diag));
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "v", 1, 64, &p->v, NULL, diag));
    AMQ_RETURN_IF_ERR(
        amq__spec_u64(spec, "multiset", 0, 1, &p->multiset, NULL, diag));
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "kbits", MQ_MIN_KBITS, 64, &p->kbits,
                                    &p->has_k, diag));
    return amq__spec_u64(spec, "concurrent", 0, 1, &p->conc, NULL, diag);
}

static amq_status read_spec(amq__spec *spec, mq_spec *p, amq_diag *diag) {
    AMQ_RETURN_IF_ERR(read_common(spec, p, diag));
    AMQ_RETURN_IF_ERR(amq__qf_spec_slots(spec, &p->n, &p->has_n, diag));
    AMQ_RETURN_IF_ERR(
        amq__spec_u64(spec, "r", 1, AMQ_QF_MAX_RBITS, &p->r, &p->has_r, diag));
    if (p->has_k && p->has_r)
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "kbits= fixes r (exact mode): give one of them");
    return AMQ_OK;
}

/* N and r from the spec and the target. */
static amq_status resolve_shape(const mq_spec *p, uint64_t capacity, double fpr,
                                uint64_t *n, unsigned *r, amq_diag *diag) {
    if ((!p->has_n || (!p->has_r && !p->has_k)) && capacity == 0)
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "maplet needs a capacity and fpr, or q= (or slots=) "
                         "and r= (or kbits=)");
    if (p->has_n)
        *n = p->n;
    else if (slots_for(capacity, n) != AMQ_OK)
        return amq__diag(diag, AMQ_ERR_OVERFLOW, 0, "capacity %llu too large",
                         (unsigned long long)capacity);
    if (p->has_k) {
        if (exact_shape(n, (unsigned)p->kbits, r) != AMQ_OK)
            return amq__diag(diag, AMQ_ERR_SPEC, 0,
                             "%llu slots cannot hold %llu-bit keys exactly",
                             (unsigned long long)*n,
                             (unsigned long long)p->kbits);
        return AMQ_OK;
    }
    if (p->has_r) {
        *r = (unsigned)p->r;
        return AMQ_OK;
    }
    double rr = ceil(-log2(fpr));
    *r = rr < 1 ? 1u : rr > AMQ_QF_MAX_RBITS ? AMQ_QF_MAX_RBITS : (unsigned)rr;
    return AMQ_OK;
}

static amq_status t_create(const amq__type *self, amq__spec *spec,
                           uint64_t capacity, double fpr,
                           const amq_options *opt, amq__obj **out,
                           amq_diag *diag) {
    mq_spec p = {0};
    uint64_t n = 0;
    unsigned r = 0;
    amq_options o2 = *opt;
    amq_qf *f;
    (void)self;
    AMQ_RETURN_IF_ERR(read_spec(spec, &p, diag));
    AMQ_RETURN_IF_ERR(resolve_shape(&p, capacity, fpr, &n, &r, diag));
    if (p.conc)
        o2.flags |= AMQ_OPT_CONCURRENT;
    amq_status st = amq__qf_alloc_v(n, r, (unsigned)p.v, false, &o2, NULL, &f);
    if (st == AMQ_ERR_INVALID || st == AMQ_ERR_OVERFLOW)
        return amq__diag(diag, st, 0, "%llu slots of %u + %u bits: %s",
                         (unsigned long long)n, r, (unsigned)p.v,
                         st == AMQ_ERR_OVERFLOW ? "too large"
                                                : "invalid shape");
    AMQ_RETURN_IF_ERR(st);
    f->mop = (uint8_t)p.op;
    f->multiset = p.multiset != 0;
    f->kbits = p.has_k ? (unsigned)p.kbits : 0;
    amq__mq_choose_kernel(f);
    *out = &f->o;
    return AMQ_OK;
}

/* ---- the filter callbacks ------------------------------------------------------ */

/* The updates and lookups are mqf_ops.c's, the rebuilding passes
 * mqf_table.c's (mqf.h); freeing, the bound and the fingerprint are the
 * quotient filter's (qf_impl.h). Here: what an instance offers, and its
 * spec. */
static uint32_t t_caps(const amq__obj *o) {
    const amq_qf *f = (const amq_qf *)o;
    uint32_t c = AMQ_CAP_UNION | AMQ_CAP_CONCURRENT;
    if (mq_is_sum(f) || f->multiset)
        c |= AMQ_CAP_REMOVE | AMQ_CAP_COUNT;
    return c;
}

static size_t t_describe(const amq__obj *o, char *buf, size_t cap) {
    const amq_qf *f = (const amq_qf *)o;
    char n[48], r[24] = "", m[16] = "";
    if ((f->nslots & (f->nslots - 1)) == 0)
        snprintf(n, sizeof n, "q=%u", amq__qf_ceil_log2(f->nslots));
    else
        snprintf(n, sizeof n, "slots=%llu", (unsigned long long)f->nslots);
    if (f->kbits)
        snprintf(r, sizeof r, ",kbits=%u", f->kbits);
    else
        snprintf(r, sizeof r, ",r=%u", f->rbits);
    if (f->multiset)
        snprintf(m, sizeof m, ",multiset=1");
    return amq__describe(buf, cap, "op=%s,v=%u%s,%s%s", op_names[f->mop - 1],
                         f->vbits, m, n, r);
}

/* The family's curve: a maplet at its maximum load a = 0.95 spends
 * (r + v + 2.125) / a bits per key for fpr a 2^-r, r taken as real. With
 * r fixed by the spec (r=, or kbits= with the slots), bits per key x
 * means the load a = (1 + E/N)(r + v + 2.125) / x of that shape (E the
 * overflow slots, when N is known), and the rate is the expected share of
 * fingerprints taken, 1 - exp(-a 2^-r): so a describe() string predicts
 * its own maplet at any size, value bits and overflow slots included. */
static amq_status t_curve(const amq__type *self, amq__spec *spec, double x,
                          bool inverse, double *out, amq_diag *diag) {
    mq_spec p = {0};
    uint64_t n = 0;
    unsigned r = 0;
    (void)self;
    AMQ_RETURN_IF_ERR(read_spec(spec, &p, diag));
    double slot = (double)p.v + QF_META_BITS;
    bool sized = p.has_n;
    if (p.has_r || (p.has_k && sized)) {
        AMQ_RETURN_IF_ERR(resolve_shape(&p, 1, 0.5, &n, &r, diag));
        double cost = (r + slot) * (sized ? 1.0 + 128.0 / (double)n : 1.0);
        if (sized && n < 128)
            cost = (r + slot) * 2.0;
        double q = ldexp(1.0, -(int)r);
        *out = inverse ? cost / (-log1p(-x) / q) : -expm1(-(cost / x) * q);
        return AMQ_OK;
    }
    if (inverse) {
        *out = (log2(AMQ_QF_MAX_LOAD / x) + slot) / AMQ_QF_MAX_LOAD;
    } else {
        double fp = AMQ_QF_MAX_LOAD * exp2(-(AMQ_QF_MAX_LOAD * x - slot));
        *out = fp < 1.0 ? fp : 1.0;
    }
    return AMQ_OK;
}

/* ---- the frame ------------------------------------------------------------------- */

#define PARAMS_LEN 24

static void t_params_write(const amq__obj *o, amq__wr *w) {
    const amq_qf *f = (const amq_qf *)o;
    amq__wr_u64(w, f->nslots);
    amq__wr_u32(w, (uint32_t)f->rbits | (uint32_t)f->width << 8 |
                       (uint32_t)f->vbits << 16 | (uint32_t)f->mop << 24);
    amq__wr_u32(w, (uint32_t)f->multiset | (uint32_t)f->kbits << 8);
    amq__wr_u64(w, qf_total((const amq_qf *)o, QF_ITEMS));
}

typedef struct mq_params {
    uint64_t n, items;
    unsigned r, w, v, op, flags, k;
} mq_params;

/* Every field, before anything is allocated; a diagnostic points at the
 * field it is about (at: N, the r/w/v/op word, the flags/K word). */
static amq_status check_params(amq__rd *r, const mq_params *p,
                               const size_t at[3], size_t len) {
    size_t bytes;
    uint64_t n = p->n;
    unsigned rr;
    if (n < 64 || n % 64 != 0 || n > (UINT64_C(1) << 56))
        return amq__rd_bad(r, at[0], "%llu home slots", (unsigned long long)n);
    if (p->r < 1 || p->r > AMQ_QF_MAX_RBITS ||
        amq__qf_check_shape(n, p->r, false) != AMQ_OK)
        return amq__rd_bad(r, at[1], "%u-bit remainders with %llu slots", p->r,
                           (unsigned long long)n);
    if (p->v < 1 || p->v > 64)
        return amq__rd_bad(r, at[1] + 2, "%u-bit values", p->v);
    if (p->w != p->r + p->v)
        return amq__rd_bad(r, at[1] + 1,
                           "slot width %u with %u-bit "
                           "remainders and %u-bit values",
                           p->w, p->r, p->v);
    if (p->op < 1 || p->op > 4)
        return amq__rd_bad(r, at[1] + 3, "unknown operator %u", p->op);
    if (p->flags > 1)
        return amq__rd_bad(r, at[2], "unknown mode flags %#x", p->flags);
    if (p->k != 0 &&
        (p->k < MQ_MIN_KBITS || p->k > 64 ||
         exact_shape(&n, p->k, &rr) != AMQ_OK || n != p->n || rr != p->r))
        return amq__rd_bad(r, at[2] + 1,
                           "%u-bit keys are not exact with "
                           "%u-bit remainders and %llu slots",
                           p->k, p->r, (unsigned long long)p->n);
    if (amq__qf_table_bytes(n, p->w, &bytes) != AMQ_OK || bytes != len)
        return amq__rd_bad(r, at[0],
                           "%llu slots of %u bits do not match a "
                           "%zu-byte payload",
                           (unsigned long long)n, p->w, len);
    return AMQ_OK;
}

/* The stored item count against the table's: equal for sum counters and
 * multisets, at least the fingerprints otherwise. */
static amq_status check_items(amq__rd *r, const amq_qf *f, uint64_t items,
                              size_t at) {
    bool exact = mq_counters(f) || f->multiset;
    if (exact ? items != f->o.items : items < f->o.items)
        return amq__rd_bad(r, at, "item count %llu does not match the table",
                           (unsigned long long)items);
    return AMQ_OK;
}

static amq_status t_load(const amq__type *self, amq__rd *r,
                         const uint8_t *payload, size_t len, bool view,
                         const amq_options *opt, amq__obj **out) {
    mq_params p;
    uint32_t shape, mode;
    amq_qf *f;
    (void)self;
    size_t at[3], at_items;
    AMQ_RETURN_IF_ERR(amq__rd_expect(r, PARAMS_LEN));
    at[0] = amq__rd_u64(r, &p.n);
    at[1] = amq__rd_u32(r, &shape);
    at[2] = amq__rd_u32(r, &mode);
    at_items = amq__rd_u64(r, &p.items);
    p.r = shape & 0xff, p.w = (shape >> 8) & 0xff;
    p.v = (shape >> 16) & 0xff, p.op = shape >> 24;
    p.flags = mode & 0xff, p.k = (mode >> 8) & 0xff;
    if ((mode >> 16) != 0)
        return amq__rd_bad(r, at[2] + 2, "reserved field is not zero");
    AMQ_RETURN_IF_ERR(check_params(r, &p, at, len));
    AMQ_RETURN_IF_ERR(
        amq__qf_alloc_v(p.n, p.r, p.v, false, opt, view ? payload : NULL, &f));
    f->mop = (uint8_t)p.op;
    f->multiset = p.flags & 1;
    f->kbits = p.k;
    amq__mq_choose_kernel(f);
    if (!view)
        memcpy(f->data, payload, len);
    amq_status st = amq__mq_validate(f, r);
    if (st == AMQ_OK)
        st = check_items(r, f, p.items, at_items);
    if (st != AMQ_OK) {
        amq__qf_destroy(&f->o);
        return st;
    }
    f->o.items = p.items;
    *out = &f->o;
    return AMQ_OK;
}

/* ---- the maplet calls ------------------------------------------------------------- */

/* D = 0.95 N keys over N 2^r fingerprints. */
static double m_capacity_bound(const amq__obj *o) {
    return AMQ_QF_MAX_LOAD * ldexp(1.0, -(int)((const amq_qf *)o)->rbits);
}
static void m_shape(const amq__obj *o, amq_maplet_shape *s) {
    const amq_qf *f = (const amq_qf *)o;
    *s = (amq_maplet_shape){(amq_maplet_op)f->mop,
                            f->vbits,
                            f->multiset,
                            false,
                            f->kbits,
                            f->rbits,
                            f->nslots,
                            qf_total(f, QF_USED),
                            qf_total(f, QF_DISTINCT)};
}

static const amq__maplet_ops mq_ops = {.put = amq__mq_put,
                                       .put_batch = amq__mq_put_batch,
                                       .get = amq__mq_get,
                                       .get_batch = amq__mq_get_batch,
                                       .get_all = amq__mq_get_all,
                                       .del = amq__mq_del,
                                       .drop_value = amq__mq_drop_value,
                                       .keep_values = amq__mq_keep_values,
                                       .resize = amq__mq_resize,
                                       .capacity_bound = m_capacity_bound,
                                       .shape = m_shape,
                                       .fingerprint = amq__qf_fingerprint,
                                       .exact_hash = amq__mq_exact_hash,
                                       .exact_key = amq__mq_exact_key,
                                       .next = amq__mq_next};

const amq__type amq__type_maplet = {
    .info = {.name = "maplet",
             .type_id = AMQ__ID_maplet,
             .caps = AMQ_CAP_REMOVE | AMQ_CAP_COUNT | AMQ_CAP_UNION |
                     AMQ_CAP_CONCURRENT,
             .summary = "quotient maplet: key -> value (sum/max/min/or) in "
                        "the filter's slots",
             .params = "op=sum|max|min|or (how values combine; default sum), "
                       "v=VALUE_BITS (1-64, default 8), multiset=1 (one slot "
                       "per pair: delete for every op), kbits=K (exact mode "
                       "for integer keys < 2^K, 8-64), concurrent=1, "
                       "q=LOG2_SLOTS, slots=HOME_SLOTS, r=REMAINDER_BITS",
             .default_hash = AMQ_HASH_XXH3},
    .reads = 2,
    .reads_text = "1-2",
    .kernel_shapes = amq__defaults_only,
    .create = t_create,
    .load = t_load,
    .destroy = amq__qf_destroy,
    .add = amq__mq_add,
    .add_batch = amq__mq_add_batch,
    .contains = amq__mq_contains,
    .contains_batch = amq__mq_contains_batch,
    .remove = amq__mq_remove,
    .count = amq__mq_count,
    .merge = amq__mq_merge,
    .caps = t_caps,
    .fpr_bound = amq__qf_fpr_bound,
    .items = amq__qf_items,
    .describe = t_describe,
    .curve = t_curve,
    .params_write = t_params_write,
    .maplet = &mq_ops};
