/*
 * test_score.c — the scorer's vector kernels against the scalar reference.
 *
 * amq_model_score and amq_model_score_batch run the widest kernels the
 * CPU offers (model.c; score_avx2.c, score_avx512.c); features.c's fused
 * scalar sum is the reference, and amq__features' list, summed in its
 * order, the definition. For int8 and float weights, dim_bits 10 to 20 and
 * ngram_max 1 to 4, over edge-case keys (empty, one byte, the vector and
 * 64-byte chunk boundaries, 255, 256, 257 and 300 bytes around the
 * 256-byte cut; text and binary, STX, ETX and zero bytes included) and
 * random ones, every kernel this machine has must give the reference's
 * score bit for bit:
 *   - each level's one-key kernels (amq__score_kernels_at), and the
 *     reference itself against the list's sums;
 *   - float keys side by side, in groups of every size up to the lanes,
 *     of mixed lengths;
 *   - keys that end at an unreadable page, or start right after one: the
 *     kernels read nothing outside the key;
 *   - the public calls under each amq__cpu_cap ceiling, one key and
 *     batch;
 *   - a digest of scores pinned from the scalar scorer as it was before
 *     the vector kernels, so the reference itself cannot drift.
 * A level the machine lacks is reported and skipped.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "core/bits.h"
#include "learned/learned.h"

#define MAX_FEAT (4 * (AMQ_FEATURE_MAX_BYTES + 2) + AMQ__FEAT_SHAPE)

/* The keys every comparison runs over: the edge lengths (empty, one
 * byte, the vector and chunk boundaries, the 256-byte cut and past it),
 * then random lengths; text from a small alphabet rich in separators and
 * digits, or any byte (STX, ETX and zero included). */
static size_t make_key(uint64_t *rng, size_t i, uint8_t *k) {
    static const size_t edge[] = {
        0,  1,  2,  3,  4,  5,  7,  8,   9,   15,  16,  17,  30,  31,  32,
        33, 62, 63, 64, 65, 66, 94, 127, 128, 129, 254, 255, 256, 257, 300};
    static const char text[] = "ab.c/d:e-f_g0123456789tenant/table.row:";
    size_t nedge = sizeof edge / sizeof *edge;
    uint64_t r = check_next(rng);
    size_t len = i < 2 * nedge ? edge[i % nedge]
                 : r % 5 == 0  ? r % 300
                               : 12 + r % 36;
    bool binary = i < 2 * nedge ? i >= nedge : (r >> 20) % 3 == 0;
    for (size_t j = 0; j < len; j++) {
        uint64_t x = check_next(rng);
        k[j] = binary ? (uint8_t)x : (uint8_t)text[x % (sizeof text - 1)];
    }
    return len;
}

/* A model of the given shape with weights from seed: int8 over the
 * whole range; float over many magnitudes, both signs, zeros of both
 * signs and subnormals, so that float sums round at almost every add. */
static amq_model *make_model(bool quant, unsigned bits, unsigned nmax,
                             uint64_t seed) {
    amq_model_config mc, r;
    amq__mem mem;
    amq_model *m = NULL;
    memset(&mc, 0, sizeof mc);
    mc.features.dim_bits = bits;
    mc.features.ngram_max = nmax;
    mc.quantize = quant;
    amq__mem_init(&mem, NULL);
    if (amq__model_config_resolve(&mc, &r) != AMQ_OK ||
        amq__model_alloc(&r, &mem, &m) != AMQ_OK)
        return NULL;
    for (uint32_t i = 0; i < m->dim; i++) {
        uint64_t x = check_next(&seed);
        if (quant) {
            m->q[i] = (int8_t)x;
            continue;
        }
        float f = (float)(int32_t)x * ldexpf(1.0f, -(int)(40 + (x >> 58)));
        if ((x >> 40) % 97 == 0)
            f = (x >> 50) & 1 ? -0.0f : 0.0f;
        else if ((x >> 40) % 89 == 0)
            f = ldexpf((float)((x >> 20) & 0xFF), -140); /* subnormal */
        m->w[i] = f;
    }
    m->scale = 0.0123;
    m->bias = -0.25;
    return m;
}

