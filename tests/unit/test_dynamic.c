/*
 * test_dynamic.c — the fast dynamic filters (vector quotient, prefix and
 * Morton filters) through the generic interface and the getters of
 * amq/dynamic.h. The
 * contract suite covers the generic interface (no false negatives, frames,
 * refusals, the model) and test_kernels every kernel against its
 * reference; here: each layout's fill margin against its design load, the
 * rate against the formula the bound and the curve are built on, the
 * prefix filter's spare past capacity, removes down to an empty table,
 * argument checks, and frames broken in each invariant load checks.
 */
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amq/dynamic.h"
#include "core/frame.h"

static uint64_t *keys(size_t n, uint64_t seed) {
    uint64_t *h = malloc(n ? n * sizeof *h : 1);
    for (size_t i = 0; h != NULL && i < n; i++)
        h[i] = check_next(&seed);
    return h;
}

static double four_sigma(double p, double t) {
    return 4.0 * sqrt(p * (1.0 - p) / t) + 3.0 / t;
}

/* The filter of spec, for a target (capacity, fpr) or (0, 0) when the spec
 * has the parameters; NULL, and a failed check, if it is refused. */
static amq_filter *make(const char *spec, uint64_t capacity, double fpr) {
    amq_filter *f = NULL;
    amq_diag d;
    memset(&d, 0, sizeof d);
    amq_status st = amq_filter_new(spec, capacity, fpr, NULL, &f, &d);
    CHECK_MSG(st == AMQ_OK, "new(%.60s): %s %.100s", spec, amq_status_name(st),
              d.message);
    return f;
}

/* The status amq_filter_new gives spec (the filter, if any, freed). */
static amq_status refusal(const char *spec, uint64_t capacity, double fpr) {
    amq_filter *f = (amq_filter *)1;
    amq_status st = amq_filter_new(spec, capacity, fpr, NULL, &f, NULL);
    CHECK_MSG(st != AMQ_OK || f != NULL, "%s: AMQ_OK without a filter", spec);
    CHECK_MSG(st == AMQ_OK || f == NULL, "%s: a filter left on failure", spec);
    if (st == AMQ_OK)
        amq_filter_free(f);
    return st;
}

/* ---- vector quotient filter --------------------------------------------- */

/* Two-choice blocks take keys well past the design load before the first
 * refusal; a refused add changes nothing. */
static void vqf_fill(unsigned r, double design) {
    for (uint64_t seed = 1; seed <= 3; seed++) {
        check_seed = seed;
        char spec[64];
        snprintf(spec, sizeof spec, "vqf:blocks=2000,r=%u", r);
        amq_filter *f = make(spec, 0, 0.0);
        const amq_vqf *v = amq_vqf_of(f);
        if (v == NULL)
            return;
        uint64_t s = seed, n = 0;
        while (amq_filter_add_hash(f, check_next(&s)) == AMQ_OK)
            n++;
        CHECK_MSG(amq_vqf_load(v) >= design + 0.01,
                  "vqf r=%u: first refusal at load %.4f, design %.2f", r,
                  amq_vqf_load(v), design);
        CHECK(amq_filter_items(f) == n);
        amq_filter_free(f);
    }
}

/* At the design load: measured rate ~ 2 n / (B Q 2^r) (4 sigma + 5%),
 * below the bound; every key found; all removed, the table back to
 * empty pockets. */
