/*
 * compressed.c — the compressed Bloom filter (Mitzenmacher, "Compressed
 * Bloom Filters", IEEE/ACM ToN 10(5), 2002).
 *
 * A Bloom filter sent over a network costs what its bit array compresses
 * to, not its size in memory. A filter with fewer hashes and a larger,
 * sparser array has a lower entropy per key, so for the same number of
 * transmitted bits it reaches a lower false-positive rate (or, for the same
 * rate, sends fewer bits) than the standard filter, whose optimally tuned
 * array (half ones) does not compress at all. The price is working memory.
 *
 * Here the working array is a partitioned filter (partitioned.c) with k
 * (default 2) slices; the frame's payload is the array coded as
 *
 *   mode 0  raw                    the words, m/8 bytes
 *   mode 1  gaps between ones      Golomb-Rice, parameter r
 *   mode 2  gaps between zeros     Golomb-Rice, parameter r
 *
 * whichever is shortest (ties to the lower mode). A gap g (clear bits
 * between two coded positions) is written LSB-first as g >> r one-bits, a
 * zero, then the low r bits of g. The encoder tries the r of the rule of
 * thumb (2^r ~ 0.69 x the mean gap) and its neighbours and keeps the
 * shortest: a Rice code with the best r is within a few per cent of the
 * entropy of geometric gaps, dense or sparse.
 *
 *   array   0 0 0 1 0 0 0 0 0 1 1 0 ...        (r = 1)
 *   gaps    3, 5, 0            codes  1 0 1 | 1 1 0 1 | 0 0
 *
 * Canonical form: load decodes, then recomputes the encoder's choice and
 * refuses anything else (another mode, another r, nonzero padding, a
 * payload of another length), so save -> load -> save gives the same bytes.
 * Decompression bombs: a gap mode is admissible only while the array is at
 * most 4096 times the payload (plus 64 bytes) — sparser arrays are sent
 * raw — so a frame never makes us allocate more than 4096 times its
 * length.
 *
 * The bound and curve are the working filter's: prod_i ones_i / s, and
 * (1 - e^{-k/b})^k at b bits per key in memory. The transmitted size per
 * key is what the compressed design optimises; amq_compressed_entropy_bits
 * gives its ideal b H(1 - e^{-k/b}) and amq_compressed_encoded_bytes the
 * real one.
 *
 * Views: a view cannot read a coded array in place, so amq_filter_view
 * decodes into owned memory (the result is read-only like every view).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bloom/partitioned.h"
#include "core/bits.h"
#include "core/frame.h"
#include "type/type.h"

#define DEFAULT_K 2
#define MAX_EXPANSION 4096
#define FOR_SIZE_MAX_K 16

enum { MODE_RAW = 0, MODE_ONES = 1, MODE_ZEROS = 2, MODE_COUNT = 3 };

/* A compressed filter is a partitioned filter in memory: the handle is
 * the amq_partitioned itself, and only saving and loading differ. */
static const amq_partitioned *cpart(const amq_compressed *c) {
    return (const amq_partitioned *)(const void *)c;
}

/* ---- the mathematics ---------------------------------------------------- */

static double entropy2(double q) {
    if (q <= 0.0 || q >= 1.0)
        return 0.0;
    return -q * log2(q) - (1.0 - q) * log2(1.0 - q);
}

double amq_compressed_entropy_bits(double b, unsigned k) {
    if (!(b > 0.0) || k == 0)
        return 0.0;
    return b * entropy2(-expm1(-(double)k / b));
}

/* b with entropy per key z at k hashes, on the sparse side (fill <= 1/2)
 * where b H(fill) increases with b; 0 if z is out of reach. */
