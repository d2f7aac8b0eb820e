/*
 * test_parquet.c — amq's Parquet reader (integrations/parquet) against
 * DuckDB, a real Parquet writer and reader. DuckDB's library is loaded at
 * run time from where scripts/fetch-duckdb.sh put it; the few C API calls
 * used are declared here. For files DuckDB writes (each codec it offers
 * that amq reads, data pages v1 and v2, nulls, dictionary-coded and plain
 * columns of every physical type it writes Bloom filters for):
 *   - the footer amq reads agrees with DuckDB's parquet_metadata (row
 *     groups, rows, which chunks have a Bloom filter);
 *   - for present and absent keys, amq's probe of every row group equals
 *     DuckDB's parquet_bloom_probe;
 *   - the values amq reads from each chunk are, as a set, the chunk's
 *     distinct values as DuckDB counts them, and each passes the chunk's
 *     Bloom filter (no present key missed);
 *   - the CLI's index over the files routes every present key to a set
 *     of row groups holding it, and agrees with the per-file filters on
 *     where an absent key may be.
 * Then corrupted footers are refused with a status, never a crash.
 * `test_parquet --seeds SCRATCH tests/fuzz/corpus/parquet` writes the
 * fuzz corpus.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "amq_parquet.h"
#include "parquet_impl.h"
#include "check.h"
#include "duck.h"

/* ---- the files ----------------------------------------------------------- */

typedef struct pq_case {
    const char *name, *options;
} pq_case;

/* Each file: 60000 rows, row groups of about 20000 (DuckDB rounds to its
 * vectors), columns with a dictionary (so a Bloom filter) and without. */
static const pq_case CASES[] = {
    {"snappy", "COMPRESSION snappy"},  {"zstd", "COMPRESSION zstd"},
    {"gzip", "COMPRESSION gzip"},      {"none", "COMPRESSION uncompressed"},
    {"lz4raw", "COMPRESSION lz4_raw"}, {"v2", "PARQUET_VERSION V2"},
};
#define N_CASES (sizeof CASES / sizeof CASES[0])
#define N_ROWS 60000

/* Columns: name, the SQL that makes them, how DuckDB writes a literal. */
typedef struct pq_col {
    const char *name, *sql, *cast;
} pq_col;

static const pq_col COLS[] = {
    {"k", "CASE WHEN i % 7 = 0 THEN NULL ELSE (i * 7919) % 3000 END", "BIGINT"},
    {"s", "'key-' || ((i * 31) % 2000)", "VARCHAR"},
    {"n", "((i * 13) % 500)::INTEGER", "INTEGER"},
    {"d", "((i % 300) * 0.5)::DOUBLE", "DOUBLE"},
    {"f", "(i % 100)::FLOAT", "FLOAT"},
    {"u", "'u' || i", "VARCHAR"},
    {"w", "i * 3", "BIGINT"},
    {"h", "(i * 0.25)::DOUBLE", "DOUBLE"},
    {"m", "(CASE WHEN i % 5 = 0 THEN NULL ELSE i * 11 END)::INTEGER",
     "INTEGER"},
    {"z", "CASE WHEN i % 3 = 0 THEN NULL ELSE 'z' || (i * 7) END", "VARCHAR"},
};
#define N_COLS (sizeof COLS / sizeof COLS[0])

static char g_dir[512];

static void file_path(char *out, size_t cap, const pq_case *c) {
    snprintf(out, cap, "%s/%s.parquet", g_dir, c->name);
}

static bool write_file(const pq_case *c) {
    char sql[2048], path[600];
    size_t at = 0;
    file_path(path, sizeof path, c);
    at += (size_t)snprintf(sql + at, sizeof sql - at, "COPY (SELECT ");
    for (size_t i = 0; i < N_COLS; i++)
        at += (size_t)snprintf(sql + at, sizeof sql - at, "%s%s AS %s",
                               i ? ", " : "", COLS[i].sql, COLS[i].name);
    snprintf(sql + at, sizeof sql - at,
             " FROM range(%d) t(i)) TO '%s' (FORMAT parquet, "
             "ROW_GROUP_SIZE 20000, %s)",
             N_ROWS, path, c->options);
    return duck_exec(sql);
}

