/*
 * probe.c — the memory probe: what random cache-line reads cost by
 * themselves in an array as large as the filter under test.
 *
 *   array   bytes rounded up to whole 64-byte lines, filled with random
 *           words (which also faults every page in before timing); from
 *           4 MB up it is 2 MB-aligned and advised MADV_HUGEPAGE as a
 *           whole (--probe-pages base: neither), as the counting allocator
 *           (util.c) treats the filters' tables, so the probe sees the
 *           same TLB behaviour as the filter (amq's default allocator,
 *           core/mem.c, aligns tables to 64 bytes only and advises the
 *           page-aligned span inside a table of 4 MB or more);
 *   stream  the same negative-key stream the queries use; read i touches
 *           line reduce(stream[i], lines) (multiply-shift), one uint64.
 *
 * Three access patterns, each timed over the same q reads:
 *
 *   batch   per group of --probe-group values (16): compute every
 *           address and prefetch it, then read and accumulate — the shape
 *           of amq's batch queries, so "batch query ns / batch probe ns"
 *           says how many cache misses' worth of time a query costs.
 *           (Prefetching a whole 4096-key chunk before reading is slower
 *           far beyond cache: the prefetches outrun the miss buffers.)
 *   indep   a plain loop of independent reads: the out-of-order core
 *           overlaps as many misses as it can track;
 *   dep     the next address mixes in the word just read, so the reads
 *           form a chain and each pays the full latency: the floor for a
 *           scalar query that the CPU cannot overlap with the next one.
 *
 * A filter query also computes positions and tests bits; the probe does
 * only the reads, so a ratio near 1 means the query is memory-bound.
 *
 * measure.c times the batched and independent reads right before each
 * repetition of the queries they are compared with (on a shared machine
 * memory bandwidth drifts within a run, so a probe timed minutes apart
 * would skew the ratio); the dependent reads, the slowest, once per size.
 */
#include <math.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "bench.h"

#define LINE_BYTES 64u
#define LINE_WORDS (LINE_BYTES / sizeof(uint64_t))

#define HUGE_PAGE ((size_t)2 << 20)
#define HUGE_MIN ((size_t)4 << 20)

static uint64_t *probe_array(size_t bytes, bool huge, size_t *lines) {
    size_t nl = (bytes + LINE_BYTES - 1) / LINE_BYTES;
    nl = nl ? nl : 1;
    size_t size = nl * LINE_BYTES;
    size_t align = huge && size >= HUGE_MIN ? HUGE_PAGE : LINE_BYTES;
    size = (size + align - 1) / align * align; /* C11 aligned_alloc rule */
    uint64_t *a = aligned_alloc(align, size);
    if (a == NULL)
        return NULL;
#ifdef MADV_HUGEPAGE
    if (align == HUGE_PAGE)
        (void)madvise(a, size, MADV_HUGEPAGE); /* a hint only */
#endif
    uint64_t st = 0x5eedu;
    for (size_t i = 0; i < nl * LINE_WORDS; i++)
        a[i] = bench_splitmix64(&st);
    *lines = nl;
    return a;
}

/* Per group of `group` values: compute each address and prefetch it, then
 * read them all. The library's batch paths do the same (bloom.c prefetches
 * groups of 16 keys, blocked.c and sbbf.c keep 16 keys in flight). */
static uint64_t read_batched(const uint64_t *a, size_t lines, const uint64_t *s,
                             size_t q, size_t group, size_t *idx) {
    uint64_t acc = 0;
    for (size_t i = 0; i < q; i += group) {
        size_t len = q - i < group ? q - i : group;
        for (size_t j = 0; j < len; j++) {
            idx[j] = (size_t)bench_reduce(s[i + j], lines) * LINE_WORDS;
            __builtin_prefetch(&a[idx[j]]);
        }
        for (size_t j = 0; j < len; j++)
            acc += a[idx[j]];
    }
    return acc;
}

static uint64_t read_independent(const uint64_t *a, size_t lines,
                                 const uint64_t *s, size_t q) {
    uint64_t acc = 0;
    for (size_t i = 0; i < q; i++)
        acc += a[bench_reduce(s[i], lines) * LINE_WORDS];
    return acc;
}

static uint64_t read_dependent(const uint64_t *a, size_t lines,
                               const uint64_t *s, size_t q) {
    uint64_t acc = 0, v = 0;
    for (size_t i = 0; i < q; i++) {
        v = a[bench_reduce(s[i] ^ v, lines) * LINE_WORDS];
        acc += v;
    }
    return acc;
}

struct bench_probe_arr {
    uint64_t *a;
    size_t lines;
    size_t *idx; /* group addresses (batched mode) */
    size_t group;
};

bench_probe_arr *bench_probe_new(size_t bytes, size_t group, bool huge) {
    bench_probe_arr *p = calloc(1, sizeof *p);
    if (p == NULL || group == 0)
        goto fail;
    p->group = group;
    p->a = probe_array(bytes, huge, &p->lines);
    p->idx = malloc(group * sizeof *p->idx);
    if (p->a == NULL || p->idx == NULL)
        goto fail;
    return p;
fail:
    bench_probe_free(p);
    return NULL;
}

void bench_probe_free(bench_probe_arr *p) {
    if (p == NULL)
        return;
    free(p->a);
    free(p->idx);
    free(p);
}

double bench_probe_time(bench_probe_arr *p, bench_probe_mode m,
                        const uint64_t *s, size_t q) {
    uint64_t acc, t0 = bench_now_ns();
    if (q == 0)
        return NAN;
    if (m == BENCH_PROBE_BATCH)
        acc = read_batched(p->a, p->lines, s, q, p->group, p->idx);
    else if (m == BENCH_PROBE_INDEP)
        acc = read_independent(p->a, p->lines, s, q);
    else
        acc = read_dependent(p->a, p->lines, s, q);
    double t = (double)(bench_now_ns() - t0) / (double)q;
    bench_consume(acc);
    return t;
}
