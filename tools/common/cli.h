/*
 * cli.h — what the command-line tools share (tools/common, one static
 * library linked by `amq`, the user's tool, and by `amq-lab`, the
 * experiments): exit codes, the program around the commands, help texts
 * and usage errors, a small option parser, error reporting, key input,
 * filter files (opened in place, saved atomically), a JSON writer, a
 * progress line and a clock.
 *
 * The tools use only the public headers (amq/amq.h). Exit codes are part
 * of their interface: 0 success (query: some key may be a member), 1
 * nothing found, 2 any error or bad usage, 3 written but over capacity, 4
 * an audit rejects a bound. Whatever a command prints to stdout is checked
 * once, at exit (cli_main): a write that failed makes the exit status 2.
 *
 * Each program defines cli_tool_self, its name and help texts; messages,
 * usage lines, `help`, the man page and the completion scripts read it.
 */
#ifndef AMQ_TOOLS_CLI_H
#define AMQ_TOOLS_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "amq/amq.h"
#include "parse.h"

#define CLI_EXIT_OK 0
#define CLI_EXIT_NONE 1
#define CLI_EXIT_ERR 2
/* build, add, merge: the file was written, but the filter holds more keys
 * than it was sized for and its certified bound is above its target (a
 * warning on stderr says by how much and what to do). */
#define CLI_EXIT_OVER 3
/* cascade audit: the audit rejects the cascade's certified bound. */
#define CLI_EXIT_VIOLATED 4

#if defined(__GNUC__)
#define CLI_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define CLI_PRINTF(f, a)
#endif

/* ---- the program ---------------------------------------------------------- */

/* One help text a command, in the overview's order; an array of them ends
 * with a NULL name. The man page and the completion scripts are generated
 * from them (manpage.c), so all three say the same. */
typedef struct cli_help_topic {
    const char *name;
    const char *usage; /* one line, after "usage: "                        */
    const char *body;
} cli_help_topic;

/* A program: what its messages, help, man page and completion say. */
typedef struct cli_tool {
    const char *name;        /* "amq": "amq: ...", "usage: amq build ..."  */
    const char *title;       /* the overview's first line                  */
    const char *summary;     /* the man page's NAME, after "TOOL - "       */
    const char *description; /* the man page's DESCRIPTION                 */
    const cli_help_topic *topics;
    const char *epilogue; /* after the overview's usage lines; EXIT STATUS */
    const char *see_also; /* the man page's SEE ALSO                       */
    /* `help examples` and the man page's EXAMPLES (after its intro),
     * NULL-terminated; NULL: none. */
    const char *const *examples;
    const char *examples_intro;
    bool types; /* `help types` and the man page's STRUCTURE TYPES         */
} cli_tool;

/* Defined by each program (tools/amq/help.c, tools/lab/help.c). */
extern const cli_tool cli_tool_self;

/* A verb and its entry point: argv[0] is the verb itself. */
typedef struct cli_command {
    const char *name;
    int (*run)(int argc, char **argv);
} cli_command;

/* The whole program (tool.c): `TOOL COMMAND ...` runs the command of
 * commands (NULL-terminated) named argv[1]; -h/--help prints the
 * overview, -V/--version/version the version; no command, or an unknown
 * one, is an error. Returns the exit status after checking that stdout
 * took everything printed. */
int cli_main(int argc, char **argv, const cli_command *commands);

/* help.c: print the help of a command (NULL: the overview) to out; false if
 * the command is unknown. */
bool cli_help_print(FILE *out, const char *command);
/* `TOOL help [topic | types | examples | --man | --completion [SHELL]]`
 * (manpage.c); every tool's command table holds it as "help". */
int cli_cmd_help(int argc, char **argv);
/* help.c: `TOOL help [topic | types]`, without the generated forms
 * (--man, --completion, examples), which cli_cmd_help answers first. */
