/*
 * cuckoo_table.h — the bucket tables shared by the cuckoo and vacuum
 * filters, and the chain of tables a growing filter keeps (private).
 * cuckoo.c implements them; vacuum.c only chooses table sizes and alternate
 * ranges, then uses the same code.
 *
 * A table is m buckets of 4 slots of f bits (4 <= f <= 32), bit-packed
 * little-endian into 64-bit words: slot s of bucket b is bits
 * [(4b + s) f, (4b + s + 1) f). Slot value 0 means empty; fingerprints are
 * 1 .. 2^f - 1. A fingerprint's alternate bucket has one of two forms,
 * fixed by the table's shape:
 *
 *   xor form (every range a power of two dividing m):
 *     alt(b, fp) = b xor (1 + reduce(mix(fp) >> 32, L - 1)),
 *     L = range[mix(fp) & 3]
 *   sum form (m even, not a power of two, every range = m):
 *     alt(b, fp) = (H - b) mod m,  H = 2 reduce(mix(fp) >> 32, m / 2) + 1
 *
 * Both are involutions that never map b to itself (in the sum form H is
 * odd and m even, so b and H - b differ in parity). A cuckoo table of a
 * power-of-two size is the xor form with range[0..3] = m (every frame
 * written before the sum form existed); any other even size is the sum
 * form. A vacuum table is the xor form with m a multiple of range[0] and
 * range[0] >= range[1] >= range[2] >= range[3].
 *
 * A filter (the typed handle) is a chain of 1 .. max_links tables: the
 * first is embedded; a growing filter appends a table of twice the buckets
 * and one more fingerprint bit (up to 32) when its newest table is full.
 */
#ifndef AMQ_SRC_FINGERPRINT_CUCKOO_TABLE_H
#define AMQ_SRC_FINGERPRINT_CUCKOO_TABLE_H

#include "amq/cuckoo.h"
#include "amq/query.h"
#include "core/mem.h"
#include "type/type.h"

#define AMQ__CT_RANGES 4

/* One table of a chain. */
typedef struct amq__ctab {
    amq__block table;   /* owned storage; raw == NULL for a view          */
    const uint64_t *rd; /* what queries read                              */
    uint64_t *wr;       /* the same words when writable; NULL for a view  */
    uint64_t nwords;
    uint64_t items;   /* occupied slots (copies of duplicates included)  */
    uint32_t buckets; /* m, 2 .. 2^31                                    */
    uint32_t half;    /* m / 2 in the sum form, 0 in the xor form        */
    uint32_t range[AMQ__CT_RANGES];
    unsigned fbits;
    /* Derived from the shape for the query kernels (cuckoo.c): */
    uint32_t fp_values; /* 2^f - 1                                        */
    uint64_t lanes;     /* 1 in the low bit of each of the 4 f-bit slots  */
    uint64_t lanes_hi;  /* ... and in the high bit                        */
} amq__ctab;

/* What a type contributes: the shapes it builds (the type's variant). */
typedef struct amq__ctab_kind {
    const char *name;
    double load;  /* design load: capacity keys fill this share of slots */
    bool chunked; /* describe() names the largest alternate range */
    /* Whether range[] is what this type builds for a table of `buckets`
     * (so a frame relabelled as the other type is refused). */
    bool (*ranges_ok)(uint64_t buckets, const uint32_t range[AMQ__CT_RANGES]);
    /* The table this type builds to hold at least m0 buckets (also the
     * rule for a chain's next table, with m0 = twice the newest's).
     * AMQ_ERR_OVERFLOW past AMQ_CUCKOO_MAX_BUCKETS. */
    amq_status (*shape)(uint64_t m0, uint64_t *buckets,
                        uint32_t range[AMQ__CT_RANGES]);
} amq__ctab_kind;

extern const amq__ctab_kind amq__ctab_cuckoo_kind;
extern const amq__ctab_kind amq__ctab_vacuum_kind;

/* The typed handle: the chain. */
struct amq_cuckoo {
    amq__obj o;      /* o.items: keys over every table (copies
                               counted); o.table_bytes: every table */
    amq__ctab base;  /* table 0, the only one of a filter that never grew */
    amq__ctab *more; /* tables 1 .. nlinks - 1 (NULL while nlinks == 1) */
    const amq__ctab_kind *kind;
    uint64_t max_bytes; /* cap on the tables' bytes; 0 = none            */
    unsigned nlinks;    /* 1 .. max_links                                */
    unsigned max_links; /* 1 = no growth                                 */
    unsigned max_kicks;
    bool scalar; /* AMQ_OPT_SCALAR: no SWAR bucket compare        */
    /* One big table's alternate bucket, per fingerprint: H (sum form) or
     * the xor delta; NULL where the kernel computes it (cuckoo.c). */
    uint32_t *alt;
    /* With alt: what the kernel and amq_cuckoo_query_of read (the base
     * table, alt and the shape), set by choose_kernel. */
    amq_cuckoo_query q;
};

