#!/bin/sh
# test_lsm.sh — end-to-end tests of `amq lsm plan` and `amq-lab lsm
# simulate`: the plan from a generated tree and from CSV (text and JSON),
# bad CSV rows naming their line with exit 2 and nothing on stdout, option
# conflicts, every law at --quick sizes with its SVG, and the H0 numbers of
# the paper's repository. Prints "test_lsm: N passed, N failed"; exits 1
# on any failure.
#
# usage: tests/cli/test_lsm.sh path/to/amq [TMPDIR]   (amq-lab: beside amq,
#        or $AMQ_LAB)
. "$(dirname "$0")/harness.sh" "$@"

empty() { if [ -s "$1" ]; then fail "$2: $1 not empty"; else pass; fi; }

# ---- plan -----------------------------------------------------------------
run 0 "plan generated" "$AMQ" lsm plan --levels 5 --ratio 10 --keys 1e6 \
    --bits-per-key 8 --workload weights:100,50,10,2,1 --curve model
expect_in "uniform 0.0214158, optimal 0.000205667" out "H0 totals"
run 0 "plan json" "$AMQ" lsm plan -L 4 -B 6 --curve bloom --json
for k in '"runs":' '"cost_uniform":' '"cost_optimal":' '"bits_per_key":' \
    '"spec":"bloom:k=' '"fpr":' '"name":"L4"' '"lookups":'; do
    has "$k" out "plan json"
done
run 0 "plan fuse" "$AMQ" lsm plan -L 3 -B 12 --curve fuse
expect_in "fuse" out "fuse picks"

printf 'name,keys,lookups\nhot,1000,90\nwarm,10000,9\ncold,100000,1\n' >runs.csv
run 0 "plan csv" "$AMQ" lsm plan --csv runs.csv -B 10 --curve ribbon
expect_in "ribbon:bits=" out "csv ribbon picks"
expect_in "| cold | 100000 |" out "csv rows"
run 0 "plan csv stdin" sh -c "'$AMQ' lsm plan --csv - -B 10 --json <runs.csv"
expect_in '"name":"warm"' out "csv from stdin"

printf 'a,1000,1\nb,-5,1\n' >neg.csv
run 2 "negative keys" "$AMQ" lsm plan --csv neg.csv -B 8
expect_in "neg.csv: line 2: keys" err "negative keys names the line"
empty out "negative keys"
printf 'a,1000,1\nb,2000\n' >short.csv
run 2 "short row" "$AMQ" lsm plan --csv short.csv -B 8
expect_in "line 2: expected 3 fields" err "short row"
printf 'a,NaN,1\n' >nan.csv
run 2 "NaN keys" "$AMQ" lsm plan --csv nan.csv -B 8
expect_in "line 1: keys" err "NaN"
printf 'a,0,1\n' >zero.csv
run 2 "zero keys" "$AMQ" lsm plan --csv zero.csv -B 8
printf 'a,10,0\nb,10,0\n' >idle.csv
run 2 "no lookups" "$AMQ" lsm plan --csv idle.csv -B 8
expect_in "0 lookups" err "no lookups"
run 2 "missing csv" "$AMQ" lsm plan --csv nope.csv -B 8
run 2 "csv with levels" "$AMQ" lsm plan --csv runs.csv --levels 3 -B 8
run 2 "no budget" "$AMQ" lsm plan -L 3
run 2 "bad workload" "$AMQ" lsm plan -L 3 -B 8 --workload weights:1,2
expect_in "weights" err "bad workload"
run 2 "bad curve" "$AMQ" lsm plan -L 3 -B 8 --curve bloom:k=99
run 2 "sketch curve" "$AMQ" lsm plan -L 3 -B 8 --curve topk
run 2 "bad number" "$AMQ" lsm plan -L 3 -B eight
run 2 "fractional levels" "$AMQ" lsm plan -L 2.5 -B 8
run 2 "no subcommand" "$AMQ" lsm
run 2 "bad subcommand" "$AMQ" lsm tune
run 0 "help" "$AMQ" lsm --help
expect_in "amq-lab lsm simulate" out "help text points at the laws"
run 0 "simulate help" "$LAB" lsm --help
expect_in "simulate --law" out "simulate's help text"
run 2 "simulate is amq-lab's" "$AMQ" lsm simulate --law h0
expect_in "moved to amq-lab" err "amq lsm simulate's pointer"
empty out "amq lsm simulate"

# ---- simulate -----------------------------------------------------------------
run 0 "h0" "$LAB" lsm simulate --law h0 --svg h0.svg
expect_in "| Monkey | 0.000206 | 0.000205667 |" out "H0 Monkey"
expect_in "<svg" h0.svg "h0 plot"
run 0 "h0 real" "$LAB" lsm simulate --law h0 --curve blocked --json
expect_in '"cost_model_planned":' out "h0 json"
run 0 "loglaw" "$LAB" lsm simulate --law loglaw --svg loglaw.svg
expect_in "| slope of b\* on ln w | 2.0814 (1/c) | 2.0814 | 2.0814 |" out "log-law slope"
expect_in "</svg>" loglaw.svg "loglaw plot"
run 0 "robustness" "$LAB" lsm simulate --law robustness --quick --svg rob.svg
expect_in "common-factor" out "robustness table"
run 0 "frontier" "$LAB" lsm simulate --law frontier --quick --json
expect_in '"quad_k":' out "frontier json"
run 0 "frontier linear" "$LAB" lsm simulate --law frontier --quick \
    --drift linear --sigmas 0.001,0.01,3 --svg fr.svg
expect_in "linear drift" out "linear drift"
run 0 "curves" "$LAB" lsm simulate --law curves --quick --types bloom,fuse \
    --svg curves.svg
expect_in "| fuse |" out "curves table"
run 2 "no law" "$LAB" lsm simulate
run 2 "unknown law" "$LAB" lsm simulate --law h9
run 2 "bad drift" "$LAB" lsm simulate --law frontier --drift fast
run 2 "bad sigmas" "$LAB" lsm simulate --law frontier --sigmas 1,2
run 2 "weights count" "$LAB" lsm simulate --law h0 --weights 1,2,3
run 2 "unknown type" "$LAB" lsm simulate --law curves --types bloom,nosuch

cd / && rm -rf "$T"
finish test_lsm
