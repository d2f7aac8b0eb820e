/*
 * model.c — the cascade's scorer: logistic regression over the hashed
 * features of features.c, trained here, scored fast.
 *
 * Training minimises the weighted logistic loss
 *
 *     Σ_i c_i [ -y_i ln σ(z_i) - (1 - y_i) ln(1 - σ(z_i)) ] + (λ/2) |w|²,
 *     z_i = b + Σ_j x_ij w_j,   x_ij ∈ {±1 summed over repeats},
 *
 * with per-coordinate AdaGrad steps (the usual choice for sparse hashed
 * features: rare n-grams keep large steps, common ones settle) over a few
 * shuffled passes. c_i is the member class weight for members and
 * 1 + γ σ(z_i) for non-members when §3's tail-weighted loss is asked for
 * (γ = tail_weight): a non-member the model already scores high costs more,
 * which pushes the high-score tail — where τ_0 sits for small ε — apart.
 * The L2 term is applied to the coordinates an example touches (lazy
 * regularisation). Shuffling uses splitmix64 from the seed: one seed and
 * one data order give one model.
 *
 * The trained weights become float32 or, quantised, int8 with one scale
 * (q_j = round(w_j / s), s = max |w| / 127). Scoring sums ±w in the
 * feature order (float) or ±q exactly (int32) and adds the bias in
 * double, so the raw score is reproducible bit for bit.
 *
 * Layout: one array of 2^dim_bits weights (float32: 256 KiB at the
 * default 16 bits; int8: 64 KiB). Scoring hashes a key's ~4 (len + 2)
 * features and sums their weights with the widest kernels the CPU offers,
 * chosen per call (score_avx512.c, score_avx2.c; features.c's fused
 * generator is the scalar reference, and the stored-list path,
 * amq__features + amq__model_dot, the definition the tests hold all of
 * them to). Training reads the stored lists.
 */
#include <math.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "core/bits.h"
#include "learned/learned.h"

#define FEAT_STACK (4 * (AMQ_FEATURE_MAX_BYTES + 2) + AMQ__FEAT_SHAPE)

amq_status amq__model_config_resolve(const amq_model_config *in,
                                     amq_model_config *out) {
    amq_model_config c = {0};
    if (in != NULL)
        c = *in;
    AMQ_RETURN_IF_ERR(amq__feature_config_resolve(&c.features, &c.features));
    if (c.epochs == 0)
        c.epochs = 6;
    if (c.learning_rate == 0.0)
        c.learning_rate = 0.2;
    if (c.l2 == 0.0)
        c.l2 = 1e-7;
    if (c.l2 < 0.0)
        c.l2 = 0.0;
    if (!(c.learning_rate > 0.0) || !isfinite(c.learning_rate) ||
        !isfinite(c.l2) || c.member_weight < 0.0 ||
        !isfinite(c.member_weight) || c.tail_weight < 0.0 ||
        !isfinite(c.tail_weight) || c.epochs > 1000 ||
        (unsigned)c.calibration > AMQ_CALIB_ISOTONIC)
        return AMQ_ERR_INVALID;
    *out = c;
    return AMQ_OK;
}

amq_status amq__model_alloc(const amq_model_config *cfg, const amq__mem *mem,
                            amq_model **out) {
    amq_model *m = amq__zalloc(mem, sizeof *m);
    if (m == NULL)
        return AMQ_ERR_NOMEM;
    m->mem = *mem;
    m->cfg = *cfg;
    m->dim = 1u << cfg->features.dim_bits;
    if (cfg->quantize)
        m->q = amq__zalloc(mem, m->dim);
    else
        m->w = amq__zalloc(mem, (size_t)m->dim * sizeof *m->w);
    if (m->q == NULL && m->w == NULL) {
        amq__free(mem, m, sizeof *m);
        return AMQ_ERR_NOMEM;
    }
    m->scale = 1.0;
    *out = m;
    return AMQ_OK;
}

void amq_model_free(amq_model *m) {
    if (m == NULL)
        return;
    amq__mem mem = m->mem;
    amq__free(&mem, m->w, m->w ? (size_t)m->dim * sizeof *m->w : 0);
    amq__free(&mem, m->q, m->q ? m->dim : 0);
    amq__free(&mem, m->iso_x, (size_t)m->iso_n * sizeof(double));
    amq__free(&mem, m->iso_p, (size_t)m->iso_n * sizeof(double));
    amq__free(&mem, m, sizeof *m);
}

