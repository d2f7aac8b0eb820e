/*
 * rm.h — the part of the Redis module API (Redis 7.0) this module uses,
 * declared here because Debian ships no redismodule.h.
 *
 * How a module binds to the server: redis-server dlopen()s the module and
 * calls RedisModule_OnLoad(ctx, argv, argc). The first word of the opaque
 * context is a pointer to the server's lookup function
 *     int get_api(const char *name, void *slot)
 * which writes the address of the API function called `name` into *slot
 * (REDISMODULE_ERR if the server has no such function). rm_bind() does
 * that for every entry of RM_API below; the rest of the module then calls
 * the functions through these pointers.
 *
 * Every constant below is a value fixed by the server's ABI (module API
 * version 1, type methods version 4); the names follow the server's
 * documentation so they can be looked up there.
 */
#ifndef AMQ_REDIS_RM_H
#define AMQ_REDIS_RM_H

#include <stddef.h>
#include <stdint.h>

/* Opaque server objects. */
typedef struct RedisModuleCtx RedisModuleCtx;
typedef struct RedisModuleKey RedisModuleKey;
typedef struct RedisModuleString RedisModuleString;
typedef struct RedisModuleIO RedisModuleIO;
typedef struct RedisModuleType RedisModuleType;
typedef struct RedisModuleDigest RedisModuleDigest;
typedef struct RedisModuleServerInfoData RedisModuleServerInfoData;
typedef struct RedisModuleKeyOptCtx RedisModuleKeyOptCtx;
typedef struct RedisModuleDefragCtx RedisModuleDefragCtx;

#define REDISMODULE_OK 0
#define REDISMODULE_ERR 1
#define REDISMODULE_APIVER_1 1
#define REDISMODULE_TYPE_METHOD_VERSION 4

/* OpenKey modes */
#define REDISMODULE_READ (1 << 0)
#define REDISMODULE_WRITE (1 << 1)

/* KeyType results */
#define REDISMODULE_KEYTYPE_EMPTY 0
#define REDISMODULE_KEYTYPE_MODULE 6

/* Keyspace notification classes */
#define REDISMODULE_NOTIFY_GENERIC (1 << 2)
#define REDISMODULE_NOTIFY_MODULE (1 << 13) /* 'd', Redis 7.0 */

/* SetModuleOptions: rdb_load sees short reads as IsIOError, not a panic */
#define REDISMODULE_OPTIONS_HANDLE_IO_ERRORS (1 << 0)
/* RedisModule_GetContextFlags */
#define REDISMODULE_CTX_FLAGS_REPLICATED (1 << 12)
#define REDISMODULE_CTX_FLAGS_LOADING (1 << 13)

typedef int (*RedisModuleCmdFunc)(RedisModuleCtx *ctx, RedisModuleString **argv,
                                  int argc);

typedef struct RedisModuleTypeMethods {
    uint64_t version;
    void *(*rdb_load)(RedisModuleIO *rdb, int encver);
    void (*rdb_save)(RedisModuleIO *rdb, void *value);
    void (*aof_rewrite)(RedisModuleIO *aof, RedisModuleString *key,
                        void *value);
    size_t (*mem_usage)(const void *value);
    void (*digest)(RedisModuleDigest *digest, void *value);
    void (*free)(void *value);
    int (*aux_load)(RedisModuleIO *rdb, int encver, int when);
    void (*aux_save)(RedisModuleIO *rdb, int when);
    int aux_save_triggers;
    size_t (*free_effort)(RedisModuleString *key, const void *value);
    void (*unlink)(RedisModuleString *key, const void *value);
    void *(*copy)(RedisModuleString *fromkey, RedisModuleString *tokey,
                  const void *value);
    int (*defrag)(RedisModuleDefragCtx *ctx, RedisModuleString *key,
                  void **value);
    size_t (*mem_usage2)(RedisModuleKeyOptCtx *ctx, const void *value,
                         size_t sample_size);
    size_t (*free_effort2)(RedisModuleKeyOptCtx *ctx, const void *value);
    void (*unlink2)(RedisModuleKeyOptCtx *ctx, const void *value);
    void *(*copy2)(RedisModuleKeyOptCtx *ctx, const void *value);
} RedisModuleTypeMethods;

