#!/bin/sh
# test_maplet_cli.sh — end-to-end tests of `amq map` and `amq kmer` on data
# made here (a random genome with N runs and lower case, reads sampled from
# it with errors, gzip'ed):
#   - map build/get/add/del/merge for every operator, sets as id lists,
#     exit codes, and bad input (malformed lines, values too wide,
#     incompatible merges, deletes a maplet cannot do): exit 2, a message
#     naming the line and byte, nothing written, existing files intact;
#   - kmer count in exact mode equals Debian's jellyfish 2.3 (histogram and
#     every count; canonical, k = 21 and 31; FASTA and gzip FASTQ), the
#     same bytes with 1 and 2 threads; approximate counts never below the
#     truth; query of k-mer lists and of sequences;
#   - kmer index/search against a brute force in awk: the same files and
#     shares for every query;
#   - truncated FASTQ, truncated or corrupt gzip, xz and bzip2, and binary
#     input:
#     exit 2 naming the line or byte, nothing written.
#
# usage: tests/cli/test_maplet_cli.sh path/to/amq [TMPDIR]
. "$(dirname "$0")/harness.sh" "$@"


# ---- map ---------------------------------------------------------------------

printf 'apple\t3\nbanana split\t10\napple\t4\ncherry\t1\n' >sum.tsv
run 0 "map build sum" "$AMQ" map build --op sum --value-bits 4 --fpr 0.001 -o sum.amq sum.tsv
run 0 "map get" "$AMQ" map get sum.amq --key apple --key 'banana split' --key zzz
check "map get: sums" sh -c 'grep -qx "apple	7" out && grep -qx "banana split	10" out && ! grep -q zzz out'
run 1 "map get: none found" "$AMQ" map get sum.amq --key nothing-here
printf 'apple\t5\n' >more.tsv
run 0 "map add" "$AMQ" map add sum.amq more.tsv
run 0 "map get after add" "$AMQ" map get sum.amq --key apple
check "add summed" grep -qx "apple	12" out
run 0 "map del" "$AMQ" map del sum.amq more.tsv
run 0 "map get after del" "$AMQ" map get sum.amq --key apple
check "del subtracted" grep -qx "apple	7" out

printf 'a\t0,3\nb\t5\na\t1\n' >set.tsv
run 0 "map build or" "$AMQ" map build --op or --value-bits 8 --fpr 0.001 -o set.amq set.tsv
run 0 "map get sets" "$AMQ" map get set.amq --key a --key b
check "sets print as id lists" sh -c 'grep -qx "a	0,1,3" out && grep -qx "b	5" out'
run 0 "map get --raw" "$AMQ" map get set.amq --raw --key a
check "--raw prints the mask" grep -qx "a	11" out

printf 'x\t9\ny\t2\n' >max.tsv
run 0 "map build max" "$AMQ" map build --op max --value-bits 4 --fpr 0.01 -o max.amq max.tsv
cp max.amq max.before
run 2 "del on a max maplet" "$AMQ" map del max.amq max.tsv
check "del refusal explains" has "multiset" err
check "refused del leaves the file" cmp -s max.amq max.before
run 0 "map build max multiset" "$AMQ" map build --op max --value-bits 4 --multiset --fpr 0.01 -o maxm.amq max.tsv
printf 'x\t9\n' >x9.tsv
run 0 "multiset del" "$AMQ" map del maxm.amq x9.tsv
run 1 "multiset key gone" "$AMQ" map get maxm.amq --key x

printf 'k1\t1\nk2\t2\n' >a.tsv
printf 'k2\t3\nk3\t4\n' >b.tsv
cat a.tsv b.tsv >ab.tsv
for f in a b ab; do
    run 0 "map build $f" "$AMQ" map build --op sum --value-bits 4 -t maplet:q=6,r=12 -o $f.amq $f.tsv
