/*
 * cascade.c — the learned Bloom filter cascade (amq/cascade.h): its
 * routes, queries, certified bound, updates and statistics.
 *
 * A query:
 *
 *   key ─▶ h = hash(key) ─▶ [front filter? (sandwich): no ─▶ buffer]
 *       ─▶ z = score(key)
 *       ─▶ b = bin(z) ─▶ b >= accept_bin ? accept
 *                      : hold[b] = region r ? B_r.contains(h)
 *                      : hold[b] = reject ? reject
 *       ─▶ otherwise the insert buffer decides.
 *
 * The bin's outcome comes from the route table (learned.h): the few
 * score thresholds where it changes, compared without a search.
 *
 * Invariants:
 *   - every member given at build is held by the region of its bin, or its
 *     bin is accepted (>= accept_bin), or it lies in the reject tail;
 *   - hold[b] names a region for every b < max_accept outside the reject
 *     tail, so any accept_bin <= max_accept keeps the first invariant
 *     (whole-bin activation, §5);
 *   - keys added since the build are in the insert buffer;
 *   - the bound is recomputed from the counts on every call: it follows
 *     the filters' loads, the buffer and the accepted bins.
 *
 * The bound (eq. 1-2): the bins group by their conditional acceptance
 * bound — 1 (accepted, or a region given no bits), ε_r = the region
 * filter's amq_filter_fpr_bound, or 0 (rejected, or a region without
 * members). With k_g certify non-members of N in group g,
 *
 *     bound = Σ_g coef_g · CP_upper(k_g, N, η / G)  [· ε_front] + ε_aux
 *
 * over the G groups with coef > 0: each limit fails with probability at
 * most η / G, so all hold at once with probability >= 1 - η (union
 * bound), and then the sum bounds the true rate.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/bits.h"
#include "core/spec.h"
#include "learned/keyset.h"

/* ---- configuration ------------------------------------------------------------ */

void amq_cascade_config_init(amq_cascade_config *cfg) {
    memset(cfg, 0, sizeof *cfg);
    cfg->bins = 256;
    cfg->eta = 1e-3;
    cfg->holdout = 0.5;
    cfg->model.features.dim_bits = 16;
    cfg->model.features.ngram_max = 4;
    cfg->model.epochs = 6;
    cfg->model.learning_rate = 0.2;
    cfg->model.l2 = 1e-7;
    cfg->model.calibration = AMQ_CALIB_PLATT;
    cfg->choose = AMQ_CHOOSE_ALL;
}

static bool bad01(double x) { return !(x > 0.0 && x < 1.0); }

