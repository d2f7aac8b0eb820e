/*
 * topk.c — TOPK.*: RedisBloom's Top-K on amq's HeavyKeeper (amq_topk,
 * src/sketch/topk.c).
 *
 * RedisBloom writes the decay as a probability base p in (0, 1] (a bucket
 * of count c decays with probability p^c); amq takes the paper's b > 1
 * with probability b^-c, so b = 1/p. p = 1 (always decay) maps to
 * b = 1 + 2^-30, whose decay probability differs from 1 by at most
 * c·2^-30; p below 0.01 (b > 100) is refused. Depth is at most 16. Items
 * are counted by their 64-bit hash (keys: below). HeavyKeeper's decay draws
 * come from a generator stored with the sketch, so a replica replaying the
 * same commands holds the same bytes.
 *
 * TOPK.INCRBY item n counts n - 1 arrivals by hash and the last one with
 * the key, so an item that enters the list is named.
 *
 * Keys: the sketch keeps none (keylen 0); the module keeps each listed
 * item's whole key beside it, copied when the item enters the list and
 * dropped when it is pushed out (the only way out), so LIST names every
 * item in full and a small sketch costs its buckets and k 24-byte slots,
 * not k fixed key buffers. The keys are the blob's second frame: n u32,
 * then per key its hash u64, length u32 and bytes; a key whose hash is not
 * listed, or listed twice, is refused. Sketches saved with key prefixes
 * inside (one frame, keylen 256) load and answer as before.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "amqr.h"

#define TOPK_MAX_INCR 100000
#define TOPK_MAX_CELLS (1ull << 32)

static double base_of(double p) {
    return p >= 1.0 ? 1.0 + ldexp(1.0, -30) : 1.0 / p;
}

static void p_write(const rval *v, uint8_t *p) {
    memcpy(p, &v->u.topk.decay, 8);
}
static bool p_read(rval *v, const uint8_t *p, char *err, size_t cap) {
    double d;
    memcpy(&d, p, 8);
    if (!(d >= 0.01 && d <= 1.0)) {
        snprintf(err, cap, "bad TOPK decay");
        return false;
    }
    v->u.topk.decay = d;
    return true;
}
/* ---- the listed items' keys ------------------------------------------------ */

static bool keyed(const rval *v) { return amq_topk_keylen(v->u.topk.t) == 0; }

static tkey *key_find(const topk_part *p, uint64_t h) {
    for (uint32_t i = 0; i < p->nkeys; i++)
        if (p->keys[i].hash == h)
            return &p->keys[i];
    return NULL;
}

static bool key_put(rval *v, uint64_t h, const void *bytes, size_t n) {
    topk_part *p = &v->u.topk;
    if (n > UINT32_MAX)
        return false;
    if (p->nkeys == p->room) {
        uint32_t room = p->room ? 2 * p->room : 4;
        tkey *k = v->alloc.realloc(v->alloc.ctx, p->keys, p->room * sizeof *k,
                                   room * sizeof *k);
        if (k == NULL)
            return false;
        p->keys = k;
        p->room = room;
    }
    uint8_t *b = v->alloc.alloc(v->alloc.ctx, n ? n : 1);
    if (b == NULL)
        return false;
    if (n > 0)
        memcpy(b, bytes, n);
    p->keys[p->nkeys++] = (tkey){h, (uint32_t)n, b};
    return true;
}

static void key_drop(rval *v, uint64_t h) {
    topk_part *p = &v->u.topk;
    tkey *k = key_find(p, h);
    if (k == NULL)
        return;
    v->alloc.free(v->alloc.ctx, k->bytes, k->len ? k->len : 1);
    *k = p->keys[--p->nkeys];
}

static void keys_free(rval *v) {
    topk_part *p = &v->u.topk;
    while (p->nkeys > 0)
        key_drop(v, p->keys[p->nkeys - 1].hash);
    if (p->keys != NULL)
        v->alloc.free(v->alloc.ctx, p->keys, p->room * sizeof *p->keys);
    p->keys = NULL;
    p->room = 0;
}