static double bits_for_entropy(double z, unsigned k) {
    double lo = (double)k / M_LN2, hi = lo;
    if (amq_compressed_entropy_bits(lo, k) > z)
        return 0.0;
    while (amq_compressed_entropy_bits(hi, k) < z && hi < 1e12)
        hi *= 2.0;
    for (int i = 0; i < 200 && hi - lo > 1e-9 * hi; i++) {
        double mid = 0.5 * (lo + hi);
        if (amq_compressed_entropy_bits(mid, k) <= z)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* ---- the code ----------------------------------------------------------- */

/* Largest r with 2^r c <= 0.69 (m - c), the Rice rule of thumb for
 * geometric gaps of mean (m - c)/c; the products stay below 2^71. The
 * encoder tries it and its neighbours (the rule is off by one when the
 * array is dense). */
static unsigned rice_guess(uint64_t c, uint64_t m) {
    unsigned r = 0;
    if (c == 0)
        return 0;
    while (r < 62 && ((unsigned __int128)c * 100u << (r + 1)) <=
                         (unsigned __int128)(m - c) * 69u)
        r++;
    return r;
}

#define RICE_TRIES 4

/* Coded positions: ones (mode 1) or zeros (mode 2). */
static uint64_t coded_word(const uint64_t *w, size_t i, int mode) {
    return mode == MODE_ONES ? w[i] : ~w[i];
}

static uint64_t ones_of(const amq_partitioned *p) {
    const uint64_t *w = p->words;
    size_t n = amq__partitioned_bytes(p) / 8;
    uint64_t ones = 0;
    for (size_t i = 0; i < n; i++)
        ones += amq__popcount64(w[i]);
    return ones;
}

/* Total length in bits of the codes of every coded position, for Rice
 * parameters lo .. lo + RICE_TRIES - 1, in one pass. */
static void gap_bits(const amq_partitioned *p, int mode, unsigned lo,
                     uint64_t bits[RICE_TRIES]) {
    const uint64_t *w = p->words;
    size_t n = amq__partitioned_bytes(p) / 8;
    uint64_t prev = UINT64_MAX; /* -1 */
    memset(bits, 0, RICE_TRIES * sizeof bits[0]);
    for (size_t i = 0; i < n; i++) {
        for (uint64_t x = coded_word(w, i, mode); x != 0; x &= x - 1) {
            uint64_t pos = (uint64_t)i * 64 + (unsigned)__builtin_ctzll(x);
            uint64_t g = pos - prev - 1;
            for (unsigned t = 0; t < RICE_TRIES; t++)
                bits[t] += (g >> (lo + t)) + 1 + lo + t;
            prev = pos;
        }
    }
}

typedef struct coding {
    int mode;
    unsigned r;
    uint64_t ones;
    size_t bytes;
} coding;

static bool admissible(uint64_t m, size_t bytes) {
    return m / 8 <= (uint64_t)MAX_EXPANSION * ((uint64_t)bytes + 64);
}

/* The encoder's (canonical) choice for the current array: the shortest
 * of raw and the two gap codes with their best tried r (ties: lower mode,
 * then lower r). */
static coding choose(const amq_partitioned *p) {
    uint64_t m = p->slice * p->k, bits[RICE_TRIES];
    coding best = {MODE_RAW, 0, ones_of(p), amq__partitioned_bytes(p)};
    for (int mode = MODE_ONES; mode < MODE_COUNT; mode++) {
        uint64_t c = mode == MODE_ONES ? best.ones : m - best.ones;
        unsigned g = rice_guess(c, m), lo = g == 0 ? 0 : g > 60 ? 59 : g - 1;
        gap_bits(p, mode, lo, bits);
        for (unsigned t = 0; t < RICE_TRIES; t++) {
            size_t bytes = (size_t)((bits[t] + 7) / 8);
            if (bytes < best.bytes && admissible(m, bytes)) {
                best.mode = mode;
                best.r = lo + t;
                best.bytes = bytes;
            }
        }
    }
    return best;
}

typedef struct bitw {
    uint8_t *dst;
    uint64_t pos; /* bits written */
} bitw;

static void put_bits(bitw *w, uint64_t v, unsigned n) {
    for (unsigned i = 0; i < n; i++, w->pos++)
        if ((v >> i) & 1)
            w->dst[w->pos >> 3] |= (uint8_t)(1u << (w->pos & 7));
}

static void put_ones(bitw *w, uint64_t q) {
    for (; q > 0 && (w->pos & 7) != 0; q--, w->pos++)
        w->dst[w->pos >> 3] |= (uint8_t)(1u << (w->pos & 7));
    for (; q >= 8; q -= 8, w->pos += 8)
        w->dst[w->pos >> 3] = 0xff;
    put_bits(w, (1ULL << q) - 1, (unsigned)q);
}

static void encode(const amq_partitioned *p, const coding *c, uint8_t *dst) {
    const uint64_t *words = p->words;
    size_t n = amq__partitioned_bytes(p) / 8;
    if (c->mode == MODE_RAW) {
        memcpy(dst, words, amq__partitioned_bytes(p));
        return;
    }
    bitw w = {dst, 0};
    uint64_t prev = UINT64_MAX;
    memset(dst, 0, c->bytes);
    for (size_t i = 0; i < n; i++) {
        for (uint64_t x = coded_word(words, i, c->mode); x != 0; x &= x - 1) {
            uint64_t pos = (uint64_t)i * 64 + (unsigned)__builtin_ctzll(x);
            uint64_t g = pos - prev - 1;
            put_ones(&w, g >> c->r);
            w.pos++; /* the terminating zero */
            put_bits(&w, g, c->r);
            prev = pos;
        }
    }
}

typedef struct bitr {
    const uint8_t *src;
    uint64_t pos, end; /* in bits */
} bitr;

static int get_bit(bitr *r) {
    int b = (r->src[r->pos >> 3] >> (r->pos & 7)) & 1;
    r->pos++;
    return b;
}

/* Decode c gaps into words (zeroed for mode 1, all ones for mode 2) by
 * flipping each coded position. AMQ_ERR_CORRUPT on any inconsistency. */
static amq_status decode(const uint8_t *src, size_t len, uint64_t m, uint64_t c,
                         unsigned rp, uint64_t *words) {
    bitr rd = {src, 0, (uint64_t)len * 8};
    uint64_t prev = UINT64_MAX;
    for (uint64_t j = 0; j < c; j++) {
        uint64_t q = 0, low = 0;
        bool ended = false;
        while (rd.pos < rd.end && q <= (m >> rp) && !ended) {
            if (get_bit(&rd))
                q++;
            else
                ended = true;
        }
        if (!ended || rd.end - rd.pos < rp)
            return AMQ_ERR_CORRUPT;
        for (unsigned i = 0; i < rp; i++)
            low |= (uint64_t)get_bit(&rd) << i;
        uint64_t g = (q << rp) | low, pos = prev + 1 + g;
        if (g >= m || pos >= m)
            return AMQ_ERR_CORRUPT;
        words[pos >> 6] ^= 1ULL << (pos & 63);
        prev = pos;
    }
    if ((rd.pos + 7) / 8 != len)
        return AMQ_ERR_CORRUPT;
    while (rd.pos < rd.end)
        if (get_bit(&rd))
            return AMQ_ERR_CORRUPT;
    return AMQ_OK;
}

/* ---- construction ------------------------------------------------------- */

/* Mitzenmacher's design: for each k, the array whose entropy per key is
 * z_bits, capped at 16 z bits per key of working memory; keep the k with
 * the lowest FPR. */
static amq_status design_for_size(double z, unsigned *k, double *bpk) {
    double best = 2.0;
    if (!(z >= 1.0 && z <= 1e6))
        return AMQ_ERR_INVALID;
    for (unsigned kk = 1; kk <= FOR_SIZE_MAX_K; kk++) {
        double b = bits_for_entropy(z, kk);
        if (b <= 0.0)
            continue;
        if (b > 16.0 * z)
            b = 16.0 * z;
        double f = amq__partitioned_curve(b, kk);
        if (f < best) {
            best = f;
            *k = kk;
            *bpk = b;
        }
    }
    return best < 2.0 ? AMQ_OK : AMQ_ERR_INVALID;
}

/* The z= design for capacity keys at z_bits of entropy per key. */
static amq_status new_for_size(const amq__mem *mem, uint64_t capacity,
                               double z_bits, amq_partitioned **out) {
    unsigned k = 0;
    double b = 0.0;
    AMQ_RETURN_IF_ERR(design_for_size(z_bits, &k, &b));
    double m = ceil(b * (double)capacity);
    if (!(m < 0x1p62))
        return AMQ_ERR_OVERFLOW;
    return amq__partitioned_explicit(mem, (uint64_t)m, k, out);
}

/* ---- the structure's own calls ------------------------------------------ */

size_t amq_compressed_encoded_bytes(const amq_compressed *c) {
    return choose(cpart(c)).bytes;
}
uint64_t amq_compressed_bits(const amq_compressed *c) {
    return cpart(c)->slice * cpart(c)->k;
}
unsigned amq_compressed_k(const amq_compressed *c) { return cpart(c)->k; }

/* ---- the generic interface --------------------------------------------- */

/* The filter a spec asks for: an explicit size, a size target z, or the
 * default design for (capacity, fpr). */
static amq_status make(amq__spec *spec, uint64_t capacity, double fpr,
                       const amq__mem *mem, amq_partitioned **out,
                       amq_diag *diag) {
    uint64_t k = 0, m = 0, slice;
    double z = 0.0;
    bool has_m, has_z;
    AMQ_RETURN_IF_ERR(
        amq__spec_u64(spec, "k", 1, AMQ__PART_MAX_K, &k, NULL, diag));
    AMQ_RETURN_IF_ERR(
        amq__spec_u64(spec, "m", 64, UINT64_C(1) << 60, &m, &has_m, diag));
    AMQ_RETURN_IF_ERR(amq__spec_f64(spec, "z", 1.0, 1e6, &z, &has_z, diag));
    if (has_m && has_z)
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "compressed: give one of m= "
                         "and z=");
    if (has_m)
        return amq__partitioned_explicit(mem, m, k ? (unsigned)k : DEFAULT_K,
                                         out);
    if (capacity == 0)
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         "compressed needs a capacity "
                         "and fpr, or m=BITS");
    if (has_z) {
        if (k != 0)
            return amq__diag(diag, AMQ_ERR_SPEC, 0,
                             "compressed: z= chooses "
                             "k itself; give one of k= and z=");
        return new_for_size(mem, capacity, z, out);
    }
    unsigned kk = k ? (unsigned)k : DEFAULT_K;
    AMQ_RETURN_IF_ERR(amq__partitioned_size_for(capacity, fpr, &kk, &slice));
    return amq__partitioned_make(mem, slice, kk, NULL, out);
}

