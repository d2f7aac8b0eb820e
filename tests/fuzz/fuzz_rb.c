/*
 * fuzz_rb.c — libFuzzer target for keys in RedisBloom's layouts
 * (modules/redis/rb.c): the BF chain, CF cuckoo filter, CMS, Top-K and
 * t-digest fields a RedisBloom RDB or DUMP payload brings, read through
 * rb_load. replay.c runs it over tests/fuzz/corpus/rb in ordinary CI.
 *
 * Input: byte 0 picks the family (byte0 % 5: BF, CF, CMS, TOPK, TDIGEST; a
 * t-digest becomes an amq digest, checked through its blob), byte 1 the
 * encoding version (byte1 % 6, so unknown versions are reached too), the
 * rest is the field stream in its tagged byte form (rbs_reader: 'u' + u64,
 * 'd' + f64, 's' + u64 length + bytes, little-endian).
 *
 * Properties (a violation aborts):
 *   - nothing crashes, leaks or reads out of bounds, and a refusal says
 *     why (a non-empty message);
 *   - an accepted value's frame (rb_frame) loads back (rb_from_frame) and
 *     writes the same bytes; its amq blob encodes, decodes and encodes to
 *     the same bytes; its accounted memory covers the strings it holds and
 *     equals that of the value reloaded from its frame;
 *   - it works: BF adds a few keys derived from the input and then holds
 *     each (no false negative) unless the add refused; CF inserts them,
 *     holds each after a successful insert with a count of at least 1
 *     (for every key inserted so far when all sub-filters have a power
 *     of two buckets, as kicks and compaction assume), and deletes them
 *     exactly when it holds them; CMS counts them, a query answering what
 *     the increment did, and merges into a copy of itself (at weight 1
 *     the copy is the value; then at a weight from the input, any
 *     non-negative integer, as CMS.MERGE admits);
 *   - BF and CF: the SCANDUMP stream (header, then every chunk) rebuilds
 *     the value exactly (BF: when every link's bit count is its array's,
 *     as RedisBloom's header check requires; CF: when the sub-filters
 *     have the sizes the header implies, numBuckets·expansion^j);
 *     otherwise it may be refused, but nothing crashes.
 * The checks run on the value as loaded and again after the operations.
 * The host's budget is 64 MiB, so hostile sizes are refused, not made.
 *
 * Built with FUZZ_RB_SEEDS defined, this file is instead the program that
 * writes the seed corpus (gen_corpus_rb tests/fuzz/corpus/rb; run by hand,
 * output committed).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amqr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define BUDGET (64.0 * 1024 * 1024)
#define NKEYS 6
#define KEY_MAX 24
#define MAX_SUBS 65536

static const int fams[5] = {FAM_BF, FAM_CF, FAM_CMS, FAM_TOPK, FAM_TDIGEST};

static void require(int ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "fuzz_rb: property violated: %s\n", what);
        abort();
    }
}

/* ---- the host: only its budget is asked for ------------------------------ */

static bool f_budget(host *h, double bytes) {
    (void)h;
    return bytes >= 0 && bytes <= BUDGET;
}
static bool gate(void *h, double bytes) { return f_budget(h, bytes); }
static const host_ops fuzz_host = {.budget = f_budget};

/* ---- helpers ---------------------------------------------------------------- */

/* The value's frame, from the system allocator (caller frees). */
static uint8_t *frame_of(const rval *v, size_t *len) {
    size_t n = rb_frame(v, NULL, 0);
    uint8_t *b = malloc(n ? n : 1);
    require(b != NULL, "out of memory in the fuzz driver");
    require(rb_frame(v, b, n) == n, "frame size changes between calls");
    *len = n;
    return b;
}

static bool same_frame(const rval *a, const uint8_t *f, size_t n) {
    size_t m;
    uint8_t *g = frame_of(a, &m);
    bool same = m == n && memcmp(f, g, n) == 0;
    free(g);
    return same;
}

/* An rb_io that only adds up the bytes of the string fields. */
typedef struct str_counter {
    rb_io io;
    uint64_t bytes;
} str_counter;
static void sc_u64(rb_io *io, uint64_t x) {
    (void)io;
    (void)x;
}
static void sc_dbl(rb_io *io, double x) {
    (void)io;
    (void)x;
}
static void sc_str(rb_io *io, const void *p, size_t n) {
    (void)p;
    ((str_counter *)io)->bytes += n;
}
static uint64_t string_bytes(const rval *v) {
    str_counter c;
    memset(&c, 0, sizeof c);
    c.io.put_u64 = sc_u64;
    c.io.put_dbl = sc_dbl;
    c.io.put_str = sc_str;
    rb_save(v, &c.io);
    return c.bytes;
}

