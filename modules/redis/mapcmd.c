/*
 * mapcmd.c — AMQ.MAP.*: maplets (include/amq/maplet.h), approximate maps
 * from items to small unsigned values, kept as AMQ values (the same data
 * type, blob, RDB, DUMP/RESTORE, SCANDUMP/LOADCHUNK as any AMQ.* filter).
 *
 *   AMQ.MAP.RESERVE key SPEC [CAPACITY n] [ERROR e] [HASH ..] [SEED s]
 *                   [HASHKEY hex]          an empty quotient maplet
 *   AMQ.MAP.BUILD key SPEC [ERROR e] [CAPACITY n] PAIRS item value...
 *                                          any maplet from all its pairs
 *                                          (the only way to an smaplet)
 *   AMQ.MAP.PUT key item value...          m[item] = m[item] (+) value;
 *                                          per pair: the value now held
 *   AMQ.MAP.GET / MGET key item...         the value, nil when absent
 *   AMQ.MAP.GETALL key item                multiset: every stored value
 *   AMQ.MAP.DEL key item [value]           undo a put (sum, multiset)
 *   AMQ.MAP.MERGE dst src...               dst = dst (+) src...
 *   AMQ.MAP.INFO key                       operator, width, mode, slots...
 *
 * Items are byte strings hashed by the maplet's hasher, except in exact
 * mode (kbits=K): there an item is a decimal integer below 2^K, hashed by
 * the maplet's bijection, so the map is exact (no false positives, no
 * collisions). Values are decimal integers of at most v bits (the spec's
 * v=); replies are integers, or a bulk decimal string for a value above
 * 2^63 - 1 (a sum may reach 2^64 - 1).
 *
 * Argument errors that do not depend on the stored state (arity, numbers,
 * widths, exact-mode items) refuse the whole command before anything
 * changes. A put that finds the maplet full resizes it (amq_maplet_resize:
 * twice the slots, fingerprints kept, the bound at the new capacity
 * doubles) and retries; when it cannot grow (r = 1, or the memory limit)
 * that pair gets a "full" error in the reply array, as BF.INSERT does.
 * A put is a function of the stored bytes, so a fully applied PUT is
 * replicated verbatim; a partly applied one is replicated as the pairs
 * that went in, so a replica with other memory limits cannot diverge.
 */
#include <stdio.h>
#include <string.h>

#include "amqr.h"

#define MAP_DEFAULT_ERROR 0.01
#define GETALL_STACK 16
#define MAP_MAX_CAPACITY (1ull << 40)

static const char not_maplet[] =
    "WRONGTYPE the key holds an amq filter that is not a maplet";

/* ---- helpers ---------------------------------------------------------------- */

static bool admit_map(host *h, const rval *v) {
    if (amq_maplet_is(v->u.amq.f))
        return true;
    r_err(h, not_maplet);
    return false;
}

/* The maplet at argv[1]: NULL after a reply (missing: "ERR not found"). */
static rval *need_map(host *h) {
    rval *v = key_need(h, 1, FAM_AMQ, "ERR", "ERR not found");
    return v != NULL && admit_map(h, v) ? v : NULL;
}

/* For queries: KEY_OK (*v set), KEY_EMPTY (*v NULL), -1 after a reply. */
static int open_map(host *h, rval **v) {
    int st = key_open(h, 1, FAM_AMQ, v, "ERR");
    if (st == KEY_OK && !admit_map(h, *v))
        return -1;
    return st;
}

static amq_maplet_shape shape_of(const rval *v) {
    amq_maplet_shape s;
    memset(&s, 0, sizeof s);
    amq_maplet_get_shape(v->u.amq.f, &s);
    return s;
}

/* The hash an item is stored under: the maplet's hasher, or in exact mode
 * the bijection of the item read as an integer below 2^K. */
