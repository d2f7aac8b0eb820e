/*
 * quotient.c — making quotient filters: construction and sizing, merge and
 * resize (both rebuild in fingerprint order, aside, then swap), the
 * properties and enumeration (qf_impl.h has the layout).
 */
#include <math.h>
#include <string.h>

#include "fingerprint/qf_codec.h"

/* ---- enumeration --------------------------------------------------------- */

void amq_qf_iter_init(const amq_qf *f, amq_qf_iter *it) {
    memset(it, 0, sizeof *it);
    it->f = f;
}

bool amq_qf_iter_next(amq_qf_iter *it, uint64_t *fp, uint64_t *count) {
    const amq_qf *f = it->f;
    group g;
    if (!it->in_run) {
        uint64_t q = next_occupied(f, it->quotient, f->nslots);
        if (q >= f->nslots)
            return false;
        it->quotient = q;
        it->pos = q > it->pos ? q : it->pos;
        it->runend = select_rend(f, it->pos, 1, f->nblocks) + 1;
        it->in_run = true;
    }
    if (!decode(f, it->pos, it->runend, &g))
        g = (group){slot_get(f, it->pos), 1, 1}; /* unreachable if valid */
    it->pos += g.len;
    *fp = it->quotient << f->rbits | g.x;
    *count = g.count;
    if (it->pos >= it->runend) {
        it->in_run = false;
        it->quotient++;
    }
    return true;
}

/* ---- construction -------------------------------------------------------- */

unsigned amq__qf_ceil_log2(uint64_t n) {
    return n <= 1 ? 0 : 64u - (unsigned)__builtin_clzll(n - 1);
}

amq_status amq__qf_check_shape(uint64_t n, unsigned r, bool counting) {
    if (n < 64 || n % 64 != 0 || r < (counting ? QF_MIN_RBITS_CQF : 1u) ||
        r > AMQ_QF_MAX_RBITS)
        return AMQ_ERR_INVALID;
    if (amq__qf_ceil_log2(n) + r > 64 || n > (UINT64_C(1) << 56))
        return AMQ_ERR_OVERFLOW;
    return AMQ_OK;
}

uint64_t amq__qf_default_tail(uint64_t n) { return n < 128 ? n : 128; }

static uint64_t tail_of(uint64_t n, uint64_t tail) {
    return tail != 0 ? tail : amq__qf_default_tail(n);
}

amq_status amq__qf_table_bytes_tail(uint64_t n, unsigned w, uint64_t tail,
                                    size_t *out) {
    uint64_t t = n + tail_of(n, tail);
    size_t bs = QF_HDR + 8 * (size_t)w;
    if (t / 64 > SIZE_MAX || !amq__mul((size_t)(t / 64), bs, out))
        return AMQ_ERR_OVERFLOW;
    return AMQ_OK;
}

/* Table bytes for n home slots of width w. */
amq_status amq__qf_table_bytes(uint64_t n, unsigned w, size_t *out) {
    return amq__qf_table_bytes_tail(n, w, 0, out);
}

amq_status amq__qf_alloc(uint64_t n, unsigned r, bool counting,
                         const amq_options *opt, const uint8_t *borrow,
                         amq_qf **out) {
    return amq__qf_alloc_v(n, r, 0, counting, opt, borrow, out);
}

