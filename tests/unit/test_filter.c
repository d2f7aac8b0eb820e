/*
 * test_filter.c — generic-layer entry points not covered by the contract
 * suite: amq_filter_build (for dynamic types: identical to new + add) and
 * amq_filter_resolve_hasher (the hasher a new filter will get) and the
 * amq_X_of accessors (each answers for its own types only).
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"

static uint8_t *save(const amq_filter *f, size_t *len) {
    *len = amq_filter_serialized_size(f);
    uint8_t *buf = malloc(*len);
    if (buf != NULL && amq_filter_save(f, buf, *len, NULL) != AMQ_OK) {
        free(buf);
        return NULL;
    }
    return buf;
}

static void test_build_equals_new_plus_add(void) {
    enum { N = 5000 };
    static uint64_t h[N];
    uint64_t s = 77;
    check_seed = s;
    for (size_t i = 0; i < N; i++)
        h[i] = check_next(&s);
    h[N - 1] = h[0]; /* a duplicate is tolerated */
    for (size_t t = 0; t < amq_filter_type_count(); t++) {
        const amq_type_info *ti = amq_filter_type_at(t);
        if (ti->caps & AMQ_CAP_STATIC)
            continue;
        amq_filter *a = NULL, *b = NULL;
        amq_diag d = {0};
        CHECK_OK(amq_filter_build(ti->name, h, N, 0.01, NULL, &a, &d));
        CHECK_OK(amq_filter_new(ti->name, N, 0.01, NULL, &b, &d));
        if (a == NULL || b == NULL) {
            amq_filter_free(a);
            amq_filter_free(b);
            continue;
        }
        for (size_t i = 0; i < N; i++)
            CHECK_OK(amq_filter_add_hash(b, h[i]));
        size_t la, lb;
        uint8_t *sa = save(a, &la), *sb = save(b, &lb);
        CHECK_MSG(sa && sb && la == lb && memcmp(sa, sb, la) == 0,
                  "%s: build differs from new + add", ti->name);
        free(sa);
        free(sb);
        amq_filter_free(a);
        amq_filter_free(b);
    }
}

static void test_build_bad_args(void) {
    amq_filter *f = NULL;
    uint64_t h = 1;
    amq_diag d = {0};
    CHECK_STATUS(amq_filter_build("bloom", NULL, 3, 0.01, NULL, &f, &d),
                 AMQ_ERR_INVALID);
    CHECK_STATUS(amq_filter_build("nosuch", &h, 1, 0.01, NULL, &f, &d),
                 AMQ_ERR_SPEC);
    CHECK(d.message[0] != '\0');
    CHECK_STATUS(amq_filter_build("bloom", &h, 1, 1.5, NULL, &f, &d),
                 AMQ_ERR_INVALID);
    CHECK(f == NULL);
    CHECK_OK(amq_filter_build("bloom", NULL, 0, 0.01, NULL, &f, &d));
    CHECK(f != NULL && amq_filter_items(f) == 0);
    amq_filter_free(f);
}

static void test_resolve_hasher(void) {
    static const uint8_t key[16] = {1, 2, 3};
    amq_hasher h;
    amq_options opt = {0};
    CHECK_OK(amq_filter_resolve_hasher("sbbf", NULL, &h));
    CHECK(h.kind == AMQ_HASH_XXH64 && h.seed == 0);
    CHECK_OK(amq_filter_resolve_hasher("bloom:k=3", NULL, &h));
    CHECK(h.kind == AMQ_HASH_XXH3);
    CHECK_STATUS(amq_filter_resolve_hasher("nosuch", NULL, &h), AMQ_ERR_SPEC);
    opt.hash = AMQ_HASH_SIPHASH;
    opt.hash_key = key;
    CHECK_OK(amq_filter_resolve_hasher("bloom", &opt, &h));
    CHECK(h.kind == AMQ_HASH_SIPHASH && memcmp(h.key, key, 16) == 0);
    /* A filter created with the resolved hasher hashes like it. */
    amq_filter *f = NULL;
    opt.hash_key = h.key;
    CHECK_OK(amq_filter_new("bloom", 10, 0.01, &opt, &f, NULL));
    if (f != NULL)
        CHECK(amq_filter_hash(f, "abc", 3) == amq_hash64(&h, "abc", 3));
    amq_filter_free(f);
    /* Without a key, SipHash draws a fresh random one each time. */
    amq_hasher h2;
    opt.hash_key = NULL;
    CHECK_OK(amq_filter_resolve_hasher("bloom", &opt, &h));
    CHECK_OK(amq_filter_resolve_hasher("bloom", &opt, &h2));
    CHECK(memcmp(h.key, h2.key, 16) != 0);
}

/* amq_filter_add_batch refuses bad arguments, static types and views,
 * and leaves the filter as it was. */
