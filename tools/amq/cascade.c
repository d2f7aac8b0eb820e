/*
 * cascade.c — `amq cascade train|query|info|audit|features`: the learned
 * Bloom filter cascade (amq/cascade.h) from the command line.
 *
 *   train     key files in, a cascade file out (written atomically; on any
 *             error nothing is written and the exit status is 2)
 *   query     like `amq query`: exit 0 if some key may be a member, 1 if
 *             none, 2 on error
 *   info      the intervals: τ, p_ℓ with its confidence limit, n_ℓ, bits,
 *             ε_ℓ, and the bound (--json for machines)
 *   audit     replays member and non-member files through a shadow-sampling
 *             audit and prints its report
 *   features  the feature vectors in svmlight format (the scikit-learn
 *             cross-check reads them)
 *
 * The evaluation tables of docs/cascade.md are `amq-lab cascade eval`
 * (tools/lab/cascade_eval.c).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ckeys.h"
#include "verbs.h"

/* Load a cascade file; NULL after printing an error naming the file and
 * the byte. */
static amq_cascade *ccascade_open(const char *path) {
    amq_cascade *c = NULL;
    amq_diag d = {0, ""};
    amq_status st = amq_cascade_load_file(path, NULL, &c, &d);
    if (st != AMQ_OK) {
        cli_status_error(path, st, &d);
        return NULL;
    }
    return c;
}

/* The next option's id; CLI_NEXT_END at the end; CLI_NEXT_ERR with *rc set
 * after a usage error or after --help was printed. */
static int next_opt(cli_args *a, const cli_opt *opts, int *rc) {
    int id = cli_next(a, opts);
    if (id == CLI_NEXT_ERR) {
        *rc = CLI_EXIT_ERR;
    } else if (id == CLI_OPT_HELP) {
        *rc = cli_help_print(stdout, "cascade") ? CLI_EXIT_OK : CLI_EXIT_ERR;
        id = CLI_NEXT_ERR;
    }
    return id;
}

/* ---- train ----------------------------------------------------------------------- */

typedef struct train_opts {
    const char *members, *nonmembers, *output, *residual, *method, *calib,
        *tail;
    amq_cascade_config cfg;
    bool quiet;
} train_opts;

enum {
    T_MEMBERS = 1,
    T_NONMEMBERS,
    T_CALIB_FRAC,
    T_FPR,
    T_BITS,
    T_LEVELS,
    T_RESIDUAL,
    T_OUTPUT,
    T_METHOD,
    T_BINS,
    T_ETA,
    T_DIM,
    T_QUANT,
    T_CALIB,
    T_TAILW,
    T_AUX,
    T_HEADROOM,
    T_SEED,
    T_TAIL,
    T_DELTA,
    T_EPOCHS,
    T_QUIET,
    T_PARTITION,
    T_WORST,
    T_FLOAT,
    T_LEARNED
};

static const cli_opt train_options[] = {
    {"members", 0, true, T_MEMBERS},
    {"nonmembers", 0, true, T_NONMEMBERS},
    {"calib-frac", 0, true, T_CALIB_FRAC},
    {"fpr", 'e', true, T_FPR},
    {"bits-per-key", 'B', true, T_BITS},
    {"levels", 'L', true, T_LEVELS},
    {"residual", 'r', true, T_RESIDUAL},
    {"output", 'o', true, T_OUTPUT},
    {"method", 0, true, T_METHOD},
    {"bins", 0, true, T_BINS},
    {"eta", 0, true, T_ETA},
    {"dim-bits", 0, true, T_DIM},
    {"quantize", 0, false, T_QUANT},
    {"calibration", 0, true, T_CALIB},
    {"tail-weight", 0, true, T_TAILW},
    {"aux", 0, true, T_AUX},
    {"headroom", 0, true, T_HEADROOM},
    {"seed", 0, true, T_SEED},
    {"tail", 0, true, T_TAIL},
    {"delta", 0, true, T_DELTA},
    {"epochs", 0, true, T_EPOCHS},
    {"quiet", 'q', false, T_QUIET},
    {"partition", 0, true, T_PARTITION},
    {"worst-case", 0, true, T_WORST},
    {"float", 0, false, T_FLOAT},
    {"learned", 0, false, T_LEARNED},
    {NULL, 0, false, 0},
};

