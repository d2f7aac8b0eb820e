/*
 * amq/alloc.h — the bit-allocation engine: how many bits per key each group
 * of keys gets, and which filter realises them.
 *
 * Groups i = 1..G hold n_i keys ("keys"), receive a share p_i of the
 * non-member probes ("weight") and have a false-positive curve f_i(b), b in
 * bits per key. One convex problem, in two directions:
 *
 *   amq_alloc_min_cost:    minimise  sum p_i f_i(b_i)
 *                          subject to sum n_i b_i <= M, b_i >= 0
 *   amq_alloc_min_memory:  minimise  sum n_i b_i
 *                          subject to p_0 + sum p_i f_i(b_i) <= eps
 *
 * Every user in amq is one of these: an LSM tree's runs (Monkey: n_i keys
 * per run, p_i the probability a lookup probes the run), the learned
 * cascade's residual filters (score intervals with n_l members, non-member
 * mass p_l and the accepted mass p_0, eq. 6-7 of the cascade paper), and a
 * sharded store's budget split (one group per shard with its own curve,
 * weight w_m, sum w_m eps_m <= eps_global).
 *
 * Curves. A curve is created once and shared by any number of groups:
 *   - the model e^(-c b) (c = (ln 2)^2 for an ideal Bloom filter): solved
 *     in closed form (water-filling,
 *     b_i = max(0, ln(c p_i / (lambda n_i)) / c), lambda exact for the
 *     final active set);
 *   - a structure type's real curve from a spec, through amq_curve_fpr /
 *     amq_curve_bits: what the engine may choose is the type's knob (Bloom
 *     hash count k, Ribbon solution bits in steps of 1/64, the fingerprint
 *     width of xor/fuse (8/16/32), cuckoo/vacuum (fp=4..32) and quotient
 *     filters (r=1..32)); a knob the spec already sets is kept;
 *   - a caller's curve (function pointer and context) in either direction,
 *     e.g. a cascade's whole memory-versus-eps curve for one shard.
 * Sampled curves (all but the model) are replaced by the lower convex hull
 * of their realisable points; the engine solves the hull problem exactly
 * (one multiplier for every group, at most one group on a fractional
 * segment when slopes do not tie). Then it rounds to realisable points. A
 * group the relaxation leaves inside a chord of its hull, a mixture of two
 * configurations (no filter and sbbf at 4.2 bits/key, Bloom k and k+1,
 * fuse8 and fuse16, a caller's discrete points), is searched: held at each
 * realisable point of the chord in turn (and, where the family's curve is
 * continuous there, between them) while the rest is re-solved, the best
 * total kept (up to 16 such groups; a chord whose possible gain is below
 * 1e-6 of the objective, like most of Bloom's k -> k+1 hand-overs, is
 * taken as the curve there). Finally a greedy pass spends what rounding
 * freed, or covers what it overdrew, by marginal gain per bit. The summary
 * reports the relaxed optimum and what the realised choice costs.
 *
 * Accuracy. Model curves: exact to rounding (KKT residuals ~1e-15).
 * Sampled curves: the hull problem is solved exactly; the hull is sampled
 * every 1/64 bit per key (the caller chooses the step of its own curves),
 * so against the smooth curve the result is within the grid's second-order
 * error (~1e-5 relative). Step curves: greedy after the chord search, not
 * an exhaustive search; the gap to the relaxation bounds the loss.
 *
 * Realisation. Each group's amq_alloc_pick names the spec to build and the
 * false-positive rate to ask for: amq_filter_new(pick.spec, n_i, pick.fpr)
 * (dynamic types) or amq_filter_build(pick.spec, hashes, n_i, pick.fpr, ...)
 * (static types) gives a filter of about pick.bits_per_key bits per key
 * (whole blocks, words and small-table margins make the real size a little
 * larger for few keys). An empty spec means "no filter": b = 0, every probe
 * passes (fpr 1), or nothing to store (keys = 0, fpr 0).
 *
 * Thread-safety: curves are immutable after creation; any number of threads
 * may solve with the same curves at once. The solvers allocate nothing.
 * Ownership: amq_alloc_curve_* constructors return a curve released with
 * amq_alloc_curve_free (NULL accepted); groups borrow curves.
 */
#ifndef AMQ_ALLOC_H
#define AMQ_ALLOC_H

#include "amq/filter.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The ideal Bloom filter's exponent (ln 2)^2: f(b) = e^(-c b). */
#define AMQ_ALLOC_BLOOM_C 0.48045301391820144
/* Sampled curves of structure types span (0, AMQ_ALLOC_MAX_BITS] bits/key
 * at AMQ_ALLOC_STEP; a caller's curve may choose its own domain and step
 * as long as it has at most AMQ_ALLOC_MAX_SAMPLES points. */
