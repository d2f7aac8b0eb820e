/*
 * aqf.c — the adaptive quotient filter (aqf): a quotient filter that is
 * told about its false positives and stops making them.
 *
 * Papers: Bender, Farach-Colton, Goswami, Johnson, McCauley, Singh, "Bloom
 * filters, adaptivity, and the dictionary problem" (FOCS 2018) for the
 * notion (a rate eps for every query sequence, not only for fresh keys)
 * and the lower bound that makes a reverse map necessary; Wen, Bender,
 * Conway, Johnson, Pandey et al., "Adaptive quotient filters" (SIGMOD
 * 2025) for extending the remainders of the members a reported key
 * collided with. The layout below is our own (docs/structures.md,
 * "Adaptive quotient filter: `aqf`", says where it differs).
 *
 * Parts:
 *
 *   core   a qf (qf_impl.h) of the members' fingerprints f(h), unchanged:
 *          a query first asks it, and an absent key it rejects costs what
 *          a qf query costs;
 *   ext    extension records, kept for the fingerprints that collided
 *          with a reported key (and only those): one record per member
 *          with fingerprint f, a prefix of that member's extension bits
 *          e(h) = mix64(h ^ E_SALT) of len 0..58 bits. A key y with
 *          fingerprint f passes iff f has no records, or some record of
 *          f is a prefix of e(y). A record is always a prefix of its own
 *          member's e, so a member always passes: no false negatives,
 *          whatever the lengths;
 *   map    the reverse map: every member's hash h with its record length
 *          (0 while f has no records). Only a report reads it (to learn
 *          the members' further bits); queries never do.
 *
 * A report of key y that the filter passes lengthens, for every member x
 * of f(y) whose record is a prefix of e(y), the record to one bit past
 * their common prefix, so it no longer is; y is then rejected. A member
 * added later to an extended fingerprint gets the longest record length
 * of that fingerprint, so a key reported before is rejected again with
 * probability 1 - 2^-len; a removed member takes its record with it.
 *
 * Both side tables are linear-probing tables of 8-byte keys (a record's
 * fingerprint, a member's hash) with a value each (8 bytes: the record,
 * bits << 6 | len; 1 byte: the length); records are stored as key, value
 * pairs, the map as its keys then its values; a value of all ones marks
 * an empty slot. A slot's home is mix64(f) of its fingerprint, so the
 * members of one fingerprint sit together in both. Each doubles when an insert would pass 7/8 load.
 *
 * Frame: the qf's 24-byte block, then ext slots u64 | ext records u64 |
 * map slots u64 | reports u64; the payload is the qf table padded to 8
 * bytes, then ext (slots x 16 bytes), then map (slots x 9 bytes). Loading
 * validates the qf in full and the side tables' shape, fields, counts and
 * reachability (every entry findable from its home).
 */
#include <string.h>

#include "fingerprint/qf_impl.h"
#include "type/type.h"

#define E_SALT UINT64_C(0x243f6a8885a308d3)
#define H_SALT UINT64_C(0x13198a2e03707344)
#define MAX_LEN 58u   /* extension bits a record may hold */
#define MIN_SLOTS 16u /* a side table's smallest size */

typedef struct tab {
    uint8_t *p;     /* slots keys (u64), then slots values (vw bytes) */
    uint64_t slots; /* 0 or a power of two >= MIN_SLOTS */
    uint64_t used;
    unsigned vw; /* 8: records; 1: the map's lengths */
    bool owned;
} tab;

typedef struct amq_aqf {
    amq__obj o; /* o.items: the core's */
    amq_qf *core;
    amq__contains_fn core_contains;
    tab ext, map;
    uint64_t reports;
} amq_aqf;

static inline uint64_t ext_bits(uint64_t h) { return amq__mix64(h ^ E_SALT); }

static inline uint64_t fp_of(const amq_aqf *a, uint64_t h) {
    return amq__qf_fingerprint(&a->core->o, h);
}

/* ---- the side tables ----------------------------------------------------- */

static inline uint64_t empty_of(const tab *t) {
    return t->vw == 8 ? UINT64_MAX : 0xff;
}
static inline size_t tab_bytes(uint64_t slots, unsigned vw) {
    return (size_t)slots * (8 + vw);
}
/* Records sit as key, value pairs (a probe reads one line); the map as
 * all keys, then all lengths (9 bytes a slot instead of 16). */
