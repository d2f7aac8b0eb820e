/*
 * recommend.c — `amq recommend -n N --fpr E [--deletes] [--count]
 * [--static]`: which structure to build for a need, and why.
 *
 * Space comes from the library's own curves: amq_curve_bits(type, E) is the
 * bits per key a type needs for rate E (the curve every structure exports
 * for the allocation engine). Two things the curve does not say are found
 * by asking the library directly:
 *
 *   - fixed-width static types (xor8/16/32, fuse8/16/32) cannot be shaped
 *     by E: their rate is 2^-w whatever is asked. A small probe build at E
 *     either fails (the width cannot reach E: the type is out) or reports
 *     its certified bound; a bound well below E means the type spends the
 *     bits of that lower rate, which is what the table shows, and the
 *     command says which type meets E in fewer bits;
 *   - the parameter that sets a type's memory reads per query (k for the
 *     Bloom family, d for d-left, depth for Count-Min) is read from the
 *     resolved spec of a small filter built for E.
 *
 * Memory reads per query come from each structure's layout (see
 * docs/structures.md): one cache line for the blocked filters, the prefix
 * filter (its bin's or the spare's) and the quotient filters' block-local
 * lookup (maplets too), two buckets for cuckoo/vacuum, both blocks for
 * vqf, the morton filter's second block only when its overflow bit says
 * so, three slots for xor/fuse, one band of solution columns for Ribbon
 * (the static maplet's membership part is one), k bits for the classic
 * Bloom family. Random memory reads are what a query
 * of a filter larger than the cache costs, so "fastest" is the fewest
 * reads, ties broken by space; "smallest" is the fewest bits per key. The
 * recommendation is the smallest, and the fastest is named beside it when
 * it differs.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define PROBE_KEYS 2048

typedef cli_need rec_opts;

typedef struct rec_row {
    const amq_type_info *type;
    double bits;    /* bits per key it would really spend              */
    double eps;     /* rate it would really give (E unless fixed)      */
    unsigned reads; /* memory reads per query (upper end)              */
    char reads_text[32];
    bool fixed; /* a fixed-width type below E                      */
} rec_row;

/* Reads per query by layout; param names the spec key holding the count
 * for the types whose reads grow with it. */
typedef struct rec_access {
    const char *name;
    unsigned reads;
    const char *text;
    const char *param;
} rec_access;

static const rec_access access_table[] = {
    {"blocked", 1, "1", NULL},
    {"sbbf", 1, "1", NULL},
    {"qf", 2, "1-2", NULL},
    {"cqf", 2, "1-2", NULL},
    {"cuckoo", 2, "2", NULL},
    {"vacuum", 2, "2 (one chunk)", NULL},
    {"xor8", 3, "3", NULL},
    {"xor16", 3, "3", NULL},
    {"xor32", 3, "3", NULL},
    {"fuse8", 3, "3 (nearby)", NULL},
    {"fuse16", 3, "3 (nearby)", NULL},
    {"fuse32", 3, "3 (nearby)", NULL},
    {"ribbon", 2, "1-2", NULL},
    {"vqf", 2, "2", NULL},
    {"prefix", 1, "1", NULL},
    {"morton", 2, "1-2", NULL},
    {"maplet", 2, "1-2", NULL},
    {"smaplet", 2, "1-2", NULL},
    {"bloom", 0, NULL, "k"},
    {"partitioned", 0, NULL, "k"},
    {"counting", 0, NULL, "k"},
    {"spectral", 0, NULL, "k"},
    {"compressed", 0, NULL, "k"},
    {"scalable", 99, "k per stage", NULL},
    {"dleft", 0, NULL, "d"},
    {"cms", 0, NULL, "depth"},
};

enum {
    OPT_N = 1,
    OPT_FPR,
    OPT_DELETES,
    OPT_COUNTS,
    OPT_STATIC,
    OPT_QUIET,
    OPT_JSON
};

/* -q: only the name (for `amq build --type "$(amq recommend -q ...)"`). */
static bool name_only, json_out;

static const cli_opt rec_options[] = {
    {"capacity", 'n', true, OPT_N},
    {"fpr", 'e', true, OPT_FPR},
    {"deletes", 0, false, OPT_DELETES},
    {"counts", 0, false, OPT_COUNTS},
    {"count", 0, false, OPT_COUNTS},
    {"static", 0, false, OPT_STATIC},
    {"quiet", 'q', false, OPT_QUIET},
    {"json", 0, false, OPT_JSON},
    {NULL, 0, false, 0},
};

