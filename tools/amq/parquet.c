/*
 * parquet.c — `amq parquet info|probe|index|lookup`: the Bloom filters
 * Parquet writers put in their files, and one index over many files.
 *
 *   info    each file's row groups and columns: physical type, codec,
 *           which chunks carry a split-block Bloom filter, its bytes and
 *           certified bound;
 *   probe   keys against the Bloom filters of one column in every row
 *           group of every file: the row groups that may hold each key;
 *   index   one routing maplet for a column over all the files: the
 *           distinct values of every row group (read from its pages) map
 *           to the row group's number, so a lookup is one probe, not one
 *           per row group (docs/maplets.md, "Parquet");
 *   lookup  keys against an index: the same answers' form as probe;
 *   add-filter  a copy of a file with a Bloom filter for a column in every
 *           row group (for files whose writer left them out).
 *
 * An index is a directory: routing.amq (the maplet, an amq file) and
 * catalog.tsv (the column, and each file with its size and row groups, in
 * the order of the row groups' numbers). Both hash a value as Parquet's
 * filters do (XXH64 of its plain encoding), so a key is hashed once.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "amq_parquet.h"
#include "verbs.h"

#define CATALOG_MAGIC "amq-parquet-index\t1"
#define CATALOG_LINE 8192

enum {
    OPT_COLUMN = 1,
    OPT_KEY,
    OPT_KEYS,
    OPT_COUNT,
    OPT_FPR,
    OPT_OUT,
    OPT_QUIET
};

static const cli_opt probe_options[] = {
    {"column", 0, true, OPT_COLUMN},
    {"key", 0, true, OPT_KEY},
    {"keys", 'k', true, OPT_KEYS},
    {"count", 0, false, OPT_COUNT},
    {NULL, 0, false, 0},
};

static const cli_opt index_options[] = {
    {"column", 0, true, OPT_COLUMN},
    {"fpr", 'e', true, OPT_FPR},
    {"output", 'o', true, OPT_OUT},
    {"quiet", 'q', false, OPT_QUIET},
    {NULL, 0, false, 0},
};

static int pq_error(const char *path, amq_status st, const amq_pq_diag *d) {
    if (d != NULL && d->what != NULL && d->what[0] != '\0' && st == AMQ_ERR_IO)
        cli_error("%s: %s", path, d->what);
    else if (d != NULL && d->what != NULL && d->what[0] != '\0')
        cli_error("%s: %s: %s (at byte %" PRIu64 ")", path, amq_strerror(st),
                  d->what, d->offset);
    else
        cli_error("%s: %s", path, amq_strerror(st));
    return CLI_EXIT_ERR;
}

/* ---- the files of a command ----------------------------------------------- */

typedef struct pq_set {
    size_t n;
    char **path;
    amq_pq_file **f;
    int *col;
    amq_pq_column column; /* the first file's (all must agree) */
} pq_set;

static void pq_set_free(pq_set *s) {
    for (size_t i = 0; i < s->n && s->f != NULL; i++)
        amq_pq_close(s->f[i]);
    free(s->f);
    free(s->col);
    free(s->path);
}

/* Open every file; with column, find it in each (same physical type). */
static int pq_set_open(pq_set *s, char **paths, size_t n, const char *column) {
    memset(s, 0, sizeof *s);
    s->f = calloc(n ? n : 1, sizeof *s->f);
    s->col = calloc(n ? n : 1, sizeof *s->col);
    s->path = calloc(n ? n : 1, sizeof *s->path);
    if (s->f == NULL || s->col == NULL || s->path == NULL) {
        cli_error("out of memory");
        return CLI_EXIT_ERR;
    }
    for (size_t i = 0; i < n; i++) {
        amq_pq_diag d = {0, ""};
        s->path[i] = paths[i];
        if (access(paths[i], R_OK) != 0) {
            cli_error("%s: %s", paths[i], strerror(errno));
            return CLI_EXIT_ERR;
        }
        amq_status st = amq_pq_open(paths[i], &s->f[i], &d);
        s->n = i + (st == AMQ_OK);
        if (st != AMQ_OK)
            return pq_error(paths[i], st, &d);
        if (column == NULL)
            continue;
        s->col[i] = amq_pq_column_find(s->f[i], column);
        if (s->col[i] < 0) {
            cli_error("%s: no column '%s' (amq parquet info lists them)",
                      paths[i], column);
            return CLI_EXIT_ERR;
        }
        const amq_pq_column *c = amq_pq_column_at(s->f[i], (size_t)s->col[i]);
        if (i == 0)
            s->column = *c;
        else if (c->type != s->column.type ||
                 c->type_length != s->column.type_length) {
            cli_error("%s: column '%s' is %s, in %s it is %s", paths[i], column,
                      amq_pq_type_name(c->type), paths[0],
                      amq_pq_type_name(s->column.type));
            return CLI_EXIT_ERR;
        }
    }
    return -1;
}

