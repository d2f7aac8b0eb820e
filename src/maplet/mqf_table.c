/*
 * mqf_table.c — a quotient maplet as a whole: enumeration, and the three
 * passes that rebuild it in fingerprint order (merge, resize, dropping a
 * value), its validation on load, and the exact mode's key bijection.
 *
 * Rebuilding. Entries come out of a table in fingerprint order (a group
 * in combine mode, a slot in multiset mode, whose slots are also sorted by
 * value), so a new table is written left to right: each run starts at
 * max(its quotient, the end of the previous run), then the offsets are
 * computed once (writer_enter, amq__qf_build_finish). The layout is a function of the
 * stored map or multiset, so a merge gives the very bytes that putting
 * everything into one maplet gives. The new table is built aside and
 * adopted, so a failure leaves the maplet as it was.
 */
#include <string.h>

#include "core/cursor.h"
#include "maplet/mqf.h"

/* ---- entries in fingerprint order -------------------------------------------- */

/* Iteration state st: next quotient, next slot, end of the current run,
 * inside a run. One step yields an entry: a group (combine mode; whole:
 * also a multiset's group) or one slot (multiset mode). */
static bool mq_step(const amq_qf *f, uint64_t st[4], uint64_t *fp, mgroup *g,
                    bool whole) {
    if (!st[3]) {
        uint64_t q = next_occupied(f, st[0], f->nslots);
        if (q >= f->nslots)
            return false;
        st[0] = q;
        st[1] = q > st[1] ? q : st[1];
        st[2] = select_rend(f, st[1], 1, f->nblocks) + 1;
        st[3] = 1;
    }
    if (f->multiset && !whole) {
        mq_u128 s = slot_get2(f, st[1]);
        *g = (mgroup){mq_rem(f, s), 1, mq_val(f, s), 1};
    } else if (!mq_decode(f, st[1], st[2], g)) { /* only if unvalidated */
        *g = (mgroup){mq_rem(f, slot_get2(f, st[1])), 1, 0, 1};
    }
    *fp = st[0] << f->rbits | g->rem;
    st[1] += g->len;
    if (st[1] >= st[2]) {
        st[3] = 0;
        st[0]++;
    }
    return true;
}

static bool mq_entry(const amq_qf *f, uint64_t st[4], uint64_t *fp, mgroup *g) {
    return mq_step(f, st, fp, g, false);
}

/* The next fingerprint with its combined value and its stored pairs. */
bool amq__mq_next(const amq__obj *o, uint64_t st[4], uint64_t *fp, uint64_t *v,
                  uint64_t *entries) {
    mgroup g;
    if (!mq_step((const amq_qf *)o, st, fp, &g, true))
        return false;
    *v = g.value;
    *entries = g.n;
    return true;
}

/* ---- writing a table in fingerprint order ------------------------------------- */

typedef struct mbuild {
    amq_qf *f;
    qf_writer w;
    uint64_t last_fp;
    bool any;
} mbuild;

/* Append entry (fp, value) after every smaller one: a group in combine
 * mode, a slot in multiset mode (equal fingerprints by increasing value).
 * AMQ_ERR_FULL past the table. */
static amq_status mb_append(mbuild *b, uint64_t fp, uint64_t value) {
    amq_qf *f = b->f;
    uint64_t q = fp >> f->rbits, rem = fp & f->rmask;
    uint64_t len = mq_counters(f) ? mq_sum_len(f, value) : 1;
    if (q >= f->nslots)
        return AMQ_ERR_INVALID;
    writer_enter(f, &b->w, q);
    if (b->w.pos + len > f->tslots)
        return AMQ_ERR_FULL;
    if (mq_counters(f))
        mq_sum_write(f, b->w.pos, rem, value);
    else
        slot_set2(f, b->w.pos, mq_word(f, rem, value));
    b->w.pos += len;
    f->distinct += !b->any || fp != b->last_fp;
    f->used += len;
    b->last_fp = fp;
    b->any = true;
    return AMQ_OK;
}

/* An empty table shaped as f (n home slots, r remainder bits) with f's
 * mode, allocator and flags. */
