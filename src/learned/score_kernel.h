/*
 * score_kernel.h — a template: the scorer of features.c with vector
 * registers, for one instruction set. score_avx2.c and score_avx512.c
 * include it once each, after defining
 *
 *   SK_W          the lanes of a vector (8 or 16 32-bit lanes);
 *   SK_FN         the attributes of every inner function (target,
 *                 always_inline);
 *   SK_ENTRY      the attributes of the entry points (target);
 *   vu, vf, vm    an integer vector, a float vector, a lane mask;
 *   sk_fr         a framed key: sk_fr_init, sk_fr_windows (the 32-bit
 *                 windows of W positions of STX key ETX, zeros past it),
 *                 sk_fr_key (the key's bytes as sk_scan wants them);
 *   sk_scan       amq__shape_scan's counts and token bounds, vectorised;
 *   sk_sum_q      Σ ±q over a list of top words;
 *   sk_index_sign W top words into indices and (float)±1 factors;
 *   sk_signed_w, sk_acc_f, sk_gather_win, sk_window_between and
 *   sk_row_offsets, the steps of float keys side by side;
 *
 * and the arithmetic (sk_set1, sk_setf0, sk_and, sk_add, sk_sub, sk_addf,
 * sk_load, sk_store, sk_storef, sk_mulhi, sk_mullo, sk_gt). Everything
 * else is written once.
 *
 * The hash without 64-bit multiplies. A feature's word is x = v | t << 32
 * (v its low 32 bits, t = n | kind << 8), and the index and sign live in
 * the top 32 bits of x·M1 mod 2^64. With M1 = H·2^32 + L:
 *
 *     x·M1 = v·L + ((v·H + t·L) mod 2^32)·2^32      (mod 2^64)
 *
 * and the second term has no low half, so nothing carries into the top:
 *
 *     hi32(x·M1) = hi32(v·L) + v·H + t·L             (mod 2^32)
 *
 * one widening multiply of the even and of the odd lanes, one low
 * multiply, two adds: the same bits as features.c's mix(), lane by lane.
 *
 * One int8 key (sk_dot_q). Step 1 lists the top words of every feature,
 * n-major:
 *
 *     [ n=1: m | n=2: m-1 | n=3: m-2 | n=4: m-3 | 13 shape | zeros ]
 *
 * (m = len + 2 positions), so the weight loads of step 2 fill whole
 * vectors but the last: a gather costs as much with lanes masked off as
 * with all of them, about 1.4 cycles a lane on the machine measured
 * (docs/cascade.md, "Speed"), and the ~4 (len + 2) + 13 loads are the
 * scorer's floor. The sum of ±q is exact in any order.
 *
 * One float key (sk_dot_f): W positions at a time, first to last, their
 * indices and (float)±1 factors, then the products added one by one in
 * features.c's order — position by position, n = 1..nmax within a
 * position, the 13 shape features last — with plain loads, which run
 * ahead of the chain of adds while the next group is hashed. The chain
 * (3 cycles an add) is the single-key float floor.
 *
 * Float keys side by side (sk_batch_f): lane l scores key l. Step (p, n)
 * hashes the n-gram at position p of every key, gathers the W weights
 * and adds them into lane accumulators, masked to the keys that have it;
 * each lane sees its key's features in the reference order, and W chains
 * of adds run at once. Windows come from one gather of 4 bytes per key
 * every 4 positions (the three between are shifts of two consecutive
 * gathers). A lane idles once its key ends, so the caller groups keys of
 * similar length, and positions every lane has take no masks.
 *
 * The sign is applied as (float)±1 · w, the product the reference forms;
 * it is exact, so it does not matter whether a compiler fuses it into
 * the add.
 */

#define SK_LIST (4 * (AMQ_FEATURE_MAX_BYTES + 2) + AMQ__FEAT_SHAPE + 2 * SK_W)
#define SK_ROW_PAD 32 /* zero bytes after a row's ETX                  */
#define SK_ROW 320    /* a framed key of at most 256 bytes and its pad */

#define SK_M1_LO ((uint32_t)AMQ__FEAT_M1)
#define SK_M1_HI ((uint32_t)(AMQ__FEAT_M1 >> 32))

/* t·L mod 2^32 for the n-gram tag t = n | KIND_NGRAM << 8. */
SK_FN uint32_t sk_tag(unsigned n) {
    return (uint32_t)((n | AMQ__FEAT_KIND_NGRAM << 8) * SK_M1_LO);
}

/* The n low bytes of each window. */
SK_FN vu sk_bytes(vu win, unsigned n) {
    return n == 4 ? win : sk_and(win, sk_set1((1u << (8 * n)) - 1));
}

