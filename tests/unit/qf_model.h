/*
 * qf_model.h — the shared model tests of test_quotient.c (qf mode) and
 * test_cqf.c (counting mode): an exact multiset of fingerprints driven by
 * random operations, merge = union, resize keeps every key. Included by
 * exactly those two files.
 */
#ifndef AMQ_TESTS_QF_MODEL_H
#define AMQ_TESTS_QF_MODEL_H

#include "check.h"

#include <stdlib.h>
#include <string.h>

#include "amq/quotient.h"

/* Internal hook (src/fingerprint/quotient.c): full invariant check. */
amq_status amq__qf_check(amq_qf *f);

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
static bool same_as_model(const amq_qf *f, const model *m) {
    amq_qf_iter it;
    uint64_t fp, c;
    size_t i = 0;
    amq_qf_iter_init(f, &it);
    while (amq_qf_iter_next(&it, &fp, &c)) {
        if (i >= m->n || m->e[i].fp != fp || m->e[i].count != c)
            return false;
        i++;
    }
    return i == m->n && amq_qf_items(f) == m->items &&
           amq_qf_distinct(f) == m->n;
}

/* Smallest hash whose fingerprint is fp. */
static uint64_t hash_for(const amq_qf *f, uint64_t fp) {
    unsigned __int128 space = (unsigned __int128)amq_qf_slots(f)
                              << amq_qf_rbits(f);
    unsigned __int128 num = (unsigned __int128)fp << 64;
    return (uint64_t)((num + space - 1) / space);
}

/* ---- random operations against the model --------------------------------- */

static amq_status make(bool counting, uint64_t slots, unsigned r, bool scalar,
                       amq_qf **out) {
    amq_options opt;
    memset(&opt, 0, sizeof opt);
    opt.flags = scalar ? AMQ_OPT_SCALAR : 0;
    return counting ? amq_cqf_new_explicit(slots, r, &opt, out)
                    : amq_qf_new_explicit(slots, r, &opt, out);
}

/* Key universe: U hashes; a tenth of them share a quotient region so runs
 * and clusters get long. */
static uint64_t key_of(uint64_t seed, uint64_t i) {
    uint64_t s = seed * 0x9e3779b97f4a7c15ULL + i, h = check_next(&s);
    return i % 10 == 0 ? h >> 6 : h;
}

typedef struct snapshot {
    uint64_t items, distinct, used;
} snapshot;

static snapshot snap(const amq_qf *f) {
    return (snapshot){amq_qf_items(f), amq_qf_distinct(f),
                      amq_qf_used_slots(f)};
}

static bool same_snap(snapshot a, snapshot b) {
    return a.items == b.items && a.distinct == b.distinct && a.used == b.used;
}

