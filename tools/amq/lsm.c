/*
 * lsm.c — `amq lsm plan`: how many bits each run's filter gets (Monkey),
 * on the model e^(-c b) or a structure type's real curve, against the
 * same bits everywhere (the options it shares with `amq-lab lsm
 * simulate`: tools/common/lsm_args.c).
 *
 * The tree comes from a CSV file (name,keys,lookups; docs/lsm.md) or is
 * generated: L levels with size ratio T holding N keys, lookups from a
 * workload spec. Every run gets a pick from the allocation engine: the
 * spec to build and the rate to ask for (amq_filter_new(spec, keys, fpr)).
 * Bad input names the line and byte and exits 2 with nothing printed on
 * stdout.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lsm_args.h"
#include "verbs.h"

/* ---- plan ---------------------------------------------------------------- */

enum {
    O_CSV = 1,
    O_LEVELS,
    O_RATIO,
    O_KEYS,
    O_BPK,
    O_WORKLOAD,
    O_CURVE,
    O_C,
    O_JSON
};

static const cli_opt plan_options[] = {
    {"csv", 0, true, O_CSV},
    {"levels", 'L', true, O_LEVELS},
    {"ratio", 'T', true, O_RATIO},
    {"keys", 'n', true, O_KEYS},
    {"bits-per-key", 'B', true, O_BPK},
    {"workload", 'w', true, O_WORKLOAD},
    {"curve", 0, true, O_CURVE},
    {"c", 0, true, O_C},
    {"json", 0, false, O_JSON},
    {"help", 'h', false, CLI_OPT_HELP},
    {NULL, 0, false, 0},
};

typedef struct plan_opts {
    const char *csv, *workload, *curve;
    double levels, ratio, keys, bpk, c;
    bool json, generated;
} plan_opts;

/* 1 handled, -1 error (reported). */
static int plan_option(int id, const char *v, plan_opts *o) {
    bool ok = true;
    switch (id) {
    case O_CSV: o->csv = v; break;
    case O_LEVELS:
        o->generated = true;
        ok = lsm_parse_double("levels", v, 1, 64, &o->levels);
        if (ok && o->levels != floor(o->levels)) {
            cli_usage_error(LSM_CMD, "--levels wants an integer");
            ok = false;
        }
        break;
    case O_RATIO:
        o->generated = true;
        ok = lsm_parse_double("ratio", v, 1, 1e6, &o->ratio);
        break;
    case O_KEYS:
        o->generated = true;
        ok = lsm_parse_double("keys", v, 1, 1e18, &o->keys);
        break;
    case O_BPK:
        ok = lsm_parse_double("bits-per-key", v, 0, 1e6, &o->bpk);
        break;
    case O_WORKLOAD:
        o->generated = true;
        o->workload = v;
        break;
    case O_CURVE: o->curve = v; break;
    case O_C: ok = lsm_parse_double("c", v, 1e-6, 100, &o->c); break;
    case O_JSON: o->json = true; break;
    }
    return ok ? 1 : -1;
}

/* 0 parsed, 1 help printed, -1 error (reported). */
static int parse_plan(int argc, char **argv, plan_opts *o) {
    cli_args a;
    *o = (plan_opts){.workload = "uniform",
                     .curve = "bloom",
                     .levels = 5,
                     .ratio = 10,
                     .keys = 1e6,
                     .bpk = NAN,
                     .c = AMQ_ALLOC_BLOOM_C};
    cli_args_init(&a, LSM_CMD, argc, argv);
    for (int id; (id = cli_next(&a, plan_options)) != CLI_NEXT_END;) {
        if (id == CLI_NEXT_ERR)
            return -1;
        if (id == CLI_OPT_HELP)
            return cli_help_print(stdout, LSM_CMD) ? 1 : -1;
        if (id == CLI_NEXT_POS) {
            cli_usage_error(LSM_CMD, "plan: unexpected argument '%s'", a.value);
            return -1;
        }
        if (plan_option(id, a.value, o) < 0)
            return -1;
    }
    if (isnan(o->bpk)) {
        cli_usage_error(LSM_CMD, "plan: --bits-per-key is required");
        return -1;
    }
    if (o->csv != NULL && o->generated) {
        cli_usage_error(LSM_CMD, "plan: --csv takes its runs and lookups "
                                 "from the file; drop --levels, --ratio, "
                                 "--keys and --workload");
        return -1;
    }
    return 0;
}

/* A leveled tree with a workload; false after printing an error. */
static bool lsm_tree(unsigned levels, double ratio, double keys,
                     const char *workload, amq_lsm_run *runs) {
    amq_diag d = {0};
    if (amq_lsm_levels(levels, ratio, keys, runs) != AMQ_OK) {
        cli_usage_error(LSM_CMD, "--levels 1..64, --ratio > 1, --keys > 0");
        return false;
    }
    amq_status st = amq_lsm_workload(workload, runs, levels, &d);
    if (st != AMQ_OK) {
        lsm_option_error("workload", workload, st, &d);
        return false;
    }
    return true;
}

/* Runs from the CSV file, into a malloc'ed array. */
static amq_lsm_run *read_csv(const char *path, size_t *count) {
    uint8_t *text = NULL;
    size_t len = 0, cap = 0;
    amq_diag d = {0};
    amq_lsm_run *runs = NULL;
    if (!cli_read_file(path, &text, &len))
        return NULL;
    amq_status st =
        amq_lsm_parse_csv((const char *)text, len, NULL, 0, &cap, &d);
    if (st == AMQ_ERR_BUFFER) {
        runs = calloc(cap, sizeof *runs);
        st = runs ? amq_lsm_parse_csv((const char *)text, len, runs, cap, count,
                                      &d)
                  : AMQ_ERR_NOMEM;
    }
    free(text);
    if (st != AMQ_OK) {
        if (d.message[0])
            cli_error("%s: %.*s (byte %zu)",
                      strcmp(path, "-") ? path : "<stdin>",
                      (int)sizeof d.message, d.message, d.offset);
        else
            cli_error("%s: %s", path, amq_strerror(st));
        free(runs);
        return NULL;
    }
    return runs;
}

