/*
 * cascaudit.c — a cascade key that audits its own bound and falls back
 * when the bound breaks: AMQ.CASCADE.AUDIT, SAMPLES, TRUTH and FALLBACK
 * (the shadow-sampling audit of §5, include/amq/cascade.h, docs/cascade.md
 * "Audits").
 *
 *   EXISTS / MEXISTS ─► amq_audit_sample ─► sampled? ─► pending ring
 *                                                         │ SAMPLES pops
 *   the application looks each item up in its store ◄─────┘
 *        │ TRUTH item 0|1 ...
 *        ▼
 *   amq_audit_record ─► report ─► violated, on the learned bound?
 *                                   ├─ initial filter: amq_cascade_set_fallback
 *                                   │  (replicated as FALLBACK key ON; event
 *                                   │  amq.cascade.fallback)
 *                                   └─ none: event amq.cascade.violated, the
 *                                      bound stays (once per window)
 *
 * The sample. Which query is sampled is the audit's choice, a hash of the
 * query's sequence number, never of the key, so what waits in the ring is
 * an unbiased sample of what was asked, members and non-members alike; the
 * truths about it estimate the realised false-positive rate and each
 * interval's non-member share. The ring holds at most PENDING_MAX items and
 * PENDING_BYTES bytes; when full the oldest item goes (counted in Dropped):
 * which one goes depends on arrival order, not on the key, so a drop costs
 * evidence, not bias (only an item longer than PENDING_BYTES, which is
 * never kept, is dropped for what it is). Truths about anything else (every query, or an item
 * twice) bias the audit: only what SAMPLES returned, once each.
 *
 * Windows. Evidence ages out in tumbling windows: once an audit holds
 * `window` truths (WINDOW, default 100000) its verdict is read one last
 * time and a fresh audit starts, seeded with the next value of the seed's
 * sequence. A sliding window would have to keep every truth to forget it
 * later; the price of tumbling ones is that a new window starts with no
 * evidence, which costs little here: a verdict acted on stays (the
 * fallback holds until FALLBACK OFF or a new LOAD), and a shift that lasts
 * is seen again within a window. The audit also restarts whenever the key
 * changes the bound in force, so its figures describe that bound (its build
 * bound is amq_cascade_fpr_bound when it starts). In fallback, Violated
 * keeps reading the learned bound's assumption: the queries are not the
 * distribution the cascade was certified on, and a rebuild is due.
 *
 * The audit is the server's, in memory, and every allocation it makes
 * goes through the value's counting allocator (MEMORY USAGE includes it);
 * it is not in the blob, so RDB, DUMP/RESTORE, COPY and a replica's copy
 * of the key start without one. What replicates is the decision
 * (casccmd.c explains why).
 */
#include <string.h>

#include "amqr.h"

#define PENDING_MAX 1024u
#define PENDING_BYTES ((size_t)1 << 20)
#define WINDOW_DEFAULT 100000u
#define SEED_STEP 0x9e3779b97f4a7c15ULL

typedef struct sample {
    uint8_t *p; /* NULL for an empty item */
    size_t n;
} sample;

struct casc_audit {
    rval *v; /* the owner: allocations count in its memory */
    amq_audit *a;
    double rate;
    uint64_t seed;    /* window i is seeded with seed + i * SEED_STEP */
    uint64_t window;  /* truths per window                            */
    uint64_t windows; /* windows completed                            */
    uint64_t truths;  /* truths in this window                        */
    uint64_t sampled; /* queries chosen in this window                */
    uint64_t dropped; /* samples the full ring lost (every window)    */
    bool alerted;     /* this window's violation was published        */
    /* the ring: count samples of bytes in all, the oldest at head */
    size_t head, count, bytes;
    sample ring[PENDING_MAX];
};

/* ---- memory through the value's counting allocator ---------------------------- */

static void *v_alloc(rval *v, size_t n) {
    return v->alloc.alloc(v->alloc.ctx, n);
}

static void v_free(rval *v, void *p, size_t n) {
    v->alloc.free(v->alloc.ctx, p, n);
}

/* ---- the ring of pending samples ------------------------------------------------ */

static void ring_drop_oldest(casc_audit *au) {
    sample *s = &au->ring[au->head];
    if (s->p != NULL)
        v_free(au->v, s->p, s->n);
    au->bytes -= s->n;
    au->head = (au->head + 1) % PENDING_MAX;
    au->count--;
}

static void ring_push(casc_audit *au, const rarg *item) {
    uint8_t *p = NULL;
    if (item->n > PENDING_BYTES) {
        au->dropped++;
        return;
    }
    while (au->count == PENDING_MAX || au->bytes + item->n > PENDING_BYTES) {
        ring_drop_oldest(au);
        au->dropped++;
    }
    if (item->n > 0) {
        if ((p = v_alloc(au->v, item->n)) == NULL) {
            au->dropped++;
            return;
        }
        memcpy(p, item->p, item->n);
    }
    au->ring[(au->head + au->count) % PENDING_MAX] = (sample){p, item->n};
    au->count++;
    au->bytes += item->n;
}

