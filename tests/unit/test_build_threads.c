/*
 * test_build_threads.c — static builds on several threads give the bytes
 * of the one-thread build:
 *   - the parallel for runs every task exactly once, whatever the workers;
 *   - the distribution sort (plain and mixed, with and without repeats,
 *     with adversarial keys that take its qsort fallback) against qsort
 *     plus a scan, at 1, 2, 3 and 4 threads;
 *   - every static type, and the dynamic types whose batch insert uses
 *     the threads (sbbf, blocked), through amq_builder at threads 1, 2, 3,
 *     4 and 0 (every core): byte-identical frames at 0, 1, 2, small and
 *     larger sizes, with repeated keys (the builder's de-duplicating sort);
 *   - amq_filter_build under a thread scope with repeated hashes: a xor or
 *     fuse build whose first seed fails on the repeat and is retried after
 *     the threaded de-duplication, and small Ribbon tables whose last
 *     layer retries seeds;
 *   - xor and fuse tables of 2 10^5 keys (7 10^4 in the quick tier),
 *     built by amq_filter_build at 1, 2 and 3 threads, from distinct keys
 *     and from keys with repeats (a first attempt that fails and is
 *     retried): the same status and bytes, and every key found;
 *   - the builder's thread option: 0 resolves to the cores, large counts
 *     are capped, NULL is refused.
 * The threshold under which passes stay on one thread is lowered, so the
 * threaded code runs on small inputs too (and under ThreadSanitizer).
 */
#include "check.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/bits.h"
#include "core/par.h"
#include "core/sort.h"

static const unsigned threads[] = {1, 2, 3, 4, 0};
enum { NTHREADS = sizeof threads / sizeof threads[0] };

/* ---- the parallel for -------------------------------------------------- */

typedef struct count_ctx {
    unsigned char *seen; /* seen[i]: times task i ran (one writer each) */
    unsigned workers;
} count_ctx;

static void count_task(void *ctx, size_t i, unsigned worker) {
    count_ctx *c = ctx;
    c->seen[i]++;
    if (worker >= c->workers)
        c->seen[i] += 100;
}

static void test_par_for(void) {
    static const size_t tasks[] = {0, 1, 2, 7, 1000};
    for (unsigned w = 1; w <= 5; w++)
        for (size_t k = 0; k < sizeof tasks / sizeof tasks[0]; k++) {
            size_t n = tasks[k];
            count_ctx c = {calloc(n + 1, 1), w};
            if (c.seen == NULL)
                continue;
            amq__par_for(w, n, count_task, &c);
            size_t once = 0;
            for (size_t i = 0; i < n; i++)
                once += c.seen[i] == 1;
            CHECK_MSG(once == n, "%u workers, %zu tasks: %zu ran once", w, n,
                      once);
            free(c.seen);
        }
    CHECK(amq__par_resolve(0) >= 1 && amq__par_resolve(0) <= AMQ__PAR_MAX);
    CHECK(amq__par_resolve(3) == 3);
    CHECK(amq__par_resolve(1000) == AMQ__PAR_MAX);
    unsigned outer = amq__par_scope(3);
    CHECK(amq__par_threads() == 3);
    amq__par_restore(outer);
    CHECK(amq__par_threads() == 1);
}

/* ---- teams and barriers ------------------------------------------------- */

typedef struct team_ctx {
    amq__par_barrier bar;
    _Atomic unsigned arrived[8]; /* members past step s's first half */
    unsigned char ok[AMQ__PAR_MAX];
    unsigned size;
} team_ctx;

/* Every member, at each of 8 steps, counts itself in, waits, and must then
 * see every member counted: nobody leaves a barrier early. */
static void team_member(void *ctx, unsigned id, unsigned size) {
    team_ctx *c = ctx;
    bool ok = size == c->size && id < size;
    for (unsigned step = 0; step < 8; step++) {
        atomic_fetch_add(&c->arrived[step], 1);
        amq__par_barrier_wait(&c->bar);
        ok &= atomic_load(&c->arrived[step]) == size;
        amq__par_barrier_wait(&c->bar);
    }
    c->ok[id] = ok;
}

