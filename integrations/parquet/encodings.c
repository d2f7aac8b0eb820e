/*
 * encodings.c — the value encodings of Parquet data pages that are not a
 * dictionary's indices (parquet-format Encodings.md):
 *
 *   PLAIN                    fixed-width little-endian values; BYTE_ARRAY
 *                            as a 4-byte length and the bytes
 *   DELTA_BINARY_PACKED      integers: a header (block size, miniblocks per
 *                            block, count, first value), then blocks of
 *                            (min delta, one bit width per miniblock,
 *                            miniblocks of bit-packed deltas - min delta)
 *   DELTA_LENGTH_BYTE_ARRAY  the lengths delta-packed, then all the bytes
 *   DELTA_BYTE_ARRAY         prefix lengths delta-packed, then suffixes as
 *                            DELTA_LENGTH_BYTE_ARRAY: value i = the first
 *                            prefix[i] bytes of value i-1, then suffix i
 *   BYTE_STREAM_SPLIT        byte b of value i at b * n + i
 *
 * Each decoder hands every value, in its plain encoding (the bytes
 * Parquet's Bloom filter hashes), to the caller's function. The delta
 * decoder is a stream read twice where a length's bytes follow all the
 * lengths, so no count from the page is ever an allocation size.
 */
#include <stdlib.h>
#include <string.h>

#include "parquet_impl.h"

typedef struct delta_stream {
    const uint8_t *p, *end;
    uint64_t per_mini, minis, total, seen;
    uint64_t value, min_delta;
    const uint8_t *widths, *data;
    uint64_t mini, in_mini;
    unsigned width;
} delta_stream;

static uint64_t unzigzag(uint64_t v) { return (v >> 1) ^ (0 - (v & 1)); }

static bool delta_init(delta_stream *d, const uint8_t *p, const uint8_t *end) {
    uint64_t block, first;
    memset(d, 0, sizeof *d);
    if (!amq__pq_uleb(&p, end, &block) || !amq__pq_uleb(&p, end, &d->minis) ||
        !amq__pq_uleb(&p, end, &d->total) || !amq__pq_uleb(&p, end, &first))
        return false;
    if (block == 0 || block % 128 != 0 || block > (1u << 20) || d->minis == 0 ||
        block % d->minis != 0 || (block / d->minis) % 32 != 0)
        return false;
    d->per_mini = block / d->minis;
    d->value = unzigzag(first);
    d->mini = d->minis; /* the first delta opens a block */
    d->in_mini = d->per_mini;
    d->p = p;
    d->end = end;
    return true;
}

static uint64_t read_bits(const uint8_t *data, uint64_t bit, unsigned width) {
    uint64_t v = 0;
    for (unsigned got = 0; got < width;) {
        unsigned take = 8 - (unsigned)(bit & 7);
        if (take > width - got)
            take = width - got;
        uint64_t b = (data[bit >> 3] >> (bit & 7)) & ((1u << take) - 1);
        v |= b << got;
        got += take;
        bit += take;
    }
    return v;
}

/* The next miniblock (and its block's header when one ends). */
static bool delta_open_mini(delta_stream *d) {
    if (++d->mini >= d->minis) {
        uint64_t md;
        if (!amq__pq_uleb(&d->p, d->end, &md) ||
            (uint64_t)(d->end - d->p) < d->minis)
            return false;
        d->min_delta = unzigzag(md);
        d->widths = d->p;
        d->p += d->minis;
        d->mini = 0;
    }
    d->width = d->widths[d->mini];
    uint64_t bytes = d->per_mini * d->width / 8;
    if (d->width > 64 || bytes > (uint64_t)(d->end - d->p))
        return false;
    d->data = d->p;
    d->p += bytes;
    d->in_mini = 0;
    return true;
}

/* 1: *v is the next value; 0: no more; -1: malformed. */
static int delta_next(delta_stream *d, uint64_t *v) {
    if (d->seen == d->total)
        return 0;
    if (d->seen++ > 0) {
        if (d->in_mini == d->per_mini && !delta_open_mini(d))
            return -1;
        d->value +=
            d->min_delta + read_bits(d->data, d->in_mini * d->width, d->width);
        d->in_mini++;
    }
    *v = d->value;
    return 1;
}

/* Skip every value: where the stream ends. */
static const uint8_t *delta_end(delta_stream *d) {
    uint64_t v;
    int r;
    while ((r = delta_next(d, &v)) == 1)
        ;
    return r == 0 ? d->p : NULL;
}

static void put_le(uint8_t *d, uint64_t v, unsigned n) {
    for (unsigned i = 0; i < n; i++)
        d[i] = (uint8_t)(v >> (8 * i));
}

static size_t fixed_width(const amq_pq_column *col) {
    switch (col->type) {
    case AMQ_PQ_INT32:
    case AMQ_PQ_FLOAT: return 4;
    case AMQ_PQ_INT64:
    case AMQ_PQ_DOUBLE: return 8;
    case AMQ_PQ_INT96: return 12;
    case AMQ_PQ_FIXED_LEN_BYTE_ARRAY: return (size_t)col->type_length;
    default: return 0;
    }
}

typedef struct sink {
    amq_pq_value_fn fn;
    void *ctx;
    bool *stop;
} sink;

static amq_status plain(const amq_pq_column *col, const uint8_t *p, size_t len,
                        uint32_t n, sink *s) {
    size_t w = fixed_width(col);
    for (uint32_t i = 0; i < n && !*s->stop; i++) {
        size_t vl = w;
        if (col->type == AMQ_PQ_BYTE_ARRAY) {
            if (len < 4)
                return AMQ_ERR_CORRUPT;
            vl = (size_t)p[0] | (size_t)p[1] << 8 | (size_t)p[2] << 16 |
                 (size_t)p[3] << 24;
            p += 4;
            len -= 4;
        }
        if (vl > len)
            return AMQ_ERR_CORRUPT;
        *s->stop = !s->fn(s->ctx, p, vl);
        p += vl;
        len -= vl;
    }
    return AMQ_OK;
}

