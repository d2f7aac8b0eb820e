/*
 * choose.c — what training chooses by itself: the model's size, the
 * residual type, the bins, or no model at all (a plain filter), by
 * building every candidate and comparing what it costs.
 *
 *   plain filters (ribbon, fuse, xor, blocked) ──┐
 *   for each model (int8, 2^8 .. 2^18; float):   ├─▶ keep the smallest file
 *     for each residual type, then each bin count ┘   (or, at a memory
 *       build, certify, check the target                target, the lowest
 *                                                        certified bound)
 *
 * Every learned candidate is certified the same way (its own plan, the
 * same certify split), so the comparison is between bounds of equal
 * standing; a plain filter's bound is its own rate, for any query
 * distribution. Candidates are compared by their saved bytes, the model,
 * tables and frame included, because that is what a user stores and
 * loads. Larger models are tried only while the model alone weighs less
 * than the best candidate so far: the search stops early on small sets
 * (where the plain filter wins before any model is trained) and on strong
 * scorers (where a small model already leaves little for the residuals).
 */
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "core/diag.h"
#include "core/mem.h"
#include "learned/learned.h"

#define DIM_MIN 8u
#define DIM_MAX 18u
#define DIM_STEP 2u
/* Frame and table bytes every learned cascade pays beyond its model (the
 * fixed parameters, one region, the smallest bin tables): the bound that
 * stops the model search. */
#define LEARNED_MIN_BYTES (64 + 472 + 32 + 32 * 21)

static const char *const PLAIN_TYPES[] = {"ribbon", "fuse8", "fuse16",
                                          "xor8",   "xor16", "blocked"};
static const char *const STATIC_RESIDUALS[] = {"ribbon", "fuse8", "xor8"};
static const char *const DYNAMIC_RESIDUALS[] = {"blocked", "cuckoo", "qf"};
static const uint32_t BIN_CHOICES[] = {128, 64, 32};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

typedef struct chooser {
    const amq__train_sets *s;
    const amq_cascade_config *cfg;
    const amq_options *opt;
    amq__mem mem;
    amq_hasher hasher;
    amq_cascade *best;
    double best_cost; /* bytes (fpr target) or bound (memory target)   */
    size_t best_bytes;
    double plain_bytes; /* the best plain filter's bytes, 0: none          */
    amq_status last;    /* the last candidate's failure                    */
    bool fatal;         /* out of memory: the whole training fails         */
    amq_diag diag;
} chooser;

static double cost_of(const chooser *ch, const amq_cascade *c) {
    return ch->cfg->fpr > 0.0 ? (double)amq_cascade_save_size(c)
                              : amq_cascade_fpr_bound(c);
}

/* Keep c if it beats the best so far (ties keep the earlier). */
static void offer(chooser *ch, amq_cascade *c) {
    double cost = cost_of(ch, c);
    if (ch->best != NULL && !(cost < ch->best_cost)) {
        amq_cascade_free(c);
        return;
    }
    amq_cascade_free(ch->best);
    ch->best = c;
    ch->best_cost = cost;
    ch->best_bytes = amq_cascade_save_size(c);
}

/* A candidate failed. Out of memory ends the training; so does any error
 * of a learned candidate but a missed target (a bad spec or parameter is
 * the caller's to hear, not to be hidden behind another candidate). */
static void failed(chooser *ch, amq_status st, const amq_diag *d,
                   bool learned) {
    if (ch->fatal)
        return;
    ch->last = st;
    ch->fatal = st == AMQ_ERR_NOMEM || (learned && st != AMQ_ERR_FULL);
    if (d != NULL)
        ch->diag = *d;
}

/* ---- plain filters ---------------------------------------------------------------- */

static amq_options hasher_options(const amq_hasher *h, const amq__mem *mem) {
    amq_options o = {.allocator = &mem->a,
                     .hash = h->kind,
                     .hash_seed = h->seed,
                     .hash_key = h->kind == AMQ_HASH_SIPHASH ? h->key : NULL};
    return o;
}

static amq_status hash_members(const amq_keys *k, const amq_hasher *h,
                               const amq__mem *mem, uint64_t **out) {
    uint64_t *v = amq__alloc(mem, (k->n ? k->n : 1) * sizeof *v);
    if (v == NULL)
        return AMQ_ERR_NOMEM;
    for (size_t i = 0; i < k->n; i++) {
        size_t len;
        const uint8_t *p = amq__key(k, i, &len);
        v[i] = amq_hash64(h, p, len);
    }
    *out = v;
    return AMQ_OK;
}

