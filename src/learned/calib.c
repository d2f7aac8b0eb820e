/*
 * calib.c — post-hoc calibration of the raw score on held-out data, and
 * the AUC.
 *
 * Platt scaling (Platt 1999): p = σ(a z + b) with (a, b) minimising the
 * log loss against smoothed targets t+ = (N+ + 1) / (N+ + 2) for members
 * and t- = 1 / (N- + 2) for non-members (which keeps a separable set from
 * sending a to infinity). Newton's method on the two parameters, halving
 * the step until the loss falls.
 *
 * Isotonic regression: the non-decreasing step function of z closest in
 * squared error to the 0/1 labels — pool adjacent violators over the
 * scores sorted ascending (equal scores pooled first, so the function is
 * well defined). More than AMQ__ISO_MAX steps are merged into groups of
 * near-equal weight; means of consecutive groups of a non-decreasing
 * sequence stay non-decreasing.
 *
 * Either map is monotone in z, so thresholds on the raw score and on the
 * calibrated probability cut the keys the same way; the cascade compares
 * raw scores (exact) and reports probabilities.
 *
 * AUC: the Mann-Whitney statistic, tied scores counting one half.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "learned/learned.h"

typedef struct labelled {
    double z;
    double y;
} labelled;

static int cmp_labelled(const void *a, const void *b) {
    double x = ((const labelled *)a)->z, y = ((const labelled *)b)->z;
    if (x < y)
        return -1;
    return x > y ? 1
                 : (((const labelled *)a)->y > ((const labelled *)b)->y) -
                       (((const labelled *)a)->y < ((const labelled *)b)->y);
}

static labelled *pool(const amq__mem *mem, const double *pos, size_t npos,
                      const double *neg, size_t nneg) {
    size_t n = npos + nneg;
    labelled *v = amq__alloc(mem, n * sizeof *v);
    if (v == NULL)
        return NULL;
    for (size_t i = 0; i < npos; i++)
        v[i] = (labelled){pos[i], 1.0};
    for (size_t i = 0; i < nneg; i++)
        v[npos + i] = (labelled){neg[i], 0.0};
    qsort(v, n, sizeof *v, cmp_labelled);
    return v;
}

/* ---- Platt -------------------------------------------------------------------- */

static double platt_loss(const double *z, const double *t, size_t n, double a,
                         double b) {
    double loss = 0.0;
    for (size_t i = 0; i < n; i++) {
        double f = a * z[i] + b;
        /* -t ln σ(f) - (1 - t) ln(1 - σ(f)) = ln(1 + e^f) - t f, stably */
        loss += (f > 0 ? f + log1p(exp(-f)) : log1p(exp(f))) - t[i] * f;
    }
    return loss;
}

static void platt_on(const double *z, const double *t, size_t n, double *a,
                     double *b) {
    double loss = platt_loss(z, t, n, *a, *b);
    for (int it = 0; it < 100; it++) {
        double ga = 0, gb = 0, haa = 1e-12, hab = 0, hbb = 1e-12;
        for (size_t i = 0; i < n; i++) {
            double f = *a * z[i] + *b;
            double p = f >= 0 ? 1.0 / (1.0 + exp(-f)) : exp(f) / (1.0 + exp(f));
            double r = p - t[i], w = p * (1.0 - p);
            ga += r * z[i];
            gb += r;
            haa += w * z[i] * z[i];
            hab += w * z[i];
            hbb += w;
        }
        double det = haa * hbb - hab * hab;
        if (!(det > 0.0))
            break;
        double da = (hbb * ga - hab * gb) / det,
               db = (haa * gb - hab * ga) / det;
        double step = 1.0, nl = loss;
        while (step > 1e-10) {
            nl = platt_loss(z, t, n, *a - step * da, *b - step * db);
            if (nl < loss)
                break;
            step *= 0.5;
        }
        if (!(nl < loss))
            break;
        *a -= step * da;
        *b -= step * db;
        if (loss - nl < 1e-12 * (1.0 + loss))
            break;
        loss = nl;
    }
}

amq_status amq__platt(const amq__mem *mem, const double *pos, size_t npos,
                      const double *neg, size_t nneg, double *a, double *b) {
    size_t n = npos + nneg;
    double *z = amq__alloc(mem, n * sizeof *z);
    double *t = amq__alloc(mem, n * sizeof *t);
    double tp = (npos + 1.0) / (npos + 2.0), tn = 1.0 / (nneg + 2.0);
    amq_status st = AMQ_ERR_NOMEM;
    if (z != NULL && t != NULL) {
        for (size_t i = 0; i < npos; i++) {
            z[i] = pos[i];
            t[i] = tp;
        }
        for (size_t i = 0; i < nneg; i++) {
            z[npos + i] = neg[i];
            t[npos + i] = tn;
        }
        *a = 0.0;
        *b = log((npos + 1.0) / (nneg + 1.0));
        platt_on(z, t, n, a, b);
        st = AMQ_OK;
    }
    amq__free(mem, z, n * sizeof *z);
    amq__free(mem, t, n * sizeof *t);
    return st;
}

/* ---- isotonic ----------------------------------------------------------------- */

/* Merge `top` blocks into AMQ__ISO_MAX groups of near-equal weight, in
 * place; returns the group count. */
static size_t merge_steps(double *x, double *sum, double *wt, size_t top) {
    double total = 0.0, acc = 0.0, s = 0.0, w = 0.0, start = x[0];
    size_t out = 0;
    for (size_t i = 0; i < top; i++)
        total += wt[i];
    for (size_t i = 0; i < top; i++) {
        s += sum[i];
        w += wt[i];
        acc += wt[i];
        if (acc < total * (double)(out + 1) / AMQ__ISO_MAX && i + 1 < top)
            continue;
        double next = i + 1 < top ? x[i + 1] : 0.0;
        x[out] = start;
        sum[out] = s;
        wt[out] = w;
        out++;
        s = w = 0.0;
        start = next;
    }
    return out;
}

