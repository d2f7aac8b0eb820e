/*
 * qf_ops.c — inserting, removing and counting one key of a quotient
 * filter, and the batches: locate the key's run and group (from its block
 * alone when it can), open or close slots a word at a time, fix the
 * offsets, all inside the window the locks allow (qf_impl.h has the
 * layout, the fast paths and the locking protocol).
 */
#include <string.h>

#include "fingerprint/qf_codec.h"
#include "fingerprint/qf_query.h"
#include "fingerprint/qf_update.h"
#include "fingerprint/qf_vbmi.h"

/* ---- locating a remainder ------------------------------------------------ */

/* Find remainder r's group in the run s (bounds set): s->g, or the
 * insertion point s->pos with s->g.count == 0. */
static void find_in_run(const amq_qf *f, uint64_t r, spot *s) {
    s->pos = s->rs;
    s->g = (group){r, 0, 0};
    if (!f->counting) {
        uint64_t p = s->rs, v = 0, n = 1;
        while (p < s->re && (v = slot_get(f, p)) < r)
            p++;
        s->pos = p;
        if (p >= s->re || v != r)
            return;
        while (p + n < s->re && slot_get(f, p + n) == r)
            n++;
        s->g = (group){r, n, n};
        return;
    }
    while (s->pos < s->re) {
        group g;
        if (!decode_cqf(f, s->pos, s->re, &g) || g.x > r)
            return;
        if (g.x == r) {
            s->g = g;
            return;
        }
        s->pos += g.len;
    }
}

/* The common case of locating r in run q, read from q's block alone:
 * the block's offset o < 64 and the run (or the place of a new one) lies
 * in the block, at block-local slots [st, en): st after the d-th run end
 * at or after o (d = quotients of the block below q), en after the next.
 * A qf run is sorted; a cqf run is used only while its slots strictly
 * increase up to r and none is 0, which means every group there has count
 * 1 (a counter for x > 0, and "x x", repeat or decrease at once; one for
 * x = 0 starts with 0). Fills s as run_of and
 * find_in_run would; false when it cannot (the caller takes that path).
 * Unaligned 8-byte slot reads stay inside the table: the caller excludes
 * the last block (a borrowed table has no padding) and widths over 56. */
static inline bool locate_block(const amq_qf *f, uint64_t q, uint64_t r,
                                spot *s) {
    const uint8_t *p = blk(f, q >> 6) + QF_HDR;
    unsigned wd = f->width;
    uint64_t base = q & ~63ULL, v = 0, prev = 0, k, st, en;
    bool run;
    if (!run_in_block(f, q, &st, &en, &run))
        return false;
    for (k = st; k < en; k++) {
        uint64_t bit = k * wd;
        v = (amq__get_u64(p + (bit >> 3)) >> (bit & 7)) & f->wmask;
        if (v >= r)
            break;
        if (f->counting && (v == 0 || (k > st && v <= prev)))
            return false; /* may be a counter ("0 d .. 0 0" rises) */
        prev = v;
    }
    *s = (spot){base + st, base + en, base + k, {r, 0, 0}, run};
    if (k == en || v > r)
        return true;
    if (f->counting) {
        if (r == 0)
            return false; /* "0 d .. 0 0" counters need decoding */
        uint64_t nx = k + 1 < en ? slot_get(f, base + k + 1) : r + 1;
        if (nx < r)
            return false; /* a counter */
        s->g = nx == r ? (group){r, 2, 2} : (group){r, 1, 1};
        return true;
    }
    uint64_t n = 1;
    while (k + n < en && slot_get(f, base + k + n) == r)
        n++;
    s->g = (group){r, n, n};
    return true;
}

/* Run q and r's group (or place) in s: the block-local fast path, else
 * run_of and find_in_run; false if that lies past the window. */
static inline bool locate(const amq_qf *f, uint64_t q, uint64_t r,
                          const qwin *w, spot *s) {
    if ((q >> 6) < f->fast_blocks && locate_block(f, q, r, s))
        return true;
    if (!run_of(f, q, w, s))
        return false;
    find_in_run(f, r, s);
    return true;
}

