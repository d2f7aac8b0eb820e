/*
 * test_contract.c — one contract suite, run over every type in the registry
 * through the generic interface (amq/filter.h). A type added to the registry
 * is covered without touching this file.
 *
 * What every dynamic type must satisfy (DESIGN.md, "Quality bar"):
 *   - no false negatives, for byte keys and pre-hashed keys alike;
 *   - measured false-positive rate below fpr_bound() at the current load and,
 *     at full load, within a statistical tolerance of the type's FPR curve
 *     at the filter's actual bits per key;
 *   - amq_curve_fpr and amq_curve_bits are inverses;
 *   - save -> load -> save gives identical bytes; a zero-copy view answers
 *     like the original and refuses updates;
 *   - every single-bit flip, every truncation and trailing bytes are refused;
 *   - scalar and batch lookups agree (also under AMQ_OPT_SCALAR);
 *   - a batch insert equals the loop of single inserts, byte for byte, on
 *     one thread and on a build's 2 and 3 threads;
 *   - union / intersect obey their laws where the caps say so, and return
 *     AMQ_ERR_UNSUPPORTED (leaving the filter alone) where they do not;
 *   - bad specs and targets are refused with a diagnostic;
 *   - keyed hashing survives the frame and depends on the key;
 *   - agreement with a reference model (a multiset) over random sequences.
 *
 * Static types (AMQ_CAP_STATIC: xor, fuse, ribbon) are built from their
 * whole key set with amq_filter_build (helper `filled`) and checked for
 * every property above except adding: add is AMQ_ERR_UNSUPPORTED, so the
 * half-load and reference-model checks become a build from a multiset
 * with duplicates, and the FPR is checked against fpr_bound() (exact for
 * these types) rather than against the curve at the filter's own bits per
 * key: a fixed-width filter's rate does not move with its size.
 *
 * A forgetting type (AMQ_CAP_FORGETS: stable) promises only its newest
 * key, so every "no false negatives" check asks that of it; the rest of
 * the suite applies unchanged.
 *
 * Statistical checks use fixed seeds (printed on failure) and bounds of four
 * standard deviations plus a stated slack, so they fail on real defects and
 * not by chance.
 */
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/frame.h"
#include "core/par.h"

/* ---- keys ---------------------------------------------------------------- */

/* Key i of stream (seed, tag): 16 bytes, injective in (i, tag) for a fixed
 * seed. Tag 0 keys are inserted, tag 1 keys never are. */
#define TAG_PRESENT 0u
#define TAG_ABSENT 1u
#define KEY_LEN 16

static void make_key(uint64_t seed, uint64_t i, uint32_t tag,
                     uint8_t key[KEY_LEN]) {
    uint64_t a = amq_mix64(i + seed * 0x9e3779b97f4a7c15ULL);
    uint64_t b = ((uint64_t)tag << 32) | (uint32_t)seed;
    memcpy(key, &a, 8);
    memcpy(key + 8, &b, 8);
}

static uint64_t key_hash(const amq_filter *f, uint64_t seed, uint64_t i,
                         uint32_t tag) {
    uint8_t k[KEY_LEN];
    make_key(seed, i, tag, k);
    return amq_filter_hash(f, k, KEY_LEN);
}

/* Add keys [from, to) of stream seed; even ones as bytes, odd ones as
 * hashes, so both entry points are exercised. Returns the first failure. */
static amq_status add_range(amq_filter *f, uint64_t seed, uint64_t from,
                            uint64_t to) {
    for (uint64_t i = from; i < to; i++) {
        uint8_t k[KEY_LEN];
        make_key(seed, i, TAG_PRESENT, k);
        amq_status st =
            (i & 1) ? amq_filter_add_hash(f, amq_filter_hash(f, k, KEY_LEN))
                    : amq_filter_add(f, k, KEY_LEN);
        if (st != AMQ_OK)
            return st;
    }
    return AMQ_OK;
}

/* Number of keys in [from, to) the filter misses (must be 0). */
static uint64_t count_missing(const amq_filter *f, uint64_t seed, uint64_t from,
                              uint64_t to) {
    uint64_t missing = 0;
    for (uint64_t i = from; i < to; i++) {
        uint8_t k[KEY_LEN];
        make_key(seed, i, TAG_PRESENT, k);
        bool a = amq_filter_contains(f, k, KEY_LEN);
        bool b = amq_filter_contains_hash(f, amq_filter_hash(f, k, KEY_LEN));
        missing += !a || !b;
    }
    return missing;
}

/* False positives among `trials` absent keys, through the batch path. */
static uint64_t count_fp(const amq_filter *f, uint64_t seed, uint64_t trials) {
    enum { CHUNK = 4096 };
    static uint64_t h[CHUNK];
    static uint8_t out[CHUNK];
    uint64_t fp = 0;
    for (uint64_t base = 0; base < trials; base += CHUNK) {
        size_t n = trials - base < CHUNK ? (size_t)(trials - base) : CHUNK;
        for (size_t j = 0; j < n; j++)
            h[j] = key_hash(f, seed, base + j, TAG_ABSENT);
        amq_filter_contains_batch(f, h, n, out);
        for (size_t j = 0; j < n; j++)
            fp += out[j] != 0;
    }
    return fp;
}

/* ---- frames -------------------------------------------------------------- */

/* A 64-byte aligned copy (views need 8-byte alignment). */
static uint8_t *aligned_copy(const uint8_t *src, size_t len, size_t extra) {
    size_t cap = (len + extra + 63) / 64 * 64;
    uint8_t *p = aligned_alloc(64, cap ? cap : 64);
    if (p != NULL) {
        memset(p, 0, cap ? cap : 64);
        memcpy(p, src, len);
    }
    return p;
}

static amq_filter *new_filter(const char *spec, uint64_t n, double eps,
                              const amq_options *opt) {
    amq_filter *f = NULL;
    amq_diag d;
    memset(&d, 0, sizeof d);
    amq_status st = amq_filter_new(spec, n, eps, opt, &f, &d);
    CHECK_MSG(st == AMQ_OK, "new(%s, %llu, %g): %s %s", spec,
              (unsigned long long)n, eps, amq_status_name(st), d.message);
    return st == AMQ_OK ? f : NULL;
}

static amq_filter *clone_filter(const amq_filter *f) {
    size_t len;
    uint8_t *buf = check_frame(f, &len);
    amq_filter *g = NULL;
    if (buf != NULL)
        CHECK_OK(amq_filter_load(buf, len, NULL, &g, NULL));
    free(buf);
    return g;
}

/* A builder's filter over keys [from, to) of stream seed, each taken `dup`
 * times. A type whose fixed width cannot meet eps refuses it
 * (AMQ_ERR_INVALID, test_static_fpr checks that the refusal is justified);
 * it is then built at its own rate from the same builder. */
static amq_filter *build_keys(const char *spec, double eps,
                              const amq_options *opt, uint64_t seed,
                              uint64_t from, uint64_t to, unsigned dup) {
    amq_builder *b = NULL;
    amq_filter *f = NULL;
    amq_diag d;
    memset(&d, 0, sizeof d);
    amq_status st = amq_builder_new(spec, opt, &b, &d);
    for (uint64_t i = from; st == AMQ_OK && i < to; i++) {
        uint8_t k[KEY_LEN];
        make_key(seed, i, TAG_PRESENT, k);
        for (unsigned r = 0; st == AMQ_OK && r < dup; r++)
            st = amq_builder_add(b, k, KEY_LEN);
    }
    if (st == AMQ_OK)
        st = amq_builder_finish(b, eps, &f, &d);
    if (st == AMQ_ERR_INVALID && eps != 0.0)
        st = amq_builder_finish(b, 0.0, &f, &d);
    CHECK_MSG(st == AMQ_OK, "build(%.60s, %llu keys x %u, %g): %s %.100s", spec,
              (unsigned long long)(to - from), dup, eps, amq_status_name(st),
              d.message);
    amq_builder_free(b);
    return st == AMQ_OK ? f : NULL;
}

/* A filter holding keys [from, to) of stream seed: a dynamic type created
 * for capacity/eps and filled by add_range, a static one built from them. */
static amq_filter *filled(const amq_type_info *ti, uint64_t capacity,
                          double eps, const amq_options *opt, uint64_t seed,
                          uint64_t from, uint64_t to) {
    if (ti->caps & AMQ_CAP_STATIC)
        return build_keys(ti->name, eps, opt, seed, from, to, 1);
    amq_filter *f = new_filter(ti->name, capacity, eps, opt);
    if (f != NULL)
        CHECK_OK(add_range(f, seed, from, to));
    return f;
}

static bool is_static(const amq_type_info *ti) {
    return (ti->caps & AMQ_CAP_STATIC) != 0;
}

/* A sketch (AMQ_CAP_SKETCH: topk) is not a membership filter: contains()
 * may miss added keys by design, so every "no false negatives" check, the
 * FPR checks and the curve are replaced by what a sketch does promise. */
static bool is_sketch(const amq_type_info *ti) {
    return (ti->caps & AMQ_CAP_SKETCH) != 0;
}

/* A forgetting filter (AMQ_CAP_FORGETS: stable) promises only its newest
 * key; older keys may be gone by design. */
static bool forgets(const amq_type_info *ti) {
    return (ti->caps & AMQ_CAP_FORGETS) != 0;
}

/* count_missing over what the type promises of keys [from, to) added in
 * order: all of them; the newest for a forgetting filter; none for a
 * sketch. */
static uint64_t missing_if_member(const amq_filter *f, uint64_t seed,
                                  uint64_t from, uint64_t to) {
    const amq_type_info *ti = amq_filter_info(f);
    if (is_sketch(ti))
        return 0;
    if (forgets(ti))
        return to > from ? count_missing(f, seed, to - 1, to) : 0;
    return count_missing(f, seed, from, to);
}

/* ---- properties and describe -------------------------------------------- */

/* The canonical name of the type ti->name's spec selects (ti->name is a
 * spec with parameters for the variants in main()). */
static const char *canon(const amq_type_info *ti) {
    const amq_type_info *found = amq_filter_type_find(ti->name);
    return found != NULL ? found->name : "?";
}

