/*
 * fuzz_window.c — libFuzzer target for amq_window_load (the sliding-window
 * frame, type 303, with its nested filter frames). replay.c runs it over
 * tests/fuzz/corpus/window in ordinary CI.
 *
 * Properties (a violation aborts):
 *   - nothing crashes or leaks, whatever the bytes;
 *   - a loaded window saves back to the very same bytes;
 *   - a loaded window works: its bound is within [0, 1]; a key it adds
 *     answers present at once and until its expiry, with the expiry at
 *     least the span past the add; moving the clock past the whole window
 *     leaves a bound of 0; the window saves and loads again after all
 *     of it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amq/window.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "fuzz_window: property violated: %s\n", what);
        abort();
    }
}

static uint8_t *save(const amq_window *w, size_t *len) {
    *len = amq_window_serialized_size(w);
    uint8_t *buf = malloc(*len ? *len : 1);
    size_t got = 0;
    require(buf != NULL && amq_window_save(w, buf, *len, &got) == AMQ_OK &&
                got == *len,
            "save");
    return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    amq_window *w = NULL;
    if (amq_window_load(data, size, NULL, &w, NULL) != AMQ_OK) {
        require(w == NULL, "a refused frame leaves no window");
        return 0;
    }
    size_t n;
    uint8_t *buf = save(w, &n);
    require(n == size && memcmp(buf, data, size) == 0, "save gives the bytes");
    free(buf);
    amq_window_info in;
    amq_window_get_info(w, 0, &in);
    require(in.bound >= 0 && in.bound <= 1, "bound within [0, 1]");
    uint64_t now = in.now;
    for (uint64_t k = 0; k < 8; k++) {
        uint64_t h = k * 0x9e3779b97f4a7c15ULL + 1;
        if (amq_window_add_hash(w, h, now, NULL) != AMQ_OK)
            continue;
        amq_window_get_info(w, 0, &in);
        require(amq_window_contains_hash(w, h, in.now), "added key answers");
        uint64_t e = amq_window_expiry_hash(w, h, in.now);
        require(e != AMQ_WINDOW_ABSENT, "added key has an expiry");
        require(e - in.now >= in.span - 1 || e >= UINT64_MAX - 1 ||
                    in.clock == AMQ_WINDOW_ITEMS,
                "expiry at least a span away");
        if (in.clock == AMQ_WINDOW_TIME)
            require(amq_window_contains_hash(w, h, e), "answers to expiry");
    }
    amq_window_get_info(w, 0, &in);
    if (in.clock == AMQ_WINDOW_TIME && in.now < UINT64_MAX / 4 - 4 * in.span) {
        uint64_t later = in.now + (in.generations + 2) * in.length;
        if (amq_window_advance(w, later) == AMQ_OK)
            require(amq_window_fpr_bound(w, later) == 0, "all expired");
    }
    buf = save(w, &n);
    amq_window *v = NULL;
    require(amq_window_load(buf, n, NULL, &v, NULL) == AMQ_OK, "reload");
    free(buf);
    amq_window_free(v);
    amq_window_free(w);
    return 0;
}
