/*
 * test_check.c - the history invariant checker (decider/check.c).
 *
 * Every recorded history passes; each violation, made by editing the
 * recorded order history (tests/histories/fixtures/order-before-nested.jsonl), is reported
 * at the event where it happens. The order history, for reference: 5
 * ActivityTaskScheduled (Charge), 7 ActivityTaskFailed, 11 TimerStarted (the
 * retry back-off), 12 TimerFired, 16 ActivityTaskScheduled (Charge again),
 * 18 ActivityTaskCompleted, 40 TimerStarted (the Wait), 41 TimerFired, 45
 * WorkflowExecutionCompleted.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decider/check.h"
#include "protocol/json.h"

#define ORDER SWF_SOURCE_DIR "/tests/histories/fixtures/order-before-nested.jsonl"

static void load(const char *path, swf_event_list_t *out)
{
    swf_error_t *err = swf_event_list_read_file(path, out);
    cr_assert(err == NULL, "%s: %s", path, swf_error_message(err));
}

/* Events first..last (ids) of `from`, with their ids. */
static void copy_range(swf_event_list_t *to, const swf_event_list_t *from, int64_t first,
                       int64_t last)
{
    for (int64_t id = first; id <= last; id++)
        swf_event_list_push_copy(to, &from->items[id - 1]);
}

/* A copy of event `id` of `from` under another id. */
static void copy_as(swf_event_list_t *to, const swf_event_list_t *from, int64_t id, int64_t new_id)
{
    swf_event_t ev = from->items[id - 1];
    ev.id = new_id;
    swf_event_list_push_copy(to, &ev);
}

static void check(const swf_event_list_t *events, swf_decider_check_problems_t *p)
{
    swf_error_t *err = swf_decider_check_events(events, p);
    cr_assert(err == NULL, "%s", swf_error_message(err));
}

static void print_problems(const swf_decider_check_problems_t *p)
{
    for (size_t i = 0; i < p->count; i++)
        fprintf(stderr, "  %s\n", p->items[i]);
}

/* Asserts that a problem starts with "event ID: " and contains `what`. */
static void assert_problem(const swf_decider_check_problems_t *p, int64_t id, const char *what)
{
    char prefix[32];
    snprintf(prefix, sizeof(prefix), "event %lld: ", (long long)id);
    for (size_t i = 0; i < p->count; i++) {
        if (strncmp(p->items[i], prefix, strlen(prefix)) == 0 && strstr(p->items[i], what))
            return;
    }
    print_problems(p);
    cr_assert_fail("no problem \"%s...%s...\" among the %zu reported", prefix, what, p->count);
}

static void assert_clean(const swf_decider_check_problems_t *p, const char *what)
{
    if (p->count > 0)
        print_problems(p);
    cr_assert_eq(p->count, 0, "%s: %zu problems, the first: %s", what, p->count,
                 p->count ? p->items[0] : "");
}

Test(decider_check, every_recorded_history_passes)
{
    const char *dir = SWF_SOURCE_DIR "/tests/histories";
    DIR *d = opendir(dir);
    cr_assert(d != NULL);
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 6, ".jsonl") != 0)
            continue;
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        swf_event_list_t events = {0};
        load(path, &events);
        swf_decider_check_problems_t p = {0};
        check(&events, &p);
        assert_clean(&p, e->d_name);
        swf_decider_check_problems_free(&p);
        swf_event_list_free(&events);
        n++;
    }
    closedir(d);
    cr_assert_gt(n, 100, "only %zu recorded histories found", n);
}

Test(decider_check, a_prefix_of_a_history_passes)
{
    swf_event_list_t order = {0}, ev = {0};
    load(ORDER, &order);
    copy_range(&ev, &order, 1, 18);
    swf_decider_check_problems_t p = {0};
    check(&ev, &p);
    assert_clean(&p, "events 1 to 18");
    swf_decider_check_problems_free(&p);
    swf_event_list_free(&ev);
    swf_event_list_free(&order);
}

