/*
 * type.h — the table of callbacks behind amq_filter (as Redis's dictType).
 *
 * Each structure file defines one `const amq__type amq__type_<name>` and the
 * registry (registry.c) lists them. Callbacks receive the structure's own
 * object (impl); the generic layer handles hashing, read-only views,
 * argument checks and the serialization frame. A NULL optional callback
 * means the operation is unsupported (AMQ_ERR_UNSUPPORTED).
 *
 * Contract for every type:
 *   - add/contains work on 64-bit hashes; no false negatives;
 *   - contains_batch gives exactly contains's answers;
 *   - params_write/payload_write followed by load reproduces an object that
 *     writes identical bytes again;
 *   - load validates params and payload length before allocating, and with
 *     view = true borrows payload (8-byte aligned, read-only) instead of
 *     copying it.
 */
#ifndef AMQ_SRC_FILTER_TYPE_H
#define AMQ_SRC_FILTER_TYPE_H

#include "amq/filter.h"
#include "core/spec.h"
#include "filter/ids.h"

typedef enum amq__merge_op { AMQ__UNION, AMQ__INTERSECT } amq__merge_op;

typedef struct amq__type {
    amq_type_info info; /* info.default_hash: hash kind for DEFAULT */

    /* Construct from a parsed spec and a target; capacity == 0 and fpr == 0
     * when the spec must carry explicit parameters. Consumes spec keys; the
     * caller checks for leftovers. opt is never NULL. */
    amq_status (*create)(amq__spec *spec, uint64_t capacity, double fpr,
                         const amq_options *opt, void **impl, amq_diag *diag);
    /* Static types: construct from every key's hash at once (duplicates
     * tolerated). NULL for dynamic types (the generic layer creates with
     * capacity n and adds). create may then return AMQ_ERR_UNSUPPORTED. */
    amq_status (*build)(amq__spec *spec, const uint64_t *hashes, size_t n,
                        double fpr, const amq_options *opt, void **impl,
                        amq_diag *diag);
    void (*destroy)(void *impl);

    amq_status (*add)(void *impl, uint64_t h);
    /* add of h[0..n) in order, stopping at the first failure (returned);
     * *done = keys added. Same result as the loop, faster (the quotient
     * filter overlaps consecutive inserts' misses). NULL: the loop. */
    amq_status (*add_batch)(void *impl, const uint64_t *h, size_t n,
                            size_t *done);                            /* opt */
    bool (*contains)(const void *impl, uint64_t h);
    void (*contains_batch)(const void *impl, const uint64_t *h, size_t n,
                           uint8_t *out);
    amq_status (*remove)(void *impl, uint64_t h);                    /* opt */
    amq_status (*count)(const void *impl, uint64_t h, uint64_t *out); /* opt */
    amq_status (*merge)(void *dst, const void *src, amq__merge_op op); /* opt */
    amq_status (*estimate)(const void *impl, double *out);            /* opt */
    /* This instance's AMQ_CAP_* when its parameters change them (e.g.
     * spectral:mode=ms can remove); NULL means info.caps. */
    uint32_t (*caps)(const void *impl);                               /* opt */

    uint64_t (*items)(const void *impl);
    size_t (*size_bytes)(const void *impl);
    double (*fpr_bound)(const void *impl);
    /* Resolved parameters as "k=v,..." (no name); snprintf semantics. */
    size_t (*describe)(const void *impl, char *buf, size_t cap);

    amq_status (*curve_fpr)(amq__spec *spec, double bits_per_key, double *out,
                            amq_diag *diag);
    amq_status (*curve_bits)(amq__spec *spec, double fpr, double *out,
                             amq_diag *diag);

    size_t (*params_size)(const void *impl);
    void (*params_write)(const void *impl, uint8_t *dst);
    size_t (*payload_size)(const void *impl);
    void (*payload_write)(const void *impl, uint8_t *dst);
    amq_status (*load)(const uint8_t *params, size_t params_len,
                       const uint8_t *payload, size_t payload_len, bool view,
                       const amq_options *opt, void **impl, amq_diag *diag);
} amq__type;

/* const amq__type amq__type_NAME for every line of types.def. */
#define AMQ__TYPE(id, name) extern const amq__type amq__type_##name;
#define AMQ__FRAME_ONLY(id, name)
#include "filter/types.def"
#undef AMQ__TYPE
#undef AMQ__FRAME_ONLY

/* Registry lookups (registry.c). */
const amq__type *amq__type_by_name(const char *name);
const amq__type *amq__type_by_id(uint16_t id);

#endif
