/*
 * smaplet.c — the static maplet ("smaplet"): the Bloomier filter's job
 * (Chazelle, Kilian, Rubinfeld, Tal, SODA 2004; the review "Bloom filters
 * at fifty", §5) done with today's parts: a retrieval structure that
 * returns each key's value and answers anything for other keys, beside a
 * membership filter that says which keys are in.
 *
 *   get(h):  member.contains(h) ? value(h) : NOT_FOUND
 *
 *   member   a static filter at eps (bumped Ribbon by default: log2(1/eps)
 *            bits per key plus ~0.3%; or fuse/xor)
 *   value    bumped Ribbon retrieval (fingerprint/ribbon_build.c with the
 *            values as right-hand sides): v bits per key plus ~0.3%; two
 *            of them (bits 0-31, 32-63) for values wider than 32 bits
 *
 * Built once from (hash, value) pairs: sorted by the Ribbon parts' layer-0
 * key of the hash (a distribution sort carrying the values), repeats
 * combined with the operator, then both structures banded from those
 * sorted keys, the values beside them, neither sorting again; a Ribbon
 * member and the first value structure share one banding (build_values).
 * The retrieval part does not know which keys are in, so a key that
 * passes the membership test without being in gets an arbitrary value:
 * one-sided error holds (any value is above "absent"), but not the strong
 * maplet property, which belongs to fingerprint-based maplets
 * (amq/maplet.h).
 *
 * Frame parameters: op u8 | v u8 | member type id u16 | parts u32 |
 * items u64, then per part (member, then each value structure) a record
 * params_len u32 | 0 u32 | payload_len u64 | its type's parameters padded
 * to 8 bytes. The payload is the parts' payloads, each padded to 64 bytes
 * (a view reads them in place).
 */
#include <stdio.h>
#include <string.h>

#include "core/frame.h"
#include "core/sort.h"
#include "fingerprint/ribbon_impl.h"
#include "maplet/mqf.h"
#include "type/maplet_ops.h"

#define SM_PARTS 3 /* the member and up to two value structures */
#define SM_PAD 64
#define SM_DEFAULT_V 8

typedef struct smaplet {
    amq__obj o; /* o.items: keys; o.table_bytes: every part's table */
    const amq__type *mtype;
    amq__obj *part[SM_PARTS]; /* part[0] the member, then the values */
    unsigned nparts, vbits, op;
} smaplet;

static const char *const sm_members[] = {"ribbon", "fuse8", "fuse16", "fuse32",
                                         "xor8",   "xor16", "xor32"};

static const amq__type *sm_value_type(void) { return &amq__type_ribbon; }
static const amq__type *part_type(const smaplet *m, unsigned i) {
    return i == 0 ? m->mtype : sm_value_type();
}

/* Value bits stored by value structure j (1-based part index). */
static unsigned chunk_bits(unsigned v, unsigned part) {
    unsigned lo = 32 * (part - 1);
    return v - lo < 32 ? v - lo : 32;
}

static void sm_free(amq__obj *o) {
    smaplet *m = (smaplet *)o;
    if (m == NULL)
        return;
    for (unsigned i = 0; i < SM_PARTS; i++)
        if (m->part[i] != NULL) {
            const amq__type *t = part_type(m, i);
            if (t->destroy != NULL)
                t->destroy(m->part[i]);
            else
                amq__obj_free(m->part[i]);
        }
    amq__obj_free(&m->o);
}

/* ---- pairs: sorted by key, repeats combined ----------------------------------- */

/* The pairs by their Ribbon layer-0 key x = rb_mix(h, amq__rb_seed(0, 0)),
 * a bijection of the hash (so repeats of a hash are repeats of its key),
 * which is the order both Ribbon parts band layer 0 in: they take the
 * sorted keys and the aligned values as they are, and nothing is sorted
 * or searched again. The keys are uniform, so the sort is a distribution
 * sort (as core/sort.c's of plain keys): scatter the pairs into ~n / 2^11
 * partitions by the top bits, then each partition by a counting sort on
 * the next bits into cells of about a quarter pair, an insertion sort for
 * the rare ties, and qsort for a partition a crafted input overfills. */

typedef struct sm_pairs {
    uint64_t *h, *v; /* layer-0 keys, ascending and distinct; values */
    size_t n;
} sm_pairs;

