/*
 * bench.h — shared declarations of the amq benchmark driver.
 *
 * A "subject" is one thing measured: an amq type through one path — the
 * generic amq_filter interface (static types built by amq_filter_build),
 * the inline path of amq/query.h's query objects — or a peer library
 * (Debian's libbloom). Each path is a small table of callbacks (bench_ops)
 * over any type it serves, whose loops run inside the adapter, so the
 * indirection costs one call per loop or per batch chunk, never per key.
 * Every measured quantity of one subject at one n lands in a bench_row;
 * the reporters (markdown, CSV, SVG) read only rows.
 */
#ifndef AMQ_BENCH_H
#define AMQ_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "amq/core.h"
#include "amq/filter.h"

#define BENCH_MAX_SIZES 8
#define BENCH_MAX_ROWS 256

/* ---- configuration (main.c) -------------------------------------------- */

typedef struct bench_cfg {
    uint64_t sizes[BENCH_MAX_SIZES];
    size_t nsizes;
    double fpr;          /* target false-positive rate (--fpr)           */
    int reps;            /* query / probe repetitions; 0 = automatic     */
    int insert_reps;     /* build repetitions; 0 = automatic             */
    size_t queries;      /* max positive and negative queries per n      */
    size_t batch;        /* hashes per contains_batch call               */
    size_t probe_group;  /* addresses prefetched together by the probe   */
    bool probe_huge;     /* 2 MB-align and advise the probe's arrays     */
    uint64_t seed;       /* key stream seed                              */
    const char *out_dir; /* results.md / .csv / .svg go here             */
    const char *only;    /* comma list of subject names, NULL = all      */
    bool inline_path;    /* also measure the inline query objects        */
    bool peer;           /* also measure libbloom                        */
    unsigned threads;    /* --threads: builder rows at 1 and this many   */
    char command[512];   /* the command line, for the report            */
} bench_cfg;

/* ---- subjects (subjects.c, inline.c, peer_libbloom.c) -------------------- */

typedef struct bench_ops {
    const char *path; /* "generic", "build", "builder", "builder-j",
                         "inline", "values" or "peer"                     */
    /* 0 on success; otherwise err holds a message. */
    int (*create)(const char *name, uint64_t n, double fpr, void **obj,
                  char *err, size_t errcap);
    void (*destroy)(void *obj);
    /* 0 on success; nonzero if any insert failed. */
    int (*insert)(void *obj, const uint64_t *keys, size_t n);
    /* Number of keys reported present, one call per key. */
    uint64_t (*query_scalar)(void *obj, const uint64_t *keys, size_t n);
    /* out[i] = 1 if keys[i] may be present; NULL when there is none. */
    void (*query_batch)(void *obj, const uint64_t *keys, size_t n,
                        uint8_t *out);
    /* Keys reported present, one call per 16-byte key (bench_byte_key of
     * keys[i]), hashing included; NULL for paths that take only hashes. */
    uint64_t (*query_bytes)(void *obj, const uint64_t *keys, size_t n);
    size_t (*size_bytes)(void *obj);
    double (*fpr_bound)(void *obj, uint64_t n);
    void (*describe)(void *obj, char *buf, size_t cap);
} bench_ops;

typedef struct bench_subject {
    char label[48]; /* row name, e.g. "fuse8 [inline]" */
    char name[64];  /* amq spec or "libbloom"          */
    const bench_ops *ops;
} bench_subject;

extern const bench_ops bench_generic_ops;
extern const bench_ops bench_static_ops;
/* Static types through amq_builder (its de-duplicating sort included) on
 * one thread and on bench_build_threads threads (--threads). */
extern const bench_ops bench_builder1_ops;
extern const bench_ops bench_builderj_ops;
extern unsigned bench_build_threads;
extern const bench_ops bench_libbloom_ops;
/* A count window over the row's n keys (window.c). */
extern const bench_ops bench_window_ops;
/* The inline path (amq/query.h) for a spec, or NULL if it has none. */
const bench_ops *bench_inline_ops(const char *spec);
/* The maplet with values (values.c: put and get of a value per key) for
 * "maplet" and "smaplet", else NULL. */
const bench_ops *bench_values_for(const char *spec);
/* A second row of a spec already measured generically (inline, values):
 * left out of the plots. */
static inline bool bench_second_path(const char *path) {
    return strcmp(path, "inline") == 0 || strcmp(path, "values") == 0 ||
           strncmp(path, "builder", 7) == 0;
}
/* *f := spec built from the n hashes k at fpr, or from the spec alone if
 * fpr cannot be met; 0 on success (subjects.c). */
int bench_build(const char *spec, const uint64_t *k, size_t n, double fpr,
                amq_filter **f);
const char *bench_libbloom_version(void);

/* ---- results ------------------------------------------------------------ */

typedef struct bench_probe {
    double batch_ns; /* prefetched chunks, like contains_batch            */
    double indep_ns; /* plain loop of independent reads                   */
    double dep_ns;   /* each address depends on the previous read         */
} bench_probe;

/* The query paths a row times; each is paired with probe reads timed
 * right before it (independent reads for one-at-a-time paths, batched
 * reads for batches). */
