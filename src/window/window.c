/*
 * window.c — the sliding-window filter (amq/window.h): generations of
 * quotient filters closed into Ribbon filters, dropped as the clock
 * passes them (docs/structures.md, "Sliding windows").
 *
 * Liveness is one rule for both clocks: with cur = now / L, a piece of
 * generation g answers while g + G >= cur. A key added at clock value t
 * sits in generation t / L, and for t' - t < S <= G L,
 * floor(t'/L) - floor(t/L) < (t' - t)/L + 1 < G + 1, so it answers at t'.
 *
 * Closing a generation allocates everything first (the next open quotient
 * filter, the fingerprints, the Ribbon filter, room in the piece array)
 * and changes the window only once all of it exists, so a failure leaves
 * every live piece as it was.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "amq/mix.h"
#include "amq/quotient.h"
#include "amq/static.h"
#include "core/diag.h"
#include "window/window_impl.h"

#define QF_META_BITS 2.125 /* per slot: occupied, run end, offsets */

static uint64_t ceil_div(uint64_t a, uint64_t b) {
    return a / b + (a % b != 0);
}

/* Bits of a quotient filter with N home slots of r bits, as qf lays it
 * out: N + min(N, 128) slots. */
static double qf_bits(uint64_t slots, unsigned r) {
    double e = slots < 128 ? (double)slots : 128.0;
    return ((double)slots + e) * (r + QF_META_BITS);
}

/* A closed generation's chance of a fingerprint collision at capacity:
 * the quotient filter's bound for gcap distinct fingerprints. */
static double collision(uint64_t gcap, uint64_t slots, unsigned r) {
    return (double)gcap * (ldexp(1.0 / (double)slots, -(int)r) + 0x1p-64);
}

amq_status amq__window_shape(const amq_window_params *in, amq_window *w,
                             amq_diag *diag) {
    memset(w, 0, sizeof *w);
    w->p = *in;
    amq_window_params *p = &w->p;
    uint64_t *length = &w->length, *gcap = &w->gcap, *slots = &w->slots;
    unsigned *rbits = &w->rbits;
    double *eps_ribbon = &w->eps_ribbon;
    if (p->clock != AMQ_WINDOW_ITEMS && p->clock != AMQ_WINDOW_TIME)
        return amq__diag(diag, AMQ_ERR_INVALID, 0, "unknown clock %d",
                         (int)p->clock);
    if (p->seal != AMQ_WINDOW_SEAL_RIBBON && p->seal != AMQ_WINDOW_SEAL_QF)
        return amq__diag(diag, AMQ_ERR_INVALID, 0, "unknown seal %d",
                         (int)p->seal);
    if (p->span == 0)
        return amq__diag(diag, AMQ_ERR_INVALID, 0, "span must be >= 1");
    if (p->generations == 0)
        p->generations = AMQ_WINDOW_DEFAULT_GENERATIONS;
    if (p->generations > AMQ_WINDOW_MAX_GENERATIONS)
        return amq__diag(diag, AMQ_ERR_INVALID, 0,
                         "generations=%u outside 1..%u", p->generations,
                         AMQ_WINDOW_MAX_GENERATIONS);
    if (p->capacity == 0) {
        if (p->clock == AMQ_WINDOW_TIME)
            return amq__diag(diag, AMQ_ERR_INVALID, 0,
                             "a time window needs a capacity (the most keys "
                             "one window takes)");
        p->capacity = p->span;
    }
    if (p->fpr == 0)
        p->fpr = 0.01;
    if (!(p->fpr > 0 && p->fpr <= 0.5))
        return amq__diag(diag, AMQ_ERR_INVALID, 0, "fpr=%g outside (0, 0.5]",
                         p->fpr);
    unsigned g = p->generations;
    *length = ceil_div(p->span, g);
    *gcap = ceil_div(p->capacity, g);
    if (*gcap > ((uint64_t)1 << 56))
        return amq__diag(diag, AMQ_ERR_OVERFLOW, 0,
                         "capacity %llu is too large",
                         (unsigned long long)p->capacity);
    /* home slots for 95% load at gcap keys, a multiple of 64 */
    uint64_t n = (uint64_t)ceil((double)*gcap / AMQ_QF_MAX_LOAD);
    n = (n + 63) & ~(uint64_t)63;
    *slots = n;
    unsigned qbits = 0;
    while (qbits < 64 && ((uint64_t)1 << qbits) < n)
        qbits++;
    double eps_p = p->fpr / (g + 1); /* each live generation's share */
    double lg = ceil(-log2(eps_p)) - 1;
    unsigned r0 = lg < 1 ? 1 : (unsigned)lg;
    double best = INFINITY;
    for (unsigned r = r0; r <= r0 + 8 && r <= AMQ_QF_MAX_RBITS; r++) {
        if (qbits + r > 64)
            break;
        double c = collision(*gcap, n, r);
        if (p->seal == AMQ_WINDOW_SEAL_QF) {
            if (c <= eps_p) {
                *rbits = r;
                *eps_ribbon = 0;
                best = 0;
                break;
            }
            continue;
        }
        /* G closed generations and the open one, whose bound is at most
         * c: each closed one may take (eps - c) / G, c of it collisions */
        double er = (p->fpr - c) / g - c;
        if (er <= eps_p * 0.01)
            continue;
        /* open filter plus G closed Ribbon filters of gcap keys */
        double bits =
            qf_bits(n, r) + (double)g * (double)*gcap * amq_ribbon_bits_for(er);
        if (bits < best) {
            best = bits;
            *rbits = r;
            *eps_ribbon = er;
        }
    }
    if (best == INFINITY)
        return amq__diag(diag, AMQ_ERR_OVERFLOW, 0,
                         "fingerprints for capacity %llu at fpr %g need "
                         "more than 64 bits",
                         (unsigned long long)p->capacity, p->fpr);
    return AMQ_OK;
}

