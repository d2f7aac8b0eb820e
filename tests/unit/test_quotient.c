/*
 * test_quotient.c — the quotient filter core (qf mode, and the parts shared
 * with the cqf), through amq/filter.h ("qf", "cqf") and the calls of
 * amq/quotient.h, against trivially-correct models:
 *   - select in a word: PDEP/TZCNT against the portable scan;
 *   - random insert / remove / count / enumerate against an exact multiset
 *     of fingerprints, many seeds, widths 1..60, power-of-two and other
 *     slot counts, with a full invariant check (amq__qf_check) as it goes;
 *   - AMQ_ERR_FULL leaves the filter as it was;
 *   - saturated 8-bit offsets (one huge cluster) stay correct;
 *   - merge = multiset union, and equals the filter built by inserts;
 *     amq_qf_merge's refusals and the hasher it gives the new filter;
 *   - views refuse the counted updates and resize;
 *   - resize keeps every key's count and fingerprint;
 *   - batch contains = scalar contains; the batch insert = the loop of
 *     inserts (same bytes, stops at the first FULL);
 *   - concurrent mode from one thread, with clusters past the lock window
 *     (qf_model.h: test_windows); the threads themselves are in
 *     test_qf_threads.c.
 * Every random run also drives a twin filter on the other code paths
 * (fast word-level moves and block-local lookups vs the scalar reference)
 * and requires byte-identical tables.
 * The multiset is kept over fingerprints, since keys with one fingerprint
 * are one key to the filter.
 */
#include "check.h"

#include <stdlib.h>
#include <string.h>

#include "amq/quotient.h"
#include "qf_model.h" /* with the internal hooks of fingerprint/qf_impl.h */

/* ---- select -------------------------------------------------------------- */

static void test_select(void) {
    uint64_t rng = 11, bad = 0;
    check_seed = 11;
    bool pdep = amq__qf_have_pdep();
    for (int t = 0; t < 20000; t++) {
        uint64_t x = check_next(&rng);
        if (t % 3 == 1)
            x &= check_next(&rng) & check_next(&rng); /* sparse words */
        if (t == 0)
            x = ~0ULL;
        unsigned pc = (unsigned)__builtin_popcountll(x);
        for (unsigned k = 0; k <= pc && k < 64; k++) {
            uint64_t s = amq__qf_select64_scalar(x, k), want = 64, y = x;
            for (unsigned j = 0; j < k && y; j++)
                y &= y - 1;
            if (y)
                want = (uint64_t)__builtin_ctzll(y);
            bad += s != want;
            if (pdep && k < pc)
                bad += amq__qf_select64_pdep(x, k) != want;
        }
    }
    CHECK_MSG(bad == 0, "%llu select mismatches (pdep %d)",
              (unsigned long long)bad, pdep);
}

/* Fill until refused: every refusal leaves the filter as it was, and the
 * filter reaches at least the 95% load it is sized for. */
static void test_fill(void) {
    unsigned seeds = check_quick() ? 3 : 20;
    for (unsigned s = 0; s < seeds; s++) {
        amq_filter *f = NULL;
        uint64_t rng = 300 + s, refused = 0, bad = 0;
        check_seed = 300 + s;
        CHECK_OK(amq_filter_new("qf", 1000, 0.01, NULL, &f, NULL));
        if (f == NULL)
            return;
        uint64_t first_full = 0;
        for (uint64_t i = 0; i < 2000 && refused < 20; i++) {
            snapshot s0 = snap(f);
            amq_status st = amq_filter_add_hash(f, check_next(&rng));
            if (st != AMQ_OK) {
                if (refused++ == 0)
                    first_full = amq_filter_items(f);
                bad += st != AMQ_ERR_FULL || !same_snap(s0, snap(f));
            }
        }
        CHECK_MSG(bad == 0 && amq__qf_check(qf(f)) == AMQ_OK,
                  "refusals changed "
                  "the filter");
        CHECK_MSG(refused > 0 && first_full >= 1000,
                  "first FULL at %llu "
                  "items (capacity 1000)",
                  (unsigned long long)first_full);
        amq_filter_free(f);
    }
}

static void test_merge_full(void) {
    amq_filter *a = NULL, *b = NULL, *u = NULL;
    check_seed = 550;
    CHECK_OK(make(false, 64, 8, 0, &a));
    CHECK_OK(make(false, 64, 8, 0, &b));
    if (a == NULL || b == NULL)
        goto out;
    fill_random(a, NULL, 551, 100, 1u << 30);
    fill_random(b, NULL, 552, 100, 1u << 30);
    snapshot s0 = snap(a);
    CHECK_STATUS(amq_qf_merge(a, b, NULL, &u), AMQ_ERR_FULL);
    CHECK(u == NULL);
    CHECK_STATUS(amq_filter_union(a, b), AMQ_ERR_FULL);
    CHECK(same_snap(s0, snap(a)) && amq__qf_check(qf(a)) == AMQ_OK);
out:
    amq_filter_free(a);
    amq_filter_free(b);
}