/* A key as the column's plain encoding and its hash; false after an
 * error naming the key. */
static bool key_hash(const amq_pq_column *col, cli_keys *k, const uint8_t *key,
                     size_t len, uint64_t *h) {
    static uint8_t enc[AMQ_PQ_KEY_MAX];
    size_t n;
    amq_status st = amq_pq_encode_key(col, (const char *)key, len, enc, &n);
    if (st == AMQ_OK) {
        *h = amq_pq_hash(enc, n);
        return true;
    }
    char where[256];
    cli_keys_where(k, where, sizeof where);
    if (col->type == AMQ_PQ_FIXED_LEN_BYTE_ARRAY)
        cli_error("%s: not a value of type %s(%d): it has %zu bytes", where,
                  amq_pq_type_name(col->type), (int)col->type_length, len);
    else if (k->list != NULL) /* where names the key */
        cli_error("%s: not a value of type %s", where,
                  amq_pq_type_name(col->type));
    else
        cli_error("%s: '%.*s' is not a value of type %s", where,
                  (int)(len > 40 ? 40 : len), (const char *)key,
                  amq_pq_type_name(col->type));
    return false;
}

/* ---- info ------------------------------------------------------------------- */

static void info_column(const amq_pq_file *f, size_t c) {
    const amq_pq_column *col = amq_pq_column_at(f, c);
    size_t with = 0, bytes = 0, groups = amq_pq_groups(f);
    double worst = 0;
    int32_t codec = groups ? amq_pq_chunk_at(f, 0, c)->codec : 0;
    for (size_t g = 0; g < groups; g++) {
        uint8_t *bits;
        size_t len;
        if (amq_pq_bloom_read(f, g, c, &bits, &len, NULL) != AMQ_OK)
            continue;
        double b = amq_sbbf_parquet_bound(bits, len);
        worst = b > worst ? b : worst;
        with++;
        bytes += len;
        free(bits);
    }
    printf("  %-20s %-20s %-8s", col->path, amq_pq_type_name(col->type),
           amq_pq_codec_name(codec));
    if (with == 0)
        printf(" no Bloom filter\n");
    else
        printf(
            " Bloom filter in %zu/%zu row group%s, %zu bytes, bound <= %.3g\n",
            with, groups, cli_s(groups), bytes, worst);
}

static int cmd_info(int argc, char **argv) {
    cli_args a;
    int id;
    pq_set s;
    char **paths = calloc((size_t)argc, sizeof *paths);
    size_t n = 0;
    if (paths == NULL)
        return cli_error("out of memory"), CLI_EXIT_ERR;
    cli_args_init(&a, "parquet", argc, argv);
    static const cli_opt none[] = {{NULL, 0, false, 0}};
    while ((id = cli_next(&a, none)) != CLI_NEXT_END) {
        if (id == CLI_NEXT_ERR || id == CLI_OPT_HELP) {
            free(paths);
            return id == CLI_OPT_HELP && cli_help_print(stdout, "parquet")
                       ? CLI_EXIT_OK
                       : CLI_EXIT_ERR;
        }
        paths[n++] = (char *)a.value;
    }
    if (n == 0) {
        free(paths);
        return cli_usage_error("parquet", "info needs a FILE");
    }
    int rc = pq_set_open(&s, paths, n, NULL);
    for (size_t i = 0; rc < 0 && i < s.n; i++) {
        const amq_pq_file *f = s.f[i];
        printf("%s: %" PRId64 " rows in %zu row group%s, %" PRIu64
               " bytes, written by %s\n",
               s.path[i], amq_pq_rows(f), amq_pq_groups(f),
               cli_s(amq_pq_groups(f)), amq_pq_file_bytes(f),
               amq_pq_created_by(f)[0] ? amq_pq_created_by(f) : "?");
        for (size_t c = 0; c < amq_pq_columns(f); c++)
            info_column(f, c);
    }
    pq_set_free(&s);
    free(paths);
    return rc < 0 ? CLI_EXIT_OK : rc;
}

