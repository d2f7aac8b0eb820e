/*
 * parquet_bench.c — one routing maplet against the Bloom filters Parquet
 * writers put in every row group, over a directory of files DuckDB writes.
 *
 *   amq-parquet-bench [--dir DIR] [--files F] [--rows R] [--row-group G]
 *                     [--queries Q] [--write FILE.md]
 *   amq-parquet-bench --make DIR [--files F] [--rows R] [--row-group G]
 *
 * DuckDB writes F files of R rows (row groups of G rows) with two
 * columns, each with DuckDB's own split-block Bloom filter per row group
 * (at its default rate, 1%; a dictionary limit high enough that every
 * chunk gets one):
 *   id    BIGINT, unique in the directory: a key lives in one row group;
 *   user  VARCHAR, 'user-N' for N below R: a key lives in many.
 * For each column, a point lookup asks which row groups may hold a key:
 * through the filters (one probe per row group) or through one routing
 * maplet (amq_pq_route_build: one probe in all), the maplet at amq's
 * default rate and at the rate that fits the filters' bytes. Reported:
 * bytes, row groups read per lookup that hold nothing (absent keys, and
 * present keys beyond their true row groups), the share of absent
 * lookups reading any, and nanoseconds per lookup (median of 3 passes,
 * both in memory, same run). Every present key must be routed to every
 * row group holding it (checked: the run fails otherwise). --write puts
 * the table in FILE.md between <!-- BEGIN parquet-routing --> and END.
 * --make writes the files only (for the documentation's examples).
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "amq/bloom.h"
#include "amq/maplet.h"
#include "amq_parquet.h"
#include "doc_section.h"
#include "duck.h"

typedef struct bench_args {
    const char *dir, *write, *make;
    uint64_t files, rows, group, queries;
} bench_args;

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static uint64_t mix(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* mkdir -p */
static void make_dir(const char *dir) {
    char p[512];
    snprintf(p, sizeof p, "%s", dir);
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = '\0';
            mkdir(p, 0755);
            *s = '/';
        }
    mkdir(p, 0755);
}

static bool make_files(const bench_args *a, const char *dir) {
    char sql[1024];
    make_dir(dir);
    for (uint64_t f = 0; f < a->files; f++) {
        snprintf(sql, sizeof sql,
                 "COPY (SELECT (%" PRIu64 " + i) * 7 + 3 AS id, 'user-' || "
                 "((i * 7919 + %" PRIu64 ") %% %" PRIu64 ") AS user FROM "
                 "range(%" PRIu64 ") t(i)) TO '%s/part-%03" PRIu64
                 ".parquet' (FORMAT parquet, ROW_GROUP_SIZE %" PRIu64
                 ", DICTIONARY_SIZE_LIMIT %" PRIu64 ")",
                 f * a->rows, f * 104729, a->rows, a->rows, dir, f, a->group,
                 4 * a->group);
        if (!duck_exec(sql))
            return false;
    }
    return true;
}

/* ---- the two ways to route -------------------------------------------------- */

typedef struct column_run {
    const char *name;
    amq_pq_file **files;
    size_t nfiles, *cols;
    uint8_t **bits; /* per row group */
    size_t *len, groups, bloom_bytes;
    amq_pq_pairs pairs;
    uint64_t *sorted; /* the pairs' hashes, sorted: true row groups */
} column_run;

typedef struct result {
    char label[96];
    size_t bytes;
    double absent_wrong, absent_any, present_true, present_wrong;
    double absent_ns, present_ns;
    uint64_t missed;
} result;

static int cmp_u64(const void *x, const void *y) {
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

/* How many row groups hold the value of hash h. */
static size_t true_groups(const column_run *c, uint64_t h) {
    size_t lo = 0, hi = c->pairs.n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->sorted[mid] < h)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t n = 0;
    while (lo + n < c->pairs.n && c->sorted[lo + n] == h)
        n++;
    return n;
}

static size_t bloom_route(const column_run *c, uint64_t h) {
    size_t hits = 0;
    for (size_t g = 0; g < c->groups; g++)
        hits += c->bits[g] == NULL ||
                amq_sbbf_parquet_contains(c->bits[g], c->len[g], h);
    return hits;
}

