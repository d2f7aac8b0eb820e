#!/bin/sh
# bench-search.sh — the sequence-search case study (docs/maplets.md):
# `amq kmer index` / `amq kmer search` (Mantis-style) over the Debian genome
# and read sets, validated against an exact brute force (Perl: each
# input's set of canonical k-mers, each query's distinct k-mers counted
# against it).
#   - exact index: the reported files and shares equal the brute force's;
#   - approximate index (--fpr): no file the brute force reports is
#     missed, no share is below the true one, and the extra (query, file)
#     pairs are counted against the queries' exposure to false positives.
#
#   scripts/bench-search.sh [AMQ] [DATA] [OUT] [K] [THETA]
set -eu
AMQ=${1:-build/amq}
DATA=${2:-bench-data}
OUT=${3:-bench-out/search}
K=${4:-31}
THETA=${5:-0.5}
case $AMQ in /*) ;; *) AMQ="$(pwd)/$AMQ" ;; esac
[ -d "$DATA/genomes" ] || sh "$(dirname "$0")/fetch-kmer-data.sh" "$DATA"
DATA=$(cd "$DATA" && pwd)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
cd "$OUT"
FILES="$DATA/genomes/mtb.fna $DATA/genomes/mlep.fna $DATA/genomes/lambda.fa \
$DATA/reads/reads_1.fq.gz $DATA/reads/reads_2.fq.gz $DATA/reads/longreads.fq.gz"

# Queries: 300-base pieces of each genome (some with 1% substitutions),
# reads of each read set, and random sequences that match nothing.
perl -e '
    srand(17);
    my @b = qw(A C G T);
    for my $f (@ARGV) {
        open(my $in, $f =~ /\.gz$/ ? "gzip -dc $f |" : "<$f") or die "$f: $!";
        my ($seq, @reads, $n) = ("");
        while (<$in>) {
            chomp;
            if ($f =~ /\.fq/) { push @reads, $_ if $. % 4 == 2; next }
            $seq .= $_ unless /^>/;
        }
        (my $tag = $f) =~ s{.*/}{};
        if ($f =~ /\.fq/) {
            for my $i (0 .. 39) { print ">$tag-read$i\n$reads[$i * 97 % @reads]\n" }
            next;
        }
        for my $i (0 .. 39) {
            my $p = int(rand(length($seq) - 300));
            my $q = substr($seq, $p, 300);
            if ($i % 2) { for my $j (0 .. 299) { substr($q, $j, 1) = $b[int rand 4] if rand() < 0.01 } }
            print ">$tag-piece$i\n$q\n";
        }
    }
    for my $i (0 .. 19) { print ">random$i\n", join("", map { $b[int rand 4] } 1 .. 300), "\n" }
' $FILES >queries.fa

# The brute force: query -> file -> share of its distinct k-mers.
perl -e '
    my ($k, $theta, @files) = @ARGV;
    sub canon { my $s = shift; (my $r = reverse $s) =~ tr/ACGT/TGCA/; $r lt $s ? $r : $s }
    sub kmers { my ($seq, $set) = @_; $seq = uc $seq;
        for my $i (0 .. length($seq) - $k) { my $w = substr($seq, $i, $k);
            $set->{canon($w)} = 1 if $w !~ /[^ACGT]/ } }
    my (%q, @order, $name, $seq);
    open(my $qf, "<", "queries.fa") or die;
    while (<$qf>) { chomp; if (/^>(.*)/) { kmers($seq, $q{$name} = {}) if defined $name;
        push @order, $name = $1; $seq = "" } else { $seq .= $_ } }
    kmers($seq, $q{$name} = {});
    for my $f (@files) {
        my (%set, $s, $fq) = ((), "", $f =~ /\.fq/);
        open(my $in, $f =~ /\.gz$/ ? "gzip -dc $f |" : "<$f") or die;
        while (<$in>) { chomp;
            if ($fq) { kmers($_, \%set) if $. % 4 == 2; next }
            if (/^>/) { kmers($s, \%set); $s = "" } else { $s .= $_ } }
        kmers($s, \%set);
        for my $qn (@order) {
            my @ks = keys %{ $q{$qn} }; next unless @ks;
            my $h = grep { $set{$_} } @ks;
            printf("%s\t%s\t%.6f\n", $qn, $f, $h / @ks) if $h && $h / @ks >= $theta - 1e-12;
        }
    }
' "$K" "$THETA" $FILES | LC_ALL=C sort >brute.txt

# shellcheck disable=SC2086
"$AMQ" kmer index -k "$K" -q -o exact.idx $FILES
# shellcheck disable=SC2086
"$AMQ" kmer index -k "$K" --fpr 0.01 -q -o approx.idx $FILES
"$AMQ" kmer search exact.idx queries.fa --theta "$THETA" | LC_ALL=C sort >exact.txt || true
"$AMQ" kmer search approx.idx queries.fa --theta "$THETA" | LC_ALL=C sort >approx.txt || true

nq=$(grep -c '^>' queries.fa)
nb=$(wc -l <brute.txt)
same=no
cmp -s exact.txt brute.txt && same=yes
# Approximate: every brute-force pair present with a share at least the
# truth; extra pairs counted.
missed=$(awk -F'\t' 'NR == FNR { a[$1 FS $2] = $3; next }
    { if (!(($1 FS $2) in a) || a[$1 FS $2] + 1e-9 < $3) m++ } END { print m + 0 }' approx.txt brute.txt)
extra=$(awk -F'\t' 'NR == FNR { b[$1 FS $2] = 1; next } !(($1 FS $2) in b) { e++ } END { print e + 0 }' brute.txt approx.txt)
ebits=$("$AMQ" info --json exact.idx | awk -F': ' '/"bits_per_key"/ { gsub(/,/, "", $2); print $2 }')
abits=$("$AMQ" info --json approx.idx | awk -F': ' '/"bits_per_key"/ { gsub(/,/, "", $2); print $2 }')
abound=$("$AMQ" info --json approx.idx | awk -F': ' '/"fpr_bound"/ { gsub(/,/, "", $2); print $2 }')
{
    echo "| index | k | theta | queries | (query, file) pairs, brute force | reported | equal to brute force | missed | extra | bits per k-mer | fpr bound |"
    echo "|---|--:|--:|--:|--:|--:|:-:|--:|--:|--:|--:|"
    echo "| exact | $K | $THETA | $nq | $nb | $(wc -l <exact.txt) | $same | 0 | 0 | $ebits | 0 |"
    echo "| --fpr 0.01 | $K | $THETA | $nq | $nb | $(wc -l <approx.txt) | - | $missed | $extra | $abits | $abound |"
} | tee search.md
[ "$same" = yes ] && [ "$missed" -eq 0 ]
