/*
 * window.c — the sliding-window filter (amq/window.h) as a bench subject:
 * a count window whose span is the row's n, fed the n keys, so the keys
 * fill every generation of one window (G - 1 closed into Ribbon filters
 * and the open quotient filter full). Its bits per key beside the bloom
 * row of the same run are the window's price over one Bloom filter for
 * the window (docs/structures.md, "Sliding windows"); queries ask every
 * live generation, one key at a time or a batch per generation.
 */
#include <stdio.h>
#include <string.h>

#include "amq/amq.h"
#include "bench.h"

static int win_create(const char *name, uint64_t n, double fpr, void **obj,
                      char *err, size_t cap) {
    (void)name;
    amq_window_params p = {AMQ_WINDOW_ITEMS,      n, 0, fpr, 0,
                           AMQ_WINDOW_SEAL_RIBBON};
    amq_window *w = NULL;
    amq_diag d;
    memset(&d, 0, sizeof d);
    amq_status st = amq_window_new(&p, bench_options(), &w, &d);
    if (st != AMQ_OK) {
        snprintf(err, cap, "amq_window_new: %s %s", amq_strerror(st),
                 d.message);
        return -1;
    }
    *obj = w;
    return 0;
}

static void win_destroy(void *obj) { amq_window_free(obj); }

static int win_insert(void *obj, const uint64_t *k, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (amq_window_add_hash(obj, k[i], 0, NULL) != AMQ_OK)
            return 1;
    return 0;
}

static uint64_t win_query(void *obj, const uint64_t *k, size_t n) {
    uint64_t hits = 0;
    for (size_t i = 0; i < n; i++)
        hits += amq_window_contains_hash(obj, k[i], 0);
    return hits;
}

static void win_batch(void *obj, const uint64_t *k, size_t n, uint8_t *out) {
    amq_window_contains_batch(obj, k, n, 0, out);
}

static size_t win_size(void *obj) { return amq_window_size_bytes(obj); }

static double win_bound(void *obj, uint64_t n) {
    (void)n;
    return amq_window_fpr_bound(obj, 0);
}

static void win_describe(void *obj, char *buf, size_t cap) {
    amq_window_info in;
    amq_window_get_info(obj, 0, &in);
    snprintf(buf, cap, "window:span=%llu,G=%u,pieces=%u",
             (unsigned long long)in.span, in.generations, in.pieces);
}

const bench_ops bench_window_ops = {
    .path = "window",
    .create = win_create,
    .destroy = win_destroy,
    .insert = win_insert,
    .query_scalar = win_query,
    .query_batch = win_batch,
    .size_bytes = win_size,
    .fpr_bound = win_bound,
    .describe = win_describe,
};
