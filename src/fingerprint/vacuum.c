/*
 * vacuum.c — the vacuum filter (Wang, Zhou, Shi, Qian, "Vacuum filters:
 * more space-efficient and faster replacement for Bloom and cuckoo
 * filters", PVLDB 13(2), 2019).
 *
 * A cuckoo filter whose alternate bucket is i xor delta(fp) needs delta to
 * range over the whole table, so the table must be a power of two and a
 * filter sized for n keys is up to twice as large as n / (4 · 0.95)
 * buckets (the paper's comparison; our cuckoo filter now avoids this with
 * the sum form, cuckoo.c). The vacuum filter keeps delta below a chunk
 * size L (a power of two): both buckets of a key lie in the same aligned
 * chunk of L buckets, and the table only needs to be a multiple of L.
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
 * Choosing the ranges: the largest range L0 is the smallest power of two
 * (at least 8) whose chunks, at the design load α = AMQ__CT_VACUUM_LOAD
 * (0.94), pass chunk_fits: the fullest of c = m / L0 chunks, about
 * μ + sqrt(μ) (sqrt(2 ln c) + 1) keys for μ = 4 L0 α, stays within
 * CHUNK_FILL (0.955) of its 4 L0 slots; the other ranges are L0 / 4^j, at
 * least 8 (ranges_for). Derivation, and the first-failure loads that check
 * it: docs/structures.md §"Vacuum: alternate ranges".
 *
 * Everything else — fingerprints, buckets, the eviction walk with undo, the
 * certified bound (which depends only on m and f), growth by chaining — is
 * the table in cuckoo.c. A table of one chunk (L0 = m) is a power of two,
 * as in the paper; the vacuum filter always uses the xor form, so its
 * frames never look like a cuckoo filter's (whose ranges are the whole
 * table). A growing vacuum filter appends the table this file builds for
 * twice the newest's buckets.
 *
 * Table size. Rounding up to whole chunks lowers the load, so a chunk
 * smaller than the one selected at the design load may fit at the rounded
 * table's load and waste less; we try every chunk size and keep the
 * smallest table (the paper rounds with the selected chunk only).
 *
 * Now that a cuckoo table can have any even size, the vacuum filter no
 * longer saves space over the default cuckoo filter (it rounds up to whole
 * chunks, 1-2% at 10^6 keys; the paper compared against power-of-two
 * tables). What it keeps is locality: every key's two buckets lie in one
 * chunk, three quarters of them within L1 = L0 / 4 (docs/structures.md ("Cuckoo family")
 * measures both).
 *
 * Failure modes: as cuckoo.c (AMQ_ERR_FULL leaves the table unchanged).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fingerprint/cuckoo_table.h"

#define MIN_RANGE 8
#define MIN_CHUNK 4096 /* smallest chunk a table from a capacity gets */
#define CHUNK_FILL 0.955

static bool is_pow2(uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }

/* Whether chunks of L buckets in a table of m hold keys at `load`: the
 * fullest of the m / L chunks stays below CHUNK_FILL (the bound above). */
static bool chunk_fits(uint64_t m, uint64_t L, double load) {
    double c = (double)m / (double)L, mu = 4.0 * (double)L * load;
    double z = sqrt(2.0 * log(c)) + 1.0;
    return mu + z * sqrt(mu) <= CHUNK_FILL * 4.0 * (double)L;
}

/* Smallest chunk for keys at `load` in m buckets; >= m means "one chunk". */
static uint64_t select_range(uint64_t m, double load) {
    uint64_t L = MIN_RANGE;
    for (; L < m; L <<= 1)
        if (chunk_fits(m, L, load))
            break;
    return L;
}

/* The four ranges of a table whose largest range is L0: each a quarter of
 * the one before, at least MIN_RANGE (or L0 itself when smaller). */
static void ranges_for(uint64_t L0, uint32_t range[4]) {
    range[0] = (uint32_t)L0;
    for (unsigned j = 1; j < 4; j++) {
        uint64_t r = range[j - 1] >> 2;
        range[j] = r >= MIN_RANGE
                       ? (uint32_t)r
                       : (range[j - 1] < MIN_RANGE ? range[j - 1] : MIN_RANGE);
    }
}

