/*
 * kmer.c — `amq kmer count|query|histo|dump|merge`: k-mer counting on a
 * counting maplet, as Squeakr does on the counting quotient filter
 * (Pandey, Bender, Johnson, Patro 2017); `amq kmer` dispatches every verb
 * from here (index and search: kmer_index.c; what they share:
 * kmer_common.c).
 *
 * count: a first pass (kmer_size.c) sizes the table and picks its value
 * width from a sample of the input's k-mers. Then the main thread reads
 * FASTA/FASTQ (plain or gzip, seqio.c), rolls each sequence's k-mers (any
 * base but ACGT restarts the window, as jellyfish does), takes the
 * canonical strand if asked, hashes them and hands batches of 65536
 * hashes to the workers (-j T: T - 1 of them, the reader being the T-th),
 * which sort each batch, collapse its repeats into counts and add them
 * in table order into a maplet with the sum operator, in concurrent mode
 * (the quotient filter's region locks) when there are two or more. A
 * maplet at its maximum load (an estimate short, or stdin, which has no
 * first pass) is resized by whichever worker finds it so first, under a
 * write lock the others wait on (exact mode stays exact: the fingerprint
 * is the whole k-mer in every shape).
 *
 *   reader ──batches──► worker 1 ─┐
 *          ──batches──► worker 2 ─┼─► maplet (op=sum, v bits, concurrent)
 *                                 └─ resize: write lock, twice the slots
 *
 * histo and dump read the maplet in fingerprint order; query looks up the
 * k-mers of a k-mer list or of sequences.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kmer_common.h"

/* ---- count: the workers ------------------------------------------------------ */

enum { KQ = 4 }; /* batches in flight */

typedef struct kcount {
    amq_maplet *m;
    pthread_rwlock_t grow; /* puts hold it shared, a resize exclusive */
    pthread_mutex_t mu;
    pthread_cond_t ready, room;
    uint64_t *slot[KQ];
    size_t len[KQ], head, tail, queued;
    bool done;
    uint64_t gen;    /* resizes so far (under grow)              */
    uint64_t vmax;   /* the largest value one put takes          */
    uint64_t memory; /* bytes the table may take (--memory)     */
    bool over;       /* growing would pass it (under grow)      */
    amq_status err;  /* the first failure (under mu)             */
} kcount;

/* How many of n more puts to make before the table grows: each takes at
 * most one more slot (a value is at most 2^v - 1), so as many as keep it
 * at or below its maximum load (a quotient table slows sharply past it);
 * 0, to grow first, when that is a small share of n. Other workers may
 * add beside this one: the count is a trigger for a resize, not a
 * guarantee, and a put that does not fit still reports FULL. */
static size_t kmer_room(const amq_maplet *m, size_t n) {
    amq_maplet_shape s;
    amq_maplet_get_shape(m, &s);
    double room = KMER_MAX_LOAD * (double)s.slots - (double)s.used_slots;
    if (room >= (double)n)
        return n;
    return room < (double)n / 16 ? 0 : (size_t)room;
}

/* Twice the slots, unless the table a resize builds beside the old one
 * (twice its size) would pass the memory limit: then AMQ_ERR_NOMEM with
 * kc->over set. Under the write lock. */
static amq_status grow(kcount *kc) {
    if (3.0 * (double)amq_filter_size_bytes(kc->m) > (double)kc->memory) {
        kc->over = true;
        return AMQ_ERR_NOMEM;
    }
    return amq_maplet_resize(kc->m);
}

/* Put (h[i], val[i]) for i < u (values at most kc->vmax) in that order;
 * a full maplet is resized once by whoever finds it full first (gen
 * tells the others it happened). */
static amq_status put_pairs(kcount *kc, const uint64_t *h, const uint64_t *val,
                            size_t u) {
    amq_status st = AMQ_OK;
    pthread_rwlock_rdlock(&kc->grow);
    for (size_t i = 0; i < u && st == AMQ_OK;) {
        size_t done = 0, room = kmer_room(kc->m, u - i);
        if (room == 0)
            st = AMQ_ERR_FULL;
        else
            st = amq_maplet_put_batch(kc->m, h + i, val + i, room, &done);
        i += done;
        if (st != AMQ_ERR_FULL)
            continue;
        uint64_t gen = kc->gen;
        pthread_rwlock_unlock(&kc->grow);
        pthread_rwlock_wrlock(&kc->grow);
        st = kc->gen == gen ? grow(kc) : AMQ_OK;
        kc->gen += st == AMQ_OK && kc->gen == gen;
        pthread_rwlock_unlock(&kc->grow);
        pthread_rwlock_rdlock(&kc->grow);
    }
    pthread_rwlock_unlock(&kc->grow);
    return st;
}

