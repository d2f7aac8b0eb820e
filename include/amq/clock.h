/*
 * amq/clock.h — logical clocks: the Bloom clock (Ramabaja 2019) and the
 * vector clock it replaces, behind one comparison API.
 *
 * A logical timestamp answers "did A happen before B?". A vector clock
 * answers exactly but carries one counter per node that ever had an event.
 * A Bloom clock is a fixed array of m counters: a local event, identified
 * by some bytes, increments the k counters its hash picks (tick); a
 * received timestamp is folded in by a cell-wise maximum (merge). Then
 *
 *   - "concurrent" is certain: if some cell of A exceeds B's, A is not in
 *     B's past (no false negatives: a truly ordered pair is never reported
 *     concurrent);
 *   - "before"/"after" may be false: B can dominate A cell-wise by chance.
 *     Every such verdict carries two claimed false-positive probabilities:
 *       fp_paper  the paper's eq. (3): (1 - (1 - 1/m)^S_B)^S_A with S the
 *                 sums of all cells (S_B >= S_A);
 *       fp_exact  ours (docs/clock.md): the probability that D + k uniform
 *                 increments cover k given cells, D = S_B - S_A — exact when
 *                 A's history private to it is one event, the most likely
 *                 way a concurrent pair ends up dominated, and an upper
 *                 bound for larger private parts.
 *     A threshold on one of them turns the verdict into a decision.
 *
 * Both kinds are an opaque amq_clock. Functions that only make sense for
 * one kind return AMQ_ERR_UNSUPPORTED on the other; functions given two
 * clocks of different kinds or shapes (Bloom: m, k, hash kind/seed/key;
 * dense vector: membership) return AMQ_ERR_INCOMPATIBLE, never a verdict.
 *
 * Storage: Bloom clock cells keep the common minimum in a 64-bit offset
 * (paper §4), so cells stay small; they start 8 bits wide and widen to
 * 16, 32, 64 bits when a cell would not fit. A counter never wraps: what
 * cannot be represented (an absolute value above 2^64 - 1) is reported as
 * AMQ_ERR_OVERFLOW and the clock is left unchanged.
 *
 * History: a Bloom clock may keep its last `history` timestamps in a ring
 * (each tick or changing merge records one). amq_clock_compare_history
 * uses them as the paper suggests: when the remote clock is dominated, it
 * finds the oldest recorded timestamp that still dominates it (a binary
 * search: a node's timestamps only grow) and reports the probabilities for
 * that one, which are smaller.
 *
 * Errors: every fallible call returns amq_status and leaves its clock
 * unchanged on failure. Ownership: *_new/_clone/_load return a clock the
 * caller releases with amq_clock_free (NULL accepted). Thread-safety: a
 * clock nobody modifies may be read from any number of threads.
 */
#ifndef AMQ_CLOCK_H
#define AMQ_CLOCK_H

#include "amq/filter.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct amq_clock amq_clock;

typedef enum amq_clock_kind {
    AMQ_CLOCK_BLOOM = 1,
    AMQ_CLOCK_VECTOR_DENSE = 2, /* one counter per member, zeros included  */
    AMQ_CLOCK_VECTOR_SPARSE = 3 /* (node id, counter) for nonzero counters */
} amq_clock_kind;

typedef enum amq_order {
    AMQ_ORDER_EQUAL = 0,
    AMQ_ORDER_BEFORE = 1,    /* a happened before b (a <= b, a != b)      */
    AMQ_ORDER_AFTER = 2,     /* b happened before a                        */
    AMQ_ORDER_CONCURRENT = 3 /* certain, for both kinds                    */
} amq_order;

typedef struct amq_clock_verdict {
    amq_order order;
    /* Claimed probability that a before/after verdict is false; 0 for a
     * vector clock and for equal/concurrent verdicts. */
    double fp_paper;
    double fp_exact;
    /* Sums of all cells of the dominated and the dominating clock (Bloom;
     * for equal/concurrent: of a and b), as doubles. */
    double sum_low, sum_high;
    /* compare_history: how many recorded steps back the timestamp used for
     * the probabilities lies (0: the current one). */
    uint32_t history_age;
} amq_clock_verdict;

/* Largest m and k accepted. */
#define AMQ_CLOCK_MAX_M (1u << 24)
#define AMQ_CLOCK_MAX_K 64u
#define AMQ_CLOCK_MAX_HISTORY 65536u

/* ---- construction --------------------------------------------------------- */

