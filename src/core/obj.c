/*
 * obj.c — allocation of structure objects and their tables (obj.h).
 */
#include "core/obj.h"

#include "core/bits.h"

#include <string.h>

amq_status amq__obj_new_in(size_t self_bytes, const amq__mem *mem, void **out) {
    amq__obj *o = amq__zalloc(mem, self_bytes);
    if (o == NULL)
        return AMQ_ERR_NOMEM;
    o->mem = *mem;
    o->self_bytes = self_bytes;
    *out = o;
    return AMQ_OK;
}

amq_status amq__obj_new(size_t self_bytes, const amq_options *opt, void **out) {
    amq__mem mem;
    amq__mem_init(&mem, opt);
    return amq__obj_new_in(self_bytes, &mem, out);
}

amq_status amq__obj_table(amq__obj *o, size_t bytes, const void *borrow,
                          void **wr) {
    if (borrow != NULL) {
        o->table = borrow;
        o->table_bytes = bytes;
        *wr = NULL;
        return AMQ_OK;
    }
    amq__block b;
    AMQ_RETURN_IF_ERR(
        amq__block_alloc(&o->mem, bytes ? bytes : 1, AMQ__TABLE_ALIGN, &b));
    o->block = b;
    o->table = b.ptr;
    o->table_bytes = bytes;
    *wr = b.ptr;
    return AMQ_OK;
}

amq_status amq__obj_table_from(amq__obj *o, const void *payload, size_t len,
                               bool view, void **wr) {
    AMQ_RETURN_IF_ERR(amq__obj_table(o, len, view ? payload : NULL, wr));
    if (!view && len != 0)
        memcpy(*wr, payload, len);
    return AMQ_OK;
}

void amq__obj_free(amq__obj *o) {
    if (o == NULL)
        return;
    amq__mem mem = o->mem;
    if (o->block.raw != NULL)
        amq__block_free(&mem, &o->block);
    amq__free(&mem, o, o->self_bytes);
}

amq__contains_fn amq__obj_pick(bool scalar, amq__contains_fn portable,
                               amq__contains_fn avx2, amq__contains_fn avx512) {
    if (scalar)
        return portable;
    if (avx512 != NULL && amq__cpu_has_avx512())
        return avx512;
    if (avx2 != NULL && amq__cpu_has_avx2())
        return avx2;
    return portable;
}
