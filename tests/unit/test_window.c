/*
 * test_window.c — the sliding-window filter (amq/window.h): no false
 * negative inside the window, keys past the window and keys never added
 * answer present at most at the certified bound, the bound at most the
 * target while generations stay within capacity, memory within 1.3x of one
 * Bloom filter for the window's capacity, expiry times, time windows that
 * overflow a generation, the clock never running backwards, frames that
 * round-trip to identical bytes and forged frames refused, bad parameters
 * and failed allocations changing nothing.
 */
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "amq/amq.h"
#include "core/bits.h"
#include "core/frame.h"
#include "window/window_impl.h"

static amq_window *make(amq_window_clock clock, uint64_t span, uint64_t cap,
                        double fpr, unsigned g, amq_window_seal seal) {
    amq_window_params p = {clock, span, cap, fpr, g, seal};
    amq_window *w = NULL;
    amq_diag d = {0};
    CHECK_STATUS(amq_window_new(&p, NULL, &w, &d), AMQ_OK);
    return w;
}

static uint64_t key(uint64_t i) {
    uint64_t s = i * 0x9e3779b97f4a7c15ULL + 17;
    return check_next(&s);
}

static uint64_t fresh(uint64_t i) { return key(i ^ 0x5555555555555555ULL); }

/* Bytes of the Bloom filter amq makes for n keys at fpr. */
static size_t bloom_bytes(uint64_t n, double fpr) {
    amq_filter *f = NULL;
    CHECK_STATUS(amq_filter_new("bloom", n, fpr, NULL, &f, NULL), AMQ_OK);
    size_t b = f != NULL ? amq_filter_size_bytes(f) : 0;
    amq_filter_free(f);
    return b;
}

/* Count window: the last span adds answer present; keys added (G+1) L
 * adds ago or earlier, and keys never added, at most at the bound. */
static void test_count_window(amq_window_seal seal, double fpr) {
    const uint64_t span = check_quick() ? 8000 : 100000;
    const unsigned g = 8;
    amq_window *w = make(AMQ_WINDOW_ITEMS, span, 0, fpr, g, seal);
    if (w == NULL)
        return;
    amq_window_info in;
    amq_window_get_info(w, 0, &in);
    uint64_t len = in.length, total = 4 * span;
    uint64_t misses = 0, old_fp = 0, old_n = 0, new_fp = 0;
    double worst_bound = 0;
    size_t most_bytes = 0;
    for (uint64_t i = 0; i < total; i++) {
        CHECK_STATUS(amq_window_add_hash(w, key(i), 0, NULL), AMQ_OK);
        if ((i + 1) % (span / 2) != 0)
            continue;
        uint64_t done = i + 1;
        for (uint64_t j = done > span ? done - span : 0; j < done; j++)
            misses += !amq_window_contains_hash(w, key(j), 0);
        /* the keys that left the window most recently, each asked twice
         * over the run (checkpoints are half a span apart) */
        uint64_t gone = (g + 1) * len;
        for (uint64_t j = done >= gone + span ? done - gone - span : 0;
             j + gone <= done; j++) {
            old_fp += amq_window_contains_hash(w, key(j), 0);
            old_n++;
        }
        for (uint64_t j = 0; j < 20000; j++)
            new_fp += amq_window_contains_hash(w, fresh(done * 100000 + j), 0);
        double b = amq_window_fpr_bound(w, 0);
        if (b > worst_bound)
            worst_bound = b;
        size_t bytes = amq_window_size_bytes(w);
        if (bytes > most_bytes)
            most_bytes = bytes;
    }
    /* the batch lookup gives the one-key answers */
    uint64_t hs[3000];
    uint8_t got[3000];
    size_t differ = 0;
    for (size_t j = 0; j < 3000; j++)
        hs[j] = j % 3 ? fresh(j) : key(total - 1 - j);
    amq_window_contains_batch(w, hs, 3000, 0, got);
    for (size_t j = 0; j < 3000; j++)
        differ += got[j] != amq_window_contains_hash(w, hs[j], 0);
    CHECK_MSG(differ == 0, "%zu batch answers differ", differ);
    double checks = 20000.0 * (double)(total / (span / 2));
    double new_rate = (double)new_fp / checks;
    double old_rate = old_n ? (double)old_fp / (double)old_n : 0;
    double ratio = (double)most_bytes / (double)bloom_bytes(span, fpr);
    CHECK_MSG(misses == 0, "%llu false negatives inside the window",
              (unsigned long long)misses);
    CHECK_MSG(worst_bound <= fpr * 1.0001, "bound %g above target %g",
              worst_bound, fpr);
    /* measured rates within the bound plus 4 sigma */
    CHECK_MSG(new_rate <= worst_bound + 4 * sqrt(worst_bound / checks),
              "fresh keys %g against bound %g", new_rate, worst_bound);
    CHECK_MSG(old_n > 0 && old_rate <= worst_bound +
                                           4 * sqrt(worst_bound / old_n) +
                                           4.0 / old_n,
              "forgotten keys %g (%llu) against bound %g", old_rate,
              (unsigned long long)old_n, worst_bound);
    /* from 10^5 keys a window at 1% or less (docs/structures.md) */
    if (seal == AMQ_WINDOW_SEAL_RIBBON && !check_quick())
        CHECK_MSG(ratio <= 1.3, "%.3f x a Bloom filter for the window", ratio);
    printf("count window seal=%s fpr=%g: bound %.5f, fresh %.5f, forgotten "
           "%.5f (%llu), %.3f x Bloom (%.2f bits/key)\n",
           seal == AMQ_WINDOW_SEAL_RIBBON ? "ribbon" : "qf", fpr, worst_bound,
           new_rate, old_rate, (unsigned long long)old_n, ratio,
           8.0 * (double)most_bytes / (double)span);
    amq_window_free(w);
}

