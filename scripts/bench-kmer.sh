#!/bin/sh
# bench-kmer.sh — the k-mer counting case study (docs/maplets.md): amq kmer
# count against Debian's jellyfish 2.3 and kmc 3.2 on the Debian genome and
# read sets (scripts/fetch-kmer-data.sh), in one run, canonical k-mers,
# k = 21 and 31, 1 and 2 threads:
#   - wall time and peak RSS of each counter (GNU time), and the ratios
#     amq / jellyfish and amq / kmc;
#   - exactness: amq's exact counts (dump) equal jellyfish's and kmc's,
#     k-mer by k-mer, and the histograms are equal;
#   - approximate mode (--fpr): the share of k-mers whose count is wrong,
#     the mean excess of the wrong ones, against the certified bound.
# Each time is the median of three runs (one for the larger sets). amq runs at its defaults (it sizes its table from a first pass over the
# input) and, labelled pre-sized, with -n the distinct k-mers; jellyfish
# needs a size and gets the distinct k-mers (-s, from a first amq run);
# kmc needs none.
#
#   scripts/bench-kmer.sh [AMQ] [DATA] [OUT]
#     AMQ   the amq binary (default build/amq)
#     DATA  from fetch-kmer-data.sh (default bench-data; fetched if absent;
#           with its "large" sets, rows for them too)
#     OUT   where the table and logs go (default bench-out/kmer)
set -eu
AMQ=${1:-build/amq}
DATA=${2:-bench-data}
OUT=${3:-bench-out/kmer}
case $AMQ in /*) ;; *) AMQ="$(pwd)/$AMQ" ;; esac
[ -d "$DATA/genomes" ] || sh "$(dirname "$0")/fetch-kmer-data.sh" "$DATA"
DATA=$(cd "$DATA" && pwd)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
W="$OUT/work"
rm -rf "$W" && mkdir -p "$W"
cd "$W"
for tool in jellyfish kmc kmc_tools /usr/bin/time; do
    command -v "$tool" >/dev/null 2>&1 || {
        echo "bench-kmer: $tool missing (scripts/install-deps.sh)" >&2
        exit 2
    }
done

# measure NAME CMD...: run CMD three times under GNU time; the median
# seconds and the largest peak KB into NAME.t (this machine is noisy).
measure() {
    name=$1
    shift
    : >"$name.runs"
    for run in $(seq "$RUNS"); do
        /usr/bin/time -f "%e %M" -o "$name.t" "$@" >"$name.log" 2>&1 || {
            echo "bench-kmer: $name failed:" >&2
            tail -5 "$name.log" >&2
            exit 2
        }
        cat "$name.t" >>"$name.runs"
    done
    sort -n "$name.runs" | awk '{ t[NR] = $1; if ($2 > m) m = $2 }
        END { print t[int((NR + 1) / 2)], m }' >"$name.t"
}
secs() { cut -d' ' -f1 "$1.t"; }
rss() { cut -d' ' -f2 "$1.t"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf("%.2f", b > 0 ? a / b : 0) }'; }

GENOMES="$DATA/genomes/mtb.fna $DATA/genomes/mlep.fna"
READS="$DATA/reads/reads_1.fq.gz $DATA/reads/reads_2.fq.gz $DATA/reads/longreads.fq.gz"
TABLE="$OUT/kmer.md"
printf '| data | k | threads | distinct k-mers | amq s | jellyfish s | kmc s | amq MB | jellyfish MB | kmc MB | amq/jf time | amq/jf memory | amq/kmc time | amq/kmc memory | pre-sized amq s | pre-sized amq MB | exact = jellyfish | exact = kmc |\n' >"$TABLE"
printf '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|:-:|:-:|\n' >>"$TABLE"
APPROX="$OUT/approx.md"
printf '| data | k | fpr target | bound | wrong counts | share | bound x distinct | mean excess of the wrong | bits/k-mer |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|\n' >"$APPROX"

one() { # label files k threads
    label=$1 files=$2 k=$3 t=$4
    base="$label-k$k-t$t"
    # shellcheck disable=SC2086
    "$AMQ" kmer count -k "$k" -C -q -o size.amq $files
    n=$("$AMQ" info --json size.amq | awk -F': ' '/"fingerprints"/ { gsub(/,/, "", $2); print $2 }')
    # Every counter reads the same uncompressed file (jellyfish reads no
    # gzip), so no one's time includes decompression.
    # shellcheck disable=SC2086
    zcat -f $files >all.seq
    measure "$base.amq" "$AMQ" kmer count -k "$k" -C -j "$t" -q -o "$base.amq" all.seq
    measure "$base.amqn" "$AMQ" kmer count -k "$k" -C -j "$t" -n "$n" -q -o "$base.amqn" all.seq
    measure "$base.jf" jellyfish count -m "$k" -s "$n" -C -t "$t" -o "$base.jf" all.seq
    fmt=-fm
    case $label in reads* | cdna*) fmt=-fq ;; esac
    rm -rf kmctmp && mkdir kmctmp
    measure "$base.kmc" kmc -k"$k" -ci1 -cs4294967295 -t"$t" "$fmt" all.seq "$base.kmc" kmctmp
    "$AMQ" kmer dump "$base.amq" | LC_ALL=C sort >a.txt
    jellyfish dump -c -t "$base.jf" | LC_ALL=C sort >j.txt
    kmc_tools -t1 transform "$base.kmc" dump k.txt >/dev/null 2>&1
    LC_ALL=C sort k.txt >ks.txt
    ej=no ek=no
    cmp -s a.txt j.txt && ej=yes
    cmp -s a.txt ks.txt && ek=yes
    "$AMQ" kmer dump "$base.amqn" | LC_ALL=C sort | cmp -s - a.txt || ej=no
    a=$(secs "$base.amq") j=$(secs "$base.jf") c=$(secs "$base.kmc")
    am=$(rss "$base.amq") jm=$(rss "$base.jf") cm=$(rss "$base.kmc")
    printf '| %s | %s | %s | %s | %s | %s | %s | %.1f | %.1f | %.1f | %s | %s | %s | %s | %s | %.1f | %s | %s |\n' \
        "$label" "$k" "$t" "$n" "$a" "$j" "$c" \
        "$(ratio "$am" 1024)" "$(ratio "$jm" 1024)" \
        "$(ratio "$cm" 1024)" "$(ratio "$a" "$j")" \
        "$(ratio "$am" "$jm")" "$(ratio "$a" "$c")" "$(ratio "$am" "$cm")" \
        "$(secs "$base.amqn")" "$(ratio "$(rss "$base.amqn")" 1024)" \
        "$ej" "$ek" >>"$TABLE"
    [ "$t" = 1 ] && approx "$label" "$files" "$k" "$n"
    rm -f a.txt ks.txt k.txt all.seq
}

approx() { # label files k distinct: j.txt holds the true counts
    for e in 0.01 0.001; do
        # shellcheck disable=SC2086
        "$AMQ" kmer count -k "$3" -C --fpr "$e" -q -o ap.amq $2
        cut -f1 j.txt >kmers.txt
        "$AMQ" kmer query ap.amq kmers.txt >q.txt
        bound=$("$AMQ" info --json ap.amq | awk -F': ' '/"fpr_bound"/ { gsub(/,/, "", $2); print $2 }')
        bits=$("$AMQ" info --json ap.amq | awk -F': ' '/"bytes"/ && !/file/ { gsub(/,/, "", $2); b = $2 } END { print b }')
        paste j.txt q.txt | awk -F'\t' -v l="$1" -v k="$3" -v e="$e" -v bound="$bound" -v bytes="$bits" '
            { n++; if ($4 != $2) { w++; ex += $4 - $2 } if ($4 < $2) low++ }
            END { printf("| %s | %s | %s | %.3g | %d | %.5f | %.1f | %.2f | %.2f |\n",
                         l, k, e, bound, w, w / n, bound * n, w ? ex / w : 0,
                         8 * bytes / n);
                  if (low > 0) { print "bench-kmer: counts below the truth" > "/dev/stderr"; exit 3 } }' >>"$APPROX"
    done
}

RUNS=3
for k in 21 31; do
    for t in 1 2; do
        one genomes "$GENOMES" "$k" "$t"
        one reads "$READS" "$k" "$t"
    done
done
# The larger sets (fetch-kmer-data.sh DIR large), when present: two
# threads, one run each (minutes of jellyfish).
if [ -d "$DATA/large" ]; then
    RUNS=1
    for k in 21 31; do
        one assemblies "$(ls "$DATA"/large/klebs_*.fna | tr '\n' ' ')" "$k" 2
        one cdna "$DATA/large/sirv.fq" "$k" 2
    done
fi
cat "$TABLE"
echo
cat "$APPROX"