static bool parse_u32(const char *opt, const char *s, uint32_t hi,
                      uint32_t *out) {
    uint64_t v;
    if (!cli_parse_u64("cascade", opt, s, &v))
        return false;
    if (v > hi) {
        cli_usage_error("cascade", "%s: %llu is above %u", opt,
                        (unsigned long long)v, hi);
        return false;
    }
    *out = (uint32_t)v;
    return true;
}

static bool pick_name(const char *opt, const char *v, const char *const *names,
                      int n, int *out) {
    for (int i = 0; i < n; i++)
        if (strcmp(v, names[i]) == 0) {
            *out = i;
            return true;
        }
    cli_usage_error("cascade", "%s: unknown value '%s'", opt, v);
    return false;
}

static bool take_enum(train_opts *o, int id, const char *v) {
    static const char *const methods[] = {"cascade", "lbf", "sandwich", "plbf"};
    static const char *const calibs[] = {"none", "platt", "isotonic"};
    static const char *const tails[] = {"guard", "reject"};
    static const char *const parts[] = {"optimal", "equal-members",
                                        "equal-mass"};
    amq_cascade_config *c = &o->cfg;
    int x = 0;
    bool ok = true;
    if (id == T_METHOD && (ok = pick_name("--method", v, methods, 4, &x)))
        c->method = (amq_learned_method)x;
    if (id == T_CALIB && (ok = pick_name("--calibration", v, calibs, 3, &x)))
        c->model.calibration = (amq_calibration)x;
    if (id == T_TAIL && (ok = pick_name("--tail", v, tails, 2, &x)))
        c->tail = (amq_tail)x;
    if (id == T_PARTITION && (ok = pick_name("--partition", v, parts, 3, &x)))
        c->partition = (amq_partition)x;
    return ok;
}

static bool take_number(train_opts *o, int id, const char *v) {
    amq_cascade_config *c = &o->cfg;
    switch (id) {
    case T_CALIB_FRAC:
        return cli_parse_real("cascade", "--calib-frac", v, 0.01, 0.99,
                              &c->holdout);
    case T_FPR: return cli_parse_fpr("cascade", "--fpr", v, &c->fpr);
    case T_BITS:
        return cli_parse_real("cascade", "--bits-per-key", v, 0.01, 1e6,
                              &c->bits_per_key);
    case T_ETA:
        return cli_parse_real("cascade", "--eta", v, 1e-12, 0.49, &c->eta);
    case T_TAILW:
        return cli_parse_real("cascade", "--tail-weight", v, 0, 1e6,
                              &c->model.tail_weight);
    case T_DELTA:
        return cli_parse_real("cascade", "--delta", v, 0, 0.99, &c->delta);
    case T_WORST:
        return cli_parse_real("cascade", "--worst-case", v, 1e-12, 0.999999,
                              &c->worst_case);
    case T_BINS:
        c->choose &= ~AMQ_CHOOSE_BINS;
        return parse_u32("--bins", v, AMQ_CASCADE_MAX_BINS, &c->bins);
    case T_DIM:
        c->choose &= ~AMQ_CHOOSE_MODEL;
        if (!parse_u32("--dim-bits", v, AMQ_FEATURE_DIM_BITS_MAX,
                       &c->model.features.dim_bits))
            return false;
        if (c->model.features.dim_bits >= AMQ_FEATURE_DIM_BITS_MIN)
            return true;
        cli_usage_error("cascade", "--dim-bits: %u to %u (2^D model weights)",
                        AMQ_FEATURE_DIM_BITS_MIN, AMQ_FEATURE_DIM_BITS_MAX);
        return false;
    case T_HEADROOM:
        return parse_u32("--headroom", v, AMQ_CASCADE_MAX_BINS, &c->headroom);
    case T_EPOCHS: return parse_u32("--epochs", v, 1000, &c->model.epochs);
    case T_AUX: return cli_parse_u64("cascade", "--aux", v, &c->aux_capacity);
    case T_SEED: return cli_parse_u64("cascade", "--seed", v, &c->model.seed);
    case T_LEVELS:
        if (strcmp(v, "auto") == 0) {
            c->levels = 0;
            return true;
        }
        return parse_u32("--levels", v, AMQ_CASCADE_MAX_LEVELS, &c->levels) &&
               (c->levels > 0 ||
                (cli_usage_error("cascade", "--levels: 1..%u or auto",
                                 AMQ_CASCADE_MAX_LEVELS),
                 false));
    default: return take_enum(o, id, v);
    }
}