/* ---- insert, remove, count inside a window --------------------------------- */

static amq_status insert_in(amq_qf *f, uint64_t q, uint64_t r, uint64_t k,
                            qwin *w) {
    uint64_t newc, ln, g, p, e[QF_MAX_GROUP], found = 0;
    spot s;
    if (!locate(f, q, r, w, &s))
        return need_more(w);
    if (__builtin_add_overflow(s.g.count, k, &newc))
        return AMQ_ERR_OVERFLOW;
    AMQ_RETURN_IF_ERR(items_may(f, w, k, true)); /* before anything moves */
    if (!f->counting && newc > f->tslots)
        return AMQ_ERR_FULL;
    if (!f->counting && k > QF_MAX_GROUP)
        return AMQ_ERR_UNSUPPORTED; /* copies: one slot each */
    ln = group_len(f, r, newc);
    g = ln - s.g.len; /* lengths grow with the count */
    if (ln < s.g.len || g > QF_MAX_GROUP)
        return AMQ_ERR_FULL;
    p = s.pos + s.g.len;
    open_kind kind = !s.run      ? OPEN_NEW_RUN
                     : p == s.re ? OPEN_APPEND
                                 : OPEN_INSIDE;
    if (g == 1 && (p >> 6) == (q >> 6) && (q >> 6) < f->fast_blocks) {
        /* Usually the free slot is in q's block too (p >= its offset):
         * then nothing but that block changes. */
        uint64_t x = free_in_block(f, q >> 6, p & 63);
        if (x < 64 && (!f->counting || newc <= 2)) {
            items_move(f, w, k, true);
            open_in_block(f, q, p & 63, x, kind, r); /* r: its last copy */
            ctr_add(f, w, QF_DISTINCT, s.g.count == 0);
            ctr_add(f, w, QF_USED, 1);
            return AMQ_OK;
        }
        if (x < 64)
            e[found++] = (q & ~63ULL) + x;
    }
    if (found < g) /* a long cluster: fetch the next blocks together */
        for (uint64_t b = (p >> 6) + 1; b < (p >> 6) + 4 && b < w->hib; b++)
            prefetch_block(f, b * 64);
    AMQ_RETURN_IF_ERR(free_slots(f, p, found, g, e, w));
    items_move(f, w, k, true);
    for (uint64_t i = 0; i < g; i++)
        open_slot(f, q, p, e[i], i == 0 ? kind : OPEN_INSIDE);
    write_group(f, s.pos, r, newc);
    ctr_add(f, w, QF_DISTINCT, s.g.count == 0);
    ctr_add(f, w, QF_USED, g);
    return AMQ_OK;
}

static amq_status remove_in(amq_qf *f, uint64_t q, uint64_t r, uint64_t k,
                            qwin *w) {
    uint64_t newc, ln, cut, p, s_end = 0;
    spot s;
    if (!occ_get(f, q))
        return AMQ_ERR_NOT_FOUND;
    if (!locate(f, q, r, w, &s))
        return need_more(w);
    if (s.g.count < k)
        return AMQ_ERR_NOT_FOUND;
    AMQ_RETURN_IF_ERR(items_may(f, w, k, false));
    newc = s.g.count - k;
    ln = group_len(f, r, newc);
    if (ln > s.g.len)
        return AMQ_ERR_CORRUPT; /* lengths grow with the count */
    cut = s.g.len - ln;
    p = s.pos + ln;
    if (cut > 0) {
        s_end = stretch_end(f, p, w);
        if (s_end == QF_NOWHERE ||
            (!whole(f, w) && saturated_in(f, q >> 6, (s_end - 1) >> 6)))
            return need_more(w);
    }
    write_group(f, s.pos, r, newc);
    for (uint64_t i = 0; i < cut; i++) {
        if (i > 0)
            s_end = stretch_end(f, p, w); /* only shrinks: in the window */
        close_slot(f, q, p, s_end, &s, w);
    }
    items_move(f, w, k, false);
    ctr_add(f, w, QF_DISTINCT, 0 - (uint64_t)(newc == 0));
    ctr_add(f, w, QF_USED, 0 - cut);
    return AMQ_OK;
}

