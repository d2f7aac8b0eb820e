/*
 * module.c — amq-redis.so: the host (amqr.h) over the real server, the
 * six data types and RedisModule_OnLoad.
 *
 *   RedisModule_OnLoad ─► rm_bind (rm.h) ─► data types amq-bloom, amq-cuckf,
 *                         amq-cmsk_, amq-topkh, amq-filtr, amq-cascd
 *                         ─► commands
 *   a command call ─► entry_<handler> ─► run(): argv as byte ranges, a host
 *                     whose callbacks open keys, reply, replicate, notify
 *                     ─► g_cmds[i].fn ─► close the keys it opened
 *
 * Persistence: every type saves its value as one RDB string, the blob of
 * value.c (amq frames inside a checksummed header); a value that does not
 * decode is refused with a log line (rdb_load returns NULL; with
 * REDISMODULE_OPTIONS_HANDLE_IO_ERRORS a short read is an error, not a
 * panic), so RESTORE of a corrupt payload fails and the server runs on.
 * The AOF rewrite emits the blob as LOADCHUNK commands of at most 16 MiB.
 * DUMP/RESTORE and replication's full sync go through the same RDB
 * callbacks; COPY clones through the blob; DEBUG DIGEST hashes the blob;
 * MEMORY USAGE is the value's counted allocations.
 */
#include <stdio.h>
#include <string.h>

#include "amqr.h"
#include "rm.h"

#define ENCVER 1
#define MAX_OPEN 8
#define MAX_STACK_ARGS 64

static RedisModuleType *g_types[FAM_MAX + 1];
/* RedisBloom's own type names, for keys in its layouts (rb.c). */
static RedisModuleType *g_rbtypes[FAM_MAX + 1];

/* ---- the host ------------------------------------------------------------- */

typedef struct rhost {
    host h;
    RedisModuleCtx *ctx;
    RedisModuleString **argv;
    int mode;
    RedisModuleKey *keys[MAX_OPEN];
    int keyarg[MAX_OPEN];
    int nkeys;
} rhost;

static RedisModuleKey *key_at(rhost *r, int argi) {
    for (int i = 0; i < r->nkeys; i++)
        if (r->keyarg[i] == argi)
            return r->keys[i];
    if (r->nkeys == MAX_OPEN)
        return NULL;
    RedisModuleKey *k = RedisModule_OpenKey(r->ctx, r->argv[argi], r->mode);
    r->keys[r->nkeys] = k;
    r->keyarg[r->nkeys++] = argi;
    return k;
}

static int fam_of_type(RedisModuleType *t) {
    for (int f = 1; f <= FAM_MAX; f++)
        if (g_types[f] == t || (g_rbtypes[f] != NULL && g_rbtypes[f] == t))
            return f;
    return 0;
}

static int h_lookup(host *h, int argi, int fam, rval **out) {
    RedisModuleKey *k = key_at((rhost *)h, argi);
    *out = NULL;
    if (k == NULL || RedisModule_KeyType(k) == REDISMODULE_KEYTYPE_EMPTY)
        return KEY_EMPTY;
    if (RedisModule_KeyType(k) != REDISMODULE_KEYTYPE_MODULE)
        return KEY_WRONGTYPE;
    int f = fam_of_type(RedisModule_ModuleTypeGetType(k));
    if (f == 0 || (fam != 0 && f != fam))
        return KEY_WRONGTYPE;
    *out = RedisModule_ModuleTypeGetValue(k);
    return KEY_OK;
}

static bool h_store(host *h, int argi, rval *v) {
    RedisModuleKey *k = key_at((rhost *)h, argi);
    RedisModuleType *t =
        v->rb != NULL || v->rb_name ? g_rbtypes[v->fam] : g_types[v->fam];
    if (k != NULL && RedisModule_ModuleTypeSetValue(k, t, v) == REDISMODULE_OK)
        return true;
    rv_free(v);
    return false;
}

static void h_remove(host *h, int argi) {
    RedisModuleKey *k = key_at((rhost *)h, argi);
    if (k != NULL)
        RedisModule_DeleteKey(k);
}

