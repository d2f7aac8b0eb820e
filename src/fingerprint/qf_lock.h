/*
 * qf_lock.h — the window an operation on the quotient filter may touch,
 * and in concurrent mode the per-region spin locks behind it (the protocol
 * is in qf_impl.h).
 */
#ifndef AMQ_SRC_FINGERPRINT_QF_LOCK_H
#define AMQ_SRC_FINGERPRINT_QF_LOCK_H

#include "core/spin.h"
#include "fingerprint/qf_impl.h"

/* ---- the window an operation may touch (concurrent mode) ----------------- */

/* Blocks [lob, hib) may be read and written: the whole table, or in
 * concurrent mode the regions r0..r1 this operation holds. */
typedef struct qwin {
    uint64_t lob, hib;
    uint64_t r0, r1; /* held regions; r0 > r1 when none */
    bool widen;      /* the operation needs more than the window */
} qwin;

static inline void region_lock(const amq_qf *f, uint64_t r) {
    amq__spin_lock(&f->locks[r]);
}

static inline void region_unlock(const amq_qf *f, uint64_t r) {
    amq__spin_unlock(&f->locks[r]);
}

/* Take regions r0..r1 in increasing order and make them the window. */
static inline void win_lock(const amq_qf *f, qwin *w, uint64_t r0,
                            uint64_t r1) {
    for (uint64_t r = r0; r <= r1; r++)
        region_lock(f, r);
    w->r0 = r0;
    w->r1 = r1;
    w->lob = r0 * QF_REGION_BLOCKS;
    w->hib = r1 + 1 >= f->nregions ? f->nblocks : (r1 + 1) * QF_REGION_BLOCKS;
}

/* Enter for an operation on quotient q: region(q) and the next one. */
static inline void win_enter(const amq_qf *f, uint64_t q, qwin *w) {
    w->widen = false;
    if (!f->concurrent) {
        *w = (qwin){0, f->nblocks, 1, 0, false};
        return;
    }
    uint64_t r0 = (q >> 6) / QF_REGION_BLOCKS;
    win_lock(f, w, r0, r0 + 1 < f->nregions ? r0 + 1 : r0);
}

static inline void win_leave(const amq_qf *f, qwin *w) {
    for (uint64_t r = w->r1 + 1; r-- > w->r0;)
        region_unlock(f, r);
    w->r0 = 1;
    w->r1 = 0;
}

static inline amq_status need_more(qwin *w) {
    w->widen = true;
    return AMQ_ERR_FULL; /* never returned: the caller widens and retries */
}

static inline bool whole(const amq_qf *f, const qwin *w) {
    return w->lob == 0 && w->hib == f->nblocks;
}

#endif