/* Time window: a key added at t answers at every t' < t + span and, from
 * t + (G + 1) L on, only at the bound; its expiry is at least t + span - 1
 * and it answers up to there, not after (unless a false positive). */
static void test_time_window(void) {
    const uint64_t span = 1000, cap = 4000;
    const unsigned g = 4;
    amq_window *w =
        make(AMQ_WINDOW_TIME, span, cap, 0.01, g, AMQ_WINDOW_SEAL_RIBBON);
    if (w == NULL)
        return;
    uint64_t len = 250, misses = 0, late = 0, late_n = 0, bad_expiry = 0;
    /* 3 keys per millisecond for 4000 ms: 3000 per window, under capacity */
    for (uint64_t t = 0; t < 4000; t++) {
        for (uint64_t j = 0; j < 3; j++)
            CHECK_STATUS(amq_window_add_hash(w, key(3 * t + j), t, NULL),
                         AMQ_OK);
        if (t % 97 != 0)
            continue;
        for (uint64_t s = t >= span ? t - span + 1 : 0; s <= t; s++)
            misses += !amq_window_contains_hash(w, key(3 * s), t);
        for (uint64_t s = 0; s + (g + 1) * len <= t; s += 7) {
            late += amq_window_contains_hash(w, key(3 * s + 1), t);
            late_n++;
        }
        uint64_t e = amq_window_expiry_hash(w, key(3 * t), t);
        bad_expiry += e == AMQ_WINDOW_ABSENT || e < t + span - 1 ||
                      !amq_window_contains_hash(w, key(3 * t), e) ||
                      e >= t + (g + 1) * len;
    }
    /* batch and one-key answers agree at every age, past ones included */
    size_t differ = 0;
    for (uint64_t at = 0; at < 6000; at += 250) {
        uint64_t hs[600];
        uint8_t got[600];
        for (size_t j = 0; j < 600; j++)
            hs[j] = j % 2 ? fresh(j) : key(3 * (at % 4000) + j);
        amq_window_contains_batch(w, hs, 600, at, got);
        for (size_t j = 0; j < 600; j++)
            differ += got[j] != amq_window_contains_hash(w, hs[j], at);
    }
    CHECK(differ == 0);
    double bound = amq_window_fpr_bound(w, 4000);
    CHECK(misses == 0);
    CHECK(bad_expiry == 0);
    CHECK_MSG(bound <= 0.01 * 1.0001, "bound %g", bound);
    CHECK_MSG((double)late / (double)late_n <=
                  0.01 + 4 * sqrt(0.01 / (double)late_n),
              "%llu of %llu expired keys answer present",
              (unsigned long long)late, (unsigned long long)late_n);
    /* queries far in the future see nothing; time never runs backwards */
    CHECK(!amq_window_contains_hash(w, key(3 * 3999), 3999 + 5 * span) ||
          amq_window_fpr_bound(w, 3999 + 5 * span) > 0);
    CHECK(amq_window_fpr_bound(w, 3999 + 5 * span) == 0);
    CHECK(amq_window_contains_hash(w, key(3 * 3999), 10));
    CHECK_STATUS(amq_window_add_hash(w, key(1u << 30), 5, NULL), AMQ_OK);
    amq_window_info in;
    amq_window_get_info(w, 0, &in);
    CHECK(in.now == 3999);
    CHECK(amq_window_expiry_hash(w, fresh(7), 3999) == AMQ_WINDOW_ABSENT ||
          amq_window_contains_hash(w, fresh(7), 3999));
    /* a jump past the whole window drops every generation */
    CHECK_STATUS(amq_window_advance(w, 100000), AMQ_OK);
    amq_window_get_info(w, 0, &in);
    CHECK(in.pieces == 1 && in.live_items == 0 && in.bound == 0);
    CHECK(!amq_window_contains_hash(w, key(3 * 3999), 0));
    amq_window_free(w);
}