Test(decider_check, reports_a_gap)
{
    swf_event_list_t order = {0}, ev = {0};
    load(ORDER, &order);
    copy_range(&ev, &order, 1, 10);
    copy_range(&ev, &order, 12, 45);
    swf_decider_check_problems_t p = {0};
    check(&ev, &p);
    assert_problem(&p, 12, "gap: event 11 is missing");
    swf_decider_check_problems_free(&p);

    swf_event_list_clear(&ev);
    copy_range(&ev, &order, 1, 10);
    copy_range(&ev, &order, 14, 45);
    check(&ev, &p);
    assert_problem(&p, 14, "gap: events 11 to 13 are missing");
    swf_decider_check_problems_free(&p);
    swf_event_list_free(&ev);
    swf_event_list_free(&order);
}

Test(decider_check, reports_a_duplicate_id)
{
    swf_event_list_t order = {0}, ev = {0};
    load(ORDER, &order);
    copy_range(&ev, &order, 1, 12);
    copy_as(&ev, &order, 13, 12); /* a fork: two events 12 */
    copy_range(&ev, &order, 13, 45);
    swf_decider_check_problems_t p = {0};
    check(&ev, &p);
    assert_problem(&p, 12, "duplicate or out-of-order id after event 12");
    swf_decider_check_problems_free(&p);
    swf_event_list_free(&ev);
    swf_event_list_free(&order);
}

Test(decider_check, reports_an_activity_result_recorded_twice)
{
    swf_event_list_t order = {0}, ev = {0};
    load(ORDER, &order);
    copy_range(&ev, &order, 1, 18);
    copy_as(&ev, &order, 18, 19); /* ActivityTaskCompleted of event 16 again */
    swf_decider_check_problems_t p = {0};
    check(&ev, &p);
    assert_problem(&p, 19, "whose result was recorded at event 18");
    cr_assert_eq(p.count, 1, "the replay ignores a second result; only the rule reports it");
    swf_decider_check_problems_free(&p);

    /* A failure after a completion is a second result too. */
    swf_event_list_clear(&ev);
    copy_range(&ev, &order, 1, 18);
    copy_as(&ev, &order, 7, 19);
    json_object *a = json_object_new_object();
    json_object_object_add(a, "scheduledEventId", json_object_new_int64(16));
    json_object_object_add(a, "startedEventId", json_object_new_int64(17));
    json_object_object_add(a, "reason", json_object_new_string("X"));
    json_object_put(ev.items[18].attrs);
    ev.items[18].attrs = a;
    check(&ev, &p);
    assert_problem(&p, 19, "ActivityTaskFailed for the activity scheduled at event 16");
    swf_decider_check_problems_free(&p);
    swf_event_list_free(&ev);
    swf_event_list_free(&order);
}

Test(decider_check, reports_a_result_for_no_activity)
{
    swf_event_list_t order = {0}, ev = {0};
    load(ORDER, &order);
    copy_range(&ev, &order, 1, 6);
    copy_as(&ev, &order, 18, 7); /* names scheduledEventId 16: not there yet */
    swf_decider_check_problems_t p = {0};
    check(&ev, &p);
    assert_problem(&p, 7, "scheduledEventId 16, which is no ActivityTaskScheduled event");
    swf_decider_check_problems_free(&p);
    swf_event_list_free(&ev);
    swf_event_list_free(&order);
}

Test(decider_check, reports_events_after_the_close)
{
    swf_event_list_t order = {0}, ev = {0};
    load(ORDER, &order);
    copy_range(&ev, &order, 1, 45);
    copy_as(&ev, &order, 42, 46); /* DecisionTaskScheduled */
    swf_decider_check_problems_t p = {0};
    check(&ev, &p);
    assert_problem(&p, 46, "DecisionTaskScheduled after the execution closed at event 45");
    swf_decider_check_problems_free(&p);
    swf_event_list_free(&ev);
    swf_event_list_free(&order);
}