static inline uint8_t *key_ptr(const tab *t, uint64_t i) {
    return t->p + (t->vw == 8 ? 16 : 8) * i;
}
static inline uint8_t *val_ptr(const tab *t, uint64_t i) {
    return t->vw == 8 ? t->p + 16 * i + 8 : t->p + 8 * t->slots + i;
}
static inline uint64_t key_at(const tab *t, uint64_t i) {
    return amq__get_u64(key_ptr(t, i));
}
static inline uint64_t val_at(const tab *t, uint64_t i) {
    const uint8_t *v = val_ptr(t, i);
    return t->vw == 8 ? amq__get_u64(v) : v[0];
}
static inline bool is_empty(const tab *t, uint64_t i) {
    return val_at(t, i) == empty_of(t);
}
static inline void put_at(tab *t, uint64_t i, uint64_t k, uint64_t v) {
    uint8_t *vp = val_ptr(t, i);
    amq__put_u64(key_ptr(t, i), k);
    if (t->vw == 8)
        amq__put_u64(vp, v);
    else
        vp[0] = (uint8_t)v;
}
static inline void set_val(tab *t, uint64_t i, uint64_t v) {
    put_at(t, i, key_at(t, i), v);
}
static inline uint64_t home_of(const tab *t, uint64_t fp) {
    return amq__mix64(fp ^ H_SALT) & (t->slots - 1);
}
/* The fingerprint an entry is filed under: a record's key is one; a map
 * entry's key is a member's hash. */
static inline uint64_t entry_fp(const amq_aqf *a, const tab *t, uint64_t i) {
    return t == &a->map ? fp_of(a, key_at(t, i)) : key_at(t, i);
}
static inline uint64_t next_of(const tab *t, uint64_t i) {
    return (i + 1) & (t->slots - 1);
}

static void tab_fill_empty(tab *t) {
    for (uint64_t i = 0; i < t->slots; i++)
        put_at(t, i, 0, empty_of(t));
}

static void tab_insert(tab *t, uint64_t fp, uint64_t k, uint64_t v) {
    uint64_t i = home_of(t, fp);
    while (!is_empty(t, i))
        i = next_of(t, i);
    put_at(t, i, k, v);
    t->used++;
}

/* Remove slot i, moving later entries of its cluster back (no tombstones).
 * An entry at j whose home lies cyclically in (i, j] stays put. */
static void tab_remove_at(const amq_aqf *a, tab *t, uint64_t i) {
    uint64_t j = i;
    for (;;) {
        j = next_of(t, j);
        if (is_empty(t, j))
            break;
        uint64_t h = home_of(t, entry_fp(a, t, j));
        bool stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);
        if (!stays) {
            put_at(t, i, key_at(t, j), val_at(t, j));
            i = j;
        }
    }
    put_at(t, i, 0, empty_of(t));
    t->used--;
}

/* Room for `more` entries at no more than 7/8 load: a larger table,
 * rehashed, or AMQ_ERR_NOMEM / AMQ_ERR_OVERFLOW with t unchanged. */
static amq_status tab_reserve(const amq_aqf *a, tab *t, uint64_t more) {
    uint64_t need = t->used + more, slots = t->slots ? t->slots : MIN_SLOTS;
    if (need < t->used)
        return AMQ_ERR_OVERFLOW;
    while (need > slots / 8 * 7) {
        if (slots > (UINT64_C(1) << 58))
            return AMQ_ERR_OVERFLOW;
        slots *= 2;
    }
    if (slots == t->slots)
        return AMQ_OK;
    tab n = {.slots = slots, .vw = t->vw, .owned = true};
    n.p = amq__alloc(&a->o.mem, tab_bytes(slots, t->vw));
    if (n.p == NULL)
        return AMQ_ERR_NOMEM;
    tab_fill_empty(&n);
    for (uint64_t i = 0; i < t->slots; i++)
        if (!is_empty(t, i))
            tab_insert(&n, entry_fp(a, t, i), key_at(t, i), val_at(t, i));
    if (t->owned)
        amq__free(&a->o.mem, t->p, tab_bytes(t->slots, t->vw));
    *t = n;
    return AMQ_OK;
}

/* ---- records ------------------------------------------------------------- */