static void vqf_rate(unsigned r, size_t n, double fpr) {
    check_seed = 7 + r;
    uint64_t *h = keys(n, 7 + r);
    amq_filter *f = make("vqf", n, fpr);
    const amq_vqf *v = amq_vqf_of(f);
    if (v == NULL || h == NULL) {
        free(h);
        amq_filter_free(f);
        return;
    }
    CHECK(amq_vqf_rbits(v) == r);
    for (size_t i = 0; i < n; i++)
        CHECK_OK(amq_filter_add_hash(f, h[i]));
    size_t missing = 0;
    for (size_t i = 0; i < n; i++)
        missing += !amq_filter_contains_hash(f, h[i]);
    CHECK_MSG(missing == 0, "vqf r=%u: %zu false negatives", r, missing);
    double lists = r == 8 ? 80 : 36;
    double model = 2.0 * (double)n /
                   ((double)amq_vqf_blocks(v) * lists * ldexp(1.0, (int)r));
    uint64_t trials = r == 8 ? 400000 : 4000000, hits = 0, s = 99;
    for (uint64_t t = 0; t < trials; t++)
        hits += amq_filter_contains_hash(f, check_next(&s));
    double p = (double)hits / (double)trials, bound = amq_filter_fpr_bound(f);
    CHECK_MSG(fabs(p - model) <= 0.05 * model + four_sigma(model, trials),
              "vqf r=%u: measured %g, model %g", r, p, model);
    CHECK_MSG(p <= bound + four_sigma(bound, trials) && bound <= fpr,
              "vqf r=%u: measured %g, bound %g, target %g", r, p, bound, fpr);
    for (size_t i = 0; i < n; i++)
        CHECK_OK(amq_filter_remove_hash(f, h[i]));
    CHECK(amq_filter_items(f) == 0 && amq_filter_fpr_bound(f) == 0.0);
    CHECK_STATUS(amq_filter_remove_hash(f, h[0]), AMQ_ERR_NOT_FOUND);
    amq_filter_free(f);
    free(h);
}

static void vqf_args(void) {
    CHECK_STATUS(refusal("vqf:blocks=0,r=8", 0, 0.0), AMQ_ERR_SPEC);
    CHECK_STATUS(refusal("vqf:blocks=10,r=12", 0, 0.0), AMQ_ERR_SPEC);
    CHECK_STATUS(refusal("vqf:blocks=8589934592,r=8", 0, 0.0), AMQ_ERR_SPEC);
    /* too many keys for 2^32 - 1 blocks */
    CHECK_STATUS(refusal("vqf", UINT64_C(1) << 40, 0.01), AMQ_ERR_OVERFLOW);
    CHECK_STATUS(refusal("vqf", 0, 0.01), AMQ_ERR_INVALID);
    CHECK_STATUS(refusal("vqf", 10, 1.0), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_filter_new("vqf", 10, 0.01, NULL, NULL, NULL),
                 AMQ_ERR_INVALID);
}

/* ---- prefix filter -------------------------------------------------------- */

/* Twice the capacity: adds never fail, nothing is lost, the spare takes
 * the excess, and the bound rises with it but stays above the measured
 * rate. */
static void prefix_overload(unsigned r) {
    const size_t cap = 20000;
    check_seed = 21 + r;
    uint64_t *h = keys(2 * cap, 21 + r);
    amq_filter *f = make("prefix", cap, r == 8 ? 0.01 : 0.0005);
    const amq_prefix *pf = amq_prefix_of(f);
    if (pf == NULL || h == NULL) {
        free(h);
        amq_filter_free(f);
        return;
    }
    CHECK(amq_prefix_rbits(pf) == r);
    double bound_cap = 0;
    for (size_t i = 0; i < 2 * cap; i++) {
        CHECK_OK(amq_filter_add_hash(f, h[i]));
        if (i + 1 == cap)
            bound_cap = amq_filter_fpr_bound(f);
    }
    size_t missing = 0;
    for (size_t i = 0; i < 2 * cap; i++)
        missing += !amq_filter_contains_hash(f, h[i]);
    CHECK_MSG(missing == 0, "prefix r=%u: %zu false negatives", r, missing);
    CHECK(amq_filter_items(f) == 2 * cap);
    /* at load 2 about half the keys overflow their bins */
    CHECK_MSG(amq_prefix_spare_items(pf) > cap / 2,
              "prefix r=%u: %llu forwarded", r,
              (unsigned long long)amq_prefix_spare_items(pf));
    uint64_t trials = 1000000, hits = 0, s = 5;
    for (uint64_t t = 0; t < trials; t++)
        hits += amq_filter_contains_hash(f, check_next(&s));
    double p = (double)hits / (double)trials;
    double bound = amq_filter_fpr_bound(f);
    CHECK_MSG(bound > bound_cap && p <= bound + four_sigma(bound, trials),
              "prefix r=%u: bound %g at capacity, %g at twice it, "
              "measured %g",
              r, bound_cap, bound, p);
    amq_filter_free(f);
    free(h);
}