typedef struct sm_pair {
    uint64_t x, v;
} sm_pair;

#define SM_PART_LOG 11
#define SM_PART_MAX_BITS 12
#define SM_CELL_MAX_BITS 16

typedef struct sm_sorter {
    sm_pair *all;   /* [n] the pairs, by partition          */
    size_t *part;   /* [parts + 1] partition ends            */
    uint32_t *cell; /* [2^cell_bits + 1] counts              */
    sm_pair *tmp;   /* [tmp_cap] one partition, sorted       */
    size_t n, parts, tmp_cap;
    unsigned part_bits, cell_bits;
} sm_sorter;

static void sorter_free(const amq__mem *m, sm_sorter *so) {
    amq__free(m, so->all, so->n * sizeof *so->all);
    amq__free(m, so->part, (so->parts + 1) * sizeof *so->part);
    amq__free(m, so->cell,
              (((size_t)1 << so->cell_bits) + 1) * sizeof *so->cell);
    amq__free(m, so->tmp, so->tmp_cap * sizeof *so->tmp);
    memset(so, 0, sizeof *so);
}

static amq_status sorter_alloc(const amq__mem *m, size_t n, sm_sorter *so) {
    unsigned lg = amq__log2_floor(n ? n : 1);
    memset(so, 0, sizeof *so);
    so->n = n ? n : 1;
    so->part_bits = lg > SM_PART_LOG ? lg - SM_PART_LOG : 0;
    if (so->part_bits > SM_PART_MAX_BITS)
        so->part_bits = SM_PART_MAX_BITS;
    so->parts = (size_t)1 << so->part_bits;
    so->tmp_cap = 4 * (n >> so->part_bits) + 64;
    so->cell_bits = amq__log2_floor(so->tmp_cap) + 2;
    if (so->cell_bits > SM_CELL_MAX_BITS)
        so->cell_bits = SM_CELL_MAX_BITS;
    so->all = amq__alloc(m, so->n * sizeof *so->all);
    so->part = amq__zalloc(m, (so->parts + 1) * sizeof *so->part);
    so->cell =
        amq__alloc(m, (((size_t)1 << so->cell_bits) + 1) * sizeof *so->cell);
    so->tmp = amq__alloc(m, so->tmp_cap * sizeof *so->tmp);
    if (so->all == NULL || so->part == NULL || so->cell == NULL ||
        so->tmp == NULL) {
        sorter_free(m, so);
        return AMQ_ERR_NOMEM;
    }
    return AMQ_OK;
}

static int cmp_pair(const void *a, const void *b) {
    uint64_t x = ((const sm_pair *)a)->x, y = ((const sm_pair *)b)->x;
    return (x > y) - (x < y);
}

static inline size_t part_of(uint64_t x, unsigned bits) {
    return bits ? (size_t)(x >> (64 - bits)) : 0;
}

/* Partition p[0..len) sorted by key into so->tmp; false if the insertion
 * sort runs long (many keys in one cell: crafted hashes). Equal keys keep
 * their order (a stable sort). */
static bool cell_sort(sm_sorter *so, const sm_pair *p, size_t len) {
    unsigned q = amq__log2_floor(len) + 2;
    q = q > so->cell_bits ? so->cell_bits : q;
    size_t cells = (size_t)1 << q;
    uint32_t *cnt = so->cell;
    memset(cnt, 0, (cells + 1) * sizeof *cnt);
    for (size_t i = 0; i < len; i++)
        cnt[((p[i].x << so->part_bits) >> (64 - q)) + 1]++;
    for (size_t c = 1; c <= cells; c++)
        cnt[c] += cnt[c - 1];
    for (size_t i = 0; i < len; i++)
        so->tmp[cnt[(p[i].x << so->part_bits) >> (64 - q)]++] = p[i];
    size_t moves = 0, budget = 8 * len + 64;
    for (size_t i = 1; i < len; i++) {
        sm_pair e = so->tmp[i];
        size_t j = i;
        for (; j > 0 && so->tmp[j - 1].x > e.x; j--)
            so->tmp[j] = so->tmp[j - 1];
        so->tmp[j] = e;
        if ((moves += i - j) > budget)
            return false;
    }
    return true;
}

