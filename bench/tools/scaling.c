/*
 * scaling.c — amq_scaling: what a second core buys. Two measurements, each
 * at 1 thread and at T threads in the same run, through the public
 * interface only:
 *
 *   inserts   filters created with AMQ_OPT_CONCURRENT (the types listing
 *             AMQ_CAP_CONCURRENT) take add_hash from T threads, each
 *             thread a contiguous slice of the keys; the baseline is the
 *             same concurrent filter filled by one thread, and beside it
 *             the plain (non-concurrent) filter filled by one thread, so
 *             the price of the concurrent mode shows too;
 *   queries   a filter saved with amq_filter_save_file and opened with
 *             amq_filter_open_file (a read-only mapping, the way a server
 *             shares one filter between its workers) answers
 *             contains_batch from T threads over disjoint slices of the
 *             negative and the positive queries.
 *
 *   amq_scaling [--keys N] [--threads T] [--reps R] [--fpr E]
 *               [--insert LIST] [--query LIST] [--dir D] [--seed S]
 *
 * Times are wall-clock from the moment all threads are released to the
 * last one's end (the best of R repetitions); the speed-up is the
 * 1-thread time over the T-thread time. Every run checks the property the
 * numbers stand on: after concurrent inserts every key is found (no false
 * negative), and the threads' query answers equal the 1-thread answers.
 * The report is a markdown table on stdout.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "amq/amq.h"
#include "tool.h"

#define MAX_THREADS 64

static void die(const char *what, const char *spec, amq_status st,
                const amq_diag *d) {
    fprintf(stderr, "amq_scaling: %s %s: %s%s%s\n", what, spec,
            amq_strerror(st), d != NULL && d->message[0] ? ": " : "",
            d != NULL ? d->message : "");
    exit(2);
}

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (p == NULL) {
        fprintf(stderr, "amq_scaling: out of memory\n");
        exit(2);
    }
    return p;
}

/* ---- a team of threads over slices of [0, n) ------------------------------ */

typedef struct job job;
typedef void (*slice_fn)(job *j, size_t lo, size_t hi);

struct job {
    slice_fn fn;
    amq_filter *f;
    const uint64_t *hashes;
    uint8_t *out;
    size_t n;
    unsigned threads;
    pthread_barrier_t start;
    amq_status failed; /* first failure of any thread (racy-free: set once) */
    pthread_mutex_t lock;
};

typedef struct {
    job *j;
    unsigned id;
    double t0, t1; /* this thread's start and end */
} worker;

static void *run_worker(void *arg) {
    worker *w = arg;
    job *j = w->j;
    size_t lo = j->n * w->id / j->threads;
    size_t hi = j->n * (w->id + 1) / j->threads;
    pthread_barrier_wait(&j->start);
    w->t0 = tool_now();
    j->fn(j, lo, hi);
    w->t1 = tool_now();
    return NULL;
}

/* Run fn over [0, n) on `threads` threads; returns the wall time from the
 * first thread's start to the last one's end (each thread reads the clock
 * itself: the releasing thread may be descheduled past the whole run). */
static double team(job *j, unsigned threads) {
    pthread_t tid[MAX_THREADS];
    worker w[MAX_THREADS];
    j->threads = threads;
    j->failed = AMQ_OK;
    pthread_mutex_init(&j->lock, NULL);
    pthread_barrier_init(&j->start, NULL, threads + 1);
    for (unsigned t = 0; t < threads; t++) {
        w[t].j = j;
        w[t].id = t;
        if (pthread_create(&tid[t], NULL, run_worker, &w[t]) != 0) {
            fprintf(stderr, "amq_scaling: pthread_create: %s\n",
                    strerror(errno));
            exit(2);
        }
    }
    pthread_barrier_wait(&j->start);
    for (unsigned t = 0; t < threads; t++)
        pthread_join(tid[t], NULL);
    double t0 = w[0].t0, t1 = w[0].t1;
    for (unsigned t = 1; t < threads; t++) {
        t0 = w[t].t0 < t0 ? w[t].t0 : t0;
        t1 = w[t].t1 > t1 ? w[t].t1 : t1;
    }
    double dt = t1 - t0;
    pthread_barrier_destroy(&j->start);
    pthread_mutex_destroy(&j->lock);
    return dt;
}

static void slice_add(job *j, size_t lo, size_t hi) {
    for (size_t i = lo; i < hi; i++) {
        amq_status st = amq_filter_add_hash(j->f, j->hashes[i]);
        if (st != AMQ_OK) {
            pthread_mutex_lock(&j->lock);
            if (j->failed == AMQ_OK)
                j->failed = st;
            pthread_mutex_unlock(&j->lock);
            return;
        }
    }
}

