/*
 * curve.c — the false-positive curves the allocation engine solves over.
 *
 * A filter family is not one curve but a set of configurations, each with
 * its own curve: Bloom with k = 1, 2, 3, ... hashes, xor filters with 8-,
 * 16- or 32-bit fingerprints, Ribbon at 6.5 or 7 solution bits. What an
 * allocator may give a group is any configuration at any size the
 * configuration allows, so the family's curve is the lower envelope of its
 * configurations' points:
 *
 *   f |*                                  sampled every 1/64 bit for the
 *     | *.    k=3                          families whose size is free
 *     |   *.__     k=4                     (Bloom-like, sbbf, any type
 *     |       *-.__     k=5                with a curve), per 1/64 bit of
 *     |            *--.___                 Ribbon's solution bits, and at
 *     |                   *---.____        the sizes the type's own sizing
 *     +--------------------------------  b  gives for fingerprint widths
 *
 * The envelope is not convex where configurations hand over (a Bloom
 * filter's k -> k+1 crossing, the jump from fuse8 to fuse16), and the
 * Lagrangian solution of a non-convex problem can be anywhere, so the
 * solver works on the lower convex hull and the rounding step (solve.c)
 * moves groups that land on a chord to realisable points.
 *
 * Everything here goes through the public curve functions (amq_curve_fpr,
 * amq_curve_bits) and, for the fingerprint filters whose size follows from
 * their width and load, through creating an empty filter and reading its
 * size: the engine sees a type exactly as a user does.
 *
 * Invariants of a sampled curve (curve.h): samples sorted by b, sample 0 at
 * b = 0; hull[0] = 0; f strictly decreasing and slopes non-increasing
 * along the hull. Failure modes: a bad spec (AMQ_ERR_SPEC with the reason),
 * a type without a curve (AMQ_ERR_UNSUPPORTED), out of memory (nothing
 * leaks, *out untouched).
 */
#include "alloc/curve.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/spec.h"

/* Capacity at which fingerprint filters are created to read their size:
 * large enough that small-table margins are negligible. */
#define REF_KEYS (UINT64_C(1) << 20)
/* Default sampling of a caller's curve in the bits direction. */
#define CUSTOM_SAMPLES 512
#define CUSTOM_MIN_FPR 1e-12
/* Hull points closer to collinear than this (relative) are kept: runs of
 * samples on one straight piece (Ribbon between whole bits) stay vertices,
 * and each of them stays a point a group can land on. */
#define HULL_TOL 1e-12

typedef enum fam_kind {
    FAM_PLAIN,  /* no knob: the spec's own curve at any size            */
    FAM_HASHES, /* k, any size: the best k at each b                     */
    FAM_RIBBON, /* solution bits r in steps of 1/64                      */
    FAM_WIDTH,  /* fingerprint width 8/16/32 in the name (xor8, fuse16)  */
    FAM_SIZED   /* fp / r bits; size from the type's own sizing          */
} fam_kind;

typedef struct alloc_family {
    const char *name;
    fam_kind kind;
    const char *knob; /* spec key the engine sets (FAM_WIDTH: the name)   */
    const char *stem; /* FAM_WIDTH: the name without the width            */
    unsigned lo, hi;  /* knob range                                       */
} alloc_family;

static const alloc_family families[] = {
    {"bloom", FAM_HASHES, "k", NULL, 1, 64},
    {"partitioned", FAM_HASHES, "k", NULL, 1, 64},
    {"counting", FAM_HASHES, "k", NULL, 1, 32},
    {"spectral", FAM_HASHES, "k", NULL, 1, 32},
    {"blocked", FAM_HASHES, "k", NULL, 1, 16},
    {"ribbon", FAM_RIBBON, "bits", NULL, 1, 32},
    {"xor", FAM_WIDTH, NULL, "xor", 8, 32},
    {"xor8", FAM_WIDTH, NULL, "xor", 8, 8},
    {"xor16", FAM_WIDTH, NULL, "xor", 16, 16},
    {"xor32", FAM_WIDTH, NULL, "xor", 32, 32},
    {"fuse", FAM_WIDTH, NULL, "fuse", 8, 32},
    {"fuse8", FAM_WIDTH, NULL, "fuse", 8, 8},
    {"fuse16", FAM_WIDTH, NULL, "fuse", 16, 16},
    {"fuse32", FAM_WIDTH, NULL, "fuse", 32, 32},
    {"cuckoo", FAM_SIZED, "fp", NULL, 4, 32},
    {"vacuum", FAM_SIZED, "fp", NULL, 4, 32},
    {"qf", FAM_SIZED, "r", NULL, 1, 32},
    {"cqf", FAM_SIZED, "r", NULL, 1, 32},
};
static const alloc_family plain_family = {NULL, FAM_PLAIN, NULL, NULL, 0, 0};

