/*
 * swf-worker.c - the `swf-worker` program: its command line, read with the
 * parser of every swf program (cli/args.h); the worker itself is
 * worker/cmd.c.
 */
#include <stdlib.h>

#include "cli/args.h"
#include "worker/cmd.h"

static const swf_cli_cmd_t worker_cmd = {
    "swf-worker",
    "--task-list NAME [--task-list NAME...] (--exec 'COMMAND' | --echo) [--concurrency N] "
    "[--identity ID] [--brokers HOST:PORT,...]",
    "Make any shell command an activity worker: for each task of the task lists, COMMAND runs "
    "under /bin/sh -c with the task's input (JSON) on standard input and its ids in the "
    "environment (SWF_TASK_TOKEN, SWF_EXECUTION_ID, SWF_ACTIVITY_ID, SWF_ACTIVITY_TYPE, "
    "SWF_STATE, SWF_ATTEMPT); what it prints on standard output (JSON) is the result. An exit "
    "status n != 0 fails the task as swf.ExitCode.<n>. Ctrl-C stops taking tasks, lets the "
    "running commands finish, and exits 0.",
    (const swf_cli_opt_t[]){
        {"--task-list", "NAME", SWF_CLI_REQUIRED | SWF_CLI_MANY,
         "a task list to serve (the Task's Resource), up to 16; the command reads which in "
         "SWF_ACTIVITY_TYPE",
         "swf-worker --task-list charge --exec ./charge.sh"},
        {"--exec", "COMMAND", 0, "the command to run for each task",
         "swf-worker --task-list resize --exec 'convert - -resize 50% -'"},
        {"--echo", NULL, 0, "answer each task with its input (for trying things out)",
         "swf-worker --task-list charge --echo"},
        {"--concurrency", "N", 0, "commands run at once per task list, 1 to 1024 (default 1)",
         "swf-worker --task-list charge --exec ./charge.sh --concurrency 8"},
        {"--identity", "ID", 0, "the worker's name in the history (default: host and process id)",
         "swf-worker --task-list charge --echo --identity charge-1"},
        {"--brokers", "HOST:PORT,...", 0, "the Kafka brokers (default: $SWF_KAFKA_BROKERS)",
         "swf-worker --task-list charge --echo --brokers kafka:9092"},
        {"--version", NULL, 0, "print the version and exit", "swf-worker --version"},
        SWF_CLI_OPTS_END},
    "Environment: SWF_KAFKA_BROKERS (the brokers, unless --brokers);\n"
    "SWF_KAFKA_SESSION_TIMEOUT_MS (how long the group waits for a silent worker before\n"
    "giving its tasks to the others); SWF_KAFKA_CONFIG_FILE (librdkafka properties).\n"
    "Failures and their error names: protocol/KAFKA.md.\n"};

int main(int argc, char **argv)
{
    swf_cli_args_t a;
    if (!swf_cli_args_parse(&worker_cmd, argc, argv, &a))
        return a.status;
    const char *lists[SWF_WORKER_CMD_TASK_LISTS_MAX];
    size_t n = 0;
    int pos = 0;
    for (const char *l; (l = swf_cli_args_next(&a, "--task-list", &pos)) != NULL; n++) {
        if (n == SWF_WORKER_CMD_TASK_LISTS_MAX)
            return swf_cli_args_usage(&a, "at most %d task lists", SWF_WORKER_CMD_TASK_LISTS_MAX);
        lists[n] = l;
    }
    const char *command = swf_cli_args_get(&a, "--exec");
    if ((command == NULL) == !swf_cli_args_has(&a, "--echo"))
        return swf_cli_args_usage(&a, "give exactly one of --exec and --echo");
    int64_t concurrency = 1;
    if (swf_cli_args_has(&a, "--concurrency") &&
        !swf_cli_args_int(&a, "--concurrency", 1, SWF_WORKER_CMD_CONCURRENCY_MAX, &concurrency))
        return a.status;
    const char *brokers = swf_cli_args_get(&a, "--brokers");
    if (brokers == NULL)
        brokers = getenv("SWF_KAFKA_BROKERS");
    if (brokers == NULL || brokers[0] == '\0')
        return swf_cli_args_usage(&a, "no Kafka brokers: set SWF_KAFKA_BROKERS or give --brokers");
    swf_worker_cmd_config_t cfg = {.task_lists = lists,
                                   .task_list_count = n,
                                   .command = command,
                                   .concurrency = (unsigned)concurrency,
                                   .identity = swf_cli_args_get(&a, "--identity"),
                                   .brokers = brokers};
    return swf_worker_cmd_run(&cfg);
}
