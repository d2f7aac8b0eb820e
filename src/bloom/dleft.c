/*
 * dleft.c — the d-left counting Bloom filter (Bonomi, Mitzenmacher,
 * Panigrahy, Singh & Varghese 2006, "An improved construction for counting
 * Bloom filters", ESA). A deletable filter built from d-left hashing instead
 * of counters: it stores short fingerprints in a balanced hash table and
 * needs about half the space of a counting Bloom filter for the same rate.
 *
 *   subtable 0              subtable 1                subtable d-1
 *   +------+------+-- ---+  +------+------+-- ---+     +------+-- ---+
 *   |bucket|bucket|  ... |  |bucket|bucket|  ... | ... |bucket|  ... |
 *   +--+---+------+-- ---+  +------+--+---+-- ---+     +------+-- ---+
 *      |                              |
 *      v  c cells of (r + cb) bits, packed in one bit array:
 *   +-----------+-----------+-----------+-----------+
 *   | rem | cnt | rem | cnt |  0  |  0  |  0  |  0  |   empty cell: all zero
 *   +-----------+-----------+-----------+-----------+
 *
 * Hashing, the paper's trick. The key's 64-bit hash gives a true fingerprint
 * f = (q, s), q = reduce(h, B) in [B], s = h mod 2^r. Subtable i sees f
 * through a permutation P_i of [B] x [2^r], P_i(f) = (bucket b_i, remainder
 * r_i). The frame names one of two (mix: the MurmurHash3 finaliser; T, U,
 * V and K_i fixed, part of the format):
 *   mapping 1 (new filters): the remainder kept, the bucket moved by an
 *   offset of it, one mix per key:
 *     b = (q + reduce(mix(s ^ T) K_i, B)) mod B,  r = s
 *   mapping 0 (frames before it): three rounds, each invertible given the
 *   other half, 3 d mixes per key:
 *     s1 = s  ^ (mix(q  ^ T_i) mod 2^r)
 *     b  = (q + reduce(mix(s1 ^ U_i), B)) mod B
 *     r  = s1 ^ (mix(b  ^ V_i) mod 2^r)
 * Because P_i is a bijection, a cell holding remainder r in bucket b of
 * subtable i can only have come from the one fingerprint f with
 * P_i(f) = (b, r). Hence:
 *   - insert: if any of the d candidate cells already holds f, its counter
 *     goes up; otherwise f takes an empty cell in the least loaded of its d
 *     buckets (leftmost on ties). Each f is stored at most once;
 *   - remove: the one cell holding f is decremented (emptied at zero), so a
 *     delete never touches another fingerprint — unlike the naive scheme with
 *     d independent hashes, where x could erase y's copy of a shared
 *     remainder;
 *   - false positives: a key is reported iff its fingerprint is one of the
 *     F stored ones, so fpr_bound() = F (1/(B 2^r) + 2^-63), about
 *     d * load * 2^-r (derivation: docs/structures.md §dleft, "Bound,
 *     derived").
 *
 * Counters: cb bits per cell (2 in the paper) count keys sharing one
 * fingerprint (duplicates, or fingerprint collisions). A counter at
 * 2^cb - 1 is sticky, as in the counting filter: the fingerprint then stays
 * forever (no false negative, a lasting false positive).
 *
 * Lookups test a bucket a word at a time (see "word-parallel buckets"
 * below); the cell-by-cell scan stays as the reference (AMQ_OPT_SCALAR)
 * and for the few keys the word test leaves to it.
 *
 * Shape. The paper's d = 4 subtables of 8 cells; the default here is d = 2
 * of 16. The product d c, hence B, r, the bytes and the bound, is the same
 * (one key's fingerprint set does not depend on d), but a query reads two
 * buckets instead of four: about 2.8 cache lines (a 28-byte bucket crosses
 * a line 42% of the time) against 4.8, and a one-key query is lines-bound.
 * Two choices over buckets this large still balance: the first refusal
 * came at 1.17x capacity against 1.19x for d = 4 (docs/structures.md).
 *
 * Invariants: an empty cell is all zero bits; an occupied cell has a nonzero
 * counter; no bucket holds a remainder twice; `occupied` is the number of
 * occupied cells; bits past the last cell are zero.
 *
 * Failure modes: add returns AMQ_ERR_FULL, changing nothing, when f is new
 * and all d buckets are full (at the default 3/4 load d-left hashing makes
 * that rare; bucket overflow is the paper's "overflow" event). Removing a
 * never-inserted key that is a false positive decrements a stranger's
 * fingerprint — the counting filter's hazard, at this structure's lower rate.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "amq/counting.h"
#include "core/bits.h"
#include "core/mem.h"
#include "type/type.h"

#define DL_MAX_D 8
#define DL_MAX_CELLS 32
#define DL_MAX_RBITS 32
#define DL_MAX_CBITS 8
#define DL_MAX_BUCKETS (UINT64_C(1) << 32)
#define DL_MAP_ROUNDS 0 /* three rounds per subtable (frames before map=1) */
#define DL_MAP_OFFSET 1 /* one mix per key, an offset per subtable */
#define DL_DEFAULT_D 2
#define DL_DEFAULT_CELLS 16
#define DL_DEFAULT_CBITS 2
#define DL_LOAD 0.75 /* design fill of a bucket at capacity */
#define DL_BATCH 16
#define DL_PARAMS 40
/* Round salts (part of the format): odd constants times (i + 1). */
#define DL_SALT_T 0x9e3779b97f4a7c15ULL
#define DL_SALT_U 0xd1b54a32d192ed03ULL
#define DL_SALT_V 0x8cb92ba72f3d8dd7ULL

/* The bucket test on 64-bit words (see "word-parallel buckets"): a bucket
 * of c cells is read as `groups` words of g cells each (the last one may
 * hold fewer), every word one unaligned 8-byte load. */