static size_t maplet_route(const amq_filter *m, uint64_t h) {
    uint64_t vals[256];
    size_t n = 0;
    if (amq_maplet_get_all(m, h, vals, 256, &n) != AMQ_OK)
        return 0;
    return n;
}

/* One pass of lookups of hs[0..n): row groups reported in total, ns. */
static double pass(const column_run *c, const amq_filter *m, const uint64_t *hs,
                   size_t n, uint64_t *reported) {
    double t0 = now_ns();
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += m != NULL ? maplet_route(m, hs[i]) : bloom_route(c, hs[i]);
    *reported = sum;
    return (now_ns() - t0) / (double)n;
}

static double median3(double a, double b, double c) {
    return a > b ? (b > c ? b : (a > c ? c : a))
                 : (a > c ? a : (b > c ? c : b));
}

static void measure(const column_run *c, const amq_filter *m,
                    const uint64_t *absent, const uint64_t *present, size_t q,
                    result *r) {
    uint64_t rep = 0, any = 0, truth = 0, wrong = 0;
    double ta[3], tp[3];
    for (int k = 0; k < 3; k++) {
        ta[k] = pass(c, m, absent, q, &rep);
        tp[k] = pass(c, m, present, q, &rep);
    }
    r->absent_ns = median3(ta[0], ta[1], ta[2]);
    r->present_ns = median3(tp[0], tp[1], tp[2]);
    rep = 0;
    for (size_t i = 0; i < q; i++) {
        size_t n =
            m != NULL ? maplet_route(m, absent[i]) : bloom_route(c, absent[i]);
        rep += n;
        any += n > 0;
    }
    r->absent_wrong = (double)rep / (double)q;
    r->absent_any = (double)any / (double)q;
    for (size_t i = 0; i < q; i++) {
        size_t t = true_groups(c, present[i]);
        size_t n = m != NULL ? maplet_route(m, present[i])
                             : bloom_route(c, present[i]);
        truth += t;
        if (n < t)
            r->missed++;
        else
            wrong += n - t;
    }
    r->present_true = (double)truth / (double)q;
    r->present_wrong = (double)wrong / (double)q;
}

/* ---- a column --------------------------------------------------------------- */

static bool load_column(column_run *c) {
    amq_pq_diag d = {0, ""};
    size_t failed = 0, at = 0;
    for (size_t i = 0; i < c->nfiles; i++) {
        int col = amq_pq_column_find(c->files[i], c->name);
        if (col < 0)
            return false;
        c->cols[i] = (size_t)col;
        c->groups += amq_pq_groups(c->files[i]);
    }
    c->bits = calloc(c->groups, sizeof *c->bits);
    c->len = calloc(c->groups, sizeof *c->len);
    if (c->bits == NULL || c->len == NULL)
        return false;
    for (size_t i = 0; i < c->nfiles; i++)
        for (size_t g = 0; g < amq_pq_groups(c->files[i]); g++, at++) {
            if (amq_pq_bloom_read(c->files[i], g, c->cols[i], &c->bits[at],
                                  &c->len[at], NULL) == AMQ_OK)
                c->bloom_bytes += c->len[at];
        }
    amq_status st =
        amq_pq_pairs_read(c->files, c->cols, c->nfiles, &c->pairs, &failed, &d);
    if (st != AMQ_OK) {
        fprintf(stderr, "amq-parquet-bench: file %zu: %s (%s)\n", failed,
                amq_strerror(st), d.what);
        return false;
    }
    c->sorted = malloc((c->pairs.n ? c->pairs.n : 1) * sizeof *c->sorted);
    if (c->sorted == NULL)
        return false;
    memcpy(c->sorted, c->pairs.hash, c->pairs.n * sizeof *c->sorted);
    qsort(c->sorted, c->pairs.n, sizeof *c->sorted, cmp_u64);
    return true;
}

static void free_column(column_run *c) {
    for (size_t g = 0; c->bits != NULL && g < c->groups; g++)
        free(c->bits[g]);
    free(c->bits);
    free(c->len);
    free(c->sorted);
    amq_pq_pairs_free(&c->pairs);
}

