/*
 * cascade_eval.c — `amq-lab cascade eval`: the measurements behind
 * docs/cascade.md, on the real key sets fetched by
 * scripts/fetch-cascade-data.sh and on synthetic key-value keys.
 *
 * Per dataset, non-members are split by a keyed hash into a test part
 * (25%, never seen by anything) and a pool; the pool into train / tune /
 * certify (50/25/25) and the members into train / calibrate (50/50). One
 * model is trained; every learned method is built around it
 * (amq_cascade_build), so methods differ only in what they build.
 *
 *   1. FPR measured on the test part against bits per key (everything:
 *      model, tables, filters, per member) for plain sbbf / blocked /
 *      ribbon / bloom, lbf, sandwich, plbf and the cascade; the bound next
 *      to each; an SVG per dataset.
 *   2. The seed's claims: the cascade at 5.5 bits/key against Bloom at 10;
 *      levels 1..5 at fixed memory; selectivity classes (synthetic keys).
 *   3. Bound coverage: the model fixed, the pool re-split R times into
 *      tune / certify / test; the cascade built at a target; how often the
 *      test FPR exceeds the certified bound, and bound / measured.
 *   4. Scoring and end-to-end ns/key (batch), build seconds.
 *   5. Shard budgets: the datasets as shards of one store.
 *
 * Synthetic key-value keys "t<tenant>/tbl<table>/r<row>": each of the
 * 200 x 8 (tenant, table) groups has member density
 * σ(logit(s) + sep · z_g), z_g ~ N(0, 1) from the group's hash; a row is a
 * member when its hash falls below the density. s is the selectivity
 * (members / key universe), sep the separability.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "ckeys.h"
#include "lab.h"

#define TEST_SEED 0x7e57ULL
#define POOL_SEED 0x9001ULL
#define MAX_METHODS 8

typedef struct eval_opts {
    const char *data, *out, *only, *dump, *residual;
    uint32_t dim_bits, resplits, kv_members;
    double coverage_fpr;
    bool quick;
} eval_opts;

typedef struct dataset {
    const char *name;
    ckeys members, nonmembers;
    ckeys test, pool;
    ckeys train_m, calib_m, train_n, tune, certify;
    amq_model *model;
    double auc, train_seconds;
} dataset;

typedef cpoint point;

static FILE *md; /* the markdown report (stdout and --out) */

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    if (md != NULL) {
        va_start(ap, fmt);
        vfprintf(md, fmt, ap);
        va_end(ap);
    }
    fflush(stdout);
}

/* The keys with lo <= u(key, seed) < hi (u as amq's split: XXH3 top 53
 * bits), for held-out test parts. */
static bool ckeys_split(const ckeys *in, uint64_t seed, double lo, double hi,
                        ckeys *out) {
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < in->k.n; i++) {
        const uint8_t *p = in->k.bytes + in->k.offsets[i];
        size_t len = (size_t)(in->k.offsets[i + 1] - in->k.offsets[i]);
        double u = (double)(XXH3_64bits_withSeed(p, len, seed) >> 11) * 0x1p-53;
        if (u >= lo && u < hi && !ckeys_push(out, p, len))
            return false;
    }
    return true;
}

/* ---- synthetic key-value keys --------------------------------------------------- */

static double unit(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return (double)(x >> 11) * 0x1p-53;
}

static double group_density(uint32_t g, double s, double sep) {
    double u1 = unit(g * 2 + 1) + 1e-12, u2 = unit(g * 2 + 2);
    double z = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
    double l = log(s / (1 - s)) + sep * z;
    return 1 / (1 + exp(-l));
}

enum { KV_TENANTS = 200, KV_TABLES = 8, KV_GROUPS = KV_TENANTS * KV_TABLES };

static bool kv_push(ckeys *c, uint32_t g, uint64_t row) {
    char buf[64];
    int n = snprintf(buf, sizeof buf, "t%04u/tbl%02u/r%010llu", g / KV_TABLES,
                     g % KV_TABLES, (unsigned long long)row);
    return ckeys_push(c, (const uint8_t *)buf, (size_t)n);
}

/* All members of a universe sized for nm members at selectivity s, and nn
 * non-members drawn uniformly from the rest of it. */
static bool kv_generate(double s, double sep, uint32_t nm, uint32_t nn,
                        ckeys *members, ckeys *non) {
    double mean = 0;
    for (uint32_t g = 0; g < KV_GROUPS; g++)
        mean += group_density(g, s, sep) / KV_GROUPS;
    uint64_t rows = (uint64_t)ceil(nm / mean / KV_GROUPS);
    memset(members, 0, sizeof *members);
    memset(non, 0, sizeof *non);
    for (uint32_t g = 0; g < KV_GROUPS; g++) {
        double d = group_density(g, s, sep);
        for (uint64_t r = 0; r < rows; r++)
            if (unit(((uint64_t)g << 40) ^ r) < d && !kv_push(members, g, r))
                return false;
    }
    uint64_t x = 42;
    while (non->k.n < nn) {
        x++;
        uint32_t g = (uint32_t)(unit(x * 7) * KV_GROUPS);
        uint64_t r = (uint64_t)(unit(x * 7 + 3) * rows);
        if (unit(((uint64_t)g << 40) ^ r) >= group_density(g, s, sep) &&
            !kv_push(non, g, r))
            return false;
    }
    return true;
}

