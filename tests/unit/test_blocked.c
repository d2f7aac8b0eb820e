/*
 * test_blocked.c — the cache-line blocked Bloom filter.
 *
 * The two position layouts documented in src/bloom/blocked.c (block from
 * the high half of the hash; k 9-bit positions either the top bits of
 * t * SALT[j], t the low half (layout 1), or cut from the low half,
 * mix64(h) and mix64(mix64(h)) (layout 0)) are re-implemented here naively
 * over a byte array, so the serialized bits are pinned and every query
 * kernel (each CPU ceiling, single and batch) is checked against a model
 * that shares none of their code. FPR tolerance, used throughout: a
 * measurement over q strangers must lie within 4 binomial standard
 * deviations plus 5% (relative) of amq_blocked_fpr, and below the certified
 * bound (amq_filter_fpr_bound) plus 4 sigma. Filters are made from specs
 * through amq/filter.h; amq_blocked_of gives their shape.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amq/amq.h"
#include "check.h"
#include "core/bits.h"
#include "core/frame.h"

/* ---- the naive model ----------------------------------------------------- */

/* Murmur3's fmix64 (what the library calls mix64). */
static uint64_t fmix64(uint64_t x) {
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    x *= UINT64_C(0xc4ceb9fe1a85ec53);
    x ^= x >> 33;
    return x;
}

/* Layout 1's multipliers as docs/structures.md lists them. */
static const uint32_t salt[16] = {
    0x2560fc7du, 0x65e488b5u, 0x2148f0c9u, 0xb26426c3u,
    0x78c74d37u, 0x8de33921u, 0x55ca90edu, 0x10aea1b1u,
    0x4e4096a5u, 0x00de3e8du, 0x28ba03bbu, 0xa5fd7c0bu,
    0xdb4dd0b7u, 0x1c35618fu, 0x667de3a9u, 0xd989113du};

static unsigned model_position(uint64_t h, unsigned j, unsigned layout) {
    if (layout == 1) {
        uint64_t product = (h & 0xffffffffu) * salt[j]; /* < 2^64 */
        return (unsigned)((product % (UINT64_C(1) << 32)) / (1u << 23));
    }
    uint64_t g = fmix64(h), g2 = fmix64(g);
    if (j < 3)
        return (unsigned)((h & 0xffffffffu) >> (9 * j)) & 511u;
    if (j < 10)
        return (unsigned)(g >> (9 * (j - 3))) & 511u;
    return (unsigned)(g2 >> (9 * (j - 10))) & 511u;
}

static uint64_t model_block(uint64_t h, uint64_t nblocks) {
    return ((h >> 32) * nblocks) >> 32; /* nblocks < 2^32 in these tests */
}

static void model_add(uint8_t *bits, uint64_t nblocks, unsigned k,
                      unsigned layout, uint64_t h) {
    uint8_t *block = bits + 64 * model_block(h, nblocks);
    for (unsigned j = 0; j < k; j++) {
        unsigned p = model_position(h, j, layout);
        block[p / 8] |= (uint8_t)(1u << (p % 8)); /* LE words: bit p */
    }
}

static bool model_contains(const uint8_t *bits, uint64_t nblocks, unsigned k,
                           unsigned layout, uint64_t h) {
    const uint8_t *block = bits + 64 * model_block(h, nblocks);
    for (unsigned j = 0; j < k; j++) {
        unsigned p = model_position(h, j, layout);
        if ((block[p / 8] & (1u << (p % 8))) == 0)
            return false;
    }
    return true;
}

/* ---- helpers ------------------------------------------------------------- */

static const amq_options scalar_opt = {.flags = AMQ_OPT_SCALAR};

static uint64_t *random_hashes(size_t n, uint64_t seed) {
    uint64_t *h = malloc(n * sizeof *h);
    for (size_t i = 0; i < n; i++)
        h[i] = check_next(&seed);
    return h;
}

/* "blocked:blocks=B,k=K,layout=L" (capacity and fpr 0: the spec's explicit
 * shape). */
static amq_status new_shape(uint64_t nblocks, unsigned k, unsigned layout,
                            const amq_options *opt, amq_filter **out) {
    char spec[80];
    snprintf(spec, sizeof spec, "blocked:blocks=%llu,k=%u,layout=%u",
             (unsigned long long)nblocks, k, layout);
    return amq_filter_new(spec, 0, 0, opt, out, NULL);
}

