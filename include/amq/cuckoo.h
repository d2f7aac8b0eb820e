/*
 * amq/cuckoo.h — cuckoo and vacuum filters: fingerprints in a table of
 * buckets of four slots, two candidate buckets per key, deletions and
 * duplicate counting, and optional growth by chaining tables.
 *
 * Both structures are made, filled, queried, saved and freed through
 * amq/filter.h as "cuckoo" and "vacuum":
 *   cuckoo:fp=BITS,buckets=N,max_kicks=N   (or a capacity and fpr)
 *   vacuum:fp=BITS,buckets=N,chunk=L,max_kicks=N
 * and grow=1,max_links=N,max_bytes=B for growth. This header has what the
 * generic interface does not say: the sizing mathematics, the shape of a
 * filter's tables (amq_cuckoo_of gives the structure of such a filter)
 * and its growth settings.
 *
 *   cuckoo   Fan, Andersen, Kaminsky, Mitzenmacher, "Cuckoo filter:
 *            practically better than Bloom" (CoNEXT 2014). A table of any
 *            even number m of buckets of 4 slots; a key stores an f-bit
 *            fingerprint (4 <= f <= 32) in bucket i1 or its alternate i2
 *            (partial-key cuckoo hashing: i2 from i1 and the fingerprint
 *            only), evicting residents along a random walk of at most
 *            max_kicks steps when both are full. Power-of-two tables use
 *            i2 = i1 xor delta(fp); other even sizes i1 + i2 = H(fp) mod m
 *            with H odd, so a table sized from a capacity is only as large
 *            as that capacity needs (about f / 0.95 bits per key).
 *   vacuum   Wang, Zhou, Shi, Qian, "Vacuum filters: more space-efficient
 *            and faster replacement for Bloom and cuckoo filters" (PVLDB 13,
 *            2019). The same table, but delta stays inside an aligned chunk
 *            of L buckets (four alternate ranges L0 >= L1 >= L2 >= L3 chosen
 *            by a balls-into-bins bound), so both buckets of a key are
 *            close together; the table is a multiple of L0 (a table of one
 *            chunk is a power of two).
 *
 * A vacuum filter is a cuckoo filter with alternate ranges: both use the
 * amq_cuckoo handle and every amq_cuckoo_* function below.
 *
 * Spec keys: fp=BITS (4-32; from fpr: ceil(log2(8 / fpr)), one more bit
 * with grow=1), buckets=N (cuckoo: even, 2 .. 2^31, a power of two selects
 * the xor form, any other even size the sum form; vacuum: a multiple of the
 * chunk), chunk=L (vacuum: the largest alternate range, a power of two
 * dividing buckets; by default chosen from buckets), max_kicks=N (0 ..
 * AMQ_CUCKOO_MAX_KICKS, default 500). A bad key or value is AMQ_ERR_SPEC;
 * an fpr below what 32-bit fingerprints reach, AMQ_ERR_INVALID.
 *
 * Guarantees. No false negatives for every key added and not removed
 * (but see "Failure modes" for removals). A key never added is reported with
 * probability at most
 *     1 - (1 - q * p2)^items,  q = ceil(2^32 / (2^f - 1)) / 2^32,
 *                              p2 = 2 * ceil(2^32 / m) / 2^32
 * (about 8 * load / 2^f; m buckets), and for a chain of tables
 * 1 - prod_i (1 - bound_i): amq_filter_fpr_bound, derived in
 * docs/structures.md. Sized from (capacity, fpr), f = ceil(log2(8 / fpr))
 * and the table holds capacity keys below the load where inserts start to
 * fail. Cuckoo: the smallest even table holding capacity keys at a safe
 * load (design load 0.95 plus a margin for small tables; the first failure
 * comes at 0.96-0.975). Vacuum: the minimum table rounded up to whole
 * chunks (4096-65536 buckets); e.g. 10^6 keys at fpr 0.01 take 10.8
 * bits/key (cuckoo: 10.5; a power-of-two cuckoo table: 21.0); small
 * capacities (one chunk) get a power-of-two table.
 *
 * Growth (amq_cuckoo_set_growth, or grow=1 in a spec): when the newest
 * table refuses a key, a table with twice the buckets and one more
 * fingerprint bit (up to 32) is appended and takes it. Queries ask every
 * table, count sums them, remove takes a copy from the newest table that
 * holds the key's fingerprint in its buckets. Each table's bound halves at
 * equal load, so the compound bound stays below about twice the first
 * table's: build with fpr / 2 to keep it below fpr (the spec does).
 *
 * Failure modes. An add can fail with AMQ_ERR_FULL (table too full and no
 * growth or the growth caps reached, or the same key added more than 8
 * times into one table) or AMQ_ERR_NOMEM (a new table could not be
 * allocated); the filter is then exactly as before (the eviction walk is
 * undone) and every key added before is still found. Removing a key that
 * was never added may remove another key's fingerprint (a false-positive
 * delete) and so create a false negative: remove only keys you added. In a
 * chain, removing a held key takes the copy in the newest table whose
 * buckets hold its fingerprint; with probability at most the newer tables'
 * bounds that copy is another key's, which may then be lost (the same
 * effect as a false-positive delete).
 *
 * Ownership: the amq_cuckoo of a filter (amq_cuckoo_of) is the filter's
 * own object, released with it by amq_filter_free. Thread-safety: queries
 * and the getters are safe from any number of threads while nobody
 * modifies; updates and amq_cuckoo_set_growth need external locking.
 * Complexity: contains reads two buckets per table (two cache lines at
 * most); add is O(1) expected, O(max_kicks) worst case (plus allocating a
 * table when growing); remove and count read two buckets per table.
 */
