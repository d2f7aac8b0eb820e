/*
 * manpage.c — a tool's man page and completion scripts, generated from
 * its help texts (cli_tool_self) and the type registry, so that `TOOL
 * help`, the manual page and the completion always describe the same
 * program.
 *
 * `TOOL help --man` prints roff: the synopsis is every command's usage
 * line, each command's section is its help body set without filling (the
 * texts are already laid out for 80 columns), the structure types come
 * from amq_filter_type_at, and EXAMPLES is the session of `TOOL help
 * examples` (for a tool that has one). `TOOL help --completion
 * [bash|zsh|fish]` prints a completion script whose option lists are read
 * from the option lines of the same bodies, and whose subcommands from the
 * usage lines:
 *
 *     "amq cascade train|query|info|audit|features [OPTIONS]"
 *     "  -t, --type SPEC      structure spec ..."
 *        ^short ^long  ^argument (upper case; SPEC completes type names,
 *                       KIND hash kinds, FILE/OUT/DIR file names)
 *
 * CMake runs them at build time (build/amq.1, build/amq.*-completion and
 * the same for amq-lab) and `make install` installs them where each shell
 * looks. The `help` command starts here: the generated forms, then
 * help.c's topics (so help.c, which this file reads, does not call back
 * into it).
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

/* ---- the page ------------------------------------------------------------------ */

static void examples(FILE *out) {
    for (const char *const *e = cli_tool_self.examples; *e != NULL; e++)
        fprintf(out, "    %s\n", *e);
}

static void man_examples(FILE *out) {
    fputs(".SH EXAMPLES\n", out);
    roff_text(out, cli_tool_self.examples_intro);
    fputs(".PP\n.nf\n", out);
    for (const char *const *e = cli_tool_self.examples; *e != NULL; e++)
        roff_text(out, *e);
    fputs(".fi\n", out);
}

/* The page's title: the tool's name in capitals. */
static void man_title(FILE *out) {
    fputs(".TH ", out);
    for (const char *c = cli_tool_self.name; *c; c++)
        fputc(toupper((unsigned char)*c), out);
    fprintf(out, " 1 \"\" \"%s %d.%d.%d\" \"User Commands\"\n",
            cli_tool_self.name, AMQ_VERSION_MAJOR, AMQ_VERSION_MINOR,
            AMQ_VERSION_PATCH);
}

static void man_page(FILE *out) {
    const cli_tool *tool = &cli_tool_self;
    const cli_help_topic *t;
    char line[256];
    man_title(out);
    snprintf(line, sizeof line, "%s - %s", tool->name, tool->summary);
    fputs(".SH NAME\n", out);
    roff_text(out, line);
    fputs(".SH SYNOPSIS\n.nf\n", out);
    for (t = tool->topics; t->name != NULL; t++)
        roff_text(out, t->usage);
    snprintf(line, sizeof line, "%s --version", tool->name);
    roff_text(out, line);
    fputs(".fi\n.SH DESCRIPTION\n", out);
    roff_text(out, tool->description);
    fputs(".SH COMMANDS\n", out);
    for (t = tool->topics; t->name != NULL; t++) {
        fprintf(out, ".SS %s\n.B ", t->name);
        roff_text(out, t->usage);
        fputs(".PP\n.nf\n", out);
        roff_text(out, t->body);
        fputs(".fi\n", out);
    }
    if (tool->types)
        man_types(out);
    if (tool->examples != NULL)
        man_examples(out);
    fputs(".SH EXIT STATUS\n", out);
    roff_text(out, tool->epilogue);
    fputs(".SH SEE ALSO\n", out);
    roff_text(out, tool->see_also);
}

/* ---- completion ------------------------------------------------------------------ */

/* What completion knows of a command, read from its help topic: the
 * option lines of its body and the subcommands of its usage line
 * ("amq cascade train|query|... [OPTIONS]", "amq lsm plan [OPTIONS]":
 * the word after the command, when it is lower-case words joined by
 * '|'). */
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

