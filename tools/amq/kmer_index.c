/*
 * kmer_index.c — `amq kmer index` and `amq kmer search`: sequence search
 * in the manner of Mantis (Pandey et al. 2018) on a maplet.
 *
 * index: one maplet maps every canonical k-mer of the inputs to the set
 * of inputs holding it, a bit mask of up to 64 file ids combined with or
 * (exact mode by default: the fingerprint is the whole k-mer, so the sets
 * are exact; --fpr makes it approximate, and a k-mer may then be reported
 * in the files of the other k-mers sharing its fingerprint). The input
 * names go to IDX.names, one per line, written before IDX.
 *
 * search: for each query sequence, the set Q of its distinct canonical
 * k-mers; for every file f, the share of Q whose set holds f; files with
 * a share of at least theta are printed as "query<TAB>file<TAB>share", the
 * experiment-discovery problem of Solomon and Kingsford's sequence Bloom
 * tree. Exact mode answers it exactly; approximate mode never misses a
 * file (no false negatives) and adds a file only when enough of Q's
 * k-mers share fingerprints with its k-mers.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kmer_common.h"

/* ---- index --------------------------------------------------------------- */

typedef struct index_sink {
    amq_maplet *m;
    const kmer_conf *c;
    const char *path;
    uint64_t bit, kmers;
} index_sink;

/* A batch of one input's k-mers into the index with its bit. */
static int index_batch(void *ctx, uint64_t **codes, size_t n) {
    index_sink *is = ctx;
    for (size_t i = 0; i < n; i++) {
        uint64_t h = kmer_hash(is->m, is->c, (*codes)[i]);
        amq_status st = kmer_put(is->m, h, is->bit);
        if (st != AMQ_OK)
            return cli_status_error(is->path, st, NULL);
    }
    is->kmers += n;
    return 0;
}

/* IDX.names: the inputs, one per line, written atomically. */
static bool write_names(const char *idx, char **files, size_t n) {
    size_t len = strlen(idx);
    char *path = malloc(len + 16), *tmp = malloc(len + 16);
    bool ok = path != NULL && tmp != NULL;
    FILE *fp = NULL;
    if (ok) {
        snprintf(path, len + 16, "%s.names", idx);
        snprintf(tmp, len + 16, "%s.names.tmp", idx);
        fp = fopen(tmp, "w");
        ok = fp != NULL;
    }
    for (size_t i = 0; ok && i < n; i++)
        ok =
            strchr(files[i], '\n') == NULL && fprintf(fp, "%s\n", files[i]) > 0;
    if (fp != NULL && fclose(fp) != 0)
        ok = false;
    if (ok && rename(tmp, path) != 0)
        ok = false;
    if (!ok) {
        cli_error("%s.names: cannot write the input names", idx);
        if (tmp != NULL)
            remove(tmp);
    }
    free(path);
    free(tmp);
    return ok;
}

int cli_kmer_index(int argc, char **argv) {
    kmer_opts o;
    memset(&o, 0, sizeof o);
    o.c.exact = true;
    o.c.canonical = true;
    int rc = kmer_parse_args(argc, argv, &o, NULL);
    if (rc < 0 && (o.c.k == 0 || o.output == NULL || o.nfiles == 0))
        rc = cli_usage_error("kmer", "index needs -k K, -o IDX and inputs");
    if (rc < 0)
        rc = kmer_check_exact(&o.c);
    if (rc < 0 && o.nfiles > 64)
        rc = cli_usage_error("kmer",
                             "index takes at most 64 inputs (the "
                             "sets are 64-bit masks), got %zu",
                             o.nfiles);
    if (rc >= 0) {
        free(o.files);
        return rc;
    }
    kmer_plan plan;
    memset(&plan, 0, sizeof plan);
    if (o.capacity == 0 && (rc = kmer_plan_input(&o, &plan)) >= 0) {
        free(o.files);
        return rc;
    }
    /* one slot per distinct k-mer, whatever its set */
    plan.capacity =
        (uint64_t)ceil((double)plan.distinct * (1 + KMER_SLACK)) + 64;
    unsigned v;
    uint64_t cap;
    double fpr;
    kmer_size_table(&o, &plan, &v, &cap, &fpr);
    amq_maplet *m = NULL;
    amq_diag d;
    memset(&d, 0, sizeof d);
    amq_status st = kmer_maplet_new(&o.c, "or", (unsigned)o.nfiles, cap, fpr,
                                    false, &m, &d);
    if (st != AMQ_OK) {
        free(o.files);
        return cli_status_error("maplet", st, &d);
    }
    index_sink is = {m, &o.c, NULL, 0, 0};
    rc = 0;
    for (size_t i = 0; i < o.nfiles && rc == 0; i++) {
        is.path = o.files[i];
        is.bit = UINT64_C(1) << i;
        rc = kmer_scan(&o.c, o.files[i], index_batch, &is);
    }
    if (rc == 0 && !write_names(o.output, o.files, o.nfiles))
        rc = CLI_EXIT_ERR;
    if (rc == 0)
        rc = kmer_save(m, o.output);
    if (rc == 0 && !o.quiet) {
        amq_maplet_shape s;
        amq_maplet_get_shape(m, &s);
        fprintf(stderr,
                "amq: %s: %zu inputs, %llu k-mers, %llu distinct, "
                "%.2f bits each\n",
                o.output, o.nfiles, (unsigned long long)is.kmers,
                (unsigned long long)s.distinct,
                8.0 * (double)amq_filter_size_bytes(m) /
                    (double)(s.distinct ? s.distinct : 1));
    }
    amq_maplet_free(m);
    free(o.files);
    return rc;
}