/* The lowest rate whose file fits a memory target: bisection on the
 * curve's bits per key (the realised size is not the curve's for few keys:
 * frame, rounding, construction slack), keeping the best filter that fits. */
#define BUDGET_STEPS 12

static amq_status plain_at_budget(const char *spec, const uint64_t *h, size_t n,
                                  double bits_per_key, const amq_options *o,
                                  amq_filter **out, amq_diag *diag) {
    double budget = bits_per_key * (double)n, lo = 0.0, hi = bits_per_key;
    amq_filter *best = NULL;
    for (int step = 0; step < BUDGET_STEPS; step++) {
        double x = 0.5 * (lo + hi), fpr;
        amq_filter *f = NULL;
        amq_status st = amq_curve_fpr(spec, x, &fpr);
        if (st == AMQ_OK && fpr > 0.0 && fpr < 1.0)
            st = amq_filter_build(spec, h, n, fpr, o, &f, NULL);
        if (st == AMQ_ERR_NOMEM) {
            amq_filter_free(best);
            return st;
        }
        if (f != NULL &&
            8.0 * (double)amq_filter_serialized_size(f) <= budget) {
            if (best == NULL ||
                amq_filter_fpr_bound(f) < amq_filter_fpr_bound(best)) {
                amq_filter_free(best);
                best = f;
                f = NULL;
            }
            lo = x;
        } else {
            hi = x;
        }
        amq_filter_free(f);
    }
    if (best == NULL)
        return amq__diag(diag, AMQ_ERR_FULL, 0,
                         "%s does not fit %g bits per key", spec, bits_per_key);
    *out = best;
    return AMQ_OK;
}

/* The plain filter of spec from the members' hashes. */
static amq_status plain_of_hashes(const uint64_t *h, size_t n, const char *spec,
                                  const amq_cascade_config *cfg,
                                  const amq_hasher *hasher, const amq__mem *mem,
                                  amq_cascade **out, amq_diag *diag) {
    amq_filter *f = NULL;
    amq_options o = hasher_options(hasher, mem);
    amq_status st =
        cfg->fpr > 0.0
            ? amq_filter_build(spec, h, n, cfg->fpr, &o, &f, diag)
            : plain_at_budget(spec, h, n, cfg->bits_per_key, &o, &f, diag);
    if (st == AMQ_OK && cfg->fpr > 0.0 &&
        amq_filter_fpr_bound(f) > cfg->fpr * (1.0 + 1e-9)) {
        amq_filter_free(f);
        return amq__diag(diag, AMQ_ERR_FULL, 0, "%s cannot reach fpr %g", spec,
                         cfg->fpr);
    }
    if (st != AMQ_OK)
        return st;
    amq_cascade_config pc = *cfg;
    pc.aux_capacity = 0;
    pc.worst_case = 0.0;
    return amq__cascade_plain(f, &pc, mem, out);
}

amq_status amq__cascade_train_plain(const amq_keys *members, const char *spec,
                                    const amq_cascade_config *cfg,
                                    const amq_hasher *hasher,
                                    const amq__mem *mem, amq_cascade **out,
                                    amq_diag *diag) {
    uint64_t *h;
    AMQ_RETURN_IF_ERR(hash_members(members, hasher, mem, &h));
    amq_status st =
        plain_of_hashes(h, members->n, spec, cfg, hasher, mem, out, diag);
    amq__free(mem, h, (members->n ? members->n : 1) * sizeof *h);
    return st;
}

static void try_plain(chooser *ch) {
    const amq_keys *k = ch->s->members;
    uint64_t *h;
    amq_status hs = hash_members(k, &ch->hasher, &ch->mem, &h);
    if (hs != AMQ_OK) {
        failed(ch, hs, NULL, false);
        return;
    }
    for (size_t i = 0; i < COUNT(PLAIN_TYPES) && !ch->fatal; i++) {
        amq_cascade *c;
        amq_diag d = {0, {0}};
        amq_status st = plain_of_hashes(h, k->n, PLAIN_TYPES[i], ch->cfg,
                                        &ch->hasher, &ch->mem, &c, &d);
        if (st != AMQ_OK) {
            failed(ch, st, &d, false);
            continue;
        }
        double bytes = (double)amq_cascade_save_size(c);
        if (ch->plain_bytes == 0.0 || bytes < ch->plain_bytes)
            ch->plain_bytes = bytes;
        offer(ch, c);
    }
    amq__free(&ch->mem, h, (k->n ? k->n : 1) * sizeof *h);
}

/* ---- learned candidates ------------------------------------------------------------- */