typedef void (*opt_fn)(FILE *out, const cli_help_topic *t, const opt_line *o);

/* Calls fn for every option line of a help body. */
static void each_option(const cli_help_topic *t, FILE *out, opt_fn fn) {
    const char *body = t->body;
    while (*body) {
        const char *nl = strchr(body, '\n');
        size_t len = nl ? (size_t)(nl - body) : strlen(body);
        opt_line o;
        if (parse_opt_line(body, len, &o))
            fn(out, t, &o);
        body += len + (nl != NULL);
    }
}

/* The subcommands of t's usage line, space-separated, into buf ("" when
 * none); `help` completes command names (and "types"). */
static void subcommands(const cli_help_topic *t, char *buf, size_t cap) {
    const char *w = t->usage + strlen(cli_tool_self.name) + 1 + strlen(t->name);
    size_t len = 0;
    buf[0] = '\0';
    if (strcmp(t->name, "help") == 0) {
        for (const cli_help_topic *c = cli_tool_self.topics; c->name; c++)
            len += (size_t)snprintf(buf + len, len < cap ? cap - len : 0,
                                    "%s%s", len ? " " : "", c->name);
        if (cli_tool_self.types)
            snprintf(buf + len, len < cap ? cap - len : 0, " types");
        return;
    }
    if (*w != ' ')
        return;
    w++;
    size_t n = strcspn(w, " ");
    if (n == 0 || n >= cap || strspn(w, "abcdefghijklmnopqrstuvwxyz|") != n)
        return;
    for (size_t i = 0; i < n; i++)
        buf[i] = w[i] == '|' ? ' ' : w[i];
    buf[n] = '\0';
}

/* How the word after an option completes: by its argument's name. */
typedef enum { ARG_NONE, ARG_TYPE, ARG_HASH, ARG_FILE, ARG_WORD } arg_kind;

static arg_kind arg_of(const opt_line *o) {
    if (o->arg[0] == 0)
        return ARG_NONE;
    if (strcmp(o->arg, "SPEC") == 0)
        return ARG_TYPE;
    if (strcmp(o->arg, "KIND") == 0)
        return ARG_HASH;
    if (strcmp(o->arg, "FILE") == 0 || strcmp(o->arg, "OUT") == 0 ||
        strcmp(o->arg, "DIR") == 0)
        return ARG_FILE;
    return ARG_WORD; /* a number or a word: nothing to offer */
}

static void type_names(FILE *out) {
    for (size_t i = 0; i < amq_filter_type_count(); i++)
        fprintf(out, "%s%s", i ? " " : "", amq_filter_type_at(i)->name);
}

static void command_names(FILE *out) {
    const cli_help_topic *first = cli_tool_self.topics;
    for (const cli_help_topic *t = first; t->name != NULL; t++)
        fprintf(out, "%s%s", t == first ? "" : " ", t->name);
}

/* The shell function's name: "_" and the tool's, '-' made '_'. */
static void function_name(FILE *out) {
    fputc('_', out);
    for (const char *c = cli_tool_self.name; *c; c++)
        fputc(*c == '-' ? '_' : *c, out);
}

/* ---- bash ---- */

static void bash_names(FILE *out, const cli_help_topic *t, const opt_line *o) {
    (void)t;
    fprintf(out, " %s%s%s", o->shortopt, o->shortopt[0] ? " " : "", o->longopt);
}

static void bash_value_case(FILE *out, const cli_help_topic *t,
                            const opt_line *o) {
    static const char *const reply[] = {
        [ARG_TYPE] = "COMPREPLY=($(compgen -W \"$types\" -- \"$cur\"))",
        [ARG_HASH] = "COMPREPLY=($(compgen -W \"xxh3 xxh64 siphash\" -- "
                     "\"$cur\"))",
        [ARG_FILE] = "COMPREPLY=($(compgen -f -- \"$cur\"))",
        [ARG_WORD] = "COMPREPLY=()",
    };
    arg_kind k = arg_of(o);
    (void)t;
    if (k == ARG_NONE)
        return;
    fprintf(out, "            %s%s%s) %s; return ;;\n", o->shortopt,
            o->shortopt[0] ? "|" : "", o->longopt, reply[k]);
}

