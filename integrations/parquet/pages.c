/*
 * pages.c — the distinct values of a column chunk, from its pages.
 *
 *   chunk = [dictionary page] data page ... data page
 *   page  = PageHeader (Thrift compact) | compressed_page_size bytes
 *
 * An index over Parquet files needs every value a chunk holds, not the
 * rows: a dictionary page lists every value its dictionary-coded data
 * pages refer to, so those pages are skipped unread, and only the pages
 * a writer coded otherwise (a dictionary that overflowed, a column never
 * given one: PLAIN, the delta encodings, BYTE_STREAM_SPLIT; encodings.c)
 * are decoded. A data page v1 holds repetition levels, definition
 * levels (4-byte length, then the RLE / bit-packed hybrid) and values,
 * compressed together; a v2 page keeps its levels uncompressed in front
 * and counts its nulls in the header. A null has a definition level below
 * the column's maximum and no value.
 *
 * Every length read from a header is checked against the chunk's bytes
 * (compressed) or against a bound on what those bytes can expand to
 * (uncompressed), before anything is allocated for it.
 */
#include "parquet_impl.h"

#include <lz4.h>
#include <snappy-c.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

enum { PAGE_DATA = 0, PAGE_INDEX = 1, PAGE_DICT = 2, PAGE_DATA_V2 = 3 };

/* What an uncompressed page may claim: at most this many times its
 * compressed bytes (and at most 1 GiB). */
#define MAX_RATIO 1024u
#define MAX_PAGE (1u << 30)

typedef struct page_header {
    int32_t type, usize, csize;
    int32_t nvalues, nnulls, encoding;
    int32_t def_len, rep_len;
    bool compressed;
} page_header;

static void parse_sub(thrift_reader *r, page_header *h, bool v2) {
    int16_t last = 0, id;
    int t;
    thrift_struct_begin(r);
    while (thrift_field(r, &last, &id, &t)) {
        int32_t v = t == THRIFT_I32 ? (int32_t)thrift_i64(r) : 0;
        if (t == THRIFT_TRUE || t == THRIFT_FALSE) {
            if (v2 && id == 7)
                h->compressed = t == THRIFT_TRUE;
            continue;
        }
        if (t != THRIFT_I32) {
            thrift_skip(r, t);
            continue;
        }
        if (id == 1)
            h->nvalues = v;
        else if (!v2 && id == 2)
            h->encoding = v;
        else if (v2 && id == 2)
            h->nnulls = v;
        else if (v2 && id == 4)
            h->encoding = v;
        else if (v2 && id == 5)
            h->def_len = v;
        else if (v2 && id == 6)
            h->rep_len = v;
    }
    thrift_struct_end(r);
}

static void parse_header(thrift_reader *r, page_header *h) {
    int16_t last = 0, id;
    int t;
    memset(h, 0, sizeof *h);
    h->type = -1;
    h->compressed = true;
    thrift_struct_begin(r);
    while (thrift_field(r, &last, &id, &t)) {
        if (id <= 3 && t == THRIFT_I32) {
            int32_t v = (int32_t)thrift_i64(r);
            if (id == 1)
                h->type = v;
            else if (id == 2)
                h->usize = v;
            else if (id == 3)
                h->csize = v;
        } else if ((id == 5 || id == 7 || id == 8) && t == THRIFT_STRUCT)
            parse_sub(r, h, id == 8);
        else
            thrift_skip(r, t);
    }
    thrift_struct_end(r);
}

/* The header at off (before end): read more bytes until it parses (page
 * headers may carry statistics of any length). */
static amq_status read_header(const amq_pq_file *f, uint64_t off, uint64_t end,
                              page_header *h, size_t *hlen) {
    size_t want = 1024;
    for (;;) {
        size_t n = end - off < want ? (size_t)(end - off) : want;
        uint8_t *buf = malloc(n ? n : 1);
        thrift_reader r;
        amq_status st;
        if (buf == NULL)
            return AMQ_ERR_NOMEM;
        st = amq__pq_read(f, off, buf, n);
        if (st == AMQ_OK) {
            thrift_init(&r, buf, n);
            parse_header(&r, h);
            *hlen = thrift_offset(&r, buf);
        }
        free(buf);
        AMQ_RETURN_IF_ERR(st);
        if (!r.bad)
            return AMQ_OK;
        if (n == end - off || want >= (64u << 20))
            return AMQ_ERR_CORRUPT;
        want *= 4;
    }
}

/* ---- decompression ------------------------------------------------------ */

static bool inflate_gzip(const uint8_t *src, size_t n, uint8_t *dst, size_t d) {
    z_stream z;
    int rc;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 15 + 32) != Z_OK) /* gzip or zlib header */
        return false;
    z.next_in = (Bytef *)(uintptr_t)src;
    z.avail_in = (uInt)n;
    z.next_out = dst;
    z.avail_out = (uInt)d;
    rc = inflate(&z, Z_FINISH);
    inflateEnd(&z);
    return rc == Z_STREAM_END && z.avail_out == 0;
}