static amq_status mq_empty_like(const amq_qf *f, uint64_t n, unsigned r,
                                mbuild *b) {
    amq_options opt;
    amq__qf_opts_like(f, &opt);
    memset(b, 0, sizeof *b);
    AMQ_RETURN_IF_ERR(
        amq__qf_alloc_v(n, r, f->vbits, false, &opt, NULL, &b->f));
    b->f->mop = f->mop;
    b->f->multiset = f->multiset;
    b->f->kbits = f->kbits;
    return AMQ_OK;
}

/* Finish b's table with `items` and put it in f's place; or, after a
 * failure st, drop it. */
static amq_status mq_swap_in(amq_qf *f, mbuild *b, uint64_t items,
                             amq_status st) {
    if (st != AMQ_OK) {
        amq__qf_destroy(&b->f->o);
        return st;
    }
    amq__qf_build_finish(b->f, &b->w);
    b->f->o.items = items;
    amq__qf_adopt(f, b->f);
    return AMQ_OK;
}

/* ---- merge, resize, drop ------------------------------------------------------- */

static bool same_shape(const amq_qf *a, const amq_qf *b) {
    return a->nslots == b->nslots && a->rbits == b->rbits &&
           a->vbits == b->vbits && a->mop == b->mop &&
           a->multiset == b->multiset && a->kbits == b->kbits;
}

/* Entry a before entry b? Fingerprint order, then value (multiset). */
static bool mq_before(uint64_t fa, uint64_t va, uint64_t fb, uint64_t vb) {
    return fa < fb || (fa == fb && va < vb);
}

/* dst (+)= src, a union only. */
amq_status amq__mq_merge(amq__obj *dobj, const amq__obj *sobj,
                         amq__merge_op op) {
    amq_qf *dst = (amq_qf *)dobj;
    const amq_qf *src = (const amq_qf *)sobj;
    uint64_t sa[4] = {0}, sb[4] = {0}, fa = 0, fb = 0, items;
    mgroup ga, gb;
    mbuild b;
    if (op != AMQ__UNION)
        return AMQ_ERR_UNSUPPORTED;
    if (!same_shape(dst, src))
        return AMQ_ERR_INCOMPATIBLE;
    if (__builtin_add_overflow(qf_total(dst, QF_ITEMS), qf_total(src, QF_ITEMS),
                               &items))
        return AMQ_ERR_OVERFLOW;
    AMQ_RETURN_IF_ERR(mq_empty_like(dst, dst->nslots, dst->rbits, &b));
    bool ha = mq_entry(dst, sa, &fa, &ga), hb = mq_entry(src, sb, &fb, &gb);
    amq_status st = AMQ_OK;
    while (st == AMQ_OK && (ha || hb)) {
        if (ha && hb && fa == fb && !dst->multiset) {
            bool over = false;
            uint64_t v = mq_combine(dst->mop, ga.value, gb.value, &over);
            st = over ? AMQ_ERR_OVERFLOW : mb_append(&b, fa, v);
            ha = mq_entry(dst, sa, &fa, &ga);
            hb = mq_entry(src, sb, &fb, &gb);
        } else if (ha && (!hb || mq_before(fa, ga.value, fb, gb.value) ||
                          (fa == fb && ga.value == gb.value))) {
            st = mb_append(&b, fa, ga.value);
            ha = mq_entry(dst, sa, &fa, &ga);
        } else {
            st = mb_append(&b, fb, gb.value);
            hb = mq_entry(src, sb, &fb, &gb);
        }
    }
    return mq_swap_in(dst, &b, items, st);
}

amq_status amq__mq_resize(amq__obj *o) {
    amq_qf *f = (amq_qf *)o;
    uint64_t st4[4] = {0}, fp;
    mgroup g;
    mbuild b;
    if (f->rbits < 2)
        return AMQ_ERR_INVALID;
    if (f->nslots > (UINT64_C(1) << 55))
        return AMQ_ERR_OVERFLOW;
    AMQ_RETURN_IF_ERR(mq_empty_like(f, f->nslots * 2, f->rbits - 1, &b));
    amq_status st = AMQ_OK;
    while (st == AMQ_OK && mq_entry(f, st4, &fp, &g))
        st = mb_append(&b, fp, g.value);
    return mq_swap_in(f, &b, qf_total(f, QF_ITEMS), st);
}

