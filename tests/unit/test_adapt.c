/*
 * test_adapt.c — the adaptive quotient filter (aqf): a reported false
 * positive is answered "no" from then on, a member never is (through
 * reports, adds and removes in any order), a report of a member is refused
 * and changes nothing, a failed allocation changes nothing, the records
 * survive save/load and views, and on a Zipf(1.1) stream of absent keys
 * with repeats no false positive repeats and the total rate falls to a
 * tenth of the plain qf's at the same shape.
 */
#include "check.h"
#include "frame_bytes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/bits.h"
#include "core/frame.h"

/* Members are hashes mix64(1..n); absent keys mix64(2^40 + i). */
static uint64_t member(uint64_t i) { return amq__mix64(i + 1); }
static uint64_t absent(uint64_t i) { return amq__mix64((1ull << 40) + i); }

static void test_report_fixes(void) {
    amq_filter *f = NULL;
    CHECK_OK(amq_filter_new("aqf", 2500, 0.05, NULL, &f, NULL));
    CHECK((amq_filter_caps(f) & AMQ_CAP_ADAPT) != 0);
    for (uint64_t i = 0; i < 2000; i++)
        CHECK_OK(amq_filter_add_hash(f, member(i)));
    uint64_t fps = 0, fixed_n = 0;
    for (uint64_t i = 0; i < 100000; i++) {
        uint64_t y = absent(i);
        bool fixed = false;
        if (!amq_filter_contains_hash(f, y))
            continue;
        fps++;
        CHECK_OK(amq_filter_report_fp_hash(f, y, &fixed));
        CHECK(fixed);
        fixed_n += fixed;
        CHECK_MSG(!amq_filter_contains_hash(f, y), "key %llu still passes",
                  (unsigned long long)i);
        bool again = true;
        CHECK_OK(amq_filter_report_fp_hash(f, y, &again));
        CHECK(!again); /* already answered "no": nothing to do */
    }
    CHECK(fps > 1000); /* about 5% of 100000 */
    for (uint64_t i = 0; i < 2000; i++)
        CHECK(amq_filter_contains_hash(f, member(i)));
    /* every reported key stays fixed */
    uint64_t back = 0;
    for (uint64_t i = 0; i < 100000; i++)
        back += amq_filter_contains_hash(f, absent(i));
    CHECK_MSG(back == 0, "%llu reported keys pass again",
              (unsigned long long)back);
    amq_adapt_stats s;
    CHECK_OK(amq_filter_adapt_stats(f, &s));
    CHECK(s.reports == fixed_n);
    CHECK(s.records >= s.extended && s.extended > 0);
    CHECK(s.map_bytes >= 9 * 2000);
    CHECK(amq_filter_size_bytes(f) >= s.extension_bytes);

    /* members added in a batch after the reports: all of them pass, and
     * a new member of an extended fingerprint gets a record */
    uint64_t more[500];
    size_t done = 0;
    for (uint64_t i = 0; i < 500; i++)
        more[i] = member(5000 + i);
    CHECK_OK(amq_filter_add_batch(f, more, 500, &done));
    CHECK(done == 500);
    for (uint64_t i = 0; i < 500; i++)
        CHECK(amq_filter_contains_hash(f, more[i]));
    for (uint64_t i = 0; i < 2000; i++)
        CHECK(amq_filter_contains_hash(f, member(i)));
    amq_adapt_stats s2;
    CHECK_OK(amq_filter_adapt_stats(f, &s2));
    CHECK(s2.records >= s.records);
    for (uint64_t i = 0; i < 500; i++)
        CHECK_OK(amq_filter_remove_hash(f, more[i]));
    CHECK(amq_filter_items(f) == 2000);

    /* a member's report is refused and changes nothing */
    size_t len;
    uint8_t *before = save(f, &len);
    bool fx = true;
    CHECK(amq_filter_report_fp_hash(f, member(7), &fx) == AMQ_ERR_INVALID);
    CHECK(same_bytes(f, before, len));

    /* round trip: copy and view answer alike and save the same bytes */
    amq_filter *g = NULL, *v = NULL;
    CHECK_OK(amq_filter_load(before, len, NULL, &g, NULL));
    CHECK_OK(amq_filter_view(before, len, NULL, &v, NULL));
    CHECK(g != NULL && v != NULL && same_bytes(g, before, len));
    for (uint64_t i = 0; g != NULL && v != NULL && i < 100000; i++) {
        bool a = amq_filter_contains_hash(f, absent(i));
        CHECK(amq_filter_contains_hash(g, absent(i)) == a);
        CHECK(amq_filter_contains_hash(v, absent(i)) == a);
    }
    if (v != NULL)
        CHECK(amq_filter_report_fp_hash(v, absent(1), NULL) ==
              AMQ_ERR_READONLY);
    amq_filter_free(g);
    amq_filter_free(v);
    free(before);
    amq_filter_free(f);

    /* not adaptive */
    CHECK_OK(amq_filter_new("qf", 100, 0.01, NULL, &f, NULL));
    CHECK(amq_filter_report_fp_hash(f, 1, NULL) == AMQ_ERR_UNSUPPORTED);
    CHECK(amq_filter_adapt_stats(f, &s) == AMQ_ERR_UNSUPPORTED);
    amq_filter_free(f);
}