/* Add 1 for each of h[0..n): sorted, repeats collapsed into counts (at
 * most vmax a put), put in table order. */
static amq_status put_batch(kcount *kc, uint64_t *h, size_t n) {
    uint64_t *tmp = malloc(n * sizeof *tmp + 1);
    if (tmp == NULL)
        return AMQ_ERR_NOMEM;
    kmer_sort(h, tmp, n);
    uint64_t *val = tmp, vmax = kc->vmax;
    size_t u = 0;
    for (size_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && h[j] == h[i]; j++)
            ;
        for (uint64_t c = j - i; c > 0;) {
            uint64_t x = c < vmax ? c : vmax;
            h[u] = h[i];
            val[u++] = x;
            c -= x;
        }
    }
    amq_status st = put_pairs(kc, h, val, u);
    free(tmp);
    return st;
}

static void *count_worker(void *arg) {
    kcount *kc = arg;
    for (;;) {
        pthread_mutex_lock(&kc->mu);
        while (kc->queued == 0 && !kc->done)
            pthread_cond_wait(&kc->ready, &kc->mu);
        if (kc->queued == 0) {
            pthread_mutex_unlock(&kc->mu);
            return NULL;
        }
        uint64_t *h = kc->slot[kc->head];
        size_t n = kc->len[kc->head];
        kc->head = (kc->head + 1) % KQ;
        kc->queued--;
        bool failed = kc->err != AMQ_OK;
        pthread_cond_signal(&kc->room);
        pthread_mutex_unlock(&kc->mu);
        amq_status st = failed ? AMQ_OK : put_batch(kc, h, n);
        free(h);
        if (st != AMQ_OK) {
            pthread_mutex_lock(&kc->mu);
            if (kc->err == AMQ_OK)
                kc->err = st;
            pthread_mutex_unlock(&kc->mu);
        }
    }
}

/* Workers beside the reader: -t T is T threads in all. */
static unsigned workers_for(unsigned threads) {
    return threads > 1 ? threads - 1 : 0;
}

/* Hand a batch to the workers (it is theirs to free), or with no workers
 * put it here. */
static amq_status submit(kcount *kc, uint64_t *h, size_t n, unsigned threads) {
    if (workers_for(threads) == 0) {
        amq_status st = put_batch(kc, h, n);
        free(h);
        return st;
    }
    pthread_mutex_lock(&kc->mu);
    while (kc->queued == KQ)
        pthread_cond_wait(&kc->room, &kc->mu);
    kc->slot[kc->tail] = h;
    kc->len[kc->tail] = n;
    kc->tail = (kc->tail + 1) % KQ;
    kc->queued++;
    amq_status st = kc->err;
    pthread_cond_signal(&kc->ready);
    pthread_mutex_unlock(&kc->mu);
    return st;
}

/* ---- count: reading --------------------------------------------------------------- */

typedef struct count_sink {
    const kmer_opts *o;
    kcount *kc;
    uint64_t kmers;
} count_sink;

/* A batch of codes: hashed in place and handed on; -1 when the maplet
 * refused a batch (count_all reports it after the workers). */
static int count_batch(void *ctx, uint64_t **codes, size_t n) {
    count_sink *cs = ctx;
    uint64_t *h = *codes;
    for (size_t i = 0; i < n; i++)
        h[i] = kmer_hash(cs->kc->m, &cs->o->c, h[i]);
    cs->kmers += n;
    *codes = malloc(KMER_BATCH * sizeof **codes);
    if (submit(cs->kc, h, n, cs->o->threads) != AMQ_OK)
        return -1;
    if (*codes != NULL)
        return 0;
    cli_error("out of memory");
    return CLI_EXIT_ERR;
}

/* The exit status after a put failed with st: past the memory limit
 * (kc->over), or another failure. */
static int table_error(const kcount *kc, amq_status st) {
    if (!kc->over)
        return cli_status_error("counting", st, NULL);
    cli_error("the table is full at %.1f MB and growing it needs %.1f MB "
              "in all, more than the memory limit of %.1f MB: give more "
              "--memory, or count with --fpr E; nothing written",
              (double)amq_filter_size_bytes(kc->m) / 1e6,
              3.0 * (double)amq_filter_size_bytes(kc->m) / 1e6,
              (double)kc->memory / 1e6);
    return CLI_EXIT_ERR;
}

