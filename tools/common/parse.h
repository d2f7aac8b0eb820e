/*
 * parse.h — the tools' two text parsers, kept pure (no printing, no
 * exit; an error is a message naming the line and byte) so that libFuzzer
 * targets (tests/fuzz/fuzz_kvline.c, fuzz_seq.c) can drive them:
 *
 *   kvline   one "key<TAB>value" line of `amq map` input: the key is every
 *            byte before the first tab, the value a decimal number below
 *            2^v (or, for sets, a comma list of ids below v);
 *   seq      FASTA and FASTQ records from a file descriptor or a memory
 *            buffer, plain or gzip (zlib; concatenated members too),
 *            detected from the first bytes; its lines and bytes serve
 *            every other input of the tool (key files, pairs).
 */
#ifndef AMQ_TOOLS_PARSE_H
#define AMQ_TOOLS_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <bzlib.h>
#include <lzma.h>
#include <zlib.h>

#define PARSE_ERR_MAX 200

/* ---- key<TAB>value ---------------------------------------------------------- */

typedef struct kvline {
    const char *key; /* points into the line                         */
    size_t key_len;
    uint64_t value;
} kvline;

/* Parse line[0..len) (without its newline; a trailing '\r' is dropped).
 * ids: the value is a comma list of ids, each below vbits, as a bit mask
 * (empty: no id). false with a message in err (the byte in the line it is
 * about, from 1) on: no tab, an empty or non-decimal value, a value of
 * 2^vbits or more, an id out of range or repeated. */
bool kvline_parse(const char *line, size_t len, bool ids, unsigned vbits,
                  kvline *out, char err[PARSE_ERR_MAX]);

/* ---- FASTA / FASTQ ----------------------------------------------------------- */

typedef struct seq_reader {
    int fd; /* -1: reading mem                        */
    const uint8_t *mem;
    size_t mem_len, mem_pos;
    bool gz, zlive, eof;
    z_stream z;
    bool xz, lzlive; /* xz (liblzma), as gz */
    lzma_stream lz;
    bool bz, bzlive; /* bzip2 (libbz2), as gz */
    bz_stream bzs;
    uint8_t *in, *out; /* compressed input, decompressed bytes   */
    size_t in_len, out_len, out_pos;
    uint64_t offset; /* bytes of text consumed (decompressed)  */
    uint64_t line;   /* lines read                             */
    uint64_t zin;    /* compressed bytes consumed              */
    int format;      /* 0 unknown, '>' FASTA, '@' FASTQ        */
    char *buf;       /* the current line                       */
    size_t buf_len, buf_cap;
    bool have_line; /* buf holds a line not yet used (FASTA)  */
    char *seq;      /* the current record's sequence          */
    size_t seq_len, seq_cap;
    char *name; /* its name (after '>' or '@')             */
    size_t name_len, name_cap;
    uint64_t records;
    size_t chunk;     /* FASTA: a longer record comes in pieces of about
                       this many bases (0: whole; set after opening)    */
    bool cont;        /* this piece continues the record before it      */
    bool in_rec;      /* the record goes on after this piece             */
    const char *qual; /* FASTQ: the record's quality line (seq_len
                         bytes) until the next call; NULL for FASTA     */
    char err[PARSE_ERR_MAX];
} seq_reader;

/* Read from fd (not closed by the reader) or from mem[0..len). false
 * (with err) only when out of memory. */
bool seq_open_fd(seq_reader *r, int fd);
bool seq_open_mem(seq_reader *r, const void *mem, size_t len);
void seq_close(seq_reader *r);

/* The next record (or, with r->chunk, piece of one) into r->seq /
 * r->name: 1, or 0 at a clean end, or -1
 * with r->err ("line L (byte B): ..."): a first line that is neither
 * FASTA nor FASTQ, a FASTQ record cut short or whose quality line does not
 * match its sequence, a NUL or non-ASCII byte in a sequence, corrupt or
 * truncated gzip data, a read error. */
int seq_next(seq_reader *r);

/* The next raw line into r->buf (its newline and a '\r' before it
 * dropped), for inputs that are lines rather than records: 1, 0 at the
 * end, -1 on error. *start: the byte offset where it starts. */
int seq_line(seq_reader *r, uint64_t *start);

/* Up to n bytes of the (decompressed) text into dst, for inputs of fixed
 * width records; *got < n only at the end. false (with err) on error. */
bool seq_read(seq_reader *r, void *dst, size_t n, size_t *got);

/* ---- k-mers -------------------------------------------------------------------- */

/* 2-bit code of a base (A C G T, either case), or 4 for anything else. */
static inline unsigned seq_code(char c) {
    switch (c) {
    case 'A':
    case 'a': return 0;
    case 'C':
    case 'c': return 1;
    case 'G':
    case 'g': return 2;
    case 'T':
    case 't': return 3;
    default: return 4;
    }
}

/* Rolling k-mers of a sequence (k <= 32), forward and reverse complement,
 * restarted after any base that is not ACGT (as jellyfish skips them). */
typedef struct kmer_roll {
    uint64_t fwd, rev, mask;
    unsigned k, have, shift;
} kmer_roll;

static inline void kmer_roll_init(kmer_roll *kr, unsigned k) {
    kr->k = k;
    kr->fwd = kr->rev = 0;
    kr->have = 0;
    kr->mask = k >= 32 ? ~0ULL : (1ULL << (2 * k)) - 1;
    kr->shift = 2 * (k - 1);
}

/* Push base c; true when the last k bases are a k-mer (then *fwd, *rev). */
static inline bool kmer_roll_push(kmer_roll *kr, char c, uint64_t *fwd,
                                  uint64_t *rev) {
    unsigned x = seq_code(c);
    if (x > 3) {
        kr->have = 0;
        return false;
    }
    kr->fwd = ((kr->fwd << 2) | x) & kr->mask;
    kr->rev = (kr->rev >> 2) | ((uint64_t)(3 - x) << kr->shift);
    if (kr->have < kr->k)
        kr->have++;
    *fwd = kr->fwd;
    *rev = kr->rev;
    return kr->have == kr->k;
}

/* The k-mer as text (k letters and a NUL into out). */
void kmer_text(uint64_t kmer, unsigned k, char *out);
/* Text to 2-bit code: false unless exactly k letters of ACGT (any case). */
bool kmer_parse(const char *s, size_t len, unsigned k, uint64_t *out);

#endif