amq_options amq__window_options(const amq_window *w) {
    amq_options o = {0};
    o.allocator = &w->mem.a;
    o.hash = w->hasher.kind;
    o.hash_seed = w->hasher.seed;
    o.hash_key = w->hasher.key;
    return o;
}

amq_status amq__window_open_qf(const amq_window *w, amq_filter **out) {
    char spec[64];
    snprintf(spec, sizeof spec, "qf:slots=%llu,r=%u",
             (unsigned long long)w->slots, w->rbits);
    amq_options o = amq__window_options(w);
    return amq_filter_new(spec, 0, 0, &o, out, NULL);
}

void amq__window_free_pieces(amq_window *w) {
    for (unsigned i = 0; i < w->npc; i++)
        amq_filter_free(w->pc[i].f);
    amq__free(&w->mem, w->pc, (size_t)w->room * sizeof *w->pc);
    w->pc = NULL;
    w->npc = w->room = 0;
}

amq_status amq__window_alloc(const amq_window *shape, const amq_hasher *h,
                             const amq_options *opt, unsigned room,
                             amq_window **out) {
    amq__mem mem;
    amq__mem_init(&mem, opt);
    amq_window *w = amq__zalloc(&mem, sizeof *w);
    if (w == NULL)
        return AMQ_ERR_NOMEM;
    *w = *shape;
    w->mem = mem;
    w->hasher = *h;
    w->pc = NULL;
    w->npc = 0;
    w->room = room;
    w->pc = amq__zalloc(&mem, (size_t)room * sizeof *w->pc);
    if (w->pc == NULL) {
        w->room = 0;
        amq_window_free(w);
        return AMQ_ERR_NOMEM;
    }
    *out = w;
    return AMQ_OK;
}

amq_status amq_window_new(const amq_window_params *p, const amq_options *opt,
                          amq_window **out, amq_diag *diag) {
    if (out == NULL)
        return AMQ_ERR_INVALID;
    *out = NULL;
    if (p == NULL)
        return AMQ_ERR_INVALID;
    amq_window shape;
    AMQ_RETURN_IF_ERR(amq__window_shape(p, &shape, diag));
    amq_hasher h;
    AMQ_RETURN_IF_ERR(amq_filter_resolve_hasher("qf", opt, &h));
    amq_window *w;
    AMQ_RETURN_IF_ERR(
        amq__window_alloc(&shape, &h, opt, shape.p.generations + 2, &w));
    amq_status st = amq__window_open_qf(w, &w->pc[0].f);
    if (st != AMQ_OK) {
        amq_window_free(w);
        return st;
    }
    w->npc = 1;
    *out = w;
    return AMQ_OK;
}

