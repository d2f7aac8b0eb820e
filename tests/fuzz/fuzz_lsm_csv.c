/*
 * fuzz_lsm_csv.c — libFuzzer target for the LSM run parser
 * (amq_lsm_parse_csv, amq/lsm.h). replay.c runs it over
 * tests/fuzz/corpus/lsm_csv in ordinary CI.
 *
 * Properties (a violation aborts):
 *   - nothing crashes or leaks, whatever the bytes;
 *   - an accepted file yields only valid runs (a NUL-terminated name of 1
 *     to 31 bytes without '"', keys finite and > 0, lookups finite and
 *     >= 0, some lookups > 0), and parsing is deterministic;
 *   - a refused file says where (offset within the input) and why;
 *   - too small a buffer reports the count the file needs;
 *   - the parsed runs plan: Monkey on the model accepts them.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amq/lsm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CAP 64

static void require(int ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "fuzz_lsm_csv: property violated: %s\n", what);
        abort();
    }
}

static void check_runs(const amq_lsm_run *r, size_t n) {
    double lookups = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = strnlen(r[i].name, AMQ_LSM_NAME_MAX);
        require(len > 0 && len < AMQ_LSM_NAME_MAX, "name length");
        require(strchr(r[i].name, '"') == NULL, "quote in a name");
        require(isfinite(r[i].keys) && r[i].keys > 0, "keys");
        require(isfinite(r[i].lookups) && r[i].lookups >= 0, "lookups");
        lookups += r[i].lookups;
    }
    require(lookups > 0, "some lookups");
}

static void check_plan(const amq_lsm_run *r, size_t n) {
    static amq_alloc_curve *model;
    amq_lsm_totals t;
    if (model == NULL)
        require(amq_alloc_curve_model(AMQ_ALLOC_BLOOM_C, NULL, &model) ==
                    AMQ_OK,
                "model curve");
    require(amq_lsm_plan(r, n, model, 8, NULL, NULL, NULL, &t) == AMQ_OK,
            "plan of accepted runs");
    require(t.cost_optimal <= t.cost_uniform * (1 + 1e-9), "Monkey <= uniform");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static amq_lsm_run a[CAP], b[CAP];
    const char *text = (const char *)data;
    size_t na = 0, nb = 0;
    amq_diag da = {0}, db = {0};
    amq_status sa = amq_lsm_parse_csv(text, size, a, CAP, &na, &da);
    amq_status sb = amq_lsm_parse_csv(text, size, b, CAP, &nb, &db);
    require(sa == sb && na == nb, "deterministic");
    if (sa == AMQ_OK) {
        require(na <= CAP, "count within the buffer");
        require(memcmp(a, b, na * sizeof *a) == 0, "same runs twice");
        check_runs(a, na);
        check_plan(a, na);
    } else if (sa == AMQ_ERR_BUFFER) {
        require(na > CAP, "buffer error only when too small");
        check_runs(a, CAP);
    } else {
        require(sa == AMQ_ERR_INVALID, "only INVALID otherwise");
        require(da.message[0] != '\0' && da.offset <= size,
                "a refusal says where and why");
    }
    return 0;
}
