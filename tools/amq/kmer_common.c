/*
 * kmer_common.c — what the `amq kmer` verbs share (kmer_common.h): the k-mer
 * shape a maplet was counted with, FASTA/FASTQ input read in batches of
 * codes, the batches' sort, the maplet's creation and sizing, the memory
 * limit, the options, saving and opening.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kmer_common.h"

/* ---- the maplet, its shape, its input ---------------------------------------- */

bool kmer_conf_of(const amq_maplet *m, const char *path, kmer_conf *c) {
    amq_maplet_shape s;
    uint64_t seed = amq_filter_hasher(m)->seed;
    if (amq_maplet_get_shape(m, &s) != AMQ_OK || seed >> 32 != KMER_TAG ||
        (seed & 0xff) < 1 || (seed & 0xff) > 32) {
        cli_error("%s: not a k-mer maplet made by amq kmer", path);
        return false;
    }
    c->k = (unsigned)(seed & 0xff);
    c->canonical = (seed >> 8 & 1) != 0;
    c->exact = s.key_bits != 0;
    if (c->exact && s.key_bits != 2 * c->k) {
        cli_error("%s: %u-bit keys for k = %u", path, s.key_bits, c->k);
        return false;
    }
    return true;
}

bool kmer_input_open(const char *path, seq_reader *r, int *fd) {
    bool in = strcmp(path, "-") == 0;
    *fd = in ? dup(STDIN_FILENO) : open(path, O_RDONLY | O_CLOEXEC);
    if (*fd < 0) {
        cli_error("%s: cannot open: %s", path, strerror(errno));
        return false;
    }
    if (!seq_open_fd(r, *fd)) {
        cli_error("%s: %s", path, r->err);
        seq_close(r);
        close(*fd);
        return false;
    }
    return true;
}

void kmer_input_close(seq_reader *r, int fd) {
    seq_close(r);
    if (fd >= 0)
        close(fd);
}

int kmer_input_error(const char *path, const seq_reader *r) {
    cli_error("%s: %s; nothing written", path, r->err);
    return CLI_EXIT_ERR;
}

/* LSD radix sort by 11-bit digits: one pass counts every digit, and a
 * digit all hashes share is skipped (an exact table's hashes have their
 * low 64 - K bits zero). */
enum { DIGIT = 11, DIGITS = (64 + DIGIT - 1) / DIGIT };
void kmer_sort(uint64_t *h, uint64_t *tmp, size_t n) {
    static _Thread_local uint32_t cnt[DIGITS][1u << DIGIT];
    memset(cnt, 0, sizeof cnt);
    const uint64_t mask = (1u << DIGIT) - 1;
    for (size_t i = 0; i < n; i++)
        for (unsigned d = 0; d < DIGITS; d++)
            cnt[d][h[i] >> (d * DIGIT) & mask]++;
    uint64_t *a = h, *b = tmp;
    for (unsigned d = 0; d < DIGITS; d++) {
        unsigned sh = d * DIGIT;
        if (n == 0 || cnt[d][h[0] >> sh & mask] == n)
            continue; /* every hash has this digit */
        uint32_t at = 0;
        for (unsigned x = 0; x <= mask; x++) {
            uint32_t c = cnt[d][x];
            cnt[d][x] = at;
            at += c;
        }
        for (size_t i = 0; i < n; i++)
            b[cnt[d][a[i] >> sh & mask]++] = a[i];
        uint64_t *t = a;
        a = b;
        b = t;
    }
    if (a != h)
        memcpy(h, a, n * sizeof *h);
}

int kmer_scan(const kmer_conf *c, const char *path, kmer_sink sink, void *ctx) {
    seq_reader r;
    int fd, got = 0, rc = 0;
    if (!kmer_input_open(path, &r, &fd))
        return CLI_EXIT_ERR;
    uint64_t *codes = malloc(KMER_BATCH * sizeof *codes);
    size_t n = 0;
    if (codes == NULL) {
        cli_error("%s: out of memory", path);
        rc = CLI_EXIT_ERR;
    }
    kmer_roll kr;
    uint64_t fwd, rev;
    kmer_roll_init(&kr, c->k);
    r.chunk = 1u << 20; /* a chromosome is read a megabase at a time */
    while (rc == 0 && (got = seq_next(&r)) == 1) {
        if (!r.cont)
            kmer_roll_init(&kr, c->k);
        if (c->min_qual != 0 && r.qual != NULL) /* as jellyfish -Q */
            for (size_t i = 0; i < r.seq_len; i++)
                if ((unsigned char)r.qual[i] < c->min_qual)
                    r.seq[i] = 'N';
        for (size_t i = 0; i < r.seq_len && rc == 0; i++) {
            if (!kmer_roll_push(&kr, r.seq[i], &fwd, &rev))
                continue;
            codes[n++] = kmer_code(c, fwd, rev);
            if (n == KMER_BATCH) {
                rc = sink(ctx, &codes, n);
                n = 0;
            }
        }
    }
    if (rc == 0 && got < 0)
        rc = kmer_input_error(path, &r);
    else if (rc == 0 && n > 0)
        rc = sink(ctx, &codes, n);
    free(codes);
    kmer_input_close(&r, fd);
    return rc;
}

