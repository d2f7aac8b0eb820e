/*
 * mqf_ops.c — putting, deleting and reading one key of a quotient maplet
 * (mqf.h has the groups): locate the key's run (from its block alone when
 * it can) and its group, then open or close slots exactly as the quotient
 * filter does (qf_update.h), inside the window its region locks allow.
 *
 * What each update does to the key's group G (R = its remainder):
 *
 *   put(v)      combine max/min/or  G absent: open 1 slot (R, v);
 *                                   else rewrite G's one slot in place
 *               combine sum         open the slots G's counter grows by
 *                                   (0 or 1 for most counts), rewrite G
 *               multiset            open 1 slot (R, v) at its sorted place
 *   delete(v)   combine sum         G - v (NOT_FOUND if G < v): rewrite G
 *                                   shorter, close the slots it lost
 *               multiset            close one slot equal to (R, v)
 *
 * Every check (room, overflow, presence) happens before anything moves,
 * so a failure leaves the table as it was; in concurrent mode an update
 * whose shift or look-back leaves the window changes nothing, takes every
 * region lock and starts again (qf_impl.h).
 */
#include "fingerprint/qf_query.h"
#include "fingerprint/qf_vbmi.h"
#include "maplet/mqf.h"

/* ---- locating a key -------------------------------------------------------- */

typedef struct mspot {
    spot s;       /* run bounds                                  */
    uint64_t pos; /* the group's first slot, or the insertion point */
    mgroup g;     /* g.len == 0 if the remainder is absent        */
} mspot;

/* Run q's bounds: the block-local fast path, else run_of. */
static inline bool mq_run(const amq_qf *f, uint64_t q, const qwin *w, spot *s) {
    uint64_t st, en, base = q & ~63ULL;
    bool run;
    if ((q >> 6) < f->fast_blocks && run_in_block(f, q, &st, &en, &run)) {
        s->rs = base + st;
        s->re = base + en;
        s->run = run;
        return true;
    }
    return run_of(f, q, w, s);
}

/* Remainder rem's group in run m->s: m->g and m->pos, or the insertion
 * point with m->g.len == 0. Without counters a run is a sorted list of
 * slot words; with them it is walked group by group. false only for an
 * undecodable counter (a corrupt table). */
static inline bool mq_find(const amq_qf *f, uint64_t rem, mspot *m) {
    uint64_t pos = m->s.rs, re = m->s.re;
    m->g = (mgroup){rem, 0, 0, 0};
    if (!mq_counters(f) && f->width <= 64) { /* one-word slots */
        while (pos < re && slot_get(f, pos) >> f->vbits < rem)
            pos++;
        m->pos = pos;
        if (pos < re && slot_get(f, pos) >> f->vbits == rem)
            return mq_decode(f, pos, re, &m->g);
        return true;
    }
    if (!mq_counters(f)) {
        while (pos < re && mq_rem(f, slot_get2(f, pos)) < rem)
            pos++;
        m->pos = pos;
        if (pos < re && mq_rem(f, slot_get2(f, pos)) == rem)
            return mq_decode(f, pos, re, &m->g);
        return true;
    }
    while (pos < re) {
        mgroup g;
        if (!mq_decode(f, pos, re, &g))
            return false;
        if (g.rem >= rem) {
            if (g.rem == rem)
                m->g = g;
            break;
        }
        pos += g.len;
    }
    m->pos = pos;
    return true;
}

/* Run and group of (q, rem): false if they lie past the window. */
static inline bool mq_locate(const amq_qf *f, uint64_t q, uint64_t rem,
                             const qwin *w, mspot *m, amq_status *st) {
    *st = AMQ_OK;
    if (!mq_run(f, q, w, &m->s))
        return false;
    if (!mq_find(f, rem, m))
        *st = AMQ_ERR_CORRUPT;
    return true;
}

/* ---- put ------------------------------------------------------------------- */

/* What a put does once the group is known. */
typedef struct mplan {
    uint64_t open;  /* slots to open                          */
    uint64_t at;    /* where they open                        */
    uint64_t value; /* combine mode: the group's new value     */
} mplan;