/* A full bin that was only ever given its own 25 keys has forwarded
 * nothing: one bin, K keys, then one more. */
static void prefix_one_bin(void) {
    check_seed = 31;
    amq_filter *f = make("prefix:bins=1,r=8,spare=1", 0, 0.0);
    const amq_prefix *pf = amq_prefix_of(f);
    if (pf == NULL)
        return;
    uint64_t s = 31, h[26];
    for (int i = 0; i < 26; i++) {
        h[i] = check_next(&s);
        CHECK_OK(amq_filter_add_hash(f, h[i]));
        CHECK(amq_prefix_spare_items(pf) == (i < 25 ? 0u : 1u));
    }
    for (int i = 0; i < 26; i++)
        CHECK(amq_filter_contains_hash(f, h[i]));
    amq_filter_free(f);
}

/* E[(X - K)+] / lambda for a Poisson(lambda) bin load X: the share of
 * keys a bin turns away. */
static double forwarded_share(double lambda, unsigned k) {
    double p = exp(-lambda), sum = 0.0;
    for (unsigned i = 1; i < 200; i++) {
        p *= lambda / i;
        if (i > k)
            sum += p * (i - k);
    }
    return sum / lambda;
}

static uint64_t described_bins(const char *spec, uint64_t n) {
    amq_filter *f = NULL;
    char buf[160];
    unsigned long long bins = 0;
    CHECK_OK(amq_filter_new(spec, n, 0.01, NULL, &f, NULL));
    if (f == NULL)
        return 0;
    amq_filter_describe(f, buf, sizeof buf);
    const char *at = strstr(buf, "bins=");
    CHECK_MSG(at != NULL && sscanf(at, "bins=%llu", &bins) == 1, "%s: %s", spec,
              buf);
    /* the size counts the bins, the spare and the route bytes (one a
     * bin, not saved in the frame) */
    unsigned long long spare = 0;
    at = strstr(buf, "spare=");
    CHECK(at != NULL && sscanf(at, "spare=%llu", &spare) == 1);
    CHECK(amq_filter_size_bytes(f) == bins * 32 + spare * 32 + bins);
    amq_filter_free(f);
    return bins;
}

/* load= sizes the bins (n / (K load)); the default is 0.95. At capacity
 * the forwarded share matches the Poisson model at that load (5.9% at
 * 0.95, 8.0% at 1), within 10%. */
static void prefix_load(void) {
    const uint64_t n = 100000;
    CHECK(described_bins("prefix", n) == (uint64_t)ceil(n / (25 * 0.95)));
    CHECK(described_bins("prefix:load=1", n) == n / 25);
    CHECK(described_bins("prefix:load=0.8", n) == n / 20);
    amq_filter *f = NULL;
    CHECK_STATUS(amq_filter_new("prefix:load=0.4", n, 0.01, NULL, &f, NULL),
                 AMQ_ERR_SPEC);
    CHECK_STATUS(amq_filter_new("prefix:load=1.5", n, 0.01, NULL, &f, NULL),
                 AMQ_ERR_SPEC);
    CHECK_STATUS(amq_filter_new("prefix:load=0.9,bins=100,spare=4", n, 0.01,
                                NULL, &f, NULL),
                 AMQ_ERR_SPEC);
    CHECK(f == NULL);
    for (int i = 0; i < 2; i++) {
        char spec[64];
        snprintf(spec, sizeof spec, "prefix:bins=%llu,r=8,spare=512",
                 (unsigned long long)(n / 25));
        amq_filter *g = i == 0 ? make("prefix", n, 0.01) : make(spec, 0, 0.0);
        const amq_prefix *p = amq_prefix_of(g);
        if (p == NULL)
            return;
        uint64_t s = 41 + (uint64_t)i;
        for (uint64_t k = 0; k < n; k++)
            CHECK_OK(amq_filter_add_hash(g, check_next(&s)));
        double lambda = (double)n / (double)amq_prefix_bins(p);
        double want = forwarded_share(lambda, 25);
        double got = (double)amq_prefix_spare_items(p) / (double)n;
        CHECK_MSG(fabs(got - want) <= 0.1 * want,
                  "prefix at load %.3f: forwarded %.4f, model %.4f",
                  lambda / 25, got, want);
        amq_filter_free(g);
    }
}

