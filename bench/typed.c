/*
 * typed.c — the typed fast paths of the fingerprint filters as bench
 * subjects: cuckoo and vacuum (amq_cuckoo_*), qf and cqf (amq_qf_*), xor
 * and binary fuse (amq_xor_*), Ribbon (amq_ribbon_*), and the fast dynamic
 * filters vqf, prefix and morton (amq_vqf_*, amq_prefix_*, amq_morton_*).
 * Each is sized from the same (n, ε) as its generic row, so the two rows
 * differ only in the call path.
 *
 * Dynamic types insert one key at a time here (a loop of *_add_hash):
 * their insert column is the single-insert figure, beside the generic
 * row's batch insert (amq_filter_add_batch). Static types build in
 * "insert", as their generic rows do.
 *
 * The "inline" rows query through amq/query.h's objects, the query
 * compiled into the bench's loop (fuse8, cuckoo, vacuum).
 *
 * A row name may carry parameters the typed API can express:
 * cuckoo:fp=F, fuse8:ways=4, ribbon:bump=0, ribbon:w=128.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amq/amq.h"
#include "bench.h"

static int fail(const char *what, amq_status st, char *err, size_t cap) {
    snprintf(err, cap, "%s: %s", what, amq_strerror(st));
    return -1;
}

/* The value of "key=" in a spec's parameters, or dflt. */
static unsigned spec_param(const char *spec, const char *key, unsigned dflt) {
    const char *p = strchr(spec, ':');
    size_t len = strlen(key);
    while (p != NULL) {
        p++;
        if (strncmp(p, key, len) == 0 && p[len] == '=')
            return (unsigned)strtoul(p + len + 1, NULL, 10);
        p = strchr(p, ',');
    }
    return dflt;
}

/* ---- dynamic types: one table of adapters ------------------------------- */

/* The typed APIs of the dynamic fingerprint filters have one shape; each
 * family is a row of adapters, its loops (DYN_LOOPS) calling the typed
 * functions directly: the same call a program makes. */
typedef struct dyn_api {
    const char *name; /* the spec name, or a prefix of it */
    amq_status (*create)(const char *spec, uint64_t n, double fpr, void **out);
    void (*destroy)(void *f);
    int (*adds)(void *f, const uint64_t *k, size_t n); /* 0: all went in */
    uint64_t (*hits)(const void *f, const uint64_t *k, size_t n);
    void (*batch)(const void *f, const uint64_t *h, size_t n, uint8_t *out);
    size_t (*size)(const void *f);
    double (*bound)(const void *f);
    /* through the amq/query.h object; NULL: the family has none */
    uint64_t (*inl)(const void *f, const uint64_t *k, size_t n);
} dyn_api;

/* A family's loops call its typed functions directly, as a program does
 * (a call through a pointer for every key would add a jump that the
 * program's loop does not have). */
#define DYN_LOOPS(P, T, ADD, HAS)                                              \
    static int P##_adds(void *f, const uint64_t *k, size_t n) {                \
        for (size_t i = 0; i < n; i++)                                         \
            if (ADD((T *)f, k[i]) != AMQ_OK)                                   \
                return 1;                                                      \
        return 0;                                                              \
    }                                                                          \
    static uint64_t P##_hits(const void *f, const uint64_t *k, size_t n) {     \
        uint64_t hits = 0;                                                     \
        for (size_t i = 0; i < n; i++)                                         \
            hits += HAS((const T *)f, k[i]);                                   \
        return hits;                                                           \
    }

