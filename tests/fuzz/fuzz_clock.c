/*
 * fuzz_clock.c — libFuzzer target for the clock parsers (amq/clock.h):
 * amq_clock_load (the frame, types 300/301) and amq_clock_decode (the wire
 * message) into four template clocks. replay.c runs it over
 * tests/fuzz/corpus/clock in ordinary CI.
 *
 * Properties (a violation aborts):
 *   - nothing crashes or leaks, whatever the bytes;
 *   - a decoded wire message is canonical: encoding the clock gives back
 *     the input byte for byte; a failed decode leaves the clock unchanged;
 *   - a loaded frame re-saves to bytes that load again and re-save
 *     identically, and the reloaded clock compares equal;
 *   - a loaded clock works: tick, merge, compare, compare_history, encode.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amq/clock.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "fuzz_clock: property violated: %s\n", what);
        abort();
    }
}

static uint8_t *encode(const amq_clock *c, size_t *len) {
    size_t n = amq_clock_encoded_size(c);
    uint8_t *buf = malloc(n);
    require(buf != NULL, "out of memory");
    require(amq_clock_encode(c, buf, n, len) == AMQ_OK && *len == n, "encode");
    return buf;
}

static uint8_t *save(const amq_clock *c, size_t *len) {
    size_t n = amq_clock_save_size(c);
    uint8_t *buf = malloc(n);
    require(buf != NULL, "out of memory");
    require(amq_clock_save(c, buf, n, len) == AMQ_OK && *len == n, "save");
    return buf;
}

static amq_clock *template_clock(int which) {
    static const uint8_t key[16] = {0x6b, 0x65, 0x79};
    amq_options sip = {.hash = AMQ_HASH_SIPHASH, .hash_key = key};
    amq_clock *c = NULL;
    amq_status st;
    switch (which) {
    case 0: st = amq_clock_new_bloom(8, 2, 4, NULL, &c); break;
    case 1: st = amq_clock_new_bloom(64, 3, 0, &sip, &c); break;
    case 2:
        st = amq_clock_new_vector(AMQ_CLOCK_VECTOR_DENSE, 0, NULL, &c);
        for (uint64_t i = 1; st == AMQ_OK && i < 3; i++)
            st = amq_clock_join(c, i);
        break;
    default:
        st = amq_clock_new_vector(AMQ_CLOCK_VECTOR_SPARSE, 0, NULL, &c);
        break;
    }
    require(st == AMQ_OK, "template");
    return c;
}

static void exercise(amq_clock *c) {
    amq_clock *d = NULL;
    amq_clock_verdict v;
    require(amq_clock_clone(c, &d) == AMQ_OK, "clone");
    require(amq_clock_compare(c, d, &v) == AMQ_OK && v.order == AMQ_ORDER_EQUAL,
            "clone compares equal");
    amq_status st = amq_clock_tick(d, "fuzz", 4);
    require(st == AMQ_OK || st == AMQ_ERR_OVERFLOW, "tick");
    require(amq_clock_compare_history(d, c, &v) == AMQ_OK, "compare_history");
    if (st == AMQ_OK)
        require(v.order == AMQ_ORDER_AFTER, "a tick moves forward");
    require(v.fp_paper >= 0 && v.fp_paper <= 1 && v.fp_exact >= 0 &&
                v.fp_exact <= 1,
            "probabilities in [0, 1]");
    st = amq_clock_merge(c, d);
    require(st == AMQ_OK || st == AMQ_ERR_OVERFLOW, "merge");
    amq_clock_free(d);
}

static void check_wire(const uint8_t *data, size_t size, int which) {
    amq_clock *c = template_clock(which);
    size_t l0, l1;
    uint8_t *before = encode(c, &l0);
    if (amq_clock_decode(c, data, size) == AMQ_OK) {
        uint8_t *again = encode(c, &l1);
        require(l1 == size && memcmp(again, data, size) == 0,
                "decoded message is canonical");
        free(again);
        exercise(c);
    } else {
        uint8_t *after = encode(c, &l1);
        require(l0 == l1 && memcmp(before, after, l0) == 0,
                "failed decode left the clock unchanged");
        free(after);
    }
    free(before);
    amq_clock_free(c);
}

static void check_frame(const uint8_t *data, size_t size) {
    amq_clock *c = NULL, *r = NULL;
    if (amq_clock_load(data, size, NULL, &c, NULL) != AMQ_OK) {
        require(c == NULL, "failed load returns no clock");
        return;
    }
    size_t l1, l2;
    uint8_t *s1 = save(c, &l1);
    require(amq_clock_load(s1, l1, NULL, &r, NULL) == AMQ_OK, "reload");
    uint8_t *s2 = save(r, &l2);
    require(l1 == l2 && memcmp(s1, s2, l1) == 0, "re-save is stable");
    amq_clock_verdict v;
    require(amq_clock_compare(c, r, &v) == AMQ_OK && v.order == AMQ_ORDER_EQUAL,
            "reloaded clock is equal");
    exercise(c);
    free(s1);
    free(s2);
    amq_clock_free(c);
    amq_clock_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    check_frame(data, size);
    for (int which = 0; which < 4; which++)
        check_wire(data, size, which);
    return 0;
}
