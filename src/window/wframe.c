/*
 * wframe.c — a sliding-window filter in the common frame (docs/format.md,
 * type 303).
 *
 *   header (64)  the common frame header; its hasher is the window's
 *   params       version u32 (1), flags u32 (bit 0 time clock, bit 1
 *                seal=qf), span u64, capacity u64, fpr f64, generations
 *                u32, r u32, slots u64, length u64, gcap u64, ribbon
 *                target f64, now u64, pieces u32, reserved u32 and u64
 *                (0): 96 bytes
 *   payload      32 bytes per piece, oldest first: gen u64, items u64,
 *                distinct u64, kind u32 (0 quotient filter, 1 Ribbon
 *                filter), reserved u32 (0); then each piece's filter:
 *                u64 length + a complete amq filter frame, padded to 8
 *                (the records are in the payload, not the parameters, so
 *                that up to AMQ_WINDOW_MAX_PIECES of them fit)
 *   checksum     XXH64 of everything before it
 *
 * Loading recomputes the shape (length, gcap, slots, r, Ribbon target)
 * from span, capacity, fpr, generations, clock and seal and refuses a
 * frame whose stored shape differs; it checks the pieces' order (the
 * generations never decrease, none is past the clock, the last is an open
 * quotient filter), each nested frame through amq_filter_load, its type
 * and shape against the piece's kind and the window's, its counts against
 * the piece's, and its hasher against the frame's.
 */
#include <math.h>
#include <string.h>

#include "amq/quotient.h"
#include "core/bits.h"
#include "core/diag.h"
#include "core/frame.h"
#include "type/ids.h"
#include "type/type.h"
#include "window/window_impl.h"

#define VERSION 1
#define FIXED 96u
#define PIECE 32u
#define FLAG_TIME 0x1u
#define FLAG_SEAL_QF 0x2u
#define KIND_QF 0
#define KIND_RIBBON 1

static size_t pad8(size_t n) { return (n + 7) & ~(size_t)7; }

static size_t payload_size(const amq_window *w) {
    size_t n = PIECE * (size_t)w->npc;
    for (unsigned i = 0; i < w->npc; i++)
        n += 8 + pad8(amq_filter_serialized_size(w->pc[i].f));
    return n;
}

size_t amq_window_serialized_size(const amq_window *w) {
    if (w == NULL)
        return 0;
    return amq__frame_size(FIXED, payload_size(w), NULL);
}

amq_status amq_window_save(const amq_window *w, void *buf, size_t cap,
                           size_t *written) {
    if (written != NULL)
        *written = 0;
    if (w == NULL || buf == NULL)
        return AMQ_ERR_INVALID;
    size_t plen = FIXED, ylen = payload_size(w);
    size_t total = amq__frame_size(plen, ylen, NULL);
    if (total == 0)
        return AMQ_ERR_OVERFLOW;
    if (cap < total)
        return AMQ_ERR_BUFFER;
    uint8_t *p, *y;
    amq__frame_begin(buf, total, AMQ__ID_window, &w->hasher, 0, plen, ylen, &p,
                     &y);
    uint32_t flags = (w->p.clock == AMQ_WINDOW_TIME ? FLAG_TIME : 0) |
                     (w->p.seal == AMQ_WINDOW_SEAL_QF ? FLAG_SEAL_QF : 0);
    amq__put_u32(p, VERSION);
    amq__put_u32(p + 4, flags);
    amq__put_u64(p + 8, w->p.span);
    amq__put_u64(p + 16, w->p.capacity);
    amq__put_f64(p + 24, w->p.fpr);
    amq__put_u32(p + 32, w->p.generations);
    amq__put_u32(p + 36, w->rbits);
    amq__put_u64(p + 40, w->slots);
    amq__put_u64(p + 48, w->length);
    amq__put_u64(p + 56, w->gcap);
    amq__put_f64(p + 64, w->eps_ribbon);
    amq__put_u64(p + 72, w->now);
    amq__put_u32(p + 80, w->npc);
    amq__put_u32(p + 84, 0);
    amq__put_u64(p + 88, 0);
    for (unsigned i = 0; i < w->npc; i++) {
        uint8_t *q = y + PIECE * i;
        const amq__wpiece *pc = &w->pc[i];
        amq__put_u64(q, pc->gen);
        amq__put_u64(q + 8, pc->items);
        amq__put_u64(q + 16, pc->distinct);
        amq__put_u32(q + 24, pc->ribbon ? KIND_RIBBON : KIND_QF);
        amq__put_u32(q + 28, 0);
    }
    y += PIECE * (size_t)w->npc;
    for (unsigned i = 0; i < w->npc; i++) {
        size_t n = amq_filter_serialized_size(w->pc[i].f), got = 0;
        amq__put_u64(y, n);
        amq_status st = amq_filter_save(w->pc[i].f, y + 8, n, &got);
        if (st != AMQ_OK || got != n)
            return st != AMQ_OK ? st : AMQ_ERR_CORRUPT;
        memset(y + 8 + n, 0, pad8(n) - n);
        y += 8 + pad8(n);
    }
    amq__frame_seal(buf, total);
    if (written != NULL)
        *written = total;
    return AMQ_OK;
}

