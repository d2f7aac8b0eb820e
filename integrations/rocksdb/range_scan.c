/*
 * range_scan.c — a range filter in front of RocksDB's range scans: a
 * grafite filter over a table's keys answers "may [lo, hi] hold a key?"
 * before the iterator seeks, and a range it rules out costs no seek.
 *
 *   amq-rocksdb-range [--keys N] [--scans S] [--len L] [--dir DIR]
 *   amq-rocksdb-range --check DIR     (the test: small, results compared)
 *
 * Writes N keys (8 bytes big-endian, so RocksDB's bytewise order is the
 * integers' order; uniform 64-bit values) with 16-byte values into a
 * fresh database in DIR, flushes and compacts it into SST files, builds a
 * grafite filter at 1% for ranges of L keys, and runs S scans for each
 * share of empty ranges (0%, 50%, 90%): an empty range lies in a gap
 * between keys, a non-empty one covers a random key. Each scan seeks to
 * lo and reads every key up to hi through one reused iterator; with the
 * filter, a range it rules out is skipped. Both ways in the same run,
 * alternated in rounds; prints scans/s, their ratio, and the filter's
 * bytes. Every scan's key count is compared between the two ways: a
 * difference (a false negative) fails the run.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <amq/amq.h>
#include <rocksdb/c.h>

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

static void be64(uint64_t v, char out[8]) {
    for (int i = 7; i >= 0; i--, v >>= 8)
        out[i] = (char)(v & 0xff);
}

static uint64_t from_be64(const char *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | (uint8_t)p[i];
    return v;
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

static bool ok_or_die(char *err, const char *what) {
    if (err == NULL)
        return true;
    fprintf(stderr, "amq-rocksdb-range: %s: %s\n", what, err);
    free(err);
    exit(2);
}

static rocksdb_t *fill(const char *dir, const uint64_t *k, size_t n,
                       uint64_t *seed) {
    char *err = NULL;
    rocksdb_options_t *o = rocksdb_options_create();
    rocksdb_options_set_create_if_missing(o, 1);
    rocksdb_destroy_db(o, dir, &err);
    free(err);
    err = NULL;
    rocksdb_t *db = rocksdb_open(o, dir, &err);
    ok_or_die(err, "open");
    rocksdb_writeoptions_t *wo = rocksdb_writeoptions_create();
    rocksdb_writeoptions_disable_WAL(wo, 1);
    rocksdb_writebatch_t *wb = rocksdb_writebatch_create();
    for (size_t i = 0; i < n; i++) {
        char key[8], val[16];
        be64(k[i], key);
        for (int j = 0; j < 16; j += 8)
            be64(splitmix(seed), val + j);
        rocksdb_writebatch_put(wb, key, 8, val, 16);
        if ((i + 1) % 100000 == 0 || i + 1 == n) {
            rocksdb_write(db, wo, wb, &err);
            ok_or_die(err, "write");
            rocksdb_writebatch_clear(wb);
        }
    }
    rocksdb_flushoptions_t *fo = rocksdb_flushoptions_create();
    rocksdb_flush(db, fo, &err);
    ok_or_die(err, "flush");
    rocksdb_compact_range(db, NULL, 0, NULL, 0);
    rocksdb_flushoptions_destroy(fo);
    rocksdb_writebatch_destroy(wb);
    rocksdb_writeoptions_destroy(wo);
    rocksdb_options_destroy(o);
    return db;
}

/* Keys in [lo, hi] through the iterator (the scan a store runs). */
static uint64_t scan(rocksdb_iterator_t *it, uint64_t lo, uint64_t hi,
                     uint64_t *bytes) {
    char key[8];
    uint64_t found = 0;
    be64(lo, key);
    for (rocksdb_iter_seek(it, key, 8); rocksdb_iter_valid(it);
         rocksdb_iter_next(it)) {
        size_t kl, vl;
        const char *kp = rocksdb_iter_key(it, &kl);
        if (kl != 8 || from_be64(kp) > hi)
            break;
        rocksdb_iter_value(it, &vl);
        *bytes += vl;
        found++;
    }
    return found;
}

typedef struct run_stats {
    double with_s, without_s, filter_s;
    uint64_t skipped, fp, mismatches;
} run_stats;

