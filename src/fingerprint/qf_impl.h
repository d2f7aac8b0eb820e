/*
 * qf_impl.h — the rank-and-select quotient filter (qf) and, in counting
 * mode, the counting quotient filter (cqf): the table, and what its files
 * share.
 *
 * Files: qf_block.h/.c  blocks, slots, word moves, rank and select;
 *        qf_codec.h     the cqf counter encoding of a group;
 *        qf_lock.h      the per-region locks of concurrent mode;
 *        qf_ops.c       insert, remove and lookup (one key or a batch);
 *        quotient.c     construction, merge, resize, enumeration;
 *        qf_frame.c     validation of loaded tables, the type descriptors
 *                       (whose callbacks are the functions declared below).
 *
 * Papers: Bender et al., "Don't thrash: how to cache your hash on flash"
 * (VLDB 2012) for the quotient filter; Pandey, Bender, Johnson, Patro, "A
 * general-purpose counting filter: making every bit count" (SIGMOD 2017) for
 * the rank/select metadata, the counter encoding and the per-region locks.
 * All are re-derived here; the code and the exact encoding are our own.
 *
 * Fingerprints. A 64-bit hash h becomes f = floor(h * N * 2^r / 2^64): the
 * quotient Q = f >> r is the high word of h*N (multiply-shift, so N need not
 * be a power of two) and the remainder R = f mod 2^r is the top r bits of the
 * low word. f is monotone in h, so "fingerprint order" is hash order, and
 * doubling N while dropping one remainder bit leaves every f unchanged:
 * resize needs no keys.
 *
 * Layout. T = N + E slots (E = min(N, 128) overflow slots past the last
 * home slot) in blocks of 64; block b is 17 + 8w bytes (w = slot width):
 *
 *   +--------+---------------+---------------+---------------------------+
 *   | off u8 | occupieds u64 | runends u64   | 64 slots x w bits, packed |
 *   +--------+---------------+---------------+---------------------------+
 *
 *   occupieds bit j : some key has quotient 64b + j
 *   runends bit j   : slot 64b + j ends a run
 *   off             : min(255, slots of block b used by runs of quotients
 *                     < 64b), the "offset"; 255 means "look back".
 *
 * The slot width w is r for qf and cqf; a maplet (src/maplet/mqf.h)
 * stores w = r + v bits, remainder above value (so slot order is remainder
 * order), up to 58 + 64 = 122 bits: slots wider than 64 bits are read and
 * written as two halves (slot_get2/slot_set2) and shifted in steps of at
 * most 63 bits; the fast paths serve widths up to 56 only.
 *
 * Invariants (checked in full on load, qf_frame.c):
 *   - the keys with quotient Q form one run; runs appear in quotient order
 *     and run Q starts at max(Q, end of the previous run): clusters have no
 *     holes, so the layout is a function of the stored multiset;
 *   - inside a run, groups of equal remainders in strictly increasing order;
 *     qf: a group is c copies of R; cqf: the counter encoding below;
 *   - slots outside every run hold 0; runends has one bit per run;
 *   - every offset equals min(255, recomputed offset).
 *
 * Rank/select. end(x) = first slot after the runs of quotients <= x (at
 * least 64*block(x)): take the block's offset o, count d occupied quotients
 * in [64b, x], and select the d-th run end at or after 64b + o. Run Q spans
 * [max(Q, end(Q-1)), end(Q)), both read from Q's own block. A slot i is
 * free iff end(i) <= i. Select in a word uses PDEP+TZCNT when the CPU has
 * BMI2 (checked at run time), else a portable byte scan; tests compare them.
 *
 * Updates open or close one slot at a time, and each is a word-level shift:
 * inserting a slot at P shifts the stretch [P, F) (F the first free slot)
 * up by one slot — per block, the w 64-bit words of the slots shifted by w
 * bits and the runends word by one bit, the top slot carried into the next
 * block — and adds one to the offsets of blocks (block(Q), block(F)]. A
 * removal shifts [P+1, S) down (S = the first slot after P that is free or
 * starts a run at its home) and subtracts one from the offsets below S.
 *
 * Fast paths (the common case at any load up to 95%): locate_block finds
 * run Q and r's place from Q's block words alone (two selects), and when
 * the free slot is in the same block, open_in_block shifts, sets the bits
 * and writes r with that block's words loaded once; no offset changes.
 * Anything else takes the general path (run_of, find_in_run, first_free,
 * open_slot). A query of a filter nobody updates concurrently answers most
 * absent keys from a test with few instructions that wait for the block
 * (the occupied bit and a compare of r against the block's slots, or
 * against run q's slots in one word: qf_ops.c, "the one-key query
 * kernels"), and only the others from locate_block. The hot operations
 * are compiled twice from the same inline code, once for any CPU and once
 * with POPCNT/BMI2 (chosen at run time).
 * AMQ_OPT_SCALAR turns off BMI2 and every fast path: the slot-by-slot
 * moves and general lookups are the reference, and the model tests run a
 * reference twin beside each filter and require identical bytes.
 *
 * cqf counter encoding (group of remainder x with count c, M = 2^r):
 *   c = 1: x            c = 2: x x
 *   c >= 3, x > 0: x [0] d_1..d_k x — digits of c-3 in base M-2, most
 *       significant first, written as symbols in 1..M-1 skipping x; the 0
 *       marker is present iff the first symbol exceeds x (a slot after x
 *       that is below x announces a counter, since remainders increase);
 *   c >= 3, x = 0: 0 d_1..d_k 0 0 — digits of c-3 in base M-1 as symbols
 *       1..M-1. The pair "0 0" after non-zero symbols never occurs in a
 *       later group (their 0 marker is followed by a non-zero symbol).
 *   k >= 1 and there are no leading zero digits, so the encoding is unique
 *   and c takes 2 + k (+1) slots: O(log c / r).
 *
 * Concurrent mode (AMQ_OPT_CONCURRENT or spec concurrent=1). The table is
 * cut into regions of QF_REGION_BLOCKS blocks, one spin lock each. Every
 * operation on quotient Q reads and writes only blocks at or after
 * block(Q) (run bounds come from Q's own block; a saturated offset looks
 * back, but only inside the locked window). It locks region(Q) and the
 * next region, in increasing order, and works inside that window of
 * 2 regions (>= 4096 slots past Q). If anything it must read or write lies
 * outside — a shift stretch past the window, or a saturated offset whose
 * look-back leaves it — it has changed nothing yet: it drops its locks,
 * takes every region lock in increasing order (the global fallback) and
 * starts again. Since a writer holds the lock of every region it touches
 * and a reader of every region it reads, and all locks are taken in
 * increasing order, operations are serialisable and deadlock-free. The
 * counters (items, distinct fingerprints, slots used) are shared out: each
 * region record holds, beside its lock, what operations on its quotients
 * added since the last fold, written under that lock, so an update touches
 * no line another core writes but its window's (a shared counter's line
 * moved between the cores on every call); a total is the base plus every
 * region's share. A share of the items stays within +-2^62 / regions and
 * the fast path needs a base of at most 2^64 - 1 - 2^62, so no total it
 * makes can pass 2^64 - 1; an update past either takes every lock, where
 * the total is exact, and folds the shares into the base. Queries take
 * the same locks, so they may run beside updates; merge, resize,
 * iteration and saving need the filter quiet.
 *
 * Failure modes: AMQ_ERR_FULL when the slots an insert needs would run past
 * the table (checked before anything moves); removes of absent keys
 * AMQ_ERR_NOT_FOUND; merges and resizes build aside and swap, so a failure
 * leaves the filter as it was. Loading validates everything above, so a
 * crafted frame with a valid checksum cannot make a query read out of bounds.
 */
