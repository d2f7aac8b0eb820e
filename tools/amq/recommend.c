/*
 * recommend.c — `amq recommend -n N --fpr E [--deletes] [--count]
 * [--static]`: which structure to build for a need, and why.
 *
 * The library ranks (amq_recommend, amq/recommend.h): every type that
 * meets the need with the bits per key it would really spend, the rate it
 * would really give (a fixed-width static type well below E gives its own)
 * and its memory reads per query, smallest first. This file prints that:
 * the types left out and why (from their capabilities, or for a static
 * type that cannot reach E the library's own reason, from a build at E
 * without keys), the table, and the verdict. Random memory reads are what
 * a query of a filter larger than the cache costs, so "fastest" is the
 * fewest reads, ties broken by space; "smallest" is the fewest bits per
 * key. The recommendation is the smallest, and the fastest is named beside
 * it when it differs. cli_recommend_type is the same pick for `amq build
 * --type auto`.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "verbs.h"

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
static int parse_args(int argc, char **argv, amq_need *o) {
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

/* ---- why a type is left out ---------------------------------------------------- */

/* Why the type is not a candidate for this need by its capabilities (the
 * ones amq_recommend checks); NULL if it is. */
static const char *unfit(const amq_need *o, const amq_type_info *t) {
    if (t->caps & AMQ_CAP_SKETCH)
        return "a frequency sketch, not a membership filter";
    if (t->caps & AMQ_CAP_FORGETS)
        return "forgets old keys (false negatives by design)";
    if (t->caps & AMQ_CAP_RANGE)
        return "a range filter: keys in order, not hashed (amq range)";
    if (t->caps & AMQ_CAP_ADAPT)
        return "adaptive: keeps every member's hash beside the filter "
               "(amq adapt)";
    if (t->caps & AMQ_CAP_GROW)
        return "grows when full, for an unknown n (a full qf becomes one "
               "under amq add)";
    if (o->deletes && !(t->caps & AMQ_CAP_REMOVE))
        return "cannot remove keys";
    if (o->counts && !(t->caps & AMQ_CAP_COUNT))
        return "does not count";
    if (!o->allow_static && (t->caps & AMQ_CAP_STATIC))
        return "static: needs every key up front (--static)";
    return NULL;
}

static bool listed(const amq_choice *rows, size_t n, const amq_type_info *t) {
    for (size_t i = 0; i < n; i++)
        if (rows[i].type == t)
            return true;
    return false;
}

/* A static type that fits but was not ranked cannot reach E: the library
 * says why when asked to build it at E. */
static void print_unreached(const amq_need *o, const amq_type_info *t) {
    amq_filter *f = NULL;
    amq_diag diag;
    double bits;
    memset(&diag, 0, sizeof diag);
    if (!(t->caps & AMQ_CAP_STATIC) ||
        amq_curve_bits(t->name, o->fpr, &bits) != AMQ_OK)
        return;
    if (amq_filter_build(t->name, NULL, 0, o->fpr, NULL, &f, &diag) == AMQ_OK ||
        diag.message[0] == 0)
        printf("  %-12s cannot reach %g\n", t->name, o->fpr);
    else
        printf("  %-12s cannot reach %g: %s\n", t->name, o->fpr, diag.message);
    amq_filter_free(f);
}