static inline uint64_t rec_of(unsigned len, uint64_t e) {
    return len == 0 ? 0 : (e >> (64 - len)) << 6 | len;
}
static inline unsigned rec_len(uint64_t rec) { return (unsigned)(rec & 63); }
static inline bool rec_admits(uint64_t rec, uint64_t e) {
    unsigned len = rec_len(rec);
    return len == 0 || (e >> (64 - len)) == rec >> 6;
}

/* Whether a key of fingerprint fp and extension bits e passes the
 * records: fp has none, or one of them is a prefix of e. */
static bool admits(const amq_aqf *a, uint64_t fp, uint64_t e) {
    const tab *t = &a->ext;
    bool any = false;
    for (uint64_t i = home_of(t, fp); !is_empty(t, i); i = next_of(t, i))
        if (key_at(t, i) == fp) {
            if (rec_admits(val_at(t, i), e))
                return true;
            any = true;
        }
    return !any;
}

/* fp's records: how many, and the longest length. */
static uint64_t records_of(const amq_aqf *a, uint64_t fp, unsigned *longest) {
    const tab *t = &a->ext;
    uint64_t n = 0;
    *longest = 0;
    if (t->used == 0)
        return 0;
    for (uint64_t i = home_of(t, fp); !is_empty(t, i); i = next_of(t, i))
        if (key_at(t, i) == fp) {
            unsigned l = rec_len(val_at(t, i));
            *longest = l > *longest ? l : *longest;
            n++;
        }
    return n;
}

/* The slot of the entry filed under fp with key k (and value v when
 * match_v); UINT64_MAX when there is none. */
static uint64_t find(const tab *t, uint64_t fp, uint64_t k, uint64_t v,
                     bool match_v) {
    if (t->used == 0)
        return UINT64_MAX;
    for (uint64_t i = home_of(t, fp); !is_empty(t, i); i = next_of(t, i))
        if (key_at(t, i) == k && (!match_v || val_at(t, i) == v))
            return i;
    return UINT64_MAX;
}

/* ---- the callbacks ------------------------------------------------------- */

static bool aqf_contains(const amq__obj *o, uint64_t h) {
    const amq_aqf *a = (const amq_aqf *)o;
    if (!a->core_contains(&a->core->o, h))
        return false;
    return a->ext.used == 0 || admits(a, fp_of(a, h), ext_bits(h));
}

static void aqf_contains_batch(const amq__obj *o, const uint64_t *h, size_t n,
                               uint8_t *out) {
    const amq_aqf *a = (const amq_aqf *)o;
    amq__qf_contains_batch(&a->core->o, h, n, out);
    if (a->ext.used == 0)
        return;
    for (size_t i = 0; i < n; i++)
        if (out[i] && !admits(a, fp_of(a, h[i]), ext_bits(h[i])))
            out[i] = 0;
}

/* The side tables' part of adding h, once the core holds it: the map's
 * entry, and a record when h's fingerprint has records (room reserved). */
static void side_add(amq_aqf *a, uint64_t h) {
    uint64_t fp = fp_of(a, h);
    unsigned len;
    bool extended = records_of(a, fp, &len) != 0;
    tab_insert(&a->map, fp, h, len);
    if (extended)
        tab_insert(&a->ext, fp, fp, rec_of(len, ext_bits(h)));
}

/* The map's line for h, asked for before the core's insert so the two
 * misses overlap. */
static inline void prefetch_map(const amq_aqf *a, uint64_t h) {
    uint64_t i = home_of(&a->map, fp_of(a, h));
    amq__prefetch_w(key_ptr(&a->map, i));
    amq__prefetch_w(val_ptr(&a->map, i));
}

static amq_status aqf_add(amq__obj *o, uint64_t h) {
    amq_aqf *a = (amq_aqf *)o;
    AMQ_RETURN_IF_ERR(tab_reserve(a, &a->map, 1));
    if (a->ext.used != 0)
        AMQ_RETURN_IF_ERR(tab_reserve(a, &a->ext, 1));
    prefetch_map(a, h);
    AMQ_RETURN_IF_ERR(amq__qf_add(&a->core->o, h));
    side_add(a, h);
    a->o.items = a->core->o.items;
    return AMQ_OK;
}

/* Entries t takes before it must grow. */
static inline uint64_t room(const tab *t) {
    uint64_t cap = t->slots / 8 * 7;
    return cap > t->used ? cap - t->used : 0;
}

/* Chunks of keys: room for the chunk, the map's lines asked for, the
 * core's batch insert (which prefetches its own), then the side tables. */
