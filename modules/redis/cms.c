/*
 * cms.c — CMS.*: RedisBloom's Count-Min sketch on amq's amq_cms
 * (src/sketch/countmin.c), 32-bit counters, conservative update.
 *
 * Conservative update (Estan & Varghese) raises only the counters that
 * must rise, so every estimate is at most what RedisBloom's plain update
 * gives for the same stream and never below the true count; counters
 * saturate at 2^32 - 1 instead of wrapping. INITBYPROB sizes as RedisBloom
 * documents: width = ceil(2 / error), depth = ceil(log(prob) / log(1/2)).
 *
 * CMS.MERGE dest n src... [WEIGHTS w...] sets dest to the weighted sum of
 * the sources (dest may be one of them). A weight w is applied by binary
 * doubling (log2 w merges of a doubled copy), so a large weight costs
 * O(size · log w), and the sum is built aside: dest changes only when every
 * source was read. Weights must be >= 0 (counters are unsigned).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "amqr.h"

#define CMS_MAX_CELLS (1ull << 34)

static size_t f_size(const rval *v, unsigned i) {
    (void)i;
    return amq_cms_serialized_size(v->u.cms.c);
}
static amq_status f_save(const rval *v, unsigned i, uint8_t *b, size_t cap) {
    (void)i;
    return amq_cms_save(v->u.cms.c, &v->u.cms.h, b, cap, NULL);
}
static bool f_load(rval *v, unsigned i, unsigned nf, const uint8_t *b,
                   size_t len, char *err, size_t cap) {
    amq_diag diag;
    amq_options o = rv_options(v);
    (void)i;
    if (!rv_one_frame(nf, "CMS", err, cap))
        return false;
    memset(&diag, 0, sizeof diag);
    amq_status st = amq_cms_load(b, len, &o, &v->u.cms.c, &v->u.cms.h, &diag);
    return st == AMQ_OK || rv_frame_refused(err, cap, st, &diag);
}
static void destroy(rval *v) { amq_cms_free(v->u.cms.c); }

const fam_ops cms_ops = {
    "cms", "amq-cmsk_", "AMQ.LOADCHUNK", 0,      NULL,    NULL, NULL,
    NULL,  f_size,      f_save,          f_load, destroy, NULL};

/* ---- keys --------------------------------------------------------------------- */

/* The CMS at argv[argi]; NULL after an error reply. */
static rval *need(host *h, int argi) {
    return key_need(h, argi, FAM_CMS, "CMS:", "CMS: key does not exist");
}

static int init(host *h, uint64_t w, unsigned d) {
    rval *v;
    if (h->ops->lookup(h, 1, FAM_CMS, &v) != KEY_EMPTY)
        return r_err(h, "CMS: key already exists");
    if ((double)w * d > (double)CMS_MAX_CELLS ||
        !h->ops->budget(h, (double)w * d * 4 + 512))
        return r_err(h, "CMS: the sketch is larger than the memory limit "
                        "allows");
    v = rv_new(FAM_CMS);
    if (v == NULL)
        return r_err(h, "CMS: out of memory");
    amq_options o = rv_options(v);
    amq_hasher_init(&v->u.cms.h, AMQ_HASH_XXH3, 0, NULL);
    amq_status st = amq_cms_new(w, d, 32, true, &o, &v->u.cms.c);
    if (st != AMQ_OK) {
        rv_free(v);
        return r_status(h, "CMS", st);
    }
    if (!store_or_reply(h, v))
        return 0;
    h->ops->replicate_verbatim(h);
    h->ops->notify(h, "cms.init", 1);
    r_ok(h);
    return 0;
}

int cms_initbydim(host *h) {
    long long w, d;
    if (h->argc != 4)
        return r_arity(h);
    if (!arg_ll(&h->argv[2], &w) || w < 1 ||
        (unsigned long long)w > CMS_MAX_CELLS)
        return r_err(h, "CMS: invalid width");
    if (!arg_ll(&h->argv[3], &d) || d < 1 || d > AMQ_CMS_MAX_DEPTH)
        return r_err(h, "CMS: invalid depth");
    return init(h, (uint64_t)w, (unsigned)d);
}