static bool take_train(train_opts *o, int id, const char *v) {
    switch (id) {
    case T_MEMBERS: o->members = v; return true;
    case T_NONMEMBERS: o->nonmembers = v; return true;
    case T_OUTPUT: o->output = v; return true;
    case T_RESIDUAL:
        o->cfg.residual = v;
        o->cfg.choose &= ~AMQ_CHOOSE_RESIDUAL;
        return true;
    case T_QUANT:
    case T_FLOAT:
        o->cfg.model.quantize = id == T_QUANT;
        o->cfg.choose &= ~AMQ_CHOOSE_MODEL;
        return true;
    case T_LEARNED: o->cfg.choose &= ~AMQ_CHOOSE_PLAIN; return true;
    case T_QUIET: o->quiet = true; return true;
    default: return take_number(o, id, v);
    }
}

static int parse_train(int argc, char **argv, train_opts *o) {
    cli_args a;
    int id, rc = CLI_EXIT_OK;
    cli_args_init(&a, "cascade", argc, argv);
    while ((id = next_opt(&a, train_options, &rc)) != CLI_NEXT_END) {
        if (id == CLI_NEXT_ERR)
            return rc;
        if (id == CLI_NEXT_POS)
            return cli_usage_error("cascade", "train: unexpected '%s'",
                                   a.value);
        if (!take_train(o, id, a.value))
            return CLI_EXIT_ERR;
    }
    if (o->members == NULL || o->nonmembers == NULL || o->output == NULL)
        return cli_usage_error("cascade",
                               "train needs --members, --nonmembers and -o");
    if ((o->cfg.fpr > 0) == (o->cfg.bits_per_key > 0))
        return cli_usage_error(
            "cascade", "train needs exactly one of --fpr and --bits-per-key");
    return -1;
}

/* What a user pays: the whole file (model, tables, filters and frame)
 * per member. */
static double file_bits_per_key(const amq_cascade_stats *s, uint64_t bytes) {
    return 8.0 * (double)bytes / (double)(s->members ? s->members : 1);
}

/* Which candidate won, against the best plain filter training built. */
static void print_choice(FILE *out, const amq_cascade_stats *s, size_t bytes) {
    if (s->plain)
        fprintf(out, "a plain filter, no model (training keeps one when no "
                     "learned cascade is smaller; --learned for one)\n");
    else if (s->plain_bytes > 0)
        fprintf(out, "learned, %.1f%% of the best plain filter's %.0f bytes\n",
                100.0 * (double)bytes / s->plain_bytes, s->plain_bytes);
    else
        fprintf(out, "learned (no plain filter compared)\n");
}

static void print_summary(const amq_cascade *c) {
    amq_cascade_stats s;
    amq_cascade_get_stats(c, &s, NULL, 0, NULL);
    fprintf(stderr, "amq: chose ");
    print_choice(stderr, &s, amq_cascade_save_size(c));
    fprintf(stderr,
            "amq: cascade (%s): %llu member%s, %u level%s, %.3f bits/key "
            "(model %zu B, residuals %zu B), certified FPR bound %.4g "
            "(estimate %.4g), built in %.2f s\n",
            amq_learned_method_name(s.method), (unsigned long long)s.members,
            cli_s(s.members), s.levels, cli_s(s.levels),
            file_bits_per_key(&s, amq_cascade_save_size(c)), s.model_bytes,
            s.residual_bytes, s.fpr_bound, s.fpr_estimate, s.build_seconds);
}

