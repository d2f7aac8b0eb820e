/*
 * file.c — filters in files: save atomically, open as a mapped view, load
 * a copy. Built on the public frame calls (amq_filter_save, _view, _load);
 * what this file adds is the file system's part done right once, so a
 * program need not write its own fopen/fread loop.
 *
 * Saving. The frame is written into a fresh temporary file beside the
 * target and only then renamed over it:
 *
 *     PATH.tmp-<16 hex>   created O_EXCL (mode 0666, or 0600 when the
 *        |                hasher is keyed: the secret key is in the frame)
 *        |  posix_fallocate(size)   ENOSPC here, not a SIGBUS later
 *        |  mmap + amq_filter_save  no second copy of the frame in memory
 *        |  fsync
 *        v
 *     rename(tmp, PATH) ; fsync(dir)
 *
 * rename() replaces the directory entry atomically, so a reader (or a crash)
 * sees the old file or the complete new one, never a mixture; on any
 * failure the temporary file is removed and PATH is untouched. A reader
 * that has the old file mapped keeps its old inode.
 *
 * Opening. amq_filter_view reads the table in place from a mapping, but the
 * mapping must outlive the filter, and amq_filter_free knows nothing of
 * files. The filter's allocator closes that gap: the view is constructed
 * with an allocator that forwards to the caller's (or the C library's) and
 * counts the blocks the filter holds; when amq_filter_free returns the last
 * one, the allocator unmaps the file and frees its own context. The
 * allocator contract (amq/core.h: "ctx must outlive the object") is met
 * exactly: the context lives as long as the object and not longer. A type
 * that cannot view its frame, or a frame that is not 8-byte aligned in the
 * file, is loaded as a copy instead.
 *
 * Failure modes: every system call's failure is AMQ_ERR_IO with the path
 * and strerror in diag; frame errors are the loader's (CORRUPT, CHECKSUM,
 * VERSION) with its byte offset. A mapped file truncated by another process
 * while a view reads it raises SIGBUS: files are replaced by rename, never
 * rewritten in place, which is what amq_filter_save_file does.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "amq/filter.h"
#include "core/mem.h"
#include "core/diag.h"

/* ---- saving -------------------------------------------------------------- */

static amq_status io_error(amq_diag *diag, const char *what, const char *path,
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
static amq_status write_frame(const amq_filter *f, int fd, size_t size,
                              const char *tmp, amq_diag *diag) {
    int err = posix_fallocate(fd, 0, (off_t)size);
    if (err != 0)
        return io_error(diag, "cannot reserve space for", tmp, err);
    void *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED)
        return io_error(diag, "cannot map", tmp, errno);
    size_t written = 0;
    amq_status st = amq_filter_save(f, map, size, &written);
    if (st == AMQ_OK && written != size)
        st = amq__diag(diag, AMQ_ERR_INVALID, 0,
                       "the filter changed while it was being saved");
    if (st == AMQ_OK && msync(map, size, MS_SYNC) != 0)
        st = io_error(diag, "cannot write", tmp, errno);
    munmap(map, size);
    if (st == AMQ_OK && fsync(fd) != 0)
        st = io_error(diag, "cannot write", tmp, errno);
    return st;
}

/* Make the rename durable. Some file systems cannot fsync a directory
 * (EINVAL); the rename itself has happened by then. */
static amq_status sync_dir(const char *path, amq_diag *diag) {
    const char *slash = strrchr(path, '/');
    char *dir = slash == NULL ? strdup(".")
                              : strndup(path, slash == path ? 1
                                                            : (size_t)(slash - path));
    if (dir == NULL)
        return AMQ_ERR_NOMEM;
    amq_status st = AMQ_OK;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || (fsync(fd) != 0 && errno != EINVAL && errno != ENOTSUP))
        st = io_error(diag, "cannot sync directory", dir, errno);
    if (fd >= 0)
        close(fd);
    free(dir);
    return st;
}

