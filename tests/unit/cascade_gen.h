/*
 * cascade_gen.h — small synthetic key sets for the cascade tests: host
 * names "sub.stem<number>.tld" where membership is a deterministic
 * function of the key (so the two sets never share a key) whose
 * probability depends on the structure: members favour some stems and
 * TLDs, non-members others, and `noise` in [0, 1] blends both towards
 * 50/50 (0: well separable, 1: unlearnable).
 */
#ifndef AMQ_TESTS_CASCADE_GEN_H
#define AMQ_TESTS_CASCADE_GEN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

typedef struct gen_keys {
    amq_keys k;
    uint8_t *bytes;
    uint64_t *offsets;
    size_t cap;
} gen_keys;

static inline void gen_push(gen_keys *g, const char *s) {
    size_t len = strlen(s), at = g->k.n ? g->offsets[g->k.n] : 0;
    if (at + len > g->cap) {
        g->cap = 2 * (at + len) + 64;
        g->bytes = realloc(g->bytes, g->cap);
    }
    g->offsets = realloc(g->offsets, (g->k.n + 2) * sizeof *g->offsets);
    g->offsets[0] = 0;
    memcpy(g->bytes + at, s, len);
    g->offsets[g->k.n + 1] = at + len;
    g->k.n++;
    g->k.bytes = g->bytes;
    g->k.offsets = g->offsets;
}

static inline void gen_free(gen_keys *g) {
    free(g->bytes);
    free(g->offsets);
    memset(g, 0, sizeof *g);
}

static inline double gen_unit(uint64_t *s) {
    return (double)(check_next(s) >> 11) * 0x1p-53;
}

/* Membership of a key with stem a, tld t, number x: a fixed function. */
static inline bool gen_is_member(unsigned a, unsigned t, uint64_t x,
                                 double noise) {
    static const double stem_p[8] = {1.0,  1.0,  0.9,  0.3,
                                     0.05, 0.02, 0.01, 0.01};
    static const double tld_p[5] = {1.0, 0.9, 0.5, 0.05, 0.02};
    double p = stem_p[a] * tld_p[t];
    p = (1 - noise) * p + noise * 0.5;
    uint64_t s = x * 0x9e3779b97f4a7c15ULL ^ (a * 131 + t);
    return gen_unit(&s) < p;
}

/* Fill members and non-members until each has at least its count. */
static inline void gen_hosts(uint64_t seed, size_t nm, size_t nn, double noise,
                             gen_keys *members, gen_keys *nonmembers) {
    static const char *stems[8] = {"ads",  "track", "pixel", "cdn",
                                   "mail", "shop",  "news",  "wiki"};
    static const char *subs[4] = {"www", "api", "static", "m"};
    static const char *tlds[5] = {"com", "net", "io", "org", "de"};
    uint64_t s = seed;
    memset(members, 0, sizeof *members);
    memset(nonmembers, 0, sizeof *nonmembers);
    while (members->k.n < nm || nonmembers->k.n < nn) {
        unsigned a = (unsigned)(check_next(&s) % 8),
                 t = (unsigned)(check_next(&s) % 5);
        unsigned u = (unsigned)(check_next(&s) % 4);
        uint64_t x = check_next(&s) % 1000000;
        char buf[64];
        snprintf(buf, sizeof buf, "%s.%s%llu.%s", subs[u], stems[a],
                 (unsigned long long)x, tlds[t]);
        /* the sub-domain is part of the key: keep the decision a function
         * of the whole key */
        bool mem = gen_is_member(a, t, x * 4 + u, noise);
        gen_keys *g = mem ? members : nonmembers;
        if (g->k.n < (mem ? nm : nn))
            gen_push(g, buf);
    }
}

/* An allocator that fails its fail_at-th call (0: never) and counts calls
 * and live bytes, for the out-of-memory sweeps: a run with fail_at = 0
 * gives the number of calls to sweep. */
typedef struct oom_ctx {
    unsigned long calls, fail_at;
    long long live;
} oom_ctx;

static inline bool oom_fails(oom_ctx *x) {
    x->calls++;
    return x->fail_at != 0 && x->calls == x->fail_at;
}
static inline void *oom_alloc(void *c, size_t n) {
    oom_ctx *x = c;
    if (oom_fails(x))
        return NULL;
    x->live += (long long)n;
    return malloc(n);
}
static inline void *oom_realloc(void *c, void *p, size_t o, size_t n) {
    oom_ctx *x = c;
    if (oom_fails(x))
        return NULL;
    x->live += (long long)n - (long long)o;
    return realloc(p, n);
}
static inline void oom_free(void *c, void *p, size_t n) {
    ((oom_ctx *)c)->live -= (long long)n;
    free(p);
}

#endif