typedef struct dl_swar {
    uint64_t rep;     /* bit cbits of each of g cells: rem * rep = pattern */
    uint64_t rl;      /* remainder bits but the top one, per cell */
    uint64_t hb;      /* the top bit of each of g cells */
    uint64_t hb_last; /* the same for the last word's cells */
    uint64_t nhb, nhb_last; /* ~hb, ~hb_last */
    uint64_t cm, cb;        /* counter bits; bit cbits, per cell */
    uint64_t bbits;         /* bits per bucket */
    uint64_t lim; /* global buckets below this are read by word loads */
    unsigned g, groups, gbits; /* cells a word, words a bucket, g * cw */
    bool aligned; /* bbits and gbits whole bytes: words start on bytes */
    uint64_t sub_off[DL_MAX_D]; /* aligned: subtable i's first byte */
    uint32_t inv_cw; /* ceil(2^32 / cw): bit position to cell index */
} dl_swar;

struct amq_dleft {
    amq__obj o; /* o.items counts adds minus removes; o.table */
    uint64_t *words;
    size_t nwords;
    uint64_t buckets;                    /* B, per subtable */
    unsigned d, cells, rbits, cbits, cw; /* cw = rbits + cbits */
    uint64_t rmask, cmax;
    uint64_t occupied;
    unsigned map; /* DL_MAP_ROUNDS or DL_MAP_OFFSET (the frame keeps it) */
    bool scalar;  /* AMQ_OPT_SCALAR: the cell-by-cell reference only */
    dl_swar sw;   /* the word-parallel bucket test's constants */
    uint64_t mul[DL_MAX_D]; /* offset mapping: K_i = mix(U (i + 1)) | 1 */
};

/* Where a key may live: global bucket index and remainder per subtable. */
typedef struct dl_loc {
    uint64_t bucket[DL_MAX_D];
    uint64_t rem[DL_MAX_D];
} dl_loc;

/* ---- bit-packed cells --------------------------------------------------- */

static uint64_t get_bits(const uint64_t *w, uint64_t off, unsigned n) {
    uint64_t i = off >> 6, v;
    unsigned sh = (unsigned)(off & 63);
    v = w[i] >> sh;
    if (sh + n > 64)
        v |= w[i + 1] << (64 - sh);
    return v & ((UINT64_C(1) << n) - 1);
}

static void set_bits(uint64_t *w, uint64_t off, unsigned n, uint64_t v) {
    uint64_t i = off >> 6, mask = (UINT64_C(1) << n) - 1;
    unsigned sh = (unsigned)(off & 63);
    w[i] = (w[i] & ~(mask << sh)) | (v << sh);
    if (sh + n > 64) {
        unsigned done = 64 - sh;
        w[i + 1] = (w[i + 1] & ~(mask >> done)) | (v >> done);
    }
}

static uint64_t cell_off(const amq_dleft *f, uint64_t bucket, unsigned j) {
    return (bucket * f->cells + j) * f->cw;
}
/* A cell plus its bit offset within a byte spans at most 40 + 7 bits, so one
 * unaligned little-endian 8-byte load holds it, except within 8 bytes of the
 * table's end (the word-wise path then). */
static uint64_t cell_get(const amq_dleft *f, uint64_t bucket, unsigned j) {
    uint64_t off = cell_off(f, bucket, j), v;
    size_t byte = (size_t)(off >> 3);
    if (byte + 8 <= f->nwords * 8) {
        memcpy(&v, (const uint8_t *)f->words + byte, 8);
        return (v >> (off & 7)) & ((UINT64_C(1) << f->cw) - 1);
    }
    return get_bits(f->words, off, f->cw);
}
static void cell_set(amq_dleft *f, uint64_t bucket, unsigned j, uint64_t v) {
    set_bits(f->words, cell_off(f, bucket, j), f->cw, v);
}

/* ---- hashing: fingerprint and the d permutations ------------------------ */

/* Mapping 0: three rounds per subtable (the essay above). */
static void locate_rounds(const amq_dleft *f, uint64_t h, dl_loc *loc) {
    uint64_t q = amq__reduce64(h, f->buckets), s = h & f->rmask;
    for (unsigned i = 0; i < f->d; i++) {
        uint64_t salt = (uint64_t)(i + 1);
        uint64_t s1 = s ^ (amq__mix64(q ^ (DL_SALT_T * salt)) & f->rmask);
        uint64_t b =
            q + amq__reduce64(amq__mix64(s1 ^ (DL_SALT_U * salt)), f->buckets);
        if (b >= f->buckets)
            b -= f->buckets;
        loc->rem[i] = s1 ^ (amq__mix64(b ^ (DL_SALT_V * salt)) & f->rmask);
        loc->bucket[i] = (uint64_t)i * f->buckets + b;
    }
}

/* Mapping 1: P_i(q, s) = ((q + o_i(s)) mod B, s), o_i(s) =
 * reduce(mix(s ^ T) * K_i, B), K_i = mix(U (i + 1)) | 1 (multipliers with
 * no small-integer relation, so the offsets of two subtables are not
 * multiples of each other): one round, the remainder kept. It is a
 * bijection for any o_i (q = b - o_i(r) mod B), which is all the deletion
 * argument needs; one mix per key instead of 3 d. */
static inline uint64_t offset_mix(uint64_t s) {
    return amq__mix64(s ^ DL_SALT_T);
}

static inline uint64_t offset_bucket(const amq_dleft *f, uint64_t q, uint64_t m,
                                     unsigned i) {
    uint64_t b = q + amq__reduce64(m * f->mul[i], f->buckets);
    b = b >= f->buckets ? b - f->buckets : b;
    return (uint64_t)i * f->buckets + b;
}

static void locate_offset(const amq_dleft *f, uint64_t h, dl_loc *loc) {
    uint64_t q = amq__reduce64(h, f->buckets), s = h & f->rmask;
    uint64_t m = offset_mix(s);
    for (unsigned i = 0; i < f->d; i++) {
        loc->rem[i] = s;
        loc->bucket[i] = offset_bucket(f, q, m, i);
    }
}

static void locate(const amq_dleft *f, uint64_t h, dl_loc *loc) {
    if (f->map == DL_MAP_OFFSET)
        locate_offset(f, h, loc);
    else
        locate_rounds(f, h, loc);
}

/* ---- the reference: cell by cell ---------------------------------------- */

