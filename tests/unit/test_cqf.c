/*
 * test_cqf.c — the counting quotient filter ("cqf" through amq/filter.h,
 * counted updates through amq/quotient.h): the shared model tests in
 * counting mode (qf_model.h), plus what only the counter encoding has:
 *   - a key inserted c times takes the slots the encoding promises
 *     (O(log c)), for remainders 0, 1, middle and all-ones, widths 2..20,
 *     counts up to 2^64 - 1, with neighbours in the same run;
 *   - counts that would pass 2^64 - 1 are refused, the filter unchanged;
 *   - through amq_filter: union adds counts and yields exactly the frame of
 *     the filter built by inserting both key sets (the layout is a function
 *     of the multiset), for qf and cqf.
 */
#include "check.h"

#include <stdlib.h>
#include <string.h>

#include "amq/quotient.h"
#include "qf_model.h"

/* Slots the encoding takes for remainder x, count c (the spec in
 * src/fingerprint/quotient.c), computed independently. */
static uint64_t expected_len(unsigned r, uint64_t x, uint64_t c) {
    uint64_t m = UINT64_C(1) << r, base = x > 0 ? m - 2 : m - 1;
    if (c <= 2)
        return c;
    uint64_t v = c - 3, digits = 1, lead = v;
    while (lead >= base) {
        lead /= base;
        digits++;
    }
    if (x == 0)
        return digits + 3;
    uint64_t sym = lead + 1 < x ? lead + 1 : lead + 2;
    return digits + 2 + (sym > x);
}

static void test_lengths(void) {
    static const unsigned widths[] = {2, 3, 4, 8, 20};
    static const uint64_t counts[] = {1,
                                      2,
                                      3,
                                      4,
                                      5,
                                      6,
                                      7,
                                      8,
                                      100,
                                      255,
                                      256,
                                      257,
                                      65537,
                                      UINT64_C(1) << 40,
                                      UINT64_MAX - 1,
                                      UINT64_MAX};
    uint64_t errs = 0;
    check_seed = 40;
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
        unsigned r = widths[w];
        uint64_t mx = (UINT64_C(1) << r) - 1;
        uint64_t cand[] = {0, 1, 2, mx / 2, mx - 1, mx}, xs[6];
        size_t nx = 0;
        for (size_t i = 0; i < 6; i++) {
            bool dup = false;
            for (size_t j = 0; j < nx; j++)
                dup |= xs[j] == cand[i];
            if (!dup)
                xs[nx++] = cand[i];
        }
        for (size_t i = 0; i < nx; i++)
            for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
                amq_filter *f = NULL;
                CHECK_OK(make(true, 256, r, 0, &f));
                if (f == NULL)
                    return;
                uint64_t q = 70, fp = q << r | xs[i];
                uint64_t h = hash_for(f, fp);
                errs += amq_qf_fingerprint(qf(f), h) != fp;
                errs += amq_cqf_insert(qf(f), h, counts[c]) != AMQ_OK;
                errs += count_of(f, h) != counts[c];
                errs += amq_qf_used_slots(qf(f)) !=
                        expected_len(r, xs[i], counts[c]);
                /* Neighbours in the same run, below and above (unless the
                 * item total would pass 2^64 - 1). */
                bool nb = counts[c] < UINT64_MAX / 2;
                for (size_t j = 0; j < nx && nb; j++) {
                    if (xs[j] == xs[i])
                        continue;
                    uint64_t hj = hash_for(f, q << r | xs[j]);
                    errs += amq_cqf_insert(qf(f), hj, 1 + j * 3) != AMQ_OK;
                }
                errs += count_of(f, h) != counts[c];
                for (size_t j = 0; j < nx && nb; j++)
                    if (xs[j] != xs[i])
                        errs += count_of(f, hash_for(f, q << r | xs[j])) !=
                                1 + j * 3;
                errs += amq__qf_check(qf(f)) != AMQ_OK;
                /* Count down to zero in a few steps. */
                uint64_t left = counts[c];
                while (left > 0 && errs == 0) {
                    uint64_t k = left > 3 ? left / 2 + 1 : 1;
                    errs += amq_cqf_remove(qf(f), h, k) != AMQ_OK;
                    left -= k;
                    errs += count_of(f, h) != left;
                    errs += amq__qf_check(qf(f)) != AMQ_OK;
                }
                CHECK_MSG(errs == 0, "r=%u x=%llu c=%llu: errors", r,
                          (unsigned long long)xs[i],
                          (unsigned long long)counts[c]);
                amq_filter_free(f);
                if (errs)
                    return;
            }
    }
}

