/*
 * test_ribbon.c — standard Ribbon through the typed API and the spec
 * "ribbon:bits=B,w=W": integer and fractional bits, bands of 64 and 128
 * (the measured rate against the block-mix bound, which is exact), bits
 * chosen from a target fpr, the
 * curve's inverse at fractional points, batch == scalar, tiny n around the
 * 64-row block size, duplicates, and refused arguments.
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

static uint64_t missing(const amq_ribbon *f, const uint64_t *h, size_t n) {
    uint64_t miss = 0;
    for (size_t i = 0; i < n; i++)
        miss += !amq_ribbon_contains_hash(f, h[i]);
    return miss;
}

/* The bound is 2^-r (1 - u/2) for u = the share of starts in upper
 * blocks (~ the fraction of bits): check it and the measured rate. */
static void test_rate(double bits, unsigned band, size_t n,
                      uint64_t trials) {
    check_seed = (uint64_t)(bits * 64) + n + band;
    uint64_t *h = keys(n, check_seed);
    amq_ribbon *f = NULL;
    CHECK_OK(amq_ribbon_build(h, n, bits, band, NULL, &f));
    if (f != NULL) {
        CHECK(amq_ribbon_band(f) == band);
        CHECK(amq_ribbon_items(f) == n && missing(f, h, n) == 0);
        CHECK(amq_ribbon_bits(f) == bits);
        double r = floor(bits), frac = bits - r;
        double approx = ldexp(1.0 - frac / 2, -(int)r);
        double bound = amq_ribbon_fpr_bound(f);
        CHECK_MSG(bound <= approx && bound >= 0.98 * approx,
                  "bits=%g: bound %g, mix formula %g", bits, bound, approx);
        uint64_t s = 12345, fp = 0;
        for (uint64_t i = 0; i < trials; i++)
            fp += amq_ribbon_contains_hash(f, check_next(&s));
        double p = (double)fp / (double)trials;
        CHECK_MSG(fabs(p - bound) <= 4 * sqrt(bound / (double)trials) +
                                         3.0 / (double)trials,
                  "bits=%g n=%zu: measured %g, bound %g", bits, n, p, bound);
        /* Space: solution bits/row x rows/key; rows within 12% (W = 64)
         * or 5% (W = 128) of n at these sizes, plus a band of slack. */
        double bpk = 8.0 * (double)amq_ribbon_size_bytes(f) / (double)n;
        double over = band == 128 ? 1.05 : 1.12;
        CHECK_MSG(bpk >= bits &&
                      bpk <= bits * (over + (band + 128.0) / (double)n),
                  "bits=%g w=%u n=%zu: %g bits/key", bits, band, n, bpk);
    }
    amq_ribbon_free(f);
    free(h);
}

static void test_batch(double bits, unsigned band) {
    check_seed = 20;
    size_t n = 7000, m = 20000;
    uint64_t *h = keys(n, 20), *q = keys(m, 21);
    uint8_t *b = malloc(m + 8);
    amq_ribbon *f = NULL;
    CHECK_OK(amq_ribbon_build(h, n, bits, band, NULL, &f));
    if (f != NULL && q != NULL && b != NULL) {
        for (size_t i = 0; i < m; i += 3)
            q[i] = h[i % n];
        size_t bad = 0;
        amq_ribbon_contains_batch(f, q, m, b);
        for (size_t i = 0; i < m; i++)
            bad += b[i] != amq_ribbon_contains_hash(f, q[i]);
        for (size_t len = 0; len <= 40; len++) {
            memset(b, 0xCC, len + 8);
            amq_ribbon_contains_batch(f, q + len, len, b);
            for (size_t i = 0; i < len; i++)
                bad += b[i] != amq_ribbon_contains_hash(f, q[len + i]);
            for (size_t i = len; i < len + 8; i++)
                bad += b[i] != 0xCC;
        }
        CHECK_MSG(bad == 0, "ribbon bits=%g w=%u: batch differs on %zu", bits,
                  band, bad);
    }
    amq_ribbon_free(f);
    free(h), free(q), free(b);
}

static void test_small(void) {
    check_seed = 30;
    static const double bits[] = {1, 3.25, 8, 13.5, 31.5, 32};
    size_t fails = 0, miss = 0, wrong = 0;
    for (size_t b = 0; b < 2 * sizeof bits / sizeof bits[0]; b++) {
        unsigned band = b % 2 ? 128 : 64;
        for (size_t n = 0; n <= 200; n += (n < 70 ? 1 : 13)) {
            uint64_t *h = keys(n + n / 2, n + 1000 * b);
            for (size_t i = 0; i < n / 2; i++)
                h[n + i] = h[i]; /* half the keys twice */
            amq_ribbon *f = NULL;
            if (amq_ribbon_build(h, n + n / 2, bits[b / 2], band, NULL,
                                 &f) != AMQ_OK) {
                fails++;
            } else {
                miss += missing(f, h, n + n / 2);
                wrong += amq_ribbon_items(f) != n;
                if (n == 0) {
                    uint64_t s = 3;
                    for (int i = 0; i < 1000; i++)
                        miss += amq_ribbon_contains_hash(f, check_next(&s));
                    wrong += amq_ribbon_fpr_bound(f) != 0.0;
                }
            }
            amq_ribbon_free(f);
            free(h);
        }
    }
    CHECK_MSG(fails == 0 && miss == 0 && wrong == 0,
              "small n: %zu failed, %zu wrong answers, %zu wrong counts",
              fails, miss, wrong);
    amq_ribbon *f = NULL;
    uint64_t one = 1;
    CHECK_STATUS(amq_ribbon_build(&one, 1, 0.5, 64, NULL, &f),
                 AMQ_ERR_INVALID);
    CHECK_STATUS(amq_ribbon_build(&one, 1, 33, 64, NULL, &f), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_ribbon_build(&one, 1, NAN, 64, NULL, &f),
                 AMQ_ERR_INVALID);
    CHECK_STATUS(amq_ribbon_build(NULL, 1, 8, 64, NULL, &f), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_ribbon_build(&one, 1, 8, 96, NULL, &f), AMQ_ERR_INVALID);
    CHECK(f == NULL);
    CHECK(amq_ribbon_build_memory(1000000, 64) >= 1000000u * 20);
    CHECK(amq_ribbon_build_memory(1000000, 65) == 0);
}

