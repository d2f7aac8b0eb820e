/*
 * eqf.c — the expandable quotient filter (eqf): a quotient filter that
 * doubles when it fills, for as long as keys arrive, without the keys and
 * without letting its false-positive rate run away.
 *
 * Papers: Dayan, Bercea, Reviriego, Pagh, "InfiniFilter: expanding filters
 * to infinity and beyond" (SIGMOD 2023) for variable-length fingerprints
 * in one table that give a bit to the address at each doubling and for
 * lengthening the fingerprints of newer keys; Dayan, Bercea, Pagh, "Aleph
 * filter: to infinity in constant time" (VLDB 2024) for keeping the keys
 * whose fingerprints ran out in the same table, duplicated, so a query
 * still reads one run. The length schedule, its proof and the layout are
 * our own (docs/structures.md, "Expandable quotient filter: `eqf`").
 *
 * Table. A qf table (qf_impl.h) of N = N0 * 2^K home slots (K doublings
 * so far) whose w-bit slots hold codes instead of remainders. A key with
 * hash h has quotient Q = floor(h N / 2^64) and fingerprint bits: the
 * binary fraction of h N / 2^64 after its integer part. An entry of
 * length l (0 <= l <= w - 1) is
 *
 *     code = F << (w - l) | 1 << (w - l - 1)      F: l fingerprint bits
 *
 * (its lowest set bit is the delimiter; a code is never 0). It matches a
 * key at quotient Q whose first l fingerprint bits are F: with the key's
 * own code x = (first w - 1 bits) << 1 | 1, iff (v ^ x) < 2 * (v & -v).
 * A new key is stored at the full length w - 1.
 *
 * Doubling (N -> 2N). Q' = 2Q + (first fingerprint bit), so an entry of
 * length l >= 1 moves to run 2Q + (v >> (w - 1)) with code (v << 1) mod
 * 2^w, length l - 1; an entry of length 0 (a "void" entry: its bits are
 * gone) cannot choose, and is copied into both runs 2Q and 2Q + 1. Every
 * key keeps an entry matching it: no false negatives at any size. When
 * the schedule below lengthens new fingerprints, every code is shifted up
 * into the wider slots, lengths unchanged. The new table is written in
 * fingerprint order in one pass (each old run read three times: its void
 * count, then the entries for 2Q, then those for 2Q + 1) and swapped in;
 * a failure leaves the filter as it was.
 *
 * Lengths. Keys added after K doublings get L(K) bits: L0 for K = 0, L1
 * for 1 <= K <= H (the planned growth, spec growth=H), then L1 + e(K)
 * with e(K) the least e with (K + 1)^2 <= 2^e (H + 1)^2. A filter made
 * from a target has L1 = L0; one that takes over a full qf
 * (amq__eqf_from_qf) has the qf's remainder length as L0 and a longer
 * L1. An entry of length l at quotient Q
 * matches a stranger with probability at most 2^-l / N + 2^-64, so the
 * bound is sum over entries of that (kept as counts by length). Growing by
 * insertions only, at the 95% load where doublings happen, the keys of
 * doubling j are half the table, each entry keeps its share of the bound
 * as it shortens (2^-(l-1) / 2N = 2^-l / N), and the bound is
 * 0.95 * 2^-L0 * (1 + K / 2) up to K = H: L0 = ceil(log2(0.95 (1 + H/2) /
 * fpr)) keeps it under fpr to 2^H times the first capacity, and the terms
 * after H sum to less than the first H + 1 do, so it stays under 2 fpr at
 * any size. Deletes only lower it; amq_filter_fpr_bound() is always the
 * sum itself.
 *
 * Removes take the longest matching entry of the key's run: every shorter
 * match is a prefix of it, so the other keys it might have served still
 * match a remaining entry. A void entry's copies in the sibling runs stay
 * (the slots do not say which copies belong together); they are counted
 * in the bound like every entry.
 *
 * Frame: the qf's 24-byte block (slot count is the entries, copies
 * included), then first slots N0 u64 | keys u64 | L0 u8 | H u8 | K u8 |
 * L1 u8 | 0 u8 | tail blocks u24; the payload is the qf table. Loading
 * validates the table in full, that N = N0 2^K and w = L(K) + 1, that no
 * code is 0, and recounts the lengths.
 *
 * The tail. A run that reaches the table's end (the qf keeps a tail of
 * min(N, 128) slots past the home slots for runs to spill into) finds it
 * full below the load of a doubling. The table then lengthens its tail,
 * twice over each time while it stays within N slots, and doubles only
 * past that; a doubling keeps the tail it had (longer when the new last
 * runs need it). Hashed keys rarely need this; a Memento filter's keys of
 * one prefix share a run, and sequential keys would otherwise double the
 * table at any load.
 *
 * The same table with payload bits under each code (eqf_impl.h) is the
 * Memento range filter's (range/memento.c): the functions amq__eqf_* are
 * that shared core, the type "eqf" is the core with none.
 */
#include <math.h>
#include <string.h>

#include "fingerprint/eqf_impl.h"
#include "fingerprint/qf_query.h"
#include "fingerprint/qf_update.h"
#include "type/type.h"

/* ---- lengths and codes ----------------------------------------------------- */

