/*
 * ef.h — a sorted set of integers in [0, r) in Elias-Fano form, asked one
 * question: is any value in [x, y]?
 *
 * Value v splits into a high part v >> l and l low bits. The low parts
 * sit packed, l bits each, in order. The high parts are in unary: value i
 * sets bit (v_i >> l) + i of `high`, and bucket b (the values whose high
 * part is b) ends at the (b+1)-th zero. With l = floor(log2(r / m)) for m
 * values this takes m (l + 1) + r / 2^l bits, at most l + 3 bits a value.
 *
 *   high: 110 0 10 1110 0 ...     (bucket 0 holds two values, 1 none, ...)
 *   dir:  ones before bucket 256 k, for k = 0 .. nb / 256
 *   low:  l bits per value, value i at bit i l
 *
 * A query starts at the directory entry of its bucket (dir[k] ones and
 * 256 k zeros lie before bucket 256 k, so its position is their sum),
 * skips to its bucket's zero with popcounts, finds the first low part not
 * below x's in the bucket (binary search when the bucket is long: dense
 * keys fill buckets), and otherwise reads the next value after the
 * bucket. About three cache lines: dir, high, low.
 *
 * The payload is three word arrays back to back (dir, high, low with a
 * word of padding so an unaligned read of any low part stays inside).
 * Queries stay inside the arrays whatever a corrupt payload holds: a scan
 * that would leave them answers true (never a false negative for a valid
 * payload, and no read outside for any).
 */
#ifndef AMQ_SRC_RANGE_EF_H
#define AMQ_SRC_RANGE_EF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/bits.h"

#define AMQ__EF_DIR_LG 8 /* buckets per directory entry: 256 */
#define AMQ__EF_MAX_LOW 56

typedef struct amq__ef {
    const uint64_t *dir, *high;
    const uint8_t *low;
    uint64_t m;  /* values */
    uint64_t nb; /* buckets: high parts 0 .. nb - 1 */
    uint64_t hwords;
    uint64_t density; /* values per bucket, 32.32 fixed point */
    unsigned l;
} amq__ef;

/* Low bits for m values below r: floor(log2(r / m)), at most
 * AMQ__EF_MAX_LOW (0 for m == 0). */
unsigned amq__ef_low_bits(uint64_t m, uint64_t r);

/* Words of the payload for m values below r with l low bits; 0 when the
 * size overflows. */
size_t amq__ef_words(uint64_t m, uint64_t r, unsigned l);

/* Write the payload of the ascending distinct values v[0..m) (each < r)
 * into words (amq__ef_words of them, zeroed). */
void amq__ef_fill(const uint64_t *v, uint64_t m, uint64_t r, unsigned l,
                  uint64_t *words);

/* A query view of a payload written by amq__ef_fill. */
void amq__ef_view(amq__ef *e, const void *words, uint64_t m, uint64_t r,
                  unsigned l);

#define AMQ__EF_NONE UINT64_MAX

/* The k-th set bit of x (x has more than k). */
static inline __attribute__((always_inline)) uint64_t amq__ef_select(
    uint64_t x, unsigned k, bool fast) {
#if defined(AMQ__HAVE_PDEP)
    if (fast)
        return amq__select64_pdep(x, k);
#endif
    (void)fast;
    return amq__select64(x, k);
}

static inline uint64_t amq__ef_low(const amq__ef *e, uint64_t i) {
    uint64_t bit = i * e->l;
    if (e->l == 0)
        return 0;
    return (amq__get_u64(e->low + (bit >> 3)) >> (bit & 7)) &
           ((UINT64_C(1) << e->l) - 1);
}

/* Position just past the z-th zero (z >= 1) at or after pos; AMQ__EF_NONE when
 * the array ends first. */
