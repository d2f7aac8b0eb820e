/*
 * test_pocket.c — the vector update paths of the pocket structures
 * (vqf.c, prefix.c) against their scalar references.
 *
 * 1. Opening a slot in a line (pocket.h): every vector version (AVX2 on
 *    32- and 64-byte lines, AVX-512BW, VBMI, each on a CPU that has it)
 *    against amq__pk_open_slot, byte for byte, on random lines, at every
 *    position and end the structures can ask for, 8- and 16-bit slots;
 *    the AVX-512 ones that also put the pocket's 0 in, against
 *    amq__pk_open_slot and amq__pk_ins64 / amq__pk_ins128.
 * 2. Whole filters: the same inserts into a vqf and a prefix filter
 *    created under each instruction-set ceiling (and AMQ_OPT_SCALAR, the
 *    reference updates) give byte-identical frames, refuse the same key
 *    when full (vqf), and answer every query alike; the prefix filters are
 *    filled far past capacity, so most bins overflow and the full-bin
 *    path and the routing test of the kernels run on most keys.
 */
#include "check.h"

#include <stdlib.h>
#include <string.h>

#include "core/bits.h"
#include "fingerprint/pocket.h"

/* ---- 1. one line -------------------------------------------------------- */

typedef void (*open_fn)(uint8_t *p, unsigned n, unsigned at, unsigned end,
                        unsigned w, unsigned v);

#if defined(AMQ__HAVE_PK_VEC)
static void open_avx2(uint8_t *p, unsigned n, unsigned at, unsigned end,
                      unsigned w, unsigned v) {
    amq__pk_open_slot256(p, n, at, end, w, v);
}
static void open_avx512(uint8_t *p, unsigned n, unsigned at, unsigned end,
                        unsigned w, unsigned v) {
    (void)n;
    amq__pk_open_slot512(p, at, end, w, v);
}
static void open_vbmi(uint8_t *p, unsigned n, unsigned at, unsigned end,
                      unsigned w, unsigned v) {
    (void)n;
    amq__pk_open_slot_vbmi(p, at, end, w, v);
}
#endif

static void random_line(uint8_t a[64], uint64_t *seed) {
    for (unsigned i = 0; i < 64; i += 8) {
        uint64_t x = check_next(seed);
        memcpy(a + i, &x, 8);
    }
}

/* fn against the reference on `trials` random n-byte lines for every
 * (at, end) with at + w <= end <= n (w = 2: at even). */
static void line_vs_ref(const char *name, open_fn fn, unsigned n, unsigned w,
                        unsigned trials) {
    uint64_t seed = 0x517cc1b727220a95ULL ^ (n * 131 + w);
    unsigned bad = 0, runs = 0;
    for (unsigned end = w; end <= n; end++)
        for (unsigned at = 0; at + w <= end; at += w)
            for (unsigned t = 0; t < trials; t++) {
                uint8_t a[64], b[64];
                random_line(a, &seed);
                memcpy(b, a, 64);
                unsigned v = (unsigned)check_next(&seed) & 0xffff;
                amq__pk_open_slot(a, n, at, end, w, v);
                fn(b, n, at, end, w, v);
                runs++;
                if (memcmp(a, b, 64) != 0 && bad++ == 0)
                    CHECK_MSG(false, "%s n=%u w=%u at=%u end=%u", name, n, w,
                              at, end);
            }
    CHECK_MSG(bad == 0, "%s n=%u w=%u: %u of %u lines differ", name, n, w, bad,
              runs);
}

/* The reference itself against a byte-by-byte model (the words it moves
 * and masks are what the vector versions are checked against). */
static void ref_vs_model(void) {
    uint64_t seed = 7;
    unsigned bad = 0;
    for (unsigned w = 1; w <= 2; w++)
        for (unsigned end = w; end <= 64; end++)
            for (unsigned at = 0; at + w <= end; at++) {
                uint8_t a[64], m[64];
                for (unsigned i = 0; i < 64; i++)
                    a[i] = (uint8_t)check_next(&seed);
                memcpy(m, a, 64);
                unsigned v = (unsigned)check_next(&seed) & 0xffff;
                memmove(m + at + w, m + at, end - at - w);
                m[at] = (uint8_t)v;
                if (w == 2)
                    m[at + 1] = (uint8_t)(v >> 8);
                amq__pk_open_slot(a, 64, at, end, w, v);
                bad += memcmp(a, m, 64) != 0;
            }
    CHECK_MSG(bad == 0, "amq__pk_open_slot: %u cases differ from memmove", bad);
}

/* A slot opened and the pocket's 0 put in, in one store (AVX-512BW and
 * VBMI, words = 1 or 2 pocket words at the line's start), against
 * amq__pk_open_slot then amq__pk_ins64 / amq__pk_ins128, at every pocket
 * position and a random slot. */