int cms_initbyprob(host *h) {
    double e, p;
    if (h->argc != 4)
        return r_arity(h);
    if (!arg_double(&h->argv[2], &e) || !(e > 0 && e < 1))
        return r_err(h, "CMS: invalid overestimation value");
    if (!arg_double(&h->argv[3], &p) || !(p > 0 && p < 1))
        return r_err(h, "CMS: invalid prob value");
    double w = ceil(2.0 / e), d = ceil(log10(p) / log10(0.5));
    if (w > (double)CMS_MAX_CELLS)
        return r_err(h, "CMS: invalid overestimation value");
    if (d > AMQ_CMS_MAX_DEPTH)
        return r_err(h, "CMS: invalid prob value");
    return init(h, (uint64_t)w, (unsigned)(d < 1 ? 1 : d));
}

int cms_incrby(host *h) {
    long long by;
    if (h->argc < 4 || h->argc % 2 != 0)
        return r_arity(h);
    for (int i = 3; i < h->argc; i += 2) {
        if (!arg_ll(&h->argv[i], &by))
            return r_err(h, "CMS: Cannot parse number");
        if (by < 0)
            return r_err(h, "CMS: Number cannot be negative");
    }
    rval *v = need(h, 1);
    if (v == NULL)
        return 0;
    h->ops->r_arr(h, (h->argc - 2) / 2);
    for (int i = 2; i < h->argc; i += 2) {
        arg_ll(&h->argv[i + 1], &by);
        uint64_t est, max = UINT32_MAX;
        if (v->rb != NULL) {
            est = rb_cms_incr(v, h->argv[i].p, h->argv[i].n, (uint64_t)by);
        } else {
            uint64_t x = amq_hash64(&v->u.cms.h, h->argv[i].p, h->argv[i].n);
            est = amq_cms_incr(v->u.cms.c, x, (uint64_t)by);
            max = amq_cms_counter_max(v->u.cms.c);
        }
        /* a counter at its maximum: RedisBloom's error element (unless
         * STRICT, where the saturated estimate is the answer) */
        if (!strict(h) && est >= max)
            h->ops->r_err(h, "CMS: INCRBY overflow");
        else
            h->ops->r_int(h, (long long)est);
    }
    h->ops->replicate_verbatim(h);
    h->ops->notify(h, "cms.incrby", 1);
    return 0;
}

int cms_query(host *h) {
    if (h->argc < 3)
        return r_arity(h);
    rval *v = need(h, 1);
    if (v == NULL)
        return 0;
    h->ops->r_arr(h, h->argc - 2);
    for (int i = 2; i < h->argc; i++) {
        if (v->rb != NULL) {
            h->ops->r_int(
                h, (long long)rb_cms_query(v, h->argv[i].p, h->argv[i].n));
            continue;
        }
        uint64_t x = amq_hash64(&v->u.cms.h, h->argv[i].p, h->argv[i].n);
        h->ops->r_int(h, (long long)amq_cms_query(v->u.cms.c, x));
    }
    return 0;
}

int cms_info(host *h) {
    if (h->argc != 2)
        return r_arity(h);
    rval *v = need(h, 1);
    if (v == NULL)
        return 0;
    uint64_t w, d, count;
    if (v->rb != NULL) {
        rb_cms_info(v, &w, &d, &count);
    } else {
        w = amq_cms_width(v->u.cms.c);
        d = amq_cms_depth(v->u.cms.c);
        count = amq_cms_total(v->u.cms.c);
    }
    r_info(h, 3);
    h->ops->r_simple(h, "width");
    h->ops->r_int(h, (long long)w);
    h->ops->r_simple(h, "depth");
    h->ops->r_int(h, (long long)d);
    h->ops->r_simple(h, "count");
    h->ops->r_int(h, (long long)count);
    return 0;
}

/* ---- merge ------------------------------------------------------------------------- */

static amq_cms *empty_like(rval *v, const amq_cms *c) {
    amq_options o = rv_options(v);
    amq_cms *x = NULL;
    amq_cms_new(amq_cms_width(c), amq_cms_depth(c), amq_cms_counter_bits(c),
                amq_cms_conservative(c), &o, &x);
    return x;
}