done
run 0 "map merge" "$AMQ" map merge a.amq b.amq -o m.amq
check "merge = one maplet of both" cmp -s m.amq ab.amq
run 2 "merge across operators" "$AMQ" map merge a.amq max.amq -o bad.amq
check "merge refusal explains" has "differ" err
check "refused merge writes nothing" test ! -e bad.amq

run 0 "static maplet" "$AMQ" map build -t smaplet --op sum --value-bits 4 --fpr 0.01 -o s.amq sum.tsv
run 0 "static get" "$AMQ" map get s.amq --key apple
check "static value" grep -qx "apple	7" out
run 2 "static add refused" "$AMQ" map add s.amq more.tsv
run 0 "info on a maplet" "$AMQ" info sum.amq
check "info names the maplet" sh -c 'grep -q "maplet:" out && grep -q "op=sum" out'

# Bad input: the message names the line (and byte), nothing is written.
printf 'good\t1\nno tab here\n' >bad1.tsv
run 2 "malformed line" "$AMQ" map build --op sum --value-bits 4 --fpr 0.01 -o new.amq bad1.tsv
check "malformed: line 2 named" has "line 2" err
check "malformed: nothing written" test ! -e new.amq
printf 'good\t1\nwide\t16\n' >bad2.tsv
run 2 "value too wide" "$AMQ" map build --op sum --value-bits 4 --fpr 0.01 -o new.amq bad2.tsv
check "too wide: named" sh -c 'grep -q "line 2" err && grep -q "wider than 4 bits" err'
printf 'good\t1\nnum\t12x\n' >bad3.tsv
run 2 "not a number" "$AMQ" map build --op sum --value-bits 8 --fpr 0.01 -o new.amq bad3.tsv
check "not a number: byte named" has "byte 7" err
printf 's\t1,99\n' >bad4.tsv
run 2 "id out of range" "$AMQ" map build --op or --value-bits 8 --fpr 0.01 -o new.amq bad4.tsv
cp sum.amq sum.before
run 2 "bad line in add" "$AMQ" map add sum.amq bad2.tsv
check "failed add leaves the file" cmp -s sum.amq sum.before
check "nothing written at all" test ! -e new.amq

# ---- data for the k-mer tests ------------------------------------------------

# A random genome of 3 records (N runs, some lower case), reads sampled
# from it with 1% substitutions, and 4 FASTA files for the index.
awk 'BEGIN { srand(11); b = "ACGT";
    for (r = 1; r <= 3; r++) {
        printf(">chr%d test genome\n", r); s = "";
        for (i = 0; i < 9000; i++) {
            c = substr(b, int(rand() * 4) + 1, 1);
            if (i % 2500 >= 2480) c = "N";
            if (i % 3000 >= 2900) c = tolower(c);
            s = s c;
            if (length(s) == 70) { print s; s = "" }
        }
        if (s != "") print s;
    } }' >genome.fa
awk 'BEGIN { srand(5); b = "ACGT" }
    /^>/ { next }
    { g = g toupper($0) }
    END { for (n = 0; n < 2000; n++) {
        p = int(rand() * (length(g) - 120)) + 1; s = substr(g, p, 100);
        out = "";
        for (i = 1; i <= 100; i++) {
            c = substr(s, i, 1);
            if (rand() < 0.01) c = substr(b, int(rand() * 4) + 1, 1);
            out = out c;
        }
        q = ""; for (i = 0; i < 100; i++) q = q "I";
        printf("@read%d\n%s\n+\n%s\n", n, out, q) } }' genome.fa >reads.fq
gzip -c reads.fq >reads.fq.gz

# ---- kmer count against jellyfish ----------------------------------------------

command -v jellyfish >/dev/null 2>&1 || fail "jellyfish is not installed (scripts/install-deps.sh installs it)"
for k in 21 31; do
    for input in genome.fa reads.fq.gz; do
        run 0 "kmer count k=$k $input" "$AMQ" kmer count -k $k -C -q -o c$k.amq $input
        if [ "$input" = reads.fq.gz ]; then
            gzip -dc reads.fq.gz >jf.in
        else
            cp genome.fa jf.in
        fi
        jellyfish count -m $k -s 1M -C -o c$k.jf jf.in 2>err
        "$AMQ" kmer histo c$k.amq >h.amq 2>err
        jellyfish histo c$k.jf >h.jf
        check "histo = jellyfish histo (k=$k, $input)" cmp -s h.amq h.jf
        "$AMQ" kmer dump c$k.amq | sort >d.amq
        jellyfish dump -c -t c$k.jf | sort >d.jf
        check "every count = jellyfish (k=$k, $input)" cmp -s d.amq d.jf
    done
