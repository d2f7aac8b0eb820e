/*
 * test_fuse.c — binary fuse filters, 3- and 4-wise ("fuseW" and
 * "fuseW:ways=4" through amq_filter_build, the shape's getters through
 * amq_xor_of): the space targets at n = 10^6 (9.05 and 8.65 bits per key
 * at w = 8), the 2^-w rate, batch == scalar, small n with duplicates, bad
 * specs, and the frame of a 4-wise filter (round trip, view, a 3-wise
 * relabel refused). The contract suite covers fuse8/16/32 with the
 * default ways=3; test_xor.c checks both families' construction memory
 * and queries against the documented mapping.
 */
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "amq/static.h"

static uint64_t *keys(size_t n, uint64_t seed) {
    uint64_t *h = malloc(n ? n * sizeof *h : 1);
    for (size_t i = 0; h != NULL && i < n; i++)
        h[i] = check_next(&seed);
    return h;
}

static uint64_t missing(const amq_filter *f, const uint64_t *h, size_t n) {
    uint64_t miss = 0;
    for (size_t i = 0; i < n; i++)
        miss += !amq_filter_contains_hash(f, h[i]);
    return miss;
}

/* "fuseW:ways=K" over h[0..n); the status of the build. */
static amq_status build(const uint64_t *h, size_t n, unsigned width,
                        unsigned ways, amq_filter **f) {
    char spec[32];
    snprintf(spec, sizeof spec, "fuse%u:ways=%u", width, ways);
    return amq_filter_build(spec, h, n, 0.0, NULL, f, NULL);
}

static void test_space(unsigned ways, size_t n, double max_bpk) {
    check_seed = ways * 1000 + n;
    uint64_t *h = keys(n, check_seed);
    amq_filter *f = NULL;
    CHECK_OK(build(h, n, 8, ways, &f));
    if (f != NULL) {
        double bpk = 8.0 * (double)amq_filter_size_bytes(f) / (double)n;
        CHECK_MSG(bpk <= max_bpk, "fuse8 ways=%u n=%zu: %.4f bits/key > %g",
                  ways, n, bpk, max_bpk);
        const amq_xor *x = amq_xor_of(f);
        CHECK(x != NULL && amq_xor_ways(x) == ways && amq_xor_width(x) == 8 &&
              amq_filter_items(f) == n);
        CHECK(missing(f, h, n) == 0);
        uint64_t s = 99, fp = 0, trials = 400000;
        for (uint64_t i = 0; i < trials; i++)
            fp += amq_filter_contains_hash(f, check_next(&s));
        double p = (double)fp / (double)trials, e = 1.0 / 256;
        CHECK_MSG(fabs(p - e) <= 4 * sqrt(e / (double)trials),
                  "fuse8 ways=%u: measured %g, exact %g", ways, p, e);
        CHECK(amq_filter_fpr_bound(f) == e);
    }
    amq_filter_free(f);
    free(h);
}

static void test_batch(unsigned ways, unsigned width) {
    check_seed = 7;
    size_t n = 20000, m = 30000;
    uint64_t *h = keys(n, 7), *q = keys(m, 8);
    uint8_t *b = malloc(m + 8);
    amq_filter *f = NULL;
    CHECK_OK(build(h, n, width, ways, &f));
    if (f != NULL && q != NULL && b != NULL) {
        for (size_t i = 0; i < m; i += 2)
            q[i] = h[i % n];
        size_t bad = 0;
        amq_filter_contains_batch(f, q, m, b);
        for (size_t i = 0; i < m; i++)
            bad += b[i] != amq_filter_contains_hash(f, q[i]);
        for (size_t len = 0; len <= 40; len++) {
            memset(b, 0xCC, len + 8);
            amq_filter_contains_batch(f, q + 3 * len, len, b);
            for (size_t i = 0; i < len; i++)
                bad += b[i] != amq_filter_contains_hash(f, q[3 * len + i]);
            for (size_t i = len; i < len + 8; i++)
                bad += b[i] != 0xCC;
        }
        CHECK_MSG(bad == 0, "fuse%u ways=%u: batch differs on %zu", width, ways,
                  bad);
    }
    amq_filter_free(f);
    free(h), free(q), free(b);
}

