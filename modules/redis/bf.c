/*
 * bf.c — BF.*: RedisBloom's scalable Bloom filter on amq's "scalable" type.
 *
 * A BF key holds one amq scalable filter (src/bloom/scalable.c): stage i is
 * a partitioned Bloom filter for capacity·expansion^i keys at
 * ε·(1 − r)·r^i with r = 0.5 — the first stage at ε/2, each next one at
 * half the rate — so the sum over any number of stages stays below ε.
 * NONSCALING is a single stage. BF.ADD adds a key only if the filter does
 * not already report it (RedisBloom's "1 if newly added"), so the item
 * count is the number of adds that set bits, and the stage count follows
 * from it: stage i fills at its capacity and the next add opens stage i+1.
 *
 * Small keys: a key starts without its filter, holding the 64-bit hashes
 * of its items (the filter's own hash of each key) in a list that never
 * takes more bytes than the first stage would, at most 256 entries; the
 * add that would pass that makes the stage and puts every listed hash in
 * it, in order. Until then an item is reported present only if its hash is
 * listed (a rate of n·2^-64, well inside ε), every other answer (INFO's
 * capacity, filters, expansion) is the filter's, and the blob carries the
 * list (params flag bit 1, one frame of little-endian hashes), so
 * replicas, DUMP and SCANDUMP hold the same state. A key filter per entity
 * costs tens of bytes instead of the stage's hundreds.
 *
 * Defaults: ε = 0.01, capacity 100, expansion 2 (module arguments
 * ERROR_RATE and INITIAL_SIZE change the first two). A key created
 * implicitly is replicated as an explicit BF.RESERVE with the resolved
 * parameters before the command itself, so a replica with other module
 * arguments builds the identical filter.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "amqr.h"

#define BF_MAX_EXPANSION 16
#define BF_MAX_STAGES 64

/* ---- family operations ------------------------------------------------------ */

static void spec_of(char *buf, size_t cap, double eps, uint64_t n, uint32_t g,
                    bool nonscaling) {
    char e[AMQ_REAL_TEXT_MAX];
    snprintf(buf, cap,
             "n0=%llu,eps=%s,growth=%u,ratio=0.5,max_stages=%u,max_bytes=0",
             (unsigned long long)n, amq_real_text(eps, e), g,
             nonscaling ? 1u : BF_MAX_STAGES);
}

/* The filter of the key's parameters into *out. */
static bool make_filter(rval *v, amq_filter **out, char *err, size_t errcap) {
    char spec[200];
    amq_diag diag = {0, {0}};
    amq_options o = rv_options(v);
    const bf_part *b = &v->u.bf;
    memcpy(spec, "scalable:", 9);
    spec_of(spec + 9, sizeof spec - 9, b->eps, b->capacity, b->expansion,
            b->nonscaling);
    amq_status st = amq_filter_new(spec, b->capacity, b->eps, &o, out, &diag);
    if (st != AMQ_OK) {
        snprintf(err, errcap, "%s",
                 diag.message[0] ? diag.message : amq_strerror(st));
        return false;
    }
    return true;
}

/* The hasher every BF key's filter takes (the "scalable" type's default). */
static const amq_hasher *bf_hasher(void) {
    static amq_hasher h;
    static bool ready;
    if (!ready) {
        amq_filter_resolve_hasher("scalable", NULL, &h);
        ready = true;
    }
    return &h;
}

#define SPARSE_MAX 256u

static double first_stage_bytes(double eps, uint64_t cap);

/* Hashes a sparse key may list: what fits in the bytes its first stage
 * would hold (table and objects), no more than its capacity (so the stage
 * fills as it would have), at most SPARSE_MAX. */
static uint32_t sparse_limit(const bf_part *b) {
    double n = fmin(
        fmin(first_stage_bytes(b->eps, b->capacity) / 8, (double)b->capacity),
        SPARSE_MAX);
    return n >= 1 ? (uint32_t)n : 0;
}

static bool sparse(const bf_part *b) { return b->f == NULL; }