/* Keep the entries (groups in combine mode, pairs in multiset mode)
 * whose value is in [lo, hi] (out: the one value to drop), in one pass
 * built aside. Items afterwards: the kept pairs in multiset mode, the sum
 * of the kept values for a sum in combine mode, else the kept entries. */
static inline amq_status mq_keep(amq_qf *f, uint64_t lo, uint64_t hi,
                                 bool out) {
    uint64_t st4[4] = {0}, fp, kept = 0;
    mgroup g;
    mbuild b;
    AMQ_RETURN_IF_ERR(mq_empty_like(f, f->nslots, f->rbits, &b));
    bool sum = mq_counters(f);
    amq_status st = AMQ_OK;
    while (st == AMQ_OK && mq_entry(f, st4, &fp, &g))
        if ((g.value >= lo && g.value <= hi) != out) {
            st = mb_append(&b, fp, g.value);
            kept += sum ? g.value : 1;
        }
    return mq_swap_in(f, &b, kept, st);
}

/* A value wider than v bits is in no pair: AMQ_ERR_INVALID in multiset
 * mode, where dropping is defined. */
amq_status amq__mq_drop_value(amq__obj *o, uint64_t v) {
    amq_qf *f = (amq_qf *)o;
    if (v > f->vmask)
        return f->multiset ? AMQ_ERR_INVALID : AMQ_ERR_UNSUPPORTED;
    if (!f->multiset)
        return AMQ_ERR_UNSUPPORTED;
    return mq_keep(f, v, v, true);
}

amq_status amq__mq_keep_values(amq__obj *o, uint64_t lo, uint64_t hi) {
    return mq_keep((amq_qf *)o, lo, hi, false);
}

/* ---- validation of a loaded table ------------------------------------------------ */

/* Sum counters: the group re-encodes to the very same slots (compared,
 * not rewritten: a view's table is read-only). */
static bool mq_canonical(const amq_qf *f, uint64_t pos, const mgroup *g) {
    mq_u128 w[QF_MAX_GROUP];
    if (g->len == 1)
        return g->value != 0;
    if (g->len > QF_MAX_GROUP || mq_sum_len(f, g->value) != g->len)
        return false;
    mq_sum_encode(f, g->rem, g->value, w);
    for (uint64_t i = 0; i < g->len; i++)
        if (slot_get2(f, pos + i) != w[i])
            return false;
    return true;
}

/* Multiset group: values do not decrease. */
static bool mq_sorted(const amq_qf *f, uint64_t pos, const mgroup *g) {
    for (uint64_t i = pos + 1; i < pos + g->len; i++)
        if (mq_val(f, slot_get2(f, i)) < mq_val(f, slot_get2(f, i - 1)))
            return false;
    return true;
}

static amq_status mq_check_group(amq_qf *f, uint64_t pos, const mgroup *g,
                                 const amq__rd *r) {
    if (mq_counters(f) && !mq_canonical(f, pos, g))
        return amq__qf_corrupt(f, r, "non-canonical counter", pos);
    if (f->multiset && !mq_sorted(f, pos, g))
        return amq__qf_corrupt(f, r, "values out of order", pos);
    return AMQ_OK;
}

/* Every group of run [rs, re) decodes, is canonical, and remainders
 * increase; counts items (sum: the values), distinct and used slots. */
