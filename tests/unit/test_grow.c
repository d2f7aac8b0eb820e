/*
 * test_grow.c — the expandable quotient filter (eqf): it doubles as keys
 * arrive and never says no to a key it holds (through doublings, wider
 * slots, void entries copied into both halves, removes in any order); its
 * bound is the sum it claims and the measured rate stays under it; the
 * length plan is the one docs/structures.md proves; a doubling without
 * memory changes nothing; saved frames load back to the same bytes, and
 * a frame whose plan does not match its table is refused.
 */
#include "check.h"
#include "frame_bytes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/bits.h"
#include "core/frame.h"

static uint64_t member(uint64_t i) { return amq__mix64(i + 1); }
static uint64_t absent(uint64_t i) { return amq__mix64((1ull << 40) + i); }

static double measured(const amq_filter *f, uint64_t from, uint64_t n) {
    uint64_t fp = 0;
    for (uint64_t i = 0; i < n; i++)
        fp += amq_filter_contains_hash(f, absent(from + i));
    return (double)fp / (double)n;
}

static uint64_t missing(const amq_filter *f, uint64_t n) {
    uint64_t m = 0;
    for (uint64_t i = 0; i < n; i++)
        m += !amq_filter_contains_hash(f, member(i));
    return m;
}

/* Slots of the shape a describe() string names. */
static uint64_t slots_of(const amq_filter *f) {
    char d[128];
    unsigned q;
    unsigned long long s;
    amq_filter_describe(f, d, sizeof d);
    if (sscanf(d, "eqf:q=%u", &q) == 1)
        return 1ull << q;
    return sscanf(d, "eqf:slots=%llu", &s) == 1 ? s : 0;
}

static unsigned l_of(const amq_filter *f) {
    char d[128];
    amq_filter_describe(f, d, sizeof d);
    const char *p = strstr(d, ",l=");
    return p != NULL ? (unsigned)atoi(p + 3) : 0;
}

/* From 1000 keys at 1% to 2^10 times that: no false negative at any
 * size, the bound under the target to the planned growth (and measured
 * under the bound), bits per key flat. */
static void test_growth(void) {
    amq_filter *f = NULL;
    CHECK_OK(amq_filter_new("eqf", 1000, 0.01, NULL, &f, NULL));
    CHECK((amq_filter_caps(f) & AMQ_CAP_GROW) != 0);
    uint64_t n = 0, first = slots_of(f);
    for (unsigned d = 0; d <= 10; d++) {
        uint64_t to = 1000ull << d;
        for (; n < to; n++)
            CHECK_OK(amq_filter_add_hash(f, member(n)));
        CHECK(amq_filter_items(f) == n);
        CHECK(slots_of(f) == first << d);
        CHECK(missing(f, n) == 0);
        double b = amq_filter_fpr_bound(f), p = measured(f, d << 20, 100000);
        CHECK_MSG(b <= 0.01, "bound %g after %u doublings", b, d);
        CHECK_MSG(p <= b * 1.1 + 4 * sqrt(b / 1e5),
                  "measured %g, bound %g after %u doublings", p, b, d);
        CHECK_MSG(p > b * 0.7, "measured %g far below bound %g", p, b);
    }
    amq_filter_free(f);
}

/* A tiny plan (slots=64, l=3, growth=0) doubles 12 times: fingerprints
 * run out (void entries copied into both halves), new keys get longer
 * fingerprints (wider slots), and every key still answers yes; the bound
 * is the sum over entries and stays under 2x the plan's. */
static void test_voids_and_widening(void) {
    amq_filter *f = NULL;
    CHECK_OK(amq_filter_new("eqf:slots=64,l=3,growth=0", 0, 0, NULL, &f, NULL));
    unsigned l0 = l_of(f);
    CHECK(l0 == 3);
    uint64_t n = 0;
    for (unsigned d = 1; d <= 12; d++) {
        for (; n < 60ull << d; n++)
            CHECK_OK(amq_filter_add_hash(f, member(n)));
        CHECK(missing(f, n) == 0);
        /* the count of a member is at least 1 */
        uint64_t c = 0;
        CHECK_OK(amq_filter_count_hash(f, member(n / 2), &c));
        CHECK(c >= 1);
    }
    CHECK_MSG(l_of(f) > l0, "l %u never grew", l_of(f));
    /* growth=0: 0.95 * 2^-3 planned; the terms after it sum to less */
    double b = amq_filter_fpr_bound(f), p = measured(f, 0, 200000);
    CHECK_MSG(b <= 2 * 0.95 * 0.125, "bound %g", b);
    CHECK_MSG(fabs(p - b) <= 0.1 * b + 4 * sqrt(b / 2e5),
              "measured %g, bound %g", p, b);
    /* round trip, then removes of every key: the filter ends empty of
     * keys (copies of void entries may stay) */
    size_t len;
    uint8_t *buf = save(f, &len);
    amq_filter *g = NULL;
    CHECK_OK(amq_filter_load(buf, len, NULL, &g, NULL));
    CHECK(same_bytes(g, buf, len));
    CHECK(missing(g, n) == 0);
    for (uint64_t i = 0; i < n; i += 2)
        CHECK_OK(amq_filter_remove_hash(g, member(i)));
    for (uint64_t i = 1; i < n; i += 2)
        CHECK(amq_filter_contains_hash(g, member(i)));
    for (uint64_t i = 1; i < n; i += 2)
        CHECK_OK(amq_filter_remove_hash(g, member(i)));
    CHECK(amq_filter_items(g) == 0);
    CHECK(amq_filter_remove_hash(g, member(0)) == AMQ_ERR_NOT_FOUND);
    CHECK(amq_filter_fpr_bound(g) < b);
    amq_filter_free(g);
    free(buf);
    amq_filter_free(f);
}