static void run_model(bool counting, uint64_t slots, unsigned r,
                      uint64_t seed, unsigned ops, uint64_t universe) {
    amq_qf *f = NULL;
    model m = {0};
    uint64_t rng = seed, fulls = 0, errs = 0;
    check_seed = seed;
    CHECK_OK(make(counting, slots, r, seed & 1, &f));
    if (f == NULL)
        return;
    for (unsigned op = 1; op <= ops && errs == 0; op++) {
        uint64_t x = check_next(&rng);
        uint64_t h = key_of(seed, (x >> 16) % universe);
        uint64_t fp = amq_qf_fingerprint(f, h), held = model_count(&m, fp);
        uint64_t c = 1;
        if (counting && x % 7 == 0)
            c = 1 + (check_next(&rng) >> (64 - 1 - x % 40));
        if (x % 16 < 6 && held > 0) {
            uint64_t k = counting ? 1 + check_next(&rng) % held : 1;
            amq_status st = counting ? amq_cqf_remove(f, h, k)
                                     : amq_qf_remove(f, h);
            errs += st != AMQ_OK;
            if (st == AMQ_OK)
                model_sub(&m, fp, k);
        } else if (x % 16 == 6 && held == 0) {
            snapshot s0 = snap(f);
            CHECK_STATUS(amq_qf_remove(f, h), AMQ_ERR_NOT_FOUND);
            errs += !same_snap(s0, snap(f));
        } else {
            snapshot s0 = snap(f);
            amq_status st = counting ? amq_cqf_insert(f, h, c)
                                     : amq_qf_insert(f, h);
            if (st == AMQ_OK) {
                model_add(&m, fp, c);
            } else {
                fulls++;
                errs += st != AMQ_ERR_FULL || !same_snap(s0, snap(f));
            }
        }
        if (op % 64 == 0 || op == ops) {
            errs += amq__qf_check(f) != AMQ_OK;
            errs += !same_as_model(f, &m);
            for (uint64_t i = 0; i < universe; i += 7) {
                uint64_t hh = key_of(seed, i);
                uint64_t want = model_count(&m, amq_qf_fingerprint(f, hh));
                errs += amq_qf_count(f, hh) != want;
                errs += amq_qf_contains(f, hh) != (want > 0);
            }
        }
    }
    CHECK_MSG(errs == 0, "%s slots=%llu r=%u: model disagrees (%llu fulls)",
              counting ? "cqf" : "qf", (unsigned long long)slots, r,
              (unsigned long long)fulls);
    /* Drain: remove everything, the table ends empty and zeroed. */
    for (size_t i = m.n; i-- > 0;) {
        uint64_t fp = m.e[i].fp;
        uint64_t h = hash_for(f, fp);
        if (amq_qf_fingerprint(f, h) != fp) {
            errs++;
            continue;
        }
        amq_status st = counting ? amq_cqf_remove(f, h, m.e[i].count)
                                 : AMQ_OK;
        if (!counting)
            for (uint64_t k = 0; k < m.e[i].count && st == AMQ_OK; k++)
                st = amq_qf_remove(f, h);
        errs += st != AMQ_OK;
    }
    CHECK_MSG(errs == 0 && amq_qf_items(f) == 0 && amq_qf_used_slots(f) == 0 &&
                  amq__qf_check(f) == AMQ_OK,
              "drain: items %llu used %llu",
              (unsigned long long)amq_qf_items(f),
              (unsigned long long)amq_qf_used_slots(f));
    free(m.e);
    amq_qf_free(f);
}

static void test_models(bool counting) {
    static const unsigned widths[] = {1, 2, 3, 5, 8, 13, 31, 47, 58};
    static const uint64_t slots[] = {64, 192, 1024};
    unsigned seeds = check_quick() ? 2 : 4;
    unsigned ops = check_quick() ? 1500 : 5000;
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
                          1000 * w + 100 * s + k + (counting ? 50000 : 0),
                          ops, u);
            }
    }
}

/* ---- FULL and saturated offsets ------------------------------------------ */

/* One cluster across many blocks (every key's quotient in [0, 4)): block
 * offsets pass 255 and are recomputed by looking back. */
static void test_big_cluster(bool counting) {
    amq_qf *f = NULL;
    model m = {0};
    uint64_t rng = 77, errs = 0;
    check_seed = 77;
    CHECK_OK(make(counting, 1024, 20, false, &f));
    if (f == NULL)
        return;
    uint64_t keys[1000];
    for (int i = 0; i < 1000; i++) {
        keys[i] = check_next(&rng) >> 10; /* quotient < 2^54 * 1024 / 2^64 */
        if (amq_qf_insert(f, keys[i]) == AMQ_OK)
            model_add(&m, amq_qf_fingerprint(f, keys[i]), 1);
        else
            errs++;
    }
    errs += amq__qf_check(f) != AMQ_OK || !same_as_model(f, &m);
    for (int i = 0; i < 1000; i += 2) {
        errs += amq_qf_remove(f, keys[i]) != AMQ_OK;
        model_sub(&m, amq_qf_fingerprint(f, keys[i]), 1);
        if (i % 50 == 0)
            errs += amq__qf_check(f) != AMQ_OK;
    }
    errs += amq__qf_check(f) != AMQ_OK || !same_as_model(f, &m);
    for (int i = 1; i < 1000; i += 2)
        errs += !amq_qf_contains(f, keys[i]);
    CHECK_MSG(errs == 0, "big cluster (%s): %llu errors",
              counting ? "cqf" : "qf", (unsigned long long)errs);
    free(m.e);
    amq_qf_free(f);
}

/* ---- merge and resize ---------------------------------------------------- */

static void fill_random(amq_qf *f, model *m, uint64_t seed, unsigned n,
                        uint64_t universe) {
    uint64_t rng = seed;
    for (unsigned i = 0; i < n; i++) {
        uint64_t h = key_of(seed % 3, check_next(&rng) % universe);
        uint64_t c = amq_qf_is_counting(f) ? 1 + check_next(&rng) % 5 : 1;
        amq_status st = amq_qf_is_counting(f) ? amq_cqf_insert(f, h, c)
                                              : amq_qf_insert(f, h);
        if (st == AMQ_OK && m != NULL)
            model_add(m, amq_qf_fingerprint(f, h), c);
    }
}

