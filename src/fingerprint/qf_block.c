/*
 * qf_block.c — the out-of-line parts of the quotient filter's rank and
 * select (qf_block.h): select in one word, portable and with PDEP; a run
 * end past its block; the true offset behind a saturated one.
 */
#include "fingerprint/qf_block.h"

/* Position of the k-th (from 0) set bit of x; 64 if x has <= k bits.
 * Never inlined: the compiler would otherwise compute it beside the PDEP
 * version and pick one with a conditional move, paying for both. */
__attribute__((noinline)) uint64_t amq__qf_select64_scalar(uint64_t x,
                                                           unsigned k) {
    unsigned base = 0;
    for (; base < 64; base += 8) {
        unsigned c = amq__popcount64((x >> base) & 0xff);
        if (k < c)
            break;
        k -= c;
    }
    if (base >= 64)
        return 64;
    uint64_t b = (x >> base) & 0xff;
    for (unsigned i = 0; i < k; i++)
        b &= b - 1;
    return base + (uint64_t)__builtin_ctzll(b);
}

#if defined(__x86_64__)
__attribute__((target("bmi,bmi2"))) uint64_t
amq__qf_select64_pdep(uint64_t x, unsigned k) {
    if (k >= 64)
        return 64;
    return _tzcnt_u64(_pdep_u64(1ULL << k, x));
}
bool amq__qf_have_pdep(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("bmi");
}
#else
uint64_t amq__qf_select64_pdep(uint64_t x, unsigned k) {
    return amq__qf_select64_scalar(x, k);
}
bool amq__qf_have_pdep(void) { return false; }
#endif

/* The (d >= 1)-th run end at or after slot `from`, looking only at blocks
 * below hib; hib * 64 if there is none there. The first word is inline;
 * runs that spill into later blocks take the loop. */
uint64_t amq__qf_select_rend_far(const amq_qf *f, uint64_t b, uint64_t d,
                                 uint64_t hib) {
    for (;;) {
        if (++b >= hib)
            return hib * 64;
        uint64_t w = rend_word(f, b), c = popcnt(f, w);
        if (d <= c)
            return b * 64 + select64(f, w, (unsigned)(d - 1));
        d -= c;
    }
}

/* A saturated offset: recompute forward from the nearest unsaturated block
 * before b, which must lie in the window (false otherwise). */
bool amq__qf_true_off_far(const amq_qf *f, uint64_t b, const qwin *w,
                          uint64_t *out) {
    uint64_t j = b, t;
    while (j > w->lob && off_get(f, j) == QF_OFF_SAT)
        j--;
    if (off_get(f, j) == QF_OFF_SAT)
        return false;
    for (t = off_get(f, j); j < b && t != QF_NOWHERE; j++)
        t = next_off(f, j, t, w->hib);
    *out = t;
    return t != QF_NOWHERE;
}
