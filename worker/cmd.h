/*
 * cmd.h - `swf-worker`: run a shell command (or echo) for each activity task.
 *
 * The program's whole logic is here so that it is a library function tests
 * can reason about; cli/bin/swf-worker.c only calls swf_worker_cmd_main().
 */
#ifndef SWF_WORKER_CMD_H
#define SWF_WORKER_CMD_H

/* Runs swf-worker with its command line; returns the exit status (0 after a
 * clean stop on SIGINT/SIGTERM, 1 on a fatal error, 2 on a usage error).
 * Installs handlers for SIGINT and SIGTERM and ignores SIGPIPE. */
int swf_worker_cmd_main(int argc, char **argv);

#endif
