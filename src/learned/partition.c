/*
 * partition.c — bins over the score axis and the search for intervals.
 *
 * Bins. B - 1 edges at the quantiles of an even mixture of the member and
 * the non-member scores: half the bins resolve the member-dense top of the
 * axis, where τ_0 sits for small ε, half the non-member bulk. A score z
 * lies in bin #{edges <= z}; an edge is the midpoint between the last
 * score below it and the first above, and repeated scores never straddle
 * one (fewer distinct scores than bins gives fewer bins).
 *
 * Intervals. With g_b the members' and h_b the non-members' share of bin
 * b, a run of bins [i, j) forms an interval with G = Σ g, H = Σ h. Under
 * the Bloom-like curve ε(b) = e^(-c b) with each interval's ε ∝ G/H
 * (eq. 7 without clipping), the residual memory for a total budget is
 *
 *     M = (n / c) [ ln(1/F) - Σ_ℓ G_ℓ ln(G_ℓ / H_ℓ) ] + const,
 *
 * so the best cut of a bin range into k intervals maximises
 * Σ G ln(G / H), the KL divergence of the members' from the non-members'
 * interval shares (PLBF, Vaidya et al. 2021). The dynamic programme
 *
 *     best[k][j] = max_{i < j} best[k-1][i] + G(i, j) ln(G(i, j) / H(i, j))
 *
 * over prefix sums gives, in one O(W² k_max) pass over a range of W bins,
 * the best cut of [lo, j) for every right end j and every k — so every
 * candidate τ_0 reuses the same table (FastPLBF's observation). Empty
 * non-member bins would make the ratio infinite; the caller smooths h
 * (docs/cascade.md).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "learned/learned.h"

uint32_t amq__bin_of(const double *edges, uint32_t bins, double z) {
    uint32_t lo = 0, hi = bins - 1; /* answer in [lo, hi] */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2; /* is edge[mid] <= z? */
        if (edges[mid] <= z)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double *sorted_copy(const amq__mem *mem, const double *v, size_t n) {
    double *s = amq__alloc(mem, (n ? n : 1) * sizeof *s);
    if (s != NULL && n > 0) {
        memcpy(s, v, n * sizeof *s);
        qsort(s, n, sizeof *s, cmp_double);
    }
    return s;
}

/* Walk both sorted samples in merged order, each a-score weighing wa and
 * each b-score wb; place edge k where the mass first reaches k / bins. */
static uint32_t place_edges(const double *a, size_t na, double wa,
                            const double *b, size_t nb, double wb,
                            uint32_t bins, double *edges) {
    size_t i = 0, j = 0;
    double mass = 0.0;
    uint32_t ne = 0, k = 1;
    while ((i < na || j < nb) && k < bins) {
        bool take_a = j >= nb || (i < na && a[i] <= b[j]);
        double z = take_a ? a[i] : b[j];
        /* consume every score equal to z from both sides */
        for (; i < na && a[i] == z; i++)
            mass += wa;
        for (; j < nb && b[j] == z; j++)
            mass += wb;
        if (i >= na && j >= nb)
            break;
        double next = j >= nb || (i < na && a[i] <= b[j]) ? a[i] : b[j];
        if (mass + 1e-12 < (double)k / bins)
            continue;
        edges[ne++] = z + 0.5 * (next - z);
        while (k < bins && (double)k / bins <= mass + 1e-12)
            k++;
    }
    return ne + 1;
}

amq_status amq__bin_edges(const amq__mem *mem, const double *a, size_t na,
                          const double *b, size_t nb, uint32_t bins,
                          double *edges, uint32_t *bins_out) {
    double *sa = sorted_copy(mem, a, na), *sb = sorted_copy(mem, b, nb);
    amq_status st = AMQ_ERR_NOMEM;
    if (sa != NULL && sb != NULL) {
        double wa = na == 0 ? 0.0 : (nb == 0 ? 1.0 : 0.5) / (double)na;
        double wb = nb == 0 ? 0.0 : (na == 0 ? 1.0 : 0.5) / (double)nb;
        *bins_out = place_edges(sa, na, wa, sb, nb, wb, bins, edges);
        st = AMQ_OK;
    }
    amq__free(mem, sa, (na ? na : 1) * sizeof *sa);
    amq__free(mem, sb, (nb ? nb : 1) * sizeof *sb);
    return st;
}