/* FNV-1a over the bits of every score the model gives the keys. */
static uint64_t score_digest(void) {
    static const unsigned dims[] = {10, 13, 16, 20};
    uint64_t d = 0xcbf29ce484222325ULL;
    uint8_t k[320];
    for (int quant = 0; quant < 2; quant++)
        for (size_t b = 0; b < 4; b++)
            for (unsigned nmax = 1; nmax <= 4; nmax++) {
                amq_model *m = make_model(quant, dims[b], nmax, 100 + b);
                uint64_t rng = 7 * b + nmax;
                for (size_t i = 0; m != NULL && i < 400; i++) {
                    size_t len = make_key(&rng, i, k);
                    double z = amq_model_score(m, k, len);
                    uint64_t bits;
                    memcpy(&bits, &z, sizeof bits);
                    for (int j = 0; j < 8; j++)
                        d = (d ^ ((bits >> (8 * j)) & 0xFF)) * 0x100000001b3ULL;
                }
                amq_model_free(m);
            }
    return d;
}

/* The float sum of the list, in its order: the definition. */
static float list_sum_f(const amq_model *m, const uint8_t *k, size_t len) {
    uint32_t idx[MAX_FEAT];
    int8_t sign[MAX_FEAT];
    size_t n = amq__features(&m->cfg.features, k, len, idx, sign);
    float acc = 0.0f;
    for (size_t i = 0; i < n; i++) {
        float t = (float)sign[i] * m->w[idx[i]];
        acc += t;
    }
    return acc;
}

static int32_t list_sum_q(const amq_model *m, const uint8_t *k, size_t len) {
    uint32_t idx[MAX_FEAT];
    int8_t sign[MAX_FEAT];
    size_t n = amq__features(&m->cfg.features, k, len, idx, sign);
    int32_t acc = 0;
    for (size_t i = 0; i < n; i++)
        acc += sign[i] * m->q[idx[i]];
    return acc;
}

