/*
 * test_clock.c — the Bloom clock and the vector clocks (amq/clock.h).
 *
 *   - a random message-passing run checked against vector-clock truth: a
 *     truly ordered pair is never reported concurrent (nor equal), and a
 *     "concurrent" verdict is always true; dense and sparse vector clocks
 *     agree;
 *   - merge is commutative, associative and idempotent (both kinds);
 *   - base-offset compression and widening: values survive, the offset is
 *     the common minimum, wire and frame encodings round-trip, overflow is
 *     reported and leaves the clock unchanged, a failing allocation too;
 *   - the estimates: fp_exact against the closed form on tiny values, and
 *     a statistical test (fixed seeds) of its claim against the simulated
 *     rate of "a concurrent pair whose private part is one event ends up
 *     dominated"; the paper's eq. (3) measured on the same runs and its
 *     documented miscalibration asserted (docs/clock.md);
 *   - history search and §3 event recovery;
 *   - bad input: other shapes and kinds -> AMQ_ERR_INCOMPATIBLE, every
 *     truncation and bit flip of wire messages and frames rejected.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "amq/clock.h"
#include "amq/filter.h"
#include "check.h"

static amq_clock *bloom(uint32_t m, uint32_t k, uint32_t hist) {
    amq_clock *c = NULL;
    CHECK_OK(amq_clock_new_bloom(m, k, hist, NULL, &c));
    return c;
}

static void tick_u64(amq_clock *c, uint64_t e) {
    CHECK_OK(amq_clock_tick(c, &e, sizeof e));
}

static amq_order order_of(const amq_clock *a, const amq_clock *b) {
    amq_clock_verdict v;
    amq_status st = amq_clock_compare(a, b, &v);
    CHECK_OK(st);
    return st == AMQ_OK ? v.order : (amq_order)-1;
}

/* Wire bytes of c (malloc'ed). */
static uint8_t *wire(const amq_clock *c, size_t *len) {
    size_t n = amq_clock_encoded_size(c);
    uint8_t *buf = malloc(n);
    CHECK(buf != NULL);
    CHECK_OK(amq_clock_encode(c, buf, n, len));
    CHECK(*len == n);
    return buf;
}

static bool same_wire(const amq_clock *a, const amq_clock *b) {
    size_t la, lb;
    uint8_t *x = wire(a, &la), *y = wire(b, &lb);
    bool same = la == lb && memcmp(x, y, la) == 0;
    free(x);
    free(y);
    return same;
}

/* ---- a random run against vector-clock truth ------------------------------- */

#define RUN_NODES 8
#define RUN_EVENTS 400

typedef struct stamp {
    amq_clock *bc, *dense, *sparse;
} stamp;

static void run_against_truth(uint64_t seed) {
    check_seed = seed;
    uint64_t s = seed;
    amq_clock *bc[RUN_NODES], *dv[RUN_NODES], *sv[RUN_NODES];
    stamp st[RUN_EVENTS];
    for (int i = 0; i < RUN_NODES; i++) {
        bc[i] = bloom(32, 2, 0);
        CHECK_OK(amq_clock_new_vector(AMQ_CLOCK_VECTOR_DENSE, (uint64_t)i, NULL,
                                      &dv[i]));
        CHECK_OK(amq_clock_new_vector(AMQ_CLOCK_VECTOR_SPARSE,
                                      (uint64_t)i * 1000, NULL, &sv[i]));
    }
    for (int i = 0; i < RUN_NODES; i++)
        for (int j = 0; j < RUN_NODES; j++)
            CHECK_OK(amq_clock_join(dv[i], (uint64_t)j));
    for (int e = 0; e < RUN_EVENTS; e++) {
        int p = (int)(check_next(&s) % RUN_NODES);
        tick_u64(bc[p], check_next(&s));
        CHECK_OK(amq_clock_tick(dv[p], NULL, 0));
        CHECK_OK(amq_clock_tick(sv[p], NULL, 0));
        CHECK_OK(amq_clock_clone(bc[p], &st[e].bc));
        CHECK_OK(amq_clock_clone(dv[p], &st[e].dense));
        CHECK_OK(amq_clock_clone(sv[p], &st[e].sparse));
        if (check_next(&s) % 3 == 0) { /* send to one peer */
            int q = (int)(check_next(&s) % RUN_NODES);
            CHECK_OK(amq_clock_merge(bc[q], bc[p]));
            CHECK_OK(amq_clock_merge(dv[q], dv[p]));
            CHECK_OK(amq_clock_merge(sv[q], sv[p]));
        }
    }
    unsigned long ordered = 0, concurrent = 0, missed = 0, wrong_conc = 0;
    for (int a = 0; a < RUN_EVENTS; a++)
        for (int b = a + 1; b < RUN_EVENTS; b++) {
            amq_order truth = order_of(st[a].dense, st[b].dense);
            CHECK(truth == order_of(st[a].sparse, st[b].sparse));
            CHECK(truth == AMQ_ORDER_BEFORE || truth == AMQ_ORDER_CONCURRENT);
            amq_order got = order_of(st[a].bc, st[b].bc);
            if (truth == AMQ_ORDER_BEFORE) {
                ordered++;
                missed += got != AMQ_ORDER_BEFORE;
            } else {
                concurrent++;
            }
            wrong_conc +=
                got == AMQ_ORDER_CONCURRENT && truth != AMQ_ORDER_CONCURRENT;
        }
    CHECK_MSG(missed == 0, "%lu of %lu ordered pairs missed", missed, ordered);
    CHECK(wrong_conc == 0);
    CHECK(ordered > 1000 && concurrent > 1000);
    for (int e = 0; e < RUN_EVENTS; e++) {
        amq_clock_free(st[e].bc);
        amq_clock_free(st[e].dense);
        amq_clock_free(st[e].sparse);
    }
    for (int i = 0; i < RUN_NODES; i++) {
        amq_clock_free(bc[i]);
        amq_clock_free(dv[i]);
        amq_clock_free(sv[i]);
    }
}