amq_status amq__model_clone(const amq_model *m, const amq__mem *mem,
                            amq_model **out) {
    amq_model *c;
    AMQ_RETURN_IF_ERR(amq__model_alloc(&m->cfg, mem, &c));
    if (m->w != NULL)
        memcpy(c->w, m->w, (size_t)m->dim * sizeof *m->w);
    else
        memcpy(c->q, m->q, m->dim);
    c->scale = m->scale;
    c->bias = m->bias;
    c->platt_a = m->platt_a;
    c->platt_b = m->platt_b;
    if (m->iso_n > 0) {
        size_t bytes = (size_t)m->iso_n * sizeof(double);
        c->iso_x = amq__alloc(mem, bytes);
        c->iso_p = amq__alloc(mem, bytes);
        if (c->iso_x == NULL || c->iso_p == NULL) {
            c->iso_n = m->iso_n; /* so free releases what was allocated */
            amq_model_free(c);
            return AMQ_ERR_NOMEM;
        }
        c->iso_n = m->iso_n;
        memcpy(c->iso_x, m->iso_x, bytes);
        memcpy(c->iso_p, m->iso_p, bytes);
    }
    c->id = m->id;
    *out = c;
    return AMQ_OK;
}

/* The id chains XXH64 over the parts (each part's hash seeds the next);
 * doubles are hashed in their little-endian bytes (the target is
 * little-endian, bits.h). */
void amq__model_seal(amq_model *m) {
    uint8_t head[56];
    memset(head, 0, sizeof head);
    amq__put_u32(head, m->cfg.features.dim_bits);
    amq__put_u32(head + 4, m->cfg.features.ngram_max);
    amq__put_u32(head + 8, m->cfg.quantize ? 1 : 0);
    amq__put_u32(head + 12, (uint32_t)m->cfg.calibration);
    amq__put_f64(head + 16, m->scale);
    amq__put_f64(head + 24, m->bias);
    amq__put_u32(head + 32, m->iso_n);
    amq__put_f64(head + 40, m->platt_a);
    amq__put_f64(head + 48, m->platt_b);
    uint64_t h = XXH64(head, sizeof head, 0x6d6f64656cULL);
    if (m->w != NULL)
        h = XXH64(m->w, (size_t)m->dim * sizeof *m->w, h);
    else
        h = XXH64(m->q, m->dim, h);
    if (m->iso_n > 0) {
        h = XXH64(m->iso_x, (size_t)m->iso_n * sizeof(double), h);
        h = XXH64(m->iso_p, (size_t)m->iso_n * sizeof(double), h);
    }
    m->id = h;
}

/* ---- scoring ------------------------------------------------------------------ */

double amq__model_dot(const amq_model *m, const uint32_t *idx,
                      const int8_t *sign, size_t n) {
    if (m->q != NULL) {
        int32_t acc = 0;
        for (size_t i = 0; i < n; i++)
            acc += sign[i] * m->q[idx[i]];
        return (double)acc * m->scale + m->bias;
    }
    float acc = 0.0f;
    for (size_t i = 0; i < n; i++)
        acc += (float)sign[i] * m->w[idx[i]];
    return (double)acc + m->bias;
}

/* ---- the kernels: the scalar reference and the vector ones ------------------ */

static void scalar_batch_f(const amq_feature_config *cfg,
                           const uint8_t *const *key, const size_t *len,
                           size_t n, const float *w, float *out) {
    for (size_t i = 0; i < n; i++)
        out[i] = amq__features_dot_f(cfg, key[i], len[i], w);
}

static const amq__score_kernels score_scalar = {
    .name = "scalar",
    .lanes = 1,
    .dot_q = amq__features_dot_q,
    .dot_f = amq__features_dot_f,
    .batch_f = scalar_batch_f,
};

const amq__score_kernels *amq__score_kernels_at(int level) {
    switch (level) {
    case AMQ__CPU_SCALAR: return &score_scalar;
#if defined(__x86_64__)
    case AMQ__CPU_AVX2: return amq__cpu_has_avx2() ? &amq__score_avx2 : NULL;
    case AMQ__CPU_AVX512:
        return amq__cpu_has_avx512() ? &amq__score_avx512 : NULL;
#endif
    default: return NULL;
    }
}

