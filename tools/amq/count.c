/*
 * count.c — `amq count FILE [KEYFILE | --key K...] [--top N]`: how many
 * times each key was added, for the types that count (cms, topk, cqf,
 * qf, cuckoo, vacuum, counting, dleft, spectral: AMQ_CAP_COUNT).
 *
 * Default output: "COUNT<TAB>KEY" for every key in input order (the count
 * first, so keys may hold tabs). Each type's estimate keeps its own
 * guarantee (amq/sketch.h, amq/filter.h): Count-Min and the fingerprint
 * filters never undercount; HeavyKeeper (topk) never overcounts.
 *
 * --top N: the N distinct keys of the input with the largest counts,
 * largest first (ties: in input order). For topk, only keys in its
 * heavy-hitter list are shown — that is what TOPK.LIST answers — so
 * `amq count --top 0 topk.amq keys` lists the top items the input names.
 * Distinct keys are found by sorting their 64-bit hashes, so two keys
 * whose hashes collide (about n^2 / 2^65) count as one.
 */
#include <stdlib.h>
#include <string.h>

#include "verbs.h"

typedef struct count_opts {
    cli_key_source src;
    uint64_t top;
    bool has_top, json;
} count_opts;

/* One distinct key for --top: its bytes live in the arena. */
typedef struct count_item {
    uint64_t hash, count, order;
    size_t off, len;
} count_item;

typedef struct count_set {
    count_item *items;
    size_t n, cap;
    uint8_t *arena;
    size_t used, arena_cap;
} count_set;

enum { OPT_TOP = 1, OPT_JSON };

static const cli_opt count_options[] = {
    CLI_KEY_SOURCE_OPTIONS,
    {"top", 0, true, OPT_TOP},
    {"json", 0, false, OPT_JSON},
    {NULL, 0, false, 0},
};

/* ---- arguments ------------------------------------------------------------- */

/* -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, count_opts *o) {
    cli_args a;
    int id, r;
    cli_args_init(&a, "count", argc, argv);
    while ((id = cli_next(&a, count_options)) != CLI_NEXT_END) {
        if (id == CLI_NEXT_ERR)
            return CLI_EXIT_ERR;
        if (id == CLI_OPT_HELP)
            return cli_help_print(stdout, "count") ? CLI_EXIT_OK : CLI_EXIT_ERR;
        if ((r = cli_key_source_take(&o->src, id, a.value)) < 0)
            return CLI_EXIT_ERR;
        if (r == 0 && id == OPT_JSON)
            o->json = true;
        else if (r == 0) { /* --top */
            o->has_top = true;
            if (!cli_parse_u64("count", "--top", a.value, &o->top))
                return CLI_EXIT_ERR;
        }
    }
    return cli_key_source_check(&o->src);
}

/* ---- output ------------------------------------------------------------------ */

/* "COUNT<TAB>KEY", or a JSON record. */
static void print_count(const count_opts *o, uint64_t count, const uint8_t *key,
                        size_t len) {
    bool binary = cli_key_source_binary(&o->src);
    if (o->json) {
        cli_json j;
        cli_json_key_record(&j, key, len, binary);
        cli_json_u64(&j, "count", count);
        cli_json_close(&j);
        return;
    }
    printf("%llu\t", (unsigned long long)count);
    cli_print_key(stdout, key, len, binary);
    putchar('\n');
}

static uint64_t key_count(const amq_filter *f, uint64_t h) {
    uint64_t c = 0;
    return amq_filter_count_hash(f, h, &c) == AMQ_OK ? c : 0;
}

/* Every key's count in input order. */
static int count_each(const count_opts *o, const amq_filter *f, cli_keys *k) {
    const uint8_t *key;
    size_t len;
    int r;
    while ((r = cli_keys_next(k, &key, &len)) == 1)
        print_count(o, key_count(f, amq_filter_hash(f, key, len)), key, len);
    return r == 0 ? CLI_EXIT_OK : CLI_EXIT_ERR;
}

/* ---- --top ---------------------------------------------------------------------- */

