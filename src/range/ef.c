/*
 * ef.c — Elias-Fano sets and their emptiness query (layout: ef.h).
 */
#include "range/ef.h"

#include "core/mem.h"

#define DIR_SPAN (UINT64_C(1) << AMQ__EF_DIR_LG)

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
    e->density = m > (UINT64_MAX >> 32) ? UINT64_MAX >> AMQ__EF_DIR_LG
                                        : (m << 32) / e->nb;
    e->l = l;
}

bool amq__ef_any(const amq__ef *e, uint64_t x, uint64_t y) {
    return amq__ef_any_k(e, x, y, false);
}

#if defined(AMQ__HAVE_PDEP)
__attribute__((target("popcnt,bmi,bmi2"))) bool amq__ef_any_bmi2(
    const amq__ef *e, uint64_t x, uint64_t y) {
    return amq__ef_any_k(e, x, y, true);
}
#endif

uint64_t amq__ef_at(const amq__ef *e, uint64_t i) {
    uint64_t p = 0;
    for (uint64_t seen = 0;; seen++, p++) {
        if ((p = amq__ef_next_one(e, p)) == AMQ__EF_NONE)
            return AMQ__EF_NONE;
        if (seen == i)
            break;
    }
    return ((p - i) << e->l) | amq__ef_low(e, i);
}

bool amq__ef_any_scan(const amq__ef *e, uint64_t x, uint64_t y) {
    uint64_t p = 0;
    for (uint64_t i = 0; i < e->m; i++, p++) {
        if ((p = amq__ef_next_one(e, p)) == AMQ__EF_NONE)
            return true;
        uint64_t v = ((p - i) << e->l) | amq__ef_low(e, i);
        if (v >= x)
            return v <= y;
    }
    return false;
}
