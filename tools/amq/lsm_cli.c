/*
 * lsm_cli.c — what `amq lsm plan` (lsm.c) and `amq lsm simulate`
 * (lsm_sim.c) share (lsm_cli.h): number options, the curve --curve names,
 * generated trees.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lsm_cli.h"

bool lsm_parse_double(const char *opt, const char *s, double lo, double hi,
                      double *out) {
    char name[64];
    snprintf(name, sizeof name, "--%s", opt);
    if (!cli_parse_real(LSM_CMD, name, s, lo, hi, out))
        return false;
    if (strcmp(opt, "ratio") != 0 || *out > 1.0)
        return true;
    /* T = 1 is no tree at all: every level the size of the last. */
    cli_usage_error(LSM_CMD,
                    "--ratio: the size ratio T must be above 1, got "
                    "'%s'",
                    s);
    return false;
}

bool lsm_parse_list(const char *opt, const char *s, double *out, size_t cap,
                    size_t *n) {
    char buf[512];
    *n = 0;
    if (strlen(s) >= sizeof buf) {
        cli_usage_error(LSM_CMD, "--%s: list too long", opt);
        return false;
    }
    strcpy(buf, s);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        if (*n == cap) {
            cli_usage_error(LSM_CMD, "--%s: at most %zu values", opt, cap);
            return false;
        }
        if (!lsm_parse_double(opt, tok, -1e300, 1e300, &out[(*n)++]))
            return false;
    }
    if (*n == 0) {
        cli_usage_error(LSM_CMD, "--%s: empty list", opt);
        return false;
    }
    return true;
}

/* "amq: --OPT VALUE: <status> (at byte N: <diag>)"; CLI_EXIT_ERR. */
static int option_error(const char *opt, const char *value, amq_status st,
                        const amq_diag *d) {
    char what[160];
    snprintf(what, sizeof what, "--%s %.100s", opt, value);
    return cli_status_error(what, st, d);
}

amq_alloc_curve *lsm_curve(const char *spec, double c) {
    amq_alloc_curve *curve = NULL;
    amq_diag d = {0};
    amq_status st;
    if (strcmp(spec, "model") == 0)
        st = amq_alloc_curve_model(c, NULL, &curve);
    else
        st = amq_alloc_curve_spec(spec, NULL, &curve, &d);
    if (st != AMQ_OK) {
        option_error("curve", spec, st, &d);
        return NULL;
    }
    return curve;
}

bool lsm_tree(unsigned levels, double ratio, double keys, const char *workload,
              amq_lsm_run *runs) {
    amq_diag d = {0};
    if (amq_lsm_levels(levels, ratio, keys, runs) != AMQ_OK) {
        cli_usage_error(LSM_CMD, "--levels 1..64, --ratio > 1, --keys > 0");
        return false;
    }
    amq_status st = amq_lsm_workload(workload, runs, levels, &d);
    if (st != AMQ_OK) {
        option_error("workload", workload, st, &d);
        return false;
    }
    return true;
}
