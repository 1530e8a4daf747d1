/*
 * args.c - one command-line parser and one help printer for every swf
 * program (args.h).
 *
 * Why not getopt_long: it prints its own messages ("unrecognized option")
 * without the command's name or a suggestion, accepts abbreviations that
 * silently change meaning when an option is added, and keeps global state
 * (optind) that in-process tests must reset. The tables here also carry the
 * help and examples, which getopt's cannot. The parser reads argv twice,
 * options first and then operands (--workflow-id, given anywhere, changes
 * which operand a word fills), and allocates nothing: values stay in argv,
 * and repeated ones are found again by the same reading
 * (swf_cli_args_next), so a command has nothing to free on any of its
 * exits.
 *
 * The layout of the help: the synopsis, the summary, then each operand and
 * option with its help text wrapped at 79 columns beside it (or below it
 * when the name is long) and its example under it. Notes are printed as
 * written.
 */
#include "cli/args.h"

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "protocol/json.h"

/* Help text starts in this column; the text wraps at WRAP_COLUMN. */
#define HELP_COLUMN 26
#define WRAP_COLUMN 79

static bool is_option(const swf_cli_opt_t *o)
{
    return o->name[0] == '-';
}

static size_t opts_count(const swf_cli_cmd_t *cmd)
{
    size_t n = 0;
    while (cmd->opts[n].name != NULL)
        n++;
    assert(n <= SWF_CLI_OPTS_MAX);
    return n;
}

/* The table index of the option named name[0..len), or -1. */
static int option_find(const swf_cli_cmd_t *cmd, const char *name, size_t len)
{
    for (int i = 0; cmd->opts[i].name != NULL; i++) {
        const swf_cli_opt_t *o = &cmd->opts[i];
        if (is_option(o) && strlen(o->name) == len && strncmp(o->name, name, len) == 0)
            return i;
    }
    return -1;
}

/* The table index of the k-th operand word's operand, or -1 for one too many. */
static int operand_for(const swf_cli_cmd_t *cmd, unsigned k)
{
    int last = -1;
    unsigned seen = 0;
    for (int i = 0; cmd->opts[i].name != NULL; i++) {
        if (is_option(&cmd->opts[i]))
            continue;
        if (seen++ == k)
            return i;
        last = i;
    }
    return last >= 0 && (cmd->opts[last].flags & SWF_CLI_MANY) ? last : -1;
}

static int index_of(const swf_cli_args_t *a, const char *name)
{
    for (int i = 0; a->cmd->opts[i].name != NULL; i++) {
        if (strcmp(a->cmd->opts[i].name, name) == 0)
            return i;
    }
    assert(!"no such option in the command's table");
    return -1;
}

/* ---- the synopsis and the help -------------------------------------------- */

static void synopsis_print(const swf_cli_cmd_t *cmd, FILE *out)
{
    fprintf(out, "%s", cmd->name);
    if (cmd->synopsis != NULL) {
        fprintf(out, " %s\n", cmd->synopsis);
        return;
    }
    for (int pass = 0; pass < 2; pass++) { /* operands, then options */
        for (const swf_cli_opt_t *o = cmd->opts; o->name != NULL; o++) {
            if (is_option(o) != (pass == 1) || (o->flags & SWF_CLI_HIDDEN))
                continue;
            bool req = o->flags & SWF_CLI_REQUIRED, many = o->flags & SWF_CLI_MANY;
            fprintf(out, " %s%s%s%s%s%s", req ? "" : "[", o->name, o->value ? " " : "",
                    o->value ? o->value : "", req ? "" : "]", many ? "..." : "");
        }
    }
    fputc('\n', out);
}

/* Writes text wrapped at WRAP_COLUMN, continuation lines indented to
 * `indent`; the first line starts at column `col`. */
static void wrap_print(FILE *out, const char *text, int col, int indent)
{
    const char *p = text;
    while (*p != '\0') {
        while (*p == ' ')
            p++;
        size_t word = strcspn(p, " ");
        if (word == 0)
            break;
        if (col > indent && col + 1 + (int)word > WRAP_COLUMN) {
            fprintf(out, "\n%*s", indent, "");
            col = indent;
        } else if (col > indent) {
            fputc(' ', out);
            col++;
        }
        fwrite(p, 1, word, out);
        col += (int)word;
        p += word;
    }
    fputc('\n', out);
}

