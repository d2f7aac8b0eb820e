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

amq_status amq__score_sets(const amq_model *m, const amq__mem *mem,
                           const amq_keys *members, const amq_keys *tune,
                           const amq_keys *certify, amq__scores *z) {
    memset(z, 0, sizeof *z);
    amq_status st = amq__model_score_keys(m, members, &z->m);
    if (st == AMQ_OK)
        st = amq__model_score_keys(m, tune, &z->t);
    if (st == AMQ_OK)
        st = amq__model_score_keys(m, certify, &z->c);
    z->nm = members->n;
    z->nt = tune->n;
    z->nc = certify->n;
    if (st != AMQ_OK)
        amq__scores_free(mem, z);
    return st;
}

void amq__scores_free(const amq__mem *mem, amq__scores *z) {
    amq__free(mem, z->m, z->m ? z->nm * sizeof(double) : 0);
    amq__free(mem, z->t, z->t ? z->nt * sizeof(double) : 0);
    amq__free(mem, z->c, z->c ? z->nc * sizeof(double) : 0);
    memset(z, 0, sizeof *z);
}

/* Edges and the three histograms from the scores. */
static amq_status bin_scores(amq_cascade *c, const amq__scores *z) {
    uint32_t bins = c->bins;
    AMQ_RETURN_IF_ERR(amq__bin_edges(&c->mem, z->m, z->nm, z->t, z->nt, c->bins,
                                     c->edges, &bins));
    c->bins = bins;
    amq__histogram(c, z->m, z->nm, c->memb);
    amq__histogram(c, z->t, z->nt, c->tune);
    amq__histogram(c, z->c, z->nc, c->cert);
    c->tune_n = z->nt;
    c->certify_n = z->nc;
    c->members = z->nm;
    return AMQ_OK;
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
        /* a memory target counts the file: model, tables, filters, frame */
        double bound = amq_cascade_fpr_bound(c),
               bits = 8.0 * (double)amq_cascade_save_size(c) /
                      (double)(c->members ? c->members : 1);
        if (want_fpr > 0.0 && bound > want_fpr)
            c->cfg.fpr *= 0.995 * want_fpr / bound;
        else if (want_bits > 0.0 && bits > want_bits)
            c->cfg.bits_per_key *= 0.998 * want_bits / bits;
        else
            break;
        st = amq__diag(diag, AMQ_ERR_FULL, 0,
                       "the built filters miss the target (bound %.4g, %.4g "
                       "bits per key)",
                       bound, bits);
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

amq_status amq__cascade_build_scored(
    const amq_model *model, const amq_keys *members, const amq__scores *z,
    const amq_cascade_config *cfg, const amq_hasher *hasher,
    const amq__mem *mem, amq_cascade **out, amq_diag *diag) {
    double t0 = now_seconds();
    amq_cascade *c;
    AMQ_RETURN_IF_ERR(
        amq__cascade_alloc(model, cfg->bins, cfg, hasher, mem, &c));
    amq_status st = copy_spec(c->residual_spec, sizeof c->residual_spec,
                              cfg->residual, "sbbf", diag);
    if (st == AMQ_OK)
        st = copy_spec(c->aux_spec, sizeof c->aux_spec, cfg->aux, "blocked",
                       diag);
    c->cfg.residual = c->residual_spec;
    c->cfg.aux = c->aux_spec;
    if (st == AMQ_OK)
        st = bin_scores(c, z);
    if (st == AMQ_OK)
        st = realise(c, members, z->m, diag);
    if (st != AMQ_OK) {
        amq_cascade_free(c);
        return st;
    }
    c->build_seconds = now_seconds() - t0;
    *out = c;
    return AMQ_OK;
}

static amq_status build_with(const amq_model *model, const amq_keys *members,
                             const amq_keys *tune, const amq_keys *certify,
                             const amq_cascade_config *cfg,
                             const amq_hasher *hasher, const amq__mem *mem,
                             amq_cascade **out, amq_diag *diag) {
    amq__scores z;
    AMQ_RETURN_IF_ERR(amq__score_sets(model, mem, members, tune, certify, &z));
    amq_status st = amq__cascade_build_scored(model, members, &z, cfg, hasher,
                                              mem, out, diag);
    amq__scores_free(mem, &z);
    return st;
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
    if (rc.choose & ~AMQ_CHOOSE_MODEL) { /* the residual, bins, plain */
        amq__train_sets s = {members, NULL, NULL, NULL, tune, certify};
        return amq__cascade_choose(&s, model, &rc, opt, out, diag);
    }
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
    if (c->model == NULL)
        AMQ_RETURN_IF_ERR(amq__cascade_train_plain(members, c->residual_spec,
                                                   &c->cfg, &c->hasher, &c->mem,
                                                   out, diag));
    else
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
    if (st == AMQ_OK) {
        /* with very few members every one trains and calibrates */
        amq__train_sets s = {
            &p.members.view,
            p.train_m.view.n ? &p.train_m.view : &p.members.view,
            p.calib_m.view.n ? &p.calib_m.view : &p.members.view,
            &p.train_n.view,
            &p.tune.view,
            &p.certify.view};
        st = amq__cascade_choose(&s, NULL, &rc, opt, out, diag);
    }
    if (st == AMQ_OK)
        (*out)->build_seconds = now_seconds() - t0;
    parts_free(&mem, &p);
    return st;
}