/* Parameters that fix a filter's size: the engine decides sizes. */
static const char *const size_keys[] = {"m", "blocks", "buckets", "q", "slots"};

static const alloc_family *family_find(const char *name) {
    for (size_t i = 0; i < sizeof families / sizeof *families; i++)
        if (strcmp(families[i].name, name) == 0)
            return &families[i];
    return NULL;
}

/* ---- creation and release ------------------------------------------------ */

static amq_status curve_new(const amq_options *opt, alloc_kind kind,
                            amq_alloc_curve **out) {
    amq__mem mem;
    amq__mem_init(&mem, opt);
    amq_alloc_curve *c = amq__zalloc(&mem, sizeof *c);
    if (c == NULL)
        return AMQ_ERR_NOMEM;
    c->mem = mem;
    c->kind = kind;
    *out = c;
    return AMQ_OK;
}

void amq_alloc_curve_free(amq_alloc_curve *c) {
    if (c == NULL)
        return;
    amq__free(&c->mem, c->s, c->cap * sizeof *c->s);
    amq__free(&c->mem, c->best, c->cap * sizeof *c->best);
    amq__free(&c->mem, c->hull, c->cap * sizeof *c->hull);
    amq__free(&c->mem, c->sigma, c->cap * sizeof *c->sigma);
    amq__free(&c->mem, c, sizeof *c);
}

amq_status amq_alloc_curve_model(double c, const amq_options *opt,
                                 amq_alloc_curve **out) {
    if (out == NULL || !(c > 0.0) || !isfinite(c))
        return AMQ_ERR_INVALID;
    amq_alloc_curve *cv;
    AMQ_RETURN_IF_ERR(curve_new(opt, ALLOC_MODEL, &cv));
    cv->c = c;
    snprintf(cv->label, sizeof cv->label, "model");
    snprintf(cv->name, sizeof cv->name, "model");
    *out = cv;
    return AMQ_OK;
}

const char *amq_alloc_curve_label(const amq_alloc_curve *c) {
    return c != NULL ? c->label : "";
}

/* ---- sample storage ------------------------------------------------------ */

/* Room for n samples plus the hull arrays (which never exceed n). */
static amq_status samples_alloc(amq_alloc_curve *c, size_t n) {
    size_t sz;
    if (n == 0 || n > (size_t)AMQ_ALLOC_MAX_SAMPLES + 2 ||
        !amq__mul(n, sizeof *c->s, &sz))
        return AMQ_ERR_INVALID;
    c->s = amq__alloc(&c->mem, n * sizeof *c->s);
    c->best = amq__alloc(&c->mem, n * sizeof *c->best);
    c->hull = amq__alloc(&c->mem, n * sizeof *c->hull);
    c->sigma = amq__alloc(&c->mem, n * sizeof *c->sigma);
    c->cap = n;
    if (!c->s || !c->best || !c->hull || !c->sigma)
        return AMQ_ERR_NOMEM;
    return AMQ_OK;
}

static int sample_cmp(const void *a, const void *b) {
    const alloc_sample *x = a, *y = b;
    if (x->b != y->b)
        return x->b < y->b ? -1 : 1;
    return x->f < y->f ? -1 : x->f > y->f;
}

