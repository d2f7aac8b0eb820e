/*
 * fuzz_tdigest.c — libFuzzer target for amq_tdigest_load (the t-digest
 * frame, type 13). replay.c runs it over tests/fuzz/corpus/tdigest in
 * ordinary CI.
 *
 * Properties (a violation aborts):
 *   - nothing crashes or leaks, whatever the bytes;
 *   - a loaded digest saves back to the very same bytes;
 *   - a loaded digest works: quantiles are monotone and within [min, max],
 *     cdf is within [0, 1], and it takes values and merges (with itself
 *     and into a fresh digest) keeping its count.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amq/sketch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "fuzz_tdigest: property violated: %s\n", what);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    amq_tdigest *t = NULL;
    if (amq_tdigest_load(data, size, NULL, &t, NULL) != AMQ_OK) {
        require(t == NULL, "a refused frame leaves no digest");
        return 0;
    }
    size_t n = amq_tdigest_serialized_size(t);
    uint8_t *buf = malloc(n);
    size_t w = 0;
    require(buf != NULL && amq_tdigest_save(t, buf, n, &w) == AMQ_OK, "save");
    require(w == size && memcmp(buf, data, size) == 0, "save gives the bytes");
    free(buf);
    uint64_t count = amq_tdigest_count(t);
    if (count > 0) {
        double lo = amq_tdigest_min(t), hi = amq_tdigest_max(t), prev = lo;
        for (int i = 0; i <= 16; i++) {
            double x = amq_tdigest_quantile(t, i / 16.0);
            require(x >= prev && x <= hi, "quantiles monotone within the ends");
            prev = x;
            double c = amq_tdigest_cdf(t, x);
            require(c >= 0.0 && c <= 1.0, "cdf within [0, 1]");
        }
        double m = amq_tdigest_trimmed_mean(t, 0.1, 0.9);
        require(isnan(m) || (m >= lo && m <= hi), "trimmed mean within ends");
    }
    if (amq_tdigest_add(t, 1.5, 2) == AMQ_OK)
        count += 2;
    require(amq_tdigest_count(t) == count, "add counts");
    amq_tdigest *u = NULL;
    require(amq_tdigest_new(amq_tdigest_compression(t), NULL, &u) == AMQ_OK,
            "new");
    require(amq_tdigest_merge(u, t) == AMQ_OK && amq_tdigest_count(u) == count,
            "merge into a fresh digest");
    if (amq_tdigest_merge(t, t) == AMQ_OK)
        require(amq_tdigest_count(t) == 2 * count, "self merge doubles");
    amq_tdigest_free(u);
    amq_tdigest_free(t);
    return 0;
}
