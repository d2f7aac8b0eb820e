/*
 * test_scalable.c — the scalable Bloom filter through 1000x growth.
 *
 * From n_0 = 1000 to 10^6 keys (10^5 under AMQ_TEST_QUICK): after every
 * stage the design targets sum to less than eps, the certified bound
 * 1 - prod(1 - b_i) stays below eps (plus 5% for the integer k and the
 * rounding of slices), no key is ever missed, and the measured FPR is below
 * the bound. Then the caps: max_stages and max_bytes refuse with
 * AMQ_ERR_FULL and leave the frame byte-for-byte unchanged. Then union of
 * filters with different stage counts, and refusal of other configurations.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static double measure(const amq_filter *f, uint64_t seed, size_t t) {
    uint64_t r = seed;
    size_t fp = 0;
    for (size_t i = 0; i < t; i++)
        fp += amq_filter_contains_hash(f, check_next(&r));
    return (double)fp / (double)t;
}

static size_t missing(const amq_filter *f, uint64_t seed, size_t n) {
    uint64_t r = seed;
    size_t miss = 0;
    for (size_t i = 0; i < n; i++)
        miss += !amq_filter_contains_hash(f, check_next(&r));
    return miss;
}

/* Stages opened so far (0 if f is not a scalable filter). */
static unsigned stages_of(const amq_filter *f) {
    const amq_scalable *s = amq_scalable_of(f);
    return s != NULL ? amq_scalable_stages(s) : 0;
}

static void growth_case(unsigned growth, double ratio, double eps,
                        size_t full_n) {
    char spec[128];
    amq_filter *f = NULL;
    size_t n = check_quick() ? full_n / 10 : full_n;
    size_t t = check_quick() ? 100000 : 400000;
    check_seed = 1000 * growth + (uint64_t)(ratio * 100);
    snprintf(spec, sizeof spec, "scalable:growth=%u,ratio=%g", growth, ratio);
    CHECK_OK(amq_filter_new(spec, 1000, eps, NULL, &f, NULL));
    const amq_scalable *s = amq_scalable_of(f);
    if (s == NULL) {
        amq_filter_free(f);
        return;
    }
    uint64_t r = check_seed;
    unsigned stages = 1;
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        amq_status st = amq_filter_add_hash(f, check_next(&r));
        if (st != AMQ_OK) {
            CHECK_OK(st);
            break;
        }
        if (amq_scalable_stages(s) != stages || i + 1 == n) {
            stages = amq_scalable_stages(s);
            double sum = amq_scalable_target_sum(s);
            double bound = amq_filter_fpr_bound(f);
            CHECK_MSG(sum < eps, "g=%u r=%g: targets sum to %g >= %g", growth,
                      ratio, sum, eps);
            CHECK_MSG(bound <= eps * 1.05,
                      "g=%u r=%g, %zu keys, %u stages: "
                      "bound %g > eps %g",
                      growth, ratio, i + 1, stages, bound, eps);
            if (bound > worst)
                worst = bound;
        }
    }
    CHECK(amq_filter_items(f) == n);
    CHECK_MSG(missing(f, check_seed, n) == 0, "false negatives");
    double m = measure(f, ~check_seed, t);
    double bound = amq_filter_fpr_bound(f);
    double sigma = sqrt(bound * (1 - bound) / (double)t);
    CHECK_MSG(m <= bound * 1.02 + 4 * sigma + 3.0 / (double)t,
              "measured %g > bound %g", m, bound);
    /* the stage count the geometry predicts: n_0 (g^S - 1)/(g - 1) >= n */
    double cover = 0.0, nk = 1000.0;
    unsigned want = 0;
    while (cover < (double)n) {
        cover += nk;
        nk *= growth;
        want++;
    }
    CHECK_MSG(amq_scalable_stages(s) == want, "%u stages, expected %u",
              amq_scalable_stages(s), want);
    printf("scalable g=%u r=%.2f eps=%g: %zu keys, %u stages, %.2f bits/key, "
           "bound %.3g (worst %.3g), measured %.3g\n",
           growth, ratio, eps, n, amq_scalable_stages(s),
           8.0 * (double)amq_filter_size_bytes(f) / (double)n, bound, worst, m);
    amq_filter_free(f);
}

