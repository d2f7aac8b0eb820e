/*
 * amq/cascade.h — the learned Bloom filter cascade with a certified bound
 * (Benamar & Selmani, §3-5; docs/cascade.md), and the learned baselines
 * built from the same parts: the learned Bloom filter (LBF), the sandwiched
 * LBF and the partitioned LBF (PLBF).
 *
 * A scorer s = f(φ(k)) — logistic regression over hashed byte n-grams and
 * a few shape features of the key, trained here in C — maps a key to a
 * real score. The score axis is cut into B bins; consecutive bins form
 * intervals:
 *
 *      score:  low ───────────────────────────────────────────────▶ high
 *      bins:   | 0 | 1 | 2 | ... |   ...   | ... | B-2 | B-1 |
 *      route:  [ tail I_{L+1} ][ I_L ] ... [ I_1 ][   accept I_0    ]
 *                 guard B_{L+1}  B_L         B_1     (no filter)
 *
 * A key in I_0 is accepted; a key in I_ℓ is accepted when the residual
 * filter B_ℓ, which holds exactly the members whose scores fall in I_ℓ,
 * says so; the tail is guarded by one more residual filter (default) or
 * rejected within a false-negative budget δ (eq. 8). Hence no false
 * negatives on every path (the reject tail aside), and for a non-member
 * drawn from the query distribution (eq. 1-2)
 *
 *      FPR <= p_0 + Σ_ℓ p_ℓ ε_ℓ (+ ε_aux)
 *
 * where p_ℓ is the non-member mass of I_ℓ and ε_ℓ = the residual's
 * certified amq_filter_fpr_bound at its current load. The certified bound
 * replaces each p_ℓ by its one-sided Clopper-Pearson upper limit from a
 * held-out "certify" split of the non-members that played no part in
 * training, calibration or the choice of thresholds; the confidence 1 - η
 * is split over the terms (union bound), so the bound holds with
 * probability >= 1 - η over the draw of that split.
 *
 * Training (amq_cascade_train) splits the data deterministically by a
 * keyed hash of each key: members into train / calibrate, non-members into
 * train / tune / certify. The model is fitted on the train parts and
 * calibrated (Platt or isotonic) on calibrate + tune; the bins, the
 * thresholds (PLBF's optimal-partition dynamic programme, or equal splits)
 * and the residual sizes (the allocation engine, amq/alloc.h) come from
 * every member (exact counts n_ℓ) and the tune non-members; p_ℓ's limits
 * from certify.
 *
 * Scores and determinism: the raw score is bias + Σ ±w over the key's
 * features, summed in a fixed order (float weights) or as an exact integer
 * sum (int8 weights), so one model gives one score on every IEEE machine.
 * Thresholds compare raw scores; calibration only names them as
 * probabilities.
 *
 * Errors: every fallible call returns amq_status and changes nothing on
 * failure. Ownership: *_train/_load/_rebuild return objects the caller
 * frees with the matching *_free (NULL accepted). Thread-safety: queries on
 * a cascade nobody modifies are safe from any number of threads; add,
 * remove and set_accept_bin need exclusive access.
 */
#ifndef AMQ_CASCADE_H
#define AMQ_CASCADE_H

#include "amq/filter.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- key sets ------------------------------------------------------------- */

/* n keys back to back in `bytes`: key i is bytes[offsets[i] .. offsets[i+1])
 * (offsets has n + 1 nondecreasing entries, offsets[0] == 0). The caller
 * owns both arrays; nothing keeps a pointer to them after a call returns. */
typedef struct amq_keys {
    const uint8_t *bytes;
    const uint64_t *offsets;
    size_t n;
} amq_keys;

/* ---- features φ(k) ---------------------------------------------------------- */

/* Every feature is an indicator hashed (with a sign) into 2^dim_bits
 * dimensions, so a feature vector is a list of (index, ±1); an index may
 * repeat (its values add). For a key of len bytes (only the first
 * AMQ_FEATURE_MAX_BYTES take part) framed as STX key ETX:
 *   - every byte n-gram of that frame, n = 1..ngram_max;
 *   - length bucket min(len, 63);
 *   - shares of digits, ASCII letters and other bytes, each as
 *     floor(8 * count / len) (0..8);
 *   - for each separator of ". / : - _" its count (capped at 15), and the
 *     segment count (separators + 1, capped at 31);
 *   - the first token, the first two tokens and the last token (split on
 *     the separators), each hashed whole.
 * Hashing is integer-only (multiply-xorshift of the packed bytes and a
 * per-kind tag), so φ is the same on every machine. docs/cascade.md
 * lists the exact constants. */
