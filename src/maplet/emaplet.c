/*
 * emaplet.c — the expandable maplet: a map from keys to small values that
 * doubles as keys arrive, without the keys and with its values, on the
 * expandable quotient table (fingerprint/eqf_impl.h) with the value as
 * each entry's payload.
 *
 * The maplet of Bender et al. ("Time to replace your filter", amq/maplet.h)
 * in the growth scheme of InfiniFilter and Aleph (eqf.c): an entry is a
 * variable-length code over a v-bit value. A doubling shortens every code
 * by one bit and carries the value along; so does a widening. Keys added
 * after a doubling get the length plan's longer codes.
 *
 *   put(k, x)  combines x into the entry whose code is k's at full length
 *              when the run holds one, else adds such an entry; a sum
 *              that would pass 2^v - 1 there adds a second entry of the
 *              same code, so counts go to 2^64 - 1 (the total of all, as
 *              amq_filter_items reports it, past that is
 *              AMQ_ERR_OVERFLOW) at one slot for each 2^v - 1.
 *   get(k)     combines the values of every entry matching k: k's own
 *              entries (one of each length its puts met: shortened ones
 *              from before a doubling, a full one after) and those of the
 *              keys that collide with it. So m[k] >= M[k] in the
 *              operator's order, and a key never put is found with
 *              probability at most the bound, sum over entries of 2^-l /
 *              N (eqf.c).
 *   del(k, x)  (sum only) subtracts x from k's matching entries, longest
 *              first, removing those that reach 0; AMQ_ERR_NOT_FOUND
 *              (unchanged) when they hold less than x. Longest first keeps
 *              every other key's total: let k' be another key and c the
 *              length of its common prefix with k's hash. Entries of k
 *              longer than c do not match k'; those of length <= c match
 *              both. k's own puts put A into the first and B into the
 *              second, A + B >= x (the caller deletes what it put). Longest
 *              first takes from the second at most x - A <= B, less than k
 *              itself put there, so what k' sees still holds all of M[k'].
 *
 * Multiset mode, exact keys, merges, value filters and concurrency are
 * the quotient maplet's (maplet.h "maplet"); this one grows instead.
 *
 * Frame: the eqf core's block with payload bits = v (eqf_impl.h), then
 * op u32 (1 sum, 2 max, 3 min, 4 or) | 0 u32 | puts u64 (what
 * amq_filter_items reports: for sum the total of the values, else the
 * puts; never below the entries); the payload is the table.
 */
#include <math.h>
#include <string.h>

#include "fingerprint/eqf_impl.h"
#include "maplet/mqf.h"
#include "type/maplet_ops.h"

#define EM_DEFAULT_V 8
#define EM_MAX_V 32
#define EM_DEFAULT_KEYS 1000 /* the first table, when no capacity is given */
#define EM_DEFAULT_RATE 0.01 /* when only a capacity is given */

typedef struct amq_emaplet {
    amq_eqf e; /* e.o first (o.items: entries); payload bits e.pb = v */
    unsigned op;
    uint64_t weight; /* amq_filter_items: sum, the total; else the puts */
} amq_emaplet;

static inline uint64_t vmax(const amq_emaplet *m) {
    return (UINT64_C(1) << m->e.pb) - 1;
}

/* ---- visits ------------------------------------------------------------------- */

/* What the matching entries of a key hold: their values combined, their
 * total (sum), the longest entry, and the one of full length. */
typedef struct seen {
    unsigned op, full; /* full: the length of a new key's code */
    bool found, over;
    uint64_t value, total;
    uint64_t longest_at, longest_val, full_at, full_val;
    unsigned longest_len;
} seen;

static bool see(void *ctx, uint64_t slot, unsigned len, uint64_t pay) {
    seen *s = ctx;
    s->value = s->found ? mq_combine(s->op, s->value, pay, &s->over) : pay;
    s->total += pay;
    if (!s->found || len > s->longest_len) {
        s->longest_at = slot;
        s->longest_len = len;
        s->longest_val = pay;
    }
    if (len == s->full) {
        s->full_at = slot;
        s->full_val = pay;
    }
    s->found = true;
    return true;
}

static seen look(const amq_emaplet *m, uint64_t h) {
    seen s;
    memset(&s, 0, sizeof s);
    s.op = m->op;
    s.full = m->e.t->width - m->e.pb - 1;
    s.full_at = UINT64_MAX;
    amq__eqf_visit(&m->e, h, see, &s);
    return s;
}

/* ---- maplet calls ------------------------------------------------------------- */

