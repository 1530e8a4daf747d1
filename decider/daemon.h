/*
 * daemon.h - swf-decider: the decider as a Kafka consumer (DESIGN.md,
 * "Deciders").
 *
 * A decider is a member of the consumer group `swf-deciders` on the inbox
 * topic. It takes a batch of messages, groups them by execution, turns them
 * into events, runs the interpreter where a decision task is due, appends
 * every execution of the batch in one PostgreSQL transaction, publishes the
 * activity tasks that transaction wrote to the outbox, deletes their outbox
 * rows once Kafka acknowledged them, and commits the batch's inbox
 * offsets once the transaction committed (the tasks are safe in the outbox
 * from then on). Messages that do not parse go to the dead-letter topic.
 *
 * Batches are pipelined: while a committer thread appends one batch, the
 * decider's thread gathers and decides the next (a batch
 * with an execution of the one in flight waits for it, so every execution
 * is decided in message order on the state its last append left). A batch
 * is what has arrived, up to SWF_DECIDER_BATCH: no wait for more, since
 * the next one gathers while one is in flight; a publisher thread
 * publishes the appended batches' tasks meanwhile. Three connections:
 * loads, the committer's appends, and the publisher's outbox deletes
 * (asynchronous commit, sent without waiting for them).
 *
 * Configuration (swf_decider_config_env): SWF_DATABASE_URL,
 * SWF_KAFKA_BROKERS, SWF_TOKEN_SECRET, SWF_INBOX_TOPIC, SWF_DLQ_TOPIC,
 * SWF_TASK_TOPIC_PREFIX, SWF_TASK_PARTITIONS, SWF_DECIDER_CACHE (executions
 * cached, default 10000), SWF_DECIDER_BATCH (messages per batch, 500).
 *
 * Failures: a batch that PostgreSQL cannot take (the server restarts, the
 * connection drops, a serialization failure) is retried whole, with a
 * pause growing from 100 ms to 5 s, and its offsets are not committed
 * until it passed; the connection is reset on the way (history/pg.h). The
 * failure is logged once, then every 30 s, and once more when the batch
 * passes. A Kafka outage stalls the consumer, which librdkafka reconnects
 * by itself; activity tasks that cannot be published within a send's
 * 30 s stay in the outbox for swf-history to republish, and offsets that
 * cannot be committed are delivered again (which changes nothing). Only
 * an execution's own failure (a history the interpreter refuses, a
 * non-retriable error) drops that execution's messages, logged.
 *
 * Ownership: the decider owns its connections, consumer, producer, cache
 * and committer thread (started and joined by run());
 * the config's strings are borrowed for the decider's lifetime.
 * Thread-safety: run() on one thread; stop() and stats() from any thread
 * (stop() is async-signal-safe).
 */
#ifndef SWF_DECIDER_DAEMON_H
#define SWF_DECIDER_DAEMON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "kafka/kafka.h"
#include "protocol/error.h"

typedef struct swf_decider_config {
    const char *conninfo;
    swf_kafka_names_t kafka;
    const char *secret;
    const char *group;    /* "swf-deciders" */
    const char *identity; /* recorded in DecisionTaskStarted; NULL: "decider-PID" */
    size_t cache_max;     /* 10000 */
    size_t batch_max;     /* 500 */
    int batch_wait_ms;    /* how long a batch waits for more messages: 0 */
    FILE *log;            /* NULL: quiet */
    bool time_skip;       /* SWF_DEV_TIME_SKIP=1: the virtual clock of development
                             (decider/decision.h); false in production */
    /* Benchmarks time a step with these; NULL: nothing. on_received is
     * called for each inbox message as the decider's thread takes it from
     * Kafka (with its key, the execution id, which need not end in a NUL),
     * on_published once for each activity task Kafka acknowledged, on the
     * thread that published it. Both get hook_arg. */
    void (*on_received)(void *arg, const char *execution_id, size_t len);
    void (*on_published)(void *arg, const char *execution_id);
    void *hook_arg;
} swf_decider_config_t;

void swf_decider_config_env(swf_decider_config_t *cfg);

typedef struct swf_decider swf_decider_t;

typedef struct swf_decider_stats {
    uint64_t batches, messages, dead_letters, ignored, events, decision_tasks, conflicts,
        tasks_published, cache_hits, cache_misses;
    /* Cached states found behind their history when they appended nothing
     * (another decider wrote to the execution), and decided again. */
    uint64_t stale;
    uint64_t partitions; /* inbox partitions assigned now */
    uint64_t cached;     /* executions in the cache after the last batch */
    /* Microseconds spent, summed over batches: gathering a batch after its
     * first message, deciding (parse, load, replay, interpret), the group
     * commit, publishing activity tasks, deleting their outbox rows, and
     * committing inbox offsets. */
    uint64_t gather_us, decide_us, append_us, publish_us, outbox_us, commit_us;
} swf_decider_stats_t;

/* Connects to PostgreSQL (migrating the schema) and Kafka, subscribes. */
swf_error_t *swf_decider_new(const swf_decider_config_t *cfg, swf_decider_t **out);
/* Processes batches until stop; errors are logged and retried, never fatal. */
void swf_decider_run(swf_decider_t *d);
void swf_decider_stop(swf_decider_t *d);
void swf_decider_stats(swf_decider_t *d, swf_decider_stats_t *out);
/* How long leaving the consumer group may wait for Kafka. */
#define SWF_DECIDER_CLOSE_MS SWF_KAFKA_CLOSE_MS

/* Leaves the consumer group and frees everything; NULL does nothing. When
 * Kafka does not confirm the leave within SWF_DECIDER_CLOSE_MS, that is
 * logged and the decider is abandoned instead (meant for a stopping
 * process). Nothing is lost: a message whose offset was not committed is
 * read again by the partition's next owner and changes nothing twice. */
void swf_decider_free(swf_decider_t *d);

#endif