static bool item_hash(const amq_maplet *m, unsigned kbits, const rarg *a,
                      uint64_t *hash) {
    uint64_t key;
    if (kbits == 0) {
        *hash = amq_filter_hash(m, a->p, a->n);
        return true;
    }
    return arg_u64(a, &key) && amq_maplet_exact_hash(m, key, hash) == AMQ_OK;
}

static int r_bad_item(host *h, unsigned kbits) {
    char msg[96];
    snprintf(msg, sizeof msg,
             "ERR an exact maplet's items are integers below 2^%u", kbits);
    return r_err(h, msg);
}

static bool value_arg(const rarg *a, unsigned vbits, uint64_t *x) {
    return arg_u64(a, x) && (vbits >= 64 || *x >> vbits == 0);
}

static int r_bad_value(host *h, unsigned vbits) {
    char msg[96];
    snprintf(msg, sizeof msg,
             "ERR a value is an integer of at most %u bits (0 to 2^%u - 1)",
             vbits, vbits);
    return r_err(h, msg);
}

/* Values above 2^63 - 1 do not fit a RESP integer: a decimal string. */
static void r_u64(host *h, uint64_t x) {
    char s[24];
    if (x <= (uint64_t)INT64_MAX) {
        h->ops->r_int(h, (long long)x);
        return;
    }
    int n = snprintf(s, sizeof s, "%llu", (unsigned long long)x);
    h->ops->r_str(h, s, (size_t)n);
}

static int r_map_status(host *h, const char *what, amq_status st) {
    char msg[160];
    if (st == AMQ_ERR_FULL)
        snprintf(msg, sizeof msg,
                 "ERR %s: the maplet is full and cannot "
                 "grow (remainder bits or memory limit)",
                 what);
    else if (st == AMQ_ERR_OVERFLOW)
        snprintf(msg, sizeof msg, "ERR %s: the sum would pass 2^64 - 1", what);
    else
        snprintf(msg, sizeof msg, "ERR %s: %s", what, amq_strerror(st));
    return r_err(h, msg);
}

static int r_static(host *h) {
    return r_err(h, "ERR a static maplet is read-only: rebuild it with "
                    "AMQ.MAP.BUILD");
}

/* Put one pair; a full maplet is resized (twice the slots) while the
 * memory limit allows, then the put is retried. */
static amq_status put_grow(host *h, rval *v, uint64_t hash, uint64_t x) {
    amq_status st = amq_maplet_put_hash(v->u.amq.f, hash, x);
    while (st == AMQ_ERR_FULL) {
        if (!h->ops->budget(h, 2.0 * (double)v->bytes) ||
            amq_maplet_resize(v->u.amq.f) != AMQ_OK)
            return AMQ_ERR_FULL;
        st = amq_maplet_put_hash(v->u.amq.f, hash, x);
    }
    return st;
}

/* Pairs argv[from], argv[from + 1], ... as hashes and values (n of them,
 * in one allocation the caller frees with rv_sys_free); NULL after a
 * reply. */
static uint64_t *read_pairs(host *h, const rval *v, int from, size_t *n) {
    amq_maplet_shape s = shape_of(v);
    *n = (size_t)(h->argc - from) / 2;
    uint64_t *hv = rv_sys_alloc((*n ? *n : 1) * 2 * sizeof *hv);
    if (hv == NULL)
        return r_err(h, "ERR out of memory"), NULL;
    for (size_t i = 0; i < *n; i++) {
        const rarg *item = &h->argv[from + 2 * i];
        if (!item_hash(v->u.amq.f, s.key_bits, item, &hv[i])) {
            rv_sys_free(hv);
            return r_bad_item(h, s.key_bits), NULL;
        }
        if (!value_arg(item + 1, s.value_bits, &hv[*n + i])) {
            rv_sys_free(hv);
            return r_bad_value(h, s.value_bits), NULL;
        }
    }
    return hv;
}

