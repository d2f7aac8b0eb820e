/*
 * leveldb_bench.c — amq-leveldb-bench: amq filters against LevelDB's own
 * Bloom filter inside LevelDB, at equal bits per key.
 *
 * For each data-block size and each filter: a database of N keys (16
 * bytes, written in a shuffled order, values of 100 bytes) is compacted
 * and reopened; absent keys are looked up (timed, after one warm pass);
 * then every data block is spoiled (ldb_harness.h) and the same lookups
 * count the data-block reads the filters let through: the false-positive
 * rate, measured the same way for every filter. Filter bytes on disk are
 * the table bytes less those of the database without a filter.
 *
 * usage: amq-leveldb-bench [--keys N] [--bits B] [--queries Q]
 *                          [--block-sizes S,S] [--types T,T] [--random-keys]
 *                          [--doc FILE]
 * --doc writes the table into FILE between "<!-- BEGIN leveldb-bench -->"
 * and "<!-- END leveldb-bench -->" (leveldb-bench-random with
 * --random-keys). A benchmark, not a test: run it on an otherwise idle
 * machine.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amq_leveldb.h"
#include "doc_section.h"
#include "ldb_harness.h"

typedef struct bench_opts {
    double keys, bits, queries;
    char block_sizes[128], types[256];
    const char *doc;
    bool random_keys;
} bench_opts;

typedef struct row {
    char filter[64], pick[AMQ_ALLOC_SPEC_MAX];
    size_t block;
    double fpr, bound, ns;
    long long bytes; /* table bytes on disk */
} row;

static int usage(void) {
    fprintf(stderr, "usage: amq-leveldb-bench [--keys N] [--bits B] "
                    "[--queries Q] [--block-sizes S,S] [--types T,T] "
                    "[--random-keys] [--doc FILE]\n");
    return 2;
}

static int parse(int argc, char **argv, bench_opts *o) {
    *o = (bench_opts){
        .keys = 1e6,
        .bits = 10,
        .queries = 1e6,
        .block_sizes = "4096,65536",
        .types = "none,leveldb,bloom,blocked,sbbf,sbbf-trusted,ribbon"};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (v == NULL && strcmp(a, "--random-keys") != 0)
            return usage();
        char *end;
        if (strcmp(a, "--random-keys") == 0) {
            o->random_keys = true;
            continue;
        }
        if (strcmp(a, "--doc") == 0)
            o->doc = v;
        else if (strcmp(a, "--block-sizes") == 0)
            snprintf(o->block_sizes, sizeof o->block_sizes, "%s", v);
        else if (strcmp(a, "--types") == 0)
            snprintf(o->types, sizeof o->types, "%s", v);
        else if (strcmp(a, "--keys") == 0)
            o->keys = strtod(v, &end);
        else if (strcmp(a, "--bits") == 0)
            o->bits = strtod(v, &end);
        else if (strcmp(a, "--queries") == 0)
            o->queries = strtod(v, &end);
        else
            return usage();
        i++;
    }
    if (!(o->keys >= 1000) || !(o->bits > 0) || !(o->queries >= 1000) ||
        strncmp(o->types, "none", 4) != 0) {
        fprintf(stderr, "amq-leveldb-bench: --keys and --queries >= 1000, "
                        "--bits > 0, --types starting with none\n");
        return 2;
    }
    return 0;
}

