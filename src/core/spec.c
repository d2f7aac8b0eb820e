/*
 * spec.c — the NAME[:key=value,...] parser behind amq_filter_new.
 *
 *   "cuckoo:fp=12,bucket=4"
 *    ^name  ^key ^val
 *
 * Strict by design: a typo in a parameter must be an error, not a silently
 * ignored key that gives the user a different filter than they asked for.
 */
#include "core/spec.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool ident_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

static bool value_char(char c) {
    return c > ' ' && c < 127 && c != ',' && c != ':' && c != '=';
}

/* Copy the run of chars accepted by ok() at s[*i] into dst (cap bytes).
 * Returns the run length, or (size_t)-1 if it does not fit. */
static size_t take(const char *s, size_t *i, bool (*ok)(char), char *dst,
                   size_t cap) {
    size_t n = 0;
    while (ok(s[*i + n]))
        n++;
    if (n >= cap)
        return (size_t)-1;
    memcpy(dst, s + *i, n);
    dst[n] = '\0';
    *i += n;
    return n;
}

static amq_status parse_kv(const char *s, size_t *i, amq__spec *out,
                           amq_diag *diag) {
    amq__spec_kv *kv;
    size_t start = *i, n;
    if (out->nkv == AMQ__SPEC_MAX_KV)
        return amq__diag(diag, AMQ_ERR_SPEC, start, "too many parameters");
    kv = &out->kv[out->nkv];
    memset(kv, 0, sizeof *kv);
    kv->offset = start;
    n = take(s, i, ident_char, kv->key, sizeof kv->key);
    if (n == 0 || n == (size_t)-1)
        return amq__diag(diag, AMQ_ERR_SPEC, start,
                         n ? "parameter name too long"
                           : "expected a parameter name [a-z0-9_]");
    if (s[*i] != '=')
        return amq__diag(diag, AMQ_ERR_SPEC, *i, "expected '=' after '%s'",
                         kv->key);
    (*i)++;
    n = take(s, i, value_char, kv->val, sizeof kv->val);
    if (n == 0 || n == (size_t)-1)
        return amq__diag(
            diag, AMQ_ERR_SPEC, *i,
            n ? "value of '%s' too long" : "missing value for '%s'", kv->key);
    for (size_t j = 0; j < out->nkv; j++)
        if (strcmp(out->kv[j].key, kv->key) == 0)
            return amq__diag(diag, AMQ_ERR_SPEC, start,
                             "parameter '%s' given twice", kv->key);
    out->nkv++;
    return AMQ_OK;
}

amq_status amq__spec_parse(const char *s, amq__spec *out, amq_diag *diag) {
    size_t i = 0, n;
    memset(out, 0, sizeof *out);
    if (s == NULL)
        return amq__diag(diag, AMQ_ERR_SPEC, 0, "no spec given");
    n = take(s, &i, ident_char, out->name, sizeof out->name);
    if (n == 0 || n == (size_t)-1)
        return amq__diag(diag, AMQ_ERR_SPEC, 0,
                         n ? "structure name too long"
                           : "expected a structure name [a-z0-9_]");
    if (s[i] == '\0')
        return AMQ_OK;
    if (s[i] != ':')
        return amq__diag(diag, AMQ_ERR_SPEC, i,
                         "unexpected character '%c' after the name", s[i]);
    i++;
    for (;;) {
        AMQ_RETURN_IF_ERR(parse_kv(s, &i, out, diag));
        if (s[i] == '\0')
            return AMQ_OK;
        if (s[i] != ',')
            return amq__diag(diag, AMQ_ERR_SPEC, i,
                             "expected ',' or end of spec");
        i++;
    }
}

static amq__spec_kv *find(amq__spec *s, const char *key) {
    for (size_t i = 0; i < s->nkv; i++)
        if (strcmp(s->kv[i].key, key) == 0) {
            s->kv[i].used = true;
            return &s->kv[i];
        }
    return NULL;
}

amq_status amq__spec_u64(amq__spec *s, const char *key, uint64_t lo,
                         uint64_t hi, uint64_t *out, bool *found,
                         amq_diag *diag) {
    amq__spec_kv *kv = find(s, key);
    char *end;
    unsigned long long v;
    if (found != NULL)
        *found = kv != NULL;
    if (kv == NULL)
        return AMQ_OK;
    errno = 0;
    v = strtoull(kv->val, &end, 10);
    if (kv->val[0] < '0' || kv->val[0] > '9' || *end != '\0' || errno != 0)
        return amq__diag(diag, AMQ_ERR_SPEC, kv->offset,
                         "'%s' wants an unsigned integer, got '%s'", key,
                         kv->val);
    if (v < lo || v > hi)
        return amq__diag(diag, AMQ_ERR_SPEC, kv->offset,
                         "'%s' must be in [%llu, %llu], got %llu", key,
                         (unsigned long long)lo, (unsigned long long)hi, v);
    *out = v;
    return AMQ_OK;
}