/* ---- merge laws ---------------------------------------------------------------- */

static amq_clock *random_clock(amq_clock_kind kind, uint64_t *s) {
    amq_clock *c = NULL;
    if (kind == AMQ_CLOCK_BLOOM) {
        c = bloom(64, 3, 0);
        unsigned n = (unsigned)(check_next(s) % 200);
        for (unsigned i = 0; i < n; i++)
            tick_u64(c, check_next(s) % 50); /* repeats: cells above 1 */
        return c;
    }
    CHECK_OK(amq_clock_new_vector(kind, 0, NULL, &c));
    amq_clock *peer = NULL;
    for (uint64_t node = 1; node < 12; node++) {
        if (check_next(s) % 2)
            continue;
        CHECK_OK(amq_clock_new_vector(kind, node, NULL, &peer));
        unsigned n = (unsigned)(check_next(s) % 40);
        for (unsigned i = 0; i < n; i++)
            CHECK_OK(amq_clock_tick(peer, NULL, 0));
        CHECK_OK(amq_clock_merge(c, peer));
        amq_clock_free(peer);
    }
    return c;
}

static amq_clock *merged(const amq_clock *a, const amq_clock *b) {
    amq_clock *r = NULL;
    CHECK_OK(amq_clock_clone(a, &r));
    CHECK_OK(amq_clock_merge(r, b));
    return r;
}

static void merge_laws(amq_clock_kind kind, uint64_t seed) {
    check_seed = seed;
    uint64_t s = seed;
    for (int t = 0; t < 50; t++) {
        amq_clock *a = random_clock(kind, &s), *b = random_clock(kind, &s),
                  *c = random_clock(kind, &s);
        amq_clock *ab = merged(a, b), *ba = merged(b, a);
        amq_clock *ab_c = merged(ab, c), *bc = merged(b, c);
        amq_clock *a_bc = merged(a, bc), *aa = merged(a, a);
        CHECK(order_of(ab, ba) == AMQ_ORDER_EQUAL && same_wire(ab, ba));
        CHECK(order_of(ab_c, a_bc) == AMQ_ORDER_EQUAL && same_wire(ab_c, a_bc));
        CHECK(order_of(aa, a) == AMQ_ORDER_EQUAL && same_wire(aa, a));
        amq_order o = order_of(a, ab);
        CHECK(o == AMQ_ORDER_BEFORE || o == AMQ_ORDER_EQUAL);
        amq_clock *list[] = {a, b, c, ab, ba, ab_c, bc, a_bc, aa};
        for (size_t i = 0; i < sizeof list / sizeof list[0]; i++)
            amq_clock_free(list[i]);
    }
}

/* ---- compression, widening, encodings ------------------------------------------- */

static void roundtrip(const amq_clock *c) {
    size_t len;
    uint8_t *buf = wire(c, &len);
    amq_clock *d = NULL;
    CHECK_OK(amq_clock_clone(c, &d));
    CHECK_OK(amq_clock_tick(d, "x", 1)); /* make it differ first */
    CHECK_OK(amq_clock_decode(d, buf, len));
    CHECK(order_of(c, d) == AMQ_ORDER_EQUAL && same_wire(c, d));
    size_t flen = amq_clock_save_size(c), got;
    uint8_t *frame = malloc(flen);
    CHECK_OK(amq_clock_save(c, frame, flen, &got));
    amq_clock *e = NULL;
    CHECK_OK(amq_clock_load(frame, got, NULL, &e, NULL));
    if (e != NULL) {
        CHECK(order_of(c, e) == AMQ_ORDER_EQUAL && same_wire(c, e));
        CHECK(amq_clock_offset(e) == amq_clock_offset(c));
        uint8_t *again = malloc(flen);
        CHECK_OK(amq_clock_save(e, again, flen, &got));
        CHECK(memcmp(again, frame, flen) == 0);
        free(again);
    }
    /* a bare copy: the same timestamp and shape, no history; a timestamp
     * received later decodes into it */
    amq_clock *bare = NULL;
    CHECK_OK(amq_clock_clone_bare(c, &bare));
    if (bare != NULL) {
        CHECK(order_of(c, bare) == AMQ_ORDER_EQUAL && same_wire(c, bare));
        CHECK(amq_clock_kind_of(bare) != AMQ_CLOCK_BLOOM ||
              amq_clock_history_len(bare) <= 1);
        CHECK_OK(amq_clock_tick(bare, "y", 1));
        CHECK_OK(amq_clock_decode(bare, buf, len));
        CHECK(order_of(c, bare) == AMQ_ORDER_EQUAL);
    }
    amq_clock_free(bare);
    amq_clock_free(d);
    amq_clock_free(e);
    free(frame);
    free(buf);
}

