/*
 * kmer_size.c — sizing a k-mer count from its input before counting
 * (kmer_common.h: kmer_plan_input).
 *
 * One pass samples the distinct k-mers by hash: a k-mer is kept when
 * its mixed code falls below 2^(64 - level), the level rising by one
 * (and half the sample leaving) whenever the sample passes SAMPLE_MAX
 * distinct k-mers. Every occurrence of a kept k-mer is kept, so the
 * sample holds exact counts of a uniform 2^-level share of the distinct
 * k-mers: it estimates how many there are (sample x 2^level, relative
 * error about 2^-7.5 at 2^15 and more kept) and how their counts are
 * spread, which is what the table's size depends on (a count above
 * 2^v - 1 takes two slots or more: amq_maplet_sum_slots).
 *
 * The plan takes, among value widths v = 1..MAX_V, the one whose table
 * is smallest: home slots N = (sum of the sample's slots) x 2^level x
 * (1 + KMER_SLACK) / KMER_MAX_LOAD, bits N (r + v + 2.125), r the
 * remainder width the shape gets (2k - floor(log2 N) exact, so rounding
 * N up to a power of two may save a bit a slot; ceil(log2 1/fpr)
 * otherwise).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kmer_common.h"

enum { SAMPLE_MAX = 1 << 16, MAX_V = 32 };
#define META_BITS 2.125 /* per slot beside r + v: 2 flags, an offset/64 */

struct kmer_census {
    uint64_t *key, *count; /* open addressing, 2 SAMPLE_MAX; key 0: empty */
    size_t n;              /* sampled distinct                              */
    unsigned level;
};
typedef kmer_census census;

#define TABLE (2 * (size_t)SAMPLE_MAX)

/* A bijective mix of a code (the murmur3 finaliser): sampling by it is
 * uniform over k-mers whatever their sequence. */
static uint64_t mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

static bool kept(const census *c, uint64_t h) {
    return h != 0 && (c->level == 0 || h >> (64 - c->level) == 0);
}

static void add(census *c, uint64_t h, uint64_t count) {
    size_t i = (size_t)(h * 0x9e3779b97f4a7c15ULL >> 47) & (TABLE - 1);
    while (c->key[i] != 0 && c->key[i] != h)
        i = (i + 1) & (TABLE - 1);
    if (c->key[i] == 0) {
        c->key[i] = h;
        c->n++;
    }
    c->count[i] += count;
}

/* One more level: the half of the sample above the new limit leaves. */
static void raise_level(census *c) {
    size_t bytes = TABLE * sizeof *c->key;
    uint64_t *key = malloc(bytes), *count = malloc(bytes);
    if (key == NULL || count == NULL) { /* keep the sample as it is */
        free(key);
        free(count);
        c->level++;
        return;
    }
    memcpy(key, c->key, bytes);
    memcpy(count, c->count, bytes);
    memset(c->key, 0, bytes);
    memset(c->count, 0, bytes);
    c->n = 0;
    c->level++;
    for (size_t i = 0; i < TABLE; i++)
        if (kept(c, key[i]))
            add(c, key[i], count[i]);
    free(key);
    free(count);
}

kmer_census *kmer_census_new(void) {
    census *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    c->key = calloc(TABLE, sizeof *c->key);
    c->count = calloc(TABLE, sizeof *c->count);
    if (c->key == NULL || c->count == NULL) {
        kmer_census_free(c);
        return NULL;
    }
    return c;
}

void kmer_census_free(kmer_census *c) {
    if (c == NULL)
        return;
    free(c->key);
    free(c->count);
    free(c);
}

void kmer_census_add(kmer_census *c, uint64_t code, uint64_t count) {
    uint64_t h = mix(code);
    if (!kept(c, h))
        return;
    add(c, h, count);
    while (c->n > SAMPLE_MAX && c->level < 63)
        raise_level(c);
}

static int census_batch(void *ctx, uint64_t **codes, size_t n) {
    census *c = ctx;
    const uint64_t *x = *codes;
    for (size_t i = 0; i < n; i++)
        kmer_census_add(c, x[i], 1);
    return 0;
}

/* Home slots and remainder bits for a table of about `slots` in use. */
static void shape_for(const kmer_opts *o, double slots, uint64_t *n,
                      unsigned *r) {
    double home = ceil(slots / KMER_MAX_LOAD);
    *n = ((uint64_t)home + 63) / 64 * 64;
    if (!o->c.exact) {
        double rr = ceil(-log2(o->fpr));
        *r = rr < 1 ? 1u : rr > 64 ? 64u : (unsigned)rr;
        return;
    }
    unsigned lg = 63u - (unsigned)__builtin_clzll(*n), kbits = 2 * o->c.k;
    *r = lg >= kbits ? 1u : kbits - lg;
}

