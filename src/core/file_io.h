/*
 * file_io.h — a serialized object into a file atomically (save_file.c):
 * readers see the old file or the whole new one. Shared by every public
 * *_save_file call.
 */
#ifndef AMQ_SRC_CORE_FILE_IO_H
#define AMQ_SRC_CORE_FILE_IO_H

#include <stdbool.h>
#include <stddef.h>

#include <stdint.h>

#include "core/mem.h"

/* Writes obj's frame into buf[cap] (exactly `size` bytes, as promised). */
typedef amq_status (*amq__frame_writer)(const void *obj, void *buf, size_t cap,
                                        size_t *written);

typedef struct amq__piece {
    const void *p;
    size_t len;
} amq__piece;

/* A frame of `size` bytes to put in a file: as pieces written in order
 * and followed by the frame checksum (core/frame.h) of them all — the
 * header and the object's own table, with no copy — or, when pieces is
 * NULL, by write() into a mapping of the file. secret makes the file
 * owner-only (the frame holds a key). */
typedef struct amq__file_src {
    size_t size;
    bool secret;
    const amq__piece *pieces;
    size_t npieces;
    const void *obj;
    amq__frame_writer write;
} amq__file_src;

/* Write the frame to path through a temporary file renamed over it. */
amq_status amq__save_file(const char *path, const amq__file_src *src,
                          amq_diag *diag);

/* AMQ_ERR_IO with "what path: strerror(err)" in diag. */
amq_status amq__io_error(amq_diag *diag, const char *what, const char *path,
                         int err);

/* A buffer from an amq__mem allocator (which need not have realloc). */
typedef struct amq__bytes {
    uint8_t *buf;
    size_t len, cap;
} amq__bytes;

/* Read fd to its end into *out (path names it in errors): AMQ_ERR_IO or
 * AMQ_ERR_NOMEM, nothing held, on failure. */
amq_status amq__read_fd(int fd, const char *path, const amq__mem *mem,
                        amq__bytes *out, amq_diag *diag);

/* Open path and read it to its end. */
amq_status amq__read_file(const char *path, const amq__mem *mem,
                          amq__bytes *out, amq_diag *diag);

void amq__bytes_free(const amq__mem *mem, amq__bytes *b);

/* A frame's loader (amq_cascade_load, amq_clock_load, ...) behind one
 * signature: *out receives the object. */
typedef amq_status (*amq__frame_loader)(const uint8_t *buf, size_t len,
                                        const amq_options *opt, void **out,
                                        amq_diag *diag);

/* Read path whole (with opt's allocator) and hand it to load: the
 * *_load_file of the objects that are not filters. */
amq_status amq__load_file(const char *path, const amq_options *opt,
                          amq__frame_loader load, void **out, amq_diag *diag);

#endif
