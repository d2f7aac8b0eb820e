/*
 * test_file.c — amq_filter_save_file / open_file / load_file and
 * amq_hash64_batch and amq_hash64_strided.
 *
 * Properties: the saved file is byte for byte amq_filter_save's frame for
 * every type, with
 * mode 0600 exactly when the hasher is keyed; a failed save leaves the old
 * file (or directory) intact and no temporary file behind; open_file gives
 * a view that answers like the original and whose mapping disappears from
 * /proc/self/maps when the filter is freed, also when construction fails
 * on the N-th allocation for every N; load_file gives a modifiable copy;
 * pipes are read and loaded; bad files give the loader's status.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static char dir[] = "/tmp/amq-test-file-XXXXXX";
static char path[256];

/* n keys through the builder, so static types come out too; a fixed-width
 * type that cannot meet 0.01 is built without a target. */
static amq_filter *make_filter(const char *spec, size_t n, bool keyed) {
    amq_options opt = {0};
    amq_filter *f = NULL;
    amq_builder *b = NULL;
    uint64_t s = 7;
    if (keyed)
        opt.hash = AMQ_HASH_SIPHASH;
    CHECK_STATUS(amq_builder_new(spec, &opt, &b, NULL), AMQ_OK);
    for (size_t i = 0; b != NULL && i < n; i++) {
        uint64_t k = check_next(&s);
        CHECK_STATUS(amq_builder_add(b, &k, sizeof k), AMQ_OK);
    }
    if (b != NULL && amq_builder_finish(b, 0.01, &f, NULL) != AMQ_OK)
        CHECK_STATUS(amq_builder_finish(b, 0, &f, NULL), AMQ_OK);
    amq_builder_free(b);
    return f;
}

static uint8_t *read_file(const char *p, size_t *len) {
    FILE *fp = fopen(p, "rb");
    uint8_t *buf = NULL;
    if (fp == NULL)
        return NULL;
    fseek(fp, 0, SEEK_END);
    long l = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    buf = malloc(l > 0 ? (size_t)l : 1);
    *len = buf ? fread(buf, 1, (size_t)l, fp) : 0;
    fclose(fp);
    return buf;
}

static void write_bytes(const char *p, const void *buf, size_t len) {
    FILE *fp = fopen(p, "wb");
    CHECK(fp != NULL);
    if (fp != NULL) {
        CHECK(fwrite(buf, 1, len, fp) == len);
        fclose(fp);
    }
}

/* Mappings of `p` in this process. */
static int mappings_of(const char *p) {
    FILE *fp = fopen("/proc/self/maps", "r");
    char line[1024];
    int n = 0;
    if (fp == NULL)
        return -1;
    while (fgets(line, sizeof line, fp) != NULL)
        if (strstr(line, p) != NULL)
            n++;
    fclose(fp);
    return n;
}

/* Files in dir whose name contains ".tmp-". */
static int temp_files(void) {
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    while (d != NULL && (e = readdir(d)) != NULL)
        if (strstr(e->d_name, ".tmp-") != NULL)
            n++;
    if (d != NULL)
        closedir(d);
    return n;
}

static bool same_answers(const amq_filter *a, const amq_filter *b) {
    uint64_t s = 7;
    for (int i = 0; i < 4000; i++) {
        uint64_t k = check_next(&s);
        if (amq_filter_contains(a, &k, sizeof k) !=
            amq_filter_contains(b, &k, sizeof k))
            return false;
    }
    return true;
}

/* Every type: the file is amq_filter_save's frame (written from the
 * object's table in pieces, or by the type's own payload writer), owner-only
 * exactly when keyed. */
static void test_save_bytes_and_mode(void) {
    for (size_t i = 0; i < amq_filter_type_count(); i++) {
        const char *spec = amq_filter_type_at(i)->name;
        for (int keyed = 0; keyed < 2; keyed++) {
            amq_filter *f = make_filter(spec, 1000, keyed);
            if (f == NULL)
                continue;
            size_t size = amq_filter_serialized_size(f), len = 0;
            uint8_t *want = malloc(size);
            CHECK_STATUS(amq_filter_save(f, want, size, NULL), AMQ_OK);
            snprintf(path, sizeof path, "%s/%s-%d.amq", dir, spec, keyed);
            CHECK_STATUS(amq_filter_save_file(f, path, NULL), AMQ_OK);
            uint8_t *got = read_file(path, &len);
            CHECK_MSG(got != NULL && len == size &&
                          memcmp(got, want, size) == 0,
                      "%s: file differs from amq_filter_save", spec);
            struct stat sb;
            CHECK(stat(path, &sb) == 0);
            mode_t mode = sb.st_mode & 0777;
            CHECK_MSG(keyed ? mode == 0600
                            : (mode & 0600) == 0600 && (mode & 0111) == 0,
                      "%s keyed=%d: mode %o", spec, keyed, mode);
            free(got);
            free(want);
            amq_filter_free(f);
        }
    }
    CHECK(temp_files() == 0);
}

