/*
 * test_cascade.c — the learned cascade end to end (amq/cascade.h), on
 * small synthetic host names (cascade_gen.h):
 *
 *   - every method (cascade, lbf, sandwich, plbf), both targets (fpr,
 *     bits per key): no member is rejected, the certified bound meets the
 *     fpr target (or the memory meets the budget), and the measured rate
 *     on fresh non-members stays within the bound plus sampling slack;
 *   - the features are deterministic, the batch scorer equals the scalar
 *     one, the int8 model's score is an exact integer sum, calibration is
 *     monotone, and the model ranks well (AUC);
 *   - the reject tail rejects at most δ of the members;
 *   - updates against a model set: adds, removals of built and added keys
 *     (counting residuals remove, sbbf counts stale up to max_stale),
 *     whole-bin activation in both safe directions and the refusal of an
 *     unsafe one; after every step every live member is found;
 *   - scores of another model version are refused; a rebuild is a new
 *     version;
 *   - the frame: save/load round-trips to identical bytes and answers,
 *     through memory and through a file (atomic save, AMQ_ERR_IO with the
 *     path when the directory is missing),
 *     every truncation and sampled bit flips are rejected, a plain filter
 *     frame is refused as "not a cascade";
 *   - bad input: empty sets, overlapping sets (the count is reported), an
 *     unreachable target.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cascade_gen.h"
#include "check.h"
#include "learned/learned.h"

static amq_cascade_config base_config(void) {
    amq_cascade_config cfg;
    amq_cascade_config_init(&cfg);
    cfg.model.features.dim_bits = 14;
    cfg.model.epochs = 3;
    cfg.bins = 64;
    cfg.fpr = 0.01;
    cfg.model.seed = 7;
    cfg.choose = 0; /* these tests pin the learned route's parameters */
    return cfg;
}

static size_t quick(size_t n) { return check_quick() ? n / 2 : n; }

/* The route table answers every score as the search of the bins does:
 * at each edge, either side of it, between edges, and off the ends. */
static void check_routes(const amq_cascade *c) {
    const double odd[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1e300};
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++)
        CHECK(amq__cascade_route(c, odd[i]) ==
              amq__cascade_route_bins(c, odd[i]));
    for (uint32_t b = 0; b + 1 < c->bins; b++) {
        double e = c->edges[b];
        const double z[] = {e, nextafter(e, -INFINITY), nextafter(e, INFINITY),
                            b + 2 < c->bins ? 0.5 * (e + c->edges[b + 1]) : e};
        for (int j = 0; j < 4; j++)
            CHECK_MSG(amq__cascade_route(c, z[j]) ==
                          amq__cascade_route_bins(c, z[j]),
                      "route of %.17g (edge %u of %u)", z[j], b, c->bins);
    }
}

/* Batch and one-key answers agree on keys of every length, including
 * keys longer than a batch gathers for scoring behind a front filter. */
static void check_long_keys(const amq_cascade *c, const gen_keys *fresh) {
    enum { N = 300 };
    static uint8_t bytes[N * 48 + 9000 + 5000 + 7000];
    uint64_t off[N + 1];
    off[0] = 0;
    for (size_t i = 0; i < N; i++) {
        size_t j = i % fresh->k.n,
               len = fresh->k.offsets[j + 1] - fresh->k.offsets[j];
        if (i == 100 || i == 200 || i == 201)
            len = i == 100 ? 9000 : i == 200 ? 5000 : 7000;
        else if (len > 48)
            len = 48;
        for (size_t t = 0; t < len; t++)
            bytes[off[i] + t] = i == 100 || (i >= 200 && i <= 201)
                                    ? (uint8_t)('a' + (t * 7 + i) % 26)
                                    : fresh->k.bytes[fresh->k.offsets[j] + t];
        off[i + 1] = off[i] + len;
    }
    amq_keys k = {bytes, off, N};
    uint8_t out[N];
    amq_cascade_contains_batch(c, &k, out);
    for (size_t i = 0; i < N; i++)
        CHECK_MSG(out[i] == amq_cascade_contains(c, bytes + off[i],
                                                 off[i + 1] - off[i]),
                  "key %zu of length %llu", i,
                  (unsigned long long)(off[i + 1] - off[i]));
}

/* Members all found; fresh non-members' rate within the bound + slack. */
static void check_answers(const amq_cascade *c, const gen_keys *m,
                          const gen_keys *fresh, const char *what) {
    size_t fn = 0, fp = 0;
    for (size_t i = 0; i < m->k.n; i++) {
        size_t len;
        const uint8_t *p = m->k.bytes + m->k.offsets[i];
        len = m->k.offsets[i + 1] - m->k.offsets[i];
        fn += !amq_cascade_contains(c, p, len);
    }
    uint8_t *out = malloc(fresh->k.n);
    amq_cascade_contains_batch(c, &fresh->k, out);
    for (size_t i = 0; i < fresh->k.n; i++) {
        const uint8_t *p = fresh->k.bytes + fresh->k.offsets[i];
        size_t len = fresh->k.offsets[i + 1] - fresh->k.offsets[i];
        CHECK(out[i] == amq_cascade_contains(c, p, len));
        fp += out[i];
    }
    free(out);
    check_routes(c);
    check_long_keys(c, fresh);
    double bound = amq_cascade_fpr_bound(c), n = (double)fresh->k.n;
    double slack = 3.5 * sqrt(bound * (1 - bound) / n) + 3.0 / n;
    CHECK_MSG(fn == 0, "%s: %zu false negatives", what, fn);
    CHECK_MSG(fp / n <= bound + slack, "%s: measured %g > bound %g", what,
              fp / n, bound);
}