/* ---- batch --------------------------------------------------------------- */

static void test_batch(void) {
    amq_filter *f = NULL;
    uint64_t rng = 900;
    enum { M = 5000 };
    static uint64_t h[M];
    static uint8_t out[M];
    check_seed = 900;
    CHECK_OK(amq_filter_new("qf", 4000, 0.05, NULL, &f, NULL));
    if (f == NULL)
        return;
    for (int i = 0; i < M; i++)
        h[i] = check_next(&rng);
    for (int i = 0; i < 3800; i++)
        CHECK_OK(amq_filter_add_hash(f, h[2 * (i % 2500) + (i >= 2500)]));
    size_t bad = 0;
    for (size_t len = 0; len < 40; len++) {
        amq_filter_contains_batch(f, h + len, M - len, out);
        for (size_t i = 0; i < M - len; i++)
            bad += out[i] != amq_filter_contains_hash(f, h[len + i]);
    }
    CHECK_MSG(bad == 0, "batch differs on %zu", bad);
    amq_filter_free(f);
}

/* The batch insert is the loop of inserts: same bytes, and it stops at
 * the first FULL with the keys before it inserted. */
static void test_insert_batch(void) {
    enum { M = 3000 };
    static uint64_t h[M];
    uint64_t rng = 910;
    check_seed = 910;
    for (int i = 0; i < M; i++)
        h[i] = check_next(&rng);
    for (int mode = 0; mode < 3; mode++) {
        uint32_t flags = mode == 1   ? AMQ_OPT_SCALAR
                         : mode == 2 ? AMQ_OPT_CONCURRENT
                                     : 0u;
        amq_filter *f = NULL, *g = NULL;
        size_t done = 99, seq = 0;
        CHECK_OK(make(mode == 2, 2048, 8, flags, &f));
        CHECK_OK(make(mode == 2, 2048, 8, 0, &g));
        if (f == NULL || g == NULL) {
            amq_filter_free(f);
            amq_filter_free(g);
            return;
        }
        CHECK_OK(amq_filter_add_batch(f, h, 0, &done));
        CHECK(done == 0);
        CHECK_STATUS(amq_filter_add_batch(f, NULL, 1, &done), AMQ_ERR_INVALID);
        CHECK_STATUS(amq_filter_add_batch(NULL, h, 1, NULL), AMQ_ERR_INVALID);
        CHECK_OK(amq_filter_add_batch(f, h, 1000, NULL));
        CHECK_STATUS(amq_filter_add_batch(f, h + 1000, M - 1000, &done),
                     AMQ_ERR_FULL);
        while (seq < M && amq_filter_add_hash(g, h[seq]) == AMQ_OK)
            seq++;
        CHECK_MSG(done + 1000 == seq && amq_filter_items(f) == seq,
                  "batch stopped after %zu, the loop after %zu", done + 1000,
                  seq);
        CHECK(same_table(f, g) && amq__qf_check(qf(f)) == AMQ_OK);
        amq_filter_free(f);
        amq_filter_free(g);
    }
}

/* Shapes the spec refuses (AMQ_ERR_SPEC: slots not a multiple of 64 or
 * below 64, r outside 1..58, cqf r = 1), one too large for a 64-bit hash
 * (AMQ_ERR_OVERFLOW), a target without capacity (AMQ_ERR_INVALID); and
 * the sizing from a target. */
static void test_shapes(void) {
    amq_filter *f = NULL;
    CHECK_STATUS(make(false, 100, 8, 0, &f), AMQ_ERR_SPEC);
    CHECK_STATUS(make(false, 0, 8, 0, &f), AMQ_ERR_SPEC);
    CHECK_STATUS(make(false, 64, 0, 0, &f), AMQ_ERR_SPEC);
    CHECK_STATUS(make(false, 64, 59, 0, &f), AMQ_ERR_SPEC);
    CHECK_STATUS(make(true, 64, 1, 0, &f), AMQ_ERR_SPEC);
    CHECK_STATUS(make(false, UINT64_C(1) << 20, 50, 0, &f), AMQ_ERR_OVERFLOW);
    CHECK_STATUS(amq_filter_new("qf", 0, 0.01, NULL, &f, NULL),
                 AMQ_ERR_INVALID);
    CHECK(f == NULL);
    CHECK_OK(amq_filter_new("qf", 1000, 0.01, NULL, &f, NULL));
    if (f != NULL) {
        CHECK(amq_qf_rbits(qf(f)) == 7 && amq_qf_slots(qf(f)) == 1088);
        CHECK(amq_qf_table_slots(qf(f)) == 1088 + 128);
        /* 2.125 metadata bits per slot: (17 + 8 r) bytes per 64 slots. */
        CHECK(amq_filter_size_bytes(f) == (1216 / 64) * (17 + 8 * 7));
        CHECK(amq_qf_metadata_bits_per_slot() == 2.125);
        CHECK(amq_filter_fpr_bound(f) == 0.0);
    }
    amq_filter_free(f);
}

