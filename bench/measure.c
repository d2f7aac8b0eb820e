/*
 * measure.c — build, query and accuracy measurements of one subject at n.
 *
 * Build: create + insert all n keys, repeated insert_reps times on a fresh
 * object (the last one is kept for the queries); insert ns/key excludes
 * creation, build ms includes it. Queries: min(n, --queries) inserted keys
 * (positives) and as many never-inserted keys (negatives), each asked one
 * at a time (scalar) and in chunks of --batch hashes (batch), and the
 * negatives once more as 16-byte keys (byte-key path, hashing included),
 * every timing repeated (bench_query_reps) and summarised by the minimum,
 * or the median with --stat median (on a shared machine interference only
 * ever adds time, so the minimum is the steadier estimate). Each
 * repetition is preceded by a pass of the memory probe it is compared
 * with, over an array of the filter's byte size (probe.c). Hit counts are summed into
 * a sink, so no query can be optimised away, and double as the accuracy
 * check: every positive must hit (else false_neg > 0), and negatives that
 * hit give the measured FPR. The dependent probe (pure latency) is
 * cached per byte size, since inline and generic rows share sizes.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define MAX_REPS 64

typedef struct query_ctx {
    const bench_cfg *cfg;
    const bench_subject *s;
    void *obj;
    uint64_t n;             /* keys in the filter (sets the repetitions) */
    uint8_t *out;           /* cfg->batch bytes */
    bench_probe_arr *probe; /* as many bytes as the filter; may be NULL */
    const uint64_t *stream; /* the probe's addresses: the negatives */
    size_t q;
} query_ctx;

static int clamp_reps(int r) { return r < 1 ? 1 : r > MAX_REPS ? MAX_REPS : r; }

/* Far beyond cache one build takes seconds and one query pass about a
 * second; the default run must stay within minutes. */
#define LARGE_N 10000000u

int bench_query_reps(const bench_cfg *cfg, uint64_t n) {
    if (cfg->reps > 0)
        return clamp_reps(cfg->reps);
    return n >= LARGE_N ? 3 : 5;
}

int bench_insert_reps(const bench_cfg *cfg, uint64_t n) {
    if (cfg->insert_reps > 0)
        return clamp_reps(cfg->insert_reps);
    return n >= LARGE_N ? 1 : bench_query_reps(cfg, n);
}

static void *build_once(const bench_subject *s, const bench_keys *k, double fpr,
                        bench_row *row, double *ins_ns, double *total_ms) {
    void *obj = NULL;
    uint64_t t0 = bench_now_ns();
    if (s->ops->create(s->name, k->n, fpr, &obj, row->note, sizeof row->note) !=
        0)
        return NULL;
    bench_mem_mark();
    uint64_t t1 = bench_now_ns();
    int bad = s->ops->insert(obj, k->pos, (size_t)k->n);
    uint64_t t2 = bench_now_ns();
    /* a peer allocates with malloc, unseen by the counting allocator */
    row->build_extra = strcmp(s->ops->path, "peer") == 0
                           ? SIZE_MAX
                           : bench_mem_peak() - bench_mem_live();
    if (bad) {
        snprintf(row->note, sizeof row->note, "an insert failed");
        s->ops->destroy(obj);
        return NULL;
    }
    *ins_ns = (double)(t2 - t1) / (double)k->n;
    *total_ms = (double)(t2 - t0) / 1e6;
    return obj;
}

static void *build(const bench_cfg *cfg, const bench_subject *s,
                   const bench_keys *k, bench_row *row) {
    double ins[MAX_REPS], tot[MAX_REPS];
    int reps = bench_insert_reps(cfg, k->n);
    void *obj = NULL;
    for (int r = 0; r < reps; r++) {
        if (obj != NULL)
            s->ops->destroy(obj);
        obj = build_once(s, k, cfg->fpr, row, &ins[r], &tot[r]);
        if (obj == NULL)
            return NULL;
    }
    row->insert_reps = reps;
    row->insert_ns = bench_summary(ins, (size_t)reps);
    row->build_ms = bench_summary(tot, (size_t)reps);
    return obj;
}

static uint64_t run_batch(const query_ctx *c, const uint64_t *keys, size_t q) {
    uint64_t hits = 0;
    for (size_t i = 0; i < q; i += c->cfg->batch) {
        size_t len = q - i < c->cfg->batch ? q - i : c->cfg->batch;
        c->s->ops->query_batch(c->obj, keys + i, len, c->out);
        for (size_t j = 0; j < len; j++)
            hits += c->out[j];
    }
    return hits;
}

/* One pass of path p over keys; returns the keys reported present. */
static uint64_t run_path(const query_ctx *c, bench_path p, const uint64_t *keys,
                         size_t q) {
    if (p == BENCH_POS_BATCH || p == BENCH_NEG_BATCH)
        return run_batch(c, keys, q);
    if (p == BENCH_NEG_BYTES)
        return c->s->ops->query_bytes(c->obj, keys, q);
    return c->s->ops->query_scalar(c->obj, keys, q);
}

/* ns/key of path p summarised over the query repetitions, each right
 * after a pass of the probe reads it is compared with (*probe_ns, the
 * same summary); *hits from the last repetition. */
static double time_path(const query_ctx *c, bench_path p, const uint64_t *keys,
                        uint64_t *hits, double *probe_ns) {
    double t[MAX_REPS], pr[MAX_REPS];
    bool batched = p == BENCH_POS_BATCH || p == BENCH_NEG_BATCH;
    int reps = bench_query_reps(c->cfg, c->n);
    for (int r = 0; r < reps; r++) {
        pr[r] = c->probe == NULL ? NAN
                                 : bench_probe_time(c->probe,
                                                    batched ? BENCH_PROBE_BATCH
                                                            : BENCH_PROBE_INDEP,
                                                    c->stream, c->q);
        uint64_t t0 = bench_now_ns();
        *hits = run_path(c, p, keys, c->q);
        t[r] = (double)(bench_now_ns() - t0) / (double)c->q;
        bench_consume(*hits);
    }
    *probe_ns = bench_summary(pr, (size_t)reps);
    return bench_summary(t, (size_t)reps);
}