/* ---- probe and lookup: arguments and answers --------------------------------- */

typedef struct key_args {
    const char *column, *keyfile, *out;
    char **pos; /* positionals */
    size_t npos;
    cli_key_list keys;
    double fpr;
    bool count, quiet;
} key_args;

static int read_args(key_args *k, const cli_opt *opts, int argc, char **argv) {
    cli_args a;
    int id;
    memset(k, 0, sizeof *k);
    k->fpr = CLI_DEFAULT_FPR;
    if ((k->pos = calloc((size_t)argc, sizeof *k->pos)) == NULL)
        return cli_error("out of memory"), CLI_EXIT_ERR;
    cli_args_init(&a, "parquet", argc, argv);
    while ((id = cli_next(&a, opts)) != CLI_NEXT_END) {
        if (id == CLI_NEXT_ERR)
            return CLI_EXIT_ERR;
        if (id == CLI_OPT_HELP)
            return cli_help_print(stdout, "parquet") ? CLI_EXIT_OK
                                                     : CLI_EXIT_ERR;
        if (id == OPT_FPR &&
            !cli_parse_fpr("parquet", "--fpr", a.value, &k->fpr))
            return CLI_EXIT_ERR;
        if (id == OPT_KEY && !cli_key_list_push(&k->keys, a.value))
            return cli_error("out of memory"), CLI_EXIT_ERR;
        if (id == OPT_COLUMN)
            k->column = a.value;
        if (id == OPT_KEYS)
            k->keyfile = a.value;
        if (id == OPT_OUT)
            k->out = a.value;
        k->count |= id == OPT_COUNT;
        k->quiet |= id == OPT_QUIET;
        if (id == CLI_NEXT_POS)
            k->pos[k->npos++] = (char *)a.value;
    }
    if (k->keyfile != NULL && k->keys.n > 0)
        return cli_usage_error("parquet",
                               "--key and --keys exclude each other");
    return -1;
}

static void key_args_free(key_args *k) {
    cli_key_list_free(&k->keys);
    free(k->pos);
}

static bool open_keys(const key_args *a, cli_keys *k) {
    if (a->keys.n > 0) {
        cli_keys_open_list(k, a->keys.keys, a->keys.n);
        return true;
    }
    return cli_keys_open(k, a->keyfile, false, false);
}

/* One row group that may hold the key: "KEY<tab>FILE<tab>GROUP". */
static void answer(const uint8_t *key, size_t len, const char *path, size_t g) {
    printf("%.*s\t%s\t%zu\n", (int)len, (const char *)key, path, g);
}

/* ---- probe -------------------------------------------------------------------- */

typedef struct filters {
    uint8_t **bits; /* per (file, group): NULL when the chunk has none */
    size_t *len, *first, total;
} filters;

static int load_filters(const pq_set *s, filters *fl) {
    memset(fl, 0, sizeof *fl);
    if ((fl->first = calloc(s->n + 1, sizeof *fl->first)) == NULL)
        return cli_error("out of memory"), CLI_EXIT_ERR;
    for (size_t i = 0; i < s->n; i++)
        fl->first[i + 1] = fl->first[i] + amq_pq_groups(s->f[i]);
    fl->total = fl->first[s->n];
    fl->bits = calloc(fl->total + 1, sizeof *fl->bits);
    fl->len = calloc(fl->total + 1, sizeof *fl->len);
    if (fl->bits == NULL || fl->len == NULL)
        return cli_error("out of memory"), CLI_EXIT_ERR;
    for (size_t i = 0; i < s->n; i++)
        for (size_t g = 0; g < amq_pq_groups(s->f[i]); g++) {
            amq_pq_diag d = {0, ""};
            size_t at = fl->first[i] + g;
            amq_status st = amq_pq_bloom_read(s->f[i], g, (size_t)s->col[i],
                                              &fl->bits[at], &fl->len[at], &d);
            if (st != AMQ_OK && st != AMQ_ERR_NOT_FOUND)
                return pq_error(s->path[i], st, &d);
        }
    return -1;
}

