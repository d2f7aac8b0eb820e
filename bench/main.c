/*
 * main.c — amq_bench: options, the list of subjects, the run, the files.
 *
 *   amq_bench [--sizes 1e6,1e8] [--quick] [--fpr 0.01] [--reps 5]
 *             [--insert-reps N] [--queries 1e7] [--batch 4096]
 *             [--probe-group 16] [--probe-pages huge|base]
 *             [--stat min|median]
 *             [--only bloom,sbbf,libbloom] [--no-inline] [--no-peer]
 *             [--seed S] [--threads N] [--out bench-out]
 *
 * For each n, every registered amq type (generic interface; static types
 * built from all the keys), its inline query object where amq/query.h has
 * one, and Debian's libbloom are built from the same n pre-hashed keys and
 * queried with the same positives and negatives, and the generic rows also
 * with 16-byte keys (see measure.c). Results go to stdout (markdown) and to
 * DIR/results.md, results.csv and results.svg; progress goes to stderr.
 * docs/bench.md explains every column.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "amq/amq.h"
#include "bench.h"

#define MAX_SUBJECTS 96

static void usage(FILE *f) {
    fputs(
        "usage: amq_bench [options]\n"
        "  --sizes LIST     key counts, e.g. 1e6,1e8 (default)\n"
        "  --quick          same as --sizes 1e5,1e6\n"
        "  --fpr EPS        target false-positive rate (default 0.01)\n"
        "  --reps N         query/probe repetitions (default 5; 3 at n>=1e7)\n"
        "  --insert-reps N  build repetitions (default: reps; 1 at n>=1e7)\n"
        "  --stat S         min (default) or median over repetitions\n"
        "  --queries N      max positive and negative queries (default 1e7)\n"
        "  --batch N        hashes per batch call (default 4096)\n"
        "  --probe-group N  addresses the probe prefetches together (16)\n"
        "  --probe-pages P  huge (default) or base pages\n"
        "  --only LIST      only these types (and/or libbloom)\n"
        "  --no-inline      skip the inline query-object rows\n"
        "  --no-peer        skip libbloom\n"
        "  --threads N      also build static types, sbbf and blocked\n"
        "                   through amq_builder on 1 and on N threads\n"
        "                   (rows [builder j1], [jN])\n"
        "  --seed S         key stream seed (default 42)\n"
        "  --out DIR        output directory (default bench-out)\n",
        f);
}

static int parse_count(const char *s, uint64_t *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || (*end != '\0' && *end != ',') || v < 1 ||
        v > 1e10 || v != (double)(uint64_t)v)
        return -1;
    *out = (uint64_t)v;
    return 0;
}

static int parse_sizes(const char *s, bench_cfg *cfg) {
    cfg->nsizes = 0;
    while (*s) {
        if (cfg->nsizes == BENCH_MAX_SIZES ||
            parse_count(s, &cfg->sizes[cfg->nsizes]) != 0)
            return -1;
        cfg->nsizes++;
        const char *comma = strchr(s, ',');
        s = comma ? comma + 1 : s + strlen(s);
    }
    return cfg->nsizes ? 0 : -1;
}

static void defaults(bench_cfg *cfg) {
    memset(cfg, 0, sizeof *cfg);
    cfg->sizes[0] = 1000000u;
    cfg->sizes[1] = 100000000u;
    cfg->nsizes = 2;
    cfg->fpr = 0.01;
    cfg->queries = 10000000u;
    cfg->batch = 4096;
    cfg->probe_group = 16;
    cfg->probe_huge = true;
    cfg->seed = 42;
    cfg->out_dir = "bench-out";
    cfg->inline_path = true;
    cfg->peer = true;
}

static void record_command(int argc, char **argv, bench_cfg *cfg) {
    size_t len = 0;
    for (int i = 0; i < argc && len < sizeof cfg->command; i++)
        len += (size_t)snprintf(cfg->command + len, sizeof cfg->command - len,
                                "%s%s", i ? " " : "", argv[i]);
}

/* One option with a value; returns 0, or -1 on a bad value. */
static int parse_valued(const char *opt, const char *val, bench_cfg *cfg) {
    uint64_t u;
    if (strcmp(opt, "--sizes") == 0)
        return parse_sizes(val, cfg);
    if (strcmp(opt, "--fpr") == 0) {
        cfg->fpr = strtod(val, NULL);
        return cfg->fpr > 0 && cfg->fpr < 1 ? 0 : -1;
    }
    if (strcmp(opt, "--out") == 0) {
        cfg->out_dir = val;
        return 0;
    }
    if (strcmp(opt, "--stat") == 0) {
        bool min = strcmp(val, "min") == 0;
        if (!min && strcmp(val, "median") != 0)
            return -1;
        bench_set_summary_min(min);
        return 0;
    }
    if (strcmp(opt, "--probe-pages") == 0) {
        cfg->probe_huge = strcmp(val, "huge") == 0;
        return cfg->probe_huge || strcmp(val, "base") == 0 ? 0 : -1;
    }
    if (strcmp(opt, "--only") == 0) {
        cfg->only = val;
        return 0;
    }
    if (parse_count(val, &u) != 0)
        return -1;
    if (strcmp(opt, "--reps") == 0 && u <= 64)
        cfg->reps = (int)u;
    else if (strcmp(opt, "--insert-reps") == 0 && u <= 64)
        cfg->insert_reps = (int)u;
    else if (strcmp(opt, "--queries") == 0)
        cfg->queries = (size_t)u;
    else if (strcmp(opt, "--batch") == 0 && u <= (1u << 20))
        cfg->batch = (size_t)u;
    else if (strcmp(opt, "--probe-group") == 0 && u <= 4096)
        cfg->probe_group = (size_t)u;
    else if (strcmp(opt, "--seed") == 0)
        cfg->seed = u;
    else if (strcmp(opt, "--threads") == 0 && u <= 64)
        cfg->threads = (unsigned)u;
    else
        return -1;
    return 0;
}