const amq__score_kernels *amq__score_kernels_best(void) {
#if defined(__x86_64__)
    if (amq__cpu_has_avx512())
        return &amq__score_avx512;
    if (amq__cpu_has_avx2())
        return &amq__score_avx2;
#endif
    return &score_scalar;
}

/* One key: the hashing, the gathers and (int8) the sum in vector
 * registers; the same value as amq__model_dot over amq__features' list. */
double amq_model_score(const amq_model *m, const void *key, size_t len) {
    const amq__score_kernels *k = amq__score_kernels_best();
    if (m->q != NULL)
        return (double)k->dot_q(&m->cfg.features, key, len, m->q) * m->scale +
               m->bias;
    return (double)k->dot_f(&m->cfg.features, key, len, m->w) + m->bias;
}

/* A batch. int8 keys one after the other: the sum has no order, so one
 * key fills whole vectors and a batch gains nothing from lanes. Float
 * keys side by side, one per lane, so their chains of adds run in
 * parallel; a lane idles once its key ends, so each chunk of keys is put
 * in order of length first (a counting sort) and scored a kernel's width
 * at a time. Prefetching the next key's weights was measured and not
 * kept (docs/cascade.md, "Speed"): ~150 prefetches a key cost more than
 * the misses they hide, even at 2^20 weights. */
#define SCORE_CHUNK 256

static void score_chunk_f(const amq_model *m, const amq__score_kernels *k,
                          const amq_keys *keys, size_t at, size_t n,
                          double *out) {
    uint16_t start[AMQ_FEATURE_MAX_BYTES + 2] = {0};
    uint16_t order[SCORE_CHUNK];
    size_t len[SCORE_CHUNK];
    for (size_t i = 0; i < n; i++) {
        size_t l = (size_t)(keys->offsets[at + i + 1] - keys->offsets[at + i]);
        len[i] = l < AMQ_FEATURE_MAX_BYTES ? l : AMQ_FEATURE_MAX_BYTES;
        start[len[i] + 1]++;
    }
    for (size_t l = 1; l <= AMQ_FEATURE_MAX_BYTES; l++)
        start[l] = (uint16_t)(start[l] + start[l - 1]);
    for (size_t i = 0; i < n; i++)
        order[start[len[i]]++] = (uint16_t)i;
    for (size_t g = 0; g < n; g += k->lanes) {
        const uint8_t *kp[AMQ__SCORE_LANES];
        size_t kl[AMQ__SCORE_LANES];
        float z[AMQ__SCORE_LANES];
        size_t w = n - g < k->lanes ? n - g : k->lanes;
        for (size_t j = 0; j < w; j++) {
            size_t i = order[g + j];
            kp[j] = keys->bytes + keys->offsets[at + i];
            kl[j] = len[i];
        }
        k->batch_f(&m->cfg.features, kp, kl, w, m->w, z);
        for (size_t j = 0; j < w; j++)
            out[order[g + j]] = (double)z[j] + m->bias;
    }
}

void amq_model_score_batch(const amq_model *m, const amq_keys *keys,
                           double *out) {
    const amq__score_kernels *k = amq__score_kernels_best();
    if (m->q != NULL || k->lanes == 1) {
        for (size_t i = 0; i < keys->n; i++) {
            size_t len;
            const uint8_t *p = amq__key(keys, i, &len);
            out[i] = m->q != NULL
                         ? (double)k->dot_q(&m->cfg.features, p, len, m->q) *
                                   m->scale +
                               m->bias
                         : (double)k->dot_f(&m->cfg.features, p, len, m->w) +
                               m->bias;
        }
        return;
    }
    for (size_t at = 0; at < keys->n; at += SCORE_CHUNK)
        score_chunk_f(m, k, keys, at,
                      keys->n - at < SCORE_CHUNK ? keys->n - at : SCORE_CHUNK,
                      out + at);
}

amq_status amq__model_score_keys(const amq_model *m, const amq_keys *k,
                                 double **out) {
    size_t bytes;
    if (!amq__mul(k->n, sizeof(double), &bytes))
        return AMQ_ERR_OVERFLOW;
    double *z = amq__alloc(&m->mem, bytes);
    if (z == NULL)
        return AMQ_ERR_NOMEM;
    amq_model_score_batch(m, k, z);
    *out = z;
    return AMQ_OK;
}

