/*
 * help.c — `amq help [COMMAND|types]`, the text behind every --help, and
 * the usage message printed for bad arguments. docs/cli.md says the same at
 * greater length; keep the two in step.
 */
#include <stdarg.h>
#include <string.h>

#include "cli.h"

typedef struct help_topic {
    const char *name;
    const char *usage; /* one line, after "usage: "                        */
    const char *body;
} help_topic;

static const help_topic topics[] = {
    {"build",
     "amq build --type SPEC --fpr E [--capacity N] [--keyed-hash] -o FILE "
     "[KEYFILE]",
     "Build a filter from keys and save it to FILE.\n"
     "\n"
     "Keys are read from KEYFILE (or stdin when absent or '-'), one per\n"
     "line; a trailing \"\\n\" and then \"\\r\" are stripped, and an empty\n"
     "line is the empty key (use --skip-empty to ignore empty lines).\n"
     "\n"
     "  -t, --type SPEC      structure spec NAME[:key=value,...], e.g. bloom,\n"
     "                       blocked, sbbf, bloom:k=5 (see 'amq help types')\n"
     "  -e, --fpr E          target false-positive rate, 0 < E < 1\n"
     "  -n, --capacity N     size for N keys and add keys while reading;\n"
     "                       without it all keys are read (and hashed) first\n"
     "                       and the filter is sized for their count\n"
     "  -k, --keyed-hash     SipHash-2-4 with a fresh random 128-bit key, for\n"
     "                       keys an adversary may choose. The key is STORED\n"
     "                       IN FILE (written mode 0600): keep FILE secret\n"
     "      --hash KIND      xxh3, xxh64 or siphash (default: the type's)\n"
     "      --seed S         seed for xxh3 / xxh64 (default 0)\n"
     "  -b, --binary         keys are little-endian u64s, 8 bytes each; the\n"
     "                       8 bytes are hashed as they are\n"
     "      --skip-empty     ignore empty lines instead of adding the empty key\n"
     "  -o, --output FILE    where to write ('-' for stdout); written to\n"
     "                       FILE.tmp and renamed, so FILE is never partial\n"
     "  -q, --quiet          no summary on stderr\n"
     "\n"
     "A progress bar is drawn on stderr for long builds when it is a terminal.\n"
     "Exit status: 0 built, 2 error (a filter that fills up reports the key\n"
     "number and writes nothing)."},
    {"query", "amq query FILE [KEYFILE]",
     "Print every key of KEYFILE (or stdin) that may be in the filter FILE,\n"
     "one per line, in input order. The file is mapped and queried in place\n"
     "(zero copy) when possible.\n"
     "\n"
     "  -b, --binary         keys are little-endian u64s (8 bytes each);\n"
     "                       members are printed as decimal numbers\n"
     "      --skip-empty     ignore empty lines\n"
     "  -c, --count          print only the number of possible members\n"
     "  -v, --invert         print the keys that are certainly absent instead\n"
     "  -q, --quiet          print nothing; only the exit status\n"
     "\n"
     "Exit status: 0 if some key may be a member, 1 if none is, 2 on error\n"
     "(with --invert: 0 if some key is absent)."},
    {"info", "amq info [--json] FILE",
     "Describe a filter file: type, resolved parameters, hash, items,\n"
     "capacity, table bytes, bits per key, the certified false-positive\n"
     "bound at the current load, the target rate, the space lower bound\n"
     "log2(1/eps) bits per key (eps = the certified bound, or the target\n"
     "while the filter is empty) and the ratio bits/key / lower bound.\n"
     "\n"
     "  -j, --json           one JSON object instead of text\n"
     "\n"
     "Exit status: 0, or 2 if the file is unreadable, corrupt or truncated."},
    {"demo", "amq demo [--n N] [--fpr E] [--seed S] [--type SPEC]...",
     "Compare every registered type on built-in data: N pseudo-random 8-byte\n"
     "keys (splitmix64) are inserted through the generic interface and N\n"
     "distinct absent keys are queried. Each filter is saved, loaded back and\n"
     "must re-save to identical bytes; any false negative is an error.\n"
     "Prints a markdown table: bits/key, the lower bound log2(1/eps), the\n"
     "measured and certified false-positive rates, and ns per key for insert,\n"
     "single query and batch query (on pre-hashed keys; hashing is timed\n"
     "separately in the last column).\n"
     "\n"
     "  -n, --n N            keys per set (default 1000000; k/M suffixes)\n"
     "  -e, --fpr E          target false-positive rate (default 0.01)\n"
     "  -s, --seed S         key generator seed (default 42)\n"
     "  -t, --type SPEC      run only this spec (repeatable)\n"
     "\n"
     "Exit status: 0, or 2 on a false negative, a round-trip mismatch or a\n"
     "library error."},
    {"cascade",
     "amq cascade train|query|info|audit|features|eval [OPTIONS]",
     "The learned Bloom filter cascade with a certified bound\n"
     "(docs/cascade.md).\n"
     "\n"
     "train --members M --nonmembers N (--fpr E | --bits-per-key B) -o C\n"
     "  Learn a scorer on the two key files (one key per line; empty lines\n"
     "  skipped), split the score axis, size residual filters and write C.\n"
     "  --calib-frac F     share held out of training (default 0.5)\n"
     "  --levels L|auto    residual filters, tail guard included (default auto)\n"
     "  --residual SPEC    residual filter type (default sbbf)\n"
     "  --method M         cascade (default), lbf, sandwich, plbf\n"
     "  --partition P      optimal (default), equal-members, equal-mass\n"
     "  --bins B --eta E --dim-bits D --epochs N --quantize\n"
     "  --calibration none|platt|isotonic  --tail-weight G  --seed S\n"
     "  --tail guard|reject --delta D   reject the lowest scores (<= D members)\n"
     "  --aux N            room for N inserts before a rebuild\n"
     "  --headroom H       bins above tau_0 whose members are also stored\n"
     "query C [KEYFILE]    print keys that may be members (-c count, -v invert,\n"
     "                     -q quiet); exit 0 if some may be, 1 if none\n"
     "info [--json] C      intervals, p with its upper limit, n, bits, eps,\n"
     "                     the bound\n"
     "audit C --members M --nonmembers N [--rate R] [--seed S]\n"
     "                     shadow-sampling audit of C on labelled keys\n"
     "features [--dim-bits D] [--label 0|1] KEYFILE\n"
     "                     feature vectors in svmlight format\n"
     "eval [--data DIR] [--out DIR] [--only hosts,words,kv] [--quick]\n"
     "     [--resplits R] [--dim-bits D] [--kv-members N] [--residual SPEC]\n"
     "     [--dump DIR]  (the model's split and AUC, for the sklearn check)\n"
     "                     the tables of docs/cascade.md\n"
     "\n"
     "Exit status: 0 success, 2 bad input (empty sets, keys in both sets,\n"
     "an unreachable target, a file that is not a cascade); nothing is\n"
     "written on error."},
    {"clock", "amq clock simulate|eval [OPTIONS]",
     "Bloom clocks against vector-clock truth (docs/clock.md).\n"
     "\n"
     "simulate: N nodes; each step a random node may have an internal\n"
     "event and may send its timestamp (a send is an event); receives\n"
     "merge. Every compared pair's Bloom verdict is checked against exact\n"
     "causality and both claimed false-positive probabilities are scored.\n"
     "eval: simulate over N = 10 .. 100000 and (m, k) = (64,3), (256,4),\n"
     "(1024,6); prints a markdown table, calibration bins and throughput.\n"
     "\n"
     "  -n, --nodes N        node slots (default 100)\n"
     "  -m, --m M            Bloom clock cells (default 256)\n"
     "  -k, --k K            hashes per event (default 4)\n"
     "  -e, --events E       stop after E events (default 20000)\n"
     "  -t, --topology T     complete, ring or star (default complete)\n"
     "      --send-rate P    per step: probability of a send (default 0.5)\n"
     "      --internal P     per step: probability of an internal event (0.5)\n"
     "      --fanout F       peers per send (default 1)\n"
     "      --loss P         probability a message is lost (default 0)\n"
     "      --churn P        per step: a node leaves, a new one joins (0)\n"
     "      --history H      timestamps each node remembers (default 8)\n"
     "      --pairs P        comparisons after each event (default 2)\n"
     "      --threshold T    decide 'ordered' when claimed fp <= T (0.01)\n"
     "      --reservoir R    recent events kept for pairs (default 1024)\n"
     "      --vc-limit N     run real vector clocks up to N nodes (2048)\n"
     "  -s, --seed S         (default 42)\n"
     "  -j, --json           simulate: one JSON object\n"
     "      --quick          eval: N <= 1000, fewer events\n"
     "      --max-nodes N    eval: skip larger N\n"
     "      --svg FILE       eval: write the calibration plot\n"
     "\n"
     "Exit status: 0, or 2 on bad usage, an error, or an ordered pair\n"
     "reported concurrent (impossible by construction)."},
    {"help", "amq help [COMMAND | types]",
     "Show the overview, a command's help, or with 'types' every structure\n"
     "type with its spec parameters. 'amq COMMAND --help' works too."},
    {NULL, NULL, NULL},
};