/* ---- loading ------------------------------------------------------------------- */

static bool same_hasher(const amq_hasher *a, const amq_hasher *b) {
    return a->kind == b->kind && a->seed == b->seed &&
           memcmp(a->key, b->key, sizeof a->key) == 0;
}

/* The nested filter of piece i at payload offset *at; checked against the
 * piece's record. */
static amq_status load_piece(amq_window *w, unsigned i, bool open,
                             const amq__frame *fr, size_t *at, amq_diag *diag) {
    amq__wpiece *pc = &w->pc[i];
    size_t off = (size_t)(fr->payload - (const uint8_t *)fr->params) +
                 AMQ__FRAME_OFF_PARAMS + *at;
    if (fr->payload_len - *at < 8)
        return amq__diag(diag, AMQ_ERR_CORRUPT, off,
                         "piece %u: its filter is missing", i);
    uint64_t n = amq__get_u64(fr->payload + *at);
    if (n > fr->payload_len - *at - 8 ||
        pad8((size_t)n) > fr->payload_len - *at - 8)
        return amq__diag(diag, AMQ_ERR_CORRUPT, off,
                         "piece %u: filter length %llu past the payload", i,
                         (unsigned long long)n);
    amq_options o = amq__window_options(w);
    amq_diag inner = {0};
    amq_status st =
        amq_filter_load(fr->payload + *at + 8, (size_t)n, &o, &pc->f, &inner);
    if (st != AMQ_OK)
        return amq__diag(diag, st, off + 8 + inner.offset, "piece %u: %s", i,
                         inner.message);
    for (size_t k = (size_t)n; k < pad8((size_t)n); k++)
        if (fr->payload[*at + 8 + k] != 0)
            return amq__diag(diag, AMQ_ERR_CORRUPT, off, "piece %u: padding",
                             i);
    *at += 8 + pad8((size_t)n);
    const char *type = amq_filter_info(pc->f)->name;
    const amq_qf *q = amq_qf_of(pc->f);
    if (pc->ribbon) {
        if (strcmp(type, "ribbon") != 0 ||
            amq_filter_items(pc->f) != pc->distinct)
            return amq__diag(diag, AMQ_ERR_CORRUPT, off,
                             "piece %u: not a Ribbon filter of %llu keys", i,
                             (unsigned long long)pc->distinct);
        return AMQ_OK;
    }
    if (q == NULL || strcmp(type, "qf") != 0 || amq_qf_slots(q) != w->slots ||
        amq_qf_rbits(q) != w->rbits)
        return amq__diag(diag, AMQ_ERR_CORRUPT, off,
                         "piece %u: not a quotient filter of the window's "
                         "shape",
                         i);
    if (!same_hasher(amq_filter_hasher(pc->f), &w->hasher))
        return amq__diag(diag, AMQ_ERR_CORRUPT, off,
                         "piece %u: another hasher than the window's", i);
    if (amq_filter_items(pc->f) != pc->items ||
        (!open && amq_qf_distinct(q) != pc->distinct) ||
        (open && pc->distinct != 0))
        return amq__diag(diag, AMQ_ERR_CORRUPT, off,
                         "piece %u: counts differ from its filter's", i);
    return AMQ_OK;
}

static amq_status read_fixed(const amq__frame *fr, amq_window_params *p,
                             uint32_t *npc, amq_diag *diag) {
    const uint8_t *b = fr->params;
    if (fr->params_len != FIXED)
        return amq__diag(diag, AMQ_ERR_CORRUPT, AMQ__FRAME_OFF_PARAMS,
                         "params are %zu bytes", fr->params_len);
    uint32_t version = amq__get_u32(b), flags = amq__get_u32(b + 4);
    if (version != VERSION)
        return amq__diag(diag, AMQ_ERR_VERSION, AMQ__FRAME_OFF_PARAMS,
                         "window parameters version %u", version);
    if (flags & ~(FLAG_TIME | FLAG_SEAL_QF))
        return amq__diag(diag, AMQ_ERR_VERSION, AMQ__FRAME_OFF_PARAMS + 4,
                         "unknown flags 0x%x", flags);
    if (amq__get_u32(b + 84) != 0 || amq__get_u64(b + 88) != 0)
        return amq__diag(diag, AMQ_ERR_CORRUPT, AMQ__FRAME_OFF_PARAMS + 84,
                         "reserved fields are not zero");
    memset(p, 0, sizeof *p);
    p->clock = (flags & FLAG_TIME) ? AMQ_WINDOW_TIME : AMQ_WINDOW_ITEMS;
    p->seal =
        (flags & FLAG_SEAL_QF) ? AMQ_WINDOW_SEAL_QF : AMQ_WINDOW_SEAL_RIBBON;
    p->span = amq__get_u64(b + 8);
    p->capacity = amq__get_u64(b + 16);
    p->fpr = amq__get_f64(b + 24);
    p->generations = amq__get_u32(b + 32);
    *npc = amq__get_u32(b + 80);
    if (p->span == 0 || p->capacity == 0 || p->generations == 0 ||
        !(p->fpr > 0 && p->fpr <= 0.5))
        return amq__diag(diag, AMQ_ERR_CORRUPT, AMQ__FRAME_OFF_PARAMS + 8,
                         "span, capacity, fpr or generations out of range");
    if (*npc == 0 || *npc > AMQ_WINDOW_MAX_PIECES ||
        fr->payload_len < PIECE * (size_t)*npc)
        return amq__diag(diag, AMQ_ERR_CORRUPT, AMQ__FRAME_OFF_PARAMS + 80,
                         "%u pieces in %zu bytes of payload", *npc,
                         fr->payload_len);
    return AMQ_OK;
}

