/*
 * cf.c — CF.*: RedisBloom's cuckoo filter on amq's "cuckoo" type.
 *
 * RedisBloom's filter is a chain of cuckoo tables of 8-bit fingerprints in
 * buckets of `bucketsize` slots; when one refuses an item, a table of
 * capacity · expansion^i is appended. Here each link of the chain is an amq
 * cuckoo filter (src/fingerprint/cuckoo.c): buckets of four slots and
 * f-bit fingerprints, sized to hold its capacity. amq's buckets are always
 * four slots wide, so BUCKETSIZE b selects the fingerprint width that gives
 * RedisBloom's false-positive rate for that bucket size instead: its rate
 * is about 2b/2^8, ours 2·4/2^f, hence f = ceil(log2(1024 / b)) (b = 2:
 * f = 9, b = 4: f = 8, b = 1: f = 10). MAXITERATIONS is the eviction
 * budget (amq's max_kicks). A small budget makes a table refuse inserts
 * at a lower load (20 kicks: at 89-95% instead of 97%), so a link's table
 * is sized for its capacity at the load its budget reliably reaches
 * (design_load, measured in docs/redis.md); otherwise the last few percent
 * of the capacity would open a second link and double the memory. An add
 * tries every link from the oldest (so
 * room left by deletions is reused), then appends a link if EXPANSION > 0
 * and fewer than CF_MAX_EXPANSIONS links exist; EXPANSION is rounded up to
 * a power of two. A delete takes one copy from the newest link holding the
 * item; COUNT sums over the links.
 *
 * Small keys: a key starts without links, listing its items' 64-bit
 * hashes (the links' own hash of each key; repeats kept, a delete takes
 * the last copy) while they take fewer bytes than its first link would,
 * at most 256; the add past that makes link 0 and inserts every listed
 * hash in order, then the item. A listed key reports its item present
 * only for an equal hash, counts exact copies, and answers INFO and DEBUG
 * with the link it would make; the blob carries the list (params word 3
 * bit 0, one frame of little-endian hashes).
 *
 * Defaults: capacity 1024, bucket size 2, max iterations 20, expansion 1.
 * A key created implicitly is replicated as an explicit CF.RESERVE first.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "amqr.h"

#define CF_MAX_BUCKET 255
#define CF_MAX_ITER 65535
#define CF_MAX_EXP 32768
#define CF_MAX_CAP (1ull << 40)

static unsigned fp_bits(unsigned b) {
    unsigned f = (unsigned)ceil(log2(1024.0 / b));
    return f < 4 ? 4 : f;
}

/* Capacity of link i; 0 on overflow. */
static uint64_t link_capacity(const cf_part *c, unsigned i) {
    uint64_t n = c->capacity;
    for (unsigned j = 0; j < i; j++) {
        if (c->expansion == 0 || n > CF_MAX_CAP / c->expansion)
            return 0;
        n *= c->expansion;
    }
    return n;
}

/* The load a table reliably reaches before its first refusal with a
 * budget of `kicks` evictions: below the smallest first-failure load
 * measured over 30 tables of 2^8, 2^12 and 2^16 buckets and 3 of 2^20
 * (docs/redis.md), interpolated in log(kicks); 0.95 (amq's design load)
 * from 200 kicks on. */
static double design_load(unsigned kicks) {
    static const double k[] = {1, 2, 5, 10, 20, 50, 100, 200};
    static const double load[] = {0.34, 0.55, 0.70, 0.80,
                                  0.87, 0.92, 0.94, 0.95};
    if (kicks >= 200)
        return 0.95;
    for (int i = 0; i < 7; i++)
        if (kicks <= k[i + 1]) {
            double t = log(kicks / k[i]) / log(k[i + 1] / k[i]);
            return load[i] + t * (load[i + 1] - load[i]);
        }
    return 0.95;
}

/* Buckets (of four slots, an even number) holding n keys at the design
 * load of the filter's kick budget. */
static uint64_t link_buckets(const cf_part *c, uint64_t n) {
    uint64_t b = (uint64_t)ceil((double)n / (4 * design_load(c->max_iter)));
    b += b & 1;
    return b < 2 ? 2 : b;
}

static double link_bytes(const cf_part *c, uint64_t n) {
    return (double)link_buckets(c, n) * 4 * fp_bits(c->bucket_size) / 8 + 512;
}

