/*
 * vqf.c — the vector quotient filter (Pandey, Conway, Durie, Bender,
 * Farach-Colton, Johnson, "Vector Quotient Filters: Overcoming the
 * Time/Space Trade-Off in Filter Design", SIGMOD 2021).
 *
 * A table of B blocks, each one 64-byte cache line holding a small
 * quotient filter: a pocket (pocket.h) of S remainder slots over Q lists.
 * A key's 64-bit hash h gives two blocks, one list and one remainder:
 *
 *   h:  [ high 32 ──► b1 = reduce(h >> 32, B) ][ low 32 = t ]
 *       tag = (t Q 2^R) >> 32, q = tag >> R, r = its low R bits
 *       b2 = (H(tag) - b1) mod B,   H(tag) = reduce(tag * phi mod 2^64 >> 32, B)
 *
 * b2 depends on b1 and the tag only (partial-key, as the cuckoo filter's
 * alternate bucket), and b -> H - b is an involution: two keys with one
 * tag whose blocks meet share both blocks, so a remove that takes the
 * other key's copy of the tag leaves that key its own copy where it looks.
 * (With b2 from the full hash a remove could take the copy of a key that
 * has only one of its blocks in common, which then went missing.)
 *
 *   R = 8:  S = 48 slots, Q = 80 lists      R = 16: S = 28 slots, Q = 36 lists
 *   +----------------+--------------------+  +--------+-----------------------+
 *   | pocket 128 bit | 48 x 8-bit slots   |  | 64 bit | 28 x 16-bit slots     |
 *   +----------------+--------------------+  +--------+-----------------------+
 *     bytes 0-15       bytes 16-63              0-7      8-63 (little-endian)
 *
 * A key lives in list q of b1 or of b2 as remainder r. Insert (power of two
 * choices): into b1 if it is less than 3/4 full (the paper's shortcut),
 * else into the less full of b1 and b2 (b1 on a tie); AMQ_ERR_FULL,
 * changing nothing, when both are full (the shortcut spares the second
 * block's cache miss on most inserts; see add_in). In a block, r is
 * appended to its list: the slots after it move up one and one 0 goes
 * into the pocket. A query checks list q of both blocks: compare r against all
 * slots at once (one vector compare of the line) and keep the matches in
 * the list's slot range (two selects on the pocket). Remove takes one copy
 * from b1 or, failing that, b2. Duplicates are stored as copies.
 *
 * Invariants: 1 <= B < 2^32; every pocket has exactly Q ones; slots past a
 * block's fill are 0; the fills sum to `items`. (Any such table is valid:
 * load checks exactly this.)
 *
 * False positives: fpr_bound() = 1 - (1 - 2 pb pqr)^items, pb and pqr the
 * largest probabilities of one block and one tag, about 2 (S / Q) load /
 * 2^R: 0.43% at R = 8 and the design load 92% (11.6 bits per key),
 * 2.0e-5 at R = 16 and 86% (21.3 bits per key). Derivation:
 * docs/structures.md §"Vector quotient filter", Bound. Sized from
 * (capacity, fpr), the smaller of the two layouts that meets fpr at
 * capacity is built (shape_for; with the cuckoo filter's margin for small
 * tables, 1.5 sqrt(n) + 8 slots).
 *
 * Speed: a query reads two cache lines, independent of each other; the
 * kernels (amq__obj.contains) compare with AVX-512 (one compare of the
 * whole line) or AVX2 (two), select by PDEP only on a block with a lane
 * equal to the remainder; the slot-by-slot loop is the reference
 * (AMQ_OPT_SCALAR) they are tested against. An insert (chosen with the
 * kernel: a function per instruction set and layout, the shape constant
 * in each) branches only on the shortcut and the full test: a fill is one
 * LZCNT, the list's end one select, the slots move with one byte permute
 * (VBMI) or a qword shift with carry (AVX-512BW) or four 128-bit lane
 * moves (AVX2) and two blends (pocket.h), the pocket takes its 0 in the
 * same vector register and store on AVX-512 (amq__pk_ins_z: about ten
 * vector instructions where the PDEP form takes some twenty that all wait
 * for the block's line) and by PDEP on AVX2;
 * the word loop (amq__pk_open_slot) and the shift-and-mask pocket update
 * are the reference (AMQ_OPT_SCALAR), and test_pocket holds every path
 * to the same bytes. Remove is the reference code on every CPU.
 *
 * Concurrent mode (AMQ_OPT_CONCURRENT, or concurrent=1 in the spec): a
 * spin lock byte per block, in lines after the structure (56 locks and a
 * share of the item count a line), so the blocks and the frame are those
 * of the plain mode (the mode is not saved: a loaded filter takes it from
 * its load options).
 *   insert  locks b1 and reads its fill under that lock; with the shortcut
 *           it puts r in b1 holding b1 alone. Else it adds b2's lock:
 *           after b1's if b2 > b1; if b2 < b1 it lets b1 go and takes b2
 *           then b1, and decides again (shortcut included) on what both
 *           blocks hold then, as a one-thread insert would.
 *   remove  the same: b1 alone if b1 has a copy, else both (b1 looked at
 *           again if it was let go).
 *   query   both blocks locked, lower index first, around the kernel.
 * Locks are taken in increasing block order and nobody holds more than
 * two, so there is no deadlock; each call is atomic (the end state and
 * every answer are those of some sequential order of the calls). Queries
 * lock because a reader beside a writer could see a block halfway through
 * a slot move (a held key read as absent), and the two blocks one after
 * the other are not enough either: a key K held in b2 only, a query finds
 * b1 without it, then K' with K's tag and the blocks swapped (b1' = b2)
 * is added to b2' = b1 and removed again, from its b1', taking K's copy
 * there; the query then finds b2 without it, though K was held all along.
 * An insert or remove counts itself in the share of b1's lock line, with
 * an atomic add on the line it holds anyway: one counter for all, whose
 * line every call wrote, made two threads slower than one. The count is
 * the base and every line's share. Saving, describe and fpr_bound need
 * the calls done. Cost: one lock (two for a query, or an insert past the
 * shortcut) a call and 8/7 bytes a block; the plain mode's kernels are unchanged, the
 * concurrent ones chosen at creation beside them.
 *
 * Failure modes: construction fails cleanly (bad arguments, overflow,
 * allocation); add may return AMQ_ERR_FULL (both blocks full) with the
 * filter unchanged; removing a key never added may remove another key's
 * remainder (a false-positive delete, as in every fingerprint filter).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#define VQF_X86 1
/* Code that may use PDEP/TZCNT/LZCNT/POPCNT (chosen at run time). */
#define VQF_BMI __attribute__((flatten, target("bmi,bmi2,popcnt,lzcnt")))
#else
#define VQF_BMI
#endif

