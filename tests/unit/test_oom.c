/*
 * test_oom.c — allocation failure, the libuv / Redis way: an allocator that
 * fails its N-th allocation, for N = 1, 2, ... until the operation succeeds.
 *
 * For every dynamic type and every N:
 *   - amq_filter_new / load / view return AMQ_ERR_NOMEM (never crash, never
 *     succeed with a failed allocation hidden inside);
 *   - nothing leaks: live bytes are back to zero after the failure (and after
 *     amq_filter_free on success);
 *   - the size handed to free/realloc is the size that was allocated;
 *   - an update that fails (add, union, intersect, remove — whichever
 *     allocate) leaves the filter byte-for-byte as it was.
 * The builder (amq/builder.h) is a constructor too, for every type.
 * Static types (AMQ_CAP_STATIC) have no updates: for them the N-th
 * allocation fails inside amq_filter_build (from keys with and without
 * duplicates, so the sorted copy that removes duplicates is covered too),
 * then in load and view of a built frame.
 */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the failing, counting allocator ------------------------------------- */

typedef struct oom_ctx {
    unsigned long calls;   /* allocations attempted (alloc + realloc)       */
    unsigned long fail_at; /* 0: never fail; else fail call number fail_at  */
    size_t live_bytes;
    size_t live_blocks;
    unsigned long size_mismatch; /* free/realloc told the wrong size        */
} oom_ctx;

#define HDR 16 /* keeps malloc's 16-byte alignment */

static bool oom_should_fail(oom_ctx *c) {
    c->calls++;
    return c->fail_at != 0 && c->calls == c->fail_at;
}

static void *oom_alloc(void *ctx, size_t size) {
    oom_ctx *c = ctx;
    if (oom_should_fail(c) || size > SIZE_MAX - HDR)
        return NULL;
    uint8_t *p = malloc(size + HDR);
    if (p == NULL)
        return NULL;
    memcpy(p, &size, sizeof size);
    c->live_bytes += size;
    c->live_blocks++;
    return p + HDR;
}

static void oom_free(void *ctx, void *ptr, size_t size) {
    oom_ctx *c = ctx;
    if (ptr == NULL)
        return;
    uint8_t *p = (uint8_t *)ptr - HDR;
    size_t real;
    memcpy(&real, p, sizeof real);
    if (real != size)
        c->size_mismatch++;
    c->live_bytes -= real;
    c->live_blocks--;
    free(p);
}

static void *oom_realloc(void *ctx, void *ptr, size_t old_size,
                         size_t new_size) {
    oom_ctx *c = ctx;
    if (ptr == NULL)
        return oom_alloc(ctx, new_size);
    if (oom_should_fail(c) || new_size > SIZE_MAX - HDR)
        return NULL;
    uint8_t *p = (uint8_t *)ptr - HDR;
    size_t real;
    memcpy(&real, p, sizeof real);
    if (real != old_size)
        c->size_mismatch++;
    uint8_t *q = realloc(p, new_size + HDR);
    if (q == NULL)
        return NULL;
    memcpy(q, &new_size, sizeof new_size);
    c->live_bytes = c->live_bytes - real + new_size;
    return q + HDR;
}

static oom_ctx ctx;
static amq_allocator allocator = {oom_alloc, oom_realloc, oom_free, &ctx};

static amq_options oom_options(void) {
    amq_options o;
    memset(&o, 0, sizeof o);
    o.allocator = &allocator;
    return o;
}

static void arm(unsigned long n) {
    ctx.calls = 0;
    ctx.fail_at = n;
}

/* After a failed constructor nothing may remain. */
static void check_clean(const char *what, unsigned long n) {
    CHECK_MSG(ctx.live_bytes == 0 && ctx.live_blocks == 0,
              "%s, failing allocation %lu: %zu bytes in %zu blocks leaked",
              what, n, ctx.live_bytes, ctx.live_blocks);
    CHECK_MSG(ctx.size_mismatch == 0, "%s: %lu frees with the wrong size", what,
              ctx.size_mismatch);
    ctx.live_bytes = 0;
    ctx.live_blocks = 0;
    ctx.size_mismatch = 0;
}

enum { MAX_N = 200 };

/* ---- constructors ------------------------------------------------------- */

typedef amq_status (*ctor_fn)(const void *arg, size_t len,
                              const amq_options *opt, amq_filter **out);

static amq_status ctor_new(const void *arg, size_t len, const amq_options *opt,
                           amq_filter **out) {
    (void)len;
    return amq_filter_new(arg, 1000, 0.01, opt, out, NULL);
}
static amq_status ctor_load(const void *arg, size_t len, const amq_options *opt,
                            amq_filter **out) {
    return amq_filter_load(arg, len, opt, out, NULL);
}
static amq_status ctor_view(const void *arg, size_t len, const amq_options *opt,
                            amq_filter **out) {
    return amq_filter_view(arg, len, opt, out, NULL);
}

/* Keys for static builds: OOM_KEYS hashes, or with every 4th one repeated
 * (the build then dedupes by sorting a copy). */