/* Room for link i (at most CF_MAX_LINKS), the array growing by doubling
 * through the value's counting allocator, so that MEMORY USAGE sees it. */
static bool link_room(rval *v, unsigned i, char *err, size_t cap) {
    cf_part *c = &v->u.cf;
    if (i < c->room)
        return true;
    unsigned room = c->room == 0 ? 1 : c->room * 2;
    while (room <= i)
        room *= 2;
    if (room > CF_MAX_LINKS)
        room = CF_MAX_LINKS;
    amq_filter **l = v->alloc.alloc(v->alloc.ctx, room * sizeof *l);
    if (l == NULL || i >= room) {
        if (l != NULL)
            v->alloc.free(v->alloc.ctx, l, room * sizeof *l);
        snprintf(err, cap, "out of memory");
        return false;
    }
    memset(l, 0, room * sizeof *l);
    if (c->nlinks > 0)
        memcpy(l, c->link, c->nlinks * sizeof *l);
    if (c->link != NULL)
        v->alloc.free(v->alloc.ctx, c->link, c->room * sizeof *l);
    c->link = l;
    c->room = room;
    return true;
}

static bool link_new(rval *v, unsigned i, char *err, size_t cap) {
    cf_part *c = &v->u.cf;
    char spec[96];
    amq_diag diag = {0, {0}};
    amq_options o = rv_options(v);
    uint64_t n = link_capacity(c, i);
    unsigned f = fp_bits(c->bucket_size);
    if (n == 0) {
        snprintf(err, cap, "capacity overflows");
        return false;
    }
    if (!link_room(v, i, err, cap))
        return false;
    snprintf(spec, sizeof spec, "cuckoo:fp=%u,buckets=%llu,max_kicks=%u", f,
             (unsigned long long)link_buckets(c, n), c->max_iter);
    amq_status st =
        amq_filter_new(spec, n, ldexp(8.0, -(int)f), &o, &c->link[i], &diag);
    if (st != AMQ_OK) {
        snprintf(err, cap, "%s",
                 diag.message[0] ? diag.message : amq_strerror(st));
        return false;
    }
    c->nlinks = i + 1;
    return true;
}

#define LIST_MAX 256u

/* Hashes a key without links may list: fewer bytes than link 0 would
 * take, no more than its capacity, at most LIST_MAX. None for a filter
 * that never grows: there a copy the link cannot place is refused when it
 * comes, which a list could not know. */
static uint32_t list_limit(const cf_part *c) {
    if (c->expansion == 0)
        return 0;
    double n = fmin(fmin(link_bytes(c, c->capacity) / 8, (double)c->capacity),
                    LIST_MAX);
    return n >= 1 ? (uint32_t)n : 0;
}

static bool listing(const cf_part *c) { return c->nlinks == 0; }

/* The hasher every link takes (the "cuckoo" type's default). */
static const amq_hasher *cf_hasher(void) {
    static amq_hasher h;
    static bool ready;
    if (!ready) {
        amq_filter_resolve_hasher("cuckoo", NULL, &h);
        ready = true;
    }
    return &h;
}

/* ---- family operations -------------------------------------------------------- */

/* params: capacity u64 | bucket size u32 | max iterations u32 |
 * expansion u32 | flags u32 (bit 0: the frame is the list) | deleted u64 */
static void p_write(const rval *v, uint8_t *p) {
    const cf_part *c = &v->u.cf;
    uint32_t w[4] = {c->bucket_size, c->max_iter, c->expansion,
                     listing(c) ? 1u : 0u};
    memcpy(p, &c->capacity, 8);
    memcpy(p + 8, w, 16);
    memcpy(p + 24, &c->deleted, 8);
}

static bool p_read(rval *v, const uint8_t *p, char *err, size_t cap) {
    cf_part *c = &v->u.cf;
    uint32_t w[4];
    memcpy(&c->capacity, p, 8);
    memcpy(w, p + 8, 16);
    memcpy(&c->deleted, p + 24, 8);
    if (c->capacity == 0 || c->capacity > CF_MAX_CAP || w[0] < 1 ||
        w[0] > CF_MAX_BUCKET || w[1] < 1 || w[1] > CF_MAX_ITER ||
        w[2] > CF_MAX_EXP || (w[2] & (w[2] - 1)) != 0 || w[3] > 1) {
        snprintf(err, cap, "bad CF parameters");
        return false;
    }
    c->bucket_size = w[0];
    c->max_iter = w[1];
    c->expansion = w[2];
    c->listed = w[3] != 0;
    if (c->listed && list_limit(c) == 0) {
        snprintf(err, cap, "a listed CF of parameters that never list");
        return false;
    }
    return true;
}

