/*
 * parquet_impl.h — what parquet.c (footer, filters, keys) and pages.c
 * (column chunk pages) share: the open file and its checked reads.
 */
#ifndef AMQ_PARQUET_IMPL_H
#define AMQ_PARQUET_IMPL_H

#include "amq_parquet.h"
#include "thrift.h"

struct amq_pq_file {
    int fd;             /* -1 for a file in memory */
    const uint8_t *mem; /* borrowed                 */
    uint64_t size;
    uint64_t data_end; /* where the metadata starts: pages lie before */
    size_t ncols;
    amq_pq_column *cols;
    size_t ngroups;
    int64_t *group_rows;
    amq_pq_chunk *chunks; /* ngroups x ncols */
    int64_t rows;
    char *created_by;
};

/* Bytes [off, off + len) of the file: AMQ_ERR_CORRUPT past its end,
 * AMQ_ERR_IO when the read fails. */
amq_status amq__pq_read(const amq_pq_file *f, uint64_t off, void *dst,
                        size_t len);
/* Encodings, numbered as parquet.thrift's Encoding. */
enum {
    AMQ__PQ_PLAIN = 0,
    AMQ__PQ_PLAIN_DICTIONARY = 2,
    AMQ__PQ_DELTA_BINARY_PACKED = 5,
    AMQ__PQ_DELTA_LENGTH_BYTE_ARRAY = 6,
    AMQ__PQ_DELTA_BYTE_ARRAY = 7,
    AMQ__PQ_RLE_DICTIONARY = 8,
    AMQ__PQ_BYTE_STREAM_SPLIT = 9
};

/* n values of col encoded as `encoding` in p[0..len), each in its plain
 * encoding to fn; *stop set when fn asks to stop (encodings.c).
 * AMQ_ERR_UNSUPPORTED for an encoding it does not read, AMQ_ERR_CORRUPT
 * for bytes that are not n such values. */
amq_status amq__pq_decode(const amq_pq_column *col, int32_t encoding,
                          const uint8_t *p, size_t len, uint32_t n,
                          amq_pq_value_fn fn, void *ctx, bool *stop);

/* An unsigned LEB128 varint at *p (before end), *p moved past it. */
bool amq__pq_uleb(const uint8_t **p, const uint8_t *end, uint64_t *v);
/* Sort h[0..n) and keep each value once: the count kept. */
size_t amq__pq_distinct(uint64_t *h, size_t n);

/* Fill diag (may be NULL) and return st. */
amq_status amq__pq_fail(amq_pq_diag *diag, uint64_t offset, const char *what,
                        amq_status st);

#endif