/* Scan one bucket for remainder rem: the cell index if present, else -1;
 * *load gets the occupied cells and *empty the first empty cell. */
static int scan_ref(const amq_dleft *f, uint64_t bucket, uint64_t rem,
                    unsigned *load, int *empty) {
    *load = 0;
    *empty = -1;
    for (unsigned j = 0; j < f->cells; j++) {
        uint64_t c = cell_get(f, bucket, j);
        if ((c & f->cmax) == 0) {
            if (*empty < 0)
                *empty = (int)j;
            continue;
        }
        if ((c >> f->cbits) == rem)
            return (int)j;
        (*load)++;
    }
    return -1;
}

/* Whether a bucket holds remainder rem: no early exit and no data-dependent
 * branch, since a lookup's cells are random (a miss checks every cell). */
static bool bucket_has(const amq_dleft *f, uint64_t bucket, uint64_t rem) {
    unsigned hit = 0;
    for (unsigned j = 0; j < f->cells; j++) {
        uint64_t c = cell_get(f, bucket, j);
        hit |= ((c >> f->cbits) == rem) & ((c & f->cmax) != 0);
    }
    return hit != 0;
}

static bool lookup_ref(const amq_dleft *f, const dl_loc *loc) {
    unsigned hit = 0;
    for (unsigned i = 0; i < f->d; i++)
        hit |= bucket_has(f, loc->bucket[i], loc->rem[i]);
    return hit != 0;
}

static bool contains_ref(const amq__obj *o, uint64_t h) {
    const amq_dleft *f = (const amq_dleft *)o;
    dl_loc loc;
    locate(f, h, &loc);
    return lookup_ref(f, &loc);
}

/* ---- word-parallel buckets ---------------------------------------------- */

/* A word of g cells, cell j at bits [j cw, (j + 1) cw), a cell being
 * rem << cbits | counter. With Y = word ^ (rem * rep), cell j holds rem
 * iff its remainder bits of Y are zero. Adding rl (the remainder bits but
 * the top one) to Y & rl carries into the top bit iff those bits are not
 * all zero, and never out of the cell, so
 *     nz = (((Y & rl) + rl) | Y) & hb
 * has cell j's top bit set iff cell j does not hold rem. An empty cell is
 * all zeros, so for rem != 0 it never matches: a query with rem == 0 (one
 * key in 2^r) takes the reference path. Likewise ((word & cm) + cm) & cb
 * has bit cbits of every occupied cell. */

static inline uint64_t word_at(const amq_dleft *f, uint64_t bit) {
    uint64_t v;
    memcpy(&v, (const uint8_t *)f->words + (bit >> 3), 8);
    return v >> (bit & 7);
}

/* All ones iff no cell of the word y = cells ^ pattern holds the pattern's
 * remainder (the cells beyond the word's own are set by nhb = ~hb). */
static inline uint64_t word_miss(const dl_swar *w, uint64_t y, uint64_t nhb) {
    return (((y & w->rl) + w->rl) | y) | nhb;
}

/* All ones iff the bucket (below sw.lim) lacks rem != 0 (pat = rem rep).
 * `aligned`: every word starts on a byte (sw.aligned), so no shift; both
 * it and groups are constants in the kernels below. */
static inline uint64_t bucket_miss(const amq_dleft *f, uint64_t bucket,
                                   uint64_t pat, unsigned groups,
                                   bool aligned) {
    const dl_swar *w = &f->sw;
    const uint8_t *p = (const uint8_t *)f->words;
    uint64_t bit = bucket * w->bbits, miss = ~UINT64_C(0);
    for (unsigned k = 0; k < groups; k++, bit += w->gbits) {
        uint64_t x, nhb = k + 1 == groups ? w->nhb_last : w->nhb;
        if (aligned)
            memcpy(&x, p + (bit >> 3), 8);
        else
            x = word_at(f, bit);
        miss &= word_miss(w, x ^ pat, nhb);
    }
    return miss;
}

/* The rare keys the word test leaves to the reference: remainder 0, or
 * a bucket too near the table's end for an 8-byte load. */
static __attribute__((noinline)) bool offset_slow(const amq_dleft *f,
                                                  uint64_t h) {
    return contains_ref(&f->o, h);
}

/* One key through mapping 1; d, groups and aligned are constants where
 * inlined. */
static inline bool offset_query(const amq_dleft *f, uint64_t h, unsigned d,
                                unsigned groups, bool aligned) {
    uint64_t q = amq__reduce64(h, f->buckets), s = h & f->rmask;
    uint64_t m = offset_mix(s), pat = s * f->sw.rep, miss = ~UINT64_C(0);
    uint64_t last = offset_bucket(f, q, m, d - 1);
    if (__builtin_expect(s == 0 || last >= f->sw.lim, 0))
        return offset_slow(f, h);
    for (unsigned i = 0; i + 1 < d; i++)
        miss &= bucket_miss(f, offset_bucket(f, q, m, i), pat, groups, aligned);
    miss &= bucket_miss(f, last, pat, groups, aligned);
    return ~miss != 0;
}

static bool k_offset(const amq__obj *o, uint64_t h) {
    const amq_dleft *f = (const amq_dleft *)o;
    return offset_query(f, h, f->d, f->sw.groups, false);
}
static bool k_offset_d4g1(const amq__obj *o, uint64_t h) {
    return offset_query((const amq_dleft *)o, h, 4, 1, false);
}
static bool k_offset_d4g2(const amq__obj *o, uint64_t h) {
    return offset_query((const amq_dleft *)o, h, 4, 2, false);
}
#if defined(__SSE2__)
/* Byte-aligned shapes with the words of a bucket taken two at a time as
 * the lanes of one SSE2 register: the same test, half the instructions
 * behind each load. d and groups are constants where inlined. */
