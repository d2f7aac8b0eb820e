/*
 * util.c — argument parsing, common replies, module arguments and the
 * command table (names, flags and key positions, as registered with the
 * server and as dispatched by the fuzz target).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amqr.h"

bool arg_is(const rarg *a, const char *word) {
    size_t n = strlen(word);
    if (a->n != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (tolower((unsigned char)a->p[i]) != tolower((unsigned char)word[i]))
            return false;
    return true;
}

/* Copy to a terminated buffer; numbers longer than 63 bytes are refused. */
static bool arg_cstr(const rarg *a, char *buf) {
    if (a->n == 0 || a->n > 63 || memchr(a->p, 0, a->n) != NULL)
        return false;
    memcpy(buf, a->p, a->n);
    buf[a->n] = 0;
    return !isspace((unsigned char)buf[0]);
}

bool arg_ll(const rarg *a, long long *out) {
    char buf[64], *end;
    if (!arg_cstr(a, buf))
        return false;
    errno = 0;
    long long x = strtoll(buf, &end, 10);
    if (errno != 0 || *end != 0)
        return false;
    *out = x;
    return true;
}

bool arg_u64(const rarg *a, uint64_t *out) {
    char buf[64], *end;
    if (!arg_cstr(a, buf) || !isdigit((unsigned char)buf[0]))
        return false;
    errno = 0;
    unsigned long long x = strtoull(buf, &end, 10);
    if (errno != 0 || *end != 0)
        return false;
    *out = (uint64_t)x;
    return true;
}

bool arg_double(const rarg *a, double *out) {
    char buf[64], *end;
    if (!arg_cstr(a, buf))
        return false;
    errno = 0;
    double x = strtod(buf, &end);
    if (errno == ERANGE || *end != 0 || !isfinite(x))
        return false;
    *out = x;
    return true;
}

int r_wrongtype(host *h) {
    return r_err(h, "WRONGTYPE Operation against a key holding the wrong "
                    "kind of value");
}

bool store_or_reply(host *h, rval *v) {
    if (h->ops->store(h, 1, v))
        return true;
    r_err(h, "ERR could not store the value at this key");
    return false;
}

int key_open(host *h, int argi, int fam, rval **v, const char *prefix) {
    char msg[96];
    int st = h->ops->lookup(h, argi, fam, v);
    if (st == KEY_WRONGTYPE)
        return r_wrongtype(h), -1;
    if (st == KEY_OK && (*v)->load != NULL) {
        snprintf(msg, sizeof msg, "%s the key is being loaded by LOADCHUNK",
                 prefix);
        return r_err(h, msg), -1;
    }
    return st;
}

rval *key_need(host *h, int argi, int fam, const char *prefix,
               const char *missing) {
    rval *v;
    int st = key_open(h, argi, fam, &v, prefix);
    if (st == KEY_EMPTY)
        r_err(h, missing);
    return st == KEY_OK ? v : NULL;
}

int reply_exists(host *h, int fam, bool single,
                 bool (*test)(const rval *v, const rarg *item)) {
    rval *v;
    if (single ? h->argc != 3 : h->argc < 3)
        return r_arity(h);
    if (key_open(h, 1, fam, &v, "ERR") < 0)
        return 0;
    if (!single)
        h->ops->r_arr(h, h->argc - 2);
    for (int i = 2; i < h->argc; i++)
        h->ops->r_int(h, v != NULL && test(v, &h->argv[i]));
    return 0;
}

void reply_fields(host *h, const char *const *names, const long long *vals,
                  int n, int only, int null_at) {
    if (only >= 0)
        h->ops->r_arr(h, 1);
    else
        h->ops->r_map(h, n);
    for (int i = 0; i < n; i++) {
        if (only >= 0 && i != only)
            continue;
        if (only < 0)
            h->ops->r_simple(h, names[i]);
        if (i == null_at)
            h->ops->r_null(h);
        else
            h->ops->r_int(h, vals[i]);
    }
}

int r_arity(host *h) {
    return r_err(h, "ERR wrong number of arguments for this command");
}