amq_status amq_filter_save_file(const amq_filter *f, const char *path,
                                amq_diag *diag) {
    if (f == NULL || path == NULL || *path == 0)
        return amq__diag(diag, AMQ_ERR_INVALID, 0, "no filter or no path");
    size_t size = amq_filter_serialized_size(f);
    if (size == 0 || (uint64_t)size > (uint64_t)INT64_MAX)
        return AMQ_ERR_OVERFLOW;
    bool secret = amq_filter_hasher(f)->kind == AMQ_HASH_SIPHASH;
    char *tmp = NULL;
    int fd = create_temp(path, secret, &tmp);
    if (fd < 0) {
        amq_status st = tmp == NULL && errno == ENOMEM
                            ? AMQ_ERR_NOMEM
                            : io_error(diag, "cannot create a temporary file "
                                       "for", path, errno);
        free(tmp);
        return st;
    }
    amq_status st = write_frame(f, fd, size, tmp, diag);
    if (close(fd) != 0 && st == AMQ_OK)
        st = io_error(diag, "cannot write", tmp, errno);
    if (st == AMQ_OK && rename(tmp, path) != 0)
        st = io_error(diag, "cannot replace", path, errno);
    if (st != AMQ_OK)
        unlink(tmp);
    free(tmp);
    return st == AMQ_OK ? sync_dir(path, diag) : st;
}

/* ---- a mapping that lives as long as its view ---------------------------- */

typedef struct file_map {
    amq__mem inner;  /* the caller's allocator, or the C library's        */
    void *addr;
    size_t len;
    size_t live;     /* blocks handed out and not yet freed                */
    bool building;   /* amq_filter_view is still running                   */
} file_map;

static void map_release(file_map *m) {
    amq__mem inner = m->inner;
    munmap(m->addr, m->len);
    amq__free(&inner, m, sizeof *m);
}

static void *map_alloc(void *ctx, size_t size) {
    file_map *m = ctx;
    void *p = m->inner.a.alloc(m->inner.a.ctx, size);
    if (p != NULL)
        m->live++;
    return p;
}

static void *map_realloc(void *ctx, void *ptr, size_t old, size_t size) {
    file_map *m = ctx;
    if (ptr == NULL)
        return map_alloc(ctx, size);
    if (m->inner.a.realloc == NULL)
        return NULL; /* the caller's allocator cannot grow blocks */
    return m->inner.a.realloc(m->inner.a.ctx, ptr, old, size);
}

static void map_free(void *ctx, void *ptr, size_t size) {
    file_map *m = ctx;
    if (ptr == NULL)
        return;
    m->inner.a.free(m->inner.a.ctx, ptr, size);
    if (--m->live == 0 && !m->building)
        map_release(m);
}

/* ---- opening ---------------------------------------------------------------- */

/* A growing buffer from the caller's allocator (which need not have
 * realloc: growth is allocate, copy, free). */
typedef struct stream_buf {
    amq__mem mem;
    uint8_t *buf;
    size_t len, cap;
} stream_buf;

static bool stream_grow(stream_buf *b) {
    size_t ncap = b->cap ? b->cap * 2 : (size_t)1 << 16;
    uint8_t *nb = ncap < b->cap ? NULL : amq__alloc(&b->mem, ncap);
    if (nb == NULL)
        return false;
    if (b->len > 0)
        memcpy(nb, b->buf, b->len);
    amq__free(&b->mem, b->buf, b->cap);
    b->buf = nb;
    b->cap = ncap;
    return true;
}

/* Read a file that cannot be mapped (a pipe, a character device) to its
 * end, then load it. */
