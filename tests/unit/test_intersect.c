/*
 * test_intersect.c — what an intersection promises, for every type that
 * intersects: every key of both inputs answers; a key in only one input
 * passes at a rate within its certified bound (the larger input's, not
 * the AND table's own); keys in neither pass within the tighter bound
 * amq_filter_is_intersection reports; the bound survives a frame round
 * trip byte for byte; an intersection takes no keys and no union; and a
 * damaged bound field is refused.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/bits.h"
#include "core/frame.h"

enum { N = 20000, PROBES = 200000 };

/* Keys lo..hi-1 as hashes of their index (one stream of "keys"). */
static uint64_t key_hash(uint64_t i) {
    uint64_t s = i * 0x9e3779b97f4a7c15ULL + 7;
    return check_next(&s);
}

static amq_filter *make(const char *spec, uint64_t lo, uint64_t hi) {
    amq_filter *f = NULL;
    CHECK_OK(amq_filter_new(spec, N, 0.01, NULL, &f, NULL));
    for (uint64_t i = lo; f != NULL && i < hi; i++)
        CHECK_OK(amq_filter_add_hash(f, key_hash(i)));
    return f;
}

/* Fraction of keys lo..lo+n-1 that f reports. */
static double rate(const amq_filter *f, uint64_t lo, uint64_t n) {
    uint64_t hits = 0;
    for (uint64_t i = lo; i < lo + n; i++)
        hits += amq_filter_contains_hash(f, key_hash(i));
    return (double)hits / (double)n;
}

/* The measured rate of n trials is within its bound: at most the bound
 * plus five standard deviations (and a few counts for tiny bounds). */
static bool within(double measured, double bound, uint64_t n) {
    double sd = sqrt(bound * (1 - bound) / (double)n);
    return measured <= bound + 5 * sd + 3.0 / (double)n;
}

/* A is keys [0, N), over-filled 2x so its rate is high; B is [N/2, N/2+N/4)
 * at its design load. A key of A outside B then passes at A-and-B's rate
 * only where B's probes are set: B's rate. */
static void one_type(const char *spec) {
    check_seed = 11;
    amq_filter *a = make(spec, 0, 2 * N);
    amq_filter *b = make(spec, N / 2, N / 2 + N / 4);
    if (a == NULL || b == NULL) {
        amq_filter_free(a);
        amq_filter_free(b);
        return;
    }
    double ba = amq_filter_fpr_bound(a), bb = amq_filter_fpr_bound(b);
    double none = -1;
    CHECK(!amq_filter_is_intersection(a, &none) && none == -1);
    CHECK_OK(amq_filter_intersect(a, b));
    CHECK(amq_filter_is_intersection(a, &none));
    double bound = amq_filter_fpr_bound(a);
    CHECK_MSG(bound == fmax(ba, bb), "%s: bound %g, inputs %g and %g", spec,
              bound, ba, bb);
    CHECK(none >= 0 && none <= bound);

    /* No false negative inside the intersection. */
    CHECK(rate(a, N / 2, N / 4) == 1.0);
    /* In B only: none (B's keys are all in A). In A only: keys [0, N/2)
     * and [3N/4, 2N), which pass at about B's rate. */
    double in_a = rate(a, 0, N / 2);
    CHECK_MSG(within(in_a, bound, N / 2), "%s: keys in A only pass %g > %g",
              spec, in_a, bound);
    /* Keys in neither input, at the AND table's rate. */
    double neither = rate(a, 10 * N, PROBES);
    CHECK_MSG(within(neither, none, PROBES), "%s: keys in neither pass %g > %g",
              spec, neither, none);

    /* Final: no keys, no union; caps say so. */
    uint32_t caps = amq_filter_caps(a);
    CHECK((caps & AMQ_CAP_STATIC) && !(caps & AMQ_CAP_UNION));
    uint64_t items = amq_filter_items(a);
    CHECK_STATUS(amq_filter_add_hash(a, key_hash(5 * N)), AMQ_ERR_UNSUPPORTED);
    size_t done = 9;
    uint64_t h = key_hash(5 * N);
    CHECK_STATUS(amq_filter_add_batch(a, &h, 1, &done), AMQ_ERR_UNSUPPORTED);
    CHECK(done == 0 && amq_filter_items(a) == items);
    CHECK_STATUS(amq_filter_union(a, b), AMQ_ERR_UNSUPPORTED);
    CHECK_STATUS(amq_filter_union(b, a), AMQ_ERR_UNSUPPORTED);

    /* The frame keeps the bound; load and re-save give the same bytes. */
    size_t len = 0;
    uint8_t *frame = check_frame(a, &len);
    amq_filter *c = NULL;
    if (frame != NULL) {
        CHECK(amq__get_u32(frame + AMQ__FRAME_OFF_INCOMPAT) ==
              AMQ__FRAME_INCOMPAT_INTERSECTION);
        CHECK_OK(amq_filter_load(frame, len, NULL, &c, NULL));
    }
    if (c != NULL) {
        CHECK(amq_filter_fpr_bound(c) == bound);
        CHECK(amq_filter_is_intersection(c, NULL));
        size_t len2 = 0;
        uint8_t *again = check_frame(c, &len2);
        CHECK(again != NULL && len2 == len && memcmp(frame, again, len) == 0);
        free(again);
        /* Intersecting again keeps the largest bound. */
        amq_filter *d = make(spec, N / 2, N / 2 + 100);
        if (d != NULL) {
            double bd = amq_filter_fpr_bound(d);
            CHECK_OK(amq_filter_intersect(c, d));
            CHECK(amq_filter_fpr_bound(c) == fmax(bound, bd));
            CHECK(rate(c, N / 2, 100) == 1.0);
        }
        amq_filter_free(d);
    }
    amq_filter_free(c);

    /* A bound outside (0, 1] is refused, however well sealed. */
    if (frame != NULL) {
        uint8_t *bad = malloc(len);
        const double wrong[] = {0.0, -0.5, 1.5, NAN};
        for (size_t i = 0; bad != NULL && i < 4; i++) {
            memcpy(bad, frame, len);
            amq__put_f64(bad + AMQ__FRAME_OFF_PARAMS + 16, wrong[i]);
            amq__frame_seal(bad, len);
            amq_diag d;
            memset(&d, 0, sizeof d);
            CHECK_STATUS(amq_filter_load(bad, len, NULL, &c, &d),
                         AMQ_ERR_CORRUPT);
            CHECK(strstr(d.message, "intersection") != NULL);
        }
        free(bad);
    }
    free(frame);
    amq_filter_free(a);
    amq_filter_free(b);
}