static void test_par_team(void) {
    for (unsigned w = 1; w <= 5; w++) {
        team_ctx c;
        memset(&c, 0, sizeof c);
        c.size = w;
        amq__par_barrier_init(&c.bar, w);
        unsigned size = amq__par_team(w, team_member, &c);
        CHECK_MSG(size == w, "team of %u: %u members", w, size);
        unsigned good = 0;
        for (unsigned m = 0; m < size; m++)
            good += c.ok[m];
        CHECK_MSG(good == size, "team of %u: %u members saw every barrier", w,
                  good);
    }
}

/* ---- the sort ------------------------------------------------------------ */

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The reference: key(x) of every input, qsort, drop repeats. */
static size_t sort_ref(const uint64_t *src, size_t n, bool mixed, uint64_t seed,
                       bool dedupe, uint64_t *out) {
    for (size_t i = 0; i < n; i++)
        out[i] = mixed ? amq__mix64(src[i] + seed) : src[i];
    qsort(out, n, sizeof *out, cmp_u64);
    size_t w = 0;
    for (size_t i = 0; i < n; i++)
        if (!dedupe || w == 0 || out[w - 1] != out[i])
            out[w++] = out[i];
    return w;
}

/* kind 0: uniform; 1: every key about three times; 2: all keys in a few
 * narrow ranges (adversarial: the qsort fallback). */
static void fill_keys(uint64_t *k, size_t n, int kind, uint64_t seed) {
    uint64_t s = seed;
    for (size_t i = 0; i < n; i++) {
        uint64_t x = check_next(&s);
        if (kind == 1)
            x = i % 3 == 0 || i == 0 ? x : k[(i * 7 + 1) % i];
        if (kind == 2)
            x = (x & 0x3) << 62 | (x & 0xff);
        k[i] = x;
    }
}

static void test_sort(void) {
    static const size_t sizes[] = {0, 1, 2, 3, 100, 5000, 70000};
    amq__mem m;
    amq__mem_init(&m, NULL);
    size_t outer_min = amq__par_set_min(2);
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (int kind = 0; kind < 3; kind++)
            for (int mode = 0; mode < 4; mode++) {
                size_t n = sizes[si];
                bool mixed = mode & 1, dedupe = mode & 2;
                uint64_t *k = malloc((n + 1) * 8), *want = malloc((n + 1) * 8);
                uint64_t *got = malloc((n + 1) * 8);
                if (k == NULL || want == NULL || got == NULL) {
                    free(k), free(want), free(got);
                    continue;
                }
                check_seed = 1000 * si + 10 * (uint64_t)kind + (uint64_t)mode;
                fill_keys(k, n, kind, check_seed);
                size_t wn = sort_ref(k, n, mixed, 77, dedupe, want);
                for (unsigned t = 0; t < NTHREADS; t++) {
                    unsigned outer = amq__par_scope(threads[t]);
                    size_t gn = 0;
                    CHECK_OK(
                        amq__sort_keys(&m, k, n, mixed, 77, dedupe, got, &gn));
                    amq__par_restore(outer);
                    CHECK_MSG(gn == wn && memcmp(got, want, wn * 8) == 0,
                              "n %zu kind %d mixed %d dedupe %d threads %u: "
                              "%zu keys, reference %zu",
                              n, kind, mixed, dedupe, threads[t], gn, wn);
                }
                free(k), free(want), free(got);
            }
    amq__par_set_min(outer_min);
}

/* ---- static builds --------------------------------------------------------- */

/* hashes[i] for i < n: distinct, or with repeats (every fifth key again). */
static void fill_hashes(uint64_t *h, size_t n, bool repeats, uint64_t seed) {
    uint64_t s = seed;
    for (size_t i = 0; i < n; i++)
        h[i] = repeats && i % 5 == 4 ? h[i / 2] : check_next(&s);
}

/* The frame of a build of h[0..n) through a builder at `t` threads, or
 * NULL with *st the failure. */