#include "amq/dynamic.h"
#include "core/fpr.h"
#include "core/mem.h"
#include "core/spin.h"
#include "type/type.h"
#include "fingerprint/lines.h"
#include "fingerprint/pocket.h"

#define LINE 64
#define MAX_BLOCKS UINT64_C(0xffffffff)
#define AHEAD 16 /* batch: keys between a prefetch and its use     */
#define TAG_MUL 0x9e3779b97f4a7c15ULL

/* The two layouts. */
typedef struct vqf_shape {
    unsigned r;     /* remainder bits                                   */
    unsigned slots; /* S                                                */
    unsigned lists; /* Q                                                */
    unsigned md;    /* pocket bytes (the slots follow)                  */
    double load;    /* design load (amq/dynamic.h)                      */
} vqf_shape;

static const vqf_shape SHAPE8 = {8, 48, 80, 16, AMQ_VQF_LOAD8};
static const vqf_shape SHAPE16 = {16, 28, 36, 8, AMQ_VQF_LOAD16};

static const vqf_shape *shape_of(unsigned r) {
    return r == 8 ? &SHAPE8 : r == 16 ? &SHAPE16 : NULL;
}

struct amq_vqf {
    amq__obj o;        /* o.items: keys held; o.table: the blocks      */
    const uint8_t *rd; /* what queries read                            */
    uint8_t *wr;       /* the same when writable; NULL for a view      */
    uint64_t nblocks;  /* B                                            */
    uint64_t span;     /* Q 2^R: (q, r) values                         */
    const vqf_shape *s;
    /* the insert for the layout and the CPU, chosen with the kernel */
    amq_status (*add)(amq_vqf *f, uint64_t h);
    /* concurrent mode: the kernel that reads the blocks under their locks */
    amq__contains_fn query;
    struct vqf_locks *locks; /* concurrent mode: a lock per block; or NULL */
};

/* Concurrent mode: the locks of 56 blocks and a share of the item count
 * (added since creation, modulo 2^64) in one line. */
#define LOCKS_A_LINE 56
typedef struct vqf_locks {
    _Alignas(64) uint8_t lock[LOCKS_A_LINE];
    uint64_t items;
} vqf_locks;

static uint64_t lock_lines(uint64_t blocks) {
    return (blocks + LOCKS_A_LINE - 1) / LOCKS_A_LINE;
}

/* ---- concurrent mode: a lock per block ------------------------------------ */

/* Block b's lock (core/spin.h): acquire and release order the block's
 * bytes between holders. */
static inline void blk_lock(const amq_vqf *f, uint64_t b) {
    amq__spin_lock(&f->locks[b / LOCKS_A_LINE].lock[b % LOCKS_A_LINE]);
}

static inline void blk_unlock(const amq_vqf *f, uint64_t b) {
    amq__spin_unlock(&f->locks[b / LOCKS_A_LINE].lock[b % LOCKS_A_LINE]);
}

/* Both of a key's blocks, the lower index first (once if they are one). */
static inline void pair_lock(const amq_vqf *f, uint64_t a, uint64_t b) {
    blk_lock(f, a < b ? a : b);
    if (a != b)
        blk_lock(f, a < b ? b : a);
}

static inline void pair_unlock(const amq_vqf *f, uint64_t a, uint64_t b) {
    blk_unlock(f, a);
    if (a != b)
        blk_unlock(f, b);
}

/* b2 added to a lock already held on b1: b2 after b1 is the order;
 * before it, b1 is dropped and both are taken again. So b1 may have
 * changed in between when b2 < b1. */
static inline void pair_widen(const amq_vqf *f, uint64_t b1, uint64_t b2) {
    if (b2 < b1) {
        blk_unlock(f, b1);
        pair_lock(f, b1, b2);
    } else if (b2 != b1) {
        blk_lock(f, b2);
    }
}

/* Concurrent mode: count one key more (v = 1) or less (v = -1) in the
 * share of b's lock line, whose lock the caller holds. */
static inline void items_add(amq_vqf *f, uint64_t b, uint64_t v) {
    __atomic_fetch_add(&f->locks[b / LOCKS_A_LINE].items, v, __ATOMIC_RELAXED);
}

/* The keys held: the base and, in concurrent mode, every line's share. */
static uint64_t items_of(const amq__obj *o) {
    const amq_vqf *f = (const amq_vqf *)o;
    uint64_t n = o->items;
    for (uint64_t i = 0; f->locks != NULL && i < lock_lines(f->nblocks); i++)
        n += __atomic_load_n(&f->locks[i].items, __ATOMIC_RELAXED);
    return n;
}

/* ---- a key's place ------------------------------------------------------ */

typedef struct vqf_key {
    uint64_t b1, b2;
    unsigned q, r;
} vqf_key;

/* b2 from b1 and the tag: (H - b1) mod B, b1 < B. */
static inline uint64_t second_block(uint64_t b1, uint64_t tag,
                                    uint64_t nblocks) {
    uint64_t H =
        amq__reduce32((uint32_t)((tag * TAG_MUL) >> 32), (uint32_t)nblocks);
    return H >= b1 ? H - b1 : H - b1 + nblocks;
}

