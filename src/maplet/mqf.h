/*
 * mqf.h — the quotient maplet: a quotient filter whose slots carry values
 * (Bender, Conway, Farach-Colton, Johnson, Pandey, "Time to replace your
 * filter: how maplets simplify system design", §2; the table is the
 * rank-and-select quotient filter of fingerprint/qf_impl.h).
 *
 * A slot is w = r + v bits, the remainder R above the value x, so slot
 * order is remainder order and a slot reads as one number (R << v) | x:
 *
 *   block b: | off | occupieds | runends | 64 slots x (r + v) bits       |
 *   slot:                                   [ R (r bits) | x (v bits) ]
 *
 * The values live in the filter's own slots: every shift, resize and merge
 * moves them with their remainders; there is no side array.
 *
 * Groups. The slots of one remainder in a run form its group:
 *
 *   combine mode, op max/min/or:  (R, x)                       one slot
 *   combine mode, op sum, count c (1 <= c < 2^64), m = 2^v - 1:
 *       c <= m:      (R, c)                                    one slot
 *       c <= 2m:     (R, m) (R, c - m)                         two slots
 *       c > 2m:      (R, 0) s_1 .. s_k (R, 0)                  k + 2 slots
 *                    s_i: the digits of c - 2m - 1 in base 2^w - 1, most
 *                    significant first (no leading zero; 0 is one digit),
 *                    written as w-bit symbols that skip the marker word
 *                    (R, 0). A lone (R, 0) never occurs (a sum of 0 is no
 *                    entry), so it announces a counter, and the next slot
 *                    equal to it ends one; a second slot of remainder R
 *                    after (R, m) can only be the second half of the pair.
 *       This is the counting quotient filter's variable-length counter
 *       (qf_impl.h: "x", "x x", then an escaped counter) with the value
 *       field as the first digit and the whole slot as the next ones: a
 *       heavy key takes 3 slots up to 2^w - 1 + 2m, and 1-bit values pay
 *       what the qf's copies pay for a count of 2.
 *   multiset mode, any op:  (R, x_1) .. (R, x_n), x_1 <= .. <= x_n: one
 *       slot per (key, value) put, combined with the operator when read.
 *
 * Outside sum counters a run is a sorted list of slot words, so a lookup
 * scans it like a qf run; with counters it walks group by group.
 *
 * Invariants (checked on load, mqf_table.c): those of the quotient filter,
 * groups in strictly increasing remainder order, every counter canonical
 * and at least 2^v, no (R, 0) group in sum combine mode, multiset groups
 * sorted by value, and for sum the total of a fingerprint below 2^64.
 *
 * Exact mode (kbits = K): keys are integers below 2^K, hashed by a
 * bijection of K-bit words (exact_mix) and placed at the top of the 64-bit
 * hash; the table has N * 2^r >= 2^K fingerprints, so the fingerprint
 * f = floor(h N 2^r / 2^64) is injective on keys and the key comes back
 * from it: the maplet is an exact map, as Mantis's is.
 */
#ifndef AMQ_SRC_MAPLET_MQF_H
#define AMQ_SRC_MAPLET_MQF_H

#include "amq/maplet.h"
#include "fingerprint/qf_update.h"

typedef unsigned __int128 mq_u128;

/* ---- slots ----------------------------------------------------------------- */

static inline mq_u128 mq_word(const amq_qf *f, uint64_t rem, uint64_t x) {
    return (mq_u128)rem << f->vbits | x;
}
static inline uint64_t mq_rem(const amq_qf *f, mq_u128 s) {
    return (uint64_t)(s >> f->vbits);
}
static inline uint64_t mq_val(const amq_qf *f, mq_u128 s) {
    return (uint64_t)s & f->vmask;
}

/* ---- the operators ------------------------------------------------------- */

static inline bool mq_is_sum(const amq_qf *f) {
    return f->mop == AMQ_MAPLET_SUM;
}
/* Sum counters: combine mode with the sum operator. */
static inline bool mq_counters(const amq_qf *f) {
    return mq_is_sum(f) && !f->multiset;
}

/* What a put of v adds to the item count: the sum of all counts for sum
 * counters, else one stored or combined pair. */
static inline uint64_t mq_weight(const amq_qf *f, uint64_t v) {
    return mq_counters(f) ? v : 1;
}