/* Build one candidate and offer it; its cost (INFINITY if it failed). */
static double try_learned(chooser *ch, const amq_model *m, const amq__scores *z,
                          const char *residual, uint32_t bins) {
    amq_cascade_config cc = *ch->cfg;
    cc.residual = residual;
    cc.bins = bins;
    amq_cascade *c;
    amq_diag d = {0, {0}};
    amq_status st = amq__cascade_build_scored(m, ch->s->members, z, &cc,
                                              &ch->hasher, &ch->mem, &c, &d);
    if (st != AMQ_OK) {
        failed(ch, st, &d, true);
        return INFINITY;
    }
    double cost = cost_of(ch, c);
    offer(ch, c);
    return cost;
}

/* Every residual at the configured bins, then the other bin counts with
 * the residual that did best for this model (whether or not it beat the
 * best so far: fewer bins may be what makes it win). */
static void try_model(chooser *ch, const amq_model *m, const amq__scores *z) {
    const amq_cascade_config *cfg = ch->cfg;
    const char *const *res = &cfg->residual;
    size_t nres = 1;
    if (cfg->choose & AMQ_CHOOSE_RESIDUAL) {
        bool dyn = cfg->aux_capacity > 0;
        res = dyn ? DYNAMIC_RESIDUALS : STATIC_RESIDUALS;
        nres = dyn ? COUNT(DYNAMIC_RESIDUALS) : COUNT(STATIC_RESIDUALS);
    }
    const char *won = NULL;
    double won_cost = INFINITY;
    for (size_t i = 0; i < nres && !ch->fatal; i++) {
        double cost = try_learned(ch, m, z, res[i], cfg->bins);
        if (cost < won_cost) {
            won_cost = cost;
            won = res[i];
        }
    }
    if (!(cfg->choose & AMQ_CHOOSE_BINS) || won == NULL)
        return;
    for (size_t i = 0; i < COUNT(BIN_CHOICES) && !ch->fatal; i++)
        if (BIN_CHOICES[i] < cfg->bins)
            try_learned(ch, m, z, won, BIN_CHOICES[i]);
}

/* Score the sets with m and try its candidates. */
static amq_status try_scored(chooser *ch, const amq_model *m) {
    const amq__train_sets *s = ch->s;
    amq__scores z;
    AMQ_RETURN_IF_ERR(
        amq__score_sets(m, &ch->mem, s->members, s->tune, s->certify, &z));
    try_model(ch, m, &z);
    amq__scores_free(&ch->mem, &z);
    return ch->fatal ? ch->last : AMQ_OK;
}

/* One model of the search: trained on its own (it reads the sets and the
 * config, nothing another job writes), then tried in the search's order. */
typedef struct model_job {
    const chooser *ch;
    uint32_t dim_bits;
    bool quantize;
    amq_model *m;
    amq_status st;
} model_job;

static void *train_job(void *arg) {
    model_job *j = arg;
    amq_model_config mc = j->ch->cfg->model;
    mc.features.dim_bits = j->dim_bits;
    mc.quantize = j->quantize;
    const amq__train_sets *s = j->ch->s;
    j->st = amq_model_train(s->train_m, s->train_n, s->calib_m, s->tune, &mc,
                            j->ch->opt, &j->m);
    return NULL;
}

/* Try a trained job's candidates and free its model; *won when one of
 * them became the best. */
static amq_status try_job(chooser *ch, model_job *j, bool *won) {
    const amq_cascade *prev = ch->best;
    amq_status st = j->st == AMQ_OK ? try_scored(ch, j->m) : j->st;
    amq_model_free(j->m);
    j->m = NULL;
    *won = ch->best != prev;
    return st;
}

static amq_status train_and_try(chooser *ch, uint32_t dim_bits, bool quantize,
                                bool *won) {
    model_job j = {ch, dim_bits, quantize, NULL, AMQ_OK};
    train_job(&j);
    return try_job(ch, &j, won);
}

/* Two models at once, on two threads when the allocator is the default
 * one (a caller's allocator is only ever called from the caller's
 * thread). The result is the sequential search's: the second model is
 * tried after the first, and one the first would have pruned cannot win
 * (its weights alone outweigh the best). */
static void train_pair(const chooser *ch, model_job *a, model_job *b) {
    pthread_t t;
    bool spawned = (ch->opt == NULL || ch->opt->allocator == NULL) &&
                   pthread_create(&t, NULL, train_job, b) == 0;
    train_job(a);
    if (spawned)
        pthread_join(t, NULL);
    else
        train_job(b);
}