static inline bool sse_query(const amq_dleft *f, uint64_t h, unsigned d,
                             unsigned groups) {
    const dl_swar *w = &f->sw;
    const uint8_t *p = (const uint8_t *)f->words;
    const uint64_t nb = f->buckets, bbytes = w->bbits / 8, gb = w->gbits / 8;
    uint64_t q = amq__reduce64(h, nb), s = h & f->rmask, m = offset_mix(s);
    uint64_t bl = q + amq__reduce64(m * f->mul[d - 1], nb);
    bl = bl >= nb ? bl - nb : bl;
    if (__builtin_expect(s == 0 || (d - 1) * nb + bl >= w->lim, 0))
        return offset_slow(f, h);
    const __m128i pat = _mm_set1_epi64x((long long)(s * w->rep));
    const __m128i rl = _mm_set1_epi64x((long long)w->rl);
    const __m128i nhb = _mm_set1_epi64x((long long)w->nhb);
    /* The last pair: its second lane is the last word, or none (all ones). */
    const __m128i nhb_end =
        groups % 2 == 0
            ? _mm_set_epi64x((long long)w->nhb_last, (long long)w->nhb)
            : _mm_set_epi64x(-1, (long long)w->nhb_last);
    __m128i miss = _mm_set1_epi32(-1);
    for (unsigned i = 0; i < d; i++) {
        uint64_t b = bl;
        if (i + 1 < d) {
            b = q + amq__reduce64(m * f->mul[i], nb);
            b = b >= nb ? b - nb : b;
        }
        const uint8_t *at = p + w->sub_off[i] + b * bbytes;
        for (unsigned k = 0; k < groups; k += 2, at += 2 * gb) {
            __m128i x = _mm_loadl_epi64((const __m128i *)(const void *)at);
            if (k + 1 < groups)
                x = _mm_unpacklo_epi64(
                    x,
                    _mm_loadl_epi64((const __m128i *)(const void *)(at + gb)));
            __m128i y = _mm_xor_si128(x, pat);
            __m128i t = _mm_add_epi64(_mm_and_si128(y, rl), rl);
            miss = _mm_and_si128(miss,
                                 _mm_or_si128(_mm_or_si128(t, y),
                                              k + 2 >= groups ? nhb_end : nhb));
        }
    }
    return _mm_movemask_epi8(_mm_cmpeq_epi32(miss, _mm_set1_epi32(-1))) !=
           0xffff;
}
#define DL_ALIGNED(d, g, o, h) sse_query((const amq_dleft *)(o), h, d, g)
#else
#define DL_ALIGNED(d, g, o, h)                                                 \
    offset_query((const amq_dleft *)(o), h, d, g, true)
#endif
/* The default shape at 1% (d = 2, 16 cells of 14 bits: four byte-aligned
 * words a bucket) and the earlier default (d = 4, 8 cells: two). */
static bool k_offset_d2g4a(const amq__obj *o, uint64_t h) {
    return DL_ALIGNED(2, 4, o, h);
}
static bool k_offset_d4g2a(const amq__obj *o, uint64_t h) {
    return DL_ALIGNED(4, 2, o, h);
}
/* Two subtables, the word loop: 3, 4, 6 or 8 words a bucket (16 cells at
 * remainders of 5 to 26 bits). */
#define DL_D2(g)                                                               \
    static bool k_offset_d2g##g(const amq__obj *o, uint64_t h) {               \
        return offset_query((const amq_dleft *)o, h, 2, g, false);             \
    }
DL_D2(3)
DL_D2(4)
DL_D2(6)
DL_D2(8)
static bool (*const k_offset_d2[9])(const amq__obj *,
                                    uint64_t) = {[3] = k_offset_d2g3,
                                                 [4] = k_offset_d2g4,
                                                 [6] = k_offset_d2g6,
                                                 [8] = k_offset_d2g8};
static bool k_offset_d4g3(const amq__obj *o, uint64_t h) {
    return offset_query((const amq_dleft *)o, h, 4, 3, false);
}

/* Mapping 0 with the word test: the three rounds stay. */
static bool k_rounds(const amq__obj *o, uint64_t h) {
    const amq_dleft *f = (const amq_dleft *)o;
    dl_loc loc;
    uint64_t hit = 0;
    locate_rounds(f, h, &loc);
    if (loc.bucket[f->d - 1] >= f->sw.lim)
        return lookup_ref(f, &loc);
    for (unsigned i = 0; i < f->d; i++)
        hit |= loc.rem[i] != 0
                   ? ~bucket_miss(f, loc.bucket[i], loc.rem[i] * f->sw.rep,
                                  f->sw.groups, false)
                   : bucket_has(f, loc.bucket[i], 0);
    return hit != 0;
}

/* The scan of scan_ref on words: the same cell index, load and first
 * empty cell. Cell indices come from bit positions by inv_cw. */
static int scan_words(const amq_dleft *f, uint64_t bucket, uint64_t rem,
                      unsigned *load, int *empty) {
    const dl_swar *w = &f->sw;
    uint64_t bit = bucket * w->bbits, pat = rem * w->rep;
    unsigned n = 0;
    int first = -1;
    for (unsigned k = 0; k < w->groups; k++, bit += w->gbits) {
        uint64_t hb = k + 1 == w->groups ? w->hb_last : w->hb;
        uint64_t x = word_at(f, bit), y = x ^ pat;
        uint64_t occ = (((x & w->cm) + w->cm) & w->cb) << (f->rbits - 1) & hb;
        uint64_t same = ~(((y & w->rl) + w->rl) | y) & occ;
        if (same != 0) {
            unsigned pos = (unsigned)__builtin_ctzll(same);
            *load = 0;
            *empty = -1;
            return (int)(k * w->g +
                         (unsigned)(((uint64_t)pos * w->inv_cw) >> 32));
        }
        n += amq__popcount64(occ);
        uint64_t free_top = ~occ & hb;
        if (first < 0 && free_top != 0) {
            unsigned pos = (unsigned)__builtin_ctzll(free_top);
            first =
                (int)(k * w->g + (unsigned)(((uint64_t)pos * w->inv_cw) >> 32));
        }
    }
    *load = n;
    *empty = first;
    return -1;
}

static int scan(const amq_dleft *f, uint64_t bucket, uint64_t rem,
                unsigned *load, int *empty) {
    if (f->scalar || bucket >= f->sw.lim)
        return scan_ref(f, bucket, rem, load, empty);
    return scan_words(f, bucket, rem, load, empty);
}