amq_status amq__cascade_config_resolve(const amq_cascade_config *in,
                                       amq_cascade_config *out,
                                       amq_diag *diag) {
    amq_cascade_config c = *in;
    uint32_t dim = c.model.features.dim_bits;
    if (dim != 0 &&
        (dim < AMQ_FEATURE_DIM_BITS_MIN || dim > AMQ_FEATURE_DIM_BITS_MAX))
        return amq__diag(diag, AMQ_ERR_INVALID, 0,
                         "feature dimension bits must be %u to %u, got %u",
                         AMQ_FEATURE_DIM_BITS_MIN, AMQ_FEATURE_DIM_BITS_MAX,
                         dim);
    if (amq__model_config_resolve(&c.model, &c.model) != AMQ_OK)
        return amq__diag(diag, AMQ_ERR_INVALID, 0,
                         "model parameters out of range (n-grams 1 to 4, a "
                         "finite learning rate and l2)");
    if ((c.fpr > 0.0) == (c.bits_per_key > 0.0) ||
        (c.fpr > 0 && bad01(c.fpr)) || !isfinite(c.bits_per_key) ||
        c.bits_per_key < 0.0 || c.fpr < 0.0)
        return amq__diag(
            diag, AMQ_ERR_INVALID, 0,
            "give exactly one target: fpr in (0,1) or bits per key > 0");
    if (c.bins == 0)
        c.bins = 256;
    if (c.eta == 0.0)
        c.eta = 1e-3;
    if (c.holdout == 0.0)
        c.holdout = 0.5;
    if (c.bins < 8 || c.bins > AMQ_CASCADE_MAX_BINS)
        return amq__diag(diag, AMQ_ERR_INVALID, 0,
                         "bins must be 8 to %u, got %u", AMQ_CASCADE_MAX_BINS,
                         c.bins);
    if (bad01(c.eta) || c.eta >= 0.5)
        return amq__diag(diag, AMQ_ERR_INVALID, 0,
                         "eta must be in (0, 0.5), got %g", c.eta);
    if (bad01(c.holdout))
        return amq__diag(diag, AMQ_ERR_INVALID, 0,
                         "the held-out share must be in (0, 1), got %g",
                         c.holdout);
    if (c.levels > AMQ_CASCADE_MAX_LEVELS)
        return amq__diag(diag, AMQ_ERR_INVALID, 0, "at most %u levels, got %u",
                         AMQ_CASCADE_MAX_LEVELS, c.levels);
    if (c.headroom >= c.bins)
        return amq__diag(diag, AMQ_ERR_INVALID, 0,
                         "headroom %u must be below the %u bins", c.headroom,
                         c.bins);
    if ((unsigned)c.method > AMQ_LEARNED_PLBF ||
        (unsigned)c.partition > AMQ_PARTITION_EQUAL_MASS ||
        (unsigned)c.tail > AMQ_TAIL_REJECT)
        return amq__diag(diag, AMQ_ERR_INVALID, 0,
                         "unknown method, partition or tail");
    if (c.tail == AMQ_TAIL_REJECT && !(c.delta >= 0.0 && c.delta < 1.0))
        return amq__diag(diag, AMQ_ERR_INVALID, 0, "delta must be in [0, 1)");
    if (c.method == AMQ_LEARNED_LBF || c.method == AMQ_LEARNED_SANDWICH) {
        if (c.levels > 1)
            return amq__diag(diag, AMQ_ERR_INVALID, 0,
                             "%s has one backup filter",
                             amq_learned_method_name(c.method));
        c.levels = 1;
    }
    if (c.choose & ~AMQ_CHOOSE_ALL)
        return amq__diag(diag, AMQ_ERR_INVALID, 0, "unknown choice flags");
    if (c.method != AMQ_LEARNED_CASCADE)
        c.choose = 0;
    if (!(c.worst_case >= 0.0 && c.worst_case < 1.0) ||
        (c.worst_case > 0.0 && c.method != AMQ_LEARNED_CASCADE))
        return amq__diag(diag, AMQ_ERR_INVALID, 0,
                         "the worst-case cap must be in (fpr, 1), with the "
                         "cascade method");
    if (c.worst_case > 0.0 && c.fpr > 0.0 && c.worst_case <= c.fpr)
        return amq__diag(diag, AMQ_ERR_INVALID, 0,
                         "a worst-case cap of %g at or below the target %g "
                         "is a plain filter: train without the cap",
                         c.worst_case, c.fpr);
    if (!(c.aux_fpr >= 0.0 && c.aux_fpr < 1.0)) /* NaN too */
        return amq__diag(diag, AMQ_ERR_INVALID, 0, "aux fpr out of range");
    if (c.aux_fpr == 0.0)
        c.aux_fpr = c.fpr > 0.0 ? c.fpr / 10.0 : 1e-3;
    *out = c;
    return AMQ_OK;
}

const char *amq_learned_method_name(amq_learned_method m) {
    switch (m) {
    case AMQ_LEARNED_CASCADE: return "cascade";
    case AMQ_LEARNED_LBF: return "lbf";
    case AMQ_LEARNED_SANDWICH: return "sandwich";
    case AMQ_LEARNED_PLBF: return "plbf";
    }
    return "unknown";
}

/* ---- allocation ------------------------------------------------------------------ */

static size_t bins_bytes(uint32_t bins, size_t each) {
    return (size_t)bins * each;
}

amq_status amq__cascade_alloc(const amq_model *model, uint32_t bins,
                              const amq_cascade_config *cfg,
                              const amq_hasher *hasher, const amq__mem *mem,
                              amq_cascade **out) {
    amq_cascade *c = amq__zalloc(mem, sizeof *c);
    if (c == NULL)
        return AMQ_ERR_NOMEM;
    c->mem = *mem;
    c->cfg = *cfg;
    c->hasher = *hasher;
    c->bins = c->bins_alloc = bins;
    c->edges = amq__zalloc(mem, bins_bytes(bins, sizeof(double)));
    c->hold = amq__zalloc(mem, bins_bytes(bins, 1));
    c->cert = amq__zalloc(mem, bins_bytes(bins, sizeof(uint32_t)));
    c->tune = amq__zalloc(mem, bins_bytes(bins, sizeof(uint32_t)));
    c->memb = amq__zalloc(mem, bins_bytes(bins, sizeof(uint32_t)));
    amq_status st = AMQ_ERR_NOMEM;
    if (c->edges && c->hold && c->cert && c->tune && c->memb)
        st = model == NULL ? AMQ_OK : amq__model_clone(model, mem, &c->model);
    if (st != AMQ_OK) {
        amq_cascade_free(c);
        return st;
    }
    c->version = 1;
    c->accept_bin = c->max_accept = bins;
    amq__cascade_reroute(c);
    *out = c;
    return AMQ_OK;
}

