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

/* ---- teams -------------------------------------------------------------- */

typedef struct par_crew {
    amq__par_member *fn;
    void *ctx;
    atomic_uint size; /* 0 until every member is started */
} par_crew;

typedef struct par_seat {
    par_crew *crew;
    unsigned id;
} par_seat;

static void par_pause(unsigned *spins) {
    if (++*spins < 4096) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    } else {
        sched_yield();
    }
}

static void *par_seat_main(void *arg) {
    par_seat *s = arg;
    unsigned size, spins = 0;
    while ((size = atomic_load_explicit(&s->crew->size,
                                        memory_order_acquire)) == 0)
        par_pause(&spins);
    if (s->id < size)
        s->crew->fn(s->crew->ctx, s->id, size);
    return NULL;
}

unsigned amq__par_team(unsigned workers, amq__par_member *fn, void *ctx) {
    if (workers > AMQ__PAR_MAX)
        workers = AMQ__PAR_MAX;
    if (workers <= 1) {
        fn(ctx, 0, 1);
        return 1;
    }
    par_crew crew = {.fn = fn, .ctx = ctx};
    atomic_init(&crew.size, 0);
    pthread_t tid[AMQ__PAR_MAX];
    par_seat seat[AMQ__PAR_MAX];
    unsigned size = 1;
    /* members are numbered in the order they start; the first thread that
     * cannot be created ends the team there */
    while (size < workers) {
        seat[size].crew = &crew;
        seat[size].id = size;
        if (pthread_create(&tid[size], NULL, par_seat_main, &seat[size]) != 0)
            break;
        size++;
    }
    atomic_store_explicit(&crew.size, size, memory_order_release);
    fn(ctx, 0, size);
    for (unsigned t = 1; t < size; t++)
        pthread_join(tid[t], NULL);
    return size;
}

void amq__par_barrier_init(amq__par_barrier *b, unsigned size) {
    atomic_init(&b->arrived, 0);
    atomic_init(&b->phase, 0);
    b->size = size;
}

void amq__par_barrier_wait(amq__par_barrier *b) {
    if (b->size <= 1)
        return;
    unsigned phase = atomic_load_explicit(&b->phase, memory_order_acquire);
    if (atomic_fetch_add_explicit(&b->arrived, 1, memory_order_acq_rel) ==
        b->size - 1) {
        atomic_store_explicit(&b->arrived, 0, memory_order_relaxed);
        atomic_store_explicit(&b->phase, phase + 1, memory_order_release);
        return;
    }
    unsigned spins = 0;
    while (atomic_load_explicit(&b->phase, memory_order_acquire) == phase)
        par_pause(&spins);
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
