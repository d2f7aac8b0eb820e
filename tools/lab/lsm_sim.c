/*
 * lsm_sim.c — `amq-lab lsm simulate --law LAW`: the paper's laws with the
 * paper's setups (docs/lsm.md), each printed as a markdown table of the
 * closed form against the simulation, optionally as JSON and an SVG plot.
 *
 *   h0          L = 5, T = 10, 8 bits/key, level weights 100,50,10,2,1:
 *               uniform against Monkey
 *   loglaw      50 equal runs, Dirichlet(0.3) hotness, 8 bits/key
 *   robustness  64 segments, 10 bits/key, Zipf 0.9, 600 log-normal
 *               misestimates (and a second sweep with larger errors)
 *   frontier    64 segments, 10 bits/key, compaction every 30 steps,
 *               1500 steps, 18 drift levels sigma in [0.01, 1.2]
 *   curves      each type's measured curve: effective exponent over
 *               2..20 bits/key, and what planning on it gains over
 *               planning on the model, plus the static laws on it
 *
 * Every law runs on --curve (default: the model e^(-c b)); the library
 * (src/lsm) does the numbers, this file only prints them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lab.h"
#include "lsm_args.h"
#include "plot.h"

#define PAPER_UNIFORM 0.021416 /* H0 in the paper's repository */
#define PAPER_MONKEY 0.000206
#define MAX_SIGMAS 64
#define MAX_TYPES 16

enum {
    O_LAW = 1,
    O_CURVE,
    O_C,
    O_SEED,
    O_SVG,
    O_JSON,
    O_QUICK,
    O_LEVELS,
    O_RATIO,
    O_KEYS,
    O_BPK,
    O_WEIGHTS,
    O_RUNS,
    O_ALPHA,
    O_SEGMENTS,
    O_SKEW,
    O_DRAWS,
    O_SCALE,
    O_EPOCH,
    O_STEPS,
    O_WARMUP,
    O_THETA,
    O_SIGMAS,
    O_DRIFT,
    O_TYPES,
    O_RANGE,
    O_QUERIES,
    O_BUILD
};

static const cli_opt sim_options[] = {
    {"law", 'l', true, O_LAW},
    {"curve", 0, true, O_CURVE},
    {"c", 0, true, O_C},
    {"seed", 's', true, O_SEED},
    {"svg", 0, true, O_SVG},
    {"json", 0, false, O_JSON},
    {"quick", 0, false, O_QUICK},
    {"levels", 'L', true, O_LEVELS},
    {"ratio", 'T', true, O_RATIO},
    {"keys", 'n', true, O_KEYS},
    {"bits-per-key", 'B', true, O_BPK},
    {"weights", 'w', true, O_WEIGHTS},
    {"runs", 0, true, O_RUNS},
    {"alpha", 0, true, O_ALPHA},
    {"segments", 0, true, O_SEGMENTS},
    {"skew", 0, true, O_SKEW},
    {"draws", 0, true, O_DRAWS},
    {"scale", 0, true, O_SCALE},
    {"epoch", 0, true, O_EPOCH},
    {"steps", 0, true, O_STEPS},
    {"warmup", 0, true, O_WARMUP},
    {"theta", 0, true, O_THETA},
    {"sigmas", 0, true, O_SIGMAS},
    {"drift", 0, true, O_DRIFT},
    {"types", 0, true, O_TYPES},
    {"range", 0, true, O_RANGE},
    {"queries", 0, true, O_QUERIES},
    {"build-keys", 0, true, O_BUILD},
    {"help", 'h', false, CLI_OPT_HELP},
    {NULL, 0, false, 0},
};

typedef struct sim_opts {
    const char *law, *curve, *svg, *weights, *types;
    double c, seed, bpk, levels, ratio, keys, runs, alpha, segments, skew;
    double draws, epoch, steps, warmup, theta, queries, build;
    double scale[2], sigmas[3], range[3];
    amq_lsm_drift_kind drift;
    bool json, quick, seed_set;
} sim_opts;

static void defaults(sim_opts *o) {
    *o = (sim_opts){.curve = "model",
                    .c = AMQ_ALLOC_BLOOM_C,
                    .bpk = NAN,
                    .levels = 5,
                    .ratio = 10,
                    .keys = 1e6,
                    .weights = "100,50,10,2,1",
                    .runs = 50,
                    .alpha = 0.3,
                    .segments = 64,
                    .skew = 0.9,
                    .draws = 600,
                    .epoch = 30,
                    .steps = 1500,
                    .warmup = 100,
                    .theta = 0.03,
                    .types = "bloom,blocked,sbbf,ribbon,fuse,xor,cuckoo,qf",
                    .queries = 1e7,
                    .build = 1e6,
                    .scale = {0.02, 0.25},
                    .sigmas = {0.01, 1.2, 18},
                    .range = {2, 20, 1}};
}

/* A number option with its range: `--NAME` into *dst. */
typedef struct num_opt {
    int id;
    const char *name;
    double lo, hi;
    size_t offset;
} num_opt;

#define NUM(id, name, lo, hi, field)                                           \
    { id, name, lo, hi, offsetof(sim_opts, field) }
