/*
 * topk.c — Top-K by HeavyKeeper (Gong, Yang, Zhang, Li, Uhlig, Chen, Uhlig,
 * Li: "HeavyKeeper: An Accurate Algorithm for Finding Top-k Elephant
 * Flows", USENIX ATC 2018), the algorithm behind RedisBloom's TOPK.
 *
 * d arrays of w buckets, each a 32-bit fingerprint and a 32-bit count, plus
 * a min-heap of the k items with the largest estimates:
 *
 *   row 0    | fp,c | fp,c | fp,c | ... |        heap (k slots, min at 0)
 *   row 1    | fp,c | fp,c | fp,c | ... |        +------+------+----
 *   ...                                          | hash | count| key_len,
 *   row d-1  | fp,c | fp,c | fp,c | ... |        |      |      | key[keylen]
 *
 * One arrival of item x (fingerprint F = high 32 bits of its hash) in row r,
 * bucket B = reduce(mix64(h + (r+1)·φ), w):
 *   B.c == 0        take the bucket: B = (F, 1);
 *   B.fp == F       B.c += 1;
 *   otherwise       with probability decay^-B.c, B.c -= 1, and if that
 *                   empties it, x takes it: B = (F, 1).
 * The estimate of x is the largest count among its buckets holding F. After
 * the update, x enters the heap (or raises its heap count) when its estimate
 * beats the heap's minimum; the item it pushes out is reported, like
 * TOPK.ADD. `by` arrivals at once draw the number of failed decay trials
 * from the geometric distribution instead of looping per arrival.
 *
 * Randomness: a splitmix64 state kept in the sketch and saved in the frame,
 * so the same operations give the same bytes (golden files, save/load/save),
 * and a loaded sketch continues exactly where the saved one stopped.
 *
 * Invariants: a bucket with count 0 has fingerprint 0; no count exceeds the
 * total number of arrivals; heap entries have distinct hashes, counts >= 1,
 * parent count <= child count; key bytes past key_stored and unused slots
 * are zero. load checks all of these.
 *
 * Guarantee (the paper's Theorem 1 in our words): a bucket holding F only
 * grows when an item with fingerprint F arrives, and starts at 1 when
 * taken, so unless another item shares x's bucket and fingerprint
 * (probability about (distinct items)/(w·2^32) per row), est(x) <= f(x);
 * heap counts are estimates taken earlier, so they do not exceed f(x)
 * either. The error is one-sided: decay makes estimates fall short, and the
 * paper bounds that shortfall only in probability.
 *
 * Failure modes: none after construction; add never allocates or fails
 * (counts saturate at 2^32 - 1). Not a membership filter: contains ("in the
 * top-k list") misses most inserted keys by design.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amq/sketch.h"
#include "core/bits.h"
#include "core/mem.h"
#include "type/type.h"

#define TOPK_GOLDEN 0x9e3779b97f4a7c15ULL
#define TOPK_RNG_SEED 0x6a09e667f3bcc909ULL
#define BUCKET_BYTES 8
#define SLOT_HEAD 24 /* hash u64 | count u64 | key_len u32 | stored u32 */
#define DEFAULT_K 10
#define DEFAULT_DEPTH 4
#define DEFAULT_DECAY 1.08
#define DEFAULT_KEYLEN 64
#define COUNT_MAX UINT32_MAX

struct amq_topk {
    amq__obj o; /* o.items: N, the increments; o.table: buckets then heap */
    uint8_t *buckets;
    uint8_t *heap;
    uint64_t width;
    unsigned depth, k, keylen;
    size_t slot; /* SLOT_HEAD + keylen */
    double decay, ln_decay;
    uint32_t size;
    uint64_t rng;
    amq_hasher hasher;
};

/* ---- buckets ------------------------------------------------------------ */

static inline uint32_t fp_of(uint64_t h) { return (uint32_t)(h >> 32); }

static inline uint8_t *bucket(const amq_topk *t, uint64_t h, unsigned r) {
    uint64_t x = amq__mix64(h + (uint64_t)(r + 1) * TOPK_GOLDEN);
    uint64_t i = (uint64_t)r * t->width + amq__reduce64(x, t->width);
    return t->buckets + i * BUCKET_BYTES;
}