/* What a CF frame says of its sub-filters: whether their sizes are
 * numBuckets·expansion^j (what a SCANDUMP header implies) and whether all
 * are powers of two. */
typedef struct cf_shape {
    bool geometric, pow2;
} cf_shape;

static bool is_pow2(uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }

static cf_shape cf_shape_of(const uint8_t *f, size_t n) {
    rbs_reader r;
    uint64_t ver, nf, nb, items, deletes, bs, mi, ex;
    cf_shape s = {false, false};
    rbs_reader_init(&r, f, n);
    rb_io *in = &r.io;
    if (!in->u64(in, &ver) || !in->u64(in, &nf) || !in->u64(in, &nb) ||
        !in->u64(in, &items) || !in->u64(in, &deletes) || !in->u64(in, &bs) ||
        !in->u64(in, &mi) || !in->u64(in, &ex))
        return s;
    uint64_t want = nb;
    bool wrapped = false;
    s.geometric = s.pow2 = true;
    for (uint64_t i = 0; i < nf; i++) {
        uint64_t b;
        size_t len;
        require(in->u64(in, &b) && in->str(in, &len) != NULL,
                "a CF frame without its sub-filters");
        s.geometric = s.geometric && !wrapped && b == want;
        s.pow2 = s.pow2 && is_pow2(b);
        if (ex != 0 && want > UINT64_MAX / ex)
            wrapped = true;
        want *= ex;
    }
    s.pow2 = s.pow2 && (ex == 0 || is_pow2(ex));
    return s;
}

/* Whether every link of a BF frame has exactly its array's bits (a
 * version 0 chain has entries·bpe). */
static bool bf_exact_bits(const uint8_t *f, size_t n) {
    rbs_reader r;
    uint64_t x[5];
    rbs_reader_init(&r, f, n);
    rb_io *in = &r.io;
    for (int i = 0; i < 5; i++) /* version, size, links, options, growth */
        require(in->u64(in, &x[i]), "a BF frame without its header");
    for (uint64_t i = 0; i < x[2]; i++) {
        uint64_t entries = 0, hashes = 0, bits = 0, n2 = 0, size = 0;
        double error = 0, bpe = 0;
        size_t len = 0;
        require(in->u64(in, &entries) && in->dbl(in, &error) &&
                    in->u64(in, &hashes) && in->dbl(in, &bpe) &&
                    in->u64(in, &bits) && in->u64(in, &n2) &&
                    in->str(in, &len) != NULL && in->u64(in, &size),
                "a BF frame without its links");
        if (bits != (uint64_t)len * 8)
            return false;
    }
    return true;
}

/* ---- the checks of a value ---------------------------------------------------- */

/* Frame, blob and memory account. Returns the frame (caller frees). */
static uint8_t *check_codec(const rval *v, int fam, size_t *flen) {
    char err[200] = "";
    size_t n;
    uint8_t *f = frame_of(v, &n);
    rval *w = rb_from_frame(fam, f, n, err, sizeof err);
    if (w == NULL)
        fprintf(stderr, "fuzz_rb: frame refused: %s\n", err);
    require(w != NULL, "an accepted value's frame loads back");
    require(same_frame(w, f, n), "frame -> load -> frame changes the bytes");
    require(rv_memory(v) == rv_memory(w),
            "memory account differs from the reloaded value's");
    rv_free(w);

    uint8_t *a, *b;
    size_t na, nb;
    rval *d;
    require(rv_encode(v, &a, &na), "blob encode");
    err[0] = 0;
    if (!rv_decode(a, na, fam, &d, err, sizeof err))
        fprintf(stderr, "fuzz_rb: blob refused: %s\n", err);
    require(d != NULL, "an accepted value's blob decodes");
    require(rv_encode(d, &b, &nb), "blob re-encode");
    require(na == nb && memcmp(a, b, na) == 0, "blob not canonical");
    rv_sys_free(a);
    rv_sys_free(b);
    rv_free(d);

    require(rv_memory(v) > 0 && rv_memory(v) >= string_bytes(v),
            "memory account below the value's bit arrays");
    *flen = n;
    return f;
}

