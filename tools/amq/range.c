/*
 * range.c — `amq range build|add|remove|query`: a range filter
 * (amq/range.h) over integer keys, or byte-string keys through the order
 * map.
 *
 *   build  one key a line (decimal or 0x hex integers; with --strings the
 *          line's bytes) into a grafite filter (static) or, with --type
 *          memento, a Memento filter (takes adds and removes, grows), for
 *          a rate on ranges of --range keys;
 *   add, remove
 *          keys in the filter's own form into or out of a memento file;
 *   query  one range a line, "LO HI" (or "LO" alone: one key; for a
 *          filter of byte-string keys the two ends are split by a tab):
 *          print the lines whose range may hold a key.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "amq/range.h"
#include "verbs.h"

enum {
    OPT_FPR = 1,
    OPT_RANGE,
    OPT_OUT,
    OPT_STRINGS,
    OPT_SEED,
    OPT_COUNT,
    OPT_QUIET,
    OPT_TYPE
};

static const cli_opt build_options[] = {
    {"fpr", 'e', true, OPT_FPR},      {"range", 0, true, OPT_RANGE},
    {"output", 'o', true, OPT_OUT},   {"strings", 0, false, OPT_STRINGS},
    {"seed", 0, true, OPT_SEED},      {"type", 't', true, OPT_TYPE},
    {"quiet", 'q', false, OPT_QUIET}, {NULL, 0, false, 0},
};

static const cli_opt update_options[] = {
    {"quiet", 'q', false, OPT_QUIET},
    {NULL, 0, false, 0},
};

static const cli_opt query_options[] = {
    {"count", 'c', false, OPT_COUNT},
    {NULL, 0, false, 0},
};

/* A decimal or 0x-hex integer filling the whole of s[0..len). */
static bool parse_int(const uint8_t *s, size_t len, uint64_t *out) {
    char buf[32], *end;
    if (len == 0 || len >= sizeof buf || s[0] < '0' || s[0] > '9')
        return false; /* no sign, no blank: strtoull would take them */
    memcpy(buf, s, len);
    buf[len] = 0;
    errno = 0;
    unsigned long long v = strtoull(buf, &end, 0);
    if (errno != 0 || *end != 0 || (buf[0] == '0' && len > 1 && buf[1] != 'x'))
        return false;
    *out = v;
    return true;
}

static uint64_t key_value(const uint8_t *key, size_t len, bool strings,
                          bool *ok) {
    uint64_t v = 0;
    if (strings)
        return amq_range_key(key, len);
    *ok = parse_int(key, len, &v);
    return v;
}

typedef struct build_args {
    double fpr;
    uint64_t range, seed;
    const char *out, *input, *type;
    bool strings, quiet, seeded;
} build_args;

/* -1 to go on, else the exit status. */
static int read_build_args(build_args *b, int argc, char **argv) {
    cli_args a;
    int id;
    cli_args_init(&a, "range", argc, argv);
    b->fpr = CLI_DEFAULT_FPR;
    b->range = 1;
    b->type = "grafite";
    while ((id = cli_next(&a, build_options)) != CLI_NEXT_END) {
        if (id == CLI_NEXT_ERR)
            return CLI_EXIT_ERR;
        if (id == CLI_OPT_HELP)
            return cli_help_print(stdout, "range") ? CLI_EXIT_OK : CLI_EXIT_ERR;
        if (id == OPT_FPR && !cli_parse_fpr("range", "--fpr", a.value, &b->fpr))
            return CLI_EXIT_ERR;
        if (id == OPT_RANGE &&
            (!cli_parse_u64("range", "--range", a.value, &b->range) ||
             b->range == 0))
            return cli_usage_error("range", "--range: a length of 1 or more");
        if (id == OPT_SEED) {
            if (!cli_parse_u64("range", "--seed", a.value, &b->seed))
                return CLI_EXIT_ERR;
            b->seeded = true;
        }
        if (id == OPT_TYPE && strcmp(a.value, "grafite") != 0 &&
            strcmp(a.value, "memento") != 0)
            return cli_usage_error("range", "--type: grafite or memento");
        if (id == OPT_TYPE)
            b->type = a.value;
        b->strings |= id == OPT_STRINGS;
        b->quiet |= id == OPT_QUIET;
        if (id == OPT_OUT)
            b->out = a.value;
        if (id == CLI_NEXT_POS && b->input != NULL)
            return cli_usage_error("range", "build takes one KEYFILE");
        if (id == CLI_NEXT_POS)
            b->input = a.value;
    }
    if (b->out == NULL)
        return cli_usage_error("range", "build needs -o FILE");
    return -1;
}

