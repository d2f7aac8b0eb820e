/*
 * frame.c — codec of the serialization frame (layout in frame.h and
 * docs/format.md).
 *
 * Parsing order matters: the cheap structural checks (length, magic, version,
 * flags, reserved fields, declared lengths against the real length) come
 * first so hostile input is refused before the checksum pass touches it, and
 * nothing is allocated here at all — the type's loader allocates only after
 * the whole frame has proven consistent.
 */
#include "core/frame.h"

#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "core/bits.h"
#include "core/mem.h"
#include "core/diag.h"

static const uint8_t magic[8] = {0x89, 'A', 'M', 'Q', 0x0D, 0x0A, 0x1A, 0x0A};

static size_t round_up(size_t x, size_t a, bool *ok) {
    size_t r;
    if (!amq__add(x, a - 1, &r)) {
        *ok = false;
        return 0;
    }
    return r & ~(a - 1);
}

size_t amq__frame_size(size_t params_len, size_t payload_len,
                       size_t *payload_off) {
    bool ok = true;
    size_t off = 0, end = 0, total = 0;
    if (!amq__add(AMQ__FRAME_HEADER, params_len, &off))
        return 0;
    off = round_up(off, AMQ__FRAME_PAYLOAD_ALIGN, &ok);
    if (ok && amq__add(off, payload_len, &end))
        end = round_up(end, 8, &ok);
    else
        ok = false;
    if (!ok || !amq__add(end, 8, &total))
        return 0;
    if (payload_off != NULL)
        *payload_off = off;
    return total;
}

void amq__frame_begin(uint8_t *buf, size_t total, uint16_t type_id,
                      const amq_hasher *hasher, uint32_t incompat,
                      size_t params_len, size_t payload_len, uint8_t **params,
                      uint8_t **payload) {
    size_t payload_off = 0;
    (void)amq__frame_size(params_len, payload_len, &payload_off);
    memset(buf, 0, total);
    memcpy(buf, magic, sizeof magic);
    amq__put_u16(buf + AMQ__FRAME_OFF_MAJOR, AMQ__FRAME_MAJOR);
    amq__put_u16(buf + AMQ__FRAME_OFF_MINOR, AMQ__FRAME_MINOR);
    amq__put_u16(buf + AMQ__FRAME_OFF_TYPE, type_id);
    buf[AMQ__FRAME_OFF_HASH_KIND] = (uint8_t)hasher->kind;
    amq__put_u32(buf + AMQ__FRAME_OFF_INCOMPAT, incompat);
    amq__put_u32(buf + AMQ__FRAME_OFF_COMPAT, hasher->kind == AMQ_HASH_SIPHASH
                                                  ? AMQ__FRAME_COMPAT_SECRET_KEY
                                                  : 0);
    amq__put_u64(buf + AMQ__FRAME_OFF_SEED,
                 hasher->kind == AMQ_HASH_SIPHASH ? 0 : hasher->seed);
    if (hasher->kind == AMQ_HASH_SIPHASH)
        memcpy(buf + AMQ__FRAME_OFF_KEY, hasher->key, AMQ_HASH_KEY_BYTES);
    amq__put_u32(buf + AMQ__FRAME_OFF_PARAMS_LEN, (uint32_t)params_len);
    amq__put_u64(buf + AMQ__FRAME_OFF_PAYLOAD_LEN, (uint64_t)payload_len);
    *params = buf + AMQ__FRAME_HEADER;
    *payload = buf + payload_off;
}

void amq__frame_seal(uint8_t *buf, size_t total) {
    amq__put_u64(buf + total - 8, XXH64(buf, total - 8, 0));
}

static bool all_zero(const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (p[i] != 0)
            return false;
    return true;
}

static amq_status parse_hasher(const uint8_t *buf, uint32_t compat,
                               amq_hasher *h, amq_diag *diag) {
    uint8_t kind = buf[AMQ__FRAME_OFF_HASH_KIND];
    uint64_t seed = amq__get_u64(buf + AMQ__FRAME_OFF_SEED);
    bool keyed = kind == AMQ_HASH_SIPHASH;
    if (kind == AMQ_HASH_DEFAULT || kind >= AMQ_HASH_KIND_COUNT_)
        return amq__diag(diag, AMQ_ERR_CORRUPT, AMQ__FRAME_OFF_HASH_KIND,
                         "unknown hash kind %u", kind);
    if (keyed != ((compat & AMQ__FRAME_COMPAT_SECRET_KEY) != 0))
        return amq__diag(diag, AMQ_ERR_CORRUPT, AMQ__FRAME_OFF_COMPAT,
                         "secret-key flag disagrees with the hash kind");
    if (keyed && seed != 0)
        return amq__diag(diag, AMQ_ERR_CORRUPT, AMQ__FRAME_OFF_SEED,
                         "keyed hash must have a zero seed field");
    if (!keyed && !all_zero(buf + AMQ__FRAME_OFF_KEY, AMQ_HASH_KEY_BYTES))
        return amq__diag(diag, AMQ_ERR_CORRUPT, AMQ__FRAME_OFF_KEY,
                         "hash key field must be zero for unkeyed hashes");
    return amq_hasher_init(h, (amq_hash_kind)kind, seed,
                           keyed ? buf + AMQ__FRAME_OFF_KEY : NULL);
}

