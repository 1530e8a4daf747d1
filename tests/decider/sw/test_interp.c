/*
 * test_interp.c - decider/sw/interp.c through the interpreter: a
 * CloudEvent signalled to a waiting EVENT state fires it, events a run is
 * given are delivered as MarkerRecorded decisions when a state waits, a
 * correlated event that comes early is kept and used later, and every such
 * history replays to the same decisions.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "decider/asl/exec.h"
#include "decider/local.h"
#include "decider/sw/sw.h"
#include "history/store.h"
#include "protocol/json.h"

static json_object *parse(const char *text)
{
    json_object *v = NULL;
    swf_error_t *err = swf_json_parse(text, strlen(text), 1 << 20, &v);
    cr_assert_null(err, "bad test JSON: %s", swf_error_message(err));
    return v;
}

#define LOAN                                                                                       \
    "{\"trigger-defs\":["                                                                          \
    "{\"name\":\"Docs\",\"source\":\"/docs\",\"correlation-token\":\"$.data.loan\"},"              \
    "{\"name\":\"Req\",\"source\":\"/portal\",\"correlation-token\":\"$.data.loan\"},"             \
    "{\"name\":\"Ok\",\"source\":\"/mgr\",\"correlation-token\":\"$.data.loan\"}],"                \
    "\"states\":["                                                                                 \
    "{\"name\":\"Start\",\"type\":\"EVENT\",\"start\":true,\"events\":[{\"event-expression\":"     \
    "\"Req\",\"ResultPath\":\"$.req\",\"next-state\":\"Check\"}]},"                                \
    "{\"name\":\"Check\",\"type\":\"OPERATION\",\"actions\":[{\"function\":\"check\","             \
    "\"ResultPath\":\"$.checked\"}],\"next-state\":\"Decide\"},"                                   \
    "{\"name\":\"Decide\",\"type\":\"EVENT\",\"events\":[{\"event-expression\":\"Ok\","            \
    "\"ResultPath\":\"$.ok\",\"next-state\":\"Papers\"}]},"                                        \
    "{\"name\":\"Papers\",\"type\":\"EVENT\",\"events\":[{\"event-expression\":\"Docs\","          \
    "\"ResultPath\":\"$.docs\",\"next-state\":\"Done\"}]},"                                        \
    "{\"name\":\"Done\",\"type\":\"END\"}]}"

#define EV(id, src, loan)                                                                          \
    "{\"id\":\"" id "\",\"source\":\"" src "\",\"type\":\"t\",\"data\":{\"loan\":\"" loan "\"}}"

typedef struct run {
    swf_history_store_t *store;
    swf_local_result_t res;
    swf_event_list_t events;
} run_t;

static void run_doc(run_t *r, const char *doc, const char *events)
{
    memset(r, 0, sizeof(*r));
    json_object *d = parse(doc), *in = parse("{}"), *ev = parse(events);
    r->store = swf_history_mem_new();
    swf_local_options_t opt = {.definition = d,
                               .input = in,
                               .events = ev,
                               .execution_id = "sw-1",
                               .start_ms = 1700000000000};
    swf_error_t *err = swf_local_run(&opt, r->store, &r->res);
    cr_assert_null(err, "run failed: %s", swf_error_message(err));
    cr_assert_null(swf_history_load(r->store, "sw-1", 0, 0, &r->events));
    json_object_put(d);
    json_object_put(in);
    json_object_put(ev);
}

static void run_free(run_t *r)
{
    swf_local_result_free(&r->res);
    swf_event_list_free(&r->events);
    swf_history_store_free(r->store);
}

static void replay_matches(const swf_event_list_t *events)
{
    swf_asl_exec_t *ex = swf_asl_exec_new();
    for (size_t i = 0; i < events->count; i++) {
        swf_error_t *err = swf_asl_exec_apply(ex, &events->items[i]);
        cr_assert_null(err, "replay: %s", swf_error_message(err));
    }
    cr_assert_null(swf_asl_exec_check_end(ex));
    swf_asl_exec_free(ex);
}

Test(sw_interp, a_correlated_early_event_is_kept_until_a_state_waits_for_it)
{
    run_t r;
    /* Req binds the instance to L1; while Decide waits for Ok, Ok for L2 is
     * another instance's (ignored) and Docs for L1 is kept as pending; Ok
     * for L1 fires Decide, and Papers takes the pending Docs at once. */
    run_doc(&r, LOAN,
            "[" EV("1", "/portal", "L1") "," EV("2", "/mgr", "L2") "," EV(
                "3", "/docs", "L1") "," EV("4", "/mgr", "L1") "]");
    cr_assert_eq(r.res.status, SWF_ASL_SUCCEEDED, "%s %s", r.res.error, r.res.cause);
    cr_assert_str_eq(swf_json_str(r.res.output),
                     "{\"req\":{\"loan\":\"L1\"},\"checked\":{\"req\":{\"loan\":\"L1\"}},"
                     "\"ok\":{\"loan\":\"L1\"},\"docs\":{\"loan\":\"L1\"}}");
    size_t markers = 0;
    for (size_t i = 0; i < r.events.count; i++)
        markers += r.events.items[i].type == SWF_EVENT_MARKER_RECORDED;
    cr_assert_eq(markers, 4, "each delivered event is recorded");
    replay_matches(&r.events);
    run_free(&r);
}