/* Add h[0..n) to f; the adds that failed (none should). */
static size_t add_all_hashes(amq_filter *f, const uint64_t *h, size_t n) {
    size_t failed = 0;
    for (size_t i = 0; i < n; i++)
        failed += amq_filter_add_hash(f, h[i]) != AMQ_OK;
    return failed;
}

static bool within_tolerance(double measured, double theory, double q) {
    double sigma = sqrt(theory * (1.0 - theory) / q);
    return fabs(measured - theory) <= 4.0 * sigma + 0.05 * theory;
}

/* Fill a filter and the model alike through the generic interface, then
 * compare the payload bytes: pins the documented bit layout. */
static void layout_for(uint64_t nblocks, unsigned k, unsigned layout, size_t n,
                       uint64_t seed) {
    char spec[64];
    amq_filter *f = NULL;
    uint8_t *model = calloc((size_t)nblocks, 64);
    uint64_t *h = random_hashes(n, seed);
    check_seed = seed;
    /* the default spec must give layout 1 */
    snprintf(spec, sizeof spec, "blocked:blocks=%llu,k=%u%s",
             (unsigned long long)nblocks, k, layout == 0 ? ",layout=0" : "");
    CHECK_OK(amq_filter_new(spec, 0, 0, NULL, &f, NULL));
    if (f == NULL)
        goto out;
    for (size_t i = 0; i < n; i++) {
        CHECK_OK(amq_filter_add_hash(f, h[i]));
        model_add(model, nblocks, k, layout, h[i]);
    }
    size_t size = amq_filter_serialized_size(f), written = 0;
    uint8_t *buf = malloc(size);
    CHECK_OK(amq_filter_save(f, buf, size, &written));
    size_t table = (size_t)nblocks * 64;
    /* The payload is the last table bytes before the 8-byte checksum (the
     * table is a multiple of 8, so there is no padding). */
    CHECK_MSG(memcmp(buf + size - 8 - table, model, table) == 0,
              "layout %u differs from the model (blocks=%llu k=%u)", layout,
              (unsigned long long)nblocks, k);
    size_t disagree = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t s = check_next(&seed);
        disagree += amq_filter_contains_hash(f, s) !=
                    model_contains(model, nblocks, k, layout, s);
    }
    CHECK_MSG(disagree == 0, "%zu strangers answered unlike the model",
              disagree);
    free(buf);
out:
    amq_filter_free(f);
    free(model);
    free(h);
}

static void test_layout(void) {
    size_t n = check_quick() ? 5000 : 50000;
    for (unsigned layout = 0; layout <= 1; layout++) {
        for (unsigned k = 1; k <= 16; k++)
            layout_for(n / 40 + k, k, layout, n, 100 + k + 20 * layout);
        layout_for(1, 7, layout, 60, 99);
    }
}

/* ---- scalar, AVX2, AVX-512, single and batch agree ------------------------ */

/* The reference (AMQ_OPT_SCALAR) against the kernel chosen under the CPU
 * ceiling `cap`, on the same random table. */
static void agree_for(uint64_t nblocks, unsigned k, unsigned layout, int cap,
                      size_t n, uint64_t seed, bool mixed) {
    uint64_t *present = random_hashes(n, seed);
    uint64_t *absent = random_hashes(n, seed + 1000);
    uint8_t *out_s = malloc(n), *out_v = malloc(n);
    amq_filter *s = NULL, *v = NULL;
    check_seed = seed;
    CHECK_OK(new_shape(nblocks, k, layout, &scalar_opt, &s));
    amq__cpu_cap(cap);
    CHECK_OK(new_shape(nblocks, k, layout, NULL, &v));
    amq__cpu_cap(AMQ__CPU_MAX);
    if (s == NULL || v == NULL)
        goto out;
    CHECK(amq_blocked_layout(amq_blocked_of(s)) == layout &&
          amq_blocked_layout(amq_blocked_of(v)) == layout);
    CHECK(add_all_hashes(s, present, n) == 0);
    CHECK(add_all_hashes(v, present, n) == 0);
    for (int set = 0; set < 2; set++) {
        const uint64_t *h = set ? absent : present;
        size_t bad = 0, negatives = 0, positives = 0;
        amq_filter_contains_batch(s, h, n, out_s);
        amq_filter_contains_batch(v, h, n, out_v);
        for (size_t i = 0; i < n; i++) {
            bool one_s = amq_filter_contains_hash(s, h[i]);
            bool one_v = amq_filter_contains_hash(v, h[i]);
            bad += out_s[i] != one_s || out_v[i] != one_s || one_v != one_s;
            negatives += !one_s;
            positives += one_s;
        }
        CHECK_MSG(bad == 0,
                  "%zu disagreements (blocks=%llu k=%u layout %u cap %d set "
                  "%d)",
                  bad, (unsigned long long)nblocks, k, layout, cap, set);
        if (set == 0)
            CHECK_MSG(negatives == 0, "%zu false negatives", negatives);
        /* Strangers must exercise both answers, or agreement means little. */
        if (set == 1 && mixed)
            CHECK_MSG(positives > 0 && negatives > 0,
                      "degenerate: %zu yes, %zu no", positives, negatives);
    }
out:
    amq_filter_free(s);
    amq_filter_free(v);
    free(present);
    free(absent);
    free(out_s);
    free(out_v);
}