static uint64_t next_pow2(uint64_t x) {
    uint64_t p = 2;
    while (p < x)
        p <<= 1;
    return p;
}

/* Table of at least m0 buckets made of whole chunks of L buckets. */
static amq_status chunked(uint64_t m0, uint64_t L, uint64_t *m,
                          uint32_t range[4]) {
    if (L > AMQ_CUCKOO_MAX_BUCKETS)
        return AMQ_ERR_OVERFLOW;
    uint64_t chunks = (m0 + L - 1) / L;
    if (chunks > AMQ_CUCKOO_MAX_BUCKETS / L)
        return AMQ_ERR_OVERFLOW;
    *m = chunks * L;
    ranges_for(L, range);
    return AMQ_OK;
}

/* The smallest table of at least m0 buckets made of chunks that hold the
 * keys at the rounded table's load: every power of two from MIN_CHUNK up
 * is tried (ties go to the larger chunk), and one power-of-two chunk,
 * which always holds them, is the fallback. MIN_CHUNK keeps the smallest
 * range (L0 / 64) at 64 buckets or more: the criterion above speaks of L0
 * only, and a chunk of 8 buckets holding half of the keys (L0 = 128) was
 * seen to close up — 32 keys whose both buckets lie in it — at load 0.65,
 * a tail the Gaussian approximation misses at such small means. */
static amq_status vacuum_auto(uint64_t m0, uint64_t *m, uint32_t range[4]) {
    uint64_t best = 0, bestL = 0, L;
    for (L = MIN_CHUNK; L < m0 && L <= AMQ_CUCKOO_MAX_BUCKETS; L <<= 1) {
        uint64_t mL = (m0 + L - 1) / L * L;
        double load = AMQ__CT_VACUUM_LOAD * (double)m0 / (double)mL;
        if (mL <= AMQ_CUCKOO_MAX_BUCKETS && chunk_fits(mL, L, load) &&
            (best == 0 || mL <= best)) {
            best = mL;
            bestL = L;
        }
    }
    uint64_t whole = next_pow2(m0);
    if (best == 0 || whole <= best)
        return chunked(m0, whole, m, range);
    return chunked(m0, bestL, m, range);
}

/* Table of at least m0 buckets made of whole chunks (chunk: 0 = choose). */
static amq_status vacuum_shape(uint64_t m0, uint64_t chunk, uint64_t *m,
                               uint32_t range[4]) {
    if (chunk == 0)
        return vacuum_auto(m0, m, range);
    return chunked(m0, chunk, m, range);
}

/* The ranges must be those ranges_for derives from the largest (the
 * common check has made range[0] a power of two dividing buckets, unless
 * all four are the whole table, which is a cuckoo table's shape). */
static bool vacuum_ranges_ok(uint64_t buckets, const uint32_t range[4]) {
    uint32_t want[4];
    if (!is_pow2(range[0]) || buckets % range[0] != 0)
        return false;
    ranges_for(range[0], want);
    return memcmp(want, range, sizeof want) == 0;
}

static amq_status kind_shape(uint64_t m0, uint64_t *buckets,
                             uint32_t range[4]) {
    return vacuum_shape(m0, 0, buckets, range);
}

const amq__ctab_kind amq__ctab_vacuum_kind = {.name = "vacuum",
                                              .load = AMQ__CT_VACUUM_LOAD,
                                              .chunked = true,
                                              .ranges_ok = vacuum_ranges_ok,
                                              .shape = kind_shape};

/* The ranges of an explicit table of m buckets: from the given chunk (a
 * power of two >= 2 dividing m), or the selected one, which must divide m
 * (a table of one chunk must be a power of two). */
static amq_status explicit_ranges(uint64_t m, uint64_t chunk,
                                  uint32_t range[4]) {
    if (m < 2 || m > AMQ_CUCKOO_MAX_BUCKETS)
        return AMQ_ERR_INVALID;
    if (chunk == 0) {
        chunk = select_range(m, AMQ__CT_VACUUM_LOAD);
        if (chunk >= m)
            chunk = m;
    }
    if (!is_pow2(chunk) || chunk < 2 || m % chunk != 0)
        return AMQ_ERR_INVALID;
    ranges_for(chunk, range);
    return AMQ_OK;
}