SK_FN vu sk_hash(vu x, uint32_t tag) {
    return sk_add(sk_add(sk_mulhi(x, SK_M1_LO), sk_mullo(x, SK_M1_HI)),
                  sk_set1(tag));
}

/* Index and sign of a 64-bit shape hash (features.c's emit). */
SK_FN uint32_t sk_index(uint64_t h, unsigned bits) {
    return (uint32_t)(h >> (64 - bits));
}
SK_FN int sk_sign(uint64_t h, unsigned bits) {
    return (int)((h >> (63 - bits)) & 1) * 2 - 1;
}

/* ---- one key -------------------------------------------------------------- */

/* N-grams of each n (0 past nmax) in a frame of m positions. */
SK_FN void sk_counts(const amq_feature_config *cfg, size_t m, size_t cnt[4]) {
    for (unsigned n = 1; n <= 4; n++)
        cnt[n - 1] = n <= cfg->ngram_max && m >= n ? m - n + 1 : 0;
}

/* Step 1: the list (see the top); returns its length. Each group of W
 * positions is framed once for every n; groups go from the last to the
 * first, so the lanes a group stores past the end of n's run are
 * overwritten by n + 1's first group, which comes later. */
SK_FN size_t sk_list(const amq_feature_config *cfg, const uint8_t *key,
                     size_t len, uint32_t *hi, size_t cnt[4]) {
    sk_fr f;
    size_t m = len + 2, off[4], at = 0;
    sk_fr_init(&f, key, len);
    sk_counts(cfg, m, cnt);
    for (unsigned n = 0; n < 4; n++) {
        off[n] = at;
        at += cnt[n];
    }
    for (size_t g = (m - 1) / SK_W + 1; g-- > 0;) {
        size_t i = g * SK_W;
        vu win = sk_fr_windows(&f, i);
        for (unsigned n = 1; n <= 4 && i < cnt[n - 1]; n++)
            sk_store(hi + off[n - 1] + i, sk_hash(sk_bytes(win, n), sk_tag(n)));
    }
    amq__key_shape s;
    uint64_t h[AMQ__FEAT_SHAPE];
    sk_scan(sk_fr_key(&f), len, &s);
    amq__shape_hashes(&s, key, h);
    for (unsigned j = 0; j < AMQ__FEAT_SHAPE; j++)
        hi[at + j] = (uint32_t)(h[j] >> 32);
    sk_store(hi + at + AMQ__FEAT_SHAPE, sk_set1(0));
    return at + AMQ__FEAT_SHAPE;
}

SK_ENTRY int32_t sk_dot_q(const amq_feature_config *cfg, const uint8_t *key,
                          size_t len, const int8_t *q) {
    uint32_t hi[SK_LIST];
    size_t cnt[4];
    if (len > AMQ_FEATURE_MAX_BYTES)
        len = AMQ_FEATURE_MAX_BYTES;
    size_t total = sk_list(cfg, key, len, hi, cnt);
    return sk_sum_q(hi, total, cfg->dim_bits, q);
}

/* Float: W positions at a time, first to last; each group's indices and
 * (float)±1 factors are stored per n, then its products added in the
 * reference order with plain loads, so the next group's hashing runs
 * while this group's chain of adds does. */
SK_ENTRY float sk_dot_f(const amq_feature_config *cfg, const uint8_t *key,
                        size_t len, const float *w) {
    uint32_t idx[4][SK_W], sh_idx[AMQ__FEAT_SHAPE];
    float one[4][SK_W], sh_one[AMQ__FEAT_SHAPE];
    if (len > AMQ_FEATURE_MAX_BYTES)
        len = AMQ_FEATURE_MAX_BYTES;
    unsigned bits = cfg->dim_bits, nmax = cfg->ngram_max;
    sk_fr f;
    sk_fr_init(&f, key, len);
    amq__key_shape s;
    uint64_t h[AMQ__FEAT_SHAPE];
    sk_scan(sk_fr_key(&f), len, &s);
    amq__shape_hashes(&s, key, h);
    for (unsigned j = 0; j < AMQ__FEAT_SHAPE; j++) {
        sh_idx[j] = sk_index(h[j], bits);
        sh_one[j] = (float)sk_sign(h[j], bits);
    }
    size_t m = len + 2;
    float acc = 0.0f;
    for (size_t i = 0; i < m; i += SK_W) {
        vu win = sk_fr_windows(&f, i);
        for (unsigned n = 1; n <= nmax; n++) {
            sk_store(idx[n - 1], sk_hash(sk_bytes(win, n), sk_tag(n)));
            sk_index_sign(idx[n - 1], one[n - 1], bits);
        }
        size_t end = m - i < SK_W ? m - i : SK_W, j = 0;
        if (nmax == 4)
            for (; j < end && i + j + 4 <= m; j++) {
                float t0 = one[0][j] * w[idx[0][j]];
                float t1 = one[1][j] * w[idx[1][j]];
                float t2 = one[2][j] * w[idx[2][j]];
                float t3 = one[3][j] * w[idx[3][j]];
                acc += t0;
                acc += t1;
                acc += t2;
                acc += t3;
            }
        for (; j < end; j++)
            for (size_t n = 0; n < nmax && n < m - (i + j); n++) {
                float t = one[n][j] * w[idx[n][j]];
                acc += t;
            }
    }
    for (unsigned j = 0; j < AMQ__FEAT_SHAPE; j++) {
        float t = sh_one[j] * w[sh_idx[j]];
        acc += t;
    }
    return acc;
}

