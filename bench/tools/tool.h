/*
 * tool.h — what the measuring programs of bench/tools share: a wall clock
 * and the splitmix64 key stream (a fixed seed gives the same keys on every
 * run and machine).
 */
#ifndef AMQ_BENCH_TOOLS_TOOL_H
#define AMQ_BENCH_TOOLS_TOOL_H

#include <stdint.h>
#include <time.h>

static inline double tool_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline uint64_t tool_splitmix(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

#endif