static amq_status t_create(const amq__type *self, amq__spec *spec,
                           uint64_t capacity, double fpr,
                           const amq_options *opt, amq__obj **out,
                           amq_diag *diag) {
    amq_partitioned *p;
    amq__mem mem;
    (void)self;
    amq__mem_init(&mem, opt);
    AMQ_RETURN_IF_ERR(make(spec, capacity, fpr, &mem, &p, diag));
    *out = &p->o;
    return AMQ_OK;
}

static amq_status t_curve(const amq__type *self, amq__spec *spec, double x,
                          bool inverse, double *out, amq_diag *diag) {
    uint64_t k = DEFAULT_K;
    (void)self;
    AMQ_RETURN_IF_ERR(
        amq__spec_u64(spec, "k", 1, AMQ__PART_MAX_K, &k, NULL, diag));
    *out = inverse ? amq__partitioned_bits_for(x, (unsigned)k)
                   : amq__partitioned_curve(x, (unsigned)k);
    return AMQ_OK;
}

/* params: the partitioned block (24) | mode u32 | rice u32 | ones u64 |
 * reserved u64 (0) */
#define PARAMS_LEN (AMQ__PART_PARAMS + 24)

static void t_params_write(const amq__obj *o, amq__wr *w) {
    const amq_partitioned *p = (const amq_partitioned *)o;
    coding cd = choose(p);
    amq__partitioned_params_write(o, w);
    amq__wr_u32(w, (uint32_t)cd.mode);
    amq__wr_u32(w, cd.r);
    amq__wr_u64(w, cd.ones);
    amq__wr_u64(w, 0);
}
static size_t t_payload_size(const amq__obj *o) {
    return choose((const amq_partitioned *)o).bytes;
}
static void t_payload_write(const amq__obj *o, uint8_t *dst) {
    const amq_partitioned *p = (const amq_partitioned *)o;
    coding cd = choose(p);
    encode(p, &cd, dst);
}

