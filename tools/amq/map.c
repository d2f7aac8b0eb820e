/*
 * map.c — `amq map build|get|add|del|merge`: maplets (amq/maplet.h) from
 * and to "key<TAB>value" lines.
 *
 *   build   read every pair (kvline.c parses; a bad line stops the run
 *           naming the file, line and byte, and nothing is written), hash
 *           the keys with the maplet's hasher, build (a static maplet) or
 *           size for the pairs and put them (a dynamic one, or --capacity),
 *           save atomically
 *   get     print "key<TAB>value" for the keys found (exit 0 / 1 / 2)
 *   add     put pairs into an existing maplet file; when it fills up it
 *           is resized (twice the slots, the bound it reaches at its new
 *           capacity is reported), then saved over the file atomically
 *   del     delete pairs (sum subtracts, multiset removes the pair); a
 *           pair the maplet cannot take back stops the run, nothing
 *           written
 *   merge   A (+) B into C
 *
 * Values of a maplet with op=or are sets of ids: written and printed as
 * comma lists ("0,3,17"); --raw prints the bit mask instead.
 */
#include <stdlib.h>
#include <string.h>

#include "verbs.h"
#include "parse.h"

typedef struct map_opts {
    const char *sub, *type, *op, *output, *input;
    const char *files[2];
    size_t nfiles;
    uint64_t vbits, capacity;
    double fpr;
    bool multiset, raw, quiet, json;
    cli_key_source src; /* get */
} map_opts;

enum {
    OPT_TYPE = 1,
    OPT_OP,
    OPT_VBITS,
    OPT_FPR,
    OPT_CAPACITY,
    OPT_MULTISET,
    OPT_OUTPUT,
    OPT_RAW,
    OPT_QUIET,
    OPT_JSON
};

static const cli_opt map_options[] = {
    CLI_KEY_SOURCE_OPTIONS,
    {"type", 't', true, OPT_TYPE},
    {"op", 0, true, OPT_OP},
    {"value-bits", 0, true, OPT_VBITS},
    {"fpr", 'e', true, OPT_FPR},
    {"capacity", 'n', true, OPT_CAPACITY},
    {"multiset", 0, false, OPT_MULTISET},
    {"output", 'o', true, OPT_OUTPUT},
    {"raw", 0, false, OPT_RAW},
    {"quiet", 'q', false, OPT_QUIET},
    {"json", 0, false, OPT_JSON},
    {NULL, 0, false, 0},
};

/* ---- arguments ------------------------------------------------------------ */

static bool take_option(map_opts *o, int id, const char *v) {
    switch (id) {
    case OPT_TYPE: o->type = v; return true;
    case OPT_OP: o->op = v; return true;
    case OPT_VBITS:
        if (!cli_parse_u64("map", "--value-bits", v, &o->vbits))
            return false;
        if (o->vbits < 1 || o->vbits > 64)
            cli_usage_error("map", "--value-bits must be 1 to 64");
        return o->vbits >= 1 && o->vbits <= 64;
    case OPT_FPR: return cli_parse_fpr("map", "--fpr", v, &o->fpr);
    case OPT_CAPACITY:
        return cli_parse_u64("map", "--capacity", v, &o->capacity);
    case OPT_MULTISET: o->multiset = true; return true;
    case OPT_OUTPUT: o->output = v; return true;
    case OPT_RAW: o->raw = true; return true;
    case OPT_JSON: o->json = true; return true;
    case OPT_QUIET:
        o->quiet = true;
        cli_progress_set_mode(CLI_PROGRESS_OFF);
        return true;
    default: return false;
    }
}

static int take_positional(map_opts *o, const char *v) {
    if (o->nfiles < 2) {
        o->files[o->nfiles++] = v;
        return -1;
    }
    return cli_usage_error("map", "too many arguments");
}

