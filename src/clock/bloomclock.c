/*
 * bloomclock.c — the Bloom clock (L. Ramabaja, "The Bloom Clock", 2019):
 * a counting Bloom filter used as a logical timestamp.
 *
 *   tick(e):   cell[g_j(hash(e))] += 1 for j < k        (a local event)
 *   merge(o):  cell[i] = max(cell[i], o.cell[i])        (a receive)
 *   A <= B cell-wise  <=>  "A before B or a false positive"
 *   A, B not comparable  =>  concurrent, certainly
 *
 * Layout (paper §4, base-offset compression):
 *
 *   offset (u64)   cells: m * width bytes, width in {1, 2, 4, 8}
 *   +--------+     +----+----+----+----+----+----+ ... +----+
 *   |   3    |     |  1 |  0 |  0 |  2 |  4 |  1 |     |  0 |
 *   +--------+     +----+----+----+----+----+----+ ... +----+
 *   absolute cell i = offset + cells[i];  min(cells) == 0 always
 *
 * Invariants: some relative cell is 0 (after every change whose last zero
 * disappears, the minimum moves into the offset); offset + cell fits in 64
 * bits; rsum and zeros describe the cells exactly; a cell that would not
 * fit its width widens the whole array to the next width (never narrows
 * in memory: the wire encoding is compact anyway).
 *
 * History: a ring of hcap snapshots; the newest is always the current
 * timestamp (recorded at creation and after every change). A node's
 * timestamps only grow, so "snapshot dominates X" is monotone in age and
 * the oldest dominating snapshot is found by binary search.
 *
 * Probes: g_j(h) = reduce(mix64(h + (j+1) * golden), m): k well-mixed
 * functions of one 64-bit event hash (see bloom.c for why not h1 + j*h2).
 *
 * Failure modes: a change that needs memory (widening, a history slot for
 * a wider snapshot) allocates everything first and returns AMQ_ERR_NOMEM
 * with the clock untouched; an absolute value above 2^64 - 1 is
 * AMQ_ERR_OVERFLOW, again with the clock untouched.
 */
#include <math.h>
#include <string.h>

#include "clock/parts.h"
#include "core/bits.h"
#include "core/spec.h"

#define GOLDEN 0x9e3779b97f4a7c15ULL

/* ---- cells, parameterised by width ---------------------------------------- */

static inline uint64_t cell_get(const amq__bsnap *s, size_t i) {
    switch (s->width) {
    case 1: return s->cells[i];
    case 2: {
        uint16_t v;
        memcpy(&v, s->cells + 2 * i, 2);
        return v;
    }
    case 4: {
        uint32_t v;
        memcpy(&v, s->cells + 4 * i, 4);
        return v;
    }
    default: {
        uint64_t v;
        memcpy(&v, s->cells + 8 * i, 8);
        return v;
    }
    }
}

static inline void cell_set(amq__bsnap *s, size_t i, uint64_t v) {
    switch (s->width) {
    case 1: s->cells[i] = (uint8_t)v; break;
    case 2: {
        uint16_t x = (uint16_t)v;
        memcpy(s->cells + 2 * i, &x, 2);
        break;
    }
    case 4: {
        uint32_t x = (uint32_t)v;
        memcpy(s->cells + 4 * i, &x, 4);
        break;
    }
    default: memcpy(s->cells + 8 * i, &v, 8); break;
    }
}

/* Block access: one width dispatch per BLOCK cells keeps the hot loops
 * (merge, dominance) free of a per-cell switch. */
#define BLOCK 64

#define LOAD_LOOP(T)                                                           \
    for (size_t j = 0; j < n; j++) {                                           \
        T v;                                                                   \
        memcpy(&v, s->cells + (i0 + j) * sizeof(T), sizeof(T));                \
        out[j] = v;                                                            \
    }

static void cells_load(const amq__bsnap *s, size_t i0, size_t n,
                       uint64_t *out) {
    switch (s->width) {
    case 1: LOAD_LOOP(uint8_t) break;
    case 2: LOAD_LOOP(uint16_t) break;
    case 4: LOAD_LOOP(uint32_t) break;
    default: LOAD_LOOP(uint64_t) break;
    }
}
#undef LOAD_LOOP