/* Copies of (q, r) into *c; false if the answer lies past the window. */
static inline bool count_in(const amq_qf *f, uint64_t q, uint64_t r,
                            const qwin *w, uint64_t *c) {
    spot s;
    *c = 0;
    if (!occ_get(f, q))
        return true;
    if (!locate(f, q, r, w, &s))
        return false;
    *c = s.g.count;
    return true;
}

/* ---- the public operations: windows, locks, one widening ------------------ */

/* The global fallback: the operation again under every region lock
 * (kept out of line: it is rare). */
static QF_COLD amq_status update_wide(amq_qf *f, uint64_t q, uint64_t r,
                                      uint64_t k, bool add, qwin *w) {
    amq_status st = AMQ_ERR_CORRUPT;
    if (!whole(f, w)) {
        win_widen(f, w);
        st = add ? insert_in(f, q, r, k, w) : remove_in(f, q, r, k, w);
    }
    return w->widen ? AMQ_ERR_CORRUPT : st; /* a whole valid table suffices */
}

/* A whole update: window (locks), the operation, and at most one
 * widening to every region. */
static inline amq_status update_qr(amq_qf *f, uint64_t q, uint64_t r,
                                   uint64_t k, bool add) {
    qwin w;
    prefetch_block(f, q);
    if (add && (q >> 6) + 1 < f->nblocks)
        prefetch_block(f, q + 64); /* shifts often reach the next block */
    win_enter(f, q, &w);
    amq_status st = add ? insert_in(f, q, r, k, &w) : remove_in(f, q, r, k, &w);
    if (w.widen)
        st = update_wide(f, q, r, k, add, &w);
    if (f->concurrent)
        win_leave(f, &w);
    return st;
}

static inline amq_status update(amq_qf *f, uint64_t h, uint64_t k, bool add) {
    uint64_t q, r;
    split(f, h, &q, &r);
    return update_qr(f, q, r, k, add);
}

/* prefetch: false when the caller already did (batches). */
static inline uint64_t lookup(const amq_qf *f, uint64_t h, bool prefetch) {
    uint64_t q, r, c;
    qwin w;
    split(f, h, &q, &r);
    if (prefetch)
        prefetch_block(f, q);
    win_enter(f, q, &w);
    if (!count_in(f, q, r, &w, &c) && !whole(f, &w)) {
        win_widen(f, &w);
        if (!count_in(f, q, r, &w, &c))
            c = 0;
    }
    if (f->concurrent)
        win_leave(f, &w);
    return c;
}

/* Batch: each key's block is prefetched QF_PREFETCH keys ahead. */
static inline void lookup_batch(const amq_qf *f, const uint64_t *h, size_t n,
                                uint8_t *out) {
    size_t ahead = n < QF_PREFETCH ? n : QF_PREFETCH;
    for (size_t i = 0; i < ahead; i++)
        prefetch_block(f, quotient_of(f, h[i]));
    for (size_t i = 0; i < n; i++) {
        if (i + QF_PREFETCH < n)
            prefetch_block(f, quotient_of(f, h[i + QF_PREFETCH]));
        out[i] = lookup(f, h[i], false) != 0;
    }
}

/* Batch insert: each key's block is prefetched (for writing) a few keys
 * ahead, so the misses of consecutive inserts overlap. Stops at the first
 * failure. */