/* The cell holding the key's fingerprint, if any. */
static bool find(const amq_dleft *f, const dl_loc *loc, uint64_t *bucket,
                 unsigned *cell) {
    for (unsigned i = 0; i < f->d; i++) {
        unsigned load;
        int empty, j = scan(f, loc->bucket[i], loc->rem[i], &load, &empty);
        if (j >= 0) {
            *bucket = loc->bucket[i];
            *cell = (unsigned)j;
            return true;
        }
    }
    return false;
}

/* The word test's constants for f's shape, and the query kernel. */
static void choose_kernel(amq_dleft *f) {
    dl_swar *w = &f->sw;
    unsigned g = 57 / f->cw; /* g cells and a shift of up to 7 in 64 bits */
    if (g > f->cells)
        g = f->cells;
    memset(w, 0, sizeof *w);
    w->g = g;
    w->groups = (f->cells + g - 1) / g;
    w->gbits = g * f->cw;
    w->bbits = (uint64_t)f->cells * f->cw;
    w->inv_cw = (uint32_t)((UINT64_C(1) << 32) / f->cw + 1);
    for (unsigned j = 0; j < g; j++) {
        unsigned at = j * f->cw;
        w->rep |= UINT64_C(1) << (at + f->cbits);
        w->rl |= ((UINT64_C(1) << (f->rbits - 1)) - 1) << (at + f->cbits);
        w->hb |= UINT64_C(1) << (at + f->cw - 1);
        w->cm |= f->cmax << at;
        w->cb |= UINT64_C(1) << (at + f->cbits);
        if (j < f->cells - (w->groups - 1) * g)
            w->hb_last = w->hb;
    }
    w->nhb = ~w->hb;
    w->nhb_last = ~w->hb_last;
    w->aligned = w->bbits % 8 == 0 && w->gbits % 8 == 0;
    for (unsigned i = 0; i < f->d; i++)
        w->sub_off[i] = (uint64_t)i * f->buckets * (w->bbits / 8);
    /* The last word of global bucket b starts at bit b bbits + (groups - 1)
     * gbits and its 8-byte load must end inside the table. */
    uint64_t bytes = (uint64_t)f->nwords * 8,
             tail = (uint64_t)(w->groups - 1) * w->gbits;
    if (bytes >= 8 && (bytes - 8) * 8 >= tail)
        w->lim = ((bytes - 8) * 8 - tail) / w->bbits + 1;
    for (unsigned i = 0; i < f->d; i++)
        f->mul[i] = amq__mix64(DL_SALT_U * (i + 1)) | 1;
    if (f->scalar)
        f->o.contains = contains_ref;
    else if (f->map == DL_MAP_ROUNDS)
        f->o.contains = k_rounds;
    else if (f->d == 2 && w->groups == 4 && w->aligned)
        f->o.contains = k_offset_d2g4a;
    else if (f->d == 2 && w->groups <= 8 && k_offset_d2[w->groups] != NULL)
        f->o.contains = k_offset_d2[w->groups];
    else if (f->d == 4 && w->groups == 2)
        f->o.contains = w->aligned ? k_offset_d4g2a : k_offset_d4g2;
    else if (f->d == 4 && w->groups <= 3)
        f->o.contains = w->groups == 1 ? k_offset_d4g1 : k_offset_d4g3;
    else
        f->o.contains = k_offset;
}

/* ---- construction ------------------------------------------------------- */

static amq_status check_shape(unsigned d, unsigned cells, uint64_t buckets,
                              unsigned rbits, unsigned cbits) {
    if (d < 2 || d > DL_MAX_D || cells == 0 || cells > DL_MAX_CELLS ||
        buckets == 0 || buckets > DL_MAX_BUCKETS || rbits == 0 ||
        rbits > DL_MAX_RBITS || cbits == 0 || cbits > DL_MAX_CBITS)
        return AMQ_ERR_INVALID;
    return AMQ_OK;
}

/* 64-bit words for the shape (overflow-checked; bounds keep it < 2^50). */
static amq_status words_for(unsigned d, unsigned cells, uint64_t buckets,
                            unsigned cw, size_t *nwords) {
    size_t bits;
    if (!amq__mul((size_t)d * cells, (size_t)buckets, &bits) ||
        !amq__mul(bits, cw, &bits) || !amq__add(bits, 63, &bits))
        return AMQ_ERR_OVERFLOW;
    *nwords = bits / 64;
    if (*nwords > SIZE_MAX / 8)
        return AMQ_ERR_OVERFLOW;
    return AMQ_OK;
}

static amq_status alloc_dleft(unsigned d, unsigned cells, uint64_t buckets,
                              unsigned rbits, unsigned cbits, unsigned map,
                              const amq_options *opt, const uint64_t *borrow,
                              amq_dleft **out) {
    amq_dleft *f;
    size_t nwords;
    void *wr;
    AMQ_RETURN_IF_ERR(check_shape(d, cells, buckets, rbits, cbits));
    AMQ_RETURN_IF_ERR(words_for(d, cells, buckets, rbits + cbits, &nwords));
    AMQ_RETURN_IF_ERR(amq__obj_new(sizeof *f, opt, (void **)&f));
    f->nwords = nwords;
    f->buckets = buckets;
    f->d = d;
    f->cells = cells;
    f->rbits = rbits;
    f->cbits = cbits;
    f->cw = rbits + cbits;
    f->rmask = (UINT64_C(1) << rbits) - 1;
    f->cmax = (UINT64_C(1) << cbits) - 1;
    f->map = map;
    f->scalar = opt != NULL && (opt->flags & AMQ_OPT_SCALAR) != 0;
    amq_status st = amq__obj_table(&f->o, nwords * 8, borrow, &wr);
    if (st != AMQ_OK) {
        amq__obj_free(&f->o);
        return st;
    }
    f->words = borrow != NULL ? (uint64_t *)borrow : wr;
    choose_kernel(f);
    *out = f;
    return AMQ_OK;
}

/* Buckets per subtable so capacity keys fill DL_LOAD of the cells. */
static uint64_t buckets_for(uint64_t capacity, unsigned d, unsigned cells) {
    double b = ceil((double)capacity / ((double)d * DL_LOAD * cells));
    return b < 1.0                      ? 1
           : b > (double)DL_MAX_BUCKETS ? DL_MAX_BUCKETS + 1
                                        : (uint64_t)b;
}

