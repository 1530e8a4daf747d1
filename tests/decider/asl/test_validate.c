/*
 * test_validate.c - proves decider/asl/validate.c: one test per rule family,
 * that every problem is reported (not only the first), that the whole
 * conformance corpus gets the verdict AWS gives it, and that definitions
 * altered at random (tests/fuzz.h) are refused with a place or run.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decider/asl/exec.h"
#include "decider/asl/validate.h"
#include "protocol/json.h"
#include "protocol/limits.h"
#include "tests/fuzz.h"

#define CORPUS SWF_SOURCE_DIR "/../shared/conformance/cases"

/* Validates a definition given as JSON text; the problems stay in *p. */
static size_t run(const char *text, swf_asl_problems_t *p)
{
    json_object *def = NULL;
    swf_error_t *err = swf_json_parse(text, strlen(text), SWF_LIMIT_DEFINITION_BYTES, &def);
    cr_assert_null(err, "test definition does not parse: %s", err ? swf_error_message(err) : "");
    size_t n = swf_asl_validate(def, p);
    json_object_put(def);
    return n;
}

/* True when some problem is at `where` with a message containing `needle`. */
static bool has(const swf_asl_problems_t *p, const char *where, const char *needle)
{
    for (size_t i = 0; i < p->count; i++) {
        if (strcmp(p->items[i].where, where) == 0 && strstr(p->items[i].message, needle))
            return true;
    }
    return false;
}

static void dump(const swf_asl_problems_t *p)
{
    for (size_t i = 0; i < p->count; i++)
        fprintf(stderr, "  %s: %s\n", p->items[i].where, p->items[i].message);
}

/* Asserts that `text` has a problem at `where` whose message contains `needle`. */
static void expect_problem(const char *text, const char *where, const char *needle)
{
    swf_asl_problems_t p = {0};
    run(text, &p);
    bool found = has(&p, where, needle);
    if (!found)
        dump(&p);
    cr_expect(found, "expected a problem at %s mentioning \"%s\" for %s", where, needle, text);
    swf_asl_problems_free(&p);
}

static void expect_valid(const char *text)
{
    swf_asl_problems_t p = {0};
    size_t n = run(text, &p);
    if (n != 0)
        dump(&p);
    cr_expect_eq(n, 0, "expected no problem for %s", text);
    swf_asl_problems_free(&p);
}

/* A one-state machine around the given state body. */
#define ONE(state) "{\"StartAt\":\"S\",\"States\":{\"S\":" state "}}"

Test(validate, accepts_a_minimal_machine)
{
    expect_valid(ONE("{\"Type\":\"Pass\",\"End\":true}"));
    expect_valid(ONE("{\"Type\":\"Succeed\"}"));
}

Test(validate, reports_every_problem_not_only_the_first)
{
    swf_asl_problems_t p = {0};
    size_t n = run("{\"StartAt\":\"A\",\"Bogus\":1,\"States\":{"
                   "\"A\":{\"Type\":\"Pass\",\"Next\":\"Ghost\"},"
                   "\"B\":{\"Type\":\"Wait\",\"End\":true},"
                   "\"C\":{\"Type\":\"Task\",\"End\":true,\"Retry\":[{\"ErrorEquals\":[]},"
                   "{\"ErrorEquals\":[\"X\"],\"BackoffRate\":0.5}]}}}",
                   &p);
    cr_expect_geq(n, 6);
    cr_expect_eq(n, p.count);
    cr_expect(has(&p, "$.Bogus", "not allowed"));
    cr_expect(has(&p, "$.States.A.Next", "Ghost"));
    cr_expect(has(&p, "$.States.B", "exactly one of Seconds"));
    cr_expect(has(&p, "$.States.C", "needs Resource"));
    cr_expect(has(&p, "$.States.C.Retry[0].ErrorEquals", "must not be empty"));
    cr_expect(has(&p, "$.States.C.Retry[1].BackoffRate", "at least 1.0"));
    cr_expect(has(&p, "$.States.B", "not reachable"));
    swf_asl_problems_free(&p);
}

Test(validate, appends_to_the_list_and_frees_it_for_reuse)
{
    swf_asl_problems_t p = {0};
    swf_asl_problems_add(&p, "$", "first %d", 1);
    cr_expect_eq(run(ONE("{\"Type\":\"Nope\"}"), &p), 1, "the count is of this call's problems");
    cr_expect_eq(p.count, 2);
    cr_expect_str_eq(p.items[0].message, "first 1");
    swf_asl_problems_free(&p);
    cr_expect_eq(p.count, 0);
    swf_asl_problems_free(&p);
}

Test(validate, checks_the_top_level)
{
    expect_problem("[]", "$", "must be an object");
    expect_problem("{\"States\":{\"S\":{\"Type\":\"Succeed\"}}}", "$", "needs StartAt");
    expect_problem("{\"StartAt\":\"S\"}", "$", "needs States");
    expect_problem("{\"StartAt\":\"S\",\"States\":{}}", "$.States", "must not be empty");
    expect_problem("{\"StartAt\":\"X\",\"States\":{\"S\":{\"Type\":\"Succeed\"}}}", "$.StartAt",
                   "\"X\"");
    expect_problem("{\"StartAt\":1,\"States\":{\"S\":{\"Type\":\"Succeed\"}}}", "$.StartAt",
                   "must be a string");
    expect_problem("{\"StartAt\":\"S\",\"TimeoutSeconds\":0,\"States\":{\"S\":{\"Type\":"
                   "\"Succeed\"}}}",
                   "$.TimeoutSeconds", "between 1");
    expect_problem("{\"StartAt\":\"S\",\"QueryLanguage\":\"SQL\",\"States\":{\"S\":{\"Type\":"
                   "\"Succeed\"}}}",
                   "$.QueryLanguage", "JSONata");
    expect_problem("{\"StartAt\":\"S\",\"Extra\":true,\"States\":{\"S\":{\"Type\":\"Succeed\"}}}",
                   "$.Extra", "not allowed");
    expect_valid("{\"Comment\":\"c\",\"Version\":\"1.0\",\"TimeoutSeconds\":5,\"QueryLanguage\":"
                 "\"JSONPath\",\"StartAt\":\"S\",\"States\":{\"S\":{\"Type\":\"Succeed\"}}}");
}

