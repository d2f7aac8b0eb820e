/*
 * test_params.c — every parameter field of every type's frame, corrupted
 * one at a time, is refused with a diagnostic that points at that field.
 *
 * A frame's parameter block starts at byte 64 with the generic part
 * (capacity u64, target fpr f64) and goes on at byte 80 with the type's
 * own fields (docs/format.md). The table below lists, per type, each
 * field's offset in the type's block, its width, a value the loader must
 * refuse there, and where the diagnostic must point: the field itself, or
 * (for a check relating two fields, e.g. a count that must match the
 * payload) the field the check is about. Each case edits a valid frame,
 * recomputes the checksum, loads it, and requires AMQ_ERR_CORRUPT at
 * exactly that byte; the unedited frame still loads.
 */
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/bits.h"
#include "core/frame.h"

#define TYPE_PARAMS AMQ__FRAME_OFF_TYPE_PARAMS

/* Values written into a field (a double field: the f64 member). */
enum val {
    V_ZERO,  /* 0                          */
    V_ONE,   /* 1                          */
    V_HUGE,  /* all ones                   */
    V_PLUS1, /* the field's value + 1      */
};

typedef struct field_case {
    const char *name;
    unsigned off, width; /* in the type's block; width 1, 4 or 8 bytes  */
    int val;             /* V_ZERO, V_ONE, V_HUGE, V_PLUS1, or a small
                            constant >= 16 stored as val - 16             */
    double f64;          /* width 8 doubles: the value (val ignored)     */
    int at;              /* -1: the field itself; else the offset (in the
                            type's block) of the field blamed            */
} field_case;

#define CONST(x) (16 + (x))
#define SAME -1

typedef struct type_cases {
    const char *spec; /* built from 500 keys at 1% */
    field_case f[16];
} type_cases;