/* ---- footer and probes -------------------------------------------------- */

static void check_footer(const pq_case *c, const amq_pq_file *f) {
    char sql[1024], path[600];
    duck_result r;
    file_path(path, sizeof path, c);
    CHECK(amq_pq_rows(f) == N_ROWS);
    CHECK(amq_pq_columns(f) == N_COLS);
    snprintf(sql, sizeof sql,
             "SELECT row_group_id, column_id, row_group_num_rows, "
             "bloom_filter_offset IS NOT NULL FROM parquet_metadata('%s') "
             "ORDER BY 1, 2",
             path);
    if (!duck_query(sql, &r)) {
        CHECK(false);
        return;
    }
    CHECK(duck_rows(&r) == amq_pq_groups(f) * N_COLS);
    for (uint64_t i = 0; i < duck_rows(&r); i++) {
        size_t g = (size_t)duck_int(&r, 0, i), col = (size_t)duck_int(&r, 1, i);
        const amq_pq_chunk *ch = amq_pq_chunk_at(f, g, col);
        CHECK(ch != NULL);
        if (ch == NULL)
            continue;
        CHECK(amq_pq_group_rows(f, g) == duck_int(&r, 2, i));
        CHECK_MSG((ch->bloom_offset >= 0) == duck_bool(&r, 3, i),
                  "%s group %zu column %zu", c->name, g, col);
    }
    duck_done(&r);
}

/* The key text of value v of column col (for amq) and its literal (for
 * DuckDB). */
static void key_text(const pq_col *col, int64_t v, char *text, size_t tn,
                     char *lit, size_t ln) {
    if (strcmp(col->cast, "VARCHAR") == 0) {
        snprintf(text, tn, "%s%" PRId64,
                 col->name[0] == 's' ? "key-" : col->name, v);
        snprintf(lit, ln, "'%s'", text);
    } else if (strcmp(col->cast, "DOUBLE") == 0 ||
               strcmp(col->cast, "FLOAT") == 0) {
        snprintf(text, tn, "%.1f", (double)v * 0.5);
        snprintf(lit, ln, "%s::%s", text, col->cast);
    } else {
        snprintf(text, tn, "%" PRId64, v);
        snprintf(lit, ln, "%s::%s", text, col->cast);
    }
}

/* amq's probe of every row group against parquet_bloom_probe, for keys
 * present (v below the column's range) and absent (v past it). */
static uint64_t check_probes(const pq_case *c, const amq_pq_file *f, size_t ci,
                             uint64_t *excluded) {
    const pq_col *col = &COLS[ci];
    const amq_pq_column *pc = amq_pq_column_at(f, ci);
    char sql[1024], path[600], text[64], lit[96];
    uint64_t compared = 0;
    file_path(path, sizeof path, c);
    for (int64_t v = 0; v < 6000; v += 37) {
        uint8_t key[AMQ_PQ_KEY_MAX];
        size_t klen;
        duck_result r;
        key_text(col, v, text, sizeof text, lit, sizeof lit);
        CHECK_OK(amq_pq_encode_key(pc, text, strlen(text), key, &klen));
        uint64_t h = amq_pq_hash(key, klen);
        snprintf(sql, sizeof sql,
                 "SELECT row_group_id, bloom_filter_excludes FROM "
                 "parquet_bloom_probe('%s', '%s', %s) ORDER BY 1",
                 path, col->name, lit);
        if (!duck_query(sql, &r)) {
            CHECK(false);
            return compared;
        }
        CHECK(duck_rows(&r) == amq_pq_groups(f));
        for (uint64_t i = 0; i < duck_rows(&r); i++) {
            bool maybe = false;
            size_t g = (size_t)duck_int(&r, 0, i);
            bool excludes = duck_bool(&r, 1, i);
            CHECK_OK(amq_pq_probe(f, g, ci, h, &maybe, NULL));
            CHECK_MSG(maybe == !excludes,
                      "%s.%s = %s, group %zu: amq %d duckdb %d", c->name,
                      col->name, text, g, maybe, !excludes);
            *excluded += excludes;
            compared++;
        }
        duck_done(&r);
    }
    return compared;
}

