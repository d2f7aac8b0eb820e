/*
 * amq/filter.h — one dynamic interface over every membership structure.
 *
 * A filter is created from a spec string, NAME[:key=value,...], e.g.
 *   "bloom"  "bloom:k=5"  "blocked"  "sbbf"  "bloom:m=8000000,k=6"
 * together with a target (capacity n, false-positive rate eps), or from
 * explicit parameters in the spec (then capacity/eps may be 0).
 * amq_filter_type_count()/amq_filter_type_at() list the types and their
 * parameters.
 *
 * Guarantees shared by every type:
 *   - no false negatives: a key added (and not removed) is always reported;
 *   - amq_filter_fpr_bound() is an upper bound on the false-positive
 *     probability for a key never added, at the current load, computed from
 *     the structure's parameters and item count, or from its contents where
 *     that is exact (bloom, blocked, sbbf, partitioned: the rate of this very
 *     table; see docs/structures.md);
 *   - a failing call returns a status and leaves the filter unchanged;
 *   - operations a type does not support return AMQ_ERR_UNSUPPORTED.
 *
 * Diagnostics: calls taking an amq_diag * (may be NULL) write it only when
 * they fail, and only for failures with something to say (a spec typo, a
 * corrupt byte): it is never written on success, and not for
 * AMQ_ERR_NOMEM, so clear it before the call if you print it.
 *
 * Ownership: amq_filter_new/load/view return a filter the caller releases
 * with amq_filter_free (NULL is accepted). A view borrows the caller's buffer,
 * which must stay valid and unmodified until the view is freed.
 *
 * Thread-safety: concurrent queries are safe while nobody modifies the filter.
 * Concurrent add() is safe only for filters created with AMQ_OPT_CONCURRENT
 * on a type whose info lists AMQ_CAP_CONCURRENT.
 */
#ifndef AMQ_FILTER_H
#define AMQ_FILTER_H

#include "amq/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct amq_filter amq_filter;

/* Capability bits in amq_type_info.caps (the type at its default
 * parameters) and amq_filter_caps (one filter, whose parameters may add or
 * drop some: spectral:mode=ms can remove). */
#define AMQ_CAP_REMOVE 0x01u     /* amq_filter_remove                        */
#define AMQ_CAP_COUNT 0x02u      /* amq_filter_count                         */
#define AMQ_CAP_UNION 0x04u      /* amq_filter_union                         */
#define AMQ_CAP_INTERSECT 0x08u  /* amq_filter_intersect                     */
#define AMQ_CAP_CONCURRENT 0x10u /* concurrent add with AMQ_OPT_CONCURRENT   */
#define AMQ_CAP_ESTIMATE 0x20u   /* amq_filter_estimate_items                */
#define AMQ_CAP_STATIC 0x40u     /* built once from all keys                 */
/* A frequency sketch, not a membership filter (topk): contains() answers
 * "is it a heavy hitter now" and may miss added keys; count() may undercount;
 * there is no FPR curve (amq_curve_* give AMQ_ERR_UNSUPPORTED). */
#define AMQ_CAP_SKETCH 0x80u
/* A filter for an endless stream that forgets old keys by design (stable):
 * only the most recently added key is promised to be reported; older ones
 * fade after about `capacity` later adds (docs/structures.md has the
 * retention curve). fpr_bound() still bounds the rate for keys never
 * added, and the rate settles at the target instead of climbing to 1. */
#define AMQ_CAP_FORGETS 0x100u
/* A range filter (amq/range.h): amq_range_query asks whether any key may
 * lie in [lo, hi]; point queries are ranges of one key. Its keys are kept
 * in order (AMQ_HASH_ORDER), not hashed. */
#define AMQ_CAP_RANGE 0x200u
/* An adaptive filter: amq_filter_report_fp tells it that a key it answered
 * "maybe" for is absent, and it answers "no" for that key from then on
 * (docs/structures.md, "Adaptive quotient filter"). */
#define AMQ_CAP_ADAPT 0x400u
/* A filter that grows: adds never fail for want of room (it doubles when
 * full, without the keys), and its bound stays near the target at every
 * size (docs/structures.md, "Expandable quotient filter"). */
