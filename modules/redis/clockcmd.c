/*
 * clockcmd.c — AMQ.CLOCK.*: logical clocks (amq/clock.h) as keys, so that
 * processes that share a Redis keep their Bloom or vector clocks there.
 *
 *   AMQ.CLOCK.NEW key BLOOM m k [HISTORY h] [SEED s]
 *   AMQ.CLOCK.NEW key VECTOR node [DENSE]
 *   AMQ.CLOCK.TICK key [event]          -> the timestamp after the event
 *   AMQ.CLOCK.MERGE key ts [ts ...]     -> the timestamp after the merge
 *   AMQ.CLOCK.GET key                   -> the timestamp
 *   AMQ.CLOCK.COMPARE key ts [HISTORY]  -> [order, fp_paper, fp_exact, age]
 *   AMQ.CLOCK.JOIN key node / AMQ.CLOCK.LEAVE key node (dense vectors)
 *   AMQ.CLOCK.INFO key
 *
 * A timestamp is the clock's wire message (amq_clock_encode): what a
 * process attaches to the messages it sends, and what it gives MERGE when
 * one arrives and COMPARE to order it against its own clock. `order` is
 * the key's clock relative to ts: "before" means the key's clock happened
 * before ts. Bloom clocks' "before"/"after" carry the two claimed
 * false-positive probabilities (0 for vector clocks and for
 * equal/concurrent, which are certain).
 *
 * Every write is deterministic (the hasher is the key's, its seed chosen
 * at NEW), so it is replicated verbatim. MERGE decodes every ts and merges
 * them aside first: one timestamp refused leaves the key unchanged. The
 * key's blob is the clock's frame, which holds the timestamp and the
 * history capacity but not the recorded history: after a restart, a
 * DEBUG RELOAD or a RESTORE, the history starts again from the current
 * timestamp.
 */
#include <stdio.h>
#include <string.h>

#include "amqr.h"

#define CLOCK_MISSING "ERR not found (AMQ.CLOCK.NEW makes a clock)"
#define TS_CORRUPT                                                             \
    "ERR the timestamp is not a clock's encoding (AMQ.CLOCK.GET gives one)"
#define TS_OTHER                                                               \
    "ERR the timestamp is another clock's: a different kind, m, k, hasher "    \
    "or membership"

/* ---- the family ----------------------------------------------------------------- */

static size_t f_size(const rval *v, unsigned i) {
    (void)i;
    return amq_clock_save_size(v->u.clock.c);
}
static amq_status f_save(const rval *v, unsigned i, uint8_t *b, size_t cap) {
    size_t len;
    (void)i;
    return amq_clock_save(v->u.clock.c, b, cap, &len);
}
static bool f_load(rval *v, unsigned i, unsigned nf, const uint8_t *b,
                   size_t len, char *err, size_t cap) {
    amq_diag diag;
    amq_options o = rv_options(v);
    (void)i;
    if (!rv_one_frame(nf, "AMQ.CLOCK", err, cap))
        return false;
    memset(&diag, 0, sizeof diag);
    amq_status st = amq_clock_load(b, len, &o, &v->u.clock.c, &diag);
    return st == AMQ_OK || rv_frame_refused(err, cap, st, &diag);
}
static void destroy(rval *v) { amq_clock_free(v->u.clock.c); }

const fam_ops clock_ops = {
    "clock", "amq-clock", "AMQ.LOADCHUNK", 0,      NULL,    NULL, NULL,
    NULL,    f_size,      f_save,          f_load, destroy, NULL};

/* ---- helpers ---------------------------------------------------------------------- */

static rval *need(host *h) {
    return key_need(h, 1, FAM_CLOCK, "ERR", CLOCK_MISSING);
}

static int reply_ts(host *h, const amq_clock *c) {
    size_t n = amq_clock_encoded_size(c), len;
    uint8_t stack[512], *b = stack;
    if (n > sizeof stack && (b = rv_sys_alloc(n)) == NULL)
        return r_err(h, "ERR out of memory");
    amq_status st = amq_clock_encode(c, b, n, &len);
    if (st == AMQ_OK)
        h->ops->r_str(h, (const char *)b, len);
    else
        r_status(h, "encode", st);
    if (b != stack)
        rv_sys_free(b);
    return 0;
}

static int reply_decode_error(host *h, amq_status st) {
    if (st == AMQ_ERR_CORRUPT)
        return r_err(h, TS_CORRUPT);
    if (st == AMQ_ERR_INCOMPATIBLE)
        return r_err(h, TS_OTHER);
    return r_status(h, "decode", st);
}

/* ts decoded into a bare copy of like (the caller frees *out); false after
 * a reply. */
static bool decode_ts(host *h, const amq_clock *like, const rarg *ts,
                      amq_clock **out) {
    amq_status st = amq_clock_clone_bare(like, out);
    if (st == AMQ_OK)
        st = amq_clock_decode(*out, (const uint8_t *)ts->p, ts->n);
    if (st == AMQ_OK)
        return true;
    amq_clock_free(*out);
    *out = NULL;
    reply_decode_error(h, st);
    return false;
}

