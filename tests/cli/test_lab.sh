#!/bin/sh
# test_lab.sh — end-to-end tests of amq-lab, the experiments beside the
# amq tool: its help, man page and completion; `demo` over every type
# (refusing what `amq build` refuses); `clock simulate`; a plot that
# cannot be written; and the old amq command lines, which must say where
# each experiment went (exit 2, nothing on stdout). The LSM laws are in
# test_lsm.sh. Prints "test_lab: N passed, N failed"; exits 1 on any
# failure.
#
# usage: tests/cli/test_lab.sh path/to/amq [TMPDIR]   (amq-lab: beside amq,
#        or $AMQ_LAB)
. "$(dirname "$0")/harness.sh" "$@"

# ---- help and usage --------------------------------------------------------
run 0 "amq-lab --help" "$LAB" --help
check "overview names every command" sh -c 'for c in demo clock lsm cascade help; do grep -q "^  amq-lab $c" out || exit 1; done'
run 0 "amq-lab --version" "$LAB" --version
check "--version names amq-lab" has "^amq-lab [0-9]" out
run 2 "amq-lab (no command)" "$LAB"
run 2 "unknown command" "$LAB" build
expect_in "try 'amq-lab help'" err "unknown command points at amq-lab help"
for c in demo clock lsm cascade help; do
    run 0 "amq-lab $c --help" "$LAB" "$c" --help
    check "amq-lab $c --help shows its usage" has "usage: amq-lab $c" out
done
run 2 "clock: no subcommand" "$LAB" clock
expect_in "missing subcommand (simulate, eval)" err "clock's subcommands"
run 2 "lsm plan is amq's" "$LAB" lsm plan -B 8
run 2 "bad option" "$LAB" clock simulate --nodes 1
expect_in "Try 'amq-lab help clock'" err "usage error points at amq-lab help"
run 0 "help --man" "$LAB" help --man
check "man page has a NAME section" grep -q "^\.SH NAME" out
for c in demo clock lsm cascade help; do
    check "man page describes $c" grep -q "^\.SS $c\$" out
done
run 0 "help --completion" "$LAB" help --completion
check "completion is valid bash" bash -n out
check "completion is for amq-lab" grep -q "^complete -F _amq_lab amq-lab" out

# ---- the old command lines ---------------------------------------------------
run 2 "amq demo" "$AMQ" demo -n 1000
expect_in "amq: 'demo' moved to amq-lab: amq-lab demo -n 1000" err "demo's pointer"
check "amq demo prints nothing on stdout" test ! -s out
run 2 "amq clock simulate" "$AMQ" clock simulate --events 'a b'
expect_in "moved to amq-lab: amq-lab clock simulate --events 'a b'" err "clock's pointer, quoted"
run 2 "amq clock eval" "$AMQ" clock eval --quick
expect_in "'clock eval' moved to amq-lab" err "clock eval's pointer"
run 2 "amq lsm simulate" "$AMQ" lsm simulate --law h0
expect_in "'lsm simulate' moved to amq-lab: amq-lab lsm simulate --law h0" err "lsm's pointer"
run 2 "amq cascade eval" "$AMQ" cascade eval --quick
expect_in "'cascade eval' moved to amq-lab: amq-lab cascade eval --quick" err "cascade's pointer"
run 0 "amq help clock: the clock files' verbs" "$AMQ" help clock
expect_in "amq-lab help clock" out "help's pointer to the experiments"
run 0 "amq lsm plan stays" "$AMQ" lsm plan -B 8
run 0 "amq cascade --help stays" "$AMQ" cascade --help

# ---- demo ------------------------------------------------------------------------
"$AMQ" help types >types.txt
types=$(awk '/^  [a-z]/ { name = $1 }
             /capabilities:/ { if ($0 !~ /sketch|forgets/) print name }' types.txt)
forgetting=$(awk '/^  [a-z]/ { name = $1 }
                  /capabilities:/ { if ($0 ~ /forgets/) print name }' types.txt)
[ -n "$types" ] && pass || fail "no types parsed from 'amq help types'"
run 0 "demo --n 3000" "$LAB" demo --n 3000
check "demo prints the table header" has "| type | bits/key |" out
for t in $types $forgetting; do
    check "demo has a row for $t" has "^| $t |" out
done
run 0 "demo --type sbbf" "$LAB" demo --n 1000 --type sbbf --fpr 0.05
run 2 "demo --type nosuch" "$LAB" demo --n 1000 --type nosuch
run 2 "demo with a bad --n" "$LAB" demo --n 0
run 2 "demo --type xor8 at 0.001 is refused like build" "$LAB" demo -n 500 --fpr 0.001 --type xor8
run 0 "demo of every type at 0.001" "$LAB" demo -n 500 --fpr 0.001
check "demo skips xor8 at 0.001 with the reason" has "xor8 | skipped, as amq build refuses it" out

# ---- clock simulator -------------------------------------------------------------
run 0 "clock simulate --json" "$LAB" clock simulate --events 2000 --json
check "clock: no ordered pair reported concurrent" has '"missed_orderings": 0,' out
check "clock: json names the fields" has '"mean_claimed_fp_exact"' out

# ---- messages --------------------------------------------------------------------
run 2 "plot into a missing folder" "$LAB" lsm simulate --law loglaw --quick --svg no-dir/x.svg
expect_in "amq-lab: " err "errors name amq-lab"

cd / && rm -rf "$T"
finish test_lab
