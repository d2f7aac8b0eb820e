/*
 * kmer_index.c — `amq kmer index` and `amq kmer search`: sequence search
 * in the manner of Mantis (Pandey et al. 2018) on a maplet.
 *
 * index: each input's distinct canonical k-mers are read and sorted (the
 * inputs on every thread), then merged in hash order; the inputs holding
 * a k-mer form its colour class (colors.h: each distinct set stored once,
 * numbered), and one maplet maps the k-mer to its class + 1, so any number
 * of inputs costs a class id per k-mer. Exact mode by default: the
 * fingerprint is the whole k-mer, so the sets are exact; with --fpr,
 * k-mers that share a fingerprint share the class of the union of their
 * sets (a k-mer may then be reported in the inputs of others, never
 * missing its own). IDX.names holds the inputs, one per line, and
 * IDX.classes the classes, both written before IDX.
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
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "colors.h"
#include "kmer_common.h"

/* ---- index: each input's distinct k-mers -------------------------------------- */

typedef struct kset { /* one input's distinct k-mer hashes, increasing */
    uint64_t *h;
    size_t n, cap;
} kset;

typedef struct index_job {
    const kmer_opts *o;
    const amq_maplet *hasher; /* the index's hashes (any size will do) */
    kset *sets;
    int *rc;
    size_t next; /* the next input to read (under mu) */
    uint64_t kmers;
    pthread_mutex_t mu;
} index_job;

typedef struct set_sink {
    kset *s;
    const amq_maplet *m;
    const kmer_conf *c;
    uint64_t kmers;
} set_sink;

static int set_batch(void *ctx, uint64_t **codes, size_t n) {
    set_sink *ss = ctx;
    kset *s = ss->s;
    if (s->n + n > s->cap) {
        size_t cap = s->cap ? 2 * s->cap : KMER_BATCH;
        while (cap < s->n + n)
            cap *= 2;
        uint64_t *h = realloc(s->h, cap * sizeof *h);
        if (h == NULL) {
            cli_error("out of memory");
            return CLI_EXIT_ERR;
        }
        s->h = h;
        s->cap = cap;
    }
    for (size_t i = 0; i < n; i++)
        s->h[s->n++] = kmer_hash(ss->m, ss->c, (*codes)[i]);
    ss->kmers += n;
    return 0;
}

/* Read input i into its set: sorted, repeats dropped. */
static int read_set(index_job *j, size_t i) {
    set_sink ss = {&j->sets[i], j->hasher, &j->o->c, 0};
    int rc = kmer_scan(&j->o->c, j->o->files[i], set_batch, &ss);
    kset *s = &j->sets[i];
    uint64_t *tmp = rc == 0 ? malloc(s->n * sizeof *tmp + 1) : NULL;
    if (rc == 0 && tmp == NULL) {
        cli_error("out of memory");
        rc = CLI_EXIT_ERR;
    }
    if (rc == 0) {
        kmer_sort(s->h, tmp, s->n);
        size_t d = 0;
        for (size_t k = 0; k < s->n; k++)
            if (d == 0 || s->h[d - 1] != s->h[k])
                s->h[d++] = s->h[k];
        s->n = d;
    }
    free(tmp);
    pthread_mutex_lock(&j->mu);
    j->kmers += ss.kmers;
    pthread_mutex_unlock(&j->mu);
    return rc;
}

static void *index_worker(void *arg) {
    index_job *j = arg;
    for (;;) {
        pthread_mutex_lock(&j->mu);
        size_t i = j->next++;
        pthread_mutex_unlock(&j->mu);
        if (i >= j->o->nfiles)
            return NULL;
        j->rc[i] = read_set(j, i);
    }
}

/* Every input's set, on o->threads threads; 0 or the first input's exit
 * status. */
static int read_sets(index_job *j) {
    pthread_t th[64];
    unsigned started = 0, want = j->o->threads;
    want = want < j->o->nfiles ? want : (unsigned)j->o->nfiles;
    for (unsigned t = 1; t < want; t++)
        if (pthread_create(&th[started], NULL, index_worker, j) == 0)
            started++;
    index_worker(j);
    for (unsigned t = 0; t < started; t++)
        pthread_join(th[t], NULL);
    for (size_t i = 0; i < j->o->nfiles; i++)
        if (j->rc[i] != 0)
            return j->rc[i];
    return 0;
}

