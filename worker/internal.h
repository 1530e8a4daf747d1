/*
 * internal.h - what the files of worker/ share and nothing outside includes.
 */
#ifndef SWF_WORKER_INTERNAL_H
#define SWF_WORKER_INTERNAL_H

#include <librdkafka/rdkafka.h>

#include "worker/worker.h"

/* The fate of one consumed message (a task or a malformed message). */
typedef enum swf_worker__state {
    SWF_WORKER__HELD,      /* handed out, not answered */
    SWF_WORKER__SENT,      /* answer (or dead-letter entry) queued, not yet acknowledged */
    SWF_WORKER__DONE,      /* acknowledged: the offset may be committed past it */
    SWF_WORKER__LOST,      /* Kafka refused the answer: never committed past */
} swf_worker__state_t;

/*
 * One consumed message whose offset is not committed yet. It is referenced by
 * its partition's list (in offset order), by its task, and by each queued
 * answer; it is freed when the last reference goes. Guarded by the worker's
 * mutex.
 */
typedef struct swf_worker__pending {
    struct swf_worker__pending *next;
    int refs;
    bool listed;
    swf_worker__state_t state;
    int32_t partition;
    int64_t offset;
} swf_worker__pending_t;

struct swf_worker_task {
    swf_worker_t *worker; /* NULL for a task from swf_worker_task_parse */
    swf_worker__pending_t *pending;
    json_object *msg; /* the whole message; the fields below point into it */
    const char *token, *execution_id, *activity_id, *type_name, *type_version, *state;
    json_object *input;
    int64_t attempt, scheduled_event_id;
    double start_to_close_s, heartbeat_s;
    int32_t partition;
    int64_t offset;
    bool answered;
};

/* The one translation of librdkafka's errors into swf_error_t (kafka.c).
 * `what` names the operation ("produce to swf.inbox"). */
swf_error_t *swf_worker__kafka_error(rd_kafka_resp_err_t err, const char *what);

/* rd_kafka_conf_set, its error translated. */
swf_error_t *swf_worker__conf_set(rd_kafka_conf_t *conf, const char *name, const char *value);

/* Frees a task's own memory (not its pending reference). */
void swf_worker__task_destroy(swf_worker_task_t *t);

#endif
