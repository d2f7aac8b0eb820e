/*
 * cursor.c — the diagnostics of the parameter-block reader (cursor.h).
 */
#include "core/cursor.h"

#include <stdarg.h>
#include <stdio.h>

amq_status amq__rd_bad(const amq__rd *r, size_t at, const char *fmt, ...) {
    if (r->diag != NULL) {
        char msg[sizeof r->diag->message];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        amq__diag(r->diag, AMQ_ERR_CORRUPT, at, "%s: %s", r->what, msg);
    }
    return AMQ_ERR_CORRUPT;
}

amq_status amq__rd_expect(const amq__rd *r, size_t len) {
    if (r->len != len)
        return amq__rd_bad(r, r->base,
                           "parameter block of %zu bytes, "
                           "expected %zu",
                           r->len, len);
    return AMQ_OK;
}

amq_status amq__rd_zero32(amq__rd *r) {
    uint32_t v;
    size_t at = amq__rd_u32(r, &v);
    return v == 0 ? AMQ_OK : amq__rd_bad(r, at, "reserved field is not zero");
}

amq_status amq__rd_zero64(amq__rd *r) {
    uint64_t v;
    size_t at = amq__rd_u64(r, &v);
    return v == 0 ? AMQ_OK : amq__rd_bad(r, at, "reserved field is not zero");
}