/* Smallest r with capacity / (B 2^r) <= fpr. */
static amq_status rbits_for(uint64_t capacity, double fpr, uint64_t buckets,
                            unsigned *rbits) {
    unsigned r = 1;
    while (r <= DL_MAX_RBITS &&
           (double)capacity > fpr * (double)buckets * ldexp(1.0, (int)r))
        r++;
    if (r > DL_MAX_RBITS)
        return AMQ_ERR_INVALID;
    *rbits = r;
    return AMQ_OK;
}

/* ---- updates and queries ------------------------------------------------ */

/* Both ends of each of the key's d buckets (a bucket may span two lines). */
static void prefetch_loc(const amq_dleft *f, const dl_loc *loc) {
    const uint8_t *base = (const uint8_t *)f->words;
    for (unsigned t = 0; t < f->d; t++) {
        uint64_t bit = loc->bucket[t] * f->sw.bbits;
        amq__prefetch(base + (bit >> 3));
        amq__prefetch(base + ((bit + f->sw.bbits - 1) >> 3));
    }
}

/* An insert reads its d buckets before it decides: they are asked for at
 * once, so their misses overlap. */
static amq_status dleft_add(amq__obj *o, uint64_t h) {
    amq_dleft *f = (amq_dleft *)o;
    dl_loc loc;
    unsigned best = 0, best_load = f->cells;
    int slot = -1;
    locate(f, h, &loc);
    prefetch_loc(f, &loc);
    for (unsigned i = 0; i < f->d; i++) {
        unsigned load;
        int empty, j = scan(f, loc.bucket[i], loc.rem[i], &load, &empty);
        if (j >= 0) { /* f is stored already: count it */
            uint64_t c = cell_get(f, loc.bucket[i], (unsigned)j);
            if ((c & f->cmax) != f->cmax)
                cell_set(f, loc.bucket[i], (unsigned)j, c + 1);
            f->o.items++;
            return AMQ_OK;
        }
        if (load < best_load) { /* strict: the leftmost wins ties */
            best_load = load;
            best = i;
            slot = empty;
        }
    }
    if (slot < 0)
        return AMQ_ERR_FULL;
    cell_set(f, loc.bucket[best], (unsigned)slot,
             (loc.rem[best] << f->cbits) | 1u);
    f->occupied++;
    f->o.items++;
    return AMQ_OK;
}

/* The adds in order, the buckets of a group of keys asked for first. */
static amq_status dleft_add_batch(amq__obj *o, const uint64_t *h, size_t n,
                                  size_t *done) {
    const amq_dleft *f = (const amq_dleft *)o;
    amq_status st = AMQ_OK;
    size_t i = 0;
    dl_loc loc;
    while (i < n && st == AMQ_OK) {
        size_t g = n - i < DL_BATCH ? n - i : DL_BATCH;
        for (size_t j = 0; j < g; j++) {
            locate(f, h[i + j], &loc);
            prefetch_loc(f, &loc);
        }
        for (size_t end = i + g; i < end && st == AMQ_OK; i++)
            st = dleft_add(o, h[i]);
        i -= st != AMQ_OK;
    }
    *done = i;
    return st;
}

static amq_status dleft_remove(amq__obj *o, uint64_t h) {
    amq_dleft *f = (amq_dleft *)o;
    dl_loc loc;
    uint64_t bucket;
    unsigned j;
    locate(f, h, &loc);
    if (!find(f, &loc, &bucket, &j))
        return AMQ_ERR_NOT_FOUND;
    uint64_t c = cell_get(f, bucket, j), cnt = c & f->cmax;
    if (cnt != f->cmax) {
        cell_set(f, bucket, j, cnt == 1 ? 0 : c - 1);
        f->occupied -= cnt == 1;
    }
    f->o.items--;
    return AMQ_OK;
}

/* The fingerprint's cell counter: 0 if absent, UINT64_MAX if saturated. */
static amq_status dleft_count(const amq__obj *o, uint64_t h, uint64_t *out) {
    const amq_dleft *f = (const amq_dleft *)o;
    dl_loc loc;
    uint64_t bucket;
    unsigned j;
    locate(f, h, &loc);
    if (!find(f, &loc, &bucket, &j)) {
        *out = 0;
        return AMQ_OK;
    }
    uint64_t cnt = cell_get(f, bucket, j) & f->cmax;
    *out = cnt == f->cmax ? UINT64_MAX : cnt;
    return AMQ_OK;
}

/* Batch: locate a group of keys and prefetch both ends of each of their d
 * buckets, then ask the kernel; the misses of the whole group overlap.
 * Under AMQ_OPT_SCALAR, the reference one key at a time. */
static void dleft_contains_batch(const amq__obj *o, const uint64_t *h, size_t n,
                                 uint8_t *out) {
    const amq_dleft *f = (const amq_dleft *)o;
    dl_loc loc;
    for (size_t i = 0; i < n; i += DL_BATCH) {
        size_t g = n - i < DL_BATCH ? n - i : DL_BATCH;
        for (size_t j = 0; j < g && !f->scalar; j++) {
            locate(f, h[i + j], &loc);
            prefetch_loc(f, &loc);
        }
        for (size_t j = 0; j < g; j++)
            out[i + j] = o->contains(o, h[i + j]);
    }
}

/* F / (B 2^r), plus 2^-63 per fingerprint for the non-uniformity of
 * q = reduce(h, B) (an interval of at most ceil(2^64 / B) hashes per
 * bucket, at most ceil(that / 2^r) per residue of s). */
static double dleft_fpr_bound(const amq__obj *o) {
    const amq_dleft *f = (const amq_dleft *)o;
    double per = 1.0 / ((double)f->buckets * ldexp(1.0, (int)f->rbits));
    double p = (double)f->occupied * (per + 0x1p-63);
    return p < 1.0 ? p : 1.0;
}

/* ---- the getter of amq/counting.h --------------------------------------- */

