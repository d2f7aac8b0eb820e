/*
 * test_vacuum.c — what the vacuum filter adds to the cuckoo table (the
 * shared behaviour — walks, undo, duplicates, widths, the model test — is
 * in test_cuckoo.c, which runs over both types):
 *
 *   - the shape: ranges are powers of two, non-increasing, dividing the
 *     table; tables from a capacity are whole chunks and hold it;
 *   - the paper's point: at equal capacity and fpr a vacuum table needs at
 *     most the bits per key of a power-of-two cuckoo table, and on average
 *     over capacities about a quarter fewer; and ours: the default cuckoo
 *     table (any even size) needs no more than the vacuum table (printed
 *     and asserted);
 *   - explicit shapes and their errors; describe() rebuilds the same table;
 *   - measured FPR below the bound on a non-power-of-two table.
 */
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "amq/cuckoo.h"

static bool is_pow2(uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }

static void check_ranges(const amq_cuckoo *v) {
    uint64_t r[4], m = amq_cuckoo_buckets(v);
    amq_cuckoo_ranges(v, r);
    for (int j = 0; j < 4; j++) {
        CHECK_MSG(is_pow2(r[j]) && r[j] >= 2 && m % r[j] == 0 &&
                      (j == 0 || r[j] <= r[j - 1]),
                  "m=%llu range[%d]=%llu", (unsigned long long)m, j,
                  (unsigned long long)r[j]);
    }
}

static uint64_t next_pow2(uint64_t x) {
    uint64_t p = 2;
    while (p < x)
        p <<= 1;
    return p;
}

/* Filters sized for n keys at eps: [0] the default cuckoo table, [1] the
 * vacuum table, [2] the power-of-two cuckoo table the paper compares with
 * (the smallest power of two above n / 0.94 + 3.5 sqrt(n) + 8 slots, our
 * sizing before tables of any even size). Fills them; returns their bits
 * per key at capacity. */
static void trio_case(uint64_t n, double eps, bool fill, double out[3]) {
    amq_filter *f[3] = {NULL, NULL, NULL};
    double slots = (double)n / 0.94 + 3.5 * sqrt((double)n) + 8.0;
    char pow2[96];
    snprintf(pow2, sizeof pow2, "cuckoo:fp=%u,buckets=%llu,max_kicks=500",
             amq_cuckoo_fp_bits_for(eps),
             (unsigned long long)next_pow2((uint64_t)ceil(slots / 4)));
    CHECK_OK(amq_filter_new("cuckoo", n, eps, NULL, &f[0], NULL));
    CHECK_OK(amq_filter_new("vacuum", n, eps, NULL, &f[1], NULL));
    CHECK_OK(amq_filter_new(pow2, 0, 0.0, NULL, &f[2], NULL));
    if (f[0] == NULL || f[1] == NULL || f[2] == NULL)
        goto out;
    check_ranges(amq_cuckoo_of(f[1]));
    CHECK(amq_cuckoo_fp_bits(amq_cuckoo_of(f[0])) ==
          amq_cuckoo_fp_bits(amq_cuckoo_of(f[1])));
    for (int k = 0; k < 3; k++) {
        uint64_t rng = n, fails = 0;
        out[k] = 8.0 * (double)amq_filter_size_bytes(f[k]) / (double)n;
        if (!fill)
            continue;
        for (uint64_t i = 0; i < n; i++)
            fails += amq_filter_add_hash(f[k], check_next(&rng)) != AMQ_OK;
        CHECK_MSG(fails == 0, "n=%llu: %llu adds failed below capacity",
                  (unsigned long long)n, (unsigned long long)fails);
        CHECK_MSG(amq_filter_fpr_bound(f[k]) <= eps, "bound %g > %g",
                  amq_filter_fpr_bound(f[k]), eps);
    }
out:
    for (int k = 0; k < 3; k++)
        amq_filter_free(f[k]);
}

static void test_gain(void) {
    static const uint64_t filled[] = {1000, 100000, 300000, 1000000};
    double bits[3] = {0, 0, 0};
    size_t nf = check_quick() ? 3 : 4;
    check_seed = 1;
    printf("capacity  cuckoo b/key  vacuum b/key  pow2 cuckoo b/key "
           "(eps 0.01)\n");
    for (size_t i = 0; i < nf; i++) {
        trio_case(filled[i], 0.01, true, bits);
        printf("%8llu  %12.2f  %12.2f  %17.2f\n", (unsigned long long)filled[i],
               bits[0], bits[1], bits[2]);
        CHECK(bits[1] <= bits[2]);
        CHECK_MSG(bits[0] <= bits[1] * 1.001,
                  "n=%llu: cuckoo %.2f vs vacuum "
                  "%.2f b/key",
                  (unsigned long long)filled[i], bits[0], bits[1]);
        if (filled[i] >= 300000)
            CHECK_MSG(bits[1] <= 0.7 * bits[2],
                      "n=%llu: vacuum %.2f vs "
                      "pow2 cuckoo %.2f b/key",
                      (unsigned long long)filled[i], bits[1], bits[2]);
    }
    /* Averaged over capacities spread log-uniformly in [1e4, 2e6]. */
    unsigned samples = check_quick() ? 10 : 40;
    double sum[3] = {0, 0, 0}, worst = 1.0;
    uint64_t rng = 2;
    for (unsigned i = 0; i < samples; i++) {
        double u = (double)(check_next(&rng) >> 11) * 0x1p-53;
        uint64_t n = (uint64_t)(1e4 * pow(200.0, u));
        check_seed = n;
        trio_case(n, 0.001, false, bits);
        for (int k = 0; k < 3; k++)
            sum[k] += bits[k];
        CHECK(bits[1] <= bits[2] && bits[0] <= bits[1] * 1.001);
        if (bits[1] / bits[2] < worst)
            worst = bits[1] / bits[2];
    }
    printf("mean over %u capacities in [1e4, 2e6] at eps 0.001: cuckoo %.2f, "
           "vacuum %.2f, pow2 cuckoo %.2f b/key (vacuum %.1f%% below pow2; "
           "best case %.1f%%)\n",
           samples, sum[0] / samples, sum[1] / samples, sum[2] / samples,
           100.0 * (1.0 - sum[1] / sum[2]), 100.0 * (1.0 - worst));
    CHECK_MSG(sum[1] <= 0.85 * sum[2], "mean saving only %.1f%%",
              100.0 * (1.0 - sum[1] / sum[2]));
}