#define ADD_CHUNK 64
static amq_status aqf_add_batch(amq__obj *o, const uint64_t *h, size_t n,
                                size_t *done) {
    amq_aqf *a = (amq_aqf *)o;
    *done = 0;
    while (*done < n) {
        const uint64_t *k = h + *done;
        size_t c = n - *done < ADD_CHUNK ? n - *done : ADD_CHUNK, got = 0;
        /* The tables grow at the key where one add at a time grows them,
         * so the bytes are the same as the loop's: a chunk ends where
         * either would pass 7/8 (each key adds one entry to the map, at
         * most one record). */
        if (room(&a->map) == 0)
            AMQ_RETURN_IF_ERR(tab_reserve(a, &a->map, 1));
        if (a->ext.used != 0 && room(&a->ext) == 0)
            AMQ_RETURN_IF_ERR(tab_reserve(a, &a->ext, 1));
        c = c < room(&a->map) ? c : (size_t)room(&a->map);
        if (a->ext.used != 0)
            c = c < room(&a->ext) ? c : (size_t)room(&a->ext);
        for (size_t i = 0; i < c; i++)
            prefetch_map(a, k[i]);
        amq_status st = amq__qf_add_batch(&a->core->o, k, c, &got);
        for (size_t i = 0; i < got; i++)
            side_add(a, k[i]);
        *done += got;
        a->o.items = a->core->o.items;
        AMQ_RETURN_IF_ERR(st);
    }
    return AMQ_OK;
}

/* A key that was never added is refused by its hash, which a qf cannot
 * do: removing it would take a colliding member's copy. */
static amq_status aqf_remove(amq__obj *o, uint64_t h) {
    amq_aqf *a = (amq_aqf *)o;
    uint64_t fp = fp_of(a, h);
    uint64_t i = find(&a->map, fp, h, 0, false);
    if (i == UINT64_MAX)
        return AMQ_ERR_NOT_FOUND;
    AMQ_RETURN_IF_ERR(amq__qf_remove(&a->core->o, h));
    unsigned len = (unsigned)val_at(&a->map, i);
    tab_remove_at(a, &a->map, i);
    uint64_t j = find(&a->ext, fp, fp, rec_of(len, ext_bits(h)), true);
    if (j != UINT64_MAX)
        tab_remove_at(a, &a->ext, j);
    a->o.items = a->core->o.items;
    return AMQ_OK;
}

/* Copies whose records pass h (all of the core's when fp has none). */
static amq_status aqf_count(const amq__obj *o, uint64_t h, uint64_t *out) {
    const amq_aqf *a = (const amq_aqf *)o;
    uint64_t fp = fp_of(a, h), e = ext_bits(h), n = 0;
    unsigned len;
    if (records_of(a, fp, &len) == 0)
        return amq__qf_count(&a->core->o, h, out);
    const tab *t = &a->ext;
    for (uint64_t i = home_of(t, fp); !is_empty(t, i); i = next_of(t, i))
        n += key_at(t, i) == fp && rec_admits(val_at(t, i), e);
    *out = n;
    return AMQ_OK;
}

/* Two passes over the map's members of fp: the first checks that every
 * record that must grow can (nothing changes on a refusal), the second
 * grows them, and gives fp its records if it had none. */
static amq_status aqf_report(amq__obj *o, uint64_t h, bool *fixed) {
    amq_aqf *a = (amq_aqf *)o;
    uint64_t fp = fp_of(a, h), e = ext_bits(h), members = 0;
    tab *m = &a->map;
    unsigned longest;
    *fixed = false;
    if (!aqf_contains(o, h))
        return AMQ_OK;
    bool extended = records_of(a, fp, &longest) != 0;
    if (m->used == 0)
        return AMQ_ERR_CORRUPT; /* the core holds fp, the map nothing */
    for (uint64_t i = home_of(m, fp); !is_empty(m, i); i = next_of(m, i)) {
        uint64_t x = key_at(m, i);
        if (fp_of(a, x) != fp)
            continue;
        if (x == h)
            return AMQ_ERR_INVALID; /* a member's hash */
        uint64_t ex = ext_bits(x);
        unsigned len = (unsigned)val_at(m, i);
        if (rec_admits(rec_of(len, ex), e) &&
            (unsigned)__builtin_clzll(ex ^ e) + 1 > MAX_LEN)
            return AMQ_ERR_INVALID; /* 58 further bits agree */
        members++;
    }
    if (members == 0)
        return AMQ_ERR_CORRUPT; /* the core holds fp, the map does not */
    if (!extended)
        AMQ_RETURN_IF_ERR(tab_reserve(a, &a->ext, members));
    for (uint64_t i = home_of(m, fp); !is_empty(m, i); i = next_of(m, i)) {
        uint64_t x = key_at(m, i);
        if (fp_of(a, x) != fp)
            continue;
        uint64_t ex = ext_bits(x);
        unsigned len = (unsigned)val_at(m, i), grown = len;
        if (rec_admits(rec_of(len, ex), e))
            grown = (unsigned)__builtin_clzll(ex ^ e) + 1;
        if (!extended) {
            tab_insert(&a->ext, fp, fp, rec_of(grown, ex));
        } else if (grown != len) {
            uint64_t j = find(&a->ext, fp, fp, rec_of(len, ex), true);
            if (j != UINT64_MAX)
                set_val(&a->ext, j, rec_of(grown, ex));
        }
        set_val(m, i, grown);
    }
    a->reports++;
    *fixed = true;
    return AMQ_OK;
}

