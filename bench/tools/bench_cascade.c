/*
 * bench_cascade.c — `amq_bench_cascade`: how fast the cascade's scorer and
 * the whole cascade answer, against a plain split-block Bloom filter
 * measured in the same run (a speed claim is a ratio to a baseline).
 *
 *   build/bench/amq_bench_cascade [N]        (default N = 200000 keys)
 *
 * Keys are "tenant/table/row" strings of 20-40 bytes. Rows: the scorer
 * (one key at a time and batch; float32 and int8 weights; 2^14, 2^16,
 * 2^18 dimensions; the widest vector kernels the machine has; int8 with
 * n-grams up to 1, the cost of the features that are not n-grams), the
 * cascade's query end to end (batch and one key at a time), the same
 * query given the score (hash, bin and residual lookup: what end to end
 * adds to scoring), the cascade under a 5% worst-case cap (its front
 * filter answers most absent keys before the scorer runs), and sbbf's
 * hash + lookup per key. Each figure is the
 * best of 5 repetitions (ns of thread CPU time per key).
 * Uses only the public headers.
 */
#include <amq/amq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Thread CPU time: the machine is shared, and wall time counts the turns
 * other processes take (the ratio to sbbf is the figure that travels). */
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct keyset {
    amq_keys k;
    uint8_t *bytes;
    uint64_t *off;
} keyset;

/* Keys of 20-40 bytes; member when the table number is even and the row
 * hash says so (learnable structure, some noise). */
static void make_keys(size_t n, uint64_t seed, int member, keyset *ks) {
    ks->bytes = malloc(n * 48);
    ks->off = malloc((n + 1) * sizeof *ks->off);
    ks->off[0] = 0;
    size_t i = 0;
    while (i < n) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        unsigned t = (unsigned)(seed >> 33) % 500,
                 tb = (unsigned)(seed >> 20) % 16;
        unsigned long long row = (seed >> 3) % 10000000000ULL;
        int is_member = (tb % 2 == 0) && ((row * 2654435761ULL) >> 7) % 10 < 8;
        if (is_member != member)
            continue;
        int len = snprintf((char *)ks->bytes + ks->off[i], 48,
                           "tenant%03u/table%02u/row%llu", t, tb, row);
        ks->off[i + 1] = ks->off[i] + (uint64_t)len;
        i++;
    }
    ks->k = (amq_keys){ks->bytes, ks->off, n};
}

static double best_of(double (*f)(void *), void *ctx) {
    double best = 1e30;
    for (int r = 0; r < 5; r++) {
        double t = f(ctx);
        best = t < best ? t : best;
    }
    return best;
}

typedef struct ctx {
    const amq_model *m;
    const amq_cascade *c;
    const amq_filter *f;
    const amq_keys *k;
    double *z;
    uint8_t *out;
    amq_score *s; /* the cascade's scores of k, for run_routing */
} ctx;

static double run_scalar(void *p) {
    ctx *x = p;
    double t0 = now();
    for (size_t i = 0; i < x->k->n; i++)
        x->z[i] =
            amq_model_score(x->m, x->k->bytes + x->k->offsets[i],
                            (size_t)(x->k->offsets[i + 1] - x->k->offsets[i]));
    return (now() - t0) * 1e9 / (double)x->k->n;
}

static double run_batch(void *p) {
    ctx *x = p;
    double t0 = now();
    amq_model_score_batch(x->m, x->k, x->z);
    return (now() - t0) * 1e9 / (double)x->k->n;
}

static double run_cascade(void *p) {
    ctx *x = p;
    double t0 = now();
    amq_cascade_contains_batch(x->c, x->k, x->out);
    return (now() - t0) * 1e9 / (double)x->k->n;
}

static double run_cascade_one(void *p) {
    ctx *x = p;
    double t0 = now();
    for (size_t i = 0; i < x->k->n; i++)
        x->out[i] = amq_cascade_contains(
            x->c, x->k->bytes + x->k->offsets[i],
            (size_t)(x->k->offsets[i + 1] - x->k->offsets[i]));
    return (now() - t0) * 1e9 / (double)x->k->n;
}

static double run_routing(void *p) {
    ctx *x = p;
    double t0 = now();
    for (size_t i = 0; i < x->k->n; i++) {
        bool in = false;
        (void)amq_cascade_contains_scored(
            x->c, x->k->bytes + x->k->offsets[i],
            (size_t)(x->k->offsets[i + 1] - x->k->offsets[i]), &x->s[i], &in);
        x->out[i] = in;
    }
    return (now() - t0) * 1e9 / (double)x->k->n;
}

static double run_sbbf(void *p) {
    ctx *x = p;
    double t0 = now();
    for (size_t i = 0; i < x->k->n; i++)
        x->out[i] = amq_filter_contains(
            x->f, x->k->bytes + x->k->offsets[i],
            (size_t)(x->k->offsets[i + 1] - x->k->offsets[i]));
    return (now() - t0) * 1e9 / (double)x->k->n;
}

