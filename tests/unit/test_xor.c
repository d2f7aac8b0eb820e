/*
 * test_xor.c — xor filters through the typed API (amq/static.h): every
 * width, the exact space formula, the 2^-w rate, batch == scalar, n = 0,
 * duplicates, argument checks, and the peeling state the header promises.
 * The contract suite covers the generic interface (xor8/16/32).
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

static uint64_t missing(const amq_xor *f, const uint64_t *h, size_t n) {
    uint64_t miss = 0;
    for (size_t i = 0; i < n; i++)
        miss += !amq_xor_contains_hash(f, h[i]);
    return miss;
}

/* Space: 3 ceil((1.23 n + 32) / 3) slots of w bits (Graf & Lemire's
 * capacity), unless a failed attempt grew the table. */
static void test_space_and_rate(unsigned width, size_t n, uint64_t seed) {
    check_seed = seed;
    uint64_t *h = keys(n, seed);
    amq_xor *f = NULL;
    CHECK_OK(amq_xor_build(h, n, width, NULL, &f));
    if (f == NULL) {
        free(h);
        return;
    }
    CHECK(amq_xor_width(f) == width && amq_xor_ways(f) == 3);
    CHECK(amq_xor_items(f) == n);
    CHECK_MSG(missing(f, h, n) == 0, "xor%u n=%zu: false negatives", width,
              n);
    double slots = 3 * ceil((1.23 * (double)n + 32) / 3);
    double bpk = 8.0 * (double)amq_xor_size_bytes(f) / (double)n;
    CHECK_MSG(bpk >= slots * width / (double)n - 1e-9 &&
                  bpk <= 1.15 * slots * width / (double)n,
              "xor%u n=%zu: %g bits/key, formula %g", width, n, bpk,
              slots * width / (double)n);
    if (n >= 1000000)
        CHECK_MSG(bpk <= 1.23 * width + 32.0 * width / (double)n + 0.01,
                  "xor%u: %g bits/key", width, bpk);
    double bound = amq_xor_fpr_bound(f);
    CHECK(bound == ldexp(1.0, -(int)width));
    if (width <= 16) {
        uint64_t trials = width == 8 ? 400000 : 2000000, fp = 0, s = seed ^ 1;
        for (uint64_t i = 0; i < trials; i++)
            fp += amq_xor_contains_hash(f, check_next(&s));
        double p = (double)fp / (double)trials;
        double sd = sqrt(bound * (1 - bound) / (double)trials);
        CHECK_MSG(fabs(p - bound) <= 4 * sd + 3.0 / (double)trials,
                  "xor%u n=%zu: measured %g, exact %g", width, n, p, bound);
    }
    amq_xor_free(f);
    free(h);
}

static void test_batch(void) {
    check_seed = 3;
    for (unsigned width = 8; width <= 32; width *= 2) {
        size_t n = 3000, m = 10000;
        uint64_t *h = keys(n, 3), *q = keys(m, 4);
        uint8_t *a = malloc(m + 8), *b = malloc(m + 8);
        amq_xor *f = NULL;
        CHECK_OK(amq_xor_build(h, n, width, NULL, &f));
        if (f == NULL || a == NULL || b == NULL || q == NULL) {
            free(h), free(q), free(a), free(b);
            amq_xor_free(f);
            continue;
        }
        for (size_t i = 0; i < m; i += 3)
            q[i] = h[i % n]; /* a third present */
        for (size_t i = 0; i < m; i++)
            a[i] = amq_xor_contains_hash(f, q[i]);
        size_t bad = 0;
        for (size_t len = 0; len <= 70; len++) {
            memset(b, 0xCC, len + 8);
            amq_xor_contains_batch(f, q + len, len, b);
            for (size_t i = 0; i < len; i++)
                bad += b[i] != a[len + i];
            for (size_t i = len; i < len + 8; i++)
                bad += b[i] != 0xCC;
        }
        amq_xor_contains_batch(f, q, m, b);
        for (size_t i = 0; i < m; i++)
            bad += b[i] != a[i];
        CHECK_MSG(bad == 0, "xor%u: batch differs from scalar on %zu", width,
                  bad);
        amq_xor_free(f);
        free(h), free(q), free(a), free(b);
    }
}

