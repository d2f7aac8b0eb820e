/*
 * frame.h — the one serialization frame every amq structure is saved in.
 * The byte layout is specified in docs/format.md; this is its only codec.
 *
 *   +-------------------------- 64-byte header --------------------------+
 *   | magic 89 'A' 'M' 'Q' 0D 0A 1A 0A | major u16 | minor u16 | type u16 |
 *   | hash kind u8 | rsv u8 | incompat u32 | compat u32 | hash seed u64   |
 *   | hash key [16] | params len u32 | rsv u32 | payload len u64          |
 *   +--------------------------------------------------------------------+
 *   | params (type-specific, little-endian) | zero pad to 64             |
 *   | payload (the structure's table)        | zero pad to 8              |
 *   | XXH64 (seed 0) of every byte before it                   u64       |
 *   +--------------------------------------------------------------------+
 *
 * The payload starts at a multiple of 64 bytes from the frame's start, so a
 * frame in a page-aligned (mmap) buffer can be queried in place.
 */
#ifndef AMQ_SRC_CORE_FRAME_H
#define AMQ_SRC_CORE_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "amq/core.h"

#define AMQ__FRAME_MAJOR 1
#define AMQ__FRAME_MINOR 0
#define AMQ__FRAME_HEADER 64
#define AMQ__FRAME_PAYLOAD_ALIGN 64
/* incompat bit 0 (filters only): the filter is an intersection, and its
 * generic parameter block carries a third field, the certified bound for
 * a key outside the intersection (docs/format.md). A reader that does not
 * know a bit refuses the frame; each parser names the bits it knows. */
#define AMQ__FRAME_INCOMPAT_INTERSECTION 0x1u
/* compat bit 0: the hash key is a secret (SipHash): treat the file as one. */
#define AMQ__FRAME_COMPAT_SECRET_KEY 0x1u
#define AMQ__FRAME_COMPAT_KNOWN 0x1u
/* Byte offsets of the header fields (the picture above). */
enum {
    AMQ__FRAME_OFF_MAGIC = 0,
    AMQ__FRAME_OFF_MAJOR = 8,
    AMQ__FRAME_OFF_MINOR = 10,
    AMQ__FRAME_OFF_TYPE = 12,
    AMQ__FRAME_OFF_HASH_KIND = 14,
    AMQ__FRAME_OFF_RSV1 = 15,
    AMQ__FRAME_OFF_INCOMPAT = 16,
    AMQ__FRAME_OFF_COMPAT = 20,
    AMQ__FRAME_OFF_SEED = 24,
    AMQ__FRAME_OFF_KEY = 32,
    AMQ__FRAME_OFF_PARAMS_LEN = 48,
    AMQ__FRAME_OFF_RSV2 = 52,
    AMQ__FRAME_OFF_PAYLOAD_LEN = 56,
    AMQ__FRAME_OFF_PARAMS = 64
};
/* A filter's parameter block opens with a generic part (capacity u64,
 * target fpr f64) and goes on with the type's own fields, which therefore
 * start at frame offset AMQ__FRAME_OFF_TYPE_PARAMS. */
#define AMQ__FRAME_GENERIC_PARAMS 16
#define AMQ__FRAME_OFF_CAPACITY AMQ__FRAME_OFF_PARAMS
#define AMQ__FRAME_OFF_TARGET_FPR (AMQ__FRAME_OFF_PARAMS + 8)
#define AMQ__FRAME_OFF_TYPE_PARAMS                                             \
    (AMQ__FRAME_OFF_PARAMS + AMQ__FRAME_GENERIC_PARAMS)

/* Bound on params: a type's parameters are a handful of numbers. */
#define AMQ__FRAME_PARAMS_MAX 4096u

typedef struct amq__frame {
    uint16_t type_id;
    uint16_t minor;
    uint32_t incompat;
    uint32_t compat;
    amq_hasher hasher;
    const uint8_t *params;
    size_t params_len;
    const uint8_t *payload;
    size_t payload_len;
} amq__frame;

/* Total frame size for the given parts; 0 on overflow. Offsets out. */
size_t amq__frame_size(size_t params_len, size_t payload_len,
                       size_t *payload_off);

/* Write header at buf (frame_size bytes available) and return pointers to
 * where the caller writes params and payload; padding is zeroed. incompat:
 * the frame's incompatible feature bits. */
void amq__frame_begin(uint8_t *buf, size_t total, uint16_t type_id,
                      const amq_hasher *hasher, uint32_t incompat,
                      size_t params_len, size_t payload_len, uint8_t **params,
                      uint8_t **payload);
/* Compute and store the checksum once params and payload are written. */
void amq__frame_seal(uint8_t *buf, size_t total);

/* Validate every header field, the padding and the checksum of the frame in
 * buf[0..len). On success fill f (pointers into buf). An incompatible
 * feature bit outside `known` is AMQ_ERR_VERSION. */
amq_status amq__frame_parse(const uint8_t *buf, size_t len, uint32_t known,
                            amq__frame *f, amq_diag *diag);

#endif
