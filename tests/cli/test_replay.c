/*
 * test_replay.c - proves cli/replay.c on real histories: made in-process by
 * the local runner (Parallel, nested Map, retries, a catch, a Wait, a
 * .waitForTaskToken callback), a recorded one with a signal added by hand,
 * and deliberately altered copies (a result changed, an event removed, two
 * decisions swapped), each caught at the exact event id. One test goes
 * through PostgreSQL (`swf replay ID`). The driver under the command, and
 * histories altered at random, are tests/decider/test_replay.c's.
 */
#include "../history/test_pg_fixture.h"

#include <fcntl.h>
#include <stdarg.h>

#include "cli/cli.h"
#include "decider/local.h"
#include "protocol/json.h"
#include "protocol/limits.h"

#define SRC SWF_SOURCE_DIR "/tests/histories/src/"
#define EXAMPLES SWF_SOURCE_DIR "/examples/"

static char output[1 << 20];

/* Runs `swf ARGS...` in-process with stdout captured into `output`. */
static int swf(const char *first, ...)
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
    fflush(stdout);
    char path[] = "/tmp/swf-replay-out-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    int saved = dup(1);
    dup2(fd, 1);
    int code = swf_cli_main(argc, argv);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    lseek(fd, 0, SEEK_SET);
    ssize_t n = read(fd, output, sizeof(output) - 1);
    output[n > 0 ? n : 0] = '\0';
    close(fd);
    unlink(path);
    return code;
}

static json_object *read_json(const char *path)
{
    json_object *v = NULL;
    swf_error_t *err = swf_json_read_file(path, SWF_LIMIT_JSON_BYTES, &v);
    cr_assert_null(err, "%s", swf_error_message(err));
    return v;
}

/* Runs a definition with the local runner and returns its history. */
static void record(const char *def, const char *input, const char *mocks, swf_event_list_t *out)
{
    swf_local_options_t opt = {
        .definition = read_json(def),
        .input = read_json(input),
        .mocks = mocks ? read_json(mocks) : NULL,
        .start_ms = 1763719200000LL,
        .machine_dir = EXAMPLES, /* the order's invoice (a nested execution) */
    };
    swf_history_store_t *store = swf_history_mem_new();
    swf_local_result_t res = {0};
    swf_error_t *err = swf_local_run(&opt, store, &res);
    cr_assert_null(err, "%s", swf_error_message(err));
    err = swf_history_load(store, "local", 0, 0, out);
    cr_assert_null(err);
    swf_local_result_free(&res);
    swf_history_store_free(store);
    json_object_put(opt.definition);
    json_object_put(opt.input);
    json_object_put(opt.mocks);
}

static void write_history(const swf_event_list_t *events, const char *path)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    for (size_t i = 0; i < events->count; i++) {
        json_object *o = swf_event_to_json(&events->items[i]);
        fprintf(f, "%s\n", swf_json_str(o));
        json_object_put(o);
    }
    fclose(f);
}

static int64_t find_event(const swf_event_list_t *ev, swf_event_type_t type, const char *state)
{
    for (size_t i = 0; i < ev->count; i++) {
        json_object *c = NULL;
        swf_json_get(ev->items[i].attrs, "control", &c);
        const char *s = c ? swf_json_get_string(c, "state") : NULL;
        if (ev->items[i].type == type && (state == NULL || (s && strcmp(s, state) == 0)))
            return ev->items[i].id;
    }
    cr_assert_fail("no %s event", swf_event_type_name(type));
    return 0;
}

static void record_debug(swf_event_list_t *ev)
{
    record(SRC "debug.asl.json", SRC "debug.input.json", SRC "debug.mocks.json", ev);
}