/* clang-format off */
static const type_cases cases[] = {
    {"bloom", {{"m", 0, 8, V_ZERO, 0, SAME}, {"k", 8, 4, V_ZERO, 0, SAME},
               {"k", 8, 4, CONST(65), 0, SAME},
               {"reserved", 12, 4, V_ONE, 0, SAME}}},
    {"blocked", {{"blocks", 0, 8, V_ZERO, 0, SAME},
                 {"k", 8, 4, CONST(17), 0, SAME},
                 {"layout", 12, 4, CONST(2), 0, SAME}}},
    {"sbbf", {{"blocks", 0, 8, V_PLUS1, 0, SAME},
              {"reserved", 16, 8, V_ONE, 0, SAME}}},
    {"counting", {{"m", 0, 8, V_PLUS1, 0, SAME}, {"k", 8, 4, V_ZERO, 0, SAME},
                  {"k", 8, 4, CONST(17), 0, SAME},
                  {"width", 12, 4, CONST(5), 0, SAME},
                  {"layout", 24, 4, CONST(0), 0, SAME},
                  {"layout", 24, 4, CONST(2), 0, SAME}}},
    {"counting:layout=classic", {{"m", 0, 8, V_PLUS1, 0, SAME},
                                 {"k", 8, 4, CONST(33), 0, SAME},
                                 {"width", 12, 4, CONST(5), 0, SAME}}},
    {"dleft", {{"d", 0, 4, V_ONE, 0, SAME}, {"cells", 4, 4, V_ZERO, 0, SAME},
               {"rbits", 8, 4, V_ZERO, 0, SAME},
               {"cbits", 12, 4, V_ZERO, 0, SAME},
               {"buckets", 16, 8, V_PLUS1, 0, SAME},
               {"map", 32, 8, CONST(2), 0, SAME}}},
    {"spectral", {{"m", 0, 8, V_PLUS1, 0, SAME}, {"k", 8, 4, V_ZERO, 0, SAME},
                  {"width", 12, 4, CONST(3), 0, SAME},
                  {"k", 8, 4, CONST(17), 0, SAME},
                  {"mode", 24, 4, CONST(7), 0, SAME},
                  {"layout", 28, 4, CONST(2), 0, SAME}}},
    {"spectral:layout=classic", {{"m", 0, 8, V_PLUS1, 0, SAME},
                                 {"k", 8, 4, CONST(33), 0, SAME},
                                 {"layout", 28, 4, V_HUGE, 0, SAME}}},
    {"scalable", {{"n0", 0, 8, V_ZERO, 0, SAME}, {"eps", 8, 8, 0, 1.5, SAME},
                  {"growth", 16, 4, V_ZERO, 0, SAME},
                  {"max_stages", 20, 4, V_ZERO, 0, SAME},
                  {"ratio", 24, 8, 0, 1.0, SAME},
                  {"max_bytes", 32, 8, V_ONE, 0, SAME},
                  {"stages", 40, 4, V_ZERO, 0, SAME},
                  {"reserved", 44, 4, V_ONE, 0, SAME},
                  {"items", 48, 8, V_PLUS1, 0, SAME},
                  {"stage n", 56, 8, V_ZERO, 0, SAME},
                  {"stage eps", 64, 8, 0, -1.0, SAME},
                  {"stage slice", 72, 8, V_PLUS1, 0, SAME},
                  {"stage k", 80, 4, V_ZERO, 0, SAME},
                  {"stage reserved", 84, 4, V_ONE, 0, SAME},
                  {"stage items", 88, 8, V_PLUS1, 0, 48}}},
    {"stable", {{"m", 0, 8, V_PLUS1, 0, SAME}, {"k", 8, 4, V_ZERO, 0, SAME},
                {"max", 12, 4, V_ZERO, 0, SAME},
                {"p", 16, 8, V_HUGE, 0, SAME}}},
    {"partitioned", {{"slice", 0, 8, V_PLUS1, 0, SAME},
                     {"k", 8, 4, V_ZERO, 0, SAME},
                     {"reserved", 12, 4, V_ONE, 0, SAME}}},
    {"compressed", {{"slice", 0, 8, V_ZERO, 0, SAME},
                    {"k", 8, 4, V_ZERO, 0, SAME},
                    {"reserved", 12, 4, V_ONE, 0, SAME},
                    {"mode", 24, 4, CONST(9), 0, SAME},
                    {"ones", 32, 8, V_HUGE, 0, SAME},
                    {"reserved", 40, 8, V_ONE, 0, SAME}}},
    {"cms", {{"width", 0, 8, V_PLUS1, 0, SAME}, {"depth", 8, 4, V_ZERO, 0, SAME},
             {"counter", 12, 4, CONST(7), 0, SAME},
             {"flags", 16, 4, CONST(4), 0, SAME},
             {"reserved", 20, 4, V_ONE, 0, SAME},
             {"total", 24, 8, V_ZERO, 0, SAME}}},
    {"topk:k=8", {{"k", 0, 4, V_ZERO, 0, SAME}, {"depth", 4, 4, V_ZERO, 0, SAME},
                  {"width", 8, 8, V_PLUS1, 0, SAME},
                  {"decay", 16, 8, 0, 1.0, SAME},
                  {"keylen", 24, 4, CONST(3), 0, SAME},
                  {"size", 28, 4, CONST(9), 0, SAME},
                  {"total", 32, 8, V_ZERO, 0, SAME}}},
    {"cuckoo", {{"buckets", 0, 8, V_ONE, 0, SAME},
                {"fp bits", 8, 4, CONST(3), 0, SAME},
                {"max_kicks", 12, 4, V_HUGE, 0, SAME},
                {"range", 16, 4, CONST(3), 0, SAME},
                {"items", 32, 8, V_PLUS1, 0, SAME}}},
    {"vacuum", {{"buckets", 0, 8, V_ONE, 0, SAME},
                {"fp bits", 8, 4, CONST(33), 0, SAME},
                {"range", 16, 4, CONST(3), 0, SAME},
                {"items", 32, 8, V_PLUS1, 0, SAME}}},
    {"qf", {{"slots", 0, 8, V_ZERO, 0, SAME}, {"r", 8, 1, V_ZERO, 0, SAME},
            {"width", 9, 1, V_PLUS1, 0, SAME}, {"mode", 10, 1, V_ONE, 0, SAME},
            {"reserved", 11, 1, V_ONE, 0, SAME},
            {"reserved", 12, 4, V_ONE, 0, SAME},
            {"items", 16, 8, V_PLUS1, 0, SAME}}},
    {"cqf", {{"slots", 0, 8, V_PLUS1, 0, SAME}, {"mode", 10, 1, V_ZERO, 0, SAME},
             {"items", 16, 8, V_PLUS1, 0, SAME}}},
    {"fuse8", {{"items", 8, 8, V_ZERO, 0, SAME},
               {"seg_len", 16, 4, V_PLUS1, 0, SAME},
               {"ways", 24, 4, CONST(5), 0, SAME},
               {"width", 28, 4, CONST(16), 0, SAME},
               {"family", 32, 4, V_ZERO, 0, SAME},
               {"mapping", 36, 4, CONST(2), 0, SAME}}},
    {"fuse8:ways=4", {{"mapping", 36, 4, V_ONE, 0, SAME}}},
    {"xor16", {{"seg_count", 20, 4, V_PLUS1, 0, SAME},
               {"family", 32, 4, V_ONE, 0, SAME},
               {"mapping", 36, 4, V_ONE, 0, SAME}}},
    {"ribbon", {{"version", 0, 4, CONST(4), 0, SAME},
                {"band", 4, 4, CONST(65), 0, SAME},
                {"bits", 8, 4, V_ZERO, 0, SAME},
                {"columns", 12, 4, V_PLUS1, 0, SAME},
                {"layers", 24, 4, CONST(9), 0, SAME},
                {"flags", 28, 4, CONST(2), 0, SAME},
                {"bucket", 32, 4, CONST(100), 0, SAME},
                {"reserved", 40, 8, V_ONE, 0, SAME},
                {"layer blocks", 56, 8, V_ZERO, 0, SAME},
                {"layer upper", 64, 4, V_HUGE, 0, SAME},
                {"layer reserved", 68, 4, V_ONE, 0, SAME}}},
    {"ribbon:bump=0", {{"items", 16, 8, V_HUGE, 0, SAME}}},
    {"vqf", {{"blocks", 0, 8, V_PLUS1, 0, SAME},
             {"items", 8, 8, V_PLUS1, 0, SAME},
             {"rbits", 16, 4, CONST(12), 0, SAME},
             {"reserved", 20, 4, V_ONE, 0, SAME}}},
    {"prefix", {{"bins", 0, 8, V_PLUS1, 0, SAME},
                {"items", 8, 8, V_PLUS1, 0, SAME},
                {"spare blocks", 16, 8, V_PLUS1, 0, 0},
                {"spare items", 24, 8, V_PLUS1, 0, 8},
                {"rbits", 32, 4, CONST(9), 0, SAME},
                {"reserved", 36, 4, V_ONE, 0, SAME}}},
    {"morton", {{"blocks", 0, 8, V_PLUS1, 0, SAME},
                {"items", 8, 8, V_PLUS1, 0, SAME},
                {"fp bits", 16, 4, CONST(12), 0, SAME},
                {"max_kicks", 20, 4, V_HUGE, 0, SAME}}},
    {"eqf", {{"slots", 0, 8, V_PLUS1, 0, SAME}, {"r", 8, 1, V_ZERO, 0, SAME},
             {"mode", 10, 1, V_ONE, 0, SAME},
             {"items", 16, 8, V_PLUS1, 0, SAME},
             {"first slots", 24, 8, V_PLUS1, 0, SAME},
             {"first slots", 24, 8, V_ZERO, 0, SAME},
             {"keys", 32, 8, V_HUGE, 0, SAME},
             {"l0", 40, 1, V_ZERO, 0, SAME},
             {"l0", 40, 1, V_PLUS1, 0, SAME},
             {"growth", 41, 1, CONST(41), 0, 40},
             {"doublings", 42, 1, V_ONE, 0, 24},
             {"reserved", 43, 1, V_ONE, 0, 40},
             {"reserved", 44, 4, V_ONE, 0, SAME}}},
    {"emaplet:op=max",
     {{"slots", 0, 8, V_PLUS1, 0, SAME}, {"r", 8, 1, V_ZERO, 0, SAME},
      {"items", 16, 8, V_PLUS1, 0, SAME},
      {"first slots", 24, 8, V_PLUS1, 0, SAME},
      {"keys", 32, 8, V_HUGE, 0, SAME},
      {"l0", 40, 1, V_ZERO, 0, SAME},
      {"growth", 41, 1, CONST(41), 0, 40},
      {"doublings", 42, 1, V_ONE, 0, 24},
      {"value bits", 44, 4, V_PLUS1, 0, 40},
      {"value bits", 44, 4, CONST(33), 0, SAME},
      {"op", 48, 4, CONST(5), 0, SAME},
      {"op", 48, 4, V_ZERO, 0, SAME},
      {"reserved", 52, 4, V_ONE, 0, SAME},
      {"puts", 56, 8, V_ZERO, 0, SAME}}},
    {"memento:range=1024",
     {{"slots", 0, 8, V_PLUS1, 0, SAME}, {"r", 8, 1, V_ZERO, 0, SAME},
      {"items", 16, 8, V_PLUS1, 0, SAME},
      {"first slots", 24, 8, V_PLUS1, 0, SAME},
      {"keys", 32, 8, V_HUGE, 0, SAME},
      {"l0", 40, 1, V_ZERO, 0, SAME},
      {"l0", 40, 1, V_PLUS1, 0, SAME},
      {"growth", 41, 1, CONST(41), 0, 40},
      {"doublings", 42, 1, V_ONE, 0, 24},
      {"memento bits", 44, 4, V_PLUS1, 0, 40},
      {"memento bits", 44, 4, CONST(33), 0, SAME},
      {"range", 64, 8, V_ZERO, 0, SAME},
      {"range", 64, 8, V_HUGE, 0, SAME},
      {"range", 64, 8, V_PLUS1, 0, SAME},
      {"key form", 72, 4, CONST(2), 0, SAME},
      {"reserved", 76, 4, V_ONE, 0, SAME}}},
    {"aqf", {{"slots", 0, 8, V_ZERO, 0, SAME}, {"slots", 0, 8, V_PLUS1, 0, SAME},
             {"r", 8, 1, V_ZERO, 0, SAME}, {"width", 9, 1, V_PLUS1, 0, SAME},
             {"mode", 10, 1, V_ONE, 0, SAME},
             {"reserved", 12, 4, V_ONE, 0, SAME},
             {"items", 16, 8, V_PLUS1, 0, SAME},
             {"ext slots", 24, 8, CONST(3), 0, SAME},
             {"ext slots", 24, 8, V_PLUS1, 0, 24},
             {"ext records", 32, 8, V_PLUS1, 0, SAME},
             {"map slots", 40, 8, V_ZERO, 0, 24},
             {"map slots", 40, 8, CONST(100), 0, SAME}}},
    {"maplet", {{"slots", 0, 8, V_ZERO, 0, SAME},
                {"slots", 0, 8, V_PLUS1, 0, SAME},
                {"r", 8, 1, V_ZERO, 0, SAME}, {"width", 9, 1, V_PLUS1, 0, SAME},
                {"v", 10, 1, V_ZERO, 0, SAME}, {"v", 10, 1, CONST(65), 0, SAME},
                {"op", 11, 1, CONST(5), 0, SAME},
                {"flags", 12, 1, CONST(2), 0, SAME},
                {"kbits", 13, 1, CONST(40), 0, SAME},
                {"reserved", 14, 1, V_ONE, 0, SAME},
                {"reserved", 15, 1, V_ONE, 0, 14},
                {"items", 16, 8, V_PLUS1, 0, SAME}}},
    {"maplet:op=max", {{"items", 16, 8, V_ZERO, 0, SAME}}},
    {"grafite", {{"r", 0, 8, V_ZERO, 0, SAME}, {"r", 0, 8, V_HUGE, 0, SAME},
                 {"c1", 8, 8, V_ZERO, 0, SAME}, {"c1", 8, 8, V_HUGE, 0, SAME},
                 {"c2", 16, 8, V_HUGE, 0, SAME},
                 {"items", 24, 8, V_ZERO, 0, 32},
                 {"codes", 32, 8, V_ZERO, 0, SAME},
                 {"codes", 32, 8, V_PLUS1, 0, SAME},
                 {"range", 40, 8, V_ZERO, 0, SAME},
                 {"range", 40, 8, V_HUGE, 0, SAME},
                 {"keys", 48, 4, CONST(2), 0, SAME},
                 {"reserved", 52, 4, V_ONE, 0, SAME}}},
    {"smaplet", {{"op", 0, 1, CONST(5), 0, SAME}, {"v", 1, 1, V_ZERO, 0, SAME},
                 {"member", 2, 1, V_ZERO, 0, SAME},
                 {"parts", 4, 4, V_PLUS1, 0, SAME},
                 {"items", 8, 8, V_PLUS1, 0, SAME},
                 {"part params", 16, 4, V_HUGE, 0, SAME},
                 {"part reserved", 20, 4, V_ONE, 0, 16},
                 {"part payload", 24, 8, V_HUGE, 0, SAME},
                 {"member version", 32, 4, CONST(4), 0, SAME}}},
};
/* clang-format on */

