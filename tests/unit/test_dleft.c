/*
 * test_dleft.c — the d-left counting Bloom filter beyond the contract suite:
 * deletions never disturb other keys (the permutation trick), insert/remove
 * restores the bytes, removing everything empties the table, FULL leaves it
 * unchanged, the bound is tight (it is the exact rate), and the space
 * advantage over the counting Bloom filter at equal false-positive rate.
 */
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "amq/counting.h"

static uint8_t *frame(const amq_filter *f, size_t *len) {
    size_t need = amq_filter_serialized_size(f);
    uint8_t *buf = malloc(need);
    *len = 0;
    if (buf != NULL && amq_filter_save(f, buf, need, len) != AMQ_OK) {
        free(buf);
        buf = NULL;
    }
    return buf;
}

static bool frames_equal(const uint8_t *a, size_t la, const uint8_t *b,
                         size_t lb) {
    return a && b && la == lb && memcmp(a, b, la) == 0;
}

static amq_filter *make(const char *spec, uint64_t n, double eps) {
    amq_filter *f = NULL;
    amq_diag d;
    amq_status st = amq_filter_new(spec, n, eps, NULL, &f, &d);
    CHECK_MSG(st == AMQ_OK, "new(%s): %s %s", spec, amq_status_name(st),
              st == AMQ_OK ? "" : d.message);
    return f;
}

/* Fill to capacity with small remainders (many fingerprint collisions),
 * remove half in random order: the other half is all still there; remove
 * the rest: the table is all zeros again. With d independent hashes
 * instead of permutations this fails (a remove finds another key's equal
 * remainder). */
static void test_deletes_are_exact(void) {
    unsigned seeds = check_quick() ? 3 : 12;
    enum { N = 6000 };
    static uint64_t keys[N];
    for (uint64_t seed = 1; seed <= seeds; seed++) {
        check_seed = seed;
        /* rbits=4: ~24 stored per 16 remainders, collisions everywhere. */
        amq_filter *f = make("dleft:buckets=256,rbits=4,cbits=4", 0, 0);
        if (f == NULL)
            return;
        uint64_t rng = seed * 7919;
        size_t n = 0;
        for (size_t i = 0; i < N; i++) {
            keys[n] = check_next(&rng);
            amq_status st = amq_filter_add_hash(f, keys[n]);
            CHECK(st == AMQ_OK || st == AMQ_ERR_FULL);
            n += st == AMQ_OK;
        }
        for (size_t i = n - 1; i > 0; i--) { /* shuffle */
            size_t j = (size_t)(check_next(&rng) % (i + 1));
            uint64_t t = keys[i];
            keys[i] = keys[j];
            keys[j] = t;
        }
        size_t half = n / 2, missing = 0;
        for (size_t i = 0; i < half; i++)
            CHECK_OK(amq_filter_remove_hash(f, keys[i]));
        for (size_t i = half; i < n; i++)
            missing += !amq_filter_contains_hash(f, keys[i]);
        CHECK_MSG(missing == 0, "%zu of %zu keys lost to deletions", missing,
                  n - half);
        for (size_t i = half; i < n; i++)
            CHECK_OK(amq_filter_remove_hash(f, keys[i]));
        CHECK(amq_filter_items(f) == 0);
        CHECK(amq_filter_fpr_bound(f) == 0.0);
        size_t len;
        uint8_t *fr = frame(f, &len);
        amq_filter *empty = make("dleft:buckets=256,rbits=4,cbits=4", 0, 0);
        size_t elen = 0;
        uint8_t *efr = empty ? frame(empty, &elen) : NULL;
        CHECK(frames_equal(fr, len, efr, elen));
        free(fr);
        free(efr);
        amq_filter_free(empty);
        amq_filter_free(f);
    }
}