static void test_save_failures(void) {
    amq_filter *f = make_filter("blocked", 500, false);
    amq_diag diag = {0};
    snprintf(path, sizeof path, "%s/no-such-dir/f.amq", dir);
    CHECK_STATUS(amq_filter_save_file(f, path, &diag), AMQ_ERR_IO);
    CHECK_MSG(strstr(diag.message, "no-such-dir") != NULL, "diag: %s",
              diag.message);
    /* Replacing a directory fails at the rename: the directory stays, and
     * the temporary file is removed. */
    snprintf(path, sizeof path, "%s/a-dir", dir);
    CHECK(mkdir(path, 0755) == 0);
    memset(&diag, 0, sizeof diag);
    CHECK_STATUS(amq_filter_save_file(f, path, &diag), AMQ_ERR_IO);
    struct stat sb;
    CHECK(stat(path, &sb) == 0 && S_ISDIR(sb.st_mode));
    CHECK(temp_files() == 0);
    CHECK(rmdir(path) == 0);
    CHECK_STATUS(amq_filter_save_file(f, "", NULL), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_filter_save_file(NULL, path, NULL), AMQ_ERR_INVALID);
    /* Overwriting an existing file replaces it whole. */
    snprintf(path, sizeof path, "%s/over.amq", dir);
    write_bytes(path, "old contents", 12);
    CHECK_STATUS(amq_filter_save_file(f, path, NULL), AMQ_OK);
    amq_filter *g = NULL;
    CHECK_STATUS(amq_filter_load_file(path, NULL, &g, NULL), AMQ_OK);
    CHECK(g != NULL && same_answers(f, g));
    amq_filter_free(g);
    amq_filter_free(f);
}

static void test_open_view(void) {
    const char *specs[] = {"sbbf", "bloom",      "cuckoo",
                           "cqf",  "compressed", "scalable"};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        amq_filter *f = make_filter(specs[i], 2000, false), *v = NULL;
        snprintf(path, sizeof path, "%s/view-%s.amq", dir, specs[i]);
        CHECK_STATUS(amq_filter_save_file(f, path, NULL), AMQ_OK);
        CHECK_STATUS(amq_filter_open_file(path, NULL, &v, NULL), AMQ_OK);
        CHECK_MSG(v != NULL && amq_filter_is_view(v), "%s: not a view",
                  specs[i]);
        CHECK(mappings_of(path) == 1);
        CHECK(v != NULL && same_answers(f, v));
        CHECK(v != NULL && amq_filter_items(v) == amq_filter_items(f));
        uint64_t k = 12345;
        if (v != NULL)
            CHECK_STATUS(amq_filter_add(v, &k, sizeof k), AMQ_ERR_READONLY);
        /* The file may be replaced while the view reads the old inode. */
        CHECK_STATUS(amq_filter_save_file(f, path, NULL), AMQ_OK);
        CHECK(v != NULL && same_answers(f, v));
        amq_filter_free(v);
        CHECK_MSG(mappings_of(path) == 0, "%s: mapping left after free",
                  specs[i]);
        amq_filter *c = NULL;
        CHECK_STATUS(amq_filter_load_file(path, NULL, &c, NULL), AMQ_OK);
        CHECK(c != NULL && !amq_filter_is_view(c) && same_answers(f, c));
        CHECK(mappings_of(path) == 0);
        if (c != NULL)
            CHECK_STATUS(amq_filter_add(c, &k, sizeof k), AMQ_OK);
        amq_filter_free(c);
        amq_filter_free(f);
    }
}

/* ---- a counting allocator that fails the N-th allocation ----------------- */

typedef struct fail_alloc {
    long calls, fail_at, live;
} fail_alloc;