/* acc += w * src by doubling; false if out of memory. */
static bool add_weighted(rval *v, amq_cms *acc, const amq_cms *src,
                         uint64_t w) {
    amq_cms *p = empty_like(v, src);
    if (p == NULL || amq_cms_merge(p, src) != AMQ_OK) {
        amq_cms_free(p);
        return false;
    }
    while (w != 0) {
        if ((w & 1) && amq_cms_merge(acc, p) != AMQ_OK)
            break;
        w >>= 1;
        if (w != 0) {
            amq_cms *q = empty_like(v, p);
            if (q == NULL || amq_cms_merge(q, p) != AMQ_OK ||
                amq_cms_merge(q, p) != AMQ_OK) {
                amq_cms_free(q);
                break;
            }
            amq_cms_free(p);
            p = q;
        }
    }
    amq_cms_free(p);
    return w == 0;
}

static bool same_shape(const rval *a, const rval *b) {
    if ((a->rb != NULL) != (b->rb != NULL))
        return false; /* a migrated sketch hashes as RedisBloom did */
    if (a->rb != NULL)
        return rb_cms_same_shape(a, b);
    const amq_cms *x = a->u.cms.c, *y = b->u.cms.c;
    return amq_cms_width(x) == amq_cms_width(y) &&
           amq_cms_depth(x) == amq_cms_depth(y) &&
           amq_cms_counter_bits(x) == amq_cms_counter_bits(y) &&
           memcmp(&a->u.cms.h, &b->u.cms.h, sizeof a->u.cms.h) == 0;
}

/* Parse numkeys and the weights; false after an error reply. */
static bool merge_args(host *h, long long *n, long long *w, int cap) {
    if (!arg_ll(&h->argv[2], n) || *n < 1 || *n > cap)
        return r_err(h, "CMS: invalid numkeys"), false;
    int weights = -1; /* where WEIGHTS is, after numkeys */
    for (int i = 3; i < h->argc && weights < 0; i++)
        if (arg_is(&h->argv[i], "WEIGHTS"))
            weights = i - 3;
    for (int i = 0; i < *n; i++)
        w[i] = 1;
    /* RedisBloom's checks and words: the keys, then keys and weights */
    if (weights < 0)
        return h->argc - 3 == *n
                   ? true
                   : (r_err(h, "CMS: wrong number of keys"), false);
    if (weights != *n || h->argc - 3 != 1 + 2 * *n)
        return r_err(h, "CMS: wrong number of keys/weights"), false;
    for (int i = 0; i < *n; i++)
        if (!arg_ll(&h->argv[4 + *n + i], &w[i]) || w[i] < 0)
            return r_err(h, "CMS: invalid weight value"), false;
    return true;
}

int cms_merge(host *h) {
    enum { MAXSRC = 1024 };
    long long w[MAXSRC];
    long long n;
    if (h->argc < 4)
        return r_arity(h);
    if (!merge_args(h, &n, w, MAXSRC < h->argc ? MAXSRC : h->argc))
        return 0;
    if (3 + n > h->argc)
        return r_arity(h);
    rval *dst = need(h, 1);
    if (dst == NULL)
        return 0;
    for (int i = 0; i < n; i++) {
        rval *s = need(h, 3 + i);
        if (s == NULL)
            return 0;
        if (!same_shape(dst, s))
            return r_err(h, "CMS: width/depth is not equal");
    }
    if (!h->ops->budget(h, 3.0 * (double)dst->bytes))
        return r_err(h, "CMS: merge needs more memory than the limit allows");
    if (dst->rb != NULL) {
        rval *src[MAXSRC];
        for (int i = 0; i < n; i++)
            h->ops->lookup(h, 3 + i, FAM_CMS, &src[i]);
        if (!rb_cms_merge(dst, src, w, (int)n))
            return r_err(h, "CMS: out of memory");
        h->ops->replicate_verbatim(h);
        h->ops->notify(h, "cms.merge", 1);
        r_ok(h);
        return 0;
    }
    amq_cms *acc = empty_like(dst, dst->u.cms.c);
    bool ok = acc != NULL;
    for (int i = 0; ok && i < n; i++) {
        rval *s;
        h->ops->lookup(h, 3 + i, FAM_CMS, &s);
        ok = add_weighted(dst, acc, s->u.cms.c, (uint64_t)w[i]);
    }
    if (!ok) {
        amq_cms_free(acc);
        return r_err(h, "CMS: out of memory");
    }
    amq_cms_free(dst->u.cms.c);
    dst->u.cms.c = acc;
    h->ops->replicate_verbatim(h);
    h->ops->notify(h, "cms.merge", 1);
    r_ok(h);
    return 0;
}