#define AMQ_ALLOC_MAX_BITS 64.0
#define AMQ_ALLOC_STEP (1.0 / 64.0)
#define AMQ_ALLOC_MAX_SAMPLES (1u << 20)
/* Room for a pick's spec or a curve's label, terminating NUL included. */
#define AMQ_ALLOC_SPEC_MAX 96

typedef struct amq_alloc_curve amq_alloc_curve;

/* ---- curves ------------------------------------------------------------- */

/* The model f(b) = e^(-c b), c > 0 (AMQ_ALLOC_BLOOM_C for Bloom). Picks on
 * it carry the spec "model" (nothing to build: use it to reason, or give
 * the bits to a Bloom filter). Errors: AMQ_ERR_INVALID (c not positive and
 * finite), AMQ_ERR_NOMEM. */
AMQ_API amq_status amq_alloc_curve_model(double c, const amq_options *opt,
                                         amq_alloc_curve **out);

/* The real curve of a structure type (amq_curve_fpr), with the engine
 * choosing the type's knob wherever the spec leaves it open:
 *   bloom partitioned counting spectral blocked   k (hashes)
 *   ribbon                                        bits (steps of 1/64)
 *   xor fuse (family names: widths 8, 16, 32)     width; "xor8", "fuse16"
 *                                                 fix it; fuse keeps ways=
 *   cuckoo vacuum                                 fp (4..32)
 *   qf cqf                                        r (1..32)
 * Any other type with a curve is sampled as it is. Points of the
 * fingerprint types sit where the type's own sizing puts them (cuckoo,
 * vacuum, qf, cqf: a filter created for 2^20 keys; xor, fuse: the type's
 * curve at 2^-w). opt supplies the allocator (and is passed to those
 * sizing probes). Errors: AMQ_ERR_SPEC (unknown type or parameter; diag
 * says where), AMQ_ERR_UNSUPPORTED (a type without a curve: topk),
 * AMQ_ERR_NOMEM. */
AMQ_API amq_status amq_alloc_curve_spec(const char *spec,
                                        const amq_options *opt,
                                        amq_alloc_curve **out, amq_diag *diag);

/* A caller's curve, in one of two directions (exactly one of fpr / bits
 * set):
 *   fpr(ctx, b)    the false-positive rate at b bits per key, sampled at
 *                  b = 0, step, 2 step, ..., max_bits;
 *   bits(ctx, e)   the bits per key needed for rate e, sampled at
 *                  log-spaced rates from 1 down to min_fpr (`samples`
 *                  points, at least 2).
 * Values are clamped to [0, 1] (fpr) and [0, max_bits] (bits); NaN is an
 * error. The curve need not be convex or monotone: the engine uses the
 * lower convex hull of the points. discrete = true: only the sampled
 * points are realisable (a group between two is rounded); false: any
 * point between two neighbours is, at the linear interpolation of their
 * rates (fpr direction only; choose the step accordingly). The callback is
 * called during creation only. */
typedef double (*amq_alloc_fpr_fn)(void *ctx, double bits_per_key);
typedef double (*amq_alloc_bits_fn)(void *ctx, double fpr);

typedef struct amq_alloc_custom {
    amq_alloc_fpr_fn fpr;   /* f(b), or NULL                               */
    amq_alloc_bits_fn bits; /* b(f), or NULL                               */
    void *ctx;              /* passed to the callback                      */
    double max_bits;        /* domain of b; 0: AMQ_ALLOC_MAX_BITS           */
    double step;            /* fpr direction: grid step; 0: AMQ_ALLOC_STEP  */
    double min_fpr;         /* bits direction: smallest rate; 0: 1e-12     */
    uint32_t samples;       /* bits direction: points; 0: 512              */
    bool discrete;          /* only sampled points are realisable          */
    const char *label;      /* copied; the picks' spec (NULL: "custom")    */
} amq_alloc_custom;

/* Errors: AMQ_ERR_INVALID (no callback or both, a bad domain or step, more
 * than AMQ_ALLOC_MAX_SAMPLES points, a NaN value, a label of
 * AMQ_ALLOC_SPEC_MAX bytes or more), AMQ_ERR_NOMEM. */
AMQ_API amq_status amq_alloc_curve_custom(const amq_alloc_custom *custom,
                                          const amq_options *opt,
                                          amq_alloc_curve **out);

