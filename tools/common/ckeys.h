/*
 * ckeys.h — key sets held whole in memory as amq_keys, the input of the
 * learned cascade: read from a file by `amq cascade train|audit|features`
 * and by `amq-lab cascade eval`, or built key by key.
 */
#ifndef AMQ_TOOLS_CKEYS_H
#define AMQ_TOOLS_CKEYS_H

#include "cli.h"

/* A key set read from a file (one key per line, "\n" and "\r" stripped,
 * empty lines skipped) or built in memory. */
typedef struct ckeys {
    amq_keys k;
    uint8_t *bytes;
    uint64_t *offsets;
    size_t cap_bytes, cap_keys;
} ckeys;

/* false after printing an error (out of memory). */
bool ckeys_push(ckeys *c, const uint8_t *p, size_t len);
void ckeys_free(ckeys *c);
/* Read path into c (progress labelled label); false after printing
 * "TOOL: PATH: ..." (unreadable). */
bool ckeys_read(ckeys *c, const char *path, const char *label);

#endif