static unsigned n_frames(const rval *v) {
    return listing(&v->u.cf) ? 1 : v->u.cf.nlinks;
}

static size_t f_size(const rval *v, unsigned i) {
    const cf_part *c = &v->u.cf;
    return listing(c) ? 8 * (size_t)c->list.n
                      : amq_filter_serialized_size(c->link[i]);
}

static amq_status f_save(const rval *v, unsigned i, uint8_t *buf, size_t cap) {
    const cf_part *c = &v->u.cf;
    if (!listing(c))
        return amq_filter_save(c->link[i], buf, cap, NULL);
    if (cap < 8 * (size_t)c->list.n)
        return AMQ_ERR_BUFFER;
    hl_save(&c->list, buf);
    return AMQ_OK;
}

static bool f_load(rval *v, unsigned i, unsigned nf, const uint8_t *b,
                   size_t len, char *err, size_t cap) {
    cf_part *c = &v->u.cf;
    char d[128];
    unsigned f = 0, kicks = 0;
    unsigned long long buckets = 0;
    if (c->listed)
        return rv_one_frame(nf, "listed CF", err, cap) &&
               hl_load(v, &c->list, b, len, list_limit(c), true, err, cap);
    if (nf < 1 || nf > CF_MAX_LINKS) {
        snprintf(err, cap, "a CF value holds 1 to %d frames", CF_MAX_LINKS);
        return false;
    }
    if (!link_room(v, i, err, cap) ||
        !rv_load_filter(v, b, len, &c->link[i], err, cap))
        return false;
    c->nlinks = i + 1;
    amq_filter_describe(c->link[i], d, sizeof d);
    if (sscanf(d, "cuckoo:fp=%u,buckets=%llu,max_kicks=%u", &f, &buckets,
               &kicks) != 3 ||
        f != fp_bits(c->bucket_size) || kicks != c->max_iter ||
        buckets != link_buckets(c, link_capacity(c, i)) ||
        (i > 0 && amq_filter_hash(c->link[i], "", 0) !=
                      amq_filter_hash(c->link[0], "", 0)) ||
        amq_filter_capacity(c->link[i]) != link_capacity(c, i)) {
        snprintf(err, cap,
                 "frame %u (%s) does not match its key's "
                 "parameters",
                 i, d);
        return false;
    }
    return true;
}

static void destroy(rval *v) {
    cf_part *c = &v->u.cf;
    for (unsigned i = 0; i < c->nlinks; i++)
        amq_filter_free(c->link[i]);
    if (c->link != NULL)
        v->alloc.free(v->alloc.ctx, c->link, c->room * sizeof *c->link);
    c->link = NULL;
    c->room = c->nlinks = 0;
    hl_free(v, &c->list);
}

/* The blob gave the key its links, or the list its flag announced. */
static bool finish(rval *v, char *err, size_t cap) {
    if (v->u.cf.listed || v->u.cf.nlinks > 0)
        return true;
    snprintf(err, cap, "a CF value without links");
    return false;
}

const fam_ops cf_ops = {"cf",   "amq-cuckf", "CF.LOADCHUNK", 32,     p_write,
                        p_read, n_frames,    NULL,           f_size, f_save,
                        f_load, destroy,     finish};

/* ---- operations on the chain ----------------------------------------------------- */

static bool present(const cf_part *c, uint64_t x) {
    if (listing(c))
        return hl_has(&c->list, x);
    for (unsigned i = 0; i < c->nlinks; i++)
        if (amq_filter_contains_hash(c->link[i], x))
            return true;
    return false;
}

static int insert(host *h, rval *v, uint64_t x, bool *nomem);

/* A listed key's add: to the list, or the list becomes link 0 (every
 * listed hash inserted in order) and the item follows. */
