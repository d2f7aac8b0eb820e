/*
 * ldb_harness.c — see ldb_harness.h. Spoiling decodes only the few table
 * fields it needs, each bounds-checked against the file: a table that
 * does not parse is an error, never a write outside the data region.
 */
#include "ldb_harness.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define FOOTER 48
#define MAGIC 0xdb4775248b80fb57ULL

static int varint(const uint8_t **p, const uint8_t *end, uint64_t *out) {
    uint64_t v = 0;
    for (int shift = 0; shift <= 63 && *p < end; shift += 7) {
        uint8_t b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return -1;
}

static uint32_t le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

/* The filter block's offset from the metaindex block, or `fallback`. */
static int filter_offset(const uint8_t *blk, uint64_t size, uint64_t fallback,
                         uint64_t *out) {
    char key[256];
    size_t klen = 0;
    *out = fallback;
    if (size < 4)
        return -1;
    uint64_t restarts = le32(blk + size - 4);
    if (restarts > (size - 4) / 4)
        return -1;
    const uint8_t *p = blk, *end = blk + size - 4 - 4 * restarts;
    while (p < end) {
        uint64_t shared, own, vlen;
        if (varint(&p, end, &shared) || varint(&p, end, &own) ||
            varint(&p, end, &vlen) || shared > klen ||
            own > sizeof key - shared || own + vlen > (uint64_t)(end - p))
            return -1;
        memcpy(key + shared, p, own);
        klen = shared + own;
        p += own;
        const uint8_t *v = p;
        p += vlen;
        if (klen > 7 && memcmp(key, "filter.", 7) == 0)
            return varint(&v, p, out);
    }
    return 0;
}

static int spoil_file(const char *path) {
    FILE *f = fopen(path, "r+b");
    long size;
    uint8_t foot[FOOTER];
    int rc = -1;
    if (f == NULL || fseek(f, 0, SEEK_END) || (size = ftell(f)) < FOOTER ||
        fseek(f, size - FOOTER, SEEK_SET) ||
        fread(foot, 1, FOOTER, f) != FOOTER)
        goto out;
    uint64_t magic = (uint64_t)le32(foot + 40) | (uint64_t)le32(foot + 44)
                                                     << 32;
    const uint8_t *p = foot, *end = foot + 40;
    uint64_t moff, msize, ioff, isize, data_end;
    if (magic != MAGIC || varint(&p, end, &moff) || varint(&p, end, &msize) ||
        varint(&p, end, &ioff) || varint(&p, end, &isize) ||
        moff + msize > (uint64_t)size || msize > (1u << 24))
        goto out;
    uint8_t *meta = malloc(msize ? msize : 1);
    if (meta == NULL || fseek(f, (long)moff, SEEK_SET) ||
        fread(meta, 1, msize, f) != msize ||
        filter_offset(meta, msize, moff, &data_end) || data_end > moff) {
        free(meta);
        goto out;
    }
    free(meta);
    uint8_t buf[1 << 16];
    for (uint64_t at = 0; at < data_end;) {
        size_t n =
            data_end - at < sizeof buf ? (size_t)(data_end - at) : sizeof buf;
        if (fseek(f, (long)at, SEEK_SET) || fread(buf, 1, n, f) != n)
            goto out;
        for (size_t i = 0; i < n; i++)
            buf[i] ^= 0xa5;
        if (fseek(f, (long)at, SEEK_SET) || fwrite(buf, 1, n, f) != n)
            goto out;
        at += n;
    }
    rc = 0;
out:
    if (f != NULL && fclose(f) != 0)
        rc = -1;
    if (rc != 0)
        fprintf(stderr, "ldb_harness: %s: not a table this tool can read\n",
                path);
    return rc;
}

static int is_table(const char *name) {
    size_t n = strlen(name);
    return n > 4 && (strcmp(name + n - 4, ".ldb") == 0 ||
                     strcmp(name + n - 4, ".sst") == 0);
}

/* Call fn on every table file; sum of the non-negative results, or -1. */
static long long each_table(const char *dir, long long (*fn)(const char *)) {
    DIR *d = opendir(dir);
    long long total = 0;
    if (d == NULL)
        return -1;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        char path[4096];
        if (!is_table(e->d_name))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        long long r = fn(path);
        if (r < 0) {
            total = -1;
            break;
        }
        total += r;
    }
    closedir(d);
    return total;
}