static uint8_t *builder_frame(const char *spec, const uint64_t *h, size_t n,
                              unsigned t, size_t *len, amq_status *st) {
    amq_builder *b = NULL;
    amq_filter *f = NULL;
    uint8_t *frame = NULL;
    *st = amq_builder_new(spec, NULL, &b, NULL);
    if (*st == AMQ_OK)
        *st = amq_builder_set_threads(b, t);
    if (*st == AMQ_OK)
        *st = amq_builder_add_hashes(b, h, n);
    if (*st == AMQ_OK)
        *st = amq_builder_finish(b, 0.01, &f, NULL);
    if (*st == AMQ_OK)
        frame = check_frame(f, len);
    amq_filter_free(f);
    amq_builder_free(b);
    return frame;
}

/* Every thread count gives the one-thread status and frame. */
static void same_for_all_threads(const char *spec, const uint64_t *h, size_t n,
                                 const char *what) {
    size_t len1 = 0;
    amq_status st1;
    uint8_t *one = builder_frame(spec, h, n, 1, &len1, &st1);
    for (unsigned t = 1; t < NTHREADS; t++) {
        size_t len = 0;
        amq_status st;
        uint8_t *fr = builder_frame(spec, h, n, threads[t], &len, &st);
        CHECK_MSG(st == st1 && len == len1 &&
                      (one == NULL || memcmp(fr, one, len) == 0),
                  "%s, %zu keys (%s), %u threads: %s, %zu bytes; one thread: "
                  "%s, %zu bytes",
                  spec, n, what, threads[t], amq_status_name(st), len,
                  amq_status_name(st1), len1);
        free(fr);
    }
    free(one);
}

/* Beside the static types: their variants, and the dynamic types whose
 * batch insert is cut over the threads (bloom/fill.h). */
static const char *const extra_specs[] = {
    "fuse8:ways=4",    "fuse16:ways=4", "ribbon:w=128", "ribbon:bump=0",
    "ribbon:bits=6.5", "sbbf",          "blocked",      "blocked:layout=1"};

static void test_static_builds(void) {
    size_t big = check_quick() ? 20000 : 150000;
    size_t sizes[] = {0, 1, 2, 3, 31, 200, 1000, 4099, big};
    uint64_t *h = malloc(big * sizeof *h);
    if (h == NULL)
        return;
    size_t outer_min = amq__par_set_min(2);
    size_t ntypes = amq_filter_type_count();
    size_t nextra = sizeof extra_specs / sizeof extra_specs[0];
    for (size_t i = 0; i < ntypes + nextra; i++) {
        const amq_type_info *ti = i < ntypes ? amq_filter_type_at(i) : NULL;
        if (ti != NULL && !(ti->caps & AMQ_CAP_STATIC))
            continue;
        const char *spec = ti ? ti->name : extra_specs[i - ntypes];
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
            for (int rep = 0; rep < 2; rep++) {
                check_seed = 7 * sizes[k] + (uint64_t)rep;
                fill_hashes(h, sizes[k], rep, check_seed);
                same_for_all_threads(spec, h, sizes[k],
                                     rep ? "repeats" : "distinct");
            }
    }
    amq__par_set_min(outer_min);
    free(h);
}

/* amq_filter_build inside a thread scope, with repeated hashes: xor and
 * fuse fail their first seed on the repeat and retry after sorting; small
 * Ribbon tables retry the last layer's seed for some of these sizes. */
static uint8_t *scoped_frame(const char *spec, const uint64_t *h, size_t n,
                             unsigned t, size_t *len, amq_status *st) {
    amq_filter *f = NULL;
    uint8_t *frame = NULL;
    unsigned outer = amq__par_scope(t);
    *st = amq_filter_build(spec, h, n, 0.01, NULL, &f, NULL);
    amq__par_restore(outer);
    if (*st == AMQ_OK)
        frame = check_frame(f, len);
    amq_filter_free(f);
    return frame;
}