static int parse_flag(const char *opt, bench_cfg *cfg) {
    if (strcmp(opt, "--quick") == 0)
        return parse_sizes("1e5,1e6", cfg);
    if (strcmp(opt, "--no-inline") == 0)
        cfg->inline_path = false;
    else if (strcmp(opt, "--no-peer") == 0)
        cfg->peer = false;
    else
        return -1;
    return 0;
}

/* 0: run; 1: exit successfully (--help); -1: usage error. */
static int parse_args(int argc, char **argv, bench_cfg *cfg) {
    defaults(cfg);
    record_command(argc, argv, cfg);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return 1;
        if (parse_flag(argv[i], cfg) == 0)
            continue;
        if (i + 1 < argc && parse_valued(argv[i], argv[i + 1], cfg) == 0) {
            i++;
            continue;
        }
        fprintf(stderr, "amq_bench: bad option or value: %s\n", argv[i]);
        return -1;
    }
    return 0;
}

static bool wanted(const bench_cfg *cfg, const char *name) {
    if (cfg->only == NULL)
        return true;
    size_t len = strlen(name);
    for (const char *p = cfg->only; (p = strstr(p, name)) != NULL; p++) {
        bool start = p == cfg->only || p[-1] == ',';
        bool end = p[len] == '\0' || p[len] == ',';
        if (start && end)
            return true;
    }
    return false;
}

static void add_subject(bench_subject *s, size_t *n, const char *label,
                        const char *name, const bench_ops *ops) {
    if (*n == MAX_SUBJECTS)
        return;
    snprintf(s[*n].label, sizeof s[*n].label, "%s", label);
    snprintf(s[*n].name, sizeof s[*n].name, "%s", name);
    s[*n].ops = ops;
    (*n)++;
}

static void note_skipped(bench_results *r, const char *name) {
    size_t len = strlen(r->skipped);
    snprintf(r->skipped + len, sizeof r->skipped - len, "%s%s", len ? ", " : "",
             name);
}

/* The dynamic types whose batch insert runs on the builder's threads
 * (src/bloom/fill.h); with --threads they get builder rows as the static
 * types do. */
static bool fills_on_threads(const char *spec) {
    static const char *const names[] = {"sbbf", "blocked"};
    size_t len = strcspn(spec, ":");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen(names[i]) == len && strncmp(spec, names[i], len) == 0)
            return true;
    return false;
}