AMQ_API void amq_alloc_curve_free(amq_alloc_curve *curve);

/* ---- solving ------------------------------------------------------------- */

typedef struct amq_alloc_group {
    double keys;                  /* n_i >= 0                              */
    double weight;                /* p_i >= 0 (any scale)                  */
    const amq_alloc_curve *curve; /* borrowed                              */
} amq_alloc_group;

/* One group's allocation. */
typedef struct amq_alloc_pick {
    double bits_per_key;           /* b_i                                   */
    double fpr;                    /* f_i(b_i) of the realised choice       */
    char spec[AMQ_ALLOC_SPEC_MAX]; /* what to build ("" = no filter)        */
} amq_alloc_pick;

typedef struct amq_alloc_summary {
    double cost;           /* sum p_i f_i of the picks (+ p_0 in min_memory) */
    double memory_bits;    /* sum n_i b_i of the picks                       */
    double lambda;         /* the multiplier: cost saved per extra bit at the
                            margin (0 when the budget does not bind)       */
    double kkt_residual;   /* the relaxed solution's largest relative KKT
                            violation (stationarity and complementarity) */
    double relaxed_cost;   /* the hull relaxation at the same budget: a
                              lower bound on any choice of sampled points
                              (min_cost)                                   */
    double relaxed_memory; /* ditto for memory (min_memory)                */
    size_t rounded;        /* groups moved off the relaxation to a realisable
                            point (chord groups and greedy moves)          */
} amq_alloc_summary;

/* Minimise sum p_i f_i(b_i) subject to sum n_i b_i <= memory_bits.
 * picks[i] receives group i's allocation; summary may be NULL. Groups with
 * keys = 0 or weight = 0 get no filter. The budget may stay partly unused
 * when every curve is exhausted (sampled curves end at their max_bits).
 * Errors: AMQ_ERR_INVALID (NULL groups or picks with count > 0, a NULL
 * curve, keys / weight / memory_bits negative or not finite), leaving
 * picks untouched. Complexity: one bisection, O(G log H) per step for G
 * groups and hulls of H points, ~100-200 steps; each group on a chord
 * costs ~100 more bisections; the greedy pass is O(G^2) at worst. */
AMQ_API amq_status amq_alloc_min_cost(const amq_alloc_group *groups,
                                      size_t count, double memory_bits,
                                      amq_alloc_pick *picks,
                                      amq_alloc_summary *summary);

/* Minimise sum n_i b_i subject to p_0 + sum p_i f_i(b_i) <= eps (weights
 * and p_0 on the same scale, e.g. probabilities). eps >= p_0 + sum p_i
 * needs no memory at all. Errors: AMQ_ERR_INVALID as min_cost, and when
 * eps <= p_0 or eps is below what the curves can reach at their max_bits
 * (p_0 + sum p_i f_i(max)): no allocation meets it. */
AMQ_API amq_status amq_alloc_min_memory(const amq_alloc_group *groups,
                                        size_t count, double p0, double eps,
                                        amq_alloc_pick *picks,
                                        amq_alloc_summary *summary);

/* The workload-blind baseline: every group with keys gets the same bits
 * per key, memory_bits / sum n_i, realised as amq_alloc_curve_at does
 * (weights are used only for the summary's cost). Errors as min_cost. */
AMQ_API amq_status amq_alloc_uniform(const amq_alloc_group *groups,
                                     size_t count, double memory_bits,
                                     amq_alloc_pick *picks,
                                     amq_alloc_summary *summary);

/* ---- one curve ----------------------------------------------------------- */

/* The best realisable choice with at most bits_per_key bits per key (the
 * curve itself, not its hull): pick->bits_per_key <= bits_per_key. Errors:
 * AMQ_ERR_INVALID (NULL, negative or NaN bits). */
AMQ_API amq_status amq_alloc_curve_at(const amq_alloc_curve *curve,
                                      double bits_per_key,
                                      amq_alloc_pick *pick);

/* The i-th vertex of the lower convex hull the solvers use (b ascending,
 * f strictly descending, vertex 0 at b = 0); false past the last. For a
 * model curve: false (it has no vertices; it is convex as it is). */
AMQ_API bool amq_alloc_curve_vertex(const amq_alloc_curve *curve, size_t i,
                                    double *bits_per_key, double *fpr);

/* The curve's label: "model", the spec it was created from, or the
 * caller's label. */
AMQ_API const char *amq_alloc_curve_label(const amq_alloc_curve *curve);

#ifdef __cplusplus
}
#endif
#endif