/* ---- commands -------------------------------------------------------------------- */

static int new_bloom(host *h, rval *v, amq_clock **out) {
    uint64_t m, k, hist = 0, seed = 0;
    if (h->argc < 5 || h->argc % 2 == 0)
        return r_arity(h);
    if (!arg_u64(&h->argv[3], &m) || m == 0 || m > AMQ_CLOCK_MAX_M)
        return r_err(h, "ERR m must be an integer in 1..16777216");
    if (!arg_u64(&h->argv[4], &k) || k == 0 || k > AMQ_CLOCK_MAX_K || k > m)
        return r_err(h, "ERR k must be an integer in 1..min(m, 64)");
    bool seen_h = false, seen_s = false;
    for (int i = 5; i < h->argc; i += 2) {
        const rarg *o = &h->argv[i], *x = &h->argv[i + 1];
        if (arg_is(o, "HISTORY") && !seen_h) {
            if (!arg_u64(x, &hist) || hist > AMQ_CLOCK_MAX_HISTORY)
                return r_err(h, "ERR HISTORY must be an integer in 0..65536");
            seen_h = true;
        } else if (arg_is(o, "SEED") && !seen_s) {
            if (!arg_u64(x, &seed))
                return r_err(h, "ERR SEED must be a 64-bit unsigned integer");
            seen_s = true;
        } else {
            return r_err(h, "ERR syntax error: AMQ.CLOCK.NEW key BLOOM m k "
                            "[HISTORY h] [SEED s]");
        }
    }
    /* the history ring holds hist timestamps of m cells, 8 bits at first */
    if (!h->ops->budget(h, (double)m * (double)(hist + 2) + 4096))
        return r_err(h, "ERR m and HISTORY too large for the memory limit");
    amq_options o = rv_options(v);
    o.hash = AMQ_HASH_XXH3;
    o.hash_seed = seed;
    return amq_clock_new_bloom((uint32_t)m, (uint32_t)k, (uint32_t)hist, &o,
                               out) == AMQ_OK
               ? 1
               : r_err(h, "ERR out of memory");
}

static int new_vector(host *h, rval *v, amq_clock **out) {
    uint64_t node;
    if (h->argc != 4 && h->argc != 5)
        return r_arity(h);
    if (!arg_u64(&h->argv[3], &node))
        return r_err(h, "ERR the node must be a 64-bit unsigned integer");
    if (h->argc == 5 && !arg_is(&h->argv[4], "DENSE"))
        return r_err(h, "ERR syntax error: AMQ.CLOCK.NEW key VECTOR node "
                        "[DENSE]");
    amq_clock_kind kind =
        h->argc == 5 ? AMQ_CLOCK_VECTOR_DENSE : AMQ_CLOCK_VECTOR_SPARSE;
    amq_options o = rv_options(v);
    return amq_clock_new_vector(kind, node, &o, out) == AMQ_OK
               ? 1
               : r_err(h, "ERR out of memory");
}

int clock_new(host *h) {
    rval *v;
    if (h->argc < 4)
        return r_arity(h);
    bool bloom = arg_is(&h->argv[2], "BLOOM");
    if (!bloom && !arg_is(&h->argv[2], "VECTOR"))
        return r_err(h, "ERR the kind must be BLOOM or VECTOR");
    int st = key_open(h, 1, FAM_CLOCK, &v, "ERR");
    if (st < 0)
        return 0;
    if (st == KEY_OK)
        return r_err(h, "ERR item exists");
    v = rv_new(FAM_CLOCK);
    if (v == NULL)
        return r_err(h, "ERR out of memory");
    if ((bloom ? new_bloom(h, v, &v->u.clock.c)
               : new_vector(h, v, &v->u.clock.c)) != 1) {
        rv_free(v);
        return 0;
    }
    if (!store_or_reply(h, v))
        return 0;
    h->ops->replicate_verbatim(h);
    h->ops->notify(h, "amq.clock.new", 1);
    r_ok(h);
    return 0;
}

int clock_tick(host *h) {
    if (h->argc != 2 && h->argc != 3)
        return r_arity(h);
    rval *v = need(h);
    if (v == NULL)
        return 0;
    amq_clock *c = v->u.clock.c;
    bool bloom = amq_clock_kind_of(c) == AMQ_CLOCK_BLOOM;
    if (bloom && h->argc != 3)
        return r_err(h, "ERR a Bloom clock's tick names its event: "
                        "AMQ.CLOCK.TICK key event");
    amq_status st = bloom ? amq_clock_tick(c, h->argv[2].p, h->argv[2].n)
                          : amq_clock_tick(c, NULL, 0);
    if (st != AMQ_OK)
        return r_status(h, "tick", st);
    h->ops->replicate_verbatim(h);
    h->ops->notify(h, "amq.clock.tick", 1);
    return reply_ts(h, c);
}

