/*
 * qf_frame.c — a quotient filter from a frame, validated in full before it
 * is used (a crafted frame with a valid checksum must not make a query read
 * out of bounds: every invariant of qf_impl.h is checked), and the generic
 * interface of "qf" and "cqf" (one set of callbacks; the variant is the
 * counting mode).
 */
#include <math.h>
#include <string.h>

#include "fingerprint/qf_codec.h"
#include "type/type.h"

/* ---- validation of loaded tables ----------------------------------------- */

/* AMQ_ERR_CORRUPT about slot `at`, located at its block in the frame's
 * payload (r may be NULL: a live filter's self-check). */
amq_status amq__qf_corrupt(const amq_qf *f, const amq__rd *r, const char *what,
                           uint64_t at) {
    if (r == NULL)
        return AMQ_ERR_CORRUPT;
    return amq__rd_bad(r, r->payload_at + (size_t)(at / 64) * f->bsize,
                       "%s at slot %llu", what, (unsigned long long)at);
}

/* Every group of run [rs, re) decodes, is canonical and increases. */
static amq_status check_run(amq_qf *f, uint64_t rs, uint64_t re,
                            const amq__rd *r) {
    uint64_t pos = rs, prev = 0, tmp[QF_MAX_GROUP];
    bool first = true;
    while (pos < re) {
        group g;
        if (!decode(f, pos, re, &g))
            return amq__qf_corrupt(f, r, "undecodable counter", pos);
        if (!first && g.x <= prev)
            return amq__qf_corrupt(f, r, "remainders out of order", pos);
        if (f->counting) {
            unsigned n = encode(f, g.x, g.count, tmp);
            if (n != g.len)
                return amq__qf_corrupt(f, r, "non-canonical counter", pos);
            for (unsigned i = 0; i < n; i++)
                if (slot_get(f, pos + i) != tmp[i])
                    return amq__qf_corrupt(f, r, "non-canonical counter", pos);
        }
        if (__builtin_add_overflow(f->o.items, g.count, &f->o.items))
            return amq__qf_corrupt(f, r, "count overflow", pos);
        f->distinct++;
        f->used += g.len;
        prev = g.x;
        first = false;
        pos += g.len;
    }
    return AMQ_OK;
}

static amq_status check_free(const amq_qf *f, uint64_t from, uint64_t to,
                             const amq__rd *r) {
    for (uint64_t i = from; i < to; i++)
        if (slot_get2(f, i) != 0)
            return amq__qf_corrupt(f, r, "non-zero free slot", i);
    return AMQ_OK;
}

amq_status amq__qf_validate(amq_qf *f, const amq__rd *r) {
    return amq__qf_validate_with(f, r, check_run);
}

amq_status amq__qf_validate_with(amq_qf *f, const amq__rd *r,
                                 amq__qf_run_check run) {
    uint64_t runs = 0, ends = 0, prev = 0, t = 0;
    for (uint64_t b = 0; b < f->nblocks; b++) {
        uint64_t occ = occ_word(f, b);
        if (b * 64 >= f->nslots && occ != 0)
            return amq__qf_corrupt(f, r, "occupied bit past the home slots",
                                   b * 64);
        runs += amq__popcount64(occ);
        ends += amq__popcount64(rend_word(f, b));
    }
    if (runs != ends)
        return amq__qf_corrupt(f, r, "run ends do not match occupied bits", 0);
    f->o.items = f->distinct = f->used = 0;
    for (uint64_t q = next_occupied(f, 0, f->nslots); q < f->nslots;
         q = next_occupied(f, q + 1, f->nslots)) {
        uint64_t rs = q > prev ? q : prev;
        uint64_t re = select_rend(f, rs, 1, f->nblocks);
        if (re >= f->tslots)
            return amq__qf_corrupt(f, r, "run without an end", rs);
        AMQ_RETURN_IF_ERR(check_free(f, prev, rs, r));
        AMQ_RETURN_IF_ERR(run(f, rs, re + 1, r));
        prev = re + 1;
    }
    AMQ_RETURN_IF_ERR(check_free(f, prev, f->tslots, r));
    if (off_get(f, 0) != 0)
        return amq__qf_corrupt(f, r, "bad offset", 0);
    for (uint64_t k = 1; k < f->nblocks; k++) {
        t = next_off(f, k - 1, t, f->nblocks);
        if (t == QF_NOWHERE ||
            off_get(f, k) != (t < QF_OFF_SAT ? t : QF_OFF_SAT))
            return amq__qf_corrupt(f, r, "bad offset", k * 64);
    }
    return AMQ_OK;
}

