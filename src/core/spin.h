/*
 * spin.h — a one-byte spin lock, for tables that keep a lock per region
 * or block beside their data (the quotient filters' regions, the vector
 * quotient filter's blocks). Acquire on lock and release on unlock order
 * the guarded bytes between holders.
 *
 * The waiter spins on a plain load (the line stays shared until the holder
 * writes it) and yields the core every 1024 spins: on a VM the holder may
 * have lost its own.
 */
#ifndef AMQ_SRC_CORE_SPIN_H
#define AMQ_SRC_CORE_SPIN_H

#include <sched.h>
#include <stdint.h>

static inline void amq__cpu_relax(void) {
#if defined(__x86_64__)
    __builtin_ia32_pause();
#endif
}

static inline void amq__spin_lock(uint8_t *l) {
    unsigned spins = 0;
    while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE) != 0) {
        while (__atomic_load_n(l, __ATOMIC_RELAXED) != 0) {
            amq__cpu_relax();
            if (++spins % 1024 == 0)
                sched_yield();
        }
    }
}

static inline void amq__spin_unlock(uint8_t *l) {
    __atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

#endif
