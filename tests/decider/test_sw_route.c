/*
 * test_sw_route.c - proves decider/sw_route.c on a real PostgreSQL: an
 * event that no instance takes starts one when the start state waits for
 * it (under an id derived from the event, with a decide message), the same
 * event again is a duplicate that starts nothing, a malformed event and one
 * no trigger fits are dropped with the reason, an ASL state machine is an
 * error, and the outcome reads as JSON.
 */
#include "tests/history/test_pg_fixture.h"

#include "decider/sw_route.h"
#include "protocol/json.h"

/* Loans: an application (Req, from /portal) starts one, which then waits
 * for its decision (Ok, from /mgr), both correlated by the loan. */
static const char loan_definition[] =
    "{\"states\":[{\"name\":\"Start\",\"type\":\"EVENT\",\"start\":true,"
    "\"events\":[{\"event-expression\":\"Req\",\"next-state\":\"Decide\"}]},"
    "{\"name\":\"Decide\",\"type\":\"EVENT\","
    "\"events\":[{\"event-expression\":\"Ok\",\"next-state\":\"Done\"}]},"
    "{\"name\":\"Done\",\"type\":\"END\"}],"
    "\"trigger-defs\":[{\"name\":\"Req\",\"source\":\"/portal\","
    "\"correlation-token\":\"$.data.loan\"},{\"name\":\"Ok\",\"source\":\"/mgr\","
    "\"correlation-token\":\"$.data.loan\"}]}";

/* `text` parsed (the test fails if it does not parse). */
static json_object *parse(const char *text)
{
    json_object *v = NULL;
    swf_error_t *err = swf_json_parse(text, strlen(text), 1u << 20, &v);
    cr_assert_null(err, "%s", err ? swf_error_message(err) : "");
    return v;
}

/* Fails the test on an error. */
static void ok(swf_error_t *err)
{
    cr_assert_null(err, "%s", err ? swf_error_message(err) : "");
}

/* The messages sent, as "type:executionId" lines. */
static char sent[1024];

static swf_error_t *capture(void *ctx, const char *id, json_object *msg)
{
    (void)ctx;
    snprintf(sent + strlen(sent), sizeof(sent) - strlen(sent), "%s:%s\n",
             swf_json_get_string(msg, "type"), id);
    return NULL;
}

static swf_history_store_t *registered(const char *name, const char *definition)
{
    swf_history_store_t *s = fixture_store(fixture_db());
    json_object *def = parse(definition);
    int version = 0;
    ok(swf_history_pg_state_machine_register(s, name, def, &version));
    json_object_put(def);
    return s;
}

/* The outcome of routing `event` to "loans", as JSON text. */
static const char *route(swf_history_store_t *s, const char *name, const char *event)
{
    static char out[1024];
    json_object *ce = parse(event);
    swf_sw_route_t r;
    ok(swf_sw_route_event(s, "secret", name, ce, capture, NULL, &r));
    json_object *j = swf_sw_route_json(&r);
    snprintf(out, sizeof(out), "%s", swf_json_str(j));
    json_object_put(j);
    swf_sw_route_clear(&r);
    json_object_put(ce);
    return out;
}

Test(decider_sw_route,
     an_event_the_start_state_waits_for_starts_one_instance_however_often_it_comes)
{
    swf_history_store_t *s = registered("loans", loan_definition);
    const char *ev = "{\"id\":\"e1\",\"source\":\"/portal\",\"type\":\"t\",\"data\":{\"loan\":"
                     "\"L1\"}}";
    char first[1024];
    snprintf(first, sizeof(first), "%s", route(s, "loans", ev));
    cr_assert_not_null(strstr(first, "\"outcome\":\"started\""), "%s", first);
    /* The decide message went to the instance it started. */
    char id[64] = {0};
    const char *p = strstr(first, "\"executionId\":\"") + 15;
    memcpy(id, p, 36);
    char want[128];
    snprintf(want, sizeof(want), "decide:%s\n", id);
    cr_assert_str_eq(sent, want);
    /* Again: a duplicate of the same instance, nothing sent. */
    const char *again = route(s, "loans", ev);
    snprintf(want, sizeof(want),
             "{\"instances\":[{\"executionId\":\"%s\",\"outcome\":\"duplicate\"}]}", id);
    cr_assert_str_eq(again, want);
    snprintf(want, sizeof(want), "decide:%s\n", id);
    cr_assert_str_eq(sent, want);
    swf_history_store_free(s);
}

Test(decider_sw_route, a_malformed_event_or_one_no_trigger_fits_is_dropped_with_the_reason)
{
    swf_history_store_t *s = registered("loans", loan_definition);
    cr_assert_str_eq(route(s, "loans", "{\"id\":\"e3\",\"source\":\"/portal\"}"),
                     "{\"dropped\":\"malformed (a CloudEvent is an object with string id, "
                     "source and type)\"}");
    cr_assert_str_eq(route(s, "loans", "[1]"),
                     "{\"dropped\":\"malformed (a CloudEvent is an object with string id, "
                     "source and type)\"}");
    const char *other =
        route(s, "loans", "{\"id\":\"e4\",\"source\":\"/elsewhere\",\"type\":\"t\"}");
    cr_assert_not_null(strstr(other, "no trigger of loans fits"), "%s", other);
    /* Ok has a trigger but no instance is waiting or correlated, and the
     * start state does not wait for it. */
    const char *nobody =
        route(s, "loans",
              "{\"id\":\"e5\",\"source\":\"/mgr\",\"type\":\"t\",\"data\":{\"loan\":\"L9\"}}");
    cr_assert_not_null(strstr(nobody, "no open instance of loans"), "%s", nobody);
    cr_assert_str_eq(sent, "");
    swf_history_store_free(s);
}

Test(decider_sw_route, an_event_for_an_asl_state_machine_is_an_error_naming_it)
{
    swf_history_store_t *s =
        registered("asl", "{\"StartAt\":\"A\",\"States\":{\"A\":{\"Type\":\"Succeed\"}}}");
    json_object *ce = parse("{\"id\":\"e1\",\"source\":\"/portal\",\"type\":\"t\"}");
    swf_sw_route_t r;
    swf_error_t *err = swf_sw_route_event(s, NULL, "asl", ce, capture, NULL, &r);
    cr_assert_not_null(err);
    cr_assert_not_null(strstr(swf_error_message(err), "asl is an ASL state machine"), "%s",
                       swf_error_message(err));
    swf_error_free(err);
    swf_sw_route_clear(&r);
    json_object_put(ce);
    swf_history_store_free(s);
}