/* The filter of a spec with explicit parameters (no target); *out is NULL
 * when it is refused. */
static amq_status vacuum_spec(const char *spec, amq_filter **out) {
    *out = NULL;
    return amq_filter_new(spec, 0, 0.0, NULL, out, NULL);
}

static void test_explicit(void) {
    amq_filter *f = NULL, *g = NULL;
    check_seed = 3;
    /* 5 chunks of 16384 buckets, chosen or given. */
    CHECK_OK(vacuum_spec("vacuum:fp=12,buckets=81920,max_kicks=500", &f));
    const amq_cuckoo *v = amq_cuckoo_of(f);
    if (v != NULL) {
        uint64_t r[4];
        amq_cuckoo_ranges(v, r);
        CHECK_MSG(r[0] == 16384 && r[1] == 4096 && r[2] == 1024 && r[3] == 256,
                  "ranges %llu %llu %llu %llu", (unsigned long long)r[0],
                  (unsigned long long)r[1], (unsigned long long)r[2],
                  (unsigned long long)r[3]);
        check_ranges(v);
    }
    amq_filter_free(f);
    CHECK_OK(vacuum_spec("vacuum:fp=8,buckets=192,chunk=64,max_kicks=10", &f));
    if (amq_cuckoo_of(f) != NULL)
        check_ranges(amq_cuckoo_of(f));
    amq_filter_free(f);
    /* Tiny tables are single power-of-two chunks. */
    CHECK_OK(vacuum_spec("vacuum:fp=8,buckets=4,max_kicks=10", &f));
    amq_filter_free(f);
    /* one chunk, not a power of two; a chunk not a power of two, or not
     * dividing the table; 40-bit fingerprints */
    static const char *const refused[] = {
        "vacuum:fp=8,buckets=100,max_kicks=10",
        "vacuum:fp=8,buckets=81920,chunk=3,max_kicks=10",
        "vacuum:fp=8,buckets=81920,chunk=65536,max_kicks=10",
        "vacuum:fp=40,buckets=81920,chunk=8192,max_kicks=10"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        CHECK_STATUS(vacuum_spec(refused[i], &f), AMQ_ERR_SPEC);
        CHECK(f == NULL);
    }

    /* Through specs: bad shapes are spec errors with a message; describe
     * rebuilds the same table. */
    static const char *const bad[] = {"vacuum:fp=8,buckets=81920,chunk=3000",
                                      "vacuum:fp=8,buckets=1000",
                                      "vacuum:fp=8,buckets=81920,chunk=65536"};
    for (size_t i = 0; i < 3; i++) {
        amq_diag d;
        memset(&d, 0, sizeof d);
        CHECK_STATUS(amq_filter_new(bad[i], 0, 0.0, NULL, &f, &d),
                     AMQ_ERR_SPEC);
        CHECK(d.message[0] != '\0');
    }
    CHECK_OK(amq_filter_new("vacuum:chunk=4096", 500000, 0.01, NULL, &f, NULL));
    if (f != NULL) {
        char a[128], b[128];
        amq_filter_describe(f, a, sizeof a);
        CHECK_MSG(strstr(a, "chunk=4096") != NULL, "%s", a);
        CHECK_OK(amq_filter_new(a, 0, 0.0, NULL, &g, NULL));
        if (g != NULL) {
            amq_filter_describe(g, b, sizeof b);
            CHECK_MSG(strcmp(a, b) == 0, "%.100s vs %.100s", a, b);
        }
    }
    amq_filter_free(f);
    amq_filter_free(g);
}

/* A non-power-of-two table: measured FPR at 93% load against the bound. */
static void test_fpr(void) {
    amq_filter *f = NULL;
    check_seed = 4;
    CHECK_OK(
        vacuum_spec("vacuum:fp=8,buckets=10240,chunk=2048,max_kicks=500", &f));
    if (f == NULL)
        return;
    uint64_t rng = 5, n = 5 * 2048 * 4 * 93 / 100;
    for (uint64_t i = 0; i < n; i++)
        CHECK_OK(amq_filter_add_hash(f, check_next(&rng)));
    uint64_t trials = check_quick() ? 200000 : 1000000, fp = 0;
    for (uint64_t i = 0; i < trials; i++)
        fp += amq_filter_contains_hash(f, check_next(&rng));
    double p = (double)fp / (double)trials, b = amq_filter_fpr_bound(f);
    double sd = sqrt(b * (1 - b) / (double)trials);
    CHECK_MSG(p <= b + 4 * sd && p >= b - 4 * sd - 0.02 * b,
              "measured %g, bound %g", p, b);
    CHECK(fabs(b - amq_cuckoo_fpr(amq_cuckoo_load(amq_cuckoo_of(f)), 8)) <=
          0.01 * b);
    amq_filter_free(f);
}

int main(void) {
    test_gain();
    test_explicit();
    test_fpr();
    return check_report("test_vacuum");
}
