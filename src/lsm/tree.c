/*
 * tree.c — describing an LSM tree to the allocation engine, and Monkey.
 *
 * Dayan, Athanassoulis and Idreos (Monkey, SIGMOD 2017) observed that the
 * usual equal bits per key wastes memory: a lookup for an absent key
 * probes every run, so each run's filter saves one read with the same
 * weight, and a bit spent on a small run lowers the total far more than
 * one spread over a large run. The optimum (amq/alloc.h does the solving)
 * gives rates proportional to n_i / w_i.
 *
 *   level:      L1     L2      L3       L4        L5
 *   keys:       9      90      900      9000      90000    (T = 10)
 *   Monkey b:   high ...........................   low
 *
 * A tree is given as runs (name, keys, lookups): from a CSV file, or
 * generated (levels of a leveled tree, and a workload spec for the
 * lookups). The CSV parser is strict: a bad row is an error naming its
 * line and byte, never a silently skipped run.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amq/lsm.h"
#include "core/mem.h"
#include "core/spec.h"

/* ---- CSV ---------------------------------------------------------------- */

typedef struct csv_field {
    const char *p;
    size_t len, offset;
} csv_field;

static void trim(csv_field *f) {
    while (f->len > 0 && (*f->p == ' ' || *f->p == '\t'))
        f->p++, f->len--, f->offset++;
    while (f->len > 0 && (f->p[f->len - 1] == ' ' || f->p[f->len - 1] == '\t' ||
                          f->p[f->len - 1] == '\r'))
        f->len--;
}

/* Split one line into exactly three fields; false if the count differs. */
static bool split3(const char *line, size_t len, size_t base, csv_field *f,
                   size_t *nfields) {
    size_t n = 0, start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && line[i] != ',')
            continue;
        if (n < 3)
            f[n] = (csv_field){line + start, i - start, base + start};
        n++;
        start = i + 1;
    }
    *nfields = n;
    for (size_t k = 0; k < 3 && k < n; k++)
        trim(&f[k]);
    return n == 3;
}