uint64_t amq_dleft_fingerprints(const amq_dleft *f) { return f->occupied; }

/* ---- the generic interface --------------------------------------------- */

typedef struct dl_shape {
    uint64_t d, cells, buckets, rbits, cbits, map;
    bool has_buckets, has_rbits;
} dl_shape;

static amq_status spec_shape(amq__spec *spec, dl_shape *s, amq_diag *diag) {
    s->d = DL_DEFAULT_D;
    s->cells = DL_DEFAULT_CELLS;
    s->cbits = DL_DEFAULT_CBITS;
    s->map = DL_MAP_OFFSET;
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "d", 2, DL_MAX_D, &s->d, NULL, diag));
    AMQ_RETURN_IF_ERR(
        amq__spec_u64(spec, "cells", 1, DL_MAX_CELLS, &s->cells, NULL, diag));
    AMQ_RETURN_IF_ERR(
        amq__spec_u64(spec, "cbits", 1, DL_MAX_CBITS, &s->cbits, NULL, diag));
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "map", DL_MAP_ROUNDS, DL_MAP_OFFSET,
                                    &s->map, NULL, diag));
    AMQ_RETURN_IF_ERR(amq__spec_u64(spec, "rbits", 1, DL_MAX_RBITS, &s->rbits,
                                    &s->has_rbits, diag));
    return amq__spec_u64(spec, "buckets", 1, DL_MAX_BUCKETS, &s->buckets,
                         &s->has_buckets, diag);
}

static amq_status t_create(const amq__type *self, amq__spec *spec,
                           uint64_t capacity, double fpr,
                           const amq_options *opt, amq__obj **out,
                           amq_diag *diag) {
    dl_shape s = {0};
    amq_dleft *f;
    (void)self;
    AMQ_RETURN_IF_ERR(spec_shape(spec, &s, diag));
    if (capacity == 0 && !(s.has_buckets && s.has_rbits))
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "dleft needs a capacity and fpr, or buckets= and "
                         "rbits=");
    if (!s.has_buckets) {
        s.buckets = buckets_for(capacity, (unsigned)s.d, (unsigned)s.cells);
        if (s.buckets > DL_MAX_BUCKETS)
            return amq__diag(diag, AMQ_ERR_OVERFLOW, 0,
                             "dleft: %llu keys need too many buckets",
                             (unsigned long long)capacity);
    }
    if (!s.has_rbits) {
        unsigned r;
        if (rbits_for(capacity, fpr, s.buckets, &r) != AMQ_OK)
            return amq__diag(diag, AMQ_ERR_INVALID, 0,
                             "dleft: fpr %g needs more than %d remainder "
                             "bits",
                             fpr, DL_MAX_RBITS);
        s.rbits = r;
    }
    AMQ_RETURN_IF_ERR(alloc_dleft((unsigned)s.d, (unsigned)s.cells, s.buckets,
                                  (unsigned)s.rbits, (unsigned)s.cbits,
                                  (unsigned)s.map, opt, NULL, &f));
    *out = &f->o;
    return AMQ_OK;
}

static size_t t_describe(const amq__obj *o, char *buf, size_t cap) {
    const amq_dleft *f = (const amq_dleft *)o;
    return amq__describe(buf, cap,
                         "d=%u,cells=%u,buckets=%llu,rbits=%u,"
                         "cbits=%u%s",
                         f->d, f->cells, (unsigned long long)f->buckets,
                         f->rbits, f->cbits,
                         f->map == DL_MAP_ROUNDS ? ",map=0" : "");
}

/* The curve at the design load L = 3/4 c: b bits per key buy
 * r = b L / c - cb remainder bits, and the rate is d L 2^-r (capped at 1). */
static amq_status curve_shape(amq__spec *spec, double *dl, double *per_bit,
                              double *cb, amq_diag *diag) {
    dl_shape s = {0};
    AMQ_RETURN_IF_ERR(spec_shape(spec, &s, diag));
    if (s.has_buckets || s.has_rbits)
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "dleft curve: buckets/rbits follow from bits per "
                         "key");
    *dl = (double)s.d * DL_LOAD * (double)s.cells;
    *per_bit = DL_LOAD;
    *cb = (double)s.cbits;
    return AMQ_OK;
}

static amq_status t_curve(const amq__type *self, amq__spec *spec, double x,
                          bool inverse, double *out, amq_diag *diag) {
    double dl = 0, per_bit = 1, cb = 0;
    (void)self;
    AMQ_RETURN_IF_ERR(curve_shape(spec, &dl, &per_bit, &cb, diag));
    if (inverse) {
        *out = (log2(dl / x) + cb) / per_bit;
    } else {
        double p = dl * exp2(-(x * per_bit - cb));
        *out = p < 1.0 ? p : 1.0;
    }
    return AMQ_OK;
}

/* params: d u32 | cells u32 | rbits u32 | cbits u32 | buckets u64 |
 *         items u64 | map u64 (0: three rounds, 1: offsets; reserved and
 *         0 in frames from before mapping 1) */
static void t_params_write(const amq__obj *o, amq__wr *w) {
    const amq_dleft *f = (const amq_dleft *)o;
    amq__wr_u32(w, f->d);
    amq__wr_u32(w, f->cells);
    amq__wr_u32(w, f->rbits);
    amq__wr_u32(w, f->cbits);
    amq__wr_u64(w, f->buckets);
    amq__wr_u64(w, o->items);
    amq__wr_u64(w, f->map);
}

/* The payload's cells obey the invariants (empty cells all zero, no
 * remainder twice in a bucket, zero tail); counts the occupied cells. */
