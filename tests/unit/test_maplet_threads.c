/*
 * test_maplet_threads.c — the quotient maplet's concurrent mode
 * (concurrent=1: the quotient filter's region locks, each put, delete and
 * get atomic) from several threads; under ThreadSanitizer in CI:
 *   - threads put disjoint keys: every value found, and the table is
 *     byte-identical to the one a single thread builds (the layout is a
 *     function of the stored map, so any serial order gives these bytes);
 *   - sum: threads add their own counts to the same keys, then take them
 *     back from half of them: every final sum exact, counters growing and
 *     shrinking under contention;
 *   - multiset: threads put (key, their id) on shared keys and get_all
 *     lists every id; then each deletes its own pairs: empty at the end;
 *   - readers get stable keys while writers churn others: never a miss;
 *   - keys crowded into one cluster across lock regions, so updates take
 *     every lock (the fallback): same end state.
 * Workers only count their errors; CHECKs run on the main thread.
 */
#include "check.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "amq/maplet.h"
/* Internal hooks: the maplet's table and its count of updates that took
 * every lock (the crowded case must exercise that fallback). */
#include "filter/make.h"
#include "fingerprint/qf_impl.h"

enum { THREADS = 4 };

typedef struct job {
    amq_maplet *m;
    const uint64_t *keys;
    size_t n;
    unsigned id;
    int mode;
    int *stop;
    uint64_t errs, ops;
} job;

static uint64_t *keys_from(uint64_t seed, size_t n, bool crowded) {
    uint64_t *k = malloc(n * sizeof *k), rng = seed;
    /* crowded: a 32nd of the hash space, so one cluster of n keys */
    for (size_t i = 0; k != NULL && i < n; i++)
        k[i] = crowded ? (UINT64_C(1) << 62) + (check_next(&rng) >> 5)
                       : check_next(&rng);
    return k;
}

enum { PUT_OWN, ADD_SAME, TAKE_BACK, PAIRS, UNPAIR, CHURN, READ };

static void work(job *j) {
    uint64_t v;
    for (size_t i = 0; i < j->n; i++) {
        uint64_t h = j->keys[i];
        amq_status st = AMQ_OK;
        switch (j->mode) {
        case PUT_OWN: st = amq_maplet_put_hash(j->m, h, 1 + i % 7); break;
        case ADD_SAME: st = amq_maplet_put_hash(j->m, h, 1 + j->id % 3); break;
        case TAKE_BACK:
            st =
                i % 2 ? AMQ_OK : amq_maplet_delete_hash(j->m, h, 1 + j->id % 3);
            break;
        case PAIRS: st = amq_maplet_put_hash(j->m, h, j->id); break;
        case UNPAIR: st = amq_maplet_delete_hash(j->m, h, j->id); break;
        case CHURN:
            st = amq_maplet_put_hash(j->m, h, 3);
            if (st == AMQ_OK)
                st = amq_maplet_delete_hash(j->m, h, 3);
            break;
        }
        j->errs += st != AMQ_OK;
        j->ops++;
    }
    (void)v;
}

static void read_until_stop(job *j) {
    do {
        for (size_t i = 0; i < j->n; i++) {
            uint64_t v;
            amq_status st = amq_maplet_get_hash(j->m, j->keys[i], &v);
            j->errs += st != AMQ_OK || v < 7;
            j->ops++;
        }
    } while (!__atomic_load_n(j->stop, __ATOMIC_ACQUIRE));
}

static void *worker(void *arg) {
    job *j = arg;
    if (j->mode == READ)
        read_until_stop(j);
    else
        work(j);
    return NULL;
}

/* Run `mode` on THREADS threads, thread t over keys + t * stride. */
static uint64_t run(amq_maplet *m, int mode, const uint64_t *keys, size_t n,
                    size_t stride) {
    pthread_t th[THREADS];
    job j[THREADS];
    uint64_t errs = 0;
    for (unsigned t = 0; t < THREADS; t++) {
        j[t] = (job){m, keys + t * stride, n, t, mode, NULL, 0, 0};
        if (pthread_create(&th[t], NULL, worker, &j[t]) != 0)
            j[t].errs = 1, th[t] = 0;
    }
    for (unsigned t = 0; t < THREADS; t++)
        if (th[t] != 0)
            pthread_join(th[t], NULL);
    for (unsigned t = 0; t < THREADS; t++)
        errs += j[t].errs;
    return errs;
}

static amq_maplet *mk(const char *spec, uint64_t cap) {
    amq_maplet *m = NULL;
    amq_status st = amq_maplet_new(spec, cap, 1e-6, NULL, &m, NULL);
    CHECK_MSG(st == AMQ_OK, "%s: %s", spec, amq_status_name(st));
    return m;
}

/* Crowded: a table four times the keys, so the cluster (about n slots)
 * crosses lock regions (4096 slots) and updates near its end take every
 * lock. */
