/*
 * range.c — range filters against the two things a store does without
 * one, at the same bits per key, in one run (docs/structures.md, "Range
 * filters"):
 *
 *   grafite  the static range filter, r chosen for the bits per key;
 *   memento  the dynamic one, at grafite's certified bound for the length
 *            (so its bits are what that bound costs it): sized for the
 *            keys ("memento") and grown from a table for 1/1024 of them
 *            ("grown");
 *   points   a point filter (ribbon at the same bits) probed at every key
 *            of the range: the rate grows as 1 - (1 - e)^l, the time as l;
 *   prefix   a prefix filter (ribbon over key >> s, s = ceil(log2 l), as
 *            RocksDB's prefix Bloom filters): a range probes the one or two
 *            prefixes it covers.
 *
 * Workloads over --keys keys (uniform 64-bit integers, or runs of 100
 * consecutive keys at uniform places), each asked --queries empty ranges
 * of each length: uniform (anywhere) and correlated (starting just past a
 * key: the query a scan makes after its last hit, and the one that breaks
 * prefix filters). With --members FILE --nonmembers FILE, byte keys
 * through the order map: the members are the keys, each non-member a
 * point query (len 1), split into those whose first 8 bytes are no
 * member's (where the bound holds) and the rest (one key to the filter).
 *
 *   amq_range [--keys N] [--bits B,...] [--lens L,...] [--queries Q]
 *             [--members FILE --nonmembers FILE]
 *
 * Prints one row per (workload, length, filter): bits per key, the
 * certified bound (range filters), the measured rate and ns per query.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amq/amq.h"
#include "tool.h"

#define MAX_LIST 16

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static size_t parse_list(const char *s, uint64_t *out) {
    size_t n = 0;
    while (*s && n < MAX_LIST) {
        out[n++] = strtoull(s, (char **)&s, 10);
        if (*s == ',')
            s++;
    }
    return n;
}

static bool any_in(const uint64_t *k, size_t n, uint64_t lo, uint64_t hi) {
    size_t a = 0, b = n;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (k[m] < lo)
            a = m + 1;
        else
            b = m;
    }
    return a < n && k[a] <= hi;
}

enum { RANGE, POINTS, PREFIX };

typedef struct subject {
    const char *name;
    int kind; /* RANGE, POINTS or PREFIX: what ask does */
    amq_filter *f;
    unsigned shift; /* prefix: key >> shift */
} subject;

static bool ask(const subject *s, uint64_t lo, uint64_t hi) {
    bool maybe = false;
    if (s->kind == RANGE) {
        amq_range_query(s->f, lo, hi, &maybe);
        return maybe;
    }
    if (s->kind == PREFIX) {
        for (uint64_t p = lo >> s->shift;; p++) {
            if (amq_filter_contains_hash(s->f, amq_mix64(p)))
                return true;
            if (p == hi >> s->shift)
                return false;
        }
    }
    for (uint64_t x = lo;; x++) {
        if (amq_filter_contains_hash(s->f, amq_mix64(x)))
            return true;
        if (x == hi)
            return false;
    }
}

static amq_filter *ribbon_of(const uint64_t *keys, size_t n, unsigned shift,
                             double bits) {
    uint64_t *h = malloc((n ? n : 1) * sizeof *h);
    for (size_t i = 0; i < n; i++)
        h[i] = amq_mix64(keys[i] >> shift);
    char spec[64];
    snprintf(spec, sizeof spec, "ribbon:bits=%g", bits);
    amq_filter *f = NULL;
    amq_diag d;
    if (amq_filter_build(spec, h, n, 0.0, NULL, &f, &d) != AMQ_OK)
        fprintf(stderr, "amq_range: %s: %s\n", spec, d.message);
    free(h);
    return f;
}

static amq_filter *grafite_of(const uint64_t *keys, size_t n, double bits) {
    char spec[64];
    double r = (double)n * exp2(bits - 2.41);
    snprintf(spec, sizeof spec, "grafite:r=%.0f", r < 16 ? 16 : r);
    amq_options opt = {.hash = AMQ_HASH_ORDER, .hash_seed = 12345};
    amq_filter *f = NULL;
    amq_diag d;
    if (amq_filter_build(spec, keys, n, 0.0, &opt, &f, &d) != AMQ_OK)
        fprintf(stderr, "amq_range: %s: %s\n", spec, d.message);
    return f;
}

/* A Memento filter at rate e for ranges of len keys, for n keys, or grown
 * from a table for n / 1024 of them; the keys added in one batch. */