/* Adds, repeats and removes in random order against a model of the
 * multiset: every key held answers yes, its count is at least the
 * model's, and a remove of a key held succeeds. */
static void test_model(void) {
    amq_filter *f = NULL;
    CHECK_OK(amq_filter_new("eqf:slots=64,l=6,growth=2", 0, 0, NULL, &f, NULL));
    enum { KEYS = 3000 };
    static unsigned held[KEYS];
    memset(held, 0, sizeof held);
    uint64_t rng = 42, total = 0;
    for (int step = 0; step < 60000; step++) {
        uint64_t r = amq__mix64(++rng), k = r % KEYS;
        if ((r >> 32) % 3 != 0 || held[k] == 0) {
            CHECK_OK(amq_filter_add_hash(f, member(k)));
            held[k]++;
            total++;
        } else {
            CHECK_OK(amq_filter_remove_hash(f, member(k)));
            held[k]--;
            total--;
        }
        if (step % 5000 == 4999) {
            CHECK(amq_filter_items(f) == total);
            for (uint64_t i = 0; i < KEYS; i++) {
                uint64_t c = 0;
                CHECK_OK(amq_filter_count_hash(f, member(i), &c));
                CHECK(held[i] == 0 || amq_filter_contains_hash(f, member(i)));
                CHECK(c >= held[i]);
            }
        }
    }
    amq_filter_free(f);
}

/* The add that must double, with no memory: AMQ_ERR_NOMEM, the bytes as
 * they were; with memory again it goes in. */
static void test_oom(void) {
    amq_options opt;
    memset(&opt, 0, sizeof opt);
    opt.allocator = &failing_allocator;
    amq_filter *f = NULL;
    CHECK_OK(amq_filter_new("eqf", 100, 0.01, &opt, &f, NULL));
    int refused = 0;
    for (uint64_t i = 0; f != NULL && i < 3000; i++)
        refused += add_without_memory(f, member(i));
    CHECK(refused >= 4); /* 100 -> 3000 keys: five doublings */
    CHECK(missing(f, 3000) == 0);
    amq_filter_free(f);
}

/* The plan: the spec's l and growth come back from describe(); a target
 * picks the least l that covers growth=10 and raises growth to what that
 * l covers; a frame whose doublings or plan disagree with its table is
 * refused. */
