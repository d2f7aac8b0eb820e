/*
 * frame_io.h — one structure object in and out of the serialization frame,
 * shared by amq_filter (filter.c) and the typed sketches' own save/load
 * (sketch/frame_io.c), so both write the same bytes and refuse the same
 * damage.
 *
 *   [header | capacity u64 | target fpr f64 | (outside bound f64) |
 *    type params | payload | xxh64]
 *
 * The generic fields are the amq_filter's target, and for an intersection
 * (incompatible feature bit 0) the bound for keys outside it; a typed
 * sketch writes 0, 0.
 */
#ifndef AMQ_SRC_TYPE_FRAME_IO_H
#define AMQ_SRC_TYPE_FRAME_IO_H

#include "core/file_io.h"
#include "core/frame.h"
#include "type/type.h"

/* The generic fields of a filter's frame. */
typedef struct amq__generic {
    uint64_t capacity;    /* 0: explicit parameters                     */
    double target_fpr;    /* 0: none                                    */
    double outside_bound; /* > 0 only for an intersection (<= 1)        */
} amq__generic;

/* Bytes the frame of o (type t) takes: 0 on overflow. */
size_t amq__obj_frame_size(const amq__type *t, const amq__obj *o,
                           const amq__generic *g);

/* Write o's frame into buf[cap]: AMQ_ERR_BUFFER when cap is short,
 * AMQ_ERR_OVERFLOW when the frame cannot be represented. *written (may be
 * NULL) is the frame's length, 0 on failure. */
amq_status amq__obj_save(const amq__type *t, const amq__obj *o,
                         const amq_hasher *h, const amq__generic *g, void *buf,
                         size_t cap, size_t *written);

/* Bytes before the payload at most: header, parameters, padding. */
#define AMQ__FRAME_HEAD_MAX                                                    \
    (AMQ__FRAME_HEADER + AMQ__FRAME_PARAMS_MAX + AMQ__FRAME_PAYLOAD_ALIGN)

/* o's frame as the pieces of a file (core/file_io.h): out[0] the header,
 * parameters and padding, written into head; out[1] the payload, which is
 * o's own table; out[2] the padding after it, from tail (8 zero bytes).
 * The checksum follows them. false when the type writes its payload
 * itself (no table to point at) or the frame cannot be represented: use
 * amq__obj_save then. */
bool amq__obj_pieces(const amq__type *t, const amq__obj *o, const amq_hasher *h,
                     const amq__generic *g, uint8_t head[AMQ__FRAME_HEAD_MAX],
                     const uint8_t tail[8], amq__piece out[3]);

/* amq__obj_pieces of a filter's object (filter.c). */
bool amq__filter_pieces(const amq_filter *f, uint8_t head[AMQ__FRAME_HEAD_MAX],
                        const uint8_t tail[8], amq__piece out[3]);

/* What a frame says besides its object. */
typedef struct amq__opened {
    const amq__type *type;
    amq_hasher hasher;
    amq__generic generic;
} amq__opened;

/* Check the frame in buf[len] and let its type load the object (a view
 * over buf when view is set; buf then 8-byte aligned). want, if not NULL,
 * is the only type accepted: another is AMQ_ERR_INCOMPATIBLE. The type
 * loads with opt (may be NULL) whose hash fields are the frame's. Every
 * refusal comes before an allocation and fills diag. */
amq_status amq__obj_open(const void *buf, size_t len, const amq__type *want,
                         const amq_options *opt, bool view, amq__obj **out,
                         amq__opened *info, amq_diag *diag);

#endif
