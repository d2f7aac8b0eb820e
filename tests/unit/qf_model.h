/*
 * qf_model.h — the shared model tests of test_quotient.c (qf mode) and
 * test_cqf.c (counting mode): an exact multiset of fingerprints driven by
 * random operations, merge = union, resize keeps every key. The filters
 * are amq_filter "qf" and "cqf" (amq/filter.h); amq_qf_of gives their
 * structure for the calls of amq/quotient.h and the internal hooks. Every random
 * run drives two filters with the same operations: the one under test
 * (fast or scalar paths, plain or concurrent mode, by seed) and a twin on
 * the other paths; since the layout is a function of the stored multiset,
 * their tables must stay byte-identical. Included by test_quotient.c,
 * test_cqf.c and test_qf_threads.c.
 */
#ifndef AMQ_TESTS_QF_MODEL_H
#define AMQ_TESTS_QF_MODEL_H

#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amq/quotient.h"
/* The internal hooks: amq__qf_check (full invariant check), amq__qf_table
 * (the raw table), amq__qf_widenings (operations of a concurrent filter
 * that took every region lock), select in a word. */
#include "fingerprint/qf_impl.h"

/* The structure behind a qf or cqf filter. */
static amq_qf *qf(const amq_filter *f) { return amq_qf_of(f); }

/* Copies held of h's fingerprint (amq_filter_count_hash; UINT64_MAX if
 * the call fails, which no model count equals). */
static uint64_t count_of(const amq_filter *f, uint64_t h) {
    uint64_t c = 0;
    return amq_filter_count_hash(f, h, &c) == AMQ_OK ? c : UINT64_MAX;
}

/* ---- a multiset of fingerprints: sorted array ---------------------------- */

typedef struct entry {
    uint64_t fp, count;
} entry;

typedef struct model {
    entry *e;
    size_t n, cap;
    uint64_t items;
} model;

static size_t model_find(const model *m, uint64_t fp, bool *found) {
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->e[mid].fp < fp)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = lo < m->n && m->e[lo].fp == fp;
    return lo;
}

static uint64_t model_count(const model *m, uint64_t fp) {
    bool found;
    size_t i = model_find(m, fp, &found);
    return found ? m->e[i].count : 0;
}

static void model_add(model *m, uint64_t fp, uint64_t c) {
    bool found;
    size_t i = model_find(m, fp, &found);
    m->items += c;
    if (found) {
        m->e[i].count += c;
        return;
    }
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 64;
        m->e = realloc(m->e, m->cap * sizeof *m->e);
    }
    memmove(m->e + i + 1, m->e + i, (m->n - i) * sizeof *m->e);
    m->e[i] = (entry){fp, c};
    m->n++;
}

static void model_sub(model *m, uint64_t fp, uint64_t c) {
    bool found;
    size_t i = model_find(m, fp, &found);
    m->items -= c;
    m->e[i].count -= c;
    if (m->e[i].count == 0) {
        memmove(m->e + i, m->e + i + 1, (m->n - i - 1) * sizeof *m->e);
        m->n--;
    }
}

/* The filter enumerates exactly the model, in order. */
static bool same_as_model(const amq_filter *f, const model *m) {
    amq_qf_iter it;
    uint64_t fp, c;
    size_t i = 0;
    amq_qf_iter_init(qf(f), &it);
    while (amq_qf_iter_next(&it, &fp, &c)) {
        if (i >= m->n || m->e[i].fp != fp || m->e[i].count != c)
            return false;
        i++;
    }
    return i == m->n && amq_filter_items(f) == m->items &&
           amq_qf_distinct(qf(f)) == m->n;
}

/* Smallest hash whose fingerprint is fp. */
static uint64_t hash_for(const amq_filter *f, uint64_t fp) {
    unsigned __int128 space = (unsigned __int128)amq_qf_slots(qf(f))
                              << amq_qf_rbits(qf(f));
    unsigned __int128 num = (unsigned __int128)fp << 64;
    return (uint64_t)((num + space - 1) / space);
}

/* ---- random operations against the model --------------------------------- */

/* A "qf" or "cqf" of `slots` home slots and r-bit remainders; flags:
 * AMQ_OPT_SCALAR, AMQ_OPT_CONCURRENT. */
static amq_status make(bool counting, uint64_t slots, unsigned r,
                       uint32_t flags, amq_filter **out) {
    amq_options opt;
    char spec[64];
    memset(&opt, 0, sizeof opt);
    opt.flags = flags;
    snprintf(spec, sizeof spec, "%s:slots=%llu,r=%u", counting ? "cqf" : "qf",
             (unsigned long long)slots, r);
    return amq_filter_new(spec, 0, 0, &opt, out, NULL);
}