/* o -> a -> p turns left (or goes straight, within HULL_TOL). */
static bool keeps(const alloc_sample *o, const alloc_sample *a,
                  const alloc_sample *p) {
    double l = (a->b - o->b) * (p->f - o->f);
    double r = (a->f - o->f) * (p->b - o->b);
    return l - r >= -HULL_TOL * (fabs(l) + fabs(r));
}

/* Lower convex hull by the monotone chain, cut at its lowest point, and
 * the slopes along it, made exactly non-increasing (near-collinear runs
 * may differ in the last bits). */
static void build_hull(amq_alloc_curve *c) {
    size_t nh = 0;
    for (size_t j = 0; j < c->ns; j++) {
        if (nh > 0 && c->s[j].b == c->s[c->hull[nh - 1]].b)
            continue; /* sorted: the first of equal b has the lowest f */
        while (nh >= 2 &&
               !keeps(&c->s[c->hull[nh - 2]], &c->s[c->hull[nh - 1]], &c->s[j]))
            nh--;
        c->hull[nh++] = (uint32_t)j;
    }
    size_t low = 0;
    for (size_t t = 1; t < nh; t++)
        if (c->s[c->hull[t]].f < c->s[c->hull[low]].f)
            low = t;
    c->nh = low + 1;
    for (size_t t = 0; t + 1 < c->nh; t++) {
        double db = amq__alloc_vb(c, t + 1) - amq__alloc_vb(c, t);
        double s = (amq__alloc_vf(c, t) - amq__alloc_vf(c, t + 1)) / db;
        c->sigma[t] = t > 0 && s > c->sigma[t - 1] ? c->sigma[t - 1] : s;
    }
}

/* Sort the first n samples, record prefix minima, build the hull. */
static void finish(amq_alloc_curve *c, size_t n) {
    c->ns = n;
    qsort(c->s, n, sizeof *c->s, sample_cmp);
    c->best[0] = 0;
    for (size_t j = 1; j < n; j++)
        c->best[j] =
            c->s[j].f < c->s[c->best[j - 1]].f ? (uint32_t)j : c->best[j - 1];
    build_hull(c);
}

/* ---- rendering specs ----------------------------------------------------- */

void amq__alloc_render(const amq_alloc_curve *c, double knob, double b,
                       char *buf, size_t cap) {
    const alloc_family *f = c->fam;
    const char *sep = c->params[0] ? ":" : "";
    int n;
    if (b <= 0.0)
        n = snprintf(buf, cap, "%s", "");
    else if (f == NULL) /* model or a caller's curve */
        n = snprintf(buf, cap, "%s", c->label);
    else if (f->kind == FAM_PLAIN)
        n = snprintf(buf, cap, "%s%s%s", c->name, sep, c->params);
    else if (f->kind == FAM_WIDTH)
        n = snprintf(buf, cap, "%s%u%s%s", f->stem, (unsigned)knob, sep,
                     c->params);
    else /* bits=: multiples of 1/64 print exactly with 10 digits */
        n = snprintf(buf, cap, "%s:%s%s%s=%.10g", c->name, c->params,
                     c->params[0] ? "," : "", f->knob, knob);
    /* spec_setup() made sure every rendering fits */
    if (n < 0 || (size_t)n >= cap)
        buf[0] = '\0';
}

/* The spec without any knob: the type's own parameters only. */
static amq_status render_plain(const amq_alloc_curve *c, char *buf,
                               size_t cap) {
    int n = snprintf(buf, cap, "%s%s%s", c->name, c->params[0] ? ":" : "",
                     c->params);
    return n < 0 || (size_t)n >= cap ? AMQ_ERR_SPEC : AMQ_OK;
}

/* ---- structure types ----------------------------------------------------- */

typedef struct spec_ctx {
    amq_alloc_curve *c;
    const amq_options *opt;
    unsigned lo, hi; /* knob range left to the engine (lo == hi: fixed) */
    double fixed;    /* FAM_RIBBON: bits= of the spec, or 0             */
} spec_ctx;