/* w: the remainder bits, a constant in the kernels. */
static inline vqf_key key_at(const amq_vqf *f, uint64_t h, unsigned w) {
    vqf_key k;
    uint64_t tag = ((h & 0xffffffffu) * f->span) >> 32;
    k.q = (unsigned)(tag >> w);
    k.r = (unsigned)(tag & ((1u << w) - 1));
    k.b1 = amq__reduce32((uint32_t)(h >> 32), (uint32_t)f->nblocks);
    k.b2 = second_block(k.b1, tag, f->nblocks);
    return k;
}

static inline vqf_key key_of(const amq_vqf *f, uint64_t h) {
    return key_at(f, h, f->s->r);
}

/* ---- a block ------------------------------------------------------------ */

static inline amq__u128 md_get(const uint8_t *blk, unsigned r) {
    if (r == 16)
        return amq__get_u64(blk);
    return (amq__u128)amq__get_u64(blk) |
           ((amq__u128)amq__get_u64(blk + 8) << 64);
}

static inline void md_put(uint8_t *blk, unsigned r, amq__u128 md) {
    amq__put_u64(blk, amq__pk_lo(md));
    if (r == 8)
        amq__put_u64(blk + 8, amq__pk_hi(md));
}

static inline unsigned slot_get(const uint8_t *blk, unsigned r, unsigned i) {
    return r == 8 ? blk[16 + i] : amq__get_u16(blk + 8 + 2 * i);
}

static inline void slot_put(uint8_t *blk, unsigned r, unsigned i, unsigned v) {
    if (r == 8)
        blk[16 + i] = (uint8_t)v;
    else
        amq__put_u16(blk + 8 + 2 * i, (uint16_t)v);
}

/* bmi: compiled for BMI2/LZCNT (the kernels and the *_bmi copies of the
 * updates), see pocket.h. */
/* Values held. The pocket is exactly Q + S bits (128 or 64) and its Q-th
 * one ends the last list, so the bits above that one are the S - fill
 * empty slots: S minus the top word's leading zeros (the top word holds
 * ones: Q > 64 at R = 8). One LZCNT. */
AMQ__PK_INLINE unsigned fill_bmi(amq__u128 md, const vqf_shape *s, bool bmi) {
    uint64_t top = s->r == 8 ? amq__pk_hi(md) : (uint64_t)md;
    return s->slots - 63 + amq__pk_hibit(top, bmi);
}

static inline unsigned fill_of(amq__u128 md, const vqf_shape *s) {
    return fill_bmi(md, s, false);
}

AMQ__PK_INLINE void list_range(amq__u128 md, const vqf_shape *s, unsigned q,
                               bool bmi, unsigned *lo, unsigned *hi) {
    if (s->r == 8)
        amq__pk_range128(md, q, bmi, lo, hi);
    else
        amq__pk_range64((uint64_t)md, q, bmi, lo, hi);
}

static inline const uint8_t *block_at(const amq_vqf *f, uint64_t b) {
    return f->rd + (size_t)b * LINE;
}

/* The reference: the list's slots one by one. */
static bool block_has_ref(const amq_vqf *f, const uint8_t *blk, unsigned q,
                          unsigned r) {
    unsigned lo, hi, w = f->s->r;
    list_range(md_get(blk, w), f->s, q, false, &lo, &hi);
    for (unsigned i = lo; i < hi; i++)
        if (slot_get(blk, w, i) == r)
            return true;
    return false;
}

/* r appended to list q of a block with room whose pocket is md: after
 * the list's end (its q-th one, at slot end - q), one select. isa: the
 * code that opens the slot (pocket.h). */
AMQ__PK_INLINE void block_put(const vqf_shape *s, uint8_t *blk, amq__u128 md,
                              unsigned q, unsigned r, unsigned isa) {
    unsigned w = s->r, bytes = w / 8;
    bool bmi = isa != AMQ__PK_PORTABLE;
    unsigned end = w == 8 ? amq__pk_sel128w(md, q, bmi)
                          : amq__pk_sel64((uint64_t)md, q, bmi);
    /* the block has room, so its last slot is empty and may be dropped */
#if defined(AMQ__HAVE_PK_VEC)
    /* AVX-512: the pocket's 0 put in with vector code too, in the same
     * store (the PDEP form below waits on more instructions) */
    if (isa == AMQ__PK_VBMI) {
        amq__pk_open_ins_vbmi(blk, s->md + (end - q) * bytes, LINE, bytes, r,
                              end, s->md / 8);
        return;
    }
    if (isa == AMQ__PK_AVX512) {
        amq__pk_open_ins512(blk, s->md + (end - q) * bytes, LINE, bytes, r, end,
                            s->md / 8);
        return;
    }
#endif
    amq__pk_open(blk, LINE, s->md + (end - q) * bytes, LINE, bytes, r, isa);
    md = w == 8 ? amq__pk_ins128b(md, end, bmi)
                : amq__pk_ins64b((uint64_t)md, end, bmi);
    md_put(blk, w, md);
}

/* One copy of r taken from list q; false if the list has none. */
static bool block_take(const vqf_shape *s, uint8_t *blk, unsigned q,
                       unsigned r) {
    unsigned lo, hi, w = s->r, bytes = w / 8;
    amq__u128 md = md_get(blk, w);
    unsigned fill = fill_of(md, s);
    list_range(md, s, q, false, &lo, &hi);
    for (unsigned i = lo; i < hi; i++) {
        if (slot_get(blk, w, i) != r)
            continue;
        uint8_t *slots = blk + s->md;
        memmove(slots + i * bytes, slots + (i + 1) * bytes,
                (fill - 1 - i) * bytes);
        slot_put(blk, w, fill - 1, 0);
        md = w == 8 ? amq__pk_del128(md, i + q)
                    : amq__pk_del64((uint64_t)md, i + q);
        md_put(blk, w, md);
        return true;
    }
    return false;
}

/* ---- one key: the reference and the kernels ------------------------------ */

static bool contains_ref(const amq__obj *o, uint64_t h) {
    const amq_vqf *f = (const amq_vqf *)o;
    vqf_key k = key_of(f, h);
    return block_has_ref(f, block_at(f, k.b1), k.q, k.r) ||
           block_has_ref(f, block_at(f, k.b2), k.q, k.r);
}

