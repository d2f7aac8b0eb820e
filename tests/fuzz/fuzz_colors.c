/*
 * fuzz_colors.c — libFuzzer target for the colour class file of k-mer
 * indexes (tools/common/colors.c). replay.c runs it over
 * tests/fuzz/corpus/colors in ordinary CI.
 *
 * The first byte is a mode: bit 0 set, the last 8 bytes of the rest are
 * overwritten with its true checksum first, so the fuzzer reaches the
 * checks behind the checksum. Properties (a violation aborts): nothing
 * crashes, whatever the bytes; a refusal comes with a message; an
 * accepted file's classes decode to increasing ids below E and encode
 * back to the very same bytes. Then the rest, read as sets of ids (a
 * byte below 0x80 adds an id, one above ends the set), is added to a new
 * table: a set seen twice gets its first id, every class decodes to its
 * set, and the table's file parses back to the same classes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amq/core.h"
#include "colors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "fuzz_colors: property violated: %s\n", what);
        abort();
    }
}

static void check_file(const uint8_t *buf, size_t len) {
    color_table t;
    char err[PARSE_ERR_MAX] = "";
    if (!color_parse(buf, len, &t, err)) {
        require(err[0] != '\0', "a refusal without a message");
        return;
    }
    /* a class has no more ids than bytes */
    uint64_t room = t.experiments < t.pool_len ? t.experiments : t.pool_len;
    uint32_t *ids = malloc(room * sizeof *ids + 1);
    require(ids != NULL, "out of memory");
    for (uint64_t c = 0; c < t.classes; c++) {
        size_t n = color_ids(&t, c, ids);
        require(n >= 1, "an empty class");
        for (size_t i = 0; i < n; i++)
            require(ids[i] < t.experiments && (i == 0 || ids[i - 1] < ids[i]),
                    "a class that is not increasing ids below E");
    }
    uint8_t *again = NULL;
    size_t n = 0;
    require(color_encode(&t, &again, &n), "out of memory");
    require(n == len && memcmp(again, buf, len) == 0,
            "an accepted file encodes to other bytes");
    free(again);
    free(ids);
    color_free(&t);
}

/* Sets of ids from the bytes, into a new table, and back. */
static void check_build(const uint8_t *p, size_t len) {
    enum { E = 128, MAXSETS = 64 };
    color_table t;
    require(color_init(&t, E), "out of memory");
    uint32_t set[E], got[E];
    uint64_t first[MAXSETS];
    size_t sets = 0;
    for (size_t i = 0; i < len && sets < MAXSETS;) {
        bool in[E] = {false};
        for (; i < len && p[i] < 0x80; i++)
            in[p[i]] = true;
        i++;
        size_t n = 0;
        for (uint32_t x = 0; x < E; x++)
            if (in[x])
                set[n++] = x;
        if (n == 0)
            continue;
        uint64_t c = color_add(&t, set, n);
        require(c != UINT64_MAX && c < t.classes, "no class id");
        require(color_add(&t, set, n) == c, "the same set, another id");
        require(color_ids(&t, c, got) == n && memcmp(got, set, n * 4) == 0,
                "a class decodes to another set");
        first[sets++] = c;
    }
    uint8_t *buf = NULL;
    size_t n = 0;
    color_table back;
    char err[PARSE_ERR_MAX];
    require(color_encode(&t, &buf, &n), "out of memory");
    require(color_parse(buf, n, &back, err), "a table's own file refused");
    require(back.classes == t.classes && back.pool_len == t.pool_len &&
                (t.pool_len == 0 || memcmp(back.pool, t.pool, t.pool_len) == 0),
            "the file reads back to other classes");
    for (size_t s = 0; s < sets; s++)
        require(first[s] < back.classes, "a class lost");
    free(buf);
    color_free(&back);
    color_free(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0)
        return 0;
    size_t len = size - 1;
    uint8_t *buf = malloc(len + 1);
    if (buf == NULL)
        return 0;
    memcpy(buf, data + 1, len);
    if ((data[0] & 1) && len >= 8) {
        amq_hasher h;
        amq_hasher_init(&h, AMQ_HASH_XXH3, 0, NULL);
        uint64_t x = amq_hash64(&h, buf, len - 8);
        for (int i = 0; i < 8; i++)
            buf[len - 8 + i] = (uint8_t)(x >> (8 * i));
    }
    check_file(buf, len);
    check_build(data + 1, len);
    free(buf);
    return 0;
}