static inline amq_status insert_batch(amq_qf *f, const uint64_t *h, size_t n,
                                      size_t *done) {
    size_t ahead = n < QF_INSERT_AHEAD ? n : QF_INSERT_AHEAD, i;
    amq_status st = AMQ_OK;
    for (i = 0; i < ahead; i++)
        prefetch_block(f, quotient_of(f, h[i]));
    for (i = 0; i < n && st == AMQ_OK; i++) {
        if (i + QF_INSERT_AHEAD < n)
            prefetch_block(f, quotient_of(f, h[i + QF_INSERT_AHEAD]));
        st = update(f, h[i], 1, true);
    }
    *done = st == AMQ_OK ? n : i - 1;
    return st;
}

/* The hot paths are instantiated twice from the same inline code (QF_ANY,
 * QF_ISA: qf_update.h); f->use_pdep picks one per call. */
static QF_ANY amq_status insert_any(amq_qf *f, uint64_t h, uint64_t k) {
    return update(f, h, k, true);
}
static QF_ISA amq_status insert_isa(amq_qf *f, uint64_t h, uint64_t k) {
    return update(f, h, k, true);
}
static QF_ANY amq_status remove_any(amq_qf *f, uint64_t h, uint64_t k) {
    return update(f, h, k, false);
}
static QF_ISA amq_status remove_isa(amq_qf *f, uint64_t h, uint64_t k) {
    return update(f, h, k, false);
}
static QF_ANY amq_status insert_batch_any(amq_qf *f, const uint64_t *h,
                                          size_t n, size_t *done) {
    return insert_batch(f, h, n, done);
}
static QF_ISA amq_status insert_batch_isa(amq_qf *f, const uint64_t *h,
                                          size_t n, size_t *done) {
    return insert_batch(f, h, n, done);
}
static QF_ANY amq_status update_qr_any(amq_qf *f, uint64_t q, uint64_t r,
                                       bool add) {
    return update_qr(f, q, r, 1, add);
}
static QF_ISA amq_status update_qr_isa(amq_qf *f, uint64_t q, uint64_t r,
                                       bool add) {
    return update_qr(f, q, r, 1, add);
}
static QF_ANY uint64_t lookup_any(const amq_qf *f, uint64_t h) {
    return lookup(f, h, true);
}
static QF_ISA uint64_t lookup_isa(const amq_qf *f, uint64_t h) {
    return lookup(f, h, true);
}

/* ---- the one-key query kernels ------------------------------------------- */

/* Far beyond cache a scalar query loop is limited by how many queries the
 * core keeps in flight, and an instruction that waits for the block's
 * lines sits in a scheduler until they arrive: the general lookup of an
 * absent key had ~50 of them (the run's bounds, its slots, and branches on
 * both), so about one query at a time was in flight; a kernel that only
 * reads the occupieds word runs several times faster than the same kernel
 * with the whole branch-free run test below. Hence two levels:
 *
 *   - has_vbmi (slots of up to 8 bits, AVX-512 VBMI, qf_vbmi.h): ~20
 *     instructions on the lines and one branch, predicted "absent", that
 *     ~75% of absent keys take (r = 7); the rest and the keys present go
 *     on to the exact test out of line;
 *   - has_run (the exact test of run q, any width up to 56, after the
 *     occupied bit said yes): the run's bounds from two selects, and r
 *     against all of its slots in one word, no branch until the answer;
 *     runs that leave their block or a word, and cqf matches (a counter
 *     digit may equal r), take locate_block or the general lookup.
 *
 * has_run's compare: the run's slots are a string of len w-bit fields from
 * bit st*w of the slot area; one unaligned word read from byte st*w/8
 * holds at least 57 bits of them, so runs of len * w <= 57 bits are tested
 * at once. With x = word ^ (r repeated in every field), lo = a 1 at each
 * field's lowest bit and hi = lo << (w - 1), (x - lo) & ~x & hi has the
 * top bit of every field that is 0, and of fields above one that is 0 (the
 * borrow), so masked to the first len fields it is non-zero exactly when
 * one of them equals r. A qf run then holds r: the key is there. */

/* The exact answer once the quick test could not say no: the block-local
 * path, else the general lookup (which re-reads the block: the prefetch is
 * not repeated). Out of line: it holds no slot of the hot loop. */
