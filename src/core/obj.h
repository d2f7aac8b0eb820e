/*
 * obj.h — the header every structure object starts with.
 *
 *   struct amq_bloom {            struct amq_xor {
 *       amq__obj o;   ◄─────────── the same first member in every structure
 *       ...own fields...              ...own fields...
 *   };                            };
 *
 * It holds what every structure has: its allocator, its item count, its
 * table (the bytes a single-table structure queries and saves), the bytes
 * of all its tables, its own size (so it can be freed without knowing its
 * type) and its variant (e.g. the fingerprint width of a xor filter, chosen
 * by the spec name it was created from). The generic filter layer reads
 * items, size and payload from here, and frees a structure with
 * amq__obj_free unless its type says otherwise.
 *
 * `contains` is the structure's one-key query for its current shape and
 * CPU: a structure with specialised kernels (one per fingerprint width,
 * layout or instruction set) picks one whenever its shape is set (create,
 * build, load, growth, resize), so a query pays no switch on those; the
 * generic layer calls it directly and gives the type's contains callback
 * to an object that chose none.
 *
 * Invariants: table is NULL or points at table_bytes readable bytes; when
 * block.raw is not NULL the structure owns the table (block.ptr == table),
 * else it is borrowed (a view of a caller's buffer) or absent.
 */
#ifndef AMQ_SRC_CORE_OBJ_H
#define AMQ_SRC_CORE_OBJ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/mem.h"

/* Tables are cache-line aligned: one block per line for the blocked
 * filters, and an mmap'ed frame's payload is 64-byte aligned too. */
#define AMQ__TABLE_ALIGN 64

typedef struct amq__obj amq__obj;

/* A one-key query: no false negatives, the type's answer for hash h. */
typedef bool (*amq__contains_fn)(const amq__obj *o, uint64_t h);

struct amq__obj {
    amq__contains_fn contains; /* NULL until chosen (see above)          */
    amq__mem mem;
    const void *variant;
    uint64_t items;
    const void *table;
    size_t table_bytes;
    size_t self_bytes;
    amq__block block;
};

/* A zeroed object of self_bytes (>= sizeof(amq__obj)) whose header holds
 * opt's allocator and self_bytes. AMQ_ERR_NOMEM. */
amq_status amq__obj_new(size_t self_bytes, const amq_options *opt, void **out);
/* The same with an allocator already resolved (a part of a larger
 * structure shares its owner's). */
amq_status amq__obj_new_in(size_t self_bytes, const amq__mem *mem, void **out);

/* Give o its table of `bytes`: zeroed and owned (returned in *wr), or, when
 * borrow is not NULL, the caller's bytes read-only (*wr = NULL).
 * AMQ_ERR_NOMEM / AMQ_ERR_OVERFLOW leave o as it was. */
amq_status amq__obj_table(amq__obj *o, size_t bytes, const void *borrow,
                          void **wr);

/* The table from a frame's payload: borrowed for a view, else copied. */
amq_status amq__obj_table_from(amq__obj *o, const void *payload, size_t len,
                               bool view, void **wr);

/* Release the owned table (if any) and the object. NULL is accepted. */
void amq__obj_free(amq__obj *o);

/* The widest query kernel the CPU runs (cpu.c, under its test ceiling):
 * avx512, else avx2, else portable; portable under AMQ_OPT_SCALAR
 * (`scalar`). A NULL kernel is skipped. */
amq__contains_fn amq__obj_pick(bool scalar, amq__contains_fn portable,
                               amq__contains_fn avx2, amq__contains_fn avx512);

#endif
