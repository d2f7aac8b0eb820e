/*
 * manpage.c — amq(1) and the bash completion, generated from the help
 * texts (help.c) and the type registry, so that `amq help`, the manual
 * page and the completion always describe the same program.
 *
 * `amq help --man` prints roff: the synopsis is every command's usage
 * line, each command's section is its help body set without filling (the
 * texts are already laid out for 80 columns), and the structure types come
 * from amq_filter_type_at. `amq help --completion` prints a bash script
 * whose option lists are read from the option lines of the same bodies:
 *
 *     "  -t, --type SPEC      structure spec ..."
 *        ^short ^long  ^argument (upper case; SPEC completes type names,
 *                       KIND hash kinds, FILE/OUT file names)
 *
 * CMake runs both at build time (build/amq.1, build/amq.bash-completion)
 * and `make install` installs them. The `amq help` command starts here:
 * the two generated forms, then help.c's topics (so help.c, which this
 * file reads, does not call back into it).
 */
#include <ctype.h>
#include <string.h>

#include "cli.h"

/* ---- roff ------------------------------------------------------------------- */

/* One line of text, escaped: backslashes, minus signs (so options copy as
 * ASCII hyphen-minus), and a leading '.' or '\'' that roff would take for
 * a request. */
static void roff_line(FILE *out, const char *s, size_t len) {
    if (len > 0 && (s[0] == '.' || s[0] == '\''))
        fputs("\\&", out);
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '\\')
            fputs("\\e", out);
        else if (s[i] == '-')
            fputs("\\-", out);
        else
            fputc(s[i], out);
    }
    fputc('\n', out);
}

static void roff_text(FILE *out, const char *s) {
    while (*s) {
        const char *nl = strchr(s, '\n');
        size_t len = nl ? (size_t)(nl - s) : strlen(s);
        roff_line(out, s, len);
        s += len + (nl != NULL);
    }
}

static void man_types(FILE *out) {
    fputs(".SH STRUCTURE TYPES\n"
          "A SPEC is NAME[:key=value,...]; the names and their parameters:\n",
          out);
    for (size_t i = 0; i < amq_filter_type_count(); i++) {
        const amq_type_info *t = amq_filter_type_at(i);
        if (t == NULL)
            continue;
        fputs(".TP\n.B ", out);
        roff_text(out, t->name);
        roff_text(out, t->summary ? t->summary : "");
        fputs(".br\nparameters: ", out);
        roff_text(out, t->params && *t->params ? t->params : "(none)");
    }
}

void cli_man_page(FILE *out) {
    const cli_help_topic *t;
    fprintf(out, ".TH AMQ 1 \"\" \"amq %d.%d.%d\" \"User Commands\"\n",
            AMQ_VERSION_MAJOR, AMQ_VERSION_MINOR, AMQ_VERSION_PATCH);
    fputs(".SH NAME\namq \\- build, query, update and inspect approximate "
          "membership filters\n.SH SYNOPSIS\n.nf\n",
          out);
    for (t = cli_help_topics(); t->name != NULL; t++)
        roff_text(out, t->usage);
    fputs("amq \\-\\-version\n.fi\n.SH DESCRIPTION\n", out);
    fputs("amq builds filters (Bloom family, cuckoo, quotient, xor, binary "
          "fuse, Ribbon, sketches) from keys, one per line, saves them in "
          "one checksummed frame, and queries, updates, merges and "
          "describes the saved files. Every command accepts \\-h and "
          "\\-\\-help.\n.SH COMMANDS\n",
          out);
    for (t = cli_help_topics(); t->name != NULL; t++) {
        fprintf(out, ".SS %s\n.B ", t->name);
        roff_text(out, t->usage);
        fputs(".PP\n.nf\n", out);
        roff_text(out, t->body);
        fputs(".fi\n", out);
    }
    man_types(out);
    fputs(".SH EXIT STATUS\n", out);
    roff_text(out, cli_help_epilogue());
    fputs(".SH SEE ALSO\nThe documentation in the source tree: docs/cli.md "
          "(this tool), docs/structures.md, docs/format.md, and the C "
          "headers amq/amq.h and amq/filter.h.\n",
          out);
}

/* ---- bash completion ------------------------------------------------------------ */

typedef struct opt_line {
    char shortopt[3];
    char longopt[40];
    char arg[16];
} opt_line;

/* Parse "  -t, --type SPEC   text" / "      --hash KIND  text". */
static bool parse_opt_line(const char *s, size_t len, opt_line *o) {
    size_t i = 0, j;
    memset(o, 0, sizeof *o);
    while (i < len && s[i] == ' ')
        i++;
    if (i + 1 < len && s[i] == '-' && isalpha((unsigned char)s[i + 1]) &&
        i + 2 < len && s[i + 2] == ',') {
        memcpy(o->shortopt, s + i, 2);
        i += 3;
        while (i < len && s[i] == ' ')
            i++;
    }
    if (i + 2 >= len || s[i] != '-' || s[i + 1] != '-')
        return false;
    for (j = 0; i < len && s[i] != ' ' && j + 1 < sizeof o->longopt; i++)
        o->longopt[j++] = s[i];
    if (i + 1 < len && s[i] == ' ' && isupper((unsigned char)s[i + 1]))
        for (j = 0, i++; i < len && s[i] != ' ' && j + 1 < sizeof o->arg; i++)
            o->arg[j++] = s[i];
    return true;
}

