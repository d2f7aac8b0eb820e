/*
 * test_memento.c — the Memento range filter ("memento"): the number of
 * prefixes a range visits against a count over every alignment; no false
 * negatives while it grows from a small first table and after removes,
 * against a model multiset; the certified bound, at the target through
 * the planned growth, on uniform, clustered and dense keys with uniform
 * and correlated queries; counts; frames after doublings; sequential
 * keys that lengthen the table's tail instead of doubling it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "amq/amq.h"
#include "check.h"

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static amq_filter *make(const char *spec, uint64_t capacity, double fpr,
                        uint64_t seed) {
    amq_filter *f = NULL;
    amq_options o = {.hash_seed = seed};
    amq_diag d;
    amq_status st = amq_filter_new(spec, capacity, fpr, &o, &f, &d);
    CHECK_MSG(st == AMQ_OK, "%s: %s", spec, d.message);
    return f;
}

/* bound(len) = V(len) bound(1), V the most prefixes of 2^m keys a range
 * of len keys meets, counted over every start in two prefixes. */
static void test_visits(void) {
    static const unsigned spans[] = {1, 2, 3, 8, 64, 100};
    uint64_t s = 1;
    for (size_t j = 0; j < sizeof spans / sizeof spans[0]; j++) {
        char spec[48];
        snprintf(spec, sizeof spec, "memento:range=%u", spans[j]);
        amq_filter *f = make(spec, 1000, 0.01, 1);
        for (unsigned i = 0; i < 500; i++)
            CHECK_OK(amq_filter_add_hash(f, check_next(&s)));
        unsigned m = 0;
        while ((1u << m) < spans[j])
            m++;
        double one = amq_range_fpr_bound(f, 1);
        CHECK(one > 0 && one == amq_filter_fpr_bound(f));
        CHECK(amq_range_fpr_bound(f, 0) == 0.0);
        for (uint64_t len = 1; len <= 5u << m && len <= 300; len++) {
            uint64_t most = 0;
            for (uint64_t lo = 0; lo < 2u << m; lo++) {
                uint64_t v = ((lo + len - 1) >> m) - (lo >> m) + 1;
                most = v > most ? v : most;
            }
            double want = most > 64 ? 1.0 : fmin(1.0, (double)most * one);
            CHECK_MSG(fabs(amq_range_fpr_bound(f, len) - want) <= 1e-12 * want,
                      "range=%u len %llu: %g, want %llu x %g", spans[j],
                      (unsigned long long)len, amq_range_fpr_bound(f, len),
                      (unsigned long long)most, one);
        }
        /* the target is for ranges of `range` keys */
        CHECK_MSG(amq_range_fpr_bound(f, spans[j]) <= 0.01, "range=%u: %g",
                  spans[j], amq_range_fpr_bound(f, spans[j]));
        amq_filter_free(f);
    }
}

enum {
    UNIFORM = CHECK_KEYS_UNIFORM,
    CLUSTERED = CHECK_KEYS_RUNS,
    DENSE = CHECK_KEYS_GRID
};

/* n keys: uniform 64-bit, runs of 100 consecutive integers, or 0..n-1
 * spaced 3 apart (every prefix full of keys). */
static uint64_t *make_keys(int kind, size_t n, uint64_t *s) {
    return check_range_keys(kind, n, 3, s);
}

/* Grown 2^7 times from a table for n/128 keys: no false negatives at
 * every doubling, the bound under the target (the plan covers 10 or more
 * doublings), and measured rates under the bound. */
