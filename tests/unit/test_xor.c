/*
 * test_xor.c — xor filters ("xor8", "xor16", "xor32" through amq_filter_build,
 * the shape's getters through amq_xor_of): every width, the exact space
 * formula, the 2^-w rate, batch == scalar, n = 0, duplicates, argument
 * checks; and for xor and fuse alike (one implementation): construction
 * memory equal to what a build really allocates, and queries equal to a
 * reference written from the documented key-to-slot mapping, read back
 * out of saved frames. The contract suite covers the rest of the generic
 * interface (xor8/16/32).
 */
#include "check.h"

#include "core/sort.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "amq/static.h"

static uint64_t *keys(size_t n, uint64_t seed) {
    uint64_t *h = malloc(n ? n * sizeof *h : 1);
    for (size_t i = 0; h != NULL && i < n; i++)
        h[i] = check_next(&seed);
    return h;
}

static uint64_t missing(const amq_filter *f, const uint64_t *h, size_t n) {
    uint64_t miss = 0;
    for (size_t i = 0; i < n; i++)
        miss += !amq_filter_contains_hash(f, h[i]);
    return miss;
}

/* The spec of a xor filter of w-bit fingerprints (w = 8, 16, 32). */
static const char *xor_spec(unsigned width) {
    return width == 8 ? "xor8" : width == 16 ? "xor16" : "xor32";
}

/* A xor (ways = 0) or fuse filter of w-bit fingerprints over h[0..n). */
static amq_status build(const uint64_t *h, size_t n, unsigned width,
                        unsigned ways, const amq_options *opt, amq_filter **f) {
    char spec[32];
    if (ways == 0)
        snprintf(spec, sizeof spec, "%s", xor_spec(width));
    else
        snprintf(spec, sizeof spec, "fuse%u:ways=%u", width, ways);
    return amq_filter_build(spec, h, n, 0.0, opt, f, NULL);
}

/* Space: 3 ceil((1.23 n + 32) / 3) slots of w bits (Graf & Lemire's
 * capacity), unless a failed attempt grew the table. */
static void test_space_and_rate(unsigned width, size_t n, uint64_t seed) {
    check_seed = seed;
    uint64_t *h = keys(n, seed);
    amq_filter *f = NULL;
    CHECK_OK(build(h, n, width, 0, NULL, &f));
    if (f == NULL) {
        free(h);
        return;
    }
    const amq_xor *x = amq_xor_of(f);
    CHECK(x != NULL && amq_xor_width(x) == width && amq_xor_ways(x) == 3);
    CHECK(amq_filter_items(f) == n);
    CHECK_MSG(missing(f, h, n) == 0, "xor%u n=%zu: false negatives", width, n);
    double slots = 3 * ceil((1.23 * (double)n + 32) / 3);
    double bpk = 8.0 * (double)amq_filter_size_bytes(f) / (double)n;
    CHECK_MSG(bpk >= slots * width / (double)n - 1e-9 &&
                  bpk <= 1.15 * slots * width / (double)n,
              "xor%u n=%zu: %g bits/key, formula %g", width, n, bpk,
              slots * width / (double)n);
    if (n >= 1000000)
        CHECK_MSG(bpk <= 1.23 * width + 32.0 * width / (double)n + 0.01,
                  "xor%u: %g bits/key", width, bpk);
    double bound = amq_filter_fpr_bound(f);
    CHECK(bound == ldexp(1.0, -(int)width));
    if (width <= 16) {
        uint64_t trials = width == 8 ? 400000 : 2000000, fp = 0, s = seed ^ 1;
        for (uint64_t i = 0; i < trials; i++)
            fp += amq_filter_contains_hash(f, check_next(&s));
        double p = (double)fp / (double)trials;
        double sd = sqrt(bound * (1 - bound) / (double)trials);
        CHECK_MSG(fabs(p - bound) <= 4 * sd + 3.0 / (double)trials,
                  "xor%u n=%zu: measured %g, exact %g", width, n, p, bound);
    }
    amq_filter_free(f);
    free(h);
}

