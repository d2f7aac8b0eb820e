/*
 * util.c — small helpers for the command-line tools: the option parser
 * every subcommand uses, number parsing, error messages, a monotonic clock
 * and the progress bar drawn on stderr during long builds.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* ---- option parsing --------------------------------------------------------- */

void cli_args_init(cli_args *a, const char *command, int argc, char **argv) {
    a->command = command;
    a->argc = argc;
    a->argv = argv;
    a->index = 1;
    a->only_pos = false;
    a->value = NULL;
}

static const cli_opt *find_long(const cli_opt *opts, const char *name,
                                size_t len) {
    for (; opts->name != NULL; opts++)
        if (strlen(opts->name) == len && memcmp(opts->name, name, len) == 0)
            return opts;
    return NULL;
}

static const cli_opt *find_short(const cli_opt *opts, char c) {
    for (; opts->name != NULL; opts++)
        if (opts->short_name != 0 && opts->short_name == c)
            return opts;
    return NULL;
}

/* Attach the option's argument: inline (--x=v, -xv) or the next argv. */
static int take_value(cli_args *a, const cli_opt *o, const char *inline_val,
                      const char *shown) {
    a->value = NULL;
    if (!o->has_arg && inline_val != NULL) {
        cli_usage_error(a->command, "option %s takes no value", shown);
        return CLI_NEXT_ERR;
    }
    if (!o->has_arg)
        return o->id;
    if (inline_val == NULL && a->index >= a->argc) {
        cli_usage_error(a->command, "option %s needs a value", shown);
        return CLI_NEXT_ERR;
    }
    a->value = inline_val != NULL ? inline_val : a->argv[a->index++];
    return o->id;
}

/* "unknown option '--tpye'" with the nearest long option of the table. */
static int unknown_long(const cli_args *a, const cli_opt *opts,
                        const char *name, size_t len) {
    const char *names[64], *near = NULL;
    char word[64];
    size_t n = 0;
    for (; opts->name != NULL && n < 63; opts++)
        names[n++] = opts->name;
    names[n++] = "help";
    if (len < sizeof word) {
        memcpy(word, name, len);
        word[len] = '\0';
        near = amq_suggest(word, names, n);
    }
    if (near != NULL)
        cli_usage_error(a->command,
                        "unknown option '--%.*s' (did you mean "
                        "--%s?)",
                        (int)len, name, near);
    else
        cli_usage_error(a->command, "unknown option '--%.*s'", (int)len, name);
    return CLI_NEXT_ERR;
}

static int next_long(cli_args *a, const cli_opt *opts, const char *arg) {
    const char *name = arg + 2;
    const char *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    const cli_opt *o = find_long(opts, name, len);
    if (o == NULL && len == 4 && memcmp(name, "help", 4) == 0 && !eq)
        return CLI_OPT_HELP;
    if (o == NULL)
        return unknown_long(a, opts, name, len);
    return take_value(a, o, eq ? eq + 1 : NULL, arg);
}

static int next_short(cli_args *a, const cli_opt *opts, const char *arg) {
    const cli_opt *o = find_short(opts, arg[1]);
    char shown[3] = {'-', arg[1], 0};
    if (o == NULL && arg[1] == 'h' && arg[2] == 0)
        return CLI_OPT_HELP;
    if (o == NULL) {
        cli_usage_error(a->command, "unknown option '%s'", shown);
        return CLI_NEXT_ERR;
    }
    return take_value(a, o, arg[2] != 0 ? arg + 2 : NULL, shown);
}

int cli_next(cli_args *a, const cli_opt *opts) {
    if (a->index >= a->argc)
        return CLI_NEXT_END;
    const char *arg = a->argv[a->index++];
    if (a->only_pos || arg[0] != '-' || arg[1] == 0) {
        a->value = arg;
        return CLI_NEXT_POS;
    }
    if (arg[1] == '-' && arg[2] == 0) {
        a->only_pos = true;
        return cli_next(a, opts);
    }
    if (arg[1] == '-')
        return next_long(a, opts, arg);
    return next_short(a, opts, arg);
}

/* ---- commands ---------------------------------------------------------------- */

int cli_unknown_word(const char *command, const char *what, const char *word,
                     const char *const *names) {
    size_t n = 0;
    while (names[n] != NULL)
        n++;
    const char *near = amq_suggest(word, names, n);
    char hint[96] = "";
    if (near != NULL)
        snprintf(hint, sizeof hint, " (did you mean '%s'?)", near);
    if (command[0] != '\0')
        return cli_usage_error(command, "unknown %s '%s'%s", what, word, hint);
    cli_error("unknown %s '%s'%s; try '%s help'", what, word, hint,
              cli_tool_self.name);
    return CLI_EXIT_ERR;
}

