/*
 * amqcmd.c — AMQ.*: every amq type by its spec string (amq help types),
 * through the generic interface (include/amq/filter.h).
 *
 *   AMQ.RESERVE key SPEC [CAPACITY n] [ERROR e] [HASH xxh3|xxh64|siphash]
 *               [SEED s] [HASHKEY 32-hex]        an empty dynamic filter
 *   AMQ.BUILD key SPEC item...                   a static one (xor, fuse,
 *                                                ribbon) or any type, built
 *                                                from all its items at once
 *   AMQ.ADD/MADD/EXISTS/MEXISTS/DEL/CARD key ...  the usual operations
 *   AMQ.INFO key       spec, items, bytes, bits/key, target and certified
 *                      false-positive bound
 *   AMQ.MERGE dst src...                          union (same shape)
 *   AMQ.ADAPT key item...                         report false positives
 *                      to an adaptive filter (aqf)
 *   AMQ.DUMP key / AMQ.LOAD key frame             a whole amq frame: what
 *                      `amq build -o` writes and `amq info` reads
 *
 * A SipHash filter reserved without HASHKEY draws a random key on the
 * primary; the command is replicated with that key spelled out, so a
 * replica (and the AOF) builds the same filter. The reserve and the merge
 * are shared with AMQ.MAP.* (mapcmd.c) through reserve_as and merge_as,
 * which take the types they admit.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amqr.h"

#define AMQ_DEFAULT_CAPACITY 1000
#define AMQ_DEFAULT_ERROR 0.01
#define AMQ_GROWN_SPEC "eqf" /* what AMQ.ADD makes of a missing key */
#define AMQ_MAX_CAPACITY (1ull << 40)

static const amq_filter *filter_at(const rval *v, unsigned i) {
    (void)i;
    return v->u.amq.f;
}
static bool f_load(rval *v, unsigned i, unsigned nf, const uint8_t *b,
                   size_t len, char *err, size_t cap) {
    (void)i;
    return rv_one_frame(nf, "AMQ", err, cap) &&
           rv_load_filter(v, b, len, &v->u.amq.f, err, cap);
}
static void destroy(rval *v) { amq_filter_free(v->u.amq.f); }

const fam_ops amq_ops = {
    "amq", "amq-filtr", "AMQ.LOADCHUNK", 0,       NULL, NULL, NULL, filter_at,
    NULL,  NULL,        f_load,          destroy, NULL};

/* ---- helpers -------------------------------------------------------------------- */

bool spec_arg(host *h, const rarg *a, char *buf, size_t cap) {
    if (a->n == 0 || a->n >= cap || memchr(a->p, 0, a->n) != NULL) {
        r_err(h, "ERR bad spec");
        return false;
    }
    memcpy(buf, a->p, a->n);
    buf[a->n] = 0;
    return true;
}

static int read_key(host *h, rval **v) {
    return key_open(h, 1, FAM_AMQ, v, "ERR");
}

static rval *need(host *h) {
    return key_need(h, 1, FAM_AMQ, "ERR", "ERR not found");
}

int reply_status_diag(host *h, amq_status st, const amq_diag *d) {
    char msg[240];
    if (d->message[0] == 0) /* statuses without detail (out of memory) */
        snprintf(msg, sizeof msg, "ERR %s", amq_strerror(st));
    else
        snprintf(msg, sizeof msg, "ERR %s: %s", amq_strerror(st), d->message);
    return r_err(h, msg);
}