/* a (+) b; a sum that would pass 2^64 - 1 is reported through *over. */
static inline uint64_t mq_combine(unsigned op, uint64_t a, uint64_t b,
                                  bool *over) {
    uint64_t s;
    switch (op) {
    case AMQ_MAPLET_SUM:
        if (__builtin_add_overflow(a, b, &s))
            *over = true;
        return s;
    case AMQ_MAPLET_MAX: return a > b ? a : b;
    case AMQ_MAPLET_MIN: return a < b ? a : b;
    default: return a | b;
    }
}

/* ---- groups ---------------------------------------------------------------- */

typedef struct mgroup {
    uint64_t rem;   /* remainder                               */
    uint64_t len;   /* slots                                   */
    uint64_t value; /* the combined value (a sum, a max, ...)  */
    uint64_t n;     /* entries: 1 in combine mode              */
} mgroup;

/* Symbols of a counter for remainder rem skip the marker word (rem, 0). */
static inline mq_u128 mq_base_of(unsigned width) {
    return width >= 128 ? ~(mq_u128)0 : ((mq_u128)1 << width) - 1;
}

static inline mq_u128 mq_base(const amq_qf *f) { return mq_base_of(f->width); }

/* 2m, the largest count of the two-slot form (saturated for v = 64, where
 * every count fits one slot). */
static inline uint64_t mq_pair_max_of(uint64_t vmask) {
    return vmask <= UINT64_MAX / 2 ? 2 * vmask : UINT64_MAX;
}

static inline uint64_t mq_pair_max(const amq_qf *f) {
    return mq_pair_max_of(f->vmask);
}

/* Slots of a sum group of count c >= 1 in a table of width-bit slots
 * whose value field is vmask: one slot up to the field's maximum m, two
 * up to 2m, else two markers around the base-(2^width - 1) digits of the
 * rest. */
static inline uint64_t mq_sum_slots(unsigned width, uint64_t vmask,
                                    uint64_t c) {
    if (c <= vmask)
        return 1;
    uint64_t pair = mq_pair_max_of(vmask);
    if (c <= pair)
        return 2;
    mq_u128 d = (mq_u128)(c - pair - 1), b = mq_base_of(width);
    uint64_t k = 1;
    while (d >= b) {
        d /= b;
        k++;
    }
    return k + 2;
}

static inline uint64_t mq_sum_len(const amq_qf *f, uint64_t c) {
    return mq_sum_slots(f->width, f->vmask, c);
}

/* The slots of the sum group (rem, c >= 1) into out; returns their
 * number (mq_sum_len). */
static inline uint64_t mq_sum_encode(const amq_qf *f, uint64_t rem, uint64_t c,
                                     mq_u128 out[QF_MAX_GROUP]) {
    if (c <= f->vmask) {
        out[0] = mq_word(f, rem, c);
        return 1;
    }
    if (c <= mq_pair_max(f)) {
        out[0] = mq_word(f, rem, f->vmask);
        out[1] = mq_word(f, rem, c - f->vmask);
        return 2;
    }
    mq_u128 mark = mq_word(f, rem, 0), b = mq_base(f);
    mq_u128 d = (mq_u128)(c - mq_pair_max(f) - 1);
    uint64_t len = mq_sum_len(f, c);
    out[0] = out[len - 1] = mark;
    for (uint64_t i = len - 2; i >= 1; i--) {
        mq_u128 digit = d % b;
        d /= b;
        out[i] = digit < mark ? digit : digit + 1;
    }
    return len;
}

/* Write the sum group (rem, c) at pos. */
static inline void mq_sum_write(amq_qf *f, uint64_t pos, uint64_t rem,
                                uint64_t c) {
    mq_u128 w[QF_MAX_GROUP];
    uint64_t len = mq_sum_encode(f, rem, c, w);
    for (uint64_t i = 0; i < len; i++)
        slot_set2(f, pos + i, w[i]);
}

/* The sum counter starting at pos (slot (rem, 0)) of a run ending before
 * end: false if it has no end, no digit or overflows (possible only in
 * unvalidated input). */
static inline bool mq_sum_read(const amq_qf *f, uint64_t pos, uint64_t end,
                               mq_u128 mark, mgroup *g) {
    mq_u128 b = mq_base(f), d = 0;
    uint64_t i = pos + 1;
    for (; i < end; i++) {
        mq_u128 s = slot_get2(f, i);
        if (s == mark)
            break;
        mq_u128 digit = s < mark ? s : s - 1;
        if (d > (mq_u128)UINT64_MAX)
            return false;
        d = d * b + digit;
    }
    if (i >= end || i == pos + 1 ||
        d > (mq_u128)(UINT64_MAX - mq_pair_max(f) - 1))
        return false;
    g->len = i + 1 - pos;
    g->value = (uint64_t)d + mq_pair_max(f) + 1;
    return true;
}

