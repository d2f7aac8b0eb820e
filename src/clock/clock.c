/*
 * clock.c — the amq_clock interface: construction, dispatch to the Bloom
 * clock (bloomclock.c) or the vector clock (vectorclock.c), the wire
 * message and the frame. The false-positive estimates are in estimate.c.
 *
 * Wire message (amq_clock_encode), little-endian, no frame:
 *   Bloom:   B1 | varint m | varint k | u32 shape tag | body | u32 check
 *   dense:   D1 | u32 membership tag  | counters body | u32 check
 *   sparse:  51 | (id delta, counter) body            | u32 check
 * check = low 32 bits of XXH3 (seed CHECK_SEED) of every byte before it.
 * Frame (amq_clock_save): type 300 (Bloom) or 301 (vector), params 16
 * bytes (Bloom: u32 m, u32 k, u32 history, u32 0; vector: u8 kind, 7 zero
 * bytes, u64 self), payload = the body (vector: with ids).
 */
#include <math.h>
#include <string.h>

#include "clock/parts.h"
#include "type/type.h"
#include "core/bits.h"
#include "core/frame.h"
#include "core/spec.h"

#define TAG_BLOOM 0xB1
#define TAG_DENSE 0xD1
#define TAG_SPARSE 0x51
#define CHECK_SEED 0x636c6f636b776972ULL

static bool is_bloom(const amq_clock *c) { return c->kind == AMQ_CLOCK_BLOOM; }

/* ---- construction ---------------------------------------------------------- */

static amq_status clock_alloc(amq_clock_kind kind, const amq_options *opt,
                              amq_clock **out) {
    amq__mem mem;
    amq__mem_init(&mem, opt);
    amq_clock *c = amq__zalloc(&mem, sizeof *c);
    if (c == NULL)
        return AMQ_ERR_NOMEM;
    c->kind = kind;
    c->mem = mem;
    *out = c;
    return AMQ_OK;
}

static amq_status new_bloom_with(uint32_t m, uint32_t k, uint32_t history,
                                 const amq_hasher *h, const amq_options *opt,
                                 amq_clock **out) {
    if (m == 0 || m > AMQ_CLOCK_MAX_M || k == 0 || k > AMQ_CLOCK_MAX_K ||
        k > m || history > AMQ_CLOCK_MAX_HISTORY)
        return AMQ_ERR_INVALID;
    amq_clock *c;
    AMQ_RETURN_IF_ERR(clock_alloc(AMQ_CLOCK_BLOOM, opt, &c));
    amq_status st = amq__bclock_init(c, m, k, history, h);
    if (st != AMQ_OK) {
        amq_clock_free(c);
        return st;
    }
    *out = c;
    return AMQ_OK;
}

amq_status amq_clock_new_bloom(uint32_t m, uint32_t k, uint32_t history,
                               const amq_options *opt, amq_clock **out) {
    amq_hasher h;
    if (out == NULL)
        return AMQ_ERR_INVALID;
    *out = NULL;
    AMQ_RETURN_IF_ERR(amq__hasher_from_options(opt, AMQ_HASH_XXH3, &h));
    return new_bloom_with(m, k, history, &h, opt, out);
}

amq_status amq_clock_new_vector(amq_clock_kind kind, uint64_t self,
                                const amq_options *opt, amq_clock **out) {
    if (out == NULL)
        return AMQ_ERR_INVALID;
    *out = NULL;
    if (kind != AMQ_CLOCK_VECTOR_DENSE && kind != AMQ_CLOCK_VECTOR_SPARSE)
        return AMQ_ERR_INVALID;
    amq_clock *c;
    AMQ_RETURN_IF_ERR(clock_alloc(kind, opt, &c));
    amq_status st = amq__vclock_init(c, self);
    if (st != AMQ_OK) {
        amq_clock_free(c);
        return st;
    }
    *out = c;
    return AMQ_OK;
}

void amq_clock_free(amq_clock *c) {
    if (c == NULL)
        return;
    if (is_bloom(c))
        amq__bclock_destroy(c);
    else
        amq__vclock_destroy(c);
    amq__mem mem = c->mem;
    amq__free(&mem, c, sizeof *c);
}

