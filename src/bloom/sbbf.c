/*
 * sbbf.c — the split-block Bloom filter of Apache Parquet, bit for bit.
 *
 * Putze, Sanders and Singler (2007) made a Bloom filter cache-friendly by
 * sending each key to one block; Parquet's variant ("split block", after
 * Impala and Kudu; spec: parquet-format BloomFilter.md) splits a 256-bit
 * block into eight 32-bit words and sets exactly one bit in each, so a probe
 * is one 32-byte load, eight multiplies and one compare — one AVX2 register.
 *
 *   64-bit hash h = XXH64(key, seed 0) for Parquet-compatible byte keys
 *   ├── high 32 bits → block  = ((h >> 32) * B) >> 32      (multiply-shift)
 *   └── low 32 bits  x → word i gets bit (x * SALT[i]) >> 27, i = 0..7
 *
 *   block 0                              block 1              block B-1
 *   +----+----+----+----+----+----+----+----+----+-- ... --+----+----+
 *   | w0 | w1 | w2 | w3 | w4 | w5 | w6 | w7 | w0 | ...     | w6 | w7 |
 *   +----+----+----+----+----+----+----+----+----+-- ... --+----+----+
 *     32-bit little-endian words; the byte image is Parquet's bitset.
 *
 * Invariants: 1 <= B < 2^32 (the block index is computed in 64 bits from a
 * 32-bit half of the hash, as the spec does); the table is 64-byte aligned
 * when owned, 8-byte aligned when viewed in place; `items` counts adds.
 *
 * Folding: with multiply-shift, key y lands in floor(y B / 2^32) of B blocks
 * and in floor(y B / 2^33) = floor(old / 2) of B/2 blocks, so OR-ing blocks
 * 2j and 2j+1 gives exactly the filter of B/2 blocks built from the same
 * keys. That is why the spec indexes blocks this way instead of modulo.
 *
 * FPR: a block with i keys answers a stranger yes when each of its eight
 * words has the stranger's bit set, (1 - (1 - 1/32)^i)^8, averaged over the
 * Poisson load of a block (poisson.h): the expected rate of a filter of n
 * keys, the curve sizing uses (at 10.5 bits/key about 1%). fpr_bound() is
 * not that expectation but the rate of this very table, from its words'
 * popcounts (a filter's rate scatters around the expectation: by about
 * 1/sqrt(B) relative, more for keys that are not distinct).
 *
 * Failure modes: construction fails cleanly (bad arguments, overflow,
 * allocation); adds cannot fail. Views are read-only: the generic layer
 * refuses updates before they reach this file, and fold refuses a view.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define SBBF_X86 1
#endif

#include "bloom/sbbf.h"
#include "core/poisson.h"
#include "core/bits.h"
#include "core/mem.h"
#include "core/sbbf_core.h"
#include "core/tally.h"
#include "bloom/fill.h"
#include "type/type.h"

#define SBBF_WORDS 8
#define SBBF_BLOCK_BITS 256
#define SBBF_MAX_BLOCKS UINT64_C(0xffffffff)
/* Keys whose blocks are prefetched ahead of the one being tested: enough
 * misses in flight to cover DRAM latency plus a page walk, few enough to
 * fit the core's miss buffers. */
#define SBBF_AHEAD 24

struct amq_sbbf {
    amq__obj o;            /* o.items counts adds; o.table the blocks    */
    const uint32_t *words; /* what queries read                         */
    uint32_t *mut;         /* the same table when writable; NULL if view */
    uint64_t nblocks;
    bool concurrent;
    amq__tally *tally; /* concurrent mode: the adds counted by thread   */
    bool avx2;
};

/* ---- the mathematics ---------------------------------------------------- */

/* Probability that a block holding i keys has all eight of a stranger's
 * bits set. */
static double block_fpr(double i) {
    double unset = exp(i * log1p(-1.0 / 32.0)); /* one given bit still 0 */
    return pow(1.0 - unset, SBBF_WORDS);
}