static void prefix_args(void) {
    CHECK_STATUS(refusal("prefix:bins=0,r=8,spare=1", 0, 0.0), AMQ_ERR_SPEC);
    CHECK_STATUS(refusal("prefix:bins=1,r=8,spare=0", 0, 0.0), AMQ_ERR_SPEC);
    CHECK_STATUS(refusal("prefix:bins=1,r=9,spare=1", 0, 0.0), AMQ_ERR_SPEC);
    CHECK_STATUS(refusal("prefix", 0, 0.01), AMQ_ERR_INVALID);
    CHECK_STATUS(refusal("prefix", 10, 0.0), AMQ_ERR_INVALID);
}

/* ---- Morton filter ---------------------------------------------------------- */

static void morton_fill(unsigned r) {
    for (uint64_t seed = 1; seed <= 2; seed++) {
        check_seed = seed;
        char spec[64];
        snprintf(spec, sizeof spec, "morton:blocks=3000,fp=%u,max_kicks=%d", r,
                 AMQ_MORTON_DEFAULT_KICKS);
        amq_filter *f = make(spec, 0, 0.0);
        const amq_morton *m = amq_morton_of(f);
        if (m == NULL)
            return;
        uint64_t s = seed;
        while (amq_filter_add_hash(f, check_next(&s)) == AMQ_OK)
            ;
        CHECK_MSG(amq_morton_load(m) >= AMQ_MORTON_LOAD + 0.03,
                  "morton fp=%u: first refusal at load %.4f", r,
                  amq_morton_load(m));
        amq_filter_free(f);
    }
}

/* At the design load: the rate about (1 + AMQ_MORTON_B2_*) n / (M 2^r),
 * the curve's model, and below the bound; OTA bits set for fewer keys
 * than that share; all keys removed leave no fingerprint behind. */
static void morton_rate(unsigned r, size_t n, double fpr) {
    check_seed = 41 + r;
    uint64_t *h = keys(n, 41 + r);
    amq_filter *f = make("morton", n, fpr);
    const amq_morton *m = amq_morton_of(f);
    if (m == NULL || h == NULL) {
        free(h);
        amq_filter_free(f);
        return;
    }
    CHECK(amq_morton_fp_bits(m) == r);
    for (size_t i = 0; i < n; i++)
        CHECK_OK(amq_filter_add_hash(f, h[i]));
    double share = amq_morton_ota_share(m);
    double b2 = r == 8 ? AMQ_MORTON_B2_8 : AMQ_MORTON_B2_16;
    CHECK_MSG(share > 0.02 && share < b2,
              "morton fp=%u: OTA share %g at "
              "load %g",
              r, share, amq_morton_load(m));
    double buckets = (double)amq_morton_blocks(m) * (r == 8 ? 64 : 32);
    double model = (1.0 + b2) * (double)n / (buckets * ldexp(1.0, (int)r));
    uint64_t trials = r == 8 ? 1000000 : 20000000, hits = 0, s = 77;
    for (uint64_t t = 0; t < trials; t++)
        hits += amq_filter_contains_hash(f, check_next(&s));
    double p = (double)hits / (double)trials, bound = amq_filter_fpr_bound(f);
    CHECK_MSG(fabs(p - model) <= 0.08 * model + four_sigma(model, trials),
              "morton fp=%u: measured %g, model %g", r, p, model);
    CHECK_MSG(p <= bound + four_sigma(bound, trials) && bound <= fpr,
              "morton fp=%u: measured %g, bound %g, target %g", r, p, bound,
              fpr);
    size_t missing = 0;
    for (size_t i = 0; i < n; i++)
        missing += amq_filter_remove_hash(f, h[i]) != AMQ_OK;
    CHECK_MSG(missing == 0, "morton fp=%u: %zu held keys not removed", r,
              missing);
    CHECK(amq_filter_items(f) == 0 && amq_morton_load(m) == 0.0);
    amq_filter_free(f);
    free(h);
}

