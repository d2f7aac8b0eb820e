/*
 * diag.h — filling the optional amq_diag out-parameter.
 *
 * A failing call that can say where and why fills diag (when the caller
 * passed one) and returns its status in one expression:
 *
 *     return amq__diag(diag, AMQ_ERR_CORRUPT, off, "k=%u outside 1..%d", k, 64);
 *
 * Successful calls never touch diag.
 */
#ifndef AMQ_SRC_CORE_DIAG_H
#define AMQ_SRC_CORE_DIAG_H

#include <stddef.h>

#include "amq/status.h"

/* Fill diag (if not NULL) printf-style. Returns st for chaining. */
amq_status amq__diag(amq_diag *diag, amq_status st, size_t offset,
                     const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
