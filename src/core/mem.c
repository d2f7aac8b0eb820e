/*
 * mem.c — the per-object allocator and aligned blocks.
 *
 * Caller-supplied allocators need not align beyond malloc's guarantee, so
 * aligned tables over-allocate by align-1 bytes and round the pointer up;
 * the raw pointer and size are kept for free.
 *
 * Large tables from the C library's allocator are marked for transparent
 * huge pages before they are first touched: a filter queried at random over
 * hundreds of megabytes spends much of each lookup in page walks otherwise.
 * (With a caller's allocator the memory is the caller's business.)
 */
#include "core/mem.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void *libc_alloc(void *ctx, size_t size) {
    (void)ctx;
    return malloc(size);
}
static void *libc_realloc(void *ctx, void *p, size_t old, size_t size) {
    (void)ctx;
    (void)old;
    return realloc(p, size);
}
static void libc_free(void *ctx, void *p, size_t size) {
    (void)ctx;
    (void)size;
    free(p);
}

void amq__mem_init(amq__mem *m, const amq_options *opt) {
    if (opt != NULL && opt->allocator != NULL && opt->allocator->alloc &&
        opt->allocator->free) {
        m->a = *opt->allocator;
        return;
    }
    m->a.alloc = libc_alloc;
    m->a.realloc = libc_realloc;
    m->a.free = libc_free;
    m->a.ctx = NULL;
}

void *amq__alloc(const amq__mem *m, size_t size) {
    if (size == 0)
        size = 1;
    return m->a.alloc(m->a.ctx, size);
}

void *amq__zalloc(const amq__mem *m, size_t size) {
    void *p = amq__alloc(m, size);
    if (p != NULL)
        memset(p, 0, size);
    return p;
}

void amq__free(const amq__mem *m, void *p, size_t size) {
    if (p != NULL)
        m->a.free(m->a.ctx, p, size == 0 ? 1 : size);
}

#define HUGE_MIN_BYTES ((size_t)4 << 20)

static void advise_huge(const amq__mem *m, void *p, size_t size) {
#ifdef MADV_HUGEPAGE
    long page = sysconf(_SC_PAGESIZE);
    if (m->a.alloc != libc_alloc || size < HUGE_MIN_BYTES || page <= 0)
        return;
    uintptr_t lo =
        ((uintptr_t)p + (uintptr_t)page - 1) & ~(uintptr_t)(page - 1);
    uintptr_t hi = ((uintptr_t)p + size) & ~(uintptr_t)(page - 1);
    if (hi > lo)
        (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE); /* a hint only */
#else
    (void)m;
    (void)p;
    (void)size;
#endif
}

amq_status amq__block_alloc(const amq__mem *m, size_t size, size_t align,
                            amq__block *out) {
    size_t raw_size;
    if (align == 0 || (align & (align - 1)) != 0 || align > 4096)
        return AMQ_ERR_INVALID;
    if (!amq__add(size, align - 1, &raw_size))
        return AMQ_ERR_OVERFLOW;
    void *raw = amq__alloc(m, raw_size);
    if (raw == NULL)
        return AMQ_ERR_NOMEM;
    uintptr_t p = ((uintptr_t)raw + (align - 1)) & ~(uintptr_t)(align - 1);
    advise_huge(m, (void *)p, size);
    memset((void *)p, 0, size);
    out->raw = raw;
    out->raw_size = raw_size;
    out->ptr = (void *)p;
    return AMQ_OK;
}

void amq__block_free(const amq__mem *m, amq__block *b) {
    amq__free(m, b->raw, b->raw_size);
    b->raw = NULL;
    b->ptr = NULL;
    b->raw_size = 0;
}
