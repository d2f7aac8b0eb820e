/*
 * train.c — from key sets to a built cascade: validation, the
 * deterministic split, the model, scoring and binning, the plan, and the
 * check that what was built meets the target.
 *
 *   members ──┬── train (1 - holdout) ──▶ model ◀── train non-members
 *             ├── calibrate (holdout) ──▶ Platt / isotonic ◀── tune
 *             └── all (deduplicated) ──▶ n_ℓ, residual contents
 *   non-members ── train (1 - holdout) | tune (holdout/2) | certify
 *                                          │                  │
 *                        bins, DP, sizes ◀─┘                  └─▶ p_ℓ limits
 *
 * The realised filters can differ slightly from the engine's picture (a
 * filter's bound at its real load, whole blocks for few keys), so after
 * building, the certified bound (fpr target) or the total size (memory
 * target) is checked and, if missed, the plan is solved again against a
 * target tightened by the miss, up to four times; then AMQ_ERR_FULL.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/spec.h"
#include "learned/keyset.h"

#define SPLIT_SALT 0x73706c6974ULL
#define ATTEMPTS 5

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Scores of members, tune and certify; edges; the three histograms. */
static amq_status score_and_bin(amq_cascade *c, const amq_keys *members,
                                const amq_keys *tune, const amq_keys *certify,
                                double **zm) {
    double *zt = NULL, *zc = NULL;
    uint32_t bins = c->bins;
    amq_status st = amq__model_score_keys(c->model, members, zm);
    if (st == AMQ_OK)
        st = amq__model_score_keys(c->model, tune, &zt);
    if (st == AMQ_OK)
        st = amq__model_score_keys(c->model, certify, &zc);
    if (st == AMQ_OK)
        st = amq__bin_edges(&c->mem, *zm, members->n, zt, tune->n, c->bins,
                            c->edges, &bins);
    if (st == AMQ_OK) {
        c->bins = bins;
        amq__histogram(c, *zm, members->n, c->memb);
        amq__histogram(c, zt, tune->n, c->tune);
        amq__histogram(c, zc, certify->n, c->cert);
        c->tune_n = tune->n;
        c->certify_n = certify->n;
        c->members = members->n;
    }
    amq__free(&c->mem, zt, tune->n * sizeof(double));
    amq__free(&c->mem, zc, certify->n * sizeof(double));
    return st;
}

/* Plan, fill, check; on a miss tighten the internal target and retry. */
static amq_status realise(amq_cascade *c, const amq_keys *members,
                          const double *zm, amq_diag *diag) {
    const double want_fpr = c->cfg.fpr, want_bits = c->cfg.bits_per_key;
    amq_status st = AMQ_OK;
    for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
        amq__plan plan;
        amq__cascade_clear(c);
        st = amq__cascade_plan(c, &plan, diag);
        if (st == AMQ_OK)
            st = amq__cascade_fill(c, &plan, members, zm, diag);
        if (st != AMQ_OK)
            break;
        amq_cascade_stats s;
        amq_cascade_get_stats(c, &s, NULL, 0, NULL);
        if (want_fpr > 0.0 && s.fpr_bound > want_fpr)
            c->cfg.fpr *= 0.995 * want_fpr / s.fpr_bound;
        else if (want_bits > 0.0 && s.bits_per_key > want_bits)
            c->cfg.bits_per_key *= 0.998 * want_bits / s.bits_per_key;
        else
            break;
        st = amq__diag(diag, AMQ_ERR_FULL, 0,
                       "the built filters miss the target (bound %.4g, %.4g "
                       "bits per key)",
                       s.fpr_bound, s.bits_per_key);
    }
    c->cfg.fpr = want_fpr;
    c->cfg.bits_per_key = want_bits;
    return st;
}

static amq_status copy_spec(char *dst, size_t cap, const char *src,
                            const char *dflt, amq_diag *diag) {
    const char *s = src != NULL ? src : dflt;
    if (strlen(s) >= cap)
        return amq__diag(diag, AMQ_ERR_SPEC, 0, "spec longer than %zu bytes",
                         cap - 1);
    if (amq_filter_type_find(s) == NULL)
        return amq__diag(diag, AMQ_ERR_SPEC, 0, "unknown structure spec '%s'",
                         s);
    memcpy(dst, s, strlen(s) + 1);
    return AMQ_OK;
}