/* The keys of `input` (stdin: NULL) as integers, or with `strings` as
 * the order map of their bytes; *n of them in a malloc'ed array. */
static int read_keys(const char *input, bool strings, uint64_t **out,
                     size_t *n) {
    cli_keys k;
    const uint8_t *key;
    size_t len, cap = 1024, line = 0;
    int r;
    uint64_t *v = malloc(cap * sizeof *v);
    if (v == NULL || !cli_keys_open(&k, input, false, true)) {
        free(v);
        return v == NULL ? (cli_error("out of memory"), CLI_EXIT_ERR)
                         : CLI_EXIT_ERR;
    }
    *n = 0;
    while ((r = cli_keys_next(&k, &key, &len)) == 1) {
        bool ok = true;
        line++;
        uint64_t x = key_value(key, len, strings, &ok);
        if (!ok) {
            char where[256];
            cli_keys_where(&k, where, sizeof where);
            cli_error("%s: '%.*s' is not an integer (decimal or 0x hex; "
                      "--strings takes the lines as bytes)",
                      where, (int)(len > 40 ? 40 : len), (const char *)key);
            r = -1;
            break;
        }
        if (*n == cap) {
            uint64_t *w = realloc(v, 2 * cap * sizeof *v);
            if (w == NULL) {
                cli_error("out of memory");
                r = -1;
                break;
            }
            v = w;
            cap *= 2;
        }
        v[(*n)++] = x;
    }
    cli_keys_close(&k);
    if (r < 0) {
        free(v);
        return CLI_EXIT_ERR;
    }
    *out = v;
    return CLI_EXIT_OK;
}

static int cmd_build(int argc, char **argv) {
    build_args b;
    memset(&b, 0, sizeof b);
    int rc = read_build_args(&b, argc, argv);
    if (rc >= 0)
        return rc;
    uint64_t *keys = NULL;
    size_t n = 0;
    if ((rc = read_keys(b.input, b.strings, &keys, &n)) != CLI_EXIT_OK)
        return rc;
    /* a seed nobody else knows, unless one is asked for: the bound holds
     * for queries chosen without it */
    amq_options opt = {.hash = AMQ_HASH_ORDER, .hash_seed = b.seed};
    if (!b.seeded)
        amq_random_bytes(&opt.hash_seed, sizeof opt.hash_seed);
    char spec[64];
    snprintf(spec, sizeof spec, "%s:range=%llu%s", b.type,
             (unsigned long long)b.range, b.strings ? ",keys=bytes" : "");
    amq_filter *f = NULL;
    amq_diag diag;
    amq_status st = amq_filter_build(spec, keys, n, b.fpr, &opt, &f, &diag);
    free(keys);
    if (st != AMQ_OK)
        return cli_status_error("range build", st, &diag);
    bool ok = cli_filter_save(f, b.out);
    if (ok && !b.quiet) {
        char *desc = cli_describe(f), per[64] = "";
        if (strcmp(b.type, "grafite") == 0) /* linear in the length */
            snprintf(per, sizeof per, " (l times %.3g for l keys)",
                     amq_filter_fpr_bound(f));
        fprintf(stderr,
                "amq: wrote %s (%zu bytes): %s, %llu key%s, %.2f bits/key, "
                "fpr bound %.3g for ranges of %llu key%s%s\n",
                b.out, amq_filter_serialized_size(f), desc ? desc : "?",
                (unsigned long long)amq_filter_items(f),
                cli_s(amq_filter_items(f)), amq_filter_bits_per_key(f),
                amq_range_fpr_bound(f, b.range), (unsigned long long)b.range,
                cli_s(b.range), per);
        free(desc);
    }
    amq_filter_free(f);
    return ok ? CLI_EXIT_OK : CLI_EXIT_ERR;
}

