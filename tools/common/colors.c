/*
 * colors.c — colour classes (colors.h): a pool of varint-coded id lists,
 * numbered in the order first seen, and while building an open-addressing
 * table from a class's bytes to its id, so each distinct set is stored
 * once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amq/core.h"
#include "colors.h"

#define COLOR_MAGIC "AMQCLS1\n"
enum { HEAD = 32 }; /* magic, E, C, P */

static uint64_t bytes_hash(const void *p, size_t n) {
    amq_hasher h;
    amq_hasher_init(&h, AMQ_HASH_XXH3, 0, NULL);
    return amq_hash64(&h, p, n);
}

static size_t put_varint(uint8_t *out, uint64_t x) {
    size_t n = 0;
    do {
        out[n++] = (uint8_t)((x & 0x7f) | (x >= 0x80 ? 0x80 : 0));
        x >>= 7;
    } while (x != 0);
    return n;
}

/* The varint at p[*at..end), advancing *at; false if it runs past end or
 * past 64 bits. */
static bool get_varint(const uint8_t *p, size_t end, size_t *at, uint64_t *x) {
    *x = 0;
    for (unsigned sh = 0; sh < 64 && *at < end; sh += 7) {
        uint8_t b = p[(*at)++];
        *x |= (uint64_t)(b & 0x7f) << sh;
        if ((b & 0x80) == 0)
            return sh < 63 || (b & 0x7f) <= 1;
    }
    return false;
}

static bool grow(void **p, size_t *cap, size_t want, size_t size) {
    if (want <= *cap)
        return true;
    size_t c = *cap ? *cap : 64;
    while (c < want)
        c *= 2;
    void *q = realloc(*p, c * size);
    if (q == NULL)
        return false;
    *p = q;
    *cap = c;
    return true;
}

bool color_init(color_table *t, uint64_t experiments) {
    memset(t, 0, sizeof *t);
    t->experiments = experiments;
    t->off = malloc(sizeof *t->off);
    t->off_cap = 1;
    if (t->off == NULL)
        return false;
    t->off[0] = 0;
    return true;
}

void color_free(color_table *t) {
    free(t->off);
    free(t->pool);
    free(t->slot);
    free(t->slot_hash);
    memset(t, 0, sizeof *t);
}

/* ---- building ---------------------------------------------------------- */

static bool same_class(const color_table *t, uint64_t c, const uint8_t *b,
                       size_t n) {
    return t->off[c + 1] - t->off[c] == n &&
           memcmp(t->pool + t->off[c], b, n) == 0;
}

/* Twice the slots (or the first 1024), every class placed again. */
static bool rehash(color_table *t) {
    size_t slots = t->slots ? 2 * t->slots : 1024;
    uint64_t *slot = calloc(slots, sizeof *slot);
    uint64_t *sh = calloc(slots, sizeof *sh);
    if (slot == NULL || sh == NULL) {
        free(slot);
        free(sh);
        return false;
    }
    for (size_t i = 0; i < t->slots; i++) {
        if (t->slot[i] == 0)
            continue;
        size_t j = (size_t)t->slot_hash[i] & (slots - 1);
        while (slot[j] != 0)
            j = (j + 1) & (slots - 1);
        slot[j] = t->slot[i];
        sh[j] = t->slot_hash[i];
    }
    free(t->slot);
    free(t->slot_hash);
    t->slot = slot;
    t->slot_hash = sh;
    t->slots = slots;
    return true;
}

uint64_t color_add(color_table *t, const uint32_t *ids, size_t n) {
    if (2 * (t->classes + 1) > t->slots && !rehash(t))
        return UINT64_MAX;
    if (!grow((void **)&t->pool, &t->pool_cap, t->pool_len + 10 * n, 1))
        return UINT64_MAX;
    /* encode at the pool's end: kept if new, dropped if seen */
    uint8_t *b = t->pool + t->pool_len;
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        len += put_varint(b + len, i == 0 ? ids[0] : ids[i] - ids[i - 1]);
    uint64_t h = bytes_hash(b, len);
    size_t j = (size_t)h & (t->slots - 1);
    for (; t->slot[j] != 0; j = (j + 1) & (t->slots - 1))
        if (t->slot_hash[j] == h && same_class(t, t->slot[j] - 1, b, len))
            return t->slot[j] - 1;
    if (!grow((void **)&t->off, &t->off_cap, t->classes + 2, sizeof *t->off))
        return UINT64_MAX;
    t->pool_len += len;
    t->off[++t->classes] = t->pool_len;
    t->slot[j] = t->classes;
    t->slot_hash[j] = h;
    return t->classes - 1;
}

