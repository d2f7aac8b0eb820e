/*
 * audit.c — shadow-sampling audits (§5) and shard budgets (end of §4).
 *
 * Audit. A fraction r of the queries is sampled; for those the caller does
 * the full lookup and reports the truth. The sample decision hashes the
 * query's sequence number (splitmix64 from the seed), never the key, so
 * the sampled non-members are an unbiased sample of the non-member
 * queries: p̂_ℓ = (hits in I_ℓ) / (sampled non-members) is unbiased for
 * p_ℓ, and the realised FPR is the accepted share of them. Intervals are
 * two-sided Clopper-Pearson at 1 - η (η / 2 each side).
 *
 * Flags. The paper asks to compare "upper confidence of p̂_ℓ" with the
 * build-time p_ℓ. Read literally that flags every audit with few samples
 * (an upper limit exceeds the estimate it bounds), so two flags are kept:
 *   unverified  p̂_ℓ's upper limit > the build-time certified limit: the
 *               audit cannot (yet) confirm the bound's assumption;
 *   violated    p̂_ℓ's lower limit > the build-time certified limit: the
 *               query distribution has moved; the bound no longer holds.
 * Documented response (docs/cascade.md): on `violated`, rebuild with fresh
 * held-out non-members, or fall back to a plain filter sized for the
 * target; on `unverified`, keep sampling.
 *
 * Drift. Build-time (certify) and sampled non-member bin counts are
 * compared by the χ² test of homogeneity over the bins where either has
 * mass (df = used bins - 1) and by the population stability index
 * Σ (q - p) ln(q / p) with half-count smoothing.
 *
 * Shard budgets. Shard m's memory-vs-ε curve becomes a custom curve of
 * the allocation engine in its bits direction (bits per member at rate ε,
 * interpolated linearly in ln ε between the caller's points), and
 * amq_alloc_min_memory chooses ε_m with Σ w_m ε_m <= ε_global.
 */
#include <math.h>
#include <string.h>

#include "amq/alloc.h"
#include "core/bits.h"
#include "learned/learned.h"

struct amq_audit {
    amq__mem mem;
    const amq_cascade *c;
    size_t bins; /* the cascade's, kept: freeing needs no cascade */
    uint64_t model_id, version;
    uint64_t rng;
    double rate;
    uint64_t queries, sampled, members, nonmembers, fp, fn;
    uint64_t *hits;     /* bins: sampled non-members per bin               */
    uint64_t *accepted; /* bins: of them, accepted                         */
    double bound_build;
};

amq_status amq_audit_new(const amq_cascade *c, double rate, uint64_t seed,
                         const amq_options *opt, amq_audit **out) {
    amq__mem mem;
    if (c == NULL || out == NULL || !(rate > 0.0 && rate <= 1.0))
        return AMQ_ERR_INVALID;
    *out = NULL;
    amq__mem_init(&mem, opt);
    amq_audit *a = amq__zalloc(&mem, sizeof *a);
    if (a == NULL)
        return AMQ_ERR_NOMEM;
    a->mem = mem;
    a->bins = (size_t)c->bins;
    a->hits = amq__zalloc(&mem, a->bins * 8);
    a->accepted = amq__zalloc(&mem, a->bins * 8);
    if (a->hits == NULL || a->accepted == NULL) {
        amq_audit_free(a);
        return AMQ_ERR_NOMEM;
    }
    a->c = c;
    a->model_id = amq__cascade_model_id(c);
    a->version = c->version;
    a->rng = seed;
    a->rate = rate;
    a->bound_build = amq_cascade_fpr_bound(c);
    *out = a;
    return AMQ_OK;
}

void amq_audit_free(amq_audit *a) {
    if (a == NULL)
        return;
    amq__mem mem = a->mem;
    amq__free(&mem, a->hits, a->bins * 8);
    amq__free(&mem, a->accepted, a->bins * 8);
    amq__free(&mem, a, sizeof *a);
}

