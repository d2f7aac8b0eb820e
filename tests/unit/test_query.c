/*
 * test_query.c — the inline query objects of amq/query.h: a fuse8 query
 * answers exactly as the filter it was made from, through the structure
 * (amq_xor_of) and the generic filter (built, loaded as a view), against the
 * kernel and the portable reference (AMQ_OPT_SCALAR); one-segment and
 * segmented tables; and every shape it does not cover is refused with
 * the query object left as it was; a cuckoo query (sum and xor forms,
 * vacuum chunks, f = 12 and 16, odd f = 9 and 13) answers as its filter,
 * also after removes and adds, and the filters it does not cover are
 * refused.
 */
#include "check.h"

#include <stdlib.h>
#include <string.h>

#include "amq/query.h"

static uint64_t *keys(size_t n, uint64_t seed) {
    uint64_t *h = malloc(n ? n * sizeof *h : 1);
    for (size_t i = 0; h != NULL && i < n; i++)
        h[i] = check_next(&seed);
    return h;
}

/* q answers as f on the build's keys (all present) and on m fresh ones. */
static void same_answers(const amq_filter *f, const amq_fuse8_query *q,
                         const uint64_t *h, size_t n, size_t m) {
    uint64_t miss = 0, differ = 0, s = 4242;
    for (size_t i = 0; i < n; i++)
        miss += !amq_fuse8_query_contains(q, h[i]);
    for (size_t i = 0; i < m; i++) {
        uint64_t x = check_next(&s);
        differ +=
            amq_fuse8_query_contains(q, x) != amq_filter_contains_hash(f, x);
    }
    CHECK_MSG(miss == 0, "n=%zu: %llu false negatives", n,
              (unsigned long long)miss);
    CHECK_MSG(differ == 0, "n=%zu: %llu answers differ from the filter's", n,
              (unsigned long long)differ);
}

/* Through the structure of a "fuse8" filter (amq_xor_of). */
static void test_typed(size_t n, bool scalar) {
    check_seed = n * 2 + scalar;
    amq_options opt = {0};
    opt.flags = scalar ? AMQ_OPT_SCALAR : 0;
    uint64_t *h = keys(n, check_seed);
    amq_filter *f = NULL;
    CHECK_OK(amq_filter_build("fuse8", h, n, 0.0, &opt, &f, NULL));
    CHECK(amq_xor_of(f) != NULL);
    amq_fuse8_query q;
    amq_status st = amq_fuse8_query_of(amq_xor_of(f), &q);
    /* only a small table grown to a length that is not a power of two
     * may be refused; every table from 1000 keys on is segmented */
    CHECK_MSG(st == AMQ_OK || (st == AMQ_ERR_UNSUPPORTED && n < 1000),
              "n=%zu: %s", n, amq_status_name(st));
    if (st == AMQ_OK)
        same_answers(f, &q, h, n, 200000);
    amq_filter_free(f);
    free(h);
}

/* Through the generic interface: a built filter and a view of its frame
 * give the same query (the view's borrows the frame's buffer). */
static void test_generic(void) {
    check_seed = 77;
    size_t n = 50000;
    uint64_t *h = keys(n, 77);
    amq_filter *f = NULL, *v = NULL;
    CHECK_OK(amq_filter_build("fuse8", h, n, 0.0, NULL, &f, NULL));
    amq_fuse8_query q, qv;
    CHECK_OK(amq_filter_fuse8_query(f, &q));
    size_t len = 0;
    uint8_t *buf = f != NULL ? check_frame(f, &len) : NULL;
    if (buf != NULL)
        CHECK_OK(amq_filter_view(buf, len, NULL, &v, NULL));
    if (v != NULL) {
        CHECK_OK(amq_filter_fuse8_query(v, &qv));
        uint64_t s = 9, differ = 0, miss = 0;
        for (size_t i = 0; i < n; i++)
            miss += !amq_fuse8_query_contains(&qv, h[i]);
        for (size_t i = 0; i < 100000; i++) {
            uint64_t x = check_next(&s);
            bool a = amq_filter_contains_hash(f, x);
            differ += a != amq_fuse8_query_contains(&q, x);
            differ += a != amq_fuse8_query_contains(&qv, x);
        }
        CHECK(miss == 0 && differ == 0);
        CHECK(qv.slots != q.slots && qv.seed == q.seed &&
              qv.seg_count == q.seg_count && qv.shift == q.shift);
        CHECK(q.reserved == 0 && qv.reserved == 0);
    }
    amq_filter_free(v);
    amq_filter_free(f);
    free(buf);
    free(h);
}

/* A frame of slot mapping 0 (saved before mapping 1; test_xor.c says how
 * it was made) has no query object (the inline query is mapping 1's
 * alone): refused, *q untouched, and the filter still answers. */