/* A model: members with multiplicities, random adds, removes and
 * reports; no member is ever answered "no", counts never undercount, and
 * a key reported is answered "no" right after. A small table with few
 * remainder bits makes collisions and shared fingerprints common. */
static void test_model(void) {
    enum { KEYS = 600, STEPS = 40000 };
    static unsigned copies[KEYS];
    amq_filter *f = NULL;
    uint64_t rng = 12345;
    memset(copies, 0, sizeof copies);
    CHECK_OK(amq_filter_new("aqf:slots=1024,r=3", 0, 0, NULL, &f, NULL));
    for (int s = 0; f != NULL && s < STEPS; s++) {
        rng = amq__mix64(rng);
        unsigned k = (unsigned)(rng % KEYS), op = (unsigned)(rng >> 40) % 4;
        uint64_t h = member(k);
        if (op == 0 && copies[k] < 3) {
            amq_status st = amq_filter_add_hash(f, h);
            CHECK(st == AMQ_OK || st == AMQ_ERR_FULL);
            copies[k] += st == AMQ_OK;
        } else if (op == 1) {
            amq_status st = amq_filter_remove_hash(f, h);
            CHECK(st == (copies[k] ? AMQ_OK : AMQ_ERR_NOT_FOUND));
            copies[k] -= copies[k] && st == AMQ_OK;
        } else if (copies[k] == 0 && amq_filter_contains_hash(f, h)) {
            bool fixed = false;
            CHECK_OK(amq_filter_report_fp_hash(f, h, &fixed));
            CHECK(fixed && !amq_filter_contains_hash(f, h));
        }
        if (s % 97 == 0)
            for (unsigned i = 0; i < KEYS; i++) {
                uint64_t c = 0;
                CHECK_OK(amq_filter_count_hash(f, member(i), &c));
                CHECK_MSG(
                    c >= copies[i] &&
                        (!copies[i] || amq_filter_contains_hash(f, member(i))),
                    "step %d key %u: count %llu, %u copies", s, i,
                    (unsigned long long)c, copies[i]);
            }
    }
    uint64_t total = 0;
    for (unsigned i = 0; i < KEYS; i++)
        total += copies[i];
    CHECK(amq_filter_items(f) == total);
    /* the filter reads back whole: records, map and table agree */
    size_t len;
    uint8_t *buf = save(f, &len);
    amq_filter *g = NULL;
    CHECK_OK(amq_filter_load(buf, len, NULL, &g, NULL));
    for (unsigned i = 0; g != NULL && i < KEYS; i++)
        CHECK(!copies[i] || amq_filter_contains_hash(g, member(i)));
    amq_filter_free(g);
    free(buf);
    amq_filter_free(f);
}

static void test_oom(void) {
    amq_options opt;
    memset(&opt, 0, sizeof opt);
    opt.allocator = &failing_allocator;
    amq_filter *f = NULL;
    CHECK_OK(amq_filter_new("aqf", 500, 0.1, &opt, &f, NULL));
    for (uint64_t i = 0; i < 500; i++)
        CHECK_OK(amq_filter_add_hash(f, member(i)));
    int refused = 0;
    for (uint64_t i = 0; f != NULL && i < 20000; i++) {
        uint64_t y = absent(i);
        if (!amq_filter_contains_hash(f, y))
            continue;
        size_t len;
        uint8_t *before = save(f, &len);
        fail_left = 0;
        amq_status st = amq_filter_report_fp_hash(f, y, NULL);
        fail_left = -1;
        if (st == AMQ_ERR_NOMEM) {
            refused++;
            CHECK(same_bytes(f, before, len));
            CHECK(amq_filter_contains_hash(f, y));
            CHECK_OK(amq_filter_report_fp_hash(f, y, NULL));
        } else {
            CHECK_OK(st);
        }
        CHECK(!amq_filter_contains_hash(f, y));
        free(before);
    }
    CHECK(refused > 0); /* the first report and each growth need memory */
    amq_filter_free(f);
    /* adds with no memory: one that needs a larger reverse map is refused
     * and changes nothing; the next, with memory, goes in */
    CHECK_OK(amq_filter_new("aqf", 2000, 0.1, &opt, &f, NULL));
    refused = 0;
    for (uint64_t i = 0; f != NULL && i < 2000; i++)
        refused += add_without_memory(f, member(i));
    CHECK(refused >= 5); /* the map doubles from 16 slots to 4096 */
    for (uint64_t i = 0; f != NULL && i < 2000; i++)
        CHECK(amq_filter_contains_hash(f, member(i)));
    amq_filter_free(f);
}