static int train_and_write(const train_opts *o, const ckeys *m,
                           const ckeys *n) {
    amq_cascade *c = NULL;
    amq_diag d = {0, ""};
    if (!o->quiet)
        fprintf(stderr, "amq: training on %zu members, %zu non-members...\n",
                m->k.n, n->k.n);
    amq_status st = amq_cascade_train(&m->k, &n->k, &o->cfg, NULL, &c, &d);
    if (st == AMQ_ERR_FULL) { /* what FULL means for a target */
        cli_error("cascade train: the target cannot be certified: %s; nothing "
                  "written",
                  d.message);
        cli_error("hint: a looser --fpr, more non-members (the certify split "
                  "bounds the rate it can prove), or --bits-per-key B");
        return CLI_EXIT_ERR;
    }
    if (st != AMQ_OK) {
        cli_error("cascade train: %s%s%s", amq_strerror(st),
                  d.message[0] ? ": " : "", d.message);
        return CLI_EXIT_ERR;
    }
    st = amq_cascade_save_file(c, o->output, &d);
    bool ok = st == AMQ_OK;
    if (!ok)
        cli_status_error(o->output, st, &d);
    else if (!o->quiet)
        print_summary(c);
    amq_cascade_free(c);
    return ok ? CLI_EXIT_OK : CLI_EXIT_ERR;
}

static int cmd_train(int argc, char **argv) {
    train_opts o;
    memset(&o, 0, sizeof o);
    amq_cascade_config_init(&o.cfg);
    int rc = parse_train(argc, argv, &o);
    if (rc >= 0)
        return rc;
    ckeys m, n;
    if (!ckeys_read(&m, o.members, "members"))
        return CLI_EXIT_ERR;
    if (!ckeys_read(&n, o.nonmembers, "non-members")) {
        ckeys_free(&m);
        return CLI_EXIT_ERR;
    }
    if (m.k.n == 0 || n.k.n == 0) {
        cli_error("cascade train: %s has no keys",
                  m.k.n == 0 ? o.members : o.nonmembers);
        rc = CLI_EXIT_ERR;
    } else {
        rc = train_and_write(&o, &m, &n);
    }
    ckeys_free(&m);
    ckeys_free(&n);
    return rc;
}

/* ---- query --------------------------------------------------------------------------- */

static int cmd_query(int argc, char **argv) {
    static const cli_opt opts[] = {{"count", 'c', false, 1},
                                   {"invert", 'v', false, 2},
                                   {"quiet", 'q', false, 3},
                                   {"json", 0, false, 4},
                                   {NULL, 0, false, 0}};
    const char *file = NULL, *input = NULL;
    bool count = false, invert = false, quiet = false, json = false;
    cli_args a;
    int id, rc = CLI_EXIT_OK;
    cli_args_init(&a, "cascade", argc, argv);
    while ((id = next_opt(&a, opts, &rc)) != CLI_NEXT_END) {
        if (id == CLI_NEXT_ERR)
            return rc;
        if (id == CLI_NEXT_POS && file == NULL)
            file = a.value;
        else if (id == CLI_NEXT_POS && input == NULL)
            input = a.value;
        else if (id == CLI_NEXT_POS)
            return cli_usage_error("cascade", "query: too many arguments");
        count |= id == 1, invert |= id == 2, quiet |= id == 3, json |= id == 4;
    }
    if (file == NULL)
        return cli_usage_error("cascade", "query needs a cascade FILE");
    amq_cascade *c = ccascade_open(file);
    if (c == NULL)
        return CLI_EXIT_ERR;
    cli_keys k;
    const uint8_t *key;
    size_t len;
    uint64_t selected = 0;
    int r = -1;
    cli_json j;
    if (cli_keys_open(&k, input, false, false)) {
        while ((r = cli_keys_next(&k, &key, &len)) == 1) {
            bool member = amq_cascade_contains(c, key, len);
            if (member == invert)
                continue;
            selected++;
            if (count || quiet)
                continue;
            if (json) {
                cli_json_key_record(&j, key, len, false);
                cli_json_bool(&j, "member", member);
                cli_json_close(&j);
            } else {
                fwrite(key, 1, len, stdout);
                putchar('\n');
            }
        }
        cli_keys_close(&k);
    }
    amq_cascade_free(c);
    if (r != 0)
        return CLI_EXIT_ERR;
    if (count && !quiet)
        printf(json ? "{\"count\":%llu}\n" : "%llu\n",
               (unsigned long long)selected);
    return selected > 0 ? CLI_EXIT_OK : CLI_EXIT_NONE;
}

/* ---- info --------------------------------------------------------------------------- */

