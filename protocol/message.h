/*
 * message.h - the Kafka messages of protocol/KAFKA.md, parsed and built.
 *
 * Every process that reads or writes a Kafka message goes through this one
 * codec, so the contract lives in one place: the decider parses inbox
 * messages, workers parse activity tasks, and the `swf` commands, workers and
 * swf-history build messages with the builders below instead of spelling
 * field names themselves.
 *
 * Parsing validates the whole message (its "v", its type, every field the
 * type needs, their JSON types and bounds, and the signature of a task
 * token) and turns any problem into one SWF_E_INPUT (or SWF_E_LIMIT) error
 * whose message is the reason a dead-letter entry gives: short, lowercase,
 * naming the field. Unknown fields are ignored.
 *
 * Ownership: a parsed swf_msg_t owns its strings and JSON values; release it
 * with swf_msg_clear(). Builders return a new reference to a JSON object;
 * their arguments are borrowed (JSON values are referenced, not copied).
 * Thread-safety: reentrant.
 */
#ifndef SWF_PROTOCOL_MESSAGE_H
#define SWF_PROTOCOL_MESSAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#include "protocol/error.h"
#include "protocol/limits.h"

/* The version every message carries in "v". */
#define SWF_MSG_VERSION 1

/* The bounds of a message (protocol/limits.h). */
#define SWF_MSG_MAX_BYTES SWF_LIMIT_MESSAGE_BYTES
#define SWF_MSG_NAME_BYTES SWF_LIMIT_MESSAGE_NAME_BYTES
#define SWF_MSG_CAUSE_BYTES SWF_LIMIT_CAUSE_BYTES

/* Default topic names (KAFKA.md), and the environment variables that change them. */
#define SWF_MSG_INBOX_TOPIC "swf.inbox"
#define SWF_MSG_DLQ_TOPIC "swf.dlq"
#define SWF_MSG_TASK_TOPIC_PREFIX "swf.tasks."

typedef enum swf_msg_type {
    SWF_MSG_NONE = 0,
    SWF_MSG_DECIDE,              /* "decide" */
    SWF_MSG_ACTIVITY_COMPLETED,  /* "activity.completed" */
    SWF_MSG_ACTIVITY_FAILED,     /* "activity.failed" */
    SWF_MSG_ACTIVITY_HEARTBEAT,  /* "activity.heartbeat" */
    SWF_MSG_ACTIVITY_TIMED_OUT,  /* "activity.timedOut" */
    SWF_MSG_TIMER_FIRED,         /* "timer.fired" */
    SWF_MSG_EXECUTION_TIMED_OUT, /* "execution.timedOut" */
    SWF_MSG_SIGNAL,              /* "signal" */
    SWF_MSG_CANCEL,              /* "cancel" */
    SWF_MSG_TERMINATE,           /* "terminate" */
    SWF_MSG_ACTIVITY_TASK,       /* "activity.task" (the task topics, not the inbox) */
    SWF_MSG_ACTIVITY_STARTED,    /* "activity.started" */
    SWF_MSG_REDRIVE,             /* "redrive" */
    SWF_MSG_NESTED_START,        /* "nested.start" */
    SWF_MSG_NESTED_CLOSED,       /* "nested.closed" */
} swf_msg_type_t;

/*
 * One parsed message. Which fields are set depends on the type (NULL / 0
 * otherwise); JSON members that may be JSON null are accompanied by a
 * has_ flag, since NULL is also JSON null.
 */
