/*
 * test_mocks.c - the mocks module (decider/mocks.c) that answers activity
 * tasks for `swf run --local` and `swf run --dev`: one behaviour per mocked
 * response, and a check that names what it refuses.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "decider/mocks.h"
#include "protocol/json.h"
#include "tests/json_text.h"

Test(decider_mocks, responses_are_used_in_order_and_the_last_repeats)
{
    json_object *doc = json_text("{\"T\":[{\"Return\":1},{\"Return\":2}]}"), *in = json_text("{}");
    cr_assert_null(swf_decider_mocks_check(doc));
    swf_decider_mocks_t *m = swf_decider_mocks_new(doc);
    json_object_put(doc); /* the handle keeps its own reference */
    int64_t want[] = {1, 2, 2, 2};
    for (size_t i = 0; i < 4; i++) {
        swf_decider_mock_answer_t a;
        cr_assert_null(swf_decider_mocks_answer(m, "T", in, &a));
        cr_assert_not(a.failed);
        cr_assert_eq(json_object_get_int64(a.result), want[i]);
    }
    swf_decider_mocks_free(m);
    json_object_put(in);
}

Test(decider_mocks, each_state_name_counts_its_own_invocations)
{
    json_object *doc = json_text("{\"A\":[{\"Return\":\"a1\"},{\"Return\":\"a2\"}],"
                                 "\"B\":[{\"Return\":\"b1\"},{\"Return\":\"b2\"}]}");
    swf_decider_mocks_t *m = swf_decider_mocks_new(doc);
    swf_decider_mock_answer_t a;
    cr_assert_null(swf_decider_mocks_answer(m, "A", NULL, &a));
    cr_assert_null(swf_decider_mocks_answer(m, "B", NULL, &a));
    cr_assert_str_eq(json_object_get_string(a.result), "b1");
    cr_assert_null(swf_decider_mocks_answer(m, "A", NULL, &a));
    cr_assert_str_eq(json_object_get_string(a.result), "a2");
    swf_decider_mocks_free(m);
    json_object_put(doc);
}

Test(decider_mocks, a_state_without_mocks_and_echo_return_the_input)
{
    json_object *doc = json_text("{\"E\":[{\"Echo\":true}]}"), *in = json_text("{\"k\":[1]}");
    swf_decider_mocks_t *m = swf_decider_mocks_new(doc), *none = swf_decider_mocks_new(NULL);
    swf_decider_mock_answer_t a;
    cr_assert_null(swf_decider_mocks_answer(m, "E", in, &a));
    cr_assert_eq(a.result, in);
    cr_assert_null(swf_decider_mocks_answer(m, "Other", in, &a));
    cr_assert_eq(a.result, in);
    cr_assert_null(swf_decider_mocks_answer(none, "E", in, &a));
    cr_assert_eq(a.result, in);
    swf_decider_mocks_free(m);
    swf_decider_mocks_free(none);
    json_object_put(doc);
    json_object_put(in);
}

Test(decider_mocks, a_throw_of_states_timeout_is_a_failure_like_any_other_error)
{
    json_object *doc =
        json_text("{\"T\":[{\"Throw\":{\"Error\":\"States.Timeout\",\"Cause\":\"slow\"}},"
                  "{\"Throw\":{\"Error\":\"Custom\"}}]}");
    cr_assert_null(swf_decider_mocks_check(doc));
    swf_decider_mocks_t *m = swf_decider_mocks_new(doc);
    swf_decider_mock_answer_t a;
    cr_assert_null(swf_decider_mocks_answer(m, "T", NULL, &a));
    cr_assert(a.failed, "a worker can fail a task, not time it out");
    cr_assert_str_eq(a.error, "States.Timeout");
    cr_assert_str_eq(a.cause, "slow");
    cr_assert_null(swf_decider_mocks_answer(m, "T", NULL, &a));
    cr_assert(a.failed);
    cr_assert_str_eq(a.error, "Custom");
    cr_assert_str_eq(a.cause, "", "a Throw without a Cause has an empty one");
    swf_decider_mocks_free(m);
    json_object_put(doc);
}

Test(decider_mocks, the_check_names_the_response_of_an_unknown_shape)
{
    static const char *bad[] = {
        "[]",
        "{\"T\":[]}",
        "{\"T\":[{\"Return\":1,\"Echo\":true}]}",
        "{\"T\":[{\"Echo\":false}]}",
        "{\"T\":[{\"Return\":1},{\"Throw\":{\"Cause\":\"no error\"}}]}",
        "{\"T\":[{\"Throw\":{\"Error\":\"E\",\"Extra\":1}}]}",
        "{\"T\":[{\"Retrun\":1}]}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_object *doc = json_text(bad[i]);
        swf_error_t *err = swf_decider_mocks_check(doc);
        cr_assert_not_null(err, "%s is refused", bad[i]);
        cr_assert_eq(swf_error_code(err), SWF_E_INPUT);
        if (i >= 4)
            cr_assert_not_null(strstr(swf_error_message(err), "\"T\"["), "%s",
                               swf_error_message(err));
        swf_error_free(err);
        json_object_put(doc);
    }
}

Test(decider_mocks, an_unchecked_response_of_no_known_shape_is_an_input_error)
{
    json_object *doc = json_text("{\"T\":[{\"Retrun\":1}]}");
    swf_decider_mocks_t *m = swf_decider_mocks_new(doc);
    swf_decider_mock_answer_t a;
    swf_error_t *err = swf_decider_mocks_answer(m, "T", NULL, &a);
    cr_assert_not_null(err);
    cr_assert_eq(swf_error_code(err), SWF_E_INPUT);
    swf_error_free(err);
    swf_decider_mocks_free(m);
    json_object_put(doc);
}