static inline uint32_t b_fp(const uint8_t *b) { return amq__get_u32(b); }
static inline uint32_t b_count(const uint8_t *b) { return amq__get_u32(b + 4); }
static inline void b_set(uint8_t *b, uint32_t fp, uint32_t c) {
    amq__put_u32(b, fp);
    amq__put_u32(b + 4, c);
}

static size_t bucket_bytes(const amq_topk *t) {
    return (size_t)(t->width * t->depth) * BUCKET_BYTES;
}

/* ---- heap slots ----------------------------------------------------------- */

static inline uint8_t *slot(const amq_topk *t, size_t i) {
    return t->heap + i * t->slot;
}
static inline uint64_t s_hash(const uint8_t *s) { return amq__get_u64(s); }
static inline uint64_t s_count(const uint8_t *s) { return amq__get_u64(s + 8); }
static inline uint32_t s_len(const uint8_t *s) { return amq__get_u32(s + 16); }
static inline uint32_t s_stored(const uint8_t *s) {
    return amq__get_u32(s + 20);
}

static uint32_t stored_len(const amq_topk *t, uint32_t key_len) {
    if (key_len == AMQ_TOPK_NO_KEY)
        return 0;
    return key_len < t->keylen ? key_len : t->keylen;
}

/* Write a whole slot: zero key bytes past what is stored. */
static void slot_fill(const amq_topk *t, uint8_t *s, uint64_t h, uint64_t c,
                      const uint8_t *key, uint32_t key_len) {
    uint32_t st = key != NULL ? stored_len(t, key_len) : 0;
    memset(s, 0, t->slot);
    amq__put_u64(s, h);
    amq__put_u64(s + 8, c);
    amq__put_u32(s + 16, key != NULL ? key_len : AMQ_TOPK_NO_KEY);
    amq__put_u32(s + 20, st);
    if (st != 0)
        memcpy(s + SLOT_HEAD, key, st);
}

static void slot_swap(const amq_topk *t, size_t i, size_t j) {
    uint8_t tmp[SLOT_HEAD + AMQ_TOPK_MAX_KEYLEN];
    memcpy(tmp, slot(t, i), t->slot);
    memcpy(slot(t, i), slot(t, j), t->slot);
    memcpy(slot(t, j), tmp, t->slot);
}

static void sift_up(amq_topk *t, size_t i) {
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (s_count(slot(t, p)) <= s_count(slot(t, i)))
            break;
        slot_swap(t, i, p);
        i = p;
    }
}

static void sift_down(amq_topk *t, size_t i) {
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < t->size && s_count(slot(t, l)) < s_count(slot(t, m)))
            m = l;
        if (l + 1 < t->size && s_count(slot(t, l + 1)) < s_count(slot(t, m)))
            m = l + 1;
        if (m == i)
            return;
        slot_swap(t, i, m);
        i = m;
    }
}

static long heap_find(const amq_topk *t, uint64_t h) {
    for (uint32_t i = 0; i < t->size; i++)
        if (s_hash(slot(t, i)) == h)
            return (long)i;
    return -1;
}

/* ---- construction --------------------------------------------------------- */

static amq_status check_shape(unsigned k, uint64_t width, unsigned depth,
                              double decay, unsigned keylen) {
    if (k == 0 || k > AMQ_TOPK_MAX_K || width == 0 || depth == 0 ||
        depth > AMQ_TOPK_MAX_DEPTH || keylen > AMQ_TOPK_MAX_KEYLEN ||
        !(decay > 1.0 && decay <= 100.0))
        return AMQ_ERR_INVALID;
    return AMQ_OK;
}

/* Payload bytes: buckets then k slots; false on overflow. */
static bool payload_bytes(unsigned k, uint64_t width, unsigned depth,
                          unsigned keylen, size_t *out) {
    size_t cells, b, h;
    if (width > SIZE_MAX)
        return false;
    return amq__mul((size_t)width, depth, &cells) &&
           amq__mul(cells, BUCKET_BYTES, &b) &&
           amq__mul(k, SLOT_HEAD + (size_t)keylen, &h) && amq__add(b, h, out);
}

static unsigned round_keylen(unsigned keylen) { return (keylen + 7u) & ~7u; }

static void default_shape(unsigned k, uint64_t *width, unsigned *depth) {
    if (*width == 0)
        *width = 8u * (uint64_t)k < 64 ? 64 : 8u * (uint64_t)k;
    if (*depth == 0)
        *depth = DEFAULT_DEPTH;
}

