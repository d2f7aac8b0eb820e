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
    amq__spin_lock(&f->regions[r].lock);
}

static inline void region_unlock(const amq_qf *f, uint64_t r) {
    amq__spin_unlock(&f->regions[r].lock);
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

/* ---- the counters inside a window ------------------------------------------ */

/* Counter c += v (modulo 2^64): in concurrent mode in the share of region
 * r0, whose lock the operation holds. */
static inline void ctr_add(amq_qf *f, const qwin *w, int c, uint64_t v) {
    if (!f->concurrent) {
        *ctr_base(f, c) += v;
        return;
    }
    uint64_t *s = &f->regions[w->r0].share[c];
    ctr_set(s, ctr_get(s) + v);
}

#define QF_SHARES (1ULL << 62) /* the items' shares sum to less in size */

/* May the items grow (add) or shrink by k here? AMQ_ERR_OVERFLOW past
 * 2^64 - 1; in concurrent mode need_more when the share would leave
 * +-2^62 / regions or the base is past 2^64 - 1 - 2^62 (then every lock
 * is held, the total is exact and folded into the base). Nothing is
 * counted: items_move does that. */
static inline amq_status items_may(amq_qf *f, qwin *w, uint64_t k, bool add) {
    if (!f->concurrent || whole(f, w)) {
        uint64_t t = f->concurrent ? qf_total(f, QF_ITEMS) : f->o.items;
        return add && t > UINT64_MAX - k ? AMQ_ERR_OVERFLOW : AMQ_OK;
    }
    int64_t cap = (int64_t)(QF_SHARES / f->nregions);
    int64_t s = (int64_t)ctr_get(&f->regions[w->r0].share[QF_ITEMS]);
    if (k > (uint64_t)cap ||
        (add ? s > cap - (int64_t)k : s < (int64_t)k - cap) ||
        ctr_get(&f->o.items) > UINT64_MAX - QF_SHARES)
        return need_more(w);
    return AMQ_OK;
}

/* Count the k items items_may allowed. */
static inline void items_move(amq_qf *f, qwin *w, uint64_t k, bool add) {
    if (f->concurrent && whole(f, w)) {
        qf_fold(f); /* the base takes it: shares stay small */
        ctr_set(&f->o.items, ctr_get(&f->o.items) + (add ? k : 0 - k));
    } else {
        ctr_add(f, w, QF_ITEMS, add ? k : 0 - k);
    }
}

/* items_may, then items_move. */
static inline amq_status items_reserve(amq_qf *f, qwin *w, uint64_t k) {
    AMQ_RETURN_IF_ERR(items_may(f, w, k, true));
    items_move(f, w, k, true);
    return AMQ_OK;
}

#endif
