/*
 * test_tally_threads.c — counts kept by thread (core/tally.h), and the
 * Bloom filters' concurrent mode that keeps its counts in them:
 *   - 40 threads, more than the tally's stripes, add to two counts of one
 *     tally: both sums exact, the other counts untouched, clear resets;
 *   - bloom, blocked and sbbf created with AMQ_OPT_CONCURRENT take the
 *     same keys from 3 threads (each a slice, with repeats): the item
 *     count, the certified bound and the saved frame equal those of the
 *     filter filled on one thread, before and after a union into it;
 *   - the same concurrent filters given one batch under a build's thread
 *     scope (the batch cut by block over 2 and 3 threads, bloom/fill.h),
 *     while another thread adds keys one by one: the same frame again.
 * Runs under ThreadSanitizer too (label threads).
 */
#include "check.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/par.h"
#include "core/tally.h"

enum { TALLY_THREADS = AMQ__TALLY_STRIPES + 8, TALLY_ADDS = 20000 };

typedef struct tally_job {
    amq__tally *t;
    unsigned id;
} tally_job;

static void *tally_adder(void *arg) {
    tally_job *j = arg;
    for (unsigned i = 0; i < TALLY_ADDS; i++) {
        amq__tally_add(j->t, 0, 1);
        amq__tally_add(j->t, 7, j->id);
    }
    /* a take back: wraps modulo 2^64 */
    amq__tally_add(j->t, 0, (uint64_t)-1);
    return NULL;
}

static void test_tally(void) {
    void *room = calloc(1, AMQ__TALLY_ROOM);
    CHECK(room != NULL);
    if (room == NULL)
        return;
    amq__tally *t = amq__tally_in(room);
    CHECK(((uintptr_t)t & 63) == 0);
    CHECK((char *)t + sizeof *t <= (char *)room + AMQ__TALLY_ROOM);
    pthread_t th[TALLY_THREADS];
    tally_job jobs[TALLY_THREADS];
    uint64_t want7 = 0;
    for (unsigned i = 0; i < TALLY_THREADS; i++) {
        jobs[i] = (tally_job){t, i + 1};
        want7 += (uint64_t)(i + 1) * TALLY_ADDS;
        CHECK(pthread_create(&th[i], NULL, tally_adder, &jobs[i]) == 0);
    }
    for (unsigned i = 0; i < TALLY_THREADS; i++)
        pthread_join(th[i], NULL);
    CHECK(amq__tally_sum(t, 0) ==
          (uint64_t)TALLY_THREADS * TALLY_ADDS - TALLY_THREADS);
    CHECK(amq__tally_sum(t, 7) == want7);
    for (unsigned c = 1; c < 7; c++)
        CHECK(amq__tally_sum(t, c) == 0);
    amq__tally_clear(t, 0);
    CHECK(amq__tally_sum(t, 0) == 0);
    CHECK(amq__tally_sum(t, 7) == want7);
    free(room);
}

/* ---- the Bloom filters in concurrent mode ------------------------------ */

typedef struct add_job {
    amq_filter *f;
    const uint64_t *h;
    size_t n;
    int failed;
} add_job;

static void *add_slice(void *arg) {
    add_job *j = arg;
    for (size_t i = 0; i < j->n; i++)
        j->failed += amq_filter_add_hash(j->f, j->h[i]) != AMQ_OK;
    return NULL;
}

static void fill_seq(amq_filter *f, const uint64_t *h, size_t n) {
    for (size_t i = 0; i < n; i++)
        CHECK_OK(amq_filter_add_hash(f, h[i]));
}

