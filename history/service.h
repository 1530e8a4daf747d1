/*
 * service.h - swf-history: the clock and the janitor of the history.
 *
 * Deciders only react to inbox messages; something must turn the passing of
 * time and the failures of other processes into messages. The history
 * service does, on a tick (default 200 ms), each step claiming its rows
 * with FOR UPDATE SKIP LOCKED so that any number of services can run:
 *
 *   - due timers (the timers projection)          -> timer.fired
 *   - executions past their TimeoutSeconds        -> execution.timedOut
 *   - activities past startToCloseTimeout, or with no heartbeat within
 *     heartbeatTimeout                             -> activity.timedOut
 *   - outbox rows older than outbox_age_ms (a decider crashed between its
 *     commit and its publication)                  -> republished, deleted
 *   - open executions whose last event is a DecisionTaskScheduled older
 *     than sweep_age_ms (a lost "decide")          -> decide
 *
 * A message is posted again when its condition still holds a few seconds
 * later (repost_ms): every message is idempotent at the decider, so a lost
 * message costs a delay, never an effect twice.
 *
 * Failures: a tick that fails (PostgreSQL restarting, Kafka away) is
 * rolled back and retried on the next ticks, which space out up to 5 s;
 * the first failure is logged, then one line every 30 s while it lasts,
 * and one when ticks pass again. The database connection is reset at the
 * start of a tick (history/pg.h). Nothing is lost: what a failed tick did
 * not post is still due at the next, and what it posted is idempotent.
 * run() never returns before stop().
 *
 * Time scale (for `swf dev`): with time_scale < 1, timers and execution
 * timeouts run that much faster (a Wait of 10 s fires after 10 s *
 * time_scale), so executions with long waits finish quickly in development.
 * Production keeps 1.
 *
 * Time skipping (for `swf run --dev`, SWF_DEV_TIME_SKIP=1): each execution
 * has a virtual clock, the one `swf run --local` shows, kept in its
 * history (decider/decision.h): its events carry virtual times, and its
 * clock is the wall clock plus the last clockOffsetMs they recorded. As
 * soon as an execution is idle (no decision task pending, no activity
 * without a result), the service fires its next deadline (its earliest
 * timers or its execution timeout) at once, and the decider records it at
 * that deadline, like the test servers of Temporal. Waits and retry
 * back-off then take no time at all, yet they fire in the same order as in
 * real time and race execution timeouts as they would, and
 * $$.State.EnteredTime after a Wait of an hour is an hour after the one
 * before it. Timers, execution and activity timeouts and the sweep are all
 * measured on the virtual clocks then. Nothing of it is kept in the
 * service's memory (a restart changes nothing), but the query reads every
 * open execution with a timer: development sizes only; the time scale is
 * then 1. The deciders must run with it too (swf_decider_config_t's
 * time_skip, the same variable).
 *
 * Ownership: the service owns its database connection and Kafka producer.
 * Thread-safety: run() on one thread; stop() from any thread or a signal
 * handler.
 */
#ifndef SWF_HISTORY_SERVICE_H
#define SWF_HISTORY_SERVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <stdio.h>

#include "history/store.h"
#include "protocol/error.h"
#include "protocol/message.h"

/* One message to publish, and the sender of a batch of them (protocol/
 * message.h). The history library knows no Kafka: the program wires a
 * sender in, kafka/kafka.h's swf_kafka_poster_send for the daemons, which
 * also creates the topics it does not know. */
typedef swf_msg_post_t swf_history_post_t;
typedef swf_msg_send_fn swf_history_send_fn;

typedef struct swf_history_service_config {
    const char *conninfo;
    swf_history_send_fn send;
    void *send_ctx;
    const char *inbox_topic; /* swf.inbox */
    const char *task_prefix; /* swf.tasks. */
    const char *secret;      /* signs activity tasks and control messages */
    int tick_ms;             /* 200 */
    int outbox_age_ms;       /* 3000 */
    int sweep_age_ms;        /* 5000 */
    int repost_ms;           /* 5000 */
    double time_scale;       /* 1.0; SWF_DEV_TIME_SCALE */
    bool time_skip;          /* false; SWF_DEV_TIME_SKIP=1 (development only) */
    size_t batch_max;        /* rows claimed per step and tick: 500 */
    FILE *log;               /* NULL: quiet */
} swf_history_service_config_t;

/* Defaults and the environment (SWF_DATABASE_URL, SWF_INBOX_TOPIC,
 * SWF_TASK_TOPIC_PREFIX, SWF_TOKEN_SECRET, SWF_DEV_TIME_SCALE, SWF_DEV_TIME_SKIP); the sender
 * is left NULL for the caller to set. */
void swf_history_service_config_env(swf_history_service_config_t *cfg);

typedef struct swf_history_service swf_history_service_t;

typedef struct swf_history_service_stats {
    uint64_t timers_fired, executions_timed_out, activities_timed_out, outbox_republished,
        decides_posted, ticks;
} swf_history_service_stats_t;

swf_error_t *swf_history_service_new(const swf_history_service_config_t *cfg,
                                     swf_history_service_t **out);
/* Runs ticks until stop; a failed tick is logged and retried (see above). */
void swf_history_service_run(swf_history_service_t *svc);
/* One tick, for tests. */
swf_error_t *swf_history_service_tick(swf_history_service_t *svc);
void swf_history_service_stop(swf_history_service_t *svc);
void swf_history_service_stats(swf_history_service_t *svc, swf_history_service_stats_t *out);
void swf_history_service_free(swf_history_service_t *svc);

/* The primary key of an outbox row. */
typedef struct swf_history_outbox_key {
    const char *execution_id;
    int64_t event_id;
} swf_history_outbox_key_t;

/* Deletes the outbox rows of activity tasks Kafka acknowledged (one statement). */
swf_error_t *swf_history_outbox_delete(swf_history_store_t *store,
                                       const swf_history_outbox_key_t *keys, size_t n);
/*
 * The same without waiting for the database: the statement is sent, and
 * runs while the caller goes on. Its result is collected by the next call
 * of these three on the store, which returns the earlier statement's error
 * when it failed (and does its own work all the same), or by
 * swf_history_outbox_wait.
 * The store takes no other call while a delete is outstanding: give it a
 * connection of its own. (A delete that is lost only leaves rows that
 * swf-history publishes again.)
 */
swf_error_t *swf_history_outbox_delete_send(swf_history_store_t *store,
                                            const swf_history_outbox_key_t *keys, size_t n);
swf_error_t *swf_history_outbox_wait(swf_history_store_t *store);

#endif