static amq_status em_put(amq__obj *o, uint64_t h, uint64_t v) {
    amq_emaplet *m = (amq_emaplet *)o;
    bool over = false;
    if (v > vmax(m))
        return AMQ_ERR_INVALID;
    if (m->op == AMQ_MAPLET_SUM && v == 0)
        return AMQ_OK; /* a sum of 0 is no entry */
    uint64_t w = m->op == AMQ_MAPLET_SUM ? v : 1, nw;
    if (__builtin_add_overflow(m->weight, w, &nw))
        return AMQ_ERR_OVERFLOW;
    if (amq__eqf_probe(&m->e, h) == AMQ__EQF_NO) { /* a new entry */
        AMQ_RETURN_IF_ERR(amq__eqf_put(&m->e, h, v));
        m->weight = nw;
        return AMQ_OK;
    }
    seen s = look(m, h);
    uint64_t nv =
        s.full_at == UINT64_MAX ? 0 : mq_combine(m->op, s.full_val, v, &over);
    if (s.full_at == UINT64_MAX || over || nv > vmax(m)) /* a new entry */
        AMQ_RETURN_IF_ERR(amq__eqf_put(&m->e, h, v));
    else
        amq__eqf_set_payload(&m->e, s.full_at, nv);
    m->weight = nw;
    return AMQ_OK;
}

/* The loop of puts (v NULL: each of 1), each key's block asked for
 * AMQ__EQF_AHEAD keys ahead. */
static amq_status put_loop(amq__obj *o, const uint64_t *h, const uint64_t *v,
                           size_t n, size_t *done) {
    const amq_eqf *e = &((const amq_emaplet *)o)->e;
    for (size_t i = 0; i < n && i < AMQ__EQF_AHEAD; i++)
        amq__eqf_prefetch(e, h[i]);
    for (size_t i = 0; i < n; i++) {
        if (i + AMQ__EQF_AHEAD < n)
            amq__eqf_prefetch(e, h[i + AMQ__EQF_AHEAD]);
        amq_status st = em_put(o, h[i], v != NULL ? v[i] : 1);
        if (st != AMQ_OK) {
            *done = i;
            return st;
        }
    }
    *done = n;
    return AMQ_OK;
}

static amq_status em_put_batch(amq__obj *o, const uint64_t *h,
                               const uint64_t *v, size_t n, size_t *done) {
    return put_loop(o, h, v, n, done);
}

static amq_status em_get(const amq__obj *o, uint64_t h, uint64_t *v) {
    const amq_emaplet *m = (const amq_emaplet *)o;
    if (amq__eqf_probe(&m->e, h) == AMQ__EQF_NO) {
        *v = 0;
        return AMQ_ERR_NOT_FOUND;
    }
    seen s = look(m, h);
    *v = s.found ? s.value : 0;
    return s.found ? AMQ_OK : AMQ_ERR_NOT_FOUND;
}

static amq_status em_del(amq__obj *o, uint64_t h, uint64_t v) {
    amq_emaplet *m = (amq_emaplet *)o;
    if (m->op != AMQ_MAPLET_SUM)
        return AMQ_ERR_UNSUPPORTED;
    if (v > vmax(m))
        return AMQ_ERR_INVALID;
    if (v == 0)
        return AMQ_OK;
    seen s = look(m, h);
    if (!s.found || s.total < v || m->weight < v)
        return AMQ_ERR_NOT_FOUND;
    m->weight -= v;
    while (v != 0) {
        if (s.longest_val > v) {
            amq__eqf_set_payload(&m->e, s.longest_at, s.longest_val - v);
            return AMQ_OK;
        }
        /* the longest entry holding this value is the longest one (or an
         * entry equal to it) */
        AMQ_RETURN_IF_ERR(amq__eqf_take(&m->e, h, s.longest_val));
        v -= s.longest_val;
        if (v != 0)
            s = look(m, h);
    }
    return AMQ_OK;
}

static void em_shape(const amq__obj *o, amq_maplet_shape *s) {
    const amq_emaplet *m = (const amq_emaplet *)o;
    const amq_qf *t = m->e.t;
    memset(s, 0, sizeof *s);
    s->op = (amq_maplet_op)m->op;
    s->value_bits = m->e.pb;
    s->remainder_bits = t->width - m->e.pb - 1;
    s->slots = t->nslots;
    s->used_slots = t->used;
    s->distinct = t->distinct;
}

/* ---- the filter's calls: add puts 1, remove deletes it (sum) ------------------- */