/* A time window fed past its capacity: generations split into pieces,
 * nothing is lost, the bound grows past the target and says so. */
static void test_overflow(void) {
    const unsigned g = 4;
    amq_window *w =
        make(AMQ_WINDOW_TIME, 400, 400, 0.01, g, AMQ_WINDOW_SEAL_RIBBON);
    if (w == NULL)
        return;
    uint64_t misses = 0;
    for (uint64_t i = 0; i < 2000; i++) /* 2000 keys in one millisecond */
        CHECK_STATUS(amq_window_add_hash(w, key(i), 50, NULL), AMQ_OK);
    for (uint64_t i = 0; i < 2000; i++)
        misses += !amq_window_contains_hash(w, key(i), 449);
    amq_window_info in;
    amq_window_get_info(w, 50, &in);
    CHECK(misses == 0);
    /* a key that is a false positive of the open filter is not added */
    CHECK_MSG(in.pieces == 20 && in.live_items <= 2000 && in.live_items >= 1980,
              "%u pieces, %llu", in.pieces, (unsigned long long)in.live_items);
    CHECK_MSG(in.bound > 0.01, "bound %g", in.bound);
    uint64_t fp = 0;
    for (uint64_t i = 0; i < 100000; i++)
        fp += amq_window_contains_hash(w, fresh(i), 50);
    CHECK_MSG((double)fp / 1e5 <= in.bound + 4 * sqrt(in.bound / 1e5),
              "%g against bound %g", (double)fp / 1e5, in.bound);
    amq_window_free(w);
}

static void test_bad_arguments(void) {
    amq_window *w = NULL;
    amq_diag d = {0};
    amq_window_params bad[] = {
        {AMQ_WINDOW_ITEMS, 0, 0, 0.01, 8, AMQ_WINDOW_SEAL_RIBBON},
        {AMQ_WINDOW_ITEMS, 100, 0, 0.6, 8, AMQ_WINDOW_SEAL_RIBBON},
        {AMQ_WINDOW_ITEMS, 100, 0, -1, 8, AMQ_WINDOW_SEAL_RIBBON},
        {AMQ_WINDOW_ITEMS, 100, 0, NAN, 8, AMQ_WINDOW_SEAL_RIBBON},
        {AMQ_WINDOW_ITEMS, 100, 0, 0.01, 65, AMQ_WINDOW_SEAL_RIBBON},
        {AMQ_WINDOW_TIME, 100, 0, 0.01, 8, AMQ_WINDOW_SEAL_RIBBON},
        {(amq_window_clock)7, 100, 0, 0.01, 8, AMQ_WINDOW_SEAL_RIBBON},
        {AMQ_WINDOW_ITEMS, 100, 0, 0.01, 8, (amq_window_seal)9},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_STATUS(amq_window_new(&bad[i], NULL, &w, &d), AMQ_ERR_INVALID);
        CHECK(w == NULL);
    }
    amq_window_params huge = {AMQ_WINDOW_ITEMS,      UINT64_MAX, 0, 1e-12, 1,
                              AMQ_WINDOW_SEAL_RIBBON};
    CHECK(amq_window_new(&huge, NULL, &w, &d) == AMQ_ERR_OVERFLOW);
    CHECK_STATUS(amq_window_new(NULL, NULL, &w, &d), AMQ_ERR_INVALID);
    CHECK(!amq_window_contains_hash(NULL, 1, 0));
    CHECK(amq_window_add_hash(NULL, 1, 0, NULL) == AMQ_ERR_INVALID);
    CHECK(amq_window_serialized_size(NULL) == 0);
    /* defaults: 8 generations, 1%, capacity = span */
    amq_window_params def = {AMQ_WINDOW_ITEMS, 1000, 0, 0, 0, 0};
    CHECK_STATUS(amq_window_new(&def, NULL, &w, &d), AMQ_OK);
    amq_window_info in;
    amq_window_get_info(w, 0, &in);
    CHECK(in.generations == 8 && in.fpr == 0.01 && in.capacity == 1000 &&
          in.length == 125 && in.pieces == 1);
    CHECK(amq_window_contains(w, "a", 1, 0) == false);
    bool was = true;
    CHECK_STATUS(amq_window_add(w, "a", 1, 0, &was), AMQ_OK);
    CHECK(!was);
    CHECK_STATUS(amq_window_add(w, "a", 1, 0, &was), AMQ_OK);
    CHECK(was);
    CHECK(amq_window_contains(w, "a", 1, 0));
    CHECK(amq_window_expiry(w, "a", 1, 0) == 9 * 125 - 1);
    amq_window_free(w);
}

