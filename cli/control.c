/*
 * control.c - the commands that talk to a running execution through its
 * inbox: task-success, task-failure, task-heartbeat (the answers of an
 * activity, usually a .waitForTaskToken callback), signal, cancel,
 * terminate and redrive; and the `decide` message that `swf start` posts.
 *
 * Each command builds exactly one inbox message of protocol/KAFKA.md, sends
 * it to the inbox topic ($SWF_INBOX_TOPIC, default swf.inbox) keyed by the
 * execution id, and waits for Kafka's delivery report before it says "sent":
 * exit 0 means the message is durably in the topic, not that a decider has
 * acted on it yet (the history shows that; `swf describe`).
 *
 * What can be refused here is refused here, before anything is produced:
 * a task token is verified with the deployment's secret ($SWF_TOKEN_SECRET),
 * so a forged or altered token never reaches the topic; signal, cancel and
 * terminate first ask PostgreSQL whether the execution exists and is open.
 * That check is advisory (the execution may close a moment later; the
 * decider then ignores the message), but it turns the common mistakes, a
 * mistyped id or a finished execution, into a clear answer instead of a
 * message that silently changes nothing.
 *
 * Messages are built by protocol/message.h and, before they are sent, parsed
 * back by the same codec the deciders use: whatever a decider would send to
 * the dead-letter topic (a cause over its limit, a bad token) is refused
 * here, where the person who typed it can see why.
 *
 * The producer (kafka/kafka.h) is made per command and destroyed after the
 * delivery report: a command line sends one message, so there is nothing to
 * keep. `swf start --inputs` is the exception: one producer for all the
 * `decide` messages of the command, one wait for their delivery reports
 * per batch (swf_cli_decide_post_many).
 */
#include "cli/cli.h"

#include <assert.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decider/replay.h"
#include "history/catalog.h"
#include "history/pg.h"
#include "kafka/kafka.h"
#include "protocol/json.h"
#include "protocol/message.h"
#include "protocol/token.h"

/* ---- the producer ------------------------------------------------------------ */

static const char *inbox_topic(void)
{
    const char *t = getenv("SWF_INBOX_TOPIC");
    return t != NULL && t[0] != '\0' ? t : SWF_MSG_INBOX_TOPIC;
}

/* $SWF_KAFKA_BROKERS, or NULL: a command that sends refuses to guess a
 * broker (a message sent to the wrong cluster is silently lost). */
static const char *brokers_env(void)
{
    const char *b = getenv("SWF_KAFKA_BROKERS");
    return b != NULL && b[0] != '\0' ? b : NULL;
}

/* How long a command waits for the inbox's metadata before it sends anyway
 * (the send then waits out its own timeout when the cluster is away). */
#define INBOX_LOOKUP_MS 2000

/* What a decider would dead-letter is refused before it is produced: the
 * deciders' own check of the message. */
static swf_error_t *message_check(const char *payload, size_t len)
{
    swf_msg_t check = {0};
    swf_error_t *err = swf_msg_parse(payload, len, swf_token_secret_env(), &check);
    swf_msg_clear(&check);
    if (err != NULL)
        swf_error_prefix(err, "the message would be refused");
    return err;
}

/* A producer for the inbox on `brokers`, which has learnt the inbox's
 * partitions: now rather than at librdkafka's next scan of topics, up to
 * a second away (kafka.h). A failed lookup is the send's to report. */
static swf_error_t *inbox_producer_new(const char *brokers, rd_kafka_t **producer)
{
    swf_error_t *err =
        swf_kafka_producer_new(&(swf_kafka_producer_config_t){.brokers = brokers}, producer);
    if (err == NULL)
        (void)swf_kafka_topic_lookup(*producer, inbox_topic(), INBOX_LOOKUP_MS);
    return err;
}

/* Sends one message to the inbox under `key` and waits for its delivery
 * report (kafka/kafka.h, where librdkafka's errors are translated). */
static swf_error_t *inbox_send(const char *key, json_object *msg)
{
    const char *brokers = brokers_env();
    if (brokers == NULL)
        return swf_error_new(SWF_E_KAFKA, NULL,
                             "SWF_KAFKA_BROKERS is not set (host:port of the Kafka brokers)");
    const char *payload = swf_msg_str(msg);
    size_t len = strlen(payload);
    swf_error_t *err = message_check(payload, len);
    if (err != NULL)
        return err;
    rd_kafka_t *producer = NULL;
    err = inbox_producer_new(brokers, &producer);
    if (err != NULL)
        return err;
    swf_kafka_out_t out = {inbox_topic(), key, payload, len, RD_KAFKA_RESP_ERR_NO_ERROR};
    err = swf_kafka_send(producer, &out, 1);
    if (err != NULL)
        swf_error_prefix(err, "message not delivered to %s", brokers);
    swf_kafka_producer_free(producer);
    return err;
}

