/*
 * cpu.c — run-time CPU feature detection for choosing SIMD paths.
 *
 * Structures pick their kernels (scalar, AVX2, AVX-512, AVX-512 with
 * VPOPCNTDQ or VBMI) when they are created or loaded, from these answers.
 * Tests lower the ceiling with amq__cpu_cap so that a machine with every
 * extension also runs the narrower kernels, each held against the scalar
 * reference.
 */
#include "core/bits.h"

static int cap_level = AMQ__CPU_MAX;

void amq__cpu_cap(int level) {
    __atomic_store_n(&cap_level, level, __ATOMIC_RELAXED);
}

static int capped(int level) {
    return __atomic_load_n(&cap_level, __ATOMIC_RELAXED) >= level;
}

#if defined(__x86_64__) || defined(__i386__)
/* Cached answer of __builtin_cpu_supports for a feature set. */
static int detect(int *cached, int (*probe)(void)) {
    int v = __atomic_load_n(cached, __ATOMIC_RELAXED);
    if (v < 0) {
        __builtin_cpu_init();
        v = probe();
        __atomic_store_n(cached, v, __ATOMIC_RELAXED);
    }
    return v;
}

static int probe_avx2(void) {
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi2") &&
           __builtin_cpu_supports("popcnt");
}

static int probe_avx512(void) {
    return probe_avx2() && __builtin_cpu_supports("avx512f") &&
           __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512dq");
}

static int probe_vpopcntdq(void) {
    return probe_avx512() && __builtin_cpu_supports("avx512vpopcntdq");
}

static int probe_vbmi(void) {
    return probe_avx512() && __builtin_cpu_supports("avx512vbmi");
}

int amq__cpu_has_avx2(void) {
    static int cached = -1;
    return capped(AMQ__CPU_AVX2) && detect(&cached, probe_avx2);
}

int amq__cpu_has_avx512(void) {
    static int cached = -1;
    return capped(AMQ__CPU_AVX512) && detect(&cached, probe_avx512);
}

int amq__cpu_has_vpopcntdq(void) {
    static int cached = -1;
    return capped(AMQ__CPU_AVX512_EXT) && detect(&cached, probe_vpopcntdq);
}

int amq__cpu_has_vbmi(void) {
    static int cached = -1;
    return capped(AMQ__CPU_AVX512_EXT) && detect(&cached, probe_vbmi);
}
#else
int amq__cpu_has_avx2(void) { return 0; }
int amq__cpu_has_avx512(void) { return 0; }
int amq__cpu_has_vpopcntdq(void) { return 0; }
int amq__cpu_has_vbmi(void) { return 0; }
#endif