/* The first slot of multiset group m whose value exceeds v. */
static uint64_t mq_sorted_place(const amq_qf *f, const mspot *m, uint64_t v) {
    uint64_t p = m->pos, end = m->pos + m->g.len;
    while (p < end && mq_val(f, slot_get2(f, p)) <= v)
        p++;
    return p;
}

static amq_status mq_plan_put(const amq_qf *f, const mspot *m, uint64_t v,
                              mplan *pl) {
    bool over = false;
    if (m->g.len == 0) {
        *pl = (mplan){1, m->pos, v};
        return AMQ_OK;
    }
    uint64_t value = mq_combine(f->mop, m->g.value, v, &over);
    if (over)
        return AMQ_ERR_OVERFLOW;
    if (f->multiset) {
        *pl = (mplan){1, mq_sorted_place(f, m, v), value};
        return AMQ_OK;
    }
    uint64_t len = mq_counters(f) ? mq_sum_len(f, value) : 1;
    if (len > QF_MAX_GROUP)
        return AMQ_ERR_FULL;
    *pl = (mplan){len - m->g.len, m->pos + m->g.len, value};
    return AMQ_OK;
}

/* Write what the plan opened: one new slot, or the rewritten group. */
static void mq_write_put(amq_qf *f, const mspot *m, uint64_t rem, uint64_t v,
                         const mplan *pl) {
    if (f->multiset || m->g.len == 0)
        slot_set2(f, pl->at, mq_word(f, rem, v));
    else if (mq_counters(f))
        mq_sum_write(f, m->pos, rem, pl->value);
    else
        slot_set2(f, m->pos, mq_word(f, rem, pl->value));
}

/* Open pl->open slots at pl->at for run q: find every free slot first
 * (nothing moves before the put is known to fit), then shift. */
static amq_status mq_open(amq_qf *f, uint64_t q, const mspot *m,
                          const mplan *pl, qwin *w, uint64_t weight) {
    uint64_t e[QF_MAX_GROUP], p = pl->at;
    AMQ_RETURN_IF_ERR(free_slots(f, p, 0, pl->open, e, w));
    AMQ_RETURN_IF_ERR(items_reserve(f, w, weight));
    open_kind kind = !m->s.run      ? OPEN_NEW_RUN
                     : p == m->s.re ? OPEN_APPEND
                                    : OPEN_INSIDE;
    for (uint64_t i = 0; i < pl->open; i++)
        open_slot(f, q, p, e[i], i == 0 ? kind : OPEN_INSIDE);
    return AMQ_OK;
}

/* One new slot whose free slot is in q's block too: only that block
 * changes (the quotient filter's common insert, open_in_block). */
static bool mq_put_in_block(amq_qf *f, uint64_t q, const mspot *m,
                            uint64_t word, const mplan *pl, qwin *w) {
    uint64_t p = pl->at;
    if (pl->open != 1 || (p >> 6) != (q >> 6) || (q >> 6) >= f->fast_blocks)
        return false;
    uint64_t x = free_in_block(f, q >> 6, p & 63);
    if (x >= 64 || items_reserve(f, w, mq_weight(f, word & f->vmask)) != AMQ_OK)
        return false;
    open_kind kind = !m->s.run      ? OPEN_NEW_RUN
                     : p == m->s.re ? OPEN_APPEND
                                    : OPEN_INSIDE;
    open_in_block(f, q, p & 63, x, kind, word);
    return true;
}

static amq_status mq_put_in(amq_qf *f, uint64_t q, uint64_t rem, uint64_t v,
                            qwin *w) {
    mspot m;
    mplan pl;
    amq_status st;
    if (!mq_locate(f, q, rem, w, &m, &st))
        return need_more(w);
    AMQ_RETURN_IF_ERR(st);
    AMQ_RETURN_IF_ERR(items_may(f, w, 1, true)); /* a put adds 1 at least */
    AMQ_RETURN_IF_ERR(mq_plan_put(f, &m, v, &pl));
    bool single = f->multiset || m.g.len == 0;
    if (single &&
        mq_put_in_block(f, q, &m, (uint64_t)mq_word(f, rem, v), &pl, w))
        goto counted;
    if (pl.open > 0)
        AMQ_RETURN_IF_ERR(mq_open(f, q, &m, &pl, w, mq_weight(f, v)));
    else
        AMQ_RETURN_IF_ERR(items_reserve(f, w, mq_weight(f, v)));
    mq_write_put(f, &m, rem, v, &pl);
counted:
    ctr_add(f, w, QF_DISTINCT, m.g.len == 0);
    ctr_add(f, w, QF_USED, pl.open);
    return AMQ_OK;
}