amq_status amq_window_load(const void *buf, size_t len, const amq_options *opt,
                           amq_window **out, amq_diag *diag) {
    if (out == NULL)
        return AMQ_ERR_INVALID;
    *out = NULL;
    if (buf == NULL)
        return AMQ_ERR_INVALID;
    amq__frame fr;
    AMQ_RETURN_IF_ERR(amq__frame_parse(buf, len, 0, &fr, diag));
    if (fr.type_id != AMQ__ID_window)
        return amq__frame_not(fr.type_id, "a sliding-window filter", diag);
    amq_window_params p;
    uint32_t npc = 0;
    AMQ_RETURN_IF_ERR(read_fixed(&fr, &p, &npc, diag));
    const uint8_t *b = fr.params;
    amq_window sh;
    amq_status st = amq__window_shape(&p, &sh, NULL);
    if (st != AMQ_OK || amq__get_u32(b + 36) != sh.rbits ||
        amq__get_u64(b + 40) != sh.slots || amq__get_u64(b + 48) != sh.length ||
        amq__get_u64(b + 56) != sh.gcap ||
        amq__get_f64(b + 64) != sh.eps_ribbon)
        return amq__diag(diag, AMQ_ERR_CORRUPT, AMQ__FRAME_OFF_PARAMS + 36,
                         "the window's shape does not follow from its "
                         "parameters");
    const uint64_t length = sh.length, gcap = sh.gcap;
    uint64_t now = amq__get_u64(b + 72), cur = now / length;
    const uint8_t *rec = fr.payload;
    size_t rec_off = (size_t)(fr.payload - (const uint8_t *)buf);
    for (uint32_t i = 0; i < npc; i++) {
        const uint8_t *q = rec + PIECE * i;
        size_t at = rec_off + PIECE * i;
        uint64_t gen = amq__get_u64(q), items = amq__get_u64(q + 8);
        uint32_t kind = amq__get_u32(q + 24);
        bool open = i + 1 == npc;
        if (gen > cur || (i > 0 && gen < amq__get_u64(q - PIECE)))
            return amq__diag(diag, AMQ_ERR_CORRUPT, at,
                             "piece %u: generation %llu out of order", i,
                             (unsigned long long)gen);
        if (amq__get_u32(q + 28) != 0 || kind > KIND_RIBBON ||
            (open && kind != KIND_QF) ||
            (kind == KIND_RIBBON && sh.p.seal == AMQ_WINDOW_SEAL_QF))
            return amq__diag(diag, AMQ_ERR_CORRUPT, at + 24,
                             "piece %u: kind %u", i, kind);
        if (items > gcap || amq__get_u64(q + 16) > items ||
            (!open && items == 0))
            return amq__diag(diag, AMQ_ERR_CORRUPT, at + 8,
                             "piece %u: %llu items", i,
                             (unsigned long long)items);
    }
    amq_window *w;
    unsigned room = npc > p.generations + 2 ? npc : p.generations + 2;
    AMQ_RETURN_IF_ERR(amq__window_alloc(&sh, &fr.hasher, opt, room, &w));
    w->now = now;
    size_t at = PIECE * (size_t)npc;
    for (uint32_t i = 0; i < npc; i++) {
        const uint8_t *q = rec + PIECE * i;
        amq__wpiece *pc = &w->pc[i];
        pc->gen = amq__get_u64(q);
        pc->items = amq__get_u64(q + 8);
        pc->distinct = amq__get_u64(q + 16);
        pc->ribbon = amq__get_u32(q + 24) == KIND_RIBBON;
        w->npc = i + 1;
        st = load_piece(w, i, i + 1 == npc, &fr, &at, diag);
        if (st != AMQ_OK) {
            amq_window_free(w);
            return st;
        }
    }
    if (at != fr.payload_len) {
        amq_window_free(w);
        return amq__diag(diag, AMQ_ERR_CORRUPT, AMQ__FRAME_OFF_PARAMS,
                         "%zu payload bytes after the last piece",
                         fr.payload_len - at);
    }
    *out = w;
    return AMQ_OK;
}
