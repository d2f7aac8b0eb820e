/*
 * amqr.h — the inside of the amq Redis module, shared by its files.
 *
 *   redis-server ──► module.c (rm.h API) ──► host ──► commands (bf.c cf.c
 *                                                     cms.c topk.c tdigest.c
 *                                                     amqcmd.c
 *                                                     mapcmd.c casccmd.c
 *                                                     cascaudit.c wincmd.c
 *                                                     clockcmd.c)
 *   fuzz target  ──► its own in-memory host ──┘             │
 *                                                     value.c (rval, blob)
 *                                                           │
 *                                                     libamq public API
 *
 * Commands never touch the Redis API: they read arguments as byte ranges
 * (rarg), find and store keys, reply and replicate through a `host` (a
 * table of callbacks, like Redis's own dictType). module.c implements the
 * host over the real server; tests/fuzz/fuzz_redis.c implements it over a
 * small in-memory keyspace, so every command parser and every command runs
 * in-process under libFuzzer.
 *
 * A key's value is an rval: one family (BF, CF, CMS, TOPK, AMQ, CASCADE,
 * TDIGEST, WINDOW, CLOCK)
 * and its amq objects. All of their memory goes through the rval's counting
 * allocator, so MEMORY USAGE is exact. The value's serialized form (the
 * "blob", used for RDB, DUMP/RESTORE, COPY, digests, SCANDUMP and AOF) is
 * specified in value.c and docs/redis.md: a small checksummed header and
 * the amq frames of its structures.
 */
#ifndef AMQ_REDIS_AMQR_H
#define AMQ_REDIS_AMQR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <amq/amq.h>

/* ---- arguments ------------------------------------------------------------ */

typedef struct rarg {
    const char *p;
    size_t n;
} rarg;

bool arg_is(const rarg *a, const char *word); /* ASCII case-insensitive */
/* Strict parsers: the whole argument, no spaces; false otherwise. */
bool arg_ll(const rarg *a, long long *out);
bool arg_double(const rarg *a, double *out); /* finite only */
bool arg_u64(const rarg *a, uint64_t *out);  /* decimal, no sign */

/* ---- values ----------------------------------------------------------------- */

enum {
    FAM_BF = 1,
    FAM_CF = 2,
    FAM_CMS = 3,
    FAM_TOPK = 4,
    FAM_AMQ = 5,
    FAM_CASC = 6,
    FAM_TDIGEST = 7,
    FAM_WINDOW = 8,
    FAM_CLOCK = 9
};
#define FAM_MAX 9

#define CF_MAX_LINKS 32

/* A small key's items as the 64-bit hashes its filter would take, in the
 * order they came, before the filter is made (bf.c, cf.c: "Small keys");
 * memory from the value's counting allocator (value.c). */
typedef struct hlist {
    uint64_t *h;
    uint32_t n, room;
} hlist;

typedef struct bf_part {
    amq_filter *f; /* "scalable"; NULL while sparse */
    double eps;
    uint64_t capacity;
    uint32_t expansion;
    bool nonscaling;
    bool listed; /* while a blob decodes: its frame is the list */
    /* A new key holds its items' 64-bit hashes (what the filter would
     * hash them to) until they would take the first stage's bytes; then
     * the filter is made from them (bf.c, "Small keys"). */
    hlist list;
} bf_part;

typedef struct cf_part {
    uint64_t capacity;
    uint32_t bucket_size, max_iter, expansion;
    bool listed; /* while a blob decodes: its frame is the list */
    uint64_t deleted;
    hlist list; /* no links yet: the items' hashes */
    unsigned nlinks, room;
    amq_filter **link; /* room entries, from the value's own allocator:
                          "cuckoo", sub-filter i holds capacity *
                          expansion^i */
} cf_part;

typedef struct cms_part {
    amq_cms *c;
    amq_hasher h;
} cms_part;

/* The listed items' keys, whole, beside a sketch that keeps none (topk.c). */
typedef struct tkey {
    uint64_t hash;
    uint32_t len;
    uint8_t *bytes;
} tkey;