static void test_properties(const amq_type_info *ti) {
    check_seed = 1;
    const amq_type_info *found = amq_filter_type_find(ti->name);
    CHECK(found != NULL && found->type_id == ti->type_id);
    amq_filter *f = new_filter(ti->name, 1000, 0.01, NULL);
    if (f == NULL)
        return;
    const amq_type_info *fi = amq_filter_info(f);
    CHECK(fi != NULL && strcmp(fi->name, canon(ti)) == 0 &&
          fi->type_id == ti->type_id);
    CHECK(amq_filter_items(f) == 0);
    CHECK(amq_filter_capacity(f) == 1000);
    CHECK(amq_filter_target_fpr(f) == 0.01);
    CHECK(amq_filter_size_bytes(f) > 0);
    CHECK(!amq_filter_is_view(f));
    CHECK_MSG(amq_filter_fpr_bound(f) >= 0.0 && amq_filter_fpr_bound(f) < 1e-9,
              "empty %s: bound %g", ti->name, amq_filter_fpr_bound(f));
    CHECK(count_fp(f, 1, 10000) == 0); /* an empty filter holds nothing */
    CHECK_OK(add_range(f, 1, 0, 1000));
    CHECK(amq_filter_items(f) == 1000);
    double bpk = amq_filter_bits_per_key(f);
    CHECK_MSG(fabs(bpk - 8.0 * (double)amq_filter_size_bytes(f) / 1000.0) <
                  1e-9,
              "bits/key %g", bpk);

    /* describe: snprintf semantics, canonical name, and a spec that
     * rebuilds the same shape without a target. */
    char small[4], full[256];
    size_t need = amq_filter_describe(f, NULL, 0);
    CHECK(need > 0 && need < sizeof full);
    memset(small, 'x', sizeof small);
    CHECK(amq_filter_describe(f, small, sizeof small) == need);
    CHECK(small[sizeof small - 1] == '\0');
    CHECK(amq_filter_describe(f, full, sizeof full) == need);
    CHECK(strlen(full) == need);
    size_t nl = strlen(canon(ti));
    CHECK_MSG(strncmp(full, canon(ti), nl) == 0 &&
                  (full[nl] == '\0' || full[nl] == ':'),
              "describe: %s", full);
    amq_filter *g = NULL;
    amq_status st = amq_filter_new(full, 0, 0.0, NULL, &g, NULL);
    CHECK_MSG(st == AMQ_OK, "new(\"%s\", 0, 0): %s", full, amq_status_name(st));
    if (g != NULL) {
        char again[256];
        amq_filter_describe(g, again, sizeof again);
        CHECK_MSG(strcmp(full, again) == 0, "%.100s vs %.100s", full, again);
        CHECK(amq_filter_size_bytes(g) == amq_filter_size_bytes(f));
        CHECK_OK(add_range(g, 1, 0, 1000));
        if (amq_filter_caps(f) & AMQ_CAP_UNION) {
            /* Same shape. Multiset types (qf, cqf) add counts, so twice the
             * capacity may not fit: FULL is then the right answer, and it
             * must leave g as it was. */
            uint64_t before = amq_filter_items(g);
            st = amq_filter_union(g, f);
            CHECK_MSG(st == AMQ_OK || st == AMQ_ERR_FULL, "union: %s",
                      amq_status_name(st));
            if (st == AMQ_ERR_FULL)
                CHECK(amq_filter_items(g) == before);
        }
        /* Same shape and keys: same answers. */
        uint64_t differ = 0;
        for (uint64_t i = 0; i < 20000; i++) {
            uint64_t h = key_hash(f, 1, i, TAG_ABSENT);
            differ += amq_filter_contains_hash(f, h) !=
                      amq_filter_contains_hash(g, h);
        }
        CHECK_MSG(differ == 0, "%llu answers differ",
                  (unsigned long long)differ);
    }
    amq_filter_free(g);
    amq_filter_free(f);
}

/* ---- false negatives and false-positive rate ----------------------------- */

typedef struct fpr_result {
    double measured, bound, curve;
} fpr_result;

/* Four standard deviations of a binomial proportion p over t trials. */
static double four_sigma(double p, double t) {
    if (p < 0)
        p = 0;
    if (p > 1)
        p = 1;
    return 4.0 * sqrt(p * (1.0 - p) / t);
}

static void fpr_case(const amq_type_info *ti, uint64_t n, double eps,
                     uint64_t seed, uint64_t trials) {
    check_seed = seed;
    amq_filter *f = new_filter(ti->name, n, eps, NULL);
    if (f == NULL)
        return;
    /* A filter of this size differs from the expected one by chance: the
     * fill of a small table has relative spread ~ k/sqrt(m). */
    double rel = n >= 10000 ? 0.10 : n >= 100 ? 0.60 : 1.0;
    double t = (double)trials;

    /* Half load: measured below the bound at the current load. */
    uint64_t half = n / 2;
    CHECK_OK(add_range(f, seed, 0, half));
    double bound_half = amq_filter_fpr_bound(f);
    double t_half = t / 4;
    double p_half = (double)count_fp(f, seed + 1000, trials / 4) / t_half;
    CHECK_MSG(p_half <= bound_half * (1 + rel) +
                            four_sigma(bound_half, t_half) + 3.0 / t_half,
              "%s n=%llu eps=%g half load: measured %g > bound %g", ti->name,
              (unsigned long long)n, eps, p_half, bound_half);
    if (half == 0)
        CHECK_MSG(p_half == 0.0, "%s: empty filter reports %g", ti->name,
                  p_half);

    /* Full load. */
    amq_status st = add_range(f, seed, half, n);
    CHECK_MSG(st == AMQ_OK, "%s n=%llu: add: %s", ti->name,
              (unsigned long long)n, amq_status_name(st));
    CHECK(amq_filter_items(f) == n);
    uint64_t missing = missing_if_member(f, seed, 0, n);
    CHECK_MSG(missing == 0, "%s n=%llu eps=%g: %llu false negatives", ti->name,
              (unsigned long long)n, eps, (unsigned long long)missing);
    double bound = amq_filter_fpr_bound(f);
    CHECK_MSG(bound >= bound_half,
              "%s: bound fell from %g to %g as keys "
              "were added",
              ti->name, bound_half, bound);
    double p = (double)count_fp(f, seed + 2000, trials) / t;
    CHECK_MSG(p <= bound * (1 + rel) + four_sigma(bound, t) + 3.0 / t,
              "%s n=%llu eps=%g: measured %g > bound %g", ti->name,
              (unsigned long long)n, eps, p, bound);

    if (n >= 10000) {
        /* The curve at the filter's actual bits per key predicts it: within
         * 10% (or 4 sigma) for a large filter; at 10^4 keys a split-block
         * filter has only ~600 blocks, and the spread of their loads moves
         * one filter's rate by ~6% (sd) around the curve, so 25% there. */
        /* Types whose rate is not a function of bits/key alone (cuckoo: the
         * fingerprint width and the load separately) model their exact
         * shape from the describe() string; the others refuse shape keys
         * and fall back to the plain name. */
        double bpk = amq_filter_bits_per_key(f), c = -1;
        char shape[256];
        amq_filter_describe(f, shape, sizeof shape);
        if (amq_curve_fpr(shape, bpk, &c) != AMQ_OK)
            CHECK_OK(amq_curve_fpr(ti->name, bpk, &c));
        double rel_curve = n >= 200000 ? 0.10 : 0.25;
        double tol = fmax(four_sigma(c, t), rel_curve * c) + 3.0 / t;
        /* A forgetting filter's curve is its stable point, which it
         * approaches from below as it forgets: at capacity it is under. */
        double gap = forgets(ti) ? fmax(p - c, 0.0) : fabs(p - c);
        CHECK_MSG(gap <= tol,
                  "%s n=%llu eps=%g: measured %g, curve(%.3f b/key) %g",
                  ti->name, (unsigned long long)n, eps, p, bpk, c);
        /* And the filter delivers the rate it was built for. */
        CHECK_MSG(p <= eps * 1.10 + four_sigma(eps, t) + 3.0 / t,
                  "%s n=%llu: measured %g misses target %g", ti->name,
                  (unsigned long long)n, p, eps);
        /* The bound is this table's rate, so it scatters like it: for a
         * blocked filter of 10^4 keys (~300 blocks) by ~4% (sd), and about
         * one table in 100 lands above 1.10 eps; same allowance as the
         * curve. */
        CHECK_MSG(bound <= eps * (1.0 + rel_curve),
                  "%s n=%llu: bound %g at capacity "
                  "exceeds target %g",
                  ti->name, (unsigned long long)n, bound, eps);
    }
    amq_filter_free(f);
}

static void test_fpr(const amq_type_info *ti) {
    static const uint64_t sizes[] = {1, 100, 10000, 200000};
    static const double eps[] = {0.01, 0.001};
    size_t nsizes = check_quick() ? 3 : 4;
    uint64_t trials = check_quick() ? 100000 : 1000000;
    for (size_t i = 0; i < nsizes; i++) {
        unsigned seeds = sizes[i] <= 100 ? 3 : sizes[i] <= 10000 ? 2 : 1;
        for (size_t e = 0; e < 2; e++)
            for (unsigned s = 0; s < seeds; s++)
                fpr_case(ti, sizes[i], eps[e], 100 + 17 * s + i, trials);
    }
}

/* ---- the FPR curve -------------------------------------------------------- */