static const num_opt numbers[] = {
    NUM(O_C, "c", 1e-6, 100, c),
    NUM(O_SEED, "seed", 0, 9007199254740992.0, seed),
    NUM(O_LEVELS, "levels", 1, 64, levels),
    NUM(O_RATIO, "ratio", 1, 1e6, ratio),
    NUM(O_KEYS, "keys", 1, 1e18, keys),
    NUM(O_BPK, "bits-per-key", 0, 1e4, bpk),
    NUM(O_RUNS, "runs", 2, 1e6, runs),
    NUM(O_ALPHA, "alpha", 1e-6, 1e6, alpha),
    NUM(O_SEGMENTS, "segments", 2, 1e6, segments),
    NUM(O_SKEW, "skew", 0, 100, skew),
    NUM(O_DRAWS, "draws", 2, 1e7, draws),
    NUM(O_EPOCH, "epoch", 1, 1e7, epoch),
    NUM(O_STEPS, "steps", 2, 1e8, steps),
    NUM(O_WARMUP, "warmup", 0, 1e8, warmup),
    NUM(O_THETA, "theta", 0, 0.999, theta),
    NUM(O_QUERIES, "queries", 1, 1e12, queries),
    NUM(O_BUILD, "build-keys", 1, 1e9, build),
};

/* Comma-separated numbers (at most cap); false after a usage error. */
static bool parse_list(const char *opt, const char *s, double *out, size_t cap,
                       size_t *n) {
    char buf[512];
    *n = 0;
    if (strlen(s) >= sizeof buf) {
        cli_usage_error(LSM_CMD, "--%s: list too long", opt);
        return false;
    }
    strcpy(buf, s);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        if (*n == cap) {
            cli_usage_error(LSM_CMD, "--%s: at most %zu values", opt, cap);
            return false;
        }
        if (!lsm_parse_double(opt, tok, -1e300, 1e300, &out[(*n)++]))
            return false;
    }
    if (*n == 0) {
        cli_usage_error(LSM_CMD, "--%s: empty list", opt);
        return false;
    }
    return true;
}

/* Options given as lists: --scale lo,hi --sigmas lo,hi,n --range lo,hi,step */
static int list_option(int id, const char *v, sim_opts *o) {
    double t[3];
    size_t n;
    const char *name = id == O_SCALE    ? "scale"
                       : id == O_SIGMAS ? "sigmas"
                                        : "range";
    size_t want = id == O_SCALE ? 2 : 3;
    if (!parse_list(name, v, t, 3, &n))
        return -1;
    bool ok = n == want && t[0] > 0 && t[1] >= t[0] &&
              (want == 2 || (t[2] >= 1 && t[2] <= MAX_SIGMAS) ||
               (id == O_RANGE && t[2] > 0));
    if (!ok) {
        cli_usage_error(LSM_CMD, "--%s: expected %s", name,
                        id == O_SCALE    ? "LO,HI"
                        : id == O_SIGMAS ? "LO,HI,COUNT"
                                         : "LO,HI,STEP");
        return -1;
    }
    memcpy(id == O_SCALE    ? o->scale
           : id == O_SIGMAS ? o->sigmas
                            : o->range,
           t, want * sizeof *t);
    return 1;
}

static int sim_option(int id, const char *v, sim_opts *o) {
    for (size_t i = 0; i < sizeof numbers / sizeof *numbers; i++)
        if (numbers[i].id == id) {
            double *dst = (double *)((char *)o + numbers[i].offset);
            o->seed_set |= id == O_SEED;
            return lsm_parse_double(numbers[i].name, v, numbers[i].lo,
                                    numbers[i].hi, dst)
                       ? 1
                       : -1;
        }
    switch (id) {
    case O_LAW: o->law = v; return 1;
    case O_CURVE: o->curve = v; return 1;
    case O_SVG: o->svg = v; return 1;
    case O_JSON: o->json = true; return 1;
    case O_QUICK: o->quick = true; return 1;
    case O_WEIGHTS: o->weights = v; return 1;
    case O_TYPES: o->types = v; return 1;
    case O_SCALE:
    case O_SIGMAS:
    case O_RANGE: return list_option(id, v, o);
    case O_DRIFT:
        if (strcmp(v, "walk") == 0 || strcmp(v, "linear") == 0) {
            o->drift = v[0] == 'l' ? AMQ_LSM_DRIFT_LINEAR : AMQ_LSM_DRIFT_WALK;
            return 1;
        }
        cli_usage_error(LSM_CMD, "--drift: walk or linear, not '%s'", v);
        return -1;
    }
    return -1;
}

/* The run count of a generated tree must be a whole number of levels. */
static bool whole(const char *name, double v) {
    if (v == floor(v))
        return true;
    cli_usage_error(LSM_CMD, "--%s wants an integer", name);
    return false;
}

/* ---- h0: uniform against Monkey ------------------------------------------ */

typedef struct h0_result {
    amq_lsm_run runs[64];
    amq_alloc_pick uni[64], opt[64], model_on_real[64];
    amq_lsm_totals t;
    double model_planned_cost; /* model's bits, built on the real curve */
    size_t n;
} h0_result;

/* Cost on `real` of the model's allocation: each run's bits realised on
 * the real curve (rounded down to what it can build). */
