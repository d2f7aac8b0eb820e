/*
 * test_range.c — range filters (amq/range.h): the Elias-Fano set against
 * a scan, no false negatives for points and ranges, the certified bound
 * on uniform, correlated and clustered keys, frames, and the hash policy.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "amq/amq.h"
#include "check.h"
#include "core/divide.h"
#include "range/ef.h"

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Sorted distinct values below r: `dense` runs of consecutive values
 * (buckets filled to the brim) or uniform ones. */
static size_t make_set(uint64_t *v, size_t n, uint64_t r, bool dense,
                       uint64_t *s) {
    for (size_t i = 0; i < n; i++) {
        if (dense && i % 64 != 0)
            v[i] = v[i - 1] + 1 < r ? v[i - 1] + 1 : check_next(s) % r;
        else
            v[i] = check_next(s) % r;
    }
    qsort(v, n, sizeof *v, cmp_u64);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (m == 0 || v[i] != v[m - 1])
            v[m++] = v[i];
    return m;
}

/* The invariant divider against the hardware's, at the edges of every
 * power of two and at random. */
static void test_divide(void) {
    uint64_t s = 5;
    for (unsigned k = 1; k < 63; k++) {
        uint64_t ds[4] = {(UINT64_C(1) << k) - 1, UINT64_C(1) << k,
                          (UINT64_C(1) << k) + 1,
                          (UINT64_C(1) << k) + (check_next(&s) >> (64 - k))};
        for (int j = 0; j < 4; j++) {
            uint64_t d = ds[j];
            if (d < 2)
                continue;
            amq__divisor v = amq__divisor_of(d);
            uint64_t xs[6] = {0,          d - 1,          d,
                              UINT64_MAX, UINT64_MAX - d, UINT64_MAX / d * d};
            for (int i = 0; i < 6 + 200; i++) {
                uint64_t x = i < 6 ? xs[i] : check_next(&s) >> (i % 64);
                CHECK_MSG(amq__div(&v, x) == x / d && amq__mod(&v, x) == x % d,
                          "%llu / %llu", (unsigned long long)x,
                          (unsigned long long)d);
            }
        }
    }
}

static void test_ef_reference(void) {
    static const struct {
        size_t n;
        uint64_t r;
        bool dense;
    } cases[] = {{0, 16, false},
                 {1, 16, false},
                 {1, 1u << 30, false},
                 {5, 16, false},
                 {200, 256, true},
                 {1000, 1000, false},
                 {3000, 1u << 20, false},
                 {3000, 1u << 20, true},
                 {5000, UINT64_C(1) << 59, false}};
    uint64_t s = 11;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        uint64_t r = cases[c].r;
        uint64_t *v = malloc((cases[c].n + 1) * sizeof *v);
        size_t m = make_set(v, cases[c].n, r, cases[c].dense, &s);
        unsigned l = amq__ef_low_bits(m, r);
        size_t words = amq__ef_words(m, r, l);
        uint64_t *w = calloc(words, 8);
        amq__ef e;
        CHECK(words != 0 && w != NULL);
        amq__ef_fill(v, m, r, l, w);
        amq__ef_view(&e, w, m, r, l);
        for (size_t i = 0; i < m; i += 1 + m / 50)
            CHECK(amq__ef_at(&e, i) == v[i]);
        for (unsigned q = 0; q < 4000; q++) {
            uint64_t x, y, len = q % 3 == 0 ? 0 : check_next(&s) % 64;
            x = q % 5 == 0 && m ? v[check_next(&s) % m] + q % 2
                                : check_next(&s) % r;
            if (x >= r)
                x = r - 1;
            y = x + len < r ? x + len : r - 1;
            if (q % 97 == 0)
                y = r - 1;
            bool want = amq__ef_any_scan(&e, x, y);
            CHECK_MSG(amq__ef_any(&e, x, y) == want, "case %zu [%llu, %llu]", c,
                      (unsigned long long)x, (unsigned long long)y);
#if defined(AMQ__HAVE_PDEP)
            if (__builtin_cpu_supports("bmi2") &&
                __builtin_cpu_supports("popcnt"))
                CHECK(amq__ef_any_bmi2(&e, x, y) == want);
#endif
        }
        /* bits a value: l + 1 + buckets / m, and the directory */
        if (m > 1000)
            CHECK(words * 64.0 / (double)m < l + 3.6);
        free(w);
        free(v);
    }
}

