/*
 * internal.h - what the files of worker/ share and nothing outside includes.
 */
#ifndef SWF_WORKER_INTERNAL_H
#define SWF_WORKER_INTERNAL_H

#include "kafka/kafka.h"
#include "protocol/message.h"
#include "worker/worker.h"

/* The fate of one consumed message (a task or a malformed message). */
typedef enum swf_worker__state {
    SWF_WORKER__HELD, /* handed out, not answered */
    SWF_WORKER__SENT, /* answer (or dead-letter entry) queued, not yet acknowledged */
    SWF_WORKER__DONE, /* acknowledged: the offset may be committed past it */
    SWF_WORKER__LOST, /* Kafka refused the answer: never committed past */
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
    swf_msg_t msg; /* the activity.task message */
    int32_t partition;
    int64_t offset;
    bool answered;
};

/* Frees a task's own memory (not its pending reference). */
void swf_worker__task_destroy(swf_worker_task_t *t);

#endif