static double model_planned(const h0_result *r, const amq_alloc_curve *real,
                            amq_alloc_pick *out, double c) {
    amq_alloc_curve *m = lsm_curve("model", c);
    amq_lsm_totals t;
    double cost = NAN, w = 0, sum = 0;
    amq_alloc_pick mp[64];
    if (m == NULL || amq_lsm_plan(r->runs, r->n, m, r->t.bits_per_key, NULL, mp,
                                  NULL, &t) != AMQ_OK) {
        amq_alloc_curve_free(m);
        return cost;
    }
    for (size_t i = 0; i < r->n; i++) {
        amq_alloc_curve_at(real, mp[i].bits_per_key, &out[i]);
        sum += r->runs[i].lookups * out[i].fpr;
        w += r->runs[i].lookups;
    }
    amq_alloc_curve_free(m);
    return sum / w;
}

/* A law's JSON object, opened with its name (one line). */
static void json_law(cli_json *j, const char *law) {
    cli_json_init(j, stdout, false);
    cli_json_open(j, NULL, '{');
    cli_json_str(j, "law", law);
}

static bool h0_run(const sim_opts *o, const amq_alloc_curve *curve,
                   h0_result *r) {
    size_t nw;
    double w[64];
    if (!whole("levels", o->levels))
        return false;
    r->n = (size_t)o->levels;
    if (!parse_list("weights", o->weights, w, 64, &nw))
        return false;
    if (nw != r->n) {
        cli_usage_error(LSM_CMD, "--weights: %zu values for %zu levels", nw,
                        r->n);
        return false;
    }
    if (amq_lsm_levels((unsigned)r->n, o->ratio, o->keys, r->runs) != AMQ_OK)
        return false;
    for (size_t i = 0; i < r->n; i++)
        r->runs[i].lookups = w[i];
    double bpk = isnan(o->bpk) ? 8 : o->bpk;
    amq_status st =
        amq_lsm_plan(r->runs, r->n, curve, bpk, NULL, r->opt, r->uni, &r->t);
    if (st != AMQ_OK) {
        cli_status_error("h0", st, NULL);
        return false;
    }
    r->model_planned_cost =
        strcmp(o->curve, "model") == 0
            ? r->t.cost_optimal
            : model_planned(r, curve, r->model_on_real, o->c);
    return true;
}

static bool h0_plot(const sim_opts *o, const h0_result *r) {
    plot p;
    double x[64], fu[64], fo[64], fm[64];
    for (size_t i = 0; i < r->n; i++)
        x[i] = (double)(i + 1), fu[i] = r->uni[i].fpr, fo[i] = r->opt[i].fpr,
        fm[i] = r->model_on_real[i].fpr;
    plot_init(&p, "H0: false-positive rate per level", "level (1 = smallest)",
              "false-positive rate", false, true);
    plot_add(&p, "uniform bits", x, fu, r->n, true, true);
    plot_add(&p, "Monkey", x, fo, r->n, true, true);
    if (strcmp(o->curve, "model") != 0)
        plot_add(&p, "model's bits, real filters", x, fm, r->n, true, true)
            ->dashed = true;
    return plot_write(&p, o->svg);
}

static int law_h0(const sim_opts *o, const amq_alloc_curve *curve) {
    static h0_result r;
    if (!h0_run(o, curve, &r))
        return CLI_EXIT_ERR;
    const amq_lsm_totals *t = &r.t;
    double red = 1 - t->cost_optimal / t->cost_uniform;
    if (o->json) {
        cli_json j;
        json_law(&j, "h0");
        cli_json_str(&j, "curve", o->curve);
        cli_json_num(&j, "cost_uniform", t->cost_uniform);
        cli_json_num(&j, "cost_monkey", t->cost_optimal);
        cli_json_num(&j, "reduction", red);
        cli_json_num(&j, "cost_model_planned", r.model_planned_cost);
        cli_json_num(&j, "paper_uniform", PAPER_UNIFORM);
        cli_json_num(&j, "paper_monkey", PAPER_MONKEY);
        cli_json_close(&j);
    } else {
        printf("H0 on curve %s: %zu levels, T = %g, %g keys, %g bits/key\n\n"
               "| level | keys | weight | uniform b | uniform fpr | Monkey b "
               "| Monkey spec | Monkey fpr |\n|---|---:|---:|---:|---:|---:|"
               "---|---:|\n",
               o->curve, r.n, o->ratio, o->keys, t->bits_per_key);
        for (size_t i = 0; i < r.n; i++)
            printf("| %s | %.0f | %.4g | %.3f | %.4g | %.3f | %s | %.4g |\n",
                   r.runs[i].name, r.runs[i].keys, r.runs[i].lookups,
                   r.uni[i].bits_per_key, r.uni[i].fpr, r.opt[i].bits_per_key,
                   r.opt[i].spec, r.opt[i].fpr);
        printf("\n| cost (sum w fpr) | paper's repository | amq |\n"
               "|---|---:|---:|\n| uniform | %g | %.6g |\n"
               "| Monkey | %g | %.6g |\n| reduction | 99.04%% | %.2f%% |\n",
               PAPER_UNIFORM, t->cost_uniform, PAPER_MONKEY, t->cost_optimal,
               100 * red);
        if (strcmp(o->curve, "model") != 0)
            printf("| Monkey planned on the model, built on %s | | %.6g "
                   "(%+.1f%% against planning on %s) |\n",
                   o->curve, r.model_planned_cost,
                   100 * (r.model_planned_cost / t->cost_optimal - 1),
                   o->curve);
    }
    return o->svg && !h0_plot(o, &r) ? CLI_EXIT_ERR : CLI_EXIT_OK;
}