done
for t in 1 2 3; do
    run 0 "kmer count, $t threads" "$AMQ" kmer count -k 31 -C -j $t -q -o t$t.amq reads.fq.gz
    check "$t threads give the default's bytes" cmp -s t$t.amq c31.amq
done
run 0 "kmer count, small start, grows" "$AMQ" kmer count -k 21 -C -n 100 -q -o g.amq genome.fa
"$AMQ" kmer dump g.amq | sort >d.g
jellyfish count -m 21 -s 1M -C -o g.jf genome.fa && jellyfish dump -c -t g.jf | sort >d.gj
check "grown counts = jellyfish" cmp -s d.g d.gj
run 0 "kmer count from stdin" sh -c '"$1" kmer count -k 21 -C -q -o s.amq - <genome.fa' sh "$AMQ"
"$AMQ" kmer dump s.amq | sort >d.s
check "stdin counts (no first pass, grows) = jellyfish" cmp -s d.s d.gj

# Sized from the input: one chromosome-long record (read in pieces, its
# k-mers across the pieces' seams counted once), about 1.2 M distinct
# k-mers (sampled, not all kept, by the first pass): the counts equal
# jellyfish's, the table never doubled (a doubling leaves it at most
# half full) and the width the pass chose is not beaten by another.
awk 'BEGIN { srand(23); b = "ACGT"; print ">chrL one long record";
    for (l = 0; l < 18000; l++) { s = "";
        for (i = 0; i < 70; i++) s = s substr(b, int(rand() * 4) + 1, 1);
        print s } }' >long.fa
run 0 "kmer count of a long record" "$AMQ" kmer count -k 25 -C -q -o long.amq long.fa
"$AMQ" kmer dump long.amq | sort >d.l
jellyfish count -m 25 -s 2M -C -o l.jf long.fa && jellyfish dump -c -t l.jf | sort >d.lj
check "long record counts = jellyfish" cmp -s d.l d.lj
slots_of() { "$AMQ" info --json "$1" | awk -F': ' -v k="$2" '$1 ~ "\"" k "\"" { gsub(/,/, "", $2); print $2 }'; }
check "the sized table did not grow" awk -v u="$(slots_of long.amq used_slots)" \
    -v n="$(slots_of long.amq home_slots)" \
    'BEGIN { exit !(n > 0 && u / n > 0.5 && u / n <= 0.95) }'
v=$(slots_of long.amq value_bits)
for w in 1 2 4 8; do
    "$AMQ" kmer count -k 25 -C -q --value-bits $w -o w$w.amq long.fa
    check "value bits $v (chosen) no larger than $w bits" \
        test "$(wc -c <long.amq)" -le "$(wc -c <w$w.amq)"
done
run 0 "info on an exact k-mer maplet" "$AMQ" info long.amq
expect_in "fpr bound: *0 (exact" out "info: an exact maplet has no false positives"
expect_in "target fpr: *n/a (exact)" out "info: no target for an exact maplet"
run 0 "info --json on an exact k-mer maplet" "$AMQ" info --json long.amq
expect_in '"exact": true' out "json: exact"
expect_in '"target_fpr": null' out "json: no target"