#define AMQ_FEATURE_MAX_BYTES 256u
#define AMQ_FEATURE_DIM_BITS_MIN 8u
#define AMQ_FEATURE_DIM_BITS_MAX 20u

typedef struct amq_feature_config {
    uint32_t dim_bits;  /* 8..20; 0: 16                                    */
    uint32_t ngram_max; /* 1..4; 0: 4                                       */
} amq_feature_config;

/* Upper bound on the features of one key: size `idx` for this many. */
AMQ_API size_t amq_features_max(const amq_feature_config *cfg);

/* The features of one key, in the order the scorer sums them: idx[i] is
 * the dimension, sign[i] is +1 or -1. *n = count (<= amq_features_max).
 * Errors: AMQ_ERR_INVALID (bad config, NULL key with len > 0,
 * cap < amq_features_max). */
AMQ_API amq_status amq_features(const amq_feature_config *cfg, const void *key,
                                size_t len, uint32_t *idx, int8_t *sign,
                                size_t cap, size_t *n);

/* ---- the scorer (a calibrated logistic-regression model) ------------------ */

typedef struct amq_model amq_model;

typedef enum amq_calibration {
    AMQ_CALIB_NONE = 0,    /* probability = sigmoid(raw score)             */
    AMQ_CALIB_PLATT = 1,   /* sigmoid(a * raw + b), fitted on held-out data */
    AMQ_CALIB_ISOTONIC = 2 /* pool-adjacent-violators step function        */
} amq_calibration;

typedef struct amq_model_config {
    amq_feature_config features;
    uint32_t epochs;      /* passes of AdaGrad SGD; 0: 6                  */
    double learning_rate; /* AdaGrad step; 0: 0.2                          */
    double l2;            /* L2 penalty λ on the mean loss; 0: 1e-7;       */
                          /* negative: none                                */
    double member_weight; /* class weight of members relative to non-     */
                          /* members; 0: balanced (n_non / n_members)     */
    double tail_weight;   /* §3's loss: a non-member's weight is           */
                          /* 1 + tail_weight * p(k), p the model's current */
                          /* probability: high-scoring non-members count   */
                          /* more. 0: plain weighted logistic loss         */
    bool quantize;        /* int8 weights (4x smaller, integer scoring)   */
    amq_calibration calibration; /* 0: NONE; amq_cascade_config_init: PLATT */
    uint64_t seed; /* shuffling; same seed and data, same model   */
} amq_model_config;

/* Train on members (label 1) and non-members (label 0); calibrate on the
 * second pair (may both be NULL or empty: then calibration is NONE).
 * Deterministic given cfg->seed and the data (order included).
 * Cost: epochs * (total key bytes) feature hashing plus as many sparse
 * updates; memory 2^dim_bits * 8 bytes while training.
 * Errors: AMQ_ERR_INVALID (empty class, bad config), AMQ_ERR_NOMEM. */
AMQ_API amq_status amq_model_train(const amq_keys *members,
                                   const amq_keys *nonmembers,
                                   const amq_keys *calib_members,
                                   const amq_keys *calib_nonmembers,
                                   const amq_model_config *cfg,
                                   const amq_options *opt, amq_model **out);
AMQ_API void amq_model_free(amq_model *m);

/* Raw score (the logit before calibration). */
AMQ_API double amq_model_score(const amq_model *m, const void *key, size_t len);
/* Raw scores of every key of keys (the batch path; same values as the
 * loop). */
AMQ_API void amq_model_score_batch(const amq_model *m, const amq_keys *keys,
                                   double *out);
/* Calibrated probability of a raw score (monotone non-decreasing). */
AMQ_API double amq_model_probability(const amq_model *m, double raw);
/* Area under the ROC curve of the raw score on the two sets (ties count
 * one half). Errors: AMQ_ERR_INVALID (an empty set), AMQ_ERR_NOMEM. */
AMQ_API amq_status amq_model_auc(const amq_model *m, const amq_keys *members,
                                 const amq_keys *nonmembers, double *auc);
/* The model's version: XXH64 of its feature config, weights and
 * calibration. Scores carry it; a cascade refuses another version's. */
