/*
 * test_countmin.c — the Count-Min sketch against an exact model (a plain
 * array of true counts): never an undercount, overcount within eps·N with
 * probability 1 - delta (over seeds), conservative <= standard, merges,
 * saturation instead of wrap-around, the membership bound, the curve, spec
 * forms, batch = scalar, and frames with 8/16/32-bit counters.
 * The generic contract (FPR, frames, OOM) runs in test_contract/test_oom.
 */
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "amq/sketch.h"
#include "core/frame.h"

enum { U = 4000 }; /* distinct keys in a stream */

static uint32_t truth[U];

static uint64_t key_hash(uint64_t seed, uint64_t i) {
    uint64_t s = seed * 0x100000001b3ULL + i;
    return check_next(&s);
}

/* A skewed stream: index = floor(U * u^3), so small indices are hot. */
static uint64_t draw(uint64_t *rng) {
    double u = (double)(check_next(rng) >> 11) * 0x1p-53;
    return (uint64_t)((double)U * u * u * u);
}

static amq_cms *make(uint64_t w, unsigned d, unsigned bits, bool cons) {
    amq_cms *c = NULL;
    CHECK_OK(amq_cms_new(w, d, bits, cons, NULL, &c));
    return c;
}

/* Feed n draws (increments of 1..4) into every sketch given, and truth. */
static uint64_t feed(amq_cms **cs, size_t ncs, uint64_t seed, uint64_t n) {
    uint64_t rng = seed * 7 + 1, total = 0;
    for (uint64_t j = 0; j < n; j++) {
        uint64_t i = draw(&rng), by = 1 + (check_next(&rng) & 3);
        truth[i] += (uint32_t)by;
        total += by;
        for (size_t s = 0; s < ncs; s++)
            amq_cms_incr(cs[s], key_hash(seed, i), by);
    }
    return total;
}

/* eps = delta = 0.01: w = 272, d = 5. Per key, P(est > f + eps N) <= delta;
 * summed over keys and seeds the count of violations must stay below
 * delta·keys plus 4 sigma (keys within a seed are positively dependent,
 * which Markov's bound — loose by orders of magnitude here — absorbs). */
static void test_error_bound(void) {
    const double eps = 0.01, delta = 0.01;
    unsigned seeds = check_quick() ? 4 : 12;
    uint64_t n = check_quick() ? 20000 : 60000;
    uint64_t under = 0, over_c = 0, over_s = 0, above = 0, keys = 0;
    for (unsigned s = 1; s <= seeds; s++) {
        check_seed = s;
        amq_cms *cs[2] = {NULL, NULL};
        CHECK_OK(amq_cms_new_error(eps, delta, 32, true, NULL, &cs[0]));
        CHECK_OK(amq_cms_new_error(eps, delta, 32, false, NULL, &cs[1]));
        if (cs[0] == NULL || cs[1] == NULL)
            return;
        CHECK(amq_cms_width(cs[0]) == 272 && amq_cms_depth(cs[0]) == 5);
        memset(truth, 0, sizeof truth);
        uint64_t total = feed(cs, 2, s, n);
        CHECK(amq_cms_total(cs[0]) == total && amq_cms_total(cs[1]) == total);
        double slack = eps * (double)total;
        for (uint64_t i = 0; i < U; i++) {
            uint64_t h = key_hash(s, i);
            uint64_t ec = amq_cms_query(cs[0], h), es = amq_cms_query(cs[1], h);
            under += ec < truth[i] || es < truth[i];
            above += ec > es; /* conservative never above standard */
            over_c += (double)ec > truth[i] + slack;
            over_s += (double)es > truth[i] + slack;
            keys++;
        }
        amq_cms_free(cs[0]);
        amq_cms_free(cs[1]);
    }
    double limit = delta * (double)keys + 4 * sqrt(delta * (double)keys) + 3;
    CHECK_MSG(under == 0, "%llu undercounts", (unsigned long long)under);
    CHECK_MSG(above == 0, "conservative above standard on %llu keys",
              (unsigned long long)above);
    CHECK_MSG((double)over_s <= limit && (double)over_c <= limit,
              "over eps*N: standard %llu, conservative %llu of %llu keys",
              (unsigned long long)over_s, (unsigned long long)over_c,
              (unsigned long long)keys);
}

