/*
 * upgrade.c — AMQ.UPGRADE: a key in RedisBloom's layout (a BF or CF
 * migrated from RedisBloom) rebuilt in amq's, from its items.
 *
 *   AMQ.UPGRADE key [SPEC spec] [ERROR eps] ITEMS item [item ...]
 *
 * A Bloom or cuckoo filter keeps no items, and RedisBloom's hashing and
 * layouts differ from amq's, so no layout of amq's can be computed from
 * the bits: the caller gives the items again. The command checks what it
 * can before it changes anything:
 *   - every item answers present in the old key (a filter has no false
 *     negatives, so an item it answers absent was never added: a wrong
 *     list, refused with the item's position);
 *   - there are at least as many items as the key counts (BF: its
 *     distinct adds; CF: its items, each add of a repeat counted, so a CF
 *     item added twice is given twice).
 * Then it builds the new value aside and puts it in the key's place:
 *   - without SPEC, the same family in amq's layout, with the old key's
 *     parameters (BF: error rate, first capacity, expansion, NONSCALING;
 *     CF: capacity, bucket size, max iterations, expansion), so BF.* and
 *     CF.* go on working on the key;
 *   - with SPEC, an AMQ.* key of that type (AMQ.TYPES lists them): a
 *     static type built from the items, a dynamic one made for them at
 *     ERROR (default: the BF's own rate, 1% for a CF) and filled.
 * A key already in amq's layout, of another family, or missing is
 * refused. The command is replicated as it came (the old key is the same
 * on every replica, so is the result).
 */
#include <stdio.h>
#include <string.h>

#include "amqr.h"

#define UPGRADE_MAX_ERROR 0.5

typedef struct upgrade_args {
    char spec[256];
    bool has_spec, has_error;
    double eps;
    int first; /* argv index of the first item */
} upgrade_args;

static bool parse(host *h, upgrade_args *a) {
    memset(a, 0, sizeof *a);
    int i = 2;
    while (i < h->argc) {
        const rarg *w = &h->argv[i];
        if (arg_is(w, "ITEMS")) {
            a->first = i + 1;
            if (a->first >= h->argc) {
                r_arity(h);
                return false;
            }
            return true;
        }
        bool known = (arg_is(w, "SPEC") && !a->has_spec) ||
                     (arg_is(w, "ERROR") && !a->has_error);
        if (!known || i + 1 >= h->argc) {
            r_err(h, "ERR syntax error: AMQ.UPGRADE key [SPEC spec] "
                     "[ERROR eps] ITEMS item [item ...]");
            return false;
        }
        if (arg_is(w, "SPEC")) {
            if (!spec_arg(h, &h->argv[i + 1], a->spec, sizeof a->spec))
                return false;
            if (amq_filter_type_find(a->spec) == NULL) {
                r_err(h, "ERR unknown type (AMQ.TYPES lists them)");
                return false;
            }
            a->has_spec = true;
        } else {
            if (!arg_double(&h->argv[i + 1], &a->eps) || !(a->eps > 0) ||
                a->eps >= UPGRADE_MAX_ERROR) {
                r_err(h, "ERR ERROR must be a number in (0, 0.5)");
                return false;
            }
            a->has_error = true;
        }
        i += 2;
    }
    r_err(h, "ERR syntax error: ITEMS and the key's items are required (its "
             "layout keeps none)");
    return false;
}

/* The old key at argv[1]: a BF or CF in RedisBloom's layout, or NULL after
 * a reply. */
static rval *old_key(host *h) {
    rval *v = NULL;
    int st = h->ops->lookup(h, 1, FAM_BF, &v);
    if (st == KEY_WRONGTYPE)
        st = h->ops->lookup(h, 1, FAM_CF, &v);
    if (st == KEY_EMPTY) {
        r_err(h, "ERR not found");
        return NULL;
    }
    if (st != KEY_OK || v == NULL) {
        r_wrongtype(h);
        return NULL;
    }
    if (v->load != NULL) {
        r_err(h, "ERR the key is being loaded by LOADCHUNK");
        return NULL;
    }
    if (v->rb == NULL) {
        r_err(h, "ERR the key is already in amq's layout");
        return NULL;
    }
    return v;
}

static bool present(const rval *v, const rarg *item) {
    return v->fam == FAM_BF ? rb_bf_contains(v, item->p, item->n)
                            : rb_cf_contains(v, item->p, item->n);
}

