/*
 * test_sbbf.c — the split-block Bloom filter against the Parquet spec.
 *
 * The reference here is written from the spec's prose alone (parquet-format
 * BloomFilter.md), byte by byte and deliberately naive, so the library's
 * word-at-a-time and AVX2 code is checked against something that shares none
 * of its shortcuts. FPR tolerance, used throughout: a measurement over q
 * strangers must lie within 4 binomial standard deviations plus 5% (relative)
 * of the theoretical rate, and below the certified bound plus 4 sigma. Filters
 * are made from specs through amq/filter.h (amq_sbbf_from_parquet for a
 * foreign bitset); amq_sbbf_of gives the Parquet bitset, blocks and fold.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amq/amq.h"
#include "check.h"
#include "core/frame.h"

/* ---- the naive reference, straight from the spec ------------------------ */

static const uint32_t spec_salt[8] = {0x47b6137b, 0x44974d91, 0x8824ad5b,
                                      0xa2b7289d, 0x705495c7, 0x2df1424b,
                                      0x9efc4947, 0x5c6bfb31};

static uint32_t le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static void put_le32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/* "mask(x): for each i, y = x * salt[i]; set bit y >> 27 of word i". */
static uint32_t spec_mask_word(uint32_t x, int i) {
    uint32_t y = x * spec_salt[i];
    return UINT32_C(1) << (y >> 27);
}

static uint64_t spec_block_index(uint64_t hash, uint64_t nblocks) {
    return ((hash >> 32) * nblocks) >> 32;
}

static void spec_insert(uint8_t *bitset, uint64_t nblocks, uint64_t hash) {
    uint8_t *block = bitset + 32 * spec_block_index(hash, nblocks);
    for (int i = 0; i < 8; i++)
        put_le32(block + 4 * i,
                 le32(block + 4 * i) | spec_mask_word((uint32_t)hash, i));
}