static void test_compression(void) {
    check_seed = 7;
    uint64_t s = 7;
    amq_clock *c = bloom(128, 4, 0);
    uint64_t truth[128] = {0};
    CHECK(amq_clock_cell_bits(c) == 8);
    roundtrip(c); /* all zero */
    /* Enough events that every cell is hit: the minimum moves out. */
    for (int i = 0; i < 3000; i++) {
        uint64_t e = check_next(&s);
        tick_u64(c, e);
        for (uint32_t j = 0; j < 128; j++)
            truth[j] = amq_clock_get(c, j); /* read back below */
    }
    uint64_t lo = UINT64_MAX;
    for (uint32_t j = 0; j < 128; j++)
        lo = truth[j] < lo ? truth[j] : lo;
    CHECK(amq_clock_offset(c) == lo && lo > 50);
    CHECK(amq_clock_cell_bits(c) == 8); /* the offset keeps cells small */
    CHECK(fabs(amq_clock_sum(c) - 3000.0 * 4) < 0.5);
    roundtrip(c);
    /* One event repeated: its cells run away from the rest and widen. */
    for (int i = 0; i < 70000; i++)
        CHECK_OK(amq_clock_tick(c, "hot", 3));
    CHECK(amq_clock_cell_bits(c) == 32);
    CHECK(fabs(amq_clock_sum(c) - (3000.0 + 70000.0) * 4) < 0.5);
    roundtrip(c);
    amq_clock_free(c);
}

/* A counter at the top of the 64-bit range is reported, not wrapped. */
static void test_overflow(void) {
    amq_clock *c = bloom(8, 1, 4);
    /* Build a huge offset through the wire: take a genuine message of a
     * clock whose cells are all 0, and splice a new body in. */
    amq_clock *z = bloom(8, 1, 0);
    size_t len;
    uint8_t *buf = wire(z, &len);
    /* head: B1 m k tag(4) | body: varint offset, mode 1, w 1, 1 byte | check */
    size_t head = 1 + 1 + 1 + 4;
    uint8_t msg[64];
    memcpy(msg, buf, head);
    size_t n = head;
    uint64_t off = UINT64_MAX - 2;
    while (off >= 0x80) {
        msg[n++] = (uint8_t)(off | 0x80);
        off >>= 7;
    }
    msg[n++] = (uint8_t)off;
    msg[n++] = 1;
    msg[n++] = 1;
    msg[n++] = 0;
    /* the check: XXH3 with the documented seed */
    amq_hasher h;
    CHECK_OK(amq_hasher_init(&h, AMQ_HASH_XXH3, 0x636c6f636b776972ULL, NULL));
    uint32_t chk = (uint32_t)amq_hash64(&h, msg, n);
    memcpy(msg + n, &chk, 4);
    CHECK_OK(amq_clock_decode(c, msg, n + 4));
    CHECK(amq_clock_offset(c) == UINT64_MAX - 2);
    CHECK_OK(amq_clock_tick(c, "e", 1));
    CHECK_OK(amq_clock_tick(c, "e", 1));
    size_t l1, l2;
    uint8_t *before = wire(c, &l1);
    uint32_t hl = amq_clock_history_len(c);
    CHECK_STATUS(amq_clock_tick(c, "e", 1), AMQ_ERR_OVERFLOW);
    uint8_t *after = wire(c, &l2);
    CHECK(l1 == l2 && memcmp(before, after, l1) == 0);
    CHECK(amq_clock_history_len(c) == hl);
    free(before);
    free(after);
    free(buf);
    amq_clock_free(z);
    amq_clock_free(c);
}

/* ---- a failing allocator: widening and vector growth leave the clock as is -- */

static int fail_countdown;
static void *f_alloc(void *ctx, size_t n) {
    (void)ctx;
    if (fail_countdown == 0)
        return NULL;
    if (fail_countdown > 0)
        fail_countdown--;
    return malloc(n);
}
static void *f_realloc(void *ctx, void *p, size_t o, size_t n) {
    (void)ctx;
    (void)o;
    return realloc(p, n);
}
static void f_free(void *ctx, void *p, size_t n) {
    (void)ctx;
    (void)n;
    free(p);
}

static void test_nomem(void) {
    amq_allocator al = {f_alloc, f_realloc, f_free, NULL};
    amq_options opt = {.allocator = &al};
    fail_countdown = -1;
    amq_clock *c = NULL;
    CHECK_OK(amq_clock_new_bloom(16, 2, 8, &opt, &c));
    for (int i = 0; i < 255; i++)
        CHECK_OK(amq_clock_tick(c, "a", 1));
    size_t l1, l2;
    uint8_t *before = wire(c, &l1);
    fail_countdown = 0;
    amq_status st = amq_clock_tick(c, "a", 1); /* needs 16-bit cells */
    CHECK_STATUS(st, AMQ_ERR_NOMEM);
    uint8_t *after = wire(c, &l2);
    CHECK(l1 == l2 && memcmp(before, after, l1) == 0);
    fail_countdown = -1;
    CHECK_OK(amq_clock_tick(c, "a", 1));
    CHECK(amq_clock_cell_bits(c) == 16);
    amq_clock *v = NULL, *w = NULL;
    CHECK_OK(amq_clock_new_vector(AMQ_CLOCK_VECTOR_SPARSE, 1, &opt, &v));
    CHECK_OK(amq_clock_new_vector(AMQ_CLOCK_VECTOR_SPARSE, 2, &opt, &w));
    CHECK_OK(amq_clock_tick(v, NULL, 0));
    for (int i = 0; i < 9; i++) {
        amq_clock *p = NULL;
        CHECK_OK(amq_clock_new_vector(AMQ_CLOCK_VECTOR_SPARSE, 10 + (uint64_t)i,
                                      NULL, &p));
        CHECK_OK(amq_clock_tick(p, NULL, 0));
        CHECK_OK(amq_clock_merge(w, p));
        amq_clock_free(p);
    }
    fail_countdown = 0;
    CHECK_STATUS(amq_clock_merge(v, w), AMQ_ERR_NOMEM);
    CHECK(amq_clock_size(v) == 1 && amq_clock_get(v, 1) == 1);
    fail_countdown = -1;
    free(before);
    free(after);
    amq_clock_free(c);
    amq_clock_free(v);
    amq_clock_free(w);
}