static unsigned extra_bits(unsigned k, unsigned growth) {
    uint64_t a = (uint64_t)(k + 1) * (k + 1), b = (uint64_t)(growth + 1);
    unsigned e = 0;
    b *= b;
    while (a > (b << e))
        e++;
    return e;
}

/* Fingerprint bits of the keys added after k doublings. */
static unsigned len_at(const amq__eqf_plan *p, unsigned k) {
    return k == 0           ? p->l0
           : k <= p->growth ? p->l1
                            : p->l1 + extra_bits(k, p->growth);
}

/* The length of code c of a cw-bit code field. */
static inline unsigned code_len(uint64_t c, unsigned cw) {
    return cw - 1 - (unsigned)__builtin_ctzll(c);
}

/* h's quotient and its code at full length cw - 1 (cw: the code bits of
 * a slot). */
static inline void key_code(const amq_qf *t, unsigned cw, uint64_t h,
                            uint64_t *q, uint64_t *x) {
    unsigned __int128 p = (unsigned __int128)h * t->nslots;
    *q = (uint64_t)(p >> 64);
    *x = ((uint64_t)p >> (65 - cw)) << 1 | 1;
}

static inline bool code_matches(uint64_t v, uint64_t x) {
    return (v ^ x) < (v & (0 - v)) << 1;
}

static inline unsigned code_width(const amq_eqf *e) {
    return e->t->width - e->pb;
}

/* ---- queries ----------------------------------------------------------------- */

/* Run q's slots [*rs, *re) (q occupied): from q's block when it can,
 * else the general rank and select. */
static inline void run_bounds(const amq_qf *t, uint64_t q, uint64_t *rs,
                              uint64_t *re) {
    uint64_t st, en, base = q & ~63ULL;
    bool run;
    if ((q >> 6) < t->fast_blocks && run_in_block(t, q, &st, &en, &run)) {
        *rs = base + st;
        *re = base + en;
        return;
    }
    qwin w;
    spot s;
    win_enter(t, q, &w);
    if (!run_of(t, q, &w, &s)) /* the whole table: never past it */
        s.rs = s.re = 0;
    *rs = s.rs;
    *re = s.re;
}

/* The entries of run q whose code matches x and whose payload lies in
 * [plo, phi]: how many, and the slot of the longest (*at; QF_NOWHERE
 * when none). stop_at_first for queries. */
static inline uint64_t matches(const amq_eqf *e, uint64_t q, uint64_t x,
                               uint64_t plo, uint64_t phi, bool stop_at_first,
                               uint64_t *at) {
    const amq_qf *t = e->t;
    uint64_t rs, re, n = 0, best = 0, pmask = (UINT64_C(1) << e->pb) - 1;
    *at = QF_NOWHERE;
    if (!occ_get(t, q))
        return 0;
    run_bounds(t, q, &rs, &re);
    for (uint64_t i = rs; i < re; i++) {
        uint64_t v = slot_get(t, i), c = v >> e->pb, pay = v & pmask;
        if (!code_matches(c, x) || pay < plo || pay > phi)
            continue;
        n++;
        if (stop_at_first)
            return n;
        uint64_t low = c & (0 - c); /* longer entries have lower delimiters */
        if (*at == QF_NOWHERE || low < best) {
            best = low;
            *at = i;
        }
    }
    return n;
}

/* How many entries of run q hold code c itself. */
static uint64_t code_count(const amq_eqf *e, uint64_t q, uint64_t c) {
    uint64_t rs, re, n = 0;
    if (!occ_get(e->t, q))
        return 0;
    run_bounds(e->t, q, &rs, &re);
    for (uint64_t i = rs; i < re; i++)
        n += (slot_get(e->t, i) >> e->pb) == c;
    return n;
}

bool amq__eqf_any(const amq_eqf *e, uint64_t h, uint64_t plo, uint64_t phi) {
    uint64_t q, x, at;
    key_code(e->t, code_width(e), h, &q, &x);
    return matches(e, q, x, plo, phi, true, &at) != 0;
}

uint64_t amq__eqf_matches(const amq_eqf *e, uint64_t h, uint64_t plo,
                          uint64_t phi) {
    uint64_t q, x, at;
    key_code(e->t, code_width(e), h, &q, &x);
    return matches(e, q, x, plo, phi, false, &at);
}

void amq__eqf_visit(const amq_eqf *e, uint64_t h, amq__eqf_visit_fn fn,
                    void *ctx) {
    const amq_qf *t = e->t;
    unsigned cw = code_width(e);
    uint64_t q, x, rs, re, pmask = (UINT64_C(1) << e->pb) - 1;
    key_code(t, cw, h, &q, &x);
    if (!occ_get(t, q))
        return;
    run_bounds(t, q, &rs, &re);
    for (uint64_t i = rs; i < re; i++) {
        uint64_t v = slot_get(t, i), c = v >> e->pb;
        if (code_matches(c, x) && !fn(ctx, i, code_len(c, cw), v & pmask))
            return;
    }
}

void amq__eqf_prefetch(const amq_eqf *e, uint64_t h) {
    prefetch_block(e->t, quotient_of(e->t, h));
}

void amq__eqf_set_payload(amq_eqf *e, uint64_t slot, uint64_t pay) {
    uint64_t v = slot_get(e->t, slot);
    slot_set(e->t, slot, (v >> e->pb) << e->pb | pay);
}