static void test_small(unsigned ways) {
    check_seed = 9;
    size_t fails = 0, miss = 0, wrong = 0;
    for (size_t n = 1; n <= 400; n += (n < 100 ? 1 : 7)) {
        uint64_t *h = keys(2 * n, n * 31 + ways);
        /* Every key twice, in a scrambled order. */
        for (size_t i = 0; i < n; i++)
            h[n + i] = h[(i * 7) % n];
        amq_filter *f = NULL;
        if (build(h, 2 * n, 16, ways, &f) != AMQ_OK) {
            fails++;
        } else {
            miss += missing(f, h, 2 * n);
            wrong += amq_filter_items(f) != n;
        }
        amq_filter_free(f);
        free(h);
    }
    CHECK_MSG(fails == 0 && miss == 0 && wrong == 0,
              "ways=%u small n: %zu failed, %zu missed, %zu wrong counts", ways,
              fails, miss, wrong);
    /* A way count out of range is a bad spec value, a width without a
     * type an unknown name. */
    amq_filter *f = NULL;
    uint64_t one = 5;
    CHECK_STATUS(build(&one, 1, 8, 5, &f), AMQ_ERR_SPEC);
    CHECK_STATUS(build(&one, 1, 7, 3, &f), AMQ_ERR_SPEC);
    CHECK(f == NULL);
}

/* "fuse16:ways=4" through the generic interface: describe, frames, view. */
static void test_generic_ways4(void) {
    check_seed = 10;
    size_t n = 3000;
    uint64_t *h = keys(n, 10);
    amq_filter *f = NULL;
    amq_diag d;
    memset(&d, 0, sizeof d);
    CHECK_OK(amq_filter_build("fuse16:ways=4", h, n, 0.0, NULL, &f, &d));
    if (f == NULL) {
        free(h);
        return;
    }
    char desc[64];
    amq_filter_describe(f, desc, sizeof desc);
    CHECK_MSG(strcmp(desc, "fuse16:ways=4") == 0, "describe: %s", desc);
    size_t len = amq_filter_serialized_size(f);
    uint8_t *buf = aligned_alloc(64, (len + 63) / 64 * 64);
    CHECK_OK(amq_filter_save(f, buf, len, NULL));
    amq_filter *v = NULL;
    CHECK_OK(amq_filter_view(buf, len, NULL, &v, NULL));
    if (v != NULL) {
        size_t differ = 0;
        uint64_t s = 11;
        for (size_t i = 0; i < n; i++)
            differ += !amq_filter_contains_hash(v, h[i]);
        for (size_t i = 0; i < 20000; i++) {
            uint64_t x = check_next(&s);
            differ += amq_filter_contains_hash(v, x) !=
                      amq_filter_contains_hash(f, x);
        }
        CHECK(differ == 0);
    }
    amq_filter_free(v);
    CHECK_STATUS(amq_filter_build("fuse16:ways=5", h, n, 0.0, NULL, &v, NULL),
                 AMQ_ERR_SPEC);
    CHECK_STATUS(amq_filter_build("xor16:ways=4", h, n, 0.0, NULL, &v, NULL),
                 AMQ_ERR_SPEC);
    double c3 = 0, c4 = 0;
    CHECK_OK(amq_curve_bits("fuse8", 1.0 / 256, &c3));
    CHECK_OK(amq_curve_bits("fuse8:ways=4", 1.0 / 256, &c4));
    CHECK_MSG(fabs(c3 - 9.0) < 1e-9 && fabs(c4 - 8.6) < 1e-9,
              "curve at 2^-8: %g, %g", c3, c4);
    free(buf);
    amq_filter_free(f);
    free(h);
}

int main(void) {
    /* The targets are for n >= 10^6; below that the fuse layout needs
     * relatively more slots (docs/structures.md, "space at small n"). */
    size_t big = check_quick() ? 0 : 1000000;
    if (big) {
        test_space(3, big, 9.05);
        test_space(4, big, 8.65);
    }
    test_space(3, 10000, 10.5);
    test_space(4, 10000, 10.5);
    for (unsigned w = 8; w <= 32; w *= 2) {
        test_batch(3, w);
        test_batch(4, w);
    }
    test_small(3);
    test_small(4);
    test_generic_ways4();
    return check_report("test_fuse");
}