int r_status(host *h, const char *what, amq_status st) {
    char msg[160];
    snprintf(msg, sizeof msg, "ERR %s: %s", what, amq_strerror(st));
    return r_err(h, msg);
}

/* ---- module arguments ----------------------------------------------------- */

module_cfg g_cfg = {.bf_error = 0.01,
                    .bf_capacity = 100,
                    .bf_expansion = 2,
                    .cf_capacity = 1024,
                    .cf_max_links = CF_MAX_LINKS};

bool cfg_parse(const rarg *argv, int argc, char *err, size_t cap) {
    module_cfg c = g_cfg;
    for (int i = 0; i < argc; i += 2) {
        long long n = 0;
        double d = 0;
        if (i + 1 >= argc) {
            snprintf(err, cap, "module argument %d has no value", i + 1);
            return false;
        }
        const rarg *val = &argv[i + 1];
        if (arg_is(&argv[i], "ERROR_RATE") && arg_double(val, &d) && d > 0 &&
            d < 1)
            c.bf_error = d;
        else if (arg_is(&argv[i], "INITIAL_SIZE") && arg_ll(val, &n) && n > 0)
            c.bf_capacity = (uint64_t)n;
        else if (arg_is(&argv[i], "CF_MAX_EXPANSIONS") && arg_ll(val, &n) &&
                 n >= 1 && n <= CF_MAX_LINKS)
            c.cf_max_links = (unsigned)n;
        else {
            snprintf(err, cap,
                     "bad module argument %d (ERROR_RATE (0,1), "
                     "INITIAL_SIZE >= 1, CF_MAX_EXPANSIONS 1..%d)",
                     i + 1, CF_MAX_LINKS);
            return false;
        }
    }
    g_cfg = c;
    return true;
}

/* ---- the command table ---------------------------------------------------------- */

#define W "write deny-oom"
#define WNOOM "write"
#define R "readonly fast"