/* Fail the N-th allocation for every N: each operation either succeeds
 * or returns AMQ_ERR_NOMEM with the clock unchanged and nothing leaked. */
static long live_bytes;
static void *c_alloc(void *ctx, size_t n) {
    (void)ctx;
    if (fail_countdown == 0)
        return NULL;
    if (fail_countdown > 0)
        fail_countdown--;
    live_bytes += (long)n;
    return malloc(n);
}
static void c_free(void *ctx, void *p, size_t n) {
    (void)ctx;
    if (p != NULL)
        live_bytes -= (long)n;
    free(p);
}

typedef amq_status (*clock_op)(amq_clock *c, const amq_clock *other,
                               const uint8_t *msg, size_t len);
static amq_status op_tick(amq_clock *c, const amq_clock *o, const uint8_t *m,
                          size_t l) {
    (void)o, (void)m, (void)l;
    return amq_clock_tick(c, "hot", 3);
}
static amq_status op_merge(amq_clock *c, const amq_clock *o, const uint8_t *m,
                           size_t l) {
    (void)m, (void)l;
    return amq_clock_merge(c, o);
}
static amq_status op_decode(amq_clock *c, const amq_clock *o, const uint8_t *m,
                            size_t l) {
    (void)o;
    return amq_clock_decode(c, m, l);
}
static amq_status op_assign(amq_clock *c, const amq_clock *o, const uint8_t *m,
                            size_t l) {
    (void)m, (void)l;
    return amq_clock_assign(c, o);
}

/* A clock in the counting allocator whose next "hot" tick must widen, and
 * an `other` whose merge or decode widens it too. */
static void oom_case(amq_clock_kind kind, clock_op op, const char *what) {
    amq_allocator al = {c_alloc, f_realloc, c_free, NULL};
    amq_options opt = {.allocator = &al};
    bool done = false;
    for (int n = 0; n < 200 && !done; n++) {
        fail_countdown = -1;
        long base = live_bytes;
        amq_clock *c = NULL, *o = NULL;
        if (kind == AMQ_CLOCK_BLOOM) {
            CHECK_OK(amq_clock_new_bloom(32, 2, 6, &opt, &c));
            CHECK_OK(amq_clock_new_bloom(32, 2, 0, NULL, &o));
            for (int i = 0; i < 255; i++)
                CHECK_OK(amq_clock_tick(c, "hot", 3));
            for (int i = 0; i < 300; i++)
                CHECK_OK(amq_clock_tick(o, "cold", 4));
        } else {
            CHECK_OK(amq_clock_new_vector(kind, 1, &opt, &c));
            CHECK_OK(amq_clock_new_vector(kind, 2, NULL, &o));
            for (uint64_t i = 3; i < 40; i++) {
                CHECK_OK(amq_clock_join(o, i));
                if (kind == AMQ_CLOCK_VECTOR_DENSE)
                    CHECK_OK(amq_clock_join(c, i));
            }
            CHECK_OK(amq_clock_join(c, 2));
            CHECK_OK(amq_clock_join(o, 1));
            CHECK_OK(amq_clock_tick(o, NULL, 0));
        }
        size_t l0, l1, lm;
        uint8_t *before = wire(c, &l0), *msg = wire(o, &lm);
        uint32_t hl = amq_clock_history_len(c);
        fail_countdown = n;
        amq_status st = op(c, o, msg, lm);
        fail_countdown = -1;
        CHECK_MSG(st == AMQ_OK || st == AMQ_ERR_NOMEM, "%s, fail at %d: %s",
                  what, n, amq_status_name(st));
        if (st == AMQ_ERR_NOMEM) {
            uint8_t *after = wire(c, &l1);
            CHECK_MSG(l0 == l1 && memcmp(before, after, l0) == 0 &&
                          amq_clock_history_len(c) == hl,
                      "%s, fail at %d: clock changed", what, n);
            free(after);
        } else {
            done = true;
        }
        free(before);
        free(msg);
        amq_clock_free(c);
        amq_clock_free(o);
        CHECK_MSG(live_bytes == base, "%s, fail at %d: %ld bytes leaked", what,
                  n, live_bytes - base);
    }
    CHECK_MSG(done, "%s never succeeded", what);
}