static void test_bound(int kind, size_t n, double fpr, uint64_t span) {
    static const char *const names[] = {"uniform", "clustered", "dense"};
    uint64_t s = 17 + (uint64_t)kind, *k = make_keys(kind, n, &s);
    char spec[64];
    snprintf(spec, sizeof spec, "memento:range=%llu", (unsigned long long)span);
    amq_filter *f = make(spec, n / 128, fpr, 99);
    for (size_t i = 0; i < n; i++) {
        CHECK_OK(amq_filter_add_hash(f, k[i]));
        if ((i & (i + 1)) == 0 || i == n - 1) /* every power of two */
            for (size_t j = 0; j <= i; j += 1 + i / 512) {
                bool maybe = false;
                uint64_t lo = k[j] >= 7 ? k[j] - 7 : 0;
                CHECK_OK(amq_range_query(f, lo, k[j], &maybe));
                CHECK_MSG(maybe, "%s: key %zu lost after %zu adds", names[kind],
                          j, i + 1);
            }
    }
    CHECK(amq_filter_items(f) == n);
    CHECK_MSG(amq_range_fpr_bound(f, span) <= fpr, "%s: bound %g at %g",
              names[kind], amq_range_fpr_bound(f, span), fpr);
    qsort(k, n, sizeof *k, cmp_u64);
    for (size_t i = 0; i < n; i++) {
        bool maybe = false;
        uint64_t a = check_next(&s) % 5000, b = check_next(&s) % 5000;
        uint64_t lo = k[i] > a ? k[i] - a : 0,
                 hi = k[i] < UINT64_MAX - b ? k[i] + b : UINT64_MAX;
        CHECK_OK(amq_range_query(f, lo, hi, &maybe));
        CHECK(maybe && amq_filter_contains_hash(f, k[i]));
    }
    uint64_t lens[] = {1, span, span * 4};
    for (int w = 0; w < 3; w++)
        for (size_t j = 0; j < 3; j++)
            if (w != CHECK_PAST_END || kind == DENSE)
                check_range_rate(f, k, n, lens[j], w, &s, names[kind]);
    amq_filter_free(f);
    free(k);
}

/* A multiset of keys in a small space (many share prefixes, some are
 * added twice) with adds and removes in random order, grown from 64
 * slots: every key the model holds answers, with a count at least the
 * model's; removing a key it does not hold is refused by a filter that
 * has no entry for it. */
static void test_model(void) {
    enum { N = 6000, SPACE = 1 << 16 };
    uint64_t s = 5, *held = calloc(SPACE, sizeof *held);
    amq_filter *f = make("memento:range=32,slots=64,l=7,growth=0", 0, 0, 3);
    size_t total = 0;
    for (unsigned step = 0; step < 4 * N; step++) {
        uint64_t x = check_next(&s) % SPACE;
        if (step % 4 == 3 && total > 0) { /* remove a held key */
            while (held[x] == 0)
                x = (x + 1) % SPACE;
            CHECK_OK(amq_filter_remove_hash(f, x));
            held[x]--;
            total--;
        } else {
            CHECK_OK(amq_filter_add_hash(f, x));
            held[x]++;
            total++;
        }
    }
    CHECK(amq_filter_items(f) == total);
    for (uint64_t x = 0; x < SPACE; x++) {
        uint64_t c = 0;
        CHECK_OK(amq_filter_count_hash(f, x, &c));
        CHECK_MSG(c >= held[x], "key %llu: count %llu, holds %llu",
                  (unsigned long long)x, (unsigned long long)c,
                  (unsigned long long)held[x]);
        if (held[x] != 0) {
            bool maybe = false;
            CHECK_OK(amq_range_query(f, x, x, &maybe));
            CHECK(maybe);
        }
    }
    /* removing everything leaves an empty filter with bound 0 */
    for (uint64_t x = 0; x < SPACE; x++)
        while (held[x] != 0) {
            CHECK_OK(amq_filter_remove_hash(f, x));
            held[x]--;
        }
    CHECK(amq_filter_items(f) == 0);
    bool maybe = true;
    CHECK_OK(amq_range_query(f, 0, UINT64_MAX, &maybe));
    CHECK(!maybe && amq_range_fpr_bound(f, 100) == 0.0);
    CHECK_STATUS(amq_filter_remove_hash(f, 12345), AMQ_ERR_NOT_FOUND);
    amq_filter_free(f);
    free(held);
}

/* A frame written after doublings loads (and views) to the same answers;
 * the scalar options give the same answers too. */