/* Append partition p[0..len), sorted, to out, combining each key's values
 * with op (a key's pairs are all in one partition); false for a sum past
 * 2^64 - 1. */
static bool append_part(sm_sorter *so, sm_pair *p, size_t len, unsigned op,
                        sm_pairs *out) {
    const sm_pair *e = so->tmp;
    bool over = false;
    if (len > so->tmp_cap || !cell_sort(so, p, len)) {
        qsort(p, len, sizeof *p, cmp_pair); /* values combine in any order */
        e = p;
    }
    size_t w = out->n, first = w;
    for (size_t i = 0; i < len; i++) {
        if (w > first && out->h[w - 1] == e[i].x) {
            out->v[w - 1] = mq_combine(op, out->v[w - 1], e[i].v, &over);
        } else {
            out->h[w] = e[i].x;
            out->v[w++] = e[i].v;
        }
    }
    out->n = w;
    return !over;
}

static void pairs_free(const amq__mem *mem, sm_pairs *p, size_t cap) {
    amq__free(mem, p->h, cap * sizeof *p->h);
    amq__free(mem, p->v, cap * sizeof *p->v);
}

/* The distinct layer-0 keys in increasing order, each with its values
 * combined by op (a sum past 2^64 - 1 is AMQ_ERR_OVERFLOW). */
static amq_status sort_pairs(const amq__mem *mem, const uint64_t *h,
                             const uint64_t *v, size_t n, unsigned op,
                             sm_pairs *out) {
    size_t bytes;
    sm_sorter so;
    memset(out, 0, sizeof *out);
    if (!amq__mul(n ? n : 1, sizeof(sm_pair), &bytes))
        return AMQ_ERR_OVERFLOW;
    AMQ_RETURN_IF_ERR(sorter_alloc(mem, n, &so));
    out->h = amq__alloc(mem, (n ? n : 1) * sizeof *out->h);
    out->v = amq__alloc(mem, (n ? n : 1) * sizeof *out->v);
    amq_status st = out->h != NULL && out->v != NULL ? AMQ_OK : AMQ_ERR_NOMEM;
    uint64_t seed = amq__rb_seed(0, 0);
    for (size_t i = 0; st == AMQ_OK && i < n; i++)
        so.part[part_of(rb_mix(h[i], seed), so.part_bits) + 1]++;
    for (size_t p = 1; st == AMQ_OK && p <= so.parts; p++)
        so.part[p] += so.part[p - 1];
    /* part[p] moves from partition p's start to its end */
    for (size_t i = 0; st == AMQ_OK && i < n; i++) {
        uint64_t x = rb_mix(h[i], seed);
        so.all[so.part[part_of(x, so.part_bits)]++] = (sm_pair){x, v[i]};
    }
    for (size_t p = 0, a = 0; st == AMQ_OK && p < so.parts; p++) {
        if (!append_part(&so, so.all + a, so.part[p] - a, op, out))
            st = AMQ_ERR_OVERFLOW;
        a = so.part[p];
    }
    sorter_free(mem, &so);
    if (st != AMQ_OK)
        pairs_free(mem, out, n ? n : 1);
    return st;
}

/* ---- building ------------------------------------------------------------------ */

typedef struct sm_spec {
    uint64_t op, v;
    const amq__type *mtype;
} sm_spec;

/* A word-valued key: its index in names, or AMQ_ERR_SPEC. */
static amq_status spec_word(amq__spec *spec, const char *key,
                            const char *const *names, unsigned n, unsigned *out,
                            amq_diag *diag) {
    for (size_t i = 0; i < spec->nkv; i++) {
        amq__spec_kv *kv = &spec->kv[i];
        if (strcmp(kv->key, key) != 0)
            continue;
        kv->used = true;
        for (unsigned k = 0; k < n; k++)
            if (strcmp(kv->val, names[k]) == 0) {
                *out = k;
                return AMQ_OK;
            }
        return amq__diag(diag, AMQ_ERR_SPEC, kv->offset,
                         "smaplet: unknown %s '%s'", key, kv->val);
    }
    return AMQ_OK;
}