static amq_status delta_ints(const amq_pq_column *col, const uint8_t *p,
                             size_t len, uint32_t n, sink *s) {
    delta_stream d;
    uint8_t buf[8];
    uint64_t v;
    int r = 0;
    unsigned w = col->type == AMQ_PQ_INT32 ? 4 : 8;
    if (col->type != AMQ_PQ_INT32 && col->type != AMQ_PQ_INT64)
        return AMQ_ERR_CORRUPT;
    if (!delta_init(&d, p, p + len) || d.total != n)
        return AMQ_ERR_CORRUPT;
    while (!*s->stop && (r = delta_next(&d, &v)) == 1) {
        put_le(buf, v, w);
        *s->stop = !s->fn(s->ctx, buf, w);
    }
    return *s->stop || r == 0 ? AMQ_OK : AMQ_ERR_CORRUPT;
}

/* Lengths delta-packed at p, then their bytes: each value to fn, or (with
 * prefix, a stream of prefix lengths) each suffix after its prefix. */
static amq_status lengths_then_bytes(const uint8_t *p, const uint8_t *end,
                                     uint32_t n, delta_stream *prefix,
                                     sink *s) {
    delta_stream lens;
    const uint8_t *bytes;
    uint8_t *prev = NULL;
    size_t prev_len = 0, cap = 0;
    uint64_t len, pre = 0;
    int r = 0;
    amq_status st = AMQ_OK;
    if (!delta_init(&lens, p, end) || lens.total != n ||
        (bytes = delta_end(&lens)) == NULL)
        return AMQ_ERR_CORRUPT;
    delta_init(&lens, p, end);
    while (st == AMQ_OK && !*s->stop && (r = delta_next(&lens, &len)) == 1) {
        if (len > (uint64_t)(end - bytes)) {
            st = AMQ_ERR_CORRUPT;
            break;
        }
        if (prefix == NULL) {
            *s->stop = !s->fn(s->ctx, bytes, (size_t)len);
        } else if (delta_next(prefix, &pre) != 1 || pre > prev_len) {
            st = AMQ_ERR_CORRUPT;
        } else {
            size_t vl = (size_t)pre + (size_t)len;
            if (vl > cap) {
                uint8_t *g = realloc(prev, vl);
                if (g == NULL) {
                    st = AMQ_ERR_NOMEM;
                    break;
                }
                prev = g;
                cap = vl;
            }
            if (len > 0)
                memcpy(prev + pre, bytes, (size_t)len);
            prev_len = vl;
            *s->stop = !s->fn(s->ctx, prev, vl);
        }
        bytes += len;
    }
    free(prev);
    if (st == AMQ_OK && !*s->stop && r != 0)
        st = AMQ_ERR_CORRUPT;
    return st;
}

static amq_status delta_strings(const amq_pq_column *col, const uint8_t *p,
                                size_t len, uint32_t n, bool prefixed,
                                sink *s) {
    delta_stream pre;
    const uint8_t *end = p + len;
    if (col->type != AMQ_PQ_BYTE_ARRAY &&
        col->type != AMQ_PQ_FIXED_LEN_BYTE_ARRAY)
        return AMQ_ERR_CORRUPT;
    if (!prefixed)
        return lengths_then_bytes(p, end, n, NULL, s);
    const uint8_t *suffixes;
    if (!delta_init(&pre, p, end) || pre.total != n ||
        (suffixes = delta_end(&pre)) == NULL)
        return AMQ_ERR_CORRUPT;
    delta_init(&pre, p, end);
    return lengths_then_bytes(suffixes, end, n, &pre, s);
}

static amq_status stream_split(const amq_pq_column *col, const uint8_t *p,
                               size_t len, uint32_t n, sink *s) {
    size_t w = fixed_width(col);
    uint8_t *v;
    if (w == 0 || (uint64_t)n * w > len)
        return AMQ_ERR_CORRUPT;
    if ((v = malloc(w)) == NULL)
        return AMQ_ERR_NOMEM;
    for (uint32_t i = 0; i < n && !*s->stop; i++) {
        for (size_t b = 0; b < w; b++)
            v[b] = p[b * n + i];
        *s->stop = !s->fn(s->ctx, v, w);
    }
    free(v);
    return AMQ_OK;
}

amq_status amq__pq_decode(const amq_pq_column *col, int32_t encoding,
                          const uint8_t *p, size_t len, uint32_t n,
                          amq_pq_value_fn fn, void *ctx, bool *stop) {
    sink s = {fn, ctx, stop};
    if (col->type == AMQ_PQ_BOOLEAN) /* bit-packed; no filter hashes them */
        return AMQ_ERR_UNSUPPORTED;
    switch (encoding) {
    case AMQ__PQ_PLAIN: return plain(col, p, len, n, &s);
    case AMQ__PQ_DELTA_BINARY_PACKED: return delta_ints(col, p, len, n, &s);
    case AMQ__PQ_DELTA_LENGTH_BYTE_ARRAY:
        return delta_strings(col, p, len, n, false, &s);
    case AMQ__PQ_DELTA_BYTE_ARRAY:
        return delta_strings(col, p, len, n, true, &s);
    case AMQ__PQ_BYTE_STREAM_SPLIT: return stream_split(col, p, len, n, &s);
    default: return AMQ_ERR_UNSUPPORTED;
    }
}
