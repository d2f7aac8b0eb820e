/*
 * amq_parquet.h — what amq reads of Apache Parquet files: the footer's
 * metadata, the split-block Bloom filter of each column chunk, and the
 * distinct values of a column chunk; and from those values one routing
 * maplet over the row groups of many files (a point-lookup index).
 *
 *     amq_pq_file *f;
 *     if (amq_pq_open("t.parquet", &f, &diag) == AMQ_OK) {
 *         int c = amq_pq_column_find(f, "user_id");
 *         uint8_t key[AMQ_PQ_KEY_MAX]; size_t klen;
 *         amq_pq_encode_key(amq_pq_column_at(f, c), "42", 2, key, &klen);
 *         uint64_t h = amq_pq_hash(key, klen);
 *         for (size_t g = 0; g < amq_pq_groups(f); g++)
 *             amq_pq_probe(f, g, c, h, &maybe);   // false: not in group g
 *         amq_pq_close(f);
 *     }
 *
 * A Parquet file ends with its metadata (Thrift compact protocol), the
 * metadata's length (4 bytes, little-endian) and "PAR1"; it starts with
 * "PAR1". The metadata lists the schema (leaf columns in order) and the
 * row groups, each with one column chunk per leaf. A chunk's metadata may
 * give a Bloom filter's offset: there a BloomFilterHeader (numBytes,
 * algorithm SPLIT_BLOCK, hash XXHASH, compression UNCOMPRESSED), then
 * numBytes of bitset in amq's `sbbf` layout. A value is hashed with XXH64
 * (seed 0) of its plain encoding: 4 or 8 little-endian bytes for INT32,
 * INT64, FLOAT and DOUBLE, the bytes themselves for BYTE_ARRAY and
 * FIXED_LEN_BYTE_ARRAY. (parquet-format: Thrift definitions in
 * parquet.thrift, the filter in BloomFilter.md.)
 *
 * Keys as text (amq_pq_encode_key), in the column's physical type:
 * integers in decimal (INT32: -2^31..2^32-1, so unsigned columns work;
 * INT64: -2^63..2^64-1), floats as strtod reads them, byte arrays as the
 * bytes given (FIXED_LEN_BYTE_ARRAY: exactly its length). Logical types are
 * stored as their physical type: a DATE is its INT32 day number, a
 * DECIMAL its unscaled integer (or its big-endian bytes when fixed-length).
 *
 * Errors: AMQ_ERR_IO (the file cannot be read), AMQ_ERR_CORRUPT (no
 * PAR1, a truncated or malformed footer, offsets outside the file, a
 * malformed page; the diagnostic says where), AMQ_ERR_UNSUPPORTED (an
 * encrypted footer, a filter of another algorithm/hash/compression, an
 * encoding or codec amq does not read, a nested column), AMQ_ERR_NOT_FOUND
 * (no such column; a chunk without a Bloom filter), AMQ_ERR_INVALID (a key
 * that is not a value of the column's type), AMQ_ERR_NOMEM. Nothing is
 * trusted before it is checked: every count is bounded by the bytes that
 * would hold it.
 *
 * Thread-safety: an open file may be read from several threads at once
 * (reads are pread(2) of an immutable descriptor; nothing is cached).
 */
#ifndef AMQ_PARQUET_H
#define AMQ_PARQUET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "amq/filter.h"
#include "amq/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Physical types, numbered as parquet.thrift's Type. */
typedef enum amq_pq_type {
    AMQ_PQ_BOOLEAN = 0,
    AMQ_PQ_INT32 = 1,
    AMQ_PQ_INT64 = 2,
    AMQ_PQ_INT96 = 3,
    AMQ_PQ_FLOAT = 4,
    AMQ_PQ_DOUBLE = 5,
    AMQ_PQ_BYTE_ARRAY = 6,
    AMQ_PQ_FIXED_LEN_BYTE_ARRAY = 7
} amq_pq_type;

/* The longest encoded key amq_pq_encode_key writes. */
#define AMQ_PQ_KEY_MAX 65536

typedef struct amq_pq_file amq_pq_file;

/* Where a parse failed: the byte offset in the file and what was wrong
 * (static text). */
typedef struct amq_pq_diag {
    uint64_t offset;
    const char *what;
} amq_pq_diag;

typedef struct amq_pq_column {
    const char *path; /* dotted path of the leaf, e.g. "a.b"         */
    amq_pq_type type;
    int32_t type_length; /* FIXED_LEN_BYTE_ARRAY's length; else 0      */
    int max_def, max_rep;
} amq_pq_column;

typedef struct amq_pq_chunk {
    int64_t values;       /* num_values (nulls included)                  */
    int32_t codec;        /* CompressionCodec: 0 none, 1 snappy, ...      */
    int64_t start;        /* first page (dictionary or data)              */
    int64_t bytes;        /* total_compressed_size                        */
    int64_t bloom_offset; /* -1: no Bloom filter                      */
    int32_t bloom_length; /* 0 when the writer did not say             */
} amq_pq_chunk;

/* Open a file (reads its footer only). diag may be NULL. */
amq_status amq_pq_open(const char *path, amq_pq_file **out, amq_pq_diag *diag);
/* The same over a whole file's bytes in memory (borrowed until close). */
amq_status amq_pq_open_memory(const void *buf, size_t len, amq_pq_file **out,
                              amq_pq_diag *diag);
void amq_pq_close(amq_pq_file *f); /* accepts NULL */

