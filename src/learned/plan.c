/*
 * plan.c — choosing the cascade: the reject tail, τ_0, the intervals and
 * every residual's size, jointly (eq. 2-7).
 *
 *   bins:  | tail (reject) | I_k ... I_1 (residuals) | I_0 (accept)      |
 *          0              lo                          j                   B
 *
 * For each interval count k and each candidate τ_0 (bin j), the intervals
 * of [lo, j) come from the optimal-partition DP (or an equal split), and
 * the allocation engine (amq/alloc.h) sizes them on the residual type's
 * real curve: minimum memory with p_0 + Σ p_ℓ f(b_ℓ) <= ε, or minimum
 * p_0 + Σ p_ℓ f(b_ℓ) within the memory left after the model and tables.
 * The p's here come from the *tune* split, as Clopper-Pearson upper limits
 * at the same η / G the certificate will use, so the chosen plan leaves
 * the slack certification needs; the final sizes are then solved once
 * more with the *certify* split's limits (which had no say in the choice
 * of thresholds, so their coverage is honest).
 *
 * Methods:
 *   cascade   the above, k chosen (levels = 0: the best of 1..8; a level
 *             must save 0.5% of the residuals' bits to be added);
 *   lbf       k = 1;
 *   sandwich  k = 1 behind an initial filter over all members: the
 *             initial filter's bits b_f are scanned (0..16 bits per key,
 *             every 1/8) and the backup sized by the engine for the rest,
 *             FPR = f(b_f) · (p_0 + p_1 f(b_1));
 *   plbf      DP intervals sized by PLBF's closed form f_ℓ ∝ g_ℓ / h_ℓ
 *             (clipped at 1, scaled to the target), without the engine.
 *
 * Smoothing: the DP's ratio g/h needs h > 0; each bin's tune mass gets
 * 0.5 / N_tune added (a Jeffreys-like half count) in the DP only.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "amq/alloc.h"
#include "core/spec.h"
#include "learned/learned.h"

#define AUTO_LEVELS 8u
#define LEVEL_GAIN 0.005
#define FRONT_MAX_BITS 16.0
#define FRONT_STEP 0.125
/* PLBF's sizes go through the residual type's inverse curve many times per
 * candidate: it is tabulated every 1/32 decade down to 1e-12. */
#define PLBF_GRID (12 * 32 + 1)

typedef struct planner {
    const amq_cascade *c;
    amq_alloc_curve *curve;
    double *cg, *ch;           /* prefix sums: member share, smoothed mass   */
    double *cm, *ct;           /* prefix sums: member count, tune count      */
    uint32_t lo;               /* first bin after the reject tail            */
    double fixed_bits;         /* model, tables, insert buffer               */
    double n;                  /* members                                    */
    double bits_at[PLBF_GRID]; /* residual bits/key at rate 10^(-g / 32)     */
    amq__dp dp;
} planner;

/* One evaluated candidate. */
typedef struct candidate {
    bool ok;
    double total_bits; /* everything                                 */
    double cost;       /* the (tune) bound                           */
    amq__plan plan;
} candidate;

static double upper(const planner *p, double count, unsigned groups) {
    return amq__cp_upper((uint64_t)count, p->c->tune_n, p->c->cfg.eta / groups);
}

static double mass(const planner *p, uint32_t a, uint32_t b) {
    return p->ct[b] - p->ct[a];
}

static double members_in(const planner *p, uint32_t a, uint32_t b) {
    return p->cm[b] - p->cm[a];
}

/* Top of what the top interval holds: j plus the headroom bins. */
static uint32_t hold_top(const planner *p, uint32_t j) {
    uint32_t t = j + p->c->cfg.headroom;
    return t < p->c->bins ? t : p->c->bins;
}

/* Engine groups for cuts[0..k] (weights: tune upper limits) and the
 * accepted mass's limit p0. */
static void groups_of(const planner *p, const uint32_t *cuts, uint32_t k,
                      amq_alloc_group *g, double *p0) {
    uint32_t j = cuts[k];
    for (uint32_t r = 0; r < k; r++) {
        uint32_t hi = r + 1 == k ? hold_top(p, j) : cuts[r + 1];
        g[r].keys = members_in(p, cuts[r], hi);
        g[r].weight = upper(p, mass(p, cuts[r], cuts[r + 1]), k + 1);
        g[r].curve = p->curve;
    }
    *p0 = upper(p, mass(p, j, p->c->bins), k + 1);
}

