/*
 * test_ribbon.c — Ribbon filters through amq_filter_build and the spec
 * "ribbon:bits=B,w=W,bump=0|1" (the shape's getters through
 * amq_ribbon_of): bumped (BuRR, the default) and standard.
 *
 *   - space: at n = 10^6 and bits in {6.5, 7, 8, 8.25, 10, 16} (quick mode:
 *     6.5 and 8.25) a default filter is within 3% of log2(1/fpr_bound),
 *     every byte counted; and the measured rate over 10^6 absent keys is
 *     within 4 sigma of fpr_bound (which is exact, so checked both ways);
 *   - the rate against the block-mix formula, both variants, both bands;
 *   - batch == scalar, and the POPCNT path == the portable one
 *     (AMQ_OPT_SCALAR);
 *   - every n from 0 to 200 and around the bumping threshold, with
 *     duplicates; the layer counts;
 *   - the spec, the curve and its inverse;
 *   - frames: load and view, a version-1 frame made by hand, every
 *     parameter field corrupted (resealed), code padding bits, and byte
 *     edits that must be refused or load into a working filter;
 *   - adversarial keys that fail a standard layer's first seed (the retry
 *     path) or fill one bucket of a bumped layer.
 */
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "amq/static.h"
#include "core/frame.h"

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

/* "ribbon:bits=B,w=W,bump=0|1" over h[0..n) (bits written exactly). */
static amq_status build(const uint64_t *h, size_t n, double bits, unsigned band,
                        bool bump, const amq_options *opt, amq_filter **f) {
    char spec[96];
    snprintf(spec, sizeof spec, "ribbon:bits=%.17g,w=%u,bump=%d", bits, band,
             bump);
    return amq_filter_build(spec, h, n, 0.0, opt, f, NULL);
}

/* The structure's getters of a filter that is a ribbon (else 0). */
static unsigned layers(const amq_filter *f) {
    const amq_ribbon *r = amq_ribbon_of(f);
    return r != NULL ? amq_ribbon_layers(r) : 0;
}

/* Absent keys (a stream the built keys never use) that test positive. */
static uint64_t false_positives(const amq_filter *f, uint64_t seed,
                                uint64_t trials) {
    uint64_t s = seed ^ 0x5bd1e9955bd1e995ULL, fp = 0;
    for (uint64_t i = 0; i < trials; i++)
        fp += amq_filter_contains_hash(f, check_next(&s));
    return fp;
}

/* Measured rate within 4 sigma of the exact bound. */
static bool rate_agrees(double bound, uint64_t fp, uint64_t trials) {
    double p = (double)fp / (double)trials;
    double sigma = sqrt(bound * (1 - bound) / (double)trials);
    return fabs(p - bound) <= 4 * sigma + 1.0 / (double)trials;
}

/* The target: bits per key (all bytes) within 3% of
 * log2(1/fpr_bound) at n = 10^6, for the default band. */
static void test_overhead(void) {
    static const double all[] = {6.5, 7, 8, 8.25, 10, 16};
    static const double quick[] = {6.5, 8.25};
    const double *bits = check_quick() ? quick : all;
    size_t nb = check_quick() ? 2 : 6;
    size_t n = 1000000;
    uint64_t trials = 1000000;
    uint64_t *h = keys(n, 1);
    for (size_t i = 0; h != NULL && i < nb; i++) {
        check_seed = 1000 + i;
        amq_filter *f = NULL;
        CHECK_OK(build(h, n, bits[i], 64, true, NULL, &f));
        const amq_ribbon *r = amq_ribbon_of(f);
        if (r == NULL) {
            amq_filter_free(f);
            continue;
        }
        double bound = amq_filter_fpr_bound(f);
        double bpk = 8.0 * (double)amq_filter_size_bytes(f) / (double)n;
        double over = bpk / -log2(bound) - 1;
        CHECK_MSG(amq_ribbon_band(r) == 64 && amq_ribbon_bumped(r) &&
                      amq_ribbon_layers(r) >= 2,
                  "bits=%g: band %u, %u layers", bits[i], amq_ribbon_band(r),
                  amq_ribbon_layers(r));
        CHECK_MSG(over >= 0 && over <= 0.03,
                  "bits=%g: %.4f bits/key, log2(1/bound) %.4f: overhead "
                  "%.2f%%",
                  bits[i], bpk, -log2(bound), 100 * over);
        uint64_t fp = false_positives(f, i, trials);
        CHECK_MSG(rate_agrees(bound, fp, trials),
                  "bits=%g: measured %g, bound %g", bits[i],
                  (double)fp / (double)trials, bound);
        CHECK(missing(f, h, check_quick() ? 100000 : n) == 0);
        amq_filter_free(f);
    }
    free(h);
}

