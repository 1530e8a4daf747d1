/*
 * test_control.c - proves cli/control.c and cli/follow.c: every control
 * command puts exactly its documented message on the inbox (read back from
 * a librdkafka mock cluster and checked field by field, and by the codec
 * the deciders use), what must be refused is refused before anything is
 * produced, `swf send-event` (cli/send_event.c) signals the waiting instance
 * or starts one, and `swf start --wait` follows an execution to its end while
 * another thread appends the events a decider would.
 *
 * Each test runs in a process of its own (Criterion forks), with its own
 * mock Kafka cluster and its own database in the binary's throwaway
 * PostgreSQL cluster. "Nothing was produced" is read from the partition's
 * high watermark, which is exact once the command returned (it waited for
 * the delivery report), so no test waits for something not to happen.
 */
#include "../history/test_pg_fixture.h"

#include <fcntl.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <pthread.h>
#include <time.h>

#include "cli/cli.h"
#include "decider/local.h"
#include "history/store.h"
#include "protocol/json.h"
#include "protocol/time.h"
#include "protocol/message.h"
#include "protocol/token.h"

#define INBOX "swf.inbox.test"
#define WAIT_MS 60000

static char output[1 << 20];
static char errors[1 << 16];

/* ---- a mock Kafka cluster and a reader of the inbox ------------------------------ */

static rd_kafka_t *mock_rk;
static rd_kafka_mock_cluster_t *mock;

static void kafka_up(void)
{
    char errstr[512];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "log_level", "0", errstr, sizeof(errstr));
    mock_rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
    cr_assert_not_null(mock_rk, "%s", errstr);
    mock = rd_kafka_mock_cluster_new(mock_rk, 1);
    cr_assert_not_null(mock);
    /* One partition: the order of the messages is the order they were sent. */
    cr_assert_eq(rd_kafka_mock_topic_create(mock, INBOX, 1, 1), RD_KAFKA_RESP_ERR_NO_ERROR);
    setenv("SWF_KAFKA_BROKERS", rd_kafka_mock_cluster_bootstraps(mock), 1);
    setenv("SWF_INBOX_TOPIC", INBOX, 1);
    unsetenv("SWF_TOKEN_SECRET");
}

static void kafka_down(void)
{
    rd_kafka_mock_cluster_destroy(mock);
    rd_kafka_destroy(mock_rk);
    mock = NULL;
    mock_rk = NULL;
}

TestSuite(cli_control, .init = kafka_up, .fini = kafka_down, .timeout = 240);

static rd_kafka_t *reader_new(void)
{
    char errstr[512];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    cr_assert_eq(rd_kafka_conf_set(conf, "bootstrap.servers",
                                   rd_kafka_mock_cluster_bootstraps(mock), errstr, sizeof(errstr)),
                 RD_KAFKA_CONF_OK);
    rd_kafka_conf_set(conf, "group.id", "test-reader", errstr, sizeof(errstr));
    rd_kafka_conf_set(conf, "enable.auto.commit", "false", errstr, sizeof(errstr));
    rd_kafka_conf_set(conf, "log_level", "0", errstr, sizeof(errstr));
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr, sizeof(errstr));
    cr_assert_not_null(rk, "%s", errstr);
    return rk;
}

/* How many messages the inbox holds: its high watermark. */
static int64_t inbox_count(void)
{
    rd_kafka_t *rk = reader_new();
    int64_t lo = 0, hi = 0;
    rd_kafka_resp_err_t e = rd_kafka_query_watermark_offsets(rk, INBOX, 0, &lo, &hi, WAIT_MS);
    cr_assert_eq(e, RD_KAFKA_RESP_ERR_NO_ERROR, "%s", rd_kafka_err2str(e));
    rd_kafka_destroy(rk);
    return hi;
}

typedef struct inbox_msg {
    char key[128];
    json_object *value;
} inbox_msg_t;

/* Reads the whole inbox from the start: exactly `n` messages, in order. */
static void inbox_read(inbox_msg_t *out, int n)
{
    cr_assert_eq(inbox_count(), n, "the inbox should hold exactly %d messages", n);
    rd_kafka_t *rk = reader_new();
    rd_kafka_topic_partition_list_t *parts = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(parts, INBOX, 0)->offset = RD_KAFKA_OFFSET_BEGINNING;
    cr_assert_eq(rd_kafka_assign(rk, parts), RD_KAFKA_RESP_ERR_NO_ERROR);
    rd_kafka_topic_partition_list_destroy(parts);
    int got = 0;
    for (int polls = 0; got < n && polls < WAIT_MS / 100; polls++) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 100);
        if (m == NULL)
            continue;
        if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
            snprintf(out[got].key, sizeof(out[got].key), "%.*s", (int)m->key_len,
                     (const char *)m->key);
            cr_assert(swf_json_parse(m->payload, m->len, SWF_MSG_MAX_BYTES, &out[got].value) ==
                      NULL);
            /* The deciders' codec accepts it. */
            swf_msg_t parsed = {0};
            swf_error_t *err = swf_msg_parse(m->payload, m->len, swf_token_secret_env(), &parsed);
            cr_assert_null(err, "%s", err ? swf_error_message(err) : "");
            cr_assert_str_eq(parsed.execution_id, out[got].key,
                             "the key is the execution id of the message");
            swf_msg_clear(&parsed);
            got++;
        }
        rd_kafka_message_destroy(m);
    }
    cr_assert_eq(got, n);
    rd_kafka_consumer_close(rk);
    rd_kafka_destroy(rk);
}

