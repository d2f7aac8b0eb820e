/*
 * chunk.c — SCANDUMP and LOADCHUNK: a value moved between servers in
 * pieces of at most CHUNK_MAX (16 MiB).
 *
 * The stream is the value's blob (value.c) cut into consecutive pieces,
 * encoded once a scan and kept beside the value until the last piece goes
 * (or a write changes the value; MEMORY USAGE counts it meanwhile).
 * The iterator SCANDUMP returns with a piece is one past the piece's end
 * (1-based), so LOADCHUNK(key, iter, data) knows where data goes:
 * offset = iter - 1 - len(data). SCANDUMP(key, 0) starts; (0, nil) ends.
 *
 *   blob:  [ head | params | frame 0 | frame 1 | ... | xxh64 ]
 *           ^ piece 1 (iter = n1 + 1)   ^ piece 2 (iter = n1 + n2 + 1) ...
 *
 * LOADCHUNK at offset 0 checks the blob's head (magic, version, family,
 * total length against the memory budget) before it replaces the key with
 * a pending value; later pieces must arrive in order. When the last piece
 * arrives the whole blob is decoded and checked (checksums of the blob and
 * of every frame); only then does the key become a filter again. A piece
 * that is out of order, too long, or completes a blob that does not
 * decode, is refused and the key stays as it was. Every accepted piece is
 * replicated as it came (a replica or the AOF receives the same stream).
 */
#include <stdio.h>
#include <string.h>

#include "amqr.h"

static int lookup_any(host *h, int fam, rval **v) {
    return h->ops->lookup(h, 1, fam, v);
}

static void accepted(host *h, const char *event) {
    h->ops->replicate_verbatim(h);
    h->ops->notify(h, event, 1);
    r_ok(h);
}

/* ---- RedisBloom's streams, for keys in its layouts (rb.c) ----------------------
 *
 * BF: iterator 0 answers (1, header); a later iterator i is one past the
 * bytes sent so far of the links' bit arrays, and the end is (0, "").
 * CF: (1, 38-byte header), then the sub-filters' buckets the same way,
 * the end (0, nil); an empty filter answers (0, nil) at once. LOADCHUNK
 * with iterator 1 makes a key from a header (zeroed bits); later chunks
 * go where their iterator says, in any order, as RedisBloom takes them. */

static int rb_scandump(host *h, rval *v, long long it) {
    uint8_t head[38];
    size_t n = 0;
    const uint8_t *p;
    h->ops->r_arr(h, 2);
    if (v->fam == FAM_CF && rb_cf_items(v) == 0) {
        h->ops->r_int(h, 0);
        h->ops->r_null(h);
        return 0;
    }
    if (it == 0) {
        h->ops->r_int(h, 1);
        if (v->fam == FAM_CF) {
            h->ops->r_str(h, (const char *)head, rb_cf_header(v, head));
            return 0;
        }
        size_t hn = rb_bf_header(v, NULL, 0);
        uint8_t *hb = rv_sys_alloc(hn);
        if (hb == NULL) {
            h->ops->r_str(h, "", 0);
            return 0;
        }
        rb_bf_header(v, hb, hn);
        h->ops->r_str(h, (const char *)hb, hn);
        rv_sys_free(hb);
        return 0;
    }
    p = v->fam == FAM_CF ? rb_cf_chunk(v, &it, &n) : rb_bf_chunk(v, &it, &n);
    if (p == NULL) {
        h->ops->r_int(h, 0);
        if (v->fam == FAM_CF)
            h->ops->r_null(h);
        else
            h->ops->r_str(h, "", 0);
        return 0;
    }
    h->ops->r_int(h, it);
    h->ops->r_str(h, (const char *)p, n);
    return 0;
}

