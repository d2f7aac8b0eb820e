/*
 * test_vqf_threads.c — the vector quotient filter's concurrent mode
 * (AMQ_OPT_CONCURRENT or "vqf:concurrent=1": a lock per block):
 *   - filled and thinned on one thread, a concurrent filter saves to the
 *     bytes of a plain one given the same calls (both layouts, with and
 *     without AMQ_OPT_SCALAR), and a plain frame loaded concurrent goes on
 *     to the same bytes;
 *   - threads insert disjoint key sets near the design load (most inserts
 *     past the shortcut, so both locks in both orders): no failure, every
 *     key found, the count exact, the frame valid (load checks the blocks
 *     and that their fills sum to the count); the same through the batch
 *     insert;
 *   - below 3/4 of every block each key goes to its b1 whatever the order,
 *     so the table equals the serial one up to the order inside each list;
 *   - inserts and removes of churning keys beside readers of untouched
 *     keys: never a false negative, the count back where it was;
 *   - threads remove one key set while inserting another: the count exact,
 *     the inserted keys found; all removed, the table is an empty one;
 *   - a table of three blocks overfilled from every thread: the adds that
 *     succeed are the count, fit the slots, and are found;
 *   - the spec key and the type's AMQ_CAP_CONCURRENT.
 * Workers only count their errors; CHECKs run on the main thread.
 */
#include "check.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "amq/dynamic.h"

enum { THREADS = 4 };

typedef struct job {
    amq_filter *f;
    const uint64_t *keys; /* this thread's keys */
    size_t n;
    const uint64_t *more; /* mode 4: the keys it removes */
    int mode;             /* see worker() */
    int *stop;            /* readers run until *stop (atomic) */
    uint64_t errs, ops, added;
    uint8_t *ok; /* mode 5: which of its keys were added */
} job;

static uint64_t *keys_from(uint64_t seed, size_t n) {
    uint64_t *k = malloc(n * sizeof *k), rng = seed;
    if (k != NULL)
        for (size_t i = 0; i < n; i++)
            k[i] = check_next(&rng);
    return k;
}

static void insert_all(job *j) {
    for (size_t i = 0; i < j->n; i++)
        j->errs += amq_filter_add_hash(j->f, j->keys[i]) != AMQ_OK;
}