static void plan_cuts(const planner *p, const uint32_t *cuts, uint32_t k,
                      amq__plan *out) {
    memset(out, 0, sizeof *out);
    out->nregions = k;
    memcpy(out->cuts, cuts, (k + 1) * sizeof *cuts);
    out->reject_bins = p->lo;
    out->accept_bin = cuts[k];
    out->hold_top = hold_top(p, cuts[k]);
}

static void take_picks(amq__plan *out, const amq_alloc_pick *picks,
                       uint32_t k) {
    for (uint32_t r = 0; r < k; r++) {
        snprintf(out->spec[r], sizeof out->spec[r], "%s", picks[r].spec);
        out->fpr[r] = picks[r].fpr;
    }
}

/* Engine sizing of one cut: fills cand (ok false if infeasible). */
static void size_engine(const planner *p, const uint32_t *cuts, uint32_t k,
                        candidate *cand) {
    amq_alloc_group g[AMQ_CASCADE_MAX_LEVELS];
    amq_alloc_pick picks[AMQ_CASCADE_MAX_LEVELS];
    amq_alloc_summary sum;
    double p0;
    const amq_cascade_config *cfg = &p->c->cfg;
    groups_of(p, cuts, k, g, &p0);
    cand->ok = false;
    if (cfg->fpr > 0.0) {
        if (amq_alloc_min_memory(g, k, p0, cfg->fpr, picks, &sum) != AMQ_OK)
            return;
        cand->cost = sum.cost;
    } else {
        double budget = cfg->bits_per_key * p->n - p->fixed_bits;
        if (budget < 0.0 ||
            amq_alloc_min_cost(g, k, budget, picks, &sum) != AMQ_OK)
            return;
        cand->cost = p0 + sum.cost;
    }
    cand->total_bits = sum.memory_bits + p->fixed_bits;
    plan_cuts(p, cuts, k, &cand->plan);
    take_picks(&cand->plan, picks, k);
    cand->ok = true;
}

/* ---- PLBF's closed form ------------------------------------------------------ */

/* f_ℓ = min(1, s g_ℓ / h_ℓ) with s such that p0 + Σ h f = target. */
static double plbf_cost(const double *gs, const double *hs, uint32_t k,
                        double s, double p0, double *f) {
    double cost = p0;
    for (uint32_t r = 0; r < k; r++) {
        f[r] = hs[r] > 0 ? fmin(1.0, s * gs[r] / hs[r]) : 0.0;
        cost += hs[r] * f[r];
    }
    return cost;
}

/* Bits per key at rate f from the table (linear in log10 f; the finer
 * grid point on the safe side at the ends). */
static double bits_for(const planner *p, double f) {
    double g = -32.0 * log10(fmax(f, 1e-12));
    if (g <= 0.0)
        return p->bits_at[0];
    size_t i = (size_t)g;
    if (i + 1 >= PLBF_GRID)
        return p->bits_at[PLBF_GRID - 1];
    double t = g - (double)i;
    return p->bits_at[i] + t * (p->bits_at[i + 1] - p->bits_at[i]);
}

static double plbf_bits(const planner *p, const double *keys, const double *f,
                        uint32_t k) {
    double bits = 0.0;
    for (uint32_t r = 0; r < k; r++)
        if (f[r] < 1.0 && keys[r] > 0)
            bits += keys[r] * bits_for(p, f[r]);
    return bits + p->fixed_bits;
}

static amq_status tabulate(planner *p) {
    for (size_t g = 0; g < PLBF_GRID; g++) {
        double f = pow(10.0, -(double)g / 32.0), b = 0.0;
        if (g > 0 && amq_curve_bits(p->c->residual_spec, f, &b) != AMQ_OK)
            return AMQ_ERR_SPEC;
        p->bits_at[g] = b;
    }
    return AMQ_OK;
}

/* Bisection on the scale s: to the target cost (fpr mode) or to the
 * budget (memory mode). */