enum { OOM_KEYS = 1000 };
static uint64_t oom_hashes[OOM_KEYS];

static void fill_hashes(bool duplicates) {
    uint64_t s = 77;
    for (size_t i = 0; i < OOM_KEYS; i++)
        oom_hashes[i] =
            duplicates && i % 4 == 3 ? oom_hashes[i - 1] : check_next(&s);
}

static amq_status ctor_build(const void *arg, size_t len,
                             const amq_options *opt, amq_filter **out) {
    (void)len;
    return amq_filter_build(arg, oom_hashes, OOM_KEYS, 0.01, opt, out, NULL);
}

/* The builder: new, take the keys in two calls, finish, free. */
static amq_status ctor_builder(const void *arg, size_t len,
                               const amq_options *opt, amq_filter **out) {
    amq_builder *b = NULL;
    (void)len;
    amq_status st = amq_builder_new(arg, opt, &b, NULL);
    if (st == AMQ_OK)
        st = amq_builder_add_hashes(b, oom_hashes, OOM_KEYS / 2);
    for (size_t i = OOM_KEYS / 2; st == AMQ_OK && i < OOM_KEYS; i++)
        st = amq_builder_add_hash(b, oom_hashes[i]);
    if (st == AMQ_OK)
        st = amq_builder_finish(b, 0.01, out, NULL);
    amq_builder_free(b);
    return st;
}

/* Fail allocation 1, 2, ... until the constructor succeeds. */
static void ctor_case(const char *what, ctor_fn ctor, const void *arg,
                      size_t len) {
    amq_options opt = oom_options();
    unsigned long n;
    check_clean(what, 0);
    for (n = 1; n <= MAX_N; n++) {
        amq_filter *f = NULL;
        arm(n);
        amq_status st = ctor(arg, len, &opt, &f);
        unsigned long calls = ctx.calls;
        ctx.fail_at = 0;
        if (st == AMQ_OK) {
            CHECK_MSG(f != NULL, "%s: OK without a filter", what);
            /* The allocation we meant to fail was never made: done. */
            CHECK_MSG(calls < n, "%s: allocation %lu failed, yet OK", what, n);
            CHECK_MSG(ctx.live_blocks > 0 && n > 1,
                      "%s: nothing allocated through the allocator", what);
            amq_filter_free(f);
            check_clean(what, n);
            break;
        }
        CHECK_MSG(st == AMQ_ERR_NOMEM, "%s, failing allocation %lu: %s", what,
                  n, amq_status_name(st));
        check_clean(what, n);
    }
    CHECK_MSG(n <= MAX_N, "%s never succeeded", what);
}

/* ---- updates that fail must leave the filter as it was -------------------- */

static void key_of(uint64_t i, uint8_t k[8]) { memcpy(k, &i, 8); }

typedef amq_status (*update_fn)(amq_filter *f, const amq_filter *other,
                                uint64_t i);

static amq_status upd_add(amq_filter *f, const amq_filter *o, uint64_t i) {
    uint8_t k[8];
    (void)o;
    key_of(100000 + i, k);
    return amq_filter_add(f, k, 8);
}
static amq_status upd_union(amq_filter *f, const amq_filter *o, uint64_t i) {
    (void)i;
    return amq_filter_union(f, o);
}
static amq_status upd_intersect(amq_filter *f, const amq_filter *o,
                                uint64_t i) {
    (void)i;
    return amq_filter_intersect(f, o);
}
static amq_status upd_remove(amq_filter *f, const amq_filter *o, uint64_t i) {
    uint8_t k[8];
    (void)o;
    key_of(i % 500, k);
    return amq_filter_remove(f, k, 8);
}

/* Run `op` (repeated `reps` times, so growth is reached) on a fresh copy of
 * `frame` with allocation n failing; on failure the copy must still save to
 * the frame it was loaded from plus the successful repetitions. */
static void update_case(const char *what, const uint8_t *frame, size_t len,
                        const amq_filter *other, update_fn op, unsigned reps) {
    amq_options opt = oom_options();
    unsigned long n;
    for (n = 1; n <= MAX_N; n++) {
        amq_filter *f = NULL;
        ctx.fail_at = 0;
        if (amq_filter_load(frame, len, &opt, &f, NULL) != AMQ_OK) {
            CHECK_MSG(false, "%s: load without failures failed", what);
            return;
        }
        arm(n);
        amq_status st = AMQ_OK;
        unsigned r;
        size_t blen = 0;
        uint8_t *before = NULL;
        for (r = 0; r < reps && st == AMQ_OK; r++) {
            unsigned long fail = ctx.fail_at, calls = ctx.calls;
            ctx.fail_at = 0; /* saving must not consume the failure */
            free(before);
            before = check_frame(f, &blen);
            ctx.fail_at = fail;
            ctx.calls = calls;
            st = op(f, other, r);
        }
        bool failed_here = ctx.calls >= n;
        ctx.fail_at = 0;
        if (st == AMQ_OK) {
            amq_filter_free(f);
            free(before);
            check_clean(what, n);
            if (!failed_here)
                break; /* the N-th allocation never happened: done */
            CHECK_MSG(false, "%s: allocation %lu failed, yet OK", what, n);
            continue;
        }
        CHECK_MSG(st == AMQ_ERR_NOMEM || st == AMQ_ERR_FULL,
                  "%s, failing allocation %lu: %s", what, n,
                  amq_status_name(st));
        size_t alen;
        uint8_t *after = check_frame(f, &alen);
        CHECK_MSG(before != NULL && after != NULL && alen == blen &&
                      memcmp(before, after, alen) == 0,
                  "%s, failing allocation %lu (rep %u): the filter changed",
                  what, n, r - 1);
        free(after);
        free(before);
        amq_filter_free(f);
        check_clean(what, n);
        if (st == AMQ_ERR_FULL)
            break;
    }
    CHECK_MSG(n <= MAX_N, "%s never succeeded", what);
}

