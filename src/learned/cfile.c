/*
 * cfile.c — cascades in files, through the same atomic save and read as
 * filters (core/file_io.c).
 */
#include "core/diag.h"
#include "core/file_io.h"
#include "learned/learned.h"

static amq_status save_frame(const void *c, void *buf, size_t cap,
                             size_t *written) {
    return amq_cascade_save(c, buf, cap, written);
}

amq_status amq_cascade_save_file(const amq_cascade *c, const char *path,
                                 amq_diag *diag) {
    if (c == NULL || path == NULL || *path == 0)
        return amq__diag(diag, AMQ_ERR_INVALID, 0, "no cascade or no path");
    amq__file_src src = {.size = amq_cascade_save_size(c),
                         .secret = c->hasher.kind == AMQ_HASH_SIPHASH,
                         .obj = c,
                         .write = save_frame};
    return amq__save_file(path, &src, diag);
}

static amq_status load_frame(const uint8_t *buf, size_t len,
                             const amq_options *opt, void **out,
                             amq_diag *diag) {
    amq_cascade *c = NULL;
    amq_status st = amq_cascade_load(buf, len, opt, &c, diag);
    *out = c;
    return st;
}

amq_status amq_cascade_load_file(const char *path, const amq_options *opt,
                                 amq_cascade **out, amq_diag *diag) {
    void *c = NULL;
    amq_status st =
        amq__load_file(path, opt, load_frame, out != NULL ? &c : NULL, diag);
    if (out != NULL)
        *out = c;
    return st;
}