static int list_insert(host *h, rval *v, uint64_t x, bool *nomem) {
    cf_part *c = &v->u.cf;
    char err[160];
    if (c->list.n < list_limit(c)) {
        *nomem = !hl_push(v, &c->list, x, list_limit(c));
        return *nomem ? -1 : 1;
    }
    if (!h->ops->budget(h, link_bytes(c, c->capacity)) ||
        !link_new(v, 0, err, sizeof err)) {
        *nomem = true;
        return -1;
    }
    hlist l = c->list;
    c->list = (hlist){NULL, 0, 0};
    for (uint32_t i = 0; i < l.n; i++)
        if (insert(h, v, l.h[i], nomem) < 0) {
            *nomem = true; /* links follow while they may: no memory */
            break;
        }
    v->alloc.free(v->alloc.ctx, l.h, l.room * sizeof *l.h);
    return *nomem ? -1 : insert(h, v, x, nomem);
}

/* 1 added, -1 full (or no memory: *nomem). */
static int insert(host *h, rval *v, uint64_t x, bool *nomem) {
    cf_part *c = &v->u.cf;
    char err[160];
    *nomem = false;
    if (listing(c))
        return list_insert(h, v, x, nomem);
    for (unsigned i = 0; i < c->nlinks; i++) {
        amq_status st = amq_filter_add_hash(c->link[i], x);
        if (st == AMQ_OK)
            return 1;
        if (st != AMQ_ERR_FULL) {
            *nomem = true;
            return -1;
        }
    }
    uint64_t n = link_capacity(c, c->nlinks);
    if (c->expansion == 0 || c->nlinks >= g_cfg.cf_max_links || n == 0)
        return -1;
    if (!h->ops->budget(h, link_bytes(c, n)) ||
        !link_new(v, c->nlinks, err, sizeof err)) {
        *nomem = true;
        return -1;
    }
    return amq_filter_add_hash(c->link[c->nlinks - 1], x) == AMQ_OK ? 1 : -1;
}

static uint64_t hash_of(const cf_part *c, const rarg *a) {
    return listing(c) ? amq_hash64(cf_hasher(), a->p, a->n)
                      : amq_filter_hash(c->link[0], a->p, a->n);
}

/* Add one item: 1 added, 0 present (nx only), -1 full (or no memory:
 * *nomem), for either layout. */
static int add_item(host *h, rval *v, const rarg *a, bool nx, bool *nomem) {
    *nomem = false;
    if (v->rb != NULL) {
        int r = rb_cf_insert(h, v, a->p, a->n, nx);
        *nomem = r == -2;
        return r < 0 ? -1 : r;
    }
    uint64_t x = hash_of(&v->u.cf, a);
    if (nx && present(&v->u.cf, x))
        return 0;
    return insert(h, v, x, nomem);
}

/* ---- key access ---------------------------------------------------------------- */

static rval *create(host *h, uint64_t cap, unsigned b, unsigned m, unsigned e) {
    char err[160], msg[200];
    rval *v = rv_new(FAM_CF);
    if (v == NULL) {
        r_err(h, "ERR out of memory");
        return NULL;
    }
    v->u.cf.capacity = cap;
    v->u.cf.bucket_size = b;
    v->u.cf.max_iter = m;
    v->u.cf.expansion = e;
    if (!h->ops->budget(h, link_bytes(&v->u.cf, cap))) {
        rv_free(v);
        r_err(h, "ERR capacity too large for the memory limit");
        return NULL;
    }
    /* a key that lists starts without links; link 0's parameters are
     * checked now all the same */
    if (!link_new(v, 0, err, sizeof err)) {
        rv_free(v);
        snprintf(msg, sizeof msg, "ERR could not create filter: %s", err);
        r_err(h, msg);
        return NULL;
    }
    if (list_limit(&v->u.cf) > 0)
        destroy(v);
    return v;
}

rval *cf_new_amq(host *h, uint64_t cap, unsigned b, unsigned m, unsigned e) {
    return create(h, cap, b, m, e);
}

int cf_add_item(host *h, rval *v, const rarg *item, bool *nomem) {
    return add_item(h, v, item, false, nomem);
}

/* Look up for reading: false after an error reply; *v NULL if missing. */
static bool read_key(host *h, rval **v) {
    return key_open(h, 1, FAM_CF, v, "ERR") >= 0;
}

/* CF.COUNT reads a key of another type as missing (0), as RedisBloom. */
static bool count_key(host *h, rval **v) {
    return key_open_read(h, 1, FAM_CF, v) >= 0;
}