static amq_status read_spec(amq__spec *spec, sm_spec *p, amq_diag *diag) {
    static const char *const ops[] = {"sum", "max", "min", "or"};
    unsigned op = 0, member = 0;
    AMQ_RETURN_IF_ERR(spec_word(spec, "op", ops, 4, &op, diag));
    AMQ_RETURN_IF_ERR(spec_word(spec, "member", sm_members, 7, &member, diag));
    p->op = op + 1;
    p->v = SM_DEFAULT_V;
    p->mtype = amq__type_by_name(sm_members[member]);
    return amq__spec_u64(spec, "v", 1, 64, &p->v, NULL, diag);
}

/* Value structure `part` from the sorted pairs: its chunk of each value
 * as the right-hand sides; with pair_bits64 > 0, banded once together
 * with the Ribbon member of that many bits (into *member): the same keys
 * give both the same equations but for the right-hand sides. */
static amq_status build_values(const amq__mem *mem, const sm_pairs *pr,
                               unsigned v, unsigned part, uint32_t pair_bits64,
                               const amq_options *opt, amq__obj **member,
                               amq__obj **out) {
    size_t bytes;
    if (!amq__mul(pr->n ? pr->n : 1, sizeof(uint32_t), &bytes))
        return AMQ_ERR_OVERFLOW;
    uint32_t *chunk = amq__alloc(mem, bytes);
    if (chunk == NULL)
        return AMQ_ERR_NOMEM;
    for (size_t i = 0; i < pr->n; i++)
        chunk[i] = (uint32_t)(pr->v[i] >> (32 * (part - 1)));
    rb_values vals = {pr->h, chunk, pr->n};
    amq_ribbon *rb = NULL, *mb = NULL;
    amq_status st =
        pair_bits64 > 0
            ? amq__rb_build_pair(&vals, pair_bits64, chunk_bits(v, part), opt,
                                 &mb, &rb)
            : amq__rb_build_values(&vals, chunk_bits(v, part), opt, &rb);
    amq__free(mem, chunk, bytes);
    *out = st == AMQ_OK ? &rb->o : NULL;
    if (pair_bits64 > 0)
        *member = st == AMQ_OK ? &mb->o : NULL;
    return st;
}

/* The bits of a Ribbon member at its type's default shape for fpr when
 * it can share its banding with the first value structure (its columns
 * and that structure's bits fit one 32-bit right-hand side); else 0. */
static uint32_t pair_bits64(const smaplet *m, double fpr) {
    double bits = amq_ribbon_bits_for(fpr);
    uint32_t b64 = (uint32_t)(bits * 64);
    if (m->mtype != &amq__type_ribbon || bits <= 0)
        return 0;
    return b64 / 64 + (b64 % 64 != 0) + chunk_bits(m->vbits, 1) <= 32 ? b64 : 0;
}

/* The member from the sorted layer-0 keys: a Ribbon member (the default,
 * at its type's default shape for fpr) takes them as they are, which
 * gives the bytes its own build from the hashes gives; another type gets
 * the hashes back (the key is a bijection of the hash). */
static amq_status build_member(smaplet *m, const sm_pairs *pr, double fpr,
                               const amq_options *opt, amq_diag *diag) {
    amq__spec none;
    size_t bytes;
    double bits = amq_ribbon_bits_for(fpr);
    if (m->mtype == &amq__type_ribbon && bits > 0) { /* as its t_build */
        amq_ribbon *rb = NULL;
        amq_status st = amq__rb_build_mixed(pr->h, pr->n, (uint32_t)(bits * 64),
                                            64, true, opt, &rb);
        if (st == AMQ_ERR_FULL)
            return amq__diag(diag, st, 0,
                             "ribbon: %zu keys did not band in %d attempts",
                             pr->n, AMQ_STATIC_MAX_ATTEMPTS);
        m->part[0] = st == AMQ_OK ? &rb->o : NULL;
        return st;
    }
    if (!amq__mul(pr->n ? pr->n : 1, sizeof(uint64_t), &bytes))
        return AMQ_ERR_OVERFLOW;
    uint64_t *h = amq__alloc(&m->o.mem, bytes), seed = amq__rb_seed(0, 0);
    if (h == NULL)
        return AMQ_ERR_NOMEM;
    for (size_t i = 0; i < pr->n; i++)
        h[i] = rb_unmix(pr->h[i]) - seed;
    memset(&none, 0, sizeof none);
    snprintf(none.name, sizeof none.name, "%s", m->mtype->info.name);
    amq_status st =
        m->mtype->build(m->mtype, &none, h, pr->n, fpr, opt, &m->part[0], diag);
    amq__free(&m->o.mem, h, bytes);
    return st;
}