#define CTX(h) (((rhost *)(h))->ctx)
static void h_int(host *h, long long x) {
    RedisModule_ReplyWithLongLong(CTX(h), x);
}
static void h_err(host *h, const char *m) {
    RedisModule_ReplyWithError(CTX(h), m);
}
static void h_simple(host *h, const char *m) {
    RedisModule_ReplyWithSimpleString(CTX(h), m);
}
static void h_arr(host *h, long n) { RedisModule_ReplyWithArray(CTX(h), n); }
static void h_map(host *h, long n) { RedisModule_ReplyWithMap(CTX(h), n); }
static void h_null(host *h) { RedisModule_ReplyWithNull(CTX(h)); }
static void h_str(host *h, const char *s, size_t n) {
    RedisModule_ReplyWithStringBuffer(CTX(h), s, n);
}
static void h_double(host *h, double x) {
    RedisModule_ReplyWithDouble(CTX(h), x);
}
static void h_verbatim(host *h) { RedisModule_ReplicateVerbatim(CTX(h)); }

static void h_replicate(host *h, const char *cmd, const rarg *a, int n) {
    RedisModuleString *stack[16], **s = stack;
    if (n > 16 && (s = rv_sys_alloc((size_t)n * sizeof *s)) == NULL)
        return;
    for (int i = 0; i < n; i++)
        s[i] = RedisModule_CreateString(CTX(h), a[i].p, a[i].n);
    RedisModule_Replicate(CTX(h), cmd, "v", s, (size_t)n);
    for (int i = 0; i < n; i++)
        RedisModule_FreeString(CTX(h), s[i]);
    if (s != stack)
        rv_sys_free(s);
}

static void h_notify(host *h, const char *event, int argi) {
    RedisModule_NotifyKeyspaceEvent(CTX(h), REDISMODULE_NOTIFY_GENERIC, event,
                                    ((rhost *)h)->argv[argi]);
}

static void h_notify_module(host *h, const char *event, int argi) {
    RedisModule_NotifyKeyspaceEvent(CTX(h), REDISMODULE_NOTIFY_MODULE, event,
                                    ((rhost *)h)->argv[argi]);
}

/* Refuse what would pass maxmemory, half the machine's memory, or 16 TiB.
 * Below 1 MiB the server's own deny-oom check (before the command runs) is
 * enough, and the INFO section is not worth building. */
static bool h_budget(host *h, double bytes) {
    int err = 0;
    if (bytes > (double)(1ull << 44))
        return false;
    if (bytes < (double)(1u << 20))
        return true;
    RedisModuleServerInfoData *inf =
        RedisModule_GetServerInfo(CTX(h), "memory");
    if (inf == NULL)
        return true;
    double max =
        (double)RedisModule_ServerInfoGetFieldUnsigned(inf, "maxmemory", &err);
    double used = (double)RedisModule_ServerInfoGetFieldUnsigned(
        inf, "used_memory", &err);
    double sys = (double)RedisModule_ServerInfoGetFieldUnsigned(
        inf, "total_system_memory", &err);
    RedisModule_FreeServerInfo(CTX(h), inf);
    if (max > 0 && used + bytes > max)
        return false;
    return !(sys > 0 && bytes > sys / 2);
}

static uint64_t h_now_ms(host *h) {
    (void)h;
    long long t = RedisModule_Milliseconds();
    return t > 0 ? (uint64_t)t : 0;
}

static const host_ops redis_host = {
    h_lookup,    h_store,  h_remove,        h_int,    h_err,    h_simple,
    h_arr,       h_map,    h_null,          h_str,    h_double, h_verbatim,
    h_replicate, h_notify, h_notify_module, h_budget, h_now_ms};

/* ---- command dispatch ---------------------------------------------------------- */

static int keys_request(RedisModuleCtx *ctx, const cmd_def *c, const rarg *a,
                        int argc) {
    int pos[MAX_STACK_ARGS];
    int n = c->keys(a, argc, pos, MAX_STACK_ARGS);
    for (int i = 0; i < n; i++)
        RedisModule_KeyAtPos(ctx, pos[i]);
    return REDISMODULE_OK;
}

static bool budget_gate(void *h, double bytes) { return h_budget(h, bytes); }