void amq_window_free(amq_window *w) {
    if (w == NULL)
        return;
    amq__window_free_pieces(w);
    amq__mem m = w->mem;
    amq__free(&m, w, sizeof *w);
}

/* ---- the clock --------------------------------------------------------------- */

static uint64_t clock_at(const amq_window *w, uint64_t now) {
    if (w->p.clock == AMQ_WINDOW_ITEMS || now < w->now)
        return w->now;
    return now;
}

static bool live(const amq_window *w, const amq__wpiece *pc, uint64_t cur) {
    return pc->gen >= cur || cur - pc->gen <= w->p.generations;
}

static amq__wpiece *open_piece(const amq_window *w) {
    return &w->pc[w->npc - 1];
}

/* Drop the pieces no query at clock value t or later asks. */
static void drop_dead(amq_window *w, uint64_t cur) {
    unsigned keep = 0;
    while (keep < w->npc - 1 && !live(w, &w->pc[keep], cur))
        keep++;
    if (keep == 0)
        return;
    for (unsigned i = 0; i < keep; i++)
        amq_filter_free(w->pc[i].f);
    memmove(w->pc, w->pc + keep, (size_t)(w->npc - keep) * sizeof *w->pc);
    w->npc -= keep;
}

/* Close the open piece (it has keys) and open an empty one of generation
 * gen; nothing changes on a failure. */
static amq_status close_open(amq_window *w, uint64_t gen) {
    if (w->npc >= AMQ_WINDOW_MAX_PIECES)
        return AMQ_ERR_FULL;
    amq__wpiece *op = open_piece(w);
    amq_filter *next = NULL, *sealed = NULL;
    AMQ_RETURN_IF_ERR(amq__window_open_qf(w, &next));
    amq_status st = AMQ_OK;
    if (w->p.seal == AMQ_WINDOW_SEAL_RIBBON) {
        const amq_qf *q = amq_qf_of(op->f);
        size_t n = (size_t)amq_qf_distinct(q), i = 0;
        uint64_t *keys = amq__alloc(&w->mem, (n ? n : 1) * sizeof *keys);
        if (keys == NULL) {
            amq_filter_free(next);
            return AMQ_ERR_NOMEM;
        }
        amq_qf_iter it;
        uint64_t fp, c;
        amq_qf_iter_init(q, &it);
        while (i < n && amq_qf_iter_next(&it, &fp, &c))
            keys[i++] = amq_mix64(fp);
        amq_options o = amq__window_options(w);
        st = amq_filter_build("ribbon", keys, i, w->eps_ribbon, &o, &sealed,
                              NULL);
        amq__free(&w->mem, keys, (n ? n : 1) * sizeof *keys);
    }
    if (st == AMQ_OK && w->npc == w->room) {
        unsigned room = w->room * 2;
        amq__wpiece *pc = amq__zalloc(&w->mem, (size_t)room * sizeof *pc);
        if (pc == NULL) {
            st = AMQ_ERR_NOMEM;
        } else {
            memcpy(pc, w->pc, (size_t)w->npc * sizeof *pc);
            amq__free(&w->mem, w->pc, (size_t)w->room * sizeof *w->pc);
            w->pc = pc;
            w->room = room;
            op = open_piece(w);
        }
    }
    if (st != AMQ_OK) {
        amq_filter_free(sealed);
        amq_filter_free(next);
        return st;
    }
    op->distinct = amq_qf_distinct(amq_qf_of(op->f));
    if (sealed != NULL) {
        amq_filter_free(op->f);
        op->f = sealed;
        op->ribbon = true;
    }
    amq__wpiece *np = &w->pc[w->npc++];
    memset(np, 0, sizeof *np);
    np->gen = gen;
    np->f = next;
    return AMQ_OK;
}

/* Move the clock to t: drop what it leaves behind, close the open
 * generation if t is past it. */