/* For tests: full invariant check of a live filter (counters included). */
amq_status amq__qf_check(amq_qf *f) {
    uint64_t items = f->o.items, distinct = f->distinct, used = f->used;
    uint64_t ti = qf_total(f, QF_ITEMS), td = qf_total(f, QF_DISTINCT),
             tu = qf_total(f, QF_USED); /* the bases with the shares */
    amq_status st = amq__qf_validate(f, NULL);
    if (st == AMQ_OK &&
        (f->o.items != ti || f->distinct != td || f->used != tu))
        st = AMQ_ERR_CORRUPT;
    f->o.items = items;
    f->distinct = distinct;
    f->used = used;
    return st;
}

/* ---- the generic interface ----------------------------------------------- */

/* The variant: qf and cqf differ only in the counting mode. */
typedef struct qf_mode {
    const char *name;
    bool counting;
} qf_mode;

static const qf_mode mode_qf = {"qf", false};
static const qf_mode mode_cqf = {"cqf", true};

amq_status amq__qf_spec_slots(amq__spec *spec, uint64_t *n, bool *found,
                              amq_diag *diag) {
    uint64_t q = 0, slots = 0;
    bool has_q, has_slots;
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "q", 6, 56, &q, &has_q, diag));
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "slots", 64, UINT64_C(1) << 56,
                                    &slots, &has_slots, diag));
    if (has_q && has_slots)
        return amq__diag(diag, AMQ_ERR_SPEC, 0, "give q= or slots=, not both");
    if (has_slots && slots % 64 != 0)
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "slots=%llu is not a multiple of 64",
                         (unsigned long long)slots);
    *found = has_q || has_slots;
    if (*found)
        *n = has_q ? UINT64_C(1) << q : slots;
    return AMQ_OK;
}

amq_status amq__qf_shape(amq__spec *spec, uint64_t capacity, double fpr,
                         const amq__qf_bits *key, const char *name, uint64_t *n,
                         unsigned *bits, bool *given, amq_diag *diag) {
    uint64_t r = 0;
    unsigned rr = 0;
    bool has_n = false;
    *given = false;
    AMQ_RETURN_IF_ERR(amq__qf_spec_slots(spec, n, &has_n, diag));
    AMQ_RETURN_IF_ERR(
        amq__spec_u64(spec, key->name, key->min, key->max, &r, given, diag));
    if (!has_n || !*given) {
        uint64_t n2 = 0;
        if (capacity == 0)
            return amq__diag(diag, AMQ_ERR_SPEC, 0,
                             "%s needs a capacity and fpr, or q= (or slots=) "
                             "and %s=",
                             name, key->name);
        amq_status st = amq__qf_size_for(capacity, fpr, &n2, &rr);
        if (st != AMQ_OK)
            return amq__diag(diag, st, 0, "capacity %llu / fpr %g out of range",
                             (unsigned long long)capacity, fpr);
        if (!has_n)
            *n = n2;
    }
    *bits = *given ? (unsigned)r : rr < key->min ? key->min : rr;
    return AMQ_OK;
}