static void bash_command(FILE *out, const cli_help_topic *t) {
    char subs[256];
    subcommands(t, subs, sizeof subs);
    fprintf(out, "    %s)\n        case \"$prev\" in\n", t->name);
    each_option(t, out, bash_value_case);
    fprintf(out, "        esac\n        opts=\"--help");
    each_option(t, out, bash_names);
    fputs("\"\n", out);
    if (subs[0] != '\0')
        fprintf(out, "        [ \"$COMP_CWORD\" -eq 2 ] && words=\"%s\"\n",
                subs);
    fputs("        ;;\n", out);
}

static void bash_completion(FILE *out) {
    const char *name = cli_tool_self.name;
    fprintf(out,
            "# bash completion for %s, generated by '%s help --completion'\n"
            "# from the program's own help texts.\n",
            name, name);
    function_name(out);
    fputs("() {\n"
          "    local cur=${COMP_WORDS[COMP_CWORD]}\n"
          "    local prev=${COMP_WORDS[COMP_CWORD-1]}\n"
          "    local commands=\"",
          out);
    command_names(out);
    fputs("\"\n    local types=\"", out);
    type_names(out);
    fputs("\"\n    local opts=\"\" words=\"\"\n"
          "    if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
          "        COMPREPLY=($(compgen -W \"$commands --help --version\" "
          "-- \"$cur\"))\n"
          "        return\n"
          "    fi\n"
          "    case \"${COMP_WORDS[1]}\" in\n",
          out);
    for (const cli_help_topic *t = cli_tool_self.topics; t->name; t++)
        bash_command(out, t);
    fputs("    esac\n"
          "    if [ -n \"$words\" ] && [ \"${cur#-}\" = \"$cur\" ]; then\n"
          "        COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
          "    elif [ \"${cur#-}\" != \"$cur\" ]; then\n"
          "        COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
          "    else\n"
          "        COMPREPLY=($(compgen -f -- \"$cur\"))\n"
          "        compopt -o filenames 2>/dev/null\n"
          "    fi\n"
          "}\n"
          "complete -F ",
          out);
    function_name(out);
    fprintf(out, " %s\n", name);
}

/* ---- zsh ---- */

static void zsh_value_case(FILE *out, const cli_help_topic *t,
                           const opt_line *o) {
    static const char *const reply[] = {
        [ARG_TYPE] = "compadd -a types",
        [ARG_HASH] = "compadd xxh3 xxh64 siphash",
        [ARG_FILE] = "_files",
        [ARG_WORD] = ":",
    };
    arg_kind k = arg_of(o);
    (void)t;
    if (k != ARG_NONE)
        fprintf(out, "        %s%s%s) %s; return ;;\n", o->shortopt,
                o->shortopt[0] ? "|" : "", o->longopt, reply[k]);
}

static void zsh_command(FILE *out, const cli_help_topic *t) {
    char subs[256];
    subcommands(t, subs, sizeof subs);
    fprintf(out, "    %s)\n      subs=(%s)\n      opts=(--help", t->name, subs);
    each_option(t, out, bash_names);
    fputs(")\n      case $prev in\n", out);
    each_option(t, out, zsh_value_case);
    fputs("      esac ;;\n", out);
}