size_t amq__isotonic(const double *x, const double *y, size_t n, double *out_x,
                     double *out_p, double *wt) {
    /* A stack of blocks: start score out_x, label sum (in out_p until the
     * end), weight wt. */
    double *sum = out_p;
    size_t top = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        double s = 0.0, w = 0.0;
        for (; j < n && x[j] == x[i]; j++) {
            s += y[j];
            w += 1.0;
        }
        out_x[top] = x[i];
        sum[top] = s;
        wt[top] = w;
        top++;
        while (top > 1 &&
               sum[top - 2] / wt[top - 2] >= sum[top - 1] / wt[top - 1]) {
            sum[top - 2] += sum[top - 1];
            wt[top - 2] += wt[top - 1];
            top--;
        }
        i = j;
    }
    size_t out = top > AMQ__ISO_MAX ? merge_steps(out_x, sum, wt, top) : top;
    for (size_t i = 0; i < out; i++)
        out_p[i] = sum[i] / wt[i];
    return out;
}

/* ---- fit and apply ------------------------------------------------------------- */

static amq_status fit_isotonic(amq_model *m, const double *pos, size_t npos,
                               const double *neg, size_t nneg) {
    size_t n = npos + nneg;
    labelled *v = pool(&m->mem, pos, npos, neg, nneg);
    double *x = amq__alloc(&m->mem, n * sizeof *x);
    double *y = amq__alloc(&m->mem, n * sizeof *y);
    double *ox = amq__alloc(&m->mem, n * sizeof *ox);
    double *op = amq__alloc(&m->mem, n * sizeof *op);
    double *wt = amq__alloc(&m->mem, n * sizeof *wt);
    amq_status st = AMQ_ERR_NOMEM;
    size_t steps = 0;
    if (v != NULL && x != NULL && y != NULL && ox != NULL && op != NULL &&
        wt != NULL) {
        for (size_t i = 0; i < n; i++) {
            x[i] = v[i].z;
            y[i] = v[i].y;
        }
        steps = amq__isotonic(x, y, n, ox, op, wt);
        double *ix = steps ? amq__alloc(&m->mem, steps * sizeof *ix) : NULL;
        double *ip = steps ? amq__alloc(&m->mem, steps * sizeof *ip) : NULL;
        if (ix != NULL && ip != NULL) {
            memcpy(ix, ox, steps * sizeof *ix);
            memcpy(ip, op, steps * sizeof *ip);
            m->iso_x = ix;
            m->iso_p = ip;
            m->iso_n = (uint32_t)steps;
            st = AMQ_OK;
        } else {
            amq__free(&m->mem, ix, steps * sizeof *ix);
            amq__free(&m->mem, ip, steps * sizeof *ip);
        }
    }
    amq__free(&m->mem, v, n * sizeof *v);
    amq__free(&m->mem, x, n * sizeof *x);
    amq__free(&m->mem, y, n * sizeof *y);
    amq__free(&m->mem, ox, n * sizeof *ox);
    amq__free(&m->mem, op, n * sizeof *op);
    amq__free(&m->mem, wt, n * sizeof *wt);
    return st;
}

amq_status amq__calib_fit(amq_model *m, const double *pos, size_t npos,
                          const double *neg, size_t nneg) {
    if (m->cfg.calibration == AMQ_CALIB_PLATT) {
        return amq__platt(&m->mem, pos, npos, neg, nneg, &m->platt_a,
                          &m->platt_b);
    }
    if (m->cfg.calibration == AMQ_CALIB_ISOTONIC)
        return fit_isotonic(m, pos, npos, neg, nneg);
    return AMQ_OK;
}

double amq__calib_apply(const amq_model *m, double raw) {
    switch (m->cfg.calibration) {
    case AMQ_CALIB_PLATT: {
        double f = m->platt_a * raw + m->platt_b;
        return f >= 0 ? 1.0 / (1.0 + exp(-f)) : exp(f) / (1.0 + exp(f));
    }
    case AMQ_CALIB_ISOTONIC: {
        if (m->iso_n == 0)
            return 0.5;
        uint32_t lo = 0, hi = m->iso_n; /* last start <= raw */
        while (hi - lo > 1) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (m->iso_x[mid] <= raw)
                lo = mid;
            else
                hi = mid;
        }
        return m->iso_p[lo];
    }
    default:
        return raw >= 0 ? 1.0 / (1.0 + exp(-raw)) : exp(raw) / (1.0 + exp(raw));
    }
}

/* ---- AUC ------------------------------------------------------------------------ */

amq_status amq__auc(const amq__mem *mem, const double *pos, size_t npos,
                    const double *neg, size_t nneg, double *auc) {
    labelled *v = pool(mem, pos, npos, neg, nneg);
    size_t n = npos + nneg;
    if (v == NULL)
        return AMQ_ERR_NOMEM;
    double rank_sum = 0.0; /* ranks of members, 1-based, ties averaged */
    for (size_t i = 0; i < n;) {
        size_t j = i;
        double members = 0.0;
        for (; j < n && v[j].z == v[i].z; j++)
            members += v[j].y;
        double mean_rank = 0.5 * ((double)i + 1.0 + (double)j);
        rank_sum += members * mean_rank;
        i = j;
    }
    amq__free(mem, v, n * sizeof *v);
    double p = (double)npos, q = (double)nneg;
    *auc = (rank_sum - p * (p + 1.0) / 2.0) / (p * q);
    return AMQ_OK;
}