static bool field_is(const csv_field *f, const char *word) {
    size_t n = strlen(word);
    if (f->len != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (tolower((unsigned char)f->p[i]) != word[i])
            return false;
    return true;
}

/* Keys and lookups are counts (or shares): finite, at most 1e18, so
 * every sum and budget the planner forms stays finite. keys must be > 0,
 * lookups >= 0. */
#define CSV_MAX 1e18

static amq_status number(const csv_field *f, bool positive, size_t line,
                         const char *what, double *out, amq_diag *diag) {
    char buf[64], *end;
    if (f->len == 0 || f->len >= sizeof buf)
        return amq__diag(diag, AMQ_ERR_INVALID, f->offset,
                         "line %zu: %s: expected a number", line, what);
    memcpy(buf, f->p, f->len);
    buf[f->len] = '\0';
    errno = 0;
    double v = strtod(buf, &end);
    if (*end != '\0' || errno == ERANGE || !(v <= CSV_MAX) ||
        (positive ? !(v > 0) : !(v >= 0)))
        return amq__diag(diag, AMQ_ERR_INVALID, f->offset,
                         "line %zu: %s: expected a number %s and <= 1e18, "
                         "got '%.40s'",
                         line, what, positive ? "> 0" : ">= 0", buf);
    *out = v;
    return AMQ_OK;
}

static amq_status parse_row(const csv_field *f, size_t line, amq_lsm_run *r,
                            amq_diag *diag) {
    if (f[0].len == 0 || f[0].len >= AMQ_LSM_NAME_MAX ||
        memchr(f[0].p, '"', f[0].len) != NULL)
        return amq__diag(diag, AMQ_ERR_INVALID, f[0].offset,
                         "line %zu: name: expected 1 to %d characters "
                         "without '\"'",
                         line, AMQ_LSM_NAME_MAX - 1);
    memset(r, 0, sizeof *r);
    memcpy(r->name, f[0].p, f[0].len);
    AMQ_RETURN_IF_ERR(number(&f[1], true, line, "keys", &r->keys, diag));
    return number(&f[2], false, line, "lookups", &r->lookups, diag);
}

amq_status amq_lsm_parse_csv(const char *text, size_t len, amq_lsm_run *runs,
                             size_t cap, size_t *count, amq_diag *diag) {
    size_t n = 0, line = 0, pos = 0;
    double lookups = 0;
    if ((text == NULL && len > 0) || count == NULL)
        return AMQ_ERR_INVALID;
    while (pos < len) {
        const char *p = text + pos, *nl = memchr(p, '\n', len - pos);
        size_t l = nl ? (size_t)(nl - p) : len - pos, nf;
        csv_field f[3];
        line++;
        if (memchr(p, '\0', l) != NULL)
            return amq__diag(diag, AMQ_ERR_INVALID, pos, "line %zu: NUL byte",
                             line);
        csv_field whole = {p, l, pos};
        trim(&whole);
        size_t at = pos;
        pos += l + (nl != NULL);
        if (whole.len == 0 || whole.p[0] == '#')
            continue;
        if (!split3(p, l, at, f, &nf))
            return amq__diag(diag, AMQ_ERR_INVALID, at,
                             "line %zu: expected 3 fields "
                             "(name,keys,lookups), got %zu",
                             line, nf);
        if (n == 0 && field_is(&f[0], "name") && field_is(&f[1], "keys") &&
            field_is(&f[2], "lookups"))
            continue;
        amq_lsm_run r;
        AMQ_RETURN_IF_ERR(parse_row(f, line, &r, diag));
        if (runs != NULL && n < cap)
            runs[n] = r;
        lookups += r.lookups;
        n++;
    }
    *count = n;
    if (n == 0)
        return amq__diag(diag, AMQ_ERR_INVALID, len, "no runs");
    if (!(lookups > 0))
        return amq__diag(diag, AMQ_ERR_INVALID, len, "every run has 0 lookups");
    return runs == NULL || n > cap ? AMQ_ERR_BUFFER : AMQ_OK;
}

/* ---- generated trees ----------------------------------------------------- */

amq_status amq_lsm_levels(unsigned levels, double ratio, double keys,
                          amq_lsm_run *runs) {
    if (runs == NULL || levels == 0 || levels > 64 || !(ratio > 1) ||
        !isfinite(ratio) || !(keys > 0) || !isfinite(keys))
        return AMQ_ERR_INVALID;
    double sum = 0;
    for (unsigned i = 1; i <= levels; i++) /* T^-(L+1-i), computed stably */
        sum += (ratio - 1) * pow(ratio, -(double)(levels + 1 - i));
    for (unsigned i = 1; i <= levels; i++) {
        amq_lsm_run *r = &runs[i - 1];
        double share = (ratio - 1) * pow(ratio, -(double)(levels + 1 - i));
        snprintf(r->name, sizeof r->name, "L%u", i);
        r->keys = keys * share / sum;
        r->lookups = 0;
    }
    return AMQ_OK;
}

/* Comma-separated non-negative weights, one per run. */
static amq_status weights(const char *list, size_t at, amq_lsm_run *runs,
                          size_t count, amq_diag *diag) {
    const char *p = list;
    for (size_t i = 0; i < count; i++) {
        char *end;
        errno = 0;
        double v = strtod(p, &end);
        if (end == p || errno == ERANGE || !(v >= 0) || !isfinite(v) ||
            (*end != ',' && *end != '\0'))
            return amq__diag(diag, AMQ_ERR_SPEC, at + (size_t)(p - list),
                             "weights: expected a number >= 0 for run %zu",
                             i + 1);
        if ((*end == '\0') != (i + 1 == count))
            return amq__diag(diag, AMQ_ERR_SPEC, at + (size_t)(end - list),
                             "weights: expected %zu values, one per run",
                             count);
        runs[i].lookups = v;
        p = end + 1;
    }
    return AMQ_OK;
}

amq_status amq_lsm_workload(const char *spec, amq_lsm_run *runs, size_t count,
                            amq_diag *diag) {
    if (spec == NULL || runs == NULL || count == 0)
        return AMQ_ERR_INVALID;
    if (strcmp(spec, "uniform") == 0) {
        for (size_t i = 0; i < count; i++)
            runs[i].lookups = 1;
    } else if (strncmp(spec, "zipf:", 5) == 0) {
        char *end;
        errno = 0;
        double s = strtod(spec + 5, &end);
        if (end == spec + 5 || *end != '\0' || errno == ERANGE || !(s >= 0) ||
            !isfinite(s))
            return amq__diag(diag, AMQ_ERR_SPEC, 5,
                             "zipf:S needs an exponent S >= 0");
        for (size_t i = 0; i < count; i++)
            runs[i].lookups = pow((double)(i + 1), -s);
    } else if (strncmp(spec, "weights:", 8) == 0) {
        AMQ_RETURN_IF_ERR(weights(spec + 8, 8, runs, count, diag));
    } else {
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "workload: expected uniform, zipf:S or "
                         "weights:a,b,...");
    }
    double sum = 0;
    for (size_t i = 0; i < count; i++)
        sum += runs[i].lookups;
    if (!(sum > 0))
        return amq__diag(diag, AMQ_ERR_SPEC, 0, "workload: all weights 0");
    for (size_t i = 0; i < count; i++)
        runs[i].lookups /= sum;
    return AMQ_OK;
}