/* Words of the packed table of m buckets at f bits; 0 on overflow. */
uint64_t amq__ctab_words(uint64_t buckets, unsigned fbits);

/* Build a one-table filter (zeroed). Checks every shape argument
 * (AMQ_ERR_INVALID), including that the kind builds these ranges. */
amq_status amq__ctab_new(const amq__ctab_kind *kind, uint64_t buckets,
                         unsigned fbits, const uint32_t range[AMQ__CT_RANGES],
                         unsigned max_kicks, const amq_options *opt,
                         amq_cuckoo **out);

/* Sizing: buckets for `capacity` keys at design load `load` (before the
 * type rounds the table); AMQ_ERR_INVALID / AMQ_ERR_OVERFLOW. */
amq_status amq__ctab_slots_for(uint64_t capacity, double load,
                               uint64_t *buckets);

/* Fingerprint width from a spec's fp= or from fpr (explicit wins); with
 * growth the width from fpr gets one more bit (the chain's compound bound
 * then stays below fpr). */
amq_status amq__ctab_spec_fp(amq__spec *spec, double fpr, bool grow,
                             unsigned *fbits, amq_diag *diag);
amq_status amq__ctab_spec_kicks(amq__spec *spec, unsigned *kicks,
                                amq_diag *diag);
/* grow=0|1, max_links=N, max_bytes=B (the last two need grow=1). */
amq_status amq__ctab_spec_growth(amq__spec *spec, unsigned *max_links,
                                 uint64_t *max_bytes, amq_diag *diag);
/* ",grow=1,max_links=N,max_bytes=B" for a growing filter, else "". */
size_t amq__ctab_describe_growth(const amq_cuckoo *c, char *buf, size_t cap);

/* The generic-interface callbacks both types share, with the slot
 * signatures of type/type.h (the object is an amq_cuckoo; load and curve
 * read the kind from self->variant). */
void amq__ctab_destroy(amq__obj *o);
amq_status amq__ctab_add(amq__obj *o, uint64_t h);
amq_status amq__ctab_add_batch(amq__obj *o, const uint64_t *h, size_t n,
                               size_t *done);
/* The chain loop: every shape, and the AMQ_OPT_SCALAR reference. */
bool amq__ctab_contains(const amq__obj *o, uint64_t h);
void amq__ctab_contains_batch(const amq__obj *o, const uint64_t *h, size_t n,
                              uint8_t *out);
amq_status amq__ctab_remove(amq__obj *o, uint64_t h);
amq_status amq__ctab_count(const amq__obj *o, uint64_t h, uint64_t *out);
double amq__ctab_bound(const amq__obj *o);
size_t amq__ctab_describe(const amq__obj *o, char *buf, size_t cap);
/* curve at b bits/key: fp= fixed (f / b load) or the ideal real-valued f
 * at the kind's design load; other keys of the type are consumed and
 * ignored so a describe() string is a valid curve spec. */
amq_status amq__ctab_curve(const amq__type *self, amq__spec *spec, double x,
                           bool inverse, double *out, amq_diag *diag);
void amq__ctab_params_write(const amq__obj *o, amq__wr *w);
void amq__ctab_payload_write(const amq__obj *o, uint8_t *dst);
amq_status amq__ctab_load(const amq__type *self, amq__rd *r,
                          const uint8_t *payload, size_t len, bool view,
                          const amq_options *opt, amq__obj **out);
/* Growth settings from a spec applied to a new filter (diag on failure,
 * which frees it). */
amq_status amq__ctab_apply_growth(amq_cuckoo *c, unsigned links,
                                  uint64_t max_bytes, amq_diag *diag);

/* Design loads: tables are sized so capacity keys fill at most this
 * fraction of the slots (before the small-table margin and rounding).
 * docs/structures.md ("Cuckoo family") has the measurements behind them. */
#define AMQ__CT_CUCKOO_LOAD 0.95
#define AMQ__CT_VACUUM_LOAD 0.94

/* The descriptor slots cuckoo and vacuum share (all but info, variant,
 * reads, kernel_shapes and create). */
#define AMQ__CTAB_SLOTS                                                        \
    .load = amq__ctab_load, .destroy = amq__ctab_destroy,                      \
    .add = amq__ctab_add, .add_batch = amq__ctab_add_batch,                    \
    .contains = amq__ctab_contains,                                            \
    .contains_batch = amq__ctab_contains_batch, .remove = amq__ctab_remove,    \
    .count = amq__ctab_count, .fpr_bound = amq__ctab_bound,                    \
    .describe = amq__ctab_describe, .curve = amq__ctab_curve,                  \
    .params_write = amq__ctab_params_write,                                    \
    .payload_write = amq__ctab_payload_write,

#endif