#define STORE_LOOP(T)                                                          \
    for (size_t j = 0; j < n; j++) {                                           \
        T v = (T)in[j];                                                        \
        memcpy(s->cells + (i0 + j) * sizeof(T), &v, sizeof(T));                \
    }

static void cells_store(amq__bsnap *s, size_t i0, size_t n,
                        const uint64_t *in) {
    switch (s->width) {
    case 1: STORE_LOOP(uint8_t) break;
    case 2: STORE_LOOP(uint16_t) break;
    case 4: STORE_LOOP(uint32_t) break;
    default: STORE_LOOP(uint64_t) break;
    }
}
#undef STORE_LOOP

static uint8_t width_for(uint64_t max) {
    if (max <= UINT8_MAX)
        return 1;
    if (max <= UINT16_MAX)
        return 2;
    if (max <= UINT32_MAX)
        return 4;
    return 8;
}

static inline uint32_t probe(uint64_t h, uint32_t j, uint32_t m) {
    return (uint32_t)amq__reduce64(amq__mix64(h + (j + 1) * GOLDEN), m);
}

/* ---- snapshots ------------------------------------------------------------ */

/* Make room for m cells of `width` bytes in s, keeping its bytes (a ring
 * slot prepared for a change that then fails must still hold its entry). */
static amq_status snap_reserve(const amq__mem *mem, amq__bsnap *s, uint32_t m,
                               uint8_t width) {
    size_t need = (size_t)m * width;
    if (s->cap >= need)
        return AMQ_OK;
    uint8_t *p = amq__zalloc(mem, need);
    if (p == NULL)
        return AMQ_ERR_NOMEM;
    if (s->cap > 0)
        memcpy(p, s->cells, s->cap);
    amq__free(mem, s->cells, s->cap);
    s->cells = p;
    s->cap = need;
    return AMQ_OK;
}

static void snap_free(const amq__mem *mem, amq__bsnap *s) {
    amq__free(mem, s->cells, s->cap);
    memset(s, 0, sizeof *s);
}

/* dst := src (dst has room for m cells at src's width). */
static void snap_copy(amq__bsnap *dst, const amq__bsnap *src, uint32_t m) {
    dst->offset = src->offset;
    dst->rsum = src->rsum;
    dst->zeros = src->zeros;
    dst->width = src->width;
    memcpy(dst->cells, src->cells, (size_t)m * src->width);
}

static amq__u128 snap_sum(const amq__bsnap *s, uint32_t m) {
    return (amq__u128)s->offset * m + s->rsum;
}

/* Move the common minimum into the offset once no cell is 0 (never fails:
 * cells only shrink and the absolute values stay). */
static void snap_normalize(amq__bsnap *s, uint32_t m) {
    if (s->zeros > 0)
        return;
    uint64_t lo = UINT64_MAX;
    for (uint32_t i = 0; i < m; i++) {
        uint64_t v = cell_get(s, i);
        lo = v < lo ? v : lo;
    }
    uint32_t zeros = 0;
    for (uint32_t i = 0; i < m; i++) {
        uint64_t v = cell_get(s, i) - lo;
        cell_set(s, i, v);
        zeros += v == 0;
    }
    s->offset += lo;
    s->rsum -= (amq__u128)lo * m;
    s->zeros = zeros;
}

/* Re-store s at a larger width (fresh buffer; s unchanged on NOMEM). */
static amq_status snap_widen(const amq__mem *mem, amq__bsnap *s, uint32_t m,
                             uint8_t width) {
    if (width <= s->width)
        return AMQ_OK;
    amq__bsnap w = *s;
    w.width = width;
    w.cap = (size_t)m * width;
    w.cells = amq__alloc(mem, w.cap);
    if (w.cells == NULL)
        return AMQ_ERR_NOMEM;
    for (uint32_t i = 0; i < m; i++)
        cell_set(&w, i, cell_get(s, i));
    amq__free(mem, s->cells, s->cap);
    *s = w;
    return AMQ_OK;
}