/* ---- family operations -------------------------------------------------------- */

static unsigned n_frames(const rval *v) { return keyed(v) ? 2 : 1; }

static size_t keys_size(const topk_part *p) {
    size_t n = 4;
    for (uint32_t i = 0; i < p->nkeys; i++)
        n += 12 + p->keys[i].len;
    return n;
}

static size_t f_size(const rval *v, unsigned i) {
    return i == 0 ? amq_topk_serialized_size(v->u.topk.t)
                  : keys_size(&v->u.topk);
}

static void le(uint8_t *p, uint64_t x, int n) {
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(x >> (8 * i));
}
static uint64_t get_le(const uint8_t *p, int n) {
    uint64_t x = 0;
    for (int i = n - 1; i >= 0; i--)
        x = x << 8 | p[i];
    return x;
}

static amq_status f_save(const rval *v, unsigned i, uint8_t *b, size_t cap) {
    const topk_part *p = &v->u.topk;
    if (i == 0)
        return amq_topk_save(p->t, b, cap, NULL);
    if (cap < keys_size(p))
        return AMQ_ERR_BUFFER;
    le(b, p->nkeys, 4);
    b += 4;
    for (uint32_t k = 0; k < p->nkeys; k++) {
        le(b, p->keys[k].hash, 8);
        le(b + 8, p->keys[k].len, 4);
        if (p->keys[k].len > 0)
            memcpy(b + 12, p->keys[k].bytes, p->keys[k].len);
        b += 12 + p->keys[k].len;
    }
    return AMQ_OK;
}

static bool keys_load(rval *v, const uint8_t *b, size_t len, char *err,
                      size_t cap) {
    const topk_part *p = &v->u.topk;
    if (len < 4) {
        snprintf(err, cap, "TOPK keys frame too short");
        return false;
    }
    uint64_t n = get_le(b, 4);
    size_t off = 4;
    if (n > amq_topk_k(p->t)) {
        snprintf(err, cap, "TOPK keys frame lists %llu keys, k is %u",
                 (unsigned long long)n, amq_topk_k(p->t));
        return false;
    }
    for (uint64_t i = 0; i < n; i++) {
        if (len - off < 12) {
            snprintf(err, cap, "TOPK keys frame truncated");
            return false;
        }
        uint64_t h = get_le(b + off, 8), kl = get_le(b + off + 8, 4);
        if (kl > len - off - 12 || !amq_topk_query(p->t, h) ||
            key_find(p, h) != NULL) {
            snprintf(err, cap,
                     "TOPK key %llu: not a listed item, a repeat "
                     "or past the frame",
                     (unsigned long long)i);
            return false;
        }
        if (!key_put(v, h, b + off + 12, (size_t)kl)) {
            snprintf(err, cap, "out of memory");
            return false;
        }
        off += 12 + (size_t)kl;
    }
    if (off != len) {
        snprintf(err, cap, "trailing bytes in the TOPK keys frame");
        return false;
    }
    return true;
}

static bool f_load(rval *v, unsigned i, unsigned nf, const uint8_t *b,
                   size_t len, char *err, size_t cap) {
    amq_diag diag;
    amq_options o = rv_options(v);
    if (nf != 1 && nf != 2) {
        snprintf(err, cap, "a TOPK value holds one or two frames");
        return false;
    }
    if (i == 1)
        return keys_load(v, b, len, err, cap);
    memset(&diag, 0, sizeof diag);
    amq_status st = amq_topk_load(b, len, &o, &v->u.topk.t, &diag);
    if (st != AMQ_OK)
        return rv_frame_refused(err, cap, st, &diag);
    if (amq_topk_decay(v->u.topk.t) != base_of(v->u.topk.decay)) {
        snprintf(err, cap, "TOPK frame decay does not match its key");
        return false;
    }
    if ((nf == 2) != keyed(v)) {
        snprintf(err, cap, "a TOPK sketch of keylen %u with %u frames",
                 amq_topk_keylen(v->u.topk.t), nf);
        return false;
    }
    return true;
}
static void destroy(rval *v) {
    keys_free(v);
    amq_topk_free(v->u.topk.t);
}

