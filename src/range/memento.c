/*
 * memento.c — the Memento filter: a range filter that takes inserts and
 * deletes and grows with its keys (Eslami & Dayan, "Memento Filter: A
 * Fast, Dynamic, and Robust Range Filter", SIGMOD 2025), on amq's
 * expandable quotient table (fingerprint/eqf_impl.h).
 *
 * A 64-bit key x is a prefix p = x >> m and a memento x mod 2^m, m the
 * least with 2^m >= L (spec range=L, the range length the target is for).
 * The table holds, for every key, an entry whose code is the fingerprint
 * of H(p) and whose payload is the memento: the keys of one prefix share
 * one fingerprint and run, with their mementos in order after it. A query
 * [lo, hi] visits each prefix it touches (two at most when hi - lo < L)
 * and answers yes when the prefix's run holds an entry whose code matches
 * and whose memento lies in the query's part of that prefix.
 *
 * H(p) = mix64(mix64(p ^ s1) + s2), with (s1, s2) drawn from the seed
 * (and the secret key when one is given). It is one-to-one, so two
 * prefixes never share a full hash; the bound assumes, as for every
 * hashed filter, that queries are chosen without the seed.
 *
 * Bound. A visited prefix p none of whose keys is in the query answers
 * yes only if some code of another prefix p' matches H(p) in p's run —
 * the memento test is not counted: a stranger's memento may lie anywhere.
 * A code of length l matches with probability at most 2^-l / N + 2^-64
 * (eqf.c), and the keys of one prefix share their code, so the chance is
 * at most P = sum over a run's distinct codes of that, the core's bound
 * with codes counted once a run. A range of len keys visits at most
 * V(len) = ceil((len - 1) / 2^m) + 1 prefixes, so
 *
 *     P[false positive] <= min(1, V(len) P),
 *
 * for every query range chosen without the seed, however it lies against
 * the keys: a query that starts just past a key meets that key's memento,
 * which is outside it, and answers no. Built for a rate e on ranges of
 * L keys, the core's target is e / V(L) (e / 2 for L > 1), and the
 * growth plan of eqf.c keeps P under it to 2^growth times the first
 * capacity and under twice it beyond. A range visiting more than
 * MAX_VISITS prefixes answers yes (the bound is 1 there).
 *
 * Space: l + 1 + m + 2.125 bits a key at 95% load (fingerprint,
 * delimiter, memento, the qf's metadata), whatever the keys: a prefix's
 * run near the table's end lengthens the table's tail rather than
 * doubling it (eqf.c). The paper's layout keeps one
 * fingerprint per prefix and a list of mementos after it, so keys dense
 * enough to share prefixes cost about m + 2 bits each there; this table
 * repeats the fingerprint in every slot, the price of the qf's sorted
 * runs and of doubling slot by slot (docs/structures.md, "Memento").
 */
#include <math.h>
#include <string.h>

#include "amq/range.h"
#include "core/bits.h"
#include "fingerprint/eqf_impl.h"
#include "type/range_ops.h"

#define RANGE_MAX (UINT64_C(1) << 32) /* m <= 32: room for the codes */
#define MAX_VISITS 64u                /* prefixes a query visits at most */
#define DEFAULT_RATE 0.01 /* on ranges of `range` keys, with no target */
#define DEFAULT_KEYS 1000 /* the first table, when no capacity is given */

typedef struct amq_memento {
    amq_eqf e;       /* e.o first; payload bits e.pb = m */
    uint64_t s1, s2; /* the prefix hash's salts */
    uint64_t span;   /* the range length the target is for */
    amq_range_keys keys;
} amq_memento;

static inline uint64_t prefix_hash(const amq_memento *f, uint64_t p) {
    return amq__mix64(amq__mix64(p ^ f->s1) + f->s2);
}

static inline unsigned mbits(const amq_memento *f) { return f->e.pb; }