#ifdef VQF_X86
#define VQF_INL inline __attribute__((always_inline))
#define VQF_AVX2 __attribute__((flatten, target("avx2,bmi,bmi2,popcnt,lzcnt")))
#define VQF_AVX512                                                             \
    __attribute__((flatten,                                                    \
                   target("avx512f,avx512bw,avx2,bmi,bmi2,popcnt,lzcnt")))

/* Matches in list q of a block, given the slots equal to r as bits
 * (slot i at bit i): the two selects give the list's slot range. */
static VQF_INL uint64_t in_list(const uint8_t *blk, const vqf_shape *s,
                                unsigned q, uint64_t eq) {
    unsigned lo, hi;
    list_range(md_get(blk, s->r), s, q, true, &lo, &hi);
    return eq & ((UINT64_C(1) << hi) - (UINT64_C(1) << lo));
}

/* One kernel per (instruction set, width): the line's lanes equal to r
 * (lines.h) shifted past the pocket (16 bytes or 4 lanes), then the
 * selects that find list q's slot range, on as few blocks as can hold the
 * key. The selects are ~45 instructions a block, all waiting for the
 * block's line; while they wait they fill the core's schedulers, and with
 * both blocks' there one query's misses were all the core had in flight.
 * So:
 *   - no lane equal to r in either block (an absent key, at the design
 *     load, matches a lane with probability 1 - (1 - 2^-R)^(2 S): 29% at
 *     R = 8): false, before any select;
 *   - else the selects on one block, the one that matched (x if both);
 *   - the other block only when both matched and the first did not hold
 *     the key (rare).
 * The branches wait for the lines, but they are predicted, so the core
 * runs on to the next keys' reads meanwhile; a misprediction costs less
 * than the serialised query did. */
/* The selects, for a key with a lane equal to r in a block; out of line,
 * so the kernels' common path saves no registers for them. */
#define VQF_MATCH(NAME, W)                                                     \
    __attribute__((noinline)) VQF_BMI static bool NAME(                        \
        const uint8_t *x, const uint8_t *y, unsigned q, uint64_t ex,           \
        uint64_t ey) {                                                         \
        const vqf_shape *s = W == 8 ? &SHAPE8 : &SHAPE16;                      \
        bool one = ex != 0;                                                    \
        uint64_t a = in_list(one ? x : y, s, q, one ? ex : ey);                \
        if (__builtin_expect(a != 0 || ex == 0 || ey == 0, 1))                 \
            return a != 0;                                                     \
        return in_list(y, s, q, ey) != 0;                                      \
    }

VQF_MATCH(match8, 8)
VQF_MATCH(match16, 16)

#define VQF_KERNEL(NAME, ATTR, LINE_EQ, W)                                     \
    ATTR static bool NAME(const amq__obj *o, uint64_t h) {                     \
        const amq_vqf *f = (const amq_vqf *)o;                                 \
        vqf_key k = key_at(f, h, W);                                           \
        const uint8_t *x = block_at(f, k.b1), *y = block_at(f, k.b2);          \
        unsigned skip = W == 8 ? 16 : 4;                                       \
        uint64_t ex = LINE_EQ(x, W, k.r) >> skip;                              \
        uint64_t ey = LINE_EQ(y, W, k.r) >> skip;                              \
        if (__builtin_expect((ex | ey) == 0, 1))                               \
            return false;                                                      \
        return (W == 8 ? match8 : match16)(x, y, k.q, ex, ey);                 \
    }

VQF_KERNEL(k512_8, VQF_AVX512, amq__line_eq512, 8)
VQF_KERNEL(k512_16, VQF_AVX512, amq__line_eq512, 16)
VQF_KERNEL(k256_8, VQF_AVX2, amq__line_eq256, 8)
VQF_KERNEL(k256_16, VQF_AVX2, amq__line_eq256, 16)
#endif

/* The second block's case: both fills known, the less full one takes r
 * (b1 on a tie); false, changing nothing, when both are full. */
AMQ__PK_INLINE bool put_two(const vqf_shape *s, uint8_t *x, uint8_t *y,
                            unsigned f1, unsigned q, unsigned r, unsigned isa) {
    bool bmi = isa != AMQ__PK_PORTABLE;
    unsigned f2 = fill_bmi(md_get(y, s->r), s, bmi);
    if ((f1 < f2 ? f1 : f2) >= s->slots)
        return false;
    uint8_t *blk = f2 < f1 ? y : x;
    block_put(s, blk, md_get(blk, s->r), q, r, isa);
    return true;
}

AMQ__PK_INLINE amq_status add_two(amq_vqf *f, uint8_t *x, uint8_t *y,
                                  unsigned f1, unsigned q, unsigned r,
                                  const vqf_shape *s, unsigned isa) {
    if (!put_two(s, x, y, f1, q, r, isa))
        return AMQ_ERR_FULL;
    f->o.items++;
    return AMQ_OK;
}

/* The shortcut stays a branch, and b2's line is asked for (a prefetch,
 * which nothing waits on) before b1's fill is known. Reading both pockets
 * and choosing by masks, with no branch on the lines, is slower: every
 * insert then waits for two lines and runs the work of both, where the
 * branch, predicted towards b1 on most inserts, waits for one. The second
 * block's case is out of line (`two`, a noinline function per code and
 * layout), so the common path keeps fewer registers live and saves none
 * for it. */
AMQ__PK_INLINE amq_status add_in(amq_vqf *f, uint64_t h, const vqf_shape *s,
                                 unsigned isa,
                                 amq_status (*two)(amq_vqf *, uint8_t *,
                                                   uint8_t *, unsigned,
                                                   unsigned, unsigned)) {
    bool bmi = isa != AMQ__PK_PORTABLE;
    vqf_key k = key_at(f, h, s->r);
    uint8_t *x = f->wr + (size_t)k.b1 * LINE, *y = f->wr + (size_t)k.b2 * LINE;
    amq__prefetch_w(y);
    amq__u128 m1 = md_get(x, s->r);
    unsigned f1 = fill_bmi(m1, s, bmi);
    if (__builtin_expect(f1 >= s->slots * 3 / 4, 0))
        return two(f, x, y, f1, k.q, k.r);
    block_put(s, x, m1, k.q, k.r, isa);
    f->o.items++;
    return AMQ_OK;
}

