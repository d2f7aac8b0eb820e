/*
 * doc_section.c — see doc_section.h.
 */
#include "doc_section.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long n;
    if (f != NULL && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
        fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1)) != NULL &&
        fread(buf, 1, (size_t)n, f) == (size_t)n) {
        buf[n] = '\0';
        *len = (size_t)n;
    } else {
        free(buf);
        buf = NULL;
    }
    if (f != NULL)
        fclose(f);
    return buf;
}

int doc_section_replace(const char *path, const char *name, const char *text) {
    char begin[256], end[256], tmp[4096];
    size_t len = 0;
    snprintf(begin, sizeof begin, "<!-- BEGIN %s -->\n", name);
    snprintf(end, sizeof end, "<!-- END %s -->", name);
    char *doc = slurp(path, &len);
    if (doc == NULL) {
        fprintf(stderr, "%s: cannot read\n", path);
        return -1;
    }
    char *b = strstr(doc, begin), *e = b ? strstr(b, end) : NULL;
    if (b == NULL || e == NULL) {
        fprintf(stderr, "%s: markers for '%s' not found\n", path, name);
        free(doc);
        return -1;
    }
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    size_t head = (size_t)(b - doc) + strlen(begin);
    int ok = f != NULL && fwrite(doc, 1, head, f) == head &&
             fputs(text, f) >= 0 && fputs(e, f) >= 0;
    if (f != NULL && fclose(f) != 0)
        ok = 0;
    free(doc);
    if (!ok || rename(tmp, path) != 0) {
        fprintf(stderr, "%s: cannot write\n", path);
        remove(tmp);
        return -1;
    }
    return 0;
}