/* Every count 1..600 of one key, incrementally, next to other keys. */
static void test_incremental(void) {
    uint64_t errs = 0;
    check_seed = 41;
    for (unsigned r = 2; r <= 5; r++) {
        amq_filter *f = NULL;
        CHECK_OK(make(true, 64, r, 0, &f));
        if (f == NULL)
            return;
        uint64_t mx = (UINT64_C(1) << r) - 1;
        for (uint64_t x = 0; x <= mx; x += mx) /* 0 and all-ones too */
            for (uint64_t c = 1; c <= 600; c++) {
                errs +=
                    amq_cqf_insert(qf(f), hash_for(f, 5 << r | x), 1) != AMQ_OK;
                errs += count_of(f, hash_for(f, 5 << r | x)) != c;
                if (c == 1)
                    errs += amq_cqf_insert(qf(f), hash_for(f, 5 << r | 1), 2) !=
                            AMQ_OK;
            }
        errs += amq__qf_check(qf(f)) != AMQ_OK;
        CHECK_MSG(errs == 0, "r=%u: incremental counts wrong", r);
        amq_filter_free(f);
    }
}

static void test_overflow(void) {
    amq_filter *f = NULL;
    check_seed = 42;
    CHECK_OK(make(true, 64, 8, 0, &f));
    if (f == NULL)
        return;
    CHECK_OK(amq_cqf_insert(qf(f), 12345, UINT64_MAX - 1));
    snapshot s0 = snap(f);
    CHECK_STATUS(amq_cqf_insert(qf(f), 12345, 2), AMQ_ERR_OVERFLOW);
    CHECK(same_snap(s0, snap(f)));
    CHECK_STATUS(amq_cqf_insert(qf(f), 999999999999ULL, 5), AMQ_ERR_OVERFLOW);
    CHECK_STATUS(amq_cqf_insert(qf(f), 12345, 0), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_cqf_remove(qf(f), 12345, UINT64_MAX), AMQ_ERR_NOT_FOUND);
    CHECK(same_snap(s0, snap(f)) && amq__qf_check(qf(f)) == AMQ_OK);
    CHECK_OK(amq_cqf_insert(qf(f), 12345, 1));
    uint64_t c = 0;
    CHECK_OK(amq_filter_count_hash(f, 12345, &c));
    CHECK(c == UINT64_MAX);
    amq_filter_free(f);
}

/* ---- through amq_filter -------------------------------------------------- */

static uint8_t *frame(const amq_filter *f, size_t *len) {
    size_t need = amq_filter_serialized_size(f);
    uint8_t *buf = malloc(need);
    if (buf == NULL || amq_filter_save(f, buf, need, len) != AMQ_OK) {
        free(buf);
        return NULL;
    }
    return buf;
}

static void test_union_canonical(const char *spec) {
    amq_filter *a = NULL, *b = NULL, *c = NULL;
    uint64_t rng = 43, errs = 0;
    check_seed = 43;
    CHECK_OK(amq_filter_new(spec, 0, 0, NULL, &a, NULL));
    CHECK_OK(amq_filter_new(spec, 0, 0, NULL, &b, NULL));
    CHECK_OK(amq_filter_new(spec, 0, 0, NULL, &c, NULL));
    if (a == NULL || b == NULL || c == NULL)
        goto out;
    for (int i = 0; i < 700; i++) {
        uint64_t h = check_next(&rng) % 500 * 0x9e3779b97f4a7c15ULL;
        errs += amq_filter_add_hash(i % 2 ? a : b, h) != AMQ_OK;
        errs += amq_filter_add_hash(c, h) != AMQ_OK;
    }
    CHECK_OK(amq_filter_union(a, b));
    CHECK(amq_filter_items(a) == 700 && errs == 0);
    size_t la = 0, lc = 0;
    uint8_t *fa = frame(a, &la), *fc = frame(c, &lc);
    CHECK_MSG(fa != NULL && fc != NULL && la == lc && memcmp(fa, fc, la) == 0,
              "%s: union differs from inserting both sets", spec);
    for (uint64_t i = 0; i < 500; i++) {
        uint64_t h = i * 0x9e3779b97f4a7c15ULL, x = 0, y = 0;
        CHECK_OK(amq_filter_count_hash(a, h, &x));
        CHECK_OK(amq_filter_count_hash(c, h, &y));
        errs += x != y;
    }
    CHECK(errs == 0);
    free(fa);
    free(fc);
out:
    amq_filter_free(a);
    amq_filter_free(b);
    amq_filter_free(c);
}

int main(void) {
    test_lengths();
    test_incremental();
    test_overflow();
    test_models(true);
    test_big_cluster(true);
    test_windows(true);
    test_merge(true);
    test_resize(true);
    test_union_canonical("cqf:q=10,r=6");
    test_union_canonical("qf:q=10,r=6");
    test_union_canonical("cqf:slots=576,r=3");
    return check_report("test_cqf");
}