AMQ_API uint64_t amq_model_id(const amq_model *m);
/* Bytes the model occupies in memory and in a cascade file (weights,
 * calibration table). */
AMQ_API size_t amq_model_size_bytes(const amq_model *m);
AMQ_API const amq_model_config *amq_model_config_of(const amq_model *m);

/* ---- the cascade ------------------------------------------------------------ */

typedef struct amq_cascade amq_cascade;

typedef enum amq_learned_method {
    AMQ_LEARNED_CASCADE = 0,  /* DP partition, engine sizes, certified p     */
    AMQ_LEARNED_LBF = 1,      /* one threshold + one backup filter            */
    AMQ_LEARNED_SANDWICH = 2, /* initial filter + scorer + backup filter      */
    AMQ_LEARNED_PLBF = 3 /* DP regions, f_i ∝ g_i / h_i (closed form)    */
} amq_learned_method;

typedef enum amq_partition {
    AMQ_PARTITION_OPTIMAL = 0, /* max Σ g ln(g/h) (PLBF's DP), O(B²L)  */
    AMQ_PARTITION_EQUAL_MEMBERS = 1, /* equal member counts per interval     */
    AMQ_PARTITION_EQUAL_MASS = 2     /* equal non-member mass per interval   */
} amq_partition;

typedef enum amq_tail {
    AMQ_TAIL_GUARD = 0, /* the lowest interval has a filter too: α = ε_{L+1} */
    AMQ_TAIL_REJECT = 1 /* the lowest bins holding at most δ of the members */
                        /* are rejected: false negatives <= δ (eq. 8)       */
} amq_tail;

#define AMQ_CASCADE_MAX_LEVELS 16u
#define AMQ_CASCADE_MAX_BINS 4096u

typedef struct amq_cascade_config {
    amq_model_config model;
    amq_learned_method method;
    /* Exactly one target: fpr > 0 (minimise memory with the certified bound
     * <= fpr) or bits_per_key > 0 (minimise the bound with the saved
     * frame — model, tables, residuals, frame — within bits_per_key per
     * member). */
    double fpr;
    double bits_per_key;
    uint32_t levels; /* residual filters, tail guard included; 0: auto */
    uint32_t bins;   /* histogram bins B (8..4096); 0: 256             */
    amq_partition partition;
    amq_tail tail;
    double delta;         /* AMQ_TAIL_REJECT: member share the tail may hold */
    double eta;           /* the bound holds with confidence 1 - eta; 0: 1e-3 */
    double holdout;       /* share of keys held out of training (members   */
                          /* for calibration; non-members for tune and     */
                          /* certify, half each); 0: 0.5                    */
    const char *residual; /* spec of the residual filters; NULL: "sbbf"    */
                          /* (any type with a curve: blocked, bloom,       */
                          /* ribbon, fuse8, counting, cuckoo, ...)         */
    const char *aux;      /* spec of the insert buffer; NULL: "blocked"    */
    uint64_t aux_capacity; /* keys amq_cascade_add may take before a        */
                           /* rebuild; 0: none (add gives AMQ_ERR_FULL)     */
    double aux_fpr;        /* its target rate; 0: the target fpr / 10, or   */
                           /* 1e-3 with a memory target                      */
    uint64_t max_stale;    /* deletes counted as stale (not removed) before  */
                           /* remove gives AMQ_ERR_FULL; 0: 1% of members   */
    uint32_t headroom;     /* bins above τ_0 whose members the top residual */
                           /* also holds, so τ_0 may later rise that far    */
    /* What amq_cascade_train chooses itself (AMQ_CHOOSE_*); a choice left
     * out takes the field as given. amq_cascade_config_init: all. */
    uint32_t choose;
    /* A distribution-free cap E in (fpr, 1): an initial filter of the
     * residual type at rate E over every member in front of the learned
     * route (the sandwich), so the FPR is <= E for any query distribution
     * (amq_cascade_stats.worst_case_bound) and the certified bound is E
     * times the learned route's; amq_cascade_set_fallback answers with it
     * alone. 0: none (cascade method only). */
    double worst_case;
} amq_cascade_config;