Test(decider_check, reports_two_close_events)
{
    swf_event_list_t order = {0}, ev = {0};
    load(ORDER, &order);
    copy_range(&ev, &order, 1, 45);
    json_object *a = json_object_new_object();
    json_object_object_add(a, "reason", json_object_new_string("ops"));
    json_object_object_add(a, "details", json_object_new_string(""));
    swf_event_list_push(&ev, SWF_EVENT_WORKFLOW_EXECUTION_TERMINATED, 0, a);
    swf_decider_check_problems_t p = {0};
    check(&ev, &p);
    assert_problem(&p, 46, "a second close event (WorkflowExecutionTerminated)");
    assert_problem(&p, 46, "closed at event 45");
    swf_decider_check_problems_free(&p);
    swf_event_list_free(&ev);
    swf_event_list_free(&order);
}

Test(decider_check, reports_a_history_that_does_not_start_with_started)
{
    swf_event_list_t order = {0}, ev = {0};
    load(ORDER, &order);
    copy_range(&ev, &order, 1, 4);
    ev.items[0].type = SWF_EVENT_WORKFLOW_EXECUTION_SIGNALED;
    swf_decider_check_problems_t p = {0};
    check(&ev, &p);
    assert_problem(&p, 1, "the history starts with WorkflowExecutionSignaled");
    swf_decider_check_problems_free(&p);

    swf_event_list_clear(&ev);
    copy_range(&ev, &order, 1, 4);
    copy_as(&ev, &order, 1, 5);
    check(&ev, &p);
    assert_problem(&p, 5, "a second WorkflowExecutionStarted");
    swf_decider_check_problems_free(&p);
    swf_event_list_free(&ev);
    swf_event_list_free(&order);
}

Test(decider_check, reports_two_open_decision_tasks)
{
    swf_event_list_t order = {0}, ev = {0};
    load(ORDER, &order);
    copy_range(&ev, &order, 1, 8);
    copy_as(&ev, &order, 8, 9); /* DecisionTaskScheduled again */
    swf_decider_check_problems_t p = {0};
    check(&ev, &p);
    assert_problem(&p, 9, "a second decision task is scheduled while the one scheduled at event 8");
    swf_decider_check_problems_free(&p);

    /* A DecisionTaskCompleted naming a task that is not the open one. */
    swf_event_list_clear(&ev);
    copy_range(&ev, &order, 1, 9);
    copy_as(&ev, &order, 4, 10);
    check(&ev, &p);
    assert_problem(&p, 10,
                   "DecisionTaskCompleted names events 2 and 3, the open task's are 8 and 9");
    swf_decider_check_problems_free(&p);
    swf_event_list_free(&ev);
    swf_event_list_free(&order);
}

Test(decider_check, reports_a_decision_task_scheduled_with_nothing_new)
{
    swf_event_list_t order = {0}, ev = {0};
    load(ORDER, &order);
    copy_range(&ev, &order, 1, 5);
    copy_as(&ev, &order, 2, 6); /* DecisionTaskScheduled: nothing came since event 4 */
    swf_decider_check_problems_t p = {0};
    check(&ev, &p);
    assert_problem(&p, 6,
                   "a decision task is scheduled though nothing happened since the one that "
                   "completed at event 4");
    swf_decider_check_problems_free(&p);
    swf_event_list_free(&ev);
    swf_event_list_free(&order);
}

Test(decider_check, reports_a_decision_outside_its_task)
{
    swf_event_list_t order = {0}, ev = {0};
    load(ORDER, &order);
    copy_range(&ev, &order, 1, 7);
    copy_as(&ev, &order, 5, 8); /* ActivityTaskScheduled after a result */
    swf_decider_check_problems_t p = {0};
    check(&ev, &p);
    assert_problem(&p, 8, "decision event ActivityTaskScheduled does not directly follow");
    assert_problem(&p, 8, "activityId \"1\" was scheduled already at event 5");
    swf_decider_check_problems_free(&p);
    swf_event_list_free(&ev);
    swf_event_list_free(&order);
}

