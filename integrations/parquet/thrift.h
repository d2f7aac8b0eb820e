/*
 * thrift.h — a reader of Thrift's compact protocol, the encoding of every
 * Parquet footer, page header and Bloom filter header.
 *
 * The reader walks a byte range it never leaves: every read checks the
 * bytes left, and the first failure (truncated input, a varint longer than
 * ten bytes, an unknown wire type, nesting deeper than THRIFT_MAX_DEPTH)
 * sets `bad` and makes every later read return zero, so a parser can read
 * a whole struct and test `bad` once. Nothing is allocated; strings are
 * borrowed from the input.
 *
 * Wire types (the low nibble of a field header): 1 true, 2 false, 3 i8,
 * 4 i16, 5 i32, 6 i64 (zigzag varints), 7 double, 8 binary (varint length
 * and bytes), 9 list, 10 set (a header of size and element type), 11 map,
 * 12 struct (fields until a 0 byte). A field header's high nibble is the
 * field id's delta from the previous field of the same struct, or 0 with
 * the id as a zigzag varint after it.
 */
#ifndef AMQ_PARQUET_THRIFT_H
#define AMQ_PARQUET_THRIFT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define THRIFT_MAX_DEPTH 32

enum {
    THRIFT_TRUE = 1,
    THRIFT_FALSE = 2,
    THRIFT_I8 = 3,
    THRIFT_I16 = 4,
    THRIFT_I32 = 5,
    THRIFT_I64 = 6,
    THRIFT_DOUBLE = 7,
    THRIFT_BINARY = 8,
    THRIFT_LIST = 9,
    THRIFT_SET = 10,
    THRIFT_MAP = 11,
    THRIFT_STRUCT = 12
};

typedef struct thrift_reader {
    const uint8_t *p, *end;
    int depth;
    bool bad;
} thrift_reader;

void thrift_init(thrift_reader *r, const void *buf, size_t len);
/* Bytes read so far from buf. */
size_t thrift_offset(const thrift_reader *r, const void *buf);

/* The next field of the struct being read: false at its end (or when the
 * reader is bad). *last is the previous field's id (0 before the first);
 * a struct's fields are read between thrift_struct_begin and _end. */
bool thrift_field(thrift_reader *r, int16_t *last, int16_t *id, int *type);
void thrift_struct_begin(thrift_reader *r);
void thrift_struct_end(thrift_reader *r);

int64_t thrift_i64(thrift_reader *r); /* i8, i16, i32 or i64 by type */
int64_t thrift_int(thrift_reader *r, int type);
/* A binary's bytes, borrowed; *len its length. */
const uint8_t *thrift_binary(thrift_reader *r, size_t *len);
/* A list's or set's header: the element type and count (the count is
 * checked against the bytes left, one byte at least per element). */
uint32_t thrift_list(thrift_reader *r, int *elem_type);
/* Skip a value of the wire type (a struct: to its end). */
void thrift_skip(thrift_reader *r, int type);

/* ---- writing (for a footer amq rewrites) ------------------------------- */

/* A growing buffer; `nomem` set (and the rest dropped) when it cannot
 * grow. */
typedef struct thrift_buf {
    uint8_t *p;
    size_t len, cap;
    bool nomem;
} thrift_buf;

void thrift_put_bytes(thrift_buf *w, const void *b, size_t n);
void thrift_put_varint(thrift_buf *w, uint64_t v);
void thrift_put_i64(thrift_buf *w, int64_t v); /* zigzag */
/* A field header after the field *last (updated). */
void thrift_put_field(thrift_buf *w, int16_t *last, int16_t id, int type);
void thrift_put_list(thrift_buf *w, int elem_type, uint32_t n);
void thrift_put_stop(thrift_buf *w);

#endif
