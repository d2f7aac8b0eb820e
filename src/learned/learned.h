/*
 * learned.h — what the files of src/learned share: the model and cascade
 * structs, the feature emitter, calibration, statistics, the partition
 * search and the planner. Public contracts are in amq/cascade.h.
 *
 *   features.c   φ(k): hashed n-grams and shape features
 *   model.c      logistic regression (AdaGrad), int8 weights, scoring
 *   calib.c      Platt scaling, isotonic regression, AUC
 *   stats.c      incomplete beta/gamma, Clopper-Pearson, χ²
 *   partition.c  bins, PLBF's optimal-partition DP, equal splits
 *   keyset.c     deterministic splits, duplicates, overlap (keyset.h)
 *   plan.c       thresholds + residual sizes (the allocation engine)
 *   train.c      train / build / rebuild: from key sets to a cascade
 *   cascade.c    the structure: routes, queries, bound, updates, stats
 *   cframe.c     saving the frame (type 302); cload.c loading it
 *   audit.c      shadow-sampling audits, drift, shard budgets
 */
#ifndef AMQ_SRC_LEARNED_H
#define AMQ_SRC_LEARNED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "amq/cascade.h"
#include "core/mem.h"

/* ---- features (features.c) ------------------------------------------------ */

/* Features beyond the n-grams: length, 3 shares, 5 separators, segment
 * count, 3 tokens. */
#define AMQ__FEAT_SHAPE 13u

/* Resolve zeros to defaults and check ranges. */
amq_status amq__feature_config_resolve(const amq_feature_config *in,
                                       amq_feature_config *out);
size_t amq__features_max(const amq_feature_config *cfg);
/* The features of key (cfg resolved). Returns the count; idx/sign must
 * hold amq__features_max(cfg) entries. */
size_t amq__features(const amq_feature_config *cfg, const uint8_t *key,
                     size_t len, uint32_t *idx, int8_t *sign);
/* The same features summed straight against int8 or float weights, in the
 * same order (what amq__model_dot gives for the stored list, before the
 * scale and bias). */
int32_t amq__features_dot_q(const amq_feature_config *cfg, const uint8_t *key,
                            size_t len, const int8_t *q);
float amq__features_dot_f(const amq_feature_config *cfg, const uint8_t *key,
                          size_t len, const float *w);

/* A key set's arrays are present and its offsets start at 0 and never
 * decrease. */
bool amq__keys_valid(const amq_keys *k);
static inline const uint8_t *amq__key(const amq_keys *k, size_t i,
                                      size_t *len) {
    *len = (size_t)(k->offsets[i + 1] - k->offsets[i]);
    return k->bytes + k->offsets[i];
}

/* ---- the model (model.c, calib.c) ---------------------------------------------- */

/* Calibration table limit: isotonic blocks beyond it are merged. */
#define AMQ__ISO_MAX 1024u

struct amq_model {
    amq__mem mem;
    amq_model_config cfg; /* resolved: no zeros left                   */
    uint32_t dim;         /* 1 << cfg.features.dim_bits                */
    float *w;             /* dim weights (float models), else NULL     */
    int8_t *q;            /* dim weights (quantised), else NULL        */
    double scale;         /* quantised: weight = q * scale             */
    double bias;
    double platt_a, platt_b; /* AMQ_CALIB_PLATT                           */
    uint32_t iso_n;          /* AMQ_CALIB_ISOTONIC: steps                  */
    double *iso_x;           /* iso_n step starts (raw scores), increasing */
    double *iso_p;           /* iso_n probabilities, non-decreasing        */
    uint64_t id;
};

amq_status amq__model_config_resolve(const amq_model_config *in,
                                     amq_model_config *out);
/* An empty model of cfg's shape (weights zero). */
amq_status amq__model_alloc(const amq_model_config *cfg, const amq__mem *mem,
                            amq_model **out);
amq_status amq__model_clone(const amq_model *m, const amq__mem *mem,
                            amq_model **out);