/* One database: fill, time absent lookups, count block reads. */
static int measure(const bench_opts *o, size_t block, const char *type,
                   row *r) {
    amq_leveldb_policy *p = NULL;
    char dir[256];
    ldb_result res;
    ldb_setup s = {.keys = (uint64_t)o->keys,
                   .value_len = 100,
                   .block_size = block,
                   .random_keys = o->random_keys};
    memset(r, 0, sizeof *r);
    r->bound = NAN;
    snprintf(r->filter, sizeof r->filter, "%s", type);
    r->block = block;
    if (strcmp(type, "leveldb") == 0) {
        s.policy = leveldb_filterpolicy_create_bloom((int)lround(o->bits));
        snprintf(r->pick, sizeof r->pick, "LevelDB Bloom, %ld bits/key",
                 lround(o->bits));
    } else if (strcmp(type, "none") != 0) {
        amq_diag d = {0};
        bool trusted = strcmp(type, "sbbf-trusted") == 0;
        amq_status st =
            trusted
                ? amq_leveldb_policy_new_trusted("sbbf", o->bits, NULL, &p, &d)
                : amq_leveldb_policy_new(type, o->bits, NULL, &p, &d);
        if (st != AMQ_OK) {
            fprintf(stderr, "%s: %s\n", type, d.message);
            return -1;
        }
        s.policy = amq_leveldb_policy_get(p);
        snprintf(r->pick, sizeof r->pick, "%s", amq_leveldb_policy_spec(p));
    } else {
        snprintf(r->pick, sizeof r->pick, "-");
    }
    int rc = ldb_temp_dir(dir, sizeof dir, "leveldb-bench");
    s.dir = dir;
    uint64_t q = (uint64_t)o->queries;
    if (rc == 0)
        rc = ldb_fill(&s, 1);
    if (rc == 0)
        rc = ldb_lookup(&s, false, q, false, &res); /* warm the page cache */
    if (rc == 0)
        rc = ldb_lookup(&s, false, q, false, &res);
    r->ns = res.seconds * 1e9 / (double)q;
    if (rc == 0 && p != NULL) { /* the bounds, on an untimed pass */
        amq_leveldb_stats st;
        amq_leveldb_policy_reset_stats(p);
        amq_leveldb_policy_track_bounds(p, true);
        rc = ldb_lookup(&s, false, q, false, &res);
        amq_leveldb_policy_stats(p, &st);
        r->bound = st.probes ? st.bound_sum / (double)st.probes : NAN;
    }
    if (rc == 0) {
        r->bytes = ldb_table_bytes(dir);
        rc = ldb_spoil_data_blocks(dir) > 0 ? 0 : -1;
    }
    if (rc == 0)
        rc = ldb_lookup(&s, false, q, true, &res);
    r->fpr = (double)res.errors / (double)q;
    ldb_remove_dir(dir);
    if (p != NULL)
        amq_leveldb_policy_free(p);
    else if (s.policy != NULL)
        leveldb_filterpolicy_destroy(s.policy);
    return rc;
}

static void append(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void append(char **buf, size_t *len, size_t *cap, const char *fmt, ...) {
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int n = vsnprintf(*buf ? *buf + *len : NULL, *buf ? *cap - *len : 0,
                          fmt, ap);
        va_end(ap);
        if (n < 0)
            return;
        if (*buf && *len + (size_t)n < *cap) {
            *len += (size_t)n;
            return;
        }
        size_t want = (*cap ? *cap * 2 : 4096) + (size_t)n;
        char *nb = realloc(*buf, want);
        if (nb == NULL)
            return;
        *buf = nb, *cap = want;
    }
}

int main(int argc, char **argv) {
    bench_opts o;
    int rc = parse(argc, argv, &o);
    if (rc != 0)
        return rc;
    char *out = NULL, list[128], *save = NULL;
    size_t len = 0, cap = 0;
    append(&out, &len, &cap,
           "%.0f keys of 16 bytes (%s), values of 100 bytes, written "
           "shuffled, compacted; %.0f absent-key gets (%s); %g bits/key "
           "asked of every filter.\n\n| data block | filter | built as | "
           "filter bits/key on disk | FPR measured | amq certified bound | "
           "absent get ns |\n"
           "|---:|---|---|---:|---:|---:|---:|\n",
           o.keys,
           o.random_keys ? "16 hex digits of a 64-bit mix of even numbers"
                         : "\"k\" and 15 decimal digits of even numbers",
           o.queries,
           o.random_keys ? "the same mix of odd numbers"
                         : "the odd numbers between them",
           o.bits);
    snprintf(list, sizeof list, "%s", o.block_sizes);
    for (char *b = strtok_r(list, ",", &save); b;
         b = strtok_r(NULL, ",", &save)) {
        char types[256], *s2 = NULL;
        long long base = 0;
        snprintf(types, sizeof types, "%s", o.types);
        for (char *t = strtok_r(types, ",", &s2); t;
             t = strtok_r(NULL, ",", &s2)) {
            row r;
            if (measure(&o, (size_t)atol(b), t, &r) != 0)
                return 1;
            if (strcmp(t, "none") == 0) /* --types starts with it */
                base = r.bytes;
            double bpk = 8.0 * (double)(r.bytes - base) / o.keys;
            char bound[32] = "-";
            if (!isnan(r.bound))
                snprintf(bound, sizeof bound, "%.5f", r.bound);
            append(&out, &len, &cap,
                   "| %zu | %s | %s | %.2f | %.5f | %s | %.0f |\n", r.block,
                   r.filter, r.pick, bpk, r.fpr, bound, r.ns);
            fprintf(stderr, "%zu %s done\n", r.block, r.filter);
        }
    }
    append(&out, &len, &cap,
           "\nCommand: `amq-leveldb-bench --keys %.0f "
           "--bits %g --queries %.0f --block-sizes %s%s`\n",
           o.keys, o.bits, o.queries, o.block_sizes,
           o.random_keys ? " --random-keys" : "");
    fputs(out ? out : "", stdout);
    if (o.doc != NULL && out != NULL)
        rc = doc_section_replace(o.doc,
                                 o.random_keys ? "leveldb-bench-random"
                                               : "leveldb-bench",
                                 out) == 0
                 ? 0
                 : 1;
    free(out);
    return rc;
}