static void aqf_stats(const amq__obj *o, amq_adapt_stats *out) {
    const amq_aqf *a = (const amq_aqf *)o;
    const tab *t = &a->ext;
    uint64_t extended = 0;
    for (uint64_t i = 0; i < t->slots; i++) {
        if (is_empty(t, i))
            continue;
        /* count a fingerprint at its first record in probe order */
        uint64_t fp = key_at(t, i), j = home_of(t, fp);
        while (key_at(t, j) != fp || is_empty(t, j))
            j = next_of(t, j);
        extended += j == i;
    }
    out->reports = a->reports;
    out->extended = extended;
    out->records = t->used;
    out->extension_bytes = tab_bytes(t->slots, t->vw);
    out->map_bytes = tab_bytes(a->map.slots, a->map.vw);
}

static void aqf_destroy(amq__obj *o) {
    amq_aqf *a = (amq_aqf *)o;
    if (a == NULL)
        return;
    if (a->ext.owned)
        amq__free(&a->o.mem, a->ext.p, tab_bytes(a->ext.slots, a->ext.vw));
    if (a->map.owned)
        amq__free(&a->o.mem, a->map.p, tab_bytes(a->map.slots, a->map.vw));
    amq__qf_destroy(&a->core->o);
    amq__obj_free(&a->o);
}

static amq_status wrap(amq_qf *core, const amq_options *opt, amq_aqf **out) {
    amq_aqf *a;
    amq_status st = amq__obj_new(sizeof *a, opt, (void **)&a);
    if (st != AMQ_OK) {
        amq__qf_destroy(&core->o);
        return st;
    }
    a->core = core;
    a->core_contains =
        core->o.contains != NULL ? core->o.contains : amq__qf_contains;
    a->ext.vw = 8;
    a->map.vw = 1;
    a->o.items = core->o.items;
    a->o.contains = aqf_contains;
    *out = a;
    return AMQ_OK;
}

static amq_status t_create(const amq__type *self, amq__spec *spec,
                           uint64_t capacity, double fpr,
                           const amq_options *opt, amq__obj **out,
                           amq_diag *diag) {
    amq_options o2 = *opt;
    amq_qf *core;
    amq_aqf *a;
    (void)self;
    o2.flags &= ~AMQ_OPT_CONCURRENT;
    AMQ_RETURN_IF_ERR(amq__qf_create_table(spec, capacity, fpr, false, "aqf",
                                           &o2, &core, diag));
    AMQ_RETURN_IF_ERR(wrap(core, &o2, &a));
    *out = &a->o;
    return AMQ_OK;
}

/* ---- the frame ----------------------------------------------------------- */

#define PARAMS_LEN (AMQ__QF_PARAMS_LEN + 32)

static size_t core_padded(const amq_aqf *a) {
    return (a->core->o.table_bytes + 7) / 8 * 8;
}

static void t_params_write(const amq__obj *o, amq__wr *w) {
    const amq_aqf *a = (const amq_aqf *)o;
    amq__qf_params_write(a->core, w);
    amq__wr_u64(w, a->ext.slots);
    amq__wr_u64(w, a->ext.used);
    amq__wr_u64(w, a->map.slots);
    amq__wr_u64(w, a->reports);
}

