/*
 * recommend.c — which structure to build for a need (amq/recommend.h).
 *
 * Space is what the types already say about themselves: amq_curve_bits
 * (type, E) is the bits per key a type needs for rate E, the curve the
 * allocation engine sizes with. Two things the curve does not say are
 * found by asking the library directly:
 *
 *   - a static type is probed: a build from PROBE_KEYS fixed hashes at E
 *     either fails with AMQ_ERR_INVALID (the type cannot reach E: a
 *     fingerprint too narrow, Ribbon past 32 bits per key; it is out) or
 *     reports its certified bound. A fixed-width type (xor8/16/32,
 *     fuse8/16/32) cannot be shaped by E, its rate is 2^-w whatever is
 *     asked: a bound well below E (under E / FIXED_MARGIN) means it spends
 *     the bits of that lower rate, and the row says so;
 *   - the parameter that sets a type's reads (k for the Bloom family, d
 *     for d-left, depth for Count-Min: amq__type.reads_param) is read from
 *     the resolved spec of a small filter made for E; the other types'
 *     reads are in their descriptors.
 *
 *   each type ──► caps fit? ──► curve bits at E ──► static: probe ──► reads
 *   rows (on the stack, one per type) ──► stable sort by bits ──► out
 *
 * Nothing here depends on n (the curves are per key and the probes have
 * fixed sizes), so a need's answer is the same for every n; and nothing
 * is printed or kept. Random memory reads are what a query of a filter
 * larger than the cache costs; the reads of each row let the caller name
 * the fastest type beside the smallest.
 *
 * Failure modes: an allocation failure in a probe is AMQ_ERR_NOMEM and
 * nothing is written; any other probe failure is not the caller's (a
 * static type that builds at E but not from the probe's keys is still
 * listed at E, a reads parameter that cannot be resolved reads "?").
 */
#include <stdio.h>
#include <string.h>

#include "core/mem.h"
#include "filter/make.h"

/* Hashes of the static types' probe build, and the keys of the filter
 * whose resolved spec gives a reads parameter. */
#define PROBE_KEYS 2048
#define READS_KEYS 1000
/* A fixed-width type whose certified rate is below E / FIXED_MARGIN is
 * shown at that rate. */
#define FIXED_MARGIN 1.5

enum {
    NTYPES = 0
#define AMQ__TYPE(id, name) +1
#define AMQ__FRAME_ONLY(id, name, what, reader)
#include "type/types.def"
#undef AMQ__TYPE
#undef AMQ__FRAME_ONLY
};

/* ---- reads per query ----------------------------------------------------- */

static unsigned reads_unknown(char *text, size_t cap) {
    if (cap > 0)
        snprintf(text, cap, "?");
    return AMQ_READS_MANY;
}

/* The value of key in f's resolved spec ("bloom:m=9585059,k=7"); 0 if
 * absent. */
static uint64_t resolved_value(const amq_filter *f, const char *key) {
    char desc[256];
    amq__spec s;
    uint64_t v = 0;
    if (amq_filter_describe(f, desc, sizeof desc) >= sizeof desc ||
        amq__spec_parse(desc, &s, NULL) != AMQ_OK ||
        amq__spec_u64(&s, key, 1, UINT32_MAX, &v, NULL, NULL) != AMQ_OK)
        return 0;
    return v;
}

/* t's reads; f (of type t) resolves a reads parameter and may be NULL
 * for a type with a fixed count. */
static unsigned type_reads(const amq__type *t, const amq_filter *f, char *text,
                           size_t cap) {
    uint64_t v;
    if (t->reads_param == NULL) {
        if (t->reads_text == NULL || t->reads == 0)
            return reads_unknown(text, cap);
        if (cap > 0)
            snprintf(text, cap, "%s", t->reads_text);
        return t->reads;
    }
    if (f == NULL || (v = resolved_value(f, t->reads_param)) == 0)
        return reads_unknown(text, cap);
    if (cap > 0)
        snprintf(text, cap, "%s = %u", t->reads_param, (unsigned)v);
    return (unsigned)v;
}

unsigned amq_filter_reads(const amq_filter *f, char *text, size_t cap) {
    return type_reads(amq__filter_type(f), f, text, cap);
}

/* The row's reads; a parameter is resolved by a small filter for fpr. */
static amq_status fill_reads(const amq__type *t, double fpr, amq_choice *r) {
    amq_filter *f = NULL;
    if (t->reads_param != NULL) {
        amq_status st =
            amq_filter_new(t->info.name, READS_KEYS, fpr, NULL, &f, NULL);
        if (st == AMQ_ERR_NOMEM)
            return st;
    }
    r->reads = type_reads(t, f, r->reads_text, sizeof r->reads_text);
    amq_filter_free(f);
    return AMQ_OK;
}