/* ---- log-law ------------------------------------------------------------- */

static int law_loglaw(const sim_opts *o, const amq_alloc_curve *curve) {
    if (!whole("runs", o->runs))
        return CLI_EXIT_ERR;
    size_t n = (size_t)o->runs;
    double *lw = calloc(n, sizeof *lw), *b = calloc(n, sizeof *b);
    double bpk = isnan(o->bpk) ? 8 : o->bpk;
    amq_lsm_fit fit;
    bool written = true;
    amq_status st = lw && b
                        ? amq_lsm_loglaw(n, o->alpha, bpk,
                                         o->seed_set ? (uint64_t)o->seed : 0,
                                         curve, NULL, lw, b, &fit)
                        : AMQ_ERR_NOMEM;
    if (st != AMQ_OK) {
        free(lw), free(b);
        return cli_status_error("loglaw", st, NULL);
    }
    double closed = strcmp(o->curve, "model") == 0 ? 1 / o->c : NAN;
    if (o->json) {
        cli_json j;
        json_law(&j, "loglaw");
        cli_json_num(&j, "slope", fit.slope);
        cli_json_num(&j, "slope_closed_form", closed);
        cli_json_num(&j, "r2", fit.r2);
        cli_json_u64(&j, "runs_with_bits", fit.n);
        cli_json_close(&j);
    } else {
        char cf[32];
        snprintf(cf, sizeof cf, isnan(closed) ? "- (model only)" : "%.4f (1/c)",
                 closed);
        printf("Log-law on curve %s: %zu equal runs, Dirichlet(%g), %g "
               "bits/key\n\n| | closed form | paper's repository | amq |\n"
               "|---|---:|---:|---:|\n| slope of b* on ln w | %s | 2.0814 | "
               "%.4f |\n| R^2 | 1 | 1.000 | %.6f |\n"
               "| runs with bits | | | %zu of %zu |\n",
               o->curve, n, o->alpha, bpk, cf, fit.slope, fit.r2, fit.n, n);
    }
    if (o->svg) {
        plot p;
        double fx[2] = {INFINITY, -INFINITY}, fy[2];
        for (size_t i = 0; i < n; i++)
            if (b[i] > 0)
                fx[0] = fmin(fx[0], lw[i]), fx[1] = fmax(fx[1], lw[i]);
        for (int k = 0; k < 2; k++)
            fy[k] = fit.slope * fx[k] + fit.intercept;
        for (size_t i = 0; i < n; i++)
            if (!(b[i] > 0))
                lw[i] = NAN; /* clipped runs are not part of the law */
        plot_init(&p, "Log-law: optimal bits per key against ln(hotness)",
                  "ln w (probe share)", "bits per key", false, false);
        plot_add(&p, "optimal allocation", lw, b, n, false, true);
        plot_add(&p, "least-squares line", fx, fy, 2, true, false)->dashed =
            true;
        written = plot_write(&p, o->svg);
    }
    free(lw), free(b);
    return written ? CLI_EXIT_OK : CLI_EXIT_ERR;
}

/* ---- robustness ---------------------------------------------------------- */

typedef struct robust_run {
    amq_lsm_robust r;
    double *D, *E, *X; /* points: variance, excess, exact closed form */
} robust_run;

static amq_status robust_sweep(const sim_opts *o, const amq_alloc_curve *c,
                               double lo, double hi, uint64_t seed,
                               robust_run *out) {
    size_t n = (size_t)o->draws;
    amq_lsm_robust_cfg cfg = {(size_t)o->segments,
                              isnan(o->bpk) ? 10 : o->bpk,
                              o->skew,
                              n,
                              lo,
                              hi,
                              seed};
    out->D = calloc(n, sizeof(double));
    out->E = calloc(n, sizeof(double));
    out->X = calloc(n, sizeof(double));
    if (!out->D || !out->E || !out->X)
        return AMQ_ERR_NOMEM;
    return amq_lsm_robustness(&cfg, c, NULL, out->D, out->E, out->X, &out->r);
}

static double max_gap(const robust_run *r, size_t n) {
    double g = 0;
    for (size_t i = 0; i < n; i++)
        g = fmax(g, fabs(r->E[i] - r->X[i]));
    return g;
}