typedef struct topk_part {
    amq_topk *t;
    double decay; /* RedisBloom's form: probability base in (0, 1] */
    tkey *keys;   /* a sketch of keylen 0 (all new ones); older sketches
                   keep key prefixes themselves */
    uint32_t nkeys, room;
} topk_part;

typedef struct amq_part {
    amq_filter *f;
} amq_part;

typedef struct td_part {
    amq_tdigest *t;
} td_part;

typedef struct win_part {
    amq_window *w;
} win_part;

typedef struct clock_part {
    amq_clock *c;
} clock_part;

/* A cascade's audit (cascaudit.c): in memory only, never in the blob. */
typedef struct casc_audit casc_audit;

typedef struct casc_part {
    amq_cascade *c;
    casc_audit *audit; /* NULL: not audited */
} casc_part;

/* A SCANDUMP stream being received by LOADCHUNK: the blob's first `have`
 * bytes of `total`. */
typedef struct pending {
    uint8_t *buf;
    size_t total, have;
} pending;

typedef struct rval {
    int fam;
    size_t bytes;        /* held by the amq objects (counting allocator) */
    amq_allocator alloc; /* counts into bytes; ctx = this rval */
    pending *load;       /* non-NULL: LOADCHUNK in progress, parts empty */
    pending *scan;       /* SCANDUMP's blob between its calls (chunk.c);
                            dropped by any write to the key */
    struct rb_value *rb; /* non-NULL: a key in RedisBloom's layout (rb.c);
                            the family's part is then unused */
    bool rb_name;        /* an amq value kept under RedisBloom's type name (a
                     migrated t-digest): stored, and encoded, as such */
    union {
        bf_part bf;
        cf_part cf;
        cms_part cms;
        topk_part topk;
        amq_part amq;
        casc_part casc;
        td_part td;
        win_part win;
        clock_part clock;
    } u;
} rval;

/* Where the module's own memory comes from (RedisModule_Alloc in the
 * server, malloc elsewhere). Set once at load. */
void rv_set_system_allocator(void *(*alloc)(size_t),
                             void *(*realloc)(void *, size_t),
                             void (*free)(void *));
void *rv_sys_alloc(size_t n);
void rv_sys_free(void *p);

/* While set, the values' allocations of 1 MiB or more ask fn first and
 * fail (NULL) when it refuses; the command dispatchers set it to the
 * host's budget around each command. NULL: no gate. */
void rv_set_gate(bool (*fn)(void *ctx, double bytes), void *ctx);

rval *rv_new(int fam);
void rv_free(rval *v);
/* Forget SCANDUMP's blob: the value changed (the dispatchers call it
 * after every write command on each key it opened). */
void rv_scan_drop(rval *v);
/* Options whose allocator is the value's counting allocator. */
amq_options rv_options(rval *v);
/* Bytes the value holds: the object, its structures, a pending buffer. */
size_t rv_memory(const rval *v);

/* The per-family half of the blob codec and lifecycle (dictType-style).
 * Optional members may be NULL. */
typedef struct fam_ops {
    const char *name;      /* "bf", "cf", "cms", "topk", "amq", "cascade" */
    const char *rtype;     /* Redis type name, 9 characters                */
    const char *loadchunk; /* command the AOF rewrite emits             */
    size_t params_len;
    /* The fixed-size parameter block (NULL when params_len is 0); read
     * validates and stores it, false with err filled. */
    void (*params_write)(const rval *v, uint8_t *p);
    bool (*params_read)(rval *v, const uint8_t *p, char *err, size_t cap);
    unsigned (*nframes)(const rval *v); /* opt: one frame */
    /* Frame i is this amq_filter's frame (BF, CF, AMQ), or ... */
    const amq_filter *(*filter_at)(const rval *v, unsigned i);
    /* ... is written by these (CMS, TOPK). */
    size_t (*frame_size)(const rval *v, unsigned i);
    amq_status (*frame_save)(const rval *v, unsigned i, uint8_t *buf,
                             size_t cap);
    /* Load frame i of nframes into v; false with err filled. */
    bool (*frame_load)(rval *v, unsigned i, unsigned nframes,
                       const uint8_t *buf, size_t len, char *err, size_t cap);
    void (*destroy)(rval *v); /* free the family's objects */
    /* opt: after every frame, whether the value is whole; err filled */
    bool (*finish)(rval *v, char *err, size_t cap);
} fam_ops;