static void test_disjoint(bool crowded) {
    size_t per = crowded ? 2000 : (check_quick() ? 4000 : 20000);
    size_t n = per * THREADS;
    const char *specs[] = {"maplet:op=or,v=20,concurrent=1",
                           "maplet:op=sum,v=3,concurrent=1"};
    check_seed = crowded ? 2 : 1;
    uint64_t *keys = keys_from(check_seed, n, crowded);
    for (size_t s = 0; s < 2 && keys != NULL; s++) {
        uint64_t cap = crowded ? 4 * n : n;
        amq_maplet *m = mk(specs[s], cap), *one = mk(specs[s], cap);
        if (m == NULL || one == NULL)
            goto next;
        CHECK(amq_filter_caps(m) & AMQ_CAP_CONCURRENT);
        uint64_t errs = run(m, PUT_OWN, keys, per, per);
        CHECK_MSG(errs == 0, "%s: %llu failed puts", specs[s],
                  (unsigned long long)errs);
        for (size_t t = 0; t < THREADS; t++)
            for (size_t i = 0; i < per; i++)
                CHECK_OK(
                    amq_maplet_put_hash(one, keys[t * per + i], 1 + i % 7));
        CHECK_MSG(check_same_frame(m, one), "%s%s: threads give other bytes",
                  specs[s], crowded ? " (crowded)" : "");
        if (crowded)
            CHECK(amq__qf_widenings((amq_qf *)amq__filter_obj(m)) > 0);
    next:
        amq_maplet_free(m);
        amq_maplet_free(one);
    }
    free(keys);
}

/* Every thread adds 1 + id % 3 to the same keys (2-bit values: the sums
 * pass through one slot, a pair and a 3-slot counter), then takes it back
 * from the even keys: sums of 7 and 0 (absent). */
static void test_shared_sums(void) {
    size_t n = check_quick() ? 3000 : 15000;
    check_seed = 3;
    uint64_t *keys = keys_from(3, n, false);
    amq_maplet *m = mk("maplet:op=sum,v=2,concurrent=1", 3 * n);
    if (keys == NULL || m == NULL)
        goto out;
    CHECK(run(m, ADD_SAME, keys, n, 0) == 0);
    uint64_t wrong = 0, v;
    for (size_t i = 0; i < n; i++)
        wrong += amq_maplet_get_hash(m, keys[i], &v) != AMQ_OK || v < 7;
    CHECK_MSG(wrong == 0, "%llu sums below 7", (unsigned long long)wrong);
    CHECK(run(m, TAKE_BACK, keys, n, 0) == 0);
    for (size_t i = 0; i < n; i++) {
        amq_status st = amq_maplet_get_hash(m, keys[i], &v);
        wrong += i % 2 ? st != AMQ_OK || v < 7 : st == AMQ_OK && v >= 7;
    }
    CHECK_MSG(wrong == 0, "%llu sums wrong after deletes",
              (unsigned long long)wrong);
    CHECK(amq_filter_items(m) == 7 * (n / 2));
out:
    amq_maplet_free(m);
    free(keys);
}

/* Multiset: every thread's id stored under every key, listed, removed. */
static void test_pairs(void) {
    size_t n = check_quick() ? 2000 : 8000;
    check_seed = 4;
    uint64_t *keys = keys_from(4, n, false);
    amq_maplet *m = mk("maplet:op=or,v=6,multiset=1,concurrent=1", THREADS * n);
    if (keys == NULL || m == NULL)
        goto out;
    CHECK(run(m, PAIRS, keys, n, 0) == 0);
    uint64_t wrong = 0, vals[16];
    for (size_t i = 0; i < n; i++) {
        size_t got = 0;
        amq_status st = amq_maplet_get_all(m, keys[i], vals, 16, &got);
        wrong += st != AMQ_OK || got < THREADS;
    }
    CHECK_MSG(wrong == 0, "%llu keys list fewer ids",
              (unsigned long long)wrong);
    CHECK(run(m, UNPAIR, keys, n, 0) == 0);
    CHECK(amq_filter_items(m) == 0);
out:
    amq_maplet_free(m);
    free(keys);
}

/* Readers of stable keys beside writers churning others. */
static void test_readers(void) {
    size_t n = check_quick() ? 2000 : 10000;
    check_seed = 5;
    uint64_t *keys = keys_from(5, 3 * n, false);
    amq_maplet *m = mk("maplet:op=max,v=8,multiset=1,concurrent=1", 3 * n);
    pthread_t th[THREADS];
    job j[THREADS];
    int stop = 0;
    if (keys == NULL || m == NULL)
        goto out;
    for (size_t i = 0; i < n; i++)
        CHECK_OK(amq_maplet_put_hash(m, keys[i], 7 + i % 9));
    for (unsigned t = 0; t < THREADS; t++) {
        bool reader = t < 2;
        j[t] = (job){m,
                     reader ? keys : keys + n + (t - 2) * n / 2,
                     reader ? n : n / 2,
                     t,
                     reader ? READ : CHURN,
                     &stop,
                     0,
                     0};
        if (pthread_create(&th[t], NULL, worker, &j[t]) != 0)
            j[t].errs = 1, th[t] = 0;
    }
    for (unsigned t = 2; t < THREADS; t++)
        if (th[t] != 0)
            pthread_join(th[t], NULL);
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    for (unsigned t = 0; t < 2; t++)
        if (th[t] != 0)
            pthread_join(th[t], NULL);
    for (unsigned t = 0; t < THREADS; t++)
        CHECK_MSG(j[t].errs == 0, "thread %u: %llu errors", t,
                  (unsigned long long)j[t].errs);
    CHECK(amq_filter_items(m) == n);
out:
    amq_maplet_free(m);
    free(keys);
}

int main(void) {
    test_disjoint(false);
    test_disjoint(true);
    test_shared_sums();
    test_pairs();
    test_readers();
    return check_report("test_maplet_threads");
}