/* ---- the generic interface ------------------------------------------------ */

static amq_status spec_shape(amq__spec *spec, uint64_t capacity, uint64_t *m,
                             uint32_t range[4], amq_diag *diag) {
    uint64_t chunk = 0, m0;
    bool has_m;
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "chunk", 2, AMQ_CUCKOO_MAX_BUCKETS,
                                    &chunk, NULL, diag));
    if (chunk != 0 && !is_pow2(chunk))
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "vacuum chunk=%llu is not a "
                         "power of two",
                         (unsigned long long)chunk);
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "buckets", 2, AMQ_CUCKOO_MAX_BUCKETS,
                                    m, &has_m, diag));
    if (has_m) {
        if (explicit_ranges(*m, chunk, range) != AMQ_OK)
            return amq__diag(
                diag, AMQ_ERR_SPEC, 0,
                "vacuum buckets=%llu is "
                "not a multiple of chunk %llu",
                (unsigned long long)*m,
                (unsigned long long)(chunk ? chunk
                                           : select_range(
                                                 *m, AMQ__CT_VACUUM_LOAD)));
        return AMQ_OK;
    }
    if (capacity == 0)
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "vacuum needs a capacity, or buckets=N");
    amq_status st = amq__ctab_slots_for(capacity, AMQ__CT_VACUUM_LOAD, &m0);
    if (st == AMQ_OK)
        st = vacuum_shape(m0, chunk, m, range);
    if (st != AMQ_OK)
        return amq__diag(diag, st, 0, "capacity %llu: %s",
                         (unsigned long long)capacity, amq_strerror(st));
    return AMQ_OK;
}

static amq_status t_create(const amq__type *self, amq__spec *spec,
                           uint64_t capacity, double fpr,
                           const amq_options *opt, amq__obj **out,
                           amq_diag *diag) {
    uint64_t m = 0, max_bytes;
    uint32_t range[4];
    unsigned f, kicks, links = 1;
    amq_cuckoo *c = NULL;
    (void)self;
    AMQ_RETURN_IF_ERR(amq__ctab_spec_growth(spec, &links, &max_bytes, diag));
    AMQ_RETURN_IF_ERR(amq__ctab_spec_fp(spec, fpr, links > 1, &f, diag));
    AMQ_RETURN_IF_ERR(amq__ctab_spec_kicks(spec, &kicks, diag));
    AMQ_RETURN_IF_ERR(spec_shape(spec, capacity, &m, range, diag));
    AMQ_RETURN_IF_ERR(
        amq__ctab_new(&amq__ctab_vacuum_kind, m, f, range, kicks, opt, &c));
    AMQ_RETURN_IF_ERR(amq__ctab_apply_growth(c, links, max_bytes, diag));
    *out = &c->o;
    return AMQ_OK;
}

/* Shapes beside the defaults that reach the other kernels (test_kernels):
 * an odd width; the alternate-table kernel at 10 bits. */
static const char *const kernel_shapes[] = {"vacuum:fp=9",
                                            "vacuum:fp=10,buckets=65536", NULL};

const amq__type amq__type_vacuum = {
    .variant = &amq__ctab_vacuum_kind,
    .info = {.name = "vacuum",
             .type_id = AMQ__ID_vacuum,
             .caps = AMQ_CAP_REMOVE | AMQ_CAP_COUNT,
             .summary = "vacuum filter, cuckoo filter with chunked alternate "
                        "ranges (Wang et al. 2019), optional growth",
             .params = "fp=BITS (4-32, default ceil(log2(8/fpr))), "
                       "buckets=N (multiple of the chunk, instead of "
                       "capacity), chunk=L (largest "
                       "alternate range, a power of two), max_kicks=N "
                       "(default 500), grow=1 (as cuckoo), max_links=N, "
                       "max_bytes=B",
             .default_hash = AMQ_HASH_XXH3},
    .reads = 2,
    .reads_text = "2 (one chunk)",
    .kernel_shapes = kernel_shapes,
    .create = t_create,
    AMQ__CTAB_SLOTS};