static amq_status build_with(const amq_model *model, const amq_keys *members,
                             const amq_keys *tune, const amq_keys *certify,
                             const amq_cascade_config *cfg,
                             const amq_hasher *hasher, const amq__mem *mem,
                             amq_cascade **out, amq_diag *diag) {
    double t0 = now_seconds(), *zm = NULL;
    amq_cascade *c;
    uint32_t bins = cfg->bins;
    AMQ_RETURN_IF_ERR(amq__cascade_alloc(model, bins, cfg, hasher, mem, &c));
    amq_status st = copy_spec(c->residual_spec, sizeof c->residual_spec,
                              cfg->residual, "sbbf", diag);
    if (st == AMQ_OK)
        st = copy_spec(c->aux_spec, sizeof c->aux_spec, cfg->aux, "blocked",
                       diag);
    c->cfg.residual = c->residual_spec;
    c->cfg.aux = c->aux_spec;
    if (st == AMQ_OK)
        st = score_and_bin(c, members, tune, certify, &zm);
    if (st == AMQ_OK)
        st = realise(c, members, zm, diag);
    amq__free(mem, zm, members->n * sizeof(double));
    if (st != AMQ_OK) {
        amq_cascade_free(c);
        return st;
    }
    c->build_seconds = now_seconds() - t0;
    *out = c;
    return AMQ_OK;
}

static bool sets_ok(const amq_keys *a, const amq_keys *b, const amq_keys *c) {
    return amq__keys_valid(a) && amq__keys_valid(b) && amq__keys_valid(c) &&
           a->n > 0 && b->n > 0 && c->n > 0;
}

amq_status amq_cascade_build(const amq_model *model, const amq_keys *members,
                             const amq_keys *tune, const amq_keys *certify,
                             const amq_cascade_config *cfg,
                             const amq_options *opt, amq_cascade **out,
                             amq_diag *diag) {
    amq_cascade_config rc;
    amq_hasher h;
    amq__mem mem;
    if (out == NULL || model == NULL || cfg == NULL)
        return AMQ_ERR_INVALID;
    *out = NULL;
    if (!sets_ok(members, tune, certify))
        return amq__diag(diag, AMQ_ERR_INVALID, 0,
                         "members, tune and certify sets must be non-empty");
    AMQ_RETURN_IF_ERR(amq__cascade_config_resolve(cfg, &rc, diag));
    rc.model = model->cfg;
    AMQ_RETURN_IF_ERR(amq__hasher_from_options(opt, AMQ_HASH_XXH3, &h));
    amq__mem_init(&mem, opt);
    return build_with(model, members, tune, certify, &rc, &h, &mem, out, diag);
}

amq_status amq_cascade_rebuild(const amq_cascade *c, const amq_keys *members,
                               const amq_keys *tune, const amq_keys *certify,
                               amq_cascade **out, amq_diag *diag) {
    if (out == NULL || c == NULL)
        return AMQ_ERR_INVALID;
    *out = NULL;
    if (!sets_ok(members, tune, certify))
        return amq__diag(diag, AMQ_ERR_INVALID, 0,
                         "members, tune and certify sets must be non-empty");
    AMQ_RETURN_IF_ERR(build_with(c->model, members, tune, certify, &c->cfg,
                                 &c->hasher, &c->mem, out, diag));
    (*out)->version = c->version + 1;
    return AMQ_OK;
}

/* ---- training from two key sets -------------------------------------------------- */

typedef struct parts {
    amq__owned_keys members, train_m, calib_m, train_n, tune, certify;
} parts;

static void parts_free(const amq__mem *mem, parts *p) {
    amq__owned_keys_free(mem, &p->members);
    amq__owned_keys_free(mem, &p->train_m);
    amq__owned_keys_free(mem, &p->calib_m);
    amq__owned_keys_free(mem, &p->train_n);
    amq__owned_keys_free(mem, &p->tune);
    amq__owned_keys_free(mem, &p->certify);
}