bool amq_audit_sample(amq_audit *a) {
    uint64_t z = (a->rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    a->queries++;
    return (double)(z >> 11) * 0x1p-53 < a->rate;
}

amq_status amq_audit_record(amq_audit *a, const void *key, size_t len,
                            bool is_member) {
    if (a == NULL || (key == NULL && len > 0))
        return AMQ_ERR_INVALID;
    const amq_cascade *c = a->c;
    if (amq__cascade_model_id(c) != a->model_id || c->version != a->version)
        return AMQ_ERR_INCOMPATIBLE;
    double z = amq_cascade_score(c, key, len).raw;
    bool acc = amq_cascade_contains(c, key, len);
    a->sampled++;
    if (is_member) {
        a->members++;
        a->fn += !acc;
        return AMQ_OK;
    }
    uint32_t b = amq__bin_of(c->edges, c->bins, z);
    a->nonmembers++;
    a->hits[b]++;
    a->accepted[b] += acc;
    a->fp += acc;
    return AMQ_OK;
}

/* ---- the report ----------------------------------------------------------------- */

static void interval(uint64_t k, uint64_t n, double eta, double *lo,
                     double *hi) {
    *lo = amq__cp_lower(k, n, eta / 2);
    *hi = amq__cp_upper(k, n, eta / 2);
}

static void drift(const amq_audit *a, amq_audit_report *r) {
    const amq_cascade *c = a->c;
    double n1 = (double)c->certify_n, n2 = (double)a->nonmembers;
    double chi2 = 0.0, psi = 0.0;
    uint32_t used = 0;
    for (uint32_t b = 0; b < c->bins; b++) {
        double x = c->cert[b], y = (double)a->hits[b];
        if (x + y == 0)
            continue;
        used++;
        /* homogeneity: expected counts from the pooled share */
        double pool = (x + y) / (n1 + n2);
        double e1 = pool * n1, e2 = pool * n2;
        chi2 += (x - e1) * (x - e1) / e1 + (y - e2) * (y - e2) / e2;
        double p = (x + 0.5) / (n1 + 0.5 * c->bins);
        double q = (y + 0.5) / (n2 + 0.5 * c->bins);
        psi += (q - p) * log(q / p);
    }
    r->drift_chi2 = chi2;
    r->drift_df = used > 1 ? used - 1 : 0;
    r->drift_pvalue = amq__chi2_sf(chi2, r->drift_df);
    r->drift_psi = psi;
}

/* Sampled non-member hits in bins [lo, hi). */
static uint64_t hits_between(const amq_audit *a, uint32_t lo, uint32_t hi) {
    uint64_t k = 0;
    for (uint32_t b = lo; b < hi; b++)
        k += a->hits[b];
    return k;
}

static void level(const amq_audit *a, uint32_t lo, uint32_t hi, double p_build,
                  amq_audit_level *l) {
    double eta = a->c->cfg.eta;
    memset(l, 0, sizeof *l);
    l->hits = hits_between(a, lo, hi);
    l->p_hat = a->nonmembers ? (double)l->hits / (double)a->nonmembers : 0.0;
    interval(l->hits, a->nonmembers, eta, &l->p_lower, &l->p_upper);
    l->p_build = p_build;
    l->unverified = l->p_upper > p_build;
    l->violated = l->p_lower > p_build;
}

/* The bound with the audit's upper limits in place of the build's. */
static double audit_bound(const amq_audit *a, const amq_cascade_level *lv,
                          size_t nl, double p0_upper) {
    double bound = p0_upper;
    for (size_t i = 0; i < nl; i++) {
        double lo, hi;
        interval(hits_between(a, lv[i].bin_lo, lv[i].bin_hi), a->nonmembers,
                 a->c->cfg.eta, &lo, &hi);
        bound += lv[i].eps * hi;
    }
    return bound < 1.0 ? bound : 1.0;
}

void amq_audit_get_report(const amq_audit *a, amq_audit_report *r,
                          amq_audit_level *levels, size_t cap) {
    const amq_cascade *c = a->c;
    amq_cascade_stats s;
    amq_cascade_level lv[AMQ_CASCADE_MAX_LEVELS + 1];
    size_t nl = 0;
    memset(r, 0, sizeof *r);
    amq_cascade_get_stats(c, &s, lv, AMQ_CASCADE_MAX_LEVELS + 1, &nl);
    r->queries = a->queries;
    r->sampled = a->sampled;
    r->members = a->members;
    r->nonmembers = a->nonmembers;
    r->false_positives = a->fp;
    r->false_negatives = a->fn;
    r->fpr_hat = a->nonmembers ? (double)a->fp / (double)a->nonmembers : 0.0;
    interval(a->fp, a->nonmembers, c->cfg.eta, &r->fpr_lower, &r->fpr_upper);
    r->bound_build = a->bound_build;
    amq_audit_level l0;
    level(a, c->accept_bin, c->bins, s.p0_upper, &l0);
    r->p0_unverified = l0.unverified;
    r->p0_violated = l0.violated;
    r->unverified = l0.unverified;
    r->violated = l0.violated || r->fpr_lower > a->bound_build;
    r->bound_audit = audit_bound(a, lv, nl, l0.p_upper);
    r->nlevels = nl;
    for (size_t i = 0; i < nl; i++) {
        amq_audit_level l;
        level(a, lv[i].bin_lo, lv[i].bin_hi, lv[i].p_upper, &l);
        r->unverified |= l.unverified && lv[i].eps > 0.0;
        r->violated |= l.violated && lv[i].eps > 0.0;
        if (levels != NULL && i < cap)
            levels[i] = l;
    }
    drift(a, r);
}

/* ---- shard budgets ------------------------------------------------------------------ */

typedef struct shard_curve_ctx {
    const amq_cascade_shard_curve *s;
    double n; /* bits are divided by this to get "bits per key" */
} shard_curve_ctx;

/* Bits at rate e: linear in ln ε between the caller's points (sorted by
 * the caller's order is not assumed: nearest bracketing points). */
static double shard_bits(void *ctx, double e) {
    const shard_curve_ctx *x = ctx;
    const amq_cascade_shard_curve *s = x->s;
    double le = log(e), best_lo = -INFINITY, best_hi = INFINITY;
    double b_lo = NAN, b_hi = NAN;
    for (size_t j = 0; j < s->npoints; j++) {
        double lj = log(s->eps[j]);
        if (lj <= le && lj > best_lo) {
            best_lo = lj;
            b_lo = s->bits[j];
        }
        if (lj >= le && lj < best_hi) {
            best_hi = lj;
            b_hi = s->bits[j];
        }
    }
    if (isnan(b_hi)) /* looser than every point: the loosest point's bits */
        return b_lo / x->n;
    if (isnan(b_lo)) /* tighter than every point: unreachable */
        return INFINITY;
    if (best_hi == best_lo)
        return b_lo / x->n;
    double t = (le - best_lo) / (best_hi - best_lo);
    return (b_lo + t * (b_hi - b_lo)) / x->n;
}

amq_status amq_cascade_shard_budgets(const amq_cascade_shard_curve *shards,
                                     size_t nshards, double eps_global,
                                     double *eps_out, double *bits_out) {
    if (shards == NULL || nshards == 0 || eps_out == NULL ||
        !(eps_global > 0.0 && eps_global < 1.0) ||
        nshards > AMQ_CASCADE_SHARD_MAX)
        return AMQ_ERR_INVALID;
    for (size_t m = 0; m < nshards; m++) {
        const amq_cascade_shard_curve *s = &shards[m];
        if (s->npoints == 0 || !(s->weight >= 0.0) || s->eps == NULL ||
            s->bits == NULL)
            return AMQ_ERR_INVALID;
        for (size_t j = 0; j < s->npoints; j++)
            if (!(s->eps[j] > 0.0 && s->eps[j] <= 1.0) || !(s->bits[j] >= 0.0))
                return AMQ_ERR_INVALID;
    }
    amq_alloc_curve *curves[AMQ_CASCADE_SHARD_MAX] = {NULL};
    amq_alloc_group groups[AMQ_CASCADE_SHARD_MAX];
    amq_alloc_pick picks[AMQ_CASCADE_SHARD_MAX];
    shard_curve_ctx ctx[AMQ_CASCADE_SHARD_MAX];
    amq_status st = AMQ_OK;
    for (size_t m = 0; m < nshards && st == AMQ_OK; m++) {
        double maxb = 0.0, mine = 1.0;
        for (size_t j = 0; j < shards[m].npoints; j++) {
            maxb = fmax(maxb, shards[m].bits[j]);
            mine = fmin(mine, shards[m].eps[j]);
        }
        /* bits are scaled by the shard's largest so the curve spans [0, 1] */
        ctx[m] = (shard_curve_ctx){&shards[m], maxb > 0 ? maxb : 1.0};
        amq_alloc_custom cu = {.bits = shard_bits,
                               .ctx = &ctx[m],
                               .max_bits = 1.0,
                               .min_fpr = mine,
                               .samples = 512};
        st = amq_alloc_curve_custom(&cu, NULL, &curves[m]);
        groups[m] = (amq_alloc_group){ctx[m].n, shards[m].weight, curves[m]};
    }
    if (st == AMQ_OK)
        st =
            amq_alloc_min_memory(groups, nshards, 0.0, eps_global, picks, NULL);
    for (size_t m = 0; m < nshards && st == AMQ_OK; m++) {
        eps_out[m] = picks[m].spec[0] ? picks[m].fpr : 1.0;
        if (bits_out != NULL)
            bits_out[m] = picks[m].bits_per_key * ctx[m].n;
    }
    for (size_t m = 0; m < nshards; m++)
        amq_alloc_curve_free(curves[m]);
    return st;
}
