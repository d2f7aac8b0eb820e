/*
 * value.c — a key's value (rval), its counting allocator, and its
 * serialized form, the blob.
 *
 * Blob, little-endian (docs/redis.md repeats this):
 *
 *   0   4  magic 89 'A' 'M' 'R'
 *   4   2  version = 1
 *   6   1  family (1 BF, 2 CF, 3 CMS, 4 TOPK, 5 AMQ, 6 CASCADE, 7 TDIGEST,
 *          8 WINDOW, 9 CLOCK)
 *   7   1  flags: bit 0 = pending (a LOADCHUNK stream still arriving),
 *          bit 1 = a key in RedisBloom's layout (rb.c): P = 0, one frame
 *          holding its encoding version and RedisBloom's fields;
 *          bit 2 = an amq value kept under RedisBloom's type name
 *   8   8  total length of the blob, checksum included
 *   16  4  parameter length P (the family's fixed length; 0 if pending)
 *   20  4  frame count F (<= 64; 1 if pending)
 *   24  P  family parameters
 *   ..     F times: length u64, then that many bytes: an amq frame
 *          (docs/format.md), or for a pending blob the received prefix
 *   end-8  XXH64 (seed 0) of every byte before it
 *
 * Decoding checks, in order: length and magic, version, flags, total,
 * checksum, family, P and F, every frame length against what is left, the
 * family's parameters, then each frame through amq's own loader (which
 * checks the frame's checksum and every field before it allocates). A
 * value is built aside and returned only when all of it loaded: a corrupt
 * blob leaves nothing behind.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amqr.h"

#define BLOB_VERSION 1
#define BLOB_FLAG_PENDING 0x1u
#define BLOB_FLAG_RB 0x2u /* one frame: the fields of a RedisBloom layout */
#define BLOB_FLAG_RB_NAME 0x4u /* kept under RedisBloom's type name */
#define BLOB_MAX_FRAMES 64
static const uint8_t blob_magic[4] = {0x89, 'A', 'M', 'R'};

/* ---- system allocator ------------------------------------------------------ */

static void *(*sys_alloc)(size_t) = malloc;
static void *(*sys_realloc)(void *, size_t) = realloc;
static void (*sys_free)(void *) = free;

void rv_set_system_allocator(void *(*a)(size_t), void *(*r)(void *, size_t),
                             void (*f)(void *)) {
    sys_alloc = a;
    sys_realloc = r;
    sys_free = f;
}

void *rv_sys_alloc(size_t n) { return sys_alloc(n ? n : 1); }
void rv_sys_free(void *p) { sys_free(p); }

/* ---- the counting allocator handed to amq ---------------------------------- */

/* The running command's memory budget, asked before every large
 * allocation of a value: a structure whose spec fixes a size the budget
 * refuses (qf:q=34, a maplet growing past the limit) fails with
 * AMQ_ERR_NOMEM instead of taking the server's allocator down. */
#define GATE_MIN ((size_t)1 << 20)
static bool (*gate)(void *ctx, double bytes);
static void *gate_ctx;

void rv_set_gate(bool (*fn)(void *ctx, double bytes), void *ctx) {
    gate = fn;
    gate_ctx = ctx;
}

static bool gate_open(size_t grow) {
    return grow < GATE_MIN || gate == NULL || gate(gate_ctx, (double)grow);
}

static void *count_alloc(void *ctx, size_t size) {
    if (!gate_open(size))
        return NULL;
    void *p = sys_alloc(size ? size : 1);
    if (p != NULL)
        ((rval *)ctx)->bytes += size;
    return p;
}

static void *count_realloc(void *ctx, void *ptr, size_t old, size_t size) {
    if (size > old && !gate_open(size - old))
        return NULL;
    void *p = sys_realloc(ptr, size ? size : 1);
    if (p != NULL)
        ((rval *)ctx)->bytes += size - old;
    return p;
}

