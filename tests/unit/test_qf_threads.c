/*
 * test_qf_threads.c — the quotient filters' concurrent mode
 * (AMQ_OPT_CONCURRENT: per-region locks) from several threads:
 *   - threads insert disjoint key sets: every key is found afterwards, the
 *     counts are exact, and the table is byte-identical to the one built
 *     by inserting the same keys from one thread (the layout is a function
 *     of the stored multiset, so any serial order gives these bytes);
 *   - cqf: threads insert the same keys with their own counts: every final
 *     count is the sum; then all take their counts back from half of them;
 *   - inserts and removes of churning keys, while readers query keys that
 *     nobody touches: never a false negative, and the end state matches;
 *   - keys crowded into one cluster crossing lock regions, so operations
 *     retake every lock (the fallback): same end state;
 *   - the batch insert from several threads;
 *   - counts near 2^64 in concurrent mode: the regions' shares of the item
 *     count never let a total pass 2^64 - 1 (AMQ_ERR_OVERFLOW, nothing
 *     changed), and the counts are exact on either side of the fold;
 *   - through amq_filter: "qf:concurrent=1" lists AMQ_CAP_CONCURRENT.
 * Workers only count their errors; CHECKs run on the main thread.
 */
#include "check.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "amq/quotient.h"
#define QF_MODEL_NO_SUITES
#include "qf_model.h"

enum { THREADS = 4 };

typedef struct job {
    amq_filter *f;
    const uint64_t *keys; /* this thread's keys (or the shared ones) */
    size_t n;
    uint64_t count;         /* cqf: copies per insert */
    const uint64_t *stable; /* readers: keys that must stay found */
    size_t nstable;
    int mode;  /* see worker() */
    int *stop; /* readers run until *stop (atomic) */
    uint64_t errs, ops;
} job;

static uint64_t *keys_from(uint64_t seed, size_t n) {
    uint64_t *k = malloc(n * sizeof *k), rng = seed;
    if (k != NULL)
        for (size_t i = 0; i < n; i++)
            k[i] = check_next(&rng);
    return k;
}

static void insert_all(job *j) {
    for (size_t i = 0; i < j->n; i++) {
        amq_status st = j->count > 1
                            ? amq_cqf_insert(qf(j->f), j->keys[i], j->count)
                            : amq_filter_add_hash(j->f, j->keys[i]);
        j->errs += st != AMQ_OK;
    }
}

/* Insert then remove each key again, several rounds (net: nothing). */
static void churn(job *j) {
    for (int round = 0; round < 3; round++) {
        for (size_t i = 0; i < j->n; i++)
            j->errs += amq_filter_add_hash(j->f, j->keys[i]) != AMQ_OK;
        for (size_t i = 0; i < j->n; i++)
            j->errs += amq_filter_remove_hash(j->f, j->keys[i]) != AMQ_OK;
    }
}

/* Query the stable keys until told to stop (at least once). */
static void read_stable(job *j) {
    uint8_t out[64];
    do {
        for (size_t i = 0; i < j->nstable; i++)
            j->errs += !amq_filter_contains_hash(j->f, j->stable[i]);
        for (size_t i = 0; i + 64 <= j->nstable; i += 64) {
            amq_filter_contains_batch(j->f, j->stable + i, 64, out);
            for (size_t k = 0; k < 64; k++)
                j->errs += out[k] != 1;
        }
        j->ops++;
    } while (!__atomic_load_n(j->stop, __ATOMIC_ACQUIRE));
}

/* cqf: take this thread's count back from the first half of the keys. */
static void remove_half(job *j) {
    for (size_t i = 0; i < j->n / 2; i++)
        j->errs += amq_cqf_remove(qf(j->f), j->keys[i], j->count) != AMQ_OK;
}

static void insert_batch(job *j) {
    size_t done = 0;
    j->errs += amq_filter_add_batch(j->f, j->keys, j->n, &done) != AMQ_OK;
    j->errs += done != j->n;
}

static void *worker(void *arg) {
    job *j = arg;
    switch (j->mode) {
    case 0: insert_all(j); break;
    case 1: churn(j); break;
    case 2: read_stable(j); break;
    case 4: remove_half(j); break;
    default: insert_batch(j); break;
    }
    return NULL;
}

/* Run jobs[0..n) on threads; false if a thread could not start. */
static bool run_jobs(job *jobs, int n) {
    pthread_t t[THREADS * 2];
    int started = 0;
    for (; started < n; started++)
        if (pthread_create(&t[started], NULL, worker, &jobs[started]) != 0)
            break;
    for (int i = 0; i < started; i++)
        pthread_join(t[i], NULL);
    return started == n;
}