static void replicate_reserve(host *h, const cf_part *c) {
    char n[24], b[8], m[8], e[8];
    snprintf(n, sizeof n, "%llu", (unsigned long long)c->capacity);
    snprintf(b, sizeof b, "%u", c->bucket_size);
    snprintf(m, sizeof m, "%u", c->max_iter);
    snprintf(e, sizeof e, "%u", c->expansion);
    rarg a[8] = {h->argv[1],       {n, strlen(n)},        {"BUCKETSIZE", 10},
                 {b, strlen(b)},   {"MAXITERATIONS", 13}, {m, strlen(m)},
                 {"EXPANSION", 9}, {e, strlen(e)}};
    h->ops->replicate(h, "CF.RESERVE", a, 8);
}

static rval *open_or_create(host *h, uint64_t cap, bool nocreate,
                            bool *created) {
    rval *v;
    *created = false;
    if (!read_key(h, &v))
        return NULL;
    if (v != NULL)
        return v;
    if (nocreate) {
        r_err(h, "ERR not found");
        return NULL;
    }
    v = create(h, cap, 2, 20, 1);
    if (v != NULL) {
        if (!store_or_reply(h, v))
            return 0;
        *created = true;
        replicate_reserve(h, &v->u.cf);
    }
    return v;
}

static void wrote(host *h, const char *event) {
    h->ops->replicate_verbatim(h);
    h->ops->notify(h, event, 1);
}

/* ---- commands ----------------------------------------------------------------------- */

static bool parse_range(const rarg *a, long long lo, long long hi,
                        long long *out) {
    return arg_ll(a, out) && *out >= lo && *out <= hi;
}

int cf_reserve(host *h) {
    long long cap, b = 2, m = 20, e = 1;
    rval *v;
    if (h->argc < 3 || h->argc % 2 == 0)
        return r_arity(h);
    if (!arg_ll(&h->argv[2], &cap))
        return r_err(h, "Bad capacity");
    if (cap > (long long)CF_MAX_CAP) /* too small: below, as RedisBloom */
        return r_err(h, "ERR capacity must be between 1 and 2^40");
    /* RedisBloom's words: "Couldn't parse X", then the range it allows */
    for (int i = 3; i + 1 < h->argc; i += 2) {
        const rarg *o = &h->argv[i], *x = &h->argv[i + 1];
        long long n;
        if (arg_is(o, "BUCKETSIZE")) {
            if (!arg_ll(x, &n))
                return r_err(h, "Couldn't parse BUCKETSIZE");
            if (!parse_range(x, 1, CF_MAX_BUCKET, &b))
                return r_err(h, "BUCKETSIZE: value must be an integer "
                                "between 1 and 255, inclusive.");
        } else if (arg_is(o, "MAXITERATIONS")) {
            if (!arg_ll(x, &n))
                return r_err(h, "Couldn't parse MAXITERATIONS");
            if (!parse_range(x, 1, CF_MAX_ITER, &m))
                return r_err(h, "MAXITERATIONS: value must be an integer "
                                "between 1 and 65535, inclusive.");
        } else if (arg_is(o, "EXPANSION")) {
            if (!arg_ll(x, &n))
                return r_err(h, "Couldn't parse EXPANSION");
            if (!parse_range(x, 0, CF_MAX_EXP, &e))
                return r_err(h, "EXPANSION: value must be an integer "
                                "between 0 and 32768, inclusive.");
        } else {
            return r_err(h, "ERR Unknown argument received");
        }
    }
    if (b * 2 > cap)
        return r_err(h, "Capacity must be at least (BucketSize * 2)");
    while (e & (e - 1))
        e += e & -e; /* round up to a power of two */
    if (h->ops->lookup(h, 1, FAM_CF, &v) != KEY_EMPTY)
        return r_err(h, "ERR item exists");
    v = create(h, (uint64_t)cap, (unsigned)b, (unsigned)m, (unsigned)e);
    if (v == NULL)
        return 0;
    if (!store_or_reply(h, v))
        return 0;
    wrote(h, "cf.reserve");
    r_ok(h);
    return 0;
}