/* The exact answer of an eqf (no payload): the run slot by slot (out of
 * line: it holds nothing of the word-wide test). */
static __attribute__((noinline)) bool has_exact(const amq_eqf *e, uint64_t q,
                                                uint64_t x) {
    uint64_t at;
    return matches(e, q, x, 0, 0, true, &at) != 0;
}

/* Run q (occupied, in a fast block) holds a code matching x? Every field
 * of run q's word at once (qf_ops.c describes the word and the zero-field
 * test): lb = each field's lowest set bit (v & (~v + 1)), keep = the bits
 * above it, and a field matches iff (v ^ x) & keep is 0. A borrow or carry
 * leaves a field only from one that is 0, and no code is 0, so it can
 * only spoil fields after the run, which the mask drops. Runs the word
 * cannot hold take the loop. */
static inline __attribute__((always_inline)) bool has_run(const amq_eqf *e,
                                                          uint64_t q,
                                                          uint64_t x,
                                                          bool isa) {
    const amq_qf *t = e->t;
    unsigned w = t->width;
    uint64_t lo = qf_fields[w], hi = lo << (w - 1), m;
    bool out;
    uint64_t v = run_word(t, q, isa, &m, &out);
    uint64_t lb = v & (~v + lo);
    uint64_t keep = ~(lb | (lb - lo));
    uint64_t z = (v ^ (x * lo)) & keep;
    uint64_t flag = (z - lo) & ~z & hi & m;
    if (__builtin_expect(!((flag != 0) | out), 1))
        return false;
    if (!out)
        return true;
    return has_exact(e, q, x);
}

/* The same test for a table with payloads (pb > 0): the payload bits of
 * every field cleared (v & cm), the codes' bits counted from bit pb of
 * each field (plo = lo << pb: lowest set bit, the bits above it, the
 * key's code), and the zero-field test on what is left, which is 0 in a
 * field exactly when its code matches. */
static inline __attribute__((always_inline)) int probe_k(const amq_eqf *e,
                                                         uint64_t h, bool isa) {
    const amq_qf *t = e->t;
    unsigned w = t->width, pb = e->pb, cw = w - pb;
    uint64_t q, x, m;
    bool out;
    key_code(t, cw, h, &q, &x);
    if ((q >> 6) >= t->fast_blocks)
        return AMQ__EQF_MAYBE;
    if (!occ_get(t, q))
        return AMQ__EQF_NO;
    uint64_t lo = qf_fields[w], plo = lo << pb, hi = lo << (w - 1);
    uint64_t cm = lo * (((UINT64_C(1) << cw) - 1) << pb);
    uint64_t v = run_word(t, q, isa, &m, &out) & cm;
    if (out)
        return AMQ__EQF_MAYBE;
    uint64_t lb = v & (~v + plo);
    uint64_t keep = ~(lb | (lb - plo)) & cm;
    uint64_t z = (v ^ (x * plo)) & keep;
    return ((z - lo) & ~z & hi & m) != 0 ? AMQ__EQF_YES : AMQ__EQF_NO;
}

static QF_ANY int probe_any(const amq_eqf *e, uint64_t h) {
    return probe_k(e, h, false);
}
static QF_ISA int probe_isa(const amq_eqf *e, uint64_t h) {
    return probe_k(e, h, true);
}

int amq__eqf_probe(const amq_eqf *e, uint64_t h) {
    return e->t->use_pdep ? probe_isa(e, h) : probe_any(e, h);
}

static inline __attribute__((always_inline)) bool lookup(const amq_eqf *e,
                                                         uint64_t h, bool isa) {
    const amq_qf *t = e->t;
    uint64_t q, x;
    key_code(t, t->width, h, &q, &x);
    prefetch_block(t, q);
    if ((q >> 6) >= t->fast_blocks)
        return has_exact(e, q, x);
    if (!occ_get(t, q))
        return false;
    return has_run(e, q, x, isa);
}

static QF_ANY bool contains_any(const amq__obj *o, uint64_t h) {
    return lookup((const amq_eqf *)o, h, false);
}
static QF_ISA bool contains_isa(const amq__obj *o, uint64_t h) {
    return lookup((const amq_eqf *)o, h, true);
}
/* AMQ_OPT_SCALAR: the loop over the run's slots, the reference. */
static bool contains_ref(const amq__obj *o, uint64_t h) {
    return amq__eqf_any((const amq_eqf *)o, h, 0, 0);
}

static bool eqf_contains(const amq__obj *o, uint64_t h) {
    return ((const amq_eqf *)o)->o.contains(o, h);
}

static void eqf_contains_batch(const amq__obj *o, const uint64_t *h, size_t n,
                               uint8_t *out) {
    const amq_eqf *e = (const amq_eqf *)o;
    for (size_t i = 0; i < n && i < QF_PREFETCH; i++)
        prefetch_block(e->t, quotient_of(e->t, h[i]));
    for (size_t i = 0; i < n; i++) {
        if (i + QF_PREFETCH < n)
            prefetch_block(e->t, quotient_of(e->t, h[i + QF_PREFETCH]));
        out[i] = e->o.contains(o, h[i]);
    }
}

static amq_status eqf_count(const amq__obj *o, uint64_t h, uint64_t *out) {
    *out = amq__eqf_matches((const amq_eqf *)o, h, 0, 0);
    return AMQ_OK;
}

