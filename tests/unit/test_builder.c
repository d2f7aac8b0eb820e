/*
 * test_builder.c — amq_builder against the one-shot constructors.
 *
 *   - for every type, a builder given keys one at a time gives the very
 *     frame that amq_filter_build gives from the same hashes (a dynamic
 *     type: new for their count, then add; a static type: one build);
 *   - static types are sized for the distinct keys: every key twice gives
 *     the filter of the keys once (same size, same items, same answers);
 *   - the filter hashes as the builder did (default, seeded, keyed with a
 *     drawn SipHash key), so every key is found through the byte API;
 *   - failures keep the keys: a fixed-width type refused at a rate it
 *     cannot reach builds afterwards at its own rate; bad specs, hash
 *     options and NULL arguments are refused with a status (and diag).
 */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 3000 };

static void key_of(uint64_t i, char k[32], size_t *len) {
    /* the number first: a range filter tells keys apart by 8 bytes */
    *len = (size_t)snprintf(k, 32, "%llu-builder-key", (unsigned long long)i);
}

/* Keys the type promises to report: all, the newest for a forgetting
 * filter, none for a sketch. */
static uint64_t missing(const amq_filter *f, uint64_t n) {
    uint32_t caps = amq_filter_caps(f);
    uint64_t from = caps & AMQ_CAP_FORGETS ? n - 1 : 0, miss = 0;
    if (caps & AMQ_CAP_SKETCH)
        return 0;
    for (uint64_t i = from; i < n; i++) {
        char k[32];
        size_t len;
        key_of(i, k, &len);
        miss += !amq_filter_contains(f, k, len);
    }
    return miss;
}

/* The builder's filter equals amq_filter_build's from the same hashes. */
static void test_same_as_build(const amq_type_info *ti) {
    amq_builder *b = NULL;
    amq_diag d;
    check_seed = 1;
    CHECK_OK(amq_builder_new(ti->name, NULL, &b, &d));
    if (b == NULL)
        return;
    uint64_t *h = malloc(N * sizeof *h);
    for (uint64_t i = 0; h != NULL && i < N; i++) {
        char k[32];
        size_t len;
        key_of(i, k, &len);
        h[i] = amq_builder_hash(b, k, len);
        CHECK_OK(amq_builder_add(b, k, len));
    }
    CHECK(amq_builder_count(b) == N);
    amq_filter *f = NULL, *g = NULL;
    CHECK_OK(amq_builder_finish(b, 0.01, &f, &d));
    amq_options o;
    memset(&o, 0, sizeof o);
    o.hash = amq_builder_hasher(b)->kind;
    o.hash_seed = amq_builder_hasher(b)->seed;
    if (h != NULL)
        CHECK_OK(amq_filter_build(ti->name, h, N, 0.01, &o, &g, &d));
    if (f != NULL && g != NULL) {
        CHECK_MSG(check_same_frame(f, g), "%s: builder and build differ",
                  ti->name);
        CHECK_MSG(missing(f, N) == 0, "%s: %llu keys missing", ti->name,
                  (unsigned long long)missing(f, N));
    }
    amq_filter_free(f);
    amq_filter_free(g);
    amq_builder_free(b);
    free(h);
}

/* A static type is sized for the distinct keys. */
static void test_static_duplicates(const amq_type_info *ti) {
    amq_builder *once = NULL, *twice = NULL;
    check_seed = 2;
    CHECK_OK(amq_builder_new(ti->name, NULL, &once, NULL));
    CHECK_OK(amq_builder_new(ti->name, NULL, &twice, NULL));
    for (uint64_t i = 0; once && twice && i < 2 * N; i++) {
        char k[32];
        size_t len;
        key_of(i % N, k, &len);
        if (i < N)
            CHECK_OK(amq_builder_add(once, k, len));
        CHECK_OK(amq_builder_add(twice, k, len));
    }
    amq_filter *f = NULL, *g = NULL;
    if (once && twice) {
        CHECK_OK(amq_builder_finish(once, 0.01, &f, NULL));
        CHECK_OK(amq_builder_finish(twice, 0.01, &g, NULL));
    }
    if (f != NULL && g != NULL) {
        CHECK_MSG(amq_filter_size_bytes(f) == amq_filter_size_bytes(g),
                  "%s: %zu bytes once, %zu with every key twice", ti->name,
                  amq_filter_size_bytes(f), amq_filter_size_bytes(g));
        CHECK(amq_filter_items(g) == N);
        CHECK(missing(g, N) == 0);
    }
    amq_filter_free(f);
    amq_filter_free(g);
    amq_builder_free(once);
    amq_builder_free(twice);
}