static void check_bf_stream(host *h, const rval *v, const uint8_t *f,
                            size_t fn) {
    char err[200] = "";
    const char *why = NULL;
    size_t hn = rb_bf_header(v, NULL, 0);
    uint8_t *head = malloc(hn);
    require(head != NULL, "out of memory in the fuzz driver");
    require(rb_bf_header(v, head, hn) == hn, "BF header size changes");
    rval *w = rb_bf_from_header(h, head, hn, err, sizeof err);
    free(head);
    if (w == NULL) {
        /* Refused only: a chain grown past the budget by the adds, or one
         * with a link whose bit count is not its array's (RedisBloom's
         * header check refuses those too). */
        require(err[0] != 0, "a refused BF header says why");
        bool must = string_bytes(v) <= BUDGET && bf_exact_bits(f, fn);
        if (must)
            fprintf(stderr, "fuzz_rb: BF header refused: %s\n", err);
        require(!must, "a BF value's own SCANDUMP header is refused");
        return;
    }
    require(rb_bf_links(w) == rb_bf_links(v), "BF header loses links");
    long long it = 1;
    size_t len;
    const uint8_t *p;
    while ((p = rb_bf_chunk(v, &it, &len)) != NULL) {
        require(len > 0 && it > 1, "BF chunk empty or iterator stuck");
        require(rb_bf_load_chunk(w, it, p, len, &why),
                "a BF value's own chunk is refused");
    }
    require(it == 0, "BF stream ends with iterator 0");
    require(same_frame(w, f, fn), "BF SCANDUMP stream rebuilds another value");
    rv_free(w);
}

static void check_cf_stream(host *h, const rval *v, const uint8_t *f,
                            size_t fn) {
    char err[200] = "";
    uint8_t head[38];
    cf_shape s = cf_shape_of(f, fn);
    require(rb_cf_header(v, head) == sizeof head, "CF header size");
    rval *w = rb_cf_from_header(h, head, sizeof head, err, sizeof err);
    if (w == NULL) {
        require(err[0] != 0, "a refused CF header says why");
        bool must = s.geometric && string_bytes(v) <= BUDGET;
        if (must)
            fprintf(stderr, "fuzz_rb: CF header refused: %s\n", err);
        require(!must, "a CF value's own SCANDUMP header is refused");
        return;
    }
    long long pos = 1;
    size_t len;
    const uint8_t *p;
    while ((p = rb_cf_chunk(v, &pos, &len)) != NULL) {
        require(len > 0, "CF chunk empty");
        bool ok = rb_cf_load_chunk(w, pos, p, len);
        require(ok || !s.geometric, "a CF value's own chunk is refused");
    }
    if (s.geometric)
        require(same_frame(w, f, fn),
                "CF SCANDUMP stream rebuilds another value");
    rv_free(w);
}

static void check_value(host *h, const rval *v, int fam) {
    size_t fn;
    uint8_t *f = check_codec(v, fam, &fn);
    if (fam == FAM_BF)
        check_bf_stream(h, v, f, fn);
    else if (fam == FAM_CF)
        check_cf_stream(h, v, f, fn);
    free(f);
}

/* ---- the operations ------------------------------------------------------------ */

/* Key i: a tag, then up to 15 bytes of the input from a place set by i. */
static size_t make_key(const uint8_t *d, size_t n, unsigned i,
                       uint8_t out[KEY_MAX]) {
    size_t len = 0;
    out[len++] = 'k';
    out[len++] = (uint8_t)('0' + i);
    if (n == 0)
        return len;
    size_t at = (i * 37u) % n, take = 1 + (d[at] + i) % 15;
    for (size_t j = 0; j < take; j++)
        out[len++] = d[(at + j) % n];
    return len;
}

static void ops_bf(host *h, rval *v, const uint8_t *d, size_t n) {
    char info[256];
    long long fields[5];
    for (unsigned i = 0; i < NKEYS; i++) {
        uint8_t k[KEY_MAX];
        size_t kn = make_key(d, n, i, k);
        bool had = rb_bf_contains(v, k, kn);
        uint64_t before = rb_bf_items(v);
        const char *err = NULL;
        int r = rb_bf_add(h, v, k, kn, &err);
        require(r >= -1 && r <= 1, "BF add answers 1, 0 or -1");
        if (r < 0) {
            require(err != NULL && err[0] != 0, "a refused BF add says why");
            continue;
        }
        require(r == 0 || !had, "BF add of a held key answers 1");
        require(r == 1 || had, "BF add of a missing key answers 0");
        require(rb_bf_contains(v, k, kn), "BF false negative after add");
        require(rb_bf_items(v) == before + (uint64_t)r,
                "BF item count after add");
    }
    rb_bf_info(v, fields);
    require(fields[2] == (long long)rb_bf_links(v), "BF.INFO filters");
    for (unsigned i = 0; i <= rb_bf_links(v); i++)
        require(rb_bf_debug(v, info, sizeof info, i) > 0, "BF.DEBUG line");
}