static void test_insert_remove_restores(void) {
    unsigned seeds = check_quick() ? 10 : 50;
    for (uint64_t seed = 1; seed <= seeds; seed++) {
        check_seed = seed;
        amq_filter *f = make("dleft", 3000, 0.01);
        if (f == NULL)
            return;
        uint64_t rng = seed;
        for (int i = 0; i < 2500; i++)
            CHECK_OK(amq_filter_add_hash(f, check_next(&rng)));
        for (int t = 0; t < 20; t++) {
            size_t l1, l2;
            uint8_t *before = frame(f, &l1);
            uint64_t x = check_next(&rng);
            CHECK_OK(amq_filter_add_hash(f, x));
            CHECK_OK(amq_filter_remove_hash(f, x));
            uint8_t *after = frame(f, &l2);
            CHECK(frames_equal(before, l1, after, l2));
            free(before);
            free(after);
        }
        amq_filter_free(f);
    }
}

/* The key's count (checked to succeed). */
static uint64_t count(const amq_filter *f, uint64_t h) {
    uint64_t n = 0;
    CHECK_OK(amq_filter_count_hash(f, h, &n));
    return n;
}

static void test_counts_and_absent(void) {
    check_seed = 21;
    amq_filter *f = make("dleft", 1000, 0.001);
    const amq_dleft *t = amq_dleft_of(f);
    CHECK(t != NULL);
    if (t == NULL) {
        amq_filter_free(f);
        return;
    }
    uint64_t rng = 21;
    for (int i = 0; i < 500; i++) {
        uint64_t x = check_next(&rng);
        CHECK_OK(amq_filter_add_hash(f, x));
        CHECK_OK(amq_filter_add_hash(f, x));
        CHECK(count(f, x) >= 2);
    }
    CHECK(amq_filter_items(f) == 1000);
    CHECK(amq_dleft_fingerprints(t) <= 500 && amq_dleft_fingerprints(t) > 490);
    const uint64_t y = 0xfeedfacecafebeefULL;
    for (int i = 0; i < 3; i++)
        CHECK_OK(amq_filter_add_hash(f, y));
    CHECK(count(f, y) == UINT64_MAX); /* 2-bit counter: 3 */
    for (int i = 0; i < 5; i++)
        CHECK_OK(amq_filter_remove_hash(f, y)); /* sticky: stays */
    CHECK(amq_filter_contains_hash(f, y));
    unsigned refused = 0;
    for (int i = 0; i < 1000; i++) {
        uint64_t z = check_next(&rng);
        if (!amq_filter_contains_hash(f, z)) {
            uint64_t fp = amq_dleft_fingerprints(t);
            CHECK_STATUS(amq_filter_remove_hash(f, z), AMQ_ERR_NOT_FOUND);
            CHECK(amq_dleft_fingerprints(t) == fp);
            CHECK(count(f, z) == 0);
            refused++;
        }
    }
    CHECK(refused > 990);
    uint64_t h[100];
    uint8_t out[100];
    for (int i = 0; i < 100; i++)
        h[i] = i % 2 ? check_next(&rng) : y;
    amq_filter_contains_batch(f, h, 100, out);
    unsigned bad = 0;
    for (int i = 0; i < 100; i++)
        bad += out[i] != amq_filter_contains_hash(f, h[i]);
    CHECK(bad == 0);
    /* The bound is the stored fingerprints over B 2^r. */
    char buf[128];
    unsigned long long b = 0;
    unsigned r = 0;
    amq_filter_describe(f, buf, sizeof buf);
    CHECK(sscanf(buf, "dleft:d=%*u,cells=%*u,buckets=%llu,rbits=%u", &b, &r) ==
          2);
    double want = (double)amq_dleft_fingerprints(t) *
                  (1.0 / ((double)b * ldexp(1.0, (int)r)) + 0x1p-63);
    CHECK_MSG(amq_filter_fpr_bound(f) == want, "bound %g, expected %g",
              amq_filter_fpr_bound(f), want);
    CHECK(amq_dleft_of(NULL) == NULL);
    amq_filter_free(f);
}

