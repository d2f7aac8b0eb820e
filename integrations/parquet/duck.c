/*
 * duck.c — the DuckDB calls of duck.h, resolved with dlsym.
 */
#include "duck.h"

#include <dlfcn.h>
#include <stdio.h>

typedef void *duck_handle;

static struct {
    void *lib;
    int (*open)(const char *, duck_handle *);
    int (*connect)(duck_handle, duck_handle *);
    int (*query)(duck_handle, const char *, duck_result *);
    const char *(*error)(duck_result *);
    uint64_t (*rows)(duck_result *);
    int64_t (*int64)(duck_result *, uint64_t, uint64_t);
    bool (*boolean)(duck_result *, uint64_t, uint64_t);
    void (*destroy)(duck_result *);
    void (*disconnect)(duck_handle *);
    void (*close)(duck_handle *);
    duck_handle db, con;
} D;

static bool sym(void **fn, const char *name) {
    *fn = dlsym(D.lib, name);
    if (*fn == NULL)
        fprintf(stderr, "duckdb: no symbol %s\n", name);
    return *fn != NULL;
}

bool duck_open(const char *path) {
    D.lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (D.lib == NULL) {
        fprintf(stderr, "duckdb: %s (scripts/fetch-duckdb.sh fetches it)\n",
                dlerror());
        return false;
    }
    if (!sym((void **)&D.open, "duckdb_open") ||
        !sym((void **)&D.connect, "duckdb_connect") ||
        !sym((void **)&D.query, "duckdb_query") ||
        !sym((void **)&D.error, "duckdb_result_error") ||
        !sym((void **)&D.rows, "duckdb_row_count") ||
        !sym((void **)&D.int64, "duckdb_value_int64") ||
        !sym((void **)&D.boolean, "duckdb_value_boolean") ||
        !sym((void **)&D.destroy, "duckdb_destroy_result") ||
        !sym((void **)&D.disconnect, "duckdb_disconnect") ||
        !sym((void **)&D.close, "duckdb_close"))
        return false;
    if (D.open(NULL, &D.db) != 0 || D.connect(D.db, &D.con) != 0) {
        fprintf(stderr, "duckdb: cannot open an in-memory database\n");
        return false;
    }
    return true;
}

void duck_close(void) {
    if (D.con != NULL)
        D.disconnect(&D.con);
    if (D.db != NULL)
        D.close(&D.db);
}

bool duck_query(const char *sql, duck_result *r) {
    if (D.query(D.con, sql, r) == 0)
        return true;
    fprintf(stderr, "duckdb: %s\n  in: %s\n", D.error(r), sql);
    D.destroy(r);
    return false;
}

bool duck_exec(const char *sql) {
    duck_result r;
    if (!duck_query(sql, &r))
        return false;
    D.destroy(&r);
    return true;
}

void duck_done(duck_result *r) { D.destroy(r); }
uint64_t duck_rows(duck_result *r) { return D.rows(r); }
int64_t duck_int(duck_result *r, uint64_t col, uint64_t row) {
    return D.int64(r, col, row);
}
bool duck_bool(duck_result *r, uint64_t col, uint64_t row) {
    return D.boolean(r, col, row);
}