static void free_filters(filters *fl) {
    for (size_t i = 0; fl->bits != NULL && i < fl->total; i++)
        free(fl->bits[i]);
    free(fl->bits);
    free(fl->len);
    free(fl->first);
}

/* The row groups that may hold a key: answered (unless print is false)
 * and counted, or -1 after an error. */
typedef long (*route_fn)(void *ctx, const uint8_t *key, size_t len, uint64_t h,
                         bool print);

/* Each key of the command's input through fn: a line a row group, or
 * with --count a line a key; exit 0 if some key may be somewhere. */
static int route_keys(const key_args *a, const amq_pq_column *col, route_fn fn,
                      void *ctx) {
    cli_keys k;
    const uint8_t *key;
    size_t len;
    uint64_t h = 0, any = 0;
    int r;
    if (!open_keys(a, &k))
        return CLI_EXIT_ERR;
    while ((r = cli_keys_next(&k, &key, &len)) == 1) {
        long n = key_hash(col, &k, key, len, &h)
                     ? fn(ctx, key, len, h, !a->count)
                     : -1;
        if (n < 0) {
            r = -1;
            break;
        }
        if (a->count)
            printf("%.*s\t%ld\n", (int)len, (const char *)key, n);
        any += n > 0;
    }
    cli_keys_close(&k);
    if (r < 0)
        return CLI_EXIT_ERR;
    return any ? CLI_EXIT_OK : CLI_EXIT_NONE;
}

typedef struct probe_ctx {
    const pq_set *s;
    const filters *fl;
} probe_ctx;

static long probe_one(void *ctx, const uint8_t *key, size_t len, uint64_t h,
                      bool print) {
    const probe_ctx *p = ctx;
    long hits = 0;
    for (size_t i = 0; i < p->s->n; i++)
        for (size_t g = 0; g < amq_pq_groups(p->s->f[i]); g++) {
            size_t at = p->fl->first[i] + g;
            if (p->fl->bits[at] != NULL &&
                !amq_sbbf_parquet_contains(p->fl->bits[at], p->fl->len[at], h))
                continue;
            hits++;
            if (print)
                answer(key, len, p->s->path[i], g);
        }
    return hits;
}

static int cmd_probe(int argc, char **argv) {
    key_args a;
    pq_set s;
    filters fl;
    int rc = read_args(&a, probe_options, argc, argv);
    if (rc < 0 && a.column == NULL)
        rc = cli_usage_error("parquet", "probe needs --column COLUMN");
    if (rc < 0 && a.npos == 0)
        rc = cli_usage_error("parquet", "probe needs a FILE");
    if (rc >= 0) {
        key_args_free(&a);
        return rc;
    }
    rc = pq_set_open(&s, a.pos, a.npos, a.column);
    memset(&fl, 0, sizeof fl);
    if (rc < 0)
        rc = load_filters(&s, &fl);
    if (rc < 0) {
        probe_ctx p = {&s, &fl};
        rc = route_keys(&a, &s.column, probe_one, &p);
    }
    free_filters(&fl);
    pq_set_free(&s);
    key_args_free(&a);
    return rc;
}

/* ---- index ------------------------------------------------------------------- */