/* Does a dominate b cell-wise (absolute values)? */
static bool snap_dominates(const amq__bsnap *a, const amq__bsnap *b,
                           uint32_t m) {
    uint64_t x[BLOCK], y[BLOCK];
    if (a->offset < b->offset)
        return false; /* b's minimum cell is above a's minimum cell */
    uint64_t da = a->offset - b->offset;
    for (size_t i0 = 0; i0 < m; i0 += BLOCK) {
        size_t n = m - i0 < BLOCK ? m - i0 : BLOCK;
        cells_load(a, i0, n, x);
        cells_load(b, i0, n, y);
        bool ok = true;
        for (size_t j = 0; j < n; j++)
            ok &= y[j] <= da + x[j];
        if (!ok)
            return false;
    }
    return true;
}

/* ---- history ----------------------------------------------------------------- */

static amq__bsnap *ring_at(const amq__bloom_part *b, uint32_t age) {
    uint32_t idx = (b->head + b->hcap - 1 - age) % b->hcap;
    return &b->ring[idx];
}

/* The slot the next record goes to has room for the given width. */
static amq_status ring_prepare(amq_clock *c, uint8_t width) {
    amq__bloom_part *b = &c->b;
    if (b->hcap == 0)
        return AMQ_OK;
    return snap_reserve(&c->mem, &b->ring[b->head], b->m, width);
}

/* Record the current timestamp (after ring_prepare for its width). */
static void ring_record(amq__bloom_part *b) {
    if (b->hcap == 0)
        return;
    snap_copy(&b->ring[b->head], &b->cur, b->m);
    b->head = (b->head + 1) % b->hcap;
    if (b->hlen < b->hcap)
        b->hlen++;
}

/* ---- construction ---------------------------------------------------------- */

static uint32_t shape_tag(uint32_t m, uint32_t k, const amq_hasher *h) {
    uint8_t msg[32] = "amq bloom clock shape";
    amq__put_u32(msg + 24, m);
    amq__put_u32(msg + 28, k);
    return (uint32_t)amq_hash64(h, msg, sizeof msg);
}

amq_status amq__bclock_init(amq_clock *c, uint32_t m, uint32_t k,
                            uint32_t history, const amq_hasher *h) {
    amq__bloom_part *b = &c->b;
    b->m = m;
    b->k = k;
    b->hasher = *h;
    b->shape_tag = shape_tag(m, k, h);
    b->cur.width = 1;
    b->cur.zeros = m;
    AMQ_RETURN_IF_ERR(snap_reserve(&c->mem, &b->cur, m, 1));
    if (history == 0)
        return AMQ_OK;
    size_t bytes;
    if (!amq__mul(history, sizeof *b->ring, &bytes))
        return AMQ_ERR_OVERFLOW;
    b->ring = amq__zalloc(&c->mem, bytes);
    if (b->ring == NULL)
        return AMQ_ERR_NOMEM;
    b->hcap = history;
    AMQ_RETURN_IF_ERR(ring_prepare(c, 1));
    ring_record(b);
    return AMQ_OK;
}

void amq__bclock_destroy(amq_clock *c) {
    amq__bloom_part *b = &c->b;
    snap_free(&c->mem, &b->cur);
    for (uint32_t i = 0; i < b->hcap; i++)
        snap_free(&c->mem, &b->ring[i]);
    amq__free(&c->mem, b->ring, (size_t)b->hcap * sizeof *b->ring);
    b->ring = NULL;
    b->hcap = 0;
}

bool amq__bclock_same_shape(const amq_clock *a, const amq_clock *b) {
    return a->b.m == b->b.m && a->b.k == b->b.k &&
           a->b.hasher.kind == b->b.hasher.kind &&
           a->b.hasher.seed == b->b.hasher.seed &&
           memcmp(a->b.hasher.key, b->b.hasher.key, AMQ_HASH_KEY_BYTES) == 0;
}

/* dst's current timestamp := src's (same shape), recorded in dst's history. */
amq_status amq__bclock_copy_state(amq_clock *dst, const amq_clock *src) {
    uint32_t m = dst->b.m;
    amq__bsnap *s = &dst->b.cur;
    if (dst == src)
        return AMQ_OK;
    AMQ_RETURN_IF_ERR(ring_prepare(dst, src->b.cur.width));
    if (s->cap < (size_t)m * src->b.cur.width) {
        amq__bsnap fresh = {0};
        AMQ_RETURN_IF_ERR(snap_reserve(&dst->mem, &fresh, m, src->b.cur.width));
        snap_free(&dst->mem, s);
        *s = fresh;
    }
    snap_copy(s, &src->b.cur, m);
    ring_record(&dst->b);
    return AMQ_OK;
}

