/* check.c — see check.h. */
#include "check.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

uint8_t *check_frame(const amq_filter *f, size_t *len) {
    size_t need = amq_filter_serialized_size(f), written = 0;
    uint8_t *buf = aligned_alloc(64, (need + 64) / 64 * 64);
    *len = 0;
    if (buf == NULL)
        return NULL;
    amq_status st = amq_filter_save(f, buf, need, &written);
    CHECK_MSG(st == AMQ_OK && written == need, "save: %s, %zu of %zu bytes",
              amq_status_name(st), written, need);
    if (st != AMQ_OK) {
        free(buf);
        return NULL;
    }
    *len = written;
    return buf;
}

uint8_t *check_golden_file(const char *rel, size_t *len) {
    char dir[1024], path[1400];
    const char *env = getenv("AMQ_GOLDEN_DIR");
    snprintf(dir, sizeof dir, "%s", env != NULL && env[0] ? env : __FILE__);
    char *slash = strrchr(dir, '/'); /* .../tests/unit/check.c */
    if ((env == NULL || env[0] == '\0') && slash != NULL)
        snprintf(slash, sizeof dir - (size_t)(slash - dir), "/../golden");
    snprintf(path, sizeof path, "%.1000s/%.300s", dir, rel);
    *len = 0;
    FILE *fp = fopen(path, "rb");
    uint8_t *buf = NULL;
    long size = -1;
    if (fp != NULL && fseek(fp, 0, SEEK_END) == 0)
        size = ftell(fp);
    if (size > 0 && fseek(fp, 0, SEEK_SET) == 0)
        buf = aligned_alloc(64, ((size_t)size + 63) / 64 * 64);
    if (buf != NULL && fread(buf, 1, (size_t)size, fp) != (size_t)size) {
        free(buf);
        buf = NULL;
    }
    if (fp != NULL)
        fclose(fp);
    CHECK_MSG(buf != NULL, "%.200s: cannot read", path);
    *len = buf != NULL ? (size_t)size : 0;
    return buf;
}

bool check_same_frame(const amq_filter *a, const amq_filter *b) {
    size_t la, lb;
    uint8_t *fa = check_frame(a, &la), *fb = check_frame(b, &lb);
    bool same = fa != NULL && fb != NULL && la == lb && memcmp(fa, fb, la) == 0;
    free(fa);
    free(fb);
    return same;
}

bool check_any_in(const uint64_t *sorted, size_t n, uint64_t lo, uint64_t hi) {
    size_t a = 0, b = n;
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (sorted[mid] < lo)
            a = mid + 1;
        else
            b = mid;
    }
    return a < n && sorted[a] <= hi;
}

void check_range_rate(const amq_filter *f, const uint64_t *sorted, size_t n,
                      uint64_t len, int where, uint64_t *s, const char *what) {
    size_t q = check_quick() ? 20000 : 100000, asked = 0, fp = 0, tries = 0;
    double bound = amq_range_fpr_bound(f, len);
    /* a grid leaves no empty range past a key longer than its step */
    for (; asked < q && tries < 50 * q; tries++) {
        uint64_t lo = check_next(s);
        if (where == CHECK_PAST_KEY) {
            size_t i = check_next(s) % n;
            while (i + 1 < n && sorted[i + 1] - sorted[i] <= len)
                i++;
            lo = sorted[i] + 1;
        } else if (where == CHECK_PAST_END) {
            lo = sorted[n - 1] + 1 + check_next(s) % (1u << 24);
        }
        if (lo > UINT64_MAX - len)
            continue;
        uint64_t hi = lo + len - 1;
        if (check_any_in(sorted, n, lo, hi))
            continue;
        bool maybe;
        CHECK_OK(amq_range_query(f, lo, hi, &maybe));
        asked++;
        fp += maybe;
    }
    double mean = bound * (double)asked;
    CHECK(asked == q);
    CHECK_MSG((double)fp <= mean + 4.0 * sqrt(mean) + 4.0,
              "%s len %llu: %zu false positives in %zu, bound %g", what,
              (unsigned long long)len, fp, asked, bound);
}

uint64_t *check_range_keys(int kind, size_t n, uint64_t step, uint64_t *s) {
    uint64_t *k = malloc((n ? n : 1) * sizeof *k), base = 0;
    CHECK(k != NULL);
    for (size_t i = 0; k != NULL && i < n; i++) {
        if (kind == CHECK_KEYS_UNIFORM)
            k[i] = check_next(s);
        else if (kind == CHECK_KEYS_GRID)
            k[i] = (uint64_t)i * step;
        else {
            if (i % 100 == 0)
                base = check_next(s) >> 8;
            k[i] = base + i % 100;
        }
    }
    return k;
}