static void count_free(void *ctx, void *ptr, size_t size) {
    if (ptr == NULL)
        return;
    ((rval *)ctx)->bytes -= size;
    sys_free(ptr);
}

rval *rv_new(int fam) {
    rval *v = sys_alloc(sizeof *v);
    if (v == NULL)
        return NULL;
    memset(v, 0, sizeof *v);
    v->fam = fam;
    v->alloc.alloc = count_alloc;
    v->alloc.realloc = count_realloc;
    v->alloc.free = count_free;
    v->alloc.ctx = v;
    return v;
}

amq_options rv_options(rval *v) {
    amq_options o;
    memset(&o, 0, sizeof o);
    o.allocator = &v->alloc;
    return o;
}

static void pending_free(pending *p) {
    if (p == NULL)
        return;
    sys_free(p->buf);
    sys_free(p);
}

void rv_scan_drop(rval *v) {
    if (v != NULL) {
        pending_free(v->scan);
        v->scan = NULL;
    }
}

void rv_free(rval *v) {
    if (v == NULL)
        return;
    rv_scan_drop(v);
    const fam_ops *ops = fam_get(v->fam);
    if (v->rb != NULL)
        rb_free(v);
    else if (ops != NULL && v->load == NULL)
        ops->destroy(v);
    pending_free(v->load);
    sys_free(v);
}

size_t rv_memory(const rval *v) {
    return sizeof *v + v->bytes +
           (v->load ? sizeof *v->load + v->load->total : 0) +
           (v->scan ? sizeof *v->scan + v->scan->total : 0);
}

const fam_ops *fam_get(int fam) {
    switch (fam) {
    case FAM_BF: return &bf_ops;
    case FAM_CF: return &cf_ops;
    case FAM_CMS: return &cms_ops;
    case FAM_TOPK: return &topk_ops;
    case FAM_AMQ: return &amq_ops;
    case FAM_CASC: return &casc_ops;
    case FAM_TDIGEST: return &tdigest_ops;
    case FAM_WINDOW: return &window_ops;
    case FAM_CLOCK: return &clock_ops;
    default: return NULL;
    }
}

/* ---- frames -------------------------------------------------------------------- */

unsigned rv_nframes(const rval *v) {
    const fam_ops *ops = fam_get(v->fam);
    if (v->rb != NULL) /* RedisBloom's fields: no amq frame (rb_frame) */
        return 0;
    return ops->nframes != NULL ? ops->nframes(v) : 1;
}

size_t rv_frame_size(const rval *v, unsigned i) {
    const fam_ops *ops = fam_get(v->fam);
    return ops->filter_at != NULL
               ? amq_filter_serialized_size(ops->filter_at(v, i))
               : ops->frame_size(v, i);
}

amq_status rv_frame_save(const rval *v, unsigned i, uint8_t *buf, size_t cap) {
    const fam_ops *ops = fam_get(v->fam);
    return ops->filter_at != NULL
               ? amq_filter_save(ops->filter_at(v, i), buf, cap, NULL)
               : ops->frame_save(v, i, buf, cap);
}

bool rv_frame_refused(char *err, size_t cap, amq_status st,
                      const amq_diag *diag) {
    snprintf(err, cap, "frame refused: %s (%s)", amq_strerror(st),
             diag->message);
    return false;
}

bool rv_one_frame(unsigned nframes, const char *fam, char *err, size_t cap) {
    if (nframes == 1)
        return true;
    snprintf(err, cap, "a %s value holds exactly one frame", fam);
    return false;
}

bool rv_load_filter(rval *v, const uint8_t *buf, size_t len, amq_filter **out,
                    char *err, size_t cap) {
    amq_diag diag;
    amq_options o = rv_options(v);
    memset(&diag, 0, sizeof diag);
    amq_status st = amq_filter_load(buf, len, &o, out, &diag);
    return st == AMQ_OK || rv_frame_refused(err, cap, st, &diag);
}

/* ---- hash lists ------------------------------------------------------------------ */