static int count_all(const kmer_opts *o, kcount *kc, uint64_t *kmers) {
    pthread_t th[64];
    unsigned started = 0;
    int rc = 0;
    for (unsigned t = 0; t < workers_for(o->threads); t++)
        if (pthread_create(&th[started], NULL, count_worker, kc) == 0)
            started++;
    count_sink cs = {o, kc, 0};
    for (size_t i = 0; i < o->nfiles && rc == 0; i++)
        rc = kmer_scan(&o->c, o->files[i], count_batch, &cs);
    *kmers = cs.kmers;
    pthread_mutex_lock(&kc->mu);
    kc->done = true;
    pthread_cond_broadcast(&kc->ready);
    pthread_mutex_unlock(&kc->mu);
    for (unsigned t = 0; t < started; t++)
        pthread_join(th[t], NULL);
    if (rc <= 0 && kc->err != AMQ_OK) /* the workers are done: no race */
        rc = table_error(kc, kc->err);
    return rc < 0 ? CLI_EXIT_ERR : rc;
}

/* ---- count and merge: the table ------------------------------------------------- */

/* A new table as o and plan say, within the memory limit: -1 to go on,
 * else the exit status after an error. */
static int table_open(kcount *kc, const kmer_opts *o, const kmer_plan *plan,
                      bool concurrent) {
    unsigned v;
    uint64_t cap;
    double fpr;
    kmer_size_table(o, plan, &v, &cap, &fpr);
    memset(kc, 0, sizeof *kc);
    amq_diag d;
    memset(&d, 0, sizeof d);
    amq_status st =
        kmer_maplet_new(&o->c, "sum", v, cap, fpr, concurrent, &kc->m, &d);
    if (st != AMQ_OK)
        return cli_status_error("maplet", st, &d);
    kc->vmax = v >= 64 ? UINT64_MAX : (1ULL << v) - 1;
    kc->memory = kmer_memory_limit(o);
    if ((double)amq_filter_size_bytes(kc->m) > (double)kc->memory) {
        cli_error("the table for about %llu distinct k-mers takes %.1f MB, "
                  "more than the memory limit of %.1f MB: give more "
                  "--memory, or count with --fpr E; nothing written",
                  (unsigned long long)(plan->known ? plan->distinct : cap),
                  (double)amq_filter_size_bytes(kc->m) / 1e6,
                  (double)kc->memory / 1e6);
        amq_maplet_free(kc->m);
        return CLI_EXIT_ERR;
    }
    pthread_rwlock_init(&kc->grow, NULL);
    pthread_mutex_init(&kc->mu, NULL);
    pthread_cond_init(&kc->ready, NULL);
    pthread_cond_init(&kc->room, NULL);
    return -1;
}

/* After the puts (rc: 0 or the exit status): -L/-U, save, the summary
 * line, and the table freed. The exit status. */
static int table_finish(kcount *kc, const kmer_opts *o, int rc, uint64_t kmers,
                        double t0) {
    if (rc == 0 && (o->lower > 1 || o->upper != 0)) {
        amq_status st = amq_maplet_keep_values(
            kc->m, o->lower ? o->lower : 1, o->upper ? o->upper : UINT64_MAX);
        rc = st == AMQ_OK ? 0 : cli_status_error("-L/-U", st, NULL);
    }
    if (rc == 0)
        rc = kmer_save(kc->m, o->output);
    amq_maplet_shape s;
    amq_maplet_get_shape(kc->m, &s);
    if (rc == 0 && !o->quiet)
        fprintf(stderr,
                "amq: %s: %llu k-mers, %llu distinct%s, %.2f bits "
                "each, %.2f s\n",
                o->output, (unsigned long long)kmers,
                (unsigned long long)s.distinct,
                o->lower > 1 || o->upper != 0 ? " kept (-L/-U)" : "",
                8.0 * (double)amq_filter_size_bytes(kc->m) /
                    (double)(s.distinct ? s.distinct : 1),
                cli_now() - t0);
    amq_maplet_free(kc->m);
    pthread_rwlock_destroy(&kc->grow);
    pthread_mutex_destroy(&kc->mu);
    pthread_cond_destroy(&kc->ready);
    pthread_cond_destroy(&kc->room);
    return rc;
}

