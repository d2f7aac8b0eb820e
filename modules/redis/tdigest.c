/*
 * tdigest.c — TDIGEST.*: RedisBloom 2.4's t-digest commands on amq's
 * amq_tdigest (src/sketch/tdigest.c, the merging digest).
 *
 * Arguments, defaults (compression 100), replies and error strings are
 * RedisBloom 2.4's: values are doubles ("inf" accepted where RedisBloom
 * takes it, NaN refused), RANK and REVRANK answer integers (-1 and n
 * outside [min, max], -2 for an empty sketch; RANK rounds a half down,
 * REVRANK to nearest, as RedisBloom), BYRANK and BYREVRANK answer
 * doubles (min or max at rank 0, +inf or -inf at rank n or more, nan for
 * an empty sketch), INFO a flat array of nine fields in RESP2 and RESP3.
 * MERGE dest numkeys src... [COMPRESSION c] [OVERRIDE] builds the result
 * aside with dest's compression (or, for a new dest or with OVERRIDE, the
 * largest of the sources'), then replaces dest.
 *
 * Where the estimates differ from RedisBloom's: both are merging digests
 * under the same scale function, but merges and interpolation are amq's
 * own, so quantiles of large streams agree within the digests' accuracy,
 * not to the last digit (docs/redis.md). The digest's state depends on the
 * writes only (queries read a merged copy), so a replica, which runs the
 * writes, holds the primary's bytes.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "amqr.h"

#define TD_ERR_MISSING "ERR T-Digest: key does not exist"

static size_t f_size(const rval *v, unsigned i) {
    (void)i;
    return amq_tdigest_serialized_size(v->u.td.t);
}
static amq_status f_save(const rval *v, unsigned i, uint8_t *b, size_t cap) {
    (void)i;
    return amq_tdigest_save(v->u.td.t, b, cap, NULL);
}
static bool f_load(rval *v, unsigned i, unsigned nf, const uint8_t *b,
                   size_t len, char *err, size_t cap) {
    amq_diag diag;
    amq_options o = rv_options(v);
    (void)i;
    if (!rv_one_frame(nf, "TDIGEST", err, cap))
        return false;
    memset(&diag, 0, sizeof diag);
    amq_status st = amq_tdigest_load(b, len, &o, &v->u.td.t, &diag);
    return st == AMQ_OK || rv_frame_refused(err, cap, st, &diag);
}
static void destroy(rval *v) { amq_tdigest_free(v->u.td.t); }

const fam_ops tdigest_ops = {
    "tdigest", "amq-tdigs", "AMQ.LOADCHUNK", 0,      NULL,    NULL, NULL,
    NULL,      f_size,      f_save,          f_load, destroy, NULL};

/* ---- arguments ------------------------------------------------------------------ */

/* A double as Redis reads one: the whole argument, infinities allowed,
 * NaN refused. */
static bool arg_real(const rarg *a, double *out) {
    char buf[64], *end;
    if (a->n == 0 || a->n >= sizeof buf)
        return false;
    memcpy(buf, a->p, a->n);
    buf[a->n] = 0;
    if (memchr(buf, 0, a->n) != NULL || buf[0] == ' ')
        return false;
    errno = 0;
    double x = strtod(buf, &end);
    if (*end != 0 || isnan(x) || (errno == ERANGE && isfinite(x) && x != 0))
        return false;
    *out = x;
    return true;
}

/* Every value argument argv[2..] a double, or false after replying err. */
static bool reals_or_reply(host *h, const char *err) {
    double x;
    for (int i = 2; i < h->argc; i++)
        if (!arg_real(&h->argv[i], &x))
            return r_err(h, err), false;
    return true;
}

/* RedisBloom's rounding of a rank: halves go down (2.5 -> 2). */
static double half_round_down(double x) {
    double ip, fp = modf(x, &ip);
    if (fabs(fp) <= 0.5)
        return ip;
    return ip >= 0.0 ? ip + 1.0 : ip - 1.0;
}

/* ---- keys --------------------------------------------------------------------- */

static rval *need(host *h, int argi) {
    return key_need(h, argi, FAM_TDIGEST, "ERR T-Digest:", TD_ERR_MISSING);
}

/* Bytes a digest of this compression holds (its two arrays dominate). */
static double digest_bytes(double compression) {
    return (2.0 * compression + 16 + 5.0 * compression + 16) * 16 * 2 + 512;
}