/* Training's choices. MODEL: the feature dimensions (2^8 .. 2^18, every
 * other power) and int8 or float weights, smallest total first, stopping
 * when the model alone outweighs the best result (model.features.dim_bits
 * and model.quantize are ignored). RESIDUAL: the residual type (ribbon,
 * fuse8, xor8 without an insert buffer; blocked, cuckoo, qf with one).
 * BINS: 32, 64, 128 or 256 bins (the tables cost 21 bytes a bin). PLAIN:
 * a plain filter of the best static type (ribbon, fuse, xor, blocked) over
 * every member is a candidate too, kept when smaller (at a memory target:
 * when its bound is lower) than every learned cascade, so training never
 * returns more than the plain filter (amq_cascade_is_plain); only without
 * an insert buffer. Every candidate is certified the same way and compared
 * by its saved bytes. Because the K learned candidates share one certify
 * split, each is certified at eta / K, so the one kept holds with
 * confidence 1 - eta (union bound; amq_cascade_stats.eta reports eta / K).
 * Only the cascade method chooses. */
#define AMQ_CHOOSE_MODEL 0x1u
#define AMQ_CHOOSE_RESIDUAL 0x2u
#define AMQ_CHOOSE_BINS 0x4u
#define AMQ_CHOOSE_PLAIN 0x8u
#define AMQ_CHOOSE_ALL 0xFu

/* Fill cfg with the defaults: every field as its comment says for 0,
 * except the model's calibration, which is AMQ_CALIB_PLATT (a zeroed
 * config trains uncalibrated, AMQ_CALIB_NONE). */
AMQ_API void amq_cascade_config_init(amq_cascade_config *cfg);

/* Train the model, choose thresholds and sizes, build the residuals.
 * members: the set (duplicates allowed, stored once). nonmembers: a sample
 * of the non-member query distribution; its held-out parts estimate p_ℓ.
 * Errors: AMQ_ERR_INVALID (empty set; keys in both sets — diag gives the
 * count; bad config), AMQ_ERR_FULL (the target cannot be met: fpr below
 * what is reachable, or a budget smaller than the model; diag says what
 * is reachable), AMQ_ERR_SPEC (residual/aux spec), AMQ_ERR_NOMEM. */
AMQ_API amq_status amq_cascade_train(const amq_keys *members,
                                     const amq_keys *nonmembers,
                                     const amq_cascade_config *cfg,
                                     const amq_options *opt, amq_cascade **out,
                                     amq_diag *diag);

/* Build a cascade around an existing model (which is copied): the
 * thresholds and residuals for `members`, with `tune` choosing thresholds
 * and sizes and `certify` giving p_ℓ's limits (the two must be disjoint
 * samples of the non-member distribution, unseen by the model's
 * training). Same errors as train. */
AMQ_API amq_status amq_cascade_build(
    const amq_model *model, const amq_keys *members, const amq_keys *tune,
    const amq_keys *certify, const amq_cascade_config *cfg,
    const amq_options *opt, amq_cascade **out, amq_diag *diag);

/* A new version of c for a new member set (same model, same config):
 * version = c's + 1, the insert buffer emptied, stale counts zero. */
AMQ_API amq_status amq_cascade_rebuild(const amq_cascade *c,
                                       const amq_keys *members,
                                       const amq_keys *tune,
                                       const amq_keys *certify,
                                       amq_cascade **out, amq_diag *diag);

AMQ_API void amq_cascade_free(amq_cascade *c);

/* ---- queries ---------------------------------------------------------------- */

/* A score with the version of the model that computed it. */
typedef struct amq_score {
    double raw;
    uint64_t model_id;
} amq_score;

/* May key be a member? (No false negatives for members given at build or
 * added since, except the reject tail's <= δ share.) */
AMQ_API bool amq_cascade_contains(const amq_cascade *c, const void *key,
                                  size_t len);
/* out[i] = contains(key i) for every key of keys (scores in a batch, then
 * the residual lookups; the same answers as the loop). */
AMQ_API void amq_cascade_contains_batch(const amq_cascade *c,
                                        const amq_keys *keys, uint8_t *out);
/* The score the cascade's own model gives key. */
AMQ_API amq_score amq_cascade_score(const amq_cascade *c, const void *key,
                                    size_t len);
/* contains() with a score computed elsewhere (e.g. by a router).
 * Errors: AMQ_ERR_INCOMPATIBLE when s->model_id is not this cascade's
 * model (*out untouched), AMQ_ERR_INVALID (NULL). */
AMQ_API amq_status amq_cascade_contains_scored(const amq_cascade *c,
                                               const void *key, size_t len,
                                               const amq_score *s, bool *out);
