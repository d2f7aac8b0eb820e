/*
 * clock.c — `amq clock new|tick|merge|stamp|compare|show`: Bloom and
 * vector clocks (amq/clock.h) in files, for scripts that keep one clock a
 * process and pass timestamps around.
 *
 * A clock file is the clock's frame (amq_clock_save_file: shape, hasher,
 * history capacity and the timestamp; not the recorded history). A
 * timestamp is the clock's wire message (amq_clock_encode), what `stamp`
 * writes, what AMQ.CLOCK.GET answers in the Redis module and what
 * BloomClock.encode() gives in Python. `merge` and `compare` take either
 * for the other clock: a file that is not a frame is read as a timestamp
 * of the first clock's shape. Files are rewritten atomically; a refused
 * input leaves them as they were.
 */
#include <stdlib.h>
#include <string.h>

#include "verbs.h"

#define DEFAULT_CELLS 256
#define DEFAULT_HASHES 4

enum {
    OPT_CELLS = 1,
    OPT_HASHES,
    OPT_HISTORY,
    OPT_SEED,
    OPT_VECTOR,
    OPT_DENSE,
    OPT_OUTPUT,
    OPT_JSON
};

static const cli_opt clock_options[] = {
    {"cells", 'm', true, OPT_CELLS},
    {"hashes", 'k', true, OPT_HASHES},
    {"history", 0, true, OPT_HISTORY},
    {"seed", 's', true, OPT_SEED},
    {"vector", 0, true, OPT_VECTOR},
    {"dense", 0, false, OPT_DENSE},
    {"output", 'o', true, OPT_OUTPUT},
    {"json", 0, false, OPT_JSON},
    {NULL, 0, false, 0},
};

typedef struct clock_opts {
    const char *cmd;
    const char **pos;
    size_t npos;
    uint64_t cells, hashes, history, seed, node;
    bool vector, dense, json, shape_given;
    const char *output;
} clock_opts;

/* -1 to go on, else the exit status. Options other than `allowed` (a
 * string of OPT_ ids as characters: "\1\2" allows --cells and --hashes)
 * are refused. */
static int parse(const char *cmd, int argc, char **argv, const char *allowed,
                 clock_opts *o) {
    cli_args a;
    int id;
    memset(o, 0, sizeof *o);
    o->cmd = cmd;
    o->cells = DEFAULT_CELLS;
    o->hashes = DEFAULT_HASHES;
    o->pos = calloc((size_t)argc + 1, sizeof *o->pos);
    if (o->pos == NULL) {
        cli_error("out of memory");
        return CLI_EXIT_ERR;
    }
    cli_args_init(&a, cmd, argc, argv);
    while ((id = cli_next(&a, clock_options)) != CLI_NEXT_END) {
        if (id == CLI_NEXT_ERR)
            return CLI_EXIT_ERR;
        if (id == CLI_OPT_HELP)
            return cli_help_print(stdout, "clock") ? CLI_EXIT_OK : CLI_EXIT_ERR;
        if (id > 0 && strchr(allowed, id) == NULL)
            return cli_usage_error(cmd, "--%s does not apply here",
                                   clock_options[id - 1].name);
        bool ok = true;
        switch (id) {
        case OPT_CELLS:
            ok = cli_parse_u64(cmd, "--cells", a.value, &o->cells);
            o->shape_given = true;
            break;
        case OPT_HASHES:
            ok = cli_parse_u64(cmd, "--hashes", a.value, &o->hashes);
            o->shape_given = true;
            break;
        case OPT_HISTORY:
            ok = cli_parse_u64(cmd, "--history", a.value, &o->history);
            break;
        case OPT_SEED:
            ok = cli_parse_u64(cmd, "--seed", a.value, &o->seed);
            break;
        case OPT_VECTOR:
            ok = cli_parse_u64(cmd, "--vector", a.value, &o->node);
            o->vector = true;
            break;
        case OPT_DENSE: o->dense = true; break;
        case OPT_OUTPUT: o->output = a.value; break;
        case OPT_JSON: o->json = true; break;
        default: o->pos[o->npos++] = a.value; break;
        }
        if (!ok)
            return CLI_EXIT_ERR;
    }
    return -1;
}

static int done(clock_opts *o, int rc) {
    free(o->pos);
    return rc;
}

static bool load_clock(const char *path, amq_clock **out) {
    amq_diag d = {0, ""};
    amq_status st = amq_clock_load_file(path, NULL, out, &d);
    if (st != AMQ_OK) {
        cli_file_error(path, st, &d);
        return false;
    }
    return true;
}

