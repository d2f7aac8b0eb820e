/*
 * cascade_cli.h — what the `amq cascade` files share: key files as
 * amq_keys, loading a cascade file, and the evaluation entry point.
 */
#ifndef AMQ_TOOLS_CASCADE_CLI_H
#define AMQ_TOOLS_CASCADE_CLI_H

#include "cli.h"

/* A key set read from a file (one key per line, "\n" and "\r" stripped,
 * empty lines skipped) or built in memory. */
typedef struct ckeys {
    amq_keys k;
    uint8_t *bytes;
    uint64_t *offsets;
    size_t cap_bytes, cap_keys;
} ckeys;

/* false after printing an error (out of memory). */
bool ckeys_push(ckeys *c, const uint8_t *p, size_t len);
void ckeys_free(ckeys *c);
/* Read path into c; false after printing "amq: PATH: ..." (unreadable). */
bool ckeys_read(ckeys *c, const char *path, const char *label);
/* The keys with lo <= u(key, seed) < hi (u as amq's split: XXH3 top 53
 * bits), for held-out test parts. */
bool ckeys_split(const ckeys *in, uint64_t seed, double lo, double hi,
                 ckeys *out);

/* Load a cascade file; NULL after printing an error naming the file and
 * the byte. */
amq_cascade *ccascade_open(const char *path);

int cli_cascade_eval(int argc, char **argv);

/* One measured point: bits per key, measured rate, certified bound. */
typedef struct cpoint {
    double bits, fpr, bound;
} cpoint;

#define CSVG_MAX_POINTS 16

/* A log-scale plot of measured FPR against bits per key, one line per
 * series (points with NaN are skipped), written to path. false after
 * printing an error. */
bool csvg_fpr_plot(const char *path, const char *title,
                   const char *const *labels, int nseries,
                   const cpoint (*pts)[CSVG_MAX_POINTS], size_t npts);

#endif