#define AMQ_CAP_GROW 0x800u

typedef struct amq_type_info {
    const char *name;    /* canonical spec name, e.g. "sbbf"                 */
    uint16_t type_id;    /* id in the serialization frame (docs/format.md)   */
    uint32_t caps;       /* AMQ_CAP_*                                        */
    const char *summary; /* one line                                          */
    const char *params;  /* "key=meaning, ..." accepted in the spec           */
    amq_hash_kind default_hash; /* used when options leave hash at DEFAULT */
    /* Shapes beside the defaults worth measuring (specs, e.g.
     * "cuckoo:fp=12", the fingerprint width of the reference cuckoo
     * filter): the benchmark suite measures them by default.
     * NULL-terminated; NULL when there are none. */
    const char *const *shapes;
} amq_type_info;

/* The word for one AMQ_CAP_* bit ("remove", "static", "range", ...), as
 * `amq help types` and AMQ.INFO print it; NULL for any other value. */
AMQ_API const char *amq_cap_name(uint32_t bit);

AMQ_API size_t amq_filter_type_count(void);
/* NULL when i >= amq_filter_type_count(). */
AMQ_API const amq_type_info *amq_filter_type_at(size_t i);
/* Info for the type a spec names (parameters are not checked); NULL if the
 * name is unknown. */
AMQ_API const amq_type_info *amq_filter_type_find(const char *spec);

/* ---- construction ------------------------------------------------------ */

/* Create an empty filter sized for `capacity` keys at false-positive rate
 * `fpr` (0 < fpr < 1), or from explicit spec parameters.
 * Errors: AMQ_ERR_SPEC (unknown name, bad key or value; diag says where),
 * AMQ_ERR_INVALID (capacity/fpr out of range), AMQ_ERR_OVERFLOW (too large),
 * AMQ_ERR_NOMEM, AMQ_ERR_HASH (bad hash options). */
AMQ_API amq_status amq_filter_new(const char *spec, uint64_t capacity,
                                  double fpr, const amq_options *opt,
                                  amq_filter **out, amq_diag *diag);

/* Build a filter from all of its keys at once: the only way to create a
 * static type (AMQ_CAP_STATIC: xor, fuse, ribbon, ...), and for dynamic
 * types the same as amq_filter_new(spec, n, fpr) followed by add_hash of each
 * hash. (amq_builder in amq/builder.h does the hashing and collecting for
 * you, and sizes a static type for the distinct keys; here repeated hashes
 * are tolerated but count toward the size.) hashes must come from the hasher the filter will use: call
 * amq_filter_resolve_hasher(spec, opt, &h) first and pass the same opt
 * (with hash, hash_seed and hash_key set from h). Duplicate hashes are
 * tolerated; n == 0 builds an empty filter where the type allows it.
 * fpr may be 0 when the spec fixes the parameters.
 * Errors: as amq_filter_new, plus AMQ_ERR_FULL when a dynamic type fills
 * up, and the static type's construction failures (documented per type). */
AMQ_API amq_status amq_filter_build(const char *spec, const uint64_t *hashes,
                                    size_t n, double fpr,
                                    const amq_options *opt, amq_filter **out,
                                    amq_diag *diag);

AMQ_API void amq_filter_free(amq_filter *f);

/* The hasher amq_filter_new(spec, ..., opt) would give the filter: the
 * type's default kind unless opt chooses one, and for SipHash without a key
 * a freshly drawn random key. Pass the result back through opt (hash,
 * hash_seed, hash_key) to hash keys before the filter exists, e.g. to count
 * them first. Errors: AMQ_ERR_SPEC, AMQ_ERR_HASH. */
AMQ_API amq_status amq_filter_resolve_hasher(const char *spec,
                                             const amq_options *opt,
                                             amq_hasher *out);

/* ---- updates and queries ----------------------------------------------- */

/* Hash a byte key with this filter's hasher (what add/contains do). */
AMQ_API uint64_t amq_filter_hash(const amq_filter *f, const void *key,
                                 size_t len);

