/*
 * save_file.c — a frame into a file, atomically: written into a fresh
 * temporary file beside the target and only then renamed over it.
 *
 *     PATH.tmp-<16 hex>   created O_EXCL (mode 0666, or 0600 when the
 *        |                frame holds a secret hash key)
 *        |  posix_fallocate(size)   ENOSPC here, not a SIGBUS later
 *        |  write the frame: its pieces (header, the table itself,
 *        |  checksum) with write(2), or a type's writer into a mapping
 *        |  of the file; either way no second copy of it in memory
 *        |  fsync
 *        v
 *     rename(tmp, PATH) ; fsync(dir)
 *
 * rename() replaces the directory entry atomically, so a reader (or a
 * crash) sees the old file or the complete new one, never a mixture; on
 * any failure the temporary file is removed and PATH is untouched. A
 * reader that has the old file mapped keeps its old inode.
 *
 * Reading: a descriptor to its end into a buffer that doubles (allocate,
 * copy, free: the caller's allocator need not have realloc).
 *
 * Every system call's failure is AMQ_ERR_IO with the path and strerror in
 * diag.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "core/bits.h"
#include "core/diag.h"
#include "core/file_io.h"

amq_status amq__io_error(amq_diag *diag, const char *what, const char *path,
                         int err) {
    return amq__diag(diag, AMQ_ERR_IO, 0, "%s %s: %s", what, path,
                     strerror(err));
}

/* "PATH.tmp-" followed by 16 random hex digits, created exclusively. */
static int create_temp(const char *path, bool secret, char **tmp_out) {
    static const char hex[] = "0123456789abcdef";
    size_t plen = strlen(path);
    char *tmp = malloc(plen + sizeof ".tmp-" + 16);
    if (tmp == NULL) {
        errno = ENOMEM;
        return -1;
    }
    for (int attempt = 0; attempt < 16; attempt++) {
        uint8_t r[8];
        amq_random_bytes(r, sizeof r);
        char *p = tmp + plen + 5;
        memcpy(tmp, path, plen);
        memcpy(tmp + plen, ".tmp-", 5);
        for (size_t i = 0; i < sizeof r; i++) {
            *p++ = hex[r[i] >> 4];
            *p++ = hex[r[i] & 15];
        }
        *p = 0;
        int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
                      secret ? 0600 : 0666);
        if (fd >= 0 || errno != EEXIST) {
            *tmp_out = tmp;
            return fd;
        }
    }
    free(tmp);
    errno = EEXIST;
    return -1;
}

/* Reserve size bytes in fd, map them and write the frame there. */
static amq_status write_mapped(const amq__file_src *src, int fd,
                               const char *tmp, amq_diag *diag) {
    void *map =
        mmap(NULL, src->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED)
        return amq__io_error(diag, "cannot map", tmp, errno);
    size_t written = 0;
    amq_status st = src->write(src->obj, map, src->size, &written);
    if (st == AMQ_OK && written != src->size)
        st = amq__diag(diag, AMQ_ERR_INVALID, 0,
                       "the object changed while it was being saved");
    if (st == AMQ_OK && msync(map, src->size, MS_SYNC) != 0)
        st = amq__io_error(diag, "cannot write", tmp, errno);
    munmap(map, src->size);
    return st;
}

static amq_status write_all(int fd, const uint8_t *p, size_t n, const char *tmp,
                            amq_diag *diag) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return amq__io_error(diag, "cannot write", tmp,
                                 w < 0 ? errno : EIO);
        p += w;
        n -= (size_t)w;
    }
    return AMQ_OK;
}

/* The pieces in order, each hashed just before it is written (one pass
 * over the table, a megabyte at a time), then their XXH64: the frame
 * checksum (core/frame.h). */
static amq_status write_pieces(const amq__file_src *src, int fd,
                               const char *tmp, amq_diag *diag) {
    enum { CHUNK = 1 << 20 };
    XXH64_state_t h;
    size_t total = 8;
    XXH64_reset(&h, 0);
    for (size_t i = 0; i < src->npieces; i++) {
        const uint8_t *p = src->pieces[i].p;
        for (size_t left = src->pieces[i].len; left > 0;) {
            size_t n = left < CHUNK ? left : CHUNK;
            XXH64_update(&h, p, n);
            AMQ_RETURN_IF_ERR(write_all(fd, p, n, tmp, diag));
            p += n;
            left -= n;
        }
        total += src->pieces[i].len;
    }
    uint8_t sum[8];
    amq__put_u64(sum, XXH64_digest(&h));
    if (total != src->size)
        return amq__diag(diag, AMQ_ERR_INVALID, 0,
                         "the frame's pieces do not add up to its size");
    return write_all(fd, sum, sizeof sum, tmp, diag);
}

/* Reserve the file's size (ENOSPC here, not a SIGBUS later), write the
 * frame and sync it. */