Test(validate, checks_state_types_and_allowed_fields)
{
    expect_problem(ONE("{\"End\":true}"), "$.States.S", "needs Type");
    expect_problem(ONE("{\"Type\":\"Sleep\",\"End\":true}"), "$.States.S.Type", "one of");
    expect_problem(ONE("{\"Type\":\"Pass\",\"Bogus\":1,\"End\":true}"), "$.States.S.Bogus",
                   "not allowed in a Pass state");
    expect_problem(ONE("{\"Type\":\"Pass\",\"Resource\":\"x\",\"End\":true}"),
                   "$.States.S.Resource", "not allowed in a Pass state");
    expect_problem(ONE("{\"Type\":\"Fail\",\"InputPath\":\"$\"}"), "$.States.S.InputPath",
                   "not allowed in a Fail state");
    expect_problem(ONE("{\"Type\":\"Pass\",\"Catch\":[],\"End\":true}"), "$.States.S.Catch",
                   "not allowed");
    expect_problem(ONE("[]"), "$.States.S", "must be an object");
}

Test(validate, requires_exactly_one_of_next_and_end)
{
    const char *both = "{\"StartAt\":\"A\",\"States\":{\"A\":{\"Type\":\"Pass\",\"Next\":\"B\","
                       "\"End\":true},\"B\":{\"Type\":\"Succeed\"}}}";
    expect_problem(both, "$.States.A", "not both");
    expect_problem(ONE("{\"Type\":\"Wait\",\"Seconds\":1}"), "$.States.S", "needs Next");
    expect_problem(ONE("{\"Type\":\"Pass\",\"End\":false}"), "$.States.S", "needs Next");
    expect_problem(ONE("{\"Type\":\"Pass\",\"End\":\"yes\"}"), "$.States.S.End",
                   "must be a boolean");
    expect_problem(ONE("{\"Type\":\"Succeed\",\"End\":true}"), "$.States.S.End", "not allowed");
    expect_problem(ONE("{\"Type\":\"Fail\",\"Next\":\"S\"}"), "$.States.S.Next", "not allowed");
    expect_problem(ONE("{\"Type\":\"Choice\",\"Choices\":[{\"Variable\":\"$.a\",\"IsNull\":true,"
                       "\"Next\":\"S\"}],\"End\":true}"),
                   "$.States.S.End", "not allowed in a Choice state");
}

Test(validate, keeps_transitions_inside_their_scope)
{
    expect_problem("{\"StartAt\":\"P\",\"States\":{\"P\":{\"Type\":\"Parallel\",\"Branches\":[{"
                   "\"StartAt\":\"B\",\"States\":{\"B\":{\"Type\":\"Pass\",\"Next\":\"After\"}}}],"
                   "\"Next\":\"After\"},\"After\":{\"Type\":\"Succeed\"}}}",
                   "$.States.P.Branches[0].States.B.Next", "\"After\"");
    expect_problem("{\"StartAt\":\"A\",\"States\":{\"A\":{\"Type\":\"Pass\",\"Next\":\"B\"}}}",
                   "$.States.A.Next", "\"B\"");
}

Test(validate, requires_unique_state_names_across_scopes)
{
    expect_problem("{\"StartAt\":\"A\",\"States\":{\"A\":{\"Type\":\"Map\",\"ItemProcessor\":{"
                   "\"StartAt\":\"A\",\"States\":{\"A\":{\"Type\":\"Succeed\"}}},\"End\":true}}}",
                   "$.States.A.ItemProcessor.States.A", "already used");
}

Test(validate, requires_every_state_reachable)
{
    expect_problem("{\"StartAt\":\"A\",\"States\":{\"A\":{\"Type\":\"Succeed\"},\"B\":{\"Type\":"
                   "\"Succeed\"}}}",
                   "$.States.B", "not reachable");
    /* Reached only through a Choice rule, a Default and a catcher. */
    expect_valid("{\"StartAt\":\"C\",\"States\":{\"C\":{\"Type\":\"Choice\",\"Choices\":[{"
                 "\"Variable\":\"$.a\",\"IsPresent\":true,\"Next\":\"T\"}],\"Default\":\"D\"},"
                 "\"D\":{\"Type\":\"Succeed\"},\"T\":{\"Type\":\"Task\",\"Resource\":\"r\","
                 "\"Catch\":[{\"ErrorEquals\":[\"States.ALL\"],\"Next\":\"H\"}],\"End\":true},"
                 "\"H\":{\"Type\":\"Succeed\"}}}");
}

Test(validate, bounds_state_names_and_escapes_them_in_paths)
{
    char name[100];
    memset(name, 'n', 81);
    name[81] = '\0';
    char text[1024];
    snprintf(text, sizeof(text), "{\"StartAt\":\"%s\",\"States\":{\"%s\":{\"Type\":\"Succeed\"}}}",
             name, name);
    char where[200];
    snprintf(where, sizeof(where), "$.States.%s", name);
    expect_problem(text, where, "at most 80");
    expect_problem("{\"StartAt\":\"a b\",\"States\":{\"a b\":{\"Type\":\"Pass\"}}}",
                   "$.States['a b']", "needs Next");
    /* 80 characters of two bytes each are fine. */
    char wide[200] = "";
    for (int i = 0; i < 80; i++)
        strcat(wide, "\xc3\xa9");
    snprintf(text, sizeof(text), "{\"StartAt\":\"%s\",\"States\":{\"%s\":{\"Type\":\"Succeed\"}}}",
             wide, wide);
    expect_valid(text);
}

