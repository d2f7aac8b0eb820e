/*
 * seqio.c — FASTA and FASTQ records, plain, gzip, xz or bzip2 (parse.h).
 *
 * Three layers, each pulling from the one below:
 *
 *   raw bytes     read(2) from a descriptor, or a memory buffer
 *   text bytes    the raw bytes, or zlib's inflate of them when they start
 *                 with the gzip magic 1f 8b (a new member may follow the
 *                 end of one, as `cat a.gz b.gz` makes), or liblzma's
 *                 decoding when they start with the xz magic fd 37 7a 58
 *                 5a 00, or libbz2's when they start with "BZh1".."BZh9"
 *                 (concatenated streams too, as pbzip2 writes)
 *   lines         split on '\n' ('\r' before it dropped), counted, with
 *                 the byte offset of each line's start for messages
 *
 * Records: FASTA is a '>' line and the sequence lines up to the next '>'
 * (or the end); FASTQ is '@' name, sequence, '+' line, and a quality line
 * of the sequence's length. The first non-empty line decides which.
 * Sequence lines hold letters (IUPAC codes: the k-mer code treats
 * everything but ACGT as a break), gaps, stops and blanks; quality lines
 * printable ASCII. Anything else (digits, '>' or '@' in a FASTQ sequence,
 * control bytes, NUL, bytes above 0x7e) is an error naming its line and
 * byte, so a binary or mangled file is reported, not counted.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parse.h"

#define SEQ_IN (1u << 16)
#define SEQ_OUT (1u << 18)

/* ---- raw bytes ------------------------------------------------------------ */

static bool seq_fail(seq_reader *r, const char *fmt, const char *what) {
    snprintf(r->err, sizeof r->err, fmt, what);
    return false;
}

/* Up to cap raw bytes into dst; *got = 0 at the end. */
static bool raw_read(seq_reader *r, uint8_t *dst, size_t cap, size_t *got) {
    if (r->fd < 0) {
        size_t n =
            r->mem_len - r->mem_pos < cap ? r->mem_len - r->mem_pos : cap;
        memcpy(dst, r->mem + r->mem_pos, n);
        r->mem_pos += n;
        *got = n;
        return true;
    }
    for (;;) {
        ssize_t n = read(r->fd, dst, cap);
        if (n >= 0) {
            *got = (size_t)n;
            return true;
        }
        if (errno != EINTR)
            return seq_fail(r, "read error: %s", strerror(errno));
    }
}

static bool bz_start(seq_reader *r);

static bool seq_open(seq_reader *r) {
    r->in = malloc(SEQ_IN);
    r->out = malloc(SEQ_OUT);
    if (r->in == NULL || r->out == NULL)
        return seq_fail(r, "%s", "out of memory");
    size_t got = 0;
    if (!raw_read(r, r->in, SEQ_IN, &got))
        return false;
    r->gz = got >= 2 && r->in[0] == 0x1f && r->in[1] == 0x8b;
    r->xz = got >= 6 && memcmp(r->in,
                               "\xfd"
                               "7zXZ\0",
                               6) == 0;
    r->bz = got >= 4 && memcmp(r->in, "BZh", 3) == 0 && r->in[3] >= '1' &&
            r->in[3] <= '9';
    if (r->bz) {
        memset(&r->bzs, 0, sizeof r->bzs);
        r->bzs.next_in = (char *)r->in;
        r->bzs.avail_in = (unsigned)got;
        return bz_start(r);
    }
    if (r->xz) {
        lzma_stream init = LZMA_STREAM_INIT;
        r->lz = init;
        if (lzma_stream_decoder(&r->lz, UINT64_MAX, LZMA_CONCATENATED) !=
            LZMA_OK)
            return seq_fail(r, "%s", "liblzma cannot start");
        r->lzlive = true;
        r->lz.next_in = r->in;
        r->lz.avail_in = got;
        return true;
    }
    if (!r->gz) { /* plain: the first bytes are text already */
        memcpy(r->out, r->in, got);
        r->out_len = got;
        r->eof = got == 0;
        return true;
    }
    if (inflateInit2(&r->z, 15 + 32) != Z_OK)
        return seq_fail(r, "%s", "zlib cannot start");
    r->zlive = true;
    r->z.next_in = r->in;
    r->z.avail_in = (uInt)got;
    return true;
}

bool seq_open_fd(seq_reader *r, int fd) {
    memset(r, 0, sizeof *r);
    r->fd = fd;
    return seq_open(r);
}

bool seq_open_mem(seq_reader *r, const void *mem, size_t len) {
    memset(r, 0, sizeof *r);
    r->fd = -1;
    r->mem = mem;
    r->mem_len = len;
    return seq_open(r);
}