static bool write_catalog(const char *dir, const pq_set *s,
                          const char *column) {
    char path[4096];
    snprintf(path, sizeof path, "%s/catalog.tsv", dir);
    FILE *fp = fopen(path, "w");
    if (fp == NULL) {
        cli_error("%s: %s", path, strerror(errno));
        return false;
    }
    fprintf(fp, "%s\ncolumn\t%s\t%d\t%d\n", CATALOG_MAGIC, column,
            (int)s->column.type, (int)s->column.type_length);
    for (size_t i = 0; i < s->n; i++)
        fprintf(fp, "file\t%" PRIu64 "\t%zu\t%s\n", amq_pq_file_bytes(s->f[i]),
                amq_pq_groups(s->f[i]), s->path[i]);
    if (fclose(fp) != 0) {
        cli_error("%s: %s", path, strerror(errno));
        return false;
    }
    return true;
}

static int build_index(const key_args *a, const pq_set *s) {
    amq_pq_pairs p;
    amq_filter *m = NULL;
    amq_diag diag;
    amq_pq_diag d = {0, ""};
    char path[4096];
    size_t failed = 0, *cols = calloc(s->n, sizeof *cols);
    int rc = -1;
    if (cols == NULL)
        return cli_error("out of memory"), CLI_EXIT_ERR;
    for (size_t i = 0; i < s->n; i++) {
        cols[i] = (size_t)s->col[i];
        if (strpbrk(s->path[i], "\t\n") != NULL)
            rc = cli_usage_error("parquet",
                                 "a FILE name with a tab or a newline");
    }
    amq_status st = rc < 0
                        ? amq_pq_pairs_read(s->f, cols, s->n, &p, &failed, &d)
                        : AMQ_ERR_INVALID;
    free(cols);
    if (rc >= 0)
        return rc;
    if (st != AMQ_OK)
        return pq_error(s->path[failed], st, &d);
    if (p.groups == 0)
        rc = cli_usage_error("parquet", "the files hold no row group");
    if (rc < 0 && (st = amq_pq_route_build(&p, a->fpr, &m, &diag)) != AMQ_OK)
        rc = cli_status_error("parquet index", st, &diag);
    if (rc < 0 && mkdir(a->out, 0755) != 0 && errno != EEXIST)
        rc = (cli_error("%s: %s", a->out, strerror(errno)), CLI_EXIT_ERR);
    snprintf(path, sizeof path, "%s/routing.amq", a->out);
    if (rc < 0 &&
        (!cli_filter_save(m, path) || !write_catalog(a->out, s, a->column)))
        rc = CLI_EXIT_ERR;
    if (rc < 0 && !a->quiet)
        fprintf(
            stderr,
            "amq: wrote %s: %zu value%s of '%s' in %" PRIu64
            " row group%s of %zu file%s, %zu bytes (%.2f bits/value), "
            "an absent key is sent to a row group with probability <= %.3g\n",
            a->out, p.n, cli_s(p.n), a->column, p.groups, cli_s(p.groups), s->n,
            cli_s(s->n), amq_filter_serialized_size(m),
            p.n ? 8.0 * (double)amq_filter_serialized_size(m) / (double)p.n
                : 0.0,
            amq_filter_fpr_bound(m));
    amq_filter_free(m);
    amq_pq_pairs_free(&p);
    return rc < 0 ? CLI_EXIT_OK : rc;
}

static int cmd_index(int argc, char **argv) {
    key_args a;
    pq_set s;
    int rc = read_args(&a, index_options, argc, argv);
    if (rc < 0 && a.column == NULL)
        rc = cli_usage_error("parquet", "index needs --column COLUMN");
    if (rc < 0 && a.out == NULL)
        rc = cli_usage_error("parquet", "index needs -o DIR");
    if (rc < 0 && a.npos == 0)
        rc = cli_usage_error("parquet", "index needs a FILE");
    if (rc >= 0) {
        key_args_free(&a);
        return rc;
    }
    rc = pq_set_open(&s, a.pos, a.npos, a.column);
    if (rc < 0)
        rc = build_index(&a, &s);
    pq_set_free(&s);
    key_args_free(&a);
    return rc;
}

/* ---- lookup ------------------------------------------------------------------ */

typedef struct catalog {
    amq_pq_column column;
    char colname[CATALOG_LINE];
    size_t n;
    char **path;
    uint64_t *first; /* n + 1 row group numbers */
} catalog;

