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
 * L1 u8 | 0 u32; the payload is the qf table. Loading validates the table
 * in full, that N = N0 2^K and w = L(K) + 1, that no code is 0, and
 * recounts the lengths.
 */
#include <math.h>
#include <string.h>

#include "fingerprint/qf_query.h"
#include "fingerprint/qf_update.h"
#include "type/type.h"

#define EQF_DEFAULT_GROWTH 10u
#define EQF_MAX_GROWTH 40u
#define EQF_MAX_W 56u /* the qf's fast slot paths */

/* Fingerprint lengths: l0 for the first table's keys, l1 for those added
 * after doublings 1..growth, then l1 + e(K) (l1 >= l0; a filter made
 * from a target has l1 = l0, one made from a full qf its remainder
 * length as l0). */
typedef struct eqf_plan {
    unsigned l0, l1, growth;
} eqf_plan;

typedef struct amq_eqf {
    amq__obj o; /* o.items: keys held (added minus removed) */
    amq_qf *t;
    uint64_t base; /* N0 */
    eqf_plan plan;
    unsigned k;          /* doublings so far */
    uint64_t by_len[64]; /* entries (copies included) by length */
} amq_eqf;

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
static unsigned len_at(const eqf_plan *p, unsigned k) {
    return k == 0           ? p->l0
           : k <= p->growth ? p->l1
                            : p->l1 + extra_bits(k, p->growth);
}

static inline unsigned code_len(uint64_t v, unsigned w) {
    return w - 1 - (unsigned)__builtin_ctzll(v);
}

/* h's quotient and its code at full length w - 1. */
static inline void key_code(const amq_qf *t, uint64_t h, uint64_t *q,
                            uint64_t *x) {
    unsigned __int128 p = (unsigned __int128)h * t->nslots;
    *q = (uint64_t)(p >> 64);
    *x = ((uint64_t)p >> (65 - t->width)) << 1 | 1;
}