static amq_status advance(amq_window *w, uint64_t t) {
    uint64_t cur = t / w->length;
    w->now = t;
    drop_dead(w, cur);
    amq__wpiece *op = open_piece(w);
    if (op->gen >= cur)
        return AMQ_OK;
    if (op->items == 0) { /* nothing to close: the filter moves on */
        op->gen = cur;
        return AMQ_OK;
    }
    if (!live(w, op, cur)) { /* past the window already: start afresh */
        amq_filter *next = NULL;
        AMQ_RETURN_IF_ERR(amq__window_open_qf(w, &next));
        amq_filter_free(op->f);
        memset(op, 0, sizeof *op);
        op->gen = cur;
        op->f = next;
        return AMQ_OK;
    }
    AMQ_RETURN_IF_ERR(close_open(w, cur));
    drop_dead(w, cur);
    return AMQ_OK;
}

amq_status amq_window_advance(amq_window *w, uint64_t now) {
    if (w == NULL)
        return AMQ_ERR_INVALID;
    return advance(w, clock_at(w, now));
}

/* ---- queries ------------------------------------------------------------------ */

/* The newest live piece holding the key at clock value t, or NULL. */
static const amq__wpiece *find(const amq_window *w, uint64_t hash, uint64_t t) {
    uint64_t cur = t / w->length;
    uint64_t mixed =
        amq_mix64(amq_qf_fingerprint(amq_qf_of(open_piece(w)->f), hash));
    for (unsigned i = w->npc; i-- > 0;) {
        const amq__wpiece *pc = &w->pc[i];
        if (!live(w, pc, cur))
            break;
        if (amq_filter_contains_hash(pc->f, pc->ribbon ? mixed : hash))
            return pc;
    }
    return NULL;
}

bool amq_window_contains_hash(const amq_window *w, uint64_t hash,
                              uint64_t now) {
    return w != NULL && find(w, hash, clock_at(w, now)) != NULL;
}

bool amq_window_contains(const amq_window *w, const void *key, size_t len,
                         uint64_t now) {
    return w != NULL &&
           amq_window_contains_hash(w, amq_hash64(&w->hasher, key, len), now);
}

size_t amq__window_batch_bytes = (size_t)16 << 20;

void amq_window_contains_batch(const amq_window *w, const uint64_t *hashes,
                               size_t n, uint64_t now, uint8_t *out) {
    enum { CHUNK = 512 };
    if (w == NULL) {
        if (out != NULL && n > 0)
            memset(out, 0, n);
        return;
    }
    if (amq_window_size_bytes(w) < amq__window_batch_bytes) {
        uint64_t t = clock_at(w, now);
        for (size_t i = 0; i < n; i++)
            out[i] = find(w, hashes[i], t) != NULL;
        return;
    }
    uint64_t cur = clock_at(w, now) / w->length;
    const amq_qf *shape = amq_qf_of(open_piece(w)->f);
    uint64_t mixed[CHUNK];
    uint8_t hit[CHUNK];
    for (size_t at = 0; at < n; at += CHUNK) {
        size_t len = n - at < CHUNK ? n - at : CHUNK;
        const uint64_t *h = hashes + at;
        bool any_ribbon = false;
        memset(out + at, 0, len);
        for (unsigned i = w->npc; i-- > 0 && live(w, &w->pc[i], cur);)
            any_ribbon |= w->pc[i].ribbon;
        if (any_ribbon)
            for (size_t j = 0; j < len; j++)
                mixed[j] = amq_mix64(amq_qf_fingerprint(shape, h[j]));
        for (unsigned i = w->npc; i-- > 0;) {
            const amq__wpiece *pc = &w->pc[i];
            if (!live(w, pc, cur))
                break;
            amq_filter_contains_batch(pc->f, pc->ribbon ? mixed : h, len, hit);
            for (size_t j = 0; j < len; j++)
                out[at + j] |= hit[j];
        }
    }
}

uint64_t amq_window_expiry_hash(const amq_window *w, uint64_t hash,
                                uint64_t now) {
    if (w == NULL)
        return AMQ_WINDOW_ABSENT;
    const amq__wpiece *pc = find(w, hash, clock_at(w, now));
    if (pc == NULL)
        return AMQ_WINDOW_ABSENT;
    /* answers while now / L <= gen + G: up to (gen + G + 1) L - 1 */
    uint64_t g = pc->gen + w->p.generations + 1, end;
    if (__builtin_mul_overflow(g, w->length, &end))
        return AMQ_WINDOW_ABSENT - 1;
    return end - 1;
}

