/*
 * test_maplet.c — the quotient maplet against an exact map.
 *
 * The model holds, for a universe of keys, every (key, value) put and not
 * deleted. A maplet answers for a fingerprint, so the model groups keys by
 * the maplet's own fingerprint (amq_maplet_fingerprint) and predicts, for
 * every key after every step, exactly what the maplet must say:
 *
 *   found  iff some key of the same fingerprint is held;
 *   value  = the operator over every value held under that fingerprint.
 *
 * That is the strong maplet property checked without chance: m[k] is M[k]
 * combined with the values of the l other keys sharing k's fingerprint,
 * and for a held key it implies one-sided error (m[k] >= M[k] in the
 * operator's order) and no false negative. Small remainders (r = 2..4)
 * make collisions common. Each run also drives a twin on the scalar
 * reference paths (identical bytes after every step) and reloads the
 * frame (every invariant validated). The rest: the seven features of a
 * full maplet (value support, resizing, incremental construction, merge,
 * deletion, space at 95% load, locality is the bench's), sum counters on
 * skewed counts, the tail of l against eps^L, exact mode, bad input.
 */
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "amq/maplet.h"

/* ---- helpers --------------------------------------------------------------- */

/* A view of the frame in read-only pages: validation and queries must
 * not write to a view's table (a mapped file). */