/* Two subtables of one bucket of one cell: two fingerprints fit; a third
 * distinct one is refused and nothing changes. */
static void test_full(void) {
    check_seed = 22;
    amq_filter *f = make("dleft:d=2,cells=1,buckets=1,rbits=16", 0, 0);
    if (f == NULL)
        return;
    uint64_t rng = 22, stored = 0;
    unsigned refusals = 0;
    for (int i = 0; i < 50; i++) {
        uint64_t x = check_next(&rng);
        size_t l1, l2;
        uint8_t *before = frame(f, &l1);
        amq_status st = amq_filter_add_hash(f, x);
        if (st == AMQ_OK) {
            stored++;
        } else {
            CHECK_STATUS(st, AMQ_ERR_FULL);
            uint8_t *after = frame(f, &l2);
            CHECK(frames_equal(before, l1, after, l2));
            free(after);
            refusals++;
        }
        free(before);
    }
    CHECK(stored == 2 && refusals == 48);
    amq_filter_free(f);
}

static double measured_fpr(const amq_filter *f, uint64_t seed, uint64_t t) {
    uint64_t fp = 0, rng = seed;
    for (uint64_t i = 0; i < t; i++)
        fp += amq_filter_contains_hash(f, check_next(&rng));
    return (double)fp / (double)t;
}

/* The bound F / (B 2^r) is the exact rate: measured within 4 sigma + 10%
 * on both sides. */
static void test_bound_is_tight(void) {
    check_seed = 23;
    amq_filter *f = make("dleft", 20000, 0.01);
    if (f == NULL)
        return;
    uint64_t rng = 23;
    for (int i = 0; i < 20000; i++)
        CHECK_OK(amq_filter_add_hash(f, check_next(&rng)));
    uint64_t t = check_quick() ? 200000 : 1000000;
    double p = measured_fpr(f, 99, t), b = amq_filter_fpr_bound(f);
    double tol = 4 * sqrt(b / (double)t) + 0.1 * b;
    CHECK_MSG(fabs(p - b) <= tol, "measured %g, bound %g", p, b);
    amq_filter_free(f);
}

/* The construction's point: at equal target rate, far fewer bits per key
 * than a counting Bloom filter with 4-bit counters (docs/parts/counting.md
 * quotes these numbers). */
static void test_space_advantage(void) {
    static const double eps[] = {0.01, 0.001};
    const uint64_t n = check_quick() ? 20000 : 100000;
    for (size_t e = 0; e < 2; e++) {
        check_seed = 24 + e;
        amq_filter *d = make("dleft", n, eps[e]);
        amq_filter *c = make("counting", n, eps[e]);
        if (d == NULL || c == NULL) {
            amq_filter_free(d);
            amq_filter_free(c);
            return;
        }
        uint64_t rng = 24 + e;
        for (uint64_t i = 0; i < n; i++) {
            uint64_t x = check_next(&rng);
            CHECK_OK(amq_filter_add_hash(d, x));
            CHECK_OK(amq_filter_add_hash(c, x));
        }
        double bd = amq_filter_bits_per_key(d), bc = amq_filter_bits_per_key(c);
        double pd = measured_fpr(d, 77, 400000),
               pc = measured_fpr(c, 77, 400000);
        printf("eps %g: dleft %.2f bits/key (measured fpr %.5f), counting "
               "%.2f bits/key (measured fpr %.5f)\n",
               eps[e], bd, pd, bc, pc);
        CHECK_MSG(bd < 0.6 * bc, "dleft %.2f vs counting %.2f bits/key", bd,
                  bc);
        double sd = 4 * sqrt(eps[e] / 400000.0);
        CHECK(pd <= eps[e] + sd && pc <= eps[e] * 1.1 + sd);
        amq_filter_free(d);
        amq_filter_free(c);
    }
}

