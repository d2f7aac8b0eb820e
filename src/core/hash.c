/*
 * hash.c — the one place keys become 64-bit hashes.
 *
 * XXH3 and XXH64 come from Debian's libxxhash-dev header (inlined for speed);
 * SipHash-2-4 comes from libsodium (crypto_shorthash_siphash24, and the
 * 128-bit-output siphashx24). A structure stores one amq_hasher and derives
 * every position it needs from the 64-bit value.
 */
#include <string.h>

#include <sodium.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "amq/core.h"
#include "core/mem.h"

amq_status amq_hasher_init(amq_hasher *h, amq_hash_kind kind, uint64_t seed,
                           const uint8_t *key) {
    if (h == NULL)
        return AMQ_ERR_INVALID;
    memset(h, 0, sizeof *h);
    switch (kind) {
    case AMQ_HASH_XXH3:
    case AMQ_HASH_XXH64:
    case AMQ_HASH_ORDER:
        h->kind = kind;
        h->seed = seed;
        return AMQ_OK;
    case AMQ_HASH_SIPHASH:
        if (key == NULL)
            return AMQ_ERR_HASH;
        h->kind = kind;
        memcpy(h->key, key, AMQ_HASH_KEY_BYTES);
        return AMQ_OK;
    case AMQ_HASH_DEFAULT:
    case AMQ_HASH_KIND_COUNT_: break;
    }
    return AMQ_ERR_HASH;
}

/* Bytes [from, from + 8) of the key as a big-endian number, zeros past its
 * end: the order map of AMQ_HASH_ORDER. */
static uint64_t order_word(const uint8_t *key, size_t len, size_t from) {
    uint64_t v = 0;
    for (size_t i = 0; i < 8; i++)
        v = v << 8 | (from + i < len ? key[from + i] : 0);
    return v;
}

uint64_t amq_hash64(const amq_hasher *h, const void *key, size_t len) {
    static const uint8_t empty[1] = {0};
    if (key == NULL)
        key = empty;
    switch (h->kind) {
    case AMQ_HASH_XXH64: return XXH64(key, len, h->seed);
    case AMQ_HASH_ORDER: return order_word(key, len, 0);
    case AMQ_HASH_SIPHASH: {
        unsigned char out[crypto_shorthash_siphash24_BYTES];
        uint64_t v;
        crypto_shorthash_siphash24(out, key, len, h->key);
        memcpy(&v, out, sizeof v);
        return v;
    }
    default: return XXH3_64bits_withSeed(key, len, h->seed);
    }
}

amq_status amq_hash64_batch(const amq_hasher *h, const void *data,
                            const size_t *offsets, size_t n, uint64_t *out) {
    const uint8_t *bytes = data;
    if (n == 0)
        return AMQ_OK;
    if (h == NULL || offsets == NULL || out == NULL)
        return AMQ_ERR_INVALID;
    for (size_t i = 0; i < n; i++)
        if (offsets[i + 1] < offsets[i])
            return AMQ_ERR_INVALID;
    if (bytes == NULL && offsets[n] != offsets[0])
        return AMQ_ERR_INVALID;
    for (size_t i = 0; i < n; i++)
        out[i] = amq_hash64(h, bytes ? bytes + offsets[i] : NULL,
                            offsets[i + 1] - offsets[i]);
    return AMQ_OK;
}

amq_status amq_hash64_strided(const amq_hasher *h, const void *data,
                              size_t stride, const size_t *lens, size_t n,
                              uint64_t *out) {
    const uint8_t *bytes = data;
    if (n == 0)
        return AMQ_OK;
    if (h == NULL || bytes == NULL || out == NULL)
        return AMQ_ERR_INVALID;
    if (lens == NULL) {
        for (size_t i = 0; i < n; i++)
            out[i] = amq_hash64(h, bytes + i * stride, stride);
        return AMQ_OK;
    }
    for (size_t i = 0; i < n; i++)
        if (lens[i] > stride)
            return AMQ_ERR_INVALID;
    for (size_t i = 0; i < n; i++)
        out[i] = amq_hash64(h, bytes + i * stride, lens[i]);
    return AMQ_OK;
}

void amq_hash128(const amq_hasher *h, const void *key, size_t len,
                 uint64_t out[2]) {
    static const uint8_t empty[1] = {0};
    if (key == NULL)
        key = empty;
    switch (h->kind) {
    case AMQ_HASH_ORDER:
        out[0] = order_word(key, len, 0);
        out[1] = order_word(key, len, 8);
        return;
    case AMQ_HASH_XXH64:
        out[0] = XXH64(key, len, h->seed);
        out[1] = XXH64(key, len, h->seed ^ 0x9e3779b97f4a7c15ULL);
        return;
    case AMQ_HASH_SIPHASH: {
        unsigned char o[crypto_shorthash_siphashx24_BYTES];
        crypto_shorthash_siphashx24(o, key, len, h->key);
        memcpy(out, o, 16);
        return;
    }
    default: {
        XXH128_hash_t r = XXH3_128bits_withSeed(key, len, h->seed);
        out[0] = r.low64;
        out[1] = r.high64;
        return;
    }
    }
}

/* Recorded for debugging; randombytes_buf works regardless (see below). */
static int amq__sodium_init_failed;

void amq_random_bytes(void *buf, size_t n) {
    /* sodium_init is idempotent and thread-safe. Its failure only means the
     * library's own initialisation failed; randombytes_buf then still reads
     * the kernel's generator (getrandom) on Linux. */
    if (sodium_init() < 0)
        amq__sodium_init_failed = 1;
    randombytes_buf(buf, n);
}

const char *amq_hash_kind_name(amq_hash_kind kind) {
    switch (kind) {
    case AMQ_HASH_DEFAULT: return "default";
    case AMQ_HASH_XXH3: return "xxh3";
    case AMQ_HASH_XXH64: return "xxh64";
    case AMQ_HASH_SIPHASH: return "siphash24";
    case AMQ_HASH_ORDER: return "order";
    case AMQ_HASH_KIND_COUNT_: break;
    }
    return "unknown";
}

amq_status amq__hasher_from_options(const amq_options *opt,
                                    amq_hash_kind type_default,
                                    amq_hasher *out) {
    amq_hash_kind kind = opt != NULL ? opt->hash : AMQ_HASH_DEFAULT;
    uint64_t seed = opt != NULL ? opt->hash_seed : 0;
    uint8_t key[AMQ_HASH_KEY_BYTES];
    if (kind == AMQ_HASH_DEFAULT)
        kind = type_default;
    if (kind != AMQ_HASH_SIPHASH)
        return amq_hasher_init(out, kind, seed, NULL);
    if (opt != NULL && opt->hash_key != NULL)
        memcpy(key, opt->hash_key, sizeof key);
    else
        amq_random_bytes(key, sizeof key);
    amq_status st = amq_hasher_init(out, kind, 0, key);
    sodium_memzero(key, sizeof key);
    return st;
}