static void test_mapping0(void) {
    check_seed = 81;
    size_t len;
    uint8_t *buf =
        check_golden_file("legacy/fuse-map0/segmented-fuse8.amq", &len);
    size_t n = 20000;
    uint64_t *h = keys(n, 81);
    amq_filter *f = NULL;
    amq_fuse8_query q, before;
    memset(&q, 0xa5, sizeof q);
    before = q;
    if (buf != NULL && len > 128)
        CHECK_OK(amq_filter_view(buf, len, NULL, &f, NULL));
    if (f != NULL && h != NULL) {
        CHECK_STATUS(amq_filter_fuse8_query(f, &q), AMQ_ERR_UNSUPPORTED);
        CHECK(memcmp(&q, &before, sizeof q) == 0);
        uint64_t miss = 0;
        for (size_t i = 0; i < n; i++)
            miss += !amq_filter_contains_hash(f, h[i]);
        CHECK(miss == 0);
    }
    amq_filter_free(f);
    free(buf);
    free(h);
}

/* Shapes without an inline query: refused, *q untouched. */
static void test_refused(void) {
    check_seed = 5;
    size_t n = 5000;
    uint64_t *h = keys(n, 5);
    amq_fuse8_query q, before;
    memset(&q, 0xa5, sizeof q);
    before = q;
    static const char *const others[] = {"fuse16", "fuse8:ways=4", "xor8"};
    for (size_t i = 0; i < 3; i++) {
        amq_filter *f = NULL;
        CHECK_OK(amq_filter_build(others[i], h, n, 0.0, NULL, &f, NULL));
        CHECK(amq_xor_of(f) != NULL);
        CHECK_MSG(amq_fuse8_query_of(amq_xor_of(f), &q) == AMQ_ERR_UNSUPPORTED,
                  "%s: not refused", others[i]);
        amq_filter_free(f);
    }
    amq_filter *f = NULL;
    CHECK_OK(amq_filter_build("fuse8", h, 0, 0.0, NULL, &f, NULL)); /* empty */
    CHECK(amq_xor_of(f) != NULL);
    CHECK_STATUS(amq_fuse8_query_of(amq_xor_of(f), &q), AMQ_ERR_UNSUPPORTED);
    CHECK_STATUS(amq_fuse8_query_of(NULL, &q), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_fuse8_query_of(amq_xor_of(f), NULL), AMQ_ERR_INVALID);
    amq_filter_free(f);
    CHECK(memcmp(&q, &before, sizeof q) == 0);

    amq_filter *g = NULL;
    CHECK_OK(amq_filter_build("sbbf", h, n, 0.01, NULL, &g, NULL));
    CHECK_STATUS(amq_filter_fuse8_query(g, &q), AMQ_ERR_UNSUPPORTED);
    amq_filter_free(g);
    g = NULL;
    CHECK_OK(amq_filter_build("fuse8:ways=4", h, n, 0.0, NULL, &g, NULL));
    CHECK_STATUS(amq_filter_fuse8_query(g, &q), AMQ_ERR_UNSUPPORTED);
    CHECK_STATUS(amq_filter_fuse8_query(NULL, &q), AMQ_ERR_INVALID);
    amq_filter_free(g);
    CHECK(memcmp(&q, &before, sizeof q) == 0);
    free(h);
}

/* q answers as c on its keys and on m fresh ones. */
static void same_cuckoo(const amq_filter *c, const amq_cuckoo_query *q,
                        const uint64_t *h, size_t n, size_t m) {
    uint64_t differ = 0, s = 31337;
    for (size_t i = 0; i < n; i++)
        differ += amq_cuckoo_query_contains(q, h[i]) !=
                  amq_filter_contains_hash(c, h[i]);
    for (size_t i = 0; i < m; i++) {
        uint64_t x = check_next(&s);
        differ +=
            amq_cuckoo_query_contains(q, x) != amq_filter_contains_hash(c, x);
    }
    CHECK_MSG(differ == 0, "%llu answers differ from the filter's",
              (unsigned long long)differ);
}

/* A big one-table filter (sum form, xor form, vacuum chunks): the query
 * object answers as the filter, also after removes and adds on the live
 * table; every present key is found. */
static void test_cuckoo(const char *what, amq_filter *c, size_t n) {
    check_seed = n;
    uint64_t *h = keys(n, n + 1);
    size_t added = 0;
    while (c != NULL && added < n && amq_filter_add_hash(c, h[added]) == AMQ_OK)
        added++;
    CHECK_MSG(added > n / 2, "%s: only %zu of %zu keys went in", what, added,
              n);
    amq_cuckoo_query q;
    memset(&q, 0, sizeof q);
    CHECK_OK(amq_cuckoo_query_of(amq_cuckoo_of(c), &q));
    if (c != NULL && q.table != NULL) {
        uint64_t miss = 0;
        for (size_t i = 0; i < added; i++)
            miss += !amq_cuckoo_query_contains(&q, h[i]);
        CHECK_MSG(miss == 0, "%s: %llu false negatives", what,
                  (unsigned long long)miss);
        same_cuckoo(c, &q, h, added, 200000);
        size_t bad = 0;
        for (size_t i = 0; i < added / 2; i++)
            bad += amq_filter_remove_hash(c, h[i]) != AMQ_OK;
        same_cuckoo(c, &q, h, added, 50000);
        for (size_t i = 0; i < added / 4; i++)
            bad += amq_filter_add_hash(c, h[i]) != AMQ_OK;
        same_cuckoo(c, &q, h, added, 50000);
        CHECK_MSG(bad == 0, "%s: %zu removes or adds refused", what, bad);
    }
    amq_filter_free(c);
    free(h);
}

