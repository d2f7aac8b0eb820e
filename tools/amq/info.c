/*
 * info.c — `amq info [--json] FILE...`: what filter files hold and how
 * close each is to the space lower bound (and, for a sliding-window
 * filter's file, its window, clock and bound).
 *
 * Any structure answering with false-positive rate eps needs at least
 * log2(1/eps) bits per key (Carter et al. 1978); the ratio of the filter's
 * bits per key to that bound is its space overhead. eps is the certified
 * bound at the current load, or the target rate while the filter is empty.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "verbs.h"

typedef struct info_facts {
    const char *file;
    const amq_type_info *type;
    char *params;
    const amq_hasher *hasher;
    uint64_t items, keys, capacity;
    uint32_t caps;
    bool sketch;       /* a frequency sketch: no membership bound         */
    bool intersection; /* its bound covers keys outside it; none_bound     */
    double none_bound; /* keys in no input of an intersection             */
    bool over;         /* more keys than capacity, bound above target     */
    size_t bytes, file_bytes;
    double bits_per_key, bound, target;
    double eps; /* what the lower bound is computed for; 0: none   */
    const char *eps_from;
    double lower, ratio; /* NAN when undefined                             */
    bool view;
    bool maplet; /* a maplet: the shape below                       */
    bool exact;  /* an exact maplet: no false positive, no target    */
    amq_maplet_shape shape;
    double map_lower;   /* log2(1/eps) + value bits                        */
    uint64_t range_len; /* a range filter: the length its target is for */
    double range_bound; /* the bound for a range of range_len keys       */
    bool range_bytes;   /* its keys are byte strings                     */
    bool adaptive;      /* adapt_stats hold what reports taught it       */
    amq_adapt_stats adapt;
} info_facts;

enum { OPT_JSON = 1 };

static const cli_opt info_options[] = {
    {"json", 0, false, OPT_JSON},
    {NULL, 0, false, 0},
};

static void derive_bounds(info_facts *x) {
    x->eps = 0.0;
    x->eps_from = "none";
    if (x->sketch) {
        x->lower = x->ratio = NAN;
        return;
    }
    if (x->keys > 0 && x->bound > 0.0 && x->bound < 1.0) {
        x->eps = x->bound;
        x->eps_from = "certified bound";
    } else if (x->target > 0.0 && x->target < 1.0) {
        x->eps = x->target;
        x->eps_from = "target fpr";
    }
    x->lower = x->eps > 0.0 ? log2(1.0 / x->eps) : NAN;
    x->ratio = x->lower > 0.0 ? x->bits_per_key / x->lower : NAN;
}

static void gather(info_facts *x, const char *file, const cli_filter_file *ff) {
    const amq_filter *f = ff->filter;
    memset(x, 0, sizeof *x);
    x->file = file;
    x->type = amq_filter_info(f);
    x->params = cli_describe(f);
    x->hasher = amq_filter_hasher(f);
    x->items = amq_filter_items(f);
    x->keys = cli_filter_keys(f);
    x->caps = amq_filter_caps(f);
    x->sketch = (x->caps & AMQ_CAP_SKETCH) != 0;
    x->intersection = amq_filter_is_intersection(f, &x->none_bound);
    x->capacity = amq_filter_capacity(f);
    x->bytes = amq_filter_size_bytes(f);
    x->file_bytes = ff->file_len;
    x->bits_per_key = amq_filter_bits_per_key(f);
    x->bound = amq_filter_fpr_bound(f);
    x->target = amq_filter_target_fpr(f);
    x->range_len = amq_range_design_length(f);
    x->range_bound = amq_range_fpr_bound(f, x->range_len);
    x->range_bytes = amq_range_key_form(f) == AMQ_RANGE_KEYS_BYTES;
    x->adaptive = amq_filter_adapt_stats(f, &x->adapt) == AMQ_OK;
    x->view = ff->is_view;
    x->over = x->capacity > 0 && x->keys > x->capacity && x->target > 0 &&
              x->bound > x->target;
    if (x->sketch)
        x->bits_per_key = NAN;
    x->maplet = amq_maplet_get_shape(f, &x->shape) == AMQ_OK;
    x->exact = x->maplet && x->shape.key_bits != 0;
    if (x->exact) /* one fingerprint per key below 2^K */
        x->bound = x->target = 0;
    derive_bounds(x);
    x->map_lower =
        x->maplet && x->lower > 0 ? x->lower + x->shape.value_bits : NAN;
}