static void test_merge(bool counting) {
    for (uint64_t s = 0; s < (check_quick() ? 3u : 10u); s++) {
        amq_qf *a = NULL, *b = NULL, *u = NULL;
        model m = {0};
        check_seed = 500 + s;
        /* cqf groups of counts 1..5 take ~2.5 slots: room for the union */
        CHECK_OK(make(counting, 4096, 9, false, &a));
        CHECK_OK(make(counting, 4096, 9, false, &b));
        if (a == NULL || b == NULL)
            goto out;
        fill_random(a, &m, 500 + s, 800, 1500);
        fill_random(b, &m, 600 + s, 800, 1500);
        CHECK_OK(amq_qf_merge(a, b, NULL, &u));
        if (u != NULL) {
            CHECK(amq__qf_check(u) == AMQ_OK);
            CHECK_MSG(same_as_model(u, &m), "merge is not the union");
            CHECK(amq_qf_used_slots(u) >= m.n);
        }
        /* In place, and shape checks. */
        CHECK_OK(amq_qf_merge_into(a, b));
        CHECK(same_as_model(a, &m) && amq__qf_check(a) == AMQ_OK);
        amq_qf *other = NULL;
        CHECK_OK(make(counting, 8192, 9, false, &other));
        if (other != NULL) {
            snapshot s0 = snap(a);
            CHECK_STATUS(amq_qf_merge_into(a, other), AMQ_ERR_INCOMPATIBLE);
            CHECK(same_snap(s0, snap(a)));
            amq_qf_free(other);
        }
        CHECK_OK(make(!counting, 4096, 9, false, &other));
        if (other != NULL) {
            CHECK_STATUS(amq_qf_merge_into(a, other), AMQ_ERR_INCOMPATIBLE);
            amq_qf_free(other);
        }
    out:
        free(m.e);
        amq_qf_free(a);
        amq_qf_free(b);
        amq_qf_free(u);
    }
}

static void test_resize(bool counting) {
    for (uint64_t s = 0; s < (check_quick() ? 2u : 6u); s++) {
        amq_qf *f = NULL;
        uint64_t rng = 700 + s, errs = 0;
        enum { K = 900 };
        static uint64_t keys[K], counts[K];
        check_seed = 700 + s;
        CHECK_OK(make(counting, counting ? 4096 : 1024, 12, false, &f));
        if (f == NULL)
            return;
        for (int i = 0; i < K; i++)
            keys[i] = check_next(&rng);
        for (int i = 0; i < K; i++)
            errs += (counting ? amq_cqf_insert(f, keys[i], 1 + (uint64_t)i % 9)
                              : amq_qf_insert(f, keys[i])) != AMQ_OK;
        for (int i = 0; i < K; i++)
            counts[i] = amq_qf_count(f, keys[i]);
        for (unsigned round = 0; round < 3; round++) {
            uint64_t fp0 = amq_qf_fingerprint(f, keys[0]);
            uint64_t items = amq_qf_items(f), slots = amq_qf_slots(f);
            unsigned r = amq_qf_rbits(f);
            CHECK_OK(amq_qf_resize(f));
            CHECK(amq_qf_slots(f) == 2 * slots && amq_qf_rbits(f) == r - 1);
            CHECK(amq_qf_items(f) == items && amq__qf_check(f) == AMQ_OK);
            CHECK(amq_qf_fingerprint(f, keys[0]) == fp0);
            for (int i = 0; i < K; i++)
                errs += amq_qf_count(f, keys[i]) != counts[i];
            /* The resized filter keeps working: more keys fit. */
            errs += amq_qf_insert(f, check_next(&rng)) != AMQ_OK;
            for (int i = 0; i < K; i++)
                counts[i] = amq_qf_count(f, keys[i]);
        }
        CHECK_MSG(errs == 0, "resize: %llu errors", (unsigned long long)errs);
        amq_qf_free(f);
    }
    amq_qf *g = NULL;
    CHECK_OK(make(counting, 64, counting ? 2 : 1, false, &g));
    if (g != NULL)
        CHECK_STATUS(amq_qf_resize(g), AMQ_ERR_INVALID);
    amq_qf_free(g);
}

#endif