/* Recompute m->id from everything that defines the model. */
void amq__model_seal(amq_model *m);
/* Raw score from a feature list (the one summation order). */
double amq__model_dot(const amq_model *m, const uint32_t *idx,
                      const int8_t *sign, size_t n);
/* Raw scores of a key set (malloc'ed through mem). */
amq_status amq__model_score_keys(const amq_model *m, const amq_keys *k,
                                 double **out);

/* Fit the calibration of m on raw scores of members (pos) and non-members
 * (neg). Errors: AMQ_ERR_NOMEM. */
amq_status amq__calib_fit(amq_model *m, const double *pos, size_t npos,
                          const double *neg, size_t nneg);
double amq__calib_apply(const amq_model *m, double raw);
/* Pool-adjacent violators on (x sorted ascending, y in [0,1], weight 1):
 * out_x/out_p get the step starts and values, wt is scratch (each of the
 * three holds n); returns the steps (at most AMQ__ISO_MAX). */
size_t amq__isotonic(const double *x, const double *y, size_t n, double *out_x,
                     double *out_p, double *wt);
/* Platt: (a, b) minimising the log loss of sigmoid(a z + b) against
 * Platt's smoothed targets. Errors: AMQ_ERR_NOMEM. */
amq_status amq__platt(const amq__mem *mem, const double *pos, size_t npos,
                      const double *neg, size_t nneg, double *a, double *b);

/* AUC of two score arrays (ties one half). Sorts copies. */
amq_status amq__auc(const amq__mem *mem, const double *pos, size_t npos,
                    const double *neg, size_t nneg, double *auc);

/* ---- statistics (stats.c) ---------------------------------------------------- */

/* Regularised incomplete beta I_x(a, b), a, b > 0, x in [0, 1]. */
double amq__ibeta(double x, double a, double b);
/* Regularised upper incomplete gamma Q(a, x). */
double amq__gammaq(double a, double x);
/* One-sided Clopper-Pearson limits for k successes in n trials at
 * confidence 1 - alpha: upper = 1 when k == n, lower = 0 when k == 0;
 * n == 0 gives upper 1, lower 0. */
double amq__cp_upper(uint64_t k, uint64_t n, double alpha);
double amq__cp_lower(uint64_t k, uint64_t n, double alpha);
/* P(χ²_df > x). */
double amq__chi2_sf(double x, double df);

/* ---- partition (partition.c) ---------------------------------------------------- */

/* Bin edges: B - 1 increasing raw scores; bin(z) = #edges <= z. */
uint32_t amq__bin_of(const double *edges, uint32_t bins, double z);
/* Quantile edges of two samples weighted half each (members a, non-members
 * b); fewer distinct edges than asked merge bins: *bins_out <= bins. */
amq_status amq__bin_edges(const amq__mem *mem, const double *a, size_t na,
                          const double *b, size_t nb, uint32_t bins,
                          double *edges, uint32_t *bins_out);

/* A DP over bins [lo, hi) for regions of Σ g ln(g/h): after
 * amq__dp_run, amq__dp_cut gives the best cut of [lo, j) into k regions
 * for any lo < j <= hi, k <= kmax. */
typedef struct amq__dp {
    uint32_t lo, hi, kmax;
    double *best;  /* (kmax + 1) x (hi - lo + 1)                           */
    uint32_t *arg; /* same shape: start of the last region                 */
    const double *cg, *ch; /* prefix sums over bins (size bins + 1)         */
} amq__dp;

amq_status amq__dp_run(amq__dp *dp, const amq__mem *mem, const double *cg,
                       const double *ch, uint32_t lo, uint32_t hi,
                       uint32_t kmax);
void amq__dp_free(amq__dp *dp, const amq__mem *mem);
/* Cut points cuts[0..k] (cuts[0] = lo, cuts[k] = j); false if [lo, j)
 * cannot hold k non-empty regions. */
bool amq__dp_cut(const amq__dp *dp, uint32_t j, uint32_t k, uint32_t *cuts);
/* Equal splits of [lo, j) into k regions by the prefix sums c (members or
 * non-member mass); regions stay non-empty. */