amq_status amq__cascade_plain(amq_filter *f, const amq_cascade_config *cfg,
                              const amq__mem *mem, amq_cascade **out) {
    amq_cascade *c;
    amq_status st =
        amq__cascade_alloc(NULL, 1, cfg, amq_filter_hasher(f), mem, &c);
    if (st != AMQ_OK) {
        amq_filter_free(f);
        return st;
    }
    snprintf(c->residual_spec, sizeof c->residual_spec, "%s",
             amq_filter_info(f)->name);
    memcpy(c->aux_spec, c->residual_spec, sizeof c->aux_spec);
    c->cfg.residual = c->residual_spec;
    c->cfg.aux = c->aux_spec;
    c->cfg.aux_capacity = 0;
    c->nregions = 1;
    c->regions[0] =
        (amq__region){.f = f, .bin_hi = 1, .n = amq_filter_items(f)};
    c->hold[0] = 0;
    amq__cascade_reroute(c);
    c->members = c->regions[0].n;
    c->memb[0] = (uint32_t)c->members;
    *out = c;
    return AMQ_OK;
}

bool amq_cascade_is_plain(const amq_cascade *c) { return c->model == NULL; }

void amq_cascade_free(amq_cascade *c) {
    if (c == NULL)
        return;
    amq__mem mem = c->mem;
    for (uint32_t r = 0; r < c->nregions; r++)
        amq_filter_free(c->regions[r].f);
    amq_filter_free(c->front);
    amq_filter_free(c->aux);
    amq_model_free(c->model);
    amq__free(&mem, c->edges, bins_bytes(c->bins_alloc, sizeof(double)));
    amq__free(&mem, c->hold, bins_bytes(c->bins_alloc, 1));
    amq__free(&mem, c->cert, bins_bytes(c->bins_alloc, sizeof(uint32_t)));
    amq__free(&mem, c->tune, bins_bytes(c->bins_alloc, sizeof(uint32_t)));
    amq__free(&mem, c->memb, bins_bytes(c->bins_alloc, sizeof(uint32_t)));
    amq__free(&mem, c, sizeof *c);
}

void amq__histogram(const amq_cascade *c, const double *z, size_t n,
                    uint32_t *counts) {
    memset(counts, 0, bins_bytes(c->bins, sizeof *counts));
    for (size_t i = 0; i < n; i++)
        counts[amq__bin_of(c->edges, c->bins, z[i])]++;
}

/* ---- queries ----------------------------------------------------------------------- */

uint32_t amq_cascade_bin(const amq_cascade *c, double raw) {
    return amq__bin_of(c->edges, c->bins, raw);
}

/* A plain cascade has no model: every key scores 0 (one bin). */
static double score_of(const amq_cascade *c, const void *key, size_t len) {
    return c->model != NULL ? amq_model_score(c->model, key, len) : 0.0;
}

uint64_t amq__cascade_model_id(const amq_cascade *c) {
    return c->model != NULL ? c->model->id : 0;
}

amq_score amq_cascade_score(const amq_cascade *c, const void *key, size_t len) {
    amq_score s = {score_of(c, key, len), amq__cascade_model_id(c)};
    return s;
}

static bool front_passes(const amq_cascade *c, uint64_t h) {
    return c->front == NULL ||
           amq_filter_contains_hash(c->front, amq__mix64(h ^ AMQ__FRONT_SALT));
}

uint8_t amq__cascade_route_bins(const amq_cascade *c, double z) {
    uint32_t b = amq__bin_of(c->edges, c->bins, z);
    return b >= c->accept_bin ? AMQ__ROUTE_ACCEPT : c->hold[b];
}

static uint8_t bin_outcome(const amq_cascade *c, uint32_t b) {
    return b >= c->accept_bin ? AMQ__ROUTE_ACCEPT : c->hold[b];
}

void amq__cascade_reroute(amq_cascade *c) {
    uint32_t n = 0;
    c->route_to[0] = bin_outcome(c, 0);
    for (uint32_t b = 1; b < c->bins; b++) {
        uint8_t o = bin_outcome(c, b);
        if (o == bin_outcome(c, b - 1))
            continue;
        if (n < AMQ__ROUTE_MAX) {
            c->route_at[n] = c->edges[b - 1]; /* bin >= b iff z >= edge */
            c->route_to[n + 1] = o;
        }
        n++;
    }
    c->route_n = n;
}

/* bin(z) counts the edges at or below z, so the merged thresholds do too
 * (a NaN score compares false everywhere: bin 0 either way). */
uint8_t amq__cascade_route(const amq_cascade *c, double z) {
    if (c->route_n > AMQ__ROUTE_MAX)
        return amq__cascade_route_bins(c, z);
    uint32_t k = 0;
    for (uint32_t i = 0; i < c->route_n; i++)
        k += c->route_at[i] <= z;
    return c->route_to[k];
}