/* amq range add|remove [-q] FILE [KEYFILE]: the keys, in the filter's
 * key form, into or out of a range filter that takes them (memento);
 * nothing is written unless every key goes in (or out). */
static int update(int argc, char **argv, bool in) {
    const char *verb = in ? "range add" : "range remove";
    const char *file = NULL, *input = NULL;
    bool quiet = false;
    cli_args a;
    int id;
    cli_args_init(&a, "range", argc, argv);
    while ((id = cli_next(&a, update_options)) != CLI_NEXT_END) {
        if (id == CLI_NEXT_ERR)
            return CLI_EXIT_ERR;
        if (id == CLI_OPT_HELP)
            return cli_help_print(stdout, "range") ? CLI_EXIT_OK : CLI_EXIT_ERR;
        quiet |= id == OPT_QUIET;
        if (id == CLI_NEXT_POS && input != NULL)
            return cli_usage_error("range", "add and remove take FILE "
                                            "[KEYFILE]");
        if (id == CLI_NEXT_POS)
            *(file == NULL ? &file : &input) = a.value;
    }
    if (file == NULL)
        return cli_usage_error("range", "add and remove need a filter FILE");
    amq_filter *f = NULL;
    if (!cli_filter_load(file, &f))
        return CLI_EXIT_ERR;
    uint32_t caps = amq_filter_caps(f);
    if (!(caps & AMQ_CAP_RANGE) || !(caps & AMQ_CAP_REMOVE)) {
        cli_error("%s holds a %s filter, which does not take %s (amq range "
                  "build --type memento makes one that does)",
                  file, amq_filter_info(f)->name, in ? "adds" : "removes");
        amq_filter_free(f);
        return CLI_EXIT_ERR;
    }
    uint64_t *keys = NULL;
    size_t n = 0, i;
    bool strings = amq_range_key_form(f) == AMQ_RANGE_KEYS_BYTES;
    int rc = read_keys(input, strings, &keys, &n);
    amq_status st = AMQ_OK;
    for (i = 0; rc == CLI_EXIT_OK && i < n && st == AMQ_OK; i++)
        st = in ? amq_filter_add_hash(f, keys[i])
                : amq_filter_remove_hash(f, keys[i]);
    free(keys);
    if (rc == CLI_EXIT_OK && st != AMQ_OK) {
        if (st == AMQ_ERR_NOT_FOUND)
            cli_error("%s: key %zu of the input is not in %s (nothing "
                      "written)",
                      verb, i, file);
        else
            cli_status_error(verb, st, NULL);
        rc = CLI_EXIT_ERR;
    }
    if (rc == CLI_EXIT_OK && !cli_filter_save(f, file))
        rc = CLI_EXIT_ERR;
    if (rc == CLI_EXIT_OK && !quiet)
        fprintf(stderr,
                "amq: %s %zu key%s: %llu now, fpr bound %.3g for ranges of "
                "%llu key%s\n",
                in ? "added" : "removed", n, cli_s(n),
                (unsigned long long)amq_filter_items(f),
                amq_range_fpr_bound(f, amq_range_design_length(f)),
                (unsigned long long)amq_range_design_length(f),
                cli_s(amq_range_design_length(f)));
    amq_filter_free(f);
    return rc;
}

static int cmd_add(int argc, char **argv) { return update(argc, argv, true); }
static int cmd_remove(int argc, char **argv) {
    return update(argc, argv, false);
}