#define QUERY_CHUNK 4096

static void slice_query(job *j, size_t lo, size_t hi) {
    for (size_t i = lo; i < hi; i += QUERY_CHUNK) {
        size_t m = hi - i < QUERY_CHUNK ? hi - i : QUERY_CHUNK;
        amq_filter_contains_batch(j->f, j->hashes + i, m, j->out + i);
    }
}

/* ---- the two measurements --------------------------------------------------- */

typedef struct {
    size_t n;
    unsigned threads, reps;
    double fpr;
    const char *dir;
    uint64_t *keys;   /* n member hashes    */
    uint64_t *absent; /* n non-member hashes */
} setup;

static amq_filter *fresh(const setup *s, const char *spec, bool concurrent) {
    amq_options opt = {0};
    if (concurrent)
        opt.flags |= AMQ_OPT_CONCURRENT;
    amq_filter *f = NULL;
    amq_diag d = {0};
    amq_status st = amq_filter_new(spec, s->n, s->fpr, &opt, &f, &d);
    if (st != AMQ_OK)
        die("create", spec, st, &d);
    return f;
}

/* Best time of reps fills of a fresh filter on `threads` threads. */
static double fill(const setup *s, const char *spec, bool concurrent,
                   unsigned threads) {
    double best = 0;
    for (unsigned r = 0; r < s->reps; r++) {
        job j = {.fn = slice_add, .hashes = s->keys, .n = s->n};
        j.f = fresh(s, spec, concurrent);
        double dt = team(&j, threads);
        if (j.failed != AMQ_OK)
            die("add to", spec, j.failed, NULL);
        for (size_t i = 0; i < s->n; i++)
            if (!amq_filter_contains_hash(j.f, s->keys[i])) {
                fprintf(stderr,
                        "amq_scaling: %s: key %zu missing after %u-thread "
                        "inserts\n",
                        spec, i, threads);
                exit(1);
            }
        amq_filter_free(j.f);
        if (r == 0 || dt < best)
            best = dt;
    }
    return best;
}

static void measure_inserts(const setup *s, const char *spec) {
    double plain = fill(s, spec, false, 1);
    double one = fill(s, spec, true, 1);
    double many = fill(s, spec, true, s->threads);
    double ns = 1e9 / (double)s->n;
    printf("| %s | %.1f | %.1f | %.1f | %.2f |\n", spec, plain * ns, one * ns,
           many * ns, one / many);
    fflush(stdout);
}

static double query_time(const setup *s, amq_filter *f, const uint64_t *hashes,
                         uint8_t *out, unsigned threads) {
    double best = 0;
    for (unsigned r = 0; r < s->reps; r++) {
        job j = {
            .fn = slice_query, .f = f, .hashes = hashes, .out = out, .n = s->n};
        double dt = team(&j, threads);
        if (r == 0 || dt < best)
            best = dt;
    }
    return best;
}

static void measure_queries(const setup *s, const char *spec) {
    amq_filter *f = NULL;
    amq_diag d = {0};
    amq_status st = amq_filter_build(spec, s->keys, s->n, s->fpr, NULL, &f, &d);
    if (st != AMQ_OK)
        die("build", spec, st, &d);
    char path[4096];
    snprintf(path, sizeof path, "%s/amq-scaling-%ld.amq", s->dir,
             (long)getpid());
    st = amq_filter_save_file(f, path, &d);
    if (st != AMQ_OK)
        die("save", spec, st, &d);
    amq_filter_free(f);
    st = amq_filter_open_file(path, NULL, &f, &d);
    if (st != AMQ_OK)
        die("open", spec, st, &d);
    bool view = amq_filter_is_view(f);
    uint8_t *ref = xmalloc(s->n), *out = xmalloc(s->n);
    double ns = 1e9 / (double)s->n;
    printf("| %s | %s |", spec, view ? "mapped" : "copy");
    const uint64_t *sets[2] = {s->absent, s->keys};
    for (int k = 0; k < 2; k++) {
        double one = query_time(s, f, sets[k], ref, 1);
        double many = query_time(s, f, sets[k], out, s->threads);
        if (memcmp(ref, out, s->n) != 0) {
            fprintf(stderr, "amq_scaling: %s: %u-thread answers differ\n", spec,
                    s->threads);
            exit(1);
        }
        if (k == 1)
            for (size_t i = 0; i < s->n; i++)
                if (!ref[i]) {
                    fprintf(stderr, "amq_scaling: %s: key %zu missing\n", spec,
                            i);
                    exit(1);
                }
        printf(" %.1f | %.1f | %.2f |", one * ns, many * ns, one / many);
    }
    printf("\n");
    fflush(stdout);
    free(ref);
    free(out);
    amq_filter_free(f);
    unlink(path);
}