static void test_oom_every_allocation(void) {
    static const struct {
        clock_op op;
        const char *name;
    } ops[] = {{op_tick, "tick"},
               {op_merge, "merge"},
               {op_decode, "decode"},
               {op_assign, "assign"}};
    for (size_t i = 0; i < 4; i++) {
        oom_case(AMQ_CLOCK_BLOOM, ops[i].op, ops[i].name);
        if (ops[i].op != op_tick)
            oom_case(AMQ_CLOCK_VECTOR_SPARSE, ops[i].op, ops[i].name);
    }
    oom_case(AMQ_CLOCK_VECTOR_DENSE, op_merge, "dense merge");
    oom_case(AMQ_CLOCK_VECTOR_DENSE, op_assign, "dense assign");
    /* construction, clone and load: NOMEM and no leak, or success */
    amq_allocator al = {c_alloc, f_realloc, c_free, NULL};
    amq_options opt = {.allocator = &al};
    amq_clock *src = bloom(64, 3, 4);
    for (int i = 0; i < 50; i++)
        tick_u64(src, (uint64_t)i);
    size_t flen = amq_clock_save_size(src), got;
    uint8_t *frame = malloc(flen);
    CHECK_OK(amq_clock_save(src, frame, flen, &got));
    for (int what = 0; what < 3; what++) {
        bool done = false;
        for (int n = 0; n < 100 && !done; n++) {
            long base = live_bytes;
            amq_clock *out = NULL;
            fail_countdown = n;
            amq_status st =
                what == 0   ? amq_clock_new_bloom(64, 3, 8, &opt, &out)
                : what == 1 ? amq_clock_load(frame, flen, &opt, &out, NULL)
                            : amq_clock_new_vector(AMQ_CLOCK_VECTOR_DENSE, 1,
                                                   &opt, &out);
            fail_countdown = -1;
            CHECK(st == AMQ_OK || (st == AMQ_ERR_NOMEM && out == NULL));
            done = st == AMQ_OK;
            if (done && what == 0) {
                amq_clock *cl = NULL;
                for (int m = 0; m < 50; m++) {
                    fail_countdown = m;
                    amq_status cs = amq_clock_clone(out, &cl);
                    fail_countdown = -1;
                    CHECK(cs == AMQ_OK || (cs == AMQ_ERR_NOMEM && cl == NULL));
                    amq_clock_free(cl);
                    cl = NULL;
                    if (cs == AMQ_OK)
                        break;
                }
            }
            amq_clock_free(out);
            CHECK_MSG(live_bytes == base, "case %d fail at %d: leak", what, n);
        }
        CHECK(done);
    }
    free(frame);
    amq_clock_free(src);
}

/* ---- the estimates ------------------------------------------------------------ */

static void test_estimate_values(void) {
    /* The paper's worked example: A = [0,2,1,2,0,2], B = [2,2,1,2,1,2]. */
    double p = amq_clock_fp_paper(6, 7, 10);
    CHECK_MSG(fabs(p - 0.29) < 0.005, "eq. (3) example gives %g", p);
    /* D = 0: k throws cover k given cells with probability k!/m^k. */
    double f = 1;
    for (int i = 1; i <= 10; i++)
        f *= (double)i / 1024.0;
    double got = amq_clock_fp_exact(1024, 10, 0);
    CHECK_MSG(fabs(got / f - 1) < 1e-6, "got %g want %g", got, f);
    /* A moderate value by inclusion-exclusion, both branches agree. */
    double want = 0;
    for (int j = 0, sign = 1; j <= 3; j++, sign = -sign) {
        double c = j == 0 ? 1 : (j == 1 ? 3 : (j == 2 ? 3 : 1));
        want += sign * c * pow(1 - j / 64.0, 63);
    }
    got = amq_clock_fp_exact(64, 3, 60);
    CHECK_MSG(fabs(got - want) < 1e-12, "got %.15g want %.15g", got, want);
    /* Monotone in D, tends to 1. */
    double prev = 0;
    for (double d = 0; d < 5000; d += 37) {
        double q = amq_clock_fp_exact(256, 4, d);
        CHECK(q >= prev - 1e-15 && q <= 1);
        prev = q;
    }
    CHECK(prev > 0.999);
    /* Large k: the alternating sum is useless there; the mixture answers,
     * exact at D = 0 (k!/m^k) ... */
    double kf = 1;
    for (int i = 1; i <= 40; i++)
        kf *= (double)i / 4096.0;
    got = amq_clock_fp_exact(4096, 40, 0);
    CHECK_MSG(fabs(got / kf - 1) < 1e-6, "k=40: got %g want %g", got, kf);
    /* ... and against a Monte Carlo of the model itself (k = 32, m = 64,
     * D = 100: 132 throws must hit 32 given cells). */
    uint64_t s = 4242;
    check_seed = s;
    unsigned trials = check_quick() ? 4000 : 20000, hit = 0;
    for (unsigned t = 0; t < trials; t++) {
        uint64_t covered = 0; /* target cells are 0..31 */
        for (int i = 0; i < 132; i++) {
            uint64_t c = check_next(&s) % 64;
            covered |= c < 32 ? 1ULL << c : 0;
        }
        hit += covered == 0xffffffffULL;
    }
    double mc = (double)hit / trials;
    got = amq_clock_fp_exact(64, 32, 100);
    CHECK_MSG(fabs(mc - got) < 4.5 * sqrt(got * (1 - got) / trials) + 0.002,
              "k=32: fp_exact %g, Monte Carlo %g", got, mc);
    /* k = 64 stays fast, in [0, 1] and monotone over a wide range */
    prev = 0;
    for (double d = 0; d < 1e6; d = d * 1.7 + 1) {
        double q = amq_clock_fp_exact(64, 64, d);
        CHECK_MSG(q >= prev * (1 - 1e-9) && q <= 1, "d=%g: %g after %g", d, q,
                  prev);
        prev = q;
    }
    CHECK(prev > 0.999);
}

/* One private event on A, b private events on B, over a common past X of
 * `past` events. Returns the observed dominance rate; *paper and *exact
 * the claims (constant for a fixed configuration apart from collisions
 * inside X, which do not move the sums). */
