/*
 * golden.h — how the golden frames in tests/golden/ are made.
 *
 * For every type T in the registry there are two files:
 *   T.amq          amq_filter_new(T, 100, 0.01) with the default hasher,
 *   T-siphash.amq  the same with SipHash-2-4 keyed 00 01 .. 0f,
 * each holding the keys "amq-golden-000" .. "amq-golden-099". A static
 * type (AMQ_CAP_STATIC) is built from those keys with amq_filter_build at
 * target 0.01, or with no target if its fixed width cannot meet 0.01.
 * An adaptive type (AMQ_CAP_ADAPT) is then told of its false positives
 * among "amq-absent-0000" .. "amq-absent-1999", so its frame holds the
 * extension records too. A growing type (AMQ_CAP_GROW) then takes the
 * keys "amq-grown-000" .. "amq-grown-899" too, so its frame holds tables
 * that have doubled.
 * tests/fuzz/gen_corpus writes them; tests/unit/test_golden.c checks that
 * the current code loads them and rebuilds them byte for byte. A change to
 * any of these bytes is a change of the serialization format (docs/format.md):
 * bump the format version instead of regenerating. The one exception: a type
 * whose build or sizing changes while its format does not (different but
 * valid bytes, e.g. another peeling order or table size) first moves its
 * earlier frames to tests/golden/legacy/, where they must still load, answer
 * every golden key and save back byte for byte (test_golden checks them but
 * does not rebuild them); only then are its frames here regenerated.
 */
#ifndef AMQ_TESTS_GOLDEN_H
#define AMQ_TESTS_GOLDEN_H

#include <stdio.h>
#include <string.h>

#include "amq/amq.h"

#define GOLDEN_KEYS 100
#define GOLDEN_FPR 0.01
#define GOLDEN_GROWN 900 /* keys more for a growing type */

typedef enum golden_variant { GOLDEN_DEFAULT, GOLDEN_SIPHASH } golden_variant;

/* Key i; a range filter (ordered) tells keys apart by their first 8
 * bytes, so its keys start with the number. */
static inline size_t golden_key(size_t i, bool ordered, char buf[32]) {
    int n = snprintf(buf, 32, ordered ? "%03u-amq-golden" : "amq-golden-%03u",
                     (unsigned)i);
    return n < 0 ? 0 : (size_t)n;
}

/* File name of a type's golden frame (without directory). */
static inline void golden_file_name(const char *type, golden_variant v,
                                    char *buf, size_t cap) {
    snprintf(buf, cap, "%s%s.amq", type, v == GOLDEN_SIPHASH ? "-siphash" : "");
}

static inline amq_status golden_build(const char *type, golden_variant v,
                                      amq_filter **out) {
    static const uint8_t key[AMQ_HASH_KEY_BYTES] = {
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    amq_options opt;
    memset(&opt, 0, sizeof opt);
    if (v == GOLDEN_SIPHASH) {
        opt.hash = AMQ_HASH_SIPHASH;
        opt.hash_key = key;
    }
    /* Every type through a builder: a static one is built from the keys,
     * a dynamic one sized for them (GOLDEN_KEYS) and filled in order;
     * a fixed-width type that cannot reach GOLDEN_FPR at its own rate. */
    amq_builder *b = NULL;
    amq_status st = amq_builder_new(type, &opt, &b, NULL);
    const amq_type_info *ti = amq_filter_type_find(type);
    bool ordered = ti != NULL && (ti->caps & AMQ_CAP_RANGE);
    for (size_t i = 0; st == AMQ_OK && i < GOLDEN_KEYS; i++) {
        char k[32];
        size_t len = golden_key(i, ordered, k);
        st = amq_builder_add(b, k, len);
    }
    *out = NULL;
    if (st == AMQ_OK)
        st = amq_builder_finish(b, GOLDEN_FPR, out, NULL);
    if (st == AMQ_ERR_INVALID)
        st = amq_builder_finish(b, 0.0, out, NULL);
    amq_builder_free(b);
    for (unsigned i = 0;
         st == AMQ_OK && ti != NULL && (ti->caps & AMQ_CAP_ADAPT) && i < 2000;
         i++) {
        char k[32];
        int n = snprintf(k, sizeof k, "amq-absent-%04u", i);
        if (amq_filter_contains(*out, k, (size_t)n))
            st = amq_filter_report_fp(*out, k, (size_t)n, NULL);
    }
    for (unsigned i = 0; st == AMQ_OK && ti != NULL &&
                         (ti->caps & AMQ_CAP_GROW) && i < GOLDEN_GROWN;
         i++) {
        char k[32];
        int n = snprintf(k, sizeof k, "amq-grown-%03u", i);
        st = amq_filter_add(*out, k, (size_t)n);
    }
    if (st != AMQ_OK) {
        amq_filter_free(*out);
        *out = NULL;
    }
    return st;
}

#endif
