/*
 * demo.c — `amq-lab demo`: every registered type on the same built-in data,
 * compared in one markdown table.
 *
 * Data: 2N outputs of splitmix64 from one seed, as 8-byte little-endian
 * keys; the first N are inserted, the last N are queried as absent keys.
 * splitmix64 is a bijection of its counter, so all 2N keys are distinct and
 * every hit among the absent keys is a genuine false positive.
 *
 * Per type: build through the generic interface (capacity N, target eps),
 * save, load, re-save and compare bytes; view the saved frame in place and
 * check it; query every present key (a false negative is an error) and
 * every absent key (the measured rate); the batch path must give the scalar
 * path's answers exactly. Times are per key on pre-hashed keys, so they
 * measure the structure; hashing is timed on its own in the last column.
 * A static type (AMQ_CAP_STATIC) is built from the N present keys at once
 * with amq_filter_build, after hashing them with the hasher
 * amq_filter_resolve_hasher gives; its "insert" column is the build time
 * per key. A static type whose fixed width cannot meet eps (xor8 at
 * eps < 2^-8) is refused as `amq build` refuses it: an error when the
 * type was asked for with --type, a row saying why it is skipped when
 * the demo runs every type.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lab.h"

#define DEMO_MAX_TYPES 64
#define DEMO_BATCH 1024

typedef struct demo_opts {
    uint64_t n, seed;
    double fpr;
    const char *types[DEMO_MAX_TYPES];
    size_t ntypes;
} demo_opts;

typedef struct demo_data {
    size_t n;
    uint8_t *keys;    /* 2n keys of 8 bytes: present, then absent         */
    uint64_t *hashes; /* 2n hashes, same order                             */
    uint8_t *scalar;  /* 2n answers of contains_hash                       */
    uint8_t *batch;   /* 2n answers of contains_batch                      */
} demo_data;

typedef struct demo_row {
    double bits_per_key, measured, bound;
    double hash_ns, insert_ns, query_ns, batch_ns;
    bool forgets;      /* AMQ_CAP_FORGETS: only the newest key is promised */
    size_t forgotten;  /* present keys no longer reported (forgets only)   */
    char skipped[160]; /* why a type that cannot meet eps was left out    */
} demo_row;

enum { OPT_N = 1, OPT_FPR, OPT_SEED, OPT_TYPE };

static const cli_opt demo_options[] = {
    {"capacity", 'n', true, OPT_N}, {"n", 0, true, OPT_N},
    {"fpr", 'e', true, OPT_FPR},    {"seed", 's', true, OPT_SEED},
    {"type", 't', true, OPT_TYPE},  {NULL, 0, false, 0},
};

/* ---- arguments --------------------------------------------------------------- */

static bool take_option(demo_opts *o, int id, const char *v) {
    switch (id) {
    case OPT_N:
        if (!cli_parse_u64("demo", "--n", v, &o->n))
            return false;
        if (o->n == 0 || o->n > (uint64_t)(SIZE_MAX / 64))
            cli_usage_error("demo", "--n must be between 1 and %zu",
                            SIZE_MAX / 64);
        return o->n != 0 && o->n <= (uint64_t)(SIZE_MAX / 64);
    case OPT_FPR: return cli_parse_fpr("demo", "--fpr", v, &o->fpr);
    case OPT_SEED: return cli_parse_u64("demo", "--seed", v, &o->seed);
    case OPT_TYPE:
        if (o->ntypes == DEMO_MAX_TYPES) {
            cli_usage_error("demo", "at most %d --type options",
                            DEMO_MAX_TYPES);
            return false;
        }
        o->types[o->ntypes++] = v;
        return true;
    default: return false;
    }
}

/* -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, demo_opts *o) {
    cli_args a;
    int id;
    cli_args_init(&a, "demo", argc, argv);
    while ((id = cli_next(&a, demo_options)) != CLI_NEXT_END) {
        if (id == CLI_NEXT_ERR)
            return CLI_EXIT_ERR;
        if (id == CLI_OPT_HELP)
            return cli_help_print(stdout, "demo") ? CLI_EXIT_OK : CLI_EXIT_ERR;
        if (id == CLI_NEXT_POS)
            return cli_usage_error("demo", "unexpected argument '%s'", a.value);
        if (!take_option(o, id, a.value))
            return CLI_EXIT_ERR;
    }
    return -1;
}

/* ---- data --------------------------------------------------------------------- */

