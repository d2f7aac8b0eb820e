/*
 * test_topk.c — HeavyKeeper top-k against an exact model.
 *
 *   - Zipf streams (s = 1.0 and 1.2, 10^6 arrivals; smaller under
 *     AMQ_TEST_QUICK): precision of the reported top-k against the exact
 *     top-k >= 0.9 for k = 10, 50, 100 at the default memory (8k buckets
 *     per row, 4 rows: 25 600 bytes of buckets for k = 100);
 *   - the paper's one-sided guarantee: no estimate and no listed count
 *     exceeds the true count;
 *   - the list is sorted, holds at most k items, names them by their key
 *     bytes (truncated to keylen), and add reports expelled items;
 *   - incr by `by` behaves like `by` arrivals;
 *   - frames: save -> load -> save identical, views, and every invariant
 *     load checks (through the type's callbacks: topk is not registered in
 *     amq_filter until the contract suite knows sketches).
 */
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "amq/sketch.h"
#include "core/bits.h"
#include "type/type.h"

enum { UMAX = 100000 };

static double cdf[UMAX];
static uint32_t truth[UMAX];

static void zipf_cdf(size_t u, double s) {
    double sum = 0;
    for (size_t i = 0; i < u; i++)
        cdf[i] = (sum += pow((double)(i + 1), -s));
    for (size_t i = 0; i < u; i++)
        cdf[i] /= sum;
}