# Count thresholds and the quality filter, as jellyfish's -L/-U and -Q.
gzip -dc reads.fq.gz >r.fq
jellyfish count -m 21 -s 1M -C -o r.jf r.fq
run 0 "kmer count -L 2 -U 5" "$AMQ" kmer count -k 21 -C -L 2 -U 5 -q -o lu.amq reads.fq.gz
"$AMQ" kmer dump lu.amq | sort >d.lu
jellyfish dump -c -t -L 2 -U 5 r.jf | sort >d.luj
check "count -L/-U keeps jellyfish's k-mers" sh -c 'test -s d.luj && cmp -s d.lu d.luj'
run 0 "kmer count, all counts" "$AMQ" kmer count -k 21 -C -q -o all.amq reads.fq.gz
"$AMQ" kmer dump -L 3 -U 7 all.amq | sort >d.dl
jellyfish dump -c -t -L 3 -U 7 r.jf | sort >d.dlj
check "dump -L/-U = jellyfish dump -L/-U" sh -c 'test -s d.dlj && cmp -s d.dl d.dlj'
"$AMQ" kmer histo -L 3 -U 7 all.amq >h.l
jellyfish histo r.jf | awk '$1 >= 3 && $1 <= 7' >h.lj
check "histo -L/-U = jellyfish's histogram in range" sh -c 'test -s h.lj && cmp -s h.l h.lj'
run 2 "-L above -U refused" "$AMQ" kmer dump -L 5 -U 2 all.amq
expect_in "above -U" err "-L/-U refusal names them"
awk 'BEGIN { srand(3) } NR % 4 == 0 { q = "";
        for (i = 0; i < length($0); i++) q = q sprintf("%c", 35 + int(rand() * 40));
        print q; next } { print }' r.fq >rq.fq
jellyfish count -m 21 -s 1M -C -Q + -o rq.jf rq.fq
run 0 "kmer count -Q +" "$AMQ" kmer count -k 21 -C -Q + -q -o rq.amq rq.fq
"$AMQ" kmer dump rq.amq | sort >d.q
jellyfish dump -c -t rq.jf | sort >d.qj
check "quality filter = jellyfish -Q" sh -c 'test -s d.qj && cmp -s d.q d.qj'
jellyfish dump -c -t r.jf | sort >d.rj
check "the quality filter drops k-mers" test "$(wc -l <d.q)" -lt "$(wc -l <d.rj)"
run 2 "-Q takes one character" "$AMQ" kmer count -k 21 -Q 20 -o x.amq rq.fq

# Merge: samples counted apart (different sizes, so different shapes and
# value widths) merge into the joint count, byte for byte.
awk 'NR <= 1200' r.fq >p1.fq
awk 'NR > 1200 && NR <= 6000' r.fq >p2.fq
awk 'NR > 6000' r.fq >p3.fq
for i in 1 2 3; do
    "$AMQ" kmer count -k 21 -C -q -o p$i.amq p$i.fq
done
check "the parts have different shapes" sh -c \
    '"$1" info p1.amq | grep params >s1 && "$1" info p2.amq | grep params >s2 && ! cmp -s s1 s2' sh "$AMQ"
