/*
 * tally.h — counts that many threads add to at once, each thread in a
 * cache line of its own.
 *
 * A filter in concurrent mode counts its items (and the Bloom filter its
 * set bits) on every insert. One shared counter is written by every
 * insert of every thread, so its line moves between the cores on almost
 * every call, and two threads insert slower than one. A tally keeps one
 * stripe (a line of AMQ__TALLY_COUNTS counters) per thread: a thread takes
 * the next stripe the first time it adds to any tally, and keeps it. Past
 * AMQ__TALLY_STRIPES threads, stripes are shared, with atomic adds, so the
 * sum stays exact; only the speed goes back towards one shared counter.
 *
 * The sum is exact once the adds are done; read during adds, it is some
 * value between the counts before and after them. Counters wrap modulo
 * 2^64, so adding (uint64_t)-1 takes one away.
 *
 * Structures place a tally in the room after their own fields (allocated
 * with it, freed with it): AMQ__TALLY_ROOM bytes, aligned by amq__tally_in.
 */
#ifndef AMQ_SRC_CORE_TALLY_H
#define AMQ_SRC_CORE_TALLY_H

#include <stdint.h>

#define AMQ__TALLY_STRIPES 32
#define AMQ__TALLY_COUNTS 8

typedef struct amq__tally {
    struct {
        _Alignas(64) uint64_t n[AMQ__TALLY_COUNTS];
    } s[AMQ__TALLY_STRIPES];
} amq__tally;

/* The bytes to reserve for a tally at any address. */
#define AMQ__TALLY_ROOM (sizeof(amq__tally) + 63)

/* The tally in `room` (AMQ__TALLY_ROOM bytes, zeroed: all counts 0). */
static inline amq__tally *amq__tally_in(void *room) {
    return (amq__tally *)(((uintptr_t)room + 63) & ~(uintptr_t)63);
}

/* This thread's stripe + 1; 0 until it first adds (tally.c). */
extern _Thread_local unsigned amq__tally_mine;
unsigned amq__tally_take_stripe(void);

/* Count c (< AMQ__TALLY_COUNTS) += v, on this thread's stripe. */
static inline void amq__tally_add(amq__tally *t, unsigned c, uint64_t v) {
    unsigned s = amq__tally_mine;
    if (__builtin_expect(s == 0, 0))
        s = amq__tally_take_stripe();
    __atomic_fetch_add(&t->s[s - 1].n[c], v, __ATOMIC_RELAXED);
}

/* Count c over every stripe. */
uint64_t amq__tally_sum(const amq__tally *t, unsigned c);

/* Count c back to 0 (no adds may run meanwhile). */
void amq__tally_clear(amq__tally *t, unsigned c);

#endif
