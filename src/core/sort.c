/*
 * sort.c — the distribution sort of 64-bit keys (sort.h).
 */
#include "core/sort.h"

#include <stdlib.h>
#include <string.h>

#include "core/bits.h"
#include "core/par.h"

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

/* The shape of a sort of n keys: 2^part_bits partitions of ~2^PART_LOG
 * keys; a partition up to 4x its expected size is sorted in a worker's
 * tmp, a larger one (only for adversarial hashes) by qsort in place. */
typedef struct sort_shape {
    size_t parts, tmp_cap, cells;
    unsigned part_bits, cell_bits;
} sort_shape;

static void sort_shape_of(size_t n, sort_shape *sh) {
    unsigned lg = amq__log2_floor(n ? n : 1);
    sh->part_bits = lg > PART_LOG ? lg - PART_LOG : 0;
    if (sh->part_bits > PART_MAX_BITS)
        sh->part_bits = PART_MAX_BITS;
    sh->parts = (size_t)1 << sh->part_bits;
    sh->tmp_cap = 4 * (n >> sh->part_bits) + 64;
    sh->cell_bits = amq__log2_floor(sh->tmp_cap) + 2;
    if (sh->cell_bits > CELL_MAX_BITS)
        sh->cell_bits = CELL_MAX_BITS;
    sh->cells = ((size_t)1 << sh->cell_bits) + 1;
}

/* One worker's scratch for sorting partitions. */
typedef struct sorter {
    uint32_t *cell; /* [cells] counts in a partition */
    uint64_t *tmp;  /* [tmp_cap] one partition, sorted */
    unsigned part_bits, cell_bits;
    size_t tmp_cap;
} sorter;

/* The whole sort. The input is cut into `chunks` consecutive pieces; each
 * piece's keys are counted by partition (hist[c * parts + p]), the counts
 * turned into each piece's write position in each partition, and every
 * piece scattered at once: a partition holds its keys in input order,
 * whatever the number of pieces. The partitions are then sorted in
 * `groups` consecutive runs, each compacted to its run's start (a repeat
 * never crosses partitions), and the runs moved together in order. */
typedef struct sort_job {
    const uint64_t *src;
    uint64_t *dst;
    size_t n, chunks, groups;
    uint64_t seed;
    bool mixed, dedupe;
    sort_shape sh;
    size_t *hist; /* [chunks * parts] counts, then write positions */
    size_t *end;  /* [parts] partition ends                        */
    size_t *kept; /* [groups] keys a run kept                      */
    sorter *so;   /* [workers]                                     */
} sort_job;