static amq_filter *build(const char *spec, const uint64_t *k, size_t n,
                         double fpr) {
    amq_filter *f = NULL;
    amq_diag d;
    amq_status st = amq_filter_build(spec, k, n, fpr, NULL, &f, &d);
    CHECK_MSG(st == AMQ_OK, "%s: %s", spec, d.message);
    return f;
}

/* Keys for a workload: uniform 64-bit, runs of consecutive integers with
 * gaps, or multiples of 1000 (a regular grid queries can hug). */
enum {
    UNIFORM = CHECK_KEYS_UNIFORM,
    CLUSTERED = CHECK_KEYS_RUNS,
    GRID = CHECK_KEYS_GRID
};
static uint64_t *make_keys(int kind, size_t n, uint64_t *s) {
    return check_range_keys(kind, n, 1000, s);
}

static void test_bound(int kind, size_t n, double fpr, uint64_t span) {
    uint64_t s = 7 + (uint64_t)kind, *k = make_keys(kind, n, &s);
    char spec[64];
    snprintf(spec, sizeof spec, "grafite:range=%llu", (unsigned long long)span);
    amq_filter *f = build(spec, k, n, fpr);
    qsort(k, n, sizeof *k, cmp_u64);
    /* the bound at the design length meets the target; l keys: l e / L */
    CHECK(amq_range_fpr_bound(f, span) <= fpr);
    CHECK(amq_range_fpr_bound(f, span) > fpr * 0.5);
    CHECK(fabs(amq_range_fpr_bound(f, 1) - amq_filter_fpr_bound(f)) < 1e-15);
    CHECK(amq_range_fpr_bound(f, 0) == 0.0);
    /* no false negatives: every key, ranges around keys */
    for (size_t i = 0; i < n; i++) {
        bool maybe = false;
        CHECK_OK(amq_range_query(f, k[i], k[i], &maybe));
        CHECK(maybe && amq_filter_contains_hash(f, k[i]));
        uint64_t a = check_next(&s) % 5000, b = check_next(&s) % 5000;
        uint64_t lo = k[i] > a ? k[i] - a : 0,
                 hi = k[i] < UINT64_MAX - b ? k[i] + b : UINT64_MAX;
        CHECK_OK(amq_range_query(f, lo, hi, &maybe));
        CHECK(maybe);
    }
    static const char *const names[] = {"uniform", "clustered", "grid"};
    uint64_t lens[] = {1, span, span * 4};
    for (int c = 0; c < 2; c++)
        for (size_t j = 0; j < 3; j++)
            check_range_rate(f, k, n, lens[j],
                             c == 1 ? CHECK_PAST_KEY : CHECK_ANYWHERE, &s,
                             names[kind]);
    /* bits a key follow the curve */
    double bits = (double)amq_filter_size_bytes(f) * 8.0 / (double)n, want;
    CHECK_OK(amq_curve_bits(spec, fpr, &want));
    CHECK_MSG(bits <= want * 1.04 + 0.2 && bits >= want * 0.9,
              "%zu keys: %.2f bits a key, curve %.2f", n, bits, want);
    amq_filter_free(f);
    free(k);
}

static void test_curve(void) {
    double prev = 1.0;
    for (double b = 2.0; b < 40.0; b += 0.25) {
        double e, back;
        CHECK_OK(amq_curve_fpr("grafite", b, &e));
        CHECK(e <= prev); /* monotone */
        prev = e;
        if (e < 1.0) {
            CHECK_OK(amq_curve_bits("grafite", e, &back));
            CHECK_MSG(fabs(back - b) < 1e-6, "%g bits -> %g -> %g", b, e, back);
        }
    }
    /* the paper's shape: B bits a key give about l / 2^(B - 2) */
    double e16;
    CHECK_OK(amq_curve_fpr("grafite", 16.0, &e16));
    CHECK(e16 > ldexp(1.0, -14) && e16 < ldexp(1.0, -13));
}

