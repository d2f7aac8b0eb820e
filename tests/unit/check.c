/* check.c — see check.h. */
#include "check.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

uint64_t check_seed;
static unsigned long passed, failed;

void check_fail(const char *file, int line, const char *expr,
                const char *detail) {
    failed++;
    if (failed <= 50)
        fprintf(stderr, "FAIL %s:%d: %s%s%s (seed %" PRIu64 ")\n", file, line,
                expr, detail ? " — " : "", detail ? detail : "", check_seed);
}

void check_pass(void) { passed++; }

bool check_quick(void) {
    const char *q = getenv("AMQ_TEST_QUICK");
    return q != NULL && q[0] != '\0' && q[0] != '0';
}

int check_report(const char *suite) {
    printf("%s: %lu passed, %lu failed\n", suite, passed, failed);
    return failed == 0 && passed > 0 ? 0 : 1;
}