static void test_retried_seeds(void) {
    static const char *const specs[] = {"xor8", "fuse8", "fuse16:ways=4",
                                        "ribbon", "ribbon:bump=0"};
    size_t n = check_quick() ? 5000 : 80000;
    uint64_t *h = malloc(n * sizeof *h);
    if (h == NULL)
        return;
    size_t outer_min = amq__par_set_min(2);
    for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++)
        for (size_t m = 5; m <= n; m = m * 4 + 3) {
            check_seed = 31 * m + s;
            fill_hashes(h, m, true, check_seed);
            size_t len1 = 0;
            amq_status st1;
            uint8_t *one = scoped_frame(specs[s], h, m, 1, &len1, &st1);
            CHECK_MSG(st1 == AMQ_OK, "%s, %zu keys with repeats: %s", specs[s],
                      m, amq_status_name(st1));
            for (unsigned t = 1; t < NTHREADS; t++) {
                size_t len = 0;
                amq_status st;
                uint8_t *fr =
                    scoped_frame(specs[s], h, m, threads[t], &len, &st);
                CHECK_MSG(st == st1 && len == len1 &&
                              (one == NULL || memcmp(fr, one, len) == 0),
                          "%s, %zu keys with repeats, %u threads differ",
                          specs[s], m, threads[t]);
                free(fr);
            }
            free(one);
        }
    amq__par_set_min(outer_min);
    free(h);
}

/* Tables of many blocks of every threaded pass, also in the quick tier. */
static void test_large_builds(void) {
    static const char *const specs[] = {"xor8", "xor16", "xor32", "fuse8",
                                        "fuse16:ways=4"};
    size_t n = check_quick() ? 70000 : 200000;
    uint64_t *h = malloc(n * sizeof *h);
    if (h == NULL)
        return;
    size_t outer_min = amq__par_set_min(2);
    for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++)
        for (int rep = 0; rep < 2; rep++) {
            check_seed = 1009 * s + (uint64_t)rep;
            /* with repeats, n - n / 5 distinct keys */
            fill_hashes(h, n, rep, check_seed);
            size_t len1 = 0;
            amq_status st1;
            uint8_t *one = scoped_frame(specs[s], h, n, 1, &len1, &st1);
            CHECK_MSG(st1 == AMQ_OK, "%s, %zu keys: %s", specs[s], n,
                      amq_status_name(st1));
            for (unsigned t = 2; t <= 3; t++) {
                amq_filter *f = NULL;
                unsigned outer = amq__par_scope(t);
                amq_status st =
                    amq_filter_build(specs[s], h, n, 0.01, NULL, &f, NULL);
                amq__par_restore(outer);
                size_t len = 0;
                uint8_t *fr = st == AMQ_OK ? check_frame(f, &len) : NULL;
                CHECK_MSG(st == st1 && len == len1 && fr != NULL &&
                              one != NULL && memcmp(fr, one, len) == 0,
                          "%s, %zu keys (%s), %u threads: %s, %zu bytes; "
                          "one thread: %s, %zu bytes",
                          specs[s], n, rep ? "repeats" : "distinct", t,
                          amq_status_name(st), len, amq_status_name(st1), len1);
                size_t missing = 0;
                for (size_t i = 0; f != NULL && i < n; i++)
                    missing += !amq_filter_contains_hash(f, h[i]);
                CHECK_MSG(f != NULL && missing == 0,
                          "%s, %zu keys, %u threads: %zu keys not found",
                          specs[s], n, t, missing);
                free(fr);
                amq_filter_free(f);
            }
            free(one);
        }
    amq__par_set_min(outer_min);
    free(h);
}

static void test_option(void) {
    amq_builder *b = NULL;
    CHECK_OK(amq_builder_new("fuse8", NULL, &b, NULL));
    if (b == NULL)
        return;
    CHECK(amq_builder_threads(b) == amq__par_resolve(0));
    CHECK_OK(amq_builder_set_threads(b, 1));
    CHECK(amq_builder_threads(b) == 1);
    CHECK_OK(amq_builder_set_threads(b, 1u << 20));
    CHECK(amq_builder_threads(b) == AMQ__PAR_MAX);
    CHECK_STATUS(amq_builder_set_threads(NULL, 2), AMQ_ERR_INVALID);
    /* The calling thread's count is its own again after finish. */
    CHECK_OK(amq_builder_set_threads(b, 3));
    CHECK_OK(amq_builder_add_hash(b, 42));
    amq_filter *f = NULL;
    CHECK_OK(amq_builder_finish(b, 0.01, &f, NULL));
    CHECK(amq__par_threads() == 1);
    amq_filter_free(f);
    amq_builder_free(b);
}

int main(void) {
    test_par_for();
    test_par_team();
    test_sort();
    test_static_builds();
    test_retried_seeds();
    test_large_builds();
    test_option();
    return check_report("test_build_threads");
}
