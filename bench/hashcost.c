/*
 * hashcost.c — what hashing a key costs, measured apart from the filters
 * (whose rows use pre-hashed keys): amq_hash64 over 16-byte keys for each
 * hash kind amq offers. The keys sit in a small array that stays in cache,
 * so this is compute cost only.
 */
#include <stdlib.h>
#include <string.h>

#include "amq/amq.h"
#include "bench.h"

#define KEY_BYTES 16
#define PASSES 4

static double time_kind(const amq_hasher *h, const uint8_t *keys, size_t nkeys,
                        int reps) {
    double t[64];
    reps = reps < 1 ? 1 : reps > 64 ? 64 : reps;
    for (int r = 0; r < reps; r++) {
        uint64_t acc = 0, t0 = bench_now_ns();
        for (int p = 0; p < PASSES; p++)
            for (size_t i = 0; i < nkeys; i++)
                acc += amq_hash64(h, keys + i * KEY_BYTES, KEY_BYTES);
        t[r] = (double)(bench_now_ns() - t0) / (double)(nkeys * PASSES);
        bench_consume(acc);
    }
    return bench_summary(t, (size_t)reps);
}

size_t bench_hash_cost(size_t nkeys, int reps, bench_hash_row *out,
                       size_t cap) {
    static const amq_hash_kind kinds[] = {AMQ_HASH_XXH3, AMQ_HASH_XXH64,
                                          AMQ_HASH_SIPHASH};
    uint8_t sipkey[AMQ_HASH_KEY_BYTES];
    memset(sipkey, 0x5a, sizeof sipkey);
    uint64_t *keys = bench_make_keys(0xc0ffeeu, nkeys * 2);
    if (keys == NULL)
        return 0;
    size_t m = 0;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0] && m < cap; i++) {
        amq_hasher h;
        if (amq_hasher_init(&h, kinds[i], 0, sipkey) != AMQ_OK)
            continue;
        out[m].kind = amq_hash_kind_name(kinds[i]);
        out[m].ns_per_key = time_kind(&h, (const uint8_t *)keys, nkeys, reps);
        m++;
    }
    free(keys);
    return m;
}