void seq_close(seq_reader *r) {
    if (r->zlive)
        inflateEnd(&r->z);
    if (r->lzlive)
        lzma_end(&r->lz);
    if (r->bzlive)
        BZ2_bzDecompressEnd(&r->bzs);
    free(r->in);
    free(r->out);
    free(r->buf);
    free(r->seq);
    free(r->name);
    memset(r, 0, sizeof *r);
}

/* ---- text bytes ------------------------------------------------------------ */

/* More compressed input when inflate has used it all; *end at the end. */
static bool gz_input(seq_reader *r, bool *end) {
    size_t got = 0;
    *end = false;
    if (r->z.avail_in > 0)
        return true;
    if (!raw_read(r, r->in, SEQ_IN, &got))
        return false;
    r->z.next_in = r->in;
    r->z.avail_in = (uInt)got;
    *end = got == 0;
    return true;
}

static bool gz_refill(seq_reader *r) {
    bool end;
    r->z.next_out = r->out;
    r->z.avail_out = SEQ_OUT;
    while (r->z.avail_out == SEQ_OUT) {
        if (!gz_input(r, &end))
            return false;
        if (end && r->z.total_in == 0) { /* after a whole member */
            r->eof = true;
            return true;
        }
        if (end)
            return seq_fail(r, "%s",
                            "gzip stream cut short (truncated "
                            "file)");
        uInt before = r->z.avail_in;
        int zr = inflate(&r->z, Z_NO_FLUSH);
        r->zin += before - r->z.avail_in;
        if (zr == Z_STREAM_END) {
            inflateReset(&r->z); /* another member may follow */
        } else if (zr != Z_OK && zr != Z_BUF_ERROR) {
            char what[120];
            snprintf(what, sizeof what,
                     "corrupt gzip data at compressed "
                     "byte %llu (zlib: %s)",
                     (unsigned long long)r->zin, r->z.msg ? r->z.msg : "error");
            return seq_fail(r, "%s", what);
        }
    }
    r->out_len = SEQ_OUT - r->z.avail_out;
    return true;
}

static bool xz_refill(seq_reader *r) {
    r->lz.next_out = r->out;
    r->lz.avail_out = SEQ_OUT;
    while (r->lz.avail_out == SEQ_OUT && !r->eof) {
        lzma_action act = LZMA_RUN;
        if (r->lz.avail_in == 0) {
            size_t got = 0;
            if (!raw_read(r, r->in, SEQ_IN, &got))
                return false;
            r->lz.next_in = r->in;
            r->lz.avail_in = got;
            act = got == 0 ? LZMA_FINISH : LZMA_RUN;
        }
        size_t before = r->lz.avail_in;
        lzma_ret lr = lzma_code(&r->lz, act);
        r->zin += before - r->lz.avail_in;
        if (lr == LZMA_STREAM_END) {
            r->eof = true;
        } else if (lr == LZMA_BUF_ERROR && act == LZMA_FINISH) {
            return seq_fail(r, "%s", "xz stream cut short (truncated file)");
        } else if (lr != LZMA_OK) {
            char what[120];
            snprintf(what, sizeof what,
                     "corrupt xz data at compressed byte %llu (liblzma "
                     "error %d)",
                     (unsigned long long)r->zin, (int)lr);
            return seq_fail(r, "%s", what);
        }
    }
    r->out_len = SEQ_OUT - r->lz.avail_out;
    return true;
}

/* A decoder for the bzip2 stream at next_in (the first, or one after
 * the end of another), keeping where input and output stand. */
static bool bz_start(seq_reader *r) {
    bz_stream keep = r->bzs;
    memset(&r->bzs, 0, sizeof r->bzs);
    if (BZ2_bzDecompressInit(&r->bzs, 0, 0) != BZ_OK)
        return seq_fail(r, "%s", "libbz2 cannot start");
    r->bzlive = true;
    r->bzs.next_in = keep.next_in;
    r->bzs.avail_in = keep.avail_in;
    r->bzs.next_out = keep.next_out;
    r->bzs.avail_out = keep.avail_out;
    return true;
}

static bool bz_refill(seq_reader *r) {
    r->bzs.next_out = (char *)r->out;
    r->bzs.avail_out = SEQ_OUT;
    while (r->bzs.avail_out == SEQ_OUT) {
        if (r->bzs.avail_in == 0) {
            size_t got = 0;
            if (!raw_read(r, r->in, SEQ_IN, &got))
                return false;
            if (got == 0 && r->bzlive)
                return seq_fail(r, "%s",
                                "bzip2 stream cut short (truncated file)");
            if (got == 0) { /* the end, after a whole stream */
                r->eof = true;
                break;
            }
            r->bzs.next_in = (char *)r->in;
            r->bzs.avail_in = (unsigned)got;
        }
        if (!r->bzlive && !bz_start(r))
            return false;
        unsigned before = r->bzs.avail_in;
        int br = BZ2_bzDecompress(&r->bzs);
        r->zin += before - r->bzs.avail_in;
        if (br == BZ_STREAM_END) {
            BZ2_bzDecompressEnd(&r->bzs);
            r->bzlive = false;
        } else if (br != BZ_OK) {
            char what[120];
            snprintf(what, sizeof what,
                     "corrupt bzip2 data at compressed byte %llu (libbz2 "
                     "error %d)",
                     (unsigned long long)r->zin, br);
            return seq_fail(r, "%s", what);
        }
    }
    r->out_len = SEQ_OUT - r->bzs.avail_out;
    return true;
}

