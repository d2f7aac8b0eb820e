/*
 * solve.c — water-filling over per-group false-positive curves.
 *
 * Both problems share one Lagrangian, sum p_i f_i(b_i) + lambda sum n_i b_i:
 * at a multiplier lambda each group independently buys every bit whose
 * gain p_i |f_i'(b)| exceeds lambda n_i, i.e. it goes to the point of its
 * (convex) curve where the slope is s_i = lambda n_i / p_i:
 *
 *   model e^(-c b):  b_i(lambda) = max(0, ln(c p_i / (lambda n_i)) / c)
 *   hull:            the vertex where the segment slopes cross s_i
 *
 * Memory m(lambda) falls and cost C(lambda) rises as lambda grows, so one
 * bisection on u = ln lambda (in logs: lambda spans hundreds of decades
 * between a tiny budget and a huge one) brackets the multiplier that meets
 * the budget M (min_cost) or the rate eps (min_memory) between two
 * neighbouring doubles. What the bracket cannot resolve is closed exactly:
 *
 *   - a hull group whose response jumps inside the bracket sits on a
 *     segment whose slope is the multiplier; it takes the leftover budget
 *     fractionally (at most one group needs to, unless slopes tie);
 *   - model groups get the closed form for their active set A:
 *     min_cost    u = (sum_A (n_i/c_i) ln(c_i p_i/n_i) - M_A) / sum_A n_i/c_i
 *     min_memory  e^u = (E_A - sum_{not A} p_i) / sum_A n_i/c_i
 *     iterated until A is stable (once, in practice).
 *
 * That is the convex relaxation, solved exactly; its KKT residual is
 * reported. Then the rounding: a group inside a chord of its hull (a
 * mixture of two configurations that cannot be built) moves to the end
 * that keeps the constraint (min_cost: fewer bits; min_memory: more), and
 * a greedy pass re-spends the slack, best marginal ratio first, whole
 * chords only; model groups absorb what is left.
 *
 * All work is in the caller's picks array (bits, rates) and on the stack:
 * the solvers allocate nothing and do not touch a curve.
 */
#include <math.h>
#include <string.h>

#include "alloc/curve.h"

typedef enum gkind { G_SKIP, G_MODEL, G_HULL } gkind;

/* One problem instance as the helpers see it. */
typedef struct prob {
    const amq_alloc_group *g;
    size_t n;
    amq_alloc_pick *pk; /* working b (bits_per_key) and f (fpr) per group */
    bool has_model, has_hull;
} prob;

static gkind kind_of(const amq_alloc_group *g) {
    if (g->keys == 0 || g->weight == 0)
        return G_SKIP;
    return g->curve->kind == ALLOC_MODEL ? G_MODEL : G_HULL;
}

/* ln(c p / n): the model group's u at which it starts buying. */
static double model_top(const amq_alloc_group *g) {
    return log(g->curve->c) + log(g->weight) - log(g->keys);
}

