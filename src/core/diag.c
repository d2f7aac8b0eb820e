/*
 * diag.c — amq__diag: a status with a position and a sentence.
 */
#include "core/diag.h"

#include <stdarg.h>
#include <stdio.h>

amq_status amq__diag(amq_diag *diag, amq_status st, size_t offset,
                     const char *fmt, ...) {
    if (diag != NULL) {
        va_list ap;
        diag->offset = offset;
        va_start(ap, fmt);
        vsnprintf(diag->message, sizeof diag->message, fmt, ap);
        va_end(ap);
    }
    return st;
}