static uint64_t items_of(const bf_part *b) {
    return sparse(b) ? b->list.n : amq_filter_items(b->f);
}

/* The filter holding every listed hash, in their order. */
static bool filter_of_list(rval *v, amq_filter **out, char *err,
                           size_t errcap) {
    const bf_part *b = &v->u.bf;
    if (!make_filter(v, out, err, errcap))
        return false;
    for (uint32_t i = 0; i < b->list.n; i++)
        if (amq_filter_add_hash(*out, b->list.h[i]) != AMQ_OK) {
            amq_filter_free(*out);
            *out = NULL;
            snprintf(err, errcap, "out of memory");
            return false;
        }
    return true;
}

bool bf_build(rval *v, double eps, uint64_t cap, uint32_t g, bool nonscaling,
              char *err, size_t errcap) {
    bf_part *b = &v->u.bf;
    b->eps = eps;
    b->capacity = cap;
    b->expansion = g;
    b->nonscaling = nonscaling;
    if (sparse_limit(b) > 0) { /* check the parameters, keep no filter */
        amq_filter *f;
        if (!make_filter(v, &f, err, errcap))
            return false;
        amq_filter_free(f);
        return true;
    }
    return make_filter(v, &b->f, err, errcap);
}

static void put64(uint8_t *p, uint64_t x) { memcpy(p, &x, 8); }
static uint64_t get64(const uint8_t *p) {
    uint64_t x;
    memcpy(&x, p, 8);
    return x;
}

/* params: capacity u64 | eps f64 | expansion u32 | flags u32 (bit 0
 * nonscaling, bit 1 sparse: the frame is the list of hashes) */
static void p_write(const rval *v, uint8_t *p) {
    uint64_t e;
    uint32_t x = v->u.bf.expansion,
             fl = v->u.bf.nonscaling | (sparse(&v->u.bf) ? 2u : 0u);
    memcpy(&e, &v->u.bf.eps, 8);
    put64(p, v->u.bf.capacity);
    put64(p + 8, e);
    memcpy(p + 16, &x, 4);
    memcpy(p + 20, &fl, 4);
}

static bool p_read(rval *v, const uint8_t *p, char *err, size_t cap) {
    uint64_t e = get64(p + 8);
    uint32_t x, fl;
    double eps;
    memcpy(&eps, &e, 8);
    memcpy(&x, p + 16, 4);
    memcpy(&fl, p + 20, 4);
    if (!(eps > 0 && eps < 1) || get64(p) == 0 || x < 1 ||
        x > BF_MAX_EXPANSION || fl > 3) {
        snprintf(err, cap, "bad BF parameters");
        return false;
    }
    v->u.bf.capacity = get64(p);
    v->u.bf.eps = eps;
    v->u.bf.expansion = x;
    v->u.bf.nonscaling = (fl & 1) != 0;
    v->u.bf.listed = (fl & 2) != 0;
    if ((fl & 2) && sparse_limit(&v->u.bf) == 0) {
        snprintf(err, cap, "a sparse BF of parameters that never are");
        return false;
    }
    return true;
}

static size_t f_size(const rval *v, unsigned i) {
    (void)i;
    const bf_part *b = &v->u.bf;
    return sparse(b) ? 8 * (size_t)b->list.n : amq_filter_serialized_size(b->f);
}

static amq_status f_save(const rval *v, unsigned i, uint8_t *buf, size_t cap) {
    (void)i;
    const bf_part *b = &v->u.bf;
    if (!sparse(b))
        return amq_filter_save(b->f, buf, cap, NULL);
    if (cap < 8 * (size_t)b->list.n)
        return AMQ_ERR_BUFFER;
    hl_save(&b->list, buf);
    return AMQ_OK;
}

/* The frame, whose resolved parameters must be exactly the key's (so the
 * blob's header and its frame cannot disagree). */
