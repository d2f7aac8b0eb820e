/*
 * test_spectral.c — the spectral Bloom filter beyond the contract suite:
 * estimates never undercount (both insert rules, many seeds, repeated
 * probes), minimal increase is at least as accurate as minimum selection at
 * every load (Cohen & Matias's claim), MI refuses deletes and MS deletes
 * exactly, and union keeps estimates above the summed multiplicities; in
 * both layouts (blocked and classic), with the default layout per width.
 * The error-vs-load table in docs/parts/counting.md is this test's output.
 */
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "amq/counting.h"

enum { KEYS = 4000 };
/* The layout the tests below run in (main runs them in both). */
static const char *layout = "classic";
static uint64_t keys[KEYS];
static uint32_t mult[KEYS];

/* Zipf-like multiplicities: key i gets about 1 + 60 / (i + 1) copies,
 * plus noise, so a few heavy keys share counters with many light ones. */
static uint64_t make_stream(uint64_t seed, size_t n) {
    uint64_t rng = seed, total = 0;
    for (size_t i = 0; i < n; i++) {
        keys[i] = check_next(&rng);
        mult[i] =
            1 + (uint32_t)(60 / (i + 1)) + (uint32_t)(check_next(&rng) % 3);
        total += mult[i];
    }
    return total;
}

typedef struct err_stats {
    double mean_rel; /* mean (estimate - true) / true */
    uint64_t under;  /* estimates below the true count: must stay 0 */
} err_stats;

/* spectral:m=M,k=K,width=W,mode=MODE. */
static amq_filter *make(uint64_t m, unsigned k, unsigned width,
                        amq_spectral_mode mode) {
    char spec[96];
    amq_filter *f = NULL;
    amq_diag d;
    snprintf(spec, sizeof spec,
             "spectral:m=%llu,k=%u,width=%u,mode=%s,layout=%s",
             (unsigned long long)m, k, width,
             mode == AMQ_SPECTRAL_MS ? "ms" : "mi", layout);
    amq_status st = amq_filter_new(spec, 0, 0, NULL, &f, &d);
    CHECK_MSG(st == AMQ_OK, "new(%s): %s %.100s", spec, amq_status_name(st),
              st == AMQ_OK ? "" : d.message);
    CHECK(f == NULL || amq_spectral_get_mode(amq_spectral_of(f)) == mode);
    return f;
}

/* The key's multiplicity estimate (checked to succeed). */
static uint64_t count(const amq_filter *f, uint64_t h) {
    uint64_t n = 0;
    CHECK_OK(amq_filter_count_hash(f, h, &n));
    return n;
}

static err_stats run(amq_spectral_mode mode, uint64_t m, unsigned k, size_t n,
                     uint64_t seed) {
    err_stats e = {0, 0};
    amq_filter *s = make(m, k, 16, mode);
    if (s == NULL)
        return e;
    make_stream(seed, n);
    /* Interleave the copies so MI sees keys in mixed order. */
    uint32_t left[KEYS];
    memcpy(left, mult, n * sizeof *left);
    uint64_t rng = seed ^ 0xabcdef, remaining = 0;
    for (size_t i = 0; i < n; i++)
        remaining += left[i];
    while (remaining > 0) {
        size_t i = (size_t)(check_next(&rng) % n);
        if (left[i] == 0)
            continue;
        CHECK_OK(amq_filter_add_hash(s, keys[i]));
        left[i]--;
        remaining--;
    }
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t c = count(s, keys[i]);
        e.under += c < mult[i];
        sum += ((double)c - mult[i]) / mult[i];
    }
    e.mean_rel = sum / (double)n;
    amq_filter_free(s);
    return e;
}

/* Never an undercount, and MI <= MS in mean relative error, at loads from
 * light to heavy (keys per counter). */
static void test_error_vs_load(void) {
    static const double loads[] = {0.05, 0.1, 0.2, 0.4};
    unsigned seeds = check_quick() ? 2 : 8;
    const uint64_t m = 8192;
    const unsigned k = 4;
    printf("layout=%s\nkeys/counter  MI mean rel. overcount  MS mean rel. "
           "overcount\n",
           layout);
    for (size_t l = 0; l < sizeof loads / sizeof loads[0]; l++) {
        size_t n = (size_t)(loads[l] * (double)m);
        double mi = 0, ms = 0;
        for (uint64_t s = 1; s <= seeds; s++) {
            check_seed = 100 * l + s;
            err_stats a = run(AMQ_SPECTRAL_MI, m, k, n, check_seed);
            err_stats b = run(AMQ_SPECTRAL_MS, m, k, n, check_seed);
            CHECK_MSG(a.under == 0 && b.under == 0,
                      "load %g: %llu MI and %llu MS undercounts", loads[l],
                      (unsigned long long)a.under, (unsigned long long)b.under);
            mi += a.mean_rel / seeds;
            ms += b.mean_rel / seeds;
        }
        printf("%12.2f  %22.4f  %22.4f\n", loads[l], mi, ms);
        CHECK_MSG(mi <= ms, "load %g: MI error %g above MS %g", loads[l], mi,
                  ms);
        /* Light load: almost exact. */
        if (loads[l] <= 0.05)
            CHECK_MSG(mi < 0.01, "load %g: MI error %g", loads[l], mi);
    }
}

