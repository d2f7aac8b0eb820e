/*
 * wincmd.c — AMQ.WINDOW.*: sliding-window filters (amq/window.h) as keys.
 *
 *   AMQ.WINDOW.RESERVE key (MS span | ITEMS span) [CAPACITY n] [ERROR eps]
 *                          [GENERATIONS g] [SEAL RIBBON|QF]
 *   AMQ.WINDOW.ADD key [AT ms] item            -> 1 new / 0 was present
 *   AMQ.WINDOW.MADD key [AT ms] item [item ...] -> array of those
 *   AMQ.WINDOW.EXISTS key [AT ms] item         -> 0/1
 *   AMQ.WINDOW.MEXISTS key [AT ms] item [item ...]
 *   AMQ.WINDOW.PTTL key [AT ms] item           -> ms (MS) or adds (ITEMS)
 *                                                 until it may stop
 *                                                 answering; -2 if absent
 *   AMQ.WINDOW.INFO key [AT ms]
 *
 * Time. An MS window's clock is milliseconds: `AT ms` when the command
 * gives it, else the server's clock. Writes are replicated as
 * `AMQ.WINDOW.MADD key AT <ms> item ...` with the time they used, so a
 * replica and the AOF replay the primary's times, never their own clock.
 * Reads take AT or the clock of the server they run on; they change
 * nothing. An ITEMS window counts adds and ignores AT.
 *
 * `AT` is the time option when it is the third argument and at least two
 * more follow (ADD: exactly two), so an item spelled AT is given after an
 * explicit `AT ms`.
 */
#include <stdio.h>
#include <string.h>

#include "amqr.h"

#define WIN_MISSING "ERR not found (AMQ.WINDOW.RESERVE makes a window)"

/* ---- the family ----------------------------------------------------------------- */

static size_t f_size(const rval *v, unsigned i) {
    (void)i;
    return amq_window_serialized_size(v->u.win.w);
}
static amq_status f_save(const rval *v, unsigned i, uint8_t *b, size_t cap) {
    (void)i;
    return amq_window_save(v->u.win.w, b, cap, NULL);
}
static bool f_load(rval *v, unsigned i, unsigned nf, const uint8_t *b,
                   size_t len, char *err, size_t cap) {
    amq_diag diag;
    amq_options o = rv_options(v);
    (void)i;
    if (!rv_one_frame(nf, "AMQ.WINDOW", err, cap))
        return false;
    memset(&diag, 0, sizeof diag);
    amq_status st = amq_window_load(b, len, &o, &v->u.win.w, &diag);
    return st == AMQ_OK || rv_frame_refused(err, cap, st, &diag);
}
static void destroy(rval *v) { amq_window_free(v->u.win.w); }

const fam_ops window_ops = {
    "window", "amq-windw", "AMQ.LOADCHUNK", 0,      NULL,    NULL, NULL,
    NULL,     f_size,      f_save,          f_load, destroy, NULL};

/* ---- arguments ---------------------------------------------------------------- */

/* The command's time and where its items start: `AT ms` at argv[2] when
 * argv[2..] holds at least min_after arguments (AT, the ms and, for the
 * item commands, an item). false after a reply. */
static bool time_of(host *h, int min_after, uint64_t *now, int *first) {
    *first = 2;
    if (h->argc >= 2 + min_after && h->argc > 3 && arg_is(&h->argv[2], "AT")) {
        if (!arg_u64(&h->argv[3], now)) {
            r_err(h, "ERR AT must be a time in milliseconds (a non-negative "
                     "integer)");
            return false;
        }
        *first = 4;
        return true;
    }
    *now = h->ops->now_ms(h);
    return true;
}

static rval *need(host *h) {
    return key_need(h, 1, FAM_WINDOW, "ERR", WIN_MISSING);
}

/* ---- commands ------------------------------------------------------------------- */