extern const fam_ops bf_ops, cf_ops, cms_ops, topk_ops, amq_ops, casc_ops,
    tdigest_ops, window_ops, clock_ops;
const fam_ops *fam_get(int fam); /* NULL if fam is not a family */

/* A value's frames, whichever way its family writes them. */
unsigned rv_nframes(const rval *v);
size_t rv_frame_size(const rval *v, unsigned i);
amq_status rv_frame_save(const rval *v, unsigned i, uint8_t *buf, size_t cap);

/* Shared by the families' frame_load: false with err filled. */
bool rv_frame_refused(char *err, size_t cap, amq_status st,
                      const amq_diag *diag);
bool rv_one_frame(unsigned nframes, const char *fam, char *err, size_t cap);
/* amq_filter_load with the value's allocator. */
bool rv_load_filter(rval *v, const uint8_t *buf, size_t len, amq_filter **out,
                    char *err, size_t cap);

/* Hash lists: present, count of x, append (false: no memory), remove
 * the last x (false: none), free; as bytes (8 little-endian a hash), load
 * refusing more than `limit` entries or (unless repeats) a repeat. */
bool hl_has(const hlist *l, uint64_t x);
uint64_t hl_count(const hlist *l, uint64_t x);
bool hl_push(rval *v, hlist *l, uint64_t x, uint32_t limit);
bool hl_remove(hlist *l, uint64_t x);
void hl_free(rval *v, hlist *l);
void hl_save(const hlist *l, uint8_t *buf);
bool hl_load(rval *v, hlist *l, const uint8_t *p, size_t len, uint32_t limit,
             bool repeats, char *err, size_t cap);

/* Blob: encode into a buffer from rv_sys_alloc (caller frees with
 * rv_sys_free). A pending value encodes its received prefix. */
bool rv_encode(const rval *v, uint8_t **out, size_t *len);
/* Decode and validate a complete blob of family `fam` (0: any); the new
 * value is the caller's. false with err filled; nothing is kept. */
bool rv_decode(const uint8_t *buf, size_t len, int fam, rval **out, char *err,
               size_t cap);
/* A clone through the blob (COPY). NULL if out of memory. */
rval *rv_copy(const rval *v);

/* Blob header as far as LOADCHUNK needs it before the rest arrives. */
#define BLOB_HEAD 24
#define BLOB_MAX ((size_t)1 << 40)
bool blob_peek(const uint8_t *buf, size_t len, int *fam, size_t *total,
               char *err, size_t cap);

/* ---- keys in RedisBloom's layouts (rb.c) ------------------------------------------ */

/* The fields of a value in RedisBloom's RDB order: the server's RDB
 * (module.c) or a tagged byte form (rbs_*, in amq blobs and the fuzz
 * target). A reader's str points into storage valid until its next call. */
typedef struct host host;
typedef struct rb_io rb_io;
struct rb_io {
    bool (*u64)(rb_io *io, uint64_t *x);
    bool (*dbl)(rb_io *io, double *x);
    const uint8_t *(*str)(rb_io *io, size_t *n);
    void (*put_u64)(rb_io *io, uint64_t x);
    void (*put_dbl)(rb_io *io, double x);
    void (*put_str)(rb_io *io, const void *p, size_t n);
};
typedef struct rbs_reader {
    rb_io io;
    const uint8_t *at, *end;
} rbs_reader;
typedef struct rbs_writer {
    rb_io io;
    uint8_t *buf; /* NULL: only count */
    size_t cap, len;
} rbs_writer;
void rbs_reader_init(rbs_reader *r, const uint8_t *p, size_t n);
void rbs_writer_init(rbs_writer *w, uint8_t *buf, size_t cap);

uint32_t rb_murmur2(const void *key, size_t len, uint32_t seed);
uint64_t rb_murmur64a(const void *key, size_t len, uint64_t seed);

const char *rb_type_name(int fam); /* NULL: no RedisBloom counterpart */
int rb_encver(int fam);
/* A value of family fam from RedisBloom's fields at encoding encver;
 * NULL with err filled (nothing kept). */
