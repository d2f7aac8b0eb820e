/*
 * qf_codec.h — a group of equal remainders in a quotient filter's run: in
 * a qf, c copies of the remainder; in a cqf, the counter encoding given in
 * qf_impl.h (unique, so a table's bytes are a function of its multiset).
 * Inline for the same reason as qf_block.h.
 */
#ifndef AMQ_SRC_FINGERPRINT_QF_CODEC_H
#define AMQ_SRC_FINGERPRINT_QF_CODEC_H

#include "fingerprint/qf_block.h"

/* Counter base and symbol mapping for remainder x (cqf). */
static inline uint64_t cbase(const amq_qf *f, uint64_t x) {
    return x > 0 ? f->rmask - 1 : f->rmask; /* M - 2 or M - 1 */
}
static inline uint64_t to_sym(uint64_t x, uint64_t d) {
    return x == 0 ? d + 1 : (d + 1 < x ? d + 1 : d + 2);
}
static inline uint64_t from_sym(uint64_t x, uint64_t s) {
    return x == 0 ? s - 1 : (s < x ? s - 1 : s - 2);
}

/* cqf encoding of (x, c >= 1) into out; returns its length. */
static inline unsigned encode(const amq_qf *f, uint64_t x, uint64_t c,
                              uint64_t out[QF_MAX_GROUP]) {
    unsigned n = 0, k = 0;
    uint64_t dig[64], v, b = cbase(f, x);
    out[n++] = x;
    if (c <= 2) {
        if (c == 2)
            out[n++] = x;
        return n;
    }
    v = c - 3;
    do {
        dig[k++] = v % b;
        v /= b;
    } while (v > 0);
    if (x > 0 && to_sym(x, dig[k - 1]) > x)
        out[n++] = 0;
    while (k > 0)
        out[n++] = to_sym(x, dig[--k]);
    out[n++] = x;
    if (x == 0)
        out[n++] = 0;
    return n;
}

static inline uint64_t group_len(const amq_qf *f, uint64_t x, uint64_t c) {
    uint64_t tmp[QF_MAX_GROUP];
    if (c == 0)
        return 0;
    return f->counting ? encode(f, x, c, tmp) : c;
}

static inline void write_group(amq_qf *f, uint64_t pos, uint64_t x,
                               uint64_t c) {
    if (!f->counting) {
        for (uint64_t i = 0; i < c; i++)
            slot_set(f, pos + i, x);
        return;
    }
    uint64_t tmp[QF_MAX_GROUP];
    unsigned n = encode(f, x, c, tmp);
    for (unsigned i = 0; i < n; i++)
        slot_set(f, pos + i, tmp[i]);
}

/* Digits in slots [from, to) of a counter for x; false on overflow or a bad
 * symbol (only possible in unvalidated input). */
static inline bool read_counter(const amq_qf *f, uint64_t x, uint64_t from,
                                uint64_t to, uint64_t *c) {
    uint64_t v = 0, b = cbase(f, x);
    if (from >= to)
        return false;
    for (uint64_t i = from; i < to; i++) {
        uint64_t s = slot_get(f, i);
        if (s == 0 || s == x || __builtin_mul_overflow(v, b, &v) ||
            __builtin_add_overflow(v, from_sym(x, s), &v))
            return false;
    }
    return !__builtin_add_overflow(v, 3, c);
}

/* Decode the group at pos of a run ending before `end`. */
static inline bool decode_cqf(const amq_qf *f, uint64_t pos, uint64_t end,
                              group *g) {
    uint64_t x = slot_get(f, pos), y, i;
    *g = (group){x, 1, 1};
    if (pos + 1 >= end)
        return true;
    y = slot_get(f, pos + 1);
    if (x > 0) {
        if (y > x)
            return true;
        if (y == x) {
            *g = (group){x, 2, 2};
            return true;
        }
        i = pos + 1 + (y == 0);
        uint64_t j = i;
        while (j < end && slot_get(f, j) != x)
            j++;
        if (j >= end || !read_counter(f, x, i, j, &g->count))
            return false;
        g->len = j + 1 - pos;
        return true;
    }
    if (y == 0) {
        *g = (group){0, 2, 2};
        return true;
    }
    for (i = pos + 1; i < end && slot_get(f, i) != 0; i++)
        ;
    if (i + 1 >= end || slot_get(f, i + 1) != 0)
        return true; /* a lone 0; the next group starts at pos + 1 */
    if (!read_counter(f, 0, pos + 1, i, &g->count))
        return false;
    g->len = i + 2 - pos;
    return true;
}

static inline bool decode(const amq_qf *f, uint64_t pos, uint64_t end,
                          group *g) {
    if (f->counting)
        return decode_cqf(f, pos, end, g);
    uint64_t x = slot_get(f, pos), n = 1;
    while (pos + n < end && slot_get(f, pos + n) == x)
        n++;
    *g = (group){x, n, n};
    return true;
}

#endif