static amq_status em_add(amq__obj *o, uint64_t h) { return em_put(o, h, 1); }

static amq_status em_add_batch(amq__obj *o, const uint64_t *h, size_t n,
                               size_t *done) {
    return put_loop(o, h, NULL, n, done);
}

static amq_status em_remove(amq__obj *o, uint64_t h) {
    amq_status st = em_del(o, h, 1);
    return st == AMQ_ERR_INVALID ? AMQ_ERR_UNSUPPORTED : st;
}

static bool em_contains(const amq__obj *o, uint64_t h) {
    const amq_emaplet *m = (const amq_emaplet *)o;
    int p = amq__eqf_probe(&m->e, h);
    return p == AMQ__EQF_YES ||
           (p == AMQ__EQF_MAYBE && amq__eqf_any(&m->e, h, 0, vmax(m)));
}

static uint32_t em_caps(const amq__obj *o) {
    const amq_emaplet *m = (const amq_emaplet *)o;
    return AMQ_CAP_GROW | (m->op == AMQ_MAPLET_SUM ? AMQ_CAP_REMOVE : 0u);
}

static uint64_t em_items(const amq__obj *o) {
    return ((const amq_emaplet *)o)->weight;
}

static double em_fpr_bound(const amq__obj *o) {
    return amq__eqf_bound(&((const amq_emaplet *)o)->e);
}

/* ---- construction ------------------------------------------------------------- */

/* op= and v=, the keys the spec and the curve share. */
static amq_status spec_of(amq__spec *spec, unsigned *op, uint64_t *v,
                          amq_diag *diag) {
    static const char *const ops[] = {"sum", "max", "min", "or", NULL};
    unsigned k = 0;
    *v = EM_DEFAULT_V;
    AMQ_RETURN_IF_ERR(amq__spec_word(spec, "op", ops, &k, diag));
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "v", 1, EM_MAX_V, v, NULL, diag));
    *op = k + 1;
    return AMQ_OK;
}

static amq_status t_create(const amq__type *self, amq__spec *spec,
                           uint64_t capacity, double fpr,
                           const amq_options *opt, amq__obj **out,
                           amq_diag *diag) {
    uint64_t v, slots = 0;
    unsigned op, l = 0, growth = 0;
    amq_eqf *e;
    (void)self;
    AMQ_RETURN_IF_ERR(spec_of(spec, &op, &v, diag));
    if (fpr == 0.0 && capacity != 0)
        fpr = EM_DEFAULT_RATE;
    if (capacity == 0 && fpr != 0.0) /* it grows: a small first table */
        capacity = EM_DEFAULT_KEYS;
    AMQ_RETURN_IF_ERR(amq__eqf_shape(spec, capacity, fpr, "emaplet", &slots, &l,
                                     &growth, diag));
    AMQ_RETURN_IF_ERR(amq__eqf_new(sizeof(amq_emaplet), slots, l, growth,
                                   (unsigned)v, false, opt, &e, diag));
    ((amq_emaplet *)e)->op = op;
    e->o.contains = em_contains;
    *out = &e->o;
    return AMQ_OK;
}

static size_t t_describe(const amq__obj *o, char *buf, size_t cap) {
    const amq_emaplet *m = (const amq_emaplet *)o;
    const amq_qf *t = m->e.t;
    const char *op = amq_maplet_op_name((amq_maplet_op)m->op);
    unsigned l = t->width - 1 - m->e.pb;
    if ((t->nslots & (t->nslots - 1)) == 0)
        return amq__describe(buf, cap, "op=%s,v=%u,q=%u,l=%u,growth=%u", op,
                             m->e.pb, amq__qf_ceil_log2(t->nslots), l,
                             m->e.plan.growth);
    return amq__describe(buf, cap, "op=%s,v=%u,slots=%llu,l=%u,growth=%u", op,
                         m->e.pb, (unsigned long long)t->nslots, l,
                         m->e.plan.growth);
}

/* The curve, for a table as built at 95% load: l + 1 + v + 2.125 bits a
 * slot and fpr 0.95 2^-l, l taken as real. */