static bool views_read_only(const uint8_t *frame, size_t len,
                            const amq_filter *f) {
    size_t pages = (len + 4095) / 4096 * 4096;
    uint8_t *p = mmap(NULL, pages, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return false;
    memcpy(p, frame, len);
    amq_filter *v = NULL;
    bool ok = mprotect(p, pages, PROT_READ) == 0 &&
              amq_filter_view(p, len, NULL, &v, NULL) == AMQ_OK &&
              check_same_frame(f, v);
    amq_filter_free(v);
    munmap(p, pages);
    return ok;
}

/* Save, load (validating everything), and compare the bytes again; and
 * the same through a read-only view. */
static bool reloads(const amq_filter *f) {
    size_t len;
    uint8_t *buf = check_frame(f, &len);
    amq_filter *g = NULL;
    amq_diag d;
    memset(&d, 0, sizeof d);
    amq_status st =
        buf ? amq_filter_load(buf, len, NULL, &g, &d) : AMQ_ERR_NOMEM;
    CHECK_MSG(st == AMQ_OK, "reload: %s %s", amq_status_name(st), d.message);
    bool ok =
        st == AMQ_OK && check_same_frame(f, g) && views_read_only(buf, len, f);
    amq_filter_free(g);
    free(buf);
    return ok;
}

static amq_maplet *mk(const char *spec, uint64_t cap, double fpr,
                      uint32_t flags) {
    amq_maplet *m = NULL;
    amq_options o;
    amq_diag d;
    memset(&o, 0, sizeof o);
    memset(&d, 0, sizeof d);
    o.flags = flags;
    amq_status st = amq_maplet_new(spec, cap, fpr, &o, &m, &d);
    CHECK_MSG(st == AMQ_OK, "new(%s): %s %s", spec, amq_status_name(st),
              d.message);
    return m;
}

static uint64_t vmask_of(unsigned v) {
    return v >= 64 ? ~0ULL : (1ULL << v) - 1;
}

static amq_maplet_shape shape(const amq_maplet *m) {
    amq_maplet_shape s;
    memset(&s, 0, sizeof s);
    CHECK_OK(amq_maplet_get_shape(m, &s));
    return s;
}

/* ---- the model --------------------------------------------------------------- */

enum { U = 600, SLOTS = 6 };

typedef struct model {
    amq_maplet_op op;
    bool multiset;
    uint64_t h[U], fp[U];
    uint64_t val[U][SLOTS]; /* combine: val[i][0]; multiset: the pairs */
    unsigned n[U];          /* combine: 0 or 1; multiset: pairs held   */
} model;

/* What the maplet must answer for key i: found, and the value. */
static bool predict(const model *md, size_t i, uint64_t *v, uint64_t *pairs) {
    bool found = false, over = false;
    *v = 0;
    *pairs = 0;
    for (size_t j = 0; j < U; j++) {
        if (md->fp[j] != md->fp[i])
            continue;
        for (unsigned k = 0; k < md->n[j]; k++) {
            *v = found ? amq_maplet_combine(md->op, *v, md->val[j][k], &over)
                       : md->val[j][k];
            found = true;
            (*pairs)++;
        }
    }
    return found;
}

static uint64_t verify(const amq_maplet *m, const model *md, unsigned op) {
    uint64_t bad = 0;
    for (size_t i = 0; i < U; i++) {
        uint64_t want, got = 7, pairs;
        bool found = predict(md, i, &want, &pairs);
        amq_status st = amq_maplet_get_hash(m, md->h[i], &got);
        bool ok = found ? st == AMQ_OK && got == want
                        : st == AMQ_ERR_NOT_FOUND && got == 0;
        if (!ok && bad++ == 0)
            CHECK_MSG(ok, "op %u key %zu: %s %llu, model %s %llu", op, i,
                      amq_status_name(st), (unsigned long long)got,
                      found ? "found" : "absent", (unsigned long long)want);
        if (md->multiset && found) {
            uint64_t vals[64];
            size_t n = 0;
            st = amq_maplet_get_all(m, md->h[i], vals, 64, &n);
            bad += st != AMQ_OK || n != pairs;
        }
    }
    return bad;
}

/* Can the maplet take delete(i, v) per the model (the fingerprint group
 * holds it)? */
static bool group_holds(const model *md, size_t i, uint64_t v) {
    uint64_t total, pairs;
    if (!predict(md, i, &total, &pairs))
        return false;
    if (!md->multiset)
        return total >= v;
    for (size_t j = 0; j < U; j++)
        for (unsigned k = 0; md->fp[j] == md->fp[i] && k < md->n[j]; k++)
            if (md->val[j][k] == v)
                return true;
    return false;
}

static void model_put(model *md, size_t i, uint64_t v) {
    if (md->multiset) {
        md->val[i][md->n[i]++] = v;
    } else if (md->n[i] == 0) {
        md->val[i][0] = v;
        md->n[i] = 1;
    } else {
        md->val[i][0] = amq_maplet_combine(md->op, md->val[i][0], v, NULL);
    }
}

/* Delete of a pair held by key i itself (the model knows which key). */
static void model_del(model *md, size_t i, unsigned k, uint64_t v) {
    if (md->multiset) {
        md->val[i][k] = md->val[i][--md->n[i]];
        return;
    }
    md->val[i][0] -= v;
    if (md->val[i][0] == 0)
        md->n[i] = 0;
}

/* One random step on m, twin and the model. */
static void step(amq_maplet *m, amq_maplet *twin, model *md, uint64_t *rng,
                 unsigned vbits, bool can_del, unsigned no) {
    uint64_t r = check_next(rng), vm = vmask_of(vbits);
    size_t i = (size_t)(r % U);
    uint64_t v = check_next(rng) & vm;
    if (md->op == AMQ_MAPLET_SUM) /* small counts, some large; no overflow */
        v = (v % 5 == 0 ? v & ((UINT64_C(1) << 50) - 1) : v % 4) & vm;
    bool del = can_del && (r >> 40) % 3 == 0;
    if (del && md->n[i] > 0) {
        unsigned k = (unsigned)((r >> 20) % md->n[i]);
        uint64_t top = md->val[i][0] < vm ? md->val[i][0] : vm;
        uint64_t d = md->multiset ? md->val[i][k] : 1 + (r >> 24) % top;
        CHECK_OK(amq_maplet_delete_hash(m, md->h[i], d));
        CHECK_OK(amq_maplet_delete_hash(twin, md->h[i], d));
        model_del(md, i, k, d);
        return;
    }
    if (del) { /* a key not held: refused unless its group holds v */
        uint64_t d = v ? v : 1;
        amq_status want = group_holds(md, i, d) ? AMQ_OK : AMQ_ERR_NOT_FOUND;
        if (want == AMQ_ERR_NOT_FOUND) {
            CHECK_STATUS(amq_maplet_delete_hash(m, md->h[i], d), want);
            CHECK_STATUS(amq_maplet_delete_hash(twin, md->h[i], d), want);
        }
        return;
    }
    if ((md->multiset && md->n[i] == SLOTS) ||
        (md->op == AMQ_MAPLET_SUM && v == 0))
        return;
    amq_status st = amq_maplet_put_hash(m, md->h[i], v);
    CHECK_MSG(st == AMQ_OK, "step %u: put: %s", no, amq_status_name(st));
    CHECK_OK(amq_maplet_put_hash(twin, md->h[i], v));
    if (st == AMQ_OK)
        model_put(md, i, v);
}

static void run_model(const char *spec, uint64_t seed, unsigned steps) {
    model *md = calloc(1, sizeof *md);
    amq_maplet *m = mk(spec, 0, 0, seed % 2 ? AMQ_OPT_CONCURRENT : 0);
    amq_maplet *twin = mk(spec, 0, 0, AMQ_OPT_SCALAR);
    check_seed = seed;
    if (md == NULL || m == NULL || twin == NULL)
        goto out;
    amq_maplet_shape s = shape(m);
    md->op = s.op;
    md->multiset = s.multiset;
    bool can_del = s.multiset || s.op == AMQ_MAPLET_SUM;
    uint64_t rng = seed;
    for (size_t i = 0; i < U; i++) {
        md->h[i] = check_next(&rng);
        if (s.key_bits)
            CHECK_OK(amq_maplet_exact_hash(m, i * 7919 % 4096, &md->h[i]));
        md->fp[i] = amq_maplet_fingerprint(m, md->h[i]);
    }
    for (unsigned k = 1; k <= steps; k++) {
        step(m, twin, md, &rng, s.value_bits, can_del, k);
        if (k % 400 != 0 && k != steps)
            continue;
        uint64_t bad = verify(m, md, s.op);
        CHECK_MSG(bad == 0, "%s step %u: %llu keys answer wrongly", spec, k,
                  (unsigned long long)bad);
        CHECK_MSG(check_same_frame(m, twin), "%s step %u: scalar twin differs",
                  spec, k);
        CHECK(reloads(m));
        if (bad != 0)
            break;
    }
out:
    amq_maplet_free(m);
    amq_maplet_free(twin);
    free(md);
}

static void test_models(void) {
    static const char *const specs[] = {
        "maplet:op=sum,v=3,q=11,r=3",
        "maplet:op=sum,v=1,q=11,r=2",
        "maplet:op=max,v=8,q=11,r=3",
        "maplet:op=min,v=5,q=11,r=2",
        "maplet:op=or,v=16,q=11,r=4",
        "maplet:op=sum,v=6,multiset=1,q=11,r=3",
        "maplet:op=max,v=4,multiset=1,q=11,r=2",
        "maplet:op=or,v=12,multiset=1,q=11,r=3",
        "maplet:op=min,v=64,multiset=1,q=11,r=2",
        "maplet:op=or,v=64,q=11,r=50",     /* 114-bit slots */
        "maplet:op=sum,v=64,q=11,r=53",    /* 117-bit slots */
        "maplet:op=sum,v=2,q=11,kbits=12", /* exact: never a collision */
        "maplet:op=max,v=60,multiset=1,q=11,kbits=16",
    };
    unsigned steps = check_quick() ? 1200 : 4000;
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
        for (uint64_t s = 0; s < 2; s++)
            run_model(specs[i], 100 + 17 * i + s, steps);
}

/* ---- features ------------------------------------------------------------------ */

/* Incremental construction = a build from the pairs = merge of halves. */
static void test_build_merge(void) {
    static const char *const specs[] = {
        "maplet:op=sum,v=4", "maplet:op=max,v=9", "maplet:op=or,v=33",
        "maplet:op=min,v=7,multiset=1"};
    enum { N = 3000 };
    static uint64_t h[2 * N], v[2 * N];
    check_seed = 7;
    for (size_t s = 0; s < 4; s++) {
        uint64_t rng = 7 + s;
        amq_maplet *one = mk(specs[s], 2 * N, 0.01, 0);
        amq_maplet *a = mk(specs[s], 2 * N, 0.01, 0);
        amq_maplet *b = mk(specs[s], 2 * N, 0.01, 0);
        if (one == NULL || a == NULL || b == NULL)
            goto next;
        unsigned vb = shape(one).value_bits;
        for (size_t i = 0; i < 2 * N; i++) {
            uint64_t r = check_next(&rng);
            h[i] = i < N ? r : h[r % N]; /* half are repeats */
            v[i] = 1 + check_next(&rng) % vmask_of(vb);
            CHECK_OK(amq_maplet_put_hash(one, h[i], v[i]));
            CHECK_OK(amq_maplet_put_hash(i % 2 ? a : b, h[i], v[i]));
        }
        amq_maplet *built = NULL, *batch = mk(specs[s], 2 * N, 0.01, 0);
        CHECK_OK(
            amq_maplet_build(specs[s], h, v, 2 * N, 0.01, NULL, &built, NULL));
        CHECK_MSG(built && check_same_frame(one, built), "%s: build != puts",
                  specs[s]);
        size_t done = 0;
        CHECK_OK(amq_maplet_put_batch(batch, h, v, 2 * N, &done));
        CHECK_MSG(batch && done == 2 * N && check_same_frame(one, batch),
                  "%s: put_batch != puts", specs[s]);
        amq_maplet_free(batch);
        CHECK_OK(amq_maplet_merge(a, b));
        CHECK_MSG(check_same_frame(one, a), "%s: merge != puts", specs[s]);
        CHECK(amq_filter_items(a) == amq_filter_items(one));
        amq_maplet_free(built);
    next:
        amq_maplet_free(one);
        amq_maplet_free(a);
        amq_maplet_free(b);
    }
}

/* Merges across shapes, operators, widths, modes and hashers: refused,
 * nothing changed. */
static void test_merge_refused(void) {
    static const char *const other[] = {"maplet:op=max,v=8,q=10,r=7",
                                        "maplet:op=sum,v=9,q=10,r=7",
                                        "maplet:op=sum,v=8,q=10,r=8",
                                        "maplet:op=sum,v=8,q=11,r=7",
                                        "maplet:op=sum,v=8,multiset=1,q=10,r=7",
                                        "qf:q=10,r=7"};
    check_seed = 8;
    amq_maplet *a = mk("maplet:op=sum,v=8,q=10,r=7", 0, 0, 0);
    if (a == NULL)
        return;
    for (uint64_t i = 0; i < 300; i++)
        CHECK_OK(amq_maplet_put_hash(a, i * 0x9e3779b97f4a7c15ULL, 3));
    size_t len;
    uint8_t *before = check_frame(a, &len);
    for (size_t i = 0; i < sizeof other / sizeof other[0]; i++) {
        amq_filter *b = NULL;
        CHECK_OK(amq_filter_new(other[i], 0, 0, NULL, &b, NULL));
        amq_status want = i == 5 ? AMQ_ERR_UNSUPPORTED : AMQ_ERR_INCOMPATIBLE;
        CHECK_STATUS(amq_maplet_merge(a, b), want);
        amq_filter_free(b);
    }
    amq_options o;
    memset(&o, 0, sizeof o);
    o.hash = AMQ_HASH_XXH3;
    o.hash_seed = 5;
    amq_maplet *c = NULL;
    CHECK_OK(amq_maplet_new("maplet:op=sum,v=8,q=10,r=7", 0, 0, &o, &c, NULL));
    CHECK_STATUS(amq_maplet_merge(a, c), AMQ_ERR_INCOMPATIBLE);
    size_t len2;
    uint8_t *after = check_frame(a, &len2);
    CHECK(before && after && len == len2 && memcmp(before, after, len) == 0);
    free(before);
    free(after);
    amq_maplet_free(c);
    amq_maplet_free(a);
}

/* Deletion: what each mode can undo, and refusals that change nothing. */
static void test_delete(void) {
    check_seed = 9;
    const char *const refuse[] = {"maplet:op=max,v=8", "maplet:op=min,v=8",
                                  "maplet:op=or,v=8"};
    for (size_t i = 0; i < 3; i++) {
        amq_maplet *m = mk(refuse[i], 100, 0.01, 0);
        if (m == NULL)
            continue;
        CHECK_OK(amq_maplet_put(m, "k", 1, 5));
        CHECK_STATUS(amq_maplet_delete(m, "k", 1, 5), AMQ_ERR_UNSUPPORTED);
        CHECK_STATUS(amq_maplet_drop_value(m, 5), AMQ_ERR_UNSUPPORTED);
        uint64_t v;
        CHECK_OK(amq_maplet_get(m, "k", 1, &v));
        CHECK(v == 5);
        amq_maplet_free(m);
    }
    amq_maplet *m = mk("maplet:op=sum,v=4", 100, 0.01, 0);
    if (m != NULL) {
        uint64_t v;
        CHECK_OK(amq_maplet_put(m, "k", 1, 15));
        CHECK_OK(amq_maplet_put(m, "k", 1, 15)); /* 30: two slots */
        CHECK(shape(m).used_slots == 2);
        CHECK_OK(amq_maplet_put(m, "k", 1, 1)); /* 31: a counter */
        CHECK_STATUS(amq_maplet_put(m, "k", 1, 16), AMQ_ERR_INVALID);
        CHECK_STATUS(amq_maplet_delete(m, "k", 1, 16), AMQ_ERR_INVALID);
        CHECK(shape(m).used_slots == 3);
        CHECK_OK(amq_maplet_delete(m, "k", 1, 13));
        CHECK_OK(amq_maplet_get(m, "k", 1, &v));
        CHECK(v == 18 && shape(m).used_slots == 2);
        CHECK_OK(amq_maplet_delete(m, "k", 1, 9));
        CHECK(shape(m).used_slots == 1);
        CHECK_STATUS(amq_maplet_delete(m, "k", 1, 10), AMQ_ERR_NOT_FOUND);
        CHECK_OK(amq_maplet_delete(m, "k", 1, 9));
        CHECK_STATUS(amq_maplet_get(m, "k", 1, &v), AMQ_ERR_NOT_FOUND);
        CHECK(shape(m).used_slots == 0 && amq_filter_items(m) == 0);
        amq_maplet_free(m);
    }
    /* Multiset: drop every pair of one value without the keys. */
    m = mk("maplet:op=or,v=6,multiset=1", 2000, 0.001, 0);
    if (m != NULL) {
        for (uint64_t i = 0; i < 1500; i++)
            CHECK_OK(amq_maplet_put(m, &i, 8, i % 3));
        CHECK_OK(amq_maplet_drop_value(m, 1));
        uint64_t wrong = 0;
        for (uint64_t i = 0; i < 1500; i++) {
            uint64_t v;
            amq_status st = amq_maplet_get(m, &i, 8, &v);
            wrong += i % 3 == 1 ? st == AMQ_OK && (v & 1)
                                : st != AMQ_OK || (v & (i % 3)) != i % 3;
        }
        CHECK_MSG(wrong == 0, "drop_value: %llu wrong",
                  (unsigned long long)wrong);
        CHECK(amq_filter_items(m) == 1000);
        CHECK(reloads(m));
        amq_maplet_free(m);
    }
}

/* keep_values: a key stays, with its value, exactly when its combined
 * value is in range (sum counters of every form included); multiset
 * pairs are kept one by one; items follow; bad ranges are refused and
 * leave the maplet as it was. */
static void test_keep_values(void) {
    check_seed = 21;
    amq_maplet *m = mk("maplet:op=sum,v=2", 8000, 0.0001, 0);
    if (m == NULL)
        return;
    enum { K = 2000 };
    uint64_t want = 0, total = 0;
    for (uint64_t i = 0; i < K; i++)
        for (uint64_t c = i % 13 + 1; c > 0;) {
            uint64_t put = c < 3 ? c : 3;
            CHECK_OK(amq_maplet_put(m, &i, 8, put));
            c -= put;
            total += put;
        }
    CHECK_STATUS(amq_maplet_keep_values(m, 5, 4), AMQ_ERR_INVALID);
    CHECK(amq_filter_items(m) == total);
    CHECK_OK(amq_maplet_keep_values(m, 3, 9));
    uint64_t wrong = 0;
    for (uint64_t i = 0; i < K; i++) {
        uint64_t v = 0, c = i % 13 + 1;
        amq_status st = amq_maplet_get(m, &i, 8, &v);
        bool in = c >= 3 && c <= 9;
        wrong += in ? st != AMQ_OK || v != c : st == AMQ_OK && v == c;
        want += in ? c : 0;
    }
    CHECK_MSG(wrong == 0, "keep_values: %llu keys wrong",
              (unsigned long long)wrong);
    CHECK(amq_filter_items(m) == want);
    CHECK(reloads(m));
    amq_maplet_free(m);
    m = mk("maplet:op=or,v=6,multiset=1", 2000, 0.001, 0);
    if (m == NULL)
        return;
    for (uint64_t i = 0; i < 1500; i++)
        CHECK_OK(amq_maplet_put(m, &i, 8, i % 5));
    CHECK_OK(amq_maplet_keep_values(m, 1, 2));
    CHECK(amq_filter_items(m) == 600);
    wrong = 0;
    for (uint64_t i = 0; i < 1500; i++) {
        uint64_t v;
        amq_status st = amq_maplet_get(m, &i, 8, &v);
        bool in = i % 5 == 1 || i % 5 == 2;
        wrong += in && (st != AMQ_OK || (v & (i % 5)) != i % 5);
    }
    CHECK(wrong == 0);
    amq_maplet_free(m);
}

/* Resize: twice the slots, same fingerprints and values, the bound of the
 * stored set unchanged, the capacity bound doubled; exact stays exact. */
static void test_resize(void) {
    static const char *const specs[] = {
        "maplet:op=sum,v=5", "maplet:op=or,v=40",
        "maplet:op=max,v=3,multiset=1", "maplet:op=sum,v=3,kbits=24"};
    enum { N = 2000 };
    check_seed = 10;
    for (size_t s = 0; s < 4; s++) {
        amq_maplet *m = mk(specs[s], N, 0.001, 0);
        if (m == NULL)
            continue;
        amq_maplet_shape sh = shape(m);
        uint64_t h[N], v[N], rng = 10 + s;
        for (size_t i = 0; i < N * 9 / 10; i++) {
            h[i] = check_next(&rng);
            if (sh.key_bits)
                CHECK_OK(amq_maplet_exact_hash(m, h[i] >> 40, &h[i]));
            CHECK_OK(amq_maplet_put_hash(m, h[i], 1 + i % 7));
        }
        for (size_t i = 0; i < N * 9 / 10; i++)
            CHECK_OK(amq_maplet_get_hash(m, h[i], &v[i]));
        sh = shape(m);
        double bound = amq_filter_fpr_bound(m);
        double cap = amq_maplet_capacity_bound(m);
        uint64_t fp0 = amq_maplet_fingerprint(m, h[0]), items;
        items = amq_filter_items(m);
        CHECK_OK(amq_maplet_resize(m));
        amq_maplet_shape t = shape(m);
        CHECK(t.slots == 2 * sh.slots &&
              t.remainder_bits + 1 == sh.remainder_bits);
        CHECK(amq_maplet_fingerprint(m, h[0]) == fp0);
        CHECK(amq_filter_items(m) == items && t.distinct == sh.distinct);
        CHECK_MSG(fabs(amq_filter_fpr_bound(m) - bound) <= 1e-12 * bound,
                  "bound %g -> %g", bound, amq_filter_fpr_bound(m));
        CHECK(fabs(amq_maplet_capacity_bound(m) - 2 * cap) <= 1e-12);
        uint64_t wrong = 0;
        for (size_t i = 0; i < N * 9 / 10; i++) {
            uint64_t x;
            wrong += amq_maplet_get_hash(m, h[i], &x) != AMQ_OK || x != v[i];
        }
        CHECK_MSG(wrong == 0, "%s: %llu wrong after resize", specs[s],
                  (unsigned long long)wrong);
        for (size_t i = N * 9 / 10; i < N; i++) /* room for more */
            CHECK_OK(amq_maplet_put_hash(
                m, check_next(&rng) >> (sh.key_bits ? 40 : 0), 1));
        CHECK(reloads(m));
        amq_maplet_free(m);
    }
    amq_maplet *m = mk("maplet:op=sum,v=4,q=6,r=1", 0, 0, 0);
    CHECK(m != NULL && amq_maplet_resize(m) == AMQ_ERR_INVALID);
    amq_maplet_free(m);
}

/* Values of every width, refusals of wider ones (unchanged). */
static void test_values(void) {
    check_seed = 11;
    for (unsigned vb = 1; vb <= 64; vb += 9) {
        char spec[64];
        snprintf(spec, sizeof spec, "maplet:op=max,v=%u", vb);
        amq_maplet *m = mk(spec, 500, 0.0001, 0);
        if (m == NULL)
            continue;
        uint64_t top = vmask_of(vb), v = 0;
        CHECK_OK(amq_maplet_put(m, "a", 1, top));
        CHECK_OK(amq_maplet_get(m, "a", 1, &v));
        CHECK(v == top);
        if (vb < 64)
            CHECK_STATUS(amq_maplet_put(m, "b", 1, top + 1), AMQ_ERR_INVALID);
        CHECK_STATUS(amq_maplet_get(m, "b", 1, &v), AMQ_ERR_NOT_FOUND);
        CHECK(amq_filter_items(m) == 1);
        amq_maplet_free(m);
    }
    /* A sum of 2^64 - 1 fits; one more is refused, nothing changed. */
    amq_maplet *m = mk("maplet:op=sum,v=64", 100, 0.01, 0);
    if (m != NULL) {
        uint64_t v;
        CHECK_OK(amq_maplet_put(m, "a", 1, UINT64_MAX - 1));
        CHECK_OK(amq_maplet_put(m, "a", 1, 1));
        CHECK_STATUS(amq_maplet_put(m, "a", 1, 1), AMQ_ERR_OVERFLOW);
        CHECK_OK(amq_maplet_get(m, "a", 1, &v));
        CHECK(v == UINT64_MAX);
        amq_maplet_free(m);
    }
    m = mk("maplet:op=sum,v=1", 100, 0.01, 0);
    if (m != NULL) { /* the largest count in 1-bit values: a long counter */
        uint64_t v;
        CHECK_OK(amq_maplet_put(m, "a", 1, 1));
        for (int i = 0; i < 63; i++)
            CHECK_OK(amq_maplet_merge(m, m));
        CHECK_STATUS(amq_maplet_merge(m, m), AMQ_ERR_OVERFLOW);
        CHECK_OK(amq_maplet_get(m, "a", 1, &v));
        CHECK(v == UINT64_C(1) << 63 && amq_filter_items(m) == v);
        CHECK(reloads(m));
        amq_maplet_free(m);
    }
}

/* ---- space, counters, the tail of l ------------------------------------------------ */

/* Space at 95% load: (r + v + 2.125) bits per slot over 0.95 of the
 * slots, plus the overflow slots; printed against log2(1/eps) + v + 2.2. */
static void test_space(void) {
    static const unsigned rv[][2] = {{7, 8}, {10, 4}, {14, 16}, {20, 1}};
    check_seed = 12;
    for (size_t i = 0; i < 4; i++) {
        char spec[64];
        snprintf(spec, sizeof spec, "maplet:op=max,v=%u,r=%u", rv[i][1],
                 rv[i][0]);
        uint64_t n = check_quick() ? 20000 : 200000;
        amq_maplet *m = mk(spec, n, 0.5, 0);
        if (m == NULL)
            continue;
        amq_maplet_shape s = shape(m);
        uint64_t rng = 12 + i, keys = (uint64_t)(0.95 * (double)s.slots);
        amq_status st = AMQ_OK;
        for (uint64_t k = 0; k < keys && st == AMQ_OK; k++)
            st = amq_maplet_put_hash(m, check_next(&rng),
                                     k & vmask_of(rv[i][1]));
        CHECK_OK(st);
        double bpi = amq_filter_bits_per_key(m), eps = amq_filter_fpr_bound(m);
        double per_slot = rv[i][0] + rv[i][1] + 2.125;
        double slots =
            (double)s.slots + (s.slots < 128 ? (double)s.slots : 128);
        /* Exactly (r + v + 2.125) bits for every slot, overflow included. */
        CHECK_MSG(fabs(bpi - per_slot * slots / (double)keys) < 1e-9,
                  "%s: %.3f bits/item, %.3f expected", spec, bpi,
                  per_slot * slots / (double)keys);
        printf("space r=%u v=%u at %.3f load: %.3f bits/item; log2(1/eps)"
               " + v + 2.2 = %.3f (eps %.3g); per slot %.3f\n",
               rv[i][0], rv[i][1], (double)keys / (double)s.slots, bpi,
               log2(1 / eps) + rv[i][1] + 2.2, eps, per_slot);
        amq_maplet_free(m);
    }
}

/* Slots of a sum counter for c (mqf.h), m = 2^v - 1: one up to m, two up
 * to 2m, else 2 + the digits of c - 2m - 1 in base 2^(r+v) - 1. */
static uint64_t counter_slots(uint64_t c, unsigned r, unsigned v) {
    uint64_t m = (UINT64_C(1) << v) - 1;
    if (c <= 2 * m)
        return c <= m ? 1 : 2;
    uint64_t d = c - 2 * m - 1, base = (UINT64_C(1) << (r + v)) - 1;
    uint64_t k = 1;
    for (; d >= base; d /= base)
        k++;
    return k + 2;
}

/* amq_maplet_sum_slots is what a key's count takes in a real table and
 * what the reference above says, at the form boundaries of several
 * shapes; 0 for what is not a count or a shape. */
static void test_sum_slots(void) {
    static const unsigned vr[][2] = {{1, 7}, {2, 5}, {4, 10}, {8, 3}};
    for (size_t i = 0; i < sizeof vr / sizeof vr[0]; i++) {
        unsigned v = vr[i][0], r = vr[i][1];
        uint64_t m = (UINT64_C(1) << v) - 1,
                 base = (UINT64_C(1) << (r + v)) - 1;
        uint64_t cs[] = {1,
                         m,
                         m + 1,
                         2 * m,
                         2 * m + 1,
                         2 * m + base,
                         2 * m + base + 1,
                         2 * m + base * base + 1};
        for (size_t j = 0; j < sizeof cs / sizeof cs[0]; j++) {
            char spec[64];
            snprintf(spec, sizeof spec, "maplet:op=sum,v=%u,r=%u,slots=256", v,
                     r);
            amq_maplet *mp = mk(spec, 0, 0, 0);
            if (mp == NULL)
                return;
            for (uint64_t left = cs[j]; left > 0;) {
                uint64_t put = left < m ? left : m;
                CHECK_OK(amq_maplet_put_hash(mp, 12345, put));
                left -= put;
            }
            uint64_t got = amq_maplet_sum_slots(v, r, cs[j]);
            CHECK_MSG(got == shape(mp).used_slots &&
                          got == counter_slots(cs[j], r, v),
                      "v=%u r=%u count %llu: %llu slots, the table %llu", v, r,
                      (unsigned long long)cs[j], (unsigned long long)got,
                      (unsigned long long)shape(mp).used_slots);
            amq_maplet_free(mp);
        }
    }
    CHECK(amq_maplet_sum_slots(4, 10, 0) == 0);
    CHECK(amq_maplet_sum_slots(0, 10, 1) == 0);
    CHECK(amq_maplet_sum_slots(65, 10, 1) == 0);
    CHECK(amq_maplet_sum_slots(4, 0, 1) == 0);
    CHECK(amq_maplet_sum_slots(64, 64, UINT64_MAX) == 1);
}

/* Zipf counts: a heavy key takes a counter of a few slots (one digit of
 * r + v bits each), not one slot per occurrence. */
static void test_zipf_counters(void) {
    enum { D = 20000 };
    check_seed = 13;
    amq_maplet *m = mk("maplet:op=sum,v=2", 2 * D, 0.001, 0);
    if (m == NULL)
        return;
    unsigned r = shape(m).remainder_bits;
    uint64_t rng = 13, heavy = 0, want = 0;
    for (uint64_t k = 1; k <= D; k++) {
        uint64_t c = (uint64_t)(1e5 / pow((double)k, 1.1)); /* s = 1.1 */
        c = c ? c : 1;
        uint64_t h = check_next(&rng);
        for (uint64_t left = c; left > 0;) {
            uint64_t put = left < 3 ? left : 3;
            CHECK_OK(amq_maplet_put_hash(m, h, put));
            left -= put;
        }
        heavy += c > 3;
        want += counter_slots(c, r, 2);
    }
    amq_maplet_shape s = shape(m);
    CHECK_MSG(s.used_slots <= want, "%llu slots, counters need %llu",
              (unsigned long long)s.used_slots, (unsigned long long)want);
    printf("zipf(1.1) counts over %u keys (%llu of them > 3): %.3f slots per "
           "key (%.3f expected), %.1f occurrences per key\n",
           D, (unsigned long long)heavy,
           (double)s.used_slots / (double)s.distinct, (double)want / (double)D,
           (double)amq_filter_items(m) / (double)s.distinct);
    CHECK(reloads(m));
    amq_maplet_free(m);
}

/* P(l >= L) for absent keys (l = the keys sharing its fingerprint, read
 * as the sum of their unit values) and for held keys (l = m[k] - M[k]),
 * against eps^L at a large eps. */
static void test_strong_tail(void) {
    check_seed = 14;
    uint64_t n = check_quick() ? 20000 : 100000, t = 4 * n;
    amq_maplet *m = mk("maplet:op=sum,v=8,r=3", n, 0.5, 0);
    if (m == NULL)
        return;
    uint64_t rng = 14, cnt[2][4] = {{0}};
    for (uint64_t i = 0; i < n; i++)
        CHECK_OK(amq_maplet_put_hash(m, check_next(&rng), 1));
    double eps = amq_filter_fpr_bound(m);
    for (uint64_t i = 0; i < t; i++) { /* absent keys */
        uint64_t v = 0;
        amq_maplet_get_hash(m, check_next(&rng), &v);
        for (unsigned L = 1; L <= 3; L++)
            cnt[0][L] += v >= L;
    }
    rng = 14;
    for (uint64_t i = 0; i < n; i++) { /* held keys, value 1 each */
        uint64_t v = 0;
        CHECK_OK(amq_maplet_get_hash(m, check_next(&rng), &v));
        for (unsigned L = 1; L <= 3; L++)
            cnt[1][L] += v - 1 >= L;
    }
    for (unsigned L = 1; L <= 3; L++) {
        double bound = pow(eps, L);
        for (int held = 0; held < 2; held++) {
            double trials = held ? (double)n : (double)t;
            double p = (double)cnt[held][L] / trials;
            double tol = 4 * sqrt(bound * (1 - bound) / trials) + 3 / trials;
            CHECK_MSG(p <= bound * 1.02 + tol, "L=%u %s: %g > eps^L %g", L,
                      held ? "held" : "absent", p, bound);
            printf("strong property, eps %.4f, %s keys: P(l >= %u) = %.3g "
                   "(eps^%u = %.3g)\n",
                   eps, held ? "held" : "absent", L, p, L, bound);
        }
    }
    amq_maplet_free(m);
}

/* ---- exact mode ------------------------------------------------------------------------ */

static void test_exact(void) {
    check_seed = 15;
    /* Every 16-bit key asked: no false positive, every value exact, the
     * keys back from the fingerprints in increasing order. */
    amq_maplet *m = mk("maplet:op=or,v=10,kbits=16", 20000, 0.5, 0);
    if (m != NULL) {
        uint64_t h, wrong = 0, seen = 0, fp, v, e, last = 0, key;
        for (uint64_t k = 0; k < 65536; k += 4) {
            CHECK_OK(amq_maplet_exact_hash(m, k, &h));
            CHECK_OK(amq_maplet_put_hash(m, h, k & 1023));
        }
        for (uint64_t k = 0; k < 65536; k++) {
            CHECK_OK(amq_maplet_exact_hash(m, k, &h));
            amq_status st = amq_maplet_get_hash(m, h, &v);
            wrong += k % 4 ? st != AMQ_ERR_NOT_FOUND
                           : st != AMQ_OK || v != (k & 1023);
        }
        CHECK_MSG(wrong == 0, "exact: %llu wrong", (unsigned long long)wrong);
        amq_maplet_iter it;
        CHECK_OK(amq_maplet_iter_init(m, &it));
        while (amq_maplet_iter_next(&it, &fp, &v, &e)) {
            CHECK_OK(amq_maplet_exact_key(m, fp, &key));
            wrong += key % 4 != 0 || v != (key & 1023) || e != 1 ||
                     (seen > 0 && fp <= last);
            last = fp;
            seen++;
        }
        CHECK(wrong == 0 && seen == 16384);
        CHECK_STATUS(amq_maplet_exact_hash(m, 65536, &h), AMQ_ERR_INVALID);
        amq_maplet_free(m);
    }
    /* 62- and 64-bit keys: the key comes back from its fingerprint. */
    const char *const wide[] = {"maplet:op=sum,v=4,kbits=62",
                                "maplet:op=sum,v=4,kbits=64"};
    for (size_t w = 0; w < 2; w++) {
        m = mk(wide[w], 100000, 0.5, 0);
        if (m == NULL)
            continue;
        uint64_t rng = 15, wrong = 0, h, key;
        for (int i = 0; i < 20000; i++) {
            uint64_t k = check_next(&rng) >> (w == 0 ? 2 : 0);
            CHECK_OK(amq_maplet_exact_hash(m, k, &h));
            CHECK_OK(
                amq_maplet_exact_key(m, amq_maplet_fingerprint(m, h), &key));
            wrong += key != k;
        }
        CHECK_MSG(wrong == 0, "%s: %llu keys not recovered", wide[w],
                  (unsigned long long)wrong);
        amq_maplet_free(m);
    }
    m = mk("maplet:op=sum,v=4", 100, 0.01, 0);
    uint64_t h;
    CHECK(m && amq_maplet_exact_hash(m, 1, &h) == AMQ_ERR_UNSUPPORTED);
    amq_maplet_free(m);
}

/* ---- the static maplet ------------------------------------------------------------------ */

/* Built from pairs with repeats (combined by the operator): every key's
 * value exact, absent keys at the member's rate, log2(1/eps) + v bits per
 * key plus at most 3% (bumped Ribbon both ways), a view answering alike,
 * updates refused. */
static void static_case(const char *spec, unsigned vb, amq_maplet_op op,
                        size_t n) {
    uint64_t *h = malloc(2 * n * sizeof *h), *v = malloc(2 * n * sizeof *v);
    uint64_t *want = malloc(n * sizeof *want), rng = 17, vm = vmask_of(vb);
    amq_maplet *m = NULL;
    amq_diag d;
    if (h == NULL || v == NULL || want == NULL)
        goto out;
    for (size_t i = 0; i < 2 * n; i++) { /* key i % n, twice */
        h[i] = i < n ? check_next(&rng) : h[i - n];
        v[i] = (check_next(&rng) & vm) >> (op == AMQ_MAPLET_SUM ? 1 : 0);
        want[i % n] =
            i < n ? v[i] : amq_maplet_combine(op, want[i - n], v[i], NULL);
    }
    memset(&d, 0, sizeof d);
    amq_status st = amq_maplet_build(spec, h, v, 2 * n, 0.01, NULL, &m, &d);
    CHECK_MSG(st == AMQ_OK, "%s: %s %s", spec, amq_status_name(st), d.message);
    if (m == NULL)
        goto out;
    uint64_t wrong = 0, fp = 0, x;
    for (size_t i = 0; i < n; i++)
        wrong += amq_maplet_get_hash(m, h[i], &x) != AMQ_OK || x != want[i];
    for (size_t i = 0; i < n; i++)
        fp += amq_maplet_get_hash(m, check_next(&rng), &x) == AMQ_OK;
    /* the batch answers key by key as get does: members, then as many
     * absent keys (h[n..2n) reused for them) */
    for (size_t i = n; i < 2 * n; i++)
        h[i] = check_next(&rng);
    uint8_t *found = malloc(2 * n);
    if (found != NULL) {
        uint64_t differ = 0;
        amq_maplet_get_batch(m, h, 2 * n, v, found);
        for (size_t i = 0; i < 2 * n; i++) {
            amq_status gs = amq_maplet_get_hash(m, h[i], &x);
            differ +=
                found[i] != (gs == AMQ_OK) || v[i] != (gs == AMQ_OK ? x : 0);
        }
        CHECK_MSG(differ == 0, "%s: get_batch differs from get in %llu keys",
                  spec, (unsigned long long)differ);
        free(found);
    }
    double eps = amq_filter_fpr_bound(m), t = (double)n;
    double lower = log2(1 / eps) + vb, bpk = amq_filter_bits_per_key(m);
    CHECK_MSG(wrong == 0, "%s: %llu values wrong", spec,
              (unsigned long long)wrong);
    CHECK(amq_filter_items(m) == n);
    CHECK_MSG((double)fp / t <= eps * 1.1 + 4 * sqrt(eps / t) + 3 / t,
              "%s: %g absent keys found, bound %g", spec, (double)fp / t, eps);
    if (strstr(spec, "member=") == NULL && n >= 100000)
        CHECK_MSG(bpk <= lower * 1.03,
                  "%s: %.3f bits/key, log2(1/eps) + v "
                  "= %.3f",
                  spec, bpk, lower);
    printf("%s, %zu keys: %.3f bits/key, log2(1/eps) + v = %.3f (+%.2f%%)\n",
           spec, n, bpk, lower, 100 * (bpk / lower - 1));
    CHECK_STATUS(amq_maplet_put_hash(m, 1, 1), AMQ_ERR_UNSUPPORTED);
    CHECK_STATUS(amq_maplet_delete_hash(m, h[0], 1), AMQ_ERR_UNSUPPORTED);
    amq_maplet_iter it;
    CHECK_STATUS(amq_maplet_iter_init(m, &it), AMQ_ERR_UNSUPPORTED);
    size_t len;
    uint8_t *buf = check_frame(m, &len),
            *al = buf ? aligned_alloc(64, (len + 63) / 64 * 64) : NULL;
    amq_filter *view = NULL;
    if (al != NULL) {
        memcpy(al, buf, len);
        CHECK_OK(amq_filter_view(al, len, NULL, &view, NULL));
        for (size_t i = 0; view != NULL && i < n; i += 7)
            wrong +=
                amq_maplet_get_hash(view, h[i], &x) != AMQ_OK || x != want[i];
        CHECK(wrong == 0 && view != NULL && check_same_frame(m, view));
    }
    amq_filter_free(view);
    free(al);
    free(buf);
out:
    amq_maplet_free(m);
    free(h);
    free(v);
    free(want);
}

static void test_static(void) {
    size_t n = check_quick() ? 20000 : 200000;
    check_seed = 17;
    static_case("smaplet:op=sum,v=8", 8, AMQ_MAPLET_SUM, n);
    static_case("smaplet:op=max,v=1", 1, AMQ_MAPLET_MAX, n);
    static_case("smaplet:op=or,v=40", 40, AMQ_MAPLET_OR, n);
    static_case("smaplet:op=min,v=64", 64, AMQ_MAPLET_MIN, n / 4);
    static_case("smaplet:op=max,v=12,member=fuse16", 12, AMQ_MAPLET_MAX, n / 4);
    static const uint64_t hs[3] = {1, 2, 3}, vs[3] = {1, 256, 3};
    amq_maplet *m = NULL;
    amq_diag d;
    memset(&d, 0, sizeof d);
    CHECK_STATUS(amq_maplet_build("smaplet:v=8", hs, vs, 3, 0.01, NULL, &m, &d),
                 AMQ_ERR_INVALID);
    CHECK(m == NULL && strstr(d.message, "pair 2") != NULL);
    CHECK_STATUS(amq_maplet_new("smaplet", 100, 0.01, NULL, &m, &d),
                 AMQ_ERR_UNSUPPORTED);
}

/* ---- bad arguments ----------------------------------------------------------------------- */

static void test_bad(void) {
    amq_maplet *m = NULL;
    amq_diag d;
    check_seed = 16;
    static const char *const bad[] = {
        "maplet:op=avg",  "maplet:v=0",          "maplet:v=65",
        "maplet:kbits=7", "maplet:kbits=20,r=5", "maplet:multiset=2",
        "maplet:op="};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&d, 0, sizeof d);
        CHECK_STATUS(amq_maplet_new(bad[i], 100, 0.01, NULL, &m, &d),
                     AMQ_ERR_SPEC);
        CHECK(m == NULL && d.message[0] != '\0');
    }
    CHECK_STATUS(amq_maplet_new("bloom", 100, 0.01, NULL, &m, &d),
                 AMQ_ERR_UNSUPPORTED);
    amq_filter *f = NULL;
    CHECK_OK(amq_filter_new("bloom", 100, 0.01, NULL, &f, NULL));
    uint64_t v;
    CHECK(!amq_maplet_is(f));
    CHECK_STATUS(amq_maplet_put(f, "a", 1, 1), AMQ_ERR_UNSUPPORTED);
    CHECK_STATUS(amq_maplet_get(f, "a", 1, &v), AMQ_ERR_UNSUPPORTED);
    amq_filter_free(f);
    static const uint64_t hs[3] = {1, 2, 3}, vs[3] = {1, 300, 2};
    CHECK_STATUS(amq_maplet_build("maplet:v=8", hs, vs, 2, 0.01, NULL, &m, &d),
                 AMQ_ERR_INVALID);
    CHECK(m == NULL);
    /* A batch stops at its first refusal; the pairs before it stay. */
    amq_maplet *b = NULL;
    size_t done = 9;
    CHECK_OK(amq_maplet_new("maplet:v=8", 100, 0.01, NULL, &b, NULL));
    CHECK_STATUS(amq_maplet_put_batch(b, hs, vs, 3, &done), AMQ_ERR_INVALID);
    CHECK(done == 1 && b != NULL && amq_filter_items(b) == 1);
    amq_maplet_free(b);
}

