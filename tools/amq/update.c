/*
 * update.c — `amq add`, `amq remove` and `amq adapt`: change an existing
 * filter file.
 *
 * The file is loaded as a modifiable copy, every key is applied in input
 * order, and only when all of them succeeded is the new frame written —
 * with amq_filter_save_file, so FILE is replaced by rename and a crash or
 * an error at any point leaves the old file as it was. A key that fails
 * (the filter is full, a key to remove is not there) stops the run and
 * nothing is written; the message names the key, its line and why.
 *
 * Static types (xor, fuse, ribbon) are built once from all their keys and
 * cannot change; the command refuses them and says how to rebuild. Types
 * without deletion refuse `remove` and name the types that have it.
 *
 * `adapt` reports each key as a false positive to an adaptive filter
 * (aqf): a key the store behind the filter did not have. The filter then
 * answers "no" for it; a key that is a member is refused, since reporting
 * it would be a mistake the caller should hear about.
 *
 * `add --new` is test-and-add for a stream (what BF.ADD's 0/1 answers):
 * each key the filter does not already report is added and printed, in
 * input order, so a key repeated within one run is printed once (and a
 * new key may, at the filter's false-positive rate, look old).
 */
#include <stdlib.h>
#include <string.h>

#include "verbs.h"

typedef enum update_op { OP_ADD, OP_REMOVE, OP_ADAPT } update_op;

typedef struct update_opts {
    update_op op;
    const char *command, *file, *output; /* file: src.file              */
    cli_key_source src;
    bool quiet, missing_ok, print_new, json;
} update_opts;

typedef struct update_result {
    uint64_t applied, missing, old; /* old: --new keys already reported,
                                       adapt: keys already answered "no" */
} update_result;

enum {
    OPT_OUTPUT = 1,
    OPT_QUIET,
    OPT_PROGRESS,
    OPT_MISSING_OK,
    OPT_NEW,
    OPT_JSON
};

static const cli_opt update_options[] = {
    CLI_KEY_SOURCE_OPTIONS,
    {"output", 'o', true, OPT_OUTPUT},
    {"quiet", 'q', false, OPT_QUIET},
    {"progress", 0, false, OPT_PROGRESS},
    {"missing-ok", 0, false, OPT_MISSING_OK},
    {"new", 0, false, OPT_NEW},
    {"json", 0, false, OPT_JSON},
    {NULL, 0, false, 0},
};

/* ---- arguments ------------------------------------------------------------ */

static bool take_option(update_opts *o, int id, const char *v) {
    switch (id) {
    case OPT_OUTPUT: o->output = v; return true;
    case OPT_QUIET:
        o->quiet = true;
        cli_progress_set_mode(CLI_PROGRESS_OFF);
        return true;
    case OPT_PROGRESS: cli_progress_set_mode(CLI_PROGRESS_ON); return true;
    case OPT_MISSING_OK:
        if (o->op == OP_REMOVE) {
            o->missing_ok = true;
            return true;
        }
        cli_usage_error(o->command, "--missing-ok is for amq remove");
        return false;
    case OPT_NEW:
    case OPT_JSON:
        if (o->op == OP_ADD) {
            o->print_new |= id == OPT_NEW;
            o->json |= id == OPT_JSON;
            return true;
        }
        cli_usage_error(o->command, "%s is for amq add",
                        id == OPT_NEW ? "--new" : "--json");
        return false;
    default: return false;
    }
}

static int check_args(update_opts *o) {
    int rc = cli_key_source_check(&o->src);
    o->file = o->src.file;
    if (rc < 0 && o->json && !o->print_new)
        return cli_usage_error(o->command, "--json prints the new keys of "
                                           "--new: give both");
    if (rc < 0 && o->output == NULL && strcmp(o->file, "-") == 0)
        return cli_usage_error(o->command, "FILE '-' needs -o OUT");
    return rc;
}

/* -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, update_opts *o) {
    cli_args a;
    int id, r;
    cli_args_init(&a, o->command, argc, argv);
    while ((id = cli_next(&a, update_options)) != CLI_NEXT_END) {
        if (id == CLI_NEXT_ERR)
            return CLI_EXIT_ERR;
        if (id == CLI_OPT_HELP)
            return cli_help_print(stdout, o->command) ? CLI_EXIT_OK
                                                      : CLI_EXIT_ERR;
        if ((r = cli_key_source_take(&o->src, id, a.value)) < 0 ||
            (r == 0 && !take_option(o, id, a.value)))
            return CLI_EXIT_ERR;
    }
    return check_args(o);
}

/* ---- applying keys ---------------------------------------------------------- */

