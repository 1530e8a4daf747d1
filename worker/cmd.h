/*
 * cmd.h - `swf-worker`: run a shell command (or echo) for each activity task.
 *
 * The program's whole logic is here so that it is a library function tests
 * can reason about; cli/bin/swf-worker.c reads the command line (with the
 * parser of every swf program, cli/args.h) and calls swf_worker_cmd_run().
 *
 * Ownership: the configuration is borrowed for the call.
 */
#ifndef SWF_WORKER_CMD_H
#define SWF_WORKER_CMD_H

#include <stddef.h>

/* Task lists one process may serve. */
#define SWF_WORKER_CMD_TASK_LISTS_MAX 16
/* Commands one process may run at once per task list. */
#define SWF_WORKER_CMD_CONCURRENCY_MAX 1024

typedef struct swf_worker_cmd_config {
    const char *const *task_lists; /* 1 to SWF_WORKER_CMD_TASK_LISTS_MAX */
    size_t task_list_count;
    const char *command;  /* run under /bin/sh -c for each task; NULL: echo the input */
    unsigned concurrency; /* per task list, 1 to SWF_WORKER_CMD_CONCURRENCY_MAX */
    const char *identity; /* NULL: the library's default */
    const char *brokers;  /* the Kafka bootstrap servers */
} swf_worker_cmd_config_t;

/* Runs swf-worker until SIGINT or SIGTERM; returns the exit status (0 after
 * a clean stop, 1 on a fatal error). Installs handlers for SIGINT and
 * SIGTERM and ignores SIGPIPE. */
int swf_worker_cmd_run(const swf_worker_cmd_config_t *config);

#endif