/* Concurrent mode, the second block's case, entered holding b1's lock:
 * b2's lock is added (pair_widen) and the whole decision made again on
 * what the two blocks hold now, as the insert on one thread makes it. */
AMQ__PK_INLINE amq_status add_two_c(amq_vqf *f, const vqf_key *k,
                                    const vqf_shape *s, unsigned isa) {
    bool bmi = isa != AMQ__PK_PORTABLE;
    uint8_t *x = f->wr + (size_t)k->b1 * LINE,
            *y = f->wr + (size_t)k->b2 * LINE;
    pair_widen(f, k->b1, k->b2);
    amq__u128 m1 = md_get(x, s->r);
    unsigned f1 = fill_bmi(m1, s, bmi);
    bool put = true;
    if (f1 < s->slots * 3 / 4) /* b1 emptied while it was let go */
        block_put(s, x, m1, k->q, k->r, isa);
    else
        put = put_two(s, x, y, f1, k->q, k->r, isa);
    if (put)
        items_add(f, k->b1, 1);
    pair_unlock(f, k->b1, k->b2);
    return put ? AMQ_OK : AMQ_ERR_FULL;
}

/* Concurrent mode: the shortcut decided on b1 under b1's lock, so most
 * inserts take one lock; the rest take both, lower index first. */
AMQ__PK_INLINE amq_status add_in_c(amq_vqf *f, uint64_t h, const vqf_shape *s,
                                   unsigned isa,
                                   amq_status (*two)(amq_vqf *,
                                                     const vqf_key *)) {
    bool bmi = isa != AMQ__PK_PORTABLE;
    vqf_key k = key_at(f, h, s->r);
    uint8_t *x = f->wr + (size_t)k.b1 * LINE;
    /* the lines asked for before the lock (whose atomic waits for the
     * stores before it), so the miss runs beside the lock's */
    amq__prefetch_w(x);
    amq__prefetch_w(f->wr + (size_t)k.b2 * LINE);
    blk_lock(f, k.b1);
    amq__u128 m1 = md_get(x, s->r);
    if (__builtin_expect(fill_bmi(m1, s, bmi) >= s->slots * 3 / 4, 0))
        return two(f, &k);
    block_put(s, x, m1, k.q, k.r, isa);
    items_add(f, k.b1, 1);
    blk_unlock(f, k.b1);
    return AMQ_OK;
}

/* One insert per (code, layout): the shape a constant in each; NAME_c
 * the concurrent mode's. */
#define VQF_ADD(NAME, ATTR, ISA, SHAPE)                                        \
    __attribute__((noinline))                                                  \
    ATTR static amq_status NAME##_two(amq_vqf *f, uint8_t *x, uint8_t *y,      \
                                      unsigned f1, unsigned q, unsigned r) {   \
        return add_two(f, x, y, f1, q, r, &SHAPE, ISA);                        \
    }                                                                          \
    ATTR static amq_status NAME(amq_vqf *f, uint64_t h) {                      \
        return add_in(f, h, &SHAPE, ISA, NAME##_two);                          \
    }                                                                          \
    __attribute__((noinline))                                                  \
    ATTR static amq_status NAME##_two_c(amq_vqf *f, const vqf_key *k) {        \
        return add_two_c(f, k, &SHAPE, ISA);                                   \
    }                                                                          \
    ATTR static amq_status NAME##_c(amq_vqf *f, uint64_t h) {                  \
        return add_in_c(f, h, &SHAPE, ISA, NAME##_two_c);                      \
    }

VQF_ADD(add_p8, , AMQ__PK_PORTABLE, SHAPE8)
VQF_ADD(add_p16, , AMQ__PK_PORTABLE, SHAPE16)
#ifdef VQF_X86
#define VQF_VBMI                                                               \
    __attribute__((flatten, target("avx512f,avx512bw,avx512vbmi,avx2,bmi,"     \
                                   "bmi2,popcnt,lzcnt")))
VQF_ADD(add_a8, VQF_AVX2, AMQ__PK_AVX2, SHAPE8)
VQF_ADD(add_a16, VQF_AVX2, AMQ__PK_AVX2, SHAPE16)
VQF_ADD(add_x8, VQF_AVX512, AMQ__PK_AVX512, SHAPE8)
VQF_ADD(add_x16, VQF_AVX512, AMQ__PK_AVX512, SHAPE16)
VQF_ADD(add_v8, VQF_VBMI, AMQ__PK_VBMI, SHAPE8)
VQF_ADD(add_v16, VQF_VBMI, AMQ__PK_VBMI, SHAPE16)
#endif

/* Concurrent mode: the chosen kernel on the key's two blocks, both
 * locked (lower index first), so the answer is that of one moment. */
static bool contains_c(const amq__obj *o, uint64_t h) {
    const amq_vqf *f = (const amq_vqf *)o;
    vqf_key k = key_of(f, h);
    amq__prefetch(block_at(f, k.b1));
    amq__prefetch(block_at(f, k.b2));
    pair_lock(f, k.b1, k.b2);
    bool in = f->query(o, h);
    pair_unlock(f, k.b1, k.b2);
    return in;
}

typedef amq_status (*vqf_add_fn)(amq_vqf *, uint64_t);

/* The kernel for f's layout and the CPU (AMQ_OPT_SCALAR: the reference),
 * in concurrent mode behind the locks. */
static void choose(amq_vqf *f, bool scalar) {
    bool w8 = f->s->r == 8, conc = f->locks != NULL;
#ifdef VQF_X86
    f->query = amq__obj_pick(scalar, contains_ref, w8 ? k256_8 : k256_16,
                             w8 ? k512_8 : k512_16);
    /* indexed by [concurrent][amq__pk_isa] */
    static const vqf_add_fn add8[2][4] = {
        {add_p8, add_a8, add_x8, add_v8},
        {add_p8_c, add_a8_c, add_x8_c, add_v8_c}};
    static const vqf_add_fn add16[2][4] = {
        {add_p16, add_a16, add_x16, add_v16},
        {add_p16_c, add_a16_c, add_x16_c, add_v16_c}};
    f->add = (w8 ? add8 : add16)[conc][amq__pk_isa(scalar)];
#else
    f->query = contains_ref;
    f->add = conc ? (w8 ? add_p8_c : add_p16_c) : (w8 ? add_p8 : add_p16);
#endif
    f->o.contains = conc ? contains_c : f->query;
}