static void test_batch(void) {
    check_seed = 3;
    for (unsigned width = 8; width <= 32; width *= 2) {
        size_t n = 3000, m = 10000;
        uint64_t *h = keys(n, 3), *q = keys(m, 4);
        uint8_t *a = malloc(m + 8), *b = malloc(m + 8);
        amq_filter *f = NULL;
        CHECK_OK(build(h, n, width, 0, NULL, &f));
        if (f == NULL || a == NULL || b == NULL || q == NULL) {
            free(h), free(q), free(a), free(b);
            amq_filter_free(f);
            continue;
        }
        for (size_t i = 0; i < m; i += 3)
            q[i] = h[i % n]; /* a third present */
        for (size_t i = 0; i < m; i++)
            a[i] = amq_filter_contains_hash(f, q[i]);
        size_t bad = 0;
        for (size_t len = 0; len <= 70; len++) {
            memset(b, 0xCC, len + 8);
            amq_filter_contains_batch(f, q + len, len, b);
            for (size_t i = 0; i < len; i++)
                bad += b[i] != a[len + i];
            for (size_t i = len; i < len + 8; i++)
                bad += b[i] != 0xCC;
        }
        amq_filter_contains_batch(f, q, m, b);
        for (size_t i = 0; i < m; i++)
            bad += b[i] != a[i];
        CHECK_MSG(bad == 0, "xor%u: batch differs from scalar on %zu", width,
                  bad);
        amq_filter_free(f);
        free(h), free(q), free(a), free(b);
    }
}

static void test_edges(void) {
    check_seed = 5;
    amq_filter *f = NULL;
    /* n = 0: no table, answers false, bound 0. */
    CHECK_OK(build(NULL, 0, 8, 0, NULL, &f));
    if (f != NULL) {
        uint64_t s = 5, fp = 0;
        uint8_t out[64];
        uint64_t q[64];
        for (int i = 0; i < 10000; i++)
            fp += amq_filter_contains_hash(f, check_next(&s));
        for (int i = 0; i < 64; i++)
            q[i] = check_next(&s);
        amq_filter_contains_batch(f, q, 64, out);
        for (int i = 0; i < 64; i++)
            fp += out[i];
        CHECK(fp == 0 && amq_filter_items(f) == 0 &&
              amq_filter_size_bytes(f) == 0 && amq_filter_fpr_bound(f) == 0.0);
    }
    amq_filter_free(f);
    /* Every n up to 300, with duplicates in every third build: never
     * fails, never misses, items = distinct keys. */
    size_t fails = 0, miss = 0, wrong_items = 0;
    for (size_t n = 1; n <= 300; n++) {
        uint64_t *h = keys(n, n);
        size_t distinct = n;
        if (n % 3 == 0)
            for (size_t i = 1; i < n; i += 2, distinct--)
                h[i] = h[i - 1];
        f = NULL;
        if (build(h, n, 8, 0, NULL, &f) != AMQ_OK) {
            fails++;
        } else {
            miss += missing(f, h, n);
            wrong_items += amq_filter_items(f) != distinct;
        }
        amq_filter_free(f);
        free(h);
    }
    CHECK_MSG(fails == 0 && miss == 0 && wrong_items == 0,
              "small n: %zu failed builds, %zu misses, %zu wrong counts", fails,
              miss, wrong_items);
    /* All keys equal. */
    uint64_t same[1000];
    for (size_t i = 0; i < 1000; i++)
        same[i] = 0xabcdef;
    f = NULL;
    CHECK_OK(build(same, 1000, 16, 0, NULL, &f));
    CHECK(f != NULL && amq_filter_items(f) == 1 &&
          amq_filter_contains_hash(f, 0xabcdef));
    amq_filter_free(f);
    /* Arguments: a width without a type is an unknown name; missing keys
     * or output are refused; a target below 2^-w cannot be met. */
    uint64_t one = 1;
    f = NULL;
    CHECK_STATUS(amq_filter_build("xor12", &one, 1, 0.0, NULL, &f, NULL),
                 AMQ_ERR_SPEC);
    CHECK_STATUS(build(NULL, 1, 8, 0, NULL, &f), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_filter_build("xor8", &one, 1, 0.0, NULL, NULL, NULL),
                 AMQ_ERR_INVALID);
    CHECK_STATUS(amq_filter_build("xor8", &one, 1, 0.001, NULL, &f, NULL),
                 AMQ_ERR_INVALID);
    CHECK(f == NULL);
    amq_filter_free(NULL);
    CHECK(amq_xor_of(NULL) == NULL);
    /* Construction memory: 20 bytes per slot plus 8 per key. */
    size_t mem = amq_xor_build_memory(1000000, 8, 0);
    CHECK_MSG(mem >= 1230000u * 20 && mem <= 1230100u * 20 + 8000000u + 64,
              "build memory %zu", mem);
    CHECK(amq_xor_build_memory(0, 8, 0) == 0);
    CHECK(amq_xor_build_memory(1000, 8, 5) == 0);
    CHECK(amq_xor_build_memory(SIZE_MAX / 4, 8, 0) == 0);
}