/* A type name or a spec with parameters ("fuse8:ways=4"): its generic
 * row, and its inline row where amq/query.h has a query object for it. */
static void add_spec(const bench_cfg *cfg, bench_subject *s, size_t *n,
                     const char *spec, bench_results *r) {
    char label[48];
    const amq_type_info *info = amq_filter_type_find(spec);
    if (info == NULL || (info->caps & AMQ_CAP_SKETCH)) {
        note_skipped(r, spec);
        return;
    }
    add_subject(s, n, spec, spec,
                (info->caps & AMQ_CAP_STATIC) ? &bench_static_ops
                                              : &bench_generic_ops);
    const bench_ops *inl = bench_inline_ops(spec);
    snprintf(label, sizeof label, "%s [inline]", spec);
    if (cfg->inline_path && inl != NULL)
        add_subject(s, n, label, spec, inl);
    const bench_ops *val = bench_values_for(spec);
    snprintf(label, sizeof label, "%s [values]", spec);
    if (val != NULL)
        add_subject(s, n, label, spec, val);
    if (cfg->threads != 0 &&
        ((info->caps & AMQ_CAP_STATIC) || fills_on_threads(spec)) &&
        val == NULL) {
        bench_build_threads = cfg->threads;
        snprintf(label, sizeof label, "%s [builder j1]", spec);
        add_subject(s, n, label, spec, &bench_builder1_ops);
        snprintf(label, sizeof label, "%s [builder j%u]", spec, cfg->threads);
        add_subject(s, n, label, spec, &bench_builderj_ops);
    }
}

/* Specs with parameters named in --only. In the comma list a token with
 * '=' but no ':' continues the previous spec's parameters, so
 * "sbbf,ribbon:bits=8,w=128" names sbbf and ribbon:bits=8,w=128. */
static void add_only_specs(const bench_cfg *cfg, bench_subject *s, size_t *n,
                           bench_results *r) {
    char spec[64] = "";
    const char *p = cfg->only;
    while (*p != '\0') {
        size_t len = strcspn(p, ",");
        bool cont = memchr(p, '=', len) && !memchr(p, ':', len);
        if (!cont && strchr(spec, ':') != NULL)
            add_spec(cfg, s, n, spec, r);
        if (!cont)
            spec[0] = '\0';
        size_t used = strlen(spec);
        snprintf(spec + used, sizeof spec - used, "%s%.*s", cont ? "," : "",
                 (int)len, p);
        p += len + (p[len] == ',');
    }
    if (strchr(spec, ':') != NULL)
        add_spec(cfg, s, n, spec, r);
}

static size_t make_subjects(const bench_cfg *cfg, bench_subject *s,
                            bench_results *r) {
    size_t n = 0;
    for (size_t i = 0; i < amq_filter_type_count(); i++) {
        const amq_type_info *info = amq_filter_type_at(i);
        if (wanted(cfg, info->name))
            add_spec(cfg, s, &n, info->name, r);
    }
    /* the shapes each type names beside its defaults (info.shapes) */
    for (size_t i = 0; cfg->only == NULL && i < amq_filter_type_count(); i++)
        for (const char *const *sh = amq_filter_type_at(i)->shapes; sh && *sh;
             sh++)
            add_spec(cfg, s, &n, *sh, r);
    if (cfg->only != NULL)
        add_only_specs(cfg, s, &n, r);
    if (wanted(cfg, "window"))
        add_subject(s, &n, "window", "window", &bench_window_ops);
    if (cfg->peer && wanted(cfg, "libbloom")) {
        add_subject(s, &n, "libbloom", "libbloom", &bench_libbloom_ops);
        /* at the split-block filter's bits/key: the equal-space comparison */
        add_subject(s, &n, "libbloom@sbbf", "libbloom@sbbf",
                    &bench_libbloom_ops);
    }
    return n;
}

static void print_row_progress(const bench_row *row) {
    if (!row->ok) {
        bench_progress("  %-16s FAILED: %s", row->label, row->note);
        return;
    }
    bench_progress("  %-16s %.2f bits/key  fpr %.4f  insert %.1f  "
                   "neg scalar %.1f  neg batch %.1f ns/key",
                   row->label, row->bits_per_key, row->fpr_meas, row->insert_ns,
                   row->neg_scalar_ns, row->neg_batch_ns);
}

