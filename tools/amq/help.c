/*
 * help.c — `amq help [COMMAND|types]`, the text behind every --help, and
 * the usage message printed for bad arguments. The man page and the bash
 * completion are generated from these texts (manpage.c; `amq help --man`,
 * `amq help --completion`), so the three cannot disagree. docs/cli.md says
 * the same at greater length; keep the two in step.
 */
#include <stdarg.h>
#include <string.h>

#include "cli.h"

typedef cli_help_topic help_topic;

/* The options and exit status `add` and `remove` share. */
#define UPDATE_OPTIONS                                                         \
    "  -b, --binary         keys are little-endian u64s, 8 bytes each\n"       \
    "      --skip-empty     ignore empty lines\n"                              \
    "  -o, --output OUT     write the result to OUT instead of FILE\n"         \
    "      --progress       draw progress on stderr even when not a "          \
    "terminal\n"                                                               \
    "  -q, --quiet          no summary and no progress on stderr\n"            \
    "\n"                                                                       \
    "Exit status: 0, 2 on an error (FILE unchanged); add: 1 with --new\n"      \
    "when no key was new, 3 when FILE now holds more keys than its\n"          \
    "capacity and its bound is above its target (written, with a warning)."

static const help_topic topics[] = {
    {"build",
     "amq build [--type SPEC] [--fpr E] [--capacity N] [--keyed-hash] -o "
     "FILE [KEYFILE]",
     "Build a filter from keys and save it to FILE.\n"
     "\n"
     "Keys are read from KEYFILE (or stdin when absent or '-'), one per\n"
     "line, plain or gzip; a trailing \"\\n\" and then \"\\r\" are stripped,\n"
     "and an empty line is the empty key (--skip-empty ignores them).\n"
     "\n"
     "  -t, --type SPEC      structure spec NAME[:key=value,...], e.g. bloom,\n"
     "                       blocked, sbbf, bloom:k=5 (see 'amq help types');\n"
     "                       auto[:dynamic,deletes,counts] takes the type\n"
     "                       'amq recommend' picks for --fpr and says why;\n"
     "                       default auto:dynamic (the smallest type that\n"
     "                       takes keys later with 'amq add')\n"
     "  -e, --fpr E          target false-positive rate, 0 < E < 1 (default\n"
     "                       0.01; explicit sizes in SPEC take precedence)\n"
     "  -n, --capacity N     size for N keys and add keys while reading;\n"
     "                       without it all keys are read (and hashed) first\n"
     "                       and the filter is sized for their count\n"
     "      --keyed-hash     SipHash-2-4 with a fresh random 128-bit key, for\n"
     "                       keys an adversary may choose. The key is STORED\n"
     "                       IN FILE (written mode 0600): keep FILE secret\n"
     "      --hash KIND      xxh3, xxh64 or siphash (default: the type's)\n"
     "      --seed S         seed for xxh3 / xxh64 (default 0)\n"
     "  -b, --binary         keys are little-endian u64s, 8 bytes each; the\n"
     "                       8 bytes are hashed as they are\n"
     "      --skip-empty     ignore empty lines instead of adding the empty "
     "key\n"
     "  -u, --unique         add each distinct key once (static types always\n"
     "                       do); without it a dynamic filter holds every\n"
     "                       copy of a repeated key\n"
     "  -o, --output FILE    where to write ('-' for stdout); written to a\n"
     "                       temporary file and renamed, so FILE is never\n"
     "                       partial\n"
     "      --progress       draw progress even when stderr is not a terminal\n"
     "  -q, --quiet          no summary, notes or progress on stderr\n"
     "\n"
     "Progress (reading and hashing, in percent of KEYFILE; constructing;\n"
     "writing) is drawn on stderr for long builds when it is a terminal.\n"
     "Exit status: 0 built, 2 error (a filter that fills up reports the key\n"
     "number, says when the input repeats that key, and writes nothing),\n"
     "3 written but over capacity: more keys than --capacity and a bound\n"
     "above --fpr (a warning says what to rebuild with)."},
    {"query", "amq query FILE [KEYFILE | --key K...]",
     "Print every key of KEYFILE (or stdin) that may be in the filter FILE,\n"
     "one per line, in input order. The file is mapped and queried in place\n"
     "(zero copy) when possible.\n"
     "\n"
     "      --key K          query K (repeatable) instead of reading keys\n"
     "  -m, --mark           print every key as \"1<TAB>KEY\" (may be a\n"
     "                       member) or \"0<TAB>KEY\" (certainly absent)\n"
     "  -b, --binary         keys are little-endian u64s (8 bytes each);\n"
     "                       members are printed as decimal numbers\n"
     "      --skip-empty     ignore empty lines\n"
     "  -c, --count          print only the number of possible members\n"
     "  -v, --invert         print the keys that are certainly absent instead\n"
     "  -q, --quiet          print nothing; only the exit status\n"
     "      --json           a JSON record a line instead: {\"key\": K,\n"
     "                       \"member\": true|false} ({\"count\": N} with -c)\n"
     "\n"
     "Exit status: 0 if some key may be a member, 1 if none is, 2 on error\n"
     "(with --invert: 0 if some key is absent)."},
    {"add", "amq add FILE [KEYFILE | --key K...] [--new] [-o OUT]",
     "Add keys to an existing filter file (a dynamic type: bloom, blocked,\n"
     "sbbf, cuckoo, qf, ...). The file is loaded, every key is added, and\n"
     "the new filter replaces FILE (or is written to OUT) atomically: after\n"
     "an error or a crash FILE is as it was. A key that does not fit stops\n"
     "the run with its line number and nothing is written. Static types\n"
     "(xor, fuse, ribbon) are refused: rebuild them from all keys.\n"
     "\n"
     "      --key K          add K (repeatable) instead of reading keys\n"
     "      --new            test-and-add: print each key the filter did not\n"
     "                       already report, in order, and add only those\n"
     "                       (a key repeated in the input prints once)\n"
     "      --json           with --new: {\"key\": K, \"new\": true} "
     "lines\n" UPDATE_OPTIONS},
    {"remove", "amq remove FILE [KEYFILE | --key K...] [-o OUT]",
     "Remove keys from a filter file whose type deletes ('remove' among its\n"
     "capabilities in 'amq help types'; also spectral:mode=ms). Atomic like\n"
     "'amq add'.\n"
     "Remove only keys that were added: in a fingerprint filter a key never\n"
     "added may match and remove another key's fingerprint, which that key\n"
     "then misses. A key that is not in the filter is an error (nothing is\n"
     "written) unless --missing-ok.\n"
     "\n"
     "      --key K          remove K (repeatable) instead of reading keys\n"
     "      --missing-ok     skip keys that are not in the "
     "filter\n" UPDATE_OPTIONS},
    {"merge", "amq merge [--intersect] -o OUT FILE FILE...",
     "Union (or intersection) of filters built alike: same type, same\n"
     "parameters (amq info's params) and same hash, seed and key. The\n"
     "result answers yes for a key any input (every input) answers yes for,\n"
     "and is written to OUT atomically. Filters that differ are refused\n"
     "with both descriptions.\n"
     "\n"
     "  -o, --output OUT     where to write ('-' for stdout)\n"
     "      --intersect      intersection instead of union (Bloom family)\n"
     "  -q, --quiet          no summary on stderr\n"
     "\n"
     "Exit status: 0, 2 on an error (nothing written), 3 when a union\n"
     "holds more keys than its capacity and its bound is above its target\n"
     "(written, with a warning). An intersection's bound is the largest of\n"
     "its inputs' (a key in one input passes at the other's rate); it takes\n"
     "no more keys."},
    {"count", "amq count FILE [KEYFILE | --key K...] [--top N]",
     "Print how many times each key was added, as \"COUNT<TAB>KEY\" in input\n"
     "order, for the types that count (cms, topk, cqf, qf, cuckoo, vacuum,\n"
     "counting, dleft, spectral). Count-Min and the fingerprint filters\n"
     "never undercount; topk (HeavyKeeper) never overcounts.\n"
     "\n"
     "      --key K          count K (repeatable) instead of reading keys\n"
     "      --top N          only the N distinct keys with the largest "
     "counts,\n"
     "                       largest first (0: all); for topk, the keys in\n"
     "                       its heavy-hitter list\n"
     "  -b, --binary         keys are little-endian u64s; printed as numbers\n"
     "      --skip-empty     ignore empty lines\n"
     "      --json           {\"key\": K, \"count\": N} lines instead\n"
     "\n"
     "Exit status: 0, or 2 on an error or a type that does not count."},
    {"info", "amq info [--json] FILE...",
     "Describe filter files: type, resolved parameters, hash, items,\n"
     "capacity, table bytes, bits per key, the certified false-positive\n"
     "bound at the current load, the target rate, the space lower bound\n"
     "log2(1/eps) bits per key (eps = the certified bound, or the target\n"
     "while the filter is empty) and the ratio bits/key / lower bound.\n"
     "\n"
     "Several files are described one after the other (a blank line\n"
     "between them); a file that cannot be read is reported and skipped.\n"
     "\n"
     "      --json           one JSON object per file (an array for several);\n"
     "                       numbers in their shortest exact form\n"
     "\n"
     "Exit status: 0, or 2 if a file is unreadable, corrupt or truncated."},
    {"recommend",
     "amq recommend -n N [--fpr E] [--deletes] [--counts] [--static]",
     "Which type to build for N keys at false-positive rate E, and why: a\n"
     "table of every type that meets the need, with the bits per key its\n"
     "curve needs for E, the memory for N keys and the memory reads per\n"
     "query, then the smallest (recommended) and the fastest (fewest reads).\n"
     "Fixed-width static types (xor8, fuse16, ...) whose rate E cannot\n"
     "change are shown at the rate they really give, and a type that meets\n"
     "E in fewer bits is named.\n"
     "\n"
     "  -n, --capacity N     number of keys (k/M/G suffixes)\n"
     "  -e, --fpr E          target false-positive rate, 0 < E < 1 (default\n"
     "                       0.01)\n"
     "      --deletes        keys will be removed: types that delete\n"
     "      --counts         multiplicities are needed: types that count\n"
     "      --static         every key is known before the build: static\n"
     "                       types (xor, fuse, ribbon) may be chosen\n"
     "  -q, --quiet          print only the recommended type's name\n"
     "      --json           the need, every candidate (type, bits_per_key,\n"
     "                       bytes, reads_per_query, fpr, fixed_width), the\n"
     "                       types not considered and why, the two picks\n"
     "\n"
     "Exit status: 0, or 2 on bad usage or when no type meets the need."},
    {"demo", "amq demo [-n N] [--fpr E] [--seed S] [--type SPEC]...",
     "Compare every registered type on built-in data: N pseudo-random 8-byte\n"
     "keys (splitmix64) are inserted through the generic interface and N\n"
     "distinct absent keys are queried. Each filter is saved, loaded back and\n"
     "must re-save to identical bytes; any false negative is an error.\n"
     "Prints a markdown table: bits/key, the lower bound log2(1/eps), the\n"
     "measured and certified false-positive rates, and ns per key for insert,\n"
     "single query and batch query (on pre-hashed keys; hashing is timed\n"
     "separately in the last column).\n"
     "\n"
     "  -n, --capacity N     keys per set (default 1000000; k/M suffixes)\n"
     "  -e, --fpr E          target false-positive rate (default 0.01)\n"
     "  -s, --seed S         key generator seed (default 42)\n"
     "  -t, --type SPEC      run only this spec (repeatable)\n"
     "\n"
     "Exit status: 0, or 2 on a false negative, a round-trip mismatch or a\n"
     "library error."},
    {"cascade", "amq cascade train|query|info|audit|features|eval [OPTIONS]",
     "The learned Bloom filter cascade with a certified bound\n"
     "(docs/cascade.md).\n"
     "\n"
     "train --members M --nonmembers N (-e, --fpr E | -B, --bits-per-key B)\n"
     "      -o C\n"
     "  Learn a scorer on the two key files (one key per line; empty lines\n"
     "  skipped), split the score axis, size residual filters and write C.\n"
     "  --calib-frac F     share held out of training (default 0.5)\n"
     "  -L, --levels L|auto  residual filters, tail guard included (default "
     "auto)\n"
     "  -r, --residual SPEC  residual filter type (default sbbf)\n"
     "  --method M         cascade (default), lbf, sandwich, plbf\n"
     "  --partition P      optimal (default), equal-members, equal-mass\n"
     "  --bins B --eta E --dim-bits D --epochs N --quantize\n"
     "  --calibration none|platt|isotonic  --tail-weight G  --seed S\n"
     "  --tail guard|reject --delta D   reject the lowest scores (<= D "
     "members)\n"
     "  --aux N            room for N inserts before a rebuild\n"
     "  --headroom H       bins above tau_0 whose members are also stored\n"
     "query C [KEYFILE]    print keys that may be members (-c count, -v "
     "invert,\n"
     "                     -q quiet, --json records); exit 0 if some may\n"
     "                     be, 1 if none\n"
     "info [--json] C      intervals, p with its upper limit, n, bits, eps,\n"
     "                     the bound\n"
     "audit C --members M --nonmembers N [--rate R] [--seed S] [--json]\n"
     "                     shadow-sampling audit of C on labelled keys;\n"
     "                     exit 4 when it finds the bound VIOLATED\n"
     "features [--dim-bits D] [--label 0|1] KEYFILE\n"
     "                     feature vectors in svmlight format\n"
     "eval [--data DIR] [--out DIR] [--only hosts,words,kv] [--quick]\n"
     "     [--resplits R] [--dim-bits D] [--kv-members N] [--residual SPEC]\n"
     "     [--dump DIR]  (the model's split and AUC, for the sklearn check)\n"
     "                     the tables of docs/cascade.md\n"
     "\n"
     "Exit status: 0 success, 1 (query: no key may be a member), 2 bad\n"
     "input (empty sets, keys in both sets, a target the held-out keys\n"
     "cannot certify, a file that is not a cascade; nothing is written),\n"
     "4 (audit: the bound is violated: rebuild, or fall back to a plain\n"
     "filter)."},
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
     "      --nodes N        node slots (default 100)\n"
     "      --m M            Bloom clock cells (default 256)\n"
     "      --k K            hashes per event (default 4)\n"
     "      --events E       stop after E events (default 20000)\n"
     "      --topology T     complete, ring or star (default complete)\n"
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
     "      --json           simulate: one JSON object\n"
     "      --quick          eval: N <= 1000, fewer events\n"
     "      --max-nodes N    eval: skip larger N\n"
     "      --svg FILE       eval: write the calibration plot\n"
     "\n"
     "Exit status: 0, or 2 on bad usage, an error, or an ordered pair\n"
     "reported concurrent (impossible by construction)."},
    {"map", "amq map build|get|add|del|merge [OPTIONS]",
     "Maplets: approximate maps from keys to small values (docs/maplets.md).\n"
     "Input lines are key<TAB>value; the key is every byte before the tab,\n"
     "the value a decimal number below 2^B, or for --op or a comma list of\n"
     "ids below B (a set). A bad line stops the run naming the file, line\n"
     "and byte; nothing is written and an existing FILE stays as it was.\n"
     "\n"
     "  amq map build --op OP --value-bits B --fpr E -o FILE [PAIRS]\n"
     "      OP: sum (counts; delete subtracts), max, min, or (sets)\n"
     "      -t, --type SPEC   maplet (default), maplet:kbits=.. or smaplet\n"
     "                        (static: Ribbon retrieval + membership filter)\n"
     "      --multiset        one slot per pair: del works for every OP\n"
     "      -n, --capacity N  room for N pairs (default: the pairs read)\n"
     "  amq map get FILE [KEYFILE | --key K...] [--raw] [--json]\n"
     "      prints key<TAB>value for every key found (sets as id lists,\n"
     "      --raw: the bit mask; --json: {\"key\", \"value\" or \"ids\"}\n"
     "      lines); exit 0 if some key was found, 1 if none\n"
     "  amq map add FILE [PAIRS] [-o OUT]   put pairs; a full maplet is\n"
     "      resized (twice the slots) and the new bound reported\n"
     "  amq map del FILE [PAIRS] [-o OUT]   undo pairs (sum, multiset)\n"
     "  amq map merge A B -o C              same op, width, shape, hasher\n"
     "\n"
     "  -q, --quiet          no summary on stderr\n"
     "\n"
     "Exit status: 0, 1 (get: no key found), 2 on any error."},
    {"kmer", "amq kmer count|query|histo|dump|index|search [OPTIONS]",
     "k-mers of FASTA/FASTQ files (plain or gzip) in maplets; any base\n"
     "but ACGT (either case) breaks the k-mer window, as jellyfish does.\n"
     "\n"
     "  amq kmer count -k K [-C] [-j T] [--exact | --fpr E] -o F FILE...\n"
     "      counts (sum); -C canonical (the smaller strand); --exact\n"
     "      (default, k <= 32): fingerprints are the k-mers, counts exact;\n"
     "      -j T threads; --value-bits B (default 1); -n N distinct k-mers\n"
     "      to size for (default: grows as needed)\n"
     "  amq kmer query F [KMERS | SEQFILE]   KMER<TAB>count, absent = 0\n"
     "  amq kmer histo F                     'count frequency' lines, as\n"
     "                                       jellyfish histo\n"
     "  amq kmer dump F                      KMER<TAB>count (exact only)\n"
     "      (query, histo, dump, search: --json for JSON lines)\n"
     "  amq kmer index -k K [--fpr E] -o IDX FILE...   k-mer -> the set of\n"
     "      files holding it (at most 64 files; names in IDX.names)\n"
     "  amq kmer search IDX QUERY.fa [--theta T]   files holding at least\n"
     "      a share T (default 0.8) of each query's distinct k-mers:\n"
     "      query<TAB>file<TAB>share\n"
     "\n"
     "Exit status: 0, 1 (search: no file matched), 2 on any error (a bad\n"
     "record, corrupt gzip: the message names the line or byte)."},
    {"shard", "amq shard plan|slot|route [OPTIONS]",
     "One logical filter over the shards of a Redis Cluster with one\n"
     "false-positive budget (docs/redis.md, 'Sharded filter').\n"
     "\n"
     "  amq shard plan --type SPEC --fpr E --keys N1,N2,... [--queries\n"
     "      Q1,Q2,...] [--name NAME] [--slots LO-HI,...] [--commands]\n"
     "  amq shard slot KEY...\n"
     "  amq shard route --shards S [KEYFILE]\n"
     "\n"
     "plan: shard s holds N_s items and answered Q_s of the queries for\n"
     "absent items (measured; equal shares when omitted). Splits the target\n"
     "rate E so that sum_s share_s * fpr_s <= E at the least total memory,\n"
     "with the allocation engine over the type's real curve, and prints each\n"
     "shard's key NAME{TAG} (TAG puts it in its --slots range, default: S\n"
     "equal ranges), spec, rate and bits per key, and the uniform split's\n"
     "memory for comparison.\n"
     "  -t, --type SPEC      structure type (bloom, cuckoo, qf, ...)\n"
     "  -e, --fpr E          target rate over absent-item queries\n"
     "  -n, --keys LIST      items per shard, comma-separated\n"
     "      --queries LIST   absent-item queries per shard (any scale)\n"
     "      --name NAME      logical filter name (default filter)\n"
     "      --slots LIST     one slot range LO-HI per shard (CLUSTER SLOTS)\n"
     "      --commands       print only the AMQ.RESERVE lines for redis-cli\n"
     "      --shards S       route: the number of shards, 1..1024\n"
     "      --json           plan, slot, route: JSON instead of text\n"
     "slot: the cluster slot of each KEY (as CLUSTER KEYSLOT).\n"
     "route: the shard (0..S-1) of each key of KEYFILE (or stdin).\n"
     "\n"
     "Exit status: 0, or 2 on bad usage or an impossible target."},
    {"lsm", "amq lsm plan|simulate [OPTIONS]",
     "Bits per key for each run of an LSM tree (Monkey), and the laws of\n"
     "filter-memory tuning reproduced (docs/lsm.md).\n"
     "\n"
     "plan: the allocation engine's choice per run against the same bits\n"
     "everywhere, each run with the spec to build and its predicted rate.\n"
     "      --csv FILE       runs as name,keys,lookups rows ('-': stdin)\n"
     "  -L, --levels L       or a leveled tree of L levels (default 5)\n"
     "  -T, --ratio T        size ratio (default 10), level 1 the smallest\n"
     "  -n, --keys N         keys in all levels (default 1e6)\n"
     "  -w, --workload W     uniform, zipf:S or weights:a,b,... (normalised)\n"
     "  -B, --bits-per-key B memory budget per key (required)\n"
     "      --curve C        model (e^(-c b)) or a type spec (default bloom)\n"
     "      --c X            the model's exponent (default (ln 2)^2)\n"
     "      --json           runs, cost_uniform, cost_optimal as JSON\n"
     "\n"
     "simulate --law h0|loglaw|robustness|frontier|curves: the paper's\n"
     "setup by default, a markdown table of closed form against simulation.\n"
     "      --curve C        model (default) or a type spec\n"
     "      --svg FILE       write the law's plot\n"
     "      --json           one JSON object\n"
     "  -s, --seed S         (defaults: loglaw 0, robustness 1, frontier 2)\n"
     "      --quick          small sizes (tests)\n"
     "  h0:         --levels 5 --ratio 10 --keys 1e6 --bits-per-key 8\n"
     "              --weights 100,50,10,2,1\n"
     "  loglaw:     --runs 50 --alpha 0.3 --bits-per-key 8\n"
     "  robustness: --segments 64 --bits-per-key 10 --skew 0.9 --draws 600\n"
     "              --scale 0.02,0.25 (sd range of the log errors)\n"
     "  frontier:   --segments 64 --keys 1e6 --bits-per-key 10 --epoch 30\n"
     "              --steps 1500 --warmup 100 --theta 0.03 --skew 0.9\n"
     "              --sigmas 0.01,1.2,18 --drift walk|linear\n"
     "  curves:     --types bloom,blocked,... --range 2,20,1 (bits/key)\n"
     "              --build-keys 1e6 --queries 1e7\n"
     "\n"
     "Exit status: 0, or 2 on bad usage or input (a CSV error names the\n"
     "line and byte)."},
    {"help",
     "amq help [COMMAND | types | examples | --man | --completion [SHELL]]",
     "Show the overview, a command's help, with 'types' every structure\n"
     "type with its spec parameters, or with 'examples' a session from a\n"
     "key file to merged filters. 'amq COMMAND --help' works too.\n"
     "\n"
     "      --man            print the manual page amq(1) in roff, made from\n"
     "                       these help texts ('make install' installs it)\n"
     "      --completion SHELL  print the completion script for bash\n"
     "                       (default), zsh or fish ('make install' installs\n"
     "                       all three)"},
    {NULL, NULL, NULL},
};