/* A new value holding an empty digest; NULL after a reply. */
static rval *new_value(host *h, long long compression) {
    if (compression > (long long)AMQ_TDIGEST_MAX_COMPRESSION) {
        r_err(h, "ERR T-Digest: compression above 100000 is not supported");
        return NULL;
    }
    if (!h->ops->budget(h, digest_bytes((double)compression))) {
        r_err(h, "ERR T-Digest: the sketch is larger than the memory limit "
                 "allows");
        return NULL;
    }
    rval *v = rv_new(FAM_TDIGEST);
    if (v == NULL) {
        r_err(h, "ERR T-Digest: allocation failed");
        return NULL;
    }
    amq_options o = rv_options(v);
    if (amq_tdigest_new((double)compression, &o, &v->u.td.t) != AMQ_OK) {
        rv_free(v);
        r_err(h, "ERR T-Digest: allocation failed");
        return NULL;
    }
    return v;
}

static bool parse_compression(host *h, const rarg *a, long long *out) {
    if (!arg_ll(a, out)) {
        r_err(h, "ERR T-Digest: error parsing compression parameter");
        return false;
    }
    if (*out <= 0) {
        r_err(h, "ERR T-Digest: compression parameter needs to be a positive "
                 "integer");
        return false;
    }
    return true;
}

/* ---- create, reset, add --------------------------------------------------------- */

int tdigest_create(host *h) {
    rval *v;
    long long compression = (long long)AMQ_TDIGEST_DEFAULT_COMPRESSION;
    if (h->argc != 2 && h->argc != 4)
        return r_arity(h);
    int st = key_open(h, 1, FAM_TDIGEST, &v, "ERR T-Digest:");
    if (st < 0)
        return 0;
    if (st == KEY_OK)
        return r_err(h, "ERR T-Digest: key already exists");
    if (h->argc == 4) {
        if (!arg_is(&h->argv[2], "COMPRESSION"))
            return r_err(h, "ERR T-Digest: wrong keyword");
        if (!parse_compression(h, &h->argv[3], &compression))
            return 0;
    }
    v = new_value(h, compression);
    if (v == NULL || !store_or_reply(h, v))
        return 0;
    h->ops->replicate_verbatim(h);
    h->ops->notify(h, "tdigest.create", 1);
    r_ok(h);
    return 0;
}

int tdigest_reset(host *h) {
    if (h->argc != 2)
        return r_arity(h);
    rval *v = need(h, 1);
    if (v == NULL)
        return 0;
    amq_tdigest_reset(v->u.td.t);
    h->ops->replicate_verbatim(h);
    h->ops->notify(h, "tdigest.reset", 1);
    r_ok(h);
    return 0;
}

int tdigest_add(host *h) {
    double x;
    if (h->argc < 3)
        return r_arity(h);
    rval *v = need(h, 1);
    if (v == NULL)
        return 0;
    for (int i = 2; i < h->argc; i++) {
        if (!arg_real(&h->argv[i], &x))
            return r_err(h, "ERR T-Digest: error parsing val parameter");
        if (!isfinite(x))
            return r_err(h, "ERR T-Digest: val parameter needs to be a "
                            "finite number");
    }
    amq_tdigest *t = v->u.td.t;
    uint64_t n = (uint64_t)(h->argc - 2);
    if (n >= (UINT64_C(1) << 53) - amq_tdigest_count(t))
        return r_err(h, "ERR T-Digest: overflow detected");
    for (int i = 2; i < h->argc; i++) {
        arg_real(&h->argv[i], &x);
        (void)amq_tdigest_add(t, x, 1); /* checked above: cannot fail */
    }
    h->ops->replicate_verbatim(h);
    h->ops->notify(h, "tdigest.add", 1);
    r_ok(h);
    return 0;
}

/* ---- merge ---------------------------------------------------------------------- */

/* The index of word among argv[from, argc), or -1. */
static int find_word(const host *h, int from, const char *word) {
    for (int i = from; i < h->argc; i++)
        if (arg_is(&h->argv[i], word))
            return i;
    return -1;
}

