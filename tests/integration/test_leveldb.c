/*
 * test_leveldb.c — amq filters inside a real LevelDB database
 * (integrations/leveldb): for each filter type, write keys in random
 * order, compact, close, reopen with the same policy, then
 *   - every key written is found (no false negative through LevelDB);
 *   - absent keys are never found, and the share the filters let through
 *     agrees with the certified bounds of the filters probed (within 4
 *     binomial standard deviations plus 15%: the bound is tight);
 *   - spoiling every data block and asking again turns exactly those
 *     false positives into corruption errors: the method the benchmark
 *     uses to measure LevelDB's own Bloom filter, checked here against
 *     the policy's exact count.
 * LevelDB's own Bloom filter and no filter at all run the same path (the
 * Bloom's rate only through the spoiled blocks). A few seconds.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amq_leveldb.h"
#include "check.h"
#include "ldb_harness.h"

#define N_KEYS 40000
#define N_ABSENT 40000

typedef struct db_run {
    const char *label;
    amq_leveldb_policy *amq; /* NULL for LevelDB's own Bloom or none */
    ldb_setup s;
    char dir[256];
} db_run;

/* The policy's exact counts against its filters' certified bounds;
 * frame_bpk: the frames' bits per key, counted while building. */
static uint64_t check_bound(const db_run *r, double frame_bpk) {
    amq_leveldb_stats s;
    amq_leveldb_policy_stats(r->amq, &s);
    double want = s.bound_sum, sd = sqrt(want);
    CHECK_MSG(s.probes >= N_ABSENT * 99 / 100, "%s: %llu probes", r->label,
              (unsigned long long)s.probes);
    CHECK(s.corrupt == 0);
    CHECK_MSG(fabs((double)s.positives - want) <= 4 * sd + 0.15 * want + 3,
              "%s: %llu false positives, bounds sum to %.1f", r->label,
              (unsigned long long)s.positives, want);
    printf("%-8s %-22s fpr %.5f, certified bound %.5f, %llu probes, "
           "%.1f frame bits/key\n",
           r->label, amq_leveldb_policy_spec(r->amq),
           (double)s.positives / (double)s.probes, want / (double)s.probes,
           (unsigned long long)s.probes, frame_bpk);
    return s.positives;
}

static void run_one(db_run *r) {
    ldb_result res;
    CHECK(ldb_temp_dir(r->dir, sizeof r->dir, "leveldb") == 0);
    r->s.dir = r->dir;
    r->s.keys = N_KEYS;
    r->s.value_len = 24;
    r->s.block_size = 16384;
    CHECK(ldb_fill(&r->s, 77) == 0);
    CHECK(ldb_lookup(&r->s, true, N_KEYS, true, &res) == 0);
    CHECK_MSG(res.found == N_KEYS && res.errors == 0,
              "%s: %llu of %d keys found", r->label,
              (unsigned long long)res.found, N_KEYS);
    double frame_bpk = 0;
    if (r->amq) {
        amq_leveldb_stats st;
        amq_leveldb_policy_stats(r->amq, &st);
        frame_bpk = 8.0 * (double)st.filter_bytes / (double)st.keys;
        CHECK(st.keys >= N_KEYS && st.filters > 0);
        amq_leveldb_policy_reset_stats(r->amq);
    }
    CHECK(ldb_lookup(&r->s, false, N_ABSENT, true, &res) == 0);
    CHECK(res.found == 0 && res.errors == 0);
    uint64_t fp = r->amq ? check_bound(r, frame_bpk) : 0;
    CHECK(ldb_spoil_data_blocks(r->dir) > 0);
    CHECK(ldb_lookup(&r->s, false, N_ABSENT, true, &res) == 0);
    CHECK(res.found == 0);
    if (r->amq)
        CHECK_MSG(res.errors == fp,
                  "%s: %llu block reads, %llu false "
                  "positives",
                  r->label, (unsigned long long)res.errors,
                  (unsigned long long)fp);
    else if (r->s.policy)
        printf("%-8s %-22s fpr %.5f (from block reads)\n", r->label,
               "LevelDB's Bloom", (double)res.errors / N_ABSENT);
    if (!r->amq && r->s.policy)
        CHECK(res.errors > 0 && res.errors < N_ABSENT / 20);
    if (!r->s.policy) /* no filter: every lookup reads a block */
        CHECK(res.errors >= N_ABSENT * 99 / 100);
    CHECK(ldb_remove_dir(r->dir) == 0);
}

