/*
 * shard.c — `amq shard plan|slot|route`: one logical filter over the
 * shards of a Redis Cluster with one false-positive budget (amq/shard.h).
 *
 *   plan   per-shard items and measured absent-query counts in, the
 *          memory-minimal split of the target rate out: a table, or with
 *          --commands the AMQ.RESERVE lines for redis-cli;
 *   slot   the cluster slot of each key (CLUSTER KEYSLOT, computed here);
 *   route  the shard of each key read from a file or stdin.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "verbs.h"

#define SHARD_MAX 1024

enum {
    OPT_TYPE = 1,
    OPT_FPR,
    OPT_KEYS,
    OPT_QUERIES,
    OPT_NAME,
    OPT_SLOTS,
    OPT_COMMANDS,
    OPT_SHARDS,
    OPT_JSON
};

static const cli_opt plan_options[] = {
    {"type", 't', true, OPT_TYPE},
    {"fpr", 'e', true, OPT_FPR},
    {"keys", 'n', true, OPT_KEYS},
    {"queries", 0, true, OPT_QUERIES},
    {"name", 0, true, OPT_NAME},
    {"slots", 0, true, OPT_SLOTS},
    {"commands", 0, false, OPT_COMMANDS},
    {"json", 0, false, OPT_JSON},
    {NULL, 0, false, 0},
};

/* A comma-separated list of non-negative numbers (k/M/G suffixes). */
static int parse_list(const char *opt, const char *s, double *out) {
    int n = 0;
    char buf[64];
    while (*s != 0) {
        size_t len = strcspn(s, ",");
        uint64_t v;
        if (n == SHARD_MAX || len == 0 || len >= sizeof buf) {
            cli_usage_error("shard", "%s: expected N1,N2,... (at most %d)", opt,
                            SHARD_MAX);
            return -1;
        }
        memcpy(buf, s, len);
        buf[len] = 0;
        if (!cli_parse_u64("shard", opt, buf, &v))
            return -1;
        out[n++] = (double)v;
        s += len + (s[len] == ',');
    }
    return n;
}

/* --slots LO-HI,LO-HI,...: one range per shard. */
static int parse_slots(const char *s, uint16_t lo[], uint16_t hi[]) {
    int n = 0;
    while (*s != 0) {
        unsigned a, b;
        int used = 0;
        if (n == SHARD_MAX || sscanf(s, "%u-%u%n", &a, &b, &used) != 2 ||
            a > b || b >= AMQ_SHARD_SLOTS) {
            cli_usage_error("shard", "--slots: expected LO-HI,... with "
                                     "0 <= LO <= HI < 16384");
            return -1;
        }
        lo[n] = (uint16_t)a;
        hi[n++] = (uint16_t)b;
        s += used;
        if (*s == ',')
            s++;
        else if (*s != 0)
            return cli_usage_error("shard", "--slots: bad range list"), -1;
    }
    return n;
}

typedef struct plan_args {
    const char *type, *name;
    double eps;
    double keys[SHARD_MAX], queries[SHARD_MAX];
    uint16_t lo[SHARD_MAX], hi[SHARD_MAX];
    int nkeys, nqueries, nslots;
    bool commands, json;
} plan_args;

/* -1 to go on, else the exit status. */
static int read_plan_args(plan_args *p, int argc, char **argv) {
    cli_args a;
    int id;
    cli_args_init(&a, "shard", argc, argv);
    p->name = "filter";
    while ((id = cli_next(&a, plan_options)) != CLI_NEXT_END) {
        if (id == CLI_NEXT_ERR)
            return CLI_EXIT_ERR;
        if (id == CLI_OPT_HELP)
            return cli_help_print(stdout, "shard") ? CLI_EXIT_OK : CLI_EXIT_ERR;
        if (id == OPT_JSON)
            p->json = true;
        else if (id == OPT_TYPE)
            p->type = a.value;
        else if (id == OPT_NAME)
            p->name = a.value;
        else if (id == OPT_COMMANDS)
            p->commands = true;
        else if (id == OPT_FPR &&
                 !cli_parse_fpr("shard", "--fpr", a.value, &p->eps))
            return CLI_EXIT_ERR;
        else if (id == OPT_KEYS &&
                 (p->nkeys = parse_list("--keys", a.value, p->keys)) < 0)
            return CLI_EXIT_ERR;
        else if (id == OPT_QUERIES &&
                 (p->nqueries = parse_list("--queries", a.value, p->queries)) <
                     0)
            return CLI_EXIT_ERR;
        else if (id == OPT_SLOTS &&
                 (p->nslots = parse_slots(a.value, p->lo, p->hi)) < 0)
            return CLI_EXIT_ERR;
        else if (id == CLI_NEXT_POS)
            return cli_usage_error("shard", "plan takes no file");
    }
    if (p->type == NULL || p->eps == 0 || p->nkeys == 0)
        return cli_usage_error("shard", "plan needs --type, --fpr and "
                                        "--keys");
    if ((p->nqueries != 0 && p->nqueries != p->nkeys) ||
        (p->nslots != 0 && p->nslots != p->nkeys))
        return cli_usage_error("shard", "--keys, --queries and --slots "
                                        "name the same number of shards");
    return -1;
}

