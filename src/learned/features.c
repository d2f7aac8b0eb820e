/*
 * features.c — the feature map φ(k) of the learned cascade's scorer.
 *
 * Keys are byte strings (host names, words, "tenant/table/row" keys), so
 * the features are the classic hashing trick over byte n-grams plus a few
 * shape indicators (amq/cascade.h lists them). Every feature is an
 * indicator: the linear model's score is a plain sum of ±weights, which
 * makes the score exact with int8 weights and identical on every machine
 * with float weights (one fixed summation order, no multiplies).
 *
 * The key is framed as  STX k[0] k[1] ... k[len-1] ETX  (0x02, 0x03), so
 * n-grams touching an end mark prefixes and suffixes:
 *
 *     frame:   02 't' 'r' 'k' '.' 'i' 'o' 03
 *     2-grams: [02 t] [t r] [r k] [k .] [. i] [i o] [o 03]
 *
 * Hashing. An n-gram at position i is the little-endian packing of its n
 * bytes (at most 4, so 32 bits) with n in bits 32-39 and the feature kind
 * in bits 40-47; shape features pack their value the same way. The 64-bit
 * word x is multiplied by M1 = 0x9E3779B97F4A7C15 (the golden-ratio
 * constant) modulo 2^64; the top dim_bits bits of the product are the
 * index and the bit below them the sign. Tokens are hashed whole with XXH3-64 (seed = their kind) first.
 * Integer arithmetic only: φ is portable and deterministic.
 *
 * Cost: about 4 (len + 2) + 13 features; each n-gram is two multiplies on a
 * sliding 32-bit window, no per-gram memory traffic besides the output.
 * This file is the scalar reference: score_kernel.h computes the same φ
 * in vector lanes (AVX2, AVX-512) and must give its scores bit for bit
 * (test_score).
 */
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "learned/learned.h"

#define STX AMQ__FEAT_STX
#define ETX AMQ__FEAT_ETX
#define M1 AMQ__FEAT_M1

enum feature_kind {
    KIND_NGRAM = AMQ__FEAT_KIND_NGRAM,
    KIND_LENGTH = 2,
    KIND_DIGITS = 3,
    KIND_LETTERS = 4,
    KIND_OTHER = 5,
    KIND_SEP = 6, /* + separator number 0..4: kinds 6..10 */
    KIND_SEGMENTS = 11,
    KIND_FIRST = 12,
    KIND_FIRST2 = 13,
    KIND_LAST = 14
};

/* The separators, in feature order: . / : - _ */

/* Byte classes: 0 other, 1 digit, 2 ASCII letter, 3 + i separator i. */
enum { CLS_OTHER = 0, CLS_DIGIT = 1, CLS_LETTER = 2, CLS_SEP = 3 };
/* '.' 46 -> 3, '/' 47 -> 4, ':' 58 -> 5, '-' 45 -> 6, '_' 95 -> 7 */
static const uint8_t byte_class[256] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 6, 3, 4,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 5, 0, 0, 0, 0, 0, 0, 2, 2, 2, 2, 2, 2, 2,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 0, 0, 0, 0, 7,
    0, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

amq_status amq__feature_config_resolve(const amq_feature_config *in,
                                       amq_feature_config *out) {
    amq_feature_config c = {0};
    if (in != NULL)
        c = *in;
    if (c.dim_bits == 0)
        c.dim_bits = 16;
    if (c.ngram_max == 0)
        c.ngram_max = 4;
    if (c.dim_bits < AMQ_FEATURE_DIM_BITS_MIN ||
        c.dim_bits > AMQ_FEATURE_DIM_BITS_MAX || c.ngram_max > 4)
        return AMQ_ERR_INVALID;
    *out = c;
    return AMQ_OK;
}

size_t amq__features_max(const amq_feature_config *cfg) {
    return (size_t)cfg->ngram_max * (AMQ_FEATURE_MAX_BYTES + 2) +
           AMQ__FEAT_SHAPE;
}

size_t amq_features_max(const amq_feature_config *cfg) {
    amq_feature_config c;
    if (amq__feature_config_resolve(cfg, &c) != AMQ_OK)
        return 0;
    return amq__features_max(&c);
}