int cli_dispatch(const char *command, const cli_command *subs, int argc,
                 char **argv) {
    const char *names[32];
    size_t n = 0;
    for (; subs[n].name != NULL && n < 31; n++)
        names[n] = subs[n].name;
    names[n] = NULL;
    if (argc < 2 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "-h") == 0) {
        bool help = argc >= 2;
        if (!help) {
            char list[256] = "";
            for (size_t i = 0; i < n; i++)
                snprintf(list + strlen(list), sizeof list - strlen(list),
                         "%s%s", i ? ", " : "", names[i]);
            return cli_usage_error(command, "missing subcommand (%s)", list);
        }
        return cli_help_print(stdout, command) ? CLI_EXIT_OK : CLI_EXIT_ERR;
    }
    for (size_t i = 0; i < n; i++)
        if (strcmp(argv[1], subs[i].name) == 0)
            return subs[i].run(argc - 1, argv + 1);
    return cli_unknown_word(command, "subcommand", argv[1], names);
}

int cli_positionals(const char *command, int argc, char **argv, size_t min,
                    size_t max, const char **out, bool *json) {
    static const cli_opt none[] = {{NULL, 0, false, 0}};
    static const cli_opt with_json[] = {{"json", 0, false, 1},
                                        {NULL, 0, false, 0}};
    cli_args a;
    size_t n = 0;
    int id;
    cli_args_init(&a, command, argc, argv);
    while ((id = cli_next(&a, json ? with_json : none)) != CLI_NEXT_END) {
        if (id == CLI_NEXT_ERR)
            return CLI_EXIT_ERR;
        if (id == CLI_OPT_HELP)
            return cli_help_print(stdout, command) ? CLI_EXIT_OK : CLI_EXIT_ERR;
        if (id == 1) {
            *json = true;
            continue;
        }
        if (n == max)
            return cli_usage_error(command, "%s: too many arguments", argv[0]);
        out[n++] = a.value;
    }
    if (n < min)
        return cli_usage_error(command, "%s: missing FILE", argv[0]);
    return -1;
}

/* ---- numbers -------------------------------------------------------------------- */

static uint64_t suffix_multiplier(char c) {
    switch (c) {
    case 'k':
    case 'K': return 1000;
    case 'M': return 1000000;
    case 'G': return 1000000000;
    default: return 1;
    }
}

/* "1.5e6", "2.5M": a decimal or scientific number (and suffix) whose value
 * is a whole number below 2^64. */
static bool parse_real_count(const char *s, uint64_t *out) {
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    double mul = (double)suffix_multiplier(*end);
    if (mul != 1)
        end++;
    v *= mul;
    if (errno != 0 || *end != 0 || !(v >= 0 && v < 18446744073709551616.0) ||
        v != floor(v))
        return false;
    *out = (uint64_t)v;
    return true;
}

bool cli_parse_u64(const char *command, const char *opt, const char *s,
                   uint64_t *out) {
    char *end = NULL;
    errno = 0;
    if (s[0] < '0' || s[0] > '9')
        goto bad;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end == '.' || *end == 'e' || *end == 'E') {
        if (parse_real_count(s, out))
            return true;
        goto bad;
    }
    uint64_t mul = suffix_multiplier(*end);
    if (mul != 1)
        end++;
    if (errno != 0 || *end != 0 || (uint64_t)v > UINT64_MAX / mul)
        goto bad;
    *out = (uint64_t)v * mul;
    return true;
bad:
    cli_usage_error(command,
                    "%s: '%s' is not a whole number (digits, 1e6, or a k/M/G "
                    "suffix: 2M)",
                    opt, s);
    return false;
}

bool cli_parse_fpr(const char *command, const char *opt, const char *s,
                   double *out) {
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != 0 || errno != 0 || !isfinite(v) || v <= 0.0 ||
        v >= 1.0) {
        cli_usage_error(command, "%s: '%s' is not a rate in (0, 1)", opt, s);
        return false;
    }
    *out = v;
    return true;
}

bool cli_parse_real(const char *command, const char *opt, const char *s,
                    double lo, double hi, double *out) {
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != 0 || errno != 0 || !isfinite(v) || v < lo ||
        v > hi) {
        cli_usage_error(command, "%s: '%s' is not a number in [%g, %g]", opt, s,
                        lo, hi);
        return false;
    }
    *out = v;
    return true;
}

/* ---- errors -------------------------------------------------------------------- */