/* CF.ADD / CF.ADDNX key item */
static int add1(host *h, bool nx) {
    bool created, nomem;
    if (h->argc != 3)
        return r_arity(h);
    rval *v = open_or_create(h, g_cfg.cf_capacity, false, &created);
    if (v == NULL)
        return 0;
    int r = add_item(h, v, &h->argv[2], nx, &nomem);
    if (r == 0) {
        if (created)
            wrote(h, "cf.add");
        h->ops->r_int(h, 0);
        return 0;
    }
    if (r > 0 || created)
        wrote(h, nx ? "cf.addnx" : "cf.add");
    if (r < 0)
        return r_err(h, nomem ? "ERR out of memory, or a new link would pass "
                                "the memory limit"
                              : "Filter is full");
    h->ops->r_int(h, 1);
    return 0;
}

int cf_add(host *h) { return add1(h, false); }
int cf_addnx(host *h) { return add1(h, true); }

/* CF.INSERT / CF.INSERTNX key [CAPACITY n] [NOCREATE] ITEMS item... */
static int insert_many(host *h, bool nx) {
    long long cap = (long long)g_cfg.cf_capacity;
    bool nocreate = false, created, nomem, changed = false;
    int i = 2;
    if (h->argc < 4)
        return r_arity(h);
    for (; i < h->argc && !arg_is(&h->argv[i], "ITEMS"); i++) {
        if (arg_is(&h->argv[i], "NOCREATE")) {
            nocreate = true;
        } else if (arg_is(&h->argv[i], "CAPACITY") && i + 1 < h->argc) {
            if (!parse_range(&h->argv[++i], 1, (long long)CF_MAX_CAP, &cap))
                return r_err(h, "ERR Bad capacity");
        } else {
            return r_err(h, "ERR Unknown argument received");
        }
    }
    if (i + 1 >= h->argc) /* no item, as RedisBloom: a wrong arity */
        return r_arity(h);
    rval *v = open_or_create(h, (uint64_t)cap, nocreate, &created);
    if (v == NULL)
        return 0;
    h->ops->r_arr(h, h->argc - i - 1);
    for (int j = i + 1; j < h->argc; j++) {
        int r = add_item(h, v, &h->argv[j], nx, &nomem);
        changed |= r > 0;
        h->ops->r_int(h, r);
    }
    if (changed || created)
        wrote(h, nx ? "cf.insertnx" : "cf.insert");
    return 0;
}

int cf_insert(host *h) { return insert_many(h, false); }
int cf_insertnx(host *h) { return insert_many(h, true); }

static bool has(const rval *v, const rarg *item) {
    if (v->rb != NULL)
        return rb_cf_contains(v, item->p, item->n);
    return present(&v->u.cf, hash_of(&v->u.cf, item));
}

int cf_exists(host *h) { return reply_exists(h, FAM_CF, true, has); }
int cf_mexists(host *h) { return reply_exists(h, FAM_CF, false, has); }

int cf_del(host *h) {
    rval *v;
    if (h->argc != 3)
        return r_arity(h);
    if (!read_key(h, &v))
        return 0;
    if (v == NULL)
        return r_err(h, "Not found");
    if (v->rb != NULL) {
        bool gone = rb_cf_delete(v, h->argv[2].p, h->argv[2].n);
        if (gone)
            wrote(h, "cf.del");
        h->ops->r_int(h, gone);
        return 0;
    }
    cf_part *c = &v->u.cf;
    uint64_t x = hash_of(c, &h->argv[2]);
    if (listing(c)) {
        bool gone = hl_remove(&c->list, x);
        if (gone) {
            c->deleted++;
            wrote(h, "cf.del");
        }
        h->ops->r_int(h, gone);
        return 0;
    }
    for (unsigned i = c->nlinks; i-- > 0;) {
        if (amq_filter_remove_hash(c->link[i], x) == AMQ_OK) {
            c->deleted++;
            wrote(h, "cf.del");
            h->ops->r_int(h, 1);
            return 0;
        }
    }
    h->ops->r_int(h, 0);
    return 0;
}

/* CF.COMPACT: the links past the first that deletes left empty go, from
 * the newest back (a later add makes them again at the same sizes). Items
 * stay in their links: a link places a fingerprint by the key's hash at
 * its own size, and the fingerprint alone does not say where it would go
 * in another, so RedisBloom's moving of items to older links has no
 * counterpart. */