/* Number of hull segments with slope > s (slopes non-increasing). */
static size_t hull_count_above(const amq_alloc_curve *c, double s) {
    size_t lo = 0, hi = c->nh - 1;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (c->sigma[mid] > s)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Group response at u = ln lambda: bits and rate. */
static void respond(const amq_alloc_group *g, double u, double *b, double *f) {
    const amq_alloc_curve *c = g->curve;
    if (c->kind == ALLOC_MODEL) {
        double x = (model_top(g) - u) / c->c;
        *b = x > 0 ? x : 0;
        *f = exp(-c->c * *b);
        return;
    }
    size_t t = hull_count_above(c, exp(u + log(g->keys) - log(g->weight)));
    *b = amq__alloc_vb(c, t);
    *f = amq__alloc_vf(c, t);
}

/* Fill the working picks with the response at u; returns memory and cost
 * (over all groups, skipped ones at b = 0). */
static void respond_all(const prob *P, double u, double *mem, double *cost) {
    double m = 0, cst = 0;
    for (size_t i = 0; i < P->n; i++) {
        const amq_alloc_group *g = &P->g[i];
        amq_alloc_pick *p = &P->pk[i];
        if (kind_of(g) == G_SKIP) {
            p->bits_per_key = 0;
            p->fpr = g->keys == 0 ? 0.0 : 1.0;
        } else {
            respond(g, u, &p->bits_per_key, &p->fpr);
        }
        m += g->keys * p->bits_per_key;
        cst += g->weight * p->fpr;
    }
    if (mem)
        *mem = m;
    if (cost)
        *cost = cst;
}

/* The smallest u at which no group buys anything. */
static double u_top(const prob *P) {
    double top = -INFINITY;
    for (size_t i = 0; i < P->n; i++) {
        const amq_alloc_group *g = &P->g[i];
        double t = -INFINITY;
        if (kind_of(g) == G_MODEL)
            t = model_top(g);
        else if (kind_of(g) == G_HULL && g->curve->nh > 1)
            t = log(g->curve->sigma[0]) + log(g->weight) - log(g->keys);
        top = t > top ? t : top;
    }
    return top;
}

/* ---- validation and the trivial cases ------------------------------------- */

static bool finite_nonneg(double v) { return v >= 0 && isfinite(v); }

static amq_status validate(const amq_alloc_group *g, size_t n,
                           const amq_alloc_pick *pk, prob *P) {
    if (n > 0 && (g == NULL || pk == NULL))
        return AMQ_ERR_INVALID;
    memset(P, 0, sizeof *P);
    for (size_t i = 0; i < n; i++) {
        if (g[i].curve == NULL || !finite_nonneg(g[i].keys) ||
            !finite_nonneg(g[i].weight))
            return AMQ_ERR_INVALID;
        gkind k = kind_of(&g[i]);
        P->has_model |= k == G_MODEL;
        P->has_hull |= k == G_HULL;
    }
    P->g = g;
    P->n = n;
    P->pk = (amq_alloc_pick *)pk;
    return AMQ_OK;
}

static void summary_zero(amq_alloc_summary *s) {
    if (s != NULL)
        memset(s, 0, sizeof *s);
}

/* ---- hull positions ---------------------------------------------------------- */

/* Where b sits on a hull: vertex t, and inside segment t when b > vb(t). */
static size_t seg_of(const amq_alloc_curve *c, double b, bool *inside) {
    size_t t = amq__alloc_hull_find(c, b);
    *inside = t + 1 < c->nh && b > amq__alloc_vb(c, t);
    return t;
}

/* ---- the model groups' closed form --------------------------------------- */

/* Sums over the model groups active at u (those that buy bits). */
static void model_sums(const prob *P, double u, double *s1, double *s2,
                       double *idle_p) {
    *s1 = *s2 = *idle_p = 0;
    for (size_t i = 0; i < P->n; i++) {
        const amq_alloc_group *g = &P->g[i];
        if (kind_of(g) != G_MODEL)
            continue;
        double w = g->keys / g->curve->c, top = model_top(g);
        if (top > u) {
            *s1 += w;
            *s2 += w * top;
        } else {
            *idle_p += g->weight;
        }
    }
}

/* u at which the model groups hold exactly `target` (memory: bits, or
 * rate: cost), starting from u0 and iterating the active set. */
static double model_solve(const prob *P, double u0, double target,
                          bool by_cost) {
    double u = u0;
    for (size_t it = 0; it <= P->n + 1; it++) {
        double s1, s2, idle, next;
        model_sums(P, u, &s1, &s2, &idle);
        if (s1 == 0)
            return u;
        if (by_cost) {
            double room = target - idle;
            if (!(room > 0))
                return u;
            next = log(room / s1);
        } else {
            next = (s2 - (target > 0 ? target : 0)) / s1;
        }
        double s1n, s2n, idlen;
        model_sums(P, next, &s1n, &s2n, &idlen);
        u = next;
        if (s1n == s1 && s2n == s2)
            break;
    }
    return u;
}

/* Set every model group to its response at u; returns their memory and
 * cost through the accumulators. */
static void model_apply(const prob *P, double u) {
    for (size_t i = 0; i < P->n; i++)
        if (kind_of(&P->g[i]) == G_MODEL)
            respond(&P->g[i], u, &P->pk[i].bits_per_key, &P->pk[i].fpr);
}

static void totals(const prob *P, gkind only, double *mem, double *cost) {
    double m = 0, cst = 0;
    for (size_t i = 0; i < P->n; i++) {
        if (only != G_SKIP && kind_of(&P->g[i]) != only)
            continue;
        m += P->g[i].keys * P->pk[i].bits_per_key;
        cst += P->g[i].weight * P->pk[i].fpr;
    }
    *mem = m;
    *cost = cst;
}

/* ---- bisection ------------------------------------------------------------------ */

typedef struct bracket {
    double lo, hi; /* u values; lo buys more than hi */
} bracket;

/* Is u "enough" (memory >= M, or cost <= E)? */
static bool enough(const prob *P, double u, bool by_cost, double target) {
    double m, c;
    respond_all(P, u, &m, &c);
    return by_cost ? c <= target : m >= target;
}

/* Widen downwards from hi until lo is enough, then halve the bracket down
 * to neighbouring doubles. false: even the lowest u is not enough. */
static bool bisect(const prob *P, bool by_cost, double target, bracket *br) {
    double hi = u_top(P) + 1.0, lo = hi - 1.0, step = 1.0;
    while (!enough(P, lo, by_cost, target)) {
        if (!isfinite(step) || step > 1e300)
            return false;
        hi = lo;
        lo -= step;
        step *= 2;
    }
    for (int it = 0; it < 4096; it++) {
        double mid = lo + (hi - lo) / 2;
        if (!(mid > lo && mid < hi))
            break;
        if (enough(P, mid, by_cost, target))
            lo = mid;
        else
            hi = mid;
    }
    br->lo = lo;
    br->hi = hi;
    return true;
}

/* ---- the relaxed solution ------------------------------------------------------- */

/* Hull groups move from where they are toward their response at `to`,
 * spending `budget` (memory when moving up, cost when moving down);
 * returns what is left. *lam (if a group stops part-way) is its slope's
 * multiplier. */
static double hull_fill(const prob *P, double to, double budget, bool up,
                        double *lam) {
    for (size_t i = 0; i < P->n && budget > 0; i++) {
        const amq_alloc_group *g = &P->g[i];
        if (kind_of(g) != G_HULL)
            continue;
        double b0 = P->pk[i].bits_per_key, b1, f1;
        respond(g, to, &b1, &f1);
        if (b1 == b0)
            continue;
        const amq_alloc_curve *c = g->curve;
        double full = up ? g->keys * (b1 - b0)
                         : g->weight * (f1 - P->pk[i].fpr);
        if (full <= budget) {
            P->pk[i].bits_per_key = b1;
            P->pk[i].fpr = f1;
            budget -= full;
            continue;
        }
        /* part-way: the segments crossed have (nearly) one slope */
        bool in;
        size_t t = seg_of(c, up ? b0 : b1, &in);
        double sig = c->sigma[t];
        double db = up ? budget / g->keys : -budget / (g->weight * sig);
        double b = b0 + db;
        P->pk[i].bits_per_key = b;
        P->pk[i].fpr = amq__alloc_hull_value(c, b);
        *lam = g->weight * sig / g->keys;
        budget = 0;
    }
    return budget;
}

typedef struct relaxed {
    double lambda;
    double mem, cost;
} relaxed;

/* min_cost relaxation (lambda = 0 when the budget does not bind:
 * everything at its maximum). */
static void relax_cost(const prob *P, double M, relaxed *r) {
    bracket br;
    double lam = -1, m, cst;
    if (!P->has_model) { /* does the budget exceed what the curves take? */
        respond_all(P, -INFINITY, &m, &cst);
        if (m <= M) {
            *r = (relaxed){0, m, cst};
            return;
        }
    }
    if (!bisect(P, false, M, &br)) { /* unreachable: see above */
        respond_all(P, -INFINITY, &m, &cst);
        *r = (relaxed){0, m, cst};
        return;
    }
    respond_all(P, br.hi, &m, NULL);
    hull_fill(P, br.lo, M - m, true, &lam);
    double u = br.hi;
    if (P->has_model) {
        double hm, hc;
        totals(P, G_HULL, &hm, &hc);
        u = model_solve(P, br.hi, M - hm, false);
        model_apply(P, u);
    }
    totals(P, G_SKIP, &r->mem, &r->cost);
    r->lambda = P->has_model || lam < 0 ? exp(u) : lam;
}

static void relax_memory(const prob *P, double E, relaxed *r) {
    bracket br = {0, 0};
    double lam = -1, cst;
    bisect(P, true, E, &br); /* feasibility checked by the caller */
    respond_all(P, br.lo, NULL, &cst);
    hull_fill(P, br.hi, E - cst, false, &lam);
    double u = br.lo;
    if (P->has_model) {
        double hm, hc;
        totals(P, G_HULL, &hm, &hc);
        u = model_solve(P, br.lo, E - hc, true);
        model_apply(P, u);
    }
    totals(P, G_SKIP, &r->mem, &r->cost);
    r->lambda = P->has_model || lam < 0 ? exp(u) : lam;
}

/* ---- KKT ----------------------------------------------------------------------------- */

/* Relative violation of stationarity for one group at multiplier lam. */
static double kkt_group(const amq_alloc_group *g, const amq_alloc_pick *p,
                        double lam) {
    const amq_alloc_curve *c = g->curve;
    double s = lam * g->keys / g->weight;
    if (lam == 0)
        return c->kind == ALLOC_MODEL ? 1.0 : 0.0;
    if (c->kind == ALLOC_MODEL) {
        double d = c->c * exp(-c->c * p->bits_per_key);
        return p->bits_per_key > 0 ? fabs(d - s) / s : fmax(0, d - s) / s;
    }
    bool in;
    size_t t = seg_of(c, p->bits_per_key, &in);
    if (in)
        return fabs(c->sigma[t] - s) / s;
    double left = t > 0 ? c->sigma[t - 1] : INFINITY;
    double right = t + 1 < c->nh ? c->sigma[t] : 0;
    return fmax(0, fmax(right - s, s - left)) / s;
}

static double kkt(const prob *P, double lam, double slack_rel) {
    double worst = slack_rel;
    for (size_t i = 0; i < P->n; i++)
        if (kind_of(&P->g[i]) != G_SKIP)
            worst = fmax(worst, kkt_group(&P->g[i], &P->pk[i], lam));
    return worst;
}

/* ---- rounding to realisable points ----------------------------------------------- */

/* Replace a hull group's relaxed point by a realisable one: inside a
 * continuous segment the family's own rate; inside a chord the lower end
 * (down) or the upper end. Returns true if it moved. */
static bool realise(const amq_alloc_group *g, amq_alloc_pick *p, bool down) {
    const amq_alloc_curve *c = g->curve;
    bool in;
    size_t t = seg_of(c, p->bits_per_key, &in);
    if (!in) {
        p->fpr = amq__alloc_vf(c, t);
        return false;
    }
    if (amq__alloc_seg_continuous(c, t)) {
        p->fpr = amq__alloc_inside(c, t, p->bits_per_key);
        return false;
    }
    size_t v = down ? t : t + 1;
    p->bits_per_key = amq__alloc_vb(c, v);
    p->fpr = amq__alloc_vf(c, v);
    return true;
}

/* The next stop of a hull group moving up (next vertex) or down (previous
 * vertex, or the start of its continuous segment): memory and cost change,
 * and whether the move may stop part-way. false: nowhere to go. */
typedef struct move {
    double b, f;      /* the stop                          */
    double dmem, dcost; /* |memory change|, |cost change|  */
    bool partial;     /* continuous: may stop anywhere     */
    size_t t;         /* the segment travelled             */
} move;

static bool next_stop(const amq_alloc_group *g, const amq_alloc_pick *p,
                      bool up, move *mv) {
    const amq_alloc_curve *c = g->curve;
    bool in;
    size_t t = seg_of(c, p->bits_per_key, &in);
    size_t v;
    if (up) {
        if (t + 1 >= c->nh)
            return false;
        v = t + 1;
        mv->t = t;
    } else {
        if (!in && t == 0)
            return false;
        v = in ? t : t - 1;
        mv->t = v;
    }
    mv->b = amq__alloc_vb(c, v);
    mv->f = amq__alloc_vf(c, v);
    mv->partial = amq__alloc_seg_continuous(c, mv->t);
    mv->dmem = g->keys * fabs(mv->b - p->bits_per_key);
    mv->dcost = g->weight * fabs(mv->f - p->fpr);
    return true;
}

/* Greedy: spend `slack` (memory going up, cost going down) on the best
 * ratio move that fits, whole chords only, until nothing fits. */
static double repair(const prob *P, double slack, bool up) {
    for (;;) {
        size_t best = P->n;
        double best_ratio = -1;
        move bm = {0}, mv;
        for (size_t i = 0; i < P->n; i++) {
            if (kind_of(&P->g[i]) != G_HULL ||
                !next_stop(&P->g[i], &P->pk[i], up, &mv))
                continue;
            double use = up ? mv.dmem : mv.dcost;
            if (use > slack && !mv.partial)
                continue;
            /* going up: gain per bit; going down: bits saved per cost */
            double ratio = up ? mv.dcost / mv.dmem : mv.dmem / mv.dcost;
            if (ratio > best_ratio)
                best = i, best_ratio = ratio, bm = mv;
        }
        if (best == P->n || !(slack > 0))
            return slack;
        const amq_alloc_group *g = &P->g[best];
        amq_alloc_pick *p = &P->pk[best];
        double use = up ? bm.dmem : bm.dcost;
        if (use <= slack) {
            p->bits_per_key = bm.b;
            p->fpr = bm.f;
            slack -= use;
            continue;
        }
        /* part-way along a continuous segment, then done */
        double sig = g->curve->sigma[bm.t];
        double db = up ? slack / g->keys : -slack / (g->weight * sig);
        p->bits_per_key += db;
        p->fpr = amq__alloc_inside(g->curve, bm.t, p->bits_per_key);
        return 0;
    }
}

static size_t realise_all(const prob *P, bool down) {
    size_t moved = 0;
    for (size_t i = 0; i < P->n; i++)
        if (kind_of(&P->g[i]) == G_HULL)
            moved += realise(&P->g[i], &P->pk[i], down);
    return moved;
}

static void render_all(const prob *P) {
    for (size_t i = 0; i < P->n; i++) {
        const amq_alloc_group *g = &P->g[i];
        amq_alloc_pick *p = &P->pk[i];
        double knob = 0;
        if (kind_of(g) == G_HULL) {
            bool in;
            knob = g->curve->s[g->curve->hull[seg_of(g->curve,
                                                     p->bits_per_key, &in)]]
                       .knob;
        }
        amq__alloc_render(g->curve, knob, p->bits_per_key, p->spec,
                          sizeof p->spec);
    }
}

/* ---- entry points ------------------------------------------------------------------- */

amq_status amq_alloc_min_cost(const amq_alloc_group *groups, size_t count,
                              double M, amq_alloc_pick *picks,
                              amq_alloc_summary *sum) {
    prob P;
    relaxed r;
    AMQ_RETURN_IF_ERR(validate(groups, count, picks, &P));
    if (!finite_nonneg(M))
        return AMQ_ERR_INVALID;
    summary_zero(sum);
    relax_cost(&P, M, &r);
    double k = kkt(&P, r.lambda, r.lambda > 0 ? fabs(M - r.mem) / fmax(M, 1)
                                              : 0.0);
    size_t moved = realise_all(&P, true);
    double mem, cost;
    totals(&P, G_SKIP, &mem, &cost);
    double left = repair(&P, M - mem, true);
    if (P.has_model && left > 0) {
        double hm, hc;
        totals(&P, G_HULL, &hm, &hc);
        model_apply(&P, model_solve(&P, log(r.lambda), M - hm, false));
    }
    render_all(&P);
    if (sum != NULL) {
        totals(&P, G_SKIP, &sum->memory_bits, &sum->cost);
        sum->lambda = r.lambda;
        sum->kkt_residual = k;
        sum->relaxed_cost = r.cost;
        sum->relaxed_memory = r.mem;
        sum->rounded = moved;
    }
    return AMQ_OK;
}

/* Lowest cost the curves reach (every hull group at its last vertex, model
 * groups at zero) and the cost with no memory at all. */
static void cost_range(const prob *P, double *lowest, double *none) {
    *lowest = *none = 0;
    for (size_t i = 0; i < P->n; i++) {
        const amq_alloc_group *g = &P->g[i];
        gkind k = kind_of(g);
        if (k == G_SKIP)
            continue;
        *none += g->weight * (k == G_HULL ? amq__alloc_vf(g->curve, 0) : 1.0);
        if (k == G_HULL)
            *lowest += g->weight * amq__alloc_vf(g->curve, g->curve->nh - 1);
    }
}

/* A caller's curve with no segments left to round must still meet eps:
 * a continuous stretch of a non-convex family could exceed its chord. */
static void enforce(const prob *P, double E) {
    double m, c;
    totals(P, G_SKIP, &m, &c);
    for (size_t i = 0; i < P->n && c > E * (1 + 1e-12); i++) {
        const amq_alloc_group *g = &P->g[i];
        bool in;
        if (kind_of(g) != G_HULL)
            continue;
        size_t t = seg_of(g->curve, P->pk[i].bits_per_key, &in);
        if (!in)
            continue;
        c -= g->weight * P->pk[i].fpr;
        P->pk[i].bits_per_key = amq__alloc_vb(g->curve, t + 1);
        P->pk[i].fpr = amq__alloc_vf(g->curve, t + 1);
        c += g->weight * P->pk[i].fpr;
    }
}

amq_status amq_alloc_min_memory(const amq_alloc_group *groups, size_t count,
                                double p0, double eps, amq_alloc_pick *picks,
                                amq_alloc_summary *sum) {
    prob P;
    relaxed r;
    double lowest, none;
    AMQ_RETURN_IF_ERR(validate(groups, count, picks, &P));
    if (!finite_nonneg(p0) || !finite_nonneg(eps) || !(eps > p0))
        return AMQ_ERR_INVALID;
    double E = eps - p0;
    cost_range(&P, &lowest, &none);
    if (lowest > E || (P.has_model && lowest >= E))
        return AMQ_ERR_INVALID;
    summary_zero(sum);
    if (none <= E) { /* no memory needed */
        respond_all(&P, INFINITY, NULL, NULL);
        r = (relaxed){0, 0, none};
    } else {
        relax_memory(&P, E, &r);
    }
    double k = r.lambda > 0 ? kkt(&P, r.lambda, fabs(E - r.cost) / E) : 0;
    size_t moved = realise_all(&P, false);
    double mem, cost;
    totals(&P, G_SKIP, &mem, &cost);
    double left = repair(&P, E - cost, false);
    if (P.has_model && left > 0 && r.lambda > 0) {
        double hm, hc;
        totals(&P, G_HULL, &hm, &hc);
        model_apply(&P, model_solve(&P, log(r.lambda), E - hc, true));
    }
    enforce(&P, E);
    render_all(&P);
    if (sum != NULL) {
        totals(&P, G_SKIP, &sum->memory_bits, &sum->cost);
        sum->cost += p0;
        sum->lambda = r.lambda;
        sum->kkt_residual = k;
        sum->relaxed_cost = r.cost + p0;
        sum->relaxed_memory = r.mem;
        sum->rounded = moved;
    }
    return AMQ_OK;
}

amq_status amq_alloc_uniform(const amq_alloc_group *groups, size_t count,
                             double M, amq_alloc_pick *picks,
                             amq_alloc_summary *sum) {
    prob P;
    AMQ_RETURN_IF_ERR(validate(groups, count, picks, &P));
    if (!finite_nonneg(M))
        return AMQ_ERR_INVALID;
    double keys = 0;
    for (size_t i = 0; i < count; i++)
        keys += groups[i].keys;
    double b = keys > 0 ? M / keys : 0;
    for (size_t i = 0; i < count; i++) {
        amq_alloc_pick *p = &picks[i];
        if (groups[i].keys == 0) {
            *p = (amq_alloc_pick){0, 0, ""};
            continue;
        }
        amq_alloc_curve_at(groups[i].curve, b, p);
    }
    summary_zero(sum);
    if (sum != NULL) {
        totals(&P, G_SKIP, &sum->memory_bits, &sum->cost);
        sum->relaxed_cost = sum->cost;
        sum->relaxed_memory = sum->memory_bits;
    }
    return AMQ_OK;
}
