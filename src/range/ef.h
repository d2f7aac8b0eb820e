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

/* Whether some value lies in [x, y], for x <= y < r. */
bool amq__ef_any(const amq__ef *e, uint64_t x, uint64_t y);

/* The scalar reference: the same answer by a scan of every value (tests). */
bool amq__ef_any_scan(const amq__ef *e, uint64_t x, uint64_t y);

/* Value i (< m) of the set, by a scan from the start (tests, O(i)). */
uint64_t amq__ef_at(const amq__ef *e, uint64_t i);

#endif