bool hl_has(const hlist *l, uint64_t x) {
    for (uint32_t i = 0; i < l->n; i++)
        if (l->h[i] == x)
            return true;
    return false;
}

uint64_t hl_count(const hlist *l, uint64_t x) {
    uint64_t c = 0;
    for (uint32_t i = 0; i < l->n; i++)
        c += l->h[i] == x;
    return c;
}

bool hl_push(rval *v, hlist *l, uint64_t x, uint32_t limit) {
    if (l->n == l->room) {
        uint32_t room = l->room ? 2 * l->room : 2;
        room = room > limit ? limit : room;
        if (room <= l->n)
            return false;
        uint64_t *p = v->alloc.realloc(v->alloc.ctx, l->h, l->room * sizeof *p,
                                       room * sizeof *p);
        if (p == NULL)
            return false;
        l->h = p;
        l->room = room;
    }
    l->h[l->n++] = x;
    return true;
}

bool hl_remove(hlist *l, uint64_t x) {
    for (uint32_t i = l->n; i-- > 0;)
        if (l->h[i] == x) {
            memmove(l->h + i, l->h + i + 1, (l->n - i - 1) * sizeof *l->h);
            l->n--;
            return true;
        }
    return false;
}

void hl_free(rval *v, hlist *l) {
    if (l->h != NULL)
        v->alloc.free(v->alloc.ctx, l->h, l->room * sizeof *l->h);
    l->h = NULL;
    l->n = l->room = 0;
}

void hl_save(const hlist *l, uint8_t *buf) {
    for (uint32_t k = 0; k < l->n; k++)
        for (int j = 0; j < 8; j++)
            buf[8 * (size_t)k + (size_t)j] = (uint8_t)(l->h[k] >> (8 * j));
}

bool hl_load(rval *v, hlist *l, const uint8_t *p, size_t len, uint32_t limit,
             bool repeats, char *err, size_t cap) {
    size_t n = len / 8;
    if (len % 8 != 0 || n > limit) {
        snprintf(err, cap, "a hash list of %zu bytes (at most %u hashes)", len,
                 limit);
        return false;
    }
    for (size_t k = 0; k < n; k++) {
        uint64_t x = 0;
        for (int j = 7; j >= 0; j--)
            x = x << 8 | p[8 * k + (size_t)j];
        if (!repeats && hl_has(l, x)) {
            snprintf(err, cap, "a hash list with a repeat");
            return false;
        }
        if (!hl_push(v, l, x, limit)) {
            snprintf(err, cap, "out of memory");
            return false;
        }
    }
    return true;
}

/* ---- little-endian fields ---------------------------------------------------- */

static void put32(uint8_t *p, uint32_t x) {
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(x >> (8 * i));
}
static void put64(uint8_t *p, uint64_t x) {
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(x >> (8 * i));
}
static uint32_t get32(const uint8_t *p) {
    uint32_t x = 0;
    for (int i = 3; i >= 0; i--)
        x = (x << 8) | p[i];
    return x;
}
static uint64_t get64(const uint8_t *p) {
    uint64_t x = 0;
    for (int i = 7; i >= 0; i--)
        x = (x << 8) | p[i];
    return x;
}

static uint64_t checksum(const uint8_t *p, size_t n) {
    amq_hasher h;
    amq_hasher_init(&h, AMQ_HASH_XXH64, 0, NULL);
    return amq_hash64(&h, p, n);
}

/* ---- encode ------------------------------------------------------------------- */

static void head_write(uint8_t *b, int fam, unsigned flags, size_t total,
                       size_t plen, unsigned nframes) {
    memcpy(b, blob_magic, 4);
    b[4] = BLOB_VERSION;
    b[5] = 0;
    b[6] = (uint8_t)fam;
    b[7] = (uint8_t)flags;
    put64(b + 8, total);
    put32(b + 16, (uint32_t)plen);
    put32(b + 20, nframes);
}