/* ---- the audit's life ------------------------------------------------------------- */

static amq_status audit_new(rval *v, double rate, uint64_t seed,
                            uint64_t window, casc_audit **out) {
    casc_audit *au = v_alloc(v, sizeof *au);
    if (au == NULL)
        return AMQ_ERR_NOMEM;
    memset(au, 0, sizeof *au);
    amq_options o = rv_options(v);
    amq_status st = amq_audit_new(v->u.casc.c, rate, seed, &o, &au->a);
    if (st != AMQ_OK) {
        v_free(v, au, sizeof *au);
        return st;
    }
    au->v = v;
    au->rate = rate;
    au->seed = seed;
    au->window = window;
    *out = au;
    return AMQ_OK;
}

void casc_audit_free(rval *v) {
    casc_audit *au = v->u.casc.audit;
    if (au == NULL)
        return;
    while (au->count > 0)
        ring_drop_oldest(au);
    amq_audit_free(au->a);
    v_free(v, au, sizeof *au);
    v->u.casc.audit = NULL;
}

/* A fresh window: the old evidence goes, the pending samples stay (they
 * were drawn the same way). Out of memory, the window goes on. */
static void window_restart(casc_audit *au) {
    amq_audit *next = NULL;
    amq_options o = rv_options(au->v);
    uint64_t seed = au->seed + SEED_STEP * (au->windows + 1);
    if (amq_audit_new(au->v->u.casc.c, au->rate, seed, &o, &next) != AMQ_OK)
        return;
    amq_audit_free(au->a);
    au->a = next;
    au->windows++;
    au->truths = au->sampled = 0;
    au->alerted = false;
}

void casc_audit_query(casc_audit *au, const rarg *item) {
    if (au == NULL || !amq_audit_sample(au->a))
        return;
    au->sampled++;
    ring_push(au, item);
}

bool casc_audit_view_of(const rval *v, casc_audit_view *out) {
    const casc_audit *au = v->u.casc.audit;
    if (au == NULL)
        return false;
    out->rate = au->rate;
    out->window = au->window;
    out->windows = au->windows;
    out->sampled = au->sampled;
    out->pending = au->count;
    out->dropped = au->dropped;
    amq_audit_get_report(au->a, &out->report, NULL, 0);
    return true;
}

/* ---- the verdict ----------------------------------------------------------------- */

static const char *const MSG_NO_FRONT =
    "ERR the cascade has no initial filter to fall back to (train it with a "
    "worst-case cap: amq cascade train --worst-case E)";

/* After a switch of the bound in force: tell the replicas and AOF (as an explicit
 * FALLBACK, or the command itself when it was one), publish, and restart
 * the audit so that it measures the bound now in force. */
static void switched(host *h, rval *v, bool on, bool verbatim) {
    if (verbatim) {
        h->ops->replicate_verbatim(h);
    } else {
        rarg a[2] = {h->argv[1], {on ? "ON" : "OFF", on ? 2u : 3u}};
        h->ops->replicate(h, "AMQ.CASCADE.FALLBACK", a, 2);
    }
    h->ops->notify_module(
        h, on ? "amq.cascade.fallback" : "amq.cascade.learned", 1);
    if (v->u.casc.audit != NULL)
        window_restart(v->u.casc.audit);
}

/* Act on the report: fall back when it says violated on the learned
 * route, or, without an initial filter, say so once per window. */
static void verdict(host *h, rval *v) {
    casc_audit *au = v->u.casc.audit;
    amq_audit_report r;
    if (au->alerted || amq_cascade_fallback(v->u.casc.c))
        return;
    amq_audit_get_report(au->a, &r, NULL, 0);
    if (!r.violated)
        return;
    if (amq_cascade_set_fallback(v->u.casc.c, true) != AMQ_OK) {
        au->alerted = true;
        h->ops->notify_module(h, "amq.cascade.violated", 1);
        return;
    }
    switched(h, v, true, false);
}

/* ---- commands ---------------------------------------------------------------- */

static rval *need_audit(host *h) {
    rval *v = key_need(h, 1, FAM_CASC, "ERR", "ERR not found");
    if (v != NULL && v->u.casc.audit == NULL) {
        r_err(h, "ERR no audit on this key (start one: AMQ.CASCADE.AUDIT key "
                 "RATE r)");
        return NULL;
    }
    return v;
}

typedef struct audit_args {
    double rate;
    uint64_t seed, window;
} audit_args;