static long long spoil_one(const char *path) {
    return spoil_file(path) == 0 ? 1 : -1;
}

static long long size_one(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

int ldb_spoil_data_blocks(const char *dir) {
    return (int)each_table(dir, spoil_one);
}

long long ldb_table_bytes(const char *dir) { return each_table(dir, size_one); }

int ldb_remove_dir(const char *dir) {
    DIR *d = opendir(dir);
    if (d == NULL)
        return -1;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        char path[4096];
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    return rmdir(dir);
}

/* ---- databases ----------------------------------------------------------- */

static uint64_t mix(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void ldb_key(const ldb_setup *s, uint64_t j, char *buf) {
    uint64_t x = j;
    if (s->random_keys)
        snprintf(buf, 24, "%016llx", (unsigned long long)mix(&x));
    else
        snprintf(buf, 24, "k%015llu",
                 (unsigned long long)(j % 1000000000000000ULL));
}

int ldb_temp_dir(char *buf, size_t cap, const char *tag) {
    const char *tmp = getenv("TMPDIR");
    snprintf(buf, cap, "%s/amq-%s-XXXXXX", tmp ? tmp : "/tmp", tag);
    return mkdtemp(buf) != NULL ? 0 : -1;
}

static leveldb_t *open_db(const ldb_setup *s, bool create) {
    leveldb_options_t *o = leveldb_options_create();
    char *err = NULL;
    leveldb_options_set_create_if_missing(o, create);
    leveldb_options_set_compression(o, leveldb_no_compression);
    leveldb_options_set_block_size(o, s->block_size);
    leveldb_options_set_write_buffer_size(o, 4 << 20);
    if (s->policy != NULL)
        leveldb_options_set_filter_policy(o, s->policy);
    leveldb_t *db = leveldb_open(o, s->dir, &err);
    leveldb_options_destroy(o);
    if (db == NULL)
        fprintf(stderr, "ldb_harness: %s: %s\n", s->dir, err ? err : "?");
    leveldb_free(err);
    return db;
}

int ldb_fill(const ldb_setup *s, uint64_t seed) {
    leveldb_t *db = open_db(s, true);
    uint64_t *order = malloc(s->keys * sizeof *order);
    char *val = calloc(1, s->value_len + 1), key[24];
    leveldb_writeoptions_t *wo = leveldb_writeoptions_create();
    int rc = db && order && val ? 0 : -1;
    for (uint64_t i = 0; rc == 0 && i < s->keys; i++)
        order[i] = i;
    for (uint64_t i = s->keys; rc == 0 && i-- > 1;) {
        uint64_t j = mix(&seed) % (i + 1), t = order[i];
        order[i] = order[j], order[j] = t;
    }
    for (uint64_t i = 0; rc == 0 && i < s->keys; i++) {
        char *err = NULL;
        ldb_key(s, 2 * order[i], key);
        for (size_t b = 0; b < s->value_len; b++)
            val[b] = (char)('a' + (mix(&seed) % 26));
        leveldb_put(db, wo, key, 16, val, s->value_len, &err);
        if (err != NULL) {
            fprintf(stderr, "ldb_harness: put: %s\n", err);
            rc = -1;
        }
        leveldb_free(err);
    }
    if (rc == 0)
        leveldb_compact_range(db, NULL, 0, NULL, 0);
    leveldb_writeoptions_destroy(wo);
    if (db != NULL)
        leveldb_close(db);
    free(order);
    free(val);
    return rc;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int ldb_lookup(const ldb_setup *s, bool present, uint64_t n, bool verify,
               ldb_result *out) {
    leveldb_t *db = open_db(s, false);
    if (db == NULL)
        return -1;
    leveldb_readoptions_t *ro = leveldb_readoptions_create();
    leveldb_readoptions_set_verify_checksums(ro, verify);
    leveldb_readoptions_set_fill_cache(ro, 0);
    *out = (ldb_result){.lookups = n};
    char key[24];
    double t0 = now();
    for (uint64_t i = 0; i < n; i++) {
        size_t vlen = 0;
        char *err = NULL;
        ldb_key(s, 2 * (i % s->keys) + !present, key);
        char *v = leveldb_get(db, ro, key, 16, &vlen, &err);
        out->found += v != NULL;
        out->errors += err != NULL;
        leveldb_free(v);
        leveldb_free(err);
    }
    out->seconds = now() - t0;
    leveldb_readoptions_destroy(ro);
    leveldb_close(db);
    return 0;
}
