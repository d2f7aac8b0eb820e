/*
 * help.c — `TOOL help [COMMAND|types]`, the text behind every --help, and
 * the usage message printed for bad arguments, over the program's own
 * help texts (cli_tool_self: tools/amq/help.c, tools/lab/help.c). The man
 * page and the completion scripts are generated from the same texts
 * (manpage.c), so the three cannot disagree.
 */
#include <stdarg.h>
#include <string.h>

#include "cli.h"

static const cli_help_topic *find_topic(const char *name) {
    for (const cli_help_topic *t = cli_tool_self.topics; t->name != NULL; t++)
        if (strcmp(t->name, name) == 0)
            return t;
    return NULL;
}

static void print_overview(FILE *out) {
    fprintf(out, "%s\n\nusage:\n", cli_tool_self.title);
    for (const cli_help_topic *t = cli_tool_self.topics; t->name != NULL; t++)
        fprintf(out, "  %s\n", t->usage);
    fprintf(out, "  %s --version\n\n", cli_tool_self.name);
    fputs(cli_tool_self.epilogue, out);
}

bool cli_help_print(FILE *out, const char *command) {
    if (command == NULL) {
        print_overview(out);
        return true;
    }
    const cli_help_topic *t = find_topic(command);
    if (t == NULL)
        return false;
    fprintf(out, "usage: %s\n\n%s\n", t->usage, t->body);
    return true;
}

int cli_usage_error(const char *command, const char *fmt, ...) {
    const char *tool = cli_tool_self.name;
    va_list ap;
    fflush(stdout);
    fprintf(stderr, "%s %s: ", tool, command);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    const cli_help_topic *t = find_topic(command);
    if (t != NULL)
        fprintf(stderr, "usage: %s\nTry '%s help %s'.\n", t->usage, tool,
                command);
    return CLI_EXIT_ERR;
}

static void print_caps(FILE *out, uint32_t caps) {
    const char *sep = "";
    for (unsigned i = 0; i < 32; i++)
        if ((caps >> i & 1) && amq_cap_name(UINT32_C(1) << i) != NULL) {
            fprintf(out, "%s%s", sep, amq_cap_name(UINT32_C(1) << i));
            sep = ",";
        }
    if (*sep == 0)
        fputs("-", out);
}

static void print_types(FILE *out) {
    size_t n = amq_filter_type_count();
    fprintf(out, "%zu structure types (spec: NAME[:key=value,...]):\n", n);
    for (size_t i = 0; i < n; i++) {
        const amq_type_info *t = amq_filter_type_at(i);
        if (t == NULL)
            continue;
        fprintf(out, "\n  %-12s %s\n", t->name, t->summary ? t->summary : "");
        fprintf(out, "  %-12s params: %s\n", "",
                t->params && *t->params ? t->params : "(none)");
        fprintf(out, "  %-12s id %u, capabilities: ", "", (unsigned)t->type_id);
        print_caps(out, t->caps);
        fputc('\n', out);
    }
}

int cli_help_command(int argc, char **argv) {
    if (argc > 2)
        return cli_usage_error("help", "too many arguments");
    if (argc < 2) {
        print_overview(stdout);
        return CLI_EXIT_OK;
    }
    const char *topic = argv[1];
    if (cli_tool_self.types && strcmp(topic, "types") == 0) {
        print_types(stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(topic, "--help") == 0 || strcmp(topic, "-h") == 0)
        topic = "help";
    else if (topic[0] == '-')
        return cli_usage_error("help", "unknown option '%s'", topic);
    if (!cli_help_print(stdout, topic))
        return cli_usage_error("help", "no help for '%s'", topic);
    return CLI_EXIT_OK;
}
