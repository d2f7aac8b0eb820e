/*
 * test_golden.c — pins the serialization format with golden frames.
 *
 * tests/golden/ holds, for every type, frames built from fixed keys
 * (see tests/golden/golden.h). The current code must
 *   - load each golden frame and answer every golden key,
 *   - save the loaded filter back to the very same bytes, and
 *   - build the very same bytes again from the same keys.
 * If a change breaks this, the format changed: bump the frame version and
 * document it in docs/format.md before regenerating with tests/fuzz/gen_corpus.
 *
 * A type whose *sizing* changes (the same keys and target now give another,
 * still valid, shape) keeps its old frames in tests/golden/legacy/ under
 * their old names: those must still load, answer every golden key and save
 * back to the same bytes (old files stay readable), but are not rebuilt.
 * So do the frames of an earlier format version, in a subdirectory of
 * legacy/ per version (legacy/ribbon-v2/: Ribbon's parameter version 2,
 * and the static maplets made of it; legacy/fuse-map0/: fuse filters of
 * slot mapping 0); every subdirectory is checked.
 *
 * The directory is found from this file's path, or AMQ_GOLDEN_DIR.
 */
#include "check.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../golden/golden.h"

static void golden_dir(char *buf, size_t cap) {
    const char *env = getenv("AMQ_GOLDEN_DIR");
    if (env != NULL && env[0] != '\0') {
        snprintf(buf, cap, "%s", env);
        return;
    }
    /* __FILE__ is .../tests/unit/test_golden.c */
    snprintf(buf, cap, "%s", __FILE__);
    char *slash = strrchr(buf, '/');
    if (slash == NULL) {
        snprintf(buf, cap, "tests/golden");
        return;
    }
    *slash = '\0';
    size_t used = strlen(buf);
    snprintf(buf + used, cap - used, "/../golden");
}

static uint8_t *read_file(const char *path, size_t *len) {
    FILE *fp = fopen(path, "rb");
    if (fp == NULL)
        return NULL;
    uint8_t *buf = NULL;
    long size = -1;
    if (fseek(fp, 0, SEEK_END) == 0)
        size = ftell(fp);
    if (size >= 0 && fseek(fp, 0, SEEK_SET) == 0) {
        buf = malloc((size_t)size + 1);
        if (buf != NULL && fread(buf, 1, (size_t)size, fp) != (size_t)size) {
            free(buf);
            buf = NULL;
        }
    }
    fclose(fp);
    *len = buf ? (size_t)size : 0;
    return buf;
}

static uint8_t *save_frame(const amq_filter *f, size_t *len) {
    size_t need = amq_filter_serialized_size(f);
    uint8_t *buf = malloc(need ? need : 1);
    *len = 0;
    if (buf == NULL)
        return NULL;
    CHECK_OK(amq_filter_save(f, buf, need, len));
    return buf;
}

/* Loads a golden frame, checks every golden key and that saving gives back
 * the same bytes. */
static void check_load(const char *name, const amq_type_info *ti,
                       const uint8_t *gold, size_t glen) {
    amq_filter *g = NULL;
    amq_diag d;
    memset(&d, 0, sizeof d);
    amq_status st = amq_filter_load(gold, glen, NULL, &g, &d);
    CHECK_MSG(st == AMQ_OK, "%s: load: %s %.100s", name, amq_status_name(st),
              d.message);
    if (st == AMQ_OK) {
        uint64_t missing = 0;
        for (size_t i = 0; i < GOLDEN_KEYS; i++) {
            char k[32];
            size_t kl = golden_key(i, ti->caps & AMQ_CAP_RANGE, k);
            missing += !amq_filter_contains(g, k, kl);
        }
        if (ti->caps & AMQ_CAP_SKETCH)
            missing = 0; /* not a membership filter (amq/filter.h) */
        if (ti->caps & AMQ_CAP_FORGETS) { /* only the newest is promised */
            char k[32];
            size_t kl =
                golden_key(GOLDEN_KEYS - 1, ti->caps & AMQ_CAP_RANGE, k);
            missing = !amq_filter_contains(g, k, kl);
        }
        CHECK_MSG(missing == 0, "%s: %llu golden keys missing", name,
                  (unsigned long long)missing);
        CHECK(amq_filter_items(g) ==
              GOLDEN_KEYS + (ti->caps & AMQ_CAP_GROW ? GOLDEN_GROWN : 0));
        CHECK(strcmp(amq_filter_info(g)->name, ti->name) == 0);
        size_t len;
        uint8_t *again = save_frame(g, &len);
        CHECK_MSG(again != NULL && len == glen && memcmp(again, gold, len) == 0,
                  "%s: load -> save changes the bytes", name);
        free(again);
    }
    amq_filter_free(g);
}

/* The earlier frames named `name` in legacy/ and its subdirectories: load
 * only. */
static void check_legacy(const char *dir, const amq_type_info *ti,
                         const char *name) {
    char path[1200];
    size_t glen = 0;
    snprintf(path, sizeof path, "%s/legacy/%s", dir, name);
    uint8_t *gold = read_file(path, &glen);
    if (gold != NULL)
        check_load(name, ti, gold, glen);
    free(gold);
    snprintf(path, sizeof path, "%s/legacy", dir);
    DIR *d = opendir(path);
    for (struct dirent *e = d ? readdir(d) : NULL; e != NULL; e = readdir(d)) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/legacy/%s/%s", dir, e->d_name, name);
        gold = read_file(path, &glen);
        if (gold != NULL)
            check_load(path, ti, gold, glen);
        free(gold);
    }
    if (d != NULL)
        closedir(d);
}

static void check_golden(const char *dir, const amq_type_info *ti,
                         golden_variant v) {
    char name[96], path[1200];
    golden_file_name(ti->name, v, name, sizeof name);
    check_legacy(dir, ti, name);
    size_t glen = 0;
    uint8_t *gold;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    gold = read_file(path, &glen);
    CHECK_MSG(gold != NULL,
              "%.120s missing: for a new type run `gen_corpus "
              "tests/fuzz/corpus/frame tests/golden` (never to paper over a "
              "changed format)",
              path);
    if (gold == NULL)
        return;
    check_load(name, ti, gold, glen);

    amq_filter *b = NULL;
    CHECK_OK(golden_build(ti->name, v, &b));
    if (b != NULL) {
        size_t len;
        uint8_t *built = save_frame(b, &len);
        size_t first = 0;
        while (built != NULL && first < len && first < glen &&
               built[first] == gold[first])
            first++;
        CHECK_MSG(built != NULL && len == glen && first == len,
                  "%s: rebuilt frame differs (%zu vs %zu bytes, first "
                  "difference at byte %zu)",
                  name, len, glen, first);
        free(built);
    }
    amq_filter_free(b);
    free(gold);
}

int main(void) {
    char dir[1024];
    golden_dir(dir, sizeof dir);
    check_seed = 0;
    for (size_t i = 0; i < amq_filter_type_count(); i++) {
        const amq_type_info *ti = amq_filter_type_at(i);
        check_golden(dir, ti, GOLDEN_DEFAULT);
        check_golden(dir, ti, GOLDEN_SIPHASH);
    }
    return check_report("test_golden");
}