static amq_status load_stream(int fd, const char *path, const amq_options *opt,
                              amq_filter **out, amq_diag *diag) {
    stream_buf b = {.buf = NULL};
    amq_status st = AMQ_OK;
    amq__mem_init(&b.mem, opt);
    for (;;) {
        if (b.len == b.cap && !stream_grow(&b)) {
            st = AMQ_ERR_NOMEM;
            break;
        }
        ssize_t r = read(fd, b.buf + b.len, b.cap - b.len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            st = io_error(diag, "cannot read", path, errno);
        if (r <= 0)
            break;
        b.len += (size_t)r;
    }
    if (st == AMQ_OK)
        st = amq_filter_load(b.buf, b.len, opt, out, diag);
    if (b.buf != NULL)
        amq__free(&b.mem, b.buf, b.cap);
    return st;
}

/* The view, owning the mapping through its allocator; *declined when the
 * frame cannot be viewed (alignment, a type without views), so the caller
 * loads a copy. */
static amq_status view_mapping(void *addr, size_t len, const amq_options *opt,
                               amq_filter **out, bool *declined,
                               amq_diag *diag) {
    amq__mem inner;
    amq__mem_init(&inner, opt);
    file_map *m = amq__alloc(&inner, sizeof *m);
    if (m == NULL)
        return AMQ_ERR_NOMEM;
    *m = (file_map){.inner = inner, .addr = addr, .len = len,
                    .building = true};
    amq_allocator wrapped = {map_alloc, map_realloc, map_free, m};
    amq_options o = opt != NULL ? *opt : (amq_options){0};
    o.allocator = &wrapped;
    amq_status st = amq_filter_view(addr, len, &o, out, diag);
    m->building = false;
    if (st == AMQ_OK && m->live > 0)
        return AMQ_OK; /* the mapping now belongs to the filter */
    if (st == AMQ_OK) { /* holds no block: nothing could release the map */
        amq_filter_free(*out);
        *out = NULL;
        st = AMQ_ERR_UNSUPPORTED;
    }
    *declined = st == AMQ_ERR_ALIGN || st == AMQ_ERR_UNSUPPORTED;
    amq__free(&inner, m, sizeof *m); /* the caller unmaps */
    return st;
}

/* Map a regular file; view it (when `view`) or load a copy from the
 * mapping. *unmappable when mmap itself failed (the caller reads). */
static amq_status open_mapped(int fd, size_t len, bool view,
                              const amq_options *opt, amq_filter **out,
                              bool *unmappable, amq_diag *diag) {
    void *addr = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    if (addr == MAP_FAILED) {
        *unmappable = true;
        return AMQ_OK;
    }
    bool declined = true;
    amq_status st = AMQ_OK;
    if (view) {
        st = view_mapping(addr, len, opt, out, &declined, diag);
        if (st == AMQ_OK)
            return AMQ_OK;
    }
    if (declined)
        st = amq_filter_load(addr, len, opt, out, diag);
    munmap(addr, len);
    return st;
}

static amq_status open_path(const char *path, bool view,
                            const amq_options *opt, amq_filter **out,
                            amq_diag *diag) {
    struct stat sb;
    if (out == NULL || path == NULL)
        return amq__diag(diag, AMQ_ERR_INVALID, 0, "no path or no output");
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return io_error(diag, "cannot open", path, errno);
    amq_status st = AMQ_OK;
    bool unmappable = true; /* pipes, devices, empty files: read them */
    if (fstat(fd, &sb) != 0)
        st = io_error(diag, "cannot stat", path, errno);
    else if (S_ISDIR(sb.st_mode))
        st = io_error(diag, "cannot read", path, EISDIR);
    else if (S_ISREG(sb.st_mode) && sb.st_size > 0 &&
             (uint64_t)sb.st_size <= SIZE_MAX) {
        unmappable = false;
        st = open_mapped(fd, (size_t)sb.st_size, view, opt, out, &unmappable,
                         diag);
    }
    if (st == AMQ_OK && unmappable)
        st = load_stream(fd, path, opt, out, diag);
    close(fd);
    return st;
}

amq_status amq_filter_open_file(const char *path, const amq_options *opt,
                                amq_filter **out, amq_diag *diag) {
    return open_path(path, true, opt, out, diag);
}

amq_status amq_filter_load_file(const char *path, const amq_options *opt,
                                amq_filter **out, amq_diag *diag) {
    return open_path(path, false, opt, out, diag);
}