static amq_status clone_with(const amq_clock *c, bool history,
                             amq_clock **out) {
    amq_options opt = {.allocator = &c->mem.a};
    amq_status st;
    if (out == NULL)
        return AMQ_ERR_INVALID;
    *out = NULL;
    if (c == NULL)
        return AMQ_ERR_INVALID;
    amq_clock *d = NULL;
    if (is_bloom(c)) {
        st = new_bloom_with(c->b.m, c->b.k, history ? c->b.hcap : 0,
                            &c->b.hasher, &opt, &d);
        if (st == AMQ_OK)
            st = history ? amq__bclock_clone_history(d, c)
                         : amq__bclock_copy_state(d, c);
    } else {
        st = amq_clock_new_vector(c->kind, c->v.self, &opt, &d);
        if (st == AMQ_OK)
            st = amq__vclock_copy_state(d, c);
    }
    if (st != AMQ_OK) {
        amq_clock_free(d);
        return st;
    }
    *out = d;
    return AMQ_OK;
}

amq_status amq_clock_clone(const amq_clock *c, amq_clock **out) {
    return clone_with(c, true, out);
}

amq_status amq_clock_clone_bare(const amq_clock *c, amq_clock **out) {
    return clone_with(c, false, out);
}

/* Same kind and, for Bloom clocks, the same (m, k, hasher). */
static bool compatible(const amq_clock *a, const amq_clock *b) {
    if (a->kind != b->kind)
        return false;
    return !is_bloom(a) || amq__bclock_same_shape(a, b);
}

amq_status amq_clock_assign(amq_clock *dst, const amq_clock *src) {
    if (dst == NULL || src == NULL)
        return AMQ_ERR_INVALID;
    if (!compatible(dst, src))
        return AMQ_ERR_INCOMPATIBLE;
    return is_bloom(dst) ? amq__bclock_copy_state(dst, src)
                         : amq__vclock_copy_state(dst, src);
}

/* ---- operations -------------------------------------------------------------- */

amq_status amq_clock_tick(amq_clock *c, const void *event, size_t len) {
    if (c == NULL || (event == NULL && len > 0))
        return AMQ_ERR_INVALID;
    if (!is_bloom(c))
        return amq__vclock_tick(c);
    return amq__bclock_tick(c, amq_hash64(&c->b.hasher, event, len));
}

amq_status amq_clock_tick_hash(amq_clock *c, uint64_t event_hash) {
    if (c == NULL)
        return AMQ_ERR_INVALID;
    if (!is_bloom(c))
        return AMQ_ERR_UNSUPPORTED;
    return amq__bclock_tick(c, event_hash);
}

amq_status amq_clock_merge(amq_clock *c, const amq_clock *other) {
    if (c == NULL || other == NULL)
        return AMQ_ERR_INVALID;
    if (!compatible(c, other))
        return AMQ_ERR_INCOMPATIBLE;
    return is_bloom(c) ? amq__bclock_merge(c, other)
                       : amq__vclock_merge(c, other);
}

amq_status amq_clock_compare(const amq_clock *a, const amq_clock *b,
                             amq_clock_verdict *out) {
    if (a == NULL || b == NULL || out == NULL)
        return AMQ_ERR_INVALID;
    if (!compatible(a, b))
        return AMQ_ERR_INCOMPATIBLE;
    if (!is_bloom(a))
        return amq__vclock_compare(a, b, out);
    amq__bclock_compare(a, b, out);
    return AMQ_OK;
}

amq_status amq_clock_compare_history(const amq_clock *local,
                                     const amq_clock *remote,
                                     amq_clock_verdict *out) {
    if (local == NULL || remote == NULL || out == NULL)
        return AMQ_ERR_INVALID;
    if (!compatible(local, remote))
        return AMQ_ERR_INCOMPATIBLE;
    if (!is_bloom(local))
        return amq__vclock_compare(local, remote, out);
    amq__bclock_compare_history(local, remote, out);
    return AMQ_OK;
}