static void test_cuckoo_refused(void) {
    amq_cuckoo_query q, before;
    memset(&q, 0x5a, sizeof q);
    before = q;
    amq_filter *c = NULL;
    amq_options scalar = {0};
    scalar.flags = AMQ_OPT_SCALAR;
    /* in cache: no alt */
    CHECK_OK(amq_filter_new("cuckoo", 1000, 0.01, NULL, &c, NULL));
    CHECK_STATUS(amq_cuckoo_query_of(amq_cuckoo_of(c), &q),
                 AMQ_ERR_UNSUPPORTED);
    amq_filter_free(c);
    c = NULL;
    CHECK_OK(amq_filter_new("cuckoo", 1000000, 0.01, &scalar, &c, NULL));
    CHECK_STATUS(amq_cuckoo_query_of(amq_cuckoo_of(c), &q),
                 AMQ_ERR_UNSUPPORTED);
    amq_filter_free(c);
    c = NULL;
    CHECK_OK(amq_filter_new("cuckoo:buckets=1048576,fp=20,max_kicks=500", 0,
                            0.0, NULL, &c, NULL)); /* f > 16 */
    CHECK_STATUS(amq_cuckoo_query_of(amq_cuckoo_of(c), &q),
                 AMQ_ERR_UNSUPPORTED);
    amq_filter_free(c);
    c = NULL;
    CHECK_OK(amq_filter_new("cuckoo", 1000000, 0.01, NULL, &c, NULL));
    CHECK_OK(amq_cuckoo_set_growth(amq_cuckoo_of(c), 4, 0)); /* may grow */
    CHECK_STATUS(amq_cuckoo_query_of(amq_cuckoo_of(c), &q),
                 AMQ_ERR_UNSUPPORTED);
    CHECK_STATUS(amq_cuckoo_query_of(NULL, &q), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_cuckoo_query_of(amq_cuckoo_of(c), NULL), AMQ_ERR_INVALID);
    amq_filter_free(c);
    amq_filter *g = NULL;
    CHECK_OK(amq_filter_new("bloom", 1000, 0.01, NULL, &g, NULL));
    CHECK_STATUS(amq_filter_cuckoo_query(g, &q), AMQ_ERR_UNSUPPORTED);
    amq_filter_free(g);
    CHECK(memcmp(&q, &before, sizeof q) == 0);
    g = NULL;
    CHECK_OK(amq_filter_new("cuckoo", 1000000, 0.01, NULL, &g, NULL));
    CHECK_OK(amq_filter_cuckoo_query(g, &q));
    uint64_t s = 3, differ = 0;
    size_t refused = 0;
    for (int i = 0; i < 1000; i++)
        refused += amq_filter_add_hash(g, check_next(&s)) != AMQ_OK;
    CHECK(refused == 0);
    for (int i = 0; i < 100000; i++) {
        uint64_t x = check_next(&s);
        differ +=
            amq_filter_contains_hash(g, x) != amq_cuckoo_query_contains(&q, x);
    }
    CHECK(differ == 0);
    amq_filter_free(g);
}

int main(void) {
    static const size_t sizes[] = {1, 2, 3, 10, 100, 999, 1000, 4096, 100000};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        test_typed(sizes[i], false);
        test_typed(sizes[i], true);
    }
    if (!check_quick())
        test_typed(2000000, false);
    test_generic();
    test_mapping0();
    test_refused();
    /* name, spec, capacity and fpr (0 for a spec's explicit shape) */
    static const struct {
        const char *what, *spec;
        uint64_t capacity;
        double fpr;
    } cuckoos[] = {
        {"sum", "cuckoo", 1000000, 0.01},
        {"xor", "cuckoo:buckets=262144,fp=12,max_kicks=500", 0, 0.0},
        {"f16", "cuckoo:buckets=2200000,fp=16,max_kicks=500", 0, 0.0},
        /* odd widths: the bit offset and the shift (sum form, xor form) */
        {"f9", "cuckoo:buckets=300000,fp=9,max_kicks=500", 0, 0.0},
        {"f13", "cuckoo:buckets=524288,fp=13,max_kicks=500", 0, 0.0},
        {"vacuum", "vacuum", 1000000, 0.01}};
    for (size_t i = 0; i < sizeof cuckoos / sizeof *cuckoos; i++) {
        amq_filter *c = NULL;
        CHECK_OK(amq_filter_new(cuckoos[i].spec, cuckoos[i].capacity,
                                cuckoos[i].fpr, NULL, &c, NULL));
        CHECK(amq_cuckoo_of(c) != NULL);
        test_cuckoo(cuckoos[i].what, c, 1000000);
    }
    test_cuckoo_refused();
    return check_report("query");
}