static void run_share(rocksdb_t *db, const amq_filter *f, const uint64_t *k,
                      size_t n, uint64_t len, double empty, size_t scans,
                      int rounds, uint64_t *seed, run_stats *st) {
    uint64_t *lo = malloc(scans * sizeof *lo), *want = calloc(scans, 8);
    size_t e = 0;
    for (size_t i = 0; i < scans; i++) {
        bool make_empty = (double)(splitmix(seed) >> 11) * 0x1.0p-53 < empty;
        uint64_t a;
        do {
            if (make_empty)
                a = splitmix(seed);
            else {
                uint64_t key = k[splitmix(seed) % n];
                a = key - (key >= len ? splitmix(seed) % len : 0);
            }
        } while (a > UINT64_MAX - len ||
                 any_in(k, n, a, a + len - 1) == make_empty);
        lo[i] = a;
        e += make_empty;
    }
    rocksdb_readoptions_t *ro = rocksdb_readoptions_create();
    rocksdb_iterator_t *it = rocksdb_create_iterator(db, ro);
    memset(st, 0, sizeof *st);
    uint64_t bytes = 0;
    for (int r = 0; r < rounds; r++) {
        /* ABBA: the order alternates from round to round */
        for (int way = 0; way < 2; way++) {
            bool filtered = (way == 1) != (r % 2 == 1);
            double t0 = now();
            for (size_t i = 0; i < scans; i++) {
                bool maybe = true;
                uint64_t got = 0;
                if (filtered)
                    amq_range_query(f, lo[i], lo[i] + len - 1, &maybe);
                if (maybe)
                    got = scan(it, lo[i], lo[i] + len - 1, &bytes);
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
        double t0 = now(); /* the filter's own share */
        for (size_t i = 0; i < scans; i++) {
            bool maybe;
            amq_range_query(f, lo[i], lo[i] + len - 1, &maybe);
            bytes += maybe;
        }
        st->filter_s += now() - t0;
    }
    (void)e;
    if (bytes == 1) /* keeps the value reads */
        fputc(' ', stderr);
    rocksdb_iter_destroy(it);
    rocksdb_readoptions_destroy(ro);
    free(lo);
    free(want);
}

int main(int argc, char **argv) {
    uint64_t n = 10000000, scans = 200000, len = 64, seed = 42;
    const char *dir = "/tmp/amq-rocksdb-range", *check = NULL;
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
        else {
            fprintf(stderr, "usage: amq-rocksdb-range [--keys N] [--scans S] "
                            "[--len L] [--dir DIR] | --check DIR\n");
            return 2;
        }
    }
    if (check != NULL) {
        n = 20000;
        scans = 4000;
    }
    if (n == 0 || len == 0 || scans == 0)
        return 2;
    uint64_t *k = malloc(n * sizeof *k), s = seed;
    for (size_t i = 0; i < n; i++)
        k[i] = splitmix(&s);
    qsort(k, n, sizeof *k, cmp_u64);
    double t0 = now();
    rocksdb_t *db = fill(dir, k, n, &s);
    double t1 = now();
    char spec[64];
    snprintf(spec, sizeof spec, "grafite:range=%llu", (unsigned long long)len);
    amq_options opt = {.hash = AMQ_HASH_ORDER, .hash_seed = seed};
    amq_filter *f = NULL;
    amq_diag d;
    if (amq_filter_build(spec, k, n, 0.01, &opt, &f, &d) != AMQ_OK) {
        fprintf(stderr, "amq-rocksdb-range: %s\n", d.message);
        return 2;
    }
    double t2 = now();
    printf("# %llu keys (8-byte big-endian, 16-byte values) in %s: written, "
           "flushed and compacted in %.1f s; %s: %zu bytes (%.2f bits/key), "
           "built in %.2f s, bound %.3g for ranges of %llu keys\n",
           (unsigned long long)n, dir, t1 - t0, spec, amq_filter_size_bytes(f),
           amq_filter_bits_per_key(f), t2 - t1, amq_range_fpr_bound(f, len),
           (unsigned long long)len);
    printf("%-8s %12s %12s %7s %9s %9s %10s\n", "empty", "scans/s",
           "with filter", "ratio", "skipped", "false pos", "filter ns");
    static const double shares[] = {0.0, 0.5, 0.9};
    int bad = 0;
    for (int i = 0; i < 3; i++) {
        run_stats st;
        run_share(db, f, k, n, len, shares[i], (size_t)scans,
                  check ? 1 : 3, &s, &st);
        double rounds = check ? 1 : 3;
        double without = (double)scans * rounds / st.without_s,
               with = (double)scans * rounds / st.with_s;
        printf("%-8.0f %12.0f %12.0f %7.2f %9llu %9llu %10.1f\n",
               100 * shares[i], without, with, with / without,
               (unsigned long long)st.skipped, (unsigned long long)st.fp,
               st.filter_s * 1e9 / ((double)scans * rounds));
        if (st.mismatches != 0) {
            fprintf(stderr,
                    "amq-rocksdb-range: %llu scans differ with the filter\n",
                    (unsigned long long)st.mismatches);
            bad = 1;
        }
        /* the filter rules out most empty ranges: at 1% for L keys */
        double empties = shares[i] * (double)scans;
        if (check && empties > 0 &&
            (double)st.fp > 0.01 * empties + 4 * sqrt(0.01 * empties) + 4) {
            fprintf(stderr, "amq-rocksdb-range: %llu false positives among "
                            "%.0f empty ranges\n",
                    (unsigned long long)st.fp, empties);
            bad = 1;
        }
    }
    amq_filter_free(f);
    rocksdb_close(db);
    if (check) {
        rocksdb_options_t *o = rocksdb_options_create();
        char *err = NULL;
        rocksdb_destroy_db(o, dir, &err);
        free(err);
        rocksdb_options_destroy(o);
    }
    free(k);
    return bad;
}
