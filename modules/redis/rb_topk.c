/*
 * rb_topk.c — RedisBloom's Top-K (TopK-TYPE): HeavyKeeper buckets and
 * its heap, with a decay coin every replica draws alike.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rb.h"

#define TOPK_FP_SEED 1919u

/* decay^c as RedisBloom computes it (from a table of decay^i, i < 256,
 * which caches these same pow calls): decay^c below 256, beyond it
 * (decay^255)^(c / 255) · decay^(c mod 255). */
static double decay_of(const rval *v, uint32_t c) {
    double d = TOPK(v)->decay;
    return c < 256 ? pow(d, c)
                   : pow(pow(d, 255), (double)(c / 255)) * pow(d, c % 255);
}

/* RedisBloom draws its decay coin from rand(), which no replica can
 * repeat; this one is a hash of the bucket's state and the step, so the
 * same commands make the same sketch everywhere. */
static double coin(uint32_t fp, uint64_t cell, uint32_t count, uint32_t step) {
    uint64_t x = ((uint64_t)fp << 32 | count) ^ (cell * 0x9e3779b97f4a7c15ull) ^
                 ((uint64_t)step << 17);
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return (double)(x >> 11) * 0x1.0p-53;
}

static rb_heap *heap_find(const rval *v, uint32_t fp, const void *p, size_t n) {
    for (uint32_t i = TOPK(v)->k; i-- > 0;) {
        rb_heap *e = &TOPK(v)->heap[i];
        /* the empty item has no bytes: its fingerprint and length alone
         * (as RedisBloom compares an entry it saved as "") */
        if (e->fp == fp && e->len == n &&
            (n == 0 || (e->item != NULL && memcmp(e->item, p, n) == 0)))
            return e;
    }
    return NULL;
}

/* Restore the min-heap below `at` (RedisBloom's sift-down, ties kept). */
static void heap_down(rb_heap *a, size_t len, size_t at) {
    if (len < 2 || (len - 2) / 2 < at)
        return;
    size_t c = 2 * at + 1;
    if (c + 1 < len && a[c].count > a[c + 1].count)
        c++;
    if (a[c].count > a[at].count)
        return;
    rb_heap top = a[at];
    do {
        a[at] = a[c];
        at = c;
        if ((len - 2) / 2 < c)
            break;
        c = 2 * c + 1;
        if (c + 1 < len && a[c].count > a[c + 1].count)
            c++;
    } while (a[c].count < top.count);
    a[at] = top;
}

/* HeavyKeeper's add of `by` arrivals. *out is the expelled item (bytes in
 * the value's memory, the caller frees it with rb_topk_free_item) or NULL;
 * false if out of memory (nothing changed but the buckets). */
bool rb_topk_add(rval *v, const void *p, size_t n, uint32_t by,
                 rb_topk_item *out) {
    uint32_t fp = rb_murmur2(p, n, TOPK_FP_SEED), best = 0;
    uint32_t heap_min = TOPK(v)->heap[0].count;
    memset(out, 0, sizeof *out);
    for (uint32_t i = 0; i < TOPK(v)->depth; i++) {
        uint64_t cell =
            (uint64_t)i * TOPK(v)->width + rb_murmur2(p, n, i) % TOPK(v)->width;
        uint32_t *b = &TOPK(v)->cells[2 * cell];
        if (b[1] == 0) {
            b[0] = fp;
            b[1] = by;
            best = b[1] > best ? b[1] : best;
        } else if (b[0] == fp) {
            b[1] += by;
            best = b[1] > best ? b[1] : best;
        } else {
            for (uint32_t left = by; left > 0; left--) {
                if (coin(fp, cell, b[1], left) < decay_of(v, b[1]) &&
                    --b[1] == 0) {
                    b[0] = fp;
                    b[1] = left;
                    best = b[1] > best ? b[1] : best;
                    break;
                }
            }
        }
    }
    if (best < heap_min)
        return true;
    rb_heap *e = heap_find(v, fp, p, n);
    if (e != NULL) {
        e->count = best; /* not the larger of the two: it may have decayed */
        heap_down(TOPK(v)->heap, TOPK(v)->k, (size_t)(e - TOPK(v)->heap));
        return true;
    }
    uint8_t *copy = n > 0 ? mem(v, n + 1) : NULL;
    if (n > 0 && copy == NULL)
        return false;
    if (n > 0)
        memcpy(copy, p, n);
    rb_heap *h0 = &TOPK(v)->heap[0];
    out->item = h0->item;
    out->len = h0->len;
    *h0 = (rb_heap){fp, (uint32_t)n, best, copy};
    heap_down(TOPK(v)->heap, TOPK(v)->k, 0);
    return true;
}