static uint64_t get_field(const uint8_t *p, unsigned width) {
    switch (width) {
    case 1: return p[0];
    case 4: return amq__get_u32(p);
    default: return amq__get_u64(p);
    }
}

static void put_field(uint8_t *p, unsigned width, uint64_t v) {
    switch (width) {
    case 1: p[0] = (uint8_t)v; break;
    case 4: amq__put_u32(p, (uint32_t)v); break;
    default: amq__put_u64(p, v); break;
    }
}

static uint64_t bad_value(const field_case *c, uint64_t old) {
    switch (c->val) {
    case V_ZERO: return 0;
    case V_ONE: return 1;
    case V_HUGE: return UINT64_MAX;
    case V_PLUS1: return old + 1;
    default: return (uint64_t)(c->val - 16);
    }
}

static uint8_t *frame_of(const char *spec, size_t *len) {
    amq_builder *b = NULL;
    amq_filter *f = NULL;
    uint8_t *buf = NULL;
    CHECK_OK(amq_builder_new(spec, NULL, &b, NULL));
    for (uint64_t i = 0; b != NULL && i < 500; i++)
        CHECK_OK(amq_builder_add_hash(b, amq__mix64(i + 1)));
    if (b != NULL)
        CHECK_OK(amq_builder_finish(b, 0.01, &f, NULL));
    amq_builder_free(b);
    if (f == NULL)
        return NULL;
    *len = amq_filter_serialized_size(f);
    buf = aligned_alloc(64, (*len + 63) / 64 * 64);
    if (buf != NULL)
        CHECK_OK(amq_filter_save(f, buf, *len, NULL));
    amq_filter_free(f);
    return buf;
}