static void *fa_alloc(void *ctx, size_t n) {
    fail_alloc *a = ctx;
    if (++a->calls == a->fail_at)
        return NULL;
    void *p = malloc(n);
    if (p != NULL)
        a->live++;
    return p;
}
static void *fa_realloc(void *ctx, void *p, size_t old, size_t n) {
    fail_alloc *a = ctx;
    (void)old;
    if (p == NULL)
        return fa_alloc(ctx, n);
    if (++a->calls == a->fail_at)
        return NULL;
    return realloc(p, n);
}
static void fa_free(void *ctx, void *p, size_t n) {
    fail_alloc *a = ctx;
    (void)n;
    if (p != NULL)
        a->live--;
    free(p);
}

static void test_open_oom(void) {
    amq_filter *f = make_filter("compressed", 3000, false);
    snprintf(path, sizeof path, "%s/oom.amq", dir);
    CHECK_STATUS(amq_filter_save_file(f, path, NULL), AMQ_OK);
    bool done = false;
    for (long n = 1; n < 64 && !done; n++) {
        fail_alloc fa = {0, n, 0};
        amq_allocator al = {fa_alloc, fa_realloc, fa_free, &fa};
        amq_options opt = {.allocator = &al};
        amq_filter *v = NULL;
        amq_status st = amq_filter_open_file(path, &opt, &v, NULL);
        CHECK_MSG(st == AMQ_OK || st == AMQ_ERR_NOMEM, "fail at %ld: %s", n,
                  amq_status_name(st));
        if (st == AMQ_OK) {
            CHECK(same_answers(f, v));
            done = fa.calls < n; /* no allocation failed: all N covered */
        } else {
            CHECK(v == NULL);
        }
        amq_filter_free(v);
        CHECK_MSG(fa.live == 0, "fail at %ld: %ld blocks leaked", n, fa.live);
        CHECK_MSG(mappings_of(path) == 0, "fail at %ld: mapping leaked", n);
    }
    CHECK(done);
    amq_filter_free(f);
}

static void test_bad_files(void) {
    amq_filter *f = make_filter("blocked", 1000, false), *g = NULL;
    amq_diag diag = {0};
    snprintf(path, sizeof path, "%s/missing.amq", dir);
    CHECK_STATUS(amq_filter_open_file(path, NULL, &g, &diag), AMQ_ERR_IO);
    CHECK(g == NULL && strstr(diag.message, "missing.amq") != NULL);
    CHECK_STATUS(amq_filter_open_file(dir, NULL, &g, NULL), AMQ_ERR_IO);
    snprintf(path, sizeof path, "%s/empty.amq", dir);
    write_bytes(path, "", 0);
    CHECK_STATUS(amq_filter_open_file(path, NULL, &g, NULL), AMQ_ERR_CORRUPT);
    size_t size = amq_filter_serialized_size(f);
    uint8_t *buf = malloc(size);
    CHECK_STATUS(amq_filter_save(f, buf, size, NULL), AMQ_OK);
    snprintf(path, sizeof path, "%s/trunc.amq", dir);
    write_bytes(path, buf, size - 1);
    CHECK_STATUS(amq_filter_open_file(path, NULL, &g, NULL), AMQ_ERR_CORRUPT);
    CHECK_STATUS(amq_filter_load_file(path, NULL, &g, NULL), AMQ_ERR_CORRUPT);
    CHECK(mappings_of(path) == 0);
    buf[size / 2] ^= 0x40;
    snprintf(path, sizeof path, "%s/flip.amq", dir);
    write_bytes(path, buf, size);
    CHECK_STATUS(amq_filter_open_file(path, NULL, &g, NULL), AMQ_ERR_CHECKSUM);
    CHECK(g == NULL && mappings_of(path) == 0);
    CHECK_STATUS(amq_filter_open_file(NULL, NULL, &g, NULL), AMQ_ERR_INVALID);
    free(buf);
    amq_filter_free(f);
}

/* A pipe cannot be mapped: the frame is read to its end and loaded. */
static void test_pipe(void) {
    amq_filter *f = make_filter("cuckoo", 1000, true), *g = NULL;
    size_t size = amq_filter_serialized_size(f);
    uint8_t *buf = malloc(size);
    CHECK_STATUS(amq_filter_save(f, buf, size, NULL), AMQ_OK);
    snprintf(path, sizeof path, "%s/fifo", dir);
    CHECK(mkfifo(path, 0600) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(path, O_WRONLY);
        size_t off = 0;
        while (fd >= 0 && off < size) {
            ssize_t w = write(fd, buf + off, size - off);
            if (w <= 0)
                break;
            off += (size_t)w;
        }
        _exit(off == size ? 0 : 1);
    }
    CHECK(pid > 0);
    CHECK_STATUS(amq_filter_open_file(path, NULL, &g, NULL), AMQ_OK);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
          WEXITSTATUS(status) == 0);
    CHECK(g != NULL && !amq_filter_is_view(g) && same_answers(f, g));
    amq_filter_free(g);
    amq_filter_free(f);
    free(buf);
}

