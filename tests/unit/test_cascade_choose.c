/*
 * test_cascade_choose.c — what training chooses by itself
 * (amq_cascade_config.choose): never more bytes than the best plain
 * filter at the same target, a learned cascade where the scorer pays,
 * pinned choices honoured, the worst-case cap and the fallback, and out
 * of memory anywhere in the search leaving nothing behind.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cascade_gen.h"
#include "check.h"

static amq_cascade_config quick_config(double fpr) {
    amq_cascade_config cfg;
    amq_cascade_config_init(&cfg);
    cfg.model.epochs = 3;
    cfg.model.seed = 5;
    cfg.fpr = fpr;
    return cfg;
}

static size_t file_bytes(const amq_cascade *c) {
    return amq_cascade_save_size(c);
}

/* The file bytes of a plain filter of type over the members at fpr (what
 * a user would build instead); SIZE_MAX when it does not reach fpr. */
static size_t plain_bytes_at(const gen_keys *m, const char *type, double fpr) {
    amq_hasher h;
    CHECK_OK(amq_hasher_init(&h, AMQ_HASH_XXH3, 0, NULL));
    uint64_t *hs = malloc(m->k.n * sizeof *hs);
    for (size_t i = 0; i < m->k.n; i++)
        hs[i] = amq_hash64(&h, m->k.bytes + m->k.offsets[i],
                           (size_t)(m->k.offsets[i + 1] - m->k.offsets[i]));
    size_t b = SIZE_MAX;
    amq_filter *f = NULL;
    if (amq_filter_build(type, hs, m->k.n, fpr, NULL, &f, NULL) == AMQ_OK &&
        amq_filter_fpr_bound(f) <= fpr)
        b = amq_filter_serialized_size(f);
    amq_filter_free(f);
    free(hs);
    return b;
}

static size_t best_plain_bytes(const gen_keys *m, double fpr) {
    static const char *const types[] = {"ribbon", "fuse8", "fuse16",
                                        "xor8",   "xor16", "blocked"};
    size_t best = SIZE_MAX;
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        size_t b = plain_bytes_at(m, types[t], fpr);
        best = b < best ? b : best;
    }
    return best;
}

static void check_members(const amq_cascade *c, const gen_keys *m) {
    size_t missed = 0;
    for (size_t i = 0; i < m->k.n; i++)
        missed += !amq_cascade_contains(
            c, m->k.bytes + m->k.offsets[i],
            (size_t)(m->k.offsets[i + 1] - m->k.offsets[i]));
    CHECK_MSG(missed == 0, "%zu false negatives", missed);
}

/* Few members: no model pays for itself; the plain filter is kept, as
 * small as the best one a user could build, and it loads as that filter. */
static void test_small_set_is_plain(void) {
    gen_keys m, n;
    gen_hosts(11, 2000, 6000, 0.0, &m, &n);
    amq_cascade_config cfg = quick_config(0.01);
    amq_cascade *c = NULL;
    CHECK_OK(amq_cascade_train(&m.k, &n.k, &cfg, NULL, &c, NULL));
    CHECK(amq_cascade_is_plain(c));
    CHECK(amq_cascade_model(c) == NULL);
    check_members(c, &m);
    CHECK(amq_cascade_fpr_bound(c) <= 0.01);
    size_t plain = best_plain_bytes(&m, 0.01);
    CHECK_MSG(file_bytes(c) <= plain, "%zu bytes, best plain %zu",
              file_bytes(c), plain);
    amq_cascade_stats s;
    amq_cascade_get_stats(c, &s, NULL, 0, NULL);
    CHECK(s.plain && s.worst_case_bound == s.fpr_bound && s.model_id == 0);
    CHECK(s.plain_bytes == (double)file_bytes(c));
    /* its file is a filter's frame */
    size_t len = file_bytes(c), w;
    uint8_t *buf = malloc(len);
    CHECK_OK(amq_cascade_save(c, buf, len, &w));
    amq_filter *f = NULL;
    CHECK_OK(amq_filter_load(buf, len, NULL, &f, NULL));
    for (size_t i = 0; i < n.k.n; i++) {
        const uint8_t *k = n.k.bytes + n.k.offsets[i];
        size_t l = (size_t)(n.k.offsets[i + 1] - n.k.offsets[i]);
        CHECK(amq_filter_contains(f, k, l) == amq_cascade_contains(c, k, l));
    }
    amq_filter_free(f);
    /* a rebuild of a plain cascade is a plain filter of the new set */
    amq_cascade *r = NULL;
    CHECK_OK(amq_cascade_rebuild(c, &n.k, &m.k, &m.k, &r, NULL));
    CHECK(r != NULL && amq_cascade_is_plain(r));
    check_members(r, &n);
    amq_cascade_free(r);
    free(buf);
    amq_cascade_free(c);
    gen_free(&m);
    gen_free(&n);
}

