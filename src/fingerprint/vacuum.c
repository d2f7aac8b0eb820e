/*
 * vacuum.c — the vacuum filter (Wang, Zhou, Shi, Qian, "Vacuum filters:
 * more space-efficient and faster replacement for Bloom and cuckoo
 * filters", PVLDB 13(2), 2019).
 *
 * A cuckoo filter's alternate bucket i xor delta(fp) needs delta to range
 * over the whole table, so the table must be a power of two and a filter
 * sized for n keys is up to twice as large as n / (4 · 0.95) buckets. The
 * vacuum filter keeps delta below a chunk size L (a power of two): both
 * buckets of a key lie in the same aligned chunk of L buckets, and the
 * table only needs to be a multiple of L.
 *
 *   m = 5 · L0 buckets (not a power of two)
 *   +-----------+-----------+-----------+-----------+-----------+
 *   | chunk 0   | chunk 1   | chunk 2   | chunk 3   | chunk 4   |  L0 each
 *   +-----------+-----------+-----------+-----------+-----------+
 *     i1 = reduce(h >> 32, m) anywhere; i2 = i1 xor (1 + r mod (L - 1))
 *     stays in i1's aligned chunk of L = range[mix(fp) & 3] buckets:
 *       range[0] = L0 (a quarter of the keys roam a whole chunk),
 *       range[1..3] ever smaller (the rest stay local, which is cheaper).
 *
 * Choosing the ranges. Keys whose range is at most L_j are the groups
 * j..3, a fraction (4 - j)/4 of all keys, and they never leave their
 * L_j-chunk; that chunk can take them only if their number stays below what
 * a random walk reaches in a table of its size. At load α a chunk of L
 * buckets receives on average μ = 4 L α (4 - j)/4 of them, binomially, so
 * the fullest of c = m / L chunks is about μ + sqrt(μ) sqrt(2 ln c). We take
 * L_j as the smallest power of two (at least 8) with
 *     μ + sqrt(μ) (sqrt(2 ln c) + 1) <= 0.97 · 4 L,
 * using the design load α = 0.94. This follows the paper's recipe (a
 * balls-into-bins bound on the fullest chunk, and load (1 - j/4) for range
 * j); the exact tail bound and the 0.97 are ours — the paper does not pin
 * them down — and docs/parts/cuckoo.md checks the result by measuring the
 * load at the first failed insert.
 *
 * Everything else — fingerprints, buckets, the eviction walk with undo, the
 * certified bound (which depends only on m and f) — is the table in
 * cuckoo.c; a tiny table (L0 >= m) is a cuckoo filter with a power-of-two m.
 *
 * Failure modes: as cuckoo.c (AMQ_ERR_FULL leaves the table unchanged).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fingerprint/cuckoo_table.h"

#define MIN_RANGE 8
#define CHUNK_FILL 0.955

static bool is_pow2(uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }

static uint64_t next_pow2(uint64_t x) {
    uint64_t p = 1;
    while (p < x)
        p <<= 1;
    return p;
}

/* Smallest chunk for keys at `load` in m buckets; >= m means "one chunk". */
static uint64_t select_range(uint64_t m, double load) {
    uint64_t L = MIN_RANGE;
    for (; L < m; L <<= 1) {
        double c = (double)m / (double)L, mu = 4.0 * (double)L * load;
        double z = sqrt(2.0 * log(c)) + 1.0;
        if (mu + z * sqrt(mu) <= CHUNK_FILL * 4.0 * (double)L)
            break;
    }
    return L;
}

/* The four ranges of a table whose largest range is L0: each a quarter of
 * the one before, at least MIN_RANGE (or L0 itself when smaller). */
static void ranges_for(uint64_t L0, uint32_t range[4]) {
    range[0] = (uint32_t)L0;
    for (unsigned j = 1; j < 4; j++) {
        uint64_t r = range[j - 1] >> 2;
        range[j] = r >= MIN_RANGE ? (uint32_t)r
                                  : (range[j - 1] < MIN_RANGE ? range[j - 1]
                                                               : MIN_RANGE);
    }
}

