/*
 * amq/window.h — sliding-window filters: membership over the most recent
 * items or the most recent stretch of time, where keys older than the
 * window test absent (up to the false-positive rate) without being
 * deleted one by one.
 *
 * A window of span S (items, or time units of the caller's choosing) is
 * cut into G generations of length L = ceil(S / G). Every generation
 * holds the keys added during it:
 *   - the current generation in a quotient filter (amq/quotient.h) sized
 *     for C / G keys (C the capacity: the most keys one window takes);
 *   - each closed generation, by default, in a Ribbon filter built once
 *     from the quotient filter's fingerprints when the generation closes
 *     (seal=ribbon: close to the entropy bound, so the whole window costs
 *     about as much as one Bloom filter for C keys); with seal=qf the
 *     closed quotient filter itself is kept (no build when a generation
 *     closes, more memory).
 * A query asks every generation still inside the window. Generation g is
 * dropped once the current one is g + G + 1, so
 *   - a key added at time t is reported present at every time t' with
 *     t' - t < S (no false negatives inside the window), and
 *   - a key last added at t' - (G + 1) L or earlier, like a key never
 *     added, is reported present at most with the certified bound
 *     (amq_window_fpr_bound): the sum over the live generations of each
 *     one's bound at its load, at most the target while no generation
 *     takes more than C / G keys.
 * Between S and (G + 1) L after its last add a key may still answer
 * present. Adding a key again refreshes it (it joins the current
 * generation unless already there).
 *
 * Clocks. A count window (AMQ_WINDOW_ITEMS) advances by one at every add:
 * the span is a number of adds and `now` is ignored. A time window
 * (AMQ_WINDOW_TIME) takes the time from every call: `now` in the caller's
 * units (the Redis module passes milliseconds carried in the command, so
 * a replica replays the primary's times); a `now` earlier than the latest
 * one seen counts as the latest (time never runs backwards). When a time
 * window's generation receives more than C / G keys it closes early and
 * a new one opens in the same generation: nothing is refused and nothing
 * is lost, but memory and the bound grow with the excess (the bound says
 * so); at AMQ_WINDOW_MAX_PIECES live pieces an add is AMQ_ERR_FULL.
 *
 * Cost: a query asks up to G + 1 filters (one quotient-filter probe and
 * G Ribbon probes); an add is one quotient-filter insert, and the add
 * that closes a generation builds its Ribbon filter from C / G
 * fingerprints (linear; docs/structures.md, "Sliding windows").
 *
 * Errors: AMQ_ERR_INVALID for parameters out of range (span 0, fpr outside
 * (0, 0.5], generations outside 1..64), AMQ_ERR_OVERFLOW when the
 * fingerprints would need more than 64 bits, AMQ_ERR_NOMEM; a failing add
 * leaves the window answering as before (it may have released generations
 * already outside the window, which answer nothing).
 * Thread-safety: queries from any number of threads while nobody adds.
 * Frame: type 303 (not a filter: amq_filter_load refuses it and names
 * amq_window_load), docs/format.md.
 */
#ifndef AMQ_WINDOW_H
#define AMQ_WINDOW_H

#include "amq/core.h"
#include "amq/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct amq_window amq_window;

typedef enum amq_window_clock {
    AMQ_WINDOW_ITEMS = 0, /* the span counts adds */
    AMQ_WINDOW_TIME = 1   /* the span is time, from each call's `now` */
} amq_window_clock;

typedef enum amq_window_seal {
    AMQ_WINDOW_SEAL_RIBBON = 0, /* closed generations become Ribbon filters */
    AMQ_WINDOW_SEAL_QF = 1      /* closed generations stay quotient filters */
} amq_window_seal;

#define AMQ_WINDOW_DEFAULT_GENERATIONS 8u
#define AMQ_WINDOW_MAX_GENERATIONS 64u
#define AMQ_WINDOW_MAX_PIECES 1024u

typedef struct amq_window_params {
    amq_window_clock clock;
    uint64_t span;        /* adds (ITEMS) or time units (TIME); >= 1    */
    uint64_t capacity;    /* most keys one window holds; 0: the span
                             (required for a TIME window)             */
    double fpr;           /* target bound, in (0, 0.5]; 0: 0.01       */
    unsigned generations; /* G, 1..64; 0: AMQ_WINDOW_DEFAULT_GENERATIONS */
    amq_window_seal seal;
} amq_window_params;

