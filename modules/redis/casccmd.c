/*
 * casccmd.c — AMQ.CASCADE.*: learned Bloom filter cascades
 * (include/amq/cascade.h, docs/cascade.md) as values of their own family.
 *
 *   AMQ.CASCADE.LOAD key frame         a new key from a cascade frame (what
 *                                      `amq cascade train -o` writes)
 *   AMQ.CASCADE.EXISTS key item        1 if the item may be a member
 *   AMQ.CASCADE.MEXISTS key item...    the same per item, scored in a batch
 *   AMQ.CASCADE.ADD key item...        into the insert buffer
 *   AMQ.CASCADE.DEL key BUILT|ADDED item...
 *                                      a member leaves (removed, or counted
 *                                      stale where its filter cannot remove)
 *   AMQ.CASCADE.INFO key               method, intervals, certified bound,
 *                                      route, audit ...
 *   AMQ.CASCADE.DUMP key               the frame back
 *   AMQ.CASCADE.AUDIT key RATE r [SEED s] [WINDOW n] | OFF
 *                                      start (restart) or stop the shadow-
 *                                      sampling audit of the key's queries
 *   AMQ.CASCADE.SAMPLES key [COUNT n]  pop sampled query items, oldest first
 *   AMQ.CASCADE.TRUTH key item 0|1 ... the truth about them (1: a member);
 *                                      a violated bound switches the key to
 *                                      its initial filter
 *   AMQ.CASCADE.FALLBACK key ON|OFF    switch the bound in force by hand
 *
 * A cascade is trained offline: the model needs labelled member and
 * non-member sets, which a key-value server does not see. So the server
 * loads a trained frame and answers from it; the two updates the library
 * allows on a trained cascade (the insert buffer and deletes, §5 of the
 * paper) are the only writes, and both end in "rebuild needed" errors once
 * the buffer or the stale budget is spent: the rebuild happens offline and
 * comes back through LOAD under a new key (or after DEL of the old one).
 *
 *   blob (value.c):  [ head | no parameters | one frame: type 302 | xxh64 ]
 *
 * Every query is deterministic (integer feature hashing, scores summed in a
 * fixed order), so a replica that received the same frame and the same
 * ADD/DEL stream answers exactly as the primary, and its blob — hence
 * DEBUG DIGEST — is the same. LOAD replicates the frame verbatim; ADD and
 * DEL replicate the items that changed the cascade, so a refused item (a
 * full buffer) is not replayed.
 *
 * Audits and the fallback (cascaudit.c). A cascade's certified bound holds
 * for the query distribution its held-out non-members came from; the
 * audit checks that on the live queries, and when it finds the bound
 * violated the key falls back: the bound it reports becomes the
 * worst-case bound, which holds whatever is asked (amq_cascade_set_fallback;
 * the answers stay the same, because the initial filter already gates
 * every one of them). The fallback is part of the frame (flag 4), so RDB,
 * DUMP/RESTORE, COPY, the AOF rewrite and a full sync carry it. The audit
 * is not: it is the server's evidence about the queries it answered, in
 * memory, and AUDIT, SAMPLES and TRUTH are not replicated. What is
 * replicated is the decision: a TRUTH that switches the key replicates
 * `AMQ.CASCADE.FALLBACK key ON`, and FALLBACK replicates itself when it
 * changed the bound in force, so replicas and the AOF apply the switch at the same
 * point of the write stream. Replicating TRUTH instead would not do: the
 * audit's verdict depends on which queries it sampled and in which window,
 * and a replica answers other queries (or none), so it could reach
 * another verdict from the same truths. A replica's copy therefore has no
 * audit, and queries answered by replicas are not sampled: audit on the
 * primary.
 */
#include <stdio.h>
#include <string.h>

#include "amqr.h"

/* Memory a loaded cascade takes per frame byte: the frame is the model's
 * weights and the filters' tables almost verbatim, plus the loader's
 * working copy of the histograms. */
#define CASC_MEMORY_PER_BYTE 2.0
#define CASC_INTERVALS_MAX AMQ_CASCADE_MAX_LEVELS

/* ---- the family ------------------------------------------------------------- */

static size_t c_frame_size(const rval *v, unsigned i) {
    (void)i;
    return amq_cascade_save_size(v->u.casc.c);
}

static amq_status c_frame_save(const rval *v, unsigned i, uint8_t *buf,
                               size_t cap) {
    size_t len;
    (void)i;
    return amq_cascade_save(v->u.casc.c, buf, cap, &len);
}

