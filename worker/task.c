/*
 * task.c - a task as the worker library hands it out: the protocol's
 * activity.task message (protocol/message.h) and where it came from.
 *
 * The message is parsed and checked by the same codec the rest of swf
 * uses, so a worker accepts exactly the tasks the protocol defines, with
 * the protocol's bounds (protocol/limits.h), and refuses the others with
 * the protocol's reasons, which are what its dead-letter entry says. The
 * token is only checked for shape: workers do not hold the secret that
 * would verify it (the decider does). Strings the message may leave out
 * read as "".
 */
#include <stdlib.h>

#include "worker/internal.h"

swf_error_t *swf_worker_task_parse(const char *buf, size_t len, swf_worker_task_t **out)
{
    *out = NULL;
    swf_worker_task_t *t = calloc(1, sizeof(*t));
    if (t == NULL)
        abort();
    swf_error_t *err = swf_msg_parse(buf, len, NULL, &t->msg);
    if (err == NULL && t->msg.type != SWF_MSG_ACTIVITY_TASK)
        err = swf_error_new(SWF_E_INPUT, NULL, "a %s message is not an activity.task",
                            swf_msg_type_name(t->msg.type));
    if (err != NULL) {
        swf_worker__task_destroy(t);
        return err;
    }
    t->partition = -1;
    t->offset = -1;
    *out = t;
    return NULL;
}

void swf_worker__task_destroy(swf_worker_task_t *t)
{
    if (t == NULL)
        return;
    swf_msg_clear(&t->msg);
    free(t);
}

static const char *or_empty(const char *s)
{
    return s != NULL ? s : "";
}

const char *swf_worker_task_token(const swf_worker_task_t *t)
{
    return t->msg.task_token;
}

const char *swf_worker_task_execution_id(const swf_worker_task_t *t)
{
    return t->msg.execution_id;
}

const char *swf_worker_task_activity_id(const swf_worker_task_t *t)
{
    return t->msg.activity_id;
}

const char *swf_worker_task_activity_type(const swf_worker_task_t *t)
{
    return t->msg.activity_type;
}

const char *swf_worker_task_activity_version(const swf_worker_task_t *t)
{
    return or_empty(t->msg.activity_version);
}

const char *swf_worker_task_state(const swf_worker_task_t *t)
{
    return or_empty(t->msg.state);
}

json_object *swf_worker_task_input(const swf_worker_task_t *t)
{
    return t->msg.input;
}

int64_t swf_worker_task_attempt(const swf_worker_task_t *t)
{
    return t->msg.attempt;
}

int64_t swf_worker_task_scheduled_event_id(const swf_worker_task_t *t)
{
    return t->msg.scheduled_event_id;
}

double swf_worker_task_start_to_close_timeout_s(const swf_worker_task_t *t)
{
    return t->msg.start_to_close_timeout;
}

double swf_worker_task_heartbeat_timeout_s(const swf_worker_task_t *t)
{
    return t->msg.heartbeat_timeout;
}

int32_t swf_worker_task_partition(const swf_worker_task_t *t)
{
    return t->partition;
}

int64_t swf_worker_task_offset(const swf_worker_task_t *t)
{
    return t->offset;
}

bool swf_worker_task_answered(const swf_worker_task_t *t)
{
    return t->answered;
}