Test(sw_interp, a_wait_with_no_events_left_times_out)
{
    run_t r;
    run_doc(&r, LOAN, "[" EV("1", "/portal", "L1") "]");
    cr_assert_eq(r.res.status, SWF_ASL_FAILED);
    cr_assert_str_eq(r.res.error, "SYS.Timeout");
    replay_matches(&r.events);
    run_free(&r);
}

/* An interpreter that has applied an execution's first three events
 * (started with doc, borrowed, and input, taken; its first decision task
 * started), before it decides. */
static swf_asl_exec_t *started(const char *id, json_object *doc, json_object *input)
{
    swf_asl_exec_t *ex = swf_asl_exec_new();
    json_object *sa = json_object_new_object();
    swf_json_add(sa, "executionId", json_object_new_string(id));
    swf_json_add(sa, "definition", swf_json_ref(doc));
    swf_json_add(sa, "input", input);
    swf_event_t evs[] = {
        {1, SWF_EVENT_WORKFLOW_EXECUTION_STARTED, 1000, sa},
        {2, SWF_EVENT_DECISION_TASK_SCHEDULED, 1000, json_object_new_object()},
        {3, SWF_EVENT_DECISION_TASK_STARTED, 1000, json_object_new_object()},
    };
    for (size_t i = 0; i < 3; i++)
        cr_assert_null(swf_asl_exec_apply(ex, &evs[i]));
    for (size_t i = 0; i < 3; i++)
        json_object_put(evs[i].attrs);
    return ex;
}

/* The events of a history by hand: a started execution waits at Start; a
 * signal carrying a CloudEvent fires it. */