static inline __attribute__((always_inline)) uint64_t amq__ef_skip_zeros(
    const amq__ef *e, uint64_t pos, uint64_t z, bool fast) {
    uint64_t w = pos >> 6;
    if (w >= e->hwords)
        return AMQ__EF_NONE;
    uint64_t word = ~e->high[w] & (~UINT64_C(0) << (pos & 63));
    for (;;) {
        uint64_t c = (uint64_t)__builtin_popcountll(word);
        if (c >= z)
            return w * 64 + amq__ef_select(word, (unsigned)(z - 1), fast) + 1;
        z -= c;
        if (++w >= e->hwords)
            return AMQ__EF_NONE;
        word = ~e->high[w];
    }
}

/* Ones from pos up to the next zero (or the array's end). */
static inline uint64_t amq__ef_run(const amq__ef *e, uint64_t pos) {
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

/* The first set bit at or after pos; AMQ__EF_NONE when there is none. */
static inline uint64_t amq__ef_next_one(const amq__ef *e, uint64_t pos) {
    uint64_t w = pos >> 6;
    if (w >= e->hwords)
        return AMQ__EF_NONE;
    uint64_t word = e->high[w] & (~UINT64_C(0) << (pos & 63));
    while (word == 0) {
        if (++w >= e->hwords)
            return AMQ__EF_NONE;
        word = e->high[w];
    }
    return w * 64 + (uint64_t)__builtin_ctzll(word);
}

/* The query, inlined into each kernel: fast (a caller compiled for
 * POPCNT and BMI2) selects a zero with PDEP, else with the portable
 * byte scan. */
static inline __attribute__((always_inline)) bool amq__ef_any_k(
    const amq__ef *e, uint64_t x, uint64_t y, bool fast) {
    if (e->m == 0)
        return false;
    uint64_t hb = x >> e->l, k = hb >> AMQ__EF_DIR_LG;
    if (hb >= e->nb)
        return false;
    uint64_t before = e->dir[k], z = hb - (k << AMQ__EF_DIR_LG);
    if (before > e->m)
        return true; /* corrupt payload: never a false negative */
    /* The bucket's low bits lie near value before + z m / nb: fetch that
     * line while the high bits are scanned (an estimate; the reads below
     * are exact). */
    uint64_t guess = before + ((z * e->density) >> 32);
    if (guess < e->m)
        amq__prefetch(e->low + ((guess * e->l) >> 3));
    uint64_t pos = (k << AMQ__EF_DIR_LG) + before;
    if (z != 0 && (pos = amq__ef_skip_zeros(e, pos, z, fast)) == AMQ__EF_NONE)
        return true;
    /* pos: bucket hb's first bit; i: values before it */
    uint64_t i = pos - hb, run = amq__ef_run(e, pos);
    if (i > e->m || run > e->m - i)
        return true;
    uint64_t want = x & ((UINT64_C(1) << e->l) - 1), lo = i, hi = i + run;
    while (hi - lo > 8) { /* first low part >= want in [lo, hi) */
        uint64_t mid = lo + (hi - lo) / 2;
        if (amq__ef_low(e, mid) < want)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < i + run; lo++) {
        uint64_t low = amq__ef_low(e, lo);
        if (low >= want)
            return ((hb << e->l) | low) <= y;
    }
    /* every value of bucket hb is below x: the next value decides */
    i += run;
    if (i >= e->m || ((hb + 1) << e->l) > y)
        return false;
    uint64_t p = amq__ef_next_one(e, pos + run + 1);
    if (p == AMQ__EF_NONE || p < i)
        return true;
    return (((p - i) << e->l) | amq__ef_low(e, i)) <= y;
}

/* Whether some value lies in [x, y], for x <= y < r: the portable
 * kernel, and (x86-64) the one for CPUs with POPCNT and BMI2. */
bool amq__ef_any(const amq__ef *e, uint64_t x, uint64_t y);
#if defined(AMQ__HAVE_PDEP)
bool amq__ef_any_bmi2(const amq__ef *e, uint64_t x, uint64_t y);
#endif

/* The scalar reference: the same answer by a scan of every value (tests). */
bool amq__ef_any_scan(const amq__ef *e, uint64_t x, uint64_t y);

/* Value i (< m) of the set, by a scan from the start (tests, O(i)). */
uint64_t amq__ef_at(const amq__ef *e, uint64_t i);

#endif