static amq_status t_curve(const amq__type *self, amq__spec *spec, double x,
                          bool inverse, double *out, amq_diag *diag) {
    uint64_t v, growth;
    unsigned op;
    (void)self;
    uint64_t n = 0, l = 0;
    bool sized = false, has_l = false;
    AMQ_RETURN_IF_ERR(spec_of(spec, &op, &v, diag));
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "growth", 0, AMQ__EQF_MAX_GROWTH,
                                    &growth, NULL, diag));
    AMQ_RETURN_IF_ERR(amq__qf_spec_slots(spec, &n, &sized, diag));
    AMQ_RETURN_IF_ERR(
        amq__spec_u64(spec, "l", 1, AMQ__EQF_MAX_W - 1, &l, &has_l, diag));
    double fixed = 1.0 + (double)v + QF_META_BITS;
    if (has_l) { /* that shape: rate load 2^-l, load = its cost over x */
        double cost =
            ((double)l + fixed) *
            (sized ? 1.0 + (double)amq__qf_default_tail(n) / (double)n : 1.0);
        double q = ldexp(1.0, -(int)l);
        *out = inverse ? cost * q / x : fmin(1.0, cost / x * q);
        return AMQ_OK;
    }
    *out = amq__eqf_curve(fixed, 1.0, x, inverse);
    return AMQ_OK;
}

#define PARAMS_LEN (AMQ__EQF_PARAMS_LEN + 16)

static void t_params_write(const amq__obj *o, amq__wr *w) {
    const amq_emaplet *m = (const amq_emaplet *)o;
    amq__eqf_params_write(&m->e, w);
    amq__wr_u32(w, m->op);
    amq__wr_u32(w, 0);
    amq__wr_u64(w, m->weight);
}

static amq_status t_load(const amq__type *self, amq__rd *rd,
                         const uint8_t *payload, size_t len, bool view,
                         const amq_options *opt, amq__obj **out) {
    uint32_t op;
    amq_eqf *e;
    (void)self;
    AMQ_RETURN_IF_ERR(amq__rd_expect(rd, PARAMS_LEN));
    AMQ_RETURN_IF_ERR(amq__eqf_load(rd, "emaplet", payload, len, view, EM_MAX_V,
                                    false, sizeof(amq_emaplet), opt, &e));
    uint64_t weight;
    size_t at_op = amq__rd_u32(rd, &op);
    amq_status st = amq__rd_zero32(rd);
    size_t at_w = amq__rd_u64(rd, &weight);
    if (st == AMQ_OK && (op < AMQ_MAPLET_SUM || op > AMQ_MAPLET_OR))
        st = amq__rd_bad(rd, at_op, "operator %u", op);
    else if (st == AMQ_OK && e->pb == 0)
        st = amq__rd_bad(rd, at_op - 4, "no value bits");
    else if (st == AMQ_OK && weight < e->o.items)
        st = amq__rd_bad(rd, at_w, "%llu puts for %llu entries",
                         (unsigned long long)weight,
                         (unsigned long long)e->o.items);
    if (st != AMQ_OK) {
        amq__eqf_destroy(&e->o);
        return st;
    }
    ((amq_emaplet *)e)->op = op;
    ((amq_emaplet *)e)->weight = weight;
    e->o.contains = em_contains;
    *out = &e->o;
    return AMQ_OK;
}

#define PARAMS                                                                 \
    "op=sum|max|min|or (default sum), v=VALUE_BITS (1-32, default 8), "        \
    "q=LOG2_SLOTS or slots=HOME_SLOTS (the first size; default from the "      \
    "capacity, 1000 keys without one), l=FINGERPRINT_BITS (of new keys; "      \
    "default from fpr and growth), growth=DOUBLINGS (0-40, default 10)"

static const amq__maplet_ops em_ops = {
    .put = em_put,
    .put_batch = em_put_batch,
    .get = em_get,
    .del = em_del,
    .shape = em_shape,
};

const amq__type amq__type_emaplet = {
    .info = {.name = "emaplet",
             .type_id = AMQ__ID_emaplet,
             .caps = AMQ_CAP_GROW | AMQ_CAP_REMOVE,
             .summary = "expandable maplet: key -> small value, doubles "
                        "when full (values kept)",
             .params = PARAMS,
             .default_hash = AMQ_HASH_XXH3},
    .reads = 2,
    .reads_text = "1-2",
    .kernel_shapes = amq__defaults_only,
    .create = t_create,
    .load = t_load,
    .destroy = amq__eqf_destroy,
    .add = em_add,
    .add_batch = em_add_batch,
    .contains = em_contains,
    .remove = em_remove,
    .caps = em_caps,
    .items = em_items,
    .fpr_bound = em_fpr_bound,
    .size_bytes = amq__eqf_payload_size,
    .describe = t_describe,
    .curve = t_curve,
    .params_write = t_params_write,
    .payload_size = amq__eqf_payload_size,
    .payload_write = amq__eqf_payload_write,
    .maplet = &em_ops,
};