/* The sample's counts, each distinct count with how many k-mers have
 * it, and what one sampled k-mer stands for. */
typedef struct spread {
    uint64_t *count, *times;
    size_t n;
    double scale, est; /* 2^level; the distinct k-mers estimated */
} spread;

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static bool spread_of(const census *c, spread *sp) {
    memset(sp, 0, sizeof *sp);
    sp->count = malloc((c->n + 1) * sizeof *sp->count);
    sp->times = malloc((c->n + 1) * sizeof *sp->times);
    if (sp->count == NULL || sp->times == NULL) {
        free(sp->count);
        free(sp->times);
        return false;
    }
    size_t m = 0;
    for (size_t i = 0; i < TABLE; i++)
        if (c->key[i] != 0)
            sp->count[m++] = c->count[i];
    qsort(sp->count, m, sizeof *sp->count, cmp_u64);
    for (size_t i = 0, j; i < m; i = j) {
        for (j = i; j < m && sp->count[j] == sp->count[i]; j++)
            ;
        sp->count[sp->n] = sp->count[i];
        sp->times[sp->n++] = j - i;
    }
    sp->scale = ldexp(1, (int)c->level);
    sp->est = (double)m * sp->scale;
    return true;
}

/* The slots the sample's counts take at v, scaled to the whole input,
 * with the slack. */
static double slots_at(const spread *sp, unsigned v, unsigned r) {
    double sum = 0;
    for (size_t i = 0; i < sp->n; i++)
        sum += (double)amq_maplet_sum_slots(v, r, sp->count[i]) *
               (double)sp->times[i];
    return sum * sp->scale * (1 + KMER_SLACK);
}

/* The plan at one width: the capacity to ask for (slots at the maximum
 * load) and the table's bits. An exact table's remainders are one bit
 * shorter from the next power of two of home slots on, which may make
 * the larger table the smaller one. */
static double plan_at(const spread *sp, const kmer_opts *o, unsigned v,
                      uint64_t *capacity) {
    uint64_t n;
    unsigned r;
    shape_for(o, sp->est, &n, &r); /* a first r, then the one of the table */
    double s = slots_at(sp, v, r);
    shape_for(o, s, &n, &r);
    s = slots_at(sp, v, r);
    *capacity = (uint64_t)ceil(s);
    double bits = (double)n * (r + v + META_BITS);
    unsigned lg = 63u - (unsigned)__builtin_clzll(n);
    if (o->c.exact && r > 1 && lg < 62) {
        double n2 = ldexp(1, (int)lg + 1);
        double bits2 = n2 * (r - 1 + v + META_BITS);
        if (bits2 < bits) {
            *capacity = (uint64_t)ceil(n2 * KMER_MAX_LOAD);
            bits = bits2;
        }
    }
    return bits;
}

void kmer_census_plan(const kmer_census *c, const kmer_opts *o, kmer_plan *p) {
    memset(p, 0, sizeof *p);
    p->known = true;
    double all = ldexp(1, (int)(2 * o->c.k)); /* 4^k k-mers in all */
    double d = (double)c->n * ldexp(1, (int)c->level);
    p->distinct = (uint64_t)(d < all ? d : all);
    spread sp;
    if (!spread_of(c, &sp)) { /* no plan: the table grows */
        p->known = false;
        return;
    }
    double best = INFINITY;
    unsigned lo = o->vbits ? o->vbits : 1, hi = o->vbits ? o->vbits : MAX_V;
    for (unsigned v = lo; v <= hi; v++) {
        uint64_t slots;
        double bits = plan_at(&sp, o, v, &slots);
        if (bits < best) {
            best = bits;
            p->vbits = v;
            p->capacity = slots > 64 ? slots : 64;
        }
    }
    free(sp.count);
    free(sp.times);
}

int kmer_plan_input(const kmer_opts *o, kmer_plan *p) {
    memset(p, 0, sizeof *p);
    for (size_t i = 0; i < o->nfiles; i++)
        if (strcmp(o->files[i], "-") == 0)
            return -1; /* stdin is read once: no plan */
    census *c = kmer_census_new();
    int rc = c != NULL ? 0 : CLI_EXIT_ERR;
    if (rc != 0)
        cli_error("out of memory");
    for (size_t i = 0; i < o->nfiles && rc == 0; i++)
        rc = kmer_scan(&o->c, o->files[i], census_batch, c);
    if (rc == 0)
        kmer_census_plan(c, o, p);
    kmer_census_free(c);
    return rc == 0 ? -1 : rc;
}