/* ---- doubling ---------------------------------------------------------------- */

typedef struct emitter {
    amq_qf *g;
    qf_writer w;
    uint64_t last; /* the last slot written in the current run */
    unsigned pb;
    bool groups;
    uint64_t *by_len;
} emitter;

static amq_status emit(emitter *m, uint64_t q, uint64_t v) {
    amq_qf *g = m->g;
    bool in_run = m->w.run && m->w.q == q;
    bool same = in_run && m->last == v;
    bool same_code = in_run && (m->last >> m->pb) == (v >> m->pb);
    writer_enter(g, &m->w, q);
    if (m->w.pos >= g->tslots)
        return AMQ_ERR_FULL;
    slot_set(g, m->w.pos++, v);
    m->last = v;
    g->o.items++;
    g->used++;
    g->distinct += !same;
    if (!m->groups || !same_code)
        m->by_len[code_len(v >> m->pb, g->width - m->pb)]++;
    return AMQ_OK;
}

/* Run q of the old table t, slots [rs, re) with its void entries at
 * [vs, ve), into run 2q + b of g: the entries whose first code bit is b,
 * shortened and shifted into g's width, merged in slot order with the
 * void entries' copies (void again, payloads kept). */
static amq_status emit_half(emitter *m, const amq_qf *t, uint64_t q,
                            uint64_t rs, uint64_t re, unsigned b, uint64_t vs,
                            uint64_t ve) {
    unsigned pb = m->pb, cw = t->width - pb, up = m->g->width - t->width;
    uint64_t pmask = (UINT64_C(1) << pb) - 1;
    uint64_t vcode = UINT64_C(1) << (cw - 1), cmask = (vcode << 1) - 1;
    uint64_t nvoid = (vcode << up) << pb, vi = vs;
    for (uint64_t i = rs; i < re; i++) {
        uint64_t v = slot_get(t, i), c = v >> pb;
        if (c == vcode || (c >> (cw - 1)) != b)
            continue;
        uint64_t nv = (((c << 1) & cmask) << up) << pb | (v & pmask);
        for (; vi < ve && (nvoid | (slot_get(t, vi) & pmask)) <= nv; vi++)
            AMQ_RETURN_IF_ERR(
                emit(m, 2 * q + b, nvoid | (slot_get(t, vi) & pmask)));
        AMQ_RETURN_IF_ERR(emit(m, 2 * q + b, nv));
    }
    for (; vi < ve; vi++)
        AMQ_RETURN_IF_ERR(
            emit(m, 2 * q + b, nvoid | (slot_get(t, vi) & pmask)));
    return AMQ_OK;
}

/* The tail of a table of n home slots after one of `tail` slots: twice
 * it, 0 when that passes n (none longer can be had). */
static uint64_t next_tail(uint64_t n, uint64_t tail) {
    uint64_t t = 2 * tail;
    return t <= n ? t : 0;
}

/* 2N slots of width wn (>= the old one) and a tail of `tail` slots (0:
 * the default) from e's table, run by run in quotient order (run q
 * starts at max(q, the previous run's end) and ends at the next run
 * end); swapped in only when all of it is written. */
static amq_status expand(amq_eqf *e, unsigned wn, uint64_t tail) {
    amq_qf *t = e->t, *g;
    amq_options opt;
    uint64_t by_len[64] = {0};
    if (t->nslots > (UINT64_C(1) << 55))
        return AMQ_ERR_OVERFLOW;
    amq__qf_opts_like(t, &opt);
    amq_status st = amq__qf_alloc_tail(t->nslots * 2, wn, tail, &opt, NULL, &g);
    if (st != AMQ_OK)
        return st == AMQ_ERR_INVALID ? AMQ_ERR_OVERFLOW : st;
    emitter m = {g, {0, 0, false}, 0, e->pb, e->groups, by_len};
    uint64_t vcode = UINT64_C(1) << (code_width(e) - 1), end = 0;
    for (uint64_t q = next_occupied(t, 0, t->nslots);
         st == AMQ_OK && q < t->nslots;
         q = next_occupied(t, q + 1, t->nslots)) {
        uint64_t rs = q > end ? q : end, vs = rs, ve = rs;
        end = next_rend(t, rs, t->nblocks) + 1;
        for (uint64_t i = rs; i < end; i++)
            if ((slot_get(t, i) >> e->pb) == vcode) { /* contiguous */
                vs = ve == rs ? i : vs;
                ve = i + 1;
            }
        st = emit_half(&m, t, q, rs, end, 0, vs, ve);
        if (st == AMQ_OK)
            st = emit_half(&m, t, q, rs, end, 1, vs, ve);
    }
    if (st != AMQ_OK) {
        amq__qf_destroy(&g->o);
        return st;
    }
    amq__qf_build_finish(g, &m.w);
    amq__qf_adopt(t, g);
    memcpy(e->by_len, by_len, sizeof by_len);
    e->k++;
    return AMQ_OK;
}

/* ---- updates ------------------------------------------------------------------ */

static bool needs_room(const amq_eqf *e) {
    return (double)e->t->used + 1.0 > AMQ_QF_MAX_LOAD * (double)e->t->nslots;
}

/* One doubling, at the width of the next doubling's keys, keeping the
 * tail the table had (a longer one when the last runs still do not fit:
 * the keys of one prefix share a run). */