static void ops_cf(host *h, rval *v, const uint8_t *d, size_t n) {
    uint8_t keys[NKEYS][KEY_MAX];
    size_t kn[NKEYS];
    bool in[NKEYS];
    long long fields[8];
    size_t fl;
    uint8_t *f = frame_of(v, &fl);
    bool pow2 = cf_shape_of(f, fl).pow2;
    free(f);
    for (unsigned i = 0; i < NKEYS; i++) {
        kn[i] = make_key(d, n, i, keys[i]);
        bool nx = (i & 1) != 0;
        bool had = rb_cf_contains(v, keys[i], kn[i]);
        uint64_t before = rb_cf_items(v);
        int r = rb_cf_insert(h, v, keys[i], kn[i], nx);
        require(r >= -2 && r <= 1, "CF insert answers 1, 0, -1 or -2");
        require(r != 0 || (nx && had), "CF insert answers 0 only for NX");
        in[i] = r >= 0;
        if (r == 1)
            require(rb_cf_items(v) == before + 1, "CF item count after insert");
        if (in[i]) {
            require(rb_cf_contains(v, keys[i], kn[i]),
                    "CF false negative after insert");
            require(rb_cf_count(v, keys[i], kn[i]) >= 1,
                    "CF count of 0 after insert");
        }
        for (unsigned j = 0; pow2 && j <= i; j++)
            require(!in[j] || rb_cf_contains(v, keys[j], kn[j]),
                    "CF loses a key inserted earlier");
    }
    rb_cf_info(v, fields);
    for (unsigned i = 0; i < NKEYS; i++) {
        bool held = rb_cf_contains(v, keys[i], kn[i]);
        require(held == (rb_cf_count(v, keys[i], kn[i]) > 0),
                "CF count and exists disagree");
        require(rb_cf_delete(v, keys[i], kn[i]) == held,
                "CF deletes exactly what it holds");
    }
    if (n > 0 && (d[0] & 1))
        rb_cf_compact(v, (d[0] & 2) != 0);
}

static void ops_cms(rval *v, const uint8_t *d, size_t n) {
    uint64_t w, dep, count;
    char err[200] = "";
    for (unsigned i = 0; i < NKEYS; i++) {
        uint8_t k[KEY_MAX];
        size_t kn = make_key(d, n, i, k);
        uint64_t by = 1 + (n > 0 ? d[i % n] : 0);
        rb_cms_info(v, &w, &dep, &count);
        uint64_t est = rb_cms_incr(v, k, kn, by);
        uint64_t q = rb_cms_query(v, k, kn);
        uint64_t w2, d2, count2;
        rb_cms_info(v, &w2, &d2, &count2);
        require(w2 == w && d2 == dep && count2 == count + by,
                "CMS total after incr");
        require(q == est, "CMS query differs from what incr answered");
        require(est == UINT32_MAX || q >= by, "CMS query below the increment");
    }
    /* A copy merged from the value alone, at weight 1, is the value. */
    size_t fl;
    uint8_t *f = frame_of(v, &fl);
    rval *c = rb_from_frame(FAM_CMS, f, fl, err, sizeof err);
    require(c != NULL, "a CMS frame loads back");
    require(rb_cms_same_shape(c, v), "CMS copy of another shape");
    rval *src[2] = {v, c};
    long long wt[2] = {1, 0};
    if (rb_cms_merge(c, src, wt, 1))
        require(same_frame(c, f, fl), "CMS merge of one at weight 1");
    /* Weights as CMS.MERGE admits them: any non-negative integer. */
    uint64_t big = 3;
    if (n >= 8)
        memcpy(&big, d + n - 8, 8);
    wt[0] = (long long)(big & INT64_MAX);
    wt[1] = 1;
    (void)rb_cms_merge(c, src, wt, 2);
    rv_free(c);
    free(f);
}

/* HeavyKeeper's adds, with increments 0 to 3 from the input: the list
 * stays sorted and at most k long, and an added key listed now is found
 * by QUERY (a loaded entry RedisBloom cut at a NUL keeps its old
 * fingerprint, and QUERY misses it there too). */