static void test_frames(void) {
    uint64_t s = 3, *k = make_keys(CLUSTERED, 5000, &s);
    amq_filter *f = build("grafite:range=64", k, 5000, 0.01), *g = NULL;
    size_t len;
    uint8_t *buf = check_frame(f, &len);
    amq_diag d;
    CHECK_OK(amq_filter_load(buf, len, NULL, &g, &d));
    CHECK(check_same_frame(f, g));
    amq_filter *v = NULL;
    CHECK_OK(amq_filter_view(buf, len, NULL, &v, &d));
    for (unsigned q = 0; q < 20000; q++) {
        uint64_t lo = q % 2 ? k[q % 5000] - 3 : check_next(&s),
                 hi = lo + q % 200;
        bool a, b, c;
        if (hi < lo)
            continue;
        CHECK_OK(amq_range_query(f, lo, hi, &a));
        CHECK_OK(amq_range_query(g, lo, hi, &b));
        CHECK_OK(amq_range_query(v, lo, hi, &c));
        CHECK(a == b && a == c);
    }
    /* the portable kernels answer as the chosen ones */
    amq_options scalar = {.flags = AMQ_OPT_SCALAR};
    amq_filter *sf = NULL;
    CHECK_OK(amq_filter_load(buf, len, &scalar, &sf, &d));
    for (unsigned q = 0; sf != NULL && q < 20000; q++) {
        uint64_t lo = q % 2 ? k[q % 5000] - 3 : check_next(&s),
                 hi = lo + q % 99;
        bool a, b;
        if (hi < lo)
            continue;
        CHECK_OK(amq_range_query(f, lo, hi, &a));
        CHECK_OK(amq_range_query(sf, lo, hi, &b));
        CHECK(a == b);
        CHECK(amq_filter_contains_hash(f, lo) ==
              amq_filter_contains_hash(sf, lo));
    }
    amq_filter_free(sf);
    /* batches answer as one query at a time, and stop at a reversed range */
    enum { NB = 1000 };
    uint64_t blo[NB], bhi[NB];
    uint8_t bout[NB];
    for (unsigned q = 0; q < NB; q++) {
        blo[q] = q % 3 ? k[q % 5000] - q % 7 : check_next(&s);
        bhi[q] = blo[q] + (q % 4 == 0 ? 0 : check_next(&s) % 300);
        if (bhi[q] < blo[q])
            bhi[q] = UINT64_MAX;
    }
    CHECK_OK(amq_range_query_batch(f, blo, bhi, NB, bout));
    for (unsigned q = 0; q < NB; q++) {
        bool one;
        CHECK_OK(amq_range_query(f, blo[q], bhi[q], &one));
        CHECK(bout[q] == one);
    }
    bhi[500] = blo[500] - 1;
    if (blo[500] != 0)
        CHECK_STATUS(amq_range_query_batch(f, blo, bhi, NB, bout),
                     AMQ_ERR_INVALID);
    /* the parameters are checked: r, c1, codes; the payload's length */
    char spec[128];
    CHECK(amq_filter_describe(f, spec, sizeof spec) < sizeof spec);
    CHECK(strstr(spec, "grafite:range=64,r=") == spec);
    amq_filter_free(v);
    amq_filter_free(g);
    free(buf);
    amq_filter_free(f);
    free(k);
}

static void test_policy(void) {
    uint64_t keys[] = {10, 20, 30};
    amq_filter *f = NULL;
    amq_diag d;
    bool maybe;
    amq_options opt = {.hash = AMQ_HASH_ORDER};
    /* the order map belongs to range filters */
    CHECK_STATUS(amq_filter_new("blocked", 100, 0.01, &opt, &f, &d),
                 AMQ_ERR_HASH);
    CHECK(strstr(d.message, "order") != NULL);
    CHECK_STATUS(amq_filter_build("xor8", keys, 3, 0.01, &opt, &f, &d),
                 AMQ_ERR_HASH);
    /* a range filter over hashed keys answers points, not ranges */
    opt.hash = AMQ_HASH_XXH3;
    CHECK_OK(amq_filter_build("grafite", keys, 3, 0.01, &opt, &f, &d));
    CHECK(amq_filter_contains_hash(f, 20));
    CHECK_STATUS(amq_range_query(f, 0, 100, &maybe), AMQ_ERR_HASH);
    amq_filter_free(f);
    /* ranges on a point filter, and reversed ranges */
    CHECK_OK(amq_filter_new("blocked", 100, 0.01, NULL, &f, &d));
    CHECK_STATUS(amq_range_query(f, 0, 100, &maybe), AMQ_ERR_UNSUPPORTED);
    CHECK(amq_range_fpr_bound(f, 5) == -1.0);
    amq_filter_free(f);
    f = build("grafite", keys, 3, 0.01);
    CHECK(amq_filter_hasher(f)->kind == AMQ_HASH_ORDER);
    CHECK(amq_range_key_form(f) == AMQ_RANGE_KEYS_INT);
    CHECK_STATUS(amq_range_query(f, 5, 4, &maybe), AMQ_ERR_INVALID);
    CHECK_OK(amq_range_query(f, 11, 11, &maybe));
    CHECK_OK(amq_range_query(f, 0, UINT64_MAX, &maybe));
    CHECK(maybe);
    CHECK(amq_range_fpr_bound(f, UINT64_MAX) == 1.0);
    uint64_t lo[2] = {10, 31}, hi[2] = {10, 40};
    uint8_t out[2];
    CHECK_OK(amq_range_query_batch(f, lo, hi, 2, out));
    CHECK(out[0] == 1);
    bool one;
    CHECK_OK(amq_range_query(f, 31, 40, &one));
    CHECK(out[1] == one);
    amq_filter_free(f);
    /* empty */
    f = build("grafite", NULL, 0, 0.01);
    CHECK_OK(amq_range_query(f, 0, UINT64_MAX, &maybe));
    CHECK(!maybe && amq_filter_fpr_bound(f) == 0.0);
    amq_filter_free(f);
    /* a target the universe cannot hold */
    CHECK_STATUS(amq_filter_build("grafite:range=1099511627776", keys, 3, 1e-9,
                                  NULL, &f, &d),
                 AMQ_ERR_INVALID);
}