uint64_t kmer_input_estimate(char **files, size_t n) {
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (strcmp(files[i], "-") == 0 || stat(files[i], &st) != 0)
            continue;
        size_t len = strlen(files[i]);
        bool gz = (len > 3 && strcmp(files[i] + len - 3, ".gz") == 0) ||
                  (len > 3 && strcmp(files[i] + len - 3, ".xz") == 0) ||
                  (len > 4 && strcmp(files[i] + len - 4, ".bz2") == 0);
        total += (uint64_t)st.st_size * (gz ? 4 : 1);
    }
    return total;
}

amq_status kmer_maplet_new(const kmer_conf *c, const char *op, unsigned v,
                           uint64_t capacity, double fpr, bool concurrent,
                           amq_maplet **out, amq_diag *diag) {
    char spec[96];
    amq_options opt;
    memset(&opt, 0, sizeof opt);
    opt.hash = AMQ_HASH_XXH3;
    opt.hash_seed = kmer_seed(c);
    if (c->exact)
        snprintf(spec, sizeof spec, "maplet:op=%s,v=%u,kbits=%u%s", op, v,
                 2 * c->k, concurrent ? ",concurrent=1" : "");
    else
        snprintf(spec, sizeof spec, "maplet:op=%s,v=%u%s", op, v,
                 concurrent ? ",concurrent=1" : "");
    return amq_maplet_new(spec, capacity ? capacity : 1, c->exact ? 0.5 : fpr,
                          &opt, out, diag);
}

/* ---- options --------------------------------------------------------------------- */

enum {
    OPT_K = 1,
    OPT_CANON,
    OPT_THREADS,
    OPT_FPR,
    OPT_EXACT,
    OPT_VBITS,
    OPT_CAP,
    OPT_OUT,
    OPT_QUIET,
    OPT_THETA,
    OPT_JSON,
    OPT_LOWER,
    OPT_UPPER,
    OPT_QUAL,
    OPT_MEMORY
};

static const cli_opt kmer_options[] = {
    {"kmer", 'k', true, OPT_K},
    {"canonical", 'C', false, OPT_CANON},
    {"threads", 'j', true, OPT_THREADS},
    {"fpr", 'e', true, OPT_FPR},
    {"exact", 0, false, OPT_EXACT},
    {"value-bits", 0, true, OPT_VBITS},
    {"capacity", 'n', true, OPT_CAP},
    {"output", 'o', true, OPT_OUT},
    {"quiet", 'q', false, OPT_QUIET},
    {"theta", 0, true, OPT_THETA},
    {"json", 0, false, OPT_JSON},
    {"lower-count", 'L', true, OPT_LOWER},
    {"upper-count", 'U', true, OPT_UPPER},
    {"min-qual-char", 'Q', true, OPT_QUAL},
    {"memory", 0, true, OPT_MEMORY},
    {NULL, 0, false, 0},
};

static bool take_number(const char *opt, const char *v, uint64_t lo,
                        uint64_t hi, uint64_t *x) {
    if (!cli_parse_u64("kmer", opt, v, x))
        return false;
    if (*x >= lo && *x <= hi)
        return true;
    cli_usage_error("kmer", "%s must be %llu to %llu", opt,
                    (unsigned long long)lo, (unsigned long long)hi);
    return false;
}