static amq_status grow(amq_eqf *e) {
    unsigned ln = len_at(&e->plan, e->k + 1);
    unsigned wn = ln + 1 + e->pb > e->t->width ? ln + 1 + e->pb : e->t->width;
    uint64_t n2 = 2 * e->t->nslots, tail = e->t->tslots - e->t->nslots;
    if (wn > AMQ__EQF_MAX_W)
        return AMQ_ERR_OVERFLOW;
    if (tail <= amq__qf_default_tail(n2))
        tail = 0;
    for (;;) {
        amq_status st = expand(e, wn, tail);
        if (st != AMQ_ERR_FULL)
            return st;
        tail = next_tail(n2, tail ? tail : amq__qf_default_tail(n2));
        if (tail == 0)
            return AMQ_ERR_FULL;
    }
}

/* Room for a run that reached the table's end: a longer tail while it
 * is under the home slots (an insert then finds the table full only
 * when it is), else a doubling. */
static amq_status make_room(amq_eqf *e) {
    uint64_t tail = next_tail(e->t->nslots, e->t->tslots - e->t->nslots);
    if (tail != 0 && !qf_is_view(e->t))
        return amq__qf_widen_tail(e->t, tail);
    return grow(e);
}

amq_status amq__eqf_put(amq_eqf *e, uint64_t h, uint64_t pay) {
    uint64_t q, x;
    if (needs_room(e))
        AMQ_RETURN_IF_ERR(grow(e));
    key_code(e->t, code_width(e), h, &q, &x);
    bool fresh = !e->groups || code_count(e, q, x) == 0;
    amq_status st = amq__qf_update_qr(e->t, q, x << e->pb | pay, true);
    while (st == AMQ_ERR_FULL) { /* a cluster at the table's end */
        AMQ_RETURN_IF_ERR(make_room(e));
        key_code(e->t, code_width(e), h, &q, &x);
        fresh = !e->groups || code_count(e, q, x) == 0;
        st = amq__qf_update_qr(e->t, q, x << e->pb | pay, true);
    }
    if (st != AMQ_OK)
        return st;
    e->by_len[code_width(e) - 1] += fresh;
    e->o.items++;
    return AMQ_OK;
}

amq_status amq__eqf_take(amq_eqf *e, uint64_t h, uint64_t pay) {
    uint64_t q, x, at;
    key_code(e->t, code_width(e), h, &q, &x);
    if (e->o.items == 0 || matches(e, q, x, pay, pay, false, &at) == 0)
        return AMQ_ERR_NOT_FOUND;
    uint64_t v = slot_get(e->t, at), c = v >> e->pb;
    bool last = !e->groups || code_count(e, q, c) == 1;
    AMQ_RETURN_IF_ERR(amq__qf_update_qr(e->t, q, v, false));
    e->by_len[code_len(c, code_width(e))] -= last;
    e->o.items--;
    return AMQ_OK;
}

static amq_status eqf_add(amq__obj *o, uint64_t h) {
    return amq__eqf_put((amq_eqf *)o, h, 0);
}

/* The loop of adds, each key's block asked for QF_INSERT_AHEAD keys
 * ahead (at the current size: a doubling on the way only wastes those
 * requests), so the misses of consecutive adds overlap. */
static amq_status eqf_add_batch(amq__obj *o, const uint64_t *h, size_t n,
                                size_t *done) {
    amq_eqf *e = (amq_eqf *)o;
    size_t i;
    for (i = 0; i < n && i < QF_INSERT_AHEAD; i++)
        prefetch_block(e->t, quotient_of(e->t, h[i]));
    for (i = 0; i < n; i++) {
        if (i + QF_INSERT_AHEAD < n)
            prefetch_block(e->t, quotient_of(e->t, h[i + QF_INSERT_AHEAD]));
        amq_status st = amq__eqf_put(e, h[i], 0);
        if (st != AMQ_OK) {
            *done = i;
            return st;
        }
    }
    *done = n;
    return AMQ_OK;
}

static amq_status eqf_remove(amq__obj *o, uint64_t h) {
    return amq__eqf_take((amq_eqf *)o, h, 0);
}

double amq__eqf_bound(const amq_eqf *e) {
    double s = 0.0;
    for (unsigned l = 0; l < 64; l++)
        s += ldexp((double)e->by_len[l], -(int)l);
    double p = s / (double)e->t->nslots + (double)e->t->used * 0x1p-64;
    return p < 1.0 ? p : 1.0;
}

static double eqf_fpr_bound(const amq__obj *o) {
    return amq__eqf_bound((const amq_eqf *)o);
}

/* ---- construction ------------------------------------------------------------- */

void amq__eqf_destroy(amq__obj *o) {
    amq_eqf *e = (amq_eqf *)o;
    if (e == NULL)
        return;
    amq__qf_destroy(&e->t->o);
    amq__obj_free(&e->o);
}

static amq_status wrap(size_t size, amq_qf *t, uint64_t base,
                       amq__eqf_plan plan, unsigned k, unsigned pb, bool groups,
                       const amq_options *opt, amq_eqf **out) {
    amq_eqf *e;
    amq_status st = amq__obj_new(size, opt, (void **)&e);
    if (st != AMQ_OK) {
        amq__qf_destroy(&t->o);
        return st;
    }
    e->t = t;
    e->base = base;
    e->plan = plan;
    e->k = k;
    e->pb = pb;
    e->groups = groups;
    e->o.contains = t->scalar     ? contains_ref
                    : t->use_pdep ? contains_isa
                                  : contains_any;
    *out = e;
    return AMQ_OK;
}

