#!/bin/sh
# Installs the Debian 12 packages amq needs to build, test and benchmark.
# Idempotent: does nothing when everything is present. Run as root (or via sudo).
set -eu
# zlib1g-dev, liblzma-dev, libbz2-dev: the CLI reads gzip, xz and bzip2
# FASTA/FASTQ; jellyfish and kmc: the k-mer counters amq kmer is checked
# (jellyfish, tests) and measured (both, scripts/bench-kmer.sh) against;
# zsh and fish: the CLI tests load the generated completion scripts into
# each shell; python3-venv, python3-numpy and mypy: the Python package is
# installed into a venv with pip, its NumPy paths tested and measured, and
# its annotations checked. libsnappy-dev, libzstd-dev and liblz4-dev:
# the codecs of Parquet pages (integrations/parquet). Then DuckDB's
# library from npm (scripts/fetch-duckdb.sh), the Parquet interop test's
# writer and reader.
PKGS="build-essential cmake pkg-config libxxhash-dev libsodium-dev libbloom-dev clang clang-format python3 redis-server redis-tools python3-redis libleveldb-dev librocksdb-dev libwiredtiger-dev zlib1g-dev liblzma-dev libbz2-dev jellyfish kmc zsh fish python3-venv python3-numpy mypy libsnappy-dev libzstd-dev liblz4-dev"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "amq: installing missing packages:$missing" >&2
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    # shellcheck disable=SC2086
    $SUDO apt-get install -y -qq --no-install-recommends $missing
fi
sh "$(dirname "$0")/fetch-duckdb.sh"