/* The options every k-mer command shares; false after a usage error. */
static bool take_count_option(kmer_opts *o, int id, const char *v) {
    uint64_t x = 0;
    switch (id) {
    case OPT_K:
        if (!take_number("-k", v, 1, 32, &x))
            return false;
        o->c.k = (unsigned)x;
        return true;
    case OPT_CANON: o->c.canonical = true; return true;
    case OPT_THREADS:
        if (!take_number("--threads", v, 1, 64, &x))
            return false;
        o->threads = (unsigned)x;
        return true;
    case OPT_FPR:
        o->c.exact = false;
        return cli_parse_fpr("kmer", "--fpr", v, &o->fpr);
    case OPT_EXACT:
        o->c.exact = true;
        o->fpr = 0;
        return true;
    case OPT_VBITS:
        if (!take_number("--value-bits", v, 1, 64, &x))
            return false;
        o->vbits = (unsigned)x;
        return true;
    case OPT_CAP: return cli_parse_u64("kmer", "--capacity", v, &o->capacity);
    case OPT_OUT: o->output = v; return true;
    case OPT_LOWER: return take_number("-L", v, 1, UINT64_MAX, &o->lower);
    case OPT_UPPER: return take_number("-U", v, 1, UINT64_MAX, &o->upper);
    case OPT_QUAL:
        if (v[0] < '!' || v[0] > '~' || v[1] != '\0') {
            cli_usage_error("kmer",
                            "-Q wants one quality character ('!' to '~'), "
                            "got '%s'",
                            v);
            return false;
        }
        o->c.min_qual = (unsigned char)v[0];
        return true;
    case OPT_MEMORY:
        return take_number("--memory", v, 1 << 20, UINT64_MAX, &o->memory);
    case OPT_QUIET:
        o->quiet = true;
        cli_progress_set_mode(CLI_PROGRESS_OFF);
        return true;
    default:
        cli_usage_error("kmer", "that option is not for this command");
        return false;
    }
}

int kmer_parse_args(int argc, char **argv, kmer_opts *o, double *theta) {
    cli_args a;
    int id;
    o->files = calloc((size_t)argc, sizeof *o->files);
    if (o->files == NULL)
        return cli_usage_error("kmer", "out of memory");
    cli_args_init(&a, "kmer", argc, argv);
    while ((id = cli_next(&a, kmer_options)) != CLI_NEXT_END) {
        if (id == CLI_NEXT_ERR)
            return CLI_EXIT_ERR;
        if (id == CLI_OPT_HELP)
            return cli_help_print(stdout, "kmer") ? CLI_EXIT_OK : CLI_EXIT_ERR;
        if (id == CLI_NEXT_POS)
            o->files[o->nfiles++] = (char *)a.value;
        else if (id == OPT_JSON && theta != NULL)
            o->json = true;
        else if (id == OPT_THETA && theta != NULL) {
            char *end;
            *theta = strtod(a.value, &end);
            if (*end != '\0' || !(*theta >= 0 && *theta <= 1))
                return cli_usage_error("kmer",
                                       "--theta wants 0 to 1, got "
                                       "'%s'",
                                       a.value);
        } else if (!take_count_option(o, id, a.value))
            return CLI_EXIT_ERR;
    }
    return -1;
}

void kmer_size_table(const kmer_opts *o, const kmer_plan *p, unsigned *v,
                     uint64_t *capacity, double *fpr) {
    *v = o->vbits ? o->vbits : 8;
    *fpr = o->fpr;
    if (o->capacity) {
        *capacity = (uint64_t)ceil((double)o->capacity * (1 + KMER_SLACK));
    } else if (p != NULL && p->known) {
        *v = p->vbits;
        *capacity = p->capacity;
    } else {
        uint64_t est = kmer_input_estimate(o->files, o->nfiles) / 8;
        *capacity = est > 4096 ? est : 4096;
        *fpr = o->c.exact ? o->fpr : o->fpr / 8;
    }
}

uint64_t kmer_memory_limit(const kmer_opts *o) {
    if (o->memory)
        return o->memory;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0)
        return UINT64_MAX;
    return (uint64_t)(0.8 * (double)pages * (double)page);
}

int kmer_check_exact(const kmer_conf *c) {
    if (!c->exact || c->k >= 4)
        return -1;
    return cli_usage_error("kmer",
                           "exact mode needs k >= 4 (the table "
                           "needs 8 key bits); use --fpr E for k = %u",
                           c->k);
}

int kmer_save(const amq_maplet *m, const char *path) {
    amq_diag d;
    memset(&d, 0, sizeof d);
    amq_status st = amq_filter_save_file(m, path, &d);
    return st == AMQ_OK ? CLI_EXIT_OK : cli_status_error(path, st, &d);
}

amq_filter *kmer_open(const char *path, kmer_conf *c) {
    amq_filter *m = NULL;
    amq_diag d;
    memset(&d, 0, sizeof d);
    amq_status st = amq_filter_open_file(path, NULL, &m, &d);
    if (st != AMQ_OK) {
        cli_status_error(path, st, &d);
        return NULL;
    }
    if (!kmer_conf_of(m, path, c)) {
        amq_filter_free(m);
        return NULL;
    }
    return m;
}