static void open_ins_vs_ref(unsigned trials) {
#if defined(AMQ__HAVE_PK_VEC)
    uint64_t seed = 0x2545f4914f6cdd1dULL;
    unsigned bad = 0, runs = 0;
    for (int vbmi = 0; vbmi <= 1; vbmi++) {
        if (!(vbmi ? amq__cpu_has_vbmi() : amq__cpu_has_avx512()))
            continue;
        for (unsigned words = 1; words <= 2; words++)
            for (unsigned w = 1; w <= 2; w++)
                for (unsigned pos = 0; pos < 64 * words; pos++)
                    for (unsigned t = 0; t < trials; t++) {
                        uint8_t a[64], b[64];
                        random_line(a, &seed);
                        memcpy(b, a, 64);
                        unsigned first = 8 * words, slots = (64 - first) / w;
                        unsigned at =
                            first + w * (unsigned)(check_next(&seed) % slots);
                        unsigned v = (unsigned)check_next(&seed) & 0xffff;
                        amq__pk_open_slot(a, 64, at, 64, w, v);
                        if (words == 2) {
                            amq__u128 md;
                            memcpy(&md, a, 16);
                            md = amq__pk_ins128(md, pos);
                            memcpy(a, &md, 16);
                        } else {
                            uint64_t md = amq__get_u64(a);
                            amq__put_u64(a, amq__pk_ins64(md, pos));
                        }
                        if (vbmi)
                            amq__pk_open_ins_vbmi(b, at, 64, w, v, pos, words);
                        else
                            amq__pk_open_ins512(b, at, 64, w, v, pos, words);
                        runs++;
                        if (memcmp(a, b, 64) != 0 && bad++ == 0)
                            CHECK_MSG(false,
                                      "open+ins vbmi=%d words=%u w=%u pos=%u "
                                      "at=%u",
                                      vbmi, words, w, pos, at);
                    }
    }
    CHECK_MSG(bad == 0, "open+ins: %u of %u lines differ", bad, runs);
#else
    (void)trials;
#endif
}

static void lines(void) {
    unsigned trials = check_quick() ? 2 : 8;
    ref_vs_model();
#if defined(AMQ__HAVE_PK_VEC)
    for (unsigned w = 1; w <= 2; w++) {
        if (amq__cpu_has_avx2()) {
            line_vs_ref("avx2", open_avx2, 32, w, trials);
            line_vs_ref("avx2", open_avx2, 64, w, trials);
        }
        if (amq__cpu_has_avx512())
            line_vs_ref("avx512", open_avx512, 64, w, trials);
        if (amq__cpu_has_vbmi())
            line_vs_ref("vbmi", open_vbmi, 64, w, trials);
    }
#endif
    open_ins_vs_ref(trials);
}

/* ---- 2. whole filters --------------------------------------------------- */

enum { REF = -1 }; /* AMQ_OPT_SCALAR rather than a ceiling */

static amq_filter *made_under(const char *spec, uint64_t cap, int level) {
    amq_options opt;
    amq_filter *f = NULL;
    memset(&opt, 0, sizeof opt);
    opt.flags = level == REF ? AMQ_OPT_SCALAR : 0u;
    amq__cpu_cap(level == REF ? AMQ__CPU_MAX : level);
    CHECK_OK(amq_filter_new(spec, cap, 0.01, &opt, &f, NULL));
    amq__cpu_cap(AMQ__CPU_MAX);
    return f;
}

/* n inserts of stream seed into a filter of spec made under each ceiling:
 * the same statuses, frames and answers as the reference. */
static void same_tables(const char *spec, uint64_t cap, uint64_t n) {
    static const int levels[] = {AMQ__CPU_SCALAR, AMQ__CPU_AVX2,
                                 AMQ__CPU_AVX512, AMQ__CPU_AVX512_EXT};
    amq_filter *ref = made_under(spec, cap, REF);
    if (ref == NULL)
        return;
    amq_filter *f[3];
    for (unsigned l = 0; l < 3; l++)
        f[l] = made_under(spec, cap, levels[l]);
    uint64_t s = 0x2545f4914f6cdd1dULL, refused = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t h = check_next(&s);
        amq_status want = amq_filter_add_hash(ref, h);
        refused += want != AMQ_OK;
        for (unsigned l = 0; l < 3; l++)
            if (f[l] != NULL && amq_filter_add_hash(f[l], h) != want) {
                CHECK_MSG(false, "%s level %d: insert %llu differs", spec,
                          levels[l], (unsigned long long)i);
                amq_filter_free(f[l]);
                f[l] = NULL;
            }
    }
    uint64_t q = 0x9e3779b97f4a7c15ULL;
    for (unsigned l = 0; l < 3; l++) {
        if (f[l] == NULL)
            continue;
        CHECK_MSG(check_same_frame(ref, f[l]), "%s level %d: frames differ",
                  spec, levels[l]);
        unsigned diff = 0;
        for (unsigned i = 0; i < 20000; i++) {
            uint64_t h = check_next(&q);
            diff += amq_filter_contains_hash(ref, h) !=
                    amq_filter_contains_hash(f[l], h);
        }
        CHECK_MSG(diff == 0, "%s level %d: %u answers differ", spec, levels[l],
                  diff);
        amq_filter_free(f[l]);
    }
    /* the vqf runs are filled until it refuses */
    if (strncmp(spec, "vqf", 3) == 0)
        CHECK_MSG(refused > 0, "%s: never full", spec);
    amq_filter_free(ref);
}

int main(void) {
    lines();
    uint64_t n = check_quick() ? 3000 : 20000;
    /* vqf past its capacity (it refuses keys at the end); prefix at three
     * times its capacity: most bins overflowed */
    same_tables("vqf", n, 2 * n);
    same_tables("vqf:r=16", n, 2 * n);
    same_tables("prefix", n, 3 * n);
    same_tables("prefix:r=16", n, 3 * n);
    return check_report("test_pocket");
}