int cli_help_command(int argc, char **argv);
/* "TOOL CMD: message", the usage line and a pointer to `TOOL help CMD` on
 * stderr; returns CLI_EXIT_ERR. */
int cli_usage_error(const char *command, const char *fmt, ...) CLI_PRINTF(2, 3);

/* `TOOL COMMAND SUB ...`: runs the sub whose name is argv[1] with
 * (argc - 1, argv + 1); answers -h/--help with COMMAND's help; a missing
 * or unknown sub is a usage error naming the subs (and the nearest one).
 * subs ends with a NULL name. */
int cli_dispatch(const char *command, const cli_command *subs, int argc,
                 char **argv);
/* "unknown WHAT 'WORD' (did you mean 'X'?)" as a usage error of command
 * (or, for command "", a plain error pointing at 'TOOL help'); names is
 * NULL-terminated. Returns CLI_EXIT_ERR. */
int cli_unknown_word(const char *command, const char *what, const char *word,
                     const char *const *names);

/* A subcommand that takes only min..max positional arguments (and
 * -h/--help, and --json when json is not NULL) into out[]: -1 to go on,
 * else the exit status. */
int cli_positionals(const char *command, int argc, char **argv, size_t min,
                    size_t max, const char **out, bool *json);

/* "s" unless n is 1: "%llu key%s" reads right for every count. */
static inline const char *cli_s(uint64_t n) { return n == 1 ? "" : "s"; }

/* ---- option parsing (util.c) --------------------------------------------- */

typedef struct cli_opt {
    const char *name; /* long name without "--"                         */
    char short_name;  /* 0 if none                                      */
    bool has_arg;
    int id; /* > 0, returned by cli_next                      */
} cli_opt;

#define CLI_OPT_HELP 1000 /* every command accepts -h / --help          */

typedef struct cli_args {
    const char *command;
    int argc;
    char **argv;
    int index;         /* next argv element to look at                   */
    bool only_pos;     /* after "--"                                     */
    const char *value; /* the option's argument or the positional       */
} cli_args;

#define CLI_NEXT_END 0
#define CLI_NEXT_POS (-1)
#define CLI_NEXT_ERR (-2)

/* argv[0] is the command name and is skipped. */
void cli_args_init(cli_args *a, const char *command, int argc, char **argv);
/* The id of the next option (value holds its argument), CLI_NEXT_POS for a
 * positional argument (in value), CLI_NEXT_END, or CLI_NEXT_ERR after
 * printing a usage error. Accepts --name=value, --name value, -x value,
 * "--" and "-" (a positional). */
int cli_next(cli_args *a, const cli_opt *opts);

/* Numbers: false (after a usage error) unless the whole string parses.
 * u64 accepts a k/M/G suffix (powers of 1000) and decimal or scientific
 * forms of whole numbers (1e6, 1.5M). */
bool cli_parse_u64(const char *command, const char *opt, const char *s,
                   uint64_t *out);
bool cli_parse_fpr(const char *command, const char *opt, const char *s,
                   double *out);
/* A finite number in [lo, hi]; false after a usage error naming opt. */
bool cli_parse_real(const char *command, const char *opt, const char *s,
                    double lo, double hi, double *out);

/* ---- errors (util.c) ------------------------------------------------------ */

/* "TOOL: " fmt "\n" on stderr. */
void cli_error(const char *fmt, ...) CLI_PRINTF(1, 2);
/* "TOOL: WHAT: <amq_strerror> (at byte N: <diag>)" on stderr; the
 * parenthesis only when diag carries a message. Returns CLI_EXIT_ERR. */
int cli_status_error(const char *what, amq_status st, const amq_diag *diag);

/* amq_filter_describe into a malloc'ed string (NULL if out of memory). */
char *cli_describe(const amq_filter *f);

/* The registered types having every capability bit in `caps` and none in
 * `without`, as "a, b, c" in a malloc'ed string (for "types that can ..."
 * hints; NULL if out of memory). */
