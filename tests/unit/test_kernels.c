/*
 * test_kernels.c — every query kernel against its scalar reference.
 *
 * A structure picks its one-key kernel (amq__obj.contains) when its shape
 * is set, from the widest instruction set the CPU offers; AMQ_OPT_SCALAR
 * keeps the portable reference. This suite fills a filter of every type,
 * and of the shapes each type's descriptor names for its other kernels
 * (kernel_shapes: widths, forms, table tails), saves it once, and loads
 * the frame again under each instruction-set ceiling (scalar, AVX2,
 * AVX-512, AVX-512 with VPOPCNTDQ and VBMI: amq__cpu_cap) and under
 * AMQ_OPT_SCALAR: every load must answer exactly as the reference on inserted keys, on
 * absent keys and on random hashes, through contains_hash, contains (byte
 * keys) and contains_batch. So must the frames of earlier fuse mappings
 * and Ribbon equations kept in tests/golden/legacy/. On a machine without AVX-512 the wider
 * ceilings simply choose the same kernels as the narrower ones.
 */
#include "check.h"

#include <stdlib.h>
#include <string.h>

#include "core/bits.h"
#include "type/type.h"

#define KEY_LEN 16

static void make_key(uint64_t seed, uint64_t i, uint8_t key[KEY_LEN]) {
    uint64_t a = check_next(&seed) ^ (i * 0x9e3779b97f4a7c15ULL);
    uint64_t b = i;
    memcpy(key, &a, 8);
    memcpy(key + 8, &b, 8);
}

static bool is_static(const amq_type_info *ti) {
    return (ti->caps & AMQ_CAP_STATIC) != 0;
}

/* A filter of `spec` holding n keys of stream seed (a static type built
 * from them); for types that can, a few removed again. */
static amq_filter *filled(const char *spec, uint64_t n, uint64_t seed) {
    const amq_type_info *ti = amq_filter_type_find(spec);
    amq_filter *f = NULL;
    amq_builder *b = NULL;
    if (ti == NULL || (ti->caps & AMQ_CAP_SKETCH))
        return NULL;
    if (is_static(ti)) {
        CHECK_OK(amq_builder_new(spec, NULL, &b, NULL));
        for (uint64_t i = 0; b != NULL && i < n; i++) {
            uint8_t k[KEY_LEN];
            make_key(seed, i, k);
            CHECK_OK(amq_builder_add(b, k, KEY_LEN));
        }
        /* a width that cannot meet 1% (none today) is built as it is */
        amq_status st = b ? amq_builder_finish(b, 0.01, &f, NULL) : AMQ_OK;
        if (st == AMQ_ERR_INVALID)
            st = amq_builder_finish(b, 0.0, &f, NULL);
        CHECK_OK(st);
        amq_builder_free(b);
        return f;
    }
    amq_diag d;
    memset(&d, 0, sizeof d);
    amq_status st = amq_filter_new(spec, n, 0.01, NULL, &f, &d);
    CHECK_MSG(st == AMQ_OK, "new(%s): %s %s", spec, amq_status_name(st),
              d.message);
    for (uint64_t i = 0; f != NULL && i < n; i++) {
        uint8_t k[KEY_LEN];
        make_key(seed, i, k);
        if (amq_filter_add(f, k, KEY_LEN) != AMQ_OK)
            break; /* a table that fills up early is still a table */
    }
    if (f != NULL && (amq_filter_caps(f) & AMQ_CAP_REMOVE))
        for (uint64_t i = 0; i < n; i += 7) {
            uint8_t k[KEY_LEN];
            make_key(seed, i, k);
            (void)amq_filter_remove(f, k, KEY_LEN);
        }
    return f;
}

static amq_filter *load_as(const uint8_t *buf, size_t len, int level,
                           bool scalar) {
    amq_options opt;
    amq_filter *f = NULL;
    memset(&opt, 0, sizeof opt);
    opt.flags = scalar ? AMQ_OPT_SCALAR : 0u;
    amq__cpu_cap(level);
    CHECK_OK(amq_filter_load(buf, len, &opt, &f, NULL));
    amq__cpu_cap(AMQ__CPU_MAX);
    return f;
}