static bool c_frame_load(rval *v, unsigned i, unsigned nf, const uint8_t *b,
                         size_t len, char *err, size_t cap) {
    amq_diag diag = {0, {0}};
    (void)i;
    if (!rv_one_frame(nf, "CASCADE", err, cap))
        return false;
    amq_options o = rv_options(v);
    amq_status st = amq_cascade_load(b, len, &o, &v->u.casc.c, &diag);
    return st == AMQ_OK || rv_frame_refused(err, cap, st, &diag);
}

static void c_destroy(rval *v) {
    casc_audit_free(v);
    amq_cascade_free(v->u.casc.c);
}

const fam_ops casc_ops = {"cascade",
                          "amq-cascd",
                          "AMQ.LOADCHUNK",
                          0,
                          NULL,
                          NULL,
                          NULL,
                          NULL,
                          c_frame_size,
                          c_frame_save,
                          c_frame_load,
                          c_destroy,
                          NULL};

/* ---- helpers ------------------------------------------------------------------ */

static rval *need_casc(host *h) {
    return key_need(h, 1, FAM_CASC, "ERR", "ERR not found");
}

/* An update's status as a reply element. */
static void r_update_status(host *h, const char *what, amq_status st) {
    char msg[200];
    if (st == AMQ_ERR_FULL && strcmp(what, "add") == 0)
        snprintf(msg, sizeof msg,
                 "ERR rebuild needed: the insert buffer is full (or the "
                 "cascade was trained without one: amq cascade train --aux)");
    else if (st == AMQ_ERR_FULL)
        snprintf(msg, sizeof msg,
                 "ERR rebuild needed: the cascade holds as many stale "
                 "deleted keys as it may");
    else if (st == AMQ_ERR_INVALID)
        snprintf(msg, sizeof msg,
                 "ERR %s: the cascade has no insert buffer to delete from",
                 what);
    else
        snprintf(msg, sizeof msg, "ERR %s: %s", what, amq_strerror(st));
    h->ops->r_err(h, msg);
}

/* argv[from..] as an amq_keys over one buffer from rv_sys_alloc (*mem,
 * freed by the caller); false when out of memory. */
static bool keys_of(const host *h, int from, amq_keys *k, void **mem) {
    size_t n = (size_t)(h->argc - from), bytes = 0;
    for (size_t i = 0; i < n; i++)
        bytes += h->argv[from + (int)i].n;
    uint64_t *off = rv_sys_alloc((n + 1) * sizeof *off + bytes);
    if (off == NULL)
        return false;
    uint8_t *b = (uint8_t *)(off + n + 1);
    off[0] = 0;
    for (size_t i = 0; i < n; i++) {
        const rarg *a = &h->argv[from + (int)i];
        if (a->n > 0)
            memcpy(b + off[i], a->p, a->n);
        off[i + 1] = off[i] + a->n;
    }
    k->bytes = b;
    k->offsets = off;
    k->n = n;
    *mem = off;
    return true;
}

/* After an update of argv[from..]: replicate what changed (in[i] set for
 * the items that did), verbatim when all did; notify. */
static void replicate_items(host *h, const char *cmd, const char *event,
                            int from, const uint8_t *in, size_t n) {
    size_t nin = 0;
    for (size_t i = 0; i < n; i++)
        nin += in[i];
    if (nin == 0)
        return;
    h->ops->notify(h, event, 1);
    if (nin == n) {
        h->ops->replicate_verbatim(h);
        return;
    }
    rarg *a = rv_sys_alloc(((size_t)from - 1 + nin) * sizeof *a);
    if (a == NULL)
        return;
    int j = 0;
    for (int i = 1; i < from; i++)
        a[j++] = h->argv[i];
    for (size_t i = 0; i < n; i++)
        if (in[i])
            a[j++] = h->argv[from + (int)i];
    h->ops->replicate(h, cmd, a, j);
    rv_sys_free(a);
}

/* ---- commands ---------------------------------------------------------------- */

int casc_load(host *h) {
    rval *v;
    char err[200], msg[240];
    if (h->argc != 3)
        return r_arity(h);
    int st = h->ops->lookup(h, 1, 0, &v);
    if (st != KEY_EMPTY)
        return r_err(h, "ERR item exists (AMQ.CASCADE.LOAD makes a new key)");
    const rarg *f = &h->argv[2];
    if (!h->ops->budget(h, CASC_MEMORY_PER_BYTE * (double)f->n))
        return r_err(h, "ERR frame larger than the memory limit allows");
    if ((v = rv_new(FAM_CASC)) == NULL)
        return r_err(h, "ERR out of memory");
    if (!c_frame_load(v, 0, 1, (const uint8_t *)f->p, f->n, err, sizeof err)) {
        rv_free(v);
        snprintf(msg, sizeof msg, "ERR invalid cascade %s", err);
        return r_err(h, msg);
    }
    if (!store_or_reply(h, v))
        return 0;
    h->ops->replicate_verbatim(h);
    h->ops->notify(h, "amq.cascade.load", 1);
    r_ok(h);
    return 0;
}