Test(validate, counts_states_against_the_limit)
{
    size_t n = SWF_LIMIT_STATES + 1;
    json_object *states = json_object_new_object();
    char name[32], next[32];
    for (size_t i = 0; i < n; i++) {
        snprintf(name, sizeof(name), "s%zu", i);
        snprintf(next, sizeof(next), "s%zu", i + 1);
        json_object *st = json_object_new_object();
        json_object_object_add(st, "Type", json_object_new_string("Pass"));
        if (i + 1 < n)
            json_object_object_add(st, "Next", json_object_new_string(next));
        else
            json_object_object_add(st, "End", json_object_new_boolean(1));
        json_object_object_add(states, name, st);
    }
    json_object *def = json_object_new_object();
    json_object_object_add(def, "StartAt", json_object_new_string("s0"));
    json_object_object_add(def, "States", states);
    swf_asl_problems_t p = {0};
    cr_expect_eq(swf_asl_validate(def, &p), 1);
    cr_expect(p.count == 1 && strstr(p.items[0].message, "more than"));
    swf_asl_problems_free(&p);
    json_object_put(def);
}

Test(validate, checks_choice_rules)
{
#define CHOICE(rule)                                                                               \
    "{\"StartAt\":\"C\",\"States\":{\"C\":{\"Type\":\"Choice\",\"Choices\":[" rule                 \
    "],\"Default\":\"D\"},\"D\":{\"Type\":\"Succeed\"}}}"
    expect_problem("{\"StartAt\":\"C\",\"States\":{\"C\":{\"Type\":\"Choice\",\"Choices\":[]}}}",
                   "$.States.C.Choices", "non-empty");
    expect_problem(CHOICE("{\"Variable\":\"$.a\",\"IsNull\":true}"), "$.States.C.Choices[0]",
                   "needs Next");
    expect_problem(CHOICE("{\"Not\":{\"Variable\":\"$.a\",\"IsNull\":true,\"Next\":\"D\"},"
                          "\"Next\":\"D\"}"),
                   "$.States.C.Choices[0].Not.Next", "must not have Next");
    expect_problem(CHOICE("{\"StringEquals\":\"x\",\"Next\":\"D\"}"), "$.States.C.Choices[0]",
                   "needs Variable");
    expect_problem(CHOICE("{\"Variable\":\"$.a\",\"And\":[{\"Variable\":\"$.a\",\"IsNull\":true}"
                          "],\"Next\":\"D\"}"),
                   "$.States.C.Choices[0].Variable", "not allowed with And");
    expect_problem(CHOICE("{\"Variable\":\"$.a\",\"Next\":\"D\"}"), "$.States.C.Choices[0]",
                   "needs a comparison operator");
    expect_problem(CHOICE("{\"Variable\":\"$.a\",\"IsNull\":true,\"IsString\":true,\"Next\":"
                          "\"D\"}"),
                   "$.States.C.Choices[0]", "exactly one");
    expect_problem(CHOICE("{\"Variable\":\"$.a\",\"StringEquals\":1,\"Next\":\"D\"}"),
                   "$.States.C.Choices[0].StringEquals", "a string");
    expect_problem(CHOICE("{\"Variable\":\"$.a\",\"NumericLessThan\":\"1\",\"Next\":\"D\"}"),
                   "$.States.C.Choices[0].NumericLessThan", "a number");
    expect_problem(CHOICE("{\"Variable\":\"$.a\",\"BooleanEquals\":0,\"Next\":\"D\"}"),
                   "$.States.C.Choices[0].BooleanEquals", "a boolean");
    expect_problem(CHOICE("{\"Variable\":\"$.a\",\"IsPresent\":\"yes\",\"Next\":\"D\"}"),
                   "$.States.C.Choices[0].IsPresent", "a boolean");
    expect_problem(CHOICE("{\"Variable\":\"$.a\",\"TimestampEquals\":\"2020-01-01 00:00:00Z\","
                          "\"Next\":\"D\"}"),
                   "$.States.C.Choices[0].TimestampEquals", "RFC 3339");
    expect_problem(CHOICE("{\"Variable\":\"$.a\",\"StringEqualsPath\":\"a\",\"Next\":\"D\"}"),
                   "$.States.C.Choices[0].StringEqualsPath", "beginning with \"$\"");
    expect_problem(CHOICE("{\"Variable\":\"a\",\"IsNull\":true,\"Next\":\"D\"}"),
                   "$.States.C.Choices[0].Variable", "beginning with \"$\"");
    expect_problem(CHOICE("{\"Or\":[],\"Next\":\"D\"}"), "$.States.C.Choices[0].Or", "non-empty");
    expect_problem(CHOICE("{\"Not\":[],\"Next\":\"D\"}"), "$.States.C.Choices[0].Not",
                   "must be an object");
    expect_problem(CHOICE("{\"Variable\":\"$.a\",\"BooleanLessThan\":true,\"Next\":\"D\"}"),
                   "$.States.C.Choices[0].BooleanLessThan", "not allowed");
    expect_problem(CHOICE("{\"Variable\":\"$.a\",\"IsNull\":true,\"Next\":\"Ghost\"}"),
                   "$.States.C.Choices[0].Next", "\"Ghost\"");
    expect_valid(CHOICE("{\"And\":[{\"Variable\":\"$.a\",\"StringMatches\":\"x*\"},{\"Not\":{"
                        "\"Variable\":\"$$.Execution.Id\",\"TimestampLessThanEqualsPath\":"
                        "\"$.t\"}},{\"Variable\":\"$.n\",\"NumericGreaterThanEquals\":1.5}],"
                        "\"Next\":\"D\",\"Comment\":\"c\"}"));
#undef CHOICE
}

