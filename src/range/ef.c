/*
 * ef.c — Elias-Fano sets and their emptiness query (layout: ef.h).
 */
#include "range/ef.h"

#include "core/mem.h"

#define DIR_SPAN (UINT64_C(1) << AMQ__EF_DIR_LG)
#define NONE UINT64_MAX

unsigned amq__ef_low_bits(uint64_t m, uint64_t r) {
    unsigned l = 0;
    if (m == 0)
        return 0;
    while (l < AMQ__EF_MAX_LOW && (r >> (l + 1)) >= m)
        l++;
    return l;
}

static uint64_t buckets(uint64_t r, unsigned l) {
    return r == 0 ? 1 : ((r - 1) >> l) + 1;
}

/* Sizes of the three arrays in words. */
static bool ef_shape(uint64_t m, uint64_t r, unsigned l, size_t *ndir,
                     size_t *nhigh, size_t *nlow) {
    uint64_t nb = buckets(r, l), lowbits;
    if (m > UINT64_MAX - nb || (l != 0 && m > UINT64_MAX / l))
        return false;
    lowbits = m * l;
    *ndir = (size_t)(nb >> AMQ__EF_DIR_LG) + 1;
    *nhigh = (size_t)((m + nb + 63) / 64);
    *nlow = (size_t)(lowbits / 64 + 2); /* + a word for unaligned reads */
    return *nhigh != 0;
}

size_t amq__ef_words(uint64_t m, uint64_t r, unsigned l) {
    size_t a, b, c, t;
    if (!ef_shape(m, r, l, &a, &b, &c) || !amq__add(a, b, &t) ||
        !amq__add(t, c, &t))
        return 0;
    return t;
}

void amq__ef_fill(const uint64_t *v, uint64_t m, uint64_t r, unsigned l,
                  uint64_t *words) {
    size_t ndir = 0, nhigh = 0, nlow = 0;
    uint64_t nb = buckets(r, l), mask = (UINT64_C(1) << l) - 1, k = 0;
    ef_shape(m, r, l, &ndir, &nhigh, &nlow);
    uint64_t *dir = words, *high = words + ndir;
    uint8_t *low = (uint8_t *)(high + nhigh);
    for (uint64_t i = 0; i < m; i++) {
        uint64_t hi = v[i] >> l, at = hi + i, bit = i * l;
        for (; k <= (hi >> AMQ__EF_DIR_LG); k++)
            dir[k] = i;
        high[at >> 6] |= UINT64_C(1) << (at & 63);
        if (l != 0) {
            uint64_t w = amq__get_u64(low + (bit >> 3));
            w |= (v[i] & mask) << (bit & 7);
            amq__put_u64(low + (bit >> 3), w);
        }
    }
    for (; k <= (nb >> AMQ__EF_DIR_LG); k++)
        dir[k] = m;
}

void amq__ef_view(amq__ef *e, const void *words, uint64_t m, uint64_t r,
                  unsigned l) {
    size_t ndir = 0, nhigh = 0, nlow = 0;
    ef_shape(m, r, l, &ndir, &nhigh, &nlow);
    e->dir = words;
    e->high = e->dir + ndir;
    e->low = (const uint8_t *)(e->high + nhigh);
    e->m = m;
    e->nb = buckets(r, l);
    e->hwords = nhigh;
    e->l = l;
}

static inline uint64_t low_at(const amq__ef *e, uint64_t i) {
    uint64_t bit = i * e->l;
    if (e->l == 0)
        return 0;
    return (amq__get_u64(e->low + (bit >> 3)) >> (bit & 7)) &
           ((UINT64_C(1) << e->l) - 1);
}

/* Position just past the z-th zero (z >= 1) at or after pos; NONE when
 * the array ends first. */
static inline uint64_t skip_zeros(const amq__ef *e, uint64_t pos, uint64_t z) {
    uint64_t w = pos >> 6;
    if (w >= e->hwords)
        return NONE;
    uint64_t word = ~e->high[w] & (~UINT64_C(0) << (pos & 63));
    for (;;) {
        uint64_t c = amq__popcount64(word);
        if (c >= z)
            return w * 64 + amq__select64(word, (unsigned)(z - 1)) + 1;
        z -= c;
        if (++w >= e->hwords)
            return NONE;
        word = ~e->high[w];
    }
}

/* Ones from pos up to the next zero (or the array's end). */
static inline uint64_t run_of_ones(const amq__ef *e, uint64_t pos) {
    uint64_t w = pos >> 6, run = 0;
    unsigned b = (unsigned)(pos & 63);
    for (; w < e->hwords; w++, b = 0) {
        uint64_t zeros = ~e->high[w] >> b;
        if (zeros != 0)
            return run + (uint64_t)__builtin_ctzll(zeros);
        run += 64 - b;
    }
    return run;
}

/* The first set bit at or after pos; NONE when there is none. */
static inline uint64_t next_one(const amq__ef *e, uint64_t pos) {
    uint64_t w = pos >> 6;
    if (w >= e->hwords)
        return NONE;
    uint64_t word = e->high[w] & (~UINT64_C(0) << (pos & 63));
    while (word == 0) {
        if (++w >= e->hwords)
            return NONE;
        word = e->high[w];
    }
    return w * 64 + (uint64_t)__builtin_ctzll(word);
}

bool amq__ef_any(const amq__ef *e, uint64_t x, uint64_t y) {
    if (e->m == 0)
        return false;
    uint64_t hb = x >> e->l, k = hb >> AMQ__EF_DIR_LG;
    if (hb >= e->nb)
        return false;
    uint64_t before = e->dir[k];
    if (before > e->m)
        return true; /* corrupt payload: never a false negative */
    uint64_t pos = (k << AMQ__EF_DIR_LG) + before;
    if (hb != (k << AMQ__EF_DIR_LG) &&
        (pos = skip_zeros(e, pos, hb - (k << AMQ__EF_DIR_LG))) == NONE)
        return true;
    /* pos: bucket hb's first bit; i: values before it */
    uint64_t i = pos - hb, run = run_of_ones(e, pos);
    if (i > e->m || run > e->m - i)
        return true;
    uint64_t want = x & ((UINT64_C(1) << e->l) - 1), lo = i, hi = i + run;
    while (hi - lo > 8) { /* first low part >= want in [lo, hi) */
        uint64_t mid = lo + (hi - lo) / 2;
        if (low_at(e, mid) < want)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < i + run; lo++) {
        uint64_t low = low_at(e, lo);
        if (low >= want)
            return ((hb << e->l) | low) <= y;
    }
    /* every value of bucket hb is below x: the next value decides */
    i += run;
    if (i >= e->m || ((hb + 1) << e->l) > y)
        return false;
    uint64_t p = next_one(e, pos + run + 1);
    if (p == NONE || p < i)
        return true;
    return (((p - i) << e->l) | low_at(e, i)) <= y;
}

uint64_t amq__ef_at(const amq__ef *e, uint64_t i) {
    uint64_t p = 0;
    for (uint64_t seen = 0;; seen++, p++) {
        if ((p = next_one(e, p)) == NONE)
            return NONE;
        if (seen == i)
            break;
    }
    return ((p - i) << e->l) | low_at(e, i);
}

bool amq__ef_any_scan(const amq__ef *e, uint64_t x, uint64_t y) {
    uint64_t p = 0;
    for (uint64_t i = 0; i < e->m; i++, p++) {
        if ((p = next_one(e, p)) == NONE)
            return true;
        uint64_t v = ((p - i) << e->l) | low_at(e, i);
        if (v >= x)
            return v <= y;
    }
    return false;
}