static void test_concurrent(const char *spec) {
    size_t n = check_quick() ? 30000 : 300000;
    uint64_t *h = malloc(n * sizeof *h), s = 71;
    CHECK(h != NULL);
    if (h == NULL)
        return;
    for (size_t i = 0; i < n; i++) /* one key in eight a repeat */
        h[i] = i % 8 == 7 ? h[i / 2] : check_next(&s);
    amq_options copt = {.flags = AMQ_OPT_CONCURRENT};
    amq_filter *par = NULL, *seq = NULL, *other = NULL, *other_seq = NULL;
    CHECK_OK(amq_filter_new(spec, n, 0.01, &copt, &par, NULL));
    CHECK_OK(amq_filter_new(spec, n, 0.01, NULL, &seq, NULL));
    CHECK_OK(amq_filter_new(spec, n, 0.01, &copt, &other, NULL));
    CHECK_OK(amq_filter_new(spec, n, 0.01, NULL, &other_seq, NULL));
    if (par == NULL || seq == NULL || other == NULL || other_seq == NULL)
        goto out;
    add_job j[3];
    pthread_t th[3];
    for (unsigned i = 0; i < 3; i++) {
        size_t lo = n * i / 3, hi = n * (i + 1) / 3;
        j[i] = (add_job){par, h + lo, hi - lo, 0};
        CHECK(pthread_create(&th[i], NULL, add_slice, &j[i]) == 0);
    }
    for (unsigned i = 0; i < 3; i++)
        pthread_join(th[i], NULL);
    CHECK(j[0].failed + j[1].failed + j[2].failed == 0);
    fill_seq(seq, h, n);
    CHECK_MSG(amq_filter_items(par) == n, "%s: %llu items, %zu added", spec,
              (unsigned long long)amq_filter_items(par), n);
    CHECK(amq_filter_fpr_bound(par) == amq_filter_fpr_bound(seq));
    CHECK_MSG(check_same_frame(par, seq), "%s: frames differ", spec);
    /* a union folds the threads' counts into the filter's own */
    fill_seq(other, h, n / 2);
    fill_seq(other_seq, h, n / 2);
    CHECK_OK(amq_filter_union(par, other));
    CHECK_OK(amq_filter_union(seq, other_seq));
    CHECK(amq_filter_items(par) == amq_filter_items(seq));
    CHECK(amq_filter_fpr_bound(par) == amq_filter_fpr_bound(seq));
    CHECK_MSG(check_same_frame(par, seq), "%s: frames differ after a union",
              spec);
    CHECK_OK(amq_filter_add_hash(par, h[0]));
    CHECK_OK(amq_filter_add_hash(seq, h[0]));
    CHECK(amq_filter_items(par) == amq_filter_items(seq));
out:
    amq_filter_free(par);
    amq_filter_free(seq);
    amq_filter_free(other);
    amq_filter_free(other_seq);
    free(h);
}

/* A batch cut over `threads` parts beside a thread adding one by one. */
static void test_batch_beside(const char *spec, unsigned threads) {
    size_t n = check_quick() ? 20000 : 200000, half = n / 2;
    uint64_t *h = malloc(n * sizeof *h), s = 91 + threads;
    CHECK(h != NULL);
    if (h == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        h[i] = check_next(&s);
    amq_options copt = {.flags = AMQ_OPT_CONCURRENT};
    amq_filter *par = NULL, *seq = NULL;
    CHECK_OK(amq_filter_new(spec, n, 0.01, &copt, &par, NULL));
    CHECK_OK(amq_filter_new(spec, n, 0.01, NULL, &seq, NULL));
    if (par == NULL || seq == NULL)
        goto out;
    add_job one = {par, h + half, n - half, 0};
    pthread_t th;
    CHECK(pthread_create(&th, NULL, add_slice, &one) == 0);
    size_t outer_min = amq__par_set_min(2), done = 0;
    unsigned outer = amq__par_scope(threads);
    CHECK_OK(amq_filter_add_batch(par, h, half, &done));
    amq__par_restore(outer);
    amq__par_set_min(outer_min);
    pthread_join(th, NULL);
    CHECK(done == half && one.failed == 0);
    fill_seq(seq, h, n);
    CHECK(amq_filter_items(par) == n);
    CHECK_MSG(check_same_frame(par, seq),
              "%s: a batch on %u threads beside "
              "one-by-one adds: frames differ",
              spec, threads);
out:
    amq_filter_free(par);
    amq_filter_free(seq);
    free(h);
}

int main(void) {
    test_tally();
    test_concurrent("bloom");
    test_concurrent("blocked");
    test_concurrent("sbbf");
    for (unsigned t = 2; t <= 3; t++) {
        test_batch_beside("blocked", t);
        test_batch_beside("sbbf", t);
    }
    return check_report("test_tally_threads");
}