int cf_compact(host *h) {
    rval *v;
    if (h->argc != 2)
        return r_arity(h);
    if (!count_key(h, &v))
        return 0;
    if (v == NULL) /* RedisBloom's words, for another type too */
        return r_err(h, "Cuckoo filter was not found");
    if (v->rb != NULL) { /* RedisBloom's compaction: items move to older
                            sub-filters, an emptied newest one goes */
        rb_cf_compact(v, true);
        wrote(h, "cf.compact");
        r_ok(h);
        return 0;
    }
    cf_part *c = &v->u.cf;
    unsigned before = c->nlinks;
    while (c->nlinks > 1 && amq_filter_items(c->link[c->nlinks - 1]) == 0)
        amq_filter_free(c->link[--c->nlinks]);
    if (c->nlinks != before)
        wrote(h, "cf.compact");
    r_ok(h);
    return 0;
}

int cf_count(host *h) {
    rval *v;
    uint64_t sum = 0, n;
    if (h->argc != 3)
        return r_arity(h);
    if (!count_key(h, &v))
        return 0;
    if (v != NULL && v->rb != NULL)
        sum = rb_cf_count(v, h->argv[2].p, h->argv[2].n);
    else if (v != NULL && listing(&v->u.cf))
        sum = hl_count(&v->u.cf.list, hash_of(&v->u.cf, &h->argv[2]));
    for (unsigned i = 0; v != NULL && v->rb == NULL && i < v->u.cf.nlinks; i++)
        if (amq_filter_count_hash(v->u.cf.link[i],
                                  hash_of(&v->u.cf, &h->argv[2]), &n) == AMQ_OK)
            sum += n;
    h->ops->r_int(h, (long long)sum);
    return 0;
}

/* Items in every link, and the first link's four-slot buckets (what
 * CF.INFO and CF.DEBUG report). */
static uint64_t cf_items(const cf_part *c) {
    uint64_t items = listing(c) ? c->list.n : 0;
    for (unsigned i = 0; i < c->nlinks; i++)
        items += amq_filter_items(c->link[i]);
    return items;
}

static unsigned long long cf_buckets(const cf_part *c) {
    char d[128];
    unsigned long long buckets = 0;
    unsigned f;
    if (listing(c)) /* the link it would make */
        return link_buckets(c, link_capacity(c, 0));
    amq_filter_describe(c->link[0], d, sizeof d);
    return sscanf(d, "cuckoo:fp=%u,buckets=%llu", &f, &buckets) == 2 ? buckets
                                                                     : 0;
}

/* CF.INFO's eight figures, in its order, for either layout: Size, buckets
 * (amq's four-slot buckets of the first link, or of the link a listing key
 * would make), filters, items inserted, deleted, bucket size, expansion,
 * max iterations. */
static void cf_figures(const rval *v, long long f[8]) {
    if (v->rb != NULL) {
        rb_cf_info(v, f);
        return;
    }
    const cf_part *c = &v->u.cf;
    f[0] = (long long)rv_memory(v);
    f[1] = (long long)cf_buckets(c);
    f[2] = listing(c) ? 1 : (long long)c->nlinks;
    f[3] = (long long)cf_items(c);
    f[4] = (long long)c->deleted;
    f[5] = c->bucket_size;
    f[6] = c->expansion;
    f[7] = c->max_iter;
}

/* CF.DEBUG: RedisBloom's one line of the same figures. */
int cf_debug(host *h) {
    rval *v;
    char line[256];
    long long f[8];
    if (h->argc != 2)
        return r_arity(h);
    if (!read_key(h, &v))
        return 0;
    if (v == NULL)
        return r_err(h, "ERR not found");
    cf_figures(v, f);
    int len = snprintf(line, sizeof line,
                       "bktsize:%lld buckets:%lld items:%lld deletes:%lld "
                       "filters:%lld max_iterations:%lld expansion:%lld",
                       f[5], f[1], f[3], f[4], f[2], f[7], f[6]);
    h->ops->r_str(h, line, (size_t)len);
    return 0;
}

int cf_info(host *h) {
    static const char *const names[] = {"Size",
                                        "Number of buckets",
                                        "Number of filters",
                                        "Number of items inserted",
                                        "Number of items deleted",
                                        "Bucket size",
                                        "Expansion rate",
                                        "Max iterations"};
    rval *v;
    if (h->argc != 2)
        return r_arity(h);
    if (!read_key(h, &v))
        return 0;
    if (v == NULL)
        return r_err(h, "ERR not found");
    long long f[8];
    cf_figures(v, f);
    reply_fields(h, names, f, 8, -1, -1);
    return 0;
}