/* ---- delete ------------------------------------------------------------------ */

/* The slots a delete of v from group m closes, at *at, and the group's
 * new value (combine sum). */
static amq_status mq_plan_del(const amq_qf *f, const mspot *m, uint64_t v,
                              uint64_t *cut, uint64_t *at, uint64_t *value) {
    if (m->g.len == 0)
        return AMQ_ERR_NOT_FOUND;
    if (f->multiset) {
        uint64_t p = m->pos, end = m->pos + m->g.len;
        while (p < end && mq_val(f, slot_get2(f, p)) < v)
            p++;
        if (p == end || mq_val(f, slot_get2(f, p)) != v)
            return AMQ_ERR_NOT_FOUND;
        *cut = 1;
        *at = p;
        return AMQ_OK;
    }
    if (m->g.value < v)
        return AMQ_ERR_NOT_FOUND;
    *value = m->g.value - v;
    uint64_t len = *value > 0 ? mq_sum_len(f, *value) : 0;
    *cut = m->g.len - len;
    *at = m->pos + len;
    return AMQ_OK;
}

static amq_status mq_del_in(amq_qf *f, uint64_t q, uint64_t rem, uint64_t v,
                            qwin *w) {
    mspot m;
    amq_status st;
    uint64_t cut = 0, p = 0, value = 0, s_end = 0;
    if (!occ_get(f, q))
        return AMQ_ERR_NOT_FOUND;
    if (!mq_locate(f, q, rem, w, &m, &st))
        return need_more(w);
    AMQ_RETURN_IF_ERR(st);
    AMQ_RETURN_IF_ERR(mq_plan_del(f, &m, v, &cut, &p, &value));
    AMQ_RETURN_IF_ERR(items_may(f, w, mq_weight(f, v), false));
    if (cut > 0) {
        s_end = stretch_end(f, p, w);
        if (s_end == QF_NOWHERE ||
            (!whole(f, w) && saturated_in(f, q >> 6, (s_end - 1) >> 6)))
            return need_more(w);
    }
    if (!f->multiset && value > 0)
        mq_sum_write(f, m.pos, rem, value);
    for (uint64_t i = 0; i < cut; i++) {
        if (i > 0)
            s_end = stretch_end(f, p, w); /* only shrinks: in the window */
        close_slot(f, q, p, s_end, &m.s, w);
    }
    bool gone = f->multiset ? m.g.n == 1 : value == 0;
    items_move(f, w, mq_weight(f, v), false);
    ctr_add(f, w, QF_DISTINCT, 0 - (uint64_t)gone);
    ctr_add(f, w, QF_USED, 0 - cut);
    return AMQ_OK;
}

/* ---- windows, locks, one widening ------------------------------------------- */

static amq_status mq_apply(amq_qf *f, uint64_t q, uint64_t rem, uint64_t v,
                           bool put, qwin *w) {
    return put ? mq_put_in(f, q, rem, v, w) : mq_del_in(f, q, rem, v, w);
}

/* The whole update: window (locks), the operation, and at most one
 * widening to every region (a whole valid table always suffices). */
static inline amq_status mq_update(amq_qf *f, uint64_t h, uint64_t v,
                                   bool put) {
    uint64_t q, rem;
    qwin w;
    split(f, h, &q, &rem);
    prefetch_block(f, q);
    win_enter(f, q, &w);
    amq_status st = mq_apply(f, q, rem, v, put, &w);
    if (w.widen) {
        st = AMQ_ERR_CORRUPT;
        if (!whole(f, &w)) {
            win_widen(f, &w);
            st = mq_apply(f, q, rem, v, put, &w);
        }
        if (w.widen)
            st = AMQ_ERR_CORRUPT;
    }
    if (f->concurrent)
        win_leave(f, &w);
    return st;
}