static amq_filter *make_filter(bool counting, uint64_t slots, unsigned r,
                               uint32_t flags) {
    amq_filter *f = NULL;
    CHECK_OK(make(counting, (slots + 63) / 64 * 64, r, flags, &f));
    return f;
}

/* (1) disjoint key sets; (5) the same through the batch insert. */
static void test_disjoint(bool counting, bool batch) {
    size_t per = check_quick() ? 20000 : 100000, n = per * THREADS;
    uint64_t *k = keys_from(counting ? 71 : 72, n);
    /* counts 3 and 4 take 3-4 slots per key in a cqf */
    uint64_t slots = counting ? 4 * n : n + n / 8;
    amq_filter *f = make_filter(counting, slots, 9, AMQ_OPT_CONCURRENT);
    amq_filter *g = make_filter(counting, slots, 9, 0);
    job jobs[THREADS];
    check_seed = counting ? 71 : 72;
    if (k == NULL || f == NULL || g == NULL)
        goto out;
    for (int t = 0; t < THREADS; t++)
        jobs[t] = (job){.f = f,
                        .keys = k + t * per,
                        .n = per,
                        .count = counting ? 1 + (uint64_t)t : 1,
                        .mode = batch ? 3 : 0};
    CHECK(run_jobs(jobs, THREADS));
    uint64_t errs = 0, items = 0;
    for (int t = 0; t < THREADS; t++) {
        errs += jobs[t].errs;
        for (size_t i = 0; i < per; i++)
            CHECK_OK(counting && !batch
                         ? amq_cqf_insert(qf(g), k[t * per + i], jobs[t].count)
                         : amq_filter_add_hash(g, k[t * per + i]));
        items += batch ? per : per * jobs[t].count;
    }
    CHECK_MSG(errs == 0, "%llu failed inserts", (unsigned long long)errs);
    CHECK(amq_filter_items(f) == items && amq_filter_items(g) == items);
    CHECK(amq_qf_distinct(qf(f)) == amq_qf_distinct(qf(g)));
    CHECK(amq_qf_used_slots(qf(f)) == amq_qf_used_slots(qf(g)));
    CHECK(amq__qf_check(qf(f)) == AMQ_OK);
    CHECK_MSG(same_table(f, g),
              "%s: concurrent table differs from the "
              "serial one",
              counting ? "cqf" : "qf");
    uint64_t missing = 0, wrong = 0;
    for (size_t i = 0; i < n; i++) {
        missing += !amq_filter_contains_hash(f, k[i]);
        wrong += count_of(f, k[i]) != count_of(g, k[i]);
    }
    CHECK_MSG(missing == 0 && wrong == 0, "%llu missing, %llu counts wrong",
              (unsigned long long)missing, (unsigned long long)wrong);
out:
    free(k);
    amq_filter_free(f);
    amq_filter_free(g);
}

/* (2) cqf: every thread inserts the same keys with its own count. */
static void test_same_keys(void) {
    size_t n = check_quick() ? 5000 : 30000;
    uint64_t *k = keys_from(73, n);
    amq_filter *f = make_filter(true, 4 * n, 12, AMQ_OPT_CONCURRENT);
    job jobs[THREADS];
    uint64_t per_key = 0, errs = 0;
    check_seed = 73;
    if (k == NULL || f == NULL)
        goto out;
    for (int t = 0; t < THREADS; t++) {
        /* counts 1, 2, 7, 300: the counters grow through every encoding */
        static const uint64_t counts[THREADS] = {1, 2, 7, 300};
        jobs[t] = (job){.f = f, .keys = k, .n = n, .count = counts[t]};
        per_key += counts[t];
    }
    CHECK(run_jobs(jobs, THREADS));
    for (int t = 0; t < THREADS; t++)
        errs += jobs[t].errs;
    CHECK_MSG(errs == 0, "%llu failed inserts", (unsigned long long)errs);
    CHECK(amq__qf_check(qf(f)) == AMQ_OK);
    CHECK(amq_filter_items(f) == per_key * n);
    /* Keys sharing a fingerprint add up: compare with the model. */
    model m = {0};
    for (size_t i = 0; i < n; i++)
        model_add(&m, amq_qf_fingerprint(qf(f), k[i]), per_key);
    uint64_t wrong = 0;
    for (size_t i = 0; i < n; i++)
        wrong += count_of(f, k[i]) !=
                 model_count(&m, amq_qf_fingerprint(qf(f), k[i]));
    CHECK_MSG(wrong == 0 && same_as_model(f, &m), "%llu counts wrong",
              (unsigned long long)wrong);
    /* Every thread takes its count back from half the keys, at once. */
    for (int t = 0; t < THREADS; t++)
        jobs[t].mode = 4;
    CHECK(run_jobs(jobs, THREADS));
    for (int t = 0; t < THREADS; t++)
        errs += jobs[t].errs;
    for (size_t i = 0; i < n / 2; i++)
        model_sub(&m, amq_qf_fingerprint(qf(f), k[i]), per_key);
    CHECK_MSG(errs == 0 && amq__qf_check(qf(f)) == AMQ_OK &&
                  same_as_model(f, &m),
              "%llu failed removes, or the counts are wrong",
              (unsigned long long)errs);
    free(m.e);
out:
    free(k);
    amq_filter_free(f);
}

