/*
 * grow.c — a filter that grows against one sized for the end, same keys,
 * one run (docs/structures.md, "Expandable quotient filter"):
 *
 *   eqf  created for --start keys at --fpr, then given --start * 2^D keys
 *        (D = --doublings) one at a time: it doubles as it fills;
 *   qf   the quotient filter created for all of them at --fpr (the size
 *        a user who knew n would pick), given the same keys; --base SPEC
 *        names another (a maplet against the expandable maplet:
 *        `--spec emaplet --base maplet`, each add a put of 1).
 *
 * At each size --start * 2^j (about 95% load, just before a doubling) the
 * eqf's measured rate over --queries fresh absent keys, its bound and
 * its bits per key are printed; at the end both filters' bytes, rate,
 * insert ns (the eqf's includes every doubling; one key a call, then in
 * batches of 4096 into new filters) and ns per absent and present query,
 * the query loops alternated and the best of three taken.
 * Every key is checked present in both (a false negative exits 1).
 *
 *   amq_grow [--start N] [--doublings D] [--fpr E] [--queries Q]
 *            [--spec SPEC] [--base SPEC]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amq/amq.h"
#include "tool.h"

static uint64_t absent_key(uint64_t i, uint64_t round) {
    uint64_t s = i ^ (round * 0x9e3779b97f4a7c15ULL) ^ 0x5bd1e9955bd1e995ULL;
    return tool_splitmix(&s) | 1; /* members are even: never equal */
}

static double rate(const amq_filter *f, uint64_t q, uint64_t round) {
    uint64_t fp = 0;
    for (uint64_t i = 0; i < q; i++)
        fp += amq_filter_contains_hash(f, absent_key(i, round));
    return (double)fp / (double)q;
}

static double query_ns(const amq_filter *f, const uint64_t *keys, uint64_t m,
                       uint64_t *sink) {
    double t0 = tool_now();
    for (uint64_t i = 0; i < m; i++)
        *sink += amq_filter_contains_hash(f, keys[i]);
    return (tool_now() - t0) * 1e9 / (double)m;
}

static int fail(const char *what, amq_status st) {
    fprintf(stderr, "amq_grow: %s: %s\n", what, amq_strerror(st));
    return 1;
}