amq_status amq__qf_alloc_diag(uint64_t n, unsigned w, bool counting,
                              const amq_options *opt, amq_qf **out,
                              amq_diag *diag) {
    amq_status st = amq__qf_alloc(n, w, counting, opt, NULL, out);
    if (st == AMQ_ERR_INVALID || st == AMQ_ERR_OVERFLOW)
        return amq__diag(
            diag, st, 0, "%llu slots of %u bits: %s", (unsigned long long)n, w,
            st == AMQ_ERR_OVERFLOW ? "too large" : "invalid shape");
    return st;
}

amq_status amq__qf_create_table(amq__spec *spec, uint64_t capacity, double fpr,
                                bool counting, const char *name,
                                const amq_options *opt, amq_qf **out,
                                amq_diag *diag) {
    const amq__qf_bits key = {"r", counting ? QF_MIN_RBITS_CQF : 1u,
                              AMQ_QF_MAX_RBITS};
    uint64_t n = 0;
    unsigned r = 0;
    bool given;
    AMQ_RETURN_IF_ERR(
        amq__qf_shape(spec, capacity, fpr, &key, name, &n, &r, &given, diag));
    return amq__qf_alloc_diag(n, r, counting, opt, out, diag);
}

static amq_status t_create(const amq__type *self, amq__spec *spec,
                           uint64_t capacity, double fpr,
                           const amq_options *opt, amq__obj **out,
                           amq_diag *diag) {
    const qf_mode *m = self->variant;
    uint64_t conc = 0;
    amq_options o2 = *opt;
    amq_qf *f;
    AMQ_RETURN_IF_ERR(
        amq__spec_u64(spec, "concurrent", 0, 1, &conc, NULL, diag));
    if (conc)
        o2.flags |= AMQ_OPT_CONCURRENT;
    AMQ_RETURN_IF_ERR(amq__qf_create_table(spec, capacity, fpr, m->counting,
                                           m->name, &o2, &f, diag));
    *out = &f->o;
    return AMQ_OK;
}

/* The shape only: concurrent mode is how this process uses the table (a
 * loaded frame gets it from the load options), not part of the frame. */
size_t amq__qf_describe(const amq__obj *o, char *buf, size_t cap) {
    const amq_qf *f = (const amq_qf *)o;
    if ((f->nslots & (f->nslots - 1)) == 0)
        return amq__describe(buf, cap, "q=%u,r=%u",
                             amq__qf_ceil_log2(f->nslots), f->rbits);
    return amq__describe(buf, cap, "slots=%llu,r=%u",
                         (unsigned long long)f->nslots, f->rbits);
}

/* The family's curve: a filter at its maximum load a = 0.95 spends
 * (r + 2.125) / a bits per key and has fpr a * 2^-r; r taken as real. */
double amq__qf_curve(double x, bool inverse) {
    if (inverse) {
        double r = log2(AMQ_QF_MAX_LOAD / x);
        return (r + QF_META_BITS) / AMQ_QF_MAX_LOAD;
    }
    double p = AMQ_QF_MAX_LOAD * exp2(-(AMQ_QF_MAX_LOAD * x - QF_META_BITS));
    return p < 1.0 ? p : 1.0;
}

/* concurrent= does not change the curve and is accepted, so any valid
 * spec has a curve. */
static amq_status t_curve(const amq__type *self, amq__spec *spec, double x,
                          bool inverse, double *out, amq_diag *diag) {
    uint64_t conc;
    (void)self;
    AMQ_RETURN_IF_ERR(
        amq__spec_u64(spec, "concurrent", 0, 1, &conc, NULL, diag));
    *out = amq__qf_curve(x, inverse);
    return AMQ_OK;
}

/* params: N u64 | r u8 | width u8 | mode u8 (1 = counting) | reserved u8 |
 * reserved u32 | items u64 */
