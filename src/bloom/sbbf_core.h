/*
 * sbbf_core.h — the split-block Bloom filter (sbbf.c) on a table its
 * caller owns: what the prefix filter uses as its spare. Blocks of eight
 * 32-bit words (AMQ_SBBF_BLOCK_BYTES), block from the high 32 bits of the
 * hash, one bit per word from the low 32 (Parquet's layout).
 */
#ifndef AMQ_SRC_BLOOM_SBBF_CORE_H
#define AMQ_SRC_BLOOM_SBBF_CORE_H

#include <stdbool.h>
#include <stdint.h>

#include "amq/bloom.h"

#define AMQ__SBBF_WORDS 8

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