/* X(return type, name, parameter list): one pointer per API call used. */
#define RM_API(X)                                                              \
    X(void, RedisModule_SetModuleAttribs,                                      \
      (RedisModuleCtx *, const char *, int, int))                              \
    X(int, RedisModule_IsModuleNameBusy, (const char *))                       \
    X(void, RedisModule_SetModuleOptions, (RedisModuleCtx *, int))             \
    X(int, RedisModule_CreateCommand,                                          \
      (RedisModuleCtx *, const char *, RedisModuleCmdFunc, const char *, int,  \
       int, int))                                                              \
    X(RedisModuleType *, RedisModule_CreateDataType,                           \
      (RedisModuleCtx *, const char *, int, RedisModuleTypeMethods *))         \
    X(int, RedisModule_IsKeysPositionRequest, (RedisModuleCtx *))              \
    X(void, RedisModule_KeyAtPos, (RedisModuleCtx *, int))                     \
    X(void *, RedisModule_OpenKey,                                             \
      (RedisModuleCtx *, RedisModuleString *, int))                            \
    X(void, RedisModule_CloseKey, (RedisModuleKey *))                          \
    X(int, RedisModule_KeyType, (RedisModuleKey *))                            \
    X(int, RedisModule_DeleteKey, (RedisModuleKey *))                          \
    X(int, RedisModule_ModuleTypeSetValue,                                     \
      (RedisModuleKey *, RedisModuleType *, void *))                           \
    X(RedisModuleType *, RedisModule_ModuleTypeGetType, (RedisModuleKey *))    \
    X(void *, RedisModule_ModuleTypeGetValue, (RedisModuleKey *))              \
    X(int, RedisModule_ReplyWithLongLong, (RedisModuleCtx *, long long))       \
    X(int, RedisModule_ReplyWithError, (RedisModuleCtx *, const char *))       \
    X(int, RedisModule_ReplyWithSimpleString,                                  \
      (RedisModuleCtx *, const char *))                                        \
    X(int, RedisModule_ReplyWithArray, (RedisModuleCtx *, long))               \
    X(int, RedisModule_ReplyWithMap, (RedisModuleCtx *, long))                 \
    X(int, RedisModule_ReplyWithNull, (RedisModuleCtx *))                      \
    X(int, RedisModule_ReplyWithStringBuffer,                                  \
      (RedisModuleCtx *, const char *, size_t))                                \
    X(int, RedisModule_ReplyWithDouble, (RedisModuleCtx *, double))            \
    X(const char *, RedisModule_StringPtrLen,                                  \
      (const RedisModuleString *, size_t *))                                   \
    X(RedisModuleString *, RedisModule_CreateString,                           \
      (RedisModuleCtx *, const char *, size_t))                                \
    X(void, RedisModule_FreeString, (RedisModuleCtx *, RedisModuleString *))   \
    X(int, RedisModule_ReplicateVerbatim, (RedisModuleCtx *))                  \
    X(int, RedisModule_Replicate,                                              \
      (RedisModuleCtx *, const char *, const char *, ...))                     \
    X(int, RedisModule_NotifyKeyspaceEvent,                                    \
      (RedisModuleCtx *, int, const char *, RedisModuleString *))              \
    X(void *, RedisModule_Alloc, (size_t))                                     \
    X(void *, RedisModule_Realloc, (void *, size_t))                           \
    X(void, RedisModule_Free, (void *))                                        \
    X(void, RedisModule_SaveStringBuffer,                                      \
      (RedisModuleIO *, const char *, size_t))                                 \
    X(char *, RedisModule_LoadStringBuffer, (RedisModuleIO *, size_t *))       \
    X(void, RedisModule_SaveUnsigned, (RedisModuleIO *, uint64_t))             \
    X(int, RedisModule_GetContextFlags, (RedisModuleCtx *))                    \
    X(uint64_t, RedisModule_LoadUnsigned, (RedisModuleIO *))                   \
    X(void, RedisModule_SaveDouble, (RedisModuleIO *, double))                 \
    X(double, RedisModule_LoadDouble, (RedisModuleIO *))                       \
    X(int, RedisModule_IsIOError, (RedisModuleIO *))                           \
    X(void, RedisModule_EmitAOF,                                               \
      (RedisModuleIO *, const char *, const char *, ...))                      \
    X(void, RedisModule_LogIOError,                                            \
      (RedisModuleIO *, const char *, const char *, ...))                      \
    X(void, RedisModule_Log,                                                   \
      (RedisModuleCtx *, const char *, const char *, ...))                     \
    X(void, RedisModule_DigestAddStringBuffer,                                 \
      (RedisModuleDigest *, const char *, size_t))                             \
    X(void, RedisModule_DigestEndSequence, (RedisModuleDigest *))              \
    X(RedisModuleServerInfoData *, RedisModule_GetServerInfo,                  \
      (RedisModuleCtx *, const char *))                                        \
    X(void, RedisModule_FreeServerInfo,                                        \
      (RedisModuleCtx *, RedisModuleServerInfoData *))                         \
    X(unsigned long long, RedisModule_ServerInfoGetFieldUnsigned,              \
      (RedisModuleServerInfoData *, const char *, int *))                      \
    X(long long, RedisModule_Milliseconds, (void))

#define RM_DECLARE(ret, name, params) extern ret(*name) params;
RM_API(RM_DECLARE)
#undef RM_DECLARE

/* Fill every pointer of RM_API from the server behind ctx and register the
 * module's name. REDISMODULE_ERR if the server lacks a function we use (an
 * older Redis) or the name is taken. */
int rm_bind(RedisModuleCtx *ctx, const char *name, int version);

#endif