Test(validate, checks_wait_durations)
{
    expect_problem(ONE("{\"Type\":\"Wait\",\"End\":true}"), "$.States.S", "exactly one");
    expect_problem(ONE("{\"Type\":\"Wait\",\"Seconds\":1,\"SecondsPath\":\"$.s\",\"End\":true}"),
                   "$.States.S", "exactly one");
    expect_problem(ONE("{\"Type\":\"Wait\",\"Seconds\":-1,\"End\":true}"), "$.States.S.Seconds",
                   "between 0");
    expect_problem(ONE("{\"Type\":\"Wait\",\"Seconds\":1.5,\"End\":true}"), "$.States.S.Seconds",
                   "integer");
    expect_problem(ONE("{\"Type\":\"Wait\",\"Timestamp\":\"2016-03-14\",\"End\":true}"),
                   "$.States.S.Timestamp", "RFC 3339");
    expect_problem(ONE("{\"Type\":\"Wait\",\"TimestampPath\":\"t\",\"End\":true}"),
                   "$.States.S.TimestampPath", "beginning with \"$\"");
    expect_valid(ONE("{\"Type\":\"Wait\",\"Timestamp\":\"2016-03-14T01:59:00.5+02:00\","
                     "\"End\":true}"));
    expect_valid(ONE("{\"Type\":\"Wait\",\"Seconds\":0,\"End\":true}"));
}

Test(validate, checks_fail_error_and_cause)
{
    expect_problem(ONE("{\"Type\":\"Fail\",\"Error\":\"E\",\"ErrorPath\":\"$.e\"}"), "$.States.S",
                   "Error and ErrorPath are mutually exclusive");
    expect_problem(ONE("{\"Type\":\"Fail\",\"Cause\":\"c\",\"CausePath\":\"$.c\"}"), "$.States.S",
                   "Cause and CausePath are mutually exclusive");
    expect_problem(ONE("{\"Type\":\"Fail\",\"ErrorPath\":\"e\"}"), "$.States.S.ErrorPath",
                   "intrinsic function call");
    expect_problem(ONE("{\"Type\":\"Fail\",\"Cause\":3}"), "$.States.S.Cause", "a string");
    expect_valid(ONE("{\"Type\":\"Fail\",\"ErrorPath\":\"$.e\",\"CausePath\":\"States.Format("
                     "'x {}', $.c)\"}"));
}

Test(validate, checks_task_fields)
{
    expect_problem(ONE("{\"Type\":\"Task\",\"End\":true}"), "$.States.S", "needs Resource");
    expect_problem(ONE("{\"Type\":\"Task\",\"Resource\":7,\"End\":true}"), "$.States.S.Resource",
                   "a string");
    expect_problem(ONE("{\"Type\":\"Task\",\"Resource\":\"r\",\"TimeoutSeconds\":5,"
                       "\"TimeoutSecondsPath\":\"$.t\",\"End\":true}"),
                   "$.States.S", "mutually exclusive");
    expect_problem(ONE("{\"Type\":\"Task\",\"Resource\":\"r\",\"HeartbeatSeconds\":5,"
                       "\"HeartbeatSecondsPath\":\"$.t\",\"End\":true}"),
                   "$.States.S", "mutually exclusive");
    expect_problem(ONE("{\"Type\":\"Task\",\"Resource\":\"r\",\"TimeoutSeconds\":5,"
                       "\"HeartbeatSeconds\":5,\"End\":true}"),
                   "$.States.S.HeartbeatSeconds", "smaller than TimeoutSeconds");
    expect_problem(ONE("{\"Type\":\"Task\",\"Resource\":\"r\",\"TimeoutSeconds\":0,\"End\":true}"),
                   "$.States.S.TimeoutSeconds", "between 1");
    expect_problem(ONE("{\"Type\":\"Task\",\"Resource\":\"r\",\"TimeoutSecondsPath\":\"$..t\","
                       "\"End\":true}"),
                   "$.States.S.TimeoutSecondsPath", "deep scan");
    expect_valid(ONE("{\"Type\":\"Task\",\"Resource\":\"r\",\"TimeoutSeconds\":5,"
                     "\"HeartbeatSeconds\":4,\"Credentials\":{\"RoleArn\":\"a\"},\"End\":true}"));
    expect_problem(ONE("{\"Type\":\"Task\",\"Resource\":\"r\",\"Credentials\":{},\"End\":true}"),
                   "$.States.S.Credentials", "must name the role");
    expect_problem(ONE("{\"Type\":\"Task\",\"Resource\":\"r\",\"Credentials\":{\"X\":1},"
                       "\"End\":true}"),
                   "$.States.S.Credentials", "not allowed in Credentials");
}