/* The pairs of a PUT that went in, as a PUT of those alone. */
static void replicate_some(host *h, const uint8_t *in, size_t n, size_t nin) {
    rarg *a = rv_sys_alloc((1 + 2 * nin) * sizeof *a);
    if (a == NULL)
        return;
    a[0] = h->argv[1];
    for (size_t i = 0, j = 1; i < n; i++)
        if (in[i]) {
            a[j++] = h->argv[2 + 2 * i];
            a[j++] = h->argv[3 + 2 * i];
        }
    h->ops->replicate(h, "AMQ.MAP.PUT", a, (int)(1 + 2 * nin));
    rv_sys_free(a);
}

/* ---- creation ---------------------------------------------------------------- */

static bool admit_dynamic_map(host *h, const amq_type_info *ti) {
    if (ti->caps & AMQ_CAP_STATIC)
        return r_err(h, "ERR a static maplet is built from all its pairs: "
                        "use AMQ.MAP.BUILD"),
               false;
    if (strcmp(ti->name, "maplet") != 0)
        return r_err(h, "ERR not a maplet spec (maplet:op=sum|max|min|or,"
                        "v=BITS[,multiset=1][,kbits=K])"),
               false;
    return true;
}

int amq_map_reserve(host *h) {
    static const reserve_kind k = {"AMQ.MAP.RESERVE", "amq.map.reserve",
                                   admit_dynamic_map};
    return reserve_as(h, &k);
}

/* AMQ.MAP.BUILD's options and where its pairs start. */
typedef struct build_args {
    char spec[256];
    double eps;
    uint64_t cap; /* 0: the number of pairs */
    int from;     /* argv index of the first item */
    size_t n;     /* pairs */
} build_args;

/* SPEC [ERROR e] [CAPACITY n] PAIRS item value...; false after a reply. */
static bool parse_build(host *h, build_args *b) {
    long long cap;
    memset(b, 0, sizeof *b);
    b->eps = MAP_DEFAULT_ERROR;
    if (!spec_arg(h, &h->argv[2], b->spec, sizeof b->spec))
        return false;
    int i = 3;
    for (; i < h->argc && !arg_is(&h->argv[i], "PAIRS"); i += 2) {
        const rarg *o = &h->argv[i], *x = &h->argv[i + 1];
        if (i + 1 >= h->argc)
            return r_arity(h), false;
        if (arg_is(o, "ERROR")) {
            if (!arg_double(x, &b->eps) || !(b->eps > 0 && b->eps < 1))
                return r_err(h, "ERR bad error rate"), false;
        } else if (arg_is(o, "CAPACITY")) {
            if (!arg_ll(x, &cap) || cap < 1 ||
                (unsigned long long)cap > MAP_MAX_CAPACITY)
                return r_err(h, "ERR bad capacity"), false;
            b->cap = (uint64_t)cap;
        } else {
            return r_err(h, "ERR unknown argument received (pairs follow "
                            "the word PAIRS)"),
                   false;
        }
    }
    if (i >= h->argc || (h->argc - i - 1) % 2 != 0)
        return r_arity(h), false;
    b->from = i + 1;
    b->n = (size_t)(h->argc - b->from) / 2;
    return true;
}

/* A static maplet from the pairs, hashed by the spec's hasher (the
 * library checks the values' width, naming the pair). */
static bool build_static(host *h, const build_args *b, rval *v) {
    amq_hasher hs;
    amq_options o0;
    amq_diag diag = {0, {0}};
    size_t n = b->n;
    memset(&o0, 0, sizeof o0);
    amq_status st = amq_filter_resolve_hasher(b->spec, &o0, &hs);
    if (st != AMQ_OK)
        return r_status(h, "hash", st), false;
    uint64_t *hv = rv_sys_alloc((n ? n : 1) * 2 * sizeof *hv);
    if (hv == NULL)
        return r_err(h, "ERR out of memory"), false;
    for (size_t i = 0; i < n; i++) {
        const rarg *item = &h->argv[b->from + 2 * (int)i];
        hv[i] = amq_hash64(&hs, item->p, item->n);
        if (!arg_u64(item + 1, &hv[n + i])) {
            rv_sys_free(hv);
            return r_err(h, "ERR a value is an unsigned decimal integer"),
                   false;
        }
    }
    amq_options o = rv_options(v);
    o.hash = hs.kind;
    o.hash_seed = hs.seed;
    st = amq_maplet_build(b->spec, hv, hv + n, n, b->eps, &o, &v->u.amq.f,
                          &diag);
    rv_sys_free(hv);
    if (st != AMQ_OK)
        return reply_status_diag(h, st, &diag), false;
    return true;
}

