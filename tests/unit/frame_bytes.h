/*
 * frame_bytes.h — what the unit tests of one structure's updates share:
 * a filter's frame as bytes (64-byte aligned, so a view can borrow it),
 * whether a filter still saves to given bytes (a failed call changed
 * nothing), and an allocator that fails once `fail_left` allocations are
 * used up (-1: never).
 */
#ifndef AMQ_TESTS_UNIT_FRAME_BYTES_H
#define AMQ_TESTS_UNIT_FRAME_BYTES_H

#include <stdlib.h>
#include <string.h>

#include "check.h"

static inline uint8_t *save(const amq_filter *f, size_t *len) {
    *len = amq_filter_serialized_size(f);
    uint8_t *buf = aligned_alloc(64, (*len + 63) / 64 * 64);
    CHECK(buf != NULL);
    if (buf != NULL)
        CHECK_OK(amq_filter_save(f, buf, *len, NULL));
    return buf;
}

static inline bool same_bytes(const amq_filter *a, const uint8_t *b,
                              size_t blen) {
    size_t len;
    uint8_t *x = save(a, &len);
    bool same = x != NULL && len == blen && memcmp(x, b, len) == 0;
    free(x);
    return same;
}

static int fail_left = -1;
static inline void *fail_alloc(void *ctx, size_t n) {
    (void)ctx;
    if (fail_left == 0)
        return NULL;
    if (fail_left > 0)
        fail_left--;
    return malloc(n);
}
static inline void *fail_realloc(void *ctx, void *p, size_t o, size_t n) {
    (void)ctx;
    (void)o;
    if (fail_left == 0)
        return NULL;
    return realloc(p, n);
}
static inline void fail_free(void *ctx, void *p, size_t n) {
    (void)ctx;
    (void)n;
    free(p);
}
static const amq_allocator failing_allocator = {fail_alloc, fail_realloc,
                                                fail_free, NULL};

/* Add h with no memory to spare (f's allocator is failing_allocator): a
 * refusal (AMQ_ERR_NOMEM) must leave f's bytes and item count as they
 * were, and the add then succeeds with memory. True when it was refused. */
static inline bool add_without_memory(amq_filter *f, uint64_t h) {
    size_t len;
    uint64_t items = amq_filter_items(f);
    uint8_t *before = save(f, &len);
    fail_left = 0;
    amq_status st = amq_filter_add_hash(f, h);
    fail_left = -1;
    bool refused = st == AMQ_ERR_NOMEM;
    if (refused) {
        CHECK(same_bytes(f, before, len));
        CHECK(amq_filter_items(f) == items);
        CHECK_OK(amq_filter_add_hash(f, h));
    } else {
        CHECK_OK(st);
    }
    free(before);
    return refused;
}

#endif
