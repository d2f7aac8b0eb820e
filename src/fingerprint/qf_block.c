/*
 * qf_block.c — select in one word for the quotient filter (qf_block.h):
 * the portable byte scan (out of line on purpose, see below), the PDEP
 * version for tests, and the CPU check that chooses between them.
 */
#include "fingerprint/qf_block.h"

/* Position of the k-th (from 0) set bit of x; 64 if x has <= k bits.
 * Never inlined: the compiler would otherwise compute it beside the PDEP
 * version and pick one with a conditional move, paying for both. */
__attribute__((noinline)) uint64_t amq__qf_select64_scalar(uint64_t x,
                                                           unsigned k) {
    return amq__select64(x, k);
}

#if defined(__x86_64__)
uint64_t amq__qf_select64_pdep(uint64_t x, unsigned k) {
    return select64_pdep(x, k);
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