static void size_plbf(const planner *p, const uint32_t *cuts, uint32_t k,
                      candidate *cand) {
    amq_alloc_group g[AMQ_CASCADE_MAX_LEVELS];
    double gs[AMQ_CASCADE_MAX_LEVELS], hs[AMQ_CASCADE_MAX_LEVELS];
    double keys[AMQ_CASCADE_MAX_LEVELS], f[AMQ_CASCADE_MAX_LEVELS], p0;
    const amq_cascade_config *cfg = &p->c->cfg;
    groups_of(p, cuts, k, g, &p0);
    for (uint32_t r = 0; r < k; r++) {
        keys[r] = g[r].keys;
        gs[r] = g[r].keys / p->n;
        hs[r] = g[r].weight;
    }
    cand->ok = false;
    /* fpr target: feasible for small s, the largest feasible s wins;
     * memory target: feasible for large s, the smallest feasible wins. */
    bool by_fpr = cfg->fpr > 0.0;
    double lo = 1e-12, hi = 1e12, budget = cfg->bits_per_key * p->n;
    for (int it = 0; it < 100; it++) {
        double s = sqrt(lo * hi);
        double cost = plbf_cost(gs, hs, k, s, p0, f);
        bool feasible =
            by_fpr ? cost <= cfg->fpr : plbf_bits(p, keys, f, k) <= budget;
        if (feasible == by_fpr)
            lo = s;
        else
            hi = s;
    }
    double sbest = by_fpr ? lo : hi;
    double cost = plbf_cost(gs, hs, k, sbest, p0, f);
    double bits = plbf_bits(p, keys, f, k);
    if ((cfg->fpr > 0.0 && cost > cfg->fpr * (1 + 1e-9)) || !isfinite(bits) ||
        (cfg->bits_per_key > 0.0 && bits > cfg->bits_per_key * p->n * 1.0001))
        return;
    plan_cuts(p, cuts, k, &cand->plan);
    for (uint32_t r = 0; r < k; r++) {
        bool none = f[r] >= 1.0 || keys[r] == 0;
        snprintf(cand->plan.spec[r], sizeof cand->plan.spec[r], "%s",
                 none ? "" : p->c->residual_spec);
        cand->plan.fpr[r] = fmax(f[r], 1e-12);
    }
    cand->cost = cost;
    cand->total_bits = bits;
    cand->ok = true;
}

/* ---- the sandwich ---------------------------------------------------------------- */

static void size_sandwich(const planner *p, const uint32_t *cuts,
                          candidate *cand) {
    const amq_cascade_config *cfg = &p->c->cfg;
    amq_alloc_group g;
    amq_alloc_pick back, front;
    amq_alloc_summary sum;
    double p0;
    groups_of(p, cuts, 1, &g, &p0);
    cand->ok = false;
    for (double bf = 0.0; bf <= FRONT_MAX_BITS; bf += FRONT_STEP) {
        if (amq_alloc_curve_at(p->curve, bf, &front) != AMQ_OK)
            continue;
        double ef = front.spec[0] ? front.fpr : 1.0,
               fbits = front.bits_per_key * p->n;
        double cost, bits;
        if (cfg->fpr > 0.0) {
            if (amq_alloc_min_memory(&g, 1, p0, cfg->fpr / ef, &back, &sum) !=
                AMQ_OK)
                continue;
            cost = ef * sum.cost;
            bits = fbits + sum.memory_bits + p->fixed_bits;
        } else {
            double budget = cfg->bits_per_key * p->n - p->fixed_bits - fbits;
            if (budget < 0.0 ||
                amq_alloc_min_cost(&g, 1, budget, &back, &sum) != AMQ_OK)
                continue;
            cost = ef * (p0 + sum.cost);
            bits = fbits + sum.memory_bits + p->fixed_bits;
        }
        bool better = !cand->ok || (cfg->fpr > 0.0 ? bits < cand->total_bits
                                                   : cost < cand->cost);
        if (!better)
            continue;
        plan_cuts(p, cuts, 1, &cand->plan);
        take_picks(&cand->plan, &back, 1);
        snprintf(cand->plan.front_spec, sizeof cand->plan.front_spec, "%s",
                 front.spec);
        cand->plan.front_fpr = front.fpr;
        cand->cost = cost;
        cand->total_bits = bits;
        cand->ok = true;
    }
}

/* ---- the search ------------------------------------------------------------------ */

static bool cut_for(const planner *p, uint32_t j, uint32_t k, uint32_t *cuts) {
    switch (p->c->cfg.partition) {
    case AMQ_PARTITION_EQUAL_MEMBERS:
        return amq__equal_cut(p->cm, p->lo, j, k, cuts);
    case AMQ_PARTITION_EQUAL_MASS:
        return amq__equal_cut(p->ct, p->lo, j, k, cuts);
    default: return amq__dp_cut(&p->dp, j, k, cuts);
    }
}

/* a beats b; with a margin, by that share of what the plan decides (the
 * residuals' bits, or the bound), not of the fixed costs (model, tables,
 * frame), which would make a level's gain look smaller the larger the
 * model. */
static bool better(const planner *p, const candidate *a, const candidate *b,
                   double margin) {
    if (!a->ok)
        return false;
    if (!b->ok)
        return true;
    double fixed = p->fixed_bits;
    return p->c->cfg.fpr > 0.0
               ? a->total_bits - fixed < (b->total_bits - fixed) * (1 - margin)
               : a->cost < b->cost * (1.0 - margin);
}