char *cli_types_with(uint32_t caps, uint32_t without);

/* ---- JSON (json.c) -------------------------------------------------------- */

/* A JSON number: the shortest decimal that reads back as exactly v
 * (9.0177536, not 9.0177536000000007); null when v is not finite. */
void cli_json_number(FILE *out, double v);
/* A JSON string of s (NULL: ""), or of n bytes: '"', '\\' and control
 * characters escaped, and bytes outside valid UTF-8 as \u00XX. */
void cli_json_string(FILE *out, const char *s);
void cli_json_bytes(FILE *out, const void *bytes, size_t n);

/* A writer: open objects and arrays, name members, close; commas and
 * layout are its business. Compact: one line a document (JSON Lines for a
 * stream of records); pretty: a member a line. Every key argument is NULL
 * for an array element or the document itself. */
#define CLI_JSON_DEPTH 8
typedef struct cli_json {
    FILE *out;
    bool pretty;
    int depth;
    char kind[CLI_JSON_DEPTH]; /* '{' or '['                       */
    bool comma[CLI_JSON_DEPTH];
} cli_json;

void cli_json_init(cli_json *j, FILE *out, bool pretty);
void cli_json_open(cli_json *j, const char *key, char bracket); /* { or [ */
void cli_json_close(cli_json *j); /* the outermost ends its line */
void cli_json_num(cli_json *j, const char *key, double v);
void cli_json_u64(cli_json *j, const char *key, uint64_t v);
void cli_json_i64(cli_json *j, const char *key, int64_t v);
void cli_json_bool(cli_json *j, const char *key, bool v);
void cli_json_null(cli_json *j, const char *key);
void cli_json_str(cli_json *j, const char *key, const char *s);
void cli_json_key_bytes(cli_json *j, const char *key, const void *p, size_t n);

/* The keys a filter holds: its items, but a summing maplet's fingerprints
 * (its items are the sum of its values). */
uint64_t cli_filter_keys(const amq_filter *f);

/* The over-capacity policy of every command that writes a filter: when f
 * holds more keys than its capacity and its certified bound exceeds its
 * target, a warning naming file and what to do; returns CLI_EXIT_OVER
 * then, else CLI_EXIT_OK. */
int cli_check_capacity(const amq_filter *f, const char *file);

/* A note on stderr when f forgets old keys by design (AMQ_CAP_FORGETS):
 * a user of a "no false negatives" tool must not be surprised. */
void cli_note_forgets(const amq_filter *f);

/* After AMQ_ERR_FULL on adding key (the filter unchanged): a hint line
 * when the key is already in it several times (a cuckoo table holds at
 * most 8 copies of one key). True if the hint was printed. */
bool cli_explain_full(const amq_filter *f, const uint8_t *key, size_t len);

/* After AMQ_ERR_FULL on adding key to *f: a qf goes on as an eqf holding
 * what it held (amq_eqf_from_qf), *f replaced, the key added (*st its
 * status) and a note on stderr naming `file` unless quiet. False (nothing
 * changed) for any other filter or without memory. */
bool cli_grow_full(amq_filter **f, const char *file, bool quiet,
                   const uint8_t *key, size_t len, amq_status *st);

/* ---- time and progress (util.c) ----------------------------------------- */

/* CLOCK_MONOTONIC in seconds. */
double cli_now(void);

typedef struct cli_progress {
    bool enabled; /* stderr is a terminal, or forced                     */
    bool shown;   /* something was drawn and must be cleared           */
    const char *label;
    uint64_t total; /* 0: unknown                                         */
    bool bytes;     /* done and total count input bytes (keys beside)   */
    uint64_t keys;
    double start, last;
    struct cli_ticker *ticker; /* redraws a phase that cannot tick      */
} cli_progress;

/* Whether progress is drawn: CLI_PROGRESS_AUTO when stderr is a terminal
 * (the default), or forced on (--progress) or off (--quiet). */