/* A merge of two conservative sketches never undercounts the union of the
 * streams, and is never above a standard sketch fed both streams. */
static void test_merge(void) {
    check_seed = 21;
    static uint32_t ta[U];
    amq_cms *a = make(300, 4, 32, true), *b = make(300, 4, 32, true);
    amq_cms *s = make(300, 4, 32, false);
    if (a == NULL || b == NULL || s == NULL)
        goto out;
    memset(truth, 0, sizeof truth);
    amq_cms *as[2] = {a, s}, *bs[2] = {b, s};
    uint64_t na = feed(as, 2, 21, 20000);
    memcpy(ta, truth, sizeof ta);
    uint64_t nb = feed(bs, 2, 21, 15000); /* same keys: they overlap */
    CHECK_OK(amq_cms_merge(a, b));
    CHECK(amq_cms_total(a) == na + nb);
    uint64_t under = 0, above = 0, over = 0;
    for (uint64_t i = 0; i < U; i++) {
        uint64_t h = key_hash(21, i), e = amq_cms_query(a, h);
        under += e < truth[i];
        above += e > amq_cms_query(s, h);
        over += (double)e > truth[i] + amq_cms_epsilon(a) * (double)(na + nb);
    }
    CHECK_MSG(under == 0, "merged sketch undercounts %llu keys",
              (unsigned long long)under);
    CHECK_MSG(above == 0, "merged above standard on %llu keys",
              (unsigned long long)above);
    CHECK_MSG((double)over <= amq_cms_delta(a) * U + 4 * sqrt(U * 0.02) + 3,
              "%llu keys over eps*N", (unsigned long long)over);

    /* Shapes must match; a refused merge changes nothing. */
    amq_cms *w = make(301, 4, 32, true), *d = make(300, 5, 32, true);
    amq_cms *bits = make(300, 4, 16, true);
    uint64_t h0 = key_hash(21, 0), before = amq_cms_query(a, h0);
    CHECK_STATUS(amq_cms_merge(a, w), AMQ_ERR_INCOMPATIBLE);
    CHECK_STATUS(amq_cms_merge(a, d), AMQ_ERR_INCOMPATIBLE);
    CHECK_STATUS(amq_cms_merge(a, bits), AMQ_ERR_INCOMPATIBLE);
    CHECK(amq_cms_query(a, h0) == before && amq_cms_total(a) == na + nb);
    amq_cms_free(w);
    amq_cms_free(d);
    amq_cms_free(bits);
out:
    amq_cms_free(a);
    amq_cms_free(b);
    amq_cms_free(s);
}

