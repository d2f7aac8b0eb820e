/*
 * type.h — the table of callbacks behind amq_filter (as Redis's dictType).
 *
 * src/type/ is the contract every structure implements, below the
 * structures: this descriptor, the ids and the X-macro list of types
 * (ids.h, types.def), frame I/O of a type (frame_io.h), the maplet
 * callbacks (maplet_ops.h) and the registry's lookups (registry.c).
 * src/filter/ dispatches over it (amq_filter_*, amq_maplet_*, builder,
 * files, recommend); a structure includes from here and from core/ only.
 *
 * Each structure file defines `const amq__type amq__type_<name>` for every
 * spec name it serves (types.def lists them; registry.c collects them). A
 * structure object starts with the common header amq__obj (core/obj.h), so
 * the generic layer reads items, table size and a single-table payload
 * from there and frees any object; the callbacks below are only what is
 * particular to a structure.
 *
 *   amq_filter ──► amq__type ──► callbacks(self or obj, ...)
 *        │              └── variant: the type's own descriptor (width,
 *        │                  family, counting mode), given to create/build/
 *        │                  load/curve as self->variant and kept in
 *        │                  obj->variant
 *        └──► amq__obj * (the structure: amq_bloom, amq_xor, ...)
 *
 * Every callback marked "opt" may be NULL; the generic layer then does
 * the obvious thing (named at the slot) or returns AMQ_ERR_UNSUPPORTED.
 *
 * Contract for every type:
 *   - add/contains work on 64-bit hashes; no false negatives;
 *   - contains_batch gives exactly contains's answers;
 *   - params_write + the payload, then load, give an object that writes
 *     identical bytes again;
 *   - load validates the parameters (through the cursor, which reports
 *     the absolute frame offset of a bad field) and the payload length
 *     before allocating, and with view = true borrows the payload (64-byte
 *     aligned in a mapped frame, read-only) instead of copying it;
 *   - a failing call leaves the object as it was.
 */
#ifndef AMQ_SRC_TYPE_TYPE_H
#define AMQ_SRC_TYPE_TYPE_H

#include "amq/filter.h"
#include "amq/recommend.h"
#include "core/cursor.h"
#include "core/obj.h"
#include "core/spec.h"
#include "type/ids.h"

typedef enum amq__merge_op { AMQ__UNION, AMQ__INTERSECT } amq__merge_op;

typedef struct amq__type amq__type;
struct amq__maplet_ops;
struct amq__range_ops;

struct amq__type {
    amq_type_info info; /* info.default_hash: hash kind for DEFAULT */
    const void *variant;

    /* Random memory reads of one query of a table larger than the cache
     * (amq/recommend.h ranks the fastest type by them), from the layout
     * (docs/structures.md). A type with a fixed count sets reads (the upper
     * end; AMQ_READS_MANY when no fixed count bounds them) and reads_text
     * (how it is said: "1-2", "3 (nearby)"); a type whose count is one of
     * its parameters names that spec key in reads_param ("k", "d",
     * "depth") instead and leaves the other two 0 and NULL: the resolved
     * value of the key is the reads. Every type sets one of the two. */
    unsigned reads;
    const char *reads_text;
    const char *reads_param;

    /* Specs beside the defaults whose objects take other query kernels or
     * code paths (other widths, forms and layouts; small full tables that
     * reach a table's last bytes): the kernel suite runs each, as it runs
     * the defaults, against the scalar reference. NULL-terminated; an
     * empty list ({NULL}) says the defaults reach every kernel. Every type
     * sets it (test_kernels fails on a NULL). */
    const char *const *kernel_shapes;

    /* Construct from a parsed spec and a target; capacity == 0 and
     * fpr == 0 when the spec must carry explicit parameters. Consumes spec
     * keys; the caller checks for leftovers. opt is never NULL. NULL for
     * static types. */
    amq_status (*create)(const amq__type *self, amq__spec *spec,
                         uint64_t capacity, double fpr, const amq_options *opt,
                         amq__obj **out, amq_diag *diag);
    /* Static types: construct from every key's hash at once (duplicates
     * tolerated). NULL for dynamic types (the generic layer creates with
     * capacity n and adds). */
    amq_status (*build)(const amq__type *self, amq__spec *spec,
                        const uint64_t *hashes, size_t n, double fpr,
                        const amq_options *opt, amq__obj **out, amq_diag *diag);
    /* From a frame: params is the type's parameter block (diagnostics go
     * through it), payload the frame's payload. */
    amq_status (*load)(const amq__type *self, amq__rd *params,
                       const uint8_t *payload, size_t len, bool view,
                       const amq_options *opt, amq__obj **out);
    void (*destroy)(amq__obj *o); /* opt: amq__obj_free */