#define CLI_PROGRESS_AUTO 0
#define CLI_PROGRESS_ON 1
#define CLI_PROGRESS_OFF 2
void cli_progress_set_mode(int mode);

void cli_progress_init(cli_progress *p, const char *label, uint64_t total);
/* Cheap to call for every item: redraws at most ten times a second and only
 * once the task has run for half a second. */
void cli_progress_tick(cli_progress *p, uint64_t done);
/* Progress through an input of `size` bytes (cli_keys_size; 0: unknown,
 * then keys are counted): each tick reads how far the keys have come. */
void cli_progress_init_bytes(cli_progress *p, const char *label, uint64_t size);
struct cli_keys;
void cli_progress_tick_keys(cli_progress *p, const struct cli_keys *k);
/* The same for any input: `keys` read so far, offset(in) its byte
 * position, asked only when a redraw is due. */
void cli_progress_tick_input(cli_progress *p, uint64_t keys,
                             uint64_t (*offset)(const void *), const void *in);
/* The next phase of the same task (say reading, constructing, writing):
 * the label and total change and the clock runs on. A phase with total 0
 * is one long call that cannot tick (amq_builder_finish, a save): a
 * ticker thread redraws it with the seconds elapsed until the next phase
 * or cli_progress_done, so a long construction is visibly alive. */
void cli_progress_phase(cli_progress *p, const char *label, uint64_t total);
void cli_progress_done(cli_progress *p);

/* ---- key input (io.c) ----------------------------------------------------- */

/* Keys one per line (trailing "\n" and "\r" stripped; an empty line is the
 * empty key) or, with binary, little-endian u64 keys of 8 bytes each; or
 * the keys given on the command line (--key K). A file or pipe that starts
 * with the gzip magic is decompressed first (concatenated members too). */
typedef struct cli_keys {
    const char *const
        *list; /* command-line keys, when not NULL                 */
    size_t list_n;
    const char *name; /* for messages: the path or "<stdin>"              */
    bool binary;
    bool skip_empty;
    uint64_t count; /* keys returned so far                             */
    uint64_t line;  /* text: line number of the last key                */
    int fd;         /* the input (stdin: not closed)                    */
    bool owns_fd;
    bool reading;  /* in is open                                       */
    seq_reader in; /* the text layer: plain or gzip, split into lines  */
    uint8_t word[8];
} cli_keys;

/* path NULL or "-" reads stdin (with a note on stderr when it is a
 * terminal). Returns false after printing an error. */
bool cli_keys_open(cli_keys *k, const char *path, bool binary, bool skip_empty);
/* 1 and the key (valid until the next call), 0 at the end, -1 after
 * printing an error (read error, corrupt or truncated gzip, binary input
 * not a multiple of 8). */
int cli_keys_next(cli_keys *k, const uint8_t **key, size_t *len);
void cli_keys_close(cli_keys *k);
/* Keys from the command line: list[0..n) (not copied; argv outlives it).
 * --binary does not apply to them: they are byte strings. */
void cli_keys_open_list(cli_keys *k, const char *const *list, size_t n);
/* The input's size in bytes when it is a regular file (else 0), and how
 * far reading has come (for progress in percent). */
uint64_t cli_keys_size(const cli_keys *k);
uint64_t cli_keys_offset(const cli_keys *k);
/* "<name>: key N (line L)" for messages about the last key returned. */
void cli_keys_where(const cli_keys *k, char *buf, size_t cap);

/* Collect repeated --key values: false (after an error) if out of memory. */
typedef struct cli_key_list {
    const char **keys;
    size_t n, cap;
} cli_key_list;
bool cli_key_list_push(cli_key_list *l, const char *key);
void cli_key_list_free(cli_key_list *l);

