/* cpu.c — run-time CPU feature detection for choosing SIMD paths. */
#include "core/bits.h"

int amq__cpu_has_avx2(void) {
#if defined(__x86_64__) || defined(__i386__)
    static int cached = -1;
    int v = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (v < 0) {
        __builtin_cpu_init();
        v = __builtin_cpu_supports("avx2") ? 1 : 0;
        __atomic_store_n(&cached, v, __ATOMIC_RELAXED);
    }
    return v;
#else
    return 0;
#endif
}

int amq__cpu_has_avx512(void) {
#if defined(__x86_64__) || defined(__i386__)
    static int cached = -1;
    int v = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (v < 0) {
        __builtin_cpu_init();
        v = (__builtin_cpu_supports("avx512f") &&
             __builtin_cpu_supports("avx512bw"))
                ? 1
                : 0;
        __atomic_store_n(&cached, v, __ATOMIC_RELAXED);
    }
    return v;
#else
    return 0;
#endif
}
