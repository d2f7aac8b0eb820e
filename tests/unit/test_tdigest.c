/*
 * test_tdigest.c — the merging t-digest (amq/sketch.h) against the exact
 * data: the exact rank of quantile(q) is within e of q and cdf(x) within e
 * of the exact rank of x (e as amq/sketch.h states it), on uniform, skewed,
 * clustered and sorted streams, for values added one by one, with weights,
 * and merged from parts; the ends are exact; the
 * frame round-trips to identical bytes and every damaged or forged frame is
 * refused; bad arguments change nothing.
 */
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "amq/amq.h"
#include "core/bits.h"
#include "core/frame.h"

#define PI 3.14159265358979323846

static double unit(uint64_t *s) {
    return (double)(check_next(s) >> 11) * 0x1p-53;
}

typedef enum {
    UNIFORM,
    EXPONENTIAL,
    NORMAL,
    CLUSTERED,
    ASCENDING,
    DESCENDING,
    NSHAPES
} shape;
static const char *const shape_names[] = {
    "uniform", "exponential", "normal", "clustered", "ascending", "descending"};

static void make_data(shape s, double *x, size_t n, uint64_t seed) {
    uint64_t r = seed;
    for (size_t i = 0; i < n; i++) {
        switch (s) {
        case UNIFORM: x[i] = unit(&r) * 1000.0 - 500.0; break;
        case EXPONENTIAL: x[i] = -log(1.0 - unit(&r)) * 3.0; break;
        case NORMAL: /* the sum of 12 uniforms */
            x[i] = 0.0;
            for (int k = 0; k < 12; k++)
                x[i] += unit(&r);
            x[i] -= 6.0;
            break;
        case CLUSTERED: /* 20 values, many times each */
            x[i] = (double)(check_next(&r) % 20) * 0.5;
            break;
        case ASCENDING: x[i] = (double)i; break;
        case DESCENDING: x[i] = (double)(n - i); break;
        default: break;
        }
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double err_bound(double q, double delta, size_t n) {
    return 2.0 * PI * sqrt(q * (1.0 - q)) / delta + 1.0 / (double)n;
}

/* The exact fraction below x plus half the fraction at x (sorted data). */
static double exact_cdf(const double *s, size_t n, double x) {
    size_t lo = 0, hi = n;
    while (lo < hi) { /* first >= x */
        size_t mid = lo + (hi - lo) / 2;
        if (s[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t below = lo;
    hi = n;
    while (lo < hi) { /* first > x */
        size_t mid = lo + (hi - lo) / 2;
        if (s[mid] <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return ((double)below + (double)(lo - below) / 2.0) / (double)n;
}

static const double qs[] = {0.0001, 0.001, 0.01, 0.05, 0.1,   0.25,  0.5,
                            0.75,   0.9,   0.95, 0.99, 0.999, 0.9999};

/* The exact rank interval of x: [fraction below x, fraction at or below]. */
static void rank_of(const double *s, size_t n, double x, double *lo,
                    double *hi) {
    double mid = exact_cdf(s, n, x);
    size_t a = 0, b = n;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (s[m] < x)
            a = m + 1;
        else
            b = m;
    }
    *lo = (double)a / (double)n;
    *hi = 2.0 * mid - *lo;
}

/* How far q is from [lo, hi], over the largest e between q and the
 * nearer end p (e is largest at 1/2 and falls towards both tails). */
static double miss(double q, double lo, double hi, double delta, size_t n) {
    double p = q < lo ? lo : q > hi ? hi : q;
    double a = p < q ? p : q, b = p < q ? q : p;
    double e = a <= 0.5 && b >= 0.5
                   ? err_bound(0.5, delta, n)
                   : fmax(err_bound(a, delta, n), err_bound(b, delta, n));
    return fabs(q - p) / e;
}

static double worst_q, worst_c; /* the largest misses seen (printed) */

/* Both guarantees on one digest of the sorted data s. */
static void check_accuracy(amq_tdigest *t, const double *s, size_t n,
                           const char *what) {
    double delta = amq_tdigest_compression(t);
    CHECK(amq_tdigest_count(t) == n);
    CHECK(amq_tdigest_min(t) == s[0] && amq_tdigest_max(t) == s[n - 1]);
    CHECK(amq_tdigest_quantile(t, 0.0) == s[0]);
    CHECK(amq_tdigest_quantile(t, 1.0) == s[n - 1]);
    double prev = -INFINITY;
    for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
        double q = qs[i], lo, hi;
        double est = amq_tdigest_quantile(t, q);
        rank_of(s, n, est, &lo, &hi);
        double mq = miss(q, lo, hi, delta, n);
        worst_q = mq > worst_q ? mq : worst_q;
        CHECK_MSG(mq <= 1.0, "%s: quantile(%g) = %.9g has rank [%.6f, %.6f]",
                  what, q, est, lo, hi);
        CHECK_MSG(est >= prev, "%s: quantile not monotone at %g", what, q);
        prev = est;
        /* cdf at the exact quantile */
        double x = s[(size_t)(q * (double)(n - 1))];
        double c = amq_tdigest_cdf(t, x);
        rank_of(s, n, x, &lo, &hi);
        double mc = miss(c, lo, hi, delta, n);
        worst_c = mc > worst_c ? mc : worst_c;
        CHECK_MSG(mc <= 1.0, "%s: cdf(%.9g) = %.6f, exact rank [%.6f, %.6f]",
                  what, x, c, lo, hi);
    }
    CHECK(amq_tdigest_cdf(t, s[0] - 1.0) == 0.0);
    CHECK(amq_tdigest_cdf(t, s[n - 1] + 1.0) == 1.0);
    /* the trimmed mean of the middle half against the exact one */
    double sum = 0.0;
    size_t a = n / 4, b = 3 * n / 4;
    for (size_t i = a; i < b; i++)
        sum += s[i];
    double exact = sum / (double)(b - a);
    double tm = amq_tdigest_trimmed_mean(t, 0.25, 0.75);
    double spread = s[3 * n / 4] - s[n / 4];
    CHECK_MSG(fabs(tm - exact) <= 0.02 * spread + 1e-9,
              "%s: trimmed mean %.9g, exact %.9g", what, tm, exact);
    /* the full trimmed mean is the mean */
    sum = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += s[i];
    CHECK(fabs(amq_tdigest_trimmed_mean(t, 0.0, 1.0) - sum / (double)n) <=
          1e-9 * (fabs(sum / (double)n) + 1.0));
    size_t cen = amq_tdigest_centroids(t);
    CHECK_MSG(cen <= (size_t)delta + 2, "%s: %zu centroids at delta %g", what,
              cen, delta);
}

static void test_streams(void) {
    const size_t n = check_quick() ? 20000 : 200000;
    double *x = malloc(n * sizeof *x), *s = malloc(n * sizeof *s);
    const double deltas[] = {100.0, 30.0, 500.0};
    for (int sh = 0; sh < NSHAPES; sh++)
        for (size_t d = 0; d < sizeof deltas / sizeof deltas[0]; d++) {
            char what[64];
            check_seed = 100 + (uint64_t)sh;
            make_data((shape)sh, x, n, check_seed);
            memcpy(s, x, n * sizeof *x);
            qsort(s, n, sizeof *s, cmp_double);
            /* one by one */
            amq_tdigest *t = NULL;
            CHECK_OK(amq_tdigest_new(deltas[d], NULL, &t));
            for (size_t i = 0; i < n; i++)
                CHECK_OK(amq_tdigest_add(t, x[i], 1));
            snprintf(what, sizeof what, "%s, delta %g", shape_names[sh],
                     deltas[d]);
            check_accuracy(t, s, n, what);
            /* ten parts merged */
            amq_tdigest *parts[10], *all = NULL;
            CHECK_OK(amq_tdigest_new(deltas[d], NULL, &all));
            for (int p = 0; p < 10; p++) {
                CHECK_OK(amq_tdigest_new(deltas[d], NULL, &parts[p]));
                for (size_t i = (size_t)p; i < n; i += 10)
                    CHECK_OK(amq_tdigest_add(parts[p], x[i], 1));
                CHECK_OK(amq_tdigest_merge(all, parts[p]));
                amq_tdigest_free(parts[p]);
            }
            snprintf(what, sizeof what, "%s, delta %g, merged", shape_names[sh],
                     deltas[d]);
            check_accuracy(all, s, n, what);
            amq_tdigest_free(all);
            amq_tdigest_free(t);
        }
    free(x);
    free(s);
}

/* Weights count as repeated values: a value with weight w is w copies. */
static void test_weights(void) {
    const size_t distinct = 2000;
    size_t n = 0;
    uint64_t r = 7;
    double *s = malloc(distinct * 16 * sizeof *s);
    amq_tdigest *t = NULL;
    CHECK_OK(amq_tdigest_new(0, NULL, &t));
    CHECK(amq_tdigest_compression(t) == AMQ_TDIGEST_DEFAULT_COMPRESSION);
    for (size_t i = 0; i < distinct; i++) {
        double v = unit(&r) * 100.0;
        uint64_t w = 1 + check_next(&r) % 16;
        CHECK_OK(amq_tdigest_add(t, v, w));
        for (uint64_t k = 0; k < w; k++)
            s[n++] = v;
    }
    qsort(s, n, sizeof *s, cmp_double);
    check_accuracy(t, s, n, "weighted");
    amq_tdigest_free(t);
    free(s);
}

/* Small digests are exact where they can be: singletons, one value. */
static void test_small(void) {
    amq_tdigest *t = NULL;
    CHECK_OK(amq_tdigest_new(100, NULL, &t));
    CHECK(isnan(amq_tdigest_quantile(t, 0.5)) && isnan(amq_tdigest_cdf(t, 1)));
    CHECK(isnan(amq_tdigest_min(t)) && isnan(amq_tdigest_max(t)));
    CHECK(isnan(amq_tdigest_trimmed_mean(t, 0.1, 0.9)));
    CHECK_OK(amq_tdigest_add(t, 5.0, 1));
    CHECK(amq_tdigest_quantile(t, 0.3) == 5.0 &&
          amq_tdigest_cdf(t, 5.0) == 0.5);
    CHECK(amq_tdigest_cdf(t, 4.9) == 0.0 && amq_tdigest_cdf(t, 5.1) == 1.0);
    /* 1..10, each once: every quantile is one of the values */
    amq_tdigest_reset(t);
    CHECK(amq_tdigest_count(t) == 0 && isnan(amq_tdigest_min(t)));
    for (int v = 10; v >= 1; v--)
        CHECK_OK(amq_tdigest_add(t, v, 1));
    CHECK(amq_tdigest_centroids(t) == 10);
    for (int i = 0; i <= 100; i++) {
        double q = i / 100.0, est = amq_tdigest_quantile(t, q);
        double want = q * 10 < 1 ? 1 : floor(q * 10 - 1e-12) + 1;
        if (q == 1.0)
            want = 10;
        CHECK_MSG(est == want || est == want + 1 || est == want - 1,
                  "quantile(%g) of 1..10 = %g", q, est);
        CHECK(est == floor(est));
    }
    CHECK(amq_tdigest_cdf(t, 3.0) == 0.25); /* 2 below, half of one */
    CHECK(amq_tdigest_cdf(t, 3.5) >= 0.25 && amq_tdigest_cdf(t, 3.5) <= 0.35);
    CHECK(amq_tdigest_trimmed_mean(t, 0.0, 1.0) == 5.5);
    CHECK(amq_tdigest_trimmed_mean(t, 0.1, 0.2) == 2.0);
    amq_tdigest_free(t);

    /* repeated values, all singletons: ranks and values are exact */
    static const double v[] = {1, 2, 2, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 5};
    CHECK_OK(amq_tdigest_new(1000, NULL, &t));
    for (size_t i = 0; i < 15; i++)
        CHECK_OK(amq_tdigest_add(t, v[i], 1));
    for (size_t r = 0; r < 15; r++)
        CHECK_MSG(amq_tdigest_value_at(t, (double)r) == v[r],
                  "value_at(%zu) = %g", r, amq_tdigest_value_at(t, (double)r));
    static const double deciles[] = {1, 2, 3, 3, 4, 4, 4, 5, 5, 5, 5};
    for (int i = 0; i <= 10; i++)
        CHECK(amq_tdigest_quantile(t, i / 10.0) == deciles[i]);
    CHECK(amq_tdigest_rank(t, 3.0) == 4.5); /* 3 below, half of 3 at */
    CHECK(amq_tdigest_rank(t, 0.5) == 0.0 && amq_tdigest_rank(t, 6) == 15.0);
    CHECK(isnan(amq_tdigest_value_at(t, 15.5)) &&
          isnan(amq_tdigest_value_at(t, -1)));
    amq_tdigest_info info;
    amq_tdigest_get_info(t, &info);
    CHECK(info.compression == 1000 &&
          info.merged_nodes + info.unmerged_nodes == 15);
    CHECK(info.merged_weight + info.unmerged_weight == 15 && info.merges == 0);
    CHECK(info.capacity >= 15 && info.bytes > 15 * 16);
    amq_tdigest_free(t);
}

static void test_bad_arguments(void) {
    amq_tdigest *t = NULL;
    CHECK_STATUS(amq_tdigest_new(0.5, NULL, &t), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_tdigest_new(NAN, NULL, &t), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_tdigest_new(1e6, NULL, &t), AMQ_ERR_INVALID);
    CHECK(t == NULL);
    CHECK_OK(amq_tdigest_new(50, NULL, &t));
    CHECK_OK(amq_tdigest_add(t, 1.0, 3));
    CHECK_STATUS(amq_tdigest_add(t, NAN, 1), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_tdigest_add(t, INFINITY, 1), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_tdigest_add(t, 2.0, 0), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_tdigest_add(t, 2.0, UINT64_C(1) << 53), AMQ_ERR_OVERFLOW);
    CHECK(amq_tdigest_count(t) == 3 && amq_tdigest_max(t) == 1.0);
    CHECK(isnan(amq_tdigest_quantile(t, -0.1)) &&
          isnan(amq_tdigest_quantile(t, 1.1)));
    CHECK(isnan(amq_tdigest_trimmed_mean(t, 0.5, 0.5)));
    /* a merge that would overflow changes nothing */
    amq_tdigest *big = NULL;
    CHECK_OK(amq_tdigest_new(50, NULL, &big));
    CHECK_OK(amq_tdigest_add(big, 9.0, (UINT64_C(1) << 53) - 2));
    CHECK_STATUS(amq_tdigest_merge(t, big), AMQ_ERR_OVERFLOW);
    CHECK(amq_tdigest_count(t) == 3 && amq_tdigest_max(t) == 1.0);
    /* merging a digest into itself doubles every weight */
    CHECK_OK(amq_tdigest_merge(t, t));
    CHECK(amq_tdigest_count(t) == 6 && amq_tdigest_quantile(t, 0.5) == 1.0);
    amq_tdigest_free(big);
    amq_tdigest_free(t);
    amq_tdigest_free(NULL);
}

static uint8_t *save(amq_tdigest *t, size_t *len) {
    *len = amq_tdigest_serialized_size(t);
    uint8_t *buf = malloc(*len);
    size_t w = 1;
    CHECK_STATUS(amq_tdigest_save(t, buf, *len - 1, &w), AMQ_ERR_BUFFER);
    CHECK(w == 0);
    CHECK_OK(amq_tdigest_save(t, buf, *len, &w));
    CHECK(w == *len);
    return buf;
}

/* A forged frame: a word of the payload rewritten (8 or 4 bytes), the
 * checksum made right. */
static amq_status load_forged(const uint8_t *buf, size_t len, size_t at,
                              uint64_t word, unsigned bytes) {
    uint8_t *copy = malloc(len);
    memcpy(copy, buf, len);
    if (bytes == 4)
        amq__put_u32(copy + at, (uint32_t)word);
    else
        amq__put_u64(copy + at, word);
    amq__frame_seal(copy, len);
    amq_tdigest *t = NULL;
    amq_status st = amq_tdigest_load(copy, len, NULL, &t, NULL);
    CHECK((st == AMQ_OK) == (t != NULL));
    amq_tdigest_free(t);
    free(copy);
    return st;
}

static void test_frame(void) {
    amq_tdigest *t = NULL, *u = NULL;
    uint64_t r = 11;
    CHECK_OK(amq_tdigest_new(60, NULL, &t));
    for (int i = 0; i < 5000; i++)
        CHECK_OK(amq_tdigest_add(t, unit(&r) * 10, 1 + check_next(&r) % 3));
    size_t len, len2;
    uint8_t *buf = save(t, &len);
    CHECK_OK(amq_tdigest_load(buf, len, NULL, &u, NULL));
    uint8_t *buf2 = save(u, &len2);
    CHECK(len == len2 && memcmp(buf, buf2, len) == 0);
    for (int i = 0; i <= 20; i++)
        CHECK(amq_tdigest_quantile(t, i / 20.0) ==
              amq_tdigest_quantile(u, i / 20.0));
    /* both go on the same way */
    for (int i = 0; i < 3000; i++) {
        double v = unit(&r);
        CHECK_OK(amq_tdigest_add(t, v, 1));
        CHECK_OK(amq_tdigest_add(u, v, 1));
    }
    free(buf2);
    buf2 = save(u, &len2);
    free(buf);
    buf = save(t, &len);
    CHECK(len == len2 && memcmp(buf, buf2, len) == 0);
    amq_tdigest_free(u);
    u = NULL;
    /* a filter reader names the reader; a filter frame is not a digest */
    amq_filter *f = NULL;
    amq_diag diag;
    CHECK_STATUS(amq_filter_load(buf, len, NULL, &f, &diag), AMQ_ERR_KIND);
    CHECK(strstr(diag.message, "t-digest") != NULL);
    CHECK_OK(amq_filter_new("bloom", 100, 0.01, NULL, &f, NULL));
    size_t flen;
    uint8_t *fb = check_frame(f, &flen);
    CHECK_STATUS(amq_tdigest_load(fb, flen, NULL, &u, NULL), AMQ_ERR_KIND);
    free(fb);
    amq_filter_free(f);
    /* every flipped byte and every truncation is refused */
    for (size_t i = 0; i < len; i++) {
        buf[i] ^= 0x20;
        CHECK(amq_tdigest_load(buf, len, NULL, &u, NULL) != AMQ_OK);
        CHECK(u == NULL);
        buf[i] ^= 0x20;
    }
    for (size_t cut = 0; cut < len; cut += 7)
        CHECK(amq_tdigest_load(buf, cut, NULL, &u, NULL) != AMQ_OK);
    /* forged fields with a right checksum */
    const size_t P = 128; /* payload offset: header 64, params padded to 64 */
    size_t m = amq__get_u32(buf + P + 24), b = amq__get_u32(buf + P + 28);
    CHECK(len >= P + 40 + 16 * (m + b));
    CHECK_OK(load_forged(buf, len, P + 24, m, 4)); /* unchanged: loads */
    CHECK_STATUS(load_forged(buf, len, P + 24, m + 1, 4), AMQ_ERR_CORRUPT);
    CHECK_STATUS(load_forged(buf, len, P + 28, b + 1, 4), AMQ_ERR_CORRUPT);
    CHECK_STATUS(
        load_forged(buf, len, P + 16, amq__get_u64(buf + P + 16) + 1, 8),
        AMQ_ERR_CORRUPT);
    double nan = NAN, far = 1e300;
    uint64_t word;
    memcpy(&word, &nan, 8);
    CHECK_STATUS(load_forged(buf, len, P + 40, word, 8), AMQ_ERR_CORRUPT);
    memcpy(&word, &far, 8);
    CHECK_STATUS(load_forged(buf, len, P + 40, word, 8), AMQ_ERR_CORRUPT);
    CHECK_STATUS(load_forged(buf, len, P + 48, 0, 8), AMQ_ERR_CORRUPT);
    CHECK_STATUS(load_forged(buf, len, 64, 0, 8),
                 AMQ_ERR_CORRUPT); /* delta 0 */
    if (b > 0) {                   /* a buffered value past the maximum */
        CHECK_STATUS(load_forged(buf, len, P + 40 + 16 * m, word, 8),
                     AMQ_ERR_CORRUPT);
    }
    /* centroids out of order: swap the first two means */
    if (m >= 2) {
        uint64_t m0 = amq__get_u64(buf + P + 40),
                 m1 = amq__get_u64(buf + P + 56);
        if (m0 != m1) {
            uint8_t *copy = malloc(len);
            memcpy(copy, buf, len);
            amq__put_u64(copy + P + 40, m1);
            amq__put_u64(copy + P + 56, m0);
            amq__frame_seal(copy, len);
            CHECK_STATUS(amq_tdigest_load(copy, len, NULL, &u, NULL),
                         AMQ_ERR_CORRUPT);
            free(copy);
        }
    }
    /* an empty digest round-trips */
    amq_tdigest_reset(t);
    free(buf);
    buf = save(t, &len);
    CHECK_OK(amq_tdigest_load(buf, len, NULL, &u, NULL));
    CHECK(amq_tdigest_count(u) == 0 && amq_tdigest_compression(u) == 60);
    amq_tdigest_free(u);
    free(buf);
    free(buf2);
    amq_tdigest_free(t);
}

/* The state depends on the updates alone: queries in between change no
 * byte of the frame, and a digest loaded mid-stream goes on identically. */
static void test_queries_change_nothing(void) {
    amq_tdigest *a = NULL, *b = NULL;
    CHECK_OK(amq_tdigest_new(40, NULL, &a));
    CHECK_OK(amq_tdigest_new(40, NULL, &b));
    uint64_t r = 5;
    for (int i = 0; i < 3000; i++) {
        double v = unit(&r);
        CHECK_OK(amq_tdigest_add(a, v, 1));
        CHECK_OK(amq_tdigest_add(b, v, 1));
        if (i % 37 == 0) {
            (void)amq_tdigest_quantile(b, 0.5);
            (void)amq_tdigest_cdf(b, 0.25);
            (void)amq_tdigest_centroids(b);
        }
    }
    size_t la, lb;
    uint8_t *fa = save(a, &la), *fb = save(b, &lb);
    CHECK(la == lb && memcmp(fa, fb, la) == 0);
    CHECK(amq_tdigest_quantile(a, 0.3) == amq_tdigest_quantile(b, 0.3));
    free(fa);
    free(fb);
    amq_tdigest_free(a);
    amq_tdigest_free(b);
}

/* Point masses larger than a centroid: a tenth of the stream on each of
 * three values, the rest lognormal. An answer interpolated between two
 * neighbouring centroids has its exact rank within their two intervals,
 * so it misses by at most their sizes, 2e (docs/structures.md); at a
 * mass's edge it reaches past e, one answer in a dense grid of q. */
static double worst_mass;

static void test_point_masses(void) {
    enum { N = 60000 };
    static double x[N], s[N];
    const double deltas[] = {100.0, 300.0, 1000.0}, masses[] = {7, 12.5, 20};
    uint64_t z = 99;
    for (size_t i = 0; i < N; i++) {
        z = z * 6364136223846793005ull + 1442695040888963407ull;
        double u = ((double)(z >> 11) + 0.5) * 0x1p-53;
        z = z * 6364136223846793005ull + 1442695040888963407ull;
        double v = ((double)(z >> 11) + 0.5) * 0x1p-53;
        x[i] = i % 10 < 3
                   ? masses[i % 10]
                   : exp(2 + 0.6 * sqrt(-2 * log(u)) * cos(6.283185 * v));
    }
    memcpy(s, x, sizeof x);
    qsort(s, N, sizeof *s, cmp_double);
    for (size_t d = 0; d < 3; d++) {
        amq_tdigest *t;
        CHECK_OK(amq_tdigest_new(deltas[d], NULL, &t));
        for (size_t i = 0; i < N; i++)
            CHECK_OK(amq_tdigest_add(t, x[i], 1));
        for (int i = 1; i < 2000; i++) {
            double q = i / 2000.0, lo, hi, est = amq_tdigest_quantile(t, q);
            rank_of(s, N, est, &lo, &hi);
            double mq = miss(q, lo, hi, deltas[d], N);
            worst_mass = mq > worst_mass ? mq : worst_mass;
            CHECK_MSG(mq <= 2.0,
                      "delta %g: quantile(%g) = %.9g, rank [%.6f, "
                      "%.6f]",
                      deltas[d], q, est, lo, hi);
        }
        /* inside a mass, the mass's value exactly */
        for (int k = 0; k < 3; k++) {
            double lo, hi;
            rank_of(s, N, masses[k], &lo, &hi);
            CHECK_MSG(amq_tdigest_quantile(t, (lo + hi) / 2) == masses[k],
                      "delta %g: the middle of the mass at %g", deltas[d],
                      masses[k]);
        }
        amq_tdigest_free(t);
    }
}

/* The entries (mean, weight) of a digest's frame, merged and buffered. */
static size_t frame_entries(const amq_tdigest *t, double *mean, uint64_t *w,
                            size_t cap) {
    size_t len = amq_tdigest_serialized_size(t);
    uint8_t *buf = malloc(len);
    amq_tdigest_info info;
    CHECK(buf != NULL);
    CHECK_OK(amq_tdigest_save(t, buf, len, NULL));
    amq_tdigest_get_info(t, &info);
    size_t m = (size_t)(info.merged_nodes + info.unmerged_nodes);
    CHECK(m <= cap);
    /* the entries end the payload, right before the frame's checksum */
    const uint8_t *e = buf + len - 8 - m * 16;
    for (size_t i = 0; i < m && i < cap; i++) {
        memcpy(&mean[i], e + 16 * i, 8);
        memcpy(&w[i], e + 16 * i + 8, 8);
    }
    free(buf);
    return m;
}

/* A digest made from another digest's centroids keeps them as they are
 * (its frame holds the same entries, ends and total) and answers within
 * the digest's guarantees on the original data; more centroids than the
 * array holds are merged by the digest's rule; bad lists are refused. */
static void test_from_centroids(void) {
    enum { N = 20000, CAP = 4096 };
    static double x[N], s[N], mean[CAP], mean2[CAP];
    static uint64_t w[CAP], w2[CAP];
    amq_tdigest *t, *u, *c;
    make_data(UNIFORM, x, N, 7);
    memcpy(s, x, sizeof x);
    qsort(s, N, sizeof *s, cmp_double);
    CHECK_OK(amq_tdigest_new(100, NULL, &t));
    for (size_t i = 0; i < N; i++)
        CHECK_OK(amq_tdigest_add(t, x[i], 1));
    /* merging into an empty digest leaves t's merged view as entries */
    CHECK_OK(amq_tdigest_new(100, NULL, &u));
    CHECK_OK(amq_tdigest_merge(u, t));
    size_t m = frame_entries(u, mean, w, CAP);
    CHECK(m > 10);
    double lo = amq_tdigest_min(t), hi = amq_tdigest_max(t);
    CHECK_OK(amq_tdigest_from_centroids(100, mean, w, m, lo, hi, 0, NULL, &c));
    CHECK(amq_tdigest_count(c) == N && amq_tdigest_centroids(c) == m);
    CHECK(amq_tdigest_min(c) == lo && amq_tdigest_max(c) == hi);
    CHECK(frame_entries(c, mean2, w2, CAP) == m);
    CHECK(memcmp(mean, mean2, m * sizeof *mean) == 0 &&
          memcmp(w, w2, m * sizeof *w) == 0);
    check_accuracy(c, s, N, "from centroids");
    amq_tdigest_free(c);
    /* more centroids than compression 5 holds: merged, count kept; the
     * merges so far carry over */
    CHECK_OK(amq_tdigest_from_centroids(5, mean, w, m, lo, hi, 7, NULL, &c));
    amq_tdigest_info ci;
    amq_tdigest_get_info(c, &ci);
    CHECK(ci.merges >= 7);
    CHECK(amq_tdigest_count(c) == N && amq_tdigest_centroids(c) < m);
    CHECK(amq_tdigest_min(c) == lo && amq_tdigest_max(c) == hi);
    amq_tdigest_free(c);
    /* refusals */
    double bad_mean[3] = {1, 3, 2}, ok_mean[3] = {1, 2, 3};
    uint64_t one[3] = {1, 1, 1}, zero[3] = {1, 0, 1};
    CHECK_STATUS(
        amq_tdigest_from_centroids(100, bad_mean, one, 3, 0, 5, 0, NULL, &c),
        AMQ_ERR_INVALID);
    CHECK_STATUS(
        amq_tdigest_from_centroids(100, ok_mean, zero, 3, 0, 5, 0, NULL, &c),
        AMQ_ERR_INVALID);
    CHECK_STATUS(
        amq_tdigest_from_centroids(100, ok_mean, one, 3, 1.5, 5, 0, NULL, &c),
        AMQ_ERR_INVALID);
    CHECK_STATUS(
        amq_tdigest_from_centroids(0.5, ok_mean, one, 3, 0, 5, 0, NULL, &c),
        AMQ_ERR_INVALID);
    CHECK_OK(amq_tdigest_from_centroids(100, NULL, NULL, 0, 0, 0, 0, NULL, &c));
    CHECK(amq_tdigest_count(c) == 0 && isnan(amq_tdigest_quantile(c, 0.5)));
    amq_tdigest_free(c);
    amq_tdigest_free(t);
    amq_tdigest_free(u);
}

int main(void) {
    test_point_masses();
    test_from_centroids();
    test_small();
    test_bad_arguments();
    test_weights();
    test_frame();
    test_queries_change_nothing();
    test_streams();
    printf("largest miss over e(q): quantile %.3f, cdf %.3f; at point "
           "masses %.3f\n",
           worst_q, worst_c, worst_mass);
    return check_report("test_tdigest");
}