/* ---- count: the command ------------------------------------------------------------ */

static int kmer_count(int argc, char **argv) {
    kmer_opts o;
    memset(&o, 0, sizeof o);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    o.threads = cpus < 1 ? 1u : cpus > 64 ? 64u : (unsigned)cpus;
    o.c.exact = true;
    int rc = kmer_parse_args(argc, argv, &o, NULL);
    if (rc < 0 && (o.c.k == 0 || o.output == NULL || o.nfiles == 0))
        rc = cli_usage_error("kmer", "count needs -k K, -o FILE and inputs");
    if (rc < 0 && !o.c.exact && o.fpr == 0)
        rc = cli_usage_error("kmer", "give --fpr E or --exact");
    if (rc < 0)
        rc = kmer_check_exact(&o.c);
    if (rc < 0 && o.upper != 0 && o.lower > o.upper)
        rc = cli_usage_error("kmer", "-L %llu is above -U %llu",
                             (unsigned long long)o.lower,
                             (unsigned long long)o.upper);
    kmer_plan plan;
    memset(&plan, 0, sizeof plan);
    if (rc < 0 && o.capacity == 0)
        rc = kmer_plan_input(&o, &plan);
    if (rc >= 0) {
        free(o.files);
        return rc;
    }
    kcount kc;
    if ((rc = table_open(&kc, &o, &plan, workers_for(o.threads) > 1)) >= 0) {
        free(o.files);
        return rc;
    }
    uint64_t kmers = 0;
    double t0 = cli_now();
    rc = count_all(&o, &kc, &kmers);
    rc = table_finish(&kc, &o, rc, kmers, t0);
    free(o.files);
    return rc;
}

/* ---- merge --------------------------------------------------------------------------- */

static void conf_text(const kmer_conf *c, char out[64]) {
    snprintf(out, 64, "k = %u, %s, %s", c->k,
             c->canonical ? "canonical" : "both strands",
             c->exact ? "exact" : "approximate");
}

/* Open every input; false after an error (those opened are freed). All
 * must share k, strands and mode. */
static bool merge_open(const kmer_opts *o, amq_filter **in, kmer_conf *c) {
    for (size_t i = 0; i < o->nfiles; i++) {
        kmer_conf ci;
        in[i] = kmer_open(o->files[i], &ci);
        bool ok = in[i] != NULL;
        if (ok && i == 0)
            *c = ci;
        else if (ok && (ci.k != c->k || ci.canonical != c->canonical ||
                        ci.exact != c->exact)) {
            char a[64], b[64];
            conf_text(&ci, a);
            conf_text(c, b);
            cli_error("%s: %s, but %s: %s: k-mer tables merge only with the "
                      "same k, strands and mode",
                      o->files[i], a, o->files[0], b);
            ok = false;
        }
        if (!ok) {
            for (size_t j = 0; j <= i; j++)
                amq_filter_free(in[j]);
            return false;
        }
    }
    return true;
}

/* Exact tables: sized from a sample of their k-mers and summed counts,
 * every entry put again under its k-mer (any shapes). kmers: the sum of
 * the counts. 0 or the exit status. */
static int merge_exact(const kmer_opts *o, amq_filter **in, uint64_t *kmers) {
    kmer_census *cs = kmer_census_new();
    uint64_t *h = malloc(KMER_BATCH * sizeof *h);
    uint64_t *val = malloc(KMER_BATCH * sizeof *val);
    int rc = cs != NULL && h != NULL && val != NULL ? -1 : CLI_EXIT_ERR;
    amq_maplet_iter it;
    uint64_t fp, v, e, code;
    for (size_t i = 0; rc < 0 && i < o->nfiles; i++) {
        amq_maplet_iter_init(in[i], &it);
        while (amq_maplet_iter_next(&it, &fp, &v, &e))
            if (amq_maplet_exact_key(in[i], fp, &code) == AMQ_OK)
                kmer_census_add(cs, code, v);
    }
    kmer_plan plan;
    kcount kc;
    if (rc < 0) {
        kmer_census_plan(cs, o, &plan);
        rc = table_open(&kc, o, &plan, false);
    } else
        cli_error("out of memory");
    kmer_census_free(cs);
    if (rc >= 0) {
        free(h);
        free(val);
        return rc;
    }
    double t0 = cli_now();
    amq_status st = AMQ_OK;
    size_t n = 0;
    for (size_t i = 0; st == AMQ_OK && i < o->nfiles; i++) {
        amq_maplet_iter_init(in[i], &it);
        while (st == AMQ_OK && amq_maplet_iter_next(&it, &fp, &v, &e)) {
            amq_maplet_exact_key(in[i], fp, &code);
            uint64_t hh = kmer_hash(kc.m, &o->c, code);
            *kmers += v;
            for (uint64_t left = v; left > 0 && st == AMQ_OK;) {
                uint64_t x = left < kc.vmax ? left : kc.vmax;
                h[n] = hh;
                val[n++] = x;
                left -= x;
                if (n == KMER_BATCH) {
                    st = put_pairs(&kc, h, val, n);
                    n = 0;
                }
            }
        }
    }
    if (st == AMQ_OK)
        st = put_pairs(&kc, h, val, n);
    free(h);
    free(val);
    return table_finish(&kc, o, st == AMQ_OK ? 0 : table_error(&kc, st), *kmers,
                        t0);
}