static void evaluate(const planner *p, uint32_t j, uint32_t k,
                     candidate *cand) {
    uint32_t cuts[AMQ_CASCADE_MAX_LEVELS + 1];
    cand->ok = false;
    if (!cut_for(p, j, k, cuts))
        return;
    switch (p->c->cfg.method) {
    case AMQ_LEARNED_PLBF: size_plbf(p, cuts, k, cand); break;
    case AMQ_LEARNED_SANDWICH: size_sandwich(p, cuts, cand); break;
    default: size_engine(p, cuts, k, cand);
    }
}

/* The best τ_0 for k intervals. */
static void best_for_k(const planner *p, uint32_t k, candidate *best) {
    candidate cand;
    best->ok = false;
    for (uint32_t j = p->lo + k; j <= p->c->bins; j++) {
        evaluate(p, j, k, &cand);
        if (better(p, &cand, best, 0.0))
            *best = cand;
    }
}

static amq_status planner_init(planner *p, const amq_cascade *c) {
    memset(p, 0, sizeof *p);
    p->c = c;
    uint32_t B = c->bins;
    size_t bytes = (size_t)(B + 1) * sizeof(double);
    p->cg = amq__alloc(&c->mem, bytes);
    p->ch = amq__alloc(&c->mem, bytes);
    p->cm = amq__alloc(&c->mem, bytes);
    p->ct = amq__alloc(&c->mem, bytes);
    if (!p->cg || !p->ch || !p->cm || !p->ct)
        return AMQ_ERR_NOMEM;
    p->n = (double)c->members;
    double nt = (double)(c->tune_n ? c->tune_n : 1), smooth = 0.5 / nt;
    p->cg[0] = p->ch[0] = p->cm[0] = p->ct[0] = 0.0;
    for (uint32_t b = 0; b < B; b++) {
        p->cm[b + 1] = p->cm[b] + c->memb[b];
        p->ct[b + 1] = p->ct[b] + c->tune[b];
        p->cg[b + 1] = p->cm[b + 1] / fmax(p->n, 1.0);
        p->ch[b + 1] = p->ch[b] + c->tune[b] / nt + smooth;
    }
    /* the reject tail: the most bins holding at most δ of the members */
    if (c->cfg.tail == AMQ_TAIL_REJECT)
        while (p->lo < B && p->cm[p->lo + 1] <= c->cfg.delta * p->n)
            p->lo++;
    size_t model, res, front, aux, tables;
    (void)amq__cascade_bytes(c, &model, &res, &front, &aux, &tables);
    double aux_bits = 0.0;
    if (c->cfg.aux_capacity > 0 &&
        amq_curve_bits(c->aux_spec, c->cfg.aux_fpr, &aux_bits) != AMQ_OK)
        return AMQ_ERR_SPEC;
    /* the frame: header, fixed parameters, checksum (a region's entry and
     * its filter's frame are the realised plan's; the check after building
     * tightens the target by what they add) */
    p->fixed_bits = 8.0 * (double)(model + tables + 64 + 480 + 8) +
                    aux_bits * (double)c->cfg.aux_capacity;
    return AMQ_OK;
}

static void planner_free(planner *p) {
    const amq__mem *mem = &p->c->mem;
    size_t bytes = (size_t)(p->c->bins + 1) * sizeof(double);
    amq__free(mem, p->cg, p->cg ? bytes : 0);
    amq__free(mem, p->ch, p->ch ? bytes : 0);
    amq__free(mem, p->cm, p->cm ? bytes : 0);
    amq__free(mem, p->ct, p->ct ? bytes : 0);
    amq__dp_free(&p->dp, mem);
    amq_alloc_curve_free(p->curve);
}

static amq_status search(planner *p, candidate *best, amq_diag *diag) {
    const amq_cascade_config *cfg = &p->c->cfg;
    uint32_t room = p->c->bins - p->lo;
    uint32_t kmax = cfg->levels ? cfg->levels : AUTO_LEVELS;
    if (kmax > room)
        kmax = room;
    if (kmax == 0)
        return amq__diag(diag, AMQ_ERR_INVALID, 0,
                         "no bins left for a residual");
    AMQ_RETURN_IF_ERR(
        amq__dp_run(&p->dp, &p->c->mem, p->cg, p->ch, p->lo, p->c->bins, kmax));
    best->ok = false;
    for (uint32_t k = cfg->levels ? cfg->levels : 1; k <= kmax; k++) {
        candidate cand;
        best_for_k(p, k, &cand);
        if (better(p, &cand, best, best->ok ? LEVEL_GAIN : 0.0))
            *best = cand;
    }
    return AMQ_OK;
}