static void note_append(bench_row *row, const char *msg) {
    size_t len = strlen(row->note);
    snprintf(row->note + len, sizeof row->note - len, "%s%s", len ? "; " : "",
             msg);
}

static double min_of(double a, double b) {
    return isnan(a) ? b : isnan(b) ? a : a < b ? a : b;
}

static void measure_queries(const query_ctx *c, const bench_keys *k,
                            bench_row *row) {
    uint64_t hits[BENCH_PATHS] = {0};
    double ns[BENCH_PATHS];
    for (int p = 0; p < BENCH_PATHS; p++) {
        bool pos = p == BENCH_POS_SCALAR || p == BENCH_POS_BATCH;
        bool have = (p != BENCH_POS_BATCH && p != BENCH_NEG_BATCH) ||
                    c->s->ops->query_batch != NULL;
        if (p == BENCH_NEG_BYTES)
            have = c->s->ops->query_bytes != NULL;
        ns[p] = row->probe_at[p] = NAN;
        if (have)
            ns[p] = time_path(c, (bench_path)p, pos ? k->pos : k->neg, &hits[p],
                              &row->probe_at[p]);
    }
    row->pos_scalar_ns = ns[BENCH_POS_SCALAR];
    row->neg_scalar_ns = ns[BENCH_NEG_SCALAR];
    row->neg_bytes_ns = ns[BENCH_NEG_BYTES];
    row->pos_batch_ns = ns[BENCH_POS_BATCH];
    row->neg_batch_ns = ns[BENCH_NEG_BATCH];
    row->probe.indep_ns = min_of(min_of(row->probe_at[BENCH_POS_SCALAR],
                                        row->probe_at[BENCH_NEG_SCALAR]),
                                 row->probe_at[BENCH_NEG_BYTES]);
    row->probe.batch_ns =
        min_of(row->probe_at[BENCH_POS_BATCH], row->probe_at[BENCH_NEG_BATCH]);
    if (c->s->ops->query_batch != NULL &&
        (hits[BENCH_POS_BATCH] != hits[BENCH_POS_SCALAR] ||
         hits[BENCH_NEG_BATCH] != hits[BENCH_NEG_SCALAR]))
        note_append(row, "scalar and batch answers differ");
    row->false_neg = (uint64_t)k->nq - hits[BENCH_POS_SCALAR];
    if (row->false_neg != 0)
        note_append(row, "FALSE NEGATIVES");
    row->fpr_meas = (double)hits[BENCH_NEG_SCALAR] / (double)k->nq;
}

/* The dependent reads (pure latency, the slowest probe) once per size. */
static double dep_probe(const bench_cfg *cfg, bench_probe_arr *p, size_t bytes,
                        const bench_keys *k) {
    static struct {
        size_t bytes, q;
        double ns;
    } cache[BENCH_MAX_ROWS];
    static size_t ncache;
    double t[MAX_REPS];
    int reps = bench_query_reps(cfg, k->n);
    for (size_t i = 0; i < ncache; i++)
        if (cache[i].bytes == bytes && cache[i].q == k->nq)
            return cache[i].ns;
    if (p == NULL)
        return NAN;
    for (int r = 0; r < reps; r++)
        t[r] = bench_probe_time(p, BENCH_PROBE_DEP, k->neg, k->nq);
    size_t slot = ncache < BENCH_MAX_ROWS ? ncache++ : 0;
    cache[slot].bytes = bytes;
    cache[slot].q = k->nq;
    cache[slot].ns = bench_summary(t, (size_t)reps);
    return cache[slot].ns;
}

static void row_init(const bench_cfg *cfg, const bench_subject *s,
                     const bench_keys *k, bench_row *row) {
    memset(row, 0, sizeof *row);
    row->n = k->n;
    snprintf(row->label, sizeof row->label, "%s", s->label);
    snprintf(row->name, sizeof row->name, "%s", s->name);
    row->path = s->ops->path;
    row->fpr_target = cfg->fpr;
    row->reps = bench_query_reps(cfg, k->n);
    row->queries = k->nq;
}

void bench_measure(const bench_cfg *cfg, const bench_subject *s,
                   const bench_keys *k, bench_row *row) {
    row_init(cfg, s, k, row);
    void *obj = build(cfg, s, k, row);
    if (obj == NULL)
        return;
    row->ok = true;
    row->bytes = s->ops->size_bytes(obj);
    row->bits_per_key = 8.0 * (double)row->bytes / (double)k->n;
    row->fpr_bound = s->ops->fpr_bound(obj, k->n);
    s->ops->describe(obj, row->spec, sizeof row->spec);
    query_ctx c = {
        cfg,
        s,
        obj,
        k->n,
        malloc(cfg->batch),
        bench_probe_new(row->bytes, cfg->probe_group, cfg->probe_huge),
        k->neg,
        k->nq};
    if (c.out == NULL) {
        snprintf(row->note, sizeof row->note, "out of memory");
        row->ok = false;
    } else {
        measure_queries(&c, k, row);
    }
    free(c.out);
    s->ops->destroy(obj);
    if (row->ok)
        row->probe.dep_ns = dep_probe(cfg, c.probe, row->bytes, k);
    bench_probe_free(c.probe);
}
