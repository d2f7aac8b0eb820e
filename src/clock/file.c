/*
 * file.c — clocks in files, through the same atomic save and read as
 * filters and cascades (core/file_io.c).
 */
#include "clock/parts.h"
#include "core/diag.h"
#include "core/file_io.h"

static amq_status save_frame(const void *c, void *buf, size_t cap,
                             size_t *written) {
    return amq_clock_save(c, buf, cap, written);
}

amq_status amq_clock_save_file(const amq_clock *c, const char *path,
                               amq_diag *diag) {
    if (c == NULL || path == NULL || *path == 0)
        return amq__diag(diag, AMQ_ERR_INVALID, 0, "no clock or no path");
    amq__file_src src = {.size = amq_clock_save_size(c),
                         .secret = c->kind == AMQ_CLOCK_BLOOM &&
                                   c->b.hasher.kind == AMQ_HASH_SIPHASH,
                         .obj = c,
                         .write = save_frame};
    return amq__save_file(path, &src, diag);
}

static amq_status load_frame(const uint8_t *buf, size_t len,
                             const amq_options *opt, void **out,
                             amq_diag *diag) {
    amq_clock *c = NULL;
    amq_status st = amq_clock_load(buf, len, opt, &c, diag);
    *out = c;
    return st;
}

amq_status amq_clock_load_file(const char *path, const amq_options *opt,
                               amq_clock **out, amq_diag *diag) {
    void *c = NULL;
    amq_status st =
        amq__load_file(path, opt, load_frame, out != NULL ? &c : NULL, diag);
    if (out != NULL)
        *out = c;
    return st;
}
