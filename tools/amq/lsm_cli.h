/*
 * lsm_cli.h — what `amq lsm plan` (lsm.c) and `amq lsm simulate`
 * (lsm_sim.c) share: number options, curves from --curve, trees.
 */
#ifndef AMQ_TOOLS_LSM_CLI_H
#define AMQ_TOOLS_LSM_CLI_H

#include "amq/lsm.h"
#include "cli.h"

#define LSM_CMD "lsm"

int lsm_simulate(int argc, char **argv);

/* A finite number in [lo, hi] (--ratio: above 1); false after a usage
 * error. */
bool lsm_parse_double(const char *opt, const char *s, double lo, double hi,
                      double *out);
/* Comma-separated numbers (at most cap); false after a usage error. */
bool lsm_parse_list(const char *opt, const char *s, double *out, size_t cap,
                    size_t *n);

/* --curve: "model" (exponent c) or a structure spec; NULL after printing
 * an error. */
amq_alloc_curve *lsm_curve(const char *spec, double c);

/* A leveled tree with a workload; false after printing an error. */
bool lsm_tree(unsigned levels, double ratio, double keys, const char *workload,
              amq_lsm_run *runs);

#endif