/* The common lookup, read from q's block alone with 64-bit slot words
 * (slots up to 56 bits, no sum counters, the run inside the block): scan
 * the run's sorted slots for remainder rem, and combine its group (a
 * multiset's values follow it). false when it cannot say (the caller
 * takes the general path); else *g as mq_find would set it. */
static inline bool mq_read_block(const amq_qf *f, uint64_t q, uint64_t rem,
                                 mgroup *g) {
    uint64_t st, en, k;
    bool run, over = false;
    if ((q >> 6) >= f->fast_blocks || mq_counters(f) ||
        !run_in_block(f, q, &st, &en, &run))
        return false;
    const uint8_t *p = blk(f, q >> 6) + QF_HDR;
    unsigned wd = f->width, vb = f->vbits;
    uint64_t s = 0;
    for (k = st; k < en; k++) {
        uint64_t bit = k * wd;
        s = (amq__get_u64(p + (bit >> 3)) >> (bit & 7)) & f->wmask;
        if (s >> vb >= rem)
            break;
    }
    *g = (mgroup){rem, 0, 0, 0};
    if (k == en || s >> vb != rem)
        return true;
    *g = (mgroup){rem, 1, s & f->vmask, 1};
    for (k++; f->multiset && k < en; k++) {
        uint64_t bit = k * wd;
        s = (amq__get_u64(p + (bit >> 3)) >> (bit & 7)) & f->wmask;
        if (s >> vb != rem)
            break;
        g->value = mq_combine(f->mop, g->value, s & f->vmask, &over);
        g->len++, g->n++;
    }
    return !over;
}

/* Key h's group (g->len == 0: absent) under the window's locks; the
 * slots of a multiset group go to vals[0..cap) when vals is given. */
static inline amq_status mq_read(const amq_qf *f, uint64_t h, mgroup *g,
                                 uint64_t *vals, size_t cap, bool prefetch) {
    uint64_t q, rem;
    qwin w;
    mspot m = {{0, 0, 0, {0, 0, 0}, false}, 0, {0, 0, 0, 0}};
    amq_status st = AMQ_OK;
    split(f, h, &q, &rem);
    if (prefetch)
        prefetch_block(f, q);
    *g = (mgroup){rem, 0, 0, 0};
    if (!f->concurrent && (!occ_get(f, q) || /* unlocked only when alone */
                           (vals == NULL && mq_read_block(f, q, rem, g))))
        return AMQ_OK;
    win_enter(f, q, &w);
    bool ok = !occ_get(f, q) || (vals == NULL && mq_read_block(f, q, rem, g));
    if (!ok && !(ok = mq_locate(f, q, rem, &w, &m, &st)) && !whole(f, &w)) {
        win_widen(f, &w);
        ok = mq_locate(f, q, rem, &w, &m, &st);
    }
    if (ok && st == AMQ_OK && m.g.len > 0) {
        *g = m.g;
        for (uint64_t i = 0; vals != NULL && i < m.g.len && i < cap; i++)
            vals[i] = mq_val(f, slot_get2(f, m.pos + i));
    }
    if (f->concurrent)
        win_leave(f, &w);
    return ok ? st : AMQ_ERR_CORRUPT;
}

/* ---- the operations ----------------------------------------------------------- */

/* Each public operation twice, for any CPU and with POPCNT/BMI2, from the
 * same inline code (as the quotient filter's, qf_update.h). */
static QF_ANY amq_status put_any(amq_qf *f, uint64_t h, uint64_t v) {
    return mq_update(f, h, v, true);
}
static QF_ISA amq_status put_isa(amq_qf *f, uint64_t h, uint64_t v) {
    return mq_update(f, h, v, true);
}
/* Batch put: each key's block is prefetched QF_INSERT_AHEAD keys ahead,
 * so the misses of consecutive puts overlap (as the quotient filter's
 * batch insert); v NULL puts the value 1. Stops at the first failure. */