static void test_curve(const amq_type_info *ti) {
    static const double bits[] = {2, 3, 4, 6, 8, 10, 12, 16, 20, 24, 32};
    static const double rates[] = {0.5, 0.1, 0.01, 1e-3, 1e-4, 1e-6};
    check_seed = 2;
    double prev = 2.0;
    for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++) {
        double p = -1, b = -1;
        amq_status st = amq_curve_fpr(ti->name, bits[i], &p);
        CHECK_MSG(st == AMQ_OK, "%s curve_fpr(%g): %s", ti->name, bits[i],
                  amq_status_name(st));
        if (st != AMQ_OK)
            continue;
        CHECK_MSG(p > 0 && p <= 1 && p <= prev, "%s curve_fpr(%g) = %g",
                  ti->name, bits[i], p);
        prev = p;
        if (p > 1e-12 && p < 0.9) {
            CHECK_OK(amq_curve_bits(ti->name, p, &b));
            CHECK_MSG(fabs(b - bits[i]) <= 1e-3 * bits[i],
                      "%s: bits(fpr(%g)) = %g", ti->name, bits[i], b);
        }
    }
    for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++) {
        double b = -1, p = -1;
        amq_status st = amq_curve_bits(ti->name, rates[i], &b);
        CHECK_MSG(st == AMQ_OK && b > 0, "%s curve_bits(%g): %s %g", ti->name,
                  rates[i], amq_status_name(st), b);
        if (st != AMQ_OK)
            continue;
        /* Never below the information-theoretic bound log2(1/eps). */
        CHECK_MSG(b >= log2(1 / rates[i]) - 1e-9, "%s: %g b/key for %g",
                  ti->name, b, rates[i]);
        CHECK_OK(amq_curve_fpr(ti->name, b, &p));
        CHECK_MSG(fabs(p - rates[i]) <= 1e-3 * rates[i],
                  "%s: fpr(bits(%g)) = %g", ti->name, rates[i], p);
    }
    double x;
    CHECK_STATUS(amq_curve_fpr(ti->name, 0.0, &x), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_curve_fpr(ti->name, -1.0, &x), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_curve_fpr(ti->name, NAN, &x), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_curve_bits(ti->name, 0.0, &x), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_curve_bits(ti->name, 1.0, &x), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_curve_bits(ti->name, -0.5, &x), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_curve_bits(ti->name, NAN, &x), AMQ_ERR_INVALID);
    char spec[96];
    snprintf(spec, sizeof spec, "%s:zz_no_such_key=1", ti->name);
    CHECK_STATUS(amq_curve_fpr(spec, 8.0, &x), AMQ_ERR_SPEC);
    CHECK_STATUS(amq_curve_bits(spec, 0.01, &x), AMQ_ERR_SPEC);
}

/* A sketch has no false-positive curve. */
static void test_sketch_curve(const amq_type_info *ti) {
    double x;
    check_seed = 2;
    CHECK_STATUS(amq_curve_fpr(ti->name, 8.0, &x), AMQ_ERR_UNSUPPORTED);
    CHECK_STATUS(amq_curve_bits(ti->name, 0.01, &x), AMQ_ERR_UNSUPPORTED);
}

/* ---- serialization: round trip and views ---------------------------------- */

static void compare_answers(const amq_filter *a, const amq_filter *b,
                            uint64_t seed, uint64_t n, const char *what) {
    uint64_t missing = missing_if_member(b, seed, 0, n), differ = 0;
    for (uint64_t i = 0; i < 20000; i++) {
        uint8_t k[KEY_LEN];
        make_key(seed, i, TAG_ABSENT, k);
        differ += amq_filter_contains(a, k, KEY_LEN) !=
                  amq_filter_contains(b, k, KEY_LEN);
    }
    CHECK_MSG(missing == 0 && differ == 0, "%s: %llu missing, %llu differ",
              what, (unsigned long long)missing, (unsigned long long)differ);
    CHECK(amq_filter_items(a) == amq_filter_items(b));
    CHECK(amq_filter_size_bytes(a) == amq_filter_size_bytes(b));
    CHECK(amq_filter_fpr_bound(a) == amq_filter_fpr_bound(b));
    CHECK(amq_filter_capacity(a) == amq_filter_capacity(b));
    CHECK(amq_filter_target_fpr(a) == amq_filter_target_fpr(b));
    const amq_hasher *ha = amq_filter_hasher(a), *hb = amq_filter_hasher(b);
    CHECK(ha->kind == hb->kind && ha->seed == hb->seed &&
          memcmp(ha->key, hb->key, AMQ_HASH_KEY_BYTES) == 0);
    char da[256], db[256];
    amq_filter_describe(a, da, sizeof da);
    amq_filter_describe(b, db, sizeof db);
    CHECK_MSG(strcmp(da, db) == 0, "%s: %.100s vs %.100s", what, da, db);
}

static void check_view(const amq_type_info *ti, const amq_filter *f,
                       const uint8_t *frame, size_t len, uint64_t seed,
                       uint64_t n) {
    uint8_t *buf = aligned_copy(frame, len, 0);
    amq_filter *v = NULL;
    if (buf == NULL)
        return;
    amq_status st = amq_filter_view(buf, len, NULL, &v, NULL);
    CHECK_MSG(st == AMQ_OK, "%s view: %s", ti->name, amq_status_name(st));
    if (st == AMQ_OK) {
        CHECK(amq_filter_is_view(v));
        compare_answers(f, v, seed, n, "view");
        CHECK(check_same_frame(f, v));
        uint8_t k[KEY_LEN];
        make_key(seed, n + 1, TAG_PRESENT, k);
        CHECK_STATUS(amq_filter_add(v, k, KEY_LEN), AMQ_ERR_READONLY);
        CHECK_STATUS(amq_filter_add_hash(v, 42), AMQ_ERR_READONLY);
        make_key(seed, 0, TAG_PRESENT, k);
        st = amq_filter_remove(v, k, KEY_LEN);
        CHECK_MSG(st == AMQ_ERR_READONLY ||
                      (!(amq_filter_caps(f) & AMQ_CAP_REMOVE) &&
                       st == AMQ_ERR_UNSUPPORTED),
                  "remove on view: %s", amq_status_name(st));
        st = amq_filter_union(v, f);
        CHECK_MSG(st == AMQ_ERR_READONLY ||
                      (!(amq_filter_caps(f) & AMQ_CAP_UNION) &&
                       st == AMQ_ERR_UNSUPPORTED),
                  "union into view: %s", amq_status_name(st));
        CHECK(amq_filter_items(v) == n);
        CHECK_MSG(memcmp(buf, frame, len) == 0, "view wrote to its buffer");
        amq_filter_free(v);
    }
    free(buf);

    /* Misaligned: a view refuses, a load copies and accepts. */
    uint8_t *raw = malloc(len + 8);
    if (raw != NULL) {
        memcpy(raw + 1, frame, len);
        v = NULL;
        CHECK_STATUS(amq_filter_view(raw + 1, len, NULL, &v, NULL),
                     AMQ_ERR_ALIGN);
        CHECK_OK(amq_filter_load(raw + 1, len, NULL, &v, NULL));
        amq_filter_free(v);
        free(raw);
    }
}

static void test_roundtrip(const amq_type_info *ti) {
    const uint64_t seed = 3, n = 700;
    check_seed = seed;
    amq_options opt;
    memset(&opt, 0, sizeof opt);
    opt.hash = AMQ_HASH_XXH3;
    opt.hash_seed = 0x1234567890abcdefULL;
    amq_filter *f = filled(ti, 1000, 0.01, &opt, seed, 0, n);
    if (f == NULL)
        return;
    size_t len;
    uint8_t *frame = check_frame(f, &len);
    if (frame == NULL) {
        amq_filter_free(f);
        return;
    }
    CHECK(len % 8 == 0 && len >= AMQ__FRAME_HEADER + 8);
    CHECK(amq_filter_serialized_size(f) == len);

    amq_filter *g = NULL;
    amq_status st = amq_filter_load(frame, len, NULL, &g, NULL);
    CHECK_MSG(st == AMQ_OK, "%s load: %s", ti->name, amq_status_name(st));
    if (st == AMQ_OK) {
        CHECK(!amq_filter_is_view(g));
        compare_answers(f, g, seed, n, "load");
        size_t len2;
        uint8_t *again = check_frame(g, &len2);
        CHECK_MSG(again != NULL && len2 == len &&
                      memcmp(again, frame, len) == 0,
                  "%s: save -> load -> save differs", ti->name);
        free(again);
        /* The loaded filter is a working filter (a static one refuses
         * additions as the original does). */
        if (is_static(ti)) {
            CHECK_STATUS(add_range(g, seed, n, n + 50), AMQ_ERR_UNSUPPORTED);
            CHECK(count_missing(g, seed, 0, n) == 0);
        } else {
            CHECK_OK(add_range(g, seed, n, n + 50));
            CHECK(missing_if_member(g, seed, 0, n + 50) == 0);
        }
        amq_filter_free(g);
    }
    check_view(ti, f, frame, len, seed, n);

    /* Too small a buffer: AMQ_ERR_BUFFER, nothing written past cap. */
    uint8_t *out = malloc(len + 16);
    if (out != NULL) {
        size_t caps[] = {0, 1, AMQ__FRAME_HEADER, len - 1};
        for (size_t i = 0; i < 4; i++) {
            memset(out, 0xA5, len + 16);
            size_t w = 0;
            CHECK_STATUS(amq_filter_save(f, out, caps[i], &w), AMQ_ERR_BUFFER);
            size_t bad = 0;
            for (size_t j = caps[i]; j < len + 16; j++)
                bad += out[j] != 0xA5;
            CHECK_MSG(bad == 0, "save wrote past cap %zu", caps[i]);
        }
        free(out);
    }
    free(frame);
    amq_filter_free(f);
}

/* ---- serialization: corrupted frames ---------------------------------------- */

static amq_status load_status(const uint8_t *buf, size_t len) {
    amq_filter *g = NULL;
    amq_status st = amq_filter_load(buf, len, NULL, &g, NULL);
    amq_filter_free(g);
    return st;
}

static amq_status view_status(const uint8_t *buf, size_t len) {
    amq_filter *g = NULL;
    amq_status st = amq_filter_view(buf, len, NULL, &g, NULL);
    amq_filter_free(g);
    return st;
}

/* Edit a header field, reseal, expect `want` (or any failure if want is
 * AMQ_OK, meaning "just not accepted"). */