static void inbox_free(inbox_msg_t *m, int n)
{
    for (int i = 0; i < n; i++)
        json_object_put(m[i].value);
}

/* Asserts that message m has exactly the given members (a JSON object
 * text), and, for a signal or a cancel request, a request id of its own
 * (32 hex digits, random: checked here and left out of the comparison). */
static void assert_message(const inbox_msg_t *m, const char *key, const char *expect)
{
    cr_assert_str_eq(m->key, key);
    json_object *e = json_tokener_parse(expect);
    cr_assert_not_null(e);
    json_object *got = swf_json_copy(m->value);
    const char *type = swf_json_get_string(got, "type");
    /* A control message is signed; the parse in inbox_read checked it. */
    bool token = type != NULL && strncmp(type, "activity.", 9) == 0 &&
                 strcmp(type, "activity.timedOut") != 0;
    cr_assert(token || swf_json_get_string(got, "signature") != NULL, "unsigned: %s",
              swf_json_str(got));
    json_object_object_del(got, "signature");
    if (type != NULL && (strcmp(type, "signal") == 0 || strcmp(type, "cancel") == 0)) {
        const char *rid = swf_json_get_string(got, "requestId");
        cr_assert(rid != NULL && strlen(rid) == 32 && strspn(rid, "0123456789abcdef") == 32,
                  "no request id of 32 hex digits: %s", swf_json_str(got));
        json_object_object_del(got, "requestId");
    }
    cr_assert(swf_json_equal(got, e), "got %s\nexpected %s", swf_json_str(m->value), expect);
    json_object_put(got);
    json_object_put(e);
}

/* ---- running swf in-process -------------------------------------------------------- */

