/*
 * merge.c — `amq merge A B... -o C`: the union (or, with --intersect, the
 * intersection) of filters of one type, shape and hasher.
 *
 * A is loaded as a copy, every further file is opened (mapped, read in
 * place) and merged into it with amq_filter_union / amq_filter_intersect,
 * and the result is saved atomically to C. Filters merge only when they
 * were built alike: same type, same resolved parameters (amq info's
 * "params"), same hash kind, seed and, for keyed files, the same secret
 * key. When they differ the message shows both descriptions, so the user
 * sees which parameter to rebuild with.
 */
#include <stdlib.h>
#include <string.h>

#include "verbs.h"

typedef struct merge_opts {
    const char **files;
    size_t nfiles;
    const char *output;
    bool intersect, quiet;
} merge_opts;

enum { OPT_OUTPUT = 1, OPT_INTERSECT, OPT_QUIET };

static const cli_opt merge_options[] = {
    {"output", 'o', true, OPT_OUTPUT},
    {"intersect", 0, false, OPT_INTERSECT},
    {"quiet", 'q', false, OPT_QUIET},
    {NULL, 0, false, 0},
};

/* -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, merge_opts *o) {
    cli_args a;
    int id;
    cli_args_init(&a, "merge", argc, argv);
    o->files = calloc((size_t)argc, sizeof *o->files);
    if (o->files == NULL) {
        cli_error("out of memory");
        return CLI_EXIT_ERR;
    }
    while ((id = cli_next(&a, merge_options)) != CLI_NEXT_END) {
        switch (id) {
        case CLI_NEXT_ERR: return CLI_EXIT_ERR;
        case CLI_OPT_HELP:
            return cli_help_print(stdout, "merge") ? CLI_EXIT_OK : CLI_EXIT_ERR;
        case OPT_OUTPUT: o->output = a.value; break;
        case OPT_INTERSECT: o->intersect = true; break;
        case OPT_QUIET: o->quiet = true; break;
        default: o->files[o->nfiles++] = a.value; break;
        }
    }
    if (o->nfiles < 2)
        return cli_usage_error("merge", "give at least two filter files");
    if (o->output == NULL)
        return cli_usage_error("merge", "missing -o FILE");
    return -1;
}

static void describe_hasher(const amq_hasher *h, char *buf, size_t cap) {
    if (h->kind == AMQ_HASH_SIPHASH)
        snprintf(buf, cap, "siphash, keyed");
    else
        snprintf(buf, cap, "%s seed %llu", amq_hash_kind_name(h->kind),
                 (unsigned long long)h->seed);
}

/* Why src cannot merge into dst, in the user's terms. */
static int explain_incompatible(const merge_opts *o, const amq_filter *dst,
                                const char *file, const amq_filter *src) {
    char *a = cli_describe(dst), *b = cli_describe(src);
    char ha[64], hb[64];
    describe_hasher(amq_filter_hasher(dst), ha, sizeof ha);
    describe_hasher(amq_filter_hasher(src), hb, sizeof hb);
    cli_error("%s: cannot merge with %s: they must have the same type, "
              "parameters and hash",
              file, o->files[0]);
    cli_error("  %s: %s (%s)", o->files[0], a ? a : "?", ha);
    cli_error("  %s: %s (%s)", file, b ? b : "?", hb);
    if (strcmp(ha, hb) == 0 && a && b && strcmp(a, b) == 0)
        cli_error("  (keyed files merge only when built with the same "
                  "secret key)");
    free(a);
    free(b);
    return CLI_EXIT_ERR;
}

static int refuse_type(const merge_opts *o, const amq_filter *f) {
    uint32_t cap = o->intersect ? AMQ_CAP_INTERSECT : AMQ_CAP_UNION;
    char *types = cli_types_with(cap, 0);
    cli_error("%s: '%s' cannot be %s (types that can: %s)", o->files[0],
              amq_filter_info(f)->name, o->intersect ? "intersected" : "merged",
              types ? types : "?");
    free(types);
    return CLI_EXIT_ERR;
}

static int merge_one(const merge_opts *o, amq_filter *dst, const char *file) {
    cli_filter_file ff;
    if (!cli_filter_open(&ff, file))
        return CLI_EXIT_ERR;
    amq_status st = o->intersect ? amq_filter_intersect(dst, ff.filter)
                                 : amq_filter_union(dst, ff.filter);
    int rc = CLI_EXIT_OK;
    if (st == AMQ_ERR_INCOMPATIBLE)
        rc = explain_incompatible(o, dst, file, ff.filter);
    else if (st != AMQ_OK)
        rc = cli_status_error(file, st, NULL);
    cli_filter_close(&ff);
    return rc;
}

int cli_cmd_merge(int argc, char **argv) {
    merge_opts o;
    memset(&o, 0, sizeof o);
    amq_filter *f = NULL;
    int rc = parse_args(argc, argv, &o);
    if (rc >= 0) {
        free(o.files);
        return rc;
    }
    if (!cli_filter_load(o.files[0], &f))
        rc = CLI_EXIT_ERR;
    if (rc < 0 && (amq_filter_caps(f) &
                   (o.intersect ? AMQ_CAP_INTERSECT : AMQ_CAP_UNION)) == 0)
        rc = refuse_type(&o, f);
    for (size_t i = 1; rc < 0 && i < o.nfiles; i++)
        if (merge_one(&o, f, o.files[i]) != CLI_EXIT_OK)
            rc = CLI_EXIT_ERR;
    if (rc < 0)
        rc = cli_filter_save(f, o.output) ? CLI_EXIT_OK : CLI_EXIT_ERR;
    double none = 0;
    if (rc == CLI_EXIT_OK && !o.quiet)
        fprintf(stderr,
                "amq: wrote %s: %s of %zu filters, %.2f bits/key, "
                "fpr bound %.3g",
                strcmp(o.output, "-") == 0 ? "<stdout>" : o.output,
                o.intersect ? "intersection" : "union", o.nfiles,
                amq_filter_bits_per_key(f), amq_filter_fpr_bound(f));
    if (rc == CLI_EXIT_OK && !o.quiet && amq_filter_is_intersection(f, &none))
        fprintf(stderr,
                " for a key outside the intersection (%.3g for keys in no "
                "input)",
                none);
    if (rc == CLI_EXIT_OK && !o.quiet)
        fputc('\n', stderr);
    if (rc == CLI_EXIT_OK && !o.intersect)
        rc = cli_check_capacity(f, o.output);
    amq_filter_free(f);
    free(o.files);
    return rc;
}