/* ---- datasets ---------------------------------------------------------------------- */

static void dataset_free(dataset *d) {
    ckeys *all[] = {&d->members, &d->nonmembers, &d->test,
                    &d->pool,    &d->train_m,    &d->calib_m,
                    &d->train_n, &d->tune,       &d->certify};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        ckeys_free(all[i]);
    amq_model_free(d->model);
    d->model = NULL;
}

/* test / pool split, the pool's three parts, the model. */
static bool dataset_prepare(dataset *d, const eval_opts *o) {
    if (!ckeys_split(&d->nonmembers, TEST_SEED, 0.0, 0.25, &d->test) ||
        !ckeys_split(&d->nonmembers, TEST_SEED, 0.25, 1.0, &d->pool) ||
        !ckeys_split(&d->pool, POOL_SEED, 0.0, 0.5, &d->train_n) ||
        !ckeys_split(&d->pool, POOL_SEED, 0.5, 0.75, &d->tune) ||
        !ckeys_split(&d->pool, POOL_SEED, 0.75, 1.0, &d->certify) ||
        !ckeys_split(&d->members, POOL_SEED, 0.0, 0.5, &d->train_m) ||
        !ckeys_split(&d->members, POOL_SEED, 0.5, 1.0, &d->calib_m))
        return false;
    amq_model_config mc = {0};
    mc.features.dim_bits = o->dim_bits;
    mc.quantize = true;
    mc.calibration = AMQ_CALIB_PLATT;
    mc.seed = 1;
    double t0 = cli_now();
    if (amq_model_train(&d->train_m.k, &d->train_n.k, &d->calib_m.k, &d->tune.k,
                        &mc, NULL, &d->model) != AMQ_OK) {
        cli_error("eval: %s: training failed", d->name);
        return false;
    }
    d->train_seconds = cli_now() - t0;
    (void)amq_model_auc(d->model, &d->calib_m.k, &d->test.k, &d->auc);
    return true;
}

/* P(X >= k) for X ~ Binomial(n, p): how surprising k false positives in
 * n test keys are if the true rate is p (the bound). Summed in log space
 * below k (k is at most a few thousand here). */
static double binom_tail(uint64_t k, uint64_t n, double p) {
    if (k == 0)
        return 1.0;
    if (p <= 0.0)
        return 0.0;
    double below = 0.0, lp = log(p), lq = log1p(-p);
    for (uint64_t i = 0; i < k; i++)
        below += exp(lgamma((double)n + 1) - lgamma((double)i + 1) -
                     lgamma((double)(n - i) + 1) + (double)i * lp +
                     (double)(n - i) * lq);
    return fmax(0.0, 1.0 - below);
}

/* A measured rate above the bound beyond what the test part's sampling
 * explains (one-sided, 1%): evidence that the bound is wrong. */
static bool significantly_above(double fpr, double bound, size_t n) {
    uint64_t k = (uint64_t)llround(fpr * (double)n);
    return fpr > bound && binom_tail(k, n, bound) < 0.01;
}

/* What a user stores: the file's bytes per member. */
static double file_bits(const amq_cascade *c, const dataset *d) {
    return 8.0 * (double)amq_cascade_save_size(c) / (double)d->members.k.n;
}

static double measure_cascade(const amq_cascade *c, const ckeys *test) {
    uint8_t *out = malloc(test->k.n ? test->k.n : 1);
    if (out == NULL)
        return NAN;
    amq_cascade_contains_batch(c, &test->k, out);
    size_t fp = 0;
    for (size_t i = 0; i < test->k.n; i++)
        fp += out[i];
    free(out);
    return (double)fp / (double)test->k.n;
}

/* A learned method at a target; NULL (after a note) if it cannot. */
static const char *residual_spec; /* --residual (NULL: the default) */

static amq_cascade *build_method(const dataset *d, amq_learned_method m,
                                 double bits, double fpr, uint32_t levels) {
    amq_cascade_config cfg;
    amq_cascade_config_init(&cfg);
    cfg.residual = residual_spec;
    if (residual_spec != NULL)
        cfg.choose &= ~AMQ_CHOOSE_RESIDUAL;
    cfg.choose &= ~AMQ_CHOOSE_PLAIN; /* the learned structure is measured */
    cfg.method = m;
    cfg.bits_per_key = bits;
    cfg.fpr = fpr;
    cfg.levels = levels;
    amq_cascade *c = NULL;
    amq_diag dg = {0, ""};
    if (amq_cascade_build(d->model, &d->members.k, &d->tune.k, &d->certify.k,
                          &cfg, NULL, &c, &dg) != AMQ_OK)
        return NULL;
    return c;
}