amq_status amq_clock_join(amq_clock *c, uint64_t node) {
    if (c == NULL)
        return AMQ_ERR_INVALID;
    return is_bloom(c) ? AMQ_OK : amq__vclock_join(c, node);
}

amq_status amq_clock_leave(amq_clock *c, uint64_t node) {
    if (c == NULL)
        return AMQ_ERR_INVALID;
    return is_bloom(c) ? AMQ_OK : amq__vclock_leave(c, node);
}

/* ---- inspection ---------------------------------------------------------------- */

amq_clock_kind amq_clock_kind_of(const amq_clock *c) { return c->kind; }

size_t amq_clock_size(const amq_clock *c) {
    return is_bloom(c) ? c->b.m : c->v.n;
}

uint32_t amq_clock_k(const amq_clock *c) { return is_bloom(c) ? c->b.k : 0; }

uint64_t amq_clock_get(const amq_clock *c, uint64_t i) {
    return is_bloom(c) ? amq__bclock_get(c, i) : amq__vclock_get(c, i);
}

amq_status amq_clock_entry(const amq_clock *c, size_t i, uint64_t *node,
                           uint64_t *counter) {
    if (c == NULL || node == NULL || counter == NULL)
        return AMQ_ERR_INVALID;
    if (is_bloom(c))
        return AMQ_ERR_UNSUPPORTED;
    if (i >= c->v.n)
        return AMQ_ERR_INVALID;
    *node = c->v.ids[i];
    *counter = c->v.ctr[i];
    return AMQ_OK;
}

uint64_t amq_clock_offset(const amq_clock *c) {
    return is_bloom(c) ? c->b.cur.offset : 0;
}

unsigned amq_clock_cell_bits(const amq_clock *c) {
    return is_bloom(c) ? 8u * c->b.cur.width : 64u;
}

double amq_clock_sum(const amq_clock *c) {
    return is_bloom(c) ? amq__bclock_sum(c) : amq__vclock_sum(c);
}

uint32_t amq_clock_history_len(const amq_clock *c) {
    return is_bloom(c) ? c->b.hlen : 0;
}

amq_status amq_clock_history_explains(const amq_clock *c, uint32_t age,
                                      const void *event, size_t len,
                                      bool *out) {
    if (c == NULL || out == NULL || (event == NULL && len > 0))
        return AMQ_ERR_INVALID;
    if (!is_bloom(c))
        return AMQ_ERR_UNSUPPORTED;
    return amq__bclock_explains(c, age, amq_hash64(&c->b.hasher, event, len),
                                out);
}

const char *amq_order_name(amq_order o) {
    switch (o) {
    case AMQ_ORDER_EQUAL: return "equal";
    case AMQ_ORDER_BEFORE: return "before";
    case AMQ_ORDER_AFTER: return "after";
    case AMQ_ORDER_CONCURRENT: return "concurrent";
    }
    return "unknown";
}

/* ---- wire message ---------------------------------------------------------------- */

static uint32_t wire_check(const uint8_t *p, size_t len) {
    amq_hasher h;
    (void)amq_hasher_init(&h, AMQ_HASH_XXH3, CHECK_SEED, NULL);
    return (uint32_t)amq_hash64(&h, p, len);
}

static size_t wire_head(const amq_clock *c, uint8_t *p) {
    size_t n = 1;
    switch (c->kind) {
    case AMQ_CLOCK_BLOOM:
        p[0] = TAG_BLOOM;
        n += amq__vput(p + n, c->b.m);
        n += amq__vput(p + n, c->b.k);
        amq__put_u32(p + n, c->b.shape_tag);
        return n + 4;
    case AMQ_CLOCK_VECTOR_DENSE:
        p[0] = TAG_DENSE;
        amq__put_u32(p + n, amq__vclock_members_tag(c));
        return n + 4;
    default: p[0] = TAG_SPARSE; return n;
    }
}