/* The two tables hold the same bytes. */
static bool same_table(const amq_filter *a, const amq_filter *b) {
    size_t la, lb;
    const uint8_t *ta = amq__qf_table(qf(a), &la),
                  *tb = amq__qf_table(qf(b), &lb);
    return la == lb && memcmp(ta, tb, la) == 0;
}

/* test_qf_threads.c takes the helpers above, not the suites below. */
#ifndef QF_MODEL_NO_SUITES

/* Key universe: U hashes; a tenth of them share the first 1/64 of the
 * quotients so runs and clusters get long, and a tenth the last 1/64, so
 * clusters run into the overflow slots at the end of the table. */
static uint64_t key_of(uint64_t seed, uint64_t i) {
    uint64_t s = seed * 0x9e3779b97f4a7c15ULL + i, h = check_next(&s);
    return i % 10 == 0 ? h >> 6 : i % 10 == 1 ? ~(h >> 6) : h;
}

typedef struct snapshot {
    uint64_t items, distinct, used;
} snapshot;

static snapshot snap(const amq_filter *f) {
    return (snapshot){amq_filter_items(f), amq_qf_distinct(qf(f)),
                      amq_qf_used_slots(qf(f))};
}

static bool same_snap(snapshot a, snapshot b) {
    return a.items == b.items && a.distinct == b.distinct && a.used == b.used;
}

/* The same update on the twin: same status, same bytes. */
static uint64_t twin_insert(amq_filter *g, bool counting, uint64_t h,
                            uint64_t c, amq_status want) {
    amq_status st =
        counting ? amq_cqf_insert(qf(g), h, c) : amq_filter_add_hash(g, h);
    return st != want;
}
static uint64_t twin_remove(amq_filter *g, bool counting, uint64_t h,
                            uint64_t k, amq_status want) {
    amq_status st =
        counting ? amq_cqf_remove(qf(g), h, k) : amq_filter_remove_hash(g, h);
    return st != want;
}

/* Seed bit 0: the filter under test takes the scalar paths (the twin the
 * fast ones); bit 1: the filter under test is in concurrent mode. */
static void run_model(bool counting, uint64_t slots, unsigned r, uint64_t seed,
                      unsigned ops, uint64_t universe) {
    amq_filter *f = NULL, *g = NULL;
    model m = {0};
    uint64_t rng = seed, fulls = 0, errs = 0;
    uint32_t mode = ((seed & 1) ? AMQ_OPT_SCALAR : 0u) |
                    ((seed & 2) ? AMQ_OPT_CONCURRENT : 0u);
    check_seed = seed;
    CHECK_OK(make(counting, slots, r, mode, &f));
    CHECK_OK(make(counting, slots, r, (seed & 1) ? 0u : AMQ_OPT_SCALAR, &g));
    if (f == NULL || g == NULL) {
        amq_filter_free(f);
        amq_filter_free(g);
        return;
    }
    for (unsigned op = 1; op <= ops && errs == 0; op++) {
        uint64_t x = check_next(&rng);
        uint64_t h = key_of(seed, (x >> 16) % universe);
        uint64_t fp = amq_qf_fingerprint(qf(f), h), held = model_count(&m, fp);
        uint64_t c = 1;
        if (counting && x % 7 == 0)
            c = 1 + (check_next(&rng) >> (64 - 1 - x % 40));
        if (x % 16 < 6 && held > 0) {
            uint64_t k = counting ? 1 + check_next(&rng) % held : 1;
            amq_status st = counting ? amq_cqf_remove(qf(f), h, k)
                                     : amq_filter_remove_hash(f, h);
            errs += st != AMQ_OK;
            errs += twin_remove(g, counting, h, k, st);
            if (st == AMQ_OK)
                model_sub(&m, fp, k);
        } else if (x % 16 == 6 && held == 0) {
            snapshot s0 = snap(f);
            CHECK_STATUS(amq_filter_remove_hash(f, h), AMQ_ERR_NOT_FOUND);
            errs += !same_snap(s0, snap(f));
        } else {
            snapshot s0 = snap(f);
            amq_status st = counting ? amq_cqf_insert(qf(f), h, c)
                                     : amq_filter_add_hash(f, h);
            errs += twin_insert(g, counting, h, c, st);
            if (st == AMQ_OK) {
                model_add(&m, fp, c);
            } else {
                fulls++;
                errs += st != AMQ_ERR_FULL || !same_snap(s0, snap(f));
            }
        }
        errs += !same_table(f, g);
        if (op % 64 == 0 || op == ops) {
            errs += amq__qf_check(qf(f)) != AMQ_OK;
            errs += !same_as_model(f, &m);
            for (uint64_t i = 0; i < universe; i += 7) {
                uint64_t hh = key_of(seed, i);
                uint64_t want = model_count(&m, amq_qf_fingerprint(qf(f), hh));
                errs += count_of(f, hh) != want;
                errs += count_of(g, hh) != want; /* the other paths */
                errs += amq_filter_contains_hash(f, hh) != (want > 0);
            }
        }
    }
    CHECK_MSG(errs == 0,
              "%s slots=%llu r=%u mode=%u: model or twin "
              "disagrees (%llu fulls)",
              counting ? "cqf" : "qf", (unsigned long long)slots, r,
              (unsigned)mode, (unsigned long long)fulls);
    /* Drain: remove everything, the table ends empty and zeroed. */
    for (size_t i = m.n; i-- > 0;) {
        uint64_t fp = m.e[i].fp;
        uint64_t h = hash_for(f, fp);
        if (amq_qf_fingerprint(qf(f), h) != fp) {
            errs++;
            continue;
        }
        amq_status st =
            counting ? amq_cqf_remove(qf(f), h, m.e[i].count) : AMQ_OK;
        if (!counting)
            for (uint64_t k = 0; k < m.e[i].count && st == AMQ_OK; k++)
                st = amq_filter_remove_hash(f, h);
        errs += st != AMQ_OK;
    }
    CHECK_MSG(
        errs == 0 && amq_filter_items(f) == 0 &&
            amq_qf_used_slots(qf(f)) == 0 && amq__qf_check(qf(f)) == AMQ_OK,
        "drain: items %llu used %llu", (unsigned long long)amq_filter_items(f),
        (unsigned long long)amq_qf_used_slots(qf(f)));
    free(m.e);
    amq_filter_free(f);
    amq_filter_free(g);
}