/* cuckoo[:fp=F] (the table its capacity gives, at F bits), vacuum */
static amq_status ck_new(const char *spec, uint64_t n, double fpr, void **out) {
    amq_cuckoo *c = NULL;
    bool vacuum = strncmp(spec, "vacuum", 6) == 0;
    amq_status st = vacuum ? amq_vacuum_new(n, fpr, bench_options(), &c)
                           : amq_cuckoo_new(n, fpr, bench_options(), &c);
    unsigned fp = spec_param(spec, "fp", 0);
    if (st == AMQ_OK && !vacuum && fp != 0 && fp != amq_cuckoo_fp_bits(c)) {
        uint64_t buckets = amq_cuckoo_buckets(c);
        amq_cuckoo_free(c);
        c = NULL;
        st = amq_cuckoo_new_explicit(buckets, fp, AMQ_CUCKOO_DEFAULT_KICKS,
                                     bench_options(), &c);
    }
    *out = c;
    return st;
}
static void ck_free(void *f) { amq_cuckoo_free(f); }
DYN_LOOPS(ck, amq_cuckoo, amq_cuckoo_add_hash, amq_cuckoo_contains_hash)
static void ck_batch(const void *f, const uint64_t *h, size_t n, uint8_t *out) {
    amq_cuckoo_contains_batch(f, h, n, out);
}
static size_t ck_size(const void *f) { return amq_cuckoo_size_bytes(f); }
static double ck_bound(const void *f) { return amq_cuckoo_fpr_bound(f); }

static amq_status qf_new(const char *spec, uint64_t n, double fpr, void **out) {
    return strncmp(spec, "cqf", 3) == 0
               ? amq_cqf_new(n, fpr, bench_options(), (amq_qf **)out)
               : amq_qf_new(n, fpr, bench_options(), (amq_qf **)out);
}
static void qf_free(void *f) { amq_qf_free(f); }
DYN_LOOPS(qf, amq_qf, amq_qf_insert, amq_qf_contains)
static void qf_batch(const void *f, const uint64_t *h, size_t n, uint8_t *out) {
    amq_qf_contains_batch(f, h, n, out);
}
static size_t qf_size(const void *f) { return amq_qf_size_bytes(f); }
static double qf_bound(const void *f) { return amq_qf_fpr_bound(f); }

/* A spec with parameters ("vqf:r=16", "prefix:r=16", "morton:fp=16"): the
 * table the generic layer makes of it for (n, fpr), as its describe()
 * string, so that the typed row measures the generic row's table. */
static amq_status sized(const char *spec, uint64_t n, double fpr, char *desc,
                        size_t cap) {
    amq_filter *g = NULL;
    amq_status st = amq_filter_new(spec, n, fpr, bench_options(), &g, NULL);
    if (st == AMQ_OK)
        amq_filter_describe(g, desc, cap);
    amq_filter_free(g);
    return st;
}

static amq_status vqf_new(const char *spec, uint64_t n, double fpr,
                          void **out) {
    char d[128];
    if (strchr(spec, ':') == NULL)
        return amq_vqf_new(n, fpr, bench_options(), (amq_vqf **)out);
    AMQ_RETURN_IF_ERR(sized(spec, n, fpr, d, sizeof d));
    return amq_vqf_new_explicit(spec_param(d, "blocks", 0),
                                spec_param(d, "r", 0), bench_options(),
                                (amq_vqf **)out);
}
static void vqf_free(void *f) { amq_vqf_free(f); }
DYN_LOOPS(vqf, amq_vqf, amq_vqf_add_hash, amq_vqf_contains_hash)
static void vqf_batch(const void *f, const uint64_t *h, size_t n,
                      uint8_t *out) {
    amq_vqf_contains_batch(f, h, n, out);
}
static size_t vqf_size(const void *f) { return amq_vqf_size_bytes(f); }
static double vqf_bound(const void *f) { return amq_vqf_fpr_bound(f); }

static amq_status pf_new(const char *spec, uint64_t n, double fpr, void **out) {
    char d[128];
    if (strchr(spec, ':') == NULL)
        return amq_prefix_new(n, fpr, bench_options(), (amq_prefix **)out);
    AMQ_RETURN_IF_ERR(sized(spec, n, fpr, d, sizeof d));
    return amq_prefix_new_explicit(
        spec_param(d, "bins", 0), spec_param(d, "r", 0),
        spec_param(d, "spare", 0), bench_options(), (amq_prefix **)out);
}
static void pf_free(void *f) { amq_prefix_free(f); }
DYN_LOOPS(pf, amq_prefix, amq_prefix_add_hash, amq_prefix_contains_hash)
static void pf_batch(const void *f, const uint64_t *h, size_t n, uint8_t *out) {
    amq_prefix_contains_batch(f, h, n, out);
}
static size_t pf_size(const void *f) { return amq_prefix_size_bytes(f); }
static double pf_bound(const void *f) { return amq_prefix_fpr_bound(f); }