static bool route_accepts(const amq_cascade *c, double z, uint64_t h) {
    uint8_t r = amq__cascade_route(c, z);
    if (r == AMQ__ROUTE_ACCEPT)
        return true;
    if (r >= c->nregions) /* reject tail (HOLD_NONE cannot occur here) */
        return false;
    const amq__region *g = &c->regions[r];
    return g->f != NULL ? amq_filter_contains_hash(g->f, h) : g->accept_all;
}

static bool buffered(const amq_cascade *c, uint64_t h) {
    return c->aux != NULL && amq_filter_contains_hash(c->aux, h);
}

static bool decide(const amq_cascade *c, double z, uint64_t h) {
    if (front_passes(c, h) && route_accepts(c, z, h))
        return true;
    return buffered(c, h);
}

/* A key the front filter turns away is not scored. */
bool amq_cascade_contains(const amq_cascade *c, const void *key, size_t len) {
    uint64_t h = amq_hash64(&c->hasher, key, len);
    if (front_passes(c, h) && route_accepts(c, score_of(c, key, len), h))
        return true;
    return buffered(c, h);
}

amq_status amq_cascade_contains_scored(const amq_cascade *c, const void *key,
                                       size_t len, const amq_score *s,
                                       bool *out) {
    if (c == NULL || s == NULL || out == NULL || (key == NULL && len > 0))
        return AMQ_ERR_INVALID;
    if (s->model_id != amq__cascade_model_id(c))
        return AMQ_ERR_INCOMPATIBLE;
    *out = decide(c, s->raw, amq_hash64(&c->hasher, key, len));
    return AMQ_OK;
}

#define BATCH 256
#define FRONT_BYTES 8192 /* key bytes gathered for one scoring call */

static void score_part(const amq_cascade *c, const amq_keys *part, double *z) {
    if (c->model != NULL)
        amq_model_score_batch(c->model, part, z);
    else
        memset(z, 0, part->n * sizeof *z);
}

/* With a front filter: the keys it passes are copied together and scored
 * in one call; the rest are answered by the buffer alone. */
static void batch_front(const amq_cascade *c, const amq_keys *keys, size_t at,
                        size_t n, uint8_t *out) {
    uint8_t bytes[FRONT_BYTES];
    uint64_t off[BATCH + 1], h[BATCH];
    uint32_t idx[BATCH];
    double z[BATCH];
    size_t m = 0;
    off[0] = 0;
    for (size_t i = 0; i <= n; i++) {
        size_t len = 0;
        const uint8_t *p = i < n ? amq__key(keys, at + i, &len) : NULL;
        uint64_t hi = i < n ? amq_hash64(&c->hasher, p, len) : 0;
        bool pass = i < n && front_passes(c, hi);
        if (m > 0 && (i == n || (pass && off[m] + len > FRONT_BYTES))) {
            amq_keys part = {bytes, off, m};
            score_part(c, &part, z);
            for (size_t j = 0; j < m; j++)
                out[at + idx[j]] =
                    route_accepts(c, z[j], h[j]) || buffered(c, h[j]);
            m = 0;
        }
        if (i == n)
            break;
        if (!pass) {
            out[at + i] = buffered(c, hi);
            continue;
        }
        if (len > FRONT_BYTES) { /* too long to gather: score it alone */
            out[at + i] =
                route_accepts(c, score_of(c, p, len), hi) || buffered(c, hi);
            continue;
        }
        memcpy(bytes + off[m], p, len);
        off[m + 1] = off[m] + len;
        h[m] = hi;
        idx[m++] = (uint32_t)i;
    }
}

void amq_cascade_contains_batch(const amq_cascade *c, const amq_keys *keys,
                                uint8_t *out) {
    double z[BATCH];
    for (size_t at = 0; at < keys->n; at += BATCH) {
        size_t n = keys->n - at < BATCH ? keys->n - at : BATCH;
        if (c->front != NULL) {
            batch_front(c, keys, at, n, out);
            continue;
        }
        amq_keys part = {keys->bytes, keys->offsets + at, n};
        score_part(c, &part, z);
        for (size_t i = 0; i < n; i++) {
            size_t len;
            const uint8_t *p = amq__key(keys, at + i, &len);
            out[at + i] = decide(c, z[i], amq_hash64(&c->hasher, p, len));
        }
    }
}

/* ---- the bound ---------------------------------------------------------------------- */

/* Each region's residual rate right now, read once per bound: a filter's
 * bound may be a pass over its table (blocked, sbbf). */