double amq_model_probability(const amq_model *m, double raw) {
    return amq__calib_apply(m, raw);
}

uint64_t amq_model_id(const amq_model *m) { return m->id; }

size_t amq_model_size_bytes(const amq_model *m) {
    size_t w = m->q != NULL ? m->dim : (size_t)m->dim * sizeof(float);
    return w + 2 * (size_t)m->iso_n * sizeof(double) + 64;
}

const amq_model_config *amq_model_config_of(const amq_model *m) {
    return &m->cfg;
}

/* ---- training ------------------------------------------------------------------ */

typedef struct trainer {
    const amq_model_config *cfg;
    const amq_keys *sets[2]; /* [0] non-members, [1] members */
    double *w, *g2;          /* weights and AdaGrad sums (dim each)       */
    double bias, bias_g2;
    double class_w[2];
    uint32_t idx[FEAT_STACK];
    int8_t sign[FEAT_STACK];
} trainer;

static double sigmoid(double z) {
    return z >= 0 ? 1.0 / (1.0 + exp(-z)) : exp(z) / (1.0 + exp(z));
}

static void train_one(trainer *t, int y, size_t i) {
    const amq_keys *k = t->sets[y];
    size_t n =
        amq__features(&t->cfg->features, k->bytes + k->offsets[i],
                      k->offsets[i + 1] - k->offsets[i], t->idx, t->sign);
    double z = t->bias;
    for (size_t j = 0; j < n; j++)
        z += t->sign[j] * t->w[t->idx[j]];
    double p = sigmoid(z);
    double c =
        y ? t->class_w[1] : t->class_w[0] * (1.0 + t->cfg->tail_weight * p);
    double g = c * (p - (double)y), lr = t->cfg->learning_rate;
    for (size_t j = 0; j < n; j++) {
        uint32_t d = t->idx[j];
        double gj = g * t->sign[j] + t->cfg->l2 * t->w[d];
        t->g2[d] += gj * gj;
        t->w[d] -= lr * gj / sqrt(t->g2[d] + 1e-12);
    }
    t->bias_g2 += g * g;
    t->bias -= lr * g / sqrt(t->bias_g2 + 1e-12);
}