static inline amq_status put_batch(amq_qf *f, const uint64_t *h,
                                   const uint64_t *v, size_t n, size_t *done) {
    size_t ahead = n < QF_INSERT_AHEAD ? n : QF_INSERT_AHEAD, i;
    amq_status st = AMQ_OK;
    for (i = 0; i < ahead; i++)
        prefetch_block(f, quotient_of(f, h[i]));
    for (i = 0; i < n && st == AMQ_OK; i++) {
        uint64_t x = v != NULL ? v[i] : 1;
        if (i + QF_INSERT_AHEAD < n)
            prefetch_block(f, quotient_of(f, h[i + QF_INSERT_AHEAD]));
        if (x > f->vmask)
            st = AMQ_ERR_INVALID;
        else if (x != 0 || !mq_is_sum(f))
            st = mq_update(f, h[i], x, true);
    }
    *done = st == AMQ_OK ? n : i - 1;
    return st;
}
static QF_ANY amq_status batch_any(amq_qf *f, const uint64_t *h,
                                   const uint64_t *v, size_t n, size_t *done) {
    return put_batch(f, h, v, n, done);
}
static QF_ISA amq_status batch_isa(amq_qf *f, const uint64_t *h,
                                   const uint64_t *v, size_t n, size_t *done) {
    return put_batch(f, h, v, n, done);
}

static QF_ANY amq_status del_any(amq_qf *f, uint64_t h, uint64_t v) {
    return mq_update(f, h, v, false);
}
static QF_ISA amq_status del_isa(amq_qf *f, uint64_t h, uint64_t v) {
    return mq_update(f, h, v, false);
}
static QF_ANY amq_status read_any(const amq_qf *f, uint64_t h, mgroup *g,
                                  uint64_t *vals, size_t cap, bool pf) {
    return mq_read(f, h, g, vals, cap, pf);
}
static QF_ISA amq_status read_isa(const amq_qf *f, uint64_t h, mgroup *g,
                                  uint64_t *vals, size_t cap, bool pf) {
    return mq_read(f, h, g, vals, cap, pf);
}
static inline amq_status read(const amq_qf *f, uint64_t h, mgroup *g,
                              uint64_t *vals, size_t cap, bool pf) {
    return f->use_pdep ? read_isa(f, h, g, vals, cap, pf)
                       : read_any(f, h, g, vals, cap, pf);
}

/* Key h's group in *g: AMQ_OK, AMQ_ERR_NOT_FOUND (g->len == 0), or
 * AMQ_ERR_CORRUPT for a counter that cannot be read. */
static inline amq_status group_of(const amq_qf *f, uint64_t h, mgroup *g) {
    AMQ_RETURN_IF_ERR(read(f, h, g, NULL, 0, true));
    return g->len > 0 ? AMQ_OK : AMQ_ERR_NOT_FOUND;
}

/* ---- the one-key query kernels ------------------------------------------------ */

/* A query of a maplet nobody updates concurrently, as the quotient
 * filter's (qf_ops.c, "the one-key query kernels", and qf_query.h): the
 * occupied bit, then run q's slots as one word, each field's value bits
 * masked off and its remainder compared with rem at once. With
 * k = (rem << v) and km = (rmask << v) repeated in every field,
 *
 *   x = (word ^ k) & km        a field is 0 iff its remainder is rem
 *   z = (x - lo) & ~x & hi     its lowest set bit: the top bit of the
 *                              first such field (qf_ops.c)
 *
 * so no set bit means "absent" for every mode: each group starts with a
 * slot of its own remainder. A set bit is the group's first slot in
 * combine mode with max, min or or (the value is that field's) and in
 * multiset mode (present; the values are combined by the exact path).
 * With sum counters a field may also be a counter's digit, unless the run
 * has no slot of value 0 (every counter opens with (R, 0)): adding m to
 * each field's value sets its bit v iff the value is not 0. A count of
 * m or more takes two slots or more, so its value comes from the exact
 * path, as does every run the word does not hold (*out). The exact path
 * is mq_read, the reference the tests compare these kernels with. */

/* The answer of the kernel: absent, present with *v, or ask mq_read. */
typedef enum { MQ_NO, MQ_YES, MQ_ASK } mq_answer;