/* dst (fresh, same shape and history capacity) := src with its history. */
amq_status amq__bclock_clone_history(amq_clock *dst, const amq_clock *src) {
    const amq__bloom_part *sb = &src->b;
    amq__bloom_part *db = &dst->b;
    uint32_t m = sb->m;
    AMQ_RETURN_IF_ERR(snap_reserve(&dst->mem, &db->cur, m, sb->cur.width));
    snap_copy(&db->cur, &sb->cur, m);
    for (uint32_t i = 0; i < sb->hcap; i++) {
        const amq__bsnap *from = &sb->ring[i];
        if (from->width == 0)
            continue; /* never recorded */
        AMQ_RETURN_IF_ERR(
            snap_reserve(&dst->mem, &db->ring[i], m, from->width));
        snap_copy(&db->ring[i], from, m);
    }
    db->hlen = sb->hlen;
    db->head = sb->head;
    return AMQ_OK;
}

/* ---- tick and merge -------------------------------------------------------------- */

amq_status amq__bclock_tick(amq_clock *c, uint64_t h) {
    amq__bloom_part *b = &c->b;
    amq__bsnap *s = &b->cur;
    uint32_t pos[AMQ_CLOCK_MAX_K];
    uint64_t max = 0;
    for (uint32_t j = 0; j < b->k; j++) {
        pos[j] = probe(h, j, b->m);
        uint64_t times = 0;
        for (uint32_t i = 0; i <= j; i++)
            times += pos[i] == pos[j];
        uint64_t v = cell_get(s, pos[j]);
        if (s->offset > UINT64_MAX - times ||
            v > UINT64_MAX - s->offset - times)
            return AMQ_ERR_OVERFLOW; /* the absolute value would wrap */
        max = v + times > max ? v + times : max;
    }
    uint8_t width = width_for(max);
    width = width > s->width ? width : s->width;
    AMQ_RETURN_IF_ERR(ring_prepare(c, width));
    AMQ_RETURN_IF_ERR(snap_widen(&c->mem, s, b->m, width));
    for (uint32_t j = 0; j < b->k; j++) {
        uint64_t v = cell_get(s, pos[j]);
        s->zeros -= v == 0;
        cell_set(s, pos[j], v + 1);
    }
    s->rsum += b->k;
    snap_normalize(s, b->m);
    ring_record(b);
    return AMQ_OK;
}

/* Pass 1 of merge: the new offset (min of the absolute maxima), the largest
 * relative cell after it, and whether anything changes. */
static bool merge_scan(const amq__bsnap *a, const amq__bsnap *o, uint32_t m,
                       uint64_t *lo_out, uint64_t *hi_out) {
    uint64_t lo = UINT64_MAX, hi = 0, x[BLOCK], y[BLOCK];
    bool changed = false;
    for (size_t i0 = 0; i0 < m; i0 += BLOCK) {
        size_t n = m - i0 < BLOCK ? m - i0 : BLOCK;
        cells_load(a, i0, n, x);
        cells_load(o, i0, n, y);
        for (size_t j = 0; j < n; j++) {
            uint64_t u = a->offset + x[j], v = o->offset + y[j];
            changed |= v > u;
            u = v > u ? v : u;
            lo = u < lo ? u : lo;
            hi = u > hi ? u : hi;
        }
    }
    *lo_out = lo;
    *hi_out = hi;
    return changed;
}

amq_status amq__bclock_merge(amq_clock *c, const amq_clock *o) {
    amq__bloom_part *b = &c->b;
    amq__bsnap *s = &b->cur;
    const amq__bsnap *t = &o->b.cur;
    uint64_t lo, hi;
    if (c == o || !merge_scan(s, t, b->m, &lo, &hi))
        return AMQ_OK;
    uint8_t width = width_for(hi - lo);
    width = width > s->width ? width : s->width;
    AMQ_RETURN_IF_ERR(ring_prepare(c, width));
    AMQ_RETURN_IF_ERR(snap_widen(&c->mem, s, b->m, width));
    uint64_t old = s->offset, x[BLOCK], y[BLOCK];
    amq__u128 rsum = 0;
    uint32_t zeros = 0;
    for (size_t i0 = 0; i0 < b->m; i0 += BLOCK) {
        size_t n = b->m - i0 < BLOCK ? b->m - i0 : BLOCK;
        cells_load(s, i0, n, x);
        cells_load(t, i0, n, y);
        for (size_t j = 0; j < n; j++) {
            uint64_t u = old + x[j], v = t->offset + y[j];
            x[j] = (v > u ? v : u) - lo;
            zeros += x[j] == 0;
            rsum += x[j];
        }
        cells_store(s, i0, n, x);
    }
    s->offset = lo;
    s->rsum = rsum;
    s->zeros = zeros;
    ring_record(b);
    return AMQ_OK;
}