static void one_case(const char *spec, uint8_t *buf, size_t len,
                     const field_case *c) {
    uint8_t *p = buf + TYPE_PARAMS + c->off;
    uint8_t save[8];
    memcpy(save, p, c->width);
    if (c->width == 8 && c->val == 0 && c->f64 != 0.0)
        amq__put_f64(p, c->f64);
    else
        put_field(p, c->width, bad_value(c, get_field(p, c->width)));
    amq__frame_seal(buf, len);
    amq_filter *f = NULL;
    amq_diag d;
    memset(&d, 0, sizeof d);
    amq_status st = amq_filter_load(buf, len, NULL, &f, &d);
    size_t want = TYPE_PARAMS + (c->at == SAME ? c->off : (unsigned)c->at);
    CHECK_MSG(st == AMQ_ERR_CORRUPT && d.offset == want,
              "%s %s (byte %zu): %s at byte %zu: %s", spec, c->name,
              (size_t)(TYPE_PARAMS + c->off), amq_status_name(st), d.offset,
              d.message);
    amq_filter_free(f);
    memcpy(p, save, c->width);
    amq__frame_seal(buf, len);
}

int main(void) {
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        const type_cases *tc = &cases[t];
        size_t len = 0;
        uint8_t *buf = frame_of(tc->spec, &len);
        check_seed = t;
        if (buf == NULL)
            continue;
        for (size_t i = 0; i < 16 && tc->f[i].name != NULL; i++)
            one_case(tc->spec, buf, len, &tc->f[i]);
        amq_filter *f = NULL;
        CHECK_OK(amq_filter_load(buf, len, NULL, &f, NULL));
        amq_filter_free(f);
        free(buf);
    }
    /* Every registered type is in the table (a new one gets its rows). */
    for (size_t i = 0; i < amq_filter_type_count(); i++) {
        const char *name = amq_filter_type_at(i)->name;
        bool found = false;
        for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++)
            found |= strncmp(cases[t].spec, name, strlen(name)) == 0 &&
                     (cases[t].spec[strlen(name)] == '\0' ||
                      cases[t].spec[strlen(name)] == ':');
        /* xor/fuse of other widths share fuse8's and xor16's loader */
        bool fixed_width_sibling =
            strncmp(name, "xor", 3) == 0 || strncmp(name, "fuse", 4) == 0;
        CHECK_MSG(found || fixed_width_sibling,
                  "%s has no parameter cases in test_params", name);
    }
    return check_report("test_params");
}
