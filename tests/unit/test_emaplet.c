/*
 * test_emaplet.c — the expandable maplet ("emaplet"): against a model map
 * of puts and (sum) deletes while it grows from one block through void
 * entries and widenings, every held key answers with a value no smaller
 * than the model's in the operator's order, a frame reloads to the same
 * bytes, and the item count is the model's; keys never put are found at
 * most at the bound's rate; values survive ten doublings exactly but for
 * collisions; bad calls leave it unchanged.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "amq/amq.h"
#include "check.h"

enum { U = 3000 };

static amq_maplet *mk(const char *spec, uint64_t cap, double fpr) {
    amq_maplet *m = NULL;
    amq_diag d;
    amq_status st = amq_maplet_new(spec, cap, fpr, NULL, &m, &d);
    CHECK_MSG(st == AMQ_OK, "%s: %s", spec, d.message);
    return m;
}

/* got answers for want in op's order: no smaller. */
static bool covers(amq_maplet_op op, uint64_t got, uint64_t want) {
    switch (op) {
    case AMQ_MAPLET_SUM:
    case AMQ_MAPLET_MAX: return got >= want;
    case AMQ_MAPLET_MIN: return got <= want;
    default: return (got & want) == want;
    }
}

static amq_maplet *reload(const amq_maplet *m) {
    size_t len;
    uint8_t *buf = check_frame(m, &len);
    amq_filter *g = NULL;
    amq_diag d;
    CHECK_OK(amq_filter_load(buf, len, NULL, &g, &d));
    CHECK(g != NULL && check_same_frame(m, g));
    free(buf);
    return g;
}

static void run_model(const char *spec, amq_maplet_op op, unsigned vbits,
                      uint64_t seed) {
    uint64_t *h = malloc(U * sizeof *h), *val = calloc(U, sizeof *val);
    bool *held = calloc(U, sizeof *held);
    uint64_t rng = seed, weight = 0, vm = (UINT64_C(1) << vbits) - 1;
    amq_maplet *m = mk(spec, 0, 0);
    for (size_t i = 0; i < U; i++)
        h[i] = check_next(&rng);
    unsigned steps = check_quick() ? 6000 : 20000;
    for (unsigned k = 1; k <= steps; k++) {
        size_t i = check_next(&rng) % U;
        uint64_t v = check_next(&rng) & vm;
        bool del = op == AMQ_MAPLET_SUM && held[i] && k % 3 == 0;
        if (del) {
            uint64_t d = 1 + check_next(&rng) % (val[i] < vm ? val[i] : vm);
            CHECK_OK(amq_maplet_delete_hash(m, h[i], d));
            val[i] -= d;
            held[i] = val[i] != 0;
            weight -= d;
        } else {
            if (op == AMQ_MAPLET_SUM && v == 0)
                continue;
            CHECK_OK(amq_maplet_put_hash(m, h[i], v));
            val[i] = !held[i]               ? v
                     : op == AMQ_MAPLET_SUM ? val[i] + v
                     : op == AMQ_MAPLET_MAX ? (val[i] > v ? val[i] : v)
                     : op == AMQ_MAPLET_MIN ? (val[i] < v ? val[i] : v)
                                            : val[i] | v;
            held[i] = true;
            weight += op == AMQ_MAPLET_SUM ? v : 1;
        }
        if (k % 2000 != 0 && k != steps)
            continue;
        uint64_t bad = 0;
        for (size_t j = 0; j < U; j++) {
            uint64_t got = 0;
            if (!held[j])
                continue;
            amq_status st = amq_maplet_get_hash(m, h[j], &got);
            if ((st != AMQ_OK || !covers(op, got, val[j])) && bad++ == 0)
                CHECK_MSG(false, "%s step %u key %zu: %s %llu, model %llu",
                          spec, k, j, amq_status_name(st),
                          (unsigned long long)got, (unsigned long long)val[j]);
        }
        CHECK_MSG(bad == 0, "%s step %u: %llu keys lost", spec, k,
                  (unsigned long long)bad);
        CHECK_MSG(amq_filter_items(m) == weight, "%s: items %llu, model %llu",
                  spec, (unsigned long long)amq_filter_items(m),
                  (unsigned long long)weight);
        amq_maplet *g = reload(m);
        amq_maplet_free(m);
        m = g;
    }
    /* keys never put: found at most at the bound's rate */
    size_t q = 200000, fp = 0;
    double bound = amq_filter_fpr_bound(m);
    for (size_t j = 0; j < q; j++) {
        uint64_t got;
        fp += amq_maplet_get_hash(m, check_next(&rng), &got) == AMQ_OK;
    }
    double mean = bound * (double)q;
    CHECK_MSG((double)fp <= mean + 4 * sqrt(mean) + 4,
              "%s: %zu of %zu, "
              "bound %g",
              spec, fp, q, bound);
    amq_maplet_free(m);
    free(h);
    free(val);
    free(held);
}