static void test_methods(void) {
    gen_keys m, n, fm, fresh;
    check_seed = 21;
    gen_hosts(21, quick(3000), quick(30000), 0.2, &m, &n);
    gen_hosts(22, 1, quick(20000), 0.2, &fm, &fresh);
    const amq_learned_method methods[] = {AMQ_LEARNED_CASCADE, AMQ_LEARNED_LBF,
                                          AMQ_LEARNED_SANDWICH,
                                          AMQ_LEARNED_PLBF};
    for (int t = 0; t < 4; t++)
        for (int target = 0; target < 2; target++) {
            amq_cascade_config cfg = base_config();
            cfg.method = methods[t];
            if (target == 1) { /* a model small enough for the budget */
                cfg.fpr = 0;
                cfg.bits_per_key = 24;
                cfg.model.features.dim_bits = 10;
                cfg.model.quantize = true;
            }
            amq_cascade *c = NULL;
            amq_diag d = {0, ""};
            CHECK_OK(amq_cascade_train(&m.k, &n.k, &cfg, NULL, &c, &d));
            if (c == NULL) {
                fprintf(stderr, "%s: %s\n", amq_learned_method_name(methods[t]),
                        d.message);
                continue;
            }
            amq_cascade_stats s;
            amq_cascade_get_stats(c, &s, NULL, 0, NULL);
            if (target == 0)
                CHECK_MSG(s.fpr_bound <= 0.01, "%s bound %g",
                          amq_learned_method_name(methods[t]), s.fpr_bound);
            else
                CHECK_MSG(s.bits_per_key <= 24.0, "%s bits %g",
                          amq_learned_method_name(methods[t]), s.bits_per_key);
            CHECK(s.method == methods[t]);
            CHECK(s.fpr_estimate <= s.fpr_bound);
            CHECK(methods[t] != AMQ_LEARNED_LBF || s.levels == 1);
            CHECK(methods[t] != AMQ_LEARNED_SANDWICH || s.front_bytes > 0 ||
                  s.front_eps == 0.0);
            check_answers(c, &m, &fresh, amq_learned_method_name(methods[t]));
            amq_cascade_free(c);
        }
    gen_free(&m);
    gen_free(&n);
    gen_free(&fm);
    gen_free(&fresh);
}

static void test_model(void) {
    gen_keys m, n;
    check_seed = 31;
    gen_hosts(31, 3000, 9000, 0.1, &m, &n);
    amq_model_config mc = base_config().model;
    for (int quant = 0; quant < 2; quant++) {
        mc.quantize = quant;
        mc.calibration = quant ? AMQ_CALIB_ISOTONIC : AMQ_CALIB_PLATT;
        amq_model *a = NULL, *b = NULL;
        CHECK_OK(amq_model_train(&m.k, &n.k, &m.k, &n.k, &mc, NULL, &a));
        CHECK_OK(amq_model_train(&m.k, &n.k, &m.k, &n.k, &mc, NULL, &b));
        if (a == NULL || b == NULL)
            return;
        CHECK(amq_model_id(a) == amq_model_id(b)); /* deterministic */
        double auc = 0;
        CHECK_OK(amq_model_auc(a, &m.k, &n.k, &auc));
        CHECK_MSG(auc > 0.8, "auc %g", auc);
        double *z = malloc(n.k.n * sizeof *z);
        amq_model_score_batch(a, &n.k, z);
        uint32_t idx[2048];
        int8_t sign[2048];
        for (size_t i = 0; i < n.k.n; i++) {
            const uint8_t *p = n.k.bytes + n.k.offsets[i];
            size_t len = n.k.offsets[i + 1] - n.k.offsets[i], nf = 0;
            CHECK(z[i] == amq_model_score(a, p, len));
            if (i < 300) { /* the fused scorer equals the list's sum */
                CHECK_OK(
                    amq_features(&mc.features, p, len, idx, sign, 2048, &nf));
                CHECK(nf == 4 * (len + 2) - 6 + 13);
                CHECK(z[i] == amq__model_dot(a, idx, sign, nf));
                int32_t acc = 0; /* int8: an exact integer sum */
                for (size_t f = 0; quant && f < nf; f++)
                    acc += sign[f] * a->q[idx[f]];
                CHECK(!quant || z[i] == (double)acc * a->scale + a->bias);
            }
        }
        for (double r = -20; r < 20; r += 0.5)
            CHECK(amq_model_probability(a, r) <=
                  amq_model_probability(a, r + 0.5));
        free(z);
        amq_model_free(a);
        amq_model_free(b);
    }
    gen_free(&m);
    gen_free(&n);
}

