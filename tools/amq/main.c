/*
 * main.c — entry point of the amq tool: dispatches `amq COMMAND ...` to the
 * subcommand's file and handles the global --help / --version.
 */
#include <errno.h>
#include <string.h>

#include "cli.h"

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
    {"demo", cli_cmd_demo},
    {"clock", cli_cmd_clock},
    {"shard", cli_cmd_shard},
    {"cascade", cli_cmd_cascade},
    {"lsm", cli_cmd_lsm},
    {"map", cli_cmd_map},
    {"kmer", cli_cmd_kmer},
    {NULL, NULL},
};

/* The command names, NULL-terminated (for suggestions). */
static const char *const *command_names(void) {
    static const char *names[sizeof commands / sizeof commands[0]];
    for (size_t i = 0; commands[i].name != NULL; i++)
        names[i] = commands[i].name;
    return names;
}

static int print_version(void) {
    printf("amq %d.%d.%d (library %s)\n", AMQ_VERSION_MAJOR, AMQ_VERSION_MINOR,
           AMQ_VERSION_PATCH, amq_version());
    return CLI_EXIT_OK;
}

/* Everything printed must reach its destination: a full disk or a closed
 * pipe behind stdout is an error (exit 2), whatever the command did. */
static int finish(int rc) {
    errno = 0;
    bool flushed = fflush(stdout) == 0;
    int e = errno;
    if (!flushed || ferror(stdout)) {
        cli_error("<stdout>: write error%s%s", e != 0 ? ": " : "",
                  e != 0 ? strerror(e) : "");
        return CLI_EXIT_ERR;
    }
    return rc;
}

static int run(int argc, char **argv) {
    if (argc < 2) {
        cli_help_print(stderr, NULL);
        return CLI_EXIT_ERR;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0)
        return cli_help_print(stdout, NULL) ? CLI_EXIT_OK : CLI_EXIT_ERR;
    if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0 ||
        strcmp(name, "version") == 0)
        return print_version();
    for (const cli_command *c = commands; c->name != NULL; c++)
        if (strcmp(c->name, name) == 0)
            return c->run(argc - 1, argv + 1);
    return cli_unknown_word("", "command", name, command_names());
}

int main(int argc, char **argv) { return finish(run(argc, argv)); }