Test(validate, refuses_what_swf_cannot_serve_with_the_reason)
{
    expect_problem(ONE("{\"Type\":\"Task\",\"Resource\":\"arn:aws:states:::states:"
                       "startExecution.sync:3\",\"End\":true}"),
                   "$.States.S.Resource", "integration pattern");
    expect_problem(ONE("{\"Type\":\"Task\",\"Resource\":\"arn:aws:states:::sqs:sendMessage.x\","
                       "\"End\":true}"),
                   "$.States.S.Resource", "integration pattern");
    expect_problem(ONE("{\"Type\":\"Map\",\"ItemReader\":{\"Resource\":\"arn:aws:states:::s3:"
                       "getObject\",\"ReaderConfig\":{\"InputType\":\"MANIFEST\",\"CSVDelimiter\":"
                       "\"PIPE\"}},\"ItemProcessor\":{"
                       "\"StartAt\":\"P\",\"States\":{\"P\":{\"Type\":\"Pass\",\"End\":true}}},"
                       "\"End\":true}"),
                   "$.States.S.ItemReader.ReaderConfig", "MANIFEST takes no CSV settings");
    expect_problem(ONE("{\"Type\":\"Map\",\"ItemReader\":{\"Resource\":\"arn:aws:states:::s3:"
                       "getObject\",\"ReaderConfig\":{\"InputType\":\"CSV\",\"CSVHeaderLocation\":"
                       "\"GIVEN\"}},\"ItemProcessor\":{\"StartAt\":\"P\",\"States\":{\"P\":{"
                       "\"Type\":\"Pass\",\"End\":true}}},\"End\":true}"),
                   "$.States.S.ItemReader.ReaderConfig", "needs CSVHeaders");
    expect_problem(ONE("{\"Type\":\"Map\",\"ResultWriter\":{\"Resource\":\"arn:aws:states:::s3:"
                       "putObject\"},\"ItemProcessor\":{\"StartAt\":\"P\",\"States\":{\"P\":{"
                       "\"Type\":\"Pass\",\"End\":true}}},\"End\":true}"),
                   "$.States.S.ResultWriter", "needs Parameters");
    expect_problem(ONE("{\"Type\":\"Map\",\"ResultWriter\":{\"WriterConfig\":{\"Transformation\":"
                       "\"SQUASH\"}},\"ItemProcessor\":{\"StartAt\":\"P\",\"States\":{\"P\":{"
                       "\"Type\":\"Pass\",\"End\":true}}},\"End\":true}"),
                   "$.States.S.ResultWriter", "NONE, COMPACT or FLATTEN");
    expect_problem(ONE("{\"Type\":\"Map\",\"ItemReader\":{\"Resource\":\"arn:aws:states:::s3:"
                       "getObject\",\"ReaderConfig\":{\"InputType\":\"JSON\",\"MaxItemsPath\":"
                       "\"$.a[\"}},\"ItemProcessor\":{\"StartAt\":\"P\",\"States\":{\"P\":{"
                       "\"Type\":\"Pass\",\"End\":true}}},\"End\":true}"),
                   "$.States.S.ItemReader.ReaderConfig.MaxItemsPath", "");
}

Test(validate, checks_retriers)
{
#define RETRY(r) ONE("{\"Type\":\"Task\",\"Resource\":\"r\",\"Retry\":" r ",\"End\":true}")
    expect_problem(RETRY("{}"), "$.States.S.Retry", "must be an array");
    expect_problem(RETRY("[{}]"), "$.States.S.Retry[0]", "needs ErrorEquals");
    expect_problem(RETRY("[{\"ErrorEquals\":[\"States.ALL\",\"X\"]}]"),
                   "$.States.S.Retry[0].ErrorEquals", "\"States.ALL\" must be the only error name");
    expect_problem(RETRY("[{\"ErrorEquals\":[\"States.ALL\"]},{\"ErrorEquals\":[\"X\"]}]"),
                   "$.States.S.Retry[0].ErrorEquals", "only in the last retrier");
    expect_problem(RETRY("[{\"ErrorEquals\":[1]}]"), "$.States.S.Retry[0].ErrorEquals[0]",
                   "a string");
    expect_problem(RETRY("[{\"ErrorEquals\":[\"X\"],\"IntervalSeconds\":0}]"),
                   "$.States.S.Retry[0].IntervalSeconds", "between 1");
    expect_problem(RETRY("[{\"ErrorEquals\":[\"X\"],\"MaxAttempts\":100000000}]"),
                   "$.States.S.Retry[0].MaxAttempts", "between 0 and 99999999");
    expect_problem(RETRY("[{\"ErrorEquals\":[\"X\"],\"BackoffRate\":0.9}]"),
                   "$.States.S.Retry[0].BackoffRate", "at least 1.0");
    expect_problem(RETRY("[{\"ErrorEquals\":[\"X\"],\"MaxDelaySeconds\":0}]"),
                   "$.States.S.Retry[0].MaxDelaySeconds", "between 1");
    expect_problem(RETRY("[{\"ErrorEquals\":[\"X\"],\"JitterStrategy\":\"HALF\"}]"),
                   "$.States.S.Retry[0].JitterStrategy", "FULL");
    expect_problem(RETRY("[{\"ErrorEquals\":[\"X\"],\"Next\":\"S\"}]"), "$.States.S.Retry[0].Next",
                   "not allowed in a retrier");
    expect_valid(RETRY("[{\"ErrorEquals\":[\"X\",\"States.TaskFailed\"],\"IntervalSeconds\":1,"
                       "\"MaxAttempts\":0,\"BackoffRate\":1,\"MaxDelaySeconds\":9,"
                       "\"JitterStrategy\":\"FULL\"},{\"ErrorEquals\":[\"States.ALL\"]}]"));
#undef RETRY
}

Test(validate, checks_catchers)
{
#define CATCH(k)                                                                                   \
    "{\"StartAt\":\"S\",\"States\":{\"S\":{\"Type\":\"Task\",\"Resource\":\"r\",\"Catch\":" k      \
    ",\"End\":true},\"H\":{\"Type\":\"Succeed\"}}}"
    expect_problem(CATCH("[{\"ErrorEquals\":[\"X\"]}]"), "$.States.S.Catch[0]", "needs Next");
    expect_problem(CATCH("[{\"ErrorEquals\":[\"X\"],\"Next\":\"Ghost\"}]"),
                   "$.States.S.Catch[0].Next", "\"Ghost\"");
    expect_problem(CATCH("[{\"ErrorEquals\":[\"States.ALL\"],\"Next\":\"H\"},{\"ErrorEquals\":"
                         "[\"X\"],\"Next\":\"H\"}]"),
                   "$.States.S.Catch[0].ErrorEquals", "only in the last catcher");
    expect_problem(CATCH("[{\"ErrorEquals\":[\"X\"],\"Next\":\"H\",\"ResultPath\":\"$.a[*]\"}]"),
                   "$.States.S.Catch[0].ResultPath", "wildcard");
    expect_problem(CATCH("[{\"ErrorEquals\":[\"X\"],\"Next\":\"H\",\"Retry\":[]}]"),
                   "$.States.S.Catch[0].Retry", "not allowed in a catcher");
    expect_valid(CATCH("[{\"ErrorEquals\":[\"X\"],\"Next\":\"H\",\"ResultPath\":null}]"));
#undef CATCH
}