/* ---- shared by the commands -------------------------------------------------- */

/* Who answered, for the `identity` of activity answers: "swf-cli@HOST". */
static const char *identity(char buf[SWF_MSG_NAME_BYTES])
{
    char host[200] = "";
    if (gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0')
        snprintf(host, sizeof(host), "unknown");
    snprintf(buf, SWF_MSG_NAME_BYTES, "swf-cli@%s", host);
    return buf;
}

/* Sends `msg` (taken) keyed by `execution_id`, reports, returns the exit
 * status. */
static int send_and_report(const char *cmd, const char *execution_id, json_object *msg)
{
    swf_error_t *err = inbox_send(execution_id, msg);
    const char *type = swf_json_get_string(msg, "type");
    assert(type != NULL);
    if (err == NULL)
        printf("sent %s for execution %s to %s\n", type, execution_id, inbox_topic());
    json_object_put(msg);
    return err != NULL ? swf_cli_fail(cmd, err) : SWF_EXIT_OK;
}

/* Verifies a task token; *execution_id gets the execution it names. */
static int token_check(const char *cmd, const char *token, char **execution_id)
{
    char *activity_id = NULL;
    swf_error_t *err = NULL;
    if (strlen(token) > SWF_TOKEN_MAX_BYTES)
        err = swf_error_new(SWF_E_INPUT, NULL, "malformed task token (over %d bytes)",
                            SWF_TOKEN_MAX_BYTES);
    else
        err = swf_token_verify(swf_token_secret_env(), token, execution_id, &activity_id);
    free(activity_id);
    if (err == NULL)
        return SWF_EXIT_OK;
    fprintf(stderr, "swf %s: %s; nothing was sent\n", cmd, swf_error_message(err));
    fprintf(stderr, "  pass the token exactly as received; every swf process of a deployment "
                    "must share SWF_TOKEN_SECRET\n");
    swf_error_free(err);
    return SWF_EXIT_NO;
}

/* Asks PostgreSQL whether the execution exists and is open. */
static int execution_check(const char *cmd, const char *execution_id)
{
    swf_history_store_t *s;
    swf_error_t *err = swf_history_pg_new(swf_history_pg_conninfo_env(), &s);
    if (err != NULL)
        return swf_cli_fail(cmd, err);
    swf_history_execution_t ex;
    err = swf_history_pg_execution_describe(s, execution_id, &ex);
    swf_history_store_free(s);
    if (err != NULL) {
        if (swf_error_code(err) == SWF_E_NOTFOUND) {
            fprintf(stderr, "swf %s: no execution %s; nothing was sent\n", cmd, execution_id);
            swf_error_free(err);
            return SWF_EXIT_NO;
        }
        return swf_cli_fail(cmd, err);
    }
    int code = SWF_EXIT_OK;
    if (strcmp(ex.status, "open") != 0) {
        fprintf(stderr, "swf %s: execution %s is already closed (%s); nothing was sent\n", cmd,
                execution_id, ex.status);
        code = SWF_EXIT_NO;
    }
    swf_history_execution_free(&ex);
    return code;
}

/* ---- task-success, task-failure, task-heartbeat ------------------------------ */

/* clang-format off */
#define TOKEN_OPT                                                                                 \
    {"TOKEN", NULL, SWF_CLI_REQUIRED,                                                              \
     "the task token, as the activity received it (SWF_TASK_TOKEN, or the .waitForTaskToken "      \
     "Task's $$.Task.Token)",                                                                      \
     "swf task-failure \"$SWF_TASK_TOKEN\""}
/* clang-format on */

/* Builds the answer an activity command sends for `token` from its command
 * line; NULL, reported, with *code the exit status, when an argument is bad. */
typedef json_object *task_msg_fn(swf_cli_args_t *a, const char *token, int *code);

/* What task-success, task-failure and task-heartbeat share: parse the command
 * line, verify the token (nothing is sent for a bad one), build the message
 * and send it keyed by the execution the token names. */
static int task_answer(const swf_cli_cmd_t *cmd, int argc, char **argv, task_msg_fn *build)
{
    swf_cli_args_t a;
    if (!swf_cli_args_parse(cmd, argc, argv, &a))
        return a.status;
    const char *name = cmd->name + strlen("swf "); /* "task-success" */
    const char *token = swf_cli_args_get(&a, "TOKEN");
    char *execution_id = NULL;
    int code = token_check(name, token, &execution_id);
    if (code != SWF_EXIT_OK)
        return code;
    json_object *m = build(&a, token, &code);
    if (m != NULL)
        code = send_and_report(name, execution_id, m);
    free(execution_id);
    return code;
}

static const swf_cli_cmd_t task_success_cmd = {
    "swf task-success", NULL,
    "Answer an activity (or a .waitForTaskToken Task) with its result, through the inbox.",
    (const swf_cli_opt_t[]){TOKEN_OPT,
                            {"RESULT", NULL, SWF_CLI_REQUIRED, "the result: " SWF_CLI_JSON_HELP,
                             "swf task-success \"$SWF_TASK_TOKEN\" '{\"approved\": true}'"},
                            SWF_CLI_OPTS_END},
    NULL};

/* The message of task-success: the result, parsed from the command line
 * (NULL with *code set when it is not JSON). */
static json_object *task_success_msg(swf_cli_args_t *a, const char *token, int *code)
{
    json_object *result = NULL;
    swf_error_t *err =
        swf_cli_json_arg("result", swf_cli_args_get(a, "RESULT"), SWF_MSG_MAX_BYTES, &result);
    if (err != NULL) {
        *code = swf_cli_fail("task-success", err);
        return NULL;
    }
    char who[SWF_MSG_NAME_BYTES];
    json_object *m = swf_msg_activity_completed_new(token, result, identity(who));
    json_object_put(result);
    return m;
}

int swf_cli_task_success(int argc, char **argv)
{
    return task_answer(&task_success_cmd, argc, argv, task_success_msg);
}

static const swf_cli_cmd_t task_failure_cmd = {
    "swf task-failure", NULL,
    "Answer an activity (or a .waitForTaskToken Task) with an error, which the state's Retry "
    "and Catch see.",
    (const swf_cli_opt_t[]){TOKEN_OPT,
                            {"--error", "ERROR", 0, "the error name (default States.TaskFailed)",
                             "swf task-failure \"$SWF_TASK_TOKEN\" --error Payment.Declined"},
                            {"--cause", "CAUSE", 0, "a longer explanation",
                             "swf task-failure \"$SWF_TASK_TOKEN\" --cause 'card expired'"},
                            SWF_CLI_OPTS_END},
    NULL};

static json_object *task_failure_msg(swf_cli_args_t *a, const char *token, int *code)
{
    (void)code;
    const char *error = swf_cli_args_get(a, "--error"), *cause = swf_cli_args_get(a, "--cause");
    char who[SWF_MSG_NAME_BYTES];
    return swf_msg_activity_failed_new(token, error != NULL ? error : "States.TaskFailed", cause,
                                       identity(who));
}

int swf_cli_task_failure(int argc, char **argv)
{
    return task_answer(&task_failure_cmd, argc, argv, task_failure_msg);
}

static const swf_cli_cmd_t task_heartbeat_cmd = {
    "swf task-heartbeat", NULL,
    "Record a heartbeat of a running activity, which keeps its HeartbeatSeconds from timing it "
    "out.",
    (const swf_cli_opt_t[]){TOKEN_OPT,
                            {"--details", "JSON|@FILE", 0,
                             "progress details to record: " SWF_CLI_JSON_HELP,
                             "swf task-heartbeat \"$SWF_TASK_TOKEN\" --details '{\"done\": 40}'"},
                            SWF_CLI_OPTS_END},
    NULL};

/* The message of task-heartbeat: the details, when given, parsed from the
 * command line (NULL with *code set when they are not JSON). */
static json_object *task_heartbeat_msg(swf_cli_args_t *a, const char *token, int *code)
{
    const char *details_arg = swf_cli_args_get(a, "--details");
    json_object *details = NULL;
    if (details_arg != NULL) {
        swf_error_t *err = swf_cli_json_arg("--details", details_arg, SWF_MSG_MAX_BYTES, &details);
        if (err != NULL) {
            *code = swf_cli_fail("task-heartbeat", err);
            return NULL;
        }
    }
    json_object *m = swf_msg_activity_heartbeat_new(token, details, details_arg != NULL);
    json_object_put(details);
    return m;
}

int swf_cli_task_heartbeat(int argc, char **argv)
{
    return task_answer(&task_heartbeat_cmd, argc, argv, task_heartbeat_msg);
}

/* ---- signal, cancel, terminate ----------------------------------------------- */

static const swf_cli_cmd_t signal_cmd = {
    "swf signal", "(ID | --workflow-id WORKFLOW_ID) NAME [--input JSON|@FILE] [--force]",
    "Send a signal to an open execution (a WorkflowExecutionSignaled event). An Amazon States "
    "Language state machine has no state that waits for a signal: for one, swf signal says so "
    "and sends nothing, unless --force.",
    (const swf_cli_opt_t[]){
        SWF_CLI_OPTS_EXECUTION("signal"),
        {"NAME", NULL, SWF_CLI_REQUIRED, "the signal's name",
         "swf signal --workflow-id order-7 approved"},
        {"--input", "JSON|@FILE", 0, "the signal's input: " SWF_CLI_JSON_HELP,
         "swf signal --workflow-id order-7 approved --input '{\"by\": \"ana\"}'"},
        {"--force", NULL, 0,
         "send it to an ASL execution too (it is recorded in the history and changes nothing)",
         "swf signal --workflow-id order-7 approved --force"},
        SWF_CLI_OPTS_END},
    NULL};

/* Signals mean nothing to an Amazon States Language state machine: no state
 * waits for one, so a signal would be recorded and change nothing. Says so
 * (SWF_EXIT_NO) for an execution whose definition is ASL (it has States);
 * other languages (Serverless Workflow) use them. */
static int signal_meaningful(const char *execution_id)
{
    swf_history_store_t *s;
    swf_error_t *err = swf_history_pg_new(swf_history_pg_conninfo_env(), &s);
    if (err != NULL)
        return swf_cli_fail("signal", err);
    swf_event_list_t first = {0};
    err = swf_history_load(s, execution_id, 0, 1, &first);
    swf_history_store_free(s);
    if (err != NULL)
        return swf_cli_fail("signal", err);
    json_object *def = NULL, *states = NULL;
    bool asl = first.count == 1 && first.items[0].type == SWF_EVENT_WORKFLOW_EXECUTION_STARTED &&
               swf_json_get(first.items[0].attrs, "definition", &def) &&
               swf_json_get(def, "States", &states);
    swf_event_list_free(&first);
    if (!asl)
        return SWF_EXIT_OK;
    fprintf(stderr,
            "swf signal: execution %s runs an Amazon States Language state machine, where signals "
            "mean nothing (no state waits for one); nothing was sent (--force sends it anyway)\n",
            execution_id);
    return SWF_EXIT_NO;
}

int swf_cli_signal(int argc, char **argv)
{
    swf_cli_args_t a;
    char *id = NULL;
    if (!swf_cli_args_parse(&signal_cmd, argc, argv, &a))
        return a.status;
    const char *name = swf_cli_args_get(&a, "NAME"), *input_arg = swf_cli_args_get(&a, "--input");
    json_object *input = NULL;
    if (input_arg != NULL) {
        swf_error_t *err = swf_cli_json_arg("--input", input_arg, SWF_MSG_MAX_BYTES, &input);
        if (err != NULL)
            return swf_cli_fail("signal", err);
    }
    if (!swf_cli_args_execution(&a, NULL, &id)) {
        json_object_put(input);
        return a.status;
    }
    int code = execution_check("signal", id);
    if (code == SWF_EXIT_OK && !swf_cli_args_has(&a, "--force"))
        code = signal_meaningful(id);
    if (code == SWF_EXIT_OK)
        code = send_and_report("signal", id, swf_msg_signal_new(NULL, id, name, input));
    json_object_put(input);
    free(id);
    return code;
}

static const swf_cli_cmd_t cancel_cmd = {
    "swf cancel", "(ID | --workflow-id WORKFLOW_ID) [--cause TEXT]",
    "Ask an open execution to cancel: it closes as canceled once its running activities are "
    "canceled.",
    (const swf_cli_opt_t[]){SWF_CLI_OPTS_EXECUTION("cancel"),
                            {"--cause", "TEXT", 0, "why, recorded in the history",
                             "swf cancel --workflow-id order-7 --cause 'customer asked'"},
                            SWF_CLI_OPTS_END},
    NULL};

int swf_cli_cancel(int argc, char **argv)
{
    swf_cli_args_t a;
    char *id = NULL;
    if (!swf_cli_args_parse(&cancel_cmd, argc, argv, &a) || !swf_cli_args_execution(&a, NULL, &id))
        return a.status;
    const char *cause = swf_cli_args_get(&a, "--cause");
    int code = execution_check("cancel", id);
    if (code == SWF_EXIT_OK)
        code = send_and_report("cancel", id, swf_msg_cancel_new(NULL, id, cause));
    free(id);
    return code;
}

static const swf_cli_cmd_t terminate_cmd = {
    "swf terminate", "(ID | --workflow-id WORKFLOW_ID) [--reason REASON] [--details DETAILS]",
    "End an open execution now, without cancelling its activities.",
    (const swf_cli_opt_t[]){SWF_CLI_OPTS_EXECUTION("terminate"),
                            {"--reason", "REASON", 0, "why, recorded in the history",
                             "swf terminate --workflow-id order-7 --reason 'stuck'"},
                            {"--details", "DETAILS", 0, "more text, recorded in the history",
                             "swf terminate --workflow-id order-7 --details 'see ticket 12'"},
                            SWF_CLI_OPTS_END},
    NULL};

int swf_cli_terminate(int argc, char **argv)
{
    swf_cli_args_t a;
    char *id = NULL;
    if (!swf_cli_args_parse(&terminate_cmd, argc, argv, &a) ||
        !swf_cli_args_execution(&a, NULL, &id))
        return a.status;
    const char *reason = swf_cli_args_get(&a, "--reason");
    const char *details = swf_cli_args_get(&a, "--details");
    int code = execution_check("terminate", id);
    if (code == SWF_EXIT_OK) {
        /* SWF's details are text: they travel as a JSON string. */
        json_object *d = details != NULL ? json_object_new_string(details) : NULL;
        code = send_and_report("terminate", id,
                               swf_msg_terminate_new(NULL, id, reason, d, details != NULL));
        json_object_put(d);
    }
    free(id);
    return code;
}

/* ---- redrive ------------------------------------------------------------------- */

static const swf_cli_cmd_t redrive_cmd = {
    "swf redrive", "(ID | --workflow-id WORKFLOW_ID)",
    "Run again an execution that failed, timed out or was terminated, from where it stopped: "
    "the states that succeeded are not run again (AWS Step Functions' RedriveExecution). The "
    "history shows a WorkflowExecutionRedriven event.",
    (const swf_cli_opt_t[]){SWF_CLI_OPTS_EXECUTION("redrive"), SWF_CLI_OPTS_END}, NULL};

/* Replays the execution as a decider would: the redrive count the redrive
 * makes, or SWF_EXIT_NO with the reason it cannot be redriven. */
static int redrive_check(const char *execution_id, int64_t *next)
{
    swf_history_store_t *s;
    swf_error_t *err = swf_history_pg_new(swf_history_pg_conninfo_env(), &s);
    if (err != NULL)
        return swf_cli_fail("redrive", err);
    swf_event_list_t events = {0};
    swf_decider_replay_result_t r = {0};
    swf_decider_replay_options_t opt = {0};
    char *other = NULL; /* another open execution of its workflow id */
    err = swf_history_load(s, execution_id, 0, 0, &events);
    if (err == NULL)
        err = swf_history_pg_workflow_taken(s, execution_id, &other);
    swf_history_store_free(s);
    if (err == NULL && events.count == 0)
        err = swf_error_new(SWF_E_NOTFOUND, NULL, "no execution %s", execution_id);
    if (err == NULL)
        err = swf_decider_replay_run(&events, &opt, &r);
    if (err == NULL && r.error != NULL) {
        err = r.error;
        r.error = NULL;
    }
    int code = err != NULL ? swf_cli_fail("redrive", err) : SWF_EXIT_OK;
    const char *why = code == SWF_EXIT_OK ? swf_asl_exec_not_redrivable(r.exec) : NULL;
    if (why == NULL && code == SWF_EXIT_OK && other != NULL)
        why = "its workflow id is running as another execution";
    free(other);
    if (why != NULL) {
        fprintf(stderr, "swf redrive: execution %s cannot be redriven: %s; nothing was sent\n",
                execution_id, why);
        code = SWF_EXIT_NO;
    } else if (code == SWF_EXIT_OK) {
        *next = swf_asl_exec_redrive_count(r.exec) + 1;
    }
    swf_decider_replay_result_free(&r);
    swf_event_list_free(&events);
    return code;
}

int swf_cli_redrive(int argc, char **argv)
{
    swf_cli_args_t a;
    char *id = NULL;
    if (!swf_cli_args_parse(&redrive_cmd, argc, argv, &a) || !swf_cli_args_execution(&a, NULL, &id))
        return a.status;
    int64_t next = 0;
    int code = redrive_check(id, &next);
    if (code == SWF_EXIT_OK)
        code = send_and_report("redrive", id, swf_msg_redrive_new(NULL, id, next));
    free(id);
    return code;
}

/* ---- decide, for swf start ------------------------------------------------------ */

swf_error_t *swf_cli_inbox_post(void *ctx, const char *execution_id, json_object *msg)
{
    (void)ctx;
    return inbox_send(execution_id, msg);
}

int swf_cli_decide_post(const char *execution_id)
{
    if (brokers_env() == NULL) {
        fprintf(stderr, "swf start: SWF_KAFKA_BROKERS is not set, so no decider was notified; "
                        "swf-history's sweep will hand the execution to a decider\n");
        return SWF_EXIT_OK;
    }
    json_object *m = swf_msg_decide_new(NULL, execution_id);
    swf_error_t *err = inbox_send(execution_id, m);
    json_object_put(m);
    if (err == NULL)
        return SWF_EXIT_OK;
    fprintf(stderr, "swf start: execution %s started, but no decider was notified: %s\n",
            execution_id, swf_error_message(err));
    if (swf_error_cause(err) != NULL)
        fprintf(stderr, "  %s\n", swf_error_cause(err));
    fprintf(stderr, "  swf-history's sweep will hand the execution to a decider\n");
    swf_error_free(err);
    return SWF_EXIT_ERROR;
}

/* ---- the decide messages of swf start --inputs --------------------------------- */

struct swf_cli_decide_poster {
    rd_kafka_t *producer; /* NULL: nothing is posted any more */
};

static const char sweep_note[] = "  swf-history's sweep will hand the executions to a decider\n";

swf_cli_decide_poster_t *swf_cli_decide_poster_new(void)
{
    swf_cli_decide_poster_t *p = calloc(1, sizeof(*p));
    if (p == NULL)
        abort();
    const char *brokers = brokers_env();
    if (brokers == NULL) {
        fprintf(stderr, "swf start: SWF_KAFKA_BROKERS is not set, so no decider is notified; "
                        "swf-history's sweep will hand the executions to a decider\n");
        return p;
    }
    swf_error_t *err = inbox_producer_new(brokers, &p->producer);
    if (err != NULL) {
        fprintf(stderr, "swf start: no decider is notified: %s\n%s", swf_error_message(err),
                sweep_note);
        swf_error_free(err);
    }
    return p;
}

bool swf_cli_decide_post_many(swf_cli_decide_poster_t *p, const char *const *ids, size_t n)
{
    if (p->producer == NULL || n == 0)
        return p->producer != NULL;
    json_object **msgs = calloc(n, sizeof(*msgs));
    swf_kafka_out_t *outs = calloc(n, sizeof(*outs));
    if (msgs == NULL || outs == NULL)
        abort();
    swf_error_t *err = NULL;
    for (size_t i = 0; i < n && err == NULL; i++) {
        msgs[i] = swf_msg_decide_new(NULL, ids[i]);
        const char *payload = swf_msg_str(msgs[i]);
        outs[i] = (swf_kafka_out_t){inbox_topic(), ids[i], payload, strlen(payload),
                                    RD_KAFKA_RESP_ERR_NO_ERROR};
        err = message_check(payload, outs[i].len);
    }
    /* One wait for the whole batch's delivery reports. */
    bool sent = err == NULL;
    if (sent)
        err = swf_kafka_send(p->producer, outs, n);
    size_t lost = 0;
    for (size_t i = 0; i < n; i++) {
        lost += err != NULL && (!sent || outs[i].result != RD_KAFKA_RESP_ERR_NO_ERROR);
        json_object_put(msgs[i]);
    }
    free(msgs);
    free(outs);
    if (err == NULL)
        return true;
    /* The executions are started either way; the rest of the command posts
     * nothing more rather than wait out the send timeout batch after batch. */
    fprintf(stderr,
            "swf start: %zu of the %zu executions just started (from %s) were not notified to a "
            "decider, nor will those started after them be: %s\n%s",
            lost, n, ids[0], swf_error_message(err), sweep_note);
    swf_error_free(err);
    swf_kafka_producer_free(p->producer);
    p->producer = NULL;
    return false;
}

void swf_cli_decide_poster_free(swf_cli_decide_poster_t *p)
{
    if (p == NULL)
        return;
    swf_kafka_producer_free(p->producer);
    free(p);
}