static void test_reject_tail(void) {
    gen_keys m, n;
    check_seed = 41;
    gen_hosts(41, quick(3000), quick(20000), 0.2, &m, &n);
    amq_cascade_config cfg = base_config();
    cfg.tail = AMQ_TAIL_REJECT;
    cfg.delta = 0.05;
    amq_cascade *c = NULL;
    CHECK_OK(amq_cascade_train(&m.k, &n.k, &cfg, NULL, &c, NULL));
    if (c != NULL) {
        amq_cascade_stats s;
        amq_cascade_get_stats(c, &s, NULL, 0, NULL);
        size_t miss = 0;
        for (size_t i = 0; i < m.k.n; i++)
            miss += !amq_cascade_contains(c, m.k.bytes + m.k.offsets[i],
                                          m.k.offsets[i + 1] - m.k.offsets[i]);
        CHECK(s.tail_fnr <= 0.05);
        CHECK_MSG(miss <= (size_t)(0.05 * s.members) + 1, "%zu missed", miss);
        CHECK(s.reject_bins > 0);
        CHECK(s.fpr_bound <= 0.01);
        amq_cascade_free(c);
    }
    gen_free(&m);
    gen_free(&n);
}

static void test_updates(void) {
    gen_keys m, n, extra, junk;
    check_seed = 51;
    gen_hosts(51, quick(2000), quick(16000), 0.2, &m, &n);
    gen_hosts(52, 300, 1, 0.2, &extra, &junk);
    const char *specs[2] = {"counting", "sbbf"};
    for (int t = 0; t < 2; t++) {
        amq_cascade_config cfg = base_config();
        cfg.residual = specs[t];
        cfg.aux_capacity = 400;
        cfg.aux = specs[t];
        cfg.headroom = 4;
        cfg.max_stale = 150;
        amq_cascade *c = NULL;
        CHECK_OK(amq_cascade_train(&m.k, &n.k, &cfg, NULL, &c, NULL));
        if (c == NULL)
            continue;
        /* model set: live[i] for the built members, then the extra keys */
        size_t total = m.k.n + extra.k.n;
        uint8_t *live = calloc(total, 1);
        memset(live, 1, m.k.n);
        uint64_t s = 99 + t;
        amq_status last = AMQ_OK;
        for (int step = 0; step < 900; step++) {
            size_t i = check_next(&s) % total;
            const gen_keys *g = i < m.k.n ? &m : &extra;
            size_t j = i < m.k.n ? i : i - m.k.n;
            const uint8_t *p = g->k.bytes + g->k.offsets[j];
            size_t len = g->k.offsets[j + 1] - g->k.offsets[j];
            amq_origin o = i < m.k.n ? AMQ_ORIGIN_BUILT : AMQ_ORIGIN_ADDED;
            amq_cascade_stats before, after;
            amq_cascade_get_stats(c, &before, NULL, 0, NULL);
            if (!live[i] && i >= m.k.n) {
                last = amq_cascade_add(c, p, len);
                live[i] = last == AMQ_OK;
            } else if (live[i]) {
                last = amq_cascade_remove(c, p, len, o);
                if (last == AMQ_OK)
                    live[i] = 0;
            }
            amq_cascade_get_stats(c, &after, NULL, 0, NULL);
            if (last != AMQ_OK) /* a refused update changes nothing */
                CHECK(after.fpr_bound == before.fpr_bound &&
                      after.stale == before.stale &&
                      after.removed == before.removed);
            if (step % 100 == 0) {
                uint32_t b =
                    (uint32_t)(check_next(&s) % (after.max_accept_bin + 1));
                CHECK_OK(amq_cascade_set_accept_bin(c, b));
                check_routes(c);
                CHECK_STATUS(
                    amq_cascade_set_accept_bin(c, after.max_accept_bin + 1),
                    AMQ_ERR_INVALID);
            }
            for (size_t q = 0; q < total; q += 7) {
                const gen_keys *gq = q < m.k.n ? &m : &extra;
                size_t jq = q < m.k.n ? q : q - m.k.n;
                if (live[q])
                    CHECK_MSG(amq_cascade_contains(
                                  c, gq->k.bytes + gq->k.offsets[jq],
                                  gq->k.offsets[jq + 1] - gq->k.offsets[jq]),
                              "%s step %d key %zu", specs[t], step, q);
            }
        }
        amq_cascade_stats st;
        amq_cascade_get_stats(c, &st, NULL, 0, NULL);
        CHECK(t == 0 ? st.stale == 0 : st.stale > 0);
        CHECK(st.stale <= 150);
        CHECK(st.added > 0 && st.removed > 0);
        CHECK(st.aux_eps > 0.0);
        free(live);
        amq_cascade_free(c);
    }
    gen_free(&m);
    gen_free(&n);
    gen_free(&extra);
    gen_free(&junk);
}

static uint8_t *save(const amq_cascade *c, size_t *len) {
    size_t n = amq_cascade_save_size(c);
    uint8_t *buf = malloc(n);
    CHECK_OK(amq_cascade_save(c, buf, n, len));
    CHECK(*len == n);
    return buf;
}

