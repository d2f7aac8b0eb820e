/*
 * window_impl.h — the inside of a sliding-window filter, shared by its
 * operations (window.c) and its frame (wframe.c).
 *
 *   pieces, oldest first:   [gen 40 ribbon] [gen 41 ribbon] ... [gen 48 qf]
 *                                                                  └─ open
 * Every piece is one generation's keys (two or more pieces share a
 * generation when a time window's generation overflowed its capacity).
 * The last piece is always the open quotient filter; closed ones are
 * Ribbon filters over mix(fingerprint) (seal=ribbon) or the closed
 * quotient filters themselves (seal=qf). All quotient filters of a window
 * have one shape (slots, r), so a key's fingerprint is the same for all.
 */
#ifndef AMQ_SRC_WINDOW_IMPL_H
#define AMQ_SRC_WINDOW_IMPL_H

#include "amq/filter.h"
#include "amq/window.h"
#include "core/mem.h"

typedef struct amq__wpiece {
    uint64_t gen;      /* generation: the clock / length when it opened */
    uint64_t items;    /* keys inserted into its quotient filter       */
    uint64_t distinct; /* distinct fingerprints                        */
    amq_filter *f;     /* "qf" (open, or closed under seal=qf) or "ribbon" */
    bool ribbon;
} amq__wpiece;

struct amq_window {
    amq__mem mem;
    amq_hasher hasher;
    amq_window_params p; /* resolved: capacity, fpr, generations set */
    uint64_t length;     /* L = ceil(span / G)                        */
    uint64_t gcap;       /* keys per generation: ceil(capacity / G)   */
    uint64_t slots;      /* the quotient filters' shape               */
    unsigned rbits;
    double eps_ribbon; /* target of a closed generation's Ribbon filter */
    uint64_t now;      /* latest time seen, or adds so far          */
    amq__wpiece *pc;
    unsigned npc, room;
};

/* The shape of a window with these parameters, into w (zeroed first):
 * its resolved parameters, L, the per-generation capacity, the quotient
 * filters' slots and r and the Ribbon target; AMQ_ERR_INVALID /
 * AMQ_ERR_OVERFLOW with diag filled. */
amq_status amq__window_shape(const amq_window_params *p, amq_window *w,
                             amq_diag *diag);
/* A window of that shape and hasher with room for `room` pieces and none
 * yet, its memory from opt's allocator. */
amq_status amq__window_alloc(const amq_window *shape, const amq_hasher *h,
                             const amq_options *opt, unsigned room,
                             amq_window **out);
/* An empty quotient filter of the window's shape. */
amq_status amq__window_open_qf(const amq_window *w, amq_filter **out);
/* Options for the window's nested filters: its allocator and hasher. */
amq_options amq__window_options(const amq_window *w);
void amq__window_free_pieces(amq_window *w);
/* amq_window_contains_batch asks generation by generation (each one's
 * batch lookup overlapping its misses) from this many bytes on, and key
 * by key below, where every generation is in cache and the one-key path
 * is faster (docs/structures.md, "Sliding windows"); tests lower it. */
extern size_t amq__window_batch_bytes;

#endif