static void morton_args(void) {
    char kicks[64];
    snprintf(kicks, sizeof kicks, "morton:blocks=4,fp=8,max_kicks=%d",
             AMQ_MORTON_MAX_KICKS + 1);
    CHECK_STATUS(refusal("morton:blocks=0,fp=8,max_kicks=10", 0, 0.0),
                 AMQ_ERR_SPEC);
    CHECK_STATUS(refusal("morton:blocks=4,fp=12,max_kicks=10", 0, 0.0),
                 AMQ_ERR_SPEC);
    CHECK_STATUS(refusal(kicks, 0, 0.0), AMQ_ERR_SPEC);
    CHECK_STATUS(refusal("morton:blocks=1073741824,fp=8,max_kicks=10", 0, 0.0),
                 AMQ_ERR_SPEC);
    /* 2^26 blocks of 64 buckets: past 2^31 buckets */
    CHECK_STATUS(refusal("morton:blocks=67108864,fp=8,max_kicks=10", 0, 0.0),
                 AMQ_ERR_OVERFLOW);
    CHECK_STATUS(refusal("morton", 0, 0.01), AMQ_ERR_INVALID);
}

/* ---- frames broken in an invariant ----------------------------------------- */

/* A saved frame of spec with n keys; *payload = its payload's offset. */
static uint8_t *frame_of(const char *spec, size_t n, size_t *len,
                         size_t *payload) {
    amq_filter *f = NULL;
    CHECK_OK(amq_filter_new(spec, n, 0.01, NULL, &f, NULL));
    if (f == NULL)
        return NULL;
    for (uint64_t i = 0, s = 3; i < n; i++)
        CHECK_OK(amq_filter_add_hash(f, check_next(&s)));
    uint8_t *buf = check_frame(f, len);
    amq_filter_free(f);
    if (buf == NULL)
        return NULL;
    uint32_t plen = 0;
    memcpy(&plen, buf + AMQ__FRAME_OFF_PARAMS_LEN, 4);
    *payload = AMQ__FRAME_HEADER + (plen + 63) / 64 * 64;
    return buf;
}

/* A patched frame resealed (the checksum: XXH64, seed 0, of everything
 * before its 8 bytes) and loaded; the filter, if any, freed. */
static amq_status reload(uint8_t *buf, size_t len, amq_diag *d) {
    amq_filter *g = NULL;
    amq_hasher x;
    memset(d, 0, sizeof *d);
    CHECK_OK(amq_hasher_init(&x, AMQ_HASH_XXH64, 0, NULL));
    uint64_t sum = amq_hash64(&x, buf, len - 8);
    memcpy(buf + len - 8, &sum, 8);
    amq_status st = amq_filter_load(buf, len, NULL, &g, d);
    amq_filter_free(g);
    return st;
}

/* Patch bytes, reseal the checksum: load must refuse with
 * AMQ_ERR_CORRUPT, pointing at or after the payload. */
static void broken(const char *spec, size_t n, size_t at, const uint8_t *v,
                   size_t vlen, const char *what) {
    size_t len = 0, payload = 0;
    uint8_t *buf = frame_of(spec, n, &len, &payload);
    if (buf == NULL)
        return;
    memcpy(buf + payload + at, v, vlen);
    amq_diag d;
    amq_status st = reload(buf, len, &d);
    CHECK_MSG(st == AMQ_ERR_CORRUPT && d.offset >= payload - 64,
              "%s, %s: %s at offset %zu (payload at %zu): %s", spec, what,
              amq_status_name(st), d.offset, payload, d.message);
    free(buf);
}

/* A hash whose fingerprint in a one-bin R = 8 filter (Q 2^R = 6400
 * values) is q 2^8 + r. */
