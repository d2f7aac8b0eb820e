/*
 * fuzz_parquet.c — libFuzzer target for the Parquet reader
 * (integrations/parquet). replay.c runs it over tests/fuzz/corpus/parquet
 * in ordinary CI.
 *
 * The first byte is a mode. Mode 0: the rest is a whole file, opened from
 * memory; when it opens, every chunk's Bloom filter is read and probed
 * and every chunk's values are read. Modes 1-10: the rest is a page body
 * given to the value decoders, as encoding mode - 1 of the column type
 * named by the next byte (mod 8; a fixed-length type of 1 + its low
 * bits bytes). Properties (a violation aborts): nothing crashes, whatever
 * the bytes; a refusal is a status the header documents; a file that
 * opens has its footer's shape (row groups x columns); a decoder hands
 * out at most as many values as asked for, each inside the input (or of
 * the fixed width).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amq_parquet.h"
#include "parquet_impl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "fuzz_parquet: property violated: %s\n", what);
        abort();
    }
}

static bool documented(amq_status st) {
    return st == AMQ_OK || st == AMQ_ERR_CORRUPT || st == AMQ_ERR_UNSUPPORTED ||
           st == AMQ_ERR_NOT_FOUND || st == AMQ_ERR_NOMEM ||
           st == AMQ_ERR_INVALID;
}

typedef struct counter {
    uint64_t n, limit;
    size_t max_len;
} counter;

static bool count(void *ctx, const uint8_t *v, size_t len) {
    counter *c = ctx;
    require(v != NULL || len == 0, "a value without bytes");
    require(len <= c->max_len, "a value longer than its input");
    c->n++;
    return c->n < c->limit;
}

static void fuzz_file(const uint8_t *data, size_t size) {
    amq_pq_file *f = NULL;
    amq_pq_diag d = {0, NULL};
    amq_status st = amq_pq_open_memory(data, size, &f, &d);
    require(documented(st), "an undocumented status from open");
    if (st != AMQ_OK) {
        require(d.what != NULL, "a refusal without a message");
        return;
    }
    for (size_t g = 0; g < amq_pq_groups(f); g++)
        for (size_t c = 0; c < amq_pq_columns(f); c++) {
            uint8_t *bits = NULL;
            size_t len = 0;
            bool maybe;
            require(amq_pq_chunk_at(f, g, c) != NULL, "a chunk missing");
            st = amq_pq_bloom_read(f, g, c, &bits, &len, NULL);
            require(documented(st), "an undocumented status from bloom_read");
            if (st == AMQ_OK) {
                require(len > 0 && len % 32 == 0 && len <= size,
                        "a bitset of a wrong length");
                free(bits);
            }
            require(documented(amq_pq_probe(f, g, c, 42, &maybe, NULL)),
                    "an undocumented status from probe");
            counter k = {0, 1u << 20, size};
            st = amq_pq_values(f, g, c, count, &k, NULL);
            require(documented(st), "an undocumented status from values");
        }
    amq_pq_close(f);
}

static void fuzz_decode(int encoding, const uint8_t *data, size_t size) {
    if (size < 2)
        return;
    amq_pq_column col = {"c", (amq_pq_type)(data[0] % 8), 0, 0, 0};
    if (col.type == AMQ_PQ_FIXED_LEN_BYTE_ARRAY)
        col.type_length = 1 + (data[0] >> 3);
    uint32_t n = data[1];
    counter k = {0, ~0ull, size > 12 ? size : 12};
    if (col.type == AMQ_PQ_FIXED_LEN_BYTE_ARRAY &&
        (size_t)col.type_length > k.max_len)
        k.max_len = (size_t)col.type_length;
    bool stop = false;
    amq_status st =
        amq__pq_decode(&col, encoding, data + 2, size - 2, n, count, &k, &stop);
    require(documented(st), "an undocumented status from decode");
    require(k.n <= n, "more values than asked for");
    require(st != AMQ_OK || k.n == n,
            "fewer values than asked for, and no error");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0)
        return 0;
    if (data[0] % 11 == 0)
        fuzz_file(data + 1, size - 1);
    else
        fuzz_decode(data[0] % 11 - 1, data + 1, size - 1);
    return 0;
}