rval *rb_topk_new(host *h, uint32_t k, uint32_t width, uint32_t depth,
                  double decay, char *err, size_t errcap) {
    double bytes = (double)width * depth * 8 + (double)k * sizeof(rb_heap);
    if (k == 0 || width == 0 || depth == 0 || !(decay > 0 && decay <= 1) ||
        (double)width * depth > 4294967296.0) {
        fail(err, errcap, "TopK: invalid dimensions");
        return NULL;
    }
    if (!h->ops->budget(h, bytes)) {
        fail(err, errcap,
             "TopK: the sketch is larger than the memory limit "
             "allows");
        return NULL;
    }
    rval *v = rb__new(FAM_TOPK);
    if (v == NULL) {
        fail(err, errcap, "TopK: out of memory");
        return NULL;
    }
    TOPK(v)->k = k;
    TOPK(v)->width = width;
    TOPK(v)->depth = depth;
    TOPK(v)->decay = decay;
    TOPK(v)->cells = mem(v, (size_t)width * depth * 8);
    TOPK(v)->heap = mem(v, (size_t)k * sizeof *TOPK(v)->heap);
    if (TOPK(v)->cells == NULL || TOPK(v)->heap == NULL) {
        rv_free(v);
        fail(err, errcap, "TopK: out of memory");
        return NULL;
    }
    return v;
}

void rb_topk_free_item(rval *v, rb_topk_item *it) {
    if (it->item != NULL)
        mem_free(v, it->item, (size_t)it->len + 1);
    it->item = NULL;
}

bool rb_topk_query(const rval *v, const void *p, size_t n) {
    return heap_find(v, rb_murmur2(p, n, TOPK_FP_SEED), p, n) != NULL;
}

uint64_t rb_topk_count(const rval *v, const void *p, size_t n) {
    uint32_t fp = rb_murmur2(p, n, TOPK_FP_SEED), best = 0;
    uint32_t heap_min = TOPK(v)->heap[0].count;
    bool listed = heap_find(v, fp, p, n) != NULL;
    for (uint32_t i = 0; i < TOPK(v)->depth; i++) {
        uint64_t cell =
            (uint64_t)i * TOPK(v)->width + rb_murmur2(p, n, i) % TOPK(v)->width;
        const uint32_t *b = &TOPK(v)->cells[2 * cell];
        if (b[0] == fp && (!listed || b[1] >= heap_min) && b[1] > best)
            best = b[1];
    }
    return best;
}

/* The list by count, largest first (ties in heap order), entries of count
 * 0 left out; out has room for k. Returns the number written. */
size_t rb_topk_list(const rval *v, rb_topk_item *out) {
    size_t n = 0;
    for (uint32_t i = 0; i < TOPK(v)->k; i++) {
        const rb_heap *e = &TOPK(v)->heap[i];
        size_t j = n++;
        while (j > 0 && out[j - 1].count < e->count) {
            out[j] = out[j - 1];
            j--;
        }
        out[j] = (rb_topk_item){e->item, e->len, e->count};
    }
    while (n > 0 && out[n - 1].count == 0)
        n--;
    return n;
}

void rb_topk_info(const rval *v, uint32_t *k, uint32_t *w, uint32_t *d,
                  double *decay) {
    *k = TOPK(v)->k;
    *w = TOPK(v)->width;
    *d = TOPK(v)->depth;
    *decay = TOPK(v)->decay;
}

/* ---- RDB fields --------------------------------------------------------- */

/* k, width, depth, decay; the buckets (u32 fingerprint, u32 count); the
 * heap as RedisBloom's 24-byte structs (fp, length, a pointer, count);
 * then each item as a NUL-terminated string ("" for an empty entry). An
 * item RedisBloom cut at a NUL byte comes back cut there; this module
 * saves every item whole (its length + 1 bytes), which RedisBloom reads
 * too. */