/* Calls fn for every option line of a help body. */
static void each_option(const char *body, FILE *out,
                        void (*fn)(FILE *, const opt_line *)) {
    while (*body) {
        const char *nl = strchr(body, '\n');
        size_t len = nl ? (size_t)(nl - body) : strlen(body);
        opt_line o;
        if (parse_opt_line(body, len, &o))
            fn(out, &o);
        body += len + (nl != NULL);
    }
}

static void emit_names(FILE *out, const opt_line *o) {
    fprintf(out, " %s%s%s", o->shortopt, o->shortopt[0] ? " " : "", o->longopt);
}

/* What the word after an option completes to, by its argument's name. */
static void emit_value_case(FILE *out, const opt_line *o) {
    const char *a = o->arg;
    if (a[0] == 0)
        return; /* a flag */
    fprintf(out, "            %s%s%s)", o->shortopt, o->shortopt[0] ? "|" : "",
            o->longopt);
    if (strcmp(a, "SPEC") == 0)
        fputs(" COMPREPLY=($(compgen -W \"$types\" -- \"$cur\")); return ;;\n",
              out);
    else if (strcmp(a, "KIND") == 0)
        fputs(" COMPREPLY=($(compgen -W \"xxh3 xxh64 siphash\" -- \"$cur\"));"
              " return ;;\n",
              out);
    else if (strcmp(a, "FILE") == 0 || strcmp(a, "OUT") == 0)
        fputs(" COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n", out);
    else
        fputs(" COMPREPLY=(); return ;;\n", out); /* a number: no words */
}

static void completion_command(FILE *out, const cli_help_topic *t) {
    fprintf(out, "    %s)\n        case \"$prev\" in\n", t->name);
    each_option(t->body, out, emit_value_case);
    fprintf(out, "        esac\n        opts=\"--help");
    each_option(t->body, out, emit_names);
    fputs("\"\n", out);
    if (strcmp(t->name, "help") == 0)
        fputs("        [ \"$COMP_CWORD\" -eq 2 ] && words=\"$commands "
              "types\" ;;\n",
              out);
    else if (strcmp(t->name, "clock") == 0)
        fputs("        [ \"$COMP_CWORD\" -eq 2 ] && words=\"simulate eval\" "
              ";;\n",
              out);
    else
        fputs("        ;;\n", out);
}

void cli_bash_completion(FILE *out) {
    const cli_help_topic *t;
    fputs("# bash completion for amq, generated by 'amq help --completion'\n"
          "# from the program's own help texts.\n"
          "_amq() {\n"
          "    local cur=${COMP_WORDS[COMP_CWORD]}\n"
          "    local prev=${COMP_WORDS[COMP_CWORD-1]}\n"
          "    local commands=\"",
          out);
    for (t = cli_help_topics(); t->name != NULL; t++)
        fprintf(out, "%s%s", t == cli_help_topics() ? "" : " ", t->name);
    fputs("\"\n    local types=\"", out);
    for (size_t i = 0; i < amq_filter_type_count(); i++)
        fprintf(out, "%s%s", i ? " " : "", amq_filter_type_at(i)->name);
    fputs("\"\n    local opts=\"\" words=\"\"\n"
          "    if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
          "        COMPREPLY=($(compgen -W \"$commands --help --version\" "
          "-- \"$cur\"))\n"
          "        return\n"
          "    fi\n"
          "    case \"${COMP_WORDS[1]}\" in\n",
          out);
    for (t = cli_help_topics(); t->name != NULL; t++)
        completion_command(out, t);
    fputs("    esac\n"
          "    if [ -n \"$words\" ]; then\n"
          "        COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
          "    elif [ \"${cur#-}\" != \"$cur\" ]; then\n"
          "        COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
          "    else\n"
          "        COMPREPLY=($(compgen -f -- \"$cur\"))\n"
          "        compopt -o filenames 2>/dev/null\n"
          "    fi\n"
          "}\n"
          "complete -F _amq amq\n",
          out);
}

/* `amq help`: the generated forms here, every other topic from help.c. */
int cli_cmd_help(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "--man") == 0) {
        cli_man_page(stdout);
        return CLI_EXIT_OK;
    }
    if (argc == 2 && strcmp(argv[1], "--completion") == 0) {
        cli_bash_completion(stdout);
        return CLI_EXIT_OK;
    }
    return cli_help_command(argc, argv);
}
