/*
 * lsm_args.h — what `amq lsm plan` (tools/amq/lsm.c) and `amq-lab lsm
 * simulate` (tools/lab/lsm_sim.c) share: number options with the tree's
 * rules, and the curve --curve names.
 */
#ifndef AMQ_TOOLS_LSM_ARGS_H
#define AMQ_TOOLS_LSM_ARGS_H

#include "amq/lsm.h"
#include "cli.h"

#define LSM_CMD "lsm"

/* A finite number in [lo, hi] (--ratio: above 1); false after a usage
 * error. */
bool lsm_parse_double(const char *opt, const char *s, double lo, double hi,
                      double *out);

/* --curve: "model" (exponent c) or a structure spec; NULL after printing
 * an error. */
amq_alloc_curve *lsm_curve(const char *spec, double c);

/* "TOOL: --OPT VALUE: <status> (at byte N: <diag>)"; CLI_EXIT_ERR. */
int lsm_option_error(const char *opt, const char *value, amq_status st,
                     const amq_diag *d);

#endif
