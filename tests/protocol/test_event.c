/*
 * test_event.c - proves protocol/event.c: event type names, the exported
 * (SWF-shaped) JSON form and event lists.
 *
 * The exported form is what histories are stored and replayed from, so the
 * tests hold it to a round trip (event -> JSON -> event gives the same
 * event) and to refusing anything that is not an event, including a history
 * whose ids are not dense.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "protocol/event.h"
#include "protocol/json.h"
#include "protocol/limits.h"

static json_object *parse(const char *text)
{
    json_object *v = NULL;
    swf_error_t *err = swf_json_parse(text, strlen(text), SWF_LIMIT_JSON_BYTES, &v);
    cr_assert_null(err, "%s: %s", text, err ? swf_error_message(err) : "");
    return v;
}

Test(event_type, names_parse_back_to_their_type)
{
    for (int t = 1; t < SWF_EVENT_TYPE_COUNT; t++) {
        const char *name = swf_event_type_name((swf_event_type_t)t);
        cr_assert_not_null(name, "type %d has no name", t);
        cr_expect_eq(swf_event_type_parse(name), (swf_event_type_t)t, "%s", name);
    }
    cr_expect_str_eq(swf_event_type_name(SWF_EVENT_ACTIVITY_TASK_COMPLETED),
                     "ActivityTaskCompleted");
    cr_expect_str_eq(swf_event_type_name(SWF_EVENT_WORKFLOW_EXECUTION_STARTED),
                     "WorkflowExecutionStarted");
}

Test(event_type, unknown_values_and_names)
{
    cr_expect_null(swf_event_type_name(SWF_EVENT_NONE));
    cr_expect_null(swf_event_type_name(SWF_EVENT_TYPE_COUNT));
    cr_expect_null(swf_event_type_name((swf_event_type_t)-1));
    cr_expect_eq(swf_event_type_parse("NoSuchEvent"), SWF_EVENT_NONE);
    cr_expect_eq(swf_event_type_parse("activityTaskCompleted"), SWF_EVENT_NONE);
    cr_expect_eq(swf_event_type_parse(""), SWF_EVENT_NONE);
    cr_expect_eq(swf_event_type_parse(NULL), SWF_EVENT_NONE);
    cr_expect_null(swf_event_attrs_key(SWF_EVENT_NONE));
}

Test(event_type, attribute_keys_follow_swf)
{
    cr_expect_str_eq(swf_event_attrs_key(SWF_EVENT_WORKFLOW_EXECUTION_STARTED),
                     "workflowExecutionStartedEventAttributes");
    cr_expect_str_eq(swf_event_attrs_key(SWF_EVENT_TIMER_FIRED), "timerFiredEventAttributes");
    cr_expect_str_eq(swf_event_attrs_key(SWF_EVENT_CANCEL_WORKFLOW_EXECUTION_FAILED),
                     "cancelWorkflowExecutionFailedEventAttributes");
    /* Stable: the same pointer, the same text, on every call. */
    const char *k = swf_event_attrs_key(SWF_EVENT_MARKER_RECORDED);
    cr_expect_eq(k, swf_event_attrs_key(SWF_EVENT_MARKER_RECORDED));
    cr_expect_str_eq(k, "markerRecordedEventAttributes");
}

Test(event_type, close_events)
{
    int closing = 0;
    for (int t = 1; t < SWF_EVENT_TYPE_COUNT; t++)
        closing += swf_event_type_is_close((swf_event_type_t)t);
    cr_expect_eq(closing, 5);
    cr_expect(swf_event_type_is_close(SWF_EVENT_WORKFLOW_EXECUTION_COMPLETED));
    cr_expect(swf_event_type_is_close(SWF_EVENT_WORKFLOW_EXECUTION_FAILED));
    cr_expect(swf_event_type_is_close(SWF_EVENT_WORKFLOW_EXECUTION_TIMED_OUT));
    cr_expect(swf_event_type_is_close(SWF_EVENT_WORKFLOW_EXECUTION_CANCELED));
    cr_expect(swf_event_type_is_close(SWF_EVENT_WORKFLOW_EXECUTION_TERMINATED));
    cr_expect_not(swf_event_type_is_close(SWF_EVENT_COMPLETE_WORKFLOW_EXECUTION_FAILED));
    cr_expect_not(swf_event_type_is_close(SWF_EVENT_DECISION_TASK_COMPLETED));
}

