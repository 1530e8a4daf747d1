/*
 * test_replay.c - the replay driver (decider/replay.c): a recorded history
 * folds through the interpreter to its end with every decision matched;
 * the per-task callback sees each decision task's new events and derived
 * decisions; --until stops where it is told and refuses what it cannot do;
 * an event after the close and a changed definition are reported in the
 * result, not as errors of the call; and histories altered at random
 * (tests/fuzz.h) stop with a reason, never a crash. What `swf replay` makes
 * of the result is tests/cli/test_replay.c's.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decider/cache.h"
#include "decider/replay.h"
#include "protocol/json.h"
#include "tests/fuzz.h"

#define ORDER SWF_SOURCE_DIR "/tests/histories/fixtures/order-before-nested.jsonl"

static void load(const char *path, swf_event_list_t *out)
{
    swf_error_t *err = swf_event_list_read_file(path, out);
    cr_assert_null(err, "%s: %s", path, swf_error_message(err));
}

static size_t count_type(const swf_event_list_t *ev, swf_event_type_t type)
{
    size_t n = 0;
    for (size_t i = 0; i < ev->count; i++)
        n += ev->items[i].type == type;
    return n;
}

Test(decider_replay, a_recorded_history_replays_to_its_end)
{
    swf_event_list_t ev = {0};
    load(ORDER, &ev);
    swf_decider_replay_options_t opt = {0};
    swf_decider_replay_result_t res = {0};
    cr_assert_null(swf_decider_replay_run(&ev, &opt, &res));
    cr_assert_null(res.error, "%s", swf_error_message(res.error));
    cr_assert_eq(res.events_applied, ev.count);
    cr_assert_eq(res.decision_tasks, count_type(&ev, SWF_EVENT_DECISION_TASK_COMPLETED));
    size_t decisions = 0;
    for (size_t i = 0; i < ev.count; i++)
        decisions += swf_event_type_is_decision(ev.items[i].type);
    cr_assert_eq(res.decisions, decisions);
    cr_assert_eq(swf_asl_exec_status(res.exec), SWF_ASL_SUCCEEDED);
    swf_decider_replay_result_free(&res);
    cr_assert_null(res.exec);
    swf_event_list_free(&ev);
}

typedef struct tasks {
    size_t calls, next_from, derived;
    const swf_event_list_t *events;
} tasks_t;

static void on_task(void *ctx, const swf_event_list_t *events, size_t from, size_t to,
                    size_t task_number, const swf_asl_decisions_t *derived)
{
    tasks_t *t = ctx;
    cr_assert_eq(events, t->events);
    cr_assert_eq(task_number, t->calls + 1);
    cr_assert_eq(from, t->next_from, "task %zu starts at %zu, not %zu", task_number, from,
                 t->next_from);
    cr_assert_eq(events->items[to].type, SWF_EVENT_DECISION_TASK_STARTED);
    cr_assert_eq(events->items[to + 1].type, SWF_EVENT_DECISION_TASK_COMPLETED);
    /* What it derives is what the history records after the task. */
    size_t recorded = 0;
    for (size_t i = to + 2; i < events->count && swf_event_type_is_decision(events->items[i].type);
         i++)
        recorded++;
    cr_assert_eq(derived->count, recorded, "task %zu", task_number);
    t->derived += derived->count;
    t->next_from = to + 1;
    t->calls++;
}

Test(decider_replay, each_completed_task_is_shown_with_its_events_and_decisions)
{
    swf_event_list_t ev = {0};
    load(ORDER, &ev);
    tasks_t t = {.events = &ev};
    swf_decider_replay_options_t opt = {.task = on_task, .task_ctx = &t};
    swf_decider_replay_result_t res = {0};
    cr_assert_null(swf_decider_replay_run(&ev, &opt, &res));
    cr_assert_null(res.error, "%s", swf_error_message(res.error));
    cr_assert_eq(t.calls, count_type(&ev, SWF_EVENT_DECISION_TASK_COMPLETED));
    cr_assert_eq(t.derived, res.decisions);
    swf_decider_replay_result_free(&res);
    swf_event_list_free(&ev);
}