static int run(RedisModuleCtx *ctx, RedisModuleString **argv, int argc,
               size_t which) {
    const cmd_def *c = &g_cmds[which];
    rarg stack[MAX_STACK_ARGS], *a = stack;
    rhost r;
    if (argc > MAX_STACK_ARGS &&
        (a = rv_sys_alloc((size_t)argc * sizeof *a)) == NULL)
        return RedisModule_ReplyWithError(ctx, "ERR out of memory");
    for (int i = 0; i < argc; i++)
        a[i].p = RedisModule_StringPtrLen(argv[i], &a[i].n);
    if (c->keys != NULL && RedisModule_IsKeysPositionRequest(ctx)) {
        keys_request(ctx, c, a, argc);
    } else {
        memset(&r, 0, sizeof r);
        r.h.ops = &redis_host;
        r.h.argv = a;
        r.h.argc = argc;
        r.h.replayed = (RedisModule_GetContextFlags(ctx) &
                        (REDISMODULE_CTX_FLAGS_REPLICATED |
                         REDISMODULE_CTX_FLAGS_LOADING)) != 0;
        r.ctx = ctx;
        r.argv = argv;
        r.mode = strncmp(c->flags, "write", 5) == 0
                     ? REDISMODULE_READ | REDISMODULE_WRITE
                     : REDISMODULE_READ;
        rv_set_gate(budget_gate, &r.h);
        c->fn(&r.h);
        rv_set_gate(NULL, NULL);
        for (int i = 0; i < r.nkeys; i++) {
            RedisModuleKey *k = r.keys[i];
            if (k == NULL)
                continue;
            /* a write may have changed the value: SCANDUMP starts over */
            if ((r.mode & REDISMODULE_WRITE) &&
                RedisModule_KeyType(k) == REDISMODULE_KEYTYPE_MODULE &&
                fam_of_type(RedisModule_ModuleTypeGetType(k)) != 0)
                rv_scan_drop(RedisModule_ModuleTypeGetValue(k));
            RedisModule_CloseKey(k);
        }
    }
    if (a != stack)
        rv_sys_free(a);
    return REDISMODULE_OK;
}

/* One C entry point per row of commands.def (the server passes no user
 * data), each running its row of g_cmds: both are made from the one list,
 * in its order. */
enum {
#define AMQ_REDIS_CMD(name, fn, flags, first, last, step, keys) ROW_##fn,
#include "commands.def"
#undef AMQ_REDIS_CMD
    NROWS
};
#define AMQ_REDIS_CMD(name, fn, flags, first, last, step, keys)                \
    static int entry_##fn(RedisModuleCtx *c, RedisModuleString **v, int n) {   \
        return run(c, v, n, ROW_##fn);                                         \
    }
#include "commands.def"
#undef AMQ_REDIS_CMD
static const RedisModuleCmdFunc entries[NROWS] = {
#define AMQ_REDIS_CMD(name, fn, flags, first, last, step, keys) entry_##fn,
#include "commands.def"
#undef AMQ_REDIS_CMD
};

/* ---- data type callbacks -------------------------------------------------------- */

static void *load_as(RedisModuleIO *io, int encver, int fam) {
    size_t len = 0;
    rval *v = NULL;
    char err[200];
    if (encver != ENCVER) {
        RedisModule_LogIOError(io, "warning", "amq: unknown encoding %d",
                               encver);
        return NULL;
    }
    char *buf = RedisModule_LoadStringBuffer(io, &len);
    if (buf == NULL || RedisModule_IsIOError(io)) {
        RedisModule_LogIOError(io, "warning", "amq: short read of a %s value",
                               fam_get(fam)->name);
        if (buf != NULL)
            RedisModule_Free(buf);
        return NULL;
    }
    if (!rv_decode((const uint8_t *)buf, len, fam, &v, err, sizeof err))
        RedisModule_LogIOError(io, "warning",
                               "amq: refusing a corrupt %s value: %s",
                               fam_get(fam)->name, err);
    RedisModule_Free(buf);
    return v;
}

static void *load_bf(RedisModuleIO *io, int e) {
    return load_as(io, e, FAM_BF);
}
static void *load_cf(RedisModuleIO *io, int e) {
    return load_as(io, e, FAM_CF);
}
static void *load_cms(RedisModuleIO *io, int e) {
    return load_as(io, e, FAM_CMS);
}
static void *load_topk(RedisModuleIO *io, int e) {
    return load_as(io, e, FAM_TOPK);
}
static void *load_amq(RedisModuleIO *io, int e) {
    return load_as(io, e, FAM_AMQ);
}
static void *load_casc(RedisModuleIO *io, int e) {
    return load_as(io, e, FAM_CASC);
}
static void *load_tdigest(RedisModuleIO *io, int e) {
    return load_as(io, e, FAM_TDIGEST);
}
static void *load_window(RedisModuleIO *io, int e) {
    return load_as(io, e, FAM_WINDOW);
}
static void *load_clock(RedisModuleIO *io, int e) {
    return load_as(io, e, FAM_CLOCK);
}