rval *rb_load(int fam, int encver, rb_io *in, char *err, size_t cap);
void rb_save(const rval *v, rb_io *out);
void rb_free(rval *v); /* the layout's memory (rv_free calls it) */
/* As one blob frame: the encoding version, then the fields (rbs form). */
size_t rb_frame(const rval *v, uint8_t *buf, size_t cap); /* bytes needed */
rval *rb_from_frame(int fam, const uint8_t *p, size_t n, char *err, size_t cap);

/* BF: add 1 new / 0 present / -1 error (*err); info = Capacity, Size,
 * filters, items, expansion (-1: nonscaling), RedisBloom's figures. */
/* New keys in RedisBloom's layout, for parameters amq's own structures do
 * not take (an expansion above 16; a Top-K deeper than 16 or decaying
 * below 0.01): NULL with err filled (the reply). */
rval *rb_bf_new(host *h, double eps, uint64_t cap, uint32_t growth,
                bool nonscaling, char *err, size_t errcap);
rval *rb_topk_new(host *h, uint32_t k, uint32_t width, uint32_t depth,
                  double decay, char *err, size_t errcap);
bool rb_bf_contains(const rval *v, const void *p, size_t n);
int rb_bf_add(host *h, rval *v, const void *p, size_t n, const char **err);
uint64_t rb_bf_items(const rval *v);
void rb_bf_info(const rval *v, long long out[5]);
unsigned rb_bf_links(const rval *v);
int rb_bf_debug(const rval *v, char *buf, size_t cap, unsigned i);
/* SCANDUMP/LOADCHUNK in RedisBloom's stream (header at iterator 1). */
size_t rb_bf_header(const rval *v, uint8_t *out, size_t cap);
rval *rb_bf_from_header(host *h, const uint8_t *p, size_t n, char *err,
                        size_t cap);
const uint8_t *rb_bf_chunk(const rval *v, long long *iter, size_t *len);
bool rb_bf_load_chunk(rval *v, long long iter, const uint8_t *p, size_t n,
                      const char **err);

/* CF: insert 1 / 0 present (nx) / -1 full / -2 no memory; info = Size,
 * buckets, filters, items, deleted, bucket size, expansion, max
 * iterations. */
bool rb_cf_contains(const rval *v, const void *p, size_t n);
uint64_t rb_cf_count(const rval *v, const void *p, size_t n);
int rb_cf_insert(host *h, rval *v, const void *p, size_t n, bool nx);
bool rb_cf_delete(rval *v, const void *p, size_t n);
void rb_cf_compact(rval *v, bool cont);
void rb_cf_info(const rval *v, long long out[8]);
uint64_t rb_cf_items(const rval *v);
size_t rb_cf_header(const rval *v, uint8_t out[38]);
rval *rb_cf_from_header(host *h, const uint8_t *p, size_t n, char *err,
                        size_t cap);
const uint8_t *rb_cf_chunk(const rval *v, long long *pos, size_t *len);
bool rb_cf_load_chunk(rval *v, long long pos, const uint8_t *p, size_t n);

/* CMS: RedisBloom's plain update; incr answers UINT32_MAX on overflow. */
uint64_t rb_cms_incr(rval *v, const void *p, size_t n, uint64_t by);
uint64_t rb_cms_query(const rval *v, const void *p, size_t n);
void rb_cms_info(const rval *v, uint64_t *w, uint64_t *d, uint64_t *count);
bool rb_cms_same_shape(const rval *a, const rval *b);
bool rb_cms_merge(rval *dst, rval *const *src, const long long *w, int n);

/* TOPK: RedisBloom's HeavyKeeper and heap, a deterministic decay coin. */
typedef struct rb_topk_item {
    uint8_t *item; /* NULL: an empty entry */
    uint32_t len, count;
} rb_topk_item;
bool rb_topk_add(rval *v, const void *p, size_t n, uint32_t by,
                 rb_topk_item *expelled);
void rb_topk_free_item(rval *v, rb_topk_item *it);
bool rb_topk_query(const rval *v, const void *p, size_t n);
uint64_t rb_topk_count(const rval *v, const void *p, size_t n);
size_t rb_topk_list(const rval *v, rb_topk_item *out); /* room for k */
void rb_topk_info(const rval *v, uint32_t *k, uint32_t *w, uint32_t *d,
                  double *decay);