static amq_status alloc_topk(unsigned k, uint64_t width, unsigned depth,
                             double decay, unsigned keylen,
                             const amq_options *opt, const uint8_t *borrow,
                             amq_topk **out) {
    amq_topk *t;
    size_t bytes;
    void *wr = NULL;
    AMQ_RETURN_IF_ERR(check_shape(k, width, depth, decay, keylen));
    keylen = round_keylen(keylen);
    if (!payload_bytes(k, width, depth, keylen, &bytes) ||
        bytes > (SIZE_MAX >> 2))
        return AMQ_ERR_OVERFLOW;
    AMQ_RETURN_IF_ERR(amq__obj_new(sizeof *t, opt, (void **)&t));
    t->k = k;
    t->width = width;
    t->depth = depth;
    t->decay = decay;
    t->ln_decay = log(decay);
    t->keylen = keylen;
    t->slot = SLOT_HEAD + keylen;
    t->rng = TOPK_RNG_SEED;
    amq_status st = amq__hasher_from_options(opt, AMQ_HASH_XXH3, &t->hasher);
    if (st == AMQ_OK)
        st = amq__obj_table(&t->o, bytes, borrow, &wr);
    if (st != AMQ_OK) {
        amq__obj_free(&t->o);
        return st;
    }
    t->buckets = borrow != NULL ? (uint8_t *)borrow : wr;
    t->heap = t->buckets + bucket_bytes(t);
    *out = t;
    return AMQ_OK;
}

amq_status amq_topk_new(unsigned k, uint64_t width, unsigned depth,
                        double decay, unsigned keylen, const amq_options *opt,
                        amq_topk **out) {
    if (out == NULL)
        return AMQ_ERR_INVALID;
    *out = NULL;
    if (k == 0 || k > AMQ_TOPK_MAX_K)
        return AMQ_ERR_INVALID;
    default_shape(k, &width, &depth);
    return alloc_topk(k, width, depth, decay, keylen, opt, NULL, out);
}

void amq_topk_free(amq_topk *t) { amq__obj_free(t ? &t->o : NULL); }

/* ---- the bucket update ---------------------------------------------------- */

static double next_unit(amq_topk *t) {
    uint64_t z = (t->rng += TOPK_GOLDEN);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (double)((z >> 11) + 1) * 0x1p-53; /* (0, 1] */
}

/* Arrivals up to and including the first successful decay of a count c
 * (success probability decay^-c each), from the geometric distribution;
 * anything above `left` means "no decay within left arrivals". */
static double decay_trials(amq_topk *t, uint32_t c, uint64_t left) {
    /* decay^-c, computed for each draw: a table of it would be 2 KB of
     * every sketch, most of a small one */
    double p = exp(-(double)c * t->ln_decay);
    double u = next_unit(t);
    if (left == 1) /* the common case: one Bernoulli trial, no logarithms */
        return u <= p ? 1.0 : 2.0;
    if (!(p > 0.0))
        return (double)left + 1.0;
    if (p >= 1.0)
        return 1.0;
    return floor(log(u) / log1p(-p)) + 1.0;
}

/* `by` arrivals of fingerprint fp at bucket b; returns the bucket's count
 * for fp afterwards (0 if fp does not hold it). */
static uint32_t bucket_update(amq_topk *t, uint8_t *b, uint32_t fp,
                              uint64_t by) {
    uint32_t c = b_count(b);
    uint32_t add = by > COUNT_MAX ? COUNT_MAX : (uint32_t)by;
    if (c == 0 || b_fp(b) == fp) {
        c = c > COUNT_MAX - add ? COUNT_MAX : c + add;
        b_set(b, fp, c);
        return c;
    }
    uint64_t left = by;
    while (left > 0) {
        double trials = decay_trials(t, c, left);
        if (trials > (double)left)
            break;
        left -= (uint64_t)trials;
        if (--c == 0) {
            uint64_t take = left + 1;
            b_set(b, fp, take > COUNT_MAX ? COUNT_MAX : (uint32_t)take);
            return b_count(b);
        }
    }
    amq__put_u32(b + 4, c);
    return 0;
}

/* ---- the heap update ------------------------------------------------------ */