const fam_ops topk_ops = {
    "topk", "amq-topkh", "AMQ.LOADCHUNK", 8,      p_write, p_read, n_frames,
    NULL,   f_size,      f_save,          f_load, destroy, NULL};

static rval *need(host *h) {
    return key_need(h, 1, FAM_TOPK, "TopK:", "TopK: key does not exist");
}

int topk_reserve(host *h) {
    long long k, w = 8, d = 7;
    double p = 0.9;
    rval *v;
    if (h->argc != 3 && h->argc != 6)
        return r_arity(h);
    if (!arg_ll(&h->argv[2], &k) || k < 1 || k > AMQ_TOPK_MAX_K)
        return r_err(h, "TopK: invalid k");
    if (h->argc == 6) {
        if (!arg_ll(&h->argv[3], &w) || w < 1 ||
            (unsigned long long)w > TOPK_MAX_CELLS)
            return r_err(h, "TopK: invalid width");
        if (!arg_ll(&h->argv[4], &d) || d < 1 || d > UINT32_MAX ||
            (strict(h) && d > AMQ_TOPK_MAX_DEPTH))
            return r_err(h, "TopK: invalid depth");
        if (!arg_double(&h->argv[5], &p) || !(p > 0 && p <= 1))
            return r_err(h, "TopK: invalid decay value. must be '<= 1' & "
                            "'> 0'");
        if (p < 0.01 && strict(h))
            return r_err(h, "TopK: decay below 0.01 is not supported");
    }
    if (h->ops->lookup(h, 1, FAM_TOPK, &v) != KEY_EMPTY)
        return r_err(h, "TopK: key already exists");
    if (d > AMQ_TOPK_MAX_DEPTH || p < 0.01) {
        /* beyond amq's HeavyKeeper: RedisBloom's own sketch (rb.c) */
        char err[160];
        if ((unsigned long long)w > UINT32_MAX)
            return r_err(h, "TopK: invalid width");
        v = rb_topk_new(h, (uint32_t)k, (uint32_t)w, (uint32_t)d, p, err,
                        sizeof err);
        if (v == NULL)
            return r_err(h, err);
    } else {
        if (!h->ops->budget(h,
                            (double)w * (double)d * 8 + (double)k * 48 + 1024))
            return r_err(h, "TopK: the sketch is larger than the memory limit "
                            "allows");
        v = rv_new(FAM_TOPK);
        if (v == NULL)
            return r_err(h, "TopK: out of memory");
        amq_options o = rv_options(v);
        v->u.topk.decay = p;
        amq_status st = amq_topk_new((unsigned)k, (uint64_t)w, (unsigned)d,
                                     base_of(p), 0, &o, &v->u.topk.t);
        if (st != AMQ_OK) {
            rv_free(v);
            return r_status(h, "TopK", st);
        }
    }
    if (!store_or_reply(h, v))
        return 0;
    h->ops->replicate_verbatim(h);
    h->ops->notify(h, "topk.reserve", 1);
    r_ok(h);
    return 0;
}

/* The expelled item's key, or nil. */
static void reply_expelled(host *h, const rval *v, bool out,
                           const amq_topk_expelled *e) {
    const tkey *k = out && keyed(v) ? key_find(&v->u.topk, e->hash) : NULL;
    if (k != NULL)
        r_item(h, k->bytes, k->len);
    else if (out && !keyed(v) && e->key_len != AMQ_TOPK_NO_KEY)
        r_item(h, e->key, e->key_stored);
    else
        h->ops->r_null(h);
}

/* After an item's arrivals: the keys of items pushed out go, the item's
 * own comes if it is listed now. */