bool amq__equal_cut(const double *c, uint32_t lo, uint32_t j, uint32_t k,
                    uint32_t *cuts);

/* ---- the cascade (cascade.c, plan.c, cframe.c) --------------------------- */

/* Which structure holds the members of a bin. */
#define AMQ__HOLD_NONE 0xFFu    /* nobody: only valid at or above max_accept */
#define AMQ__HOLD_REJECT 0xFEu  /* the reject tail: members here are lost   */
#define AMQ__ROUTE_ACCEPT 0xFDu /* a route: the bin is accepted            */
/* At most this many score thresholds in a cascade's route table; more
 * (a route that alternates) and queries search the bins instead. */
#define AMQ__ROUTE_MAX 15

typedef struct amq__region {
    amq_filter *f;           /* NULL: see accept_all                       */
    bool accept_all;         /* no filter: 0 bits given (accept) or no    */
                             /* members (false: reject)                   */
    uint32_t bin_lo, bin_hi; /* bins whose members it holds               */
    uint64_t n;              /* members held (stale included)              */
    uint64_t stale;
} amq__region;

/* What the planner decides; amq__cascade_fill realises it. Regions are
 * numbered from the lowest score up. */
typedef struct amq__plan {
    uint32_t nregions;
    uint32_t
        cuts[AMQ_CASCADE_MAX_LEVELS + 1]; /* region r: [cuts[r], cuts[r+1]) */
    uint32_t reject_bins; /* bins [0, reject_bins) rejected            */
    uint32_t accept_bin;  /* bins >= it accepted                        */
    uint32_t hold_top;    /* the top region holds members up to here    */
    char spec[AMQ_CASCADE_MAX_LEVELS][96]; /* "" = no filter (accept)      */
    double fpr[AMQ_CASCADE_MAX_LEVELS];
    char front_spec[96]; /* sandwich                                   */
    double front_fpr;
} amq__plan;

struct amq_cascade {
    amq__mem mem;
    amq_model *model; /* NULL: a plain filter (amq__cascade_plain)       */
    amq_cascade_config cfg; /* resolved; spec strings point into c        */
    char residual_spec[96], aux_spec[96];
    amq_hasher hasher;   /* residuals' and the buffer's               */
    uint32_t bins;       /* in use (<= bins_alloc: few distinct scores */
    uint32_t bins_alloc; /* merge bins)                                */
    double *edges;       /* bins - 1                                   */
    uint8_t *hold;       /* bins: AMQ__HOLD_* or a region index        */
    uint32_t accept_bin; /* bins >= it accepted                        */
    uint32_t max_accept; /* highest safe accept_bin                    */
    uint32_t reject_bins;
    uint32_t nregions;
    amq__region regions[AMQ_CASCADE_MAX_LEVELS];
    /* What a query does with a score, from hold[] and accept_bin: bins
     * with the same outcome merged, so z's outcome is
     * route_to[#{i : route_at[i] <= z}] (AMQ__ROUTE_ACCEPT, a region or a
     * reject) — a few compares in place of a search of every edge.
     * route_n > AMQ__ROUTE_MAX: search the bins. amq__cascade_reroute
     * keeps it in step. */
    uint32_t route_n;
    double route_at[AMQ__ROUTE_MAX];
    uint8_t route_to[AMQ__ROUTE_MAX + 1];
    amq_filter *front;       /* sandwich: initial filter over all members */
    bool fallback;           /* the bound in force is the worst-case cap   */
    double plain_bytes;      /* training's best plain filter, 0: none       */
    uint32_t params_version; /* frame parameters saved: 2, or a loaded  */
                             /* frame's own (1 saves back as it was)    */
    amq_filter *aux;         /* insert buffer (NULL: none)                 */
    uint32_t *cert;          /* bins: certify non-members per bin          */
    uint32_t *tune;          /* bins: tune non-members per bin             */
    uint32_t *memb;          /* bins: members per bin                      */
    uint64_t certify_n, tune_n, members;
    uint64_t version;
    uint64_t added, removed, stale_other, tail_members;
    uint64_t max_stale; /* resolved cfg.max_stale                     */
    double build_seconds;
    /* What the frame records in place of the time: 0 for a training (so
     * trainings on the same input save the same bytes), a loaded frame's
     * own value (so it saves back unchanged). */
    double frame_seconds;
};