/* ---- Monkey -------------------------------------------------------------- */

/* Groups with weights normalised to sum 1. */
static amq_status to_groups(const amq_lsm_run *runs, size_t count,
                            const amq_alloc_curve *curve, amq_alloc_group *g,
                            double *keys) {
    double w = 0;
    *keys = 0;
    for (size_t i = 0; i < count; i++) {
        if (!(runs[i].keys > 0) || !isfinite(runs[i].keys) ||
            !(runs[i].lookups >= 0) || !isfinite(runs[i].lookups))
            return AMQ_ERR_INVALID;
        w += runs[i].lookups;
        *keys += runs[i].keys;
    }
    if (!(w > 0))
        return AMQ_ERR_INVALID;
    for (size_t i = 0; i < count; i++)
        g[i] = (amq_alloc_group){runs[i].keys, runs[i].lookups / w, curve};
    return AMQ_OK;
}

static amq_status plan_with(const amq_lsm_run *runs, size_t count,
                            const amq_alloc_curve *curve, amq_alloc_group *g,
                            amq_alloc_pick *optimal, amq_alloc_pick *uniform,
                            amq_lsm_totals *t) {
    double keys;
    amq_alloc_summary us;
    AMQ_RETURN_IF_ERR(to_groups(runs, count, curve, g, &keys));
    t->memory_bits = t->bits_per_key * keys;
    AMQ_RETURN_IF_ERR(
        amq_alloc_uniform(g, count, t->memory_bits, uniform, &us));
    AMQ_RETURN_IF_ERR(
        amq_alloc_min_cost(g, count, t->memory_bits, optimal, &t->optimal));
    t->cost_uniform = us.cost;
    t->cost_optimal = t->optimal.cost;
    return AMQ_OK;
}

amq_status amq_lsm_plan(const amq_lsm_run *runs, size_t count,
                        const amq_alloc_curve *curve, double bits_per_key,
                        const amq_options *opt, amq_alloc_pick *optimal,
                        amq_alloc_pick *uniform, amq_lsm_totals *totals) {
    amq__mem mem;
    size_t gsz, psz;
    if (runs == NULL || count == 0 || curve == NULL || !(bits_per_key >= 0) ||
        !isfinite(bits_per_key) ||
        !amq__mul(count, sizeof(amq_alloc_group), &gsz) ||
        !amq__mul(count, sizeof(amq_alloc_pick), &psz))
        return AMQ_ERR_INVALID;
    amq__mem_init(&mem, opt);
    amq_alloc_group *g = amq__alloc(&mem, gsz);
    amq_alloc_pick *scratch = amq__alloc(&mem, psz);
    amq_status st = AMQ_ERR_NOMEM;
    amq_lsm_totals t = {.bits_per_key = bits_per_key};
    if (g != NULL && scratch != NULL)
        st = plan_with(runs, count, curve, g, optimal ? optimal : scratch,
                       uniform ? uniform : scratch, &t);
    amq__free(&mem, g, gsz);
    amq__free(&mem, scratch, psz);
    if (st == AMQ_OK && totals != NULL)
        *totals = t;
    return st;
}

/* ---- least squares ------------------------------------------------------- */

amq_status amq_lsm_fit_line(const double *x, const double *y,
                            const double *weights, size_t n,
                            bool through_origin, amq_lsm_fit *fit) {
    double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    if (x == NULL || y == NULL || fit == NULL || n < 2)
        return AMQ_ERR_INVALID;
    for (size_t i = 0; i < n; i++) {
        double w = weights ? weights[i] : 1;
        sw += w, sx += w * x[i], sy += w * y[i];
        sxx += w * x[i] * x[i], sxy += w * x[i] * y[i];
    }
    double mx = sx / sw, my = sy / sw;
    double vx = sxx - sw * mx * mx;
    if (!(sw > 0) || (!through_origin && !(vx > 0)) ||
        (through_origin && !(sxx > 0)))
        return AMQ_ERR_INVALID;
    double slope = through_origin ? sxy / sxx : (sxy - sw * mx * my) / vx;
    double icept = through_origin ? 0 : my - slope * mx, res = 0, tot = 0;
    for (size_t i = 0; i < n; i++) {
        double w = weights ? weights[i] : 1, e = y[i] - slope * x[i] - icept;
        res += w * e * e;
        tot += w * (y[i] - my) * (y[i] - my);
    }
    *fit = (amq_lsm_fit){slope, icept, tot > 0 ? 1 - res / tot : 1.0, n};
    return AMQ_OK;
}