static int swf_argv(const char *db, int argc, char **argv)
{
    if (db != NULL)
        setenv("SWF_DATABASE_URL", db, 1);
    fflush(stdout);
    fflush(stderr);
    char out_path[] = "/tmp/swf-ctl-out-XXXXXX", err_path[] = "/tmp/swf-ctl-err-XXXXXX";
    int fd = mkstemp(out_path), efd = mkstemp(err_path);
    cr_assert(fd >= 0 && efd >= 0);
    int saved = dup(1), saved_err = dup(2);
    dup2(fd, 1);
    dup2(efd, 2);
    int code = swf_cli_main(argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(saved, 1);
    dup2(saved_err, 2);
    close(saved);
    close(saved_err);
    lseek(fd, 0, SEEK_SET);
    ssize_t n = read(fd, output, sizeof(output) - 1);
    output[n > 0 ? n : 0] = '\0';
    lseek(efd, 0, SEEK_SET);
    n = read(efd, errors, sizeof(errors) - 1);
    errors[n > 0 ? n : 0] = '\0';
    close(fd);
    close(efd);
    unlink(out_path);
    unlink(err_path);
    return code;
}

/* Runs `swf ARGS...` (NULL-terminated) with stdout in `output` and stderr in
 * `errors`; returns the exit status. db NULL keeps SWF_DATABASE_URL as it is. */
static int swf(const char *db, const char *first, ...)
{
    char *argv[16] = {"swf", (char *)first};
    int argc = 2;
    va_list ap;
    va_start(ap, first);
    const char *a;
    while ((a = va_arg(ap, const char *)) != NULL && argc < 15)
        argv[argc++] = (char *)a;
    va_end(ap);
    argv[argc] = NULL;
    return swf_argv(db, argc, argv);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

static const char pass_definition[] =
    "{\"StartAt\":\"A\",\"States\":{\"A\":{\"Type\":\"Pass\",\"End\":true}}}";

/* Registers `definition` as `name` and starts one execution of it; writes its id. */
static void start_one(const char *db, const char *name, const char *definition, char id[64])
{
    char def[] = "/tmp/swf-ctl-def-XXXXXX";
    close(mkstemp(def));
    write_file(def, definition);
    cr_assert_eq(swf(db, "register", name, def, NULL), 0, "%s", errors);
    unlink(def);
    cr_assert_eq(swf(db, "start", name, NULL), 0, "%s", errors);
    snprintf(id, 64, "%.63s", output);
    id[strcspn(id, "\n")] = '\0';
    cr_assert_eq(strlen(id), 36);
}

/* ---- the token commands ------------------------------------------------------------ */

Test(cli_control, task_success_sends_activity_completed_keyed_by_the_execution)
{
    char *token = swf_token_make(swf_token_secret_env(), "exec-1", "5");
    cr_assert_eq(swf(NULL, "task-success", token, "{\"chargeId\":\"ch_1\",\"n\":[1,2]}", NULL), 0,
                 "%s", errors);
    cr_assert(strstr(output, "sent activity.completed for execution exec-1") != NULL, "%s", output);

    /* The result may come from a file, and may be any JSON value. */
    char file[] = "/tmp/swf-ctl-res-XXXXXX";
    close(mkstemp(file));
    write_file(file, "[true, null]\n");
    char at[64];
    snprintf(at, sizeof(at), "@%s", file);
    cr_assert_eq(swf(NULL, "task-success", token, at, NULL), 0, "%s", errors);
    unlink(file);

    inbox_msg_t m[2];
    inbox_read(m, 2);
    char host[200] = "";
    gethostname(host, sizeof(host) - 1);
    char expect[1024];
    snprintf(expect, sizeof(expect),
             "{\"v\":1,\"type\":\"activity.completed\",\"taskToken\":\"%s\","
             "\"result\":{\"chargeId\":\"ch_1\",\"n\":[1,2]},\"identity\":\"swf-cli@%s\"}",
             token, host);
    assert_message(&m[0], "exec-1", expect);
    snprintf(expect, sizeof(expect),
             "{\"v\":1,\"type\":\"activity.completed\",\"taskToken\":\"%s\","
             "\"result\":[true,null],\"identity\":\"swf-cli@%s\"}",
             token, host);
    assert_message(&m[1], "exec-1", expect);
    inbox_free(m, 2);
    free(token);
}

Test(cli_control, task_failure_and_heartbeat_send_their_messages)
{
    char *token = swf_token_make(swf_token_secret_env(), "exec-2", "7");
    cr_assert_eq(swf(NULL, "task-failure", token, "--error", "Payment.Declined", "--cause",
                     "card expired", NULL),
                 0, "%s", errors);
    cr_assert_eq(swf(NULL, "task-heartbeat", token, NULL), 0, "%s", errors);
    cr_assert_eq(swf(NULL, "task-heartbeat", token, "--details", "{\"done\":40}", NULL), 0, "%s",
                 errors);
    inbox_msg_t m[3];
    inbox_read(m, 3);
    char host[200] = "";
    gethostname(host, sizeof(host) - 1);
    char expect[1024];
    snprintf(expect, sizeof(expect),
             "{\"v\":1,\"type\":\"activity.failed\",\"taskToken\":\"%s\","
             "\"error\":\"Payment.Declined\",\"cause\":\"card expired\","
             "\"identity\":\"swf-cli@%s\"}",
             token, host);
    assert_message(&m[0], "exec-2", expect);
    snprintf(expect, sizeof(expect),
             "{\"v\":1,\"type\":\"activity.heartbeat\",\"taskToken\":\"%s\"}", token);
    assert_message(&m[1], "exec-2", expect);
    snprintf(expect, sizeof(expect),
             "{\"v\":1,\"type\":\"activity.heartbeat\",\"taskToken\":\"%s\","
             "\"details\":{\"done\":40}}",
             token);
    assert_message(&m[2], "exec-2", expect);
    inbox_free(m, 3);
    free(token);
}

Test(cli_control, forged_or_altered_tokens_are_refused_and_nothing_is_produced)
{
    char *good = swf_token_make(swf_token_secret_env(), "exec-3", "1");
    /* Signed with another secret. */
    char *other = swf_token_make("not-the-secret", "exec-3", "1");
    cr_assert_eq(swf(NULL, "task-success", other, "{}", NULL), 1);
    cr_assert(strstr(errors, "forged or altered task token") != NULL, "%s", errors);
    cr_assert(strstr(errors, "nothing was sent") != NULL, "%s", errors);
    /* The payload altered to name another execution, signature kept. */
    char *forged = swf_token_make(swf_token_secret_env(), "exec-4", "1");
    char *dot = strchr(good, '.'), *dot2 = strchr(forged, '.');
    cr_assert(dot != NULL && dot2 != NULL);
    char altered[SWF_TOKEN_MAX_BYTES];
    snprintf(altered, sizeof(altered), "%.*s%s", (int)(dot2 - forged), forged, dot);
    cr_assert_eq(swf(NULL, "task-failure", altered, "--error", "E", NULL), 1);
    cr_assert(strstr(errors, "forged or altered task token") != NULL, "%s", errors);
    /* A flipped character in the signature. */
    snprintf(altered, sizeof(altered), "%s", good);
    char *last = altered + strlen(altered) - 2;
    *last = *last == 'A' ? 'B' : 'A';
    cr_assert_eq(swf(NULL, "task-heartbeat", altered, NULL), 1);
    cr_assert_eq(swf(NULL, "task-success", "not-a-token", "{}", NULL), 1);
    cr_assert(strstr(errors, "malformed task token") != NULL, "%s", errors);
    /* Tokens are checked before the result is parsed or Kafka is asked. */
    cr_assert_eq(inbox_count(), 0);
    /* Bad arguments are usage errors. */
    cr_assert_eq(swf(NULL, "task-success", good, "{bad", NULL), 2);
    cr_assert_eq(swf(NULL, "task-success", good, NULL), 2);
    cr_assert_eq(swf(NULL, "task-failure", good, "--bogus", NULL), 2);
    cr_assert_eq(inbox_count(), 0);
    free(good);
    free(other);
    free(forged);
}

Test(cli_control, without_brokers_commands_say_so)
{
    unsetenv("SWF_KAFKA_BROKERS");
    char *token = swf_token_make(swf_token_secret_env(), "exec-5", "1");
    cr_assert_eq(swf(NULL, "task-success", token, "{}", NULL), 3);
    cr_assert(strstr(errors, "SWF_KAFKA_BROKERS is not set") != NULL, "%s", errors);
    free(token);
    /* start still works, and says no decider was notified. */
    const char *db = fixture_db();
    char id[64];
    start_one(db, "hello", pass_definition, id);
    cr_assert(strstr(errors, "no decider was notified") != NULL, "%s", errors);
    cr_assert_eq(swf(db, "describe", id, NULL), 0);
}

/* ---- signal, cancel, terminate ------------------------------------------------------ */

Test(cli_control, signal_cancel_terminate_send_their_messages_for_an_open_execution)
{
    const char *db = fixture_db();
    char id[64];
    start_one(db, "hello", pass_definition, id);
    cr_assert(strstr(errors, "notified") == NULL, "%s", errors);
    /* An ASL execution: a signal means nothing to it, and is sent on --force only. */
    cr_assert_eq(swf(db, "signal", id, "approved", NULL), 1, "%s", errors);
    cr_assert(strstr(errors, "signals mean nothing") && strstr(errors, "nothing was sent"), "%s",
              errors);
    cr_assert_eq(swf(db, "signal", id, "approved", "--input", "{\"by\":\"ann\"}", "--force", NULL),
                 0, "%s", errors);
    cr_assert_eq(swf(db, "signal", id, "ping", "--force", NULL), 0, "%s", errors);
    cr_assert_eq(swf(db, "cancel", id, "--cause", "customer asked", NULL), 0, "%s", errors);
    cr_assert_eq(swf(db, "cancel", id, NULL), 0, "%s", errors);
    cr_assert_eq(swf(db, "terminate", id, "--reason", "stuck", "--details", "see ticket 12", NULL),
                 0, "%s", errors);
    cr_assert_eq(swf(db, "terminate", id, NULL), 0, "%s", errors);
    inbox_msg_t m[7];
    inbox_read(m, 7);
    char expect[1024];
    /* swf start posted the decide message. */
    snprintf(expect, sizeof(expect), "{\"v\":1,\"type\":\"decide\",\"executionId\":\"%s\"}", id);
    assert_message(&m[0], id, expect);
    snprintf(expect, sizeof(expect),
             "{\"v\":1,\"type\":\"signal\",\"executionId\":\"%s\",\"signalName\":\"approved\","
             "\"input\":{\"by\":\"ann\"}}",
             id);
    assert_message(&m[1], id, expect);
    snprintf(expect, sizeof(expect),
             "{\"v\":1,\"type\":\"signal\",\"executionId\":\"%s\",\"signalName\":\"ping\","
             "\"input\":null}",
             id);
    assert_message(&m[2], id, expect);
    snprintf(expect, sizeof(expect),
             "{\"v\":1,\"type\":\"cancel\",\"executionId\":\"%s\",\"cause\":\"customer asked\"}",
             id);
    assert_message(&m[3], id, expect);
    snprintf(expect, sizeof(expect), "{\"v\":1,\"type\":\"cancel\",\"executionId\":\"%s\"}", id);
    assert_message(&m[4], id, expect);
    snprintf(expect, sizeof(expect),
             "{\"v\":1,\"type\":\"terminate\",\"executionId\":\"%s\",\"reason\":\"stuck\","
             "\"details\":\"see ticket 12\"}",
             id);
    assert_message(&m[5], id, expect);
    snprintf(expect, sizeof(expect), "{\"v\":1,\"type\":\"terminate\",\"executionId\":\"%s\"}", id);
    assert_message(&m[6], id, expect);
    inbox_free(m, 7);
}

/* ---- swf send-event (cli/send_event.c) -------------------------------------------- */

static const char loan_definition[] =
    "{\"trigger-defs\":["
    "{\"name\":\"Req\",\"source\":\"/portal\",\"correlation-token\":\"$.data.loan\"},"
    "{\"name\":\"Ok\",\"source\":\"/mgr\",\"correlation-token\":\"$.data.loan\"}],"
    "\"states\":["
    "{\"name\":\"Start\",\"type\":\"EVENT\",\"start\":true,\"events\":[{\"event-expression\":"
    "\"Req\",\"next-state\":\"Decide\"}]},"
    "{\"name\":\"Decide\",\"type\":\"EVENT\",\"events\":[{\"event-expression\":\"Ok\","
    "\"next-state\":\"Done\"}]},{\"name\":\"Done\",\"type\":\"END\"}]}";

/* What a decider would append to a started execution: its first decision
 * task, which decides nothing (the start state waits). */
static void first_decision(const char *db, const char *id)
{
    swf_history_store_t *s;
    cr_assert_null(swf_history_pg_new(db, &s));
    json_object *started = json_object_new_object(), *done = json_object_new_object();
    swf_json_add(started, "scheduledEventId", json_object_new_int(2));
    swf_json_add(done, "scheduledEventId", json_object_new_int(2));
    swf_json_add(done, "startedEventId", json_object_new_int(3));
    int64_t now = swf_time_now_ms();
    swf_event_t evs[] = {{3, SWF_EVENT_DECISION_TASK_STARTED, now, started},
                         {4, SWF_EVENT_DECISION_TASK_COMPLETED, now, done}};
    swf_error_t *err = swf_history_append(s, id, 3, evs, 2);
    cr_assert_null(err, "%s", swf_error_message(err));
    json_object_put(started);
    json_object_put(done);
    swf_history_store_free(s);
}

Test(cli_control, send_event_routes_an_event_to_the_waiting_instance_or_starts_one)
{
    const char *db = fixture_db();
    char id[64];
    start_one(db, "loans", loan_definition, id);
    first_decision(db, id);
    /* Start waits for Req: it records it. */
    cr_assert_eq(swf(db, "send-event", "loans",
                     "{\"id\":\"e1\",\"source\":\"/portal\",\"type\":\"t\",\"data\":{\"loan\":"
                     "\"L1\"}}",
                     NULL),
                 0, "%s", errors);
    char want[256];
    snprintf(want, sizeof(want), "%s: recorded by a waiting state", id);
    cr_assert_not_null(strstr(output, want), "%s", output);
    /* Nobody waits for Ok and no instance has a correlation value yet. */
    cr_assert_eq(
        swf(db, "send-event", "loans",
            "{\"id\":\"e2\",\"source\":\"/mgr\",\"type\":\"t\",\"data\":{\"loan\":\"L1\"}}", NULL),
        1, "%s", errors);
    cr_assert_not_null(strstr(output, "dropped: no open instance"), "%s", output);
    cr_assert_eq(swf(db, "send-event", "loans", "{\"id\":\"e3\",\"source\":\"/portal\"}", NULL), 1);
    cr_assert_not_null(strstr(output, "dropped: malformed"), "%s", output);
    /* e1 again (no decider has recorded it yet): a signal with the same
     * request id, which the decider records once. */
    cr_assert_eq(swf(db, "send-event", "loans",
                     "{\"id\":\"e1\",\"source\":\"/portal\",\"type\":\"t\",\"data\":{\"loan\":"
                     "\"L1\"}}",
                     NULL),
                 0, "%s", errors);
    /* The decide message of swf start and the two signals. */
    inbox_msg_t m[3];
    inbox_read(m, 3);
    cr_assert_str_eq(swf_json_get_string(m[1].value, "requestId"),
                     swf_json_get_string(m[2].value, "requestId"));
    char expect[512];
    snprintf(expect, sizeof(expect),
             "{\"v\":1,\"type\":\"signal\",\"executionId\":\"%s\",\"signalName\":\"cloudevent\","
             "\"input\":{\"id\":\"e1\",\"source\":\"/portal\",\"type\":\"t\",\"data\":{\"loan\":"
             "\"L1\"}}}",
             id);
    assert_message(&m[1], id, expect);
    assert_message(&m[2], id, expect);
    inbox_free(m, 3);
}

/* A fresh database with loan_definition registered as "loans". */
static const char *loans_registered(void)
{
    const char *db = fixture_db();
    char def[] = "/tmp/swf-ctl-def-XXXXXX";
    close(mkstemp(def));
    write_file(def, loan_definition);
    cr_assert_eq(swf(db, "register", "loans", def, NULL), 0, "%s", errors);
    unlink(def);
    return db;
}

Test(cli_control, send_event_starts_an_instance_when_the_start_state_waits_for_it)
{
    const char *db = loans_registered();
    cr_assert_eq(swf(db, "send-event", "loans",
                     "{\"id\":\"e1\",\"source\":\"/portal\",\"type\":\"t\",\"data\":{\"loan\":"
                     "\"L9\"}}",
                     NULL),
                 0, "%s", errors);
    cr_assert_not_null(strstr(output, ": started by the event"), "%s", output);
    char id[64];
    snprintf(id, sizeof(id), "%.36s", output);
    swf_history_store_t *s;
    cr_assert_null(swf_history_pg_new(db, &s));
    swf_event_list_t events = {0};
    cr_assert_null(swf_history_load(s, id, 0, 0, &events));
    json_object *first;
    cr_assert(swf_json_get(events.items[0].attrs, "startEvent", &first));
    cr_assert_str_eq(swf_json_get_string(first, "id"), "e1");
    swf_event_list_free(&events);
    swf_history_store_free(s);
    /* The same event again: the new instance has it, so none starts. */
    cr_assert_eq(swf(db, "send-event", "loans",
                     "{\"id\":\"e1\",\"source\":\"/portal\",\"type\":\"t\",\"data\":{\"loan\":"
                     "\"L9\"}}",
                     NULL),
                 0, "%s", errors);
    cr_assert_not_null(strstr(output, "already received it"), "%s", output);
    cr_assert_null(strstr(output, "started"), "%s", output);
}

Test(cli_control, a_starting_event_starts_one_instance_even_after_that_instance_has_closed)
{
    const char *db = loans_registered();
    const char *event =
        "{\"id\":\"e7\",\"source\":\"/portal\",\"type\":\"t\",\"data\":{\"loan\":\"L7\"}}";
    cr_assert_eq(swf(db, "send-event", "loans", event, NULL), 0, "%s", errors);
    cr_assert_not_null(strstr(output, ": started by the event"), "%s", output);
    char id[64];
    snprintf(id, sizeof(id), "%.36s", output);
    /* The instance closes, so no open instance has the event any more:
     * what a second send-event racing the first would see. */
    swf_history_store_t *s;
    cr_assert_null(swf_history_pg_new(db, &s));
    json_object *attrs = json_object_new_object();
    swf_event_t closed = {3, SWF_EVENT_WORKFLOW_EXECUTION_TERMINATED, swf_time_now_ms(), attrs};
    swf_error_t *err = swf_history_append(s, id, 3, &closed, 1);
    cr_assert_null(err, "%s", swf_error_message(err));
    json_object_put(attrs);
    swf_history_store_free(s);
    cr_assert_eq(swf(db, "send-event", "loans", event, NULL), 0, "%s", errors);
    char want[128];
    snprintf(want, sizeof(want), "%s: already started by this event (a duplicate)", id);
    cr_assert_not_null(strstr(output, want), "%s", output);
    cr_assert_null(strstr(output, "started by the event"), "%s", output);
}

Test(cli_control, unknown_or_closed_executions_are_refused_and_nothing_is_produced)
{
    const char *db = fixture_db();
    cr_assert_eq(swf(db, "db", "migrate", NULL), 0);
    const char *unknown = "00000000-0000-4000-8000-000000000000";
    cr_assert_eq(swf(db, "signal", unknown, "go", NULL), 1);
    cr_assert(strstr(errors, "no execution 00000000-0000-4000-8000-000000000000") != NULL, "%s",
              errors);
    cr_assert_eq(swf(db, "cancel", unknown, NULL), 1);
    cr_assert_eq(swf(db, "terminate", unknown, NULL), 1);
    cr_assert_eq(inbox_count(), 0);

    /* Close an execution the way a decider would, then try again. */
    char id[64];
    start_one(db, "hello", pass_definition, id);
    cr_assert_eq(inbox_count(), 1); /* the decide message */
    swf_history_store_t *s = fixture_store(db);
    const char *attrs[] = {"{\"scheduledEventId\":2,\"identity\":\"test\"}",
                           "{\"scheduledEventId\":2,\"startedEventId\":3}",
                           "{\"result\":{},\"decisionTaskCompletedEventId\":4}"};
    swf_event_type_t types[] = {SWF_EVENT_DECISION_TASK_STARTED, SWF_EVENT_DECISION_TASK_COMPLETED,
                                SWF_EVENT_WORKFLOW_EXECUTION_COMPLETED};
    for (int i = 0; i < 3; i++) {
        swf_event_t ev = {0, types[i], 1763719200000LL, json_tokener_parse(attrs[i])};
        cr_assert(swf_history_append(s, id, 3 + i, &ev, 1) == NULL);
        json_object_put(ev.attrs);
    }
    swf_history_store_free(s);
    cr_assert_eq(swf(db, "signal", id, "go", NULL), 1);
    cr_assert(strstr(errors, "is already closed (succeeded)") != NULL, "%s", errors);
    cr_assert_eq(swf(db, "cancel", id, "--cause", "late", NULL), 1);
    cr_assert(strstr(errors, "is already closed") != NULL, "%s", errors);
    cr_assert_eq(swf(db, "terminate", id, NULL), 1);
    cr_assert_eq(inbox_count(), 1);
    /* Usage errors. */
    cr_assert_eq(swf(db, "signal", id, NULL), 2);
    cr_assert_eq(swf(db, "signal", id, "go", "--input", "{bad", NULL), 2);
    cr_assert_eq(inbox_count(), 1);
}

/* ---- start --wait -------------------------------------------------------------------- */

typedef struct driver {
    const char *db;
    const char *mocks_file;
    int appended;
    bool cut; /* drop the follower's connection half way */
    char error[512];
} driver_t;

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/*
 * Plays the decider: waits for the execution `swf start` creates, runs it
 * with swf_local_run (the decider's own code, with mocked activities) on the
 * same definition and input, and appends its events from the third on to
 * PostgreSQL, a few at a time, while `swf start --wait` is following.
 */
static void *drive(void *arg)
{
    driver_t *d = arg;
    swf_history_store_t *s = NULL;
    swf_event_list_t started = {0}, local = {0};
    swf_history_store_t *mem = swf_history_mem_new();
    json_object *mocks = NULL;
    swf_local_result_t result = {0};
    char conninfo[1024];
    snprintf(conninfo, sizeof(conninfo), "%s application_name=swf_test_driver", d->db);
    swf_error_t *err = swf_history_pg_new(conninfo, &s);
    char id[64] = "";
    for (int i = 0; err == NULL && id[0] == '\0' && i < WAIT_MS / 10; i++) {
        swf_history_execution_t *items = NULL;
        size_t n = 0;
        swf_history_filter_t f = {0};
        err = swf_history_pg_executions_list(s, &f, &items, &n);
        if (err == NULL && n == 1)
            snprintf(id, sizeof(id), "%s", items[0].execution_id);
        swf_history_executions_free(items, n);
        if (id[0] == '\0')
            sleep_ms(10);
    }
    if (err == NULL && id[0] == '\0')
        err = swf_error_new(SWF_E_INTERNAL, NULL, "no execution was started");
    if (err == NULL)
        err = swf_history_load(s, id, 0, 0, &started);
    if (err == NULL)
        err = swf_json_read_file(d->mocks_file, 1 << 20, &mocks);
    if (err == NULL) {
        json_object *def = NULL, *input = NULL;
        swf_json_get(started.items[0].attrs, "definition", &def);
        swf_json_get(started.items[0].attrs, "input", &input);
        swf_local_options_t opt = {.definition = def,
                                   .input = input,
                                   .mocks = mocks,
                                   .machine_name = "order",
                                   .execution_id = id,
                                   .machine_dir = SWF_SOURCE_DIR "/examples", /* its invoice */
                                   .start_ms = started.items[0].time_ms,
                                   .trusted = true};
        err = swf_local_run(&opt, mem, &result);
    }
    if (err == NULL)
        err = swf_history_load(mem, id, 0, 0, &local);
    for (size_t i = 2; err == NULL && i < local.count; i += 3) {
        size_t n = local.count - i < 3 ? local.count - i : 3;
        err = swf_history_append(s, id, (int64_t)i + 1, &local.items[i], n);
        d->appended = (int)(i + n);
        sleep_ms(5);
        if (d->cut && i == 11) {
            /* The follower's session ends, as in a restart. It connects
             * only after `swf start` posted its decide message, so wait
             * until a session (not the driver's) has read events. */
            PGconn *c = PQconnectdb(d->db);
            int ended = 0;
            for (int tries = 0; tries < 300 && ended < 1 && PQstatus(c) == CONNECTION_OK; tries++) {
                PGresult *r =
                    PQexec(c, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                              " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                              " AND application_name <> 'swf_test_driver'"
                              " AND query LIKE '%FROM events WHERE execution_id%'");
                ended = PQresultStatus(r) == PGRES_TUPLES_OK ? atoi(PQgetvalue(r, 0, 0)) : 0;
                PQclear(r);
                if (ended < 1)
                    sleep_ms(100);
            }
            if (ended < 1)
                err = swf_error_new(SWF_E_INTERNAL, NULL,
                                    "no follower's session to end within 30 s: %s",
                                    PQerrorMessage(c));
            PQfinish(c);
            sleep_ms(300);
        }
    }
    if (err != NULL) {
        snprintf(d->error, sizeof(d->error), "%s", swf_error_message(err));
        swf_error_free(err);
    }
    swf_local_result_free(&result);
    json_object_put(mocks);
    swf_event_list_free(&started);
    swf_event_list_free(&local);
    swf_history_store_free(mem);
    swf_history_store_free(s);
    return NULL;
}

/* Registers the example order pipeline, starts it with --wait while `drive`
 * plays the decider with the given mocks; returns the exit status. */
static int start_wait(const char *db, const char *mocks, driver_t *d)
{
    cr_assert_eq(swf(db, "register", "order", SWF_SOURCE_DIR "/examples/order.asl.json", NULL), 0,
                 "%s", errors);
    *d = (driver_t){.db = db, .mocks_file = mocks, .cut = d->cut};
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, drive, d), 0);
    int code = swf(db, "start", "order", "--input", "@" SWF_SOURCE_DIR "/examples/order.input.json",
                   "--wait", NULL);
    pthread_join(t, NULL);
    cr_assert_str_eq(d->error, "", "the driver failed: %s", d->error);
    return code;
}