static uint64_t splitmix(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Examples as (label << 63 | index), shuffled afresh every epoch. */
static void run_epochs(trainer *t, uint64_t *order, size_t total) {
    uint64_t rng = t->cfg->seed;
    for (uint32_t e = 0; e < t->cfg->epochs; e++) {
        for (size_t i = total; i > 1; i--) {
            size_t j = (size_t)amq__reduce64(splitmix(&rng), i);
            uint64_t tmp = order[i - 1];
            order[i - 1] = order[j];
            order[j] = tmp;
        }
        for (size_t i = 0; i < total; i++)
            train_one(t, (int)(order[i] >> 63),
                      (size_t)(order[i] & ~(1ULL << 63)));
    }
}

/* Training weights into the model's representation. */
static void finalise(amq_model *m, const double *w, double bias) {
    m->bias = bias;
    if (m->w != NULL) {
        for (uint32_t i = 0; i < m->dim; i++)
            m->w[i] = (float)w[i];
        return;
    }
    double mx = 0.0;
    for (uint32_t i = 0; i < m->dim; i++)
        mx = fmax(mx, fabs(w[i]));
    m->scale = mx > 0.0 ? mx / 127.0 : 1.0;
    for (uint32_t i = 0; i < m->dim; i++)
        m->q[i] = (int8_t)lrint(w[i] / m->scale);
}

bool amq__keys_valid(const amq_keys *k) {
    if (k == NULL || (k->n > 0 && (k->offsets == NULL ||
                                   (k->bytes == NULL && k->offsets[k->n] > 0))))
        return false;
    if (k->n > 0 && k->offsets[0] != 0)
        return false;
    for (size_t i = 0; i < k->n; i++)
        if (k->offsets[i + 1] < k->offsets[i])
            return false;
    return true;
}

static amq_status train_weights(amq_model *m, const amq_keys *pos,
                                const amq_keys *neg) {
    trainer *t = amq__zalloc(&m->mem, sizeof *t);
    size_t total = pos->n + neg->n, wbytes = (size_t)m->dim * sizeof(double);
    uint64_t *order = amq__alloc(&m->mem, total * sizeof *order);
    if (t != NULL) {
        t->w = amq__zalloc(&m->mem, wbytes);
        t->g2 = amq__zalloc(&m->mem, wbytes);
    }
    amq_status st = AMQ_ERR_NOMEM;
    if (t != NULL && order != NULL && t->w != NULL && t->g2 != NULL) {
        t->cfg = &m->cfg;
        t->sets[0] = neg;
        t->sets[1] = pos;
        t->class_w[0] = 1.0;
        t->class_w[1] = m->cfg.member_weight > 0.0
                            ? m->cfg.member_weight
                            : (double)neg->n / (double)pos->n;
        for (size_t i = 0; i < pos->n; i++)
            order[i] = (1ULL << 63) | i;
        for (size_t i = 0; i < neg->n; i++)
            order[pos->n + i] = i;
        run_epochs(t, order, total);
        finalise(m, t->w, t->bias);
        st = AMQ_OK;
    }
    if (t != NULL) {
        amq__free(&m->mem, t->w, wbytes);
        amq__free(&m->mem, t->g2, wbytes);
    }
    amq__free(&m->mem, t, sizeof *t);
    amq__free(&m->mem, order, total * sizeof *order);
    return st;
}

static amq_status calibrate(amq_model *m, const amq_keys *cp,
                            const amq_keys *cn) {
    double *zp = NULL, *zn = NULL;
    amq_status st = amq__model_score_keys(m, cp, &zp);
    if (st == AMQ_OK)
        st = amq__model_score_keys(m, cn, &zn);
    if (st == AMQ_OK)
        st = amq__calib_fit(m, zp, cp->n, zn, cn->n);
    amq__free(&m->mem, zp, cp->n * sizeof(double));
    amq__free(&m->mem, zn, cn->n * sizeof(double));
    return st;
}

amq_status amq_model_train(const amq_keys *members, const amq_keys *nonmembers,
                           const amq_keys *calib_members,
                           const amq_keys *calib_nonmembers,
                           const amq_model_config *cfg, const amq_options *opt,
                           amq_model **out) {
    amq_model_config c;
    amq__mem mem;
    if (out == NULL)
        return AMQ_ERR_INVALID;
    *out = NULL;
    if (!amq__keys_valid(members) || !amq__keys_valid(nonmembers) ||
        members->n == 0 || nonmembers->n == 0 ||
        members->n + nonmembers->n >= (1ULL << 62))
        return AMQ_ERR_INVALID;
    bool calib = calib_members != NULL && calib_nonmembers != NULL &&
                 calib_members->n > 0 && calib_nonmembers->n > 0;
    if (calib &&
        (!amq__keys_valid(calib_members) || !amq__keys_valid(calib_nonmembers)))
        return AMQ_ERR_INVALID;
    AMQ_RETURN_IF_ERR(amq__model_config_resolve(cfg, &c));
    if (!calib)
        c.calibration = AMQ_CALIB_NONE;
    amq__mem_init(&mem, opt);
    amq_model *m;
    AMQ_RETURN_IF_ERR(amq__model_alloc(&c, &mem, &m));
    amq_status st = train_weights(m, members, nonmembers);
    if (st == AMQ_OK && calib)
        st = calibrate(m, calib_members, calib_nonmembers);
    if (st != AMQ_OK) {
        amq_model_free(m);
        return st;
    }
    amq__model_seal(m);
    *out = m;
    return AMQ_OK;
}

amq_status amq_model_auc(const amq_model *m, const amq_keys *members,
                         const amq_keys *nonmembers, double *auc) {
    if (m == NULL || auc == NULL || !amq__keys_valid(members) ||
        !amq__keys_valid(nonmembers) || members->n == 0 || nonmembers->n == 0)
        return AMQ_ERR_INVALID;
    double *zp = NULL, *zn = NULL;
    amq_status st = amq__model_score_keys(m, members, &zp);
    if (st == AMQ_OK)
        st = amq__model_score_keys(m, nonmembers, &zn);
    if (st == AMQ_OK)
        st = amq__auc(&m->mem, zp, members->n, zn, nonmembers->n, auc);
    amq__free(&m->mem, zp, members->n * sizeof(double));
    amq__free(&m->mem, zn, nonmembers->n * sizeof(double));
    return st;
}