/* Answers of f and of the reference ref on the same keys. */
static void compare(const char *spec, int level, const amq_filter *f,
                    const amq_filter *ref, uint64_t n, uint64_t seed) {
    enum { M = 6000 };
    static uint64_t h[M];
    static uint8_t a[M + 1], b[M + 1];
    uint64_t rng = seed ^ 0x51ed, differ = 0, bytes_differ = 0;
    for (size_t i = 0; i < M; i++) {
        uint8_t k[KEY_LEN];
        uint64_t r = check_next(&rng);
        make_key(r % 3 == 2 ? seed + 1 : seed, (r >> 8) % (2 * n + 1), k);
        h[i] = r % 5 == 4 ? check_next(&rng) : amq_filter_hash(f, k, KEY_LEN);
        bool want = amq_filter_contains_hash(ref, h[i]);
        differ += amq_filter_contains_hash(f, h[i]) != want;
        bytes_differ += amq_filter_contains(f, k, KEY_LEN) !=
                        amq_filter_contains(ref, k, KEY_LEN);
        a[i] = want;
    }
    b[M] = 0xCC;
    amq_filter_contains_batch(f, h, M, b);
    size_t batch_differ = 0;
    for (size_t i = 0; i < M; i++)
        batch_differ += (b[i] != 0) != (a[i] != 0);
    CHECK_MSG(differ == 0 && bytes_differ == 0 && batch_differ == 0 &&
                  b[M] == 0xCC,
              "%s at level %d: %llu hashes, %llu byte keys, %zu batch "
              "answers differ from the reference",
              spec, level, (unsigned long long)differ,
              (unsigned long long)bytes_differ, batch_differ);
}

/* The frame loaded under every ceiling answers as its portable reference,
 * which is returned (NULL if the frame did not load). */
static amq_filter *run_frame(const char *spec, const uint8_t *buf, size_t len,
                             uint64_t n, uint64_t seed) {
    amq_filter *ref = buf ? load_as(buf, len, AMQ__CPU_MAX, true) : NULL;
    for (int level = AMQ__CPU_SCALAR; ref != NULL && level <= AMQ__CPU_MAX;
         level++) {
        amq_filter *g = load_as(buf, len, level, false);
        if (g != NULL)
            compare(spec, level, g, ref, n, seed);
        amq_filter_free(g);
    }
    return ref;
}

static void run(const char *spec, uint64_t n, uint64_t seed) {
    check_seed = seed;
    amq_filter *f = filled(spec, n, seed);
    if (f == NULL)
        return;
    size_t len = 0;
    uint8_t *buf = check_frame(f, &len);
    amq_filter *ref = run_frame(spec, buf, len, n, seed);
    /* the filter as built answers as its own reload */
    if (ref != NULL)
        compare(spec, -1, f, ref, n, seed);
    amq_filter_free(ref);
    amq_filter_free(f);
    free(buf);
}

/* Frames of earlier mappings and equations (tests/golden/legacy/), which
 * new builds no longer make: their kernels too, under every ceiling. */
static const char *const earlier[] = {
    "fuse-map0/segmented-fuse8.amq", "fuse-map0/segmented-fuse16.amq",
    "ribbon-v2/bumped-w64.amq",      "ribbon-v2/bumped-w128.amq",
    "ribbon-v2/standard-w64.amq",    "ribbon-v2/standard-w128.amq"};

static void run_earlier(const char *rel, uint64_t seed) {
    check_seed = seed;
    char path[128];
    size_t len = 0;
    snprintf(path, sizeof path, "legacy/%s", rel);
    uint8_t *buf = check_golden_file(path, &len);
    amq_filter_free(run_frame(rel, buf, len, 20000, seed));
    free(buf);
}

int main(void) {
    uint64_t sizes[] = {1, 37, 3000};
    size_t nsizes = check_quick() ? 2 : 3;
    for (size_t i = 0; i < amq_filter_type_count(); i++)
        for (size_t s = 0; s < nsizes; s++)
            run(amq_filter_type_at(i)->name, sizes[s], 40 + s);
    /* ... and the shapes each type names for its other kernels */
    for (size_t i = 0; amq__type_at(i) != NULL; i++) {
        const amq__type *t = amq__type_at(i);
        CHECK_MSG(t->kernel_shapes != NULL,
                  "%s names no kernel shapes (kernel_shapes in its "
                  "descriptor; {NULL} when its defaults reach every kernel)",
                  t->info.name);
        for (const char *const *sh = t->kernel_shapes; sh && *sh; sh++)
            for (size_t s = 0; s < nsizes; s++)
                run(*sh, sizes[s], 70 + s);
    }
    for (size_t i = 0; i < sizeof earlier / sizeof *earlier; i++)
        run_earlier(earlier[i], 90 + i);
    return check_report("test_kernels");
}