Test(cli_control, start_wait_follows_an_execution_to_its_success)
{
    const char *db = fixture_db();
    driver_t d = {0};
    int code = start_wait(db, SWF_SOURCE_DIR "/examples/order.mocks.json", &d);
    cr_assert_eq(code, 0, "stdout:\n%s\nstderr:\n%s", output, errors);
    cr_assert(d.appended > 20);
    /* The execution id first, then the story, then the output. */
    char id[40];
    snprintf(id, sizeof(id), "%.36s", output);
    const char *expect_in_order[] = {
        "started ",
        "entered Validate (Choice)",
        "entered Charge (Task)",
        "scheduled activity 1 (payments, state Charge) attempt 0",
        "failed activity 1 (payments, state Charge): Payment.Throttled: too many requests",
        "retrying Charge after Payment.Throttled",
        "timer t2 started (2 s)",
        "timer t2 fired",
        "completed activity 3 (payments, state Charge), result {",
        "entered Fulfil (Parallel)",
        "entered Fulfil[0]/PackItems[1]/Pack (Task)",
        "scheduled activity 4 (email, state Fulfil[1]/Notify)",
        "entered WaitForCourier (Wait)",
        "timer t",
        "entered Done (Pass)",
        "execution succeeded\n{",
    };
    const char *at = output + 36;
    for (size_t i = 0; i < sizeof(expect_in_order) / sizeof(expect_in_order[0]); i++) {
        const char *found = strstr(at, expect_in_order[i]);
        cr_assert_not_null(found, "\"%s\" missing (or out of order) in:\n%s\nstderr:\n%s",
                           expect_in_order[i], output, errors);
        at = found + strlen(expect_in_order[i]);
    }
    cr_assert(strstr(errors, "states are not shown") == NULL, "%s", errors);
    /* The last line is the output, as compact JSON. */
    char *last = output + strlen(output) - 1;
    cr_assert_eq(*last, '\n');
    *last = '\0';
    char *line = strrchr(output, '\n') + 1;
    json_object *result = json_tokener_parse(line);
    cr_assert_not_null(result, "%s", line);
    cr_assert_str_eq(swf_json_get_string(result, "status"), "SHIPPED");
    cr_assert_str_eq(swf_json_get_string(result, "chargeId"), "ch_123");
    json_object_put(result);
    /* And the decide message went out for it. */
    inbox_msg_t m[1];
    inbox_read(m, 1);
    char expect[256];
    snprintf(expect, sizeof(expect), "{\"v\":1,\"type\":\"decide\",\"executionId\":\"%s\"}", id);
    assert_message(&m[0], id, expect);
    inbox_free(m, 1);
}

