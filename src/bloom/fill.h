/*
 * fill.h — adding a batch of keys to a filter that writes one block per
 * key (the blocked and split-block Bloom filters), on the build's threads.
 *
 * The batch is cut by block, not by key: part p of P owns the blocks
 * [p B / P, (p + 1) B / P) and adds every key of the batch whose block it
 * owns, so no two parts write one block and none needs an atomic
 * operation against another. An OR of bits does not depend on the order
 * of the keys, so the table is the one the key-by-key loop writes, for
 * every P. Each part reads the whole batch (a multiply per key) and writes
 * its share; the block of a key it owns is asked for AMQ__FILL_AHEAD owned
 * keys before it is written, so the writes' misses overlap.
 *
 * P is amq__par_workers(n) (core/par.h): 1 outside a build's thread scope
 * or for a small batch, so a caller's own amq_filter_add_batch stays on
 * its thread.
 *
 * The filter instantiates AMQ__FILL with its own block_of and set (both
 * inlined): set(filter, block, h) must write only the given block. The
 * filter's struct has the fields the batch uses: `mut` (its writable
 * table), `nblocks`, `tally` (concurrent mode's counts, core/tally.h, or
 * NULL) and the object header `o`.
 */
#ifndef AMQ_SRC_BLOOM_FILL_H
#define AMQ_SRC_BLOOM_FILL_H

#include <stddef.h>
#include <stdint.h>

#include "core/bits.h"
#include "core/obj.h"
#include "core/par.h"
#include "core/tally.h"

#define AMQ__FILL_AHEAD 16
#define AMQ__FILL_CHUNK 2048

/* The parts a batch of n keys over `blocks` blocks is cut into. */
static inline unsigned amq__fill_parts(size_t n, uint64_t blocks) {
    unsigned p = amq__par_workers(n);
    return (uint64_t)p > blocks ? 1 : p;
}

/* n more adds counted: in concurrent mode on this thread's stripe of the
 * tally, else in the object's count. */
static inline void amq__fill_count(amq__tally *t, uint64_t *items, uint64_t n) {
    if (t != NULL)
        amq__tally_add(t, 0, n);
    else
        *items += n;
}

/* NAME_part(ctx, part, worker), part `part` of `c->parts` for amq__par_for,
 * and NAME_add_batch, the type's add_batch (every key in, never failing);
 * FT the filter's type, WORD its table's word type, WORDS a block's words,
 * BLOCK_OF(f, h) and SET(f, block, h) its own. A chunk of the batch is
 * first cut down to the part's keys without a branch (which of two parts
 * owns a key is a coin toss no predictor learns), then written with the
 * blocks asked for ahead. */
#define AMQ__FILL(NAME, FT, WORD, WORDS, BLOCK_OF, SET)                        \
    typedef struct NAME##_job {                                                \
        FT *f;                                                                 \
        WORD *table;                                                           \
        uint64_t blocks;                                                       \
        const uint64_t *h;                                                     \
        size_t n;                                                              \
        unsigned parts;                                                        \
    } NAME##_job;                                                              \
                                                                               \
    static void NAME##_part(void *ctx, size_t part, unsigned worker) {         \
        const NAME##_job *c = ctx;                                             \
        FT *f = c->f;                                                          \
        WORD *table = c->table;                                                \
        uint64_t lo = c->blocks * part / c->parts,                             \
                 span = c->blocks * (part + 1) / c->parts - lo;                \
        uint64_t mine[AMQ__FILL_CHUNK];                                        \
        (void)worker;                                                          \
        for (size_t at = 0; at < c->n; at += AMQ__FILL_CHUNK) {                \
            size_t end = c->n - at < AMQ__FILL_CHUNK ? c->n                    \
                                                     : at + AMQ__FILL_CHUNK,   \
                   k = 0;                                                      \
            for (size_t i = at; i < end; i++) {                                \
                mine[k] = c->h[i];                                             \
                k += BLOCK_OF(f, c->h[i]) - lo < span;                         \
            }                                                                  \
            for (size_t i = 0; i < k && i < AMQ__FILL_AHEAD; i++)              \
                amq__prefetch_w(table +                                        \
                                (size_t)BLOCK_OF(f, mine[i]) * (WORDS));       \
            for (size_t i = 0; i < k; i++) {                                   \
                if (i + AMQ__FILL_AHEAD < k)                                   \
                    amq__prefetch_w(                                           \
                        table +                                                \
                        (size_t)BLOCK_OF(f, mine[i + AMQ__FILL_AHEAD]) *       \
                            (WORDS));                                          \
                SET(f, table + (size_t)BLOCK_OF(f, mine[i]) * (WORDS),         \
                    mine[i]);                                                  \
            }                                                                  \
        }                                                                      \
    }                                                                          \
                                                                               \
    static amq_status NAME##_add_batch(amq__obj *o, const uint64_t *h,         \
                                       size_t n, size_t *done) {               \
        FT *f = (FT *)o;                                                       \
        unsigned parts = amq__fill_parts(n, f->nblocks);                       \
        NAME##_job job = {f, f->mut, f->nblocks, h, n, parts};                 \
        amq__par_for(parts, parts, NAME##_part, &job);                         \
        amq__fill_count(f->tally, &f->o.items, n);                             \
        *done = n;                                                             \
        return AMQ_OK;                                                         \
    }

#endif