static point learned_point(const dataset *d, amq_learned_method m, double bits,
                           uint32_t levels) {
    point p = {NAN, NAN, NAN};
    amq_cascade *c = build_method(d, m, bits, 0.0, levels);
    if (c == NULL)
        return p;
    p.bits = file_bits(c, d);
    p.bound = amq_cascade_fpr_bound(c);
    p.fpr = measure_cascade(c, &d->test);
    amq_cascade_free(c);
    return p;
}

/* What a default training gives (amq_cascade_train on the members and
 * the pool, nothing pinned) at a memory or rate target; the test part is
 * never seen. what (may be NULL) gets what training chose. */
static amq_cascade *train_default(const dataset *d, const ckeys *pool,
                                  double bits, double fpr, double cap,
                                  uint64_t seed) {
    amq_cascade_config cfg;
    amq_cascade_config_init(&cfg);
    cfg.bits_per_key = bits;
    cfg.fpr = fpr;
    cfg.worst_case = cap;
    cfg.model.seed = seed;
    amq_cascade *c = NULL;
    if (amq_cascade_train(&d->members.k, &pool->k, &cfg, NULL, &c, NULL) !=
        AMQ_OK)
        return NULL;
    return c;
}

static void describe_choice(const amq_cascade *c, char *buf, size_t cap) {
    amq_cascade_stats s;
    amq_cascade_level l[AMQ_CASCADE_MAX_LEVELS + 1];
    size_t nl = 0;
    amq_cascade_get_stats(c, &s, l, AMQ_CASCADE_MAX_LEVELS + 1, &nl);
    if (s.plain) {
        snprintf(buf, cap, "plain %s", nl ? l[0].spec : "?");
        char *comma = strchr(buf, ':');
        if (comma != NULL)
            *comma = 0;
        return;
    }
    const amq_model_config *mc = amq_model_config_of(amq_cascade_model(c));
    char res[32] = "";
    for (size_t i = 0; i < nl && !res[0]; i++)
        if (l[i].spec[0])
            snprintf(res, sizeof res, "%.*s", (int)strcspn(l[i].spec, ":"),
                     l[i].spec);
    snprintf(buf, cap, "2^%u %s, %u bins, %u × %s", mc->features.dim_bits,
             mc->quantize ? "int8" : "float", s.bins, s.levels,
             res[0] ? res : "none");
}

static point default_point(const dataset *d, double bits, double fpr,
                           char *what, size_t cap) {
    point p = {NAN, NAN, NAN};
    amq_cascade *c = train_default(d, &d->pool, bits, fpr, 0.0, 0);
    if (c == NULL)
        return p;
    p.bits = file_bits(c, d);
    p.bound = amq_cascade_fpr_bound(c);
    p.fpr = measure_cascade(c, &d->test);
    if (what != NULL)
        describe_choice(c, what, cap);
    amq_cascade_free(c);
    return p;
}

/* A plain filter of `spec` at a rate, measured on the test part; bits
 * per member are the file's. */
static point plain_at(const dataset *d, const char *spec, double fpr) {
    point p = {NAN, NAN, NAN};
    amq_hasher h;
    amq_options opt = {0};
    if (amq_filter_resolve_hasher(spec, &opt, &h) != AMQ_OK)
        return p;
    opt.hash = h.kind;
    opt.hash_seed = h.seed;
    uint64_t *hs = malloc(d->members.k.n * sizeof *hs);
    amq_filter *f = NULL;
    for (size_t i = 0; hs != NULL && i < d->members.k.n; i++)
        hs[i] = amq_hash64(
            &h, d->members.k.bytes + d->members.k.offsets[i],
            (size_t)(d->members.k.offsets[i + 1] - d->members.k.offsets[i]));
    if (hs != NULL && amq_filter_build(spec, hs, d->members.k.n, fpr, &opt, &f,
                                       NULL) == AMQ_OK) {
        size_t fp = 0;
        for (size_t i = 0; i < d->test.k.n; i++)
            fp += amq_filter_contains(
                f, d->test.k.bytes + d->test.k.offsets[i],
                (size_t)(d->test.k.offsets[i + 1] - d->test.k.offsets[i]));
        p.fpr = (double)fp / (double)d->test.k.n;
        p.bits = 8.0 * (double)amq_filter_serialized_size(f) /
                 (double)d->members.k.n;
        p.bound = amq_filter_fpr_bound(f);
    }
    amq_filter_free(f);
    free(hs);
    return p;
}

/* A plain filter of `spec` at about `bits` bits per member (its curve's
 * rate there). */
static point plain_point(const dataset *d, const char *spec, double bits) {
    point p = {NAN, NAN, NAN};
    double fpr;
    if (amq_curve_fpr(spec, bits, &fpr) != AMQ_OK || !(fpr > 0 && fpr < 1))
        return p;
    return plain_at(d, spec, fpr);
}