/* The filter hashes byte keys exactly as the builder did. */
static void test_hashers(void) {
    static const uint8_t key[AMQ_HASH_KEY_BYTES] = {9, 8, 7};
    amq_options o[3];
    memset(o, 0, sizeof o);
    o[0].hash = AMQ_HASH_XXH64;
    o[0].hash_seed = 1234;
    o[1].hash = AMQ_HASH_SIPHASH; /* key drawn by the builder */
    o[2].hash = AMQ_HASH_SIPHASH;
    o[2].hash_key = key;
    check_seed = 3;
    for (size_t j = 0; j < 3; j++) {
        for (int stat = 0; stat <= 1; stat++) {
            const char *spec = stat ? "fuse16" : "bloom";
            amq_builder *b = NULL;
            amq_filter *f = NULL;
            CHECK_OK(amq_builder_new(spec, &o[j], &b, NULL));
            for (uint64_t i = 0; b && i < 500; i++) {
                char k[32];
                size_t len;
                key_of(i, k, &len);
                CHECK_OK(amq_builder_add(b, k, len));
            }
            if (b != NULL)
                CHECK_OK(amq_builder_finish(b, 0.01, &f, NULL));
            if (f != NULL) {
                const amq_hasher *a = amq_builder_hasher(b),
                                 *c = amq_filter_hasher(f);
                CHECK(a->kind == c->kind && a->seed == c->seed &&
                      memcmp(a->key, c->key, sizeof a->key) == 0);
                CHECK_MSG(missing(f, 500) == 0, "%s hasher %zu", spec, j);
            }
            amq_filter_free(f);
            amq_builder_free(b);
        }
    }
}

/* Failures leave the keys in place. */
static void test_failures(void) {
    amq_builder *b = NULL;
    amq_filter *f = NULL;
    amq_diag d;
    check_seed = 4;
    memset(&d, 0, sizeof d);
    CHECK_STATUS(amq_builder_new("nosuch", NULL, &b, &d), AMQ_ERR_SPEC);
    CHECK(b == NULL && strstr(d.message, "nosuch") != NULL);
    CHECK_STATUS(amq_builder_new("bloom:k=", NULL, &b, &d), AMQ_ERR_SPEC);
    CHECK_STATUS(amq_builder_new(NULL, NULL, &b, &d), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_builder_new("bloom", NULL, NULL, &d), AMQ_ERR_INVALID);
    amq_options bad;
    memset(&bad, 0, sizeof bad);
    bad.hash = (amq_hash_kind)77;
    CHECK_STATUS(amq_builder_new("bloom", &bad, &b, &d), AMQ_ERR_HASH);

    CHECK_OK(amq_builder_new("fuse8", NULL, &b, NULL));
    if (b == NULL)
        return;
    CHECK_STATUS(amq_builder_add(b, NULL, 3), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_builder_add_hashes(b, NULL, 3), AMQ_ERR_INVALID);
    CHECK(amq_builder_count(b) == 0);
    for (uint64_t i = 0; i < 100; i++)
        CHECK_OK(amq_builder_add_hash(b, i * 0x9e3779b97f4a7c15ULL));
    memset(&d, 0, sizeof d);
    CHECK_STATUS(amq_builder_finish(b, 0.001, &f, &d), AMQ_ERR_INVALID);
    CHECK(f == NULL && d.message[0] != '\0');
    CHECK_STATUS(amq_builder_finish(b, 1.5, &f, &d), AMQ_ERR_INVALID);
    CHECK(amq_builder_count(b) == 100);
    CHECK_OK(amq_builder_finish(b, 0.0, &f, NULL)); /* at its own 2^-8 */
    if (f != NULL)
        CHECK(amq_filter_items(f) == 100);
    amq_filter_free(f);
    f = NULL;
    /* finished twice: the same filter again */
    amq_filter *g = NULL;
    CHECK_OK(amq_builder_finish(b, 0.0, &f, NULL));
    CHECK_OK(amq_builder_finish(b, 0.0, &g, NULL));
    if (f && g)
        CHECK(check_same_frame(f, g));
    amq_filter_free(f);
    amq_filter_free(g);
    amq_builder_free(b);
    amq_builder_free(NULL);

    /* A dynamic type that fills up names the key that did not fit. */
    CHECK_OK(amq_builder_new("cuckoo:buckets=2,fp=8", NULL, &b, NULL));
    for (uint64_t i = 0; b && i < 9; i++)
        CHECK_OK(amq_builder_add_hash(b, 42)); /* one key, 9 copies */
    memset(&d, 0, sizeof d);
    f = NULL;
    if (b != NULL)
        CHECK_STATUS(amq_builder_finish(b, 0.0, &f, &d), AMQ_ERR_FULL);
    CHECK_MSG(f == NULL && strstr(d.message, "key 9 of 9") != NULL, "%s",
              d.message);
    amq_builder_free(b);
}

int main(void) {
    for (size_t i = 0; i < amq_filter_type_count(); i++) {
        const amq_type_info *ti = amq_filter_type_at(i);
        test_same_as_build(ti);
        if (ti->caps & AMQ_CAP_STATIC)
            test_static_duplicates(ti);
    }
    test_hashers();
    test_failures();
    return check_report("test_builder");
}