static bool f_load(rval *v, unsigned i, unsigned nf, const uint8_t *b,
                   size_t len, char *err, size_t cap) {
    char want[220], got[256];
    (void)i;
    if (!rv_one_frame(nf, "BF", err, cap))
        return false;
    if (v->u.bf.listed) /* distinct hashes, no more than the limit */
        return hl_load(v, &v->u.bf.list, b, len, sparse_limit(&v->u.bf), false,
                       err, cap);
    if (!rv_load_filter(v, b, len, &v->u.bf.f, err, cap))
        return false;
    memcpy(want, "scalable:", 9);
    spec_of(want + 9, sizeof want - 9, v->u.bf.eps, v->u.bf.capacity,
            v->u.bf.expansion, v->u.bf.nonscaling);
    amq_filter_describe(v->u.bf.f, got, sizeof got);
    if (strcmp(got, want) != 0) {
        snprintf(err, cap, "frame %s does not match its key's parameters", got);
        return false;
    }
    return true;
}

static void destroy(rval *v) {
    amq_filter_free(v->u.bf.f);
    hl_free(v, &v->u.bf.list);
}

/* The blob gave the key its filter, or the list its flag announced. */
static bool finish(rval *v, char *err, size_t cap) {
    if (v->u.bf.listed || v->u.bf.f != NULL)
        return true;
    snprintf(err, cap, "a BF value without its filter");
    return false;
}

const fam_ops bf_ops = {"bf",   "amq-bloom", "BF.LOADCHUNK", 24,     p_write,
                        p_read, NULL,        NULL,           f_size, f_save,
                        f_load, destroy,     finish};

/* ---- helpers ------------------------------------------------------------------ */

/* Stages open: stage i fills at n0·g^i keys, the next add opens i + 1. */
static unsigned stages(const bf_part *b, uint64_t *capacity) {
    uint64_t items = items_of(b), n = b->capacity, sum = n;
    unsigned s = 1;
    while (sum < items && s < BF_MAX_STAGES && n <= UINT64_MAX / b->expansion) {
        n *= b->expansion;
        sum = sum > UINT64_MAX - n ? UINT64_MAX : sum + n;
        s++;
    }
    *capacity = sum;
    return s;
}

static double first_stage_bytes(double eps, uint64_t cap) {
    return (double)cap * -log(eps / 2) / (M_LN2 * M_LN2) / 8 * 1.1 + 512;
}

/* Create a BF value (budget check first); replies on failure. */
static rval *create(host *h, double eps, uint64_t cap, uint32_t g,
                    bool nonscaling) {
    char err[200], msg[240];
    if (g > BF_MAX_EXPANSION) { /* RedisBloom's own chain grows so */
        rval *v = rb_bf_new(h, eps, cap, g, nonscaling, err, sizeof err);
        if (v == NULL)
            r_err(h, err);
        return v;
    }
    if (!h->ops->budget(h, first_stage_bytes(eps, cap))) {
        r_err(h, "ERR capacity too large for the memory limit");
        return NULL;
    }
    rval *v = rv_new(FAM_BF);
    if (v == NULL) {
        r_err(h, "ERR out of memory");
        return NULL;
    }
    if (!bf_build(v, eps, cap, g, nonscaling, err, sizeof err)) {
        rv_free(v);
        snprintf(msg, sizeof msg, "ERR could not create filter: %s", err);
        r_err(h, msg);
        return NULL;
    }
    return v;
}

/* BF.RESERVE key eps cap [EXPANSION g | NONSCALING] for a replica. */
static void replicate_reserve(host *h, double eps, uint64_t cap, uint32_t x,
                              bool nonscaling) {
    char e[40], c[24], g[16];
    rarg a[6];
    int n = 5;
    snprintf(e, sizeof e, "%.17g", eps);
    snprintf(c, sizeof c, "%llu", (unsigned long long)cap);
    snprintf(g, sizeof g, "%u", x);
    a[0] = h->argv[1];
    a[1] = (rarg){e, strlen(e)};
    a[2] = (rarg){c, strlen(c)};
    a[3] = (rarg){"EXPANSION", 9};
    a[4] = (rarg){g, strlen(g)};
    if (nonscaling) {
        a[3] = (rarg){"NONSCALING", 10};
        n = 4;
    }
    h->ops->replicate(h, "BF.RESERVE", a, n);
}