static amq_status decompress(int32_t codec, const uint8_t *src, size_t n,
                             uint8_t *dst, size_t d) {
    size_t got = d;
    switch (codec) {
    case 0:
        if (n != d)
            return AMQ_ERR_CORRUPT;
        memcpy(dst, src, n);
        return AMQ_OK;
    case 1:
        if (snappy_uncompressed_length((const char *)src, n, &got) !=
                SNAPPY_OK ||
            got != d ||
            snappy_uncompress((const char *)src, n, (char *)dst, &got) !=
                SNAPPY_OK ||
            got != d)
            return AMQ_ERR_CORRUPT;
        return AMQ_OK;
    case 2: return inflate_gzip(src, n, dst, d) ? AMQ_OK : AMQ_ERR_CORRUPT;
    case 6:
        got = ZSTD_decompress(dst, d, src, n);
        return !ZSTD_isError(got) && got == d ? AMQ_OK : AMQ_ERR_CORRUPT;
    case 7:
        if (n > INT32_MAX || d > INT32_MAX)
            return AMQ_ERR_CORRUPT;
        return LZ4_decompress_safe((const char *)src, (char *)dst, (int)n,
                                   (int)d) == (int)d
                   ? AMQ_OK
                   : AMQ_ERR_CORRUPT;
    default: return AMQ_ERR_UNSUPPORTED;
    }
}

/* ---- levels and values -------------------------------------------------- */

/* How many of the first `levels` values of an RLE / bit-packed hybrid of
 * width bw (1..8) equal max: the values that are not null. */
static bool count_defined(const uint8_t *p, const uint8_t *end, unsigned bw,
                          uint32_t levels, uint32_t max, uint32_t *defined) {
    uint32_t seen = 0;
    *defined = 0;
    while (seen < levels) {
        uint64_t h;
        if (!amq__pq_uleb(&p, end, &h))
            return false;
        if (h & 1) { /* bit-packed: (h >> 1) groups of 8 */
            uint64_t groups = h >> 1, nbits = groups * 8 * bw;
            if (groups == 0 || groups > (uint64_t)(end - p) ||
                nbits / 8 > (uint64_t)(end - p))
                return false;
            for (uint64_t i = 0; i < groups * 8 && seen < levels; i++, seen++) {
                uint32_t v = 0;
                for (unsigned b = 0; b < bw; b++) {
                    uint64_t bit = i * bw + b;
                    v |= (uint32_t)((p[bit >> 3] >> (bit & 7)) & 1) << b;
                }
                *defined += v == max;
            }
            p += nbits / 8;
        } else { /* a run of (h >> 1) copies of one value */
            uint64_t run = h >> 1;
            uint32_t v = 0;
            unsigned bytes = (bw + 7) / 8;
            if (run == 0 || (size_t)(end - p) < bytes)
                return false;
            for (unsigned b = 0; b < bytes; b++)
                v |= (uint32_t)p[b] << (8 * b);
            p += bytes;
            uint32_t take = run < levels - seen ? (uint32_t)run : levels - seen;
            if (v == max)
                *defined += take;
            seen += take;
        }
    }
    return true;
}

static unsigned bit_width(int max) {
    unsigned w = 0;
    while ((1 << w) <= max)
        w++;
    return w;
}

typedef struct page_ctx {
    const amq_pq_file *f;
    const amq_pq_column *col;
    const amq_pq_chunk *ch;
    amq_pq_value_fn fn;
    void *ctx;
    bool stop;
} page_ctx;

/* The page's body, uncompressed into a new buffer: the whole of it (v1,
 * dictionary) or its values after the levels (v2, keep bytes in front). */
static amq_status page_body(page_ctx *pc, const page_header *h, uint64_t off,
                            size_t keep, uint8_t **out, size_t *out_len) {
    uint8_t *raw, *dst;
    size_t csize = (size_t)h->csize, usize = (size_t)h->usize;
    int32_t codec = h->compressed ? pc->ch->codec : 0;
    amq_status st;
    if (keep > csize || keep > usize ||
        usize - keep > MAX_RATIO * (uint64_t)(csize - keep) + 65536 ||
        usize > MAX_PAGE)
        return AMQ_ERR_CORRUPT;
    if ((raw = malloc(csize ? csize : 1)) == NULL)
        return AMQ_ERR_NOMEM;
    if ((dst = malloc(usize ? usize : 1)) == NULL) {
        free(raw);
        return AMQ_ERR_NOMEM;
    }
    st = amq__pq_read(pc->f, off, raw, csize);
    if (st == AMQ_OK) {
        memcpy(dst, raw, keep);
        st = decompress(codec, raw + keep, csize - keep, dst + keep,
                        usize - keep);
    }
    free(raw);
    if (st != AMQ_OK) {
        free(dst);
        return st;
    }
    *out = dst;
    *out_len = usize;
    return AMQ_OK;
}

