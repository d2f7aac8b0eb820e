/*
 * range_scan.c — a range filter in front of RocksDB's range scans: the
 * workload of integrations/common/range_driver.h over RocksDB's C API.
 *
 * Keys are 8 bytes big-endian, so RocksDB's bytewise order is the
 * integers' order. The database is written through one write batch per
 * 10^5 keys without the WAL, flushed and compacted into SST files;
 * everything else is RocksDB's defaults (an 8 MB block cache). A scan
 * seeks one reused iterator to lo and reads every key up to hi.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rocksdb/c.h>

#include "range_driver.h"

typedef struct rdb {
    rocksdb_t *db;
    rocksdb_options_t *opt;
    rocksdb_readoptions_t *ro;
    rocksdb_iterator_t *it;
} rdb;

static void be64(uint64_t v, char out[8]) {
    for (int i = 7; i >= 0; i--, v >>= 8)
        out[i] = (char)(v & 0xff);
}

static uint64_t from_be64(const char *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | (uint8_t)p[i];
    return v;
}

static int failed(char *err, const char *what) {
    if (err == NULL)
        return 0;
    fprintf(stderr, "amq-rocksdb-range: %s: %s\n", what, err);
    free(err);
    return 1;
}

static void *fill(const char *dir, const uint64_t *keys, size_t n,
                  const uint8_t *vals) {
    char *err = NULL;
    rdb *r = calloc(1, sizeof *r);
    r->opt = rocksdb_options_create();
    rocksdb_options_set_create_if_missing(r->opt, 1);
    rocksdb_destroy_db(r->opt, dir, &err);
    free(err);
    err = NULL;
    r->db = rocksdb_open(r->opt, dir, &err);
    if (failed(err, "open"))
        return NULL;
    rocksdb_writeoptions_t *wo = rocksdb_writeoptions_create();
    rocksdb_writeoptions_disable_WAL(wo, 1);
    rocksdb_writebatch_t *wb = rocksdb_writebatch_create();
    for (size_t i = 0; i < n && err == NULL; i++) {
        char key[8];
        be64(keys[i], key);
        rocksdb_writebatch_put(wb, key, 8, (const char *)vals + 16 * i, 16);
        if ((i + 1) % 100000 == 0 || i + 1 == n) {
            rocksdb_write(r->db, wo, wb, &err);
            rocksdb_writebatch_clear(wb);
        }
    }
    rocksdb_writebatch_destroy(wb);
    rocksdb_writeoptions_destroy(wo);
    if (failed(err, "write"))
        return NULL;
    rocksdb_flushoptions_t *fo = rocksdb_flushoptions_create();
    rocksdb_flush(r->db, fo, &err);
    rocksdb_flushoptions_destroy(fo);
    if (failed(err, "flush"))
        return NULL;
    rocksdb_compact_range(r->db, NULL, 0, NULL, 0);
    r->ro = rocksdb_readoptions_create();
    r->it = rocksdb_create_iterator(r->db, r->ro);
    return r;
}

static uint64_t scan(void *db, uint64_t lo, uint64_t hi, uint64_t *bytes) {
    rdb *r = db;
    char key[8];
    uint64_t found = 0;
    be64(lo, key);
    for (rocksdb_iter_seek(r->it, key, 8); rocksdb_iter_valid(r->it);
         rocksdb_iter_next(r->it)) {
        size_t kl, vl;
        const char *kp = rocksdb_iter_key(r->it, &kl);
        if (kl != 8 || from_be64(kp) > hi)
            break;
        rocksdb_iter_value(r->it, &vl);
        *bytes += vl;
        found++;
    }
    return found;
}

static void close_db(void *db, const char *dir, int remove) {
    rdb *r = db;
    char *err = NULL;
    rocksdb_iter_destroy(r->it);
    rocksdb_readoptions_destroy(r->ro);
    rocksdb_close(r->db);
    if (remove)
        rocksdb_destroy_db(r->opt, dir, &err);
    free(err);
    rocksdb_options_destroy(r->opt);
    free(r);
}

int main(int argc, char **argv) {
    static const range_engine e = {"RocksDB 7.8", fill, scan, close_db};
    return range_driver_main(&e, argc, argv);
}