static uint64_t splitmix64(uint64_t *state) {
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static bool data_init(demo_data *d, size_t n, uint64_t seed) {
    memset(d, 0, sizeof *d);
    d->n = n;
    d->keys = malloc(2 * n * 8);
    d->hashes = malloc(2 * n * sizeof *d->hashes);
    d->scalar = malloc(2 * n);
    d->batch = malloc(2 * n);
    if (!d->keys || !d->hashes || !d->scalar || !d->batch) {
        cli_error("demo: out of memory for %zu keys", n);
        return false;
    }
    /* Touch every page now so the first type's timings pay no faults. */
    memset(d->hashes, 0, 2 * n * sizeof *d->hashes);
    memset(d->scalar, 0, 2 * n);
    memset(d->batch, 0, 2 * n);
    uint64_t state = seed;
    for (size_t i = 0; i < 2 * n; i++)
        cli_store_le64(d->keys + 8 * i, splitmix64(&state));
    return true;
}

static void data_free(demo_data *d) {
    free(d->keys);
    free(d->hashes);
    free(d->scalar);
    free(d->batch);
}

/* ---- measurements ------------------------------------------------------------ */

static double ns_per(double seconds, size_t n) {
    return n ? seconds * 1e9 / (double)n : 0.0;
}

static void hash_all(const amq_filter *f, demo_data *d, demo_row *r) {
    double t = cli_now();
    for (size_t i = 0; i < 2 * d->n; i++)
        d->hashes[i] = amq_filter_hash(f, d->keys + 8 * i, 8);
    r->hash_ns = ns_per(cli_now() - t, 2 * d->n);
}

static bool insert_all(const char *name, amq_filter *f, const demo_data *d,
                       demo_row *r) {
    double t = cli_now();
    for (size_t i = 0; i < d->n; i++) {
        amq_status st = amq_filter_add_hash(f, d->hashes[i]);
        if (st != AMQ_OK) {
            cli_error("demo: %s: insert of key %zu: %s", name, i + 1,
                      amq_strerror(st));
            return false;
        }
    }
    r->insert_ns = ns_per(cli_now() - t, d->n);
    return true;
}

static void query_scalar(const amq_filter *f, demo_data *d, demo_row *r) {
    double t = cli_now();
    for (size_t i = 0; i < 2 * d->n; i++)
        d->scalar[i] = amq_filter_contains_hash(f, d->hashes[i]) ? 1 : 0;
    r->query_ns = ns_per(cli_now() - t, 2 * d->n);
}

static void query_batch(const amq_filter *f, demo_data *d, uint8_t *out,
                        double *ns) {
    double t = cli_now();
    for (size_t i = 0; i < 2 * d->n; i += DEMO_BATCH) {
        size_t m = 2 * d->n - i < DEMO_BATCH ? 2 * d->n - i : DEMO_BATCH;
        amq_filter_contains_batch(f, d->hashes + i, m, out + i);
    }
    if (ns != NULL)
        *ns = ns_per(cli_now() - t, 2 * d->n);
}

/* Zero false negatives (for a forgetting type: the newest key is there,
 * and the forgotten ones are counted), batch == scalar, and the measured
 * rate. */
static bool check_answers(const char *name, const demo_data *d, demo_row *r) {
    size_t fn = 0, fp = 0, differ = 0;
    for (size_t i = 0; i < 2 * d->n; i++) {
        differ += (d->scalar[i] != 0) != (d->batch[i] != 0);
        if (i < d->n)
            fn += d->scalar[i] == 0;
        else
            fp += d->scalar[i] != 0;
    }
    r->measured = (double)fp / (double)d->n;
    if (r->forgets) {
        r->forgotten = fn;
        fn = d->scalar[d->n - 1] == 0;
    }
    if (fn != 0)
        cli_error("demo: %s: %zu FALSE NEGATIVES among %zu present keys", name,
                  fn, d->n);
    if (differ != 0)
        cli_error("demo: %s: batch and scalar answers differ for %zu keys",
                  name, differ);
    return fn == 0 && differ == 0;
}

/* ---- serialization round trip ----------------------------------------------- */

static uint8_t *save_alloc(const amq_filter *f, size_t *len, amq_status *st) {
    size_t size = amq_filter_serialized_size(f);
    uint8_t *buf = malloc(size > 0 ? size : 1);
    *st = buf == NULL ? AMQ_ERR_NOMEM : amq_filter_save(f, buf, size, len);
    if (*st == AMQ_OK && *len != size)
        *st = AMQ_ERR_BUFFER;
    if (*st != AMQ_OK) {
        free(buf);
        buf = NULL;
    }
    return buf;
}

static bool report(const char *name, const char *step, amq_status st,
                   const amq_diag *diag) {
    char what[128];
    snprintf(what, sizeof what, "demo: %s: %s", name, step);
    cli_status_error(what, st, diag);
    return false;
}

/* The view must give the original's answers (it reads the frame in place). */
static bool check_view(const char *name, const uint8_t *buf, size_t len,
                       demo_data *d) {
    amq_diag diag;
    memset(&diag, 0, sizeof diag);
    amq_filter *v = NULL;
    amq_status st = amq_filter_view(buf, len, NULL, &v, &diag);
    if (st == AMQ_ERR_UNSUPPORTED)
        return true;
    if (st != AMQ_OK)
        return report(name, "view", st, &diag);
    query_batch(v, d, d->batch, NULL);
    amq_filter_free(v);
    bool same = memcmp(d->batch, d->scalar, 2 * d->n) == 0;
    if (!same)
        cli_error("demo: %s: the view answers differently", name);
    return same;
}

static bool round_trip(const char *name, const amq_filter *f, demo_data *d) {
    amq_status st;
    amq_diag diag;
    memset(&diag, 0, sizeof diag);
    size_t len = 0, len2 = 0;
    uint8_t *buf = save_alloc(f, &len, &st), *buf2 = NULL;
    amq_filter *g = NULL;
    bool ok = buf != NULL || report(name, "save", st, NULL);
    if (ok && (st = amq_filter_load(buf, len, NULL, &g, &diag)) != AMQ_OK)
        ok = report(name, "load", st, &diag);
    if (ok && (buf2 = save_alloc(g, &len2, &st)) == NULL)
        ok = report(name, "re-save", st, NULL);
    if (ok && (len != len2 || memcmp(buf, buf2, len) != 0)) {
        cli_error("demo: %s: re-saved bytes differ from the saved ones", name);
        ok = false;
    }
    if (ok)
        ok = check_view(name, buf, len, d);
    amq_filter_free(g);
    free(buf);
    free(buf2);
    return ok;
}

/* ---- one type ------------------------------------------------------------------ */

static bool run_type(const char *spec, const demo_opts *o, demo_data *d,
                     demo_row *r) {
    amq_diag diag;
    memset(&diag, 0, sizeof diag);
    amq_filter *f = NULL;
    amq_status st = amq_filter_new(spec, o->n, o->fpr, NULL, &f, &diag);
    if (st != AMQ_OK)
        return report(spec, "create", st, &diag);
    hash_all(f, d, r);
    bool ok = insert_all(spec, f, d, r);
    if (ok) {
        query_scalar(f, d, r);
        query_batch(f, d, d->batch, &r->batch_ns);
        ok = check_answers(spec, d, r);
    }
    r->bits_per_key = amq_filter_bits_per_key(f);
    r->bound = amq_filter_fpr_bound(f);
    if (ok)
        ok = round_trip(spec, f, d);
    amq_filter_free(f);
    return ok;
}

/* A static type: a builder hashes the keys (with the hasher the filter
 * will have), then builds once. */
static bool build_static(const char *spec, const demo_opts *o, demo_data *d,
                         demo_row *r, amq_filter **f) {
    amq_diag diag;
    amq_builder *b = NULL;
    memset(&diag, 0, sizeof diag);
    amq_status st = amq_builder_new(spec, NULL, &b, &diag);
    if (st != AMQ_OK)
        return report(spec, "builder", st, &diag);
    double t = cli_now();
    for (size_t i = 0; i < 2 * d->n; i++)
        d->hashes[i] = amq_builder_hash(b, d->keys + 8 * i, 8);
    r->hash_ns = ns_per(cli_now() - t, 2 * d->n);
    st = amq_builder_add_hashes(b, d->hashes, d->n);
    t = cli_now();
    if (st == AMQ_OK)
        st = amq_builder_finish(b, o->fpr, f, &diag);
    r->insert_ns = ns_per(cli_now() - t, d->n);
    amq_builder_free(b);
    if (st == AMQ_ERR_INVALID && o->ntypes == 0) {
        /* the whole-registry run: a width that cannot reach eps is a
         * property of the type, not a failure of the demo */
        snprintf(r->skipped, sizeof r->skipped, "%s", diag.message);
        return false;
    }
    return st == AMQ_OK || report(spec, "build", st, &diag);
}

static bool run_static(const char *spec, const demo_opts *o, demo_data *d,
                       demo_row *r) {
    amq_filter *f = NULL;
    if (!build_static(spec, o, d, r, &f))
        return r->skipped[0] != 0;
    query_scalar(f, d, r);
    query_batch(f, d, d->batch, &r->batch_ns);
    bool ok = check_answers(spec, d, r);
    r->bits_per_key = amq_filter_bits_per_key(f);
    r->bound = amq_filter_fpr_bound(f);
    if (ok)
        ok = round_trip(spec, f, d);
    amq_filter_free(f);
    return ok;
}

/* ---- the table ------------------------------------------------------------------ */

static void print_header(const demo_opts *o) {
    printf("amq-lab demo: N = %llu present + %llu absent splitmix64 keys "
           "(8 bytes, seed %llu), target eps = %g\n\n",
           (unsigned long long)o->n, (unsigned long long)o->n,
           (unsigned long long)o->seed, o->fpr);
    printf("| type | bits/key | lower bound log2(1/eps) | measured eps | "
           "certified bound | insert (static: build) ns/key | query ns/key | "
           "batch ns/key | hash ns/key |\n");
    printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    fflush(stdout);
}

static void print_row(const char *name, const demo_row *r, double lower) {
    printf("| %s | %.2f | %.2f | %.5f | %.5f | %.1f | %.1f | %.1f | %.1f |\n",
           name, r->bits_per_key, lower, r->measured, r->bound, r->insert_ns,
           r->query_ns, r->batch_ns, r->hash_ns);
    fflush(stdout);
}

static bool has_cap(const char *spec, uint32_t cap) {
    const amq_type_info *t = amq_filter_type_find(spec);
    return t != NULL && (t->caps & cap) != 0;
}

/* A forgetting type's note: how much of the stream it still holds. */
static void print_forgetting(const char *name, const demo_row *r, size_t n) {
    printf("|   (%s forgets old keys by design: %zu of the %zu keys "
           "(%.1f%%) are still reported after the stream) |\n",
           name, n - r->forgotten, n,
           100.0 * (double)(n - r->forgotten) / (double)n);
}

/* One spec: a table row; false on failure. */
static bool demo_one(const char *spec, const demo_opts *o, demo_data *d) {
    demo_row r;
    memset(&r, 0, sizeof r);
    if (has_cap(spec, AMQ_CAP_SKETCH)) {
        printf("| %s | frequency sketch, not a membership filter: skipped "
               "| | | | | | | |\n",
               spec);
        return true;
    }
    r.forgets = has_cap(spec, AMQ_CAP_FORGETS);
    bool ok = has_cap(spec, AMQ_CAP_STATIC) ? run_static(spec, o, d, &r)
                                            : run_type(spec, o, d, &r);
    if (ok && r.skipped[0] != 0) {
        printf("| %s | skipped, as amq build refuses it: %s | | | | | | | "
               "|\n",
               spec, r.skipped);
        return true;
    }
    if (ok)
        print_row(spec, &r, log2(1.0 / o->fpr));
    if (ok && r.forgets)
        print_forgetting(spec, &r, d->n);
    return ok;
}

static int demo_run(const demo_opts *o, demo_data *d) {
    size_t failures = 0;
    size_t count = o->ntypes ? o->ntypes : amq_filter_type_count();
    print_header(o);
    for (size_t i = 0; i < count; i++) {
        const amq_type_info *t = o->ntypes ? NULL : amq_filter_type_at(i);
        const char *spec = o->ntypes ? o->types[i] : (t ? t->name : NULL);
        if (spec != NULL && !demo_one(spec, o, d))
            failures++;
    }
    printf("\nTimes are per key on pre-hashed keys; queries cover present and "
           "absent keys alike.\n");
    if (failures)
        cli_error("demo: %zu type(s) failed", failures);
    return failures ? CLI_EXIT_ERR : CLI_EXIT_OK;
}

int lab_cmd_demo(int argc, char **argv) {
    demo_opts o;
    memset(&o, 0, sizeof o);
    o.n = 1000000;
    o.fpr = 0.01;
    o.seed = 42;
    int rc = parse_args(argc, argv, &o);
    if (rc >= 0)
        return rc;
    demo_data d;
    rc = data_init(&d, (size_t)o.n, o.seed) ? demo_run(&o, &d) : CLI_EXIT_ERR;
    data_free(&d);
    return rc;
}