static amq_status check_fixed(const uint8_t *buf, size_t len, uint32_t known,
                              amq__frame *f, amq_diag *diag) {
    uint16_t major;
    uint32_t incompat;
    if (len < AMQ__FRAME_HEADER + 8)
        return amq__diag(diag, AMQ_ERR_CORRUPT, len,
                         "%zu bytes is shorter than the smallest frame", len);
    if (memcmp(buf, magic, sizeof magic) != 0)
        return amq__diag(diag, AMQ_ERR_CORRUPT, 0, "not an amq frame (magic)");
    major = amq__get_u16(buf + AMQ__FRAME_OFF_MAJOR);
    if (major != AMQ__FRAME_MAJOR)
        return amq__diag(diag, AMQ_ERR_VERSION, AMQ__FRAME_OFF_MAJOR,
                         "format major version %u (this library reads %u)",
                         major, AMQ__FRAME_MAJOR);
    incompat = amq__get_u32(buf + AMQ__FRAME_OFF_INCOMPAT);
    if ((incompat & ~known) != 0)
        return amq__diag(diag, AMQ_ERR_VERSION, AMQ__FRAME_OFF_INCOMPAT,
                         "unknown incompatible feature flags 0x%x", incompat);
    f->incompat = incompat;
    f->compat = amq__get_u32(buf + AMQ__FRAME_OFF_COMPAT);
    if (buf[AMQ__FRAME_OFF_RSV1] != 0 ||
        amq__get_u32(buf + AMQ__FRAME_OFF_RSV2) != 0)
        return amq__diag(diag, AMQ_ERR_CORRUPT, AMQ__FRAME_OFF_RSV1,
                         "reserved header field is not zero");
    return AMQ_OK;
}

/* Check that the declared lengths describe exactly len bytes, and that the
 * padding between the parts is zero. */
static amq_status check_lengths(const uint8_t *buf, size_t len, amq__frame *f,
                                amq_diag *diag) {
    uint32_t plen = amq__get_u32(buf + AMQ__FRAME_OFF_PARAMS_LEN);
    uint64_t llen = amq__get_u64(buf + AMQ__FRAME_OFF_PAYLOAD_LEN);
    size_t payload_off = 0, total, pad_end;
    if (plen > AMQ__FRAME_PARAMS_MAX)
        return amq__diag(diag, AMQ_ERR_CORRUPT, AMQ__FRAME_OFF_PARAMS_LEN,
                         "parameter block of %u bytes is implausible", plen);
    if (llen > (uint64_t)len)
        return amq__diag(diag, AMQ_ERR_CORRUPT, AMQ__FRAME_OFF_PAYLOAD_LEN,
                         "payload length %llu exceeds the %zu bytes given",
                         (unsigned long long)llen, len);
    total = amq__frame_size(plen, (size_t)llen, &payload_off);
    if (total != len)
        return amq__diag(diag, AMQ_ERR_CORRUPT, AMQ__FRAME_OFF_PAYLOAD_LEN,
                         "declared lengths give a %zu-byte frame, got %zu",
                         total, len);
    if (!all_zero(buf + AMQ__FRAME_HEADER + plen,
                  payload_off - AMQ__FRAME_HEADER - plen))
        return amq__diag(diag, AMQ_ERR_CORRUPT, AMQ__FRAME_HEADER + plen,
                         "padding after parameters is not zero");
    pad_end = len - 8;
    if (!all_zero(buf + payload_off + llen, pad_end - payload_off - llen))
        return amq__diag(diag, AMQ_ERR_CORRUPT, payload_off + llen,
                         "padding after payload is not zero");
    f->params = buf + AMQ__FRAME_HEADER;
    f->params_len = plen;
    f->payload = buf + payload_off;
    f->payload_len = (size_t)llen;
    return AMQ_OK;
}

amq_status amq__frame_parse(const uint8_t *buf, size_t len, uint32_t known,
                            amq__frame *f, amq_diag *diag) {
    if (buf == NULL && len != 0)
        return amq__diag(diag, AMQ_ERR_INVALID, 0, "NULL buffer");
    memset(f, 0, sizeof *f);
    AMQ_RETURN_IF_ERR(check_fixed(buf, len, known, f, diag));
    AMQ_RETURN_IF_ERR(check_lengths(buf, len, f, diag));
    if (XXH64(buf, len - 8, 0) != amq__get_u64(buf + len - 8))
        return amq__diag(diag, AMQ_ERR_CHECKSUM, len - 8,
                         "XXH64 checksum does not match the contents");
    /* Unknown compatible feature bits are ignorable by definition. */
    AMQ_RETURN_IF_ERR(parse_hasher(buf, f->compat, &f->hasher, diag));
    f->type_id = amq__get_u16(buf + AMQ__FRAME_OFF_TYPE);
    f->minor = amq__get_u16(buf + AMQ__FRAME_OFF_MINOR);
    return AMQ_OK;
}