/* ---- search ------------------------------------------------------------------ */

typedef struct names {
    char **name;
    size_t n;
    char *text;
} names;

/* IDX.names, as many as the index's value bits. */
static bool read_names(const char *idx, unsigned want, names *nm) {
    size_t len = strlen(idx), cap = 1 << 12, got = 0;
    char *path = malloc(len + 8);
    memset(nm, 0, sizeof *nm);
    if (path == NULL)
        return false;
    snprintf(path, len + 8, "%s.names", idx);
    FILE *fp = fopen(path, "rb");
    nm->text = malloc(cap + 1);
    while (fp != NULL && nm->text != NULL) {
        got += fread(nm->text + got, 1, cap - got, fp);
        if (got < cap)
            break;
        char *nt = realloc(nm->text, 2 * cap + 1);
        if (nt == NULL)
            break;
        nm->text = nt;
        cap *= 2;
    }
    nm->name = calloc(want + 1, sizeof *nm->name);
    bool ok = fp != NULL && nm->text != NULL && nm->name != NULL;
    for (char *p = ok ? nm->text : NULL; p != NULL && p < nm->text + got;) {
        char *nl = memchr(p, '\n', (size_t)(nm->text + got - p));
        if (nl == NULL || nm->n == want) {
            ok = false;
            break;
        }
        *nl = '\0';
        nm->name[nm->n++] = p;
        p = nl + 1;
    }
    if (fp != NULL)
        fclose(fp);
    if (!ok || nm->n != want)
        cli_error("%s: missing or not %u names (write it again with amq "
                  "kmer index)",
                  path, want);
    free(path);
    return ok && nm->n == want;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

typedef struct search_ctx {
    amq_filter *m;
    kmer_conf c;
    names nm;
    double theta;
    uint64_t *q; /* the query's distinct k-mers */
    size_t qcap, hits;
    bool json;
} search_ctx;

/* One query: its distinct k-mers, each file's share, the files at theta. */
static bool search_one(search_ctx *s, const seq_reader *r) {
    size_t n = 0;
    uint64_t per[64] = {0};
    kmer_roll kr;
    uint64_t fwd, rev;
    if (r->seq_len > s->qcap) {
        free(s->q);
        s->qcap = r->seq_len;
        if ((s->q = malloc(s->qcap * sizeof *s->q)) == NULL)
            return false;
    }
    kmer_roll_init(&kr, s->c.k);
    for (size_t i = 0; i < r->seq_len; i++)
        if (kmer_roll_push(&kr, r->seq[i], &fwd, &rev))
            s->q[n++] = kmer_code(&s->c, fwd, rev);
    qsort(s->q, n, sizeof *s->q, cmp_u64);
    size_t d = 0;
    for (size_t i = 0; i < n; i++)
        if (d == 0 || s->q[d - 1] != s->q[i])
            s->q[d++] = s->q[i];
    for (size_t i = 0; i < d; i++) {
        uint64_t set = 0;
        amq_maplet_get_hash(s->m, kmer_hash(s->m, &s->c, s->q[i]), &set);
        for (unsigned f = 0; f < s->nm.n; f++)
            per[f] += set >> f & 1;
    }
    for (unsigned f = 0; d > 0 && f < s->nm.n; f++) {
        double share = (double)per[f] / (double)d;
        if (share + 1e-12 < s->theta || per[f] == 0)
            continue;
        if (s->json) {
            cli_json j;
            cli_json_init(&j, stdout, false);
            cli_json_open(&j, NULL, '{');
            cli_json_str(&j, "query", r->name);
            cli_json_str(&j, "file", s->nm.name[f]);
            cli_json_num(&j, "share", share);
            cli_json_close(&j);
        } else {
            printf("%s\t%s\t%.6f\n", r->name, s->nm.name[f], share);
        }
        s->hits++;
    }
    return true;
}

int cli_kmer_search(int argc, char **argv) {
    kmer_opts o;
    search_ctx s;
    memset(&o, 0, sizeof o);
    memset(&s, 0, sizeof s);
    s.theta = 0.8;
    int rc = kmer_parse_args(argc, argv, &o, &s.theta);
    s.json = o.json;
    if (rc < 0 && o.nfiles != 2)
        rc = cli_usage_error("kmer", "search needs IDX QUERY.fa");
    amq_maplet_shape sh;
    if (rc < 0 && ((s.m = kmer_open(o.files[0], &s.c)) == NULL ||
                   amq_maplet_get_shape(s.m, &sh) != AMQ_OK ||
                   !read_names(o.files[0], sh.value_bits, &s.nm)))
        rc = CLI_EXIT_ERR;
    seq_reader r;
    int fd = -1, got = 0;
    if (rc < 0 && !kmer_input_open(o.files[1], &r, &fd))
        rc = CLI_EXIT_ERR;
    if (rc < 0) {
        while ((got = seq_next(&r)) == 1 && search_one(&s, &r))
            ;
        rc = got < 0   ? kmer_input_error(o.files[1], &r)
             : got > 0 ? cli_status_error("search", AMQ_ERR_NOMEM, NULL)
             : s.hits  ? CLI_EXIT_OK
                       : CLI_EXIT_NONE;
        kmer_input_close(&r, fd);
    }
    amq_filter_free(s.m);
    free(s.q);
    free(s.nm.name);
    free(s.nm.text);
    free(o.files);
    return rc;
}