static __attribute__((noinline)) bool has_exact(const amq_qf *f, uint64_t h,
                                                uint64_t q, uint64_t r) {
    spot s;
    if ((q >> 6) < f->fast_blocks && locate_block(f, q, r, &s))
        return s.g.count != 0;
    return lookup(f, h, false) != 0;
}

/* Run q of block p (occupied, in a fast block) holds r? The SWAR test
 * described above; runs that leave the block or a word, and cqf matches
 * (maybe a counter digit), take the exact path. */
static inline __attribute__((always_inline)) bool has_run(
    const amq_qf *f, uint64_t h, uint64_t q, uint64_t r, bool isa) {
    unsigned w = f->width;
    uint64_t lo = qf_fields[w], hi = lo << (w - 1), m;
    bool out;
    uint64_t x = run_word(f, q, isa, &m, &out) ^ (r * lo);
    uint64_t z = (x - lo) & ~x & hi & m;
    if (__builtin_expect(!((z != 0) | out), 1))
        return false;
    if (!out && !f->counting)
        return true;
    return has_exact(f, h, q, r);
}

/* The kernel of a filter nobody updates concurrently (the layout of the
 * block and why end(q) comes from it: qf_impl.h, run_in_block). The last
 * block takes the exact path: its slot words may end the table. */
static inline __attribute__((always_inline)) bool has(const amq_qf *f,
                                                      uint64_t h, bool isa) {
    uint64_t q, r;
    split(f, h, &q, &r);
    /* a block is 17 + 8w bytes: its second line, where the run's slots
     * usually are, asked for now rather than after the header is read */
    prefetch_block(f, q);
    if ((q >> 6) >= f->fast_blocks)
        return has_exact(f, h, q, r);
    if (!occ_get(f, q))
        return false; /* quotient q holds nothing: ~40% of absent keys */
    return has_run(f, h, q, r, isa);
}
static QF_ANY bool has_any(const amq__obj *o, uint64_t h) {
    return has((const amq_qf *)o, h, false);
}
static QF_ISA bool has_isa(const amq__obj *o, uint64_t h) {
    return has((const amq_qf *)o, h, true);
}
/* Copies held of h's fingerprint, on the code for this CPU. */
static inline uint64_t count_of(const amq_qf *f, uint64_t h) {
    return f->use_pdep ? lookup_isa(f, h) : lookup_any(f, h);
}

/* The kernel of concurrent mode (the region locks) and of AMQ_OPT_SCALAR
 * (the general lookup), and the type's contains. */
bool amq__qf_contains(const amq__obj *o, uint64_t h) {
    return count_of((const amq_qf *)o, h) != 0;
}

#if defined(__x86_64__)
/* Slots of up to 8 bits on a CPU with AVX-512 VBMI: the quick test of
 * qf_vbmi.h first, which needs no select, then the exact one for the
 * keys it lets through and the keys present. A present key pays both:
 * at r = 7 an absent key costs 0.78 of the exact kernel's time and a
 * present one 1.35. At 9-16 bits (word lanes) the gain shrinks to 0.89
 * against 1.34 for a present key, a loss unless more than three queries
 * in four are of absent keys, so those widths keep the exact kernel.
 * Measured and left out: keeping only the slots below 64 + o' - a (the
 * run cannot end later) lets 21% pass at r = 7 instead of 25% but costs
 * more than it saves, and the loads alone without the block's prefetch
 * are slower. */

/* The keys the quick test lets through: a qf run is tested word-wide, a
 * cqf one decoded. Out of line, so the quick test keeps few registers. */
static __attribute__((noinline)) QF_ISA bool has_passed(const amq_qf *f,
                                                        uint64_t h, uint64_t q,
                                                        uint64_t r) {
    return f->counting ? has_exact(f, h, q, r) : has_run(f, h, q, r, true);
}

