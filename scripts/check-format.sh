#!/bin/sh
# Checks that every C source and header the repository tracks is formatted
# by the tree's .clang-format (exit 1 and the list of files otherwise).
# `scripts/check-format.sh --fix` rewrites them in place.
set -eu
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null 2>&1 || {
    echo "check-format: clang-format is not installed" >&2
    exit 2
}
fix=0
[ "${1:-}" = "--fix" ] && fix=1
bad=0
for f in $(git ls-files '*.c' '*.h' '*.cc'); do
    if [ "$fix" -eq 1 ]; then
        clang-format -i "$f"
    elif ! clang-format "$f" | cmp -s - "$f"; then
        echo "$f" >&2
        bad=1
    fi
done
[ "$bad" -eq 0 ] || {
    echo "check-format: the files above differ from .clang-format (run scripts/check-format.sh --fix)" >&2
    exit 1
}
