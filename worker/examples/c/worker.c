/*
 * worker.c - an swf activity worker in C, over the worker library: upper-cases
 * the "text" field of its input.
 *
 *   SWF_KAFKA_BROKERS=host:port example_c_worker [TASK_LIST]
 *
 * The library (worker/worker.h) does the Kafka part: the consumer group, the
 * message shapes, committing offsets only after answers are acknowledged,
 * dead-lettering malformed tasks. What is left is the loop below: poll, work,
 * answer, free. SIGINT/SIGTERM end it after the current task.
 */
#include <ctype.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/json.h"
#include "worker/worker.h"

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
    (void)sig;
    stopping = 1;
}

/* The activity: a new result, or NULL with *error and *cause set. */
static json_object *work(json_object *input, const char **error, const char **cause)
{
    const char *text = swf_json_get_string(input, "text");
    if (text == NULL) {
        *error = "example.NoText";
        *cause = "the input has no string field text";
        return NULL;
    }
    char *up = strdup(text);
    for (char *p = up; *p; p++)
        *p = (char)toupper((unsigned char)*p);
    json_object *result = json_object_new_object();
    json_object_object_add(result, "text", json_object_new_string(up));
    free(up);
    return result;
}

static void report(const char *what, swf_error_t *err)
{
    if (err == NULL)
        return;
    fprintf(stderr, "example_c_worker: %s: %s\n", what, swf_error_message(err));
    swf_error_free(err);
}

int main(int argc, char **argv)
{
    const char *brokers = getenv("SWF_KAFKA_BROKERS");
    if (brokers == NULL) {
        fprintf(stderr, "set SWF_KAFKA_BROKERS\n");
        return 2;
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    swf_worker_config_t cfg = {.brokers = brokers, .task_list = argc > 1 ? argv[1] : "upper"};
    swf_worker_t *w = NULL;
    swf_error_t *err = swf_worker_new(&cfg, &w);
    if (err != NULL) {
        report("start", err);
        return 1;
    }
    while (!stopping) {
        swf_worker_task_t *t = NULL;
        err = swf_worker_poll(w, 500, &t);
        if (err != NULL || t == NULL) {
            report("poll", err);
            continue;
        }
        if (swf_worker_task_heartbeat_timeout_s(t) > 0)
            report("heartbeat", swf_worker_heartbeat(w, t, NULL));
        const char *error = NULL, *cause = NULL;
        json_object *result = work(swf_worker_task_input(t), &error, &cause);
        if (result != NULL) {
            err = swf_worker_complete(w, t, result);
            /* A result too large for a message, or holding U+0000, is not
             * sent (worker.h): fail the task rather than leave it unanswered. */
            if (err != NULL &&
                (swf_error_code(err) == SWF_E_LIMIT || swf_error_code(err) == SWF_E_INPUT)) {
                report("fail",
                       swf_worker_fail(w, t,
                                       swf_error_code(err) == SWF_E_LIMIT ? "swf.OutputTooLarge"
                                                                          : "swf.InvalidOutput",
                                       swf_error_message(err)));
                swf_error_free(err);
                err = NULL;
            }
            report("complete", err);
        } else {
            report("fail", swf_worker_fail(w, t, error, cause));
        }
        json_object_put(result);
        swf_worker_task_free(t);
    }
    swf_worker_free(w);
    return 0;
}