/* ---- values -------------------------------------------------------------- */

typedef struct value_set {
    uint64_t *h;
    size_t n, cap;
    const amq_pq_file *f;
    size_t g, c;
    uint64_t missed; /* values the chunk's Bloom filter refuses */
} value_set;

static bool take_value(void *ctx, const uint8_t *v, size_t len) {
    value_set *s = ctx;
    uint64_t h = amq_pq_hash(v, len);
    bool maybe = false;
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 1024;
        s->h = realloc(s->h, s->cap * sizeof *s->h);
        if (s->h == NULL)
            return false;
    }
    s->h[s->n++] = h;
    if (amq_pq_probe(s->f, s->g, s->c, h, &maybe, NULL) != AMQ_OK || !maybe)
        s->missed++;
    return true;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static size_t distinct(uint64_t *h, size_t n) {
    size_t d = 0;
    qsort(h, n, sizeof *h, cmp_u64);
    for (size_t i = 0; i < n; i++)
        d += i == 0 || h[i] != h[i - 1];
    return d;
}

/* Each chunk's values as amq reads them: as many distinct as DuckDB
 * counts in the group's rows; none refused by the chunk's filter. */
static void check_values(const pq_case *c, const amq_pq_file *f, size_t ci) {
    char sql[1024], path[600];
    int64_t first = 0;
    file_path(path, sizeof path, c);
    for (size_t g = 0; g < amq_pq_groups(f); g++) {
        value_set s = {.f = f, .g = g, .c = ci};
        amq_pq_diag diag = {0, ""};
        duck_result r;
        int64_t rows = amq_pq_group_rows(f, g);
        amq_status st = amq_pq_values(f, g, ci, take_value, &s, &diag);
        CHECK_MSG(st == AMQ_OK, "%s.%s group %zu: %s at %" PRIu64 ": %s",
                  c->name, COLS[ci].name, g, amq_status_name(st), diag.offset,
                  diag.what);
        snprintf(sql, sizeof sql,
                 "SELECT count(DISTINCT %s) FROM read_parquet('%s', "
                 "file_row_number = true) WHERE file_row_number >= %" PRId64
                 " AND file_row_number < %" PRId64,
                 COLS[ci].name, path, first, first + rows);
        first += rows;
        if (st != AMQ_OK || !duck_query(sql, &r)) {
            free(s.h);
            continue;
        }
        size_t want = (size_t)duck_int(&r, 0, 0);
        duck_done(&r);
        CHECK(s.missed == 0);
        CHECK_MSG(distinct(s.h, s.n) == want,
                  "%s.%s group %zu: %zu values, "
                  "duckdb counts %zu",
                  c->name, COLS[ci].name, g, distinct(s.h, s.n), want);
        free(s.h);
    }
}

/* ---- corrupt input ------------------------------------------------------ */

static uint8_t *slurp(const char *path, size_t *len) {
    FILE *fp = fopen(path, "rb");
    uint8_t *buf = NULL;
    long n;
    if (fp == NULL || fseek(fp, 0, SEEK_END) != 0 || (n = ftell(fp)) < 0 ||
        fseek(fp, 0, SEEK_SET) != 0 || (buf = malloc((size_t)n + 1)) == NULL ||
        fread(buf, 1, (size_t)n, fp) != (size_t)n) {
        free(buf);
        buf = NULL;
    } else
        *len = (size_t)n;
    if (fp != NULL)
        fclose(fp);
    return buf;
}

/* Every byte of the footer flipped, and every truncation of it: a
 * status, never a crash; what opens still reads its filters or refuses
 * them with a status. */