/* A quotient maplet sized for CAPACITY (default: the pairs), the pairs
 * put in order (so exact-mode items are read through the new maplet's
 * bijection). */
static bool build_dynamic(host *h, const build_args *b, rval *v) {
    amq_diag diag = {0, {0}};
    size_t n;
    uint64_t cap = b->cap ? b->cap : b->n ? b->n : 1;
    amq_options o = rv_options(v);
    amq_status st =
        amq_maplet_new(b->spec, cap, b->eps, &o, &v->u.amq.f, &diag);
    if (st != AMQ_OK)
        return reply_status_diag(h, st, &diag), false;
    uint64_t *hv = read_pairs(h, v, b->from, &n);
    if (hv == NULL)
        return false;
    for (size_t i = 0; i < n && st == AMQ_OK; i++)
        st = put_grow(h, v, hv[i], hv[n + i]);
    rv_sys_free(hv);
    if (st != AMQ_OK)
        return r_map_status(h, "put", st), false;
    return true;
}

int amq_map_build(host *h) {
    build_args b;
    rval *v;
    double bits = 64;
    if (h->argc < 4)
        return r_arity(h);
    if (!parse_build(h, &b))
        return 0;
    if (key_open(h, 1, FAM_AMQ, &v, "ERR") != KEY_EMPTY)
        return v != NULL ? r_err(h, "ERR item exists") : 0;
    const amq_type_info *ti = amq_filter_type_find(b.spec);
    if (ti == NULL)
        return r_err(h, "ERR unknown type (AMQ.TYPES lists them)");
    bool is_static = strcmp(ti->name, "smaplet") == 0;
    if (!is_static && strcmp(ti->name, "maplet") != 0)
        return r_err(h, "ERR not a maplet spec (maplet:... or smaplet:...)");
    amq_curve_bits(b.spec, b.eps, &bits);
    double keys = (double)(b.cap > b.n ? b.cap : b.n);
    if (!h->ops->budget(h, keys * (bits > 0 ? bits : 64) / 8 +
                               (double)b.n * 48 + 4096))
        return r_err(h, "ERR too many pairs for the memory limit");
    if ((v = rv_new(FAM_AMQ)) == NULL)
        return r_err(h, "ERR out of memory");
    if (!(is_static ? build_static : build_dynamic)(h, &b, v)) {
        rv_free(v);
        return 0;
    }
    if (!store_or_reply(h, v))
        return 0;
    h->ops->replicate_verbatim(h);
    h->ops->notify(h, "amq.map.build", 1);
    r_ok(h);
    return 0;
}

/* ---- updates ------------------------------------------------------------------ */