Test(validate, checks_paths)
{
    expect_problem(ONE("{\"Type\":\"Pass\",\"InputPath\":\"a\",\"End\":true}"),
                   "$.States.S.InputPath", "beginning with \"$\"");
    expect_problem(ONE("{\"Type\":\"Pass\",\"OutputPath\":5,\"End\":true}"),
                   "$.States.S.OutputPath", "a string");
    expect_problem(ONE("{\"Type\":\"Pass\",\"ResultPath\":\"$.a[?(@.b)]\",\"End\":true}"),
                   "$.States.S.ResultPath", "filter");
    expect_problem(ONE("{\"Type\":\"Pass\",\"ResultPath\":\"$$.a\",\"End\":true}"),
                   "$.States.S.ResultPath", "state's input");
    expect_problem(ONE("{\"Type\":\"Map\",\"ItemsPath\":\"$.a[*]\",\"ItemProcessor\":{\"StartAt\":"
                       "\"I\",\"States\":{\"I\":{\"Type\":\"Succeed\"}}},\"End\":true}"),
                   "$.States.S.ItemsPath", "wildcard");
    expect_valid(ONE("{\"Type\":\"Pass\",\"InputPath\":null,\"OutputPath\":\"$.a[*]\","
                     "\"ResultPath\":\"$.r\",\"End\":true}"));
}

Test(validate, checks_payload_templates_and_treats_other_keys_as_data)
{
    expect_problem(ONE("{\"Type\":\"Pass\",\"Parameters\":{\"x.$\":\"not a path\"},"
                       "\"End\":true}"),
                   "$.States.S.Parameters['x.$']", "path");
    expect_problem(ONE("{\"Type\":\"Pass\",\"Parameters\":{\"a\":[{\"x.$\":1}]},\"End\":true}"),
                   "$.States.S.Parameters.a[0]['x.$']", "a string");
    expect_problem(ONE("{\"Type\":\"Pass\",\"Parameters\":{\"x.$\":\"States.Format('\\\\q')\"},"
                       "\"End\":true}"),
                   "$.States.S.Parameters['x.$']", "escape");
    expect_problem(ONE("{\"Type\":\"Task\",\"Resource\":\"r\",\"ResultSelector\":{\"x.$\":\"y\"},"
                       "\"End\":true}"),
                   "$.States.S.ResultSelector['x.$']", "path");
    expect_problem(ONE("{\"Type\":\"Pass\",\"Assign\":{\"v.$\":\"y\"},\"End\":true}"),
                   "$.States.S.Assign['v.$']", "path");
    expect_valid(ONE("{\"Type\":\"Pass\",\"Parameters\":{\"Next\":\"nowhere\",\"End\":1,"
                     "\"x.$\":\"$.a\",\"y.$\":\"States.Array($.a, 1)\",\"z\":{\"w.$\":\"$$.Map\"}},"
                     "\"Result\":{\"k.$\":\"not checked\"},\"End\":true}"));
}

Test(validate, checks_parallel_branches)
{
    expect_problem(ONE("{\"Type\":\"Parallel\",\"Branches\":[],\"End\":true}"),
                   "$.States.S.Branches", "non-empty");
    expect_problem(ONE("{\"Type\":\"Parallel\",\"End\":true}"), "$.States.S", "needs Branches");
    expect_problem(ONE("{\"Type\":\"Parallel\",\"Branches\":[{\"States\":{\"B\":{\"Type\":"
                       "\"Succeed\"}},\"Version\":\"1\"}],\"End\":true}"),
                   "$.States.S.Branches[0]", "needs StartAt");
    expect_problem(ONE("{\"Type\":\"Parallel\",\"Branches\":[{\"StartAt\":\"B\",\"States\":{\"B\":"
                       "{\"Type\":\"Succeed\"}},\"Version\":\"1\"}],\"End\":true}"),
                   "$.States.S.Branches[0].Version", "not allowed in a branch");
}

Test(validate, checks_map_fields)
{
#define PROC "{\"StartAt\":\"I\",\"States\":{\"I\":{\"Type\":\"Succeed\"}}}"
    expect_problem(ONE("{\"Type\":\"Map\",\"End\":true}"), "$.States.S", "needs ItemProcessor");
    expect_problem(ONE("{\"Type\":\"Map\",\"ItemProcessor\":" PROC ",\"Iterator\":{\"StartAt\":"
                       "\"J\",\"States\":{\"J\":{\"Type\":\"Succeed\"}}},\"End\":true}"),
                   "$.States.S", "not both");
    expect_problem(ONE("{\"Type\":\"Map\",\"ItemProcessor\":" PROC ",\"MaxConcurrency\":-1,"
                       "\"End\":true}"),
                   "$.States.S.MaxConcurrency", "between 0");
    expect_problem(ONE("{\"Type\":\"Map\",\"ItemProcessor\":" PROC
                       ",\"ToleratedFailurePercentage\":101,\"End\":true}"),
                   "$.States.S.ToleratedFailurePercentage", "0 to 100");
    expect_problem(ONE("{\"Type\":\"Map\",\"ItemProcessor\":" PROC
                       ",\"ToleratedFailureCount\":-2,\"End\":true}"),
                   "$.States.S.ToleratedFailureCount", "between 0");
    expect_problem(ONE("{\"Type\":\"Map\",\"ItemProcessor\":" PROC ",\"Parameters\":{},"
                       "\"ItemSelector\":{},\"End\":true}"),
                   "$.States.S", "mutually exclusive");
    expect_problem(ONE("{\"Type\":\"Map\",\"ItemProcessor\":{\"ProcessorConfig\":{\"Mode\":"
                       "\"SIDEWAYS\"},\"StartAt\":\"I\",\"States\":{\"I\":{\"Type\":\"Succeed\"}}},"
                       "\"End\":true}"),
                   "$.States.S.ItemProcessor.ProcessorConfig.Mode", "INLINE");
    expect_valid(ONE("{\"Type\":\"Map\",\"ItemProcessor\":{\"ProcessorConfig\":{\"Mode\":"
                     "\"DISTRIBUTED\",\"ExecutionType\":\"EXPRESS\"},\"StartAt\":\"I\",\"States\":"
                     "{\"I\":{\"Type\":\"Succeed\"}}},\"ItemSelector\":{\"v.$\":\"$$.Map.Item."
                     "Value\"},\"MaxConcurrency\":0,\"ToleratedFailurePercentage\":50.5,\"Label\":"
                     "\"L\",\"End\":true}"));
    expect_valid(ONE("{\"Type\":\"Map\",\"Iterator\":" PROC ",\"MaxConcurrencyPath\":\"$.m\","
                     "\"End\":true}"));
#undef PROC
}

