/*
 * tool.c — the program around the commands, the same for every tool:
 * `TOOL COMMAND ...` dispatched to the command's entry point, the global
 * --help and --version, and the check that stdout took everything.
 */
#include <errno.h>
#include <string.h>

#include "cli.h"

static int print_version(void) {
    printf("%s %d.%d.%d (library %s)\n", cli_tool_self.name, AMQ_VERSION_MAJOR,
           AMQ_VERSION_MINOR, AMQ_VERSION_PATCH, amq_version());
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

static int run(int argc, char **argv, const cli_command *commands) {
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
    const char *names[64];
    size_t n = 0;
    for (const cli_command *c = commands; c->name != NULL; c++) {
        if (strcmp(c->name, name) == 0)
            return c->run(argc - 1, argv + 1);
        if (n + 1 < sizeof names / sizeof names[0])
            names[n++] = c->name;
    }
    names[n] = NULL;
    return cli_unknown_word("", "command", name, names);
}

int cli_main(int argc, char **argv, const cli_command *commands) {
    return finish(run(argc, argv, commands));
}
