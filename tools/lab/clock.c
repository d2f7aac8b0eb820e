/*
 * clock.c — `amq-lab clock simulate` and `amq-lab clock eval`: the Bloom clock
 * against vector-clock truth in a simulated message-passing system.
 *
 * The simulation. N node slots; each step one random node may have an
 * internal event (probability --internal) and may send its timestamp
 * (probability --send-rate; a send is itself an event) to --fanout peers
 * chosen by the topology, each copy lost with probability --loss; delivery
 * is immediate and a receive merges (no tick). With probability --churn a
 * step also replaces a random node by a newcomer (new id, zero clocks).
 * The run stops after --events events.
 *
 * Truth. Every event is recorded in a reservoir of the last R events (its
 * Bloom timestamp and who made it). Each node carries one bit per
 * reservoir slot — "this event is in my causal past" — OR-ed on receive:
 * a vector clock projected on the sampled events, exact, and small enough
 * for N = 100,000 (R/8 bytes a node). Reservoir blocks of 64 slots are
 * recycled with an epoch stamp, so recycling costs nothing per node.
 *
 * Pairs. After each event at node q, q's new timestamp B is compared with
 * --pairs random recorded timestamps A: A -> B exactly when A's bit is set
 * at q; otherwise A || B (B is newer, so B -> A is impossible). For every
 * concurrent pair both formulas' claims are computed from the sums (what a
 * "before" verdict would report) and binned: the calibration plot. The
 * same pairs are decided again with the history search.
 *
 * Vector-clock bytes. For N <= --vc-limit every node also runs a real
 * sparse vector clock (amq_clock, merged on receive) and every message's
 * encoded size is measured, dense and sparse (dense counts every id ever
 * seen: nothing here tells a node when a departed node's events are stable
 * enough to forget). Above the limit only the dense lower bound (one byte
 * per id) is reported and vector_bytes_exact is false.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "amq/clock.h"
#include "lab.h"

#define SIM_BINS 8
#define SIM_RES_DEFAULT 1024

typedef enum topo { TOPO_COMPLETE, TOPO_RING, TOPO_STAR } topo;

typedef struct sim_opts {
    uint64_t nodes, events, seed, pairs, history, vc_limit, reservoir;
    uint32_t m, k, fanout;
    double internal, send_rate, loss, churn, threshold;
    topo topology;
    bool json, quiet;
} sim_opts;

/* Calibration bins over the claimed probability: [0, 1e-6), then decades
 * up to 0.1, then [0.1, 0.3), [0.3, 1]. */
typedef struct sim_bin {
    uint64_t n, dominated;
    double claimed;
} sim_bin;

typedef struct sim_decide {
    uint64_t tp, fp; /* ordered decisions: right, wrong */
} sim_decide;

typedef struct sim_result {
    uint64_t events, pairs, ordered, concurrent, false_verdicts, missed;
    double claim_paper, claim_exact;
    sim_bin paper[SIM_BINS], exact[SIM_BINS];
    /* decisions at the threshold: ours, ours + history, paper, paper +
     * history */
    sim_decide dec[4];
    uint64_t history_used;
    uint64_t messages;
    double bytes_bloom, bytes_dense, bytes_sparse;
    bool vector_exact;
    double seconds;
} sim_result;

typedef struct sim_node {
    amq_clock *bc, *vc;
    uint64_t id;
} sim_node;

typedef struct sim {
    const sim_opts *o;
    uint64_t rng, next_id, next_event;
    sim_node *nodes;
    uint64_t *truth; /* nodes * words                                     */
    uint32_t *stamp; /* nodes * words: epoch each word belongs to          */
    uint32_t *epoch; /* words: current epoch of each reservoir block       */
    size_t words;
    amq_clock **res; /* reservoir timestamps                               */
    uint64_t res_next, res_filled;
    sim_result *r;
} sim;

