/*
 * sbbf_core.h — the split-block Bloom filter (sbbf.c) on a table its
 * caller owns: what the prefix filter uses as its spare. Blocks of eight
 * 32-bit words (AMQ_SBBF_BLOCK_BYTES), block from the high 32 bits of the
 * hash, one bit per word from the low 32 (Parquet's layout).
 */
#ifndef AMQ_SRC_CORE_SBBF_CORE_H
#define AMQ_SRC_CORE_SBBF_CORE_H

#include <stdbool.h>
#include <stdint.h>

#include "amq/bloom.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define AMQ__HAVE_SBBF256 1
#endif

#define AMQ__SBBF_WORDS 8

/* Parquet's salts: word i of a block takes bit (x * salt[i]) >> 27 of a
 * key's low 32 bits x. */
static const uint32_t AMQ__SBBF_SALT[AMQ__SBBF_WORDS] = {
    0x47b6137bu, 0x44974d91u, 0x8824ad5bu, 0xa2b7289du,
    0x705495c7u, 0x2df1424bu, 0x9efc4947u, 0x5c6bfb31u};

/* The block of hash h: its high 32 bits reduced onto nblocks. */
static inline uint64_t amq__sbbf_block_of(uint64_t h, uint64_t nblocks) {
    return ((h >> 32) * nblocks) >> 32;
}

#ifdef AMQ__HAVE_SBBF256
/* x's eight bits, one a word, as one AVX2 register (a caller compiled for
 * AVX2, chosen at run time, inlines it). */
__attribute__((target("avx2"))) static inline __m256i amq__sbbf_mask256(
    uint32_t x) {
    const __m256i salt = _mm256_loadu_si256((const __m256i *)AMQ__SBBF_SALT);
    __m256i shift = _mm256_srli_epi32(
        _mm256_mullo_epi32(_mm256_set1_epi32((int)x), salt), 27);
    return _mm256_sllv_epi32(_mm256_set1_epi32(1), shift);
}

/* Whether the block at blk holds all of x's bits. */
__attribute__((target("avx2"))) static inline bool amq__sbbf_test256(
    const uint32_t *blk, uint32_t x) {
    __m256i block = _mm256_loadu_si256((const __m256i *)blk);
    return _mm256_testc_si256(block, amq__sbbf_mask256(x)) != 0;
}
#endif

/* Whether hash h's eight bits are all set / set them (nblocks >= 1). */
bool amq__sbbf_has(const uint32_t *words, uint64_t nblocks, uint64_t h);
void amq__sbbf_put(uint32_t *words, uint64_t nblocks, uint64_t h);
/* Fewest blocks (< 2^32) whose rate at capacity keys meets fpr;
 * AMQ_ERR_INVALID, AMQ_ERR_OVERFLOW. */
amq_status amq__sbbf_blocks_for(uint64_t capacity, double fpr,
                                uint64_t *nblocks);
/* The rate with `items` keys in nblocks blocks (Poisson-averaged). */
double amq__sbbf_fpr_at(uint64_t nblocks, uint64_t items);

#endif
