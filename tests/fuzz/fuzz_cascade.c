/*
 * fuzz_cascade.c — libFuzzer target for the cascade frame parser
 * (amq_cascade_load, type 302). replay.c runs it over
 * tests/fuzz/corpus/cascade in ordinary CI.
 *
 * Properties (a violation aborts):
 *   - nothing crashes or leaks, whatever the bytes;
 *   - a loaded cascade re-saves to exactly the input bytes (the frame is
 *     canonical), and the re-saved frame loads again;
 *   - a loaded cascade works: queries, the bound in [0, 1], statistics,
 *     an audit over a few keys.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amq/cascade.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "fuzz_cascade: property violated: %s\n", what);
        abort();
    }
}

static void exercise(const amq_cascade *c) {
    static const char *keys[] = {"", "a", "www.ads1.com", "t0001/tbl01/r1"};
    for (size_t i = 0; i < 4; i++) {
        bool x = amq_cascade_contains(c, keys[i], strlen(keys[i])), y = !x;
        amq_score s = amq_cascade_score(c, keys[i], strlen(keys[i]));
        require(amq_cascade_contains_scored(c, keys[i], strlen(keys[i]), &s,
                                            &y) == AMQ_OK && x == y,
                "scored query agrees");
    }
    double b = amq_cascade_fpr_bound(c);
    require(b >= 0.0 && b <= 1.0, "bound in [0, 1]");
    amq_cascade_stats st;
    amq_cascade_level lv[AMQ_CASCADE_MAX_LEVELS + 1];
    size_t nl = 0;
    amq_cascade_get_stats(c, &st, lv, AMQ_CASCADE_MAX_LEVELS + 1, &nl);
    require(nl <= AMQ_CASCADE_MAX_LEVELS + 1, "level count");
    amq_audit *a = NULL;
    if (amq_audit_new(c, 1.0, 1, NULL, &a) == AMQ_OK) {
        for (size_t i = 0; i < 4; i++)
            (void)amq_audit_record(a, keys[i], strlen(keys[i]), i & 1);
        amq_audit_report r;
        amq_audit_get_report(a, &r, NULL, 0);
        amq_audit_free(a);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    amq_cascade *c = NULL;
    if (amq_cascade_load(data, size, NULL, &c, NULL) != AMQ_OK) {
        require(c == NULL, "failed load leaves no object");
        return 0;
    }
    size_t n = amq_cascade_save_size(c), w = 0;
    uint8_t *buf = malloc(n ? n : 1);
    require(buf != NULL, "out of memory");
    require(amq_cascade_save(c, buf, n, &w) == AMQ_OK && w == n, "save");
    require(w == size && memcmp(buf, data, size) == 0, "canonical frame");
    amq_cascade *d = NULL;
    require(amq_cascade_load(buf, w, NULL, &d, NULL) == AMQ_OK, "reload");
    exercise(c);
    amq_cascade_free(d);
    amq_cascade_free(c);
    free(buf);
    return 0;
}