/* ---- the host: what a command may do ------------------------------------------ */

enum { KEY_EMPTY = 0, KEY_OK = 1, KEY_WRONGTYPE = 2 };

typedef struct host host;
typedef struct host_ops {
    /* The value at argv[argi] if it is of family fam; write = the command
     * may modify it (replication, notifications follow from the caller). */
    int (*lookup)(host *h, int argi, int fam, rval **out);
    /* Put v at argv[argi], replacing any value there. Ownership moves
     * either way: false means v was freed and nothing changed. */
    bool (*store)(host *h, int argi, rval *v);
    void (*remove)(host *h, int argi);
    void (*r_int)(host *h, long long x);
    void (*r_err)(host *h, const char *msg);
    void (*r_simple)(host *h, const char *msg);
    void (*r_arr)(host *h, long n);
    void (*r_map)(host *h, long n); /* n pairs; an array of 2n in RESP2 */
    void (*r_null)(host *h);
    void (*r_str)(host *h, const char *s, size_t n);
    void (*r_double)(host *h, double x);
    /* Effects of a write that succeeded (at least in part). */
    void (*replicate_verbatim)(host *h);
    void (*replicate)(host *h, const char *cmd, const rarg *args, int n);
    void (*notify)(host *h, const char *event, int argi);
    /* The same in the module class ('d' of notify-keyspace-events): a
     * key's state an operator acts on (a cascade falling back). */
    void (*notify_module)(host *h, const char *event, int argi);
    /* May the command allocate `bytes` more? false: it must refuse. */
    bool (*budget)(host *h, double bytes);
    /* The server's clock in milliseconds (a sliding window's time when the
     * command gives none). */
    uint64_t (*now_ms)(host *h);
} host_ops;

struct host {
    const host_ops *ops;
    const rarg *argv;
    int argc;
    /* The command comes from the primary or the AOF: it was accepted
     * where it ran first, so STRICT (this server's own choice) must not
     * refuse or change it here. */
    bool replayed;
};

/* Reply helpers. */
static inline void r_ok(host *h) { h->ops->r_simple(h, "OK"); }
static inline int r_err(host *h, const char *msg) {
    h->ops->r_err(h, msg);
    return 0;
}
int r_wrongtype(host *h);
/* store, replying an error when it fails; false then. */
bool store_or_reply(host *h, rval *v);
/* The value of family fam at argv[argi]: KEY_OK (*v set) or KEY_EMPTY
 * (*v NULL); -1 after replying WRONGTYPE, or "<prefix> the key is being
 * loaded by LOADCHUNK" for a value still arriving. */
int key_open(host *h, int argi, int fam, rval **v, const char *prefix);
/* key_open that also refuses a missing key (replying `missing`): the
 * value, or NULL after a reply. */
rval *key_need(host *h, int argi, int fam, const char *prefix,
               const char *missing);
/* EXISTS key item (single) or MEXISTS key item...: test(v, item) per item,
 * 0 for every item of a missing key (and, for BF and CF unless STRICT, of a
 * key of another type, as RedisBloom answers). */
int reply_exists(host *h, int fam, bool single,
                 bool (*test)(const rval *v, const rarg *item));
/* n "name: integer" pairs as a map, or with only >= 0 that one value in
 * an array of one; the value at null_at (-1: none) is a null. */
void reply_fields(host *h, const char *const *names, const long long *vals,
                  int n, int only, int null_at);
int r_arity(host *h);
/* An item a sketch names (TOPK's list and expelled items): a simple string,
 * as RedisBloom replies, when its bytes can be one (printable, no CR, LF or
 * NUL, under 256 bytes); a bulk string otherwise, so that no item can break
 * the protocol. */
void r_item(host *h, const void *p, size_t n);
/* The keys of `CMD dest numkeys src...` (CMS.MERGE, TDIGEST.MERGE): dest
 * and the sources, at most cap of them; a getkeys function. */
int numkeys_keys(const rarg *argv, int argc, int *pos, int cap);
/* The head of an INFO reply of n name-value pairs: a flat array of 2n as
 * RedisBloom 2.4 sends (RESP3 too), or under STRICT a map (an array in
 * RESP2). */