size_t amq_pq_columns(const amq_pq_file *f);
const amq_pq_column *amq_pq_column_at(const amq_pq_file *f, size_t c);
/* The leaf whose dotted path is name, or -1. */
int amq_pq_column_find(const amq_pq_file *f, const char *name);
size_t amq_pq_groups(const amq_pq_file *f);
int64_t amq_pq_group_rows(const amq_pq_file *f, size_t g);
int64_t amq_pq_rows(const amq_pq_file *f);
const char *amq_pq_created_by(const amq_pq_file *f); /* "" if absent */
uint64_t amq_pq_file_bytes(const amq_pq_file *f);
const amq_pq_chunk *amq_pq_chunk_at(const amq_pq_file *f, size_t g, size_t c);
/* The name of a codec ("snappy", ...; "codec-N" for unknown ones). */
const char *amq_pq_codec_name(int32_t codec);
const char *amq_pq_type_name(amq_pq_type t);

/* Chunk (g, c)'s Bloom filter bitset, read and checked (header fields,
 * a length that is a positive multiple of 32 inside the file). *bitset is
 * malloc'ed (free it); *len its bytes. AMQ_ERR_NOT_FOUND when the chunk
 * has none. */
amq_status amq_pq_bloom_read(const amq_pq_file *f, size_t g, size_t c,
                             uint8_t **bitset, size_t *len, amq_pq_diag *diag);
/* Does chunk (g, c) may hold the value of hash? *maybe is true when the
 * chunk has no Bloom filter (nothing excludes the value). */
amq_status amq_pq_probe(const amq_pq_file *f, size_t g, size_t c, uint64_t hash,
                        bool *maybe, amq_pq_diag *diag);

/* A key given as text, as the plain encoding of col's type (see above):
 * key[0..*len), key of AMQ_PQ_KEY_MAX bytes. */
amq_status amq_pq_encode_key(const amq_pq_column *col, const char *text,
                             size_t n, uint8_t *key, size_t *len);
/* Parquet's hash of an encoded value: XXH64, seed 0. */
uint64_t amq_pq_hash(const void *value, size_t len);

/* Every value of chunk (g, c) that a lookup could ask for, as its plain
 * encoding, to fn (which returns false to stop, ending with AMQ_OK):
 * the dictionary's entries and the values of the data pages that are not
 * dictionary-coded; nulls are skipped. A value may come more than once.
 * Reads pages of data page v1 or v2, encoded PLAIN or by dictionary, compressed
 * with none, snappy, gzip, zstd or lz4_raw; a flat (non-repeated) column. */
typedef bool (*amq_pq_value_fn)(void *ctx, const uint8_t *value, size_t len);
amq_status amq_pq_values(const amq_pq_file *f, size_t g, size_t c,
                         amq_pq_value_fn fn, void *ctx, amq_pq_diag *diag);

/* ---- adding filters (write.c) ---------------------------------------------- */

typedef struct amq_pq_filter_stats {
    uint64_t groups;    /* filters written (one per row group)          */
    uint64_t values;    /* distinct values they hold, in all            */
    uint64_t bytes;     /* their bitsets' bytes                         */
    double worst_bound; /* the largest certified bound among them        */
} amq_pq_filter_stats;

/* Write to path a copy of f with a split-block Bloom filter for column c
 * in every row group, at rate fpr (each sized by amq for the row group's
 * distinct values), replacing any it had; every other byte before the
 * footer is kept, so the pages and indexes are untouched. Readers that
 * use Parquet's filters (DuckDB, Arrow, Spark) use these. path may be f's
 * own file: it is written aside and renamed over it. Errors as
 * amq_pq_values, AMQ_ERR_INVALID (fpr outside (0, 1), no such column),
 * AMQ_ERR_IO (path cannot be written; nothing is left there). */
amq_status amq_pq_add_filters(const amq_pq_file *f, size_t c, double fpr,
                              const char *path, amq_pq_filter_stats *st,
                              amq_pq_diag *diag);

/* ---- routing: one maplet over many files' row groups (route.c) ----------- */

/* The distinct values of a column in every row group of files[0..nfiles)
 * (column cols[i] of file i), as (hash, group) pairs: groups numbered in
 * file order, then row group order; hashes as amq_pq_hash. */
typedef struct amq_pq_pairs {
    uint64_t *hash, *group;
    size_t n;
    uint64_t groups; /* row groups read */
} amq_pq_pairs;

/* Errors as amq_pq_values; *failed (may be NULL) is the file that failed
 * and nothing is kept. */
amq_status amq_pq_pairs_read(amq_pq_file *const *files, const size_t *cols,
                             size_t nfiles, amq_pq_pairs *p, size_t *failed,
                             amq_pq_diag *diag);
void amq_pq_pairs_free(amq_pq_pairs *p);
/* The value width of the routing maplet of `groups` row groups. */
unsigned amq_pq_route_value_bits(uint64_t groups);
/* The routing maplet of the pairs: a multiset quotient maplet
 * (maplet:op=max,v=amq_pq_route_value_bits,multiset=1) sized for them at
 * rate fpr, so amq_maplet_get_all of a key's hash returns every row group
 * holding it, and each other row group with probability at most its
 * amq_filter_fpr_bound (the strong maplet property, amq/maplet.h). Its
 * hasher is XXH64 with seed 0, so amq_maplet_get of a plain-encoded value's
 * bytes (the maplet hashes them) finds the same pairs. Errors
 * as amq_maplet_new and amq_maplet_put; AMQ_ERR_INVALID for no groups. */
amq_status amq_pq_route_build(const amq_pq_pairs *p, double fpr,
                              amq_filter **out, amq_diag *diag);

#ifdef __cplusplus
}
#endif

#endif