static amq_status fpr_of(const amq_alloc_curve *c, double knob, double b,
                         double *f) {
    char spec[AMQ_ALLOC_SPEC_MAX];
    amq__alloc_render(c, knob, 1.0, spec, sizeof spec);
    return amq_curve_fpr(spec, b, f);
}

static size_t grid_points(void) {
    return (size_t)(AMQ_ALLOC_MAX_BITS / AMQ_ALLOC_STEP + 0.5);
}

/* Size-free families: every grid point, at the best knob there. The best
 * k moves slowly with b, so a local search from the previous one finds it
 * in two or three evaluations. */
static amq_status sample_grid(spec_ctx *x) {
    amq_alloc_curve *c = x->c;
    size_t n = grid_points(), used = 1;
    unsigned k = x->lo;
    AMQ_RETURN_IF_ERR(samples_alloc(c, n + 1));
    c->s[0] = (alloc_sample){0.0, 1.0, 0.0};
    for (size_t j = 1; j <= n; j++) {
        double b = (double)j * AMQ_ALLOC_STEP, f, g;
        amq_status st = fpr_of(c, k, b, &f);
        if (st == AMQ_ERR_INVALID)
            continue; /* below the type's smallest size */
        AMQ_RETURN_IF_ERR(st);
        while (k < x->hi && fpr_of(c, k + 1, b, &g) == AMQ_OK && g < f)
            k++, f = g;
        while (k > x->lo && fpr_of(c, k - 1, b, &g) == AMQ_OK && g < f)
            k--, f = g;
        c->s[used++] = (alloc_sample){b, f, k};
    }
    if (used == 1)
        return AMQ_ERR_SPEC;
    c->continuous = true;
    finish(c, used);
    return AMQ_OK;
}

/* Ribbon: b = rho r + mu (rows per key times solution bits, plus code
 * bits), read back from the curve's inverse at r = 1 and r = 2. */
static amq_status sample_ribbon(spec_ctx *x) {
    amq_alloc_curve *c = x->c;
    char base[AMQ_ALLOC_SPEC_MAX];
    double b1, b2;
    AMQ_RETURN_IF_ERR(render_plain(c, base, sizeof base));
    AMQ_RETURN_IF_ERR(amq_curve_bits(base, 0.5, &b1));
    AMQ_RETURN_IF_ERR(amq_curve_bits(base, 0.25, &b2));
    double rho = b2 - b1, mu = b1 - rho;
    double r0 = x->fixed > 0 ? x->fixed : 1.0;
    double r1 = x->fixed > 0 ? x->fixed : 32.0;
    size_t n = (size_t)((r1 - r0) * 64.0 + 0.5) + 1, used = 1;
    AMQ_RETURN_IF_ERR(samples_alloc(c, n + 1));
    c->s[0] = (alloc_sample){0.0, 1.0, 0.0};
    for (size_t j = 0; j < n; j++) {
        double r = r0 + (double)j / 64.0, b = rho * r + mu, f;
        if (b > AMQ_ALLOC_MAX_BITS)
            break;
        AMQ_RETURN_IF_ERR(amq_curve_fpr(base, b, &f));
        c->s[used++] = (alloc_sample){b, f, r};
    }
    finish(c, used);
    return AMQ_OK;
}

/* xor / fuse: w-bit fingerprints give 2^-w at the type's bits per key. */
static amq_status sample_widths(spec_ctx *x) {
    static const unsigned widths[] = {8, 16, 32};
    amq_alloc_curve *c = x->c;
    size_t used = 1;
    AMQ_RETURN_IF_ERR(samples_alloc(c, 4));
    c->s[0] = (alloc_sample){0.0, 1.0, 0.0};
    for (size_t i = 0; i < 3; i++) {
        char spec[AMQ_ALLOC_SPEC_MAX];
        double f = ldexp(1.0, -(int)widths[i]), b;
        if (widths[i] < x->lo || widths[i] > x->hi)
            continue;
        amq__alloc_render(c, widths[i], 1.0, spec, sizeof spec);
        AMQ_RETURN_IF_ERR(amq_curve_bits(spec, f, &b));
        c->s[used++] = (alloc_sample){b, f, widths[i]};
    }
    finish(c, used);
    return AMQ_OK;
}