static void robust_print(const sim_opts *o, const robust_run *s,
                         const robust_run *l) {
    size_t n = (size_t)o->draws;
    bool model = strcmp(o->curve, "model") == 0;
    if (o->json) {
        cli_json j;
        json_law(&j, "robustness");
        cli_json_num(&j, "slope", s->r.fit.slope);
        cli_json_num(&j, "r2", s->r.fit.r2);
        cli_json_num(&j, "rel_err_small", s->r.rel_err_half_law);
        cli_json_num(&j, "rel_err_large", l->r.rel_err_half_law);
        cli_json_num(&j, "slope_large", l->r.fit.slope);
        cli_json_num(&j, "common_excess", s->r.common_excess);
        cli_json_num(&j, "differential_excess", s->r.differential_excess);
        cli_json_num(&j, "max_gap_exact", model ? max_gap(s, n) : NAN);
        cli_json_close(&j);
        return;
    }
    printf("Robustness law on curve %s: %g segments, %g bits/key, Zipf %g, "
           "%zu draws\n\n| | closed form | paper's repository | amq |\n"
           "|---|---:|---:|---:|\n"
           "| slope of excess on D (sd in [%g, %g]) | 0.5 | 0.504 | %.4f |\n"
           "| R^2 | | 0.999 | %.4f |\n"
           "| mean abs(excess - D/2) / (D/2), small errors | 0 | | %.4f |\n"
           "| slope, large errors (sd in [%g, %g]) | 0.5 | | %.4f |\n"
           "| mean abs(excess - D/2) / (D/2), large errors | 0 | | %.4f |\n"
           "| common-factor error: mean excess | 0 | ~0 | %.2g |\n"
           "| differential error of the same size: mean excess | | | %.4f "
           "|\n",
           o->curve, o->segments, isnan(o->bpk) ? 10 : o->bpk, o->skew, n,
           o->scale[0], o->scale[1], s->r.fit.slope, s->r.fit.r2,
           s->r.rel_err_half_law, o->scale[0], 0.9, l->r.fit.slope,
           l->r.rel_err_half_law, s->r.common_excess, s->r.differential_excess);
    if (model)
        printf("| max abs(excess - exact form), both sweeps | 0 | | %.2g "
               "|\n",
               fmax(max_gap(s, n), max_gap(l, n)));
}

static bool robust_plot(const sim_opts *o, const robust_run *s,
                        const robust_run *l) {
    size_t n = (size_t)o->draws;
    double hx[2] = {0, 0}, hy[2];
    for (size_t i = 0; i < n; i++)
        hx[1] = fmax(hx[1], fmax(s->D[i], l->D[i]));
    hy[0] = 0, hy[1] = hx[1] / 2;
    plot p;
    plot_init(&p, "Robustness: excess cost against the log-error variance",
              "D = Var(delta)", "relative excess cost", false, false);
    plot_add(&p, "small errors", s->D, s->E, n, false, true);
    plot_add(&p, "large errors", l->D, l->E, n, false, true);
    plot_add(&p, "closed form D/2", hx, hy, 2, true, false)->dashed = true;
    return plot_write(&p, o->svg);
}

static int law_robustness(const sim_opts *o, const amq_alloc_curve *curve) {
    robust_run s = {0}, l = {0};
    uint64_t seed = o->seed_set ? (uint64_t)o->seed : 1;
    int rc = CLI_EXIT_OK;
    if (!whole("segments", o->segments) || !whole("draws", o->draws))
        return CLI_EXIT_ERR;
    amq_status st = robust_sweep(o, curve, o->scale[0], o->scale[1], seed, &s);
    if (st == AMQ_OK)
        st = robust_sweep(o, curve, o->scale[0], 0.9, seed + 1, &l);
    if (st != AMQ_OK) {
        rc = cli_status_error("robustness", st, NULL);
    } else {
        robust_print(o, &s, &l);
        if (o->svg && !robust_plot(o, &s, &l))
            rc = CLI_EXIT_ERR;
    }
    free(s.D), free(s.E), free(s.X), free(l.D), free(l.E), free(l.X);
    return rc;
}

/* ---- frontier ------------------------------------------------------------ */

static void frontier_print(const sim_opts *o, const amq_lsm_drift *d, size_t n,
                           const amq_lsm_frontier *f) {
    if (o->json) {
        cli_json j;
        json_law(&j, "frontier");
        cli_json_num(&j, "rstar", f->rstar);
        cli_json_num(&j, "quad_k", f->quad_k);
        cli_json_num(&j, "quad_r2", f->quad_r2);
        cli_json_num(&j, "small_k", f->small_k);
        cli_json_num(&j, "coarse_over_rstar", f->r_coarse / f->rstar);
        cli_json_num(&j, "fallback_over_rstar", f->r_fallback / f->rstar);
        cli_json_open(&j, "points", '[');
        for (size_t i = 0; i < n; i++) {
            cli_json_open(&j, NULL, '{');
            cli_json_num(&j, "sigma", d[i].sigma);
            cli_json_num(&j, "r", d[i].r);
            cli_json_num(&j, "V", d[i].V);
            cli_json_num(&j, "G", d[i].G);
            cli_json_close(&j);
        }
        cli_json_close(&j);
        cli_json_close(&j);
        return;
    }
    printf("Adaptivity frontier on curve %s (%s drift): %g segments, %g "
           "bits/key, epoch %g, %g steps, theta %g\n\n"
           "| sigma | r | r/r* | V simulated | r^2/(6G) (README) | r^2/(4G) "
           "(walk) | G |\n|---:|---:|---:|---:|---:|---:|---:|\n",
           o->curve, o->drift == AMQ_LSM_DRIFT_LINEAR ? "linear" : "walk",
           o->segments, isnan(o->bpk) ? 10 : o->bpk, o->epoch, o->steps,
           o->theta);
    for (size_t i = 0; i < n; i++)
        printf("| %.4f | %.4f | %.3f | %.4f | %.4f | %.4f | %.3f |\n",
               d[i].sigma, d[i].r, d[i].r / f->rstar, d[i].V,
               d[i].r * d[i].r / (6 * d[i].G), d[i].r * d[i].r / (4 * d[i].G),
               d[i].G);
    printf("\n| | closed form | paper's repository | amq |\n"
           "|---|---:|---:|---:|\n| r* = sqrt(2G), median | | 1.267 | %.4f |\n"
           "| k in V = k (r/r*)^2, fit over r <= r* | 1/3 (linear), 1/2 "
           "(walk) | 0.437 | %.4f (R^2 %.3f) |\n"
           "| k in V = k r^2/G, median over r <= 0.35 r* | 1/6 (linear), "
           "1/4 (walk) | | %.4f |\n"
           "| largest r with V <= 0.1, in r* | 0.55 (k=1/3), 0.45 (k=1/2) | "
           "0.34 | %.3f |\n| smallest r with V >= 1, in r* | 1.73, 1.41 | "
           "4.2 | %.3f |\n",
           f->rstar, f->quad_k, f->quad_r2, f->small_k, f->r_coarse / f->rstar,
           f->r_fallback / f->rstar);
}