/* A Bloom clock of m cells (1..AMQ_CLOCK_MAX_M), k hashes (1..min(m, 64)),
 * remembering its last `history` timestamps (0..AMQ_CLOCK_MAX_HISTORY).
 * Hashing from opt (XXH3 by default; AMQ_HASH_SIPHASH with opt->hash_key,
 * or a random key when NULL, for event identifiers an adversary chooses).
 * Errors: AMQ_ERR_INVALID, AMQ_ERR_HASH, AMQ_ERR_OVERFLOW, AMQ_ERR_NOMEM. */
AMQ_API amq_status amq_clock_new_bloom(uint32_t m, uint32_t k, uint32_t history,
                                       const amq_options *opt, amq_clock **out);

/* A vector clock owned by node `self` (ticks increment self's counter).
 * dense: counters for exactly the members (self is a member from the
 * start; others join/leave); sparse: counters for whoever has a nonzero
 * one. Errors: AMQ_ERR_INVALID (kind), AMQ_ERR_NOMEM. */
AMQ_API amq_status amq_clock_new_vector(amq_clock_kind kind, uint64_t self,
                                        const amq_options *opt,
                                        amq_clock **out);

AMQ_API void amq_clock_free(amq_clock *c);
/* A deep copy (with history). Errors: AMQ_ERR_NOMEM. */
AMQ_API amq_status amq_clock_clone(const amq_clock *c, amq_clock **out);
/* A copy of c's timestamp and shape (Bloom: m, k, hasher; vector: self
 * and the entries) with no history: what a received timestamp is decoded
 * into (amq_clock_decode) to compare it with c. Errors: AMQ_ERR_NOMEM. */
AMQ_API amq_status amq_clock_clone_bare(const amq_clock *c, amq_clock **out);
/* dst := src's timestamp (not its history; dst records it as a step).
 * Errors: AMQ_ERR_INCOMPATIBLE, AMQ_ERR_NOMEM. */
AMQ_API amq_status amq_clock_assign(amq_clock *dst, const amq_clock *src);

/* ---- the clock operations ---------------------------------------------------- */

/* A local event. Bloom: the event's bytes are hashed (k cells += 1);
 * vector: the bytes are ignored and self's counter += 1.
 * Errors: AMQ_ERR_OVERFLOW, AMQ_ERR_NOMEM (widening or a vector entry). */
AMQ_API amq_status amq_clock_tick(amq_clock *c, const void *event, size_t len);
/* Bloom only: a local event given by its 64-bit hash. */
AMQ_API amq_status amq_clock_tick_hash(amq_clock *c, uint64_t event_hash);

/* c := max(c, other), cell-wise or entry-wise (receive). Commutative,
 * associative and idempotent. Dense vectors must share the membership.
 * Errors: AMQ_ERR_INCOMPATIBLE, AMQ_ERR_OVERFLOW, AMQ_ERR_NOMEM. */
AMQ_API amq_status amq_clock_merge(amq_clock *c, const amq_clock *other);

/* Order of a relative to b. Errors: AMQ_ERR_INCOMPATIBLE. */
AMQ_API amq_status amq_clock_compare(const amq_clock *a, const amq_clock *b,
                                     amq_clock_verdict *out);

/* Like amq_clock_compare(local, remote) but, when remote is dominated by
 * local, the probabilities come from the oldest timestamp in local's
 * history that still dominates remote (history_age says which). Vector
 * clocks: same as compare. Errors: AMQ_ERR_INCOMPATIBLE. */
AMQ_API amq_status amq_clock_compare_history(const amq_clock *local,
                                             const amq_clock *remote,
                                             amq_clock_verdict *out);

/* ---- membership (vector clocks; Bloom clocks need none: AMQ_OK) ---------- */

/* Dense: add node with counter 0 (AMQ_OK if already a member). Sparse: no
 * change. Errors: AMQ_ERR_NOMEM. */
AMQ_API amq_status amq_clock_join(amq_clock *c, uint64_t node);
/* Forget node's counter: the caller asserts every event of node is stable
 * (known to everyone), so dropping it changes no future comparison.
 * Errors: AMQ_ERR_INVALID (node is self). */
AMQ_API amq_status amq_clock_leave(amq_clock *c, uint64_t node);

/* ---- inspection ------------------------------------------------------------- */

AMQ_API amq_clock_kind amq_clock_kind_of(const amq_clock *c);
/* Bloom: m; vector: number of entries. */
AMQ_API size_t amq_clock_size(const amq_clock *c);
/* Bloom: k; vector: 0. */
AMQ_API uint32_t amq_clock_k(const amq_clock *c);
/* Bloom: cell i's absolute value (offset included); vector: the counter of
 * node i (0 if absent). */
