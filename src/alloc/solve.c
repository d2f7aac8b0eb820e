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

typedef enum gkind { G_SKIP, G_MODEL, G_HULL, G_FIXED } gkind;

/* Groups held at a realisable point while the rest is re-solved (the
 * chord search); more chords than this are left to the greedy pass. */
#define FIXED_MAX 16

/* One problem instance as the helpers see it. */
typedef struct prob {
    const amq_alloc_group *g;
    size_t n;
    amq_alloc_pick *pk; /* working b (bits_per_key) and f (fpr) per group */
    bool has_model, has_hull;
    size_t fixed[FIXED_MAX], nfixed;
    double hint; /* u of the last relaxation (NaN: none): a warm start */
} prob;

static gkind kind_of(const amq_alloc_group *g) {
    if (g->keys == 0 || g->weight == 0)
        return G_SKIP;
    return g->curve->kind == ALLOC_MODEL ? G_MODEL : G_HULL;
}

static gkind kindp(const prob *P, size_t i) {
    for (size_t k = 0; k < P->nfixed; k++)
        if (P->fixed[k] == i)
            return G_FIXED;
    return kind_of(&P->g[i]);
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
        gkind k = kindp(P, i);
        if (k == G_SKIP) {
            p->bits_per_key = 0;
            p->fpr = g->keys == 0 ? 0.0 : 1.0;
        } else if (k != G_FIXED) {
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
        gkind k = kindp(P, i);
        if (k == G_MODEL)
            t = model_top(g);
        else if (k == G_HULL && g->curve->nh > 1)
            t = log(g->curve->sigma[0]) + log(g->weight) - log(g->keys);
        top = t > top ? t : top;
    }
    return top;
}

/* ---- validation and the trivial cases ------------------------------------ */

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
    P->hint = NAN;
    return AMQ_OK;
}

static void summary_zero(amq_alloc_summary *s) {
    if (s != NULL)
        memset(s, 0, sizeof *s);
}

/* ---- hull positions ------------------------------------------------------ */

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
        if (kindp(P, i) != G_MODEL)
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
        if (kindp(P, i) == G_MODEL)
            respond(&P->g[i], u, &P->pk[i].bits_per_key, &P->pk[i].fpr);
}

static void totals(const prob *P, gkind only, double *mem, double *cost) {
    double m = 0, cst = 0;
    for (size_t i = 0; i < P->n; i++) {
        if (only != G_SKIP && kindp(P, i) != only)
            continue;
        m += P->g[i].keys * P->pk[i].bits_per_key;
        cst += P->g[i].weight * P->pk[i].fpr;
    }
    *mem = m;
    *cost = cst;
}

/* ---- bisection ----------------------------------------------------------- */

typedef struct bracket {
    double lo, hi; /* u values; lo buys more than hi */
} bracket;

/* Is u "enough" (memory >= M, or cost <= E)? */
static bool enough(const prob *P, double u, bool by_cost, double target) {
    double m, c;
    respond_all(P, u, &m, &c);
    return by_cost ? c <= target : m >= target;
}

/* Bracket the multiplier: from the last relaxation's u when there is one
 * (the chord search re-solves nearly the same problem many times), else
 * from the top; widen until lo is enough and hi is not, then halve down
 * to neighbouring doubles. false: even the lowest u is not enough. */