static void test_models(bool counting) {
    static const unsigned widths[] = {1, 2, 3, 5, 8, 13, 31, 47, 58};
    static const uint64_t slots[] = {64, 192, 1024};
    unsigned seeds = 4; /* the four modes: see run_model */
    unsigned ops = check_quick() ? 1000 : 5000;
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
        if (counting && widths[w] < 2)
            continue;
        for (size_t s = 0; s < 3; s++)
            for (unsigned k = 0; k < seeds; k++) {
                /* universe ~ 1.2x the slots: fills up, hits FULL */
                uint64_t u = slots[s] + slots[s] / 5;
                /* a 64-bit hash splits into log2(N) + r <= 64 bits */
                unsigned lg = 64u - (unsigned)__builtin_clzll(slots[s] - 1);
                unsigned r = widths[w] + lg > 64 ? 64 - lg : widths[w];
                run_model(counting, slots[s], r,
                          1000 * w + 100 * s + k + (counting ? 50000 : 0), ops,
                          u);
            }
    }
}

/* ---- concurrent mode, one thread: the lock windows ------------------------ */

/* A table of three lock regions (64 blocks each) in concurrent mode, and a
 * plain twin. Half the keys have quotients in [4000, 4010), at the end of
 * region 0: their cluster grows past slot 8192, the end of the two-region
 * window of an operation homed in region 0, so inserts and removes there
 * must retake every lock; blocks of region 1 get saturated offsets whose
 * look-back leaves the window of operations homed in region 1; the
 * cluster finally reaches the end of the table (FULL). The rest are
 * spread. Same statuses and bytes as the twin, the model's multiset, and
 * the fallback was taken. */