/* Bin of a raw score (0..bins-1) and the route it takes. */
AMQ_API uint32_t amq_cascade_bin(const amq_cascade *c, double raw);

/* ---- updates (§5) ------------------------------------------------------------ */

/* A new member: goes to the insert buffer (always consulted) until the next
 * rebuild. Errors: AMQ_ERR_FULL (buffer at capacity or none configured:
 * rebuild), AMQ_ERR_NOMEM. */
AMQ_API amq_status amq_cascade_add(amq_cascade *c, const void *key, size_t len);

typedef enum amq_origin {
    AMQ_ORIGIN_BUILT = 0, /* the key was in the member set of this version */
    AMQ_ORIGIN_ADDED = 1  /* the key came through amq_cascade_add since    */
} amq_origin;

/* A member leaves. The caller states where it came from (a filter cannot
 * tell, and removing a key a filter does not hold could delete another's
 * fingerprint). If the structure holding it supports removal (counting,
 * cuckoo, ...) the key is removed; otherwise it stays as a stale key
 * (still answered positive, counted in n_ℓ and in the bound through the
 * filter's load) until max_stale is reached. A key accepted by I_0 is
 * only counted. Errors: AMQ_ERR_FULL (max_stale reached: rebuild),
 * AMQ_ERR_NOT_FOUND (a deletable structure does not hold it),
 * AMQ_ERR_INVALID. */
AMQ_API amq_status amq_cascade_remove(amq_cascade *c, const void *key,
                                      size_t len, amq_origin origin);

/* Whole-bin activation (§5, "build high, allow decreases"): bins >= bin
 * are accepted without consulting a filter. Any bin from 0 up to
 * amq_cascade_stats.max_accept_bin (the build's τ_0 plus the configured
 * headroom: every member below it is held by a residual) is safe, in both
 * directions; above it a member could be rejected, so it is refused with
 * AMQ_ERR_INVALID. The bound follows (more accepted bins: larger p_0). */
AMQ_API amq_status amq_cascade_set_accept_bin(amq_cascade *c, uint32_t bin);

/* ---- the bound and the numbers behind it ----------------------------------- */

/* The certified bound on the false-positive rate right now (eq. 1-2 with
 * Clopper-Pearson limits at 1 - eta, current residual loads, the insert
 * buffer, and for a sandwich the initial filter). */
AMQ_API double amq_cascade_fpr_bound(const amq_cascade *c);

typedef struct amq_cascade_level {
    uint32_t bin_lo, bin_hi; /* bins [bin_lo, bin_hi)                       */
    double tau_lo, tau_hi;   /* raw score interval [tau_lo, tau_hi)        */
    double prob_lo, prob_hi; /* the same, calibrated                        */
    uint64_t n;              /* members held (stale included)              */
    uint64_t stale;
    uint64_t certify_hits; /* certify non-members in the interval        */
    double p_hat;          /* their share                                 */
    double p_upper;        /* its Clopper-Pearson upper limit             */
    double eps;            /* the filter's certified bound (1: accept,    */
                           /* 0: reject)                                  */
    size_t bytes;          /* filter bytes                                */
    char spec[96];         /* the filter's described spec ("" if none)   */
} amq_cascade_level;

typedef struct amq_cascade_stats {
    amq_learned_method method;
    uint32_t levels; /* intervals with a residual filter           */
    uint32_t bins;
    uint32_t accept_bin;     /* bins >= accept_bin are accepted            */
    uint32_t max_accept_bin; /* highest value set_accept_bin takes         */
    uint32_t reject_bins;    /* bins [0, reject_bins) rejected (tail)      */
    uint64_t version;
    uint64_t model_id;
    uint64_t members; /* distinct members at build                  */
    uint64_t added, removed, stale;
    uint64_t certify_n, tune_n;
    double eta, target_fpr, target_bits_per_key;
    double p0_hat, p0_upper; /* the accepted interval I_0                  */
    double fpr_bound;        /* amq_cascade_fpr_bound                      */
    double fpr_estimate;     /* the same with point estimates p̂           */
    double tail_fnr;         /* members rejected by a reject tail          */
    double front_eps;        /* sandwich: the initial filter's bound       */
    double aux_eps;          /* the insert buffer's bound                  */
    size_t model_bytes, residual_bytes, front_bytes, aux_bytes, table_bytes;
    double bits_per_key; /* 8 * all bytes / members                    */
    /* Seconds the training took, in the process that trained. A frame
     * records 0 instead, so a training is reproducible to the byte; after
     * a load this is what the frame recorded (0, or the time in frames
     * written by earlier versions, which save back unchanged). */
    double build_seconds;
    double learned_bound;    /* the certified bound of the learned route     */
                             /* (fpr_bound unless in fallback)               */
    double worst_case_bound; /* for any non-member distribution: the    */
                             /* initial filter's rate (+ the buffer's);  */
                             /* a plain filter's own; 1 otherwise        */
    bool fallback;           /* amq_cascade_fallback                    */
    bool plain; /* no model: training found a plain filter smaller than   */
                /* every learned cascade (amq_cascade_is_plain)           */
    double plain_bytes; /* training's best plain filter at the same target */
                        /* (its file's bytes), 0 if none was compared     */
} amq_cascade_stats;