static const help_topic *find_topic(const char *name)
{
    for (const help_topic *t = topics; t->name != NULL; t++)
        if (strcmp(t->name, name) == 0)
            return t;
    return NULL;
}

static void print_overview(FILE *out)
{
    fputs("amq — approximate membership filters\n\nusage:\n", out);
    for (const help_topic *t = topics; t->name != NULL; t++)
        fprintf(out, "  %s\n", t->usage);
    fputs("  amq --version\n"
          "\n"
          "'amq help COMMAND' describes a command, 'amq help types' lists the\n"
          "structure types. Exit status: 0 success, 1 query found no member,\n"
          "2 error or bad usage.\n",
          out);
}

bool cli_help_print(FILE *out, const char *command)
{
    if (command == NULL) {
        print_overview(out);
        return true;
    }
    const help_topic *t = find_topic(command);
    if (t == NULL)
        return false;
    fprintf(out, "usage: %s\n\n%s\n", t->usage, t->body);
    return true;
}

int cli_usage_error(const char *command, const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fprintf(stderr, "amq %s: ", command);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    const help_topic *t = find_topic(command);
    if (t != NULL)
        fprintf(stderr, "usage: %s\nTry 'amq help %s'.\n", t->usage, command);
    return CLI_EXIT_ERR;
}