/* The smallest a learned cascade with a model of these weights can be. */
static bool model_can_win(const chooser *ch, uint32_t dim_bits, bool quantize) {
    if (ch->best == NULL || ch->cfg->fpr <= 0.0)
        return true;
    size_t weights = ((size_t)1 << dim_bits) * (quantize ? 1 : 4);
    return (double)(weights + LEARNED_MIN_BYTES) < ch->best_cost;
}

static amq_status search_models(chooser *ch) {
    const amq_model_config *mc = &ch->cfg->model;
    bool won;
    if (!(ch->cfg->choose & AMQ_CHOOSE_MODEL)) {
        if (!model_can_win(ch, mc->features.dim_bits, mc->quantize))
            return AMQ_OK;
        return train_and_try(ch, mc->features.dim_bits, mc->quantize, &won);
    }
    uint32_t best_dim = 0;
    for (uint32_t d = DIM_MIN; d <= DIM_MAX && model_can_win(ch, d, true);) {
        uint32_t e = d + DIM_STEP;
        model_job a = {ch, d, true, NULL, AMQ_OK};
        model_job b = {ch, e, true, NULL, AMQ_OK};
        bool two = e <= DIM_MAX && model_can_win(ch, e, true);
        if (two)
            train_pair(ch, &a, &b);
        else
            train_job(&a);
        amq_status st = try_job(ch, &a, &won);
        best_dim = won ? d : best_dim;
        if (two) {
            amq_status sb = try_job(ch, &b, &won);
            best_dim = won ? e : best_dim;
            st = st != AMQ_OK ? st : sb;
        }
        AMQ_RETURN_IF_ERR(st);
        d = two ? e + DIM_STEP : e;
    }
    /* float weights at a quarter of the dimensions cost the same bytes */
    if (best_dim >= DIM_MIN + DIM_STEP &&
        model_can_win(ch, best_dim - 2, false))
        AMQ_RETURN_IF_ERR(train_and_try(ch, best_dim - 2, false, &won));
    return AMQ_OK;
}

/* How many learned candidates the search may certify on the one certify
 * split. Keeping the smallest of K bounds that each hold with confidence
 * 1 - η' keeps one that holds with confidence 1 - K η' (union bound), so
 * each candidate is certified at η / K. Plain filters do not count: their
 * bound is their own rate, not an estimate. */
static unsigned learned_candidates(const amq_cascade_config *cfg,
                                   bool model_given) {
    unsigned models = 1, per_model = 1;
    if ((cfg->choose & AMQ_CHOOSE_MODEL) && !model_given)
        models = (DIM_MAX - DIM_MIN) / DIM_STEP + 1 + 1; /* + float */
    if (cfg->choose & AMQ_CHOOSE_RESIDUAL)
        per_model = COUNT(STATIC_RESIDUALS) > COUNT(DYNAMIC_RESIDUALS)
                        ? COUNT(STATIC_RESIDUALS)
                        : COUNT(DYNAMIC_RESIDUALS);
    if (cfg->choose & AMQ_CHOOSE_BINS)
        per_model += COUNT(BIN_CHOICES);
    return models * per_model;
}

amq_status amq__cascade_choose(const amq__train_sets *s, const amq_model *model,
                               const amq_cascade_config *cfg_in,
                               const amq_options *opt, amq_cascade **out,
                               amq_diag *diag) {
    amq_cascade_config per = *cfg_in;
    per.eta = cfg_in->eta / (double)learned_candidates(cfg_in, model != NULL);
    const amq_cascade_config *cfg = &per;
    chooser ch = {.s = s, .cfg = cfg, .opt = opt, .last = AMQ_OK};
    amq__mem_init(&ch.mem, opt);
    AMQ_RETURN_IF_ERR(amq__hasher_from_options(opt, AMQ_HASH_XXH3, &ch.hasher));
    if ((cfg->choose & AMQ_CHOOSE_PLAIN) && cfg->aux_capacity == 0)
        try_plain(&ch);
    amq_status st = ch.fatal        ? ch.last
                    : model != NULL ? try_scored(&ch, model)
                                    : search_models(&ch);
    if (st != AMQ_OK) {
        amq_cascade_free(ch.best);
        if (diag != NULL && ch.fatal)
            *diag = ch.diag;
        return st;
    }
    if (ch.best == NULL) {
        if (diag != NULL)
            *diag = ch.diag;
        return ch.last != AMQ_OK ? ch.last : AMQ_ERR_FULL;
    }
    ch.best->plain_bytes = ch.plain_bytes;
    *out = ch.best;
    return AMQ_OK;
}