Test(event_json, has_the_exported_shape)
{
    swf_event_t ev = {.id = 3,
                      .type = SWF_EVENT_DECISION_TASK_COMPLETED,
                      .time_ms = 1795255200000LL,
                      .attrs = parse("{\"scheduledEventId\":1,\"startedEventId\":2}")};
    json_object *j = swf_event_to_json(&ev);
    json_object *want = parse("{\"eventId\":3,\"eventType\":\"DecisionTaskCompleted\","
                              "\"eventTimestamp\":\"2026-11-21T10:00:00.000Z\","
                              "\"decisionTaskCompletedEventAttributes\":"
                              "{\"scheduledEventId\":1,\"startedEventId\":2}}");
    cr_expect(swf_json_equal(j, want), "got %s", swf_json_str(j));
    json_object_put(j);
    json_object_put(want);
    json_object_put(ev.attrs);
}

Test(event_json, round_trips)
{
    json_object *attrs = parse("{\"executionId\":\"e-1\",\"input\":{\"a\":[1,null,\"x\"]},"
                               "\"definition\":{\"StartAt\":\"A\"}}");
    swf_event_t ev = {.id = 1,
                      .type = SWF_EVENT_WORKFLOW_EXECUTION_STARTED,
                      .time_ms = 1457920740123LL,
                      .attrs = attrs};
    json_object *j = swf_event_to_json(&ev);
    swf_event_t back;
    swf_error_t *err = swf_event_from_json(j, &back);
    cr_assert_null(err, "%s", err ? swf_error_message(err) : "");
    cr_expect_eq(back.id, 1);
    cr_expect_eq(back.type, SWF_EVENT_WORKFLOW_EXECUTION_STARTED);
    cr_expect_eq(back.time_ms, 1457920740123LL);
    cr_expect(swf_json_equal(back.attrs, attrs));
    json_object_put(back.attrs);
    json_object_put(j);
    json_object_put(attrs);
}

Test(event_json, round_trips_every_type_and_times_before_1970)
{
    for (int t = 1; t < SWF_EVENT_TYPE_COUNT; t++) {
        swf_event_t ev = {.id = t,
                          .type = (swf_event_type_t)t,
                          .time_ms = -1234567,
                          .attrs = json_object_new_object()};
        json_object_object_add(ev.attrs, "n", json_object_new_int(t));
        json_object *j = swf_event_to_json(&ev);
        swf_event_t back;
        swf_error_t *err = swf_event_from_json(j, &back);
        cr_expect_null(err, "%s", err ? swf_error_message(err) : "");
        swf_error_free(err);
        if (err == NULL) {
            cr_expect_eq(back.id, ev.id);
            cr_expect_eq(back.type, ev.type);
            cr_expect_eq(back.time_ms, ev.time_ms);
            cr_expect(swf_json_equal(back.attrs, ev.attrs));
            json_object_put(back.attrs);
        }
        json_object_put(j);
        json_object_put(ev.attrs);
    }
}

Test(event_json, missing_attributes_become_an_empty_object)
{
    json_object *j = parse("{\"eventId\":2,\"eventType\":\"DecisionTaskScheduled\","
                           "\"eventTimestamp\":\"2026-11-21T10:00:00.000Z\"}");
    swf_event_t ev;
    swf_error_t *err = swf_event_from_json(j, &ev);
    cr_assert_null(err);
    cr_expect(json_object_is_type(ev.attrs, json_type_object));
    cr_expect_eq(json_object_object_length(ev.attrs), 0);
    json_object_put(ev.attrs);
    json_object_put(j);
}

/* from_json must refuse the text with SWF_E_INPUT and leave nothing owned. */
static void expect_refused(const char *text)
{
    json_object *j = parse(text);
    swf_event_t ev;
    swf_error_t *err = swf_event_from_json(j, &ev);
    cr_expect_not_null(err, "accepted %s", text);
    if (err != NULL)
        cr_expect_eq(swf_error_code(err), SWF_E_INPUT, "%s", text);
    else
        json_object_put(ev.attrs);
    cr_expect_null(ev.attrs);
    swf_error_free(err);
    json_object_put(j);
}