static bool set_push(count_set *s, uint64_t h, const uint8_t *key, size_t len) {
    if (s->n == s->cap) {
        size_t ncap = s->cap ? s->cap * 2 : 1024;
        count_item *ni = ncap > SIZE_MAX / sizeof *ni
                             ? NULL
                             : realloc(s->items, ncap * sizeof *ni);
        if (ni == NULL)
            return false;
        s->items = ni;
        s->cap = ncap;
    }
    if (len > s->arena_cap - s->used) {
        size_t ncap = s->arena_cap ? s->arena_cap : 1 << 16;
        while (len > ncap - s->used && ncap <= SIZE_MAX / 2)
            ncap *= 2;
        uint8_t *na = len > ncap - s->used ? NULL : realloc(s->arena, ncap);
        if (na == NULL)
            return false;
        s->arena = na;
        s->arena_cap = ncap;
    }
    if (len > 0)
        memcpy(s->arena + s->used, key, len);
    s->items[s->n] = (count_item){h, 0, s->n, s->used, len};
    s->used += len;
    s->n++;
    return true;
}

static int by_hash(const void *a, const void *b) {
    const count_item *x = a, *y = b;
    if (x->hash != y->hash)
        return x->hash < y->hash ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static int by_count(const void *a, const void *b) {
    const count_item *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Keep the first occurrence of each hash that the filter ranks: for a
 * sketch, only the items its list holds. */
static void keep_ranked(count_set *s, const amq_filter *f) {
    bool sketch = (amq_filter_caps(f) & AMQ_CAP_SKETCH) != 0;
    size_t w = 0;
    qsort(s->items, s->n, sizeof *s->items, by_hash);
    for (size_t i = 0; i < s->n; i++) {
        count_item it = s->items[i];
        if (w > 0 && s->items[w - 1].hash == it.hash)
            continue;
        if (sketch && !amq_filter_contains_hash(f, it.hash))
            continue;
        it.count = key_count(f, it.hash);
        s->items[w++] = it;
    }
    s->n = w;
    qsort(s->items, s->n, sizeof *s->items, by_count);
}

static int count_top(const count_opts *o, const amq_filter *f, cli_keys *k) {
    count_set s;
    const uint8_t *key;
    size_t len;
    int r;
    memset(&s, 0, sizeof s);
    while ((r = cli_keys_next(k, &key, &len)) == 1)
        if (!set_push(&s, amq_filter_hash(f, key, len), key, len)) {
            cli_error("out of memory after %zu keys", s.n);
            r = -1;
            break;
        }
    if (r == 0) {
        keep_ranked(&s, f);
        size_t shown = o->top == 0 || o->top > s.n ? s.n : (size_t)o->top;
        for (size_t i = 0; i < shown; i++)
            print_count(o, s.items[i].count, s.arena + s.items[i].off,
                        s.items[i].len);
    }
    free(s.items);
    free(s.arena);
    return r == 0 ? CLI_EXIT_OK : CLI_EXIT_ERR;
}

/* ---- command ------------------------------------------------------------------- */

static bool check_filter(const char *file, const amq_filter *f) {
    if (amq_filter_caps(f) & AMQ_CAP_COUNT)
        return true;
    char *types = cli_types_with(AMQ_CAP_COUNT, 0);
    cli_error("%s: '%s' does not count keys (types that do: %s)", file,
              amq_filter_info(f)->name, types ? types : "?");
    free(types);
    return false;
}

static int count_file(const count_opts *o, const amq_filter *f) {
    cli_keys k;
    if (!check_filter(o->src.file, f) || !cli_key_source_open(&o->src, &k))
        return CLI_EXIT_ERR;
    int rc = o->has_top ? count_top(o, f, &k) : count_each(o, f, &k);
    cli_keys_close(&k);
    return rc;
}

int cli_cmd_count(int argc, char **argv) {
    count_opts o;
    memset(&o, 0, sizeof o);
    o.src.command = "count";
    cli_filter_file ff;
    int rc = parse_args(argc, argv, &o);
    if (rc < 0)
        rc = cli_filter_open(&ff, o.src.file) ? -1 : CLI_EXIT_ERR;
    if (rc < 0) {
        rc = count_file(&o, ff.filter);
        cli_filter_close(&ff);
    }
    cli_key_source_free(&o.src);
    return rc;
}