/* ---- 1. FPR against bits per key --------------------------------------------------- */

static const char *const method_names[MAX_METHODS] = {
    "bloom", "sbbf", "blocked", "ribbon", "lbf", "sandwich", "plbf", "cascade"};

static point method_point(const dataset *d, int m, double bits) {
    if (m < 4)
        return plain_point(d, method_names[m], bits);
    if (m == 7)
        return default_point(d, bits, 0.0, NULL, 0);
    static const amq_learned_method lm[3] = {
        AMQ_LEARNED_LBF, AMQ_LEARNED_SANDWICH, AMQ_LEARNED_PLBF};
    return learned_point(d, lm[m - 4], bits, 0);
}

static void sweep(const dataset *d, const eval_opts *o) {
    static const double grid[] = {3, 4, 5, 5.5, 6, 7, 8, 10, 12, 14};
    size_t ng = o->quick ? 5 : sizeof grid / sizeof grid[0];
    point pts[MAX_METHODS][CSVG_MAX_POINTS];
    say("\n### %s: measured FPR (bound) against bits per key\n\n", d->name);
    say("| bits/key target |");
    for (int m = 0; m < MAX_METHODS; m++)
        say(" %s |", method_names[m]);
    say("\n|---:|");
    for (int m = 0; m < MAX_METHODS; m++)
        say("---|");
    say("\n");
    for (size_t g = 0; g < ng; g++) {
        say("| %.1f |", grid[g]);
        for (int m = 0; m < MAX_METHODS; m++) {
            pts[m][g] = method_point(d, m, grid[g]);
            if (isnan(pts[m][g].fpr))
                say(" — |");
            else
                say(" %.4f%% (%.4f%%) @%.2f |", 100 * pts[m][g].fpr,
                    100 * pts[m][g].bound, pts[m][g].bits);
        }
        say("\n");
    }
    if (o->out != NULL) {
        char path[1024];
        snprintf(path, sizeof path, "%s/cascade-%s.svg", o->out, d->name);
        csvg_fpr_plot(path, d->name, method_names, MAX_METHODS,
                      (const cpoint(*)[CSVG_MAX_POINTS])pts, ng);
    }
}

/* ---- 1b. bytes at a certified target ------------------------------------------------ */

static const char *const plain_types[] = {"ribbon", "fuse8",   "fuse16", "xor8",
                                          "xor16",  "blocked", "sbbf"};
#define NPLAIN (sizeof plain_types / sizeof plain_types[0])

/* Every plain type and the default training at each rate target: bits per
 * member of the file, at a certified bound within the target. The default
 * must be at most the best plain filter in every row. */
static void target_table(const dataset *d, const eval_opts *o) {
    static const double targets[] = {0.05, 0.02, 0.01, 0.005, 0.001, 0.0001};
    size_t nt = o->quick ? 3 : sizeof targets / sizeof targets[0];
    say("\n### %s: bits per key (the file's) at a certified target\n\n",
        d->name);
    say("| target |");
    for (size_t t = 0; t < NPLAIN; t++)
        say(" %s |", plain_types[t]);
    say(" default | its bound | measured | default ÷ best plain | chose "
        "|\n|---:|");
    for (size_t t = 0; t < NPLAIN + 4; t++)
        say("---:|");
    say("---|\n");
    for (size_t i = 0; i < nt; i++) {
        double best = INFINITY;
        say("| %g%% |", 100 * targets[i]);
        for (size_t t = 0; t < NPLAIN; t++) {
            point p = plain_at(d, plain_types[t], targets[i]);
            if (isnan(p.bits) || p.bound > targets[i] * (1 + 1e-9)) {
                say(" — |");
                continue;
            }
            best = fmin(best, p.bits);
            say(" %.3f |", p.bits);
        }
        char what[128] = "";
        point c = default_point(d, 0.0, targets[i], what, sizeof what);
        say(" **%.3f** | %.4f%% | %.4f%% | %.3f | %s |\n", c.bits,
            100 * c.bound, 100 * c.fpr, c.bits / best, what);
    }
}

/* ---- 1c. stability across re-splits --------------------------------------------------- */

/* The default training with R split seeds: the spread of its size, and
 * whether the bound held on the test part. */
static void stability(const dataset *d, const eval_opts *o) {
    static const double targets[] = {0.01, 0.001};
    uint32_t runs = o->quick ? 4 : 20;
    say("\n### %s: the default training over %u split seeds\n\n", d->name,
        runs);
    say("| target | bits/key min | max | max ÷ min | bound max | measured "
        "max | measured above the bound | of which significant (1%%) "
        "|\n|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (size_t i = 0; i < 2; i++) {
        double lo = INFINITY, hi = 0, bmax = 0, fmax_ = 0;
        uint32_t above = 0, significant = 0, built = 0;
        for (uint32_t r = 0; r < runs; r++) {
            amq_cascade *c =
                train_default(d, &d->pool, 0.0, targets[i], 0.0, 1000 + r);
            if (c == NULL)
                continue;
            double b = file_bits(c, d), bound = amq_cascade_fpr_bound(c),
                   f = measure_cascade(c, &d->test);
            lo = fmin(lo, b);
            hi = fmax(hi, b);
            bmax = fmax(bmax, bound);
            fmax_ = fmax(fmax_, f);
            above += f > bound;
            significant += significantly_above(f, bound, d->test.k.n);
            built++;
            amq_cascade_free(c);
        }
        say("| %g%% | %.3f | %.3f | %.3f | %.4f%% | %.4f%% | %u of %u | %u "
            "|\n",
            100 * targets[i], lo, hi, hi / lo, 100 * bmax, 100 * fmax_, above,
            built, significant);
    }
}