/* One fingerprint width of cuckoo / vacuum / qf / cqf: the bits per key
 * the type's own sizing gives REF_KEYS keys, and the curve there. */
static amq_status sized_point(spec_ctx *x, unsigned w, alloc_sample *out) {
    char spec[AMQ_ALLOC_SPEC_MAX];
    amq_filter *flt = NULL;
    amq__alloc_render(x->c, w, 1.0, spec, sizeof spec);
    AMQ_RETURN_IF_ERR(amq_filter_new(spec, REF_KEYS, 0.5, x->opt, &flt, NULL));
    double b = 8.0 * (double)amq_filter_size_bytes(flt) / (double)REF_KEYS;
    amq_filter_free(flt);
    out->b = b;
    out->knob = w;
    amq_status st = amq_curve_fpr(spec, b, &out->f);
    if (st != AMQ_ERR_SPEC)
        return st;
    /* a curve that takes the width from b (qf: r = 0.95 b - metadata) */
    AMQ_RETURN_IF_ERR(render_plain(x->c, spec, sizeof spec));
    return amq_curve_fpr(spec, b, &out->f);
}

static amq_status sample_sized(spec_ctx *x) {
    amq_alloc_curve *c = x->c;
    size_t used = 1;
    amq_status first = AMQ_OK;
    AMQ_RETURN_IF_ERR(samples_alloc(c, (size_t)(x->hi - x->lo) + 2));
    c->s[0] = (alloc_sample){0.0, 1.0, 0.0};
    for (unsigned w = x->lo; w <= x->hi; w++) {
        amq_status st = sized_point(x, w, &c->s[used]);
        if (st == AMQ_ERR_NOMEM)
            return st;
        if (st != AMQ_OK) { /* a width the type does not take (cqf r) */
            first = first != AMQ_OK ? first : st;
            continue;
        }
        if (c->s[used].b <= AMQ_ALLOC_MAX_BITS)
            used++;
    }
    if (used == 1)
        return first != AMQ_OK ? first : AMQ_ERR_SPEC;
    finish(c, used);
    return AMQ_OK;
}

/* The spec's parameters, less the knob (returned through *knob_val when
 * present), joined back into c->params. Size keys are refused. */
static amq_status split_params(amq_alloc_curve *c, const amq__spec *sp,
                               const char *knob, const char **knob_val,
                               amq_diag *diag) {
    size_t len = 0;
    *knob_val = NULL;
    for (size_t i = 0; i < sp->nkv; i++) {
        const amq__spec_kv *kv = &sp->kv[i];
        for (size_t j = 0; j < sizeof size_keys / sizeof *size_keys; j++)
            if (strcmp(kv->key, size_keys[j]) == 0)
                return amq__diag(diag, AMQ_ERR_SPEC, kv->offset,
                                 "'%s' fixes the size; the allocation "
                                 "engine sizes the filter",
                                 kv->key);
        if (knob != NULL && strcmp(kv->key, knob) == 0) {
            *knob_val = kv->val;
            continue;
        }
        int n = snprintf(c->params + len, sizeof c->params - len, "%s%s=%s",
                         len ? "," : "", kv->key, kv->val);
        if (n < 0 || (size_t)n >= sizeof c->params - len)
            return amq__diag(diag, AMQ_ERR_SPEC, kv->offset, "spec too long");
        len += (size_t)n;
    }
    return AMQ_OK;
}

/* A knob the spec sets narrows the range to its value. */
static amq_status fix_knob(spec_ctx *x, const alloc_family *f, const char *val,
                           amq_diag *diag) {
    char *end;
    double v = strtod(val, &end);
    bool whole = v == floor(v);
    if (*end != '\0' || !(v >= f->lo && v <= f->hi) ||
        (f->kind != FAM_RIBBON && !whole))
        return amq__diag(
            diag, AMQ_ERR_SPEC, 0, "%s=%s: expected %s %u to %u", f->knob, val,
            f->kind == FAM_RIBBON ? "a number" : "an integer", f->lo, f->hi);
    if (f->kind == FAM_RIBBON)
        x->fixed = round(v * 64.0) / 64.0;
    else
        x->lo = x->hi = (unsigned)v;
    return AMQ_OK;
}