/* Approximate tables keep fingerprints, which cannot be hashed again:
 * they merge when they share a shape. 0 or the exit status. */
static int merge_approx(const kmer_opts *o, amq_filter **in) {
    amq_filter *dst = NULL;
    amq_diag d;
    memset(&d, 0, sizeof d);
    amq_status st = amq_filter_load_file(o->files[0], NULL, &dst, &d);
    if (st != AMQ_OK)
        return cli_status_error(o->files[0], st, &d);
    for (size_t i = 1; st == AMQ_OK && i < o->nfiles; i++) {
        st = amq_maplet_merge(dst, in[i]);
        if (st == AMQ_ERR_INCOMPATIBLE)
            cli_error("%s and %s differ in shape: approximate k-mer tables "
                      "keep fingerprints, not k-mers, and merge only when "
                      "counted alike (--fpr, -n and --value-bits); exact "
                      "tables (the default) merge whatever their shapes",
                      o->files[0], o->files[i]);
        else if (st == AMQ_ERR_FULL)
            cli_error("%s: the merged table is full: count the inputs "
                      "with a larger -n",
                      o->files[i]);
        else if (st != AMQ_OK)
            cli_status_error(o->files[i], st, NULL);
    }
    if (st == AMQ_OK && (o->lower > 1 || o->upper != 0))
        st = amq_maplet_keep_values(dst, o->lower ? o->lower : 1,
                                    o->upper ? o->upper : UINT64_MAX);
    int rc = st == AMQ_OK ? kmer_save(dst, o->output) : CLI_EXIT_ERR;
    amq_filter_free(dst);
    return rc;
}

static int kmer_merge(int argc, char **argv) {
    kmer_opts o;
    memset(&o, 0, sizeof o);
    int rc = kmer_parse_args(argc, argv, &o, NULL);
    if (rc < 0 && (o.output == NULL || o.nfiles == 0))
        rc = cli_usage_error("kmer", "merge needs -o FILE and k-mer tables");
    if (rc < 0 && (o.c.k != 0 || o.c.canonical || o.c.exact || o.fpr != 0 ||
                   o.c.min_qual != 0))
        rc = cli_usage_error("kmer",
                             "merge takes k, strands and mode from its "
                             "tables: -k, -C, -Q, --exact and --fpr are for "
                             "count");
    if (rc < 0 && o.upper != 0 && o.lower > o.upper)
        rc = cli_usage_error("kmer", "-L %llu is above -U %llu",
                             (unsigned long long)o.lower,
                             (unsigned long long)o.upper);
    amq_filter **in = rc < 0 ? calloc(o.nfiles, sizeof *in) : NULL;
    if (rc < 0 && in == NULL)
        rc = cli_usage_error("kmer", "out of memory");
    if (rc < 0 && !merge_open(&o, in, &o.c))
        rc = CLI_EXIT_ERR;
    if (rc >= 0) {
        free(in);
        free(o.files);
        return rc;
    }
    uint64_t kmers = 0;
    rc = o.c.exact ? merge_exact(&o, in, &kmers) : merge_approx(&o, in);
    for (size_t i = 0; i < o.nfiles; i++)
        amq_filter_free(in[i]);
    free(in);
    free(o.files);
    return rc;
}