/* Every type not in rows, in the registry's order, with the reason. */
static void print_left_out(const amq_need *o, const amq_choice *rows,
                           size_t n) {
    for (size_t i = 0; i < amq_filter_type_count(); i++) {
        const amq_type_info *t = amq_filter_type_at(i);
        const char *why = unfit(o, t);
        if (why != NULL)
            printf("  %-12s %s\n", t->name, why);
        else if (!listed(rows, n, t))
            print_unreached(o, t);
    }
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

static void print_table(const amq_need *o, const amq_choice *rows, size_t n) {
    printf("\n| type | bits/key | memory for %llu keys | reads/query | "
           "note |\n|---|---:|---:|---|---|\n",
           (unsigned long long)o->n);
    for (size_t i = 0; i < n; i++) {
        const amq_choice *r = &rows[i];
        printf("| %s | %.2f | ", r->type->name, r->bits_per_key);
        print_bytes(r->bits_per_key * (double)o->n / 8.0);
        printf(" | %s | ", r->reads_text);
        if (r->fixed)
            printf("fixed width: gives %.3g whatever --fpr asks", r->fpr);
        printf(" |\n");
    }
}

static const amq_choice *fastest(const amq_choice *rows, size_t n) {
    const amq_choice *best = NULL;
    for (size_t i = 0; i < n; i++)
        if (best == NULL || rows[i].reads < best->reads)
            best = &rows[i]; /* rows are by bits: ties keep the smaller */
    return best;
}

static void print_verdict(const amq_need *o, const amq_choice *rows, size_t n) {
    const amq_choice *small = &rows[0], *fast = fastest(rows, n);
    printf("\nrecommended: %s — the smallest that meets %g for %s: %.2f "
           "bits/key (the bound log2(1/eps) is %.2f), %s memory reads per "
           "query.\n",
           small->type->name, o->fpr,
           o->deletes ? "adds and deletes" : "this need", small->bits_per_key,
           log2(1.0 / o->fpr), small->reads_text);
    if (fast != small)
        printf("fastest: %s — %s memory read%s per query for %.2f "
               "bits/key (%+.0f%% memory).\n",
               fast->type->name, fast->reads_text, fast->reads == 1 ? "" : "s",
               fast->bits_per_key,
               100.0 * (fast->bits_per_key / small->bits_per_key - 1.0));
    const char *sep = "note: fixed-width types give their own rate, not "
                      "--fpr:";
    for (size_t i = 0; i < n; i++)
        if (rows[i].fixed && &rows[i] != small) {
            printf("%s %s %.3g in %.2f bits/key", sep, rows[i].type->name,
                   rows[i].fpr, rows[i].bits_per_key);
            sep = ",";
        }
    if (*sep == ',')
        printf("; %s meets %g in %.2f.\n", small->type->name, o->fpr,
               small->bits_per_key);
    printf("build it with: amq build --type %s --fpr %g -o FILE KEYFILE\n",
           small->type->name, o->fpr);
}

/* Every type fit for the need, smallest first (*n of them), in a buffer
 * the caller frees; NULL after printing an error, or when none fits
 * (*n = 0: the caller says so once it has printed the others). */
static amq_choice *rank(const amq_need *o, size_t *n) {
    size_t cap = amq_filter_type_count();
    amq_choice *rows = calloc(cap ? cap : 1, sizeof *rows);
    amq_status st = rows ? amq_recommend(o, rows, cap, n) : AMQ_ERR_NOMEM;
    if (st != AMQ_OK) {
        free(rows);
        *n = 0;
        cli_error("%s",
                  st == AMQ_ERR_NOMEM ? "out of memory" : amq_strerror(st));
        return NULL;
    }
    return rows;
}

const char *cli_recommend_type(const amq_need *need, FILE *why) {
    amq_need known = *need;
    amq_choice top;
    size_t n = 0;
    /* The ranking does not depend on n (amq/recommend.h): keys not yet
     * counted are asked for as one. */
    if (known.n == 0)
        known.n = 1;
    if (amq_recommend(&known, &top, 1, &n) != AMQ_OK || n == 0)
        return NULL;
    if (why != NULL)
        fprintf(why,
                "amq: --type auto: %s, the smallest type that %s"
                "meets %g%s%s: %.2f bits/key, %s memory reads per query "
                "(amq recommend shows the others)\n",
                top.type->name,
                need->allow_static ? "" : "takes keys one by one and ",
                need->fpr, need->deletes ? " with deletes" : "",
                need->counts ? " and counts" : "", top.bits_per_key,
                top.reads_text);
    return top.type->name;
}

/* The need, the candidates smallest first, the others with the reason,
 * and the two picks. */
static int print_json(const amq_need *o) {
    size_t n;
    amq_choice *rows = rank(o, &n);
    if (rows == NULL || n == 0) {
        if (rows != NULL)
            cli_error("no type meets this need");
        free(rows);
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
        cli_json_num(&j, "bits_per_key", rows[i].bits_per_key);
        cli_json_num(&j, "bytes", rows[i].bits_per_key * (double)o->n / 8.0);
        cli_json_str(&j, "reads_per_query", rows[i].reads_text);
        cli_json_num(&j, "fpr", rows[i].fpr);
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
    amq_need o;
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
    amq_choice *rows = rank(&o, &n);
    if (rows == NULL)
        return CLI_EXIT_ERR;
    print_left_out(&o, rows, n);
    if (n == 0) {
        free(rows);
        cli_error("no type meets this need");
        return CLI_EXIT_ERR;
    }
    print_table(&o, rows, n);
    print_verdict(&o, rows, n);
    free(rows);
    return CLI_EXIT_OK;
}