static void test_hash_batch(void) {
    const char *keys = "alphabetagammadelta";
    size_t off[] = {0, 5, 9, 9, 14, 19};
    uint64_t out[5] = {0}, want;
    amq_hasher h;
    uint8_t key[AMQ_HASH_KEY_BYTES] = {1, 2, 3};
    for (int kind = AMQ_HASH_XXH3; kind <= AMQ_HASH_SIPHASH; kind++) {
        CHECK_STATUS(amq_hasher_init(&h, (amq_hash_kind)kind, 99, key), AMQ_OK);
        CHECK_STATUS(amq_hash64_batch(&h, keys, off, 5, out), AMQ_OK);
        for (int i = 0; i < 5; i++) {
            want = amq_hash64(&h, keys + off[i], off[i + 1] - off[i]);
            CHECK_MSG(out[i] == want, "kind %d key %d", kind, i);
        }
    }
    size_t bad[] = {0, 5, 4, 9, 14, 19};
    memset(out, 0, sizeof out);
    CHECK_STATUS(amq_hash64_batch(&h, keys, bad, 5, out), AMQ_ERR_INVALID);
    CHECK(out[0] == 0 && out[4] == 0); /* nothing written */
    CHECK_STATUS(amq_hash64_batch(&h, NULL, off, 5, out), AMQ_ERR_INVALID);
    size_t empties[] = {3, 3, 3};
    CHECK_STATUS(amq_hash64_batch(&h, NULL, empties, 2, out), AMQ_OK);
    CHECK(out[0] == amq_hash64(&h, NULL, 0) && out[1] == out[0]);
    CHECK_STATUS(amq_hash64_batch(&h, keys, off, 0, NULL), AMQ_OK);
}

/* Fixed-stride keys hash as the same bytes hashed one by one: whole
 * records (8-byte integers) and records cut to their lengths. */
static void test_hash_strided(void) {
    const uint64_t ints[4] = {0, 1, 0xffffffffffffffffull, 1234567};
    const char recs[] = "ab\0\0xyz\0\0\0\0\0wxyz"; /* stride 4 */
    const size_t lens[4] = {2, 3, 0, 4}, too_long[2] = {2, 5};
    uint64_t out[4] = {0};
    amq_hasher h;
    uint8_t key[AMQ_HASH_KEY_BYTES] = {7};
    for (int kind = AMQ_HASH_XXH3; kind <= AMQ_HASH_SIPHASH; kind++) {
        CHECK_STATUS(amq_hasher_init(&h, (amq_hash_kind)kind, 5, key), AMQ_OK);
        CHECK_STATUS(amq_hash64_strided(&h, ints, 8, NULL, 4, out), AMQ_OK);
        for (int i = 0; i < 4; i++)
            CHECK_MSG(out[i] == amq_hash64(&h, &ints[i], 8), "kind %d int %d",
                      kind, i);
        CHECK_STATUS(amq_hash64_strided(&h, recs, 4, lens, 4, out), AMQ_OK);
        for (int i = 0; i < 4; i++)
            CHECK_MSG(out[i] == amq_hash64(&h, recs + 4 * i, lens[i]),
                      "kind %d record %d", kind, i);
    }
    memset(out, 0, sizeof out);
    CHECK_STATUS(amq_hash64_strided(&h, recs, 4, too_long, 2, out),
                 AMQ_ERR_INVALID);
    CHECK(out[0] == 0); /* nothing written */
    CHECK_STATUS(amq_hash64_strided(&h, NULL, 8, NULL, 1, out),
                 AMQ_ERR_INVALID);
    CHECK_STATUS(amq_hash64_strided(NULL, ints, 8, NULL, 1, out),
                 AMQ_ERR_INVALID);
    CHECK_STATUS(amq_hash64_strided(&h, NULL, 8, NULL, 0, NULL), AMQ_OK);
}

static void remove_dir(void) {
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[512];
    while (d != NULL && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    if (d != NULL)
        closedir(d);
    rmdir(dir);
}

int main(void) {
    if (mkdtemp(dir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    test_save_bytes_and_mode();
    test_save_failures();
    test_open_view();
    test_open_oom();
    test_bad_files();
    test_pipe();
    test_hash_batch();
    test_hash_strided();
    remove_dir();
    return check_report("test_file");
}