static bool hex_key(const rarg *a, uint8_t key[AMQ_HASH_KEY_BYTES]) {
    if (a->n != 2 * AMQ_HASH_KEY_BYTES)
        return false;
    for (size_t i = 0; i < a->n; i++) {
        char c = a->p[i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return false;
        key[i / 2] = (uint8_t)(i % 2 ? key[i / 2] | d : d << 4);
    }
    return true;
}

typedef struct reserve_args {
    char spec[256];
    long long cap;
    double eps;
    amq_options opt;
    uint8_t key[AMQ_HASH_KEY_BYTES];
} reserve_args;

static bool parse_hash(host *h, const rarg *a, amq_hash_kind *k) {
    if (arg_is(a, "xxh3"))
        *k = AMQ_HASH_XXH3;
    else if (arg_is(a, "xxh64"))
        *k = AMQ_HASH_XXH64;
    else if (arg_is(a, "siphash"))
        *k = AMQ_HASH_SIPHASH;
    else
        return r_err(h, "ERR HASH is xxh3, xxh64 or siphash"), false;
    return true;
}

static bool parse_reserve(host *h, reserve_args *r) {
    long long seed;
    memset(r, 0, sizeof *r);
    r->cap = AMQ_DEFAULT_CAPACITY;
    r->eps = AMQ_DEFAULT_ERROR;
    if (!spec_arg(h, &h->argv[2], r->spec, sizeof r->spec))
        return false;
    for (int i = 3; i < h->argc; i += 2) {
        const rarg *o = &h->argv[i], *x = &h->argv[i + 1];
        if (i + 1 >= h->argc)
            return r_arity(h), false;
        if (arg_is(o, "CAPACITY")) {
            if (!arg_ll(x, &r->cap) || r->cap < 1 ||
                (unsigned long long)r->cap > AMQ_MAX_CAPACITY)
                return r_err(h, "ERR bad capacity"), false;
        } else if (arg_is(o, "ERROR")) {
            if (!arg_double(x, &r->eps) || !(r->eps > 0 && r->eps < 1))
                return r_err(h, "ERR bad error rate"), false;
        } else if (arg_is(o, "HASH")) {
            if (!parse_hash(h, x, &r->opt.hash))
                return false;
        } else if (arg_is(o, "SEED")) {
            if (!arg_ll(x, &seed))
                return r_err(h, "ERR bad seed"), false;
            r->opt.hash_seed = (uint64_t)seed;
        } else if (arg_is(o, "HASHKEY")) {
            if (!hex_key(x, r->key))
                return r_err(h, "ERR HASHKEY is 32 hex digits"), false;
            r->opt.hash_key = r->key;
        } else {
            return r_err(h, "ERR unknown argument received"), false;
        }
    }
    return true;
}

/* The reserve with every choice explicit, for replicas and the AOF. */
static void replicate_reserve(host *h, const char *cmd, const reserve_args *r,
                              const amq_hasher *hs) {
    char cap[24], eps[40], seed[24], key[2 * AMQ_HASH_KEY_BYTES + 1];
    static const char *kinds[AMQ_HASH_KIND_COUNT_] = {"", "xxh3", "xxh64",
                                                      "siphash", "order"};
    snprintf(cap, sizeof cap, "%lld", r->cap);
    snprintf(eps, sizeof eps, "%.17g", r->eps);
    snprintf(seed, sizeof seed, "%lld", (long long)hs->seed);
    for (int i = 0; i < AMQ_HASH_KEY_BYTES; i++)
        snprintf(key + 2 * i, 3, "%02x", hs->key[i]);
    rarg a[12] = {h->argv[1],      h->argv[2],
                  {"CAPACITY", 8}, {cap, strlen(cap)},
                  {"ERROR", 5},    {eps, strlen(eps)},
                  {"HASH", 4},     {kinds[hs->kind], strlen(kinds[hs->kind])},
                  {"SEED", 4},     {seed, strlen(seed)},
                  {"HASHKEY", 7},  {key, strlen(key)}};
    h->ops->replicate(h, cmd, a, hs->kind == AMQ_HASH_SIPHASH ? 12 : 10);
}

static void wrote(host *h, const char *event) {
    h->ops->replicate_verbatim(h);
    h->ops->notify(h, event, 1);
}

/* ---- commands ------------------------------------------------------------------------ */

int reserve_as(host *h, const reserve_kind *k) {
    reserve_args r;
    amq_hasher hs;
    amq_diag diag = {0, {0}};
    double bits = 64;
    rval *v;
    if (h->argc < 3 || h->argc % 2 == 0)
        return r_arity(h);
    if (!parse_reserve(h, &r))
        return 0;
    if (read_key(h, &v) != KEY_EMPTY)
        return v != NULL ? r_err(h, "ERR item exists") : 0;
    const amq_type_info *ti = amq_filter_type_find(r.spec);
    if (ti == NULL)
        return r_err(h, "ERR unknown type (AMQ.TYPES lists them)");
    if (!k->admit(h, ti))
        return 0;
    amq_status st = amq_filter_resolve_hasher(r.spec, &r.opt, &hs);
    if (st != AMQ_OK)
        return r_status(h, "hash", st);
    amq_curve_bits(r.spec, r.eps, &bits);
    if (!h->ops->budget(h, (double)r.cap * (bits > 0 ? bits : 64) / 8 + 512))
        return r_err(h, "ERR capacity too large for the memory limit");
    v = rv_new(FAM_AMQ);
    if (v == NULL)
        return r_err(h, "ERR out of memory");
    amq_options o = rv_options(v);
    o.hash = hs.kind;
    o.hash_seed = hs.seed;
    o.hash_key = hs.key;
    st = amq_filter_new(r.spec, (uint64_t)r.cap, r.eps, &o, &v->u.amq.f, &diag);
    if (st != AMQ_OK) {
        rv_free(v);
        return reply_status_diag(h, st, &diag);
    }
    if (!store_or_reply(h, v))
        return 0;
    replicate_reserve(h, k->cmd, &r, &hs);
    h->ops->notify(h, k->event, 1);
    r_ok(h);
    return 0;
}

static bool admit_dynamic(host *h, const amq_type_info *ti) {
    if (ti->caps & AMQ_CAP_STATIC)
        return r_err(h, "ERR a static type is built from all its items: "
                        "use AMQ.BUILD"),
               false;
    return true;
}

int amq_reserve(host *h) {
    static const reserve_kind k = {"AMQ.RESERVE", "amq.reserve", admit_dynamic};
    return reserve_as(h, &k);
}

/* ---- range filters ----------------------------------------------------- */

#define NOT_INT_ITEM                                                           \
    "ERR the items of an integer range filter are integers (0 .. 2^64-1; "     \
    "keys=bytes for strings)"

/* A range filter's key from an argument: an integer's digits for the
 * integer form, else the order map of the bytes. */
static bool range_value(int form, const rarg *a, uint64_t *out) {
    char buf[24], *end;
    if (form != AMQ_RANGE_KEYS_INT) {
        *out = amq_range_key(a->p, a->n);
        return true;
    }
    if (a->n == 0 || a->n >= sizeof buf || a->p[0] < '0' || a->p[0] > '9' ||
        (a->p[0] == '0' && a->n > 1))
        return false;
    memcpy(buf, a->p, a->n);
    buf[a->n] = 0;
    errno = 0;
    unsigned long long v = strtoull(buf, &end, 10);
    if (errno != 0 || *end != 0)
        return false;
    *out = v;
    return true;
}

/* The key form a range spec builds (an empty filter says), or -1. */
static int spec_key_form(const char *spec) {
    amq_filter *f = NULL;
    if (amq_filter_build(spec, NULL, 0, 0.0, NULL, &f, NULL) != AMQ_OK)
        return -1;
    int form = amq_range_key_form(f);
    amq_filter_free(f);
    return form;
}

/* AMQ.RANGE.QUERY key lo hi: 1 when a key may lie in [lo, hi], 0 when
 * none does. */
int amq_range(host *h) {
    rval *v;
    uint64_t lo, hi;
    bool maybe = false;
    if (h->argc != 4)
        return r_arity(h);
    if ((v = need(h)) == NULL)
        return 0;
    const amq_filter *f = v->u.amq.f;
    if (!(amq_filter_caps(f) & AMQ_CAP_RANGE))
        return r_err(h, "ERR not a range filter (AMQ.RANGE.BUILD)");
    int form = amq_range_key_form(f);
    if (!range_value(form, &h->argv[2], &lo) ||
        !range_value(form, &h->argv[3], &hi))
        return r_err(h, "ERR the range's ends are integers (0 .. 2^64-1) for "
                        "this filter");
    amq_status st = amq_range_query(f, lo, hi, &maybe);
    if (st == AMQ_ERR_INVALID)
        return r_err(h, "ERR the range is empty: lo is above hi");
    if (st != AMQ_OK)
        return r_status(h, "range", st);
    h->ops->r_int(h, maybe);
    return 0;
}

/* A new key holding the filter of spec built from argv[first..argc) at
 * rate fpr (0: the type's own). */
static int build_items(host *h, const char *spec, double fpr, int first) {
    amq_hasher hs;
    amq_diag diag = {0, {0}};
    amq_options o0;
    rval *v;
    if (read_key(h, &v) != KEY_EMPTY)
        return v != NULL ? r_err(h, "ERR item exists") : 0;
    const amq_type_info *ti = amq_filter_type_find(spec);
    if (ti == NULL)
        return r_err(h, "ERR unknown type (AMQ.TYPES lists them)");
    size_t n = (size_t)(h->argc - first);
    if (!h->ops->budget(h, (double)n * 48 + 4096))
        return r_err(h, "ERR too many items for the memory limit");
    memset(&o0, 0, sizeof o0);
    amq_status st = amq_filter_resolve_hasher(spec, &o0, &hs);
    if (st != AMQ_OK)
        return r_status(h, "hash", st);
    uint64_t *x = rv_sys_alloc(n * sizeof *x);
    v = x ? rv_new(FAM_AMQ) : NULL;
    if (v == NULL) {
        rv_sys_free(x);
        return r_err(h, "ERR out of memory");
    }
    int form = (ti->caps & AMQ_CAP_RANGE) ? spec_key_form(spec) : -1;
    for (size_t i = 0; i < n; i++) {
        const rarg *a = &h->argv[first + (int)i];
        if (form != AMQ_RANGE_KEYS_INT) {
            x[i] = amq_hash64(&hs, a->p, a->n);
            continue;
        }
        if (!range_value(form, a, &x[i])) { /* the integer form: digits */
            rv_sys_free(x);
            rv_free(v);
            return r_err(h, NOT_INT_ITEM);
        }
    }
    amq_options o = rv_options(v);
    o.hash = hs.kind;
    o.hash_seed = hs.seed;
    if (fpr == 0.0 && !(ti->caps & AMQ_CAP_STATIC))
        fpr = AMQ_DEFAULT_ERROR;
    st = amq_filter_build(spec, x, n, fpr, &o, &v->u.amq.f, &diag);
    rv_sys_free(x);
    if (st != AMQ_OK) {
        rv_free(v);
        return reply_status_diag(h, st, &diag);
    }
    if (!store_or_reply(h, v))
        return 0;
    wrote(h, "amq.build");
    r_ok(h);
    return 0;
}

int amq_build(host *h) {
    char spec[256];
    if (h->argc < 3)
        return r_arity(h);
    if (!spec_arg(h, &h->argv[2], spec, sizeof spec))
        return 0;
    return build_items(h, spec, 0.0, 3);
}

/* AMQ.RANGE.BUILD key [ERROR e] [RANGE L] [KEYS INT|BYTES] ITEMS item...:
 * a grafite filter at rate e (default 1%) for ranges of L keys (default
 * 1), over integers (default) or byte strings. */
int amq_range_build(host *h) {
    char spec[96];
    double eps = 0.01;
    long long span = 1;
    bool bytes = false;
    int i = 2;
    if (h->argc < 3)
        return r_arity(h);
    for (; i < h->argc && !arg_is(&h->argv[i], "ITEMS"); i += 2) {
        const rarg *o = &h->argv[i], *val = i + 1 < h->argc ? o + 1 : NULL;
        if (val == NULL)
            return r_err(h, "ERR expected ITEMS item...");
        if (arg_is(o, "ERROR")) {
            if (!arg_double(val, &eps) || !(eps > 0 && eps < 1))
                return r_err(h, "ERR ERROR is a rate in (0, 1)");
        } else if (arg_is(o, "RANGE")) {
            if (!arg_ll(val, &span) || span < 1 || span > (1LL << 40))
                return r_err(h, "ERR RANGE is a length in 1 .. 2^40");
        } else if (arg_is(o, "KEYS")) {
            if (!arg_is(val, "INT") && !arg_is(val, "BYTES"))
                return r_err(h, "ERR KEYS is INT or BYTES");
            bytes = arg_is(val, "BYTES");
        } else {
            return r_err(h, "ERR unknown argument received");
        }
    }
    if (i >= h->argc)
        return r_err(h, "ERR expected ITEMS item...");
    snprintf(spec, sizeof spec, "grafite:range=%lld%s", span,
             bytes ? ",keys=bytes" : "");
    return build_items(h, spec, eps, i + 1);
}

/* AMQ.RANGE.BOUND key len: the certified bound for a range of len keys
 * none of which was added. */
int amq_range_bound_cmd(host *h) {
    rval *v;
    long long len;
    if (h->argc != 3)
        return r_arity(h);
    if ((v = need(h)) == NULL)
        return 0;
    if (!(amq_filter_caps(v->u.amq.f) & AMQ_CAP_RANGE))
        return r_err(h, "ERR not a range filter (AMQ.RANGE.BUILD)");
    if (!arg_ll(&h->argv[2], &len) || len < 0)
        return r_err(h, "ERR the length is an integer, 0 or more");
    h->ops->r_double(h, amq_range_fpr_bound(v->u.amq.f, (uint64_t)len));
    return 0;
}

/* The key of an add: the filter there, or for a missing key a new one
 * that grows (AMQ_GROWN_SPEC at the reserve defaults), as BF.ADD makes a
 * scaling filter: whoever did not say how many keys does not know.
 * Deterministic (the type's default hasher, seed 0), so the add
 * replicated verbatim makes the same key on a replica. NULL after a
 * reply. */
static rval *need_or_grow(host *h) {
    rval *v;
    int st = key_open(h, 1, FAM_AMQ, &v, "ERR");
    if (st != KEY_EMPTY)
        return st == KEY_OK ? v : NULL;
    if ((v = rv_new(FAM_AMQ)) == NULL)
        return r_err(h, "ERR out of memory"), NULL;
    amq_options o = rv_options(v);
    amq_status s = amq_filter_new(AMQ_GROWN_SPEC, AMQ_DEFAULT_CAPACITY,
                                  AMQ_DEFAULT_ERROR, &o, &v->u.amq.f, NULL);
    if (s != AMQ_OK) {
        rv_free(v);
        return r_status(h, "create", s), NULL;
    }
    return store_or_reply(h, v) ? v : NULL;
}

/* A full qf takes the item after all: it goes on as an eqf holding what
 * it held (amq_eqf_from_qf), with the value's allocator, as `amq add`
 * does. Deterministic, so a replica replaying the add does the same.
 * false for any other filter (or without memory). */
static bool grow_full(rval *v) {
    amq_filter *g;
    amq_options o = rv_options(v);
    if (amq_eqf_from_qf(v->u.amq.f, &o, &g) != AMQ_OK)
        return false;
    amq_filter_free(v->u.amq.f);
    v->u.amq.f = g;
    return true;
}

/* Item a into or out of f: for a range filter of integers the integer its
 * digits spell (AMQ_ERR_INVALID when they spell none), for every other
 * filter its bytes. */
static amq_status item_update(amq_filter *f, const rarg *a, bool in) {
    int form = amq_range_key_form(f);
    uint64_t x;
    if (form != AMQ_RANGE_KEYS_INT)
        return in ? amq_filter_add(f, a->p, a->n)
                  : amq_filter_remove(f, a->p, a->n);
    if (!range_value(form, a, &x))
        return AMQ_ERR_INVALID;
    return in ? amq_filter_add_hash(f, x) : amq_filter_remove_hash(f, x);
}

static int add(host *h, bool single) {
    rval *v;
    int changed = 0;
    if (single ? h->argc != 3 : h->argc < 3)
        return r_arity(h);
    if ((v = need_or_grow(h)) == NULL)
        return 0;
    if (!single)
        h->ops->r_arr(h, h->argc - 2);
    for (int i = 2; i < h->argc; i++) {
        amq_status st = item_update(v->u.amq.f, &h->argv[i], true);
        if (st == AMQ_ERR_FULL && grow_full(v))
            st = item_update(v->u.amq.f, &h->argv[i], true);
        if (st == AMQ_OK) {
            h->ops->r_int(h, 1);
            changed++;
        } else if (st == AMQ_ERR_INVALID) {
            r_err(h, NOT_INT_ITEM);
        } else {
            r_status(h, "add", st);
        }
    }
    if (changed)
        wrote(h, "amq.add");
    return 0;
}

int amq_add(host *h) { return add(h, true); }
int amq_madd(host *h) { return add(h, false); }

/* AMQ.ADAPT key item [item ...]: each item was a false positive (the
 * store behind the filter did not have it); an adaptive filter answers
 * "no" for it from then on. One integer per item: 1 when the filter
 * changed, 0 when it already answered "no"; an error for an item that
 * is a member. */
int amq_adapt(host *h) {
    rval *v;
    int changed = 0;
    if (h->argc < 3)
        return r_arity(h);
    if ((v = need(h)) == NULL)
        return 0;
    if (!(amq_filter_caps(v->u.amq.f) & AMQ_CAP_ADAPT))
        return r_err(h, "ERR not an adaptive filter (AMQ.RESERVE key aqf "
                        "CAPACITY n)");
    h->ops->r_arr(h, h->argc - 2);
    for (int i = 2; i < h->argc; i++) {
        bool fixed = false;
        amq_status st = amq_filter_report_fp(v->u.amq.f, h->argv[i].p,
                                             h->argv[i].n, &fixed);
        if (st == AMQ_ERR_INVALID) {
            r_err(h, "ERR the item is in the filter, not a false positive");
        } else if (st == AMQ_OK) {
            h->ops->r_int(h, fixed);
            changed += fixed;
        } else {
            r_status(h, "adapt", st);
        }
    }
    if (changed)
        wrote(h, "amq.adapt");
    return 0;
}

static bool has(const rval *v, const rarg *item) {
    const amq_filter *f = v->u.amq.f;
    uint64_t x;
    int form = amq_range_key_form(f);
    if (form == AMQ_RANGE_KEYS_INT) /* its keys' digits */
        return range_value(form, item, &x) && amq_filter_contains_hash(f, x);
    return amq_filter_contains(f, item->p, item->n);
}

int amq_exists(host *h) { return reply_exists(h, FAM_AMQ, true, has); }
int amq_mexists(host *h) { return reply_exists(h, FAM_AMQ, false, has); }

int amq_del(host *h) {
    rval *v;
    if (h->argc != 3)
        return r_arity(h);
    if ((v = need(h)) == NULL)
        return 0;
    amq_status st = item_update(v->u.amq.f, &h->argv[2], false);
    if (st == AMQ_ERR_INVALID)
        return r_err(h, NOT_INT_ITEM);
    if (st == AMQ_ERR_NOT_FOUND) {
        h->ops->r_int(h, 0);
        return 0;
    }
    if (st != AMQ_OK)
        return r_status(h, "delete", st);
    wrote(h, "amq.del");
    h->ops->r_int(h, 1);
    return 0;
}

int amq_card(host *h) {
    rval *v;
    if (h->argc != 2)
        return r_arity(h);
    int st = read_key(h, &v);
    if (st >= 0)
        h->ops->r_int(h, st == KEY_OK ? (long long)amq_filter_items(v->u.amq.f)
                                      : 0);
    return 0;
}

/* The filter's AMQ_CAP_* bits as words, e.g. "remove count union". */
static void caps_words(uint32_t caps, char *buf, size_t cap) {
    size_t n = 0;
    buf[0] = 0;
    for (unsigned i = 0; i < 32; i++) {
        const char *word = amq_cap_name(UINT32_C(1) << i);
        if ((caps >> i & 1) && word != NULL && n < cap)
            n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? " " : "", word);
    }
}

