/*
 * help.c — the amq tool's help texts: one topic a verb (the text behind
 * `amq help COMMAND` and every --help), the overview's epilogue, and the
 * examples session. tools/common prints them (help.c), turns them into
 * the man page and the completion scripts (manpage.c) and names them in
 * usage errors, so the three cannot disagree. docs/cli.md says the same at
 * greater length; keep the two in step.
 */
#include "verbs.h"

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
     "amq build [--type SPEC] [--fpr E] [--capacity N] [--keyed-hash] "
     "[-j N] -o FILE [KEYFILE]",
     "Build a filter from keys and save it to FILE.\n"
     "\n"
     "Keys are read from KEYFILE (or stdin when absent or '-'), one per\n"
     "line, plain, gzip, xz or bzip2; a trailing \"\\n\" and then \"\\r\" are "
     "stripped,\n"
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
     "  -j, --threads N      sort and build on N threads (default 0: one per\n"
     "                       core, at most 16); the file is the same for\n"
     "                       every N. Without --capacity only: adds to a\n"
     "                       filter sized in advance run on one thread\n"
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
     "an error or a crash FILE is as it was. A qf (what 'amq build' makes\n"
     "by default) that is full goes on as an eqf, which holds what it held\n"
     "and doubles as keys arrive; in other types a key that does not fit\n"
     "stops the run with its line number and nothing is written. Static\n"
     "types (xor, fuse, ribbon) are refused: rebuild them from all keys.\n"
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
    {"adapt", "amq adapt FILE [KEYFILE | --key K...] [-o OUT]",
     "Report false positives to an adaptive filter (type aqf): each key is\n"
     "one the filter answered 'maybe' for and the store behind it did not\n"
     "have. The filter answers 'no' for it from then on and still 'yes' for\n"
     "every member. A key it already answers 'no' for is counted and\n"
     "skipped; a key that is a member is an error (nothing is written).\n"
     "Atomic like 'amq add'.\n"
     "\n"
     "      --key K          report K (repeatable) instead of reading "
     "keys\n" UPDATE_OPTIONS},
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
     "A sliding-window filter's file is described as a window: clock,\n"
     "span, generations, live items, bytes and the bound at its clock.\n"
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
    {"cascade", "amq cascade train|query|info|audit|features [OPTIONS]",
     "The learned Bloom filter cascade with a certified bound\n"
     "(docs/cascade.md).\n"
     "\n"
     "train --members M --nonmembers N (-e, --fpr E | -B, --bits-per-key B)\n"
     "      -o C\n"
     "  Learn a scorer on the two key files (one key per line; empty lines\n"
     "  skipped), split the score axis, size residual filters and write C.\n"
     "  With no flags training chooses the model (2^8..2^18, int8 or\n"
     "  float), the residual type, the bins, or no model at all, and keeps\n"
     "  the smallest file: never more than the best plain filter, which it\n"
     "  writes (a filter's own frame) when no learned cascade is smaller.\n"
     "  A flag pins its choice.\n"
     "  --calib-frac F     share held out of training (default 0.5)\n"
     "  -L, --levels L|auto  residual filters, tail guard included (default "
     "auto)\n"
     "  -r, --residual SPEC  residual filter type (default: chosen)\n"
     "  --learned          always a learned cascade, never a plain filter\n"
     "  --worst-case E     an initial filter at rate E in front: the FPR is\n"
     "                     at most E for any query distribution, and the\n"
     "                     fallback (that bound in force) is available\n"
     "  --dim-bits D, --quantize, --float   pin the model (2^D weights,\n"
     "                     int8 or float)\n"
     "  --method M         cascade (default), lbf, sandwich, plbf\n"
     "  --partition P      optimal (default), equal-members, equal-mass\n"
     "  --bins B --eta E --epochs N\n"
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
     "\n"
     "The measurements of docs/cascade.md: 'amq-lab cascade eval'.\n"
     "\n"
     "Exit status: 0 success, 1 (query: no key may be a member), 2 bad\n"
     "input (empty sets, keys in both sets, a target the held-out keys\n"
     "cannot certify, a file that is not a cascade; nothing is written),\n"
     "4 (audit: the bound is violated: rebuild, or fall back to a plain\n"
     "filter)."},
    {"map", "amq map build|get|add|del|merge [OPTIONS]",
     "Maplets: approximate maps from keys to small values (docs/maplets.md).\n"
     "Input lines are key<TAB>value; the key is every byte before the tab,\n"
     "the value a decimal number below 2^B, or for --op or a comma list of\n"
     "ids below B (a set). A bad line stops the run naming the file, line\n"
     "and byte; nothing is written and an existing FILE stays as it was.\n"
     "\n"
     "  amq map build --op OP --value-bits B --fpr E -o FILE [PAIRS]\n"
     "      OP: sum (counts; delete subtracts), max, min, or (sets)\n"
     "      -t, --type SPEC   maplet (default), maplet:kbits=.., emaplet\n"
     "                        (doubles when full, its rate kept) or smaplet\n"
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
    {"kmer", "amq kmer count|query|histo|dump|merge|index|search [OPTIONS]",
     "k-mers of FASTA/FASTQ files (plain, gzip, xz or bzip2) in maplets;\n"
     "any base but ACGT (either case) breaks the k-mer window, as\n"
     "jellyfish does.\n"
     "\n"
     "  amq kmer count -k K [-C] [-j T] [--exact | --fpr E] -o F FILE...\n"
     "      counts (sum); -C canonical (the smaller strand); --exact\n"
     "      (default, k <= 32): fingerprints are the k-mers, counts exact;\n"
     "      -j T threads (default: every CPU); sized by a first pass over\n"
     "      the files (distinct k-mers and their counts), which also picks\n"
     "      --value-bits B (the smallest table); -n N: about N distinct\n"
     "      k-mers, no first pass, B = 8 unless given (stdin: grows);\n"
     "      -L N / -U N keep k-mers counted N times or more / at most;\n"
     "      -Q C: a FASTQ base of quality below character C breaks the\n"
     "      window (as jellyfish -Q); --memory BYTES (e.g. 4G; default 80%\n"
     "      of RAM): refuse a table, or its growth, past it\n"
     "  amq kmer query F [KMERS | SEQFILE]   KMER<TAB>count, absent = 0\n"
     "  amq kmer histo F [-L N] [-U N]       'count frequency' lines, as\n"
     "                                       jellyfish histo\n"
     "  amq kmer dump F [-L N] [-U N]        KMER<TAB>count (exact only)\n"
     "      (query, histo, dump, search: --json for JSON lines)\n"
     "  amq kmer merge -o F A B...           the joint count of tables\n"
     "      counted apart, exact ones whatever their shapes (-L/-U too)\n"
     "  amq kmer index -k K [--fpr E] -o IDX FILE...   k-mer -> the set of\n"
     "      files holding it, any number of files (-j T threads; colour\n"
     "      classes in IDX.classes, names in IDX.names)\n"
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
    {"range", "amq range build|add|remove|query [OPTIONS]",
     "Range filters: may any key lie in [LO, HI]? (docs/structures.md,\n"
     "'Range filters').\n"
     "\n"
     "  amq range build [--type T] [--fpr E] [--range L] -o FILE [KEYFILE]\n"
     "  amq range add|remove [-q] FILE [KEYFILE]\n"
     "  amq range query [--count] FILE [RANGEFILE]\n"
     "\n"
     "build: a range filter over the keys of KEYFILE (or stdin), one a\n"
     "line, decimal or 0x hex integers. A range of L keys none of which was\n"
     "added answers yes with probability at most E (l E / L for l keys\n"
     "with grafite, twice E a further L keys with memento), whatever the\n"
     "keys and queries, for queries made without the filter's seed (drawn\n"
     "at random unless --seed is given).\n"
     "  -t, --type T         grafite (default: static, the smallest) or\n"
     "                       memento (takes add and remove, grows)\n"
     "  -e, --fpr E          rate for ranges of L keys (default 0.01)\n"
     "      --range L        the range length E is for (default 1)\n"
     "      --strings        keys are byte strings, kept in order by their\n"
     "                       first 8 bytes (a prefix of p bytes spans\n"
     "                       2^(64-8p) keys: size --range for it)\n"
     "      --seed S         a fixed seed (the same file every time)\n"
     "  -o, --output FILE    where to write the filter\n"
     "  -q, --quiet          no summary on stderr\n"
     "add, remove: keys (in the filter's form) into or out of a memento\n"
     "file, written back only when every one went in or out.\n"
     "query: one range a line, 'LO HI' (or one key 'K'; the ends are split\n"
     "by a tab when the filter was built with --strings); prints the lines\n"
     "whose range may hold a key.\n"
     "  -c, --count          print only how many may\n"
     "\n"
     "Exit status: 0, 1 (query: no range may hold a key), 2 on any error\n"
     "(a line that is not a range: the message names it)."},
    {"parquet", "amq parquet info|probe|index|lookup|add-filter [OPTIONS]",
     "The Bloom filters of Parquet files, and one index over many files\n"
     "(docs/maplets.md, 'Parquet').\n"
     "\n"
     "  amq parquet info FILE...\n"
     "  amq parquet probe --column COLUMN [--key K... | -k KEYFILE] FILE...\n"
     "  amq parquet index --column COLUMN [--fpr E] -o DIR FILE...\n"
     "  amq parquet lookup [--key K... | -k KEYFILE] DIR\n"
     "  amq parquet add-filter --column COLUMN [--fpr E] -o OUT FILE\n"
     "\n"
     "info: each file's row groups and columns, with the split-block Bloom\n"
     "filters the writer put in them (bytes, certified bound).\n"
     "probe: for each key, a line 'KEY<tab>FILE<tab>GROUP' per row group\n"
     "whose Bloom filter for COLUMN may hold it (a chunk without a filter\n"
     "always may). Keys are one a line (stdin unless --key or -k), in the\n"
     "column's physical type: integers in decimal, floats as written,\n"
     "strings as their bytes.\n"
     "index: reads COLUMN's values from every row group (dictionaries and\n"
     "data pages: snappy, gzip, zstd, lz4_raw or none; PLAIN, dictionary,\n"
     "delta and byte-stream-split encodings) into one routing maplet, key\n"
     "-> row groups, written with its catalog into the directory DIR.\n"
     "lookup: the same lines as probe, from the index: one probe a key,\n"
     "every row group holding it, and each other one with probability at\n"
     "most E (the index's bound).\n"
     "add-filter: writes OUT, a copy of FILE with a split-block Bloom filter\n"
     "for COLUMN in every row group at rate E, as Parquet readers (DuckDB,\n"
     "Arrow, Spark) use them; the pages are copied unchanged. OUT may be\n"
     "FILE (replaced when complete).\n"
     "      --column NAME    the column (its dotted path for nested ones)\n"
     "      --key K          a key (repeatable)\n"
     "  -k, --keys FILE      the keys, one a line\n"
     "      --count          one line a key: KEY<tab>row groups\n"
     "  -e, --fpr E          index: the maplet's rate; add-filter: the\n"
     "                       filters' (default 0.01)\n"
     "  -o, --output DIR     index: the directory to write; add-filter: the\n"
     "                       file\n"
     "  -q, --quiet          index, add-filter: no summary on stderr\n"
     "\n"
     "Exit status: 0, 1 (probe, lookup: no key may be in any row group), 2\n"
     "on any error (a file that is not Parquet, a key that is not a value\n"
     "of the column, an index whose files have changed)."},
    {"lsm", "amq lsm plan [OPTIONS]",
     "Bits per key for each run of an LSM tree (Monkey): the allocation\n"
     "engine's choice per run against the same bits everywhere, each run\n"
     "with the spec to build and its predicted rate (docs/lsm.md).\n"
     "\n"
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
     "The laws of filter-memory tuning, reproduced: 'amq-lab lsm simulate'.\n"
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

/* A session from a key file to every kind of answer: the man page's
 * EXAMPLES, `amq help examples`, and run as written by the CLI tests. */
static const char *const examples[] = {
    "seq 1 100000 > keys.txt",
    "amq build -o users.amq keys.txt",
    "amq info users.amq",
    "amq query users.amq --key 17 --key not-a-key --mark",
    "printf '17\\nnew-user\\nnew-user\\n' | amq add --new users.amq",
    "gzip -k keys.txt && amq build --type cuckoo -o c.amq keys.txt.gz",
    "amq remove c.amq --key 17",
    "amq recommend -n 1e6 --deletes",
    "seq 1 50000 > a.txt && seq 25000 75000 > b.txt",
    "amq build -t bloom -n 100000 -o a.amq a.txt",
    "amq build -t bloom -n 100000 -o b.amq b.txt",
    "amq merge -o union.amq a.amq b.amq",
    "amq merge --intersect -o both.amq a.amq b.amq",
    "amq build -t cms -e 0.001 -o counts.amq keys.txt",
    "amq count counts.amq --key 17 --json",
    NULL,
};

const cli_tool cli_tool_self = {
    .name = "amq",
    .title = "amq — approximate membership filters",
    .summary = "build, query, update and inspect approximate membership "
               "filters",
    .description =
        "amq builds filters (Bloom family, cuckoo, quotient, xor, binary "
        "fuse, Ribbon, sketches) from keys, one per line, saves them in one "
        "checksummed frame, and queries, updates, merges and describes the "
        "saved files. Every command accepts -h and --help. The experiments "
        "and evaluations (demo, clock, lsm simulate, cascade eval) are "
        "amq-lab(1).",
    .topics = topics,
    .epilogue =
        "'amq help COMMAND' describes a command, 'amq help types' lists the\n"
        "structure types. Exit status: 0 success, 1 nothing found (query,\n"
        "map get, kmer search, add --new), 2 error or bad usage, 3 written\n"
        "but over capacity (build, add, merge), 4 an audit rejects the\n"
        "certified bound (cascade audit). Experiments and evaluations (demo,\n"
        "clock, lsm simulate, cascade eval): amq-lab.\n",
    .see_also = "amq-lab(1). The documentation in the source tree: "
                "docs/cli.md (this tool), docs/structures.md, "
                "docs/format.md, and the C headers amq/amq.h and "
                "amq/filter.h.",
    .examples = examples,
    .examples_intro = "From a key file to a filter, its answers, updates and "
                      "merges ('amq help examples' prints the same lines):",
    .types = true,
};