int window_reserve(host *h) {
    amq_window_params p = {AMQ_WINDOW_TIME,       0, 0, 0.01, 0,
                           AMQ_WINDOW_SEAL_RIBBON};
    rval *v;
    if (h->argc < 4 || h->argc % 2 != 0)
        return r_arity(h);
    bool span = false, cap = false, err = false, gen = false, seal = false;
    for (int i = 2; i < h->argc; i += 2) {
        const rarg *k = &h->argv[i], *x = &h->argv[i + 1];
        uint64_t n;
        double d;
        if ((arg_is(k, "MS") || arg_is(k, "ITEMS")) && !span) {
            if (!arg_u64(x, &n) || n == 0)
                return r_err(h, "ERR the span must be a positive integer");
            p.clock = arg_is(k, "MS") ? AMQ_WINDOW_TIME : AMQ_WINDOW_ITEMS;
            p.span = n;
            span = true;
        } else if (arg_is(k, "CAPACITY") && !cap) {
            if (!arg_u64(x, &n) || n == 0)
                return r_err(h, "ERR CAPACITY must be a positive integer");
            p.capacity = n;
            cap = true;
        } else if (arg_is(k, "ERROR") && !err) {
            if (!arg_double(x, &d) || !(d > 0 && d <= 0.5))
                return r_err(h, "ERR ERROR must be a number in (0, 0.5]");
            p.fpr = d;
            err = true;
        } else if (arg_is(k, "GENERATIONS") && !gen) {
            if (!arg_u64(x, &n) || n == 0 || n > AMQ_WINDOW_MAX_GENERATIONS)
                return r_err(h, "ERR GENERATIONS must be in 1..64");
            p.generations = (unsigned)n;
            gen = true;
        } else if (arg_is(k, "SEAL") && !seal) {
            if (arg_is(x, "RIBBON"))
                p.seal = AMQ_WINDOW_SEAL_RIBBON;
            else if (arg_is(x, "QF"))
                p.seal = AMQ_WINDOW_SEAL_QF;
            else
                return r_err(h, "ERR SEAL must be RIBBON or QF");
            seal = true;
        } else {
            return r_err(h, "ERR syntax error: AMQ.WINDOW.RESERVE key (MS "
                            "span | ITEMS span) [CAPACITY n] [ERROR eps] "
                            "[GENERATIONS g] [SEAL RIBBON|QF]");
        }
    }
    if (!span)
        return r_err(h, "ERR MS span or ITEMS span is required");
    if (p.clock == AMQ_WINDOW_TIME && !cap)
        return r_err(h, "ERR an MS window needs CAPACITY (the most items "
                        "one window takes)");
    int st = key_open(h, 1, FAM_WINDOW, &v, "ERR");
    if (st < 0)
        return 0;
    if (st == KEY_OK)
        return r_err(h, "ERR item exists");
    /* one open quotient filter now; the whole window at capacity later */
    double bytes = (double)(p.capacity ? p.capacity : p.span) * 2.5 + 4096;
    if (!h->ops->budget(h, bytes))
        return r_err(h, "ERR capacity too large for the memory limit");
    v = rv_new(FAM_WINDOW);
    if (v == NULL)
        return r_err(h, "ERR out of memory");
    amq_options o = rv_options(v);
    amq_diag diag = {0, {0}};
    amq_status s = amq_window_new(&p, &o, &v->u.win.w, &diag);
    if (s != AMQ_OK) {
        rv_free(v);
        return reply_status_diag(h, s, &diag);
    }
    if (!store_or_reply(h, v))
        return 0;
    h->ops->replicate_verbatim(h);
    h->ops->notify(h, "amq.window.reserve", 1);
    r_ok(h);
    return 0;
}

/* ADD (single) or MADD: the items from `first`, at time now; the ones
 * added are replicated with that time. */
static int add(host *h, bool single) {
    uint64_t now;
    int first;
    if (h->argc < 3 || (single && h->argc != 3 && h->argc != 5))
        return r_arity(h);
    if (!time_of(h, 3, &now, &first))
        return 0;
    if (single && h->argc - first != 1)
        return r_arity(h);
    rval *v = need(h);
    if (v == NULL)
        return 0;
    int n = h->argc - first, done = 0;
    rarg stack[66], *rep = stack;
    if (n + 3 > 66 &&
        (rep = rv_sys_alloc((size_t)(n + 3) * sizeof *rep)) == NULL)
        return r_err(h, "ERR out of memory");
    char ms[24];
    int msn = snprintf(ms, sizeof ms, "%llu", (unsigned long long)now);
    rep[0] = h->argv[1];
    rep[1] = (rarg){"AT", 2};
    rep[2] = (rarg){ms, (size_t)msn};
    if (!single)
        h->ops->r_arr(h, n);
    for (int i = first; i < h->argc; i++) {
        bool was = false;
        amq_status st =
            amq_window_add(v->u.win.w, h->argv[i].p, h->argv[i].n, now, &was);
        if (st == AMQ_OK) {
            h->ops->r_int(h, was ? 0 : 1);
            rep[3 + done++] = h->argv[i];
        } else {
            r_status(h, "add", st);
        }
    }
    if (done > 0) {
        h->ops->replicate(h, "AMQ.WINDOW.MADD", rep, 3 + done);
        h->ops->notify(h, "amq.window.add", 1);
    }
    if (rep != stack)
        rv_sys_free(rep);
    return 0;
}