int amq_info(host *h) {
    rval *v;
    char d[512], caps[160];
    if (h->argc != 2)
        return r_arity(h);
    if ((v = need(h)) == NULL)
        return 0;
    const amq_filter *f = v->u.amq.f;
    amq_filter_describe(f, d, sizeof d);
    caps_words(amq_filter_caps(f), caps, sizeof caps);
    amq_adapt_stats as;
    bool adaptive = amq_filter_adapt_stats(f, &as) == AMQ_OK;
    h->ops->r_map(h, adaptive ? 13 : 10);
    h->ops->r_simple(h, "Spec");
    h->ops->r_str(h, d, strlen(d));
    h->ops->r_simple(h, "Capabilities");
    h->ops->r_str(h, caps, strlen(caps));
    h->ops->r_simple(h, "Items");
    h->ops->r_int(h, (long long)amq_filter_items(f));
    h->ops->r_simple(h, "Capacity");
    h->ops->r_int(h, (long long)amq_filter_capacity(f));
    h->ops->r_simple(h, "Table bytes");
    h->ops->r_int(h, (long long)amq_filter_size_bytes(f));
    h->ops->r_simple(h, "Memory");
    h->ops->r_int(h, (long long)rv_memory(v));
    h->ops->r_simple(h, "Bits per key");
    h->ops->r_double(h, amq_filter_bits_per_key(f));
    h->ops->r_simple(h, "Target error");
    h->ops->r_double(h, amq_filter_target_fpr(f));
    h->ops->r_simple(h, "Error bound");
    h->ops->r_double(h, amq_filter_fpr_bound(f));
    h->ops->r_simple(h, "Hash");
    const char *hk = amq_hash_kind_name(amq_filter_hasher(f)->kind);
    h->ops->r_str(h, hk, strlen(hk));
    if (adaptive) {
        h->ops->r_simple(h, "False positives fixed");
        h->ops->r_int(h, (long long)as.reports);
        h->ops->r_simple(h, "Extension records");
        h->ops->r_int(h, (long long)as.records);
        h->ops->r_simple(h, "Reverse map bytes");
        h->ops->r_int(h, (long long)as.map_bytes);
    }
    return 0;
}