static amq_filter *memento_of(const uint64_t *keys, size_t n, uint64_t len,
                              double e, bool grown) {
    char spec[80];
    snprintf(spec, sizeof spec, "memento:range=%llu%s", (unsigned long long)len,
             grown ? "" : ",growth=0");
    amq_options opt = {.hash = AMQ_HASH_ORDER, .hash_seed = 12345};
    amq_filter *f = NULL;
    amq_diag d;
    size_t done;
    uint64_t cap = grown ? (n / 1024 ? n / 1024 : 1) : n;
    if (amq_filter_new(spec, cap, e < 0.5 ? e : 0.5, &opt, &f, &d) != AMQ_OK ||
        amq_filter_add_batch(f, keys, n, &done) != AMQ_OK) {
        fprintf(stderr, "amq_range: %s: %s\n", spec,
                f ? "cannot add the keys" : d.message);
        amq_filter_free(f);
        return NULL;
    }
    return f;
}

static double bits_of(const amq_filter *f, size_t n) {
    return (double)amq_filter_size_bytes(f) * 8.0 / (double)n;
}

/* Empty ranges of len keys: uniform, or just past a key (past the end of
 * a run of keys closer than len). */
static void make_queries(const uint64_t *k, size_t n, uint64_t len,
                         bool correlated, size_t q, uint64_t *lo,
                         uint64_t *seed) {
    for (size_t i = 0; i < q;) {
        uint64_t a = tool_splitmix(seed);
        if (correlated) {
            size_t j = tool_splitmix(seed) % n;
            while (j + 1 < n && k[j + 1] - k[j] <= len)
                j++;
            a = k[j] + 1;
        }
        if (a > UINT64_MAX - len || any_in(k, n, a, a + len - 1))
            continue;
        lo[i++] = a;
    }
}

static void run_rows(const char *work, const uint64_t *k, size_t n,
                     const uint64_t *bits, size_t nbits, const uint64_t *lens,
                     size_t nlens, size_t queries, uint64_t *seed) {
    uint64_t *lo = malloc(queries * sizeof *lo);
    for (size_t b = 0; b < nbits; b++) {
        amq_filter *g = grafite_of(k, n, (double)bits[b]);
        amq_filter *p = ribbon_of(k, n, 0, (double)bits[b]);
        for (size_t l = 0; l < nlens; l++) {
            uint64_t len = lens[l];
            unsigned shift = 0;
            while (shift < 63 && (UINT64_C(1) << shift) < len)
                shift++;
            amq_filter *pf = ribbon_of(k, n, shift, (double)bits[b]);
            double e = amq_range_fpr_bound(g, len);
            amq_filter *mf = memento_of(k, n, len, e, false);
            amq_filter *mg = memento_of(k, n, len, e, true);
            subject subs[5] = {{"grafite", RANGE, g, 0},
                               {"memento", RANGE, mf, 0},
                               {"grown", RANGE, mg, 0},
                               {"points", POINTS, p, 0},
                               {"prefix", PREFIX, pf, shift}};
            for (int c = 0; c < 2; c++) {
                size_t q = queries;
                if (len > 64 && q > 20000000 / len)
                    q = 20000000 / len; /* points probe every key */
                make_queries(k, n, len, c == 1, q, lo, seed);
                for (int s = 0; s < 5; s++) {
                    if (subs[s].f == NULL)
                        continue;
                    size_t fp = 0;
                    size_t qs =
                        subs[s].kind == POINTS && len > 1024 ? q / 10 : q;
                    double t0 = tool_now();
                    for (size_t i = 0; i < qs; i++)
                        fp += ask(&subs[s], lo[i], lo[i] + len - 1);
                    double ns = (tool_now() - t0) * 1e9 / (double)qs;
                    double bound = subs[s].kind == RANGE
                                       ? amq_range_fpr_bound(subs[s].f, len)
                                       : -1.0;
                    char bt[32] = "-";
                    if (bound >= 0)
                        snprintf(bt, sizeof bt, "%.3g", bound);
                    printf("%-9s %-10s %6llu %-8s %6.2f %9s %9.3g %9.1f\n",
                           work, c ? "correlated" : "uniform",
                           (unsigned long long)len, subs[s].name,
                           bits_of(subs[s].f, n), bt, (double)fp / (double)qs,
                           ns);
                }
            }
            amq_filter_free(pf);
            amq_filter_free(mf);
            amq_filter_free(mg);
        }
        amq_filter_free(g);
        amq_filter_free(p);
    }
    free(lo);
}

