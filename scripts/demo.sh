#!/bin/sh
# demo.sh — what `make demo` runs: `amq-lab demo` (every type on built-in
# data, one markdown table), then amq's file-based commands end to end on
# generated keys: build, info, query every key back, query absent keys.
#
# usage: scripts/demo.sh path/to/amq [path/to/amq-lab]   (default: the
#        amq-lab beside amq)
# env:   AMQ_DEMO_N     keys for `amq-lab demo` (default 1000000)
#        AMQ_DEMO_KEYS  keys for the file-based part (default 100000)
set -eu

BIN=${1:?usage: demo.sh path/to/amq [path/to/amq-lab]}
LAB=${2:-$(dirname "$BIN")/amq-lab}
N=${AMQ_DEMO_N:-1000000}
K=${AMQ_DEMO_KEYS:-100000}
case $BIN in
/*) ;;
*) BIN="$(pwd)/$BIN" ;;
esac
case $LAB in
/*) ;;
*) LAB="$(pwd)/$LAB" ;;
esac
for b in "$BIN" "$LAB"; do
    [ -x "$b" ] || { echo "demo.sh: $b is not an executable" >&2; exit 2; }
done

"$LAB" demo --n "$N"

T=$(mktemp -d "${TMPDIR:-/tmp}/amq-demo.XXXXXX")
trap 'rm -rf "$T"' EXIT
trap 'exit 130' INT TERM
cd "$T"

# K present keys and K absent ones: disjoint ranges, as text.
seq 1 "$K" | sed 's/^/user:/' >keys
seq $((K + 1)) $((2 * K)) | sed 's/^/user:/' >absent

echo
echo "## the file-based commands ($K keys in $T)"
echo
echo '$ amq build --type sbbf --fpr 0.01 -o f.amq keys'
"$BIN" build --type sbbf --fpr 0.01 -o f.amq keys
echo '$ amq info f.amq'
"$BIN" info f.amq

found=$("$BIN" query f.amq keys | wc -l | tr -d ' ')
echo "\$ amq query f.amq keys | wc -l    -> $found"
if [ "$found" -ne "$K" ]; then
    echo "demo.sh: query returned $found of $K keys (false negatives!)" >&2
    exit 1
fi

# Exit status 1 (no key passes) is a valid answer here, not a failure.
passed=$("$BIN" query --count f.amq absent) || [ $? -eq 1 ]
echo "\$ amq query --count f.amq absent  -> $passed"
awk -v p="$passed" -v k="$K" 'BEGIN {
    printf "%d of %d absent keys pass: measured false-positive rate %.4f (target 0.01)\n", p, k, p / k
}'