/* Everything that can be checked before allocating. */
static amq_status check_params(amq__rd *r, size_t len, uint64_t *slice,
                               unsigned *k, uint64_t *items, coding *cd) {
    uint64_t s, m, ones;
    uint32_t kk, mode, rice;
    AMQ_RETURN_IF_ERR(amq__rd_expect(r, PARAMS_LEN));
    amq__rd shape = *r; /* the array's shape first: it sizes the check */
    size_t at_s = amq__rd_u64(&shape, &s);
    size_t at_k = amq__rd_u32(&shape, &kk);
    if (kk == 0 || kk > AMQ__PART_MAX_K)
        return amq__rd_bad(r, at_k, "hash count %u out of range", kk);
    if (s == 0 || s % 64 != 0 || s > (UINT64_C(1) << 62) / kk ||
        s * kk / 8 > SIZE_MAX)
        return amq__rd_bad(r, at_s, "array shape out of range");
    m = s * kk;
    AMQ_RETURN_IF_ERR(
        amq__partitioned_params_read(r, (size_t)(m / 8), slice, k, items));
    size_t at_mode = amq__rd_u32(r, &mode);
    size_t at_rice = amq__rd_u32(r, &rice);
    size_t at_ones = amq__rd_u64(r, &ones);
    AMQ_RETURN_IF_ERR(amq__rd_zero64(r));
    if (mode >= MODE_COUNT)
        return amq__rd_bad(r, at_mode, "coding mode %u out of range", mode);
    if (ones > m)
        return amq__rd_bad(r, at_ones, "%llu ones in %llu bits",
                           (unsigned long long)ones, (unsigned long long)m);
    if (mode == MODE_RAW ? len != m / 8 : !admissible(m, len))
        return amq__rd_bad(r, AMQ__FRAME_OFF_PAYLOAD_LEN,
                           "payload length does not fit the array");
    if (mode == MODE_RAW ? rice != 0 : rice > 62)
        return amq__rd_bad(r, at_rice, "Rice parameter out of range");
    *cd = (coding){.mode = (int)mode, .r = rice, .ones = ones, .bytes = len};
    return AMQ_OK;
}

