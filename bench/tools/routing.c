/*
 * routing.c — amq_routing: the LSM routing case of the maplet paper (§3,
 * SplinterDB): one node of a size-tiered LSM holds R sorted runs; to find
 * a key, either query one filter per run (newest first) or one maplet that
 * maps each key to the runs that may hold it. Public API only.
 *
 *   amq_routing [--keys N] [--fpr E] [--runs 4,8,16,32,64] [--lookups M]
 *               [--filter qf|blocked|bloom] [--seed S]
 *
 * The node: N keys in R runs of N/R each, the newest last; a tenth of each
 * run's keys (after the first) update a key of an older run, so positive
 * lookups stop at the newest run holding the key. Per-run filters are
 * built at fpr E each (their collective rate, the expected false runs of a
 * negative lookup, is about R E). The routing maplet is a multiset maplet
 * of (key, run id) pairs with v = log2 R bits and r = (the per-run qf's r)
 * - log2 R, i.e. the same slot width as the filters: equal memory, as the
 * paper says, with its rate at their collective rate. A lookup reads the
 * maplet's ids and probes those runs newest first.
 *
 * Measured per R: memory (bits per key), filter or maplet queries per
 * lookup, runs read per negative and per positive lookup (a run is read
 * when its filter or the maplet names it; the true run ends a positive
 * lookup), build (ns per key) and the cost of a flush and of a compaction:
 * per-run filters build the new run's filter; the maplet merges a maplet
 * of the new run's own fingerprints (without reading older runs' keys), and
 * drops compacted runs by their ids (without their keys).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "amq/amq.h"
#include "tool.h"

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void die(const char *what, amq_status st) {
    fprintf(stderr, "amq_routing: %s: %s\n", what, amq_strerror(st));
    exit(2);
}

/* ---- the node ------------------------------------------------------------ */

typedef struct node {
    unsigned runs;
    size_t per;     /* keys per run                          */
    uint64_t **key; /* key[r]: run r's keys (hashes), sorted */
} node;

static void node_make(node *nd, unsigned runs, size_t n, uint64_t seed) {
    nd->runs = runs;
    nd->per = n / runs;
    nd->key = calloc(runs, sizeof *nd->key);
    uint64_t rng = seed;
    for (unsigned r = 0; r < runs; r++) {
        nd->key[r] = malloc(nd->per * sizeof **nd->key);
        if (nd->key[r] == NULL)
            die("node", AMQ_ERR_NOMEM);
        for (size_t i = 0; i < nd->per; i++) {
            uint64_t x = tool_splitmix(&rng);
            /* a tenth of the keys update a key of an older run */
            if (r > 0 && x % 10 == 0)
                x = nd->key[x % r][(x >> 8) % nd->per];
            nd->key[r][i] = x;
        }
        qsort(nd->key[r], nd->per, sizeof **nd->key, cmp_u64);
    }
}

static bool run_has(const node *nd, unsigned r, uint64_t k) {
    return bsearch(&k, nd->key[r], nd->per, sizeof k, cmp_u64) != NULL;
}

static void node_free(node *nd) {
    for (unsigned r = 0; r < nd->runs; r++)
        free(nd->key[r]);
    free(nd->key);
}

/* ---- the two routers --------------------------------------------------------- */

typedef struct router {
    amq_filter **f; /* per-run filters, or NULL */
    amq_maplet *m;  /* the routing maplet, or NULL */
    char spec[96];
} router;

static size_t router_bytes(const router *rt, unsigned runs) {
    if (rt->m != NULL)
        return amq_filter_size_bytes(rt->m);
    size_t b = 0;
    for (unsigned r = 0; r < runs; r++)
        b += amq_filter_size_bytes(rt->f[r]);
    return b;
}

static amq_filter *run_filter(const char *type, const node *nd, unsigned r,
                              double fpr) {
    amq_filter *f = NULL;
    amq_status st = amq_filter_new(type, nd->per, fpr, NULL, &f, NULL);
    if (st == AMQ_OK)
        st = amq_filter_add_batch(f, nd->key[r], nd->per, NULL);
    if (st != AMQ_OK)
        die(type, st);
    return f;
}