static void test_specs(void) {
    check_seed = 25;
    amq_filter *f = NULL;
    amq_diag dg;
    CHECK_STATUS(amq_filter_new("dleft:d=1", 100, 0.01, NULL, &f, &dg),
                 AMQ_ERR_SPEC);
    CHECK_STATUS(amq_filter_new("dleft:buckets=10", 0, 0, NULL, &f, &dg),
                 AMQ_ERR_SPEC);
    CHECK_STATUS(amq_filter_new("dleft", 100, 1e-12, NULL, &f, &dg),
                 AMQ_ERR_INVALID);
    f = make("dleft:d=3,cells=4,cbits=3", 1000, 0.01);
    if (f != NULL) {
        char buf[128];
        amq_filter_describe(f, buf, sizeof buf);
        /* 1000 / (3 * 3) -> 112 buckets; r = ceil(log2(1000/1.12)) = 10 */
        CHECK_MSG(strcmp(buf, "dleft:d=3,cells=4,buckets=112,rbits=10,"
                              "cbits=3") == 0,
                  "%s", buf);
        CHECK(amq_filter_size_bytes(f) == (3 * 112 * 4 * 13 + 63) / 64 * 8);
    }
    amq_filter_free(f);
    double b, p;
    CHECK_OK(amq_curve_bits("dleft", 0.01, &b));
    /* (log2(24 / 0.01) + 2) / 0.75 */
    CHECK_MSG(fabs(b - (log2(2400.0) + 2) / 0.75) < 1e-9, "%g", b);
    CHECK_OK(amq_curve_fpr("dleft", 2.0, &p));
    CHECK(p == 1.0);
    CHECK_STATUS(amq_curve_fpr("dleft:rbits=8", 16, &p), AMQ_ERR_SPEC);
}

static amq_filter *make_opt(const char *spec, uint64_t n, bool scalar) {
    amq_options opt;
    amq_filter *f = NULL;
    amq_diag d;
    memset(&opt, 0, sizeof opt);
    opt.flags = scalar ? AMQ_OPT_SCALAR : 0u;
    amq_status st = amq_filter_new(spec, n, 0.01, &opt, &f, &d);
    CHECK_MSG(st == AMQ_OK, "new(%s): %s %s", spec, amq_status_name(st),
              st == AMQ_OK ? "" : d.message);
    return f;
}

/* The word-parallel kernels and scans against the cell-by-cell reference
 * (AMQ_OPT_SCALAR), on every kernel's shape, on tables small enough that
 * many buckets sit in the last 8 bytes, and with remainder-0 keys: the same
 * keys give the same frame (inserts, removes), and every query, one key or
 * batched, the same answer. */
