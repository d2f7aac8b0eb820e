/*
 * curve.h — what the allocation engine's solver knows about a curve.
 *
 * A model curve is e^(-c b), solved in closed form. Every other curve is a
 * list of realisable samples (b, f, knob) sorted by b, the first at b = 0,
 * and the lower convex hull of those samples, f strictly decreasing along
 * it. The solver works on the hull; the samples say what can be built.
 *
 *   samples  0    1    2    3   ...                       ns-1
 *            |    |    |    |                              |
 *   hull     h[0]=0    h[1]=2    h[2]=3  ...   h[nh-1]  (indices into s)
 *   slope    sigma[t] = (f(h[t]) - f(h[t+1])) / (b(h[t+1]) - b(h[t]))
 *
 * A hull segment t is "continuous" when it joins two neighbouring samples
 * of the same configuration of a continuous family (h[t+1] == h[t] + 1,
 * same knob, curve->continuous): every b inside it can be built, at the
 * rate the family's curve gives there. Any other segment is a chord whose
 * inside is only a mixture of its two ends, so a group left inside one is
 * rounded.
 */
#ifndef AMQ_SRC_ALLOC_CURVE_H
#define AMQ_SRC_ALLOC_CURVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "amq/alloc.h"
#include "core/mem.h"

typedef struct alloc_sample {
    double b, f;
    double knob; /* the family's parameter at this sample (k, width, r...) */
} alloc_sample;

typedef enum alloc_kind { ALLOC_MODEL, ALLOC_SAMPLED } alloc_kind;

struct alloc_family;

struct amq_alloc_curve {
    amq__mem mem;
    alloc_kind kind;
    double c;                        /* model exponent                    */
    const struct alloc_family *fam;  /* NULL: model or caller's curve     */
    char name[AMQ_ALLOC_SPEC_MAX];   /* type name a pick's spec starts with */
    char params[AMQ_ALLOC_SPEC_MAX]; /* the spec's own "k=v,..." (may be "") */
    char label[AMQ_ALLOC_SPEC_MAX];  /* as amq_alloc_curve_label returns  */
    bool continuous;                 /* between same-knob neighbours      */
    bool interpolate;                /* caller's curve: linear inside     */
    size_t cap;                      /* samples allocated                 */
    size_t ns;                       /* samples used                      */
    alloc_sample *s;
    uint32_t *best; /* best[j]: argmin f over s[0..j]    */
    size_t nh;
    uint32_t *hull;
    double *sigma; /* nh - 1 slopes, decreasing         */
};

/* The spec that builds sample j's configuration ("" at b = 0). */
void amq__alloc_render(const amq_alloc_curve *c, double knob, double b,
                       char *buf, size_t cap);

/* The realisable rate at b inside continuous hull segment t (b between
 * its ends): the family's own curve, or for a caller's curve the linear
 * interpolation of the two samples. */
double amq__alloc_inside(const amq_alloc_curve *c, size_t t, double b);

/* The realisable choice with the fewest bits whose rate is at most f
 * (false: the curve never gets that low). */
bool amq__alloc_least_bits(const amq_alloc_curve *c, double f,
                           amq_alloc_pick *p);

/* Is hull segment t (from vertex t to t + 1) continuous? */
bool amq__alloc_seg_continuous(const amq_alloc_curve *c, size_t t);

/* The hull segment containing b: the largest t with b(h[t]) <= b, capped
 * at nh - 1 (the last vertex). */
size_t amq__alloc_hull_find(const amq_alloc_curve *c, double b);

/* The hull's value at b (linear between vertices; the last vertex's value
 * beyond it). */
double amq__alloc_hull_value(const amq_alloc_curve *c, double b);

static inline double amq__alloc_vb(const amq_alloc_curve *c, size_t t) {
    return c->s[c->hull[t]].b;
}
static inline double amq__alloc_vf(const amq_alloc_curve *c, size_t t) {
    return c->s[c->hull[t]].f;
}
static inline double amq__alloc_max_bits(const amq_alloc_curve *c) {
    return amq__alloc_vb(c, c->nh - 1);
}

#endif