/* The bound is 2^-r (1 - u/2) for u = the share of checked starts in upper
 * blocks (~ the fraction of bits): check it, the measured rate and the
 * space. */
static void test_rate(double bits, unsigned band, bool bump, size_t n,
                      uint64_t trials) {
    check_seed = (uint64_t)(bits * 64) + n + band + bump;
    uint64_t *h = keys(n, check_seed);
    amq_filter *f = NULL;
    CHECK_OK(build(h, n, bits, band, bump, NULL, &f));
    const amq_ribbon *rb = amq_ribbon_of(f);
    if (f != NULL && rb != NULL) {
        CHECK(amq_ribbon_band(rb) == band && amq_ribbon_bumped(rb) == bump);
        CHECK(amq_filter_items(f) == n && missing(f, h, n) == 0);
        CHECK(amq_ribbon_bits(rb) == bits);
        double r = floor(bits), frac = bits - r;
        double approx = ldexp(1.0 - frac / 2, -(int)r);
        double bound = amq_filter_fpr_bound(f);
        CHECK_MSG(bound <= approx * (1 + 1e-12) && bound >= 0.98 * approx,
                  "bits=%g: bound %g, mix formula %g", bits, bound, approx);
        uint64_t fp = false_positives(f, n, trials);
        CHECK_MSG(rate_agrees(bound, fp, trials),
                  "bits=%g n=%zu: measured %g, bound %g", bits, n,
                  (double)fp / (double)trials, bound);
        /* Space: solution bits/row x rows/key. Standard: rows within 12%
         * (W = 64) or 5% (W = 128) of n, plus a band of slack. Bumped:
         * within 1% plus the last layers' slack. */
        double bpk = 8.0 * (double)amq_filter_size_bytes(f) / (double)n;
        double over = bump ? 1.01 : band == 128 ? 1.05 : 1.12;
        double slack = (bump ? 3.0 : 1.0) * (band + 128.0) / (double)n;
        CHECK_MSG(bpk >= bits && bpk <= bits * (over + slack),
                  "bits=%g w=%u bump=%d n=%zu: %g bits/key", bits, band, bump,
                  n, bpk);
    }
    amq_filter_free(f);
    free(h);
}

/* Batch == scalar (also for short and odd lengths, with canaries), and
 * the POPCNT path (default) == the portable one (AMQ_OPT_SCALAR). */
static void test_batch(double bits, unsigned band, bool bump, size_t n) {
    check_seed = 20 + n;
    size_t m = 30000;
    uint64_t *h = keys(n, 20), *q = keys(m, 21);
    uint8_t *b = malloc(m + 8);
    amq_options scal;
    memset(&scal, 0, sizeof scal);
    scal.flags = AMQ_OPT_SCALAR;
    amq_filter *f = NULL, *s = NULL;
    CHECK_OK(build(h, n, bits, band, bump, NULL, &f));
    CHECK_OK(build(h, n, bits, band, bump, &scal, &s));
    if (f != NULL && s != NULL && q != NULL && b != NULL) {
        for (size_t i = 0; i < m; i += 3)
            q[i] = h[i % n];
        size_t bad = 0;
        amq_filter_contains_batch(f, q, m, b);
        for (size_t i = 0; i < m; i++)
            bad += b[i] != amq_filter_contains_hash(f, q[i]) ||
                   b[i] != amq_filter_contains_hash(s, q[i]);
        amq_filter_contains_batch(s, q, m, b);
        for (size_t i = 0; i < m; i++)
            bad += b[i] != amq_filter_contains_hash(f, q[i]);
        for (size_t len = 0; len <= 40; len++) {
            memset(b, 0xCC, len + 8);
            amq_filter_contains_batch(f, q + len, len, b);
            for (size_t i = 0; i < len; i++)
                bad += b[i] != amq_filter_contains_hash(f, q[len + i]);
            for (size_t i = len; i < len + 8; i++)
                bad += b[i] != 0xCC;
        }
        CHECK_MSG(bad == 0, "ribbon bits=%g w=%u bump=%d: %zu differ", bits,
                  band, bump, bad);
        CHECK(amq_filter_size_bytes(f) == amq_filter_size_bytes(s) &&
              amq_filter_fpr_bound(f) == amq_filter_fpr_bound(s));
    }
    amq_filter_free(f);
    amq_filter_free(s);
    free(h), free(q), free(b);
}

