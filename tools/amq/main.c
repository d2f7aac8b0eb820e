/*
 * main.c — entry point of the amq tool: the user's verbs, dispatched by
 * cli_main (tools/common), and a pointer for each experiment that now
 * lives in amq-lab, so an old command line says where it went.
 */
#include <string.h>

#include "verbs.h"

static const cli_command commands[] = {
    {"build", cli_cmd_build},
    {"query", cli_cmd_query},
    {"add", cli_cmd_add},
    {"remove", cli_cmd_remove},
    {"merge", cli_cmd_merge},
    {"count", cli_cmd_count},
    {"info", cli_cmd_info},
    {"recommend", cli_cmd_recommend},
    {"help", cli_cmd_help},
    {"shard", cli_cmd_shard},
    {"cascade", cli_cmd_cascade},
    {"lsm", cli_cmd_lsm},
    {"map", cli_cmd_map},
    {"kmer", cli_cmd_kmer},
    {"range", cli_cmd_range},
    {"parquet", cli_cmd_parquet},
    {"adapt", cli_cmd_adapt},
    {"clock", cli_cmd_clock},
    {NULL, NULL},
};

/* The experiments and evaluations of amq-lab: a verb, or one subcommand
 * of it (sub not NULL); the first match names what moved. */
static const struct moved {
    const char *verb, *sub;
} moved[] = {
    {"demo", NULL},      {"clock", "simulate"}, {"clock", "eval"},
    {"lsm", "simulate"}, {"cascade", "eval"},   {NULL, NULL},
};

static const struct moved *find_moved(const char *verb, const char *sub) {
    for (const struct moved *m = moved; m->verb != NULL; m++)
        if (strcmp(m->verb, verb) == 0 &&
            (m->sub == NULL || (sub != NULL && strcmp(m->sub, sub) == 0)))
            return m;
    return NULL;
}

/* A word as the shell takes it back: as it is when plain, else quoted. */
static void print_word(const char *w) {
    if (*w != '\0' &&
        strspn(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP"
                  "QRSTUVWXYZ0123456789_-+=.,:/@%") == strlen(w)) {
        fputs(w, stderr);
        return;
    }
    fputc('\'', stderr);
    for (; *w; w++)
        if (*w == '\'')
            fputs("'\\''", stderr);
        else
            fputc(*w, stderr);
    fputc('\'', stderr);
}

/* "amq: 'clock simulate' moved to amq-lab: amq-lab clock simulate ..."
 * with the words given after the moved command (help: its help). */
static int moved_error(const struct moved *m, int argc, char **argv,
                       bool help) {
    fflush(stdout);
    fprintf(stderr, "amq: '%s%s%s' moved to amq-lab: amq-lab ", m->verb,
            m->sub ? " " : "", m->sub ? m->sub : "");
    if (help)
        fprintf(stderr, "help %s", m->verb);
    for (int i = 1; !help && i < argc; i++) {
        if (i > 1)
            fputc(' ', stderr);
        print_word(argv[i]);
    }
    fputc('\n', stderr);
    return CLI_EXIT_ERR;
}

int main(int argc, char **argv) {
    const struct moved *m = NULL;
    if (argc >= 2)
        m = find_moved(argv[1], argc >= 3 ? argv[2] : NULL);
    if (m != NULL)
        return moved_error(m, argc, argv, false);
    if (argc == 3 && strcmp(argv[1], "help") == 0 &&
        (m = find_moved(argv[2], NULL)) != NULL && m->sub == NULL)
        return moved_error(m, argc, argv, true);
    return cli_main(argc, argv, commands);
}