static void test_add_batch_bad_args(void) {
    uint64_t h[3] = {1, 2, 3};
    size_t done = 99;
    amq_filter *f = NULL;
    CHECK_STATUS(amq_filter_add_batch(NULL, h, 3, &done), AMQ_ERR_INVALID);
    CHECK(done == 0);
    CHECK_OK(amq_filter_new("cuckoo", 100, 0.01, NULL, &f, NULL));
    if (f == NULL)
        return;
    CHECK_STATUS(amq_filter_add_batch(f, NULL, 3, &done), AMQ_ERR_INVALID);
    CHECK(done == 0 && amq_filter_items(f) == 0);
    CHECK_OK(amq_filter_add_batch(f, NULL, 0, &done));
    CHECK_OK(amq_filter_add_batch(f, h, 3, NULL));
    CHECK(amq_filter_items(f) == 3);
    size_t need = amq_filter_serialized_size(f), len = 0;
    uint64_t *buf = malloc(need + 8);
    amq_filter *v = NULL;
    if (buf != NULL && amq_filter_save(f, buf, need, &len) == AMQ_OK &&
        amq_filter_view(buf, len, NULL, &v, NULL) == AMQ_OK) {
        CHECK_STATUS(amq_filter_add_batch(v, h, 3, &done), AMQ_ERR_READONLY);
        CHECK(done == 0 && amq_filter_items(v) == 3);
    } else {
        CHECK_MSG(false, "save/view of a cuckoo filter failed");
    }
    amq_filter_free(v);
    free(buf);
    amq_filter_free(f);
    f = NULL;
    CHECK_OK(amq_filter_build("xor8", h, 3, 0.0, NULL, &f, NULL));
    if (f != NULL) {
        CHECK_STATUS(amq_filter_add_batch(f, h, 3, &done), AMQ_ERR_UNSUPPORTED);
        CHECK(done == 0);
    }
    amq_filter_free(f);
}

typedef void *(*of_fn)(const amq_filter *);
#define OF(h)                                                                  \
    static void *of_##h(const amq_filter *f) { return amq_##h##_of(f); }
OF(bloom)
OF(blocked)
OF(sbbf)
OF(partitioned)
OF(scalable)
OF(stable)
OF(compressed)
OF(counting)
OF(dleft)
OF(spectral)
OF(cuckoo)
OF(qf)
OF(xor)
OF(ribbon)
OF(vqf)
OF(prefix)
OF(morton)

static const struct {
    const char *handle;
    of_fn of;
    const char *types; /* the spec names whose object it is, ' '-framed */
} accessors[] = {
    {"bloom", of_bloom, " bloom "},
    {"blocked", of_blocked, " blocked "},
    {"sbbf", of_sbbf, " sbbf "},
    {"partitioned", of_partitioned, " partitioned "},
    {"scalable", of_scalable, " scalable "},
    {"stable", of_stable, " stable "},
    {"compressed", of_compressed, " compressed "},
    {"counting", of_counting, " counting "},
    {"dleft", of_dleft, " dleft "},
    {"spectral", of_spectral, " spectral "},
    {"cuckoo", of_cuckoo, " cuckoo vacuum "},
    {"qf", of_qf, " qf cqf "},
    {"xor", of_xor, " xor8 xor16 xor32 fuse8 fuse16 fuse32 "},
    {"ribbon", of_ribbon, " ribbon "},
    {"vqf", of_vqf, " vqf "},
    {"prefix", of_prefix, " prefix "},
    {"morton", of_morton, " morton "},
};

/* Every registered type against every accessor: an accessor gives the
 * filter's object for its own types, NULL for the rest and for NULL. */
static void test_structure_of(void) {
    uint64_t h[64];
    for (size_t i = 0; i < 64; i++)
        h[i] = (i + 1) * 0x9e3779b97f4a7c15ULL;
    for (size_t t = 0; t < amq_filter_type_count(); t++) {
        const amq_type_info *ti = amq_filter_type_at(t);
        char frame[64];
        amq_filter *f = NULL;
        CHECK_OK(amq_filter_build(ti->name, h, 64, 0.01, NULL, &f, NULL));
        if (f == NULL)
            continue;
        snprintf(frame, sizeof frame, " %s ", ti->name);
        for (size_t a = 0; a < sizeof accessors / sizeof accessors[0]; a++) {
            bool own = strstr(accessors[a].types, frame) != NULL;
            void *p = accessors[a].of(f);
            if ((p != NULL) != own)
                CHECK_MSG(false, "%s_of on a %s filter: %s",
                          accessors[a].handle, ti->name,
                          p != NULL ? "an object" : "NULL");
            CHECK(accessors[a].of(NULL) == NULL);
        }
        amq_filter_free(f);
    }
    amq_filter *b = NULL;
    CHECK_OK(amq_filter_new("bloom:k=5", 1000, 0.01, NULL, &b, NULL));
    CHECK(b != NULL && amq_bloom_k(amq_bloom_of(b)) == 5);
    amq_filter_free(b);
}

int main(void) {
    test_add_batch_bad_args();
    test_build_equals_new_plus_add();
    test_build_bad_args();
    test_resolve_hasher();
    test_structure_of();
    return check_report("test_filter");
}