run 0 "kmer merge of three samples" "$AMQ" kmer merge -q -o merged.amq p1.amq p2.amq p3.amq
"$AMQ" kmer dump merged.amq | sort >d.m
check "merged counts = jellyfish's joint count" cmp -s d.m d.rj
check "merged = one joint count, byte for byte" cmp -s merged.amq all.amq
run 0 "kmer merge -L 2" "$AMQ" kmer merge -q -L 2 -o m2.amq p1.amq p2.amq p3.amq
"$AMQ" kmer dump m2.amq | sort >d.m2
jellyfish dump -c -t -L 2 r.jf | sort >d.rj2
check "merge -L 2 = jellyfish dump -L 2" cmp -s d.m2 d.rj2
"$AMQ" kmer count -k 25 -C -q -o k25.amq p1.fq
run 2 "merge across k refused" "$AMQ" kmer merge -o bad.amq p1.amq k25.amq
expect_in "same k, strands and mode" err "merge refusal names what differs"
run 2 "merge refuses count's settings" "$AMQ" kmer merge -k 25 -o bad.amq p1.amq p2.amq
expect_in "from its tables" err "merge: k comes from the tables"
run 2 "index refuses -L" "$AMQ" kmer index -k 21 -L 2 -o bad.amq p1.fq
expect_in "not index" err "index: -L is refused, not ignored"
"$AMQ" kmer count -k 21 -C --fpr 0.01 -q -o a1.amq p1.fq
"$AMQ" kmer count -k 21 -C --fpr 0.01 -q -o a2.amq p2.fq
run 2 "approximate tables of different shapes refused" "$AMQ" kmer merge -o bad.amq a1.amq a2.amq
expect_in "merge only when" err "approximate refusal explains"
check "refused merges write nothing" test ! -e bad.amq
"$AMQ" kmer count -k 21 -C --fpr 0.01 -n 60000 -q -o b1.amq p1.fq
"$AMQ" kmer count -k 21 -C --fpr 0.01 -n 60000 -q -o b2.amq p2.fq
run 0 "approximate tables counted alike merge" "$AMQ" kmer merge -o ab.amq b1.amq b2.amq
cat p1.fq p2.fq >p12.fq
jellyfish count -m 21 -s 1M -C -o p12.jf p12.fq && jellyfish dump -c -t p12.jf | sort >d.p12
cut -f1 d.p12 >k12.txt
"$AMQ" kmer query ab.amq k12.txt >q12.txt
check "approximate merged counts never below the joint truth" sh -c \
    'paste q12.txt d.p12 | awk -F"\t" "\$2 < \$4 { bad++ } END { exit bad > 0 }"'

# A memory limit: refused up front when the sized table passes it, and
# when a table read from stdin would have to grow past it; nothing is
# written either way.
run 2 "--memory below the sized table" "$AMQ" kmer count -k 25 -C --memory 2M -o mem.amq long.fa
expect_in "more than the memory limit" err "memory refusal explains"
run 2 "--memory stops growth" sh -c '"$1" kmer count -k 25 -C --memory 12M -o mem.amq - <long.fa' sh "$AMQ"
expect_in "growing it needs" err "growth refusal explains"
check "refused counts write nothing" test ! -e mem.amq

# Approximate counting: never below the truth.
run 0 "kmer count --fpr" "$AMQ" kmer count -k 21 -C --fpr 0.01 -q -o ap.amq genome.fa
cut -f1 d.gj >kmers.txt
run 0 "kmer query a list" "$AMQ" kmer query ap.amq kmers.txt
check "approximate counts never below jellyfish's" sh -c \
    'paste out d.gj | awk -F"\t" "\$2 < \$4 { bad++ } END { exit bad > 0 }"'
run 0 "kmer query exact" "$AMQ" kmer query g.amq kmers.txt
check "exact query = jellyfish" cmp -s out d.gj
printf '>q\nACGTNACGTACGTACGTACGTACGTACGTAC\n' >q.fa
run 0 "kmer query sequences" "$AMQ" kmer query g.amq q.fa
check "one line per k-mer of the sequence" test "$(wc -l <out)" -eq 6

# ---- index and search against a brute force --------------------------------------

