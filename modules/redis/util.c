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

int key_open_read(host *h, int argi, int fam, rval **v) {
    if (!strict(h) && h->ops->lookup(h, argi, fam, v) == KEY_WRONGTYPE) {
        *v = NULL;
        return KEY_EMPTY;
    }
    return key_open(h, argi, fam, v, "ERR");
}

int numkeys_keys(const rarg *argv, int argc, int *pos, int cap) {
    long long n;
    int k = 0;
    if (argc < 2 || cap < 1)
        return 0;
    pos[k++] = 1;
    if (argc < 4 || !arg_ll(&argv[2], &n) || n < 1)
        return k;
    for (long long i = 0; i < n && 3 + i < argc && k < cap; i++)
        pos[k++] = (int)(3 + i);
    return k;
}

void r_info(host *h, long n) {
    if (strict(h))
        h->ops->r_map(h, n);
    else
        h->ops->r_arr(h, 2 * n);
}

int reply_exists(host *h, int fam, bool single,
                 bool (*test)(const rval *v, const rarg *item)) {
    rval *v;
    if (single ? h->argc != 3 : h->argc < 3)
        return r_arity(h);
    bool lenient = fam == FAM_BF || fam == FAM_CF;
    if ((lenient ? key_open_read(h, 1, fam, &v)
                 : key_open(h, 1, fam, &v, "ERR")) < 0)
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
        r_info(h, n);
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

void r_item(host *h, const void *p, size_t n) {
    char buf[256];
    const unsigned char *b = p;
    bool simple = n < sizeof buf;
    for (size_t i = 0; simple && i < n; i++)
        simple = b[i] >= 0x20 && b[i] != 0x7f;
    if (!simple) {
        h->ops->r_str(h, p, n);
        return;
    }
    memcpy(buf, p, n);
    buf[n] = '\0';
    h->ops->r_simple(h, buf);
}

/* The server's own wording, the command's name in lower case, which is
 * what RedisBloom's replies carry too. */
int r_arity(host *h) {
    char name[64];
    size_t n = 0;
    if (h->argc > 0)
        for (; n < h->argv[0].n && n + 1 < sizeof name; n++) {
            char c = h->argv[0].p[n];
            name[n] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
        }
    name[n] = '\0';
    char msg[128];
    snprintf(msg, sizeof msg, "ERR wrong number of arguments for '%s' command",
             name);
    return r_err(h, msg);
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
        else if (arg_is(&argv[i], "STRICT") && arg_ll(val, &n) &&
                 (n == 0 || n == 1))
            c.strict = n == 1;
        else {
            snprintf(err, cap,
                     "bad module argument %d (ERROR_RATE (0,1), "
                     "INITIAL_SIZE >= 1, CF_MAX_EXPANSIONS 1..%d, STRICT 0|1)",
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
#define AMQ_REDIS_CMD(name, fn, flags, first, last, step, keys)                \
    {name, fn, flags, first, last, step, keys},
#include "commands.def"
#undef AMQ_REDIS_CMD
};
const size_t g_ncmds = sizeof g_cmds / sizeof g_cmds[0];

const cmd_def *cmd_find(const char *name, size_t n) {
    rarg a = {name, n};
    for (size_t i = 0; i < g_ncmds; i++)
        if (arg_is(&a, g_cmds[i].name))
            return &g_cmds[i];
    return NULL;
}