static int check_args(map_opts *o) {
    bool build = strcmp(o->sub, "build") == 0;
    bool merge = strcmp(o->sub, "merge") == 0;
    if (build && (o->output == NULL || o->nfiles > 1))
        return cli_usage_error("map", o->output ? "build takes one FILE"
                                                : "build needs -o FILE");
    if (merge && (o->nfiles != 2 || o->output == NULL))
        return cli_usage_error("map", "merge needs A B -o C");
    if (!build && !merge && o->nfiles < 1)
        return cli_usage_error("map", "%s needs FILE", o->sub);
    if (build)
        o->input = o->nfiles ? o->files[0] : NULL;
    else if (!merge)
        o->input = o->nfiles > 1 ? o->files[1] : NULL;
    return -1;
}

/* -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, map_opts *o) {
    cli_args a;
    int id, r;
    cli_args_init(&a, "map", argc, argv);
    o->src.command = "map";
    while ((id = cli_next(&a, map_options)) != CLI_NEXT_END) {
        if (id == CLI_NEXT_ERR)
            return CLI_EXIT_ERR;
        if (id == CLI_OPT_HELP)
            return cli_help_print(stdout, "map") ? CLI_EXIT_OK : CLI_EXIT_ERR;
        if (strcmp(o->sub, "get") == 0 &&
            (r = cli_key_source_take(&o->src, id, a.value)) != 0) {
            if (r < 0)
                return CLI_EXIT_ERR;
            continue;
        }
        if (id == CLI_NEXT_POS) {
            if ((r = take_positional(o, a.value)) >= 0)
                return r;
        } else if (!take_option(o, id, a.value)) {
            return CLI_EXIT_ERR;
        }
    }
    if (strcmp(o->sub, "get") == 0)
        return cli_key_source_check(&o->src);
    return check_args(o);
}

/* ---- values as text ----------------------------------------------------------- */

/* A value as printed: decimal, or for a set a comma list of ids. */
static void print_value(FILE *out, uint64_t v, bool ids) {
    if (!ids) {
        fprintf(out, "%llu", (unsigned long long)v);
        return;
    }
    const char *sep = "";
    for (unsigned i = 0; i < 64; i++)
        if (v >> i & 1) {
            fprintf(out, "%s%u", sep, i);
            sep = ",";
        }
}

/* "KEY<TAB>VALUE", or a JSON record: "value" a number, "ids" a list. */
static void print_pair(const map_opts *o, const uint8_t *key, size_t len,
                       uint64_t v, bool ids) {
    if (!o->json) {
        fwrite(key, 1, len, stdout);
        putchar('\t');
        print_value(stdout, v, ids);
        putchar('\n');
        return;
    }
    cli_json j;
    cli_json_key_record(&j, key, len, false);
    if (ids) {
        cli_json_open(&j, "ids", '[');
        for (unsigned i = 0; i < 64; i++)
            if (v >> i & 1)
                cli_json_u64(&j, NULL, i);
        cli_json_close(&j);
    } else {
        cli_json_u64(&j, "value", v);
    }
    cli_json_close(&j);
}

static bool is_set(const amq_maplet *m) {
    amq_maplet_shape s;
    return amq_maplet_get_shape(m, &s) == AMQ_OK && s.op == AMQ_MAPLET_OR;
}

/* ---- reading pairs ------------------------------------------------------------- */

typedef struct pairs {
    uint64_t *h, *v;
    size_t n, cap;
} pairs;

static bool pairs_push(pairs *p, uint64_t h, uint64_t v) {
    if (p->n == p->cap) {
        size_t c = p->cap ? 2 * p->cap : 4096;
        uint64_t *nh = realloc(p->h, c * sizeof *nh);
        if (nh != NULL)
            p->h = nh;
        uint64_t *nv = nh ? realloc(p->v, c * sizeof *nv) : NULL;
        if (nv == NULL)
            return false;
        p->v = nv;
        p->cap = c;
    }
    p->h[p->n] = h;
    p->v[p->n++] = v;
    return true;
}

/* Every pair of the input, hashed with h: false after an error naming
 * the file, line and byte (nothing is changed by the caller then). */
