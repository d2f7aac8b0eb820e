/*
 * rb.h — inside the RedisBloom layouts: rb.c (the hashes, RDB fields,
 * frames) and a file a family (rb_bf.c, rb_cf.c, rb_cms.c, rb_topk.c).
 * Commands see only amqr.h's rb_* calls.
 */
#ifndef AMQ_REDIS_RB_H
#define AMQ_REDIS_RB_H

#include <stdio.h>
#include <string.h>

#include "amqr.h"

#define OPT_NOROUND 1u
#define OPT_ENTS_IS_BITS 2u
#define OPT_FORCE64 4u
#define OPT_NO_SCALING 8u
#define OPT_ALL 15u
#define LN2 0.693147180559945

#define BF_MAX_LINKS 1000u /* RedisBloom's own load limit */
#define BF_MAX_HASHES 4096u
#define CF_MAX_FILTERS 65535u
#define CF_MAX_BUCKETS 0x00FFFFFFFFFFFFFFull

typedef struct rb_link {
    uint64_t entries, bits, bytes, size;
    double error, bpe;
    uint32_t hashes;
    uint8_t n2;
    uint8_t *bf;
} rb_link;

typedef struct rb_sub {
    uint64_t nbuckets;
    uint8_t *data;
} rb_sub;

/* A Top-K list entry: RedisBloom's min-heap on count. item NULL: empty. */
typedef struct rb_heap {
    uint32_t fp, len, count;
    uint8_t *item;
} rb_heap;

struct rb_value {
    int fam;
    union {
        struct {
            uint64_t size;
            uint32_t n, options, growth;
            rb_link *link;
        } bf;
        struct {
            uint64_t nbuckets, items, deletes;
            uint32_t n, room; /* sub-filters, and room for them */
            uint32_t bucket_size, max_iter, expansion;
            rb_sub *sub;
        } cf;
        struct {
            uint64_t width, depth, counter;
            uint32_t *cells;
        } cms;
        struct {
            uint32_t k, width, depth;
            double decay;
            uint32_t *cells; /* (fingerprint, count) per bucket */
            rb_heap *heap;
        } topk;
    } u;
};

#define BF(v) (&(v)->rb->u.bf)
#define CF(v) (&(v)->rb->u.cf)
#define CMS(v) (&(v)->rb->u.cms)
#define TOPK(v) (&(v)->rb->u.topk)

static inline uint32_t le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static inline uint64_t le64(const uint8_t *p) {
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static inline double le_f64(const uint8_t *p) {
    uint64_t x = le64(p);
    double d;
    memcpy(&d, &x, 8);
    return d;
}

static inline void put_u64(uint8_t *p, uint64_t x) {
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(x >> (8 * i));
}

static inline void put_u32(uint8_t *p, uint32_t x) {
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(x >> (8 * i));
}

static inline void put_u16(uint8_t *p, uint16_t x) {
    p[0] = (uint8_t)x;
    p[1] = (uint8_t)(x >> 8);
}

static inline void put_f64(uint8_t *p, double d) {
    uint64_t x;
    memcpy(&x, &d, 8);
    put_u64(p, x);
}

static inline void *mem(rval *v, size_t n) {
    void *p = v->alloc.alloc(v->alloc.ctx, n);
    if (p != NULL)
        memset(p, 0, n);
    return p;
}

static inline void mem_free(rval *v, void *p, size_t n) {
    v->alloc.free(v->alloc.ctx, p, n);
}

static inline bool fail(char *err, size_t cap, const char *msg) {
    snprintf(err, cap, "%s", msg);
    return false;
}

#define GET_U(x)                                                               \
    do {                                                                       \
        if (!in->u64(in, &(x)))                                                \
            goto short_read;                                                   \
    } while (0)
#define GET_D(x)                                                               \
    do {                                                                       \
        if (!in->dbl(in, &(x)))                                                \
            goto short_read;                                                   \
    } while (0)

uint8_t *rb__get_exact(rval *v, rb_io *in, uint64_t n);
rval *rb__new(int fam);

/* A family's fields in RedisBloom's RDB order (load: false with err
 * filled) and the memory of its layout. */
bool rb__load_bf(rval *v, int encver, rb_io *in, char *err, size_t cap);
bool rb__load_cf(rval *v, int encver, rb_io *in, char *err, size_t cap);
bool rb__load_cms(rval *v, rb_io *in, char *err, size_t cap);
bool rb__load_topk(rval *v, rb_io *in, char *err, size_t cap);
void rb__save_bf(const rval *v, rb_io *out);
void rb__save_cf(const rval *v, rb_io *out);
void rb__save_cms(const rval *v, rb_io *out);
void rb__save_topk(const rval *v, rb_io *out);
void rb__free_bf(rval *v);
void rb__free_cf(rval *v);
void rb__free_cms(rval *v);
void rb__free_topk(rval *v);

#endif