static uint8_t *frame_of(const amq_filter *f, size_t *len) {
    size_t need = amq_filter_serialized_size(f);
    uint8_t *buf = malloc(need);
    *len = 0;
    if (buf != NULL && amq_filter_save(f, buf, need, len) != AMQ_OK) {
        free(buf);
        buf = NULL;
    }
    return buf;
}

/* Fill until the first refusal; it must be FULL and change nothing. */
static void cap_case(const char *spec, unsigned want_stages) {
    amq_filter *f = NULL;
    check_seed = 7;
    CHECK_OK(amq_filter_new(spec, 0, 0.0, NULL, &f, NULL));
    if (f == NULL)
        return;
    amq_status st = AMQ_OK;
    uint64_t i = 0, r = 7, expect = 1000ull * ((1ull << want_stages) - 1);
    for (; i < 1000000 && st == AMQ_OK; i++) {
        size_t before_len = 0, after_len = 0;
        uint8_t *before = NULL, *after = NULL;
        uint64_t h = check_next(&r);
        bool probe = i % 97 == 0 || amq_filter_items(f) >= expect;
        if (probe)
            before = frame_of(f, &before_len);
        st = amq_filter_add_hash(f, h);
        if (st != AMQ_OK) {
            CHECK_STATUS(st, AMQ_ERR_FULL);
            after = frame_of(f, &after_len);
            CHECK_MSG(before != NULL && after != NULL &&
                          before_len == after_len &&
                          memcmp(before, after, before_len) == 0,
                      "%s: a refused add changed the filter", spec);
        }
        free(before);
        free(after);
    }
    CHECK_MSG(amq_filter_items(f) == i - 1, "%s: items %llu after %llu adds",
              spec, (unsigned long long)amq_filter_items(f),
              (unsigned long long)(i - 1));
    char buf[256];
    amq_filter_describe(f, buf, sizeof buf);
    /* stages = items / n0 geometry: 1000, 2000, 4000 */
    CHECK_MSG(amq_filter_items(f) == expect, "%.100s: refused after %llu keys",
              buf, (unsigned long long)amq_filter_items(f));
    CHECK_STATUS(amq_filter_add_hash(f, 42), AMQ_ERR_FULL);
    amq_filter_free(f);
}

static void test_caps(void) {
    cap_case("scalable:n0=1000,eps=0.01,max_stages=3", 3);
    /* stage bytes at eps/2, /4, /8: ~1.3, 2.9, 6.2 KB; 6000 bytes allows
     * two stages. */
    cap_case("scalable:n0=1000,eps=0.01,max_bytes=6000", 2);
    amq_filter *f = NULL;
    amq_diag d;
    memset(&d, 0, sizeof d);
    CHECK_STATUS(amq_filter_new("scalable:n0=1000,eps=0.01,max_bytes=100", 0,
                                0.0, NULL, &f, &d),
                 AMQ_ERR_SPEC);
    CHECK(d.message[0] != '\0');
    /* 64 hashes are the limit: eps_i shrinks by 0.01 per stage */
    CHECK_OK(amq_filter_new("scalable:n0=1,eps=0.01,ratio=0.01,growth=1", 0,
                            0.0, NULL, &f, NULL));
    if (f != NULL) {
        amq_status st = AMQ_OK;
        uint64_t i = 0;
        for (; i < 100 && st == AMQ_OK; i++)
            st = amq_filter_add_hash(f, i * 0x9e3779b97f4a7c15ULL);
        CHECK_STATUS(st, AMQ_ERR_FULL);
        CHECK(i < 100);
    }
    amq_filter_free(f);
}

