/*
 * fuzz_kvline.c — libFuzzer target for the `amq map` line parser
 * (tools/common/kvline.c). replay.c runs it over tests/fuzz/corpus/kvline
 * in ordinary CI.
 *
 * The first byte chooses the value width (1..64) and whether values are
 * id lists; the rest is split into lines, each parsed. Properties (a
 * violation aborts): nothing crashes, whatever the bytes; an accepted
 * line's key is the bytes before its first tab and its value fits the
 * width; the canonical form of an accepted pair ("key<TAB>number" or the
 * ids in increasing order) parses back to the same pair; a refusal always
 * comes with a message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "fuzz_kvline: property violated: %s\n", what);
        abort();
    }
}

/* "key<TAB>value" again, in canonical form. */
static size_t canonical(const kvline *kv, bool ids, char *out, size_t cap) {
    size_t n = kv->key_len;
    memcpy(out, kv->key, n);
    out[n++] = '\t';
    if (!ids)
        return n + (size_t)snprintf(out + n, cap - n, "%llu",
                                    (unsigned long long)kv->value);
    const char *sep = "";
    for (unsigned i = 0; i < 64; i++)
        if (kv->value >> i & 1) {
            n += (size_t)snprintf(out + n, cap - n, "%s%u", sep, i);
            sep = ",";
        }
    return n;
}

static void one_line(const char *line, size_t len, bool ids, unsigned vbits) {
    kvline kv;
    char err[PARSE_ERR_MAX];
    err[0] = '\0';
    if (!kvline_parse(line, len, ids, vbits, &kv, err)) {
        require(err[0] != '\0', "a refusal without a message");
        return;
    }
    require(kv.key == line && kv.key_len < len, "key inside the line");
    require(memchr(kv.key, '\t', kv.key_len) == NULL, "tab in the key");
    require(line[kv.key_len] == '\t', "key ends at the first tab");
    require(vbits >= 64 || kv.value >> vbits == 0, "value wider than v");
    char *again = malloc(kv.key_len + 400);
    if (again == NULL)
        return;
    size_t n = canonical(&kv, ids, again, kv.key_len + 400);
    kvline kv2;
    require(kvline_parse(again, n, ids, vbits, &kv2, err),
            "canonical form refused");
    require(kv2.key_len == kv.key_len && kv2.value == kv.value &&
                memcmp(kv2.key, kv.key, kv.key_len) == 0,
            "canonical form parses to another pair");
    free(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0)
        return 0;
    unsigned vbits = 1 + data[0] % 64;
    bool ids = (data[0] & 0x80) != 0;
    const char *p = (const char *)data + 1, *end = (const char *)data + size;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        one_line(p, len, ids, vbits);
        p += len + (nl != NULL);
    }
    return 0;
}