static void test_models(void) {
    static const struct {
        const char *spec;
        amq_maplet_op op;
        unsigned v;
    } cases[] = {
        {"emaplet:op=sum,v=8,slots=64,l=4,growth=0", AMQ_MAPLET_SUM, 8},
        {"emaplet:op=sum,v=3,slots=64,l=9", AMQ_MAPLET_SUM, 3},
        {"emaplet:op=max,v=8,slots=64,l=4,growth=0", AMQ_MAPLET_MAX, 8},
        {"emaplet:op=min,v=5,slots=64,l=6", AMQ_MAPLET_MIN, 5},
        {"emaplet:op=or,v=16,slots=64,l=3,growth=0", AMQ_MAPLET_OR, 16},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_model(cases[i].spec, cases[i].op, cases[i].v, 40 + i);
}

/* Values through ten doublings: distinct keys, max, every value back,
 * exact for all but the keys a collision shares. */
static void test_values(void) {
    enum { N = 60000 };
    amq_maplet *m = mk("emaplet:op=max,v=12", N / 1000, 0.01);
    uint64_t s = 8, *h = malloc(N * sizeof *h);
    for (size_t i = 0; i < N; i++) {
        h[i] = check_next(&s);
        CHECK_OK(amq_maplet_put_hash(m, h[i], i & 4095));
    }
    size_t exact = 0;
    for (size_t i = 0; i < N; i++) {
        uint64_t got = 0;
        CHECK_OK(amq_maplet_get_hash(m, h[i], &got));
        CHECK(got >= (i & 4095));
        exact += got == (i & 4095);
    }
    amq_maplet_shape sh;
    CHECK_OK(amq_maplet_get_shape(m, &sh));
    CHECK_MSG(sh.slots >= 64 * 1024 / 1000 * 1000, "%llu slots",
              (unsigned long long)sh.slots);
    /* a key shares its answer only with the keys its code matches: a
     * few per thousand at this bound */
    CHECK_MSG((double)exact >= 0.98 * N, "%zu of %d exact", exact, N);
    CHECK(amq_filter_fpr_bound(m) < 0.02);
    amq_maplet_free(m);
    free(h);
}

/* Refusals leave the bytes as they were. */
static void test_bad(void) {
    amq_maplet *m = mk("emaplet:op=sum,v=4", 100, 0.01);
    uint64_t s = 12, k1 = check_next(&s), k2 = check_next(&s),
             k3 = check_next(&s), got = 0;
    CHECK_OK(amq_maplet_put_hash(m, k1, 9));
    size_t len, len2;
    uint8_t *before = check_frame(m, &len);
    CHECK_STATUS(amq_maplet_put_hash(m, k2, 16), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_maplet_delete_hash(m, k1, 10), AMQ_ERR_NOT_FOUND);
    CHECK_STATUS(amq_maplet_delete_hash(m, k3, 1), AMQ_ERR_NOT_FOUND);
    CHECK_STATUS(amq_maplet_delete_hash(m, k1, 16), AMQ_ERR_INVALID);
    uint8_t *after = check_frame(m, &len2);
    CHECK(len == len2 && memcmp(before, after, len) == 0);
    /* a sum past 2^v - 1 takes a second entry: 9 + 7 + 15 = 31 */
    CHECK_OK(amq_maplet_put_hash(m, k1, 7));
    CHECK_OK(amq_maplet_put_hash(m, k1, 15));
    CHECK_OK(amq_maplet_get_hash(m, k1, &got));
    CHECK(got == 31 && amq_filter_items(m) == 31);
    CHECK_OK(amq_maplet_delete_hash(m, k1, 15));
    CHECK_OK(amq_maplet_delete_hash(m, k1, 15));
    CHECK_OK(amq_maplet_get_hash(m, k1, &got));
    CHECK(got == 1);
    CHECK_OK(amq_maplet_delete_hash(m, k1, 1));
    got = 5;
    CHECK_STATUS(amq_maplet_get_hash(m, k1, &got), AMQ_ERR_NOT_FOUND);
    CHECK(got == 0 && amq_filter_items(m) == 0);
    amq_maplet *x = mk("emaplet:op=max", 100, 0.01);
    CHECK_OK(amq_maplet_put_hash(x, 1, 3));
    CHECK_STATUS(amq_maplet_delete_hash(x, 1, 3), AMQ_ERR_UNSUPPORTED);
    CHECK(!(amq_filter_caps(x) & AMQ_CAP_REMOVE) &&
          (amq_filter_caps(m) & AMQ_CAP_REMOVE));
    amq_maplet_free(x);
    amq_maplet_free(m);
    free(before);
    free(after);
}

int main(void) {
    test_models();
    test_values();
    test_bad();
    return check_report("test_emaplet");
}