/* Bytes of stage s (capacity n0·g^s at eps·2^-(s+1)). */
static double stage_bytes(const bf_part *b, unsigned s) {
    return first_stage_bytes(
        b->eps * pow(0.5, s),
        (uint64_t)fmin(1e18, (double)b->capacity * pow(b->expansion, s)));
}

/* Will the next add open a stage the memory limit does not allow? */
static bool growth_refused(host *h, const bf_part *b) {
    uint64_t cap;
    unsigned s = stages(b, &cap);
    return !b->nonscaling && items_of(b) >= cap &&
           !h->ops->budget(h, stage_bytes(b, s));
}

static int add_one(host *h, rval *v, const rarg *item, const char **err);

/* An add to a sparse key: listed, or the list becomes the filter and the
 * item goes there. */
static int sparse_add(host *h, rval *v, const rarg *item, const char **err) {
    bf_part *b = &v->u.bf;
    uint64_t x = amq_hash64(bf_hasher(), item->p, item->n);
    char why[160];
    if (hl_has(&b->list, x))
        return 0;
    if (b->list.n < sparse_limit(b)) {
        if (!hl_push(v, &b->list, x, sparse_limit(b))) {
            *err = "ERR out of memory";
            return -1;
        }
        return 1;
    }
    amq_filter *f;
    if (!h->ops->budget(h, first_stage_bytes(b->eps, b->capacity)) ||
        !filter_of_list(v, &f, why, sizeof why)) {
        *err = "ERR the filter's first stage is larger than the memory limit "
               "allows";
        return -1;
    }
    hl_free(v, &b->list);
    b->f = f;
    return add_one(h, v, item, err);
}

/* Add one item: 1 new, 0 present, -1 error (message in *err). */
static int add_one(host *h, rval *v, const rarg *item, const char **err) {
    if (v->rb != NULL)
        return rb_bf_add(h, v, item->p, item->n, err);
    bf_part *b = &v->u.bf;
    if (sparse(b))
        return sparse_add(h, v, item, err);
    uint64_t x = amq_filter_hash(b->f, item->p, item->n);
    if (amq_filter_contains_hash(b->f, x))
        return 0;
    if (growth_refused(h, b)) {
        *err = "ERR the filter's next stage is larger than the memory limit "
               "allows";
        return -1;
    }
    amq_status st = amq_filter_add_hash(b->f, x);
    if (st == AMQ_OK)
        return 1;
    *err = st == AMQ_ERR_FULL
               ? (b->nonscaling ? "ERR non scaling filter is full"
                                : "ERR filter reached its maximum size")
               : "ERR out of memory";
    return -1;
}

rval *bf_new_amq(host *h, double eps, uint64_t cap, uint32_t g,
                 bool nonscaling) {
    if (g > BF_MAX_EXPANSION) {
        r_err(h, "ERR an expansion above 16 has no amq layout: give a SPEC");
        return NULL;
    }
    return create(h, eps, cap, g, nonscaling);
}

int bf_add_item(host *h, rval *v, const rarg *item, const char **err) {
    return add_one(h, v, item, err);
}

typedef struct create_args {
    double eps;
    long long cap, expansion;
    bool nonscaling, nocreate, explicit_target;
} create_args;

/* Find the key or create it; replies and returns NULL on failure. */
static rval *open_or_create(host *h, const create_args *a, bool *created) {
    rval *v;
    int st = key_open(h, 1, FAM_BF, &v, "ERR");
    *created = false;
    if (st != KEY_EMPTY)
        return v; /* NULL after an error reply */
    if (a->nocreate) {
        r_err(h, "ERR not found");
        return NULL;
    }
    v = create(h, a->eps, (uint64_t)a->cap, (uint32_t)a->expansion,
               a->nonscaling);
    if (v != NULL) {
        if (!store_or_reply(h, v))
            return 0;
        *created = true;
    }
    return v;
}