/* A type that cannot intersect refuses a frame claiming to be one. */
static void not_an_intersection(void) {
    amq_filter *f = NULL;
    CHECK_OK(amq_filter_new("cuckoo", 100, 0.01, NULL, &f, NULL));
    size_t len = 0;
    uint8_t *frame = f ? check_frame(f, &len) : NULL;
    if (frame != NULL) {
        /* The 24-byte generic block: capacity, target, a bound of 0.5; the
         * type's fields then start 8 bytes later, so rebuild the frame. */
        size_t plen = amq__get_u32(frame + AMQ__FRAME_OFF_PARAMS_LEN) + 8;
        uint64_t llen = amq__get_u64(frame + AMQ__FRAME_OFF_PAYLOAD_LEN);
        size_t off = 0, total = amq__frame_size(plen, (size_t)llen, &off);
        size_t old_off = 0;
        (void)amq__frame_size(plen - 8, (size_t)llen, &old_off);
        uint8_t *g = calloc(1, total);
        uint8_t *params, *payload;
        amq_hasher h = *amq_filter_hasher(f);
        if (g != NULL) {
            amq__frame_begin(g, total, 100, &h,
                             AMQ__FRAME_INCOMPAT_INTERSECTION, plen,
                             (size_t)llen, &params, &payload);
            memcpy(params, frame + AMQ__FRAME_OFF_PARAMS, 16);
            amq__put_f64(params + 16, 0.5);
            memcpy(params + 24, frame + AMQ__FRAME_OFF_PARAMS + 16, plen - 24);
            memcpy(payload, frame + old_off, (size_t)llen);
            amq__frame_seal(g, total);
            amq_filter *x = NULL;
            amq_diag d;
            memset(&d, 0, sizeof d);
            CHECK_STATUS(amq_filter_load(g, total, NULL, &x, &d),
                         AMQ_ERR_CORRUPT);
            CHECK_MSG(strstr(d.message, "cannot be an intersection"), "%s",
                      d.message);
            amq_filter_free(x);
        }
        free(g);
    }
    free(frame);
    amq_filter_free(f);
}

int main(void) {
    size_t tested = 0;
    for (size_t i = 0; i < amq_filter_type_count(); i++) {
        const amq_type_info *ti = amq_filter_type_at(i);
        if (ti->caps & AMQ_CAP_INTERSECT) {
            one_type(ti->name);
            tested++;
        }
    }
    CHECK(tested >= 5); /* bloom, blocked, sbbf, partitioned, compressed */
    not_an_intersection();
    return check_report("test_intersect");
}