static amq_status sample_family(spec_ctx *x) {
    switch (x->c->fam->kind) {
    case FAM_PLAIN:
    case FAM_HASHES: return sample_grid(x);
    case FAM_RIBBON: return sample_ribbon(x);
    case FAM_WIDTH: return sample_widths(x);
    case FAM_SIZED: return sample_sized(x);
    }
    return AMQ_ERR_SPEC;
}

static amq_status spec_setup(amq_alloc_curve *c, const char *spec, spec_ctx *x,
                             amq_diag *diag) {
    amq__spec sp;
    const char *knob_val;
    AMQ_RETURN_IF_ERR(amq__spec_parse(spec, &sp, diag));
    const alloc_family *f = family_find(sp.name);
    if (f == NULL) {
        const amq_type_info *ti = amq_filter_type_find(sp.name);
        if (ti == NULL)
            return amq__diag(diag, AMQ_ERR_SPEC, 0, "unknown type '%s'",
                             sp.name);
        if (ti->caps & AMQ_CAP_SKETCH)
            return amq__diag(diag, AMQ_ERR_UNSUPPORTED, 0,
                             "%s is a sketch: it has no false-positive "
                             "curve",
                             sp.name);
        f = &plain_family;
    }
    c->fam = f;
    snprintf(c->name, sizeof c->name, "%s", sp.name);
    snprintf(c->label, sizeof c->label, "%s", spec);
    AMQ_RETURN_IF_ERR(split_params(c, &sp, f->knob, &knob_val, diag));
    /* name, ':', params, ',', knob key, '=', value (at most 16 chars) */
    if (strlen(c->name) + strlen(c->params) + 24 >= AMQ_ALLOC_SPEC_MAX)
        return amq__diag(diag, AMQ_ERR_SPEC, 0, "spec too long");
    x->lo = f->lo;
    x->hi = f->hi;
    if (knob_val != NULL)
        AMQ_RETURN_IF_ERR(fix_knob(x, f, knob_val, diag));
    return AMQ_OK;
}

amq_status amq_alloc_curve_spec(const char *spec, const amq_options *opt,
                                amq_alloc_curve **out, amq_diag *diag) {
    if (spec == NULL || out == NULL)
        return AMQ_ERR_INVALID;
    if (strlen(spec) >= AMQ_ALLOC_SPEC_MAX)
        return amq__diag(diag, AMQ_ERR_SPEC, AMQ_ALLOC_SPEC_MAX,
                         "spec longer than %d bytes", AMQ_ALLOC_SPEC_MAX - 1);
    amq_alloc_curve *c;
    AMQ_RETURN_IF_ERR(curve_new(opt, ALLOC_SAMPLED, &c));
    spec_ctx x = {.c = c, .opt = opt};
    amq_status st = spec_setup(c, spec, &x, diag);
    if (st == AMQ_OK) {
        st = sample_family(&x);
        if (st == AMQ_ERR_SPEC || st == AMQ_ERR_INVALID)
            st = amq__diag(diag, AMQ_ERR_SPEC, 0,
                           "'%s': the type refuses these parameters", spec);
    }
    if (st != AMQ_OK) {
        amq_alloc_curve_free(c);
        return st;
    }
    *out = c;
    return AMQ_OK;
}

/* ---- a caller's curve ---------------------------------------------------- */