int amq_map_put(host *h) {
    rval *v;
    size_t n, nin = 0;
    if (h->argc < 4 || h->argc % 2 != 0)
        return r_arity(h);
    if ((v = need_map(h)) == NULL)
        return 0;
    if (shape_of(v).is_static)
        return r_static(h);
    uint64_t *hv = read_pairs(h, v, 2, &n);
    uint8_t *in = hv ? rv_sys_alloc(n) : NULL;
    if (in == NULL) {
        if (hv != NULL)
            r_err(h, "ERR out of memory");
        rv_sys_free(hv);
        return 0;
    }
    h->ops->r_arr(h, (long)n);
    for (size_t i = 0; i < n; i++) {
        uint64_t now = 0;
        amq_status st = put_grow(h, v, hv[i], hv[n + i]);
        in[i] = st == AMQ_OK;
        if (st != AMQ_OK) {
            r_map_status(h, "put", st);
            continue;
        }
        nin++;
        if (amq_maplet_get_hash(v->u.amq.f, hv[i], &now) == AMQ_OK)
            r_u64(h, now);
        else
            h->ops->r_null(h); /* a sum of 0: no entry */
    }
    if (nin == n)
        h->ops->replicate_verbatim(h);
    else if (nin > 0)
        replicate_some(h, in, n, nin);
    if (nin > 0)
        h->ops->notify(h, "amq.map.put", 1);
    rv_sys_free(in);
    rv_sys_free(hv);
    return 0;
}

int amq_map_del(host *h) {
    rval *v;
    uint64_t hash, x = 1;
    if (h->argc != 3 && h->argc != 4)
        return r_arity(h);
    if ((v = need_map(h)) == NULL)
        return 0;
    amq_maplet_shape s = shape_of(v);
    if (s.is_static)
        return r_static(h);
    if (!item_hash(v->u.amq.f, s.key_bits, &h->argv[2], &hash))
        return r_bad_item(h, s.key_bits);
    if (h->argc == 4 && !value_arg(&h->argv[3], s.value_bits, &x))
        return r_bad_value(h, s.value_bits);
    amq_status st = amq_maplet_delete_hash(v->u.amq.f, hash, x);
    if (st == AMQ_ERR_NOT_FOUND) {
        h->ops->r_int(h, 0);
        return 0;
    }
    if (st == AMQ_ERR_UNSUPPORTED)
        return r_err(h, "ERR delete: a maplet combining with max, min or or "
                        "cannot take a value back (reserve it with "
                        "multiset=1)");
    if (st != AMQ_OK)
        return r_map_status(h, "delete", st);
    h->ops->replicate_verbatim(h);
    h->ops->notify(h, "amq.map.del", 1);
    h->ops->r_int(h, 1);
    return 0;
}

int amq_map_merge(host *h) { return merge_as(h, admit_map, "amq.map.merge"); }

/* ---- queries ------------------------------------------------------------------- */

/* KEY ITEM of a one-item query: the maplet and the item's hash, or NULL
 * after a reply (`empty` answers for a missing key). */
static rval *query_item(host *h, uint64_t *hash, void (*empty)(host *h)) {
    rval *v;
    if (h->argc != 3)
        return r_arity(h), NULL;
    int st = open_map(h, &v);
    if (st == KEY_EMPTY)
        empty(h);
    if (st != KEY_OK)
        return NULL;
    unsigned kbits = shape_of(v).key_bits;
    if (!item_hash(v->u.amq.f, kbits, &h->argv[2], hash))
        return r_bad_item(h, kbits), NULL;
    return v;
}

static void r_nil(host *h) { h->ops->r_null(h); }
static void r_no_values(host *h) { h->ops->r_arr(h, 0); }

int amq_map_get(host *h) {
    uint64_t hash, x;
    rval *v = query_item(h, &hash, r_nil);
    if (v == NULL)
        return 0;
    if (amq_maplet_get_hash(v->u.amq.f, hash, &x) == AMQ_OK)
        r_u64(h, x);
    else
        h->ops->r_null(h);
    return 0;
}