static size_t t_payload_size(const amq__obj *o) {
    const amq_aqf *a = (const amq_aqf *)o;
    return core_padded(a) + tab_bytes(a->ext.slots, 8) +
           tab_bytes(a->map.slots, 1);
}

static void t_payload_write(const amq__obj *o, uint8_t *dst) {
    const amq_aqf *a = (const amq_aqf *)o;
    size_t cb = a->core->o.table_bytes, at = core_padded(a);
    memcpy(dst, a->core->o.table, cb);
    memset(dst + cb, 0, at - cb);
    if (a->ext.slots)
        memcpy(dst + at, a->ext.p, tab_bytes(a->ext.slots, 8));
    at += tab_bytes(a->ext.slots, 8);
    if (a->map.slots)
        memcpy(dst + at, a->map.p, tab_bytes(a->map.slots, 1));
}

static size_t t_size_bytes(const amq__obj *o) {
    const amq_aqf *a = (const amq_aqf *)o;
    return a->core->o.table_bytes + tab_bytes(a->ext.slots, 8);
}

static size_t t_describe(const amq__obj *o, char *buf, size_t cap) {
    return amq__qf_describe(&((const amq_aqf *)o)->core->o, buf, cap);
}

static double t_fpr_bound(const amq__obj *o) {
    return amq__qf_fpr_bound(&((const amq_aqf *)o)->core->o);
}

static amq_status t_curve(const amq__type *self, amq__spec *spec, double x,
                          bool inverse, double *out, amq_diag *diag) {
    (void)self;
    (void)spec;
    (void)diag;
    *out = amq__qf_curve(x, inverse);
    return AMQ_OK;
}

/* A side table read back: its size, the count of its entries, each
 * value's range, and that every entry is found from its home (the probe
 * from home to it meets no empty slot). `at` is the frame offset of its
 * slot count, blamed for a bad shape; a bad entry is blamed at its key. */
static amq_status check_tab(const amq_aqf *a, const tab *t, uint64_t used,
                            const amq__rd *rd, size_t at, size_t payload_at,
                            const char *what) {
    uint64_t seen = 0, start = 0;
    if (t->slots == 0)
        return used == 0 ? AMQ_OK
                         : amq__rd_bad(rd, at, "%s: %llu entries in no slots",
                                       what, (unsigned long long)used);
    for (uint64_t i = 0; i < t->slots; i++) {
        uint64_t v = val_at(t, i);
        if (v == empty_of(t)) {
            if (key_at(t, i) != 0)
                return amq__rd_bad(rd,
                                   payload_at + (size_t)(key_ptr(t, i) - t->p),
                                   "%s: empty slot %llu holds a key", what,
                                   (unsigned long long)i);
            start = i;
            continue;
        }
        seen++;
        if (t->vw == 1 ? v > MAX_LEN
                       : (rec_len(v) > MAX_LEN || (v >> 6) >> rec_len(v) != 0))
            return amq__rd_bad(rd, payload_at + (size_t)(key_ptr(t, i) - t->p),
                               "%s: bad entry at %llu", what,
                               (unsigned long long)i);
    }
    if (seen != used || used > t->slots / 8 * 7)
        return amq__rd_bad(rd, at, "%s: %llu entries, %llu counted", what,
                           (unsigned long long)used, (unsigned long long)seen);
    /* From an empty slot round the table: each cluster starts after an
     * empty slot, and an entry's home must lie in its cluster, at or
     * before it. */
    uint64_t cl = 0; /* distance of slot i from its cluster's start */
    for (uint64_t s = 1; s <= t->slots; s++) {
        uint64_t i = (start + s) & (t->slots - 1);
        if (is_empty(t, i)) {
            cl = 0;
            continue;
        }
        uint64_t home = home_of(t, entry_fp(a, t, i));
        if (((i - home) & (t->slots - 1)) > cl)
            return amq__rd_bad(rd, payload_at + (size_t)(key_ptr(t, i) - t->p),
                               "%s: entry at %llu is not found from its home",
                               what, (unsigned long long)i);
        cl++;
    }
    return AMQ_OK;
}

