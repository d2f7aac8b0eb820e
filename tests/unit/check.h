/*
 * check.h — tiny test harness. CHECK* always evaluate their argument (never
 * assert(): it vanishes under NDEBUG). A failure prints file:line, the
 * expression and the current seed, records the failure and continues; the
 * test's main returns check_report() which prints "N passed, N failed".
 *
 * AMQ_TEST_QUICK=1 in the environment asks for smaller sizes (sanitizer CI);
 * tests read it through check_quick().
 */
#ifndef AMQ_TESTS_CHECK_H
#define AMQ_TESTS_CHECK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "amq/amq.h"

extern uint64_t check_seed; /* set by tests; printed on failure */

void check_fail(const char *file, int line, const char *expr,
                const char *detail);
void check_pass(void);
int check_report(const char *suite);
bool check_quick(void);

/* f's frame in a fresh 64-byte aligned buffer (a view may read it) that
 * the caller frees; *len its length. A failed save is a check failure and
 * gives NULL. */
uint8_t *check_frame(const amq_filter *f, size_t *len);
/* a and b save to identical bytes. */
bool check_same_frame(const amq_filter *a, const amq_filter *b);
/* The bytes of tests/golden/<rel> (AMQ_GOLDEN_DIR, if set, is the
 * directory instead) in a 64-byte aligned buffer the caller frees; NULL,
 * and a failed check, if it cannot be read. */
uint8_t *check_golden_file(const char *rel, size_t *len);

/* Range filters (test_range, test_memento). Whether some value of
 * sorted[0..n) lies in [lo, hi]; and the false positives among q empty
 * ranges of len keys, drawn uniformly (CHECK_ANYWHERE), just past a run
 * of keys closer than len (CHECK_PAST_KEY: the correlated queries that
 * break learned and prefix filters) or past the last key
 * (CHECK_PAST_END), checked against amq_range_fpr_bound within 4 sigma. */
enum { CHECK_ANYWHERE, CHECK_PAST_KEY, CHECK_PAST_END };
bool check_any_in(const uint64_t *sorted, size_t n, uint64_t lo, uint64_t hi);
void check_range_rate(const amq_filter *f, const uint64_t *sorted, size_t n,
                      uint64_t len, int where, uint64_t *s, const char *what);
/* n keys for a range workload (the caller frees them): uniform 64-bit,
 * runs of 100 consecutive integers at random bases, or 0, step, 2 step,
 * ... (a regular grid). */
enum { CHECK_KEYS_UNIFORM, CHECK_KEYS_RUNS, CHECK_KEYS_GRID };
uint64_t *check_range_keys(int kind, size_t n, uint64_t step, uint64_t *s);

/* splitmix64: deterministic key streams from a seed. */
static inline uint64_t check_next(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (cond)                                                              \
            check_pass();                                                      \
        else                                                                   \
            check_fail(__FILE__, __LINE__, #cond, NULL);                       \
    } while (0)

#define CHECK_MSG(cond, ...)                                                   \
    do {                                                                       \
        if (cond) {                                                            \
            check_pass();                                                      \
        } else {                                                               \
            char check_buf_[256];                                              \
            snprintf(check_buf_, sizeof check_buf_, __VA_ARGS__);              \
            check_fail(__FILE__, __LINE__, #cond, check_buf_);                 \
        }                                                                      \
    } while (0)

/* Evaluate a status-returning call once and compare with the expected one. */
#define CHECK_STATUS(expr, expected)                                           \
    do {                                                                       \
        amq_status check_st_ = (expr);                                         \
        CHECK_MSG(check_st_ == (expected), "got %s, expected %s",              \
                  amq_status_name(check_st_), amq_status_name(expected));      \
    } while (0)

#define CHECK_OK(expr) CHECK_STATUS(expr, AMQ_OK)

#endif