static bool save_clock(const amq_clock *c, const char *path) {
    amq_diag d = {0, ""};
    amq_status st = amq_clock_save_file(c, path, &d);
    if (st != AMQ_OK) {
        cli_file_error(path, st, &d);
        return false;
    }
    return true;
}

/* The other clock of merge/compare: a clock file, or a timestamp of
 * like's shape. NULL after a message. */
static amq_clock *load_other(const char *path, const amq_clock *like) {
    uint8_t *buf;
    size_t len;
    amq_clock *c = NULL;
    if (!cli_read_file(path, &buf, &len))
        return NULL;
    amq_diag d = {0, ""};
    amq_status st = amq_clock_load(buf, len, NULL, &c, &d);
    if (st == AMQ_OK || (st != AMQ_ERR_CORRUPT && st != AMQ_ERR_CHECKSUM &&
                         st != AMQ_ERR_VERSION)) {
        free(buf);
        if (st != AMQ_OK)
            cli_file_error(path, st, &d);
        return c;
    }
    st = amq_clock_clone_bare(like, &c);
    if (st == AMQ_OK)
        st = amq_clock_decode(c, buf, len);
    free(buf);
    if (st == AMQ_OK)
        return c;
    amq_clock_free(c);
    if (st == AMQ_ERR_INCOMPATIBLE)
        cli_error("%s: a timestamp of another clock (another kind, cells, "
                  "hashes, seed or membership)",
                  path);
    else if (st == AMQ_ERR_CORRUPT)
        cli_error("%s: neither a clock file nor a clock's timestamp", path);
    else
        cli_status_error(path, st, NULL);
    return NULL;
}

static int cmd_new(int argc, char **argv) {
    clock_opts o;
    int rc = parse("clock", argc, argv, "\1\2\3\4\5\6", &o);
    if (rc >= 0)
        return done(&o, rc);
    if (o.npos != 1)
        return done(&o, cli_usage_error("clock", "new: give one FILE"));
    if (o.vector && (o.shape_given || o.history || o.seed))
        return done(&o,
                    cli_usage_error("clock", "--cells, --hashes, --history and "
                                             "--seed are for Bloom clocks"));
    if (o.dense && !o.vector)
        return done(&o,
                    cli_usage_error("clock", "--dense is for vector clocks"));
    amq_clock *c = NULL;
    amq_status st;
    if (o.vector) {
        st = amq_clock_new_vector(o.dense ? AMQ_CLOCK_VECTOR_DENSE
                                          : AMQ_CLOCK_VECTOR_SPARSE,
                                  o.node, NULL, &c);
    } else {
        if (o.cells == 0 || o.cells > AMQ_CLOCK_MAX_M)
            return done(&o, cli_usage_error("clock", "--cells must be in 1..%u",
                                            AMQ_CLOCK_MAX_M));
        if (o.hashes == 0 || o.hashes > AMQ_CLOCK_MAX_K || o.hashes > o.cells)
            return done(&o, cli_usage_error("clock",
                                            "--hashes must be in 1..min(cells, "
                                            "%u)",
                                            AMQ_CLOCK_MAX_K));
        if (o.history > AMQ_CLOCK_MAX_HISTORY)
            return done(&o,
                        cli_usage_error("clock", "--history must be in 0..%u",
                                        AMQ_CLOCK_MAX_HISTORY));
        amq_options opt = {.hash = AMQ_HASH_XXH3, .hash_seed = o.seed};
        st = amq_clock_new_bloom((uint32_t)o.cells, (uint32_t)o.hashes,
                                 (uint32_t)o.history, &opt, &c);
    }
    if (st != AMQ_OK)
        return done(&o, cli_status_error("clock new", st, NULL));
    rc = save_clock(c, o.pos[0]) ? CLI_EXIT_OK : CLI_EXIT_ERR;
    amq_clock_free(c);
    return done(&o, rc);
}

static int cmd_tick(int argc, char **argv) {
    clock_opts o;
    int rc = parse("clock", argc, argv, "", &o);
    if (rc >= 0)
        return done(&o, rc);
    if (o.npos < 1)
        return done(&o, cli_usage_error("clock", "tick: give FILE [EVENT...]"));
    amq_clock *c = NULL;
    if (!load_clock(o.pos[0], &c))
        return done(&o, CLI_EXIT_ERR);
    bool bloom = amq_clock_kind_of(c) == AMQ_CLOCK_BLOOM;
    if (bloom && o.npos < 2) {
        amq_clock_free(c);
        return done(&o,
                    cli_usage_error("clock", "a Bloom clock's tick names its "
                                             "event: give FILE EVENT..."));
    }
    amq_status st = AMQ_OK;
    size_t n = o.npos > 1 ? o.npos - 1 : 1;
    for (size_t i = 0; st == AMQ_OK && i < n; i++) {
        const char *e = o.npos > 1 ? o.pos[1 + i] : "";
        st = amq_clock_tick(c, e, strlen(e));
    }
    rc = st != AMQ_OK              ? cli_status_error(o.pos[0], st, NULL)
         : save_clock(c, o.pos[0]) ? CLI_EXIT_OK
                                   : CLI_EXIT_ERR;
    amq_clock_free(c);
    return done(&o, rc);
}