/* ---- frames ------------------------------------------------------------------- */

static uint8_t *save(const amq_window *w, size_t *len) {
    *len = amq_window_serialized_size(w);
    uint8_t *buf = aligned_alloc(64, (*len + 63) & ~(size_t)63);
    size_t got = 0;
    CHECK_STATUS(amq_window_save(w, buf, *len, &got), AMQ_OK);
    CHECK(got == *len);
    return buf;
}

static void reseal(uint8_t *buf, size_t len) { amq__frame_seal(buf, len); }

static void test_frame(amq_window_seal seal) {
    amq_window *w = make(AMQ_WINDOW_TIME, 800, 900, 0.02, 4, seal);
    if (w == NULL)
        return;
    for (uint64_t i = 0; i < 3000; i++)
        CHECK_STATUS(amq_window_add_hash(w, key(i), i / 2, NULL), AMQ_OK);
    size_t len;
    uint8_t *buf = save(w, &len);
    amq_window *v = NULL;
    amq_diag d = {0};
    CHECK_STATUS(amq_window_load(buf, len, NULL, &v, &d), AMQ_OK);
    if (v != NULL) {
        size_t len2;
        uint8_t *again = save(v, &len2);
        CHECK(len2 == len && memcmp(buf, again, len) == 0);
        free(again);
        uint64_t diff = 0;
        for (uint64_t i = 0; i < 6000; i++)
            diff += amq_window_contains_hash(w, key(i), 1600) !=
                    amq_window_contains_hash(v, key(i), 1600);
        CHECK(diff == 0);
        /* both go on alike */
        for (uint64_t i = 3000; i < 4000; i++) {
            CHECK_STATUS(amq_window_add_hash(w, key(i), i / 2, NULL), AMQ_OK);
            CHECK_STATUS(amq_window_add_hash(v, key(i), i / 2, NULL), AMQ_OK);
        }
        size_t la, lb;
        uint8_t *a = save(w, &la), *b = save(v, &lb);
        CHECK(la == lb && memcmp(a, b, la) == 0);
        free(a);
        free(b);
        amq_window_free(v);
    }
    /* a window is not a filter */
    amq_filter *f = NULL;
    CHECK_STATUS(amq_filter_load(buf, len, NULL, &f, &d), AMQ_ERR_KIND);
    /* every truncation and every flipped byte is refused */
    for (size_t n = 0; n < len; n += n < 400 ? 1 : 61)
        CHECK(amq_window_load(buf, n, NULL, &v, &d) != AMQ_OK && v == NULL);
    for (size_t i = 0; i < len; i += i < 600 ? 1 : 37) {
        buf[i] ^= 0x10;
        CHECK(amq_window_load(buf, len, NULL, &v, &d) != AMQ_OK);
        buf[i] ^= 0x10;
    }
    /* forged parameters with a valid checksum: each names its field */
    const size_t P = AMQ__FRAME_OFF_PARAMS;
    const size_t Y = P + 128; /* the payload: 96 bytes of params padded */
    struct {
        size_t off;
        int width; /* 4 or 8 */
        uint64_t value;
    } forge[] = {
        {P + 0, 4, 2},       /* version */
        {P + 4, 4, 0x10},    /* unknown flag */
        {P + 8, 8, 801},     /* span: shape no longer follows */
        {P + 8, 8, 0},       /* span 0 */
        {P + 32, 4, 5},      /* generations */
        {P + 36, 4, 3},      /* r */
        {P + 72, 8, 0},      /* clock before the pieces */
        {P + 80, 4, 0},      /* no pieces */
        {P + 80, 4, 100000}, /* pieces past the payload */
        {P + 80, 4, 1},      /* records read as filters */
        {P + 84, 4, 1},      /* reserved */
        {Y, 8, UINT64_MAX},  /* first piece's generation */
        {Y + 8, 8, 100000},  /* its items */
        {Y + 24, 4, 2},      /* its kind */
        {Y + 28, 4, 1},      /* reserved */
    };
    for (size_t i = 0; i < sizeof forge / sizeof forge[0]; i++) {
        uint8_t *c = malloc(len);
        memcpy(c, buf, len);
        if (forge[i].width == 4)
            amq__put_u32(c + forge[i].off, (uint32_t)forge[i].value);
        else
            amq__put_u64(c + forge[i].off, forge[i].value);
        reseal(c, len);
        amq_status st = amq_window_load(c, len, NULL, &v, &d);
        CHECK_MSG(st == AMQ_ERR_CORRUPT || st == AMQ_ERR_VERSION,
                  "forgery %zu loaded (%s)", i, amq_status_name(st));
        CHECK(v == NULL);
        free(c);
    }
    /* the last piece must be the open quotient filter */
    uint32_t npc = amq__get_u32(buf + P + 80);
    if (npc > 1 && seal == AMQ_WINDOW_SEAL_RIBBON) {
        uint8_t *c = malloc(len);
        memcpy(c, buf, len);
        amq__put_u32(c + Y + 32 * (npc - 1) + 24, 1);
        reseal(c, len);
        CHECK(amq_window_load(c, len, NULL, &v, &d) == AMQ_ERR_CORRUPT);
        free(c);
    }
    free(buf);
    amq_window_free(w);
}

