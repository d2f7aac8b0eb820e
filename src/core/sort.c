/*
 * sort.c — the distribution sort of 64-bit keys (sort.h).
 */
#include "core/sort.h"

#include <stdlib.h>
#include <string.h>

#include "core/bits.h"

#define PART_LOG 11      /* ~2^11 keys per partition          */
#define PART_MAX_BITS 12 /* at most 4096 partitions           */
#define CELL_MAX_BITS 16 /* at most 65536 cells in a partition */

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

unsigned amq__log2_floor(size_t n) {
    unsigned lg = 0;
    while (lg < 63 && (n >> (lg + 1)) != 0)
        lg++;
    return lg;
}

typedef struct sorter {
    size_t *part;   /* [parts + 1] partition ends            */
    uint32_t *cell; /* [2^cell_bits + 1] counts in a partition */
    uint64_t *tmp;  /* [tmp_cap] one partition, sorted        */
    size_t parts, tmp_cap;
    unsigned part_bits, cell_bits;
} sorter;

static void sorter_free(const amq__mem *m, sorter *so) {
    amq__free(m, so->part, (so->parts + 1) * sizeof *so->part);
    amq__free(m, so->cell,
              (((size_t)1 << so->cell_bits) + 1) * sizeof *so->cell);
    amq__free(m, so->tmp, so->tmp_cap * sizeof *so->tmp);
    memset(so, 0, sizeof *so);
}

/* Partitions of ~2^PART_LOG keys; a partition up to 4x its expected
 * size is sorted in tmp, a larger one (only for adversarial hashes) by
 * qsort in place. */
/* The sorter's shape for n keys (no memory yet). */
static void sorter_shape(size_t n, sorter *so) {
    unsigned lg = amq__log2_floor(n ? n : 1);
    memset(so, 0, sizeof *so);
    so->part_bits = lg > PART_LOG ? lg - PART_LOG : 0;
    if (so->part_bits > PART_MAX_BITS)
        so->part_bits = PART_MAX_BITS;
    so->parts = (size_t)1 << so->part_bits;
    so->tmp_cap = 4 * (n >> so->part_bits) + 64;
    so->cell_bits = amq__log2_floor(so->tmp_cap) + 2;
    if (so->cell_bits > CELL_MAX_BITS)
        so->cell_bits = CELL_MAX_BITS;
}

size_t amq__sort_scratch(size_t n) {
    sorter so;
    sorter_shape(n, &so);
    return (so.parts + 1) * sizeof *so.part +
           (((size_t)1 << so.cell_bits) + 1) * sizeof *so.cell +
           so.tmp_cap * sizeof *so.tmp;
}

static amq_status sorter_alloc(const amq__mem *m, size_t n, sorter *so) {
    sorter_shape(n, so);
    so->part = amq__alloc(m, (so->parts + 1) * sizeof *so->part);
    so->cell =
        amq__alloc(m, (((size_t)1 << so->cell_bits) + 1) * sizeof *so->cell);
    so->tmp = amq__alloc(m, so->tmp_cap * sizeof *so->tmp);
    if (so->part == NULL || so->cell == NULL || so->tmp == NULL) {
        sorter_free(m, so);
        return AMQ_ERR_NOMEM;
    }
    return AMQ_OK;
}

static inline size_t part_of(uint64_t x, unsigned bits) {
    return bits ? (size_t)(x >> (64 - bits)) : 0;
}

/* Sort one partition's len keys into so->tmp: counting sort on the bits
 * below the partition bits (cells of ~1/4 key), then insertion sort for
 * keys that share a cell. false if the insertion sort runs long (many
 * equal cells: adversarial hashes); the caller then uses qsort. */
static bool cell_sort(sorter *so, const uint64_t *k, size_t len) {
    unsigned q = amq__log2_floor(len) + 2;
    q = q > so->cell_bits ? so->cell_bits : q;
    size_t cells = (size_t)1 << q;
    uint32_t *cnt = so->cell;
    memset(cnt, 0, (cells + 1) * sizeof *cnt);
    for (size_t i = 0; i < len; i++)
        cnt[((k[i] << so->part_bits) >> (64 - q)) + 1]++;
    for (size_t c = 1; c <= cells; c++)
        cnt[c] += cnt[c - 1];
    for (size_t i = 0; i < len; i++)
        so->tmp[cnt[(k[i] << so->part_bits) >> (64 - q)]++] = k[i];
    size_t moves = 0, budget = 8 * len + 64;
    for (size_t i = 1; i < len; i++) {
        uint64_t v = so->tmp[i];
        size_t j = i;
        for (; j > 0 && so->tmp[j - 1] > v; j--)
            so->tmp[j] = so->tmp[j - 1];
        so->tmp[j] = v;
        if ((moves += i - j) > budget)
            return false;
    }
    return true;
}

/* Sort partition dst[a, e) and append it at dst[w..] (w <= a), dropping
 * repeats if asked; returns the new w. */
static size_t sort_part(sorter *so, uint64_t *dst, size_t a, size_t e, size_t w,
                        bool dedupe) {
    size_t len = e - a;
    const uint64_t *v = so->tmp;
    if (len == 0)
        return w;
    if (len > so->tmp_cap || !cell_sort(so, dst + a, len)) {
        qsort(dst + a, len, sizeof *dst, cmp_u64);
        v = dst + a;
    }
    for (size_t i = 0; i < len; i++)
        if (!dedupe || w == 0 || dst[w - 1] != v[i])
            dst[w++] = v[i];
    return w;
}

static inline uint64_t key_of(uint64_t x, bool mixed, uint64_t seed) {
    return mixed ? amq__mix64(x + seed) : x;
}

amq_status amq__sort_keys(const amq__mem *m, const uint64_t *src, size_t n,
                          bool mixed, uint64_t seed, bool dedupe, uint64_t *dst,
                          size_t *out_n) {
    sorter so;
    AMQ_RETURN_IF_ERR(sorter_alloc(m, n, &so));
    memset(so.part, 0, (so.parts + 1) * sizeof *so.part);
    for (size_t i = 0; i < n; i++)
        so.part[part_of(key_of(src[i], mixed, seed), so.part_bits) + 1]++;
    for (size_t p = 1; p <= so.parts; p++)
        so.part[p] += so.part[p - 1];
    /* Scatter: part[p] moves from partition p's start to its end. */
    for (size_t i = 0; i < n; i++) {
        uint64_t x = key_of(src[i], mixed, seed);
        dst[so.part[part_of(x, so.part_bits)]++] = x;
    }
    size_t w = 0, a = 0;
    for (size_t p = 0; p < so.parts; p++) {
        w = sort_part(&so, dst, a, so.part[p], w, dedupe);
        a = so.part[p];
    }
    sorter_free(m, &so);
    *out_n = w;
    return AMQ_OK;
}