/* ---- histo, dump, query -------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* A k-mer and its count: "KMER<TAB>COUNT" or a JSON record. */
static void print_kmer(const char *text, uint64_t count, bool json) {
    if (!json) {
        printf("%s\t%llu\n", text, (unsigned long long)count);
        return;
    }
    cli_json j;
    cli_json_init(&j, stdout, false);
    cli_json_open(&j, NULL, '{');
    cli_json_str(&j, "kmer", text);
    cli_json_u64(&j, "count", count);
    cli_json_close(&j);
}

/* What histo and dump take: the file, --json, and the counts shown. */
typedef struct kmer_out {
    const char *path;
    bool json;
    uint64_t lo, hi;
} kmer_out;

static bool count_in(const kmer_out *o, uint64_t v) {
    return v >= o->lo && v <= o->hi;
}

/* `jellyfish histo`: "count frequency" for every count held in range
 * (JSON: {"count": C, "kmers": N}). */
static int kmer_histo(const kmer_out *out) {
    const char *path = out->path;
    bool json = out->json;
    kmer_conf c;
    amq_filter *m = kmer_open(path, &c);
    amq_maplet_iter it;
    uint64_t fp, v, e, n = 0, cap = 1 << 16;
    if (m == NULL)
        return CLI_EXIT_ERR;
    uint64_t *counts = malloc(cap * sizeof *counts);
    amq_maplet_iter_init(m, &it);
    while (counts != NULL && amq_maplet_iter_next(&it, &fp, &v, &e)) {
        if (n == cap) {
            uint64_t *nc = realloc(counts, 2 * cap * sizeof *nc);
            if (nc == NULL)
                free(counts);
            counts = nc;
            cap *= 2;
        }
        if (counts != NULL && count_in(out, v))
            counts[n++] = v;
    }
    amq_filter_free(m);
    if (counts == NULL) {
        cli_error("%s: out of memory", path);
        return CLI_EXIT_ERR;
    }
    qsort(counts, n, sizeof *counts, cmp_u64);
    for (uint64_t i = 0, j; i < n; i = j) {
        for (j = i; j < n && counts[j] == counts[i]; j++)
            ;
        if (json)
            printf("{\"count\":%llu,\"kmers\":%llu}\n",
                   (unsigned long long)counts[i], (unsigned long long)(j - i));
        else
            printf("%llu %llu\n", (unsigned long long)counts[i],
                   (unsigned long long)(j - i));
    }
    free(counts);
    return CLI_EXIT_OK;
}

/* `jellyfish dump -c -t`: "KMER<TAB>count" (exact mode only). */
static int kmer_dump(const kmer_out *out) {
    const char *path = out->path;
    bool json = out->json;
    kmer_conf c;
    amq_filter *m = kmer_open(path, &c);
    amq_maplet_iter it;
    uint64_t fp, v, e, code;
    char text[40];
    if (m == NULL)
        return CLI_EXIT_ERR;
    if (!c.exact) {
        amq_filter_free(m);
        cli_error("%s: an approximate k-mer maplet keeps fingerprints, not "
                  "k-mers: only an --exact count can be dumped",
                  path);
        return CLI_EXIT_ERR;
    }
    amq_maplet_iter_init(m, &it);
    while (amq_maplet_iter_next(&it, &fp, &v, &e)) {
        if (!count_in(out, v))
            continue;
        amq_maplet_exact_key(m, fp, &code);
        kmer_text(code, c.k, text);
        print_kmer(text, v, json);
    }
    amq_filter_free(m);
    return CLI_EXIT_OK;
}

static void print_count(const amq_filter *m, const kmer_conf *c, uint64_t code,
                        bool json) {
    char text[40];
    uint64_t v = 0;
    uint64_t rc = code;
    if (c->canonical) { /* the other strand of code, to pick the smaller */
        rc = 0;
        for (unsigned i = 0; i < c->k; i++)
            rc = rc << 2 | (3 - (code >> (2 * i) & 3));
    }
    amq_maplet_get_hash(m, kmer_hash(m, c, rc < code ? rc : code), &v);
    kmer_text(code, c->k, text);
    print_kmer(text, v, json);
}

/* Counts of the k-mers listed one per line, or of every k-mer of the
 * sequences of a FASTA/FASTQ file (told apart by the first byte). */