int merge_as(host *h, bool (*admit)(host *h, const rval *v),
             const char *event) {
    rval *dst, *src;
    if (h->argc < 3)
        return r_arity(h);
    if ((dst = need(h)) == NULL || (admit != NULL && !admit(h, dst)))
        return 0;
    for (int i = 2; i < h->argc; i++) {
        int st = h->ops->lookup(h, i, FAM_AMQ, &src);
        if (st == KEY_WRONGTYPE)
            return r_wrongtype(h);
        if (st == KEY_EMPTY || src->load != NULL)
            return r_err(h, "ERR not found");
        if (admit != NULL && !admit(h, src))
            return 0;
    }
    if (!h->ops->budget(h, 2.0 * (double)dst->bytes))
        return r_err(h, "ERR merge needs more memory than the limit allows");
    rval *acc = rv_copy(dst);
    if (acc == NULL)
        return r_err(h, "ERR out of memory");
    for (int i = 2; i < h->argc; i++) {
        h->ops->lookup(h, i, FAM_AMQ, &src);
        amq_status st = amq_filter_union(acc->u.amq.f, src->u.amq.f);
        if (st != AMQ_OK) {
            rv_free(acc);
            return r_status(h, "merge", st);
        }
    }
    if (!store_or_reply(h, acc))
        return 0;
    wrote(h, event);
    r_ok(h);
    return 0;
}