/* The least m with 2^m >= span. */
static unsigned bits_for(uint64_t span) {
    unsigned m = 0;
    while ((UINT64_C(1) << m) < span)
        m++;
    return m;
}

/* Prefixes a range of len keys visits at most (len >= 1). */
static uint64_t visits(uint64_t len, unsigned m) {
    uint64_t d = len - 1;
    return (d >> m) + ((d & ((UINT64_C(1) << m) - 1)) != 0) + 1;
}

/* ---- queries ---------------------------------------------------------------- */

static bool mm_range(const amq__obj *o, uint64_t lo, uint64_t hi) {
    const amq_memento *f = (const amq_memento *)o;
    unsigned m = mbits(f);
    uint64_t mask = (UINT64_C(1) << m) - 1, pl = lo >> m, ph = hi >> m;
    if (o->items == 0)
        return false;
    if (ph - pl >= MAX_VISITS)
        return true;
    for (uint64_t p = pl;; p++) {
        uint64_t a = p == pl ? lo & mask : 0, b = p == ph ? hi & mask : mask;
        uint64_t h = prefix_hash(f, p);
        if (amq__eqf_probe(&f->e, h) != AMQ__EQF_NO &&
            amq__eqf_any(&f->e, h, a, b))
            return true;
        if (p == ph)
            return false;
    }
}

static bool mm_contains(const amq__obj *o, uint64_t x) {
    return mm_range(o, x, x);
}

static amq_status mm_count(const amq__obj *o, uint64_t x, uint64_t *out) {
    const amq_memento *f = (const amq_memento *)o;
    uint64_t mu = x & ((UINT64_C(1) << mbits(f)) - 1);
    *out = amq__eqf_matches(&f->e, prefix_hash(f, x >> mbits(f)), mu, mu);
    return AMQ_OK;
}

static double mm_range_bound(const amq__obj *o, uint64_t len) {
    const amq_memento *f = (const amq_memento *)o;
    if (o->items == 0 || len == 0)
        return 0.0;
    uint64_t v = visits(len, mbits(f));
    if (v > MAX_VISITS)
        return 1.0;
    double b = (double)v * amq__eqf_bound(&f->e);
    return b < 1.0 ? b : 1.0;
}

static double mm_fpr_bound(const amq__obj *o) { return mm_range_bound(o, 1); }

static amq_range_keys mm_keys(const amq__obj *o) {
    return ((const amq_memento *)o)->keys;
}

static uint64_t mm_span(const amq__obj *o) {
    return ((const amq_memento *)o)->span;
}

/* ---- updates ---------------------------------------------------------------- */

static amq_status mm_add(amq__obj *o, uint64_t x) {
    amq_memento *f = (amq_memento *)o;
    unsigned m = mbits(f);
    return amq__eqf_put(&f->e, prefix_hash(f, x >> m),
                        x & ((UINT64_C(1) << m) - 1));
}

static amq_status mm_remove(amq__obj *o, uint64_t x) {
    amq_memento *f = (amq_memento *)o;
    unsigned m = mbits(f);
    return amq__eqf_take(&f->e, prefix_hash(f, x >> m),
                         x & ((UINT64_C(1) << m) - 1));
}

/* ---- construction ------------------------------------------------------------ */

/* (s1, s2) from the seed and, when given, the secret key. */
static void draw_salts(const amq_options *opt, uint64_t *s1, uint64_t *s2) {
    uint64_t s = opt->hash_seed;
    if (opt->hash_key != NULL)
        s ^= amq__mix64(amq__get_u64(opt->hash_key)) ^
             amq__get_u64(opt->hash_key + 8);
    *s1 = amq__mix64(s ^ UINT64_C(0x6d656d656e746f31));
    *s2 = amq__mix64(s + UINT64_C(0x9e3779b97f4a7c15));
}

/* What a spec fixes beside the table's shape: the range length the
 * target is for and the key form. */