/* The bound at 95% load after `growth` doublings at L0 = l. */
static double planned(unsigned l, unsigned growth) {
    return AMQ_QF_MAX_LOAD * (1.0 + growth / 2.0) * ldexp(1.0, -(int)l);
}

unsigned amq__eqf_l0_for(double fpr, unsigned *growth) {
    double l = ceil(log2(planned(0, *growth) / fpr));
    unsigned r = l < 1                    ? 1u
                 : l > AMQ__EQF_MAX_W - 1 ? AMQ__EQF_MAX_W - 1
                                          : (unsigned)l;
    while (*growth < AMQ__EQF_MAX_GROWTH && planned(r, *growth + 1) <= fpr)
        (*growth)++;
    return r;
}

amq_status amq__eqf_shape(amq__spec *spec, uint64_t capacity, double fpr,
                          const char *name, uint64_t *slots, unsigned *l,
                          unsigned *growth, amq_diag *diag) {
    static const amq__qf_bits key = {"l", 1, AMQ__EQF_MAX_W - 1};
    uint64_t g = AMQ__EQF_DEFAULT_GROWTH;
    bool given;
    AMQ_RETURN_IF_ERR(
        amq__spec_u64(spec, "growth", 0, AMQ__EQF_MAX_GROWTH, &g, NULL, diag));
    AMQ_RETURN_IF_ERR(
        amq__qf_shape(spec, capacity, fpr, &key, name, slots, l, &given, diag));
    *growth = (unsigned)g;
    if (!given)
        *l = amq__eqf_l0_for(fpr, growth);
    return AMQ_OK;
}

amq_status amq__eqf_new(size_t size, uint64_t slots, unsigned l,
                        unsigned growth, unsigned pb, bool groups,
                        const amq_options *opt, amq_eqf **out, amq_diag *diag) {
    amq_options o2 = *opt;
    amq_qf *t;
    o2.flags &= ~AMQ_OPT_CONCURRENT;
    if (l + 1 + pb > AMQ__EQF_MAX_W)
        return amq__diag(diag, AMQ_ERR_OVERFLOW, 0,
                         "%u fingerprint bits and %u below them pass %u-bit "
                         "slots",
                         l, pb, AMQ__EQF_MAX_W);
    AMQ_RETURN_IF_ERR(
        amq__qf_alloc_diag(slots, l + 1 + pb, false, &o2, &t, diag));
    amq__eqf_plan plan = {l, l, growth};
    return wrap(size, t, slots, plan, 0, pb, groups, &o2, out);
}

static amq_status t_create(const amq__type *self, amq__spec *spec,
                           uint64_t capacity, double fpr,
                           const amq_options *opt, amq__obj **out,
                           amq_diag *diag) {
    uint64_t n = 0;
    unsigned l = 0, growth = 0;
    amq_eqf *e;
    (void)self;
    AMQ_RETURN_IF_ERR(
        amq__eqf_shape(spec, capacity, fpr, "eqf", &n, &l, &growth, diag));
    AMQ_RETURN_IF_ERR(
        amq__eqf_new(sizeof *e, n, l, growth, 0, false, opt, &e, diag));
    *out = &e->o;
    return AMQ_OK;
}

/* ---- from a full qf ------------------------------------------------------------ */

/* The plan of a filter whose first keys have l0 bits (a qf's remainders)
 * and bound `first` (their share, which doublings do not change): later
 * keys get the least l1 whose growth (the doublings until the bound
 * passes b) reaches the default, b the target or, when the first keys'
 * bound is already above it, twice that bound. */
static amq__eqf_plan plan_after(unsigned l0, double first, double target) {
    double a = AMQ_QF_MAX_LOAD;
    double b = target > first ? target : 2.0 * first;
    amq__eqf_plan p = {l0, l0, 0};
    for (; p.l1 < AMQ__EQF_MAX_W - 1; p.l1++) {
        double h = 2.0 * (b - first) / a * ldexp(1.0, (int)p.l1);
        if (h >= AMQ__EQF_DEFAULT_GROWTH) {
            p.growth =
                h >= AMQ__EQF_MAX_GROWTH ? AMQ__EQF_MAX_GROWTH : (unsigned)h;
            break;
        }
    }
    return p;
}