Test(validate, separates_jsonata_from_jsonpath_fields)
{
#define ATA(state) "{\"QueryLanguage\":\"JSONata\",\"StartAt\":\"S\",\"States\":{\"S\":" state "}}"
    expect_problem(ATA("{\"Type\":\"Pass\",\"InputPath\":\"$.a\",\"End\":true}"),
                   "$.States.S.InputPath", "not allowed in a JSONata state");
    expect_problem(ATA("{\"Type\":\"Pass\",\"Parameters\":{},\"End\":true}"),
                   "$.States.S.Parameters", "not allowed in a JSONata state");
    expect_problem(ATA("{\"Type\":\"Pass\",\"QueryLanguage\":\"JSONPath\",\"End\":true}"),
                   "$.States.S.QueryLanguage", "cannot use JSONPath");
    expect_problem(ONE("{\"Type\":\"Pass\",\"Output\":1,\"End\":true}"), "$.States.S.Output",
                   "only allowed when QueryLanguage is JSONata");
    expect_problem(ATA("{\"Type\":\"Pass\",\"Output\":\"{% $states.input\",\"End\":true}"),
                   "$.States.S.Output", "must end with");
    expect_problem(ATA("{\"Type\":\"Choice\",\"Choices\":[{\"Variable\":\"$.a\",\"IsNull\":true,"
                       "\"Next\":\"S\"}]}"),
                   "$.States.S.Choices[0]", "needs Condition");
    expect_valid(ATA("{\"Type\":\"Task\",\"Resource\":\"r\",\"Arguments\":{\"a\":\"{% $x %}\"},"
                     "\"TimeoutSeconds\":\"{% $t %}\",\"Output\":\"{% $states.result %}\","
                     "\"Assign\":{\"x\":1},\"End\":true}"));
    expect_valid(ONE("{\"Type\":\"Pass\",\"QueryLanguage\":\"JSONata\",\"Output\":\"{% 1 %}\","
                     "\"End\":true}"));
    expect_valid(ATA("{\"Type\":\"Choice\",\"Choices\":[{\"Condition\":\"{% true %}\",\"Next\":"
                     "\"W\",\"Output\":{}}],\"Default\":\"W\"},\"W\":{\"Type\":\"Wait\","
                     "\"Seconds\":\"{% 1 %}\",\"End\":true}"));
#undef ATA
}

/* An expression that cannot be parsed is a problem of the definition, at
 * its field, wherever JSONata is taken: the state would fail when reached. */
Test(validate, reports_jsonata_syntax_errors_where_they_are)
{
#define ATA(state) "{\"QueryLanguage\":\"JSONata\",\"StartAt\":\"S\",\"States\":{\"S\":" state "}}"
    expect_problem(ATA("{\"Type\":\"Pass\",\"Output\":{\"a\":[\"{% 1 + %}\"]},\"End\":true}"),
                   "$.States.S.Output.a[0]", "invalid JSONata expression");
    expect_problem(ATA("{\"Type\":\"Pass\",\"Assign\":{\"x\":\"{% $match($s, /a**/) %}\"},"
                       "\"End\":true}"),
                   "$.States.S.Assign.x", "nothing to repeat");
    expect_problem(ATA("{\"Type\":\"Choice\",\"Choices\":[{\"Condition\":\"{% $x = %}\","
                       "\"Next\":\"S\"}]}"),
                   "$.States.S.Choices[0].Condition", "invalid JSONata expression");
    expect_problem(ATA("{\"Type\":\"Wait\",\"Seconds\":\"{% $f( %}\",\"End\":true}"),
                   "$.States.S.Seconds", "invalid JSONata expression");
    expect_problem(ATA("{\"Type\":\"Map\",\"Items\":\"{% [1, %}\",\"ItemProcessor\":"
                       "{\"StartAt\":\"P\",\"States\":{\"P\":{\"Type\":\"Pass\",\"End\":true}}},"
                       "\"End\":true}"),
                   "$.States.S.Items", "invalid JSONata expression");
    expect_problem(ATA("{\"Type\":\"Fail\",\"Error\":\"{% 'E' & %}\"}"), "$.States.S.Error",
                   "invalid JSONata expression");
    expect_problem(ATA("{\"Type\":\"Pass\",\"Output\":\"{% %.b %}\",\"End\":true}"),
                   "$.States.S.Output", "parent");
#undef ATA
}

