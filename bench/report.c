/*
 * report.c — the markdown report and the CSV file.
 *
 * Markdown: a header with the run's conditions (date, command, machine),
 * then per n a speed table, a space/accuracy table, the memory probe, the
 * comparison with libbloom and the inline-vs-generic comparison; then the
 * hash cost and notes. The CSV has one line per (n, subject) with every
 * measured number, for plotting elsewhere. docs/bench.md explains columns.
 */
#include <math.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "amq/amq.h"
#include "bench.h"

/* ---- small formatting helpers ------------------------------------------ */

/* Formats into one of a few rotating static buffers (one printf line). */
static const char *fmt(const char *f, double v) {
    static char bufs[16][32];
    static unsigned next;
    char *b = bufs[next++ % 16];
    if (isnan(v) || isinf(v))
        snprintf(b, 32, "—");
    else
        snprintf(b, 32, f, v);
    return b;
}

static double ratio(double a, double b) {
    return b > 0 && !isnan(a) && !isnan(b) ? a / b : NAN;
}

static const bench_row *find_row(const bench_results *r, uint64_t n,
                                 const char *label) {
    for (size_t i = 0; i < r->nrows; i++)
        if (r->rows[i].n == n && strcmp(r->rows[i].label, label) == 0)
            return r->rows[i].ok ? &r->rows[i] : NULL;
    return NULL;
}

static void read_line(const char *path, const char *prefix, char *out,
                      size_t cap) {
    char line[256];
    FILE *f = fopen(path, "r");
    snprintf(out, cap, "unknown");
    if (f == NULL)
        return;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, prefix, strlen(prefix)) != 0)
            continue;
        const char *v = strchr(line, ':');
        v = v ? v + 2 : line;
        snprintf(out, cap, "%.*s", (int)strcspn(v, "\n"), v);
        break;
    }
    fclose(f);
}

/* ---- header ------------------------------------------------------------ */

static void md_header(FILE *f, const bench_cfg *cfg, const bench_results *r) {
    char date[64], cpu[160], thp[160];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    read_line("/proc/cpuinfo", "model name", cpu, sizeof cpu);
    read_line("/sys/kernel/mm/transparent_hugepage/enabled", "", thp,
              sizeof thp);
    fprintf(f, "# amq benchmark\n\n");
    fprintf(f, "- date: %s; command: `%s`\n", date, cfg->command);
    fprintf(f, "- machine: %s, %ld online CPUs; transparent huge pages: %s\n",
            cpu, sysconf(_SC_NPROCESSORS_ONLN), thp);
    fprintf(f, "- amq %s; Debian libbloom %s\n", amq_version(),
            bench_libbloom_version());
    fprintf(f, "- target ε = %g; lower bound log2(1/ε) = %.2f bits/key\n",
            cfg->fpr, log2(1.0 / cfg->fpr));
    fprintf(f,
            "- keys: pre-hashed splitmix64 uint64 (hash cost excluded but "
            "in *neg bytes*: 16-byte keys through amq_filter_contains; "
            "see *Hash cost*); queries per kind: min(n, %zu); batch: %zu "
            "hashes per call\n",
            cfg->queries, cfg->batch);
    fprintf(f, "- memory probe: groups of %zu prefetched reads; %s\n",
            cfg->probe_group,
            cfg->probe_huge ? "arrays of 4 MB and more advised "
                              "MADV_HUGEPAGE, as amq advises its tables "
                              "(libbloom's table gets no such advice)"
                            : "base pages only (--probe-pages base)");
    fprintf(f,
            "- timings: %s over repetitions (queries and probe: %s; "
            "builds: %s); whole run %.0f s\n\n",
            bench_summary_is_min() ? "minimum" : "median",
            cfg->reps > 0 ? "--reps" : "5, or 3 at n >= 1e7",
            cfg->insert_reps > 0 ? "--insert-reps"
                                 : "as queries, but 1 at n >= 1e7",
            r->seconds);
}

/* ---- per-n tables ------------------------------------------------------ */

static void md_speed(FILE *f, const bench_results *r, uint64_t n) {
    fprintf(f, "### Speed (ns per key; build in ms)\n\n"
               "| structure | path | build ms | insert | pos scalar | "
               "pos batch | neg scalar | neg batch | neg bytes |\n"
               "|---|---|--:|--:|--:|--:|--:|--:|--:|\n");
    for (size_t i = 0; i < r->nrows; i++) {
        const bench_row *w = &r->rows[i];
        if (w->n != n || !w->ok)
            continue;
        fprintf(f, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", w->label,
                w->path, fmt("%.1f", w->build_ms), fmt("%.2f", w->insert_ns),
                fmt("%.2f", w->pos_scalar_ns), fmt("%.2f", w->pos_batch_ns),
                fmt("%.2f", w->neg_scalar_ns), fmt("%.2f", w->neg_batch_ns),
                fmt("%.2f", w->neg_bytes_ns));
    }
    fputc('\n', f);
}