static void field_case(uint8_t *buf, size_t len, size_t off,
                       const uint8_t *bytes, size_t nbytes, amq_status want,
                       const char *what) {
    uint8_t save[16];
    memcpy(save, buf + off, nbytes);
    memcpy(buf + off, bytes, nbytes);
    amq__frame_seal(buf, len);
    amq_diag d;
    memset(&d, 0, sizeof d);
    amq_filter *g = NULL;
    amq_status st = amq_filter_load(buf, len, NULL, &g, &d);
    amq_filter_free(g);
    if (want == AMQ_OK)
        CHECK_MSG(st != AMQ_OK, "%s accepted", what);
    else
        CHECK_MSG(st == want, "%s: %s, expected %s", what, amq_status_name(st),
                  amq_status_name(want));
    CHECK_MSG(st == AMQ_OK || d.message[0] != '\0', "%s: no diagnostic", what);
    CHECK_MSG(view_status(buf, len) == st, "%s: view and load disagree", what);
    memcpy(buf + off, save, nbytes);
    amq__frame_seal(buf, len);
}

static void header_fields(const amq_type_info *ti, uint8_t *buf, size_t len);

static void test_corruption(const amq_type_info *ti) {
    const uint64_t seed = 4;
    check_seed = seed;
    amq_filter *f = filled(ti, 100, 0.01, NULL, seed, 0, 100);
    if (f == NULL)
        return;
    size_t len;
    uint8_t *frame = check_frame(f, &len);
    amq_filter_free(f);
    if (frame == NULL)
        return;
    uint8_t *buf = aligned_copy(frame, len, 16);
    if (buf == NULL) {
        free(frame);
        return;
    }
    CHECK_OK(load_status(buf, len));

    /* Every single-bit flip (a stride under AMQ_TEST_QUICK). */
    size_t stride = check_quick() ? 7 : 1, accepted = 0, first = 0;
    for (size_t bit = 0; bit < len * 8; bit += stride) {
        buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        bool ok =
            load_status(buf, len) == AMQ_OK || view_status(buf, len) == AMQ_OK;
        if (ok && accepted++ == 0)
            first = bit;
        buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    }
    CHECK_MSG(accepted == 0, "%s: %zu bit flips accepted (first: bit %zu)",
              ti->name, accepted, first);

    /* Every truncation, and trailing bytes. */
    accepted = 0;
    for (size_t l = 0; l < len; l++) {
        bool ok =
            load_status(buf, l) == AMQ_OK || view_status(buf, l) == AMQ_OK;
        if (ok && accepted++ == 0)
            first = l;
    }
    CHECK_MSG(accepted == 0, "%s: %zu truncations accepted (first: %zu of %zu)",
              ti->name, accepted, first, len);
    CHECK(load_status(buf, len + 1) != AMQ_OK);
    CHECK(load_status(buf, len + 8) != AMQ_OK);
    buf[len] = 0x5A;
    CHECK(load_status(buf, len + 8) != AMQ_OK);
    CHECK(view_status(buf, len + 8) != AMQ_OK);
    buf[len] = 0;
    CHECK(load_status(NULL, 0) != AMQ_OK);

    /* A checksum mismatch is reported as such. */
    buf[len - 1] ^= 0x40;
    CHECK_STATUS(load_status(buf, len), AMQ_ERR_CHECKSUM);
    buf[len - 1] ^= 0x40;
    buf[len - 9] ^= 0x01;
    CHECK(load_status(buf, len) != AMQ_OK);
    buf[len - 9] ^= 0x01;

    header_fields(ti, buf, len);
    CHECK_OK(load_status(buf, len)); /* every edit was undone */
    free(buf);
    free(frame);
}

/* Header fields behind a valid checksum (offsets: src/core/frame.h). */
static void header_fields(const amq_type_info *ti, uint8_t *buf, size_t len) {
    static const uint8_t one[8] = {1, 0, 0, 0, 0, 0, 0, 0};
    static const uint8_t two[2] = {2, 0}, zero2[2] = {0, 0};
    static const uint8_t two4[4] = {2, 0, 0, 0};
    static const uint8_t ff[8] = {0xff, 0xff, 0xff, 0xff,
                                  0xff, 0xff, 0xff, 0xff};
    static const uint8_t letter[1] = {'X'};
    field_case(buf, len, 0, letter, 1, AMQ_OK, "magic[0]");
    field_case(buf, len, 7, letter, 1, AMQ_OK, "magic[7]");
    field_case(buf, len, 8, two, 2, AMQ_ERR_VERSION, "major 2");
    field_case(buf, len, 8, zero2, 2, AMQ_ERR_VERSION, "major 0");
    /* docs/format.md: an unknown type id is a version problem (a newer
     * writer); include/amq/filter.h says AMQ_ERR_SPEC — reported. */
    field_case(buf, len, 12, ff, 2, AMQ_ERR_VERSION, "type id 0xffff");
    field_case(buf, len, 14, zero2, 1, AMQ_OK, "hash kind 0");
    field_case(buf, len, 14, ff, 1, AMQ_OK, "hash kind 255");
    field_case(buf, len, 15, one, 1, AMQ_OK, "reserved byte 15");
    /* bit 0 (an intersection) needs its 24-byte generic block */
    field_case(buf, len, 16, one, 4, AMQ_OK, "incompat bit 0");
    field_case(buf, len, 16, two4, 4, AMQ_ERR_VERSION, "incompat bit 1");
    field_case(buf, len, 16, ff, 4, AMQ_ERR_VERSION, "incompat all");
    field_case(buf, len, 48, ff, 4, AMQ_OK, "params len");
    field_case(buf, len, 52, one, 4, AMQ_OK, "reserved u32 at 52");
    field_case(buf, len, 56, ff, 8, AMQ_OK, "payload len");
    uint64_t plen;
    memcpy(&plen, buf + 56, 8);
    uint8_t bigger[8];
    plen += 8;
    memcpy(bigger, &plen, 8);
    field_case(buf, len, 56, bigger, 8, AMQ_OK, "payload len + 8");
    plen -= 16;
    memcpy(bigger, &plen, 8);
    field_case(buf, len, 56, bigger, 8, AMQ_OK, "payload len - 8");
    uint32_t prm;
    memcpy(&prm, buf + 48, 4);
    prm += 1;
    field_case(buf, len, 48, (const uint8_t *)&prm, 4, AMQ_OK,
               "params len + 1");
    /* Nonzero padding between params and payload, if there is any. */
    if (prm - 1 < AMQ__FRAME_PAYLOAD_ALIGN)
        field_case(buf, len, AMQ__FRAME_HEADER + AMQ__FRAME_PAYLOAD_ALIGN - 1,
                   one, 1, AMQ_OK, "params padding");
    /* Another type's id with this type's params and payload. */
    for (size_t i = 0; i < amq_filter_type_count(); i++) {
        const amq_type_info *o = amq_filter_type_at(i);
        if (o->type_id == ti->type_id)
            continue;
        uint16_t id = o->type_id;
        char what[96];
        snprintf(what, sizeof what, "%s frame relabelled %s", ti->name,
                 o->name);
        field_case(buf, len, 12, (const uint8_t *)&id, 2, AMQ_OK, what);
    }
}

/* ---- scalar vs batch ----------------------------------------------------------- */

static void test_batch(const amq_type_info *ti) {
    const uint64_t seed = 5, n = 5000;
    check_seed = seed;
    amq_options scal;
    memset(&scal, 0, sizeof scal);
    scal.flags = AMQ_OPT_SCALAR;
    amq_filter *f = filled(ti, n, 0.01, NULL, seed, 0, n);
    amq_filter *s = filled(ti, n, 0.01, &scal, seed, 0, n);
    enum { M = 20000 };
    uint64_t *h = malloc(M * sizeof *h);
    uint8_t *a = malloc(M), *b = malloc(M), *c = malloc(M + 8);
    if (f == NULL || s == NULL || h == NULL || a == NULL || b == NULL ||
        c == NULL)
        goto out;
    CHECK_MSG(check_same_frame(f, s), "%s: AMQ_OPT_SCALAR changes the frame",
              ti->name);
    uint64_t rng = seed;
    for (size_t i = 0; i < M; i++) {
        uint64_t r = check_next(&rng);
        h[i] = (r % 3 == 0)   ? key_hash(f, seed, r % n, TAG_PRESENT)
               : (r % 3 == 1) ? key_hash(f, seed, i, TAG_ABSENT)
                              : check_next(&rng);
    }
    uint64_t pos = 0, differ = 0;
    for (size_t i = 0; i < M; i++) {
        a[i] = amq_filter_contains_hash(f, h[i]);
        differ += a[i] != amq_filter_contains_hash(s, h[i]);
        pos += a[i];
    }
    CHECK_MSG(differ == 0, "%s: scalar-flag filter differs on %llu", ti->name,
              (unsigned long long)differ);
    if (!is_sketch(ti) && !forgets(ti))
        CHECK(pos >= M / 3); /* the present third at least */
    amq_filter_contains_batch(f, h, M, b);
    amq_filter_contains_batch(s, h, M, c);
    size_t bad_b = 0, bad_c = 0;
    for (size_t i = 0; i < M; i++) {
        bad_b += (b[i] != 0) != (a[i] != 0) || b[i] > 1;
        bad_c += (c[i] != 0) != (a[i] != 0) || c[i] > 1;
    }
    CHECK_MSG(bad_b == 0 && bad_c == 0,
              "%s: batch differs from scalar (%zu default, %zu scalar-flag)",
              ti->name, bad_b, bad_c);
    /* Short batches at odd offsets (SIMD tails), with a canary behind. */
    size_t bad = 0, over = 0;
    for (size_t len = 0; len <= 70; len++) {
        size_t off = (len * 7) % 13;
        memset(c, 0xCC, len + 8);
        amq_filter_contains_batch(f, h + off, len, c);
        for (size_t i = 0; i < len; i++)
            bad += (c[i] != 0) != (a[off + i] != 0);
        for (size_t i = len; i < len + 8; i++)
            over += c[i] != 0xCC;
    }
    CHECK_MSG(bad == 0 && over == 0,
              "%s: short batches: %zu wrong, %zu "
              "bytes written past n",
              ti->name, bad, over);

    /* Batch insert = the loop, byte for byte, up to and including a
     * refusal (a small filter driven past capacity). */
    if (!is_static(ti)) {
        amq_filter *x = new_filter(ti->name, 200, 0.01, NULL);
        amq_filter *y = new_filter(ti->name, 200, 0.01, NULL);
        if (x != NULL && y != NULL) {
            for (size_t i = 0; i < 4000; i++)
                h[i] = key_hash(x, seed + 1, i, TAG_PRESENT);
            size_t loop = 0, done = 99;
            amq_status sl = AMQ_OK;
            while (loop < 4000 &&
                   (sl = amq_filter_add_hash(x, h[loop])) == AMQ_OK)
                loop++;
            amq_status sb = amq_filter_add_batch(y, h, 4000, &done);
            CHECK_MSG(sl == sb && done == loop && check_same_frame(x, y),
                      "%s: add_batch %s after %zu, loop %s after %zu", ti->name,
                      amq_status_name(sb), done, amq_status_name(sl), loop);
            /* and on a build's threads (a type may cut the batch over
             * them): the same again */
            size_t outer_min = amq__par_set_min(2);
            for (unsigned t = 2; t <= 3; t++) {
                amq_filter *z = new_filter(ti->name, 200, 0.01, NULL);
                if (z == NULL)
                    continue;
                unsigned outer = amq__par_scope(t);
                size_t zd = 99;
                amq_status sz = amq_filter_add_batch(z, h, 4000, &zd);
                amq__par_restore(outer);
                CHECK_MSG(sz == sl && zd == loop && check_same_frame(x, z),
                          "%s: add_batch on %u threads %s after %zu, loop %s "
                          "after %zu",
                          ti->name, t, amq_status_name(sz), zd,
                          amq_status_name(sl), loop);
                amq_filter_free(z);
            }
            amq__par_set_min(outer_min);
        }
        amq_filter_free(x);
        amq_filter_free(y);
    }
out:
    free(h);
    free(a);
    free(b);
    free(c);
    amq_filter_free(f);
    amq_filter_free(s);
}