static int rb_loadchunk(host *h, int fam, long long it, const rarg *d,
                        const char *event) {
    rval *v;
    char err[160];
    int st = lookup_any(h, fam, &v);
    if (st == KEY_WRONGTYPE)
        return r_wrongtype(h);
    if (it == 1 && st == KEY_EMPTY) {
        const uint8_t *p = (const uint8_t *)d->p;
        v = fam == FAM_CF ? rb_cf_from_header(h, p, d->n, err, sizeof err)
                          : rb_bf_from_header(h, p, d->n, err, sizeof err);
        if (v == NULL)
            return r_err(h, err);
        if (!store_or_reply(h, v))
            return 0;
        accepted(h, event);
        return 0;
    }
    if (st == KEY_EMPTY)
        return r_err(h, "ERR not found");
    if (v->rb == NULL) /* RedisBloom's header for a key of amq's own */
        return r_err(h, fam == FAM_CF ? "ERR item exists"
                                      : "ERR received bad data");
    if (fam == FAM_CF) {
        if (it == 1)
            return r_err(h, "ERR item exists");
        if (!rb_cf_load_chunk(v, it, (const uint8_t *)d->p, d->n))
            return r_err(h, "Couldn't load chunk!");
    } else {
        const char *why;
        if (!rb_bf_load_chunk(v, it, (const uint8_t *)d->p, d->n, &why))
            return r_err(h, why);
    }
    accepted(h, event);
    return 0;
}

int chunk_scandump(host *h, int fam) {
    long long it;
    rval *v;
    uint8_t *blob;
    size_t len;
    if (h->argc != 3)
        return r_arity(h);
    if (!arg_ll(&h->argv[2], &it) || it < 0)
        return r_err(h, "ERR Invalid iterator");
    int st = lookup_any(h, fam, &v);
    if (st == KEY_WRONGTYPE)
        return r_wrongtype(h);
    if (st == KEY_EMPTY)
        return r_err(h, "ERR not found");
    if (v->load != NULL)
        return r_err(h, "ERR the key is being loaded by LOADCHUNK");
    if (v->rb != NULL && (fam == FAM_BF || fam == FAM_CF))
        return rb_scandump(h, v, it);
    /* the blob is made once a scan (iterator 0, or after a write) and kept
     * until its last piece is sent: a stream of n pieces costs one encode,
     * not n */
    if (it == 0)
        rv_scan_drop(v);
    if (v->scan == NULL) {
        pending *p = rv_sys_alloc(sizeof *p);
        if (p == NULL || !rv_encode(v, &blob, &len)) {
            rv_sys_free(p);
            return r_err(h, "ERR out of memory");
        }
        p->buf = blob;
        p->total = p->have = len;
        v->scan = p;
    }
    blob = v->scan->buf;
    len = v->scan->total;
    size_t off = it == 0 ? 0 : (size_t)(it - 1);
    h->ops->r_arr(h, 2);
    if (off >= len) {
        h->ops->r_int(h, 0);
        h->ops->r_null(h);
        rv_scan_drop(v);
    } else {
        size_t n = len - off < CHUNK_MAX ? len - off : CHUNK_MAX;
        h->ops->r_int(h, (long long)(off + n + 1));
        h->ops->r_str(h, (const char *)blob + off, n);
        if (off + n == len)
            rv_scan_drop(v);
    }
    return 0;
}

