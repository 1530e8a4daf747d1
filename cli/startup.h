/*
 * startup.h - how the daemons (swf-decider, swf-history) wait for
 * PostgreSQL and Kafka when they start before them.
 *
 * A compose file or a supervisor starts everything at once, and a daemon
 * restarted during a database restart meets the same: a dependency that
 * is not up yet. That is a transient failure like any other (history/pg.h,
 * decider/daemon.h): the daemon says so once, then every 30 s, and tries
 * again with pauses growing from 100 ms to 5 s, until it starts or is
 * told to stop. A failure that a retry cannot help (a bad setting) still
 * ends the program at once.
 *
 * Ownership: swf_cli_startup_wait takes `err` when it returns true.
 * Thread-safety: one waiter per thread.
 */
#ifndef SWF_CLI_STARTUP_H
#define SWF_CLI_STARTUP_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "protocol/error.h"

typedef struct swf_cli_startup {
    const char *prog; /* the log lines' prefix */
    int pause_ms;
    int64_t logged_ms;
    unsigned failures;
} swf_cli_startup_t;

/* After a failed start: when err is retriable and *stopping is not set,
 * logs it (once, then every 30 s), frees it, pauses (waking early on
 * *stopping) and returns true: try again. Otherwise returns false and
 * leaves err to the caller. */
bool swf_cli_startup_wait(swf_cli_startup_t *s, swf_error_t *err,
                          const volatile sig_atomic_t *stopping);

/* Calls `handler` on SIGINT and SIGTERM (no SA_RESTART: a blocking call
 * returns early, so the program notices it is to stop). */
void swf_cli_on_stop_signals(void (*handler)(int));

#endif