/* Lines of a file as order-mapped keys; NULL if it cannot be read. */
static uint64_t *read_words(const char *path, size_t *n) {
    FILE *fp = fopen(path, "r");
    char line[4096];
    size_t cap = 1 << 16;
    uint64_t *v = malloc(cap * sizeof *v);
    if (fp == NULL)
        return free(v), NULL;
    *n = 0;
    while (fgets(line, sizeof line, fp)) {
        size_t len = strcspn(line, "\n");
        if (len == 0)
            continue;
        if (*n == cap)
            v = realloc(v, (cap *= 2) * sizeof *v);
        v[(*n)++] = amq_range_key(line, len);
    }
    fclose(fp);
    return v;
}

static int run_words(const char *members, const char *nonmembers,
                     const uint64_t *bits, size_t nbits) {
    size_t n = 0, q = 0;
    uint64_t *k = read_words(members, &n), *x = read_words(nonmembers, &q);
    if (k == NULL || x == NULL || n == 0) {
        fprintf(stderr, "amq_range: cannot read %s or %s\n", members,
                nonmembers);
        return 2;
    }
    qsort(k, n, sizeof *k, cmp_u64);
    size_t distinct = 0;
    for (size_t i = 0; i < n; i++)
        if (distinct == 0 || k[i] != k[distinct - 1])
            k[distinct++] = k[i];
    printf("# %zu members (%zu distinct in 8 bytes), %zu non-members\n", n,
           distinct, q);
    for (size_t b = 0; b < nbits; b++) {
        amq_filter *g = grafite_of(k, distinct, (double)bits[b]);
        amq_filter *m =
            memento_of(k, distinct, 1, amq_filter_fpr_bound(g), true);
        const amq_filter *subs[2] = {g, m};
        for (int j = 0; j < 2 && subs[j] != NULL; j++) {
            size_t asked = 0, fp = 0, shared = 0, shared_fp = 0;
            for (size_t i = 0; i < q; i++) {
                bool maybe = false;
                amq_range_query(subs[j], x[i], x[i], &maybe);
                if (any_in(k, distinct, x[i], x[i])) {
                    shared++;
                    shared_fp += maybe;
                } else {
                    asked++;
                    fp += maybe;
                }
            }
            printf("words     %-8s bits %6.2f  bound %.3g  measured %.3g "
                   "(%zu non-members); %zu share 8 bytes with a member (%zu "
                   "yes)\n",
                   j ? "memento" : "grafite", bits_of(subs[j], distinct),
                   amq_filter_fpr_bound(subs[j]),
                   asked ? (double)fp / (double)asked : 0.0, asked, shared,
                   shared_fp);
        }
        amq_filter_free(g);
        amq_filter_free(m);
    }
    free(k);
    free(x);
    return 0;
}

int main(int argc, char **argv) {
    uint64_t n = 1000000, queries = 200000, seed = 42;
    uint64_t bits[MAX_LIST] = {12, 16, 20}, lens[MAX_LIST] = {1, 16, 256, 4096};
    size_t nbits = 3, nlens = 4;
    const char *members = NULL, *nonmembers = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--keys") == 0)
            n = (uint64_t)strtod(argv[i + 1], NULL);
        else if (strcmp(argv[i], "--queries") == 0)
            queries = (uint64_t)strtod(argv[i + 1], NULL);
        else if (strcmp(argv[i], "--bits") == 0)
            nbits = parse_list(argv[i + 1], bits);
        else if (strcmp(argv[i], "--lens") == 0)
            nlens = parse_list(argv[i + 1], lens);
        else if (strcmp(argv[i], "--members") == 0)
            members = argv[i + 1];
        else if (strcmp(argv[i], "--nonmembers") == 0)
            nonmembers = argv[i + 1];
        else {
            fprintf(stderr, "usage: amq_range [--keys N] [--bits B,...] "
                            "[--lens L,...] [--queries Q] [--members F "
                            "--nonmembers F]\n");
            return 2;
        }
    }
    if (members != NULL || nonmembers != NULL)
        return members && nonmembers
                   ? run_words(members, nonmembers, bits, nbits)
                   : 2;
    printf("%-9s %-10s %6s %-8s %6s %9s %9s %9s\n", "keys", "queries", "len",
           "filter", "bits", "bound", "rate", "ns/query");
    uint64_t *k = malloc(n * sizeof *k), s = seed, base = 0;
    for (int w = 0; w < 2; w++) {
        for (size_t i = 0; i < n; i++) {
            if (w == 1 && i % 100 == 0)
                base = tool_splitmix(&s) >> 1;
            k[i] = w == 0 ? tool_splitmix(&s) : base + i % 100;
        }
        qsort(k, n, sizeof *k, cmp_u64);
        run_rows(w == 0 ? "uniform" : "clustered", k, n, bits, nbits, lens,
                 nlens, queries, &s);
    }
    free(k);
    return 0;
}