static void test_windows(bool counting) {
    const uint64_t slots = 8192;
    const unsigned r = 10;
    amq_filter *f = NULL, *g = NULL;
    model m = {0};
    uint64_t rng = 4242, errs = 0, fulls = 0;
    unsigned ops = check_quick() ? 7000 : 12000;
    check_seed = 4242;
    CHECK_OK(make(counting, slots, r, AMQ_OPT_CONCURRENT, &f));
    CHECK_OK(make(counting, slots, r, 0, &g));
    if (f == NULL || g == NULL)
        goto out;
    for (unsigned op = 1; op <= ops && errs == 0; op++) {
        uint64_t x = check_next(&rng), y = check_next(&rng);
        uint64_t q = x % 2 ? 4000 + x / 2 % 10 : y % slots;
        uint64_t fp = q << r | (y >> 40) % (1u << r), h = hash_for(f, fp);
        uint64_t held = model_count(&m, fp), c = counting ? 1 + y % 3 : 1;
        amq_status st;
        if (x % 8 < 2 && held > 0) {
            st = counting ? amq_cqf_remove(qf(f), h, 1)
                          : amq_filter_remove_hash(f, h);
            errs += st != AMQ_OK || twin_remove(g, counting, h, 1, st);
            if (st == AMQ_OK)
                model_sub(&m, fp, 1);
        } else {
            st = counting ? amq_cqf_insert(qf(f), h, c)
                          : amq_filter_add_hash(f, h);
            errs += (st != AMQ_OK && st != AMQ_ERR_FULL) ||
                    twin_insert(g, counting, h, c, st);
            if (st == AMQ_OK)
                model_add(&m, fp, c);
            fulls += st == AMQ_ERR_FULL;
        }
        errs += !same_table(f, g);
        if (op % 500 == 0)
            errs += amq__qf_check(qf(f)) != AMQ_OK || !same_as_model(f, &m);
    }
    errs += amq__qf_check(qf(f)) != AMQ_OK || !same_as_model(f, &m);
    CHECK_MSG(errs == 0, "%s windows: %llu errors", counting ? "cqf" : "qf",
              (unsigned long long)errs);
    CHECK_MSG(amq__qf_widenings(qf(f)) > 0 && fulls > 0,
              "%s windows: %llu widenings, %llu fulls", counting ? "cqf" : "qf",
              (unsigned long long)amq__qf_widenings(qf(f)),
              (unsigned long long)fulls);
out:
    free(m.e);
    amq_filter_free(f);
    amq_filter_free(g);
}

/* ---- FULL and saturated offsets ------------------------------------------ */

/* One cluster across many blocks (every key's quotient in [0, 4)): block
 * offsets pass 255 and are recomputed by looking back. */
static void test_big_cluster(bool counting) {
    amq_filter *f = NULL;
    model m = {0};
    uint64_t rng = 77, errs = 0;
    check_seed = 77;
    CHECK_OK(make(counting, 1024, 20, 0, &f));
    if (f == NULL)
        return;
    uint64_t keys[1000];
    for (int i = 0; i < 1000; i++) {
        keys[i] = check_next(&rng) >> 10; /* quotient < 2^54 * 1024 / 2^64 */
        if (amq_filter_add_hash(f, keys[i]) == AMQ_OK)
            model_add(&m, amq_qf_fingerprint(qf(f), keys[i]), 1);
        else
            errs++;
    }
    errs += amq__qf_check(qf(f)) != AMQ_OK || !same_as_model(f, &m);
    for (int i = 0; i < 1000; i += 2) {
        errs += amq_filter_remove_hash(f, keys[i]) != AMQ_OK;
        model_sub(&m, amq_qf_fingerprint(qf(f), keys[i]), 1);
        if (i % 50 == 0)
            errs += amq__qf_check(qf(f)) != AMQ_OK;
    }
    errs += amq__qf_check(qf(f)) != AMQ_OK || !same_as_model(f, &m);
    for (int i = 1; i < 1000; i += 2)
        errs += !amq_filter_contains_hash(f, keys[i]);
    CHECK_MSG(errs == 0, "big cluster (%s): %llu errors",
              counting ? "cqf" : "qf", (unsigned long long)errs);
    free(m.e);
    amq_filter_free(f);
}

/* ---- merge and resize ---------------------------------------------------- */

static void fill_random(amq_filter *f, model *m, uint64_t seed, unsigned n,
                        uint64_t universe) {
    uint64_t rng = seed;
    for (unsigned i = 0; i < n; i++) {
        uint64_t h = key_of(seed % 3, check_next(&rng) % universe);
        if (h > ~(UINT64_MAX >> 6))
            h = ~h; /* merges are sized for the keys: none at the end */
        uint64_t c = amq_qf_is_counting(qf(f)) ? 1 + check_next(&rng) % 5 : 1;
        amq_status st = amq_qf_is_counting(qf(f)) ? amq_cqf_insert(qf(f), h, c)
                                                  : amq_filter_add_hash(f, h);
        if (st == AMQ_OK && m != NULL)
            model_add(m, amq_qf_fingerprint(qf(f), h), c);
    }
}