Test(event_json, refuses_what_is_not_an_event)
{
    expect_refused("[]");
    expect_refused("null");
    expect_refused("\"event\"");
    /* eventId */
    expect_refused("{\"eventType\":\"TimerFired\",\"eventTimestamp\":\"2026-11-21T10:00:00Z\"}");
    expect_refused("{\"eventId\":0,\"eventType\":\"TimerFired\","
                   "\"eventTimestamp\":\"2026-11-21T10:00:00Z\"}");
    expect_refused("{\"eventId\":-3,\"eventType\":\"TimerFired\","
                   "\"eventTimestamp\":\"2026-11-21T10:00:00Z\"}");
    expect_refused("{\"eventId\":\"1\",\"eventType\":\"TimerFired\","
                   "\"eventTimestamp\":\"2026-11-21T10:00:00Z\"}");
    expect_refused("{\"eventId\":1.5,\"eventType\":\"TimerFired\","
                   "\"eventTimestamp\":\"2026-11-21T10:00:00Z\"}");
    /* eventType */
    expect_refused("{\"eventId\":1,\"eventTimestamp\":\"2026-11-21T10:00:00Z\"}");
    expect_refused("{\"eventId\":1,\"eventType\":\"TimerExploded\","
                   "\"eventTimestamp\":\"2026-11-21T10:00:00Z\"}");
    expect_refused("{\"eventId\":1,\"eventType\":7,\"eventTimestamp\":\"2026-11-21T10:00:00Z\"}");
    /* eventTimestamp */
    expect_refused("{\"eventId\":1,\"eventType\":\"TimerFired\"}");
    expect_refused(
        "{\"eventId\":1,\"eventType\":\"TimerFired\",\"eventTimestamp\":\"2026-11-21\"}");
    expect_refused("{\"eventId\":1,\"eventType\":\"TimerFired\",\"eventTimestamp\":1795255200000}");
    /* attributes */
    expect_refused("{\"eventId\":1,\"eventType\":\"TimerFired\","
                   "\"eventTimestamp\":\"2026-11-21T10:00:00Z\",\"timerFiredEventAttributes\":[]}");
    expect_refused("{\"eventId\":1,\"eventType\":\"TimerFired\","
                   "\"eventTimestamp\":\"2026-11-21T10:00:00Z\",\"timerFiredEventAttributes\":3}");
}

Test(event_list, push_numbers_events_densely)
{
    swf_event_list_t list = {0};
    for (int i = 0; i < 200; i++) {
        swf_event_t *ev = swf_event_list_push(&list, SWF_EVENT_MARKER_RECORDED, 1000 + i,
                                              i % 2 ? json_object_new_object() : NULL);
        cr_expect_eq(ev->id, i + 1);
        cr_expect(json_object_is_type(ev->attrs, json_type_object),
                  "NULL attributes become an empty object");
    }
    cr_expect_eq(list.count, 200);
    cr_expect_geq(list.cap, 200);
    for (size_t i = 0; i < list.count; i++) {
        cr_expect_eq(list.items[i].id, (int64_t)i + 1);
        cr_expect_eq(list.items[i].time_ms, 1000 + (int64_t)i);
    }
    swf_event_list_clear(&list);
    cr_expect_eq(list.count, 0);
    cr_expect_eq(swf_event_list_push(&list, SWF_EVENT_TIMER_FIRED, 5, NULL)->id, 1,
                 "a cleared list starts again at 1");
    swf_event_list_free(&list);
    cr_expect_null(list.items);
    cr_expect_eq(list.count, 0);
    swf_event_list_free(&list); /* freeing twice is harmless */
}

Test(event_list, push_copy_keeps_the_id_and_shares_attributes)
{
    swf_event_list_t a = {0}, b = {0};
    swf_event_list_push(&a, SWF_EVENT_WORKFLOW_EXECUTION_STARTED, 1, parse("{\"input\":1}"));
    swf_event_list_push(&a, SWF_EVENT_DECISION_TASK_SCHEDULED, 2, NULL);
    swf_event_list_push_copy(&b, &a.items[1]);
    cr_expect_eq(b.count, 1);
    cr_expect_eq(b.items[0].id, 2);
    cr_expect_eq(b.items[0].type, SWF_EVENT_DECISION_TASK_SCHEDULED);
    cr_expect_eq(b.items[0].attrs, a.items[1].attrs);
    /* Each list holds its own reference: freeing one leaves the other whole. */
    swf_event_list_free(&a);
    cr_expect(json_object_is_type(b.items[0].attrs, json_type_object));
    swf_event_list_free(&b);
}

/* Writes text to a new temporary file; returns its path (to be freed). */
static char *temp_file(const char *text)
{
    char *path = strdup("/tmp/swf-test-event-XXXXXX");
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    size_t len = strlen(text);
    cr_assert_eq(write(fd, text, len), (ssize_t)len);
    close(fd);
    return path;
}