static double private_event_rate(uint32_t m, uint32_t k, unsigned past,
                                 unsigned b, unsigned trials, uint64_t seed,
                                 double *paper, double *exact) {
    uint64_t s = seed;
    unsigned dominated = 0;
    double sp = 0, se = 0;
    for (unsigned t = 0; t < trials; t++) {
        amq_clock *x = bloom(m, k, 0), *a = NULL, *bb = NULL;
        for (unsigned i = 0; i < past; i++)
            tick_u64(x, check_next(&s));
        CHECK_OK(amq_clock_clone(x, &a));
        CHECK_OK(amq_clock_clone(x, &bb));
        tick_u64(a, check_next(&s));
        for (unsigned i = 0; i < b; i++)
            tick_u64(bb, check_next(&s));
        amq_clock_verdict v;
        CHECK_OK(amq_clock_compare(a, bb, &v));
        dominated += v.order == AMQ_ORDER_BEFORE || v.order == AMQ_ORDER_EQUAL;
        double slo = amq_clock_sum(a), shi = amq_clock_sum(bb);
        sp += amq_clock_fp_paper(m, slo, shi);
        se += amq_clock_fp_exact(m, k, shi - slo);
        amq_clock_free(x);
        amq_clock_free(a);
        amq_clock_free(bb);
    }
    *paper = sp / trials;
    *exact = se / trials;
    return (double)dominated / trials;
}

static void test_estimate_calibration(void) {
    unsigned trials = check_quick() ? 3000 : 20000;
    static const unsigned bs[] = {4, 10, 20, 40};
    for (size_t i = 0; i < sizeof bs / sizeof bs[0]; i++) {
        check_seed = 1000 + i;
        double paper, exact;
        double obs = private_event_rate(64, 3, 0, bs[i], trials, check_seed,
                                        &paper, &exact);
        /* Tolerance: 4.5 binomial standard deviations + 0.002 absolute. */
        double tol = 4.5 * sqrt(exact * (1 - exact) / trials) + 0.002;
        CHECK_MSG(fabs(obs - exact) <= tol,
                  "b=%u: observed %.4f, ours claims %.4f (tol %.4f)", bs[i],
                  obs, exact, tol);
        /* With no common past, eq. (3) is close too (docs: within 2x). */
        CHECK_MSG(paper > obs / 2 && paper < obs * 2 + 0.01,
                  "b=%u, past 0: eq.(3) %.4f vs observed %.4f", bs[i], paper,
                  obs);
    }
    /* The same private parts after a long common past: the rate does not
     * move, ours does not move, eq. (3) tends to 1 (documented). */
    check_seed = 2000;
    double paper, exact;
    unsigned tr = check_quick() ? 1000 : 5000;
    double obs =
        private_event_rate(64, 3, 400, 10, tr, check_seed, &paper, &exact);
    double tol = 4.5 * sqrt(exact * (1 - exact) / tr) + 0.002;
    CHECK_MSG(fabs(obs - exact) <= tol, "past 400: observed %.4f ours %.4f",
              obs, exact);
    CHECK_MSG(paper > 0.95 && obs < 0.2,
              "past 400: eq.(3) claims %.4f, observed %.4f", paper, obs);
}

/* ---- history and §3 ---------------------------------------------------------- */

static void test_history(void) {
    check_seed = 99;
    uint64_t s = 99;
    amq_clock *remote = bloom(256, 4, 0), *local = NULL;
    for (int i = 0; i < 30; i++)
        tick_u64(remote, check_next(&s));
    local = bloom(256, 4, 64);
    for (int i = 0; i < 5; i++)
        tick_u64(local, check_next(&s));
    CHECK_OK(amq_clock_merge(local, remote));
    uint64_t events[20];
    for (int i = 0; i < 20; i++) {
        events[i] = check_next(&s);
        tick_u64(local, events[i]);
    }
    amq_clock_verdict plain, hist;
    CHECK_OK(amq_clock_compare(local, remote, &plain));
    CHECK_OK(amq_clock_compare_history(local, remote, &hist));
    CHECK(plain.order == AMQ_ORDER_AFTER && hist.order == AMQ_ORDER_AFTER);
    CHECK_MSG(hist.history_age == 20, "age %u", hist.history_age);
    CHECK_MSG(hist.fp_exact < plain.fp_exact / 100 && plain.fp_exact > 1e-3,
              "history %g plain %g", hist.fp_exact, plain.fp_exact);
    CHECK(hist.fp_paper <= plain.fp_paper);
    /* §3: each of the last 20 steps is exactly its event ... */
    for (uint32_t age = 0; age < 20; age++) {
        bool ok = false;
        uint64_t e = events[19 - age];
        CHECK_OK(amq_clock_history_explains(local, age, &e, sizeof e, &ok));
        CHECK_MSG(ok, "age %u", age);
        e ^= 1;
        CHECK_OK(amq_clock_history_explains(local, age, &e, sizeof e, &ok));
        CHECK(!ok);
    }
    /* ... and the merge step is not an event. */
    bool ok = true;
    uint64_t e = 0;
    CHECK_OK(amq_clock_history_explains(local, 20, &e, sizeof e, &ok));
    CHECK(!ok);
    CHECK_STATUS(amq_clock_history_explains(local, 200, &e, sizeof e, &ok),
                 AMQ_ERR_INVALID);
    /* A clone carries the history. */
    amq_clock *copy = NULL;
    CHECK_OK(amq_clock_clone(local, &copy));
    amq_clock_verdict again;
    CHECK_OK(amq_clock_compare_history(copy, remote, &again));
    CHECK(again.history_age == 20);
    amq_clock_free(copy);
    amq_clock_free(local);
    amq_clock_free(remote);
}