/* ---- 1d. a shifted query distribution and the worst-case cap ------------------------- */

static bool has_hyphen(const ckeys *k, size_t i) {
    size_t len = (size_t)(k->k.offsets[i + 1] - k->k.offsets[i]);
    return memchr(k->k.bytes + k->k.offsets[i], '-', len) != NULL;
}

/* The keys of in with (want = true) or without a hyphen. */
static bool ckeys_hyphen(const ckeys *in, bool want, ckeys *out) {
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < in->k.n; i++)
        if (has_hyphen(in, i) == want &&
            !ckeys_push(out, in->k.bytes + in->k.offsets[i],
                        (size_t)(in->k.offsets[i + 1] - in->k.offsets[i])))
            return false;
    return true;
}

/* Trained on non-members without a hyphen, asked the hyphenated ones
 * ("word-word.tld" host names, never seen): the learned bound speaks of
 * the training distribution only; the cap holds for any. */
static void shift(const dataset *d, const eval_opts *o) {
    ckeys pool, same, moved;
    if (!ckeys_hyphen(&d->pool, false, &pool) ||
        !ckeys_hyphen(&d->test, false, &same) ||
        !ckeys_hyphen(&d->test, true, &moved) || moved.k.n == 0) {
        ckeys_free(&pool);
        ckeys_free(&same);
        ckeys_free(&moved);
        return;
    }
    static const double caps[] = {0.0, 0.1, 0.05, 0.02};
    size_t nc = o->quick ? 2 : sizeof caps / sizeof caps[0];
    say("\n### %s: a shifted query distribution (trained without hyphens, "
        "asked %zu hyphenated host names), target 1%%\n\n",
        d->name, moved.k.n);
    say("| worst-case cap | bits/key | certified bound | measured, as "
        "trained | measured, shifted | audit of the shifted queries "
        "|\n|---:|---:|---:|---:|---:|---|\n");
    for (size_t i = 0; i < nc; i++) {
        amq_cascade *c = train_default(d, &pool, 0.0, 0.01, caps[i], 0);
        if (c == NULL) {
            say("| %g | — | | | | |\n", caps[i]);
            continue;
        }
        amq_audit *a = NULL;
        const char *verdict = "—";
        if (amq_audit_new(c, 1.0, 1, NULL, &a) == AMQ_OK) {
            for (size_t k = 0; k < moved.k.n; k++) {
                (void)amq_audit_sample(a);
                (void)amq_audit_record(
                    a, moved.k.bytes + moved.k.offsets[k],
                    (size_t)(moved.k.offsets[k + 1] - moved.k.offsets[k]),
                    false);
            }
            amq_audit_report r;
            amq_audit_get_report(a, &r, NULL, 0);
            verdict = r.violated     ? "VIOLATED"
                      : r.unverified ? "unverified"
                                     : "ok";
        }
        amq_audit_free(a);
        amq_cascade_stats s;
        amq_cascade_get_stats(c, &s, NULL, 0, NULL);
        char cap[48] = "none";
        if (caps[i] > 0)
            snprintf(cap, sizeof cap, "%g%% (bound %.3f%%)", 100 * caps[i],
                     100 * s.worst_case_bound);
        else if (s.plain)
            snprintf(cap, sizeof cap, "none (plain: %.3f%%)",
                     100 * s.fpr_bound);
        say("| %s | %.3f | %.4f%% | %.4f%% | %.4f%% | %s |\n", cap,
            file_bits(c, d), 100 * s.fpr_bound, 100 * measure_cascade(c, &same),
            100 * measure_cascade(c, &moved), verdict);
        amq_cascade_free(c);
    }
    ckeys_free(&pool);
    ckeys_free(&same);
    ckeys_free(&moved);
}

/* ---- 2. the seed's claims ---------------------------------------------------------- */