/* FPR when blocks hold lambda keys on average. */
static double fpr_at_load(double lambda) {
    amq__pois w;
    double sum = 0.0;
    if (!(lambda > 0.0))
        return 0.0;
    if (lambda > AMQ__POIS_MAX_LAMBDA)
        return block_fpr(lambda);
    for (amq__pois_begin(&w, lambda); amq__pois_more(&w); amq__pois_next(&w))
        sum += w.p * block_fpr(w.i);
    return sum < 1.0 ? sum : 1.0;
}

double amq_sbbf_fpr(double bits_per_key) {
    if (!(bits_per_key > 0.0))
        return 1.0;
    return fpr_at_load(SBBF_BLOCK_BITS / bits_per_key);
}

/* Fewest blocks (< 2^32) meeting fpr at capacity keys; bisection on the
 * monotone curve. */
static amq_status blocks_for(uint64_t capacity, double fpr, uint64_t *out) {
    uint64_t lo = 1, hi = SBBF_MAX_BLOCKS;
    double n = (double)capacity;
    if (capacity == 0 || !(fpr > 0.0 && fpr < 1.0))
        return AMQ_ERR_INVALID;
    if (fpr_at_load(n / (double)hi) > fpr)
        return AMQ_ERR_OVERFLOW;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (fpr_at_load(n / (double)mid) <= fpr)
            hi = mid;
        else
            lo = mid + 1;
    }
    *out = lo;
    return AMQ_OK;
}