/* An allocator that tracks the bytes live and their peak. */
typedef struct tracker {
    size_t live, peak;
} tracker;

static void *tr_alloc(void *ctx, size_t size) {
    tracker *t = ctx;
    void *p = malloc(size);
    if (p != NULL && (t->live += size) > t->peak)
        t->peak = t->live;
    return p;
}
static void *tr_realloc(void *ctx, void *p, size_t old, size_t size) {
    tracker *t = ctx;
    void *q = realloc(p, size);
    if (q != NULL) {
        t->live = t->live - old + size;
        if (t->live > t->peak)
            t->peak = t->live;
    }
    return q;
}
static void tr_free(void *ctx, void *p, size_t size) {
    tracker *t = ctx;
    if (p != NULL)
        t->live -= size;
    free(p);
}

/* amq_xor_build_memory is what a build allocates besides the filter: the
 * peak during the build minus what the filter keeps (the filter's handle,
 * allocated before the build, is in both). Exact for distinct
 * keys (the first attempt peels); duplicates add at most a sorted copy. */
static void test_build_memory(void) {
    check_seed = 8;
    size_t n = check_quick() ? 20000 : 200000;
    uint64_t *h = keys(2 * n, 8);
    if (h == NULL)
        return;
    static const unsigned ways[] = {0, 3, 4};
    for (int dup = 0; dup < 2; dup++) {
        size_t len = dup ? 2 * n : n;
        if (dup)
            for (size_t i = 0; i < n; i++)
                h[n + i] = h[(i * 13) % n];
        for (size_t k = 0; k < 3; k++) {
            tracker t = {0, 0};
            amq_allocator a = {tr_alloc, tr_realloc, tr_free, &t};
            amq_options opt;
            memset(&opt, 0, sizeof opt);
            opt.allocator = &a;
            amq_filter *f = NULL;
            CHECK_OK(build(h, len, 8, ways[k], &opt, &f));
            size_t kept = t.live, work = t.peak - kept;
            size_t est = amq_xor_build_memory(len, 8, ways[k]);
            /* repeats cost a sorted copy and the sort's scratch */
            size_t more = 8 * len + amq__sort_scratch(len);
            if (dup)
                CHECK_MSG(work <= est + more,
                          "ways %u with duplicates: %zu bytes used, "
                          "estimate %zu + %zu",
                          ways[k], work, est, more);
            else
                CHECK_MSG(work == est, "ways %u: %zu bytes used, estimate %zu",
                          ways[k], work, est);
            amq_filter_free(f);
            CHECK(t.live == 0);
        }
    }
    free(h);
}

/* ---- a reference query, from the documented mapping ---------------------
 *
 * x = mix64(h + seed) (Murmur3's finaliser); start s = floor(x S / 2^64);
 * slot i = (s + i) L + floor((x M_i mod 2^64) L / 2^64); fingerprint = top
 * w bits of x M_f mod 2^64; a key is in iff the fingerprint equals the xor
 * of its slots. Written here independently of src/fingerprint/xor.c (which
 * takes shortcuts, e.g. a shift when L is a power of two), and fed the
 * seed, shape and table read out of a saved frame. */
static const uint64_t ref_mul[4] = {
    0x9e3779b97f4a7c15ULL, 0xc2b2ae3d27d4eb4fULL, 0x165667b19e3779f9ULL,
    0xd6e8feb86659fd93ULL};
#define REF_FP_MUL 0xa0761d6478bd642fULL

typedef struct ref_filter {
    uint64_t seed;
    uint32_t seg_len, seg_count, ways, width, mapping;
    const uint8_t *table;
} ref_filter;