#ifndef AMQ_SRC_FINGERPRINT_QF_IMPL_H
#define AMQ_SRC_FINGERPRINT_QF_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "amq/quotient.h"
#include "core/bits.h"
#include "core/obj.h"
#include "type/type.h"

#define QF_HDR 17u /* offset byte + occupieds + runends */
#define QF_OFF_SAT 255u
#define QF_MAX_GROUP 72u /* longest cqf group: 2 + 64 digits + marker */
#define QF_MIN_RBITS_CQF 2u
#define QF_PREFETCH 16       /* batch queries: keys prefetched ahead */
#define QF_INSERT_AHEAD 8    /* batch inserts: keys prefetched ahead */
#define QF_REGION_BLOCKS 64u /* concurrent mode: blocks per lock region */
#define QF_NOWHERE UINT64_MAX
#define QF_COLD __attribute__((noinline, cold))
/* Concurrent mode: a region's lock and its shares of the counters (added
 * since the last fold, modulo 2^64), written under the lock. */
enum { QF_ITEMS, QF_DISTINCT, QF_USED };
typedef struct qf_region {
    uint8_t lock;
    uint64_t share[3]; /* QF_ITEMS, QF_DISTINCT, QF_USED */
} qf_region;

/* Metadata bits per slot: the occupied and run-end bits, and an 8-bit
 * offset per 64 slots. */