/* ---- text ------------------------------------------------------------------- */

static void print_hash_text(const amq_hasher *h) {
    printf("%-12s %s", "hash:", amq_hash_kind_name(h->kind));
    if (h->kind == AMQ_HASH_SIPHASH)
        printf(" (keyed; the secret key is stored in the file)\n");
    else
        printf(" (seed %llu)\n", (unsigned long long)h->seed);
}

static void print_number_or_na(const char *label, double v, const char *fmt) {
    printf("%-12s ", label);
    if (isfinite(v))
        printf(fmt, v);
    else
        fputs("n/a", stdout);
}

/* What a maplet adds: its operator and values, its mode, how its slots
 * are used, and the lower bound with the values counted. */
static void print_maplet_text(const info_facts *x) {
    const amq_maplet_shape *s = &x->shape;
    printf("%-12s op=%s, %u-bit values, %s%s",
           "maplet:", amq_maplet_op_name(s->op), s->value_bits,
           s->is_static  ? "static (Ribbon retrieval + membership)"
           : s->multiset ? "multiset (one slot per pair)"
                         : "combine (one entry per fingerprint)",
           s->key_bits ? "" : "\n");
    if (s->key_bits)
        printf(", exact for %u-bit keys\n", s->key_bits);
    printf("%-12s %llu fingerprints",
           "entries:", (unsigned long long)s->distinct);
    if (!s->is_static)
        printf(" in %llu slots (%llu home slots, %u-bit remainders)",
               (unsigned long long)s->used_slots, (unsigned long long)s->slots,
               s->remainder_bits);
    fputc('\n', stdout);
    print_number_or_na("map bound:", x->map_lower, "%.4f bits/key");
    fputs(" (log2(1/eps) + value bits)\n", stdout);
}

static void print_items_text(const info_facts *x) {
    printf("%-12s %llu", "items:", (unsigned long long)x->items);
    if (x->keys != x->items)
        printf(" (the sum of its values; %llu key%s)",
               (unsigned long long)x->keys, cli_s(x->keys));
    fputc('\n', stdout);
    printf("%-12s %llu%s", "capacity:", (unsigned long long)x->capacity,
           !x->capacity             ? " (explicit parameters)"
           : x->caps & AMQ_CAP_GROW ? " (its first size: it doubles when full)"
                                    : "");
    if (x->over)
        printf(" (OVER: %llu keys; the bound is above the target: rebuild "
               "with -n %llu or more)",
               (unsigned long long)x->keys, (unsigned long long)x->keys);
    fputc('\n', stdout);
}

static void print_bound_text(const info_facts *x) {
    if (x->sketch) {
        printf("%-12s n/a (a frequency sketch: it answers counts and heavy "
               "hitters, not membership)\n",
               "fpr bound:");
        return;
    }
    if (x->exact) {
        printf("%-12s 0 (exact: every key below 2^%u has its own "
               "fingerprint)\n",
               "fpr bound:", x->shape.key_bits);
        return;
    }
    printf("%-12s %.6g (certified, at the current load",
           "fpr bound:", x->bound);
    if (x->intersection)
        printf(", for any key outside the intersection; %.6g for keys in no "
               "input",
               x->none_bound);
    fputs(")\n", stdout);
    if (x->caps & AMQ_CAP_FORGETS)
        printf("%-12s yes: old keys fade by design (false negatives for keys "
               "added long ago; only the newest is promised)\n",
               "forgets:");
    if (x->range_len != 0) /* the target is for ranges of range_len keys */
        printf("%-12s %.6g for a range of %llu key%s none of which was added "
               "(l times the bound above for l keys; keys are %s)\n",
               "range bound:", x->range_bound, (unsigned long long)x->range_len,
               cli_s(x->range_len),
               x->range_bytes ? "byte strings, by their first 8 bytes"
                              : "integers");
    if (x->adaptive)
        printf("%-12s %llu false positive%s fixed (amq adapt); %llu "
               "extension records of %llu fingerprints (%zu bytes, in "
               "'bytes'); reverse map %zu bytes (read only to adapt)\n",
               "adapted:", (unsigned long long)x->adapt.reports,
               cli_s(x->adapt.reports), (unsigned long long)x->adapt.records,
               (unsigned long long)x->adapt.extended, x->adapt.extension_bytes,
               x->adapt.map_bytes);
}