/* Batch: both blocks of key i + AHEAD are prefetched while key i is
 * answered (by the kernel), so each key's lines were asked for early. */
static void contains_batch(const amq__obj *o, const uint64_t *h, size_t n,
                           uint8_t *out) {
    const amq_vqf *f = (const amq_vqf *)o;
    for (size_t i = 0; i < n && i < AHEAD; i++) {
        vqf_key k = key_of(f, h[i]);
        amq__prefetch(block_at(f, k.b1));
        amq__prefetch(block_at(f, k.b2));
    }
    for (size_t i = 0; i < n; i++) {
        if (i + AHEAD < n) {
            vqf_key k = key_of(f, h[i + AHEAD]);
            amq__prefetch(block_at(f, k.b1));
            amq__prefetch(block_at(f, k.b2));
        }
        out[i] = f->o.contains(&f->o, h[i]);
    }
}

/* ---- updates ------------------------------------------------------------ */

/* The insert chosen for the layout and the CPU. */
static amq_status add_hash(amq__obj *o, uint64_t h) {
    amq_vqf *f = (amq_vqf *)o;
    return f->add(f, h);
}

/* Batch insert: both blocks of key i + AHEAD prefetched for writing. Same
 * result as the loop, which stops at the first failure. */
static amq_status add_batch(amq__obj *o, const uint64_t *h, size_t n,
                            size_t *done) {
    amq_vqf *f = (amq_vqf *)o;
    size_t i = 0;
    amq_status st = AMQ_OK;
    for (size_t j = 0; j < n && j < AHEAD; j++) {
        vqf_key k = key_of(f, h[j]);
        amq__prefetch_w(block_at(f, k.b1));
    }
    for (; i < n; i++) {
        if (i + AHEAD < n) {
            vqf_key k = key_of(f, h[i + AHEAD]);
            amq__prefetch_w(block_at(f, k.b1));
            amq__prefetch_w(block_at(f, k.b2));
        }
        if ((st = f->add(f, h[i])) != AMQ_OK)
            break;
    }
    *done = i;
    return st;
}

/* Concurrent mode: b1 under its lock; if it has no copy, b1 and b2 under
 * both locks (b1 looked at again when it was let go in between). Out of
 * line: the plain remove gains one test. */
__attribute__((noinline)) static amq_status remove_c(amq_vqf *f, uint64_t h) {
    vqf_key k = key_of(f, h);
    uint8_t *x = f->wr + (size_t)k.b1 * LINE, *y = f->wr + (size_t)k.b2 * LINE;
    blk_lock(f, k.b1);
    bool took = block_take(f->s, x, k.q, k.r);
    if (!took && k.b2 != k.b1) {
        pair_widen(f, k.b1, k.b2);
        took = (k.b2 < k.b1 && block_take(f->s, x, k.q, k.r)) ||
               block_take(f->s, y, k.q, k.r);
        blk_unlock(f, k.b2);
    }
    if (took)
        items_add(f, k.b1, (uint64_t)-1);
    blk_unlock(f, k.b1);
    return took ? AMQ_OK : AMQ_ERR_NOT_FOUND;
}

/* One copy, from b1 or else b2. */
static amq_status remove_hash(amq__obj *o, uint64_t h) {
    amq_vqf *f = (amq_vqf *)o;
    if (f->locks != NULL)
        return remove_c(f, h);
    vqf_key k = key_of(f, h);
    if (!block_take(f->s, f->wr + (size_t)k.b1 * LINE, k.q, k.r) &&
        !block_take(f->s, f->wr + (size_t)k.b2 * LINE, k.q, k.r))
        return AMQ_ERR_NOT_FOUND;
    f->o.items--;
    return AMQ_OK;
}

/* ---- the mathematics ---------------------------------------------------- */

static double bound_for(const vqf_shape *s, uint64_t blocks, double items) {
    double p = 2.0 * amq__mulshift_top(blocks) *
               amq__mulshift_top((uint64_t)s->lists << s->r);
    if (items <= 0 || p <= 0)
        return 0.0;
    return -expm1(items * log1p(-p));
}

/* Fewest blocks holding capacity keys at the design load whose bound at
 * capacity keys meets fpr; 0 past MAX_BLOCKS. */
static uint64_t blocks_for(const vqf_shape *s, uint64_t capacity, double fpr) {
    double n = (double)capacity;
    double want = ceil((n / s->load + 1.5 * sqrt(n) + 8.0) / s->slots);
    double p1 = 2.0 * ldexp(1.0, -32) *
                ceil(ldexp(1.0, 32) / (double)((uint64_t)s->lists << s->r));
    /* bound ~ 1 - exp(-capacity p1 / B): the B that meets fpr, then up */
    double by_rate = ceil((double)capacity * p1 / -log1p(-fpr));
    double b = fmax(1.0, fmax(want, by_rate));
    if (b > (double)MAX_BLOCKS)
        return 0;
    uint64_t nb = (uint64_t)b;
    while (nb < MAX_BLOCKS && bound_for(s, nb, (double)capacity) > fpr)
        nb++;
    return nb;
}

/* bits per key <-> fpr, the continuous curve of the family: the 8-bit
 * layout with a real-valued remainder width r at its design load, so
 * bits = (r + pocket bits per slot) / load and fpr = 2 load (S / Q) 2^-r. */
#define CURVE_META (128.0 / 48.0) /* pocket bits per slot, R = 8 */
#define CURVE_RATIO (48.0 / 80.0) /* slots per list, R = 8 */