/* Add argv[from..argc) and reply (an array unless single). */
static int add_items(host *h, const create_args *a, int from, bool single) {
    bool created;
    int changed = 0;
    rval *v = open_or_create(h, a, &created);
    if (v == NULL)
        return 0;
    if (created)
        replicate_reserve(h, a->eps, (uint64_t)a->cap, (uint32_t)a->expansion,
                          a->nonscaling);
    if (single) {
        const char *err = NULL;
        int r = add_one(h, v, &h->argv[from], &err);
        if (r < 0)
            h->ops->r_err(h, err);
        else
            h->ops->r_int(h, r);
        changed = r > 0;
    } else {
        /* the answers first: RedisBloom's array ends at the first error
         * (unless STRICT: every item is tried and answered) */
        int n = h->argc - from, done = 0;
        int *r = rv_sys_alloc((size_t)n * sizeof *r);
        const char **err = rv_sys_alloc((size_t)n * sizeof *err);
        if (r == NULL || err == NULL) {
            rv_sys_free(r);
            rv_sys_free(err);
            return r_err(h, "ERR out of memory");
        }
        while (done < n) {
            err[done] = NULL;
            r[done] = add_one(h, v, &h->argv[from + done], &err[done]);
            changed += r[done] > 0;
            if (r[done++] < 0 && !strict(h))
                break;
        }
        h->ops->r_arr(h, done);
        for (int i = 0; i < done; i++) {
            if (r[i] < 0)
                h->ops->r_err(h, err[i]);
            else
                h->ops->r_int(h, r[i]);
        }
        rv_sys_free(r);
        rv_sys_free(err);
    }
    if (changed || created) {
        h->ops->replicate_verbatim(h);
        h->ops->notify(h, "bf.add", 1);
    }
    return 0;
}

static create_args defaults(void) {
    create_args a = {.eps = g_cfg.bf_error,
                     .cap = (long long)g_cfg.bf_capacity,
                     .expansion = g_cfg.bf_expansion};
    return a;
}

/* ---- commands --------------------------------------------------------------------- */

/* The argument parsers of BF.RESERVE (ins false) and BF.INSERT (ins true),
 * with RedisBloom's words for each; the bounds past RedisBloom's (capacity
 * 2^48, expansion 1..16) are amq's own. */
static bool parse_eps(host *h, const rarg *a, double *eps, bool ins) {
    if (!arg_double(a, eps)) {
        r_err(h, ins ? "Bad error rate" : "ERR bad error rate");
        return false;
    }
    if (!(*eps > 0 && *eps < 1)) {
        r_err(h, ins ? "Bad argument received"
                     : "ERR (0 < error rate range < 1) ");
        return false;
    }
    return true;
}

static bool parse_cap(host *h, const rarg *a, long long *cap, bool ins) {
    if (!arg_ll(a, cap)) {
        r_err(h, ins ? "Bad capacity" : "ERR bad capacity");
        return false;
    }
    if (*cap <= 0) {
        r_err(h, ins ? "Bad argument received"
                     : "ERR (capacity should be larger than 0)");
        return false;
    }
    if ((unsigned long long)*cap > (1ull << 48)) {
        r_err(h, "ERR capacity above 2^48 is not supported");
        return false;
    }
    return true;
}

static bool parse_expansion(host *h, const rarg *a, long long *g, bool ins) {
    if (!arg_ll(a, g)) {
        r_err(h, ins ? "Bad expansion" : "ERR bad expansion");
        return false;
    }
    if (*g < 1) {
        r_err(h, ins ? "Bad argument received"
                     : "ERR expansion should be greater or equal to 1");
        return false;
    }
    /* above 16 the key is RedisBloom's own chain (rb.c), unless STRICT */
    if (*g > BF_MAX_EXPANSION && (strict(h) || *g > UINT32_MAX)) {
        r_err(h, *g > UINT32_MAX ? "ERR bad expansion"
                                 : "ERR expansion above 16 is not supported");
        return false;
    }
    return true;
}

