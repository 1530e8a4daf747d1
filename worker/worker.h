/*
 * worker.h - the activity worker library: take tasks from Kafka, answer on Kafka.
 *
 * A worker consumes the task topic of one task list (`swf.tasks.<taskList>`,
 * consumer group `swf-workers.<taskList>`) and answers on the inbox topic,
 * keyed by the task's execution id, with the messages of protocol/KAFKA.md.
 * One process may hold many tasks at once, up to `max_in_flight`; while it
 * holds that many, swf_worker_poll() hands out none and pauses the partitions
 * as they deliver, so a slow worker leaves the rest of the topic to its peers.
 *
 * Delivery is at least once. The offset of a task is committed only after
 * the answer to it (or, for a malformed message, its dead-letter entry) was
 * acknowledged by Kafka, and never past an earlier task of the same
 * partition that is still open; a crash therefore redelivers every task whose
 * answer might be lost, and the decider ignores the second answer.
 *
 * Workers do not verify task tokens: a token is opaque and passed back
 * unchanged. The decider verifies it, so a forged token reaches the inbox and
 * is dead-lettered there.
 *
 * Ownership: swf_worker_new() gives a handle freed with swf_worker_free().
 * swf_worker_poll() gives a task owned by the caller, freed with
 * swf_worker_task_free() after it was answered (a task freed unanswered is
 * abandoned: see swf_worker_task_free). Strings and JSON values read from a
 * task are borrowed and live as long as the task. Arguments are borrowed.
 *
 * Thread-safety: swf_worker_poll() is called by one thread at a time;
 * swf_worker_complete/fail/heartbeat and swf_worker_task_free may be called
 * from any thread, concurrently with poll and with each other, for different
 * tasks (one task is used by one thread at a time).
 */
#ifndef SWF_WORKER_WORKER_H
#define SWF_WORKER_WORKER_H

#include <stdbool.h>
#include <stdint.h>
#include <json-c/json.h>

#include "protocol/error.h"
#include "protocol/limits.h"

/* The protocol's bounds (protocol/limits.h), under the names this header
 * has always had. */
/* Bytes of one Kafka message read or written by a worker (KAFKA.md: 1 MiB). */
#define SWF_WORKER_MESSAGE_BYTES_MAX SWF_LIMIT_MESSAGE_BYTES

/* Bytes of an id, a task list, an error name or an identity. */
#define SWF_WORKER_NAME_BYTES_MAX SWF_LIMIT_MESSAGE_NAME_BYTES

/* Bytes of an error cause (AWS: 32,768 characters). */
#define SWF_WORKER_CAUSE_BYTES_MAX SWF_LIMIT_CAUSE_BYTES

/* Tasks one process may hold at once. */
#define SWF_WORKER_IN_FLIGHT_MAX 10000

typedef struct swf_worker swf_worker_t;
typedef struct swf_worker_task swf_worker_task_t;

typedef struct swf_worker_config {
    const char *brokers;    /* Kafka bootstrap servers, "host:port,..."; required */
    const char *task_list;  /* required; [A-Za-z0-9._-], at most 200 bytes */
    const char *group_id;   /* NULL: "swf-workers.<task_list>" */
    const char *identity;   /* NULL: "<hostname>:<pid>"; sent with every answer */
    unsigned max_in_flight; /* 0: 1; at most SWF_WORKER_IN_FLIGHT_MAX */
    /* How long the group waits for a silent member before giving its
     * partitions (and its unanswered tasks) to the others; also how long a
     * rebalance may wait for members to rejoin. 0: $SWF_KAFKA_SESSION_TIMEOUT_MS
     * (300 to 3600000), else librdkafka's 45 s. */
    unsigned session_timeout_ms;
    /* Topic names; NULL takes $SWF_INBOX_TOPIC, $SWF_TASK_TOPIC_PREFIX,
     * $SWF_DLQ_TOPIC, or the defaults "swf.inbox", "swf.tasks.", "swf.dlq". */
    const char *inbox_topic;
    const char *task_topic_prefix;
    const char *dlq_topic;
} swf_worker_config_t;

/*
 * Creates a worker: a consumer subscribed to the task topic and a producer to
 * the inbox. Connecting happens in the background; a broker that cannot be
 * reached shows as no tasks (and errors from swf_worker_poll), not as a
 * failure here. SWF_E_INPUT for a bad configuration.
 */
swf_error_t *swf_worker_new(const swf_worker_config_t *config, swf_worker_t **out);

/*
 * Waits up to timeout_ms for a task. On success *out is a task or NULL (no
 * task within the time, or max_in_flight tasks are held). A malformed task
 * message is not handed out: it goes to the dead-letter topic with the
 * reason, and poll goes on waiting. Errors are SWF_E_KAFKA (retriable ones
 * say so; a daemon logs them and polls again), including the loss of an
 * earlier answer that Kafka did not acknowledge.
 */
swf_error_t *swf_worker_poll(swf_worker_t *w, int timeout_ms, swf_worker_task_t **out);