amq_status amq__spec_f64(amq__spec *s, const char *key, double lo, double hi,
                         double *out, bool *found, amq_diag *diag) {
    amq__spec_kv *kv = find(s, key);
    char *end;
    double v;
    if (found != NULL)
        *found = kv != NULL;
    if (kv == NULL)
        return AMQ_OK;
    errno = 0;
    v = strtod(kv->val, &end);
    if (*end != '\0' || errno != 0 || !isfinite(v))
        return amq__diag(diag, AMQ_ERR_SPEC, kv->offset,
                         "'%s' wants a number, got '%s'", key, kv->val);
    if (v < lo || v > hi)
        return amq__diag(diag, AMQ_ERR_SPEC, kv->offset,
                         "'%s' must be in [%g, %g], got %g", key, lo, hi, v);
    *out = v;
    return AMQ_OK;
}

amq_status amq__spec_word(amq__spec *s, const char *key,
                          const char *const *words, unsigned *out,
                          amq_diag *diag) {
    amq__spec_kv *kv = find(s, key);
    char list[128] = "";
    size_t len = 0;
    if (kv == NULL)
        return AMQ_OK;
    for (unsigned i = 0; words[i] != NULL; i++) {
        if (strcmp(kv->val, words[i]) == 0) {
            *out = i;
            return AMQ_OK;
        }
        len += (size_t)snprintf(list + len,
                                len < sizeof list ? sizeof list - len : 0,
                                "%s%s", i ? " or " : "", words[i]);
    }
    return amq__diag(diag, AMQ_ERR_SPEC, kv->offset,
                     "'%s' must be %s, got '%s'", key, list, kv->val);
}

const char *amq_real_text(double v, char out[AMQ_REAL_TEXT_MAX]) {
    /* A whole number below 2^53 as its digits (20000, not 2e+04). */
    if (v == floor(v) && fabs(v) < 9007199254740992.0) {
        snprintf(out, AMQ_REAL_TEXT_MAX, "%.0f", v);
        return out;
    }
    /* %.17g always reads back; the first shorter precision that does is
     * the shortest form. */
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(out, AMQ_REAL_TEXT_MAX, "%.*g", prec, v);
        if (strtod(out, NULL) == v || v != v)
            break;
    }
    return out;
}

/* The parameter names of a type's "key=meaning (...), key=..." text, into
 * names[0..cap): the identifiers before '=' at the start and after ", "
 * outside parentheses. */
static size_t known_keys(const char *params, char names[][AMQ__SPEC_KEY_MAX],
                         size_t cap) {
    size_t n = 0, depth = 0;
    bool at_start = true;
    for (const char *p = params; p != NULL && *p != '\0' && n < cap; p++) {
        if (*p == '(')
            depth++;
        else if (*p == ')' && depth > 0)
            depth--;
        if (at_start && ident_char(*p)) {
            size_t len = strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789_");
            if (p[len] == '=' && len < AMQ__SPEC_KEY_MAX) {
                memcpy(names[n], p, len);
                names[n++][len] = '\0';
            }
        }
        at_start = depth == 0 && (*p == ',' || (at_start && *p == ' '));
    }
    return n;
}

amq_status amq__spec_finish(const amq__spec *s, const char *params,
                            amq_diag *diag) {
    char names[AMQ__SPEC_MAX_KV * 2][AMQ__SPEC_KEY_MAX];
    const char *words[AMQ__SPEC_MAX_KV * 2];
    for (size_t i = 0; i < s->nkv; i++) {
        if (s->kv[i].used)
            continue;
        size_t n = known_keys(params, names, AMQ__SPEC_MAX_KV * 2);
        for (size_t j = 0; j < n; j++)
            words[j] = names[j];
        const char *near = amq_suggest(s->kv[i].key, words, n);
        if (near != NULL)
            return amq__diag(diag, AMQ_ERR_SPEC, s->kv[i].offset,
                             "unknown parameter '%s' for '%s' (did you "
                             "mean '%s'?)",
                             s->kv[i].key, s->name, near);
        return amq__diag(diag, AMQ_ERR_SPEC, s->kv[i].offset,
                         "unknown parameter '%s' for '%s'", s->kv[i].key,
                         s->name);
    }
    return AMQ_OK;
}
