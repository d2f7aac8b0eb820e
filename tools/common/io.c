/*
 * io.c — the tools' input and output: keys read one per line, as
 * little-endian u64s or from the command line; filter files opened,
 * loaded and saved through the library's file calls (amq_filter_open_file
 * maps and views in place; amq_filter_save_file writes a temporary file,
 * fsyncs and renames, so a reader never sees half a filter), or a frame
 * to stdout.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "parse.h"

/* ---- keys ------------------------------------------------------------------ */

/* Keys come through the text layer of seqio.c (parse.h): a file or a pipe,
 * plain or gzip (recognised by its magic bytes, whatever the name), read
 * in large blocks and split on '\n'. */

static int keys_fail(const cli_keys *k) {
    cli_error("%s: %s", k->name, k->in.err);
    return -1;
}

bool cli_keys_open(cli_keys *k, const char *path, bool binary,
                   bool skip_empty) {
    memset(k, 0, sizeof *k);
    k->binary = binary;
    k->skip_empty = skip_empty;
    k->fd = -1;
    if (path == NULL || strcmp(path, "-") == 0) {
        k->fd = STDIN_FILENO;
        k->name = "<stdin>";
        if (isatty(STDIN_FILENO))
            cli_error("reading keys from the terminal, one per line (end "
                      "with Ctrl-D; give a KEYFILE or --key K instead)");
    } else {
        k->name = path;
        k->fd = open(path, O_RDONLY | O_CLOEXEC);
        k->owns_fd = true;
        if (k->fd < 0) {
            cli_error("%s: cannot open: %s", path, strerror(errno));
            return false;
        }
    }
    k->reading = true;
    if (!seq_open_fd(&k->in, k->fd)) {
        keys_fail(k);
        cli_keys_close(k);
        return false;
    }
    return true;
}

static int next_binary(cli_keys *k, const uint8_t **key, size_t *len) {
    size_t got = 0;
    if (!seq_read(&k->in, k->word, 8, &got))
        return keys_fail(k);
    if (got == 8) {
        *key = k->word;
        *len = 8;
        k->count++;
        return 1;
    }
    if (got != 0) {
        cli_error("%s: binary input ends with %zu stray byte%s (keys are 8 "
                  "bytes each; %llu whole key%s read)",
                  k->name, got, got == 1 ? "" : "s",
                  (unsigned long long)k->count, k->count == 1 ? "" : "s");
        return -1;
    }
    return 0;
}

static int next_text(cli_keys *k, const uint8_t **key, size_t *len) {
    for (;;) {
        uint64_t start;
        int got = seq_line(&k->in, &start);
        if (got < 0)
            return keys_fail(k);
        if (got == 0)
            return 0;
        k->line = k->in.line;
        if (k->in.buf_len == 0 && k->skip_empty)
            continue;
        *key = (const uint8_t *)(k->in.buf ? k->in.buf : "");
        *len = k->in.buf_len;
        k->count++;
        return 1;
    }
}

void cli_keys_open_list(cli_keys *k, const char *const *list, size_t n) {
    memset(k, 0, sizeof *k);
    k->name = "--key";
    k->list = list;
    k->list_n = n;
}

uint64_t cli_keys_size(const cli_keys *k) {
    struct stat sb;
    if (!k->reading || fstat(k->fd, &sb) != 0 || !S_ISREG(sb.st_mode) ||
        sb.st_size < 0)
        return 0;
    return (uint64_t)sb.st_size;
}

/* Bytes of the input file consumed: compressed bytes for gzip, xz and
 * bzip2, so that progress is a fraction of the file's size either way. */
uint64_t cli_keys_offset(const cli_keys *k) {
    if (!k->reading)
        return 0;
    return k->in.gz || k->in.xz || k->in.bz ? k->in.zin : k->in.offset;
}

static uint64_t keys_offset(const void *k) { return cli_keys_offset(k); }

void cli_progress_tick_keys(cli_progress *p, const cli_keys *k) {
    cli_progress_tick_input(p, k->count, keys_offset, k);
}