static void ops_topk(rval *v, const uint8_t *d, size_t n) {
    uint32_t k, w, dep;
    double decay;
    rb_topk_info(v, &k, &w, &dep, &decay);
    for (unsigned i = 0; i < NKEYS; i++) {
        uint8_t key[KEY_MAX];
        size_t kn = make_key(d, n, i, key);
        rb_topk_item out;
        uint32_t by = n > 0 ? d[(i * 7) % n] % 4 : 1;
        if (rb_topk_add(v, key, kn, by, &out))
            rb_topk_free_item(v, &out);
        (void)rb_topk_count(v, key, kn);
        rb_topk_item *now = malloc((size_t)k * sizeof *now);
        require(now != NULL, "memory for the list");
        size_t m = rb_topk_list(v, now);
        for (size_t j = 0; j < m; j++)
            if (now[j].item != NULL && now[j].len == kn &&
                memcmp(now[j].item, key, kn) == 0)
                require(rb_topk_query(v, key, kn),
                        "an added key listed but not found by QUERY");
        free(now);
    }
    rb_topk_item *items = malloc((size_t)k * sizeof *items);
    require(items != NULL, "memory for the list");
    size_t m = rb_topk_list(v, items);
    require(m <= k, "Top-K list longer than k");
    for (size_t i = 0; i < m; i++)
        require(i == 0 || items[i - 1].count >= items[i].count,
                "Top-K list out of order");
    free(items);
}

/* A t-digest: an amq digest whose blob round-trips and whose answers are
 * in order within [min, max]. */
static void check_tdigest(rval *v, const uint8_t *d, size_t n) {
    uint8_t *a, *b;
    size_t na, nb;
    rval *c = NULL;
    char err[200] = "";
    require(v->rb == NULL && v->u.td.t != NULL, "a t-digest of amq's own");
    for (int round = 0; round < 2; round++) {
        require(rv_encode(v, &a, &na), "t-digest blob encode");
        require(rv_decode(a, na, FAM_TDIGEST, &c, err, sizeof err),
                "a t-digest's blob decodes");
        require(rv_encode(c, &b, &nb) && na == nb && memcmp(a, b, na) == 0,
                "t-digest blob not canonical");
        rv_sys_free(a);
        rv_sys_free(b);
        rv_free(c);
        const amq_tdigest *t = v->u.td.t;
        double prev = -INFINITY;
        for (int i = 0; i <= 20 && amq_tdigest_count(t) > 0; i++) {
            double x = amq_tdigest_quantile(t, i / 20.0);
            require(x >= prev && x >= amq_tdigest_min(t) &&
                        x <= amq_tdigest_max(t),
                    "t-digest quantiles out of order or range");
            prev = x;
        }
        double x = n >= 8 ? 0 : 1;
        if (n >= 8)
            memcpy(&x, d + n - 8, 8);
        (void)amq_tdigest_add(v->u.td.t, x, 1 + (n ? d[0] : 0));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2)
        return 0;
    int fam = fams[data[0] % 5], encver = data[1] % 6;
    size_t n = size - 2;
    /* The stream in a buffer of its own size, so any over-read is seen. */
    uint8_t *stream = malloc(n ? n : 1);
    if (stream == NULL)
        return 0;
    if (n > 0)
        memcpy(stream, data + 2, n);
    host h = {.ops = &fuzz_host};
    rv_set_gate(gate, &h);

    rbs_reader r;
    char err[200] = "";
    rbs_reader_init(&r, stream, n);
    require(rb_type_name(fam) != NULL, "family without a RedisBloom type");
    rval *v = rb_load(fam, encver, &r.io, err, sizeof err);
    if (v == NULL) {
        require(err[0] != 0, "a refused value says why");
    } else if (fam == FAM_TDIGEST) {
        require(v->fam == fam, "value of another family");
        check_tdigest(v, stream, n);
        rv_free(v);
    } else {
        require(v->fam == fam && v->rb != NULL, "value of another family");
        require(encver <= rb_encver(fam), "a version newer than known loads");
        check_value(&h, v, fam);
        if (fam == FAM_BF)
            ops_bf(&h, v, stream, n);
        else if (fam == FAM_CF)
            ops_cf(&h, v, stream, n);
        else if (fam == FAM_CMS)
            ops_cms(v, stream, n);
        else
            ops_topk(v, stream, n);
        check_value(&h, v, fam);
        rv_free(v);
    }
    rv_set_gate(NULL, NULL);
    free(stream);
    return 0;
}

/* ---- the seed corpus (built with FUZZ_RB_SEEDS) ----------------------------------- */

#ifdef FUZZ_RB_SEEDS

int main(int argc, char **argv);

static int failures;