int tdigest_merge(host *h) {
    rval *dst = NULL, *v;
    long long numkeys, compression = 0;
    if (h->argc < 4)
        return r_arity(h);
    int st = key_open(h, 1, FAM_TDIGEST, &dst, "ERR T-Digest:");
    if (st < 0)
        return 0;
    if (!arg_ll(&h->argv[2], &numkeys))
        return r_err(h, "ERR T-Digest: error parsing numkeys");
    if (numkeys <= 0)
        return r_err(h, "ERR T-Digest: numkeys needs to be a positive integer");
    if (numkeys > h->argc - 3)
        return r_arity(h);
    const int rest = 3 + (int)numkeys;
    bool by_max = dst == NULL, override = false;
    if (dst != NULL)
        compression = (long long)amq_tdigest_compression(dst->u.td.t);
    if (rest < h->argc) {
        int c = find_word(h, rest, "COMPRESSION");
        int o = find_word(h, rest, "OVERRIDE");
        if (c < 0 && o < 0)
            return r_err(h, "ERR T-Digest: wrong keyword");
        if (c >= 0) {
            if (c + 1 >= h->argc)
                return r_arity(h);
            if (!parse_compression(h, &h->argv[c + 1], &compression))
                return 0;
            by_max = false;
        }
        if (o >= 0) {
            override = true;
            if (c < 0) {
                by_max = true;
                compression = 0;
            }
        }
    }
    /* every source first: missing or of another type, nothing changes */
    for (int i = 3; i < rest; i++) {
        st = key_open(h, i, FAM_TDIGEST, &v, "ERR T-Digest:");
        if (st < 0)
            return 0;
        if (st == KEY_EMPTY)
            return r_err(h, TD_ERR_MISSING);
        double c = amq_tdigest_compression(v->u.td.t);
        if (by_max && c > (double)compression)
            compression = (long long)c;
    }
    rval *out = new_value(h, compression);
    if (out == NULL)
        return 0;
    amq_status ms = AMQ_OK;
    if (dst != NULL && !override)
        ms = amq_tdigest_merge(out->u.td.t, dst->u.td.t);
    for (int i = 3; i < rest && ms == AMQ_OK; i++) {
        key_open(h, i, FAM_TDIGEST, &v, "ERR T-Digest:");
        ms = amq_tdigest_merge(out->u.td.t, v->u.td.t);
    }
    if (ms != AMQ_OK) {
        rv_free(out);
        return r_err(h, "ERR T-Digest: overflow detected");
    }
    if (dst != NULL) /* a migrated destination keeps its type name */
        out->rb_name = dst->rb_name;
    if (!store_or_reply(h, out))
        return 0;
    h->ops->replicate_verbatim(h);
    h->ops->notify(h, "tdigest.merge", 1);
    r_ok(h);
    return 0;
}

/* ---- queries -------------------------------------------------------------------- */

int tdigest_min(host *h) {
    if (h->argc != 2)
        return r_arity(h);
    rval *v = need(h, 1);
    if (v != NULL)
        h->ops->r_double(h, amq_tdigest_min(v->u.td.t));
    return 0;
}

int tdigest_max(host *h) {
    if (h->argc != 2)
        return r_arity(h);
    rval *v = need(h, 1);
    if (v != NULL)
        h->ops->r_double(h, amq_tdigest_max(v->u.td.t));
    return 0;
}

int tdigest_quantile(host *h) {
    double q;
    if (h->argc < 3)
        return r_arity(h);
    rval *v = need(h, 1);
    if (v == NULL)
        return 0;
    if (!reals_or_reply(h, "ERR T-Digest: error parsing quantile"))
        return 0;
    for (int i = 2; i < h->argc; i++) {
        arg_real(&h->argv[i], &q);
        if (q < 0.0 || q > 1.0)
            return r_err(h, "ERR T-Digest: quantile should be in [0,1]");
    }
    h->ops->r_arr(h, h->argc - 2);
    for (int i = 2; i < h->argc; i++) {
        arg_real(&h->argv[i], &q);
        h->ops->r_double(h, amq_tdigest_quantile(v->u.td.t, q));
    }
    return 0;
}

int tdigest_cdf(host *h) {
    double x;
    if (h->argc < 3)
        return r_arity(h);
    rval *v = need(h, 1);
    if (v == NULL)
        return 0;
    if (!reals_or_reply(h, "ERR T-Digest: error parsing cdf"))
        return 0;
    h->ops->r_arr(h, h->argc - 2);
    for (int i = 2; i < h->argc; i++) {
        arg_real(&h->argv[i], &x);
        h->ops->r_double(h, amq_tdigest_cdf(v->u.td.t, x));
    }
    return 0;
}