/* Shard s's hash tag: in its --slots range, or in the s-th of S equal
 * ranges of the slot space. */
static bool shard_tag(const plan_args *p, int s, char *tag, size_t cap) {
    uint16_t lo =
        p->nslots
            ? p->lo[s]
            : (uint16_t)((uint32_t)s * AMQ_SHARD_SLOTS / (uint32_t)p->nkeys);
    uint16_t hi = p->nslots ? p->hi[s]
                            : (uint16_t)((uint32_t)(s + 1) * AMQ_SHARD_SLOTS /
                                             (uint32_t)p->nkeys -
                                         1);
    return amq_shard_tag(lo, hi, tag, cap) == AMQ_OK;
}

static void print_plan_json(const plan_args *p, const amq_alloc_pick *pick,
                            const amq_shard_plan_summary *sum, double qsum) {
    char tag[24], key[64];
    cli_json j;
    cli_json_init(&j, stdout, true);
    cli_json_open(&j, NULL, '{');
    cli_json_str(&j, "type", p->type);
    cli_json_num(&j, "target_fpr", p->eps);
    cli_json_num(&j, "fpr", sum->fpr);
    cli_json_num(&j, "memory_bits", sum->memory_bits);
    cli_json_num(&j, "uniform_memory_bits", sum->uniform_bits);
    cli_json_open(&j, "shards", '[');
    for (int s = 0; s < p->nkeys; s++) {
        if (!shard_tag(p, s, tag, sizeof tag))
            tag[0] = 0;
        snprintf(key, sizeof key, "%s{%s}", p->name, tag);
        cli_json_open(&j, NULL, '{');
        cli_json_str(&j, "key", key);
        cli_json_num(&j, "items", p->keys[s]);
        cli_json_num(&j, "share", (p->nqueries ? p->queries[s] : 1) / qsum);
        if (pick[s].spec[0])
            cli_json_str(&j, "spec", pick[s].spec);
        else
            cli_json_null(&j, "spec"); /* no filter: always "maybe" */
        cli_json_num(&j, "fpr", pick[s].fpr);
        cli_json_num(&j, "bits_per_key", pick[s].bits_per_key);
        cli_json_close(&j);
    }
    cli_json_close(&j);
    cli_json_close(&j);
}

static void print_plan(const plan_args *p, const amq_alloc_pick *pick,
                       const amq_shard_plan_summary *sum) {
    char tag[24];
    double qsum = 0;
    for (int s = 0; s < p->nkeys; s++)
        qsum += p->nqueries ? p->queries[s] : 1;
    if (p->json && !p->commands) {
        print_plan_json(p, pick, sum, qsum);
        return;
    }
    if (!p->commands)
        printf("%-5s %-24s %12s %8s %-20s %10s %9s\n", "shard", "key", "items",
               "share", "spec", "fpr", "bits/key");
    for (int s = 0; s < p->nkeys; s++) {
        if (!shard_tag(p, s, tag, sizeof tag))
            tag[0] = 0;
        double share = (p->nqueries ? p->queries[s] : 1) / qsum;
        if (p->commands && pick[s].spec[0] != 0)
            printf("AMQ.RESERVE %s{%s} %s CAPACITY %.0f ERROR %.6g\n", p->name,
                   tag, pick[s].spec, fmax(1, p->keys[s]), pick[s].fpr);
        else if (!p->commands) {
            char key[64];
            snprintf(key, sizeof key, "%s{%s}", p->name, tag);
            printf("%-5d %-24s %12.0f %8.4f %-20s %10.6f %9.3f\n", s, key,
                   p->keys[s], share,
                   pick[s].spec[0] ? pick[s].spec : "(none: always maybe)",
                   pick[s].fpr, pick[s].bits_per_key);
        }
    }
    if (!p->commands)
        printf("global fpr %.6f (target %g); memory %.3f MB, uniform split "
               "%.3f MB (%+.1f%%)\n",
               sum->fpr, p->eps, sum->memory_bits / 8e6,
               sum->uniform_bits / 8e6,
               sum->uniform_bits > 0
                   ? 100 * (sum->memory_bits / sum->uniform_bits - 1)
                   : 0.0);
}