/* "FILE: 'name' cannot ... (types that can: ...; tail)": false. */
static bool refuse(const update_opts *o, const char *name, uint32_t cap,
                   const char *cannot, const char *tail) {
    char *types = cli_types_with(cap, 0);
    cli_error("%s: '%s' %s: %s%s)", o->file, name, cannot, types ? types : "?",
              tail);
    free(types);
    return false;
}

/* Refuse a filter the operation cannot change, saying what would work. */
static bool check_filter(const update_opts *o, const amq_filter *f) {
    uint32_t caps = amq_filter_caps(f);
    const char *name = amq_filter_info(f)->name;
    if (amq_filter_is_intersection(f, NULL)) {
        cli_error("%s: an intersection of filters cannot %s keys (its "
                  "certified bound holds for the inputs it was made from); "
                  "%s the inputs and intersect them again",
                  o->file, o->op == OP_ADD ? "take more" : "drop",
                  o->op == OP_ADD ? "add the keys to" : "remove them from");
        return false;
    }
    if (caps & AMQ_CAP_STATIC) {
        cli_error("%s: '%s' is static: it is built once from all its keys "
                  "and cannot %s keys; rebuild it with 'amq build --type %s' "
                  "from the complete key set",
                  o->file, name, o->op == OP_ADD ? "take more" : "drop", name);
        return false;
    }
    if (o->op == OP_ADAPT && (caps & AMQ_CAP_ADAPT) == 0)
        return refuse(o, name, AMQ_CAP_ADAPT,
                      "does not adapt to false positives (types that do",
                      "; build one with 'amq build --type aqf'");
    if (o->op == OP_REMOVE && (caps & AMQ_CAP_REMOVE) == 0)
        return refuse(o, name, AMQ_CAP_REMOVE,
                      "cannot remove keys (types that can",
                      "; also spectral:mode=ms");
    return true;
}

static int key_failed(const update_opts *o, const cli_keys *k,
                      const amq_filter *f, amq_status st) {
    char where[512];
    cli_keys_where(k, where, sizeof where);
    if (o->op == OP_ADAPT && st == AMQ_ERR_INVALID)
        cli_error("%s: a member of %s, not a false positive (nothing "
                  "written)",
                  where, o->file);
    else if (st == AMQ_ERR_NOT_FOUND)
        cli_error("%s: not in %s (nothing written; --missing-ok skips such "
                  "keys)",
                  where, o->file);
    else
        cli_error("%s: %s with %llu keys in it; %s unchanged", where,
                  amq_strerror(st), (unsigned long long)amq_filter_items(f),
                  o->output ? o->output : o->file);
    return CLI_EXIT_ERR;
}

/* A key --new found new: its line, or a JSON record. */
static void print_new_key(const update_opts *o, const uint8_t *key,
                          size_t len) {
    bool binary = cli_key_source_binary(&o->src);
    if (o->json) {
        cli_json j;
        cli_json_key_record(&j, key, len, binary);
        cli_json_bool(&j, "new", true);
        cli_json_close(&j);
        return;
    }
    cli_print_key(stdout, key, len, binary);
    putchar('\n');
}

static int apply_keys(const update_opts *o, amq_filter **fp, cli_keys *k,
                      update_result *r) {
    amq_filter *f = *fp;
    cli_progress p;
    const uint8_t *key;
    size_t len;
    int rc;
    cli_progress_init(&p,
                      o->op == OP_ADD      ? "adding"
                      : o->op == OP_REMOVE ? "removing"
                                           : "reporting",
                      0);
    while ((rc = cli_keys_next(k, &key, &len)) == 1) {
        if (o->print_new && amq_filter_contains(f, key, len)) {
            r->old++;
            continue;
        }
        bool fixed = true;
        amq_status st = o->op == OP_ADD ? amq_filter_add(f, key, len)
                        : o->op == OP_REMOVE
                            ? amq_filter_remove(f, key, len)
                            : amq_filter_report_fp(f, key, len, &fixed);
        if (st == AMQ_ERR_FULL && o->op == OP_ADD &&
            cli_grow_full(fp, o->file, o->quiet, key, len, &st))
            f = *fp;
        if (st == AMQ_OK && !fixed) {
            r->old++;
            continue;
        }
        if (st == AMQ_ERR_NOT_FOUND && o->missing_ok) {
            r->missing++;
            continue;
        }
        if (st != AMQ_OK) {
            cli_progress_done(&p);
            rc = key_failed(o, k, f, st);
            if (st == AMQ_ERR_FULL && !cli_explain_full(f, key, len))
                cli_error("hint: %s was sized for %llu keys; rebuild it "
                          "larger (amq build -n N) from all its keys",
                          o->file, (unsigned long long)amq_filter_capacity(f));
            return rc;
        }
        r->applied++;
        if (o->print_new)
            print_new_key(o, key, len);
        cli_progress_tick(&p, k->count);
    }
    cli_progress_done(&p);
    return rc == 0 ? CLI_EXIT_OK : CLI_EXIT_ERR;
}

