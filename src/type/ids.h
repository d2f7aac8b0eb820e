/*
 * ids.h — the pinned frame type ids, generated from types.def.
 *
 *   AMQ__ID_bloom == 1, AMQ__ID_blocked == 2, ..., AMQ__ID_bloom_clock == 300
 */
#ifndef AMQ_SRC_TYPE_IDS_H
#define AMQ_SRC_TYPE_IDS_H

enum amq__type_id {
#define AMQ__TYPE(id, name) AMQ__ID_##name = id,
#define AMQ__FRAME_ONLY(id, name, what, reader) AMQ__ID_##name = id,
#include "type/types.def"
#undef AMQ__TYPE
#undef AMQ__FRAME_ONLY
};

/* Never called: two lines of types.def with one id are two equal case
 * labels, which the compiler refuses. */
static inline int amq__type_ids_are_unique(int id) {
    switch (id) {
#define AMQ__TYPE(id, name) case id:
#define AMQ__FRAME_ONLY(id, name, what, reader) case id:
#include "type/types.def"
#undef AMQ__TYPE
#undef AMQ__FRAME_ONLY
        return 1;
    default: return 0;
    }
}

#endif