/* opt: allocator and hash (as for filters; NULL: the defaults). */
AMQ_API amq_status amq_window_new(const amq_window_params *p,
                                  const amq_options *opt, amq_window **out,
                                  struct amq_diag *diag);
AMQ_API void amq_window_free(amq_window *w);

/* Add a key (by its 64-bit hash, or its bytes through the window's
 * hasher) at time now. *was_present (may be NULL): whether the window
 * reported it present just before. */
AMQ_API amq_status amq_window_add_hash(amq_window *w, uint64_t hash,
                                       uint64_t now, bool *was_present);
AMQ_API amq_status amq_window_add(amq_window *w, const void *key, size_t len,
                                  uint64_t now, bool *was_present);
/* Whether the key may have been added inside the window that ends at now
 * (a TIME window; count windows ignore now). Changes nothing. */
AMQ_API bool amq_window_contains_hash(const amq_window *w, uint64_t hash,
                                      uint64_t now);
AMQ_API bool amq_window_contains(const amq_window *w, const void *key,
                                 size_t len, uint64_t now);
/* out[i] = amq_window_contains_hash(w, hashes[i], now) for i < n, asking
 * each live generation for the whole batch at once (its batch lookup
 * overlaps the memory reads). */
AMQ_API void amq_window_contains_batch(const amq_window *w,
                                       const uint64_t *hashes, size_t n,
                                       uint64_t now, uint8_t *out);
/* The latest time at which the key is still certain to answer present
 * (the end of the window of its newest generation holding it), or
 * AMQ_WINDOW_ABSENT if it answers absent at now. A false positive has
 * one too: like contains, this is one-sided. */
#define AMQ_WINDOW_ABSENT UINT64_MAX
AMQ_API uint64_t amq_window_expiry_hash(const amq_window *w, uint64_t hash,
                                        uint64_t now);
AMQ_API uint64_t amq_window_expiry(const amq_window *w, const void *key,
                                   size_t len, uint64_t now);
/* Move the clock to now and release the generations it leaves behind (an
 * add does this first). Count windows: nothing to do. */
AMQ_API amq_status amq_window_advance(amq_window *w, uint64_t now);

/* Upper bound on the probability that a key not added inside the window
 * ending at now answers present, from the live generations' loads. */
AMQ_API double amq_window_fpr_bound(const amq_window *w, uint64_t now);

typedef struct amq_window_info {
    amq_window_clock clock;
    amq_window_seal seal;
    uint64_t span, capacity, length; /* length: L, one generation     */
    double fpr;                      /* target                        */
    unsigned generations;            /* G                             */
    uint64_t now;                    /* the clock: latest time / adds */
    uint64_t generation;             /* the current generation, now / L */
    uint64_t live_items;             /* adds held by live generations */
    unsigned pieces;                 /* filters a query asks          */
    size_t bytes;                    /* held for queries              */
    double bound;                    /* amq_window_fpr_bound at now   */
} amq_window_info;
AMQ_API void amq_window_get_info(const amq_window *w, uint64_t now,
                                 amq_window_info *out);
AMQ_API size_t amq_window_size_bytes(const amq_window *w);

AMQ_API size_t amq_window_serialized_size(const amq_window *w);
/* AMQ_ERR_BUFFER when cap is too small (nothing written past cap). */
AMQ_API amq_status amq_window_save(const amq_window *w, void *buf, size_t cap,
                                   size_t *written);
/* Validates the frame, every parameter against every other and each
 * generation's nested filter frame before a window exists. Errors:
 * AMQ_ERR_CORRUPT, AMQ_ERR_CHECKSUM, AMQ_ERR_VERSION, AMQ_ERR_KIND (a
 * frame of another type), AMQ_ERR_NOMEM, AMQ_ERR_INVALID. */
AMQ_API amq_status amq_window_load(const void *buf, size_t len,
                                   const amq_options *opt, amq_window **out,
                                   struct amq_diag *diag);

#ifdef __cplusplus
}
#endif
#endif