/* The audit is no part of the value's state (nothing of it is in the
 * blob), so a query counts in it through a value it only reads. */
static bool contains(const rval *v, const rarg *item) {
    casc_audit_query(v->u.casc.audit, item);
    return amq_cascade_contains(v->u.casc.c, item->p, item->n);
}

int casc_exists(host *h) { return reply_exists(h, FAM_CASC, true, contains); }

int casc_mexists(host *h) {
    rval *v;
    amq_keys k;
    void *mem;
    if (h->argc < 3)
        return r_arity(h);
    int st = key_open(h, 1, FAM_CASC, &v, "ERR");
    if (st == KEY_EMPTY) /* zeros */
        return reply_exists(h, FAM_CASC, false, contains);
    if (st < 0)
        return 0;
    size_t n = (size_t)(h->argc - 2);
    uint8_t *out = rv_sys_alloc(n);
    if (out == NULL || !keys_of(h, 2, &k, &mem)) {
        rv_sys_free(out);
        return r_err(h, "ERR out of memory");
    }
    amq_cascade_contains_batch(v->u.casc.c, &k, out);
    for (int i = 2; i < h->argc; i++)
        casc_audit_query(v->u.casc.audit, &h->argv[i]);
    h->ops->r_arr(h, (long)n);
    for (size_t i = 0; i < n; i++)
        h->ops->r_int(h, out[i]);
    rv_sys_free(mem);
    rv_sys_free(out);
    return 0;
}

/* One update per item of argv[from..], an array of replies (1, 0 for
 * AMQ_ERR_NOT_FOUND, an error otherwise); what changed is replicated. */
static int update_items(host *h, rval *v, int from, const char *cmd,
                        const char *what, const char *event,
                        amq_status (*op)(rval *v, const rarg *item, int o),
                        int origin) {
    size_t n = (size_t)(h->argc - from);
    uint8_t *in = rv_sys_alloc(n);
    if (in == NULL)
        return r_err(h, "ERR out of memory");
    h->ops->r_arr(h, (long)n);
    for (size_t i = 0; i < n; i++) {
        amq_status st = op(v, &h->argv[from + (int)i], origin);
        in[i] = st == AMQ_OK;
        if (st == AMQ_OK || st == AMQ_ERR_NOT_FOUND)
            h->ops->r_int(h, st == AMQ_OK);
        else
            r_update_status(h, what, st);
    }
    replicate_items(h, cmd, event, from, in, n);
    rv_sys_free(in);
    return 0;
}

static amq_status op_add(rval *v, const rarg *item, int origin) {
    (void)origin;
    return amq_cascade_add(v->u.casc.c, item->p, item->n);
}

static amq_status op_del(rval *v, const rarg *item, int origin) {
    return amq_cascade_remove(v->u.casc.c, item->p, item->n,
                              (amq_origin)origin);
}

int casc_add(host *h) {
    rval *v;
    if (h->argc < 3)
        return r_arity(h);
    if ((v = need_casc(h)) == NULL)
        return 0;
    return update_items(h, v, 2, "AMQ.CASCADE.ADD", "add", "amq.cascade.add",
                        op_add, 0);
}

int casc_del(host *h) {
    rval *v;
    int origin;
    if (h->argc < 4)
        return r_arity(h);
    if (arg_is(&h->argv[2], "BUILT"))
        origin = AMQ_ORIGIN_BUILT;
    else if (arg_is(&h->argv[2], "ADDED"))
        origin = AMQ_ORIGIN_ADDED;
    else
        return r_err(h, "ERR the origin is BUILT (trained in) or ADDED "
                        "(through AMQ.CASCADE.ADD)");
    if ((v = need_casc(h)) == NULL)
        return 0;
    return update_items(h, v, 3, "AMQ.CASCADE.DEL", "delete", "amq.cascade.del",
                        op_del, origin);
}

int casc_dump(host *h) { return dump_as(h, FAM_CASC); }

/* ---- INFO ---------------------------------------------------------------------- */

static void r_name(host *h, const char *name) { h->ops->r_simple(h, name); }

static void r_cstr(host *h, const char *name, const char *s) {
    r_name(h, name);
    h->ops->r_str(h, s, strlen(s));
}

static void r_num(host *h, const char *name, long long x) {
    r_name(h, name);
    h->ops->r_int(h, x);
}

