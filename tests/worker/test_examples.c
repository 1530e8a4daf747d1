/* test_examples.c - the example workers of worker/examples (Python, JavaScript,
 * C) against the mock cluster: each dead-letters a malformed task, reports
 * each task it takes (activity.started) before its answer, sends a
 * heartbeat when the task has a heartbeatTimeout, completes a good task with
 * the upper-cased text and fails a bad one with example.NoText, then stops
 * cleanly on SIGTERM. A missing Python client or Node.js is a failure with a
 * message saying how to install it, never a skip. */
#include "tests/worker/kafka_fixture.h"

#include "protocol/message.h"

#define LIST "upper"
#define EXAMPLES SWF_SOURCE_DIR "/worker/examples"

TestSuite(examples, .timeout = 300);

static void publish(fx_kafka_t *k, const char *exec, const char *act, const char *input, double hb)
{
    json_object *t = fx_task(exec, act, input, hb);
    fx_publish_task(k, LIST, t);
    json_object_put(t);
}

static void run_example(char *const argv[])
{
    fx_kafka_t k;
    fx_kafka_start(&k, LIST);
    fx_publish(&k, "swf.tasks." LIST, "exec-x", "{\"type\":\"activity.task\"");
    publish(&k, "exec-x", "1", "{\"text\":\"hello\"}", 30);
    publish(&k, "exec-x", "2", "{\"other\":1}", 0);
    pid_t pid = fx_spawn(&k, argv);

    rd_kafka_t *inbox = fx_reader(&k, "swf.inbox", 1);
    const char *ids[] = {"1", "2"};
    json_object *done[2] = {0};
    int heartbeats = 0, answers = 0, started[2] = {0};
    for (int i = 0; i < 20 && answers < 2; i++) {
        json_object *m = fx_read(inbox, 90000, NULL);
        cr_assert_not_null(m, "%s: only %d answers on the inbox", argv[0], answers);
        json_object *v = NULL;
        cr_assert(swf_json_get(m, "v", &v) && json_object_get_int(v) == 1, "%s", swf_json_str(m));
        const char *id = fx_answer_activity(m, "exec-x", ids, 2);
        cr_assert_not_null(id, "unknown token in %s", swf_json_str(m));
        if (strcmp(swf_json_get_string(m, "type"), "activity.started") == 0) {
            cr_assert_null(done[id[0] - '1'], "%s: task %s started after its answer", argv[0], id);
            started[id[0] - '1']++;
            json_object_put(m);
            continue;
        }
        if (strcmp(swf_json_get_string(m, "type"), "activity.heartbeat") == 0) {
            cr_assert_str_eq(id, "1", "a heartbeat for a task without heartbeatTimeout");
            cr_assert_eq(answers, 0, "heartbeat after the answer");
            heartbeats++;
            json_object_put(m);
            continue;
        }
        done[id[0] - '1'] = m;
        answers++;
    }
    cr_assert_geq(heartbeats, 1, "%s sent no heartbeat", argv[0]);
    cr_assert(started[0] >= 1 && started[1] >= 1, "%s did not send activity.started (%d, %d)",
              argv[0], started[0], started[1]);
    cr_assert_not_null(done[0]);
    cr_assert_not_null(done[1]);
    cr_assert_str_eq(swf_json_get_string(done[0], "type"), "activity.completed");
    json_object *result = NULL;
    cr_assert(swf_json_get(done[0], "result", &result));
    cr_assert_str_eq(swf_json_get_string(result, "text"), "HELLO");
    cr_assert_str_eq(swf_json_get_string(done[1], "type"), "activity.failed");
    cr_assert_str_eq(swf_json_get_string(done[1], "error"), "example.NoText");
    cr_assert_not_null(swf_json_get_string(done[1], "cause"));

    rd_kafka_t *dlq = fx_reader(&k, "swf.dlq", 1);
    char *key = NULL;
    json_object *d = fx_read(dlq, 60000, &key);
    cr_assert_not_null(d, "%s: no dead letter for the malformed task", argv[0]);
    cr_assert_str_eq(key, "exec-x");
    cr_assert_str_eq(swf_json_get_string(d, "type"), "dead-letter");
    cr_assert_str_eq(swf_json_get_string(d, "topic"), "swf.tasks." LIST);
    cr_assert_str_eq(swf_json_get_string(d, "message"), "{\"type\":\"activity.task\"");
    cr_assert_not_null(swf_json_get_string(d, "reason"));

    int status = fx_stop(pid, SIGTERM, 60000);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s exit status %d", argv[0], status);
    json_object_put(d);
    free(key);
    json_object_put(done[0]);
    json_object_put(done[1]);
    fx_reader_free(dlq);
    fx_reader_free(inbox);
    fx_kafka_stop(&k);
}

/* The messages that broke the examples (KAFKA.md, "Errors": a malformed
 * task is dead-lettered, never a crash; an activity that fails is answered):
 * JSON nested too deep for a recursive parser, a malformed message whose
 * dead-letter entry is too large unless cut as KAFKA.md says, a key that is
 * not UTF-8, and a task whose result does not fit in a message. A worker
 * that crashes on one of them gets it again after its restart, forever. */
