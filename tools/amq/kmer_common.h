/*
 * kmer_common.h — what the k-mer commands share (kmer_common.c), used by kmer.c
 * (count, query, histo, dump) and kmer_index.c (index, search).
 *
 * A k-mer file is an ordinary maplet frame (amq info reads it). Its k and
 * whether k-mers are canonical travel in the hasher's seed, tagged so a
 * maplet made otherwise is recognised as not a k-mer file:
 *
 *   seed = "kmer" << 32 | canonical << 8 | k
 *
 * Exact mode (kbits = 2k): a k-mer's 2-bit code is the key
 * (amq_maplet_exact_hash), so counts are exact and dump lists the k-mers.
 * Approximate mode (--fpr): the code's 8 little-endian bytes are hashed
 * by the maplet's hasher (XXH3 with that seed).
 */
#ifndef AMQ_TOOLS_KMER_COMMON_H
#define AMQ_TOOLS_KMER_COMMON_H

#include "verbs.h"
#include "parse.h"

#define KMER_TAG 0x6b6d6572ULL /* "kmer" */
#define KMER_BATCH 65536
/* The load a k-mer table is sized for and grows past (a quotient table
 * slows sharply above it), and the room left over an estimate. */
#define KMER_MAX_LOAD 0.95
#define KMER_SLACK 0.03

typedef struct kmer_conf {
    unsigned k;
    bool canonical, exact;
    unsigned char min_qual; /* reading FASTQ: a base of lower quality
                               breaks the window (0: none; not stored) */
} kmer_conf;

static inline uint64_t kmer_seed(const kmer_conf *c) {
    return KMER_TAG << 32 | (uint64_t)c->canonical << 8 | c->k;
}

/* What the k-mer commands take (each uses its share). */
typedef struct kmer_opts {
    kmer_conf c;
    unsigned threads, vbits;
    double fpr;
    uint64_t capacity;
    uint64_t lower, upper; /* -L/-U: counts kept (upper 0: no limit)  */
    uint64_t memory;       /* --memory: bytes the table may take       */
    const char *output;
    char **files; /* the positionals (malloc'ed array, argv strings) */
    size_t nfiles;
    bool quiet, json; /* json: search only                      */
} kmer_opts;

/* Options and positionals after argv[0] (the subcommand); theta (search:
 * --theta and --json) may be NULL. -1 to go on, else the exit status
 * after a usage error. */
int kmer_parse_args(int argc, char **argv, kmer_opts *o, double *theta);
/* What one pass over the input says (kmer_size.c): without one (stdin
 * among the inputs), known is false. */
typedef struct kmer_plan {
    bool known;
    uint64_t distinct; /* distinct k-mers, estimated            */
    unsigned vbits;    /* the value width of the smallest table */
    uint64_t capacity; /* the slots its counts take, with slack */
} kmer_plan;

/* A sample of k-mers with their counts, by hash (kmer_size.c); added to
 * one occurrence or one table entry at a time. */
typedef struct kmer_census kmer_census;
kmer_census *kmer_census_new(void); /* NULL when out of memory */
void kmer_census_free(kmer_census *c);
void kmer_census_add(kmer_census *c, uint64_t code, uint64_t count);
/* The table for the k-mers added, as o would make it. */
void kmer_census_plan(const kmer_census *c, const kmer_opts *o, kmer_plan *p);

/* Plan a count from its inputs (o->vbits, when set, is kept): -1 to go
 * on, else the exit status after an input error. */
int kmer_plan_input(const kmer_opts *o, kmer_plan *p);

/* How a new k-mer table is sized: from a plan, else from -n (distinct
 * k-mers), else from the input's bytes with room to grow; v is the value
 * width (o->vbits, the plan's, or 8), capacity in slots, and the fpr it
 * is made at (an unsized approximate table starts 8 times lower, so the
 * doublings it may need still meet the target). */
void kmer_size_table(const kmer_opts *o, const kmer_plan *p, unsigned *v,
                     uint64_t *capacity, double *fpr);
/* The bytes a k-mer table may take: --memory, else 80% of the machine's
 * physical memory (a table past it would swap). */
uint64_t kmer_memory_limit(const kmer_opts *o);

/* -1 if the settings can be made, else CLI_EXIT_ERR after a usage error
 * (exact mode needs k >= 4). */
int kmer_check_exact(const kmer_conf *c);
/* Save atomically; the exit status. */
int kmer_save(const amq_maplet *m, const char *path);
/* Open a k-mer maplet for queries; NULL after an error. */
amq_filter *kmer_open(const char *path, kmer_conf *c);

/* kmer_index.c */
int cli_kmer_index(int argc, char **argv);
int cli_kmer_search(int argc, char **argv);

/* The k-mer settings of a maplet made by amq kmer; false (after an error
 * naming path) if it is not one. */
bool kmer_conf_of(const amq_maplet *m, const char *path, kmer_conf *c);

/* The hash a k-mer code is stored under. */
static inline uint64_t kmer_hash(const amq_maplet *m, const kmer_conf *c,
                                 uint64_t code) {
    uint64_t h = 0;
    if (c->exact) {
        amq_maplet_exact_hash(m, code, &h);
        return h;
    }
    uint8_t le[8];
    for (int i = 0; i < 8; i++)
        le[i] = (uint8_t)(code >> (8 * i));
    return amq_filter_hash(m, le, sizeof le);
}

/* The code a k-mer is counted as (the smaller strand when canonical). */
static inline uint64_t kmer_code(const kmer_conf *c, uint64_t fwd,
                                 uint64_t rev) {
    return c->canonical && rev < fwd ? rev : fwd;
}

/* Open a sequence file ("-": stdin); false after an error. The caller
 * closes fd with kmer_input_close. */
bool kmer_input_open(const char *path, seq_reader *r, int *fd);
void kmer_input_close(seq_reader *r, int fd);
/* "PATH: <the reader's message>" and CLI_EXIT_ERR. */
int kmer_input_error(const char *path, const seq_reader *r);

/* Sort h[0..n) in increasing order, through tmp (n long). */
void kmer_sort(uint64_t *h, uint64_t *tmp, size_t n);

/* A batch of n k-mer codes from kmer_scan: 0 to go on, with *codes the
 * buffer (KMER_BATCH long) the next batch is written to (the same one,
 * or a fresh one when the sink keeps this one, NULL only with an
 * error); else the scan stops and returns that value (the sink has
 * reported why). */
typedef int (*kmer_sink)(void *ctx, uint64_t **codes, size_t n);

/* Every k-mer code of the file at path ("-": stdin), canonical if c says
 * so, in batches of at most KMER_BATCH. 0, CLI_EXIT_ERR after an input
 * error (reported), or what the sink returned. */
int kmer_scan(const kmer_conf *c, const char *path, kmer_sink sink, void *ctx);

/* The uncompressed input size a list of files suggests (bytes; a gzip,
 * xz or bzip2 file counts 4 times its size): the k-mers it holds are fewer. */
uint64_t kmer_input_estimate(char **files, size_t n);

/* A new k-mer maplet for about `capacity` distinct k-mers: exact (kbits =
 * 2k) or at fpr, with v value bits, op, concurrent mode for threads. */
amq_status kmer_maplet_new(const kmer_conf *c, const char *op, unsigned v,
                           uint64_t capacity, double fpr, bool concurrent,
                           amq_maplet **out, amq_diag *diag);

#endif