static amq_status fill_words(amq_partitioned *p, const coding *cd,
                             const uint8_t *payload, size_t len,
                             const amq__rd *r) {
    uint64_t *w = p->words, m = p->slice * p->k;
    size_t bytes = amq__partitioned_bytes(p);
    if (cd->mode == MODE_RAW) {
        memcpy(w, payload, len);
    } else {
        memset(w, cd->mode == MODE_ONES ? 0x00 : 0xff, bytes);
        uint64_t c = cd->mode == MODE_ONES ? cd->ones : m - cd->ones;
        if (decode(payload, len, m, c, cd->r, w) != AMQ_OK)
            return amq__rd_bad(r, r->payload_at,
                               "malformed Golomb-Rice stream");
    }
    coding again = choose(p);
    if (again.ones != cd->ones || again.mode != cd->mode || again.r != cd->r ||
        again.bytes != len)
        return amq__rd_bad(r, r->payload_at, "coding is not the canonical one");
    amq__partitioned_recount(p);
    return AMQ_OK;
}

static amq_status t_load(const amq__type *self, amq__rd *r,
                         const uint8_t *payload, size_t len, bool view,
                         const amq_options *opt, amq__obj **out) {
    uint64_t slice = 0, items = 0;
    unsigned k = 0;
    coding cd = {0, 0, 0, 0};
    amq__mem mem;
    amq_partitioned *p;
    (void)self, (void)view; /* a view decodes into owned memory too */
    AMQ_RETURN_IF_ERR(check_params(r, len, &slice, &k, &items, &cd));
    amq__mem_init(&mem, opt);
    AMQ_RETURN_IF_ERR(amq__partitioned_make(&mem, slice, k, NULL, &p));
    amq_status st = fill_words(p, &cd, payload, len, r);
    if (st != AMQ_OK) {
        amq__obj_free(&p->o);
        return st;
    }
    p->o.items = items;
    *out = &p->o;
    return AMQ_OK;
}

const amq__type amq__type_compressed = {
    .info = {.name = "compressed",
             .type_id = AMQ__ID_compressed,
             .caps = AMQ_CAP_UNION | AMQ_CAP_INTERSECT | AMQ_CAP_ESTIMATE,
             .summary = "compressed Bloom filter: sparse array, Golomb-Rice "
                        "coded when saved",
             .params = "k=HASHES (1-64, default 2), m=BITS (explicit array "
                       "size), z=BITS (target transmitted bits per key: "
                       "choose k and m for the lowest FPR)",
             .default_hash = AMQ_HASH_XXH3},
    .reads_param = "k",
    .kernel_shapes = amq__defaults_only,
    .create = t_create,
    .load = t_load,
    .add = amq__partitioned_add,
    .contains = amq__partitioned_contains,
    .contains_batch = amq__partitioned_batch,
    .merge = amq__partitioned_merge,
    .estimate = amq__partitioned_estimate,
    .fpr_bound = amq__partitioned_bound,
    .describe = amq__partitioned_describe,
    .curve = t_curve,
    .params_write = t_params_write,
    .payload_size = t_payload_size,
    .payload_write = t_payload_write,
};