int bf_reserve(host *h) {
    create_args a = defaults();
    bool has_exp = false;
    rval *v;
    if (h->argc < 4)
        return r_arity(h);
    if (!parse_eps(h, &h->argv[2], &a.eps, false) ||
        !parse_cap(h, &h->argv[3], &a.cap, false))
        return 0;
    for (int i = 4; i < h->argc; i++) {
        if (arg_is(&h->argv[i], "NONSCALING")) {
            a.nonscaling = true;
        } else if (arg_is(&h->argv[i], "EXPANSION") && i + 1 == h->argc) {
            return r_err(h, "ERR no expansion");
        } else if (arg_is(&h->argv[i], "EXPANSION")) {
            if (!parse_expansion(h, &h->argv[++i], &a.expansion, false))
                return 0;
            has_exp = true;
        } else {
            return r_err(h, "ERR unknown argument received");
        }
    }
    if (a.nonscaling && has_exp)
        return r_err(h, "Nonscaling filters cannot expand");
    int st = h->ops->lookup(h, 1, FAM_BF, &v);
    if (st != KEY_EMPTY)
        return r_err(h, "ERR item exists");
    v = create(h, a.eps, (uint64_t)a.cap, (uint32_t)a.expansion, a.nonscaling);
    if (v == NULL)
        return 0;
    if (!store_or_reply(h, v))
        return 0;
    h->ops->replicate_verbatim(h);
    h->ops->notify(h, "bf.reserve", 1);
    r_ok(h);
    return 0;
}

int bf_add(host *h) {
    create_args a = defaults();
    if (h->argc != 3)
        return r_arity(h);
    return add_items(h, &a, 2, true);
}

int bf_madd(host *h) {
    create_args a = defaults();
    if (h->argc < 3)
        return r_arity(h);
    return add_items(h, &a, 2, false);
}

int bf_insert(host *h) {
    create_args a = defaults();
    bool has_target = false, has_exp = false;
    int i = 2;
    if (h->argc < 4)
        return r_arity(h);
    for (; i < h->argc && !arg_is(&h->argv[i], "ITEMS"); i++) {
        const rarg *o = &h->argv[i];
        bool more = i + 1 < h->argc;
        if (arg_is(o, "NOCREATE")) {
            a.nocreate = true;
        } else if (arg_is(o, "NONSCALING")) {
            a.nonscaling = true;
        } else if (arg_is(o, "CAPACITY") && more) {
            if (!parse_cap(h, &h->argv[++i], &a.cap, true))
                return 0;
            has_target = true;
        } else if (arg_is(o, "ERROR") && more) {
            if (!parse_eps(h, &h->argv[++i], &a.eps, true))
                return 0;
            has_target = true;
        } else if (arg_is(o, "EXPANSION") && more) {
            if (!parse_expansion(h, &h->argv[++i], &a.expansion, true))
                return 0;
            has_exp = true;
        } else {
            return r_err(h, "Unknown argument received");
        }
    }
    if (i + 1 >= h->argc) /* no item, as RedisBloom: a wrong arity */
        return r_arity(h);
    if (a.nocreate && has_target)
        return r_err(h, "ERR NOCREATE cannot be used together with CAPACITY "
                        "or ERROR");
    /* RedisBloom lets NONSCALING win over EXPANSION here (not in RESERVE) */
    if (a.nonscaling && has_exp && strict(h))
        return r_err(h, "Nonscaling filters cannot expand");
    return add_items(h, &a, i + 1, false);
}

/* Look up a BF key for reading; false after an error reply, *v NULL if
 * the key is missing. */
static bool read_key(host *h, rval **v) {
    return key_open(h, 1, FAM_BF, v, "ERR") >= 0;
}