/* -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, rec_opts *o) {
    cli_args a;
    int id;
    bool ok = true;
    cli_args_init(&a, "recommend", argc, argv);
    while (ok && (id = cli_next(&a, rec_options)) != CLI_NEXT_END) {
        switch (id) {
        case CLI_NEXT_ERR: return CLI_EXIT_ERR;
        case CLI_OPT_HELP:
            return cli_help_print(stdout, "recommend") ? CLI_EXIT_OK
                                                       : CLI_EXIT_ERR;
        case CLI_NEXT_POS:
            return cli_usage_error("recommend", "unexpected argument '%s'",
                                   a.value);
        case OPT_N:
            ok = cli_parse_u64("recommend", "-n", a.value, &o->n);
            break;
        case OPT_FPR:
            ok = cli_parse_fpr("recommend", "--fpr", a.value, &o->fpr);
            break;
        case OPT_DELETES: o->deletes = true; break;
        case OPT_COUNTS: o->counts = true; break;
        case OPT_STATIC: o->allow_static = true; break;
        case OPT_QUIET: name_only = true; break;
        case OPT_JSON: json_out = true; break;
        default: break;
        }
    }
    if (!ok)
        return CLI_EXIT_ERR;
    if (o->n == 0)
        return cli_usage_error("recommend", "missing -n N (keys, at least 1)");
    if (o->fpr == 0.0)
        o->fpr = CLI_DEFAULT_FPR;
    return -1;
}

/* ---- facts about one type ------------------------------------------------------ */

static const rec_access *find_access(const char *name) {
    for (size_t i = 0; i < sizeof access_table / sizeof access_table[0]; i++)
        if (strcmp(access_table[i].name, name) == 0)
            return &access_table[i];
    return NULL;
}

/* The value of `key=` in a resolved spec ("bloom:m=9585059,k=7"). */
static unsigned spec_value(const char *spec, const char *key) {
    size_t kl = strlen(key);
    for (const char *p = strchr(spec, ':'); p != NULL; p = strchr(p, ',')) {
        p++;
        if (strncmp(p, key, kl) == 0 && p[kl] == '=')
            return (unsigned)strtoul(p + kl + 1, NULL, 10);
    }
    return 0;
}

/* Reads per query; for k-type structures from a small filter for E. */
static void fill_reads(rec_row *r, double fpr) {
    const rec_access *a = find_access(r->type->name);
    r->reads = 99;
    snprintf(r->reads_text, sizeof r->reads_text, "?");
    if (a == NULL)
        return;
    if (a->param == NULL) {
        r->reads = a->reads;
        snprintf(r->reads_text, sizeof r->reads_text, "%s", a->text);
        return;
    }
    amq_filter *f = NULL;
    if (amq_filter_new(r->type->name, 1000, fpr, NULL, &f, NULL) != AMQ_OK)
        return;
    char *d = cli_describe(f);
    unsigned v = d ? spec_value(d, a->param) : 0;
    if (v > 0) {
        r->reads = v;
        snprintf(r->reads_text, sizeof r->reads_text, "%s = %u", a->param, v);
    }
    free(d);
    amq_filter_free(f);
}

/* A static type built from PROBE_KEYS hashes at E: false when it cannot
 * reach E (why in *why); else its certified rate in *eps. */
static bool probe_static(const char *name, double fpr, double *eps, char *why,
                         size_t cap) {
    uint64_t *h = malloc(PROBE_KEYS * sizeof *h), s = 1;
    amq_filter *f = NULL;
    amq_diag diag;
    memset(&diag, 0, sizeof diag);
    *eps = fpr;
    if (h == NULL)
        return true;
    for (size_t i = 0; i < PROBE_KEYS; i++) {
        uint64_t z = (s += UINT64_C(0x9e3779b97f4a7c15));
        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        h[i] = z ^ (z >> 31);
    }
    amq_status st = amq_filter_build(name, h, PROBE_KEYS, fpr, NULL, &f, &diag);
    free(h);
    if (st == AMQ_ERR_INVALID) {
        snprintf(why, cap, "%s", diag.message);
        return false;
    }
    if (st == AMQ_OK)
        *eps = amq_filter_fpr_bound(f);
    amq_filter_free(f);
    return true;
}

/* Why the type is not a candidate for this need; NULL if it is. */
static const char *unfit(const rec_opts *o, const amq_type_info *t) {
    if (t->caps & AMQ_CAP_SKETCH)
        return "a frequency sketch, not a membership filter";
    if (t->caps & AMQ_CAP_FORGETS)
        return "forgets old keys (false negatives by design)";
    if (o->deletes && !(t->caps & AMQ_CAP_REMOVE))
        return "cannot remove keys";
    if (o->counts && !(t->caps & AMQ_CAP_COUNT))
        return "does not count";
    if (!o->allow_static && (t->caps & AMQ_CAP_STATIC))
        return "static: needs every key up front (--static)";
    return NULL;
}

