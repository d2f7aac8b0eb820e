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
 * distinct keys, so --capacity does not apply. Dynamic types hold every
 * copy of a repeated key (a counting filter counts them); --unique adds
 * each distinct key once (sized builds: the hashes are sorted and repeats
 * dropped before the builder takes them; --capacity: a key the filter
 * already reports is not added again).
 *
 * -j N sets the builder's threads (0, the default: every core); the
 * filter is the same for every N.
 *
 * --type auto[:dynamic,deletes,counts] asks `amq recommend` for the
 * smallest type meeting --fpr (static ones only when every key is read
 * before the build) and says which and why.
 *
 * Progress: one line on stderr through the phases — reading and hashing
 * (percent of the input file, or keys so far from a pipe), constructing,
 * writing — on a terminal, or always with --progress; never with -q.
 */
#include <stdlib.h>
#include <string.h>

#include "verbs.h"

typedef struct build_opts {
    const char *spec, *output, *input;
    double fpr; /* --fpr, else CLI_DEFAULT_FPR                   */
    bool fpr_given;
    uint64_t capacity;  /* 0: size for the key count                     */
    amq_hash_kind hash; /* AMQ_HASH_DEFAULT: the type's                  */
    uint64_t seed;
    bool binary, skip_empty, quiet, unique;
    uint64_t threads; /* -j: 0 = every core (the builder's default)  */
    char ranged[256]; /* a range filter's spec with keys=bytes        */
} build_opts;

typedef struct build_ctx {
    build_opts o;
    amq_options opt;
    uint8_t key[AMQ_HASH_KEY_BYTES];
    amq_filter *filter;
    cli_progress progress;
} build_ctx;

enum {
    OPT_TYPE = 1,
    OPT_FPR,
    OPT_CAPACITY,
    OPT_KEYED,
    OPT_HASH,
    OPT_SEED,
    OPT_BINARY,
    OPT_SKIP_EMPTY,
    OPT_OUTPUT,
    OPT_QUIET,
    OPT_UNIQUE,
    OPT_PROGRESS,
    OPT_THREADS
};

static const cli_opt build_options[] = {
    {"type", 't', true, OPT_TYPE},
    {"fpr", 'e', true, OPT_FPR},
    {"capacity", 'n', true, OPT_CAPACITY},
    {"keyed-hash", 0, false, OPT_KEYED},
    {"hash", 0, true, OPT_HASH},
    {"seed", 0, true, OPT_SEED},
    {"binary", 'b', false, OPT_BINARY},
    {"skip-empty", 0, false, OPT_SKIP_EMPTY},
    {"output", 'o', true, OPT_OUTPUT},
    {"quiet", 'q', false, OPT_QUIET},
    {"unique", 'u', false, OPT_UNIQUE},
    {"progress", 0, false, OPT_PROGRESS},
    {"threads", 'j', true, OPT_THREADS},
    {NULL, 0, false, 0},
};

/* ---- arguments ------------------------------------------------------------ */

static bool set_hash(build_opts *o, amq_hash_kind kind) {
    if (o->hash != AMQ_HASH_DEFAULT && o->hash != kind) {
        cli_usage_error("build", "conflicting hash choices");
        return false;
    }
    o->hash = kind;
    return true;
}