/* Fill stats and, if levels is not NULL, up to cap levels (interval I_1
 * first, the tail last); *nlevels (may be NULL) = how many exist. */
AMQ_API void amq_cascade_get_stats(const amq_cascade *c,
                                   amq_cascade_stats *stats,
                                   amq_cascade_level *levels, size_t cap,
                                   size_t *nlevels);
AMQ_API const amq_model *amq_cascade_model(const amq_cascade *c);

/* True when c is a plain filter: training keeps one (no model, one
 * residual over every member, the filter's own frame as the file) when it
 * is smaller than every learned cascade at the target; loading a filter's
 * frame gives one too. Its bound is the filter's own, for any query
 * distribution. */
AMQ_API bool amq_cascade_is_plain(const amq_cascade *c);

/* Fallback: with on, the learned bound is withdrawn and the bound in
 * force (amq_cascade_fpr_bound, stats.fpr_bound) is worst_case_bound,
 * which holds for any query distribution; what a server does when an
 * audit says the learned bound no longer holds, until a rebuild. The
 * answers do not change: a key passes only if the initial filter passes
 * it, so the learned route behind it can only lower the rate, never raise
 * it above the initial filter's (answering with the initial filter alone
 * would accept more). Saved in the frame. Errors: AMQ_ERR_UNSUPPORTED
 * (on, without an initial filter: train with a worst-case cap),
 * AMQ_ERR_INVALID. */
AMQ_API amq_status amq_cascade_set_fallback(amq_cascade *c, bool on);
AMQ_API bool amq_cascade_fallback(const amq_cascade *c);
AMQ_API const char *amq_learned_method_name(amq_learned_method m);

/* ---- the frame (docs/format.md, type id 302) ------------------------------- */

/* Everything: model, calibration, bins, the held-out histograms behind
 * p_ℓ, routes, residuals, insert buffer and counters. */
AMQ_API size_t amq_cascade_save_size(const amq_cascade *c);
/* Errors: AMQ_ERR_BUFFER (*len says how much is needed). */
AMQ_API amq_status amq_cascade_save(const amq_cascade *c, uint8_t *buf,
                                    size_t cap, size_t *len);
/* Validates every field before use. Errors: AMQ_ERR_CORRUPT,
 * AMQ_ERR_CHECKSUM, AMQ_ERR_VERSION (another major, an unknown type id),
 * AMQ_ERR_KIND (a filter's or a clock's frame; diag says which),
 * AMQ_ERR_NOMEM (diag says where). */
AMQ_API amq_status amq_cascade_load(const uint8_t *buf, size_t len,
                                    const amq_options *opt, amq_cascade **out,
                                    amq_diag *diag);
/* amq_cascade_save into the file at path, atomically: a temporary file
 * beside it is written, synced and renamed over it, so a reader (or a
 * crash) sees the old file or the whole new one; on failure path is
 * untouched. Errors: AMQ_ERR_IO (diag names the path and the reason),
 * AMQ_ERR_NOMEM, AMQ_ERR_INVALID. */
AMQ_API amq_status amq_cascade_save_file(const amq_cascade *c, const char *path,
                                         amq_diag *diag);
/* amq_cascade_load of the whole file at path (a pipe or device too).
 * Errors: AMQ_ERR_IO, and amq_cascade_load's. */
AMQ_API amq_status amq_cascade_load_file(const char *path,
                                         const amq_options *opt,
                                         amq_cascade **out, amq_diag *diag);