/* ---- merges and optional operations ------------------------------------------ */

typedef amq_status (*merge_fn)(amq_filter *, const amq_filter *);

static const amq_type_info *other_type_with(const amq_type_info *ti,
                                            uint32_t cap) {
    for (size_t i = 0; i < amq_filter_type_count(); i++) {
        const amq_type_info *o = amq_filter_type_at(i);
        if (o->type_id != ti->type_id && (o->caps & cap) &&
            !(o->caps & AMQ_CAP_STATIC))
            return o;
    }
    return NULL;
}

/* dst op= src must fail with `want` and leave dst as it was. */
static void merge_refused(merge_fn op, amq_filter *dst, const amq_filter *src,
                          amq_status want, const char *what) {
    size_t len;
    uint8_t *before = check_frame(dst, &len);
    amq_status st = op(dst, src);
    CHECK_MSG(st == want, "%s: %s, expected %s", what, amq_status_name(st),
              amq_status_name(want));
    size_t len2;
    uint8_t *after = check_frame(dst, &len2);
    CHECK_MSG(before != NULL && after != NULL && len == len2 &&
                  memcmp(before, after, len) == 0,
              "%s: a refused merge changed the filter", what);
    free(before);
    free(after);
}

static void merge_shapes(const amq_type_info *ti, merge_fn op, amq_filter *a,
                         const char *opname) {
    char what[96];
    amq_filter *c = new_filter(ti->name, 8000, 0.01, NULL);
    if (c != NULL) {
        snprintf(what, sizeof what, "%s %s other capacity", ti->name, opname);
        merge_refused(op, a, c, AMQ_ERR_INCOMPATIBLE, what);
    }
    amq_filter_free(c);
    amq_options opt;
    memset(&opt, 0, sizeof opt);
    opt.hash = AMQ_HASH_XXH3;
    opt.hash_seed = 7;
    c = new_filter(ti->name, 4000, 0.01, &opt);
    if (c != NULL) {
        snprintf(what, sizeof what, "%s %s other hash seed", ti->name, opname);
        merge_refused(op, a, c, AMQ_ERR_INCOMPATIBLE, what);
    }
    amq_filter_free(c);
    const amq_type_info *o = other_type_with(
        ti, op == amq_filter_union ? AMQ_CAP_UNION : AMQ_CAP_INTERSECT);
    if (o != NULL) {
        c = new_filter(o->name, 4000, 0.01, NULL);
        if (c != NULL) {
            snprintf(what, sizeof what, "%s %s %s", ti->name, opname, o->name);
            merge_refused(op, a, c, AMQ_ERR_INCOMPATIBLE, what);
        }
        amq_filter_free(c);
    }
}

static void test_merge(const amq_type_info *ti) {
    const uint64_t seed = 6;
    check_seed = seed;
    amq_filter *a = filled(ti, 4000, 0.01, NULL, seed, 0, 2000);    /* A */
    amq_filter *b = filled(ti, 4000, 0.01, NULL, seed, 1000, 3000); /* B */
    if (a == NULL || b == NULL)
        goto out;

    if (ti->caps & AMQ_CAP_UNION) {
        amq_filter *u = clone_filter(a);
        if (u != NULL) {
            CHECK_OK(amq_filter_union(u, b));
            CHECK_MSG(count_missing(u, seed, 0, 3000) == 0,
                      "%s: union misses keys", ti->name);
            uint64_t law = 0;
            for (uint64_t i = 0; i < 50000; i++) {
                uint64_t h = key_hash(a, seed, i, TAG_ABSENT);
                bool in = amq_filter_contains_hash(a, h) ||
                          amq_filter_contains_hash(b, h);
                law += in && !amq_filter_contains_hash(u, h);
            }
            CHECK_MSG(law == 0, "%s: a or b but not a|b on %llu keys", ti->name,
                      (unsigned long long)law);
            merge_shapes(ti, amq_filter_union, u, "union");
        }
        amq_filter_free(u);
    } else {
        merge_refused(amq_filter_union, a, b, AMQ_ERR_UNSUPPORTED, "union");
    }

    if (ti->caps & AMQ_CAP_INTERSECT) {
        amq_filter *x = clone_filter(a);
        if (x != NULL) {
            CHECK_OK(amq_filter_intersect(x, b));
            CHECK_MSG(count_missing(x, seed, 1000, 2000) == 0,
                      "%s: intersection misses common keys", ti->name);
            uint64_t law = 0;
            for (uint64_t i = 0; i < 50000; i++) {
                uint64_t h = key_hash(a, seed, i, TAG_ABSENT);
                bool both = amq_filter_contains_hash(a, h) &&
                            amq_filter_contains_hash(b, h);
                law += amq_filter_contains_hash(x, h) && !both;
            }
            CHECK_MSG(law == 0, "%s: a&b but not (a and b) on %llu keys",
                      ti->name, (unsigned long long)law);
            merge_shapes(ti, amq_filter_intersect, x, "intersect");
        }
        amq_filter_free(x);
    } else {
        merge_refused(amq_filter_intersect, a, b, AMQ_ERR_UNSUPPORTED,
                      "intersect");
    }
out:
    amq_filter_free(a);
    amq_filter_free(b);
}

static void test_optional_ops(const amq_type_info *ti) {
    const uint64_t seed = 7, n = 1000;
    check_seed = seed;
    amq_filter *f = filled(ti, 10000, 0.01, NULL, seed, 0, n);
    if (f == NULL)
        return;
    size_t len;
    uint8_t *before = check_frame(f, &len);
    uint8_t k[KEY_LEN];
    uint64_t h = key_hash(f, seed, 0, TAG_PRESENT), cnt = 0;
    double est = 0;
    /* This filter's caps: a spec's parameters may add some (mode=ms). */
    uint32_t caps = amq_filter_caps(f);
    CHECK_MSG((caps & (AMQ_CAP_STATIC | AMQ_CAP_SKETCH)) ==
                  (ti->caps & (AMQ_CAP_STATIC | AMQ_CAP_SKETCH)),
              "%s: caps %#x vs type caps %#x", ti->name, caps, ti->caps);

    if (!(caps & AMQ_CAP_REMOVE)) {
        make_key(seed, 0, TAG_PRESENT, k);
        CHECK_STATUS(amq_filter_remove(f, k, KEY_LEN), AMQ_ERR_UNSUPPORTED);
        CHECK_STATUS(amq_filter_remove_hash(f, h), AMQ_ERR_UNSUPPORTED);
    }
    if (!(caps & AMQ_CAP_COUNT))
        CHECK_STATUS(amq_filter_count_hash(f, h, &cnt), AMQ_ERR_UNSUPPORTED);
    if (!(caps & AMQ_CAP_ESTIMATE))
        CHECK_STATUS(amq_filter_estimate_items(f, &est), AMQ_ERR_UNSUPPORTED);
    size_t len2;
    uint8_t *after = check_frame(f, &len2);
    CHECK_MSG(before != NULL && after != NULL && len == len2 &&
                  memcmp(before, after, len) == 0,
              "%s: an unsupported call changed the filter", ti->name);
    free(before);
    free(after);

    if (caps & AMQ_CAP_ESTIMATE) {
        CHECK_OK(amq_filter_estimate_items(f, &est));
        CHECK_MSG(fabs(est - (double)n) <= 0.1 * (double)n,
                  "%s: estimate %g for %llu keys", ti->name, est,
                  (unsigned long long)n);
    }
    if (caps & AMQ_CAP_COUNT) {
        for (int i = 0; i < 3; i++)
            CHECK_OK(amq_filter_add_hash(f, h));
        CHECK_OK(amq_filter_count_hash(f, h, &cnt));
        /* A sketch may undercount (HeavyKeeper decays), never overcount. */
        if (is_sketch(ti))
            CHECK_MSG(cnt <= 4, "%s: count %llu > 4", ti->name,
                      (unsigned long long)cnt);
        else
            CHECK_MSG(cnt >= 4, "%s: count %llu < 4", ti->name,
                      (unsigned long long)cnt);
        uint64_t zero = 0, absent = 0;
        for (uint64_t i = 0; i < 1000; i++) {
            uint64_t x = key_hash(f, seed, i, TAG_ABSENT);
            if (!amq_filter_contains_hash(f, x)) {
                absent++;
                CHECK_OK(amq_filter_count_hash(f, x, &cnt));
                zero += cnt == 0;
            }
        }
        CHECK(zero == absent);
    }
    if (caps & AMQ_CAP_REMOVE) {
        uint64_t items = amq_filter_items(f);
        for (uint64_t i = 0; i < n / 2; i++) {
            make_key(seed, i, TAG_PRESENT, k);
            CHECK_OK(amq_filter_remove(f, k, KEY_LEN));
        }
        CHECK(amq_filter_items(f) == items - n / 2);
        CHECK(count_missing(f, seed, n / 2, n) == 0);
        /* Removing a key the filter does not report: AMQ_ERR_NOT_FOUND and
         * nothing changes. */
        for (uint64_t i = 0; i < 100; i++) {
            make_key(seed, i, TAG_ABSENT, k);
            if (amq_filter_contains(f, k, KEY_LEN))
                continue;
            before = check_frame(f, &len);
            CHECK_STATUS(amq_filter_remove(f, k, KEY_LEN), AMQ_ERR_NOT_FOUND);
            after = check_frame(f, &len2);
            CHECK(before != NULL && after != NULL && len == len2 &&
                  memcmp(before, after, len) == 0);
            free(before);
            free(after);
            break;
        }
    }
    amq_filter_free(f);
}