static void test_types(void) {
    static const char *specs[] = {"sbbf", "blocked", "ribbon", "bloom", "fuse"};
    for (size_t k = 0; k < sizeof specs / sizeof *specs; k++) {
        db_run r = {.label = specs[k]};
        amq_diag d = {0};
        check_seed = 41 + k;
        CHECK_OK(amq_leveldb_policy_new(specs[k], 10, NULL, &r.amq, &d));
        if (r.amq == NULL)
            continue;
        r.s.policy = amq_leveldb_policy_get(r.amq);
        amq_leveldb_policy_track_bounds(r.amq, true);
        run_one(&r);
        amq_leveldb_policy_free(r.amq);
    }
    /* the trusted form: bitsets without frames, the same checks */
    db_run tr = {.label = "trusted"};
    amq_diag d = {0};
    check_seed = 47;
    CHECK_OK(amq_leveldb_policy_new_trusted("sbbf", 10, NULL, &tr.amq, &d));
    if (tr.amq != NULL) {
        tr.s.policy = amq_leveldb_policy_get(tr.amq);
        amq_leveldb_policy_track_bounds(tr.amq, true);
        run_one(&tr);
        amq_leveldb_stats st;
        amq_leveldb_policy_stats(tr.amq, &st);
        CHECK(st.corrupt == 0);
        amq_leveldb_policy_free(tr.amq);
    }
    db_run bloom = {.label = "leveldb"};
    bloom.s.policy = leveldb_filterpolicy_create_bloom(10);
    run_one(&bloom);
    leveldb_filterpolicy_destroy(bloom.s.policy);
    db_run none = {.label = "none"};
    run_one(&none);
}

static void test_api(void) {
    amq_leveldb_policy *p = NULL;
    amq_diag d = {0};
    check_seed = 49;
    leveldb_filterpolicy_t *fp = amq_leveldb_filterpolicy("sbbf", 10);
    CHECK(fp != NULL);
    leveldb_filterpolicy_destroy(fp);
    CHECK(amq_leveldb_filterpolicy("nosuch", 10) == NULL);
    CHECK(amq_leveldb_filterpolicy("sbbf", 0) == NULL);
    CHECK_STATUS(amq_leveldb_policy_new("fuse8", 5, NULL, &p, &d),
                 AMQ_ERR_INVALID);
    CHECK_STATUS(amq_leveldb_policy_new("bloom:k=99", 5, NULL, &p, &d),
                 AMQ_ERR_SPEC);
    CHECK_STATUS(amq_leveldb_policy_new("topk", 5, NULL, &p, &d),
                 AMQ_ERR_UNSUPPORTED);
    CHECK(p == NULL);
    /* the trusted form is for split-block bitsets with an unkeyed hash */
    CHECK_STATUS(amq_leveldb_policy_new_trusted("bloom", 10, NULL, &p, &d),
                 AMQ_ERR_UNSUPPORTED);
    amq_options keyed = {0};
    static const uint8_t key16[16] = {1};
    keyed.hash = AMQ_HASH_SIPHASH;
    keyed.hash_key = key16;
    CHECK_STATUS(amq_leveldb_policy_new_trusted("sbbf", 10, &keyed, &p, &d),
                 AMQ_ERR_UNSUPPORTED);
    CHECK(p == NULL);
    CHECK_OK(amq_leveldb_policy_new("ribbon", 7.5, NULL, &p, &d));
    CHECK(p && strncmp(amq_leveldb_policy_spec(p), "ribbon:bits=7.", 14) == 0);
    CHECK(p && amq_leveldb_policy_fpr(p) > 0.005 &&
          amq_leveldb_policy_fpr(p) < 0.008);
    amq_leveldb_policy_free(p);
    amq_leveldb_policy_free(NULL);
}

int main(void) {
    test_api();
    test_types();
    return check_report("test_leveldb");
}
