/*
 * lab.h — what the files of amq-lab share: the commands' entry points
 * (main.c dispatches them) and the cascade evaluation's plot. The rest —
 * options, messages, help, JSON, key input — is tools/common (cli.h), the
 * same code the user's tool amq runs.
 */
#ifndef AMQ_TOOLS_LAB_H
#define AMQ_TOOLS_LAB_H

#include "cli.h"

int lab_cmd_demo(int argc, char **argv);    /* demo.c                      */
int lab_cmd_clock(int argc, char **argv);   /* clock.c: simulate, eval     */
int lab_cmd_lsm(int argc, char **argv);     /* lsm_sim.c: simulate         */
int lab_cmd_cascade(int argc, char **argv); /* cascade_eval.c: eval        */

/* One measured point of the cascade evaluation: bits per key, measured
 * rate, certified bound. */
typedef struct cpoint {
    double bits, fpr, bound;
} cpoint;

#define CSVG_MAX_POINTS 16

/* cascade_svg.c: a log-scale plot of measured FPR against bits per key,
 * one line per series (points with NaN are skipped), written to path.
 * false after printing an error. */
bool csvg_fpr_plot(const char *path, const char *title,
                   const char *const *labels, int nseries,
                   const cpoint (*pts)[CSVG_MAX_POINTS], size_t npts);

#endif