int window_add(host *h) { return add(h, true); }
int window_madd(host *h) { return add(h, false); }

/* A read: the key (NULL: missing, answered as absent), its time. */
static bool read_args(host *h, int min_after, rval **v, uint64_t *now,
                      int *first) {
    if (!time_of(h, min_after, now, first))
        return false;
    int st = key_open(h, 1, FAM_WINDOW, v, "ERR");
    if (st < 0)
        return false;
    if (st == KEY_EMPTY)
        *v = NULL;
    return true;
}

static int exists(host *h, bool single) {
    rval *v;
    uint64_t now;
    int first;
    if (h->argc < 3 || (single && h->argc != 3 && h->argc != 5))
        return r_arity(h);
    if (!read_args(h, 3, &v, &now, &first))
        return 0;
    if (single && h->argc - first != 1)
        return r_arity(h);
    if (!single)
        h->ops->r_arr(h, h->argc - first);
    for (int i = first; i < h->argc; i++)
        h->ops->r_int(h,
                      v != NULL && amq_window_contains(v->u.win.w, h->argv[i].p,
                                                       h->argv[i].n, now));
    return 0;
}

int window_exists(host *h) { return exists(h, true); }
int window_mexists(host *h) { return exists(h, false); }

int window_pttl(host *h) {
    rval *v;
    uint64_t now;
    int first;
    if (h->argc != 3 && h->argc != 5)
        return r_arity(h);
    if (!read_args(h, 3, &v, &now, &first))
        return 0;
    if (h->argc - first != 1)
        return r_arity(h);
    if (v == NULL) {
        h->ops->r_int(h, -2);
        return 0;
    }
    amq_window_info in;
    amq_window_get_info(v->u.win.w, now, &in);
    uint64_t e =
        amq_window_expiry(v->u.win.w, h->argv[first].p, h->argv[first].n, now);
    if (e == AMQ_WINDOW_ABSENT) {
        h->ops->r_int(h, -2);
        return 0;
    }
    /* a time window: ms to go; a count window: adds to go */
    uint64_t left = e >= in.now ? e - in.now : 0;
    h->ops->r_int(h, left > (uint64_t)INT64_MAX ? INT64_MAX : (long long)left);
    return 0;
}

int window_info(host *h) {
    uint64_t now;
    int first;
    if (h->argc != 2 && h->argc != 4)
        return r_arity(h);
    if (!time_of(h, 2, &now, &first))
        return 0;
    if (first != h->argc)
        return r_arity(h);
    rval *v = need(h);
    if (v == NULL)
        return 0;
    amq_window_info in;
    amq_window_get_info(v->u.win.w, now, &in);
    const char *clock = in.clock == AMQ_WINDOW_TIME ? "ms" : "items";
    const char *seal = in.seal == AMQ_WINDOW_SEAL_QF ? "qf" : "ribbon";
    h->ops->r_map(h, 13);
    h->ops->r_simple(h, "Clock");
    h->ops->r_str(h, clock, strlen(clock));
    h->ops->r_simple(h, "Span");
    h->ops->r_int(h, (long long)in.span);
    h->ops->r_simple(h, "Capacity");
    h->ops->r_int(h, (long long)in.capacity);
    h->ops->r_simple(h, "Error rate");
    h->ops->r_double(h, in.fpr);
    h->ops->r_simple(h, "Generations");
    h->ops->r_int(h, in.generations);
    h->ops->r_simple(h, "Generation length");
    h->ops->r_int(h, (long long)in.length);
    h->ops->r_simple(h, "Seal");
    h->ops->r_str(h, seal, strlen(seal));
    h->ops->r_simple(h, "Now");
    h->ops->r_int(h, (long long)in.now);
    h->ops->r_simple(h, "Generation");
    h->ops->r_int(h, (long long)in.generation);
    h->ops->r_simple(h, "Live items");
    h->ops->r_int(h, (long long)in.live_items);
    h->ops->r_simple(h, "Pieces");
    h->ops->r_int(h, in.pieces);
    h->ops->r_simple(h, "Error bound");
    h->ops->r_double(h, in.bound);
    h->ops->r_simple(h, "Memory");
    h->ops->r_int(h, (long long)rv_memory(v));
    return 0;
}