static void print_summary(const update_opts *o, const amq_filter *f,
                          const update_result *r) {
    const char *out = o->output ? o->output : o->file;
    amq_adapt_stats as;
    if (o->op == OP_ADAPT && amq_filter_adapt_stats(f, &as) == AMQ_OK) {
        fprintf(stderr,
                "amq: fixed %llu false positive%s in %s (%llu already "
                "answered no); %llu fixed in all, %llu extension records "
                "(%zu bytes), reverse map %zu bytes\n",
                (unsigned long long)r->applied, cli_s(r->applied),
                strcmp(out, "-") == 0 ? "<stdout>" : out,
                (unsigned long long)r->old, (unsigned long long)as.reports,
                (unsigned long long)as.records, as.extension_bytes,
                as.map_bytes);
        return;
    }
    fprintf(stderr,
            "amq: %s %llu key%s %s %s: %llu items, %.2f bits/key, "
            "fpr bound %.3g\n",
            o->op == OP_ADD ? "added" : "removed",
            (unsigned long long)r->applied, cli_s(r->applied),
            o->op == OP_ADD ? "to" : "from",
            strcmp(out, "-") == 0 ? "<stdout>" : out,
            (unsigned long long)amq_filter_items(f), amq_filter_bits_per_key(f),
            amq_filter_fpr_bound(f));
    if (r->old > 0)
        fprintf(stderr,
                "amq: %llu key%s already in the filter (not added "
                "again)\n",
                (unsigned long long)r->old, r->old == 1 ? " was" : "s were");
    if (r->missing > 0)
        fprintf(stderr, "amq: %llu key%s not in the filter (skipped)\n",
                (unsigned long long)r->missing,
                r->missing == 1 ? " was" : "s were");
}

static int update(int argc, char **argv, update_op op, const char *command) {
    update_opts o;
    memset(&o, 0, sizeof o);
    o.op = op;
    o.command = o.src.command = command;
    amq_filter *f = NULL;
    int rc = parse_args(argc, argv, &o);
    if (rc < 0)
        rc = cli_filter_load(o.file, &f) && check_filter(&o, f) ? -1
                                                                : CLI_EXIT_ERR;
    cli_keys k;
    if (rc < 0 && !cli_key_source_open(&o.src, &k))
        rc = CLI_EXIT_ERR;
    if (rc < 0) {
        update_result r = {0, 0, 0};
        rc = apply_keys(&o, &f, &k, &r);
        cli_keys_close(&k);
        if (rc == CLI_EXIT_OK)
            rc = cli_filter_save(f, o.output ? o.output : o.file)
                     ? CLI_EXIT_OK
                     : CLI_EXIT_ERR;
        if (rc == CLI_EXIT_OK && !o.quiet) {
            print_summary(&o, f, &r);
            cli_note_forgets(f);
        }
        if (rc == CLI_EXIT_OK && op == OP_ADD)
            rc = cli_check_capacity(f, o.output ? o.output : o.file);
        if (rc == CLI_EXIT_OK && o.print_new && r.applied == 0)
            rc = CLI_EXIT_NONE;
    }
    amq_filter_free(f);
    cli_key_source_free(&o.src);
    return rc;
}

int cli_cmd_add(int argc, char **argv) {
    return update(argc, argv, OP_ADD, "add");
}

int cli_cmd_remove(int argc, char **argv) {
    return update(argc, argv, OP_REMOVE, "remove");
}

int cli_cmd_adapt(int argc, char **argv) {
    return update(argc, argv, OP_ADAPT, "adapt");
}
