/*
 * replay.c — runs the fuzz target over every file in the directories (or
 * files) named on the command line, so ordinary CI replays the corpus and
 * every past crash without libFuzzer. Exit status 0 when all inputs pass
 * (a violated property aborts), 1 when an argument cannot be read or no
 * input was found.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path) {
    FILE *fp = fopen(path, "rb");
    if (fp == NULL) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return -1;
    }
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    while (buf != NULL) {
        len += fread(buf + len, 1, cap - len, fp);
        if (len < cap)
            break;
        uint8_t *bigger = realloc(buf, cap * 2);
        if (bigger == NULL) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = bigger;
        cap *= 2;
    }
    int err = ferror(fp);
    fclose(fp);
    if (buf == NULL || err) {
        fprintf(stderr, "replay: cannot read %s\n", path);
        free(buf);
        return -1;
    }
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    return 1;
}

static int run_path(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "replay: no such file or directory: %s\n", path);
        return -1;
    }
    if (!S_ISDIR(st.st_mode))
        return run_file(path);
    DIR *d = opendir(path);
    if (d == NULL) {
        fprintf(stderr, "replay: cannot list %s\n", path);
        return -1;
    }
    int count = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char full[4096];
        snprintf(full, sizeof full, "%s/%s", path, e->d_name);
        struct stat fs;
        if (stat(full, &fs) != 0 || !S_ISREG(fs.st_mode))
            continue;
        int r = run_file(full);
        if (r < 0) {
            count = -1;
            break;
        }
        count += r;
    }
    closedir(d);
    return count;
}

int main(int argc, char **argv) {
    int total = 0;
    for (int i = 1; i < argc; i++) {
        int r = run_path(argv[i]);
        if (r < 0)
            return 1;
        total += r;
    }
    printf("replay: %d inputs passed\n", total);
    return total > 0 ? 0 : 1;
}