static amq_status mq_check_run(amq_qf *f, uint64_t rs, uint64_t re,
                               const amq__rd *r) {
    uint64_t pos = rs, prev = 0;
    while (pos < re) {
        mgroup g;
        if (!mq_decode(f, pos, re, &g))
            return amq__qf_corrupt(f, r, "undecodable group", pos);
        if (pos > rs && g.rem <= prev)
            return amq__qf_corrupt(f, r, "remainders out of order", pos);
        AMQ_RETURN_IF_ERR(mq_check_group(f, pos, &g, r));
        uint64_t w = mq_counters(f) ? g.value : g.n;
        if (__builtin_add_overflow(f->o.items, w, &f->o.items))
            return amq__qf_corrupt(f, r, "item count overflow", pos);
        f->distinct++;
        f->used += g.len;
        prev = g.rem;
        pos += g.len;
    }
    return AMQ_OK;
}

/* The table's invariants, with items recounted: the sum of the values
 * for sum counters, the stored pairs in multiset mode, and in combine
 * mode with max, min or or the fingerprints (a floor for the puts). */
amq_status amq__mq_validate(amq_qf *f, const amq__rd *r) {
    return amq__qf_validate_with(f, r, mq_check_run);
}

/* ---- exact mode: a bijection of K-bit keys ----------------------------------------- */

#define EX_MUL1 0xbf58476d1ce4e5b9ULL
#define EX_MUL2 0x94d049bb133111ebULL

static uint64_t ex_mask(unsigned k) {
    return k >= 64 ? ~0ULL : (1ULL << k) - 1;
}

/* The inverse of an odd number mod 2^64 (Newton: each step doubles the
 * correct low bits, from 3 to 96). */
static uint64_t ex_inverse(uint64_t a) {
    uint64_t x = a;
    for (int i = 0; i < 5; i++)
        x *= 2 - a * x;
    return x;
}

/* y = x ^ (x >> s) undone within k bits. */
static uint64_t ex_unshift(uint64_t y, unsigned s, unsigned k) {
    uint64_t x = y;
    for (unsigned t = s; t < k; t += s)
        x = y ^ (x >> s);
    return x;
}

/* A bijection of [0, 2^k): xor-shifts and odd multipliers mod 2^k, so
 * clustered keys (poly-A k-mers, consecutive ids) spread over the
 * quotients. */
static uint64_t ex_mix(uint64_t x, unsigned k) {
    uint64_t m = ex_mask(k);
    unsigned s = (k + 1) / 2;
    x ^= x >> s;
    x = (x * EX_MUL1) & m;
    x ^= x >> s;
    x = (x * EX_MUL2) & m;
    x ^= x >> s;
    return x;
}

static uint64_t ex_unmix(uint64_t x, unsigned k) {
    uint64_t m = ex_mask(k);
    unsigned s = (k + 1) / 2;
    x = ex_unshift(x, s, k);
    x = (x * ex_inverse(EX_MUL2)) & m;
    x = ex_unshift(x, s, k);
    x = (x * ex_inverse(EX_MUL1)) & m;
    return ex_unshift(x, s, k);
}

/* The hash of key < 2^K: its mix at the top of the 64 bits.
 * AMQ_ERR_UNSUPPORTED outside exact mode, AMQ_ERR_INVALID for a wider
 * key. */
amq_status amq__mq_exact_hash(const amq__obj *o, uint64_t key, uint64_t *h) {
    const amq_qf *f = (const amq_qf *)o;
    if (f->kbits == 0)
        return AMQ_ERR_UNSUPPORTED;
    if (f->kbits < 64 && key >> f->kbits != 0)
        return AMQ_ERR_INVALID;
    uint64_t x = ex_mix(key, f->kbits);
    *h = f->kbits >= 64 ? x : x << (64 - f->kbits);
    return AMQ_OK;
}

/* f = floor(x N 2^r / 2^K) with N 2^r >= 2^K, so x = ceil(f 2^K / (N 2^r)). */
amq_status amq__mq_exact_key(const amq__obj *o, uint64_t fp, uint64_t *key) {
    const amq_qf *f = (const amq_qf *)o;
    if (f->kbits == 0)
        return AMQ_ERR_UNSUPPORTED;
    mq_u128 num = (mq_u128)fp << f->kbits;
    mq_u128 den = (mq_u128)f->nslots << f->rbits;
    *key = ex_unmix((uint64_t)((num + den - 1) / den), f->kbits);
    return AMQ_OK;
}