static void expel_copy(const uint8_t *s, amq_topk_expelled *out) {
    if (out == NULL)
        return;
    memset(out, 0, sizeof *out);
    out->hash = s_hash(s);
    out->count = s_count(s);
    out->key_len = s_len(s);
    out->key_stored = s_stored(s);
    memcpy(out->key, s + SLOT_HEAD, out->key_stored);
}

static bool heap_offer(amq_topk *t, uint64_t h, uint64_t est,
                       const uint8_t *key, uint32_t key_len,
                       amq_topk_expelled *out) {
    if (est == 0)
        return false;
    if (t->size == t->k && est < s_count(slot(t, 0)))
        return false;
    long i = heap_find(t, h);
    if (i >= 0) {
        uint8_t *s = slot(t, (size_t)i);
        if (key != NULL && s_len(s) == AMQ_TOPK_NO_KEY)
            slot_fill(t, s, h, s_count(s), key, key_len);
        if (est > s_count(s)) {
            amq__put_u64(s + 8, est);
            sift_down(t, (size_t)i);
        }
        return false;
    }
    if (t->size < t->k) {
        slot_fill(t, slot(t, t->size), h, est, key, key_len);
        sift_up(t, t->size++);
        return false;
    }
    if (est <= s_count(slot(t, 0)))
        return false;
    expel_copy(slot(t, 0), out);
    slot_fill(t, slot(t, 0), h, est, key, key_len);
    sift_down(t, 0);
    return true;
}

static bool add_impl(amq_topk *t, uint64_t h, uint64_t by, const uint8_t *key,
                     uint32_t key_len, amq_topk_expelled *out) {
    uint32_t fp = fp_of(h), est = 0;
    if (by == 0)
        return false;
    for (unsigned r = 0; r < t->depth; r++) {
        uint32_t c = bucket_update(t, bucket(t, h, r), fp, by);
        if (c > est)
            est = c;
    }
    t->o.items = t->o.items > UINT64_MAX - by ? UINT64_MAX : t->o.items + by;
    return heap_offer(t, h, est, key, key_len, out);
}

bool amq_topk_incr_hash(amq_topk *t, uint64_t h, uint64_t by,
                        amq_topk_expelled *out) {
    return add_impl(t, h, by, NULL, 0, out);
}

bool amq_topk_add_hash(amq_topk *t, uint64_t h, amq_topk_expelled *out) {
    return add_impl(t, h, 1, NULL, 0, out);
}

uint64_t amq_topk_hash(const amq_topk *t, const void *key, size_t len) {
    return amq_hash64(&t->hasher, key, len);
}

void amq_topk_hasher(const amq_topk *t, amq_hasher *out) { *out = t->hasher; }

amq_status amq_topk_add_key(amq_topk *t, const void *key, size_t len,
                            amq_topk_expelled *out, bool *expelled) {
    if (t == NULL || (key == NULL && len != 0) || len >= AMQ_TOPK_NO_KEY)
        return AMQ_ERR_INVALID;
    static const uint8_t empty[1] = {0};
    bool e = add_impl(t, amq_hash64(&t->hasher, key, len), 1,
                      key != NULL ? key : empty, (uint32_t)len, out);
    if (expelled != NULL)
        *expelled = e;
    return AMQ_OK;
}

/* ---- queries -------------------------------------------------------------- */

bool amq_topk_query(const amq_topk *t, uint64_t h) {
    return heap_find(t, h) >= 0;
}

uint64_t amq_topk_count(const amq_topk *t, uint64_t h) {
    uint32_t fp = fp_of(h);
    uint64_t est = 0;
    for (unsigned r = 0; r < t->depth; r++) {
        const uint8_t *b = bucket(t, h, r);
        if (b_count(b) > est && b_fp(b) == fp)
            est = b_count(b);
    }
    long i = heap_find(t, h);
    if (i >= 0 && s_count(slot(t, (size_t)i)) > est)
        est = s_count(slot(t, (size_t)i));
    return est;
}

static int by_count_desc(const void *a, const void *b) {
    const amq_topk_item *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return x->hash < y->hash ? -1 : x->hash > y->hash;
}

static amq_topk_item item_at(const amq_topk *t, size_t i) {
    const uint8_t *s = slot(t, i);
    amq_topk_item it = {s_hash(s), s_count(s), s + SLOT_HEAD, s_len(s),
                        s_stored(s)};
    return it;
}

