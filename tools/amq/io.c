/*
 * io.c — the amq tool's input and output: keys read one per line or as
 * little-endian u64s, filter files mapped and viewed in place (or read and
 * loaded when mapping is impossible), and atomic writes (FILE.tmp, fsync,
 * rename) so a reader never sees half a filter.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* ---- keys ------------------------------------------------------------------ */

bool cli_keys_open(cli_keys *k, const char *path, bool binary,
                   bool skip_empty)
{
    memset(k, 0, sizeof *k);
    k->binary = binary;
    k->skip_empty = skip_empty;
    if (path == NULL || strcmp(path, "-") == 0) {
        k->fp = stdin;
        k->name = "<stdin>";
        return true;
    }
    k->name = path;
    k->fp = fopen(path, "rb");
    if (k->fp == NULL) {
        cli_error("%s: cannot open: %s", path, strerror(errno));
        return false;
    }
    return true;
}

static int read_error(cli_keys *k)
{
    cli_error("%s: read error: %s", k->name, strerror(errno));
    return -1;
}

static int next_binary(cli_keys *k, const uint8_t **key, size_t *len)
{
    uint8_t *b = (uint8_t *)k->buf;
    size_t got = fread(b, 1, 8, k->fp);
    if (got == 8) {
        *key = b;
        *len = 8;
        k->count++;
        return 1;
    }
    if (ferror(k->fp))
        return read_error(k);
    if (got != 0) {
        cli_error("%s: binary input ends with %zu stray byte%s (keys are 8 "
                  "bytes each; %llu whole keys read)",
                  k->name, got, got == 1 ? "" : "s",
                  (unsigned long long)k->count);
        return -1;
    }
    return 0;
}

static int next_text(cli_keys *k, const uint8_t **key, size_t *len)
{
    for (;;) {
        errno = 0;
        ssize_t n = getline(&k->buf, &k->cap, k->fp);
        if (n < 0)
            return ferror(k->fp) ? read_error(k) : 0;
        k->line++;
        size_t l = (size_t)n;
        if (l > 0 && k->buf[l - 1] == '\n')
            l--;
        if (l > 0 && k->buf[l - 1] == '\r')
            l--;
        if (l == 0 && k->skip_empty)
            continue;
        *key = (const uint8_t *)k->buf;
        *len = l;
        k->count++;
        return 1;
    }
}

int cli_keys_next(cli_keys *k, const uint8_t **key, size_t *len)
{
    if (k->binary && k->buf == NULL) {
        k->buf = malloc(8);
        if (k->buf == NULL) {
            cli_error("%s: out of memory", k->name);
            return -1;
        }
    }
    return k->binary ? next_binary(k, key, len) : next_text(k, key, len);
}

void cli_keys_close(cli_keys *k)
{
    if (k->fp != NULL && k->fp != stdin)
        fclose(k->fp);
    free(k->buf);
    memset(k, 0, sizeof *k);
}

uint64_t cli_load_le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

void cli_store_le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* ---- filter files -------------------------------------------------------- */

/* Read all of fd into a malloc'ed buffer (for pipes and special files). */
static bool read_all(int fd, const char *path, uint8_t **out, size_t *len)
{
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    for (;;) {
        if (buf == NULL) {
            cli_error("%s: out of memory", path);
            return false;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            cli_error("%s: read error: %s", path, strerror(errno));
            free(buf);
            return false;
        }
        if (r == 0)
            break;
        n += (size_t)r;
        if (n == cap) {
            uint8_t *nb = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
            if (nb == NULL)
                free(buf);
            buf = nb;
            cap *= 2;
        }
    }
    *out = buf;
    *len = n;
    return true;
}

static bool load_copy(cli_filter_file *ff, const char *path, const void *buf,
                      size_t len)
{
    amq_diag diag;
    memset(&diag, 0, sizeof diag);
    amq_status st = amq_filter_load(buf, len, NULL, &ff->filter, &diag);
    if (st != AMQ_OK) {
        cli_status_error(path, st, &diag);
        return false;
    }
    return true;
}

/* Map a regular file and view it in place; load a copy if the library
 * declines the view (alignment, a type without views). 1 on success, 0 if
 * the file cannot be mapped (the caller reads it), -1 after an error. */