/* `RATE r [SEED s] [WINDOW n]` from argv[2]; false after a reply. */
static bool parse_audit(host *h, audit_args *o) {
    o->seed = 0;
    o->window = WINDOW_DEFAULT;
    if (h->argc < 4 || (h->argc - 2) % 2 != 0 || !arg_is(&h->argv[2], "RATE"))
        return r_err(h, "ERR syntax: AMQ.CASCADE.AUDIT key RATE r [SEED s] "
                        "[WINDOW n], or AMQ.CASCADE.AUDIT key OFF"),
               false;
    if (!arg_double(&h->argv[3], &o->rate) || !(o->rate > 0 && o->rate <= 1))
        return r_err(h, "ERR RATE is the share of queries sampled, in (0, 1]"),
               false;
    for (int i = 4; i < h->argc; i += 2) {
        const rarg *name = &h->argv[i], *val = &h->argv[i + 1];
        if (arg_is(name, "SEED")) {
            if (!arg_u64(val, &o->seed))
                return r_err(h, "ERR SEED is an unsigned 64-bit integer"),
                       false;
        } else if (arg_is(name, "WINDOW")) {
            if (!arg_u64(val, &o->window) || o->window == 0 ||
                o->window > (uint64_t)INT64_MAX)
                return r_err(h, "ERR WINDOW is the number of truths an audit "
                                "window holds, 1 .. 2^63 - 1"),
                       false;
        } else {
            return r_err(h, "ERR unknown option (RATE r [SEED s] [WINDOW n])"),
                   false;
        }
    }
    return true;
}

int casc_audit_cmd(host *h) {
    rval *v;
    audit_args o;
    casc_audit *au;
    bool off = h->argc == 3 && arg_is(&h->argv[2], "OFF");
    if (h->argc < 3)
        return r_arity(h);
    if (!off && !parse_audit(h, &o))
        return 0;
    if ((v = key_need(h, 1, FAM_CASC, "ERR", "ERR not found")) == NULL)
        return 0;
    if (off) {
        casc_audit_free(v);
    } else {
        amq_status st = audit_new(v, o.rate, o.seed, o.window, &au);
        if (st != AMQ_OK)
            return r_status(h, "audit", st);
        casc_audit_free(v);
        v->u.casc.audit = au;
    }
    r_ok(h);
    return 0;
}

int casc_samples(host *h) {
    rval *v;
    uint64_t count = UINT64_MAX;
    if (h->argc != 2 && h->argc != 4)
        return r_arity(h);
    if (h->argc == 4 &&
        (!arg_is(&h->argv[2], "COUNT") || !arg_u64(&h->argv[3], &count)))
        return r_err(h, "ERR the option is COUNT n (n >= 0)");
    if ((v = need_audit(h)) == NULL)
        return 0;
    casc_audit *au = v->u.casc.audit;
    size_t n = count < au->count ? (size_t)count : au->count;
    h->ops->r_arr(h, (long)n);
    for (size_t i = 0; i < n; i++) {
        const sample *s = &au->ring[au->head];
        h->ops->r_str(h, s->p != NULL ? (const char *)s->p : "", s->n);
        ring_drop_oldest(au);
    }
    return 0;
}

int casc_truth(host *h) {
    rval *v;
    if (h->argc < 4 || (h->argc - 2) % 2 != 0)
        return r_err(h, "ERR wrong number of arguments: AMQ.CASCADE.TRUTH "
                        "takes pairs of an item and 0|1");
    for (int i = 3; i < h->argc; i += 2)
        if (!arg_is(&h->argv[i], "0") && !arg_is(&h->argv[i], "1"))
            return r_err(h, "ERR a truth is 1 (the item is a member) or 0 "
                            "(it is not)");
    if ((v = need_audit(h)) == NULL)
        return 0;
    casc_audit *au = v->u.casc.audit;
    for (int i = 2; i < h->argc; i += 2) {
        const rarg *item = &h->argv[i];
        amq_status st = amq_audit_record(au->a, item->p, item->n,
                                         h->argv[i + 1].p[0] == '1');
        if (st != AMQ_OK) {
            verdict(h, v);
            return r_status(h, "truth", st);
        }
        if (++au->truths >= au->window) {
            verdict(h, v);
            window_restart(au);
        }
    }
    verdict(h, v);
    h->ops->r_int(h, (h->argc - 2) / 2);
    return 0;
}

int casc_fallback(host *h) {
    rval *v;
    bool on;
    if (h->argc != 3)
        return r_arity(h);
    if (arg_is(&h->argv[2], "ON"))
        on = true;
    else if (arg_is(&h->argv[2], "OFF"))
        on = false;
    else
        return r_err(h, "ERR FALLBACK takes ON (the worst-case bound in "
                        "force) or OFF (the learned bound)");
    if ((v = key_need(h, 1, FAM_CASC, "ERR", "ERR not found")) == NULL)
        return 0;
    if (amq_cascade_fallback(v->u.casc.c) != on) {
        amq_status st = amq_cascade_set_fallback(v->u.casc.c, on);
        if (st == AMQ_ERR_UNSUPPORTED)
            return r_err(h, MSG_NO_FRONT);
        if (st != AMQ_OK)
            return r_status(h, "fallback", st);
        switched(h, v, on, true);
    }
    r_ok(h);
    return 0;
}