static int run_size(const bench_cfg *cfg, uint64_t n, const bench_subject *s,
                    size_t ns, bench_results *r) {
    char nb[32];
    bench_fmt_n(n, nb, sizeof nb);
    bench_keys k = {NULL, n, NULL,
                    (size_t)(n < cfg->queries ? n : cfg->queries)};
    uint64_t *pos = bench_make_keys(cfg->seed, (size_t)n);
    uint64_t *neg = bench_make_keys(~cfg->seed * 0x9E3779B97F4A7C15u, k.nq);
    if (pos == NULL || neg == NULL) {
        fprintf(stderr, "amq_bench: out of memory for %s keys\n", nb);
        free(pos);
        free(neg);
        return -1;
    }
    k.pos = pos;
    k.neg = neg;
    bench_progress("n = %s: %zu subjects, %zu queries per kind", nb, ns, k.nq);
    for (size_t i = 0; i < ns && r->nrows < BENCH_MAX_ROWS; i++) {
        bench_row *row = &r->rows[r->nrows++];
        bench_measure(cfg, &s[i], &k, row);
        print_row_progress(row);
    }
    free(pos);
    free(neg);
    return 0;
}

static FILE *open_out(const char *dir, const char *file) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        fprintf(stderr, "amq_bench: cannot write %s: %s\n", path,
                strerror(errno));
    return f;
}

/* The output directory and its parents, made before anything is measured
 * (a run is long; a path it cannot write should fail at once). */
static int make_out_dir(const char *dir) {
    char path[1024];
    size_t len = strlen(dir);
    if (len == 0 || len >= sizeof path) {
        fprintf(stderr, "amq_bench: bad output directory '%s'\n", dir);
        return -1;
    }
    memcpy(path, dir, len + 1);
    for (size_t i = 1; i <= len; i++) {
        if (path[i] != '/' && path[i] != '\0')
            continue;
        char c = path[i];
        path[i] = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST) {
            fprintf(stderr, "amq_bench: cannot create %s: %s\n", path,
                    strerror(errno));
            return -1;
        }
        path[i] = c;
    }
    FILE *probe = open_out(dir, "results.md");
    if (probe == NULL)
        return -1;
    fclose(probe);
    return 0;
}

static int write_outputs(const bench_cfg *cfg, const bench_results *r) {
    FILE *md = open_out(cfg->out_dir, "results.md");
    FILE *csv = open_out(cfg->out_dir, "results.csv");
    FILE *svg = open_out(cfg->out_dir, "results.svg");
    if (md)
        bench_write_markdown(md, cfg, r);
    if (csv)
        bench_write_csv(csv, r);
    if (svg)
        bench_write_svg(svg, cfg, r);
    int bad = !md || !csv || !svg;
    bad |= md && fclose(md) != 0;
    bad |= csv && fclose(csv) != 0;
    bad |= svg && fclose(svg) != 0;
    return bad ? -1 : 0;
}

int main(int argc, char **argv) {
    static bench_results results;
    static bench_subject subjects[MAX_SUBJECTS];
    bench_cfg cfg;
    int pa = parse_args(argc, argv, &cfg);
    if (pa != 0) {
        usage(pa > 0 ? stdout : stderr);
        return pa > 0 ? 0 : 2;
    }
    if (make_out_dir(cfg.out_dir) != 0)
        return 1;
    uint64_t t0 = bench_now_ns();
    size_t ns = make_subjects(&cfg, subjects, &results);
    for (size_t i = 0; i < cfg.nsizes; i++)
        if (run_size(&cfg, cfg.sizes[i], subjects, ns, &results) != 0)
            return 1;
    bench_progress("hash cost");
    results.nhash = bench_hash_cost(1u << 16, 5, results.hash, 4);
    results.seconds = bench_seconds_since(t0);
    bench_write_markdown(stdout, &cfg, &results);
    if (write_outputs(&cfg, &results) != 0)
        return 1;
    bench_progress("done in %.1f s; wrote %s/results.{md,csv,svg} (sink %llu)",
                   results.seconds, cfg.out_dir,
                   (unsigned long long)bench_sink_value());
    return 0;
}