amq_status amq__eqf_from_qf(const amq_qf *q, double target,
                            const amq_options *opt, amq__obj **out) {
    amq_options o2 = *opt;
    amq_qf *g;
    amq_eqf *e;
    uint64_t by_len[64] = {0}, end = 0;
    if (q->counting || q->vbits != 0 || q->concurrent)
        return AMQ_ERR_INVALID;
    if (q->rbits + 1 > AMQ__EQF_MAX_W)
        return AMQ_ERR_OVERFLOW;
    o2.flags &= ~AMQ_OPT_CONCURRENT;
    AMQ_RETURN_IF_ERR(
        amq__qf_alloc(q->nslots, q->rbits + 1, false, &o2, NULL, &g));
    emitter m = {g, {0, 0, false}, 0, 0, false, by_len};
    amq_status st = AMQ_OK;
    for (uint64_t x = next_occupied(q, 0, q->nslots);
         st == AMQ_OK && x < q->nslots;
         x = next_occupied(q, x + 1, q->nslots)) {
        uint64_t rs = x > end ? x : end;
        end = next_rend(q, rs, q->nblocks) + 1;
        for (uint64_t i = rs; st == AMQ_OK && i < end; i++)
            st = emit(&m, x, slot_get(q, i) << 1 | 1);
    }
    if (st != AMQ_OK) {
        amq__qf_destroy(&g->o);
        return st;
    }
    amq__qf_build_finish(g, &m.w);
    double first =
        ldexp((double)by_len[q->rbits], -(int)q->rbits) / (double)q->nslots;
    AMQ_RETURN_IF_ERR(wrap(sizeof *e, g, q->nslots,
                           plan_after(q->rbits, first, target), 0, 0, false,
                           &o2, &e));
    memcpy(e->by_len, by_len, sizeof by_len);
    e->o.items = qf_total(q, QF_ITEMS);
    *out = &e->o;
    return AMQ_OK;
}

/* ---- the frame ---------------------------------------------------------------- */

/* The tail's blocks beyond the default (the frame keeps them: a
 * table's bytes depend on its tail). */
static uint64_t tail_blocks(const amq_qf *t) {
    return (t->tslots - t->nslots - amq__qf_default_tail(t->nslots)) / 64;
}

void amq__eqf_params_write(const amq_eqf *e, amq__wr *w) {
    amq__qf_params_write(e->t, w);
    amq__wr_u64(w, e->base);
    amq__wr_u64(w, e->o.items);
    amq__wr_u32(w, e->plan.l0 | e->plan.growth << 8 | e->k << 16 |
                       e->plan.l1 << 24);
    amq__wr_u32(w, e->pb | (uint32_t)(tail_blocks(e->t) << 8));
}

static void t_params_write(const amq__obj *o, amq__wr *w) {
    amq__eqf_params_write((const amq_eqf *)o, w);
}

size_t amq__eqf_payload_size(const amq__obj *o) {
    return ((const amq_eqf *)o)->t->o.table_bytes;
}

void amq__eqf_payload_write(const amq__obj *o, uint8_t *dst) {
    const amq_eqf *e = (const amq_eqf *)o;
    memcpy(dst, e->t->o.table, e->t->o.table_bytes);
}

/* The shape a new filter would take to be this one now: its slots, the
 * length of new keys and the plan (the doublings so far are history, kept
 * in the frame, not a shape). */
static size_t t_describe(const amq__obj *o, char *buf, size_t cap) {
    const amq_eqf *e = (const amq_eqf *)o;
    const amq_qf *t = e->t;
    if ((t->nslots & (t->nslots - 1)) == 0)
        return amq__describe(buf, cap, "q=%u,l=%u,growth=%u",
                             amq__qf_ceil_log2(t->nslots), t->width - 1,
                             e->plan.growth);
    return amq__describe(buf, cap, "slots=%llu,l=%u,growth=%u",
                         (unsigned long long)t->nslots, t->width - 1,
                         e->plan.growth);
}

/* A table as built, at 95% load: l + 1 + 2.125 bits per slot and fpr
 * 0.95 * 2^-l, l taken as real (the qf's curve with one bit more per slot,
 * the delimiter). The length a target picks also covers the planned
 * growth, so a new filter sits below its target on this curve. */
double amq__eqf_curve(double fixed, double scale, double x, bool inverse) {
    double a = AMQ_QF_MAX_LOAD;
    if (inverse)
        return (log2(scale * a / x) + fixed) / a;
    double p = scale * a * exp2(-(a * x - fixed));
    return p < 1.0 ? p : 1.0;
}

static amq_status t_curve(const amq__type *self, amq__spec *spec, double x,
                          bool inverse, double *out, amq_diag *diag) {
    uint64_t growth;
    (void)self;
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "growth", 0, AMQ__EQF_MAX_GROWTH,
                                    &growth, NULL, diag));
    *out = amq__eqf_curve(1.0 + QF_META_BITS, 1.0, x, inverse);
    return AMQ_OK;
}

/* Every code non-zero, and the counts by length (groups: a code once a
 * run; the iterator's value is the quotient over the slot). */
static amq_status check_codes(amq_eqf *e, const amq__rd *rd) {
    amq_qf_iter it;
    uint64_t fp, c, prev = 0;
    unsigned w = e->t->width, cw = w - e->pb;
    bool first = true;
    amq_qf_iter_init(e->t, &it);
    while (amq_qf_iter_next(&it, &fp, &c)) {
        uint64_t v = fp & ((UINT64_C(1) << w) - 1), code = v >> e->pb;
        if (code == 0)
            return amq__qf_corrupt(e->t, rd, "a slot holds no code",
                                   it.pos - c);
        bool again = !first && (fp >> e->pb) == prev;
        if (!e->groups)
            e->by_len[code_len(code, cw)] += c;
        else if (!again)
            e->by_len[code_len(code, cw)]++;
        prev = fp >> e->pb;
        first = false;
    }
    return AMQ_OK;
}