static void record_order(swf_event_list_t *ev)
{
    record(EXAMPLES "order.asl.json", EXAMPLES "order.input.json", EXAMPLES "order.mocks.json", ev);
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

Test(cli_replay, clean_history_replays_with_one_summary_line)
{
    swf_event_list_t ev = {0};
    record_debug(&ev);
    write_history(&ev, "/tmp/swf-replay-debug.jsonl");
    cr_assert_eq(swf("replay", "--file", "/tmp/swf-replay-debug.jsonl", NULL), 0, "%s", output);
    char want[256];
    snprintf(want, sizeof(want), "replayed %zu events of execution local: ", ev.count);
    cr_assert(strncmp(output, want, strlen(want)) == 0, "%s", output);
    cr_assert(strstr(output, "decisions match; status SUCCEEDED\n") != NULL, "%s", output);
    cr_assert_eq(count(output, "\n"), 1);
    swf_event_list_free(&ev);
    unlink("/tmp/swf-replay-debug.jsonl");
}

Test(cli_replay, signals_are_recorded_and_ignored)
{
    cr_assert_eq(swf("replay", "--file",
                     SWF_SOURCE_DIR "/tests/histories/examples__order-signaled.jsonl", NULL),
                 0, "%s", output);
    cr_assert(strstr(output, "all 10 decisions match; status SUCCEEDED") != NULL, "%s", output);
}

Test(cli_replay, a_changed_result_is_caught_at_the_decision_it_changes)
{
    swf_event_list_t ev = {0};
    record_order(&ev);
    /* The charge id flows into the invoice's request (a nested execution):
     * the first decision it changes is that Task's schedule. */
    for (size_t i = 0; i < ev.count; i++) {
        json_object *r;
        if (ev.items[i].type == SWF_EVENT_ACTIVITY_TASK_COMPLETED &&
            swf_json_get(ev.items[i].attrs, "result", &r) && swf_json_get_string(r, "chargeId")) {
            json_object *a = swf_json_copy(ev.items[i].attrs), *res = json_object_new_object();
            json_object_object_add(res, "chargeId", json_object_new_string("ch_FORGED"));
            json_object_object_add(a, "result", res);
            json_object_put(ev.items[i].attrs);
            ev.items[i].attrs = a;
        }
    }
    write_history(&ev, "/tmp/swf-replay-changed.jsonl");
    int64_t invoice_id = find_event(&ev, SWF_EVENT_ACTIVITY_TASK_SCHEDULED, "Invoice");
    cr_assert_eq(swf("replay", "--file", "/tmp/swf-replay-changed.jsonl", NULL), 1);
    char want[128];
    snprintf(want, sizeof(want), "NON-DETERMINISM at event %lld (ActivityTaskScheduled)",
             (long long)invoice_id);
    cr_assert(strstr(output, want) != NULL, "%s", output);
    cr_assert(strstr(output, "! input.Input.chargeId") != NULL, "%s", output);
    cr_assert(strstr(output, "\"ch_FORGED\"") != NULL && strstr(output, "\"ch_123\"") != NULL);
    swf_event_list_free(&ev);
    unlink("/tmp/swf-replay-changed.jsonl");
}

/* The first decision task that scheduled two activities: index of the first. */
static size_t two_schedules(const swf_event_list_t *ev)
{
    for (size_t i = 0; i + 1 < ev->count; i++) {
        if (ev->items[i].type == SWF_EVENT_ACTIVITY_TASK_SCHEDULED &&
            ev->items[i + 1].type == SWF_EVENT_ACTIVITY_TASK_SCHEDULED)
            return i;
    }
    cr_assert_fail("no two activities scheduled together");
    return 0;
}

Test(cli_replay, a_removed_event_is_caught_at_its_id)
{
    swf_event_list_t ev = {0}, cut = {0};
    record_order(&ev);
    size_t gone = two_schedules(&ev);
    for (size_t i = 0; i < ev.count; i++) {
        if (i != gone)
            swf_event_list_push(&cut, ev.items[i].type, ev.items[i].time_ms,
                                swf_json_ref(ev.items[i].attrs));
    }
    write_history(&cut, "/tmp/swf-replay-removed.jsonl");
    cr_assert_eq(swf("replay", "--file", "/tmp/swf-replay-removed.jsonl", NULL), 1);
    char want[128];
    snprintf(want, sizeof(want), "NON-DETERMINISM at event %lld (ActivityTaskScheduled)",
             (long long)ev.items[gone].id);
    cr_assert(strstr(output, want) != NULL, "%s", output);
    swf_event_list_free(&ev);
    swf_event_list_free(&cut);
    unlink("/tmp/swf-replay-removed.jsonl");
}

Test(cli_replay, swapped_decisions_are_caught_with_state_and_path)
{
    swf_event_list_t ev = {0};
    record_order(&ev);
    size_t i = two_schedules(&ev);
    json_object *t = ev.items[i].attrs;
    ev.items[i].attrs = ev.items[i + 1].attrs;
    ev.items[i + 1].attrs = t;
    write_history(&ev, "/tmp/swf-replay-swapped.jsonl");
    cr_assert_eq(swf("replay", "--file", "/tmp/swf-replay-swapped.jsonl", NULL), 1);
    char want[128];
    snprintf(want, sizeof(want), "NON-DETERMINISM at event %lld", (long long)ev.items[i].id);
    cr_assert(strstr(output, want) != NULL, "%s", output);
    cr_assert(strstr(output, "  state      Pack\n") != NULL, "%s", output);
    cr_assert(strstr(output, "  path       Fulfil[0]/PackItems[0]\n") != NULL, "%s", output);
    cr_assert(strstr(output, "RECORDED (event") != NULL && strstr(output, "DERIVED") != NULL);

    /* --json: the raw detail. */
    cr_assert_eq(swf("replay", "--file", "/tmp/swf-replay-swapped.jsonl", "--json", NULL), 1);
    json_object *o = NULL, *detail, *v;
    swf_error_t *err = swf_json_parse(output, strlen(output), sizeof(output), &o);
    cr_assert_null(err, "%s", output);
    cr_assert(swf_json_get(o, "detail", &detail) && detail != NULL);
    cr_assert(swf_json_get(detail, "eventId", &v));
    cr_assert_eq(json_object_get_int64(v), ev.items[i].id);
    cr_assert(swf_json_get(detail, "recorded", &v) && v != NULL);
    cr_assert(swf_json_get(detail, "derived", &v) && v != NULL);
    json_object_put(o);
    swf_event_list_free(&ev);
    unlink("/tmp/swf-replay-swapped.jsonl");
}

Test(cli_replay, until_shows_the_state_at_that_event)
{
    swf_event_list_t ev = {0};
    record_debug(&ev);
    write_history(&ev, "/tmp/swf-replay-until.jsonl");
    char id[32];
    snprintf(id, sizeof(id), "%lld",
             (long long)find_event(&ev, SWF_EVENT_ACTIVITY_TASK_SCHEDULED, "Approve"));
    cr_assert_eq(swf("replay", "--file", "/tmp/swf-replay-until.jsonl", "--until", id, NULL), 0);
    cr_assert(strstr(output, "Approve  (Task, waiting for activity") != NULL, "%s", output);
    cr_assert(strstr(output, "open activities: 1") != NULL, "%s", output);

    /* Inside the nested Map: the retry timer of one iteration. */
    snprintf(id, sizeof(id), "%lld",
             (long long)find_event(&ev, SWF_EVENT_TIMER_STARTED, "Process"));
    cr_assert_eq(
        swf("replay", "--file", "/tmp/swf-replay-until.jsonl", "--until", id, "--json", NULL), 0);
    json_object *o = NULL, *timers;
    cr_assert_null(swf_json_parse(output, strlen(output), sizeof(output), &o), "%s", output);
    cr_assert(swf_json_get(o, "openTimers", &timers));
    cr_assert_eq(json_object_array_length(timers), 1);
    cr_assert_str_eq(swf_json_get_string(json_object_array_get_idx(timers, 0), "path"),
                     "Work[0]/Batches[0]/Items[0]");
    cr_assert(strstr(output, "\"retryCount\"") != NULL, "%s", output);
    json_object_put(o);

    cr_assert_eq(swf("replay", "--file", "/tmp/swf-replay-until.jsonl", "--until", "99999", NULL),
                 2);
    swf_event_list_free(&ev);
    unlink("/tmp/swf-replay-until.jsonl");
}

Test(cli_replay, step_prints_one_screen_per_decision_task)
{
    swf_event_list_t ev = {0};
    record_debug(&ev);
    write_history(&ev, "/tmp/swf-replay-step.jsonl");
    int tasks = 0;
    for (size_t i = 0; i < ev.count; i++)
        tasks += ev.items[i].type == SWF_EVENT_DECISION_TASK_COMPLETED;
    cr_assert_eq(swf("replay", "--file", "/tmp/swf-replay-step.jsonl", "--step", NULL), 0);
    cr_assert_eq(count(output, "======== decision task "), tasks, "%s", output);
    cr_assert_eq(count(output, "decisions derived: "), tasks);
    cr_assert(strstr(output, "TimerStarted") != NULL);
    cr_assert(strstr(output, "all ") != NULL, "the summary follows the screens");
    swf_event_list_free(&ev);
    unlink("/tmp/swf-replay-step.jsonl");
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

Test(cli_replay, definition_change_is_compatible_or_diverges)
{
    swf_event_list_t ev = {0};
    record_order(&ev);
    write_history(&ev, "/tmp/swf-replay-def.jsonl");
    json_object *def = read_json(EXAMPLES "order.asl.json");
    /* A comment changes nothing an execution does. */
    json_object_object_add(def, "Comment", json_object_new_string("reworded"));
    write_text("/tmp/swf-replay-def-same.json", swf_json_str(def));
    cr_assert_eq(swf("replay", "--file", "/tmp/swf-replay-def.jsonl", "--definition",
                     "/tmp/swf-replay-def-same.json", NULL),
                 0, "%s", output);
    cr_assert(strncmp(output, "compatible: all 10 recorded decisions are derived the same", 58) ==
                  0,
              "%s", output);
    /* A shorter wait starts another timer. */
    json_object *states, *wait;
    swf_json_get(def, "States", &states);
    swf_json_get(states, "WaitForCourier", &wait);
    json_object_object_add(wait, "Seconds", json_object_new_int(60));
    write_text("/tmp/swf-replay-def-new.json", swf_json_str(def));
    cr_assert_eq(swf("replay", "--file", "/tmp/swf-replay-def.jsonl", "--definition",
                     "/tmp/swf-replay-def-new.json", NULL),
                 1, "%s", output);
    char want[128];
    snprintf(want, sizeof(want), "NON-DETERMINISM at event %lld (TimerStarted)",
             (long long)find_event(&ev, SWF_EVENT_TIMER_STARTED, "WaitForCourier"));
    cr_assert(strstr(output, want) != NULL, "%s", output);
    cr_assert(strstr(output, "! startToFireTimeout") != NULL, "%s", output);
    json_object_put(def);
    swf_event_list_free(&ev);
    unlink("/tmp/swf-replay-def.jsonl");
    unlink("/tmp/swf-replay-def-same.json");
    unlink("/tmp/swf-replay-def-new.json");
}

Test(cli_replay, bad_arguments_are_usage_errors)
{
    cr_assert_eq(swf("replay", NULL), 2);
    cr_assert_eq(swf("replay", "x", "--file", "y", NULL), 2);
    cr_assert_eq(swf("replay", "--file", "/nonexistent/h.jsonl", NULL), 3);
}

Test(cli_replay, a_stored_execution_replays_by_id)
{
    swf_event_list_t ev = {0};
    record_debug(&ev);
    const char *db = fixture_db();
    swf_history_store_t *s = fixture_store(db);
    char *id = NULL;
    swf_error_t *err = swf_history_pg_import(s, &ev, &id);
    cr_assert_null(err, "%s", swf_error_message(err));
    swf_history_store_free(s);
    setenv("SWF_DATABASE_URL", db, 1);
    cr_assert_eq(swf("replay", id, NULL), 0, "%s", output);
    cr_assert(strstr(output, "decisions match; status SUCCEEDED") != NULL, "%s", output);
    cr_assert_eq(swf("history", id, "--states", NULL), 0, "%s", output);
    cr_assert(strstr(output, "Process (Task)  succeeded after 1 retry") != NULL, "%s", output);
    cr_assert_eq(swf("graph", id, NULL), 0, "%s", output);
    cr_assert(strstr(output, "digraph") != NULL);
    cr_assert_eq(swf("replay", "no-such-execution", NULL), 1);
    free(id);
    swf_event_list_free(&ev);
}

/* An event appended after the close (a second close, a late activity
 * answer, a second start) is a history no engine writes: the interpreter
 * passes over it, so replay used to report "all decisions match" and exit
 * 0. It must name the event and the close instead (as admin check does). */
Test(cli_replay, an_event_after_the_close_does_not_replay)
{
    swf_event_list_t ev = {0};
    record_order(&ev);
    cr_assert(swf_event_type_is_close(ev.items[ev.count - 1].type));
    const swf_event_type_t extra[] = {SWF_EVENT_ACTIVITY_TASK_STARTED,
                                      SWF_EVENT_WORKFLOW_EXECUTION_COMPLETED,
                                      SWF_EVENT_WORKFLOW_EXECUTION_STARTED};
    for (size_t k = 0; k < sizeof(extra) / sizeof(extra[0]); k++) {
        swf_event_list_t more = {0};
        for (size_t i = 0; i < ev.count; i++)
            swf_event_list_push(&more, ev.items[i].type, ev.items[i].time_ms,
                                swf_json_ref(ev.items[i].attrs));
        /* The attributes of an event of that type earlier in the history. */
        json_object *attrs = NULL;
        for (size_t i = 0; i < ev.count && attrs == NULL; i++) {
            if (ev.items[i].type == extra[k])
                attrs = swf_json_ref(ev.items[i].attrs);
        }
        cr_assert_not_null(attrs);
        swf_event_list_push(&more, extra[k], ev.items[ev.count - 1].time_ms, attrs);
        write_history(&more, "/tmp/swf-replay-after-close.jsonl");
        cr_assert_eq(swf("replay", "--file", "/tmp/swf-replay-after-close.jsonl", NULL), 1, "%s",
                     output);
        char want[160];
        snprintf(want, sizeof(want), "event %zu (%s) comes after the execution closed at event %zu",
                 ev.count + 1, swf_event_type_name(extra[k]), ev.count);
        cr_assert(strstr(output, want) != NULL, "%s", output);
        cr_assert(strstr(output, "decisions match") == NULL, "%s", output);
        swf_event_list_free(&more);
    }
    swf_event_list_free(&ev);
    unlink("/tmp/swf-replay-after-close.jsonl");
}