static int cmd_merge(int argc, char **argv) {
    clock_opts o;
    int rc = parse("clock", argc, argv, "", &o);
    if (rc >= 0)
        return done(&o, rc);
    if (o.npos < 2)
        return done(&o,
                    cli_usage_error("clock", "give FILE and at least one clock "
                                             "file or timestamp"));
    amq_clock *c = NULL, *acc = NULL;
    if (!load_clock(o.pos[0], &c))
        return done(&o, CLI_EXIT_ERR);
    rc = CLI_EXIT_OK;
    /* everything merged aside first: one refused input changes nothing */
    amq_status st = amq_clock_clone_bare(c, &acc);
    for (size_t i = 1; st == AMQ_OK && rc == CLI_EXIT_OK && i < o.npos; i++) {
        amq_clock *other = load_other(o.pos[i], c);
        if (other == NULL) {
            rc = CLI_EXIT_ERR;
            break;
        }
        st = amq_clock_merge(acc, other);
        if (st == AMQ_ERR_INCOMPATIBLE) {
            cli_error("%s: another clock than %s (another kind, cells, "
                      "hashes, seed or membership)",
                      o.pos[i], o.pos[0]);
            rc = CLI_EXIT_ERR;
            st = AMQ_OK;
        }
        amq_clock_free(other);
    }
    if (rc == CLI_EXIT_OK && st == AMQ_OK)
        st = amq_clock_merge(c, acc);
    if (rc == CLI_EXIT_OK)
        rc = st != AMQ_OK              ? cli_status_error(o.pos[0], st, NULL)
             : save_clock(c, o.pos[0]) ? CLI_EXIT_OK
                                       : CLI_EXIT_ERR;
    amq_clock_free(acc);
    amq_clock_free(c);
    return done(&o, rc);
}

static int cmd_stamp(int argc, char **argv) {
    clock_opts o;
    int rc = parse("clock", argc, argv, "\7", &o);
    if (rc >= 0)
        return done(&o, rc);
    if (o.npos != 1)
        return done(&o, cli_usage_error("clock", "stamp: give one FILE"));
    amq_clock *c = NULL;
    if (!load_clock(o.pos[0], &c))
        return done(&o, CLI_EXIT_ERR);
    size_t n = amq_clock_encoded_size(c), len;
    uint8_t *buf = malloc(n);
    amq_status st = buf ? amq_clock_encode(c, buf, n, &len) : AMQ_ERR_NOMEM;
    amq_clock_free(c);
    if (st != AMQ_OK) {
        free(buf);
        return done(&o, cli_status_error("clock stamp", st, NULL));
    }
    FILE *out = stdout;
    const char *name = "<stdout>";
    if (o.output != NULL && strcmp(o.output, "-") != 0) {
        name = o.output;
        out = fopen(o.output, "wb");
        if (out == NULL) {
            free(buf);
            cli_error("cannot write %s", o.output);
            return done(&o, CLI_EXIT_ERR);
        }
    }
    rc = fwrite(buf, 1, len, out) == len ? CLI_EXIT_OK : CLI_EXIT_ERR;
    if (out != stdout && fclose(out) != 0)
        rc = CLI_EXIT_ERR;
    if (rc != CLI_EXIT_OK)
        cli_error("%s: write error", name);
    free(buf);
    return done(&o, rc);
}

static const char *kind_name(amq_clock_kind k) {
    return k == AMQ_CLOCK_BLOOM          ? "bloom"
           : k == AMQ_CLOCK_VECTOR_DENSE ? "vector-dense"
                                         : "vector-sparse";
}