void r_info(host *h, long n);
/* The value of family fam at argv[argi] for a read that RedisBloom answers
 * as if missing when the key holds another type (unless STRICT): KEY_OK,
 * KEY_EMPTY, or -1 after a reply. */
int key_open_read(host *h, int argi, int fam, rval **v);
/* An amq status as an error reply ("ERR <message>"). */
int r_status(host *h, const char *what, amq_status st);

/* Module-wide defaults (module arguments ERROR_RATE, INITIAL_SIZE,
 * CF_MAX_EXPANSIONS). */
typedef struct module_cfg {
    /* false (the default): RedisBloom 2.4's replies where amq would be
     * stricter (docs/redis.md, "Compatibility"); true: amq's own. */
    bool strict;
    double bf_error;
    uint64_t bf_capacity;
    uint32_t bf_expansion;
    uint64_t cf_capacity;
    unsigned cf_max_links;
} module_cfg;
extern module_cfg g_cfg;

/* STRICT for this command: never for a replayed one (host.replayed). */
static inline bool strict(const host *h) {
    return g_cfg.strict && !h->replayed;
}
/* Parse module arguments; false with err filled. */
bool cfg_parse(const rarg *argv, int argc, char *err, size_t cap);

/* ---- commands ------------------------------------------------------------------ */

typedef int (*cmd_fn)(host *h);

typedef struct cmd_def {
    const char *name;
    cmd_fn fn;
    const char *flags;
    int first, last, step; /* key positions; first = 0: getkeys below */
    /* Key positions of a command whose keys depend on its arguments. */
    int (*keys)(const rarg *argv, int argc, int *pos, int cap);
} cmd_def;

extern const cmd_def g_cmds[];
extern const size_t g_ncmds;
const cmd_def *cmd_find(const char *name, size_t n);

/* SCANDUMP / LOADCHUNK, shared by BF, CF and AMQ (chunk.c). */
#define CHUNK_MAX ((size_t)16 << 20)
int chunk_scandump(host *h, int fam);
int chunk_loadchunk(host *h, int fam);
int bf_scandump(host *h);
int bf_loadchunk(host *h);
int cf_scandump(host *h);
int cf_loadchunk(host *h);
int amq_scandump(host *h);
int amq_loadchunk(host *h);

/* Family commands. */
int bf_reserve(host *h);
int bf_add(host *h);
int bf_madd(host *h);
int bf_insert(host *h);
int bf_exists(host *h);
int bf_mexists(host *h);
int bf_info(host *h);
int bf_card(host *h);
int cf_reserve(host *h);
int cf_add(host *h);
int cf_addnx(host *h);
int cf_insert(host *h);
int cf_insertnx(host *h);
int cf_exists(host *h);
int cf_mexists(host *h);
int cf_del(host *h);
int cf_count(host *h);
int cf_info(host *h);
int cf_compact(host *h);
int cf_debug(host *h);
int bf_debug(host *h);
int cms_initbydim(host *h);
int cms_initbyprob(host *h);
int cms_incrby(host *h);
int cms_query(host *h);
int cms_merge(host *h);
int cms_info(host *h);
int topk_reserve(host *h);
int topk_add(host *h);
int topk_incrby(host *h);
int topk_query(host *h);
int topk_count(host *h);
int topk_list(host *h);
int topk_info(host *h);
int tdigest_create(host *h);
int tdigest_reset(host *h);
int tdigest_add(host *h);
int tdigest_merge(host *h);
int tdigest_min(host *h);
int tdigest_max(host *h);
int tdigest_quantile(host *h);
int tdigest_cdf(host *h);
int tdigest_trimmed_mean(host *h);
int tdigest_rank(host *h);
int tdigest_revrank(host *h);
int tdigest_byrank(host *h);
int tdigest_byrevrank(host *h);
int tdigest_info(host *h);
int window_reserve(host *h);
int window_add(host *h);
int window_madd(host *h);
int window_exists(host *h);
int window_mexists(host *h);
int window_pttl(host *h);
int window_info(host *h);
int clock_new(host *h);
int clock_tick(host *h);
int clock_merge(host *h);
int clock_get(host *h);
int clock_compare(host *h);
int clock_join(host *h);
int clock_leave(host *h);
int clock_info(host *h);
int amq_reserve(host *h);
int amq_build(host *h);
int amq_add(host *h);
int amq_madd(host *h);
int amq_exists(host *h);
int amq_range(host *h);
int amq_range_build(host *h);
int amq_range_bound_cmd(host *h);
int amq_adapt(host *h);
int amq_mexists(host *h);
int amq_del(host *h);
int amq_card(host *h);
int amq_info(host *h);
int amq_merge(host *h);
int amq_dump(host *h);
int amq_load(host *h);
int amq_types(host *h);
int amq_map_reserve(host *h);
int amq_map_build(host *h);
int amq_map_put(host *h);
int amq_map_get(host *h);
int amq_map_mget(host *h);
int amq_map_getall(host *h);
int amq_map_del(host *h);
int amq_map_merge(host *h);
int amq_map_info(host *h);
int casc_load(host *h);
int casc_exists(host *h);
int casc_mexists(host *h);
int casc_add(host *h);
int casc_del(host *h);
int casc_info(host *h);
int casc_dump(host *h);
int casc_audit_cmd(host *h);
int casc_samples(host *h);
int casc_truth(host *h);
int casc_fallback(host *h);