static void check_corrupt(const pq_case *c) {
    char path[600];
    size_t len = 0;
    uint64_t refused = 0, opened = 0;
    file_path(path, sizeof path, c);
    uint8_t *buf = slurp(path, &len);
    CHECK(buf != NULL && len > 12);
    if (buf == NULL)
        return;
    uint32_t mlen = (uint32_t)buf[len - 8] | (uint32_t)buf[len - 7] << 8 |
                    (uint32_t)buf[len - 6] << 16 | (uint32_t)buf[len - 5] << 24;
    size_t from = len - 8 - mlen;
    for (size_t i = from; i < len; i++) {
        for (int t = 0; t < 2; t++) {
            amq_pq_file *f = NULL;
            uint8_t old = buf[i];
            buf[i] = (uint8_t)(t == 0 ? old ^ 0x5a : old + 1);
            amq_status st = amq_pq_open_memory(buf, len, &f, NULL);
            if (st == AMQ_OK) {
                opened++;
                for (size_t g = 0; g < amq_pq_groups(f); g++) {
                    bool maybe;
                    for (size_t col = 0; col < amq_pq_columns(f); col++)
                        (void)amq_pq_probe(f, g, col, 12345, &maybe, NULL);
                }
                amq_pq_close(f);
            } else
                refused++;
            buf[i] = old;
        }
    }
    for (size_t cut = 0; cut < len; cut += 1 + cut / 16) {
        amq_pq_file *f = NULL;
        amq_status st = amq_pq_open_memory(buf, len - cut, &f, NULL);
        CHECK(st != AMQ_OK || cut == 0);
        amq_pq_close(f);
    }
    printf("%s: %" PRIu64 " corrupted footers refused, %" PRIu64 " opened\n",
           c->name, refused, opened);
    CHECK(refused > 0);
    free(buf);
}

/* ---- an encoding DuckDB does not write ------------------------------------ */

typedef struct strings {
    char v[4][8];
    size_t n;
} strings;

static bool take_string(void *ctx, const uint8_t *v, size_t len) {
    strings *s = ctx;
    if (s->n < 4 && len < 8) {
        memcpy(s->v[s->n], v, len);
        s->v[s->n][len] = '\0';
    }
    s->n++;
    return true;
}

/* DELTA_BYTE_ARRAY of "abc", "abd", "ab", made by hand from the spec:
 * prefix lengths 0, 2, 1 and suffixes "abc", "d", "b" (lengths 3, 1, 1),
 * each list delta-packed in one block of 4 miniblocks of 32. */
static const uint8_t DBA_PAGE[] = {
    0x80, 0x01, 0x04, 0x03, 0x00, 0x01, 0x02, 0,    0,    0,    0x03,
    0,    0,    0,    0,    0,    0,    0,    0x80, 0x01, 0x04, 0x03,
    0x06, 0x03, 0x02, 0,    0,    0,    0x08, 0,    0,    0,    0,
    0,    0,    0,    'a',  'b',  'c',  'd',  'b'};

static void check_delta_byte_array(void) {
    const uint8_t *page = DBA_PAGE;
    const size_t page_len = sizeof DBA_PAGE;
    amq_pq_column col = {"c", AMQ_PQ_BYTE_ARRAY, 0, 0, 0};
    strings s = {.n = 0};
    bool stop = false;
    CHECK_OK(amq__pq_decode(&col, AMQ__PQ_DELTA_BYTE_ARRAY, page, page_len, 3,
                            take_string, &s, &stop));
    CHECK(s.n == 3 && strcmp(s.v[0], "abc") == 0 &&
          strcmp(s.v[1], "abd") == 0 && strcmp(s.v[2], "ab") == 0);
    for (size_t cut = 1; cut < page_len; cut++) {
        s.n = 0;
        CHECK(amq__pq_decode(&col, AMQ__PQ_DELTA_BYTE_ARRAY, page,
                             page_len - cut, 3, take_string, &s,
                             &stop) == AMQ_ERR_CORRUPT);
    }
    CHECK(amq__pq_decode(&col, AMQ__PQ_DELTA_BYTE_ARRAY, page, page_len, 4,
                         take_string, &s, &stop) == AMQ_ERR_CORRUPT);
}

