/*
 * fuzz_redis.c — libFuzzer target for the Redis module's command layer
 * (modules/redis: every command parser, every command, the blob codec
 * behind RDB/DUMP/COPY and SCANDUMP/LOADCHUNK), run in-process over a
 * small in-memory keyspace instead of a server; replay.c runs the corpus
 * in ordinary CI.
 *
 * Input: commands, one per line; arguments separated by spaces. Two
 * argument forms reach binary paths: "$" is the last bulk string a command
 * replied (e.g. a SCANDUMP chunk or an AMQ.DUMP frame), "$N" the same with
 * byte N mod its length flipped, and "#" its length + 1 (the iterator
 * LOADCHUNK expects with a whole blob). "SET key x" stores a plain string (for
 * WRONGTYPE paths). "CASCADE [counting]" makes "$" a small learned cascade's
 * frame (trained once per process, in milliseconds, from key sets made here,
 * with Bloom or counting residuals and an insert buffer of 8 keys), the
 * input of AMQ.CASCADE.LOAD, which no line of text could spell (its bytes
 * are the same in every process but for the training time the frame
 * records, 8 bytes, and its checksum). At most 64 commands of 64 arguments
 * each are run.
 *
 * Properties (a violation aborts):
 *   - every command sends exactly one reply, and every array or map it
 *     opens receives exactly the elements it announced;
 *   - after every command, every value in the keyspace serializes, decodes
 *     and serializes again to the same bytes, and its copy does too; a
 *     blob SCANDUMP keeps between its calls is the value's own;
 *   - nothing leaks (ASan) and nothing reads out of bounds.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amqr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_KEYS 16
#define MAX_ARGS 64
#define MAX_CMDS 64
#define MAX_DEPTH 16
#define BUDGET (64.0 * 1024 * 1024)

static void require(int ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "fuzz_redis: property violated: %s\n", what);
        abort();
    }
}

typedef struct slot {
    char name[64];
    size_t n;
    rval *v; /* NULL with plain = a string key */
    bool plain;
    bool used;
} slot;

typedef struct fhost {
    host h;
    slot keys[MAX_KEYS];
    long pending[MAX_DEPTH]; /* elements still owed per open array */
    int depth;
    int top; /* top-level replies sent by this command */
    uint8_t *last;
    size_t last_n;
} fhost;

static slot *find(fhost *f, const rarg *a, bool make) {
    slot *free_slot = NULL;
    if (a->n >= sizeof f->keys[0].name)
        return NULL;
    for (int i = 0; i < MAX_KEYS; i++) {
        slot *s = &f->keys[i];
        if (s->used && s->n == a->n && memcmp(s->name, a->p, a->n) == 0)
            return s;
        if (!s->used && free_slot == NULL)
            free_slot = s;
    }
    if (!make || free_slot == NULL)
        return NULL;
    memcpy(free_slot->name, a->p, a->n);
    free_slot->n = a->n;
    free_slot->used = true;
    free_slot->v = NULL;
    free_slot->plain = false;
    return free_slot;
}

static void clear(slot *s) {
    rv_free(s->v);
    s->v = NULL;
    s->plain = false;
    s->used = false;
}

static int f_lookup(host *h, int argi, int fam, rval **out) {
    slot *s = find((fhost *)h, &h->argv[argi], false);
    *out = NULL;
    if (s == NULL)
        return KEY_EMPTY;
    if (s->plain || (fam != 0 && s->v->fam != fam))
        return KEY_WRONGTYPE;
    *out = s->v;
    return KEY_OK;
}

/* Fails for long names and a full keyspace: the commands must cope. */
static bool f_store(host *h, int argi, rval *v) {
    slot *s = find((fhost *)h, &h->argv[argi], true);
    if (s == NULL) {
        rv_free(v);
        return false;
    }
    if (s->v != v)
        rv_free(s->v);
    s->v = v;
    s->plain = false;
    return true;
}

static void f_remove(host *h, int argi) {
    slot *s = find((fhost *)h, &h->argv[argi], false);
    if (s != NULL)
        clear(s);
}

/* One element (or the top-level reply) has been sent. */
static void element(fhost *f) {
    while (f->depth > 0 && f->pending[f->depth - 1] == 0)
        f->depth--; /* closed arrays were counted when opened */
    if (f->depth == 0) {
        f->top++;
        return;
    }
    require(f->pending[f->depth - 1] > 0, "more elements than announced");
    f->pending[f->depth - 1]--;
}

static void open_array(fhost *f, long n) {
    require(n >= 0, "array length negative");
    element(f);
    require(f->depth < MAX_DEPTH, "replies nested too deep");
    f->pending[f->depth++] = n;
}