static amq_status mf_new(const char *spec, uint64_t n, double fpr, void **out) {
    char d[128];
    if (strchr(spec, ':') == NULL)
        return amq_morton_new(n, fpr, bench_options(), (amq_morton **)out);
    AMQ_RETURN_IF_ERR(sized(spec, n, fpr, d, sizeof d));
    return amq_morton_new_explicit(
        spec_param(d, "blocks", 0), spec_param(d, "fp", 0),
        spec_param(d, "max_kicks", 0), bench_options(), (amq_morton **)out);
}
static void mf_free(void *f) { amq_morton_free(f); }
DYN_LOOPS(mf, amq_morton, amq_morton_add_hash, amq_morton_contains_hash)
static void mf_batch(const void *f, const uint64_t *h, size_t n, uint8_t *out) {
    amq_morton_contains_batch(f, h, n, out);
}
static size_t mf_size(const void *f) { return amq_morton_size_bytes(f); }
static double mf_bound(const void *f) { return amq_morton_fpr_bound(f); }

/* The inline loops: the query object made once per timed loop (as a
 * program makes it once per filter), the query compiled into the loop;
 * the typed call where the filter has no object. */
static uint64_t ck_inl(const void *f, const uint64_t *k, size_t n) {
    amq_cuckoo_query q;
    uint64_t hits = 0;
    if (amq_cuckoo_query_of(f, &q) != AMQ_OK)
        return ck_hits(f, k, n);
    for (size_t i = 0; i < n; i++)
        hits += amq_cuckoo_query_contains(&q, k[i]);
    return hits;
}
static const dyn_api dyn_apis[] = {
    {"cuckoo", ck_new, ck_free, ck_adds, ck_hits, ck_batch, ck_size, ck_bound,
     ck_inl},
    {"vacuum", ck_new, ck_free, ck_adds, ck_hits, ck_batch, ck_size, ck_bound,
     ck_inl},
    {"qf", qf_new, qf_free, qf_adds, qf_hits, qf_batch, qf_size, qf_bound,
     NULL},
    {"cqf", qf_new, qf_free, qf_adds, qf_hits, qf_batch, qf_size, qf_bound,
     NULL},
    {"vqf", vqf_new, vqf_free, vqf_adds, vqf_hits, vqf_batch, vqf_size,
     vqf_bound, NULL},
    {"prefix", pf_new, pf_free, pf_adds, pf_hits, pf_batch, pf_size, pf_bound,
     NULL},
    {"morton", mf_new, mf_free, mf_adds, mf_hits, mf_batch, mf_size, mf_bound,
     NULL},
};

static bool named(const char *spec, const char *base) {
    size_t len = strlen(base);
    return strncmp(spec, base, len) == 0 &&
           (spec[len] == '\0' || spec[len] == ':');
}

static const dyn_api *dyn_find(const char *spec) {
    for (size_t i = 0; i < sizeof dyn_apis / sizeof *dyn_apis; i++)
        if (named(spec, dyn_apis[i].name))
            return &dyn_apis[i];
    return NULL;
}

typedef struct dyn_obj {
    const dyn_api *api;
    char spec[64];
    void *f;
} dyn_obj;

static int dyn_create(const char *name, uint64_t n, double fpr, void **obj,
                      char *err, size_t cap) {
    const dyn_api *api = dyn_find(name);
    dyn_obj *d = calloc(1, sizeof *d);
    if (api == NULL || d == NULL) {
        free(d);
        snprintf(err, cap, "%s: no typed API", name);
        return -1;
    }
    amq_status st = api->create(name, n, fpr, &d->f);
    if (st != AMQ_OK) {
        free(d);
        return fail(name, st, err, cap);
    }
    d->api = api;
    snprintf(d->spec, sizeof d->spec, "%s", name);
    *obj = d;
    return 0;
}