static amq_status split_all(const amq__mem *mem, const amq_keys *members,
                            const amq_keys *nonmembers,
                            const amq_cascade_config *cfg, parts *p,
                            amq_diag *diag) {
    size_t dropped = 0;
    uint64_t seed = cfg->model.seed ^ SPLIT_SALT;
    double h = cfg->holdout;
    memset(p, 0, sizeof *p);
    AMQ_RETURN_IF_ERR(amq__dedupe(mem, members, &p->members, &dropped));
    AMQ_RETURN_IF_ERR(
        amq__split(mem, &p->members.view, seed, h, 1.0, &p->train_m));
    AMQ_RETURN_IF_ERR(
        amq__split(mem, &p->members.view, seed, 0.0, h, &p->calib_m));
    AMQ_RETURN_IF_ERR(amq__split(mem, nonmembers, seed, h, 1.0, &p->train_n));
    AMQ_RETURN_IF_ERR(amq__split(mem, nonmembers, seed, 0.0, h / 2, &p->tune));
    AMQ_RETURN_IF_ERR(amq__split(mem, nonmembers, seed, h / 2, h, &p->certify));
    if (p->train_n.view.n == 0 || p->tune.view.n == 0 || p->certify.view.n == 0)
        return amq__diag(diag, AMQ_ERR_INVALID, 0,
                         "%zu non-members are too few to train, tune and "
                         "certify (each part got %zu, %zu, %zu)",
                         nonmembers->n, p->train_n.view.n, p->tune.view.n,
                         p->certify.view.n);
    return AMQ_OK;
}

static amq_status check_sets(const amq__mem *mem, const amq_keys *members,
                             const amq_keys *nonmembers, amq_diag *diag) {
    if (!amq__keys_valid(members) || !amq__keys_valid(nonmembers))
        return amq__diag(diag, AMQ_ERR_INVALID, 0, "malformed key set");
    if (members->n == 0 || nonmembers->n == 0)
        return amq__diag(diag, AMQ_ERR_INVALID, 0, "the %s set is empty",
                         members->n == 0 ? "member" : "non-member");
    size_t both = 0;
    AMQ_RETURN_IF_ERR(amq__overlap(mem, members, nonmembers, &both));
    if (both > 0)
        return amq__diag(diag, AMQ_ERR_INVALID, 0,
                         "%zu of the %zu non-member keys are also members",
                         both, nonmembers->n);
    return AMQ_OK;
}

amq_status amq_cascade_train(const amq_keys *members,
                             const amq_keys *nonmembers,
                             const amq_cascade_config *cfg,
                             const amq_options *opt, amq_cascade **out,
                             amq_diag *diag) {
    amq_cascade_config rc;
    amq__mem mem;
    parts p;
    if (out == NULL || cfg == NULL)
        return AMQ_ERR_INVALID;
    *out = NULL;
    AMQ_RETURN_IF_ERR(amq__cascade_config_resolve(cfg, &rc, diag));
    amq__mem_init(&mem, opt);
    AMQ_RETURN_IF_ERR(check_sets(&mem, members, nonmembers, diag));
    double t0 = now_seconds();
    amq_status st = split_all(&mem, members, nonmembers, &rc, &p, diag);
    amq_model *model = NULL;
    if (st == AMQ_OK) {
        /* with very few members every one trains and calibrates */
        const amq_keys *tm =
            p.train_m.view.n ? &p.train_m.view : &p.members.view;
        const amq_keys *cm =
            p.calib_m.view.n ? &p.calib_m.view : &p.members.view;
        st = amq_model_train(tm, &p.train_n.view, cm, &p.tune.view, &rc.model,
                             opt, &model);
    }
    if (st == AMQ_OK)
        st = amq_cascade_build(model, &p.members.view, &p.tune.view,
                               &p.certify.view, &rc, opt, out, diag);
    if (st == AMQ_OK)
        (*out)->build_seconds = now_seconds() - t0;
    amq_model_free(model);
    parts_free(&mem, &p);
    return st;
}
