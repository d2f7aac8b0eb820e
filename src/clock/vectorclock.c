/*
 * vectorclock.c — the vector clock (Fidge 1988, Mattern 1989): the exact
 * baseline the Bloom clock is measured against, in two representations
 * behind the same comparison API.
 *
 *   ids: | 2 | 5 | 9 | 40 |      sorted, unique node ids
 *   ctr: | 3 | 0 | 7 |  1 |      events of that node known here
 *
 *   dense:  exactly the members (join adds a 0 entry, leave drops one);
 *           two dense clocks are comparable only over the same membership,
 *           and on the wire only the counters travel (plus a 32-bit tag of
 *           the membership so a mismatch is caught, never misread);
 *   sparse: only nonzero counters; an absent id counts as 0, so clocks of
 *           any membership compare; on the wire (id delta, counter) pairs.
 *
 * A before B iff every counter of A <= B's and A != B; otherwise, unless
 * equal, concurrent. No false positives: fp_paper = fp_exact = 0.
 *
 * Invariants: ids strictly increasing; sparse: every ctr > 0; dense: self
 * is a member. Failure modes: growth needs memory (AMQ_ERR_NOMEM, clock
 * unchanged); a counter at 2^64 - 1 cannot tick (AMQ_ERR_OVERFLOW).
 */
#include <string.h>

#include "clock/parts.h"
#include "core/bits.h"
#include "core/spec.h"

static bool is_dense(const amq_clock *c) {
    return c->kind == AMQ_CLOCK_VECTOR_DENSE;
}

/* Index of the first id >= node. */
static size_t lower_bound(const amq__vector_part *v, uint64_t node) {
    size_t lo = 0, hi = v->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v->ids[mid] < node)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static amq_status reserve(amq_clock *c, size_t need) {
    amq__vector_part *v = &c->v;
    if (need <= v->cap)
        return AMQ_OK;
    size_t cap = v->cap < 4 ? 4 : v->cap;
    while (cap < need)
        if (!amq__mul(cap, 2, &cap))
            return AMQ_ERR_OVERFLOW;
    size_t bytes;
    if (!amq__mul(cap, sizeof(uint64_t), &bytes))
        return AMQ_ERR_OVERFLOW;
    uint64_t *ids = amq__alloc(&c->mem, bytes);
    uint64_t *ctr = amq__alloc(&c->mem, bytes);
    if (ids == NULL || ctr == NULL) {
        amq__free(&c->mem, ids, bytes);
        amq__free(&c->mem, ctr, bytes);
        return AMQ_ERR_NOMEM;
    }
    if (v->n > 0) {
        memcpy(ids, v->ids, v->n * sizeof *ids);
        memcpy(ctr, v->ctr, v->n * sizeof *ctr);
    }
    amq__free(&c->mem, v->ids, v->cap * sizeof(uint64_t));
    amq__free(&c->mem, v->ctr, v->cap * sizeof(uint64_t));
    v->ids = ids;
    v->ctr = ctr;
    v->cap = cap;
    return AMQ_OK;
}

static amq_status insert_at(amq_clock *c, size_t i, uint64_t node,
                            uint64_t value) {
    AMQ_RETURN_IF_ERR(reserve(c, c->v.n + 1));
    amq__vector_part *v = &c->v;
    memmove(v->ids + i + 1, v->ids + i, (v->n - i) * sizeof *v->ids);
    memmove(v->ctr + i + 1, v->ctr + i, (v->n - i) * sizeof *v->ctr);
    v->ids[i] = node;
    v->ctr[i] = value;
    v->n++;
    return AMQ_OK;
}

amq_status amq__vclock_init(amq_clock *c, uint64_t self) {
    c->v.self = self;
    if (is_dense(c))
        return insert_at(c, 0, self, 0);
    return AMQ_OK;
}

void amq__vclock_destroy(amq_clock *c) {
    amq__free(&c->mem, c->v.ids, c->v.cap * sizeof(uint64_t));
    amq__free(&c->mem, c->v.ctr, c->v.cap * sizeof(uint64_t));
    c->v.ids = c->v.ctr = NULL;
    c->v.n = c->v.cap = 0;
}

amq_status amq__vclock_copy_state(amq_clock *dst, const amq_clock *src) {
    if (dst == src)
        return AMQ_OK;
    AMQ_RETURN_IF_ERR(reserve(dst, src->v.n));
    if (src->v.n > 0) {
        memcpy(dst->v.ids, src->v.ids, src->v.n * sizeof(uint64_t));
        memcpy(dst->v.ctr, src->v.ctr, src->v.n * sizeof(uint64_t));
    }
    dst->v.n = src->v.n;
    return AMQ_OK;
}