/* One size: n distinct keys, half of them given twice. */
static void small_case(size_t n, double bits, unsigned band, bool bump,
                       size_t *fails, size_t *miss, size_t *wrong) {
    uint64_t *h = keys(n + n / 2, n * 31 + band + bump);
    for (size_t i = 0; i < n / 2; i++)
        h[n + i] = h[i];
    amq_filter *f = NULL;
    if (build(h, n + n / 2, bits, band, bump, NULL, &f) != AMQ_OK) {
        (*fails)++;
    } else {
        *miss += missing(f, h, n + n / 2);
        *wrong += amq_filter_items(f) != n;
        *wrong += amq_ribbon_of(f) == NULL;
        *wrong += (n == 0) != (layers(f) == 0);
        if (n == 0) {
            *miss += false_positives(f, 3, 1000);
            *wrong += amq_filter_fpr_bound(f) != 0.0;
        }
    }
    amq_filter_free(f);
    free(h);
}

static void test_small(void) {
    check_seed = 30;
    static const double bits[] = {1, 3.25, 8, 13.5, 31.5, 32};
    size_t nb = sizeof bits / sizeof bits[0];
    size_t fails = 0, miss = 0, wrong = 0;
    for (size_t b = 0; b < 4 * nb; b++) {
        unsigned band = b % 2 ? 128 : 64;
        bool bump = (b / 2) % 2 == 0;
        for (size_t n = 0; n <= 200; n += (n < 70 ? 1 : 13))
            small_case(n, bits[b / 4], band, bump, &fails, &miss, &wrong);
        /* Around the bumping threshold (1024 keys): 1 and 2 layers. */
        for (size_t n = 1000; n <= 1100; n += check_quick() ? 50 : 9)
            small_case(n, bits[b / 4], band, bump, &fails, &miss, &wrong);
    }
    CHECK_MSG(fails == 0 && miss == 0 && wrong == 0,
              "small n: %zu failed, %zu wrong answers, %zu wrong counts", fails,
              miss, wrong);
    /* Bits and band out of range are bad spec values; missing keys or
     * output are refused. */
    amq_filter *f = NULL;
    uint64_t one = 1;
    CHECK_STATUS(build(&one, 1, 0.5, 64, true, NULL, &f), AMQ_ERR_SPEC);
    CHECK_STATUS(build(&one, 1, 33, 64, true, NULL, &f), AMQ_ERR_SPEC);
    CHECK_STATUS(build(&one, 1, NAN, 64, true, NULL, &f), AMQ_ERR_SPEC);
    CHECK_STATUS(build(NULL, 1, 8, 64, true, NULL, &f), AMQ_ERR_INVALID);
    CHECK_STATUS(build(&one, 1, 8, 96, true, NULL, &f), AMQ_ERR_SPEC);
    CHECK_STATUS(build(&one, 1, 8, 96, false, NULL, &f), AMQ_ERR_SPEC);
    CHECK_STATUS(
        amq_filter_build("ribbon:bits=8", &one, 1, 0.0, NULL, NULL, NULL),
        AMQ_ERR_INVALID);
    CHECK(f == NULL);
    CHECK(amq_ribbon_of(NULL) == NULL);
    CHECK(amq_ribbon_build_memory(1000000, 64) >= 1000000u * 20);
    CHECK(amq_ribbon_build_memory(1000000, 128) >
          amq_ribbon_build_memory(1000000, 64));
    CHECK(amq_ribbon_build_memory(1000000, 65) == 0);
}

/* Layer counts: one layer below the bumping threshold and for standard
 * Ribbon; more above it; all keys of a large set found, few bumped. */
static void test_layers(void) {
    check_seed = 35;
    size_t n = 100000;
    uint64_t *h = keys(n, 35);
    amq_filter *f = NULL, *s = NULL, *t = NULL;
    CHECK_OK(build(h, n, 7.5, 64, true, NULL, &f));
    CHECK_OK(build(h, n, 7.5, 64, false, NULL, &s));
    CHECK_OK(build(h, 500, 7.5, 64, true, NULL, &t));
    if (f != NULL && s != NULL && t != NULL) {
        CHECK_MSG(layers(f) >= 2 && layers(f) <= 4, "%u layers", layers(f));
        CHECK(layers(s) == 1 && layers(t) == 1);
        CHECK(missing(f, h, n) == 0 && missing(s, h, n) == 0);
        /* Bumped Ribbon is the smaller one by ~10%. */
        CHECK(amq_filter_size_bytes(f) * 1.08 < amq_filter_size_bytes(s));
    }
    amq_filter_free(f);
    amq_filter_free(s);
    amq_filter_free(t);
    free(h);
}