static size_t wire_body_size(const amq_clock *c) {
    if (is_bloom(c))
        return amq__bclock_body_size(&c->b.cur, c->b.m);
    return amq__vclock_body_size(c, c->kind == AMQ_CLOCK_VECTOR_SPARSE);
}

size_t amq_clock_encoded_size(const amq_clock *c) {
    uint8_t head[32];
    return wire_head(c, head) + wire_body_size(c) + 4;
}

amq_status amq_clock_encode(const amq_clock *c, uint8_t *buf, size_t cap,
                            size_t *len) {
    if (c == NULL || len == NULL)
        return AMQ_ERR_INVALID;
    size_t need = amq_clock_encoded_size(c);
    *len = need;
    if (buf == NULL || cap < need)
        return AMQ_ERR_BUFFER;
    size_t n = wire_head(c, buf);
    if (is_bloom(c))
        n += amq__bclock_body_write(&c->b.cur, c->b.m, buf + n);
    else
        n += amq__vclock_body_write(c, c->kind == AMQ_CLOCK_VECTOR_SPARSE,
                                    buf + n);
    amq__put_u32(buf + n, wire_check(buf, n));
    return AMQ_OK;
}

amq_status amq_clock_decode(amq_clock *into, const uint8_t *buf, size_t len) {
    if (into == NULL || (buf == NULL && len > 0))
        return AMQ_ERR_INVALID;
    if (len < 5 || wire_check(buf, len - 4) != amq__get_u32(buf + len - 4))
        return AMQ_ERR_CORRUPT;
    if (buf[0] != TAG_BLOOM && buf[0] != TAG_DENSE && buf[0] != TAG_SPARSE)
        return AMQ_ERR_CORRUPT;
    uint8_t head[32];
    size_t hn = wire_head(into, head);
    if (buf[0] != head[0])
        return AMQ_ERR_INCOMPATIBLE;
    if (len - 4 < hn)
        return AMQ_ERR_CORRUPT;
    if (memcmp(buf, head, hn) != 0)
        return AMQ_ERR_INCOMPATIBLE; /* another m, k, hasher or membership */
    const uint8_t *body = buf + hn;
    size_t blen = len - 4 - hn;
    amq_status st =
        is_bloom(into)
            ? amq__bclock_body_read(into, body, blen, NULL)
            : amq__vclock_body_read(into, into->kind == AMQ_CLOCK_VECTOR_SPARSE,
                                    body, blen, NULL);
    return st;
}

/* ---- frame ----------------------------------------------------------------------- */

static size_t frame_body_size(const amq_clock *c) {
    return is_bloom(c) ? amq__bclock_body_size(&c->b.cur, c->b.m)
                       : amq__vclock_body_size(c, true);
}

size_t amq_clock_save_size(const amq_clock *c) {
    size_t off;
    return amq__frame_size(AMQ__CLOCK_PARAMS_LEN, frame_body_size(c), &off);
}

static void write_params(const amq_clock *c, uint8_t *p) {
    memset(p, 0, AMQ__CLOCK_PARAMS_LEN);
    if (is_bloom(c)) {
        amq__put_u32(p, c->b.m);
        amq__put_u32(p + 4, c->b.k);
        amq__put_u32(p + 8, c->b.hcap);
    } else {
        p[0] = (uint8_t)c->kind;
        amq__put_u64(p + 8, c->v.self);
    }
}

amq_status amq_clock_save(const amq_clock *c, uint8_t *buf, size_t cap,
                          size_t *len) {
    if (c == NULL || len == NULL)
        return AMQ_ERR_INVALID;
    size_t total = amq_clock_save_size(c), body = frame_body_size(c);
    *len = total;
    if (total == 0)
        return AMQ_ERR_OVERFLOW;
    if (buf == NULL || cap < total)
        return AMQ_ERR_BUFFER;
    amq_hasher plain;
    (void)amq_hasher_init(&plain, AMQ_HASH_XXH3, 0, NULL);
    uint8_t *params, *payload;
    amq__frame_begin(buf, total,
                     is_bloom(c) ? AMQ__CLOCK_TYPE_BLOOM
                                 : AMQ__CLOCK_TYPE_VECTOR,
                     is_bloom(c) ? &c->b.hasher : &plain, 0,
                     AMQ__CLOCK_PARAMS_LEN, body, &params, &payload);
    write_params(c, params);
    if (is_bloom(c))
        amq__bclock_body_write(&c->b.cur, c->b.m, payload);
    else
        amq__vclock_body_write(c, true, payload);
    amq__frame_seal(buf, total);
    return AMQ_OK;
}

