/*
 * par.c — a parallel for over pthreads (par.h).
 *
 * Tasks are handed out by one atomic counter: a worker takes the next
 * index until none is left, so uneven tasks balance themselves. Which
 * worker ran a task never shows in the output (par.h), only in the
 * scratch it used.
 */
#include "core/par.h"

#include <pthread.h>
#include <stdbool.h>
#include <sched.h>
#include <stdatomic.h>
#include <unistd.h>

/* Below this many items a pass stays on one thread. */
#define PAR_MIN_ITEMS ((size_t)1 << 16)

static _Thread_local unsigned par_threads; /* 0: not set, one thread */
static _Thread_local size_t par_min = PAR_MIN_ITEMS;

typedef struct par_job {
    amq__par_task *task;
    void *ctx;
    size_t tasks;
    atomic_size_t next;
} par_job;

typedef struct par_worker {
    par_job *job;
    unsigned id;
} par_worker;

static void par_drain(par_job *j, unsigned id) {
    for (;;) {
        size_t i = atomic_fetch_add_explicit(&j->next, 1, memory_order_relaxed);
        if (i >= j->tasks)
            return;
        j->task(j->ctx, i, id);
    }
}

static void *par_main(void *arg) {
    par_worker *w = arg;
    par_drain(w->job, w->id);
    return NULL;
}

void amq__par_for(unsigned workers, size_t tasks, amq__par_task *task,
                  void *ctx) {
    if (workers > AMQ__PAR_MAX)
        workers = AMQ__PAR_MAX;
    if (workers > tasks)
        workers = (unsigned)tasks;
    if (workers <= 1) {
        for (size_t i = 0; i < tasks; i++)
            task(ctx, i, 0);
        return;
    }
    par_job job = {.task = task, .ctx = ctx, .tasks = tasks};
    atomic_init(&job.next, 0);
    pthread_t tid[AMQ__PAR_MAX];
    par_worker w[AMQ__PAR_MAX];
    bool started[AMQ__PAR_MAX] = {false};
    for (unsigned t = 1; t < workers; t++) {
        w[t].job = &job;
        w[t].id = t;
        started[t] = pthread_create(&tid[t], NULL, par_main, &w[t]) == 0;
    }
    par_drain(&job, 0);
    for (unsigned t = 1; t < workers; t++)
        if (started[t])
            pthread_join(tid[t], NULL);
}

unsigned amq__par_threads(void) { return par_threads ? par_threads : 1; }

unsigned amq__par_workers(size_t n) {
    return n < par_min ? 1 : amq__par_threads();
}

size_t amq__par_set_min(size_t n) {
    size_t old = par_min;
    par_min = n;
    return old;
}

static unsigned par_cores(void) {
    long n = 0;
#ifdef CPU_COUNT
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        n = CPU_COUNT(&set);
#endif
    if (n <= 0)
        n = sysconf(_SC_NPROCESSORS_ONLN);
    return n <= 0 ? 1 : n > AMQ__PAR_MAX ? AMQ__PAR_MAX : (unsigned)n;
}

unsigned amq__par_resolve(unsigned threads) {
    if (threads == 0)
        return par_cores();
    return threads > AMQ__PAR_MAX ? AMQ__PAR_MAX : threads;
}

unsigned amq__par_scope(unsigned threads) {
    unsigned old = par_threads;
    par_threads = amq__par_resolve(threads);
    return old;
}

void amq__par_restore(unsigned previous) { par_threads = previous; }
