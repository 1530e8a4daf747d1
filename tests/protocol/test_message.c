/*
 * test_message.c - the Kafka message codec (protocol/message.c): every
 * builder's message parses back to what was built, and every broken message
 * is refused with a reason that names the problem.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/hash.h"
#include "protocol/json.h"
#include "protocol/message.h"
#include "protocol/token.h"
#include "tests/fuzz.h"

#define SECRET "test-secret"

/* Parses o, a built message; a signed one is signed again with the test's
 * secret (the builders sign with the environment's). */
static swf_error_t *parse_obj(json_object *o, swf_msg_t *m)
{
    if (json_object_object_get_ex(o, "signature", NULL))
        swf_msg_sign(o, SECRET);
    const char *s = swf_msg_str(o);
    swf_error_t *err = swf_msg_parse(s, strlen(s), SECRET, m);
    json_object_put(o);
    return err;
}

/* Parses text, which must be accepted once signed with the test's secret. */
static void accepted(const char *text, swf_msg_t *m)
{
    json_object *o = json_tokener_parse(text);
    cr_assert_not_null(o, "not JSON: %s", text);
    const char *s = swf_msg_str(swf_msg_sign(o, SECRET));
    swf_error_t *err = swf_msg_parse(s, strlen(s), SECRET, m);
    cr_assert_null(err, "%s: %s", s, err ? swf_error_message(err) : "");
    json_object_put(o);
}

static char *refusal(const char *text)
{
    swf_msg_t m;
    swf_error_t *err = swf_msg_parse(text, strlen(text), SECRET, &m);
    cr_assert_not_null(err, "accepted: %s", text);
    cr_assert_eq(m.type, SWF_MSG_NONE);
    char *msg = strdup(swf_error_message(err));
    swf_error_free(err);
    return msg;
}

Test(message, completed_round_trip_takes_ids_from_token)
{
    char *tok = swf_token_make(SECRET, "ex-1", "7");
    json_object *result = json_object_new_object();
    swf_json_add(result, "ok", json_object_new_int(3));
    swf_msg_t m;
    cr_assert_null(parse_obj(swf_msg_activity_completed_new(tok, result, "w1"), &m));
    cr_assert_eq(m.type, SWF_MSG_ACTIVITY_COMPLETED);
    cr_assert_str_eq(m.execution_id, "ex-1");
    cr_assert_str_eq(m.activity_id, "7");
    cr_assert_str_eq(m.identity, "w1");
    cr_assert(swf_json_equal(m.result, result));
    swf_msg_clear(&m);
    json_object_put(result);
    free(tok);
}

Test(message, failed_and_heartbeat_round_trip)
{
    char *tok = swf_token_make(SECRET, "ex-2", "1");
    swf_msg_t m;
    cr_assert_null(parse_obj(swf_msg_activity_failed_new(tok, "Boom", "it broke", NULL), &m));
    cr_assert_eq(m.type, SWF_MSG_ACTIVITY_FAILED);
    cr_assert_str_eq(m.error, "Boom");
    cr_assert_str_eq(m.cause, "it broke");
    cr_assert_null(m.identity);
    swf_msg_clear(&m);
    cr_assert_null(parse_obj(swf_msg_activity_heartbeat_new(tok, NULL, true), &m));
    cr_assert_eq(m.type, SWF_MSG_ACTIVITY_HEARTBEAT);
    cr_assert(m.has_details);
    cr_assert_str_eq(m.execution_id, "ex-2");
    swf_msg_clear(&m);
    free(tok);
}