static void test_frame_and_versions(void) {
    gen_keys m, n;
    check_seed = 61;
    gen_hosts(61, quick(1500), quick(12000), 0.2, &m, &n);
    amq_cascade_config cfg = base_config();
    cfg.model.quantize = true;
    cfg.model.calibration = AMQ_CALIB_ISOTONIC;
    cfg.aux_capacity = 50;
    amq_cascade *c = NULL, *d = NULL, *r = NULL;
    CHECK_OK(amq_cascade_train(&m.k, &n.k, &cfg, NULL, &c, NULL));
    if (c == NULL)
        return;
    size_t len, len2;
    /* a training is reproducible to the byte: a second one on the same
     * keys and configuration saves the same frame (its time is not in it) */
    CHECK_OK(amq_cascade_train(&m.k, &n.k, &cfg, NULL, &r, NULL));
    if (r != NULL) {
        uint8_t *one = save(c, &len), *two = save(r, &len2);
        CHECK(len2 == len && memcmp(one, two, len) == 0);
        free(one);
        free(two);
        amq_cascade_free(r);
        r = NULL;
    }
    CHECK_OK(amq_cascade_add(c, "late.key", 8));
    uint8_t *buf = save(c, &len);
    CHECK_OK(amq_cascade_load(buf, len, NULL, &d, NULL));
    if (d != NULL) {
        uint8_t *again = save(d, &len2);
        CHECK(len2 == len && memcmp(buf, again, len) == 0);
        free(again);
        CHECK(amq_cascade_fpr_bound(d) == amq_cascade_fpr_bound(c));
        CHECK(amq_cascade_contains(d, "late.key", 8));
        for (size_t i = 0; i < n.k.n; i += 3) {
            const uint8_t *p = n.k.bytes + n.k.offsets[i];
            size_t l = n.k.offsets[i + 1] - n.k.offsets[i];
            CHECK(amq_cascade_contains(c, p, l) ==
                  amq_cascade_contains(d, p, l));
        }
    }
    /* through a file: identical bytes back; a missing directory is
     * AMQ_ERR_IO naming the path, with no file left behind */
    char path[] = "/tmp/amq-test-cascade-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd >= 0) {
        close(fd);
        amq_cascade *e = NULL;
        CHECK_OK(amq_cascade_save_file(c, path, NULL));
        CHECK_OK(amq_cascade_load_file(path, NULL, &e, NULL));
        if (e != NULL) {
            uint8_t *again = save(e, &len2);
            CHECK(len2 == len && memcmp(buf, again, len) == 0);
            free(again);
        }
        amq_cascade_free(e);
        unlink(path);
        amq_diag dg = {0, ""};
        CHECK_STATUS(amq_cascade_load_file(path, NULL, &e, &dg), AMQ_ERR_IO);
        CHECK(e == NULL && strstr(dg.message, path) != NULL);
        CHECK_STATUS(
            amq_cascade_save_file(c, "/nonexistent-amq-dir/c.amq", &dg),
            AMQ_ERR_IO);
        CHECK(strstr(dg.message, "/nonexistent-amq-dir") != NULL);
    }
    /* truncations and bit flips */
    for (size_t cut = 0; cut < len; cut += 1 + len / 300) {
        amq_cascade *x = NULL;
        CHECK(amq_cascade_load(buf, cut, NULL, &x, NULL) != AMQ_OK &&
              x == NULL);
    }
    uint64_t s = 5;
    for (int i = 0; i < 300; i++) {
        size_t at = check_next(&s) % len;
        buf[at] ^= (uint8_t)(1u << (check_next(&s) % 8));
        amq_cascade *x = NULL;
        CHECK(amq_cascade_load(buf, len, NULL, &x, NULL) != AMQ_OK &&
              x == NULL);
        free(buf);
        buf = save(c, &len);
    }
    free(buf);
    /* a filter's frame is a plain cascade: the same answers, the same
     * bytes back, the filter's bound */
    amq_filter *f = NULL;
    CHECK_OK(amq_filter_new("sbbf", 100, 0.01, NULL, &f, NULL));
    for (int i = 0; i < 100; i++)
        CHECK_OK(amq_filter_add(f, &i, sizeof i));
    size_t fl = amq_filter_serialized_size(f), w;
    uint8_t *fb = malloc(fl);
    CHECK_OK(amq_filter_save(f, fb, fl, &w));
    amq_cascade *x = NULL;
    amq_diag dg = {0, ""};
    CHECK_OK(amq_cascade_load(fb, fl, NULL, &x, &dg));
    CHECK(amq_cascade_is_plain(x));
    for (int i = 0; i < 2000; i++)
        CHECK(amq_cascade_contains(x, &i, sizeof i) ==
              amq_filter_contains(f, &i, sizeof i));
    CHECK(amq_cascade_fpr_bound(x) == amq_filter_fpr_bound(f));
    size_t xl = 0;
    uint8_t *xb = save(x, &xl);
    CHECK(xl == fl && memcmp(xb, fb, fl) == 0);
    free(xb);
    amq_cascade_free(x);
    amq_filter_free(f);
    free(fb);
    /* a clock's frame is not */
    amq_clock *clk = NULL;
    CHECK_OK(amq_clock_new_bloom(64, 3, 0, NULL, &clk));
    size_t cl = amq_clock_save_size(clk);
    uint8_t *cb = malloc(cl);
    CHECK_OK(amq_clock_save(clk, cb, cl, &w));
    CHECK_STATUS(amq_cascade_load(cb, cl, NULL, &x, &dg), AMQ_ERR_KIND);
    CHECK(x == NULL);
    free(cb);
    amq_clock_free(clk);
    /* versions: a rebuild is a new version; foreign scores are refused */
    CHECK_OK(amq_cascade_rebuild(c, &m.k, &n.k, &n.k, &r, NULL));
    if (r != NULL) {
        amq_cascade_stats s1, s2;
        amq_cascade_get_stats(c, &s1, NULL, 0, NULL);
        amq_cascade_get_stats(r, &s2, NULL, 0, NULL);
        CHECK(s2.version == s1.version + 1 && s2.model_id == s1.model_id);
        CHECK(!amq_cascade_contains(r, "late.key", 8) ||
              amq_cascade_fpr_bound(r) > 0);
    }
    amq_score sc = amq_cascade_score(c, "x.y", 3);
    bool ans;
    CHECK_OK(amq_cascade_contains_scored(c, "x.y", 3, &sc, &ans));
    CHECK(ans == amq_cascade_contains(c, "x.y", 3));
    sc.model_id ^= 1;
    CHECK_STATUS(amq_cascade_contains_scored(c, "x.y", 3, &sc, &ans),
                 AMQ_ERR_INCOMPATIBLE);
    amq_cascade_free(c);
    amq_cascade_free(d);
    amq_cascade_free(r);
    gen_free(&m);
    gen_free(&n);
}