/* Counters stop at their maximum; est >= min(f, MAX) always. */
static void test_saturation(void) {
    check_seed = 31;
    for (int cons = 0; cons < 2; cons++) {
        amq_cms *c = make(64, 3, 8, cons != 0);
        if (c == NULL)
            return;
        CHECK(amq_cms_counter_max(c) == 255);
        CHECK(amq_cms_incr(c, 1, 200) == 200);
        CHECK(amq_cms_saturated(c) == 0);
        CHECK(amq_cms_incr(c, 1, 100) == 255);
        CHECK(amq_cms_query(c, 1) == 255);
        CHECK(amq_cms_saturated(c) >= 1);
        CHECK(amq_cms_incr(c, 1, UINT64_MAX) == 255); /* no wrap, no UB */
        CHECK(amq_cms_incr(c, 1, 0) == 255);
        /* A random heavy stream on 8-bit counters. */
        memset(truth, 0, sizeof truth);
        uint64_t rng = 31 + (uint64_t)cons, bad = 0;
        for (int j = 0; j < 20000; j++) {
            uint64_t i = draw(&rng) % 200;
            truth[i] += 3;
            amq_cms_incr(c, key_hash(31, i), 3);
        }
        for (uint64_t i = 0; i < 200; i++) {
            uint64_t e = amq_cms_query(c, key_hash(31, i));
            uint64_t want = truth[i] < 255 ? truth[i] : 255;
            bad += e < want || e > 255;
        }
        CHECK_MSG(bad == 0, "%llu keys below min(f, 255)",
                  (unsigned long long)bad);
        /* Merging saturated sketches saturates too. */
        amq_cms *d = make(64, 3, 8, cons != 0);
        if (d != NULL) {
            amq_cms_incr(d, 1, 250);
            CHECK_OK(amq_cms_merge(d, c));
            CHECK(amq_cms_query(d, 1) == 255);
        }
        amq_cms_free(d);
        amq_cms_free(c);
    }
    /* 16 and 32 bits. */
    amq_cms *c16 = make(8, 2, 16, true), *c32 = make(8, 2, 32, false);
    if (c16 != NULL && c32 != NULL) {
        CHECK(amq_cms_incr(c16, 5, 70000) == 65535);
        CHECK(amq_cms_incr(c32, 5, UINT64_C(5000000000)) == UINT32_MAX);
        CHECK(amq_cms_incr(c32, 5, 1) == UINT32_MAX);
        CHECK(amq_cms_total(c32) == UINT64_C(5000000001));
    }
    amq_cms_free(c16);
    amq_cms_free(c32);
}

/* contains = estimate > 0; the bound is the product of row fills, and the
 * measured rate of absent keys matches it within sampling noise. */
static void test_membership_bound(void) {
    check_seed = 41;
    amq_filter *f = NULL;
    CHECK_OK(amq_filter_new("cms:width=1000,depth=3", 0, 0, NULL, &f, NULL));
    if (f == NULL)
        return;
    CHECK(amq_filter_fpr_bound(f) == 0.0);
    for (uint64_t i = 0; i < 1200; i++)
        CHECK_OK(amq_filter_add_hash(f, key_hash(41, i)));
    double bound = amq_filter_fpr_bound(f);
    double expect = pow(1 - exp(-1.2), 3);
    CHECK_MSG(fabs(bound - expect) < 0.1 * expect, "bound %g, theory %g", bound,
              expect);
    uint64_t fp = 0, t = check_quick() ? 40000 : 200000, missing = 0;
    for (uint64_t i = 0; i < t; i++)
        fp += amq_filter_contains_hash(f, key_hash(42, i));
    for (uint64_t i = 0; i < 1200; i++)
        missing += !amq_filter_contains_hash(f, key_hash(41, i));
    double p = (double)fp / (double)t;
    CHECK(missing == 0);
    CHECK_MSG(fabs(p - bound) <= 4 * sqrt(bound * (1 - bound) / (double)t),
              "measured %g, bound %g", p, bound);
    uint64_t cnt = 0;
    CHECK_OK(amq_filter_count_hash(f, key_hash(41, 0), &cnt));
    CHECK(cnt >= 1);
    amq_filter_free(f);
}

/* curve: a partitioned Bloom filter in cells of counter bits each. */
static void test_curve(void) {
    check_seed = 51;
    double p = 0, b = 0;
    CHECK_OK(amq_curve_fpr("cms:counter=8", 8 * 10.0, &p));
    CHECK_MSG(fabs(p - amq_bloom_fpr(10.0, 1.0, amq_bloom_optimal_k(10.0))) <
                  1e-15,
              "%g", p);
    CHECK_OK(amq_curve_fpr("cms:depth=3", 32 * 10.0, &p));
    CHECK(fabs(p - pow(1 - exp(-0.3), 3)) < 1e-12);
    CHECK_OK(amq_curve_bits("cms:depth=3", p, &b));
    CHECK(fabs(b - 320.0) < 1e-6);
    CHECK_OK(amq_curve_bits("cms:counter=16", 0.01, &b));
    CHECK_OK(amq_curve_fpr("cms:counter=16", b, &p));
    CHECK(fabs(p - 0.01) < 1e-9);
}