/* Fill r for type t; false (with the reason written to log, if not NULL)
 * if it cannot meet E. */
static bool evaluate(const rec_opts *o, const amq_type_info *t, rec_row *r,
                     FILE *log) {
    char why[160] = "";
    memset(r, 0, sizeof *r);
    r->type = t;
    r->eps = o->fpr;
    if (amq_curve_bits(t->name, o->fpr, &r->bits) != AMQ_OK)
        return false;
    if (t->caps & AMQ_CAP_STATIC) {
        if (!probe_static(t->name, o->fpr, &r->eps, why, sizeof why)) {
            if (log != NULL)
                fprintf(log, "  %-12s cannot reach %g: %s\n", t->name, o->fpr,
                        why);
            return false;
        }
        /* Well below E: the width, not E, sets its size. */
        if (r->eps < o->fpr / 1.5 &&
            amq_curve_bits(t->name, r->eps, &r->bits) == AMQ_OK)
            r->fixed = true;
        else
            r->eps = o->fpr;
    }
    fill_reads(r, o->fpr);
    return true;
}

/* ---- output ------------------------------------------------------------------ */

static void print_bytes(double bytes) {
    static const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    while (bytes >= 1024.0 && u < 5) {
        bytes /= 1024.0;
        u++;
    }
    printf(u == 0 ? "%.0f %s" : "%.1f %s", bytes, unit[u]);
}

static int by_bits(const void *a, const void *b) {
    const rec_row *x = a, *y = b;
    return x->bits < y->bits ? -1 : x->bits > y->bits;
}

static void print_table(const rec_opts *o, const rec_row *rows, size_t n) {
    printf("\n| type | bits/key | memory for %llu keys | reads/query | "
           "note |\n|---|---:|---:|---|---|\n",
           (unsigned long long)o->n);
    for (size_t i = 0; i < n; i++) {
        const rec_row *r = &rows[i];
        printf("| %s | %.2f | ", r->type->name, r->bits);
        print_bytes(r->bits * (double)o->n / 8.0);
        printf(" | %s | ", r->reads_text);
        if (r->fixed)
            printf("fixed width: gives %.3g whatever --fpr asks", r->eps);
        printf(" |\n");
    }
}

static const rec_row *fastest(const rec_row *rows, size_t n) {
    const rec_row *best = NULL;
    for (size_t i = 0; i < n; i++)
        if (best == NULL || rows[i].reads < best->reads)
            best = &rows[i]; /* rows are by bits: ties keep the smaller */
    return best;
}

static void print_verdict(const rec_opts *o, const rec_row *rows, size_t n) {
    const rec_row *small = &rows[0], *fast = fastest(rows, n);
    printf("\nrecommended: %s — the smallest that meets %g for %s: %.2f "
           "bits/key (the bound log2(1/eps) is %.2f), %s memory reads per "
           "query.\n",
           small->type->name, o->fpr,
           o->deletes ? "adds and deletes" : "this need", small->bits,
           log2(1.0 / o->fpr), small->reads_text);
    if (fast != small)
        printf("fastest: %s — %s memory read%s per query for %.2f "
               "bits/key (%+.0f%% memory).\n",
               fast->type->name, fast->reads_text, fast->reads == 1 ? "" : "s",
               fast->bits, 100.0 * (fast->bits / small->bits - 1.0));
    const char *sep = "note: fixed-width types give their own rate, not "
                      "--fpr:";
    for (size_t i = 0; i < n; i++)
        if (rows[i].fixed && &rows[i] != small) {
            printf("%s %s %.3g in %.2f bits/key", sep, rows[i].type->name,
                   rows[i].eps, rows[i].bits);
            sep = ",";
        }
    if (*sep == ',')
        printf("; %s meets %g in %.2f.\n", small->type->name, o->fpr,
               small->bits);
    printf("build it with: amq build --type %s --fpr %g -o FILE KEYFILE\n",
           small->type->name, o->fpr);
}

/* Every type fit for the need, smallest first (*n of them; NULL with *n
 * = 0 when out of memory). The others go to log with the reason. */