/* Errors: AMQ_ERR_READONLY (a view), AMQ_ERR_FULL (a type that can fill
 * up; the filter is unchanged), AMQ_ERR_UNSUPPORTED (static types). */
AMQ_API amq_status amq_filter_add(amq_filter *f, const void *key, size_t len);
AMQ_API amq_status amq_filter_add_hash(amq_filter *f, uint64_t hash);
/* add_hash of hashes[0], hashes[1], ... in order, stopping at the first
 * failure, whose status is returned: the keys before it are in, it and the
 * rest are not. *done (may be NULL) = keys added. The same result as the
 * loop; types that can overlap consecutive inserts' memory misses (qf, cqf)
 * do so. */
AMQ_API amq_status amq_filter_add_batch(amq_filter *f, const uint64_t *hashes,
                                        size_t n, size_t *done);

AMQ_API bool amq_filter_contains(const amq_filter *f, const void *key,
                                 size_t len);
AMQ_API bool amq_filter_contains_hash(const amq_filter *f, uint64_t hash);

/* out[i] = 1 if hashes[i] may be a member, else 0. Overlaps memory latency
 * (prefetch / SIMD); gives exactly the answers of contains_hash. */
AMQ_API void amq_filter_contains_batch(const amq_filter *f,
                                       const uint64_t *hashes, size_t n,
                                       uint8_t *out);

/* Remove one copy of a key that was added. Errors: AMQ_ERR_UNSUPPORTED,
 * AMQ_ERR_READONLY, AMQ_ERR_NOT_FOUND (nothing changed).
 * Remove only keys you added: in fingerprint filters (cuckoo, vacuum, qf,
 * cqf, dleft) a key never added whose fingerprint happens to be stored in
 * one of its slots (probability about the FPR) removes that fingerprint,
 * which belongs to another key, and that key may then be reported absent
 * (a false negative). Counting Bloom filters decrement counters that other
 * keys share in the same way. */
AMQ_API amq_status amq_filter_remove(amq_filter *f, const void *key,
                                     size_t len);
AMQ_API amq_status amq_filter_remove_hash(amq_filter *f, uint64_t hash);

/* Report a false positive to an adaptive filter (AMQ_CAP_ADAPT): key is
 * not in the set although the filter may have answered that it is. The
 * filter lengthens the fingerprints of the members key collided with, so
 * key is answered "no" from then on; a member is never answered "no".
 * *fixed (may be NULL) says whether anything changed: false when the
 * filter already answers "no" for key.
 * Errors: AMQ_ERR_UNSUPPORTED, AMQ_ERR_READONLY, AMQ_ERR_INVALID (key's
 * hash is a member's: it is in the set, or indistinguishable from a member
 * key), AMQ_ERR_NOMEM; a failing call changes nothing. */
AMQ_API amq_status amq_filter_report_fp(amq_filter *f, const void *key,
                                        size_t len, bool *fixed);
AMQ_API amq_status amq_filter_report_fp_hash(amq_filter *f, uint64_t hash,
                                             bool *fixed);

/* What an adaptive filter has learned, and what learning costs. */
typedef struct amq_adapt_stats {
    uint64_t reports;       /* reports that changed the filter              */
    uint64_t extended;      /* fingerprints that carry extension records    */
    uint64_t records;       /* extension records (one per member of those)  */
    size_t extension_bytes; /* the records' table, read by queries          */
    size_t map_bytes;       /* the reverse map: member hashes, read only to
                               adapt (amq_filter_size_bytes leaves it out)  */
} amq_adapt_stats;
/* Errors: AMQ_ERR_UNSUPPORTED (not adaptive), AMQ_ERR_INVALID. */
AMQ_API amq_status amq_filter_adapt_stats(const amq_filter *f,
                                          amq_adapt_stats *out);

/* Multiplicity estimate (never an undercount). AMQ_ERR_UNSUPPORTED if the
 * type does not count. */
AMQ_API amq_status amq_filter_count_hash(const amq_filter *f, uint64_t hash,
                                         uint64_t *out);

