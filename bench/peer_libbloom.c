/*
 * peer_libbloom.c — Debian's libbloom (J. Virkki) as a peer subject.
 *
 * bloom_init(&b, n, eps) sizes a classic Bloom filter with the same formula
 * amq's "bloom" uses (m = n log2(1/eps) / ln 2 bits; libbloom rounds k up
 * where amq rounds to nearest), so the two run at (nearly) equal bits/key.
 * libbloom hashes its input itself (MurmurHash2, twice), so each key is
 * handed over as its 8 bytes: that hashing is part of libbloom's cost and
 * cannot be taken out. It has no batch query. Its sizes are `int`, which
 * caps n at about 2^31 / bits-per-key.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bloom.h>

#include "amq/amq.h"
#include "bench.h"

static int lb_create(const char *name, uint64_t n, double fpr, void **obj,
                     char *err, size_t cap) {
    /* "libbloom@TYPE": give libbloom the bits per key TYPE needs for fpr,
     * so the two are compared at equal space (libbloom then reaches a lower
     * rate than fpr with the same memory). */
    const char *at = strchr(name, '@');
    double bpk;
    if (at != NULL && amq_curve_bits(at + 1, fpr, &bpk) == AMQ_OK)
        fpr = exp(-bpk * M_LN2 * M_LN2);
    double bits = (double)n * amq_bloom_bits_for_fpr(fpr);
    if (n < 1000 || bits >= (double)INT_MAX) {
        snprintf(err, cap, "libbloom needs 1000 <= n and m < 2^31 bits");
        return -1;
    }
    struct bloom *b = calloc(1, sizeof *b);
    if (b == NULL || bloom_init(b, (int)n, fpr) != 0) {
        free(b);
        snprintf(err, cap, "bloom_init failed");
        return -1;
    }
    *obj = b;
    return 0;
}

static void lb_destroy(void *obj) {
    if (obj == NULL)
        return;
    bloom_free(obj);
    free(obj);
}

static int lb_insert(void *obj, const uint64_t *k, size_t n) {
    int bad = 0;
    for (size_t i = 0; i < n; i++)
        bad |= bloom_add(obj, &k[i], (int)sizeof k[i]) < 0;
    return bad;
}

static uint64_t lb_query(void *obj, const uint64_t *k, size_t n) {
    uint64_t hits = 0;
    for (size_t i = 0; i < n; i++)
        hits += bloom_check(obj, &k[i], (int)sizeof k[i]) == 1;
    return hits;
}

static size_t lb_size(void *obj) {
    return (size_t)((struct bloom *)obj)->bytes;
}

/* libbloom certifies nothing: this is the classic formula at its m, k. */
static double lb_bound(void *obj, uint64_t n) {
    const struct bloom *b = obj;
    return amq_bloom_fpr((double)b->bits, (double)n, (unsigned)b->hashes);
}

static void lb_describe(void *obj, char *buf, size_t cap) {
    const struct bloom *b = obj;
    snprintf(buf, cap, "libbloom:bits=%d,hashes=%d", b->bits, b->hashes);
}

const bench_ops bench_libbloom_ops = {
    .path = "peer",
    .create = lb_create,
    .destroy = lb_destroy,
    .insert = lb_insert,
    .query_scalar = lb_query,
    .query_batch = NULL,
    .size_bytes = lb_size,
    .fpr_bound = lb_bound,
    .describe = lb_describe,
};

const char *bench_libbloom_version(void) { return bloom_version(); }