/* Every query path over the probe timed beside it: what the targets are
 * set on (one-at-a-time paths against independent reads,
 * batches against batched reads), and the scalar path against pure
 * latency. */
static void md_probe_ratios(FILE *f, const bench_results *r, uint64_t n) {
    fprintf(f, "### Query paths ÷ memory probe (same run; each path over "
               "the probe reads timed right before it)\n\n"
               "| structure | path | pos scalar ÷ indep | neg scalar ÷ "
               "indep | neg bytes ÷ indep | pos batch ÷ batched | neg batch "
               "÷ batched | neg scalar ÷ dep |\n"
               "|---|---|--:|--:|--:|--:|--:|--:|\n");
    for (size_t i = 0; i < r->nrows; i++) {
        const bench_row *w = &r->rows[i];
        if (w->n != n || !w->ok)
            continue;
        const double *p = w->probe_at;
        fprintf(f, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", w->label,
                w->path,
                fmt("%.2f", ratio(w->pos_scalar_ns, p[BENCH_POS_SCALAR])),
                fmt("%.2f", ratio(w->neg_scalar_ns, p[BENCH_NEG_SCALAR])),
                fmt("%.2f", ratio(w->neg_bytes_ns, p[BENCH_NEG_BYTES])),
                fmt("%.2f", ratio(w->pos_batch_ns, p[BENCH_POS_BATCH])),
                fmt("%.2f", ratio(w->neg_batch_ns, p[BENCH_NEG_BATCH])),
                fmt("%.2f", ratio(w->neg_scalar_ns, w->probe.dep_ns)));
    }
    fputc('\n', f);
}

static void md_space(FILE *f, const bench_results *r, uint64_t n) {
    fprintf(f, "### Space and accuracy\n\n"
               "| structure | parameters | bytes | bits/key | "
               "÷ log2(1/ε) | FPR measured | FPR bound | "
               "log2(1/FPR measured) | false neg |\n"
               "|---|---|--:|--:|--:|--:|--:|--:|--:|\n");
    for (size_t i = 0; i < r->nrows; i++) {
        const bench_row *w = &r->rows[i];
        if (w->n != n || !w->ok)
            continue;
        double lb = log2(1.0 / w->fpr_target);
        fprintf(f, "| %s | `%s` | %zu | %s | %s | %s | %s | %s | %llu |\n",
                w->label, w->spec, w->bytes, fmt("%.2f", w->bits_per_key),
                fmt("%.2f", w->bits_per_key / lb), fmt("%.5f", w->fpr_meas),
                fmt("%.5f", w->fpr_bound),
                fmt("%.2f", w->fpr_meas > 0 ? log2(1 / w->fpr_meas) : NAN),
                (unsigned long long)w->false_neg);
    }
    fputc('\n', f);
}

/* The batch path against the scalar one and against the split-block
 * filter, space against the lower bound at the rate actually certified,
 * and build memory beyond the filter, all from this run. */
static void md_ratios(FILE *f, const bench_results *r, uint64_t n) {
    const bench_row *base = find_row(r, n, "sbbf");
    fprintf(f, "### Ratios (same run)\n\n"
               "| structure | neg batch ÷ sbbf neg batch | neg scalar ÷ "
               "neg batch | pos scalar ÷ pos batch | neg bytes − neg "
               "scalar (ns) | bits/key ÷ log2(1/bound) | build memory "
               "beyond the filter (MB) |\n"
               "|---|--:|--:|--:|--:|--:|--:|\n");
    for (size_t i = 0; i < r->nrows; i++) {
        const bench_row *w = &r->rows[i];
        if (w->n != n || !w->ok)
            continue;
        double lb = w->fpr_bound > 0 && w->fpr_bound < 1
                        ? log2(1.0 / w->fpr_bound)
                        : NAN;
        double extra =
            w->build_extra == SIZE_MAX ? NAN : (double)w->build_extra / 1e6;
        fprintf(f, "| %s | %s | %s | %s | %s | %s | %s |\n", w->label,
                fmt("%.2f",
                    base ? ratio(w->neg_batch_ns, base->neg_batch_ns) : NAN),
                fmt("%.2f", ratio(w->neg_scalar_ns, w->neg_batch_ns)),
                fmt("%.2f", ratio(w->pos_scalar_ns, w->pos_batch_ns)),
                fmt("%.2f", w->neg_bytes_ns - w->neg_scalar_ns),
                fmt("%.3f", ratio(w->bits_per_key, lb)), fmt("%.1f", extra));
    }
    fputc('\n', f);
}