/* ---- the dynamic programme --------------------------------------------------- */

static double gain(const amq__dp *dp, uint32_t i, uint32_t j) {
    double g = dp->cg[j] - dp->cg[i], h = dp->ch[j] - dp->ch[i];
    if (g <= 0.0)
        return 0.0;
    return g * log(g / h);
}

amq_status amq__dp_run(amq__dp *dp, const amq__mem *mem, const double *cg,
                       const double *ch, uint32_t lo, uint32_t hi,
                       uint32_t kmax) {
    size_t w = (size_t)(hi - lo) + 1, cells = (size_t)(kmax + 1) * w;
    memset(dp, 0, sizeof *dp);
    dp->lo = lo; /* before allocating: amq__dp_free sizes from these */
    dp->hi = hi;
    dp->kmax = kmax;
    dp->cg = cg;
    dp->ch = ch;
    dp->best = amq__alloc(mem, cells * sizeof *dp->best);
    dp->arg = amq__alloc(mem, cells * sizeof *dp->arg);
    if (dp->best == NULL || dp->arg == NULL) {
        amq__dp_free(dp, mem);
        return AMQ_ERR_NOMEM;
    }
    for (size_t c = 0; c < cells; c++) {
        dp->best[c] = -INFINITY;
        dp->arg[c] = lo;
    }
    dp->best[0] = 0.0; /* zero intervals cover [lo, lo) */
    for (uint32_t k = 1; k <= kmax; k++) {
        const double *prev = dp->best + (size_t)(k - 1) * w;
        double *cur = dp->best + (size_t)k * w;
        uint32_t *arg = dp->arg + (size_t)k * w;
        for (uint32_t j = lo + k; j <= hi; j++) {
            double bestv = -INFINITY;
            uint32_t besti = j - 1;
            for (uint32_t i = lo + k - 1; i < j; i++) {
                double v = prev[i - lo] + gain(dp, i, j);
                if (v > bestv) {
                    bestv = v;
                    besti = i;
                }
            }
            cur[j - lo] = bestv;
            arg[j - lo] = besti;
        }
    }
    return AMQ_OK;
}

void amq__dp_free(amq__dp *dp, const amq__mem *mem) {
    size_t cells = (size_t)(dp->kmax + 1) * ((size_t)(dp->hi - dp->lo) + 1);
    amq__free(mem, dp->best, dp->best ? cells * sizeof *dp->best : 0);
    amq__free(mem, dp->arg, dp->arg ? cells * sizeof *dp->arg : 0);
    dp->best = NULL;
    dp->arg = NULL;
}

bool amq__dp_cut(const amq__dp *dp, uint32_t j, uint32_t k, uint32_t *cuts) {
    size_t w = (size_t)(dp->hi - dp->lo) + 1;
    if (k == 0 || k > dp->kmax || j > dp->hi || j < dp->lo + k)
        return false;
    cuts[k] = j;
    for (uint32_t l = k; l >= 1; l--) {
        uint32_t i = dp->arg[(size_t)l * w + (cuts[l] - dp->lo)];
        cuts[l - 1] = i;
    }
    return cuts[0] == dp->lo;
}

/* Region r (1-based) ends at the first bin where the running share reaches
 * r / k, leaving at least one bin for each region after it. */
bool amq__equal_cut(const double *c, uint32_t lo, uint32_t j, uint32_t k,
                    uint32_t *cuts) {
    if (k == 0 || j < lo + k)
        return false;
    double total = c[j] - c[lo];
    cuts[0] = lo;
    for (uint32_t r = 1; r < k; r++) {
        uint32_t b = cuts[r - 1] + 1;
        double want = total * (double)r / (double)k;
        while (b < j - (k - r) && c[b] - c[lo] < want)
            b++;
        cuts[r] = b;
    }
    cuts[k] = j;
    return true;
}