static void claims(const dataset *d) {
    point bloom10 = plain_point(d, "bloom", 10.0);
    char what[128] = "";
    point cas = default_point(d, 5.5, 0.0, what, sizeof what);
    say("\n### %s: the cascade at 5.5 bits/key against Bloom at 10 (Table "
        "4)\n\n",
        d->name);
    say("| method | bits/key | measured FPR | certified bound "
        "|\n|---|---:|---:|---:|\n");
    say("| bloom | %.2f | %.4f%% | %.4f%% |\n", bloom10.bits, 100 * bloom10.fpr,
        100 * bloom10.bound);
    say("| cascade (default training: %s) | %.2f | %.4f%% | %.4f%% |\n", what,
        cas.bits, 100 * cas.fpr, 100 * cas.bound);
    say("\n### %s: levels at fixed memory (Table 8; 5.5 bits/key, the "
        "evaluation's model, residual and bins chosen)\n\n",
        d->name);
    say("| levels | bits/key | measured FPR | certified bound "
        "|\n|---:|---:|---:|---:|\n");
    for (uint32_t l = 1; l <= 5; l++) {
        point p = learned_point(d, AMQ_LEARNED_CASCADE, 5.5, l);
        say("| %u | %.2f | %.4f%% | %.4f%% |\n", l, p.bits, 100 * p.fpr,
            100 * p.bound);
    }
}

/* ---- 3. bound coverage ---------------------------------------------------------------- */

static void coverage(const dataset *d, const eval_opts *o) {
    uint32_t exceed = 0, significant = 0, built = 0;
    double ratio_sum = 0, ratio_min = INFINITY, ratio_max = 0;
    for (uint32_t r = 0; r < o->resplits; r++) {
        ckeys tune, cert, test;
        uint64_t seed = 0xc0fe + r;
        bool ok = ckeys_split(&d->pool, seed, 0.0, 0.3, &tune) &&
                  ckeys_split(&d->pool, seed, 0.3, 0.6, &cert) &&
                  ckeys_split(&d->pool, seed, 0.6, 1.0, &test);
        amq_cascade_config cfg;
        amq_cascade_config_init(&cfg);
        cfg.residual = residual_spec;
        cfg.choose &= ~AMQ_CHOOSE_PLAIN; /* the learned certificate */
        if (residual_spec != NULL)
            cfg.choose &= ~AMQ_CHOOSE_RESIDUAL;
        cfg.fpr = o->coverage_fpr;
        amq_cascade *c = NULL;
        if (ok && amq_cascade_build(d->model, &d->members.k, &tune.k, &cert.k,
                                    &cfg, NULL, &c, NULL) == AMQ_OK) {
            double fpr = measure_cascade(c, &test),
                   bound = amq_cascade_fpr_bound(c);
            built++;
            exceed += fpr > bound;
            significant += significantly_above(fpr, bound, test.k.n);
            double ratio = fpr > 0 ? bound / fpr : INFINITY;
            ratio_sum += isfinite(ratio) ? ratio : 0;
            ratio_min = fmin(ratio_min, ratio);
            ratio_max = fmax(ratio_max, isfinite(ratio) ? ratio : ratio_max);
        }
        amq_cascade_free(c);
        ckeys_free(&tune);
        ckeys_free(&cert);
        ckeys_free(&test);
    }
    say("\n### %s: bound coverage over %u re-splits (target %g, eta 1e-3)\n\n",
        d->name, o->resplits, o->coverage_fpr);
    say("| built | test FPR above the bound | of which significant (1%%) | "
        "bound / measured: mean | min | max |\n"
        "|---:|---:|---:|---:|---:|---:|\n| %u | %u | %u | %.2f | %.2f | %.2f "
        "|\n",
        built, exceed, significant, built ? ratio_sum / built : NAN, ratio_min,
        ratio_max);
}

/* ---- 4. speed ---------------------------------------------------------------------------- */

/* Thread CPU time (the machine may be shared). */
static double cpu_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void speed(const dataset *d) {
    amq_cascade *c = build_method(d, AMQ_LEARNED_CASCADE, 0.0, 0.01, 0);
    if (c == NULL)
        c = build_method(d, AMQ_LEARNED_CASCADE, 8.0, 0.0, 0);
    if (c == NULL)
        return;
    const amq_keys *k = &d->test.k;
    double *z = malloc(k->n * sizeof *z);
    uint8_t *out = malloc(k->n);
    double t0 = cpu_now();
    for (int rep = 0; rep < 3; rep++)
        amq_model_score_batch(d->model, k, z);
    double t1 = cpu_now();
    for (int rep = 0; rep < 3; rep++)
        amq_cascade_contains_batch(c, k, out);
    double t2 = cpu_now();
    double bytes = (double)k->offsets[k->n] / (double)k->n;
    amq_cascade_stats s;
    amq_cascade_get_stats(c, &s, NULL, 0, NULL);
    say("\n### %s: speed (%.1f-byte keys on average)\n\n", d->name, bytes);
    say("| model train s | cascade build s | scoring ns/key (batch) | "
        "end-to-end ns/key (batch) | AUC |\n"
        "|---:|---:|---:|---:|---:|\n| %.2f | %.2f | %.1f | %.1f | %.4f |\n",
        d->train_seconds, s.build_seconds, 1e9 * (t1 - t0) / (3.0 * k->n),
        1e9 * (t2 - t1) / (3.0 * k->n), d->auc);
    free(z);
    free(out);
    amq_cascade_free(c);
}