static void md_probe(FILE *f, const bench_results *r, uint64_t n) {
    fprintf(f, "### Memory probe (random 64-byte reads in an array of the "
               "filter's size; ns per read)\n\n"
               "| structure | array bytes | batched (prefetch) | "
               "independent | dependent |\n|---|--:|--:|--:|--:|\n");
    for (size_t i = 0; i < r->nrows; i++) {
        const bench_row *w = &r->rows[i];
        if (w->n != n || !w->ok)
            continue;
        fprintf(f, "| %s | %zu | %s | %s | %s |\n", w->label, w->bytes,
                fmt("%.2f", w->probe.batch_ns), fmt("%.2f", w->probe.indep_ns),
                fmt("%.2f", w->probe.dep_ns));
    }
    fputc('\n', f);
}

static void md_peer_line(FILE *f, const char *what, double lb, double gen) {
    fprintf(f, "| %s | %s | %s | %s |\n", what, fmt("%.2f", lb),
            fmt("%.2f", gen), fmt("%.2f", ratio(lb, gen)));
}

static void md_peer(FILE *f, const bench_results *r, uint64_t n) {
    const bench_row *lb = find_row(r, n, "libbloom");
    const bench_row *g = find_row(r, n, "bloom");
    if (lb == NULL || g == NULL)
        return;
    fprintf(f, "### amq classic Bloom vs Debian libbloom (ns per key; "
               "speedup = libbloom ÷ amq; libbloom has no batch call, so "
               "its scalar time is the batch baseline)\n\n"
               "| metric | libbloom | amq bloom | speedup |\n"
               "|---|--:|--:|--:|\n");
    md_peer_line(f, "insert", lb->insert_ns, g->insert_ns);
    md_peer_line(f, "positive query, scalar", lb->pos_scalar_ns,
                 g->pos_scalar_ns);
    md_peer_line(f, "negative query, scalar", lb->neg_scalar_ns,
                 g->neg_scalar_ns);
    md_peer_line(f, "positive query, batch", lb->pos_scalar_ns,
                 g->pos_batch_ns);
    md_peer_line(f, "negative query, batch", lb->neg_scalar_ns,
                 g->neg_batch_ns);
    fprintf(f, "| bits/key | %s | %s | |\n", fmt("%.3f", lb->bits_per_key),
            fmt("%.3f", g->bits_per_key));
    fprintf(f, "| FPR measured | %s | %s | |\n\n", fmt("%.5f", lb->fpr_meas),
            fmt("%.5f", g->fpr_meas));
}

static void md_inline(FILE *f, const bench_results *r, uint64_t n) {
    bool any = false;
    for (size_t i = 0; i < r->nrows; i++) {
        const bench_row *t = &r->rows[i];
        if (t->n != n || !t->ok ||
            (strcmp(t->path, "inline") != 0 && strcmp(t->path, "values") != 0))
            continue;
        const bench_row *g = find_row(r, n, t->name);
        if (g == NULL)
            continue;
        if (!any)
            fprintf(f, "### Inline query objects vs generic interface "
                       "(speedup = generic ns ÷ inline ns)\n\n"
                       "| type | insert | pos scalar | neg scalar | "
                       "pos batch | neg batch |\n|---|--:|--:|--:|--:|--:|\n");
        any = true;
        fprintf(f, "| %s | %s | %s | %s | %s | %s |\n", t->label,
                fmt("%.2f", ratio(g->insert_ns, t->insert_ns)),
                fmt("%.2f", ratio(g->pos_scalar_ns, t->pos_scalar_ns)),
                fmt("%.2f", ratio(g->neg_scalar_ns, t->neg_scalar_ns)),
                fmt("%.2f", ratio(g->pos_batch_ns, t->pos_batch_ns)),
                fmt("%.2f", ratio(g->neg_batch_ns, t->neg_batch_ns)));
    }
    if (any)
        fputc('\n', f);
}

/* --threads: each builder-j row against the one-thread builder row of the
 * same spec, measured in the same run. */