static void catalog_free(catalog *c) {
    for (size_t i = 0; i < c->n; i++)
        free(c->path[i]);
    free(c->path);
    free(c->first);
}

/* One "file" line: size, groups, path; the file still has that size. */
static bool catalog_file(catalog *c, char *line, const char *where) {
    char *end, *tab;
    errno = 0;
    unsigned long long size = strtoull(line, &end, 10);
    if (end == line || *end != '\t' || errno != 0)
        return false;
    unsigned long long groups = strtoull(end + 1, &tab, 10);
    if (tab == end + 1 || *tab != '\t' || errno != 0 || groups > (1ull << 40) ||
        tab[1] == '\0')
        return false;
    char **p = realloc(c->path, (c->n + 1) * sizeof *p);
    uint64_t *f = p != NULL ? realloc(c->first, (c->n + 2) * sizeof *f) : NULL;
    if (p != NULL)
        c->path = p;
    if (f == NULL)
        return false;
    c->first = f;
    if (c->n == 0)
        c->first[0] = 0;
    if ((c->path[c->n] = strdup(tab + 1)) == NULL)
        return false;
    c->first[c->n + 1] = c->first[c->n] + groups;
    c->n++;
    struct stat sb;
    if (stat(tab + 1, &sb) != 0 || (unsigned long long)sb.st_size != size) {
        cli_error("%s: %s has changed since it was indexed (amq parquet index "
                  "again)",
                  where, tab + 1);
        return false;
    }
    return true;
}

static int read_catalog(const char *dir, catalog *c) {
    char path[4096], line[CATALOG_LINE];
    int type, tlen, lineno = 0;
    bool ok = true, col = false;
    memset(c, 0, sizeof *c);
    snprintf(path, sizeof path, "%s/catalog.tsv", dir);
    FILE *fp = fopen(path, "r");
    if (fp == NULL) {
        cli_error("%s: %s (is %s an index of amq parquet index?)", path,
                  strerror(errno), dir);
        return CLI_EXIT_ERR;
    }
    while (ok && fgets(line, sizeof line, fp) != NULL) {
        size_t n = strlen(line);
        if (n == 0 || line[n - 1] != '\n') {
            ok = false;
            break;
        }
        line[n - 1] = '\0';
        if (lineno++ == 0)
            ok = strcmp(line, CATALOG_MAGIC) == 0;
        else if (!col && strncmp(line, "column\t", 7) == 0) {
            char *t1 = strchr(line + 7, '\t');
            ok = t1 != NULL && sscanf(t1 + 1, "%d\t%d", &type, &tlen) == 2 &&
                 type > 0 && type <= AMQ_PQ_FIXED_LEN_BYTE_ARRAY && tlen >= 0 &&
                 tlen <= AMQ_PQ_KEY_MAX;
            if (ok) {
                *t1 = '\0';
                snprintf(c->colname, sizeof c->colname, "%s", line + 7);
                c->column =
                    (amq_pq_column){c->colname, (amq_pq_type)type, tlen, 0, 0};
                col = true;
            }
        } else if (col && strncmp(line, "file\t", 5) == 0)
            ok = catalog_file(c, line + 5, path);
        else
            ok = false;
    }
    fclose(fp);
    if (!ok || !col || c->n == 0) {
        cli_error("%s: not a catalog of amq parquet index (line %d)", path,
                  lineno);
        return CLI_EXIT_ERR;
    }
    return -1;
}

typedef struct lookup_ctx {
    const catalog *c;
    const amq_filter *m;
    uint64_t *vals;
    size_t cap;
} lookup_ctx;