/* The first piece: a fresh pending value (or the whole value). */
static int first_piece(host *h, int fam, const rarg *d, const char *event) {
    int got;
    size_t total;
    char err[160], msg[200];
    rval *old, *v;
    const char *why = NULL;
    if (!blob_peek((const uint8_t *)d->p, d->n, &got, &total, err, sizeof err))
        why = err;
    else if (fam != 0 && got != fam)
        why = "a chunk of another type";
    else if (d->n > total || d->n > CHUNK_MAX)
        why = "longer than the value it starts";
    if (why != NULL) {
        snprintf(msg, sizeof msg, "ERR invalid chunk: %s", why);
        return r_err(h, msg);
    }
    if (lookup_any(h, got, &old) == KEY_WRONGTYPE)
        return r_wrongtype(h);
    if (!h->ops->budget(h, (double)total))
        return r_err(h, "ERR the chunked value is larger than the memory "
                        "limit allows");
    if (d->n == total) {
        if (!rv_decode((const uint8_t *)d->p, d->n, got, &v, err, sizeof err)) {
            snprintf(msg, sizeof msg, "ERR invalid chunk: %s", err);
            return r_err(h, msg);
        }
    } else {
        v = rv_new(got);
        pending *p = v ? rv_sys_alloc(sizeof *p) : NULL;
        uint8_t *buf = p ? rv_sys_alloc(total) : NULL;
        if (buf == NULL) {
            rv_sys_free(p);
            rv_free(v);
            return r_err(h, "ERR out of memory");
        }
        memcpy(buf, d->p, d->n);
        p->buf = buf;
        p->total = total;
        p->have = d->n;
        v->load = p;
    }
    if (!store_or_reply(h, v))
        return 0;
    accepted(h, event);
    return 0;
}

/* A later piece, appended in order; the last one decodes the blob. */
static int next_piece(host *h, int fam, size_t off, const rarg *d,
                      const char *event) {
    rval *v, *done;
    char err[160], msg[200];
    int st = lookup_any(h, fam, &v);
    if (st == KEY_WRONGTYPE)
        return r_wrongtype(h);
    if (st == KEY_EMPTY || v->load == NULL)
        return r_err(h, "ERR invalid chunk: no load in progress (send the "
                        "first chunk first)");
    pending *p = v->load;
    if (off != p->have || d->n > p->total - p->have || d->n > CHUNK_MAX)
        return r_err(h, "ERR invalid chunk: out of order or too long");
    if (p->have + d->n < p->total) {
        memcpy(p->buf + p->have, d->p, d->n);
        p->have += d->n;
        accepted(h, event);
        return 0;
    }
    memcpy(p->buf + p->have, d->p, d->n);
    if (!rv_decode(p->buf, p->total, v->fam, &done, err, sizeof err)) {
        snprintf(msg, sizeof msg, "ERR invalid chunk: %s", err);
        return r_err(h, msg);
    }
    if (!store_or_reply(h, done))
        return 0;
    accepted(h, event);
    return 0;
}

int chunk_loadchunk(host *h, int fam) {
    long long it;
    if (h->argc != 4)
        return r_arity(h);
    const rarg *d = &h->argv[3];
    const char *event = fam == FAM_BF   ? "bf.loadchunk"
                        : fam == FAM_CF ? "cf.loadchunk"
                                        : "amq.loadchunk";
    if (!arg_ll(&h->argv[2], &it))
        return r_err(h, "ERR invalid chunk: bad iterator");
    if (fam == FAM_BF || fam == FAM_CF) {
        /* RedisBloom's stream: its header comes at iterator 1 (an amq
         * blob's first piece never does), its later chunks to a key in
         * its layout */
        rval *v;
        if (it == 1 && !(d->n >= 4 && memcmp(d->p,
                                             "\x89"
                                             "AMR",
                                             4) == 0))
            return rb_loadchunk(h, fam, it, d, event);
        if (lookup_any(h, fam, &v) == KEY_OK && v->rb != NULL)
            return rb_loadchunk(h, fam, it, d, event);
    }
    if (it < 1 || (size_t)(it - 1) < d->n)
        return r_err(h, "ERR invalid chunk: bad iterator");
    size_t off = (size_t)(it - 1) - d->n;
    return off == 0 ? first_piece(h, fam, d, event)
                    : next_piece(h, fam, off, d, event);
}

int bf_scandump(host *h) { return chunk_scandump(h, FAM_BF); }
int bf_loadchunk(host *h) { return chunk_loadchunk(h, FAM_BF); }
int cf_scandump(host *h) { return chunk_scandump(h, FAM_CF); }
int cf_loadchunk(host *h) { return chunk_loadchunk(h, FAM_CF); }
int amq_scandump(host *h) { return chunk_scandump(h, 0); }
int amq_loadchunk(host *h) { return chunk_loadchunk(h, 0); }