static rec_row *rank(const rec_opts *o, FILE *log, size_t *n) {
    size_t nt = amq_filter_type_count();
    rec_row *rows = calloc(nt ? nt : 1, sizeof *rows);
    *n = 0;
    if (rows == NULL)
        return NULL;
    for (size_t i = 0; i < nt; i++) {
        const amq_type_info *t = amq_filter_type_at(i);
        const char *why = t ? unfit(o, t) : "?";
        if (why != NULL && log != NULL)
            fprintf(log, "  %-12s %s\n", t ? t->name : "?", why);
        else if (why == NULL && evaluate(o, t, &rows[*n], log))
            (*n)++;
    }
    qsort(rows, *n, sizeof *rows, by_bits);
    return rows;
}

const char *cli_recommend_type(const cli_need *need, FILE *why) {
    size_t n;
    rec_row *rows = rank(need, NULL, &n);
    const char *name = n > 0 ? rows[0].type->name : NULL;
    if (name != NULL && why != NULL)
        fprintf(why,
                "amq: --type auto: %s, the smallest type that %s"
                "meets %g%s%s: %.2f bits/key, %s memory reads per query "
                "(amq recommend shows the others)\n",
                name, need->allow_static ? "" : "takes keys one by one and ",
                need->fpr, need->deletes ? " with deletes" : "",
                need->counts ? " and counts" : "", rows[0].bits,
                rows[0].reads_text);
    free(rows);
    return name;
}

/* The need, the candidates smallest first, the others with the reason,
 * and the two picks. */
static int print_json(const rec_opts *o) {
    size_t n;
    rec_row *rows = rank(o, NULL, &n);
    if (rows == NULL || n == 0) {
        free(rows);
        cli_error(rows == NULL ? "out of memory" : "no type meets this need");
        return CLI_EXIT_ERR;
    }
    cli_json j;
    cli_json_init(&j, stdout, true);
    cli_json_open(&j, NULL, '{');
    cli_json_open(&j, "need", '{');
    cli_json_u64(&j, "keys", o->n);
    cli_json_num(&j, "fpr", o->fpr);
    cli_json_bool(&j, "deletes", o->deletes);
    cli_json_bool(&j, "counts", o->counts);
    cli_json_bool(&j, "static", o->allow_static);
    cli_json_close(&j);
    cli_json_str(&j, "recommended", rows[0].type->name);
    cli_json_str(&j, "fastest", fastest(rows, n)->type->name);
    cli_json_open(&j, "types", '[');
    for (size_t i = 0; i < n; i++) {
        cli_json_open(&j, NULL, '{');
        cli_json_str(&j, "type", rows[i].type->name);
        cli_json_num(&j, "bits_per_key", rows[i].bits);
        cli_json_num(&j, "bytes", rows[i].bits * (double)o->n / 8.0);
        cli_json_str(&j, "reads_per_query", rows[i].reads_text);
        cli_json_num(&j, "fpr", rows[i].eps);
        cli_json_bool(&j, "fixed_width", rows[i].fixed);
        cli_json_close(&j);
    }
    cli_json_close(&j);
    cli_json_open(&j, "not_considered", '[');
    for (size_t i = 0; i < amq_filter_type_count(); i++) {
        const amq_type_info *t = amq_filter_type_at(i);
        const char *why = unfit(o, t);
        if (why == NULL)
            continue;
        cli_json_open(&j, NULL, '{');
        cli_json_str(&j, "type", t->name);
        cli_json_str(&j, "why", why);
        cli_json_close(&j);
    }
    cli_json_close(&j);
    cli_json_close(&j);
    free(rows);
    return CLI_EXIT_OK;
}

int cli_cmd_recommend(int argc, char **argv) {
    rec_opts o;
    memset(&o, 0, sizeof o);
    int rc = parse_args(argc, argv, &o);
    if (rc >= 0)
        return rc;
    if (json_out)
        return print_json(&o);
    if (name_only) {
        const char *name = cli_recommend_type(&o, NULL);
        if (name == NULL)
            cli_error("no type meets this need");
        else
            printf("%s\n", name);
        return name ? CLI_EXIT_OK : CLI_EXIT_ERR;
    }
    printf("need: %llu keys, fpr %g%s%s%s\n\nnot considered:\n",
           (unsigned long long)o.n, o.fpr, o.deletes ? ", deletes" : "",
           o.counts ? ", counts" : "",
           o.allow_static ? ", all keys known up front" : "");
    size_t n;
    rec_row *rows = rank(&o, stdout, &n);
    if (n == 0) {
        free(rows);
        cli_error(rows == NULL ? "out of memory" : "no type meets this need");
        return CLI_EXIT_ERR;
    }
    print_table(&o, rows, n);
    print_verdict(&o, rows, n);
    free(rows);
    return CLI_EXIT_OK;
}