/* Byte keys through the order map: sorted strings map in order, and byte
 * ranges find the keys inside them. */
static void test_bytes(void) {
    static const char *const words[] = {"apple",  "apricot", "banana", "blue",
                                        "cherry", "kiwi",    "lemon",  "lime"};
    amq_builder *b = NULL;
    amq_filter *f = NULL;
    amq_diag d;
    bool maybe;
    /* "q000" .. "q000~" is a range of 0x7e000000 mapped keys */
    CHECK_OK(
        amq_builder_new("grafite:range=4294967296,keys=bytes", NULL, &b, &d));
    for (size_t i = 0; i < 8; i++)
        CHECK_OK(amq_builder_add(b, words[i], strlen(words[i])));
    CHECK_OK(amq_builder_finish(b, 0.01, &f, &d));
    amq_builder_free(b);
    CHECK(amq_range_key_form(f) == AMQ_RANGE_KEYS_BYTES);
    char desc[128];
    amq_filter_describe(f, desc, sizeof desc);
    CHECK(strstr(desc, ",keys=bytes") != NULL);
    for (size_t i = 0; i + 1 < 8; i++)
        CHECK(amq_range_key(words[i], strlen(words[i])) <=
              amq_range_key(words[i + 1], strlen(words[i + 1])));
    CHECK(amq_range_key("ab", 2) == amq_range_key("ab\0", 3));
    CHECK(amq_range_key("", 0) == 0);
    CHECK_OK(amq_range_query_bytes(f, "ba", 2, "bz", 2, &maybe));
    CHECK(maybe);
    CHECK_OK(amq_range_query_bytes(f, "lem", 3, "lemz", 4, &maybe));
    CHECK(maybe);
    CHECK(amq_filter_contains(f, "kiwi", 4));
    CHECK_STATUS(amq_range_query_bytes(f, "b", 1, "a", 1, &maybe),
                 AMQ_ERR_INVALID);
    CHECK_STATUS(amq_range_query_bytes(f, "b", 1, NULL, 0, &maybe),
                 AMQ_ERR_INVALID);
    unsigned fp = 0;
    char lo[8], hi[8];
    for (unsigned i = 0; i < 1000; i++) { /* "q000".."q999": no key there */
        snprintf(lo, sizeof lo, "q%03u", i);
        snprintf(hi, sizeof hi, "q%03u~", i);
        CHECK_OK(amq_range_query_bytes(f, lo, 4, hi, 5, &maybe));
        fp += maybe;
    }
    CHECK(fp < 20);
    amq_filter_free(f);
}

int main(void) {
    size_t n = check_quick() ? 20000 : 200000;
    test_divide();
    test_ef_reference();
    test_curve();
    test_bound(UNIFORM, n, 0.01, 1);
    test_bound(UNIFORM, n, 0.01, 64);
    test_bound(CLUSTERED, n, 0.01, 64);
    test_bound(GRID, n, 0.02, 200);
    test_bound(CLUSTERED, 3000, 0.001, 1024);
    test_frames();
    test_policy();
    test_bytes();
    return check_report("test_range");
}