static void dyn_destroy(void *obj) {
    dyn_obj *d = obj;
    if (d != NULL)
        d->api->destroy(d->f);
    free(d);
}

static int dyn_insert(void *obj, const uint64_t *k, size_t n) {
    dyn_obj *d = obj;
    return d->api->adds(d->f, k, n);
}

static uint64_t dyn_query(void *obj, const uint64_t *k, size_t n) {
    const dyn_obj *d = obj;
    return d->api->hits(d->f, k, n);
}

static void dyn_batch(void *obj, const uint64_t *k, size_t n, uint8_t *out) {
    const dyn_obj *d = obj;
    d->api->batch(d->f, k, n, out);
}

static size_t dyn_size(void *obj) {
    const dyn_obj *d = obj;
    return d->api->size(d->f);
}

static double dyn_bound(void *obj, uint64_t n) {
    const dyn_obj *d = obj;
    (void)n;
    return d->api->bound(d->f);
}

static void dyn_describe(void *obj, char *buf, size_t cap) {
    const dyn_obj *d = obj;
    snprintf(buf, cap, "%s (typed)", d->spec);
}

static const bench_ops dynamic_ops = {
    .path = "typed",
    .create = dyn_create,
    .destroy = dyn_destroy,
    .insert = dyn_insert,
    .query_scalar = dyn_query,
    .query_batch = dyn_batch,
    .size_bytes = dyn_size,
    .fpr_bound = dyn_bound,
    .describe = dyn_describe,
};

/* ---- static filters: the build is the insert ------------------------------ */

typedef struct st_typed {
    char name[64];
    double fpr;
    amq_xor *x;    /* xor and fuse */
    amq_ribbon *r; /* ribbon       */
} st_typed;

static int stt_create(const char *name, uint64_t n, double fpr, void **obj,
                      char *err, size_t cap) {
    (void)n;
    st_typed *s = calloc(1, sizeof *s);
    if (s == NULL) {
        snprintf(err, cap, "out of memory");
        return -1;
    }
    snprintf(s->name, sizeof s->name, "%s", name);
    s->fpr = fpr;
    *obj = s;
    return 0;
}

static void stt_release(st_typed *s) {
    amq_xor_free(s->x);
    amq_ribbon_free(s->r);
    s->x = NULL;
    s->r = NULL;
}

static void stt_destroy(void *obj) {
    if (obj != NULL)
        stt_release(obj);
    free(obj);
}

/* xorW, fuseW[:ways=K], ribbon[:bump=0][,w=128]: the generic build's
 * shape (ribbon's solution bits from amq_ribbon_bits_for, as the generic
 * build takes them). */
static int stt_insert(void *obj, const uint64_t *k, size_t n) {
    st_typed *s = obj;
    unsigned width = 0;
    stt_release(s);
    if (strncmp(s->name, "ribbon", 6) == 0) {
        double bits = amq_ribbon_bits_for(s->fpr);
        unsigned band = spec_param(s->name, "w", 64);
        if (spec_param(s->name, "bump", 1) == 0)
            return amq_ribbon_build_standard(k, n, bits, band, bench_options(),
                                             &s->r) != AMQ_OK;
        return amq_ribbon_build(k, n, bits, band, bench_options(), &s->r) !=
               AMQ_OK;
    }
    if (sscanf(s->name, "xor%u", &width) == 1)
        return amq_xor_build(k, n, width, bench_options(), &s->x) != AMQ_OK;
    if (sscanf(s->name, "fuse%u", &width) == 1)
        return amq_fuse_build(k, n, width, spec_param(s->name, "ways", 3),
                              bench_options(), &s->x) != AMQ_OK;
    return 1;
}

static uint64_t stt_query(void *obj, const uint64_t *k, size_t n) {
    const st_typed *s = obj;
    uint64_t hits = 0;
    if (s->x != NULL)
        for (size_t i = 0; i < n; i++)
            hits += amq_xor_contains_hash(s->x, k[i]);
    else
        for (size_t i = 0; i < n; i++)
            hits += amq_ribbon_contains_hash(s->r, k[i]);
    return hits;
}