static void print_text(const info_facts *x) {
    printf("%-12s %s\n", "file:", x->file);
    printf("%-12s %s\n", "type:", x->type ? x->type->name : "?");
    printf("%-12s %s\n", "params:", x->params ? x->params : "?");
    print_hash_text(x->hasher);
    print_items_text(x);
    printf("%-12s %zu (file %zu)\n", "bytes:", x->bytes, x->file_bytes);
    print_number_or_na("bits/key:", x->bits_per_key, "%.4f");
    fputs(x->keys || x->sketch ? "\n" : " (empty: per one key)\n", stdout);
    print_bound_text(x);
    print_number_or_na("target fpr:", x->target > 0 ? x->target : NAN, "%g");
    fputs(x->exact ? " (exact)\n" : "\n", stdout);
    print_number_or_na("lower bound:", x->lower, "%.4f bits/key");
    if (x->eps > 0.0)
        printf(" (log2(1/eps), eps = %s %.6g)", x->eps_from, x->eps);
    fputc('\n', stdout);
    print_number_or_na("ratio:", x->ratio, "%.4f");
    fputs(" (bits/key / lower bound)\n", stdout);
    printf("%-12s %s\n",
           "loaded:", x->view ? "view (mapped, zero copy)" : "copy");
    if (x->maplet)
        print_maplet_text(x);
}

/* ---- JSON -------------------------------------------------------------------- */

static void print_json(cli_json *j, const info_facts *x) {
    cli_json_open(j, NULL, '{');
    cli_json_str(j, "file", x->file);
    cli_json_str(j, "type", x->type ? x->type->name : "");
    cli_json_str(j, "params", x->params);
    cli_json_str(j, "hash", amq_hash_kind_name(x->hasher->kind));
    cli_json_bool(j, "keyed", x->hasher->kind == AMQ_HASH_SIPHASH);
    cli_json_u64(j, "items", x->items);
    cli_json_u64(j, "keys", x->keys);
    cli_json_u64(j, "capacity", x->capacity);
    cli_json_bool(j, "over_capacity", x->over);
    cli_json_u64(j, "bytes", x->bytes);
    cli_json_u64(j, "file_bytes", x->file_bytes);
    cli_json_num(j, "bits_per_key", x->bits_per_key);
    cli_json_num(j, "fpr_bound", x->sketch ? NAN : x->bound);
    cli_json_bool(j, "sketch", x->sketch);
    cli_json_bool(j, "forgets", (x->caps & AMQ_CAP_FORGETS) != 0);
    cli_json_bool(j, "intersection", x->intersection);
    if (x->intersection)
        cli_json_num(j, "intersection_none_fpr_bound", x->none_bound);
    cli_json_num(j, "target_fpr", x->exact ? NAN : x->target);
    if (x->range_len != 0) {
        cli_json_u64(j, "range_length", x->range_len);
        cli_json_num(j, "range_fpr_bound", x->range_bound);
        cli_json_str(j, "range_keys", x->range_bytes ? "bytes" : "int");
    }
    if (x->adaptive) {
        cli_json_u64(j, "adapt_reports", x->adapt.reports);
        cli_json_u64(j, "adapt_records", x->adapt.records);
        cli_json_u64(j, "adapt_fingerprints", x->adapt.extended);
        cli_json_u64(j, "adapt_extension_bytes", x->adapt.extension_bytes);
        cli_json_u64(j, "adapt_map_bytes", x->adapt.map_bytes);
    }
    cli_json_num(j, "lower_bound_bits_per_key", x->lower);
    cli_json_num(j, "lower_bound_eps", x->eps > 0 ? x->eps : NAN);
    cli_json_num(j, "ratio", x->ratio);
    cli_json_bool(j, "view", x->view);
    if (x->maplet) {
        const amq_maplet_shape *m = &x->shape;
        cli_json_str(j, "maplet_op", amq_maplet_op_name(m->op));
        cli_json_u64(j, "value_bits", m->value_bits);
        cli_json_bool(j, "multiset", m->multiset);
        cli_json_bool(j, "static", m->is_static);
        cli_json_bool(j, "exact", x->exact);
        cli_json_u64(j, "exact_key_bits", m->key_bits);
        cli_json_u64(j, "fingerprints", m->distinct);
        cli_json_u64(j, "used_slots", m->used_slots);
        cli_json_u64(j, "home_slots", m->slots);
        cli_json_u64(j, "remainder_bits", m->remainder_bits);
        cli_json_num(j, "maplet_lower_bound_bits_per_key", x->map_lower);
    }
    cli_json_close(j);
}