/* The spec: bits from a target, explicit bits against a target, bump. */
static void test_spec(void) {
    check_seed = 40;
    size_t n = 5000;
    uint64_t *h = keys(n, 40);
    static const double targets[] = {0.2, 0.01, 0.003, 1e-4, 1e-7};
    for (size_t i = 0; i < 2 * sizeof targets / sizeof targets[0]; i++) {
        amq_filter *f = NULL;
        const char *spec = i % 2 ? "ribbon:bump=0" : "ribbon";
        CHECK_OK(amq_filter_build(spec, h, n, targets[i / 2], NULL, &f, NULL));
        if (f == NULL)
            continue;
        double bound = amq_filter_fpr_bound(f);
        /* Met, with little to spare (bits in 1/64 steps, whole blocks). */
        CHECK_MSG(bound <= targets[i / 2] && bound >= targets[i / 2] * 0.97,
                  "%s target %g: bound %g", spec, targets[i / 2], bound);
        amq_filter_free(f);
    }
    amq_filter *f = NULL;
    amq_diag d;
    memset(&d, 0, sizeof d);
    CHECK_STATUS(amq_filter_build("ribbon", h, n, 0.0, NULL, &f, &d),
                 AMQ_ERR_SPEC);
    CHECK(d.message[0] != '\0');
    CHECK_STATUS(
        amq_filter_build("ribbon:bits=6.5", h, n, 0.01, NULL, &f, NULL),
        AMQ_ERR_INVALID);
    CHECK_STATUS(amq_filter_build("ribbon:bits=40", h, n, 0.0, NULL, &f, NULL),
                 AMQ_ERR_SPEC);
    CHECK_STATUS(
        amq_filter_build("ribbon:bits=8,w=96", h, n, 0.0, NULL, &f, NULL),
        AMQ_ERR_SPEC);
    CHECK_STATUS(
        amq_filter_build("ribbon:bits=8,bump=2", h, n, 0.0, NULL, &f, NULL),
        AMQ_ERR_SPEC);
    static const char *const specs[][2] = {
        {"ribbon:bits=6.5", "ribbon:bits=6.5,w=64"},
        {"ribbon:bits=6.5,bump=1", "ribbon:bits=6.5,w=64"},
        {"ribbon:bits=9,w=128,bump=0", "ribbon:bits=9,w=128,bump=0"}};
    for (size_t i = 0; i < 3; i++) {
        CHECK_OK(amq_filter_build(specs[i][0], h, n, 0.012, NULL, &f, NULL));
        if (f != NULL) {
            char desc[64];
            amq_filter_describe(f, desc, sizeof desc);
            CHECK_MSG(strcmp(desc, specs[i][1]) == 0, "describe %s", desc);
        }
        amq_filter_free(f);
        f = NULL;
    }
    /* The curve and its inverse, at fractional points too; bumped Ribbon
     * needs fewer bits than standard for the same rate. */
    static const char *const curves[] = {
        "ribbon", "ribbon:w=128", "ribbon:bump=0", "ribbon:bump=0,w=128"};
    for (size_t c = 0; c < 4; c++)
        for (double b = 1.5; b < 30; b += 0.37) {
            double p = 0, back = 0;
            CHECK_OK(amq_curve_fpr(curves[c], b, &p));
            CHECK_OK(amq_curve_bits(curves[c], p, &back));
            CHECK_MSG(fabs(back - b) <= 1e-9 * b, "%s: %g -> %g -> %g",
                      curves[c], b, p, back);
        }
    double bumped = 0, standard = 0;
    CHECK_OK(amq_curve_bits("ribbon", 0.01, &bumped));
    CHECK_OK(amq_curve_bits("ribbon:bump=0", 0.01, &standard));
    CHECK(bumped < standard && bumped < 1.01 * 6.6875);
    free(h);
}

/* ---- frames ------------------------------------------------------------ */

static uint32_t get32(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}
static uint64_t get64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