static inline __attribute__((always_inline)) mq_answer mq_quick(
    const amq_qf *f, uint64_t q, uint64_t rem, bool isa, uint64_t *v) {
    if ((q >> 6) >= f->fast_blocks)
        return MQ_ASK;
    if (!occ_get(f, q))
        return MQ_NO; /* quotient q holds nothing */
    unsigned w = f->width, vb = f->vbits;
    uint64_t lo = qf_fields[w], hi = lo << (w - 1), m;
    bool out;
    uint64_t s = run_word(f, q, isa, &m, &out);
    uint64_t x = (s ^ (lo * (rem << vb))) & (lo * (f->rmask << vb));
    uint64_t z = (x - lo) & ~x & hi & m;
    if (__builtin_expect(!((z != 0) | out), 1))
        return MQ_NO;
    if (out || f->multiset)
        return MQ_ASK;
    /* the first matching field: its top bit is z's lowest */
    *v = (s >> ((unsigned)__builtin_ctzll(z) + 1 - w)) & f->vmask;
    if (!mq_counters(f))
        return MQ_YES;
    uint64_t vals = s & (lo * f->vmask), tops = (lo << vb) & m;
    bool no_zero = ((vals + lo * f->vmask) & tops) == tops;
    return no_zero && *v < f->vmask ? MQ_YES : MQ_ASK;
}

/* The exact answers, out of line (they hold no register of the hot
 * loop); the block was prefetched already. */
static __attribute__((noinline)) bool mq_has_exact(const amq_qf *f,
                                                   uint64_t h) {
    mgroup g;
    return read(f, h, &g, NULL, 0, false) == AMQ_OK && g.len > 0;
}
static __attribute__((noinline)) amq_status mq_get_exact(const amq_qf *f,
                                                         uint64_t h,
                                                         uint64_t *v) {
    mgroup g;
    amq_status st = read(f, h, &g, NULL, 0, false);
    if (st == AMQ_OK && g.len == 0)
        st = AMQ_ERR_NOT_FOUND;
    *v = st == AMQ_OK ? g.value : 0;
    return st;
}

/* prefetch: false when the caller already did (batches). */
static inline __attribute__((always_inline)) bool mq_has(const amq_qf *f,
                                                         uint64_t h, bool isa,
                                                         bool prefetch) {
    uint64_t q, rem, v;
    split(f, h, &q, &rem);
    if (prefetch)
        prefetch_block(f, q);
    mq_answer a = mq_quick(f, q, rem, isa, &v);
    if (__builtin_expect(a != MQ_ASK, 1))
        return a == MQ_YES;
    return mq_has_exact(f, h);
}

static inline __attribute__((always_inline)) amq_status mq_get(
    const amq_qf *f, uint64_t h, uint64_t *v, bool isa, bool prefetch) {
    uint64_t q, rem;
    split(f, h, &q, &rem);
    if (prefetch)
        prefetch_block(f, q);
    mq_answer a = mq_quick(f, q, rem, isa, v);
    if (__builtin_expect(a == MQ_YES, 1))
        return AMQ_OK;
    if (a == MQ_NO) {
        *v = 0;
        return AMQ_ERR_NOT_FOUND;
    }
    return mq_get_exact(f, h, v);
}

static QF_ANY bool has_any(const amq__obj *o, uint64_t h) {
    return mq_has((const amq_qf *)o, h, false, true);
}
static QF_ISA bool has_isa(const amq__obj *o, uint64_t h) {
    return mq_has((const amq_qf *)o, h, true, true);
}
#if defined(__x86_64__)
/* On a CPU with VBMI, slots of up to 16 bits: qf_vbmi.h's quick test
 * with the value bits masked off answers most absent keys; the rest and
 * the keys present go on to the word-wide test and the exact path. Only
 * contains takes it: a present key pays the quick test on top of the
 * exact one (a tenth more time, a quarter more for get's), and get, which
 * is asked mostly for keys that are there, keeps the exact kernel
 * (docs/maplets.md, "Benchmark rows"). */
QF_VBMI static bool has_vbmi(const amq__obj *o, uint64_t h) {
    const amq_qf *f = (const amq_qf *)o;
    uint64_t q, rem;
    split(f, h, &q, &rem);
    prefetch_block(f, q);
    if ((q >> 6) < f->fast_blocks && f->width <= 16 &&
        __builtin_expect(
            !qf_vbmi_may(f, q, rem << f->vbits, f->rmask << f->vbits), 1))
        return false;
    return mq_has(f, h, true, false);
}
#endif

