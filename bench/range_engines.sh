#!/bin/sh
# range_engines.sh — a range filter in front of RocksDB's and WiredTiger's
# range scans (docs/structures.md, "In front of an engine's scans"): each
# driver writes its own data set (uniform 64-bit keys with 16-byte values,
# made durable on disk), builds the filter, scans with and without it in
# alternating rounds, and prints its table; the databases are removed
# after each run.
#
#   sh bench/range_engines.sh [BUILD_DIR] [KEYS] [SCANS]
#
# BUILD_DIR defaults to build, KEYS to 1e7, SCANS to 2e5; every engine
# runs with grafite (static) and memento (dynamic), ranges of 64 keys.
set -eu
build=${1:-build}
keys=${2:-1e7}
scans=${3:-2e5}
work=$(mktemp -d "${TMPDIR:-/tmp}/amq-range-engines.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
for engine in rocksdb wiredtiger; do
    exe="$build/integrations/$engine/amq-$engine-range"
    if [ ! -x "$exe" ]; then
        echo "range_engines: $exe not built (make build)" >&2
        exit 2
    fi
    for type in grafite memento; do
        echo "## $engine, $type"
        "$exe" --keys "$keys" --scans "$scans" --len 64 --type "$type" \
            --dir "$work/$engine-$type"
        rm -rf "$work/$engine-$type"
    done
done
