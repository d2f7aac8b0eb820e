/*
 * parts.h — what the clock files share: the amq_clock struct (a Bloom
 * clock or a vector clock), the Bloom clock's timestamp snapshot, LEB128
 * varints and the per-kind entry points clock.c dispatches to.
 */
#ifndef AMQ_SRC_CLOCK_PARTS_H
#define AMQ_SRC_CLOCK_PARTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "amq/clock.h"
#include "core/mem.h"
#include "type/ids.h"

#define AMQ__CLOCK_TYPE_BLOOM AMQ__ID_bloom_clock
#define AMQ__CLOCK_TYPE_VECTOR AMQ__ID_vector_clock
#define AMQ__CLOCK_PARAMS_LEN 16

typedef unsigned __int128 amq__u128;

/* One Bloom clock timestamp: absolute cell i = offset + cell(i). Invariants:
 * some cell is 0 (offset is the common minimum; m >= 1), offset + cell(i)
 * fits in 64 bits, rsum = sum of the relative cells, zeros = how many are
 * 0, cells holds m * width bytes (cap >= that). */
typedef struct amq__bsnap {
    uint64_t offset;
    amq__u128 rsum;
    uint32_t zeros;
    uint8_t width; /* bytes per cell: 1, 2, 4 or 8 */
    uint8_t *cells;
    size_t cap;
} amq__bsnap;

typedef struct amq__bloom_part {
    uint32_t m, k;
    amq_hasher hasher;
    uint32_t shape_tag; /* 32-bit tag of (m, k, hasher), see shape_tag() */
    amq__bsnap cur;
    amq__bsnap *ring; /* history: hcap slots, newest at (head - 1)      */
    uint32_t hcap, hlen, head;
} amq__bloom_part;

typedef struct amq__vector_part {
    uint64_t self;
    size_t n, cap; /* entries sorted by id                           */
    uint64_t *ids;
    uint64_t *ctr;
} amq__vector_part;

struct amq_clock {
    amq_clock_kind kind;
    amq__mem mem;
    amq__bloom_part b;
    amq__vector_part v;
};

/* ---- varints (LEB128, canonical: no overlong forms) ---------------------- */

static inline size_t amq__vlen(uint64_t v) {
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}
static inline size_t amq__vput(uint8_t *p, uint64_t v) {
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}
/* Reads a varint at *pos < len; false when truncated, overlong or > 64
 * bits. */
static inline bool amq__vget(const uint8_t *p, size_t len, size_t *pos,
                             uint64_t *out) {
    uint64_t v = 0;
    for (unsigned shift = 0, i = 0; i < 10; i++, shift += 7) {
        if (*pos >= len)
            return false;
        uint8_t b = p[(*pos)++];
        if (i == 9 && b > 1)
            return false;
        v |= (uint64_t)(b & 0x7f) << shift;
        if ((b & 0x80) == 0) {
            if (b == 0 && i > 0)
                return false; /* overlong */
            *out = v;
            return true;
        }
    }
    return false;
}

/* ---- bloomclock.c ------------------------------------------------------ */

amq_status amq__bclock_init(amq_clock *c, uint32_t m, uint32_t k,
                            uint32_t history, const amq_hasher *h);
void amq__bclock_destroy(amq_clock *c);
amq_status amq__bclock_copy_state(amq_clock *dst, const amq_clock *src);
amq_status amq__bclock_clone_history(amq_clock *dst, const amq_clock *src);
amq_status amq__bclock_tick(amq_clock *c, uint64_t h);
amq_status amq__bclock_merge(amq_clock *c, const amq_clock *o);
void amq__bclock_compare(const amq_clock *a, const amq_clock *b,
                         amq_clock_verdict *v);
void amq__bclock_compare_history(const amq_clock *local,
                                 const amq_clock *remote, amq_clock_verdict *v);
uint64_t amq__bclock_get(const amq_clock *c, uint64_t i);
double amq__bclock_sum(const amq_clock *c);
amq_status amq__bclock_explains(const amq_clock *c, uint32_t age, uint64_t h,
                                bool *out);
bool amq__bclock_same_shape(const amq_clock *a, const amq_clock *b);
/* The body (offset + cells) shared by the wire message and the frame. */
size_t amq__bclock_body_size(const amq__bsnap *s, uint32_t m);
size_t amq__bclock_body_write(const amq__bsnap *s, uint32_t m, uint8_t *p);
/* Parse a body of exactly len bytes into c's current timestamp (recorded
 * in the history); c unchanged on failure. */
amq_status amq__bclock_body_read(amq_clock *c, const uint8_t *p, size_t len,
                                 amq_diag *diag);

/* ---- vectorclock.c -------------------------------------------------------- */

amq_status amq__vclock_init(amq_clock *c, uint64_t self);
void amq__vclock_destroy(amq_clock *c);
amq_status amq__vclock_copy_state(amq_clock *dst, const amq_clock *src);
amq_status amq__vclock_tick(amq_clock *c);
amq_status amq__vclock_merge(amq_clock *c, const amq_clock *o);
amq_status amq__vclock_compare(const amq_clock *a, const amq_clock *b,
                               amq_clock_verdict *v);
amq_status amq__vclock_join(amq_clock *c, uint64_t node);
amq_status amq__vclock_leave(amq_clock *c, uint64_t node);
uint64_t amq__vclock_get(const amq_clock *c, uint64_t node);
double amq__vclock_sum(const amq_clock *c);
uint32_t amq__vclock_members_tag(const amq_clock *c);
/* Entries, as (id delta, counter) varints after a varint count; dense
 * clocks on the wire send counters only (ids_on_wire false). */
size_t amq__vclock_body_size(const amq_clock *c, bool ids);
size_t amq__vclock_body_write(const amq_clock *c, bool ids, uint8_t *p);
amq_status amq__vclock_body_read(amq_clock *c, bool ids, const uint8_t *p,
                                 size_t len, amq_diag *diag);

#endif