typedef struct swf_msg {
    swf_msg_type_t type;
    /* Every inbox message: the execution it is for. For the token messages
     * (activity.completed/failed/heartbeat) it comes from the verified token,
     * as does activity_id. */
    char *execution_id;
    char *activity_id;
    char *task_token;     /* activity.completed/failed/heartbeat/started, activity.task */
    char *identity;       /* activity.completed/failed/started (optional) */
    json_object *result;  /* activity.completed (may be JSON null) */
    char *error;          /* activity.failed: the error name */
    char *cause;          /* activity.failed (optional: ""), cancel (optional) */
    json_object *details; /* activity.heartbeat, terminate (optional) */
    bool has_details;
    int64_t scheduled_event_id; /* activity.timedOut, activity.task, nested.* */
    char *timeout_type;         /* activity.timedOut: "START_TO_CLOSE" or "HEARTBEAT" */
    char *timer_id;             /* timer.fired */
    int64_t started_event_id;   /* timer.fired */
    char *signal_name;          /* signal */
    char *request_id;           /* signal, cancel (optional): the same request again */
    json_object *input;         /* signal (may be JSON null), activity.task */
    char *reason;               /* terminate (optional) */
    int64_t redrive_count;      /* redrive: the execution's redrive count after it */
    /* activity.task only. */
    char *activity_type;    /* activityType.name */
    char *activity_version; /* activityType.version */
    char *state;            /* the ASL state name */
    int64_t attempt;
    double start_to_close_timeout; /* seconds; 0 when absent */
    double heartbeat_timeout;      /* seconds; 0 when absent */
} swf_msg_t;

/* "decide", "activity.completed", ...; NULL for SWF_MSG_NONE. */
const char *swf_msg_type_name(swf_msg_type_t type);
/* The type of a name; SWF_MSG_NONE when unknown. */
swf_msg_type_t swf_msg_type_parse(const char *name);

/*
 * Control messages (decide, timer.fired, execution.timedOut,
 * activity.timedOut, signal, cancel, terminate, redrive, nested.start,
 * nested.closed) may be sent only by swf's own processes, which hold the deployment's secret
 * (SWF_TOKEN_SECRET). swf_msg_sign() adds to such a message a "signature" member: the base64url (no
 * padding) HMAC-SHA256, under the secret, of the message's canonical bytes (KAFKA.md, "Signed
 * control messages": the known members in a fixed order, each as name, '=', byte length, ':',
 * value, '\n'). It returns msg. swf_msg_signature_check() verifies that member with a constant-time
 * compare: NULL when it verifies, else an SWF_E_INPUT error whose message ("unsigned control
 * message", "forged or altered control message signature") is the dead-letter reason.
 */
json_object *swf_msg_sign(json_object *msg, const char *secret);
swf_error_t *swf_msg_signature_check(json_object *msg, const char *secret);

/*
 * Parses and validates one message from buf[0..len). `secret` verifies task
 * tokens (swf_token_secret_env() in the daemons); a message carrying a token
 * whose signature does not verify is refused with the message "forged or
 * altered task token". On success *out is filled (the caller clears it); on
 * failure *out is left empty and the error says why, for the dead-letter
 * topic.
 */
swf_error_t *swf_msg_parse(const char *buf, size_t len, const char *secret, swf_msg_t *out);

/* Same, from an already parsed JSON object (borrowed). */
swf_error_t *swf_msg_from_json(json_object *obj, const char *secret, swf_msg_t *out);

/* Releases what a parsed message owns and zeroes it; an empty message is fine. */
void swf_msg_clear(swf_msg_t *msg);

/* ---- builders: each returns a new JSON object carrying "v" and "type". ----
 *
 * The control messages' builders (decide, activity.timedOut, timer.fired,
 * execution.timedOut, signal, cancel, terminate) sign what they build
 * (swf_msg_sign) with `secret`: a library caller passes its deployment's
 * secret (swf-history's service its cfg.secret); NULL takes
 * swf_token_secret_env(), the CLI's and the daemons' default. */

json_object *swf_msg_decide_new(const char *secret, const char *execution_id);
/* result may be NULL (JSON null); identity may be NULL. */
json_object *swf_msg_activity_completed_new(const char *task_token, json_object *result,
                                            const char *identity);
/* cause and identity may be NULL. An error name over SWF_MSG_NAME_BYTES and
 * a cause over SWF_MSG_CAUSE_BYTES are cut to fit (between characters,
 * after bytes that are not UTF-8 became U+FFFD), so the reader never
 * refuses the failure of an activity for its length. */