static const help_topic *find_topic(const char *name) {
    for (const help_topic *t = topics; t->name != NULL; t++)
        if (strcmp(t->name, name) == 0)
            return t;
    return NULL;
}

const cli_help_topic *cli_help_topics(void) { return topics; }

const char *cli_help_epilogue(void) {
    return "'amq help COMMAND' describes a command, 'amq help types' lists "
           "the\n"
           "structure types. Exit status: 0 success, 1 nothing found (query,\n"
           "map get, kmer search, add --new), 2 error or bad usage, 3 written\n"
           "but over capacity (build, add, merge), 4 an audit rejects the\n"
           "certified bound (cascade audit).\n";
}

static void print_overview(FILE *out) {
    fputs("amq — approximate membership filters\n\nusage:\n", out);
    for (const help_topic *t = topics; t->name != NULL; t++)
        fprintf(out, "  %s\n", t->usage);
    fputs("  amq --version\n\n", out);
    fputs(cli_help_epilogue(), out);
}

bool cli_help_print(FILE *out, const char *command) {
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

int cli_usage_error(const char *command, const char *fmt, ...) {
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

static void print_caps(FILE *out, uint32_t caps) {
    static const struct {
        uint32_t bit;
        const char *name;
    } names[] = {
        {AMQ_CAP_REMOVE, "remove"},         {AMQ_CAP_COUNT, "count"},
        {AMQ_CAP_UNION, "union"},           {AMQ_CAP_INTERSECT, "intersect"},
        {AMQ_CAP_CONCURRENT, "concurrent"}, {AMQ_CAP_ESTIMATE, "estimate"},
        {AMQ_CAP_STATIC, "static"},         {AMQ_CAP_SKETCH, "sketch"},
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

static void print_types(FILE *out) {
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

int cli_help_command(int argc, char **argv) {
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
    else if (topic[0] == '-')
        return cli_usage_error("help", "unknown option '%s'", topic);
    if (!cli_help_print(stdout, topic))
        return cli_usage_error("help", "no help for '%s'", topic);
    return CLI_EXIT_OK;
}