/*
 * Answers a task with its result (JSON, may be NULL for JSON null): sends
 * activity.completed. The answer is queued; Kafka acknowledges it later, and
 * only then is the task's offset committed. SWF_E_LIMIT when the message
 * would exceed SWF_WORKER_MESSAGE_BYTES_MAX, SWF_E_INPUT when the result
 * holds U+0000, which a history cannot store (either way the task stays
 * unanswered: fail it instead); SWF_E_KAFKA when it cannot be queued.
 */
swf_error_t *swf_worker_complete(swf_worker_t *w, swf_worker_task_t *task, json_object *result);

/*
 * Answers a task with a failure: sends activity.failed with the error name
 * (e.g. "payments.CardDeclined"; matched by the state's Retry and Catch) and
 * a cause (may be NULL). Names over SWF_WORKER_NAME_BYTES_MAX and causes over
 * SWF_WORKER_CAUSE_BYTES_MAX are cut to fit.
 */
swf_error_t *swf_worker_fail(swf_worker_t *w, swf_worker_task_t *task, const char *error,
                             const char *cause);

/*
 * Tells swf the task is still being worked on: sends activity.heartbeat with
 * details (JSON; NULL leaves details out). Needed at least once per the
 * task's heartbeatTimeout when it has one. Does not answer the task.
 * SWF_E_INPUT when the details hold U+0000.
 */
swf_error_t *swf_worker_heartbeat(swf_worker_t *w, swf_worker_task_t *task, json_object *details);

/* Tasks handed out and not yet answered or freed. */
unsigned swf_worker_in_flight(swf_worker_t *w);

/* The identity sent with answers. */
const char *swf_worker_identity(const swf_worker_t *w);

/* How long closing a worker may wait for Kafka, at each of its two steps
 * (kafka/kafka.h's SWF_KAFKA_CLOSE_MS, the same for every swf process). */
#define SWF_WORKER_CLOSE_MS 10000

/*
 * Closes the worker and frees it: waits up to SWF_WORKER_CLOSE_MS for queued
 * answers to be acknowledged, then up to SWF_WORKER_CLOSE_MS more for the
 * last commit of the offsets they allow and for leaving the consumer group.
 * Tasks still held must be freed first. Returns NULL, or an error when Kafka
 * did not confirm leaving in time: the handle is then abandoned, not freed
 * (its consumer may still be waiting on a thread of its own), and must not be
 * used again; that is meant for a process that is stopping. Nothing is lost
 * either way: a task whose answer was acknowledged but whose offset was not
 * committed is delivered again and its second answer ignored.
 * swf_worker_close(NULL) returns NULL.
 */
swf_error_t *swf_worker_close(swf_worker_t *w);

/* swf_worker_close(), dropping its error. swf_worker_free(NULL) does nothing. */
void swf_worker_free(swf_worker_t *w);

/* ---- a task ---- */

const char *swf_worker_task_token(const swf_worker_task_t *t);
const char *swf_worker_task_execution_id(const swf_worker_task_t *t);
const char *swf_worker_task_activity_id(const swf_worker_task_t *t);
/* activityType.name and .version ("" when absent). */
const char *swf_worker_task_activity_type(const swf_worker_task_t *t);
const char *swf_worker_task_activity_version(const swf_worker_task_t *t);
/* The ASL state name ("" when absent). */
const char *swf_worker_task_state(const swf_worker_task_t *t);
/* The input (borrowed; NULL is JSON null). */
json_object *swf_worker_task_input(const swf_worker_task_t *t);
/* The retry attempt, from 0. */
int64_t swf_worker_task_attempt(const swf_worker_task_t *t);
int64_t swf_worker_task_scheduled_event_id(const swf_worker_task_t *t);
/* Seconds; 0 when the task has no such timeout. */
double swf_worker_task_start_to_close_timeout_s(const swf_worker_task_t *t);
double swf_worker_task_heartbeat_timeout_s(const swf_worker_task_t *t);
/* Where the task came from (partition and offset of the task topic). */
int32_t swf_worker_task_partition(const swf_worker_task_t *t);
int64_t swf_worker_task_offset(const swf_worker_task_t *t);
/* True once complete or fail queued an answer. */
bool swf_worker_task_answered(const swf_worker_task_t *t);

/*
 * Frees a task. A task freed without an answer is abandoned: its slot is
 * released, nothing is sent (swf times it out if the state set a timeout),
 * and the offsets of its partition are not committed past it while this
 * process holds the partition, so a restart delivers it again.
 * swf_worker_task_free(NULL) does nothing.
 */
void swf_worker_task_free(swf_worker_task_t *t);

/*
 * Parses and validates one activity.task message, without Kafka (used by
 * swf_worker_poll; exposed for tests and tools). SWF_E_INPUT / SWF_E_LIMIT
 * with a short reason naming the field. On success *out is a task that
 * belongs to no worker (answering it is a programmer error).
 */
swf_error_t *swf_worker_task_parse(const char *buf, size_t len, swf_worker_task_t **out);

#endif
