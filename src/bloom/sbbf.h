/*
 * sbbf.h — the split-block Bloom filter's constructor that a spec string
 * cannot express, for the dispatch layer (src/filter/typed_bloom.c wraps
 * it in an amq_filter).
 */
#ifndef AMQ_SRC_BLOOM_SBBF_H
#define AMQ_SRC_BLOOM_SBBF_H

#include <stddef.h>

#include "amq/bloom.h"
#include "core/obj.h"

/* An sbbf holding a copy of a Parquet bitset (len a positive multiple of
 * AMQ_SBBF_BLOCK_BYTES, fewer than 2^32 blocks), its item count estimated
 * from the fill; the query kernel chosen for opt (may be NULL) and the CPU.
 * AMQ_ERR_INVALID for a NULL bitset or a bad length, AMQ_ERR_NOMEM. */
amq_status amq__sbbf_from_parquet(const void *bitset, size_t len,
                                  const amq_options *opt, amq__obj **out);

#endif