static bool read_pairs(const char *input, const amq_hasher *h, bool ids,
                       unsigned vbits, pairs *p) {
    cli_keys k;
    const uint8_t *line;
    size_t len;
    int got;
    char err[PARSE_ERR_MAX];
    cli_progress pr;
    if (!cli_keys_open(&k, input, false, true))
        return false;
    cli_progress_init_bytes(&pr, "reading", cli_keys_size(&k));
    while ((got = cli_keys_next(&k, &line, &len)) == 1) {
        kvline kv;
        if (!kvline_parse((const char *)line, len, ids, vbits, &kv, err)) {
            cli_progress_done(&pr);
            cli_error("%s: line %llu, %s; nothing written", k.name,
                      (unsigned long long)k.line, err);
            got = -1;
            break;
        }
        if (!pairs_push(p, amq_hash64(h, kv.key, kv.key_len), kv.value)) {
            cli_error("%s: out of memory at line %llu", k.name,
                      (unsigned long long)k.line);
            got = -1;
            break;
        }
        cli_progress_tick_keys(&pr, &k);
    }
    cli_progress_done(&pr);
    cli_keys_close(&k);
    return got == 0;
}

/* ---- build ------------------------------------------------------------------------ */

/* The spec: --type (default maplet) with op, v and multiset added. */
static char *build_spec(const map_opts *o) {
    const char *type = o->type ? o->type : "maplet";
    size_t cap = strlen(type) + 80;
    char *s = malloc(cap);
    if (s == NULL)
        return NULL;
    int n = snprintf(s, cap, "%s%s", type, strchr(type, ':') ? "" : ":");
    const char *sep = strchr(type, ':') ? "," : "";
    if (o->op != NULL)
        n += snprintf(s + n, cap - (size_t)n, "%sop=%.12s", sep, o->op),
            sep = ",";
    if (o->vbits != 0)
        n += snprintf(s + n, cap - (size_t)n, "%sv=%llu", sep,
                      (unsigned long long)o->vbits),
            sep = ",";
    if (o->multiset)
        n += snprintf(s + n, cap - (size_t)n, "%smultiset=1", sep), sep = ",";
    if (s[n - 1] == ':')
        s[n - 1] = '\0';
    return s;
}

/* The maplet the spec makes at rate fpr (0: the spec's own shape), from
 * the pairs (or for --capacity, empty and then filled pair by pair). */
static amq_status try_maplet(const map_opts *o, const char *spec, double fpr,
                             const amq_options *opt, const pairs *p,
                             amq_maplet **m, amq_diag *d) {
    amq_status st;
    if (o->capacity != 0) {
        st = amq_maplet_new(spec, fpr > 0 ? o->capacity : 0, fpr, opt, m, d);
        for (size_t i = 0; st == AMQ_OK && i < p->n; i++)
            if ((st = amq_maplet_put_hash(*m, p->h[i], p->v[i])) != AMQ_OK) {
                snprintf(d->message, sizeof d->message, "pair %zu of %zu",
                         i + 1, p->n);
                amq_maplet_free(*m);
                *m = NULL;
            }
    } else {
        st = amq_maplet_build(spec, p->h, p->v, p->n, fpr, opt, m, d);
    }
    return st;
}

/* Without --fpr: the spec's own shape when it fixes one (kbits=, q= and
 * r=), else the default rate. */
static int make_maplet(const map_opts *o, const char *spec,
                       const amq_options *opt, const pairs *p, amq_maplet **m) {
    amq_diag d;
    memset(&d, 0, sizeof d);
    amq_status st = AMQ_ERR_SPEC;
    if (o->fpr == 0.0)
        st = try_maplet(o, spec, 0.0, opt, p, m, NULL);
    if (st == AMQ_ERR_SPEC || st == AMQ_ERR_INVALID)
        st = try_maplet(o, spec, o->fpr > 0 ? o->fpr : CLI_DEFAULT_FPR, opt, p,
                        m, &d);
    if (st == AMQ_OK)
        return CLI_EXIT_OK;
    return cli_status_error(spec, st, &d);
}