static void test_frames(void) {
    uint64_t s = 9;
    amq_filter *f = make("memento:range=256,keys=bytes", 100, 0.01, 4);
    uint64_t *k = make_keys(CLUSTERED, 8000, &s);
    for (size_t i = 0; i < 8000; i++)
        CHECK_OK(amq_filter_add_hash(f, k[i]));
    CHECK(amq_range_key_form(f) == AMQ_RANGE_KEYS_BYTES);
    CHECK(amq_range_design_length(f) == 256);
    size_t len;
    uint8_t *buf = check_frame(f, &len);
    amq_filter *g = NULL, *v = NULL, *sc = NULL;
    amq_diag d;
    amq_options scalar = {.flags = AMQ_OPT_SCALAR};
    CHECK_OK(amq_filter_load(buf, len, NULL, &g, &d));
    CHECK_OK(amq_filter_view(buf, len, NULL, &v, &d));
    CHECK_OK(amq_filter_load(buf, len, &scalar, &sc, &d));
    CHECK(check_same_frame(f, g));
    CHECK(amq_range_fpr_bound(f, 256) == amq_range_fpr_bound(g, 256));
    for (unsigned q = 0; q < 20000; q++) {
        uint64_t lo = q % 2 ? k[q % 8000] - q % 300 : check_next(&s),
                 hi = lo + q % 500;
        bool a, b, c, e;
        if (hi < lo)
            continue;
        CHECK_OK(amq_range_query(f, lo, hi, &a));
        CHECK_OK(amq_range_query(g, lo, hi, &b));
        CHECK_OK(amq_range_query(v, lo, hi, &c));
        CHECK_OK(amq_range_query(sc, lo, hi, &e));
        CHECK(a == b && a == c && a == e);
    }
    /* byte keys: their first 8 bytes big-endian */
    CHECK_OK(amq_filter_add(g, "apricots", 8));
    bool maybe = false;
    CHECK_OK(amq_range_query_bytes(g, "apr", 3, "aps", 3, &maybe));
    CHECK(maybe);
    char desc[128];
    CHECK(amq_filter_describe(f, desc, sizeof desc) < sizeof desc);
    CHECK_MSG(strstr(desc, "memento:range=256,") == desc, "%s", desc);
    amq_filter_free(sc);
    amq_filter_free(v);
    amq_filter_free(g);
    amq_filter_free(f);
    free(buf);
    free(k);
}

/* Sequential keys put a prefix's keys, up to `range` of them, in one run:
 * a run that reaches the table's end lengthens the tail instead of
 * doubling the table (which would halve its load), and the frame keeps
 * the tail. */
static void test_dense(void) {
    static const unsigned spans[] = {64, 1024, 4096};
    for (size_t j = 0; j < sizeof spans / sizeof spans[0]; j++) {
        enum { N = 100000 };
        char spec[64], before[128], after[128];
        snprintf(spec, sizeof spec, "memento:range=%u,growth=0", spans[j]);
        amq_filter *f = make(spec, N, 0.01, 6);
        CHECK(amq_filter_describe(f, before, sizeof before) < sizeof before);
        for (uint64_t x = 0; x < N; x++)
            CHECK_OK(amq_filter_add_hash(f, x * 2));
        CHECK(amq_filter_describe(f, after, sizeof after) < sizeof after);
        CHECK_MSG(strcmp(before, after) == 0, "range=%u: %.60s became %.60s",
                  spans[j], before, after);
        size_t len;
        uint8_t *buf = check_frame(f, &len);
        amq_filter *g = NULL;
        amq_diag d;
        CHECK_OK(amq_filter_load(buf, len, NULL, &g, &d));
        CHECK(g != NULL && check_same_frame(f, g));
        uint64_t s = 3;
        for (unsigned q = 0; g != NULL && q < 5000; q++) {
            uint64_t lo = check_next(&s) % (3 * N), hi = lo + q % 50;
            bool a, b;
            CHECK_OK(amq_range_query(f, lo, hi, &a));
            CHECK_OK(amq_range_query(g, lo, hi, &b));
            CHECK(a == b && (a || lo > 2 * (N - 1) || (hi == lo && lo % 2)));
        }
        amq_filter_free(g);
        free(buf);
        amq_filter_free(f);
    }
}

int main(void) {
    size_t n = check_quick() ? 40000 : 200000;
    test_visits();
    test_bound(UNIFORM, n, 0.01, 1);
    test_bound(UNIFORM, n, 0.01, 64);
    test_bound(CLUSTERED, n, 0.01, 64);
    test_bound(DENSE, n, 0.01, 1024);
    test_bound(CLUSTERED, n / 4, 0.001, 1024);
    test_model();
    test_dense();
    test_frames();
    return check_report("test_memento");
}
