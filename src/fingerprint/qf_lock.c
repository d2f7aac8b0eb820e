/*
 * qf_lock.c — the quotient filter's region locks (qf_lock.h): a spin lock
 * per region that yields the core now and then (its holder may have lost
 * its own), windows of regions taken in increasing order, and the global
 * fallback.
 */
#include <sched.h>

#include "fingerprint/qf_lock.h"

static inline void cpu_relax(void) {
#if defined(__x86_64__)
    __builtin_ia32_pause();
#endif
}

static void region_lock(const amq_qf *f, uint64_t r) {
    uint8_t *l = &f->locks[r];
    unsigned spins = 0;
    while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE) != 0) {
        while (__atomic_load_n(l, __ATOMIC_RELAXED) != 0) {
            cpu_relax();
            if (++spins % 1024 == 0)
                sched_yield(); /* the holder may have lost its core */
        }
    }
}

void amq__qf_win_lock(const amq_qf *f, qwin *w, uint64_t r0, uint64_t r1) {
    for (uint64_t r = r0; r <= r1; r++)
        region_lock(f, r);
    w->r0 = r0;
    w->r1 = r1;
    w->lob = r0 * QF_REGION_BLOCKS;
    w->hib = r1 + 1 >= f->nregions ? f->nblocks
                                   : (r1 + 1) * QF_REGION_BLOCKS;
}

/* The global fallback: every region, in increasing order. */
QF_COLD void amq__qf_win_widen(const amq_qf *f, qwin *w) {
    __atomic_fetch_add(&((amq_qf *)f)->widenings, 1, __ATOMIC_RELAXED);
    win_leave(f, w);
    w->widen = false;
    amq__qf_win_lock(f, w, 0, f->nregions - 1);
}