static void region_eps(const amq_cascade *c,
                       double eps[AMQ_CASCADE_MAX_LEVELS]) {
    for (unsigned r = 0; r < c->nregions; r++) {
        const amq__region *g = &c->regions[r];
        eps[r] = g->f != NULL    ? amq_filter_fpr_bound(g->f)
                 : g->accept_all ? 1.0
                                 : 0.0;
    }
}

/* Conditional acceptance bound of a bin, from its region's rate. */
static double bin_coef(const amq_cascade *c, const double *eps, uint32_t b) {
    if (b >= c->accept_bin)
        return 1.0;
    uint8_t r = c->hold[b];
    return r < c->nregions ? eps[r] : 0.0;
}

/* Group id of a bin: 0 for coefficient 1, 1 + r for region r's filter,
 * -1 for coefficient 0. */
static int bin_group(const amq_cascade *c, const double *eps, uint32_t b) {
    if (bin_coef(c, eps, b) <= 0.0)
        return -1;
    if (b >= c->accept_bin || c->regions[c->hold[b]].f == NULL)
        return 0;
    return 1 + c->hold[b];
}

double amq__cascade_bound(const amq_cascade *c, bool point_estimate) {
    uint64_t hits[AMQ_CASCADE_MAX_LEVELS + 1] = {0};
    bool used[AMQ_CASCADE_MAX_LEVELS + 1] = {false};
    double coef[AMQ_CASCADE_MAX_LEVELS + 1] = {1.0};
    double eps[AMQ_CASCADE_MAX_LEVELS];
    region_eps(c, eps);
    for (uint32_t b = 0; b < c->bins; b++) {
        int g = bin_group(c, eps, b);
        if (g < 0)
            continue;
        hits[g] += c->cert[b];
        used[g] = true;
        coef[g] = g == 0 ? 1.0 : bin_coef(c, eps, b);
    }
    unsigned groups = 0;
    for (unsigned g = 0; g <= c->nregions; g++)
        groups += used[g];
    double bound = 0.0, n = (double)c->certify_n;
    for (unsigned g = 0; g <= c->nregions; g++) {
        if (!used[g])
            continue;
        double p = point_estimate ? (n > 0 ? hits[g] / n : 1.0)
                                  : amq__cp_upper(hits[g], c->certify_n,
                                                  c->cfg.eta / groups);
        bound += coef[g] * p;
    }
    if (c->front != NULL)
        bound *= amq_filter_fpr_bound(c->front);
    if (c->aux != NULL)
        bound += amq_filter_fpr_bound(c->aux);
    return bound < 1.0 ? bound : 1.0;
}

/* The bound for any non-member distribution: the front filter's rate
 * (its hashes see no score), 1 without one. */
static double worst_case_bound(const amq_cascade *c) {
    if (c->model == NULL) /* a plain filter's rate holds for any query */
        return amq__cascade_bound(c, false);
    if (c->front == NULL)
        return 1.0;
    double b = amq_filter_fpr_bound(c->front);
    if (c->aux != NULL)
        b += amq_filter_fpr_bound(c->aux);
    return b < 1.0 ? b : 1.0;
}

double amq_cascade_fpr_bound(const amq_cascade *c) {
    return c->fallback ? worst_case_bound(c) : amq__cascade_bound(c, false);
}

amq_status amq_cascade_set_fallback(amq_cascade *c, bool on) {
    if (c == NULL)
        return AMQ_ERR_INVALID;
    if (on && c->front == NULL)
        return AMQ_ERR_UNSUPPORTED;
    c->fallback = on;
    return AMQ_OK;
}

bool amq_cascade_fallback(const amq_cascade *c) { return c->fallback; }

/* ---- building from a plan ------------------------------------------------------------- */

static amq_options filter_options(const amq_cascade *c) {
    amq_options o = {
        .allocator = &c->mem.a,
        .hash = c->hasher.kind,
        .hash_seed = c->hasher.seed,
        .hash_key = c->hasher.kind == AMQ_HASH_SIPHASH ? c->hasher.key : NULL};
    return o;
}

/* hold[] and the regions' bin ranges from the plan. */
static void set_routes(amq_cascade *c, const amq__plan *p) {
    memset(c->hold, AMQ__HOLD_NONE, c->bins);
    for (uint32_t b = 0; b < p->reject_bins; b++)
        c->hold[b] = AMQ__HOLD_REJECT;
    c->nregions = p->nregions;
    for (uint32_t r = 0; r < p->nregions; r++) {
        amq__region *g = &c->regions[r];
        memset(g, 0, sizeof *g);
        g->bin_lo = p->cuts[r];
        g->bin_hi = r + 1 == p->nregions ? p->hold_top : p->cuts[r + 1];
        for (uint32_t b = g->bin_lo; b < g->bin_hi; b++) {
            c->hold[b] = (uint8_t)r;
            g->n += c->memb[b];
        }
    }
    c->reject_bins = p->reject_bins;
    c->accept_bin = p->accept_bin;
    c->max_accept = p->nregions ? p->hold_top : p->accept_bin;
    c->tail_members = 0;
    for (uint32_t b = 0; b < p->reject_bins; b++)
        c->tail_members += c->memb[b];
    amq__cascade_reroute(c);
}

