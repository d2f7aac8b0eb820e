/*
 * ckeys.c — key sets in memory (ckeys.h): one byte buffer and an offset
 * per key, both grown by doubling, so a set of n keys is one amq_keys the
 * cascade reads without copying.
 */
#include <stdlib.h>
#include <string.h>

#include "ckeys.h"

bool ckeys_push(ckeys *c, const uint8_t *p, size_t len) {
    size_t at = c->k.n ? (size_t)c->offsets[c->k.n] : 0;
    if (c->k.n + 2 > c->cap_keys) {
        size_t n = c->cap_keys ? 2 * c->cap_keys : 1024;
        uint64_t *o = realloc(c->offsets, n * sizeof *o);
        if (o == NULL)
            goto oom;
        c->offsets = o;
        c->cap_keys = n;
    }
    if (at + len > c->cap_bytes) {
        size_t n = 2 * (at + len) + 4096;
        uint8_t *b = realloc(c->bytes, n);
        if (b == NULL)
            goto oom;
        c->bytes = b;
        c->cap_bytes = n;
    }
    if (len > 0)
        memcpy(c->bytes + at, p, len);
    c->offsets[0] = 0;
    c->offsets[++c->k.n] = at + len;
    c->k.bytes = c->bytes;
    c->k.offsets = c->offsets;
    return true;
oom:
    cli_error("out of memory after %zu keys", c->k.n);
    return false;
}

void ckeys_free(ckeys *c) {
    free(c->bytes);
    free(c->offsets);
    memset(c, 0, sizeof *c);
}

bool ckeys_read(ckeys *c, const char *path, const char *label) {
    cli_keys k;
    const uint8_t *key;
    size_t len;
    int r;
    memset(c, 0, sizeof *c);
    if (!cli_keys_open(&k, path, false, true))
        return false;
    cli_progress p;
    cli_progress_init(&p, label, 0);
    while ((r = cli_keys_next(&k, &key, &len)) == 1) {
        if (!ckeys_push(c, key, len)) {
            r = -1;
            break;
        }
        cli_progress_tick(&p, k.count);
    }
    cli_progress_done(&p);
    cli_keys_close(&k);
    if (r < 0)
        ckeys_free(c);
    return r == 0;
}