static bool encode_pending(const rval *v, uint8_t **out, size_t *len) {
    size_t total = BLOB_HEAD + 8 + v->load->have + 8;
    uint8_t *b = rv_sys_alloc(total);
    if (b == NULL)
        return false;
    head_write(b, v->fam, BLOB_FLAG_PENDING, total, 0, 1);
    put64(b + BLOB_HEAD, v->load->have);
    memcpy(b + BLOB_HEAD + 8, v->load->buf, v->load->have);
    put64(b + total - 8, checksum(b, total - 8));
    *out = b;
    *len = total;
    return true;
}

static bool encode_rb(const rval *v, uint8_t **out, size_t *len) {
    size_t fl = rb_frame(v, NULL, 0), total = BLOB_HEAD + 8 + fl + 8;
    uint8_t *b = rv_sys_alloc(total);
    if (b == NULL)
        return false;
    head_write(b, v->fam, BLOB_FLAG_RB, total, 0, 1);
    put64(b + BLOB_HEAD, fl);
    rb_frame(v, b + BLOB_HEAD + 8, fl);
    put64(b + total - 8, checksum(b, total - 8));
    *out = b;
    *len = total;
    return true;
}

bool rv_encode(const rval *v, uint8_t **out, size_t *len) {
    const fam_ops *ops = fam_get(v->fam);
    if (v->load != NULL)
        return encode_pending(v, out, len);
    if (v->rb != NULL)
        return encode_rb(v, out, len);
    unsigned nf = rv_nframes(v);
    size_t total = BLOB_HEAD + ops->params_len + 8;
    for (unsigned i = 0; i < nf; i++)
        total += 8 + rv_frame_size(v, i);
    uint8_t *b = rv_sys_alloc(total);
    if (b == NULL)
        return false;
    head_write(b, v->fam, v->rb_name ? BLOB_FLAG_RB_NAME : 0, total,
               ops->params_len, nf);
    if (ops->params_write != NULL)
        ops->params_write(v, b + BLOB_HEAD);
    size_t off = BLOB_HEAD + ops->params_len;
    for (unsigned i = 0; i < nf; i++) {
        size_t fl = rv_frame_size(v, i);
        put64(b + off, fl);
        if (rv_frame_save(v, i, b + off + 8, fl) != AMQ_OK) {
            rv_sys_free(b);
            return false;
        }
        off += 8 + fl;
    }
    put64(b + total - 8, checksum(b, total - 8));
    *out = b;
    *len = total;
    return true;
}

/* ---- decode ------------------------------------------------------------------- */

static bool fail(char *err, size_t cap, const char *msg) {
    snprintf(err, cap, "%s", msg);
    return false;
}

bool blob_peek(const uint8_t *b, size_t len, int *fam, size_t *total, char *err,
               size_t cap) {
    if (len < BLOB_HEAD || memcmp(b, blob_magic, 4) != 0)
        return fail(err, cap, "not an amq value (bad magic or too short)");
    if (b[4] != BLOB_VERSION || b[5] != 0)
        return fail(err, cap, "unsupported amq value version");
    unsigned fl = b[7];
    if ((fl & ~(BLOB_FLAG_PENDING | BLOB_FLAG_RB | BLOB_FLAG_RB_NAME)) != 0 ||
        __builtin_popcount(fl) > 1)
        return fail(err, cap, "unknown flags in amq value");
    uint64_t t = get64(b + 8);
    if (t < BLOB_HEAD + 8 || t > BLOB_MAX)
        return fail(err, cap, "amq value length out of range");
    if (fam_get(b[6]) == NULL)
        return fail(err, cap, "unknown amq value family");
    *fam = b[6];
    *total = (size_t)t;
    return true;
}

