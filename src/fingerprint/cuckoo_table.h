/*
 * cuckoo_table.h — the bucket table shared by the cuckoo and vacuum filters
 * (private). cuckoo.c implements it; vacuum.c only chooses the table size
 * and the alternate ranges, then uses the same table.
 *
 * A table is m buckets of 4 slots of f bits (4 <= f <= 32), bit-packed
 * little-endian into 64-bit words: slot s of bucket b is bits
 * [(4b + s) f, (4b + s + 1) f). Slot value 0 means empty; fingerprints are
 * 1 .. 2^f - 1. A fingerprint's alternate bucket is
 *
 *     alt(b, fp) = b xor (1 + reduce(mix(fp) >> 32, L - 1)),
 *     L = range[mix(fp) & 3],
 *
 * an involution that never maps b to itself and stays inside b's aligned
 * chunk of L buckets (L a power of two dividing m). A cuckoo filter has
 * range[0..3] = m (one chunk); a vacuum filter has m a multiple of range[0]
 * and range[0] >= range[1] >= range[2] >= range[3].
 */
#ifndef AMQ_SRC_FINGERPRINT_CUCKOO_TABLE_H
#define AMQ_SRC_FINGERPRINT_CUCKOO_TABLE_H

#include "amq/cuckoo.h"
#include "core/mem.h"
#include "filter/type.h"

#define AMQ__CT_RANGES 4

/* The typed handle is the table itself. */
struct amq_cuckoo {
    amq__mem mem;
    amq__block table;   /* owned storage; raw == NULL for a view          */
    const uint64_t *rd; /* what queries read                              */
    uint64_t *wr;       /* the same words when writable; NULL for a view  */
    uint64_t nwords;
    uint64_t items;     /* occupied slots (copies of duplicates included)  */
    uint32_t buckets;   /* m, 2 .. 2^31                                    */
    uint32_t range[AMQ__CT_RANGES];
    unsigned fbits;
    unsigned max_kicks;
    bool scalar;        /* AMQ_OPT_SCALAR: no SWAR bucket compare          */
};

typedef struct amq_cuckoo amq__ctab;

/* Words of the packed table of m buckets at f bits; 0 on overflow. */
uint64_t amq__ctab_words(uint64_t buckets, unsigned fbits);

/* Build a table (zeroed, or borrowing `borrow` read-only as a view).
 * Checks every shape argument (AMQ_ERR_INVALID). */
amq_status amq__ctab_new(uint64_t buckets, unsigned fbits,
                         const uint32_t range[AMQ__CT_RANGES],
                         unsigned max_kicks, const amq_options *opt,
                         const uint64_t *borrow, amq__ctab **out);

/* Sizing: buckets for `capacity` keys at the design load (before rounding);
 * AMQ_ERR_INVALID / AMQ_ERR_OVERFLOW. */
amq_status amq__ctab_slots_for(uint64_t capacity, uint64_t *buckets);

/* Fingerprint width from a spec's fp= or from fpr (explicit wins). */
amq_status amq__ctab_spec_fp(amq__spec *spec, double fpr, unsigned *fbits,
                             amq_diag *diag);
amq_status amq__ctab_spec_kicks(amq__spec *spec, unsigned *kicks,
                                amq_diag *diag);

/* The generic-interface callbacks both types share (impl is amq__ctab). */
void amq__ctab_t_destroy(void *impl);
amq_status amq__ctab_t_add(void *impl, uint64_t h);
bool amq__ctab_t_contains(const void *impl, uint64_t h);
void amq__ctab_t_batch(const void *impl, const uint64_t *h, size_t n,
                       uint8_t *out);
amq_status amq__ctab_t_remove(void *impl, uint64_t h);
amq_status amq__ctab_t_count(const void *impl, uint64_t h, uint64_t *out);
uint64_t amq__ctab_t_items(const void *impl);
size_t amq__ctab_t_size(const void *impl);
double amq__ctab_t_bound(const void *impl);
/* curve at b bits/key: fp= fixed (f / b load) or the ideal real-valued f
 * at the design load; other keys of the type are consumed and ignored so a
 * describe() string is a valid curve spec. */
amq_status amq__ctab_curve_fpr(amq__spec *spec, double bpk, double *out,
                               amq_diag *diag);
amq_status amq__ctab_curve_bits(amq__spec *spec, double fpr, double *out,
                                amq_diag *diag);
size_t amq__ctab_t_params_size(const void *impl);
void amq__ctab_t_params_write(const void *impl, uint8_t *dst);
size_t amq__ctab_t_payload_size(const void *impl);
void amq__ctab_t_payload_write(const void *impl, uint8_t *dst);
/* What load checks beyond the common shape: the ranges a type builds for
 * a table of that many buckets (so a frame relabelled as the other type is
 * refused). */
typedef struct amq__ctab_kind {
    const char *name;
    bool (*ranges_ok)(uint64_t buckets, const uint32_t range[AMQ__CT_RANGES]);
} amq__ctab_kind;

amq_status amq__ctab_load(const uint8_t *params, size_t plen,
                          const uint8_t *payload, size_t len, bool view,
                          const amq_options *opt, const amq__ctab_kind *kind,
                          void **impl, amq_diag *diag);

/* The design load: tables are sized so capacity keys fill at most this
 * fraction of the slots (before rounding up). */
#define AMQ__CT_DESIGN_LOAD 0.94

#endif
