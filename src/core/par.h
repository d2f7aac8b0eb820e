/*
 * par.h — splitting a build's work across threads.
 *
 * Static builds (the builder's de-duplicating sort, Ribbon, xor and fuse)
 * divide their passes into tasks whose results do not depend on which
 * thread runs them or in what order: each task writes only its own part of
 * the output, and any combining is done afterwards in task order. So the
 * bytes built are the same for every thread count, and one thread is the
 * reference the others are tested against (tests/unit/test_build_threads.c).
 *
 * The thread count is a property of the build in progress, not of the
 * filter: amq_builder_finish sets it for the calling thread around the
 * build (amq__par_scope), and the structures' build code reads it with
 * amq__par_threads. Any other caller (amq_filter_build, a type's own
 * constructor) builds on one thread.
 *
 * Workers are plain pthreads started for one amq__par_for and joined
 * before it returns; no pool outlives a call, nothing is shared between
 * calls. Tasks never allocate (the caller's allocator need not be
 * thread-safe): the caller sets up each worker's scratch first, indexed by
 * the worker number the task is given. If a thread cannot be started, the
 * workers that did start (the caller at least) take its tasks.
 */
#ifndef AMQ_SRC_CORE_PAR_H
#define AMQ_SRC_CORE_PAR_H

#include <stddef.h>

/* At most this many threads take part in one build. */
#define AMQ__PAR_MAX 16

/* task(ctx, i, worker) for every i < tasks, each once, on at most
 * `workers` threads (the caller's among them); worker < workers names the
 * thread running it (for per-worker scratch). Returns when every task is
 * done. workers <= 1 or tasks <= 1: all on the calling thread, in order. */
typedef void amq__par_task(void *ctx, size_t i, unsigned worker);
void amq__par_for(unsigned workers, size_t tasks, amq__par_task *task,
                  void *ctx);

/* A team: fn(ctx, id, size) on `size` threads running at once, the
 * caller's with id 0, for passes whose members wait for each other (at an
 * amq__par_barrier). size is `workers` (capped at AMQ__PAR_MAX), or fewer
 * when a thread cannot be started; fn sees the same size on every member
 * and splits the work by it. Returns size once every member is done. */
typedef void amq__par_member(void *ctx, unsigned id, unsigned size);
unsigned amq__par_team(unsigned workers, amq__par_member *fn, void *ctx);

/* Where a team's members wait until all `size` have arrived. What a member
 * wrote before its wait is visible to every member after theirs. Waiting
 * spins briefly, then yields the core. One barrier serves any number of
 * successive waits. */
typedef struct amq__par_barrier {
    _Atomic unsigned arrived, phase;
    unsigned size;
} amq__par_barrier;
void amq__par_barrier_init(amq__par_barrier *b, unsigned size);
void amq__par_barrier_wait(amq__par_barrier *b);

/* The thread count of the build running on this thread (1 unless a scope
 * set another), and that count for a pass over n items: 1 when n is too
 * small for threads to pay off (their start costs ~20 µs). */
unsigned amq__par_threads(void);
unsigned amq__par_workers(size_t n);

/* The calling thread's threshold below which amq__par_workers says 1
 * (~65,000 items unless set); returns the previous one. The tests lower
 * it to run the threaded passes on small inputs. */
size_t amq__par_set_min(size_t n);

/* The threads "0 = as many as there are cores" means: the online cores this
 * process may run on, at most AMQ__PAR_MAX; other values are capped there. */
unsigned amq__par_resolve(unsigned threads);

/* Set the calling thread's build thread count (resolved); returns the
 * previous one, to be given back to amq__par_restore. */
unsigned amq__par_scope(unsigned threads);
void amq__par_restore(unsigned previous);

#endif