static uint64_t ref_get(const uint8_t *p, unsigned bytes) {
    uint64_t v = 0;
    for (unsigned i = 0; i < bytes; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static uint64_t ref_reduce(uint64_t y, uint64_t n) {
    return (uint64_t)(((unsigned __int128)y * n) >> 64);
}

static bool ref_contains(const ref_filter *r, uint64_t h) {
    uint64_t x = h + r->seed;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    uint64_t s = ref_reduce(x, r->seg_count), v = 0;
    uint64_t p0 = ref_reduce(x, (uint64_t)r->seg_count * r->seg_len);
    uint64_t slice[3] = {0, x >> 18, x};
    for (unsigned i = 0; i < r->ways; i++) {
        uint64_t slot =
            (s + i) * r->seg_len + ref_reduce(x * ref_mul[i], r->seg_len);
        if (r->mapping == 1) /* 3 ways, seg_len a power of two */
            slot = (p0 + i * r->seg_len) ^ (slice[i] & (r->seg_len - 1));
        v ^= ref_get(r->table + slot * (r->width / 8), r->width / 8);
    }
    return v == (x * REF_FP_MUL) >> (64 - r->width);
}

/* Frame: 64-byte header, 16 generic parameter bytes, then seed u64, items
 * u64, seg_len u32, seg_count u32, ways u32, width u32, family u32 and the
 * slot mapping u32; the payload at the next multiple of 64
 * (docs/format.md). */
static ref_filter ref_of(const uint8_t *buf) {
    ref_filter r;
    r.seed = ref_get(buf + 80, 8);
    r.seg_len = (uint32_t)ref_get(buf + 96, 4);
    r.seg_count = (uint32_t)ref_get(buf + 100, 4);
    r.ways = (uint32_t)ref_get(buf + 104, 4);
    r.width = (uint32_t)ref_get(buf + 108, 4);
    r.mapping = (uint32_t)ref_get(buf + 116, 4);
    r.table = buf + 128;
    return r;
}

static void test_reference(const char *spec, size_t n, uint32_t want_len) {
    check_seed = n;
    uint64_t *h = keys(n, n * 7 + 1), s = n;
    amq_filter *f = NULL;
    CHECK_OK(amq_filter_build(spec, h, n, 0.0, NULL, &f, NULL));
    size_t len = f ? amq_filter_serialized_size(f) : 0;
    uint8_t *buf = malloc(len ? len : 1);
    if (f == NULL || buf == NULL || h == NULL) {
        free(h), free(buf);
        amq_filter_free(f);
        return;
    }
    CHECK_OK(amq_filter_save(f, buf, len, NULL));
    ref_filter r = ref_of(buf);
    CHECK_MSG(r.mapping ==
                  (strncmp(spec, "fuse", 4) == 0 &&
                   strstr(spec, "ways=4") == NULL &&
                   (r.seg_len & (r.seg_len - 1)) == 0 && r.seg_len > 1),
              "%s n=%zu: mapping %u", spec, n, r.mapping);
    CHECK_MSG(want_len == 0 || r.seg_len == want_len,
              "%s n=%zu: segment length %u, expected %u", spec, n, r.seg_len,
              want_len);
    size_t differ = 0, missing_ref = 0, m = 20000;
    uint64_t *q = malloc(m * sizeof *q);
    uint8_t *out = malloc(m);
    for (size_t i = 0; q != NULL && i < m; i++)
        q[i] = i % 4 == 0 ? h[i % n] : check_next(&s);
    if (q != NULL && out != NULL) {
        amq_filter_contains_batch(f, q, m, out);
        for (size_t i = 0; i < m; i++) {
            bool want = ref_contains(&r, q[i]);
            differ += want != amq_filter_contains_hash(f, q[i]);
            differ += want != (out[i] != 0);
        }
    }
    for (size_t i = 0; i < n; i++)
        missing_ref += !ref_contains(&r, h[i]);
    CHECK_MSG(differ == 0 && missing_ref == 0,
              "%s n=%zu: %zu answers differ from the reference, %zu keys "
              "missing from it",
              spec, n, differ, missing_ref);
    free(q), free(out), free(buf), free(h);
    amq_filter_free(f);
}

/* Builds are deterministic: same keys, same filter (via the frame). */
static void test_deterministic(void) {
    check_seed = 6;
    size_t n = 5000;
    uint64_t *h = keys(n, 6);
    amq_filter *a = NULL, *b = NULL;
    CHECK_OK(amq_filter_build("xor16", h, n, 0.0, NULL, &a, NULL));
    CHECK_OK(amq_filter_build("xor16", h, n, 0.0, NULL, &b, NULL));
    if (a != NULL && b != NULL) {
        size_t la = amq_filter_serialized_size(a), lb;
        uint8_t *fa = malloc(la), *fb = malloc(la);
        CHECK_OK(amq_filter_save(a, fa, la, NULL));
        CHECK_OK(amq_filter_save(b, fb, la, &lb));
        CHECK(lb == la && memcmp(fa, fb, la) == 0);
        free(fa);
        free(fb);
    }
    amq_filter_free(a);
    amq_filter_free(b);
    free(h);
}

/* Fuse frames of slot mapping 0 (every fuse filter saved before mapping
 * 1): tests/golden/legacy/fuse-map0/segmented-fuse{8,16}.amq, built by
 * that release from keys(20000, 81) and keys(20000, 82) of this file. They
 * load, hold their keys, answer as the format's model (mapping 0) and as
 * the portable reference on fresh keys, and save back unchanged. */
static void test_mapping0(const char *name, uint64_t seed) {
    check_seed = seed;
    char rel[128];
    snprintf(rel, sizeof rel, "legacy/fuse-map0/%s", name);
    size_t len;
    uint8_t *buf = check_golden_file(rel, &len);
    size_t n = 20000, m = 20000, differ = 0, missing = 0;
    uint64_t *h = keys(n, seed), s = seed + 1;
    amq_options scalar = {0};
    scalar.flags = AMQ_OPT_SCALAR;
    amq_filter *f = NULL, *g = NULL;
    if (buf != NULL && len > 128) {
        CHECK_OK(amq_filter_load(buf, len, NULL, &f, NULL));
        CHECK_OK(amq_filter_load(buf, len, &scalar, &g, NULL));
    }
    if (f != NULL && g != NULL && h != NULL) {
        ref_filter r = ref_of(buf);
        CHECK(r.mapping == 0 && r.seg_count > 1 && r.ways == 3);
        for (size_t i = 0; i < n; i++)
            missing +=
                !amq_filter_contains_hash(f, h[i]) || !ref_contains(&r, h[i]);
        for (size_t i = 0; i < m; i++) {
            uint64_t x = check_next(&s);
            bool a = amq_filter_contains_hash(f, x);
            differ += a != ref_contains(&r, x);
            differ += a != amq_filter_contains_hash(g, x);
        }
        CHECK_MSG(missing == 0 && differ == 0,
                  "%s: %zu keys missing, %zu answers differ", name, missing,
                  differ);
        size_t l2 = 0;
        uint8_t *again = check_frame(f, &l2);
        CHECK(again != NULL && l2 == len && memcmp(again, buf, len) == 0);
        free(again);
    }
    amq_filter_free(f);
    amq_filter_free(g);
    free(buf);
    free(h);
}

int main(void) {
    size_t big = check_quick() ? 100000 : 1000000;
    for (unsigned width = 8; width <= 32; width *= 2) {
        test_space_and_rate(width, 1000, width);
        test_space_and_rate(width, big, width + 1);
    }
    test_batch();
    test_edges();
    test_deterministic();
    test_build_memory();
    /* 2470 keys: L = ceil((1.23 n + 32) / 3) = 1024, a power of two, so the
     * xor build takes the shift path too. */
    static const char *const specs[] = {
        "xor8",          "xor16",  "xor32",       "fuse8",
        "fuse16:ways=4", "fuse32", "fuse8:ways=4"};
    static const size_t sizes[] = {1, 2, 3, 100, 2470, 30000, 300000};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
        for (size_t j = 0; j < sizeof sizes / sizeof sizes[0]; j++)
            test_reference(specs[i], sizes[j],
                           sizes[j] == 2470 && specs[i][0] == 'x' ? 1024 : 0);
    test_mapping0("segmented-fuse8.amq", 81);
    test_mapping0("segmented-fuse16.amq", 82);
    return check_report("test_xor");
}