AMQ_API uint64_t amq_clock_get(const amq_clock *c, uint64_t i);
/* Vector: entry i (0 <= i < amq_clock_size) in increasing node order.
 * Errors: AMQ_ERR_INVALID (i out of range), AMQ_ERR_UNSUPPORTED (Bloom). */
AMQ_API amq_status amq_clock_entry(const amq_clock *c, size_t i, uint64_t *node,
                                   uint64_t *counter);
/* Bloom: the common minimum kept outside the cells; vector: 0. */
AMQ_API uint64_t amq_clock_offset(const amq_clock *c);
/* Bloom: bits per stored cell (8, 16, 32 or 64); vector: 64. */
AMQ_API unsigned amq_clock_cell_bits(const amq_clock *c);
/* Sum of all cells or counters, as a double. */
AMQ_API double amq_clock_sum(const amq_clock *c);
/* Timestamps currently recorded in the history ring. */
AMQ_API uint32_t amq_clock_history_len(const amq_clock *c);

/* Bloom, paper §3: did the step from the recorded timestamp `age` + 1
 * steps back to the one `age` steps back consist of exactly the local
 * event `event` (its k increments and nothing else)? *out false when the
 * step also merged something else in.
 * Errors: AMQ_ERR_INVALID (age + 1 not recorded), AMQ_ERR_UNSUPPORTED. */
AMQ_API amq_status amq_clock_history_explains(const amq_clock *c, uint32_t age,
                                              const void *event, size_t len,
                                              bool *out);

/* ---- the two false-positive estimates ------------------------------------- */

/* Eq. (3) of the paper for sums s_low <= s_high over m cells. */
AMQ_API double amq_clock_fp_paper(uint32_t m, double s_low, double s_high);
/* Ours: probability that d + k uniform increments over m cells hit each of
 * k given cells at least once (stable for tiny results). */
AMQ_API double amq_clock_fp_exact(uint32_t m, uint32_t k, double d);

/* ---- wire encoding (one message; no frame) -------------------------------- */

/* Compact encoding of c's timestamp: a tag, the shape (Bloom: m, k and a
 * 32-bit tag of the hasher that reveals nothing of a key), the offset, the
 * cells as varints or bit-packed (whichever is smaller), and a 32-bit
 * check. Bytes needed for it: */
AMQ_API size_t amq_clock_encoded_size(const amq_clock *c);
/* Errors: AMQ_ERR_BUFFER (cap too small; *len says how much is needed). */
AMQ_API amq_status amq_clock_encode(const amq_clock *c, uint8_t *buf,
                                    size_t cap, size_t *len);
/* Replace into's timestamp by the one in buf (into's history records it).
 * Only the canonical encoding (what amq_clock_encode writes) is accepted.
 * Errors: AMQ_ERR_CORRUPT (truncated, bad check, non-canonical),
 * AMQ_ERR_INCOMPATIBLE (another kind or shape), AMQ_ERR_NOMEM. */
AMQ_API amq_status amq_clock_decode(amq_clock *into, const uint8_t *buf,
                                    size_t len);

/* ---- storage in the common frame (docs/format.md; type ids 300/301) ------- */

/* Frame size; 0 on overflow. The frame holds the timestamp, the shape, the
 * hasher and the history capacity (not the recorded history). */
AMQ_API size_t amq_clock_save_size(const amq_clock *c);
/* Errors: AMQ_ERR_BUFFER. */
AMQ_API amq_status amq_clock_save(const amq_clock *c, uint8_t *buf, size_t cap,
                                  size_t *len);
/* Errors: AMQ_ERR_CORRUPT, AMQ_ERR_CHECKSUM, AMQ_ERR_VERSION, AMQ_ERR_HASH,
 * AMQ_ERR_KIND (the frame holds a filter or a cascade; diag says which),
 * AMQ_ERR_NOMEM (diag says where). opt supplies only the allocator. */
AMQ_API amq_status amq_clock_load(const uint8_t *buf, size_t len,
                                  const amq_options *opt, amq_clock **out,
                                  amq_diag *diag);

/* The frame in a file: written to a temporary file and renamed (0600 when
 * the clock is keyed), read whole. Errors: those of save and load, and
 * AMQ_ERR_IO (diag says which call failed on which path). */
AMQ_API amq_status amq_clock_save_file(const amq_clock *c, const char *path,
                                       amq_diag *diag);
AMQ_API amq_status amq_clock_load_file(const char *path, const amq_options *opt,
                                       amq_clock **out, amq_diag *diag);

AMQ_API const char *amq_order_name(amq_order o);

#ifdef __cplusplus
}
#endif
#endif