static bool zero_bytes(const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (p[i] != 0)
            return false;
    return true;
}

static amq_status load_bloom(const amq__frame *f, const amq_options *opt,
                             amq_clock **out, amq_diag *diag) {
    uint32_t m = amq__get_u32(f->params), k = amq__get_u32(f->params + 4);
    uint32_t hist = amq__get_u32(f->params + 8);
    if (!zero_bytes(f->params + 12, 4))
        return amq__diag(diag, AMQ_ERR_CORRUPT, 64 + 12, "reserved params");
    if (m == 0 || m > AMQ_CLOCK_MAX_M || k == 0 || k > m ||
        k > AMQ_CLOCK_MAX_K || hist > AMQ_CLOCK_MAX_HISTORY)
        return amq__diag(diag, AMQ_ERR_CORRUPT, 64, "bad m=%u k=%u history=%u",
                         m, k, hist);
    /* Every encoding spends at least one bit per cell. */
    if (f->payload_len < ((size_t)m + 7) / 8)
        return amq__diag(diag, AMQ_ERR_CORRUPT, 0, "payload too short");
    amq_clock *c;
    AMQ_RETURN_IF_ERR(new_bloom_with(m, k, hist, &f->hasher, opt, &c));
    c->b.hlen = 0; /* history starts with the loaded timestamp */
    c->b.head = 0;
    amq_status st = amq__bclock_body_read(c, f->payload, f->payload_len, diag);
    if (st != AMQ_OK) {
        amq_clock_free(c);
        return st;
    }
    *out = c;
    return AMQ_OK;
}

static amq_status load_vector(const amq__frame *f, const amq_options *opt,
                              amq_clock **out, amq_diag *diag) {
    uint8_t kind = f->params[0];
    if ((kind != AMQ_CLOCK_VECTOR_DENSE && kind != AMQ_CLOCK_VECTOR_SPARSE) ||
        !zero_bytes(f->params + 1, 7))
        return amq__diag(diag, AMQ_ERR_CORRUPT, 64, "bad vector clock kind");
    amq_clock *c;
    AMQ_RETURN_IF_ERR(amq_clock_new_vector(
        (amq_clock_kind)kind, amq__get_u64(f->params + 8), opt, &c));
    amq_status st =
        amq__vclock_body_read(c, true, f->payload, f->payload_len, diag);
    if (st != AMQ_OK) {
        amq_clock_free(c);
        return st;
    }
    *out = c;
    return AMQ_OK;
}

amq_status amq_clock_load(const uint8_t *buf, size_t len,
                          const amq_options *opt, amq_clock **out,
                          amq_diag *diag) {
    amq__frame f;
    if (out == NULL || (buf == NULL && len > 0))
        return AMQ_ERR_INVALID;
    *out = NULL;
    AMQ_RETURN_IF_ERR(amq__frame_parse(buf, len, 0, &f, diag));
    if (f.type_id != AMQ__CLOCK_TYPE_BLOOM &&
        f.type_id != AMQ__CLOCK_TYPE_VECTOR)
        return amq__frame_not(f.type_id, "a clock", diag);
    if (f.params_len != AMQ__CLOCK_PARAMS_LEN)
        return amq__diag(diag, AMQ_ERR_CORRUPT, 64, "params are %zu bytes",
                         f.params_len);
    amq_options o = {.allocator = opt != NULL ? opt->allocator : NULL};
    return f.type_id == AMQ__CLOCK_TYPE_BLOOM ? load_bloom(&f, &o, out, diag)
                                              : load_vector(&f, &o, out, diag);
}