static amq_status dict_page(page_ctx *pc, const page_header *h, uint64_t off) {
    uint8_t *body;
    size_t n;
    amq_status st;
    if (h->encoding != AMQ__PQ_PLAIN && h->encoding != AMQ__PQ_PLAIN_DICTIONARY)
        return AMQ_ERR_UNSUPPORTED;
    AMQ_RETURN_IF_ERR(page_body(pc, h, off, 0, &body, &n));
    st = amq__pq_decode(pc->col, AMQ__PQ_PLAIN, body, n, (uint32_t)h->nvalues,
                        pc->fn, pc->ctx, &pc->stop);
    free(body);
    return st;
}

static amq_status data_page(page_ctx *pc, const page_header *h, uint64_t off,
                            bool v2) {
    uint8_t *body;
    size_t n, keep = 0;
    uint32_t defined = (uint32_t)h->nvalues;
    const uint8_t *p;
    amq_status st;
    if (h->encoding == AMQ__PQ_PLAIN_DICTIONARY ||
        h->encoding == AMQ__PQ_RLE_DICTIONARY)
        return AMQ_OK; /* its values are the dictionary's */
    if (v2) {
        if (h->def_len < 0 || h->rep_len < 0 || h->nnulls < 0 ||
            h->nnulls > h->nvalues)
            return AMQ_ERR_CORRUPT;
        keep = (size_t)h->def_len + (size_t)h->rep_len;
        defined = (uint32_t)(h->nvalues - h->nnulls);
    }
    AMQ_RETURN_IF_ERR(page_body(pc, h, off, keep, &body, &n));
    p = body + keep;
    if (!v2 && pc->col->max_def > 0) {
        uint32_t dl;
        if (n < 4)
            st = AMQ_ERR_CORRUPT;
        else {
            dl = (uint32_t)body[0] | (uint32_t)body[1] << 8 |
                 (uint32_t)body[2] << 16 | (uint32_t)body[3] << 24;
            st = dl > n - 4 ||
                         !count_defined(body + 4, body + 4 + dl,
                                        bit_width(pc->col->max_def),
                                        (uint32_t)h->nvalues,
                                        (uint32_t)pc->col->max_def, &defined)
                     ? AMQ_ERR_CORRUPT
                     : AMQ_OK;
            p = body + 4 + (st == AMQ_OK ? dl : 0);
        }
        if (st != AMQ_OK) {
            free(body);
            return st;
        }
    }
    st = amq__pq_decode(pc->col, h->encoding, p, n - (size_t)(p - body),
                        defined, pc->fn, pc->ctx, &pc->stop);
    free(body);
    return st;
}

amq_status amq_pq_values(const amq_pq_file *f, size_t g, size_t c,
                         amq_pq_value_fn fn, void *ctx, amq_pq_diag *diag) {
    const amq_pq_chunk *ch = amq_pq_chunk_at(f, g, c);
    page_ctx pc;
    uint64_t off, end;
    int64_t seen = 0;
    if (ch == NULL || fn == NULL)
        return AMQ_ERR_INVALID;
    pc = (page_ctx){f, &f->cols[c], ch, fn, ctx, false};
    if (pc.col->max_rep > 0)
        return amq__pq_fail(diag, (uint64_t)ch->start,
                            "a repeated (nested) column", AMQ_ERR_UNSUPPORTED);
    if (pc.col->type == AMQ_PQ_BOOLEAN)
        return amq__pq_fail(diag, (uint64_t)ch->start, "a BOOLEAN column",
                            AMQ_ERR_UNSUPPORTED);
    off = (uint64_t)ch->start;
    end = off + (uint64_t)ch->bytes;
    while (off < end && seen < ch->values && !pc.stop) {
        page_header h;
        size_t hlen;
        amq_status st = read_header(f, off, end, &h, &hlen);
        if (st == AMQ_OK && (h.csize < 0 || h.usize < 0 || h.nvalues < 0 ||
                             (uint64_t)h.csize > end - off - hlen))
            st = AMQ_ERR_CORRUPT;
        if (st == AMQ_OK) {
            if (h.type == PAGE_DICT)
                st = dict_page(&pc, &h, off + hlen);
            else if (h.type == PAGE_DATA || h.type == PAGE_DATA_V2) {
                st = data_page(&pc, &h, off + hlen, h.type == PAGE_DATA_V2);
                seen += h.nvalues;
            } else if (h.type != PAGE_INDEX)
                st = AMQ_ERR_CORRUPT;
        }
        if (st != AMQ_OK)
            return amq__pq_fail(
                diag, off,
                st == AMQ_ERR_UNSUPPORTED
                    ? "a page encoding or codec amq does not read"
                : st == AMQ_ERR_NOMEM ? "out of memory"
                                      : "a malformed page",
                st);
        off += hlen + (uint64_t)h.csize;
    }
    return AMQ_OK;
}