/* One query line: "LO HI" or "LO" (--strings: split at a tab). */
static bool parse_range(const uint8_t *line, size_t len, bool strings,
                        uint64_t *lo, uint64_t *hi) {
    const uint8_t *sep = NULL;
    bool ok = true;
    for (size_t i = 0; i < len && sep == NULL; i++)
        if (line[i] == '\t' || (!strings && line[i] == ' '))
            sep = line + i;
    if (sep == NULL) {
        *lo = *hi = key_value(line, len, strings, &ok);
        return ok;
    }
    size_t a = (size_t)(sep - line);
    const uint8_t *h = sep + 1;
    while (!strings && h < line + len && *h == ' ')
        h++;
    *lo = key_value(line, a, strings, &ok);
    if (!ok)
        return false;
    *hi = key_value(h, (size_t)(line + len - h), strings, &ok);
    return ok && *lo <= *hi;
}

static int cmd_query(int argc, char **argv) {
    cli_args a;
    const char *file = NULL, *input = NULL;
    bool count = false;
    int id;
    cli_args_init(&a, "range", argc, argv);
    while ((id = cli_next(&a, query_options)) != CLI_NEXT_END) {
        if (id == CLI_NEXT_ERR)
            return CLI_EXIT_ERR;
        if (id == CLI_OPT_HELP)
            return cli_help_print(stdout, "range") ? CLI_EXIT_OK : CLI_EXIT_ERR;
        count |= id == OPT_COUNT;
        if (id == CLI_NEXT_POS && input != NULL)
            return cli_usage_error("range", "query takes FILE [RANGEFILE]");
        if (id == CLI_NEXT_POS)
            *(file == NULL ? &file : &input) = a.value;
    }
    if (file == NULL)
        return cli_usage_error("range", "query needs a filter FILE");
    cli_filter_file ff;
    if (!cli_filter_open(&ff, file))
        return CLI_EXIT_ERR;
    if (!(amq_filter_caps(ff.filter) & AMQ_CAP_RANGE)) {
        cli_error("%s holds a %s filter, not a range filter (amq range build)",
                  file, amq_filter_info(ff.filter)->name);
        cli_filter_close(&ff);
        return CLI_EXIT_ERR;
    }
    bool strings = amq_range_key_form(ff.filter) == AMQ_RANGE_KEYS_BYTES;
    cli_keys k;
    if (!cli_keys_open(&k, input, false, true)) {
        cli_filter_close(&ff);
        return CLI_EXIT_ERR;
    }
    const uint8_t *line;
    size_t len;
    uint64_t hits = 0;
    int r;
    while ((r = cli_keys_next(&k, &line, &len)) == 1) {
        uint64_t lo, hi;
        bool maybe = false;
        amq_status st = AMQ_ERR_INVALID;
        if (parse_range(line, len, strings, &lo, &hi))
            st = amq_range_query(ff.filter, lo, hi, &maybe);
        if (st != AMQ_OK) {
            char where[256];
            cli_keys_where(&k, where, sizeof where);
            cli_error("%s: expected LO HI with LO <= HI%s", where,
                      strings ? " (a tab between them)"
                              : " (decimal or 0x hex integers)");
            r = -1;
            break;
        }
        hits += maybe;
        if (maybe && !count)
            printf("%.*s\n", (int)len, (const char *)line);
    }
    cli_keys_close(&k);
    cli_filter_close(&ff);
    if (r < 0)
        return CLI_EXIT_ERR;
    if (count)
        printf("%llu\n", (unsigned long long)hits);
    return hits != 0 ? CLI_EXIT_OK : CLI_EXIT_NONE;
}

int cli_cmd_range(int argc, char **argv) {
    static const cli_command subs[] = {{"build", cmd_build},
                                       {"add", cmd_add},
                                       {"remove", cmd_remove},
                                       {"query", cmd_query},
                                       {NULL, NULL}};
    return cli_dispatch("range", subs, argc, argv);
}