#define QF_META_BITS (2.0 + 8.0 / 64.0)

struct amq_qf {
    amq__obj o; /* o.items: copies held; o.table_bytes: nblocks * bsize
                         (the owned block has 16 bytes of padding more) */
    uint8_t *data;
    uint64_t nslots;  /* N: home slots (quotients) */
    uint64_t tslots;  /* T = N + E */
    uint64_t nblocks; /* T / 64 */
    size_t bsize;     /* 17 + 8 * width */
    unsigned rbits;
    unsigned width; /* slot bits: rbits + vbits */
    unsigned vbits; /* value bits (maplets; 0 for qf and cqf) */
    uint64_t rmask;
    uint64_t wmask; /* 2^width - 1 (all ones from 64 bits on) */
    uint64_t vmask; /* 2^vbits - 1 */
    uint8_t mop;    /* maplet: its operator (amq_maplet_op); 0 otherwise */
    bool multiset;  /* maplet: one slot group per (key, value) */
    unsigned kbits; /* exact maplet: bits of its integer keys; else 0 */
    uint64_t fast_blocks; /* block-local fast paths serve blocks below */
    bool counting;
    bool use_pdep;
    bool scalar; /* AMQ_OPT_SCALAR: reference slot moves too */
    bool concurrent;
    qf_region *regions; /* concurrent mode: lock and counter shares */
    uint64_t nregions;
    uint64_t widenings; /* operations that took every lock (tests) */
    uint64_t distinct;  /* D: distinct fingerprints */
    uint64_t used;      /* slots in use */
};

/* The counters: a base each (o.items, distinct, used), plus in concurrent
 * mode the regions' shares (qf_lock.h adds to them). Loads and stores are
 * relaxed atomics, so a total may be read during updates. */
static inline uint64_t ctr_get(const uint64_t *c) {
    return __atomic_load_n(c, __ATOMIC_RELAXED);
}
static inline void ctr_set(uint64_t *c, uint64_t v) {
    __atomic_store_n(c, v, __ATOMIC_RELAXED);
}
static inline uint64_t *ctr_base(const amq_qf *f, int c) {
    amq_qf *m = (amq_qf *)f;
    return c == QF_ITEMS      ? &m->o.items
           : c == QF_DISTINCT ? &m->distinct
                              : &m->used;
}
/* Counter c's total: exact once the calls in flight are done. */
static inline uint64_t qf_total(const amq_qf *f, int c) {
    uint64_t t = ctr_get(ctr_base(f, c));
    if (f->regions != NULL)
        for (uint64_t r = 0; r < f->nregions; r++)
            t += ctr_get(&f->regions[r].share[c]);
    return t;
}
/* Every share into the base; the caller holds every lock or the filter is
 * quiet. */
static inline void qf_fold(amq_qf *f) {
    for (int c = QF_ITEMS; c <= QF_USED; c++) {
        uint64_t t = qf_total(f, c);
        for (uint64_t r = 0; f->regions != NULL && r < f->nregions; r++)
            ctr_set(&f->regions[r].share[c], 0);
        ctr_set(ctr_base(f, c), t);
    }
}

/* A table borrowed from a caller's buffer (a view) is read-only. */
static inline bool qf_is_view(const amq_qf *f) {
    return f->o.block.raw == NULL && f->o.table != NULL;
}

typedef struct group {
    uint64_t x, count, len;
} group;

/* ---- across the files ---------------------------------------------------- */

/* quotient.c: a zeroed filter of n home slots (a multiple of 64) of r-bit
 * remainders, reading `borrow` (read-only) when given. */
amq_status amq__qf_alloc(uint64_t n, unsigned r, bool counting,
                         const amq_options *opt, const uint8_t *borrow,
                         amq_qf **out);
/* The same with v value bits after each remainder (slots of r + v bits,
 * v <= 64; the maplet sets its mode fields itself). */
amq_status amq__qf_alloc_v(uint64_t n, unsigned r, unsigned v, bool counting,
                           const amq_options *opt, const uint8_t *borrow,
                           amq_qf **out);