/* The spec: bits from a target, explicit bits against a target. */
static void test_spec(void) {
    check_seed = 40;
    size_t n = 5000;
    uint64_t *h = keys(n, 40);
    static const double targets[] = {0.2, 0.01, 0.003, 1e-4, 1e-7};
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
        amq_filter *f = NULL;
        CHECK_OK(amq_filter_build("ribbon", h, n, targets[i], NULL, &f,
                                  NULL));
        if (f == NULL)
            continue;
        double bound = amq_filter_fpr_bound(f);
        /* Met, with little to spare (bits in 1/64 steps, whole blocks). */
        CHECK_MSG(bound <= targets[i] && bound >= targets[i] * 0.97,
                  "target %g: bound %g", targets[i], bound);
        amq_filter_free(f);
    }
    amq_filter *f = NULL;
    amq_diag d;
    memset(&d, 0, sizeof d);
    CHECK_STATUS(amq_filter_build("ribbon", h, n, 0.0, NULL, &f, &d),
                 AMQ_ERR_SPEC);
    CHECK(d.message[0] != '\0');
    CHECK_STATUS(amq_filter_build("ribbon:bits=6.5", h, n, 0.01, NULL, &f,
                                  NULL),
                 AMQ_ERR_INVALID);
    CHECK_STATUS(amq_filter_build("ribbon:bits=40", h, n, 0.0, NULL, &f,
                                  NULL),
                 AMQ_ERR_SPEC);
    CHECK_STATUS(amq_filter_build("ribbon:bits=8,w=96", h, n, 0.0, NULL, &f,
                                  NULL),
                 AMQ_ERR_SPEC);
    CHECK_OK(amq_filter_build("ribbon:bits=6.5", h, n, 0.012, NULL, &f,
                              NULL));
    if (f != NULL) {
        char desc[64];
        amq_filter_describe(f, desc, sizeof desc);
        CHECK_MSG(strcmp(desc, "ribbon:bits=6.5,w=64") == 0, "describe %s",
                  desc);
    }
    amq_filter_free(f);
    /* The curve and its inverse, at fractional points too. */
    for (double b = 1.5; b < 30; b += 0.37) {
        double p = 0, back = 0;
        CHECK_OK(amq_curve_fpr("ribbon", b, &p));
        CHECK_OK(amq_curve_bits("ribbon", p, &back));
        CHECK_MSG(fabs(back - b) <= 1e-9 * b, "curve: %g -> %g -> %g", b, p,
                  back);
    }
    free(h);
}

/* A w=128 filter through the frame: load and view answer alike. */
static void test_frame_w128(void) {
    check_seed = 50;
    size_t n = 4000;
    uint64_t *h = keys(n, 50);
    amq_filter *f = NULL, *l = NULL, *v = NULL;
    CHECK_OK(amq_filter_build("ribbon:bits=7.5,w=128", h, n, 0.0, NULL, &f,
                              NULL));
    if (f == NULL) {
        free(h);
        return;
    }
    size_t len = amq_filter_serialized_size(f);
    uint8_t *buf = aligned_alloc(64, (len + 63) / 64 * 64);
    CHECK_OK(amq_filter_save(f, buf, len, NULL));
    CHECK_OK(amq_filter_load(buf, len, NULL, &l, NULL));
    CHECK_OK(amq_filter_view(buf, len, NULL, &v, NULL));
    if (l != NULL && v != NULL) {
        size_t bad = 0;
        uint64_t s = 51;
        for (size_t i = 0; i < n; i++)
            bad += !amq_filter_contains_hash(v, h[i]) ||
                   !amq_filter_contains_hash(l, h[i]);
        for (size_t i = 0; i < 20000; i++) {
            uint64_t x = check_next(&s);
            bool a = amq_filter_contains_hash(f, x);
            bad += a != amq_filter_contains_hash(v, x) ||
                   a != amq_filter_contains_hash(l, x);
        }
        CHECK(bad == 0);
        char desc[64];
        amq_filter_describe(v, desc, sizeof desc);
        CHECK_MSG(strcmp(desc, "ribbon:bits=7.5,w=128") == 0, "%s", desc);
    }
    amq_filter_free(l);
    amq_filter_free(v);
    amq_filter_free(f);
    free(buf);
    free(h);
}

int main(void) {
    size_t big = check_quick() ? 20000 : 200000;
    uint64_t trials = check_quick() ? 200000 : 1000000;
    test_rate(8, 64, big, trials);
    test_rate(6.5, 64, big, trials);
    test_rate(7.25, 128, big, trials);
    test_rate(6.5, 128, big, trials);
    test_rate(3, 64, 1000, trials / 4);
    test_rate(10.75, 128, 3000, trials);
    test_batch(8, 64);
    test_batch(6.5, 64);
    test_batch(31.5, 64);
    test_batch(8, 128);
    test_batch(13.25, 128);
    test_small();
    test_spec();
    test_frame_w128();
    return check_report("test_ribbon");
}
