/*
 * kvline.c — one line of `amq map` input, "key<TAB>value" (parse.h).
 *
 * The key is every byte before the first tab, spaces included; the rest
 * is the value: a decimal number that fits v bits, or, for a set (op or),
 * a comma list of ids 0..v-1 turned into a bit mask. Nothing is trimmed
 * but a final '\r', so a value with stray spaces or a second tab is an
 * error rather than a silent zero.
 */
#include <stdio.h>
#include <string.h>

#include "parse.h"

static bool kv_fail(char *err, size_t at, const char *msg) {
    snprintf(err, PARSE_ERR_MAX, "byte %zu: %s", at + 1, msg);
    return false;
}

/* A decimal number in s[0..n): false if empty, not all digits, or past
 * 2^64 - 1. */
static bool decimal(const char *s, size_t n, uint64_t *out, size_t *bad) {
    uint64_t v = 0;
    *bad = 0;
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned d = (unsigned char)s[i] - '0';
        if (d > 9 || __builtin_mul_overflow(v, 10, &v) ||
            __builtin_add_overflow(v, d, &v)) {
            *bad = i;
            return false;
        }
    }
    *out = v;
    return true;
}

/* "3,17,5" -> bit mask; ids below vbits, each once. */
static bool id_list(const char *s, size_t n, size_t base, unsigned vbits,
                    uint64_t *out, char *err) {
    uint64_t mask = 0;
    size_t i = 0;
    char msg[96];
    while (i < n) {
        size_t j = i, bad;
        uint64_t id;
        while (j < n && s[j] != ',')
            j++;
        if (!decimal(s + i, j - i, &id, &bad))
            return kv_fail(err, base + i + bad,
                           "an id list wants decimal "
                           "ids separated by commas");
        if (id >= vbits) {
            snprintf(msg, sizeof msg,
                     "id %llu: ids must be below %u (the "
                     "value bits)",
                     (unsigned long long)id, vbits);
            return kv_fail(err, base + i, msg);
        }
        if (mask & (1ULL << id)) {
            snprintf(msg, sizeof msg, "id %llu given twice",
                     (unsigned long long)id);
            return kv_fail(err, base + i, msg);
        }
        mask |= 1ULL << id;
        if (j == n - 1) /* a trailing comma */
            return kv_fail(err, base + j, "empty id after ','");
        i = j + 1;
    }
    *out = mask;
    return true;
}

bool kvline_parse(const char *line, size_t len, bool ids, unsigned vbits,
                  kvline *out, char err[PARSE_ERR_MAX]) {
    const char *tab = memchr(line, '\t', len);
    if (len > 0 && line[len - 1] == '\r')
        len--;
    if (tab == NULL || (size_t)(tab - line) >= len)
        return kv_fail(err, len, "expected key<TAB>value");
    size_t at = (size_t)(tab - line) + 1, bad;
    const char *v = line + at;
    size_t n = len - at;
    out->key = line;
    out->key_len = at - 1;
    if (ids)
        return id_list(v, n, at, vbits, &out->value, err);
    if (!decimal(v, n, &out->value, &bad))
        return kv_fail(err, at + bad,
                       n == 0 ? "empty value"
                              : "the value is not a decimal "
                                "number below 2^64");
    if (vbits < 64 && out->value >> vbits != 0) {
        char msg[96];
        snprintf(msg, sizeof msg, "value %llu is wider than %u bits",
                 (unsigned long long)out->value, vbits);
        return kv_fail(err, at, msg);
    }
    return true;
}