static bool same_f(float a, float b) { return memcmp(&a, &b, sizeof a) == 0; }
static bool same_d(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

static const amq__score_kernels *levels[3];

/* One key through every level: mismatches counted into bad[level]. */
static void one_key(const amq_model *m, const uint8_t *k, size_t len,
                    size_t bad[3]) {
    const amq_feature_config *cfg = &m->cfg.features;
    if (m->q != NULL) {
        int32_t ref = amq__features_dot_q(cfg, k, len, m->q);
        bad[0] += ref != list_sum_q(m, k, len);
        for (int l = 1; l < 3; l++)
            bad[l] +=
                levels[l] != NULL && levels[l]->dot_q(cfg, k, len, m->q) != ref;
        return;
    }
    float ref = amq__features_dot_f(cfg, k, len, m->w);
    bad[0] += !same_f(ref, list_sum_f(m, k, len));
    for (int l = 1; l < 3; l++)
        bad[l] += levels[l] != NULL &&
                  !same_f(levels[l]->dot_f(cfg, k, len, m->w), ref);
}

/* Float keys side by side: groups of g = 1..lanes keys of mixed
 * lengths, each lane against the reference. */
static void side_by_side(const amq_model *m, uint64_t seed, size_t bad[3]) {
    static uint8_t store[AMQ__SCORE_LANES][320];
    for (int l = 1; l < 3; l++) {
        const amq__score_kernels *k = levels[l];
        if (k == NULL)
            continue;
        uint64_t rng = seed;
        for (size_t round = 0; round < (check_quick() ? 8 : 24); round++)
            for (size_t g = 1; g <= k->lanes; g++) {
                const uint8_t *kp[AMQ__SCORE_LANES];
                size_t kl[AMQ__SCORE_LANES];
                float z[AMQ__SCORE_LANES];
                for (size_t j = 0; j < g; j++) {
                    kl[j] = make_key(&rng, round * 31 + j * 7, store[j]);
                    kp[j] = store[j];
                }
                k->batch_f(&m->cfg.features, kp, kl, g, m->w, z);
                for (size_t j = 0; j < g; j++)
                    bad[l] +=
                        !same_f(z[j], amq__features_dot_f(&m->cfg.features,
                                                          kp[j], kl[j], m->w));
            }
    }
}

/* Keys flush against an unreadable page, after and before them. */
static void guarded(const amq_model *m, size_t bad[3]) {
    long pg = sysconf(_SC_PAGESIZE);
    size_t page = pg > 0 ? (size_t)pg : 4096;
    uint8_t *map = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(map != MAP_FAILED);
    if (map == MAP_FAILED)
        return;
    CHECK(mprotect(map, page, PROT_NONE) == 0);
    CHECK(mprotect(map + 2 * page, page, PROT_NONE) == 0);
    uint8_t *mid = map + page;
    uint64_t rng = 99;
    for (size_t len = 0; len <= 300; len++) {
        for (size_t j = 0; j < page; j++)
            mid[j] = (uint8_t)check_next(&rng);
        one_key(m, mid + page - len, len, bad); /* ends at the guard */
        one_key(m, mid, len, bad);              /* starts after one  */
    }
    munmap(map, 3 * page);
}

static void run(bool quant, unsigned bits, unsigned nmax) {
    check_seed = 1000 * bits + 10 * nmax + quant;
    amq_model *m = make_model(quant, bits, nmax, check_seed);
    CHECK(m != NULL);
    if (m == NULL)
        return;
    size_t bad[3] = {0, 0, 0}, nkeys = check_quick() ? 1500 : 6000;
    uint64_t rng = check_seed;
    uint8_t k[320];
    for (size_t i = 0; i < nkeys; i++) {
        size_t len = make_key(&rng, i, k);
        one_key(m, k, len, bad);
    }
    if (!quant)
        side_by_side(m, check_seed, bad);
    if (bits == 16 || bits == AMQ_FEATURE_DIM_BITS_MIN)
        guarded(m, bad);
    static const char *const name[3] = {"reference vs list", "avx2", "avx512"};
    for (int l = 0; l < 3; l++)
        CHECK_MSG(bad[l] == 0, "%s %s dim_bits %u ngram_max %u: %zu differ",
                  name[l], quant ? "int8" : "float", bits, nmax, bad[l]);
    amq_model_free(m);
}

/* The public calls under each ceiling give the scalar ceiling's scores,
 * one key at a time and in batches (which sort float keys by length). */
static void public_calls(bool quant) {
    enum { N = 3000 };
    static uint8_t bytes[N * 300];
    static uint64_t off[N + 1];
    static double ref[N], one[N], batch[N];
    check_seed = 77 + quant;
    amq_model *m = make_model(quant, 14, 4, check_seed);
    CHECK(m != NULL);
    if (m == NULL)
        return;
    uint64_t rng = check_seed;
    off[0] = 0;
    for (size_t i = 0; i < N; i++)
        off[i + 1] = off[i] + make_key(&rng, i, bytes + off[i]);
    amq_keys keys = {bytes, off, N};
    amq__cpu_cap(AMQ__CPU_SCALAR);
    CHECK(amq__score_kernels_best() == amq__score_kernels_at(AMQ__CPU_SCALAR));
    for (size_t i = 0; i < N; i++)
        ref[i] = amq_model_score(m, bytes + off[i], off[i + 1] - off[i]);
    static const int caps[] = {AMQ__CPU_SCALAR, AMQ__CPU_AVX2, AMQ__CPU_AVX512,
                               AMQ__CPU_MAX};
    for (size_t c = 0; c < sizeof caps / sizeof *caps; c++) {
        amq__cpu_cap(caps[c]);
        amq_model_score_batch(m, &keys, batch);
        size_t bad = 0;
        for (size_t i = 0; i < N; i++) {
            one[i] = amq_model_score(m, bytes + off[i], off[i + 1] - off[i]);
            bad += !same_d(one[i], ref[i]) || !same_d(batch[i], ref[i]);
        }
        CHECK_MSG(bad == 0, "%s under ceiling %d: %zu of %d differ",
                  quant ? "int8" : "float", caps[c], bad, N);
    }
    amq__cpu_cap(AMQ__CPU_MAX);
    amq_model_free(m);
}

int main(void) {
    static const unsigned dims[] = {10, 12, 14, 16, 18, 20};
    static const char *const name[3] = {"scalar", "avx2", "avx512"};
    static const int level[3] = {AMQ__CPU_SCALAR, AMQ__CPU_AVX2,
                                 AMQ__CPU_AVX512};
    for (int l = 0; l < 3; l++) {
        levels[l] = amq__score_kernels_at(level[l]);
        printf("test_score: %s kernels %s\n", name[l],
               levels[l] != NULL ? "tested" : "absent on this machine");
    }
    CHECK(levels[0] != NULL);
    for (int quant = 0; quant < 2; quant++)
        for (size_t b = 0; b < sizeof dims / sizeof *dims; b++)
            for (unsigned nmax = 1; nmax <= 4; nmax++)
                if (!check_quick() || nmax == 4 || dims[b] == 14)
                    run(quant, dims[b], nmax);
    public_calls(false);
    public_calls(true);
    /* what the scalar scorer gave before the vector kernels existed */
    check_seed = 0;
    uint64_t d = score_digest();
    CHECK_MSG(d == 0x16992b465bb21a4fULL, "score digest %016llx",
              (unsigned long long)d);
    return check_report("test_score");
}
