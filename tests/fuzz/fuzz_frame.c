/*
 * fuzz_frame.c — libFuzzer target for the frame parser (amq_filter_load and
 * amq_filter_view), and the body replay.c runs over the corpus in ordinary CI.
 *
 * Every input is checked as given and again with its trailing checksum
 * recomputed (see LLVMFuzzerTestOneInput). Properties:
 *   - load and view never crash and agree on whether the frame is valid;
 *   - a frame that loads is canonical: saving it gives back the input byte
 *     for byte (save is the only writer, and it writes the current version),
 *     and the saved bytes load again;
 *   - the loaded filter answers queries and describes itself, and the view
 *     answers exactly like the copy.
 * A violated property aborts (libFuzzer and the replay driver report it).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amq/amq.h"
#include "core/frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_require(int ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "fuzz_frame: property violated: %s\n", what);
        abort();
    }
}

/* Queries that must agree between the copy and the view. */
static void exercise(const amq_filter *f, const amq_filter *v) {
    uint64_t h = 0x243f6a8885a308d3ULL;
    uint64_t hs[64];
    uint8_t out[64];
    for (int i = 0; i < 64; i++) {
        h = h * 6364136223846793005ULL + 1442695040888963407ULL;
        hs[i] = h;
        bool a = amq_filter_contains_hash(f, h);
        if (v != NULL)
            fuzz_require(a == amq_filter_contains_hash(v, h),
                         "view and copy disagree");
    }
    amq_filter_contains_batch(f, hs, 64, out);
    for (int i = 0; i < 64; i++)
        fuzz_require((out[i] != 0) == amq_filter_contains_hash(f, hs[i]),
                     "batch and scalar disagree");
    (void)amq_filter_contains(f, "fuzz", 4);
    /* a range filter's ranges: short, long, wrapping past 2^64 - 1 */
    for (int i = 0; (amq_filter_caps(f) & AMQ_CAP_RANGE) && i < 64; i++) {
        uint64_t lo = hs[i], hi = lo + (hs[(i + 1) % 64] >> (i % 64));
        bool a = false, c = false;
        if (hi < lo)
            hi = UINT64_MAX;
        if (amq_range_query(f, lo, hi, &a) == AMQ_OK && v != NULL)
            fuzz_require(amq_range_query(v, lo, hi, &c) == AMQ_OK && a == c,
                         "view and copy disagree on a range");
        double rb = amq_range_fpr_bound(f, hi - lo + 1);
        fuzz_require(rb >= 0.0 && rb <= 1.0, "range bound outside [0, 1]");
    }
    char desc[256];
    size_t need = amq_filter_describe(f, desc, sizeof desc);
    fuzz_require(need > 0, "empty describe");
    double b = amq_filter_fpr_bound(f);
    fuzz_require(b >= 0.0 && b <= 1.0, "fpr bound outside [0, 1]");
    (void)amq_filter_bits_per_key(f);
    (void)amq_filter_items(f);
}

/* A reader accepts any minor version and ignores unknown compatible flags
 * (docs/format.md), and save writes its own minor and only the flags it
 * knows; so the input may differ from the re-saved frame in exactly those
 * fields (bytes 10-11 and 20-23, except compat bit 0) and, as a consequence,
 * in the checksum. Everything else must be identical. */
static bool same_canonical(const uint8_t *in, const uint8_t *out, size_t n) {
    if (memcmp(in, out, n) == 0)
        return true;
    if (n < 72 || (in[20] & 1) != (out[20] & 1))
        return false;
    uint8_t *copy = malloc(n);
    if (copy == NULL)
        return false;
    memcpy(copy, in, n);
    memcpy(copy + 10, out + 10, 2);
    memcpy(copy + 20, out + 20, 4);
    amq_hasher h;
    bool same = false;
    if (amq_hasher_init(&h, AMQ_HASH_XXH64, 0, NULL) == AMQ_OK) {
        uint64_t sum = amq_hash64(&h, copy, n - 8);
        for (int i = 0; i < 8; i++)
            copy[n - 8 + (size_t)i] = (uint8_t)(sum >> (8 * i));
        same = memcmp(copy, out, n) == 0;
    }
    free(copy);
    return same;
}