/* ---- command ------------------------------------------------------------------ */

typedef struct info_opts {
    const char **files;
    size_t nfiles;
    bool json;
} info_opts;

/* -1 to go on, else the exit status. Files are gathered in argv order
 * (options may come between them). */
static int parse_args(int argc, char **argv, info_opts *o) {
    cli_args a;
    int id;
    cli_args_init(&a, "info", argc, argv);
    o->files = calloc((size_t)argc, sizeof *o->files);
    if (o->files == NULL) {
        cli_error("out of memory");
        return CLI_EXIT_ERR;
    }
    while ((id = cli_next(&a, info_options)) != CLI_NEXT_END) {
        if (id == CLI_NEXT_ERR)
            return CLI_EXIT_ERR;
        if (id == CLI_OPT_HELP)
            return cli_help_print(stdout, "info") ? CLI_EXIT_OK : CLI_EXIT_ERR;
        if (id == OPT_JSON)
            o->json = true;
        else
            o->files[o->nfiles++] = a.value;
    }
    if (o->nfiles == 0)
        return cli_usage_error("info", "missing FILE");
    return -1;
}

/* ---- sliding windows (amq/window.h, frame type 303) --------------------------- */

/* A file holding a sliding-window frame: true with *w loaded, false
 * (nothing printed) for any other file. */
static bool open_window(const char *file, amq_window **w, size_t *len,
                        bool *failed) {
    static const uint8_t magic[4] = {0x89, 'A', 'M', 'Q'};
    uint8_t head[14], *buf = NULL;
    amq_diag d;
    *failed = false;
    /* a quiet look at the header: any error is cli_filter_open's to say */
    FILE *fp = fopen(file, "rb");
    if (fp == NULL)
        return false;
    bool is = fread(head, 1, sizeof head, fp) == sizeof head &&
              memcmp(head, magic, sizeof magic) == 0 &&
              head[12] == (uint8_t)(303 & 0xff) &&
              head[13] == (uint8_t)(303 >> 8);
    fclose(fp);
    if (!is)
        return false;
    if (!cli_read_file(file, &buf, len)) {
        *failed = true;
        return true;
    }
    memset(&d, 0, sizeof d);
    amq_status st = amq_window_load(buf, *len, NULL, w, &d);
    if (st != AMQ_OK) {
        cli_error("%s: %s (at byte %zu: %s)", file, amq_strerror(st), d.offset,
                  d.message);
        *failed = true;
    }
    free(buf);
    return true;
}