/* ---- comparison ------------------------------------------------------------- */

static void fill_probabilities(uint32_t m, uint32_t k, amq__u128 lo,
                               amq__u128 hi, amq_clock_verdict *v) {
    v->sum_low = (double)lo;
    v->sum_high = (double)hi;
    v->fp_paper = amq_clock_fp_paper(m, v->sum_low, v->sum_high);
    v->fp_exact = amq_clock_fp_exact(m, k, (double)(hi - lo));
}

void amq__bclock_compare(const amq_clock *a, const amq_clock *b,
                         amq_clock_verdict *v) {
    uint32_t m = a->b.m;
    const amq__bsnap *x = &a->b.cur, *y = &b->b.cur;
    amq__u128 sx = snap_sum(x, m), sy = snap_sum(y, m);
    memset(v, 0, sizeof *v);
    bool x_le_y = sx <= sy && snap_dominates(y, x, m);
    bool y_le_x = sy <= sx && snap_dominates(x, y, m);
    if (x_le_y && y_le_x) {
        v->order = AMQ_ORDER_EQUAL;
        v->sum_low = v->sum_high = (double)sx;
    } else if (x_le_y) {
        v->order = AMQ_ORDER_BEFORE;
        fill_probabilities(m, a->b.k, sx, sy, v);
    } else if (y_le_x) {
        v->order = AMQ_ORDER_AFTER;
        fill_probabilities(m, a->b.k, sy, sx, v);
    } else {
        v->order = AMQ_ORDER_CONCURRENT;
        v->sum_low = (double)(sx < sy ? sx : sy);
        v->sum_high = (double)(sx < sy ? sy : sx);
    }
}

/* The oldest recorded age whose snapshot dominates r (age 0, the current
 * timestamp, is known to). */
static uint32_t oldest_dominating(const amq__bloom_part *b,
                                  const amq__bsnap *r) {
    uint32_t good = 0, bad = b->hlen; /* dominates at good, not at bad */
    while (bad - good > 1) {
        uint32_t mid = good + (bad - good) / 2;
        if (snap_dominates(ring_at(b, mid), r, b->m))
            good = mid;
        else
            bad = mid;
    }
    return good;
}

void amq__bclock_compare_history(const amq_clock *local,
                                 const amq_clock *remote,
                                 amq_clock_verdict *v) {
    amq__bclock_compare(local, remote, v);
    const amq__bloom_part *b = &local->b;
    if (v->order != AMQ_ORDER_AFTER || b->hlen < 2)
        return;
    uint32_t age = oldest_dominating(b, &remote->b.cur);
    if (age == 0)
        return;
    const amq__bsnap *old = ring_at(b, age);
    amq__u128 lo = snap_sum(&remote->b.cur, b->m), hi = snap_sum(old, b->m);
    fill_probabilities(b->m, b->k, lo, hi, v);
    v->history_age = age;
}

/* ---- inspection and §3 ------------------------------------------------------- */

uint64_t amq__bclock_get(const amq_clock *c, uint64_t i) {
    if (i >= c->b.m)
        return 0;
    return c->b.cur.offset + cell_get(&c->b.cur, (size_t)i);
}

double amq__bclock_sum(const amq_clock *c) {
    return (double)snap_sum(&c->b.cur, c->b.m);
}

/* Paper §3: subtracting consecutive timestamps of one node recovers the
 * increments of the step; it was exactly the local event iff they are the
 * event's k probes with their multiplicities. */
