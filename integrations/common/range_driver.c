/*
 * range_driver.c — the workload and the table of range_driver.h.
 *
 * For each share of empty ranges (0%, 50%, 90%), S scans of L keys: an
 * empty range lies in a gap between keys (checked against the sorted
 * keys), a non-empty one covers a random key. The two ways, without and
 * with the filter, alternate in rounds (ABBA), and a third loop times the
 * filter's queries alone. The filter is grafite (static, built from the
 * keys) or, with --type memento, the dynamic one (created for the keys
 * and given them one by one).
 */
#include "range_driver.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <amq/amq.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t splitmix(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
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

typedef struct run_stats {
    double with_s, without_s, filter_s;
    uint64_t skipped, fp, mismatches;
} run_stats;

typedef struct workload {
    const range_engine *e;
    void *db;
    const amq_filter *f;
    const uint64_t *keys;
    size_t n, scans;
    uint64_t len;
    int rounds;
} workload;

/* Range starts: a share `empty` of them in gaps, the rest covering a
 * key. */
static void make_ranges(const workload *w, double empty, uint64_t *lo,
                        uint64_t *seed) {
    for (size_t i = 0; i < w->scans; i++) {
        bool make_empty = (double)(splitmix(seed) >> 11) * 0x1.0p-53 < empty;
        uint64_t a;
        do {
            if (make_empty) {
                a = splitmix(seed);
            } else {
                uint64_t key = w->keys[splitmix(seed) % w->n];
                a = key - (key >= w->len ? splitmix(seed) % w->len : 0);
            }
        } while (a > UINT64_MAX - w->len ||
                 any_in(w->keys, w->n, a, a + w->len - 1) == make_empty);
        lo[i] = a;
    }
}

static void run_share(const workload *w, double empty, uint64_t *seed,
                      run_stats *st) {
    uint64_t *lo = malloc(w->scans * sizeof *lo);
    uint64_t *want = calloc(w->scans, sizeof *want), bytes = 0;
    make_ranges(w, empty, lo, seed);
    memset(st, 0, sizeof *st);
    for (int r = 0; r < w->rounds; r++) {
        for (int way = 0; way < 2; way++) { /* ABBA */
            bool filtered = (way == 1) != (r % 2 == 1);
            double t0 = now();
            for (size_t i = 0; i < w->scans; i++) {
                uint64_t hi = lo[i] + w->len - 1, got = 0;
                bool maybe = true;
                if (filtered)
                    amq_range_query(w->f, lo[i], hi, &maybe);
                if (maybe)
                    got = w->e->scan(w->db, lo[i], hi, &bytes);
                if (!filtered) {
                    want[i] = got;
                    continue;
                }
                if (r == 0) {
                    st->skipped += !maybe;
                    st->fp += maybe && want[i] == 0;
                }
                if (r > 0 || way == 1)
                    st->mismatches += got != want[i];
            }
            *(filtered ? &st->with_s : &st->without_s) += now() - t0;
        }
        double t0 = now();
        for (size_t i = 0; i < w->scans; i++) {
            bool maybe;
            amq_range_query(w->f, lo[i], lo[i] + w->len - 1, &maybe);
            bytes += maybe;
        }
        st->filter_s += now() - t0;
    }
    if (bytes == 1) /* keeps the value reads */
        fputc(' ', stderr);
    free(lo);
    free(want);
}