uint64_t amq_window_expiry(const amq_window *w, const void *key, size_t len,
                           uint64_t now) {
    if (w == NULL)
        return AMQ_WINDOW_ABSENT;
    return amq_window_expiry_hash(w, amq_hash64(&w->hasher, key, len), now);
}

/* ---- adds ----------------------------------------------------------------------- */

amq_status amq_window_add_hash(amq_window *w, uint64_t hash, uint64_t now,
                               bool *was_present) {
    if (was_present != NULL)
        *was_present = false;
    if (w == NULL)
        return AMQ_ERR_INVALID;
    uint64_t t = clock_at(w, now);
    if (w->p.clock == AMQ_WINDOW_ITEMS && t == UINT64_MAX)
        return AMQ_ERR_OVERFLOW;
    AMQ_RETURN_IF_ERR(advance(w, t));
    const amq__wpiece *hit = find(w, hash, t);
    amq__wpiece *op = open_piece(w);
    if (hit != op) {
        if (op->items >= w->gcap) /* overflowing generation: a new piece */
            AMQ_RETURN_IF_ERR(close_open(w, op->gen));
        op = open_piece(w);
        amq_status st = amq_filter_add_hash(op->f, hash);
        if (st == AMQ_ERR_FULL && op->items > 0) {
            AMQ_RETURN_IF_ERR(close_open(w, op->gen));
            op = open_piece(w);
            st = amq_filter_add_hash(op->f, hash);
        }
        AMQ_RETURN_IF_ERR(st);
        op->items++;
    }
    if (w->p.clock == AMQ_WINDOW_ITEMS)
        w->now++;
    if (was_present != NULL)
        *was_present = hit != NULL;
    return AMQ_OK;
}

amq_status amq_window_add(amq_window *w, const void *key, size_t len,
                          uint64_t now, bool *was_present) {
    if (w == NULL) {
        if (was_present != NULL)
            *was_present = false;
        return AMQ_ERR_INVALID;
    }
    return amq_window_add_hash(w, amq_hash64(&w->hasher, key, len), now,
                               was_present);
}

/* ---- figures -------------------------------------------------------------------- */

static double piece_bound(const amq_window *w, const amq__wpiece *pc) {
    double b = amq_filter_fpr_bound(pc->f);
    if (pc->ribbon) /* a fingerprint equal to a sealed one */
        b += (double)pc->distinct *
             (ldexp(1.0 / (double)w->slots, -(int)w->rbits) + 0x1p-64);
    return b;
}

double amq_window_fpr_bound(const amq_window *w, uint64_t now) {
    if (w == NULL)
        return 1.0;
    uint64_t cur = clock_at(w, now) / w->length;
    double b = 0;
    for (unsigned i = 0; i < w->npc; i++)
        if (live(w, &w->pc[i], cur))
            b += piece_bound(w, &w->pc[i]);
    return b < 1.0 ? b : 1.0;
}

size_t amq_window_size_bytes(const amq_window *w) {
    if (w == NULL)
        return 0;
    size_t n = sizeof *w + (size_t)w->room * sizeof *w->pc;
    for (unsigned i = 0; i < w->npc; i++)
        n += amq_filter_size_bytes(w->pc[i].f);
    return n;
}

void amq_window_get_info(const amq_window *w, uint64_t now,
                         amq_window_info *out) {
    if (out == NULL)
        return;
    memset(out, 0, sizeof *out);
    if (w == NULL)
        return;
    uint64_t t = clock_at(w, now), cur = t / w->length;
    out->clock = w->p.clock;
    out->seal = w->p.seal;
    out->span = w->p.span;
    out->capacity = w->p.capacity;
    out->length = w->length;
    out->fpr = w->p.fpr;
    out->generations = w->p.generations;
    out->now = t;
    out->generation = cur;
    for (unsigned i = 0; i < w->npc; i++) {
        if (!live(w, &w->pc[i], cur))
            continue;
        out->live_items += w->pc[i].items;
        out->pieces++;
    }
    out->bytes = amq_window_size_bytes(w);
    out->bound = amq_window_fpr_bound(w, now);
}
