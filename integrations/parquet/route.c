/*
 * route.c — one routing maplet over the row groups of many Parquet files
 * (amq_parquet.h, "Routing"): key -> every row group whose column holds
 * it.
 *
 * Each row group's values (amq_pq_values) are hashed as Parquet's Bloom
 * filters hash them, sorted and made distinct within the group, and
 * become (hash, group number) pairs; a multiset maplet holds one slot per
 * pair, so a key in g row groups takes g slots under one quotient and a
 * lookup returns all of them in one probe. Absent keys, and row groups
 * not holding a present key, are reported with the maplet's certified
 * probability, for every row group together (a filter per row group pays
 * its rate once per row group).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amq/maplet.h"
#include "parquet_impl.h"

typedef struct pair_sink {
    amq_pq_pairs *p;
    size_t cap;
    bool nomem;
} pair_sink;

static bool take_value(void *ctx, const uint8_t *value, size_t len) {
    pair_sink *s = ctx;
    amq_pq_pairs *p = s->p;
    if (p->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 4096;
        uint64_t *h = realloc(p->hash, cap * sizeof *h);
        if (h != NULL)
            p->hash = h;
        uint64_t *g = h != NULL ? realloc(p->group, cap * sizeof *g) : NULL;
        if (g == NULL) {
            s->nomem = true;
            return false;
        }
        p->group = g;
        s->cap = cap;
    }
    p->hash[p->n] = amq_pq_hash(value, len);
    p->group[p->n++] = p->groups;
    return true;
}

amq_status amq_pq_pairs_read(amq_pq_file *const *files, const size_t *cols,
                             size_t nfiles, amq_pq_pairs *p, size_t *failed,
                             amq_pq_diag *diag) {
    pair_sink s = {p, 0, false};
    memset(p, 0, sizeof *p);
    for (size_t i = 0; i < nfiles; i++)
        for (size_t g = 0; g < amq_pq_groups(files[i]); g++) {
            size_t from = p->n;
            amq_status st =
                amq_pq_values(files[i], g, cols[i], take_value, &s, diag);
            if (st == AMQ_OK && s.nomem)
                st = AMQ_ERR_NOMEM;
            if (st != AMQ_OK) {
                if (failed != NULL)
                    *failed = i;
                amq_pq_pairs_free(p);
                return st;
            }
            p->n = from + amq__pq_distinct(p->hash + from, p->n - from);
            p->groups++;
        }
    return AMQ_OK;
}

void amq_pq_pairs_free(amq_pq_pairs *p) {
    free(p->hash);
    free(p->group);
    memset(p, 0, sizeof *p);
}

unsigned amq_pq_route_value_bits(uint64_t groups) {
    unsigned v = 1;
    while (v < 64 && (groups - 1) >> v)
        v++;
    return v;
}

/* A key held by many row groups puts as many pairs under one quotient,
 * and such runs pile up: when the table sized for the pairs overflows its
 * end, it is made a sixteenth larger (the rate only falls). */
amq_status amq_pq_route_build(const amq_pq_pairs *p, double fpr,
                              amq_filter **out, amq_diag *diag) {
    char spec[64];
    uint64_t cap = p->n ? p->n : 1;
    /* the frame names the hash the pairs were made with */
    amq_options opt = {.hash = AMQ_HASH_XXH64, .hash_seed = 0};
    amq_status st;
    if (p->groups == 0 || out == NULL)
        return AMQ_ERR_INVALID;
    snprintf(spec, sizeof spec, "maplet:op=max,v=%u,multiset=1",
             amq_pq_route_value_bits(p->groups));
    for (int tries = 0;; tries++) {
        size_t done = 0;
        AMQ_RETURN_IF_ERR(amq_maplet_new(spec, cap, fpr, &opt, out, diag));
        st = amq_maplet_put_batch(*out, p->hash, p->group, p->n, &done);
        if (st == AMQ_OK)
            return AMQ_OK;
        amq_filter_free(*out);
        *out = NULL;
        if (st != AMQ_ERR_FULL || tries == 16)
            return st;
        cap += cap / 16 + 64;
    }
}