/* A separable set: a learned cascade, smaller than the plain filter it
 * was compared with, no false negatives, the bound within the target. */
static void test_learned_wins(void) {
    gen_keys m, n;
    gen_hosts(12, 30000, 60000, 0.0, &m, &n);
    amq_cascade_config cfg = quick_config(0.01);
    amq_cascade *c = NULL;
    CHECK_OK(amq_cascade_train(&m.k, &n.k, &cfg, NULL, &c, NULL));
    amq_cascade_stats s;
    amq_cascade_get_stats(c, &s, NULL, 0, NULL);
    CHECK(!s.plain && amq_cascade_model(c) != NULL);
    CHECK(s.plain_bytes > (double)file_bytes(c));
    CHECK(s.plain_bytes == (double)best_plain_bytes(&m, 0.01));
    CHECK(s.fpr_bound <= 0.01);
    check_members(c, &m);
    /* the model is one the search allows: 2^8..2^18 int8, or float */
    const amq_model_config *mc = amq_model_config_of(amq_cascade_model(c));
    CHECK(mc->features.dim_bits >= 8 && mc->features.dim_bits <= 18);
    /* the plain size survives the frame */
    size_t len = file_bytes(c), w;
    uint8_t *buf = malloc(len);
    CHECK_OK(amq_cascade_save(c, buf, len, &w));
    amq_cascade *l = NULL;
    CHECK_OK(amq_cascade_load(buf, len, NULL, &l, NULL));
    amq_cascade_stats t;
    amq_cascade_get_stats(l, &t, NULL, 0, NULL);
    CHECK(t.plain_bytes == s.plain_bytes && !t.plain);
    amq_cascade_free(l);
    free(buf);
    amq_cascade_free(c);

    /* pinned: residual, model shape and bins as given, no plain filter */
    cfg.choose = 0;
    cfg.residual = "blocked";
    cfg.model.features.dim_bits = 12;
    cfg.model.quantize = true;
    cfg.bins = 64;
    CHECK_OK(amq_cascade_train(&m.k, &n.k, &cfg, NULL, &c, NULL));
    amq_cascade_level lv[AMQ_CASCADE_MAX_LEVELS + 1];
    size_t nl = 0;
    amq_cascade_get_stats(c, &s, lv, AMQ_CASCADE_MAX_LEVELS + 1, &nl);
    CHECK(s.model_bytes >= 4096 && s.model_bytes < 8192 && s.bins <= 64);
    CHECK(s.plain_bytes == 0.0);
    for (size_t i = 0; i < nl; i++)
        CHECK(lv[i].spec[0] == 0 || strncmp(lv[i].spec, "m=", 2) == 0 ||
              strstr(lv[i].spec, "blocks") != NULL || lv[i].bytes > 0);
    amq_cascade_free(c);
    gen_free(&m);
    gen_free(&n);
}

/* Never worse than plain at a memory target either: the bound is at most
 * the best plain filter's at the same bytes. */
static void test_memory_target(void) {
    gen_keys m, n;
    gen_hosts(13, 3000, 9000, 1.0, &m, &n); /* unlearnable */
    amq_cascade_config cfg = quick_config(0.0);
    cfg.bits_per_key = 8.0;
    amq_cascade *c = NULL;
    CHECK_OK(amq_cascade_train(&m.k, &n.k, &cfg, NULL, &c, NULL));
    CHECK(8.0 * (double)file_bytes(c) / (double)m.k.n <= 8.0 + 1e-9);
    /* the best ribbon whose file fits, on a 2% grid of rates */
    double ribbon = 1.0;
    for (double e = 1e-3; e < 0.5 && ribbon == 1.0; e *= 1.02)
        if (plain_bytes_at(&m, "ribbon", e) * 8.0 <= 8.0 * (double)m.k.n)
            ribbon = e;
    CHECK_MSG(amq_cascade_fpr_bound(c) <= ribbon * 1.02,
              "bound %g, the best ribbon that fits %g",
              amq_cascade_fpr_bound(c), ribbon);
    check_members(c, &m);
    amq_cascade_free(c);
    gen_free(&m);
    gen_free(&n);
}

/* The cap: an initial filter at rate E in front; the bound is E times the
 * learned route's; the fallback answers with it alone. */