static double curve_fpr(double bits) {
    double r = AMQ_VQF_LOAD8 * bits - CURVE_META;
    return fmin(1.0, 2.0 * AMQ_VQF_LOAD8 * CURVE_RATIO * exp2(-r));
}

static double curve_bits(double fpr) {
    double r = log2(2.0 * AMQ_VQF_LOAD8 * CURVE_RATIO / fpr);
    return (r + CURVE_META) / AMQ_VQF_LOAD8;
}

/* One layout at bits per key (load = slot bits / bits, at most 1). */
static double shape_fpr(const vqf_shape *s, double bits) {
    double per_slot = 8.0 * LINE / s->slots;
    double load = fmin(1.0, per_slot / bits);
    return 2.0 * load * s->slots / s->lists * ldexp(1.0, -(int)s->r);
}

static double shape_bits(const vqf_shape *s, double fpr) {
    double per_slot = 8.0 * LINE / s->slots;
    double at_full = 2.0 * s->slots / s->lists * ldexp(1.0, -(int)s->r);
    return per_slot * fmax(1.0, at_full / fpr);
}

/* ---- construction ------------------------------------------------------- */

static amq_status vqf_alloc(const vqf_shape *s, uint64_t blocks,
                            const amq_options *opt, const uint8_t *view,
                            amq_vqf **out) {
    amq_vqf *f;
    size_t bytes, self;
    void *wr = NULL;
    bool conc = opt != NULL && (opt->flags & AMQ_OPT_CONCURRENT);
    if (blocks == 0 || blocks > MAX_BLOCKS)
        return blocks == 0 ? AMQ_ERR_INVALID : AMQ_ERR_OVERFLOW;
    /* the lock lines (concurrent mode) follow the structure, zeroed and
     * aligned to a line: free */
    size_t locks = conc ? (size_t)lock_lines(blocks) * sizeof(vqf_locks) : 0;
    if (!amq__mul((size_t)blocks, LINE, &bytes) ||
        !amq__add(sizeof *f + (conc ? 64 : 0), locks, &self))
        return AMQ_ERR_OVERFLOW;
    AMQ_RETURN_IF_ERR(amq__obj_new(self, opt, (void **)&f));
    f->locks =
        conc ? (vqf_locks *)(((uintptr_t)(f + 1) + 63) & ~(uintptr_t)63) : NULL;
    f->s = s;
    f->nblocks = blocks;
    f->span = (uint64_t)s->lists << s->r;
    amq_status st = amq__obj_table(&f->o, bytes, view, &wr);
    if (st != AMQ_OK) {
        amq__obj_free(&f->o);
        return st;
    }
    f->wr = wr;
    f->rd = f->o.table;
    choose(f, opt != NULL && (opt->flags & AMQ_OPT_SCALAR));
    if (wr != NULL) { /* empty pockets: Q ones, no values */
        amq__u128 empty = ((amq__u128)1 << s->lists) - 1;
        for (uint64_t b = 0; b < blocks; b++)
            md_put(f->wr + (size_t)b * LINE, s->r, empty);
    }
    *out = f;
    return AMQ_OK;
}

/* The smaller layout meeting (capacity, fpr); *blocks 0 if neither can. */
static const vqf_shape *shape_for(uint64_t capacity, double fpr,
                                  uint64_t *blocks) {
    uint64_t b8 = blocks_for(&SHAPE8, capacity, fpr);
    uint64_t b16 = blocks_for(&SHAPE16, capacity, fpr);
    bool use8 = b8 != 0 && (b16 == 0 || b8 <= b16);
    *blocks = use8 ? b8 : b16;
    return use8 ? &SHAPE8 : &SHAPE16;
}

uint64_t amq_vqf_blocks(const amq_vqf *f) { return f->nblocks; }
unsigned amq_vqf_rbits(const amq_vqf *f) { return f->s->r; }
double amq_vqf_load(const amq_vqf *f) {
    return (double)items_of(&f->o) / ((double)f->nblocks * f->s->slots);
}

/* ---- the generic interface ---------------------------------------------- */

static amq_status t_create(const amq__type *self, amq__spec *spec,
                           uint64_t capacity, double fpr,
                           const amq_options *opt, amq__obj **out,
                           amq_diag *diag) {
    uint64_t r = 0, blocks = 0, conc = 0;
    bool has_r, has_b;
    amq_vqf *f;
    amq_options o2 = {0};
    (void)self;
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "r", 8, 16, &r, &has_r, diag));
    AMQ_RETURN_IF_ERR(
        amq__spec_u64(spec, "blocks", 1, MAX_BLOCKS, &blocks, &has_b, diag));
    AMQ_RETURN_IF_ERR(
        amq__spec_u64(spec, "concurrent", 0, 1, &conc, NULL, diag));
    if (opt != NULL)
        o2 = *opt;
    if (conc)
        o2.flags |= AMQ_OPT_CONCURRENT;
    if (has_r && r != 8 && r != 16)
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "vqf: r=%llu; remainders are 8 or 16 bits",
                         (unsigned long long)r);
    const vqf_shape *s = has_r ? shape_of((unsigned)r) : NULL;
    if (!has_b) {
        if (capacity == 0)
            return amq__diag(diag, AMQ_ERR_SPEC, 0,
                             "vqf needs a capacity and fpr, or blocks=N");
        s = s ? s : shape_for(capacity, fpr, &blocks);
        blocks = blocks ? blocks : blocks_for(s, capacity, fpr);
        if (blocks == 0)
            return amq__diag(diag, AMQ_ERR_OVERFLOW, 0,
                             "vqf: %llu keys at fpr %g need 2^32 blocks or "
                             "more",
                             (unsigned long long)capacity, fpr);
    }
    AMQ_RETURN_IF_ERR(vqf_alloc(s ? s : &SHAPE8, blocks, &o2, NULL, &f));
    *out = &f->o;
    return AMQ_OK;
}

static double fpr_bound(const amq__obj *o) {
    const amq_vqf *f = (const amq_vqf *)o;
    return bound_for(f->s, f->nblocks, (double)items_of(o));
}

