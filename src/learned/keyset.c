/*
 * keyset.c — the key-set chores of training: the deterministic split,
 * duplicate removal and the count of keys present in both sets.
 *
 * Split. A key goes to the held-out part when u(k) < share, u(k) the top
 * 53 bits of XXH3(k, seed) as a fraction: the same key always lands in the
 * same part whatever the input order, and repeated non-member keys never
 * straddle training and certification (which would leak).
 *
 * Duplicates and overlap. Keys are sorted by their XXH3 hash; equal hashes
 * are compared byte for byte, so neither count is fooled by a collision.
 */
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "learned/keyset.h"

void amq__owned_keys_free(const amq__mem *mem, amq__owned_keys *k) {
    amq__free(mem, k->bytes, k->cap_bytes);
    amq__free(mem, k->offsets, (k->cap_keys + 1) * sizeof *k->offsets);
    memset(k, 0, sizeof *k);
}

/* Room for `keys` keys of `bytes` bytes in all. */
static amq_status owned_init(const amq__mem *mem, amq__owned_keys *k,
                             size_t keys, size_t bytes) {
    memset(k, 0, sizeof *k);
    k->bytes = amq__alloc(mem, bytes ? bytes : 1);
    k->offsets = amq__alloc(mem, (keys + 1) * sizeof *k->offsets);
    if (k->bytes == NULL || k->offsets == NULL) {
        amq__free(mem, k->bytes, bytes ? bytes : 1);
        amq__free(mem, k->offsets, (keys + 1) * sizeof *k->offsets);
        memset(k, 0, sizeof *k);
        return AMQ_ERR_NOMEM;
    }
    k->cap_bytes = bytes ? bytes : 1;
    k->cap_keys = keys;
    k->offsets[0] = 0;
    return AMQ_OK;
}

static void owned_push(amq__owned_keys *k, const uint8_t *p, size_t len) {
    uint64_t at = k->offsets[k->view.n];
    memcpy(k->bytes + at, p, len);
    k->offsets[k->view.n + 1] = at + len;
    k->view.n++;
}

static void owned_seal(amq__owned_keys *k) {
    k->view.bytes = k->bytes;
    k->view.offsets = k->offsets;
}

double amq__key_unit(const uint8_t *p, size_t len, uint64_t seed) {
    return (double)(XXH3_64bits_withSeed(p, len, seed) >> 11) * 0x1p-53;
}

amq_status amq__split(const amq__mem *mem, const amq_keys *in, uint64_t seed,
                      double lo, double hi, amq__owned_keys *out) {
    size_t count = 0, bytes = 0, len;
    for (size_t i = 0; i < in->n; i++) {
        const uint8_t *p = amq__key(in, i, &len);
        double u = amq__key_unit(p, len, seed);
        if (u >= lo && u < hi) {
            count++;
            bytes += len;
        }
    }
    AMQ_RETURN_IF_ERR(owned_init(mem, out, count, bytes));
    for (size_t i = 0; i < in->n; i++) {
        const uint8_t *p = amq__key(in, i, &len);
        double u = amq__key_unit(p, len, seed);
        if (u >= lo && u < hi)
            owned_push(out, p, len);
    }
    owned_seal(out);
    return AMQ_OK;
}

typedef struct hashed {
    uint64_t h;
    size_t i;
} hashed;

static int cmp_hashed(const void *a, const void *b) {
    const hashed *x = a, *y = b;
    if (x->h != y->h)
        return x->h < y->h ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

static bool same_key(const amq_keys *a, size_t i, const amq_keys *b, size_t j) {
    size_t la, lb;
    const uint8_t *pa = amq__key(a, i, &la), *pb = amq__key(b, j, &lb);
    return la == lb && (la == 0 || memcmp(pa, pb, la) == 0);
}

static hashed *hash_sorted(const amq__mem *mem, const amq_keys *k) {
    hashed *v = amq__alloc(mem, (k->n ? k->n : 1) * sizeof *v);
    if (v == NULL)
        return NULL;
    size_t len;
    for (size_t i = 0; i < k->n; i++) {
        const uint8_t *p = amq__key(k, i, &len);
        v[i] = (hashed){XXH3_64bits(p, len), i};
    }
    qsort(v, k->n, sizeof *v, cmp_hashed);
    return v;
}

/* Is key j of b among a's keys (a's hashes sorted in v)? */
static bool contains_key(const hashed *v, const amq_keys *a, const amq_keys *b,
                         size_t j) {
    size_t len;
    const uint8_t *p = amq__key(b, j, &len);
    uint64_t h = XXH3_64bits(p, len);
    size_t lo = 0, hi = a->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].h < h)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < a->n && v[lo].h == h; lo++)
        if (same_key(a, v[lo].i, b, j))
            return true;
    return false;
}

amq_status amq__overlap(const amq__mem *mem, const amq_keys *a,
                        const amq_keys *b, size_t *count) {
    hashed *v = hash_sorted(mem, a);
    if (v == NULL)
        return AMQ_ERR_NOMEM;
    size_t c = 0;
    for (size_t j = 0; j < b->n; j++)
        c += contains_key(v, a, b, j);
    amq__free(mem, v, (a->n ? a->n : 1) * sizeof *v);
    *count = c;
    return AMQ_OK;
}

amq_status amq__dedupe(const amq__mem *mem, const amq_keys *in,
                       amq__owned_keys *out, size_t *dropped) {
    hashed *v = hash_sorted(mem, in);
    if (v == NULL)
        return AMQ_ERR_NOMEM;
    /* keep[i]: first occurrence (lowest index) of each distinct key */
    uint8_t *keep = amq__zalloc(mem, in->n ? in->n : 1);
    amq_status st = AMQ_ERR_NOMEM;
    if (keep != NULL) {
        size_t bytes = 0, count = 0, len;
        for (size_t s = 0; s < in->n; s++) {
            size_t t = s;
            bool dup = false;
            while (t > 0 && v[t - 1].h == v[s].h && !dup)
                dup = same_key(in, v[--t].i, in, v[s].i);
            if (dup)
                continue;
            keep[v[s].i] = 1;
            count++;
            (void)amq__key(in, v[s].i, &len);
            bytes += len;
        }
        st = owned_init(mem, out, count, bytes);
        for (size_t i = 0; st == AMQ_OK && i < in->n; i++)
            if (keep[i]) {
                const uint8_t *p = amq__key(in, i, &len);
                owned_push(out, p, len);
            }
        if (st == AMQ_OK) {
            owned_seal(out);
            *dropped = in->n - count;
        }
    }
    amq__free(mem, keep, in->n ? in->n : 1);
    amq__free(mem, v, (in->n ? in->n : 1) * sizeof *v);
    return st;
}