static void window_info(const info_opts *o, cli_json *j, const char *file,
                        const amq_window *w, size_t len, bool first) {
    amq_window_info in;
    amq_window_get_info(w, 0, &in);
    const char *clock = in.clock == AMQ_WINDOW_TIME ? "time" : "items";
    const char *seal = in.seal == AMQ_WINDOW_SEAL_QF ? "qf" : "ribbon";
    double bpk = 8.0 * (double)in.bytes / (double)in.capacity;
    if (o->json) {
        cli_json_open(j, NULL, '{');
        cli_json_str(j, "file", file);
        cli_json_str(j, "type", "window");
        cli_json_str(j, "clock", clock);
        cli_json_str(j, "seal", seal);
        cli_json_u64(j, "span", in.span);
        cli_json_u64(j, "capacity", in.capacity);
        cli_json_u64(j, "generations", in.generations);
        cli_json_u64(j, "generation_length", in.length);
        cli_json_u64(j, "now", in.now);
        cli_json_u64(j, "live_items", in.live_items);
        cli_json_u64(j, "pieces", in.pieces);
        cli_json_u64(j, "bytes", in.bytes);
        cli_json_u64(j, "file_bytes", len);
        cli_json_num(j, "bits_per_capacity_key", bpk);
        cli_json_num(j, "fpr_bound", in.bound);
        cli_json_num(j, "target_fpr", in.fpr);
        cli_json_close(j);
        return;
    }
    fputs(first ? "" : "\n", stdout);
    printf("%-12s %s\n", "file:", file);
    printf("%-12s window (a sliding-window filter, amq/window.h)\n", "type:");
    printf("%-12s %s, span %llu%s, %u generations of %llu, seal=%s\n",
           "window:", clock, (unsigned long long)in.span,
           in.clock == AMQ_WINDOW_TIME ? " time units" : " adds",
           in.generations, (unsigned long long)in.length, seal);
    printf("%-12s %llu (capacity %llu a window)\n",
           "live items:", (unsigned long long)in.live_items,
           (unsigned long long)in.capacity);
    printf("%-12s %llu (generation %llu, %u pieces live)\n",
           "clock:", (unsigned long long)in.now,
           (unsigned long long)in.generation, in.pieces);
    printf("%-12s %zu (file %zu), %.4f bits per key of capacity\n",
           "bytes:", in.bytes, len, bpk);
    printf("%-12s %.6g (certified, at the clock above)\n",
           "fpr bound:", in.bound);
    printf("%-12s %g\n", "target fpr:", in.fpr);
}

/* Describe one file; false after printing an error. */
static bool info_one(const info_opts *o, cli_json *j, const char *file,
                     bool first) {
    amq_window *w = NULL;
    size_t wlen = 0;
    bool failed;
    if (open_window(file, &w, &wlen, &failed)) {
        if (failed)
            return false;
        window_info(o, j, file, w, wlen, first);
        amq_window_free(w);
        return true;
    }
    cli_filter_file ff;
    if (!cli_filter_open(&ff, file))
        return false;
    info_facts x;
    gather(&x, file, &ff);
    if (o->json) {
        print_json(j, &x);
    } else {
        fputs(first ? "" : "\n", stdout);
        print_text(&x);
    }
    free(x.params);
    cli_filter_close(&ff);
    return true;
}

int cli_cmd_info(int argc, char **argv) {
    info_opts o;
    memset(&o, 0, sizeof o);
    int rc = parse_args(argc, argv, &o);
    if (rc >= 0) {
        free(o.files);
        return rc;
    }
    /* One file: one object (or text block). Several: a JSON array, or text
     * blocks separated by a blank line. A file that fails is reported on
     * stderr and skipped; the exit status is then 2. */
    bool array = o.json && o.nfiles > 1, first = true;
    cli_json j;
    cli_json_init(&j, stdout, true);
    rc = CLI_EXIT_OK;
    if (array)
        cli_json_open(&j, NULL, '[');
    for (size_t i = 0; i < o.nfiles; i++) {
        if (info_one(&o, &j, o.files[i], first))
            first = false;
        else
            rc = CLI_EXIT_ERR;
    }
    if (array)
        cli_json_close(&j);
    free(o.files);
    return rc;
}