/* ---- bad specs and targets ----------------------------------------------------- */

static void refused(const char *spec, uint64_t n, double eps, amq_status want) {
    amq_filter *f = NULL;
    amq_diag d;
    memset(&d, 0, sizeof d);
    amq_status st = amq_filter_new(spec, n, eps, NULL, &f, &d);
    CHECK_MSG(st == want, "new(\"%s\", %llu, %g): %s, expected %s", spec,
              (unsigned long long)n, eps, amq_status_name(st),
              amq_status_name(want));
    CHECK_MSG(st == AMQ_OK || d.message[0] != '\0',
              "new(\"%s\", %llu, %g): empty diagnostic", spec,
              (unsigned long long)n, eps);
    CHECK_MSG(st == AMQ_OK || d.offset <= strlen(spec),
              "new(\"%s\"): diag offset %zu", spec, d.offset);
    if (st == AMQ_OK)
        amq_filter_free(f);
}

static bool is_key_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

static void test_bad_specs(const amq_type_info *ti) {
    char spec[160];
    check_seed = 8;
    snprintf(spec, sizeof spec, "%s:zz_no_such_key=1", ti->name);
    refused(spec, 1000, 0.01, AMQ_ERR_SPEC);
    snprintf(spec, sizeof spec, "%s:", ti->name);
    refused(spec, 1000, 0.01, AMQ_ERR_SPEC);
    snprintf(spec, sizeof spec, "%sx_no_such_type", ti->name);
    refused(spec, 1000, 0.01, AMQ_ERR_SPEC);
    snprintf(spec, sizeof spec, "%s", ti->name);
    for (char *p = spec; *p; p++)
        if (*p >= 'a' && *p <= 'z')
            *p = (char)(*p - 'a' + 'A');
    refused(spec, 1000, 0.01, AMQ_ERR_SPEC);

    /* Every documented parameter with a malformed value. */
    const char *p = ti->params ? ti->params : "";
    for (size_t i = 0; p[i] != '\0'; i++) {
        if (!is_key_char(p[i]) || (i > 0 && p[i - 1] != ' ' && p[i - 1] != ','))
            continue;
        size_t j = i;
        while (is_key_char(p[j]))
            j++;
        if (p[j] != '=' || j - i >= 24)
            continue;
        static const char *vals[] = {"notanumber", "", "1x", "--1"};
        for (size_t v = 0; v < 4; v++) {
            snprintf(spec, sizeof spec, "%s:%.*s=%s", ti->name, (int)(j - i),
                     p + i, vals[v]);
            refused(spec, 1000, 0.01, AMQ_ERR_SPEC);
        }
        i = j;
    }

    static const double bad_eps[] = {0.0, 1.0, 1.5, -0.01, NAN, INFINITY};
    for (size_t i = 0; i < sizeof bad_eps / sizeof bad_eps[0]; i++)
        refused(ti->name, 1000, bad_eps[i], AMQ_ERR_INVALID);
    refused(ti->name, 0, 0.01, AMQ_ERR_INVALID);
    /* No target and no explicit parameters: the spec lacks them (SPEC) or
     * the target is out of range (INVALID); either way with a message. */
    amq_filter *z = NULL;
    amq_diag zd;
    memset(&zd, 0, sizeof zd);
    amq_status zs = amq_filter_new(ti->name, 0, 0.0, NULL, &z, &zd);
    CHECK_MSG((zs == AMQ_ERR_SPEC || zs == AMQ_ERR_INVALID) &&
                  zd.message[0] != '\0',
              "new(\"%s\", 0, 0): %s", ti->name, amq_status_name(zs));
    amq_filter_free(z);

    amq_options opt;
    memset(&opt, 0, sizeof opt);
    opt.hash = (amq_hash_kind)99;
    amq_filter *f = NULL;
    CHECK_STATUS(amq_filter_new(ti->name, 1000, 0.01, &opt, &f, NULL),
                 AMQ_ERR_HASH);
    if (f != NULL)
        amq_filter_free(f);
}

/* ---- keyed hashing ------------------------------------------------------------- */

static void test_keyed(const amq_type_info *ti) {
    static const uint8_t key1[16] = {
        0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe, 1, 2, 3, 4, 5, 6, 7, 8};
    static const uint8_t key2[16] = {
        0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe, 1, 2, 3, 4, 5, 6, 7, 9};
    const uint64_t seed = 9;
    check_seed = seed;
    amq_options opt;
    memset(&opt, 0, sizeof opt);
    opt.hash = AMQ_HASH_SIPHASH;
    opt.hash_key = key1;
    amq_filter *f = filled(ti, 1000, 0.01, &opt, seed, 0, 500);
    opt.hash_key = key2;
    amq_filter *g = filled(ti, 1000, 0.01, &opt, seed, 0, 0);
    opt.hash_key = NULL; /* a random key */
    amq_filter *r1 = filled(ti, 1000, 0.01, &opt, seed, 0, 0);
    amq_filter *r2 = filled(ti, 1000, 0.01, &opt, seed, 0, 0);
    if (f == NULL || g == NULL || r1 == NULL || r2 == NULL)
        goto out;
    const amq_hasher *hf = amq_filter_hasher(f);
    CHECK(hf->kind == AMQ_HASH_SIPHASH && memcmp(hf->key, key1, 16) == 0);
    amq_hasher ref;
    CHECK_OK(amq_hasher_init(&ref, AMQ_HASH_SIPHASH, 0, key1));
    size_t same_g = 0, same_r = 0, off_ref = 0;
    for (uint64_t i = 0; i < 32; i++) {
        uint8_t k[KEY_LEN];
        make_key(seed, i, TAG_PRESENT, k);
        uint64_t h = amq_filter_hash(f, k, KEY_LEN);
        off_ref += h != amq_hash64(&ref, k, KEY_LEN);
        same_g += h == amq_filter_hash(g, k, KEY_LEN);
        same_r +=
            amq_filter_hash(r1, k, KEY_LEN) == amq_filter_hash(r2, k, KEY_LEN);
    }
    CHECK_MSG(off_ref == 0, "%s: filter hash is not SipHash with its key",
              ti->name);
    CHECK_MSG(same_g == 0 && same_r == 0,
              "%s: different keys give equal hashes (%zu, %zu of 32)", ti->name,
              same_g, same_r);

    size_t len;
    uint8_t *frame = check_frame(f, &len);
    if (frame != NULL) {
        uint32_t compat;
        memcpy(&compat, frame + 20, 4);
        CHECK_MSG(compat & AMQ__FRAME_COMPAT_SECRET_KEY,
                  "%s: keyed frame lacks the secret-key flag", ti->name);
        amq_filter *l = NULL;
        CHECK_OK(amq_filter_load(frame, len, NULL, &l, NULL));
        if (l != NULL) {
            const amq_hasher *hl = amq_filter_hasher(l);
            CHECK(hl->kind == AMQ_HASH_SIPHASH &&
                  memcmp(hl->key, key1, 16) == 0);
            CHECK(missing_if_member(l, seed, 0, 500) == 0);
            CHECK(check_same_frame(f, l));
        }
        amq_filter_free(l);
        free(frame);
    }
    /* Unkeyed frames do not carry the flag. */
    amq_filter *plain = filled(ti, 100, 0.01, NULL, seed, 0, 0);
    if (plain != NULL) {
        frame = check_frame(plain, &len);
        if (frame != NULL) {
            uint32_t compat;
            memcpy(&compat, frame + 20, 4);
            CHECK(!(compat & AMQ__FRAME_COMPAT_SECRET_KEY));
        }
        free(frame);
    }
    amq_filter_free(plain);

    /* Seeded XXH64 survives the frame too. */
    memset(&opt, 0, sizeof opt);
    opt.hash = AMQ_HASH_XXH64;
    opt.hash_seed = 99;
    amq_filter *x = filled(ti, 100, 0.01, &opt, seed, 0, 0);
    if (x != NULL) {
        amq_filter *l = clone_filter(x);
        CHECK(l != NULL && amq_filter_hasher(l)->kind == AMQ_HASH_XXH64 &&
              amq_filter_hasher(l)->seed == 99);
        CHECK(amq_filter_hash(x, "k", 1) != amq_filter_hash(f, "k", 1));
        amq_filter_free(l);
    }
    amq_filter_free(x);
out:
    amq_filter_free(f);
    amq_filter_free(g);
    amq_filter_free(r1);
    amq_filter_free(r2);
}

/* ---- reference model ------------------------------------------------------------- */

