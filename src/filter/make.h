/*
 * make.h — how filters come to be, shared by filter.c and builder.c.
 *
 * One path constructs every filter: a parsed spec and its type, a target
 * (capacity, fpr) or the keys' hashes, and the options (whose hash fields
 * give the filter its hasher). A static type builds from the hashes; a
 * dynamic type given hashes is sized for them and filled in order.
 */
#ifndef AMQ_SRC_FILTER_MAKE_H
#define AMQ_SRC_FILTER_MAKE_H

#include "type/type.h"

typedef struct amq__make {
    uint64_t capacity;      /* a dynamic type without hashes             */
    double fpr;             /* 0: the spec's explicit parameters          */
    const uint64_t *hashes; /* NULL: an empty filter for the target      */
    size_t n;
    const uint64_t *values; /* static maplets: a value per hash, else NULL */
} amq__make;

/* Parse spec into s and find its type: AMQ_ERR_SPEC with a diagnostic. */
amq_status amq__filter_lookup(const char *spec, amq__spec *s,
                              const amq__type **t, amq_diag *diag);

/* The filter of type t from the parsed spec s (not modified) and args;
 * opt may be NULL. Every failure fills diag. */
amq_status amq__filter_make(const amq__type *t, const amq__spec *s,
                            const amq__make *args, const amq_options *opt,
                            amq_filter **out, amq_diag *diag);

/* A filter around o, an object of type t made by the type's own code
 * (a structure-specific constructor: from a foreign format, a merge of
 * several): opt's hasher, no capacity or target. The filter owns o; on
 * failure (AMQ_ERR_NOMEM, AMQ_ERR_HASH) o is freed. */
amq_status amq__filter_adopt(const amq__type *t, amq__obj *o,
                             const amq_options *opt, amq_filter **out);

/* The capacity and target a filter made by adoption reports and saves
 * (one that takes over another's keys keeps that one's). */
void amq__filter_set_target(amq_filter *f, uint64_t capacity, double fpr);

/* The structure and the type behind a filter (maplet.c, typed.c). */
const amq__type *amq__filter_type(const amq_filter *f);
amq__obj *amq__filter_obj(const amq_filter *f);

#endif