json_object *swf_msg_activity_failed_new(const char *task_token, const char *error,
                                         const char *cause, const char *identity);
/* has_details false leaves "details" out. */
json_object *swf_msg_activity_heartbeat_new(const char *task_token, json_object *details,
                                            bool has_details);
/* A worker took the task (identity may be NULL): the decider records
 * ActivityTaskStarted then, and the heartbeat timeout counts from there. */
json_object *swf_msg_activity_started_new(const char *task_token, const char *identity);
/* timeout_type: "START_TO_CLOSE" or "HEARTBEAT". */
json_object *swf_msg_activity_timed_out_new(const char *secret, const char *execution_id,
                                            int64_t scheduled_event_id, const char *timeout_type);
json_object *swf_msg_timer_fired_new(const char *secret, const char *execution_id,
                                     const char *timer_id, int64_t started_event_id);
json_object *swf_msg_execution_timed_out_new(const char *secret, const char *execution_id);
json_object *swf_msg_signal_new(const char *secret, const char *execution_id,
                                const char *signal_name, json_object *input);
/* Nested executions (decider/nested.h): "nested.start" asks the decider
 * of execution_id to start the child of its startExecution Task scheduled
 * at scheduled_event_id; "nested.closed" tells it that child closed. Both
 * are posted by the outbox's publishers, signed. type is one of the two. */
json_object *swf_msg_nested_new(const char *secret, swf_msg_type_t type, const char *execution_id,
                                int64_t scheduled_event_id);
/* cause may be NULL. */
json_object *swf_msg_cancel_new(const char *secret, const char *execution_id, const char *cause);
/* reason may be NULL; has_details false leaves "details" out. */
json_object *swf_msg_terminate_new(const char *secret, const char *execution_id, const char *reason,
                                   json_object *details, bool has_details);

/* Redrives a closed execution that did not succeed (decider/asl/exec.h,
 * swf_asl_exec_redrivable): redrive_count is the count it will have (1 for
 * the first), so a message delivered again, or a second redrive racing
 * the first, changes nothing. */
json_object *swf_msg_redrive_new(const char *secret, const char *execution_id,
                                 int64_t redrive_count);

/*
 * The activity.task message of an ActivityTaskScheduled event, given its
 * attributes (or an outbox payload: the same attributes plus executionId and
 * scheduledEventId, which are then used when execution_id is NULL or
 * scheduled_event_id is 0). The task token is swf_token_make(secret,
 * execution id, activityId). SWF_E_INPUT when the attributes lack what the
 * message needs.
 */
swf_error_t *swf_msg_activity_task_new(const char *secret, const char *execution_id,
                                       int64_t scheduled_event_id, json_object *scheduled_attrs,
                                       json_object **out);

/* A dead-letter entry: {"v":1,"type":"dead-letter","reason":..., "topic":...,
 * "partition":..., "offset":..., "message": the original text (as a string,
 * since it may not be JSON)}. Bytes beyond SWF_MSG_MAX_BYTES / 2 of the
 * original are cut, and more when escaping would make the entry longer
 * than SWF_MSG_MAX_BYTES ("truncated": true says so). */
json_object *swf_msg_dead_letter_new(const char *reason, const char *topic, int32_t partition,
                                     int64_t offset, const char *payload, size_t len);

/*
 * One message to publish, and whether it went: what a sender takes
 * (history/service.h's, kafka/kafka.h's poster), so that the history
 * library can publish without knowing Kafka. The strings are borrowed.
 */
typedef struct swf_msg_post {
    const char *topic;
    const char *key; /* may be NULL */
    const char *payload;
    size_t len;
    bool sent; /* set by the sender: this message was acknowledged */
} swf_msg_post_t;

/* Publishes every message and returns only when each was acknowledged
 * (NULL) or one failed (an error; each message's `sent` says which went). */
typedef swf_error_t *(*swf_msg_send_fn)(void *ctx, swf_msg_post_t *msgs, size_t n);

/* Serialises a message built above (compact); the string lives as long as msg. */
const char *swf_msg_str(json_object *msg);

#endif