/* Table of at least m0 buckets made of whole chunks (chunk: 0 = choose). */
static amq_status vacuum_shape(uint64_t m0, uint64_t chunk, uint64_t *m,
                               uint64_t *L0) {
    uint64_t L = chunk ? chunk : select_range(m0, AMQ__CT_DESIGN_LOAD);
    if (L >= m0 && chunk == 0)
        L = next_pow2(m0);
    if (L > AMQ_CUCKOO_MAX_BUCKETS)
        return AMQ_ERR_OVERFLOW;
    uint64_t chunks = (m0 + L - 1) / L;
    if (chunks > AMQ_CUCKOO_MAX_BUCKETS / L)
        return AMQ_ERR_OVERFLOW;
    *m = chunks * L;
    *L0 = L;
    return AMQ_OK;
}

static amq_status make(uint64_t m, uint64_t L0, unsigned f, unsigned kicks,
                       const amq_options *opt, amq_cuckoo **out) {
    uint32_t range[4];
    ranges_for(L0, range);
    return amq__ctab_new(m, f, range, kicks, opt, NULL, out);
}

/* The chunk an explicit table of m buckets gets: the given one (a power of
 * two >= 2 dividing m), or the selected one, which must divide m. */
static amq_status explicit_chunk(uint64_t m, uint64_t chunk, uint64_t *L0) {
    if (m < 2 || m > AMQ_CUCKOO_MAX_BUCKETS)
        return AMQ_ERR_INVALID;
    if (chunk == 0) {
        chunk = select_range(m, AMQ__CT_DESIGN_LOAD);
        if (chunk >= m)
            chunk = m; /* one chunk: m must then be a power of two */
    }
    if (!is_pow2(chunk) || chunk < 2 || m % chunk != 0)
        return AMQ_ERR_INVALID;
    *L0 = chunk;
    return AMQ_OK;
}

amq_status amq_vacuum_new_explicit(uint64_t buckets, unsigned fp_bits,
                                   uint64_t chunk, unsigned max_kicks,
                                   const amq_options *opt, amq_cuckoo **out) {
    uint64_t L0;
    if (out == NULL)
        return AMQ_ERR_INVALID;
    *out = NULL;
    AMQ_RETURN_IF_ERR(explicit_chunk(buckets, chunk, &L0));
    return make(buckets, L0, fp_bits, max_kicks, opt, out);
}

amq_status amq_vacuum_new(uint64_t capacity, double fpr, const amq_options *opt,
                          amq_cuckoo **out) {
    uint64_t m0, m, L0;
    unsigned f = amq_cuckoo_fp_bits_for(fpr);
    if (out == NULL)
        return AMQ_ERR_INVALID;
    *out = NULL;
    if (f == 0)
        return AMQ_ERR_INVALID;
    AMQ_RETURN_IF_ERR(amq__ctab_slots_for(capacity, &m0));
    AMQ_RETURN_IF_ERR(vacuum_shape(m0, 0, &m, &L0));
    return make(m, L0, f, AMQ_CUCKOO_DEFAULT_KICKS, opt, out);
}

/* ---- the generic interface ------------------------------------------------ */