/* ---- audits by shadow sampling (§5) ------------------------------------------ */

/* A fraction `rate` of queries is sampled (the decision is a hash of the
 * query's sequence number, so it does not depend on the key); for each
 * sampled query the caller performs the full lookup and reports the truth.
 * From the sampled non-members the audit estimates each p_ℓ (unbiased),
 * the realised FPR, both with Clopper-Pearson intervals, and a drift
 * statistic against the build-time (certify) histogram. */
typedef struct amq_audit amq_audit;

typedef struct amq_audit_level {
    uint64_t hits; /* sampled non-members in the interval      */
    double p_hat, p_lower, p_upper; /* two-sided interval at 1 - eta         */
    double p_build;  /* the build-time certified limit p_upper    */
    bool unverified; /* p_upper > p_build: the audit cannot       */
                     /* confirm the bound's assumption             */
    bool violated;   /* p_lower > p_build: evidence it broke      */
} amq_audit_level;

typedef struct amq_audit_report {
    uint64_t queries, sampled, members, nonmembers;
    uint64_t false_positives, false_negatives;
    double fpr_hat, fpr_lower, fpr_upper; /* realised, among non-members   */
    double bound_build; /* amq_cascade_fpr_bound at audit creation   */
    double bound_audit; /* the bound recomputed with the audit's      */
                        /* upper limits (needs enough samples)       */
    double drift_chi2;  /* χ² of build vs recent non-member bins     */
    uint32_t drift_df;
    double drift_pvalue;
    double drift_psi; /* population stability index              */
    bool p0_unverified, p0_violated; /* the accepted interval I_0          */
    bool unverified; /* some interval unverified                 */
    bool violated;   /* some interval violated, or the realised  */
                     /* FPR's lower limit above the build bound   */
    size_t nlevels;
} amq_audit_report;

/* The audit keeps a pointer to c, which must outlive its use (sample,
 * record, observe, report) and not be rebuilt under it (another version's
 * cascade gives AMQ_ERR_INCOMPATIBLE in record); amq_audit_free does not
 * read c, so an audit may be freed after its cascade. rate in (0, 1].
 * Errors: AMQ_ERR_INVALID, AMQ_ERR_NOMEM. */
AMQ_API amq_status amq_audit_new(const amq_cascade *c, double rate,
                                 uint64_t seed, const amq_options *opt,
                                 amq_audit **out);
AMQ_API void amq_audit_free(amq_audit *a);
/* Count one query; true if it is to be sampled (then call record). */
AMQ_API bool amq_audit_sample(amq_audit *a);
/* The truth for a sampled query. Errors: AMQ_ERR_INVALID. */
AMQ_API amq_status amq_audit_record(amq_audit *a, const void *key, size_t len,
                                    bool is_member);
/* The report; levels (may be NULL) gets up to cap intervals (as
 * amq_cascade_get_stats orders them). */
AMQ_API void amq_audit_get_report(const amq_audit *a, amq_audit_report *r,
                                  amq_audit_level *levels, size_t cap);

/* ---- shard budgets (end of §4) ------------------------------------------------ */

/* Shard m receives a share w[m] of the non-member queries and needs
 * mem_m(ε) bits to reach bound ε, given as points (eps[j], bits[j]) of its
 * cascade's memory-vs-ε curve (any order; the lower convex hull in
 * (ln ε, bits) is used). Choose eps_out[m] minimising Σ mem_m subject to
 * Σ w_m eps_m <= eps_global (the allocation engine). bits_out[m] (may be
 * NULL) = the interpolated memory. At most AMQ_CASCADE_SHARD_MAX shards.
 * Errors: AMQ_ERR_INVALID (no points, a negative weight, more shards,
 * eps_global out of reach: below Σ w_m min eps_m), AMQ_ERR_NOMEM. */
#define AMQ_CASCADE_SHARD_MAX 256u

typedef struct amq_cascade_shard_curve {
    double weight;      /* w_m >= 0                                      */
    const double *eps;  /* npoints values in (0, 1]                      */
    const double *bits; /* total bits at each                            */
    size_t npoints;
} amq_cascade_shard_curve;

AMQ_API amq_status
amq_cascade_shard_budgets(const amq_cascade_shard_curve *shards, size_t nshards,
                          double eps_global, double *eps_out, double *bits_out);

#ifdef __cplusplus
}
#endif
#endif
