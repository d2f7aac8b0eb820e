/*
 * gen_corpus.c — writes the seed corpus for fuzz_frame and the golden frames.
 *
 *   gen_corpus CORPUS_DIR [GOLDEN_DIR]
 *
 * CORPUS_DIR (tests/fuzz/corpus/frame) receives, for every type, small
 * valid frames (a few sizes and hashers; static types are built from the
 * same keys with amq_filter_build) and, from one small frame,
 * invalid ones: truncated, bad magic, bad version, bad checksum, unknown
 * type, incompatible flag, reserved bits, wrong lengths — most of them with a
 * recomputed checksum so the fuzzer starts behind the checksum test.
 * GOLDEN_DIR (tests/golden) receives the frames described in golden.h.
 * CORPUS_DIR/../tdigest receives the seeds of fuzz_tdigest, and
 * CORPUS_DIR/../window those of fuzz_window.
 * Not run in CI; rerun by hand when a type is added, and commit the output.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amq/amq.h"
#include "golden/golden.h"
#include "core/frame.h"

#define MAX_FILE 8192 /* keep corpus files small */

static int failures;

static void write_file(const char *dir, const char *name, const uint8_t *buf,
                       size_t len) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (len > MAX_FILE) {
        fprintf(stderr, "gen_corpus: %s is %zu bytes, skipped\n", path, len);
        return;
    }
    FILE *fp = fopen(path, "wb");
    if (fp == NULL || fwrite(buf, 1, len, fp) != len) {
        fprintf(stderr, "gen_corpus: cannot write %s\n", path);
        failures++;
    }
    if (fp != NULL && fclose(fp) != 0)
        failures++;
}

static uint8_t *frame_of(const amq_filter *f, size_t *len) {
    size_t need = amq_filter_serialized_size(f);
    uint8_t *buf = malloc(need + 16);
    *len = 0;
    if (buf == NULL || amq_filter_save(f, buf, need, len) != AMQ_OK) {
        fprintf(stderr, "gen_corpus: save failed\n");
        failures++;
        free(buf);
        return NULL;
    }
    return buf;
}

/* A static type from the keys build() would add; eps is dropped when the
 * type's fixed width cannot meet it (the builder keeps its keys). */
static amq_filter *build_static(const char *type, double eps, uint64_t keys,
                                const amq_options *opt) {
    amq_builder *b = NULL;
    amq_filter *f = NULL;
    amq_status st = amq_builder_new(type, opt, &b, NULL);
    for (uint64_t i = 0; st == AMQ_OK && i < keys; i++) {
        uint64_t k = i * 0x9e3779b97f4a7c15ULL;
        st = amq_builder_add(b, &k, sizeof k);
    }
    if (st == AMQ_OK)
        st = amq_builder_finish(b, eps, &f, NULL);
    if (st == AMQ_ERR_INVALID)
        st = amq_builder_finish(b, 0.0, &f, NULL);
    amq_builder_free(b);
    if (st != AMQ_OK) {
        fprintf(stderr, "gen_corpus: cannot build %s: %s\n", type,
                amq_status_name(st));
        failures++;
        return NULL;
    }
    return f;
}

static amq_filter *build(const char *type, uint64_t cap, double eps,
                         uint64_t keys, const amq_options *opt) {
    amq_filter *f = NULL;
    const amq_type_info *ti = amq_filter_type_find(type);
    if (ti != NULL && (ti->caps & AMQ_CAP_STATIC))
        return build_static(type, eps, keys, opt);
    if (amq_filter_new(type, cap, eps, opt, &f, NULL) != AMQ_OK) {
        fprintf(stderr, "gen_corpus: cannot create %s\n", type);
        failures++;
        return NULL;
    }
    for (uint64_t i = 0; i < keys; i++) {
        uint64_t k = i * 0x9e3779b97f4a7c15ULL;
        if (amq_filter_add(f, &k, sizeof k) != AMQ_OK)
            break;
    }
    return f;
}

static void emit(const char *dir, const char *name, amq_filter *f) {
    size_t len;
    uint8_t *buf = f ? frame_of(f, &len) : NULL;
    if (buf != NULL)
        write_file(dir, name, buf, len);
    free(buf);
    amq_filter_free(f);
}