static void print_plan_text(const plan_opts *o, const amq_lsm_run *r, size_t n,
                            const amq_alloc_pick *opt,
                            const amq_alloc_pick *uni,
                            const amq_lsm_totals *t) {
    double keys = 0, w = 0;
    for (size_t i = 0; i < n; i++)
        keys += r[i].keys, w += r[i].lookups;
    printf("LSM filter plan: %zu runs, %.0f keys, %g bits/key (%.0f bits), "
           "curve %s\n\n",
           n, keys, o->bpk, t->memory_bits, o->curve);
    printf("| run | keys | lookups | uniform bits/key | uniform fpr | "
           "optimal bits/key | spec | optimal fpr |\n"
           "|---|---:|---:|---:|---:|---:|---|---:|\n");
    for (size_t i = 0; i < n; i++)
        printf("| %s | %.0f | %.4g | %.3f | %.4g | %.3f | %s | %.4g |\n",
               r[i].name, r[i].keys, r[i].lookups / w, uni[i].bits_per_key,
               uni[i].fpr, opt[i].bits_per_key,
               opt[i].spec[0] ? opt[i].spec : "(none)", opt[i].fpr);
    printf("\nexpected false-positive reads per lookup (sum lookups x fpr):\n"
           "  uniform %.6g, optimal %.6g (%.2f%% fewer); memory used %.0f "
           "bits; KKT residual %.1e\n",
           t->cost_uniform, t->cost_optimal,
           t->cost_uniform > 0 ? 100 * (1 - t->cost_optimal / t->cost_uniform)
                               : 0.0,
           t->optimal.memory_bits, t->optimal.kkt_residual);
}

static void print_pick_json(cli_json *j, const char *prefix,
                            const amq_alloc_pick *p) {
    char key[40];
    snprintf(key, sizeof key, "%sbits_per_key", prefix);
    cli_json_num(j, key, p->bits_per_key);
    snprintf(key, sizeof key, "%sspec", prefix);
    cli_json_str(j, key, p->spec);
    snprintf(key, sizeof key, "%sfpr", prefix);
    cli_json_num(j, key, p->fpr);
}

static void print_plan_json(const plan_opts *o, const amq_lsm_run *r, size_t n,
                            const amq_alloc_pick *opt,
                            const amq_alloc_pick *uni,
                            const amq_lsm_totals *t) {
    cli_json j;
    cli_json_init(&j, stdout, false);
    cli_json_open(&j, NULL, '{');
    cli_json_str(&j, "curve", o->curve);
    cli_json_num(&j, "bits_per_key", o->bpk);
    cli_json_num(&j, "memory_bits", t->memory_bits);
    cli_json_num(&j, "memory_used_bits", t->optimal.memory_bits);
    cli_json_num(&j, "cost_uniform", t->cost_uniform);
    cli_json_num(&j, "cost_optimal", t->cost_optimal);
    cli_json_num(&j, "kkt_residual", t->optimal.kkt_residual);
    cli_json_open(&j, "runs", '[');
    for (size_t i = 0; i < n; i++) {
        cli_json_open(&j, NULL, '{');
        cli_json_str(&j, "name", r[i].name);
        cli_json_num(&j, "keys", r[i].keys);
        cli_json_num(&j, "lookups", r[i].lookups);
        print_pick_json(&j, "", &opt[i]);
        print_pick_json(&j, "uniform_", &uni[i]);
        cli_json_close(&j);
    }
    cli_json_close(&j);
    cli_json_close(&j);
}

static int plan(int argc, char **argv) {
    plan_opts o;
    amq_lsm_run *runs = NULL;
    size_t n = 0;
    int rc = CLI_EXIT_ERR, parsed = parse_plan(argc, argv, &o);
    if (parsed != 0)
        return parsed > 0 ? CLI_EXIT_OK : CLI_EXIT_ERR;
    if (o.csv != NULL) {
        runs = read_csv(o.csv, &n);
    } else {
        n = (size_t)o.levels;
        runs = calloc(n, sizeof *runs);
        if (runs && !lsm_tree((unsigned)n, o.ratio, o.keys, o.workload, runs))
            free(runs), runs = NULL;
    }
    amq_alloc_curve *curve = runs ? lsm_curve(o.curve, o.c) : NULL;
    amq_alloc_pick *opt = calloc(n ? n : 1, sizeof *opt);
    amq_alloc_pick *uni = calloc(n ? n : 1, sizeof *uni);
    amq_lsm_totals t;
    if (curve != NULL && opt != NULL && uni != NULL) {
        amq_status st = amq_lsm_plan(runs, n, curve, o.bpk, NULL, opt, uni, &t);
        if (st != AMQ_OK) {
            cli_status_error("plan", st, NULL);
        } else {
            if (o.json)
                print_plan_json(&o, runs, n, opt, uni, &t);
            else
                print_plan_text(&o, runs, n, opt, uni, &t);
            rc = CLI_EXIT_OK;
        }
    }
    amq_alloc_curve_free(curve);
    free(opt);
    free(uni);
    free(runs);
    return rc;
}

int cli_cmd_lsm(int argc, char **argv) {
    static const cli_command subs[] = {{"plan", plan}, {NULL, NULL}};
    return cli_dispatch(LSM_CMD, subs, argc, argv);
}