#define PARAMS 80 /* frame offset of the type's own parameters */

/* A filter and its frame through the generic interface. */
static amq_filter *built(const char *spec, const uint64_t *h, size_t n,
                         uint8_t **fr, size_t *len) {
    amq_filter *f = NULL;
    CHECK_OK(amq_filter_build(spec, h, n, 0.0, NULL, &f, NULL));
    *fr = f != NULL ? check_frame(f, len) : NULL;
    return f;
}

/* Load and view answer as the original, and save back identically. */
static void check_copies(const amq_filter *f, const uint8_t *buf, size_t len,
                         const uint64_t *h, size_t n) {
    amq_filter *l = NULL, *v = NULL;
    CHECK_OK(amq_filter_load(buf, len, NULL, &l, NULL));
    CHECK_OK(amq_filter_view(buf, len, NULL, &v, NULL));
    if (l == NULL || v == NULL) {
        amq_filter_free(l);
        amq_filter_free(v);
        return;
    }
    size_t bad = 0, l2 = 0;
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
    bad += amq_filter_fpr_bound(l) != amq_filter_fpr_bound(f) ||
           amq_filter_fpr_bound(v) != amq_filter_fpr_bound(f);
    uint8_t *again = check_frame(v, &l2);
    bad += again == NULL || l2 != len || memcmp(again, buf, len) != 0;
    free(again);
    CHECK_MSG(bad == 0, "copies differ in %zu ways", bad);
    amq_filter_free(l);
    amq_filter_free(v);
}

static void test_frames(void) {
    check_seed = 50;
    size_t n = 4000;
    uint64_t *h = keys(n, 50);
    static const char *const specs[] = {
        "ribbon:bits=7.5,w=128", "ribbon:bits=7.5", "ribbon:bits=5.25,bump=0"};
    for (size_t i = 0; i < 3; i++) {
        size_t len;
        uint8_t *buf;
        amq_filter *f = built(specs[i], h, n, &buf, &len);
        if (f != NULL && buf != NULL)
            check_copies(f, buf, len, h, n);
        amq_filter_free(f);
        free(buf);
    }
    free(h);
}

/* ---- earlier versions ----------------------------------------------------
 * tests/golden/legacy/ribbon-v2/ holds frames saved by amq before
 * parameter version 3, from keys(n, seed) of this file:
 *   standard-w64.amq   ribbon:bits=6.25,bump=0          n = 3000, seed 55
 *   bumped-w64.amq     ribbon:bits=6.5                  n = 4000, seed 71
 *   bumped-w128.amq    ribbon:bits=7.5,w=128            n = 4000, seed 72
 *   standard-w128.amq  ribbon:bits=9.75,w=128,bump=0    n = 4000, seed 74
 * (and the golden frames of that version, which test_golden checks). */

static uint8_t *v2_frame(const char *name, size_t *len) {
    char rel[128];
    snprintf(rel, sizeof rel, "legacy/ribbon-v2/%s", name);
    return check_golden_file(rel, len);
}

/* Version-2 frames load, hold their keys, keep the version (their kernels
 * use its equations) and save back unchanged; a version-3 frame relabelled
 * as version 2 is read with version 2's equations and loses its keys. */