static void spec_shape(const char *spec, uint64_t cap, double fpr,
                       const char *want) {
    amq_filter *f = NULL;
    amq_diag d;
    memset(&d, 0, sizeof d);
    amq_status st = amq_filter_new(spec, cap, fpr, NULL, &f, &d);
    if (want == NULL) {
        CHECK_MSG(st == AMQ_ERR_SPEC && d.message[0] != '\0', "%s: %s", spec,
                  amq_status_name(st));
    } else {
        char buf[160] = "";
        CHECK_MSG(st == AMQ_OK, "%s: %s %s", spec, amq_status_name(st),
                  d.message);
        if (f != NULL)
            amq_filter_describe(f, buf, sizeof buf);
        CHECK_MSG(strcmp(buf, want) == 0, "%s -> %s", spec, buf);
    }
    amq_filter_free(f);
}

static void test_specs(void) {
    check_seed = 61;
    spec_shape("cms:width=100,depth=3", 0, 0,
               "cms:width=100,depth=3,counter=32,conservative=1");
    spec_shape("cms:eps=0.01,delta=0.001", 0, 0,
               "cms:width=272,depth=7,counter=32,conservative=1");
    spec_shape("cms:eps=0.001,counter=16,conservative=0", 0, 0,
               "cms:width=2719,depth=5,counter=16,conservative=0");
    /* (capacity, fpr): fill 1/2 per row, depth log2(1/fpr) (rounded). */
    spec_shape("cms", 1000, 1.0 / 128,
               "cms:width=1443,depth=7,counter=32,"
               "conservative=1");
    spec_shape("cms:width=100", 0, 0, NULL);
    spec_shape("cms:depth=3", 1000, 0.01, NULL);
    spec_shape("cms:width=100,depth=3,eps=0.1", 0, 0, NULL);
    spec_shape("cms:delta=0.1", 0, 0, NULL);
    spec_shape("cms:counter=12", 1000, 0.01, NULL);
    spec_shape("cms:conservative=2", 1000, 0.01, NULL);
    spec_shape("cms:depth=65,width=10", 0, 0, NULL);
    amq_cms *c = NULL;
    CHECK_STATUS(amq_cms_new(0, 3, 32, true, NULL, &c), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_cms_new(10, 0, 32, true, NULL, &c), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_cms_new(10, 65, 32, true, NULL, &c), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_cms_new(10, 3, 24, true, NULL, &c), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_cms_new(UINT64_MAX, 64, 32, true, NULL, &c),
                 AMQ_ERR_OVERFLOW);
    CHECK_STATUS(amq_cms_new_error(0.0, 0.1, 32, true, NULL, &c),
                 AMQ_ERR_INVALID);
    CHECK_STATUS(amq_cms_new_error(0.1, 1.0, 32, true, NULL, &c),
                 AMQ_ERR_INVALID);
    CHECK(c == NULL);
    amq_cms_free(NULL);
}

static void test_batch(void) {
    check_seed = 71;
    amq_cms *c = make(500, 5, 16, true);
    if (c == NULL)
        return;
    enum { M = 1000 };
    uint64_t h[M], a[M + 1];
    uint64_t rng = 71;
    for (int j = 0; j < 5000; j++)
        amq_cms_incr(c, key_hash(71, draw(&rng) % 700), 1);
    for (size_t i = 0; i < M; i++)
        h[i] = key_hash(71, i);
    for (size_t len = 0; len <= M; len += len < 40 ? 1 : 97) {
        size_t bad = 0;
        a[len] = 0xdeadbeef;
        amq_cms_query_batch(c, h, len, a);
        for (size_t i = 0; i < len; i++)
            bad += a[i] != amq_cms_query(c, h[i]);
        CHECK_MSG(bad == 0 && a[len] == 0xdeadbeef, "batch of %zu: %zu", len,
                  bad);
    }
    amq_cms_free(c);
}

/* Frames with narrow counters (odd payload lengths) and a forged counter
 * above the total behind a valid checksum. */
