/*
 * build.c — `amq build`: read keys, build a filter through the generic
 * interface and save its frame atomically.
 *
 * With --capacity the filter exists before the first key and keys are added
 * as they are read. Without it the filter is sized for the number of keys,
 * which is known only at the end of the input: an amq_builder takes them
 * (8 bytes a key, whatever the key length) and builds the filter at the
 * end, with the hasher it resolved at the start (for keyed hashing, the
 * random key drawn here).
 *
 * Static types (xor, fuse, ribbon: AMQ_CAP_STATIC) cannot take keys one at
 * a time: they are always built from every key at once, sized for the
 * distinct keys, so --capacity does not apply.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef struct build_opts {
    const char *spec, *output, *input;
    double fpr;            /* 0: not given (explicit spec parameters)       */
    uint64_t capacity;     /* 0: size for the key count                     */
    amq_hash_kind hash;    /* AMQ_HASH_DEFAULT: the type's                  */
    uint64_t seed;
    bool binary, skip_empty, quiet;
} build_opts;

typedef struct build_ctx {
    build_opts o;
    amq_options opt;
    uint8_t key[AMQ_HASH_KEY_BYTES];
    amq_filter *filter;
} build_ctx;

enum {
    OPT_TYPE = 1, OPT_FPR, OPT_CAPACITY, OPT_KEYED, OPT_HASH, OPT_SEED,
    OPT_BINARY, OPT_SKIP_EMPTY, OPT_OUTPUT, OPT_QUIET
};

static const cli_opt build_options[] = {
    {"type", 't', true, OPT_TYPE},
    {"fpr", 'e', true, OPT_FPR},
    {"capacity", 'n', true, OPT_CAPACITY},
    {"keyed-hash", 'k', false, OPT_KEYED},
    {"hash", 0, true, OPT_HASH},
    {"seed", 0, true, OPT_SEED},
    {"binary", 'b', false, OPT_BINARY},
    {"skip-empty", 0, false, OPT_SKIP_EMPTY},
    {"output", 'o', true, OPT_OUTPUT},
    {"quiet", 'q', false, OPT_QUIET},
    {NULL, 0, false, 0},
};

/* ---- arguments ------------------------------------------------------------ */

static bool set_hash(build_opts *o, amq_hash_kind kind)
{
    if (o->hash != AMQ_HASH_DEFAULT && o->hash != kind) {
        cli_usage_error("build", "conflicting hash choices");
        return false;
    }
    o->hash = kind;
    return true;
}

static bool parse_hash(build_opts *o, const char *s)
{
    static const struct {
        const char *name;
        amq_hash_kind kind;
    } kinds[] = {{"xxh3", AMQ_HASH_XXH3},
                 {"xxh64", AMQ_HASH_XXH64},
                 {"siphash", AMQ_HASH_SIPHASH},
                 {"siphash24", AMQ_HASH_SIPHASH}};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(s, kinds[i].name) == 0)
            return set_hash(o, kinds[i].kind);
    cli_usage_error("build", "--hash: unknown kind '%s' (xxh3, xxh64, siphash)",
                    s);
    return false;
}

static bool take_option(build_opts *o, int id, const char *v)
{
    switch (id) {
    case OPT_TYPE: o->spec = v; return true;
    case OPT_FPR: return cli_parse_fpr("build", "--fpr", v, &o->fpr);
    case OPT_CAPACITY:
        if (!cli_parse_u64("build", "--capacity", v, &o->capacity))
            return false;
        if (o->capacity == 0)
            cli_usage_error("build", "--capacity must be at least 1");
        return o->capacity != 0;
    case OPT_KEYED: return set_hash(o, AMQ_HASH_SIPHASH);
    case OPT_HASH: return parse_hash(o, v);
    case OPT_SEED: return cli_parse_u64("build", "--seed", v, &o->seed);
    case OPT_BINARY: o->binary = true; return true;
    case OPT_SKIP_EMPTY: o->skip_empty = true; return true;
    case OPT_OUTPUT: o->output = v; return true;
    case OPT_QUIET: o->quiet = true; return true;
    default: return false;
    }
}

static bool spec_is_static(const char *spec)
{
    const amq_type_info *t = amq_filter_type_find(spec);
    return t != NULL && (t->caps & AMQ_CAP_STATIC) != 0;
}