/* Member hashes grouped by region (counting sort): region r's are
 * out[start[r] .. start[r + 1]). Members of accepted or rejected bins are
 * left out. */
static amq_status group_hashes(const amq_cascade *c, const amq_keys *members,
                               const double *z, uint64_t **out, size_t *start) {
    size_t fill[AMQ_CASCADE_MAX_LEVELS] = {0}, total = 0;
    for (uint32_t r = 0; r < c->nregions; r++) {
        start[r] = total;
        total += c->regions[r].n;
    }
    start[c->nregions] = total;
    uint64_t *h = amq__alloc(&c->mem, (total ? total : 1) * sizeof *h);
    if (h == NULL)
        return AMQ_ERR_NOMEM;
    for (size_t i = 0; i < members->n; i++) {
        uint8_t r = c->hold[amq__bin_of(c->edges, c->bins, z[i])];
        if (r >= c->nregions)
            continue;
        size_t len;
        const uint8_t *p = amq__key(members, i, &len);
        h[start[r] + fill[r]++] = amq_hash64(&c->hasher, p, len);
    }
    *out = h;
    return AMQ_OK;
}

static amq_status build_regions(amq_cascade *c, const amq__plan *p,
                                const uint64_t *h, const size_t *start,
                                amq_diag *diag) {
    amq_options o = filter_options(c);
    for (uint32_t r = 0; r < c->nregions; r++) {
        amq__region *g = &c->regions[r];
        g->accept_all = g->n > 0;
        if (g->n == 0 || p->spec[r][0] == '\0')
            continue;
        AMQ_RETURN_IF_ERR(amq_filter_build(p->spec[r], h + start[r], g->n,
                                           p->fpr[r], &o, &g->f, diag));
        g->accept_all = false;
    }
    return AMQ_OK;
}

static amq_status build_front(amq_cascade *c, const amq__plan *p,
                              const amq_keys *members, amq_diag *diag) {
    if (p->front_spec[0] == '\0')
        return AMQ_OK;
    uint64_t *h = amq__alloc(&c->mem, (members->n ? members->n : 1) * 8);
    if (h == NULL)
        return AMQ_ERR_NOMEM;
    for (size_t i = 0; i < members->n; i++) {
        size_t len;
        const uint8_t *k = amq__key(members, i, &len);
        h[i] = amq__mix64(amq_hash64(&c->hasher, k, len) ^ AMQ__FRONT_SALT);
    }
    amq_options o = filter_options(c);
    amq_status st = amq_filter_build(p->front_spec, h, members->n, p->front_fpr,
                                     &o, &c->front, diag);
    amq__free(&c->mem, h, (members->n ? members->n : 1) * 8);
    return st;
}

static amq_status build_aux(amq_cascade *c, amq_diag *diag) {
    if (c->cfg.aux_capacity == 0)
        return AMQ_OK;
    amq_options o = filter_options(c);
    return amq_filter_new(c->aux_spec, c->cfg.aux_capacity, c->cfg.aux_fpr, &o,
                          &c->aux, diag);
}

amq_status amq__cascade_fill(amq_cascade *c, const amq__plan *plan,
                             const amq_keys *members,
                             const double *member_scores, amq_diag *diag) {
    size_t start[AMQ_CASCADE_MAX_LEVELS + 1];
    uint64_t *h = NULL;
    set_routes(c, plan);
    c->members = members->n;
    c->max_stale = c->cfg.max_stale ? c->cfg.max_stale
                                    : (members->n / 100 ? members->n / 100 : 1);
    AMQ_RETURN_IF_ERR(group_hashes(c, members, member_scores, &h, start));
    amq_status st = build_regions(c, plan, h, start, diag);
    amq__free(&c->mem, h, (start[c->nregions] ? start[c->nregions] : 1) * 8);
    if (st == AMQ_OK)
        st = build_front(c, plan, members, diag);
    if (st == AMQ_OK)
        st = build_aux(c, diag);
    return st;
}

void amq__cascade_clear(amq_cascade *c) {
    for (uint32_t r = 0; r < c->nregions; r++) {
        amq_filter_free(c->regions[r].f);
        c->regions[r].f = NULL;
    }
    amq_filter_free(c->front);
    amq_filter_free(c->aux);
    c->front = c->aux = NULL;
    c->nregions = 0;
}

/* ---- updates -------------------------------------------------------------------------- */