amq_status amq__vclock_tick(amq_clock *c) {
    amq__vector_part *v = &c->v;
    size_t i = lower_bound(v, v->self);
    if (i == v->n || v->ids[i] != v->self)
        return insert_at(c, i, v->self, 1); /* sparse: first own event */
    if (v->ctr[i] == UINT64_MAX)
        return AMQ_ERR_OVERFLOW;
    v->ctr[i]++;
    return AMQ_OK;
}

static bool same_members(const amq__vector_part *a, const amq__vector_part *b) {
    return a->n == b->n &&
           (a->n == 0 || memcmp(a->ids, b->ids, a->n * sizeof *a->ids) == 0);
}

/* Size of the union of two sorted id lists. */
static size_t union_size(const amq__vector_part *a, const amq__vector_part *b) {
    size_t i = 0, j = 0, n = 0;
    while (i < a->n && j < b->n) {
        uint64_t x = a->ids[i], y = b->ids[j];
        i += x <= y;
        j += y <= x;
        n++;
    }
    return n + (a->n - i) + (b->n - j);
}

amq_status amq__vclock_merge(amq_clock *c, const amq_clock *o) {
    amq__vector_part *v = &c->v;
    const amq__vector_part *w = &o->v;
    if (c == o)
        return AMQ_OK;
    if (is_dense(c)) {
        if (!same_members(v, w))
            return AMQ_ERR_INCOMPATIBLE;
        for (size_t i = 0; i < v->n; i++)
            v->ctr[i] = w->ctr[i] > v->ctr[i] ? w->ctr[i] : v->ctr[i];
        return AMQ_OK;
    }
    size_t n = union_size(v, w);
    AMQ_RETURN_IF_ERR(reserve(c, n));
    /* Merge from the back so the union can be built in place. */
    size_t i = v->n, j = w->n, out = n;
    while (j > 0) {
        if (i > 0 && v->ids[i - 1] > w->ids[j - 1]) {
            i--;
            v->ids[--out] = v->ids[i];
            v->ctr[out] = v->ctr[i];
        } else if (i > 0 && v->ids[i - 1] == w->ids[j - 1]) {
            i--;
            j--;
            v->ids[--out] = v->ids[i];
            v->ctr[out] = w->ctr[j] > v->ctr[i] ? w->ctr[j] : v->ctr[i];
        } else {
            j--;
            v->ids[--out] = w->ids[j];
            v->ctr[out] = w->ctr[j];
        }
    }
    v->n = n;
    return AMQ_OK;
}

amq_status amq__vclock_compare(const amq_clock *a, const amq_clock *b,
                               amq_clock_verdict *out) {
    const amq__vector_part *x = &a->v, *y = &b->v;
    if (is_dense(a) && !same_members(x, y))
        return AMQ_ERR_INCOMPATIBLE;
    bool x_gt = false, y_gt = false; /* some entry of x above y's, ... */
    size_t i = 0, j = 0;
    while (i < x->n || j < y->n) {
        uint64_t xv = 0, yv = 0;
        if (j >= y->n || (i < x->n && x->ids[i] < y->ids[j])) {
            xv = x->ctr[i++];
        } else if (i >= x->n || y->ids[j] < x->ids[i]) {
            yv = y->ctr[j++];
        } else {
            xv = x->ctr[i++];
            yv = y->ctr[j++];
        }
        x_gt |= xv > yv;
        y_gt |= yv > xv;
    }
    memset(out, 0, sizeof *out);
    out->sum_low = amq__vclock_sum(a);
    out->sum_high = amq__vclock_sum(b);
    out->order = x_gt ? (y_gt ? AMQ_ORDER_CONCURRENT : AMQ_ORDER_AFTER)
                      : (y_gt ? AMQ_ORDER_BEFORE : AMQ_ORDER_EQUAL);
    return AMQ_OK;
}

amq_status amq__vclock_join(amq_clock *c, uint64_t node) {
    if (!is_dense(c))
        return AMQ_OK;
    size_t i = lower_bound(&c->v, node);
    if (i < c->v.n && c->v.ids[i] == node)
        return AMQ_OK;
    return insert_at(c, i, node, 0);
}

amq_status amq__vclock_leave(amq_clock *c, uint64_t node) {
    amq__vector_part *v = &c->v;
    if (node == v->self)
        return AMQ_ERR_INVALID;
    size_t i = lower_bound(v, node);
    if (i == v->n || v->ids[i] != node)
        return AMQ_OK;
    memmove(v->ids + i, v->ids + i + 1, (v->n - i - 1) * sizeof *v->ids);
    memmove(v->ctr + i, v->ctr + i + 1, (v->n - i - 1) * sizeof *v->ctr);
    v->n--;
    return AMQ_OK;
}

uint64_t amq__vclock_get(const amq_clock *c, uint64_t node) {
    size_t i = lower_bound(&c->v, node);
    return i < c->v.n && c->v.ids[i] == node ? c->v.ctr[i] : 0;
}