/* Smallest bits/key meeting fpr (continuous; for the allocation engine). */
static double bits_for(double fpr) {
    double lo = 1e-3, hi = 64.0;
    while (amq_sbbf_fpr(hi) > fpr && hi < 1e6)
        hi *= 2.0;
    for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
        double mid = 0.5 * (lo + hi);
        if (amq_sbbf_fpr(mid) <= fpr)
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

/* ---- one block, the portable reference --------------------------------- */

static inline uint32_t word_bit(uint32_t x, unsigned i) {
    return 1u << ((x * AMQ__SBBF_SALT[i]) >> 27);
}

static inline bool block_test(const uint32_t *blk, uint32_t x) {
    uint32_t miss = 0;
    for (unsigned i = 0; i < SBBF_WORDS; i++)
        miss |= word_bit(x, i) & ~blk[i];
    return miss == 0;
}

static inline void block_set(uint32_t *blk, uint32_t x) {
    for (unsigned i = 0; i < SBBF_WORDS; i++)
        blk[i] |= word_bit(x, i);
}

/* Concurrent adds: skip words whose bits are already set (no write, so no
 * cache-line ping-pong between threads on a mostly-full block). A locked
 * operation costs some twenty cycles even on a line the core holds, so on
 * a little-endian machine two words go in one: four at most a key. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
typedef uint64_t __attribute__((may_alias)) sbbf_pair;
static inline void block_set_atomic(uint32_t *blk, uint32_t x) {
    sbbf_pair *p = (sbbf_pair *)blk;
    for (unsigned i = 0; i < SBBF_WORDS / 2; i++) {
        uint64_t bits = word_bit(x, 2 * i) | (uint64_t)word_bit(x, 2 * i + 1)
                                                 << 32;
        if ((__atomic_load_n(&p[i], __ATOMIC_RELAXED) & bits) != bits)
            __atomic_fetch_or(&p[i], bits, __ATOMIC_RELAXED);
    }
}
#else
static inline void block_set_atomic(uint32_t *blk, uint32_t x) {
    for (unsigned i = 0; i < SBBF_WORDS; i++) {
        uint32_t bit = word_bit(x, i);
        if ((__atomic_load_n(&blk[i], __ATOMIC_RELAXED) & bit) == 0)
            __atomic_fetch_or(&blk[i], bit, __ATOMIC_RELAXED);
    }
}
#endif

static void batch_scalar(const amq_sbbf *b, const uint64_t *h, size_t n,
                         uint8_t *out) {
    const uint32_t *w = b->words;
    uint64_t nb = b->nblocks;
    size_t ahead = n < SBBF_AHEAD ? n : SBBF_AHEAD, i = 0;
    for (size_t j = 0; j < ahead; j++)
        amq__prefetch(w + SBBF_WORDS * amq__sbbf_block_of(h[j], nb));
    for (; i + SBBF_AHEAD < n; i++) {
        amq__prefetch(w +
                      SBBF_WORDS * amq__sbbf_block_of(h[i + SBBF_AHEAD], nb));
        out[i] = block_test(w + SBBF_WORDS * amq__sbbf_block_of(h[i], nb),
                            (uint32_t)h[i]);
    }
    for (; i < n; i++)
        out[i] = block_test(w + SBBF_WORDS * amq__sbbf_block_of(h[i], nb),
                            (uint32_t)h[i]);
}

/* ---- on a caller's table (sbbf_core.h) ----------------------------------- */

bool amq__sbbf_has(const uint32_t *words, uint64_t nblocks, uint64_t h) {
    return block_test(words + SBBF_WORDS * amq__sbbf_block_of(h, nblocks),
                      (uint32_t)h);
}

void amq__sbbf_put(uint32_t *words, uint64_t nblocks, uint64_t h) {
    block_set(words + SBBF_WORDS * amq__sbbf_block_of(h, nblocks), (uint32_t)h);
}

amq_status amq__sbbf_blocks_for(uint64_t capacity, double fpr,
                                uint64_t *nblocks) {
    return blocks_for(capacity, fpr, nblocks);
}

double amq__sbbf_fpr_at(uint64_t nblocks, uint64_t items) {
    return items == 0 ? 0.0 : fpr_at_load((double)items / (double)nblocks);
}

/* ---- one block, AVX2: the whole block is one register ------------------ */

/* (The block's mask and test are sbbf_core.h's, which the prefix filter's
 * query kernels inline too.) */

#ifdef SBBF_X86
__attribute__((target("avx2"))) static void block_set_avx2(uint32_t *blk,
                                                           uint32_t x) {
    __m256i block = _mm256_loadu_si256((const __m256i *)blk);
    _mm256_storeu_si256((__m256i *)blk,
                        _mm256_or_si256(block, amq__sbbf_mask256(x)));
}

/* The query kernel (amq__obj.contains) where the CPU has AVX2. */
__attribute__((target("avx2"))) static bool kernel_avx2(const amq__obj *o,
                                                        uint64_t h) {
    const amq_sbbf *b = (const amq_sbbf *)o;
    return amq__sbbf_test256(
        b->words + SBBF_WORDS * amq__sbbf_block_of(h, b->nblocks), (uint32_t)h);
}

__attribute__((target("avx2"))) static void batch_avx2(const amq_sbbf *b,
                                                       const uint64_t *h,
                                                       size_t n, uint8_t *out) {
    const uint32_t *w = b->words;
    uint64_t nb = b->nblocks;
    size_t ahead = n < SBBF_AHEAD ? n : SBBF_AHEAD, i = 0;
    for (size_t j = 0; j < ahead; j++)
        amq__prefetch(w + SBBF_WORDS * amq__sbbf_block_of(h[j], nb));
    for (; i + SBBF_AHEAD < n; i++) {
        amq__prefetch(w +
                      SBBF_WORDS * amq__sbbf_block_of(h[i + SBBF_AHEAD], nb));
        out[i] = amq__sbbf_test256(
            w + SBBF_WORDS * amq__sbbf_block_of(h[i], nb), (uint32_t)h[i]);
    }
    for (; i < n; i++)
        out[i] = amq__sbbf_test256(
            w + SBBF_WORDS * amq__sbbf_block_of(h[i], nb), (uint32_t)h[i]);
}
#endif

/* ---- construction ------------------------------------------------------- */

static bool kernel_scalar(const amq__obj *o, uint64_t h) {
    const amq_sbbf *b = (const amq_sbbf *)o;
    return block_test(b->words + SBBF_WORDS * amq__sbbf_block_of(h, b->nblocks),
                      (uint32_t)h);
}

static bool want_avx2(const amq_options *opt) {
#ifdef SBBF_X86
    if (opt != NULL && (opt->flags & AMQ_OPT_SCALAR))
        return false;
    return amq__cpu_has_avx2() != 0;
#else
    (void)opt;
    return false;
#endif
}

/* An sbbf of nblocks blocks: zeroed and owned, or borrowing `view`. */
static amq_status sbbf_alloc(uint64_t nblocks, const amq_options *opt,
                             const uint8_t *view, amq_sbbf **out) {
    amq_sbbf *b;
    size_t bytes;
    void *wr;
    if (nblocks == 0)
        return AMQ_ERR_INVALID;
    if (nblocks > SBBF_MAX_BLOCKS ||
        !amq__mul((size_t)nblocks, AMQ_SBBF_BLOCK_BYTES, &bytes))
        return AMQ_ERR_OVERFLOW;
    bool conc = opt != NULL && (opt->flags & AMQ_OPT_CONCURRENT);
    AMQ_RETURN_IF_ERR(amq__obj_new(sizeof *b + (conc ? AMQ__TALLY_ROOM : 0),
                                   opt, (void **)&b));
    b->nblocks = nblocks;
    b->concurrent = conc;
    b->tally = conc ? amq__tally_in(b + 1) : NULL;
    b->avx2 = want_avx2(opt);
    b->o.contains = kernel_scalar;
#ifdef SBBF_X86
    if (b->avx2)
        b->o.contains = kernel_avx2;
#endif
    amq_status st = amq__obj_table(&b->o, bytes, view, &wr);
    if (st != AMQ_OK) {
        amq__obj_free(&b->o);
        return st;
    }
    b->mut = wr;
    b->words = b->o.table;
    *out = b;
    return AMQ_OK;
}

/* Keys a bitset of unknown history probably holds, from the fill of each
 * word: a word with c of 32 bits set has seen about ln(1 - c/32) /
 * ln(1 - 1/32) keys; the eight words of a block are averaged. A full word
 * is counted as 31.5 bits set so the estimate stays finite. */
static uint64_t estimate_items(const amq_sbbf *b) {
    double total = 0.0, per_bit = log1p(-1.0 / 32.0);
    for (uint64_t blk = 0; blk < b->nblocks; blk++) {
        double sum = 0.0;
        for (unsigned i = 0; i < SBBF_WORDS; i++) {
            double c = __builtin_popcount(b->words[blk * SBBF_WORDS + i]);
            sum += log1p(-(c < 32.0 ? c : 31.5) / 32.0) / per_bit;
        }
        total += sum / SBBF_WORDS;
    }
    return (uint64_t)llround(total);
}

amq_status amq__sbbf_from_parquet(const void *bitset, size_t len,
                                  const amq_options *opt, amq__obj **out) {
    amq_sbbf *b;
    if (bitset == NULL || len == 0 || len % AMQ_SBBF_BLOCK_BYTES != 0 ||
        len / AMQ_SBBF_BLOCK_BYTES > SBBF_MAX_BLOCKS)
        return AMQ_ERR_INVALID;
    AMQ_RETURN_IF_ERR(sbbf_alloc(len / AMQ_SBBF_BLOCK_BYTES, opt, NULL, &b));
    memcpy(b->mut, bitset, len);
    b->o.items = estimate_items(b);
    *out = &b->o;
    return AMQ_OK;
}

const uint8_t *amq_sbbf_parquet_bitset(const amq_sbbf *b, size_t *len) {
    if (len != NULL)
        *len = b->o.table_bytes;
    return (const uint8_t *)b->words;
}

/* ---- updates and queries ------------------------------------------------ */

/* h's bits into its block blk, by the filter's mode and CPU. */
static inline void set_in(const amq_sbbf *b, uint32_t *blk, uint64_t h) {
    if (b->concurrent)
        block_set_atomic(blk, (uint32_t)h);
#ifdef SBBF_X86
    else if (b->avx2)
        block_set_avx2(blk, (uint32_t)h);
#endif
    else
        block_set(blk, (uint32_t)h);
}

static amq_status sbbf_add(amq__obj *o, uint64_t h) {
    amq_sbbf *b = (amq_sbbf *)o;
    set_in(b, b->mut + SBBF_WORDS * amq__sbbf_block_of(h, b->nblocks), h);
    amq__fill_count(b->tally, &b->o.items, 1);
    return AMQ_OK;
}

static inline uint64_t fill_block_of(const amq_sbbf *b, uint64_t h) {
    return amq__sbbf_block_of(h, b->nblocks);
}

AMQ__FILL(fill, amq_sbbf, uint32_t, SBBF_WORDS, fill_block_of, set_in)

/* The batch of o.contains' kind (sbbf_alloc). */
static void sbbf_batch(const amq__obj *o, const uint64_t *h, size_t n,
                       uint8_t *out) {
    const amq_sbbf *b = (const amq_sbbf *)o;
#ifdef SBBF_X86
    if (b->avx2) {
        batch_avx2(b, h, n, out);
        return;
    }
#endif
    batch_scalar(b, h, n, out);
}

/* The adds: the saved count and, in concurrent mode, the threads'. */
static uint64_t sbbf_items(const amq__obj *o) {
    const amq_sbbf *b = (const amq_sbbf *)o;
    return o->items + (b->tally != NULL ? amq__tally_sum(b->tally, 0) : 0);
}

/* dst op= src; the generic layer has checked the type, the hasher and that
 * dst owns its table. */
static amq_status sbbf_merge(amq__obj *dst_o, const amq__obj *src_o,
                             amq__merge_op op) {
    amq_sbbf *dst = (amq_sbbf *)dst_o;
    const amq_sbbf *src = (const amq_sbbf *)src_o;
    if (dst->nblocks != src->nblocks)
        return AMQ_ERR_INCOMPATIBLE;
    size_t nw = (size_t)dst->nblocks * SBBF_WORDS;
    amq__bits_merge(dst->mut, src->words, nw * sizeof *dst->mut,
                    op == AMQ__INTERSECT);
    dst->o.items = amq__merged_items(sbbf_items(dst_o), sbbf_items(src_o),
                                     op == AMQ__INTERSECT);
    if (dst->tally != NULL)
        amq__tally_clear(dst->tally, 0);
    return AMQ_OK;
}

amq_status amq_sbbf_fold(amq_sbbf *b) {
    uint64_t half;
    /* mut is NULL in a view: its table is the caller's read-only buffer */
    if (b == NULL || b->mut == NULL || b->nblocks < 2 || b->nblocks % 2 != 0)
        return AMQ_ERR_INVALID;
    half = b->nblocks / 2;
    /* Block j reads blocks 2j and 2j+1, both at or after j: a forward walk
     * never overwrites a block it still needs. */
    for (uint64_t j = 0; j < half; j++)
        for (unsigned i = 0; i < SBBF_WORDS; i++)
            b->mut[j * SBBF_WORDS + i] = b->mut[2 * j * SBBF_WORDS + i] |
                                         b->mut[(2 * j + 1) * SBBF_WORDS + i];
    /* The upper half stays allocated until the filter is freed; it is no
     * longer read, written or saved. */
    b->nblocks = half;
    b->o.table_bytes = (size_t)half * AMQ_SBBF_BLOCK_BYTES;
    return AMQ_OK;
}

uint64_t amq_sbbf_blocks(const amq_sbbf *b) { return b->nblocks; }

/* The rate of this very table. A stranger's hash picks block j for at
 * most ceil(2^32 / B) of the 2^32 values of its high half (multiply-shift)
 * and, from its low half x, bit (x * SALT_i) >> 27 of word i: the salts
 * are odd, so x -> x * SALT_i is a bijection and each of the 32 bits is hit
 * by exactly 2^27 values of x. So the stranger is reported with
 * probability at most
 *     ceil(2^32 / B) / 2^32 * sum_j prod_i popcount(w_ji) / 32,
 * exactly for B a power of two. The sum is exact in integers (a block's
 * product is at most 32^8 = 2^40, the sum below 2^72). O(B). */
static double bound_of(const uint8_t *bytes, uint64_t nblocks) {
    unsigned __int128 sum = 0;
    for (uint64_t j = 0; j < nblocks; j++) {
        uint32_t w[SBBF_WORDS];
        uint64_t prod = 1;
        memcpy(w, bytes + j * AMQ_SBBF_BLOCK_BYTES, sizeof w);
        for (unsigned i = 0; i < SBBF_WORDS; i++)
            prod *= amq__popcount64(w[i]);
        sum += prod;
    }
    double per_hash = ceil(ldexp(1.0, 32) / (double)nblocks);
    double rate = (double)sum * per_hash * ldexp(1.0, -32 - 40);
    return rate < 1.0 ? rate : 1.0;
}

static double sbbf_bound(const amq__obj *o) {
    const amq_sbbf *b = (const amq_sbbf *)o;
    return bound_of((const uint8_t *)b->words, b->nblocks);
}

/* ---- a bitset in place -------------------------------------------------- */

/* The block count of a Parquet bitset of len bytes; 0 when it is not one. */
static uint64_t bitset_blocks(const void *bitset, size_t len) {
    if (bitset == NULL || len == 0 || len % AMQ_SBBF_BLOCK_BYTES != 0 ||
        len / AMQ_SBBF_BLOCK_BYTES >= (UINT64_C(1) << 32))
        return 0;
    return len / AMQ_SBBF_BLOCK_BYTES;
}

bool amq_sbbf_parquet_contains(const void *bitset, size_t len, uint64_t hash) {
    uint64_t nb = bitset_blocks(bitset, len);
    uint32_t w[SBBF_WORDS];
    if (nb == 0)
        return true;
    memcpy(w,
           (const uint8_t *)bitset +
               AMQ_SBBF_BLOCK_BYTES * amq__sbbf_block_of(hash, nb),
           sizeof w);
    return block_test(w, (uint32_t)hash);
}

double amq_sbbf_parquet_bound(const void *bitset, size_t len) {
    uint64_t nb = bitset_blocks(bitset, len);
    return nb == 0 ? 1.0 : bound_of(bitset, nb);
}

/* ---- the generic interface --------------------------------------------- */

static uint64_t round_pow2(uint64_t x) {
    uint64_t p = 1;
    while (p < x)
        p <<= 1;
    return p;
}

static amq_status t_create(const amq__type *self, amq__spec *spec,
                           uint64_t capacity, double fpr,
                           const amq_options *opt, amq__obj **out,
                           amq_diag *diag) {
    uint64_t blocks = 0, pow2 = 0;
    bool explicit_blocks;
    (void)self;
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "blocks", 1, SBBF_MAX_BLOCKS, &blocks,
                                    &explicit_blocks, diag));
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "pow2", 0, 1, &pow2, NULL, diag));
    if (!explicit_blocks) {
        if (capacity == 0)
            return amq__diag(diag, AMQ_ERR_SPEC, 0,
                             "sbbf needs a capacity and fpr, or blocks=N");
        amq_status st = blocks_for(capacity, fpr, &blocks);
        if (st != AMQ_OK)
            return amq__diag(diag, st, 0,
                             "sbbf cannot meet fpr %g for %llu keys with "
                             "fewer than 2^32 blocks",
                             fpr, (unsigned long long)capacity);
    }
    if (pow2) {
        blocks = round_pow2(blocks);
        if (blocks > SBBF_MAX_BLOCKS)
            return amq__diag(diag, AMQ_ERR_OVERFLOW, 0,
                             "sbbf: a power-of-two block count would reach "
                             "2^32");
    }
    amq_sbbf *b;
    AMQ_RETURN_IF_ERR(sbbf_alloc(blocks, opt, NULL, &b));
    *out = &b->o;
    return AMQ_OK;
}

