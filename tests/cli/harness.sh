# harness.sh — what the CLI test scripts share (sourced, not run): the
# amq binary's absolute path in $AMQ, amq-lab's in $LAB (the one beside
# amq unless AMQ_LAB names another), a fresh working directory $T (cd'd
# into), counters, and the run/check helpers. Each script ends with
# `finish NAME`.
#
# usage (from a script): . "$(dirname "$0")/harness.sh" "$@"
set -u

AMQ=${1:?usage: $0 path/to/amq [tmpdir]}
case $AMQ in
/*) ;;
*) AMQ="$(pwd)/$AMQ" ;;
esac
LAB=${AMQ_LAB:-$(dirname "$AMQ")/amq-lab}
case $LAB in
/*) ;;
*) LAB="$(pwd)/$LAB" ;;
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

# has PATTERN FILE: FILE holds PATTERN (a test, not a check).
has() { grep -q -- "$1" "$2"; }

# expect_in PATTERN FILE DESC: a check that FILE holds PATTERN.
expect_in() {
    if grep -q -- "$1" "$2"; then pass; else fail "$3: no '$1' in $2"; fi
}

# finish NAME: print the counts; exit 1 on any failure.
finish() {
    echo "$1: $passed passed, $failed failed"
    [ "$failed" -eq 0 ]
}