/* Present keys: distinct hashes drawn uniformly; absent: values never
 * written (ids that are 0 mod 7, users past R). */
static void draw_keys(const column_run *c, const bench_args *a,
                      uint64_t *absent, uint64_t *present) {
    uint64_t s = 42;
    size_t distinct = 0;
    uint64_t *d = malloc(c->pairs.n * sizeof *d);
    for (size_t i = 0; d != NULL && i < c->pairs.n; i++)
        if (i == 0 || c->sorted[i] != c->sorted[i - 1])
            d[distinct++] = c->sorted[i];
    for (uint64_t i = 0; i < a->queries; i++) {
        uint8_t key[64];
        size_t len;
        uint64_t x = mix(&s);
        if (strcmp(c->name, "id") == 0) {
            uint64_t v = (x % (a->files * a->rows * 7)) / 7 * 7;
            for (int b = 0; b < 8; b++)
                key[b] = (uint8_t)(v >> (8 * b));
            len = 8;
        } else
            len = (size_t)snprintf((char *)key, sizeof key, "user-%" PRIu64,
                                   a->rows + x % (1u << 30));
        absent[i] = amq_pq_hash(key, len);
        present[i] = distinct ? d[mix(&s) % distinct] : 0;
    }
    free(d);
}

static void row(char *out, size_t cap, size_t *at, const char *col,
                const result *r) {
    *at += (size_t)snprintf(
        out + *at, cap - *at,
        "| %s | %s | %zu | %.4f | %.3f%% | %.2f | %.4f | %.0f | %.0f |\n", col,
        r->label, r->bytes, r->absent_wrong, 100 * r->absent_any,
        r->present_true, r->present_wrong, r->absent_ns, r->present_ns);
}

static bool run_column(column_run *c, const bench_args *a, char *out,
                       size_t cap, size_t *at) {
    uint64_t *absent = malloc(a->queries * sizeof *absent);
    uint64_t *present = malloc(a->queries * sizeof *present);
    result r[3];
    amq_filter *m[3] = {NULL, NULL, NULL};
    bool ok = absent != NULL && present != NULL;
    memset(r, 0, sizeof r);
    if (ok)
        draw_keys(c, a, absent, present);
    /* the Bloom filters as DuckDB wrote them */
    snprintf(r[0].label, sizeof r[0].label,
             "Bloom filter per row group (DuckDB's, 1%%), %zu probes",
             c->groups);
    r[0].bytes = c->bloom_bytes;
    /* the maplet at the CLI's default, and at the filters' bytes */
    ok = ok && amq_pq_route_build(&c->pairs, 0.01, &m[1], NULL) == AMQ_OK;
    double fit = 0.5;
    for (double e = 0.5; ok && e > 1e-9; e /= 2) {
        amq_filter *t = NULL;
        if (amq_pq_route_build(&c->pairs, e, &t, NULL) != AMQ_OK)
            break;
        bool fits = amq_filter_serialized_size(t) <= c->bloom_bytes;
        amq_filter_free(t);
        if (!fits)
            break;
        fit = e;
    }
    ok = ok && amq_pq_route_build(&c->pairs, fit, &m[2], NULL) == AMQ_OK;
    for (int k = 1; ok && k < 3; k++) {
        r[k].bytes = amq_filter_serialized_size(m[k]);
        snprintf(r[k].label, sizeof r[k].label,
                 "routing maplet, %s (bound %.2g), 1 probe",
                 k == 1 ? "amq's default" : "the filters' bytes",
                 amq_filter_fpr_bound(m[k]));
    }
    for (int k = 0; ok && k < 3; k++) {
        measure(c, m[k], absent, present, a->queries, &r[k]);
        row(out, cap, at, c->name, &r[k]);
        printf("%s: %s: %zu bytes, absent %.4f wrong (%.3f%% any), present "
               "%.2f true + %.4f wrong, %.0f / %.0f ns%s\n",
               c->name, r[k].label, r[k].bytes, r[k].absent_wrong,
               100 * r[k].absent_any, r[k].present_true, r[k].present_wrong,
               r[k].absent_ns, r[k].present_ns,
               r[k].missed ? "  MISSED A PRESENT KEY" : "");
        ok = r[k].missed == 0;
    }
    for (int k = 0; k < 3; k++)
        amq_filter_free(m[k]);
    free(absent);
    free(present);
    return ok;
}