/* ---- vector clocks: membership ------------------------------------------------ */

static void test_vector_membership(void) {
    amq_clock *a = NULL, *b = NULL;
    CHECK_OK(amq_clock_new_vector(AMQ_CLOCK_VECTOR_DENSE, 1, NULL, &a));
    CHECK_OK(amq_clock_new_vector(AMQ_CLOCK_VECTOR_DENSE, 2, NULL, &b));
    CHECK_STATUS(amq_clock_merge(a, b), AMQ_ERR_INCOMPATIBLE);
    CHECK_OK(amq_clock_join(a, 2));
    CHECK_OK(amq_clock_join(b, 1));
    CHECK_OK(amq_clock_join(b, 1));
    CHECK(amq_clock_size(b) == 2);
    CHECK(order_of(a, b) == AMQ_ORDER_EQUAL);
    CHECK_OK(amq_clock_tick(a, NULL, 0));
    CHECK(order_of(b, a) == AMQ_ORDER_BEFORE);
    CHECK_OK(amq_clock_merge(b, a));
    CHECK_OK(amq_clock_tick(b, NULL, 0));
    CHECK(order_of(a, b) == AMQ_ORDER_BEFORE);
    CHECK_OK(amq_clock_tick(a, NULL, 0));
    CHECK(order_of(a, b) == AMQ_ORDER_CONCURRENT);
    roundtrip(a);
    CHECK_OK(amq_clock_join(a, 3));
    CHECK_STATUS(amq_clock_compare(a, b, &(amq_clock_verdict){0}),
                 AMQ_ERR_INCOMPATIBLE);
    /* the wire tag catches a membership mismatch */
    size_t len;
    uint8_t *buf = wire(b, &len);
    CHECK_STATUS(amq_clock_decode(a, buf, len), AMQ_ERR_INCOMPATIBLE);
    free(buf);
    CHECK_OK(amq_clock_leave(a, 3));
    CHECK_STATUS(amq_clock_leave(a, 1), AMQ_ERR_INVALID);
    CHECK(order_of(a, b) == AMQ_ORDER_CONCURRENT);
    amq_clock_free(a);
    amq_clock_free(b);
    /* sparse: absent means 0, leave forgets a stable node */
    CHECK_OK(amq_clock_new_vector(AMQ_CLOCK_VECTOR_SPARSE, 7, NULL, &a));
    CHECK_OK(amq_clock_new_vector(AMQ_CLOCK_VECTOR_SPARSE, 9, NULL, &b));
    CHECK(order_of(a, b) == AMQ_ORDER_EQUAL && amq_clock_size(a) == 0);
    CHECK_OK(amq_clock_tick(b, NULL, 0));
    CHECK_OK(amq_clock_merge(a, b));
    CHECK_OK(amq_clock_tick(a, NULL, 0));
    CHECK(order_of(b, a) == AMQ_ORDER_BEFORE && amq_clock_get(a, 9) == 1);
    roundtrip(a);
    CHECK_OK(amq_clock_leave(a, 9));
    CHECK(amq_clock_size(a) == 1 && amq_clock_get(a, 9) == 0);
    amq_clock_free(a);
    amq_clock_free(b);
}

/* ---- bad input ---------------------------------------------------------------------- */