static int kmer_query(const char *path, const char *input, bool json) {
    kmer_conf c;
    amq_filter *m = kmer_open(path, &c);
    seq_reader r;
    int fd, got, rc = CLI_EXIT_OK;
    if (m == NULL)
        return CLI_EXIT_ERR;
    if (!kmer_input_open(input ? input : "-", &r, &fd)) {
        amq_filter_free(m);
        return CLI_EXIT_ERR;
    }
    bool seqs = r.gz || r.xz || r.bz ||
                (r.out_len > 0 && (r.out[0] == '>' || r.out[0] == '@'));
    if (seqs) {
        while ((got = seq_next(&r)) == 1) {
            kmer_roll kr;
            uint64_t fwd, rev;
            kmer_roll_init(&kr, c.k);
            for (size_t i = 0; i < r.seq_len; i++)
                if (kmer_roll_push(&kr, r.seq[i], &fwd, &rev))
                    print_count(m, &c, fwd, json);
        }
        if (got < 0)
            rc = kmer_input_error(input ? input : "<stdin>", &r);
    } else {
        uint64_t start;
        while ((got = seq_line(&r, &start)) == 1) {
            uint64_t code;
            if (r.buf_len == 0)
                continue;
            if (!kmer_parse(r.buf, r.buf_len, c.k, &code)) {
                cli_error("%s: line %llu: not a %u-mer of ACGT",
                          input ? input : "<stdin>", (unsigned long long)r.line,
                          c.k);
                rc = CLI_EXIT_ERR;
                break;
            }
            print_count(m, &c, code, json);
        }
        if (got < 0)
            rc = kmer_input_error(input ? input : "<stdin>", &r);
    }
    kmer_input_close(&r, fd);
    amq_filter_free(m);
    return rc;
}

static int run_count(int argc, char **argv) { return kmer_count(argc, argv); }

/* FILE [--json] [-L N] [-U N]: -1 to go on, else the exit status. */
static int parse_out(int argc, char **argv, kmer_out *o) {
    enum { O_JSON = 1, O_LOWER, O_UPPER };
    static const cli_opt opts[] = {{"json", 0, false, O_JSON},
                                   {"lower-count", 'L', true, O_LOWER},
                                   {"upper-count", 'U', true, O_UPPER},
                                   {NULL, 0, false, 0}};
    cli_args a;
    int id;
    memset(o, 0, sizeof *o);
    o->lo = 1;
    o->hi = UINT64_MAX;
    cli_args_init(&a, "kmer", argc, argv);
    while ((id = cli_next(&a, opts)) != CLI_NEXT_END) {
        if (id == CLI_NEXT_ERR)
            return CLI_EXIT_ERR;
        if (id == CLI_OPT_HELP)
            return cli_help_print(stdout, "kmer") ? CLI_EXIT_OK : CLI_EXIT_ERR;
        if (id == O_JSON)
            o->json = true;
        else if (id == O_LOWER || id == O_UPPER) {
            if (!cli_parse_u64("kmer", id == O_LOWER ? "-L" : "-U", a.value,
                               id == O_LOWER ? &o->lo : &o->hi))
                return CLI_EXIT_ERR;
        } else if (o->path != NULL)
            return cli_usage_error("kmer", "%s: too many arguments", argv[0]);
        else
            o->path = a.value;
    }
    if (o->path == NULL)
        return cli_usage_error("kmer", "%s: missing FILE", argv[0]);
    if (o->lo > o->hi)
        return cli_usage_error("kmer", "-L %llu is above -U %llu",
                               (unsigned long long)o->lo,
                               (unsigned long long)o->hi);
    return -1;
}

static int run_histo(int argc, char **argv) {
    kmer_out o;
    int rc = parse_out(argc, argv, &o);
    return rc >= 0 ? rc : kmer_histo(&o);
}

static int run_dump(int argc, char **argv) {
    kmer_out o;
    int rc = parse_out(argc, argv, &o);
    return rc >= 0 ? rc : kmer_dump(&o);
}

static int run_query(int argc, char **argv) {
    const char *pos[2] = {NULL, NULL};
    bool json = false;
    int rc = cli_positionals("kmer", argc, argv, 1, 2, pos, &json);
    return rc >= 0 ? rc : kmer_query(pos[0], pos[1], json);
}

int cli_cmd_kmer(int argc, char **argv) {
    static const cli_command subs[] = {
        {"count", run_count},        {"query", run_query},
        {"histo", run_histo},        {"dump", run_dump},
        {"merge", kmer_merge},       {"index", cli_kmer_index},
        {"search", cli_kmer_search}, {NULL, NULL}};
    return cli_dispatch("kmer", subs, argc, argv);
}