static void stt_batch(void *obj, const uint64_t *k, size_t n, uint8_t *out) {
    const st_typed *s = obj;
    if (s->x != NULL)
        amq_xor_contains_batch(s->x, k, n, out);
    else
        amq_ribbon_contains_batch(s->r, k, n, out);
}

static size_t stt_size(void *obj) {
    const st_typed *s = obj;
    return s->x != NULL ? amq_xor_size_bytes(s->x)
                        : amq_ribbon_size_bytes(s->r);
}

static double stt_bound(void *obj, uint64_t n) {
    const st_typed *s = obj;
    (void)n;
    return s->x != NULL ? amq_xor_fpr_bound(s->x) : amq_ribbon_fpr_bound(s->r);
}

static void stt_describe(void *obj, char *buf, size_t cap) {
    const st_typed *s = obj;
    if (s->x != NULL)
        snprintf(buf, cap, "width=%u,ways=%u", amq_xor_width(s->x),
                 amq_xor_ways(s->x));
    else
        snprintf(buf, cap, "bits=%.4g,w=%u,layers=%u", amq_ribbon_bits(s->r),
                 amq_ribbon_band(s->r), amq_ribbon_layers(s->r));
}

static const bench_ops static_typed_ops = {
    .path = "typed",
    .create = stt_create,
    .destroy = stt_destroy,
    .insert = stt_insert,
    .query_scalar = stt_query,
    .query_batch = stt_batch,
    .size_bytes = stt_size,
    .fpr_bound = stt_bound,
    .describe = stt_describe,
};

/* ---- inline queries (amq/query.h): the typed build, queried in the loop -- */

/* The dynamic families with a query object (dyn_api.inl). */
static uint64_t inl_dyn(void *obj, const uint64_t *k, size_t n) {
    const dyn_obj *d = obj;
    return d->api->inl(d->f, k, n);
}

static const bench_ops inline_dyn_ops = {
    .path = "inline",
    .create = dyn_create,
    .destroy = dyn_destroy,
    .insert = dyn_insert,
    .query_scalar = inl_dyn,
    .query_batch = dyn_batch,
    .size_bytes = dyn_size,
    .fpr_bound = dyn_bound,
    .describe = dyn_describe,
};

/* fuse8 through amq_fuse8_query_contains: the query object is made once
 * per timed loop (as a program makes it once per filter), then the whole
 * query is compiled into this loop. */
static uint64_t inl_query(void *obj, const uint64_t *k, size_t n) {
    const st_typed *s = obj;
    amq_fuse8_query q;
    uint64_t hits = 0;
    if (amq_fuse8_query_of(s->x, &q) != AMQ_OK) {
        for (size_t i = 0; i < n; i++)
            hits += amq_xor_contains_hash(s->x, k[i]);
        return hits;
    }
    for (size_t i = 0; i < n; i++)
        hits += amq_fuse8_query_contains(&q, k[i]);
    return hits;
}

static const bench_ops inline_ops = {
    .path = "inline",
    .create = stt_create,
    .destroy = stt_destroy,
    .insert = stt_insert,
    .query_scalar = inl_query,
    .query_batch = stt_batch,
    .size_bytes = stt_size,
    .fpr_bound = stt_bound,
    .describe = stt_describe,
};

const bench_ops *bench_inline_ops(const char *spec) {
    if (strcmp(spec, "fuse8") == 0)
        return &inline_ops;
    const dyn_api *api = dyn_find(spec);
    return api != NULL && api->inl != NULL ? &inline_dyn_ops : NULL;
}

/* ---- lookup -------------------------------------------------------------- */

const bench_ops *bench_typed_fp_ops(const char *spec) {
    static const char *const statics[] = {"xor8",   "xor16",  "xor32", "fuse8",
                                          "fuse16", "fuse32", "ribbon"};
    if (dyn_find(spec) != NULL)
        return &dynamic_ops;
    for (size_t i = 0; i < sizeof statics / sizeof *statics; i++)
        if (named(spec, statics[i]))
            return &static_typed_ops;
    return NULL;
}