static void test_model(const amq_type_info *ti, uint64_t seed) {
    enum { U = 3000 };
    static uint32_t counts[U];
    check_seed = seed;
    amq_filter *f = new_filter(ti->name, 4000, 0.01, NULL);
    if (f == NULL)
        return;
    memset(counts, 0, sizeof counts);
    uint64_t rng = seed, total = 0;
    bool can_remove = (amq_filter_caps(f) & AMQ_CAP_REMOVE) != 0;
    uint64_t newest = U; /* the last key added, if it is still held */
    unsigned ops = check_quick() ? 2000 : 8000;
    for (unsigned op = 1; op <= ops; op++) {
        uint64_t r = check_next(&rng);
        uint64_t idx = (r >> 8) % U;
        uint8_t k[KEY_LEN];
        make_key(seed, idx, TAG_PRESENT, k);
        if (can_remove && r % 10 < 4 && counts[idx] > 0) {
            amq_status st = amq_filter_remove(f, k, KEY_LEN);
            CHECK_MSG(st == AMQ_OK, "%s op %u: remove of a held key: %s",
                      ti->name, op, amq_status_name(st));
            if (st == AMQ_OK) {
                counts[idx]--;
                total--;
                newest = U;
            }
        } else {
            /* A type that fills up may refuse (test_full checks that the
             * refusal leaves it unchanged); the model then skips the key. */
            amq_status st = amq_filter_add(f, k, KEY_LEN);
            if (st == AMQ_OK) {
                counts[idx]++;
                total++;
                newest = idx;
            } else {
                CHECK_MSG(st == AMQ_ERR_FULL, "%s op %u: add: %s", ti->name, op,
                          amq_status_name(st));
            }
        }
        if (op % 500 == 0 || op == ops) {
            uint64_t missing = 0;
            for (uint64_t i = 0; i < U; i++) {
                if (counts[i] == 0 || is_sketch(ti) ||
                    (forgets(ti) && i != newest))
                    continue;
                make_key(seed, i, TAG_PRESENT, k);
                missing += !amq_filter_contains(f, k, KEY_LEN);
            }
            CHECK_MSG(missing == 0, "%s op %u: %llu held keys missing",
                      ti->name, op, (unsigned long long)missing);
            CHECK_MSG(amq_filter_items(f) == total,
                      "%s op %u: items %llu, model %llu", ti->name, op,
                      (unsigned long long)amq_filter_items(f),
                      (unsigned long long)total);
            if (missing != 0)
                break;
        }
    }
    amq_filter_free(f);
}

/* A failing add must leave the filter unchanged: drive a small filter of a
 * type that can fill up until it refuses, comparing the frame around each
 * refusal. */
static void test_full(const amq_type_info *ti) {
    const uint64_t seed = 10;
    check_seed = seed;
    amq_filter *f = new_filter(ti->name, 64, 0.01, NULL);
    if (f == NULL)
        return;
    uint64_t refusals = 0, added = 0;
    for (uint64_t i = 0; i < 64 * 40 && refusals < 5; i++) {
        size_t len, len2;
        uint8_t *before = check_frame(f, &len);
        uint8_t k[KEY_LEN];
        make_key(seed, i, TAG_PRESENT, k);
        amq_status st = amq_filter_add(f, k, KEY_LEN);
        if (st == AMQ_OK) {
            added++;
        } else {
            refusals++;
            CHECK_MSG(st == AMQ_ERR_FULL, "%s: add: %s", ti->name,
                      amq_status_name(st));
            uint8_t *after = check_frame(f, &len2);
            CHECK_MSG(before != NULL && after != NULL && len == len2 &&
                          memcmp(before, after, len) == 0,
                      "%s: a refused add changed the filter", ti->name);
            free(after);
        }
        free(before);
    }
    CHECK(amq_filter_items(f) == added);
    amq_filter_free(f);
}

/* ---- static types ---------------------------------------------------------------- */

/* Properties, describe, the empty build, and refused updates. */
static void test_static_properties(const amq_type_info *ti) {
    check_seed = 11;
    amq_filter *f = build_keys(ti->name, 0.01, NULL, 11, 0, 1000, 1);
    if (f == NULL)
        return;
    const amq_type_info *fi = amq_filter_info(f);
    CHECK(fi != NULL && strcmp(fi->name, canon(ti)) == 0 &&
          fi->type_id == ti->type_id);
    CHECK(amq_filter_items(f) == 1000);
    CHECK(amq_filter_capacity(f) == 1000);
    CHECK(amq_filter_size_bytes(f) > 0);
    CHECK(!amq_filter_is_view(f));
    CHECK(count_missing(f, 11, 0, 1000) == 0);
    double bpk = amq_filter_bits_per_key(f), bound = amq_filter_fpr_bound(f);
    CHECK_MSG(fabs(bpk - 8.0 * (double)amq_filter_size_bytes(f) / 1000.0) <
                  1e-9,
              "bits/key %g", bpk);
    CHECK_MSG(bound > 0 && bound < 1, "%s: bound %g", ti->name, bound);
    /* Never below the information-theoretic bound. */
    CHECK_MSG(bpk >= log2(1 / bound) - 1e-9, "%s: %g bits/key for %g", ti->name,
              bpk, bound);

    /* new() and add() are refused; the filter stays as it was. */
    amq_filter *g = NULL;
    amq_diag d;
    memset(&d, 0, sizeof d);
    CHECK_STATUS(amq_filter_new(ti->name, 1000, 0.01, NULL, &g, &d),
                 AMQ_ERR_UNSUPPORTED);
    CHECK(g == NULL && d.message[0] != '\0');
    size_t len, len2;
    uint8_t *before = check_frame(f, &len);
    uint8_t k[KEY_LEN];
    make_key(11, 5000, TAG_PRESENT, k);
    CHECK_STATUS(amq_filter_add(f, k, KEY_LEN), AMQ_ERR_UNSUPPORTED);
    CHECK_STATUS(amq_filter_add_hash(f, 42), AMQ_ERR_UNSUPPORTED);
    uint8_t *after = check_frame(f, &len2);
    CHECK(before != NULL && after != NULL && len == len2 &&
          memcmp(before, after, len) == 0);
    free(before);
    free(after);

    /* describe: snprintf semantics; the spec it gives rebuilds the same
     * bytes from the same keys and target (builds are deterministic). */
    char small[4], full[256];
    size_t need = amq_filter_describe(f, NULL, 0);
    CHECK(need > 0 && need < sizeof full);
    CHECK(amq_filter_describe(f, small, sizeof small) == need);
    CHECK(small[sizeof small - 1] == '\0');
    CHECK(amq_filter_describe(f, full, sizeof full) == need);
    size_t nl = strlen(canon(ti));
    CHECK_MSG(strncmp(full, canon(ti), nl) == 0 &&
                  (full[nl] == '\0' || full[nl] == ':'),
              "describe: %.100s", full);
    g = build_keys(full, amq_filter_target_fpr(f), NULL, 11, 0, 1000, 1);
    CHECK_MSG(g != NULL && check_same_frame(f, g),
              "%s: \"%.100s\" rebuilds other bytes", ti->name, full);
    amq_filter_free(g);
    amq_filter_free(f);

    /* n == 0: an empty filter that answers false, bound 0. */
    f = build_keys(ti->name, 0.01, NULL, 11, 0, 0, 1);
    if (f != NULL) {
        CHECK(amq_filter_items(f) == 0);
        CHECK_MSG(amq_filter_fpr_bound(f) >= 0.0 &&
                      amq_filter_fpr_bound(f) < 1e-9,
                  "empty %s: bound %g", ti->name, amq_filter_fpr_bound(f));
        CHECK(count_fp(f, 11, 10000) == 0);
        amq_filter *c = clone_filter(f);
        CHECK(c != NULL && count_fp(c, 11, 1000) == 0);
        amq_filter_free(c);
    }
    amq_filter_free(f);
}

/* Every key answered; the measured rate below the bound (which is exact for
 * these types, so it is also checked from below at larger n); a target the
 * type cannot meet refused, any other met. */
static void static_fpr_case(const amq_type_info *ti, uint64_t n, double eps,
                            uint64_t seed, uint64_t trials) {
    check_seed = seed;
    amq_filter *f = build_keys(ti->name, eps, NULL, seed, 0, n, 1);
    if (f == NULL)
        return;
    double t = (double)trials, rel = n >= 10000 ? 0.10 : n >= 100 ? 0.60 : 1.0;
    CHECK(amq_filter_items(f) == n);
    uint64_t missing = count_missing(f, seed, 0, n);
    CHECK_MSG(missing == 0, "%s n=%llu: %llu false negatives", ti->name,
              (unsigned long long)n, (unsigned long long)missing);
    double bound = amq_filter_fpr_bound(f);
    double p = (double)count_fp(f, seed + 2000, trials) / t;
    CHECK_MSG(p <= bound * (1 + rel) + four_sigma(bound, t) + 3.0 / t,
              "%s n=%llu: measured %g > bound %g", ti->name,
              (unsigned long long)n, p, bound);
    if (n >= 10000)
        CHECK_MSG(p >= bound * (1 - rel) - four_sigma(bound, t) - 3.0 / t,
                  "%s n=%llu: measured %g far below the exact bound %g",
                  ti->name, (unsigned long long)n, p, bound);
    if (amq_filter_target_fpr(f) == eps) {
        CHECK_MSG(bound <= eps * 1.0000001, "%s: bound %g misses target %g",
                  ti->name, bound, eps);
    } else {
        /* Built at its own rate after refusing eps: it must be worse. */
        CHECK_MSG(amq_filter_target_fpr(f) == 0.0 && bound > eps,
                  "%s refused target %g though its rate is %g", ti->name, eps,
                  bound);
    }
    if (n >= 200000) {
        /* The curve is the family's asymptote: at this size a filter sits
         * on it within its finite-size overhead. */
        double b = -1, bpk = amq_filter_bits_per_key(f);
        CHECK_OK(amq_curve_bits(ti->name, bound, &b));
        CHECK_MSG(bpk >= b / 1.02 && bpk <= b * 1.15,
                  "%s n=%llu: %.3f bits/key, curve says %.3f for %g", ti->name,
                  (unsigned long long)n, bpk, b, bound);
    }
    amq_filter_free(f);
}

/* Query counts kept small: a static type's rate is exact (no load to
 * vary), and there are seven of them. */