/* ---- 5. selectivity classes and shards ----------------------------------------------- */

static void selectivity(const eval_opts *o) {
    static const double classes[] = {0.0001, 0.0005, 0.001, 0.005, 0.01};
    say("\n### synthetic KV: selectivity classes (Table 7; Bloom and the "
        "default at 10 bits/key)\n\n");
    say("| selectivity | members | Bloom FPR | cascade FPR | reduction "
        "|\n|---:|---:|---:|---:|---:|\n");
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++) {
        dataset d = {.name = "kv"};
        if (!kv_generate(classes[i], 2.5, o->kv_members, 4 * o->kv_members,
                         &d.members, &d.nonmembers) ||
            !dataset_prepare(&d, o)) {
            dataset_free(&d);
            continue;
        }
        point b = plain_point(&d, "bloom", 10.0);
        point c = default_point(&d, 10.0, 0.0, NULL, 0);
        say("| %.2f%% | %zu | %.4f%% | %.4f%% | %.1f%% |\n", 100 * classes[i],
            d.members.k.n, 100 * b.fpr, 100 * c.fpr, 100 * (1 - c.fpr / b.fpr));
        dataset_free(&d);
    }
}

static void shard_table(dataset *ds, size_t nd) {
    static const double eps[] = {0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002};
    enum { NE = 7 };
    double e[8][NE], bits[8][NE];
    amq_cascade_shard_curve sc[8];
    size_t ns = 0;
    for (size_t i = 0; i < nd && ns < 8; i++) {
        size_t np = 0;
        for (size_t j = 0; j < NE; j++) {
            amq_cascade *c =
                build_method(&ds[i], AMQ_LEARNED_CASCADE, 0.0, eps[j], 0);
            if (c == NULL)
                continue;
            amq_cascade_stats s;
            amq_cascade_get_stats(c, &s, NULL, 0, NULL);
            e[ns][np] = s.fpr_bound;
            bits[ns][np++] = s.bits_per_key * (double)s.members;
            amq_cascade_free(c);
        }
        if (np > 0) {
            sc[ns] = (amq_cascade_shard_curve){1.0 / (double)nd, e[ns],
                                               bits[ns], np};
            ns++;
        }
    }
    double out[8], mem[8], g = 0.01, total = 0, equal = 0;
    if (ns == 0 || amq_cascade_shard_budgets(sc, ns, g, out, mem) != AMQ_OK)
        return;
    say("\n### shard budgets: the datasets as shards (equal query shares, "
        "global eps %g)\n\n",
        g);
    say("| shard | eps chosen | bits chosen | bits at equal eps "
        "|\n|---|---:|---:|---:|\n");
    for (size_t m = 0; m < ns; m++) {
        double eq[1], eb[1];
        amq_cascade_shard_curve one = sc[m];
        one.weight = 1.0;
        (void)amq_cascade_shard_budgets(&one, 1, g, eq, eb);
        total += mem[m];
        equal += eb[0];
        say("| %s | %.4g | %.0f | %.0f |\n", ds[m].name, out[m], mem[m], eb[0]);
    }
    say("| total | | %.0f | %.0f (%.1f%% more) |\n", total, equal,
        100 * (equal / total - 1));
}

/* ---- driver ---------------------------------------------------------------------------------- */

static bool load_real(dataset *d, const eval_opts *o, const char *name) {
    char mp[1024], np[1024];
    snprintf(mp, sizeof mp, "%s/%s.members", o->data, name);
    snprintf(np, sizeof np, "%s/%s.nonmembers", o->data, name);
    d->name = name;
    if (!ckeys_read(&d->members, mp, "members"))
        return false;
    if (!ckeys_read(&d->nonmembers, np, "non-members"))
        return false;
    return dataset_prepare(d, o);
}

static int eval_parse(int argc, char **argv, eval_opts *o) {
    static const cli_opt opts[] = {
        {"data", 0, true, 1},       {"out", 'o', true, 2},
        {"only", 0, true, 3},       {"quick", 0, false, 4},
        {"resplits", 0, true, 5},   {"dim-bits", 0, true, 6},
        {"kv-members", 0, true, 7}, {"dump", 0, true, 8},
        {"residual", 0, true, 9},   {NULL, 0, false, 0}};
    cli_args a;
    int id;
    uint64_t v;
    cli_args_init(&a, "cascade", argc, argv);
    while ((id = cli_next(&a, opts)) != CLI_NEXT_END) {
        if (id == CLI_NEXT_ERR)
            return CLI_EXIT_ERR;
        if (id == CLI_OPT_HELP)
            return cli_help_print(stdout, "cascade") ? CLI_EXIT_OK
                                                     : CLI_EXIT_ERR;
        if (id == 1)
            o->data = a.value;
        if (id == 2)
            o->out = a.value;
        if (id == 3)
            o->only = a.value;
        if (id == 4)
            o->quick = true;
        if (id == 8)
            o->dump = a.value;
        if (id == 9)
            o->residual = a.value;
        if (id >= 5 && id <= 7 &&
            !cli_parse_u64("cascade", "option", a.value, &v))
            return CLI_EXIT_ERR;
        if (id == 5)
            o->resplits = (uint32_t)v;
        if (id == 6)
            o->dim_bits = (uint32_t)v;
        if (id == 7)
            o->kv_members = (uint32_t)v;
        if (id == CLI_NEXT_POS)
            return cli_usage_error("cascade", "eval: unexpected '%s'", a.value);
    }
    if (o->dim_bits < AMQ_FEATURE_DIM_BITS_MIN ||
        o->dim_bits > AMQ_FEATURE_DIM_BITS_MAX)
        return cli_usage_error("cascade", "--dim-bits out of range");
    return -1;
}