static void print_caps(FILE *out, uint32_t caps)
{
    static const struct {
        uint32_t bit;
        const char *name;
    } names[] = {
        {AMQ_CAP_REMOVE, "remove"},     {AMQ_CAP_COUNT, "count"},
        {AMQ_CAP_UNION, "union"},       {AMQ_CAP_INTERSECT, "intersect"},
        {AMQ_CAP_CONCURRENT, "concurrent"}, {AMQ_CAP_ESTIMATE, "estimate"},
        {AMQ_CAP_STATIC, "static"},     {AMQ_CAP_SKETCH, "sketch"},
        {AMQ_CAP_FORGETS, "forgets"},
    };
    const char *sep = "";
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (caps & names[i].bit) {
            fprintf(out, "%s%s", sep, names[i].name);
            sep = ",";
        }
    if (*sep == 0)
        fputs("-", out);
}

static void print_types(FILE *out)
{
    size_t n = amq_filter_type_count();
    fprintf(out, "%zu structure types (spec: NAME[:key=value,...]):\n", n);
    for (size_t i = 0; i < n; i++) {
        const amq_type_info *t = amq_filter_type_at(i);
        if (t == NULL)
            continue;
        fprintf(out, "\n  %-12s %s\n", t->name, t->summary ? t->summary : "");
        fprintf(out, "  %-12s params: %s\n", "",
                t->params && *t->params ? t->params : "(none)");
        fprintf(out, "  %-12s id %u, capabilities: ", "", (unsigned)t->type_id);
        print_caps(out, t->caps);
        fputc('\n', out);
    }
}

int cli_cmd_help(int argc, char **argv)
{
    if (argc > 2)
        return cli_usage_error("help", "too many arguments");
    if (argc < 2) {
        print_overview(stdout);
        return CLI_EXIT_OK;
    }
    const char *topic = argv[1];
    if (strcmp(topic, "types") == 0) {
        print_types(stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(topic, "--help") == 0 || strcmp(topic, "-h") == 0)
        topic = "help";
    if (!cli_help_print(stdout, topic))
        return cli_usage_error("help", "no help for '%s'", topic);
    return CLI_EXIT_OK;
}