#define PARAMS_LEN AMQ__QF_PARAMS_LEN
void amq__qf_params_write(const amq_qf *f, amq__wr *w) {
    amq__wr_u64(w, f->nslots);
    amq__wr_u32(w, (uint32_t)f->rbits | (uint32_t)f->width << 8 |
                       (f->counting ? 1u : 0u) << 16);
    amq__wr_u32(w, 0);
    amq__wr_u64(w, qf_total(f, QF_ITEMS));
}

static void t_params_write(const amq__obj *o, amq__wr *w) {
    amq__qf_params_write((const amq_qf *)o, w);
}

static amq_status load_shape(amq__rd *r, bool counting, const char *name,
                             const uint8_t *payload, size_t len, bool prefix,
                             uint64_t tail, bool view, const amq_options *opt,
                             amq_qf **out) {
    unsigned rmin = counting ? QF_MIN_RBITS_CQF : 1u;
    uint64_t n, items;
    uint32_t shape;
    size_t bytes;
    amq_qf *f;
    size_t at_n = amq__rd_u64(r, &n);
    size_t at_shape = amq__rd_u32(r, &shape);
    AMQ_RETURN_IF_ERR(amq__rd_zero32(r));
    size_t at_items = amq__rd_u64(r, &items);
    unsigned rbits = shape & 0xff, width = (shape >> 8) & 0xff;
    unsigned mode = (shape >> 16) & 0xff;
    if (rbits < rmin || rbits > AMQ_QF_MAX_RBITS)
        return amq__rd_bad(r, at_shape, "%u-bit remainders", rbits);
    if (width != rbits)
        return amq__rd_bad(r, at_shape + 1,
                           "slot width %u with %u-bit "
                           "remainders",
                           width, rbits);
    if (mode != (counting ? 1u : 0u))
        return amq__rd_bad(r, at_shape + 2, "mode %u is not %s's", mode, name);
    if ((shape >> 24) != 0)
        return amq__rd_bad(r, at_shape + 3, "reserved field is not zero");
    if (n < 64 || n % 64 != 0 || n > (UINT64_C(1) << 56))
        return amq__rd_bad(r, at_n, "%llu home slots", (unsigned long long)n);
    if (amq__qf_check_shape(n, rbits, counting) != AMQ_OK)
        return amq__rd_bad(r, at_shape, "%u-bit remainders with %llu slots",
                           rbits, (unsigned long long)n);
    if (tail != 0 &&
        (tail % 64 != 0 || tail < amq__qf_default_tail(n) || tail > n))
        return amq__rd_bad(r, at_n, "a tail of %llu slots after %llu",
                           (unsigned long long)tail, (unsigned long long)n);
    if (amq__qf_table_bytes_tail(n, rbits, tail, &bytes) != AMQ_OK ||
        (prefix ? bytes > len : bytes != len))
        return amq__rd_bad(r, at_n,
                           "%llu slots of %u bits do not match a "
                           "%zu-byte payload",
                           (unsigned long long)n, rbits, len);
    AMQ_RETURN_IF_ERR(tail != 0 ? amq__qf_alloc_tail(n, rbits, tail, opt,
                                                     view ? payload : NULL, &f)
                                : amq__qf_alloc(n, rbits, counting, opt,
                                                view ? payload : NULL, &f));
    if (!view)
        memcpy(f->data, payload, bytes);
    amq_status st = amq__qf_validate(f, r);
    if (st == AMQ_OK && f->o.items != items)
        st = amq__rd_bad(r, at_items,
                         "item count %llu does not match "
                         "the table",
                         (unsigned long long)items);
    if (st != AMQ_OK) {
        amq__qf_destroy(&f->o);
        return st;
    }
    *out = f;
    return AMQ_OK;
}

amq_status amq__qf_load_table(amq__rd *r, bool counting, const char *name,
                              const uint8_t *payload, size_t len, bool prefix,
                              bool view, const amq_options *opt, amq_qf **out) {
    return load_shape(r, counting, name, payload, len, prefix, 0, view, opt,
                      out);
}