static void test_static_fpr(const amq_type_info *ti) {
    static const uint64_t sizes[] = {1, 2, 3, 100, 10000, 200000};
    static const double eps[] = {0.01, 0.001};
    size_t nsizes = check_quick() ? 5 : 6;
    uint64_t trials = check_quick() ? 100000 : 1000000;
    for (size_t i = 0; i < nsizes; i++) {
        unsigned seeds = sizes[i] <= 100 ? 3 : sizes[i] <= 10000 ? 2 : 1;
        size_t neps = sizes[i] >= 200000 ? 1 : 2;
        uint64_t t = sizes[i] >= 200000  ? trials
                     : sizes[i] >= 10000 ? trials * 3 / 10
                                         : trials * 3 / 100;
        for (size_t e = 0; e < neps; e++)
            for (unsigned s = 0; s < seeds; s++)
                static_fpr_case(ti, sizes[i], eps[e], 100 + 17 * s + i, t);
    }
}

/* Bad specs and targets through amq_filter_build. */
static void build_refused(const char *spec, double eps, amq_status want) {
    static const uint64_t hs[3] = {1, 2, 3};
    amq_filter *f = NULL;
    amq_diag d;
    memset(&d, 0, sizeof d);
    amq_status st = amq_filter_build(spec, hs, 3, eps, NULL, &f, &d);
    CHECK_MSG(st == want, "build(\"%.100s\", %g): %s, expected %s", spec, eps,
              amq_status_name(st), amq_status_name(want));
    CHECK_MSG(st == AMQ_OK || d.message[0] != '\0' || want == AMQ_ERR_INVALID,
              "build(\"%.100s\"): empty diagnostic", spec);
    amq_filter_free(f);
}

static void test_static_bad_specs(const amq_type_info *ti) {
    char spec[160];
    check_seed = 12;
    snprintf(spec, sizeof spec, "%s:zz_no_such_key=1", ti->name);
    build_refused(spec, 0.0, AMQ_ERR_SPEC);
    snprintf(spec, sizeof spec, "%s:", ti->name);
    build_refused(spec, 0.0, AMQ_ERR_SPEC);
    snprintf(spec, sizeof spec, "%sx_no_such_type", ti->name);
    build_refused(spec, 0.0, AMQ_ERR_SPEC);
    const char *p = ti->params ? ti->params : "";
    for (size_t i = 0; p[i] != '\0'; i++) {
        if (!is_key_char(p[i]) || (i > 0 && p[i - 1] != ' ' && p[i - 1] != ','))
            continue;
        size_t j = i;
        while (is_key_char(p[j]))
            j++;
        if (p[j] != '=' || j - i >= 24)
            continue;
        static const char *vals[] = {"notanumber", "", "1x", "--1"};
        for (size_t v = 0; v < 4; v++) {
            snprintf(spec, sizeof spec, "%s:%.*s=%s", ti->name, (int)(j - i),
                     p + i, vals[v]);
            build_refused(spec, 0.0, AMQ_ERR_SPEC);
        }
        i = j;
    }
    static const double bad_eps[] = {1.0, 1.5, -0.01, NAN, INFINITY};
    for (size_t i = 0; i < sizeof bad_eps / sizeof bad_eps[0]; i++)
        build_refused(ti->name, bad_eps[i], AMQ_ERR_INVALID);
    amq_filter *f = NULL;
    CHECK_STATUS(amq_filter_build(ti->name, NULL, 5, 0.0, NULL, &f, NULL),
                 AMQ_ERR_INVALID);
    amq_options opt;
    memset(&opt, 0, sizeof opt);
    opt.hash = (amq_hash_kind)99;
    static const uint64_t hs[2] = {1, 2};
    CHECK_STATUS(amq_filter_build(ti->name, hs, 2, 0.0, &opt, &f, NULL),
                 AMQ_ERR_HASH);
    amq_filter_free(f);
}

/* The reference model of a static type: a set given to amq_filter_build
 * as a multiset (every key 1-3 times, shuffled); the filter holds exactly
 * the distinct keys. */
static void test_static_model(const amq_type_info *ti, uint64_t seed) {
    enum { U = 3000 };
    static uint64_t hs[3 * U];
    static uint8_t held[U];
    check_seed = seed;
    amq_hasher h;
    amq_options o;
    memset(&o, 0, sizeof o);
    CHECK_OK(amq_filter_resolve_hasher(ti->name, NULL, &h));
    o.hash = h.kind;
    o.hash_seed = h.seed;
    uint64_t rng = seed, distinct = 0;
    size_t n = 0;
    memset(held, 0, sizeof held);
    for (uint64_t i = 0; i < U; i++) {
        uint64_t r = check_next(&rng);
        if (r % 4 == 0)
            continue; /* a quarter of the universe stays out */
        uint8_t k[KEY_LEN];
        make_key(seed, i, TAG_PRESENT, k);
        held[i] = 1;
        distinct++;
        for (uint64_t c = 0; c <= (r >> 8) % 3; c++)
            hs[n++] = amq_hash64(&h, k, KEY_LEN);
    }
    for (size_t i = n; i > 1; i--) { /* Fisher-Yates */
        size_t j = (size_t)(check_next(&rng) % i);
        uint64_t t = hs[i - 1];
        hs[i - 1] = hs[j];
        hs[j] = t;
    }
    amq_filter *f = NULL;
    amq_status st = amq_filter_build(ti->name, hs, n, 0.0, &o, &f, NULL);
    if (st == AMQ_ERR_INVALID || st == AMQ_ERR_SPEC)
        st = amq_filter_build(ti->name, hs, n, 0.01, &o, &f, NULL);
    CHECK_MSG(st == AMQ_OK, "%s: build of a multiset: %s", ti->name,
              amq_status_name(st));
    if (f == NULL)
        return;
    CHECK_MSG(amq_filter_items(f) == distinct, "%s: items %llu, model %llu",
              ti->name, (unsigned long long)amq_filter_items(f),
              (unsigned long long)distinct);
    uint64_t missing = 0, fp = 0, absent = 0;
    for (uint64_t i = 0; i < U; i++) {
        uint8_t k[KEY_LEN];
        make_key(seed, i, TAG_PRESENT, k);
        bool in = amq_filter_contains(f, k, KEY_LEN);
        missing += held[i] && !in;
        absent += !held[i];
        fp += !held[i] && in;
    }
    CHECK_MSG(missing == 0, "%s: %llu held keys missing", ti->name,
              (unsigned long long)missing);
    double bound = amq_filter_fpr_bound(f), a = (double)absent;
    CHECK_MSG((double)fp / a <= bound * 1.6 + four_sigma(bound, a) + 3.0 / a,
              "%s: %llu of %llu absent keys reported (bound %g)", ti->name,
              (unsigned long long)fp, (unsigned long long)absent, bound);
    amq_filter_free(f);
}

/* ---- registry ------------------------------------------------------------------- */

static void test_registry(void) {
    size_t n = amq_filter_type_count();
    CHECK(n >= 1);
    CHECK(amq_filter_type_at(n) == NULL);
    CHECK(amq_filter_type_at((size_t)-1) == NULL);
    for (size_t i = 0; i < n; i++) {
        const amq_type_info *a = amq_filter_type_at(i);
        CHECK(a != NULL && a->name != NULL && a->summary != NULL &&
              a->params != NULL);
        if (a == NULL || a->name == NULL)
            continue;
        CHECK(a->type_id != 0);
        for (size_t j = 0; j < i; j++) {
            const amq_type_info *b = amq_filter_type_at(j);
            CHECK_MSG(strcmp(a->name, b->name) != 0, "duplicate %s", a->name);
            CHECK_MSG(a->type_id != b->type_id, "%s and %s share id %u",
                      a->name, b->name, a->type_id);
        }
    }
}

/* Non-default shapes that change code paths, run through the same suite:
 * the type's info with the spec in place of its name. */
static const char *const variants[] = {
    "fuse8:ways=4",
    "fuse16:ways=4",
    "ribbon:bits=6.5",
    "ribbon:w=128",
    "ribbon:bump=0",
    "qf:concurrent=1",
    "cqf:concurrent=1",
    "vqf:concurrent=1",
    "cuckoo:grow=1",
    "vacuum:grow=1",
    "spectral:mode=ms",
    "counting:width=8",
    "counting:layout=classic",
    "spectral:layout=classic",
    "spectral:width=16",
    "maplet:op=max",
    "maplet:op=or,v=60",
    "maplet:op=min,v=3,multiset=1",
    "maplet:op=sum,v=1",
    "maplet:kbits=64",
    "maplet:concurrent=1",
    "smaplet:op=or,v=40",
    "smaplet:member=fuse8",
};

static void run_suite(const amq_type_info *ti) {
    {
        bool stat = is_static(ti);
        printf("contract: %s%s\n", ti->name, stat ? " (static)" : "");
        fflush(stdout);
        if (stat) {
            test_static_properties(ti);
            test_static_fpr(ti);
        } else {
            test_properties(ti);
            if (!is_sketch(ti))
                test_fpr(ti);
        }
        if (is_sketch(ti))
            test_sketch_curve(ti);
        else
            test_curve(ti);
        test_roundtrip(ti);
        test_corruption(ti);
        test_batch(ti);
        test_merge(ti);
        test_optional_ops(ti);
        if (stat)
            test_static_bad_specs(ti);
        else
            test_bad_specs(ti);
        test_keyed(ti);
        for (uint64_t s = 0; s < (check_quick() ? 1u : 3u); s++) {
            if (stat)
                test_static_model(ti, 200 + s);
            else
                test_model(ti, 200 + s);
        }
        if (!stat)
            test_full(ti);
    }
}

int main(void) {
    test_registry();
    for (size_t i = 0; i < amq_filter_type_count(); i++)
        run_suite(amq_filter_type_at(i));
    for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++) {
        const amq_type_info *base = amq_filter_type_find(variants[i]);
        CHECK_MSG(base != NULL, "variant %s: unknown type", variants[i]);
        if (base == NULL)
            continue;
        amq_type_info v = *base;
        v.name = variants[i];
        run_suite(&v);
    }
    return check_report("test_contract");
}