static bool parse_hash(build_opts *o, const char *s) {
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

static bool take_option(build_opts *o, int id, const char *v) {
    switch (id) {
    case OPT_TYPE: o->spec = v; return true;
    case OPT_FPR:
        o->fpr_given = true;
        return cli_parse_fpr("build", "--fpr", v, &o->fpr);
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
    case OPT_QUIET:
        o->quiet = true;
        cli_progress_set_mode(CLI_PROGRESS_OFF);
        return true;
    case OPT_UNIQUE: o->unique = true; return true;
    case OPT_PROGRESS:
        if (!o->quiet)
            cli_progress_set_mode(CLI_PROGRESS_ON);
        return true;
    case OPT_THREADS:
        if (!cli_parse_u64("build", "--threads", v, &o->threads))
            return false;
        if (o->threads > 1024)
            cli_usage_error("build",
                            "--threads: at most 1024 (0 = every core)");
        return o->threads <= 1024;
    default: return false;
    }
}

static bool spec_is_static(const char *spec) {
    const amq_type_info *t = amq_filter_type_find(spec);
    return t != NULL && (t->caps & AMQ_CAP_STATIC) != 0;
}

/* The words after "auto:" (dynamic, deletes, counts) into the need. */
static bool auto_words(const char *w, amq_need *need) {
    while (*w) {
        size_t len = strcspn(w, ",");
        if (len == 7 && strncmp(w, "dynamic", len) == 0)
            need->allow_static = false;
        else if (len == 7 && strncmp(w, "deletes", len) == 0)
            need->deletes = true;
        else if (len == 6 && strncmp(w, "counts", len) == 0)
            need->counts = true;
        else {
            cli_usage_error("build",
                            "--type auto: unknown '%.*s' (auto, or "
                            "auto:dynamic,deletes,counts)",
                            (int)len, w);
            return false;
        }
        w += len + (w[len] == ',');
    }
    return true;
}

/* --type auto[:...]: the type `amq recommend` picks, said on stderr. */
static bool resolve_auto(build_opts *o) {
    if (strncmp(o->spec, "auto", 4) != 0 ||
        (o->spec[4] != 0 && o->spec[4] != ':'))
        return true;
    amq_need need = {
        .n = o->capacity, .fpr = o->fpr, .allow_static = o->capacity == 0};
    if (o->spec[4] == ':' && !auto_words(o->spec + 5, &need))
        return false;
    const char *name = cli_recommend_type(&need, o->quiet ? NULL : stderr);
    if (name == NULL)
        cli_error("--type auto: no type meets this need");
    else
        o->spec = name;
    return name != NULL;
}

/* Without --fpr, a spec that may fix the shape itself (explicit sizes,
 * fixed-width static types) is tried without a target first. */
static bool try_explicit(const build_opts *o) {
    return !o->fpr_given &&
           (strchr(o->spec, ':') != NULL || spec_is_static(o->spec));
}

/* A range filter built here takes each line's bytes (the order map), so
 * its spec says keys=bytes unless it names a form: `amq range query` then
 * reads its ranges as strings too (`amq range build` takes integers). */
static bool bytes_if_ranged(build_opts *o) {
    const amq_type_info *t = amq_filter_type_find(o->spec);
    if (t == NULL || !(t->caps & AMQ_CAP_RANGE) ||
        strstr(o->spec, "keys=") != NULL)
        return true;
    size_t n = (size_t)snprintf(o->ranged, sizeof o->ranged, "%s%skeys=bytes",
                                o->spec, strchr(o->spec, ':') ? "," : ":");
    if (n >= sizeof o->ranged) {
        cli_usage_error("build", "--type: spec too long");
        return false;
    }
    o->spec = o->ranged;
    return true;
}

static bool check_args(build_opts *o) {
    if (o->spec == NULL)
        o->spec = CLI_DEFAULT_TYPE;
    if (!o->fpr_given)
        o->fpr = CLI_DEFAULT_FPR;
    if (o->output == NULL)
        cli_usage_error("build", "missing -o FILE");
    else if (!resolve_auto(o))
        return false;
    else if (o->capacity != 0 && spec_is_static(o->spec))
        cli_usage_error("build",
                        "'%s' is static: it is built from all keys "
                        "at once, so --capacity does not apply",
                        o->spec);
    else
        return bytes_if_ranged(o);
    return false;
}

/* -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, build_opts *o) {
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

static int new_filter(build_ctx *c, uint64_t capacity, amq_filter **out) {
    amq_diag diag;
    memset(&diag, 0, sizeof diag);
    amq_status st = AMQ_ERR_SPEC;
    if (try_explicit(&c->o))
        st = amq_filter_new(c->o.spec, 0, 0.0, &c->opt, out, NULL);
    if (st == AMQ_ERR_SPEC)
        st = amq_filter_new(c->o.spec, capacity, c->o.fpr, &c->opt, out, &diag);
    if (st == AMQ_OK)
        return CLI_EXIT_OK;
    size_t len = strlen("--type ''") + strlen(c->o.spec) + 1;
    char *what = malloc(len);
    if (what != NULL)
        snprintf(what, len, "--type '%s'", c->o.spec);
    cli_status_error(what ? what : "--type", st, &diag);
    free(what);
    return CLI_EXIT_ERR;
}

static int report_full(const build_ctx *c, const cli_keys *k, uint64_t index) {
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
                      amq_status st) {
    if (st == AMQ_ERR_FULL)
        return report_full(c, k, index);
    char what[64];
    snprintf(what, sizeof what, "key %llu", (unsigned long long)index);
    return cli_status_error(what, st, NULL);
}

/* --capacity given: add keys while reading them. */
static int build_streaming(build_ctx *c, cli_keys *k) {
    int rc = new_filter(c, c->o.capacity, &c->filter);
    if (rc != CLI_EXIT_OK)
        return rc;
    cli_progress *p = &c->progress;
    cli_progress_init_bytes(p, "reading and adding", cli_keys_size(k));
    const uint8_t *key;
    size_t len;
    int r;
    while ((r = cli_keys_next(k, &key, &len)) == 1) {
        if (c->o.unique && amq_filter_contains(c->filter, key, len))
            continue; /* reported already: adding again adds a copy */
        amq_status st = amq_filter_add(c->filter, key, len);
        if (st == AMQ_ERR_FULL) /* a qf sized too small goes on growing */
            cli_grow_full(&c->filter, c->o.output, c->o.quiet, key, len, &st);
        if (st != AMQ_OK) {
            cli_progress_done(p);
            rc = add_status(c, k, k->count, st);
            if (st == AMQ_ERR_FULL && cli_explain_full(c->filter, key, len))
                cli_error("hint: --unique adds each distinct key once");
            else if (st == AMQ_ERR_FULL)
                cli_error("hint: the filter was sized for %llu keys (-n); "
                          "give a larger -n, or none to size it for the "
                          "input",
                          (unsigned long long)c->o.capacity);
            return rc;
        }
        cli_progress_tick_keys(p, k);
    }
    return r == 0 ? CLI_EXIT_OK : CLI_EXIT_ERR;
}

static int out_of_memory(const build_ctx *c, uint64_t keys) {
    cli_error("%s: out of memory after %llu keys",
              c->o.input ? c->o.input : "<stdin>", (unsigned long long)keys);
    return CLI_EXIT_ERR;
}

/* --unique on a dynamic type: the hashes wait here to be sorted and
 * stripped of repeats before the builder takes them. */
typedef struct hash_stash {
    uint64_t *h;
    size_t n, cap;
} hash_stash;

static bool stash_push(hash_stash *s, uint64_t h) {
    if (s->n == s->cap) {
        size_t ncap = s->cap ? s->cap * 2 : 4096;
        uint64_t *nh =
            ncap > SIZE_MAX / 16 ? NULL : realloc(s->h, ncap * sizeof *nh);
        if (nh == NULL)
            return false;
        s->h = nh;
        s->cap = ncap;
    }
    s->h[s->n++] = h;
    return true;
}

static int by_value(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Sort, drop repeats, hand the distinct hashes to the builder. */
static bool stash_flush(hash_stash *s, amq_builder *b) {
    size_t d = 0;
    qsort(s->h, s->n, sizeof *s->h, by_value);
    for (size_t i = 0; i < s->n; i++)
        if (d == 0 || s->h[i] != s->h[d - 1])
            s->h[d++] = s->h[i];
    return amq_builder_add_hashes(b, s->h, d) == AMQ_OK;
}

/* Every key, hashed with the builder's hasher, into the builder (or the
 * stash, for --unique on a dynamic type). */
static int read_keys(build_ctx *c, amq_builder *b, cli_keys *k) {
    hash_stash stash = {NULL, 0, 0};
    bool unique = c->o.unique && !spec_is_static(c->o.spec);
    const uint8_t *key;
    size_t len;
    int r, rc = CLI_EXIT_OK;
    cli_progress_init_bytes(&c->progress, "reading and hashing",
                            cli_keys_size(k));
    while ((r = cli_keys_next(k, &key, &len)) == 1) {
        bool ok = unique ? stash_push(&stash, amq_builder_hash(b, key, len))
                         : amq_builder_add(b, key, len) == AMQ_OK;
        if (!ok)
            break;
        cli_progress_tick_keys(&c->progress, k);
    }
    if (r == 1 || (r == 0 && unique && !stash_flush(&stash, b)))
        rc = out_of_memory(c, k->count);
    free(stash.h);
    return r < 0 ? CLI_EXIT_ERR : rc;
}

/* Key `index` (1-based) of a re-readable KEYFILE, and how many of the
 * first `index` keys equal it. False when the input cannot be read again
 * (stdin, a pipe). */
static bool count_repeats(const build_opts *o, uint64_t index, char *shown,
                          size_t cap, uint64_t *occurrences) {
    cli_keys k;
    const uint8_t *key;
    size_t len, klen = 0;
    uint8_t *want = NULL;
    if (o->input == NULL || strcmp(o->input, "-") == 0 ||
        !cli_keys_open(&k, o->input, o->binary, o->skip_empty))
        return false;
    bool found = false;
    while (!found && cli_keys_next(&k, &key, &len) == 1)
        if (k.count == index && (want = malloc(len ? len : 1)) != NULL) {
            memcpy(want, key, len);
            klen = len;
            found = true;
        }
    cli_keys_close(&k);
    *occurrences = 0;
    if (found && cli_keys_open(&k, o->input, o->binary, o->skip_empty)) {
        while (k.count < index && cli_keys_next(&k, &key, &len) == 1)
            *occurrences += len == klen && memcmp(key, want, len) == 0;
        cli_keys_close(&k);
        snprintf(shown, cap, "%.*s", (int)(klen < 60 ? klen : 60),
                 (const char *)want);
    }
    free(want);
    return found;
}

/* A dynamic filter sized for `taken` keys refused key `in` + 1: say why
 * when the load is far below any table's design load. */
static void explain_early_full(const build_ctx *c, uint64_t in,
                               uint64_t taken) {
    char key[64] = "";
    uint64_t occ = 0;
    if (c->o.unique || in >= taken / 2)
        return;
    if (count_repeats(&c->o, in + 1, key, sizeof key, &occ) && occ > 1)
        cli_error("key %llu ('%s') is the same key added %llu times: a "
                  "fingerprint filter holds only a few copies of one key "
                  "(cuckoo: 8)",
                  (unsigned long long)in + 1, key, (unsigned long long)occ);
    else
        cli_error("the table was sized for %llu keys and refused one after "
                  "%llu, far below its design load: the input repeats a key "
                  "more often than the table holds copies of one (cuckoo: "
                  "8), or its keys were chosen to collide",
                  (unsigned long long)taken, (unsigned long long)in);
    cli_error("hint: --unique adds each distinct key once");
}

static int finish_error(const build_ctx *c, amq_status st, const amq_diag *d,
                        uint64_t taken) {
    if (st == AMQ_ERR_FULL) {
        cli_error("%s: key %llu: %s after %llu keys; nothing written",
                  c->o.input ? c->o.input : "<stdin>",
                  (unsigned long long)d->offset + 1, amq_strerror(st),
                  (unsigned long long)d->offset);
        explain_early_full(c, d->offset, taken);
        return CLI_EXIT_ERR;
    }
    size_t len = strlen("building ''") + strlen(c->o.spec) + 1;
    char *what = malloc(len);
    if (what != NULL)
        snprintf(what, len, "building '%s'", c->o.spec);
    cli_status_error(what ? what : "build", st, d);
    free(what);
    return CLI_EXIT_ERR;
}

/* No --capacity: the builder takes every key, then sizes the filter for
 * their number (a static type: for the distinct keys). */
static int build_sized(build_ctx *c, cli_keys *k) {
    amq_builder *b = NULL;
    amq_diag d;
    memset(&d, 0, sizeof d);
    amq_status st = amq_builder_new(c->o.spec, &c->opt, &b, &d);
    if (st != AMQ_OK) {
        cli_status_error("--type", st, &d);
        return CLI_EXIT_ERR;
    }
    amq_builder_set_threads(b, (unsigned)c->o.threads);
    int rc = read_keys(c, b, k);
    if (rc == CLI_EXIT_OK) {
        cli_progress_phase(&c->progress, "constructing", 0);
        st = AMQ_ERR_SPEC;
        if (try_explicit(&c->o)) /* a failed finish keeps the keys */
            st = amq_builder_finish(b, 0.0, &c->filter, NULL);
        if (st == AMQ_ERR_SPEC)
            st = amq_builder_finish(b, c->o.fpr, &c->filter, &d);
        if (st != AMQ_OK) {
            cli_progress_done(&c->progress);
            rc = finish_error(c, st, &d, amq_builder_count(b));
        }
    }
    amq_builder_free(b);
    return rc;
}

/* ---- output -------------------------------------------------------------- */

/* A fixed-width type asked for a rate it beats by far spends bits on the
 * difference: say so, and name the type that meets the rate in fewer. */
static void note_fixed_width(const build_ctx *c) {
    const amq_filter *f = c->filter;
    double bound = amq_filter_fpr_bound(f), bits = 0.0;
    if (c->o.quiet || !c->o.fpr_given || bound >= c->o.fpr / 1.5 ||
        !(amq_filter_caps(f) & AMQ_CAP_STATIC))
        return;
    amq_need need = {
        .n = amq_filter_items(f), .fpr = c->o.fpr, .allow_static = true};
    const char *better = cli_recommend_type(&need, NULL);
    fprintf(stderr,
            "amq: note: %s has fixed-width fingerprints: it gives "
            "%.3g whatever --fpr asks",
            amq_filter_info(f)->name, bound);
    if (better != NULL && amq_curve_bits(better, c->o.fpr, &bits) == AMQ_OK &&
        bits < amq_filter_bits_per_key(f))
        fprintf(stderr, "; %s meets %g in %.2f bits/key instead of %.2f",
                better, c->o.fpr, bits, amq_filter_bits_per_key(f));
    fputc('\n', stderr);
}

static void print_summary(const build_ctx *c, size_t bytes) {
    char *desc = cli_describe(c->filter);
    fprintf(stderr,
            "amq: wrote %s (%zu bytes): %s, %llu key%s, %.2f bits/key, "
            "fpr bound %.3g\n",
            strcmp(c->o.output, "-") == 0 ? "<stdout>" : c->o.output, bytes,
            desc ? desc : "?", (unsigned long long)amq_filter_items(c->filter),
            cli_s(amq_filter_items(c->filter)),
            amq_filter_bits_per_key(c->filter),
            amq_filter_fpr_bound(c->filter));
    free(desc);
    note_fixed_width(c);
    cli_note_forgets(c->filter);
}

/* amq_filter_save_file (atomic; 0600 for a keyed filter), or stdout. */
static int save(build_ctx *c) {
    cli_progress_phase(&c->progress, "writing", 0);
    bool ok = cli_filter_save(c->filter, c->o.output);
    cli_progress_done(&c->progress);
    if (ok && !c->o.quiet)
        print_summary(c, amq_filter_serialized_size(c->filter));
    return ok ? cli_check_capacity(c->filter, c->o.output) : CLI_EXIT_ERR;
}

static void prepare_options(build_ctx *c) {
    memset(&c->opt, 0, sizeof c->opt);
    c->opt.hash = c->o.hash;
    c->opt.hash_seed = c->o.seed;
    if (c->o.hash == AMQ_HASH_SIPHASH) {
        amq_random_bytes(c->key, sizeof c->key);
        c->opt.hash_key = c->key;
    }
}

int cli_cmd_build(int argc, char **argv) {
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
    cli_progress_done(&c.progress);
    if (rc == CLI_EXIT_OK)
        rc = save(&c);
    amq_filter_free(c.filter);
    memset(c.key, 0, sizeof c.key);
    return rc;
}