static uint64_t rnd(sim *s) {
    uint64_t z = (s->rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static double rnd01(sim *s) { return (double)(rnd(s) >> 11) * 0x1p-53; }
static uint64_t rnd_below(sim *s, uint64_t n) { return rnd(s) % n; }

/* ---- setup ---------------------------------------------------------------------- */

static bool node_reset(sim *s, size_t i) {
    sim_node *n = &s->nodes[i];
    amq_clock_free(n->bc);
    amq_clock_free(n->vc);
    n->bc = n->vc = NULL;
    n->id = s->next_id++;
    memset(s->stamp + i * s->words, 0, s->words * sizeof *s->stamp);
    if (amq_clock_new_bloom(s->o->m, s->o->k, (uint32_t)s->o->history, NULL,
                            &n->bc) != AMQ_OK)
        return false;
    if (s->r->vector_exact &&
        amq_clock_new_vector(AMQ_CLOCK_VECTOR_SPARSE, n->id, NULL, &n->vc) !=
            AMQ_OK)
        return false;
    return true;
}

static void sim_free(sim *s) {
    if (s->nodes != NULL)
        for (uint64_t i = 0; i < s->o->nodes; i++) {
            amq_clock_free(s->nodes[i].bc);
            amq_clock_free(s->nodes[i].vc);
        }
    if (s->res != NULL)
        for (size_t i = 0; i < s->words * 64; i++)
            amq_clock_free(s->res[i]);
    free(s->nodes);
    free(s->truth);
    free(s->stamp);
    free(s->epoch);
    free(s->res);
}

static bool sim_init(sim *s, const sim_opts *o, sim_result *r) {
    memset(s, 0, sizeof *s);
    memset(r, 0, sizeof *r);
    s->o = o;
    s->r = r;
    s->rng = o->seed;
    s->words = (size_t)((o->reservoir + 63) / 64);
    size_t n = (size_t)o->nodes;
    r->vector_exact = o->nodes <= o->vc_limit;
    s->nodes = calloc(n, sizeof *s->nodes);
    s->truth = calloc(n * s->words, sizeof *s->truth);
    s->stamp = calloc(n * s->words, sizeof *s->stamp);
    s->epoch = calloc(s->words, sizeof *s->epoch);
    s->res = calloc(s->words * 64, sizeof *s->res);
    if (!s->nodes || !s->truth || !s->stamp || !s->epoch || !s->res)
        return false;
    for (size_t w = 0; w < s->words; w++)
        s->epoch[w] = 1;
    for (size_t i = 0; i < n; i++)
        if (!node_reset(s, i))
            return false;
    for (size_t i = 0; i < s->words * 64; i++)
        if (amq_clock_new_bloom(o->m, o->k, 0, NULL, &s->res[i]) != AMQ_OK)
            return false;
    return true;
}

/* ---- truth bits ------------------------------------------------------------------ */

static uint64_t truth_word(const sim *s, size_t node, size_t w) {
    size_t at = node * s->words + w;
    return s->stamp[at] == s->epoch[w] ? s->truth[at] : 0;
}

static void truth_set(sim *s, size_t node, uint64_t slot) {
    size_t w = (size_t)(slot / 64), at = node * s->words + w;
    s->truth[at] = truth_word(s, node, w) | (1ULL << (slot % 64));
    s->stamp[at] = s->epoch[w];
}

static void truth_merge(sim *s, size_t to, size_t from) {
    for (size_t w = 0; w < s->words; w++) {
        size_t at = to * s->words + w;
        s->truth[at] = truth_word(s, to, w) | truth_word(s, from, w);
        s->stamp[at] = s->epoch[w];
    }
}

/* ---- pairs ------------------------------------------------------------------------- */

static int bin_of(double p) {
    if (p < 1e-6)
        return 0;
    if (p >= 0.3)
        return SIM_BINS - 1;
    if (p >= 0.1)
        return SIM_BINS - 2;
    int b =
        (int)floor(log10(p)) + 7; /* [1e-6, 1e-5) -> 1 ... [0.01, 0.1) -> 5 */
    return b < 1 ? 1 : (b > SIM_BINS - 3 ? SIM_BINS - 3 : b);
}

static void bin_add(sim_bin *bins, double claimed, bool dominated) {
    sim_bin *b = &bins[bin_of(claimed)];
    b->n++;
    b->dominated += dominated;
    b->claimed += claimed;
}

static void decide(sim_decide *d, bool ordered_verdict, double p, double tau,
                   bool truth) {
    if (!ordered_verdict || p > tau)
        return;
    d->tp += truth;
    d->fp += !truth;
}

static bool compare_pair(sim *s, size_t q, uint64_t slot) {
    sim_result *r = s->r;
    const amq_clock *a = s->res[slot], *b = s->nodes[q].bc;
    amq_clock_verdict v, vh;
    if (amq_clock_compare(b, a, &v) != AMQ_OK ||
        amq_clock_compare_history(b, a, &vh) != AMQ_OK)
        return false;
    bool truth = (truth_word(s, q, (size_t)(slot / 64)) >> (slot % 64)) & 1;
    bool said = v.order != AMQ_ORDER_CONCURRENT;
    r->pairs++;
    if (truth) {
        r->ordered++;
        r->missed += v.order != AMQ_ORDER_AFTER && v.order != AMQ_ORDER_EQUAL;
    } else {
        double lo = v.sum_low, hi = v.sum_high;
        double pp = amq_clock_fp_paper(s->o->m, lo, hi);
        double pe = amq_clock_fp_exact(s->o->m, s->o->k, hi - lo);
        r->concurrent++;
        r->false_verdicts += said;
        r->claim_paper += pp;
        r->claim_exact += pe;
        bin_add(r->paper, pp, said);
        bin_add(r->exact, pe, said);
    }
    double tau = s->o->threshold;
    decide(&r->dec[0], said, v.fp_exact, tau, truth);
    decide(&r->dec[1], said, vh.fp_exact, tau, truth);
    decide(&r->dec[2], said, v.fp_paper, tau, truth);
    decide(&r->dec[3], said, vh.fp_paper, tau, truth);
    r->history_used += vh.history_age > 0;
    return true;
}

/* ---- events and messages -------------------------------------------------------- */

static bool record_event(sim *s, size_t q) {
    uint64_t ev = s->next_event++;
    sim_node *n = &s->nodes[q];
    if (amq_clock_tick(n->bc, &ev, sizeof ev) != AMQ_OK)
        return false;
    if (n->vc != NULL && amq_clock_tick(n->vc, NULL, 0) != AMQ_OK)
        return false;
    s->r->events++;
    uint64_t cap = s->words * 64, slot = s->res_next;
    if (slot % 64 == 0)
        s->epoch[slot / 64]++; /* recycle the block: forget it everywhere */
    if (amq_clock_assign(s->res[slot], n->bc) != AMQ_OK)
        return false;
    truth_set(s, q, slot);
    s->res_next = (slot + 1) % cap;
    s->res_filled += s->res_filled < cap;
    /* Live slots: the filled ones outside the block being recycled. */
    for (uint64_t i = 0; i < s->o->pairs && s->res_filled > 64; i++) {
        uint64_t pick = rnd_below(s, s->res_filled);
        if (pick / 64 == slot / 64 || pick == slot)
            continue;
        if (!compare_pair(s, q, pick))
            return false;
    }
    return true;
}

static size_t peer_of(sim *s, size_t p) {
    size_t n = (size_t)s->o->nodes;
    switch (s->o->topology) {
    case TOPO_RING: return rnd(s) & 1 ? (p + 1) % n : (p + n - 1) % n;
    case TOPO_STAR:
        if (p != 0)
            return 0;
        return 1 + (size_t)rnd_below(s, n - 1);
    default: {
        size_t q = (size_t)rnd_below(s, n - 1);
        return q >= p ? q + 1 : q;
    }
    }
}

/* Dense encoding size from the sparse clock: every id ever seen gets a
 * counter (absent ones a 1-byte 0), no ids on the wire. */
static double dense_bytes(const sim *s, const amq_clock *vc) {
    size_t n = amq_clock_size(vc);
    double bytes = 1 + 4 + 4 + 10, extra = 0; /* tag, members, check, count */
    for (size_t i = 0; i < n; i++) {
        uint64_t id, ctr;
        if (amq_clock_entry(vc, i, &id, &ctr) == AMQ_OK)
            extra += ctr < 128 ? 0 : (ctr < 16384 ? 1 : 2);
    }
    return bytes + (double)s->next_id + extra;
}

static bool send_message(sim *s, size_t p) {
    sim_result *r = s->r;
    const sim_node *from = &s->nodes[p];
    double bb = (double)amq_clock_encoded_size(from->bc);
    double db = from->vc != NULL ? dense_bytes(s, from->vc)
                                 : 1 + 4 + 4 + (double)s->next_id;
    double sb = from->vc != NULL ? (double)amq_clock_encoded_size(from->vc) : 0;
    for (uint32_t f = 0; f < s->o->fanout; f++) {
        size_t q = peer_of(s, p);
        r->messages++;
        r->bytes_bloom += bb;
        r->bytes_dense += db;
        r->bytes_sparse += sb;
        if (rnd01(s) < s->o->loss)
            continue;
        if (amq_clock_merge(s->nodes[q].bc, from->bc) != AMQ_OK)
            return false;
        if (from->vc != NULL &&
            amq_clock_merge(s->nodes[q].vc, from->vc) != AMQ_OK)
            return false;
        truth_merge(s, q, p);
    }
    return true;
}

static bool sim_step(sim *s) {
    const sim_opts *o = s->o;
    size_t p = (size_t)rnd_below(s, o->nodes);
    if (o->churn > 0 && rnd01(s) < o->churn &&
        !node_reset(s, (size_t)rnd_below(s, o->nodes)))
        return false;
    if (rnd01(s) < o->internal && !record_event(s, p))
        return false;
    if (rnd01(s) < o->send_rate && s->r->events < o->events &&
        (!record_event(s, p) || !send_message(s, p)))
        return false;
    return true;
}

static bool sim_run(const sim_opts *o, sim_result *r) {
    sim s;
    double t0 = cli_now();
    bool ok = sim_init(&s, o, r);
    cli_progress prog;
    cli_progress_init(&prog, "simulate", o->events);
    while (ok && r->events < o->events) {
        ok = sim_step(&s);
        cli_progress_tick(&prog, r->events);
    }
    cli_progress_done(&prog);
    sim_free(&s);
    r->seconds = cli_now() - t0;
    if (!ok)
        cli_error("clock simulate: out of memory or a clock error");
    return ok;
}

/* ---- reporting -------------------------------------------------------------------- */

static double ratio(double a, double b) { return b > 0 ? a / b : 0; }

static const char *topo_name(topo t) {
    return t == TOPO_RING ? "ring" : (t == TOPO_STAR ? "star" : "complete");
}

static void print_bins(cli_json *j, const char *name, const sim_bin *b) {
    char key[40];
    snprintf(key, sizeof key, "calibration_%s", name);
    cli_json_open(j, key, '[');
    for (int i = 0; i < SIM_BINS; i++) {
        cli_json_open(j, NULL, '{');
        cli_json_u64(j, "n", b[i].n);
        cli_json_num(j, "claimed", ratio(b[i].claimed, (double)b[i].n));
        cli_json_num(j, "observed",
                     ratio((double)b[i].dominated, (double)b[i].n));
        cli_json_close(j);
    }
    cli_json_close(j);
}

static double vector_bytes(const sim_result *r) {
    double d = ratio(r->bytes_dense, (double)r->messages);
    double sp = ratio(r->bytes_sparse, (double)r->messages);
    return r->vector_exact && sp < d ? sp : d;
}

static void print_json(FILE *out, const sim_opts *o, const sim_result *r) {
    double msgs = (double)r->messages, conc = (double)r->concurrent;
    static const char *dn[4] = {"exact", "exact_history", "paper",
                                "paper_history"};
    cli_json j;
    cli_json_init(&j, out, true);
    cli_json_open(&j, NULL, '{');
    cli_json_u64(&j, "nodes", o->nodes);
    cli_json_u64(&j, "m", o->m);
    cli_json_u64(&j, "k", o->k);
    cli_json_u64(&j, "events", r->events);
    cli_json_u64(&j, "pairs", r->pairs);
    cli_json_u64(&j, "true_concurrent_pairs", r->concurrent);
    cli_json_u64(&j, "false_before_verdicts", r->false_verdicts);
    cli_json_num(&j, "observed_fp_rate",
                 ratio((double)r->false_verdicts, conc));
    cli_json_num(&j, "mean_claimed_fp_paper", ratio(r->claim_paper, conc));
    cli_json_num(&j, "mean_claimed_fp_exact", ratio(r->claim_exact, conc));
    cli_json_u64(&j, "missed_orderings", r->missed);
    cli_json_num(&j, "bytes_per_message_bloom", ratio(r->bytes_bloom, msgs));
    cli_json_num(&j, "bytes_per_message_vector", vector_bytes(r));
    cli_json_num(&j, "bytes_per_message_vector_dense",
                 ratio(r->bytes_dense, msgs));
    if (r->vector_exact)
        cli_json_num(&j, "bytes_per_message_vector_sparse",
                     ratio(r->bytes_sparse, msgs));
    else
        cli_json_null(&j, "bytes_per_message_vector_sparse");
    cli_json_bool(&j, "vector_bytes_exact", r->vector_exact);
    cli_json_u64(&j, "true_ordered_pairs", r->ordered);
    cli_json_num(&j, "threshold", o->threshold);
    for (int i = 0; i < 4; i++) {
        const sim_decide *d = &r->dec[i];
        char key[32];
        snprintf(key, sizeof key, "decide_%s", dn[i]);
        cli_json_open(&j, key, '{');
        cli_json_num(&j, "precision",
                     ratio((double)d->tp, (double)(d->tp + d->fp)));
        cli_json_num(&j, "recall", ratio((double)d->tp, (double)r->ordered));
        cli_json_num(
            &j, "accuracy",
            ratio((double)(d->tp + r->concurrent - d->fp), (double)r->pairs));
        cli_json_close(&j);
    }
    print_bins(&j, "paper", r->paper);
    print_bins(&j, "exact", r->exact);
    cli_json_str(&j, "topology", topo_name(o->topology));
    cli_json_u64(&j, "history", o->history);
    cli_json_u64(&j, "seed", o->seed);
    cli_json_u64(&j, "messages", r->messages);
    cli_json_num(&j, "seconds", r->seconds);
    cli_json_close(&j);
}

static void print_text(FILE *out, const sim_opts *o, const sim_result *r) {
    double conc = (double)r->concurrent;
    fprintf(out,
            "%llu nodes (%s), m=%u k=%u: %llu events, %llu pairs "
            "(%llu ordered, %llu concurrent)\n",
            (unsigned long long)o->nodes, topo_name(o->topology), o->m, o->k,
            (unsigned long long)r->events, (unsigned long long)r->pairs,
            (unsigned long long)r->ordered, (unsigned long long)r->concurrent);
    fprintf(out,
            "concurrent pairs reported ordered: %llu (%.4g); claimed: paper "
            "%.4g, ours %.4g\n",
            (unsigned long long)r->false_verdicts,
            ratio((double)r->false_verdicts, conc), ratio(r->claim_paper, conc),
            ratio(r->claim_exact, conc));
    fprintf(out, "ordered pairs reported concurrent: %llu\n",
            (unsigned long long)r->missed);
    fprintf(out, "bytes/message: bloom %.1f, vector %.1f%s\n",
            ratio(r->bytes_bloom, (double)r->messages), vector_bytes(r),
            r->vector_exact ? "" : " (lower bound)");
}

/* ---- options -------------------------------------------------------------------- */

enum {
    O_NODES = 1,
    O_M,
    O_K,
    O_EVENTS,
    O_SEED,
    O_PAIRS,
    O_HISTORY,
    O_TOPO,
    O_SEND,
    O_INTERNAL,
    O_LOSS,
    O_CHURN,
    O_FANOUT,
    O_JSON,
    O_THRESH,
    O_VCLIMIT,
    O_RES,
    O_QUICK,
    O_SVG,
    O_MAXN,
    O_QUIET
};

static const cli_opt sim_optv[] = {
    {"nodes", 0, true, O_NODES},
    {"m", 0, true, O_M},
    {"k", 0, true, O_K},
    {"events", 0, true, O_EVENTS},
    {"seed", 's', true, O_SEED},
    {"pairs", 0, true, O_PAIRS},
    {"history", 0, true, O_HISTORY},
    {"topology", 0, true, O_TOPO},
    {"send-rate", 0, true, O_SEND},
    {"internal", 0, true, O_INTERNAL},
    {"loss", 0, true, O_LOSS},
    {"churn", 0, true, O_CHURN},
    {"fanout", 0, true, O_FANOUT},
    {"json", 0, false, O_JSON},
    {"threshold", 0, true, O_THRESH},
    {"vc-limit", 0, true, O_VCLIMIT},
    {"reservoir", 0, true, O_RES},
    {"quick", 0, false, O_QUICK},
    {"svg", 0, true, O_SVG},
    {"max-nodes", 0, true, O_MAXN},
    {"quiet", 'q', false, O_QUIET},
    {"help", 'h', false, CLI_OPT_HELP},
    {NULL, 0, false, 0},
};

static bool parse_prob(const char *opt, const char *v, double *out) {
    char *end;
    double x = strtod(v, &end);
    if (*v == 0 || *end != 0 || !(x >= 0 && x <= 1)) {
        cli_usage_error("clock", "--%s wants a number in [0, 1], not '%s'", opt,
                        v);
        return false;
    }
    *out = x;
    return true;
}

static bool parse_u32(const char *opt, const char *v, uint64_t lo, uint64_t hi,
                      uint32_t *out) {
    uint64_t x;
    if (!cli_parse_u64("clock", opt, v, &x))
        return false;
    if (x < lo || x > hi) {
        cli_usage_error("clock", "--%s must be in [%llu, %llu]", opt,
                        (unsigned long long)lo, (unsigned long long)hi);
        return false;
    }
    *out = (uint32_t)x;
    return true;
}

static void sim_defaults(sim_opts *o) {
    memset(o, 0, sizeof *o);
    o->nodes = 100;
    o->m = 256;
    o->k = 4;
    o->events = 20000;
    o->seed = 42;
    o->pairs = 2;
    o->history = 8;
    o->internal = 0.5;
    o->send_rate = 0.5;
    o->fanout = 1;
    o->threshold = 0.01;
    o->vc_limit = 2048;
    o->reservoir = SIM_RES_DEFAULT;
}

typedef struct eval_extra {
    bool quick;
    const char *svg;
    uint64_t max_nodes;
} eval_extra;

/* One option; returns 1 handled, 0 unknown to this parser, -1 error. */
static int sim_option(int id, const char *v, sim_opts *o, eval_extra *e) {
    uint32_t u;
    switch (id) {
    case O_NODES:
        if (!cli_parse_u64("clock", "nodes", v, &o->nodes))
            return -1;
        if (o->nodes < 2 || o->nodes > (1u << 24)) {
            cli_usage_error("clock", "--nodes must be in [2, 16777216]");
            return -1;
        }
        return 1;
    case O_M: return parse_u32("m", v, 1, AMQ_CLOCK_MAX_M, &o->m) ? 1 : -1;
    case O_K: return parse_u32("k", v, 1, AMQ_CLOCK_MAX_K, &o->k) ? 1 : -1;
    case O_EVENTS:
        return cli_parse_u64("clock", "events", v, &o->events) ? 1 : -1;
    case O_SEED: return cli_parse_u64("clock", "seed", v, &o->seed) ? 1 : -1;
    case O_PAIRS: return cli_parse_u64("clock", "pairs", v, &o->pairs) ? 1 : -1;
    case O_HISTORY:
        if (!parse_u32("history", v, 0, AMQ_CLOCK_MAX_HISTORY, &u))
            return -1;
        o->history = u;
        return 1;
    case O_VCLIMIT:
        return cli_parse_u64("clock", "vc-limit", v, &o->vc_limit) ? 1 : -1;
    case O_RES:
        if (!parse_u32("reservoir", v, 128, 1u << 20, &u))
            return -1;
        o->reservoir = u;
        return 1;
    case O_FANOUT: return parse_u32("fanout", v, 1, 1000, &o->fanout) ? 1 : -1;
    case O_SEND: return parse_prob("send-rate", v, &o->send_rate) ? 1 : -1;
    case O_INTERNAL: return parse_prob("internal", v, &o->internal) ? 1 : -1;
    case O_LOSS: return parse_prob("loss", v, &o->loss) ? 1 : -1;
    case O_CHURN: return parse_prob("churn", v, &o->churn) ? 1 : -1;
    case O_THRESH: return parse_prob("threshold", v, &o->threshold) ? 1 : -1;
    case O_JSON: o->json = true; return 1;
    case O_QUIET: o->quiet = true; return 1;
    case O_TOPO:
        if (strcmp(v, "complete") == 0)
            o->topology = TOPO_COMPLETE;
        else if (strcmp(v, "ring") == 0)
            o->topology = TOPO_RING;
        else if (strcmp(v, "star") == 0)
            o->topology = TOPO_STAR;
        else
            return cli_usage_error("clock", "unknown topology '%s'", v), -1;
        return 1;
    case O_QUICK:
        if (e != NULL)
            e->quick = true;
        return e != NULL;
    case O_SVG:
        if (e != NULL)
            e->svg = v;
        return e != NULL;
    case O_MAXN:
        if (e == NULL)
            return 0;
        return cli_parse_u64("clock", "max-nodes", v, &e->max_nodes) ? 1 : -1;
    }
    return 0;
}

static int parse_opts(int argc, char **argv, sim_opts *o, eval_extra *e) {
    cli_args a;
    cli_args_init(&a, "clock", argc, argv);
    for (;;) {
        int id = cli_next(&a, sim_optv);
        if (id == CLI_NEXT_END)
            break;
        if (id == CLI_NEXT_ERR)
            return CLI_EXIT_ERR;
        if (id == CLI_OPT_HELP) {
            cli_help_print(stdout, "clock");
            return CLI_EXIT_OK;
        }
        if (id == CLI_NEXT_POS)
            return cli_usage_error("clock", "unexpected argument '%s'",
                                   a.value);
        int rc = sim_option(id, a.value, o, e);
        if (rc < 0)
            return CLI_EXIT_ERR;
        if (rc == 0)
            return cli_usage_error("clock", "option not valid here");
    }
    if (o->k > o->m)
        return cli_usage_error("clock", "k must not exceed m");
    return -1;
}

static int cmd_simulate(int argc, char **argv) {
    sim_opts o;
    sim_defaults(&o);
    int rc = parse_opts(argc, argv, &o, NULL);
    if (rc >= 0)
        return rc;
    sim_result r;
    if (!sim_run(&o, &r))
        return CLI_EXIT_ERR;
    if (o.json)
        print_json(stdout, &o, &r);
    else if (!o.quiet)
        print_text(stdout, &o, &r);
    return r.missed == 0 ? CLI_EXIT_OK : CLI_EXIT_ERR;
}

/* ---- eval ------------------------------------------------------------------------------ */

typedef struct eval_mk {
    uint32_t m, k;
} eval_mk;

static const uint64_t eval_nodes[] = {10, 100, 1000, 10000, 100000};
static const eval_mk eval_shapes[] = {{64, 3}, {256, 4}, {1024, 6}};

static void bins_add(sim_bin *to, const sim_bin *from) {
    for (int i = 0; i < SIM_BINS; i++) {
        to[i].n += from[i].n;
        to[i].dominated += from[i].dominated;
        to[i].claimed += from[i].claimed;
    }
}

static double prec(const sim_decide *d) {
    return ratio((double)d->tp, (double)(d->tp + d->fp));
}

static void eval_row(const sim_opts *o, const sim_result *r) {
    double conc = (double)r->concurrent, msgs = (double)r->messages;
    double ordered_said = (double)(r->ordered - r->missed + r->false_verdicts);
    char sparse[32] = "-";
    if (r->vector_exact)
        snprintf(sparse, sizeof sparse, "%.1f", ratio(r->bytes_sparse, msgs));
    printf("| %llu | %u | %u | %llu | %llu | %.4f | %.3g | %.3g | %.3g | "
           "%.4f | %.4f / %.3f | %.4f / %.3f | %.4f / %.3f | %.1f | %.1f%s | "
           "%s | %.1f |\n",
           (unsigned long long)o->nodes, o->m, o->k,
           (unsigned long long)r->events, (unsigned long long)r->pairs,
           ratio(conc, (double)r->pairs),
           ratio((double)r->false_verdicts, conc), ratio(r->claim_paper, conc),
           ratio(r->claim_exact, conc),
           ratio((double)(r->ordered - r->missed), ordered_said),
           prec(&r->dec[0]), ratio((double)r->dec[0].tp, (double)r->ordered),
           prec(&r->dec[1]), ratio((double)r->dec[1].tp, (double)r->ordered),
           prec(&r->dec[2]), ratio((double)r->dec[2].tp, (double)r->ordered),
           ratio(r->bytes_bloom, msgs), ratio(r->bytes_dense, msgs),
           r->vector_exact ? "" : " (>=)", sparse, r->seconds);
}

static void svg_point(FILE *f, double x, double y, const char *shape,
                      const char *color) {
    double lx = log10(x < 1e-7 ? 1e-7 : x), ly = log10(y < 1e-7 ? 1e-7 : y);
    double px = 60 + (lx + 7) / 7 * 500, py = 420 - (ly + 7) / 7 * 380;
    if (shape[0] == 'c')
        fprintf(f, "<circle cx='%.1f' cy='%.1f' r='5' fill='%s'/>\n", px, py,
                color);
    else
        fprintf(f, "<rect x='%.1f' y='%.1f' width='9' height='9' fill='%s'/>\n",
                px - 4.5, py - 4.5, color);
}

static bool write_svg(const char *path, const sim_bin *paper,
                      const sim_bin *exact) {
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        cli_error("%s: cannot write", path);
        return false;
    }
    fputs("<svg xmlns='http://www.w3.org/2000/svg' width='600' height='480' "
          "font-family='sans-serif' font-size='12'>\n"
          "<rect width='600' height='480' fill='white'/>\n"
          "<line x1='60' y1='420' x2='560' y2='40' stroke='#bbb'/>\n"
          "<rect x='60' y='40' width='500' height='380' fill='none' "
          "stroke='black'/>\n",
          f);
    for (int d = -7; d <= 0; d++) {
        double px = 60 + (d + 7) / 7.0 * 500, py = 420 - (d + 7) / 7.0 * 380;
        fprintf(f, "<text x='%.0f' y='438' text-anchor='middle'>1e%d</text>\n",
                px, d);
        fprintf(f, "<text x='54' y='%.0f' text-anchor='end'>1e%d</text>\n",
                py + 4, d);
    }
    fputs("<text x='310' y='462' text-anchor='middle'>claimed false-positive "
          "probability (bin mean; concurrent pairs)</text>\n"
          "<text x='16' y='230' transform='rotate(-90 16 230)' "
          "text-anchor='middle'>observed: fraction reported ordered</text>\n"
          "<text x='310' y='28' text-anchor='middle'>Bloom clock calibration "
          "(amq-lab clock eval); 0 drawn at 1e-7</text>\n"
          "<circle cx='80' cy='60' r='5' fill='#c0392b'/><text x='90' y='64'>"
          "paper eq. (3)</text>\n<rect x='75.5' y='75.5' width='9' height='9' "
          "fill='#2266aa'/><text x='90' y='84'>ours (occupancy)</text>\n",
          f);
    for (int i = 0; i < SIM_BINS; i++) {
        if (paper[i].n >= 30)
            svg_point(f, paper[i].claimed / (double)paper[i].n,
                      (double)paper[i].dominated / (double)paper[i].n, "c",
                      "#c0392b");
        if (exact[i].n >= 30)
            svg_point(f, exact[i].claimed / (double)exact[i].n,
                      (double)exact[i].dominated / (double)exact[i].n, "r",
                      "#2266aa");
    }
    fputs("</svg>\n", f);
    return fclose(f) == 0;
}

static void print_calibration(const char *name, const sim_bin *b) {
    printf("\n%s: claimed bin | pairs | mean claimed | observed | "
           "observed/claimed\n",
           name);
    for (int i = 0; i < SIM_BINS; i++) {
        if (b[i].n == 0)
            continue;
        double c = b[i].claimed / (double)b[i].n;
        double ob = (double)b[i].dominated / (double)b[i].n;
        printf("  %d | %llu | %.3g | %.3g | %.3g\n", i,
               (unsigned long long)b[i].n, c, ob, ratio(ob, c));
    }
}

/* ---- throughput ------------------------------------------------------------- */

static double time_ops(amq_clock *a, amq_clock *b, bool merge, uint64_t n) {
    amq_clock_verdict v;
    uint64_t sink = 0;
    double t0 = cli_now();
    for (uint64_t i = 0; i < n; i++) {
        if (merge)
            (void)amq_clock_merge(i & 1 ? a : b, i & 1 ? b : a);
        else {
            (void)amq_clock_compare(a, b, &v);
            sink += v.order;
        }
    }
    double ns = (cli_now() - t0) * 1e9 / (double)n;
    return sink == UINT64_MAX ? 0 : ns;
}

static void bench_bloom(uint32_t m, uint32_t k, uint64_t n) {
    amq_clock *a = NULL, *b = NULL;
    if (amq_clock_new_bloom(m, k, 0, NULL, &a) != AMQ_OK ||
        amq_clock_new_bloom(m, k, 0, NULL, &b) != AMQ_OK)
        goto out;
    for (uint64_t i = 0; i < 4ULL * m; i++)
        (void)amq_clock_tick(i % 3 ? a : b, &i, sizeof i);
    double cmp = time_ops(a, b, false, n);
    uint64_t e = 0;
    double t0 = cli_now();
    for (uint64_t i = 0; i < n; i++, e++)
        (void)amq_clock_tick(a, &e, sizeof e);
    double tick = (cli_now() - t0) * 1e9 / (double)n;
    double mrg = time_ops(a, b, true, n);
    printf("| bloom m=%u k=%u | %zu | %.0f | %.0f | %.0f |\n", m, k,
           amq_clock_encoded_size(a), cmp, mrg, tick);
out:
    amq_clock_free(a);
    amq_clock_free(b);
}

static void bench_vector(amq_clock_kind kind, uint64_t nodes, uint64_t n) {
    amq_clock *a = NULL, *b = NULL;
    bool ok = amq_clock_new_vector(kind, 0, NULL, &a) == AMQ_OK &&
              amq_clock_new_vector(kind, 1, NULL, &b) == AMQ_OK;
    for (uint64_t i = 0; ok && i < nodes; i++) {
        amq_clock *p = NULL;
        ok = amq_clock_join(a, i) == AMQ_OK && amq_clock_join(b, i) == AMQ_OK;
        if (ok && kind == AMQ_CLOCK_VECTOR_SPARSE &&
            amq_clock_new_vector(kind, i, NULL, &p) == AMQ_OK) {
            for (uint64_t t = 0; t <= i % 5; t++)
                (void)amq_clock_tick(p, NULL, 0);
            ok = amq_clock_merge(i % 2 ? a : b, p) == AMQ_OK;
        }
        amq_clock_free(p);
    }
    if (ok) {
        for (uint64_t t = 0; t < 3; t++)
            (void)amq_clock_tick(a, NULL, 0);
        double cmp = time_ops(a, b, false, n);
        double mrg = time_ops(a, b, true, n);
        printf("| %s vector n=%llu | %zu | %.0f | %.0f | - |\n",
               kind == AMQ_CLOCK_VECTOR_DENSE ? "dense" : "sparse",
               (unsigned long long)nodes, amq_clock_encoded_size(a), cmp, mrg);
    }
    amq_clock_free(a);
    amq_clock_free(b);
}

static void eval_throughput(bool quick) {
    uint64_t n = quick ? 20000 : 200000;
    printf("\n| clock | bytes | compare ns | merge ns | tick ns |\n"
           "|---|---|---|---|---|\n");
    for (size_t i = 0; i < sizeof eval_shapes / sizeof eval_shapes[0]; i++)
        bench_bloom(eval_shapes[i].m, eval_shapes[i].k, n);
    bench_bloom(4096, 8, n / 4);
    bench_vector(AMQ_CLOCK_VECTOR_DENSE, 100, n);
    bench_vector(AMQ_CLOCK_VECTOR_SPARSE, 100, n);
    bench_vector(AMQ_CLOCK_VECTOR_DENSE, 10000, n / 100);
    bench_vector(AMQ_CLOCK_VECTOR_SPARSE, 10000, n / 100);
}

static int cmd_eval(int argc, char **argv) {
    sim_opts base;
    sim_defaults(&base);
    eval_extra e = {.quick = false, .svg = NULL, .max_nodes = 100000};
    int rc = parse_opts(argc, argv, &base, &e);
    if (rc >= 0)
        return rc;
    sim_bin paper[SIM_BINS] = {{0}}, exact[SIM_BINS] = {{0}};
    uint64_t missed = 0;
    printf("| N | m | k | events | pairs | concurrent | observed fp | claimed "
           "paper | claimed ours | precision (raw) | ours: prec / recall | "
           "ours+history | paper: prec / recall | B/msg bloom | B/msg dense | "
           "B/msg sparse | s |\n|---|---|---|---|---|---|---|---|---|---|---|"
           "---|---|---|---|---|---|\n");
    for (size_t i = 0; i < sizeof eval_nodes / sizeof eval_nodes[0]; i++) {
        uint64_t nodes = eval_nodes[i];
        if (nodes > e.max_nodes || (e.quick && nodes > 1000))
            continue;
        for (size_t j = 0; j < sizeof eval_shapes / sizeof eval_shapes[0];
             j++) {
            sim_opts o = base;
            o.nodes = nodes;
            o.m = eval_shapes[j].m;
            o.k = eval_shapes[j].k;
            uint64_t ev = e.quick ? 5000 : 20000;
            o.events = 3 * nodes > ev ? 3 * nodes : ev;
            o.history = nodes >= 100000 ? 4 : base.history;
            sim_result r;
            if (!sim_run(&o, &r))
                return CLI_EXIT_ERR;
            eval_row(&o, &r);
            fflush(stdout);
            bins_add(paper, r.paper);
            bins_add(exact, r.exact);
            missed += r.missed;
        }
    }
    print_calibration("paper eq. (3)", paper);
    print_calibration("ours", exact);
    eval_throughput(e.quick);
    printf("\nmissed orderings (must be 0): %llu\n",
           (unsigned long long)missed);
    if (e.svg != NULL && !write_svg(e.svg, paper, exact))
        return CLI_EXIT_ERR;
    return missed == 0 ? CLI_EXIT_OK : CLI_EXIT_ERR;
}

int lab_cmd_clock(int argc, char **argv) {
    static const cli_command subs[] = {
        {"simulate", cmd_simulate}, {"eval", cmd_eval}, {NULL, NULL}};
    return cli_dispatch("clock", subs, argc, argv);
}
