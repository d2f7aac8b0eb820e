/*
 * ribbon_space.c — Ribbon's space against its bound, the numbers behind
 * the tables in docs/structures.md ("Ribbon"):
 *
 *     amq_ribbon_space N W BITS[,BITS...]
 *
 * builds a Ribbon filter of band width W (64 or 128) from N splitmix64
 * hashes (seed 42) for each bits value, counts false positives over the
 * next 10^6 outputs of the same stream, and prints per filter: layers,
 * bits per key, the certified bound, the measured rate, and the overhead
 * (bits per key) / log2(1 / bound) - 1.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amq/amq.h"
#include "tool.h"

static int one(const uint64_t *h, size_t n, const uint64_t *neg, size_t q,
               double bits, unsigned band) {
    char spec[64];
    amq_filter *f = NULL;
    amq_diag d;
    memset(&d, 0, sizeof d);
    snprintf(spec, sizeof spec, "ribbon:bits=%.17g,w=%u", bits, band);
    amq_status st = amq_filter_build(spec, h, n, 0.0, NULL, &f, &d);
    if (st != AMQ_OK) {
        fprintf(stderr, "ribbon bits=%g w=%u: %s\n", bits, band,
                d.message[0] ? d.message : amq_strerror(st));
        return 1;
    }
    size_t fp = 0;
    for (size_t i = 0; i < q; i++)
        fp += amq_filter_contains_hash(f, neg[i]);
    double bound = amq_filter_fpr_bound(f), rate = (double)fp / (double)q;
    double bpk = 8.0 * (double)amq_filter_size_bytes(f) / (double)n;
    printf("bits=%-6g w=%u layers=%u  %.4f bits/key  bound %.6f  measured "
           "%.6f  overhead %.2f%%\n",
           bits, band, amq_ribbon_layers(amq_ribbon_of(f)), bpk, bound, rate,
           100.0 * (bpk / log2(1.0 / bound) - 1.0));
    amq_filter_free(f);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s N W BITS[,BITS...]\n", argv[0]);
        return 2;
    }
    size_t n = (size_t)atof(argv[1]), q = 1000000;
    unsigned band = (unsigned)atoi(argv[2]);
    if (n == 0 || (band != 64 && band != 128)) {
        fprintf(stderr, "N must be positive and W 64 or 128\n");
        return 2;
    }
    uint64_t *h = malloc(n * sizeof *h), *neg = malloc(q * sizeof *neg);
    uint64_t s = 42;
    if (h == NULL || neg == NULL) {
        fprintf(stderr, "out of memory\n");
        return 2;
    }
    for (size_t i = 0; i < n; i++)
        h[i] = tool_splitmix(&s);
    for (size_t i = 0; i < q; i++)
        neg[i] = tool_splitmix(&s);
    int rc = 0;
    for (char *t = strtok(argv[3], ","); t != NULL; t = strtok(NULL, ","))
        rc |= one(h, n, neg, q, atof(t), band);
    free(h);
    free(neg);
    return rc;
}