size_t color_ids(const color_table *t, uint64_t c, uint32_t *out) {
    size_t at = t->off[c], end = t->off[c + 1], n = 0;
    uint64_t x, id = 0;
    while (at < end && get_varint(t->pool, end, &at, &x)) {
        id = n == 0 ? x : id + x;
        out[n++] = (uint32_t)id;
    }
    return n;
}

/* ---- the file ------------------------------------------------------------ */

static void put_u64(uint8_t *p, uint64_t x) {
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(x >> (8 * i));
}

static uint64_t get_u64(const uint8_t *p) {
    uint64_t x = 0;
    for (int i = 0; i < 8; i++)
        x |= (uint64_t)p[i] << (8 * i);
    return x;
}

bool color_encode(const color_table *t, uint8_t **buf, size_t *len) {
    size_t n = HEAD + 8 * (t->classes + 1) + t->pool_len + 8;
    uint8_t *p = malloc(n);
    if (p == NULL)
        return false;
    memcpy(p, COLOR_MAGIC, 8);
    put_u64(p + 8, t->experiments);
    put_u64(p + 16, t->classes);
    put_u64(p + 24, t->pool_len);
    for (uint64_t c = 0; c <= t->classes; c++)
        put_u64(p + HEAD + 8 * c, t->off[c]);
    if (t->pool_len > 0)
        memcpy(p + HEAD + 8 * (t->classes + 1), t->pool, t->pool_len);
    put_u64(p + n - 8, bytes_hash(p, n - 8));
    *buf = p;
    *len = n;
    return true;
}

static bool fail(char *err, const char *msg, uint64_t at) {
    snprintf(err, PARSE_ERR_MAX, "%s (byte %llu)", msg, (unsigned long long)at);
    return false;
}

/* Class c of pool[lo..hi) decodes to increasing ids below E. */
static bool class_ok(const uint8_t *pool, size_t lo, size_t hi, uint64_t e) {
    size_t at = lo;
    uint64_t x, id = 0;
    bool first = true;
    while (at < hi) {
        if (!get_varint(pool, hi, &at, &x) || (!first && x == 0) ||
            (!first && id > UINT64_MAX - x))
            return false;
        id = first ? x : id + x;
        first = false;
        if (id >= e)
            return false;
    }
    return !first;
}

bool color_parse(const uint8_t *buf, size_t len, color_table *t,
                 char err[PARSE_ERR_MAX]) {
    memset(t, 0, sizeof *t);
    if (len < HEAD + 16 || memcmp(buf, COLOR_MAGIC, 8) != 0)
        return fail(err, "not a colour class file", 0);
    uint64_t e = get_u64(buf + 8), c = get_u64(buf + 16), p = get_u64(buf + 24);
    if (e == 0 || e > UINT32_MAX || c > (len - HEAD - 16) / 8 ||
        p != len - HEAD - 16 - 8 * c)
        return fail(err, "sizes that do not match the file's length", 8);
    if (get_u64(buf + len - 8) != bytes_hash(buf, len - 8))
        return fail(err, "checksum mismatch: the file is corrupt", len - 8);
    const uint8_t *offs = buf + HEAD, *pool = offs + 8 * (c + 1);
    if (get_u64(offs) != 0 || get_u64(offs + 8 * c) != p)
        return fail(err, "class offsets that do not span the pool", HEAD);
    for (uint64_t i = 0; i < c; i++) {
        uint64_t lo = get_u64(offs + 8 * i), hi = get_u64(offs + 8 * i + 8);
        if (lo >= hi || hi > p || !class_ok(pool, lo, hi, e))
            return fail(err, "a class that is not increasing ids below E",
                        HEAD + 8 * (c + 1) + lo);
    }
    t->experiments = e;
    t->classes = c;
    t->off = malloc(8 * (c + 1));
    t->pool = malloc(p ? p : 1);
    if (t->off == NULL || t->pool == NULL) {
        color_free(t);
        return fail(err, "out of memory", 0);
    }
    for (uint64_t i = 0; i <= c; i++)
        t->off[i] = get_u64(offs + 8 * i);
    memcpy(t->pool, pool, p);
    t->pool_len = p;
    t->off_cap = c + 1;
    t->pool_cap = p;
    return true;
}