/* ---- static types: what a build at E really gives --------------------------- */

/* A static type built from PROBE_KEYS fixed hashes at fpr: *reach = false
 * when the type cannot reach fpr; else *eps = its certified rate (fpr
 * when the probe could not tell). */
static amq_status probe_static(const amq__type *t, double fpr, bool *reach,
                               double *eps) {
    amq__mem m;
    amq__mem_init(&m, NULL);
    uint64_t *h = amq__alloc(&m, PROBE_KEYS * sizeof *h), s = 1;
    amq_filter *f = NULL;
    *reach = true;
    *eps = fpr;
    if (h == NULL)
        return AMQ_ERR_NOMEM;
    for (size_t i = 0; i < PROBE_KEYS; i++) {
        uint64_t z = (s += UINT64_C(0x9e3779b97f4a7c15));
        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        h[i] = z ^ (z >> 31);
    }
    amq_status st =
        amq_filter_build(t->info.name, h, PROBE_KEYS, fpr, NULL, &f, NULL);
    amq__free(&m, h, PROBE_KEYS * sizeof *h);
    if (st == AMQ_OK)
        *eps = amq_filter_fpr_bound(f);
    amq_filter_free(f);
    if (st == AMQ_ERR_INVALID)
        *reach = false;
    return st == AMQ_ERR_NOMEM ? st : AMQ_OK;
}

/* ---- the ranking ------------------------------------------------------------- */

/* Sketches, forgetting and range filters answer other questions; an
 * adaptive filter keeps a reverse map of every member's hash beside its
 * query bytes, which a ranking by bits per key would not see, and a
 * growing one is for when n is not known (its size depends on the growth
 * it plans for, not on n): each is asked for by name. */
static bool fits(const amq_need *need, uint32_t caps) {
    if (caps & (AMQ_CAP_SKETCH | AMQ_CAP_FORGETS | AMQ_CAP_RANGE |
                AMQ_CAP_ADAPT | AMQ_CAP_GROW))
        return false;
    if (need->deletes && !(caps & AMQ_CAP_REMOVE))
        return false;
    if (need->counts && !(caps & AMQ_CAP_COUNT))
        return false;
    return need->allow_static || !(caps & AMQ_CAP_STATIC);
}

/* The row of type t for need (*take = false when t cannot meet it). */
static amq_status evaluate(const amq_need *need, const amq__type *t,
                           amq_choice *r, bool *take) {
    bool reach = true;
    memset(r, 0, sizeof *r);
    r->type = &t->info;
    r->fpr = need->fpr;
    *take = false;
    if (!fits(need, t->info.caps) ||
        amq_curve_bits(t->info.name, need->fpr, &r->bits_per_key) != AMQ_OK)
        return AMQ_OK;
    if (t->info.caps & AMQ_CAP_STATIC) {
        double eps;
        AMQ_RETURN_IF_ERR(probe_static(t, need->fpr, &reach, &eps));
        if (!reach)
            return AMQ_OK;
        /* Well below E: the width, not E, sets its size. */
        if (eps < need->fpr / FIXED_MARGIN &&
            amq_curve_bits(t->info.name, eps, &r->bits_per_key) == AMQ_OK) {
            r->fixed = true;
            r->fpr = eps;
        }
    }
    AMQ_RETURN_IF_ERR(fill_reads(t, need->fpr, r));
    *take = true;
    return AMQ_OK;
}

/* Insertion sort by bits per key: stable, so ties keep the registry's
 * order (and the rows are few). */
static void sort_by_bits(amq_choice *rows, size_t n) {
    for (size_t i = 1; i < n; i++) {
        amq_choice r = rows[i];
        size_t j = i;
        for (; j > 0 && rows[j - 1].bits_per_key > r.bits_per_key; j--)
            rows[j] = rows[j - 1];
        rows[j] = r;
    }
}

amq_status amq_recommend(const amq_need *need, amq_choice *out, size_t cap,
                         size_t *count) {
    amq_choice rows[NTYPES];
    size_t n = 0;
    if (need == NULL || (out == NULL && cap > 0) || need->n == 0 ||
        !(need->fpr > 0.0 && need->fpr < 1.0))
        return AMQ_ERR_INVALID;
    for (size_t i = 0; i < NTYPES; i++) {
        bool take;
        AMQ_RETURN_IF_ERR(evaluate(need, amq__type_at(i), &rows[n], &take));
        n += take;
    }
    sort_by_bits(rows, n);
    if (cap > 0)
        memcpy(out, rows, (cap < n ? cap : n) * sizeof *rows);
    if (count != NULL)
        *count = n;
    return AMQ_OK;
}
