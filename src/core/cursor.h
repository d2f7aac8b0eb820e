/*
 * cursor.h — reading and writing a frame's parameter block field by field.
 *
 * A parameter block is a handful of little-endian numbers. Loaders used to
 * read them at hand-typed offsets and report errors at hand-typed frame
 * positions, which drifted apart. A cursor knows where its block sits in
 * the frame (base), so every read returns the absolute offset of the field
 * it read, and a diagnostic about a field names exactly that byte:
 *
 *     amq__rd r;                      (base 80: frame header + generic block)
 *     uint64_t m;  size_t at_m = amq__rd_u64(&r, &m);
 *     uint32_t k;  size_t at_k = amq__rd_u32(&r, &k);
 *     if (k == 0) return amq__rd_bad(&r, at_k, "k=%u outside 1..64", k);
 *
 * Reads past the end of the block yield 0 and set `short_read`; loaders
 * check the block length first (amq__rd_expect), so that is a guard, not a
 * path.
 *
 * The writer is the mirror image; with dst NULL it only counts, so the
 * size of a parameter block is whatever params_write writes.
 */
#ifndef AMQ_SRC_CORE_CURSOR_H
#define AMQ_SRC_CORE_CURSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/bits.h"
#include "core/diag.h"

typedef struct amq__rd {
    const uint8_t *p;
    size_t len;        /* bytes in the block                                */
    size_t pos;        /* next byte to read                                 */
    size_t base;       /* absolute offset of p[0] in the frame              */
    size_t payload_at; /* frame offset of the payload the block describes  */
    const char *what;  /* the structure's name, prefixed to messages        */
    amq_diag *diag;
    bool short_read;
} amq__rd;

static inline void amq__rd_init(amq__rd *r, const uint8_t *p, size_t len,
                                size_t base, const char *what, amq_diag *diag) {
    r->p = p;
    r->len = len;
    r->pos = 0;
    r->base = base;
    r->payload_at = 0;
    r->what = what;
    r->diag = diag;
    r->short_read = false;
}

/* Absolute frame offset of the next field. */
static inline size_t amq__rd_at(const amq__rd *r) { return r->base + r->pos; }

static inline const uint8_t *amq__rd_take(amq__rd *r, size_t n, size_t *at) {
    *at = amq__rd_at(r);
    if (n > r->len - r->pos || r->pos > r->len) {
        r->short_read = true;
        r->pos = r->len;
        return NULL;
    }
    r->pos += n;
    return r->p + r->pos - n;
}

/* Each read stores the field in *v (0 past the end) and returns its
 * absolute frame offset. */
static inline size_t amq__rd_u64(amq__rd *r, uint64_t *v) {
    size_t at;
    const uint8_t *q = amq__rd_take(r, 8, &at);
    *v = q ? amq__get_u64(q) : 0;
    return at;
}
static inline size_t amq__rd_u32(amq__rd *r, uint32_t *v) {
    size_t at;
    const uint8_t *q = amq__rd_take(r, 4, &at);
    *v = q ? amq__get_u32(q) : 0;
    return at;
}
static inline size_t amq__rd_f64(amq__rd *r, double *v) {
    size_t at;
    const uint8_t *q = amq__rd_take(r, 8, &at);
    *v = q ? amq__get_f64(q) : 0.0;
    return at;
}

/* AMQ_ERR_CORRUPT at absolute offset `at`: "<what>: <message>". */
amq_status amq__rd_bad(const amq__rd *r, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* AMQ_ERR_CORRUPT unless the block is exactly `len` bytes. */
amq_status amq__rd_expect(const amq__rd *r, size_t len);
/* Read a reserved u32 / u64 field; AMQ_ERR_CORRUPT at it unless zero. */
amq_status amq__rd_zero32(amq__rd *r);
amq_status amq__rd_zero64(amq__rd *r);

typedef struct amq__wr {
    uint8_t *p; /* NULL: count only                                         */
    size_t pos;
} amq__wr;

static inline void amq__wr_u64(amq__wr *w, uint64_t v) {
    if (w->p != NULL)
        amq__put_u64(w->p + w->pos, v);
    w->pos += 8;
}
static inline void amq__wr_u32(amq__wr *w, uint32_t v) {
    if (w->p != NULL)
        amq__put_u32(w->p + w->pos, v);
    w->pos += 4;
}
static inline void amq__wr_f64(amq__wr *w, double v) {
    if (w->p != NULL)
        amq__put_f64(w->p + w->pos, v);
    w->pos += 8;
}

#endif
