/*
 * qf_block.c — select in one word for the quotient filter (qf_block.h):
 * the portable byte scan (out of line on purpose, see below), the PDEP
 * version for tests, and the CPU check that chooses between them.
 */
#include "fingerprint/qf_vbmi.h"

/* Position of the k-th (from 0) set bit of x; 64 if x has <= k bits.
 * Never inlined: the compiler would otherwise compute it beside the PDEP
 * version and pick one with a conditional move, paying for both. */
__attribute__((noinline)) uint64_t amq__qf_select64_scalar(uint64_t x,
                                                           unsigned k) {
    return amq__select64(x, k);
}

#if defined(__x86_64__)
/* The lane tables of qf_vbmi.h, built by the preprocessor. Byte lanes:
 * output byte i = 8L + m takes the w bytes of slots 8L.. (byte L*w + m)
 * and slot 8L + m from bit m*w. Word lanes: output byte i = 8L + k takes
 * byte floor(L*w/2) + k, and byte k of qword L is the (k mod 2)-th byte
 * of slot 4L + k/2, from bit 4(L*w mod 2) + (k/2)w + 8(k mod 2). */
#define QF_P8(w, i) ((i) / 8 * (w) + (i) % 8)
#define QF_S8(w, i) ((i) % 8 * (w))
#define QF_P16(w, i) ((i) / 8 * (w) / 2 + (i) % 8)
#define QF_S16(w, i) ((i) / 8 * (w) % 2 * 4 + (i) % 8 / 2 * (w) + (i) % 2 * 8)
#define QF_ROW8(F, w, i)                                                       \
    F(w, i), F(w, i + 1), F(w, i + 2), F(w, i + 3), F(w, i + 4), F(w, i + 5),  \
        F(w, i + 6), F(w, i + 7)
#define QF_ROW(F, w)                                                           \
    {                                                                          \
        QF_ROW8(F, w, 0), QF_ROW8(F, w, 8), QF_ROW8(F, w, 16),                 \
            QF_ROW8(F, w, 24), QF_ROW8(F, w, 32), QF_ROW8(F, w, 40),           \
            QF_ROW8(F, w, 48), QF_ROW8(F, w, 56)                               \
    }
#define QF_ROWS8(F)                                                            \
    {                                                                          \
        QF_ROW(F, 0), QF_ROW(F, 1), QF_ROW(F, 2), QF_ROW(F, 3), QF_ROW(F, 4),  \
            QF_ROW(F, 5), QF_ROW(F, 6), QF_ROW(F, 7), QF_ROW(F, 8)             \
    }
#define QF_ROWS16(F)                                                           \
    {                                                                          \
        QF_ROW(F, 9), QF_ROW(F, 10), QF_ROW(F, 11), QF_ROW(F, 12),             \
            QF_ROW(F, 13), QF_ROW(F, 14), QF_ROW(F, 15), QF_ROW(F, 16)         \
    }
const _Alignas(64) uint8_t amq__qf_perm8[9][64] = QF_ROWS8(QF_P8);
const _Alignas(64) uint8_t amq__qf_shift8[9][64] = QF_ROWS8(QF_S8);
const _Alignas(64) uint8_t amq__qf_perm16[8][64] = QF_ROWS16(QF_P16);
const _Alignas(64) uint8_t amq__qf_shift16[8][64] = QF_ROWS16(QF_S16);

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