static amq_status check_cells(const amq_dleft *f, uint64_t *occupied,
                              const amq__rd *r) {
    uint64_t nb = (uint64_t)f->d * f->buckets, used = 0;
    for (uint64_t b = 0; b < nb; b++) {
        for (unsigned j = 0; j < f->cells; j++) {
            uint64_t c = cell_get(f, b, j);
            bool bad = (c & f->cmax) == 0 && c != 0;
            for (unsigned t = 0; t < j && !bad && c != 0; t++) {
                uint64_t o = cell_get(f, b, t);
                bad = (o & f->cmax) != 0 && (o >> f->cbits) == (c >> f->cbits);
            }
            if (bad)
                return amq__rd_bad(r, r->payload_at,
                                   "bucket %llu cell %u is malformed",
                                   (unsigned long long)b, j);
            used += c != 0;
        }
    }
    uint64_t end = nb * f->cells * f->cw;
    if (end % 64 != 0 && (f->words[f->nwords - 1] >> (end % 64)) != 0)
        return amq__rd_bad(r, r->payload_at,
                           "nonzero bits after the last cell");
    *occupied = used;
    return AMQ_OK;
}

/* Each field within its bounds, reported where it sits. */
static amq_status read_params(amq__rd *r, size_t len, dl_shape *s,
                              uint64_t *items) {
    uint32_t d, cells, rbits, cbits;
    size_t nwords;
    AMQ_RETURN_IF_ERR(amq__rd_expect(r, DL_PARAMS));
    size_t at_d = amq__rd_u32(r, &d);
    size_t at_cells = amq__rd_u32(r, &cells);
    size_t at_rbits = amq__rd_u32(r, &rbits);
    size_t at_cbits = amq__rd_u32(r, &cbits);
    size_t at_buckets = amq__rd_u64(r, &s->buckets);
    amq__rd_u64(r, items);
    size_t at_map = amq__rd_u64(r, &s->map);
    if (s->map > DL_MAP_OFFSET)
        return amq__rd_bad(r, at_map, "unknown mapping %llu",
                           (unsigned long long)s->map);
    if (d < 2 || d > DL_MAX_D)
        return amq__rd_bad(r, at_d, "d=%u outside 2..%d", d, DL_MAX_D);
    if (cells == 0 || cells > DL_MAX_CELLS)
        return amq__rd_bad(r, at_cells, "cells=%u outside 1..%d", cells,
                           DL_MAX_CELLS);
    if (rbits == 0 || rbits > DL_MAX_RBITS)
        return amq__rd_bad(r, at_rbits, "rbits=%u outside 1..%d", rbits,
                           DL_MAX_RBITS);
    if (cbits == 0 || cbits > DL_MAX_CBITS)
        return amq__rd_bad(r, at_cbits, "cbits=%u outside 1..%d", cbits,
                           DL_MAX_CBITS);
    if (s->buckets == 0 || s->buckets > DL_MAX_BUCKETS ||
        words_for(d, cells, s->buckets, rbits + cbits, &nwords) != AMQ_OK ||
        len % 8 != 0 || nwords != len / 8)
        return amq__rd_bad(r, at_buckets,
                           "%llu buckets do not match a "
                           "%zu-byte payload",
                           (unsigned long long)s->buckets, len);
    s->d = d;
    s->cells = cells;
    s->rbits = rbits;
    s->cbits = cbits;
    return AMQ_OK;
}

static amq_status t_load(const amq__type *self, amq__rd *r,
                         const uint8_t *payload, size_t len, bool view,
                         const amq_options *opt, amq__obj **out) {
    dl_shape s = {0};
    uint64_t items = 0, occupied = 0;
    amq_dleft *f;
    (void)self;
    AMQ_RETURN_IF_ERR(read_params(r, len, &s, &items));
    /* The parameters fix the table to exactly len bytes: allocate, then
     * check the cells on the (aligned) copy or the borrowed payload. */
    AMQ_RETURN_IF_ERR(alloc_dleft((unsigned)s.d, (unsigned)s.cells, s.buckets,
                                  (unsigned)s.rbits, (unsigned)s.cbits,
                                  (unsigned)s.map, opt,
                                  view ? (const uint64_t *)payload : NULL, &f));
    if (!view)
        memcpy(f->words, payload, len);
    amq_status st = check_cells(f, &occupied, r);
    if (st != AMQ_OK) {
        amq__obj_free(&f->o);
        return st;
    }
    f->o.items = items;
    f->occupied = occupied;
    *out = &f->o;
    return AMQ_OK;
}

/* One shape per kernel beyond the default's (d = 2, four byte-aligned
 * words a bucket): the word loop at three, four (shifted), six and eight
 * words; the earlier default (d = 4, two aligned words) and d = 4 at one,
 * two (shifted) and three words; the generic loop (d = 3; one word a
 * bucket); and mapping 0. */
static const char *const kernel_shapes[] = {"dleft:rbits=7",
                                            "dleft:rbits=11",
                                            "dleft:rbits=16",
                                            "dleft:rbits=20,cbits=3",
                                            "dleft:d=4,cells=8",
                                            "dleft:d=4,cells=4",
                                            "dleft:d=4,cells=8,rbits=11",
                                            "dleft:d=4,cells=8,rbits=16",
                                            "dleft:d=3",
                                            "dleft:cells=4",
                                            "dleft:map=0",
                                            "dleft:map=0,rbits=6",
                                            NULL};

const amq__type amq__type_dleft = {
    .info = {.name = "dleft",
             .type_id = AMQ__ID_dleft,
             .caps = AMQ_CAP_REMOVE | AMQ_CAP_COUNT,
             .summary = "d-left counting Bloom filter: fingerprints in a "
                        "d-left table, deletes in about half the space",
             .params = "d=SUBTABLES (2-8, default 2), cells=PER_BUCKET "
                       "(1-32, default 16), cbits=COUNTER_BITS (1-8, default "
                       "2), rbits=REMAINDER_BITS (1-32, default from fpr), "
                       "buckets=PER_SUBTABLE (explicit size), map=0|1 "
                       "(subtable mapping: 0 three rounds, as frames before "
                       "map 1; default 1)",
             .default_hash = AMQ_HASH_XXH3},
    .reads_param = "d",
    .kernel_shapes = kernel_shapes,
    .create = t_create,
    .load = t_load,
    .add = dleft_add,
    .add_batch = dleft_add_batch,
    .contains = contains_ref,
    .contains_batch = dleft_contains_batch,
    .remove = dleft_remove,
    .count = dleft_count,
    .fpr_bound = dleft_fpr_bound,
    .describe = t_describe,
    .curve = t_curve,
    .params_write = t_params_write,
};
