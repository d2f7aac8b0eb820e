#!/bin/sh
# bench-search-scale.sh — sequence search at Mantis scale (docs/maplets.md):
# `amq kmer index` over E experiments made from real sequence, the two
# Debian mycobacterial genomes of scripts/fetch-kmer-data.sh cut into E
# overlapping windows (each base in about four), and `amq kmer search` of
# Q queries (500-base pieces of the genomes, half with 1% substitutions),
# checked against an exact brute force (Perl: every genome position whose
# k-mer is a query's, and the windows that hold it).
#   - build: wall time and peak RSS (GNU time), distinct k-mers, colour
#     classes, index bits per k-mer (the maplet and the classes file);
#   - search: wall time of all queries, per query;
#   - the reported (query, experiment, share) lines equal the brute force's.
#
#   scripts/bench-search-scale.sh [AMQ] [DATA] [OUT] [E] [Q] [K] [THETA]
set -eu
AMQ=${1:-build/amq}
DATA=${2:-bench-data}
OUT=${3:-bench-out/search-scale}
E=${4:-1000}
Q=${5:-1000}
K=${6:-31}
THETA=${7:-0.5}
case $AMQ in /*) ;; *) AMQ="$(pwd)/$AMQ" ;; esac
[ -d "$DATA/genomes" ] || sh "$(dirname "$0")/fetch-kmer-data.sh" "$DATA"
DATA=$(cd "$DATA" && pwd)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
W="$OUT/work"
rm -rf "$W" && mkdir -p "$W/exp"
cd "$W"
command -v /usr/bin/time >/dev/null 2>&1 || {
    echo "bench-search-scale: /usr/bin/time missing (scripts/install-deps.sh)" >&2
    exit 2
}

# The genome (both, one after the other, upper case), the windows and the
# queries; the window geometry goes to geometry.txt for the brute force.
perl -e '
    my ($e, $q, @files) = @ARGV;
    my $g = "";
    for my $f (@files) {
        open(my $in, "<", $f) or die "$f: $!";
        while (<$in>) { chomp; $g .= uc $_ unless /^>/ }
    }
    my $step = int(length($g) / $e);
    my $w = 4 * $step;
    open(my $geo, ">", "geometry.txt") or die;
    print $geo "$step $w\n";
    open(my $gf, ">", "genome.txt") or die;
    print $gf $g;
    for my $i (0 .. $e - 1) {
        open(my $o, ">", sprintf("exp/e%05d.fa", $i)) or die;
        print $o ">e$i\n", substr($g, $i * $step, $w), "\n";
    }
    srand(29);
    my @b = qw(A C G T);
    open(my $qo, ">", "queries.fa") or die;
    for my $i (0 .. $q - 1) {
        my $s = substr($g, int(rand(length($g) - 500)), 500);
        if ($i % 2) { for my $j (0 .. 499) { substr($s, $j, 1) = $b[int rand 4] if rand() < 0.01 } }
        print $qo ">q$i\n$s\n";
    }
' "$E" "$Q" "$DATA/genomes/mtb.fna" "$DATA/genomes/mlep.fna"

/usr/bin/time -f "%e %M" -o index.t "$AMQ" kmer index -k "$K" -o idx.amq exp/*.fa 2>index.log
/usr/bin/time -f "%e %M" -o search.t "$AMQ" kmer search idx.amq queries.fa --theta "$THETA" >search.out 2>search.log || true
LC_ALL=C sort search.out >search.amq

# The brute force: every query k-mer (both strands) -> its canonical form;
# the genome's positions holding one; the windows [i step, i step + w)
# that hold the whole k-mer; per query the share of its distinct k-mers
# in each window.
perl -e '
    my ($k, $theta) = @ARGV;
    open(my $geo, "<", "geometry.txt") or die; my ($step, $w) = split " ", <$geo>;
    open(my $gf, "<", "genome.txt") or die; my $g = <$gf>;
    my $e = () = glob("exp/*.fa");
    sub rc { (my $r = reverse shift) =~ tr/ACGT/TGCA/; $r }
    my (%canon, %of, @names);
    open(my $qi, "<", "queries.fa") or die;
    while (my $h = <$qi>) {
        chomp $h; my $s = <$qi>; chomp $s; (my $n = $h) =~ s/^>//;
        push @names, $n;
        for my $i (0 .. length($s) - $k) {
            my $x = substr($s, $i, $k);
            next unless $x =~ /^[ACGT]+$/;
            my $r = rc($x); my $c = $r lt $x ? $r : $x;
            $canon{$x} = $c; $canon{$r} = $c;
            $of{$c}{$n} = 1;
        }
    }
    my %where; # canonical k-mer -> windows holding it
    for my $p (0 .. length($g) - $k) {
        my $c = $canon{substr($g, $p, $k)} // next;
        my $lo = $p + $k - $w; $lo = 0 if $lo < 0;
        my $first = int(($lo + $step - 1) / $step);
        my $last = int($p / $step);
        $last = $e - 1 if $last > $e - 1;
        $where{$c}{$_} = 1 for $first .. $last;
    }
    my (%total, %hit);
    for my $c (keys %of) {
        for my $n (keys %{ $of{$c} }) {
            $total{$n}++;
            $hit{$n}{$_}++ for keys %{ $where{$c} // {} };
        }
    }
    for my $n (@names) {
        for my $i (sort { $a <=> $b } keys %{ $hit{$n} // {} }) {
            my $sh = $hit{$n}{$i} / $total{$n};
            printf("%s\t%s\t%.6f\n", $n, sprintf("exp/e%05d.fa", $i), $sh)
                if $sh + 1e-12 >= $theta;
        }
    }
' "$K" "$THETA" | LC_ALL=C sort >search.brute

eq=no
cmp -s search.amq search.brute && eq=yes
distinct=$(awk '{ for (i = 1; i <= NF; i++) if ($(i + 1) == "distinct,") print $i }' index.log)
classes=$(awk '{ for (i = 1; i <= NF; i++) if ($(i + 1) == "colour") print $i }' index.log)
bytes=$(($(wc -c <idx.amq) + $(wc -c <idx.amq.classes)))
TABLE="$OUT/search-scale.md"
{
    printf '| experiments | k | theta | queries | distinct k-mers | colour classes | build s | build MB | index bits per k-mer | classes bits per k-mer | search s | ms per query | (query, experiment) pairs | equal to brute force |\n'
    printf '|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|:-:|\n'
    awk -v e="$E" -v k="$K" -v th="$THETA" -v q="$Q" -v d="$distinct" \
        -v c="$classes" -v b="$bytes" -v cb="$(wc -c <idx.amq.classes)" \
        -v eq="$eq" -v pairs="$(wc -l <search.brute)" \
        -v it="$(cat index.t)" -v st="$(cat search.t)" 'BEGIN {
            split(it, a, " "); split(st, s, " ");
            printf("| %d | %d | %s | %d | %d | %d | %.2f | %.1f | %.2f | %.2f | %.2f | %.3f | %d | %s |\n",
                   e, k, th, q, d, c, a[1], a[2] / 1024, 8 * b / d, 8 * cb / d,
                   s[1], 1000 * s[1] / q, pairs, eq) }'
} >"$TABLE"
cat "$TABLE"
[ "$eq" = yes ] || {
    echo "bench-search-scale: search differs from the brute force" >&2
    diff search.amq search.brute | head -5 >&2
    exit 3
}