static void keys_after(rval *v, const rarg *it, uint64_t x,
                       const amq_topk_expelled *e, int ne) {
    const amq_topk *t = v->u.topk.t;
    if (!keyed(v))
        return;
    for (int i = 0; i < ne; i++)
        if (!amq_topk_query(t, e[i].hash))
            key_drop(v, e[i].hash);
    if (amq_topk_query(t, x) && key_find(&v->u.topk, x) == NULL)
        key_put(v, x, it->p, it->n); /* out of memory: LIST shows nil */
}

/* A migrated sketch's add (rb.c): the expelled item or nil. */
static void rb_add_reply(host *h, rval *v, const rarg *it, uint32_t by) {
    rb_topk_item out;
    if (!rb_topk_add(v, it->p, it->n, by, &out) || out.item == NULL) {
        h->ops->r_null(h);
        return;
    }
    r_item(h, out.item, out.len);
    rb_topk_free_item(v, &out);
}

int topk_add(host *h) {
    amq_topk_expelled e;
    bool out;
    if (h->argc < 3)
        return r_arity(h);
    rval *v = need(h);
    if (v == NULL)
        return 0;
    h->ops->r_arr(h, h->argc - 2);
    for (int i = 2; v->rb != NULL && i < h->argc; i++)
        rb_add_reply(h, v, &h->argv[i], 1);
    for (int i = 2; v->rb == NULL && i < h->argc; i++) {
        const rarg *it = &h->argv[i];
        out = false;
        if (amq_topk_add_key(v->u.topk.t, it->p, it->n, &e, &out) != AMQ_OK)
            out = false;
        reply_expelled(h, v, out, &e);
        keys_after(v, it, amq_topk_hash(v->u.topk.t, it->p, it->n), &e,
                   out ? 1 : 0);
    }
    h->ops->replicate_verbatim(h);
    h->ops->notify(h, "topk.add", 1);
    return 0;
}

int topk_incrby(host *h) {
    long long by;
    amq_topk_expelled e, e2;
    if (h->argc < 4 || h->argc % 2 != 0)
        return r_arity(h);
    /* RedisBloom takes 0 (no change, no expelled item); STRICT refuses it */
    const long long least = strict(h) ? 1 : 0;
    for (int i = 3; i < h->argc; i += 2)
        if (!arg_ll(&h->argv[i], &by) || by < least || by > TOPK_MAX_INCR)
            return r_err(h, strict(h)
                                ? "TopK: increment must be an integer greater "
                                  "or equal to 1 and less than or equal to "
                                  "100000"
                                : "TopK: increment must be an integer greater "
                                  "or equal to 0 and smaller or equal to "
                                  "100,000");
    rval *v = need(h);
    if (v == NULL)
        return 0;
    if (v->rb != NULL) {
        h->ops->r_arr(h, (h->argc - 2) / 2);
        for (int i = 2; i < h->argc; i += 2) {
            arg_ll(&h->argv[i + 1], &by);
            rb_add_reply(h, v, &h->argv[i], (uint32_t)by);
        }
        h->ops->replicate_verbatim(h);
        h->ops->notify(h, "topk.incrby", 1);
        return 0;
    }
    amq_topk *t = v->u.topk.t;
    h->ops->r_arr(h, (h->argc - 2) / 2);
    for (int i = 2; i < h->argc; i += 2) {
        const rarg *it = &h->argv[i];
        bool out2 = false;
        arg_ll(&h->argv[i + 1], &by);
        if (by == 0) {
            h->ops->r_null(h);
            continue;
        }
        uint64_t x = amq_topk_hash(t, it->p, it->n);
        amq_topk_expelled gone[2];
        int ne = 0;
        bool out = amq_topk_incr_hash(t, x, (uint64_t)by - 1, &e);
        if (out)
            gone[ne++] = e;
        if (amq_topk_add_key(t, it->p, it->n, &e2, &out2) == AMQ_OK && out2) {
            gone[ne++] = e2;
            if (!out) {
                e = e2;
                out = true;
            }
        }
        reply_expelled(h, v, out, &e);
        keys_after(v, it, x, gone, ne);
    }
    h->ops->replicate_verbatim(h);
    h->ops->notify(h, "topk.incrby", 1);
    return 0;
}