static void test_type(const amq_type_info *ti) {
    char what[128];
    snprintf(what, sizeof what, "%s new", ti->name);
    ctor_case(what, ctor_new, ti->name, 0);
    fill_hashes(true);
    snprintf(what, sizeof what, "%s builder", ti->name);
    ctor_case(what, ctor_builder, ti->name, 0);

    /* A frame made with the ordinary allocator. */
    amq_filter *f = NULL, *g = NULL;
    CHECK_OK(amq_filter_new(ti->name, 1000, 0.01, NULL, &f, NULL));
    CHECK_OK(amq_filter_new(ti->name, 1000, 0.01, NULL, &g, NULL));
    if (f == NULL || g == NULL) {
        amq_filter_free(f);
        amq_filter_free(g);
        return;
    }
    for (uint64_t i = 0; i < 500; i++) {
        uint8_t k[8];
        key_of(i, k);
        CHECK_OK(amq_filter_add(f, k, 8));
        key_of(i + 250, k);
        CHECK_OK(amq_filter_add(g, k, 8));
    }
    size_t len;
    uint8_t *frame = check_frame(f, &len);
    uint8_t *aligned = frame ? aligned_alloc(64, (len + 63) / 64 * 64) : NULL;
    if (aligned != NULL) {
        memcpy(aligned, frame, len);
        snprintf(what, sizeof what, "%s load", ti->name);
        ctor_case(what, ctor_load, aligned, len);
        snprintf(what, sizeof what, "%s view", ti->name);
        ctor_case(what, ctor_view, aligned, len);

        snprintf(what, sizeof what, "%s add", ti->name);
        update_case(what, aligned, len, g, upd_add, 2000);
        if (ti->caps & AMQ_CAP_UNION) {
            snprintf(what, sizeof what, "%s union", ti->name);
            update_case(what, aligned, len, g, upd_union, 1);
        }
        if (ti->caps & AMQ_CAP_INTERSECT) {
            snprintf(what, sizeof what, "%s intersect", ti->name);
            update_case(what, aligned, len, g, upd_intersect, 1);
        }
        if (ti->caps & AMQ_CAP_REMOVE) {
            snprintf(what, sizeof what, "%s remove", ti->name);
            update_case(what, aligned, len, g, upd_remove, 100);
        }
    }
    free(aligned);
    free(frame);
    amq_filter_free(f);
    amq_filter_free(g);
}

static void test_static_type(const amq_type_info *ti) {
    char what[128];
    for (int dup = 0; dup <= 1; dup++) {
        fill_hashes(dup != 0);
        snprintf(what, sizeof what, "%s build%s", ti->name,
                 dup ? " with duplicates" : "");
        ctor_case(what, ctor_build, ti->name, 0);
        snprintf(what, sizeof what, "%s builder%s", ti->name,
                 dup ? " with duplicates" : "");
        ctor_case(what, ctor_builder, ti->name, 0);
    }
    fill_hashes(false);
    amq_filter *f = NULL;
    CHECK_OK(
        amq_filter_build(ti->name, oom_hashes, OOM_KEYS, 0.01, NULL, &f, NULL));
    if (f == NULL)
        return;
    size_t len;
    uint8_t *frame = check_frame(f, &len);
    uint8_t *aligned = frame ? aligned_alloc(64, (len + 63) / 64 * 64) : NULL;
    if (aligned != NULL) {
        memcpy(aligned, frame, len);
        snprintf(what, sizeof what, "%s load", ti->name);
        ctor_case(what, ctor_load, aligned, len);
        snprintf(what, sizeof what, "%s view", ti->name);
        ctor_case(what, ctor_view, aligned, len);
    }
    free(aligned);
    free(frame);
    amq_filter_free(f);
}

int main(void) {
    check_seed = 0;
    for (size_t i = 0; i < amq_filter_type_count(); i++) {
        const amq_type_info *ti = amq_filter_type_at(i);
        if (ti->caps & AMQ_CAP_STATIC)
            test_static_type(ti);
        else
            test_type(ti);
    }
    return check_report("test_oom");
}
