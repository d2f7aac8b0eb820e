/*
 * cli.h — what the amq command-line tool's files share: exit codes, the
 * subcommand entry points, a small option parser, error reporting, key
 * input, filter files, atomic output, a progress bar and a clock.
 *
 * The tool uses only the public headers (amq/amq.h). Exit codes are part of
 * its interface: 0 success (query: some key may be a member), 1 query found
 * no member, 2 any error or bad usage.
 */
#ifndef AMQ_TOOLS_CLI_H
#define AMQ_TOOLS_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "amq/amq.h"

#define CLI_EXIT_OK 0
#define CLI_EXIT_NONE 1
#define CLI_EXIT_ERR 2

#if defined(__GNUC__)
#define CLI_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define CLI_PRINTF(f, a)
#endif

/* ---- subcommands (one file each) ---------------------------------------- */

int cli_cmd_build(int argc, char **argv);
int cli_cmd_query(int argc, char **argv);
int cli_cmd_info(int argc, char **argv);
int cli_cmd_help(int argc, char **argv);
int cli_cmd_demo(int argc, char **argv);
int cli_cmd_clock(int argc, char **argv);
int cli_cmd_cascade(int argc, char **argv);

/* help.c: print the help of a command (NULL: the overview) to out; false if
 * the command is unknown. */
bool cli_help_print(FILE *out, const char *command);
/* "amq CMD: message", the usage line and a pointer to `amq help CMD` on
 * stderr; returns CLI_EXIT_ERR. */
int cli_usage_error(const char *command, const char *fmt, ...)
    CLI_PRINTF(2, 3);

/* ---- option parsing (util.c) --------------------------------------------- */

typedef struct cli_opt {
    const char *name; /* long name without "--"                         */
    char short_name;  /* 0 if none                                      */
    bool has_arg;
    int id;           /* > 0, returned by cli_next                      */
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
 * u64 accepts a k/M/G suffix (powers of 1000). */
bool cli_parse_u64(const char *command, const char *opt, const char *s,
                   uint64_t *out);
bool cli_parse_fpr(const char *command, const char *opt, const char *s,
                   double *out);

/* ---- errors (util.c) ------------------------------------------------------ */

/* "amq: " fmt "\n" on stderr. */
void cli_error(const char *fmt, ...) CLI_PRINTF(1, 2);
/* "amq: WHAT: <amq_strerror> (at byte N: <diag>)" on stderr; the
 * parenthesis only when diag carries a message. Returns CLI_EXIT_ERR. */
int cli_status_error(const char *what, amq_status st, const amq_diag *diag);

/* amq_filter_describe into a malloc'ed string (NULL if out of memory). */
char *cli_describe(const amq_filter *f);

/* ---- time and progress (util.c) ----------------------------------------- */

/* CLOCK_MONOTONIC in seconds. */
double cli_now(void);

typedef struct cli_progress {
    bool enabled;  /* stderr is a terminal                                */
    bool shown;    /* something was drawn and must be cleared           */
    const char *label;
    uint64_t total; /* 0: unknown                                         */
    double start, last;
} cli_progress;

void cli_progress_init(cli_progress *p, const char *label, uint64_t total);
/* Cheap to call for every item: redraws at most ten times a second and only
 * once the task has run for half a second. */
void cli_progress_tick(cli_progress *p, uint64_t done);
void cli_progress_done(cli_progress *p);

/* ---- key input (io.c) ----------------------------------------------------- */

/* Keys one per line (trailing "\n" and "\r" stripped; an empty line is the
 * empty key) or, with binary, little-endian u64 keys of 8 bytes each. */
typedef struct cli_keys {
    FILE *fp;
    const char *name; /* for messages: the path or "<stdin>"              */
    bool binary;
    bool skip_empty;
    uint64_t count;   /* keys returned so far                             */
    uint64_t line;    /* text: line number of the last key                */
    char *buf;
    size_t cap;
} cli_keys;

/* path NULL or "-" reads stdin. Returns false after printing an error. */
bool cli_keys_open(cli_keys *k, const char *path, bool binary,
                   bool skip_empty);
/* 1 and the key (valid until the next call), 0 at the end, -1 after
 * printing an error (read error, binary input not a multiple of 8). */
int cli_keys_next(cli_keys *k, const uint8_t **key, size_t *len);
void cli_keys_close(cli_keys *k);

/* u64 from 8 little-endian bytes, and back. */
uint64_t cli_load_le64(const uint8_t *p);
void cli_store_le64(uint8_t *p, uint64_t v);

/* ---- filter files (io.c) ---------------------------------------------------- */

typedef struct cli_filter_file {
    amq_filter *filter;
    void *map;        /* the mmap'ed file a view reads from, or NULL     */
    size_t map_len;
    size_t file_len;
    bool is_view;
} cli_filter_file;

/* mmap the file and view it in place (zero copy); fall back to reading and
 * loading it (pipes, views refused). Prints "amq: PATH: ..." and returns
 * false on error. */
bool cli_filter_open(cli_filter_file *ff, const char *path);
void cli_filter_close(cli_filter_file *ff);

/* Write len bytes to path atomically (path.tmp, fsync, rename), mode 0600
 * when secret, else 0644 (both less the umask). "-" writes stdout. Prints
 * an error and returns false on failure (and removes path.tmp). */
bool cli_write_file(const char *path, const void *buf, size_t len,
                    bool secret);

#endif