int amq_merge(host *h) { return merge_as(h, NULL, "amq.merge"); }

int dump_as(host *h, int fam) {
    rval *v;
    if (h->argc != 2)
        return r_arity(h);
    int st = h->ops->lookup(h, 1, fam, &v);
    if (st == KEY_WRONGTYPE)
        return r_wrongtype(h);
    if (st == KEY_EMPTY)
        return r_err(h, "ERR not found");
    /* a key in RedisBloom's layout, or a small BF or CF key still listing
     * its items, has no amq frame yet */
    if (v->rb != NULL || (v->fam == FAM_BF && v->u.bf.f == NULL) ||
        (v->fam == FAM_CF && v->u.cf.nlinks == 0))
        return r_err(h, "ERR the value has no amq frame (use DUMP or "
                        "SCANDUMP)");
    if (v->load != NULL || rv_nframes(v) != 1)
        return r_err(h, "ERR the value is not one frame (use SCANDUMP)");
    size_t n = rv_frame_size(v, 0);
    uint8_t *buf = rv_sys_alloc(n);
    if (buf == NULL)
        return r_err(h, "ERR out of memory");
    if (rv_frame_save(v, 0, buf, n) != AMQ_OK)
        r_err(h, "ERR could not serialize the value");
    else
        h->ops->r_str(h, (const char *)buf, n);
    rv_sys_free(buf);
    return 0;
}