/* items[0..n) as a heap with the worst item (smallest count) at the root. */
static void worst_down(amq_topk_item *a, size_t n, size_t i) {
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && by_count_desc(&a[l], &a[m]) > 0)
            m = l;
        if (l + 1 < n && by_count_desc(&a[l + 1], &a[m]) > 0)
            m = l + 1;
        if (m == i)
            return;
        amq_topk_item x = a[i];
        a[i] = a[m];
        a[m] = x;
        i = m;
    }
}

/* The best min(cap, size) entries, without allocating: a bounded heap of
 * the best seen so far in the caller's array, then one sort. */
size_t amq_topk_list(const amq_topk *t, amq_topk_item *items, size_t cap) {
    size_t n = t->size, m = cap < n ? cap : n;
    if (items == NULL || m == 0)
        return 0;
    for (size_t i = 0; i < m; i++)
        items[i] = item_at(t, i);
    for (size_t i = m; i-- > 0;)
        worst_down(items, m, i);
    for (size_t i = m; i < n; i++) {
        amq_topk_item x = item_at(t, i);
        if (by_count_desc(&x, &items[0]) < 0) {
            items[0] = x;
            worst_down(items, m, 0);
        }
    }
    qsort(items, m, sizeof *items, by_count_desc);
    return m;
}

uint64_t amq_topk_total(const amq_topk *t) { return t->o.items; }
size_t amq_topk_size(const amq_topk *t) { return t->size; }
unsigned amq_topk_k(const amq_topk *t) { return t->k; }
uint64_t amq_topk_width(const amq_topk *t) { return t->width; }
unsigned amq_topk_depth(const amq_topk *t) { return t->depth; }
double amq_topk_decay(const amq_topk *t) { return t->decay; }
unsigned amq_topk_keylen(const amq_topk *t) { return t->keylen; }

/* ---- the generic interface ------------------------------------------------ */

typedef struct topk_spec {
    uint64_t k, width, depth, keylen;
    double decay;
    bool has_k;
} topk_spec;

static amq_status read_spec(amq__spec *s, topk_spec *p, amq_diag *diag) {
    p->k = DEFAULT_K;
    p->keylen = DEFAULT_KEYLEN;
    p->decay = DEFAULT_DECAY;
    AMQ_RETURN_IF_ERR(
        amq__spec_u64(s, "k", 1, AMQ_TOPK_MAX_K, &p->k, &p->has_k, diag));
    AMQ_RETURN_IF_ERR(
        amq__spec_u64(s, "width", 1, UINT64_C(1) << 40, &p->width, NULL, diag));
    AMQ_RETURN_IF_ERR(amq__spec_u64(s, "depth", 1, AMQ_TOPK_MAX_DEPTH,
                                    &p->depth, NULL, diag));
    AMQ_RETURN_IF_ERR(
        amq__spec_f64(s, "decay", 1.0, 100.0, &p->decay, NULL, diag));
    AMQ_RETURN_IF_ERR(amq__spec_u64(s, "keylen", 0, AMQ_TOPK_MAX_KEYLEN,
                                    &p->keylen, NULL, diag));
    if (!(p->decay > 1.0))
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "topk decay must be above 1 (the paper's b)");
    return AMQ_OK;
}

/* capacity and fpr do not size a top-k sketch (it is not a membership
 * filter); without them the spec must at least say k=. */
static amq_status t_create(const amq__type *self, amq__spec *spec,
                           uint64_t capacity, double fpr,
                           const amq_options *opt, amq__obj **out,
                           amq_diag *diag) {
    topk_spec p;
    amq_topk *t;
    (void)self, (void)fpr;
    memset(&p, 0, sizeof p);
    AMQ_RETURN_IF_ERR(read_spec(spec, &p, diag));
    if (capacity == 0 && !p.has_k)
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "topk needs k= (the number of top items)");
    unsigned depth = (unsigned)p.depth;
    default_shape((unsigned)p.k, &p.width, &depth);
    AMQ_RETURN_IF_ERR(alloc_topk((unsigned)p.k, p.width, depth, p.decay,
                                 (unsigned)p.keylen, opt, NULL, &t));
    *out = &t->o;
    return AMQ_OK;
}

static amq_status t_add(amq__obj *o, uint64_t h) {
    amq_topk_add_hash((amq_topk *)o, h, NULL);
    return AMQ_OK;
}
/* A lookup reads only the heap (k slots, usually cached): the generic
 * loop is the batch path. */