static amq_status spec_shape(amq__spec *spec, uint64_t capacity, uint64_t *m,
                             uint64_t *L0, amq_diag *diag) {
    uint64_t chunk = 0, m0;
    bool has_m;
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "chunk", 2, AMQ_CUCKOO_MAX_BUCKETS,
                                    &chunk, NULL, diag));
    if (chunk != 0 && !is_pow2(chunk))
        return amq__diag(diag, AMQ_ERR_SPEC, 0, "vacuum chunk=%llu is not a "
                         "power of two", (unsigned long long)chunk);
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "buckets", 2,
                                    AMQ_CUCKOO_MAX_BUCKETS, m, &has_m, diag));
    if (has_m) {
        if (explicit_chunk(*m, chunk, L0) != AMQ_OK)
            return amq__diag(diag, AMQ_ERR_SPEC, 0, "vacuum buckets=%llu is "
                             "not a multiple of chunk %llu",
                             (unsigned long long)*m, (unsigned long long)(
                                 chunk ? chunk
                                       : select_range(*m, AMQ__CT_DESIGN_LOAD)));
        return AMQ_OK;
    }
    if (capacity == 0)
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "vacuum needs a capacity, or buckets=N");
    amq_status st = amq__ctab_slots_for(capacity, &m0);
    if (st == AMQ_OK)
        st = vacuum_shape(m0, chunk, m, L0);
    if (st != AMQ_OK)
        return amq__diag(diag, st, 0, "capacity %llu: %s",
                         (unsigned long long)capacity, amq_strerror(st));
    return AMQ_OK;
}

static amq_status t_create(amq__spec *spec, uint64_t capacity, double fpr,
                           const amq_options *opt, void **impl,
                           amq_diag *diag) {
    uint64_t m = 0, L0 = 0;
    unsigned f, kicks;
    AMQ_RETURN_IF_ERR(amq__ctab_spec_fp(spec, fpr, &f, diag));
    AMQ_RETURN_IF_ERR(amq__ctab_spec_kicks(spec, &kicks, diag));
    AMQ_RETURN_IF_ERR(spec_shape(spec, capacity, &m, &L0, diag));
    return make(m, L0, f, kicks, opt, (amq_cuckoo **)impl);
}

static size_t t_describe(const void *impl, char *buf, size_t cap) {
    const amq__ctab *t = impl;
    int n = snprintf(buf, cap, "fp=%u,buckets=%u,chunk=%u,max_kicks=%u",
                     t->fbits, t->buckets, t->range[0], t->max_kicks);
    return n > 0 ? (size_t)n : 0;
}

/* The ranges must be those ranges_for derives from the largest. */
static bool vacuum_ranges_ok(uint64_t buckets, const uint32_t range[4]) {
    uint32_t want[4];
    (void)buckets; /* the common check has tied range[0] to buckets */
    ranges_for(range[0], want);
    return memcmp(want, range, sizeof want) == 0;
}

static const amq__ctab_kind vacuum_kind = {"vacuum", vacuum_ranges_ok};

static amq_status t_load(const uint8_t *p, size_t plen, const uint8_t *payload,
                         size_t len, bool view, const amq_options *opt,
                         void **impl, amq_diag *diag) {
    return amq__ctab_load(p, plen, payload, len, view, opt, &vacuum_kind, impl,
                          diag);
}

const amq__type amq__type_vacuum = {
    .info = {.name = "vacuum",
             .type_id = 101,
             .caps = AMQ_CAP_REMOVE | AMQ_CAP_COUNT,
             .summary = "vacuum filter, cuckoo filter with chunked alternate "
                        "ranges, any table size (Wang et al. 2019)",
             .params = "fp=BITS (4-32, default ceil(log2(8/fpr))), "
                       "buckets=N (multiple of the chunk, instead of "
                       "capacity), chunk=L (largest alternate range, a power "
                       "of two), max_kicks=N (default 500)",
             .default_hash = AMQ_HASH_XXH3},
    .create = t_create,
    .destroy = amq__ctab_t_destroy,
    .add = amq__ctab_t_add,
    .contains = amq__ctab_t_contains,
    .contains_batch = amq__ctab_t_batch,
    .remove = amq__ctab_t_remove,
    .count = amq__ctab_t_count,
    .items = amq__ctab_t_items,
    .size_bytes = amq__ctab_t_size,
    .fpr_bound = amq__ctab_t_bound,
    .describe = t_describe,
    .curve_fpr = amq__ctab_curve_fpr,
    .curve_bits = amq__ctab_curve_bits,
    .params_size = amq__ctab_t_params_size,
    .params_write = amq__ctab_t_params_write,
    .payload_size = amq__ctab_t_payload_size,
    .payload_write = amq__ctab_t_payload_write,
    .load = t_load,
};