int amq_map_mget(host *h) {
    rval *v;
    if (h->argc < 3)
        return r_arity(h);
    int st = open_map(h, &v);
    if (st < 0)
        return 0;
    size_t n = (size_t)(h->argc - 2);
    if (st == KEY_EMPTY) {
        h->ops->r_arr(h, (long)n);
        for (size_t i = 0; i < n; i++)
            h->ops->r_null(h);
        return 0;
    }
    unsigned kbits = shape_of(v).key_bits;
    uint64_t *hv = rv_sys_alloc(n * (2 * sizeof *hv + 1));
    if (hv == NULL)
        return r_err(h, "ERR out of memory");
    uint8_t *found = (uint8_t *)(hv + 2 * n);
    for (size_t i = 0; i < n; i++)
        if (!item_hash(v->u.amq.f, kbits, &h->argv[2 + i], &hv[i])) {
            rv_sys_free(hv);
            return r_bad_item(h, kbits);
        }
    amq_maplet_get_batch(v->u.amq.f, hv, n, hv + n, found);
    h->ops->r_arr(h, (long)n);
    for (size_t i = 0; i < n; i++) {
        if (found[i])
            r_u64(h, hv[n + i]);
        else
            h->ops->r_null(h);
    }
    rv_sys_free(hv);
    return 0;
}

int amq_map_getall(host *h) {
    uint64_t hash, stack[GETALL_STACK], *vals = stack;
    size_t n = 0;
    rval *v = query_item(h, &hash, r_no_values);
    if (v == NULL)
        return 0;
    amq_status gs =
        amq_maplet_get_all(v->u.amq.f, hash, stack, GETALL_STACK, &n);
    if (gs == AMQ_OK && n > GETALL_STACK) {
        if ((vals = rv_sys_alloc(n * sizeof *vals)) == NULL)
            return r_err(h, "ERR out of memory");
        gs = amq_maplet_get_all(v->u.amq.f, hash, vals, n, &n);
    }
    if (gs != AMQ_OK)
        n = 0;
    h->ops->r_arr(h, (long)n);
    for (size_t i = 0; i < n; i++)
        r_u64(h, vals[i]);
    if (vals != stack)
        rv_sys_free(vals);
    return 0;
}

int amq_map_info(host *h) {
    rval *v;
    char d[512];
    if (h->argc != 2)
        return r_arity(h);
    if ((v = need_map(h)) == NULL)
        return 0;
    const amq_filter *f = v->u.amq.f;
    amq_maplet_shape s = shape_of(v);
    const char *op = amq_maplet_op_name(s.op);
    const char *mode = s.multiset ? "multiset" : "combine";
    const char *kind = s.is_static ? "static" : "quotient";
    amq_filter_describe(f, d, sizeof d);
    h->ops->r_map(h, 14);
    h->ops->r_simple(h, "Spec");
    h->ops->r_str(h, d, strlen(d));
    h->ops->r_simple(h, "Kind");
    h->ops->r_str(h, kind, strlen(kind));
    h->ops->r_simple(h, "Operator");
    h->ops->r_str(h, op, strlen(op));
    h->ops->r_simple(h, "Value bits");
    h->ops->r_int(h, s.value_bits);
    h->ops->r_simple(h, "Mode");
    h->ops->r_str(h, mode, strlen(mode));
    h->ops->r_simple(h, "Exact key bits");
    h->ops->r_int(h, s.key_bits);
    h->ops->r_simple(h, "Remainder bits");
    h->ops->r_int(h, s.remainder_bits);
    h->ops->r_simple(h, "Slots");
    h->ops->r_int(h, (long long)s.slots);
    h->ops->r_simple(h, "Used slots");
    h->ops->r_int(h, (long long)s.used_slots);
    h->ops->r_simple(h, "Distinct");
    h->ops->r_int(h, (long long)s.distinct);
    h->ops->r_simple(h, "Memory");
    h->ops->r_int(h, (long long)rv_memory(v));
    h->ops->r_simple(h, "Bits per key");
    h->ops->r_double(h, amq_filter_bits_per_key(f));
    h->ops->r_simple(h, "Error bound");
    h->ops->r_double(h, amq_filter_fpr_bound(f));
    h->ops->r_simple(h, "Error bound at capacity");
    h->ops->r_double(h, s.is_static ? amq_filter_fpr_bound(f)
                                    : amq_maplet_capacity_bound(f));
    return 0;
}