int clock_merge(host *h) {
    if (h->argc < 3)
        return r_arity(h);
    rval *v = need(h);
    if (v == NULL)
        return 0;
    amq_clock *c = v->u.clock.c, *acc = NULL;
    if (!decode_ts(h, c, &h->argv[2], &acc))
        return 0;
    for (int i = 3; i < h->argc; i++) {
        amq_clock *t = NULL;
        if (!decode_ts(h, c, &h->argv[i], &t)) {
            amq_clock_free(acc);
            return 0;
        }
        amq_status st = amq_clock_merge(acc, t);
        amq_clock_free(t);
        if (st != AMQ_OK) {
            amq_clock_free(acc);
            return r_status(h, "merge", st);
        }
    }
    amq_status st = amq_clock_merge(c, acc);
    amq_clock_free(acc);
    if (st != AMQ_OK)
        return r_status(h, "merge", st);
    h->ops->replicate_verbatim(h);
    h->ops->notify(h, "amq.clock.merge", 1);
    return reply_ts(h, c);
}

int clock_get(host *h) {
    if (h->argc != 2)
        return r_arity(h);
    rval *v = need(h);
    return v == NULL ? 0 : reply_ts(h, v->u.clock.c);
}

int clock_compare(host *h) {
    if (h->argc != 3 && h->argc != 4)
        return r_arity(h);
    if (h->argc == 4 && !arg_is(&h->argv[3], "HISTORY"))
        return r_err(h, "ERR syntax error: AMQ.CLOCK.COMPARE key ts "
                        "[HISTORY]");
    rval *v = need(h);
    if (v == NULL)
        return 0;
    amq_clock *remote = NULL;
    if (!decode_ts(h, v->u.clock.c, &h->argv[2], &remote))
        return 0;
    amq_clock_verdict d;
    amq_status st = h->argc == 4
                        ? amq_clock_compare_history(v->u.clock.c, remote, &d)
                        : amq_clock_compare(v->u.clock.c, remote, &d);
    amq_clock_free(remote);
    if (st != AMQ_OK)
        return r_status(h, "compare", st);
    const char *o = amq_order_name(d.order);
    h->ops->r_arr(h, 4);
    h->ops->r_str(h, o, strlen(o));
    h->ops->r_double(h, d.fp_paper);
    h->ops->r_double(h, d.fp_exact);
    h->ops->r_int(h, d.history_age);
    return 0;
}

static int membership(host *h, bool join) {
    uint64_t node;
    if (h->argc != 3)
        return r_arity(h);
    if (!arg_u64(&h->argv[2], &node))
        return r_err(h, "ERR the node must be a 64-bit unsigned integer");
    rval *v = need(h);
    if (v == NULL)
        return 0;
    amq_status st = join ? amq_clock_join(v->u.clock.c, node)
                         : amq_clock_leave(v->u.clock.c, node);
    if (st == AMQ_ERR_INVALID)
        return r_err(h, "ERR a clock cannot leave its own node");
    if (st != AMQ_OK)
        return r_status(h, join ? "join" : "leave", st);
    h->ops->replicate_verbatim(h);
    h->ops->notify(h, join ? "amq.clock.join" : "amq.clock.leave", 1);
    r_ok(h);
    return 0;
}

int clock_join(host *h) { return membership(h, true); }
int clock_leave(host *h) { return membership(h, false); }

int clock_info(host *h) {
    if (h->argc != 2)
        return r_arity(h);
    rval *v = need(h);
    if (v == NULL)
        return 0;
    const amq_clock *c = v->u.clock.c;
    amq_clock_kind kind = amq_clock_kind_of(c);
    const char *name = kind == AMQ_CLOCK_BLOOM          ? "bloom"
                       : kind == AMQ_CLOCK_VECTOR_DENSE ? "vector-dense"
                                                        : "vector-sparse";
    h->ops->r_map(h, 9);
    h->ops->r_simple(h, "Kind");
    h->ops->r_str(h, name, strlen(name));
    h->ops->r_simple(h, kind == AMQ_CLOCK_BLOOM ? "Cells" : "Entries");
    h->ops->r_int(h, (long long)amq_clock_size(c));
    h->ops->r_simple(h, "Hashes");
    h->ops->r_int(h, amq_clock_k(c));
    h->ops->r_simple(h, "Cell bits");
    h->ops->r_int(h, amq_clock_cell_bits(c));
    h->ops->r_simple(h, "Offset");
    h->ops->r_int(h, (long long)(amq_clock_offset(c) > (uint64_t)INT64_MAX
                                     ? INT64_MAX
                                     : amq_clock_offset(c)));
    h->ops->r_simple(h, "Sum");
    h->ops->r_double(h, amq_clock_sum(c));
    h->ops->r_simple(h, "History length");
    h->ops->r_int(h, amq_clock_history_len(c));
    h->ops->r_simple(h, "Timestamp bytes");
    h->ops->r_int(h, (long long)amq_clock_encoded_size(c));
    h->ops->r_simple(h, "Memory");
    h->ops->r_int(h, (long long)rv_memory(v));
    return 0;
}