amq_status amq__qf_load_table_tail(amq__rd *r, const char *name,
                                   const uint8_t *payload, size_t len,
                                   uint64_t tail, bool view,
                                   const amq_options *opt, amq_qf **out) {
    return load_shape(r, false, name, payload, len, false, tail, view, opt,
                      out);
}

static amq_status t_load(const amq__type *self, amq__rd *r,
                         const uint8_t *payload, size_t len, bool view,
                         const amq_options *opt, amq__obj **out) {
    const qf_mode *m = self->variant;
    amq_qf *f = NULL;
    AMQ_RETURN_IF_ERR(amq__rd_expect(r, PARAMS_LEN));
    AMQ_RETURN_IF_ERR(amq__qf_load_table(r, m->counting, m->name, payload, len,
                                         false, view, opt, &f));
    *out = &f->o;
    return AMQ_OK;
}

#define QF_PARAMS                                                              \
    "q=LOG2_SLOTS (6-56), slots=HOME_SLOTS (multiple of 64, instead of q), "   \
    "r=REMAINDER_BITS (default ceil(log2(1/fpr))), "                           \
    "concurrent=1 (per-region locks: add, remove and queries from many "       \
    "threads; as AMQ_OPT_CONCURRENT)"

/* The updates, lookups, union and bound are qf_ops.c's and quotient.c's
 * (qf_impl.h). */
#define QF_CALLBACKS                                                           \
    .create = t_create, .load = t_load, .destroy = amq__qf_destroy,            \
    .add = amq__qf_add, .add_batch = amq__qf_add_batch,                        \
    .contains = amq__qf_contains, .contains_batch = amq__qf_contains_batch,    \
    .remove = amq__qf_remove, .count = amq__qf_count, .merge = amq__qf_union,  \
    .fpr_bound = amq__qf_fpr_bound, .items = amq__qf_items,                    \
    .describe = amq__qf_describe, .curve = t_curve,                            \
    .params_write = t_params_write

/* Shapes beside the defaults that reach the other kernels (test_kernels):
 * slot widths on both sides of the byte-lane test (r <= 8) and of one
 * word; full tables of a few blocks, where runs spill into the next block,
 * offsets saturate and the last block is asked; cqf counters from
 * colliding fingerprints (r = 3); the concurrent form. */
static const char *const qf_shapes[] = {
    "qf:concurrent=1",   "qf:r=8",  "qf:r=9",       "qf:r=12",
    "qf:r=15",           "qf:r=16", "qf:slots=128", "qf:slots=192,r=3",
    "qf:slots=128,r=20", NULL};
static const char *const cqf_shapes[] = {
    "cqf:r=16", "cqf:r=11", "cqf:slots=128,r=3", "cqf:slots=256,r=8", NULL};

const amq__type amq__type_qf = {
    .info = {.name = "qf",
             .type_id = AMQ__ID_qf,
             .caps = AMQ_CAP_REMOVE | AMQ_CAP_COUNT | AMQ_CAP_UNION |
                     AMQ_CAP_CONCURRENT,
             .summary = "rank-and-select quotient filter (copies per key)",
             .params = QF_PARAMS,
             .default_hash = AMQ_HASH_XXH3},
    .reads = 2,
    .reads_text = "1-2",
    .kernel_shapes = qf_shapes,
    .variant = &mode_qf,
    QF_CALLBACKS};

const amq__type amq__type_cqf = {
    .info = {.name = "cqf",
             .type_id = AMQ__ID_cqf,
             .caps = AMQ_CAP_REMOVE | AMQ_CAP_COUNT | AMQ_CAP_UNION |
                     AMQ_CAP_CONCURRENT,
             .summary = "counting quotient filter (variable-length counters)",
             .params = QF_PARAMS,
             .default_hash = AMQ_HASH_XXH3},
    .reads = 2,
    .reads_text = "1-2",
    .kernel_shapes = cqf_shapes,
    .variant = &mode_cqf,
    QF_CALLBACKS};