/* A seed under construction: family and version bytes, then fields. */
#define SEED_MAX 4096
typedef struct seed {
    rbs_writer w;
    uint8_t buf[SEED_MAX];
} seed;

static int fam_index(int fam) {
    for (int i = 0; i < 5; i++)
        if (fams[i] == fam)
            return i;
    return 0;
}

static void seed_begin(seed *s, int fam, int encver) {
    rbs_writer_init(&s->w, s->buf, sizeof s->buf);
    s->buf[0] = (uint8_t)fam_index(fam);
    s->buf[1] = (uint8_t)encver;
    s->w.len = 2;
}
static void seed_u(seed *s, uint64_t x) { s->w.io.put_u64(&s->w.io, x); }
static void seed_d(seed *s, double x) { s->w.io.put_dbl(&s->w.io, x); }
static void seed_s(seed *s, const void *p, size_t n) {
    s->w.io.put_str(&s->w.io, p, n);
}

static void write_seed(const char *dir, const char *name, const uint8_t *p,
                       size_t n) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (n > SEED_MAX) {
        fprintf(stderr, "gen_corpus_rb: %s too large\n", name);
        failures++;
        return;
    }
    FILE *fp = fopen(path, "wb");
    if (fp == NULL || fwrite(p, 1, n, fp) != n) {
        fprintf(stderr, "gen_corpus_rb: cannot write %s\n", path);
        failures++;
    }
    if (fp != NULL && fclose(fp) != 0)
        failures++;
    LLVMFuzzerTestOneInput(p, n); /* every seed passes the target */
}

static void seed_write(const char *dir, const char *name, seed *s) {
    write_seed(dir, name, s->buf, s->w.len);
}

/* A value's fields at the newest version, as a seed. */
static void seed_of_value(const char *dir, const char *name, const rval *v) {
    seed s;
    seed_begin(&s, v->fam, rb_encver(v->fam));
    rb_save(v, &s.w.io);
    seed_write(dir, name, &s);
}

static rval *load_seed(seed *s) {
    rbs_reader r;
    char err[200];
    int fam = fams[s->buf[0] % 5], encver = s->buf[1] % 6;
    rbs_reader_init(&r, s->buf + 2, s->w.len - 2);
    rval *v = rb_load(fam, encver, &r.io, err, sizeof err);
    if (v == NULL) {
        fprintf(stderr, "gen_corpus_rb: seed refused: %s\n", err);
        failures++;
    }
    return v;
}

/* A Bloom link as libbloom sizes one (power-of-two bits, rounded up from
 * entries·bpe), with `items` bits set by the keys below once loaded. */
static void bf_link_fields(seed *s, uint64_t entries, double error,
                           bool with_n2) {
    double bpe = fabs(log(error)) / (log(2) * log(2));
    int n2 = (int)logb((double)entries * bpe) + 1;
    uint64_t bits = (uint64_t)1 << n2;
    uint64_t bytes = bits / 8;
    static const uint8_t zero[4096];
    seed_u(s, entries + (uint64_t)(((double)bits - entries * bpe) / bpe));
    seed_d(s, error);
    seed_u(s, (uint64_t)ceil(log(2) * bpe));
    seed_d(s, bpe);
    if (with_n2) {
        seed_u(s, bits);
        seed_u(s, (uint64_t)n2);
    }
    seed_s(s, zero, (size_t)bytes);
    seed_u(s, 0);
}

static void add_keys(host *h, rval *v, unsigned n) {
    for (unsigned i = 0; i < n; i++) {
        char k[32];
        const char *err;
        int len = snprintf(k, sizeof k, "item:%u", i);
        if (v->fam == FAM_BF)
            rb_bf_add(h, v, k, (size_t)len, &err);
        else if (v->fam == FAM_CF)
            rb_cf_insert(h, v, k, (size_t)len, false);
        else
            rb_cms_incr(v, k, (size_t)len, 1 + i % 3);
    }
}