static bool t_contains(const amq__obj *o, uint64_t h) {
    return amq_topk_query((const amq_topk *)o, h);
}
static amq_status t_count(const amq__obj *o, uint64_t h, uint64_t *out) {
    *out = amq_topk_count((const amq_topk *)o, h);
    return AMQ_OK;
}
/* A key never added is "in the top-k" only if its 64-bit hash equals one of
 * the listed hashes. */
static double t_bound(const amq__obj *o) {
    return ldexp((double)((const amq_topk *)o)->size, -64);
}
static size_t t_describe(const amq__obj *o, char *buf, size_t cap) {
    const amq_topk *t = (const amq_topk *)o;
    char decay[AMQ_REAL_TEXT_MAX];
    return amq__describe(buf, cap,
                         "k=%u,width=%llu,depth=%u,decay=%s,keylen=%u", t->k,
                         (unsigned long long)t->width, t->depth,
                         amq_real_text(t->decay, decay), t->keylen);
}

/* params: k u32 | depth u32 | width u64 | decay f64 | keylen u32 |
 * size u32 | total u64 | rng u64. Top-k has no false-positive curve (the
 * allocation engine cannot size it): the type leaves curve NULL. */
#define PARAMS_LEN 48

static void t_params_write(const amq__obj *o, amq__wr *w) {
    const amq_topk *t = (const amq_topk *)o;
    amq__wr_u32(w, t->k);
    amq__wr_u32(w, t->depth);
    amq__wr_u64(w, t->width);
    amq__wr_f64(w, t->decay);
    amq__wr_u32(w, t->keylen);
    amq__wr_u32(w, t->size);
    amq__wr_u64(w, o->items);
    amq__wr_u64(w, t->rng);
}

typedef struct topk_shape {
    uint32_t k, depth, keylen, size;
    uint64_t width, total, rng;
    double decay;
    size_t at_total;
} topk_shape;

static amq_status read_params(amq__rd *r, size_t len, topk_shape *s) {
    size_t bytes;
    AMQ_RETURN_IF_ERR(amq__rd_expect(r, PARAMS_LEN));
    size_t at_k = amq__rd_u32(r, &s->k);
    size_t at_depth = amq__rd_u32(r, &s->depth);
    size_t at_width = amq__rd_u64(r, &s->width);
    size_t at_decay = amq__rd_f64(r, &s->decay);
    size_t at_keylen = amq__rd_u32(r, &s->keylen);
    size_t at_size = amq__rd_u32(r, &s->size);
    s->at_total = amq__rd_u64(r, &s->total);
    amq__rd_u64(r, &s->rng);
    if (s->k == 0 || s->k > AMQ_TOPK_MAX_K)
        return amq__rd_bad(r, at_k, "k=%u out of range", s->k);
    if (s->depth == 0 || s->depth > AMQ_TOPK_MAX_DEPTH)
        return amq__rd_bad(r, at_depth, "depth %u out of range", s->depth);
    if (!(s->decay > 1.0 && s->decay <= 100.0))
        return amq__rd_bad(r, at_decay, "decay out of range");
    if (s->keylen > AMQ_TOPK_MAX_KEYLEN || s->keylen % 8 != 0)
        return amq__rd_bad(r, at_keylen, "keylen %u out of range", s->keylen);
    if (s->size > s->k)
        return amq__rd_bad(r, at_size, "list of %u items exceeds k = %u",
                           s->size, s->k);
    if (s->width == 0 ||
        !payload_bytes(s->k, s->width, s->depth, s->keylen, &bytes) ||
        bytes != len)
        return amq__rd_bad(r, at_width,
                           "shape does not match a %zu-byte "
                           "payload",
                           len);
    return AMQ_OK;
}

static bool zero_bytes(const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (p[i] != 0)
            return false;
    return true;
}

/* Every bucket: empty ones carry no fingerprint; no count above the total. */
static bool buckets_valid(const amq_topk *t) {
    size_t n = (size_t)(t->width * t->depth);
    for (size_t i = 0; i < n; i++) {
        const uint8_t *b = t->buckets + i * BUCKET_BYTES;
        if ((b_count(b) == 0 && b_fp(b) != 0) || b_count(b) > t->o.items)
            return false;
    }
    return true;
}