/* A sum group at pos whose first slot s is (rem, x). */
static inline bool mq_sum_decode(const amq_qf *f, uint64_t pos, uint64_t end,
                                 mq_u128 s, mgroup *g) {
    if (g->value == 0)
        return mq_sum_read(f, pos, end, s, g);
    if (g->value == f->vmask && pos + 1 < end) {
        mq_u128 t = slot_get2(f, pos + 1);
        if (mq_rem(f, t) == g->rem) {
            g->value += mq_val(f, t);
            g->len = 2;
        }
    }
    return true;
}

/* The group at pos of a run ending before end. false only for a counter
 * that cannot be read or a multiset sum past 2^64 - 1 (unvalidated
 * input). */
static inline bool mq_decode(const amq_qf *f, uint64_t pos, uint64_t end,
                             mgroup *g) {
    mq_u128 s = slot_get2(f, pos);
    bool over = false;
    *g = (mgroup){mq_rem(f, s), 1, mq_val(f, s), 1};
    if (!f->multiset)
        return mq_counters(f) ? mq_sum_decode(f, pos, end, s, g) : true;
    for (uint64_t i = pos + 1; i < end; i++) {
        mq_u128 t = slot_get2(f, i);
        if (mq_rem(f, t) != g->rem)
            break;
        g->value = mq_combine(f->mop, g->value, mq_val(f, t), &over);
        g->len++;
        g->n++;
    }
    return !over;
}

/* ---- across the maplet's files ---------------------------------------------- */

/* The callbacks of the "maplet" type (type/type.h and type/maplet_ops.h
 * have each slot's contract), over the amq_qf behind o; mqf_frame.c's
 * descriptor points at them. */

/* mqf_ops.c: put and delete (the filter's add and remove: the value 1),
 * one pair or a batch (add_batch, or put_batch with v NULL: 1 each). */
amq_status amq__mq_put(amq__obj *o, uint64_t h, uint64_t v);
amq_status amq__mq_add(amq__obj *o, uint64_t h);
amq_status amq__mq_put_batch(amq__obj *o, const uint64_t *h, const uint64_t *v,
                             size_t n, size_t *done);
amq_status amq__mq_add_batch(amq__obj *o, const uint64_t *h, size_t n,
                             size_t *done);
amq_status amq__mq_del(amq__obj *o, uint64_t h, uint64_t v);
amq_status amq__mq_remove(amq__obj *o, uint64_t h);
/* mqf_ops.c: lookups; count is the sum (sum) or the stored pairs
 * (multiset), AMQ_ERR_UNSUPPORTED otherwise. */
amq_status amq__mq_get(const amq__obj *o, uint64_t h, uint64_t *v);
amq_status amq__mq_get_all(const amq__obj *o, uint64_t h, uint64_t *v,
                           size_t cap, size_t *n);
void amq__mq_get_batch(const amq__obj *o, const uint64_t *h, size_t n,
                       uint64_t *v, uint8_t *found);
bool amq__mq_contains(const amq__obj *o, uint64_t h);
/* mqf_ops.c: f->o.contains for f's modes (set once they are): the
 * block-local kernels, or amq__mq_contains in concurrent and scalar mode. */
void amq__mq_choose_kernel(amq_qf *f);
void amq__mq_contains_batch(const amq__obj *o, const uint64_t *h, size_t n,
                            uint8_t *out);
amq_status amq__mq_count(const amq__obj *o, uint64_t h, uint64_t *out);

/* mqf_table.c: the passes that rebuild the table in fingerprint order
 * (built aside, then adopted), enumeration, and exact mode's keys. */
amq_status amq__mq_merge(amq__obj *dst, const amq__obj *src, amq__merge_op op);
amq_status amq__mq_resize(amq__obj *o);
amq_status amq__mq_drop_value(amq__obj *o, uint64_t v);
amq_status amq__mq_keep_values(amq__obj *o, uint64_t lo, uint64_t hi);
bool amq__mq_next(const amq__obj *o, uint64_t st[4], uint64_t *fp, uint64_t *v,
                  uint64_t *entries);
amq_status amq__mq_exact_hash(const amq__obj *o, uint64_t key, uint64_t *h);
amq_status amq__mq_exact_key(const amq__obj *o, uint64_t fp, uint64_t *key);

/* mqf_table.c: the loaded table's invariants (mqf_frame.c). */
amq_status amq__mq_validate(amq_qf *f, const struct amq__rd *r);

#endif