static void info_text(const amq_cascade_stats *s, const amq_cascade_level *l,
                      size_t nl, uint64_t file_bytes) {
    printf("method          %s\nversion         %llu\nmodel           %016llx "
           "(%zu bytes)\n",
           amq_learned_method_name(s->method), (unsigned long long)s->version,
           (unsigned long long)s->model_id, s->model_bytes);
    printf("members         %llu (added %llu, removed %llu, stale %llu)\n",
           (unsigned long long)s->members, (unsigned long long)s->added,
           (unsigned long long)s->removed, (unsigned long long)s->stale);
    printf(
        "bins            %u (accept from %u, safe up to %u, reject below %u)\n",
        s->bins, s->accept_bin, s->max_accept_bin, s->reject_bins);
    printf("held out        %llu certify, %llu tune non-members; eta %g\n",
           (unsigned long long)s->certify_n, (unsigned long long)s->tune_n,
           s->eta);
    printf("I_0 (accept)    p0 %.4g, upper limit %.4g\n", s->p0_hat,
           s->p0_upper);
    printf("%-6s %-23s %-15s %9s %9s %10s %10s %10s  %s\n", "level",
           "tau [lo, hi)", "prob [lo, hi)", "n", "bits/key", "p", "p upper",
           "eps", "filter");
    for (size_t i = 0; i < nl; i++) {
        double bpk = l[i].n ? 8.0 * (double)l[i].bytes / (double)l[i].n : 0.0;
        printf("%-6zu [%9.4g, %9.4g) [%.4f, %.4f) %9llu %9.3f %10.4g %10.4g "
               "%10.4g  %s\n",
               i + 1, l[i].tau_lo, l[i].tau_hi, l[i].prob_lo, l[i].prob_hi,
               (unsigned long long)l[i].n, bpk, l[i].p_hat, l[i].p_upper,
               l[i].eps,
               l[i].spec[0] ? l[i].spec
                            : (l[i].eps >= 1 ? "(accept)" : "(reject)"));
    }
    printf("bits/key        %.4f (the file's %llu bytes per member; in its "
           "structures %.4f: model %zu B, residuals %zu B, initial %zu B, "
           "buffer %zu B, tables %zu B)\n",
           file_bits_per_key(s, file_bytes), (unsigned long long)file_bytes,
           s->bits_per_key, s->model_bytes, s->residual_bytes, s->front_bytes,
           s->aux_bytes, s->table_bytes);
    printf("fpr bound       %.6g (estimate %.6g; target %g)\n", s->fpr_bound,
           s->fpr_estimate, s->target_fpr);
    if (s->worst_case_bound < 1.0)
        printf("worst case      %.6g (for any query distribution: the %s)\n",
               s->worst_case_bound,
               s->plain ? "filter's own rate" : "initial filter's rate");
    else
        printf("worst case      none (no initial filter; train with "
               "--worst-case E for a cap and a fallback)\n");
    if (s->fallback)
        printf("fallback        on: the worst-case bound is in force "
               "(learned bound %.6g withdrawn)\n",
               s->learned_bound);
    printf("chose           ");
    print_choice(stdout, s, file_bytes);
}

static void info_json(const amq_cascade_stats *s, const amq_cascade_level *l,
                      size_t nl, uint64_t file_bytes) {
    cli_json j;
    cli_json_init(&j, stdout, true);
    cli_json_open(&j, NULL, '{');
    cli_json_str(&j, "method", amq_learned_method_name(s->method));
    cli_json_u64(&j, "version", s->version);
    cli_json_u64(&j, "members", s->members);
    cli_json_num(&j, "fpr_bound", s->fpr_bound);
    cli_json_num(&j, "fpr_estimate", s->fpr_estimate);
    cli_json_num(&j, "target_fpr", s->target_fpr);
    cli_json_num(&j, "bits_per_key", file_bits_per_key(s, file_bytes));
    cli_json_num(&j, "structure_bits_per_key", s->bits_per_key);
    cli_json_u64(&j, "file_bytes", file_bytes);
    cli_json_num(&j, "p0", s->p0_hat);
    cli_json_num(&j, "p0_upper", s->p0_upper);
    cli_json_u64(&j, "model_bytes", s->model_bytes);
    cli_json_u64(&j, "residual_bytes", s->residual_bytes);
    cli_json_num(&j, "learned_bound", s->learned_bound);
    cli_json_num(&j, "worst_case_bound", s->worst_case_bound);
    cli_json_bool(&j, "fallback", s->fallback);
    cli_json_bool(&j, "plain", s->plain);
    cli_json_num(&j, "plain_bytes", s->plain_bytes);
    cli_json_open(&j, "levels", '[');
    for (size_t i = 0; i < nl; i++) {
        cli_json_open(&j, NULL, '{');
        cli_json_num(&j, "tau_lo", l[i].tau_lo);
        cli_json_num(&j, "tau_hi", l[i].tau_hi);
        cli_json_num(&j, "p", l[i].p_hat);
        cli_json_num(&j, "p_upper", l[i].p_upper);
        cli_json_num(&j, "eps", l[i].eps);
        cli_json_u64(&j, "n", l[i].n);
        cli_json_u64(&j, "bytes", l[i].bytes);
        cli_json_str(&j, "spec", l[i].spec);
        cli_json_close(&j);
    }
    cli_json_close(&j);
    cli_json_close(&j);
}