/* What the commands that read a filter FILE and keys share (query, add,
 * remove, count): `FILE [KEYFILE | --key K...]`, --binary, --skip-empty.
 * Put CLI_KEY_SOURCE_OPTIONS in the command's option table and offer every
 * option and positional to cli_key_source_take first. */
#define CLI_OPT_KEY 1001
#define CLI_OPT_BINARY 1002
#define CLI_OPT_SKIP_EMPTY 1003
#define CLI_KEY_SOURCE_OPTIONS                                                 \
    {"key", 0, true, CLI_OPT_KEY}, {"binary", 'b', false, CLI_OPT_BINARY}, {   \
        "skip-empty", 0, false, CLI_OPT_SKIP_EMPTY                             \
    }

typedef struct cli_key_source {
    const char *command;
    const char *file;  /* the filter file (first positional)             */
    const char *input; /* KEYFILE, or NULL: stdin unless --key           */
    cli_key_list keys; /* --key K, in order                              */
    bool binary, skip_empty;
} cli_key_source;

/* 1 if id (an option, or CLI_NEXT_POS) was the source's and is taken, 0 if
 * not, -1 after a usage error. */
int cli_key_source_take(cli_key_source *s, int id, const char *value);
/* After the last argument: -1 if consistent, else CLI_EXIT_ERR after a
 * usage error (no FILE, --key with KEYFILE, FILE and keys both stdin). */
int cli_key_source_check(const cli_key_source *s);
/* Open the keys; false after printing an error. */
bool cli_key_source_open(const cli_key_source *s, cli_keys *k);
/* Whether the keys are binary u64s (--binary applies to KEYFILE, never to
 * --key strings), to print them as numbers. */
bool cli_key_source_binary(const cli_key_source *s);
void cli_key_source_free(cli_key_source *s);

/* Print a key as the tool's text output does: its bytes, or for a binary
 * key (8 bytes) its decimal number; and as a JSON member "key" (a string,
 * or the number). */
void cli_print_key(FILE *out, const uint8_t *key, size_t len, bool binary);
void cli_json_key(cli_json *j, const uint8_t *key, size_t len, bool binary);
/* A record of a stream of keys: j opened (compact) on stdout as an object
 * holding the key; the caller adds its fields and closes it (one line). */
void cli_json_key_record(cli_json *j, const uint8_t *key, size_t len,
                         bool binary);

/* u64 from 8 little-endian bytes, and back. */
uint64_t cli_load_le64(const uint8_t *p);
void cli_store_le64(uint8_t *p, uint64_t v);

/* ---- filter files (io.c) ---------------------------------------------------- */

typedef struct cli_filter_file {
    amq_filter *filter;
    size_t file_len; /* the frame's bytes (a file loads only if exact)  */
    bool is_view;    /* mapped and read in place                        */
} cli_filter_file;

/* amq_filter_open_file: the file mapped and viewed in place (zero copy),
 * or read and loaded (pipes; "-" is stdin). Prints "TOOL: PATH: ..." and
 * returns false on error. */
bool cli_filter_open(cli_filter_file *ff, const char *path);
void cli_filter_close(cli_filter_file *ff);
/* A modifiable copy (amq_filter_load_file); prints and returns false on
 * error. */
bool cli_filter_load(const char *path, amq_filter **out);
/* Save f to path with amq_filter_save_file (atomic; 0600 when keyed), or
 * to stdout for "-". Prints and returns false on error. */
bool cli_filter_save(const amq_filter *f, const char *path);
/* "TOOL: PATH: ..." for a status from a file call: the system's reason for
 * AMQ_ERR_IO, else cli_status_error's form. Returns CLI_EXIT_ERR. */
int cli_file_error(const char *path, amq_status st, const amq_diag *diag);
/* Read a whole file (path NULL or "-": stdin) into a malloc'ed buffer the
 * caller frees. Prints "TOOL: PATH: ..." and returns false on error. */
bool cli_read_file(const char *path, uint8_t **out, size_t *len);

#endif