static void f_int(host *h, long long x) {
    (void)x;
    element((fhost *)h);
}
static void f_err(host *h, const char *m) {
    require(m != NULL && m[0] != 0 && strchr(m, '\n') == NULL,
            "error message empty or multi-line");
    element((fhost *)h);
}
static void f_simple(host *h, const char *m) { f_err(h, m); }
static void f_arr(host *h, long n) { open_array((fhost *)h, n); }
static void f_map(host *h, long n) { open_array((fhost *)h, 2 * n); }
static void f_null(host *h) { element((fhost *)h); }
static void f_str(host *h, const char *s, size_t n) {
    fhost *f = (fhost *)h;
    element(f);
    free(f->last);
    f->last = malloc(n ? n : 1);
    if (f->last != NULL)
        memcpy(f->last, s, n);
    f->last_n = f->last ? n : 0;
}
static void f_double(host *h, double x) {
    (void)x;
    element((fhost *)h);
}
static void f_verbatim(host *h) { (void)h; }
static void f_replicate(host *h, const char *cmd, const rarg *a, int n) {
    require(cmd_find(cmd, strlen(cmd)) != NULL,
            "replicates an unknown command");
    require(n >= 1 && a[0].n == h->argv[1].n &&
                memcmp(a[0].p, h->argv[1].p, a[0].n) == 0,
            "replicated command names another key");
}
static void f_notify(host *h, const char *event, int argi) {
    require(event != NULL && argi >= 1 && argi < h->argc, "bad notification");
}
static bool f_budget(host *h, double bytes) {
    (void)h;
    return bytes >= 0 && bytes <= BUDGET;
}

/* The budget also gates the values' large allocations, as in the server. */
static bool gate(void *h, double bytes) { return f_budget(h, bytes); }

/* The clock moves a second per command, so time windows age across a
 * fuzz input the same way on every run. */
static uint64_t f_clock;
static uint64_t f_now_ms(host *h) {
    (void)h;
    return f_clock;
}

static const host_ops fuzz_host = {
    f_lookup,    f_store,  f_remove, f_int,    f_err,    f_simple,
    f_arr,       f_map,    f_null,   f_str,    f_double, f_verbatim,
    f_replicate, f_notify, f_notify, f_budget, f_now_ms};

/* encode -> decode -> encode gives the same bytes; so does the copy. */
static void check_value(const rval *v) {
    uint8_t *a, *b;
    size_t na, nb;
    rval *d;
    char err[200];
    if (!rv_encode(v, &a, &na))
        return; /* out of memory */
    require(v->scan == NULL ||
                (v->scan->total == na && memcmp(v->scan->buf, a, na) == 0),
            "SCANDUMP's kept blob is not the value's");
    require(rv_decode(a, na, v->fam, &d, err, sizeof err), err);
    require(rv_encode(d, &b, &nb), "re-encode failed");
    require(na == nb && memcmp(a, b, na) == 0, "blob not canonical");
    free(b);
    rv_free(d);
    d = rv_copy(v);
    require(d != NULL && rv_encode(d, &b, &nb), "copy failed");
    require(na == nb && memcmp(a, b, na) == 0, "copy differs");
    free(b);
    rv_free(d);
    free(a);
}

/* Split one line into arguments, expanding "$" and "$N". */
static int split(fhost *f, char *line, size_t len, rarg *argv,
                 uint8_t **owned) {
    int argc = 0;
    size_t i = 0;
    while (i < len && argc < MAX_ARGS) {
        while (i < len && line[i] == ' ')
            i++;
        size_t j = i;
        while (j < len && line[j] != ' ')
            j++;
        if (j == i)
            break;
        argv[argc].p = line + i;
        argv[argc].n = j - i;
        if (j - i == 1 && line[i] == '#') {
            char *num = malloc(24);
            require(num != NULL, "out of memory in the fuzz driver");
            argv[argc].n = (size_t)snprintf(num, 24, "%zu", f->last_n + 1);
            argv[argc].p = num;
            owned[argc] = (uint8_t *)num;
        } else if (line[i] == '$' && f->last != NULL) {
            uint8_t *copy = malloc(f->last_n ? f->last_n : 1);
            require(copy != NULL, "out of memory in the fuzz driver");
            memcpy(copy, f->last, f->last_n);
            if (j - i > 1 && f->last_n > 0)
                copy[strtoul(line + i + 1, NULL, 10) % f->last_n] ^= 1;
            owned[argc] = copy;
            argv[argc].p = (const char *)copy;
            argv[argc].n = f->last_n;
        }
        argc++;
        i = j;
    }
    return argc;
}

/* ---- a cascade frame -------------------------------------------------------- */

#define CASC_MEMBERS 150
#define CASC_NONMEMBERS 600

/* Members "u<n>.shop" and non-members "p/<n>/page", a third of each
 * "k<n>" instead (so the model leaves some members to a residual), back
 * to back. */