static bool slot_valid(const amq_topk *t, size_t i) {
    const uint8_t *s = slot(t, i);
    uint64_t c = s_count(s);
    uint32_t st = s_stored(s);
    if (c == 0 || c > t->o.items || st != stored_len(t, s_len(s)))
        return false;
    if (!zero_bytes(s + SLOT_HEAD + st, t->keylen - st))
        return false;
    return i == 0 || s_count(slot(t, (i - 1) / 2)) <= c;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Listed hashes are distinct (sorted copy; bounded by the payload). */
static amq_status hashes_distinct(const amq_topk *t, bool *ok) {
    *ok = true;
    if (t->size < 2)
        return AMQ_OK;
    uint64_t *h = amq__alloc(&t->o.mem, (size_t)t->size * sizeof *h);
    if (h == NULL)
        return AMQ_ERR_NOMEM;
    for (uint32_t i = 0; i < t->size; i++)
        h[i] = s_hash(slot(t, i));
    qsort(h, t->size, sizeof *h, cmp_u64);
    for (uint32_t i = 1; i < t->size; i++)
        *ok = *ok && h[i] != h[i - 1];
    amq__free(&t->o.mem, h, (size_t)t->size * sizeof *h);
    return AMQ_OK;
}

/* Where an entry sits in the frame, for diagnostics. */
static size_t entry_at(const amq_topk *t, const amq__rd *r, size_t i) {
    return r->payload_at + (size_t)(slot(t, i) - t->buckets);
}

static amq_status check_contents(const amq_topk *t, const amq__rd *r,
                                 const topk_shape *sh) {
    if (!buckets_valid(t))
        return amq__rd_bad(r, sh->at_total,
                           "a bucket is inconsistent with the total count");
    for (size_t i = 0; i < t->k; i++) {
        bool ok =
            i < t->size ? slot_valid(t, i) : zero_bytes(slot(t, i), t->slot);
        if (!ok)
            return amq__rd_bad(r, entry_at(t, r, i),
                               "list entry %zu is inconsistent", i);
    }
    bool distinct;
    AMQ_RETURN_IF_ERR(hashes_distinct(t, &distinct));
    if (!distinct)
        return amq__rd_bad(r, entry_at(t, r, 0),
                           "the list holds an item "
                           "twice");
    return AMQ_OK;
}

static amq_status t_load(const amq__type *self, amq__rd *r,
                         const uint8_t *payload, size_t len, bool view,
                         const amq_options *opt, amq__obj **out) {
    topk_shape sh;
    amq_topk *t;
    (void)self;
    AMQ_RETURN_IF_ERR(read_params(r, len, &sh));
    AMQ_RETURN_IF_ERR(alloc_topk(sh.k, sh.width, sh.depth, sh.decay, sh.keylen,
                                 opt, view ? payload : NULL, &t));
    if (!view)
        memcpy(t->buckets, payload, len);
    t->size = sh.size;
    t->o.items = sh.total;
    t->rng = sh.rng;
    amq_status st = check_contents(t, r, &sh);
    if (st != AMQ_OK) {
        amq_topk_free(t);
        return st;
    }
    *out = &t->o;
    return AMQ_OK;
}

/* AMQ_CAP_SKETCH tells the generic layer's users (contract suite, demo)
 * that contains() is "in the top-k list", not set membership. */
#define TOPK_CAPS (AMQ_CAP_COUNT | AMQ_CAP_SKETCH)

const amq__type amq__type_topk = {
    .info = {.name = "topk",
             .type_id = AMQ__ID_topk,
             .caps = TOPK_CAPS,
             .summary = "Top-K heavy hitters (HeavyKeeper); contains = in "
                        "the top-k list, not a membership filter",
             .params = "k=ITEMS (1-65536, default 10), width=BUCKETS per row "
                       "(default max(64, 8k)), depth=ROWS (1-16, default 4), "
                       "decay=BASE (> 1, default 1.08), keylen=BYTES of key "
                       "kept per item (0-1024, default 64)",
             .default_hash = AMQ_HASH_XXH3},
    /* contains scans the k heap slots, a line or more each (from the layout) */
    .reads_param = "k",
    .kernel_shapes = amq__defaults_only,
    .create = t_create,
    .load = t_load,
    .add = t_add,
    .contains = t_contains,
    .count = t_count,
    .fpr_bound = t_bound,
    .describe = t_describe,
    .params_write = t_params_write,
};