/* Make out[out_pos..out_len) non-empty, or set eof. */
static bool refill(seq_reader *r) {
    r->out_pos = 0;
    r->out_len = 0;
    if (r->eof)
        return true;
    if (r->gz)
        return gz_refill(r);
    if (r->xz)
        return xz_refill(r);
    if (r->bz)
        return bz_refill(r);
    size_t got = 0;
    if (!raw_read(r, r->out, SEQ_OUT, &got))
        return false;
    r->out_len = got;
    r->eof = got == 0;
    return true;
}

/* ---- lines ------------------------------------------------------------------ */

static bool buf_append(char **buf, size_t *len, size_t *cap, const void *p,
                       size_t n) {
    if (*len + n + 1 > *cap) {
        size_t c = *cap ? *cap : 256;
        while (c < *len + n + 1)
            c *= 2;
        char *nb = realloc(*buf, c);
        if (nb == NULL)
            return false;
        *buf = nb;
        *cap = c;
    }
    memcpy(*buf + *len, p, n);
    *len += n;
    (*buf)[*len] = '\0';
    return true;
}

int seq_line(seq_reader *r, uint64_t *start) {
    r->buf_len = 0;
    *start = r->offset;
    bool any = false;
    for (;;) {
        if (r->out_pos >= r->out_len) {
            if (!refill(r))
                return -1;
            if (r->out_len == 0)
                break;
        }
        const uint8_t *p = r->out + r->out_pos;
        size_t avail = r->out_len - r->out_pos;
        const uint8_t *nl = memchr(p, '\n', avail);
        size_t take = nl ? (size_t)(nl - p) : avail;
        if (!buf_append(&r->buf, &r->buf_len, &r->buf_cap, p, take)) {
            seq_fail(r, "%s", "out of memory");
            return -1;
        }
        any = true;
        r->out_pos += take + (nl != NULL);
        r->offset += take + (nl != NULL);
        if (nl != NULL)
            break;
    }
    if (!any)
        return 0;
    r->line++;
    if (r->buf_len > 0 && r->buf[r->buf_len - 1] == '\r')
        r->buf[--r->buf_len] = '\0';
    return 1;
}

bool seq_read(seq_reader *r, void *dst, size_t n, size_t *got) {
    uint8_t *d = dst;
    *got = 0;
    while (*got < n) {
        if (r->out_pos >= r->out_len) {
            if (!refill(r))
                return false;
            if (r->out_len == 0)
                break;
        }
        size_t take = r->out_len - r->out_pos;
        if (take > n - *got)
            take = n - *got;
        memcpy(d + *got, r->out + r->out_pos, take);
        r->out_pos += take;
        r->offset += take;
        *got += take;
    }
    return true;
}

/* "line L (byte B): msg". */
static int line_error(seq_reader *r, uint64_t start, const char *msg) {
    snprintf(r->err, sizeof r->err, "line %llu (byte %llu): %s",
             (unsigned long long)r->line, (unsigned long long)start + 1, msg);
    return -1;
}

/* A sequence line holds letters (IUPAC codes), gaps '-' '.', stops '*'
 * and blanks; a quality line printable ASCII. */
static bool seq_byte(unsigned char c) {
    return ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || c == '-' || c == '.' ||
           c == '*' || c == ' ' || c == '\t';
}

static int check_text(seq_reader *r, uint64_t start, const char *what) {
    bool seq = what[0] == 's';
    for (size_t i = 0; i < r->buf_len; i++) {
        unsigned char c = (unsigned char)r->buf[i];
        if (seq ? !seq_byte(c) : c < 0x21 || c > 0x7e) {
            char msg[96];
            snprintf(msg, sizeof msg, "byte 0x%02x in a %s line", c, what);
            return line_error(r, start + i, msg);
        }
    }
    return 1;
}

/* ---- records -------------------------------------------------------------------- */