static void bf_seeds(const char *dir, host *h) {
    seed s;
    rval *v;
    /* Version 4, 64-bit hashes, one link with a few items. */
    seed_begin(&s, FAM_BF, 4);
    seed_u(&s, 0);
    seed_u(&s, 1);
    seed_u(&s, 4); /* FORCE64 */
    seed_u(&s, 2);
    bf_link_fields(&s, 100, 0.01, true);
    if ((v = load_seed(&s)) != NULL) {
        add_keys(h, v, 10);
        seed_of_value(dir, "bf-v4-one-link", v);
        rv_free(v);
    }
    /* A small link filled past its capacity: a second link at growth 3. */
    seed_begin(&s, FAM_BF, 4);
    seed_u(&s, 0);
    seed_u(&s, 1);
    seed_u(&s, 4);
    seed_u(&s, 3);
    bf_link_fields(&s, 8, 0.1, true);
    if ((v = load_seed(&s)) != NULL) {
        add_keys(h, v, 20);
        seed_of_value(dir, "bf-v4-two-links", v);
        rv_free(v);
    }
    /* Non-scaling, 32-bit hashes, full. */
    seed_begin(&s, FAM_BF, 4);
    seed_u(&s, 0);
    seed_u(&s, 1);
    seed_u(&s, 8); /* NO_SCALING */
    seed_u(&s, 0);
    bf_link_fields(&s, 8, 0.1, true);
    if ((v = load_seed(&s)) != NULL) {
        add_keys(h, v, 20);
        seed_of_value(dir, "bf-v4-nonscaling-full", v);
        rv_free(v);
    }
    /* Version 2 (options, no growth) and 1 (neither). */
    seed_begin(&s, FAM_BF, 2);
    seed_u(&s, 0);
    seed_u(&s, 1);
    seed_u(&s, 0);
    bf_link_fields(&s, 50, 0.05, true);
    seed_write(dir, "bf-v2", &s);
    seed_begin(&s, FAM_BF, 1);
    seed_u(&s, 0);
    seed_u(&s, 1);
    bf_link_fields(&s, 50, 0.05, true);
    seed_write(dir, "bf-v1", &s);
    /* Version 0: bits are entries·bpe (here exactly the array's 512). */
    static const uint8_t zero[64];
    seed_begin(&s, FAM_BF, 0);
    seed_u(&s, 0);
    seed_u(&s, 1);
    seed_u(&s, 64);
    seed_d(&s, 0.02);
    seed_u(&s, 6);
    seed_d(&s, 8.0);
    seed_s(&s, zero, sizeof zero);
    seed_u(&s, 0);
    seed_write(dir, "bf-v0", &s);
    /* Refused: cut short, and an unknown version. */
    seed_begin(&s, FAM_BF, 4);
    seed_u(&s, 0);
    seed_u(&s, 1);
    seed_u(&s, 0);
    seed_u(&s, 2);
    bf_link_fields(&s, 100, 0.01, true);
    s.w.len -= 40;
    seed_write(dir, "bad-bf-truncated", &s);
    s.buf[1] = 5;
    s.w.len += 40;
    seed_write(dir, "bad-bf-v5", &s);
}

static rval *cf_made(host *h, uint64_t nb, uint64_t nf, unsigned bs,
                     unsigned mi, unsigned ex) {
    uint8_t head[38];
    char err[200];
    memset(head, 0, sizeof head);
    for (int i = 0; i < 8; i++) {
        head[8 + i] = (uint8_t)(nb >> (8 * i));
        head[24 + i] = (uint8_t)(nf >> (8 * i));
    }
    head[32] = (uint8_t)bs;
    head[34] = (uint8_t)mi;
    head[35] = (uint8_t)(mi >> 8);
    head[36] = (uint8_t)ex;
    rval *v = rb_cf_from_header(h, head, sizeof head, err, sizeof err);
    if (v == NULL) {
        fprintf(stderr, "gen_corpus_rb: CF header refused: %s\n", err);
        failures++;
    }
    return v;
}