void cli_keys_where(const cli_keys *k, char *buf, size_t cap) {
    if (k->list != NULL)
        snprintf(buf, cap, "--key '%s'", k->list[k->count - 1]);
    else if (k->binary)
        snprintf(buf, cap, "%s: key %llu", k->name,
                 (unsigned long long)k->count);
    else
        snprintf(buf, cap, "%s: key %llu (line %llu)", k->name,
                 (unsigned long long)k->count, (unsigned long long)k->line);
}

bool cli_key_list_push(cli_key_list *l, const char *key) {
    if (l->n == l->cap) {
        size_t ncap = l->cap ? l->cap * 2 : 8;
        const char **nk = realloc(l->keys, ncap * sizeof *nk);
        if (nk == NULL) {
            cli_error("out of memory");
            return false;
        }
        l->keys = nk;
        l->cap = ncap;
    }
    l->keys[l->n++] = key;
    return true;
}

void cli_key_list_free(cli_key_list *l) {
    free(l->keys);
    memset(l, 0, sizeof *l);
}

int cli_key_source_take(cli_key_source *s, int id, const char *value) {
    switch (id) {
    case CLI_OPT_KEY: return cli_key_list_push(&s->keys, value) ? 1 : -1;
    case CLI_OPT_BINARY: s->binary = true; return 1;
    case CLI_OPT_SKIP_EMPTY: s->skip_empty = true; return 1;
    case CLI_NEXT_POS:
        if (s->file == NULL)
            s->file = value;
        else if (s->input == NULL)
            s->input = value;
        else {
            cli_usage_error(s->command, "too many arguments");
            return -1;
        }
        return 1;
    default: return 0;
    }
}

int cli_key_source_check(const cli_key_source *s) {
    if (s->file == NULL)
        return cli_usage_error(s->command, "missing FILE");
    if (s->keys.n > 0 && s->input != NULL)
        return cli_usage_error(s->command, "give keys with --key or in "
                                           "KEYFILE, not both");
    if (s->keys.n == 0 && s->input == NULL && strcmp(s->file, "-") == 0)
        return cli_usage_error(s->command, "FILE and keys cannot both be "
                                           "stdin");
    return -1;
}

bool cli_key_source_open(const cli_key_source *s, cli_keys *k) {
    if (s->keys.n == 0)
        return cli_keys_open(k, s->input, s->binary, s->skip_empty);
    cli_keys_open_list(k, s->keys.keys, s->keys.n);
    return true;
}

bool cli_key_source_binary(const cli_key_source *s) {
    return s->binary && s->keys.n == 0;
}

void cli_key_source_free(cli_key_source *s) { cli_key_list_free(&s->keys); }

int cli_keys_next(cli_keys *k, const uint8_t **key, size_t *len) {
    if (k->list != NULL) {
        if (k->count == k->list_n)
            return 0;
        *key = (const uint8_t *)k->list[k->count];
        *len = strlen(k->list[k->count++]);
        return 1;
    }
    return k->binary ? next_binary(k, key, len) : next_text(k, key, len);
}

void cli_keys_close(cli_keys *k) {
    if (k->reading)
        seq_close(&k->in);
    if (k->owns_fd && k->fd >= 0)
        close(k->fd);
    memset(k, 0, sizeof *k);
}

void cli_print_key(FILE *out, const uint8_t *key, size_t len, bool binary) {
    if (binary && len == 8)
        fprintf(out, "%llu", (unsigned long long)cli_load_le64(key));
    else if (len > 0)
        fwrite(key, 1, len, out);
}

void cli_json_key(cli_json *j, const uint8_t *key, size_t len, bool binary) {
    if (binary && len == 8)
        cli_json_u64(j, "key", cli_load_le64(key));
    else
        cli_json_key_bytes(j, "key", key, len);
}

void cli_json_key_record(cli_json *j, const uint8_t *key, size_t len,
                         bool binary) {
    cli_json_init(j, stdout, false);
    cli_json_open(j, NULL, '{');
    cli_json_key(j, key, len, binary);
}