/* Tiny tables where probes repeat: still never an undercount. */
static void test_repeated_probes(void) {
    for (uint64_t seed = 1; seed <= 20; seed++) {
        check_seed = seed;
        for (int mode = 0; mode < 2; mode++) {
            err_stats e = run((amq_spectral_mode)mode, 32, 12, 40, seed);
            CHECK_MSG(e.under == 0, "mode %d: %llu undercounts", mode,
                      (unsigned long long)e.under);
        }
    }
}

static void test_remove(void) {
    check_seed = 31;
    amq_filter *mi = NULL, *ms = NULL;
    CHECK_OK(amq_filter_new("spectral:mode=mi,width=8", 1000, 0.01, NULL, &mi,
                            NULL));
    CHECK_OK(amq_filter_new("spectral:mode=ms,width=8", 1000, 0.01, NULL, &ms,
                            NULL));
    if (mi == NULL || ms == NULL)
        goto out;
    uint64_t rng = 31, x = check_next(&rng);
    for (int i = 0; i < 500; i++) {
        uint64_t y = check_next(&rng);
        CHECK_OK(amq_filter_add_hash(mi, y));
        CHECK_OK(amq_filter_add_hash(ms, y));
    }
    CHECK_OK(amq_filter_add_hash(mi, x));
    CHECK_STATUS(amq_filter_remove_hash(mi, x), AMQ_ERR_UNSUPPORTED);
    CHECK(amq_filter_items(mi) == 501);
    for (int i = 0; i < 5; i++)
        CHECK_OK(amq_filter_add_hash(ms, x));
    CHECK(count(ms, x) >= 5);
    for (int i = 0; i < 5; i++)
        CHECK_OK(amq_filter_remove_hash(ms, x));
    CHECK(amq_filter_items(ms) == 500);
    CHECK(amq_spectral_get_mode(amq_spectral_of(ms)) == AMQ_SPECTRAL_MS);
    CHECK(amq_spectral_get_mode(amq_spectral_of(mi)) == AMQ_SPECTRAL_MI);
    CHECK(amq_spectral_of(NULL) == NULL);
    CHECK((amq_filter_caps(ms) & AMQ_CAP_REMOVE) != 0 &&
          (amq_filter_caps(mi) & AMQ_CAP_REMOVE) == 0);
    /* Through the generic interface: mode=ms removes, mode=mi refuses. */
    amq_filter *f = NULL, *g = NULL;
    CHECK_OK(amq_filter_new("spectral:mode=ms", 100, 0.01, NULL, &f, NULL));
    CHECK_OK(amq_filter_new("spectral", 100, 0.01, NULL, &g, NULL));
    if (f && g) {
        CHECK_OK(amq_filter_add_hash(f, 7));
        CHECK_OK(amq_filter_add_hash(g, 7));
        CHECK_OK(amq_filter_remove_hash(f, 7));
        CHECK_STATUS(amq_filter_remove_hash(f, 7), AMQ_ERR_NOT_FOUND);
        CHECK_STATUS(amq_filter_remove_hash(g, 7), AMQ_ERR_UNSUPPORTED);
        CHECK_STATUS(amq_filter_union(f, g), AMQ_ERR_INCOMPATIBLE);
        char buf[96];
        amq_filter_describe(f, buf, sizeof buf);
        CHECK_MSG(strstr(buf, ",width=8,mode=ms") != NULL, "%s", buf);
    }
    amq_filter_free(f);
    amq_filter_free(g);
    amq_diag d;
    f = NULL;
    CHECK_STATUS(amq_filter_new("spectral:mode=xx", 100, 0.01, NULL, &f, &d),
                 AMQ_ERR_SPEC);
    CHECK_STATUS(amq_filter_new("spectral:width=12", 100, 0.01, NULL, &f, &d),
                 AMQ_ERR_SPEC);
out:
    amq_filter_free(mi);
    amq_filter_free(ms);
}