/* (3) churning writers and readers of untouched keys. */
static void test_churn(bool counting) {
    size_t nstable = check_quick() ? 4096 : 16384;
    size_t per = check_quick() ? 3000 : 15000;
    uint64_t *stable = keys_from(74, nstable);
    uint64_t *k = keys_from(75, per * 2);
    amq_filter *f =
        make_filter(counting, 2 * (nstable + 2 * per), 8, AMQ_OPT_CONCURRENT);
    int stop = 0;
    job jobs[4];
    check_seed = 74;
    if (stable == NULL || k == NULL || f == NULL)
        goto out;
    for (size_t i = 0; i < nstable; i++)
        CHECK_OK(amq_filter_add_hash(f, stable[i]));
    size_t len = 0;
    const uint8_t *t0 = amq__qf_table(qf(f), &len);
    uint8_t *before = malloc(len);
    if (before == NULL)
        goto out;
    memcpy(before, t0, len);
    for (int t = 0; t < 2; t++)
        jobs[t] = (job){.f = f, .keys = k + t * per, .n = per, .mode = 1};
    for (int t = 2; t < 4; t++)
        jobs[t] = (job){.f = f,
                        .stable = stable,
                        .nstable = nstable,
                        .mode = 2,
                        .stop = &stop};
    pthread_t th[4];
    int started = 0;
    for (; started < 4; started++)
        if (pthread_create(&th[started], NULL, worker, &jobs[started]) != 0)
            break;
    CHECK(started == 4);
    for (int t = 0; t < started && t < 2; t++)
        pthread_join(th[t], NULL);
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    for (int t = 2; t < started; t++)
        pthread_join(th[t], NULL);
    uint64_t errs = 0, reads = 0;
    for (int t = 0; t < 4; t++)
        errs += jobs[t].errs;
    for (int t = 2; t < 4; t++)
        reads += jobs[t].ops;
    CHECK_MSG(errs == 0 && reads >= 2,
              "%s churn: %llu errors "
              "(false negatives or failed updates), %llu read rounds",
              counting ? "cqf" : "qf", (unsigned long long)errs,
              (unsigned long long)reads);
    /* Net nothing changed: the same bytes as before the churn. */
    CHECK(amq_filter_items(f) == nstable && amq__qf_check(qf(f)) == AMQ_OK);
    CHECK(memcmp(before, amq__qf_table(qf(f), &len), len) == 0);
    free(before);
out:
    free(stable);
    free(k);
    amq_filter_free(f);
}

/* (4) one crowded cluster across lock regions: operations homed in
 * region 1 inside it find saturated offsets whose look-back leaves their
 * window, and take the fallback path. */
static void test_crowded(bool counting) {
    const uint64_t slots = 16384;
    const unsigned r = 12;
    size_t per = 600, n = per * THREADS;
    amq_filter *f = make_filter(counting, slots, r, AMQ_OPT_CONCURRENT);
    amq_filter *g = make_filter(counting, slots, r, 0);
    uint64_t *k = malloc(n * sizeof *k), rng = 76;
    job jobs[THREADS];
    check_seed = 76;
    if (f == NULL || g == NULL || k == NULL)
        goto out;
    /* Quotients in [3900, 3910) (end of region 0) and spread ones. */
    for (size_t i = 0; i < n; i++) {
        uint64_t x = check_next(&rng);
        uint64_t q = i % 4 ? 3900 + x % 10 : (x >> 20) % slots;
        k[i] = hash_for(f, q << r | (x >> 40) % (1u << r));
    }
    for (int t = 0; t < THREADS; t++)
        jobs[t] =
            (job){.f = f, .keys = k + t * per, .n = per, .count = 1, .mode = 0};
    CHECK(run_jobs(jobs, THREADS));
    uint64_t errs = 0;
    for (int t = 0; t < THREADS; t++)
        errs += jobs[t].errs;
    for (size_t i = 0; i < n; i++)
        CHECK_OK(amq_filter_add_hash(g, k[i]));
    CHECK_MSG(errs == 0, "%llu failed inserts", (unsigned long long)errs);
    CHECK(amq__qf_check(qf(f)) == AMQ_OK && same_table(f, g));
    CHECK_MSG(amq__qf_widenings(qf(f)) > 0, "no operation took every lock");
    /* And all removed again, concurrently. */
    for (int t = 0; t < THREADS; t++)
        jobs[t].mode = 1; /* churn: insert + remove rounds on a full set */
    CHECK(run_jobs(jobs, THREADS));
    errs = 0;
    for (int t = 0; t < THREADS; t++)
        errs += jobs[t].errs;
    CHECK_MSG(errs == 0 && amq__qf_check(qf(f)) == AMQ_OK && same_table(f, g),
              "%llu errors after churn", (unsigned long long)errs);
out:
    free(k);
    amq_filter_free(f);
    amq_filter_free(g);
}