static void test_frames(void) {
    static const char *specs[] = {"cms:width=13,depth=3,counter=8",
                                  "cms:width=7,depth=5,counter=16",
                                  "cms:width=9,depth=2,counter=32"};
    check_seed = 81;
    for (size_t s = 0; s < 3; s++) {
        amq_filter *f = NULL, *g = NULL;
        CHECK_OK(amq_filter_new(specs[s], 0, 0, NULL, &f, NULL));
        if (f == NULL)
            continue;
        for (uint64_t i = 0; i < 30; i++)
            CHECK_OK(amq_filter_add_hash(f, key_hash(81, i % 11)));
        size_t len = amq_filter_serialized_size(f), w = 0;
        uint8_t *buf = aligned_alloc(64, (len + 63) / 64 * 64);
        if (buf == NULL) {
            amq_filter_free(f);
            continue;
        }
        CHECK_OK(amq_filter_save(f, buf, len, &w));
        CHECK_OK(amq_filter_load(buf, len, NULL, &g, NULL));
        uint64_t c1 = 0, c2 = 0;
        if (g != NULL) {
            CHECK_OK(amq_filter_count_hash(f, key_hash(81, 3), &c1));
            CHECK_OK(amq_filter_count_hash(g, key_hash(81, 3), &c2));
            CHECK(c1 == c2 && c1 >= 2 && amq_filter_items(g) == 30);
        }
        amq_filter_free(g);
        /* Payload starts at 64 + 64 (params padded); cell 0 := 200 > 30. */
        buf[128] = 200;
        amq__frame_seal(buf, len);
        amq_diag d;
        memset(&d, 0, sizeof d);
        g = NULL;
        CHECK_STATUS(amq_filter_load(buf, len, NULL, &g, &d), AMQ_ERR_CORRUPT);
        CHECK_STATUS(amq_filter_view(buf, len, NULL, &g, &d), AMQ_ERR_CORRUPT);
        free(buf);
        amq_filter_free(f);
    }
}

static amq_filter *new_opt(const char *spec, bool scalar) {
    amq_options opt;
    amq_filter *f = NULL;
    amq_diag d;
    memset(&opt, 0, sizeof opt);
    opt.flags = scalar ? AMQ_OPT_SCALAR : 0u;
    amq_status st = amq_filter_new(spec, 0, 0, &opt, &f, &d);
    CHECK_MSG(st == AMQ_OK, "new(%s): %s %s", spec, amq_status_name(st),
              st == AMQ_OK ? "" : d.message);
    return f;
}

/* The kernels (per width and depth, branch-free, prefetching batches)
 * against the reference (AMQ_OPT_SCALAR: row by row through cell_get), for
 * both row mappings: batch inserts give the frame single inserts give, and
 * contains (one key, batched) and counts agree. */
