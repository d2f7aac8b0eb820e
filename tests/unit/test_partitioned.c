/*
 * test_partitioned.c — the partitioned Bloom filter against its mathematics
 * and against a classic filter built from the same keys.
 *
 * One probe per slice: a single key sets exactly one bit in every slice, so
 * the certified bound after one add is (1/s)^k exactly. The measured FPR
 * follows (1 - (1 - 1/s)^n)^k within 5% + 3 sigma, and stays below the
 * fill-based bound. Union and intersection are bitwise and exact: the union
 * of filters of A and B answers exactly like one filter of A u B.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static void fill(amq_filter *f, uint64_t seed, size_t from, size_t to) {
    uint64_t s = seed;
    for (size_t i = 0; i < to; i++) {
        uint64_t h = check_next(&s);
        if (i >= from)
            CHECK_OK(amq_filter_add_hash(f, h));
    }
}

static size_t missing(const amq_filter *f, uint64_t seed, size_t from,
                      size_t to) {
    uint64_t s = seed;
    size_t miss = 0;
    for (size_t i = 0; i < to; i++) {
        uint64_t h = check_next(&s);
        if (i >= from)
            miss += !amq_filter_contains_hash(f, h);
    }
    return miss;
}

static double measure(const amq_filter *f, uint64_t seed, size_t t) {
    uint64_t s = seed;
    size_t fp = 0;
    for (size_t i = 0; i < t; i++)
        fp += amq_filter_contains_hash(f, check_next(&s));
    return (double)fp / (double)t;
}

/* "partitioned" sized for (n, eps). */
static amq_filter *sized(uint64_t n, double eps) {
    amq_filter *f = NULL;
    CHECK_OK(amq_filter_new("partitioned", n, eps, NULL, &f, NULL));
    return f;
}

static void test_one_bit_per_slice(void) {
    amq_filter *f = NULL;
    check_seed = 1;
    CHECK_OK(amq_filter_new("partitioned:m=320,k=5", 0, 0.0, NULL, &f, NULL));
    const amq_partitioned *p = amq_partitioned_of(f);
    CHECK(p != NULL);
    if (p == NULL) {
        amq_filter_free(f);
        return;
    }
    CHECK(amq_partitioned_bits(p) == 320 && amq_partitioned_k(p) == 5);
    CHECK(amq_filter_fpr_bound(f) == 0.0);
    CHECK_OK(amq_filter_add_hash(f, 0x1234567890abcdefULL));
    /* exactly one bit in each of the five 64-bit slices */
    CHECK_MSG(fabs(amq_filter_fpr_bound(f) - pow(1.0 / 64, 5)) < 1e-20,
              "bound %g", amq_filter_fpr_bound(f));
    /* idempotent bits */
    CHECK_OK(amq_filter_add_hash(f, 0x1234567890abcdefULL));
    CHECK(fabs(amq_filter_fpr_bound(f) - pow(1.0 / 64, 5)) < 1e-20);
    CHECK(amq_filter_items(f) == 2);
    amq_filter_free(f);
    amq_filter_free(NULL);
    CHECK(amq_partitioned_of(NULL) == NULL);
    f = NULL;
    CHECK_STATUS(amq_filter_new("partitioned:m=64,k=0", 0, 0.0, NULL, &f, NULL),
                 AMQ_ERR_SPEC);
    CHECK_STATUS(
        amq_filter_new("partitioned:m=64,k=65", 0, 0.0, NULL, &f, NULL),
        AMQ_ERR_SPEC);
    CHECK_STATUS(amq_filter_new("partitioned", 0, 0.01, NULL, &f, NULL),
                 AMQ_ERR_INVALID);
    CHECK_STATUS(amq_filter_new("partitioned", 10, 1.0, NULL, &f, NULL),
                 AMQ_ERR_INVALID);
    CHECK(f == NULL);
}

static void test_fpr(void) {
    static const double eps[] = {0.01, 0.001};
    size_t n = check_quick() ? 50000 : 500000,
           t = check_quick() ? 200000 : 2000000;
    for (size_t e = 0; e < 2; e++) {
        check_seed = 10 + e;
        amq_filter *f = sized(n, eps[e]);
        const amq_partitioned *p = amq_partitioned_of(f);
        if (p == NULL) {
            amq_filter_free(f);
            return;
        }
        fill(f, check_seed, 0, n);
        CHECK(missing(f, check_seed, 0, n) == 0);
        double m = measure(f, ~check_seed, t);
        double theory = amq_partitioned_fpr((double)amq_partitioned_bits(p),
                                            (double)n, amq_partitioned_k(p));
        double bound = amq_filter_fpr_bound(f);
        double sigma = sqrt(theory * (1 - theory) / (double)t);
        CHECK_MSG(fabs(m - theory) <= 0.05 * theory + 3 * sigma,
                  "eps %g: measured %g theory %g", eps[e], m, theory);
        CHECK_MSG(m <= bound + 4 * sigma, "measured %g bound %g", m, bound);
        CHECK_MSG(theory <= eps[e] * 1.01, "theory %g misses %g", theory,
                  eps[e]);
        /* partitioned is a hair worse than classic at the same size */
        double classic = amq_bloom_fpr((double)amq_partitioned_bits(p),
                                       (double)n, amq_partitioned_k(p));
        CHECK(theory >= classic && theory <= classic * 1.01);
        double est = 0.0;
        CHECK_OK(amq_filter_estimate_items(f, &est));
        CHECK_MSG(fabs(est / (double)n - 1) < 0.02, "estimate %g", est);
        amq_filter_free(f);
    }
}