/* The slots past the n home slots that runs may spill into (the tail E
 * of T = N + E): min(n, 128) unless a table asks for more. A qf table of
 * w-bit slots with a tail of `tail` slots (0: the default; else a
 * multiple of 64, at least the default, at most n), and the bytes it
 * takes. amq__qf_widen_tail gives f (not a view) a tail of `tail` slots,
 * its contents unchanged: a run may then reach past the old end. */
uint64_t amq__qf_default_tail(uint64_t n);
amq_status amq__qf_alloc_tail(uint64_t n, unsigned w, uint64_t tail,
                              const amq_options *opt, const uint8_t *borrow,
                              amq_qf **out);
amq_status amq__qf_table_bytes_tail(uint64_t n, unsigned w, uint64_t tail,
                                    size_t *out);
amq_status amq__qf_widen_tail(amq_qf *f, uint64_t tail);
/* quotient.c: n and r for capacity keys at fpr. */
amq_status amq__qf_size_for(uint64_t capacity, double fpr, uint64_t *n,
                            unsigned *r);
/* quotient.c: the shape checks and table size behind amq__qf_alloc. */
amq_status amq__qf_check_shape(uint64_t n, unsigned r, bool counting);
amq_status amq__qf_table_bytes(uint64_t n, unsigned w, size_t *out);
unsigned amq__qf_ceil_log2(uint64_t n);

/* qf_ops.c: f->o.contains for f's modes (set once they are); NULL for a
 * maplet's table (vbits > 0), whose type's own lookup then answers. */
void amq__qf_choose_kernel(amq_qf *f);

/* The callbacks of "qf" and "cqf" (type/type.h has each slot's contract),
 * over the amq_qf behind o; the maplet shares destroy, fpr_bound and
 * fingerprint. qf_ops.c: one copy more or fewer, the lookups (contains
 * is also the kernel of concurrent mode and of AMQ_OPT_SCALAR), and h's
 * fingerprint. quotient.c: freeing (locks and table too), the union in
 * place (built aside, then swapped) and the bound. */
amq_status amq__qf_add(amq__obj *o, uint64_t h);
amq_status amq__qf_add_batch(amq__obj *o, const uint64_t *h, size_t n,
                             size_t *done);
amq_status amq__qf_remove(amq__obj *o, uint64_t h);
bool amq__qf_contains(const amq__obj *o, uint64_t h);
/* One copy of remainder r (< 2^width) at quotient q (< N) in or out of a
 * qf table: the update above without the hash (eqf.c, whose slots hold
 * codes it computes itself). */
amq_status amq__qf_update_qr(amq_qf *f, uint64_t q, uint64_t r, bool add);
void amq__qf_contains_batch(const amq__obj *o, const uint64_t *h, size_t n,
                            uint8_t *out);
amq_status amq__qf_count(const amq__obj *o, uint64_t h, uint64_t *out);
uint64_t amq__qf_fingerprint(const amq__obj *o, uint64_t h);
void amq__qf_destroy(amq__obj *o);
amq_status amq__qf_union(amq__obj *dst, const amq__obj *src, amq__merge_op op);
double amq__qf_fpr_bound(const amq__obj *o);
/* The items held: the base and, in concurrent mode, the regions' shares. */
uint64_t amq__qf_items(const amq__obj *o);

/* quotient.c: a new filter holding the multiset union of a and b (same
 * mode, N and r, else AMQ_ERR_INCOMPATIBLE), with opt's allocator and
 * modes; AMQ_ERR_FULL, AMQ_ERR_OVERFLOW, AMQ_ERR_NOMEM (*out = NULL).
 * amq_qf_merge (filter/typed_quotient.c) wraps it in a filter. */
amq_status amq__qf_merge(const amq_qf *a, const amq_qf *b,
                         const amq_options *opt, amq_qf **out);

/* Merges, resizes and the maplet's rebuilds append groups in fingerprint
 * order into an empty table: the next slot, and the run it is in
 * (qf_block.h: writer_enter). */
typedef struct qf_writer {
    uint64_t pos, q;
    bool run;
} qf_writer;

/* quotient.c, for tables built in fingerprint order: end the last run and
 * set every block's offset; the options that give a new table f's
 * allocator and modes; adopt moves g's table, shape and counters into f
 * and frees g. */
void amq__qf_build_finish(amq_qf *f, const qf_writer *w);
void amq__qf_opts_like(const amq_qf *f, amq_options *opt);
void amq__qf_adopt(amq_qf *f, amq_qf *g);