/* ---- index: the colour classes ------------------------------------------------- */

/* A min-heap of the inputs by their next hash (kept in the entry, so a
 * comparison reads the heap only), ties by input id, so the inputs
 * holding a k-mer come out in increasing order. */
typedef struct mhead {
    uint64_t h;
    uint32_t id;
} mhead;

static bool head_less(mhead a, mhead b) {
    return a.h < b.h || (a.h == b.h && a.id < b.id);
}

static void heap_down(mhead *q, size_t n, size_t i) {
    mhead x = q[i];
    for (;;) {
        size_t l = 2 * i + 1, m = l;
        if (l >= n)
            break;
        if (l + 1 < n && head_less(q[l + 1], q[l]))
            m = l + 1;
        if (!head_less(q[m], x))
            break;
        q[i] = q[m];
        i = m;
    }
    q[i] = x;
}

/* The first of s's hashes at or above x. */
static size_t lower_bound(const kset *s, uint64_t x) {
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->h[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* One share of the hash space, [lo, hi] (inclusive), merged on its own
 * thread: its k-mers in hash order into h/v from `at` on, each with its
 * class + 1 in a table of the share's own (first seen, first numbered). */
typedef struct mrange {
    const kset *sets;
    size_t e;
    uint64_t lo, hi;
    size_t at, d;
    uint64_t *h, *v;
    color_table ct;
    bool ok;
} mrange;

static void *merge_range(void *arg) {
    mrange *m = arg;
    mhead *q = malloc(m->e * sizeof *q + 1);
    size_t *pos = malloc((m->e + 1) * sizeof *pos),
           *end = malloc((m->e + 1) * sizeof *end);
    uint32_t *ids = malloc(m->e * sizeof *ids + 1);
    size_t nq = 0;
    m->ok = q != NULL && pos != NULL && end != NULL && ids != NULL &&
            color_init(&m->ct, m->e);
    for (size_t i = 0; m->ok && i < m->e; i++) {
        pos[i] = lower_bound(&m->sets[i], m->lo);
        end[i] = m->hi == UINT64_MAX ? m->sets[i].n
                                     : lower_bound(&m->sets[i], m->hi + 1);
        if (pos[i] < end[i])
            q[nq++] = (mhead){m->sets[i].h[pos[i]], (uint32_t)i};
    }
    for (size_t i = nq; m->ok && i-- > 0;)
        heap_down(q, nq, i);
    uint64_t *h = m->h + m->at, *v = m->v + m->at;
    while (m->ok && nq > 0) {
        uint64_t x = q[0].h;
        size_t k = 0;
        while (nq > 0 && q[0].h == x) {
            uint32_t i = q[0].id;
            ids[k++] = i;
            if (++pos[i] == end[i])
                q[0] = q[--nq];
            else
                q[0].h = m->sets[i].h[pos[i]];
            heap_down(q, nq, 0);
        }
        uint64_t c = color_add(&m->ct, ids, k);
        m->ok = c != UINT64_MAX;
        h[m->d] = x;
        v[m->d++] = c + 1;
    }
    free(q);
    free(pos);
    free(end);
    free(ids);
    return NULL;
}

/* The union of the sets, in hash order, each k-mer with its class + 1
 * (h, v: *n of them, malloc'ed), on `threads` threads, one share of the
 * hash space each. The shares' classes are then numbered in share order,
 * each share's in its own order: the numbers a single pass in hash order
 * gives, so the index is the same on any number of threads. false when
 * out of memory. */
static bool merge_sets(const kset *sets, size_t e, unsigned threads,
                       color_table *ct, uint64_t **hs, uint64_t **vs,
                       size_t *n) {
    size_t total = 0;
    for (size_t i = 0; i < e; i++)
        total += sets[i].n;
    unsigned t = threads < 1 ? 1 : threads > 64 ? 64 : threads;
    mrange r[64];
    pthread_t th[64];
    bool started[64] = {false};
    uint64_t *h = malloc(total * sizeof *h + 1),
             *v = malloc(total * sizeof *v + 1);
    bool ok = h != NULL && v != NULL;
    size_t at = 0;
    for (unsigned i = 0; i < t; i++) {
        uint64_t lo = i == 0 ? 0 : (uint64_t)((UINT64_MAX / t) * i) + 1;
        uint64_t hi = i + 1 == t ? UINT64_MAX : (UINT64_MAX / t) * (i + 1);
        r[i] = (mrange){sets, e, lo, hi, at, 0, h, v, {0}, false};
        for (size_t s = 0; ok && s < e; s++) /* room: the share's entries */
            at +=
                (hi == UINT64_MAX ? sets[s].n : lower_bound(&sets[s], hi + 1)) -
                lower_bound(&sets[s], lo);
    }
    for (unsigned i = 1; ok && i < t; i++)
        started[i] = pthread_create(&th[i], NULL, merge_range, &r[i]) == 0;
    if (ok)
        merge_range(&r[0]);
    for (unsigned i = 1; ok && i < t; i++) {
        if (started[i])
            pthread_join(th[i], NULL);
        else
            merge_range(&r[i]);
    }
    size_t d = 0;
    uint32_t *ids = malloc(e * sizeof *ids + 1);
    ok = ok && ids != NULL;
    for (unsigned i = 0; i < t; i++) {
        uint64_t *map =
            ok && r[i].ok ? malloc((r[i].ct.classes + 1) * sizeof *map) : NULL;
        ok = ok && r[i].ok && map != NULL;
        for (uint64_t c = 0; ok && c < r[i].ct.classes; c++) {
            map[c] = color_add(ct, ids, color_ids(&r[i].ct, c, ids));
            ok = map[c] != UINT64_MAX;
        }
        for (size_t x = 0; ok && x < r[i].d; x++) {
            h[d] = h[r[i].at + x];
            v[d++] = map[v[r[i].at + x] - 1] + 1;
        }
        free(map);
        if (r[i].ok || r[i].ct.off != NULL)
            color_free(&r[i].ct);
    }
    free(ids);
    if (!ok) {
        free(h);
        free(v);
        return false;
    }
    *hs = h;
    *vs = v;
    *n = d;
    return true;
}

/* Approximate mode: k-mers whose hashes share a fingerprint in m share
 * an entry, so each such run (adjacent in hash order) gets the class of
 * the union of their sets: a k-mer's answer then holds every input it is
 * in. The pairs are compacted in place. false when out of memory. */
static bool unite_collisions(const amq_maplet *m, color_table *ct, uint64_t *h,
                             uint64_t *v, size_t *n) {
    uint32_t *a = malloc(ct->experiments * sizeof *a + 1);
    uint32_t *b = malloc(ct->experiments * sizeof *b + 1);
    uint32_t *u = malloc(ct->experiments * sizeof *u + 1);
    bool ok = a != NULL && b != NULL && u != NULL;
    size_t d = 0;
    uint64_t fp = *n > 0 ? amq_maplet_fingerprint(m, h[0]) : 0, next = 0;
    for (size_t i = 0, j; ok && i < *n; i = j, fp = next) {
        uint64_t cls = v[i];
        for (j = i + 1;
             ok && j < *n && (next = amq_maplet_fingerprint(m, h[j])) == fp;
             j++) {
            size_t na = color_ids(ct, cls - 1, a),
                   nb = color_ids(ct, v[j] - 1, b);
            size_t x = 0, y = 0, k = 0;
            while (x < na || y < nb) { /* the sorted union */
                if (y == nb || (x < na && a[x] < b[y]))
                    u[k++] = a[x++];
                else if (x == na || b[y] < a[x])
                    u[k++] = b[y++];
                else {
                    u[k++] = a[x++];
                    y++;
                }
            }
            uint64_t c = color_add(ct, u, k);
            ok = c != UINT64_MAX;
            cls = c + 1;
        }
        h[d] = h[i];
        v[d++] = cls;
    }
    free(a);
    free(b);
    free(u);
    *n = d;
    return ok;
}

/* Put the (h, v) pairs, growing a full table. */
static amq_status put_all(amq_maplet *m, const uint64_t *h, const uint64_t *v,
                          size_t n) {
    amq_status st = AMQ_OK;
    for (size_t i = 0; i < n && st == AMQ_OK;) {
        size_t done = 0;
        st = amq_maplet_put_batch(m, h + i, v + i, n - i, &done);
        i += done;
        if (st == AMQ_ERR_FULL)
            st = amq_maplet_resize(m);
    }
    return st;
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

/* The bits that name classes 1..C. */
static unsigned class_bits(uint64_t classes) {
    return classes ? 64u - (unsigned)__builtin_clzll(classes) : 1u;
}

/* The index maplet of the n (hash, class + 1) pairs into *out, within
 * the memory limit: -1 to go on, else the exit status after an error.
 * In approximate mode the pairs are united by fingerprint first, which
 * may add classes: the table is then made again with wider values (the
 * same slots and remainders, so the same fingerprints). */
static int fill_index(const kmer_opts *o, color_table *ct, uint64_t *h,
                      uint64_t *v, size_t n, amq_maplet **out) {
    amq_diag d;
    memset(&d, 0, sizeof d);
    amq_maplet *m = NULL;
    uint64_t cap = o->capacity ? o->capacity : n + n / 50 + 64;
    unsigned vbits = class_bits(ct->classes);
    amq_status st =
        kmer_maplet_new(&o->c, "max", vbits, cap, o->fpr, false, &m, &d);
    if (st == AMQ_OK && !o->c.exact) {
        if (!unite_collisions(m, ct, h, v, &n))
            st = AMQ_ERR_NOMEM;
        else if (class_bits(ct->classes) != vbits) {
            amq_maplet_free(m);
            m = NULL;
            st = kmer_maplet_new(&o->c, "max", class_bits(ct->classes), cap,
                                 o->fpr, false, &m, &d);
        }
    }
    if (st != AMQ_OK) {
        amq_maplet_free(m);
        return cli_status_error("maplet", st, &d);
    }
    if ((double)amq_filter_size_bytes(m) > (double)kmer_memory_limit(o)) {
        cli_error("the index of %zu distinct k-mers takes %.1f MB, more "
                  "than the memory limit of %.1f MB; nothing written",
                  n, (double)amq_filter_size_bytes(m) / 1e6,
                  (double)kmer_memory_limit(o) / 1e6);
        amq_maplet_free(m);
        return CLI_EXIT_ERR;
    }
    if ((st = put_all(m, h, v, n)) != AMQ_OK) {
        amq_maplet_free(m);
        return cli_status_error("maplet", st, NULL);
    }
    *out = m;
    return -1;
}

/* IDX.classes, written atomically. */
static bool write_classes(const char *idx, const color_table *ct) {
    uint8_t *buf = NULL;
    size_t n = 0, len = strlen(idx);
    char *path = malloc(len + 16), *tmp = malloc(len + 24);
    bool ok = path != NULL && tmp != NULL && color_encode(ct, &buf, &n);
    if (ok) {
        snprintf(path, len + 16, "%s.classes", idx);
        snprintf(tmp, len + 24, "%s.classes.tmp", idx);
        FILE *fp = fopen(tmp, "wb");
        ok = fp != NULL && fwrite(buf, 1, n, fp) == n;
        if (fp != NULL && fclose(fp) != 0)
            ok = false;
        if (ok && rename(tmp, path) != 0)
            ok = false;
        if (!ok)
            remove(tmp);
    }
    if (!ok)
        cli_error("%s.classes: cannot write the colour classes", idx);
    free(buf);
    free(path);
    free(tmp);
    return ok;
}

int cli_kmer_index(int argc, char **argv) {
    kmer_opts o;
    memset(&o, 0, sizeof o);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    o.threads = cpus < 1 ? 1u : cpus > 64 ? 64u : (unsigned)cpus;
    o.c.exact = true;
    o.c.canonical = true;
    int rc = kmer_parse_args(argc, argv, &o, NULL);
    if (rc < 0 && (o.c.k == 0 || o.output == NULL || o.nfiles == 0))
        rc = cli_usage_error("kmer", "index needs -k K, -o IDX and inputs");
    if (rc < 0)
        rc = kmer_check_exact(&o.c);
    if (rc < 0 && o.nfiles > UINT32_MAX)
        rc = cli_usage_error("kmer", "too many inputs");
    if (rc < 0 && (o.lower != 0 || o.upper != 0))
        rc = cli_usage_error("kmer", "-L and -U are for count, dump, histo "
                                     "and merge, not index");
    if (rc >= 0) { /* --help, or a usage error */
        free(o.files);
        return rc;
    }
    amq_maplet *m = NULL;
    amq_diag d;
    memset(&d, 0, sizeof d);
    amq_status st = AMQ_OK;
    if (rc < 0) /* the hashes only depend on k, the mode and the seed */
        st = kmer_maplet_new(&o.c, "max", 1, 4096, o.fpr ? o.fpr : 0.5, false,
                             &m, &d);
    if (rc < 0 && st != AMQ_OK)
        rc = cli_status_error("maplet", st, &d);
    index_job j = {
        &o, m, calloc(o.nfiles, sizeof(kset)), calloc(o.nfiles, sizeof(int)),
        0,  0, PTHREAD_MUTEX_INITIALIZER};
    if (rc < 0 && (j.sets == NULL || j.rc == NULL))
        rc = cli_usage_error("kmer", "out of memory");
    double t0 = cli_now();
    if (rc < 0)
        rc = read_sets(&j) ? CLI_EXIT_ERR : -1;
    color_table ct;
    uint64_t *h = NULL, *v = NULL;
    size_t n = 0;
    bool have_ct = rc < 0 && color_init(&ct, o.nfiles);
    if (rc < 0 &&
        (!have_ct || !merge_sets(j.sets, o.nfiles, o.threads, &ct, &h, &v, &n)))
        rc = cli_usage_error("kmer", "out of memory");
    for (size_t i = 0; j.sets != NULL && i < o.nfiles; i++)
        free(j.sets[i].h);
    amq_maplet_free(m);
    m = NULL;
    if (rc < 0) /* one slot per k-mer: its class + 1 */
        rc = fill_index(&o, &ct, h, v, n, &m);
    free(h);
    free(v);
    if (rc < 0)
        rc = write_names(o.output, o.files, o.nfiles) &&
                     write_classes(o.output, &ct)
                 ? kmer_save(m, o.output)
                 : CLI_EXIT_ERR;
    if (rc == 0 && !o.quiet) {
        size_t classes_bytes = 0;
        uint8_t *buf = NULL;
        if (color_encode(&ct, &buf, &classes_bytes))
            free(buf);
        fprintf(stderr,
                "amq: %s: %zu inputs, %llu k-mers, %zu distinct, %llu colour "
                "classes, %.2f bits each (%.2f the classes), %.2f s\n",
                o.output, o.nfiles, (unsigned long long)j.kmers, n,
                (unsigned long long)ct.classes,
                8.0 * (double)(amq_filter_size_bytes(m) + classes_bytes) /
                    (double)(n ? n : 1),
                8.0 * (double)classes_bytes / (double)(n ? n : 1),
                cli_now() - t0);
    }
    if (have_ct)
        color_free(&ct);
    amq_maplet_free(m);
    free(j.sets);
    free(j.rc);
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
    size_t lines = 0; /* counted first: want comes from a file too */
    for (size_t i = 0; nm->text != NULL && i < got; i++)
        lines += nm->text[i] == '\n';
    nm->name = lines == want ? calloc(want + 1, sizeof *nm->name) : NULL;
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
    color_table ct; /* the classes: value v is class v - 1           */
    uint64_t *q;    /* the query's distinct k-mers, then their values */
    size_t qcap, hits;
    uint64_t *per; /* per input: the query's k-mers it holds        */
    uint32_t *ids;
    bool json, bad; /* bad: an error was reported */
} search_ctx;

/* One query: its distinct k-mers, each input's share, the inputs at theta
 * (each class's ids are read once however many k-mers have it). */
static bool search_one(search_ctx *s, const seq_reader *r) {
    size_t n = 0;
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
    size_t d = 0, held = 0;
    for (size_t i = 0; i < n; i++)
        if (d == 0 || s->q[d - 1] != s->q[i])
            s->q[d++] = s->q[i];
    for (size_t i = 0; i < d; i++) {
        uint64_t v = 0;
        amq_maplet_get_hash(s->m, kmer_hash(s->m, &s->c, s->q[i]), &v);
        if (v > s->ct.classes) {
            cli_error("a k-mer of query '%s' has class %llu of %llu: the "
                      "index and its classes do not match",
                      r->name, (unsigned long long)v,
                      (unsigned long long)s->ct.classes);
            s->bad = true;
            return false;
        }
        if (v != 0)
            s->q[held++] = v;
    }
    qsort(s->q, held, sizeof *s->q, cmp_u64);
    memset(s->per, 0, s->nm.n * sizeof *s->per);
    for (size_t i = 0, j; i < held; i = j) {
        for (j = i; j < held && s->q[j] == s->q[i]; j++)
            ;
        size_t k = color_ids(&s->ct, s->q[i] - 1, s->ids);
        for (size_t x = 0; x < k; x++)
            if (s->ids[x] < s->nm.n)
                s->per[s->ids[x]] += j - i;
    }
    for (size_t f = 0; d > 0 && f < s->nm.n; f++) {
        double share = (double)s->per[f] / (double)d;
        if (share + 1e-12 < s->theta || s->per[f] == 0)
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

/* IDX.classes into s->ct; false after an error naming the file. */
static bool read_classes(const char *idx, search_ctx *s) {
    size_t len = strlen(idx);
    char *path = malloc(len + 16);
    if (path == NULL)
        return false;
    snprintf(path, len + 16, "%s.classes", idx);
    uint8_t *buf = NULL;
    size_t n = 0;
    char err[PARSE_ERR_MAX] = "";
    bool ok = cli_read_file(path, &buf, &n);
    if (!ok)
        cli_error("%s: cannot read the colour classes (write the index "
                  "again with amq kmer index)",
                  path);
    else if (!(ok = color_parse(buf, n, &s->ct, err)))
        cli_error("%s: %s", path, err);
    free(buf);
    free(path);
    return ok;
}

/* The index, its classes and its inputs' names (one per experiment). */
static bool open_index(const char *idx, search_ctx *s) {
    amq_maplet_shape sh;
    if ((s->m = kmer_open(idx, &s->c)) == NULL ||
        amq_maplet_get_shape(s->m, &sh) != AMQ_OK)
        return false;
    if (sh.op != AMQ_MAPLET_MAX) {
        cli_error("%s: a k-mer index of 64-bit sets, from an earlier amq: "
                  "build it again with amq kmer index",
                  idx);
        return false;
    }
    if (!read_classes(idx, s))
        return false;
    if (sh.value_bits < 64 && s->ct.classes >> sh.value_bits != 0) {
        cli_error("%s.classes: %llu classes, more than the index's %u-bit "
                  "values name: not this index's classes",
                  idx, (unsigned long long)s->ct.classes, sh.value_bits);
        return false;
    }
    unsigned e = (unsigned)s->ct.experiments;
    if (!read_names(idx, e, &s->nm))
        return false;
    s->per = calloc(e, sizeof *s->per);
    s->ids = calloc(e, sizeof *s->ids); /* e names: e is the file's size */
    return s->per != NULL && s->ids != NULL;
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
    if (rc < 0 && !open_index(o.files[0], &s))
        rc = CLI_EXIT_ERR;
    seq_reader r;
    int fd = -1, got = 0;
    if (rc < 0 && !kmer_input_open(o.files[1], &r, &fd))
        rc = CLI_EXIT_ERR;
    if (rc < 0) {
        while ((got = seq_next(&r)) == 1 && search_one(&s, &r))
            ;
        rc = got < 0 ? kmer_input_error(o.files[1], &r)
             : got > 0
                 ? (s.bad ? CLI_EXIT_ERR
                          : cli_status_error("search", AMQ_ERR_NOMEM, NULL))
             : s.hits ? CLI_EXIT_OK
                      : CLI_EXIT_NONE;
        kmer_input_close(&r, fd);
    }
    amq_filter_free(s.m);
    color_free(&s.ct);
    free(s.per);
    free(s.ids);
    free(s.q);
    free(s.nm.name);
    free(s.nm.text);
    free(o.files);
    return rc;
}
