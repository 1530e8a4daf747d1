/*
 * cli.h - the `swf` command line, as a library.
 *
 * main() only calls swf_cli_main(); every command is a function of its own
 * taking (argc, argv) with argv[0] the command name, writing its result to
 * stdout and its diagnostics to stderr, and returning the exit status. That
 * keeps each command testable in-process.
 *
 * Exit statuses: 0 success; 1 the command ran and the answer is "no" (an
 * invalid definition, a failed execution, a replay mismatch); 2 a usage
 * error; 3 an operating error (a file, the database, Kafka).
 */
#ifndef SWF_CLI_H
#define SWF_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "cli/args.h"

enum {
    SWF_EXIT_OK = 0,
    SWF_EXIT_NO = 1,
    SWF_EXIT_USAGE = 2,
    SWF_EXIT_ERROR = 3,
};

int swf_cli_main(int argc, char **argv);

/* Reports a command's error on stderr as "swf CMD: message", with its cause
 * on the next line, and frees it (taken). swf_cli_fail returns the exit
 * status the error's code maps to: SWF_EXIT_USAGE for bad input or a limit
 * (the command line), SWF_EXIT_NO for not found or a conflict, else
 * SWF_EXIT_ERROR. swf_cli_fail_status returns `status` instead, for a
 * command whose input is a file rather than its command line (cli/cli.c). */
int swf_cli_fail(const char *cmd, swf_error_t *err);
int swf_cli_fail_status(const char *cmd, swf_error_t *err, int status);

/* One function per command (cli/<command>.c). */
int swf_cli_validate(int argc, char **argv);
int swf_cli_convert(int argc, char **argv);
int swf_cli_run(int argc, char **argv);
/* The PostgreSQL history (cli/db.c). */
int swf_cli_db(int argc, char **argv);
int swf_cli_register(int argc, char **argv);
int swf_cli_start(int argc, char **argv);
int swf_cli_describe(int argc, char **argv);
int swf_cli_list(int argc, char **argv);
int swf_cli_history(int argc, char **argv);
int swf_cli_export(int argc, char **argv);
int swf_cli_import(int argc, char **argv);
int swf_cli_admin(int argc, char **argv);
/* Debugging by replay (cli/replay.c, cli/timeline.c, cli/graph.c). */
int swf_cli_replay(int argc, char **argv);
int swf_cli_timeline(int argc, char **argv);
int swf_cli_graph(int argc, char **argv);
/* The distributed system in one process (cli/dev.c). */
int swf_cli_dev(int argc, char **argv);
/* Talking to a running execution through its Kafka inbox (cli/control.c). */
int swf_cli_task_success(int argc, char **argv);
int swf_cli_task_failure(int argc, char **argv);
int swf_cli_task_heartbeat(int argc, char **argv);
int swf_cli_signal(int argc, char **argv);
int swf_cli_cancel(int argc, char **argv);
int swf_cli_terminate(int argc, char **argv);
int swf_cli_redrive(int argc, char **argv);

/* Posts the `decide` message of a newly started execution to the inbox when
 * SWF_KAFKA_BROKERS is set (says on stderr when it is not). Returns an exit
 * status; the execution is started either way (cli/control.c). */
int swf_cli_decide_post(const char *execution_id);

/* The `decide` messages of many executions started by one command (`swf
 * start --inputs`, cli/start_inputs.c), on one producer made once: new
 * says on stderr when SWF_KAFKA_BROKERS is not set or the producer cannot
 * be made, and the poster then posts nothing. post_many produces one
 * message per id (borrowed) and waits once for all their delivery
 * reports; false when some were not delivered (said on stderr), and every
 * later call posts nothing (the executions are started either way:
 * swf-history's sweep hands them to a decider). */
typedef struct swf_cli_decide_poster swf_cli_decide_poster_t;
swf_cli_decide_poster_t *swf_cli_decide_poster_new(void);
bool swf_cli_decide_post_many(swf_cli_decide_poster_t *p, const char *const *ids, size_t n);
void swf_cli_decide_poster_free(swf_cli_decide_poster_t *p);

/* `swf start NAME --inputs FILE` (cli/start_inputs.c): one execution of
 * the state machine `name` at `version` (0: the latest) per line of `path`
 * ("-": standard input), after the whole file was checked. Returns the
 * exit status. */
int swf_cli_start_inputs(const char *name, int version, const char *path);

/* Sends one message (borrowed) to the inbox under the execution's key and
 * waits for its delivery (cli/control.c); ctx is unused. The shape of
 * decider/sw_route.h's swf_sw_route_send_fn. */
swf_error_t *swf_cli_inbox_post(void *ctx, const char *execution_id, json_object *msg);

/* The tasks an execution's definition schedules, each with the task list it
 * uses, as swf validate lists them ({"path", "state", "resource",
 * "taskList"}, the execution's prefix included), for swf describe
 * (cli/tasks.c); NULL for an execution recorded before task lists had a rule
 * (or on *err). The store is borrowed; the array is the caller's. */
struct swf_history_store;
json_object *swf_cli_execution_tasks(struct swf_history_store *s, const char *execution_id,
                                     swf_error_t **err);

/* `swf send-event` (cli/send_event.c). */
int swf_cli_send_event(int argc, char **argv);

/* Follows an execution by polling its history until it closes, writing one
 * line per event or state to `out`, then the result. Returns SWF_EXIT_OK when
 * it succeeded, SWF_EXIT_NO when it closed otherwise, SWF_EXIT_ERROR when the
 * database failed (cli/follow.c). */
int swf_cli_follow(const char *execution_id, FILE *out);

/* The execution a command names (cli/target.c): its operand ID, or the
 * execution --workflow-id names (the open one, else the one started last),
 * or neither when `file_option` (e.g. "--file", may be NULL) was given
 * instead; exactly one of the three, else a usage error. The table must
 * have ID and --workflow-id (SWF_CLI_OPTS_EXECUTION). Returns true with *id
 * set (malloc'd; NULL for the file); false, reported, with a->status the
 * exit status. */
bool swf_cli_args_execution(swf_cli_args_t *a, const char *file_option, char **id);

/* The execution of a workflow id: the open one, else the one started last
 * (*id malloc'd); false, reported, with a->status the exit status. */
bool swf_cli_args_execution_of(swf_cli_args_t *a, const char *workflow_id, char **id);

/* The table entries of ID and --workflow-id, for command `cmd` ("describe"). */
/* clang-format off */
#define SWF_CLI_OPTS_EXECUTION(cmd)                                                              \
    {"ID", NULL, 0, "the execution id (as swf start printed it)",                               \
     "swf " cmd " 3f2b8c1e-5d4a-4e8e-9a57-0c1d2e3f4a5b"},                                        \
    {"--workflow-id", "WORKFLOW_ID", SWF_CLI_FOR_OPERAND,                                         \
     "instead of ID: the open execution of this workflow id, else the one started last",         \
     "swf " cmd " --workflow-id order-7"}
/* clang-format on */

#endif