/* ---- the CLI's index ---------------------------------------------------- */

/* The hashes of the lines of path, sorted; *n of them. */
static uint64_t *line_hashes(const char *path, size_t *n) {
    FILE *fp = fopen(path, "r");
    char line[1024];
    uint64_t *h = NULL;
    size_t cap = 0;
    *n = 0;
    while (fp != NULL && fgets(line, sizeof line, fp) != NULL) {
        if (*n == cap) {
            cap = cap ? 2 * cap : 1024;
            h = realloc(h, cap * sizeof *h);
            if (h == NULL)
                break;
        }
        h[(*n)++] = amq_pq_hash(line, strlen(line));
    }
    if (fp != NULL)
        fclose(fp);
    if (h != NULL)
        qsort(h, *n, sizeof *h, cmp_u64);
    return h;
}

static bool has_line(const uint64_t *h, size_t n, const char *line) {
    uint64_t x = amq_pq_hash(line, strlen(line));
    return h != NULL && bsearch(&x, h, n, sizeof *h, cmp_u64) != NULL;
}

/* `amq parquet index` over every file for column ci, then `lookup` and
 * `probe` of present and absent keys: both name every row group that
 * holds a present key; for absent keys, lookup names few (its bound). */
static void check_cli_index(size_t ci, int64_t present, int64_t absent) {
    const pq_col *col = &COLS[ci];
    char cmd[8192], files[4096] = "", keys[600], out[600], probe[600];
    char text[64], lit[96], line[1024];
    size_t at = 0, nl = 0, np = 0, want = 0, missed = 0, pmissed = 0;
    for (size_t i = 0; i < N_CASES; i++) {
        char path[600];
        file_path(path, sizeof path, &CASES[i]);
        at += (size_t)snprintf(files + at, sizeof files - at, " %s", path);
    }
    snprintf(keys, sizeof keys, "%s/keys-%s", g_dir, col->name);
    snprintf(out, sizeof out, "%s/lookup-%s", g_dir, col->name);
    snprintf(probe, sizeof probe, "%s/probe-%s", g_dir, col->name);
    FILE *fp = fopen(keys, "w");
    CHECK(fp != NULL);
    if (fp == NULL)
        return;
    for (int64_t v = 0; v < present + absent; v++) {
        key_text(col, v < present ? v : 1000000 + v, text, sizeof text, lit,
                 sizeof lit);
        fprintf(fp, "%s\n", text);
    }
    fclose(fp);
    snprintf(cmd, sizeof cmd,
             "%s parquet index -q --column %s -o %s/idx-%s%s && "
             "%s parquet lookup -k %s %s/idx-%s > %s; "
             "%s parquet probe --column %s -k %s%s > %s",
             AMQ_CLI, col->name, g_dir, col->name, files, AMQ_CLI, keys, g_dir,
             col->name, out, AMQ_CLI, col->name, keys, files, probe);
    CHECK_MSG(system(cmd) == 0, "%.200s", cmd);
    uint64_t *lh = line_hashes(out, &nl), *ph = line_hashes(probe, &np);
    for (size_t i = 0; i < N_CASES; i++) {
        char path[600];
        amq_pq_file *f = NULL;
        file_path(path, sizeof path, &CASES[i]);
        if (amq_pq_open(path, &f, NULL) != AMQ_OK)
            continue;
        for (size_t g = 0; g < amq_pq_groups(f); g++) {
            value_set s = {.f = f, .g = g, .c = ci};
            if (amq_pq_values(f, g, ci, take_value, &s, NULL) != AMQ_OK)
                CHECK(false);
            qsort(s.h, s.n, sizeof *s.h, cmp_u64);
            for (int64_t v = 0; v < present; v++) {
                uint8_t key[AMQ_PQ_KEY_MAX];
                size_t klen;
                key_text(col, v, text, sizeof text, lit, sizeof lit);
                amq_pq_encode_key(amq_pq_column_at(f, ci), text, strlen(text),
                                  key, &klen);
                uint64_t h = amq_pq_hash(key, klen);
                if (s.h == NULL || !bsearch(&h, s.h, s.n, sizeof h, cmp_u64))
                    continue;
                snprintf(line, sizeof line, "%s\t%s\t%zu\n", text, path, g);
                want++;
                missed += !has_line(lh, nl, line);
                pmissed += !has_line(ph, np, line);
            }
            free(s.h);
        }
        amq_pq_close(f);
    }
    printf("index of %s: %zu (key, row group) pairs to find, %zu lines from "
           "lookup, %zu from the Bloom filters\n",
           col->name, want, nl, np);
    CHECK(want > 0);
    CHECK_MSG(missed == 0, "lookup missed %zu of %zu", missed, want);
    CHECK_MSG(pmissed == 0, "probe missed %zu of %zu", pmissed, want);
    /* absent keys: each wrong row group with probability <= 1% */
    CHECK(nl <= want + (size_t)absent / 10 + 5);
    free(lh);
    free(ph);
}