static amq_status alloc_shape(uint64_t n, unsigned r, unsigned v, uint64_t tail,
                              bool counting, const amq_options *opt,
                              const uint8_t *borrow, amq_qf **out) {
    amq_qf *f;
    size_t bytes, padded;
    void *wr;
    AMQ_RETURN_IF_ERR(amq__qf_check_shape(n, r, counting));
    if (v > 64)
        return AMQ_ERR_INVALID;
    if (tail != 0 &&
        (tail % 64 != 0 || tail < amq__qf_default_tail(n) || tail > n))
        return AMQ_ERR_INVALID;
    AMQ_RETURN_IF_ERR(amq__qf_table_bytes_tail(n, r + v, tail, &bytes));
    if (!amq__add(bytes, 16, &padded))
        return AMQ_ERR_OVERFLOW;
    AMQ_RETURN_IF_ERR(amq__obj_new(sizeof *f, opt, (void **)&f));
    f->nslots = n;
    f->tslots = n + tail_of(n, tail);
    f->nblocks = f->tslots / 64;
    f->rbits = r;
    f->vbits = v;
    f->width = r + v;
    f->rmask = (1ULL << r) - 1;
    f->wmask = f->width >= 64 ? ~0ULL : (1ULL << f->width) - 1;
    f->vmask = v >= 64 ? ~0ULL : (1ULL << v) - 1;
    f->scalar = opt != NULL && (opt->flags & AMQ_OPT_SCALAR);
    /* The block-local fast paths (8-byte slot access: widths up to 56, not
     * the last block, since a borrowed table has no padding); none under
     * AMQ_OPT_SCALAR, which keeps the reference paths. */
    f->fast_blocks = !f->scalar && f->width <= 56 ? f->nblocks - 1 : 0;
    f->bsize = QF_HDR + 8 * (size_t)f->width;
    f->counting = counting;
    f->use_pdep = !f->scalar && amq__qf_have_pdep();
    f->concurrent = opt != NULL && (opt->flags & AMQ_OPT_CONCURRENT);
    amq__qf_choose_kernel(f);
    f->nregions = (f->nblocks + QF_REGION_BLOCKS - 1) / QF_REGION_BLOCKS;
    if (f->concurrent) {
        f->regions =
            amq__zalloc(&f->o.mem, (size_t)f->nregions * sizeof(qf_region));
        if (f->regions == NULL) {
            amq__obj_free(&f->o);
            return AMQ_ERR_NOMEM;
        }
    }
    amq_status st = amq__obj_table(&f->o, borrow ? bytes : padded, borrow, &wr);
    if (st != AMQ_OK) {
        amq__qf_destroy(&f->o);
        return st;
    }
    f->o.table_bytes = bytes;
    f->data = borrow != NULL ? (uint8_t *)borrow : wr;
    *out = f;
    return AMQ_OK;
}

amq_status amq__qf_alloc_v(uint64_t n, unsigned r, unsigned v, bool counting,
                           const amq_options *opt, const uint8_t *borrow,
                           amq_qf **out) {
    return alloc_shape(n, r, v, 0, counting, opt, borrow, out);
}

amq_status amq__qf_alloc_tail(uint64_t n, unsigned w, uint64_t tail,
                              const amq_options *opt, const uint8_t *borrow,
                              amq_qf **out) {
    return alloc_shape(n, w, 0, tail, false, opt, borrow, out);
}

/* A copy of f's blocks at the front of a table with the longer tail (the
 * new blocks empty: no run reached them), counters and all, adopted. */
amq_status amq__qf_widen_tail(amq_qf *f, uint64_t tail) {
    amq_options opt;
    amq_qf *g;
    if (qf_is_view(f) || f->concurrent || f->vbits != 0 || f->counting)
        return AMQ_ERR_UNSUPPORTED;
    if (tail <= f->tslots - f->nslots)
        return AMQ_ERR_INVALID;
    amq__qf_opts_like(f, &opt);
    AMQ_RETURN_IF_ERR(
        amq__qf_alloc_tail(f->nslots, f->width, tail, &opt, NULL, &g));
    memcpy(g->data, f->data, f->o.table_bytes);
    g->o.items = f->o.items;
    g->distinct = f->distinct;
    g->used = f->used;
    amq__qf_adopt(f, g);
    return AMQ_OK;
}

/* Home slots for capacity keys at <= 95% load, and r for fpr. */
amq_status amq__qf_size_for(uint64_t capacity, double fpr, uint64_t *n,
                            unsigned *r) {
    if (capacity == 0 || !(fpr > 0.0 && fpr < 1.0))
        return AMQ_ERR_INVALID;
    double slots = ceil((double)capacity / AMQ_QF_MAX_LOAD);
    if (!(slots < 0x1p56))
        return AMQ_ERR_OVERFLOW;
    *n = ((uint64_t)slots + 63) / 64 * 64;
    double rr = ceil(-log2(fpr));
    *r = rr < 1 ? 1u : rr > AMQ_QF_MAX_RBITS ? AMQ_QF_MAX_RBITS : (unsigned)rr;
    return AMQ_OK;
}

void amq__qf_destroy(amq__obj *o) {
    amq_qf *f = (amq_qf *)o;
    if (f == NULL)
        return;
    if (f->regions != NULL)
        amq__free(&f->o.mem, f->regions,
                  (size_t)f->nregions * sizeof(qf_region));
    amq__obj_free(&f->o);
}

/* ---- building in fingerprint order (merge, resize) ----------------------- */