void cli_error(const char *fmt, ...) {
    va_list ap;
    fflush(stdout);
    fprintf(stderr, "%s: ", cli_tool_self.name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int cli_status_error(const char *what, amq_status st, const amq_diag *diag) {
    if (diag != NULL && diag->message[0] != 0)
        cli_error("%s: %s (at byte %zu: %.*s)", what, amq_strerror(st),
                  diag->offset, (int)sizeof diag->message, diag->message);
    else
        cli_error("%s: %s", what, amq_strerror(st));
    return CLI_EXIT_ERR;
}

char *cli_describe(const amq_filter *f) {
    size_t need = amq_filter_describe(f, NULL, 0) + 1;
    char *s = malloc(need);
    if (s != NULL)
        amq_filter_describe(f, s, need);
    return s;
}

char *cli_types_with(uint32_t caps, uint32_t without) {
    size_t cap = 256, len = 0;
    char *s = malloc(cap);
    if (s == NULL)
        return NULL;
    s[0] = 0;
    for (size_t i = 0; i < amq_filter_type_count(); i++) {
        const amq_type_info *t = amq_filter_type_at(i);
        if (t == NULL || (t->caps & caps) != caps || (t->caps & without) != 0)
            continue;
        size_t need = len + strlen(t->name) + 3;
        if (need > cap) {
            char *ns = realloc(s, need * 2);
            if (ns == NULL) {
                free(s);
                return NULL;
            }
            s = ns;
            cap = need * 2;
        }
        len += (size_t)sprintf(s + len, "%s%s", len ? ", " : "", t->name);
    }
    return s;
}

bool cli_explain_full(const amq_filter *f, const uint8_t *key, size_t len) {
    uint64_t copies = 0;
    if ((amq_filter_caps(f) & AMQ_CAP_COUNT) == 0 ||
        amq_filter_count_hash(f, amq_filter_hash(f, key, len), &copies) !=
            AMQ_OK ||
        copies < 2)
        return false;
    cli_error("hint: this key is already in the filter %llu times; a "
              "fingerprint filter holds only a few copies of one key "
              "(cuckoo: 8)",
              (unsigned long long)copies);
    return true;
}

bool cli_grow_full(amq_filter **f, const char *file, bool quiet,
                   const uint8_t *key, size_t len, amq_status *st) {
    amq_filter *g;
    if (amq_eqf_from_qf(*f, NULL, &g) != AMQ_OK) /* not a qf, or no memory */
        return false;
    double target = amq_filter_target_fpr(*f), bound = amq_filter_fpr_bound(*f);
    if (!quiet)
        fprintf(stderr,
                "amq: %s was full at %llu keys; it goes on as an eqf, which "
                "doubles as keys arrive and keeps its bound under %g\n",
                file, (unsigned long long)amq_filter_items(*f),
                target > bound ? target : 2 * bound);
    amq_filter_free(*f);
    *f = g;
    *st = amq_filter_add(g, key, len);
    return true;
}

/* ---- filters that outgrow their size ---------------------------------------- */

uint64_t cli_filter_keys(const amq_filter *f) {
    amq_maplet_shape s;
    if (amq_maplet_get_shape(f, &s) == AMQ_OK && s.op == AMQ_MAPLET_SUM &&
        !s.multiset)
        return s.distinct;
    return amq_filter_items(f);
}

int cli_check_capacity(const amq_filter *f, const char *file) {
    uint64_t keys = cli_filter_keys(f), cap = amq_filter_capacity(f);
    double bound = amq_filter_fpr_bound(f), target = amq_filter_target_fpr(f);
    if (cap == 0 || keys <= cap || !(target > 0.0) || bound <= target)
        return CLI_EXIT_OK;
    cli_error("warning: %s holds %llu keys but was sized for %llu: its "
              "false-positive bound is %.3g, above its target %g",
              strcmp(file, "-") == 0 ? "<stdout>" : file,
              (unsigned long long)keys, (unsigned long long)cap, bound, target);
    cli_error("hint: rebuild it with 'amq build -n %llu' or more (or no -n, "
              "to size it for the input); exit status 3",
              (unsigned long long)keys);
    return CLI_EXIT_OVER;
}

void cli_note_forgets(const amq_filter *f) {
    if (!(amq_filter_caps(f) & AMQ_CAP_FORGETS))
        return;
    cli_error("note: %s forgets old keys by design: a key added long ago may "
              "no longer be reported (a false negative); only the newest key "
              "is promised (docs/structures.md has the retention curve; "
              "stable:horizon=H keeps every key of the last H times capacity "
              "adds, in 8 times the memory)",
              amq_filter_info(f)->name);
}

/* ---- time and progress ------------------------------------------------------ */

double cli_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int progress_mode = CLI_PROGRESS_AUTO;

void cli_progress_set_mode(int mode) { progress_mode = mode; }

void cli_progress_init(cli_progress *p, const char *label, uint64_t total) {
    p->enabled =
        progress_mode == CLI_PROGRESS_ON ||
        (progress_mode == CLI_PROGRESS_AUTO && isatty(STDERR_FILENO) == 1);
    p->shown = false;
    p->label = label;
    p->total = total;
    p->bytes = false;
    p->keys = 0;
    p->start = p->enabled ? cli_now() : 0.0;
    p->last = p->start;
    p->ticker = NULL;
}

void cli_progress_init_bytes(cli_progress *p, const char *label,
                             uint64_t size) {
    cli_progress_init(p, label, size);
    p->bytes = size > 0;
}

static void progress_bar(const cli_progress *p, uint64_t done) {
    enum { WIDTH = 30 };
    double frac = (double)done / (double)p->total;
    if (frac > 1.0)
        frac = 1.0;
    int fill = (int)(frac * WIDTH);
    char bar[WIDTH + 1];
    memset(bar, '#', (size_t)fill);
    memset(bar + fill, '.', (size_t)(WIDTH - fill));
    bar[WIDTH] = 0;
    fprintf(stderr, "%s [%s] %5.1f%% ", p->label, bar, 100.0 * frac);
    if (p->bytes)
        fprintf(stderr, "(%llu keys)", (unsigned long long)p->keys);
    else
        fprintf(stderr, "%llu/%llu", (unsigned long long)done,
                (unsigned long long)p->total);
}

static void progress_draw(cli_progress *p, uint64_t done) {
    fputs("\r\033[K", stderr);
    if (p->total != 0)
        progress_bar(p, done);
    else if (done != 0)
        fprintf(stderr, "%s: %llu keys", p->label, (unsigned long long)done);
    else
        fprintf(stderr, "%s ... (%.1f s so far)", p->label,
                cli_now() - p->start);
    fflush(stderr);
    p->shown = true;
}

/* Ten redraws a second at most, and none in the first half second. */
static bool progress_due(cli_progress *p) {
    double t = cli_now();
    if (t - p->start < 0.5 || t - p->last < 0.1)
        return false;
    p->last = t;
    return true;
}

void cli_progress_tick(cli_progress *p, uint64_t done) {
    if (p->enabled && (done & 0xFFFFu) == 0 && progress_due(p))
        progress_draw(p, done);
}

void cli_progress_tick_input(cli_progress *p, uint64_t keys,
                             uint64_t (*offset)(const void *), const void *in) {
    if (!p->enabled || (keys & 0xFFFFu) != 0 || !progress_due(p))
        return;
    p->keys = keys;
    progress_draw(p, p->bytes ? offset(in) : keys);
}

/* The ticker thread of a phase that cannot tick: the main thread is
 * inside one library call and prints nothing until it stops the thread
 * (and joins it), so the two never write stderr at once. */
struct cli_ticker {
    pthread_t thread;
    atomic_bool stop;
    cli_progress *p;
};

static void *ticker_run(void *arg) {
    struct cli_ticker *t = arg;
    const struct timespec step = {0, 100 * 1000 * 1000};
    while (!atomic_load(&t->stop)) {
        nanosleep(&step, NULL);
        if (!atomic_load(&t->stop) && progress_due(t->p))
            progress_draw(t->p, 0);
    }
    return NULL;
}

static void ticker_stop(cli_progress *p) {
    if (p->ticker == NULL)
        return;
    atomic_store(&p->ticker->stop, true);
    pthread_join(p->ticker->thread, NULL);
    free(p->ticker);
    p->ticker = NULL;
}

static void ticker_start(cli_progress *p) {
    struct cli_ticker *t = malloc(sizeof *t);
    if (t == NULL)
        return; /* no redraws: the phase still runs */
    atomic_init(&t->stop, false);
    t->p = p;
    if (pthread_create(&t->thread, NULL, ticker_run, t) != 0) {
        free(t);
        return;
    }
    p->ticker = t;
}

void cli_progress_phase(cli_progress *p, const char *label, uint64_t total) {
    ticker_stop(p);
    p->label = label;
    p->total = total;
    p->bytes = false;
    if (!p->enabled)
        return;
    if (cli_now() - p->start >= 0.5)
        progress_draw(p, 0);
    if (total == 0)
        ticker_start(p);
}

void cli_progress_done(cli_progress *p) {
    ticker_stop(p);
    if (p->shown)
        fputs("\r\033[K", stderr);
    p->shown = false;
}