/* ---- the query kernels against the reference --------------------------------- */

/* A maplet and its AMQ_OPT_SCALAR twin (the reference paths) get the same
 * puts, to ~93% of the slots (r = 5: long runs and runs leaving their
 * block), and must answer contains, get, get_batch and contains_batch
 * alike for held and absent keys. Each key is put a few times with values
 * up to the field's maximum, so sum counters take one, two and many slots
 * (digits that may look like any remainder), and multiset groups span
 * several slots. */
static void kernel_case(const char *spec, unsigned vb, uint64_t seed) {
    enum { KEYS = 4000, PUTS = 7600, ASK = 16000 };
    static uint64_t keys[KEYS], hs[ASK], v1[ASK], v2[ASK];
    static uint8_t f1[ASK], f2[ASK], c1[ASK];
    amq_maplet *m = mk(spec, 0, 0, 0), *ref = mk(spec, 0, 0, AMQ_OPT_SCALAR);
    uint64_t rng = seed, vm = vmask_of(vb);
    if (m == NULL || ref == NULL)
        goto done;
    for (size_t i = 0; i < KEYS; i++)
        keys[i] = check_next(&rng);
    for (size_t i = 0; i < PUTS; i++) {
        uint64_t h = keys[check_next(&rng) % KEYS], r = check_next(&rng);
        uint64_t v = r % 4 == 0 ? vm : (r >> 8) & vm;
        amq_status a = amq_maplet_put_hash(m, h, v);
        CHECK_STATUS(amq_maplet_put_hash(ref, h, v), a);
        if (a == AMQ_ERR_FULL)
            break;
    }
    CHECK(check_same_frame(m, ref));
    for (size_t i = 0; i < ASK; i++)
        hs[i] = i % 2 ? keys[check_next(&rng) % KEYS] : check_next(&rng);
    size_t bad = 0;
    for (size_t i = 0; i < ASK; i++) {
        uint64_t a = 7, b = 9;
        amq_status sa = amq_maplet_get_hash(m, hs[i], &a);
        amq_status sb = amq_maplet_get_hash(ref, hs[i], &b);
        bad += sa != sb || a != b ||
               amq_filter_contains_hash(m, hs[i]) !=
                   amq_filter_contains_hash(ref, hs[i]) ||
               amq_filter_contains_hash(m, hs[i]) != (sb == AMQ_OK);
        v2[i] = b;
        f2[i] = sb == AMQ_OK;
    }
    amq_maplet_get_batch(m, hs, ASK, v1, f1);
    amq_filter_contains_batch(m, hs, ASK, c1);
    for (size_t i = 0; i < ASK; i++)
        bad += f1[i] != f2[i] || v1[i] != v2[i] || c1[i] != f2[i];
    CHECK_MSG(bad == 0, "%s (seed %llu): %zu answers differ from the reference",
              spec, (unsigned long long)seed, bad);
done:
    amq_maplet_free(m);
    amq_maplet_free(ref);
}