static void entry_print(FILE *out, const char *name, const char *value, const char *help,
                        const char *example)
{
    int col = fprintf(out, "  %s%s%s", name, value ? " " : "", value ? value : "");
    if (col + 2 > HELP_COLUMN) {
        fputc('\n', out);
        col = 0;
    }
    fprintf(out, "%*s", HELP_COLUMN - col, "");
    wrap_print(out, help, HELP_COLUMN, HELP_COLUMN);
    if (example != NULL)
        fprintf(out, "%*se.g. %s\n", HELP_COLUMN, "", example);
}

void swf_cli_args_help(const swf_cli_cmd_t *cmd, FILE *out)
{
    fprintf(out, "usage: ");
    synopsis_print(cmd, out);
    fputc('\n', out);
    wrap_print(out, cmd->summary, 0, 0);
    fputc('\n', out);
    for (const swf_cli_opt_t *o = cmd->opts; o->name != NULL; o++) {
        if (o->flags & SWF_CLI_HIDDEN)
            continue;
        assert(o->example != NULL); /* every option is shown with an example */
        char help[1024];
        snprintf(help, sizeof(help), "%s%s%s", o->help,
                 (o->flags & SWF_CLI_REQUIRED) && is_option(o) ? " (required)" : "",
                 (o->flags & SWF_CLI_MANY) && is_option(o) ? " (may be repeated)" : "");
        entry_print(out, o->name, o->value, help, o->example);
    }
    entry_print(out, "-h, --help", NULL, "print this help and exit", NULL);
    if (cmd->notes != NULL)
        fprintf(out, "\n%s%s", cmd->notes,
                cmd->notes[0] && cmd->notes[strlen(cmd->notes) - 1] == '\n' ? "" : "\n");
}

int swf_cli_args_usage(swf_cli_args_t *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", a->cmd->name);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nusage: ");
    synopsis_print(a->cmd, stderr);
    fprintf(stderr, "'%s --help' explains every option.\n", a->cmd->name);
    a->status = 2;
    return a->status;
}

/* ---- "did you mean" --------------------------------------------------------- */

/* Edit distance with transpositions (optimal string alignment), capped at
 * names of 63 bytes. */
static size_t distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > 63 || m > 63)
        return 64;
    size_t d[64][64];
    for (size_t i = 0; i <= n; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= m; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= n; i++) {
        for (size_t j = 1; j <= m; j++) {
            size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            size_t best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < best)
                best = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    }
    return d[n][m];
}

const char *swf_cli_args_closest(const char *word, const char *const *names, size_t n)
{
    while (*word == '-')
        word++;
    const char *best = NULL;
    size_t best_d = SIZE_MAX, wlen = strlen(word);
    for (size_t i = 0; i < n; i++) {
        const char *name = names[i];
        while (*name == '-')
            name++;
        size_t d = distance(word, name);
        /* A beginning of a name ("--inp") is as good as one typo. */
        if (wlen >= 3 && strncmp(name, word, wlen) == 0 && d > 1)
            d = 1;
        if (d < best_d && d <= 2 && d * 2 < strlen(name)) {
            best = names[i];
            best_d = d;
        }
    }
    return best;
}

static int unknown_option(swf_cli_args_t *a, const char *word, size_t len)
{
    const char *names[SWF_CLI_OPTS_MAX + 1];
    size_t n = 0;
    for (const swf_cli_opt_t *o = a->cmd->opts; o->name != NULL; o++) {
        if (is_option(o) && !(o->flags & SWF_CLI_HIDDEN))
            names[n++] = o->name;
    }
    names[n++] = "--help";
    char w[128];
    snprintf(w, sizeof(w), "%.*s", (int)(len < 127 ? len : 127), word);
    const char *close = swf_cli_args_closest(w, names, n);
    if (close != NULL)
        return swf_cli_args_usage(a, "unknown option '%s' (did you mean %s?)", w, close);
    return swf_cli_args_usage(a, "unknown option '%s'", w);
}

/* ---- parsing ------------------------------------------------------------------ */

