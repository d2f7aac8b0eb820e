/*
 * help.c — amq-lab's help texts: one topic a command (the text behind
 * `amq-lab help COMMAND` and every --help) and the overview's epilogue;
 * tools/common prints them, names them in usage errors and turns them
 * into the man page amq-lab(1) and the completion scripts. docs/cli.md
 * ("amq-lab") says the same at greater length; keep the two in step.
 */
#include "lab.h"

typedef cli_help_topic help_topic;

static const help_topic topics[] = {
    {"demo", "amq-lab demo [-n N] [--fpr E] [--seed S] [--type SPEC]...",
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
     "  -t, --type SPEC      run only this spec (repeatable; 'amq help types'\n"
     "                       lists them)\n"
     "\n"
     "Exit status: 0, or 2 on a false negative, a round-trip mismatch or a\n"
     "library error."},
    {"clock", "amq-lab clock simulate|eval [OPTIONS]",
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
    {"lsm",
     "amq-lab lsm simulate --law h0|loglaw|robustness|frontier|curves "
     "[OPTIONS]",
     "The laws of LSM filter-memory tuning reproduced with the paper's\n"
     "setups (docs/lsm.md): a markdown table of closed form against\n"
     "simulation ('amq lsm plan' plans a real tree).\n"
     "\n"
     "  -l, --law LAW        h0, loglaw, robustness, frontier or curves\n"
     "      --curve C        model (default) or a type spec\n"
     "      --c X            the model's exponent (default (ln 2)^2)\n"
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
     "Exit status: 0, or 2 on bad usage, an unknown law or type, or a plot\n"
     "that cannot be written."},
    {"cascade",
     "amq-lab cascade eval [--data DIR] [--out DIR] [--only LIST] [--quick]",
     "The measurements of the learned Bloom filter cascade behind\n"
     "docs/cascade.md, on the key sets scripts/fetch-cascade-data.sh\n"
     "fetches into DIR and on synthetic key-value keys ('amq cascade'\n"
     "trains and queries cascades).\n"
     "\n"
     "      --data DIR       the fetched key sets (default cascade-data)\n"
     "      --out DIR        also write DIR/cascade-eval.md and the plots\n"
     "      --only LIST      some of hosts, words, kv (default all)\n"
     "      --quick          fewer re-splits and key-value keys\n"
     "      --resplits R     bound-coverage re-splits (default 100)\n"
     "      --dim-bits D     the model's 2^D weights (default 14)\n"
     "      --kv-members N   synthetic members (default 50000)\n"
     "      --residual SPEC  residual filter type (default sbbf)\n"
     "      --dump DIR       the model's split and AUC, for the sklearn\n"
     "                       check (bench/cascade/sklearn_auc.py)\n"
     "\n"
     "Exit status: 0, or 2 on bad usage or an error."},
    {"help", "amq-lab help [COMMAND | --man | --completion [SHELL]]",
     "Show the overview or a command's help. 'amq-lab COMMAND --help' works\n"
     "too.\n"
     "\n"
     "      --man            print the manual page amq-lab(1) in roff, made\n"
     "                       from these help texts ('make install' installs "
     "it)\n"
     "      --completion SHELL  print the completion script for bash\n"
     "                       (default), zsh or fish ('make install' installs\n"
     "                       all three)"},
    {NULL, NULL, NULL},
};

const cli_tool cli_tool_self = {
    .name = "amq-lab",
    .title = "amq-lab — experiments and evaluations over the amq library",
    .summary = "experiments and evaluations over approximate membership "
               "filters",
    .description =
        "amq-lab runs the experiments behind amq's documentation: every "
        "structure type on built-in data (demo), Bloom clocks against "
        "vector clocks (clock), the laws of LSM filter-memory tuning "
        "(lsm simulate) and the learned cascade's evaluation (cascade "
        "eval). The user's tool is amq(1). Every command accepts -h and "
        "--help.",
    .topics = topics,
    .epilogue =
        "'amq-lab help COMMAND' describes a command. Exit status: 0 success,\n"
        "2 error or bad usage (demo: a false negative or a round trip that\n"
        "differs; clock: an ordered pair reported concurrent).\n",
    .see_also = "amq(1). The documentation in the source tree: docs/cli.md "
                "(amq-lab), docs/clock.md, docs/lsm.md, docs/cascade.md.",
    .examples = NULL,
    .examples_intro = NULL,
    .types = false,
};
