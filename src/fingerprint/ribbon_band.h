/*
 * ribbon_band.h — a template: the two width-dependent steps of building a
 * Ribbon filter, for one band width W. ribbon_build.c includes it once per
 * width, after defining
 *
 *   RB_W     64 or 128: the width, and the suffix of the names defined;
 *   RB_COEF  the coefficient type of that width (uint64_t, rb_u128);
 *
 * and the per-width primitives rb_rows_<W> (the band's coefficient array),
 * rb_ctz_<W> (trailing zeros of a nonzero coefficient) and rb_parity_<W>.
 * Everything else is written once.
 */
#define RB_CAT2(a, b) a##_##b
#define RB_CAT(a, b) RB_CAT2(a, b)
#define RB_FN(name) RB_CAT(name, RB_W)

/* Gaussian elimination of one equation into the band, from row i: while
 * row i is taken, subtract it and move to the equation's new leading
 * coefficient. The row where it lands, or RB_NO_ROW if it reduces to 0 = 0
 * or 0 = 1 (a dependent row: the key cannot be added). */
static inline uint64_t RB_FN(rb_insert)(rb_band *bd, uint64_t i, RB_COEF c,
                                        uint32_t r) {
    RB_COEF *rows = RB_FN(rb_rows)(bd);
    for (;;) {
        RB_COEF cur = rows[i];
        if (cur == 0) {
            rows[i] = c;
            bd->res[i] = r;
            return i;
        }
        c ^= cur;
        r ^= bd->res[i];
        if (c == 0)
            return RB_NO_ROW;
        unsigned tz = RB_FN(rb_ctz)(c);
        i += tz;
        c >>= tz;
    }
}

/* Back-substitution, last row first, of columns [j0, j1) of the
 * right-hand sides' bits from `shift` on (a band may carry two structures'
 * sides: ribbon_build.c, rb_build). Each column is its own recurrence over
 * the rows, so a build may solve disjoint column ranges on different
 * threads and write the same words. state[j] bit k holds column j of row
 * i + 1 + k; after a block's 64 rows its low word is the block's word of
 * column j. Columns a block does not store are solved but dropped. Empty
 * rows get 0. */
static void RB_FN(rb_solve)(const rb_band *bd, const rb_layer *l, uint32_t r,
                            unsigned shift, uint32_t j0, uint32_t j1,
                            uint64_t *sol) {
    const RB_COEF *rows = RB_FN(rb_rows)(bd);
    RB_COEF state[33];
    uint32_t rmax = r + (l->upper > 0);
    if (j1 > rmax)
        j1 = rmax;
    memset(state, 0, sizeof state);
    for (uint64_t b = l->blocks; b-- > 0;) {
        for (unsigned k = 64; k-- > 0;) {
            uint64_t i = b * 64 + k;
            RB_COEF c = rows[i];
            uint32_t res = c != 0 ? bd->res[i] >> shift : 0;
            c >>= 1;
            for (uint32_t j = j0; j < j1; j++) {
                uint64_t bit =
                    ((res >> j) ^ RB_FN(rb_parity)(c & state[j])) & 1;
                state[j] = state[j] << 1 | bit;
            }
        }
        uint64_t *at = sol + rb_offset(l, r, b);
        uint32_t cols = rb_cols(l, r, b);
        for (uint32_t j = j0; j < j1 && j < cols; j++)
            at[j] = (uint64_t)state[j];
    }
}

#undef RB_FN
#undef RB_CAT
#undef RB_CAT2