const cmd_def g_cmds[] = {
    {"BF.RESERVE", bf_reserve, W, 1, 1, 1, NULL},
    {"BF.ADD", bf_add, W, 1, 1, 1, NULL},
    {"BF.MADD", bf_madd, W, 1, 1, 1, NULL},
    {"BF.INSERT", bf_insert, W, 1, 1, 1, NULL},
    {"BF.EXISTS", bf_exists, R, 1, 1, 1, NULL},
    {"BF.MEXISTS", bf_mexists, R, 1, 1, 1, NULL},
    {"BF.INFO", bf_info, R, 1, 1, 1, NULL},
    {"BF.CARD", bf_card, R, 1, 1, 1, NULL},
    {"BF.SCANDUMP", bf_scandump, "readonly", 1, 1, 1, NULL},
    {"BF.LOADCHUNK", bf_loadchunk, W, 1, 1, 1, NULL},
    {"CF.RESERVE", cf_reserve, W, 1, 1, 1, NULL},
    {"CF.ADD", cf_add, W, 1, 1, 1, NULL},
    {"CF.ADDNX", cf_addnx, W, 1, 1, 1, NULL},
    {"CF.INSERT", cf_insert, W, 1, 1, 1, NULL},
    {"CF.INSERTNX", cf_insertnx, W, 1, 1, 1, NULL},
    {"CF.EXISTS", cf_exists, R, 1, 1, 1, NULL},
    {"CF.MEXISTS", cf_mexists, R, 1, 1, 1, NULL},
    {"CF.DEL", cf_del, WNOOM, 1, 1, 1, NULL},
    {"CF.COUNT", cf_count, R, 1, 1, 1, NULL},
    {"CF.INFO", cf_info, R, 1, 1, 1, NULL},
    {"CF.SCANDUMP", cf_scandump, "readonly", 1, 1, 1, NULL},
    {"CF.LOADCHUNK", cf_loadchunk, W, 1, 1, 1, NULL},
    {"CMS.INITBYDIM", cms_initbydim, W, 1, 1, 1, NULL},
    {"CMS.INITBYPROB", cms_initbyprob, W, 1, 1, 1, NULL},
    {"CMS.INCRBY", cms_incrby, W, 1, 1, 1, NULL},
    {"CMS.QUERY", cms_query, R, 1, 1, 1, NULL},
    {"CMS.MERGE", cms_merge, W, 0, 0, 0, cms_merge_keys},
    {"CMS.INFO", cms_info, R, 1, 1, 1, NULL},
    {"TOPK.RESERVE", topk_reserve, W, 1, 1, 1, NULL},
    {"TOPK.ADD", topk_add, W, 1, 1, 1, NULL},
    {"TOPK.INCRBY", topk_incrby, W, 1, 1, 1, NULL},
    {"TOPK.QUERY", topk_query, R, 1, 1, 1, NULL},
    {"TOPK.COUNT", topk_count, R, 1, 1, 1, NULL},
    {"TOPK.LIST", topk_list, "readonly", 1, 1, 1, NULL},
    {"TOPK.INFO", topk_info, R, 1, 1, 1, NULL},
    {"AMQ.RESERVE", amq_reserve, W, 1, 1, 1, NULL},
    {"AMQ.BUILD", amq_build, W, 1, 1, 1, NULL},
    {"AMQ.ADD", amq_add, W, 1, 1, 1, NULL},
    {"AMQ.MADD", amq_madd, W, 1, 1, 1, NULL},
    {"AMQ.EXISTS", amq_exists, R, 1, 1, 1, NULL},
    {"AMQ.MEXISTS", amq_mexists, R, 1, 1, 1, NULL},
    {"AMQ.DEL", amq_del, WNOOM, 1, 1, 1, NULL},
    {"AMQ.CARD", amq_card, R, 1, 1, 1, NULL},
    {"AMQ.INFO", amq_info, R, 1, 1, 1, NULL},
    {"AMQ.MERGE", amq_merge, W, 1, -1, 1, NULL},
    {"AMQ.DUMP", amq_dump, "readonly", 1, 1, 1, NULL},
    {"AMQ.LOAD", amq_load, W, 1, 1, 1, NULL},
    {"AMQ.SCANDUMP", amq_scandump, "readonly", 1, 1, 1, NULL},
    {"AMQ.LOADCHUNK", amq_loadchunk, W, 1, 1, 1, NULL},
    {"AMQ.TYPES", amq_types, "readonly fast", 0, 0, 0, NULL},
    {"AMQ.MAP.RESERVE", amq_map_reserve, W, 1, 1, 1, NULL},
    {"AMQ.MAP.BUILD", amq_map_build, W, 1, 1, 1, NULL},
    {"AMQ.MAP.PUT", amq_map_put, W, 1, 1, 1, NULL},
    {"AMQ.MAP.GET", amq_map_get, R, 1, 1, 1, NULL},
    {"AMQ.MAP.MGET", amq_map_mget, R, 1, 1, 1, NULL},
    {"AMQ.MAP.GETALL", amq_map_getall, R, 1, 1, 1, NULL},
    {"AMQ.MAP.DEL", amq_map_del, WNOOM, 1, 1, 1, NULL},
    {"AMQ.MAP.MERGE", amq_map_merge, W, 1, -1, 1, NULL},
    {"AMQ.MAP.INFO", amq_map_info, R, 1, 1, 1, NULL},
    {"AMQ.CASCADE.LOAD", casc_load, W, 1, 1, 1, NULL},
    {"AMQ.CASCADE.EXISTS", casc_exists, R, 1, 1, 1, NULL},
    {"AMQ.CASCADE.MEXISTS", casc_mexists, R, 1, 1, 1, NULL},
    {"AMQ.CASCADE.ADD", casc_add, W, 1, 1, 1, NULL},
    {"AMQ.CASCADE.DEL", casc_del, WNOOM, 1, 1, 1, NULL},
    {"AMQ.CASCADE.INFO", casc_info, R, 1, 1, 1, NULL},
    {"AMQ.CASCADE.DUMP", casc_dump, "readonly", 1, 1, 1, NULL},
};
const size_t g_ncmds = sizeof g_cmds / sizeof g_cmds[0];

const cmd_def *cmd_find(const char *name, size_t n) {
    rarg a = {name, n};
    for (size_t i = 0; i < g_ncmds; i++)
        if (arg_is(&a, g_cmds[i].name))
            return &g_cmds[i];
    return NULL;
}