awk '/^>/ { n++ } { print > ("part" n ".fa") }' genome.fa
printf '>extra\n' >part4.fa
awk 'NR > 1 && NR < 60' genome.fa >>part4.fa
K=21
run 0 "kmer index" "$AMQ" kmer index -k $K -q -o idx.amq part1.fa part2.fa part3.fa part4.fa
awk 'NR % 4 == 2 && NR < 400 { printf(">r%d\n%s\n", NR, $0) }' reads.fq >queries.fa
printf '>span\n' >>queries.fa
awk 'NR > 120 && NR < 140' genome.fa >>queries.fa
run 0 "kmer search" "$AMQ" kmer search idx.amq queries.fa --theta 0.3
sort out >search.amq
brute_search() {
awk -v K=$K -v theta=0.3 '
    function canon(s,   i, r, c) {
        r = "";
        for (i = length(s); i >= 1; i--) {
            c = substr(s, i, 1);
            r = r (c == "A" ? "T" : c == "C" ? "G" : c == "G" ? "C" : "A");
        }
        return r < s ? r : s;
    }
    function kmers(seq, arr, tag,   i, w) {
        seq = toupper(seq);
        for (i = 1; i + K - 1 <= length(seq); i++) {
            w = substr(seq, i, K);
            if (w ~ /^[ACGT]+$/) arr[tag SUBSEP canon(w)] = 1;
        }
    }
    function flush() {
        if (name == "") return;
        if (FILENAME_OF == "q") kmers(seq, Q, name); else kmers(seq, F, file);
        if (FILENAME_OF == "q") order[++nq] = name;
    }
    FNR == 1 { flush(); name = ""; seq = "";
               FILENAME_OF = FILENAME == "queries.fa" ? "q" : "f";
               if (FILENAME_OF == "f") files[++nf] = FILENAME; file = FILENAME }
    /^>/ { flush(); name = substr($0, 2); seq = ""; next }
    { seq = seq $0 }
    END {
        flush();
        for (key in Q) { split(key, p, SUBSEP); total[p[1]]++; qk[key] = 1 }
        for (key in Q) {
            split(key, p, SUBSEP);
            for (f = 1; f <= nf; f++)
                if ((files[f], p[2]) in F) hit[p[1], files[f]]++;
        }
        for (i = 1; i <= nq; i++) for (f = 1; f <= nf; f++) {
            q = order[i]; h = hit[q, files[f]] + 0;
            if (total[q] > 0 && h > 0 && h / total[q] >= theta - 1e-12)
                printf("%s\t%s\t%.6f\n", q, files[f], h / total[q]);
        }
    }' "$@" queries.fa | sort
}
brute_search part1.fa part2.fa part3.fa part4.fa >search.brute
check "search = brute force (files and shares)" cmp -s search.amq search.brute
check "search found something" test -s search.brute

# Past 64 inputs: 150 overlapping windows of the genome (each base in
# about six), indexed on 1 and 2 threads (the same bytes), searched
# against the brute force; approximate mode never misses an input.
awk '!/^>/ { g = g toupper($0) } END {
        for (i = 0; i < 150; i++)
            printf(">w%d\n%s\n", i, substr(g, i * 170 + 1, 1000)) > sprintf("w%03d.fa", i) }' genome.fa
W=$(ls w[0-9][0-9][0-9].fa)
# shellcheck disable=SC2086
run 0 "kmer index of 150 inputs" "$AMQ" kmer index -k $K -j 1 -q -o widx.amq $W
# shellcheck disable=SC2086
run 0 "kmer index, 2 threads" "$AMQ" kmer index -k $K -j 2 -q -o widx2.amq $W
check "threads give the same index" sh -c 'cmp -s widx.amq widx2.amq && cmp -s widx.amq.classes widx2.amq.classes'
run 0 "kmer search of 150 inputs" "$AMQ" kmer search widx.amq queries.fa --theta 0.3
sort out >wsearch.amq
# shellcheck disable=SC2086
brute_search $W >wsearch.brute
check "150-input search = brute force" cmp -s wsearch.amq wsearch.brute
check "some query is in several inputs" sh -c \
    'cut -f1 wsearch.brute | sort | uniq -c | awk "\$1 > 1 { m = 1 } END { exit !m }"'
# shellcheck disable=SC2086
run 0 "approximate index" "$AMQ" kmer index -k $K --fpr 0.05 -q -o aidx.amq $W
run 0 "approximate search" "$AMQ" kmer search aidx.amq queries.fa --theta 0.3
sort out >asearch.amq
check "approximate search misses no input (shares at least the truth)" \
    awk -F'\t' 'NR == FNR { a[$1 "\t" $2] = $3; next }
        { n++; if (!(($1 "\t" $2) in a) || a[$1 "\t" $2] + 1e-9 < $3) bad++ }
        END { exit !(n > 0 && bad == 0) }' asearch.amq wsearch.brute