/* The front filter sees mix(h ^ salt): positions independent of the
 * residuals' (the bound multiplies their rates). */
#define AMQ__FRONT_SALT 0x73616e6477696368ULL

/* An empty cascade for `bins` bins around a copy of model (arrays zeroed,
 * no regions). */
amq_status amq__cascade_alloc(const amq_model *model, uint32_t bins,
                              const amq_cascade_config *cfg,
                              const amq_hasher *hasher, const amq__mem *mem,
                              amq_cascade **out);
/* A plain filter as a cascade (no model, one bin, one region holding
 * every member in f, which the cascade takes over, freed on failure too):
 * what training keeps when no learned cascade is smaller, and what loading
 * a filter's frame gives. model NULL marks it. */
amq_status amq__cascade_plain(amq_filter *f, const amq_cascade_config *cfg,
                              const amq__mem *mem, amq_cascade **out);
/* Rebuild the route table after hold[], accept_bin or the edges change. */
void amq__cascade_reroute(amq_cascade *c);
/* What a query does with raw score z: AMQ__ROUTE_ACCEPT, a region index,
 * or another value (>= nregions) for a reject. */
uint8_t amq__cascade_route(const amq_cascade *c, double z);
/* The same from the bins (the reference the route table must match). */
uint8_t amq__cascade_route_bins(const amq_cascade *c, double z);
/* The model's id, 0 for a plain cascade. */
uint64_t amq__cascade_model_id(const amq_cascade *c);
/* Per-bin counts of scores (counts zeroed first). */
void amq__histogram(const amq_cascade *c, const double *z, size_t n,
                    uint32_t *counts);
/* The bound: certified (Clopper-Pearson limits) or with point estimates. */
double amq__cascade_bound(const amq_cascade *c, bool point_estimate);
/* Realise a plan: routes, then every member hashed into the filter of the
 * region holding its bin (member_scores[i] is member i's raw score). */
amq_status amq__cascade_fill(amq_cascade *c, const amq__plan *plan,
                             const amq_keys *members,
                             const double *member_scores, amq_diag *diag);
/* plan.c: choose the plan for c (edges and histograms set). */
amq_status amq__cascade_plan(const amq_cascade *c, amq__plan *plan,
                             amq_diag *diag);
/* Drop every filter (a plan is realised again from scratch). */
void amq__cascade_clear(amq_cascade *c);
/* The total bytes of c (model, filters, tables). */
size_t amq__cascade_bytes(const amq_cascade *c, size_t *model, size_t *residual,
                          size_t *front, size_t *aux, size_t *tables);

/* ---- training (train.c, choose.c) ----------------------------------------- */

/* Raw scores of the members, tune and certify sets under one model. */
typedef struct amq__scores {
    double *m, *t, *c;
    size_t nm, nt, nc;
} amq__scores;

/* The scores of members, tune and certify under m (freed on failure). */
amq_status amq__score_sets(const amq_model *m, const amq__mem *mem,
                           const amq_keys *members, const amq_keys *tune,
                           const amq_keys *certify, amq__scores *z);
void amq__scores_free(const amq__mem *mem, amq__scores *z);
/* A cascade around a copy of model from scored sets: bins, plan, filters,
 * checked against the target (cfg resolved; its residual NULL: sbbf). */
amq_status amq__cascade_build_scored(
    const amq_model *model, const amq_keys *members, const amq__scores *z,
    const amq_cascade_config *cfg, const amq_hasher *hasher,
    const amq__mem *mem, amq_cascade **out, amq_diag *diag);

/* The parts training splits the key sets into (train.c); with a given
 * model only members, tune and certify are read. */