amq_status amq__bclock_explains(const amq_clock *c, uint32_t age, uint64_t h,
                                bool *out) {
    const amq__bloom_part *b = &c->b;
    if (b->hlen < 2 || age + 1 >= b->hlen)
        return AMQ_ERR_INVALID;
    const amq__bsnap *newer = ring_at(b, age), *older = ring_at(b, age + 1);
    *out = false;
    if (snap_sum(newer, b->m) != snap_sum(older, b->m) + b->k ||
        !snap_dominates(newer, older, b->m))
        return AMQ_OK;
    for (uint32_t j = 0; j < b->k; j++) {
        uint32_t p = probe(h, j, b->m);
        uint64_t times = 0;
        for (uint32_t i = 0; i < b->k; i++)
            times += probe(h, i, b->m) == p;
        uint64_t d = newer->offset + cell_get(newer, p) -
                     (older->offset + cell_get(older, p));
        if (d != times)
            return AMQ_OK;
    }
    *out = true; /* sums differ by k and the k probes account for all of it */
    return AMQ_OK;
}

/* ---- the body: offset + cells ------------------------------------------------
 *
 *   varint offset | mode u8 | mode 0: m varint cells
 *                           | mode 1: width w u8 (1..64) | ceil(m*w/8) bytes,
 *                           |         cell i at bits [i*w, i*w+w), LSB first
 * The encoder picks the smaller (packed on a tie); w = max(1, bits(max)). */

static unsigned bits_of(uint64_t v) {
    return v == 0 ? 1 : 64 - (unsigned)__builtin_clzll(v);
}

static void body_plan(const amq__bsnap *s, uint32_t m, size_t *varint_bytes,
                      unsigned *w) {
    uint64_t max = 0;
    size_t vb = 0;
    for (uint32_t i = 0; i < m; i++) {
        uint64_t v = cell_get(s, i);
        max = v > max ? v : max;
        vb += amq__vlen(v);
    }
    *varint_bytes = vb;
    *w = bits_of(max);
}

static size_t packed_bytes(uint32_t m, unsigned w) {
    return (size_t)(((uint64_t)m * w + 7) / 8);
}

size_t amq__bclock_body_size(const amq__bsnap *s, uint32_t m) {
    size_t vb;
    unsigned w;
    body_plan(s, m, &vb, &w);
    size_t packed = 1 + packed_bytes(m, w);
    return amq__vlen(s->offset) + 1 + (vb < packed ? vb : packed);
}

size_t amq__bclock_body_write(const amq__bsnap *s, uint32_t m, uint8_t *p) {
    size_t vb, n = amq__vput(p, s->offset);
    unsigned w;
    body_plan(s, m, &vb, &w);
    size_t pb = packed_bytes(m, w);
    if (vb < 1 + pb) {
        p[n++] = 0;
        for (uint32_t i = 0; i < m; i++)
            n += amq__vput(p + n, cell_get(s, i));
        return n;
    }
    p[n++] = 1;
    p[n++] = (uint8_t)w;
    memset(p + n, 0, pb);
    for (uint32_t i = 0; i < m; i++) {
        uint64_t v = cell_get(s, i), bit = (uint64_t)i * w;
        for (unsigned done = 0; done < w;) {
            size_t byte = (size_t)(bit / 8);
            unsigned sh = (unsigned)(bit % 8), take = 8 - sh;
            take = take < w - done ? take : w - done;
            p[n + byte] |= (uint8_t)(((v >> done) & ((1u << take) - 1)) << sh);
            done += take;
            bit += take;
        }
    }
    return n + pb;
}

typedef struct body_reader {
    const uint8_t *p;
    size_t len, pos;
    int mode;
    unsigned w;
    uint64_t bit;
} body_reader;

static bool reader_next(body_reader *r, uint64_t *out) {
    if (r->mode == 0)
        return amq__vget(r->p, r->len, &r->pos, out);
    uint64_t v = 0;
    for (unsigned done = 0; done < r->w;) {
        size_t byte = r->pos + (size_t)(r->bit / 8);
        unsigned sh = (unsigned)(r->bit % 8), take = 8 - sh;
        take = take < r->w - done ? take : r->w - done;
        v |= (uint64_t)((r->p[byte] >> sh) & ((1u << take) - 1)) << done;
        done += take;
        r->bit += take;
    }
    *out = v;
    return true;
}