static void test_version2(void) {
    static const struct {
        const char *file, *spec;
        size_t n;
        uint64_t seed;
        uint32_t layers_min;
    } v2[] = {
        {"standard-w64.amq", "ribbon:bits=6.25,bump=0", 3000, 55, 1},
        {"bumped-w64.amq", "ribbon:bits=6.5", 4000, 71, 2},
        {"bumped-w128.amq", "ribbon:bits=7.5,w=128", 4000, 72, 2},
        {"standard-w128.amq", "ribbon:bits=9.75,w=128,bump=0", 4000, 74, 1}};
    for (size_t c = 0; c < 4; c++) {
        check_seed = 90 + c;
        size_t len, flen;
        uint8_t *fr = v2_frame(v2[c].file, &len);
        uint64_t *h = keys(v2[c].n, v2[c].seed);
        amq_filter *v = NULL;
        if (fr != NULL)
            CHECK_OK(amq_filter_load(fr, len, NULL, &v, NULL));
        if (v != NULL && h != NULL) {
            CHECK(get32(fr + PARAMS) == 2 &&
                  get32(fr + PARAMS + 24) >= v2[c].layers_min);
            check_copies(v, fr, len, h, v2[c].n);
            uint64_t fp = 0, trials = 200000, s = 7 + c;
            for (uint64_t i = 0; i < trials; i++)
                fp += amq_filter_contains_hash(v, check_next(&s));
            CHECK_MSG(rate_agrees(amq_filter_fpr_bound(v), fp, trials),
                      "%s: measured %g, bound %g", v2[c].file,
                      (double)fp / (double)trials, amq_filter_fpr_bound(v));
            /* the same keys now: version 3, other bytes */
            uint8_t *now;
            amq_filter *f = built(v2[c].spec, h, v2[c].n, &now, &flen);
            if (f != NULL && now != NULL) {
                CHECK(get32(now + PARAMS) == 3);
                CHECK(flen != len || memcmp(now, fr, len) != 0);
                memcpy(now + PARAMS, (const uint32_t[]){2}, 4);
                amq__frame_seal(now, flen);
                amq_filter *w = NULL;
                CHECK_OK(amq_filter_load(now, flen, NULL, &w, NULL));
                size_t miss = 0;
                for (size_t i = 0; w != NULL && i < v2[c].n; i++)
                    miss += !amq_filter_contains_hash(w, h[i]);
                CHECK_MSG(miss > v2[c].n / 2, "%s relabelled: %zu missing",
                          v2[c].file, miss);
                amq_filter_free(w);
            }
            amq_filter_free(f);
            free(now);
        }
        amq_filter_free(v);
        free(fr);
        free(h);
    }
}

/* A version-1 frame (standard Ribbon before bumping) made by hand from a
 * version-2 standard filter's layer (version 1 has version 2's
 * equations): it loads, answers alike and saves back as version 1. */
static void test_version1(void) {
    check_seed = 55;
    size_t n = 3000, len;
    uint64_t *h = keys(n, 55);
    uint8_t *fr = v2_frame("standard-w64.amq", &len);
    amq_filter *f = NULL;
    if (fr != NULL)
        CHECK_OK(amq_filter_load(fr, len, NULL, &f, NULL));
    if (f != NULL && fr != NULL) {
        const uint8_t *p = fr + PARAMS;
        CHECK(get32(p) == 2 && get32(p + 24) == 1 && get32(p + 28) == 0);
        uint8_t v1[40];
        uint64_t seed = get64(p + 48), items = get64(p + 16);
        uint64_t blocks = get64(p + 56);
        uint32_t r = get32(p + 12), upper = get32(p + 64);
        uint32_t bits64 = get32(p + 8), band = get32(p + 4);
        memcpy(v1, &seed, 8);
        memcpy(v1 + 8, &items, 8);
        memcpy(v1 + 16, &blocks, 8);
        memcpy(v1 + 24, &r, 4);
        memcpy(v1 + 28, &upper, 4);
        memcpy(v1 + 32, &bits64, 4);
        memcpy(v1 + 36, &band, 4);
        /* The frame again with 16 + 40 parameter bytes: the payload
         * moves to offset 128. */
        uint32_t plen_old = get32(fr + 48), plen = 16 + 40;
        uint64_t pay = get64(fr + 56);
        size_t from = (64 + plen_old + 63) / 64 * 64;
        size_t ng = 128 + (size_t)(pay + 7) / 8 * 8 + 8;
        uint8_t *g = aligned_alloc(64, (ng + 63) / 64 * 64);
        if (g != NULL) {
            memset(g, 0, ng);
            memcpy(g, fr, 64 + 16);
            memcpy(g + 48, &plen, 4);
            memcpy(g + PARAMS, v1, 40);
            memcpy(g + 128, fr + from, (size_t)pay);
            amq__frame_seal(g, ng);
            check_copies(f, g, ng, h, n);
            free(g);
        }
    }
    amq_filter_free(f);
    free(fr);
    free(h);
}

/* Edit a little-endian field of width w at byte `at` of the type's
 * parameters to v; the load must be refused as corrupt. */
static void refuse(const uint8_t *fr, size_t len, size_t at, unsigned w,
                   uint64_t v, const char *what) {
    uint8_t *g = malloc(len);
    if (g == NULL)
        return;
    memcpy(g, fr, len);
    memcpy(g + PARAMS + at, &v, w);
    amq__frame_seal(g, len);
    amq_filter *l = NULL;
    amq_status st = amq_filter_load(g, len, NULL, &l, NULL);
    CHECK_MSG(st == AMQ_ERR_CORRUPT, "%s = %llu: %s", what,
              (unsigned long long)v, amq_status_name(st));
    amq_filter_free(l);
    free(g);
}

