/*
 * test_shard.c — a logical filter over cluster shards (amq/shard.h):
 * the slot function against CRC16-XMODEM's check value and Redis
 * Cluster's documented examples and hash-tag rules, routing spread, tags
 * landing in their range, and plans: the weighted rate meets the target,
 * skewed query shares save memory against the uniform split, equal shares
 * give equal shards, and filters built from the picks, queried with the
 * measured shares, show a global false-positive rate within the target.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amq/amq.h"
#include "check.h"

static uint16_t slot(const char *k) { return amq_shard_slot(k, strlen(k)); }

static void test_slot(void) {
    /* XMODEM check value 0x31C3 of "123456789" */
    CHECK(slot("123456789") == (0x31C3 % 16384));
    CHECK(slot("foo") == 12182); /* Redis docs: CLUSTER KEYSLOT */
    CHECK(slot("somekey") == 11058);
    CHECK(slot("{user1000}.following") == slot("{user1000}.followers"));
    CHECK(slot("{user1000}.following") == slot("user1000"));
    CHECK(slot("foo{}{bar}") == amq_shard_slot("foo{}{bar}", 10));
    CHECK(slot("foo{}{bar}") != slot("bar") || slot("foo{}{bar}") == 0);
    CHECK(slot("foo{{bar}}zap") == slot("{bar"));
    CHECK(slot("foo{bar}{zap}") == slot("bar"));
    CHECK(amq_shard_slot(NULL, 0) == 0);
}

static void test_route_and_tags(void) {
    enum { S = 7, N = 70000 };
    size_t count[S] = {0};
    char key[32], tag[16];
    for (int i = 0; i < N; i++) {
        int n = snprintf(key, sizeof key, "item:%d", i);
        size_t s = amq_shard_of(key, (size_t)n, S);
        CHECK(s < S);
        if (s < S)
            count[s]++;
    }
    for (int s = 0; s < S; s++) /* 10000 expected, sd ~93 */
        CHECK_MSG(count[s] > 9500 && count[s] < 10500, "shard %d: %zu", s,
                  count[s]);
    CHECK(amq_shard_of("x", 1, 0) == 0);
    uint16_t ranges[][2] = {
        {0, 5460}, {5461, 10922}, {10923, 16383}, {100, 100}, {16383, 16383}};
    for (size_t r = 0; r < 5; r++) {
        CHECK_OK(amq_shard_tag(ranges[r][0], ranges[r][1], tag, sizeof tag));
        uint16_t s = slot(tag);
        CHECK_MSG(s >= ranges[r][0] && s <= ranges[r][1], "tag %s slot %u", tag,
                  s);
    }
    CHECK_STATUS(amq_shard_tag(5, 4, tag, sizeof tag), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_shard_tag(0, 16384, tag, sizeof tag), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_shard_tag(100, 100, tag, 1), AMQ_ERR_BUFFER);
}

static void test_plan_shape(void) {
    double keys[4] = {1e5, 1e5, 1e5, 1e5}, q[4] = {1, 1, 1, 1};
    double skew[4] = {1000, 10, 10, 1};
    amq_alloc_pick p[4];
    amq_shard_plan_summary sum;
    CHECK_OK(amq_shard_plan("bloom", 4, keys, q, 0.01, NULL, p, &sum, NULL));
    CHECK(sum.fpr <= 0.01 + 1e-12);
    /* equal shards, up to the engine's 1/64-bit grid (one group may sit
     * on a fractional hull segment) */
    for (int s = 1; s < 4; s++)
        CHECK(fabs(p[s].bits_per_key - p[0].bits_per_key) <= 1.0 / 64);
    CHECK(sum.memory_bits <= sum.uniform_bits * (1 + 1e-9) + 1);
    CHECK_OK(amq_shard_plan("bloom", 4, keys, skew, 0.01, NULL, p, &sum, NULL));
    CHECK(sum.fpr <= 0.01 + 1e-12);
    CHECK_MSG(sum.memory_bits < 0.8 * sum.uniform_bits,
              "skewed plan %.0f vs uniform %.0f", sum.memory_bits,
              sum.uniform_bits);
    CHECK(p[0].fpr < p[3].fpr); /* the busiest shard gets the tightest */
    CHECK_OK(
        amq_shard_plan("cuckoo", 4, keys, skew, 0.001, NULL, p, &sum, NULL));
    CHECK(sum.fpr <= 0.001 + 1e-12);
    CHECK(strncmp(p[0].spec, "cuckoo", 6) == 0);
    /* refusals leave picks untouched */
    double neg[4] = {1, -1, 1, 1};
    memset(p, 0x5a, sizeof p);
    CHECK_STATUS(
        amq_shard_plan("bloom", 4, keys, neg, 0.01, NULL, p, NULL, NULL),
        AMQ_ERR_INVALID);
    CHECK(((unsigned char *)p)[0] == 0x5a);
    CHECK_STATUS(amq_shard_plan("bloom", 0, keys, q, 0.01, NULL, p, NULL, NULL),
                 AMQ_ERR_INVALID);
    CHECK_STATUS(amq_shard_plan("bloom", 4, keys, q, 1.5, NULL, p, NULL, NULL),
                 AMQ_ERR_INVALID);
    CHECK(amq_shard_plan("nosuch", 4, keys, q, 0.01, NULL, p, NULL, NULL) ==
          AMQ_ERR_SPEC);
}

/* Build the plan's filters, route keys, query absent items in the measured
 * shares: the global rate stays within the target. */
static void test_plan_realised(void) {
    enum { S = 3 };
    const uint64_t n = check_quick() ? 20000 : 60000;
    double keys[S] = {0}, q[S] = {60, 30, 10};
    amq_alloc_pick p[S];
    amq_shard_plan_summary sum;
    amq_filter *f[S] = {NULL};
    char key[32];
    for (uint64_t i = 0; i < n; i++) {
        int len = snprintf(key, sizeof key, "in:%llu", (unsigned long long)i);
        keys[amq_shard_of(key, (size_t)len, S)] += 1;
    }
    CHECK_OK(amq_shard_plan("bloom", S, keys, q, 0.01, NULL, p, &sum, NULL));
    for (int s = 0; s < S; s++)
        CHECK_OK(amq_filter_new(p[s].spec, (uint64_t)keys[s], p[s].fpr, NULL,
                                &f[s], NULL));
    for (uint64_t i = 0; i < n; i++) {
        int len = snprintf(key, sizeof key, "in:%llu", (unsigned long long)i);
        CHECK_OK(amq_filter_add(f[amq_shard_of(key, (size_t)len, S)], key,
                                (size_t)len));
    }
    /* absent queries: shard s receives the share q_s / sum q */
    uint64_t fp = 0, total = 0, rng = 99;
    for (uint64_t i = 0; total < 200000; i++) {
        int len = snprintf(key, sizeof key, "out:%llu", (unsigned long long)i);
        size_t s = amq_shard_of(key, (size_t)len, S);
        double u = (double)(check_next(&rng) >> 11) * 0x1p-53;
        if (u * 60 > q[s]) /* thin the stream to the measured shares */
            continue;
        total++;
        fp += amq_filter_contains(f[s], key, (size_t)len);
    }
    double rate = (double)fp / (double)total;
    CHECK_MSG(rate <= 0.01 * 1.15, "global FPR %.5f, plan %.5f", rate, sum.fpr);
    for (int s = 0; s < S; s++)
        amq_filter_free(f[s]);
}

int main(void) {
    test_slot();
    test_route_and_tags();
    test_plan_shape();
    test_plan_realised();
    return check_report("shard");
}