amq_status amq_cascade_add(amq_cascade *c, const void *key, size_t len) {
    if (c == NULL || (key == NULL && len > 0))
        return AMQ_ERR_INVALID;
    if (c->aux == NULL)
        return AMQ_ERR_FULL;
    if (amq_filter_items(c->aux) >= c->cfg.aux_capacity)
        return AMQ_ERR_FULL;
    AMQ_RETURN_IF_ERR(
        amq_filter_add_hash(c->aux, amq_hash64(&c->hasher, key, len)));
    c->added++;
    return AMQ_OK;
}

static uint64_t stale_total(const amq_cascade *c) {
    uint64_t s = c->stale_other;
    for (uint32_t r = 0; r < c->nregions; r++)
        s += c->regions[r].stale;
    return s;
}

/* Remove h from f if it can, else count one stale key in *stale. */
static amq_status drop(amq_cascade *c, amq_filter *f, uint64_t h,
                       uint64_t *stale) {
    if (amq_filter_caps(f) & AMQ_CAP_REMOVE)
        return amq_filter_remove_hash(f, h);
    if (stale_total(c) >= c->max_stale)
        return AMQ_ERR_FULL;
    (*stale)++;
    return AMQ_OK;
}

static amq_status remove_built(amq_cascade *c, const void *key, size_t len,
                               uint64_t h) {
    uint32_t b = amq__bin_of(c->edges, c->bins, score_of(c, key, len));
    uint8_t r = c->hold[b];
    amq__region *g = r < c->nregions ? &c->regions[r] : NULL;
    amq_filter *f = g != NULL ? g->f : NULL;
    uint64_t hf = amq__mix64(h ^ AMQ__FRONT_SALT);
    /* routed where nothing is accepted (a region without a filter or the
     * reject tail): no built member can be there */
    if (b < c->accept_bin && f == NULL && (g == NULL || !g->accept_all))
        return AMQ_ERR_NOT_FOUND;
    bool f_del = f != NULL && (amq_filter_caps(f) & AMQ_CAP_REMOVE);
    bool front_del = c->front && (amq_filter_caps(c->front) & AMQ_CAP_REMOVE);
    unsigned stale_needed = (f != NULL && !f_del) + (c->front && !front_del);
    if (stale_total(c) + stale_needed > c->max_stale)
        return AMQ_ERR_FULL;
    if (front_del)
        AMQ_RETURN_IF_ERR(amq_filter_remove_hash(c->front, hf));
    if (f != NULL) {
        amq_status st = drop(c, f, h, &g->stale);
        if (st != AMQ_OK) {
            if (front_del) /* undo: leave the cascade as it was */
                (void)amq_filter_add_hash(c->front, hf);
            return st;
        }
        if (f_del)
            g->n--;
    }
    if (c->front != NULL && !front_del)
        c->stale_other++;
    c->removed++;
    return AMQ_OK;
}

amq_status amq_cascade_remove(amq_cascade *c, const void *key, size_t len,
                              amq_origin origin) {
    if (c == NULL || (key == NULL && len > 0) ||
        (origin != AMQ_ORIGIN_BUILT && origin != AMQ_ORIGIN_ADDED))
        return AMQ_ERR_INVALID;
    uint64_t h = amq_hash64(&c->hasher, key, len);
    if (origin == AMQ_ORIGIN_BUILT)
        return remove_built(c, key, len, h);
    if (c->aux == NULL)
        return AMQ_ERR_INVALID;
    AMQ_RETURN_IF_ERR(drop(c, c->aux, h, &c->stale_other));
    c->removed++;
    return AMQ_OK;
}

amq_status amq_cascade_set_accept_bin(amq_cascade *c, uint32_t bin) {
    if (c == NULL || bin > c->max_accept)
        return AMQ_ERR_INVALID;
    c->accept_bin = bin;
    amq__cascade_reroute(c);
    return AMQ_OK;
}

/* ---- statistics ------------------------------------------------------------------------ */

size_t amq__cascade_bytes(const amq_cascade *c, size_t *model, size_t *residual,
                          size_t *front, size_t *aux, size_t *tables) {
    *model = c->model != NULL ? amq_model_size_bytes(c->model) : 0;
    *residual = 0;
    for (uint32_t r = 0; r < c->nregions; r++)
        if (c->regions[r].f != NULL)
            *residual += amq_filter_size_bytes(c->regions[r].f);
    *front = c->front ? amq_filter_size_bytes(c->front) : 0;
    *aux = c->aux ? amq_filter_size_bytes(c->aux) : 0;
    /* edges, routes and the three histograms, as saved */
    *tables = (size_t)c->bins * (8 + 1 + 12);
    return *model + *residual + *front + *aux + *tables;
}