typedef enum bench_path {
    BENCH_POS_SCALAR,
    BENCH_NEG_SCALAR,
    BENCH_NEG_BYTES,
    BENCH_POS_BATCH,
    BENCH_NEG_BATCH,
    BENCH_PATHS
} bench_path;

typedef struct bench_row {
    uint64_t n;
    char label[48];
    char name[64];
    const char *path;
    char spec[128];
    char note[160];
    bool ok; /* false: creation or insertion failed   */
    size_t bytes;
    double bits_per_key;
    double fpr_target, fpr_meas, fpr_bound;
    double build_ms, insert_ns;
    /* Bytes the last build held at its peak beyond the finished filter
     * (amq objects only; SIZE_MAX when not measured). */
    size_t build_extra;
    double pos_scalar_ns, pos_batch_ns, neg_scalar_ns, neg_batch_ns;
    double neg_bytes_ns;          /* 16-byte keys: hash + query            */
    bench_probe probe;            /* of an array of `bytes` bytes          */
    double probe_at[BENCH_PATHS]; /* the probe timed beside each path */
    int reps, insert_reps;
    size_t queries;
    uint64_t false_neg; /* positives reported absent (must be 0) */
} bench_row;

typedef struct bench_hash_row {
    const char *kind;
    double ns_per_key;
} bench_hash_row;

typedef struct bench_results {
    bench_row rows[BENCH_MAX_ROWS];
    size_t nrows;
    bench_hash_row hash[4];
    size_t nhash;
    char skipped[256]; /* static types left out, for the notes */
    double seconds;    /* wall time of the whole run          */
} bench_results;

/* ---- measurement (measure.c, probe.c, hashcost.c) ----------------------- */

typedef struct bench_keys {
    const uint64_t *pos; /* n inserted keys                          */
    uint64_t n;
    const uint64_t *neg; /* nq keys never inserted                   */
    size_t nq;           /* queries per kind: min(n, cfg->queries)   */
} bench_keys;

/* Repetitions at n: --reps / --insert-reps, else 5 (3 and 1 at n >= 1e7). */
int bench_query_reps(const bench_cfg *cfg, uint64_t n);
int bench_insert_reps(const bench_cfg *cfg, uint64_t n);
void bench_measure(const bench_cfg *cfg, const bench_subject *s,
                   const bench_keys *k, bench_row *row);
/* An array of `bytes` bytes (whole lines, filled) to time reads in. */
typedef struct bench_probe_arr bench_probe_arr;
typedef enum bench_probe_mode {
    BENCH_PROBE_BATCH,
    BENCH_PROBE_INDEP,
    BENCH_PROBE_DEP
} bench_probe_mode;
bench_probe_arr *bench_probe_new(size_t bytes, size_t group, bool huge);
void bench_probe_free(bench_probe_arr *p);
/* ns per read of one pass of q reads at lines reduce(stream[i]). */
double bench_probe_time(bench_probe_arr *p, bench_probe_mode m,
                        const uint64_t *stream, size_t q);
size_t bench_hash_cost(size_t nkeys, int reps, bench_hash_row *out, size_t cap);

/* ---- reporting (report.c, svg.c) ---------------------------------------- */

void bench_write_markdown(FILE *f, const bench_cfg *cfg,
                          const bench_results *r);
void bench_write_csv(FILE *f, const bench_results *r);
void bench_write_svg(FILE *f, const bench_cfg *cfg, const bench_results *r);

/* ---- utilities (util.c) -------------------------------------------------- */

uint64_t bench_now_ns(void);
double bench_seconds_since(uint64_t t0_ns);
double bench_median(const double *v, size_t n);
/* The statistic reported over repetitions: min (default) or median. */
void bench_set_summary_min(bool use_min);
bool bench_summary_is_min(void);
double bench_summary(const double *v, size_t n);
uint64_t bench_splitmix64(uint64_t *state);
/* n keys of the splitmix64 stream from seed (malloc; NULL on failure). */
uint64_t *bench_make_keys(uint64_t seed, size_t n);
/* Map a uniform 64-bit value to [0, range) by multiply-shift. */
uint64_t bench_reduce(uint64_t x, uint64_t range);
/* "1e6" for powers of ten, else the decimal number. */
void bench_fmt_n(uint64_t n, char *buf, size_t cap);
/* Keep a value alive so the compiler cannot drop the work behind it. */
/* Options whose allocator counts live and peak bytes (bench_mem_*). */
const amq_options *bench_options(void);
void bench_mem_mark(void); /* peak := live                        */
size_t bench_mem_live(void);
size_t bench_mem_peak(void);

void bench_consume(uint64_t v);
/* The 16-byte key the byte-key rows ask for, made from a stream value
 * (inline: building it must cost next to nothing beside the hash). */
static inline void bench_byte_key(uint64_t v, uint8_t key[16]) {
    uint64_t w[2] = {v, v ^ 0x5bd1e9955bd1e995u};
    memcpy(key, w, sizeof w);
}
uint64_t bench_sink_value(void);
void bench_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