static void test_bad_input(void) {
    gen_keys m, n;
    check_seed = 71;
    gen_hosts(71, 500, 4000, 0.2, &m, &n);
    amq_cascade_config cfg = base_config();
    amq_cascade *c = NULL;
    amq_diag d = {0, ""};
    amq_keys empty = {NULL, (const uint64_t[]){0}, 0};
    CHECK_STATUS(amq_cascade_train(&empty, &n.k, &cfg, NULL, &c, &d),
                 AMQ_ERR_INVALID);
    CHECK(strstr(d.message, "member set is empty") != NULL);
    CHECK_STATUS(amq_cascade_train(&m.k, &empty, &cfg, NULL, &c, &d),
                 AMQ_ERR_INVALID);
    /* the first 100 members also listed as non-members */
    gen_keys both = n;
    both.bytes = NULL;
    memset(&both, 0, sizeof both);
    for (size_t i = 0; i < n.k.n; i++) {
        char buf[80];
        size_t l = n.k.offsets[i + 1] - n.k.offsets[i];
        memcpy(buf, n.k.bytes + n.k.offsets[i], l);
        buf[l] = 0;
        gen_push(&both, buf);
    }
    for (size_t i = 0; i < 100; i++) {
        char buf[80];
        size_t l = m.k.offsets[i + 1] - m.k.offsets[i];
        memcpy(buf, m.k.bytes + m.k.offsets[i], l);
        buf[l] = 0;
        gen_push(&both, buf);
    }
    CHECK_STATUS(amq_cascade_train(&m.k, &both.k, &cfg, NULL, &c, &d),
                 AMQ_ERR_INVALID);
    CHECK_MSG(strstr(d.message, "100 of the") != NULL, "%s", d.message);
    cfg.fpr = 1e-9; /* far below what 2000 held-out keys can certify */
    CHECK_STATUS(amq_cascade_train(&m.k, &n.k, &cfg, NULL, &c, &d),
                 AMQ_ERR_FULL);
    CHECK(c == NULL);
    cfg.fpr = 0;
    cfg.bits_per_key = 0.5; /* less than the model */
    CHECK_STATUS(amq_cascade_train(&m.k, &n.k, &cfg, NULL, &c, &d),
                 AMQ_ERR_FULL);
    cfg.bits_per_key = 0;
    CHECK_STATUS(amq_cascade_train(&m.k, &n.k, &cfg, NULL, &c, &d),
                 AMQ_ERR_INVALID);
    cfg = base_config();
    cfg.aux_capacity = 10;
    cfg.aux_fpr = NAN; /* refused, not taken for in range */
    CHECK_STATUS(amq_cascade_train(&m.k, &n.k, &cfg, NULL, &c, &d),
                 AMQ_ERR_INVALID);
    CHECK_MSG(strstr(d.message, "aux fpr") != NULL, "%s", d.message);
    gen_free(&m);
    gen_free(&n);
    gen_free(&both);
}

/* Audit: same distribution -> no violation, FPR within its interval;
 * another distribution -> drift detected. */
static void test_audit(void) {
    gen_keys m, n, fm, fresh, dm, drifted;
    check_seed = 81;
    gen_hosts(81, 2000, 16000, 0.2, &m, &n);
    gen_hosts(82, 1, 20000, 0.2, &fm, &fresh);
    /* drifted queries: keys shaped like members (not in m) */
    gen_hosts(83, 20000, 1, 0.2, &drifted, &dm);
    amq_cascade_config cfg = base_config();
    amq_cascade *c = NULL;
    CHECK_OK(amq_cascade_train(&m.k, &n.k, &cfg, NULL, &c, NULL));
    for (int which = 0; c != NULL && which < 2; which++) {
        const gen_keys *q = which ? &drifted : &fresh;
        amq_audit *a = NULL;
        CHECK_OK(amq_audit_new(c, 0.5, 3, NULL, &a));
        for (size_t i = 0; a != NULL && i < q->k.n; i++)
            if (amq_audit_sample(a))
                CHECK_OK(amq_audit_record(a, q->k.bytes + q->k.offsets[i],
                                          q->k.offsets[i + 1] - q->k.offsets[i],
                                          false));
        for (size_t i = 0; a != NULL && i < m.k.n; i += 10)
            CHECK_OK(amq_audit_record(a, m.k.bytes + m.k.offsets[i],
                                      m.k.offsets[i + 1] - m.k.offsets[i],
                                      true));
        amq_audit_report r;
        amq_audit_level lv[AMQ_CASCADE_MAX_LEVELS + 1];
        amq_audit_get_report(a, &r, lv, AMQ_CASCADE_MAX_LEVELS + 1);
        CHECK(r.false_negatives == 0);
        CHECK(r.sampled > q->k.n / 3 && r.sampled < q->k.n * 2 / 3 + m.k.n);
        CHECK(r.fpr_lower <= r.fpr_hat && r.fpr_hat <= r.fpr_upper);
        if (which == 0) {
            CHECK_MSG(!r.violated, "violated without drift");
            CHECK_MSG(r.drift_pvalue > 1e-4, "p %g", r.drift_pvalue);
            CHECK(r.fpr_lower <= r.bound_build);
        } else {
            CHECK_MSG(r.drift_pvalue < 1e-6 && r.drift_psi > 0.1, "p %g psi %g",
                      r.drift_pvalue, r.drift_psi);
            CHECK(r.violated && r.unverified);
        }
        if (which == 0)
            amq_audit_free(a);
        else { /* an audit may outlive its cascade's free */
            amq_cascade_free(c);
            c = NULL;
            amq_audit_free(a);
        }
    }
    amq_cascade_free(c);
    gen_free(&m);
    gen_free(&n);
    gen_free(&fm);
    gen_free(&fresh);
    gen_free(&dm);
    gen_free(&drifted);
}

