/*
 * sort.h — sorting 64-bit keys, optionally through a mixing step and
 * without repeats.
 *
 * Static filters sort their keys (Ribbon bands them in start order; a
 * build de-duplicates them before sizing). Keys are near-uniform hashes,
 * so a two-level distribution sort beats a comparison sort several times:
 * scatter into ~n / 2^11 partitions by the top bits, then each partition
 * by a counting sort on the next bits into cells of about a quarter key,
 * then an insertion sort for the rare ties. Adversarial inputs (many keys
 * in one cell or one partition) fall back to qsort for that partition, so
 * the worst case stays O(n log n).
 *
 * Inside a threaded build (core/par.h) the counting and scattering split
 * the input into consecutive pieces and the partitions are sorted in
 * independent runs: the output is the same for every thread count (a
 * partition keeps its keys in input order before it is sorted).
 */
#ifndef AMQ_SRC_CORE_SORT_H
#define AMQ_SRC_CORE_SORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/mem.h"

/* dst[0..*out_n) = key(src[i]) for every i, ascending, repeats dropped
 * when dedupe; key(x) = amq__mix64(x + seed) when mixed, else x. src and
 * dst must not overlap. Scratch from m (allocated on the calling thread):
 * a few partitions' worth per thread and a count per partition and thread
 * (amq__sort_scratch for one thread).
 * AMQ_ERR_NOMEM (dst then undefined). */
amq_status amq__sort_keys(const amq__mem *m, const uint64_t *src, size_t n,
                          bool mixed, uint64_t seed, bool dedupe, uint64_t *dst,
                          size_t *out_n);

/* Bytes of scratch amq__sort_keys takes for n keys (besides dst). */
size_t amq__sort_scratch(size_t n);

/* floor(log2(n)) for n >= 1; 0 for 0. */
unsigned amq__log2_floor(size_t n);

#endif