static bool frontier_plot(const sim_opts *o, const amq_lsm_drift *d, size_t n,
                          const amq_lsm_frontier *f) {
    double x[MAX_SIGMAS], y[MAX_SIGMAS], cx[64], c3[64], c2[64];
    double hx[2] = {0.01, 20}, h1[2] = {0.1, 0.1}, h2[2] = {1, 1};
    for (size_t i = 0; i < n; i++)
        x[i] = d[i].r / f->rstar, y[i] = d[i].V;
    for (int i = 0; i < 64; i++) {
        cx[i] = 0.01 * pow(2000.0, i / 63.0);
        c3[i] = cx[i] * cx[i] / 3, c2[i] = cx[i] * cx[i] / 2;
    }
    plot p;
    plot_init(&p, "Adaptivity frontier: value left by compaction-only",
              "r / r*", "V", true, true);
    p.ymin = 1e-4, p.ymax = 10, p.xmin = 0.01, p.xmax = 20;
    plot_add(&p, "simulated", x, y, n, true, true);
    plot_add(&p, "(r/r*)^2/3: sigma^2/(6G)", cx, c3, 64, true, false)->dashed =
        true;
    plot_add(&p, "(r/r*)^2/2: random walk", cx, c2, 64, true, false)->dashed =
        true;
    plot_add(&p, "V = 0.1", hx, h1, 2, true, false);
    plot_add(&p, "V = 1 (uniform is as good)", hx, h2, 2, true, false);
    return plot_write(&p, o->svg);
}

static int law_frontier(const sim_opts *o, const amq_alloc_curve *curve) {
    amq_lsm_drift d[MAX_SIGMAS];
    amq_lsm_frontier f;
    size_t n = (size_t)o->sigmas[2];
    uint64_t seed = o->seed_set ? (uint64_t)o->seed : 2;
    if (!whole("segments", o->segments) || !whole("epoch", o->epoch) ||
        !whole("steps", o->steps) || !whole("warmup", o->warmup))
        return CLI_EXIT_ERR;
    amq_lsm_drift_cfg cfg = {(size_t)o->segments,
                             o->keys,
                             isnan(o->bpk) ? 10 : o->bpk,
                             o->skew,
                             o->theta,
                             (unsigned)o->epoch,
                             (unsigned)o->steps,
                             (unsigned)o->warmup,
                             o->drift,
                             seed};
    for (size_t i = 0; i < n; i++) {
        double s = n > 1 ? o->sigmas[0] * pow(o->sigmas[1] / o->sigmas[0],
                                              (double)i / (double)(n - 1))
                         : o->sigmas[0];
        cfg.seed = seed + i;
        amq_status st = amq_lsm_drift_run(&cfg, s, curve, NULL, &d[i]);
        if (st != AMQ_OK)
            return cli_status_error("frontier", st, NULL);
    }
    amq_status st = amq_lsm_frontier_fit(d, n, &f);
    if (st != AMQ_OK)
        return cli_status_error("frontier", st, NULL);
    frontier_print(o, d, n, &f);
    return o->svg && !frontier_plot(o, d, n, &f) ? CLI_EXIT_ERR : CLI_EXIT_OK;
}

/* ---- curves: the real types ---------------------------------------------- */

typedef struct type_curve {
    char spec[AMQ_ALLOC_SPEC_MAX];
    double target[64], b[64], fpr[64];
    size_t n;
    amq_lsm_fit fit; /* ln fpr on b, weighted by false positives     */
    double sat16;    /* measured / model at 16 bits per key          */
    double uniform, monkey_real, monkey_model; /* H0 costs on the type  */
    double loglaw_slope, loglaw_r2, robust_slope;
} type_curve;

/* Build filters over the range and fit ln fpr on the built bits per key,
 * each point weighted by its false positives (the variance of the log of
 * a Poisson count is about 1 / count). A step curve (fingerprint widths)
 * gives the same filter for many b: each distinct filter counts once, and
 * "no filter" not at all. */