static bool decode_pending(const uint8_t *b, size_t len, rval *v, char *err,
                           size_t cap) {
    int fam;
    size_t total;
    if (get32(b + 16) != 0 || get32(b + 20) != 1 || len < BLOB_HEAD + 16)
        return fail(err, cap, "malformed pending amq value");
    uint64_t have = get64(b + BLOB_HEAD);
    if (have != len - BLOB_HEAD - 16)
        return fail(err, cap, "pending amq value length mismatch");
    const uint8_t *pre = b + BLOB_HEAD + 8;
    if (!blob_peek(pre, (size_t)have, &fam, &total, err, cap))
        return false;
    if (fam != v->fam || (pre[7] & BLOB_FLAG_PENDING) != 0 || have >= total)
        return fail(err, cap, "pending amq value inconsistent");
    pending *p = rv_sys_alloc(sizeof *p);
    uint8_t *buf = p ? rv_sys_alloc(total) : NULL;
    if (buf == NULL) {
        rv_sys_free(p);
        return fail(err, cap, "out of memory");
    }
    memcpy(buf, pre, (size_t)have);
    p->buf = buf;
    p->total = total;
    p->have = (size_t)have;
    v->load = p;
    return true;
}

/* Frames of a complete blob, each handed to the family. */
static bool decode_frames(const uint8_t *b, size_t len, const fam_ops *ops,
                          rval *v, char *err, size_t cap) {
    unsigned nf = get32(b + 20);
    size_t off = BLOB_HEAD + ops->params_len, end = len - 8;
    if (nf > BLOB_MAX_FRAMES)
        return fail(err, cap, "too many frames in amq value");
    if (ops->params_read != NULL &&
        !ops->params_read(v, b + BLOB_HEAD, err, cap))
        return false;
    for (unsigned i = 0; i < nf; i++) {
        if (end - off < 8)
            return fail(err, cap, "truncated amq value");
        uint64_t fl = get64(b + off);
        off += 8;
        if (fl > end - off)
            return fail(err, cap, "frame length beyond the amq value");
        if (!ops->frame_load(v, i, nf, b + off, (size_t)fl, err, cap))
            return false;
        off += (size_t)fl;
    }
    if (off != end)
        return fail(err, cap, "trailing bytes in amq value");
    return ops->finish == NULL || ops->finish(v, err, cap);
}

bool rv_decode(const uint8_t *b, size_t len, int want, rval **out, char *err,
               size_t cap) {
    int fam;
    size_t total;
    *out = NULL;
    if (!blob_peek(b, len, &fam, &total, err, cap))
        return false;
    if (total != len)
        return fail(err, cap, "amq value length mismatch");
    if (get64(b + len - 8) != checksum(b, len - 8))
        return fail(err, cap, "amq value checksum mismatch");
    if (want != 0 && fam != want)
        return fail(err, cap, "amq value of another family");
    const fam_ops *ops = fam_get(fam);
    if (b[7] & BLOB_FLAG_RB) {
        if (get32(b + 16) != 0 || get32(b + 20) != 1 || len < BLOB_HEAD + 16 ||
            get64(b + BLOB_HEAD) != len - BLOB_HEAD - 16)
            return fail(err, cap, "malformed RedisBloom-layout amq value");
        *out = rb_from_frame(fam, b + BLOB_HEAD + 8, len - BLOB_HEAD - 16, err,
                             cap);
        return *out != NULL;
    }
    rval *v = rv_new(fam);
    if (v == NULL)
        return fail(err, cap, "out of memory");
    bool ok;
    if (b[7] & BLOB_FLAG_PENDING) {
        ok = decode_pending(b, len, v, err, cap);
    } else {
        ok = get32(b + 16) == ops->params_len
                 ? decode_frames(b, len, ops, v, err, cap)
                 : fail(err, cap, "amq value parameter length mismatch");
    }
    if (!ok) {
        rv_free(v);
        return false;
    }
    v->rb_name = (b[7] & BLOB_FLAG_RB_NAME) != 0;
    *out = v;
    return true;
}

rval *rv_copy(const rval *v) {
    uint8_t *b;
    size_t n;
    rval *c = NULL;
    char err[128];
    if (!rv_encode(v, &b, &n))
        return NULL;
    rv_decode(b, n, v->fam, &c, err, sizeof err);
    rv_sys_free(b);
    return c;
}