static void save(RedisModuleIO *io, void *value) {
    uint8_t *b;
    size_t n;
    if (!rv_encode(value, &b, &n)) {
        /* out of memory: an empty string, which a load refuses */
        RedisModule_LogIOError(io, "warning",
                               "amq: could not serialize a value");
        RedisModule_SaveStringBuffer(io, "", 0);
        return;
    }
    RedisModule_SaveStringBuffer(io, (const char *)b, n);
    rv_sys_free(b);
}

static void aof_rewrite(RedisModuleIO *aof, RedisModuleString *key,
                        void *value) {
    const rval *v = value;
    uint8_t *b;
    size_t n;
    if (!rv_encode(v, &b, &n))
        return;
    for (size_t off = 0; off < n;) {
        size_t len = n - off < CHUNK_MAX ? n - off : CHUNK_MAX;
        RedisModule_EmitAOF(aof, fam_get(v->fam)->loadchunk, "slb", key,
                            (long long)(off + len + 1), (const char *)b + off,
                            len);
        off += len;
    }
    rv_sys_free(b);
}

static size_t mem_usage(const void *value) { return rv_memory(value); }

static void digest(RedisModuleDigest *md, void *value) {
    uint8_t *b;
    size_t n;
    if (!rv_encode(value, &b, &n))
        return;
    RedisModule_DigestAddStringBuffer(md, (const char *)b, n);
    RedisModule_DigestEndSequence(md);
    rv_sys_free(b);
}

static void free_value(void *value) { rv_free(value); }

static void *copy(RedisModuleString *from, RedisModuleString *to,
                  const void *value) {
    (void)from;
    (void)to;
    return rv_copy(value);
}

/* RedisBloom's fields through the server's RDB calls. A string stays
 * until the next one (or the end of the load). */
typedef struct rdb_in {
    rb_io io;
    RedisModuleIO *rdb;
    char *last;
} rdb_in;

static bool in_u64(rb_io *io, uint64_t *x) {
    rdb_in *r = (rdb_in *)io;
    *x = RedisModule_LoadUnsigned(r->rdb);
    return !RedisModule_IsIOError(r->rdb);
}
static bool in_dbl(rb_io *io, double *x) {
    rdb_in *r = (rdb_in *)io;
    *x = RedisModule_LoadDouble(r->rdb);
    return !RedisModule_IsIOError(r->rdb);
}
static const uint8_t *in_str(rb_io *io, size_t *n) {
    rdb_in *r = (rdb_in *)io;
    if (r->last != NULL)
        RedisModule_Free(r->last);
    r->last = RedisModule_LoadStringBuffer(r->rdb, n);
    if (RedisModule_IsIOError(r->rdb))
        return NULL;
    return (const uint8_t *)(r->last != NULL ? r->last : "");
}
static void out_u64(rb_io *io, uint64_t x) {
    RedisModule_SaveUnsigned(((rdb_in *)io)->rdb, x);
}
static void out_dbl(rb_io *io, double x) {
    RedisModule_SaveDouble(((rdb_in *)io)->rdb, x);
}
static void out_str(rb_io *io, const void *p, size_t n) {
    RedisModule_SaveStringBuffer(((rdb_in *)io)->rdb, p, n);
}

static void *load_rb(RedisModuleIO *io, int encver, int fam) {
    char err[160];
    rdb_in r = {{in_u64, in_dbl, in_str, NULL, NULL, NULL}, io, NULL};
    rval *v = rb_load(fam, encver, &r.io, err, sizeof err);
    if (r.last != NULL)
        RedisModule_Free(r.last);
    if (v == NULL)
        RedisModule_LogIOError(io, "warning",
                               "amq: refusing a RedisBloom %s value: %s",
                               fam_get(fam)->name, err);
    return v;
}
static void *load_rb_bf(RedisModuleIO *io, int e) {
    return load_rb(io, e, FAM_BF);
}
static void *load_rb_cf(RedisModuleIO *io, int e) {
    return load_rb(io, e, FAM_CF);
}
static void *load_rb_cms(RedisModuleIO *io, int e) {
    return load_rb(io, e, FAM_CMS);
}
static void *load_rb_topk(RedisModuleIO *io, int e) {
    return load_rb(io, e, FAM_TOPK);
}
/* TDIS-TYPE: RedisBloom's t-digest (encoding 0) becomes an amq digest,
 * which is saved as an amq value (encoding 1) under the same name. */