/* Every part from the distinct pairs. */
static amq_status build_parts(smaplet *m, const sm_pairs *pr, double fpr,
                              const amq_options *opt, amq_diag *diag) {
    uint32_t pair = pair_bits64(m, fpr);
    amq_status st = pair > 0 ? AMQ_OK : build_member(m, pr, fpr, opt, diag);
    for (unsigned i = 1; st == AMQ_OK && i < m->nparts; i++) {
        st = build_values(&m->o.mem, pr, m->vbits, i, i == 1 ? pair : 0, opt,
                          &m->part[0], &m->part[i]);
        if (st == AMQ_ERR_FULL)
            st = amq__diag(diag, st, 0, "smaplet: %zu values did not band",
                           pr->n);
    }
    if (st != AMQ_OK)
        return st;
    for (unsigned i = 0; i < m->nparts; i++)
        m->o.table_bytes += m->part[i]->table_bytes;
    m->o.items = pr->n;
    return AMQ_OK;
}

static amq_status sm_new(const sm_spec *p, const amq_options *opt,
                         smaplet **out) {
    smaplet *m;
    AMQ_RETURN_IF_ERR(amq__obj_new(sizeof *m, opt, (void **)&m));
    m->mtype = p->mtype;
    m->op = (unsigned)p->op;
    m->vbits = (unsigned)p->v;
    m->nparts = 1 + (m->vbits + 31) / 32;
    *out = m;
    return AMQ_OK;
}

static amq_status m_build(const amq__type *self, amq__spec *spec,
                          const uint64_t *h, const uint64_t *v, size_t n,
                          double fpr, const amq_options *opt, amq__obj **out,
                          amq_diag *diag) {
    sm_spec p;
    smaplet *m;
    sm_pairs pr;
    (void)self;
    AMQ_RETURN_IF_ERR(read_spec(spec, &p, diag));
    uint64_t vmask = p.v >= 64 ? ~0ULL : (1ULL << p.v) - 1;
    for (size_t i = 0; i < n; i++)
        if (v[i] > vmask)
            return amq__diag(diag, AMQ_ERR_INVALID, i,
                             "pair %zu: value %llu wider than %u bits", i + 1,
                             (unsigned long long)v[i], (unsigned)p.v);
    AMQ_RETURN_IF_ERR(sm_new(&p, opt, &m));
    amq_status st = sort_pairs(&m->o.mem, h, v, n, m->op, &pr);
    if (st == AMQ_OK) {
        st = build_parts(m, &pr, fpr, opt, diag);
        pairs_free(&m->o.mem, &pr, n ? n : 1);
    }
    if (st != AMQ_OK) {
        sm_free(&m->o);
        return st;
    }
    *out = &m->o;
    return AMQ_OK;
}

/* From hashes alone: every key's value is 1 (a sum counts repeats). */
static amq_status t_build(const amq__type *self, amq__spec *spec,
                          const uint64_t *h, size_t n, double fpr,
                          const amq_options *opt, amq__obj **out,
                          amq_diag *diag) {
    amq__mem mem;
    size_t bytes;
    amq__mem_init(&mem, opt);
    if (!amq__mul(n ? n : 1, sizeof(uint64_t), &bytes))
        return AMQ_ERR_OVERFLOW;
    uint64_t *ones = amq__alloc(&mem, bytes);
    if (ones == NULL)
        return AMQ_ERR_NOMEM;
    for (size_t i = 0; i < n; i++)
        ones[i] = 1;
    amq_status st = m_build(self, spec, h, ones, n, fpr, opt, out, diag);
    amq__free(&mem, ones, bytes);
    return st;
}

/* ---- queries --------------------------------------------------------------------- */

#define SM(o) ((const smaplet *)(o))

static bool t_contains(const amq__obj *o, uint64_t h) {
    const smaplet *m = SM(o);
    return m->mtype->contains(m->part[0], h);
}

