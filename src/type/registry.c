/*
 * registry.c — the list of structure types amq_filter can create, in the
 * order of types.def (where a new type is added).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/diag.h"
#include "core/frame.h"
#include "type/type.h"

static const amq__type *const types[] = {
#define AMQ__TYPE(id, name) &amq__type_##name,
#define AMQ__FRAME_ONLY(id, name, what, reader)
#include "type/types.def"
#undef AMQ__TYPE
#undef AMQ__FRAME_ONLY
};

#define NTYPES (sizeof types / sizeof types[0])

const char *amq_cap_name(uint32_t bit) {
    switch (bit) {
    case AMQ_CAP_REMOVE: return "remove";
    case AMQ_CAP_COUNT: return "count";
    case AMQ_CAP_UNION: return "union";
    case AMQ_CAP_INTERSECT: return "intersect";
    case AMQ_CAP_CONCURRENT: return "concurrent";
    case AMQ_CAP_ESTIMATE: return "estimate";
    case AMQ_CAP_STATIC: return "static";
    case AMQ_CAP_SKETCH: return "sketch";
    case AMQ_CAP_FORGETS: return "forgets";
    case AMQ_CAP_RANGE: return "range";
    case AMQ_CAP_ADAPT: return "adapt";
    case AMQ_CAP_GROW: return "grow";
    default: return NULL;
    }
}

size_t amq_filter_type_count(void) { return NTYPES; }

const amq_type_info *amq_filter_type_at(size_t i) {
    return i < NTYPES ? &types[i]->info : NULL;
}

const amq__type *amq__type_at(size_t i) { return i < NTYPES ? types[i] : NULL; }

const amq__type *amq__type_by_name(const char *name) {
    for (size_t i = 0; i < NTYPES; i++)
        if (strcmp(types[i]->info.name, name) == 0)
            return types[i];
    return NULL;
}

const amq__type *amq__type_by_id(uint16_t id) {
    for (size_t i = 0; i < NTYPES; i++)
        if (types[i]->info.type_id == id)
            return types[i];
    return NULL;
}

static const struct {
    uint16_t id;
    const char *what, *reader;
} others[] = {
#define AMQ__TYPE(id, name)
#define AMQ__FRAME_ONLY(id, name, what, reader) {id, what, reader},
#include "type/types.def"
#undef AMQ__TYPE
#undef AMQ__FRAME_ONLY
};

amq_status amq__frame_not(uint16_t id, const char *want, amq_diag *diag) {
    const amq__type *t = amq__type_by_id(id);
    if (t != NULL)
        return amq__diag(diag, AMQ_ERR_KIND, AMQ__FRAME_OFF_TYPE,
                         "the frame holds a %s filter (type %u), not %s",
                         t->info.name, id, want);
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
        if (others[i].id == id)
            return amq__diag(diag, AMQ_ERR_KIND, AMQ__FRAME_OFF_TYPE,
                             "the frame holds %s (type %u), not %s: %s "
                             "read it",
                             others[i].what, id, want, others[i].reader);
    return amq__diag(diag, AMQ_ERR_VERSION, AMQ__FRAME_OFF_TYPE,
                     "unknown structure type id %u (a newer amq?)", id);
}

const amq_type_info *amq_filter_type_find(const char *spec) {
    amq__spec s;
    if (amq__spec_parse(spec, &s, NULL) != AMQ_OK)
        return NULL;
    const amq__type *t = amq__type_by_name(s.name);
    return t != NULL ? &t->info : NULL;
}

const char *const amq__defaults_only[] = {NULL};

size_t amq__describe(char *buf, size_t cap, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, cap, fmt, ap);
    va_end(ap);
    return n > 0 ? (size_t)n : 0;
}