static int open_mapped(cli_filter_file *ff, int fd, const char *path)
{
    void *map = mmap(NULL, ff->file_len, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED)
        return 0;
    amq_diag diag;
    memset(&diag, 0, sizeof diag);
    amq_status st = amq_filter_view(map, ff->file_len, NULL, &ff->filter,
                                    &diag);
    if (st == AMQ_OK) {
        ff->map = map;
        ff->map_len = ff->file_len;
        ff->is_view = true;
        return 1;
    }
    bool ok = false;
    if (st == AMQ_ERR_ALIGN || st == AMQ_ERR_UNSUPPORTED)
        ok = load_copy(ff, path, map, ff->file_len);
    else
        cli_status_error(path, st, &diag);
    munmap(map, ff->file_len);
    return ok ? 1 : -1;
}

static bool open_read(cli_filter_file *ff, int fd, const char *path)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    if (!read_all(fd, path, &buf, &len))
        return false;
    ff->file_len = len;
    bool ok = load_copy(ff, path, buf, len);
    free(buf);
    return ok;
}

static bool open_fd(cli_filter_file *ff, int fd, const char *path)
{
    struct stat st;
    if (fstat(fd, &st) != 0) {
        cli_error("%s: cannot stat: %s", path, strerror(errno));
        return false;
    }
    if (S_ISDIR(st.st_mode)) {
        cli_error("%s: is a directory", path);
        return false;
    }
    if (S_ISREG(st.st_mode) && st.st_size > 0 &&
        (uint64_t)st.st_size <= SIZE_MAX) {
        ff->file_len = (size_t)st.st_size;
        int r = open_mapped(ff, fd, path);
        if (r != 0)
            return r > 0;
    }
    return open_read(ff, fd, path);
}

bool cli_filter_open(cli_filter_file *ff, const char *path)
{
    memset(ff, 0, sizeof *ff);
    bool is_stdin = strcmp(path, "-") == 0;
    if (is_stdin)
        path = "<stdin>";
    int fd = is_stdin ? dup(STDIN_FILENO) : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        cli_error("%s: cannot open: %s", path, strerror(errno));
        return false;
    }
    bool ok = open_fd(ff, fd, path);
    close(fd);
    if (!ok)
        cli_filter_close(ff);
    return ok;
}

bool cli_read_file(const char *path, uint8_t **out, size_t *len)
{
    bool is_stdin = path == NULL || strcmp(path, "-") == 0;
    const char *name = is_stdin ? "<stdin>" : path;
    int fd = is_stdin ? dup(STDIN_FILENO) : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        cli_error("%s: cannot open: %s", name, strerror(errno));
        return false;
    }
    bool ok = read_all(fd, name, out, len);
    close(fd);
    return ok;
}

void cli_filter_close(cli_filter_file *ff)
{
    amq_filter_free(ff->filter);
    if (ff->map != NULL)
        munmap(ff->map, ff->map_len);
    memset(ff, 0, sizeof *ff);
}

/* ---- atomic output ------------------------------------------------------- */

static bool write_all(int fd, const uint8_t *p, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        p += w;
        len -= (size_t)w;
    }
    return true;
}

static bool write_stdout(const void *buf, size_t len)
{
    if (isatty(STDOUT_FILENO)) {
        cli_error("-: refusing to write a binary filter to a terminal");
        return false;
    }
    fflush(stdout);
    if (!write_all(STDOUT_FILENO, buf, len)) {
        cli_error("<stdout>: write error: %s", strerror(errno));
        return false;
    }
    return true;
}

static bool write_tmp(const char *tmp, const void *buf, size_t len,
                      bool secret)
{
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                  secret ? 0600 : 0644);
    if (fd < 0)
        return false;
    bool ok = (!secret || fchmod(fd, 0600) == 0) && write_all(fd, buf, len) &&
              fsync(fd) == 0;
    int saved = errno;
    if (close(fd) != 0 && ok)
        return false;
    errno = saved;
    return ok;
}

bool cli_write_file(const char *path, const void *buf, size_t len,
                    bool secret)
{
    if (strcmp(path, "-") == 0)
        return write_stdout(buf, len);
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 5);
    if (tmp == NULL) {
        cli_error("%s: out of memory", path);
        return false;
    }
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, ".tmp", 5);
    bool ok = write_tmp(tmp, buf, len, secret) && rename(tmp, path) == 0;
    if (!ok) {
        cli_error("%s: cannot write: %s", path, strerror(errno));
        unlink(tmp);
    }
    free(tmp);
    return ok;
}