static bool wanted(const eval_opts *o, const char *name) {
    return o->only == NULL || strstr(o->only, name) != NULL;
}

static bool dump_keys(const char *dir, const char *name, const char *part,
                      const ckeys *k) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.%s.txt", dir, name, part);
    FILE *fp = fopen(path, "w");
    if (fp == NULL)
        return false;
    for (size_t i = 0; i < k->k.n; i++) {
        fwrite(k->k.bytes + k->k.offsets[i], 1,
               (size_t)(k->k.offsets[i + 1] - k->k.offsets[i]), fp);
        fputc('\n', fp);
    }
    return fclose(fp) == 0;
}

/* The model's training and test keys and its AUC, for the scikit-learn
 * cross-check (bench/cascade/sklearn_auc.py). */
static void dump_split(const dataset *d, const eval_opts *o) {
    char path[1024];
    mkdir(o->dump, 0755);
    bool ok = dump_keys(o->dump, d->name, "train_m", &d->train_m) &&
              dump_keys(o->dump, d->name, "train_n", &d->train_n) &&
              dump_keys(o->dump, d->name, "test_m", &d->calib_m) &&
              dump_keys(o->dump, d->name, "test_n", &d->test);
    snprintf(path, sizeof path, "%s/%s.auc", o->dump, d->name);
    FILE *fp = ok ? fopen(path, "w") : NULL;
    if (fp == NULL) {
        cli_error("eval: cannot write the split to %s", o->dump);
        return;
    }
    fprintf(fp, "%.6f %u\n", d->auc, o->dim_bits);
    fclose(fp);
}

static void eval_dataset(dataset *d, const eval_opts *o) {
    if (o->dump != NULL) {
        dump_split(d, o);
        say("\n%s: model AUC %.4f (split written to %s)\n", d->name, d->auc,
            o->dump);
        return;
    }
    say("\n## %s: %zu members, %zu non-members (%zu test), model AUC %.4f\n",
        d->name, d->members.k.n, d->nonmembers.k.n, d->test.k.n, d->auc);
    sweep(d, o);
    target_table(d, o);
    stability(d, o);
    if (strcmp(d->name, "hosts") == 0)
        shift(d, o);
    claims(d);
    coverage(d, o);
    speed(d);
}

static int cascade_eval(int argc, char **argv) {
    eval_opts o = {.data = "cascade-data",
                   .out = NULL,
                   .dim_bits = 14,
                   .resplits = 100,
                   .kv_members = 50000,
                   .coverage_fpr = 0.01};
    int rc = eval_parse(argc, argv, &o);
    if (rc >= 0)
        return rc;
    residual_spec = o.residual;
    if (o.quick) {
        o.resplits = o.resplits < 10 ? o.resplits : 10;
        o.kv_members = o.kv_members < 10000 ? o.kv_members : 10000;
    }
    if (o.out != NULL) {
        char path[1024];
        mkdir(o.out, 0755);
        snprintf(path, sizeof path, "%s/cascade-eval.md", o.out);
        md = fopen(path, "w");
    }
    dataset ds[3];
    memset(ds, 0, sizeof ds);
    size_t nd = 0;
    const char *real[2] = {"hosts", "words"};
    for (int i = 0; i < 2; i++)
        if (wanted(&o, real[i]) && load_real(&ds[nd], &o, real[i]))
            eval_dataset(&ds[nd++], &o);
    if (wanted(&o, "kv")) {
        ds[nd].name = "kv";
        if (kv_generate(0.001, 2.5, o.kv_members, 8 * o.kv_members,
                        &ds[nd].members, &ds[nd].nonmembers) &&
            dataset_prepare(&ds[nd], &o))
            eval_dataset(&ds[nd++], &o);
        selectivity(&o);
    }
    shard_table(ds, nd);
    for (size_t i = 0; i < 3; i++)
        dataset_free(&ds[i]);
    if (md != NULL)
        fclose(md);
    return CLI_EXIT_OK;
}

int lab_cmd_cascade(int argc, char **argv) {
    static const cli_command subs[] = {{"eval", cascade_eval}, {NULL, NULL}};
    return cli_dispatch("cascade", subs, argc, argv);
}