/* ---- command line ----------------------------------------------------------- */

static size_t parse_count(const char *s) {
    char *end;
    double v = strtod(s, &end);
    if (*end != '\0' || v < 1 || v > 1e12) {
        fprintf(stderr, "amq_scaling: bad count '%s'\n", s);
        exit(2);
    }
    return (size_t)v;
}

static const char *const DEFAULT_INSERT = "sbbf,blocked,qf,cqf,vqf,maplet";
static const char *const DEFAULT_QUERY =
    "sbbf,blocked,cuckoo,qf,vqf,prefix,fuse8,xor8,ribbon";

static void each(const char *list, const setup *s,
                 void (*fn)(const setup *, const char *)) {
    char *copy = xmalloc(strlen(list) + 1);
    strcpy(copy, list);
    for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save))
        fn(s, tok);
    free(copy);
}

int main(int argc, char **argv) {
    setup s = {
        .n = 10000000, .threads = 2, .reps = 3, .fpr = 0.01, .dir = "/tmp"};
    const char *insert = DEFAULT_INSERT, *query = DEFAULT_QUERY;
    uint64_t seed = 42;
    for (int i = 1; i < argc; i += 2) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            printf("usage: amq_scaling [--keys N] [--threads T] [--reps R] "
                   "[--fpr E]\n"
                   "                   [--insert LIST] [--query LIST] "
                   "[--dir D] [--seed S]\n"
                   "  --insert LIST  concurrent-insert types (default %s;"
                   " '' for none)\n"
                   "  --query LIST   mapped-query types (default %s;"
                   " '' for none)\n",
                   DEFAULT_INSERT, DEFAULT_QUERY);
            return 0;
        }
        if (v == NULL) {
            fprintf(stderr, "amq_scaling: %s needs a value\n", a);
            return 2;
        }
        if (strcmp(a, "--keys") == 0)
            s.n = parse_count(v);
        else if (strcmp(a, "--threads") == 0)
            s.threads = (unsigned)parse_count(v);
        else if (strcmp(a, "--reps") == 0)
            s.reps = (unsigned)parse_count(v);
        else if (strcmp(a, "--fpr") == 0)
            s.fpr = strtod(v, NULL);
        else if (strcmp(a, "--insert") == 0)
            insert = v;
        else if (strcmp(a, "--query") == 0)
            query = v;
        else if (strcmp(a, "--dir") == 0)
            s.dir = v;
        else if (strcmp(a, "--seed") == 0)
            seed = strtoull(v, NULL, 0);
        else {
            fprintf(stderr, "amq_scaling: unknown option %s\n", a);
            return 2;
        }
    }
    if (s.threads < 1 || s.threads > MAX_THREADS || !(s.fpr > 0 && s.fpr < 1)) {
        fprintf(stderr, "amq_scaling: threads 1..%d and 0 < fpr < 1\n",
                MAX_THREADS);
        return 2;
    }
    s.keys = xmalloc(s.n * sizeof *s.keys);
    s.absent = xmalloc(s.n * sizeof *s.absent);
    uint64_t st = seed;
    for (size_t i = 0; i < s.n; i++)
        s.keys[i] = tool_splitmix(&st);
    for (size_t i = 0; i < s.n; i++)
        s.absent[i] = tool_splitmix(&st);

    printf("# amq scaling: n = %zu, %u threads against 1, fpr %g, best of "
           "%u (%ld online cores)\n\n",
           s.n, s.threads, s.fpr, s.reps, sysconf(_SC_NPROCESSORS_ONLN));
    if (insert[0]) {
        printf("## Concurrent inserts (ns per key, wall clock)\n\n"
               "| spec | plain, 1 thread | concurrent, 1 thread | "
               "concurrent, %u threads | speed-up |\n"
               "|---|--:|--:|--:|--:|\n",
               s.threads);
        each(insert, &s, measure_inserts);
        printf("\n");
    }
    if (query[0]) {
        printf("## Queries on one saved filter opened read-only (ns per "
               "query, wall clock, contains_batch)\n\n"
               "| spec | opened as | negative, 1 thread | negative, %u "
               "threads | speed-up | positive, 1 thread | positive, %u "
               "threads | speed-up |\n"
               "|---|---|--:|--:|--:|--:|--:|--:|\n",
               s.threads, s.threads);
        each(query, &s, measure_queries);
    }
    free(s.keys);
    free(s.absent);
    return 0;
}