static void test_paths_agree(void) {
    size_t n = check_quick() ? 10000 : 50000;
    const int caps[] = {AMQ__CPU_SCALAR, AMQ__CPU_AVX2, AMQ__CPU_AVX512,
                        AMQ__CPU_AVX512_EXT};
    const uint64_t sizes[] = {1, 2, 3, 1001, 40001};
    for (unsigned layout = 0; layout <= 1; layout++) {
        for (size_t c = 0; c < 3; c++) {
            uint64_t seed = 200 + 100 * layout + 40 * c;
            for (unsigned k = 1; k <= 16; k++) /* ~8 bits/key */
                agree_for(n * 8 / 512 + 1, k, layout, caps[c], n, seed + k,
                          true);
            for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
                agree_for(sizes[i], 7 + 6 * (i & 1), layout, caps[c], n / 4,
                          seed + 20 + i, false);
            /* a batch shorter than the prefetch window */
            agree_for(64, 5, layout, caps[c], 5, seed + 30, false);
        }
    }
}

/* ---- no false negatives, FPR against theory and bound -------------------- */

static void fpr_for(uint64_t nblocks, unsigned k, size_t n, size_t q,
                    uint64_t seed) {
    uint64_t *keys = random_hashes(n, seed),
             *strangers = random_hashes(q, ~seed);
    uint8_t *out = malloc(q > n ? q : n);
    amq_filter *b = NULL;
    check_seed = seed;
    CHECK_OK(new_shape(nblocks, k, AMQ_BLOCKED_LAYOUT_SALTED, NULL, &b));
    if (b == NULL)
        goto out;
    CHECK(add_all_hashes(b, keys, n) == 0);
    amq_filter_contains_batch(b, keys, n, out);
    size_t missing = 0, fp = 0;
    for (size_t i = 0; i < n; i++)
        missing += out[i] == 0;
    CHECK_MSG(missing == 0, "%zu false negatives", missing);
    amq_filter_contains_batch(b, strangers, q, out);
    for (size_t i = 0; i < q; i++)
        fp += out[i];
    double measured = (double)fp / (double)q;
    double bpk = 512.0 * (double)nblocks / (double)n;
    double theory = amq_blocked_fpr(bpk, k, 512);
    double bound = amq_filter_fpr_bound(b);
    double sigma = sqrt(theory * (1.0 - theory) / (double)q);
    CHECK_MSG(within_tolerance(measured, theory, (double)q),
              "%.2f bits/key k=%u: measured %.6f, theory %.6f", bpk, k,
              measured, theory);
    CHECK_MSG(measured <= bound + 4.0 * sigma, "measured %.6f above bound %.6f",
              measured, bound);
    printf("  blocked %.2f bits/key k=%2u: measured FPR %.6f, theory %.6f, "
           "textbook %.6f\n",
           bpk, k, measured, theory, amq_bloom_fpr(bpk, 1.0, k));
out:
    amq_filter_free(b);
    free(keys);
    free(strangers);
    free(out);
}