cp widx.amq.classes classes.good
printf 'XXXX' | dd of=widx.amq.classes bs=1 seek=40 conv=notrunc 2>/dev/null
run 2 "corrupt colour classes" "$AMQ" kmer search widx.amq queries.fa
expect_in "checksum mismatch" err "corrupt classes named"
head -c 100 classes.good >widx.amq.classes
run 2 "truncated colour classes" "$AMQ" kmer search widx.amq queries.fa
expect_in "classes" err "truncated classes named"
cp classes.good widx.amq.classes
rm -f widx.amq.classes
run 2 "missing colour classes" "$AMQ" kmer search widx.amq queries.fa
expect_in "write the index" err "missing classes: what to do"
cp classes.good widx.amq.classes
run 1 "search with nothing at theta 1" "$AMQ" kmer search idx.amq q.fa --theta 1

# ---- bad sequence input ------------------------------------------------------------

printf '@r1\nACGTACGT\n+\nIIIIIIII\n@r2\nACGTAC\n+\n' >trunc.fq
run 2 "truncated FASTQ" "$AMQ" kmer count -k 5 -o bad.amq trunc.fq
check "truncated FASTQ: line named" sh -c 'grep -q "line 7" err && grep -q "cut short" err'
printf '@r1\nACGTACGT\n+\nIII\n' >qual.fq
run 2 "quality length" "$AMQ" kmer count -k 5 -o bad.amq qual.fq
check "quality length named" has "3 quality values for 8 bases" err
# cut_and_corrupt EXT NAME: reads.fq.EXT cut short and overwritten in the
# middle: both refused, the message naming the stream and the byte.
cut_and_corrupt() {
    head -c 4000 "reads.fq.$1" >"cut.fq.$1"
    run 2 "truncated $2" "$AMQ" kmer count -k 5 -o bad.amq "cut.fq.$1"
    check "truncated $2 named" has "$2 stream cut short" err
    cp "reads.fq.$1" "corrupt.fq.$1"
    printf 'XXXXXXXXXXXXXXXXXXXXXXXX' | dd of="corrupt.fq.$1" bs=1 seek=3000 conv=notrunc 2>/dev/null
    run 2 "corrupt $2" "$AMQ" kmer count -k 5 -o bad.amq "corrupt.fq.$1"
    check "corrupt $2: byte named" has "corrupt $2 data at compressed byte" err
}
cut_and_corrupt gz gzip
xz -c reads.fq >reads.fq.xz
run 0 "kmer count of xz" "$AMQ" kmer count -k 31 -C -q -o xz.amq reads.fq.xz
check "xz counts = gzip counts, byte for byte" cmp -s xz.amq c31.amq
cut_and_corrupt xz xz
bzip2 -c reads.fq >reads.fq.bz2
run 0 "kmer count of bzip2" "$AMQ" kmer count -k 31 -C -q -o bz.amq reads.fq.bz2
check "bzip2 counts = gzip counts, byte for byte" cmp -s bz.amq c31.amq
bzip2 -c p1.fq >two.bz2 && bzip2 -c p2.fq >>two.bz2
run 0 "concatenated bzip2 streams" "$AMQ" kmer count -k 21 -C -q -o two.amq two.bz2
"$AMQ" kmer count -k 21 -C -q -o p12.amq p12.fq
check "both streams counted" cmp -s two.amq p12.amq
cut_and_corrupt bz2 bzip2
printf 'not a sequence file\n' >text.txt
run 2 "not FASTA/FASTQ" "$AMQ" kmer count -k 5 -o bad.amq text.txt
check "format named" has "neither FASTA" err
printf '>s\nAC\001GT\n' >ctl.fa
run 2 "control byte" "$AMQ" kmer count -k 5 -o bad.amq ctl.fa
check "control byte named" sh -c 'grep -q "line 2" err && grep -q "0x01" err'
run 2 "exact k < 4 refused" "$AMQ" kmer count -k 3 -o bad.amq genome.fa
check "k < 4 explained" has "k >= 4" err
check "no output after bad input" test ! -e bad.amq

finish test_maplet_cli && rm -rf "$T"