#define LINE(id, type, extra)                                                                      \
    "{\"eventId\":" #id ",\"eventType\":\"" type "\",\"eventTimestamp\":"                          \
    "\"2026-11-21T10:00:0" #id ".000Z\"" extra "}\n"

Test(event_list, reads_a_history_file)
{
    char *path = temp_file(LINE(1, "WorkflowExecutionStarted",
                                ",\"workflowExecutionStartedEventAttributes\":{\"input\":{\"k\":"
                                "\"v\"}}") "\n   \n" LINE(2, "DecisionTaskScheduled", "")
                               LINE(3, "DecisionTaskStarted",
                                    ",\"decisionTaskStartedEventAttributes\":"
                                    "{\"scheduledEventId\":2,\"identity\":\"t\"}"));
    swf_event_list_t list = {0};
    swf_error_t *err = swf_event_list_read_file(path, &list);
    cr_assert_null(err, "%s", err ? swf_error_message(err) : "");
    cr_assert_eq(list.count, 3);
    cr_expect_eq(list.items[0].type, SWF_EVENT_WORKFLOW_EXECUTION_STARTED);
    cr_expect_eq(list.items[1].type, SWF_EVENT_DECISION_TASK_SCHEDULED);
    cr_expect_eq(list.items[2].type, SWF_EVENT_DECISION_TASK_STARTED);
    cr_expect_eq(list.items[2].time_ms - list.items[0].time_ms, 2000);
    json_object *input;
    cr_expect(swf_json_get(list.items[0].attrs, "input", &input));
    cr_expect_str_eq(swf_json_get_string(input, "k"), "v");
    cr_expect_eq(json_object_object_length(list.items[1].attrs), 0);
    swf_event_list_free(&list);
    unlink(path);
    free(path);
}

Test(event_list, reads_a_file_without_a_final_newline)
{
    char *path = temp_file(LINE(1, "WorkflowExecutionStarted",
                                "") "{\"eventId\":2,\"eventType\":\"DecisionTaskScheduled\","
                                    "\"eventTimestamp\":\"2026-11-21T10:00:02Z\"}");
    swf_event_list_t list = {0};
    swf_error_t *err = swf_event_list_read_file(path, &list);
    cr_expect_null(err, "%s", err ? swf_error_message(err) : "");
    cr_expect_eq(list.count, 2);
    swf_error_free(err);
    swf_event_list_free(&list);
    unlink(path);
    free(path);
}

/* Reads `text` as a history and expects a refusal whose message holds
 * `needle` (the line number, prefixed by the path). */
static void expect_read_refused(const char *text, swf_code_t code, const char *line_tag)
{
    char *path = temp_file(text);
    swf_event_list_t list = {0};
    swf_error_t *err = swf_event_list_read_file(path, &list);
    cr_assert_not_null(err, "accepted %s", text);
    cr_expect_eq(swf_error_code(err), code, "%s", swf_error_message(err));
    char needle[512];
    snprintf(needle, sizeof(needle), "%s:%s", path, line_tag);
    cr_expect_not_null(strstr(swf_error_message(err), needle), "%s lacks %s",
                       swf_error_message(err), needle);
    swf_error_free(err);
    swf_event_list_free(&list);
    unlink(path);
    free(path);
}

Test(event_list, refuses_ids_that_are_not_dense)
{
    expect_read_refused(LINE(1, "WorkflowExecutionStarted", "")
                            LINE(3, "DecisionTaskScheduled", ""),
                        SWF_E_INPUT, "2");
    expect_read_refused(LINE(2, "WorkflowExecutionStarted", ""), SWF_E_INPUT, "1");
    expect_read_refused(LINE(1, "WorkflowExecutionStarted", "")
                            LINE(1, "DecisionTaskScheduled", ""),
                        SWF_E_INPUT, "2");
}

Test(event_list, refuses_bad_lines_naming_them)
{
    expect_read_refused(LINE(1, "WorkflowExecutionStarted", "") "\n{not json}\n", SWF_E_INPUT, "3");
    expect_read_refused(LINE(1, "WorkflowExecutionStarted", "") "[1]\n", SWF_E_INPUT, "2");
    expect_read_refused(LINE(1, "NoSuchEvent", ""), SWF_E_INPUT, "1");
}

Test(event_list, a_missing_file_is_an_io_error)
{
    swf_event_list_t list = {0};
    swf_error_t *err = swf_event_list_read_file("/nonexistent/swf/history.jsonl", &list);
    cr_assert_not_null(err);
    cr_expect_eq(swf_error_code(err), SWF_E_IO);
    cr_expect_not_null(strstr(swf_error_message(err), "/nonexistent/swf/history.jsonl"));
    cr_expect_eq(list.count, 0);
    swf_error_free(err);
    swf_event_list_free(&list);
}