/* A time window whose generations overflowed into hundreds of pieces
 * saves and loads like any other. */
static void test_many_pieces(void) {
    amq_window *w =
        make(AMQ_WINDOW_TIME, 100, 2, 0.1, 1, AMQ_WINDOW_SEAL_RIBBON);
    if (w == NULL)
        return;
    for (uint64_t i = 0; i < 1200; i++)
        CHECK_STATUS(amq_window_add_hash(w, key(i), 7, NULL), AMQ_OK);
    amq_window_info in;
    amq_window_get_info(w, 7, &in);
    CHECK_MSG(in.pieces >= 500, "%u pieces", in.pieces);
    size_t len;
    uint8_t *buf = save(w, &len);
    amq_window *v = NULL;
    amq_diag d = {0};
    CHECK_STATUS(amq_window_load(buf, len, NULL, &v, &d), AMQ_OK);
    uint64_t misses = 0;
    for (uint64_t i = 0; v != NULL && i < 1200; i++)
        misses += !amq_window_contains_hash(v, key(i), 7);
    CHECK(v != NULL && misses == 0);
    /* the 1024th piece is refused, the window unchanged */
    amq_status st = AMQ_OK;
    uint64_t i = 1200;
    while (st == AMQ_OK && i < 5000)
        st = amq_window_add_hash(w, key(i++), 7, NULL);
    amq_window_get_info(w, 7, &in);
    CHECK(st == AMQ_ERR_FULL && in.pieces == AMQ_WINDOW_MAX_PIECES);
    free(buf);
    amq_window_free(v);
    amq_window_free(w);
}

/* ---- failed allocations --------------------------------------------------------- */

typedef struct failing {
    long left; /* allocations to grant; < 0: all */
} failing;