static size_t t_describe(const amq__obj *o, char *buf, size_t cap) {
    const amq_vqf *f = (const amq_vqf *)o;
    return amq__describe(buf, cap, "r=%u,blocks=%llu", f->s->r,
                         (unsigned long long)f->nblocks);
}

/* The family's curve, or with r= that layout's (blocks= names a size, not
 * a shape, and concurrent= a way of use: both accepted and unused, so a
 * describe() string and any valid spec have a curve). */
static amq_status t_curve(const amq__type *self, amq__spec *spec, double x,
                          bool inverse, double *out, amq_diag *diag) {
    uint64_t r = 0, blocks, conc;
    bool has_r;
    (void)self;
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "r", 8, 16, &r, &has_r, diag));
    AMQ_RETURN_IF_ERR(
        amq__spec_u64(spec, "blocks", 1, MAX_BLOCKS, &blocks, NULL, diag));
    AMQ_RETURN_IF_ERR(
        amq__spec_u64(spec, "concurrent", 0, 1, &conc, NULL, diag));
    const vqf_shape *s = has_r ? shape_of((unsigned)r) : NULL;
    if (has_r && s == NULL)
        return amq__diag(diag, AMQ_ERR_SPEC, 0, "vqf: r is 8 or 16");
    if (s != NULL)
        *out = inverse ? shape_bits(s, x) : shape_fpr(s, x);
    else
        *out = inverse ? curve_bits(x) : curve_fpr(x);
    return AMQ_OK;
}

/* params: blocks u64 | items u64 | rbits u32 | reserved u32 (0) */
static void t_params_write(const amq__obj *o, amq__wr *w) {
    const amq_vqf *f = (const amq_vqf *)o;
    amq__wr_u64(w, f->nblocks);
    amq__wr_u64(w, items_of(o));
    amq__wr_u32(w, f->s->r);
    amq__wr_u32(w, 0);
}

/* Every pocket has Q ones and slots past the fill are 0: false at the
 * first block that breaks this (*bad), else the fills' sum in *total. */
static bool blocks_ok(const vqf_shape *s, const uint8_t *p, uint64_t blocks,
                      uint64_t *bad, uint64_t *total) {
    *total = 0;
    for (uint64_t b = 0; b < blocks; b++, p += LINE) {
        amq__u128 md = md_get(p, s->r);
        unsigned ones =
            amq__popcount64(amq__pk_lo(md)) + amq__popcount64(amq__pk_hi(md));
        unsigned fill = ones == s->lists ? fill_of(md, s) : s->slots + 1;
        for (unsigned i = fill; i < s->slots; i++)
            fill = slot_get(p, s->r, i) != 0 ? s->slots + 1 : fill;
        if (fill > s->slots) {
            *bad = b;
            return false;
        }
        *total += fill;
    }
    return true;
}

static amq_status t_load(const amq__type *self, amq__rd *r,
                         const uint8_t *payload, size_t len, bool view,
                         const amq_options *opt, amq__obj **out) {
    uint64_t blocks, items;
    uint32_t rbits;
    amq_vqf *f;
    (void)self;
    AMQ_RETURN_IF_ERR(amq__rd_expect(r, 24));
    size_t at_blocks = amq__rd_u64(r, &blocks);
    size_t at_items = amq__rd_u64(r, &items);
    size_t at_r = amq__rd_u32(r, &rbits);
    AMQ_RETURN_IF_ERR(amq__rd_zero32(r));
    const vqf_shape *s = shape_of(rbits);
    if (s == NULL)
        return amq__rd_bad(r, at_r, "remainder bits %u (8 or 16)", rbits);
    if (blocks == 0 || blocks > MAX_BLOCKS || len % LINE != 0 ||
        len / LINE != blocks)
        return amq__rd_bad(r, at_blocks, "%llu blocks in %zu payload bytes",
                           (unsigned long long)blocks, len);
    uint64_t bad, total;
    if (!blocks_ok(s, payload, blocks, &bad, &total))
        return amq__rd_bad(r, r->payload_at + (size_t)bad * LINE,
                           "block %llu: a pocket without %u list ends, or "
                           "a nonzero empty slot",
                           (unsigned long long)bad, s->lists);
    if (total != items)
        return amq__rd_bad(r, at_items, "%llu items, the blocks hold %llu",
                           (unsigned long long)items,
                           (unsigned long long)total);
    AMQ_RETURN_IF_ERR(vqf_alloc(s, blocks, opt, view ? payload : NULL, &f));
    if (!view)
        memcpy(f->wr, payload, len);
    f->o.items = items;
    *out = &f->o;
    return AMQ_OK;
}

/* Shapes beside the defaults that reach the other kernels (test_kernels):
 * the 16-bit layout; full tables of a few blocks (keys matching lanes of
 * both blocks); the concurrent form. */
static const char *const kernel_shapes[] = {
    "vqf:r=16", "vqf:blocks=3", "vqf:r=16,blocks=5", "vqf:concurrent=1", NULL};

const amq__type amq__type_vqf = {
    .info = {.name = "vqf",
             .type_id = AMQ__ID_vqf,
             .caps = AMQ_CAP_REMOVE | AMQ_CAP_CONCURRENT,
             .summary = "vector quotient filter: two-choice 64-byte blocks "
                        "of 48 (28) remainders in 80 (36) lists, SIMD "
                        "lookups (Pandey et al. 2021)",
             .params = "r=8|16 (remainder bits; default: the smaller table "
                       "meeting fpr), blocks=N (64-byte blocks, instead of "
                       "capacity), concurrent=1 (a lock per block: add, "
                       "remove and queries from many threads; as "
                       "AMQ_OPT_CONCURRENT)",
             .default_hash = AMQ_HASH_XXH3},
    .reads = 2,
    .reads_text = "2",
    .kernel_shapes = kernel_shapes,
    .create = t_create,
    .load = t_load,
    .add = add_hash,
    .add_batch = add_batch,
    .contains = contains_ref,
    .contains_batch = contains_batch,
    .remove = remove_hash,
    .fpr_bound = fpr_bound,
    .items = items_of,
    .describe = t_describe,
    .curve = t_curve,
    .params_write = t_params_write,
};
