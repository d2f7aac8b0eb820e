/*
 * range_scan.c — a range filter in front of WiredTiger's range scans: the
 * workload of integrations/common/range_driver.h over WiredTiger's C API
 * (Debian's libwiredtiger-dev 3.2).
 *
 * One table, key_format=Q (WiredTiger orders it as the integers) and
 * value_format=u, written through a bulk cursor, then checkpointed and
 * the connection reopened, so the table is read back from its file;
 * everything else is WiredTiger's defaults (a 100 MB cache). A scan
 * positions one reused cursor with search_near at lo and reads every key
 * up to hi.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <wiredtiger.h>

#include "range_driver.h"

#define TABLE "table:range"

typedef struct wt {
    WT_CONNECTION *conn;
    WT_SESSION *s;
    WT_CURSOR *c;
} wt;

static int failed(int ret, const char *what) {
    if (ret == 0)
        return 0;
    fprintf(stderr, "amq-wiredtiger-range: %s: %s\n", what,
            wiredtiger_strerror(ret));
    return 1;
}

static int remove_tree(const char *dir) {
    char cmd[4200];
    if (strlen(dir) > 4000 || strchr(dir, '\'') != NULL)
        return -1;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd);
}

static int open_db(wt *w, const char *dir) {
    int ret = wiredtiger_open(dir, NULL, "create", &w->conn);
    if (ret == 0)
        ret = w->conn->open_session(w->conn, NULL, NULL, &w->s);
    return ret;
}

static void *fill(const char *dir, const uint64_t *keys, size_t n,
                  const uint8_t *vals) {
    wt *w = calloc(1, sizeof *w);
    WT_CURSOR *bulk;
    if (remove_tree(dir) != 0 || mkdir(dir, 0755) != 0) {
        fprintf(stderr, "amq-wiredtiger-range: cannot make %s\n", dir);
        return NULL;
    }
    int ret = open_db(w, dir);
    if (ret == 0)
        ret = w->s->create(w->s, TABLE, "key_format=Q,value_format=u");
    if (ret == 0)
        ret = w->s->open_cursor(w->s, TABLE, NULL, "bulk", &bulk);
    for (size_t i = 0; ret == 0 && i < n; i++) {
        WT_ITEM v = {.data = vals + 16 * i, .size = 16};
        bulk->set_key(bulk, keys[i]);
        bulk->set_value(bulk, &v);
        ret = bulk->insert(bulk);
    }
    if (ret == 0)
        ret = bulk->close(bulk);
    if (ret == 0)
        ret = w->s->checkpoint(w->s, NULL);
    if (ret == 0) /* read back from the file, not from the writes' cache */
        ret = w->conn->close(w->conn, NULL);
    if (ret == 0)
        ret = open_db(w, dir);
    if (ret == 0)
        ret = w->s->open_cursor(w->s, TABLE, NULL, NULL, &w->c);
    if (failed(ret, "fill"))
        return NULL;
    return w;
}

static uint64_t scan(void *db, uint64_t lo, uint64_t hi, uint64_t *bytes) {
    wt *w = db;
    WT_CURSOR *c = w->c;
    uint64_t found = 0, key;
    int exact, ret;
    c->set_key(c, lo);
    if (c->search_near(c, &exact) != 0)
        return 0;
    if (exact < 0 && c->next(c) != 0) /* landed below lo */
        return 0;
    for (ret = 0; ret == 0; ret = c->next(c)) {
        WT_ITEM v;
        if (c->get_key(c, &key) != 0 || key > hi)
            break;
        c->get_value(c, &v);
        *bytes += v.size;
        found++;
    }
    return found;
}

static void close_db(void *db, const char *dir, int remove) {
    wt *w = db;
    w->conn->close(w->conn, NULL);
    if (remove)
        (void)remove_tree(dir);
    free(w);
}

int main(int argc, char **argv) {
    static const range_engine e = {"WiredTiger 3.2", fill, scan, close_db};
    return range_driver_main(&e, argc, argv);
}