static void test_fpr(void) {
    size_t n = check_quick() ? 50000 : 1000000, q = n;
    fpr_for(n * 10 / 512, 7, n, q, 301);
    fpr_for(n * 10 / 512, 2, n, q, 302);
    fpr_for(n * 8 / 512, 8, n, q, 303);
    fpr_for(n * 16 / 512, 11, n, q, 304);
    fpr_for(n * 20 / 512, 16, n, q, 305);

    /* Sizing meets the target at capacity, with the fewest blocks. */
    const double targets[] = {0.1, 0.01, 0.001, 1e-4};
    for (size_t t = 0; t < 4; t++) {
        amq_filter *f = NULL;
        CHECK_OK(amq_filter_new("blocked", n, targets[t], NULL, &f, NULL));
        if (f == NULL)
            continue;
        const amq_blocked *b = amq_blocked_of(f);
        uint64_t nb = amq_blocked_blocks(b);
        double bpk = 512.0 * (double)nb / (double)n;
        CHECK(amq_blocked_layout(b) == AMQ_BLOCKED_LAYOUT_SALTED);
        CHECK(amq_filter_size_bytes(f) == nb * 64);
        CHECK(amq_blocked_fpr(bpk, amq_blocked_k(b), 512) <= targets[t]);
        double fewer = 512.0 * (double)(nb - 1) / (double)n;
        for (unsigned k = 1; k <= 16; k++)
            CHECK(amq_blocked_fpr(fewer, k, 512) > targets[t]);
        amq_filter_free(f);
    }
    /* What the generic interface returns: a bad target is AMQ_ERR_INVALID,
     * a spec key out of range AMQ_ERR_SPEC; *out is NULL after each. */
    amq_filter *f = (amq_filter *)&f;
    CHECK_STATUS(amq_filter_new("blocked", 0, 0.01, NULL, &f, NULL),
                 AMQ_ERR_INVALID);
    CHECK(f == NULL);
    CHECK_STATUS(amq_filter_new("blocked", 10, 0.0, NULL, &f, NULL),
                 AMQ_ERR_INVALID);
    CHECK_STATUS(new_shape(0, 7, 1, NULL, &f), AMQ_ERR_SPEC);
    CHECK_STATUS(new_shape(10, 0, 1, NULL, &f), AMQ_ERR_SPEC);
    CHECK_STATUS(new_shape(10, 17, 1, NULL, &f), AMQ_ERR_SPEC);
    CHECK_STATUS(new_shape(10, 7, 2, NULL, &f), AMQ_ERR_SPEC);
    CHECK_STATUS(new_shape(UINT64_MAX, 7, 1, NULL, &f), AMQ_ERR_SPEC);
    CHECK(f == NULL);

    /* The curve's limits: nothing stored, nothing falsely reported. */
    CHECK(amq_blocked_fpr(1e9, 8, 512) < 1e-12);
    CHECK(amq_blocked_fpr(1e-3, 8, 512) > 0.999);
    CHECK(amq_blocked_fpr(0.0, 8, 512) == 1.0);
    CHECK(amq_blocked_fpr(10.0, 0, 512) == 1.0);
    /* Huge blocks hold nearly the mean load, so the curve must approach
     * the classic filter's; 512-bit blocks must cost more than classic. */
    for (unsigned k = 2; k <= 16; k += 7) {
        double classic = amq_bloom_fpr(12.0, 1.0, k);
        double huge = amq_blocked_fpr(12.0, k, 1u << 24);
        CHECK_MSG(fabs(huge - classic) <= 1e-3 * classic, "k=%u %g vs %g", k,
                  huge, classic);
        CHECK(amq_blocked_fpr(12.0, k, 512) > classic);
    }
}

/* ---- concurrent adds ------------------------------------------------------- */

typedef struct adder {
    amq_filter *f;
    const uint64_t *h;
    size_t n;
} adder;

static void *add_all(void *arg) {
    adder *a = arg;
    for (size_t i = 0; i < a->n; i++)
        amq_filter_add_hash(a->f, a->h[i]);
    return NULL;
}