static double edge_at(const amq_cascade *c, uint32_t b) {
    if (b == 0)
        return -INFINITY;
    return b >= c->bins ? INFINITY : c->edges[b - 1];
}

static uint64_t cert_between(const amq_cascade *c, uint32_t lo, uint32_t hi) {
    uint64_t k = 0;
    for (uint32_t b = lo; b < hi && b < c->bins; b++)
        k += c->cert[b];
    return k;
}

static void fill_level(const amq_cascade *c, uint32_t lo, uint32_t hi,
                       const amq__region *g, amq_cascade_level *l) {
    memset(l, 0, sizeof *l);
    l->bin_lo = lo;
    l->bin_hi = hi;
    l->tau_lo = edge_at(c, lo);
    l->tau_hi = edge_at(c, hi);
    l->prob_lo = lo == 0 || c->model == NULL
                     ? 0.0
                     : amq_model_probability(c->model, l->tau_lo);
    l->prob_hi = hi >= c->bins || c->model == NULL
                     ? 1.0
                     : amq_model_probability(c->model, l->tau_hi);
    l->certify_hits = cert_between(c, lo, hi);
    double n = (double)c->certify_n;
    l->p_hat = n > 0 ? l->certify_hits / n : 0.0;
    l->p_upper = amq__cp_upper(l->certify_hits, c->certify_n, c->cfg.eta);
    if (g == NULL) { /* the reject tail */
        l->eps = 0.0;
        for (uint32_t b = lo; b < hi; b++)
            l->n += c->memb[b];
        return;
    }
    l->n = g->n;
    l->stale = g->stale;
    l->eps =
        g->f != NULL ? amq_filter_fpr_bound(g->f) : (g->accept_all ? 1.0 : 0.0);
    if (g->f != NULL) {
        l->bytes = amq_filter_size_bytes(g->f);
        amq_filter_describe(g->f, l->spec, sizeof l->spec);
    }
}

void amq_cascade_get_stats(const amq_cascade *c, amq_cascade_stats *s,
                           amq_cascade_level *levels, size_t cap,
                           size_t *nlevels) {
    memset(s, 0, sizeof *s);
    s->method = c->cfg.method;
    s->levels = c->nregions;
    s->bins = c->bins;
    s->accept_bin = c->accept_bin;
    s->max_accept_bin = c->max_accept;
    s->reject_bins = c->reject_bins;
    s->version = c->version;
    s->model_id = amq__cascade_model_id(c);
    s->plain = c->model == NULL;
    s->plain_bytes = c->plain_bytes;
    s->members = c->members;
    s->added = c->added;
    s->removed = c->removed;
    s->stale = stale_total(c);
    s->certify_n = c->certify_n;
    s->tune_n = c->tune_n;
    s->eta = c->cfg.eta;
    s->target_fpr = c->cfg.fpr;
    s->target_bits_per_key = c->cfg.bits_per_key;
    uint64_t k0 = cert_between(c, c->accept_bin, c->bins);
    s->p0_hat = c->certify_n ? (double)k0 / (double)c->certify_n : 0.0;
    s->p0_upper = amq__cp_upper(k0, c->certify_n, c->cfg.eta);
    s->fpr_bound = amq_cascade_fpr_bound(c);
    s->fpr_estimate = c->fallback ? s->fpr_bound : amq__cascade_bound(c, true);
    s->learned_bound = amq__cascade_bound(c, false);
    s->worst_case_bound = worst_case_bound(c);
    s->fallback = c->fallback;
    s->tail_fnr = c->members ? (double)c->tail_members / (double)c->members : 0;
    s->front_eps = c->front ? amq_filter_fpr_bound(c->front) : 0.0;
    s->aux_eps = c->aux ? amq_filter_fpr_bound(c->aux) : 0.0;
    size_t total =
        amq__cascade_bytes(c, &s->model_bytes, &s->residual_bytes,
                           &s->front_bytes, &s->aux_bytes, &s->table_bytes);
    s->bits_per_key =
        8.0 * (double)total / (double)(c->members ? c->members : 1);
    s->build_seconds = c->build_seconds;
    size_t n = c->nregions + (c->reject_bins > 0);
    if (nlevels != NULL)
        *nlevels = n;
    for (size_t i = 0; levels != NULL && i < n && i < cap; i++) {
        if (i < c->nregions) {
            const amq__region *g = &c->regions[c->nregions - 1 - i];
            uint32_t hi = g->bin_hi < c->accept_bin ? g->bin_hi : c->accept_bin;
            fill_level(c, g->bin_lo, hi > g->bin_lo ? hi : g->bin_lo, g,
                       &levels[i]);
        } else {
            fill_level(c, 0, c->reject_bins, NULL, &levels[i]);
        }
    }
}

const amq_model *amq_cascade_model(const amq_cascade *c) { return c->model; }