static amq_status custom_check(const amq_alloc_custom *u, double *max_bits,
                               double *step, size_t *n) {
    if ((u->fpr == NULL) == (u->bits == NULL))
        return AMQ_ERR_INVALID;
    *max_bits = u->max_bits == 0 ? AMQ_ALLOC_MAX_BITS : u->max_bits;
    *step = u->step == 0 ? AMQ_ALLOC_STEP : u->step;
    if (!(*max_bits > 0) || !isfinite(*max_bits) || !(*step > 0) ||
        !isfinite(*step) ||
        (u->label && strlen(u->label) >= AMQ_ALLOC_SPEC_MAX))
        return AMQ_ERR_INVALID;
    if (u->fpr != NULL) {
        double pts = floor(*max_bits / *step + 1e-9) + 1;
        if (pts > AMQ_ALLOC_MAX_SAMPLES)
            return AMQ_ERR_INVALID;
        *n = (size_t)pts;
        return AMQ_OK;
    }
    double lo = u->min_fpr == 0 ? CUSTOM_MIN_FPR : u->min_fpr;
    uint32_t s = u->samples == 0 ? CUSTOM_SAMPLES : u->samples;
    if (!(lo > 0 && lo < 1) || s < 2 || s > AMQ_ALLOC_MAX_SAMPLES)
        return AMQ_ERR_INVALID;
    *n = s;
    return AMQ_OK;
}

static double clamp(double v, double lo, double hi) {
    return v < lo ? lo : v > hi ? hi : v;
}

static amq_status custom_sample(amq_alloc_curve *c, const amq_alloc_custom *u,
                                double max_bits, double step, size_t n) {
    double lo = u->min_fpr == 0 ? CUSTOM_MIN_FPR : u->min_fpr;
    bool has_zero = false;
    for (size_t j = 0; j < n; j++) {
        double b, f;
        if (u->fpr != NULL) {
            b = j + 1 == n ? max_bits : (double)j * step;
            f = u->fpr(u->ctx, b);
        } else {
            f = pow(lo, (double)j / (double)(n - 1));
            b = u->bits(u->ctx, f);
        }
        if (isnan(f) || isnan(b))
            return AMQ_ERR_INVALID;
        c->s[j] = (alloc_sample){clamp(b, 0, max_bits), clamp(f, 0, 1), 0};
        has_zero = has_zero || c->s[j].b == 0.0;
    }
    /* No bits at all is always possible: at worst every probe passes. */
    if (!has_zero)
        c->s[n++] = (alloc_sample){0.0, 1.0, 0.0};
    finish(c, n);
    return AMQ_OK;
}

amq_status amq_alloc_curve_custom(const amq_alloc_custom *u,
                                  const amq_options *opt,
                                  amq_alloc_curve **out) {
    double max_bits, step;
    size_t n;
    if (u == NULL || out == NULL)
        return AMQ_ERR_INVALID;
    AMQ_RETURN_IF_ERR(custom_check(u, &max_bits, &step, &n));
    amq_alloc_curve *c;
    AMQ_RETURN_IF_ERR(curve_new(opt, ALLOC_SAMPLED, &c));
    snprintf(c->label, sizeof c->label, "%s",
             u->label != NULL ? u->label : "custom");
    c->interpolate = c->continuous = u->fpr != NULL && !u->discrete;
    amq_status st = samples_alloc(c, n + 1);
    if (st == AMQ_OK)
        st = custom_sample(c, u, max_bits, step, n);
    if (st != AMQ_OK) {
        amq_alloc_curve_free(c);
        return st;
    }
    *out = c;
    return AMQ_OK;
}

/* ---- queries ------------------------------------------------------------- */

bool amq__alloc_seg_continuous(const amq_alloc_curve *c, size_t t) {
    uint32_t u = c->hull[t], v = c->hull[t + 1];
    return c->continuous && v == u + 1 && c->s[u].knob == c->s[v].knob;
}

static double lerp(const alloc_sample *u, const alloc_sample *v, double b) {
    double w = (b - u->b) / (v->b - u->b);
    return u->f + w * (v->f - u->f);
}

double amq__alloc_inside(const amq_alloc_curve *c, size_t t, double b) {
    const alloc_sample *u = &c->s[c->hull[t]], *v = &c->s[c->hull[t + 1]];
    double f;
    if (c->interpolate || fpr_of(c, u->knob, b, &f) != AMQ_OK)
        return lerp(u, v, b);
    return f;
}