static uint64_t pf_hash(unsigned q, unsigned r) {
    uint64_t v = (uint64_t)q << 8 | r;
    return ((v << 32) + 6399) / 6400;
}

/* A list keeps its keys in arrival order until its full bin is given
 * one more; then the bin's last list is sorted, so that its last slot is
 * its largest, and the frame says so: that list out of order is refused,
 * other lists out of order load and answer. */
static void prefix_order(void) {
    amq_filter *f = NULL;
    CHECK_OK(amq_filter_new("prefix:bins=1,spare=4", 0, 0.0, NULL, &f, NULL));
    if (f == NULL)
        return;
    static const unsigned top[] = {200, 100, 50, 150};
    for (int i = 0; i < 3; i++) /* list 24, descending */
        CHECK_OK(amq_filter_add_hash(f, pf_hash(24, top[i])));
    for (unsigned r = 30; r > 8; r--) /* list 3, 22 keys, descending */
        CHECK_OK(amq_filter_add_hash(f, pf_hash(3, r)));
    size_t len = 0;
    uint8_t *buf = check_frame(f, &len);
    uint32_t plen = 0;
    memcpy(&plen, buf + AMQ__FRAME_OFF_PARAMS_LEN, 4);
    size_t payload = AMQ__FRAME_HEADER + (plen + 63) / 64 * 64;
    amq_diag d;
    /* full, not overflowed: slots in arrival order */
    CHECK(buf[payload + 7] == 30 && buf[payload + 31] == 50);
    CHECK_OK(reload(buf, len, &d));
    free(buf);
    /* one more: the last list sorted, its largest (200) forwarded */
    CHECK_OK(amq_filter_add_hash(f, pf_hash(24, top[3])));
    for (int i = 0; i < 4; i++)
        CHECK(amq_filter_contains_hash(f, pf_hash(24, top[i])));
    for (unsigned r = 30; r > 8; r--)
        CHECK(amq_filter_contains_hash(f, pf_hash(3, r)));
    buf = check_frame(f, &len);
    CHECK(buf[payload + 29] == 50 && buf[payload + 30] == 100 &&
          buf[payload + 31] == 150);
    CHECK_OK(reload(buf, len, &d));
    buf[payload + 29] = 150;
    buf[payload + 31] = 50;
    amq_status st = reload(buf, len, &d);
    CHECK_MSG(st == AMQ_ERR_CORRUPT, "last list out of order: %s",
              amq_status_name(st));
    free(buf);
    amq_filter_free(f);
}

static void frames(void) {
    check_seed = 51;
    uint8_t ones[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    uint8_t one = 1;
    /* vqf: a pocket with 81 ones; a nonzero slot past the fill */
    broken("vqf", 200, 8, ones, 8, "pocket");
    broken("vqf", 10, 63, &one, 1, "slot past the fill");
    /* prefix: a flag on a bin that is not full; a bit between pocket and
     * flag; an overflowed bin's last list out of order */
    uint8_t flag = 0x80;
    broken("prefix", 10, 6, &flag, 1, "overflow flag on a short bin");
    uint8_t gap = 0x20;
    broken("prefix", 10, 6, &gap, 1, "bit between pocket and flag");
    prefix_order();
    /* morton: counters past 46 slots; a slot past the fill */
    broken("morton", 10, 46, ones, 8, "counters");
    broken("morton", 10, 45, &one, 1, "slot past the fill");
}

int main(void) {
    vqf_fill(8, AMQ_VQF_LOAD8);
    vqf_fill(16, AMQ_VQF_LOAD16);
    vqf_rate(8, check_quick() ? 20000 : 100000, 0.01);
    vqf_rate(16, check_quick() ? 20000 : 100000, 0.0005);
    vqf_args();
    prefix_overload(8);
    prefix_overload(16);
    prefix_one_bin();
    prefix_load();
    prefix_args();
    morton_fill(8);
    morton_fill(16);
    morton_rate(8, check_quick() ? 20000 : 100000, 0.01);
    morton_rate(16, check_quick() ? 20000 : 100000, 0.0005);
    morton_args();
    frames();
    return check_report("test_dynamic");
}