Test(event_read_file, line_longer_than_the_limit_is_refused_without_reading_it_all)
{
    char path[] = "/tmp/swf-long-line-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    static char chunk[1 << 20];
    memset(chunk, ' ', sizeof(chunk));
    for (unsigned i = 0; i <= SWF_LIMIT_JSON_BYTES / sizeof(chunk); i++)
        fwrite(chunk, 1, sizeof(chunk), f);
    fputs("{}\n", f);
    fclose(f);
    swf_event_list_t list = {0};
    swf_error_t *err = swf_event_list_read_file(path, &list);
    unlink(path);
    cr_assert_not_null(err);
    cr_assert_eq(swf_error_code(err), SWF_E_LIMIT);
    cr_assert(strstr(swf_error_message(err), ":1: line longer than") != NULL, "%s",
              swf_error_message(err));
    swf_error_free(err);
    swf_event_list_free(&list);
}

#define HASH_A                                                                                     \
    "\"eventHash\":\""                                                                             \
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\""
#define HASH_B                                                                                     \
    "\"eventHash\":\""                                                                             \
    "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210\""

/* Reads path with hashes; returns the error's message ("" when none). */
static const char *read_hashes(const char *text, swf_event_list_t *list, swf_event_hash_t **hashes)
{
    static char message[512];
    char *path = temp_file(text);
    swf_error_t *err = swf_event_list_read_file_hashes(path, list, hashes);
    snprintf(message, sizeof(message), "%s", err != NULL ? swf_error_message(err) : "");
    swf_error_free(err);
    unlink(path);
    free(path);
    return message;
}

Test(event_list, reads_each_events_hash_or_none_and_refuses_a_mix)
{
    swf_event_list_t list = {0};
    swf_event_hash_t *hashes = NULL;
    cr_assert_str_eq(read_hashes(LINE(1, "WorkflowExecutionStarted", "," HASH_A)
                                     LINE(2, "DecisionTaskScheduled", "," HASH_B),
                                 &list, &hashes),
                     "");
    cr_assert_eq(list.count, 2);
    cr_assert_not_null(hashes);
    cr_assert_str_eq(hashes[0], "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
    cr_assert_str_eq(hashes[1], "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210");
    free(hashes);
    swf_event_list_free(&list);

    /* A file from before the chain: no hashes, and no array. */
    cr_assert_str_eq(read_hashes(LINE(1, "WorkflowExecutionStarted", "")
                                     LINE(2, "DecisionTaskScheduled", ""),
                                 &list, &hashes),
                     "");
    cr_assert_eq(list.count, 2);
    cr_assert_null(hashes);
    swf_event_list_free(&list);

    /* A mix either way, or a hash that is not one: refused, naming the line. */
    cr_assert(strstr(read_hashes(LINE(1, "WorkflowExecutionStarted", "," HASH_A)
                                     LINE(2, "DecisionTaskScheduled", ""),
                                 &list, &hashes),
                     ":2: no eventHash here, where the events before carry one"));
    cr_assert_null(hashes);
    swf_event_list_free(&list);
    cr_assert(strstr(read_hashes(LINE(1, "WorkflowExecutionStarted", "")
                                     LINE(2, "DecisionTaskScheduled", "," HASH_B),
                                 &list, &hashes),
                     ":2: eventHash here, where the events before carry none"));
    swf_event_list_free(&list);
    cr_assert(strstr(
        read_hashes(LINE(1, "WorkflowExecutionStarted", ",\"eventHash\":\"ABC\""), &list, &hashes),
        ":1: eventHash must be 64 lowercase hexadecimal digits"));
    swf_event_list_free(&list);
    cr_assert(
        strstr(read_hashes(LINE(1, "WorkflowExecutionStarted", ",\"eventHash\":7"), &list, &hashes),
               ":1: eventHash must be 64 lowercase hexadecimal digits"));
    swf_event_list_free(&list);

    /* The reader without hashes takes the same file and ignores them. */
    char *path = temp_file(LINE(1, "WorkflowExecutionStarted", "," HASH_A));
    cr_assert_null(swf_event_list_read_file(path, &list));
    cr_assert_eq(list.count, 1);
    swf_event_list_free(&list);
    unlink(path);
    free(path);
}