    amq_status (*add)(amq__obj *o, uint64_t h); /* opt: static */
    /* add of h[0..n) in order, stopping at the first failure (returned);
     * *done = keys added. Same result as the loop, faster. opt: the loop */
    amq_status (*add_batch)(amq__obj *o, const uint64_t *h, size_t n,
                            size_t *done);
    bool (*contains)(const amq__obj *o, uint64_t h);
    void (*contains_batch)(const amq__obj *o, const uint64_t *h, size_t n,
                           uint8_t *out);          /* opt: the loop */
    amq_status (*remove)(amq__obj *o, uint64_t h); /* opt */
    amq_status (*count)(const amq__obj *o, uint64_t h, uint64_t *out); /* opt */
    /* dst op= src for a src of the same type and hasher; called only with
     * an op the instance's caps allow (AMQ_CAP_UNION / AMQ_CAP_INTERSECT).
     * opt */
    amq_status (*merge)(amq__obj *dst, const amq__obj *src, amq__merge_op op);
    amq_status (*estimate)(const amq__obj *o, double *out); /* opt */
    /* This instance's AMQ_CAP_* when its parameters change them (e.g.
     * spectral:mode=ms can remove). opt: info.caps */
    uint32_t (*caps)(const amq__obj *o);

    double (*fpr_bound)(const amq__obj *o);
    /* Items held, what amq_filter_items reports, when o->items is not the
     * whole count (a concurrent quotient filter's regions count their
     * share). opt: o->items */
    uint64_t (*items)(const amq__obj *o);
    /* Bytes the structure holds for its queries: what amq_filter_size_bytes
     * reports. opt: table_bytes (more when it keeps derived tables beside
     * the one it saves). */
    size_t (*size_bytes)(const amq__obj *o);
    /* Resolved parameters as "k=v,..." (no name); snprintf semantics. */
    size_t (*describe)(const amq__obj *o, char *buf, size_t cap);
    /* The type's FPR curve: x bits per key -> fpr, or (inverse) x = fpr ->
     * bits per key. x is checked by the caller. */
    amq_status (*curve)(const amq__type *self, amq__spec *spec, double x,
                        bool inverse, double *out, amq_diag *diag);

    /* The parameter block after the generic part; its size is what it
     * writes (amq__wr counts when given no buffer). */
    void (*params_write)(const amq__obj *o, amq__wr *w);
    size_t (*payload_size)(const amq__obj *o); /* opt: table_bytes */
    void (*payload_write)(const amq__obj *o, uint8_t *dst); /* opt: table */

    /* Adaptive filters (AMQ_CAP_ADAPT): fix the false positive of hash h
     * (*fixed: whether anything changed), and what adapting has cost.
     * NULL for every other type. */
    amq_status (*report_fp)(amq__obj *o, uint64_t h, bool *fixed);
    void (*adapt_stats)(const amq__obj *o, amq_adapt_stats *out);

    /* Range filters (AMQ_CAP_RANGE, amq/range.h): the range queries
     * (src/type/range_ops.h). NULL for every other type. */
    const struct amq__range_ops *range;

    /* Maplets (amq/maplet.h): the calls that carry values
     * (src/type/maplet_ops.h). NULL for every other type. */
    const struct amq__maplet_ops *maplet;
};

/* const amq__type amq__type_NAME for every line of types.def. */
#define AMQ__TYPE(id, name) extern const amq__type amq__type_##name;
#define AMQ__FRAME_ONLY(id, name, what, reader)
#include "type/types.def"
#undef AMQ__TYPE
#undef AMQ__FRAME_ONLY

/* Registry lookups (registry.c). amq__type_at(i) is the type behind
 * amq_filter_type_at(i) (NULL past the end). */
const amq__type *amq__type_at(size_t i);
const amq__type *amq__type_by_name(const char *name);
const amq__type *amq__type_by_id(uint16_t id);
/* AMQ_ERR_KIND into diag, saying what a frame of type id holds (a filter
 * type, a clock, a cascade) when it is not what `want` ("a filter", "a
 * cascade") reads; AMQ_ERR_VERSION for an id no part of amq knows. */
amq_status amq__frame_not(uint16_t id, const char *want, amq_diag *diag);

/* The pieces several types share. */

/* kernel_shapes of a type whose defaults reach every kernel: {NULL}. */
extern const char *const amq__defaults_only[];

/* snprintf's length as a size_t (0 on an encoding error). */
size_t amq__describe(char *buf, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