/* The CLI's refusals: exit 2 and a message naming what is wrong. */
static void check_cli_errors(void) {
    char cmd[4096], path[600], out[600];
    file_path(path, sizeof path, &CASES[0]);
    snprintf(out, sizeof out, "%s/errors", g_dir);
    struct {
        const char *args, *says;
    } cases[] = {
        {"parquet probe --column nosuch --key 1 %s", "no column 'nosuch'"},
        {"parquet probe --column w --key 1.5 %s", "not a value of type INT64"},
        {"parquet info %s.none", "No such file"},
        {"parquet lookup --key 1 %s", "catalog.tsv"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char args[1024];
        snprintf(args, sizeof args, cases[i].args, path);
        snprintf(cmd, sizeof cmd, "%s %s 2> %s", AMQ_CLI, args, out);
        int rc = system(cmd);
        size_t len = 0;
        uint8_t *msg = slurp(out, &len);
        CHECK_MSG(WIFEXITED(rc) && WEXITSTATUS(rc) == 2 && msg != NULL &&
                      strstr((char *)msg, cases[i].says) != NULL,
                  "amq %.60s: exit %d, %.100s", args, rc,
                  msg ? (char *)msg : "");
        free(msg);
    }
    /* an index whose file has changed is refused, not trusted */
    snprintf(cmd, sizeof cmd,
             "cp %s %s/stale.parquet && %s parquet index -q --column s -o "
             "%s/stale.idx %s/stale.parquet && echo x >> %s/stale.parquet && "
             "%s parquet lookup --key key-1 %s/stale.idx 2> %s",
             path, g_dir, AMQ_CLI, g_dir, g_dir, g_dir, AMQ_CLI, g_dir, out);
    int rc = system(cmd);
    size_t len = 0;
    uint8_t *msg = slurp(out, &len);
    CHECK_MSG(WIFEXITED(rc) && WEXITSTATUS(rc) == 2 && msg != NULL &&
                  strstr((char *)msg, "has changed") != NULL,
              "stale index: exit %d, %.100s", rc, msg ? (char *)msg : "");
    free(msg);
}

/* ---- filters amq adds ---------------------------------------------------- */

/* The same aggregate of two files, as DuckDB reads them. */
static bool same_rows(const char *a, const char *b) {
    char sql[2048];
    duck_result r;
    snprintf(sql, sizeof sql,
             "SELECT (SELECT count(*) || ',' || count(DISTINCT u) || ',' || "
             "sum(w) || ',' || count(m) FROM '%s') = (SELECT count(*) || ',' "
             "|| count(DISTINCT u) || ',' || sum(w) || ',' || count(m) FROM "
             "'%s')",
             a, b);
    if (!duck_query(sql, &r))
        return false;
    bool same = duck_bool(&r, 0, 0);
    duck_done(&r);
    return same;
}

/* amq_pq_add_filters on the columns DuckDB left without filters: DuckDB
 * reads the new file's rows as before, finds a filter in every row group
 * and probes it as amq does (present keys never excluded). */
static void check_add_filters(const pq_case *c) {
    static const size_t cols[] = {5, 8, 7}; /* u, m (nulls), h */
    char in[600], out[600], name[64];
    file_path(in, sizeof in, c);
    snprintf(name, sizeof name, "%s-filtered", c->name);
    pq_case fc = {name, c->options};
    file_path(out, sizeof out, &fc);
    for (size_t k = 0; k < sizeof cols / sizeof cols[0]; k++) {
        amq_pq_file *f = NULL, *g = NULL;
        amq_pq_filter_stats st;
        uint64_t excluded = 0;
        const char *src = k == 0 ? in : out; /* then in place */
        CHECK_OK(amq_pq_open(src, &f, NULL));
        if (f == NULL)
            continue;
        CHECK(amq_pq_chunk_at(f, 0, cols[k])->bloom_offset < 0);
        CHECK_OK(amq_pq_add_filters(f, cols[k], 0.01, out, &st, NULL));
        amq_pq_close(f);
        CHECK(st.groups == 3 && st.values > 0 && st.worst_bound < 0.02);
        CHECK_OK(amq_pq_open(out, &g, NULL));
        if (g == NULL)
            continue;
        for (size_t gi = 0; gi < amq_pq_groups(g); gi++)
            CHECK(amq_pq_chunk_at(g, gi, cols[k])->bloom_offset >= 0);
        check_footer(&fc, g);
        uint64_t compared = check_probes(&fc, g, cols[k], &excluded);
        CHECK(excluded > compared / 2);
        check_values(&fc, g, cols[k]);
        printf("%s: filters added for %s: %" PRIu64 " bytes, bound %.4f, "
               "%" PRIu64 " probes equal DuckDB's\n",
               name, COLS[cols[k]].name, st.bytes, st.worst_bound, compared);
        amq_pq_close(g);
    }
    CHECK(same_rows(in, out));
}

/* ---- the fuzz corpus ------------------------------------------------------ */

static bool write_seed(const char *dir, const char *name, uint8_t mode,
                       const uint8_t *a, size_t an, const uint8_t *b,
                       size_t bn) {
    char path[700];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *fp = fopen(path, "wb");
    bool ok = fp != NULL && fwrite(&mode, 1, 1, fp) == 1 &&
              fwrite(a, 1, an, fp) == an &&
              (bn == 0 || fwrite(b, 1, bn, fp) == bn);
    if (fp != NULL)
        ok = fclose(fp) == 0 && ok;
    return ok;
}

/* tests/fuzz/corpus/parquet (fuzz_parquet.c's modes): small files DuckDB
 * writes, one per codec and one of format v2, and a page body for each
 * decoder. */
static int write_seeds(const char *dir) {
    static const char *const codecs[] = {"snappy",       "zstd",    "gzip",
                                         "uncompressed", "lz4_raw", NULL};
    static const uint8_t plain[] = {6, 2, 1, 0, 0,   0,  'a',
                                    2, 0, 0, 0, 'b', 'c'};
    static const uint8_t split[] = {5, 2, 1,  2,  3,  4,  5,  6,  7,
                                    8, 9, 10, 11, 12, 13, 14, 15, 16};
    static const uint8_t strs[] = {6, 3}, ints[] = {1, 3};
    char sql[1024], path[700], name[64];
    bool ok = duck_open(AMQ_DUCKDB_LIB);
    for (int i = 0; ok && i < 6; i++) {
        size_t len = 0;
        snprintf(path, sizeof path, "%s/seed.parquet", g_dir);
        snprintf(
            sql, sizeof sql,
            "COPY (SELECT CASE WHEN i %% 7 = 0 THEN NULL ELSE i %% 13 END "
            "AS k, 'key-' || (i %% 9) AS s, (i * 0.5)::DOUBLE AS d, 'u' || "
            "i AS u, i::INTEGER AS n FROM range(120) t(i)) TO '%s' "
            "(FORMAT parquet, COMPRESSION %s%s)",
            path, codecs[i] ? codecs[i] : "uncompressed",
            codecs[i] ? "" : ", PARQUET_VERSION V2");
        uint8_t *buf = duck_exec(sql) ? slurp(path, &len) : NULL;
        snprintf(name, sizeof name, "file-%s", codecs[i] ? codecs[i] : "v2");
        ok = buf != NULL && write_seed(dir, name, 0, buf, len, NULL, 0);
        free(buf);
    }
    duck_close();
    /* mode 1 + encoding: PLAIN, BYTE_STREAM_SPLIT and the delta ones */
    ok = ok && write_seed(dir, "page-plain", 1, plain, sizeof plain, NULL, 0) &&
         write_seed(dir, "page-split", 10, split, sizeof split, NULL, 0) &&
         write_seed(dir, "page-delta-byte-array", 8, strs, sizeof strs,
                    DBA_PAGE, sizeof DBA_PAGE) &&
         write_seed(dir, "page-delta-length", 7, strs, sizeof strs,
                    DBA_PAGE + 18, sizeof DBA_PAGE - 18) &&
         write_seed(dir, "page-delta-ints", 6, ints, sizeof ints, DBA_PAGE, 18);
    return ok ? 0 : 1;
}

int main(int argc, char **argv) {
    bool seeds = argc > 1 && strcmp(argv[1], "--seeds") == 0;
    if (argc != (seeds ? 4 : 2)) {
        fprintf(stderr, "usage: test_parquet DIR | test_parquet --seeds "
                        "SCRATCH CORPUS\n");
        return 2;
    }
    if (seeds) {
        snprintf(g_dir, sizeof g_dir, "%s", argv[2]);
        mkdir(g_dir, 0755);
        return write_seeds(argv[3]);
    }
    snprintf(g_dir, sizeof g_dir, "%s", argv[1]);
    mkdir(g_dir, 0755);
    check_delta_byte_array();
    bool duck = duck_open(AMQ_DUCKDB_LIB);
    CHECK(duck);
    if (!duck)
        return check_report("parquet");
    for (size_t i = 0; i < N_CASES; i++) {
        const pq_case *c = &CASES[i];
        char path[600];
        amq_pq_file *f = NULL;
        amq_pq_diag diag = {0, ""};
        uint64_t compared = 0, excluded = 0;
        CHECK(write_file(c));
        file_path(path, sizeof path, c);
        amq_status st = amq_pq_open(path, &f, &diag);
        CHECK_MSG(st == AMQ_OK, "%s: %s at %" PRIu64 ": %s", c->name,
                  amq_status_name(st), diag.offset, diag.what);
        if (st != AMQ_OK)
            continue;
        check_footer(c, f);
        for (size_t ci = 0; ci < N_COLS; ci++) {
            compared += check_probes(c, f, ci, &excluded);
            check_values(c, f, ci);
        }
        printf("%s: %zu row groups, %" PRIu64 " probes equal DuckDB's "
               "(%" PRIu64 " excluded)\n",
               c->name, amq_pq_groups(f), compared, excluded);
        CHECK(excluded > compared / 4);
        amq_pq_close(f);
    }
    check_cli_errors();
    check_add_filters(&CASES[0]);
    check_add_filters(&CASES[5]);
    check_cli_index(1, 2500, 2000); /* s: in every row group; a dictionary */
    check_cli_index(5, 2000, 2000); /* u: in one row group; no Bloom filter */
    check_cli_index(8, 2000, 2000); /* m: integers, nulls; no Bloom filter */
    check_corrupt(&CASES[0]);
    duck_close();
    return check_report("parquet");
}