static void run_example_hostile(char *const argv[])
{
    fx_kafka_t k;
    fx_kafka_start(&k, LIST);
    size_t n = 200000;
    char *deep = malloc(n + 1);
    memset(deep, '[', n);
    deep[n] = '\0';
    fx_publish(&k, "swf.tasks." LIST, "exec-y", deep);
    n = 900000;
    char *ctl = malloc(n + 1);
    memset(ctl, '\x01', n);
    ctl[n] = '\0';
    fx_publish(&k, "swf.tasks." LIST, "exec-y", ctl);
    fx_publish(&k, "swf.tasks." LIST, "\xff\xfe", "nope");
    /* "ΐ" upper-cases to three code points: a 600 KB text, a 1.8 MB result */
    size_t reps = 300000;
    char *input = malloc(reps * 2 + 32);
    strcpy(input, "{\"text\":\"");
    for (size_t i = 0; i < reps; i++)
        memcpy(input + 9 + 2 * i, "\xCE\x90", 2);
    strcpy(input + 9 + 2 * reps, "\"}");
    publish(&k, "exec-y", "1", input, 0);
    publish(&k, "exec-y", "2", "{\"text\":\"hello\"}", 0);
    pid_t pid = fx_spawn(&k, argv);

    rd_kafka_t *inbox = fx_reader(&k, "swf.inbox", 1);
    const char *ids[] = {"1", "2"};
    json_object *done[2] = {0};
    for (int answers = 0; answers < 2;) {
        json_object *m = fx_read(inbox, 90000, NULL);
        cr_assert_not_null(m, "%s: only %d answers on the inbox", argv[0], answers);
        const char *id = fx_answer_activity(m, "exec-y", ids, 2);
        cr_assert_not_null(id, "unknown token");
        if (strcmp(swf_json_get_string(m, "type"), "activity.heartbeat") == 0 ||
            strcmp(swf_json_get_string(m, "type"), "activity.started") == 0) {
            json_object_put(m);
            continue;
        }
        const char *text = swf_json_str(m);
        swf_msg_t msg;
        swf_error_t *err = swf_msg_parse(text, strlen(text), SWF_TOKEN_DEV_SECRET, &msg);
        cr_assert_null(err, "%s: the decider refuses the answer to %s: %s", argv[0], id,
                       err ? swf_error_message(err) : "");
        swf_msg_clear(&msg);
        done[id[0] - '1'] = m;
        answers++;
    }
    cr_assert_str_eq(swf_json_get_string(done[1], "type"), "activity.completed");

    rd_kafka_t *dlq = fx_reader(&k, "swf.dlq", 1);
    bool odd_key = false;
    for (int i = 0; i < 3; i++) {
        char *key = NULL;
        json_object *d = fx_read(dlq, 60000, &key);
        cr_assert_not_null(d, "%s: only %d of 3 dead letters", argv[0], i);
        cr_assert_str_eq(swf_json_get_string(d, "type"), "dead-letter");
        cr_assert_leq(strlen(swf_json_str(d)), SWF_MSG_MAX_BYTES);
        odd_key |= key != NULL && strcmp(key, "\xff\xfe") == 0;
        free(key);
        json_object_put(d);
    }
    cr_assert(odd_key, "%s: the original key is not kept", argv[0]);

    int status = fx_stop(pid, SIGTERM, 60000);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s exit status %d", argv[0], status);
    json_object_put(done[0]);
    json_object_put(done[1]);
    free(deep);
    free(ctl);
    free(input);
    fx_reader_free(dlq);
    fx_reader_free(inbox);
    fx_kafka_stop(&k);
}

Test(examples, c_worker_survives_hostile_messages)
{
    char *argv[] = {SWF_BINARY_DIR "/example_c_worker", LIST, NULL};
    run_example_hostile(argv);
}

Test(examples, c_worker_answers_on_the_inbox)
{
    char *argv[] = {SWF_BINARY_DIR "/example_c_worker", LIST, NULL};
    run_example(argv);
}

/* Debian's python3 has python3-confluent-kafka; a python3 earlier on PATH
 * (a virtualenv, pyenv) may not. */
static const char *python_with_kafka(void)
{
    static const char *candidates[] = {"/usr/bin/python3", "python3"};
    for (size_t i = 0; i < 2; i++) {
        char cmd[256];
        snprintf(cmd, sizeof(cmd), "%s -c 'import confluent_kafka' >/dev/null 2>&1", candidates[i]);
        if (system(cmd) == 0)
            return candidates[i];
    }
    return NULL;
}

/* Runs the Python example through `run`. */
static void with_python(void (*run)(char *const[]))
{
    const char *py = python_with_kafka();
    cr_assert_not_null(py, "no python3 with confluent_kafka: install python3-confluent-kafka "
                           "(scripts/install-deps.sh)");
    char *argv[] = {(char *)py, EXAMPLES "/python/worker.py", "--task-list", LIST, NULL};
    run(argv);
}

/* Runs the JavaScript example through `run`. */
static void with_js(void (*run)(char *const[]))
{
    cr_assert_eq(system("node --version >/dev/null 2>&1"), 0,
                 "node is missing: install nodejs (scripts/install-deps.sh)");
    cr_assert_eq(system("test -f " EXAMPLES "/js/node_modules/kafkajs/package.json"), 0,
                 "kafkajs is missing: npm ci --prefix worker/examples/js "
                 "(scripts/install-deps.sh does it)");
    char *argv[] = {"node", EXAMPLES "/js/worker.js", "--task-list", LIST, NULL};
    run(argv);
}

Test(examples, python_worker_answers_on_the_inbox)
{
    with_python(run_example);
}

Test(examples, python_worker_survives_hostile_messages)
{
    with_python(run_example_hostile);
}

Test(examples, js_worker_answers_on_the_inbox)
{
    with_js(run_example);
}

Test(examples, js_worker_survives_hostile_messages)
{
    with_js(run_example_hostile);
}