/* (6) the generic interface. */
static void test_generic(void) {
    amq_filter *f = NULL;
    const amq_type_info *qi = amq_filter_type_find("qf");
    const amq_type_info *ci = amq_filter_type_find("cqf");
    CHECK(qi != NULL && (qi->caps & AMQ_CAP_CONCURRENT));
    CHECK(ci != NULL && (ci->caps & AMQ_CAP_CONCURRENT));
    CHECK_OK(amq_filter_new("qf:q=12,r=8,concurrent=1", 0, 0, NULL, &f, NULL));
    if (f != NULL) {
        char buf[128];
        amq_filter_describe(f, buf, sizeof buf);
        /* describe gives the shape; concurrency is a run-time mode */
        CHECK_MSG(strcmp(buf, "qf:q=12,r=8") == 0, "%s", buf);
        CHECK_OK(amq_filter_add_hash(f, 12345));
        CHECK(amq_filter_contains_hash(f, 12345));
    }
    amq_filter_free(f);
    f = NULL;
    CHECK_STATUS(
        amq_filter_new("cqf:q=12,r=8,concurrent=2", 0, 0, NULL, &f, NULL),
        AMQ_ERR_SPEC);
    CHECK(f == NULL);
}

/* (6) The item count is shared out between the regions; a count too
 * large for a share, or a base near 2^64, takes every lock and folds. */
static void test_huge_counts(void) {
    amq_filter *f = make_filter(true, 64 * 64 * 8, 8, AMQ_OPT_CONCURRENT);
    if (f == NULL)
        return;
    amq_qf *q = qf(f);
    uint64_t half = UINT64_C(1) << 63, a = 0x1234567, b = 0x9876543210abcdefULL;
    CHECK_OK(amq_cqf_insert(q, a, 5));    /* a share */
    CHECK_OK(amq_cqf_insert(q, b, half)); /* past a share: folded */
    CHECK(amq_filter_items(f) == half + 5);
    CHECK_STATUS(amq_cqf_insert(q, a, half), AMQ_ERR_OVERFLOW);
    CHECK(amq_filter_items(f) == half + 5);
    uint64_t c = 0;
    CHECK_OK(amq_filter_count_hash(f, a, &c));
    CHECK(c == 5);
    CHECK_OK(amq_cqf_insert(q, a, half - 6)); /* 2^64 - 1 exactly */
    CHECK(amq_filter_items(f) == UINT64_MAX);
    CHECK_STATUS(amq_cqf_insert(q, b, 1), AMQ_ERR_OVERFLOW);
    CHECK_OK(amq_cqf_remove(q, a, 3));
    CHECK(amq_filter_items(f) == UINT64_MAX - 3);
    CHECK_OK(amq_cqf_remove(q, b, half));
    CHECK(amq_filter_items(f) == half - 4);
    uint64_t seed = 75;
    for (int i = 0; i < 1000; i++) /* shares again, beside the base */
        CHECK_OK(amq_cqf_insert(q, check_next(&seed), 1));
    CHECK(amq_filter_items(f) == half - 4 + 1000);
    CHECK(amq__qf_check(q) == AMQ_OK);
    amq_filter_free(f);
}

int main(void) {
    test_huge_counts();
    test_disjoint(false, false);
    test_disjoint(true, false);
    test_disjoint(false, true);
    test_same_keys();
    test_churn(false);
    test_churn(true);
    test_crowded(false);
    test_crowded(true);
    test_generic();
    return check_report("test_qf_threads");
}