static bool check_args(const build_opts *o)
{
    if (o->spec == NULL)
        cli_usage_error("build", "missing --type SPEC");
    else if (o->output == NULL)
        cli_usage_error("build", "missing -o FILE");
    else if (o->capacity != 0 && o->fpr == 0.0)
        cli_usage_error("build", "--capacity needs --fpr");
    else if (o->capacity != 0 && spec_is_static(o->spec))
        cli_usage_error("build", "'%s' is static: it is built from all keys "
                        "at once, so --capacity does not apply", o->spec);
    else
        return true;
    return false;
}

/* -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, build_opts *o)
{
    cli_args a;
    int id;
    cli_args_init(&a, "build", argc, argv);
    while ((id = cli_next(&a, build_options)) != CLI_NEXT_END) {
        if (id == CLI_NEXT_ERR)
            return CLI_EXIT_ERR;
        if (id == CLI_OPT_HELP)
            return cli_help_print(stdout, "build") ? CLI_EXIT_OK : CLI_EXIT_ERR;
        if (id == CLI_NEXT_POS && o->input != NULL)
            return cli_usage_error("build", "more than one KEYFILE");
        if (id == CLI_NEXT_POS)
            o->input = a.value;
        else if (!take_option(o, id, a.value))
            return CLI_EXIT_ERR;
    }
    return check_args(o) ? -1 : CLI_EXIT_ERR;
}

/* ---- building -------------------------------------------------------------- */

static int new_filter(build_ctx *c, uint64_t capacity, amq_filter **out)
{
    amq_diag diag;
    memset(&diag, 0, sizeof diag);
    double fpr = c->o.fpr;
    if (fpr == 0.0)
        capacity = 0; /* explicit parameters in the spec */
    amq_status st = amq_filter_new(c->o.spec, capacity, fpr, &c->opt, out,
                                   &diag);
    if (st == AMQ_OK)
        return CLI_EXIT_OK;
    size_t len = strlen("--type ''") + strlen(c->o.spec) + 1;
    char *what = malloc(len);
    if (what != NULL)
        snprintf(what, len, "--type '%s'", c->o.spec);
    cli_status_error(what ? what : "--type", st, &diag);
    free(what);
    if (fpr == 0.0)
        cli_error("hint: give --fpr E unless the spec has explicit "
                  "parameters (e.g. bloom:m=BITS,k=K)");
    return CLI_EXIT_ERR;
}

static int report_full(const build_ctx *c, const cli_keys *k, uint64_t index)
{
    if (k != NULL && !c->o.binary)
        cli_error("%s: key %llu (line %llu): %s after %llu keys; nothing "
                  "written",
                  k->name, (unsigned long long)index,
                  (unsigned long long)k->line, amq_strerror(AMQ_ERR_FULL),
                  (unsigned long long)amq_filter_items(c->filter));
    else
        cli_error("%s: key %llu: %s after %llu keys; nothing written",
                  c->o.input ? c->o.input : "<stdin>",
                  (unsigned long long)index, amq_strerror(AMQ_ERR_FULL),
                  (unsigned long long)amq_filter_items(c->filter));
    return CLI_EXIT_ERR;
}

static int add_status(const build_ctx *c, const cli_keys *k, uint64_t index,
                      amq_status st)
{
    if (st == AMQ_ERR_FULL)
        return report_full(c, k, index);
    char what[64];
    snprintf(what, sizeof what, "key %llu", (unsigned long long)index);
    return cli_status_error(what, st, NULL);
}

/* --capacity given: add keys while reading them. */
static int build_streaming(build_ctx *c, cli_keys *k)
{
    int rc = new_filter(c, c->o.capacity, &c->filter);
    if (rc != CLI_EXIT_OK)
        return rc;
    cli_progress p;
    cli_progress_init(&p, "adding", c->o.capacity);
    const uint8_t *key;
    size_t len;
    int r;
    while ((r = cli_keys_next(k, &key, &len)) == 1) {
        amq_status st = amq_filter_add(c->filter, key, len);
        if (st != AMQ_OK) {
            cli_progress_done(&p);
            return add_status(c, k, k->count, st);
        }
        cli_progress_tick(&p, k->count);
    }
    cli_progress_done(&p);
    return r == 0 ? CLI_EXIT_OK : CLI_EXIT_ERR;
}

/* Every key into the builder. */
static int read_keys(const build_ctx *c, amq_builder *b, cli_keys *k)
{
    cli_progress p;
    cli_progress_init(&p, "reading", 0);
    const uint8_t *key;
    size_t len;
    int r;
    while ((r = cli_keys_next(k, &key, &len)) == 1) {
        if (amq_builder_add(b, key, len) != AMQ_OK) {
            cli_error("%s: out of memory after %llu keys",
                      c->o.input ? c->o.input : "<stdin>",
                      (unsigned long long)amq_builder_count(b));
            r = -1;
            break;
        }
        cli_progress_tick(&p, k->count);
    }
    cli_progress_done(&p);
    return r == 0 ? CLI_EXIT_OK : CLI_EXIT_ERR;
}