static void test_corrupt(void) {
    check_seed = 60;
    size_t n = 20000, len;
    uint64_t *h = keys(n, 60);
    uint8_t *fr;
    amq_filter *f = built("ribbon:bits=6.5", h, n, &fr, &len);
    if (f == NULL || fr == NULL) {
        amq_filter_free(f);
        free(h);
        return;
    }
    const uint8_t *p = fr + PARAMS;
    uint32_t layers = get32(p + 24);
    CHECK(layers >= 2);
    CHECK(get32(p) == 3);
    refuse(fr, len, 0, 4, 0, "version");
    refuse(fr, len, 0, 4, 1, "version");
    refuse(fr, len, 0, 4, 4, "version");
    refuse(fr, len, 4, 4, 96, "band");
    refuse(fr, len, 4, 4, 0, "band");
    refuse(fr, len, 8, 4, 63, "bits64");
    refuse(fr, len, 8, 4, 2049, "bits64");
    refuse(fr, len, 12, 4, 7, "r");
    refuse(fr, len, 16, 8, 0, "items");
    refuse(fr, len, 16, 8, UINT64_C(1) << 40, "items");
    refuse(fr, len, 24, 4, layers + 1, "layers");
    refuse(fr, len, 24, 4, 0, "layers");
    refuse(fr, len, 24, 4, 9, "layers");
    refuse(fr, len, 28, 4, 0, "flags");
    refuse(fr, len, 28, 4, 3, "flags");
    refuse(fr, len, 32, 4, 100, "bucket");
    refuse(fr, len, 32, 4, 32, "bucket");
    refuse(fr, len, 32, 4, 2048, "bucket");
    refuse(fr, len, 36, 2, 40, "t1 > t2");
    refuse(fr, len, 38, 2, 129, "t2 > bucket");
    refuse(fr, len, 40, 8, 1, "reserved");
    for (uint32_t i = 0; i < layers; i++) {
        size_t at = 48 + 24 * (size_t)i;
        uint64_t blocks = get64(p + at + 8);
        refuse(fr, len, at + 8, 8, 0, "blocks");
        refuse(fr, len, at + 8, 8, 1, "blocks");
        refuse(fr, len, at + 8, 8, blocks + 1, "blocks");
        refuse(fr, len, at + 8, 8, UINT64_MAX / 2, "blocks");
        refuse(fr, len, at + 16, 4, (uint32_t)blocks + 1, "upper");
        refuse(fr, len, at + 20, 4, 1, "reserved");
    }
    /* A bit past the last bucket of layer 0's codes. */
    size_t off = len - 8 - ((get64(fr + 56) + 7) / 8 * 8);
    size_t sol = 0;
    for (uint32_t i = 0; i < layers; i++) {
        uint64_t blocks = get64(p + 48 + 24 * i + 8);
        sol += (size_t)blocks * get32(p + 12) + get32(p + 48 + 24 * i + 16);
    }
    uint64_t starts0 = get64(p + 48 + 8) * 64 - 63;
    uint64_t buckets0 = (starts0 + 127) / 128;
    size_t words0 = (size_t)(buckets0 + 31) / 32;
    if (buckets0 % 32 != 0) {
        uint8_t *g = malloc(len);
        if (g != NULL) {
            memcpy(g, fr, len);
            g[off + (sol + words0 - 1) * 8 + 7] |= 0x80;
            amq__frame_seal(g, len);
            amq_filter *l = NULL;
            CHECK_STATUS(amq_filter_load(g, len, NULL, &l, NULL),
                         AMQ_ERR_CORRUPT);
            amq_filter_free(l);
            free(g);
        }
    }
    amq_filter_free(f);
    free(fr);
    free(h);
}

/* Every parameter byte set to a few values (resealed): the load is refused
 * or gives a filter that answers and saves without fault (run under the
 * sanitizers in CI). */
