/*
 * util.c — clocks, medians, the key stream and small formatting helpers.
 *
 * Keys are pre-hashed 64-bit values from splitmix64 (Steele, Lea, Flood
 * 2014): uniform, cheap, and two seeds give two streams that practically
 * never collide, so the second stream is a clean set of negatives.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "bench.h"

static uint64_t sink;
static bool summary_min = true;
static uint64_t run_start_ns;

uint64_t bench_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

double bench_seconds_since(uint64_t t0_ns) {
    return (double)(bench_now_ns() - t0_ns) / 1e9;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void bench_set_summary_min(bool use_min) { summary_min = use_min; }

bool bench_summary_is_min(void) { return summary_min; }

double bench_summary(const double *v, size_t n) {
    if (!summary_min || n == 0)
        return bench_median(v, n);
    double m = v[0];
    for (size_t i = 1; i < n; i++)
        m = v[i] < m ? v[i] : m;
    return m;
}

double bench_median(const double *v, size_t n) {
    double tmp[64];
    if (n == 0 || n > 64)
        return NAN;
    memcpy(tmp, v, n * sizeof *v);
    qsort(tmp, n, sizeof *tmp, cmp_double);
    return n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
}

uint64_t bench_splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

uint64_t *bench_make_keys(uint64_t seed, size_t n) {
    uint64_t *k = malloc((n ? n : 1) * sizeof *k);
    if (k == NULL)
        return NULL;
    uint64_t st = seed;
    for (size_t i = 0; i < n; i++)
        k[i] = bench_splitmix64(&st);
    return k;
}

uint64_t bench_reduce(uint64_t x, uint64_t range) {
    __extension__ typedef unsigned __int128 u128;
    return (uint64_t)(((u128)x * range) >> 64);
}

void bench_fmt_n(uint64_t n, char *buf, size_t cap) {
    int e = 0;
    uint64_t m = n;
    while (m >= 10 && m % 10 == 0) {
        m /= 10;
        e++;
    }
    if (m == 1 && e > 0)
        snprintf(buf, cap, "1e%d", e);
    else
        snprintf(buf, cap, "%llu", (unsigned long long)n);
}

void bench_consume(uint64_t v) {
    sink += v;
    __asm__ volatile("" : : "r"(sink) : "memory");
}

uint64_t bench_sink_value(void) { return sink; }

void bench_progress(const char *fmt, ...) {
    if (run_start_ns == 0)
        run_start_ns = bench_now_ns();
    fprintf(stderr, "[%7.1fs] ", bench_seconds_since(run_start_ns));
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* ---- the counting allocator ------------------------------------------- */

/* amq objects in the benchmark allocate through this, so a build's peak
 * memory is measured, not computed. amq gives memory from a caller's
 * allocator no huge-page advice, so this gives it: blocks of 4 MB and more
 * are 2 MB-aligned and advised MADV_HUGEPAGE as a whole, as the probe's
 * arrays are (probe.c). That is a little more than amq's default allocator
 * does (core/mem.c: 64-byte alignment, the advice on the page-aligned span
 * inside a table of 4 MB or more), whose tables keep base pages in the
 * partial 2 MB stretches at their ends. */
#define HUGE_FROM ((size_t)4 << 20)
#define HUGE_ALIGN ((size_t)2 << 20)

static size_t mem_live, mem_peak;

static void note_alloc(size_t n) {
    mem_live += n;
    if (mem_live > mem_peak)
        mem_peak = mem_live;
}

static void *count_alloc(void *ctx, size_t n) {
    (void)ctx;
    void *p = NULL;
    if (n >= HUGE_FROM) {
        if (posix_memalign(&p, HUGE_ALIGN, n) != 0)
            return NULL;
#ifdef MADV_HUGEPAGE
        (void)madvise(p, n, MADV_HUGEPAGE);
#endif
    } else {
        p = malloc(n ? n : 1);
    }
    if (p != NULL)
        note_alloc(n);
    return p;
}

static void count_free(void *ctx, void *p, size_t n) {
    (void)ctx;
    if (p == NULL)
        return;
    free(p);
    mem_live -= n;
}

static void *count_realloc(void *ctx, void *p, size_t old, size_t n) {
    if (p == NULL)
        return count_alloc(ctx, n);
    if (n >= HUGE_FROM) { /* keep the alignment: move by hand */
        void *q = count_alloc(ctx, n);
        if (q == NULL)
            return NULL;
        memcpy(q, p, old < n ? old : n);
        count_free(ctx, p, old);
        return q;
    }
    void *q = realloc(p, n ? n : 1);
    if (q == NULL)
        return NULL;
    mem_live -= old;
    note_alloc(n);
    return q;
}

static const amq_allocator counting = {count_alloc, count_realloc, count_free,
                                       NULL};

const amq_options *bench_options(void) {
    static amq_options opt;
    opt.allocator = &counting;
    return &opt;
}

void bench_mem_mark(void) { mem_peak = mem_live; }
size_t bench_mem_live(void) { return mem_live; }
size_t bench_mem_peak(void) { return mem_peak; }