static int finish_error(const build_ctx *c, amq_status st,
                        const amq_diag *d)
{
    if (st == AMQ_ERR_FULL) {
        cli_error("%s: key %llu: %s after %llu keys; nothing written",
                  c->o.input ? c->o.input : "<stdin>",
                  (unsigned long long)d->offset + 1, amq_strerror(st),
                  (unsigned long long)d->offset);
        return CLI_EXIT_ERR;
    }
    size_t len = strlen("building ''") + strlen(c->o.spec) + 1;
    char *what = malloc(len);
    if (what != NULL)
        snprintf(what, len, "building '%s'", c->o.spec);
    cli_status_error(what ? what : "build", st, d);
    free(what);
    if (c->o.fpr == 0.0 && st == AMQ_ERR_SPEC)
        cli_error("hint: give --fpr E unless the spec has explicit "
                  "parameters (e.g. bloom:m=BITS,k=K)");
    return CLI_EXIT_ERR;
}

/* No --capacity: the builder takes every key, then sizes the filter for
 * their number (a static type: for the distinct keys). */
static int build_sized(build_ctx *c, cli_keys *k)
{
    amq_builder *b = NULL;
    amq_diag d;
    memset(&d, 0, sizeof d);
    amq_status st = amq_builder_new(c->o.spec, &c->opt, &b, &d);
    if (st != AMQ_OK) {
        cli_status_error("--type", st, &d);
        return CLI_EXIT_ERR;
    }
    int rc = read_keys(c, b, k);
    if (rc == CLI_EXIT_OK) {
        st = amq_builder_finish(b, c->o.fpr, &c->filter, &d);
        if (st != AMQ_OK)
            rc = finish_error(c, st, &d);
    }
    amq_builder_free(b);
    return rc;
}

/* ---- output -------------------------------------------------------------- */

static void print_summary(const build_ctx *c, size_t bytes)
{
    char *desc = cli_describe(c->filter);
    fprintf(stderr,
            "amq: wrote %s (%zu bytes): %s, %llu keys, %.2f bits/key, "
            "fpr bound %.3g\n",
            strcmp(c->o.output, "-") == 0 ? "<stdout>" : c->o.output, bytes,
            desc ? desc : "?",
            (unsigned long long)amq_filter_items(c->filter),
            amq_filter_bits_per_key(c->filter),
            amq_filter_fpr_bound(c->filter));
    free(desc);
}

static int save(const build_ctx *c)
{
    size_t size = amq_filter_serialized_size(c->filter), written = 0;
    uint8_t *buf = malloc(size > 0 ? size : 1);
    if (buf == NULL) {
        cli_error("%s: out of memory for %zu bytes", c->o.output, size);
        return CLI_EXIT_ERR;
    }
    amq_status st = amq_filter_save(c->filter, buf, size, &written);
    bool ok = st == AMQ_OK;
    if (!ok)
        cli_status_error(c->o.output, st, NULL);
    else
        ok = cli_write_file(c->o.output, buf, written,
                            amq_filter_hasher(c->filter)->kind ==
                                AMQ_HASH_SIPHASH);
    free(buf);
    if (ok && !c->o.quiet)
        print_summary(c, written);
    return ok ? CLI_EXIT_OK : CLI_EXIT_ERR;
}

static void prepare_options(build_ctx *c)
{
    memset(&c->opt, 0, sizeof c->opt);
    c->opt.hash = c->o.hash;
    c->opt.hash_seed = c->o.seed;
    if (c->o.hash == AMQ_HASH_SIPHASH) {
        amq_random_bytes(c->key, sizeof c->key);
        c->opt.hash_key = c->key;
    }
}

int cli_cmd_build(int argc, char **argv)
{
    build_ctx c;
    memset(&c, 0, sizeof c);
    int rc = parse_args(argc, argv, &c.o);
    if (rc >= 0)
        return rc;
    prepare_options(&c);
    cli_keys k;
    if (!cli_keys_open(&k, c.o.input, c.o.binary, c.o.skip_empty))
        return CLI_EXIT_ERR;
    rc = c.o.capacity != 0 ? build_streaming(&c, &k) : build_sized(&c, &k);
    cli_keys_close(&k);
    if (rc == CLI_EXIT_OK)
        rc = save(&c);
    amq_filter_free(c.filter);
    memset(c.key, 0, sizeof c.key);
    return rc;
}
