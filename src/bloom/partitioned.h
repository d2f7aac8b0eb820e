/*
 * partitioned.h — internal access to the partitioned Bloom filter for the
 * variants built on it: the scalable filter (one partitioned filter per
 * stage) and the compressed filter (its working bit array). Also the probe
 * multipliers the stable filter shares.
 *
 * The callbacks below take the object's header (amq__obj, the struct's
 * first member): they are the partitioned type's descriptor slots, which
 * the compressed type shares, and what a scalable stage is queried with.
 */
#ifndef AMQ_SRC_BLOOM_PARTITIONED_H
#define AMQ_SRC_BLOOM_PARTITIONED_H

#include <stdbool.h>
#include <stdint.h>

#include "amq/bloom.h"
#include "core/cursor.h"
#include "core/mem.h"
#include "core/spec.h"
#include "type/type.h"

#define AMQ__PART_MAX_K 64

/* Odd 64-bit multipliers: probe i of hash h is the high part of h * mul[i]
 * (multiply-shift). Part of the file formats of partitioned, scalable,
 * stable and compressed filters: never edit. */
extern const uint64_t amq__part_mul[AMQ__PART_MAX_K];

/* Invariants in partitioned.c: slice is a positive multiple of 64,
 * 1 <= k <= 64, ones[i] is the number of set bits of slice i. */
struct amq_partitioned {
    amq__obj o; /* o.items counts adds; o.table the k slices */
    uint64_t *words;
    uint64_t slice; /* bits per slice, multiple of 64 */
    uint64_t slice_words;
    unsigned k;
    uint64_t ones[]; /* k: set bits per slice, for the bound */
};

/* A partitioned filter of k slices of slice_bits (a positive multiple of 64)
 * each, from mem; with borrow != NULL it reads (k * slice_bits / 64 words)
 * in place and owns no table. Returns AMQ_ERR_INVALID, OVERFLOW or NOMEM.
 * Freed with amq__obj_free(&p->o). */
amq_status amq__partitioned_make(const amq__mem *mem, uint64_t slice_bits,
                                 unsigned k, const uint64_t *borrow,
                                 amq_partitioned **out);
/* m_bits split into k slices of ceil(m/k) bits rounded up to a multiple of
 * 64; 1 <= k <= 64, 1 <= m_bits <= 2^62 (else AMQ_ERR_INVALID). */
amq_status amq__partitioned_explicit(const amq__mem *mem, uint64_t m_bits,
                                     unsigned k, amq_partitioned **out);
/* k and slice bits for capacity keys at fpr; *k == 0 on entry asks for
 * the best integer k, otherwise it is kept. */
amq_status amq__partitioned_size_for(uint64_t capacity, double fpr, unsigned *k,
                                     uint64_t *slice_bits);
/* Bits per key at which k hashes (0: best integer k) reach fpr, on the
 * curve (1 - e^{-k/b})^k; the inverse of amq__partitioned_curve. */
double amq__partitioned_bits_for(double fpr, unsigned k);
double amq__partitioned_curve(double bits_per_key, unsigned k);

/* Bytes of the k slices. */
size_t amq__partitioned_bytes(const amq_partitioned *p);
/* After the words were written directly: recount the set bits. */
void amq__partitioned_recount(amq_partitioned *p);

/* The 24-byte parameter block: slice_bits u64 | k u32 | rsv u32 (0) |
 * items u64. read validates it against `bytes` of table (AMQ_ERR_CORRUPT
 * with a diagnostic at the offending field). */
#define AMQ__PART_PARAMS 24
void amq__partitioned_params_write(const amq__obj *o, amq__wr *w);
amq_status amq__partitioned_params_read(amq__rd *r, size_t bytes,
                                        uint64_t *slice_bits, unsigned *k,
                                        uint64_t *items);

/* The type's callbacks (type.h has their contracts). merge refuses another
 * shape with AMQ_ERR_INCOMPATIBLE; estimate is the slices' mean of
 * -s ln(1 - ones_i/s) (infinity once a slice is full); bound is the exact
 * prod_i ones_i / s. */
amq_status amq__partitioned_add(amq__obj *o, uint64_t h);
bool amq__partitioned_contains(const amq__obj *o, uint64_t h);
void amq__partitioned_batch(const amq__obj *o, const uint64_t *h, size_t n,
                            uint8_t *out);
amq_status amq__partitioned_merge(amq__obj *dst, const amq__obj *src,
                                  amq__merge_op op);
amq_status amq__partitioned_estimate(const amq__obj *o, double *out);
double amq__partitioned_bound(const amq__obj *o);
size_t amq__partitioned_describe(const amq__obj *o, char *buf, size_t cap);

#endif