static void valid_frames(const char *dir, const amq_type_info *ti) {
    static const uint8_t key[16] = {9, 8, 7, 6, 5, 4, 3, 2,
                                    1, 0, 1, 2, 3, 4, 5, 6};
    char name[128];
    static const uint64_t sizes[] = {0, 1, 10, 100};
    for (size_t i = 0; i < 4; i++) {
        snprintf(name, sizeof name, "valid-%s-n%llu", ti->name,
                 (unsigned long long)sizes[i]);
        emit(dir, name,
             build(ti->name, sizes[i] ? sizes[i] : 1, 0.01, sizes[i], NULL));
    }
    amq_options opt;
    memset(&opt, 0, sizeof opt);
    opt.hash = AMQ_HASH_SIPHASH;
    opt.hash_key = key;
    snprintf(name, sizeof name, "valid-%s-siphash", ti->name);
    emit(dir, name, build(ti->name, 50, 0.05, 50, &opt));
    opt.hash = AMQ_HASH_XXH64;
    opt.hash_key = NULL;
    opt.hash_seed = 77;
    snprintf(name, sizeof name, "valid-%s-xxh64", ti->name);
    emit(dir, name, build(ti->name, 50, 0.001, 50, &opt));
    opt.hash = AMQ_HASH_XXH3;
    snprintf(name, sizeof name, "valid-%s-xxh3-seeded", ti->name);
    emit(dir, name, build(ti->name, 20, 0.2, 20, &opt));
}

typedef struct edit {
    const char *name;
    size_t off;
    uint8_t bytes[8];
    size_t n;
    int reseal;
} edit;

static void invalid_frames(const char *dir, const char *type) {
    amq_filter *f = build(type, 10, 0.01, 10, NULL);
    size_t len;
    uint8_t *frame = f ? frame_of(f, &len) : NULL;
    amq_filter_free(f);
    if (frame == NULL)
        return;
    uint8_t *buf = malloc(len + 64);
    if (buf == NULL) {
        free(frame);
        return;
    }
    char name[128];
    /* Truncations: empty, inside the header, at its end, inside the
     * payload, missing checksum bytes. */
    const size_t cuts[] = {0, 1, 8, 63, 64, 65, len / 2, len - 8, len - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        snprintf(name, sizeof name, "bad-truncated-%zu", cuts[i]);
        write_file(dir, name, frame, cuts[i]);
    }
    /* Trailing bytes. */
    memcpy(buf, frame, len);
    memset(buf + len, 0, 8);
    write_file(dir, "bad-trailing-8", buf, len + 8);

    static const edit edits[] = {
        {"bad-magic", 0, {0x88}, 1, 1},
        {"bad-magic-ascii", 0, {'A'}, 1, 1},
        {"bad-magic-unsealed", 3, {'X'}, 1, 0},
        {"bad-version-major2", 8, {2, 0}, 2, 1},
        {"bad-version-major0", 8, {0, 0}, 2, 1},
        {"bad-version-unsealed", 8, {9, 0}, 2, 0},
        {"minor-1", 10, {1, 0}, 2, 1},
        {"bad-type-unknown", 12, {0xff, 0xff}, 2, 1},
        {"bad-type-zero", 12, {0, 0}, 2, 1},
        {"bad-hash-kind-0", 14, {0}, 1, 1},
        {"bad-hash-kind-9", 14, {9}, 1, 1},
        {"bad-reserved-15", 15, {1}, 1, 1},
        {"bad-incompat", 16, {1, 0, 0, 0}, 4, 1},
        {"compat-unknown", 20, {0, 0, 0, 0x80}, 4, 1},
        {"compat-secret", 20, {1, 0, 0, 0}, 4, 1},
        {"bad-params-len-huge", 48, {0xff, 0xff, 0xff, 0xff}, 4, 1},
        {"bad-params-len-zero", 48, {0, 0, 0, 0}, 4, 1},
        {"bad-reserved-52", 52, {0, 0, 0, 1}, 4, 1},
        {"bad-payload-len-huge",
         56,
         {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f},
         8,
         1},
        {"bad-params-pad", 127, {1}, 1, 1},
    };
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        const edit *e = &edits[i];
        memcpy(buf, frame, len);
        if (e->off + e->n > len)
            continue;
        memcpy(buf + e->off, e->bytes, e->n);
        if (e->reseal)
            amq__frame_seal(buf, len);
        write_file(dir, e->name, buf, len);
    }
    /* Payload length off by a word either way (resealed), checksum and
     * payload bit flips (not resealed). */
    uint64_t plen;
    memcpy(&plen, frame + 56, 8);
    for (int d = -1; d <= 1; d += 2) {
        uint64_t p = plen + (uint64_t)(int64_t)(8 * d);
        memcpy(buf, frame, len);
        memcpy(buf + 56, &p, 8);
        amq__frame_seal(buf, len);
        snprintf(name, sizeof name, "bad-payload-len%+d", 8 * d);
        write_file(dir, name, buf, len);
    }
    memcpy(buf, frame, len);
    buf[len - 1] ^= 0x01;
    write_file(dir, "bad-checksum", buf, len);
    memcpy(buf, frame, len);
    buf[len - 9] ^= 0x80;
    write_file(dir, "bad-payload-bitflip", buf, len);
    memcpy(buf, frame, len);
    buf[len - 9] ^= 0x80;
    amq__frame_seal(buf, len);
    write_file(dir, "payload-bitflip-resealed", buf, len);
    free(buf);
    free(frame);
}