static void concurrent_for(const char *spec) {
    size_t n = check_quick() ? 50000 : 400000;
    uint64_t *h = random_hashes(n, 401);
    amq_options copt = {.flags = AMQ_OPT_CONCURRENT};
    amq_filter *par = NULL, *seq = NULL;
    check_seed = 401;
    CHECK_OK(amq_filter_new(spec, 0, 0, &copt, &par, NULL));
    CHECK_OK(amq_filter_new(spec, 0, 0, NULL, &seq, NULL));
    if (par == NULL || seq == NULL)
        goto out;
    adder a[2] = {{par, h, n / 2}, {par, h + n / 2, n - n / 2}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        CHECK(pthread_create(&t[i], NULL, add_all, &a[i]) == 0);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    for (size_t i = 0; i < n; i++)
        amq_filter_add_hash(seq, h[i]);
    CHECK(amq_filter_items(par) == n);
    CHECK_MSG(check_same_frame(par, seq),
              "%s: concurrent adds differ from sequential", spec);
out:
    amq_filter_free(par);
    amq_filter_free(seq);
    free(h);
}

static void test_concurrent(void) {
    /* Few blocks, so both threads hammer the same words. */
    concurrent_for("blocked:blocks=512,k=8");
    concurrent_for("blocked:blocks=512,k=13,layout=0");
}

/* ---- union and intersection -------------------------------------------------- */

static void test_merge(void) {
    size_t n = check_quick() ? 5000 : 50000;
    uint64_t *ha = random_hashes(n, 501), *hb = random_hashes(n, 502);
    uint64_t *common = random_hashes(n, 503);
    amq_filter *a = NULL, *b = NULL, *c = NULL, *other_k = NULL,
               *other_b = NULL, *other_layout = NULL;
    const unsigned salted = AMQ_BLOCKED_LAYOUT_SALTED;
    check_seed = 501;
    CHECK_OK(new_shape(2000, 7, salted, NULL, &a));
    CHECK_OK(new_shape(2000, 7, salted, NULL, &b));
    CHECK_OK(new_shape(2000, 7, salted, NULL, &c));
    CHECK_OK(new_shape(2000, 8, salted, NULL, &other_k));
    CHECK_OK(new_shape(2001, 7, salted, NULL, &other_b));
    CHECK_OK(new_shape(2000, 7, AMQ_BLOCKED_LAYOUT_MIX, NULL, &other_layout));
    if (!a || !b || !c || !other_k || !other_b || !other_layout)
        goto out;
    size_t failed = 0;
    failed += add_all_hashes(a, ha, n) + add_all_hashes(a, common, n);
    failed += add_all_hashes(b, hb, n) + add_all_hashes(b, common, n);
    failed += add_all_hashes(c, ha, n) + add_all_hashes(c, common, n);
    CHECK(failed == 0);
    CHECK_STATUS(amq_filter_union(a, other_k), AMQ_ERR_INCOMPATIBLE);
    CHECK_STATUS(amq_filter_union(a, other_b), AMQ_ERR_INCOMPATIBLE);
    CHECK_STATUS(amq_filter_intersect(a, other_k), AMQ_ERR_INCOMPATIBLE);
    CHECK_STATUS(amq_filter_intersect(a, other_b), AMQ_ERR_INCOMPATIBLE);
    CHECK_STATUS(amq_filter_union(a, other_layout), AMQ_ERR_INCOMPATIBLE);
    CHECK_STATUS(amq_filter_intersect(other_layout, a), AMQ_ERR_INCOMPATIBLE);
    CHECK(amq_filter_items(a) == 2 * n);

    CHECK_OK(amq_filter_intersect(c, b)); /* c = a ∩ b */
    CHECK_OK(amq_filter_union(a, b));     /* a = a ∪ b */
    size_t lost_u = 0, lost_i = 0, extra = 0;
    for (size_t i = 0; i < n; i++) {
        lost_u += !amq_filter_contains_hash(a, ha[i]) ||
                  !amq_filter_contains_hash(a, hb[i]) ||
                  !amq_filter_contains_hash(a, common[i]);
        lost_i += !amq_filter_contains_hash(c, common[i]);
        /* The intersection answers yes only where both sides do. */
        extra += amq_filter_contains_hash(c, ha[i]) &&
                 !amq_filter_contains_hash(b, ha[i]);
    }
    CHECK_MSG(lost_u == 0, "union lost %zu keys", lost_u);
    CHECK_MSG(lost_i == 0, "intersection lost %zu common keys", lost_i);
    CHECK_MSG(extra == 0, "intersection says yes where b says no: %zu", extra);
    CHECK(amq_filter_items(a) == 4 * n && amq_filter_items(c) == 2 * n);
out:
    amq_filter_free(a);
    amq_filter_free(b);
    amq_filter_free(c);
    amq_filter_free(other_k);
    amq_filter_free(other_b);
    amq_filter_free(other_layout);
    free(ha);
    free(hb);
    free(common);
}

/* ---- the generic interface: spec, frame, views, corrupt params ------------ */

static void test_spec(void) {
    amq_filter *f = NULL;
    amq_diag diag;
    char desc[64];
    CHECK_STATUS(amq_filter_new("blocked", 0, 0, NULL, &f, &diag),
                 AMQ_ERR_SPEC);
    CHECK_STATUS(amq_filter_new("blocked:k=17", 100, 0.01, NULL, &f, &diag),
                 AMQ_ERR_SPEC);
    CHECK_STATUS(amq_filter_new("blocked:k=0", 100, 0.01, NULL, &f, &diag),
                 AMQ_ERR_SPEC);
    CHECK_STATUS(amq_filter_new("blocked:pow2=1", 100, 0.01, NULL, &f, &diag),
                 AMQ_ERR_SPEC);
    CHECK_OK(amq_filter_new("blocked:blocks=100", 0, 0, NULL, &f, &diag));
    amq_filter_describe(f, desc, sizeof desc);
    CHECK_MSG(strcmp(desc, "blocked:blocks=100,k=8") == 0, "%s", desc);
    amq_filter_free(f);
    f = NULL;
    CHECK_OK(amq_filter_new("blocked:k=4", 100000, 0.01, NULL, &f, &diag));
    amq_filter_describe(f, desc, sizeof desc);
    CHECK_MSG(strstr(desc, ",k=4") != NULL, "%s", desc);
    amq_filter_free(f);

    /* Curves: with k and without (best k), inverse of each other. */
    double fpr = 0, bits = 0;
    CHECK_OK(amq_curve_fpr("blocked:k=7", 10.0, &fpr));
    CHECK(fpr == amq_blocked_fpr(10.0, 7, 512));
    CHECK_OK(amq_curve_bits("blocked:k=7", fpr, &bits));
    CHECK_MSG(fabs(bits - 10.0) < 1e-6, "curve_bits %.9f", bits);
    double best = 0;
    CHECK_OK(amq_curve_fpr("blocked", 10.0, &best));
    CHECK(best <= fpr);
    CHECK_OK(amq_curve_bits("blocked", 0.01, &bits));
    CHECK_OK(amq_curve_fpr("blocked", bits, &best));
    CHECK_MSG(fabs(best - 0.01) < 1e-6, "round trip %.9f", best);
}

static void test_frame(void) {
    amq_filter *f = NULL, *g = NULL, *v = NULL;
    amq_diag diag;
    void *mem = NULL;
    check_seed = 601;
    CHECK_OK(amq_filter_new("blocked", 20000, 0.01, NULL, &f, &diag));
    if (f == NULL)
        return;
    for (uint32_t i = 0; i < 20000; i++)
        amq_filter_add(f, &i, sizeof i);
    size_t size = amq_filter_serialized_size(f), written = 0;
    if (posix_memalign(&mem, 64, size) != 0)
        return;
    uint8_t *buf = mem;
    CHECK_OK(amq_filter_save(f, buf, size, &written));
    CHECK_OK(amq_filter_load(buf, size, NULL, &g, &diag));
    CHECK_OK(amq_filter_view(buf, size, NULL, &v, &diag));
    if (g != NULL && v != NULL) {
        size_t missing = 0;
        for (uint32_t i = 0; i < 20000; i++)
            missing += !amq_filter_contains(g, &i, sizeof i) ||
                       !amq_filter_contains(v, &i, sizeof i);
        CHECK(missing == 0);
        CHECK(check_same_frame(f, g) && check_same_frame(f, v));
        CHECK(amq_filter_fpr_bound(v) == amq_filter_fpr_bound(f));
        uint32_t key = 1;
        CHECK_STATUS(amq_filter_add(v, &key, sizeof key), AMQ_ERR_READONLY);
    }
    amq_filter_free(g);
    amq_filter_free(v);
    g = NULL;

    /* params: blocks u64 | k u32 | layout u32 | items u64, after the
     * 64-byte header and 16 generic bytes; resealed so only the type's own
     * validation can object. */
    const size_t tp = 64 + 16;
    const struct {
        size_t off;
        uint8_t x;
    } cases[] = {{tp + 0, 0x01}, {tp + 7, 0x01},  {tp + 8, 0xff},
                 {tp + 8, 0x1f}, {tp + 12, 0x02}, {tp + 15, 0x80}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t saved = buf[cases[i].off];
        buf[cases[i].off] ^= cases[i].x;
        amq__frame_seal(buf, size);
        CHECK_STATUS(amq_filter_load(buf, size, NULL, &g, &diag),
                     AMQ_ERR_CORRUPT);
        CHECK(g == NULL);
        buf[cases[i].off] = saved;
        amq__frame_seal(buf, size);
    }
    CHECK_OK(amq_filter_load(buf, size, NULL, &g, &diag));
    amq_filter_free(g);
    amq_filter_free(f);
    free(mem);
}

int main(void) {
    test_layout();
    test_paths_agree();
    test_fpr();
    test_concurrent();
    test_merge();
    test_spec();
    test_frame();
    return check_report("blocked");
}
