/*
 * shard.c — a logical filter over Redis Cluster shards (amq/shard.h):
 * the cluster's key-slot function, item routing, tags that land in a slot
 * range, and the plan that splits one false-positive budget.
 *
 * Slot: CRC16 with polynomial 0x1021, initial value 0, no reflection and
 * no final xor (XMODEM; check value 0x31C3 for "123456789"), of the hash
 * tag — the bytes between the first '{' and the first '}' after it, if
 * there are any — else of the whole key; then mod 16384. That is Redis
 * Cluster's definition (its specification, "Keys distribution model").
 *
 * Plan: one group per shard for amq_alloc_min_memory: n_s keys, weight
 * w_s = q_s / sum q (the share of absent-item queries), the type's curve;
 * p_0 = 0 (every query reaches some shard's filter). The engine returns
 * the memory-minimal realisable picks with sum w_s f_s(b_s) <= eps. The
 * uniform baseline asks the same engine for one shard at a time at eps.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amq/shard.h"
#include "core/bits.h"

static uint16_t crc16(const uint8_t *p, size_t n) {
    uint16_t c = 0;
    for (size_t i = 0; i < n; i++) {
        c ^= (uint16_t)(p[i] << 8);
        for (int b = 0; b < 8; b++)
            c = (uint16_t)(c & 0x8000 ? (c << 1) ^ 0x1021 : c << 1);
    }
    return c;
}

uint16_t amq_shard_slot(const void *key, size_t len) {
    const uint8_t *k = key;
    if (len == 0)
        return 0;
    const uint8_t *open = memchr(k, '{', len);
    if (open != NULL) {
        size_t from = (size_t)(open - k) + 1;
        const uint8_t *close = memchr(open + 1, '}', len - from);
        if (close != NULL && close > open + 1)
            return (uint16_t)(crc16(open + 1, (size_t)(close - open - 1)) %
                              AMQ_SHARD_SLOTS);
    }
    return (uint16_t)(crc16(k, len) % AMQ_SHARD_SLOTS);
}

size_t amq_shard_of(const void *item, size_t len, size_t shards) {
    amq_hasher h;
    if (shards == 0)
        return 0;
    amq_hasher_init(&h, AMQ_HASH_XXH3, AMQ_SHARD_SEED, NULL);
    uint64_t x = amq_hash64(&h, item, len);
    return (size_t)amq__reduce64(x, (uint64_t)shards);
}

amq_status amq_shard_tag(uint16_t lo, uint16_t hi, char *buf, size_t cap) {
    char t[24];
    if (buf == NULL || lo > hi || hi >= AMQ_SHARD_SLOTS)
        return AMQ_ERR_INVALID;
    /* Decimal tags hit every slot within a few hundred thousand
     * candidates (CRC16 mod 2^14 of distinct strings spreads evenly). */
    for (uint64_t i = 0;; i++) {
        int n = snprintf(t, sizeof t, "%llu", (unsigned long long)i);
        uint16_t s =
            (uint16_t)(crc16((const uint8_t *)t, (size_t)n) % AMQ_SHARD_SLOTS);
        if (s >= lo && s <= hi) {
            if ((size_t)n >= cap)
                return AMQ_ERR_BUFFER;
            memcpy(buf, t, (size_t)n + 1);
            return AMQ_OK;
        }
    }
}

static bool counts_ok(const double *x, size_t n, double *sum) {
    *sum = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(x[i] >= 0) || !isfinite(x[i]))
            return false;
        *sum += x[i];
    }
    return isfinite(*sum);
}

/* Memory of every shard built for eps on its own. */
static amq_status uniform_bits(const amq_alloc_curve *c, size_t shards,
                               const double *keys, double eps, double *out) {
    *out = 0;
    for (size_t s = 0; s < shards; s++) {
        amq_alloc_group g = {keys[s], 1.0, c};
        amq_alloc_pick p;
        if (keys[s] == 0)
            continue;
        AMQ_RETURN_IF_ERR(amq_alloc_min_memory(&g, 1, 0.0, eps, &p, NULL));
        *out += keys[s] * p.bits_per_key;
    }
    return AMQ_OK;
}

static amq_status solve(const amq_alloc_curve *c, size_t shards,
                        const double *keys, const double *queries, double qsum,
                        double eps, amq_alloc_pick *picks,
                        amq_shard_plan_summary *summary) {
    amq_alloc_summary sum;
    amq_alloc_group *g = calloc(shards, sizeof *g);
    if (g == NULL)
        return AMQ_ERR_NOMEM;
    for (size_t s = 0; s < shards; s++) {
        g[s].keys = keys[s];
        g[s].weight = qsum > 0 ? queries[s] / qsum : 1.0 / (double)shards;
        g[s].curve = c;
    }
    amq_status st = amq_alloc_min_memory(g, shards, 0.0, eps, picks, &sum);
    if (st == AMQ_OK && summary != NULL) {
        summary->fpr = 0;
        for (size_t s = 0; s < shards; s++)
            summary->fpr += g[s].weight * picks[s].fpr;
        summary->memory_bits = sum.memory_bits;
        st = uniform_bits(c, shards, keys, eps, &summary->uniform_bits);
    }
    free(g);
    return st;
}

amq_status amq_shard_plan(const char *spec, size_t shards, const double *keys,
                          const double *queries, double eps,
                          const amq_options *opt, amq_alloc_pick *picks,
                          amq_shard_plan_summary *summary, amq_diag *diag) {
    double ksum, qsum;
    amq_alloc_curve *c = NULL;
    if (shards == 0 || keys == NULL || queries == NULL || picks == NULL ||
        spec == NULL || !(eps > 0 && eps < 1) ||
        !counts_ok(keys, shards, &ksum) || !counts_ok(queries, shards, &qsum))
        return AMQ_ERR_INVALID;
    AMQ_RETURN_IF_ERR(amq_alloc_curve_spec(spec, opt, &c, diag));
    amq_alloc_pick *tmp = calloc(shards, sizeof *tmp);
    amq_status st =
        tmp == NULL ? AMQ_ERR_NOMEM
                    : solve(c, shards, keys, queries, qsum, eps, tmp, summary);
    if (st == AMQ_OK)
        memcpy(picks, tmp, shards * sizeof *tmp);
    free(tmp);
    amq_alloc_curve_free(c);
    return st;
}