static void *load_rb_tdigest(RedisModuleIO *io, int e) {
    rval *v =
        e == 0 ? load_rb(io, e, FAM_TDIGEST) : load_as(io, e, FAM_TDIGEST);
    if (v != NULL)
        v->rb_name = true;
    return v;
}

static void save_rb(RedisModuleIO *io, void *value) {
    rdb_in w = {{NULL, NULL, NULL, out_u64, out_dbl, out_str}, io, NULL};
    rb_save(value, &w.io);
}

static int create_types(RedisModuleCtx *ctx) {
    static void *(*loads[FAM_MAX + 1])(RedisModuleIO *, int) = {
        NULL,     load_bf,   load_cf,      load_cms,    load_topk,
        load_amq, load_casc, load_tdigest, load_window, load_clock};
    for (int f = 1; f <= FAM_MAX; f++) {
        RedisModuleTypeMethods tm;
        memset(&tm, 0, sizeof tm);
        tm.version = REDISMODULE_TYPE_METHOD_VERSION;
        tm.rdb_load = loads[f];
        tm.rdb_save = save;
        tm.aof_rewrite = aof_rewrite;
        tm.mem_usage = mem_usage;
        tm.digest = digest;
        tm.free = free_value;
        tm.copy = copy;
        g_types[f] =
            RedisModule_CreateDataType(ctx, fam_get(f)->rtype, ENCVER, &tm);
        if (g_types[f] == NULL)
            return REDISMODULE_ERR;
        if (rb_type_name(f) != NULL) {
            bool td = f == FAM_TDIGEST;
            tm.rdb_load = f == FAM_BF     ? load_rb_bf
                          : f == FAM_CF   ? load_rb_cf
                          : f == FAM_CMS  ? load_rb_cms
                          : f == FAM_TOPK ? load_rb_topk
                                          : load_rb_tdigest;
            tm.rdb_save = td ? save : save_rb;
            g_rbtypes[f] = RedisModule_CreateDataType(
                ctx, rb_type_name(f), td ? ENCVER : rb_encver(f), &tm);
            if (g_rbtypes[f] == NULL)
                return REDISMODULE_ERR;
        }
    }
    return REDISMODULE_OK;
}

static int create_commands(RedisModuleCtx *ctx) {
    char flags[64];
    if (g_ncmds != NROWS) { /* one list makes both: never, but say so */
        RedisModule_Log(ctx, "warning",
                        "amq: %zu commands in the table, %d entry points",
                        g_ncmds, (int)NROWS);
        return REDISMODULE_ERR;
    }
    for (size_t i = 0; i < g_ncmds; i++) {
        const cmd_def *c = &g_cmds[i];
        snprintf(flags, sizeof flags, "%s%s", c->flags,
                 c->keys ? " getkeys-api" : "");
        if (RedisModule_CreateCommand(ctx, c->name, entries[i], flags, c->first,
                                      c->last, c->step) != REDISMODULE_OK) {
            RedisModule_Log(ctx, "warning",
                            "amq: cannot register %s (flags \"%s\"): a "
                            "command of that name exists (another module "
                            "loaded first?) or the server refuses its flags",
                            c->name, flags);
            return REDISMODULE_ERR;
        }
    }
    return REDISMODULE_OK;
}

__attribute__((visibility("default"))) int RedisModule_OnLoad(
    RedisModuleCtx *ctx, RedisModuleString **argv, int argc);

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv,
                       int argc) {
    rarg a[16];
    char err[200];
    if (rm_bind(ctx, "amq", 1) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    if (argc > 16) {
        RedisModule_Log(ctx, "warning", "amq: too many module arguments");
        return REDISMODULE_ERR;
    }
    for (int i = 0; i < argc; i++)
        a[i].p = RedisModule_StringPtrLen(argv[i], &a[i].n);
    if (!cfg_parse(a, argc, err, sizeof err)) {
        RedisModule_Log(ctx, "warning", "amq: %s", err);
        return REDISMODULE_ERR;
    }
    rv_set_system_allocator(RedisModule_Alloc, RedisModule_Realloc,
                            RedisModule_Free);
    RedisModule_SetModuleOptions(ctx, REDISMODULE_OPTIONS_HANDLE_IO_ERRORS);
    if (create_types(ctx) != REDISMODULE_OK ||
        create_commands(ctx) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    return REDISMODULE_OK;
}