static amq_status reader_open(body_reader *r, const uint8_t *p, size_t len,
                              uint32_t m, uint64_t *offset, amq_diag *diag) {
    memset(r, 0, sizeof *r);
    r->p = p;
    r->len = len;
    if (!amq__vget(p, len, &r->pos, offset) || r->pos >= len)
        return amq__diag(diag, AMQ_ERR_CORRUPT, r->pos, "truncated offset");
    r->mode = p[r->pos++];
    if (r->mode > 1)
        return amq__diag(diag, AMQ_ERR_CORRUPT, r->pos - 1,
                         "unknown cell encoding %d", r->mode);
    if (r->mode == 0)
        return AMQ_OK;
    if (r->pos >= len || p[r->pos] == 0 || p[r->pos] > 64)
        return amq__diag(diag, AMQ_ERR_CORRUPT, r->pos, "bad cell width");
    r->w = p[r->pos++];
    if (len - r->pos != packed_bytes(m, r->w))
        return amq__diag(diag, AMQ_ERR_CORRUPT, r->pos,
                         "packed cells need %zu bytes, have %zu",
                         packed_bytes(m, r->w), len - r->pos);
    return AMQ_OK;
}

/* Pass 1: validate and find the largest cell. */
static amq_status body_scan(const uint8_t *p, size_t len, uint32_t m,
                            uint64_t *max_out, amq_diag *diag) {
    body_reader r;
    uint64_t offset, max = 0, min = UINT64_MAX;
    AMQ_RETURN_IF_ERR(reader_open(&r, p, len, m, &offset, diag));
    for (uint32_t i = 0; i < m; i++) {
        uint64_t v;
        if (!reader_next(&r, &v))
            return amq__diag(diag, AMQ_ERR_CORRUPT, r.pos, "bad cell %u", i);
        max = v > max ? v : max;
        min = v < min ? v : min;
    }
    if (r.mode == 0 && r.pos != len)
        return amq__diag(diag, AMQ_ERR_CORRUPT, r.pos, "trailing bytes");
    if (min != 0)
        return amq__diag(diag, AMQ_ERR_CORRUPT, 0,
                         "offset is not the common minimum");
    if (max > UINT64_MAX - offset)
        return amq__diag(diag, AMQ_ERR_CORRUPT, 0, "cell exceeds 64 bits");
    *max_out = max;
    return AMQ_OK;
}

/* Pass 2 into a fresh snapshot, then a canonical check by re-encoding. */
static amq_status body_fill(const amq__mem *mem, const uint8_t *p, size_t len,
                            uint32_t m, uint64_t max, amq__bsnap *s,
                            amq_diag *diag) {
    body_reader r;
    AMQ_RETURN_IF_ERR(reader_open(&r, p, len, m, &s->offset, diag));
    AMQ_RETURN_IF_ERR(snap_reserve(mem, s, m, width_for(max)));
    s->width = width_for(max);
    s->rsum = 0;
    s->zeros = 0;
    for (uint32_t i = 0; i < m; i++) {
        uint64_t v = 0;
        (void)reader_next(&r, &v); /* validated by body_scan */
        cell_set(s, i, v);
        s->rsum += v;
        s->zeros += v == 0;
    }
    if (amq__bclock_body_size(s, m) != len)
        return amq__diag(diag, AMQ_ERR_CORRUPT, 0, "non-canonical cells");
    uint8_t *again = amq__alloc(mem, len);
    if (again == NULL)
        return AMQ_ERR_NOMEM;
    amq__bclock_body_write(s, m, again);
    bool same = memcmp(again, p, len) == 0;
    amq__free(mem, again, len);
    if (!same)
        return amq__diag(diag, AMQ_ERR_CORRUPT, 0, "non-canonical cells");
    return AMQ_OK;
}

amq_status amq__bclock_body_read(amq_clock *c, const uint8_t *p, size_t len,
                                 amq_diag *diag) {
    uint64_t max = 0;
    uint32_t m = c->b.m;
    AMQ_RETURN_IF_ERR(body_scan(p, len, m, &max, diag));
    amq__bsnap fresh = {0};
    amq_status st = body_fill(&c->mem, p, len, m, max, &fresh, diag);
    if (st == AMQ_OK)
        st = ring_prepare(c, fresh.width);
    if (st != AMQ_OK) {
        snap_free(&c->mem, &fresh);
        return st;
    }
    snap_free(&c->mem, &c->b.cur);
    c->b.cur = fresh;
    ring_record(&c->b);
    return AMQ_OK;
}