static void test_words_match_reference(void) {
    static const char *const specs[] = {"dleft",
                                        "dleft:rbits=11",
                                        "dleft:cells=4",
                                        "dleft:rbits=16",
                                        "dleft:d=3",
                                        "dleft:rbits=20,cbits=3",
                                        "dleft:map=0",
                                        "dleft:map=0,rbits=6",
                                        "dleft:rbits=1,cbits=1",
                                        "dleft:cells=32,rbits=30",
                                        "dleft:d=2,cells=1",
                                        "dleft:rbits=6"};
    enum { Q = 4000 };
    static uint64_t h[Q];
    static uint8_t a[Q], b[Q];
    for (size_t t = 0; t < sizeof specs / sizeof *specs; t++) {
        for (uint64_t n = 5; n <= 5000; n *= 10) {
            check_seed = 30 + t * 10 + n;
            amq_filter *fast = make_opt(specs[t], n, false);
            amq_filter *ref = make_opt(specs[t], n, true);
            if (fast == NULL || ref == NULL) {
                amq_filter_free(fast);
                amq_filter_free(ref);
                return;
            }
            uint64_t rng = check_seed;
            /* remainder-0 keys: the low r bits of h are the remainder */
            for (uint64_t i = 0; i < n; i++) {
                uint64_t x = check_next(&rng);
                x = i % 5 == 0 ? x & ~UINT64_C(0xffffffff) : x;
                amq_status s1 = amq_filter_add_hash(fast, x);
                amq_status s2 = amq_filter_add_hash(ref, x);
                CHECK_MSG(s1 == s2, "%s: add %s vs %s", specs[t],
                          amq_status_name(s1), amq_status_name(s2));
                if (i % 3 == 0) {
                    s1 = amq_filter_remove_hash(fast, x ^ 1);
                    s2 = amq_filter_remove_hash(ref, x ^ 1);
                    CHECK(s1 == s2);
                }
            }
            size_t l1, l2;
            uint8_t *f1 = frame(fast, &l1), *f2 = frame(ref, &l2);
            CHECK_MSG(frames_equal(f1, l1, f2, l2), "%s n=%llu: frames differ",
                      specs[t], (unsigned long long)n);
            free(f1);
            free(f2);
            uint64_t r2 = check_seed, differ = 0;
            for (size_t i = 0; i < Q; i++) {
                uint64_t x = check_next(&r2);
                h[i] = i % 4 == 0   ? x & ~UINT64_C(0xffffffff)
                       : i % 4 == 1 ? check_next(&rng)
                                    : x;
                a[i] = amq_filter_contains_hash(ref, h[i]);
                differ += amq_filter_contains_hash(fast, h[i]) != a[i];
            }
            amq_filter_contains_batch(fast, h, Q, b);
            for (size_t i = 0; i < Q; i++)
                differ += (b[i] != 0) != (a[i] != 0);
            amq_filter_contains_batch(ref, h, Q, b);
            for (size_t i = 0; i < Q; i++)
                differ += (b[i] != 0) != (a[i] != 0);
            CHECK_MSG(differ == 0, "%s n=%llu: %llu answers differ", specs[t],
                      (unsigned long long)n, (unsigned long long)differ);
            amq_filter_free(fast);
            amq_filter_free(ref);
        }
    }
}

/* Mapping 1 balances as well as mapping 0: filled to capacity, neither
 * refuses a key, and a further share still fits: 15% at the default two
 * subtables of 16 cells (the first refusal came at 1.17-1.18x capacity in
 * every fill of 10^6 and 10^7 keys measured), 20% at four subtables of 8
 * (1.19-1.20x). */
static void test_offset_mapping_balances(void) {
    static const struct {
        const char *spec[2]; /* map 0, map 1 */
        unsigned more;       /* percent beyond capacity */
    } shapes[] = {{{"dleft:map=0", "dleft"}, 15},
                  {{"dleft:d=4,cells=8,map=0", "dleft:d=4,cells=8"}, 20}};
    const uint64_t n = check_quick() ? 30000 : 300000;
    for (size_t t = 0; t < sizeof shapes / sizeof shapes[0]; t++)
        for (unsigned map = 0; map <= 1; map++) {
            const char *spec = shapes[t].spec[map];
            check_seed = 40 + map;
            amq_filter *f = make(spec, n, 0.01);
            if (f == NULL)
                return;
            uint64_t rng = 40, full = 0;
            for (uint64_t i = 0; i < n; i++)
                full +=
                    amq_filter_add_hash(f, check_next(&rng)) == AMQ_ERR_FULL;
            CHECK_MSG(full == 0, "%s: %llu keys refused at capacity", spec,
                      (unsigned long long)full);
            for (uint64_t i = 0; i < n * shapes[t].more / 100; i++)
                full +=
                    amq_filter_add_hash(f, check_next(&rng)) == AMQ_ERR_FULL;
            CHECK_MSG(full == 0, "%s: %llu keys refused at +%u%%", spec,
                      (unsigned long long)full, shapes[t].more);
            amq_filter_free(f);
        }
}

int main(void) {
    test_words_match_reference();
    test_offset_mapping_balances();
    test_deletes_are_exact();
    test_insert_remove_restores();
    test_counts_and_absent();
    test_full();
    test_bound_is_tight();
    test_space_advantage();
    test_specs();
    return check_report("test_dleft");
}
