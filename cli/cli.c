/*
 * cli.c - dispatch of `swf COMMAND ...` to the command functions.
 *
 * The table below is the whole list of commands; `swf help` prints it,
 * `swf help COMMAND` is `swf COMMAND --help` (each command's options are in
 * its own table, cli/args.h), and `swf --version` prints the version.
 *
 * It also holds the one way a command reports an error (swf_cli_fail), so
 * that every command prints the same two lines and maps an error's code to
 * the same exit status.
 */
#include "cli/cli.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "cli/args.h"

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
} command_t;

static const command_t commands[] = {
    {"dev", swf_cli_dev},
    {"validate", swf_cli_validate},
    {"convert", swf_cli_convert},
    {"run", swf_cli_run},
    {"db", swf_cli_db},
    {"register", swf_cli_register},
    {"start", swf_cli_start},
    {"describe", swf_cli_describe},
    {"list", swf_cli_list},
    {"history", swf_cli_history},
    {"export", swf_cli_export},
    {"import", swf_cli_import},
    {"admin", swf_cli_admin},
    {"replay", swf_cli_replay},
    {"timeline", swf_cli_timeline},
    {"graph", swf_cli_graph},
    {"task-success", swf_cli_task_success},
    {"task-failure", swf_cli_task_failure},
    {"task-heartbeat", swf_cli_task_heartbeat},
    {"signal", swf_cli_signal},
    {"send-event", swf_cli_send_event},
    {"cancel", swf_cli_cancel},
    {"terminate", swf_cli_terminate},
    {"redrive", swf_cli_redrive},
};

/* `swf help`: each form of a command and what it does, in the order above. */
static const struct {
    const char *synopsis;
    const char *what;
} help[] = {
    {"dev [--deciders N]", "PostgreSQL, Kafka (mock), swf-history and deciders in one process"},
    {"validate FILE...", "check ASL and Serverless Workflow definitions"},
    {"convert DEFINITION", "print the interpreter form of a Serverless Workflow document"},
    {"run --local DEFINITION [--input JSON|@FILE] [--mocks FILE] [--events FILE] [--history]",
     "run an execution in-process"},
    {"run --dev DEFINITION [--input JSON|@FILE] [--mocks FILE] [--events FILE]",
     "run an execution on swf dev's system (the running one when SWF_DATABASE_URL and "
     "SWF_KAFKA_BROKERS are set)"},
    {"db migrate", "create or upgrade the schema"},
    {"register NAME FILE", "register a new version of a state machine"},
    {"start NAME [--input JSON|@FILE] [--workflow-id ID] [--version N] [--wait]",
     "start an execution, print its id (--wait: follow it to its end)"},
    {"start NAME --inputs FILE|- [--version N]",
     "start an execution per JSON line of FILE, print their ids in order"},
    {"describe ID [--json]", "show one execution"},
    {"list [--status S] [--state-machine NAME] [--limit N] [--json]",
     "list executions, newest first"},
    {"history ID [--json] [--reverse]", "print an execution's events"},
    {"export ID [FILE]", "write a history as JSON lines"},
    {"import FILE [--force]", "load a history written by export"},
    {"admin rebuild-projections", "recompute projections from the events"},
    {"admin check (ID... | --all)",
     "check histories: dense ids, one close, one result per activity, replay (exit 1 on a "
     "problem)"},
    {"replay (ID | --file HISTORY) [--until EVENT_ID] [--step] [--definition NEW.json] [--json]",
     "re-derive every decision, report the first divergence"},
    {"timeline (ID | --file HISTORY) [--json]", "the execution as ASL states entered and exited"},
    {"graph (DEFINITION | ID) [--history HISTORY] [--svg]",
     "Graphviz DOT of a state machine, coloured by an execution"},
    {"task-success TOKEN JSON|@FILE",
     "answer an activity (or a .waitForTaskToken Task) with a result"},
    {"task-failure TOKEN [--error ERROR] [--cause CAUSE]", "answer an activity with an error"},
    {"task-heartbeat TOKEN [--details JSON|@FILE]", "record a heartbeat of a running activity"},
    {"signal ID NAME [--input JSON|@FILE]", "send a signal to an open execution"},
    {"send-event STATE_MACHINE EVENT",
     "route a CloudEvent to a Serverless Workflow's instances, or start one"},
    {"cancel ID [--cause TEXT]", "ask an open execution to cancel"},
    {"terminate ID [--reason R] [--details D]", "end an open execution now"},
    {"redrive ID", "run a failed, timed-out or terminated execution again from where it stopped"},
};

