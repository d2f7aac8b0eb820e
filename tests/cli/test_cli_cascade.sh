#!/bin/sh
# test_cli_cascade.sh — end-to-end tests of `amq cascade`: train writes a
# file that query, info (text and JSON) and audit read; every member is
# found; bad input (empty sets, keys in both sets, an unreachable target,
# a file that is not a cascade, a truncated cascade) exits 2 and writes
# nothing. Prints "test_cli_cascade: N passed, N failed".
#
# usage: tests/cli/test_cli_cascade.sh path/to/amq [TMPDIR]
. "$(dirname "$0")/harness.sh" "$@"

# Host names: members mostly ads/track under com/net, the rest mostly not;
# membership is a function of the key, so the two files never share one.
awk 'BEGIN {
    s = 7; split("ads track pixel cdn mail shop news wiki", st, " ")
    split("com net io org de", tl, " ")
    for (i = 0; i < 12000; i++) {
        s = (s * 48271) % 2147483647; a = 1 + s % 8
        s = (s * 48271) % 2147483647; t = 1 + s % 5
        s = (s * 48271) % 2147483647; x = s % 1000000
        p = (a <= 2 ? 1.0 : 0.05) * (t <= 2 ? 1.0 : 0.1)
        h = (x * 7919 + a * 131 + t) % 1000 / 1000
        k = "www." st[a] x "." tl[t]
        if (h < p) print k > "m.txt"; else print k > "n.txt"
    }
}'
sort -u m.txt > members.txt
sort -u n.txt > nonmembers.txt
M=$(wc -l < members.txt)

run 0 "train" "$AMQ" cascade train --members members.txt --nonmembers nonmembers.txt --fpr 0.05 \
    --dim-bits 12 --quantize --bins 32 --learned -o c.amq
[ -s c.amq ] && pass || fail "train wrote no file"
expect_in "certified FPR bound" err "train summary"
run 0 "query members" "$AMQ" cascade query -c c.amq members.txt
[ "$(cat out)" = "$M" ] && pass || fail "query found $(cat out) of $M members"
run 0 "info" "$AMQ" cascade info c.amq
expect_in "fpr bound" out "info text"
expect_in "p upper" out "info columns"
run 0 "info json" "$AMQ" cascade info --json c.amq
expect_in '"fpr_bound"' out "json fpr_bound"
expect_in '"bits_per_key"' out "json bits_per_key"
expect_in '"levels": \[' out "json levels"
run 0 "audit" "$AMQ" cascade audit c.amq --members members.txt --nonmembers nonmembers.txt --rate 0.5
expect_in "verdict" out "audit verdict"
expect_in "false negatives 0" out "audit: no false negatives"
run 0 "features" "$AMQ" cascade features --dim-bits 12 --label 0 nonmembers.txt
head -n1 out | grep -qE '^0( [0-9]+:-?[0-9]+)+$' && pass || fail "svmlight line"
run 0 "budget" "$AMQ" cascade train --members members.txt --nonmembers nonmembers.txt \
    --bits-per-key 40 --dim-bits 10 --quantize --levels 2 --method plbf -o b.amq

# bad input: exit 2, nothing written
: > empty.txt
run 2 "empty members" "$AMQ" cascade train --members empty.txt --nonmembers nonmembers.txt --fpr 0.05 -o x.amq
expect_in "no keys" err "empty message"
head -n 25 members.txt > both.txt
cat nonmembers.txt >> both.txt
run 2 "keys in both sets" "$AMQ" cascade train --members members.txt --nonmembers both.txt --fpr 0.05 -o x.amq
expect_in "25 of the" err "overlap count"
run 2 "unreachable target" "$AMQ" cascade train --members members.txt --nonmembers nonmembers.txt --fpr 1e-9 --learned -o x.amq
expect_in "certif" err "unreachable message"
run 2 "no target" "$AMQ" cascade train --members members.txt --nonmembers nonmembers.txt -o x.amq
[ -e x.amq ] && fail "a failed train wrote x.amq" || pass
"$AMQ" build --type sbbf --fpr 0.01 -o f.amq members.txt 2>/dev/null
# a filter's file is a plain cascade; a file that is no frame is refused
run 0 "a filter as a cascade" "$AMQ" cascade info f.amq
expect_in "a plain filter" out "plain info"
run 0 "a plain cascade answers" "$AMQ" cascade query -c f.amq members.txt
[ "$(cat out)" = "$M" ] && pass || fail "plain query found $(cat out) of $M members"
printf 'not a frame at all, just some text\n' > junk.amq
run 2 "not a cascade" "$AMQ" cascade info junk.amq
# no flags: training keeps what is smallest, never above the plain filter
run 0 "default train" "$AMQ" cascade train --members members.txt --nonmembers nonmembers.txt --fpr 0.05 -o d.amq
expect_in "amq: chose " err "the choice is said"
"$AMQ" build -q --type ribbon --fpr 0.05 -o r.amq members.txt 2>/dev/null
check "default no larger than plain ribbon" test "$(wc -c < d.amq)" -le "$(wc -c < r.amq)"
run 0 "a target no learned cascade certifies is a plain filter" "$AMQ" cascade train --members members.txt --nonmembers nonmembers.txt --fpr 1e-9 -o p.amq
run 0 "plain info" "$AMQ" cascade info p.amq
expect_in "a plain filter" out "plain said"
# a worst-case cap: an initial filter, both bounds reported
run 0 "worst-case cap" "$AMQ" cascade train --members members.txt --nonmembers nonmembers.txt --fpr 0.01 --worst-case 0.2 --learned -o w.amq
run 0 "cap info" "$AMQ" cascade info --json w.amq
check "cap at most 0.2, bound at most 0.01" python3 -c "
import json; d = json.load(open('out'))
assert d['worst_case_bound'] <= 0.2 and d['fpr_bound'] <= 0.01, d"
run 2 "a cap below the target" "$AMQ" cascade train --members members.txt --nonmembers nonmembers.txt --fpr 0.05 --worst-case 0.01 -o x.amq
expect_in "at or below the target" err "cap message"
head -c 1000 c.amq > t.amq
run 2 "truncated" "$AMQ" cascade query t.amq members.txt
run 2 "unknown subcommand" "$AMQ" cascade frobnicate
# an audit that rejects the bound exits 4: members' look-alikes as queries
sed 's/^/x/' members.txt >lookalike.txt
run 4 "audit of a shifted workload: exit 4" "$AMQ" cascade audit c.amq --members members.txt --nonmembers lookalike.txt
expect_in "VIOLATED" out "the verdict"
run 0 "cascade info" "$AMQ" cascade info --json c.amq
check "bits/key counts the whole file" python3 -c "
import json, os; d = json.load(open('out'))
assert abs(d['bits_per_key'] - 8 * os.path.getsize('c.amq') / d['members']) < 1e-9, d"
run 2 "dim-bits below the range" "$AMQ" cascade train --members members.txt --nonmembers nonmembers.txt --fpr 0.05 --dim-bits 7 -o x.amq
expect_in "dim-bits: 8 to 20" err "dim-bits message"
run 0 "help" "$AMQ" help cascade

cd / && rm -rf "$T"
finish test_cli_cascade
