/* A program that uses an installed amq: build a filter, save it to a file,
 * open it again, and check the answers. Prints "ok <version>". */
#include <amq/amq.h>
#include <stdio.h>

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "consumer.amq";
    amq_filter *f = NULL, *g = NULL;
    amq_diag diag = {0};
    if (amq_filter_new("blocked", 1000, 0.01, NULL, &f, &diag) != AMQ_OK)
        return fprintf(stderr, "new: %s\n", diag.message), 1;
    for (int i = 0; i < 1000; i++)
        amq_filter_add(f, &i, sizeof i);
    if (amq_filter_save_file(f, path, &diag) != AMQ_OK ||
        amq_filter_open_file(path, NULL, &g, &diag) != AMQ_OK)
        return fprintf(stderr, "file: %s\n", diag.message), 1;
    for (int i = 0; i < 1000; i++)
        if (!amq_filter_contains(g, &i, sizeof i))
            return fprintf(stderr, "key %d missing\n", i), 1;
    printf("ok %s\n", amq_version());
    amq_filter_free(g);
    amq_filter_free(f);
    return 0;
}