/* Multiplicative hashing: the top bits of x * M1 depend on every bit of
 * x, which is all the hashing trick needs (the index and sign come from
 * the top bits). One multiply per feature. */
static inline uint64_t mix(uint64_t x) { return x * M1; }

/* Where features go: stored as (index, sign) lists (training, the public
 * amq_features, the batch path), or summed straight into a score against
 * int8 or float weights (scoring: no lists written and read back). The
 * emission order is the same in every mode, so the float sum is the sum
 * amq__model_dot computes over the stored list (test_cascade compares). */
enum { SINK_STORE, SINK_INT8, SINK_FLOAT };

typedef struct sink {
    unsigned bits;
    uint32_t *idx;
    int8_t *sign;
    size_t n;
    const int8_t *q;
    const float *w;
    int32_t iacc;
    float facc;
} sink;

#define INLINE static inline __attribute__((always_inline))

/* Index in the top `bits` bits, sign (+1 when set) from the bit below. */
INLINE void emit(sink *k, int mode, uint64_t h) {
    uint32_t i = (uint32_t)(h >> (64 - k->bits));
    int sg = (int)((h >> (63 - k->bits)) & 1) * 2 - 1;
    if (mode == SINK_STORE) {
        k->idx[k->n] = i;
        k->sign[k->n] = (int8_t)sg;
        k->n++;
    } else if (mode == SINK_INT8) {
        k->iacc += sg * k->q[i];
    } else {
        k->facc += (float)sg * k->w[i];
    }
}

INLINE uint64_t pack(uint64_t value, unsigned n, unsigned kind) {
    return (value & 0xFFFFFFFFULL) | ((uint64_t)n << 32) |
           ((uint64_t)kind << 40);
}

/* Byte j of the frame STX key ETX (zero past its end). */
INLINE uint32_t frame_byte(const uint8_t *key, size_t len, size_t j) {
    if (j == 0)
        return STX;
    if (j - 1 < len)
        return key[j - 1];
    return j - 1 == len ? ETX : 0;
}

/* The n-grams of the framed key, n = 1..nmax, position by position. */
INLINE void ngrams(sink *k, int mode, const uint8_t *key, size_t len,
                   unsigned nmax) {
    static const uint32_t mask[5] = {0, 0xFFu, 0xFFFFu, 0xFFFFFFu, 0xFFFFFFFFu};
    size_t m = len + 2;
    uint32_t win = 0;
    /* win holds frame bytes i .. i+3 (zero past the end), low byte first. */
    for (size_t j = 0; j < 4; j++)
        win |= frame_byte(key, len, j) << (8 * j);
    for (size_t i = 0; i < m; i++) {
        size_t left = m - i;
        if (left >= 4 && nmax == 4) { /* the common case, unrolled */
            emit(k, mode, mix(pack(win & 0xFFu, 1, KIND_NGRAM)));
            emit(k, mode, mix(pack(win & 0xFFFFu, 2, KIND_NGRAM)));
            emit(k, mode, mix(pack(win & 0xFFFFFFu, 3, KIND_NGRAM)));
            emit(k, mode, mix(pack(win, 4, KIND_NGRAM)));
        } else {
            for (unsigned n = 1; n <= nmax && n <= left; n++)
                emit(k, mode, mix(pack(win & mask[n], n, KIND_NGRAM)));
        }
        uint32_t next = i + 4 <= len ? key[i + 3] : frame_byte(key, len, i + 4);
        win = (win >> 8) | (next << 24);
    }
}

/* What the 13 shape features are made of, in one pass over the key: class
 * counters in registers (a table of counts in memory stalls on
 * store-to-load forwarding when one class repeats) and the token bounds. */
void amq__shape_scan(const uint8_t *key, size_t len, amq__key_shape *s) {
    size_t digits = 0, letters = 0, seps[5] = {0}, nsep = 0;
    size_t first = len, second = len, last = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned c = byte_class[key[i]];
        digits += c == CLS_DIGIT;
        letters += c == CLS_LETTER;
        if (c >= CLS_SEP) {
            seps[c - CLS_SEP]++;
            nsep++;
            if (first == len)
                first = i;
            else if (second == len)
                second = i;
            last = i + 1;
        }
    }
    s->len = len;
    s->digits = digits;
    s->letters = letters;
    for (unsigned j = 0; j < 5; j++)
        s->seps[j] = seps[j];
    s->nsep = nsep;
    s->first = first;
    s->second = second;
    s->last = last;
}

