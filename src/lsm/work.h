/*
 * work.h — what the LSM simulator's files share: one scratch block per
 * call (groups, picks and a few arrays of doubles, from the caller's
 * allocator) and small numeric helpers.
 */
#ifndef AMQ_SRC_LSM_WORK_H
#define AMQ_SRC_LSM_WORK_H

#include "amq/lsm.h"
#include "core/mem.h"

#define AMQ__LSM_WORK_ARRAYS 6

typedef struct amq__lsm_work {
    amq__mem mem;
    void *block;
    size_t size;
    amq_alloc_group *g;              /* n groups                         */
    amq_alloc_pick *p;               /* n picks                          */
    double *d[AMQ__LSM_WORK_ARRAYS]; /* nd arrays of n doubles           */
} amq__lsm_work;

/* Errors: AMQ_ERR_INVALID (n == 0, nd too large, overflow), NOMEM. */
amq_status amq__lsm_work_new(amq__lsm_work *w, const amq_options *opt, size_t n,
                             size_t nd);
void amq__lsm_work_free(amq__lsm_work *w);

/* n equal runs of `keys` keys with weights wt on one curve. */
void amq__lsm_equal_groups(amq__lsm_work *w, size_t n, double keys,
                           const double *wt, const amq_alloc_curve *curve);
/* sum wt_i f_i / sum wt_i. */
double amq__lsm_cost_under(const double *wt, const amq_alloc_pick *p, size_t n);
/* out_i proportional to (i+1)^-s, summing to 1. */
void amq__lsm_zipf(double *out, size_t n, double s);
/* Population variance of x (and its mean, if mean is not NULL). */
double amq__lsm_variance(const double *x, size_t n, double *mean);

#endif