int tdigest_trimmed_mean(host *h) {
    double lo, hi;
    if (h->argc != 4)
        return r_arity(h);
    rval *v = need(h, 1);
    if (v == NULL)
        return 0;
    if (!arg_real(&h->argv[2], &lo))
        return r_err(h, "ERR T-Digest: error parsing low_cut_percentile");
    if (!arg_real(&h->argv[3], &hi))
        return r_err(h, "ERR T-Digest: error parsing high_cut_percentile");
    if (lo < 0.0 || lo > 1.0 || hi < 0.0 || hi > 1.0)
        return r_err(h, "ERR T-Digest: low_cut_percentile and "
                        "high_cut_percentile should be in [0,1]");
    if (lo >= hi)
        return r_err(h, "ERR T-Digest: low_cut_percentile should be lower "
                        "than high_cut_percentile");
    h->ops->r_double(h, amq_tdigest_trimmed_mean(v->u.td.t, lo, hi));
    return 0;
}

static int rank_as(host *h, bool reverse) {
    double x;
    if (h->argc < 3)
        return r_arity(h);
    rval *v = need(h, 1);
    if (v == NULL)
        return 0;
    if (!reals_or_reply(h, "ERR T-Digest: error parsing value"))
        return 0;
    const amq_tdigest *t = v->u.td.t;
    const double n = (double)amq_tdigest_count(t);
    h->ops->r_arr(h, h->argc - 2);
    for (int i = 2; i < h->argc; i++) {
        double r;
        arg_real(&h->argv[i], &x);
        if (n == 0)
            r = -2;
        else if (x < amq_tdigest_min(t))
            r = reverse ? n : -1;
        else if (x > amq_tdigest_max(t))
            r = reverse ? -1 : n;
        else if (reverse)
            r = round(n - round(amq_tdigest_rank(t, x)));
        else
            r = half_round_down(amq_tdigest_rank(t, x));
        h->ops->r_int(h, (long long)r);
    }
    return 0;
}

int tdigest_rank(host *h) { return rank_as(h, false); }
int tdigest_revrank(host *h) { return rank_as(h, true); }

static int by_rank_as(host *h, bool reverse) {
    long long r;
    if (h->argc < 3)
        return r_arity(h);
    rval *v = need(h, 1);
    if (v == NULL)
        return 0;
    for (int i = 2; i < h->argc; i++) {
        if (!arg_ll(&h->argv[i], &r))
            return r_err(h, "ERR T-Digest: error parsing rank");
        if (r < 0)
            return r_err(h, "ERR T-Digest: rank needs to be non negative");
    }
    const amq_tdigest *t = v->u.td.t;
    const double n = (double)amq_tdigest_count(t);
    h->ops->r_arr(h, h->argc - 2);
    for (int i = 2; i < h->argc; i++) {
        double x;
        arg_ll(&h->argv[i], &r);
        if (n == 0)
            x = NAN;
        else if (r == 0)
            x = reverse ? amq_tdigest_max(t) : amq_tdigest_min(t);
        else if ((double)r >= n)
            x = reverse ? -INFINITY : INFINITY;
        else
            x = amq_tdigest_value_at(t,
                                     reverse ? n - (double)r - 1 : (double)r);
        h->ops->r_double(h, x);
    }
    return 0;
}

int tdigest_byrank(host *h) { return by_rank_as(h, false); }
int tdigest_byrevrank(host *h) { return by_rank_as(h, true); }

/* Nine fields as a flat array, in RESP3 too (as RedisBloom 2.4). */
int tdigest_info(host *h) {
    if (h->argc != 2)
        return r_arity(h);
    rval *v = need(h, 1);
    if (v == NULL)
        return 0;
    amq_tdigest_info in;
    amq_tdigest_get_info(v->u.td.t, &in);
    const char *names[] = {
        "Compression",    "Capacity",           "Merged nodes",
        "Unmerged nodes", "Merged weight",      "Unmerged weight",
        "Observations",   "Total compressions", "Memory usage"};
    const long long vals[] = {
        (long long)in.compression,
        (long long)in.capacity,
        (long long)in.merged_nodes,
        (long long)in.unmerged_nodes,
        (long long)in.merged_weight,
        (long long)in.unmerged_weight,
        (long long)(in.merged_weight + in.unmerged_weight),
        (long long)in.merges,
        (long long)rv_memory(v)};
    h->ops->r_arr(h, 18);
    for (int i = 0; i < 9; i++) {
        h->ops->r_simple(h, names[i]);
        h->ops->r_int(h, vals[i]);
    }
    return 0;
}