static int map_build(const map_opts *o) {
    char *spec = build_spec(o);
    amq_options opt;
    amq_hasher h;
    pairs p = {0};
    amq_maplet *m = NULL;
    int rc = CLI_EXIT_ERR;
    memset(&opt, 0, sizeof opt);
    if (spec == NULL || amq_filter_resolve_hasher(spec, &opt, &h) != AMQ_OK) {
        cli_error("%s: not a structure spec (see amq help types)",
                  spec ? spec : "?");
        goto out;
    }
    opt.hash = h.kind;
    opt.hash_seed = h.seed;
    bool ids = o->op != NULL && strcmp(o->op, "or") == 0;
    if (!read_pairs(o->input, &h, ids, o->vbits ? (unsigned)o->vbits : 8, &p))
        goto out;
    if ((rc = make_maplet(o, spec, &opt, &p, &m)) != CLI_EXIT_OK)
        goto out;
    amq_diag d;
    memset(&d, 0, sizeof d);
    amq_status st = amq_filter_save_file(m, o->output, &d);
    rc = st == AMQ_OK ? CLI_EXIT_OK : cli_status_error(o->output, st, &d);
    if (rc == CLI_EXIT_OK && !o->quiet)
        fprintf(stderr,
                "amq: %s: %zu pair%s, %llu key%s, %.2f bits/key, "
                "fpr bound %.3g\n",
                o->output, p.n, cli_s(p.n),
                (unsigned long long)cli_filter_keys(m),
                cli_s(cli_filter_keys(m)), amq_filter_bits_per_key(m),
                amq_filter_fpr_bound(m));
out:
    amq_maplet_free(m);
    free(p.h);
    free(p.v);
    free(spec);
    return rc;
}

/* ---- get ---------------------------------------------------------------------------- */

static int map_get(map_opts *o) {
    amq_filter *m = NULL;
    amq_diag d;
    cli_keys k;
    const uint8_t *key;
    size_t len;
    int got;
    uint64_t found = 0;
    memset(&d, 0, sizeof d);
    amq_status st = amq_filter_open_file(o->src.file, NULL, &m, &d);
    if (st != AMQ_OK)
        return cli_status_error(o->src.file, st, &d);
    if (!amq_maplet_is(m)) {
        cli_error("%s: a %s filter, not a maplet (amq query answers it)",
                  o->src.file, amq_filter_info(m)->name);
        amq_filter_free(m);
        return CLI_EXIT_ERR;
    }
    bool ids = is_set(m) && !o->raw;
    if (!cli_key_source_open(&o->src, &k)) {
        amq_filter_free(m);
        return CLI_EXIT_ERR;
    }
    while ((got = cli_keys_next(&k, &key, &len)) == 1) {
        uint64_t v;
        if (amq_maplet_get(m, key, len, &v) != AMQ_OK)
            continue;
        found++;
        print_pair(o, key, len, v, ids);
    }
    cli_keys_close(&k);
    amq_filter_free(m);
    if (got < 0)
        return CLI_EXIT_ERR;
    return found ? CLI_EXIT_OK : CLI_EXIT_NONE;
}

/* ---- add, del ---------------------------------------------------------------------- */

/* Put pair i, resizing once per FULL; false after an error. */
static bool add_pair(amq_maplet *m, uint64_t h, uint64_t v, size_t i,
                     const map_opts *o) {
    amq_status st = amq_maplet_put_hash(m, h, v);
    while (st == AMQ_ERR_FULL && amq_maplet_resize(m) == AMQ_OK) {
        if (!o->quiet)
            fprintf(stderr,
                    "amq: %s: full at pair %zu: resized to twice "
                    "the slots; the bound at the new capacity is %.3g\n",
                    o->files[0], i + 1, amq_maplet_capacity_bound(m));
        st = amq_maplet_put_hash(m, h, v);
    }
    if (st == AMQ_OK)
        return true;
    char what[64];
    snprintf(what, sizeof what, "pair %zu (nothing written)", i + 1);
    cli_status_error(what, st, NULL);
    return false;
}

static bool del_pair(amq_maplet *m, uint64_t h, uint64_t v, size_t i) {
    amq_status st = amq_maplet_delete_hash(m, h, v);
    if (st == AMQ_OK)
        return true;
    if (st == AMQ_ERR_UNSUPPORTED)
        cli_error("this maplet combines with max, min or or: what was "
                  "combined cannot be taken apart (build it with "
                  "--multiset to delete pairs); nothing written");
    else if (st == AMQ_ERR_NOT_FOUND)
        cli_error("pair %zu: the maplet does not hold it (a sum below the "
                  "value, or no such pair); nothing written",
                  i + 1);
    else
        cli_status_error("delete", st, NULL);
    return false;
}