/* The audit's side of the cascade family (cascaudit.c). */
/* Count one query of item; a sampled one waits for AMQ.CASCADE.SAMPLES. */
void casc_audit_query(casc_audit *a, const rarg *item);
void casc_audit_free(rval *v);
/* What AMQ.CASCADE.INFO shows of the audit; false when there is none. */
typedef struct casc_audit_view {
    double rate;
    uint64_t window, windows, sampled, pending, dropped;
    amq_audit_report report;
} casc_audit_view;
bool casc_audit_view_of(const rval *v, casc_audit_view *out);

/* Shared by AMQ.*, AMQ.MAP.* and AMQ.CASCADE.* (amqcmd.c). */
/* The one frame of the value at argv[1] of family fam (0: any) as a bulk
 * string. */
int dump_as(host *h, int fam);
/* The spec argument as a C string (specs are short); false after a reply. */
bool spec_arg(host *h, const rarg *a, char *buf, size_t cap);
/* "ERR <status>: <diag message>". */
int reply_status_diag(host *h, amq_status st, const amq_diag *d);
/* A reserve command: `KEY SPEC [CAPACITY n] [ERROR e] [HASH ..] [SEED s]
 * [HASHKEY hex]`, replicated as `cmd` with every choice explicit. admit
 * refuses (replying) a type the command does not make. */
typedef struct reserve_kind {
    const char *cmd, *event;
    bool (*admit)(host *h, const amq_type_info *ti);
} reserve_kind;
int reserve_as(host *h, const reserve_kind *k);
/* `dst src...`: dst = dst merged with every src, built aside and stored
 * only when all merged. admit (NULL: any AMQ value) refuses, replying, a
 * value the command does not merge. */
int merge_as(host *h, bool (*admit)(host *h, const rval *v), const char *event);

/* AMQ.UPGRADE (upgrade.c) builds from these: an empty BF or CF key in
 * amq's layout (NULL after a reply), and one add of an item (BF: 1 new,
 * 0 present, -1 with *err; CF: 1 added, -1 full or *nomem). */
rval *bf_new_amq(host *h, double eps, uint64_t cap, uint32_t g,
                 bool nonscaling);
int bf_add_item(host *h, rval *v, const rarg *item, const char **err);
rval *cf_new_amq(host *h, uint64_t cap, unsigned b, unsigned m, unsigned e);
int cf_add_item(host *h, rval *v, const rarg *item, bool *nomem);
/* A RedisBloom BF's first link: the key's error rate (twice the link's
 * for a scaling chain) and capacity. */
void rb_bf_first(const rval *v, double *eps, uint64_t *cap);
int amq_upgrade(host *h);

/* Shared by the filter families. */
bool bf_build(rval *v, double eps, uint64_t cap, uint32_t expansion,
              bool nonscaling, char *err, size_t errcap);

#endif
