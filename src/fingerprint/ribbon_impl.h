/*
 * ribbon_impl.h — what the Ribbon files share: the layers, the object, a
 * key's equation, and the pieces each file takes from another.
 *
 *   ribbon.c        the layout, queries, the exact rate, shapes, the
 *                   object and the curve (its opening comment describes
 *                   the filter);
 *   ribbon_build.c  banding (ribbon_band.h, one template over the band
 *                   width), back-substitution, the layers, the build;
 *   ribbon_frame.c  the generic interface and the frames.
 */
#ifndef AMQ_SRC_FINGERPRINT_RIBBON_IMPL_H
#define AMQ_SRC_FINGERPRINT_RIBBON_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "amq/static.h"
#include "core/bits.h"
#include "core/obj.h"

#define RB_MAX_LAYERS 8
/* Batch queries: keys between a prefetch and its use (a power of 2). */
#define RB_AHEAD 16
#define RB_GROW_EVERY 8
/* Fewer keys than this: the layer is the last, a standard one. */
#define RB_BUMP_MIN 1024
/* Rows per key of a bumped layer (overloaded on purpose). More rows cost
 * empty rows but shorten banding: a key's elimination walks from its start
 * to the first free row, and that gap grows with the overload. At 10^6
 * keys: W = 64 at 0.97, ~20 steps per key, 0.15% empty rows; W = 128
 * (whose steps cost more) at 0.99, ~37 steps, 0.15% (47 steps at 0.97). */
#define RB_LOAD64 0.97
#define RB_LOAD128 0.99
/* The parameter version new filters are saved with (ribbon_frame.c). */
#define RB_VERSION 3
/* The curve's key count: rows per key as at n = 10^6, for standard
 * Ribbon from rb_overhead, for bumped Ribbon measured (all layers' rows
 * over keys, docs/structures.md, "Ribbon"). */
#define RB_CURVE_N 1000000
#define RB_CURVE_RHO64 1.0017
#define RB_CURVE_RHO128 1.0014
#define RB_MAX_BUCKET 1024
/* Largest bucket the build uses (the stack of one bucket's rows). */
#define RB_BUILD_BUCKET 256
#define RB_NO_ROW UINT64_MAX
/* Blocks per layer: keeps U in 32 bits (2.7e11 rows). */
#define RB_MAX_BLOCKS UINT64_C(0xffffffff)

typedef unsigned __int128 rb_u128;

/* Constants deriving the coefficients and the fingerprint from the mixed
 * hash (odd, from splitmix64): the coefficients' multipliers (version 3)
 * or the values xored in before a second mix (versions 1 and 2). Part of
 * the file format: never edit. */
#define COEF_XOR 0x3c6ef372fe94f82bULL
#define COEF_XOR_HI 0x510e527fade682d1ULL
#define FP_MUL 0xa54ff53a5f1d36f1ULL
/* Inverses mod 2^64 of amq__mix64's multipliers (undo a seed on retry). */
#define UNMIX_MUL1 0x4f74430c22a54005ULL
#define UNMIX_MUL2 0x9cb4b2f8129337dbULL

typedef struct rb_layer {
    const uint64_t *sol;  /* blocks * r + upper words                  */
    const uint64_t *meta; /* 2-bit codes per bucket; NULL in the last  */
    uint64_t seed;
    uint64_t blocks; /* rows m = 64 blocks                        */
    uint64_t starts; /* m - W + 1                                 */
    uint64_t lower;  /* blocks - upper: blocks with r columns     */
    uint64_t words;  /* solution words                            */
    uint32_t upper;  /* U: the last U blocks store r + 1 columns  */
    bool coded;      /* has codes (every layer but the last)      */
} rb_layer;

struct amq_ribbon {
    amq__obj o; /* o.items: keys; o.table: every layer's solution and codes
                   (none for an empty filter) */
    rb_layer layer[RB_MAX_LAYERS];
    double fpr;
    uint32_t layers;
    uint32_t r;           /* columns in lower blocks                   */
    uint32_t bits64;      /* requested bits per key in 1/64 steps      */
    uint32_t band;        /* W: 64 or 128                              */
    uint32_t bucket_log2; /* bumped layers: 2^this starts per bucket   */
    uint32_t thr[4];      /* threshold per code: 0, t1, t2, B          */
    bool bump;            /* built as BuRR (else standard)             */
    uint32_t version;     /* parameters: 3 (new filters), 2 or 1       */
    bool fast;            /* query with POPCNT (not AMQ_OPT_SCALAR)    */
};

/* ---- a key's equation --------------------------------------------------- */

static inline uint64_t rb_mix(uint64_t x, uint64_t seed) {
    return amq__mix64(x + seed);
}

/* The inverse of amq__mix64 (each step of it is a bijection). */
static inline uint64_t rb_unmix(uint64_t x) {
    x ^= x >> 33;
    x *= UNMIX_MUL2;
    x ^= x >> 33;
    x *= UNMIX_MUL1;
    x ^= x >> 33;
    return x;
}

/* The coefficient row from the mixed hash x: v3 (version 3, every new
 * filter) takes the low word as x times an odd constant, and the high
 * word (W = 128) as that product with its top half folded down, times a
 * second one: one multiply per query at W = 64 instead of a second mix.
 * Keys that share a start share x's top bits, not its low ones, and each
 * bit of a product depends on every bit of x below it. Versions 1 and 2
 * mixed x again for each word (~10 instructions more on every query's
 * path). */
