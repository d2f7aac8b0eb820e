/*
 * manpage.c — amq(1) and the bash completion, generated from the help
 * texts (help.c) and the type registry, so that `amq help`, the manual
 * page and the completion always describe the same program.
 *
 * `amq help --man` prints roff: the synopsis is every command's usage
 * line, each command's section is its help body set without filling (the
 * texts are already laid out for 80 columns), the structure types come
 * from amq_filter_type_at, and EXAMPLES is the session of `amq help
 * examples`. `amq help --completion [bash|zsh|fish]` prints a completion
 * script whose option lists are read from the option lines of the same
 * bodies, and whose subcommands from the usage lines:
 *
 *     "amq cascade train|query|info|audit|features|eval [OPTIONS]"
 *     "  -t, --type SPEC      structure spec ..."
 *        ^short ^long  ^argument (upper case; SPEC completes type names,
 *                       KIND hash kinds, FILE/OUT/DIR file names)
 *
 * CMake runs them at build time (build/amq.1, build/amq.*-completion) and
 * `make install` installs them where each shell looks. The `amq help` command starts here:
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

/* ---- examples ---------------------------------------------------------------- */

/* A session from a key file to every kind of answer: the man page's
 * EXAMPLES, `amq help examples`, and run as written by the CLI tests. */
static const char *const examples[] = {
    "seq 1 100000 > keys.txt",
    "amq build -o users.amq keys.txt",
    "amq info users.amq",
    "amq query users.amq --key 17 --key not-a-key --mark",
    "printf '17\\nnew-user\\nnew-user\\n' | amq add --new users.amq",
    "gzip -k keys.txt && amq build --type cuckoo -o c.amq keys.txt.gz",
    "amq remove c.amq --key 17",
    "amq recommend -n 1e6 --deletes",
    "seq 1 50000 > a.txt && seq 25000 75000 > b.txt",
    "amq build -t bloom -n 100000 -o a.amq a.txt",
    "amq build -t bloom -n 100000 -o b.amq b.txt",
    "amq merge -o union.amq a.amq b.amq",
    "amq merge --intersect -o both.amq a.amq b.amq",
    "amq build -t cms -e 0.001 -o counts.amq keys.txt",
    "amq count counts.amq --key 17 --json",
    NULL,
};

void cli_examples(FILE *out) {
    for (size_t i = 0; examples[i] != NULL; i++)
        fprintf(out, "    %s\n", examples[i]);
}

static void man_examples(FILE *out) {
    fputs(".SH EXAMPLES\n"
          "From a key file to a filter, its answers, updates and merges "
          "('amq help examples' prints the same lines):\n.PP\n.nf\n",
          out);
    for (size_t i = 0; examples[i] != NULL; i++)
        roff_text(out, examples[i]);
    fputs(".fi\n", out);
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
    man_examples(out);
    fputs(".SH EXIT STATUS\n", out);
    roff_text(out, cli_help_epilogue());
    fputs(".SH SEE ALSO\nThe documentation in the source tree: docs/cli.md "
          "(this tool), docs/structures.md, docs/format.md, and the C "
          "headers amq/amq.h and amq/filter.h.\n",
          out);
}

/* ---- completion ------------------------------------------------------------------ */

/* What completion knows of a command, read from its help topic: the
 * option lines of its body and the subcommands of its usage line
 * ("amq cascade train|query|... [OPTIONS]": the word after the command,
 * when it holds '|'). */
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
 * none); `help` completes command names and "types". */
static void subcommands(const cli_help_topic *t, char *buf, size_t cap) {
    const char *w = t->usage + strlen("amq ") + strlen(t->name);
    size_t len = 0;
    buf[0] = '\0';
    if (strcmp(t->name, "help") == 0) {
        for (const cli_help_topic *c = cli_help_topics(); c->name; c++)
            len += (size_t)snprintf(buf + len, len < cap ? cap - len : 0, "%s ",
                                    c->name);
        snprintf(buf + len, len < cap ? cap - len : 0, "types");
        return;
    }
    if (*w != ' ')
        return;
    w++;
    size_t n = strcspn(w, " ");
    if (memchr(w, '|', n) == NULL || n >= cap)
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
    for (const cli_help_topic *t = cli_help_topics(); t->name != NULL; t++)
        fprintf(out, "%s%s", t == cli_help_topics() ? "" : " ", t->name);
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
    fputs("# bash completion for amq, generated by 'amq help --completion'\n"
          "# from the program's own help texts.\n"
          "_amq() {\n"
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
    for (const cli_help_topic *t = cli_help_topics(); t->name != NULL; t++)
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
          "complete -F _amq amq\n",
          out);
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
    fputs("#compdef amq\n"
          "# zsh completion for amq, generated by 'amq help --completion "
          "zsh'\n# from the program's own help texts.\n"
          "_amq() {\n"
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
    for (const cli_help_topic *t = cli_help_topics(); t->name != NULL; t++)
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
          "}\n"
          "_amq \"$@\"\n",
          out);
}

/* ---- fish ---- */

static void fish_option(FILE *out, const cli_help_topic *t, const opt_line *o) {
    arg_kind k = arg_of(o);
    fprintf(out, "complete -c amq -n '__fish_seen_subcommand_from %s'",
            t->name);
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

static void fish_completion(FILE *out) {
    fputs("# fish completion for amq, generated by 'amq help --completion "
          "fish'\n# from the program's own help texts.\n"
          "complete -c amq -f\n"
          "complete -c amq -n '__fish_use_subcommand' -l help\n"
          "complete -c amq -n '__fish_use_subcommand' -l version\n",
          out);
    for (const cli_help_topic *t = cli_help_topics(); t->name != NULL; t++) {
        char subs[256];
        fprintf(out,
                "complete -c amq -n '__fish_use_subcommand' -a %s -d '%s'\n",
                t->name, t->name);
        subcommands(t, subs, sizeof subs);
        if (subs[0] != '\0')
            fprintf(out,
                    "complete -c amq -n '__fish_seen_subcommand_from %s; and "
                    "test (count (commandline -opc)) -eq 2' -a '%s'\n",
                    t->name, subs);
        else if (strcmp(t->name, "help") != 0)
            fprintf(out,
                    "complete -c amq -n '__fish_seen_subcommand_from %s' -F\n",
                    t->name);
        fprintf(out,
                "complete -c amq -n '__fish_seen_subcommand_from %s' "
                "-l help\n",
                t->name);
        each_option(t, out, fish_option);
    }
}

/* `amq help`: the generated forms here, every other topic from help.c. */
int cli_cmd_help(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "--man") == 0) {
        cli_man_page(stdout);
        return CLI_EXIT_OK;
    }
    if (argc == 2 && strcmp(argv[1], "examples") == 0) {
        cli_examples(stdout);
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