static void test_merge(bool counting) {
    for (uint64_t s = 0; s < (check_quick() ? 3u : 10u); s++) {
        amq_filter *a = NULL, *b = NULL, *u = NULL;
        model m = {0};
        check_seed = 500 + s;
        /* cqf groups of counts 1..5 take ~2.5 slots: room for the union */
        CHECK_OK(make(counting, 4096, 9, 0, &a));
        CHECK_OK(make(counting, 4096, 9, AMQ_OPT_CONCURRENT, &b));
        if (a == NULL || b == NULL)
            goto out;
        fill_random(a, &m, 500 + s, 800, 1500);
        fill_random(b, &m, 600 + s, 800, 1500);
        CHECK_OK(amq_qf_merge(a, b, NULL, &u));
        if (u != NULL) {
            CHECK(amq__qf_check(qf(u)) == AMQ_OK);
            CHECK_MSG(same_as_model(u, &m), "merge is not the union");
            CHECK(amq_qf_used_slots(qf(u)) >= m.n);
        }
        /* In place, and shape checks. */
        CHECK_OK(amq_filter_union(a, b));
        CHECK(same_as_model(a, &m) && amq__qf_check(qf(a)) == AMQ_OK);
        amq_filter *other = NULL;
        CHECK_OK(make(counting, 8192, 9, 0, &other));
        if (other != NULL) {
            snapshot s0 = snap(a);
            CHECK_STATUS(amq_filter_union(a, other), AMQ_ERR_INCOMPATIBLE);
            CHECK(same_snap(s0, snap(a)));
            amq_filter_free(other);
        }
        CHECK_OK(make(!counting, 4096, 9, 0, &other));
        if (other != NULL) {
            CHECK_STATUS(amq_filter_union(a, other), AMQ_ERR_INCOMPATIBLE);
            amq_filter_free(other);
        }
    out:
        free(m.e);
        amq_filter_free(a);
        amq_filter_free(b);
        amq_filter_free(u);
    }
}

static void test_resize(bool counting) {
    for (uint64_t s = 0; s < (check_quick() ? 2u : 6u); s++) {
        amq_filter *f = NULL;
        uint64_t rng = 700 + s, errs = 0;
        enum { K = 900 };
        static uint64_t keys[K], counts[K];
        check_seed = 700 + s;
        /* odd seeds in concurrent mode: the lock array is resized too */
        CHECK_OK(make(counting, counting ? 4096 : 1024, 12,
                      (s & 1) ? AMQ_OPT_CONCURRENT : 0u, &f));
        if (f == NULL)
            return;
        for (int i = 0; i < K; i++)
            keys[i] = check_next(&rng);
        for (int i = 0; i < K; i++)
            errs +=
                (counting ? amq_cqf_insert(qf(f), keys[i], 1 + (uint64_t)i % 9)
                          : amq_filter_add_hash(f, keys[i])) != AMQ_OK;
        for (int i = 0; i < K; i++)
            counts[i] = count_of(f, keys[i]);
        for (unsigned round = 0; round < 3; round++) {
            uint64_t fp0 = amq_qf_fingerprint(qf(f), keys[0]);
            uint64_t items = amq_filter_items(f), slots = amq_qf_slots(qf(f));
            unsigned r = amq_qf_rbits(qf(f));
            CHECK_OK(amq_qf_resize(qf(f)));
            CHECK(amq_qf_slots(qf(f)) == 2 * slots &&
                  amq_qf_rbits(qf(f)) == r - 1);
            CHECK(amq_filter_items(f) == items &&
                  amq__qf_check(qf(f)) == AMQ_OK);
            CHECK(amq_qf_fingerprint(qf(f), keys[0]) == fp0);
            for (int i = 0; i < K; i++)
                errs += count_of(f, keys[i]) != counts[i];
            /* The resized filter keeps working: more keys fit. */
            errs += amq_filter_add_hash(f, check_next(&rng)) != AMQ_OK;
            for (int i = 0; i < K; i++)
                counts[i] = count_of(f, keys[i]);
        }
        CHECK_MSG(errs == 0, "resize: %llu errors", (unsigned long long)errs);
        amq_filter_free(f);
    }
    amq_filter *g = NULL;
    CHECK_OK(make(counting, 64, counting ? 2 : 1, 0, &g));
    if (g != NULL)
        CHECK_STATUS(amq_qf_resize(qf(g)), AMQ_ERR_INVALID);
    amq_filter_free(g);
}

#endif /* QF_MODEL_NO_SUITES */
#endif
