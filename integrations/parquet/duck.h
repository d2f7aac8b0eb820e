/*
 * duck.h — DuckDB's C library, loaded at run time (dlopen) for the
 * Parquet test and benchmark: DuckDB writes the files amq reads and
 * answers the questions amq's answers are checked against. Only the few
 * calls used are declared (their prototypes and the result's layout are
 * those of DuckDB's duckdb.h, C API v1); the library comes from npm
 * (scripts/fetch-duckdb.sh).
 */
#ifndef AMQ_DUCK_H
#define AMQ_DUCK_H

#include <stdbool.h>
#include <stdint.h>

typedef struct duck_result {
    uint64_t column_count, row_count, rows_changed;
    void *columns;
    char *error;
    void *internal;
} duck_result;

/* Load the library at path and open an in-memory database: false (with
 * the reason on stderr) when it cannot. */
bool duck_open(const char *path);
void duck_close(void);
/* Run sql into *r (duck_done frees it): false, the error printed and
 * nothing to free, when DuckDB refuses it. */
bool duck_query(const char *sql, duck_result *r);
/* Run sql and drop its result. */
bool duck_exec(const char *sql);
void duck_done(duck_result *r);
uint64_t duck_rows(duck_result *r);
int64_t duck_int(duck_result *r, uint64_t col, uint64_t row);
bool duck_bool(duck_result *r, uint64_t col, uint64_t row);

#endif