int main(int argc, char **argv) {
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 200000;
    keyset m, q;
    make_keys(n, 1, 1, &m);
    make_keys(4 * n, 2, 0, &q);
    ctx x = {
        .k = &q.k, .z = malloc(4 * n * sizeof(double)), .out = malloc(4 * n)};
    amq_filter *f = NULL;
    if (amq_filter_new("sbbf", n, 0.01, NULL, &f, NULL) != AMQ_OK)
        return 1;
    for (size_t i = 0; i < n; i++)
        amq_filter_add(f, m.bytes + m.off[i],
                       (size_t)(m.off[i + 1] - m.off[i]));
    x.f = f;
    double base = best_of(run_sbbf, &x);
    printf("keys: %zu members, %zu queries of %.1f bytes on average\n\n", n,
           q.k.n, (double)q.off[q.k.n] / (double)q.k.n);
    printf("| subject | ns/key | vs sbbf query |\n|---|---:|---:|\n");
    printf("| sbbf hash + query (baseline) | %.1f | 1.00 |\n", base);
    const unsigned dims[3] = {14, 16, 18};
    for (int quant = 1; quant >= 0; quant--)
        for (int d = 0; d < 3; d++) {
            amq_model_config mc = {0};
            mc.features.dim_bits = dims[d];
            mc.quantize = quant;
            mc.epochs = 1;
            amq_model *mod = NULL;
            if (amq_model_train(&m.k, &q.k, NULL, NULL, &mc, NULL, &mod) !=
                AMQ_OK)
                return 1;
            x.m = mod;
            double s = best_of(run_scalar, &x), b = best_of(run_batch, &x);
            printf("| score %s 2^%u one key | %.1f | %.2f |\n",
                   quant ? "int8" : "float", dims[d], s, s / base);
            printf("| score %s 2^%u batch | %.1f | %.2f |\n",
                   quant ? "int8" : "float", dims[d], b, b / base);
            amq_model_free(mod);
        }
    { /* n-grams up to 1: what the shape features and framing cost */
        amq_model_config mc = {0};
        mc.features.dim_bits = 14;
        mc.features.ngram_max = 1;
        mc.quantize = 1;
        mc.epochs = 1;
        amq_model *mod = NULL;
        if (amq_model_train(&m.k, &q.k, NULL, NULL, &mc, NULL, &mod) != AMQ_OK)
            return 1;
        x.m = mod;
        double b = best_of(run_batch, &x);
        printf("| score int8 2^14 batch, n-grams up to 1 | %.1f | %.2f |\n", b,
               b / base);
        amq_model_free(mod);
    }
    amq_cascade_config cfg;
    amq_cascade_config_init(&cfg);
    cfg.fpr = 0.01;
    cfg.model.quantize = true;
    cfg.model.features.dim_bits = 14;
    cfg.choose = 0; /* this model, not training's choice */
    amq_cascade *c = NULL;
    if (amq_cascade_train(&m.k, &q.k, &cfg, NULL, &c, NULL) != AMQ_OK)
        return 1;
    x.c = c;
    x.s = malloc(q.k.n * sizeof *x.s);
    for (size_t i = 0; i < q.k.n; i++)
        x.s[i] = amq_cascade_score(c, q.bytes + q.off[i],
                                   (size_t)(q.off[i + 1] - q.off[i]));
    double e = best_of(run_cascade, &x), e1 = best_of(run_cascade_one, &x);
    double r = best_of(run_routing, &x);
    printf("| cascade query end to end (int8 2^14, batch) | %.1f | %.2f |\n", e,
           e / base);
    printf("| cascade query end to end (int8 2^14, one key) | %.1f | %.2f |\n",
           e1, e1 / base);
    printf("| cascade query given the score (hash, bin, residual) | %.1f | "
           "%.2f |\n",
           r, r / base);
    /* The same cascade under a worst-case cap of 5%: a front filter over
     * every member turns most absent keys away before they are scored. */
    amq_cascade_stats plain_st, cap_st;
    amq_cascade_get_stats(c, &plain_st, NULL, 0, NULL);
    cfg.worst_case = 0.05;
    amq_cascade *cc = NULL;
    if (amq_cascade_train(&m.k, &q.k, &cfg, NULL, &cc, NULL) != AMQ_OK)
        return 1;
    amq_cascade_get_stats(cc, &cap_st, NULL, 0, NULL);
    x.c = cc;
    double w = best_of(run_cascade, &x), w1 = best_of(run_cascade_one, &x);
    printf("| cascade with a 5%% worst-case cap, end to end (batch) | %.1f | "
           "%.2f |\n",
           w, w / base);
    printf("| cascade with a 5%% worst-case cap, end to end (one key) | %.1f | "
           "%.2f |\n",
           w1, w1 / base);
    printf("\nbits/key: cascade %.2f, with the cap %.2f (front filter "
           "%.2f)\n",
           plain_st.bits_per_key, cap_st.bits_per_key,
           8.0 * (double)cap_st.front_bytes / (double)cap_st.members);
    amq_cascade_free(cc);
    amq_cascade_free(c);
    amq_filter_free(f);
    free(x.z);
    free(x.out);
    free(x.s);
    free(m.bytes), free(m.off), free(q.bytes), free(q.off);
    return 0;
}