static int cmd_info(int argc, char **argv) {
    static const cli_opt opts[] = {{"json", 0, false, 1}, {NULL, 0, false, 0}};
    const char *file = NULL;
    bool json = false;
    cli_args a;
    int id, rc = CLI_EXIT_OK;
    cli_args_init(&a, "cascade", argc, argv);
    while ((id = next_opt(&a, opts, &rc)) != CLI_NEXT_END) {
        if (id == CLI_NEXT_ERR)
            return rc;
        if (id == 1)
            json = true;
        else if (file == NULL)
            file = a.value;
        else
            return cli_usage_error("cascade", "info: too many arguments");
    }
    if (file == NULL)
        return cli_usage_error("cascade", "info needs a cascade FILE");
    amq_cascade *c = ccascade_open(file);
    if (c == NULL)
        return CLI_EXIT_ERR;
    amq_cascade_stats s;
    amq_cascade_level l[AMQ_CASCADE_MAX_LEVELS + 1];
    size_t nl = 0;
    amq_cascade_get_stats(c, &s, l, AMQ_CASCADE_MAX_LEVELS + 1, &nl);
    uint64_t bytes = amq_cascade_save_size(c);
    if (json)
        info_json(&s, l, nl, bytes);
    else
        info_text(&s, l, nl, bytes);
    amq_cascade_free(c);
    return CLI_EXIT_OK;
}

/* ---- audit ---------------------------------------------------------------------------- */

static void audit_print(const amq_audit_report *r, const amq_audit_level *l) {
    printf("queries %llu, sampled %llu (%llu members, %llu non-members)\n",
           (unsigned long long)r->queries, (unsigned long long)r->sampled,
           (unsigned long long)r->members, (unsigned long long)r->nonmembers);
    printf("false negatives %llu\n", (unsigned long long)r->false_negatives);
    printf("realised fpr %.5g [%.5g, %.5g]; certified bound %.5g; audit bound "
           "%.5g\n",
           r->fpr_hat, r->fpr_lower, r->fpr_upper, r->bound_build,
           r->bound_audit);
    printf("drift chi2 %.4g (df %u, p %.3g), psi %.4g\n", r->drift_chi2,
           r->drift_df, r->drift_pvalue, r->drift_psi);
    for (size_t i = 0; i < r->nlevels; i++)
        printf("level %zu: p %.4g [%.4g, %.4g] build limit %.4g%s%s\n", i + 1,
               l[i].p_hat, l[i].p_lower, l[i].p_upper, l[i].p_build,
               l[i].unverified ? " unverified" : "",
               l[i].violated ? " VIOLATED" : "");
    printf("verdict: %s\n",
           r->violated     ? "VIOLATED: rebuild, or fall back to a plain filter"
           : r->unverified ? "unverified: keep sampling"
                           : "bound confirmed");
}