/* One word of the command line, as the parser reads it. */
typedef struct token {
    int opt;           /* table index; OPERAND_WORD; DASHDASH */
    const char *value; /* the value ("" for a flag), or the operand word */
} token_t;

#define OPERAND_WORD (-3)
#define DASHDASH (-2)

/* True when `word` names an option of the table (or --help): then it is
 * not taken as the value of the option before it. */
static bool names_option(const swf_cli_cmd_t *cmd, const char *word)
{
    if (strncmp(word, "--", 2) != 0 || word[2] == '\0')
        return false;
    size_t len = strcspn(word, "=");
    return option_find(cmd, word, len) >= 0 || strncmp(word, "--help", len) == 0;
}

/* Reads the word at *i (advancing past a value); `dashdash` tells whether
 * `--` was seen. Returns false on a usage error (reported). */
static bool token_read(swf_cli_args_t *a, int *i, bool *dashdash, token_t *t)
{
    char *w = a->argv[*i];
    if (!*dashdash && strcmp(w, "--") == 0) {
        *dashdash = true;
        t->opt = DASHDASH;
        return true;
    }
    if (*dashdash || w[0] != '-' || w[1] == '\0') {
        t->opt = OPERAND_WORD;
        t->value = w;
        return true;
    }
    size_t len = strcspn(w, "=");
    t->opt = w[1] == '-' ? option_find(a->cmd, w, len) : -1;
    if (t->opt < 0) {
        unknown_option(a, w, len);
        return false;
    }
    const swf_cli_opt_t *o = &a->cmd->opts[t->opt];
    if (o->value == NULL) {
        if (w[len] == '=') {
            swf_cli_args_usage(a, "option '%s' takes no value", o->name);
            return false;
        }
        t->value = "";
    } else if (w[len] == '=') {
        t->value = w + len + 1;
    } else if (*i + 1 < a->argc && !names_option(a->cmd, a->argv[*i + 1])) {
        t->value = a->argv[++*i];
    } else {
        swf_cli_args_usage(a, "option '%s' needs a value (%s)", o->name, o->value);
        return false;
    }
    return true;
}

static bool help_asked(const swf_cli_args_t *a)
{
    for (int i = 1; i < a->argc; i++) {
        const char *w = a->argv[i];
        if (strcmp(w, "--") == 0)
            return false;
        if (strcmp(w, "--help") == 0 || strcmp(w, "-h") == 0)
            return true;
    }
    return false;
}

/* The option that stands for the first operand, given: then the operand
 * words fill the operands after it. NULL when none was given. */
static const swf_cli_opt_t *first_operand_replaced(const swf_cli_args_t *a)
{
    for (int k = 0; a->cmd->opts[k].name != NULL; k++) {
        if ((a->cmd->opts[k].flags & SWF_CLI_FOR_OPERAND) && a->count[k] > 0)
            return &a->cmd->opts[k];
    }
    return NULL;
}

bool swf_cli_args_parse(const swf_cli_cmd_t *cmd, int argc, char **argv, swf_cli_args_t *out)
{
    memset(out, 0, sizeof(*out));
    out->cmd = cmd;
    out->argc = argc;
    out->argv = argv;
    size_t n = opts_count(cmd);
    if (help_asked(out)) {
        swf_cli_args_help(cmd, stdout);
        return false;
    }
    /* Options first, then the operands: which operand a word fills
     * depends on options that may come after it. */
    for (int pass = 0; pass < 2; pass++) {
        bool dashdash = false;
        unsigned operands = 0;
        const swf_cli_opt_t *replaced = pass == 1 ? first_operand_replaced(out) : NULL;
        out->skip = replaced != NULL;
        for (int i = 1; i < argc; i++) {
            token_t t;
            if (!token_read(out, &i, &dashdash, &t))
                return false;
            if (t.opt == DASHDASH || (pass == 1) != (t.opt == OPERAND_WORD))
                continue;
            if (t.opt == OPERAND_WORD) {
                t.opt = operand_for(cmd, operands++ + out->skip);
                if (t.opt < 0 && replaced != NULL) {
                    swf_cli_args_usage(out, "unexpected argument '%s' (%s stands for %s)", t.value,
                                       replaced->name, cmd->opts[operand_for(cmd, 0)].name);
                    return false;
                }
                if (t.opt < 0) {
                    swf_cli_args_usage(out, "unexpected argument '%s'", t.value);
                    return false;
                }
            } else {
                const swf_cli_opt_t *o = &cmd->opts[t.opt];
                if (o->value != NULL && out->count[t.opt] > 0 && !(o->flags & SWF_CLI_MANY)) {
                    swf_cli_args_usage(out, "option '%s' given twice", o->name);
                    return false;
                }
            }
            out->value[t.opt] = t.value;
            out->count[t.opt]++;
        }
    }
    int version = option_find(cmd, "--version", 9);
    if (version >= 0 && cmd->opts[version].value == NULL && out->count[version] > 0) {
        printf("%s %s\n", cmd->name, SWF_VERSION);
        return false;
    }
    for (size_t k = 0; k < n; k++) {
        const swf_cli_opt_t *o = &cmd->opts[k];
        bool replaced = out->skip && (int)k == operand_for(cmd, 0);
        if ((o->flags & SWF_CLI_REQUIRED) && out->count[k] == 0 && !replaced) {
            swf_cli_args_usage(out, "missing %s", o->name);
            return false;
        }
    }
    return true;
}