static bool measure_type(const sim_opts *o, const amq_alloc_curve *c,
                         type_curve *t) {
    double x[64], y[64], w[64];
    amq_alloc_pick prev = {0}, pick;
    size_t m = 0, step = 0;
    t->n = 0;
    t->sat16 = NAN;
    for (double b = o->range[0]; b <= o->range[1] + 1e-9 && t->n < 64;
         b = o->range[0] + (double)++step * o->range[2]) {
        double actual;
        uint64_t fp;
        amq_alloc_curve_at(c, b, &pick);
        if (pick.spec[0] == '\0' || (strcmp(pick.spec, prev.spec) == 0 &&
                                     pick.bits_per_key == prev.bits_per_key))
            continue;
        prev = pick;
        amq_status st = amq_lsm_measure(
            c, b, (size_t)o->build, (uint64_t)o->queries,
            (uint64_t)o->seed + step, NULL, &pick, &actual, &fp);
        if (st != AMQ_OK) {
            cli_status_error(t->spec, st, NULL);
            return false;
        }
        size_t k = t->n++;
        t->target[k] = b;
        t->b[k] = actual;
        t->fpr[k] = (double)fp / o->queries;
        if (fabs(b - 16) < 1e-9)
            t->sat16 = t->fpr[k] / exp(-o->c * actual);
        if (fp > 0)
            x[m] = actual, y[m] = log(t->fpr[k]), w[m++] = (double)fp;
    }
    if (amq_lsm_fit_line(x, y, w, m, false, &t->fit) != AMQ_OK)
        t->fit = (amq_lsm_fit){NAN, NAN, NAN, m};
    return true;
}

static size_t distinct(const double *v, size_t n) {
    size_t d = 0;
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < i && v[j] != v[i])
            j++;
        d += j == i;
    }
    return d;
}

/* The static laws and H0 on one type's curve. */
static bool type_laws(const sim_opts *o, const amq_alloc_curve *c,
                      type_curve *t) {
    static h0_result r;
    sim_opts h = *o;
    h.bpk = 8;
    h.curve = t->spec;
    if (!h0_run(&h, c, &r))
        return false;
    t->uniform = r.t.cost_uniform;
    t->monkey_real = r.t.cost_optimal;
    t->monkey_model = r.model_planned_cost;
    amq_lsm_fit fit;
    amq_lsm_robust_cfg rc = {64, 10, 0.9, (size_t)o->draws, 0.02, 0.25, 1};
    amq_lsm_robust rob;
    double bits[50];
    amq_status st = amq_lsm_loglaw(50, 0.3, 8, 0, c, NULL, NULL, bits, &fit);
    if (st == AMQ_OK)
        st = amq_lsm_robustness(&rc, c, NULL, NULL, NULL, NULL, &rob);
    if (st != AMQ_OK) {
        cli_status_error(t->spec, st, NULL);
        return false;
    }
    /* on a step curve a handful of widths is no line to fit */
    bool law = distinct(bits, 50) >= 8;
    t->loglaw_slope = law ? fit.slope : NAN;
    t->loglaw_r2 = law ? fit.r2 : NAN;
    t->robust_slope = rob.fit.slope;
    return true;
}

static void curves_print(const sim_opts *o, const type_curve *t, size_t n) {
    if (o->json) {
        cli_json j;
        json_law(&j, "curves");
        cli_json_num(&j, "model_c", o->c);
        cli_json_open(&j, "types", '[');
        for (size_t i = 0; i < n; i++) {
            cli_json_open(&j, NULL, '{');
            cli_json_str(&j, "spec", t[i].spec);
            cli_json_num(&j, "beta_eff", -t[i].fit.slope);
            cli_json_num(&j, "r2", t[i].fit.r2);
            cli_json_num(&j, "sat16", t[i].sat16);
            cli_json_num(&j, "h0_uniform", t[i].uniform);
            cli_json_num(&j, "h0_monkey", t[i].monkey_real);
            cli_json_num(&j, "h0_model_planned", t[i].monkey_model);
            cli_json_num(&j, "loglaw_slope", t[i].loglaw_slope);
            cli_json_num(&j, "robust_slope", t[i].robust_slope);
            cli_json_close(&j);
        }
        cli_json_close(&j);
        cli_json_close(&j);
        return;
    }
    printf("Real curves: filters of %g keys built at %g..%g bits/key (step "
           "%g), %g strangers each; model c = %.4f\n\n"
           "| type | beta_eff | R^2 | fpr/model at 16 b | H0 uniform | H0 "
           "Monkey | H0 Monkey planned on the model | gain of the real "
           "curve | log-law slope (R^2) | robustness slope |\n"
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
           o->build, o->range[0], o->range[1], o->range[2], o->queries, o->c);
    for (size_t i = 0; i < n; i++) {
        char sat[32], law[48];
        /* a step curve builds one filter for many b: no point at 16, and
         * a handful of widths is no line for the log-law */
        snprintf(sat, sizeof sat, isnan(t[i].sat16) ? "-" : "%.3g", t[i].sat16);
        if (isnan(t[i].loglaw_slope))
            snprintf(law, sizeof law, "- (step curve)");
        else
            snprintf(law, sizeof law, "%.3f (%.3f)", t[i].loglaw_slope,
                     t[i].loglaw_r2);
        printf("| %s | %.4f | %.4f | %s | %.4g | %.4g | %.4g | %.1f%% | %s | "
               "%.3f |\n",
               t[i].spec, -t[i].fit.slope, t[i].fit.r2, sat, t[i].uniform,
               t[i].monkey_real, t[i].monkey_model,
               100 * (1 - t[i].monkey_real / t[i].monkey_model), law,
               t[i].robust_slope);
    }
}