static long lookup_one(void *ctx, const uint8_t *key, size_t len, uint64_t h,
                       bool print) {
    lookup_ctx *l = ctx;
    const catalog *c = l->c;
    size_t got = 0, file = 0;
    amq_status st = amq_maplet_get_all(l->m, h, l->vals, l->cap, &got);
    if (st == AMQ_OK && got > l->cap) {
        uint64_t *w = realloc(l->vals, got * sizeof *w);
        if (w == NULL)
            return cli_error("out of memory"), -1;
        l->vals = w;
        l->cap = got;
        st = amq_maplet_get_all(l->m, h, l->vals, l->cap, &got);
    }
    if (st == AMQ_ERR_NOT_FOUND)
        return 0;
    if (st != AMQ_OK)
        return cli_status_error("parquet lookup", st, NULL), -1;
    for (size_t i = 0; i < got; i++) {
        if (l->vals[i] >= c->first[c->n]) {
            cli_error("the index names row group %" PRIu64 " of %" PRIu64
                      ": its files are not the catalog's",
                      l->vals[i], c->first[c->n]);
            return -1;
        }
        while (l->vals[i] >= c->first[file + 1])
            file++;
        if (print)
            answer(key, len, c->path[file],
                   (size_t)(l->vals[i] - c->first[file]));
    }
    return (long)got;
}

static int cmd_lookup(int argc, char **argv) {
    key_args a;
    catalog c;
    cli_filter_file ff;
    char path[4096];
    int rc = read_args(&a, probe_options, argc, argv);
    if (rc < 0 && a.npos != 1)
        rc = cli_usage_error("parquet", "lookup takes one index DIR");
    if (rc < 0 && a.column != NULL)
        rc = cli_usage_error("parquet", "lookup: the index knows its column");
    if (rc >= 0) {
        key_args_free(&a);
        return rc;
    }
    rc = read_catalog(a.pos[0], &c);
    snprintf(path, sizeof path, "%s/routing.amq", a.pos[0]);
    if (rc < 0) {
        if (!cli_filter_open(&ff, path))
            rc = CLI_EXIT_ERR;
        else {
            if (!amq_maplet_is(ff.filter))
                rc = (cli_error("%s: not a maplet", path), CLI_EXIT_ERR);
            else {
                lookup_ctx l = {&c, ff.filter, malloc(64 * sizeof *l.vals), 64};
                rc = l.vals == NULL ? (cli_error("out of memory"), CLI_EXIT_ERR)
                                    : route_keys(&a, &c.column, lookup_one, &l);
                free(l.vals);
            }
            cli_filter_close(&ff);
        }
    }
    catalog_free(&c);
    key_args_free(&a);
    return rc;
}

/* ---- add-filter ----------------------------------------------------------------- */

static int cmd_add_filter(int argc, char **argv) {
    key_args a;
    pq_set s;
    int rc = read_args(&a, index_options, argc, argv);
    if (rc < 0 && a.column == NULL)
        rc = cli_usage_error("parquet", "add-filter needs --column COLUMN");
    if (rc < 0 && a.out == NULL)
        rc = cli_usage_error("parquet", "add-filter needs -o OUT");
    if (rc < 0 && a.npos != 1)
        rc = cli_usage_error("parquet", "add-filter takes one FILE");
    if (rc >= 0) {
        key_args_free(&a);
        return rc;
    }
    rc = pq_set_open(&s, a.pos, 1, a.column);
    if (rc < 0) {
        amq_pq_filter_stats st;
        amq_pq_diag d = {0, ""};
        amq_status r =
            amq_pq_add_filters(s.f[0], (size_t)s.col[0], a.fpr, a.out, &st, &d);
        if (r != AMQ_OK)
            rc = pq_error(r == AMQ_ERR_IO ? a.out : s.path[0], r, &d);
        else if (!a.quiet)
            fprintf(stderr,
                    "amq: wrote %s: a Bloom filter for '%s' in each of %" PRIu64
                    " row group%s, %" PRIu64 " value%s, %" PRIu64
                    " bytes, bound <= %.3g\n",
                    a.out, a.column, st.groups, cli_s(st.groups), st.values,
                    cli_s(st.values), st.bytes, st.worst_bound);
    }
    pq_set_free(&s);
    key_args_free(&a);
    return rc < 0 ? CLI_EXIT_OK : rc;
}

int cli_cmd_parquet(int argc, char **argv) {
    static const cli_command subs[] = {{"info", cmd_info},
                                       {"probe", cmd_probe},
                                       {"index", cmd_index},
                                       {"lookup", cmd_lookup},
                                       {"add-filter", cmd_add_filter},
                                       {NULL, NULL}};
    return cli_dispatch("parquet", subs, argc, argv);
}