/* Out of line, so the callback that picks one only tail-calls it. */
static QF_ANY __attribute__((noinline)) amq_status get_any(const amq_qf *f,
                                                           uint64_t h,
                                                           uint64_t *v) {
    return mq_get(f, h, v, false, true);
}
static QF_ISA __attribute__((noinline)) amq_status get_isa(const amq_qf *f,
                                                           uint64_t h,
                                                           uint64_t *v) {
    return mq_get(f, h, v, true, true);
}

/* Batches: each key's block is prefetched QF_PREFETCH keys ahead. */
static inline __attribute__((always_inline)) void mq_get_batch(
    const amq_qf *f, const uint64_t *h, size_t n, uint64_t *v, uint8_t *found,
    bool isa) {
    size_t ahead = n < QF_PREFETCH ? n : QF_PREFETCH;
    for (size_t i = 0; i < ahead; i++)
        prefetch_block(f, quotient_of(f, h[i]));
    for (size_t i = 0; i < n; i++) {
        if (i + QF_PREFETCH < n)
            prefetch_block(f, quotient_of(f, h[i + QF_PREFETCH]));
        if (v != NULL)
            found[i] = mq_get(f, h[i], &v[i], isa, false) == AMQ_OK;
        else
            found[i] = mq_has(f, h[i], isa, false);
    }
}
static QF_ANY void get_batch_any(const amq_qf *f, const uint64_t *h, size_t n,
                                 uint64_t *v, uint8_t *found) {
    mq_get_batch(f, h, n, v, found, false);
}
static QF_ISA void get_batch_isa(const amq_qf *f, const uint64_t *h, size_t n,
                                 uint64_t *v, uint8_t *found) {
    mq_get_batch(f, h, n, v, found, true);
}

/* The reference: every lookup through mq_read (concurrent mode takes its
 * region locks there). */
static void get_batch_ref(const amq_qf *f, const uint64_t *h, size_t n,
                          uint64_t *v, uint8_t *found) {
    size_t ahead = n < QF_PREFETCH ? n : QF_PREFETCH;
    for (size_t i = 0; i < ahead; i++)
        prefetch_block(f, quotient_of(f, h[i]));
    for (size_t i = 0; i < n; i++) {
        mgroup g;
        if (i + QF_PREFETCH < n)
            prefetch_block(f, quotient_of(f, h[i + QF_PREFETCH]));
        amq_status st = read(f, h[i], &g, NULL, 0, false);
        found[i] = st == AMQ_OK && g.len > 0;
        if (v != NULL)
            v[i] = found[i] ? g.value : 0;
    }
}

/* The kernels serve a maplet nobody updates concurrently; AMQ_OPT_SCALAR
 * keeps the reference (its fast_blocks is 0 anyway). */
static bool mq_kernels(const amq_qf *f) { return !f->concurrent && !f->scalar; }

void amq__mq_choose_kernel(amq_qf *f) {
    if (!mq_kernels(f))
        f->o.contains = amq__mq_contains;
#if defined(__x86_64__)
    else if (qf_vbmi_fits(f))
        f->o.contains = has_vbmi;
#endif
    else
        f->o.contains = f->use_pdep ? has_isa : has_any;
}

/* ---- the type's callbacks ----------------------------------------------------- */

amq_status amq__mq_put(amq__obj *o, uint64_t h, uint64_t v) {
    amq_qf *f = (amq_qf *)o;
    if (v > f->vmask)
        return AMQ_ERR_INVALID;
    if (v == 0 && mq_is_sum(f))
        return AMQ_OK; /* the identity: nothing to store */
    return f->use_pdep ? put_isa(f, h, v) : put_any(f, h, v);
}

/* The value 1 fits every width and is no sum's identity. */
amq_status amq__mq_add(amq__obj *o, uint64_t h) {
    amq_qf *f = (amq_qf *)o;
    return f->use_pdep ? put_isa(f, h, 1) : put_any(f, h, 1);
}

amq_status amq__mq_put_batch(amq__obj *o, const uint64_t *h, const uint64_t *v,
                             size_t n, size_t *done) {
    amq_qf *f = (amq_qf *)o;
    return f->use_pdep ? batch_isa(f, h, v, n, done)
                       : batch_any(f, h, v, n, done);
}