static void t_batch(const amq__obj *o, const uint64_t *h, size_t n,
                    uint8_t *out) {
    const smaplet *m = SM(o);
    if (m->mtype->contains_batch != NULL)
        m->mtype->contains_batch(m->part[0], h, n, out);
    else
        for (size_t i = 0; i < n; i++)
            out[i] = m->mtype->contains(m->part[0], h[i]);
}

static uint64_t value_of(const smaplet *m, uint64_t h) {
    uint64_t v = 0;
    for (unsigned i = 1; i < m->nparts && i < SM_PARTS; i++)
        v |= (uint64_t)amq__rb_retrieve((const amq_ribbon *)m->part[i], h)
             << (32 * (i - 1));
    return v;
}

static amq_status m_get(const amq__obj *o, uint64_t h, uint64_t *v) {
    const smaplet *m = SM(o);
    *v = 0;
    if (!m->mtype->contains(m->part[0], h))
        return AMQ_ERR_NOT_FOUND;
    *v = value_of(m, h);
    return AMQ_OK;
}

/* Membership through the member's batch, then each value part's batch
 * over the keys found (both prefetch keys ahead): the same answers as
 * m_get key by key. */
#define SM_CHUNK 256
static void m_get_batch(const amq__obj *o, const uint64_t *h, size_t n,
                        uint64_t *v, uint8_t *found) {
    const smaplet *m = SM(o);
    uint32_t part[SM_CHUNK];
    t_batch(o, h, n, found);
    memset(v, 0, n * sizeof *v);
    for (size_t c = 0; c < n; c += SM_CHUNK) {
        size_t len = n - c < SM_CHUNK ? n - c : SM_CHUNK;
        for (unsigned i = 1; i < m->nparts && i < SM_PARTS; i++) {
            amq__rb_retrieve_batch((const amq_ribbon *)m->part[i], h + c,
                                   found + c, len, part);
            for (size_t j = 0; j < len; j++)
                v[c + j] |= (uint64_t)part[j] << (32 * (i - 1));
        }
    }
}

static double t_bound(const amq__obj *o) {
    const smaplet *m = SM(o);
    return m->mtype->fpr_bound(m->part[0]);
}

static void m_shape(const amq__obj *o, amq_maplet_shape *s) {
    const smaplet *m = SM(o);
    *s = (amq_maplet_shape){
        (amq_maplet_op)m->op, m->vbits, false, true, 0, 0, 0, 0, o->items};
}

static size_t t_describe(const amq__obj *o, char *buf, size_t cap) {
    static const char *const ops[] = {"sum", "max", "min", "or"};
    const smaplet *m = SM(o);
    return amq__describe(buf, cap, "op=%s,v=%u,member=%s", ops[m->op - 1],
                         m->vbits, m->mtype->info.name);
}

/* Bits per key: the member's curve at eps, plus each value bit at the
 * bumped Ribbon's rows per key, plus its codes. */
static amq_status t_curve(const amq__type *self, amq__spec *spec, double x,
                          bool inverse, double *out, amq_diag *diag) {
    sm_spec p;
    double rho, mu;
    amq__spec none;
    (void)self;
    AMQ_RETURN_IF_ERR(read_spec(spec, &p, diag));
    amq__rb_curve_shape(64, true, &rho, &mu);
    double vbits = (double)p.v * rho + mu * (double)((p.v + 31) / 32);
    memset(&none, 0, sizeof none);
    snprintf(none.name, sizeof none.name, "%s", p.mtype->info.name);
    if (inverse) {
        AMQ_RETURN_IF_ERR(p.mtype->curve(p.mtype, &none, x, true, out, diag));
        *out += vbits;
        return AMQ_OK;
    }
    if (x <= vbits + 1e-9) {
        *out = 1.0;
        return AMQ_OK;
    }
    return p.mtype->curve(p.mtype, &none, x - vbits, false, out, diag);
}

/* ---- the frame ----------------------------------------------------------------------- */

static size_t part_params(const amq__type *t, const amq__obj *o) {
    amq__wr w = {NULL, 0};
    t->params_write(o, &w);
    return w.pos;
}
static size_t part_payload(const amq__type *t, const amq__obj *o) {
    return t->payload_size != NULL ? t->payload_size(o) : o->table_bytes;
}
static size_t pad(size_t n, size_t to) { return (n + to - 1) / to * to; }

