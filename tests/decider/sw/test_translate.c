/*
 * test_translate.c - decider/sw/translate.c: the interpreter form keeps the
 * document's state names, says what each state was, and maps retry entries
 * onto retriers and catchers in the same order.
 */
#include <criterion/criterion.h>
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

Test(sw_translate, states_keep_their_names_and_say_their_type)
{
    json_object *doc =
        parse("{\"states\":[{\"name\":\"Work\",\"type\":\"OPERATION\",\"start\":true,"
              "\"actions\":[{\"function\":\"f\",\"retry\":[{\"match\":\"SYS.MatchAny\","
              "\"max-retry\":2,\"next-state\":\"Done\"}]}],\"next-state\":\"Done\"},"
              "{\"name\":\"Done\",\"type\":\"END\",\"InputPath\":\"$.a-b\"}]}");
    json_object *m = swf_sw_translate(doc), *states, *st, *v;
    cr_assert_not_null(m);
    cr_assert_str_eq(swf_json_get_string(m, "StartAt"), "Work");
    cr_assert(swf_json_get(m, "States", &states));
    cr_assert(swf_json_get(states, "Work", &st));
    cr_assert_str_eq(swf_json_get_string(st, "swf:ServerlessWorkflow:Type"), "OPERATION");
    cr_assert(swf_json_get(states, "Done", &st));
    cr_assert_str_eq(swf_json_get_string(st, "InputPath"), "$['a-b']", "bracket notation");
    const char *text = swf_json_str(m);
    cr_assert_not_null(strstr(text, "\"ErrorEquals\":[\"States.ALL\"],\"MaxAttempts\":2"), "%s",
                       text);
    cr_assert_not_null(strstr(text, "\"Next\":\"Work#goto:Done\""), "%s", text);
    (void)v;
    json_object_put(m);
    json_object_put(doc);
}

Test(sw_translate, an_invalid_document_has_no_translation)
{
    json_object *doc = parse("{\"states\":[]}");
    cr_assert_null(swf_sw_translate(doc));
    json_object_put(doc);
}
