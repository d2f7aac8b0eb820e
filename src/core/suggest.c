/*
 * suggest.c — the nearest name to a misspelt one, for the "did you mean"
 * of every message about an unknown type, parameter, command or option.
 *
 * Distance: optimal string alignment (Levenshtein with the swap of two
 * neighbouring letters as one edit: "buidl" is one edit from "build"),
 * over bytes, case-insensitive. Names are short (under 64 bytes), so three
 * rows of a fixed array suffice; a longer word matches nothing.
 */
#include <ctype.h>
#include <stdint.h>
#include <string.h>

#include "amq/status.h"

#define SUGGEST_MAX 64

static unsigned char fold(char c) {
    return (unsigned char)tolower((unsigned char)c);
}

static size_t min3(size_t a, size_t b, size_t c) {
    size_t m = a < b ? a : b;
    return m < c ? m : c;
}

/* Edit distance of a[0..la) and b[0..lb), both below SUGGEST_MAX. */
static size_t distance(const char *a, size_t la, const char *b, size_t lb) {
    size_t rows[3][SUGGEST_MAX + 1];
    size_t *two = rows[0], *one = rows[1], *cur = rows[2];
    for (size_t j = 0; j <= lb; j++)
        one[j] = j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = fold(a[i - 1]) != fold(b[j - 1]);
            cur[j] = min3(one[j] + 1, cur[j - 1] + 1, one[j - 1] + cost);
            if (i > 1 && j > 1 && fold(a[i - 1]) == fold(b[j - 2]) &&
                fold(a[i - 2]) == fold(b[j - 1]) && two[j - 2] + 1 < cur[j])
                cur[j] = two[j - 2] + 1;
        }
        size_t *t = two;
        two = one;
        one = cur;
        cur = t;
    }
    return one[lb];
}

const char *amq_suggest(const char *word, const char *const *words, size_t n) {
    const char *best = NULL;
    size_t best_d = SIZE_MAX, lw = word != NULL ? strlen(word) : 0;
    if (word == NULL || words == NULL || lw == 0 || lw >= SUGGEST_MAX)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (words[i] == NULL)
            continue;
        size_t lc = strlen(words[i]);
        if (lc >= SUGGEST_MAX)
            continue;
        size_t d = distance(word, lw, words[i], lc);
        size_t limit = lc / 3 > 1 ? lc / 3 : 1;
        if (d <= limit && d < best_d) {
            best = words[i];
            best_d = d;
        }
    }
    return best;
}