/* Shards with Bloom-like curves bits = n c log(1/eps): the budget split
 * meets Σ w eps <= eps_global, matches a grid search, and beats equal eps. */
static void test_shards(void) {
    enum { P = 40 };
    double eps[2][P], bits[2][P];
    const double n[2] = {1e6, 2e5}, w[2] = {0.3, 0.7}, cost[2] = {1.44, 3.0};
    for (int m = 0; m < 2; m++)
        for (int j = 0; j < P; j++) {
            eps[m][j] = pow(10, -0.15 * j);
            bits[m][j] = n[m] * cost[m] * log2(1 / eps[m][j]);
        }
    amq_cascade_shard_curve sc[2] = {{w[0], eps[0], bits[0], P},
                                     {w[1], eps[1], bits[1], P}};
    double out[2], mem[2], g = 1e-3;
    CHECK_OK(amq_cascade_shard_budgets(sc, 2, g, out, mem));
    CHECK(w[0] * out[0] + w[1] * out[1] <= g * (1 + 1e-9));
    double best = INFINITY;
    for (double e0 = 1e-6; e0 < 1.0; e0 *= 1.01) {
        double e1 = (g - w[0] * e0) / w[1];
        if (e1 <= 1e-6 || e1 > 1)
            continue;
        best = fmin(best, n[0] * cost[0] * log2(1 / e0) +
                              n[1] * cost[1] * log2(1 / e1));
    }
    double total = mem[0] + mem[1];
    double equal = n[0] * cost[0] * log2(1 / g) + n[1] * cost[1] * log2(1 / g);
    CHECK_MSG(total <= best * 1.01 && total < equal, "%g vs grid %g, equal %g",
              total, best, equal);
    CHECK_STATUS(amq_cascade_shard_budgets(sc, 2, 1e-9, out, mem),
                 AMQ_ERR_INVALID);
}

/* Every allocation of a small train and of a load fails once in turn: the
 * call reports AMQ_ERR_NOMEM, returns no object and leaks nothing (the
 * allocator's live byte count returns to zero). */
static void test_oom(void) {
    gen_keys m, n;
    check_seed = 91;
    gen_hosts(91, 150, 1500, 0.2, &m, &n);
    amq_cascade_config cfg = base_config();
    cfg.model.features.dim_bits = 10;
    cfg.bins = 16;
    cfg.aux_capacity = 10;
    cfg.fpr = 0.1;
    oom_ctx ctx = {0, 0, 0};
    amq_allocator al = {oom_alloc, oom_realloc, oom_free, &ctx};
    amq_options opt = {.allocator = &al};
    amq_cascade *c = NULL;
    CHECK_OK(amq_cascade_train(&m.k, &n.k, &cfg, &opt, &c, NULL));
    unsigned long total = ctx.calls;
    size_t len = c ? amq_cascade_save_size(c) : 0, w;
    uint8_t *buf = malloc(len ? len : 1);
    if (c != NULL)
        CHECK_OK(amq_cascade_save(c, buf, len, &w));
    amq_cascade_free(c);
    CHECK(ctx.live == 0);
    unsigned long step = check_quick() ? 7 : 1;
    for (unsigned long k = 1; k <= total; k += step) {
        ctx = (oom_ctx){0, k, 0};
        c = NULL;
        amq_status st = amq_cascade_train(&m.k, &n.k, &cfg, &opt, &c, NULL);
        CHECK_MSG(st == AMQ_ERR_NOMEM && c == NULL, "train, call %lu: %s", k,
                  amq_status_name(st));
        amq_cascade_free(c);
        CHECK_MSG(ctx.live == 0, "train, call %lu: %lld bytes leaked", k,
                  ctx.live);
    }
    for (unsigned long k = 1;; k++) {
        ctx = (oom_ctx){0, k, 0};
        c = NULL;
        amq_status st = amq_cascade_load(buf, len, &opt, &c, NULL);
        amq_cascade_free(c);
        CHECK(ctx.live == 0);
        if (st == AMQ_OK)
            break;
        CHECK_MSG(st == AMQ_ERR_NOMEM, "load, call %lu: %s", k,
                  amq_status_name(st));
    }
    free(buf);
    gen_free(&m);
    gen_free(&n);
}

