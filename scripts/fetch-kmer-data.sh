#!/bin/sh
# fetch-kmer-data.sh — the real sequence data of the k-mer case studies
# (docs/maplets.md), from Debian 12 packages, checked against pinned
# SHA-256 sums and unpacked; never committed.
#
#   scripts/fetch-kmer-data.sh [DIR] [large]     (default: bench-data)
#
# kmer-examples 0~20150903+r2013-8: genomes of M. tuberculosis H37Rv
#   (GCF_000195955.2, 4.4 Mbp) and M. leprae (GCF_000195855.1, 3.3 Mbp)
# bowtie2-examples 2.5.0-3: simulated reads of phage lambda (reads_1.fq,
#   reads_2.fq: 10000 each; longreads.fq: 6000) and its genome
#
# DIR gets genomes/mtb.fna, genomes/mlep.fna, genomes/lambda.fa and
# reads/reads_1.fq.gz, reads/reads_2.fq.gz, reads/longreads.fq.gz (kept
# compressed: amq kmer, jellyfish and kmc read gzip).
#
# With "large", also (about 190 MB to download):
# kleborate-examples 2.3.1-2: four finished Klebsiella pneumoniae
#   assemblies (HS11286, Kp1084, MGH78578, NTUH-K2044; 22.2 Mbp), as
#   large/klebs_*.fna (unpacked from xz)
# pinfish-examples 0.1.0+ds-3: 83591 nanopore cDNA reads of the SIRV
#   spike-ins (75 Mbp), as large/sirv.fq (the primary records of its SAM
#   file, sequence and quality)
set -eu
DIR=${1:-bench-data}
LARGE=${2:-}
mkdir -p "$DIR/debs" "$DIR/genomes" "$DIR/reads"
DIR=$(cd "$DIR" && pwd)

fetch() { # package version sha256
    deb="$DIR/debs/$1_$2_all.deb"
    if [ ! -f "$deb" ]; then
        (cd "$DIR/debs" && apt-get download "$1=$2" >/dev/null 2>&1) || {
            echo "fetch-kmer-data: apt-get download $1=$2 failed (run" \
                 "apt-get update?)" >&2
            exit 2
        }
    fi
    echo "$3  $deb" | sha256sum -c --quiet - || {
        echo "fetch-kmer-data: $deb: checksum mismatch" >&2
        exit 2
    }
    rm -rf "$DIR/debs/$1.x"
    dpkg-deb -x "$deb" "$DIR/debs/$1.x"
}

fetch kmer-examples 0~20150903+r2013-8 \
    f94b7062d92bc820ced42b83f8be83b9f6772c9c4093689a4135535e8ceb1da7
fetch bowtie2-examples 2.5.0-3 \
    9f9f580954187e501102b13484bdecdc2725155e0b8020e7a056a48a06642118

K="$DIR/debs/kmer-examples.x/usr/share/doc/kmer-examples"
tar -xzf "$K/test_data.tar.gz" -C "$DIR/debs"
cp "$DIR/debs/GCF_000195955.2_ASM19595v2_genomic.fna" "$DIR/genomes/mtb.fna"
cp "$DIR/debs/GCF_000195855.1_ASM19585v1_genomic.fna" "$DIR/genomes/mlep.fna"
B="$DIR/debs/bowtie2-examples.x/usr/share/doc/bowtie2/examples"
gzip -dc "$B/reference/lambda_virus.fa.gz" >"$DIR/genomes/lambda.fa"
for r in reads_1 reads_2 longreads; do
    cp "$B/reads/$r.fq.gz" "$DIR/reads/$r.fq.gz"
done
if [ "$LARGE" = large ]; then
    mkdir -p "$DIR/large"
    fetch kleborate-examples 2.3.1-2 \
        6039a0ee139e0b5f8a288f2bba298326419dc856c166e53e27da319c2d9ce29f
    fetch pinfish-examples 0.1.0+ds-3 \
        98e969a5973a5bb65bdf71e7214540bc5639f7915599a18829cd5334e3d0a80b
    KL="$DIR/debs/kleborate-examples.x/usr/share/doc/kleborate/examples/data"
    for a in Klebs_HS11286 Klebs_Kp1084 MGH78578 NTUH-K2044; do
        xz -dc "$KL/$a.fna.xz" >"$DIR/large/klebs_$a.fna"
    done
    P="$DIR/debs/pinfish-examples.x/usr/share/doc/pinfish-examples"
    gzip -dc "$P/sirv_e0_sorted.sam.gz" | awk -F'\t' '
        /^@/ { next }
        { f = $2; if (int(f / 256) % 2 || int(f / 2048) % 2) next
          printf("@%s\n%s\n+\n%s\n", $1, $10, $11) }' >"$DIR/large/sirv.fq"
fi
echo "fetch-kmer-data: $DIR ready" >&2