static bool curves_plot(const sim_opts *o, const type_curve *t, size_t n) {
    plot p;
    double mx[2] = {o->range[0], o->range[1]}, my[2];
    for (int k = 0; k < 2; k++)
        my[k] = exp(-o->c * mx[k]);
    plot_init(&p, "Measured false-positive rate against bits per key",
              "bits per key (built)", "false-positive rate", false, true);
    for (size_t i = 0; i < n && i + 1 < PLOT_MAX_SERIES; i++)
        plot_add(&p, t[i].spec, t[i].b, t[i].fpr, t[i].n, true, true);
    plot_add(&p, "model e^(-c b)", mx, my, 2, true, false)->dashed = true;
    return plot_write(&p, o->svg);
}

static int law_curves(const sim_opts *o) {
    static type_curve t[MAX_TYPES];
    char list[512], *save = NULL;
    size_t n = 0;
    if (strlen(o->types) >= sizeof list)
        return cli_usage_error(LSM_CMD, "--types: list too long");
    strcpy(list, o->types);
    for (char *s = strtok_r(list, ",", &save); s != NULL;
         s = strtok_r(NULL, ",", &save)) {
        if (n == MAX_TYPES)
            return cli_usage_error(LSM_CMD, "--types: at most %d", MAX_TYPES);
        amq_alloc_curve *c = lsm_curve(s, o->c);
        if (c == NULL)
            return CLI_EXIT_ERR;
        snprintf(t[n].spec, sizeof t[n].spec, "%s", s);
        bool ok = measure_type(o, c, &t[n]) && type_laws(o, c, &t[n]);
        amq_alloc_curve_free(c);
        if (!ok)
            return CLI_EXIT_ERR;
        n++;
    }
    curves_print(o, t, n);
    return o->svg && !curves_plot(o, t, n) ? CLI_EXIT_ERR : CLI_EXIT_OK;
}

/* ---- dispatch ------------------------------------------------------------ */

/* --quick: the same laws at sizes a test can afford. */
static void quicken(sim_opts *o) {
    o->draws = 40;
    o->steps = 300;
    o->warmup = 30;
    o->sigmas[2] = fmin(o->sigmas[2], 4);
    o->queries = 2e5;
    o->build = 2e4;
    o->range[2] = fmax(o->range[2], 6);
}

/* 0 parsed, 1 help printed, -1 error (reported). */
static int parse_sim(int argc, char **argv, sim_opts *o) {
    cli_args a;
    defaults(o);
    cli_args_init(&a, LSM_CMD, argc, argv);
    for (int id; (id = cli_next(&a, sim_options)) != CLI_NEXT_END;) {
        if (id == CLI_NEXT_ERR)
            return -1;
        if (id == CLI_OPT_HELP)
            return cli_help_print(stdout, LSM_CMD) ? 1 : -1;
        if (id == CLI_NEXT_POS) {
            cli_usage_error(LSM_CMD, "simulate: unexpected argument '%s'",
                            a.value);
            return -1;
        }
        if (sim_option(id, a.value, o) < 0)
            return -1;
    }
    if (o->law == NULL) {
        cli_usage_error(LSM_CMD, "simulate: --law is required (h0, loglaw, "
                                 "robustness, frontier, curves)");
        return -1;
    }
    if (o->quick)
        quicken(o);
    return 0;
}

static int simulate(int argc, char **argv) {
    sim_opts o;
    int parsed = parse_sim(argc, argv, &o), rc;
    if (parsed != 0)
        return parsed > 0 ? CLI_EXIT_OK : CLI_EXIT_ERR;
    if (strcmp(o.law, "curves") == 0)
        return law_curves(&o);
    int (*law)(const sim_opts *, const amq_alloc_curve *) =
        strcmp(o.law, "h0") == 0           ? law_h0
        : strcmp(o.law, "loglaw") == 0     ? law_loglaw
        : strcmp(o.law, "robustness") == 0 ? law_robustness
        : strcmp(o.law, "frontier") == 0   ? law_frontier
                                           : NULL;
    if (law == NULL)
        return cli_usage_error(LSM_CMD, "simulate: unknown law '%s'", o.law);
    amq_alloc_curve *curve = lsm_curve(o.curve, o.c);
    if (curve == NULL)
        return CLI_EXIT_ERR;
    rc = law(&o, curve);
    amq_alloc_curve_free(curve);
    return rc;
}

int lab_cmd_lsm(int argc, char **argv) {
    static const cli_command subs[] = {{"simulate", simulate}, {NULL, NULL}};
    return cli_dispatch(LSM_CMD, subs, argc, argv);
}
