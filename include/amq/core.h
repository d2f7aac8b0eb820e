/*
 * amq/core.h — allocator hooks, construction options and key hashing.
 *
 * Every amq object takes an amq_options at construction. All fields may be
 * left zero: a zeroed amq_options (or a NULL pointer) means "C library
 * allocator, XXH3 hashing, no flags".
 *
 * Hashing contract: a key is hashed once to 64 bits by the structure's hasher;
 * every structure derives all positions from that one value. Programs that
 * already hold good 64-bit hashes use the *_hash entry points and skip
 * hashing altogether.
 */
#ifndef AMQ_CORE_H
#define AMQ_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "amq/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- allocation ------------------------------------------------------- */

/* A per-object allocator. alloc/realloc/free follow the C library's
 * contracts (realloc(NULL, n) allocates, free(NULL) is a no-op) with an extra
 * context argument. An object keeps a copy of this struct, so the struct may
 * live on the caller's stack; ctx must outlive the object. */
typedef struct amq_allocator {
    void *(*alloc)(void *ctx, size_t size);
    void *(*realloc)(void *ctx, void *ptr, size_t old_size, size_t new_size);
    void (*free)(void *ctx, void *ptr, size_t size);
    void *ctx;
} amq_allocator;

/* ---- hashing ---------------------------------------------------------- */

typedef enum amq_hash_kind {
    AMQ_HASH_DEFAULT = 0, /* in options only: the structure's default hash
                             (XXH3, except sbbf: XXH64 seed 0 per Parquet)  */
    AMQ_HASH_XXH3 = 1,    /* XXH3-64 with a 64-bit seed                      */
    AMQ_HASH_XXH64 = 2,   /* XXH64 with a 64-bit seed; with seed 0 this is
                             the Apache Parquet bloom filter hash            */
    AMQ_HASH_SIPHASH = 3, /* SipHash-2-4 keyed with a 128-bit secret: use it
                             when keys may be chosen by an adversary         */
    AMQ_HASH_ORDER = 4,   /* not a hash: the key's first 8 bytes read
                             big-endian (shorter keys padded with zeros on
                             the right), so byte order is kept. Only range
                             filters (AMQ_CAP_RANGE, amq/range.h) take it,
                             and it is their default                         */
    AMQ_HASH_KIND_COUNT_ = 5
} amq_hash_kind;

#define AMQ_HASH_KEY_BYTES 16

typedef struct amq_hasher {
    amq_hash_kind kind;
    uint64_t seed;
    uint8_t key[AMQ_HASH_KEY_BYTES];
} amq_hasher;

/* Validates kind and initialises h. For AMQ_HASH_SIPHASH, key must point to
 * AMQ_HASH_KEY_BYTES bytes; for the others it is ignored and may be NULL.
 * Returns AMQ_ERR_HASH for AMQ_HASH_DEFAULT, an unknown kind or a missing
 * key. */
AMQ_API amq_status amq_hasher_init(amq_hasher *h, amq_hash_kind kind,
                                   uint64_t seed, const uint8_t *key);

/* Hash len bytes at key (key may be NULL when len == 0). */
AMQ_API uint64_t amq_hash64(const amq_hasher *h, const void *key, size_t len);

/* 128-bit hash (XXH3-128; SipHash-2-4 with 128-bit output when keyed;
 * for XXH64 the high half is a second XXH64 with a derived seed). */
AMQ_API void amq_hash128(const amq_hasher *h, const void *key, size_t len,
                         uint64_t out[2]);

/* Hash n byte keys stored back to back, key i being the bytes
 * data[offsets[i] .. offsets[i+1]) (n + 1 non-decreasing offsets: the
 * layout of Apache Arrow's binary arrays): out[i] = amq_hash64(h, key i).
 * One call for many keys, for callers whose per-call cost dominates (the
 * Python binding). data may be NULL when every key is empty.
 * Errors: AMQ_ERR_INVALID (NULL h, offsets or out with n > 0; decreasing
 * offsets), checked before anything is written. O(total bytes). */
AMQ_API amq_status amq_hash64_batch(const amq_hasher *h, const void *data,
                                    const size_t *offsets, size_t n,
                                    uint64_t *out);

/* Hash n byte keys stored at a fixed stride, key i being the lens[i]
 * bytes at data + i * stride (lens NULL: every key is stride bytes): the
 * layout of a NumPy integer array (stride 8, lens NULL, each key its 8
 * bytes, little-endian on x86-64) or of a fixed-width bytes array (lens the
 * lengths without padding). out[i] = amq_hash64(h, key i).
 * Errors: AMQ_ERR_INVALID (NULL h, data or out with n > 0; a length
 * above stride), checked before anything is written. O(total bytes). */
AMQ_API amq_status amq_hash64_strided(const amq_hasher *h, const void *data,
                                      size_t stride, const size_t *lens,
                                      size_t n, uint64_t *out);

/* Fill buf with n cryptographically random bytes (libsodium). */
AMQ_API void amq_random_bytes(void *buf, size_t n);

AMQ_API const char *amq_hash_kind_name(amq_hash_kind kind);

/* ---- numbers in text ---------------------------------------------------- */

/* v as the shortest decimal that reads back (strtod) as exactly v: 1.08,
 * not 1.0800000000000001; a whole number below 2^53 as its digits (20000).
 * How amq writes a real into a spec (describe), so a described spec parses
 * to the same parameters; for finite v it is also a JSON number. "inf",
 * "-inf" or "nan" otherwise. Returns buf. */
#define AMQ_REAL_TEXT_MAX 32
AMQ_API const char *amq_real_text(double v, char buf[AMQ_REAL_TEXT_MAX]);

/* ---- options ---------------------------------------------------------- */

/* Allow add() from several threads at once (atomic word updates). Queries
 * are always safe from any number of threads while nobody modifies. */
#define AMQ_OPT_CONCURRENT 0x1u
/* Force the portable scalar code paths (tests compare them with SIMD). */
#define AMQ_OPT_SCALAR 0x2u

typedef struct amq_options {
    const amq_allocator *allocator; /* NULL: malloc/realloc/free           */
    amq_hash_kind hash;             /* AMQ_HASH_DEFAULT (0): type's default */
    uint64_t hash_seed;             /* seed for XXH3 / XXH64 (default 0)   */
    const uint8_t *hash_key;        /* 16-byte secret for SIPHASH; NULL with
                                       SIPHASH draws a random key          */
    uint32_t flags;                 /* AMQ_OPT_*                           */
} amq_options;

#ifdef __cplusplus
}
#endif
#endif