/* qf_frame.c: every invariant of a table (counters recomputed); r gives
 * the diagnostic (NULL: status only). validate_with checks each run
 * [rs, re) with `run` (which counts items, distinct and used slots), and
 * corrupt reports a bad slot at its block in the frame. */
struct amq__rd;
amq_status amq__qf_validate(amq_qf *f, const struct amq__rd *r);
typedef amq_status (*amq__qf_run_check)(amq_qf *f, uint64_t rs, uint64_t re,
                                        const struct amq__rd *r);
amq_status amq__qf_validate_with(amq_qf *f, const struct amq__rd *r,
                                 amq__qf_run_check run);
amq_status amq__qf_corrupt(const amq_qf *f, const struct amq__rd *r,
                           const char *what, uint64_t at);
/* qf_frame.c: the home slots a spec names (q=LOG2 or slots=N, a multiple
 * of 64, not both); *found = false when it names none. */
struct amq__spec;
amq_status amq__qf_spec_slots(struct amq__spec *spec, uint64_t *n, bool *found,
                              amq_diag *diag);

/* qf_frame.c, for the types built on a qf table (aqf.c): a table from a
 * spec's q= (or slots=) and r=, or sized for capacity keys at fpr (name
 * is the type's, for the messages; diag says what is wrong); the spec's
 * resolved shape ("q=..,r=.."), the family's curve (x bits per key ->
 * fpr, or the inverse), the 24-byte parameter block of a table, and a
 * table read back from one (the block at r, validated in full, the
 * table the first bytes of payload: all of it unless `prefix`). */
#define AMQ__QF_PARAMS_LEN 24
/* The pieces of amq__qf_create_table: the home slots *n and slot bits
 * *bits a spec names (q= or slots=, and the key `key` within its range:
 * *given) or a target gives (bits ceil(log2(1/fpr)), at least key->min);
 * and a table of n w-bit slots, with diag saying why not. */
typedef struct amq__qf_bits {
    const char *name;
    unsigned min, max;
} amq__qf_bits;
amq_status amq__qf_shape(struct amq__spec *spec, uint64_t capacity, double fpr,
                         const amq__qf_bits *key, const char *name, uint64_t *n,
                         unsigned *bits, bool *given, amq_diag *diag);
amq_status amq__qf_alloc_diag(uint64_t n, unsigned w, bool counting,
                              const amq_options *opt, amq_qf **out,
                              amq_diag *diag);
amq_status amq__qf_create_table(struct amq__spec *spec, uint64_t capacity,
                                double fpr, bool counting, const char *name,
                                const amq_options *opt, amq_qf **out,
                                amq_diag *diag);
size_t amq__qf_describe(const amq__obj *o, char *buf, size_t cap);
double amq__qf_curve(double x, bool inverse);
void amq__qf_params_write(const amq_qf *f, amq__wr *w);
amq_status amq__qf_load_table(amq__rd *r, bool counting, const char *name,
                              const uint8_t *payload, size_t len, bool prefix,
                              bool view, const amq_options *opt, amq_qf **out);
/* The same for a table with a tail of `tail` slots (amq__qf_alloc_tail;
 * the caller has checked it). */
amq_status amq__qf_load_table_tail(amq__rd *r, const char *name,
                                   const uint8_t *payload, size_t len,
                                   uint64_t tail, bool view,
                                   const amq_options *opt, amq_qf **out);

/* eqf.c: an expandable filter (type "eqf") holding what the qf q holds,
 * each remainder a fingerprint of its length, with the length plan for
 * later keys that keeps the bound under target (docs/structures.md,
 * "Expandable quotient filter"); q is not changed. AMQ_ERR_INVALID for a
 * cqf, a maplet's table or a concurrent qf, AMQ_ERR_OVERFLOW for r > 54,
 * AMQ_ERR_NOMEM. */
amq_status amq__eqf_from_qf(const amq_qf *q, double target,
                            const amq_options *opt, amq__obj **out);

/* For tests. qf_block.c: select in a word, portable and PDEP, and whether
 * the CPU has BMI2. qf_frame.c: a full invariant check of a live filter.
 * quotient.c: operations that took every lock; the raw table. */
uint64_t amq__qf_select64_scalar(uint64_t x, unsigned k);
uint64_t amq__qf_select64_pdep(uint64_t x, unsigned k);
bool amq__qf_have_pdep(void);
amq_status amq__qf_check(amq_qf *f);
uint64_t amq__qf_widenings(const amq_qf *f);
const uint8_t *amq__qf_table(const amq_qf *f, size_t *len);

#endif