static amq_status spec_of(amq__spec *spec, uint64_t *span, amq_range_keys *keys,
                          amq_diag *diag) {
    static const char *const forms[] = {"int", "bytes", NULL};
    unsigned k = AMQ_RANGE_KEYS_INT;
    *span = 1;
    AMQ_RETURN_IF_ERR(
        amq__spec_u64(spec, "range", 1, RANGE_MAX, span, NULL, diag));
    AMQ_RETURN_IF_ERR(amq__spec_word(spec, "keys", forms, &k, diag));
    *keys = (amq_range_keys)k;
    return AMQ_OK;
}

static amq_status t_create(const amq__type *self, amq__spec *spec,
                           uint64_t capacity, double fpr,
                           const amq_options *opt, amq__obj **out,
                           amq_diag *diag) {
    uint64_t span, slots = 0;
    unsigned l = 0, growth = 0;
    amq_range_keys keys;
    amq_eqf *e;
    (void)self;
    AMQ_RETURN_IF_ERR(spec_of(spec, &span, &keys, diag));
    unsigned m = bits_for(span);
    /* it grows: a small first table when only the rate is given, the
     * default rate when only the capacity is (neither: the spec's q= or
     * slots= and l=) */
    if (fpr == 0.0 && capacity != 0)
        fpr = DEFAULT_RATE;
    if (capacity == 0 && fpr != 0.0)
        capacity = DEFAULT_KEYS;
    double point = fpr == 0.0 ? 0.0 : fpr / (double)visits(span, m);
    AMQ_RETURN_IF_ERR(amq__eqf_shape(spec, capacity, point, "memento", &slots,
                                     &l, &growth, diag));
    AMQ_RETURN_IF_ERR(amq__eqf_new(sizeof(amq_memento), slots, l, growth, m,
                                   true, opt, &e, diag));
    amq_memento *f = (amq_memento *)e;
    draw_salts(opt, &f->s1, &f->s2);
    e->o.contains = mm_contains;
    f->span = span;
    f->keys = keys;
    *out = &e->o;
    return AMQ_OK;
}

static size_t t_describe(const amq__obj *o, char *buf, size_t cap) {
    const amq_memento *f = (const amq_memento *)o;
    const amq_qf *t = f->e.t;
    const char *kf = f->keys == AMQ_RANGE_KEYS_BYTES ? ",keys=bytes" : "";
    unsigned l = t->width - 1 - f->e.pb;
    if ((t->nslots & (t->nslots - 1)) == 0)
        return amq__describe(buf, cap, "range=%llu,q=%u,l=%u,growth=%u%s",
                             (unsigned long long)f->span,
                             amq__qf_ceil_log2(t->nslots), l, f->e.plan.growth,
                             kf);
    return amq__describe(buf, cap, "range=%llu,slots=%llu,l=%u,growth=%u%s",
                         (unsigned long long)f->span,
                         (unsigned long long)t->nslots, l, f->e.plan.growth,
                         kf);
}

/* The curve: x bits a key <-> the rate on ranges of `range` keys, for a
 * table as built at 95% load: l + 1 + m + 2.125 bits a slot, and
 * V(range) 0.95 2^-l, l taken as real. */
static amq_status t_curve(const amq__type *self, amq__spec *spec, double x,
                          bool inverse, double *out, amq_diag *diag) {
    uint64_t span, growth;
    amq_range_keys keys;
    (void)self;
    AMQ_RETURN_IF_ERR(spec_of(spec, &span, &keys, diag));
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "growth", 0, AMQ__EQF_MAX_GROWTH,
                                    &growth, NULL, diag));
    unsigned m = bits_for(span);
    *out = amq__eqf_curve(1.0 + m + QF_META_BITS, (double)visits(span, m), x,
                          inverse);
    return AMQ_OK;
}

/* params: the core's block (eqf_impl.h; payload bits = m), then s1 u64 |
 * s2 u64 | range u64 | keys u32 (0 integers, 1 byte strings) | 0 u32 */
#define PARAMS_LEN (AMQ__EQF_PARAMS_LEN + 32)