QF_VBMI static bool has_vbmi(const amq__obj *ob, uint64_t h) {
    const amq_qf *f = (const amq_qf *)ob;
    uint64_t q, r;
    split(f, h, &q, &r);
    prefetch_block(f, q);
    /* w: the kernel fits the width it was chosen for; a resize or merge
     * may adopt a table of another */
    if ((q >> 6) >= f->fast_blocks || f->width > 8)
        return has_exact(f, h, q, r);
    if (__builtin_expect(!qf_vbmi_may(f, q, r, f->wmask), 1))
        return false;
    return has_passed(f, h, q, r);
}
#endif

void amq__qf_choose_kernel(amq_qf *f) {
    if (f->vbits != 0)
        f->o.contains = NULL; /* a maplet: its type's own lookup */
    else if (f->concurrent || f->scalar)
        f->o.contains = amq__qf_contains;
#if defined(__x86_64__)
    else if (f->width <= 8 && qf_vbmi_fits(f))
        f->o.contains = has_vbmi;
#endif
    else
        f->o.contains = f->use_pdep ? has_isa : has_any;
}

static QF_ANY void batch_any(const amq_qf *f, const uint64_t *h, size_t n,
                             uint8_t *out) {
    lookup_batch(f, h, n, out);
}
static QF_ISA void batch_isa(const amq_qf *f, const uint64_t *h, size_t n,
                             uint8_t *out) {
    lookup_batch(f, h, n, out);
}

/* ---- the type's callbacks and the counted updates ----------------------- */

amq_status amq__qf_add(amq__obj *o, uint64_t h) {
    amq_qf *f = (amq_qf *)o;
    return f->use_pdep ? insert_isa(f, h, 1) : insert_any(f, h, 1);
}

amq_status amq__qf_remove(amq__obj *o, uint64_t h) {
    amq_qf *f = (amq_qf *)o;
    return f->use_pdep ? remove_isa(f, h, 1) : remove_any(f, h, 1);
}

amq_status amq__qf_update_qr(amq_qf *f, uint64_t q, uint64_t r, bool add) {
    return f->use_pdep ? update_qr_isa(f, q, r, add)
                       : update_qr_any(f, q, r, add);
}

amq_status amq__qf_add_batch(amq__obj *o, const uint64_t *h, size_t n,
                             size_t *done) {
    amq_qf *f = (amq_qf *)o;
    *done = 0;
    return f->use_pdep ? insert_batch_isa(f, h, n, done)
                       : insert_batch_any(f, h, n, done);
}

amq_status amq__qf_count(const amq__obj *o, uint64_t h, uint64_t *out) {
    *out = count_of((const amq_qf *)o, h);
    return AMQ_OK;
}

void amq__qf_contains_batch(const amq__obj *o, const uint64_t *h, size_t n,
                            uint8_t *out) {
    const amq_qf *f = (const amq_qf *)o;
    if (f->use_pdep)
        batch_isa(f, h, n, out);
    else
        batch_any(f, h, n, out);
}

amq_status amq_cqf_insert(amq_qf *f, uint64_t h, uint64_t count) {
    if (f == NULL || count == 0)
        return AMQ_ERR_INVALID;
    if (qf_is_view(f))
        return AMQ_ERR_UNSUPPORTED;
    return f->use_pdep ? insert_isa(f, h, count) : insert_any(f, h, count);
}

amq_status amq_cqf_remove(amq_qf *f, uint64_t h, uint64_t count) {
    if (f == NULL || count == 0)
        return AMQ_ERR_INVALID;
    if (qf_is_view(f))
        return AMQ_ERR_UNSUPPORTED;
    return f->use_pdep ? remove_isa(f, h, count) : remove_any(f, h, count);
}

uint64_t amq__qf_fingerprint(const amq__obj *o, uint64_t h) {
    return fingerprint_of((const amq_qf *)o, h);
}

uint64_t amq_qf_fingerprint(const amq_qf *f, uint64_t h) {
    return fingerprint_of(f, h);
}
