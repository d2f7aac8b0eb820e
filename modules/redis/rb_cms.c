/*
 * rb_cms.c — RedisBloom's Count-Min sketch (CMSk-TYPE): rows of 32-bit
 * counters under MurmurHash2, plain update.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rb.h"

/* The estimate after adding `by`; UINT32_MAX when a counter saturated
 * (RedisBloom answers that with an overflow error). */
uint64_t rb_cms_incr(rval *v, const void *p, size_t n, uint64_t by) {
    uint64_t w = CMS(v)->width, est = UINT64_MAX;
    for (uint64_t i = 0; i < CMS(v)->depth; i++) {
        uint32_t *c = &CMS(v)->cells[rb_murmur2(p, n, (uint32_t)i) % w + i * w];
        uint32_t x = *c + (uint32_t)by;
        if (x < by)
            x = UINT32_MAX;
        *c = x;
        if (x < est)
            est = x;
    }
    CMS(v)->counter += by;
    return est;
}

uint64_t rb_cms_query(const rval *v, const void *p, size_t n) {
    uint64_t w = CMS(v)->width, est = UINT64_MAX;
    for (uint64_t i = 0; i < CMS(v)->depth; i++) {
        uint32_t c = CMS(v)->cells[rb_murmur2(p, n, (uint32_t)i) % w + i * w];
        if (c < est)
            est = c;
    }
    return est;
}

void rb_cms_info(const rval *v, uint64_t *w, uint64_t *d, uint64_t *count) {
    *w = CMS(v)->width;
    *d = CMS(v)->depth;
    *count = CMS(v)->counter;
}

/* dst = Σ weight_i · src_i, cell by cell in 32 bits, as RedisBloom sums
 * (dst may be a source: the sums are made aside first). */
bool rb_cms_merge(rval *dst, rval *const *src, const long long *w, int n) {
    uint64_t cells = CMS(dst)->width * CMS(dst)->depth;
    uint32_t *acc = mem(dst, (size_t)cells * sizeof *acc);
    if (acc == NULL)
        return false;
    uint64_t total = 0;
    for (uint64_t c = 0; c < cells; c++) {
        uint64_t s = 0; /* the low 32 bits, as RedisBloom keeps them */
        for (int k = 0; k < n; k++)
            s += (uint64_t)CMS(src[k])->cells[c] * (uint64_t)w[k];
        acc[c] = (uint32_t)s;
    }
    for (int k = 0; k < n; k++)
        total += CMS(src[k])->counter * (uint64_t)w[k];
    mem_free(dst, CMS(dst)->cells, (size_t)cells * sizeof *acc);
    CMS(dst)->cells = acc;
    CMS(dst)->counter = total;
    return true;
}

bool rb_cms_same_shape(const rval *a, const rval *b) {
    return CMS(a)->width == CMS(b)->width && CMS(a)->depth == CMS(b)->depth;
}

/* ---- RDB fields --------------------------------------------------------- */

bool rb__load_cms(rval *v, rb_io *in, char *err, size_t cap) {
    uint64_t w, d, counter;
    GET_U(w);
    GET_U(d);
    GET_U(counter);
    if (w == 0 || d == 0 || w > UINT32_MAX || d > 4096 ||
        w * d > ((uint64_t)1 << 34))
        return fail(err, cap, "Count-Min dimensions out of range");
    uint32_t *cells = (uint32_t *)rb__get_exact(v, in, w * d * 4);
    if (cells == NULL)
        return fail(err, cap, "Count-Min counters of the wrong size");
    /* the counters are little-endian on disk, as on every host we build */
    CMS(v)->width = w;
    CMS(v)->depth = d;
    CMS(v)->counter = counter;
    CMS(v)->cells = cells;
    return true;
short_read:
    return fail(err, cap, "truncated Count-Min value");
}

void rb__save_cms(const rval *v, rb_io *out) {
    out->put_u64(out, CMS(v)->width);
    out->put_u64(out, CMS(v)->depth);
    out->put_u64(out, CMS(v)->counter);
    out->put_str(out, CMS(v)->cells,
                 (size_t)(CMS(v)->width * CMS(v)->depth * 4));
}

void rb__free_cms(rval *v) {
    mem_free(v, CMS(v)->cells,
             CMS(v)->width * CMS(v)->depth * sizeof(uint32_t));
}