/* ---- fallback (amq_cascade_set_fallback) ----------------------------------- */

static const uint8_t *key_at(const gen_keys *g, size_t i, size_t *len) {
    *len = g->k.offsets[i + 1] - g->k.offsets[i];
    return g->k.bytes + g->k.offsets[i];
}

/* What the initial filter alone answers (it sees the key's hash mixed
 * with its salt, learned/learned.h). */
static bool front_says(const amq_cascade *c, const uint8_t *p, size_t len) {
    uint64_t h = amq_hash64(&c->hasher, p, len);
    return amq_filter_contains_hash(c->front, amq_mix64(h ^ AMQ__FRONT_SALT));
}

/* Every answer, scalar and batch, agrees, and every positive passes the
 * initial filter (the learned route only rejects more); returns the
 * positives. */
static size_t check_front_answers(const amq_cascade *c, const gen_keys *g,
                                  const char *what) {
    size_t pos = 0, differ = 0, outside = 0, len;
    uint8_t *out = malloc(g->k.n);
    amq_cascade_contains_batch(c, &g->k, out);
    for (size_t i = 0; i < g->k.n; i++) {
        const uint8_t *p = key_at(g, i, &len);
        bool a = amq_cascade_contains(c, p, len);
        differ += a != (out[i] != 0);
        outside += a && !front_says(c, p, len);
        pos += a;
    }
    free(out);
    CHECK_MSG(differ == 0 && outside == 0,
              "%s: %zu batch answers differ, %zu pass without the initial "
              "filter",
              what, differ, outside);
    return pos;
}

/* A frame's cascade flags (u32 at params + 28) set to flags, resealed
 * (the checksum is XXH64, seed 0, of every byte before it). */
#define FRAME_FLAGS_AT 92u
static void reseal_flags(uint8_t *buf, size_t len, uint32_t flags) {
    amq_hasher x;
    for (int i = 0; i < 4; i++)
        buf[FRAME_FLAGS_AT + (size_t)i] = (uint8_t)(flags >> (8 * i));
    CHECK_OK(amq_hasher_init(&x, AMQ_HASH_XXH64, 0, NULL));
    uint64_t sum = amq_hash64(&x, buf, len - 8);
    for (int i = 0; i < 8; i++)
        buf[len - 8 + (size_t)i] = (uint8_t)(sum >> (8 * i));
}

static uint32_t frame_flags(const uint8_t *buf) {
    uint32_t f = 0;
    for (int i = 0; i < 4; i++)
        f |= (uint32_t)buf[FRAME_FLAGS_AT + (size_t)i] << (8 * i);
    return f;
}

/* A cascade with a worst-case cap: in fallback the answers are the ones
 * it gave before (every positive within the initial filter's), every
 * member is found, the bound reported is worst_case_bound (which holds on
 * member-shaped non-members too); off again gives the learned bound back;
 * a rebuild starts on the learned route. */
static void test_fallback_answers(const amq_cascade_config *cfg,
                                  const gen_keys *m, const gen_keys *n,
                                  const gen_keys *fresh,
                                  const gen_keys *drifted) {
    amq_cascade *c = NULL, *r = NULL;
    amq_cascade_stats s0, s1;
    CHECK_OK(amq_cascade_train(&m->k, &n->k, cfg, NULL, &c, NULL));
    if (c == NULL)
        return;
    amq_cascade_get_stats(c, &s0, NULL, 0, NULL);
    CHECK(c->front != NULL && !s0.fallback && !amq_cascade_fallback(c));
    CHECK(s0.fpr_bound == s0.learned_bound);
    CHECK_MSG(s0.worst_case_bound > 0 && s0.worst_case_bound <= cfg->worst_case,
              "worst case %g, cap %g", s0.worst_case_bound, cfg->worst_case);
    uint8_t *before = malloc(drifted->k.n);
    amq_cascade_contains_batch(c, &drifted->k, before);
    CHECK_OK(amq_cascade_set_fallback(c, true));
    CHECK_OK(amq_cascade_set_fallback(c, true)); /* idempotent */
    amq_cascade_get_stats(c, &s1, NULL, 0, NULL);
    CHECK(amq_cascade_fallback(c) && s1.fallback);
    CHECK(s1.fpr_bound == s1.worst_case_bound &&
          amq_cascade_fpr_bound(c) == s1.worst_case_bound &&
          s1.fpr_estimate == s1.fpr_bound);
    CHECK(s1.learned_bound == s0.learned_bound &&
          s1.worst_case_bound == s0.worst_case_bound);
    CHECK(check_front_answers(c, m, "members") == m->k.n);
    check_front_answers(c, fresh, "fresh non-members");
    size_t fp = check_front_answers(c, drifted, "member-shaped non-members");
    uint8_t *during = malloc(drifted->k.n);
    amq_cascade_contains_batch(c, &drifted->k, during);
    CHECK_MSG(memcmp(before, during, drifted->k.n) == 0,
              "the fallback changed answers");
    free(during);
    double w = s1.worst_case_bound, q = (double)drifted->k.n;
    double slack = 3.5 * sqrt(w * (1 - w) / q) + 3.0 / q;
    CHECK_MSG((double)fp / q <= w + slack, "fallback rate %g > worst case %g",
              (double)fp / q, w);
    CHECK_OK(amq_cascade_set_fallback(c, false));
    uint8_t *after = malloc(drifted->k.n);
    amq_cascade_contains_batch(c, &drifted->k, after);
    CHECK(!amq_cascade_fallback(c) &&
          amq_cascade_fpr_bound(c) == s0.learned_bound &&
          memcmp(before, after, drifted->k.n) == 0);
    CHECK_OK(amq_cascade_set_fallback(c, true));
    CHECK_OK(amq_cascade_rebuild(c, &m->k, &n->k, &n->k, &r, NULL));
    CHECK(r != NULL && !amq_cascade_fallback(r));
    free(before);
    free(after);
    amq_cascade_free(r);
    amq_cascade_free(c);
}