/* Zipf(s) ranks over u keys by inversion of the continuous CDF: rank k
 * with probability about k^-s / H. */
static uint64_t zipf(uint64_t *rng, uint64_t u, double s) {
    *rng = amq__mix64(*rng);
    double x = (double)(*rng >> 11) * 0x1p-53;
    double a = 1.0 - s, top = pow((double)u + 1.0, a) - 1.0;
    double k = pow(1.0 + x * top, 1.0 / a);
    uint64_t r = (uint64_t)k;
    return r >= 1 && r <= u ? r - 1 : u - 1;
}

static void test_zipf(void) {
    enum { N = 1 << 16, U = 1 << 15, Q = 1000000 };
    amq_filter *qf = NULL, *aqf = NULL;
    CHECK_OK(amq_filter_new("qf", N, 0.01, NULL, &qf, NULL));
    CHECK_OK(amq_filter_new("aqf", N, 0.01, NULL, &aqf, NULL));
    for (uint64_t i = 0; i < N; i++) {
        CHECK_OK(amq_filter_add_hash(qf, member(i)));
        CHECK_OK(amq_filter_add_hash(aqf, member(i)));
    }
    uint8_t *seen = calloc(U, 1); /* bit 0: asked; bit 1: was a FP */
    uint64_t rng = 99, fp_q = 0, fp_a = 0, repeats = 0;
    for (uint64_t i = 0; seen != NULL && i < Q; i++) {
        uint64_t k = zipf(&rng, U, 1.1), y = absent(k);
        fp_q += amq_filter_contains_hash(qf, y);
        if (amq_filter_contains_hash(aqf, y)) {
            fp_a++;
            repeats += (seen[k] & 2) != 0;
            seen[k] |= 2;
            CHECK_OK(amq_filter_report_fp_hash(aqf, y, NULL));
        }
    }
    CHECK_MSG(repeats == 0, "%llu repeated false positives",
              (unsigned long long)repeats);
    CHECK_MSG(fp_a * 10 <= fp_q, "adaptive %llu, plain %llu false positives",
              (unsigned long long)fp_a, (unsigned long long)fp_q);
    for (uint64_t i = 0; i < N; i++)
        CHECK(amq_filter_contains_hash(aqf, member(i)));
    free(seen);
    amq_filter_free(qf);
    amq_filter_free(aqf);
}

/* Side tables a crafted frame gets wrong are refused at their bytes. */
static void test_corrupt(void) {
    amq_filter *f = NULL;
    CHECK_OK(amq_filter_new("aqf", 300, 0.1, NULL, &f, NULL));
    for (uint64_t i = 0; i < 300; i++)
        CHECK_OK(amq_filter_add_hash(f, member(i)));
    for (uint64_t i = 0; i < 5000; i++)
        if (amq_filter_contains_hash(f, absent(i)))
            CHECK_OK(amq_filter_report_fp_hash(f, absent(i), NULL));
    size_t len;
    uint8_t *buf = save(f, &len);
    amq_filter_free(f);
    /* the payload's last bytes are the map's lengths: one made 200 */
    amq__frame fr;
    CHECK_OK(amq__frame_parse(buf, len, AMQ__FRAME_INCOMPAT_INTERSECTION, &fr,
                              NULL));
    size_t at = (size_t)(fr.payload - buf) + fr.payload_len - 1;
    while (at > 0 && buf[at] == 0xff)
        at--;
    uint8_t old = buf[at];
    buf[at] = 200;
    amq__frame_seal(buf, len);
    amq_diag d;
    memset(&d, 0, sizeof d);
    CHECK(amq_filter_load(buf, len, NULL, &f, &d) == AMQ_ERR_CORRUPT);
    buf[at] = old;
    amq__frame_seal(buf, len);
    CHECK_OK(amq_filter_load(buf, len, NULL, &f, NULL));
    amq_filter_free(f);
    free(buf);
}

int main(void) {
    test_report_fixes();
    test_model();
    test_oom();
    test_zipf();
    test_corrupt();
    return check_report("test_adapt");
}
