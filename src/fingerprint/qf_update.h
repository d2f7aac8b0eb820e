/*
 * qf_update.h — the steps every update of a quotient-filter table shares,
 * whatever its groups hold (qf copies, cqf counters, maplet values): a
 * run's bounds, the item counter, and opening or closing one slot with the
 * offsets that follow (qf_impl.h has the layout and the locking window).
 * Inline for the same reason as qf_block.h.
 */
#ifndef AMQ_SRC_FINGERPRINT_QF_UPDATE_H
#define AMQ_SRC_FINGERPRINT_QF_UPDATE_H

#include "fingerprint/qf_block.h"

/* The hot paths of qf_ops.c and the maplet's are instantiated twice from
 * the same inline code: once for any CPU, once (x86-64) with POPCNT/BMI2
 * enabled so select and popcount become single instructions; f->use_pdep
 * picks one per call (AMQ_OPT_SCALAR: always the first). */
#define QF_ANY __attribute__((flatten))
#if defined(__x86_64__)
#define QF_ISA __attribute__((flatten, target("popcnt,bmi,bmi2")))
#else
#define QF_ISA QF_ANY
#endif

/* The global fallback of concurrent mode: every region, in increasing
 * order (counted). Out of line (it is rare) but in the including file, so
 * the operations still see everything it touches. */
static QF_COLD __attribute__((unused)) void win_widen(const amq_qf *f,
                                                      qwin *w) {
    __atomic_fetch_add(&((amq_qf *)f)->widenings, 1, __ATOMIC_RELAXED);
    win_leave(f, w);
    w->widen = false;
    win_lock(f, w, 0, f->nregions - 1);
}

/* ---- locating a run ------------------------------------------------------ */

typedef struct spot {
    uint64_t rs, re; /* run [rs, re); re == rs if the run is empty */
    uint64_t pos;    /* the group's first slot, or the insertion point */
    group g;         /* g.count == 0 if r is absent */
    bool run;        /* run q exists */
} spot;

/* Bounds of run q, read from q's block onward: it starts at
 * max(q, end(q - 1)) and ends at the next run end. false if they lie past
 * the window. */
static inline bool run_of(const amq_qf *f, uint64_t q, const qwin *w, spot *s) {
    uint64_t b = q >> 6, occ = occ_word(f, b), o, st;
    unsigned j = (unsigned)(q & 63);
    if (!true_off(f, b, w, &o))
        return false;
    uint64_t d = popcnt(f, occ & ((1ULL << j) - 1));
    st = b * 64 + o;
    if (d > 0) {
        st = select_rend(f, st, d, w->hib);
        if (st >= w->hib * 64)
            return false;
        st++;
    }
    s->rs = st > q ? st : q;
    s->run = (occ >> j) & 1;
    s->re = s->rs;
    if (s->run) {
        uint64_t e = next_rend(f, s->rs, w->hib);
        if (e >= w->hib * 64)
            return false;
        s->re = e + 1;
    }
    return true;
}

/* Run q's bounds read from q's block alone, as block-local slots
 * [*st, *en) (*st the place of a new run when *run is false): take the
 * block's offset o, skip the d run ends at or after o that belong to the
 * block's quotients below q, and the next one ends run q. false when the
 * offset is saturated or the run (or its place) is not inside the block;
 * the caller then takes run_of. */
static inline bool run_in_block(const amq_qf *f, uint64_t q, uint64_t *st,
                                uint64_t *en, bool *run) {
    const uint8_t *b = blk(f, q >> 6);
    unsigned j = (unsigned)(q & 63), o = b[0];
    uint64_t occ = amq__get_u64(b + 1);
    uint64_t ends = amq__get_u64(b + 9) & (~0ULL << (o & 63));
    uint64_t d = popcnt(f, occ & ((1ULL << j) - 1)), r = (occ >> j) & 1;
    if (o >= 64 || popcnt(f, ends) < d + r)
        return false;
    uint64_t s = d > 0 ? select64(f, ends, (unsigned)(d - 1)) + 1 : o;
    *st = s > j ? s : j;
    *en = r ? select64(f, ends, (unsigned)d) + 1 : *st;
    *run = r != 0;
    return true;
}

/* The free slots that opening slots from..g-1 at p needs, e[from..g):
 * each the first free slot after the previous one (nothing moves before
 * the whole update is known to fit). AMQ_ERR_FULL past the table, or the
 * window's need_more when the answer lies past it. */
