/*
 * amq_leveldb.h — amq filters inside LevelDB tables, through LevelDB's C
 * API (leveldb/c.h): a filter policy any LevelDB program can set.
 *
 *     leveldb_filterpolicy_t *fp = amq_leveldb_filterpolicy("sbbf", 10);
 *     leveldb_options_set_filter_policy(options, fp);
 *     ... open, write, read, close every database using it ...
 *     leveldb_filterpolicy_destroy(fp);
 *
 * LevelDB builds one filter per 2 KiB of table data (in practice one per
 * data block) from the block's user keys and asks it before reading the
 * block. The policy builds the amq filter the allocation engine picks for
 * `spec` at `bits_per_key` (amq_alloc_curve_at: Bloom's k, Ribbon's bits,
 * a fingerprint width; see amq/alloc.h) and stores it as an amq frame
 * (docs/format.md), so a table is readable by any program with the same
 * policy. Queries view the stored frame in place (copied to an aligned
 * buffer when LevelDB's bytes are not 8-byte aligned), after checking it:
 * a corrupt filter answers "may match" (LevelDB then reads the block), so
 * a damaged filter costs reads, never a false negative.
 *
 * Space: each filter carries the frame's header and checksum (128-200
 * bytes), so per-block filters of a few dozen keys pay many bits per key
 * for them; use data blocks of 16-64 KiB (leveldb_options_set_block_size)
 * for filters whose size is their payload, or the trusted form below
 * (amq_leveldb_policy_new_trusted: a split-block bitset without a frame,
 * probed in place, as fast as LevelDB's own Bloom filter).
 * amq_leveldb_policy_stats reports the filter bytes written.
 *
 * The policy's name, stored in every table, is "amq:" + spec + "@" +
 * bits; a database must be reopened with a policy of the same name to use
 * its filters (LevelDB ignores filters of another name: no error, just no
 * filtering).
 *
 * Thread-safety: LevelDB may build and query filters from several threads
 * at once; the policy is safe for that (its counters are atomic).
 */
#ifndef AMQ_LEVELDB_H
#define AMQ_LEVELDB_H

#include <leveldb/c.h>
#include <stdint.h>

#include "amq/amq.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct amq_leveldb_policy amq_leveldb_policy;

typedef struct amq_leveldb_stats {
    uint64_t filters;       /* filters built                              */
    uint64_t keys;          /* keys given to them                         */
    uint64_t filter_bytes;  /* bytes of the frames written                */
    uint64_t payload_bytes; /* of which the filters' tables               */
    uint64_t probes;        /* key_may_match calls                        */
    uint64_t positives;     /* answered "may match"                       */
    uint64_t corrupt;       /* frames that failed to load (answered yes)  */
    double bound_sum;       /* sum of the probed filters' certified bounds,
                                while tracking is on (see below)           */
} amq_leveldb_stats;

/* A policy for spec (a structure spec the allocation engine knows: sbbf,
 * blocked, bloom, ribbon, fuse, xor, ...) at bits_per_key > 0. opt (may be
 * NULL) supplies the allocator and hash choice for the filters. *out owns
 * a LevelDB policy object (amq_leveldb_policy_get) and is released with
 * amq_leveldb_policy_free after every database using it is closed.
 * Errors: AMQ_ERR_SPEC (diag says why), AMQ_ERR_UNSUPPORTED (a type
 * without a curve), AMQ_ERR_INVALID (bits not positive, or a spec whose
 * pick at these bits is no filter at all, e.g. fuse8 below 9 bits/key),
 * AMQ_ERR_HASH, AMQ_ERR_NOMEM. */
amq_status amq_leveldb_policy_new(const char *spec, double bits_per_key,
                                  const amq_options *opt,
                                  amq_leveldb_policy **out, amq_diag *diag);

/* The trusted form, for filters the engine writes and reads itself: each
 * filter is the split-block bitset and one tag byte, with no frame, so it
 * costs its payload and a probe reads one 32-byte block and nothing else
 * (amq_sbbf_parquet_contains). Nothing is checked but the length, as
 * LevelDB checks its own Bloom filters: bytes damaged on disk may answer
 * "not here" for a key that is there (verify the table's checksums
 * with paranoid checks if the disk is not trusted), but no bytes make a
 * probe read outside the filter. spec must pick an sbbf; the hasher (xxh3
 * or xxh64, and its seed) is in the policy's name, "amq-trusted:" + spec
 * + "@" + bits + ":" + hash + ":" + seed. AMQ_ERR_UNSUPPORTED for another
 * type or a keyed (SipHash) hasher; otherwise as amq_leveldb_policy_new. */
amq_status amq_leveldb_policy_new_trusted(const char *spec, double bits_per_key,
                                          const amq_options *opt,
                                          amq_leveldb_policy **out,
                                          amq_diag *diag);

/* The LevelDB object to pass to leveldb_options_set_filter_policy
 * (borrowed: owned by the policy). */
leveldb_filterpolicy_t *amq_leveldb_policy_get(amq_leveldb_policy *p);

/* The spec and rate each filter is built with (the engine's pick). */
const char *amq_leveldb_policy_spec(const amq_leveldb_policy *p);
double amq_leveldb_policy_fpr(const amq_leveldb_policy *p);

/* Counters since creation (or the last reset). */
void amq_leveldb_policy_stats(const amq_leveldb_policy *p,
                              amq_leveldb_stats *out);
void amq_leveldb_policy_reset_stats(amq_leveldb_policy *p);

/* Sum each probed filter's certified bound into bound_sum (off by
 * default: for Bloom-like types the bound is a Poisson average that costs
 * more than the probe). */
void amq_leveldb_policy_track_bounds(amq_leveldb_policy *p, bool on);

/* Destroys the LevelDB object and the policy; NULL is accepted. */
void amq_leveldb_policy_free(amq_leveldb_policy *p);

/* The one-call form: a LevelDB filter policy released with
 * leveldb_filterpolicy_destroy; NULL if spec or bits_per_key is refused
 * (as amq_leveldb_policy_new). */
leveldb_filterpolicy_t *amq_leveldb_filterpolicy(const char *spec,
                                                 double bits_per_key);

#ifdef __cplusplus
}
#endif
#endif