static void test_kernels(void) {
    static const struct {
        const char *spec;
        unsigned v;
    } cases[] = {
        {"maplet:op=or,v=8,q=13,r=5", 8},
        {"maplet:op=max,v=4,q=13,r=5", 4},
        {"maplet:op=min,v=1,q=13,r=9", 1},
        {"maplet:op=sum,v=8,q=13,r=5", 8},
        {"maplet:op=sum,v=3,q=13,r=5", 3},
        {"maplet:op=sum,v=1,q=13,r=7", 1},
        {"maplet:op=sum,v=30,q=13,r=20", 30},
        {"maplet:op=sum,v=4,q=13,r=8", 4},  /* 12-bit slots */
        {"maplet:op=min,v=2,q=13,r=12", 2}, /* 14 */
        {"maplet:op=max,v=7,q=13,r=8", 7},  /* 15: a bit wraps in VBMI */
        {"maplet:op=or,v=8,q=13,r=8", 8},   /* 16 */
        {"maplet:op=or,v=5,multiset=1,q=13,r=5", 5},
        {"maplet:op=sum,v=6,multiset=1,q=13,r=5", 6},
        {"maplet:op=or,v=50,q=13,r=8", 50}, /* 58-bit slots: no kernel */
        {"maplet:op=sum,v=8,q=13,r=5,concurrent=1", 8},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (uint64_t seed = 1; seed <= 3; seed++)
            kernel_case(cases[i].spec, cases[i].v, 0x5eed0000 + 31 * seed + i);
}

int main(void) {
    test_models();
    test_build_merge();
    test_merge_refused();
    test_delete();
    test_keep_values();
    test_resize();
    test_values();
    test_space();
    test_sum_slots();
    test_zipf_counters();
    test_strong_tail();
    test_exact();
    test_static();
    test_kernels();
    test_bad();
    return check_report("test_maplet");
}