static void insert_batch(job *j) {
    size_t done = 0;
    j->errs += amq_filter_add_batch(j->f, j->keys, j->n, &done) != AMQ_OK;
    j->errs += done != j->n;
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

/* Query the keys until told to stop (at least once), one by one and in
 * batches. */
static void read_stable(job *j) {
    uint8_t out[64];
    do {
        for (size_t i = 0; i < j->n; i++)
            j->errs += !amq_filter_contains_hash(j->f, j->keys[i]);
        for (size_t i = 0; i + 64 <= j->n; i += 64) {
            amq_filter_contains_batch(j->f, j->keys + i, 64, out);
            for (size_t k = 0; k < 64; k++)
                j->errs += out[k] != 1;
        }
        j->ops++;
    } while (!__atomic_load_n(j->stop, __ATOMIC_ACQUIRE));
}

/* Remove `more` and insert `keys`, interleaved. */
static void swap_sets(job *j) {
    for (size_t i = 0; i < j->n; i++) {
        j->errs += amq_filter_remove_hash(j->f, j->more[i]) != AMQ_OK;
        j->errs += amq_filter_add_hash(j->f, j->keys[i]) != AMQ_OK;
    }
}

/* Add every key; a FULL answer is allowed (ok[i] = 0), nothing else. */
static void insert_until_full(job *j) {
    for (size_t i = 0; i < j->n; i++) {
        amq_status st = amq_filter_add_hash(j->f, j->keys[i]);
        j->ok[i] = st == AMQ_OK;
        j->added += st == AMQ_OK;
        j->errs += st != AMQ_OK && st != AMQ_ERR_FULL;
    }
}

static void *worker(void *arg) {
    job *j = arg;
    switch (j->mode) {
    case 0: insert_all(j); break;
    case 1: insert_batch(j); break;
    case 2: churn(j); break;
    case 3: read_stable(j); break;
    case 4: swap_sets(j); break;
    default: insert_until_full(j); break;
    }
    return NULL;
}

/* Run jobs[0..n) on threads; false if a thread could not start. */
static bool run_jobs(job *jobs, int n) {
    pthread_t t[THREADS];
    int started = 0;
    for (; started < n; started++)
        if (pthread_create(&t[started], NULL, worker, &jobs[started]) != 0)
            break;
    for (int i = 0; i < started; i++)
        pthread_join(t[i], NULL);
    return started == n;
}

static uint64_t errors(const job *jobs, int n) {
    uint64_t e = 0;
    for (int t = 0; t < n; t++)
        e += jobs[t].errs;
    return e;
}

static amq_filter *make(const char *spec, uint64_t capacity, uint32_t flags) {
    amq_options opt = {.flags = flags};
    amq_filter *f = NULL;
    amq_diag d = {0};
    amq_status st =
        amq_filter_new(spec, capacity, capacity ? 0.01 : 0.0, &opt, &f, &d);
    CHECK_MSG(st == AMQ_OK, "%s: %s %s", spec, amq_status_name(st), d.message);
    return f;
}

/* f saved and loaded again: load checks every block and the count. */
static bool reloads(const amq_filter *f) {
    size_t len = 0;
    uint8_t *fr = check_frame(f, &len);
    amq_filter *g = NULL;
    amq_diag d = {0};
    amq_status st =
        fr ? amq_filter_load(fr, len, NULL, &g, &d) : AMQ_ERR_INVALID;
    CHECK_MSG(st == AMQ_OK, "reload: %s %s", amq_status_name(st), d.message);
    bool ok = st == AMQ_OK && amq_filter_items(g) == amq_filter_items(f);
    amq_filter_free(g);
    free(fr);
    return ok;
}

static uint64_t missing(const amq_filter *f, const uint64_t *k, size_t n) {
    uint64_t m = 0;
    for (size_t i = 0; i < n; i++)
        m += !amq_filter_contains_hash(f, k[i]);
    return m;
}

/* ---- (1) one thread: the bytes of the plain filter ------------------------ */

static void fill_thin(amq_filter *f, const uint64_t *k, size_t n) {
    for (size_t i = 0; i < n; i++)
        CHECK_OK(amq_filter_add_hash(f, k[i]));
    for (size_t i = 0; i < n; i += 3)
        CHECK_OK(amq_filter_remove_hash(f, k[i]));
    size_t done = 0;
    CHECK_OK(amq_filter_add_batch(f, k, n / 4, &done));
}

static void test_serial_bytes(const char *spec, uint32_t flags) {
    size_t n = check_quick() ? 4000 : 40000;
    uint64_t *k = keys_from(81, 2 * n);
    amq_filter *plain = make(spec, n + n / 4, flags);
    amq_filter *conc = make(spec, n + n / 4, flags | AMQ_OPT_CONCURRENT);
    amq_filter *again = NULL;
    check_seed = 81;
    if (k == NULL || plain == NULL || conc == NULL)
        goto out;
    fill_thin(plain, k, n);
    fill_thin(conc, k, n);
    CHECK(amq_filter_items(plain) == amq_filter_items(conc));
    CHECK_MSG(check_same_frame(plain, conc),
              "%s flags %u: concurrent frame differs from the plain one", spec,
              (unsigned)flags);
    /* a plain frame loaded concurrent: the same bytes after more calls */
    size_t len = 0;
    uint8_t *fr = check_frame(plain, &len);
    amq_options opt = {.flags = flags | AMQ_OPT_CONCURRENT};
    CHECK_OK(fr ? amq_filter_load(fr, len, &opt, &again, NULL)
                : AMQ_ERR_INVALID);
    free(fr);
    if (again == NULL)
        goto out;
    for (size_t i = n; i < n + n / 4; i++) {
        CHECK_OK(amq_filter_add_hash(plain, k[i]));
        CHECK_OK(amq_filter_add_hash(again, k[i]));
    }
    CHECK(check_same_frame(plain, again));
    CHECK(missing(again, k + n, n / 4) == 0);
out:
    free(k);
    amq_filter_free(plain);
    amq_filter_free(conc);
    amq_filter_free(again);
}

/* ---- (2) disjoint sets near the design load ---------------------------------- */

static void test_disjoint(const char *spec, bool batch, int threads) {
    size_t per = check_quick() ? 10000 : 60000, n = per * (size_t)threads;
    uint64_t *k = keys_from(82, n);
    amq_filter *f = make(spec, n, AMQ_OPT_CONCURRENT);
    job jobs[THREADS];
    check_seed = 82;
    if (k == NULL || f == NULL)
        goto out;
    for (int t = 0; t < threads; t++)
        jobs[t] =
            (job){.f = f, .keys = k + (size_t)t * per, .n = per, .mode = batch};
    CHECK(run_jobs(jobs, threads));
    double load = amq_vqf_load(amq_vqf_of(f));
    CHECK_MSG(errors(jobs, threads) == 0 && amq_filter_items(f) == n,
              "%s, %d threads: %llu failed inserts, %llu items of %zu", spec,
              threads, (unsigned long long)errors(jobs, threads),
              (unsigned long long)amq_filter_items(f), n);
    /* at this load most inserts took both locks */
    CHECK_MSG(load > 0.8, "%s: load %.3f", spec, load);
    uint64_t m = missing(f, k, n);
    CHECK_MSG(m == 0, "%s: %llu keys missing", spec, (unsigned long long)m);
    CHECK(reloads(f));
out:
    free(k);
    amq_filter_free(f);
}

/* ---- (3) below 3/4: the serial table up to the order inside lists --------- */

typedef struct layout {
    unsigned md, slots, lists, bytes; /* pocket bytes, S, Q, slot bytes */
} layout;

/* Block p's remainders, list by list, each list sorted, into out[S];
 * list ends are the pocket's ones (bit j: a 0 is a slot, a 1 ends a list;
 * the 0s past the Q-th 1 are the empty slots). Returns the block's fill. */
static unsigned block_lists(const uint8_t *p, const layout *ly, unsigned *out) {
    unsigned slot = 0, start = 0, ends = 0;
    for (unsigned bit = 0; ends < ly->lists; bit++) {
        bool one = (p[bit / 8] >> (bit % 8)) & 1;
        if (!one) {
            const uint8_t *s = p + ly->md + slot * ly->bytes;
            out[slot++] = ly->bytes == 1 ? s[0] : (unsigned)(s[0] | s[1] << 8);
            continue;
        }
        for (unsigned a = start + 1; a < slot; a++) /* insertion sort */
            for (unsigned b = a; b > start && out[b - 1] > out[b]; b--) {
                unsigned x = out[b];
                out[b] = out[b - 1];
                out[b - 1] = x;
            }
        start = slot;
        ends++;
    }
    return slot;
}

static void test_low_load(unsigned r) {
    size_t per = check_quick() ? 2000 : 10000, n = per * THREADS;
    char spec[64];
    layout ly = r == 8 ? (layout){16, 48, 80, 1} : (layout){8, 28, 36, 2};
    /* a quarter of the slots: a block at 3/4 is some 20 standard
     * deviations out */
    uint64_t blocks = (uint64_t)n * 4 / ly.slots;
    snprintf(spec, sizeof spec, "vqf:r=%u,blocks=%llu", r,
             (unsigned long long)blocks);
    uint64_t *k = keys_from(83, n);
    amq_filter *f = make(spec, 0, AMQ_OPT_CONCURRENT), *g = make(spec, 0, 0);
    job jobs[THREADS];
    uint8_t *a = NULL, *b = NULL;
    check_seed = 83;
    if (k == NULL || f == NULL || g == NULL)
        goto out;
    for (int t = 0; t < THREADS; t++)
        jobs[t] = (job){.f = f, .keys = k + t * per, .n = per};
    CHECK(run_jobs(jobs, THREADS));
    for (size_t i = 0; i < n; i++)
        CHECK_OK(amq_filter_add_hash(g, k[i]));
    CHECK(errors(jobs, THREADS) == 0 && amq_filter_items(f) == n);
    size_t la = 0, lb = 0;
    a = check_frame(f, &la);
    b = check_frame(g, &lb);
    if (a == NULL || b == NULL || la != lb)
        goto out;
    const uint8_t *pa = a + la - 8 - blocks * 64,
                  *pb = b + lb - 8 - blocks * 64;
    uint64_t differ = 0;
    unsigned top = 0;
    for (uint64_t i = 0; i < blocks; i++) {
        unsigned xa[48], xb[48];
        unsigned fa = block_lists(pa + i * 64, &ly, xa);
        unsigned fb = block_lists(pb + i * 64, &ly, xb);
        top = fb > top ? fb : top;
        differ += fa != fb || memcmp(pa + i * 64, pb + i * 64, ly.md) != 0 ||
                  memcmp(xa, xb, fa * sizeof *xa) != 0;
    }
    /* the premise: no block of the serial table reached the shortcut's end */
    CHECK_MSG(top < ly.slots * 3 / 4, "r=%u: a block holds %u", r, top);
    CHECK_MSG(differ == 0, "r=%u: %llu blocks differ from the serial table", r,
              (unsigned long long)differ);
out:
    free(a);
    free(b);
    free(k);
    amq_filter_free(f);
    amq_filter_free(g);
}

/* ---- (4) churning writers, readers of untouched keys ----------------------- */

static void test_churn(const char *spec) {
    size_t nstable = check_quick() ? 8192 : 40000;
    size_t per = check_quick() ? 3000 : 15000;
    uint64_t *stable = keys_from(84, nstable);
    uint64_t *k = keys_from(85, per * 2);
    /* the stable keys and both churners' keys: near the design load */
    amq_filter *f = make(spec, nstable + 2 * per, AMQ_OPT_CONCURRENT);
    int stop = 0;
    job jobs[4];
    pthread_t th[4];
    int started = 0;
    check_seed = 84;
    if (stable == NULL || k == NULL || f == NULL)
        goto out;
    for (size_t i = 0; i < nstable; i++)
        CHECK_OK(amq_filter_add_hash(f, stable[i]));
    for (int t = 0; t < 2; t++)
        jobs[t] = (job){.f = f, .keys = k + t * per, .n = per, .mode = 2};
    for (int t = 2; t < 4; t++)
        jobs[t] = (job){
            .f = f, .keys = stable, .n = nstable, .mode = 3, .stop = &stop};
    for (; started < 4; started++)
        if (pthread_create(&th[started], NULL, worker, &jobs[started]) != 0)
            break;
    CHECK(started == 4);
    for (int t = 0; t < started && t < 2; t++)
        pthread_join(th[t], NULL);
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    for (int t = 2; t < started; t++)
        pthread_join(th[t], NULL);
    uint64_t reads = jobs[2].ops + jobs[3].ops;
    CHECK_MSG(errors(jobs, started) == 0 && reads >= 2,
              "%s churn: %llu errors (false negatives or failed updates), "
              "%llu read rounds",
              spec, (unsigned long long)errors(jobs, started),
              (unsigned long long)reads);
    CHECK(amq_filter_items(f) == nstable);
    CHECK(missing(f, stable, nstable) == 0);
    CHECK(reloads(f));
out:
    free(stable);
    free(k);
    amq_filter_free(f);
}

/* ---- (5) one set out, another in ------------------------------------------ */

static void test_swap(const char *spec) {
    size_t per = check_quick() ? 5000 : 30000, n = per * THREADS;
    uint64_t *out_keys = keys_from(86, n), *in_keys = keys_from(87, n);
    amq_filter *f = make(spec, n + n / 8, AMQ_OPT_CONCURRENT);
    amq_filter *empty = make(spec, n + n / 8, 0);
    job jobs[THREADS];
    check_seed = 86;
    if (out_keys == NULL || in_keys == NULL || f == NULL || empty == NULL)
        goto out;
    for (size_t i = 0; i < n; i++)
        CHECK_OK(amq_filter_add_hash(f, out_keys[i]));
    for (int t = 0; t < THREADS; t++)
        jobs[t] = (job){.f = f,
                        .keys = in_keys + t * per,
                        .more = out_keys + t * per,
                        .n = per,
                        .mode = 4};
    CHECK(run_jobs(jobs, THREADS));
    CHECK_MSG(errors(jobs, THREADS) == 0 && amq_filter_items(f) == n,
              "%s: %llu failed updates, %llu items of %zu", spec,
              (unsigned long long)errors(jobs, THREADS),
              (unsigned long long)amq_filter_items(f), n);
    CHECK(missing(f, in_keys, n) == 0);
    CHECK(reloads(f));
    /* and every key out again, from all threads: an empty table */
    for (int t = 0; t < THREADS; t++)
        jobs[t] = (job){.f = f,
                        .keys = in_keys + t * per,
                        .more = in_keys + t * per,
                        .n = per,
                        .mode = 4};
    CHECK(run_jobs(jobs, THREADS)); /* remove, add back the same: net 0 */
    CHECK(errors(jobs, THREADS) == 0 && amq_filter_items(f) == n);
    for (size_t i = 0; i < n; i++)
        CHECK_OK(amq_filter_remove_hash(f, in_keys[i]));
    CHECK(amq_filter_items(f) == 0);
    CHECK_MSG(check_same_frame(f, empty), "%s: emptied table is not empty",
              spec);
out:
    free(out_keys);
    free(in_keys);
    amq_filter_free(f);
    amq_filter_free(empty);
}

/* ---- (6) a few blocks, overfilled ------------------------------------------- */

static void test_full(const char *spec, unsigned slots) {
    size_t per = 200, n = per * THREADS;
    uint64_t *k = keys_from(88, n);
    uint8_t *ok = calloc(n, 1);
    amq_filter *f = make(spec, 0, AMQ_OPT_CONCURRENT);
    job jobs[THREADS];
    check_seed = 88;
    if (k == NULL || ok == NULL || f == NULL)
        goto out;
    for (int t = 0; t < THREADS; t++)
        jobs[t] = (job){.f = f,
                        .keys = k + t * per,
                        .n = per,
                        .mode = 5,
                        .ok = ok + t * per};
    CHECK(run_jobs(jobs, THREADS));
    uint64_t added = 0, lost = 0;
    for (int t = 0; t < THREADS; t++)
        added += jobs[t].added;
    for (size_t i = 0; i < n; i++)
        lost += ok[i] && !amq_filter_contains_hash(f, k[i]);
    CHECK_MSG(
        errors(jobs, THREADS) == 0 && added == amq_filter_items(f) &&
            added <= slots && added > slots / 2 && lost == 0,
        "%s: %llu errors, %llu added, %llu items, %llu lost", spec,
        (unsigned long long)errors(jobs, THREADS), (unsigned long long)added,
        (unsigned long long)amq_filter_items(f), (unsigned long long)lost);
    CHECK(reloads(f));
out:
    free(k);
    free(ok);
    amq_filter_free(f);
}

/* ---- (7) the generic interface ------------------------------------------------ */

static void test_generic(void) {
    const amq_type_info *ti = amq_filter_type_find("vqf");
    CHECK(ti != NULL && (ti->caps & AMQ_CAP_CONCURRENT));
    amq_filter *f = NULL, *g = NULL;
    CHECK_OK(
        amq_filter_new("vqf:blocks=100,concurrent=1", 0, 0, NULL, &f, NULL));
    CHECK_OK(amq_filter_new("vqf:blocks=100", 0, 0, NULL, &g, NULL));
    if (f != NULL && g != NULL) {
        char buf[128];
        amq_filter_describe(f, buf, sizeof buf);
        /* describe gives the shape; concurrency is a run-time mode */
        CHECK_MSG(strcmp(buf, "vqf:r=8,blocks=100") == 0, "%s", buf);
        CHECK_OK(amq_filter_add_hash(f, 12345));
        CHECK_OK(amq_filter_add_hash(g, 12345));
        CHECK(amq_filter_contains_hash(f, 12345));
        CHECK(check_same_frame(f, g));
        /* a view in concurrent mode answers (it takes its locks) */
        size_t len = 0;
        uint8_t *fr = check_frame(f, &len);
        amq_options opt = {.flags = AMQ_OPT_CONCURRENT};
        amq_filter *v = NULL;
        CHECK_OK(fr ? amq_filter_view(fr, len, &opt, &v, NULL)
                    : AMQ_ERR_INVALID);
        CHECK(v != NULL && amq_filter_contains_hash(v, 12345));
        CHECK(v != NULL && amq_filter_add_hash(v, 1) == AMQ_ERR_READONLY);
        amq_filter_free(v);
        free(fr);
    }
    amq_filter_free(f);
    amq_filter_free(g);
    f = NULL;
    CHECK_STATUS(
        amq_filter_new("vqf:blocks=10,concurrent=2", 0, 0, NULL, &f, NULL),
        AMQ_ERR_SPEC);
    CHECK(f == NULL);
    double a = 0, b = 1;
    CHECK_OK(amq_curve_fpr("vqf:concurrent=1", 12.0, &a));
    CHECK_OK(amq_curve_fpr("vqf", 12.0, &b));
    CHECK(a == b);
}

int main(void) {
    test_serial_bytes("vqf:r=8", 0);
    test_serial_bytes("vqf:r=16", 0);
    test_serial_bytes("vqf:r=8", AMQ_OPT_SCALAR);
    test_serial_bytes("vqf:r=16", AMQ_OPT_SCALAR);
    test_disjoint("vqf:r=8", false, 2);
    test_disjoint("vqf:r=8", false, THREADS);
    test_disjoint("vqf:r=16", false, THREADS);
    test_disjoint("vqf:r=8", true, THREADS);
    test_low_load(8);
    test_low_load(16);
    test_churn("vqf:r=8");
    test_churn("vqf:r=16");
    test_swap("vqf:r=8");
    test_swap("vqf:r=16");
    test_full("vqf:r=8,blocks=3", 3 * 48);
    test_full("vqf:r=16,blocks=2", 2 * 28);
    test_generic();
    return check_report("test_vqf_threads");
}