Test(message, execution_messages_round_trip)
{
    swf_msg_t m;
    cr_assert_null(parse_obj(swf_msg_decide_new(NULL, "e"), &m));
    cr_assert_eq(m.type, SWF_MSG_DECIDE);
    cr_assert_str_eq(m.execution_id, "e");
    swf_msg_clear(&m);
    cr_assert_null(parse_obj(swf_msg_timer_fired_new(NULL, "e", "t3", 9), &m));
    cr_assert_eq(m.type, SWF_MSG_TIMER_FIRED);
    cr_assert_str_eq(m.timer_id, "t3");
    cr_assert_eq(m.started_event_id, 9);
    swf_msg_clear(&m);
    cr_assert_null(parse_obj(swf_msg_activity_timed_out_new(NULL, "e", 4, "HEARTBEAT"), &m));
    cr_assert_eq(m.scheduled_event_id, 4);
    cr_assert_str_eq(m.timeout_type, "HEARTBEAT");
    swf_msg_clear(&m);
    cr_assert_null(parse_obj(swf_msg_execution_timed_out_new(NULL, "e"), &m));
    cr_assert_eq(m.type, SWF_MSG_EXECUTION_TIMED_OUT);
    swf_msg_clear(&m);
    json_object *in = json_object_new_string("hi");
    cr_assert_null(parse_obj(swf_msg_signal_new(NULL, "e", "Go", in), &m));
    cr_assert_str_eq(m.signal_name, "Go");
    cr_assert_str_eq(json_object_get_string(m.input), "hi");
    /* Each request gets an id of its own: 128 random bits in hex. */
    cr_assert_not_null(m.request_id);
    cr_assert_eq(strspn(m.request_id, "0123456789abcdef"), 32);
    cr_assert_eq(strlen(m.request_id), 32);
    json_object *again = swf_msg_signal_new(NULL, "e", "Go", in);
    cr_assert_str_neq(swf_json_get_string(again, "requestId"), m.request_id);
    json_object_put(again);
    swf_msg_clear(&m);
    json_object_put(in);
    cr_assert_null(parse_obj(swf_msg_cancel_new(NULL, "e", "user"), &m));
    cr_assert_str_eq(m.cause, "user");
    cr_assert_eq(strlen(m.request_id), 32);
    swf_msg_clear(&m);
    cr_assert_null(parse_obj(swf_msg_terminate_new(NULL, "e", "stop", NULL, false), &m));
    cr_assert_str_eq(m.reason, "stop");
    cr_assert(!m.has_details);
    swf_msg_clear(&m);
    cr_assert_null(parse_obj(swf_msg_redrive_new(NULL, "e", 3), &m));
    cr_assert_eq(m.type, SWF_MSG_REDRIVE);
    cr_assert_eq(m.redrive_count, 3);
    swf_msg_clear(&m);
}

Test(message, activity_task_from_scheduled_event)
{
    const char *attrs =
        "{\"activityId\":\"5\",\"activityType\":{\"name\":\"pay\",\"version\":\"1\"},"
        "\"taskList\":{\"name\":\"pay\"},\"input\":{\"n\":1},"
        "\"control\":{\"state\":\"Charge\",\"attempt\":2},"
        "\"startToCloseTimeout\":30,\"executionId\":\"ex\",\"scheduledEventId\":12}";
    json_object *a = json_tokener_parse(attrs), *task;
    cr_assert_null(swf_msg_activity_task_new(SECRET, NULL, 0, a, &task));
    swf_msg_t m;
    cr_assert_null(parse_obj(task, &m));
    cr_assert_eq(m.type, SWF_MSG_ACTIVITY_TASK);
    cr_assert_str_eq(m.execution_id, "ex");
    cr_assert_str_eq(m.activity_id, "5");
    cr_assert_str_eq(m.activity_type, "pay");
    cr_assert_str_eq(m.state, "Charge");
    cr_assert_eq(m.attempt, 2);
    cr_assert_eq(m.scheduled_event_id, 12);
    cr_assert_float_eq(m.start_to_close_timeout, 30.0, 1e-9);
    cr_assert_float_eq(m.heartbeat_timeout, 0.0, 1e-9);
    /* The token it carries answers for that very activity. */
    char *e, *act;
    cr_assert_null(swf_token_verify(SECRET, m.task_token, &e, &act));
    cr_assert_str_eq(e, "ex");
    cr_assert_str_eq(act, "5");
    free(e);
    free(act);
    swf_msg_clear(&m);
    json_object_put(a);
}

Test(message, forged_token_is_refused)
{
    char *tok = swf_token_make("another-secret", "ex-1", "7");
    swf_msg_t m;
    swf_error_t *err = parse_obj(swf_msg_activity_completed_new(tok, NULL, NULL), &m);
    cr_assert_not_null(err);
    cr_assert(strstr(swf_error_message(err), "forged or altered task token") != NULL, "%s",
              swf_error_message(err));
    swf_error_free(err);
    free(tok);
}