static uint64_t token_hash(const uint8_t *p, size_t n, unsigned kind) {
    return mix(pack(XXH3_64bits_withSeed(p, n, kind), 0, kind) ^
               ((uint64_t)kind << 48));
}

/* Length, shares, separator counts, segments; then the first token, the
 * first two tokens and the last token. */
void amq__shape_hashes(const amq__key_shape *s, const uint8_t *key,
                       uint64_t h[AMQ__FEAT_SHAPE]) {
    /* len <= AMQ_FEATURE_MAX_BYTES: 32-bit division gives the same
     * quotients as 64-bit, for a fraction of its latency */
    uint32_t len = (uint32_t)s->len, d = len == 0 ? 1 : len;
    uint32_t digits = (uint32_t)s->digits, letters = (uint32_t)s->letters;
    uint64_t v[4] = {len < 63 ? len : 63, 8 * digits / d, 8 * letters / d,
                     8 * (len - digits - letters) / d};
    for (unsigned j = 0; j < 4; j++)
        h[j] = mix(pack(v[j], 0, KIND_LENGTH + j));
    for (unsigned j = 0; j < 5; j++)
        h[4 + j] =
            mix(pack(s->seps[j] < 15 ? s->seps[j] : 15, 0, KIND_SEP + j));
    h[9] = mix(pack(s->nsep + 1 < 31 ? s->nsep + 1 : 31, 0, KIND_SEGMENTS));
    h[10] = token_hash(key, s->first, KIND_FIRST);
    h[11] = token_hash(key, s->second, KIND_FIRST2);
    h[12] = token_hash(key + s->last, s->len - s->last, KIND_LAST);
}

INLINE void shape(sink *k, int mode, const uint8_t *key, size_t len) {
    amq__key_shape s;
    uint64_t h[AMQ__FEAT_SHAPE];
    amq__shape_scan(key, len, &s);
    amq__shape_hashes(&s, key, h);
    for (unsigned j = 0; j < AMQ__FEAT_SHAPE; j++)
        emit(k, mode, h[j]);
}

INLINE void generate(sink *k, int mode, const amq_feature_config *cfg,
                     const uint8_t *key, size_t len) {
    if (len > AMQ_FEATURE_MAX_BYTES)
        len = AMQ_FEATURE_MAX_BYTES;
    k->bits = cfg->dim_bits;
    ngrams(k, mode, key, len, cfg->ngram_max);
    shape(k, mode, key, len);
}

size_t amq__features(const amq_feature_config *cfg, const uint8_t *key,
                     size_t len, uint32_t *idx, int8_t *sign) {
    sink k = {.idx = idx, .sign = sign};
    generate(&k, SINK_STORE, cfg, key, len);
    return k.n;
}

int32_t amq__features_dot_q(const amq_feature_config *cfg, const uint8_t *key,
                            size_t len, const int8_t *q) {
    sink k = {.q = q};
    generate(&k, SINK_INT8, cfg, key, len);
    return k.iacc;
}

float amq__features_dot_f(const amq_feature_config *cfg, const uint8_t *key,
                          size_t len, const float *w) {
    sink k = {.w = w};
    generate(&k, SINK_FLOAT, cfg, key, len);
    return k.facc;
}

amq_status amq_features(const amq_feature_config *cfg, const void *key,
                        size_t len, uint32_t *idx, int8_t *sign, size_t cap,
                        size_t *n) {
    amq_feature_config c;
    if ((key == NULL && len > 0) || idx == NULL || sign == NULL || n == NULL)
        return AMQ_ERR_INVALID;
    AMQ_RETURN_IF_ERR(amq__feature_config_resolve(cfg, &c));
    if (cap < amq__features_max(&c))
        return AMQ_ERR_INVALID;
    *n = amq__features(&c, key, len, idx, sign);
    return AMQ_OK;
}
