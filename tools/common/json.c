/*
 * json.c — the one JSON writer behind every `--json` of the tools.
 *
 * A writer keeps a stack of open containers and whether each needs a
 * comma before its next member, so the callers name fields and never
 * punctuation. Numbers are written in their shortest exact form
 * (amq_real_text), a number that is not finite as null; strings are
 * escaped, and bytes that are not valid UTF-8 are written as \u00XX (the
 * byte's Latin-1 character), so any key prints as valid JSON.
 *
 * Compact mode writes a document on one line (JSON Lines for streams of
 * records); pretty mode puts each member of an object on its own line,
 * indented by two spaces a level. Closing the outermost container ends
 * the line.
 */
#include <math.h>
#include <string.h>

#include "cli.h"

void cli_json_number(FILE *out, double v) {
    char buf[AMQ_REAL_TEXT_MAX];
    fputs(isfinite(v) ? amq_real_text(v, buf) : "null", out);
}

/* Length of the valid UTF-8 sequence at p (1-4), or 0 if there is none. */
static size_t utf8_len(const unsigned char *p, size_t n) {
    unsigned c = p[0];
    size_t len = c < 0x80                ? 1
                 : c >= 0xc2 && c < 0xe0 ? 2
                 : c >= 0xe0 && c < 0xf0 ? 3
                 : c >= 0xf0 && c < 0xf5 ? 4
                                         : 0;
    if (len == 0 || len > n)
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    /* overlong 3- and 4-byte forms, surrogates, above U+10FFFF */
    if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] >= 0xa0) ||
        (c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] >= 0x90))
        return 0;
    return len;
}

void cli_json_bytes(FILE *out, const void *bytes, size_t n) {
    const unsigned char *p = bytes;
    fputc('"', out);
    for (size_t i = 0; i < n;) {
        unsigned c = p[i];
        size_t len = utf8_len(p + i, n - i);
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", out);
        else if (c == '\t')
            fputs("\\t", out);
        else if (c < 0x20 || c == 0x7f || len == 0)
            fprintf(out, "\\u%04x", c);
        else
            fwrite(p + i, 1, len, out);
        i += len ? len : 1;
    }
    fputc('"', out);
}

void cli_json_string(FILE *out, const char *s) {
    cli_json_bytes(out, s ? s : "", s ? strlen(s) : 0);
}

/* ---- the writer ------------------------------------------------------------ */

void cli_json_init(cli_json *j, FILE *out, bool pretty) {
    memset(j, 0, sizeof *j);
    j->out = out;
    j->pretty = pretty;
}

static void indent(cli_json *j) {
    fputc('\n', j->out);
    for (int i = 0; i < j->depth; i++)
        fputs("  ", j->out);
}

/* The comma, line break and key before a member (key NULL: an array
 * element or the document itself). */
static void member(cli_json *j, const char *key) {
    if (j->depth > 0) {
        if (j->comma[j->depth - 1])
            fputc(',', j->out);
        j->comma[j->depth - 1] = true;
        if (j->pretty && j->kind[j->depth - 1] == '{')
            indent(j);
    }
    if (key != NULL) {
        cli_json_string(j->out, key);
        fputs(j->pretty ? ": " : ":", j->out);
    }
}

void cli_json_open(cli_json *j, const char *key, char bracket) {
    member(j, key);
    fputc(bracket, j->out);
    if (j->depth < CLI_JSON_DEPTH) {
        j->kind[j->depth] = bracket;
        j->comma[j->depth] = false;
        j->depth++;
    }
}

void cli_json_close(cli_json *j) {
    if (j->depth == 0)
        return;
    j->depth--;
    bool object = j->kind[j->depth] == '{';
    if (j->pretty && object && j->comma[j->depth])
        indent(j);
    fputc(object ? '}' : ']', j->out);
    if (j->depth == 0)
        fputc('\n', j->out);
}

void cli_json_num(cli_json *j, const char *key, double v) {
    member(j, key);
    cli_json_number(j->out, v);
}

void cli_json_u64(cli_json *j, const char *key, uint64_t v) {
    member(j, key);
    fprintf(j->out, "%llu", (unsigned long long)v);
}

void cli_json_i64(cli_json *j, const char *key, int64_t v) {
    member(j, key);
    fprintf(j->out, "%lld", (long long)v);
}

void cli_json_bool(cli_json *j, const char *key, bool v) {
    member(j, key);
    fputs(v ? "true" : "false", j->out);
}

void cli_json_null(cli_json *j, const char *key) {
    member(j, key);
    fputs("null", j->out);
}

void cli_json_str(cli_json *j, const char *key, const char *s) {
    member(j, key);
    if (s == NULL)
        fputs("null", j->out);
    else
        cli_json_string(j->out, s);
}

void cli_json_key_bytes(cli_json *j, const char *key, const void *p, size_t n) {
    member(j, key);
    cli_json_bytes(j->out, p, n);
}
