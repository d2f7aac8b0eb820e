/*
 * rm.c — binds the module API pointers declared in rm.h (see there for
 * how the server hands them out).
 */
#include "rm.h"

#define RM_DEFINE(ret, name, params) ret(*name) params;
RM_API(RM_DEFINE)
#undef RM_DEFINE

typedef int (*get_api_fn)(const char *name, void *slot);

int rm_bind(RedisModuleCtx *ctx, const char *name, int version) {
    get_api_fn get_api;
    void *first = *(void **)ctx;
    int missing = 0;
    /* the context's first word is the server's lookup function */
    get_api = (get_api_fn)(uintptr_t)first;
#define RM_LOOKUP(ret, fn, params)                                             \
    if (get_api(#fn, (void *)&fn) != REDISMODULE_OK)                           \
        missing++;
    RM_API(RM_LOOKUP)
#undef RM_LOOKUP
    if (missing != 0)
        return REDISMODULE_ERR;
    if (RedisModule_IsModuleNameBusy(name))
        return REDISMODULE_ERR;
    RedisModule_SetModuleAttribs(ctx, name, version, REDISMODULE_APIVER_1);
    return REDISMODULE_OK;
}