/* Run r's own maplet in the node maplet's shape: its fingerprints, id r. */
static amq_maplet *run_maplet(const char *spec, const node *nd, unsigned r) {
    amq_maplet *m = NULL;
    amq_status st = amq_maplet_new(spec, 0, 0, NULL, &m, NULL);
    for (size_t i = 0; st == AMQ_OK && i < nd->per; i++)
        st = amq_maplet_put_hash(m, nd->key[r][i], r);
    if (st != AMQ_OK)
        die(spec, st);
    return m;
}

/* The node maplet by flushes: runs [0, upto) merged in, each from its
 * own maplet. */
static void build_maplet(router *rt, const node *nd, unsigned upto) {
    if (rt->m == NULL &&
        amq_maplet_new(rt->spec, 0, 0, NULL, &rt->m, NULL) != AMQ_OK)
        die(rt->spec, AMQ_ERR_INVALID);
    for (unsigned r = upto - 1; r < upto; r++) {
        amq_maplet *run = run_maplet(rt->spec, nd, r);
        amq_status st = amq_maplet_merge(rt->m, run);
        amq_maplet_free(run);
        if (st != AMQ_OK)
            die("merge", st);
    }
}

/* ---- lookups --------------------------------------------------------------------- */

typedef struct tally {
    double queries, reads;
} tally;

/* Runs read for key k, newest first, until one truly holds it (pos). */
static void lookup(const router *rt, const node *nd, uint64_t k, tally *t) {
    if (rt->m == NULL) {
        for (unsigned r = nd->runs; r-- > 0;) {
            t->queries++;
            if (!amq_filter_contains_hash(rt->f[r], k))
                continue;
            t->reads++;
            if (run_has(nd, r, k))
                return;
        }
        return;
    }
    uint64_t ids[64];
    size_t n = 0;
    t->queries++;
    if (amq_maplet_get_all(rt->m, k, ids, 64, &n) != AMQ_OK)
        return;
    for (size_t i = n < 64 ? n : 64; i-- > 0;) { /* increasing: newest last */
        if (i + 1 < (n < 64 ? n : 64) && ids[i] == ids[i + 1])
            continue;
        t->reads++;
        if (run_has(nd, (unsigned)ids[i], k))
            return;
    }
}

static void measure(const router *rt, const node *nd, size_t lookups,
                    uint64_t seed, tally *neg, tally *pos) {
    uint64_t rng = seed;
    memset(neg, 0, sizeof *neg);
    memset(pos, 0, sizeof *pos);
    for (size_t i = 0; i < lookups; i++) {
        lookup(rt, nd, tool_splitmix(&rng) | 1, neg); /* absent with prob. ~1 */
        unsigned r = (unsigned)(tool_splitmix(&rng) % nd->runs);
        lookup(rt, nd, nd->key[r][tool_splitmix(&rng) % nd->per], pos);
    }
    neg->queries /= (double)lookups, neg->reads /= (double)lookups;
    pos->queries /= (double)lookups, pos->reads /= (double)lookups;
}

/* ---- one row per R --------------------------------------------------------------- */

typedef struct cfg {
    size_t keys, lookups;
    double fpr;
    const char *filter;
    uint64_t seed;
} cfg;

/* The maplet spec at the per-run qf's slot width: r = r_f - log2 R. */
static void maplet_spec(const cfg *c, unsigned runs, char *spec, size_t cap) {
    unsigned lg = 0, rf = (unsigned)ceil(-log2(c->fpr));
    while ((1u << lg) < runs)
        lg++;
    size_t slots = ((size_t)ceil((double)c->keys / 0.95) + 63) / 64 * 64;
    unsigned r = rf > lg ? rf - lg : 1;
    snprintf(spec, cap, "maplet:op=or,v=%u,multiset=1,slots=%zu,r=%u",
             lg ? lg : 1, slots, r);
}