static int map_update(const map_opts *o, bool add) {
    amq_filter *m = NULL;
    amq_diag d;
    pairs p = {0};
    int rc = CLI_EXIT_ERR;
    memset(&d, 0, sizeof d);
    amq_status st = amq_filter_load_file(o->files[0], NULL, &m, &d);
    if (st != AMQ_OK)
        return cli_status_error(o->files[0], st, &d);
    amq_maplet_shape s;
    if (amq_maplet_get_shape(m, &s) != AMQ_OK || s.is_static) {
        cli_error(
            "%s: %s", o->files[0],
            amq_maplet_is(m)
                ? "a static maplet cannot change: rebuild it with amq map "
                  "build"
                : "not a maplet (amq add / amq remove change filters)");
        goto out;
    }
    if (!read_pairs(o->input, amq_filter_hasher(m), s.op == AMQ_MAPLET_OR,
                    s.value_bits, &p))
        goto out;
    for (size_t i = 0; i < p.n; i++)
        if (add ? !add_pair(m, p.h[i], p.v[i], i, o)
                : !del_pair(m, p.h[i], p.v[i], i))
            goto out;
    const char *dst = o->output ? o->output : o->files[0];
    st = amq_filter_save_file(m, dst, &d);
    rc = st == AMQ_OK ? CLI_EXIT_OK : cli_status_error(dst, st, &d);
out:
    amq_filter_free(m);
    free(p.h);
    free(p.v);
    return rc;
}

/* ---- merge -------------------------------------------------------------------------- */

static int map_merge(const map_opts *o) {
    amq_filter *a = NULL, *b = NULL;
    amq_diag d;
    int rc = CLI_EXIT_ERR;
    memset(&d, 0, sizeof d);
    amq_status st = amq_filter_load_file(o->files[0], NULL, &a, &d);
    if (st != AMQ_OK)
        return cli_status_error(o->files[0], st, &d);
    if ((st = amq_filter_open_file(o->files[1], NULL, &b, &d)) != AMQ_OK) {
        rc = cli_status_error(o->files[1], st, &d);
        goto out;
    }
    st = amq_maplet_merge(a, b);
    if (st == AMQ_ERR_INCOMPATIBLE)
        cli_error("%s and %s differ in shape, operator, value bits, mode or "
                  "hasher: maplets merge only with their own kind",
                  o->files[0], o->files[1]);
    else if (st != AMQ_OK)
        cli_status_error("merge", st, NULL);
    if (st == AMQ_OK) {
        st = amq_filter_save_file(a, o->output, &d);
        rc = st == AMQ_OK ? CLI_EXIT_OK : cli_status_error(o->output, st, &d);
    }
out:
    amq_filter_free(a);
    amq_filter_free(b);
    return rc;
}

/* One subcommand; argv[0] is its name. */
static int map_run(const char *sub, int argc, char **argv) {
    map_opts o;
    memset(&o, 0, sizeof o);
    o.sub = sub;
    int rc = parse_args(argc, argv, &o);
    if (rc < 0) {
        if (strcmp(o.sub, "build") == 0)
            rc = map_build(&o);
        else if (strcmp(o.sub, "get") == 0)
            rc = map_get(&o);
        else if (strcmp(o.sub, "merge") == 0)
            rc = map_merge(&o);
        else
            rc = map_update(&o, strcmp(o.sub, "add") == 0);
    }
    cli_key_source_free(&o.src);
    return rc;
}

static int run_build(int argc, char **argv) {
    return map_run("build", argc, argv);
}
static int run_get(int argc, char **argv) { return map_run("get", argc, argv); }
static int run_add(int argc, char **argv) { return map_run("add", argc, argv); }
static int run_del(int argc, char **argv) { return map_run("del", argc, argv); }
static int run_merge(int argc, char **argv) {
    return map_run("merge", argc, argv);
}

int cli_cmd_map(int argc, char **argv) {
    static const cli_command subs[] = {{"build", run_build}, {"get", run_get},
                                       {"add", run_add},     {"del", run_del},
                                       {"merge", run_merge}, {NULL, NULL}};
    return cli_dispatch("map", subs, argc, argv);
}