static int per_item(host *h, bool count) {
    if (h->argc < 3)
        return r_arity(h);
    rval *v = need(h);
    if (v == NULL)
        return 0;
    const amq_topk *t = v->u.topk.t;
    h->ops->r_arr(h, h->argc - 2);
    for (int i = 2; v->rb != NULL && i < h->argc; i++) {
        const rarg *a = &h->argv[i];
        h->ops->r_int(h, count ? (long long)rb_topk_count(v, a->p, a->n)
                               : rb_topk_query(v, a->p, a->n));
    }
    for (int i = 2; v->rb == NULL && i < h->argc; i++) {
        uint64_t x = amq_topk_hash(t, h->argv[i].p, h->argv[i].n);
        h->ops->r_int(h, count ? (long long)amq_topk_count(t, x)
                               : amq_topk_query(t, x));
    }
    return 0;
}

int topk_query(host *h) { return per_item(h, false); }
int topk_count(host *h) { return per_item(h, true); }

int topk_list(host *h) {
    bool with = false;
    if (h->argc == 3 && arg_is(&h->argv[2], "WITHCOUNT"))
        with = true;
    else if (h->argc != 2)
        return h->argc == 3 ? r_err(h, "TopK: invalid argument") : r_arity(h);
    rval *v = need(h);
    if (v == NULL)
        return 0;
    if (v->rb != NULL) {
        uint32_t k, w, d;
        double decay;
        rb_topk_info(v, &k, &w, &d, &decay);
        rb_topk_item *items = rv_sys_alloc(k * sizeof *items);
        if (items == NULL)
            return r_err(h, "TopK: out of memory");
        size_t n = rb_topk_list(v, items);
        h->ops->r_arr(h, (long)(with ? 2 * n : n));
        for (size_t i = 0; i < n; i++) {
            /* a listed entry without bytes is the empty item */
            r_item(h, items[i].item ? (const void *)items[i].item : "",
                   items[i].len);
            if (with)
                h->ops->r_int(h, items[i].count);
        }
        rv_sys_free(items);
        return 0;
    }
    const amq_topk *t = v->u.topk.t;
    size_t k = amq_topk_k(t);
    amq_topk_item *items = rv_sys_alloc(k * sizeof *items);
    if (items == NULL)
        return r_err(h, "TopK: out of memory");
    size_t n = amq_topk_list(t, items, k);
    h->ops->r_arr(h, (long)(with ? 2 * n : n));
    for (size_t i = 0; i < n; i++) {
        const tkey *key = keyed(v) ? key_find(&v->u.topk, items[i].hash) : NULL;
        if (key != NULL)
            r_item(h, key->bytes, key->len);
        else if (keyed(v) || items[i].key_len == AMQ_TOPK_NO_KEY)
            h->ops->r_null(h);
        else
            r_item(h, items[i].key, items[i].key_stored);
        if (with)
            h->ops->r_int(h, (long long)items[i].count);
    }
    rv_sys_free(items);
    return 0;
}

int topk_info(host *h) {
    if (h->argc != 2)
        return r_arity(h);
    rval *v = need(h);
    if (v == NULL)
        return 0;
    uint64_t k, w, d;
    double decay;
    if (v->rb != NULL) {
        uint32_t k32, w32, d32;
        rb_topk_info(v, &k32, &w32, &d32, &decay);
        k = k32;
        w = w32;
        d = d32;
    } else {
        k = amq_topk_k(v->u.topk.t);
        w = amq_topk_width(v->u.topk.t);
        d = amq_topk_depth(v->u.topk.t);
        decay = v->u.topk.decay;
    }
    r_info(h, 4);
    h->ops->r_simple(h, "k");
    h->ops->r_int(h, (long long)k);
    h->ops->r_simple(h, "width");
    h->ops->r_int(h, (long long)w);
    h->ops->r_simple(h, "depth");
    h->ops->r_int(h, (long long)d);
    h->ops->r_simple(h, "decay");
    h->ops->r_double(h, decay);
    return 0;
}