static void t_params_write(const amq__obj *o, amq__wr *w) {
    const smaplet *m = SM(o);
    amq__wr_u32(w,
                m->op | m->vbits << 8 | (uint32_t)m->mtype->info.type_id << 16);
    amq__wr_u32(w, m->nparts);
    amq__wr_u64(w, o->items);
    for (unsigned i = 0; i < m->nparts; i++) {
        const amq__type *t = part_type(m, i);
        size_t len = part_params(t, m->part[i]);
        amq__wr_u32(w, (uint32_t)len);
        amq__wr_u32(w, 0);
        amq__wr_u64(w, part_payload(t, m->part[i]));
        size_t at = w->pos;
        t->params_write(m->part[i], w);
        if (w->p != NULL)
            memset(w->p + at + len, 0, pad(len, 8) - len);
        w->pos = at + pad(len, 8);
    }
}

static size_t t_payload_size(const amq__obj *o) {
    const smaplet *m = SM(o);
    size_t total = 0;
    for (unsigned i = 0; i < m->nparts; i++)
        total += pad(part_payload(part_type(m, i), m->part[i]), SM_PAD);
    return total;
}

static void t_payload_write(const amq__obj *o, uint8_t *dst) {
    const smaplet *m = SM(o);
    for (unsigned i = 0; i < m->nparts; i++) {
        const amq__type *t = part_type(m, i);
        const amq__obj *p = m->part[i];
        size_t len = part_payload(t, p);
        if (t->payload_write != NULL)
            t->payload_write(p, dst);
        else if (len != 0)
            memcpy(dst, p->table, len);
        memset(dst + len, 0, pad(len, SM_PAD) - len);
        dst += pad(len, SM_PAD);
    }
}

/* The header fields: operator, width, member type, parts. */
static amq_status load_header(amq__rd *r, smaplet *m, uint64_t *items) {
    uint32_t shape, parts;
    size_t at = amq__rd_u32(r, &shape);
    size_t at_p = amq__rd_u32(r, &parts);
    amq__rd_u64(r, items);
    unsigned op = shape & 0xff, v = (shape >> 8) & 0xff, id = shape >> 16;
    const amq__type *t = amq__type_by_id((uint16_t)id);
    if (r->short_read)
        return amq__rd_bad(r, at, "parameter block too short");
    if (op < 1 || op > 4)
        return amq__rd_bad(r, at, "unknown operator %u", op);
    if (v < 1 || v > 64)
        return amq__rd_bad(r, at + 1, "%u-bit values", v);
    bool known = false;
    for (unsigned k = 0; k < 7 && t != NULL; k++)
        known |= strcmp(t->info.name, sm_members[k]) == 0;
    if (!known)
        return amq__rd_bad(r, at + 2,
                           "type id %u is not a membership "
                           "filter a static maplet takes",
                           id);
    m->op = op, m->vbits = v, m->mtype = t;
    m->nparts = 1 + (v + 31) / 32;
    if (parts != m->nparts)
        return amq__rd_bad(r, at_p, "%u parts for %u-bit values", parts, v);
    return AMQ_OK;
}

/* Part i: its record, its parameters through a cursor of their own (so
 * its diagnostics point into this frame) and its payload at *off. */
static amq_status load_part(amq__rd *r, smaplet *m, unsigned i,
                            const uint8_t *payload, size_t len, size_t *off,
                            bool view, const amq_options *opt) {
    uint32_t plen, zero;
    uint64_t blen;
    size_t at = amq__rd_u32(r, &plen);
    amq__rd_u32(r, &zero);
    size_t at_b = amq__rd_u64(r, &blen);
    if (r->short_read || zero != 0 || plen > r->len - r->pos ||
        pad(plen, 8) > r->len - r->pos)
        return amq__rd_bad(r, at, "part %u: bad parameter record", i);
    if (blen > len - *off || pad(blen, SM_PAD) > len - *off)
        return amq__rd_bad(r, at_b,
                           "part %u: %llu payload bytes past the "
                           "payload",
                           i, (unsigned long long)blen);
    for (size_t k = plen; k < pad(plen, 8); k++)
        if (r->p[r->pos + k] != 0)
            return amq__rd_bad(r, amq__rd_at(r) + k, "part %u: padding", i);
    for (size_t k = blen; k < pad(blen, SM_PAD); k++)
        if (payload[*off + k] != 0)
            return amq__rd_bad(r, r->payload_at + *off + k,
                               "part %u: payload padding", i);
    amq__rd sub;
    amq__rd_init(&sub, r->p + r->pos, plen, amq__rd_at(r), r->what, r->diag);
    sub.payload_at = r->payload_at + *off;
    const amq__type *t = part_type(m, i);
    AMQ_RETURN_IF_ERR(
        t->load(t, &sub, payload + *off, (size_t)blen, view, opt, &m->part[i]));
    r->pos += pad(plen, 8);
    *off += pad(blen, SM_PAD);
    return AMQ_OK;
}