static bool bisect(const prob *P, bool by_cost, double target, bracket *br) {
    double top = u_top(P) + 1.0, lo = top - 1.0, hi = top;
    if (isfinite(P->hint) && P->hint < top) {
        lo = P->hint - 1e-3;
        hi = fmin(P->hint + 1e-3, top);
    }
    for (double step = hi - lo; hi < top && enough(P, hi, by_cost, target);
         step *= 2) {
        lo = hi;
        hi = fmin(top, hi + step);
    }
    for (double step = hi - lo; !enough(P, lo, by_cost, target); step *= 2) {
        if (!isfinite(step) || step > 1e300)
            return false;
        hi = lo;
        lo -= step;
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

/* ---- the relaxed solution ------------------------------------------------ */

/* Hull groups move from where they are toward their response at `to`,
 * spending `budget` (memory when moving up, cost when moving down);
 * returns what is left. *lam (if a group stops part-way) is its slope's
 * multiplier. */
static double hull_fill(const prob *P, double to, double budget, bool up,
                        double *lam) {
    for (size_t i = 0; i < P->n && budget > 0; i++) {
        const amq_alloc_group *g = &P->g[i];
        if (kindp(P, i) != G_HULL)
            continue;
        double b0 = P->pk[i].bits_per_key, b1, f1;
        respond(g, to, &b1, &f1);
        if (b1 == b0)
            continue;
        const amq_alloc_curve *c = g->curve;
        double full =
            up ? g->keys * (b1 - b0) : g->weight * (f1 - P->pk[i].fpr);
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

/* After the hull groups are placed: the model groups' closed form for
 * what the others leave of the target (memory, or rate with by_cost),
 * then the totals and the multiplier (a hull group's slope when one
 * stopped part-way and there is no model group to set it). */
static void close_relaxation(prob *P, double u, double target, bool by_cost,
                             double lam, relaxed *r) {
    if (P->has_model) {
        double am, ac, mm, mc;
        totals(P, G_SKIP, &am, &ac);
        totals(P, G_MODEL, &mm, &mc);
        double others = by_cost ? ac - mc : am - mm;
        u = model_solve(P, u, target - others, by_cost);
        model_apply(P, u);
    }
    totals(P, G_SKIP, &r->mem, &r->cost);
    r->lambda = P->has_model || lam < 0 ? exp(u) : lam;
    P->hint = u;
}

/* min_cost relaxation (lambda = 0 when the budget does not bind:
 * everything at its maximum). */
static void relax_cost(prob *P, double M, relaxed *r) {
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
    close_relaxation(P, br.hi, M, false, lam, r);
}

static void relax_memory(prob *P, double E, relaxed *r) {
    bracket br = {0, 0};
    double lam = -1, cst;
    bisect(P, true, E, &br); /* feasibility checked by the caller */
    respond_all(P, br.lo, NULL, &cst);
    hull_fill(P, br.hi, E - cst, false, &lam);
    close_relaxation(P, br.lo, E, true, lam, r);
}

/* Lowest cost the curves reach (every hull group at its last vertex, model
 * groups at zero) and the cost with no memory at all. */
static void cost_range(const prob *P, double *lowest, double *none) {
    *lowest = *none = 0;
    for (size_t i = 0; i < P->n; i++) {
        const amq_alloc_group *g = &P->g[i];
        gkind k = kindp(P, i);
        if (k == G_SKIP)
            continue;
        if (k == G_FIXED) {
            *none += g->weight * P->pk[i].fpr;
            *lowest += g->weight * P->pk[i].fpr;
            continue;
        }
        *none += g->weight * (k == G_HULL ? amq__alloc_vf(g->curve, 0) : 1.0);
        if (k == G_HULL)
            *lowest += g->weight * amq__alloc_vf(g->curve, g->curve->nh - 1);
    }
}

/* Can the curves get the rate down to E? (Model groups only approach
 * zero, so with any of them the hull groups must stay strictly below.) */
static bool rate_reachable(const prob *P, double E, double *none) {
    double lowest;
    cost_range(P, &lowest, none);
    return !(lowest > E || (P->has_model && lowest >= E));
}

/* ---- chords: where the hull is not the curve ----------------------------- */

/* A group the relaxation leaves inside a chord mixes two configurations
 * (no filter and sbbf at 4.2 bits/key, fuse8 and fuse16); the best
 * realisable point may be either end or a point of the curve in between,
 * and which one depends on what the other groups do with the difference.
 * So each such group is searched: hold it at each realisable point of the
 * chord (at most ~64, then the neighbours of the best), re-solve the rest,
 * keep the best total. At most FIXED_MAX groups; the rest is greedy. */

/* A chord whose realisable rate at the relaxed bits is within a hair of
 * the chord itself (Bloom's k -> k+1 hand-overs, under 1% apart) is taken
 * as it is when what it can lose, p (f - hull) priced in the objective's
 * unit, is below 1e-6 of the objective: no search could gain more. */
#define NEGLIGIBLE 1e-6

static bool negligible(const prob *P, size_t i, const relaxed *r,
                       bool by_cost) {
    const amq_alloc_group *g = &P->g[i];
    amq_alloc_pick q;
    double b = P->pk[i].bits_per_key;
    amq_alloc_curve_at(g->curve, b, &q);
    if (q.bits_per_key < b) /* not realisable at b: a real step */
        return false;
    double loss = g->weight * (q.fpr - amq__alloc_hull_value(g->curve, b));
    if (by_cost)
        return r->lambda > 0 && loss / r->lambda <= NEGLIGIBLE * r->mem;
    return loss <= NEGLIGIBLE * r->cost;
}

/* The first unfixed hull group inside a chord that is worth a search. */
static size_t chord_group(const prob *P, const relaxed *r, bool by_cost) {
    for (size_t i = 0; i < P->n; i++) {
        bool in;
        if (kindp(P, i) != G_HULL)
            continue;
        const amq_alloc_curve *c = P->g[i].curve;
        size_t t = seg_of(c, P->pk[i].bits_per_key, &in);
        if (in && !amq__alloc_seg_continuous(c, t) &&
            !negligible(P, i, r, by_cost))
            return i;
    }
    return P->n;
}

/* The relaxed objective (cost for min_cost, memory for min_memory) with
 * group i held at q and the others re-solved; INFINITY if infeasible. */
static double held_at(prob *P, size_t i, const amq_alloc_pick *q, double target,
                      bool by_cost, relaxed *r) {
    double out = INFINITY, none;
    P->pk[i] = *q;
    P->fixed[P->nfixed++] = i;
    if (!by_cost) {
        if (P->g[i].keys * q->bits_per_key <= target) {
            relax_cost(P, target, r);
            out = r->cost;
        }
    } else if (rate_reachable(P, target, &none)) {
        if (none <= target) {
            respond_all(P, INFINITY, &r->mem, &r->cost);
            r->lambda = 0;
        } else {
            relax_memory(P, target, r);
        }
        out = r->mem;
    }
    P->nfixed--;
    return out;
}

static double golden_eval(prob *P, size_t i, double b, double target,
                          bool by_cost, relaxed *r, amq_alloc_pick *best,
                          double *vbest) {
    amq_alloc_pick q;
    amq_alloc_curve_at(P->g[i].curve, b, &q);
    double v = held_at(P, i, &q, target, by_cost, r);
    if (v < *vbest)
        *vbest = v, *best = q;
    return v;
}

/* Between the best sample's neighbours the family's curve is realisable
 * everywhere (same configuration, continuous family): golden-section
 * search there on the true curve. */
static void refine(prob *P, size_t i, size_t j, double target, bool by_cost,
                   relaxed *r, amq_alloc_pick *best, double *vbest) {
    const amq_alloc_curve *c = P->g[i].curve;
    if (!c->continuous || j == 0 || j + 1 >= c->ns ||
        c->s[j - 1].knob != c->s[j].knob || c->s[j + 1].knob != c->s[j].knob)
        return;
    const double phi = 0.6180339887498949;
    double a = c->s[j - 1].b, d = c->s[j + 1].b;
    double x1 = d - phi * (d - a), x2 = a + phi * (d - a);
    double v1 = golden_eval(P, i, x1, target, by_cost, r, best, vbest);
    double v2 = golden_eval(P, i, x2, target, by_cost, r, best, vbest);
    for (int it = 0; it < 24; it++) {
        if (v1 <= v2) { /* the minimum is in [a, x2] */
            d = x2, x2 = x1, v2 = v1;
            x1 = d - phi * (d - a);
            v1 = golden_eval(P, i, x1, target, by_cost, r, best, vbest);
        } else {
            a = x1, x1 = x2, v1 = v2;
            x2 = a + phi * (d - a);
            v2 = golden_eval(P, i, x2, target, by_cost, r, best, vbest);
        }
    }
}

static void settle_chord(prob *P, size_t i, double target, bool by_cost,
                         relaxed *r) {
    const amq_alloc_curve *c = P->g[i].curve;
    bool in;
    size_t t = seg_of(c, P->pk[i].bits_per_key, &in);
    size_t j0 = c->hull[t], j1 = c->hull[t + 1];
    size_t stride = (j1 - j0) / 64 + 1, jbest = j0;
    double vbest = INFINITY;
    amq_alloc_pick q, best;
    for (int pass = 0; pass < 2; pass++) {
        size_t lo = pass ? (jbest > j0 + stride ? jbest - stride : j0) : j0;
        size_t hi = pass ? (jbest + stride < j1 ? jbest + stride : j1) : j1;
        size_t step = pass ? 1 : stride;
        for (size_t j = lo; j <= hi;
             j = j < hi && j + step > hi ? hi : j + step) {
            amq_alloc_curve_at(c, c->s[j].b, &q);
            double v = held_at(P, i, &q, target, by_cost, r);
            if (v < vbest)
                vbest = v, jbest = j, best = q;
            if (j == hi)
                break;
        }
        if (stride == 1)
            break;
    }
    if (!(vbest < INFINITY)) /* keep the relaxed point; rounding decides */
        return;
    refine(P, i, jbest, target, by_cost, r, &best, &vbest);
    held_at(P, i, &best, target, by_cost, r);
    P->pk[i] = best;
    P->fixed[P->nfixed++] = i;
}

/* Settle chord groups one by one; r ends as the last relaxation. */
static void settle_chords(prob *P, double target, bool by_cost, relaxed *r) {
    size_t i;
    while (P->nfixed < FIXED_MAX && (i = chord_group(P, r, by_cost)) < P->n) {
        size_t before = P->nfixed;
        settle_chord(P, i, target, by_cost, r);
        if (P->nfixed == before)
            break;
    }
}

/* ---- KKT ----------------------------------------------------------------- */

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
        if (kindp(P, i) != G_SKIP)
            worst = fmax(worst, kkt_group(&P->g[i], &P->pk[i], lam));
    return worst;
}

/* ---- rounding to realisable points --------------------------------------- */

/* A group on a chord takes, among the chord's two ends and the best
 * realisable choice at its relaxed bits, the one with the lowest
 * Lagrangian value p f + lambda n b (the chord's ends tie: the tie goes to
 * the end that keeps the constraint, the lower for min_cost). Elsewhere,
 * and on a negligible chord, the relaxed point is realisable as it is: a
 * vertex, or a continuous stretch at the family's own rate. Returns true
 * if the group moved. */
static bool realise(const prob *P, size_t i, const relaxed *r, bool down) {
    const amq_alloc_group *g = &P->g[i];
    const amq_alloc_curve *c = g->curve;
    amq_alloc_pick *p = &P->pk[i];
    double b = p->bits_per_key, lam = r->lambda;
    bool in;
    size_t t = seg_of(c, b, &in);
    if (!in || amq__alloc_seg_continuous(c, t) || negligible(P, i, r, !down)) {
        amq_alloc_curve_at(c, b, p);
        return false;
    }
    amq_alloc_pick cand[3];
    amq_alloc_curve_at(c, amq__alloc_vb(c, down ? t : t + 1), &cand[0]);
    amq_alloc_curve_at(c, amq__alloc_vb(c, down ? t + 1 : t), &cand[1]);
    amq_alloc_curve_at(c, b, &cand[2]);
    size_t best = 0;
    double lbest = INFINITY;
    for (size_t k = 0; k < 3; k++) {
        double l =
            g->weight * cand[k].fpr + lam * g->keys * cand[k].bits_per_key;
        if (l < lbest * (1 - 1e-12))
            best = k, lbest = l;
    }
    *p = cand[best];
    return true;
}

static size_t realise_all(const prob *P, const relaxed *r, bool down) {
    size_t moved = 0;
    for (size_t i = 0; i < P->n; i++)
        if (kindp(P, i) == G_HULL)
            moved += realise(P, i, r, down);
    return moved;
}

/* The four ways the greedy pass moves groups. SPEND_* have slack to use
 * (price <= slack); FIX_* must cover a deficit (progress reduces it). */
typedef enum mode {
    SPEND_MEMORY, /* min_cost, memory left: buy rate      */
    SPEND_RATE,   /* min_memory, rate left: free memory   */
    FIX_MEMORY,   /* min_cost, over budget: free memory   */
    FIX_RATE      /* min_memory, over eps: buy rate       */
} mode;

typedef struct cand {
    amq_alloc_pick q;
    double progress, price; /* what the move achieves, what it costs */
} cand;

/* The previous (up = false) or next hull vertex from b. */
static bool hull_step(const amq_alloc_curve *c, double b, bool up, double *to) {
    bool in;
    size_t t = seg_of(c, b, &in);
    if (up ? t + 1 >= c->nh : (!in && t == 0))
        return false;
    *to = amq__alloc_vb(c, up ? t + 1 : in ? t : t - 1);
    return true;
}

/* A group's candidate moves: the one realisable choice that uses the
 * whole amount, and for deficits also the next hull vertex (progress at a
 * good ratio even when it does not cover everything). */
static size_t candidates(const amq_alloc_group *g, const amq_alloc_pick *p,
                         mode m, double amount, cand *out) {
    const amq_alloc_curve *c = g->curve;
    size_t n = 0;
    double to;
    bool up = m == SPEND_MEMORY || m == FIX_RATE;
    if (m == SPEND_MEMORY)
        amq_alloc_curve_at(c, p->bits_per_key + amount / g->keys, &out[n++].q);
    else if (m == FIX_MEMORY)
        amq_alloc_curve_at(c, fmax(0, p->bits_per_key - amount / g->keys),
                           &out[n++].q);
    else if (amq__alloc_least_bits(
                 c, p->fpr + (up ? -1 : 1) * amount / g->weight, &out[n].q))
        n++;
    if ((m == FIX_MEMORY || m == FIX_RATE) &&
        hull_step(c, p->bits_per_key, up, &to))
        amq_alloc_curve_at(c, to, &out[n++].q);
    for (size_t k = 0; k < n; k++) {
        double dm = g->keys * (out[k].q.bits_per_key - p->bits_per_key);
        double dc = g->weight * (out[k].q.fpr - p->fpr);
        out[k].progress = up ? -dc : -dm;
        out[k].price = up ? dm : dc;
    }
    return n;
}

/* Greedy: apply the move with the best progress per price until the slack
 * is spent or the deficit covered, or nothing helps. A group's best move
 * only shrinks with the amount, so rounds are few; the cap is a guard.
 * Returns the slack left (SPEND) or the deficit left (FIX). */
static double greedy(const prob *P, mode m, double amount) {
    bool spend = m == SPEND_MEMORY || m == SPEND_RATE;
    for (size_t round = 0; round < 4 * P->n + 64 && amount > 0; round++) {
        cand best = {.progress = 0}, cs[2];
        double best_ratio = -1;
        size_t who = P->n;
        for (size_t i = 0; i < P->n; i++) {
            if (kindp(P, i) != G_HULL)
                continue;
            size_t nc = candidates(&P->g[i], &P->pk[i], m, amount, cs);
            for (size_t k = 0; k < nc; k++) {
                /* a move that uses the whole slack may exceed it by an ulp */
                if (!(cs[k].progress > 0) ||
                    (spend && cs[k].price > amount * (1 + 1e-12)))
                    continue;
                double r =
                    cs[k].price > 0 ? cs[k].progress / cs[k].price : INFINITY;
                if (r > best_ratio)
                    best_ratio = r, best = cs[k], who = i;
            }
        }
        if (who == P->n)
            break;
        P->pk[who] = best.q;
        amount -= spend ? best.price : best.progress;
    }
    return amount > 0 ? amount : 0;
}

static void render_models(const prob *P) {
    for (size_t i = 0; i < P->n; i++) {
        amq_alloc_pick *p = &P->pk[i];
        if (kindp(P, i) != G_HULL)
            amq__alloc_render(P->g[i].curve, 0, p->bits_per_key, p->spec,
                              sizeof p->spec);
    }
}

/* ---- entry points -------------------------------------------------------- */

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
    double k =
        kkt(&P, r.lambda, r.lambda > 0 ? fabs(M - r.mem) / fmax(M, 1) : 0.0);
    relaxed last = r;
    settle_chords(&P, M, false, &last);
    size_t moved = P.nfixed + realise_all(&P, &last, true);
    P.nfixed = 0;
    double mem, cost;
    totals(&P, G_SKIP, &mem, &cost);
    if (mem > M)
        greedy(&P, FIX_MEMORY, mem - M);
    totals(&P, G_SKIP, &mem, &cost);
    double left = greedy(&P, SPEND_MEMORY, M - mem);
    if (P.has_model && left > 0)
        close_relaxation(&P, log(last.lambda), M, false, -1, &last);
    render_models(&P);
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

/* The realised rates must still meet eps: a continuous stretch of a
 * family that is not convex between two samples could lie above its
 * chord. Such groups move to their segment's upper end. */
static void enforce(const prob *P, double E) {
    double m, c;
    totals(P, G_SKIP, &m, &c);
    for (size_t i = 0; i < P->n && c > E * (1 + 1e-12); i++) {
        const amq_alloc_group *g = &P->g[i];
        bool in;
        if (kindp(P, i) != G_HULL)
            continue;
        size_t t = seg_of(g->curve, P->pk[i].bits_per_key, &in);
        if (!in)
            continue;
        c -= g->weight * P->pk[i].fpr;
        amq_alloc_curve_at(g->curve, amq__alloc_vb(g->curve, t + 1), &P->pk[i]);
        c += g->weight * P->pk[i].fpr;
    }
}

amq_status amq_alloc_min_memory(const amq_alloc_group *groups, size_t count,
                                double p0, double eps, amq_alloc_pick *picks,
                                amq_alloc_summary *sum) {
    prob P;
    relaxed r;
    double none;
    AMQ_RETURN_IF_ERR(validate(groups, count, picks, &P));
    if (!finite_nonneg(p0) || !finite_nonneg(eps) || !(eps > p0))
        return AMQ_ERR_INVALID;
    double E = eps - p0;
    if (!rate_reachable(&P, E, &none))
        return AMQ_ERR_INVALID;
    summary_zero(sum);
    if (none <= E) { /* no memory needed */
        respond_all(&P, INFINITY, NULL, NULL);
        r = (relaxed){0, 0, none};
    } else {
        relax_memory(&P, E, &r);
    }
    double k = r.lambda > 0 ? kkt(&P, r.lambda, fabs(E - r.cost) / E) : 0;
    relaxed last = r;
    if (r.lambda > 0)
        settle_chords(&P, E, true, &last);
    size_t moved = P.nfixed + realise_all(&P, &last, false);
    P.nfixed = 0;
    enforce(&P, E);
    double mem, cost;
    totals(&P, G_SKIP, &mem, &cost);
    if (cost > E)
        greedy(&P, FIX_RATE, cost - E);
    totals(&P, G_SKIP, &mem, &cost);
    double left = greedy(&P, SPEND_RATE, E - cost);
    if (P.has_model && left > 0 && last.lambda > 0)
        close_relaxation(&P, log(last.lambda), E, true, -1, &last);
    render_models(&P);
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