static void test_param_edits(void) {
    check_seed = 70;
    size_t n = 3000, len;
    uint64_t *h = keys(n, 70);
    uint8_t *fr;
    amq_filter *f = built("ribbon:bits=3.5", h, n, &fr, &len);
    uint8_t *g = malloc(len);
    size_t loaded = 0;
    if (f != NULL && fr != NULL && g != NULL) {
        uint32_t plen = get32(fr + 48) - 16;
        static const uint8_t vals[] = {0, 1, 2, 0x3f, 0x40, 0x7f, 0x80, 0xff};
        for (size_t at = 0; at < plen; at++)
            for (size_t k = 0; k < sizeof vals; k++) {
                memcpy(g, fr, len);
                if (g[PARAMS + at] == vals[k])
                    continue;
                g[PARAMS + at] = vals[k];
                amq__frame_seal(g, len);
                amq_filter *l = NULL;
                if (amq_filter_load(g, len, NULL, &l, NULL) == AMQ_OK) {
                    uint8_t out[64];
                    amq_filter_contains_batch(l, h, 64, out);
                    (void)amq_filter_contains_hash(l, h[0]);
                    (void)amq_filter_fpr_bound(l);
                    size_t l2;
                    uint8_t *again = check_frame(l, &l2);
                    CHECK(again != NULL && l2 == len &&
                          memcmp(again, g, len) == 0);
                    free(again);
                    loaded++;
                }
                amq_filter_free(l);
            }
        /* The seeds and the key count are free fields: edits load. */
        CHECK(loaded > 0);
    }
    amq_filter_free(f);
    free(fr);
    free(g);
    free(h);
}

/* ---- adversarial keys ---------------------------------------------------
 * Keys whose layer-0 hashes are consecutive all start at the same row:
 * at most W of them can band there. The test inverts the documented key
 * mixing (x = fmix64(h + seed); layer 0's first seed is
 * fmix64(0x2545f4914f6cdd1d)) to make them. A standard layer then fails
 * its first seed and must retry (its keys are unmixed back and mixed with
 * the next seed); a bumped layer bumps them all and hands them to a last
 * standard layer. */

static uint64_t unfmix64(uint64_t x) {
    x ^= x >> 33;
    x *= 0x9cb4b2f8129337dbULL;
    x ^= x >> 33;
    x *= 0x4f74430c22a54005ULL;
    x ^= x >> 33;
    return x;
}

static uint64_t fmix64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

static void test_adversarial(void) {
    check_seed = 80;
    uint64_t seed0 = fmix64(0x2545f4914f6cdd1dULL);
    CHECK(unfmix64(fmix64(12345)) == 12345);
    static const size_t sizes[] = {100, 5000};
    for (size_t c = 0; c < 4; c++) {
        size_t n = sizes[c / 2];
        bool bump = c % 2 == 0;
        uint64_t *h = malloc(n * sizeof *h);
        if (h == NULL)
            continue;
        for (size_t i = 0; i < n; i++)
            h[i] = unfmix64(0x8000000000000000ULL + i * 7) - seed0;
        amq_filter *f = NULL;
        CHECK_OK(build(h, n, 7, 64, bump, NULL, &f));
        if (f != NULL) {
            CHECK_MSG(missing(f, h, n) == 0 && amq_filter_items(f) == n,
                      "n=%zu bump=%d: %llu missing", n, bump,
                      (unsigned long long)missing(f, h, n));
            CHECK(layers(f) == (bump && n > 1024 ? 2u : 1u));
            uint64_t fp = false_positives(f, c, 200000);
            CHECK(rate_agrees(amq_filter_fpr_bound(f), fp, 200000));
        }
        amq_filter_free(f);
        free(h);
    }
}

int main(void) {
    size_t big = check_quick() ? 20000 : 200000;
    uint64_t trials = check_quick() ? 200000 : 1000000;
    test_overhead();
    test_rate(8, 64, true, big, trials);
    test_rate(6.5, 64, true, big, trials);
    test_rate(7.25, 128, true, big, trials);
    test_rate(6.5, 128, true, big, trials);
    test_rate(8, 64, false, big, trials);
    test_rate(6.5, 128, false, big, trials);
    test_rate(3, 64, true, 1000, trials / 4);
    test_rate(10.75, 128, false, 3000, trials);
    test_rate(1.5, 64, true, 50000, trials / 4);
    test_batch(8, 64, true, 7000);
    test_batch(6.5, 64, true, 7000);
    test_batch(31.5, 64, true, 7000);
    test_batch(8, 128, true, 7000);
    test_batch(13.25, 128, true, 7000);
    test_batch(6.5, 64, false, 7000);
    test_batch(9.75, 128, false, 7000);
    test_batch(4.5, 64, true, 60000);
    test_small();
    test_layers();
    test_spec();
    test_frames();
    test_version1();
    test_version2();
    test_corrupt();
    test_param_edits();
    test_adversarial();
    return check_report("test_ribbon");
}
