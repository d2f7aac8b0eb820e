#!/bin/sh
# fetch-duckdb.sh — DuckDB's C library, the Parquet writer and reader the
# Parquet interop test checks amq against (tests/integration/test_parquet.c).
# It comes from the npm registry as @duckdb/node-bindings-linux-x64 (the
# package ships libduckdb.so beside its Node.js addon), pinned by version
# and SHA-256, unpacked into deps/duckdb/ of the source tree; never
# committed. Idempotent: does nothing when the library is in place.
#
#   scripts/fetch-duckdb.sh [DIR]        (default: deps/duckdb)
set -eu
VERSION=1.5.6-r.1
SHA256=1b9f82478539bb9a1d1df44bd103121a12ae52142c07158dc52b97d2ec1d69ff
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=${1:-$ROOT/deps/duckdb}
[ -f "$DIR/libduckdb.so" ] && [ -f "$DIR/VERSION" ] &&
    [ "$(cat "$DIR/VERSION")" = "$VERSION" ] && exit 0
command -v npm >/dev/null 2>&1 || {
    echo "fetch-duckdb: npm is needed to fetch DuckDB's library" >&2
    exit 2
}
mkdir -p "$DIR"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
(cd "$TMP" && npm pack --silent "@duckdb/node-bindings-linux-x64@$VERSION" \
    >/dev/null) || {
    echo "fetch-duckdb: npm pack @duckdb/node-bindings-linux-x64@$VERSION" \
         "failed" >&2
    exit 2
}
TGZ="$TMP/duckdb-node-bindings-linux-x64-$VERSION.tgz"
echo "$SHA256  $TGZ" | sha256sum -c --quiet - || {
    echo "fetch-duckdb: $TGZ: checksum mismatch" >&2
    exit 2
}
tar -xzf "$TGZ" -C "$TMP" package/libduckdb.so package/LICENSE
mv "$TMP/package/libduckdb.so" "$TMP/package/LICENSE" "$DIR/"
echo "$VERSION" >"$DIR/VERSION"