static int cmd_plan(int argc, char **argv) {
    static plan_args p;
    amq_alloc_pick *pick;
    amq_shard_plan_summary sum;
    amq_diag diag;
    memset(&p, 0, sizeof p);
    memset(&diag, 0, sizeof diag);
    int rc = read_plan_args(&p, argc, argv);
    if (rc >= 0)
        return rc;
    pick = calloc((size_t)p.nkeys, sizeof *pick);
    if (pick == NULL)
        return cli_status_error("shard plan", AMQ_ERR_NOMEM, NULL);
    amq_status st = amq_shard_plan(p.type, (size_t)p.nkeys, p.keys,
                                   p.nqueries ? p.queries : p.keys, p.eps, NULL,
                                   pick, &sum, &diag);
    if (st == AMQ_OK && p.nqueries == 0) /* equal shares when unmeasured */
        st = amq_shard_plan(p.type, (size_t)p.nkeys, p.keys,
                            (const double[SHARD_MAX]){0}, p.eps, NULL, pick,
                            &sum, &diag);
    if (st != AMQ_OK) {
        free(pick);
        return cli_status_error("shard plan", st, &diag);
    }
    print_plan(&p, pick, &sum);
    free(pick);
    return CLI_EXIT_OK;
}

static int cmd_slot(int argc, char **argv) {
    const char **keys = calloc((size_t)argc, sizeof *keys);
    if (keys == NULL)
        return cli_status_error("shard slot", AMQ_ERR_NOMEM, NULL);
    bool json = false;
    int rc = cli_positionals("shard", argc, argv, 1, (size_t)argc, keys, &json);
    cli_json j;
    cli_json_init(&j, stdout, false);
    for (int i = 0; rc < 0 && i < argc && keys[i] != NULL; i++) {
        unsigned slot = amq_shard_slot(keys[i], strlen(keys[i]));
        if (!json) {
            printf("%s\t%u\n", keys[i], slot);
            continue;
        }
        cli_json_open(&j, NULL, '{');
        cli_json_str(&j, "key", keys[i]);
        cli_json_u64(&j, "slot", slot);
        cli_json_close(&j);
    }
    free(keys);
    return rc < 0 ? CLI_EXIT_OK : rc;
}

static const cli_opt route_options[] = {
    {"shards", 0, true, OPT_SHARDS},
    {"json", 0, false, OPT_JSON},
    {NULL, 0, false, 0},
};

static int cmd_route(int argc, char **argv) {
    cli_args a;
    cli_keys k;
    uint64_t shards = 0;
    const char *path = NULL;
    const uint8_t *key;
    size_t len;
    int id, r;
    bool json = false;
    cli_args_init(&a, "shard", argc, argv);
    while ((id = cli_next(&a, route_options)) != CLI_NEXT_END) {
        json |= id == OPT_JSON;
        if (id == CLI_NEXT_ERR)
            return CLI_EXIT_ERR;
        if (id == CLI_OPT_HELP)
            return cli_help_print(stdout, "shard") ? CLI_EXIT_OK : CLI_EXIT_ERR;
        if (id == OPT_SHARDS &&
            !cli_parse_u64("shard", "--shards", a.value, &shards))
            return CLI_EXIT_ERR;
        if (id == CLI_NEXT_POS && path != NULL)
            return cli_usage_error("shard", "route takes one KEYFILE");
        if (id == CLI_NEXT_POS)
            path = a.value;
    }
    if (shards == 0 || shards > SHARD_MAX)
        return cli_usage_error("shard", "route needs --shards 1..%d",
                               SHARD_MAX);
    if (!cli_keys_open(&k, path, false, false))
        return CLI_EXIT_ERR;
    cli_json j;
    while ((r = cli_keys_next(&k, &key, &len)) == 1) {
        size_t s = amq_shard_of(key, len, (size_t)shards);
        if (!json) {
            printf("%zu\n", s);
            continue;
        }
        cli_json_key_record(&j, key, len, false);
        cli_json_u64(&j, "shard", s);
        cli_json_close(&j);
    }
    cli_keys_close(&k);
    return r < 0 ? CLI_EXIT_ERR : CLI_EXIT_OK;
}

int cli_cmd_shard(int argc, char **argv) {
    static const cli_command subs[] = {{"plan", cmd_plan},
                                       {"slot", cmd_slot},
                                       {"route", cmd_route},
                                       {NULL, NULL}};
    return cli_dispatch("shard", subs, argc, argv);
}