typedef struct builder {
    amq_qf *f;
    qf_writer w;
} builder;

static amq_status build_append(builder *b, uint64_t fp, uint64_t c) {
    amq_qf *f = b->f;
    uint64_t q = fp >> f->rbits, x = fp & f->rmask, len;
    if (q >= f->nslots)
        return AMQ_ERR_INVALID;
    writer_enter(f, &b->w, q);
    if (!f->counting && c > f->tslots)
        return AMQ_ERR_FULL;
    len = group_len(f, x, c);
    if (b->w.pos + len > f->tslots)
        return AMQ_ERR_FULL;
    write_group(f, b->w.pos, x, c);
    b->w.pos += len;
    f->o.items += c;
    f->distinct++;
    f->used += len;
    return AMQ_OK;
}

void amq__qf_build_finish(amq_qf *f, const qf_writer *w) {
    uint64_t t = 0;
    if (w->run)
        rend_put(f, w->pos - 1, true);
    off_set(f, 0, 0);
    for (uint64_t k = 1; k < f->nblocks; k++) {
        t = next_off(f, k - 1, t, f->nblocks);
        off_set(f, k, t);
    }
}

static void build_finish(builder *b) { amq__qf_build_finish(b->f, &b->w); }

static bool same_shape(const amq_qf *a, const amq_qf *b) {
    return a->nslots == b->nslots && a->rbits == b->rbits &&
           a->width == b->width && a->counting == b->counting;
}

amq_status amq__qf_merge(const amq_qf *a, const amq_qf *b,
                         const amq_options *opt, amq_qf **out) {
    amq_qf_iter ia, ib;
    uint64_t fa = 0, ca = 0, fb = 0, cb = 0;
    builder bld;
    amq_status st;
    if (a == NULL || b == NULL || out == NULL)
        return AMQ_ERR_INVALID;
    *out = NULL;
    if (!same_shape(a, b))
        return AMQ_ERR_INCOMPATIBLE;
    if (qf_total(a, QF_ITEMS) > UINT64_MAX - qf_total(b, QF_ITEMS))
        return AMQ_ERR_OVERFLOW;
    AMQ_RETURN_IF_ERR(
        amq__qf_alloc(a->nslots, a->rbits, a->counting, opt, NULL, &bld.f));
    bld.w = (qf_writer){0, 0, false};
    amq_qf_iter_init(a, &ia);
    amq_qf_iter_init(b, &ib);
    bool ha = amq_qf_iter_next(&ia, &fa, &ca);
    bool hb = amq_qf_iter_next(&ib, &fb, &cb);
    st = AMQ_OK;
    while (st == AMQ_OK && (ha || hb)) {
        if (ha && hb && fa == fb) {
            st = build_append(&bld, fa, ca + cb);
            ha = amq_qf_iter_next(&ia, &fa, &ca);
            hb = amq_qf_iter_next(&ib, &fb, &cb);
        } else if (ha && (!hb || fa < fb)) {
            st = build_append(&bld, fa, ca);
            ha = amq_qf_iter_next(&ia, &fa, &ca);
        } else {
            st = build_append(&bld, fb, cb);
            hb = amq_qf_iter_next(&ib, &fb, &cb);
        }
    }
    if (st != AMQ_OK) {
        amq__qf_destroy(&bld.f->o);
        return st;
    }
    build_finish(&bld);
    *out = bld.f;
    return AMQ_OK;
}

/* Options that give a new filter f's allocator and modes. */
void amq__qf_opts_like(const amq_qf *f, amq_options *opt) {
    memset(opt, 0, sizeof *opt);
    opt->allocator = &f->o.mem.a;
    opt->flags = (f->scalar ? AMQ_OPT_SCALAR : 0u) |
                 (f->concurrent ? AMQ_OPT_CONCURRENT : 0u);
}