static void cf_seeds(const char *dir, host *h) {
    rval *v;
    seed s;
    if ((v = cf_made(h, 32, 1, 2, 20, 1)) != NULL) {
        add_keys(h, v, 20);
        seed_of_value(dir, "cf-v4-one", v);
        rv_free(v);
    }
    /* Filled past its first sub-filter: expansion 2, kicks on the way. */
    if ((v = cf_made(h, 8, 1, 4, 50, 2)) != NULL) {
        add_keys(h, v, 48);
        seed_of_value(dir, "cf-v4-grown", v);
        rv_free(v);
    }
    /* Empty, bucket size 1. */
    if ((v = cf_made(h, 64, 1, 1, 10, 2)) != NULL) {
        seed_of_value(dir, "cf-v4-empty", v);
        rv_free(v);
    }
    static const uint8_t zero[256];
    /* Sub-filter sizes a header does not imply (8 and 8 at expansion 2);
     * the first full, the second with a few fingerprints. */
    uint8_t full[16], some[16];
    for (int i = 0; i < 16; i++) {
        full[i] = (uint8_t)(1 + i * 13);
        some[i] = i % 5 == 0 ? (uint8_t)(200 + i) : 0;
    }
    seed_begin(&s, FAM_CF, 4);
    seed_u(&s, 2);
    seed_u(&s, 8);
    seed_u(&s, 20);
    seed_u(&s, 0);
    seed_u(&s, 2);
    seed_u(&s, 20);
    seed_u(&s, 2);
    seed_u(&s, 8);
    seed_s(&s, full, sizeof full);
    seed_u(&s, 8);
    seed_s(&s, some, sizeof some);
    seed_write(dir, "cf-v4-odd-sizes", &s);
    /* Version 2: bucket size 2, no sizes per sub-filter. */
    seed_begin(&s, FAM_CF, 2);
    seed_u(&s, 1);
    seed_u(&s, 64);
    seed_u(&s, 0);
    seed_s(&s, zero, 128);
    seed_write(dir, "cf-v2", &s);
    /* Refused: bucket count not a power of two. */
    seed_begin(&s, FAM_CF, 4);
    seed_u(&s, 1);
    seed_u(&s, 6);
    seed_u(&s, 0);
    seed_u(&s, 0);
    seed_u(&s, 2);
    seed_u(&s, 20);
    seed_u(&s, 1);
    seed_u(&s, 6);
    seed_s(&s, zero, 12);
    seed_write(dir, "bad-cf-buckets", &s);
}

static void cms_seeds(const char *dir, host *h) {
    static const uint8_t zero[4 * 16 * 4];
    rval *v;
    seed s;
    (void)h;
    seed_begin(&s, FAM_CMS, 0);
    seed_u(&s, 16);
    seed_u(&s, 4);
    seed_u(&s, 0);
    seed_s(&s, zero, sizeof zero);
    if ((v = load_seed(&s)) != NULL) {
        add_keys(h, v, 30);
        seed_of_value(dir, "cms-16x4", v);
        rv_free(v);
    }
    /* Refused: counters of the wrong size. */
    seed_begin(&s, FAM_CMS, 0);
    seed_u(&s, 16);
    seed_u(&s, 4);
    seed_u(&s, 0);
    seed_s(&s, zero, sizeof zero - 4);
    seed_write(dir, "bad-cms-cells", &s);
}

static void topk_seeds(const char *dir, host *h) {
    char err[160];
    seed s;
    rval *v = rb_topk_new(h, 4, 8, 3, 0.9, err, sizeof err);
    if (v != NULL) {
        for (unsigned i = 0; i < 60; i++) {
            char key[16];
            rb_topk_item out;
            int n = snprintf(key, sizeof key, "k%u", i % 9 < 5 ? i % 3 : i);
            if (rb_topk_add(v, key, (size_t)n, 1 + i % 2, &out))
                rb_topk_free_item(v, &out);
        }
        seed_of_value(dir, "topk-4x8x3", v);
        rv_free(v);
    }
    /* Refused: a heap string of the wrong size. */
    seed_begin(&s, FAM_TOPK, 0);
    seed_u(&s, 2);
    seed_u(&s, 1);
    seed_u(&s, 1);
    seed_d(&s, 0.9);
    seed_s(&s, "\0\0\0\0\0\0\0\0", 8);
    seed_s(&s, "", 0);
    seed_write(dir, "bad-topk-heap", &s);
}

static void tdigest_seeds(const char *dir) {
    static const double mean[] = {1, 2.5, 4, 9}, weight[] = {1, 3, 5, 1};
    seed s;
    seed_begin(&s, FAM_TDIGEST, 0);
    seed_d(&s, 100); /* compression, min, max */
    seed_d(&s, 1);
    seed_d(&s, 9);
    seed_u(&s, 610); /* room, merged, unmerged, compressions */
    seed_u(&s, 4);
    seed_u(&s, 0);
    seed_u(&s, 2);
    seed_d(&s, 10); /* merged and unmerged weights */
    seed_d(&s, 0);
    for (int i = 0; i < 4; i++)
        seed_d(&s, mean[i]);
    for (int i = 0; i < 4; i++)
        seed_d(&s, weight[i]);
    seed_write(dir, "tdigest-4", &s);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: gen_corpus_rb CORPUS_DIR\n");
        return 2;
    }
    host h = {.ops = &fuzz_host};
    bf_seeds(argv[1], &h);
    cf_seeds(argv[1], &h);
    cms_seeds(argv[1], &h);
    topk_seeds(argv[1], &h);
    tdigest_seeds(argv[1]);
    return failures ? 1 : 0;
}

#endif