static bool spec_check(const uint8_t *bitset, uint64_t nblocks, uint64_t hash) {
    const uint8_t *block = bitset + 32 * spec_block_index(hash, nblocks);
    for (int i = 0; i < 8; i++) {
        uint32_t m = spec_mask_word((uint32_t)hash, i);
        if ((le32(block + 4 * i) & m) == 0)
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

/* "sbbf:blocks=N" (capacity and fpr 0: the spec's explicit size). */
static amq_status new_blocks(uint64_t nblocks, const amq_options *opt,
                             amq_filter **out) {
    char spec[64];
    snprintf(spec, sizeof spec, "sbbf:blocks=%llu",
             (unsigned long long)nblocks);
    return amq_filter_new(spec, 0, 0, opt, out, NULL);
}

/* Add h[0..n) to f; the adds that failed (none should). No CHECK here:
 * workers call it. */
static size_t add_all_hashes(amq_filter *f, const uint64_t *h, size_t n) {
    size_t failed = 0;
    for (size_t i = 0; i < n; i++)
        failed += amq_filter_add_hash(f, h[i]) != AMQ_OK;
    return failed;
}

static bool same_bitset(const amq_filter *a, const amq_filter *b) {
    size_t la, lb;
    const uint8_t *pa = amq_sbbf_parquet_bitset(amq_sbbf_of(a), &la);
    const uint8_t *pb = amq_sbbf_parquet_bitset(amq_sbbf_of(b), &lb);
    return la == lb && memcmp(pa, pb, la) == 0;
}

static uint64_t blocks_of(const amq_filter *f) {
    return amq_sbbf_blocks(amq_sbbf_of(f));
}

static bool within_tolerance(double measured, double theory, double q) {
    double sigma = sqrt(theory * (1.0 - theory) / q);
    return fabs(measured - theory) <= 4.0 * sigma + 0.05 * theory;
}

/* ---- (1) Parquet conformance ----------------------------------------------- */

static void test_xxh64_is_parquets_hash(void) {
    amq_hasher h;
    CHECK_OK(amq_hasher_init(&h, AMQ_HASH_XXH64, 0, NULL));
    /* XXH64 of the empty input with seed 0, from the xxHash reference. */
    CHECK(amq_hash64(&h, "", 0) == UINT64_C(0xEF46DB3751D8E999));

    amq_filter *f = NULL;
    CHECK_OK(amq_filter_new("sbbf", 1000, 0.01, NULL, &f, NULL));
    if (f == NULL)
        return;
    const amq_hasher *fh = amq_filter_hasher(f);
    CHECK(fh->kind == AMQ_HASH_XXH64 && fh->seed == 0);
    CHECK(amq_filter_hash(f, "parquet", 7) == amq_hash64(&h, "parquet", 7));
    amq_filter_free(f);
}

static void conformance_for(uint64_t nblocks, size_t n, uint64_t seed) {
    amq_hasher hasher;
    amq_filter *lib = NULL, *imported = NULL;
    uint8_t *naive = calloc((size_t)nblocks, 32);
    uint64_t *hashes = malloc(n * sizeof *hashes);
    check_seed = seed;
    CHECK_OK(amq_hasher_init(&hasher, AMQ_HASH_XXH64, 0, NULL));
    CHECK_OK(new_blocks(nblocks, NULL, &lib));
    if (lib == NULL)
        goto out;
    for (size_t i = 0; i < n; i++) {
        uint8_t key[24];
        size_t len = 1 + (size_t)(check_next(&seed) % sizeof key);
        for (size_t j = 0; j < len; j++)
            key[j] = (uint8_t)check_next(&seed);
        hashes[i] = amq_hash64(&hasher, key, len);
        spec_insert(naive, nblocks, hashes[i]);
    }
    CHECK(add_all_hashes(lib, hashes, n) == 0);
    size_t len;
    const uint8_t *bits = amq_sbbf_parquet_bitset(amq_sbbf_of(lib), &len);
    CHECK(len == (size_t)nblocks * 32);
    CHECK_MSG(memcmp(bits, naive, len) == 0,
              "bitset differs from the spec reference (%llu blocks)",
              (unsigned long long)nblocks);

    /* The naive bitset, imported, must answer every key, on both paths. */
    for (int pass = 0; pass < 2; pass++) {
        CHECK_OK(amq_sbbf_from_parquet(naive, len, pass ? &scalar_opt : NULL,
                                       &imported));
        if (imported == NULL)
            continue;
        size_t missing = 0, disagree = 0;
        /* Parquet's hasher, unless opt chose another */
        const amq_hasher *ih = amq_filter_hasher(imported);
        CHECK(ih->kind == AMQ_HASH_XXH64 && ih->seed == 0);
        for (size_t i = 0; i < n; i++) {
            missing += !amq_filter_contains_hash(imported, hashes[i]);
            uint64_t stranger = check_next(&seed);
            disagree += amq_filter_contains_hash(imported, stranger) !=
                        spec_check(naive, nblocks, stranger);
        }
        CHECK_MSG(missing == 0, "%zu keys missing after import", missing);
        CHECK_MSG(disagree == 0, "%zu strangers answered unlike the spec",
                  disagree);
        /* the bitset asked where it lies, one byte off alignment: the same
         * answers and the same bound as the filter made of it */
        uint8_t *odd = malloc(len + 1);
        CHECK(odd != NULL);
        if (pass == 0 && odd != NULL) {
            memcpy(odd + 1, naive, len);
            size_t differ = 0;
            for (size_t i = 0; i < n; i++) {
                uint64_t stranger = check_next(&seed);
                differ += !amq_sbbf_parquet_contains(odd + 1, len, hashes[i]);
                differ += amq_sbbf_parquet_contains(odd + 1, len, stranger) !=
                          spec_check(naive, nblocks, stranger);
            }
            CHECK_MSG(differ == 0, "%zu in-place answers differ", differ);
            CHECK(amq_sbbf_parquet_bound(odd + 1, len) ==
                  amq_filter_fpr_bound(imported));
        }
        free(odd);
        amq_filter_free(imported);
        imported = NULL;
    }
out:
    amq_filter_free(lib);
    free(naive);
    free(hashes);
}

static void test_conformance(void) {
    size_t n = check_quick() ? 20000 : 100000;
    conformance_for(n * 10 / 256 + 1, n, 11); /* about 10 bits per key   */
    conformance_for(4096, n, 12);             /* Parquet-style power of 2 */
    conformance_for(1, 100, 13);
    conformance_for(12345, n / 4, 14);
}

static void test_from_parquet_rejects(void) {
    uint8_t buf[64] = {0};
    /* bytes that are not a bitset answer "maybe", bound 1 */
    CHECK(amq_sbbf_parquet_contains(buf, 0, 1) &&
          amq_sbbf_parquet_contains(buf, 33, 1) &&
          amq_sbbf_parquet_contains(NULL, 64, 1));
    CHECK(!amq_sbbf_parquet_contains(buf, 64, 1));
    CHECK(amq_sbbf_parquet_bound(buf, 31) == 1.0 &&
          amq_sbbf_parquet_bound(buf, 64) == 0.0);
    amq_filter *f = (amq_filter *)&f;
    CHECK_STATUS(amq_sbbf_from_parquet(buf, 0, NULL, &f), AMQ_ERR_INVALID);
    CHECK(f == NULL);
    CHECK_STATUS(amq_sbbf_from_parquet(buf, 33, NULL, &f), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_sbbf_from_parquet(NULL, 32, NULL, &f), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_sbbf_from_parquet(buf, 32, NULL, NULL), AMQ_ERR_INVALID);
    CHECK_OK(amq_sbbf_from_parquet(buf, 64, NULL, &f));
    CHECK(f != NULL && blocks_of(f) == 2 && amq_filter_items(f) == 0);
    CHECK(f != NULL && amq_filter_size_bytes(f) == 64);
    amq_filter_free(f);
}

/* ---- (2) fold ---------------------------------------------------------------- */

static void test_fold(void) {
    size_t n = check_quick() ? 5000 : 50000;
    uint64_t *h = random_hashes(n, 21);
    amq_filter *big = NULL;
    check_seed = 21;
    CHECK_OK(new_blocks(4096, NULL, &big));
    if (big == NULL)
        goto out;
    CHECK(add_all_hashes(big, h, n) == 0);
    for (uint64_t blocks = 2048; blocks >= 1; blocks /= 2) {
        amq_filter *direct = NULL;
        CHECK_OK(amq_sbbf_fold(amq_sbbf_of(big)));
        CHECK(blocks_of(big) == blocks);
        CHECK(amq_filter_size_bytes(big) == blocks * 32);
        CHECK_OK(new_blocks(blocks, NULL, &direct));
        if (direct == NULL)
            break;
        CHECK(add_all_hashes(direct, h, n) == 0);
        CHECK_MSG(same_bitset(big, direct), "fold to %llu blocks differs",
                  (unsigned long long)blocks);
        CHECK_MSG(check_same_frame(big, direct),
                  "frame after folding to %llu blocks differs",
                  (unsigned long long)blocks);
        size_t missing = 0;
        for (size_t i = 0; i < n; i++)
            missing += !amq_filter_contains_hash(big, h[i]);
        CHECK_MSG(missing == 0, "%zu keys lost folding to %llu blocks", missing,
                  (unsigned long long)blocks);
        amq_filter_free(direct);
    }
    CHECK_STATUS(amq_sbbf_fold(amq_sbbf_of(big)), AMQ_ERR_INVALID); /* 1 */
    CHECK_STATUS(amq_sbbf_fold(NULL), AMQ_ERR_INVALID);
    amq_filter *odd = NULL;
    CHECK_OK(new_blocks(7, NULL, &odd));
    CHECK_STATUS(amq_sbbf_fold(amq_sbbf_of(odd)), AMQ_ERR_INVALID);
    CHECK(blocks_of(odd) == 7);
    amq_filter_free(odd);

    /* A view's table is the caller's buffer: fold refuses it, unchanged. */
    amq_filter *even = NULL, *view = NULL;
    size_t len = 0;
    CHECK_OK(new_blocks(64, NULL, &even));
    uint8_t *frame = even != NULL ? check_frame(even, &len) : NULL;
    if (frame != NULL) {
        CHECK_OK(amq_filter_view(frame, len, NULL, &view, NULL));
        CHECK(view != NULL && amq_filter_is_view(view));
        CHECK_STATUS(amq_sbbf_fold(amq_sbbf_of(view)), AMQ_ERR_INVALID);
        CHECK(view != NULL && blocks_of(view) == 64);
        amq_filter_free(view);
    }
    free(frame);
    amq_filter_free(even);
out:
    amq_filter_free(big);
    free(h);
}

/* ---- (3) scalar, AVX2, single and batch agree ------------------------------ */

static void agree_for(uint64_t nblocks, size_t n, uint64_t seed) {
    uint64_t *present = random_hashes(n, seed);
    uint64_t *absent = random_hashes(n, seed + 1000);
    uint8_t *out_s = malloc(n), *out_v = malloc(n);
    amq_filter *s = NULL, *v = NULL;
    check_seed = seed;
    CHECK_OK(new_blocks(nblocks, &scalar_opt, &s));
    CHECK_OK(new_blocks(nblocks, NULL, &v));
    if (s == NULL || v == NULL)
        goto out;
    CHECK(add_all_hashes(s, present, n) == 0);
    CHECK(add_all_hashes(v, present, n) == 0);
    CHECK_MSG(same_bitset(s, v), "scalar and SIMD adds differ (%llu blocks)",
              (unsigned long long)nblocks);
    for (int set = 0; set < 2; set++) {
        const uint64_t *h = set ? absent : present;
        size_t bad = 0, negatives = 0;
        amq_filter_contains_batch(s, h, n, out_s);
        amq_filter_contains_batch(v, h, n, out_v);
        for (size_t i = 0; i < n; i++) {
            bool one_s = amq_filter_contains_hash(s, h[i]);
            bool one_v = amq_filter_contains_hash(v, h[i]);
            bad += out_s[i] != one_s || out_v[i] != one_s || one_v != one_s;
            negatives += !one_s;
        }
        CHECK_MSG(bad == 0, "%zu disagreements (%llu blocks, set %d)", bad,
                  (unsigned long long)nblocks, set);
        if (set == 0)
            CHECK_MSG(negatives == 0, "%zu false negatives", negatives);
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
    size_t n = check_quick() ? 20000 : 100000;
    const uint64_t sizes[] = {1, 2, 3, 17, 1001, 4096, 40001};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        agree_for(sizes[i], n, 31 + i);
    /* Short batches exercise the prefetch prologue on its own. */
    agree_for(64, 5, 40);
}

/* ---- (4) no false negatives, FPR against theory and bound ---------------- */

static void fpr_for(uint64_t nblocks, size_t n, size_t q, uint64_t seed,
                    double *measured_out) {
    uint64_t *keys = random_hashes(n, seed),
             *strangers = random_hashes(q, ~seed);
    uint8_t *out = malloc(q > n ? q : n);
    amq_filter *b = NULL;
    check_seed = seed;
    CHECK_OK(new_blocks(nblocks, NULL, &b));
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
    double bpk = 256.0 * (double)nblocks / (double)n;
    double theory = amq_sbbf_fpr(bpk), bound = amq_filter_fpr_bound(b);
    double sigma = sqrt(theory * (1.0 - theory) / (double)q);
    CHECK_MSG(within_tolerance(measured, theory, (double)q),
              "%.2f bits/key: measured %.5f, theory %.5f", bpk, measured,
              theory);
    CHECK_MSG(measured <= bound + 4.0 * sigma, "measured %.5f above bound %.5f",
              measured, bound);
    printf("  sbbf %.2f bits/key: measured FPR %.5f, theory %.5f, bound "
           "%.5f\n",
           bpk, measured, theory, bound);
    if (measured_out != NULL)
        *measured_out = measured;
out:
    amq_filter_free(b);
    free(keys);
    free(strangers);
    free(out);
}

static void test_fpr(void) {
    size_t n = check_quick() ? 50000 : 1000000, q = n;
    double at_10_5;
    /* Parquet's table: 10.5 bits per key gives about 1%. */
    double theory = amq_sbbf_fpr(10.5);
    CHECK_MSG(theory > 0.008 && theory < 0.012, "amq_sbbf_fpr(10.5) = %g",
              theory);
    fpr_for((uint64_t)llround((double)n * 10.5 / 256.0), n, q, 41, &at_10_5);
    CHECK_MSG(at_10_5 > 0.008 && at_10_5 < 0.012, "measured %g at 10.5",
              at_10_5);
    fpr_for(n * 5 / 256, n, q, 42, NULL);
    fpr_for(n * 16 / 256, n, q, 43, NULL);
    fpr_for(n * 24 / 256, n, q, 44, NULL);

    /* Sizing: the filter meets its target at capacity. */
    const double targets[] = {0.1, 0.01, 0.001};
    for (size_t t = 0; t < 3; t++) {
        amq_filter *f = NULL;
        CHECK_OK(amq_filter_new("sbbf", n, targets[t], NULL, &f, NULL));
        if (f == NULL)
            continue;
        double bpk = 256.0 * (double)blocks_of(f) / (double)n;
        CHECK(amq_sbbf_fpr(bpk) <= targets[t]);
        CHECK(amq_sbbf_fpr(256.0 * (double)(blocks_of(f) - 1) / (double)n) >
              targets[t]);
        amq_filter_free(f);
    }
    /* What the generic interface returns: a bad target is AMQ_ERR_INVALID,
     * one no table of fewer than 2^32 blocks meets AMQ_ERR_OVERFLOW, a spec
     * key out of range AMQ_ERR_SPEC; *out is NULL after each. */
    amq_filter *f = (amq_filter *)&f;
    CHECK_STATUS(amq_filter_new("sbbf", 0, 0.01, NULL, &f, NULL),
                 AMQ_ERR_INVALID);
    CHECK(f == NULL);
    CHECK_STATUS(amq_filter_new("sbbf", 10, 1.0, NULL, &f, NULL),
                 AMQ_ERR_INVALID);
    CHECK_STATUS(
        amq_filter_new("sbbf", UINT64_C(1) << 62, 1e-9, NULL, &f, NULL),
        AMQ_ERR_OVERFLOW);
    CHECK_STATUS(new_blocks(0, NULL, &f), AMQ_ERR_SPEC);
    CHECK_STATUS(new_blocks(UINT64_C(1) << 32, NULL, &f), AMQ_ERR_SPEC);
    CHECK(f == NULL);
}

/* ---- (5) concurrent adds ------------------------------------------------ */

typedef struct adder {
    amq_filter *f;
    const uint64_t *h;
    size_t n, failed;
} adder;

static void *add_all(void *arg) {
    adder *a = arg;
    a->failed = add_all_hashes(a->f, a->h, a->n);
    return NULL;
}

static void test_concurrent(void) {
    size_t n = check_quick() ? 50000 : 400000;
    uint64_t *h = random_hashes(n, 51);
    amq_options copt = {.flags = AMQ_OPT_CONCURRENT};
    amq_filter *par = NULL, *seq = NULL;
    check_seed = 51;
    /* Few blocks, so both threads hammer the same words. */
    CHECK_OK(new_blocks(n / 64, &copt, &par));
    CHECK_OK(new_blocks(n / 64, NULL, &seq));
    if (par == NULL || seq == NULL)
        goto out;
    adder a[2] = {{par, h, n / 2, 0}, {par, h + n / 2, n - n / 2, 0}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        CHECK(pthread_create(&t[i], NULL, add_all, &a[i]) == 0);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    CHECK(a[0].failed == 0 && a[1].failed == 0);
    CHECK(add_all_hashes(seq, h, n) == 0);
    CHECK(same_bitset(par, seq));
    CHECK(amq_filter_items(par) == n);
out:
    amq_filter_free(par);
    amq_filter_free(seq);
    free(h);
}

/* ---- (6) union and intersection ----------------------------------------- */

static void test_merge(void) {
    size_t n = check_quick() ? 5000 : 50000;
    uint64_t *ha = random_hashes(n, 61), *hb = random_hashes(n, 62);
    uint64_t *common = random_hashes(n, 63);
    amq_filter *a = NULL, *b = NULL, *c = NULL, *other = NULL;
    check_seed = 61;
    CHECK_OK(new_blocks(1000, NULL, &a));
    CHECK_OK(new_blocks(1000, NULL, &b));
    CHECK_OK(new_blocks(1000, NULL, &c));
    CHECK_OK(new_blocks(1001, NULL, &other));
    if (a == NULL || b == NULL || c == NULL || other == NULL)
        goto out;
    size_t failed = 0;
    failed += add_all_hashes(a, ha, n) + add_all_hashes(a, common, n);
    failed += add_all_hashes(b, hb, n) + add_all_hashes(b, common, n);
    failed += add_all_hashes(c, ha, n) + add_all_hashes(c, common, n);
    CHECK(failed == 0);
    CHECK_STATUS(amq_filter_union(a, other), AMQ_ERR_INCOMPATIBLE);
    CHECK_STATUS(amq_filter_intersect(a, other), AMQ_ERR_INCOMPATIBLE);
    CHECK(same_bitset(a, c)); /* refused merges changed nothing */

    CHECK_OK(amq_filter_intersect(c, b)); /* c = a ∩ b */
    CHECK_OK(amq_filter_union(a, b));     /* a = a ∪ b */
    size_t lost_u = 0, lost_i = 0;
    for (size_t i = 0; i < n; i++) {
        lost_u += !amq_filter_contains_hash(a, ha[i]) ||
                  !amq_filter_contains_hash(a, hb[i]) ||
                  !amq_filter_contains_hash(a, common[i]);
        lost_i += !amq_filter_contains_hash(c, common[i]);
    }
    CHECK_MSG(lost_u == 0, "union lost %zu keys", lost_u);
    CHECK_MSG(lost_i == 0, "intersection lost %zu common keys", lost_i);
    CHECK(amq_filter_items(a) == 4 * n);
    CHECK(amq_filter_items(c) == 2 * n);
    /* Idempotence: a ∪ a = a. */
    amq_filter *copy = NULL;
    size_t len;
    const uint8_t *bits = amq_sbbf_parquet_bitset(amq_sbbf_of(a), &len);
    CHECK_OK(amq_sbbf_from_parquet(bits, len, NULL, &copy));
    if (copy != NULL) {
        CHECK_OK(amq_filter_union(copy, a));
        CHECK(same_bitset(copy, a));
        amq_filter_free(copy);
    }
out:
    amq_filter_free(a);
    amq_filter_free(b);
    amq_filter_free(c);
    amq_filter_free(other);
    free(ha);
    free(hb);
    free(common);
}

/* ---- the generic interface: spec, frame, views, corrupt params ---------- */

static void test_generic(void) {
    amq_filter *f = NULL, *g = NULL, *v = NULL;
    amq_diag diag;
    char desc[64];
    void *buf = NULL;
    check_seed = 71;
    CHECK_STATUS(amq_filter_new("sbbf", 0, 0, NULL, &f, &diag), AMQ_ERR_SPEC);
    CHECK_STATUS(amq_filter_new("sbbf:blocks=0", 0, 0, NULL, &f, &diag),
                 AMQ_ERR_SPEC);
    CHECK_STATUS(amq_filter_new("sbbf:k=3", 100, 0.01, NULL, &f, &diag),
                 AMQ_ERR_SPEC);
    CHECK_OK(amq_filter_new("sbbf:pow2=1", 100000, 0.01, NULL, &f, &diag));
    if (f == NULL)
        return;
    amq_filter_describe(f, desc, sizeof desc);
    CHECK_MSG(strcmp(desc, "sbbf:blocks=8192") == 0, "describe: %s", desc);
    CHECK(amq_filter_size_bytes(f) == 8192 * 32);
    CHECK_OK(amq_filter_new("sbbf:blocks=7", 0, 0, NULL, &g, &diag));
    CHECK_STATUS(amq_filter_union(f, g), AMQ_ERR_INCOMPATIBLE);
    amq_filter_free(g);
    g = NULL;

    for (uint32_t i = 0; i < 20000; i++)
        CHECK_OK(amq_filter_add(f, &i, sizeof i));
    size_t size = amq_filter_serialized_size(f), written = 0;
    CHECK_OK(posix_memalign(&buf, 64, size) == 0 ? AMQ_OK : AMQ_ERR_NOMEM);
    CHECK_OK(amq_filter_save(f, buf, size, &written));
    CHECK(written == size);
    CHECK_OK(amq_filter_load(buf, size, NULL, &g, &diag));
    CHECK_OK(amq_filter_view(buf, size, NULL, &v, &diag));
    if (g != NULL && v != NULL) {
        uint32_t key = 5;
        CHECK(amq_filter_items(g) == 20000 && amq_filter_items(v) == 20000);
        CHECK(amq_filter_contains(g, &key, sizeof key));
        CHECK(amq_filter_contains(v, &key, sizeof key));
        CHECK_STATUS(amq_filter_add(v, &key, sizeof key), AMQ_ERR_READONLY);
        uint8_t *again = malloc(size);
        CHECK_OK(amq_filter_save(v, again, size, &written));
        CHECK(memcmp(again, buf, size) == 0);
        free(again);
    }
    amq_filter_free(g);
    amq_filter_free(v);
    g = v = NULL;

    /* Corrupt parameters, resealed so the checksum passes: the type's own
     * validation must refuse them. Type params start after the 64-byte
     * header and the 16 generic bytes. */
    uint8_t *p = buf;
    const size_t tp = 64 + 16;
    const struct {
        size_t off;
        uint8_t val;
    } cases[] = {
        {tp + 0, 0x01}, {tp + 3, 0x01}, {tp + 16, 0x01}, {tp + 23, 0x80}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t saved = p[cases[i].off];
        p[cases[i].off] ^= cases[i].val;
        amq__frame_seal(p, size);
        CHECK_STATUS(amq_filter_load(p, size, NULL, &g, &diag),
                     AMQ_ERR_CORRUPT);
        CHECK(g == NULL);
        p[cases[i].off] = saved;
        amq__frame_seal(p, size);
    }
    CHECK_OK(amq_filter_load(p, size, NULL, &g, &diag));
    amq_filter_free(g);

    /* Curves agree with the typed mathematics and invert each other. */
    double fpr = 0, bits = 0;
    CHECK_OK(amq_curve_fpr("sbbf", 10.5, &fpr));
    CHECK(fpr == amq_sbbf_fpr(10.5));
    CHECK_OK(amq_curve_bits("sbbf", fpr, &bits));
    CHECK_MSG(fabs(bits - 10.5) < 1e-6, "curve_bits %.9f", bits);
    free(buf);
    amq_filter_free(f);
}

int main(void) {
    test_xxh64_is_parquets_hash();
    test_conformance();
    test_from_parquet_rejects();
    test_fold();
    test_paths_agree();
    test_fpr();
    test_concurrent();
    test_merge();
    test_generic();
    return check_report("sbbf");
}