static void t_params_write(const amq__obj *o, amq__wr *w) {
    const amq_memento *f = (const amq_memento *)o;
    amq__eqf_params_write(&f->e, w);
    amq__wr_u64(w, f->s1);
    amq__wr_u64(w, f->s2);
    amq__wr_u64(w, f->span);
    amq__wr_u32(w, (uint32_t)f->keys);
    amq__wr_u32(w, 0);
}

static amq_status t_load(const amq__type *self, amq__rd *rd,
                         const uint8_t *payload, size_t len, bool view,
                         const amq_options *opt, amq__obj **out) {
    uint64_t s1, s2, span;
    uint32_t keys;
    amq_eqf *e;
    (void)self;
    AMQ_RETURN_IF_ERR(amq__rd_expect(rd, PARAMS_LEN));
    AMQ_RETURN_IF_ERR(amq__eqf_load(rd, "memento", payload, len, view,
                                    bits_for(RANGE_MAX), true,
                                    sizeof(amq_memento), opt, &e));
    amq_memento *f = (amq_memento *)e;
    amq__rd_u64(rd, &s1);
    amq__rd_u64(rd, &s2);
    size_t at_span = amq__rd_u64(rd, &span);
    size_t at_keys = amq__rd_u32(rd, &keys);
    amq_status st = amq__rd_zero32(rd);
    if (st == AMQ_OK && (span == 0 || span > RANGE_MAX))
        st = amq__rd_bad(rd, at_span, "range %llu outside 1..2^32",
                         (unsigned long long)span);
    else if (st == AMQ_OK && bits_for(span) != e->pb)
        st = amq__rd_bad(rd, at_span, "range %llu with %u-bit mementos",
                         (unsigned long long)span, e->pb);
    else if (st == AMQ_OK && keys > AMQ_RANGE_KEYS_BYTES)
        st = amq__rd_bad(rd, at_keys, "key form %u", keys);
    if (st != AMQ_OK) {
        amq__eqf_destroy(&e->o);
        return st;
    }
    f->s1 = s1;
    f->s2 = s2;
    e->o.contains = mm_contains;
    f->span = span;
    f->keys = (amq_range_keys)keys;
    *out = &e->o;
    return AMQ_OK;
}

#define PARAMS                                                                 \
    "range=L (the target rate, 1% if none is given, holds for ranges of L "    \
    "keys; 1..2^32, default 1), q=LOG2_SLOTS or slots=HOME_SLOTS (the "        \
    "first size; default from the capacity, 1000 keys without one), "          \
    "l=FINGERPRINT_BITS (of new keys; default from fpr and growth), "          \
    "growth=DOUBLINGS (0-40, default 10), keys=int|bytes"

static const amq__range_ops mm_range_ops = {.contains = mm_range,
                                            .bound = mm_range_bound,
                                            .keys = mm_keys,
                                            .design_length = mm_span};

const amq__type amq__type_memento = {
    .info = {.name = "memento",
             .type_id = AMQ__ID_memento,
             .caps =
                 AMQ_CAP_REMOVE | AMQ_CAP_COUNT | AMQ_CAP_GROW | AMQ_CAP_RANGE,
             .summary = "Memento range filter: any key in [lo, hi]? "
                        "(inserts, deletes, grows)",
             .params = PARAMS,
             .default_hash = AMQ_HASH_ORDER},
    .reads = 4,
    .reads_text = "2 (4 for a range)",
    .kernel_shapes = amq__defaults_only,
    .create = t_create,
    .load = t_load,
    .destroy = amq__eqf_destroy,
    .add = mm_add,
    .contains = mm_contains,
    .remove = mm_remove,
    .count = mm_count,
    .fpr_bound = mm_fpr_bound,
    .size_bytes = amq__eqf_payload_size,
    .describe = t_describe,
    .curve = t_curve,
    .params_write = t_params_write,
    .payload_size = amq__eqf_payload_size,
    .payload_write = amq__eqf_payload_write,
    .range = &mm_range_ops,
};