static int cmd_compare(int argc, char **argv) {
    clock_opts o;
    int rc = parse("clock", argc, argv, "\10", &o);
    if (rc >= 0)
        return done(&o, rc);
    if (o.npos != 2)
        return done(&o,
                    cli_usage_error("clock", "give A (a clock file) and B (a "
                                             "clock file or a timestamp)"));
    amq_clock *a = NULL, *b = NULL;
    if (!load_clock(o.pos[0], &a))
        return done(&o, CLI_EXIT_ERR);
    b = load_other(o.pos[1], a);
    if (b == NULL) {
        amq_clock_free(a);
        return done(&o, CLI_EXIT_ERR);
    }
    amq_clock_verdict v;
    amq_status st = amq_clock_compare(a, b, &v);
    bool bloom = amq_clock_kind_of(a) == AMQ_CLOCK_BLOOM;
    amq_clock_free(a);
    amq_clock_free(b);
    if (st == AMQ_ERR_INCOMPATIBLE) {
        cli_error("%s and %s are different clocks (kind, cells, hashes, seed "
                  "or membership): they do not compare",
                  o.pos[0], o.pos[1]);
        return done(&o, CLI_EXIT_ERR);
    }
    if (st != AMQ_OK)
        return done(&o, cli_status_error("clock compare", st, NULL));
    bool ordered = v.order == AMQ_ORDER_BEFORE || v.order == AMQ_ORDER_AFTER;
    if (o.json) {
        cli_json j;
        cli_json_init(&j, stdout, false);
        cli_json_open(&j, NULL, '{');
        cli_json_str(&j, "order", amq_order_name(v.order));
        cli_json_bool(&j, "certain", !bloom || !ordered);
        cli_json_num(&j, "fp_paper", v.fp_paper);
        cli_json_num(&j, "fp_exact", v.fp_exact);
        cli_json_num(&j, "sum_low", v.sum_low);
        cli_json_num(&j, "sum_high", v.sum_high);
        cli_json_close(&j);
    } else if (bloom && ordered) {
        printf("%s %s %s (may be false: claimed probability %.3g, the "
               "paper's estimate %.3g)\n",
               o.pos[0], amq_order_name(v.order), o.pos[1], v.fp_exact,
               v.fp_paper);
    } else {
        printf("%s %s %s (certain)\n", o.pos[0], amq_order_name(v.order),
               o.pos[1]);
    }
    return done(&o, CLI_EXIT_OK);
}

static int cmd_show(int argc, char **argv) {
    clock_opts o;
    int rc = parse("clock", argc, argv, "\10", &o);
    if (rc >= 0)
        return done(&o, rc);
    if (o.npos != 1)
        return done(&o, cli_usage_error("clock", "show: give one FILE"));
    amq_clock *c = NULL;
    if (!load_clock(o.pos[0], &c))
        return done(&o, CLI_EXIT_ERR);
    amq_clock_kind k = amq_clock_kind_of(c);
    size_t size = amq_clock_size(c), stamp = amq_clock_encoded_size(c);
    if (o.json) {
        cli_json j;
        cli_json_init(&j, stdout, false);
        cli_json_open(&j, NULL, '{');
        cli_json_str(&j, "kind", kind_name(k));
        cli_json_u64(&j, k == AMQ_CLOCK_BLOOM ? "cells" : "entries", size);
        if (k == AMQ_CLOCK_BLOOM) {
            cli_json_u64(&j, "hashes", amq_clock_k(c));
            cli_json_u64(&j, "cell_bits", amq_clock_cell_bits(c));
            cli_json_u64(&j, "offset", amq_clock_offset(c));
        }
        cli_json_num(&j, "sum", amq_clock_sum(c));
        cli_json_u64(&j, "timestamp_bytes", stamp);
        cli_json_close(&j);
    } else if (k == AMQ_CLOCK_BLOOM) {
        printf("%-16s bloom clock, %zu cells, %u hashes an event\n",
               "kind:", size, amq_clock_k(c));
        printf("%-16s %u bits a cell, offset %llu, sum %.0f\n",
               "cells:", amq_clock_cell_bits(c),
               (unsigned long long)amq_clock_offset(c), amq_clock_sum(c));
        printf("%-16s %zu bytes\n", "timestamp:", stamp);
    } else {
        printf("%-16s %s clock, %zu entries\n", "kind:", kind_name(k), size);
        for (size_t i = 0; i < size && i < 64; i++) {
            uint64_t node, ctr;
            if (amq_clock_entry(c, i, &node, &ctr) == AMQ_OK)
                printf("%-16s node %llu: %llu\n", i == 0 ? "entries:" : "",
                       (unsigned long long)node, (unsigned long long)ctr);
        }
        if (size > 64)
            printf("%-16s ... %zu more\n", "", size - 64);
        printf("%-16s %zu bytes\n", "timestamp:", stamp);
    }
    amq_clock_free(c);
    return done(&o, CLI_EXIT_OK);
}

int cli_cmd_clock(int argc, char **argv) {
    static const cli_command subs[] = {
        {"new", cmd_new},     {"tick", cmd_tick},       {"merge", cmd_merge},
        {"stamp", cmd_stamp}, {"compare", cmd_compare}, {"show", cmd_show},
        {NULL, NULL}};
    return cli_dispatch("clock", subs, argc, argv);
}