static void check_frame(const uint8_t *data, size_t size) {
    /* An 8-aligned private copy: views need alignment, and the fuzzer's
     * buffer must not be aliased by a view that outlives this call. */
    uint8_t *buf = malloc((size / 8 + 1) * 8); /* malloc aligns to 16 */
    if (buf == NULL)
        return;
    if (size > 0)
        memcpy(buf, data, size);

    amq_filter *f = NULL, *v = NULL;
    amq_status sl = amq_filter_load(buf, size, NULL, &f, NULL);
    amq_status sv = amq_filter_view(buf, size, NULL, &v, NULL);
    fuzz_require((sl == AMQ_OK) == (sv == AMQ_OK), "load and view disagree");
    if (sl == AMQ_OK) {
        exercise(f, v);
        size_t need = amq_filter_serialized_size(f), written = 0;
        fuzz_require(need == size, "serialized size differs from the input");
        uint8_t *out = malloc(need ? need : 1);
        if (out != NULL) {
            fuzz_require(amq_filter_save(f, out, need, &written) == AMQ_OK,
                         "save of a loaded filter failed");
            fuzz_require(written == size && same_canonical(data, out, size),
                         "load -> save is not the identity");
            amq_filter *g = NULL;
            fuzz_require(amq_filter_load(out, written, NULL, &g, NULL) ==
                             AMQ_OK,
                         "saved frame does not load");
            amq_filter_free(g);
            free(out);
        }
        /* The view saves the same bytes and refuses updates. */
        size_t vw = 0;
        uint8_t *vout = malloc(size ? size : 1);
        if (vout != NULL) {
            fuzz_require(amq_filter_save(v, vout, size, &vw) == AMQ_OK &&
                             vw == size && same_canonical(data, vout, size),
                         "view -> save is not the identity");
            free(vout);
        }
        fuzz_require(amq_filter_add_hash(v, 1) == AMQ_ERR_READONLY,
                     "view accepted an add");
        /* The copy is a working filter. */
        bool added = amq_filter_add_hash(f, 12345) == AMQ_OK;
        if (added && !(amq_filter_info(f)->caps & AMQ_CAP_SKETCH))
            fuzz_require(amq_filter_contains_hash(f, 12345),
                         "false negative after add");
        /* An adaptive filter takes reports: a fixed key is answered "no"
         * and the key just added is still answered "yes". */
        for (int i = 0; (amq_filter_caps(f) & AMQ_CAP_ADAPT) && i < 64; i++) {
            uint64_t y = 0x9e3779b97f4a7c15ULL * (uint64_t)(i + 1);
            bool fixed = false;
            if (amq_filter_report_fp_hash(f, y, &fixed) == AMQ_OK && fixed)
                fuzz_require(!amq_filter_contains_hash(f, y),
                             "a reported key still passes");
            if (amq_filter_items(f) > 0 && y != 12345)
                (void)amq_filter_remove_hash(f, y);
            fuzz_require(!added || amq_filter_contains_hash(f, 12345),
                         "a member fails after reports");
        }
    }
    amq_filter_free(f);
    amq_filter_free(v);
    fuzz_require(memcmp(buf, data, size) == 0, "the input buffer changed");
    free(buf);
}

/* The checksum stops almost every mutation at step 3 of the validation
 * order; a second pass with the checksum recomputed lets the fuzzer reach
 * the hash, type and parameter checks and the loaders behind them. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    check_frame(data, size);
    uint8_t *copy = size >= 72 ? malloc(size) : NULL;
    if (copy != NULL) {
        memcpy(copy, data, size);
        amq__frame_seal(copy, size);
        check_frame(copy, size);
    }
    free(copy);
    return 0;
}