int main(int argc, char **argv) {
    uint64_t start = 10000, d = 10, q = 1000000;
    double fpr = 0.01;
    const char *spec = "eqf", *base = "qf";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--start") == 0)
            start = strtoull(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--doublings") == 0)
            d = strtoull(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--fpr") == 0)
            fpr = strtod(argv[i + 1], NULL);
        else if (strcmp(argv[i], "--queries") == 0)
            q = strtoull(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--spec") == 0)
            spec = argv[i + 1];
        else if (strcmp(argv[i], "--base") == 0)
            base = argv[i + 1];
        else {
            fprintf(stderr, "usage: amq_grow [--start N] [--doublings D] "
                            "[--fpr E] [--queries Q] [--spec SPEC] "
                            "[--base SPEC]\n");
            return 2;
        }
    }
    if (start == 0 || d > 20 || q == 0 || !(fpr > 0 && fpr < 1)) {
        fprintf(stderr, "amq_grow: start, queries > 0, doublings <= 20, "
                        "0 < fpr < 1\n");
        return 2;
    }
    uint64_t n = start << d, seed = 7;
    uint64_t *keys = malloc(n * sizeof *keys);
    uint64_t m = n < 2000000 ? n : 2000000;
    uint64_t *absent = malloc(m * sizeof *absent);
    uint64_t *present = malloc(m * sizeof *present);
    if (keys == NULL || absent == NULL || present == NULL)
        return 1;
    for (uint64_t i = 0; i < n; i++)
        keys[i] = tool_splitmix(&seed) & ~1ULL;
    for (uint64_t i = 0; i < m; i++) {
        absent[i] = absent_key(i, 1000);
        present[i] = keys[(i * 7919) % n];
    }
    amq_filter *g = NULL, *f = NULL;
    amq_status st = amq_filter_new(spec, start, fpr, NULL, &g, NULL);
    if (st != AMQ_OK)
        return fail(spec, st);
    printf("%s from %llu keys to %llu at fpr %g; %llu absent queries per "
           "size\n",
           spec, (unsigned long long)start, (unsigned long long)n, fpr,
           (unsigned long long)q);
    printf("%12s %9s %10s %10s %8s  %s\n", "keys", "measured", "bound",
           "/ target", "bits/key", "shape");
    double ins = 0.0;
    uint64_t at = start, j = 0;
    for (uint64_t i = 0; i < n; i++) {
        double t0 = tool_now();
        uint64_t stop = at < n ? at : n;
        for (; i < stop; i++)
            if ((st = amq_filter_add_hash(g, keys[i])) != AMQ_OK)
                return fail("add", st);
        ins += tool_now() - t0;
        i--;
        char shape[128];
        amq_filter_describe(g, shape, sizeof shape);
        double r = rate(g, q, j);
        printf("%12llu %9.5f %10.5f %10.2f %8.2f  %s\n",
               (unsigned long long)stop, r, amq_filter_fpr_bound(g), r / fpr,
               8.0 * (double)amq_filter_size_bytes(g) / (double)stop, shape);
        at *= 2;
        j++;
    }
    double ins_g = ins * 1e9 / (double)n;
    if ((st = amq_filter_new(base, n, fpr, NULL, &f, NULL)) != AMQ_OK)
        return fail(base, st);
    double t0 = tool_now();
    for (uint64_t i = 0; i < n; i++)
        if ((st = amq_filter_add_hash(f, keys[i])) != AMQ_OK)
            return fail("base add", st);
    double ins_f = (tool_now() - t0) * 1e9 / (double)n;
    uint64_t missing = 0, sink = 0;
    for (uint64_t i = 0; i < n; i++)
        missing += !amq_filter_contains_hash(g, keys[i]) +
                   !amq_filter_contains_hash(f, keys[i]);
    double neg[2] = {1e30, 1e30}, pos[2] = {1e30, 1e30};
    for (int rep = 0; rep < 3; rep++) {
        const amq_filter *both[2] = {f, g};
        for (int k = 0; k < 2; k++) {
            double a = query_ns(both[k], absent, m, &sink);
            double b = query_ns(both[k], present, m, &sink);
            neg[k] = a < neg[k] ? a : neg[k];
            pos[k] = b < pos[k] ? b : pos[k];
        }
    }
    /* batch inserts (amq_filter_add_batch, 4096 keys a call) into new
     * filters of both, the qf again sized for the end */
    double bins[2];
    for (int k = 0; k < 2; k++) {
        amq_filter *b = NULL;
        if ((st = amq_filter_new(k ? spec : base, k ? start : n, fpr, NULL, &b,
                                 NULL)) != AMQ_OK)
            return fail("batch", st);
        t0 = tool_now();
        for (uint64_t i = 0; i < n; i += 4096) {
            size_t c = n - i < 4096 ? (size_t)(n - i) : 4096, got;
            if ((st = amq_filter_add_batch(b, keys + i, c, &got)) != AMQ_OK)
                return fail("batch add", st);
        }
        bins[k] = (tool_now() - t0) * 1e9 / (double)n;
        amq_filter_free(b);
    }
    double rf = rate(f, q, 99), rg = rate(g, q, 99);
    size_t bf = amq_filter_size_bytes(f), bg = amq_filter_size_bytes(g);
    printf("\n%-4s %12s %9s %10s %8s %8s %8s\n", "", "bytes", "measured",
           "bound", "ins ns", "absent", "present");
    printf("%-4s %12zu %9.5f %10.5f %8.1f %8.1f %8.1f\n", base, bf, rf,
           amq_filter_fpr_bound(f), ins_f, neg[0], pos[0]);
    printf("%-4s %12zu %9.5f %10.5f %8.1f %8.1f %8.1f\n", spec, bg, rg,
           amq_filter_fpr_bound(g), ins_g, neg[1], pos[1]);
    printf("batch insert ns: %s %.1f, %s %.1f\n", base, bins[0], spec, bins[1]);
    printf("%s/%s at the final size: space %.3f, absent query %.2f, present "
           "query %.2f, insert %.2f (batch %.2f); false negatives %llu\n",
           spec, base, (double)bg / (double)bf, neg[1] / neg[0],
           pos[1] / pos[0], ins_g / ins_f, bins[1] / bins[0],
           (unsigned long long)missing);
    if (sink == 0)
        fprintf(stderr, "amq_grow: no key found\n");
    amq_filter_free(f);
    amq_filter_free(g);
    free(keys);
    free(absent);
    free(present);
    return missing != 0;
}