size_t amq__alloc_hull_find(const amq_alloc_curve *c, double b) {
    size_t lo = 0, hi = c->nh - 1;
    while (lo < hi) { /* largest t with vb(t) <= b */
        size_t mid = (lo + hi + 1) / 2;
        if (amq__alloc_vb(c, mid) <= b)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

double amq__alloc_hull_value(const amq_alloc_curve *c, double b) {
    size_t t = amq__alloc_hull_find(c, b);
    if (t + 1 >= c->nh || b <= amq__alloc_vb(c, t))
        return amq__alloc_vf(c, t);
    return lerp(&c->s[c->hull[t]], &c->s[c->hull[t + 1]], b);
}

/* The last sample with b_j <= b. */
static size_t sample_find(const amq_alloc_curve *c, double b) {
    size_t lo = 0, hi = c->ns - 1;
    while (lo < hi) {
        size_t mid = (lo + hi + 1) / 2;
        if (c->s[mid].b <= b)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

static void curve_at_sampled(const amq_alloc_curve *c, double b,
                             amq_alloc_pick *p) {
    size_t j = sample_find(c, b);
    const alloc_sample *best = &c->s[c->best[j]];
    double f = best->f, used = best->b, knob = best->knob;
    if (j + 1 < c->ns && b > c->s[j].b && c->continuous &&
        c->s[j].knob == c->s[j + 1].knob) {
        double g;
        if (c->interpolate)
            g = lerp(&c->s[j], &c->s[j + 1], b);
        else if (fpr_of(c, c->s[j].knob, b, &g) != AMQ_OK)
            g = 1.0;
        if (g < f)
            f = g, used = b, knob = c->s[j].knob;
    }
    p->bits_per_key = used;
    p->fpr = f;
    amq__alloc_render(c, knob, used, p->spec, sizeof p->spec);
}

/* The first sample whose prefix minimum reaches f (best[] is a running
 * argmin, so its values fall with j); ns if none does. */
static size_t first_reaching(const amq_alloc_curve *c, double f) {
    size_t lo = 0, hi = c->ns;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (c->s[c->best[mid]].f <= f)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

bool amq__alloc_least_bits(const amq_alloc_curve *c, double f,
                           amq_alloc_pick *p) {
    size_t j = first_reaching(c, f);
    if (j == c->ns)
        return false;
    const alloc_sample *hit = &c->s[c->best[j]], *prev = &c->s[j - (j > 0)];
    double lo = prev->b, hi = hit->b, fb = hit->f;
    /* inside a continuous stretch the family's curve may reach f sooner */
    if (j > 0 && c->best[j] == j && c->continuous && prev->knob == hit->knob) {
        for (int it = 0; it < 60 && hi - lo > 1e-12 * hi; it++) {
            double mid = lo + (hi - lo) / 2, g;
            if (c->interpolate)
                g = lerp(prev, hit, mid);
            else if (fpr_of(c, hit->knob, mid, &g) != AMQ_OK)
                break;
            if (g <= f)
                hi = mid, fb = g;
            else
                lo = mid;
        }
    }
    p->bits_per_key = hi;
    p->fpr = fb;
    amq__alloc_render(c, hit->knob, hi, p->spec, sizeof p->spec);
    return true;
}

amq_status amq_alloc_curve_at(const amq_alloc_curve *c, double b,
                              amq_alloc_pick *p) {
    if (c == NULL || p == NULL || !(b >= 0) || isinf(b))
        return AMQ_ERR_INVALID;
    if (c->kind == ALLOC_MODEL) {
        p->bits_per_key = b;
        p->fpr = exp(-c->c * b);
        amq__alloc_render(c, 0, p->bits_per_key, p->spec, sizeof p->spec);
        return AMQ_OK;
    }
    curve_at_sampled(c, b, p);
    return AMQ_OK;
}

bool amq_alloc_curve_vertex(const amq_alloc_curve *c, size_t i, double *b,
                            double *f) {
    if (c == NULL || c->kind == ALLOC_MODEL || i >= c->nh)
        return false;
    if (b != NULL)
        *b = amq__alloc_vb(c, i);
    if (f != NULL)
        *f = amq__alloc_vf(c, i);
    return true;
}
