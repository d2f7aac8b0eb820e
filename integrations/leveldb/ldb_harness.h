/*
 * ldb_harness.h — what the LevelDB test and benchmark share: a database
 * of generated keys, timed lookups, and measuring false positives from
 * outside the filter. The
 * LevelDB C API exposes no statistics, so the test and the benchmark
 * count the data-block reads of absent-key lookups by spoiling every data
 * block of a closed database. A lookup the filter rejects never reads a
 * block and returns "not found"; one the filter lets through reads a
 * block whose checksum fails and returns a corruption error (with
 * verify_checksums set). Index, filter and meta blocks stay intact.
 *
 * The table layout used (LevelDB's doc/table_format.md): a 48-byte footer
 * (metaindex handle, index handle as varint64 pairs, padding, the magic
 * 0xdb4775248b80fb57); the metaindex block's "filter.NAME" entry holds the
 * filter block's handle; data blocks are everything before the filter
 * block (or before the metaindex block when there is no filter).
 */
#ifndef AMQ_LDB_HARNESS_H
#define AMQ_LDB_HARNESS_H

#include <leveldb/c.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A database in `dir`: key number 2 i (i < keys) for the keys written,
 * 2 i + 1 for absent ones; values of value_len bytes, tables of
 * block_size-byte blocks, no compression. */
typedef struct ldb_setup {
    const char *dir;
    leveldb_filterpolicy_t *policy; /* NULL: no filter */
    uint64_t keys;
    size_t value_len, block_size;
    bool random_keys; /* key number j as 16 hex digits of a 64-bit mix of
                         j, instead of "k" and 15 decimal digits of j    */
} ldb_setup;

/* Write the keys in a shuffled order (seeded), compact everything, close.
 * 0 on success, -1 with a message on stderr. */
int ldb_fill(const ldb_setup *s, uint64_t seed);

typedef struct ldb_result {
    uint64_t lookups;
    uint64_t found;  /* lookups that returned a value                 */
    uint64_t errors; /* lookups that returned an error                */
    double seconds;  /* wall time of the lookups                      */
} ldb_result;

/* Open, look up `n` keys (present: 2 i, absent: 2 i + 1, i cycling over
 * the keys), close. verify: check block checksums (needed to see spoiled
 * blocks). 0 on success, -1 if the database does not open. */
int ldb_lookup(const ldb_setup *s, bool present, uint64_t n, bool verify,
               ldb_result *out);

/* The key of number j (16 bytes, NUL-terminated in buf[24]). */
void ldb_key(const ldb_setup *s, uint64_t j, char *buf);

/* Flip every data byte of every table file (*.ldb, *.sst) in dir. Returns
 * the number of tables changed, or -1 with a message on stderr. Tables
 * must be uncompressed (the metaindex block is read as stored). */
int ldb_spoil_data_blocks(const char *dir);

/* Bytes of all table files in dir (0 if none), -1 on error. */
long long ldb_table_bytes(const char *dir);

/* Remove dir and the files directly in it; 0 on success. */
int ldb_remove_dir(const char *dir);

/* A fresh directory under $TMPDIR (or /tmp) into buf[cap]; 0 on success. */
int ldb_temp_dir(char *buf, size_t cap, const char *tag);

#endif