/* Descriptions start in this column; a longer synopsis has its
 * description on the next line, in the same column. */
#define HELP_COLUMN 32

static void usage(FILE *out)
{
    fprintf(out, "usage: swf COMMAND [ARGS...]\n"
                 "       swf COMMAND --help   (or swf help COMMAND) every option of a command, "
                 "with examples\n"
                 "       swf --version\n\n"
                 "ID is an execution id; each command that takes one also takes --workflow-id "
                 "WORKFLOW_ID,\nthe open execution of that workflow id (else its latest).\n\n"
                 "commands:\n");
    for (size_t i = 0; i < sizeof(help) / sizeof(help[0]); i++) {
        int width = (int)strlen(help[i].synopsis) + 2;
        if (width + 2 <= HELP_COLUMN)
            fprintf(out, "  %s%*s%s\n", help[i].synopsis, HELP_COLUMN - width, "", help[i].what);
        else
            fprintf(out, "  %s\n%*s%s\n", help[i].synopsis, HELP_COLUMN, "", help[i].what);
    }
}

static const command_t *command_find(const char *name)
{
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        if (strcmp(name, commands[i].name) == 0)
            return &commands[i];
    }
    return NULL;
}

static int unknown_command(const char *name)
{
    const char *names[sizeof(commands) / sizeof(commands[0])];
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        names[i] = commands[i].name;
    const char *close = swf_cli_args_closest(name, names, sizeof(names) / sizeof(names[0]));
    if (close != NULL)
        fprintf(stderr, "swf: unknown command \"%s\" (did you mean %s?)\n", name, close);
    else
        fprintf(stderr, "swf: unknown command \"%s\"\n", name);
    usage(stderr);
    return SWF_EXIT_USAGE;
}

int swf_cli_main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return SWF_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("swf %s\n", SWF_VERSION);
        return SWF_EXIT_OK;
    }
    if (strcmp(argv[1], "help") == 0 && argc > 2) {
        /* `swf help COMMAND`: the command's own --help. */
        const command_t *c = command_find(argv[2]);
        if (c == NULL)
            return unknown_command(argv[2]);
        char *args[] = {argv[2], "--help", NULL};
        return c->run(2, args);
    }
    if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "-h") == 0) {
        usage(stdout);
        return SWF_EXIT_OK;
    }
    {
        const command_t *c = command_find(argv[1]);
        if (c != NULL) {
            int code = c->run(argc - 1, argv + 1);
            /* Output that did not reach stdout (a full disk, a closed
             * descriptor) is a failure, whatever the command concluded: a
             * cut history or report must not pass for a whole one. */
            errno = 0;
            bool bad = fflush(stdout) != 0 || ferror(stdout);
            if (bad && (code == SWF_EXIT_OK || code == SWF_EXIT_NO)) {
                int e = errno;
                fprintf(stderr, "swf %s: writing the output failed%s%s\n", argv[1], e ? ": " : "",
                        e ? strerror(e) : "");
                code = SWF_EXIT_ERROR;
            }
            clearerr(stdout);
            return code;
        }
    }
    return unknown_command(argv[1]);
}

/* ---- reporting an error ------------------------------------------------------ */

int swf_cli_fail_status(const char *cmd, swf_error_t *err, int status)
{
    fprintf(stderr, "swf %s: %s\n", cmd, swf_error_message(err));
    if (swf_error_cause(err) != NULL)
        fprintf(stderr, "  %s\n", swf_error_cause(err));
    swf_error_free(err);
    return status;
}

int swf_cli_fail(const char *cmd, swf_error_t *err)
{
    int status;
    switch (swf_error_code(err)) {
    case SWF_E_INPUT:
    case SWF_E_LIMIT:
        status = SWF_EXIT_USAGE;
        break;
    case SWF_E_NOTFOUND:
    case SWF_E_CONFLICT:
        status = SWF_EXIT_NO;
        break;
    default:
        status = SWF_EXIT_ERROR;
    }
    return swf_cli_fail_status(cmd, err, status);
}