static bool has(const rval *v, const rarg *item) {
    if (v->rb != NULL)
        return rb_bf_contains(v, item->p, item->n);
    if (sparse(&v->u.bf))
        return hl_has(&v->u.bf.list, amq_hash64(bf_hasher(), item->p, item->n));
    return amq_filter_contains(v->u.bf.f, item->p, item->n);
}

int bf_exists(host *h) { return reply_exists(h, FAM_BF, true, has); }
int bf_mexists(host *h) { return reply_exists(h, FAM_BF, false, has); }

int bf_card(host *h) {
    rval *v;
    if (h->argc != 2)
        return r_arity(h);
    if (!read_key(h, &v))
        return 0;
    h->ops->r_int(h, v == NULL       ? 0
                     : v->rb != NULL ? (long long)rb_bf_items(v)
                                     : (long long)items_of(&v->u.bf));
    return 0;
}

/* BF.DEBUG: RedisBloom's lines, "size:N" and one per stage as built. */
int bf_debug(host *h) {
    rval *v;
    char line[200];
    if (h->argc != 2)
        return r_arity(h);
    if (!read_key(h, &v))
        return 0;
    if (v == NULL)
        return r_err(h, "ERR not found");
    if (v->rb != NULL) {
        unsigned n = rb_bf_links(v);
        h->ops->r_arr(h, 1 + (long)n);
        for (unsigned i = 0; i <= n; i++) {
            int len = rb_bf_debug(v, line, sizeof line, i);
            h->ops->r_str(h, line, (size_t)len);
        }
        return 0;
    }
    /* a sparse key reports the filter its list would make */
    amq_filter *f = v->u.bf.f, *made = NULL;
    char why[160];
    if (f == NULL) {
        if (!filter_of_list(v, &made, why, sizeof why))
            return r_err(h, "ERR out of memory");
        f = made;
    }
    const amq_scalable *sc = amq_scalable_of(f);
    unsigned n = amq_scalable_stages(sc);
    h->ops->r_arr(h, 1 + (long)n);
    int len = snprintf(line, sizeof line, "size:%llu",
                       (unsigned long long)amq_filter_items(f));
    h->ops->r_str(h, line, (size_t)len);
    for (unsigned i = 0; i < n; i++) {
        amq_scalable_stage st;
        amq_scalable_stage_info(sc, i, &st);
        len = snprintf(line, sizeof line,
                       "bytes:%zu bits:%llu hashes:%u hashwidth:64 "
                       "capacity:%llu size:%llu ratio:%g",
                       st.bytes, (unsigned long long)st.bits, st.k,
                       (unsigned long long)st.capacity,
                       (unsigned long long)st.items, st.fpr);
        h->ops->r_str(h, line, (size_t)len);
    }
    amq_filter_free(made);
    return 0;
}

int bf_info(host *h) {
    static const char *const names[] = {"Capacity", "Size", "Number of filters",
                                        "Number of items inserted",
                                        "Expansion rate"};
    static const char *words[] = {"CAPACITY", "SIZE", "FILTERS", "ITEMS",
                                  "EXPANSION"};
    rval *v;
    uint64_t cap;
    int only = -1;
    if (h->argc != 2 && h->argc != 3)
        return r_arity(h);
    if (h->argc == 3) {
        for (int i = 0; i < 5; i++)
            if (arg_is(&h->argv[2], words[i]))
                only = i;
        if (only < 0)
            return r_err(h, "Invalid information value");
    }
    if (!read_key(h, &v))
        return 0;
    if (v == NULL)
        return r_err(h, "ERR not found");
    if (v->rb != NULL) {
        long long val[5];
        rb_bf_info(v, val);
        reply_fields(h, names, val, 5, only, val[4] < 0 ? 4 : -1);
        return 0;
    }
    const bf_part *b = &v->u.bf;
    unsigned s = stages(b, &cap);
    long long val[5] = {(long long)cap, (long long)rv_memory(v), s,
                        (long long)items_of(b), b->expansion};
    reply_fields(h, names, val, 5, only, b->nonscaling ? 4 : -1);
    return 0;
}