static void audit_json(const amq_audit_report *r, const amq_audit_level *l) {
    cli_json j;
    cli_json_init(&j, stdout, true);
    cli_json_open(&j, NULL, '{');
    cli_json_str(&j, "verdict",
                 r->violated     ? "violated"
                 : r->unverified ? "unverified"
                                 : "confirmed");
    cli_json_u64(&j, "queries", r->queries);
    cli_json_u64(&j, "sampled", r->sampled);
    cli_json_u64(&j, "members", r->members);
    cli_json_u64(&j, "nonmembers", r->nonmembers);
    cli_json_u64(&j, "false_negatives", r->false_negatives);
    cli_json_num(&j, "fpr", r->fpr_hat);
    cli_json_num(&j, "fpr_lower", r->fpr_lower);
    cli_json_num(&j, "fpr_upper", r->fpr_upper);
    cli_json_num(&j, "bound", r->bound_build);
    cli_json_num(&j, "audit_bound", r->bound_audit);
    cli_json_num(&j, "drift_chi2", r->drift_chi2);
    cli_json_u64(&j, "drift_df", r->drift_df);
    cli_json_num(&j, "drift_pvalue", r->drift_pvalue);
    cli_json_num(&j, "drift_psi", r->drift_psi);
    cli_json_open(&j, "levels", '[');
    for (size_t i = 0; i < r->nlevels; i++) {
        cli_json_open(&j, NULL, '{');
        cli_json_num(&j, "p", l[i].p_hat);
        cli_json_num(&j, "p_lower", l[i].p_lower);
        cli_json_num(&j, "p_upper", l[i].p_upper);
        cli_json_num(&j, "p_build", l[i].p_build);
        cli_json_bool(&j, "unverified", l[i].unverified);
        cli_json_bool(&j, "violated", l[i].violated);
        cli_json_close(&j);
    }
    cli_json_close(&j);
    cli_json_close(&j);
}

/* CLI_EXIT_VIOLATED when the audit rejects the bound. */
static int audit_run(amq_cascade *c, const ckeys *m, const ckeys *n,
                     double rate, uint64_t seed, bool json) {
    amq_audit *a = NULL;
    if (amq_audit_new(c, rate, seed, NULL, &a) != AMQ_OK) {
        cli_error("cascade audit: cannot start the audit");
        return CLI_EXIT_ERR;
    }
    /* interleave the two files as one query stream */
    size_t i = 0, j = 0;
    while (i < m->k.n || j < n->k.n) {
        bool member = j >= n->k.n || (i < m->k.n && i * n->k.n <= j * m->k.n);
        const ckeys *s = member ? m : n;
        size_t at = member ? i++ : j++;
        if (amq_audit_sample(a))
            (void)amq_audit_record(
                a, s->k.bytes + s->k.offsets[at],
                (size_t)(s->k.offsets[at + 1] - s->k.offsets[at]), member);
    }
    amq_audit_report r;
    amq_audit_level l[AMQ_CASCADE_MAX_LEVELS + 1];
    amq_audit_get_report(a, &r, l, AMQ_CASCADE_MAX_LEVELS + 1);
    if (json)
        audit_json(&r, l);
    else
        audit_print(&r, l);
    amq_audit_free(a);
    return r.violated ? CLI_EXIT_VIOLATED : CLI_EXIT_OK;
}

static int cmd_audit(int argc, char **argv) {
    static const cli_opt opts[] = {
        {"members", 0, true, 1}, {"nonmembers", 0, true, 2},
        {"rate", 0, true, 3},    {"seed", 0, true, 4},
        {"json", 0, false, 5},   {NULL, 0, false, 0}};
    const char *file = NULL, *mp = NULL, *np = NULL;
    double rate = 1.0;
    uint64_t seed = 1;
    bool json = false;
    cli_args a;
    int id, rc = CLI_EXIT_OK;
    cli_args_init(&a, "cascade", argc, argv);
    while ((id = next_opt(&a, opts, &rc)) != CLI_NEXT_END) {
        if (id == CLI_NEXT_ERR)
            return rc;
        json |= id == 5;
        if ((id == 3 &&
             !cli_parse_real("cascade", "--rate", a.value, 1e-9, 1, &rate)) ||
            (id == 4 && !cli_parse_u64("cascade", "--seed", a.value, &seed)))
            return CLI_EXIT_ERR;
        if (id == 1)
            mp = a.value;
        else if (id == 2)
            np = a.value;
        else if (id == CLI_NEXT_POS && file == NULL)
            file = a.value;
        else if (id == CLI_NEXT_POS)
            return cli_usage_error("cascade", "audit: too many arguments");
    }
    if (file == NULL || mp == NULL || np == NULL)
        return cli_usage_error("cascade",
                               "audit needs FILE, --members and --nonmembers");
    amq_cascade *c = ccascade_open(file);
    if (c == NULL)
        return CLI_EXIT_ERR;
    ckeys m, n;
    rc = CLI_EXIT_ERR;
    if (ckeys_read(&m, mp, "members")) {
        if (ckeys_read(&n, np, "non-members")) {
            rc = audit_run(c, &m, &n, rate, seed, json);
            ckeys_free(&n);
        }
        ckeys_free(&m);
    }
    amq_cascade_free(c);
    return rc;
}

