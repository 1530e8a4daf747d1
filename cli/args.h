/*
 * args.h - the one command-line parser of every swf program: `swf COMMAND`,
 * swf-decider, swf-history and swf-worker.
 *
 * A command declares what it takes in a table (swf_cli_opt_t): each option
 * or operand with its value's placeholder, whether it is required or may
 * repeat, a line of help and an example. swf_cli_args_parse() checks a
 * command line against the table and fills a swf_cli_args_t; the command
 * then asks it for values by name. The same table prints `--help`, so what
 * a command accepts and what its help says cannot drift apart.
 *
 * The parser's rules, the same everywhere:
 *   - options are `--name VALUE` or `--name=VALUE`; a flag takes no value;
 *     options and operands may come in any order; `--` ends the options;
 *     `-` alone is an operand (standard input, where a command reads one);
 *   - an unknown option is named, with the closest known one
 *     (`swf start: unknown option '--inptu' (did you mean --input?)`); so is
 *     an option without its value, a missing required option or operand,
 *     and an operand too many; each is a usage error: a message, the
 *     synopsis, a pointer to --help on stderr, exit status 2;
 *   - `--help` or `-h` prints the help on stdout and exits 0, before
 *     anything else is checked or done (a daemon never starts);
 *   - `--version`, when the table has it as a flag, prints the program and
 *     SWF_VERSION and exits 0 (`swf start --version N` is a value, and is
 *     the command's own).
 *
 * Ownership: tables are static data; a swf_cli_args_t borrows the table
 * and argv, allocates nothing and needs no freeing. Thread-safety: none
 * needed (a command line is parsed once, on one thread).
 */
#ifndef SWF_CLI_ARGS_H
#define SWF_CLI_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <json-c/json.h>

#include "protocol/error.h"

#ifndef SWF_VERSION
#define SWF_VERSION "unknown"
#endif

enum {
    SWF_CLI_REQUIRED = 1, /* must be given */
    SWF_CLI_MANY = 2,     /* may be given more than once (an operand: one or more words) */
    SWF_CLI_HIDDEN = 4,   /* accepted but left out of the help */
    /* An option that stands for the first operand (--workflow-id for ID):
     * when it is given, the operand words fill the operands after that
     * one (`swf signal --workflow-id order-7 go`: go is NAME). */
    SWF_CLI_FOR_OPERAND = 8,
};

/* One option (name starts with "--") or operand (a placeholder such as
 * "NAME" or "FILE"). Operands take the command line's words in table order;
 * only the last one may be SWF_CLI_MANY. */
typedef struct swf_cli_opt {
    const char *name;
    const char *value; /* an option's value placeholder ("JSON|@FILE"); NULL: a flag */
    unsigned flags;    /* SWF_CLI_REQUIRED, SWF_CLI_MANY, SWF_CLI_HIDDEN */
    const char *help;
    const char *example; /* a whole command line (NULL only when hidden) */
} swf_cli_opt_t;

/* The entry that ends a table, every field named so that no compiler
 * warns of a missing initializer. */
#define SWF_CLI_OPTS_END                                                                           \
    {                                                                                              \
        NULL, NULL, 0, NULL, NULL                                                                  \
    }

/* A program or command. */
typedef struct swf_cli_cmd {
    const char *name;          /* "swf start", "swf-worker": the prefix of every message */
    const char *synopsis;      /* after the name; NULL: made from the table */
    const char *summary;       /* what it does, a sentence or two */
    const swf_cli_opt_t *opts; /* ends with an entry whose name is NULL */
    const char *notes;         /* NULL, or paragraphs printed after the options */
} swf_cli_cmd_t;

/* Options and operands one table may hold. */
#define SWF_CLI_OPTS_MAX 24

typedef struct swf_cli_args {
    const swf_cli_cmd_t *cmd;
    int argc;
    char **argv;
    const char *value[SWF_CLI_OPTS_MAX]; /* the last one given; "" for a flag */
    unsigned count[SWF_CLI_OPTS_MAX];    /* how often each was given */
    unsigned skip;                       /* 1 when an option stands for the first operand */
    int status; /* when parsing returned false: the exit status (0 after --help) */
} swf_cli_args_t;

/* Parses argv[1..argc) (argv[0] is the command's own name) against cmd's
 * table. Returns true when the command is to run; false when it is done:
 * after --help or --version (status 0) or a usage error, already reported
 * on stderr (status 2). */
bool swf_cli_args_parse(const swf_cli_cmd_t *cmd, int argc, char **argv, swf_cli_args_t *out);

/* The value of an option or operand (the last one given), or NULL when it
 * was not given. For a flag, "" when given. `name` must be in the table
 * (an assertion). */
const char *swf_cli_args_get(const swf_cli_args_t *a, const char *name);

/* True when the option or operand was given. */
bool swf_cli_args_has(const swf_cli_args_t *a, const char *name);

/* How many times it was given. */
unsigned swf_cli_args_count(const swf_cli_args_t *a, const char *name);

/* Each value of a SWF_CLI_MANY option or operand in command-line order:
 * start with *pos = 0; NULL after the last. */
const char *swf_cli_args_next(const swf_cli_args_t *a, const char *name, int *pos);

/* The whole number given to `name` (which must have been given), checked
 * to lie in [min, max]. On failure reports a usage error naming the option
 * and sets a->status; returns false. */
bool swf_cli_args_int(swf_cli_args_t *a, const char *name, int64_t min, int64_t max, int64_t *out);

/* Reports a usage error of the command's own ("--dev and --history do not
 * go together"): the message, the synopsis, the pointer to --help. Sets
 * a->status to 2 and returns it. */
int swf_cli_args_usage(swf_cli_args_t *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Prints the command's help (synopsis, summary, every option with its help
 * and example, notes) to `out`. */
void swf_cli_args_help(const swf_cli_cmd_t *cmd, FILE *out);

/* The closest of `n` names to `word` for "did you mean", or NULL when none
 * is close. */
const char *swf_cli_args_closest(const char *word, const char *const *names, size_t n);

/*
 * JSON given on the command line, the rule of every option and operand
 * that takes JSON (swf start --input, swf run --input, signal, task-success,
 * ...): `@FILE` reads FILE (`@-` standard input); otherwise the text itself
 * when it is JSON; otherwise, when a file of that name exists, that file
 * (so `--input input.json` works; `@` makes a file certain). Errors name
 * `what` (the option) or the file, with the line and column of a syntax
 * error. *out gets a new reference.
 */
swf_error_t *swf_cli_json_arg(const char *what, const char *text, size_t max_bytes,
                              json_object **out);

/* The help line of the rule above, for tables. */
#define SWF_CLI_JSON_HELP                                                                          \
    "JSON text, @FILE (@- reads standard input), or the name of an existing file when the text "   \
    "is not JSON"

#endif