/* dst |= src / dst &= src for filters of the same type, shape and hasher.
 * Errors: AMQ_ERR_UNSUPPORTED, AMQ_ERR_INCOMPATIBLE, AMQ_ERR_READONLY.
 *
 * An intersection answers keys in every input, and a key in only some
 * inputs passes at the rate of an input that lacks it, not at the rate of
 * the AND's sparser table. So after amq_filter_intersect, fpr_bound() is
 * the largest of the inputs' bounds at that moment: a certified bound for
 * every key outside the intersection (keys in no input pass more rarely:
 * amq_filter_is_intersection gives that bound too). The frame keeps it
 * (docs/format.md). An intersection is final: it takes no more keys and no
 * union (AMQ_ERR_UNSUPPORTED; caps show AMQ_CAP_STATIC and no UNION), since
 * a key added later would void that bound; it may be intersected again. */
AMQ_API amq_status amq_filter_union(amq_filter *dst, const amq_filter *src);
AMQ_API amq_status amq_filter_intersect(amq_filter *dst, const amq_filter *src);
/* Whether f was made by amq_filter_intersect; if so and none_bound is not
 * NULL, *none_bound = the certified bound for keys in none of its inputs
 * (the table's own rate, below fpr_bound()). */
AMQ_API bool amq_filter_is_intersection(const amq_filter *f,
                                        double *none_bound);

/* Estimate of the number of distinct keys from the structure's contents
 * (e.g. Bloom fill ratio). AMQ_ERR_UNSUPPORTED where not available. */
AMQ_API amq_status amq_filter_estimate_items(const amq_filter *f, double *out);

/* ---- properties -------------------------------------------------------- */

AMQ_API const amq_type_info *amq_filter_info(const amq_filter *f);
/* AMQ_CAP_* of this filter: an operation outside them returns
 * AMQ_ERR_UNSUPPORTED and leaves the filter as it was. */
AMQ_API uint32_t amq_filter_caps(const amq_filter *f);
/* Number of add() calls that succeeded minus removes (a maplet with
 * op=sum counts each put of v as v adds: the sum of its values). */
AMQ_API uint64_t amq_filter_items(const amq_filter *f);
/* Capacity the filter was sized for (0 if built from explicit parameters). */
AMQ_API uint64_t amq_filter_capacity(const amq_filter *f);
/* Bytes of the structure's table(s): what bits/key is computed from. It
 * counts tables a structure derives and keeps beside the one it saves
 * (the prefix filter's route codes), so it can exceed the frame's
 * payload. */
AMQ_API size_t amq_filter_size_bytes(const amq_filter *f);
/* 8 * size_bytes / max(keys, 1): keys are the items, except in a maplet
 * with op=sum (not multiset), whose items are the sum of its values and
 * whose keys are the fingerprints it holds (amq_maplet_shape.distinct). */
AMQ_API double amq_filter_bits_per_key(const amq_filter *f);
/* Certified upper bound on the false-positive probability right now. */
AMQ_API double amq_filter_fpr_bound(const amq_filter *f);
/* The fpr the filter was built for (0 if explicit parameters). */
AMQ_API double amq_filter_target_fpr(const amq_filter *f);
AMQ_API const amq_hasher *amq_filter_hasher(const amq_filter *f);
AMQ_API bool amq_filter_is_view(const amq_filter *f);
/* Canonical spec with the filter's resolved parameters, e.g.
 * "bloom:m=9585059,k=7". Returns the length it needs (like snprintf). */
AMQ_API size_t amq_filter_describe(const amq_filter *f, char *buf, size_t cap);

/* ---- the type's false-positive curve (for the allocation engine) ------- */

/* Expected false-positive rate at `bits_per_key` bits per key for the type
 * (and fixed parameters) a spec names; and the inverse. Errors: AMQ_ERR_SPEC,
 * AMQ_ERR_INVALID (bits <= 0, fpr outside (0,1)). */
AMQ_API amq_status amq_curve_fpr(const char *spec, double bits_per_key,
                                 double *fpr);