amq_status amq__eqf_load(amq__rd *rd, const char *name, const uint8_t *payload,
                         size_t len, bool view, unsigned pb_max, bool groups,
                         size_t size, const amq_options *opt, amq_eqf **out) {
    uint64_t base, keys;
    uint32_t shape, pb;
    amq_qf *t = NULL;
    amq_eqf *e;
    amq_options o2 = *opt;
    uint64_t n0, tail = 0;
    o2.flags &= ~AMQ_OPT_CONCURRENT;
    if (rd->len - rd->pos < AMQ__EQF_PARAMS_LEN)
        return amq__rd_bad(rd, amq__rd_at(rd), "a short parameter block");
    /* the table's bytes need its tail, in the block's last word */
    n0 = amq__get_u64(rd->p + rd->pos);
    uint32_t blocks = amq__get_u32(rd->p + rd->pos + 44) >> 8;
    if (blocks != 0)
        tail = amq__qf_default_tail(n0) + 64 * (uint64_t)blocks;
    AMQ_RETURN_IF_ERR(
        amq__qf_load_table_tail(rd, name, payload, len, tail, view, &o2, &t));
    size_t at_base = amq__rd_u64(rd, &base);
    size_t at_keys = amq__rd_u64(rd, &keys);
    size_t at_shape = amq__rd_u32(rd, &shape);
    size_t at_pb = amq__rd_u32(rd, &pb);
    amq_status st = AMQ_OK;
    pb &= 0xff;
    amq__eqf_plan plan = {shape & 0xff, shape >> 24, (shape >> 8) & 0xff};
    unsigned k = (shape >> 16) & 0xff;
    if (pb > pb_max || pb + 2 > t->width)
        st = amq__rd_bad(rd, at_pb, "%u payload bits in %u-bit slots", pb,
                         t->width);
    else if (plan.l0 < 1 || plan.l1 < plan.l0 || plan.l1 > AMQ__EQF_MAX_W - 1 ||
             plan.growth > AMQ__EQF_MAX_GROWTH)
        st = amq__rd_bad(rd, at_shape, "fingerprint plan %u/%u/%u", plan.l0,
                         plan.l1, plan.growth);
    else if (base < 64 || base % 64 != 0 || k > 56 ||
             (t->nslots >> k) != base || (base << k) != t->nslots)
        st = amq__rd_bad(
            rd, at_base, "%llu first slots do not double to %llu in %u",
            (unsigned long long)base, (unsigned long long)t->nslots, k);
    else if (t->width != len_at(&plan, k) + 1 + pb)
        st = amq__rd_bad(rd, at_shape,
                         "%u-bit slots for %u-bit fingerprints and %u below",
                         t->width, len_at(&plan, k), pb);
    else if (keys > t->o.items)
        st = amq__rd_bad(rd, at_keys, "%llu keys in %llu entries",
                         (unsigned long long)keys,
                         (unsigned long long)t->o.items);
    if (st != AMQ_OK) {
        amq__qf_destroy(&t->o);
        return st;
    }
    AMQ_RETURN_IF_ERR(wrap(size, t, base, plan, k, pb, groups, &o2, &e));
    e->o.items = keys;
    st = check_codes(e, rd);
    if (st != AMQ_OK) {
        amq__eqf_destroy(&e->o);
        return st;
    }
    *out = e;
    return AMQ_OK;
}

static amq_status t_load(const amq__type *self, amq__rd *rd,
                         const uint8_t *payload, size_t len, bool view,
                         const amq_options *opt, amq__obj **out) {
    amq_eqf *e;
    (void)self;
    AMQ_RETURN_IF_ERR(amq__rd_expect(rd, AMQ__EQF_PARAMS_LEN));
    AMQ_RETURN_IF_ERR(amq__eqf_load(rd, "eqf", payload, len, view, 0, false,
                                    sizeof *e, opt, &e));
    *out = &e->o;
    return AMQ_OK;
}

#define PARAMS                                                                 \
    "q=LOG2_SLOTS (6-56), slots=HOME_SLOTS (multiple of 64, instead of q; "    \
    "the first size), l=FINGERPRINT_BITS (of new keys; default from fpr and "  \
    "growth), growth=DOUBLINGS (0-40, default 10: the bound stays under fpr "  \
    "to 2^growth times the first capacity, under 2 fpr beyond; raised to "     \
    "what l covers when l comes from fpr)"

const amq__type amq__type_eqf = {
    .info = {.name = "eqf",
             .type_id = AMQ__ID_eqf,
             .caps = AMQ_CAP_REMOVE | AMQ_CAP_COUNT | AMQ_CAP_GROW,
             .summary = "expandable quotient filter (doubles when full, "
                        "keeps its rate)",
             .params = PARAMS,
             .default_hash = AMQ_HASH_XXH3},
    .reads = 2,
    .reads_text = "1-2",
    .kernel_shapes = amq__defaults_only,
    .create = t_create,
    .load = t_load,
    .destroy = amq__eqf_destroy,
    .add = eqf_add,
    .add_batch = eqf_add_batch,
    .contains = eqf_contains,
    .contains_batch = eqf_contains_batch,
    .remove = eqf_remove,
    .count = eqf_count,
    .fpr_bound = eqf_fpr_bound,
    .size_bytes = amq__eqf_payload_size,
    .describe = t_describe,
    .curve = t_curve,
    .params_write = t_params_write,
    .payload_size = amq__eqf_payload_size,
    .payload_write = amq__eqf_payload_write,
};