bool rb__load_topk(rval *v, rb_io *in, char *err, size_t cap) {
    uint64_t k, w, d;
    double decay;
    size_t len;
    GET_U(k);
    GET_U(w);
    GET_U(d);
    GET_D(decay);
    if (k == 0 || k > 65536 || w == 0 || d == 0 || w > UINT32_MAX ||
        d > UINT32_MAX || w * d > ((uint64_t)1 << 32) ||
        !(decay > 0 && decay <= 1))
        return fail(err, cap, "Top-K dimensions out of range");
    TOPK(v)->k = (uint32_t)k;
    TOPK(v)->width = (uint32_t)w;
    TOPK(v)->depth = (uint32_t)d;
    TOPK(v)->decay = decay;
    TOPK(v)->cells = (uint32_t *)rb__get_exact(v, in, w * d * 8);
    if (TOPK(v)->cells == NULL)
        return fail(err, cap, "Top-K buckets of the wrong size");
    const uint8_t *hs = in->str(in, &len);
    if (hs == NULL || len != k * 24)
        return fail(err, cap, "Top-K heap of the wrong size");
    TOPK(v)->heap = mem(v, (size_t)k * sizeof *TOPK(v)->heap);
    if (TOPK(v)->heap == NULL)
        return fail(err, cap, "out of memory");
    for (uint64_t i = 0; i < k; i++) {
        rb_heap *e = &TOPK(v)->heap[i];
        e->fp = le32(hs + 24 * i);
        e->len = le32(hs + 24 * i + 4);
        e->count = le32(hs + 24 * i + 16);
    }
    for (uint64_t i = 0; i < k; i++) {
        rb_heap *e = &TOPK(v)->heap[i];
        const uint8_t *item = in->str(in, &len);
        if (item == NULL)
            goto short_read;
        if (len == 0 || item[len - 1] != 0)
            return fail(err, cap, "Top-K item without its terminating NUL");
        if (len == 1) {
            e->len = 0;
            continue;
        }
        /* whole (this module saves len + 1 bytes, NULs and all), or cut
         * at its first NUL as RedisBloom saves it */
        if (len - 1 != e->len) {
            size_t n = strnlen((const char *)item, len - 1);
            if (e->len > n)
                e->len = (uint32_t)n;
        }
        if (e->len == 0) /* the empty item: as an empty entry's bytes */
            continue;
        e->item = mem(v, (size_t)e->len + 1);
        if (e->item == NULL)
            return fail(err, cap, "out of memory");
        memcpy(e->item, item, e->len);
    }
    return true;
short_read:
    return fail(err, cap, "truncated Top-K value");
}

void rb__save_topk(const rval *v, rb_io *out) {
    size_t n = (size_t)TOPK(v)->k * 24;
    uint8_t *hs = rv_sys_alloc(n);
    out->put_u64(out, TOPK(v)->k);
    out->put_u64(out, TOPK(v)->width);
    out->put_u64(out, TOPK(v)->depth);
    out->put_dbl(out, TOPK(v)->decay);
    out->put_str(out, TOPK(v)->cells,
                 (size_t)TOPK(v)->width * TOPK(v)->depth * 8);
    if (hs != NULL) { /* the pointer field is written as 0 */
        memset(hs, 0, n);
        for (uint32_t i = 0; i < TOPK(v)->k; i++) {
            put_u32(hs + 24 * i, TOPK(v)->heap[i].fp);
            put_u32(hs + 24 * i + 4, TOPK(v)->heap[i].len);
            put_u32(hs + 24 * i + 16, TOPK(v)->heap[i].count);
        }
    }
    out->put_str(out, hs != NULL ? hs : (const uint8_t *)"", hs ? n : 0);
    rv_sys_free(hs);
    for (uint32_t i = 0; i < TOPK(v)->k; i++) {
        const rb_heap *e = &TOPK(v)->heap[i];
        if (e->item == NULL)
            out->put_str(out, "", 1);
        else
            out->put_str(out, e->item, (size_t)e->len + 1);
    }
}

void rb__free_topk(rval *v) {
    mem_free(v, TOPK(v)->cells, (size_t)TOPK(v)->width * TOPK(v)->depth * 8);
    for (uint32_t i = 0; TOPK(v)->heap != NULL && i < TOPK(v)->k; i++)
        if (TOPK(v)->heap[i].item != NULL)
            mem_free(v, TOPK(v)->heap[i].item,
                     (size_t)TOPK(v)->heap[i].len + 1);
    mem_free(v, TOPK(v)->heap, TOPK(v)->k * sizeof *TOPK(v)->heap);
}