static void test_union(void) {
    amq_filter *a = NULL, *b = NULL, *o = NULL;
    check_seed = 9;
    CHECK_OK(amq_filter_new("scalable", 500, 0.01, NULL, &a, NULL));
    CHECK_OK(amq_filter_new("scalable", 500, 0.01, NULL, &b, NULL));
    CHECK_OK(amq_filter_new("scalable:ratio=0.8", 500, 0.01, NULL, &o, NULL));
    if (!a || !b || !o)
        goto out;
    uint64_t r = 9;
    for (int i = 0; i < 600; i++)
        CHECK_OK(amq_filter_add_hash(a, check_next(&r)));
    for (int i = 0; i < 5000; i++)
        CHECK_OK(amq_filter_add_hash(b, check_next(&r)));
    CHECK(stages_of(a) == 2 && stages_of(b) == 4);
    CHECK_OK(amq_filter_union(a, b));
    CHECK(stages_of(a) == 4 && amq_filter_items(a) == 5600);
    CHECK(amq_filter_size_bytes(a) == amq_filter_size_bytes(b));
    CHECK(missing(a, 9, 5600) == 0);
    CHECK(amq_filter_fpr_bound(a) >= amq_filter_fpr_bound(b));
    CHECK_STATUS(amq_filter_union(a, o), AMQ_ERR_INCOMPATIBLE);
    /* the union keeps growing */
    for (int i = 0; i < 3000; i++)
        CHECK_OK(amq_filter_add_hash(a, check_next(&r)));
    CHECK(missing(a, 9, 8600) == 0);
out:
    amq_filter_free(a);
    amq_filter_free(b);
    amq_filter_free(o);
}

/* Out-of-range configurations are refused, through the spec keys or the
 * target. */
static void test_config(void) {
    amq_filter *f = NULL;
    CHECK_STATUS(amq_filter_new("scalable", 0, 0.01, NULL, &f, NULL),
                 AMQ_ERR_INVALID);
    CHECK_STATUS(
        amq_filter_new("scalable:n0=0,eps=0.01", 0, 0.0, NULL, &f, NULL),
        AMQ_ERR_SPEC);
    CHECK_STATUS(amq_filter_new("scalable:ratio=1", 10, 0.01, NULL, &f, NULL),
                 AMQ_ERR_SPEC);
    CHECK_STATUS(amq_filter_new("scalable:growth=17", 10, 0.01, NULL, &f, NULL),
                 AMQ_ERR_SPEC);
    CHECK_STATUS(
        amq_filter_new("scalable:max_stages=65", 10, 0.01, NULL, &f, NULL),
        AMQ_ERR_SPEC);
    CHECK_STATUS(amq_filter_new("scalable", 10, 0.01, NULL, NULL, NULL),
                 AMQ_ERR_INVALID);
    CHECK(f == NULL);
    amq_filter_free(NULL);
    CHECK(amq_scalable_of(NULL) == NULL);
    char buf[256];
    CHECK_OK(amq_filter_new("scalable:growth=4,ratio=0.9", 100, 0.001, NULL, &f,
                            NULL));
    if (f != NULL) {
        amq_filter_describe(f, buf, sizeof buf);
        CHECK_MSG(strcmp(buf, "scalable:n0=100,eps=0.001,growth=4,"
                              "ratio=0.9,max_stages=64,"
                              "max_bytes=0") == 0,
                  "%s", buf);
    }
    amq_filter_free(f);
}

int main(void) {
    growth_case(2, 0.5, 0.01, 1000000);
    growth_case(2, 0.5, 0.001, 1000000);
    growth_case(4, 0.9, 0.01, 1000000);
    growth_case(1, 0.5, 0.01, 50000); /* 50 equal stages */
    test_caps();
    test_union();
    test_config();
    return check_report("test_scalable");
}