static amq_status write_frame(const amq__file_src *src, int fd, const char *tmp,
                              amq_diag *diag) {
    int err = posix_fallocate(fd, 0, (off_t)src->size);
    if (err != 0)
        return amq__io_error(diag, "cannot reserve space for", tmp, err);
    amq_status st = src->pieces != NULL ? write_pieces(src, fd, tmp, diag)
                                        : write_mapped(src, fd, tmp, diag);
    if (st == AMQ_OK && fsync(fd) != 0)
        st = amq__io_error(diag, "cannot write", tmp, errno);
    return st;
}

/* Make the rename durable. Some file systems cannot fsync a directory
 * (EINVAL); the rename itself has happened by then. */
static amq_status sync_dir(const char *path, amq_diag *diag) {
    const char *slash = strrchr(path, '/');
    char *dir = slash == NULL
                    ? strdup(".")
                    : strndup(path, slash == path ? 1 : (size_t)(slash - path));
    if (dir == NULL)
        return AMQ_ERR_NOMEM;
    amq_status st = AMQ_OK;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || (fsync(fd) != 0 && errno != EINVAL && errno != ENOTSUP))
        st = amq__io_error(diag, "cannot sync directory", dir, errno);
    if (fd >= 0)
        close(fd);
    free(dir);
    return st;
}

amq_status amq__save_file(const char *path, const amq__file_src *src,
                          amq_diag *diag) {
    if (src->size == 0 || (uint64_t)src->size > (uint64_t)INT64_MAX)
        return AMQ_ERR_OVERFLOW;
    char *tmp = NULL;
    int fd = create_temp(path, src->secret, &tmp);
    if (fd < 0) {
        amq_status st = tmp == NULL && errno == ENOMEM
                            ? AMQ_ERR_NOMEM
                            : amq__io_error(diag,
                                            "cannot create a temporary "
                                            "file for",
                                            path, errno);
        free(tmp);
        return st;
    }
    amq_status st = write_frame(src, fd, tmp, diag);
    if (close(fd) != 0 && st == AMQ_OK)
        st = amq__io_error(diag, "cannot write", tmp, errno);
    if (st == AMQ_OK && rename(tmp, path) != 0)
        st = amq__io_error(diag, "cannot replace", path, errno);
    if (st != AMQ_OK)
        unlink(tmp);
    free(tmp);
    return st == AMQ_OK ? sync_dir(path, diag) : st;
}

/* ---- reading ---------------------------------------------------------------- */

static bool bytes_grow(const amq__mem *mem, amq__bytes *b) {
    size_t ncap = b->cap ? b->cap * 2 : (size_t)1 << 16;
    uint8_t *nb = ncap < b->cap ? NULL : amq__alloc(mem, ncap);
    if (nb == NULL)
        return false;
    if (b->len > 0)
        memcpy(nb, b->buf, b->len);
    amq__free(mem, b->buf, b->cap);
    b->buf = nb;
    b->cap = ncap;
    return true;
}

void amq__bytes_free(const amq__mem *mem, amq__bytes *b) {
    if (b->buf != NULL)
        amq__free(mem, b->buf, b->cap);
    *b = (amq__bytes){NULL, 0, 0};
}

amq_status amq__read_fd(int fd, const char *path, const amq__mem *mem,
                        amq__bytes *out, amq_diag *diag) {
    amq__bytes b = {NULL, 0, 0};
    amq_status st = AMQ_OK;
    for (;;) {
        if (b.len == b.cap && !bytes_grow(mem, &b)) {
            st = AMQ_ERR_NOMEM;
            break;
        }
        ssize_t r = read(fd, b.buf + b.len, b.cap - b.len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            st = amq__io_error(diag, "cannot read", path, errno);
        if (r <= 0)
            break;
        b.len += (size_t)r;
    }
    if (st != AMQ_OK)
        amq__bytes_free(mem, &b);
    *out = b;
    return st;
}

amq_status amq__read_file(const char *path, const amq__mem *mem,
                          amq__bytes *out, amq_diag *diag) {
    *out = (amq__bytes){NULL, 0, 0};
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return amq__io_error(diag, "cannot open", path, errno);
    amq_status st = amq__read_fd(fd, path, mem, out, diag);
    close(fd);
    return st;
}

amq_status amq__load_file(const char *path, const amq_options *opt,
                          amq__frame_loader load, void **out, amq_diag *diag) {
    amq__mem mem;
    amq__bytes b;
    if (out == NULL || path == NULL)
        return amq__diag(diag, AMQ_ERR_INVALID, 0, "no path or no output");
    *out = NULL;
    amq__mem_init(&mem, opt);
    AMQ_RETURN_IF_ERR(amq__read_file(path, &mem, &b, diag));
    amq_status st = load(b.buf, b.len, opt, out, diag);
    amq__bytes_free(&mem, &b);
    return st;
}