/* ---- values ------------------------------------------------------------------- */

const char *swf_cli_args_get(const swf_cli_args_t *a, const char *name)
{
    return a->value[index_of(a, name)];
}

bool swf_cli_args_has(const swf_cli_args_t *a, const char *name)
{
    return a->count[index_of(a, name)] > 0;
}

unsigned swf_cli_args_count(const swf_cli_args_t *a, const char *name)
{
    return a->count[index_of(a, name)];
}

const char *swf_cli_args_next(const swf_cli_args_t *a, const char *name, int *pos)
{
    int want = index_of(a, name);
    /* The command line parsed once already: read it again, from the start
     * (which operand a word fills depends on every word before it). */
    swf_cli_args_t again = *a;
    bool dashdash = false;
    unsigned operands = 0;
    int seen = 0;
    for (int i = 1; i < a->argc; i++) {
        token_t t;
        if (!token_read(&again, &i, &dashdash, &t))
            return NULL; /* not reached: the line parsed before */
        if (t.opt == DASHDASH)
            continue;
        if (t.opt == OPERAND_WORD)
            t.opt = operand_for(a->cmd, operands++ + a->skip);
        if (t.opt == want && seen++ == *pos) {
            (*pos)++;
            return t.value;
        }
    }
    return NULL;
}

bool swf_cli_args_int(swf_cli_args_t *a, const char *name, int64_t min, int64_t max, int64_t *out)
{
    const char *v = swf_cli_args_get(a, name);
    assert(v != NULL);
    char *end = NULL;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    if (end == v || *end != '\0' || errno != 0 || n < min || n > max) {
        swf_cli_args_usage(a, "%s '%s': expected a whole number from %lld to %lld", name, v,
                           (long long)min, (long long)max);
        return false;
    }
    *out = n;
    return true;
}

/* ---- JSON arguments -------------------------------------------------------------- */

static bool file_exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && !S_ISDIR(sb.st_mode);
}

swf_error_t *swf_cli_json_arg(const char *what, const char *text, size_t max_bytes,
                              json_object **out)
{
    *out = NULL;
    const char *file = NULL;
    swf_error_t *err = NULL;
    if (text[0] == '@') {
        file = text + 1;
    } else {
        err = swf_json_parse_named(what, text, strlen(text), max_bytes, out);
        if (err == NULL || swf_error_code(err) != SWF_E_INPUT)
            return err;
        if (strcmp(text, "-") == 0 || file_exists(text)) {
            file = text;
        } else if (strchr("{[\"-0123456789", text[0]) == NULL) {
            /* Not meant as JSON: most likely a file name with a typo. */
            swf_error_free(err);
            return swf_error_new(SWF_E_INPUT, NULL,
                                 "%s '%s': no such file, and not JSON (a JSON string needs its "
                                 "quotes: '\"%s\"')",
                                 what, text, text);
        } else {
            return err;
        }
        swf_error_free(err);
    }
    err = swf_json_read_file(file, max_bytes, out);
    if (err != NULL && swf_error_code(err) == SWF_E_IO)
        swf_error_prefix(err, "%s", what);
    return err;
}