static void zsh_completion(FILE *out) {
    const char *name = cli_tool_self.name;
    fprintf(out,
            "#compdef %s\n"
            "# zsh completion for %s, generated by '%s help --completion "
            "zsh'\n# from the program's own help texts.\n",
            name, name, name);
    function_name(out);
    fputs("() {\n"
          "  local -a commands types subs opts\n"
          "  local prev=${words[CURRENT-1]}\n"
          "  commands=(",
          out);
    command_names(out);
    fputs(")\n  types=(", out);
    type_names(out);
    fputs(")\n"
          "  if (( CURRENT == 2 )); then\n"
          "    compadd -a commands; compadd -- --help --version; return\n"
          "  fi\n"
          "  case ${words[2]} in\n",
          out);
    for (const cli_help_topic *t = cli_tool_self.topics; t->name; t++)
        zsh_command(out, t);
    fputs("  esac\n"
          "  if (( CURRENT == 3 && ${#subs} > 0 )) && [[ $PREFIX != -* ]]; "
          "then\n"
          "    compadd -a subs\n"
          "  elif [[ $PREFIX == -* ]]; then\n"
          "    compadd -a opts\n"
          "  else\n"
          "    _files\n"
          "  fi\n"
          "}\n",
          out);
    function_name(out);
    fputs(" \"$@\"\n", out);
}

/* ---- fish ---- */

static void fish_option(FILE *out, const cli_help_topic *t, const opt_line *o) {
    arg_kind k = arg_of(o);
    fprintf(out, "complete -c %s -n '__fish_seen_subcommand_from %s'",
            cli_tool_self.name, t->name);
    if (o->shortopt[0])
        fprintf(out, " -s %c", o->shortopt[1]);
    fprintf(out, " -l %s", o->longopt + 2);
    if (k == ARG_TYPE) {
        fputs(" -x -a '", out);
        type_names(out);
        fputc('\'', out);
    } else if (k == ARG_HASH) {
        fputs(" -x -a 'xxh3 xxh64 siphash'", out);
    } else if (k == ARG_FILE) {
        fputs(" -r -F", out);
    } else if (k == ARG_WORD) {
        fputs(" -x", out);
    }
    fputc('\n', out);
}

static void fish_command(FILE *out, const cli_help_topic *t) {
    const char *name = cli_tool_self.name;
    char subs[256];
    fprintf(out, "complete -c %s -n '__fish_use_subcommand' -a %s -d '%s'\n",
            name, t->name, t->name);
    subcommands(t, subs, sizeof subs);
    if (subs[0] != '\0')
        fprintf(out,
                "complete -c %s -n '__fish_seen_subcommand_from %s; and "
                "test (count (commandline -opc)) -eq 2' -a '%s'\n",
                name, t->name, subs);
    else if (strcmp(t->name, "help") != 0)
        fprintf(out, "complete -c %s -n '__fish_seen_subcommand_from %s' -F\n",
                name, t->name);
    fprintf(out, "complete -c %s -n '__fish_seen_subcommand_from %s' -l help\n",
            name, t->name);
    each_option(t, out, fish_option);
}

static void fish_completion(FILE *out) {
    const char *name = cli_tool_self.name;
    fprintf(out,
            "# fish completion for %s, generated by '%s help --completion "
            "fish'\n# from the program's own help texts.\n"
            "complete -c %s -f\n"
            "complete -c %s -n '__fish_use_subcommand' -l help\n"
            "complete -c %s -n '__fish_use_subcommand' -l version\n",
            name, name, name, name, name);
    for (const cli_help_topic *t = cli_tool_self.topics; t->name; t++)
        fish_command(out, t);
}

/* `TOOL help`: the generated forms here, every other topic from help.c. */
int cli_cmd_help(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "--man") == 0) {
        man_page(stdout);
        return CLI_EXIT_OK;
    }
    if (argc == 2 && strcmp(argv[1], "examples") == 0 &&
        cli_tool_self.examples != NULL) {
        examples(stdout);
        return CLI_EXIT_OK;
    }
    if ((argc == 2 || argc == 3) && strcmp(argv[1], "--completion") == 0) {
        const char *shell = argc == 3 ? argv[2] : "bash";
        if (strcmp(shell, "bash") == 0)
            bash_completion(stdout);
        else if (strcmp(shell, "zsh") == 0)
            zsh_completion(stdout);
        else if (strcmp(shell, "fish") == 0)
            fish_completion(stdout);
        else
            return cli_usage_error("help",
                                   "--completion: bash, zsh or fish, "
                                   "not '%s'",
                                   shell);
        return CLI_EXIT_OK;
    }
    return cli_help_command(argc, argv);
}