static int set_name(seq_reader *r, uint64_t start) {
    r->name_len = 0;
    if (!buf_append(&r->name, &r->name_len, &r->name_cap, r->buf + 1,
                    r->buf_len - 1))
        return line_error(r, start, "out of memory");
    r->seq_len = 0;
    if (!buf_append(&r->seq, &r->seq_len, &r->seq_cap, "", 0))
        return line_error(r, start, "out of memory");
    r->records++;
    return 1;
}

/* The first non-empty line: which format, and the first header. */
static int first_header(seq_reader *r, uint64_t *start) {
    int got;
    while ((got = seq_line(r, start)) == 1 && r->buf_len == 0)
        ;
    if (got <= 0)
        return got;
    if (r->buf[0] != '>' && r->buf[0] != '@')
        return line_error(r, *start,
                          "neither FASTA ('>' line) nor FASTQ "
                          "('@' line)");
    r->format = r->buf[0];
    return 1;
}

static int fasta_next(seq_reader *r) {
    uint64_t start = 0;
    int got = 1;
    r->cont = r->in_rec;
    r->qual = NULL;
    if (r->in_rec) { /* the next piece of the same record */
        r->in_rec = false;
        r->seq_len = 0;
        r->seq[0] = '\0';
    } else {
        if (!r->have_line) /* the end, or the first record */
            return 0;
        r->have_line = false;
        if (set_name(r, start) < 0)
            return -1;
    }
    while ((got = seq_line(r, &start)) == 1) {
        if (r->buf_len > 0 && r->buf[0] == '>') {
            r->have_line = true;
            return 1;
        }
        if (check_text(r, start, "sequence") < 0)
            return -1;
        if (!buf_append(&r->seq, &r->seq_len, &r->seq_cap, r->buf, r->buf_len))
            return line_error(r, start, "out of memory");
        if (r->chunk != 0 && r->seq_len >= r->chunk) {
            r->in_rec = true;
            return 1;
        }
    }
    return got < 0 ? -1 : 1;
}

/* FASTQ line n (1: sequence, 2: '+', 3: quality) of the current record. */
static int fastq_line(seq_reader *r, int n, uint64_t *start) {
    static const char *const want[] = {"", "a sequence line", "a '+' line",
                                       "a quality line"};
    int got = seq_line(r, start);
    if (got < 0)
        return -1;
    if (got == 0) {
        char msg[96];
        snprintf(msg, sizeof msg,
                 "FASTQ record '%.40s' cut short: %s "
                 "expected",
                 r->name, want[n]);
        return line_error(r, r->offset, msg);
    }
    if (n == 2 && (r->buf_len == 0 || r->buf[0] != '+'))
        return line_error(r, *start, "FASTQ: expected a '+' line");
    return 1;
}

static int fastq_next(seq_reader *r) {
    uint64_t start;
    int got;
    if (!r->have_line) {
        while ((got = seq_line(r, &start)) == 1 && r->buf_len == 0)
            ;
        if (got <= 0)
            return got;
        if (r->buf[0] != '@')
            return line_error(r, start, "FASTQ: expected an '@' line");
    }
    r->have_line = false;
    if (set_name(r, r->offset) < 0 || fastq_line(r, 1, &start) < 0 ||
        check_text(r, start, "sequence") < 0)
        return -1;
    if (!buf_append(&r->seq, &r->seq_len, &r->seq_cap, r->buf, r->buf_len))
        return line_error(r, start, "out of memory");
    if (fastq_line(r, 2, &start) < 0 || fastq_line(r, 3, &start) < 0 ||
        check_text(r, start, "quality") < 0)
        return -1;
    if (r->buf_len != r->seq_len) {
        char msg[96];
        snprintf(msg, sizeof msg, "FASTQ: %zu quality values for %zu bases",
                 r->buf_len, r->seq_len);
        return line_error(r, start, msg);
    }
    r->qual = r->buf;
    return 1;
}

int seq_next(seq_reader *r) {
    if (r->err[0] != '\0')
        return -1;
    if (r->format == 0) {
        uint64_t start;
        int got = first_header(r, &start);
        if (got <= 0)
            return got;
        r->have_line = true;
    }
    return r->format == '>' ? fasta_next(r) : fastq_next(r);
}

/* ---- k-mer text --------------------------------------------------------------------- */

void kmer_text(uint64_t kmer, unsigned k, char *out) {
    static const char base[4] = {'A', 'C', 'G', 'T'};
    for (unsigned i = 0; i < k; i++)
        out[i] = base[(kmer >> (2 * (k - 1 - i))) & 3];
    out[k] = '\0';
}

bool kmer_parse(const char *s, size_t len, unsigned k, uint64_t *out) {
    uint64_t v = 0;
    if (len != k)
        return false;
    for (size_t i = 0; i < len; i++) {
        unsigned c = seq_code(s[i]);
        if (c > 3)
            return false;
        v = v << 2 | c;
    }
    *out = v;
    return true;
}