size_t amq__sort_scratch(size_t n) {
    sort_shape sh;
    sort_shape_of(n, &sh);
    return (2 * sh.parts + 1) * sizeof(size_t) + sizeof(sorter) +
           sh.cells * sizeof(uint32_t) + sh.tmp_cap * sizeof(uint64_t);
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
 * repeats if asked (first is where this run began: nothing before it is
 * compared); returns the new w. */
static size_t sort_part(sorter *so, uint64_t *dst, size_t a, size_t e, size_t w,
                        size_t first, bool dedupe) {
    size_t len = e - a;
    const uint64_t *v = so->tmp;
    if (len == 0)
        return w;
    if (len > so->tmp_cap || !cell_sort(so, dst + a, len)) {
        qsort(dst + a, len, sizeof *dst, cmp_u64);
        v = dst + a;
    }
    for (size_t i = 0; i < len; i++)
        if (!dedupe || w == first || dst[w - 1] != v[i])
            dst[w++] = v[i];
    return w;
}

static inline uint64_t key_of(uint64_t x, bool mixed, uint64_t seed) {
    return mixed ? amq__mix64(x + seed) : x;
}

static void chunk_range(const sort_job *j, size_t c, size_t *a, size_t *e) {
    *a = j->n / j->chunks * c + (c < j->n % j->chunks ? c : j->n % j->chunks);
    *e = *a + j->n / j->chunks + (c < j->n % j->chunks);
}

static void task_count(void *ctx, size_t c, unsigned worker) {
    const sort_job *j = ctx;
    size_t a, e, *h = j->hist + c * j->sh.parts;
    unsigned bits = j->sh.part_bits;
    (void)worker;
    chunk_range(j, c, &a, &e);
    for (size_t i = a; i < e; i++)
        h[part_of(key_of(j->src[i], j->mixed, j->seed), bits)]++;
}

static void task_scatter(void *ctx, size_t c, unsigned worker) {
    const sort_job *j = ctx;
    size_t a, e, *h = j->hist + c * j->sh.parts;
    unsigned bits = j->sh.part_bits;
    (void)worker;
    chunk_range(j, c, &a, &e);
    for (size_t i = a; i < e; i++) {
        uint64_t x = key_of(j->src[i], j->mixed, j->seed);
        j->dst[h[part_of(x, bits)]++] = x;
    }
}

static void task_sort(void *ctx, size_t g, unsigned worker) {
    const sort_job *j = ctx;
    size_t p0 = j->sh.parts * g / j->groups,
           p1 = j->sh.parts * (g + 1) / j->groups;
    size_t first = p0 ? j->end[p0 - 1] : 0, w = first, a = first;
    for (size_t p = p0; p < p1; p++) {
        w = sort_part(&j->so[worker], j->dst, a, j->end[p], w, first,
                      j->dedupe);
        a = j->end[p];
    }
    j->kept[g] = w - first;
}

/* Write positions from the counts: partition by partition, piece by
 * piece (so each piece's keys follow the earlier pieces' in a partition). */
static void sort_offsets(sort_job *j) {
    size_t at = 0;
    for (size_t p = 0; p < j->sh.parts; p++) {
        for (size_t c = 0; c < j->chunks; c++) {
            size_t *h = &j->hist[c * j->sh.parts + p], k = *h;
            *h = at;
            at += k;
        }
        j->end[p] = at;
    }
}

static size_t sort_gather(const sort_job *j) {
    size_t w = 0;
    for (size_t g = 0; g < j->groups; g++) {
        size_t p0 = j->sh.parts * g / j->groups;
        size_t first = p0 ? j->end[p0 - 1] : 0;
        if (w != first && j->kept[g] != 0)
            memmove(j->dst + w, j->dst + first, j->kept[g] * sizeof *j->dst);
        w += j->kept[g];
    }
    return w;
}

static void sort_job_free(const amq__mem *m, sort_job *j, unsigned workers) {
    amq__free(m, j->hist, j->chunks * j->sh.parts * sizeof *j->hist);
    amq__free(m, j->end, j->sh.parts * sizeof *j->end);
    amq__free(m, j->kept, j->groups * sizeof *j->kept);
    for (unsigned t = 0; j->so != NULL && t < workers; t++) {
        amq__free(m, j->so[t].cell, j->sh.cells * sizeof *j->so[t].cell);
        amq__free(m, j->so[t].tmp, j->sh.tmp_cap * sizeof *j->so[t].tmp);
    }
    amq__free(m, j->so, workers * sizeof *j->so);
}

/* Every allocation up front, on the calling thread (par.h). */
static amq_status sort_job_alloc(const amq__mem *m, sort_job *j,
                                 unsigned workers) {
    bool ok =
        (j->hist = amq__zalloc(m, j->chunks * j->sh.parts * sizeof *j->hist)) !=
            NULL &&
        (j->end = amq__alloc(m, j->sh.parts * sizeof *j->end)) != NULL &&
        (j->kept = amq__alloc(m, j->groups * sizeof *j->kept)) != NULL &&
        (j->so = amq__zalloc(m, workers * sizeof *j->so)) != NULL;
    for (unsigned t = 0; ok && t < workers; t++) {
        sorter *so = &j->so[t];
        so->part_bits = j->sh.part_bits;
        so->cell_bits = j->sh.cell_bits;
        so->tmp_cap = j->sh.tmp_cap;
        ok = (so->cell = amq__alloc(m, j->sh.cells * sizeof *so->cell)) &&
             (so->tmp = amq__alloc(m, j->sh.tmp_cap * sizeof *so->tmp));
    }
    if (!ok) {
        sort_job_free(m, j, workers);
        return AMQ_ERR_NOMEM;
    }
    return AMQ_OK;
}

amq_status amq__sort_keys(const amq__mem *m, const uint64_t *src, size_t n,
                          bool mixed, uint64_t seed, bool dedupe, uint64_t *dst,
                          size_t *out_n) {
    unsigned workers = amq__par_workers(n);
    sort_job j = {.src = src,
                  .dst = dst,
                  .n = n,
                  .seed = seed,
                  .mixed = mixed,
                  .dedupe = dedupe};
    sort_shape_of(n, &j.sh);
    j.chunks = workers;
    /* Several runs a worker, so that uneven partitions still balance. */
    j.groups = workers == 1 ? 1 : 8 * (size_t)workers;
    if (j.groups > j.sh.parts)
        j.groups = j.sh.parts;
    if (workers > j.groups)
        workers = (unsigned)j.groups;
    AMQ_RETURN_IF_ERR(sort_job_alloc(m, &j, workers));
    amq__par_for(workers, j.chunks, task_count, &j);
    sort_offsets(&j);
    amq__par_for(workers, j.chunks, task_scatter, &j);
    amq__par_for(workers, j.groups, task_sort, &j);
    *out_n = sort_gather(&j);
    sort_job_free(m, &j, workers);
    return AMQ_OK;
}