/* Tiny filters: the bound is exact for this filter, also at n = 1. */
static void test_small(void) {
    size_t t = check_quick() ? 100000 : 1000000;
    double measured = 0, bound = 0;
    int reps = 20;
    for (int r = 0; r < reps; r++) {
        check_seed = 100 + (uint64_t)r;
        amq_filter *f = sized(3, 0.05);
        if (f == NULL)
            return;
        fill(f, check_seed, 0, 3);
        measured += measure(f, ~check_seed, t);
        bound += amq_filter_fpr_bound(f);
        amq_filter_free(f);
    }
    measured /= reps;
    bound /= reps;
    double sigma = sqrt(bound / ((double)t * reps));
    CHECK_MSG(fabs(measured - bound) <= 0.05 * bound + 4 * sigma,
              "measured %g vs mean bound %g", measured, bound);
}

static void test_merge(void) {
    const size_t n = 20000;
    check_seed = 30;
    amq_filter *a = sized(2 * n, 0.01), *b = sized(2 * n, 0.01);
    amq_filter *all = sized(2 * n, 0.01), *x = sized(2 * n, 0.01);
    amq_filter *other = sized(3 * n, 0.01);
    if (!a || !b || !all || !x || !other)
        goto out;
    fill(a, 30, 0, n);         /* A = [0, n)       */
    fill(b, 30, n / 2, 2 * n); /* B = [n/2, 2n)    */
    fill(all, 30, 0, 2 * n);
    fill(x, 30, 0, n);
    CHECK_OK(amq_filter_union(a, b));
    CHECK_OK(amq_filter_intersect(x, b));
    CHECK(missing(x, 30, n / 2, n) == 0);
    uint64_t s = 31;
    size_t differ = 0, law = 0;
    for (size_t i = 0; i < 200000; i++) {
        uint64_t h = check_next(&s);
        differ +=
            amq_filter_contains_hash(a, h) != amq_filter_contains_hash(all, h);
        law +=
            amq_filter_contains_hash(x, h) && !amq_filter_contains_hash(b, h);
    }
    CHECK_MSG(differ == 0, "union differs from the filter of A u B on %zu",
              differ);
    CHECK(law == 0);
    CHECK(amq_filter_fpr_bound(a) == amq_filter_fpr_bound(all));
    CHECK_STATUS(amq_filter_union(a, other), AMQ_ERR_INCOMPATIBLE);
    CHECK_STATUS(amq_filter_intersect(a, other), AMQ_ERR_INCOMPATIBLE);
out:
    amq_filter_free(a);
    amq_filter_free(b);
    amq_filter_free(all);
    amq_filter_free(x);
    amq_filter_free(other);
}

static void test_batch(void) {
    enum { N = 1003 };
    uint64_t h[N], s = 40;
    uint8_t out[N];
    check_seed = 40;
    amq_filter *f = sized(400, 0.05);
    if (f == NULL)
        return;
    fill(f, 40, 0, 400);
    for (size_t i = 0; i < N; i++)
        h[i] = i % 2 ? check_next(&s) : h[i / 4];
    s = 40;
    for (size_t i = 0; i < 300; i++)
        h[3 * i] = check_next(&s); /* a third present */
    amq_filter_contains_batch(f, h, N, out);
    size_t bad = 0, pos = 0;
    for (size_t i = 0; i < N; i++) {
        bad += out[i] != (uint8_t)amq_filter_contains_hash(f, h[i]);
        pos += out[i];
    }
    CHECK(bad == 0 && pos >= 300);
    amq_filter_free(f);
}

/* Through the generic interface: spec parameters and describe. */
static void test_generic(void) {
    amq_filter *f = NULL;
    char buf[128];
    check_seed = 50;
    CHECK_OK(amq_filter_new("partitioned:k=4,m=1000", 0, 0.0, NULL, &f, NULL));
    if (f == NULL)
        return;
    amq_filter_describe(f, buf, sizeof buf);
    CHECK_MSG(strcmp(buf, "partitioned:m=1024,k=4") == 0, "%s", buf);
    CHECK(amq_filter_size_bytes(f) == 128);
    amq_filter_free(f);
    CHECK_OK(amq_filter_new("partitioned:k=3", 1000, 0.01, NULL, &f, NULL));
    if (f != NULL) {
        amq_filter_describe(f, buf, sizeof buf);
        CHECK_MSG(strstr(buf, ",k=3") != NULL, "%s", buf);
    }
    amq_filter_free(f);
}

int main(void) {
    test_one_bit_per_slice();
    test_fpr();
    test_small();
    test_merge();
    test_batch();
    test_generic();
    return check_report("test_partitioned");
}