static void test_edges(void) {
    check_seed = 5;
    amq_xor *f = NULL;
    /* n = 0: no table, answers false, bound 0. */
    CHECK_OK(amq_xor_build(NULL, 0, 8, NULL, &f));
    if (f != NULL) {
        uint64_t s = 5, fp = 0;
        uint8_t out[64];
        uint64_t q[64];
        for (int i = 0; i < 10000; i++)
            fp += amq_xor_contains_hash(f, check_next(&s));
        for (int i = 0; i < 64; i++)
            q[i] = check_next(&s);
        amq_xor_contains_batch(f, q, 64, out);
        for (int i = 0; i < 64; i++)
            fp += out[i];
        CHECK(fp == 0 && amq_xor_items(f) == 0 &&
              amq_xor_size_bytes(f) == 0 && amq_xor_fpr_bound(f) == 0.0);
    }
    amq_xor_free(f);
    /* Every n up to 300, with duplicates in every third build: never
     * fails, never misses, items = distinct keys. */
    size_t fails = 0, miss = 0, wrong_items = 0;
    for (size_t n = 1; n <= 300; n++) {
        uint64_t *h = keys(n, n);
        size_t distinct = n;
        if (n % 3 == 0)
            for (size_t i = 1; i < n; i += 2, distinct--)
                h[i] = h[i - 1];
        f = NULL;
        if (amq_xor_build(h, n, 8, NULL, &f) != AMQ_OK) {
            fails++;
        } else {
            miss += missing(f, h, n);
            wrong_items += amq_xor_items(f) != distinct;
        }
        amq_xor_free(f);
        free(h);
    }
    CHECK_MSG(fails == 0 && miss == 0 && wrong_items == 0,
              "small n: %zu failed builds, %zu misses, %zu wrong counts",
              fails, miss, wrong_items);
    /* All keys equal. */
    uint64_t same[1000];
    for (size_t i = 0; i < 1000; i++)
        same[i] = 0xabcdef;
    f = NULL;
    CHECK_OK(amq_xor_build(same, 1000, 16, NULL, &f));
    CHECK(f != NULL && amq_xor_items(f) == 1 &&
          amq_xor_contains_hash(f, 0xabcdef));
    amq_xor_free(f);
    /* Arguments. */
    uint64_t one = 1;
    f = NULL;
    CHECK_STATUS(amq_xor_build(&one, 1, 12, NULL, &f), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_xor_build(NULL, 1, 8, NULL, &f), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_xor_build(&one, 1, 8, NULL, NULL), AMQ_ERR_INVALID);
    CHECK(f == NULL);
    amq_xor_free(NULL);
    /* Construction memory: peeling state of ~16-20 bytes per slot plus
     * 20 per key. */
    size_t mem = amq_xor_build_memory(1000000, 8, 0);
    CHECK_MSG(mem >= 1230000u * 16 && mem <= 1230000u * 24 + 1000000u * 24,
              "build memory %zu", mem);
}

/* Builds are deterministic: same keys, same filter (via the frame). */
static void test_deterministic(void) {
    check_seed = 6;
    size_t n = 5000;
    uint64_t *h = keys(n, 6);
    amq_filter *a = NULL, *b = NULL;
    CHECK_OK(amq_filter_build("xor16", h, n, 0.0, NULL, &a, NULL));
    CHECK_OK(amq_filter_build("xor16", h, n, 0.0, NULL, &b, NULL));
    if (a != NULL && b != NULL) {
        size_t la = amq_filter_serialized_size(a), lb;
        uint8_t *fa = malloc(la), *fb = malloc(la);
        CHECK_OK(amq_filter_save(a, fa, la, NULL));
        CHECK_OK(amq_filter_save(b, fb, la, &lb));
        CHECK(lb == la && memcmp(fa, fb, la) == 0);
        free(fa);
        free(fb);
    }
    amq_filter_free(a);
    amq_filter_free(b);
    free(h);
}

int main(void) {
    size_t big = check_quick() ? 100000 : 1000000;
    for (unsigned width = 8; width <= 32; width *= 2) {
        test_space_and_rate(width, 1000, width);
        test_space_and_rate(width, big, width + 1);
    }
    test_batch();
    test_edges();
    test_deterministic();
    return check_report("test_xor");
}
