/*
 * measure.c — build, query and accuracy measurements of one subject at n.
 *
 * Build: create + insert all n keys, repeated insert_reps times on a fresh
 * object (the last one is kept for the queries); insert ns/key excludes
 * creation, build ms includes it. Queries: min(n, --queries) inserted keys
 * (positives) and as many never-inserted keys (negatives), each asked one
 * at a time (scalar) and in chunks of --batch hashes (batch), every timing
 * repeated (bench_query_reps) and summarised by the minimum, or the median
 * with --stat median (on a shared machine interference only ever adds
 * time, so the minimum is the steadier estimate). Hit counts are summed into
 * a sink, so no query can be optimised away, and double as the accuracy
 * check: every positive must hit (else false_neg > 0), and negatives that
 * hit give the measured FPR. The memory probe for the filter's byte size is
 * cached, since typed and generic rows share sizes.
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
    uint64_t n;   /* keys in the filter (sets the repetitions) */
    uint8_t *out; /* cfg->batch bytes */
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

static void *build_once(const bench_subject *s, const bench_keys *k,
                        double fpr, bench_row *row, double *ins_ns,
                        double *total_ms) {
    void *obj = NULL;
    uint64_t t0 = bench_now_ns();
    if (s->ops->create(s->name, k->n, fpr, &obj, row->note,
                       sizeof row->note) != 0)
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

static uint64_t run_batch(const query_ctx *c, const uint64_t *keys,
                          size_t q) {
    uint64_t hits = 0;
    for (size_t i = 0; i < q; i += c->cfg->batch) {
        size_t len = q - i < c->cfg->batch ? q - i : c->cfg->batch;
        c->s->ops->query_batch(c->obj, keys + i, len, c->out);
        for (size_t j = 0; j < len; j++)
            hits += c->out[j];
    }
    return hits;
}

/* ns/key summarised over the query repetitions; *hits from the last. */
static double time_queries(const query_ctx *c, const uint64_t *keys,
                           size_t q, bool batched, uint64_t *hits) {
    double t[MAX_REPS];
    int reps = bench_query_reps(c->cfg, c->n);
    for (int r = 0; r < reps; r++) {
        uint64_t t0 = bench_now_ns();
        *hits = batched ? run_batch(c, keys, q)
                        : c->s->ops->query_scalar(c->obj, keys, q);
        t[r] = (double)(bench_now_ns() - t0) / (double)q;
        bench_consume(*hits);
    }
    return bench_summary(t, (size_t)reps);
}

static void note_append(bench_row *row, const char *msg) {
    size_t len = strlen(row->note);
    snprintf(row->note + len, sizeof row->note - len, "%s%s",
             len ? "; " : "", msg);
}

static void measure_queries(const query_ctx *c, const bench_keys *k,
                            bench_row *row) {
    uint64_t ps, pb = 0, ns, nb = 0;
    bool has_batch = c->s->ops->query_batch != NULL;
    row->pos_scalar_ns = time_queries(c, k->pos, k->nq, false, &ps);
    row->neg_scalar_ns = time_queries(c, k->neg, k->nq, false, &ns);
    row->pos_batch_ns = NAN;
    row->neg_batch_ns = NAN;
    if (has_batch) {
        row->pos_batch_ns = time_queries(c, k->pos, k->nq, true, &pb);
        row->neg_batch_ns = time_queries(c, k->neg, k->nq, true, &nb);
        if (pb != ps || nb != ns)
            note_append(row, "scalar and batch answers differ");
    }
    row->false_neg = (uint64_t)k->nq - ps;
    if (row->false_neg != 0)
        note_append(row, "FALSE NEGATIVES");
    row->fpr_meas = (double)ns / (double)k->nq;
}

static const bench_probe *probe_for(const bench_cfg *cfg, size_t bytes,
                                    const bench_keys *k) {
    static struct {
        size_t bytes, q;
        bench_probe p;
    } cache[BENCH_MAX_ROWS];
    static size_t ncache;
    for (size_t i = 0; i < ncache; i++)
        if (cache[i].bytes == bytes && cache[i].q == k->nq)
            return &cache[i].p;
    size_t slot = ncache < BENCH_MAX_ROWS ? ncache++ : 0;
    cache[slot].bytes = bytes;
    cache[slot].q = k->nq;
    bench_probe_cfg pc = {cfg->probe_group, bench_query_reps(cfg, k->n),
                          cfg->probe_huge};
    bench_probe_run(bytes, k->neg, k->nq, &pc, &cache[slot].p);
    return &cache[slot].p;
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
    query_ctx c = {cfg, s, obj, k->n, malloc(cfg->batch)};
    if (c.out == NULL) {
        snprintf(row->note, sizeof row->note, "out of memory");
        row->ok = false;
    } else {
        measure_queries(&c, k, row);
    }
    free(c.out);
    s->ops->destroy(obj);
    if (row->ok)
        row->probe = *probe_for(cfg, row->bytes, k);
}