static amq_status t_load(const amq__type *self, amq__rd *rd,
                         const uint8_t *payload, size_t len, bool view,
                         const amq_options *opt, amq__obj **out) {
    uint64_t es, eu, ms, reports;
    amq_qf *core = NULL;
    amq_aqf *a;
    (void)self;
    AMQ_RETURN_IF_ERR(amq__rd_expect(rd, PARAMS_LEN));
    AMQ_RETURN_IF_ERR(amq__qf_load_table(rd, false, "aqf", payload, len, true,
                                         view, opt, &core));
    size_t at_es = amq__rd_u64(rd, &es);
    size_t at_eu = amq__rd_u64(rd, &eu);
    size_t at_ms = amq__rd_u64(rd, &ms);
    amq__rd_u64(rd, &reports);
    AMQ_RETURN_IF_ERR(wrap(core, opt, &a));
    amq_status st = AMQ_OK;
    size_t at = core_padded(a), eb = 0, mb = 0;
    if (es != 0 &&
        (es < MIN_SLOTS || (es & (es - 1)) != 0 || es > (1ull << 58)))
        st = amq__rd_bad(rd, at_es, "%llu extension slots",
                         (unsigned long long)es);
    else if (ms != 0 &&
             (ms < MIN_SLOTS || (ms & (ms - 1)) != 0 || ms > (1ull << 58)))
        st = amq__rd_bad(rd, at_ms, "%llu reverse-map slots",
                         (unsigned long long)ms);
    else if (eb = tab_bytes(es, 8), mb = tab_bytes(ms, 1),
             len < at || len - at != eb + mb)
        st = amq__rd_bad(rd, at_es,
                         "side tables do not match a %zu-byte "
                         "payload",
                         len);
    for (size_t i = a->core->o.table_bytes; st == AMQ_OK && i < at; i++)
        if (payload[i] != 0)
            st = amq__rd_bad(rd, rd->payload_at + i, "padding is not zero");
    if (st == AMQ_OK) {
        a->ext.slots = es;
        a->ext.used = eu;
        a->map.slots = ms;
        a->map.used = a->o.items;
        a->reports = reports;
        if (view) {
            a->ext.p = (uint8_t *)(payload + at);
            a->map.p = (uint8_t *)(payload + at + eb);
        } else {
            a->ext.p = eb ? amq__alloc(&a->o.mem, eb) : NULL;
            a->map.p = mb ? amq__alloc(&a->o.mem, mb) : NULL;
            a->ext.owned = a->ext.p != NULL;
            a->map.owned = a->map.p != NULL;
            if ((eb && a->ext.p == NULL) || (mb && a->map.p == NULL))
                st = AMQ_ERR_NOMEM;
            if (eb && a->ext.p)
                memcpy(a->ext.p, payload + at, eb);
            if (mb && a->map.p)
                memcpy(a->map.p, payload + at + eb, mb);
        }
    }
    if (st == AMQ_OK)
        st = check_tab(a, &a->ext, eu, rd, at_eu, rd->payload_at + at,
                       "extension records");
    if (st == AMQ_OK)
        st = check_tab(a, &a->map, a->o.items, rd, at_ms,
                       rd->payload_at + at + eb, "reverse map");
    if (st != AMQ_OK) {
        aqf_destroy(&a->o);
        return st;
    }
    *out = &a->o;
    return AMQ_OK;
}

#define PARAMS                                                                 \
    "q=LOG2_SLOTS (6-56), slots=HOME_SLOTS (multiple of 64, instead of q), "   \
    "r=REMAINDER_BITS (default ceil(log2(1/fpr)))"

const amq__type amq__type_aqf = {
    .info = {.name = "aqf",
             .type_id = AMQ__ID_aqf,
             .caps = AMQ_CAP_REMOVE | AMQ_CAP_COUNT | AMQ_CAP_ADAPT,
             .summary = "adaptive quotient filter (fixes reported false "
                        "positives)",
             .params = PARAMS,
             .default_hash = AMQ_HASH_XXH3},
    .reads = 3,
    .reads_text = "1-3 (records after a match)",
    .kernel_shapes = amq__defaults_only,
    .create = t_create,
    .load = t_load,
    .destroy = aqf_destroy,
    .add = aqf_add,
    .add_batch = aqf_add_batch,
    .contains = aqf_contains,
    .contains_batch = aqf_contains_batch,
    .remove = aqf_remove,
    .count = aqf_count,
    .fpr_bound = t_fpr_bound,
    .size_bytes = t_size_bytes,
    .describe = t_describe,
    .curve = t_curve,
    .params_write = t_params_write,
    .payload_size = t_payload_size,
    .payload_write = t_payload_write,
    .report_fp = aqf_report,
    .adapt_stats = aqf_stats,
};
