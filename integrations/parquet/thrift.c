/*
 * thrift.c — the compact protocol reader of thrift.h. Every path that
 * would read past the end or recurse too deep marks the reader bad; a bad
 * reader reads zeros and finds no more fields, so callers' loops end.
 */
#include "thrift.h"

#include <stdlib.h>
#include <string.h>

static void fail(thrift_reader *r) {
    r->bad = true;
    r->p = r->end;
}

void thrift_init(thrift_reader *r, const void *buf, size_t len) {
    r->p = (const uint8_t *)buf;
    r->end = r->p + len;
    r->depth = 0;
    r->bad = false;
}

size_t thrift_offset(const thrift_reader *r, const void *buf) {
    return (size_t)(r->p - (const uint8_t *)buf);
}

static uint8_t byte(thrift_reader *r) {
    if (r->p >= r->end) {
        fail(r);
        return 0;
    }
    return *r->p++;
}

static uint64_t varint(thrift_reader *r) {
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 70; shift += 7) {
        uint8_t b = byte(r);
        if (r->bad)
            return 0;
        v |= (uint64_t)(b & 0x7f) << shift;
        if ((b & 0x80) == 0)
            return v;
    }
    fail(r);
    return 0;
}

static int64_t zigzag(uint64_t v) {
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

int64_t thrift_i64(thrift_reader *r) { return zigzag(varint(r)); }

int64_t thrift_int(thrift_reader *r, int type) {
    switch (type) {
    case THRIFT_I8: return (int8_t)byte(r);
    case THRIFT_I16:
    case THRIFT_I32:
    case THRIFT_I64: return thrift_i64(r);
    default:
        thrift_skip(r, type);
        fail(r);
        return 0;
    }
}

const uint8_t *thrift_binary(thrift_reader *r, size_t *len) {
    uint64_t n = varint(r);
    const uint8_t *s = r->p;
    if (r->bad || n > (uint64_t)(r->end - r->p)) {
        fail(r);
        *len = 0;
        return NULL;
    }
    r->p += n;
    *len = (size_t)n;
    return s;
}

uint32_t thrift_list(thrift_reader *r, int *elem_type) {
    uint8_t h = byte(r);
    uint64_t n = h >> 4;
    *elem_type = h & 0x0f;
    if (n == 15)
        n = varint(r);
    if (r->bad || n > (uint64_t)(r->end - r->p)) {
        fail(r);
        return 0;
    }
    return (uint32_t)n;
}

void thrift_struct_begin(thrift_reader *r) {
    if (++r->depth > THRIFT_MAX_DEPTH)
        fail(r);
}

void thrift_struct_end(thrift_reader *r) { r->depth--; }

bool thrift_field(thrift_reader *r, int16_t *last, int16_t *id, int *type) {
    uint8_t h = byte(r);
    if (r->bad || h == 0)
        return false;
    *type = h & 0x0f;
    if (h >> 4)
        *id = (int16_t)(*last + (h >> 4));
    else
        *id = (int16_t)thrift_i64(r);
    *last = *id;
    if (*type == 0 || *type > THRIFT_STRUCT)
        fail(r);
    return !r->bad;
}

static void skip_struct(thrift_reader *r) {
    int16_t last = 0, id;
    int type;
    thrift_struct_begin(r);
    while (thrift_field(r, &last, &id, &type))
        thrift_skip(r, type);
    thrift_struct_end(r);
}

static void skip_bytes(thrift_reader *r, uint64_t n) {
    if (n > (uint64_t)(r->end - r->p))
        fail(r);
    else
        r->p += n;
}

void thrift_skip(thrift_reader *r, int type) {
    int et, kt, vt;
    uint64_t n;
    switch (type) {
    case THRIFT_TRUE:
    case THRIFT_FALSE: return; /* a field's value is in its header */
    case THRIFT_I8: byte(r); return;
    case THRIFT_I16:
    case THRIFT_I32:
    case THRIFT_I64: varint(r); return;
    case THRIFT_DOUBLE: skip_bytes(r, 8); return;
    case THRIFT_BINARY: skip_bytes(r, varint(r)); return;
    case THRIFT_LIST:
    case THRIFT_SET:
        n = thrift_list(r, &et);
        if (et == THRIFT_TRUE || et == THRIFT_FALSE) { /* a byte each */
            skip_bytes(r, n);
            return;
        }
        thrift_struct_begin(r);
        for (uint64_t i = 0; i < n && !r->bad; i++)
            thrift_skip(r, et);
        thrift_struct_end(r);
        return;
    case THRIFT_MAP:
        n = varint(r);
        if (n == 0)
            return;
        kt = byte(r);
        vt = kt & 0x0f;
        kt >>= 4;
        if (n > (uint64_t)(r->end - r->p)) {
            fail(r);
            return;
        }
        thrift_struct_begin(r);
        for (uint64_t i = 0; i < n && !r->bad; i++) {
            thrift_skip(r, kt == THRIFT_TRUE || kt == THRIFT_FALSE ? THRIFT_I8
                                                                   : kt);
            thrift_skip(r, vt == THRIFT_TRUE || vt == THRIFT_FALSE ? THRIFT_I8
                                                                   : vt);
        }
        thrift_struct_end(r);
        return;
    case THRIFT_STRUCT: skip_struct(r); return;
    default: fail(r);
    }
}

/* ---- writing ------------------------------------------------------------ */

void thrift_put_bytes(thrift_buf *w, const void *b, size_t n) {
    if (w->nomem || n == 0)
        return;
    if (n > w->cap - w->len) {
        size_t cap = w->cap ? w->cap : 256;
        while (cap - w->len < n)
            cap *= 2;
        uint8_t *p = realloc(w->p, cap);
        if (p == NULL) {
            w->nomem = true;
            return;
        }
        w->p = p;
        w->cap = cap;
    }
    memcpy(w->p + w->len, b, n);
    w->len += n;
}

void thrift_put_varint(thrift_buf *w, uint64_t v) {
    uint8_t b[10];
    size_t n = 0;
    do {
        b[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        b[n++] |= v ? 0x80 : 0;
    } while (v);
    thrift_put_bytes(w, b, n);
}

void thrift_put_i64(thrift_buf *w, int64_t v) {
    thrift_put_varint(w, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

void thrift_put_field(thrift_buf *w, int16_t *last, int16_t id, int type) {
    int delta = id - *last;
    if (delta > 0 && delta <= 15) {
        uint8_t h = (uint8_t)(delta << 4 | type);
        thrift_put_bytes(w, &h, 1);
    } else {
        uint8_t h = (uint8_t)type;
        thrift_put_bytes(w, &h, 1);
        thrift_put_i64(w, id);
    }
    *last = id;
}

void thrift_put_list(thrift_buf *w, int elem_type, uint32_t n) {
    uint8_t h = (uint8_t)((n < 15 ? n : 15) << 4 | (unsigned)elem_type);
    thrift_put_bytes(w, &h, 1);
    if (n >= 15)
        thrift_put_varint(w, n);
}

void thrift_put_stop(thrift_buf *w) {
    uint8_t z = 0;
    thrift_put_bytes(w, &z, 1);
}