Test(decider_replay, until_stops_after_that_event_and_refuses_an_id_past_the_end)
{
    swf_event_list_t ev = {0};
    load(ORDER, &ev);
    /* Event 9 starts a task whose decisions follow: a cut there is no error. */
    swf_decider_replay_options_t opt = {.until_event_id = 9};
    swf_decider_replay_result_t res = {0};
    cr_assert_null(swf_decider_replay_run(&ev, &opt, &res));
    cr_assert_null(res.error, "%s", swf_error_message(res.error));
    cr_assert_eq(res.events_applied, 9);
    cr_assert_eq(swf_asl_exec_last_event_id(res.exec), 9);
    cr_assert_eq(swf_asl_exec_status(res.exec), SWF_ASL_RUNNING);
    swf_decider_replay_result_free(&res);

    const int64_t bad[] = {-1, (int64_t)ev.count + 1};
    for (size_t i = 0; i < 2; i++) {
        opt.until_event_id = bad[i];
        swf_error_t *err = swf_decider_replay_run(&ev, &opt, &res);
        cr_assert_not_null(err, "--until %lld", (long long)bad[i]);
        cr_assert_eq(swf_error_code(err), SWF_E_INPUT);
        cr_assert_null(res.exec);
        swf_error_free(err);
    }

    swf_event_list_t headless = {0};
    for (size_t i = 1; i < ev.count; i++)
        swf_event_list_push_copy(&headless, &ev.items[i]);
    opt.until_event_id = 0;
    swf_error_t *err = swf_decider_replay_run(&headless, &opt, &res);
    cr_assert_not_null(err, "a history without WorkflowExecutionStarted");
    swf_error_free(err);
    swf_event_list_free(&headless);
    swf_event_list_free(&ev);
}

Test(decider_replay, an_event_after_the_close_is_reported_in_the_result)
{
    swf_event_list_t ev = {0};
    load(ORDER, &ev);
    swf_event_t late = ev.items[5]; /* an ActivityTaskStarted */
    cr_assert_eq(late.type, SWF_EVENT_ACTIVITY_TASK_STARTED);
    late.id = (int64_t)ev.count + 1;
    swf_event_list_push_copy(&ev, &late);
    swf_decider_replay_options_t opt = {0};
    swf_decider_replay_result_t res = {0};
    cr_assert_null(swf_decider_replay_run(&ev, &opt, &res));
    cr_assert_not_null(res.error);
    cr_assert_eq(swf_error_code(res.error), SWF_E_INPUT);
    char want[120];
    snprintf(want, sizeof(want),
             "event %zu (ActivityTaskStarted) comes after the execution "
             "closed at event %zu",
             ev.count, ev.count - 1);
    cr_assert_str_eq(swf_error_message(res.error), want);
    cr_assert_eq(res.events_applied, ev.count - 1);
    swf_decider_replay_result_free(&res);
    swf_event_list_free(&ev);
}

Test(decider_replay, a_substituted_definition_replaces_the_recorded_one_only_in_the_fold)
{
    swf_event_list_t ev = {0};
    load(ORDER, &ev);
    json_object *recorded = NULL;
    cr_assert(swf_json_get(ev.items[0].attrs, "definition", &recorded));
    const char *before = strdup(swf_json_str(recorded));

    /* The same definition, as a copy: every decision matches. */
    json_object *same = swf_json_copy(recorded);
    swf_decider_replay_options_t opt = {.definition = same};
    swf_decider_replay_result_t res = {0};
    cr_assert_null(swf_decider_replay_run(&ev, &opt, &res));
    cr_assert_null(res.error, "%s", swf_error_message(res.error));
    swf_decider_replay_result_free(&res);

    /* A definition that starts elsewhere: the first decision differs. */
    json_object *other = swf_json_copy(recorded);
    json_object *states = NULL;
    cr_assert(swf_json_get(other, "States", &states));
    const char *start = swf_json_get_string(other, "StartAt");
    json_object *pass = json_object_new_object();
    swf_json_add(pass, "Type", json_object_new_string("Pass"));
    swf_json_add(pass, "Next", json_object_new_string(start));
    swf_json_add(states, "Before", pass);
    swf_json_add(other, "StartAt", json_object_new_string("Before"));
    opt.definition = other;
    cr_assert_null(swf_decider_replay_run(&ev, &opt, &res));
    cr_assert_not_null(res.error, "a changed start replays as if nothing changed");
    cr_assert_eq(swf_error_code(res.error), SWF_E_NONDETERMINISM);
    swf_decider_replay_result_free(&res);

    /* The history itself is untouched. */
    cr_assert(swf_json_get(ev.items[0].attrs, "definition", &recorded));
    cr_assert_str_eq(swf_json_str(recorded), before);
    free((void *)before);
    json_object_put(same);
    json_object_put(other);
    swf_event_list_free(&ev);
}

/* ---- altered histories (tests/fuzz.h) ---- */

/* Replaces or removes one value of an event (fuzz_alter_json), mostly inside
 * its attributes: the envelope (id, type, time) is what the history reader
 * checks first. */