static size_t zipf_draw(uint64_t *rng, size_t u) {
    double x = (double)(check_next(rng) >> 11) * 0x1p-53;
    size_t lo = 0, hi = u - 1;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cdf[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static uint64_t rank_hash(uint64_t seed, uint64_t r) {
    uint64_t s = seed * 0x9e3779b97f4a7c15ULL ^ (r << 1);
    return check_next(&s);
}

static int cmp_desc(const void *a, const void *b) {
    uint32_t x = truth[*(const uint32_t *)a], y = truth[*(const uint32_t *)b];
    return x > y ? -1 : x < y;
}

/* The k-th largest true count (ties make "the exact top-k" a set of items
 * with count >= this; an item tied at the boundary counts as correct). */
static uint32_t kth_count(size_t u, size_t k) {
    static uint32_t idx[UMAX];
    for (size_t i = 0; i < u; i++)
        idx[i] = (uint32_t)i;
    qsort(idx, u, sizeof idx[0], cmp_desc);
    return truth[idx[k - 1]];
}

static void zipf_case(double s, unsigned k, uint64_t seed) {
    size_t u = check_quick() ? 20000 : UMAX;
    uint64_t n = check_quick() ? 200000 : 1000000;
    check_seed = seed;
    amq_topk *t = NULL;
    CHECK_OK(amq_topk_new(k, 0, 0, 1.08, 0, NULL, &t));
    if (t == NULL)
        return;
    zipf_cdf(u, s);
    memset(truth, 0, sizeof truth);
    uint64_t rng = seed;
    for (uint64_t j = 0; j < n; j++) {
        size_t r = zipf_draw(&rng, u);
        truth[r]++;
        amq_topk_add_hash(t, rank_hash(seed, r), NULL);
    }
    CHECK(amq_topk_total(t) == n);
    /* Map hashes back to ranks through the model. */
    amq_topk_item items[100];
    size_t m = amq_topk_list(t, items, k);
    CHECK(m == k && amq_topk_size(t) == k);
    uint32_t kth = kth_count(u, k);
    size_t hits = 0, over = 0;
    for (size_t i = 0; i < m; i++) {
        for (size_t r = 0; r < u; r++) {
            if (rank_hash(seed, r) != items[i].hash)
                continue;
            hits += truth[r] >= kth;
            over += items[i].count > truth[r];
            break;
        }
    }
    double precision = (double)hits / k;
    CHECK_MSG(precision >= 0.9, "s=%.1f k=%u: precision %.2f", s, k, precision);
    CHECK_MSG(over == 0, "s=%.1f k=%u: %zu listed counts above the truth", s, k,
              over);
    /* No estimate above the truth, for every key of the universe. */
    uint64_t est_over = 0;
    for (size_t r = 0; r < u; r++)
        est_over += amq_topk_count(t, rank_hash(seed, r)) > truth[r];
    CHECK_MSG(est_over == 0, "s=%.1f k=%u: %llu estimates above the truth", s,
              k, (unsigned long long)est_over);
    amq_topk_free(t);
}

static void test_zipf(void) {
    static const double s[] = {1.0, 1.2};
    static const unsigned ks[] = {10, 50, 100};
    for (size_t i = 0; i < 2; i++)
        for (size_t j = 0; j < 3; j++)
            zipf_case(s[i], ks[j], 1000 + 10 * i + j);
}

/* TOPK.ADD: the item pushed out of the list is reported, with its key. */
static void test_expel_and_names(void) {
    check_seed = 2;
    amq_topk *t = NULL;
    CHECK_OK(amq_topk_new(2, 64, 3, 1.08, 8, NULL, &t));
    if (t == NULL)
        return;
    CHECK(amq_topk_keylen(t) == 8);
    amq_topk_expelled ex;
    bool e = true;
    for (int i = 0; i < 3; i++)
        CHECK_OK(amq_topk_add_key(t, "apple", 5, &ex, &e));
    CHECK(!e);
    for (int i = 0; i < 5; i++)
        CHECK_OK(amq_topk_add_key(t, "banana-split-sundae", 19, &ex, &e));
    CHECK(!e && amq_topk_size(t) == 2);
    /* A third item must beat apple's 3 to get in: its 4th arrival does. */
    int when = 0;
    for (int i = 1; i <= 4 && when == 0; i++) {
        CHECK_OK(amq_topk_add_key(t, "cherry", 6, &ex, &e));
        if (e)
            when = i;
    }
    CHECK_MSG(when == 4, "cherry entered after %d arrivals", when);
    CHECK(ex.hash == amq_topk_hash(t, "apple", 5) && ex.count == 3 &&
          ex.key_len == 5 && ex.key_stored == 5 &&
          memcmp(ex.key, "apple", 5) == 0);
    amq_topk_item it[4];
    size_t m = amq_topk_list(t, it, 4);
    CHECK(m == 2);
    CHECK(it[0].count == 5 && it[0].key_len == 19 && it[0].key_stored == 8 &&
          memcmp(it[0].key, "banana-s", 8) == 0 &&
          it[0].hash == amq_topk_hash(t, "banana-split-sundae", 19));
    CHECK(it[1].count == 4 && it[1].key_len == 6 &&
          memcmp(it[1].key, "cherry", 6) == 0);
    CHECK(amq_topk_list(t, it, 1) == 1 && it[0].count == 5);
    CHECK(amq_topk_list(t, NULL, 0) == 0);
    CHECK(amq_topk_query(t, amq_topk_hash(t, "cherry", 6)));
    CHECK(!amq_topk_query(t, amq_topk_hash(t, "apple", 5)));
    CHECK(amq_topk_count(t, amq_topk_hash(t, "apple", 5)) <= 3);
    /* Added by hash only, then named by a later add_key. */
    uint64_t hd = amq_topk_hash(t, "durian", 6);
    for (int i = 0; i < 9; i++)
        amq_topk_add_hash(t, hd, NULL);
    m = amq_topk_list(t, it, 4);
    CHECK(m == 2 && it[0].hash == hd && it[0].key_len == AMQ_TOPK_NO_KEY &&
          it[0].key_stored == 0);
    CHECK_OK(amq_topk_add_key(t, "durian", 6, NULL, NULL));
    m = amq_topk_list(t, it, 4);
    CHECK(m == 2 && it[0].hash == hd && it[0].count == 10 &&
          it[0].key_len == 6 && memcmp(it[0].key, "durian", 6) == 0);
    CHECK_STATUS(amq_topk_add_key(t, NULL, 3, NULL, NULL), AMQ_ERR_INVALID);
    CHECK_OK(amq_topk_add_key(t, NULL, 0, NULL, NULL));
    amq_topk_free(t);
}

/* incr by `by` = `by` arrivals: exact on a free or matching bucket, and on
 * a taken bucket the newcomer decays the holder and takes over with the
 * arrivals left, never more than it brought. */
static void test_incr(void) {
    check_seed = 3;
    amq_topk *t = NULL;
    CHECK_OK(amq_topk_new(5, 1, 2, 1.08, 0, NULL, &t)); /* one bucket/row */
    if (t == NULL)
        return;
    CHECK(!amq_topk_incr_hash(t, 11, 0, NULL));
    CHECK(amq_topk_total(t) == 0);
    amq_topk_incr_hash(t, 11, 5, NULL);
    CHECK(amq_topk_count(t, 11) == 5);
    amq_topk_incr_hash(t, UINT64_C(22) << 32, 1000, NULL);
    uint64_t c = amq_topk_count(t, UINT64_C(22) << 32);
    CHECK_MSG(c >= 900 && c <= 1000, "newcomer count %llu",
              (unsigned long long)c);
    CHECK(amq_topk_count(t, 11) <= 5);
    CHECK(amq_topk_total(t) == 1005);
    /* A heavy holder resists: decay 1.08^-200 per arrival is ~2e-7. */
    amq_topk_incr_hash(t, UINT64_C(33) << 32, 200, NULL);
    amq_topk_incr_hash(t, UINT64_C(44) << 32, 1000, NULL);
    CHECK(amq_topk_count(t, UINT64_C(44) << 32) == 0);
    amq_topk_free(t);
}

/* ---- frames (through the type's callbacks) ------------------------------- */

typedef struct blob {
    uint8_t params[64];
    size_t plen;
    uint8_t *payload;
    size_t len;
} blob;

static bool save_blob(const amq__obj *impl, blob *b) {
    const amq__type *ty = &amq__type_topk;
    amq__wr w = {NULL, 0};
    ty->params_write(impl, &w);
    b->plen = w.pos;
    b->len = impl->table_bytes; /* the type saves its table as it is */
    b->payload = aligned_alloc(64, (b->len + 63) / 64 * 64);
    if (b->plen > sizeof b->params || b->payload == NULL)
        return false;
    w = (amq__wr){b->params, 0};
    ty->params_write(impl, &w);
    memcpy(b->payload, impl->table, b->len);
    return true;
}

static amq_status load_raw(const uint8_t *params, size_t plen,
                           const uint8_t *payload, size_t len, bool view,
                           amq__obj **out) {
    static const amq_options opt;
    amq__rd r;
    amq__rd_init(&r, params, plen, 80, "topk", NULL);
    return amq__type_topk.load(&amq__type_topk, &r, payload, len, view, &opt,
                               out);
}

static amq_status load_blob(const blob *b, bool view, amq__obj **out) {
    return load_raw(b->params, b->plen, b->payload, b->len, view, out);
}

static bool same_blob(const blob *a, const blob *b) {
    return a->plen == b->plen && a->len == b->len &&
           memcmp(a->params, b->params, a->plen) == 0 &&
           memcmp(a->payload, b->payload, a->len) == 0;
}

/* Edit one field of the blob, expect CORRUPT, undo. */
static void corrupt(blob *b, uint8_t *at, const void *bytes, size_t n,
                    const char *what) {
    uint8_t save[16];
    amq__obj *impl = NULL;
    memcpy(save, at, n);
    memcpy(at, bytes, n);
    amq_status st = load_blob(b, false, &impl);
    CHECK_MSG(st == AMQ_ERR_CORRUPT, "%s: %s", what, amq_status_name(st));
    amq__obj_free(impl);
    memcpy(at, save, n);
}

static void test_frames(void) {
    check_seed = 4;
    amq__spec spec;
    amq__obj *impl = NULL, *back = NULL, *view = NULL;
    CHECK_OK(
        amq__spec_parse("topk:k=4,width=16,depth=2,keylen=8", &spec, NULL));
    CHECK_OK(amq__type_topk.create(&amq__type_topk, &spec, 0, 0,
                                   &(amq_options){0}, &impl, NULL));
    if (impl == NULL)
        return;
    amq_topk *t = (amq_topk *)impl;
    uint64_t rng = 4;
    static const char *names[] = {"a", "bb", "ccc", "a-much-longer-name"};
    for (int j = 0; j < 400; j++) {
        uint64_t r = check_next(&rng) % 23;
        if (r < 4)
            CHECK_OK(
                amq_topk_add_key(t, names[r], strlen(names[r]), NULL, NULL));
        else
            amq_topk_add_hash(t, r * 0x1234567, NULL);
    }
    blob a, b, c;
    memset(&b, 0, sizeof b);
    memset(&c, 0, sizeof c);
    if (!save_blob(impl, &a))
        goto out;
    CHECK(a.plen == 48 && amq_topk_size(t) == 4);
    CHECK_OK(load_blob(&a, false, &back));
    CHECK_OK(load_blob(&a, true, &view));
    if (back == NULL || view == NULL || !save_blob(back, &b) ||
        !save_blob(view, &c))
        goto out;
    CHECK(same_blob(&a, &b) && same_blob(&a, &c));
    /* The loaded sketch continues exactly as the original (same rng). */
    for (int j = 0; j < 100; j++) {
        amq_topk_add_hash(t, (uint64_t)j * 77, NULL);
        amq_topk_add_hash((amq_topk *)back, (uint64_t)j * 77, NULL);
    }
    free(b.payload);
    free(c.payload);
    b.payload = c.payload = NULL;
    if (save_blob(impl, &b) && save_blob(back, &c))
        CHECK(same_blob(&b, &c));

    /* Every invariant load checks. */
    size_t heap = (size_t)16 * 2 * 8, slot = 24 + 8;
    uint8_t *s0 = a.payload + heap, *s1 = s0 + slot;
    uint32_t big = 5, zero32 = 0, nokey = AMQ_TOPK_NO_KEY, odd = 3;
    uint64_t zero64 = 0, huge = UINT64_MAX;
    corrupt(&a, a.params + 28, &big, 4, "size > k");
    corrupt(&a, a.params + 24, &odd, 4, "keylen not a multiple of 8");
    corrupt(&a, a.params + 0, &zero32, 4, "k = 0");
    corrupt(&a, a.params + 4, &(uint32_t){17}, 4, "depth 17");
    corrupt(&a, a.params + 16, &(double){1.0}, 8, "decay 1");
    corrupt(&a, a.params + 32, &(uint64_t){1}, 8, "total below counts");
    corrupt(&a, s0 + 8, &zero64, 8, "count 0");
    corrupt(&a, s1 + 8, &(uint64_t){0}, 8, "count 0 below root");
    corrupt(&a, s0 + 8, &huge, 8, "heap order / count above total");
    corrupt(&a, s1, s0, 8, "duplicate hash");
    corrupt(&a, s0 + 20, &(uint32_t){9}, 4, "stored > keylen");
    uint32_t flip = amq__get_u32(s0 + 16) == AMQ_TOPK_NO_KEY ? 1 : nokey;
    corrupt(&a, s0 + 16, &flip, 4, "key length does not match stored");
    corrupt(&a, s0 + 24 + 7, &(uint8_t){1}, 1, "bytes past stored");
    /* A taken bucket emptied but keeping its fingerprint; a fingerprint in
     * an empty bucket. */
    for (size_t i = 0, done = 0; i < 32 && done != 3; i++) {
        uint8_t *bk = a.payload + 8 * i;
        if (amq__get_u32(bk + 4) != 0 && amq__get_u32(bk) != 0 && !(done & 1)) {
            corrupt(&a, bk + 4, &zero32, 4, "bucket fp without count");
            done |= 1;
        } else if (amq__get_u32(bk + 4) == 0 && !(done & 2)) {
            corrupt(&a, bk, &(uint32_t){1}, 4, "empty bucket with fp");
            done |= 2;
        }
    }
    amq__obj *tmp = NULL;
    CHECK_STATUS(load_raw(a.params, 40, a.payload, a.len, false, &tmp),
                 AMQ_ERR_CORRUPT);
    CHECK_STATUS(load_raw(a.params, a.plen, a.payload, a.len - 8, false, &tmp),
                 AMQ_ERR_CORRUPT);
    CHECK_OK(load_blob(&a, false, &tmp)); /* every edit was undone */
    amq__obj_free(tmp);
out:
    free(a.payload);
    free(b.payload);
    free(c.payload);
    amq__obj_free(back);
    amq__obj_free(view);
    amq__obj_free(impl);
}

static void test_args(void) {
    check_seed = 5;
    amq_topk *t = NULL;
    CHECK_STATUS(amq_topk_new(0, 0, 0, 1.08, 0, NULL, &t), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_topk_new(70000, 0, 0, 1.08, 0, NULL, &t), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_topk_new(10, 0, 17, 1.08, 0, NULL, &t), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_topk_new(10, 0, 0, 1.0, 0, NULL, &t), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_topk_new(10, 0, 0, 1.08, 2000, NULL, &t), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_topk_new(10, UINT64_MAX, 16, 1.08, 0, NULL, &t),
                 AMQ_ERR_OVERFLOW);
    CHECK(t == NULL);
    CHECK_OK(amq_topk_new(10, 0, 0, 1.08, 5, NULL, &t));
    if (t != NULL)
        CHECK(amq_topk_width(t) == 80 && amq_topk_depth(t) == 4 &&
              amq_topk_k(t) == 10 && amq_topk_keylen(t) == 8 &&
              amq_topk_decay(t) == 1.08);
    amq_topk_free(t);
    amq_topk_free(NULL);

    /* The spec it describes writes reals in their shortest form. */
    amq_filter *f = NULL;
    char spec[128];
    CHECK_OK(amq_filter_new("topk:k=10", 0, 0.0, NULL, &f, NULL));
    if (f != NULL) {
        amq_filter_describe(f, spec, sizeof spec);
        CHECK_MSG(strstr(spec, ",decay=1.08,") != NULL, "%s", spec);
    }
    amq_filter_free(f);
}

int main(void) {
    test_zipf();
    test_expel_and_names();
    test_incr();
    test_frames();
    test_args();
    return check_report("test_topk");
}