static void *f_alloc(void *ctx, size_t n) {
    failing *f = ctx;
    if (f->left == 0)
        return NULL;
    if (f->left > 0)
        f->left--;
    return malloc(n);
}
static void *f_realloc(void *ctx, void *p, size_t old, size_t n) {
    (void)old;
    failing *f = ctx;
    if (f->left == 0)
        return NULL;
    if (f->left > 0)
        f->left--;
    return realloc(p, n);
}
static void f_free(void *ctx, void *p, size_t n) {
    (void)ctx;
    (void)n;
    free(p);
}

static void test_oom(void) {
    failing fl = {-1};
    amq_allocator a = {f_alloc, f_realloc, f_free, &fl};
    amq_options o = {0};
    o.allocator = &a;
    amq_window_params p = {AMQ_WINDOW_ITEMS,      400, 0, 0.01, 4,
                           AMQ_WINDOW_SEAL_RIBBON};
    for (long n = 0; n < 40; n++) {
        amq_window *w = NULL;
        fl.left = n;
        amq_status st = amq_window_new(&p, &o, &w, NULL);
        CHECK(st == AMQ_OK ? w != NULL : (st == AMQ_ERR_NOMEM && w == NULL));
        amq_window_free(w);
    }
    /* an add that closes a generation fails at every allocation and
     * leaves every answer as it was */
    long fails = 0;
    for (long n = 0; n < 40; n++) {
        fl.left = -1;
        amq_window *w = NULL;
        CHECK_STATUS(amq_window_new(&p, &o, &w, NULL), AMQ_OK);
        if (w == NULL)
            return;
        for (uint64_t i = 0; i < 100; i++) /* exactly one generation */
            CHECK_STATUS(amq_window_add_hash(w, key(i), 0, NULL), AMQ_OK);
        uint8_t before[400];
        for (uint64_t i = 0; i < 400; i++)
            before[i] = amq_window_contains_hash(w, key(i), 0);
        fl.left = n;
        amq_status st = amq_window_add_hash(w, key(100), 0, NULL);
        fl.left = -1;
        if (st != AMQ_OK) {
            fails++;
            CHECK(st == AMQ_ERR_NOMEM);
            uint64_t diff = 0;
            for (uint64_t i = 0; i < 400; i++)
                diff += before[i] != amq_window_contains_hash(w, key(i), 0);
            CHECK(diff == 0);
            amq_window_info in;
            amq_window_get_info(w, 0, &in);
            CHECK(in.now == 100 && in.live_items == 100);
            /* and the next add succeeds */
            CHECK_STATUS(amq_window_add_hash(w, key(100), 0, NULL), AMQ_OK);
        }
        CHECK(amq_window_contains_hash(w, key(100), 0));
        amq_window_free(w);
    }
    CHECK(fails > 0);
    /* loading under failed allocations */
    amq_window *w =
        make(AMQ_WINDOW_ITEMS, 400, 0, 0.01, 4, AMQ_WINDOW_SEAL_RIBBON);
    for (uint64_t i = 0; w != NULL && i < 350; i++)
        amq_window_add_hash(w, key(i), 0, NULL);
    size_t len;
    uint8_t *buf = w != NULL ? save(w, &len) : NULL;
    for (long n = 0; buf != NULL && n < 60; n++) {
        amq_window *v = NULL;
        fl.left = n;
        amq_status st = amq_window_load(buf, len, &o, &v, NULL);
        fl.left = -1;
        CHECK(st == AMQ_OK ? v != NULL : (st == AMQ_ERR_NOMEM && v == NULL));
        amq_window_free(v);
    }
    free(buf);
    amq_window_free(w);
}

int main(void) {
    /* every batch below goes generation by generation; the one-key loop
     * it takes for small windows is the reference it is checked against */
    amq__window_batch_bytes = 0;
    test_bad_arguments();
    test_count_window(AMQ_WINDOW_SEAL_RIBBON, 0.01);
    test_count_window(AMQ_WINDOW_SEAL_RIBBON, 0.001);
    test_count_window(AMQ_WINDOW_SEAL_QF, 0.01);
    test_time_window();
    test_overflow();
    test_frame(AMQ_WINDOW_SEAL_RIBBON);
    test_frame(AMQ_WINDOW_SEAL_QF);
    test_many_pieces();
    test_oom();
    return check_report("test_window");
}