/* The same family in amq's layout, every item added; NULL after a reply. */
static rval *same_family(host *h, const rval *old, int first) {
    rval *v;
    if (old->fam == FAM_BF) {
        double eps;
        uint64_t cap;
        long long info[5];
        rb_bf_first(old, &eps, &cap);
        rb_bf_info(old, info);
        bool nonscaling = info[4] < 0;
        v = bf_new_amq(h, eps, cap ? cap : 1,
                       nonscaling ? 1 : (uint32_t)info[4], nonscaling);
        for (int i = first; v != NULL && i < h->argc; i++) {
            const char *err = NULL;
            if (bf_add_item(h, v, &h->argv[i], &err) < 0) {
                rv_free(v);
                r_err(h, err);
                return NULL;
            }
        }
        return v;
    }
    long long f[8];
    rb_cf_info(old, f);
    v = cf_new_amq(h, (uint64_t)f[1] * (uint64_t)f[5], (unsigned)f[5],
                   (unsigned)f[7], (unsigned)f[6]);
    for (int i = first; v != NULL && i < h->argc; i++) {
        bool nomem = false;
        if (cf_add_item(h, v, &h->argv[i], &nomem) < 0) {
            rv_free(v);
            r_err(h, nomem ? "ERR out of memory"
                           : "ERR the items do not fit the key's "
                             "parameters in amq's layout: give a SPEC");
            return NULL;
        }
    }
    return v;
}

/* An AMQ.* key of the given spec holding the items; NULL after a reply. */
static rval *of_spec(host *h, const rval *old, const upgrade_args *a) {
    size_t n = (size_t)(h->argc - a->first);
    double eps = a->eps;
    if (!a->has_error) {
        uint64_t cap;
        if (old->fam == FAM_BF)
            rb_bf_first(old, &eps, &cap);
        else
            eps = 0.01;
    }
    amq_options o0;
    amq_hasher hs;
    memset(&o0, 0, sizeof o0);
    amq_status st = amq_filter_resolve_hasher(a->spec, &o0, &hs);
    if (st != AMQ_OK) {
        r_status(h, "hash", st);
        return NULL;
    }
    uint64_t *x = rv_sys_alloc(n * sizeof *x);
    rval *v = x != NULL ? rv_new(FAM_AMQ) : NULL;
    if (v == NULL) {
        rv_sys_free(x);
        r_err(h, "ERR out of memory");
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        x[i] =
            amq_hash64(&hs, h->argv[a->first + i].p, h->argv[a->first + i].n);
    amq_options o = rv_options(v);
    o.hash = hs.kind;
    o.hash_seed = hs.seed;
    o.hash_key = hs.key;
    amq_diag diag = {0, {0}};
    st = amq_filter_build(a->spec, x, n, eps, &o, &v->u.amq.f, &diag);
    rv_sys_free(x);
    if (st != AMQ_OK) {
        rv_free(v);
        reply_status_diag(h, st, &diag);
        return NULL;
    }
    return v;
}

int amq_upgrade(host *h) {
    upgrade_args a;
    if (h->argc < 4)
        return r_arity(h);
    if (!parse(h, &a))
        return 0;
    rval *old = old_key(h);
    if (old == NULL)
        return 0;
    size_t n = (size_t)(h->argc - a.first);
    for (int i = a.first; i < h->argc; i++)
        if (!present(old, &h->argv[i])) {
            char msg[160];
            snprintf(msg, sizeof msg,
                     "ERR item %d answers absent in the key: it was never "
                     "added, so the items are not the key's",
                     i - a.first + 1);
            return r_err(h, msg);
        }
    uint64_t held = old->fam == FAM_BF ? rb_bf_items(old) : rb_cf_items(old);
    if (n < held) {
        char msg[160];
        snprintf(msg, sizeof msg,
                 "ERR %zu items given, the key holds %llu: give them all", n,
                 (unsigned long long)held);
        return r_err(h, msg);
    }
    if (!h->ops->budget(h, (double)n * 48 + 4096))
        return r_err(h, "ERR too many items for the memory limit");
    rval *v = a.has_spec ? of_spec(h, old, &a) : same_family(h, old, a.first);
    if (v == NULL)
        return 0;
    if (!store_or_reply(h, v))
        return 0;
    h->ops->replicate_verbatim(h);
    h->ops->notify(h, "amq.upgrade", 1);
    r_ok(h);
    return 0;
}