uint64_t cli_load_le64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

void cli_store_le64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* ---- filter files -------------------------------------------------------- */

int cli_file_error(const char *path, amq_status st, const amq_diag *diag) {
    if (st == AMQ_ERR_IO && diag != NULL && diag->message[0] != 0) {
        /* The library's message names the path already. */
        cli_error("%.*s", (int)sizeof diag->message, diag->message);
        return CLI_EXIT_ERR;
    }
    return cli_status_error(path, st, diag);
}

/* "-" is stdin: the library opens it as /dev/stdin (a pipe is read, a
 * redirected file mapped); messages still say "<stdin>". */
static const char *system_path(const char *path, const char **shown) {
    bool is_stdin = strcmp(path, "-") == 0;
    *shown = is_stdin ? "<stdin>" : path;
    return is_stdin ? "/dev/stdin" : path;
}

bool cli_filter_open(cli_filter_file *ff, const char *path) {
    const char *shown;
    const char *sys = system_path(path, &shown);
    amq_diag diag;
    memset(ff, 0, sizeof *ff);
    memset(&diag, 0, sizeof diag);
    amq_status st = amq_filter_open_file(sys, NULL, &ff->filter, &diag);
    if (st != AMQ_OK) {
        cli_file_error(shown, st, &diag);
        return false;
    }
    ff->is_view = amq_filter_is_view(ff->filter);
    /* A file loads only when it is exactly one frame. */
    ff->file_len = amq_filter_serialized_size(ff->filter);
    return true;
}

/* Read all of fd into a malloc'ed buffer (pipes and files alike). */
static bool read_fd(int fd, const char *name, uint8_t **out, size_t *len) {
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    for (;;) {
        if (buf == NULL) {
            cli_error("%s: out of memory", name);
            return false;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            cli_error("%s: read error: %s", name, strerror(errno));
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

bool cli_read_file(const char *path, uint8_t **out, size_t *len) {
    bool is_stdin = path == NULL || strcmp(path, "-") == 0;
    const char *name = is_stdin ? "<stdin>" : path;
    int fd = is_stdin ? dup(STDIN_FILENO) : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        cli_error("%s: cannot open: %s", name, strerror(errno));
        return false;
    }
    bool ok = read_fd(fd, name, out, len);
    close(fd);
    return ok;
}

void cli_filter_close(cli_filter_file *ff) {
    amq_filter_free(ff->filter);
    memset(ff, 0, sizeof *ff);
}

bool cli_filter_load(const char *path, amq_filter **out) {
    const char *shown;
    const char *sys = system_path(path, &shown);
    amq_diag diag;
    memset(&diag, 0, sizeof diag);
    amq_status st = amq_filter_load_file(sys, NULL, out, &diag);
    if (st != AMQ_OK)
        cli_file_error(shown, st, &diag);
    return st == AMQ_OK;
}

/* ---- standard output ---------------------------------------------------- */

static bool write_all(int fd, const uint8_t *p, size_t len) {
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

/* A frame to stdout ("-o -"): refused on a terminal. */
static bool write_stdout(const void *buf, size_t len) {
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

bool cli_filter_save(const amq_filter *f, const char *path) {
    amq_diag diag;
    memset(&diag, 0, sizeof diag);
    if (strcmp(path, "-") != 0) {
        amq_status st = amq_filter_save_file(f, path, &diag);
        if (st != AMQ_OK)
            cli_file_error(path, st, &diag);
        return st == AMQ_OK;
    }
    size_t size = amq_filter_serialized_size(f), written = 0;
    uint8_t *buf = malloc(size > 0 ? size : 1);
    if (buf == NULL) {
        cli_error("<stdout>: out of memory for %zu bytes", size);
        return false;
    }
    amq_status st = amq_filter_save(f, buf, size, &written);
    bool ok = st == AMQ_OK;
    if (!ok)
        cli_status_error("<stdout>", st, NULL);
    else
        ok = write_stdout(buf, written);
    free(buf);
    return ok;
}