/* amq_qf_merge's refusals: NULL arguments and filters of other types
 * (INVALID), the other mode or another hasher (INCOMPATIBLE); the new
 * filter has the inputs' hasher, so byte keys hash as they did. */
static void test_merge_filters(void) {
    amq_filter *a = NULL, *b = NULL, *c = NULL, *s = NULL, *u = NULL;
    amq_filter *bloom = NULL;
    amq_options seeded;
    memset(&seeded, 0, sizeof seeded);
    seeded.hash_seed = 7;
    check_seed = 560;
    CHECK_OK(amq_filter_new("qf:q=8,r=8", 0, 0, &seeded, &a, NULL));
    CHECK_OK(amq_filter_new("qf:q=8,r=8", 0, 0, &seeded, &b, NULL));
    CHECK_OK(amq_filter_new("cqf:q=8,r=8", 0, 0, &seeded, &c, NULL));
    CHECK_OK(amq_filter_new("qf:q=8,r=8", 0, 0, NULL, &s, NULL));
    CHECK_OK(amq_filter_new("bloom", 100, 0.01, NULL, &bloom, NULL));
    if (a == NULL || b == NULL || c == NULL || s == NULL || bloom == NULL)
        goto out;
    CHECK_OK(amq_filter_add(a, "left", 4));
    CHECK_OK(amq_filter_add(b, "right", 5));
    CHECK_STATUS(amq_qf_merge(a, b, NULL, NULL), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_qf_merge(NULL, b, NULL, &u), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_qf_merge(a, bloom, NULL, &u), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_qf_merge(a, c, NULL, &u), AMQ_ERR_INCOMPATIBLE);
    CHECK_STATUS(amq_qf_merge(a, s, NULL, &u), AMQ_ERR_INCOMPATIBLE);
    CHECK(u == NULL);
    CHECK_OK(amq_qf_merge(a, b, NULL, &u));
    if (u != NULL) {
        CHECK(amq_filter_hasher(u)->seed == 7 && amq_filter_items(u) == 2);
        CHECK(amq_filter_contains(u, "left", 4));
        CHECK(amq_filter_contains(u, "right", 5));
        CHECK(strcmp(amq_filter_info(u)->name, "qf") == 0);
    }
out:
    amq_filter_free(a);
    amq_filter_free(b);
    amq_filter_free(c);
    amq_filter_free(s);
    amq_filter_free(bloom);
    amq_filter_free(u);
}

/* A view's table is the caller's read-only buffer: the counted updates
 * and resize refuse it (AMQ_ERR_UNSUPPORTED) and change nothing; merging
 * views, which only reads them, works. */
static void test_views(void) {
    for (int counting = 0; counting < 2; counting++) {
        amq_filter *f = NULL, *v = NULL, *u = NULL;
        size_t len = 0;
        check_seed = 570 + (uint64_t)counting;
        CHECK_OK(make(counting, 1024, 8, 0, &f));
        if (f == NULL)
            return;
        fill_random(f, NULL, 571, 300, 1u << 20);
        uint8_t *buf = check_frame(f, &len), *copy = malloc(len);
        if (buf == NULL || copy == NULL ||
            amq_filter_view(buf, len, NULL, &v, NULL) != AMQ_OK) {
            CHECK(false);
            goto out;
        }
        memcpy(copy, buf, len);
        CHECK(amq_filter_is_view(v) && qf(v) != NULL);
        CHECK_STATUS(amq_cqf_insert(qf(v), 12345, 1), AMQ_ERR_UNSUPPORTED);
        CHECK_STATUS(amq_cqf_remove(qf(v), 12345, 1), AMQ_ERR_UNSUPPORTED);
        CHECK_STATUS(amq_qf_resize(qf(v)), AMQ_ERR_UNSUPPORTED);
        CHECK(memcmp(buf, copy, len) == 0 && same_table(f, v));
        CHECK_OK(amq_qf_merge(v, v, NULL, &u));
        if (u != NULL)
            CHECK(amq_filter_items(u) == 2 * amq_filter_items(f) &&
                  amq_qf_distinct(qf(u)) == amq_qf_distinct(qf(f)));
    out:
        amq_filter_free(u);
        amq_filter_free(v);
        amq_filter_free(f);
        free(buf);
        free(copy);
    }
}

int main(void) {
    test_select();
    test_shapes();
    test_models(false);
    test_big_cluster(false);
    test_windows(false);
    test_fill();
    test_merge(false);
    test_merge_full();
    test_resize(false);
    test_batch();
    test_insert_batch();
    test_merge_filters();
    test_views();
    return check_report("test_quotient");
}