double amq__vclock_sum(const amq_clock *c) {
    double s = 0;
    for (size_t i = 0; i < c->v.n; i++)
        s += (double)c->v.ctr[i];
    return s;
}

uint32_t amq__vclock_members_tag(const amq_clock *c) {
    amq_hasher h;
    (void)amq_hasher_init(&h, AMQ_HASH_XXH3, 0x6d656d62657273ULL, NULL);
    uint64_t acc = amq_hash64(&h, NULL, 0);
    for (size_t i = 0; i < c->v.n; i++)
        acc = amq__mix64(acc ^ c->v.ids[i]) + (uint64_t)i;
    return (uint32_t)(acc ^ (acc >> 32));
}

/* ---- body: varint count, then per entry [id delta] counter ---------------- */

size_t amq__vclock_body_size(const amq_clock *c, bool ids) {
    const amq__vector_part *v = &c->v;
    size_t n = amq__vlen(v->n);
    for (size_t i = 0; i < v->n; i++) {
        if (ids)
            n += amq__vlen(i == 0 ? v->ids[0] : v->ids[i] - v->ids[i - 1] - 1);
        n += amq__vlen(v->ctr[i]);
    }
    return n;
}

size_t amq__vclock_body_write(const amq_clock *c, bool ids, uint8_t *p) {
    const amq__vector_part *v = &c->v;
    size_t n = amq__vput(p, v->n);
    for (size_t i = 0; i < v->n; i++) {
        if (ids)
            n += amq__vput(p + n,
                           i == 0 ? v->ids[0] : v->ids[i] - v->ids[i - 1] - 1);
        n += amq__vput(p + n, v->ctr[i]);
    }
    return n;
}

/* Parse entries into fresh arrays (c unchanged on failure). Without ids
 * the count must equal c's membership and the ids are c's. */
static amq_status body_parse(amq_clock *c, bool ids, const uint8_t *p,
                             size_t len, amq__vector_part *out,
                             amq_diag *diag) {
    size_t pos = 0;
    uint64_t n;
    if (!amq__vget(p, len, &pos, &n))
        return amq__diag(diag, AMQ_ERR_CORRUPT, pos, "bad entry count");
    if (n > (len - pos) / (ids ? 2 : 1))
        return amq__diag(diag, AMQ_ERR_CORRUPT, pos,
                         "%llu entries cannot fit in %zu bytes",
                         (unsigned long long)n, len - pos);
    if (!ids && n != c->v.n)
        return amq__diag(diag, AMQ_ERR_INCOMPATIBLE, pos, "membership differs");
    amq_clock tmp = {.kind = c->kind, .mem = c->mem};
    AMQ_RETURN_IF_ERR(reserve(&tmp, (size_t)n));
    uint64_t prev = 0;
    amq_status st = AMQ_OK;
    for (uint64_t i = 0; i < n && st == AMQ_OK; i++) {
        uint64_t id = c->v.n > i ? c->v.ids[i] : 0, delta = 0, ctr = 0;
        bool ok = !ids || amq__vget(p, len, &pos, &delta);
        if (ids) {
            ok = ok && (i == 0 || delta < UINT64_MAX - prev);
            id = i == 0 ? delta : prev + 1 + delta;
            ok = ok && (i == 0 || id > prev);
        }
        ok = ok && amq__vget(p, len, &pos, &ctr);
        ok = ok && (is_dense(c) || ctr > 0);
        if (!ok)
            st = amq__diag(diag, AMQ_ERR_CORRUPT, pos, "bad entry %llu",
                           (unsigned long long)i);
        tmp.v.ids[i] = id;
        tmp.v.ctr[i] = ctr;
        tmp.v.n = (size_t)i + 1;
        prev = id;
    }
    if (st == AMQ_OK && pos != len)
        st = amq__diag(diag, AMQ_ERR_CORRUPT, pos, "trailing bytes");
    if (st != AMQ_OK) {
        amq__vclock_destroy(&tmp);
        return st;
    }
    *out = tmp.v;
    return AMQ_OK;
}

amq_status amq__vclock_body_read(amq_clock *c, bool ids, const uint8_t *p,
                                 size_t len, amq_diag *diag) {
    amq__vector_part fresh;
    AMQ_RETURN_IF_ERR(body_parse(c, ids, p, len, &fresh, diag));
    size_t at = lower_bound(&fresh, c->v.self);
    if (is_dense(c) && (at == fresh.n || fresh.ids[at] != c->v.self)) {
        amq__free(&c->mem, fresh.ids, fresh.cap * sizeof(uint64_t));
        amq__free(&c->mem, fresh.ctr, fresh.cap * sizeof(uint64_t));
        return amq__diag(diag, AMQ_ERR_CORRUPT, 0, "self is not a member");
    }
    fresh.self = c->v.self;
    amq__vclock_destroy(c);
    c->v = fresh;
    return AMQ_OK;
}
