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
/* Fill diag (may be NULL) and return st. */
amq_status amq__pq_fail(amq_pq_diag *diag, uint64_t offset, const char *what,
                        amq_status st);

#endif
