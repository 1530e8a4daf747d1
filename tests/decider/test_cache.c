/*
 * test_cache.c - the decider's cache: one parsed copy of each definition
 * shared among the executions that carry it, within a bound, and states
 * that replay on it as on their own copy.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "decider/cache.h"
#include "protocol/json.h"

static const char DEF[] = "{\"StartAt\":\"A\",\"States\":{\"A\":{\"Type\":\"Pass\","
                          "\"Result\":{\"k\":[1,2]},\"Next\":\"B\"},"
                          "\"B\":{\"Type\":\"Wait\",\"Seconds\":60,\"End\":true}}}";

/* A WorkflowExecutionStarted event of its own, its definition parsed anew. */
static swf_event_t *started(swf_event_list_t *list, const char *def)
{
    json_object *attrs = json_object_new_object();
    json_object_object_add(attrs, "definition", json_tokener_parse(def));
    json_object_object_add(attrs, "input", json_tokener_parse("{\"x\":1}"));
    swf_event_t *ev = swf_event_list_push(list, SWF_EVENT_WORKFLOW_EXECUTION_STARTED, 1000, attrs);
    ev->id = 1;
    return ev;
}

static json_object *definition_of(const swf_event_t *ev)
{
    json_object *d;
    cr_assert(swf_json_get(ev->attrs, "definition", &d));
    return d;
}

Test(decider_cache, executions_of_one_definition_share_one_parsed_copy)
{
    swf_decider_cache_t *c = swf_decider_cache_new(10);
    swf_event_list_t a = {0}, b = {0}, other = {0};
    swf_event_t *ea = started(&a, DEF), *eb = started(&b, DEF);
    swf_event_t *eo =
        started(&other, "{\"StartAt\":\"Z\",\"States\":{\"Z\":{\"Type\":\"Succeed\"}}}");
    cr_assert_neq(definition_of(ea), definition_of(eb));
    cr_expect(swf_decider_cache_share_definition(c, ea), "a valid definition is said valid");
    cr_expect(swf_decider_cache_share_definition(c, eb));
    cr_expect(swf_decider_cache_share_definition(c, eo));
    cr_expect_eq(definition_of(ea), definition_of(eb), "equal definitions are one copy");
    cr_expect_neq(definition_of(ea), definition_of(eo));
    cr_expect_eq(swf_decider_cache_definitions(c), 2);

    /* both replay on the shared copy, and outlive the cache that shared it */
    swf_decider_state_t *sa = swf_decider_state_new(NULL), *sb = swf_decider_state_new(NULL);
    cr_assert_null(swf_decider_state_apply(sa, ea));
    cr_assert_null(swf_decider_state_apply(sb, eb));
    swf_event_list_free(&a);
    swf_event_list_free(&b);
    swf_event_list_free(&other);
    swf_decider_cache_free(c);
    cr_expect_eq(swf_asl_exec_status(sa->exec), SWF_ASL_RUNNING);
    cr_expect_eq(swf_asl_exec_status(sb->exec), SWF_ASL_RUNNING);
    swf_decider_state_free(sa);
    swf_decider_state_free(sb);
}

/* A definition is validated once, when first met; an invalid one is shared
 * too, but said invalid, so that the interpreter validates it and fails the
 * execution with the reason. */
Test(decider_cache, an_invalid_definition_is_said_invalid_every_time)
{
    swf_decider_cache_t *c = swf_decider_cache_new(10);
    const char *bad = "{\"StartAt\":\"Nowhere\",\"States\":{\"A\":{\"Type\":\"Succeed\"}}}";
    for (int i = 0; i < 2; i++) {
        swf_event_list_t l = {0};
        cr_expect(!swf_decider_cache_share_definition(c, started(&l, bad)), "round %d", i);
        swf_event_list_free(&l);
    }
    cr_expect_eq(swf_decider_cache_definitions(c), 1);
    swf_decider_cache_free(c);
}

Test(decider_cache, only_started_events_are_touched)
{
    swf_decider_cache_t *c = swf_decider_cache_new(10);
    swf_event_list_t l = {0};
    json_object *attrs = json_object_new_object();
    json_object *def = json_tokener_parse(DEF);
    json_object_object_add(attrs, "definition", def);
    swf_event_t *ev = swf_event_list_push(&l, SWF_EVENT_WORKFLOW_EXECUTION_SIGNALED, 1000, attrs);
    swf_decider_cache_share_definition(c, ev);
    cr_expect_eq(definition_of(ev), def);
    cr_expect_eq(swf_decider_cache_definitions(c), 0);
    swf_event_list_free(&l);
    swf_decider_cache_free(c);
}

Test(decider_cache, the_shared_definitions_are_bounded)
{
    swf_decider_cache_t *c = swf_decider_cache_new(10);
    swf_event_list_t first = {0};
    swf_event_t *kept = started(&first, DEF);
    swf_decider_cache_share_definition(c, kept);
    for (int i = 0; i < SWF_DECIDER_SHARED_DEFINITIONS + 10; i++) {
        char def[160];
        snprintf(def, sizeof def,
                 "{\"StartAt\":\"S\",\"States\":{\"S\":{\"Type\":\"Succeed\",\"Comment\":\"%d\"}}}",
                 i);
        swf_event_list_t l = {0};
        swf_decider_cache_share_definition(c, started(&l, def));
        cr_assert_leq(swf_decider_cache_definitions(c), SWF_DECIDER_SHARED_DEFINITIONS);
        swf_event_list_free(&l);
    }
    /* a definition shared before the set started afresh is still whole */
    json_object *want = json_tokener_parse(DEF);
    cr_expect(swf_json_equal(definition_of(kept), want));
    json_object_put(want);
    swf_event_list_free(&first);
    swf_decider_cache_free(c);
}