typedef struct amq__train_sets {
    const amq_keys *members; /* every member, once                      */
    const amq_keys *train_m, *calib_m, *train_n, *tune, *certify;
} amq__train_sets;

/* Training's choices (cfg->choose, resolved cfg): every candidate model
 * (or the given one), residual and bin count built and certified, and the
 * plain filters; the smallest (or, at a memory target, the lowest bound)
 * kept. */
amq_status amq__cascade_choose(const amq__train_sets *s, const amq_model *model,
                               const amq_cascade_config *cfg,
                               const amq_options *opt, amq_cascade **out,
                               amq_diag *diag);
/* A plain filter of spec over every member for the target of cfg (fpr, or
 * bits per key with its frame), as a plain cascade. AMQ_ERR_FULL when it
 * misses the target. */
amq_status amq__cascade_train_plain(const amq_keys *members, const char *spec,
                                    const amq_cascade_config *cfg,
                                    const amq_hasher *hasher,
                                    const amq__mem *mem, amq_cascade **out,
                                    amq_diag *diag);

/* Resolve config defaults (spec strings are copied into c by the
 * caller). */
amq_status amq__cascade_config_resolve(const amq_cascade_config *in,
                                       amq_cascade_config *out, amq_diag *diag);

/* ---- fast scoring (features.c, model.c, score_avx2.c, score_avx512.c) ---- */

/* The constants of φ that the vector kernels repeat (features.c's essay). */
#define AMQ__FEAT_STX 0x02u
#define AMQ__FEAT_ETX 0x03u
#define AMQ__FEAT_M1 0x9E3779B97F4A7C15ULL
#define AMQ__FEAT_KIND_NGRAM 1u

/* What the 13 shape features of a key (at most AMQ_FEATURE_MAX_BYTES)
 * are made of: class counts and the token bounds (first and second
 * separator, one past the last; len and 0 when absent). */
typedef struct amq__key_shape {
    size_t len, digits, letters, nsep;
    size_t seps[5]; /* . / : - _ */
    size_t first, second, last;
} amq__key_shape;

/* The scalar scan of key (len already clamped). */
void amq__shape_scan(const uint8_t *key, size_t len, amq__key_shape *s);
/* The 13 hashed shape features in emission order: index in the top
 * dim_bits bits of h[j], sign in the bit below (as for an n-gram). */
void amq__shape_hashes(const amq__key_shape *s, const uint8_t *key,
                       uint64_t h[AMQ__FEAT_SHAPE]);

/* Keys a batch kernel scores at once (the widest kernel's lanes). */
#define AMQ__SCORE_LANES 16u

/* One instruction set's scorers; every one gives amq__features_dot_q /
 * amq__features_dot_f's value bit for bit (cfg resolved). batch_f scores
 * n <= lanes float keys side by side, keys of similar length best. */
typedef struct amq__score_kernels {
    const char *name;
    unsigned lanes; /* keys a batch call scores side by side            */
    int32_t (*dot_q)(const amq_feature_config *cfg, const uint8_t *key,
                     size_t len, const int8_t *q);
    float (*dot_f)(const amq_feature_config *cfg, const uint8_t *key,
                   size_t len, const float *w);
    void (*batch_f)(const amq_feature_config *cfg, const uint8_t *const *key,
                    const size_t *len, size_t n, const float *w, float *out);
} amq__score_kernels;

/* Defined on x86-64 only (score_avx2.c, score_avx512.c). */
extern const amq__score_kernels amq__score_avx2;
extern const amq__score_kernels amq__score_avx512;

/* The kernels of a CPU level (AMQ__CPU_SCALAR, AMQ__CPU_AVX2,
 * AMQ__CPU_AVX512), or NULL when the build, the machine or amq__cpu_cap
 * rules it out. The scalar level is features.c's reference. */
const amq__score_kernels *amq__score_kernels_at(int level);
/* The widest available: what the model's scoring uses, chosen per call
 * (the answer is cached by core/cpu.c). */
const amq__score_kernels *amq__score_kernels_best(void);

#endif