/* Re-solve the chosen cut's sizes with the certify split's limits. If
 * they leave no allocation (p_0's certified limit above the target), τ_0
 * rises bin by bin — the top interval takes the bins I_0 gives up — until
 * one exists. */
static amq_status certify_sizes(const planner *p, candidate *best,
                                amq_diag *diag) {
    const amq_cascade *c = p->c;
    if (c->cfg.method != AMQ_LEARNED_CASCADE &&
        c->cfg.method != AMQ_LEARNED_LBF)
        return AMQ_OK;
    planner q = *p;
    double *ct = amq__alloc(&c->mem, (size_t)(c->bins + 1) * sizeof *ct);
    if (ct == NULL)
        return AMQ_ERR_NOMEM;
    ct[0] = 0.0;
    for (uint32_t b = 0; b < c->bins; b++)
        ct[b + 1] = ct[b] + c->cert[b];
    q.ct = ct;
    amq_cascade tmp = *c;
    tmp.tune_n = c->certify_n; /* upper() reads the sample size from here */
    q.c = &tmp;
    candidate fin = {.ok = false};
    uint32_t k = best->plan.nregions, cuts[AMQ_CASCADE_MAX_LEVELS + 1];
    memcpy(cuts, best->plan.cuts, sizeof cuts);
    for (uint32_t j = cuts[k]; j <= c->bins && !fin.ok; j++) {
        cuts[k] = j;
        size_engine(&q, cuts, k, &fin);
    }
    amq__free(&c->mem, ct, (size_t)(c->bins + 1) * sizeof *ct);
    if (!fin.ok)
        return amq__diag(diag, AMQ_ERR_FULL, 0,
                         "the certify split's upper limits leave no "
                         "allocation within the target");
    *best = fin;
    return AMQ_OK;
}

/* With a worst-case cap E the front filter (every member, rate E, the
 * residual type) comes first; the learned route behind it is planned for
 * fpr / E, or within the budget left after the front's bits. */
static amq_status cap_front(const amq_cascade *c, amq_cascade *tmp,
                            double *front_bits, amq_diag *diag) {
    *tmp = *c;
    *front_bits = 0.0;
    double e = c->cfg.worst_case;
    if (!(e > 0.0))
        return AMQ_OK;
    if (amq_curve_bits(c->residual_spec, e, front_bits) != AMQ_OK)
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "%s has no curve for the worst-case cap",
                         c->residual_spec);
    *front_bits *= (double)c->members;
    if (c->cfg.fpr > 0.0)
        tmp->cfg.fpr = fmin(c->cfg.fpr / e, 1.0 - 1e-9);
    return AMQ_OK;
}

amq_status amq__cascade_plan(const amq_cascade *c, amq__plan *plan,
                             amq_diag *diag) {
    planner p;
    candidate best = {.ok = false};
    amq_cascade capped;
    double front_bits;
    AMQ_RETURN_IF_ERR(cap_front(c, &capped, &front_bits, diag));
    c = &capped;
    amq_status st = planner_init(&p, c);
    p.fixed_bits += front_bits;
    if (st == AMQ_OK)
        st = amq_alloc_curve_spec(c->residual_spec, NULL, &p.curve, diag);
    if (st == AMQ_OK && c->cfg.method == AMQ_LEARNED_PLBF)
        st = tabulate(&p);
    if (st == AMQ_OK)
        st = search(&p, &best, diag);
    if (st == AMQ_OK && !best.ok && c->cfg.fpr > 0.0)
        st = amq__diag(diag, AMQ_ERR_FULL, 0,
                       "no plan certifies fpr %g with this held-out sample",
                       c->cfg.fpr);
    else if (st == AMQ_OK && !best.ok)
        st = amq__diag(diag, AMQ_ERR_FULL, 0,
                       "%g bits per key cannot hold the model and tables "
                       "(%.3g bits per key) and a residual",
                       c->cfg.bits_per_key, p.fixed_bits / fmax(p.n, 1.0));
    if (st == AMQ_OK)
        st = certify_sizes(&p, &best, diag);
    if (st == AMQ_OK)
        *plan = best.plan;
    if (st == AMQ_OK && c->cfg.worst_case > 0.0) {
        memcpy(plan->front_spec, c->residual_spec, sizeof plan->front_spec);
        plan->front_fpr = c->cfg.worst_case;
    }
    planner_free(&p);
    return st;
}