/* Move g's table, locks and counters into f and free what f had. */
void amq__qf_adopt(amq_qf *f, amq_qf *g) {
    amq__block old = f->o.block;
    if (f->regions != NULL)
        amq__free(&f->o.mem, f->regions,
                  (size_t)f->nregions * sizeof(qf_region));
    f->regions = g->regions;
    f->nregions = g->nregions;
    f->o.block = g->o.block;
    f->o.table = g->o.table;
    f->o.table_bytes = g->o.table_bytes;
    f->data = g->data;
    f->nslots = g->nslots;
    f->tslots = g->tslots;
    f->nblocks = g->nblocks;
    f->bsize = g->bsize;
    f->rbits = g->rbits;
    f->width = g->width;
    f->vbits = g->vbits;
    f->rmask = g->rmask;
    f->wmask = g->wmask;
    f->vmask = g->vmask;
    f->fast_blocks = g->fast_blocks;
    f->o.items = g->o.items;
    f->distinct = g->distinct;
    f->used = g->used;
    if (old.raw != NULL)
        amq__block_free(&f->o.mem, &old);
    amq__free(&g->o.mem, g, g->o.self_bytes); /* its table is f's now */
}

/* dst += src: merged aside with dst's allocator and modes, then adopted
 * (dst unchanged on error). A union only: the caps keep intersect away. */
amq_status amq__qf_union(amq__obj *dst, const amq__obj *src, amq__merge_op op) {
    amq_qf *d = (amq_qf *)dst, *m;
    amq_options opt;
    (void)op;
    amq__qf_opts_like(d, &opt);
    AMQ_RETURN_IF_ERR(amq__qf_merge(d, (const amq_qf *)src, &opt, &m));
    amq__qf_adopt(d, m);
    return AMQ_OK;
}

amq_status amq_qf_resize(amq_qf *f) {
    amq_qf *g;
    amq_options opt;
    amq_qf_iter it;
    uint64_t fp, c;
    builder bld;
    if (f == NULL)
        return AMQ_ERR_INVALID;
    if (qf_is_view(f))
        return AMQ_ERR_UNSUPPORTED;
    if (f->rbits < (f->counting ? QF_MIN_RBITS_CQF + 1 : 2u))
        return AMQ_ERR_INVALID;
    if (f->nslots > UINT64_MAX / 2)
        return AMQ_ERR_OVERFLOW;
    amq__qf_opts_like(f, &opt);
    AMQ_RETURN_IF_ERR(amq__qf_alloc(f->nslots * 2, f->rbits - 1, f->counting,
                                    &opt, NULL, &g));
    bld = (builder){g, {0, 0, false}};
    amq_qf_iter_init(f, &it);
    while (amq_qf_iter_next(&it, &fp, &c)) {
        amq_status st = build_append(&bld, fp, c);
        if (st != AMQ_OK) {
            amq__qf_destroy(&g->o);
            return st;
        }
    }
    build_finish(&bld);
    amq__qf_adopt(f, g);
    return AMQ_OK;
}

/* ---- properties ---------------------------------------------------------- */

uint64_t amq_qf_slots(const amq_qf *f) { return f->nslots; }
uint64_t amq_qf_table_slots(const amq_qf *f) { return f->tslots; }
unsigned amq_qf_rbits(const amq_qf *f) { return f->rbits; }
bool amq_qf_is_counting(const amq_qf *f) { return f->counting; }
uint64_t amq_qf_distinct(const amq_qf *f) { return qf_total(f, QF_DISTINCT); }
uint64_t amq_qf_used_slots(const amq_qf *f) { return qf_total(f, QF_USED); }
bool amq_qf_is_concurrent(const amq_qf *f) { return f->concurrent; }
double amq_qf_metadata_bits_per_slot(void) { return QF_META_BITS; }

uint64_t amq__qf_items(const amq__obj *o) {
    return qf_total((const amq_qf *)o, QF_ITEMS);
}

/* A stranger's fingerprint is floor(h N 2^r / 2^64) for a uniform h: each of
 * the N 2^r values has probability at most 1/(N 2^r) + 2^-64, and it is a
 * false positive iff it hits one of the D stored fingerprints. */
double amq__qf_fpr_bound(const amq__obj *o) {
    const amq_qf *f = (const amq_qf *)o;
    double space = (double)f->nslots * ldexp(1.0, (int)f->rbits);
    double p = (double)qf_total(f, QF_DISTINCT) * (1.0 / space + 0x1p-64);
    return p < 1.0 ? p : 1.0;
}

/* For tests: operations that fell back to every region lock. */
uint64_t amq__qf_widenings(const amq_qf *f) {
    return __atomic_load_n(&f->widenings, __ATOMIC_RELAXED);
}

/* For tests: the raw table (the frame's payload). */
const uint8_t *amq__qf_table(const amq_qf *f, size_t *len) {
    *len = f->o.table_bytes;
    return f->data;
}