static inline bool code_matches(uint64_t v, uint64_t x) {
    return (v ^ x) < (v & (0 - v)) << 1;
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

/* The matching entries of run q for code x: how many, and the slot of
 * the longest (*at; QF_NOWHERE when none). stop_at_first for queries. */
static inline uint64_t matches(const amq_qf *t, uint64_t q, uint64_t x,
                               bool stop_at_first, uint64_t *at) {
    uint64_t rs, re, n = 0, best = 0;
    *at = QF_NOWHERE;
    if (!occ_get(t, q))
        return 0;
    run_bounds(t, q, &rs, &re);
    for (uint64_t i = rs; i < re; i++) {
        uint64_t v = slot_get(t, i);
        if (!code_matches(v, x))
            continue;
        n++;
        if (stop_at_first)
            return n;
        uint64_t low = v & (0 - v); /* longer entries have lower delimiters */
        if (*at == QF_NOWHERE || low < best) {
            best = low;
            *at = i;
        }
    }
    return n;
}

/* The exact answer: the run slot by slot (out of line: it holds nothing
 * of the word-wide test). */
static __attribute__((noinline)) bool has_exact(const amq_qf *t, uint64_t q,
                                                uint64_t x) {
    uint64_t at;
    return matches(t, q, x, true, &at) != 0;
}

/* Run q (occupied, in a fast block) holds a code matching x? Every field
 * of run q's word at once (qf_ops.c describes the word and the zero-field
 * test): lb = each field's lowest set bit (v & (~v + 1)), keep = the bits
 * above it, and a field matches iff (v ^ x) & keep is 0. A borrow or carry
 * leaves a field only from one that is 0, and no code is 0, so it can
 * only spoil fields after the run, which the mask drops. Runs the word
 * cannot hold take the loop. */
static inline __attribute__((always_inline)) bool has_run(const amq_qf *t,
                                                          uint64_t q,
                                                          uint64_t x,
                                                          bool isa) {
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
    return has_exact(t, q, x);
}

static inline __attribute__((always_inline)) bool lookup(const amq_eqf *e,
                                                         uint64_t h, bool isa) {
    const amq_qf *t = e->t;
    uint64_t q, x;
    key_code(t, h, &q, &x);
    prefetch_block(t, q);
    if ((q >> 6) >= t->fast_blocks)
        return has_exact(t, q, x);
    if (!occ_get(t, q))
        return false;
    return has_run(t, q, x, isa);
}

static QF_ANY bool contains_any(const amq__obj *o, uint64_t h) {
    return lookup((const amq_eqf *)o, h, false);
}
static QF_ISA bool contains_isa(const amq__obj *o, uint64_t h) {
    return lookup((const amq_eqf *)o, h, true);
}
/* AMQ_OPT_SCALAR: the loop over the run's slots, the reference. */
static bool contains_ref(const amq__obj *o, uint64_t h) {
    const amq_eqf *e = (const amq_eqf *)o;
    uint64_t q, x;
    key_code(e->t, h, &q, &x);
    return has_exact(e->t, q, x);
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
    const amq_eqf *e = (const amq_eqf *)o;
    uint64_t q, x, at;
    key_code(e->t, h, &q, &x);
    *out = matches(e->t, q, x, false, &at);
    return AMQ_OK;
}

/* ---- doubling ---------------------------------------------------------------- */

typedef struct emitter {
    amq_qf *g;
    qf_writer w;
    uint64_t last; /* the last code written in the current run */
    uint64_t *by_len;
} emitter;

static amq_status emit(emitter *m, uint64_t q, uint64_t v, uint64_t c) {
    amq_qf *g = m->g;
    bool same = m->w.run && m->w.q == q && m->last == v;
    writer_enter(g, &m->w, q);
    if (c > g->tslots - m->w.pos)
        return AMQ_ERR_FULL;
    for (uint64_t i = 0; i < c; i++)
        slot_set(g, m->w.pos++, v);
    m->last = v;
    g->o.items += c;
    g->used += c;
    g->distinct += !same;
    m->by_len[code_len(v, g->width)] += c;
    return AMQ_OK;
}

/* Run q of the old table t, slots [rs, re), into run 2q + b of g: the
 * entries whose first bit is b, shortened and shifted into g's width, and
 * the void entries' copies (voids of them), merged in code order. */
static amq_status emit_half(emitter *m, const amq_qf *t, uint64_t q,
                            uint64_t rs, uint64_t re, unsigned b,
                            uint64_t voids) {
    unsigned w = t->width, up = m->g->width - w;
    uint64_t vcode = UINT64_C(1) << (w - 1), nvoid = vcode << up;
    for (uint64_t i = rs; i < re; i++) {
        uint64_t v = slot_get(t, i);
        if (v == vcode || (v >> (w - 1)) != b)
            continue;
        uint64_t nv = ((v << 1) & t->wmask) << up;
        if (voids != 0 && nvoid <= nv) {
            AMQ_RETURN_IF_ERR(emit(m, 2 * q + b, nvoid, voids));
            voids = 0;
        }
        AMQ_RETURN_IF_ERR(emit(m, 2 * q + b, nv, 1));
    }
    return voids != 0 ? emit(m, 2 * q + b, nvoid, voids) : AMQ_OK;
}

/* 2N slots of width wn (>= the old one) from e's table, run by run in
 * quotient order (run q starts at max(q, the previous run's end) and ends
 * at the next run end); swapped in only when all of it is written. */
static amq_status expand(amq_eqf *e, unsigned wn) {
    amq_qf *t = e->t, *g;
    amq_options opt;
    uint64_t by_len[64] = {0};
    if (t->nslots > (UINT64_C(1) << 55))
        return AMQ_ERR_OVERFLOW;
    amq__qf_opts_like(t, &opt);
    amq_status st = amq__qf_alloc(t->nslots * 2, wn, false, &opt, NULL, &g);
    if (st != AMQ_OK)
        return st == AMQ_ERR_INVALID ? AMQ_ERR_OVERFLOW : st;
    emitter m = {g, {0, 0, false}, 0, by_len};
    uint64_t vcode = UINT64_C(1) << (t->width - 1), end = 0;
    for (uint64_t q = next_occupied(t, 0, t->nslots);
         st == AMQ_OK && q < t->nslots;
         q = next_occupied(t, q + 1, t->nslots)) {
        uint64_t rs = q > end ? q : end, voids = 0;
        end = next_rend(t, rs, t->nblocks) + 1;
        for (uint64_t i = rs; i < end; i++)
            voids += slot_get(t, i) == vcode;
        st = emit_half(&m, t, q, rs, end, 0, voids);
        if (st == AMQ_OK)
            st = emit_half(&m, t, q, rs, end, 1, voids);
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

/* One doubling, at the width of the next doubling's keys. */
static amq_status grow(amq_eqf *e) {
    unsigned ln = len_at(&e->plan, e->k + 1);
    unsigned wn = ln + 1 > e->t->width ? ln + 1 : e->t->width;
    if (wn > EQF_MAX_W)
        return AMQ_ERR_OVERFLOW;
    return expand(e, wn);
}

static amq_status eqf_add(amq__obj *o, uint64_t h) {
    amq_eqf *e = (amq_eqf *)o;
    uint64_t q, x;
    if (needs_room(e))
        AMQ_RETURN_IF_ERR(grow(e));
    key_code(e->t, h, &q, &x);
    amq_status st = amq__qf_update_qr(e->t, q, x, true);
    if (st == AMQ_ERR_FULL) { /* a cluster at the table's end: double */
        AMQ_RETURN_IF_ERR(grow(e));
        key_code(e->t, h, &q, &x);
        st = amq__qf_update_qr(e->t, q, x, true);
    }
    if (st != AMQ_OK)
        return st;
    e->by_len[e->t->width - 1]++;
    e->o.items++;
    return AMQ_OK;
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
        amq_status st = eqf_add(o, h[i]);
        if (st != AMQ_OK) {
            *done = i;
            return st;
        }
    }
    *done = n;
    return AMQ_OK;
}

static amq_status eqf_remove(amq__obj *o, uint64_t h) {
    amq_eqf *e = (amq_eqf *)o;
    uint64_t q, x, at;
    key_code(e->t, h, &q, &x);
    if (e->o.items == 0 || matches(e->t, q, x, false, &at) == 0)
        return AMQ_ERR_NOT_FOUND;
    uint64_t v = slot_get(e->t, at);
    AMQ_RETURN_IF_ERR(amq__qf_update_qr(e->t, q, v, false));
    e->by_len[code_len(v, e->t->width)]--;
    e->o.items--;
    return AMQ_OK;
}

static double eqf_fpr_bound(const amq__obj *o) {
    const amq_eqf *e = (const amq_eqf *)o;
    double s = 0.0;
    for (unsigned l = 0; l < 64; l++)
        s += ldexp((double)e->by_len[l], -(int)l);
    double p = s / (double)e->t->nslots + (double)e->t->used * 0x1p-64;
    return p < 1.0 ? p : 1.0;
}

/* ---- construction ------------------------------------------------------------- */

static void eqf_destroy(amq__obj *o) {
    amq_eqf *e = (amq_eqf *)o;
    if (e == NULL)
        return;
    amq__qf_destroy(&e->t->o);
    amq__obj_free(&e->o);
}

static amq_status wrap(amq_qf *t, uint64_t base, eqf_plan plan, unsigned k,
                       const amq_options *opt, amq_eqf **out) {
    amq_eqf *e;
    amq_status st = amq__obj_new(sizeof *e, opt, (void **)&e);
    if (st != AMQ_OK) {
        amq__qf_destroy(&t->o);
        return st;
    }
    e->t = t;
    e->base = base;
    e->plan = plan;
    e->k = k;
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

/* L0 for a target: the least l with planned(l, *growth) <= fpr; then
 * *growth is raised to the most doublings that l still covers (the
 * rounding up of l pays for them). */
static unsigned l0_for(double fpr, unsigned *growth) {
    double l = ceil(log2(planned(0, *growth) / fpr));
    unsigned r = l < 1 ? 1u : l > EQF_MAX_W - 1 ? EQF_MAX_W - 1 : (unsigned)l;
    while (*growth < EQF_MAX_GROWTH && planned(r, *growth + 1) <= fpr)
        (*growth)++;
    return r;
}

static amq_status t_create(const amq__type *self, amq__spec *spec,
                           uint64_t capacity, double fpr,
                           const amq_options *opt, amq__obj **out,
                           amq_diag *diag) {
    static const amq__qf_bits key = {"l", 1, EQF_MAX_W - 1};
    uint64_t n = 0, growth = EQF_DEFAULT_GROWTH;
    unsigned l = 0;
    bool given;
    amq_options o2 = *opt;
    amq_qf *t;
    amq_eqf *e;
    (void)self;
    o2.flags &= ~AMQ_OPT_CONCURRENT;
    AMQ_RETURN_IF_ERR(
        amq__spec_u64(spec, "growth", 0, EQF_MAX_GROWTH, &growth, NULL, diag));
    AMQ_RETURN_IF_ERR(
        amq__qf_shape(spec, capacity, fpr, &key, "eqf", &n, &l, &given, diag));
    if (!given) {
        unsigned gr = (unsigned)growth;
        l = l0_for(fpr, &gr);
        growth = gr;
    }
    AMQ_RETURN_IF_ERR(amq__qf_alloc_diag(n, l + 1, false, &o2, &t, diag));
    eqf_plan plan = {l, l, (unsigned)growth};
    AMQ_RETURN_IF_ERR(wrap(t, n, plan, 0, &o2, &e));
    *out = &e->o;
    return AMQ_OK;
}

/* ---- from a full qf ------------------------------------------------------------ */

/* The plan of a filter whose first keys have l0 bits (a qf's remainders)
 * and bound `first` (their share, which doublings do not change): later
 * keys get the least l1 whose growth (the doublings until the bound
 * passes b) reaches the default, b the target or, when the first keys'
 * bound is already above it, twice that bound. */
static eqf_plan plan_after(unsigned l0, double first, double target) {
    double a = AMQ_QF_MAX_LOAD;
    double b = target > first ? target : 2.0 * first;
    eqf_plan p = {l0, l0, 0};
    for (; p.l1 < EQF_MAX_W - 1; p.l1++) {
        double h = 2.0 * (b - first) / a * ldexp(1.0, (int)p.l1);
        if (h >= EQF_DEFAULT_GROWTH) {
            p.growth = h >= EQF_MAX_GROWTH ? EQF_MAX_GROWTH : (unsigned)h;
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
    if (q->rbits + 1 > EQF_MAX_W)
        return AMQ_ERR_OVERFLOW;
    o2.flags &= ~AMQ_OPT_CONCURRENT;
    AMQ_RETURN_IF_ERR(
        amq__qf_alloc(q->nslots, q->rbits + 1, false, &o2, NULL, &g));
    emitter m = {g, {0, 0, false}, 0, by_len};
    amq_status st = AMQ_OK;
    for (uint64_t x = next_occupied(q, 0, q->nslots);
         st == AMQ_OK && x < q->nslots;
         x = next_occupied(q, x + 1, q->nslots)) {
        uint64_t rs = x > end ? x : end;
        end = next_rend(q, rs, q->nblocks) + 1;
        for (uint64_t i = rs; st == AMQ_OK && i < end; i++)
            st = emit(&m, x, slot_get(q, i) << 1 | 1, 1);
    }
    if (st != AMQ_OK) {
        amq__qf_destroy(&g->o);
        return st;
    }
    amq__qf_build_finish(g, &m.w);
    double first =
        ldexp((double)by_len[q->rbits], -(int)q->rbits) / (double)q->nslots;
    AMQ_RETURN_IF_ERR(
        wrap(g, q->nslots, plan_after(q->rbits, first, target), 0, &o2, &e));
    memcpy(e->by_len, by_len, sizeof by_len);
    e->o.items = qf_total(q, QF_ITEMS);
    *out = &e->o;
    return AMQ_OK;
}

/* ---- the frame ---------------------------------------------------------------- */

#define PARAMS_LEN (AMQ__QF_PARAMS_LEN + 24)

static void t_params_write(const amq__obj *o, amq__wr *w) {
    const amq_eqf *e = (const amq_eqf *)o;
    amq__qf_params_write(e->t, w);
    amq__wr_u64(w, e->base);
    amq__wr_u64(w, e->o.items);
    amq__wr_u32(w, e->plan.l0 | e->plan.growth << 8 | e->k << 16 |
                       e->plan.l1 << 24);
    amq__wr_u32(w, 0);
}

static size_t t_payload_size(const amq__obj *o) {
    return ((const amq_eqf *)o)->t->o.table_bytes;
}

static void t_payload_write(const amq__obj *o, uint8_t *dst) {
    const amq_eqf *e = (const amq_eqf *)o;
    memcpy(dst, e->t->o.table, e->t->o.table_bytes);
}

static size_t t_size_bytes(const amq__obj *o) {
    return ((const amq_eqf *)o)->t->o.table_bytes;
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
static amq_status t_curve(const amq__type *self, amq__spec *spec, double x,
                          bool inverse, double *out, amq_diag *diag) {
    uint64_t growth;
    double a = AMQ_QF_MAX_LOAD;
    (void)self;
    AMQ_RETURN_IF_ERR(
        amq__spec_u64(spec, "growth", 0, EQF_MAX_GROWTH, &growth, NULL, diag));
    if (inverse) {
        *out = (log2(a / x) + 1.0 + QF_META_BITS) / a;
        return AMQ_OK;
    }
    double p = a * exp2(-(a * x - 1.0 - QF_META_BITS));
    *out = p < 1.0 ? p : 1.0;
    return AMQ_OK;
}

/* Every code non-zero, and the counts by length. */
static amq_status check_codes(amq_eqf *e, const amq__rd *rd) {
    amq_qf_iter it;
    uint64_t fp, c;
    unsigned w = e->t->width;
    amq_qf_iter_init(e->t, &it);
    while (amq_qf_iter_next(&it, &fp, &c)) {
        uint64_t v = fp & ((UINT64_C(1) << w) - 1);
        if (v == 0)
            return amq__qf_corrupt(e->t, rd, "a slot holds no code",
                                   it.pos - c);
        e->by_len[code_len(v, w)] += c;
    }
    return AMQ_OK;
}

static amq_status t_load(const amq__type *self, amq__rd *rd,
                         const uint8_t *payload, size_t len, bool view,
                         const amq_options *opt, amq__obj **out) {
    uint64_t base, keys;
    uint32_t shape;
    amq_qf *t = NULL;
    amq_eqf *e;
    amq_options o2 = *opt;
    (void)self;
    o2.flags &= ~AMQ_OPT_CONCURRENT;
    AMQ_RETURN_IF_ERR(amq__rd_expect(rd, PARAMS_LEN));
    AMQ_RETURN_IF_ERR(amq__qf_load_table(rd, false, "eqf", payload, len, false,
                                         view, &o2, &t));
    size_t at_base = amq__rd_u64(rd, &base);
    size_t at_keys = amq__rd_u64(rd, &keys);
    size_t at_shape = amq__rd_u32(rd, &shape);
    amq_status st = amq__rd_zero32(rd);
    eqf_plan plan = {shape & 0xff, shape >> 24, (shape >> 8) & 0xff};
    unsigned k = (shape >> 16) & 0xff;
    if (st != AMQ_OK) {
        amq__qf_destroy(&t->o);
        return st;
    }
    if (plan.l0 < 1 || plan.l1 < plan.l0 || plan.l1 > EQF_MAX_W - 1 ||
        plan.growth > EQF_MAX_GROWTH)
        st = amq__rd_bad(rd, at_shape, "fingerprint plan %u/%u/%u", plan.l0,
                         plan.l1, plan.growth);
    else if (base < 64 || base % 64 != 0 || k > 56 ||
             (t->nslots >> k) != base || (base << k) != t->nslots)
        st = amq__rd_bad(
            rd, at_base, "%llu first slots do not double to %llu in %u",
            (unsigned long long)base, (unsigned long long)t->nslots, k);
    else if (t->width != len_at(&plan, k) + 1)
        st = amq__rd_bad(rd, at_shape, "%u-bit slots for %u-bit fingerprints",
                         t->width, len_at(&plan, k));
    else if (keys > t->o.items)
        st = amq__rd_bad(rd, at_keys, "%llu keys in %llu entries",
                         (unsigned long long)keys,
                         (unsigned long long)t->o.items);
    if (st != AMQ_OK) {
        amq__qf_destroy(&t->o);
        return st;
    }
    AMQ_RETURN_IF_ERR(wrap(t, base, plan, k, &o2, &e));
    e->o.items = keys;
    st = check_codes(e, rd);
    if (st != AMQ_OK) {
        eqf_destroy(&e->o);
        return st;
    }
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
    .destroy = eqf_destroy,
    .add = eqf_add,
    .add_batch = eqf_add_batch,
    .contains = eqf_contains,
    .contains_batch = eqf_contains_batch,
    .remove = eqf_remove,
    .count = eqf_count,
    .fpr_bound = eqf_fpr_bound,
    .size_bytes = t_size_bytes,
    .describe = t_describe,
    .curve = t_curve,
    .params_write = t_params_write,
    .payload_size = t_payload_size,
    .payload_write = t_payload_write,
};