static void alter_event(fuzz_t *f, json_object *ev, json_object *history)
{
    json_object *in = ev;
    if (fuzz_below(f, 5) != 0) {
        json_object_object_foreach(ev, k, val)
        {
            if (strstr(k, "EventAttributes") != NULL)
                in = val;
        }
    }
    fuzz_alter_json(f, in, history);
}

/* Histories altered by hand (an exported one edited, an import gone wrong)
 * replay to the end or stop with a reason, in the replay driver (what `swf
 * replay` runs) and in the decider's own fold alike; never crash, never run past their events. */
Test(decider_replay, altered_histories_stop_with_a_reason)
{
    static const char *const files[] = {
        "examples__order.jsonl", "examples__order-signaled.jsonl",  "retry__retry-then-catch.jsonl",
        "map__nested-map.jsonl", "parallel__nested-parallel.jsonl", "wait__timestamppath.jsonl"};
    size_t nf = sizeof(files) / sizeof(files[0]);
    json_object *histories[sizeof(files) / sizeof(files[0])];
    for (size_t i = 0; i < nf; i++) {
        char path[1024];
        snprintf(path, sizeof(path), "%s/tests/histories/%s", SWF_SOURCE_DIR, files[i]);
        swf_event_list_t events = {0};
        swf_error_t *err = swf_event_list_read_file(path, &events);
        cr_assert_null(err, "%s: %s", path, err ? swf_error_message(err) : "");
        histories[i] = json_object_new_array();
        for (size_t k = 0; k < events.count; k++)
            json_object_array_add(histories[i], swf_event_to_json(&events.items[k]));
        swf_event_list_free(&events);
    }
    fuzz_t f = fuzz_start();
    long rounds = fuzz_rounds(1500), refused = 0, stopped = 0, whole = 0;
    for (long r = 0; r < rounds; r++) {
        json_object *h = swf_json_copy(histories[fuzz_below(&f, nf)]);
        size_t n = json_object_array_length(h);
        for (int k = 1 + (int)fuzz_below(&f, 3); k > 0; k--) {
            if (fuzz_below(&f, 6) == 0 && n > 1) { /* an event removed */
                json_object_array_del_idx(h, fuzz_below(&f, n), 1);
                n--;
            } else {
                alter_event(&f, json_object_array_get_idx(h, fuzz_below(&f, n)), h);
            }
        }
        swf_event_list_t events = {0};
        swf_error_t *err = NULL;
        for (size_t k = 0; k < n && err == NULL; k++) {
            swf_event_t ev;
            err = swf_event_from_json(json_object_array_get_idx(h, k), &ev);
            if (err == NULL) {
                swf_event_list_push_copy(&events, &ev);
                json_object_put(ev.attrs);
            }
        }
        if (err != NULL) { /* what the history file reader refuses */
            refused++;
            cr_assert(swf_error_message(err)[0] != '\0');
            swf_error_free(err);
        } else {
            swf_decider_replay_options_t opt = {0};
            swf_decider_replay_result_t res = {0};
            err = swf_decider_replay_run(&events, &opt, &res);
            if (err != NULL || res.error != NULL) {
                stopped++;
                swf_error_t *why = err ? err : res.error;
                cr_assert(swf_error_message(why)[0] != '\0', "%s", swf_json_str(h));
            } else {
                whole++;
                cr_assert_eq(res.events_applied, events.count);
                if (res.exec != NULL && swf_asl_exec_status(res.exec) == SWF_ASL_SUCCEEDED)
                    fuzz_assert_json(swf_asl_exec_output(res.exec), "an altered history");
            }
            cr_assert_leq(res.events_applied, events.count);
            swf_error_free(err);
            swf_decider_replay_result_free(&res);
            /* The decider folds the same events into its cached state. */
            swf_decider_state_t *st = swf_decider_state_new("secret");
            for (size_t k = 0; k < events.count; k++) {
                swf_error_t *e = swf_decider_state_apply(st, &events.items[k]);
                if (e != NULL) {
                    cr_assert(swf_error_message(e)[0] != '\0');
                    swf_error_free(e);
                    break;
                }
            }
            swf_decider_state_free(st);
        }
        swf_event_list_free(&events);
        json_object_put(h);
    }
    cr_log_info("%ld rounds: %ld refused, %ld stopped, %ld whole", rounds, refused, stopped, whole);
    cr_expect(stopped > rounds / 20 && whole > rounds / 20, "%ld stopped, %ld whole", stopped,
              whole);
    for (size_t i = 0; i < nf; i++)
        json_object_put(histories[i]);
}