int amq_dump(host *h) { return dump_as(h, 0); }

int amq_load(host *h) {
    rval *v;
    amq_diag diag = {0, {0}};
    if (h->argc != 3)
        return r_arity(h);
    if (read_key(h, &v) < 0)
        return 0;
    if (!h->ops->budget(h, (double)h->argv[2].n))
        return r_err(h, "ERR frame larger than the memory limit allows");
    v = rv_new(FAM_AMQ);
    if (v == NULL)
        return r_err(h, "ERR out of memory");
    amq_options o = rv_options(v);
    amq_status st =
        amq_filter_load(h->argv[2].p, h->argv[2].n, &o, &v->u.amq.f, &diag);
    if (st != AMQ_OK) {
        rv_free(v);
        return reply_status_diag(h, st, &diag);
    }
    if (!store_or_reply(h, v))
        return 0;
    wrote(h, "amq.load");
    r_ok(h);
    return 0;
}

int amq_types(host *h) {
    size_t n = amq_filter_type_count();
    if (h->argc != 1)
        return r_arity(h);
    h->ops->r_arr(h, (long)n);
    for (size_t i = 0; i < n; i++) {
        const char *s = amq_filter_type_at(i)->name;
        h->ops->r_str(h, s, strlen(s));
    }
    return 0;
}
