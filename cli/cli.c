/*
 * cli.c - dispatch of `swf COMMAND ...` to the command functions.
 *
 * The table below is the whole list of commands; `swf help` prints it.
 */
#include "cli/cli.h"

#include <string.h>

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *usage;
} command_t;

static const command_t commands[] = {
    {"dev", swf_cli_dev,
     "dev [--deciders N]            PostgreSQL, Kafka (mock), swf-history and deciders in one process"},
    {"validate", swf_cli_validate, "validate FILE...            check ASL definitions"},
    {"run", swf_cli_run,
     "run --local DEFINITION [--input FILE] [--mocks FILE] [--history]\n"
     "                               run an execution in-process"},
    {"db", swf_cli_db, "db migrate                  create or upgrade the schema"},
    {"register", swf_cli_register, "register NAME FILE          register a new version of a state machine"},
    {"start", swf_cli_start,
     "start NAME [--input JSON|@FILE] [--workflow-id ID] [--version N] [--wait]\n"
     "                               start an execution, print its id (--wait: follow it to its end)"},
    {"describe", swf_cli_describe, "describe ID [--json]        show one execution"},
    {"list", swf_cli_list,
     "list [--status S] [--state-machine NAME] [--limit N] [--json]\n"
     "                               list executions, newest first"},
    {"history", swf_cli_history, "history ID [--json] [--reverse]\n"
     "                               print an execution's events"},
    {"export", swf_cli_export, "export ID [FILE]            write a history as JSON lines"},
    {"import", swf_cli_import, "import FILE                 load a history written by export"},
    {"admin", swf_cli_admin,
     "admin rebuild-projections   recompute projections from the events\n"
     "  admin check (ID... | --all) check histories: dense ids, one close, one result per\n"
     "                               activity, replay (exit 1 on a problem)"},
    {"replay", swf_cli_replay,
     "replay (ID | --file HISTORY) [--until EVENT_ID] [--step] [--definition NEW.json] [--json]\n"
     "                               re-derive every decision, report the first divergence"},
    {"timeline", swf_cli_timeline,
     "timeline (ID | --file HISTORY) [--json]\n"
     "                               the execution as ASL states entered and exited"},
    {"graph", swf_cli_graph,
     "graph (DEFINITION | ID) [--history HISTORY] [--svg]\n"
     "                               Graphviz DOT of a state machine, coloured by an execution"},
    {"task-success", swf_cli_task_success,
     "task-success TOKEN JSON|@FILE\n"
     "                               answer an activity (or a .waitForTaskToken Task) with a result"},
    {"task-failure", swf_cli_task_failure,
     "task-failure TOKEN [--error ERROR] [--cause CAUSE]\n"
     "                               answer an activity with an error"},
    {"task-heartbeat", swf_cli_task_heartbeat,
     "task-heartbeat TOKEN [--details JSON|@FILE]\n"
     "                               record a heartbeat of a running activity"},
    {"signal", swf_cli_signal,
     "signal ID NAME [--input JSON|@FILE]\n"
     "                               send a signal to an open execution"},
    {"cancel", swf_cli_cancel, "cancel ID [--cause TEXT]    ask an open execution to cancel"},
    {"terminate", swf_cli_terminate,
     "terminate ID [--reason R] [--details D]\n"
     "                               end an open execution now"},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: swf COMMAND [ARGS...]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        fprintf(out, "  %s\n", commands[i].usage);
}

int swf_cli_main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return SWF_EXIT_USAGE;
    }
    if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(stdout);
        return SWF_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    }
    fprintf(stderr, "swf: unknown command \"%s\"\n", argv[1]);
    usage(stderr);
    return SWF_EXIT_USAGE;
}