static void md_threads(FILE *f, const bench_results *r, uint64_t n) {
    bool any = false;
    for (size_t i = 0; i < r->nrows; i++) {
        const bench_row *t = &r->rows[i];
        char label[sizeof t->label + 16];
        if (t->n != n || !t->ok || strcmp(t->path, "builder-j") != 0)
            continue;
        snprintf(label, sizeof label, "%s [builder j1]", t->name);
        const bench_row *one = find_row(r, n, label);
        if (one == NULL)
            continue;
        if (!any)
            fprintf(f, "### Threaded builds (amq_builder; speed-up = "
                       "one thread's build ms ÷ this row's)\n\n"
                       "| type | build ms, 1 thread | build ms | speed-up |\n"
                       "|---|--:|--:|--:|\n");
        any = true;
        fprintf(f, "| %s | %s | %s | %s |\n", t->label,
                fmt("%.1f", one->build_ms), fmt("%.1f", t->build_ms),
                fmt("%.2f", ratio(one->build_ms, t->build_ms)));
    }
    if (any)
        fputc('\n', f);
}

static void md_notes(FILE *f, const bench_results *r) {
    fprintf(f, "## Hash cost (amq_hash64 on 16-byte keys, in cache)\n\n"
               "| hash | ns/key |\n|---|--:|\n");
    for (size_t i = 0; i < r->nhash; i++)
        fprintf(f, "| %s | %s |\n", r->hash[i].kind,
                fmt("%.2f", r->hash[i].ns_per_key));
    fprintf(f, "\n## Notes\n\n");
    if (r->skipped[0])
        fprintf(f,
                "- frequency sketches (not membership filters) not benchmarked "
                "here: %s\n",
                r->skipped);
    for (size_t i = 0; i < r->nrows; i++) {
        const bench_row *w = &r->rows[i];
        char nb[32];
        bench_fmt_n(w->n, nb, sizeof nb);
        if (w->note[0])
            fprintf(f, "- n = %s, %s: %s\n", nb, w->label, w->note);
    }
    fprintf(f, "- query checksum (keeps the work alive): %llu\n",
            (unsigned long long)bench_sink_value());
}

void bench_write_markdown(FILE *f, const bench_cfg *cfg,
                          const bench_results *r) {
    md_header(f, cfg, r);
    for (size_t s = 0; s < cfg->nsizes; s++) {
        char nb[32];
        bench_fmt_n(cfg->sizes[s], nb, sizeof nb);
        fprintf(f, "## n = %s\n\n", nb);
        md_speed(f, r, cfg->sizes[s]);
        md_probe_ratios(f, r, cfg->sizes[s]);
        md_space(f, r, cfg->sizes[s]);
        md_ratios(f, r, cfg->sizes[s]);
        md_probe(f, r, cfg->sizes[s]);
        md_peer(f, r, cfg->sizes[s]);
        md_inline(f, r, cfg->sizes[s]);
        md_threads(f, r, cfg->sizes[s]);
    }
    md_notes(f, r);
}

/* ---- CSV --------------------------------------------------------------- */

static void csv_num(FILE *f, double v) {
    if (isnan(v) || isinf(v))
        fputs(",", f);
    else
        fprintf(f, ",%.6g", v);
}

void bench_write_csv(FILE *f, const bench_results *r) {
    fputs("n,structure,path,ok,spec,bytes,bits_per_key,lower_bound_bits,"
          "target_fpr,fpr_measured,fpr_bound,false_negatives,build_ms,"
          "insert_ns,pos_scalar_ns,pos_batch_ns,neg_scalar_ns,neg_batch_ns,"
          "neg_bytes_ns,probe_batch_ns,probe_indep_ns,probe_dep_ns,"
          "build_extra_bytes,reps,"
          "insert_reps,"
          "queries,note\n",
          f);
    for (size_t i = 0; i < r->nrows; i++) {
        const bench_row *w = &r->rows[i];
        fprintf(f, "%llu,%s,%s,%d,\"%s\",%zu", (unsigned long long)w->n,
                w->label, w->path, w->ok, w->spec, w->bytes);
        double v[] = {w->bits_per_key,
                      log2(1 / w->fpr_target),
                      w->fpr_target,
                      w->fpr_meas,
                      w->fpr_bound,
                      (double)w->false_neg,
                      w->build_ms,
                      w->insert_ns,
                      w->pos_scalar_ns,
                      w->pos_batch_ns,
                      w->neg_scalar_ns,
                      w->neg_batch_ns,
                      w->neg_bytes_ns,
                      w->probe.batch_ns,
                      w->probe.indep_ns,
                      w->probe.dep_ns,
                      w->build_extra == SIZE_MAX ? NAN
                                                 : (double)w->build_extra};
        for (size_t j = 0; j < sizeof v / sizeof v[0]; j++)
            csv_num(f, w->ok || j < 3 ? v[j] : NAN);
        fprintf(f, ",%d,%d,%zu,\"%s\"\n", w->reps, w->insert_reps, w->queries,
                w->note);
    }
}