/* Union: estimates of the merged filter cover the summed counts. */
static void test_union(void) {
    for (int mode = 0; mode < 2; mode++) {
        check_seed = 40 + mode;
        amq_filter *a = make(4096, 4, 16, (amq_spectral_mode)mode);
        amq_filter *b = make(4096, 4, 16, (amq_spectral_mode)mode);
        if (a && b) {
            make_stream(40, 1000);
            for (size_t i = 0; i < 1000; i++)
                for (uint32_t c = 0; c < mult[i]; c++)
                    CHECK_OK(amq_filter_add_hash(c % 2 ? a : b, keys[i]));
            CHECK_OK(amq_filter_union(a, b));
            uint64_t under = 0;
            for (size_t i = 0; i < 1000; i++)
                under += count(a, keys[i]) < mult[i];
            CHECK(under == 0);
        }
        amq_filter_free(a);
        amq_filter_free(b);
    }
}

/* Narrow counters saturate: the estimate says so (UINT64_MAX). */
static void test_saturation(void) {
    check_seed = 50;
    amq_filter *s = make(256, 3, 4, AMQ_SPECTRAL_MI);
    const amq_spectral *t = amq_spectral_of(s);
    CHECK(t != NULL);
    if (t == NULL) {
        amq_filter_free(s);
        return;
    }
    for (int i = 0; i < 14; i++)
        CHECK_OK(amq_filter_add_hash(s, 99));
    CHECK(count(s, 99) == 14);
    CHECK(amq_spectral_saturated(t) == 0);
    CHECK_OK(amq_filter_add_hash(s, 99));
    CHECK(count(s, 99) == UINT64_MAX);
    CHECK(amq_spectral_saturated(t) >= 1);
    amq_filter_free(s);
}

/* The default layout by width, the getter, and what the blocked layout
 * refuses. */
static void test_layouts(void) {
    static const struct {
        const char *spec;
        bool blocked;
    } cases[] = {{"spectral", true},
                 {"spectral:width=4", true},
                 {"spectral:width=16", false},
                 {"spectral:width=32", false},
                 {"spectral:width=16,layout=blocked", true},
                 {"spectral:layout=classic", false}};
    check_seed = 30;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        amq_filter *f = NULL;
        CHECK_OK(amq_filter_new(cases[i].spec, 1000, 0.01, NULL, &f, NULL));
        const amq_spectral *s = amq_spectral_of(f);
        CHECK_MSG(s != NULL && amq_spectral_blocked(s) == cases[i].blocked,
                  "%s", cases[i].spec);
        amq_filter_free(f);
    }
    amq_filter *f = NULL;
    CHECK_STATUS(amq_filter_new("spectral:k=20", 1000, 0.01, NULL, &f, NULL),
                 AMQ_ERR_SPEC);
    CHECK_OK(amq_filter_new("spectral:k=20,layout=classic", 1000, 0.01, NULL,
                            &f, NULL));
    amq_filter_free(f);
}

/* The updates' fast paths (blocked: the block found once) give the same
 * bytes as the reference loop that AMQ_OPT_SCALAR keeps, over a stream
 * with repeats, in every mode and blocked width. */
static void test_fast_vs_reference(void) {
    static const char *const specs[] = {
        "spectral:m=4096,k=5", "spectral:m=4096,k=16,width=4",
        "spectral:m=2048,k=7,width=16,layout=blocked",
        "spectral:m=1024,k=3,width=32,layout=blocked",
        "spectral:m=4096,k=6,mode=ms"};
    amq_options scalar;
    memset(&scalar, 0, sizeof scalar);
    scalar.flags = AMQ_OPT_SCALAR;
    check_seed = 31;
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        amq_filter *a = NULL, *b = NULL;
        CHECK_OK(amq_filter_new(specs[i], 0, 0, NULL, &a, NULL));
        CHECK_OK(amq_filter_new(specs[i], 0, 0, &scalar, &b, NULL));
        if (a == NULL || b == NULL) {
            amq_filter_free(a);
            amq_filter_free(b);
            continue;
        }
        uint64_t rng = 31 + i, h[3000];
        for (int j = 0; j < 3000; j++)
            h[j] = j % 3 == 2 ? h[j / 2] : check_next(&rng);
        size_t done = 0;
        CHECK_OK(amq_filter_add_batch(a, h, 1500, &done));
        for (int j = 0; j < 1500; j++)
            CHECK_OK(amq_filter_add_hash(b, h[j]));
        for (int j = 1500; j < 3000; j++) {
            CHECK_OK(amq_filter_add_hash(a, h[j]));
            CHECK_OK(amq_filter_add_hash(b, h[j]));
        }
        CHECK_MSG(check_same_frame(a, b), "%s: fast and reference differ",
                  specs[i]);
        amq_filter_free(a);
        amq_filter_free(b);
    }
}

int main(void) {
    static const char *const layouts[] = {"classic", "blocked"};
    for (int l = 0; l < 2; l++) {
        layout = layouts[l];
        test_error_vs_load();
        test_repeated_probes();
        test_remove();
        test_union();
        test_saturation();
    }
    test_layouts();
    test_fast_vs_reference();
    return check_report("test_spectral");
}