static size_t t_describe(const amq__obj *o, char *buf, size_t cap) {
    return amq__describe(buf, cap, "blocks=%llu",
                         (unsigned long long)((const amq_sbbf *)o)->nblocks);
}

static amq_status t_curve(const amq__type *self, amq__spec *spec, double x,
                          bool inverse, double *out, amq_diag *diag) {
    (void)self, (void)spec, (void)diag;
    *out = inverse ? bits_for(x) : amq_sbbf_fpr(x);
    return AMQ_OK;
}

/* params: blocks u64 | items u64 | reserved u64 (0) */
static void t_params_write(const amq__obj *o, amq__wr *w) {
    amq__wr_u64(w, ((const amq_sbbf *)o)->nblocks);
    amq__wr_u64(w, sbbf_items(o));
    amq__wr_u64(w, 0);
}

static amq_status t_load(const amq__type *self, amq__rd *r,
                         const uint8_t *payload, size_t len, bool view,
                         const amq_options *opt, amq__obj **out) {
    uint64_t blocks, items;
    amq_sbbf *b;
    (void)self;
    AMQ_RETURN_IF_ERR(amq__rd_expect(r, 24));
    size_t at_blocks = amq__rd_u64(r, &blocks);
    amq__rd_u64(r, &items);
    AMQ_RETURN_IF_ERR(amq__rd_zero64(r));
    if (blocks == 0 || blocks > SBBF_MAX_BLOCKS ||
        len % AMQ_SBBF_BLOCK_BYTES != 0 || len / AMQ_SBBF_BLOCK_BYTES != blocks)
        return amq__rd_bad(r, at_blocks,
                           "block count %llu does not match a "
                           "%zu-byte payload",
                           (unsigned long long)blocks, len);
    AMQ_RETURN_IF_ERR(sbbf_alloc(blocks, opt, view ? payload : NULL, &b));
    if (!view)
        memcpy(b->mut, payload, len);
    b->o.items = items;
    *out = &b->o;
    return AMQ_OK;
}

const amq__type amq__type_sbbf = {
    .info = {.name = "sbbf",
             .type_id = AMQ__ID_sbbf,
             .caps = AMQ_CAP_UNION | AMQ_CAP_INTERSECT | AMQ_CAP_CONCURRENT,
             .summary = "split-block Bloom filter, Apache Parquet layout",
             .params = "blocks=N (32-byte blocks, explicit size instead of "
                       "capacity/fpr), pow2=1 (round blocks up to a power "
                       "of two, as Parquet writers do)",
             .default_hash = AMQ_HASH_XXH64},
    .reads = 1,
    .reads_text = "1",
    .kernel_shapes = amq__defaults_only,
    .create = t_create,
    .load = t_load,
    .add = sbbf_add,
    .add_batch = fill_add_batch, /* fill.h: by block, on the build's threads */
    .contains = kernel_scalar,
    .contains_batch = sbbf_batch,
    .merge = sbbf_merge,
    .fpr_bound = sbbf_bound,
    .items = sbbf_items,
    .describe = t_describe,
    .curve = t_curve,
    .params_write = t_params_write,
};