/* The flag in the frame: saved and loaded (identical bytes, the same
 * answers), cleared when off; flag 4 without flag 1 (fallback without an
 * initial filter) is refused; a cascade without an initial filter refuses
 * to fall back and is left as it was. */
static void check_fallback_frames(amq_cascade *c, amq_cascade *nf,
                                  const gen_keys *drifted) {
    amq_cascade *d = NULL;
    size_t len, len2;
    uint8_t *off = save(c, &len);
    CHECK((frame_flags(off) & 5u) == 1u);
    CHECK_OK(amq_cascade_set_fallback(c, true));
    uint8_t *on = save(c, &len2);
    CHECK(len2 == len && (frame_flags(on) & 5u) == 5u);
    CHECK_OK(amq_cascade_load(on, len2, NULL, &d, NULL));
    if (d != NULL) {
        uint8_t *again = save(d, &len2);
        CHECK(amq_cascade_fallback(d) && len2 == len &&
              memcmp(on, again, len) == 0);
        CHECK(amq_cascade_fpr_bound(d) == amq_cascade_fpr_bound(c));
        check_front_answers(d, drifted, "loaded in fallback");
        CHECK_OK(amq_cascade_set_fallback(d, false));
        free(again);
        again = save(d, &len2);
        CHECK(len2 == len && memcmp(off, again, len) == 0);
        free(again);
    }
    amq_cascade_free(d);
    d = NULL;
    /* the resealed edit loads when the flags are consistent ... */
    reseal_flags(off, len, frame_flags(off) | 4u);
    CHECK(memcmp(off, on, len) == 0);
    /* ... and a fallback without an initial filter is refused */
    CHECK_STATUS(amq_cascade_set_fallback(nf, true), AMQ_ERR_UNSUPPORTED);
    CHECK(!amq_cascade_fallback(nf));
    uint8_t *nb = save(nf, &len);
    CHECK((frame_flags(nb) & 1u) == 0);
    uint8_t *keep = malloc(len);
    memcpy(keep, nb, len);
    CHECK_OK(amq_cascade_set_fallback(nf, false));
    uint8_t *same = save(nf, &len2);
    CHECK(len2 == len && memcmp(same, keep, len) == 0);
    reseal_flags(nb, len, frame_flags(nb) | 4u);
    CHECK_STATUS(amq_cascade_load(nb, len, NULL, &d, NULL), AMQ_ERR_CORRUPT);
    CHECK(d == NULL);
    CHECK_STATUS(amq_cascade_set_fallback(NULL, true), AMQ_ERR_INVALID);
    free(off);
    free(on);
    free(nb);
    free(keep);
    free(same);
}

static void test_fallback_frames(const amq_cascade_config *cfg,
                                 const gen_keys *m, const gen_keys *n,
                                 const gen_keys *drifted) {
    amq_cascade_config learned = *cfg;
    learned.worst_case = 0;
    amq_cascade *c = NULL, *nf = NULL;
    CHECK_OK(amq_cascade_train(&m->k, &n->k, cfg, NULL, &c, NULL));
    CHECK_OK(amq_cascade_train(&m->k, &n->k, &learned, NULL, &nf, NULL));
    if (c != NULL && nf != NULL)
        check_fallback_frames(c, nf, drifted);
    amq_cascade_free(c);
    amq_cascade_free(nf);
}

static void test_fallback(void) {
    gen_keys m, n, fm, fresh, drifted, dn;
    check_seed = 91;
    gen_hosts(91, quick(2000), quick(16000), 0.2, &m, &n);
    gen_hosts(92, 1, quick(10000), 0.2, &fm, &fresh);
    /* member-shaped keys that are not in m: a shift of the queries */
    gen_hosts(93, quick(10000), 1, 0.2, &drifted, &dn);
    amq_cascade_config cfg = base_config();
    cfg.fpr = 0.02;
    cfg.worst_case = 0.1;
    test_fallback_answers(&cfg, &m, &n, &fresh, &drifted);
    test_fallback_frames(&cfg, &m, &n, &drifted);
    gen_free(&m);
    gen_free(&n);
    gen_free(&fm);
    gen_free(&fresh);
    gen_free(&drifted);
    gen_free(&dn);
}

int main(void) {
    test_oom();
    test_audit();
    test_shards();
    test_model();
    test_methods();
    test_reject_tail();
    test_updates();
    test_frame_and_versions();
    test_bad_input();
    test_fallback();
    return check_report("test_cascade");
}
