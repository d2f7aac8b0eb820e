/*
 * colors.h — colour classes (colors.c): the distinct sets of experiments
 * that k-mers occur in, numbered, as Mantis stores them (Pandey, Almodaresi,
 * Bender, Ferdman, Johnson, Patro 2018). A k-mer index maps each k-mer to
 * its class; the classes are far fewer than the k-mers, so a set of any
 * number of experiments costs a class id per k-mer plus the table.
 *
 * In memory and on disk a class is its experiment ids, increasing, as
 * LEB128 varints of the first id and then the gaps. The file (IDX.classes
 * beside the index IDX), all integers little-endian:
 *
 *   "AMQCLS1\n"   magic, 8 bytes
 *   u64 E         experiments (every id is below E)
 *   u64 C         classes
 *   u64 P         pool bytes
 *   u64 off[C+1]  where each class starts in the pool (off[0] = 0,
 *                 increasing, off[C] = P)
 *   u8  pool[P]   the classes, one after another
 *   u64 check     XXH3 (seed 0) of every byte before it
 *
 * A reader accepts a file only if every class decodes, within its bytes,
 * to one or more strictly increasing ids below E.
 */
#ifndef AMQ_TOOLS_COLORS_H
#define AMQ_TOOLS_COLORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse.h"

typedef struct color_table {
    uint64_t experiments, classes;
    uint64_t *off; /* classes + 1 offsets into pool */
    uint8_t *pool;
    size_t pool_len, off_cap, pool_cap;
    /* building only: class id + 1 by the hash of its bytes (0: empty) */
    uint64_t *slot, *slot_hash;
    size_t slots;
} color_table;

/* An empty table for experiments 0..E-1; false when out of memory. */
bool color_init(color_table *t, uint64_t experiments);
void color_free(color_table *t);

/* The id of the class of ids[0..n) (n >= 1, strictly increasing, below
 * E), added if new; UINT64_MAX when out of memory. */
uint64_t color_add(color_table *t, const uint32_t *ids, size_t n);

/* The ids of class c into out (room for E of them, or for as many as
 * the pool has bytes: an id takes one byte or more); their number. */
size_t color_ids(const color_table *t, uint64_t c, uint32_t *out);

/* The file's bytes into *buf (malloc'ed), and their length; false when
 * out of memory. */
bool color_encode(const color_table *t, uint8_t **buf, size_t *len);

/* Read a file's bytes into t (a copy: buf may go), or false with err
 * naming what is wrong. */
bool color_parse(const uint8_t *buf, size_t len, color_table *t,
                 char err[PARSE_ERR_MAX]);

#endif