static void test_worst_case(void) {
    gen_keys m, n;
    gen_hosts(14, 20000, 40000, 0.0, &m, &n);
    amq_cascade_config cfg = quick_config(0.01);
    cfg.worst_case = 0.1;
    cfg.choose &= ~AMQ_CHOOSE_PLAIN;
    amq_cascade *c = NULL;
    CHECK_OK(amq_cascade_train(&m.k, &n.k, &cfg, NULL, &c, NULL));
    amq_cascade_stats s;
    amq_cascade_get_stats(c, &s, NULL, 0, NULL);
    CHECK(s.front_bytes > 0);
    CHECK_MSG(s.worst_case_bound <= 0.1 && s.fpr_bound <= 0.01,
              "cap %g, bound %g", s.worst_case_bound, s.fpr_bound);
    CHECK(fabs(s.fpr_bound - s.learned_bound) < 1e-15 && !s.fallback);
    check_members(c, &m);
    CHECK_OK(amq_cascade_set_fallback(c, true));
    CHECK(amq_cascade_fallback(c));
    CHECK(amq_cascade_fpr_bound(c) == s.worst_case_bound);
    check_members(c, &m);
    /* fresh keys of any shape pass the front alone at about its rate */
    size_t fp = 0, trials = 20000;
    for (size_t i = 0; i < trials; i++) {
        char k[32];
        int l = snprintf(k, sizeof k, "zz-%zu.example", i);
        fp += amq_cascade_contains(c, k, (size_t)l);
    }
    double rate = (double)fp / (double)trials, cap = s.worst_case_bound;
    CHECK_MSG(rate <= cap + 4 * sqrt(cap * (1 - cap) / (double)trials),
              "fallback rate %g above cap %g", rate, cap);
    /* the flag is in the frame */
    size_t len = file_bytes(c), w;
    uint8_t *buf = malloc(len);
    CHECK_OK(amq_cascade_save(c, buf, len, &w));
    amq_cascade *l = NULL;
    CHECK_OK(amq_cascade_load(buf, len, NULL, &l, NULL));
    CHECK(amq_cascade_fallback(l));
    amq_cascade_free(l);
    free(buf);
    amq_cascade_free(c);
    /* a cap at or below the target is refused; no cap, no fallback */
    cfg.worst_case = 0.005;
    CHECK_STATUS(amq_cascade_train(&m.k, &n.k, &cfg, NULL, &c, NULL),
                 AMQ_ERR_INVALID);
    cfg.worst_case = 0.0;
    CHECK_OK(amq_cascade_train(&m.k, &n.k, &cfg, NULL, &c, NULL));
    CHECK_STATUS(amq_cascade_set_fallback(c, true), AMQ_ERR_UNSUPPORTED);
    CHECK(!amq_cascade_fallback(c));
    amq_cascade_free(c);
    gen_free(&m);
    gen_free(&n);
}

/* Out of memory at any allocation of the search (plain filters, every
 * model, every candidate): AMQ_ERR_NOMEM, nothing out, nothing leaked. A
 * small set keeps the search short. */
static void test_oom(void) {
    gen_keys m, n;
    gen_hosts(15, 300, 900, 0.0, &m, &n);
    amq_cascade_config cfg = quick_config(0.05);
    cfg.model.epochs = 1;
    oom_ctx ctx = {0, 0, 0};
    amq_allocator al = {oom_alloc, oom_realloc, oom_free, &ctx};
    amq_options opt = {.allocator = &al};
    amq_cascade *c = NULL;
    CHECK_OK(amq_cascade_train(&m.k, &n.k, &cfg, &opt, &c, NULL));
    amq_cascade_free(c);
    CHECK(ctx.live == 0);
    unsigned long total = ctx.calls, step = check_quick() ? 13 : 3;
    for (unsigned long k = 1; k <= total; k += step) {
        ctx = (oom_ctx){0, k, 0};
        c = NULL;
        amq_status st = amq_cascade_train(&m.k, &n.k, &cfg, &opt, &c, NULL);
        CHECK_MSG(st == AMQ_ERR_NOMEM && c == NULL, "call %lu of %lu: %s", k,
                  total, amq_strerror(st));
        amq_cascade_free(c);
        CHECK_MSG(ctx.live == 0, "call %lu: %lld bytes leaked", k, ctx.live);
    }
    gen_free(&m);
    gen_free(&n);
}

int main(void) {
    test_small_set_is_plain();
    test_learned_wins();
    test_memory_target();
    test_worst_case();
    test_oom();
    return check_report("test_cascade_choose");
}
