/*
 * test_validate.c - decider/sw/validate.c: SPEC 13 reports every problem
 * with its JSON path, before anything runs; reference paths follow SPEC 2.
 * (The corpus' validation group covers one rule per case; these prove the
 * whole list and the paths.)
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "decider/sw/sw.h"
#include "protocol/json.h"

static json_object *parse(const char *text)
{
    json_object *v = NULL;
    swf_error_t *err = swf_json_parse(text, strlen(text), 1 << 20, &v);
    cr_assert_null(err, "bad test JSON: %s", swf_error_message(err));
    return v;
}

/* The problems of a document as "WHERE: MESSAGE" lines. */
static char *problems_of(const char *doc, size_t *count)
{
    json_object *d = parse(doc);
    swf_asl_problems_t p = {0};
    *count = swf_sw_validate(d, &p);
    cr_assert_eq(*count, p.count);
    static char buf[8192];
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < p.count; i++)
        n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s: %s\n", p.items[i].where,
                              p.items[i].message);
    swf_asl_problems_free(&p);
    json_object_put(d);
    return buf;
}

#define END "{\"name\":\"Done\",\"type\":\"END\"}"

Test(sw_validate, a_minimal_document_is_valid)
{
    size_t n;
    char *out =
        problems_of("{\"states\":[{\"name\":\"Done\",\"type\":\"END\",\"start\":true}]}", &n);
    cr_assert_eq(n, 0, "%s", out);
}

Test(sw_validate, documents_are_recognised_by_their_lower_case_states_member)
{
    json_object *sw = parse("{\"states\":{}}"), *asl = parse("{\"StartAt\":\"A\",\"States\":{}}");
    cr_assert(swf_sw_is_document(sw));
    cr_assert_not(swf_sw_is_document(asl));
    json_object_put(sw);
    json_object_put(asl);
}

Test(sw_validate, every_problem_is_reported_with_its_json_path)
{
    size_t n;
    char *out = problems_of(
        "{\"states\":[{\"name\":\"Work\",\"type\":\"OPERATION\",\"start\":true,"
        "\"actions\":[{\"function\":\"f\",\"timeout\":2.5,\"retry\":[{\"match\":\"X\","
        "\"max-retry\":\"3\"}]}],\"next-state\":\"Nowhere\",\"action_mode\":\"PARALLEL\"},"
        "{\"name\":\"Wait\",\"type\":\"DELAY\",\"time-delay\":0,\"next-state\":\"Done\"}," END
        "],\"name\":\"x\"}",
        &n);
    const char *want[] = {
        "$.name: ",
        "$.states[0].action_mode: ",
        "$.states[0].actions[0].timeout: must be a positive integer",
        "$.states[0].actions[0].retry[0].max-retry: must be a non-negative integer",
        "$.states[0].next-state: 'Nowhere' names no state",
        "$.states[1].time-delay: must be a positive integer",
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        cr_assert_not_null(strstr(out, want[i]), "missing '%s' in:\n%s", want[i], out);
    cr_assert_eq(n, sizeof(want) / sizeof(want[0]), "%s", out);
}

Test(sw_validate, next_states_stay_in_their_state_list)
{
    size_t n;
    char *out = problems_of(
        "{\"states\":[{\"name\":\"P\",\"type\":\"PARALLEL\",\"start\":true,\"next-state\":\"B\","
        "\"branches\":[{\"name\":\"b\",\"states\":[{\"name\":\"B\",\"type\":\"DELAY\","
        "\"start\":true,\"time-delay\":1,\"next-state\":\"Done\"}]}]}," END "]}",
        &n);
    cr_assert_not_null(strstr(out, "$.states[0].next-state: 'B' is not a state of the same"), "%s",
                       out);
    cr_assert_not_null(strstr(out, "$.states[0].branches[0].states[0].next-state: 'Done' is not"),
                       "%s", out);
    cr_assert_eq(n, 2, "%s", out);
}

Test(sw_validate, switch_rules_and_event_expressions_are_checked)
{
    size_t n;
    char *out = problems_of(
        "{\"trigger-defs\":[{\"name\":\"A\",\"source\":\"s\"}],\"states\":["
        "{\"name\":\"E\",\"type\":\"EVENT\",\"start\":true,\"events\":[{\"event-expression\":"
        "\"A or (B\",\"next-state\":\"S\"}]},"
        "{\"name\":\"S\",\"type\":\"SWITCH\",\"choices\":[{\"Not\":{\"path\":\"$.a\",\"value\":"
        "\"x\",\"operator\":\"EQ\",\"next-state\":\"Done\"},\"next-state\":\"Done\"}],"
        "\"default\":\"Done\"}," END "]}",
        &n);
    cr_assert_not_null(strstr(out, "$.states[0].events[0].event-expression: 'B' is not a trigger"),
                       "%s", out);
    cr_assert_not_null(strstr(out, "$.states[0].events[0].event-expression: does not parse"), "%s",
                       out);
    cr_assert_not_null(strstr(out, "$.states[1].choices[0].Not.next-state: is not allowed"), "%s",
                       out);
    cr_assert_not_null(strstr(out, "$.states[1].choices[0].Not.value: must be a JSON number"), "%s",
                       out);
}

Test(sw_validate, reference_paths_follow_the_grammar_of_spec_2)
{
    cr_assert(swf_sw_path_valid("$", false));
    cr_assert(swf_sw_path_valid("$.loan-id", false));
    cr_assert(swf_sw_path_valid("$['first name'].x", true));
    cr_assert(swf_sw_path_valid("$.items[0].sku", false));
    cr_assert_not(swf_sw_path_valid("$.items[0]", true), "ResultPath: names only");
    cr_assert_not(swf_sw_path_valid("$.items[01]", false));
    cr_assert_not(swf_sw_path_valid("$..x", false));
    cr_assert_not(swf_sw_path_valid("$.a[*]", false));
    cr_assert_not(swf_sw_path_valid("a.b", false));
}