static void golden_frames(const char *dir, const amq_type_info *ti) {
    for (int v = GOLDEN_DEFAULT; v <= GOLDEN_SIPHASH; v++) {
        amq_filter *f = NULL;
        char name[96];
        golden_file_name(ti->name, (golden_variant)v, name, sizeof name);
        if (golden_build(ti->name, (golden_variant)v, &f) != AMQ_OK) {
            fprintf(stderr, "gen_corpus: cannot build golden %s\n", name);
            failures++;
            continue;
        }
        emit(dir, name, f);
    }
}

/* Shapes the per-type defaults never reach at these sizes: multi-layer
 * bumped Ribbon, standard Ribbon, grown cuckoo/vacuum chains, and a cuckoo
 * table whose size is not a power of two (sum-form alternate bucket).
 * cap 0 means the spec is explicit. */
static void shape_frames(const char *dir) {
    static const struct {
        const char *name, *spec;
        uint64_t cap, keys;
    } shapes[] = {
        {"shape-ribbon-layers", "ribbon", 2000, 2000},
        {"shape-ribbon-w128-layers", "ribbon:w=128", 3000, 3000},
        {"shape-ribbon-standard", "ribbon:bump=0", 500, 500},
        {"shape-cuckoo-chain", "cuckoo:fp=8,buckets=6,grow=1", 0, 300},
        {"shape-vacuum-chain", "vacuum:fp=8,buckets=16,grow=1", 0, 500},
        {"shape-cuckoo-sum-form", "cuckoo:fp=13,buckets=30", 0, 100},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        emit(dir, shapes[i].name,
             build(shapes[i].spec, shapes[i].cap, shapes[i].cap ? 0.01 : 0.0,
                   shapes[i].keys, NULL));
}

/* Maplets holding values the generic add never puts: sum counters of every
 * length, multiset groups, slots wider than 64 bits, exact mode. */
static void maplet_frames(const char *dir) {
    static const struct {
        const char *name, *spec;
    } shapes[] = {
        {"shape-maplet-counters", "maplet:op=sum,v=2,q=7,r=6"},
        {"shape-maplet-multiset", "maplet:op=min,v=5,multiset=1,q=7,r=4"},
        {"shape-maplet-wide", "maplet:op=or,v=64,q=6,r=20"},
        {"shape-maplet-exact", "maplet:op=max,v=7,q=7,kbits=16"},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        amq_maplet *m = NULL;
        if (amq_maplet_new(shapes[i].spec, 0, 0, NULL, &m, NULL) != AMQ_OK) {
            failures++;
            continue;
        }
        amq_maplet_shape sh;
        amq_maplet_get_shape(m, &sh);
        uint64_t vm = sh.value_bits >= 64 ? ~0ULL : (1ULL << sh.value_bits) - 1;
        for (uint64_t k = 0; k < 60; k++) {
            uint64_t v = (k % 5 == 0 ? k * 1000003 : 1 + k % 4) & vm, h;
            if (amq_maplet_exact_hash(m, k * 977, &h) != AMQ_OK)
                h = k * 0x9e3779b97f4a7c15ULL;
            for (uint64_t rep = 0; rep <= k % 3; rep++)
                if (amq_maplet_put_hash(m, h, v ? v : 1) != AMQ_OK)
                    failures++;
        }
        emit(dir, shapes[i].name, m);
    }
}

/* Seeds for fuzz_tdigest, in CORPUS_DIR/../tdigest: an empty digest, one
 * value, a few hundred values of two shapes, and a digest of another
 * compression. */
static void tdigest_frames(const char *corpus) {
    static const struct {
        const char *name;
        double delta;
        unsigned n, shape;
    } seeds[] = {{"tdigest-empty", 100, 0, 0},
                 {"tdigest-one", 100, 1, 0},
                 {"tdigest-uniform", 20, 400, 0},
                 {"tdigest-steps", 20, 300, 1},
                 {"tdigest-d5", 5, 200, 0}};
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/../tdigest", corpus);
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
        amq_tdigest *t = NULL;
        if (amq_tdigest_new(seeds[i].delta, NULL, &t) != AMQ_OK) {
            failures++;
            continue;
        }
        uint64_t x = 12345 + i;
        for (unsigned k = 0; k < seeds[i].n; k++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            double v = seeds[i].shape ? (double)(x >> 60) : (double)(x >> 11);
            if (amq_tdigest_add(t, v, 1 + (x >> 62)) != AMQ_OK)
                failures++;
        }
        size_t len = amq_tdigest_serialized_size(t), w = 0;
        uint8_t *buf = malloc(len);
        if (buf != NULL && amq_tdigest_save(t, buf, len, &w) == AMQ_OK)
            write_file(dir, seeds[i].name, buf, w);
        else
            failures++;
        free(buf);
        amq_tdigest_free(t);
    }
}

