/*
 * query.c — `amq query FILE [KEYFILE | --key K...]`: print the keys that
 * may be members (or, with --mark, every key with 1 or 0).
 *
 * The filter file is mapped and viewed in place (zero copy). Keys are read
 * in chunks of CHUNK: each chunk's key bytes are kept in an arena so they
 * can be printed, their hashes go to amq_filter_contains_batch (which
 * overlaps the memory latency of the lookups), and the answers are printed
 * in input order before the next chunk is read.
 */
#include <stdlib.h>
#include <string.h>

#include "verbs.h"

#define CHUNK 4096

typedef struct query_opts {
    cli_key_source src; /* FILE, KEYFILE or --key, --binary, --skip-empty */
    bool count_only, invert, quiet, mark, json;
} query_opts;

typedef struct query_chunk {
    uint64_t hashes[CHUNK];
    uint8_t hit[CHUNK];
    size_t off[CHUNK + 1]; /* key i is bytes[off[i] .. off[i+1])           */
    size_t n;
    uint8_t *bytes;
    size_t cap;
} query_chunk;

enum { OPT_COUNT = 1, OPT_INVERT, OPT_QUIET, OPT_MARK, OPT_JSON };

static const cli_opt query_options[] = {
    CLI_KEY_SOURCE_OPTIONS,
    {"count", 'c', false, OPT_COUNT},
    {"invert", 'v', false, OPT_INVERT},
    {"quiet", 'q', false, OPT_QUIET},
    {"mark", 'm', false, OPT_MARK},
    {"json", 0, false, OPT_JSON},
    {NULL, 0, false, 0},
};

static void take_flag(query_opts *o, int id) {
    switch (id) {
    case OPT_COUNT: o->count_only = true; break;
    case OPT_INVERT: o->invert = true; break;
    case OPT_QUIET: o->quiet = true; break;
    case OPT_MARK: o->mark = true; break;
    case OPT_JSON: o->json = true; break;
    default: break;
    }
}

/* -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, query_opts *o) {
    cli_args a;
    int id, r;
    cli_args_init(&a, "query", argc, argv);
    while ((id = cli_next(&a, query_options)) != CLI_NEXT_END) {
        if (id == CLI_NEXT_ERR)
            return CLI_EXIT_ERR;
        if (id == CLI_OPT_HELP)
            return cli_help_print(stdout, "query") ? CLI_EXIT_OK : CLI_EXIT_ERR;
        if ((r = cli_key_source_take(&o->src, id, a.value)) < 0)
            return CLI_EXIT_ERR;
        if (r == 0)
            take_flag(o, id);
    }
    if (o->mark && (o->count_only || o->invert))
        return cli_usage_error("query", "--mark prints every key: it does "
                                        "not combine with --count or --invert");
    return cli_key_source_check(&o->src);
}

static bool chunk_push(query_chunk *q, const amq_filter *f, const uint8_t *key,
                       size_t len) {
    size_t used = q->off[q->n];
    if (len > q->cap - used) {
        size_t ncap = q->cap;
        while (len > ncap - used && ncap <= SIZE_MAX / 2)
            ncap *= 2;
        uint8_t *nb = len > ncap - used ? NULL : realloc(q->bytes, ncap);
        if (nb == NULL) {
            cli_error("out of memory for a key of %zu bytes", len);
            return false;
        }
        q->bytes = nb;
        q->cap = ncap;
    }
    if (len > 0)
        memcpy(q->bytes + used, key, len);
    q->hashes[q->n] = amq_filter_hash(f, key, len);
    q->off[++q->n] = used + len;
    return true;
}

/* A line: the key (with --mark after 1 or 0), or a JSON record. */
static void print_key(const query_opts *o, const query_chunk *q, size_t i) {
    const uint8_t *key = q->bytes + q->off[i];
    size_t len = q->off[i + 1] - q->off[i];
    bool binary = cli_key_source_binary(&o->src);
    if (o->json) {
        cli_json j;
        cli_json_key_record(&j, key, len, binary);
        cli_json_bool(&j, "member", q->hit[i] != 0);
        cli_json_close(&j);
        return;
    }
    if (o->mark)
        fputs(q->hit[i] ? "1\t" : "0\t", stdout);
    cli_print_key(stdout, key, len, binary);
    putchar('\n');
}

/* Query the chunk, print its selected keys, and empty it. */
static uint64_t chunk_flush(const query_opts *o, query_chunk *q,
                            const amq_filter *f) {
    uint64_t selected = 0;
    amq_filter_contains_batch(f, q->hashes, q->n, q->hit);
    for (size_t i = 0; i < q->n; i++) {
        bool chosen = (q->hit[i] != 0) != o->invert;
        selected += chosen;
        if ((chosen || o->mark) && !o->quiet && !o->count_only)
            print_key(o, q, i);
    }
    q->n = 0;
    return selected;
}

/* Selected keys, or -1 after an error. */
static int64_t run_queries(const query_opts *o, const amq_filter *f,
                           cli_keys *k, query_chunk *q) {
    const uint8_t *key;
    size_t len;
    int r;
    uint64_t selected = 0;
    while ((r = cli_keys_next(k, &key, &len)) == 1) {
        if (!chunk_push(q, f, key, len))
            return -1;
        if (q->n == CHUNK)
            selected += chunk_flush(o, q, f);
    }
    if (q->n > 0)
        selected += chunk_flush(o, q, f);
    return r == 0 ? (int64_t)selected : -1;
}

static int query_file(const query_opts *o, const amq_filter *f) {
    cli_keys k;
    if (!cli_key_source_open(&o->src, &k))
        return CLI_EXIT_ERR;
    query_chunk *q = calloc(1, sizeof *q);
    int64_t selected = -1;
    if (q != NULL) {
        q->cap = 1 << 16;
        q->bytes = malloc(q->cap);
    }
    if (q == NULL || q->bytes == NULL)
        cli_error("out of memory");
    else
        selected = run_queries(o, f, &k, q);
    cli_keys_close(&k);
    if (q != NULL)
        free(q->bytes);
    free(q);
    if (selected >= 0 && o->count_only && !o->quiet && o->json)
        printf("{\"count\":%lld}\n", (long long)selected);
    else if (selected >= 0 && o->count_only && !o->quiet)
        printf("%lld\n", (long long)selected);
    if (selected < 0)
        return CLI_EXIT_ERR;
    return selected > 0 ? CLI_EXIT_OK : CLI_EXIT_NONE;
}

int cli_cmd_query(int argc, char **argv) {
    query_opts o;
    memset(&o, 0, sizeof o);
    o.src.command = "query";
    int rc = parse_args(argc, argv, &o);
    cli_filter_file ff;
    if (rc < 0)
        rc = cli_filter_open(&ff, o.src.file) ? -1 : CLI_EXIT_ERR;
    if (rc < 0) {
        rc = query_file(&o, ff.filter);
        cli_filter_close(&ff);
    }
    cli_key_source_free(&o.src);
    return rc;
}