static void test_plan_and_frames(void) {
    amq_filter *f = NULL;
    CHECK_OK(amq_filter_new("eqf", 1000, 0.01, NULL, &f, NULL));
    char d[128];
    amq_filter_describe(f, d, sizeof d);
    /* 0.95 * 6 * 2^-10 <= 0.01 < 0.95 * 6 * 2^-9; 10 bits cover 19 */
    CHECK_MSG(strstr(d, ",l=10,growth=19") != NULL, "%s", d);
    amq_filter_free(f);
    CHECK_OK(amq_filter_new("eqf", 1000, 0.001, NULL, &f, NULL));
    amq_filter_describe(f, d, sizeof d);
    CHECK_MSG(strstr(d, ",l=13,") != NULL, "%s", d); /* 0.95*6/1e-3 -> 13 */
    for (uint64_t i = 0; i < 20000; i++)
        CHECK_OK(amq_filter_add_hash(f, member(i)));
    size_t len;
    uint8_t *buf = save(f, &len);
    amq__frame fr;
    CHECK_OK(amq__frame_parse(buf, len, AMQ__FRAME_INCOMPAT_INTERSECTION, &fr,
                              NULL));
    /* the type's block ends with l0 | growth | doublings | 0, 0 u32 */
    uint8_t *plan = (uint8_t *)fr.params + fr.params_len - 8;
    CHECK(plan[2] == 5); /* 1000 keys in 1088 slots, 20000 in 34816 */
    /* l0 + 1 (slots too narrow), growth 41 (past the limit), one doubling
     * more than the table has */
    static const uint8_t bad_plan[3] = {11, 41, 6};
    for (int which = 0; which < 3; which++) {
        uint8_t old = plan[which];
        plan[which] = which == 0 ? (uint8_t)(old + 1) : bad_plan[which];
        amq__frame_seal(buf, len);
        amq_diag dg;
        memset(&dg, 0, sizeof dg);
        amq_filter *g = NULL;
        CHECK(amq_filter_load(buf, len, NULL, &g, &dg) == AMQ_ERR_CORRUPT);
        plan[which] = old;
    }
    /* a view answers, and refuses to grow */
    amq__frame_seal(buf, len);
    amq_filter *v = NULL;
    CHECK_OK(amq_filter_view(buf, len, NULL, &v, NULL));
    CHECK(missing(v, 20000) == 0);
    CHECK(amq_filter_add_hash(v, member(1)) == AMQ_ERR_READONLY);
    amq_filter_free(v);
    free(buf);
    amq_filter_free(f);
    /* specs the type refuses */
    static const char *const bad[] = {"eqf:slots=64,l=0", "eqf:slots=64,l=56",
                                      "eqf:slots=100,l=8",
                                      "eqf:slots=64,l=8,growth=41", "eqf:l=8"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        amq_diag dg;
        memset(&dg, 0, sizeof dg);
        amq_filter *g = NULL;
        CHECK_MSG(amq_filter_new(bad[i], 0, 0, NULL, &g, &dg) != AMQ_OK,
                  "%s accepted", bad[i]);
    }
}

/* A full qf goes on as an eqf: every key still there, the bound of the
 * keys held the same, later keys take it 64 times past its size with
 * the bound under the qf's target; the qf itself is not changed, and a
 * cqf is refused. */
static void test_from_qf(void) {
    amq_filter *q = NULL, *e = NULL;
    CHECK_OK(amq_filter_new("qf", 1000, 0.01, NULL, &q, NULL));
    uint64_t n = 0;
    amq_status st;
    while ((st = amq_filter_add_hash(q, member(n))) == AMQ_OK)
        n++;
    CHECK(st == AMQ_ERR_FULL);
    size_t len;
    uint8_t *before = save(q, &len);
    CHECK_OK(amq_eqf_from_qf(q, NULL, &e));
    CHECK(same_bytes(q, before, len));
    CHECK(strcmp(amq_filter_info(e)->name, "eqf") == 0);
    CHECK(amq_filter_items(e) == n);
    CHECK(amq_filter_capacity(e) == 1000);
    CHECK(amq_filter_target_fpr(e) == 0.01);
    CHECK(missing(e, n) == 0);
    double bq = amq_filter_fpr_bound(q), be = amq_filter_fpr_bound(e);
    /* the same sum, over entries rather than distinct fingerprints */
    CHECK_MSG(be >= bq && be <= bq * 1.01, "bound %g, the qf's %g", be, bq);
    CHECK(measured(e, 0, 100000) == measured(q, 0, 100000));
    for (; n < 64000; n++)
        CHECK_OK(amq_filter_add_hash(e, member(n)));
    CHECK(missing(e, n) == 0);
    CHECK_MSG(amq_filter_fpr_bound(e) <= 0.01, "bound %g",
              amq_filter_fpr_bound(e));
    size_t elen;
    uint8_t *ebuf = save(e, &elen);
    amq_filter *back = NULL;
    CHECK_OK(amq_filter_load(ebuf, elen, NULL, &back, NULL));
    CHECK(same_bytes(back, ebuf, elen));
    amq_filter_free(back);
    free(ebuf);
    free(before);
    amq_filter_free(e);
    amq_filter_free(q);
    CHECK_OK(amq_filter_new("cqf", 1000, 0.01, NULL, &q, NULL));
    CHECK(amq_eqf_from_qf(q, NULL, &e) == AMQ_ERR_INVALID && e == NULL);
    amq_filter_free(q);
    CHECK_OK(amq_filter_new("sbbf", 1000, 0.01, NULL, &q, NULL));
    CHECK(amq_eqf_from_qf(q, NULL, &e) == AMQ_ERR_INVALID);
    amq_filter_free(q);
}

int main(void) {
    test_growth();
    test_voids_and_widening();
    test_model();
    test_oom();
    test_plan_and_frames();
    test_from_qf();
    return check_report("test_grow");
}