static void r_real(host *h, const char *name, double x) {
    r_name(h, name);
    h->ops->r_double(h, x);
}

static void r_flag(host *h, const char *name, bool x) {
    r_num(h, name, x ? 1 : 0);
}

/* The audit as a map (a null without one). */
static void r_audit(host *h, const rval *v) {
    casc_audit_view a;
    if (!casc_audit_view_of(v, &a)) {
        h->ops->r_null(h);
        return;
    }
    const amq_audit_report *r = &a.report;
    h->ops->r_map(h, 20);
    r_real(h, "Rate", a.rate);
    r_num(h, "Window", (long long)a.window);
    r_num(h, "Windows", (long long)a.windows);
    r_num(h, "Pending", (long long)a.pending);
    r_num(h, "Dropped", (long long)a.dropped);
    r_num(h, "Queries", (long long)r->queries);
    r_num(h, "Sampled", (long long)a.sampled);
    r_num(h, "Members reported", (long long)r->members);
    r_num(h, "Non-members reported", (long long)r->nonmembers);
    r_num(h, "False positives", (long long)r->false_positives);
    r_num(h, "False negatives", (long long)r->false_negatives);
    r_real(h, "FPR estimate", r->fpr_hat);
    r_real(h, "FPR low", r->fpr_lower);
    r_real(h, "FPR high", r->fpr_upper);
    r_real(h, "Build bound", r->bound_build);
    r_real(h, "Audit bound", r->bound_audit);
    r_real(h, "Drift p-value", r->drift_pvalue);
    r_real(h, "Drift PSI", r->drift_psi);
    r_flag(h, "Unverified", r->unverified);
    r_flag(h, "Violated", r->violated);
}

/* One interval I_ℓ as a map. */
static void r_level(host *h, const amq_cascade_level *l) {
    h->ops->r_map(h, 9);
    r_num(h, "Bin low", l->bin_lo);
    r_num(h, "Bin high", l->bin_hi);
    r_real(h, "Score low", l->tau_lo);
    r_real(h, "Score high", l->tau_hi);
    r_num(h, "Members", (long long)l->n);
    r_num(h, "Stale", (long long)l->stale);
    r_real(h, "Non-member share bound", l->p_upper);
    r_real(h, "Filter bound", l->eps);
    r_cstr(h, "Filter", l->spec);
}

int casc_info(host *h) {
    rval *v;
    amq_cascade_stats s;
    amq_cascade_level lv[CASC_INTERVALS_MAX + 2];
    size_t nl = 0;
    char id[24];
    if (h->argc != 2)
        return r_arity(h);
    if ((v = need_casc(h)) == NULL)
        return 0;
    amq_cascade_get_stats(v->u.casc.c, &s, lv, sizeof lv / sizeof lv[0], &nl);
    if (nl > sizeof lv / sizeof lv[0])
        nl = sizeof lv / sizeof lv[0];
    snprintf(id, sizeof id, "%016llx", (unsigned long long)s.model_id);
    h->ops->r_map(h, 24);
    r_cstr(h, "Method", amq_learned_method_name(s.method));
    r_num(h, "Version", (long long)s.version);
    r_cstr(h, "Model id", id);
    r_num(h, "Members", (long long)s.members);
    r_num(h, "Added", (long long)s.added);
    r_num(h, "Removed", (long long)s.removed);
    r_num(h, "Stale", (long long)s.stale);
    r_num(h, "Levels", s.levels);
    r_num(h, "Bins", s.bins);
    r_num(h, "Accept bin", s.accept_bin);
    r_num(h, "Reject bins", s.reject_bins);
    r_num(h, "Memory", (long long)rv_memory(v));
    r_num(h, "Model bytes", (long long)s.model_bytes);
    r_num(h, "Insert buffer bytes", (long long)s.aux_bytes);
    r_real(h, "Bits per key", s.bits_per_key);
    r_real(h, "Error bound", amq_cascade_fpr_bound(v->u.casc.c));
    r_real(h, "Error estimate", s.fpr_estimate);
    r_real(h, "Confidence", 1.0 - s.eta);
    r_real(h, "Accepted share bound", s.p0_upper);
    r_flag(h, "Fallback", s.fallback);
    r_real(h, "Learned bound", s.learned_bound);
    r_real(h, "Worst-case bound", s.worst_case_bound);
    r_name(h, "Intervals");
    h->ops->r_arr(h, (long)nl);
    for (size_t i = 0; i < nl; i++)
        r_level(h, &lv[i]);
    r_name(h, "Audit");
    r_audit(h, v);
    return 0;
}
