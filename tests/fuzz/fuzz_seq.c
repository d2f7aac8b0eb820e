/*
 * fuzz_seq.c — libFuzzer target for the FASTA/FASTQ reader of the
 * command-line tools (tools/common/seqio.c), plain, gzip, xz or bzip2.
 * replay.c runs it over tests/fuzz/corpus/seq in ordinary CI.
 *
 * Properties (a violation aborts): nothing crashes, hangs or leaks,
 * whatever the bytes; every record's sequence is printable ASCII (tabs
 * aside) and the reader stops at the first error with a message naming a
 * line; the rolling k-mers of each sequence equal the k-mers parsed from
 * its text; a plain input read without error, written back as FASTA, reads
 * back to the same sequences, and read in pieces of a few bases (as long
 * FASTA records are) gives the same records; a FASTQ record's quality
 * line is as long as its sequence.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "fuzz_seq: property violated: %s\n", what);
        abort();
    }
}

/* Every k-mer the roll reports is the one parsed from the text. */
static void check_kmers(const char *s, size_t n, unsigned k) {
    kmer_roll kr;
    uint64_t fwd, rev, code;
    kmer_roll_init(&kr, k);
    for (size_t i = 0; i < n; i++) {
        if (!kmer_roll_push(&kr, s[i], &fwd, &rev))
            continue;
        require(i + 1 >= k && kmer_parse(s + i + 1 - k, k, k, &code) &&
                    code == fwd,
                "rolling k-mer differs from its text");
        uint64_t rc = 0;
        for (unsigned j = 0; j < k; j++)
            rc = rc << 2 | (3 - (code >> (2 * j) & 3));
        require(rc == rev, "reverse complement differs");
    }
}

typedef struct text {
    char *p;
    size_t n, cap;
} text;

static void text_add(text *t, const char *s, size_t n) {
    if (t->p == NULL || t->n + n + 1 > t->cap) {
        size_t c = (t->cap + n + 64) * 2;
        char *q = realloc(t->p, c);
        if (q == NULL)
            abort();
        t->p = q;
        t->cap = c;
    }
    memcpy(t->p + t->n, s, n);
    t->n += n;
}

/* Read every record; the sequences as FASTA into out (may be NULL). */
static int read_all(const uint8_t *data, size_t size, unsigned k, text *out,
                    text *seqs, size_t chunk) {
    seq_reader r;
    int got;
    if (!seq_open_mem(&r, data, size)) {
        seq_close(&r);
        return -1;
    }
    r.chunk = chunk;
    while ((got = seq_next(&r)) == 1) {
        require(!r.cont || chunk != 0, "a piece without chunks");
        require(r.qual == NULL ||
                    (r.format == '@' && strlen(r.qual) == r.seq_len),
                "a quality line that is not the sequence's");
        for (size_t i = 0; i < r.seq_len; i++) {
            unsigned char c = (unsigned char)r.seq[i];
            require(((c | 0x20) >= 'a' && (c | 0x20) <= 'z') ||
                        strchr("-.* \t", c) != NULL,
                    "a byte other than a letter, gap or blank in a "
                    "sequence");
        }
        check_kmers(r.seq, r.seq_len, k);
        if (out != NULL) {
            text_add(out, ">x\n", 3);
            text_add(out, r.seq, r.seq_len);
            text_add(out, "\n", 1);
        }
        if (!r.cont) /* pieces of one record join up */
            text_add(seqs, "|", 1);
        text_add(seqs, r.seq, r.seq_len);
    }
    if (got < 0)
        require(strstr(r.err, "line") != NULL || strstr(r.err, "gzip") ||
                    strstr(r.err, "xz") || strstr(r.err, "bzip2") ||
                    strstr(r.err, "memory"),
                "an error without a line or a cause");
    bool gz = r.gz;
    seq_close(&r);
    return got < 0 ? -1 : gz ? 1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    text fasta = {0}, s1 = {0}, s2 = {0};
    unsigned k = 1 + (size ? data[size - 1] % 32 : 0);
    int rc = read_all(data, size, k, &fasta, &s1, 0);
    if (rc == 0 && fasta.n > 0) { /* plain and clean: FASTA again */
        require(read_all((const uint8_t *)fasta.p, fasta.n, k, NULL, &s2, 0) ==
                    0,
                "the FASTA written back does not read");
        require(s1.n == s2.n && memcmp(s1.p, s2.p, s1.n) == 0,
                "the FASTA written back reads other sequences");
    }
    if (rc >= 0) { /* in pieces of a few bases: the same records */
        text s3 = {0};
        size_t chunk = 1 + (size ? data[0] % 7 : 0);
        require(read_all(data, size, k, NULL, &s3, chunk) == rc,
                "reading in pieces ends otherwise");
        require(s1.n == s3.n && (s1.n == 0 || memcmp(s1.p, s3.p, s1.n) == 0),
                "reading in pieces gives other sequences");
        free(s3.p);
    }
    free(fasta.p);
    free(s1.p);
    free(s2.p);
    return 0;
}
