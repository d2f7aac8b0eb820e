/*
 * amq/status.h — the status codes every fallible amq call returns.
 *
 * One X-macro table generates the enum, amq_status_name() and amq_strerror(),
 * so the three can never drift apart. Values are pinned: a code, once
 * published, keeps its number forever and is never reused.
 */
#ifndef AMQ_STATUS_H
#define AMQ_STATUS_H

#include <stddef.h>

#include "amq/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(name, value, message) */
#define AMQ_STATUS_TABLE(X)                                                    \
    X(AMQ_OK, 0, "success")                                                    \
    X(AMQ_ERR_NOMEM, 1, "out of memory")                                       \
    X(AMQ_ERR_INVALID, 2, "invalid argument")                                  \
    X(AMQ_ERR_OVERFLOW, 3, "size computation overflows")                       \
    X(AMQ_ERR_UNSUPPORTED, 4, "operation not supported by this structure")     \
    X(AMQ_ERR_FULL, 5, "structure is full")                                    \
    X(AMQ_ERR_SPEC, 6, "malformed or unknown structure spec")                  \
    X(AMQ_ERR_CORRUPT, 7, "corrupt or truncated serialized data")              \
    X(AMQ_ERR_VERSION, 8, "unsupported format version or feature")             \
    X(AMQ_ERR_CHECKSUM, 9, "checksum mismatch")                                \
    X(AMQ_ERR_INCOMPATIBLE, 10, "structures have incompatible shapes")         \
    X(AMQ_ERR_READONLY, 11, "structure is a read-only view")                   \
    X(AMQ_ERR_BUFFER, 12, "output buffer too small")                           \
    X(AMQ_ERR_ALIGN, 13, "buffer is not suitably aligned")                     \
    X(AMQ_ERR_NOT_FOUND, 14, "key not found")                                  \
    X(AMQ_ERR_IO, 15, "input/output error")                                    \
    X(AMQ_ERR_HASH, 16, "hash mode unavailable or key missing")                \
    X(AMQ_ERR_KIND, 17, "frame holds another kind of object")

typedef enum amq_status {
#define AMQ__STATUS_ENUM(name, value, msg) name = value,
    AMQ_STATUS_TABLE(AMQ__STATUS_ENUM)
#undef AMQ__STATUS_ENUM
} amq_status;

/* Where a parser or constructor stopped and why: an optional out-parameter
 * of the calls that document it. Written only when the call fails (then
 * offset is the byte offset in the input the message is about, 0 when the
 * failure is not about a position, and message is a NUL-terminated
 * sentence); a successful call leaves it untouched. */
typedef struct amq_diag {
    size_t offset;
    char message[160];
} amq_diag;

/* Human-readable message for a status ("unknown status" for values outside
 * the table). Never NULL; the string is static. */
AMQ_API const char *amq_strerror(amq_status status);

/* The enumerator's name, e.g. "AMQ_ERR_NOMEM". Never NULL; static. */
AMQ_API const char *amq_status_name(amq_status status);

/* For "did you mean ...?" messages: the word of words[0..n) that `word`
 * most likely misspells, or NULL when none is close. A candidate is close
 * when it equals word ignoring case, or is at most max(1, len/3) edits
 * away (insert, delete, replace, or swap of two neighbouring letters;
 * len is the candidate's length), and closer than any other. NULL entries
 * of words are skipped. The result is one of words' pointers. */
AMQ_API const char *amq_suggest(const char *word, const char *const *words,
                                size_t n);

/* Propagate a non-OK status to the caller. The name says it returns. */
#define AMQ_RETURN_IF_ERR(expr)                                                \
    do {                                                                       \
        amq_status amq__st_ = (expr);                                          \
        if (amq__st_ != AMQ_OK)                                                \
            return amq__st_;                                                   \
    } while (0)

#ifdef __cplusplus
}
#endif
#endif