/* Seeds for fuzz_window, in CORPUS_DIR/../window: count and time windows,
 * both seals, an empty one, one that closed generations and one whose
 * generation overflowed into a second piece. */
static void window_frames(const char *corpus) {
    static const struct {
        const char *name;
        amq_window_params p;
        unsigned adds, per_ms;
    } seeds[] = {
        {"window-empty", {AMQ_WINDOW_ITEMS, 64, 0, 0.05, 2, 0}, 0, 0},
        {"window-items", {AMQ_WINDOW_ITEMS, 64, 0, 0.05, 4, 0}, 150, 0},
        {"window-items-qf", {AMQ_WINDOW_ITEMS, 64, 0, 0.05, 4, 1}, 150, 0},
        {"window-time", {AMQ_WINDOW_TIME, 100, 40, 0.1, 4, 0}, 120, 1},
        {"window-overflow", {AMQ_WINDOW_TIME, 100, 16, 0.1, 2, 0}, 40, 40},
    };
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/../window", corpus);
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
        amq_window *w = NULL;
        if (amq_window_new(&seeds[i].p, NULL, &w, NULL) != AMQ_OK) {
            failures++;
            continue;
        }
        for (unsigned k = 0; k < seeds[i].adds; k++) {
            uint64_t now = seeds[i].per_ms ? k / seeds[i].per_ms : 0;
            if (amq_window_add_hash(w, amq_mix64(k + 1), now, NULL) != AMQ_OK)
                failures++;
        }
        size_t len = amq_window_serialized_size(w), got = 0;
        uint8_t *buf = malloc(len);
        if (buf != NULL && amq_window_save(w, buf, len, &got) == AMQ_OK)
            write_file(dir, seeds[i].name, buf, got);
        else
            failures++;
        free(buf);
        amq_window_free(w);
    }
}

int main(int argc, char **argv) {
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: gen_corpus CORPUS_DIR [GOLDEN_DIR]\n");
        return 2;
    }
    const char *first_type = NULL;
    for (size_t i = 0; i < amq_filter_type_count(); i++) {
        const amq_type_info *ti = amq_filter_type_at(i);
        if (first_type == NULL)
            first_type = ti->name;
        valid_frames(argv[1], ti);
        if (argc == 3)
            golden_frames(argv[2], ti);
    }
    if (first_type != NULL)
        invalid_frames(argv[1], first_type);
    shape_frames(argv[1]);
    maplet_frames(argv[1]);
    tdigest_frames(argv[1]);
    window_frames(argv[1]);
    return failures ? 1 : 0;
}