Test(decider_check, reports_a_timer_that_fires_twice_or_before_it_starts)
{
    swf_event_list_t order = {0}, ev = {0};
    load(ORDER, &order);
    copy_range(&ev, &order, 1, 12);
    copy_as(&ev, &order, 12, 13);
    swf_decider_check_problems_t p = {0};
    check(&ev, &p);
    assert_problem(&p, 13,
                   "TimerFired of timer \"t2\" started at event 11, which was closed "
                   "already at event 12");
    swf_decider_check_problems_free(&p);

    swf_event_list_clear(&ev);
    copy_range(&ev, &order, 1, 10);
    copy_as(&ev, &order, 12, 11); /* fires the timer that event 11 would start */
    check(&ev, &p);
    assert_problem(&p, 11, "which is no TimerStarted of that timer before it");
    swf_decider_check_problems_free(&p);
    swf_event_list_free(&ev);
    swf_event_list_free(&order);
}

Test(decider_check, reports_nondeterminism_at_the_decision)
{
    swf_event_list_t order = {0}, ev = {0};
    load(ORDER, &order);
    copy_range(&ev, &order, 1, 45);
    /* The Charge task's input as if the definition had changed. */
    json_object *a = swf_json_copy(ev.items[4].attrs);
    json_object_object_add(a, "input", json_object_new_string("changed"));
    json_object_put(ev.items[4].attrs);
    ev.items[4].attrs = a;
    swf_decider_check_problems_t p = {0};
    check(&ev, &p);
    assert_problem(&p, 5, "replay fails (nondeterminism)");
    cr_assert_eq(p.count, 1);
    swf_decider_check_problems_free(&p);
    swf_event_list_free(&ev);
    swf_event_list_free(&order);
}

Test(decider_check, keeps_a_bounded_number_of_problems)
{
    swf_event_list_t order = {0}, ev = {0};
    load(ORDER, &order);
    copy_range(&ev, &order, 1, 45);
    for (int64_t id = 46; id < 46 + SWF_DECIDER_CHECK_PROBLEMS_MAX + 50; id++)
        copy_as(&ev, &order, 6, id); /* ActivityTaskStarted after the close */
    swf_decider_check_problems_t p = {0};
    check(&ev, &p);
    cr_assert_eq(p.count, SWF_DECIDER_CHECK_PROBLEMS_MAX + 1);
    assert_problem(&p, 46, "ActivityTaskStarted after the execution closed at event 45");
    cr_assert(strncmp(p.items[p.count - 1], "... and ", 8) == 0, "%s", p.items[p.count - 1]);
    swf_decider_check_problems_free(&p);
    swf_event_list_free(&ev);
    swf_event_list_free(&order);
}

Test(decider_check, checks_an_execution_in_a_store)
{
    swf_event_list_t order = {0};
    load(ORDER, &order);
    swf_history_store_t *store = swf_history_mem_new();
    swf_error_t *err = swf_history_append(store, "local", 1, order.items, order.count);
    cr_assert(err == NULL, "%s", swf_error_message(err));
    swf_decider_check_problems_t p = {0};
    err = swf_decider_check_execution(store, "local", &p);
    cr_assert(err == NULL, "%s", swf_error_message(err));
    assert_clean(&p, "the stored order history");

    err = swf_decider_check_execution(store, "nope", &p);
    cr_assert(err != NULL);
    cr_assert_eq(swf_error_code(err), SWF_E_NOTFOUND);
    swf_error_free(err);

    swf_event_list_t none = {0};
    err = swf_decider_check_events(&none, &p);
    cr_assert(err != NULL, "an empty list cannot be checked");
    swf_error_free(err);
    swf_decider_check_problems_free(&p);
    swf_history_store_free(store);
    swf_event_list_free(&order);
}