/* ---- features ------------------------------------------------------------------------- */

/* One svmlight line: label, then index:value sorted, repeats summed. */
static void svm_line(int label, const uint32_t *idx, const int8_t *sign,
                     size_t n, int32_t *acc, uint32_t *touched) {
    size_t t = 0;
    for (size_t i = 0; i < n; i++) {
        if (acc[idx[i]] == 0)
            touched[t++] = idx[i];
        acc[idx[i]] += sign[i]; /* a cancelled sum may be re-listed: */
    }                           /* the sorted walk skips repeats     */
    /* insertion sort: a key has a few hundred features at most */
    for (size_t i = 1; i < t; i++)
        for (size_t j = i; j > 0 && touched[j - 1] > touched[j]; j--) {
            uint32_t x = touched[j];
            touched[j] = touched[j - 1];
            touched[j - 1] = x;
        }
    printf("%d", label);
    uint32_t last = UINT32_MAX;
    for (size_t i = 0; i < t; i++) {
        if (touched[i] == last)
            continue;
        last = touched[i];
        if (acc[last] != 0)
            printf(" %u:%d", last + 1, acc[last]);
        acc[last] = 0;
    }
    putchar('\n');
}

static int features_dump(const ckeys *s, int label, uint32_t dim_bits) {
    amq_feature_config fc = {dim_bits, 4};
    size_t cap = amq_features_max(&fc);
    uint32_t *idx = malloc(cap * sizeof *idx),
             *touched = malloc(cap * sizeof *touched);
    int8_t *sign = malloc(cap);
    int32_t *acc = calloc((size_t)1 << dim_bits, sizeof *acc);
    if (!idx || !touched || !sign || !acc) {
        free(idx), free(touched), free(sign), free(acc);
        cli_error("out of memory");
        return CLI_EXIT_ERR;
    }
    for (size_t i = 0; i < s->k.n; i++) {
        size_t n = 0;
        (void)amq_features(&fc, s->k.bytes + s->k.offsets[i],
                           (size_t)(s->k.offsets[i + 1] - s->k.offsets[i]), idx,
                           sign, cap, &n);
        svm_line(label, idx, sign, n, acc, touched);
    }
    free(idx), free(touched), free(sign), free(acc);
    return CLI_EXIT_OK;
}

static int cmd_features(int argc, char **argv) {
    static const cli_opt opts[] = {
        {"dim-bits", 0, true, 1}, {"label", 0, true, 2}, {NULL, 0, false, 0}};
    const char *file = NULL;
    uint32_t dim = 16, label = 1;
    cli_args a;
    int id, rc = CLI_EXIT_OK;
    cli_args_init(&a, "cascade", argc, argv);
    while ((id = next_opt(&a, opts, &rc)) != CLI_NEXT_END) {
        if (id == CLI_NEXT_ERR)
            return rc;
        if ((id == 1 && !parse_u32("--dim-bits", a.value,
                                   AMQ_FEATURE_DIM_BITS_MAX, &dim)) ||
            (id == 2 && !parse_u32("--label", a.value, 1, &label)))
            return CLI_EXIT_ERR;
        if (id == CLI_NEXT_POS)
            file = a.value;
    }
    if (dim < AMQ_FEATURE_DIM_BITS_MIN)
        return cli_usage_error("cascade", "--dim-bits: %u..%u",
                               AMQ_FEATURE_DIM_BITS_MIN,
                               AMQ_FEATURE_DIM_BITS_MAX);
    ckeys s;
    if (!ckeys_read(&s, file, "keys"))
        return CLI_EXIT_ERR;
    rc = features_dump(&s, (int)label, dim);
    ckeys_free(&s);
    return rc;
}

/* ---- dispatch -------------------------------------------------------------------------- */

int cli_cmd_cascade(int argc, char **argv) {
    static const cli_command subs[] = {
        {"train", cmd_train}, {"query", cmd_query},       {"info", cmd_info},
        {"audit", cmd_audit}, {"features", cmd_features}, {NULL, NULL}};
    return cli_dispatch("cascade", subs, argc, argv);
}
