/*
 * file.c — filters in files: save atomically, open as a mapped view, load
 * a copy. Built on the public frame calls (amq_filter_save, _view, _load);
 * what this file adds is the file system's part done right once, so a
 * program need not write its own fopen/fread loop.
 *
 * Saving goes through core/file_io.c: the frame is written into a fresh
 * temporary file beside the target (owner-only when the hasher is keyed:
 * the secret key is in the frame) and renamed over it, so a reader or a
 * crash sees the old file or the complete new one, never a mixture.
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
#include "core/file_io.h"
#include "type/frame_io.h"

/* ---- saving -------------------------------------------------------------- */

static amq_status save_frame(const void *f, void *buf, size_t cap,
                             size_t *written) {
    return amq_filter_save(f, buf, cap, written);
}

amq_status amq_filter_save_file(const amq_filter *f, const char *path,
                                amq_diag *diag) {
    static const uint8_t zeros[8];
    uint8_t head[AMQ__FRAME_HEAD_MAX];
    amq__piece pieces[3];
    if (f == NULL || path == NULL || *path == 0)
        return amq__diag(diag, AMQ_ERR_INVALID, 0, "no filter or no path");
    amq__file_src src = {
        .size = amq_filter_serialized_size(f),
        .secret = amq_filter_hasher(f)->kind == AMQ_HASH_SIPHASH,
        .obj = f,
        .write = save_frame,
    };
    if (amq__filter_pieces(f, head, zeros, pieces)) {
        src.pieces = pieces;
        src.npieces = 3;
    }
    return amq__save_file(path, &src, diag);
}

/* ---- a mapping that lives as long as its view ---------------------------- */

typedef struct file_map {
    amq__mem inner; /* the caller's allocator, or the C library's        */
    void *addr;
    size_t len;
    size_t live;   /* blocks handed out and not yet freed                */
    bool building; /* amq_filter_view is still running                   */
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

/* Read a file that cannot be mapped (a pipe, a character device) to its
 * end, then load it. */
static amq_status load_stream(int fd, const char *path, const amq_options *opt,
                              amq_filter **out, amq_diag *diag) {
    amq__mem mem;
    amq__bytes b;
    amq__mem_init(&mem, opt);
    AMQ_RETURN_IF_ERR(amq__read_fd(fd, path, &mem, &b, diag));
    amq_status st = amq_filter_load(b.buf, b.len, opt, out, diag);
    amq__bytes_free(&mem, &b);
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
    *m = (file_map){.inner = inner, .addr = addr, .len = len, .building = true};
    amq_allocator wrapped = {map_alloc, map_realloc, map_free, m};
    amq_options o = opt != NULL ? *opt : (amq_options){0};
    o.allocator = &wrapped;
    amq_status st = amq_filter_view(addr, len, &o, out, diag);
    m->building = false;
    if (st == AMQ_OK && m->live > 0)
        return AMQ_OK;  /* the mapping now belongs to the filter */
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

static amq_status open_path(const char *path, bool view, const amq_options *opt,
                            amq_filter **out, amq_diag *diag) {
    struct stat sb;
    if (out == NULL || path == NULL)
        return amq__diag(diag, AMQ_ERR_INVALID, 0, "no path or no output");
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return amq__io_error(diag, "cannot open", path, errno);
    amq_status st = AMQ_OK;
    bool unmappable = true; /* pipes, devices, empty files: read them */
    if (fstat(fd, &sb) != 0)
        st = amq__io_error(diag, "cannot stat", path, errno);
    else if (S_ISDIR(sb.st_mode))
        st = amq__io_error(diag, "cannot read", path, EISDIR);
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