static void every_damage_rejected(const amq_clock *c) {
    size_t len;
    uint8_t *buf = wire(c, &len);
    amq_clock *into = NULL;
    CHECK_OK(amq_clock_clone(c, &into));
    for (size_t n = 0; n < len; n++)
        CHECK(amq_clock_decode(into, buf, n) != AMQ_OK);
    for (size_t bit = 0; bit < len * 8; bit++) {
        buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        CHECK(amq_clock_decode(into, buf, len) != AMQ_OK);
        buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    }
    CHECK(same_wire(c, into));
    free(buf);
    size_t flen = amq_clock_save_size(c), got;
    uint8_t *frame = malloc(flen);
    CHECK_OK(amq_clock_save(c, frame, flen, &got));
    amq_clock *out = NULL;
    for (size_t n = 0; n < flen; n += (n < 200 ? 1 : 7))
        CHECK(amq_clock_load(frame, n, NULL, &out, NULL) != AMQ_OK &&
              out == NULL);
    size_t step = check_quick() ? 5 : 1;
    for (size_t bit = 0; bit < flen * 8; bit += step) {
        frame[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        CHECK(amq_clock_load(frame, flen, NULL, &out, NULL) != AMQ_OK);
        frame[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    }
    free(frame);
    amq_clock_free(into);
}

static void test_bad_input(void) {
    amq_clock *a = bloom(64, 3, 0), *c = NULL, *v = NULL;
    amq_clock_verdict vd;
    tick_u64(a, 1);
    /* other m, k, seed, key, kind: a status, never a verdict */
    amq_options seeded = {.hash_seed = 5};
    uint8_t key1[16] = {1}, key2[16] = {2};
    amq_options sip1 = {.hash = AMQ_HASH_SIPHASH, .hash_key = key1};
    amq_options sip2 = {.hash = AMQ_HASH_SIPHASH, .hash_key = key2};
    amq_clock *others[5] = {bloom(65, 3, 0), bloom(64, 4, 0), NULL, NULL, NULL};
    CHECK_OK(amq_clock_new_bloom(64, 3, 0, &seeded, &others[2]));
    CHECK_OK(amq_clock_new_bloom(64, 3, 0, &sip1, &others[3]));
    CHECK_OK(amq_clock_new_bloom(64, 3, 0, &sip2, &others[4]));
    for (int i = 0; i < 5; i++) {
        CHECK_STATUS(amq_clock_compare(a, others[i], &vd),
                     AMQ_ERR_INCOMPATIBLE);
        CHECK_STATUS(amq_clock_compare_history(a, others[i], &vd),
                     AMQ_ERR_INCOMPATIBLE);
        CHECK_STATUS(amq_clock_merge(others[i], a), AMQ_ERR_INCOMPATIBLE);
        size_t len;
        uint8_t *buf = wire(a, &len);
        CHECK_STATUS(amq_clock_decode(others[i], buf, len),
                     AMQ_ERR_INCOMPATIBLE);
        free(buf);
    }
    CHECK_STATUS(amq_clock_compare(others[3], others[4], &vd),
                 AMQ_ERR_INCOMPATIBLE);
    CHECK_OK(amq_clock_new_vector(AMQ_CLOCK_VECTOR_SPARSE, 1, NULL, &v));
    CHECK_STATUS(amq_clock_compare(a, v, &vd), AMQ_ERR_INCOMPATIBLE);
    CHECK_STATUS(amq_clock_merge(v, a), AMQ_ERR_INCOMPATIBLE);
    CHECK_STATUS(amq_clock_tick_hash(v, 1), AMQ_ERR_UNSUPPORTED);
    /* construction */
    CHECK_STATUS(amq_clock_new_bloom(0, 1, 0, NULL, &c), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_clock_new_bloom(4, 5, 0, NULL, &c), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_clock_new_bloom(64, 65, 0, NULL, &c), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_clock_new_bloom(AMQ_CLOCK_MAX_M + 1, 1, 0, NULL, &c),
                 AMQ_ERR_INVALID);
    CHECK_STATUS(amq_clock_new_vector(AMQ_CLOCK_BLOOM, 1, NULL, &c),
                 AMQ_ERR_INVALID);
    /* damaged messages and frames */
    uint64_t s = 5;
    for (int i = 0; i < 40; i++)
        tick_u64(a, check_next(&s) % 30);
    every_damage_rejected(a);
    CHECK_OK(amq_clock_tick(v, NULL, 0));
    CHECK_OK(amq_clock_merge(v, others[0] == NULL ? v : v));
    every_damage_rejected(v);
    amq_clock *d = NULL;
    CHECK_OK(amq_clock_new_vector(AMQ_CLOCK_VECTOR_DENSE, 3, NULL, &d));
    CHECK_OK(amq_clock_join(d, 8));
    CHECK_OK(amq_clock_tick(d, NULL, 0));
    every_damage_rejected(d);
    /* a buffer too small */
    size_t need;
    uint8_t small[4];
    CHECK_STATUS(amq_clock_encode(a, small, sizeof small, &need),
                 AMQ_ERR_BUFFER);
    CHECK(need == amq_clock_encoded_size(a));
    /* a filter frame is not a clock, nor a clock frame a filter */
    amq_filter *f = NULL;
    CHECK_OK(amq_filter_new("bloom", 100, 0.01, NULL, &f, NULL));
    size_t fl = f ? amq_filter_serialized_size(f) : 0, w = 0;
    uint8_t *fb = malloc(fl ? fl : 1);
    if (f != NULL && fb != NULL) {
        CHECK_OK(amq_filter_save(f, fb, fl, &w));
        amq_clock *x = NULL;
        amq_diag dg;
        memset(&dg, 0, sizeof dg);
        CHECK_STATUS(amq_clock_load(fb, fl, NULL, &x, &dg), AMQ_ERR_KIND);
        CHECK_MSG(strstr(dg.message, "bloom filter (type 1), not a clock"),
                  "%s", dg.message);
    }
    free(fb);
    amq_filter_free(f);
    size_t cl = amq_clock_save_size(d);
    uint8_t *cb = malloc(cl);
    if (cb != NULL && amq_clock_save(d, cb, cl, &w) == AMQ_OK) {
        amq_diag dg;
        memset(&dg, 0, sizeof dg);
        CHECK_STATUS(amq_filter_load(cb, cl, NULL, &f, &dg), AMQ_ERR_KIND);
        CHECK_MSG(strstr(dg.message, "a vector clock") &&
                      strstr(dg.message, "not a filter"),
                  "%s", dg.message);
    }
    free(cb);
    amq_clock_free(d);
    amq_clock_free(v);
    for (int i = 0; i < 5; i++)
        amq_clock_free(others[i]);
    amq_clock_free(a);
    amq_clock_free(NULL);
}

int main(void) {
    int runs = check_quick() ? 2 : 6;
    for (int i = 0; i < runs; i++)
        run_against_truth(0xc10c + (uint64_t)i);
    merge_laws(AMQ_CLOCK_BLOOM, 11);
    merge_laws(AMQ_CLOCK_VECTOR_SPARSE, 12);
    test_compression();
    test_overflow();
    test_nomem();
    test_oom_every_allocation();
    test_estimate_values();
    test_estimate_calibration();
    test_history();
    test_vector_membership();
    test_bad_input();
    return check_report("test_clock");
}