int range_driver_main(const range_engine *e, int argc, char **argv) {
    uint64_t n = 10000000, scans = 200000, len = 64, seed = 42;
    const char *dir = NULL, *check = NULL, *type = "grafite";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--keys") == 0)
            n = (uint64_t)strtod(argv[i + 1], NULL);
        else if (strcmp(argv[i], "--scans") == 0)
            scans = (uint64_t)strtod(argv[i + 1], NULL);
        else if (strcmp(argv[i], "--len") == 0)
            len = (uint64_t)strtod(argv[i + 1], NULL);
        else if (strcmp(argv[i], "--dir") == 0)
            dir = argv[i + 1];
        else if (strcmp(argv[i], "--check") == 0)
            check = dir = argv[i + 1];
        else if (strcmp(argv[i], "--type") == 0)
            type = argv[i + 1];
        else
            argc = -1;
    }
    if (argc < 0 || dir == NULL || n == 0 || len == 0 || scans == 0 ||
        (strcmp(type, "grafite") != 0 && strcmp(type, "memento") != 0)) {
        fprintf(stderr,
                "usage: %s [--keys N] [--scans S] [--len L] [--type "
                "grafite|memento] --dir DIR | --check DIR\n",
                argv[0]);
        return 2;
    }
    if (check != NULL) {
        n = 20000;
        scans = 4000;
    }
    uint64_t *k = malloc(n * sizeof *k), s = seed;
    uint8_t *vals = malloc(n * 16);
    for (size_t i = 0; i < n; i++)
        k[i] = splitmix(&s);
    for (size_t i = 0; i < 2 * n; i++)
        memcpy(vals + 8 * i, &(uint64_t){splitmix(&s)}, 8);
    qsort(k, n, sizeof *k, cmp_u64);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (m == 0 || k[i] != k[m - 1])
            k[m++] = k[i];
    n = m;
    double t0 = now();
    void *db = e->fill(dir, k, n, vals);
    if (db == NULL)
        return 2;
    double t1 = now();
    char spec[64];
    snprintf(spec, sizeof spec, "%s:range=%llu", type, (unsigned long long)len);
    amq_options opt = {.hash = AMQ_HASH_ORDER, .hash_seed = seed};
    amq_filter *f = NULL;
    amq_diag d;
    if (amq_filter_build(spec, k, n, 0.01, &opt, &f, &d) != AMQ_OK) {
        fprintf(stderr, "%s: %s\n", argv[0], d.message);
        return 2;
    }
    double t2 = now();
    printf("# %s: %llu keys with 16-byte values in %s, written in %.1f s; "
           "%s: %zu bytes (%.2f bits/key), built in %.2f s, bound %.3g for "
           "ranges of %llu keys\n",
           e->name, (unsigned long long)n, dir, t1 - t0, spec,
           amq_filter_size_bytes(f), amq_filter_bits_per_key(f), t2 - t1,
           amq_range_fpr_bound(f, len), (unsigned long long)len);
    printf("%-8s %12s %12s %7s %9s %9s %10s\n", "empty", "scans/s",
           "with filter", "ratio", "skipped", "false pos", "filter ns");
    static const double shares[] = {0.0, 0.5, 0.9};
    workload w = {e, db, f, k, n, (size_t)scans, len, check ? 1 : 3};
    int bad = 0;
    for (int i = 0; i < 3; i++) {
        run_stats st;
        run_share(&w, shares[i], &s, &st);
        double total = (double)scans * w.rounds;
        double without = total / st.without_s, with = total / st.with_s;
        printf("%-8.0f %12.0f %12.0f %7.2f %9llu %9llu %10.1f\n",
               100 * shares[i], without, with, with / without,
               (unsigned long long)st.skipped, (unsigned long long)st.fp,
               st.filter_s * 1e9 / total);
        if (st.mismatches != 0) {
            fprintf(stderr, "%s: %llu scans differ with the filter\n", argv[0],
                    (unsigned long long)st.mismatches);
            bad = 1;
        }
        /* the filter rules out all but about 1% of the empty ranges */
        double empties = shares[i] * (double)scans;
        if (check && empties > 0 &&
            (double)st.fp > 0.01 * empties + 4 * sqrt(0.01 * empties) + 4) {
            fprintf(stderr,
                    "%s: %llu false positives among %.0f empty ranges\n",
                    argv[0], (unsigned long long)st.fp, empties);
            bad = 1;
        }
    }
    amq_filter_free(f);
    e->close(db, dir, check != NULL);
    free(k);
    free(vals);
    return bad;
}