/* ---- the corpus --------------------------------------------------------- */

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    char *buf = calloc(1, 1 << 16);
    size_t n = fread(buf, 1, (1 << 16) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* Every case whose expected verdict is INVALID gets at least one problem
 * (all those in the corpus are static problems of a definition); every other
 * definition gets none. */
Test(validate, gives_every_corpus_definition_its_verdict)
{
    DIR *groups = opendir(CORPUS);
    cr_assert_not_null(groups, "no corpus at %s", CORPUS);
    size_t cases = 0, invalid = 0;
    struct dirent *g;
    while ((g = readdir(groups)) != NULL) {
        if (g->d_name[0] == '.')
            continue;
        char gdir[1024];
        snprintf(gdir, sizeof(gdir), "%s/%s", CORPUS, g->d_name);
        DIR *cs = opendir(gdir);
        if (cs == NULL)
            continue;
        struct dirent *e;
        while ((e = readdir(cs)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            char file[2048];
            snprintf(file, sizeof(file), "%s/%s/expected.json", gdir, e->d_name);
            char *expected = read_text(file);
            if (expected == NULL)
                continue;
            bool want_invalid = strstr(expected, "\"INVALID\"") != NULL;
            free(expected);
            snprintf(file, sizeof(file), "%s/%s/definition.json", gdir, e->d_name);
            json_object *def = NULL;
            swf_error_t *err = swf_json_read_file(file, SWF_LIMIT_DEFINITION_BYTES, &def);
            cr_expect_null(err, "%s does not parse", file);
            swf_error_free(err);
            swf_asl_problems_t p = {0};
            size_t n = swf_asl_validate(def, &p);
            if (want_invalid)
                cr_expect_gt(n, 0, "%s/%s is INVALID but validates", g->d_name, e->d_name);
            else if (n != 0)
                cr_expect_eq(n, 0, "%s/%s: %s: %s", g->d_name, e->d_name, p.items[0].where,
                             p.items[0].message);
            cases++;
            invalid += want_invalid;
            swf_asl_problems_free(&p);
            json_object_put(def);
        }
        closedir(cs);
    }
    closedir(groups);
    cr_expect_gt(cases, 100, "the corpus walk found only %zu cases", cases);
    cr_expect_gt(invalid, 30);
}

/* ---- altered definitions (tests/fuzz.h) ---- */

static json_object **definitions_of_histories(size_t *n)
{
    char dir[1024];
    snprintf(dir, sizeof(dir), "%s/tests/histories", SWF_SOURCE_DIR);
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    json_object **defs = NULL;
    size_t cap = 0;
    *n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strstr(e->d_name, ".jsonl") == NULL)
            continue;
        char path[2048];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        swf_event_list_t events = {0};
        json_object *def;
        if (swf_event_list_read_file(path, &events) == NULL && events.count > 0 &&
            swf_json_get(events.items[0].attrs, "definition", &def)) {
            if (*n == cap) {
                cap = cap ? cap * 2 : 64;
                defs = realloc(defs, cap * sizeof(*defs));
                cr_assert_not_null(defs);
            }
            defs[(*n)++] = swf_json_copy(def);
        }
        swf_event_list_free(&events);
    }
    closedir(d);
    return defs;
}

/* The first decisions of a definition the validator took: an execution
 * started with it and asked to decide, once. */
static void first_decisions(json_object *def)
{
    swf_asl_exec_t *ex = swf_asl_exec_new();
    swf_event_list_t events = {0};
    json_object *attrs = json_object_new_object();
    swf_json_add(attrs, "definition", swf_json_ref(def));
    swf_json_add(attrs, "input", json_object_new_object());
    swf_event_list_push(&events, SWF_EVENT_WORKFLOW_EXECUTION_STARTED, 1763719200000LL, attrs);
    swf_event_list_push(&events, SWF_EVENT_DECISION_TASK_SCHEDULED, 1763719200000LL,
                        json_object_new_object());
    swf_event_list_push(&events, SWF_EVENT_DECISION_TASK_STARTED, 1763719200000LL,
                        json_object_new_object());
    swf_error_t *err = NULL;
    for (size_t i = 0; i < events.count && err == NULL; i++)
        err = swf_asl_exec_apply(ex, &events.items[i]);
    swf_asl_decisions_t out = {0};
    if (err == NULL)
        err = swf_asl_exec_decide(ex, &out);
    if (err != NULL)
        cr_assert(swf_error_message(err)[0] != '\0', "%s", swf_json_str(def));
    else
        cr_assert(out.count > 0, "no decision for %s", swf_json_str(def));
    swf_error_free(err);
    swf_asl_decisions_free(&out);
    swf_event_list_free(&events);
    swf_asl_exec_free(ex);
}

/* Definitions with a value anywhere replaced or removed: the validator
 * names each problem with where it is; one it takes starts and decides. */
Test(validate_fuzz, altered_definitions_are_refused_with_a_place_or_run)
{
    size_t nd = 0;
    json_object **defs = definitions_of_histories(&nd);
    cr_assert(nd > 100, "only %zu definitions in tests/histories", nd);
    fuzz_t f = fuzz_start();
    long rounds = fuzz_rounds(4000), refused = 0, valid = 0;
    for (long r = 0; r < rounds; r++) {
        json_object *def = swf_json_copy(defs[fuzz_below(&f, nd)]);
        for (int k = 1 + (int)fuzz_below(&f, 3); k > 0; k--)
            fuzz_alter_json(&f, def, fuzz_below(&f, 2) ? def : defs[fuzz_below(&f, nd)]);
        swf_asl_problems_t p = {0};
        size_t n = swf_asl_validate(def, &p);
        cr_assert_eq(n, p.count);
        for (size_t i = 0; i < p.count; i++)
            cr_assert(p.items[i].where[0] == '$' && p.items[i].message[0] != '\0',
                      "a problem without a place or message: %s", swf_json_str(def));
        if (n > 0) {
            refused++;
        } else {
            valid++;
            first_decisions(def);
        }
        swf_asl_problems_free(&p);
        json_object_put(def);
    }
    cr_log_info("%ld rounds: %ld refused, %ld valid", rounds, refused, valid);
    cr_expect(refused > rounds / 50 && valid > rounds / 50, "%ld refused, %ld valid", refused,
              valid);
    for (size_t i = 0; i < nd; i++)
        json_object_put(defs[i]);
    free(defs);
}