Test(message, broken_messages_name_the_problem)
{
    struct {
        const char *text, *reason;
    } cases[] = {
        {"not json", "not JSON"},
        {"[1]", "must be a JSON object"},
        {"{\"type\":\"decide\",\"executionId\":\"e\"}", "missing \"v\""},
        {"{\"v\":2,\"type\":\"decide\",\"executionId\":\"e\"}", "version"},
        {"{\"v\":1}", "missing \"type\""},
        {"{\"v\":1,\"type\":\"dance\"}", "unknown message type \"dance\""},
        {"{\"v\":1,\"type\":\"decide\"}", "decide: missing \"executionId\""},
        {"{\"v\":1,\"type\":\"decide\",\"executionId\":5}", "must be a string, not number"},
        {"{\"v\":1,\"type\":\"timer.fired\",\"executionId\":\"e\",\"timerId\":\"t\","
         "\"startedEventId\":\"3\"}",
         "\"startedEventId\" must be an integer"},
        {"{\"v\":1,\"type\":\"activity.timedOut\",\"executionId\":\"e\",\"scheduledEventId\":3,"
         "\"timeoutType\":\"SOON\"}",
         "START_TO_CLOSE or HEARTBEAT"},
        {"{\"v\":1,\"type\":\"activity.completed\",\"taskToken\":\"abc\",\"result\":1}",
         "malformed task token"},
        {"{\"v\":1,\"type\":\"signal\",\"executionId\":\"e\"}", "missing \"signalName\""},
        {"{\"v\":1,\"type\":\"cancel\",\"executionId\":\"e\",\"cause\":\"\xC3(\"}", "not UTF-8"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *why = refusal(cases[i].text);
        cr_expect(strstr(why, cases[i].reason) != NULL, "%s: got \"%s\", want \"%s\"",
                  cases[i].text, why, cases[i].reason);
        free(why);
    }
}

Test(message, oversized_message_is_a_limit)
{
    size_t n = SWF_MSG_MAX_BYTES + 1;
    char *big = malloc(n);
    memset(big, ' ', n);
    swf_msg_t m;
    swf_error_t *err = swf_msg_parse(big, n, SECRET, &m);
    cr_assert_not_null(err);
    cr_assert_eq(swf_error_code(err), SWF_E_LIMIT);
    swf_error_free(err);
    free(big);
}

Test(message, dead_letter_keeps_the_original)
{
    json_object *d = swf_msg_dead_letter_new("bad", "swf.inbox", 2, 40, "xyz", 3);
    cr_assert_str_eq(swf_json_get_string(d, "message"), "xyz");
    cr_assert_str_eq(swf_json_get_string(d, "reason"), "bad");
    json_object_put(d);
}

Test(message, dead_letter_keeps_bytes_that_are_not_utf8)
{
    const char payload[] = "{\"x\":\"\xFF\xFE\"}";
    size_t n = sizeof(payload) - 1;
    json_object *d = swf_msg_dead_letter_new("not JSON", "swf.inbox", 0, 7, payload, n);
    /* The entry itself is a message any consumer can read... */
    const char *text = swf_msg_str(d);
    json_object *back = NULL;
    swf_error_t *err = swf_json_parse(text, strlen(text), SWF_MSG_MAX_BYTES, &back);
    cr_assert_null(err, "%s", err ? swf_error_message(err) : "");
    json_object_put(back);
    /* ...with U+FFFD for the bad bytes, and the bytes themselves in base64. */
    cr_expect_str_eq(swf_json_get_string(d, "message"), "{\"x\":\"\xEF\xBF\xBD\xEF\xBF\xBD\"}");
    const char *b64 = swf_json_get_string(d, "messageBase64");
    cr_assert_not_null(b64);
    uint8_t *raw = NULL;
    size_t rn = 0;
    err = swf_base64_decode(b64, strlen(b64), &raw, &rn);
    cr_assert_null(err);
    cr_expect_eq(rn, n);
    cr_expect_eq(memcmp(raw, payload, n), 0);
    free(raw);
    json_object_put(d);

    /* UTF-8 text needs no copy. */
    d = swf_msg_dead_letter_new("bad", "swf.inbox", 0, 8, "caf\xC3\xA9", 5);
    cr_expect_str_eq(swf_json_get_string(d, "message"), "caf\xC3\xA9");
    cr_expect_null(swf_json_get_string(d, "messageBase64"));
    json_object_put(d);
}

Test(message, dead_letter_cuts_between_characters)
{
    /* Two-byte characters with the cut falling inside one. */
    size_t n = SWF_MSG_MAX_BYTES / 2 + 1;
    char *big = malloc(n);
    for (size_t i = 0; i + 1 < n; i += 2)
        memcpy(big + i, "\xC3\xA9", 2);
    big[n - 1] = 'x';
    json_object *d = swf_msg_dead_letter_new("too big", "swf.inbox", 0, 9, big, n);
    const char *m = swf_json_get_string(d, "message");
    size_t mn = strlen(m);
    cr_expect_eq(mn, SWF_MSG_MAX_BYTES / 2, "cut before the character the limit splits");
    cr_expect_eq(swf_json_utf8_invalid_at(m, mn), mn);
    cr_expect_null(swf_json_get_string(d, "messageBase64"));
    json_object *t;
    cr_expect(swf_json_get(d, "truncated", &t) && json_object_get_boolean(t));
    json_object_put(d);
    free(big);
}

/* A message whose escaped text is six times its bytes (control
 * characters), or that is not UTF-8 (U+FFFD and base64): the entry is cut
 * further, so that it fits in a message itself (Kafka refused the 3 MB
 * entry of 600 KB of \x01, for good, and the decider retried it forever). */
Test(message, dead_letter_fits_in_a_message_whatever_it_holds)
{
    size_t n = 600 * 1024;
    char *big = malloc(n);
    for (int kind = 0; kind < 2; kind++) {
        memset(big, kind == 0 ? 0x01 : 0xFF, n);
        json_object *d = swf_msg_dead_letter_new("not JSON", "swf.inbox", 3, 9, big, n);
        size_t len = strlen(swf_json_str(d));
        cr_expect_leq(len, SWF_MSG_MAX_BYTES, "kind %d: %zu bytes", kind, len);
        cr_expect_gt(len, SWF_MSG_MAX_BYTES / 4, "kind %d: cut no more than it must", kind);
        json_object *t;
        cr_expect(swf_json_get(d, "truncated", &t) && json_object_get_boolean(t));
        json_object_put(d);
    }
    free(big);
}

/* Free text from outside JSON (a command's stderr, a shell argument) may be
 * any bytes; the builders make messages the receiver takes. */
Test(message, builders_make_utf8_of_any_text)
{
    char *tok = swf_token_make(SECRET, "ex-1", "7");
    json_object *o =
        swf_msg_activity_failed_new(tok, "E", "segfault \x80\xFF in libfoo", "host\xC3");
    swf_msg_t m;
    swf_error_t *err = parse_obj(o, &m);
    cr_assert_null(err, "%s", err ? swf_error_message(err) : "");
    cr_expect_str_eq(m.cause, "segfault \xEF\xBF\xBD\xEF\xBF\xBD in libfoo");
    cr_expect_str_eq(m.identity, "host\xEF\xBF\xBD");
    swf_msg_clear(&m);
    err = parse_obj(swf_msg_terminate_new(NULL, "ex-1", "stop \xE2\x82", NULL, false), &m);
    cr_assert_null(err, "%s", err ? swf_error_message(err) : "");
    cr_expect_str_eq(m.reason, "stop \xEF\xBF\xBD\xEF\xBF\xBD");
    swf_msg_clear(&m);
    free(tok);
}

/* ---- mutated messages (tests/fuzz.h) ---- */

static bool is_text(const char *s)
{
    return s == NULL || swf_json_utf8_invalid_at(s, strlen(s)) == strlen(s);
}

static fuzz_outcome_t message_round(const char *text, void *arg)
{
    (void)arg;
    swf_msg_t m;
    swf_error_t *err = swf_msg_parse(text, strlen(text), SECRET, &m);
    if (err != NULL) {
        cr_assert_eq(m.type, SWF_MSG_NONE, "refused but filled: %s", text);
        cr_assert(swf_error_message(err)[0] != '\0', "refused without a reason: %s", text);
        swf_error_free(err);
        return FUZZ_REFUSED;
    }
    /* Whatever passes names its execution and is text. */
    cr_assert_neq(m.type, SWF_MSG_NONE, "%s", text);
    cr_assert(m.execution_id != NULL && m.execution_id[0] != '\0', "%s", text);
    cr_assert(is_text(m.execution_id) && is_text(m.cause) && is_text(m.reason) &&
                  is_text(m.signal_name) && is_text(m.error) && is_text(m.identity),
              "%s", text);
    swf_msg_clear(&m);
    return FUZZ_VALUE;
}

/* The control messages, one of each type, signed by their builders with
 * `secret` (NULL: the environment's). */
#define NCONTROL 8
static void control_built_with(const char *secret, json_object *input, json_object *out[NCONTROL])
{
    out[0] = swf_msg_decide_new(secret, "ex-1");
    out[1] = swf_msg_activity_timed_out_new(secret, "ex-1", 12, "HEARTBEAT");
    out[2] = swf_msg_timer_fired_new(secret, "ex-1", "t3", 9);
    out[3] = swf_msg_execution_timed_out_new(secret, "ex-1");
    out[4] = swf_msg_signal_new(secret, "ex-1", "approve", input);
    out[5] = swf_msg_cancel_new(secret, "ex-1", "because");
    out[6] = swf_msg_terminate_new(secret, "ex-1", "stop", input, true);
    out[7] = swf_msg_redrive_new(secret, "ex-1", 2);
}

static void control_built(json_object *input, json_object *out[NCONTROL])
{
    control_built_with(SECRET, input, out);
}

Test(message, mutated_messages_are_refused_or_whole)
{
    char *tok = swf_token_make(SECRET, "ex-1", "7");
    json_object *input = json_object_new_object();
    swf_json_add(input, "a", json_object_new_int(1));
    json_object *built[NCONTROL + 3] = {
        swf_msg_activity_completed_new(tok, input, "w-1"),
        swf_msg_activity_failed_new(tok, "my.Error", "a cause", "w-1"),
        swf_msg_activity_heartbeat_new(tok, input, true),
    };
    control_built(input, built + 3);
    fuzz_corpus_t seeds = {0};
    for (size_t i = 0; i < sizeof(built) / sizeof(built[0]); i++) {
        fuzz_corpus_add(&seeds, swf_msg_str(built[i]));
        json_object_put(built[i]);
    }
    json_object_put(input);
    fuzz_tally_t t = fuzz_run(&seeds, 20000, message_round, NULL);
    /* The rounds reach both sides. */
    cr_expect(t.outcomes[FUZZ_VALUE] > t.rounds / 200 && t.outcomes[FUZZ_REFUSED] > t.rounds / 200,
              "%ld parsed, %ld refused", t.outcomes[FUZZ_VALUE], t.outcomes[FUZZ_REFUSED]);
    fuzz_corpus_free(&seeds);
    free(tok);
}

/* PostgreSQL's jsonb cannot store U+0000: a message carrying it could never
 * be recorded, so it is refused (and goes to the dead letters) where it is
 * read, not when the append fails. */
Test(message, nul_characters_are_refused)
{
    char *why = refusal("{\"v\":1,\"type\":\"signal\",\"executionId\":\"e\",\"signalName\":\"s\","
                        "\"input\":\"a\\u0000b\"}");
    cr_expect(strstr(why, "\\u0000 at byte 68") != NULL, "%s", why);
    free(why);
    why = refusal("{\"v\":1,\"type\":\"signal\",\"executionId\":\"e\",\"signalName\":\"s\","
                  "\"input\":{\"k\\u0000\":1}}");
    cr_expect(strstr(why, "\\u0000") != NULL, "in a key: %s", why);
    free(why);
    /* A backslash before u0000 is text, not the character. */
    const char *ok = "{\"v\":1,\"type\":\"signal\",\"executionId\":\"e\",\"signalName\":\"s\","
                     "\"input\":\"C:\\\\u0000\"}";
    swf_msg_t m;
    accepted(ok, &m);
    cr_expect_str_eq(json_object_get_string(m.input), "C:\\u0000");
    swf_msg_clear(&m);
}

/* KAFKA.md and activity.task.schema.json: "v" is optional on a task (older
 * publishers); swf dev's worker reads tasks with this parser. */
Test(message, activity_task_without_v_is_accepted)
{
    char *tok = swf_token_make(SECRET, "ex", "5");
    char text[512];
    snprintf(text, sizeof(text),
             "{\"type\":\"activity.task\",\"taskToken\":\"%s\",\"executionId\":\"ex\","
             "\"activityId\":\"5\",\"activityType\":{\"name\":\"pay\"},\"input\":null,"
             "\"attempt\":0,\"scheduledEventId\":12}",
             tok);
    swf_msg_t m;
    accepted(text, &m);
    cr_assert_eq(m.type, SWF_MSG_ACTIVITY_TASK);
    swf_msg_clear(&m);
    /* Still required on inbox messages. */
    char *why = refusal("{\"type\":\"decide\",\"executionId\":\"e\"}");
    cr_expect(strstr(why, "missing \"v\"") != NULL, "%s", why);
    free(why);
    free(tok);
}

/* JSON Schema's "integer" is any number without a fraction: 12.0 and 1.2e1
 * are integers to a schema validator (and Python's json.dumps writes a float
 * 12.0 so), so the parser takes them as well. */
Test(message, whole_numbers_with_a_fraction_or_exponent_are_integers)
{
    swf_msg_t m;
    accepted("{\"v\":1.0,\"type\":\"timer.fired\",\"executionId\":\"e\",\"timerId\":\"t\","
             "\"startedEventId\":5.0}",
             &m);
    cr_assert_eq(m.started_event_id, 5);
    swf_msg_clear(&m);
    accepted("{\"v\":1e0,\"type\":\"activity.timedOut\",\"executionId\":\"e\","
             "\"scheduledEventId\":1.2e1,\"timeoutType\":\"HEARTBEAT\"}",
             &m);
    cr_assert_eq(m.scheduled_event_id, 12);
    swf_msg_clear(&m);
    char *why = refusal("{\"v\":1,\"type\":\"timer.fired\",\"executionId\":\"e\",\"timerId\":\"t\","
                        "\"startedEventId\":5.5}");
    cr_expect(strstr(why, "must be an integer") != NULL, "%s", why);
    free(why);
    why = refusal("{\"v\":1.5,\"type\":\"decide\",\"executionId\":\"e\"}");
    cr_expect(strstr(why, "version") != NULL, "%s", why);
    free(why);
}

/* The schemas want a requestId of at least one character. An empty one was
 * recorded as is (an event its schema refuses), and then every later
 * request with an empty id was dropped as a duplicate of the first: it is
 * now no id at all, as the messages already on Kafka still parse. */
Test(message, an_empty_request_id_is_no_request_id)
{
    swf_msg_t m;
    accepted("{\"v\":1,\"type\":\"signal\",\"executionId\":\"e\",\"signalName\":\"s\","
             "\"requestId\":\"\"}",
             &m);
    cr_assert_null(m.request_id);
    swf_msg_clear(&m);
    accepted("{\"v\":1,\"type\":\"cancel\",\"executionId\":\"e\",\"requestId\":\"\"}", &m);
    cr_assert_null(m.request_id);
    swf_msg_clear(&m);
    accepted("{\"v\":1,\"type\":\"cancel\",\"executionId\":\"e\",\"requestId\":\"r1\"}", &m);
    cr_assert_str_eq(m.request_id, "r1");
    swf_msg_clear(&m);
}

/* KAFKA.md: a cause is "at most 32,768 bytes (longer causes are cut)". A
 * failure with a longer one was dead-lettered, leaving the task unanswered
 * until its timeout (forever without one). */
Test(message, a_failure_cause_over_the_limit_is_cut_between_characters)
{
    char *tok = swf_token_make(SECRET, "ex", "5");
    size_t n = SWF_MSG_CAUSE_BYTES + 100;
    char *cause = malloc(n + 1);
    memset(cause, 'a', n);
    /* "é" (2 bytes) across the limit */
    cause[SWF_MSG_CAUSE_BYTES - 1] = '\xC3';
    cause[SWF_MSG_CAUSE_BYTES] = '\xA9';
    cause[n] = '\0';
    swf_msg_t m;
    swf_error_t *err = parse_obj(swf_msg_activity_failed_new(tok, "E", cause, NULL), &m);
    cr_assert_null(err, "%s", err ? swf_error_message(err) : "");
    cr_assert_eq(strlen(m.cause), SWF_MSG_CAUSE_BYTES - 1);
    cr_assert_eq(strncmp(m.cause, cause, SWF_MSG_CAUSE_BYTES - 1), 0);
    swf_msg_clear(&m);
    free(cause);
    free(tok);
}

/* A worker's answer is parsed here before the decider records it; what
 * json-c would rewrite is refused with its path, which the decider puts in
 * the dead letter as the reason. */
Test(message, an_answer_with_a_duplicate_key_or_a_huge_integer_is_refused_with_the_path)
{
    char *tok = swf_token_make(SECRET, "ex-1", "7");
    char text[1024];
    snprintf(text, sizeof(text),
             "{\"v\":1,\"type\":\"activity.completed\",\"taskToken\":\"%s\","
             "\"result\":{\"id\":1,\"id\":2}}",
             tok);
    char *why = refusal(text);
    cr_expect_str_eq(why, "not JSON: $.result: duplicate key \"id\"");
    free(why);
    snprintf(text, sizeof(text),
             "{\"v\":1,\"type\":\"activity.completed\",\"taskToken\":\"%s\","
             "\"result\":{\"ids\":[1,123456789012345678901234567890]}}",
             tok);
    why = refusal(text);
    cr_expect_str_eq(why, "not JSON: $.result.ids[1]: the number 123456789012345678901234567890 "
                          "is outside the 64-bit integer range");
    free(why);
    snprintf(text, sizeof(text),
             "{\"v\":1,\"type\":\"activity.completed\",\"taskToken\":\"%s\",\"type\":\"signal\"}",
             tok);
    why = refusal(text);
    cr_expect_str_eq(why, "not JSON: $: duplicate key \"type\"");
    free(why);
    free(tok);
}

/* Reparses o's text, as the decider sees it off the inbox. */
static swf_error_t *check_text(json_object *o, const char *secret)
{
    json_object *back = json_tokener_parse(swf_msg_str(o));
    swf_error_t *err = swf_msg_signature_check(back, secret);
    json_object_put(back);
    return err;
}

Test(message, a_signed_control_message_verifies_after_the_round_trip_through_its_text)
{
    json_object *in = json_tokener_parse("{\"a\":[1,2.50,\"\\u00e9/x\"],\"b\":null}");
    json_object *all[NCONTROL];
    control_built(in, all);
    for (size_t i = 0; i < NCONTROL; i++) {
        cr_assert_null(check_text(all[i], SECRET), "%s", swf_msg_str(all[i]));
        json_object_put(all[i]);
    }
    json_object_put(in);
}

Test(message, an_unsigned_altered_or_wrongly_keyed_control_message_is_refused_with_the_reason)
{
    json_object *m = swf_msg_terminate_new(NULL, "ex-1", "stop", NULL, false);
    json_object_object_del(m, "signature");
    swf_error_t *err = check_text(m, SECRET);
    cr_assert_not_null(err);
    cr_assert_str_eq(swf_error_message(err), "unsigned control message");
    swf_error_free(err);

    swf_msg_sign(m, SECRET);
    err = check_text(m, "another-secret");
    cr_assert_not_null(err);
    cr_assert_str_eq(swf_error_message(err), "forged or altered control message signature");
    swf_error_free(err);

    json_object_object_add(m, "executionId", json_object_new_string("ex-2"));
    err = check_text(m, SECRET);
    cr_assert_not_null(err);
    cr_assert_str_eq(swf_error_message(err), "forged or altered control message signature");
    swf_error_free(err);
    json_object_put(m);
}

/* A library caller signs with its own secret; NULL takes SWF_TOKEN_SECRET,
 * the CLI's and the daemons' default. */
Test(message, builders_sign_with_the_secret_given_else_the_environment_s)
{
    json_object *all[NCONTROL];
    control_built_with("library-secret", NULL, all);
    for (size_t i = 0; i < NCONTROL; i++) {
        cr_expect_null(swf_msg_signature_check(all[i], "library-secret"), "%s",
                       swf_msg_str(all[i]));
        swf_error_t *err = swf_msg_signature_check(all[i], swf_token_secret_env());
        cr_expect_not_null(err, "%s verifies under the environment's secret", swf_msg_str(all[i]));
        swf_error_free(err);
        json_object_put(all[i]);
    }
    setenv("SWF_TOKEN_SECRET", "environment-secret", 1);
    control_built_with(NULL, NULL, all);
    for (size_t i = 0; i < NCONTROL; i++) {
        cr_expect_null(swf_msg_signature_check(all[i], "environment-secret"), "%s",
                       swf_msg_str(all[i]));
        json_object_put(all[i]);
    }
    unsetenv("SWF_TOKEN_SECRET");
}
