/*
 * lsm_args.c — the LSM commands' shared options (lsm_args.h): numbers,
 * the size ratio that must exceed 1, and the curve --curve names.
 */
#include <string.h>

#include "lsm_args.h"

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

int lsm_option_error(const char *opt, const char *value, amq_status st,
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
        lsm_option_error("curve", spec, st, &d);
        return NULL;
    }
    return curve;
}