static void test_kernels_match_reference(void) {
    static const char *const specs[] = {"cms:width=50,depth=4",
                                        "cms:width=50,depth=5",
                                        "cms:width=50,depth=7",
                                        "cms:width=50,depth=3",
                                        "cms:width=64,depth=5,counter=8",
                                        "cms:width=40,depth=2,counter=16",
                                        "cms:width=50,depth=5,map=0",
                                        "cms:width=30,depth=4,counter=8,map=0",
                                        "cms:width=3000,depth=5",
                                        "cms:width=3000,depth=1"};
    enum { N = 600, Q = 3000 };
    static uint64_t h[Q], keys[N];
    static uint8_t a[Q], b[Q];
    for (size_t t = 0; t < sizeof specs / sizeof *specs; t++) {
        check_seed = 80 + t;
        amq_filter *fast = new_opt(specs[t], false);
        amq_filter *ref = new_opt(specs[t], true);
        if (fast == NULL || ref == NULL) {
            amq_filter_free(fast);
            amq_filter_free(ref);
            return;
        }
        uint64_t rng = check_seed;
        for (size_t i = 0; i < N; i++)
            keys[i] = check_next(&rng);
        size_t done = 0;
        CHECK_OK(amq_filter_add_batch(fast, keys, N, &done));
        CHECK(done == N);
        for (size_t i = 0; i < N; i++)
            CHECK_OK(amq_filter_add_hash(ref, keys[i]));
        size_t l1 = amq_filter_serialized_size(fast);
        size_t l2 = amq_filter_serialized_size(ref);
        uint8_t *f1 = malloc(l1), *f2 = malloc(l2);
        CHECK(f1 != NULL && f2 != NULL && l1 == l2);
        if (f1 != NULL && f2 != NULL && l1 == l2) {
            CHECK_OK(amq_filter_save(fast, f1, l1, NULL));
            CHECK_OK(amq_filter_save(ref, f2, l2, NULL));
            CHECK_MSG(memcmp(f1, f2, l1) == 0, "%s: frames differ", specs[t]);
        }
        free(f1);
        free(f2);
        uint64_t differ = 0;
        for (size_t i = 0; i < Q; i++) {
            h[i] = i % 2 ? keys[i % N] : check_next(&rng);
            a[i] = amq_filter_contains_hash(ref, h[i]);
            differ += amq_filter_contains_hash(fast, h[i]) != a[i];
            uint64_t c1 = 0, c2 = 0;
            CHECK_OK(amq_filter_count_hash(fast, h[i], &c1));
            CHECK_OK(amq_filter_count_hash(ref, h[i], &c2));
            differ += c1 != c2;
        }
        amq_filter_contains_batch(fast, h, Q, b);
        for (size_t i = 0; i < Q; i++)
            differ += (b[i] != 0) != (a[i] != 0);
        CHECK_MSG(differ == 0, "%s: %llu answers differ", specs[t],
                  (unsigned long long)differ);
        amq_filter_free(fast);
        amq_filter_free(ref);
    }
}

/* The two row mappings put a key in different cells: a sketch of one does
 * not merge into a sketch of the other, and map=0 is what its describe
 * says. */
static void test_mappings(void) {
    check_seed = 91;
    amq_filter *m0 = new_opt("cms:width=64,depth=4,map=0", false);
    amq_filter *m1 = new_opt("cms:width=64,depth=4", false);
    if (m0 == NULL || m1 == NULL) {
        amq_filter_free(m0);
        amq_filter_free(m1);
        return;
    }
    char buf[128];
    amq_filter_describe(m0, buf, sizeof buf);
    CHECK_MSG(strcmp(buf, "cms:width=64,depth=4,counter=32,conservative=1,"
                          "map=0") == 0,
              "%s", buf);
    amq_filter_describe(m1, buf, sizeof buf);
    CHECK_MSG(strcmp(buf, "cms:width=64,depth=4,counter=32,conservative=1") ==
                  0,
              "%s", buf);
    CHECK_STATUS(amq_filter_union(m0, m1), AMQ_ERR_INCOMPATIBLE);
    CHECK_STATUS(amq_filter_union(m1, m0), AMQ_ERR_INCOMPATIBLE);
    /* the same key lands in other cells: some row differs */
    uint64_t rng = 91, moved = 0;
    for (int i = 0; i < 50; i++) {
        uint64_t x = check_next(&rng);
        CHECK_OK(amq_filter_add_hash(m0, x));
        CHECK_OK(amq_filter_add_hash(m1, x));
    }
    size_t l0 = amq_filter_serialized_size(m0);
    uint8_t *f0 = malloc(l0), *f1 = malloc(l0);
    if (f0 != NULL && f1 != NULL && amq_filter_serialized_size(m1) == l0) {
        CHECK_OK(amq_filter_save(m0, f0, l0, NULL));
        CHECK_OK(amq_filter_save(m1, f1, l0, NULL));
        for (size_t i = 128; i + 8 < l0; i++)
            moved += f0[i] != f1[i];
    }
    CHECK(moved > 0);
    free(f0);
    free(f1);
    amq_filter_free(m0);
    amq_filter_free(m1);
}

int main(void) {
    test_kernels_match_reference();
    test_mappings();
    test_error_bound();
    test_merge();
    test_saturation();
    test_membership_bound();
    test_curve();
    test_specs();
    test_batch();
    test_frames();
    return check_report("test_countmin");
}