static inline amq_status free_slots(const amq_qf *f, uint64_t p, uint64_t from,
                                    uint64_t g, uint64_t *e, qwin *w) {
    for (uint64_t i = from; i < g; i++) {
        uint64_t x = first_free(f, i > 0 ? e[i - 1] + 1 : p, w);
        if (x == QF_NOWHERE)
            return need_more(w);
        if (x >= f->tslots)
            return AMQ_ERR_FULL;
        e[i] = x;
    }
    return AMQ_OK;
}

/* ---- opening and closing one slot ------------------------------------------ */

/* One slot was opened for quotient q and the cluster shifted up to the
 * free slot e: blocks (block(q), block(e)] have one more slot of earlier
 * runs in them (a saturated offset stays saturated). */
static inline void offsets_up(amq_qf *f, uint64_t q, uint64_t e) {
    for (uint64_t b = (q >> 6) + 1; b <= e >> 6; b++) {
        unsigned o = off_get(f, b);
        if (o < QF_OFF_SAT)
            blk(f, b)[0] = (uint8_t)(o + 1);
    }
}

/* One slot of run q was removed and the cluster shifted down up to s:
 * blocks (block(q), block(s - 1)] have one slot fewer. A saturated offset
 * is recomputed from its predecessor's new true offset (the caller made
 * sure the window allows it). */
static inline void offsets_down(amq_qf *f, uint64_t q, uint64_t s,
                                const qwin *w) {
    uint64_t t = QF_NOWHERE;
    for (uint64_t b = (q >> 6) + 1; b <= (s - 1) >> 6; b++) {
        unsigned o = off_get(f, b);
        if (o < QF_OFF_SAT) {
            t = o > 0 ? o - 1 : 0;
        } else {
            if (t == QF_NOWHERE && !true_off(f, b - 1, w, &t))
                t = QF_NOWHERE;
            if (t != QF_NOWHERE)
                t = next_off(f, b - 1, t, w->hib);
        }
        off_set(f, b, t);
    }
}

/* Any saturated offset in blocks [b0, b1]? */
static inline bool saturated_in(const amq_qf *f, uint64_t b0, uint64_t b1) {
    for (uint64_t b = b0; b <= b1; b++)
        if (off_get(f, b) == QF_OFF_SAT)
            return true;
    return false;
}

typedef enum open_kind { OPEN_NEW_RUN, OPEN_APPEND, OPEN_INSIDE } open_kind;

/* A slot at p joins run q (a new run, its new last slot, or inside it);
 * e is the first free slot at or after p. */
static inline void open_slot(amq_qf *f, uint64_t q, uint64_t p, uint64_t e,
                             open_kind kind) {
    shift_up(f, p, e);
    if (kind == OPEN_NEW_RUN) {
        occ_put(f, q, true);
        rend_put(f, p, true);
    } else if (kind == OPEN_APPEND) {
        rend_put(f, p - 1, false);
        rend_put(f, p, true);
    } else {
        rend_put(f, p, false);
    }
    offsets_up(f, q, e);
}

/* open_slot when the stretch [p, e) lies in q's block (block-local p < e
 * < 64 or p == e), followed by writing r into the new slot: the common
 * insert, with the block's words loaded and stored once. */
static inline void open_in_block(amq_qf *f, uint64_t q, uint64_t p, uint64_t e,
                                 open_kind kind, uint64_t r) {
    uint8_t *b = blk(f, q >> 6);
    uint64_t occ = amq__get_u64(b + 1), ends = amq__get_u64(b + 9);
    uint64_t bit = p * f->width;
    if (e > p) {
        uint64_t m = span_mask(p + 1, e + 1);
        bits_up(b + QF_HDR, bit, e * f->width, f->width);
        ends = (ends & ~m) | ((ends << 1) & m);
    }
    if (kind == OPEN_NEW_RUN)
        occ |= 1ULL << (q & 63), ends |= 1ULL << p;
    else if (kind == OPEN_APPEND)
        ends = (ends & ~(1ULL << (p - 1))) | (1ULL << p);
    else
        ends &= ~(1ULL << p);
    amq__put_u64(b + 1, occ);
    amq__put_u64(b + 9, ends);
    uint8_t *at = b + QF_HDR + (bit >> 3);
    uint64_t m = f->wmask << (bit & 7), x = amq__get_u64(at);
    amq__put_u64(at, (x & ~m) | ((r << (bit & 7)) & m));
}

/* Slot p of run s (quotient q) goes; s_end is stretch_end(p). */
static inline void close_slot(amq_qf *f, uint64_t q, uint64_t p, uint64_t s_end,
                              spot *s, const qwin *w) {
    if (p == s->re - 1) {
        if (p == s->rs)
            occ_put(f, q, false);
        else
            rend_put(f, p - 1, true);
    }
    shift_down(f, p, s_end);
    s->re--;
    offsets_down(f, q, s_end, w);
}

#endif