static void casc_keys(bool members, char *bytes, uint64_t *off, amq_keys *k) {
    size_t n = members ? CASC_MEMBERS : CASC_NONMEMBERS;
    off[0] = 0;
    for (size_t i = 0; i < n; i++) {
        char *p = bytes + off[i];
        size_t x = members ? i * 7919 : i * 104729 + 1;
        int len = i % 3 == 0 ? sprintf(p, "k%zu", x)
                  : members  ? sprintf(p, "u%zu.shop", x)
                             : sprintf(p, "p/%zu/page", x);
        off[i + 1] = off[i] + (uint64_t)len;
    }
    k->bytes = (const uint8_t *)bytes;
    k->offsets = off;
    k->n = n;
}

static uint8_t *casc_train(const char *residual, size_t *len) {
    static char mb[CASC_MEMBERS * 24], nb[CASC_NONMEMBERS * 24];
    static uint64_t mo[CASC_MEMBERS + 1], no[CASC_NONMEMBERS + 1];
    amq_keys m, n;
    amq_cascade_config cfg;
    amq_cascade *c = NULL;
    casc_keys(true, mb, mo, &m);
    casc_keys(false, nb, no, &n);
    amq_cascade_config_init(&cfg);
    cfg.fpr = 0.1;
    cfg.eta = 0.1; /* a few hundred certify keys: loose limits */
    cfg.residual = residual;
    cfg.aux_capacity = 8;
    cfg.bins = 16;
    cfg.model.features.dim_bits = AMQ_FEATURE_DIM_BITS_MIN;
    cfg.model.epochs = 2;
    require(amq_cascade_train(&m, &n, &cfg, NULL, &c, NULL) == AMQ_OK,
            "the fuzz driver's cascade does not train");
    *len = amq_cascade_save_size(c);
    uint8_t *b = malloc(*len);
    require(b != NULL && amq_cascade_save(c, b, *len, len) == AMQ_OK,
            "the fuzz driver's cascade does not save");
    amq_cascade_free(c);
    return b;
}

/* The frame of kind 0 (Bloom residuals) or 1 (counting), trained once. */
static void casc_frame(fhost *f, int kind) {
    static uint8_t *frame[2];
    static size_t len[2];
    if (frame[kind] == NULL)
        frame[kind] = casc_train(kind ? "counting" : "sbbf", &len[kind]);
    free(f->last);
    f->last = malloc(len[kind]);
    require(f->last != NULL, "out of memory in the fuzz driver");
    memcpy(f->last, frame[kind], len[kind]);
    f->last_n = len[kind];
}

static void run_command(fhost *f, rarg *argv, int argc) {
    if (arg_is(&argv[0], "CASCADE")) {
        casc_frame(f, argc >= 2 && arg_is(&argv[1], "counting"));
        return;
    }
    if (argc >= 3 && arg_is(&argv[0], "SET")) {
        slot *s = find(f, &argv[1], true);
        if (s != NULL) {
            rv_free(s->v);
            s->v = NULL;
            s->plain = true;
        }
        return;
    }
    const cmd_def *c = cmd_find(argv[0].p, argv[0].n);
    if (c == NULL)
        return;
    if (c->keys != NULL) {
        int pos[MAX_ARGS];
        int n = c->keys(argv, argc, pos, MAX_ARGS);
        for (int i = 0; i < n; i++)
            require(pos[i] >= 1 && pos[i] < argc, "key position out of range");
    }
    if (c->first > 0 && argc <= c->first)
        return; /* the server refuses a call without its key */
    f->h.argv = argv;
    f->h.argc = argc;
    f->depth = 0;
    f->top = 0;
    rv_set_gate(gate, &f->h);
    c->fn(&f->h);
    rv_set_gate(NULL, NULL);
    while (f->depth > 0 && f->pending[f->depth - 1] == 0)
        f->depth--;
    require(f->depth == 0, "array shorter than announced");
    require(f->top == 1, "a command must send exactly one reply");
    for (int i = 0; i < MAX_KEYS; i++)
        if (f->keys[i].used && f->keys[i].v != NULL) {
            /* as the server's dispatcher: a write drops SCANDUMP's blob */
            if (strncmp(c->flags, "write", 5) == 0)
                rv_scan_drop(f->keys[i].v);
            check_value(f->keys[i].v);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fhost f;
    char *text = malloc(size + 1);
    rarg argv[MAX_ARGS];
    uint8_t *owned[MAX_ARGS];
    if (text == NULL)
        return 0;
    memcpy(text, data, size);
    memset(&f, 0, sizeof f);
    f.h.ops = &fuzz_host;
    f_clock = 1000000;
    size_t at = 0;
    for (int cmds = 0; at < size && cmds < MAX_CMDS; cmds++) {
        f_clock += 1000;
        size_t end = at;
        while (end < size && text[end] != '\n')
            end++;
        memset(owned, 0, sizeof owned);
        int argc = split(&f, text + at, end - at, argv, owned);
        if (argc > 0)
            run_command(&f, argv, argc);
        for (int i = 0; i < argc; i++)
            free(owned[i]);
        at = end + 1;
    }
    for (int i = 0; i < MAX_KEYS; i++)
        if (f.keys[i].used)
            clear(&f.keys[i]);
    free(f.last);
    free(text);
    return 0;
}