#ifndef AMQ_CUCKOO_H
#define AMQ_CUCKOO_H

#include "amq/core.h"
#include "amq/filter.h"

#ifdef __cplusplus
extern "C" {
#endif

#define AMQ_CUCKOO_SLOTS 4  /* slots per bucket                     */
#define AMQ_CUCKOO_MIN_FP 4 /* fingerprint bits                     */
#define AMQ_CUCKOO_MAX_FP 32
#define AMQ_CUCKOO_MAX_BUCKETS (UINT64_C(1) << 31)
#define AMQ_CUCKOO_MAX_KICKS 100000
#define AMQ_CUCKOO_DEFAULT_KICKS 500
#define AMQ_CUCKOO_MAX_LINKS 32 /* tables in a growing filter           */

typedef struct amq_cuckoo amq_cuckoo;

/* The structure of a filter of type "cuckoo" or "vacuum" made with amq/filter.h (its own
 * object, valid while the filter lives); NULL for any other filter. */
AMQ_API amq_cuckoo *amq_cuckoo_of(const amq_filter *f);

/* ---- the mathematics (pure functions) ---------------------------------- */

/* Fingerprint bits for a target rate: ceil(log2(2 * 4 / fpr)), at least 4;
 * 0 if fpr is outside (0, 1) or needs more than 32 bits. */
AMQ_API unsigned amq_cuckoo_fp_bits_for(double fpr);
/* Expected false-positive rate of a table at load factor `load` (items per
 * slot) with f-bit fingerprints: 1 - exp(-8 * load * q), q as above. */
AMQ_API double amq_cuckoo_fpr(double load, unsigned fp_bits);

/* ---- growth ------------------------------------------------------------ */

/* Growth by chaining: max_links in [1, AMQ_CUCKOO_MAX_LINKS] tables at
 * most (1 turns growth off), max_bytes a cap on the tables' total bytes
 * (0 = none). May be called at any time; AMQ_ERR_INVALID (nothing changes)
 * if the filter already has more tables or bytes than the caps allow, or
 * max_bytes != 0 with max_links == 1, or c is NULL; AMQ_ERR_UNSUPPORTED for
 * a view (amq_filter_view: its tables are the caller's, read-only). An add
 * past the caps fails with AMQ_ERR_FULL, the filter unchanged. */
AMQ_API amq_status amq_cuckoo_set_growth(amq_cuckoo *c, unsigned max_links,
                                         uint64_t max_bytes);

/* ---- properties --------------------------------------------------------- */

/* Buckets, fingerprint bits and ranges of the first table. */
AMQ_API uint64_t amq_cuckoo_buckets(const amq_cuckoo *c);
AMQ_API unsigned amq_cuckoo_fp_bits(const amq_cuckoo *c);
/* The four alternate ranges (all equal to buckets for a cuckoo filter). */
AMQ_API void amq_cuckoo_ranges(const amq_cuckoo *c, uint64_t ranges[4]);
/* Tables in the chain (1 for a filter that never grew), and table i's
 * shape and slots in use (any pointer may be NULL); AMQ_ERR_INVALID if
 * i >= amq_cuckoo_links(c). */
AMQ_API unsigned amq_cuckoo_links(const amq_cuckoo *c);
AMQ_API amq_status amq_cuckoo_link_info(const amq_cuckoo *c, unsigned i,
                                        uint64_t *buckets, unsigned *fp_bits,
                                        uint64_t *items);
/* items / (4 * buckets of every table). */
AMQ_API double amq_cuckoo_load(const amq_cuckoo *c);

#ifdef __cplusplus
}
#endif
#endif