/* ---- float keys side by side, one per lane ------------------------------------ */

typedef struct sk_batch {
    uint8_t rows[SK_W][SK_ROW]; /* framed keys and SK_ROW_PAD zeros        */
    uint32_t m[SK_W];           /* frame lengths (0: no key in the lane)    */
    size_t len[SK_W];           /* key lengths, clamped                     */
    uint32_t mmin, mmax;        /* over the lanes holding a key             */
} sk_batch;

SK_FN void sk_batch_frame(sk_batch *b, const uint8_t *const *key,
                          const size_t *len, size_t n) {
    b->mmin = UINT32_MAX;
    b->mmax = 0;
    for (size_t l = 0; l < SK_W; l++) {
        b->m[l] = 0;
        if (l >= n)
            continue;
        size_t k =
            len[l] < AMQ_FEATURE_MAX_BYTES ? len[l] : AMQ_FEATURE_MAX_BYTES;
        uint8_t *r = b->rows[l];
        b->len[l] = k;
        r[0] = AMQ__FEAT_STX;
        if (k > 0)
            memcpy(r + 1, key[l], k);
        r[k + 1] = AMQ__FEAT_ETX;
        memset(r + k + 2, 0, SK_ROW_PAD);
        b->m[l] = (uint32_t)(k + 2);
        b->mmin = b->m[l] < b->mmin ? b->m[l] : b->mmin;
        b->mmax = b->m[l] > b->mmax ? b->m[l] : b->mmax;
    }
}

/* The n-grams at position p of every lane: below mmin - nmax + 1 every
 * lane has all nmax of them, so no mask is needed there. */
SK_FN vf sk_batch_position(vf acc, vu win, vu mv, uint32_t p, uint32_t mmin,
                           unsigned nmax, const float *w, unsigned bits) {
    if (p + nmax <= mmin) {
        for (unsigned n = 1; n <= nmax; n++)
            acc = sk_addf(
                acc,
                sk_signed_w(w, sk_hash(sk_bytes(win, n), sk_tag(n)), bits));
        return acc;
    }
    vu left = sk_sub(mv, sk_set1(p));
    for (unsigned n = 1; n <= nmax; n++)
        acc = sk_acc_f(
            acc, sk_signed_w(w, sk_hash(sk_bytes(win, n), sk_tag(n)), bits),
            sk_gt(left, n - 1));
    return acc;
}

/* n <= SK_W keys. */
SK_ENTRY void sk_batch_f(const amq_feature_config *cfg,
                         const uint8_t *const *key, const size_t *len, size_t n,
                         const float *w, float *out) {
    sk_batch b;
    float lane[SK_W];
    unsigned bits = cfg->dim_bits, nmax = cfg->ngram_max;
    sk_batch_frame(&b, key, len, n);
    vf acc = sk_setf0();
    vu mv = sk_load(b.m), offs = sk_row_offsets(SK_ROW);
    vu g0 = sk_gather_win(b.rows[0], offs, sk_gt(mv, 0));
    for (uint32_t i = 0; i < b.mmax; i += 4) {
        vu g4 = sk_gather_win(b.rows[0], sk_add(offs, sk_set1(i + 4)),
                              sk_gt(mv, i + 4));
        for (uint32_t s = 0; s < 4 && i + s < b.mmax; s++)
            acc = sk_batch_position(acc, sk_window_between(g0, g4, s), mv,
                                    i + s, b.mmin, nmax, w, bits);
        g0 = g4;
    }
    sk_storef(lane, acc);
    for (size_t l = 0; l < n; l++) {
        amq__key_shape sh;
        uint64_t h[AMQ__FEAT_SHAPE];
        sk_scan(b.rows[l] + 1, b.len[l], &sh);
        amq__shape_hashes(&sh, key[l], h);
        float a = lane[l];
        for (unsigned j = 0; j < AMQ__FEAT_SHAPE; j++) {
            float t = (float)sk_sign(h[j], bits) * w[sk_index(h[j], bits)];
            a += t;
        }
        out[l] = a;
    }
}