Test(sw_interp, a_signalled_cloudevent_reaches_the_waiting_state)
{
    json_object *doc = parse("{\"trigger-defs\":[{\"name\":\"Go\",\"source\":\"/s\"}],\"states\":["
                             "{\"name\":\"W\",\"type\":\"EVENT\",\"start\":true,\"events\":[{"
                             "\"event-expression\":\"Go\",\"next-state\":\"Done\"}]},"
                             "{\"name\":\"Done\",\"type\":\"END\"}]}");
    swf_asl_exec_t *ex = started("sig-1", doc, parse("{\"a\":1}"));
    json_object_put(doc);
    swf_asl_decisions_t d = {0};
    cr_assert_null(swf_asl_exec_decide(ex, &d));
    cr_assert_eq(d.count, 0, "the state waits");
    json_object *dc = json_object_new_object();
    swf_json_add(dc, "scheduledEventId", json_object_new_int(2));
    swf_json_add(dc, "startedEventId", json_object_new_int(3));
    json_object *sig = json_object_new_object();
    swf_json_add(sig, "signalName", json_object_new_string("cloudevent"));
    swf_json_add(sig, "input",
                 parse("{\"id\":\"e1\",\"source\":\"/s\",\"type\":\"x\","
                       "\"data\":{\"b\":2}}"));
    swf_event_t more[] = {
        {4, SWF_EVENT_DECISION_TASK_COMPLETED, 1000, dc},
        {5, SWF_EVENT_WORKFLOW_EXECUTION_SIGNALED, 2000, sig},
        {6, SWF_EVENT_DECISION_TASK_SCHEDULED, 2000, json_object_new_object()},
        {7, SWF_EVENT_DECISION_TASK_STARTED, 2000, json_object_new_object()},
    };
    for (size_t i = 0; i < 4; i++)
        cr_assert_null(swf_asl_exec_apply(ex, &more[i]));
    swf_asl_decisions_clear(&d);
    cr_assert_null(swf_asl_exec_decide(ex, &d));
    cr_assert_eq(d.count, 1);
    cr_assert_eq(d.items[0].type, SWF_EVENT_WORKFLOW_EXECUTION_COMPLETED);
    json_object *res;
    cr_assert(swf_json_get(d.items[0].attrs, "result", &res));
    cr_assert_str_eq(swf_json_str(res), "{\"a\":1,\"b\":2}", "the event data is merged");
    swf_asl_decisions_free(&d);
    swf_asl_exec_free(ex);
    for (size_t i = 0; i < 4; i++)
        json_object_put(more[i].attrs);
}

/* An execution of LOAN waiting at Start (its first decision made), for
 * asking what it would do with events. */
static swf_asl_exec_t *waiting_at_start(json_object **doc_out)
{
    json_object *doc = parse(LOAN);
    swf_asl_exec_t *ex = started("fate-1", doc, json_object_new_object());
    swf_asl_decisions_t d = {0};
    cr_assert_null(swf_asl_exec_decide(ex, &d));
    swf_asl_decisions_free(&d);
    *doc_out = doc;
    return ex;
}

Test(sw_interp, the_fate_of_an_event_is_told_without_routing_it)
{
    json_object *doc;
    swf_asl_exec_t *ex = waiting_at_start(&doc);
    const char *why = NULL;
    json_object *req = parse(EV("1", "/portal", "L1")), *ok = parse(EV("2", "/mgr", "L1"));
    json_object *bad = parse("{\"id\":1,\"source\":\"/portal\",\"type\":\"t\"}");
    json_object *stranger = parse(EV("3", "/elsewhere", "L1"));
    cr_assert_eq(swf_sw_event_fate(ex, req, &why), SWF_SW_RECORDED);
    cr_assert_eq(swf_sw_event_fate(ex, req, &why), SWF_SW_RECORDED, "asking changes nothing");
    cr_assert_eq(swf_sw_event_fate(ex, ok, &why), SWF_SW_DROPPED);
    cr_assert_not_null(strstr(why, "not correlated"), "%s", why);
    cr_assert_eq(swf_sw_event_fate(ex, bad, &why), SWF_SW_DROPPED);
    cr_assert_not_null(strstr(why, "malformed"), "%s", why);
    cr_assert_eq(swf_sw_event_fate(ex, stranger, &why), SWF_SW_DROPPED);
    cr_assert_not_null(strstr(why, "no trigger"), "%s", why);
    cr_assert(swf_sw_event_starts(doc, req), "Start waits for Req");
    cr_assert_not(swf_sw_event_starts(doc, ok), "Start does not wait for Ok");
    cr_assert_not(swf_sw_event_starts(doc, stranger));
    json_object_put(req);
    json_object_put(ok);
    json_object_put(bad);
    json_object_put(stranger);
    json_object_put(doc);
    swf_asl_exec_free(ex);
}