/* A connection the database drops while following (a restart) is waited
 * out, as by every other process: the story goes on to the end. */
Test(cli_control, start_wait_waits_out_a_dropped_connection)
{
    const char *db = fixture_db();
    driver_t d = {.cut = true};
    int code = start_wait(db, SWF_SOURCE_DIR "/examples/order.mocks.json", &d);
    cr_assert_eq(code, 0, "stdout:\n%s\nstderr:\n%s", output, errors);
    cr_assert(strstr(errors, "retrying until the database answers") != NULL, "%s", errors);
    cr_assert(strstr(errors, "the database answers again") != NULL, "%s", errors);
    cr_assert(strstr(output, "execution succeeded\n{") != NULL, "%s", output);
}

Test(cli_control, start_wait_reports_a_failed_execution_and_exits_1)
{
    const char *db = fixture_db();
    driver_t d = {0};
    int code = start_wait(db, SWF_SOURCE_DIR "/examples/order.declined.mocks.json", &d);
    cr_assert_eq(code, 1, "stdout:\n%s\nstderr:\n%s", output, errors);
    cr_assert(strstr(output, "caught Payment.Declined in Charge, next Declined") != NULL, "%s",
              output);
    cr_assert(strstr(output, "entered Declined (Fail)") != NULL, "%s", output);
    cr_assert(strstr(output, "execution failed\nerror: OrderDeclined\ncause: card expired\n") !=
                  NULL,
              "%s", output);
}