AMQ_API amq_status amq_curve_bits(const char *spec, double fpr,
                                  double *bits_per_key);

/* ---- serialization (docs/format.md) ------------------------------------ */

/* Exact number of bytes amq_filter_save will write. */
AMQ_API size_t amq_filter_serialized_size(const amq_filter *f);

/* Write the frame into buf. AMQ_ERR_BUFFER if cap is too small (nothing
 * written past cap). */
AMQ_API amq_status amq_filter_save(const amq_filter *f, void *buf, size_t cap,
                                   size_t *written);

/* Parse and validate a frame (every field, and the checksum, before any
 * allocation) and copy it into a new filter. opt supplies the allocator and
 * flags; the hasher comes from the frame.
 * Errors: AMQ_ERR_CORRUPT, AMQ_ERR_CHECKSUM, AMQ_ERR_VERSION (unknown major
 * version, incompatible feature or type id), AMQ_ERR_KIND (a frame of amq's
 * that is not a filter: a clock or a learned cascade; diag says which and
 * what reads it), AMQ_ERR_NOMEM. */
AMQ_API amq_status amq_filter_load(const void *buf, size_t len,
                                   const amq_options *opt, amq_filter **out,
                                   amq_diag *diag);

/* Like load, but the filter reads its table in place from buf (zero copy):
 * buf must be 8-byte aligned (AMQ_ERR_ALIGN), outlive the view and stay
 * unmodified. The view answers queries; updates return AMQ_ERR_READONLY.
 * A type that keeps a derived table beside its saved one builds it here
 * from buf (the prefix filter's route bytes: one byte per 32- or 64-byte
 * bin), so a view of such a type allocates that much. */
AMQ_API amq_status amq_filter_view(const void *buf, size_t len,
                                   const amq_options *opt, amq_filter **out,
                                   amq_diag *diag);

/* ---- files -------------------------------------------------------------- */

/* Save f to path atomically: the frame is written to a new temporary file
 * beside path (PATH.tmp-<random>), fsync'ed, renamed over path, and the
 * directory is fsync'ed. A crash or an error leaves the old file as it was
 * (or no file) and removes the temporary file; a reader never sees a
 * partial frame. The file gets mode 0666 less the umask, or 0600 when the
 * hasher is keyed (SipHash: the secret key is stored in the frame).
 * Errors: AMQ_ERR_IO (diag names the path and the system's reason: no
 * such directory, no space, ...), AMQ_ERR_INVALID (NULL f or path),
 * AMQ_ERR_NOMEM, AMQ_ERR_OVERFLOW. Reads f only: safe while other threads
 * query f. */
AMQ_API amq_status amq_filter_save_file(const amq_filter *f, const char *path,
                                        amq_diag *diag);

/* Open a saved filter for queries. A regular file is mapped read-only and
 * viewed in place (zero copy: the pages are read on demand, nothing is
 * copied); the mapping belongs to the filter and is unmapped by
 * amq_filter_free. A type that cannot be viewed, a misaligned frame, a
 * pipe or a device is read and loaded as a copy instead;
 * amq_filter_is_view tells which. A view answers queries and refuses
 * updates with AMQ_ERR_READONLY: use amq_filter_load_file to modify.
 * The file must not be truncated or rewritten in place while a view reads
 * it (that raises SIGBUS); files replaced by rename, as
 * amq_filter_save_file does, are safe. opt supplies the allocator (may be
 * NULL). Errors: AMQ_ERR_IO (cannot open or read; diag says why), then
 * those of amq_filter_load (CORRUPT, CHECKSUM, VERSION, NOMEM) with the
 * byte offset in diag. */
AMQ_API amq_status amq_filter_open_file(const char *path,
                                        const amq_options *opt,
                                        amq_filter **out, amq_diag *diag);

/* Read a saved filter into a modifiable copy (the file is mapped while it
 * is parsed, then released). Errors: as amq_filter_open_file. */
AMQ_API amq_status amq_filter_load_file(const char *path,
                                        const amq_options *opt,
                                        amq_filter **out, amq_diag *diag);

#ifdef __cplusplus
}
#endif
#endif