static inline uint64_t rb_coef_lo(uint64_t x, bool v3) {
    return (v3 ? x * COEF_XOR : amq__mix64(x ^ COEF_XOR)) | 1;
}
static inline uint64_t rb_coef_hi(uint64_t x, bool v3) {
    if (!v3)
        return amq__mix64(x ^ COEF_XOR_HI);
    uint64_t p = x * COEF_XOR;
    return (p ^ (p >> 32)) * COEF_XOR_HI;
}
static inline uint32_t rb_fp(uint64_t x) {
    return (uint32_t)((x * FP_MUL) >> 32);
}
static inline uint32_t rb_mask(uint32_t cols) {
    return (uint32_t)((UINT64_C(1) << cols) - 1);
}

/* Columns stored in block b, and where its words start. */
static inline uint32_t rb_cols(const rb_layer *l, uint32_t r, uint64_t b) {
    return r + (b >= l->lower);
}
static inline uint64_t rb_offset(const rb_layer *l, uint32_t r, uint64_t b) {
    return b * r + (b > l->lower ? b - l->lower : 0);
}

/* The bits of v that a shift left by sh pushes out of the word (sh < 64;
 * 0 for sh = 0, without a shift by 64). */
static inline uint64_t rb_spill(uint64_t v, unsigned sh) {
    return (v >> 1) >> (63 - sh);
}

static inline uint64_t rb_min_blocks(unsigned band) { return band / 64 + 1; }

static inline void rb_set_blocks(rb_layer *l, uint64_t blocks, unsigned band) {
    l->blocks = blocks;
    l->starts = blocks * 64 - band + 1;
}

static inline size_t rb_meta_words(const rb_layer *l, uint32_t bucket_log2) {
    uint64_t buckets = ((l->starts - 1) >> bucket_log2) + 1;
    return (size_t)((buckets + 31) / 32);
}

/* ---- retrieval (the static maplet) ------------------------------------------ */

/* Building a retrieval structure: a key's right-hand side is its value
 * instead of its fingerprint. h holds the keys of layer 0 (each hash
 * mixed with layer 0's seed, amq__rb_seed(0, 0)), sorted and distinct, with v
 * aligned: layer 0 bands them in that order and takes each value beside
 * its key; the few keys bumped to later layers find theirs by undoing
 * those layers' mixes (each a bijection) and searching h. */
typedef struct rb_values {
    const uint64_t *h;
    const uint32_t *v;
    size_t n;
} rb_values;

/* ---- across the files ------------------------------------------------------ */

/* ribbon.c */
uint64_t amq__rb_choose_upper(const amq_ribbon *f, const rb_layer *l,
                              double frac);
double amq__rb_rate(const amq_ribbon *f);
amq_status amq__rb_standard_blocks(size_t n, unsigned band, uint64_t *blocks);
amq_status amq__rb_bumped_blocks(size_t n, unsigned band, uint64_t *blocks);
uint64_t amq__rb_seed(uint32_t layer, unsigned attempt);
bool amq__rb_layout(amq_ribbon *f, size_t *words);
void amq__rb_point(amq_ribbon *f, const uint64_t *t);
amq_status amq__rb_new(const amq_ribbon *hdr, const amq_options *opt,
                       amq_ribbon **out);
amq_status amq__rb_attach(amq_ribbon *f, size_t words, const uint64_t *borrow);
void amq__rb_header(amq_ribbon *f, uint32_t bits64, unsigned band, bool bump);
double amq__rb_mixed_fpr(double b);
double amq__rb_bits_for(double fpr);
void amq__rb_curve_shape(unsigned band, bool bump, double *rho, double *mu);

/* ribbon_build.c: bits in 1/64 steps, 64..2048. */
amq_status amq__rb_build(const uint64_t *h, size_t n, uint32_t bits64,
                         unsigned band, bool bump, const amq_options *opt,
                         amq_ribbon **out);
/* A bumped Ribbon retrieval structure (W = 64) storing bits = 1..32 value
 * bits per key: vals->h layer-0 keys, sorted and distinct, vals->v their
 * values (only the low `bits` are stored). */
amq_status amq__rb_build_values(const rb_values *vals, unsigned bits,
                                const amq_options *opt, amq_ribbon **out);
/* A bumped Ribbon filter (W = 64) of bits64 and a retrieval structure of
 * `bits` value bits over the same keys, banded once (the filter's
 * columns plus `bits` at most 32): vals as for amq__rb_build_values; the
 * bytes amq__rb_build_mixed and amq__rb_build_values give. */
amq_status amq__rb_build_pair(const rb_values *vals, uint32_t bits64,
                              unsigned bits, const amq_options *opt,
                              amq_ribbon **member, amq_ribbon **values);
/* From layer 0's keys (each hash h as rb_mix(h, amq__rb_seed(0, 0))),
 * sorted and distinct: the filter amq__rb_build builds from their hashes
 * (the same bytes, without its sort). */
amq_status amq__rb_build_mixed(const uint64_t *keys, size_t n, uint32_t bits64,
                               unsigned band, bool bump, const amq_options *opt,
                               amq_ribbon **out);
/* ribbon.c: the value stored for h (arbitrary for a key not built in). */
uint32_t amq__rb_retrieve(const amq_ribbon *f, uint64_t h);
/* out[i] = amq__rb_retrieve(f, h[i]) where want is NULL or want[i] is not
 * 0, else 0; the lines of keys ahead are prefetched. */
void amq__rb_retrieve_batch(const amq_ribbon *f, const uint64_t *h,
                            const uint8_t *want, size_t n, uint32_t *out);
/* ribbon.c: the type's batch query, out[i] = the kernel's answer for h[i]
 * (each key's code and solution words prefetched RB_AHEAD keys before
 * they are read). */
void amq__rb_contains_batch(const amq__obj *o, const uint64_t *h, size_t n,
                            uint8_t *out);

#endif
