/*
 * mem.h — internal allocation helpers over the per-object amq_allocator.
 *
 * Every object stores an amq__mem (a copy of the caller's allocator, or the
 * C library's). Sizes are passed to free so allocators that need them (arena,
 * Redis) work. Size arithmetic goes through amq__mul/amq__add, which report
 * overflow instead of wrapping.
 */
#ifndef AMQ_SRC_CORE_MEM_H
#define AMQ_SRC_CORE_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "amq/core.h"

typedef struct amq__mem {
    amq_allocator a;
} amq__mem;

/* Fills m from opt (NULL or a NULL allocator: the C library). */
void amq__mem_init(amq__mem *m, const amq_options *opt);
void *amq__alloc(const amq__mem *m, size_t size);
void *amq__zalloc(const amq__mem *m, size_t size);
void amq__free(const amq__mem *m, void *p, size_t size);

/* A zeroed block of `size` bytes aligned to `align` (a power of two <= 4096).
 * Keep the amq__block to free it. */
typedef struct amq__block {
    void *raw;
    size_t raw_size;
    void *ptr;
} amq__block;

amq_status amq__block_alloc(const amq__mem *m, size_t size, size_t align,
                            amq__block *out);
void amq__block_free(const amq__mem *m, amq__block *b);

static inline bool amq__mul(size_t a, size_t b, size_t *out) {
    return !__builtin_mul_overflow(a, b, out);
}
static inline bool amq__add(size_t a, size_t b, size_t *out) {
    return !__builtin_add_overflow(a, b, out);
}

/* Options with hash fields resolved to a concrete hasher. */
amq_status amq__hasher_from_options(const amq_options *opt,
                                    amq_hash_kind type_default,
                                    amq_hasher *out);

#endif