amq_status amq__mq_add_batch(amq__obj *o, const uint64_t *h, size_t n,
                             size_t *done) {
    amq_qf *f = (amq_qf *)o;
    return f->use_pdep ? batch_isa(f, h, NULL, n, done)
                       : batch_any(f, h, NULL, n, done);
}

amq_status amq__mq_del(amq__obj *o, uint64_t h, uint64_t v) {
    amq_qf *f = (amq_qf *)o;
    if (!f->multiset && !mq_is_sum(f))
        return AMQ_ERR_UNSUPPORTED;
    if (v > f->vmask)
        return AMQ_ERR_INVALID;
    if (v == 0 && mq_is_sum(f))
        return AMQ_OK;
    return f->use_pdep ? del_isa(f, h, v) : del_any(f, h, v);
}

amq_status amq__mq_remove(amq__obj *o, uint64_t h) {
    amq_qf *f = (amq_qf *)o;
    if (!f->multiset && !mq_is_sum(f))
        return AMQ_ERR_UNSUPPORTED;
    return f->use_pdep ? del_isa(f, h, 1) : del_any(f, h, 1);
}

/* The reference get (concurrent and scalar mode). */
static __attribute__((noinline)) amq_status get_ref(const amq_qf *f, uint64_t h,
                                                    uint64_t *v) {
    mgroup g;
    amq_status st = group_of(f, h, &g);
    *v = st == AMQ_OK ? g.value : 0;
    return st;
}

amq_status amq__mq_get(const amq__obj *o, uint64_t h, uint64_t *v) {
    const amq_qf *f = (const amq_qf *)o;
    if (!mq_kernels(f))
        return get_ref(f, h, v);
    return f->use_pdep ? get_isa(f, h, v) : get_any(f, h, v);
}

/* The reference lookup (the kernel of concurrent and scalar mode). */
bool amq__mq_contains(const amq__obj *o, uint64_t h) {
    mgroup g;
    return group_of((const amq_qf *)o, h, &g) == AMQ_OK;
}

/* sum: the sum (each add counts 1); multiset: the stored pairs. */
amq_status amq__mq_count(const amq__obj *o, uint64_t h, uint64_t *out) {
    const amq_qf *f = (const amq_qf *)o;
    mgroup g;
    if (!mq_is_sum(f) && !f->multiset)
        return AMQ_ERR_UNSUPPORTED;
    amq_status st = group_of(f, h, &g);
    *out = st == AMQ_OK ? (f->multiset ? g.n : g.value) : 0;
    return st == AMQ_ERR_NOT_FOUND ? AMQ_OK : st;
}

amq_status amq__mq_get_all(const amq__obj *o, uint64_t h, uint64_t *v,
                           size_t cap, size_t *n) {
    const amq_qf *f = (const amq_qf *)o;
    mgroup g;
    *n = 0;
    if (!f->multiset) {
        amq_status st = group_of(f, h, &g);
        if (st == AMQ_OK && cap > 0)
            v[0] = g.value;
        *n = st == AMQ_OK;
        return st;
    }
    AMQ_RETURN_IF_ERR(read(f, h, &g, v, cap, true));
    *n = (size_t)g.n;
    return g.len > 0 ? AMQ_OK : AMQ_ERR_NOT_FOUND;
}

void amq__mq_get_batch(const amq__obj *o, const uint64_t *h, size_t n,
                       uint64_t *v, uint8_t *found) {
    const amq_qf *f = (const amq_qf *)o;
    if (!mq_kernels(f))
        get_batch_ref(f, h, n, v, found);
    else if (f->use_pdep)
        get_batch_isa(f, h, n, v, found);
    else
        get_batch_any(f, h, n, v, found);
}

/* The batch lookup without the values. */
void amq__mq_contains_batch(const amq__obj *o, const uint64_t *h, size_t n,
                            uint8_t *out) {
    const amq_qf *f = (const amq_qf *)o;
    if (!mq_kernels(f))
        get_batch_ref(f, h, n, NULL, out);
    else if (f->use_pdep)
        get_batch_isa(f, h, n, NULL, out);
    else
        get_batch_any(f, h, n, NULL, out);
}