static void row(const cfg *c, unsigned runs) {
    node nd;
    router pf = {0}, mp = {0};
    tally fn, fp, mn, mpos;
    node_make(&nd, runs, c->keys, c->seed + runs);
    /* Build: every run's filter; the maplet by one flush per run. The
     * last flush is timed on its own (flush ms). */
    double t0 = tool_now(), tf = 0;
    pf.f = calloc(runs, sizeof *pf.f);
    for (unsigned r = 0; r < runs; r++) {
        tf = tool_now();
        pf.f[r] = run_filter(c->filter, &nd, r, c->fpr);
    }
    double t1 = tool_now(), tm = 0;
    maplet_spec(c, runs, mp.spec, sizeof mp.spec);
    for (unsigned r = 1; r <= runs; r++) {
        tm = tool_now();
        build_maplet(&mp, &nd, r);
    }
    double t2 = tool_now();
    measure(&pf, &nd, c->lookups, c->seed, &fn, &fp);
    measure(&mp, &nd, c->lookups, c->seed, &mn, &mpos);
    /* A compaction of the older half: its ids dropped (no keys read). */
    double t5 = tool_now();
    amq_status st = AMQ_OK;
    for (unsigned r = 0; st == AMQ_OK && r < runs / 2; r++)
        st = amq_maplet_drop_value(mp.m, r);
    double t6 = tool_now();
    if (st != AMQ_OK)
        die("compact", st);
    double t3 = tf, t4 = t1, tm4 = tm;
    size_t n = nd.per * runs;
    printf("| %u | %.2f | %.2f | %.1f | %.4f | %.4f | %.3f | %.3f | %.0f | "
           "%.0f | %.2f | %.2f | %.2f |\n",
           runs, 8.0 * (double)router_bytes(&pf, runs) / (double)n,
           8.0 * (double)router_bytes(&mp, runs) / (double)n, fn.queries,
           fn.reads, mn.reads, fp.reads, mpos.reads,
           (t1 - t0) * 1e9 / (double)n, (t2 - t1) * 1e9 / (double)n,
           (t4 - t3) * 1e3, (t2 - tm4) * 1e3, (t6 - t5) * 1e3);
    for (unsigned r = 0; r < runs; r++)
        amq_filter_free(pf.f[r]);
    free(pf.f);
    amq_maplet_free(mp.m);
    node_free(&nd);
}

int main(int argc, char **argv) {
    cfg c = {1000000, 200000, 0.01, "qf", 7};
    char runs[128] = "4,8,16,32,64";
    static const char usage[] =
        "usage: amq_routing [--keys N] [--fpr E] [--runs 4,8,16,32,64] "
        "[--lookups M] [--filter qf|blocked|bloom] [--seed S]\n";
    for (int i = 1; i < argc; i += 2) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage, stdout);
            return 0;
        }
        if (i + 1 == argc) {
            fprintf(stderr, "amq_routing: %s needs a value\n%s", argv[i],
                    usage);
            return 2;
        }
        if (strcmp(argv[i], "--keys") == 0)
            c.keys = (size_t)strtod(argv[i + 1], NULL);
        else if (strcmp(argv[i], "--fpr") == 0)
            c.fpr = strtod(argv[i + 1], NULL);
        else if (strcmp(argv[i], "--runs") == 0)
            snprintf(runs, sizeof runs, "%s", argv[i + 1]);
        else if (strcmp(argv[i], "--lookups") == 0)
            c.lookups = (size_t)strtod(argv[i + 1], NULL);
        else if (strcmp(argv[i], "--filter") == 0)
            c.filter = argv[i + 1];
        else if (strcmp(argv[i], "--seed") == 0)
            c.seed = strtoull(argv[i + 1], NULL, 10);
        else {
            fprintf(stderr, "amq_routing: unknown option %s\n%s", argv[i],
                    usage);
            return 2;
        }
    }
    printf("node of %zu keys; per-run %s at fpr %g; routing maplet at the "
           "same slot width; %zu lookups of each kind\n\n",
           c.keys, c.filter, c.fpr, c.lookups);
    printf("| runs | filters bits/key | maplet bits/key | filter queries "
           "per lookup | runs read per negative: filters | maplet | per "
           "positive: filters | maplet | build ns/key: filters | maplet | "
           "flush ms: filter | maplet merge | compact half: maplet drop ms "
           "|\n|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    for (char *p = strtok(runs, ","); p != NULL; p = strtok(NULL, ","))
        row(&c, (unsigned)atoi(p));
    return 0;
}