/* The parts agree: as many keys each, value structures of the right
 * width with no fractional columns. */
static amq_status check_parts(amq__rd *r, const smaplet *m, uint64_t items) {
    for (unsigned i = 0; i < m->nparts; i++)
        if (m->part[i]->items != items)
            return amq__rd_bad(r, r->base + 8,
                               "part %u holds %llu keys, "
                               "not %llu",
                               i, (unsigned long long)m->part[i]->items,
                               (unsigned long long)items);
    for (unsigned i = 1; i < m->nparts; i++) {
        const amq_ribbon *rb = (const amq_ribbon *)m->part[i];
        if (rb->bits64 != 64 * chunk_bits(m->vbits, i) || rb->band != 64)
            return amq__rd_bad(r, r->base,
                               "part %u stores %u/64 bits, not "
                               "%u",
                               i, rb->bits64, chunk_bits(m->vbits, i));
    }
    return AMQ_OK;
}

static amq_status t_load(const amq__type *self, amq__rd *r,
                         const uint8_t *payload, size_t len, bool view,
                         const amq_options *opt, amq__obj **out) {
    smaplet *m;
    uint64_t items = 0;
    size_t off = 0;
    (void)self;
    AMQ_RETURN_IF_ERR(amq__obj_new(sizeof *m, opt, (void **)&m));
    amq_status st = load_header(r, m, &items);
    for (unsigned i = 0; st == AMQ_OK && i < m->nparts; i++)
        st = load_part(r, m, i, payload, len, &off, view, opt);
    if (st == AMQ_OK && (r->pos != r->len || off != len))
        st = amq__rd_bad(r, amq__rd_at(r),
                         "%zu bytes of parameters and "
                         "%zu of payload left over",
                         r->len - r->pos, len - off);
    if (st == AMQ_OK)
        st = check_parts(r, m, items);
    if (st != AMQ_OK) {
        sm_free(&m->o);
        return st;
    }
    for (unsigned i = 0; i < m->nparts; i++)
        m->o.table_bytes += m->part[i]->table_bytes;
    m->o.items = items;
    *out = &m->o;
    return AMQ_OK;
}

static const amq__maplet_ops sm_ops = {
    .get = m_get, .get_batch = m_get_batch, .build = m_build, .shape = m_shape};

const amq__type amq__type_smaplet = {
    .info = {.name = "smaplet",
             .type_id = AMQ__ID_smaplet,
             .caps = AMQ_CAP_STATIC,
             .summary = "static maplet: bumped Ribbon retrieval of values "
                        "beside a membership filter (Bloomier)",
             .params = "op=sum|max|min|or (how repeated keys' values "
                       "combine; default sum), v=VALUE_BITS (1-64, default "
                       "8), member=ribbon|fuse8|fuse16|fuse32|xor8|xor16|"
                       "xor32 (the membership filter; default ribbon)",
             .default_hash = AMQ_HASH_XXH3},
    .reads = 2,
    .reads_text = "1-2",
    .kernel_shapes = amq__defaults_only,
    .build = t_build,
    .load = t_load,
    .destroy = sm_free,
    .contains = t_contains,
    .contains_batch = t_batch,
    .fpr_bound = t_bound,
    .describe = t_describe,
    .curve = t_curve,
    .params_write = t_params_write,
    .payload_size = t_payload_size,
    .payload_write = t_payload_write,
    .maplet = &sm_ops};
