#!/bin/sh
# test_cli.sh — end-to-end tests of the amq command-line tool: exit codes,
# build -> query returns every key for every membership type,
# info fields, corrupt and truncated files, --binary, --keyed-hash, usage
# errors and help. Prints "test_cli: N passed, N failed"; exits 1 on any
# failure.
#
# usage: tests/cli/test_cli.sh path/to/amq [TMPDIR]
set -u

AMQ=${1:?usage: test_cli.sh path/to/amq [tmpdir]}
case $AMQ in
/*) ;;
*) AMQ="$(pwd)/$AMQ" ;;
esac
T=${2:-${TMPDIR:-/tmp}/amq-test-cli.$$}
rm -rf "$T" && mkdir -p "$T" || exit 2
cd "$T" || exit 2

passed=0
failed=0

pass() { passed=$((passed + 1)); }
fail() {
    failed=$((failed + 1))
    echo "FAIL: $*" >&2
    if [ -s err ]; then sed 's/^/  stderr| /' err | head -5 >&2; fi
}

# run RC DESC CMD...: run CMD (stdout to ./out, stderr to ./err), expect RC.
run() {
    want=$1 desc=$2
    shift 2
    "$@" >out 2>err
    rc=$?
    if [ "$rc" -eq "$want" ]; then pass; else fail "$desc: exit $rc, want $want"; fi
}

# check DESC CMD...: CMD must succeed.
check() {
    desc=$1
    shift
    if "$@"; then pass; else fail "$desc"; fi
}

has() { grep -q -- "$1" "$2"; }

# Overwrite byte OFFSET of FILE with a different value.
flip_byte() {
    v=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
    nv=$(((v + 85) % 256))
    # shellcheck disable=SC2059
    printf "\\$(printf %03o "$nv")" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}

# Little-endian u64 keys 1..N as raw bytes.
binary_keys() {
    i=1
    while [ "$i" -le "$1" ]; do
        # shellcheck disable=SC2059
        printf "\\$(printf %03o $((i % 256)))\\$(printf %03o $((i / 256)))\\000\\000\\000\\000\\000\\000"
        i=$((i + 1))
    done
}

# ---- help and usage --------------------------------------------------------
run 0 "amq --help" "$AMQ" --help
run 0 "amq -h" "$AMQ" -h
run 0 "amq help" "$AMQ" help
run 0 "amq --version" "$AMQ" --version
check "--version prints a version" has "amq [0-9]" out
run 0 "amq help build" "$AMQ" help build
check "help build shows usage" has "usage: amq build" out
run 0 "amq help types" "$AMQ" help types
check "help types lists sbbf" has "sbbf" out
cp out types.txt
for c in build query info demo help; do
    run 0 "amq $c --help" "$AMQ" "$c" --help
    check "amq $c --help shows its usage" has "usage: amq $c" out
done
run 0 "amq query -h" "$AMQ" query -h
run 2 "amq (no command)" "$AMQ"
run 2 "unknown command" "$AMQ" frobnicate
run 2 "help for an unknown topic" "$AMQ" help frobnicate

# ---- data ------------------------------------------------------------------
seq 1 2000 | sed 's/^/key-/' >keys
seq 1000001 1010000 | sed 's/^/key-/' >absent
printf 'nothing-here-1\n' >one_absent
: >empty

# Every membership type (static ones are built from all keys at once;
# sketches do not answer membership; a forgetting filter promises only its
# newest key, checked apart).
types=$(awk '/^  [a-z]/ { name = $1 }
             /capabilities:/ { if ($0 !~ /sketch|forgets/) print name }' types.txt)
forgetting=$(awk '/^  [a-z]/ { name = $1 }
                  /capabilities:/ { if ($0 ~ /forgets/) print name }' types.txt)
[ -n "$forgetting" ] && pass || fail "no forgetting type parsed from 'amq help types'"
[ -n "$types" ] && pass || fail "no types parsed from 'amq help types'"

# ---- build -> query for every type -------------------------------------------
for t in $types; do
    run 0 "build $t" "$AMQ" build --type "$t" --fpr 0.01 -o "$t.amq" keys
    check "build $t leaves no .tmp" test ! -e "$t.amq.tmp"
    run 0 "query $t finds keys" "$AMQ" query "$t.amq" keys
    check "query $t prints every key in order" cmp -s out keys
    run 0 "query --count $t" "$AMQ" query --count "$t.amq" keys
    check "query --count $t = 2000" test "$(cat out)" = 2000
    "$AMQ" query --count "$t.amq" absent >out 2>err
    rc=$?
    if [ "$rc" -le 1 ] && [ "$(cat out)" -lt 400 ]; then pass; else
        fail "$t: absent keys: exit $rc, $(cat out) of 10000 pass"; fi
    run 0 "info $t" "$AMQ" info "$t.amq"
    check "info $t names the type" has "type: *$t" out
done

for t in $forgetting; do
    run 0 "build $t" "$AMQ" build --type "$t" --fpr 0.01 -o "$t.amq" keys
    tail -n 1 keys >newest
    run 0 "query $t finds the newest key" "$AMQ" query "$t.amq" newest
    check "query $t prints the newest key" cmp -s out newest
    "$AMQ" query --count "$t.amq" absent >out 2>err
    rc=$?
    if [ "$rc" -le 1 ] && [ "$(cat out)" -lt 400 ]; then pass; else
        fail "$t: absent keys: exit $rc, $(cat out) of 10000 pass"; fi
done

# ---- query exit codes ---------------------------------------------------------
run 0 "build tight filter" "$AMQ" build --type bloom --fpr 0.000001 -o tight.amq keys
run 1 "query: absent key -> 1" "$AMQ" query tight.amq one_absent
check "query: absent key prints nothing" test ! -s out
run 1 "query: no keys -> 1" "$AMQ" query tight.amq empty
run 0 "query from stdin" sh -c '"$1" query tight.amq <keys' sh "$AMQ"
check "stdin query prints every key" cmp -s out keys
run 0 "query --invert" "$AMQ" query --invert tight.amq one_absent
check "query --invert prints the absent key" cmp -s out one_absent
run 1 "query -q absent" "$AMQ" query -q tight.amq one_absent
run 0 "query -q present" "$AMQ" query -q tight.amq keys
check "query -q prints nothing" test ! -s out

# ---- build variants --------------------------------------------------------------
run 0 "build from stdin" sh -c '"$1" build -q --type sbbf --fpr 0.01 -o stdin.amq <keys' sh "$AMQ"
check "stdin and file builds are identical" cmp -s stdin.amq sbbf.amq
run 0 "build --capacity" "$AMQ" build --type bloom --fpr 0.01 --capacity 2000 -o cap.amq keys
check "--capacity = count gives the sized build's bytes" cmp -s cap.amq bloom.amq
run 0 "build --capacity 100 (overfull)" "$AMQ" build --type bloom --fpr 0.01 -n 100 -o over.amq keys
run 0 "overfull filter still has every key" "$AMQ" query over.amq keys
check "overfull query prints every key" cmp -s out keys
printf 'alpha\r\nbeta\r\n\ngamma' >crlf
printf 'alpha\nbeta\ngamma\n' >lf
run 0 "build CRLF keys" "$AMQ" build --type bloom --fpr 0.0001 -o crlf.amq crlf
run 0 "CRLF keys found as plain keys" "$AMQ" query crlf.amq lf
check "CRLF: all three keys" cmp -s out lf
printf '\n' >emptykey
run 0 "the empty line is the empty key" "$AMQ" query crlf.amq emptykey
run 0 "build --skip-empty" "$AMQ" build --skip-empty --type bloom --fpr 0.000001 -o skip.amq crlf
run 0 "info --json" "$AMQ" info --json skip.amq
check "--skip-empty: 3 items" has '"items": 3' out
run 0 "build --hash xxh64 --seed 7" "$AMQ" build --hash xxh64 --seed 7 --type blocked --fpr 0.01 -o seeded.amq keys
run 0 "query seeded" "$AMQ" query seeded.amq keys
check "seeded: every key" cmp -s out keys
run 0 "info seeded" "$AMQ" info seeded.amq
check "info shows hash and seed" has "xxh64 (seed 7)" out

# ---- info ------------------------------------------------------------------------
run 0 "info" "$AMQ" info sbbf.amq
for field in "file:" "type:" "params:" "hash:" "items:" "capacity:" "bytes:" \
    "bits/key:" "fpr bound:" "target fpr:" "lower bound:" "ratio:"; do
    check "info prints '$field'" has "^$field" out
done
check "info: items 2000" has "^items: *2000$" out
check "info: target fpr 0.01" has "^target fpr: *0.01$" out
run 0 "info --json" "$AMQ" info --json sbbf.amq
check "json: items" has '"items": 2000' out
check "json: type" has '"type": "sbbf"' out
check "json: ratio" has '"ratio": ' out

# ---- --binary ----------------------------------------------------------------------
binary_keys 300 >bin.keys
seq 1 300 >bin.expect
run 0 "build --binary" "$AMQ" build --binary --type blocked --fpr 0.001 -o bin.amq bin.keys
run 0 "query --binary" "$AMQ" query --binary bin.amq bin.keys
check "--binary round trip prints every key as a number" cmp -s out bin.expect
run 0 "info --json (binary)" "$AMQ" info --json bin.amq
check "--binary: 300 items" has '"items": 300' out
cp bin.keys bin.bad && printf 'xyz' >>bin.bad
run 2 "binary input with stray bytes" "$AMQ" build --binary --type bloom --fpr 0.01 -o bad.amq bin.bad
check "stray bytes are reported" has "stray" err
check "failed build writes no file" test ! -e bad.amq

# ---- --keyed-hash --------------------------------------------------------------------
run 0 "build --keyed-hash" "$AMQ" build --keyed-hash --type sbbf --fpr 0.01 -o keyed.amq keys
run 0 "query keyed" "$AMQ" query keyed.amq keys
check "keyed round trip: every key" cmp -s out keys
run 0 "info keyed" "$AMQ" info keyed.amq
check "info keyed shows siphash" has "siphash" out
check "keyed file is private (0600)" test "$(ls -l keyed.amq | cut -c1-10)" = "-rw-------"
run 0 "build --keyed-hash again" "$AMQ" build -k --type sbbf --fpr 0.01 -o keyed2.amq keys
check "two keyed builds use different keys" sh -c '! cmp -s keyed.amq keyed2.amq'
run 0 "build --keyed-hash --capacity" "$AMQ" build -k --type bloom --fpr 0.01 --capacity 5000 -o keyed3.amq keys
run 0 "query keyed --capacity" "$AMQ" query keyed3.amq keys
check "keyed --capacity: every key" cmp -s out keys

# ---- corrupt, truncated and missing files ------------------------------------------------
size=$(wc -c <sbbf.amq | tr -d ' ')
head -c 57 sbbf.amq >trunc.amq
run 2 "query truncated file" "$AMQ" query trunc.amq keys
check "truncated: message names the file" has "trunc.amq" err
run 2 "info truncated file" "$AMQ" info trunc.amq
head -c $((size - 1)) sbbf.amq >trunc2.amq
run 2 "query file missing its last byte" "$AMQ" query trunc2.amq keys
check "missing byte: message names the file" has "trunc2.amq" err
for off in 0 9 20 70 $((size / 2)) $((size - 1)); do
    cp sbbf.amq flip.amq
    flip_byte flip.amq "$off"
    run 2 "query with byte $off flipped" "$AMQ" query flip.amq keys
    check "flip $off: message names the file" has "flip.amq" err
done
run 2 "query an empty file" "$AMQ" query empty keys
run 2 "query a missing file" "$AMQ" query no-such.amq keys
check "missing file named" has "no-such.amq" err
run 2 "query a directory" "$AMQ" query . keys
run 2 "query: missing key file" "$AMQ" query sbbf.amq no-such-keys
check "missing key file named" has "no-such-keys" err

# ---- bad arguments ----------------------------------------------------------------------------
run 2 "unknown type" "$AMQ" build --type nosuchtype --fpr 0.01 -o x.amq keys
check "unknown type named" has "nosuchtype" err
check "unknown type writes no file" test ! -e x.amq
run 2 "bad spec parameter" "$AMQ" build --type bloom:zz=1 --fpr 0.01 -o x.amq keys
run 2 "fpr out of range" "$AMQ" build --type bloom --fpr 1.5 -o x.amq keys
run 2 "fpr not a number" "$AMQ" build --type bloom --fpr abc -o x.amq keys
run 2 "missing --type" "$AMQ" build --fpr 0.01 -o x.amq keys
run 2 "missing -o" "$AMQ" build --type bloom --fpr 0.01 keys
check "usage shown" has "usage: amq build" err
run 2 "unknown option" "$AMQ" build --frob --type bloom --fpr 0.01 -o x.amq keys
run 2 "capacity not a number" "$AMQ" build --type bloom --fpr 0.01 --capacity x -o x.amq keys
run 2 "build: missing key file" "$AMQ" build --type bloom --fpr 0.01 -o x.amq no-such-keys
run 2 "query without FILE" "$AMQ" query
run 2 "query with too many arguments" "$AMQ" query a b c
run 2 "info without FILE" "$AMQ" info
run 2 "demo with a bad --n" "$AMQ" demo --n 0

# ---- demo -------------------------------------------------------------------------------------
run 0 "demo --n 3000" "$AMQ" demo --n 3000
check "demo prints the table header" has "| type | bits/key |" out
for t in $types $forgetting; do
    check "demo has a row for $t" has "^| $t |" out
done
run 0 "demo --type sbbf" "$AMQ" demo --n 1000 --type sbbf --fpr 0.05
run 2 "demo --type nosuch" "$AMQ" demo --n 1000 --type nosuch

# ---- clock simulator ------------------------------------------------------------
run 0 "clock simulate --json" "$AMQ" clock simulate -e 2000 --json
check "clock: no ordered pair reported concurrent" has '"missed_orderings": 0,' out
check "clock: json names the fields" has '"mean_claimed_fp_exact"' out

cd / && rm -rf "$T"
echo "test_cli: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