/* ---- main --------------------------------------------------------------------- */

static bool parse(int argc, char **argv, bench_args *a) {
    *a = (bench_args){
        .files = 16, .rows = 245760, .group = 61440, .queries = 200000};
    for (int i = 1; i < argc; i++) {
        const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t *num = strcmp(k, "--files") == 0       ? &a->files
                        : strcmp(k, "--rows") == 0      ? &a->rows
                        : strcmp(k, "--row-group") == 0 ? &a->group
                        : strcmp(k, "--queries") == 0   ? &a->queries
                                                        : NULL;
        if (v == NULL)
            return false;
        if (num != NULL)
            *num = strtoull(v, NULL, 10);
        else if (strcmp(k, "--dir") == 0)
            a->dir = v;
        else if (strcmp(k, "--write") == 0)
            a->write = v;
        else if (strcmp(k, "--make") == 0)
            a->make = v;
        else
            return false;
        i++;
    }
    return a->files > 0 && a->rows > 0 && a->group > 0 && a->queries > 0;
}

int main(int argc, char **argv) {
    bench_args a;
    char dir[512], text[8192];
    size_t at = 0;
    bool ok = true;
    if (!parse(argc, argv, &a)) {
        fprintf(stderr, "usage: amq-parquet-bench [--dir DIR] [--files F] "
                        "[--rows R] [--row-group G] [--queries Q] "
                        "[--write FILE.md] | --make DIR [...]\n");
        return 2;
    }
    snprintf(dir, sizeof dir, "%s",
             a.make  ? a.make
             : a.dir ? a.dir
                     : "bench-data/parquet");
    if (!duck_open(AMQ_DUCKDB_LIB) || !make_files(&a, dir))
        return 1;
    duck_close();
    if (a.make != NULL)
        return 0;
    amq_pq_file **files = calloc(a.files, sizeof *files);
    size_t *cols = calloc(a.files, sizeof *cols);
    for (uint64_t f = 0; files != NULL && f < a.files; f++) {
        char path[600];
        snprintf(path, sizeof path, "%s/part-%03" PRIu64 ".parquet", dir, f);
        if (amq_pq_open(path, &files[f], NULL) != AMQ_OK) {
            fprintf(stderr, "amq-parquet-bench: cannot read %s\n", path);
            return 1;
        }
    }
    at += (size_t)snprintf(
        text + at, sizeof text - at,
        "%" PRIu64 " files of %" PRIu64 " rows written by DuckDB (row groups "
        "of %" PRIu64 "), %" PRIu64 " lookups of absent and of present keys "
        "(`build/integrations/parquet/amq-parquet-bench --files %" PRIu64
        " --rows %" PRIu64 " --row-group %" PRIu64 " --queries %" PRIu64
        " --write docs/maplets.md`):\n\n"
        "| column | routing | bytes | absent: row groups read | absent: "
        "share reading any | present: true row groups | present: other row "
        "groups read | absent ns | present ns |\n"
        "|---|---|---:|---:|---:|---:|---:|---:|---:|\n",
        a.files, a.rows, a.group, a.queries, a.files, a.rows, a.group,
        a.queries);
    const char *names[] = {"id", "user"};
    for (int k = 0; ok && k < 2; k++) {
        column_run c = {
            .name = names[k], .files = files, .nfiles = a.files, .cols = cols};
        ok = load_column(&c) && run_column(&c, &a, text, sizeof text, &at);
        free_column(&c);
    }
    for (uint64_t f = 0; files != NULL && f < a.files; f++)
        amq_pq_close(files[f]);
    free(files);
    free(cols);
    if (ok && a.write != NULL)
        ok = doc_section_replace(a.write, "parquet-routing", text) == 0;
    return ok ? 0 : 1;
}
