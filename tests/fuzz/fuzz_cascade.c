/*
 * fuzz_cascade.c — libFuzzer target for the cascade frame parser
 * (amq_cascade_load, type 302). replay.c runs it over
 * tests/fuzz/corpus/cascade in ordinary CI.
 *
 * Every input is checked as given and again with its checksum fixed.
 * Properties (a violation aborts):
 *   - nothing crashes or leaks, whatever the bytes;
 *   - a loaded cascade re-saves to the input bytes (the frame is canonical;
 *     minor version and unknown compatible flags aside), and the re-saved
 *     frame loads again;
 *   - a loaded cascade works: queries, the bound in [0, 1], statistics,
 *     an audit over a few keys.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amq/cascade.h"
#include "core/frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "fuzz_cascade: property violated: %s\n", what);
        abort();
    }
}

/* A reader accepts any minor version and ignores unknown compatible flags
 * (docs/format.md); save writes its own minor and only the flags it knows.
 * So the input may differ from the re-saved frame in bytes 10-11 and
 * 20-23 (compat bit 0 aside) and in the checksum; nothing else. */
static bool same_canonical(const uint8_t *in, const uint8_t *out, size_t n) {
    if (n < 72 || (in[20] & 1) != (out[20] & 1))
        return memcmp(in, out, n) == 0;
    for (size_t i = 0; i < n - 8; i++) {
        bool free_field = (i >= 10 && i < 12) || (i >= 20 && i < 24);
        if (!free_field && in[i] != out[i])
            return false;
    }
    return true;
}

static void exercise(const amq_cascade *c) {
    static const char *keys[] = {"", "a", "www.ads1.com", "t0001/tbl01/r1"};
    for (size_t i = 0; i < 4; i++) {
        bool x = amq_cascade_contains(c, keys[i], strlen(keys[i])), y = !x;
        amq_score s = amq_cascade_score(c, keys[i], strlen(keys[i]));
        require(amq_cascade_contains_scored(c, keys[i], strlen(keys[i]), &s,
                                            &y) == AMQ_OK &&
                    x == y,
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

static void check_cascade(const uint8_t *data, size_t size) {
    amq_cascade *c = NULL;
    if (amq_cascade_load(data, size, NULL, &c, NULL) != AMQ_OK) {
        require(c == NULL, "failed load leaves no object");
        return;
    }
    size_t n = amq_cascade_save_size(c), w = 0;
    uint8_t *buf = malloc(n ? n : 1);
    require(buf != NULL, "out of memory");
    require(amq_cascade_save(c, buf, n, &w) == AMQ_OK && w == n, "save");
    require(w == size && same_canonical(data, buf, size), "canonical frame");
    amq_cascade *d = NULL;
    require(amq_cascade_load(buf, w, NULL, &d, NULL) == AMQ_OK, "reload");
    exercise(c);
    amq_cascade_free(d);
    amq_cascade_free(c);
    free(buf);
}

/* As fuzz_frame: a second pass with the trailing XXH64 recomputed, so
 * mutations get past the checksum to the cascade's own checks. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    check_cascade(data, size);
    uint8_t *copy = size >= 72 ? malloc(size) : NULL;
    if (copy != NULL) {
        memcpy(copy, data, size);
        amq__frame_seal(copy, size);
        check_cascade(copy, size);
    }
    free(copy);
    return 0;
}
