/*
 * test_run.c - `swf run --local` as a user meets it: the built binary, real
 * files, and every kind of bad input (not JSON, the wrong shape, too large,
 * too deep). Each must end in a clear message and a non-zero exit, never a
 * crash.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "protocol/json.h"

#define SWF SWF_BINARY_DIR "/swf"

typedef struct outcome {
    int status;
    char out[8192];
    char err[8192];
} outcome_t;

static char dir[] = "/tmp/swf-test-run-XXXXXX";

static void setup(void)
{
    cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

static const char *write_file(const char *name, const char *text)
{
    static char paths[8][512];
    static int next;
    char *p = paths[next++ % 8];
    snprintf(p, 512, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    return p;
}

static void slurp(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, size - 1, f) : 0;
    buf[n] = '\0';
    if (f)
        fclose(f);
}

static void run(outcome_t *o, const char *args)
{
    char cmd[2048];
    snprintf(cmd, sizeof(cmd), "%s %s >%s/out 2>%s/err", SWF, args, dir, dir);
    int rc = system(cmd);
    cr_assert(WIFEXITED(rc), "swf did not exit normally: %s", args);
    o->status = WEXITSTATUS(rc);
    char p[600];
    snprintf(p, sizeof(p), "%s/out", dir);
    slurp(p, o->out, sizeof(o->out));
    snprintf(p, sizeof(p), "%s/err", dir);
    slurp(p, o->err, sizeof(o->err));
}

#define PASS_MACHINE "{\"StartAt\":\"P\",\"States\":{\"P\":{\"Type\":\"Pass\",\"End\":true}}}"

TestSuite(cli_run, .init = setup, .fini = teardown);

Test(cli_run, prints_one_json_object_and_exits_zero)
{
    outcome_t o;
    char args[1024];
    snprintf(args, sizeof(args), "run --local %s --input %s", write_file("d.json", PASS_MACHINE),
             write_file("i.json", "{\"x\":[1,2]}"));
    run(&o, args);
    cr_assert_eq(o.status, 0, "stderr: %s", o.err);
    cr_assert_str_eq(o.out, "{\"status\":\"SUCCEEDED\",\"output\":{\"x\":[1,2]}}\n");
}

Test(cli_run, history_prints_swf_events_one_per_line)
{
    outcome_t o;
    char args[1024];
    snprintf(args, sizeof(args), "run --local %s --history", write_file("d.json", PASS_MACHINE));
    run(&o, args);
    cr_assert_eq(o.status, 0, "stderr: %s", o.err);
    cr_assert(strncmp(o.out, "{\"eventId\":1,\"eventType\":\"WorkflowExecutionStarted\"", 50) == 0,
              "%s", o.out);
    cr_assert(strstr(o.out, "\"eventType\":\"WorkflowExecutionCompleted\"") != NULL);
}

Test(cli_run, invalid_definition_is_reported_as_invalid)
{
    outcome_t o;
    char args[1024];
    snprintf(args, sizeof(args), "run --local %s",
             write_file(
                 "d.json",
                 "{\"StartAt\":\"Nowhere\",\"States\":{\"P\":{\"Type\":\"Pass\",\"End\":true}}}"));
    run(&o, args);
    cr_assert_eq(o.status, 1);
    cr_assert(strstr(o.out, "\"status\":\"INVALID\"") != NULL, "%s", o.out);
}

Test(cli_run, definition_that_is_not_json_is_invalid)
{
    outcome_t o;
    char args[1024];
    snprintf(args, sizeof(args), "run --local %s", write_file("d.json", "{\"StartAt\": oops"));
    run(&o, args);
    cr_assert_eq(o.status, 1);
    cr_assert(strstr(o.out, "\"status\":\"INVALID\"") != NULL, "%s", o.out);
    cr_assert(strstr(o.err, "not JSON") != NULL, "%s", o.err);
}

Test(cli_run, definition_of_wrong_shape_is_invalid)
{
    outcome_t o;
    char args[1024];
    snprintf(args, sizeof(args), "run --local %s", write_file("d.json", "[1,2,3]"));
    run(&o, args);
    cr_assert_eq(o.status, 1);
    cr_assert(strstr(o.out, "\"status\":\"INVALID\"") != NULL, "%s", o.out);
}

Test(cli_run, input_that_is_not_json_is_refused)
{
    outcome_t o;
    char args[1024];
    snprintf(args, sizeof(args), "run --local %s --input %s", write_file("d.json", PASS_MACHINE),
             write_file("i.json", "{\"a\":"));
    run(&o, args);
    cr_assert_eq(o.status, 3);
    cr_assert_str_eq(o.out, "");
    cr_assert(strstr(o.err, "input") != NULL && strstr(o.err, "not JSON") != NULL, "%s", o.err);
}

Test(cli_run, missing_file_is_an_operating_error)
{
    outcome_t o;
    run(&o, "run --local /nonexistent/definition.json");
    cr_assert_eq(o.status, 3);
    cr_assert(strstr(o.err, "/nonexistent/definition.json") != NULL, "%s", o.err);
}

Test(cli_run, deeply_nested_input_is_refused_with_a_limit_error)
{
    size_t depth = 100000;
    char *text = malloc(2 * depth + 1);
    memset(text, '[', depth);
    memset(text + depth, ']', depth);
    text[2 * depth] = '\0';
    outcome_t o;
    char args[1024];
    snprintf(args, sizeof(args), "run --local %s --input %s", write_file("d.json", PASS_MACHINE),
             write_file("deep.json", text));
    free(text);
    run(&o, args);
    cr_assert_eq(o.status, 3);
    cr_assert(strstr(o.err, "nested deeper") != NULL, "%s", o.err);
}

Test(cli_run, hundred_megabyte_input_is_refused_with_a_limit_error)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/big.json", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("{\"blob\":\"", f);
    static char chunk[1 << 20];
    memset(chunk, 'x', sizeof(chunk));
    for (int i = 0; i < 100; i++)
        fwrite(chunk, 1, sizeof(chunk), f);
    fputs("\"}", f);
    fclose(f);
    outcome_t o;
    char args[1024];
    snprintf(args, sizeof(args), "run --local %s --input %s", write_file("d.json", PASS_MACHINE),
             path);
    run(&o, args);
    cr_assert_eq(o.status, 3);
    cr_assert(strstr(o.err, "limit") != NULL, "%s", o.err);
}

Test(cli_run, mocks_of_wrong_shape_are_refused)
{
    outcome_t o;
    char args[1024];
    snprintf(args, sizeof(args), "run --local %s --mocks %s", write_file("d.json", PASS_MACHINE),
             write_file("m.json", "[1]"));
    run(&o, args);
    cr_assert_eq(o.status, 3);
    cr_assert(strstr(o.err, "mocks must be a JSON object") != NULL, "%s", o.err);
}

Test(cli_run, broken_mock_response_is_a_clear_error)
{
    outcome_t o;
    char args[1024];
    snprintf(args, sizeof(args), "run --local %s --mocks %s",
             write_file("d.json", "{\"StartAt\":\"T\",\"States\":{\"T\":{\"Type\":\"Task\","
                                  "\"Resource\":\"arn:aws:lambda:x:1:function:f\",\"End\":true}}}"),
             write_file("m.json", "{\"T\":[{\"Bogus\":1}]}"));
    run(&o, args);
    cr_assert_eq(o.status, 3);
    cr_assert(strstr(o.err, "Return, Throw or Echo") != NULL, "%s", o.err);
}

Test(cli_run, usage_error_exits_two)
{
    outcome_t o;
    run(&o, "run");
    cr_assert_eq(o.status, 2);
    cr_assert(strstr(o.err, "usage") != NULL);
}

/* `swf help` names every command, each once with its description in one
 * column; every command it names is one `swf` runs (an unknown name is a
 * usage error, exit 2, whatever its arguments). */
Test(cli_run, help_lists_each_command_with_its_description_in_one_column)
{
    static const char *const names[] = {
        "dev",      "validate", "run",      "db",           "register",     "start",
        "describe", "list",     "history",  "export",       "import",       "admin",
        "replay",   "timeline", "graph",    "task-success", "task-failure", "task-heartbeat",
        "signal",   "cancel",   "terminate"};
    outcome_t o;
    run(&o, "help");
    cr_assert_eq(o.status, 0, "stderr: %s", o.err);
    cr_assert(strncmp(o.out, "usage: swf COMMAND", 18) == 0, "%s", o.out);
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char head[64];
        snprintf(head, sizeof(head), "\n  %s ", names[i]);
        cr_assert(strstr(o.out, head) != NULL, "help does not list %s:\n%s", names[i], o.out);
    }
    size_t described = 0;
    for (char *line = strstr(o.out, "commands:\n") + 10; *line != '\0';) {
        char *end = strchr(line, '\n');
        cr_assert_not_null(end);
        size_t len = (size_t)(end - line);
        cr_assert(len > 2 && line[0] == ' ' && line[1] == ' ' && line[2] != ' ',
                  "not a command line: %.*s", (int)len, line);
        if (len > 32 && line[31] == ' ' && line[30] == ' ' && line[32] != ' ') {
            described++; /* synopsis and description on one line */
        } else {
            char *next = end + 1;
            cr_assert(strncmp(next, "                                ", 32) == 0 && next[32] != ' ',
                      "no description in column 33 after: %.*s", (int)len, line);
            end = strchr(next, '\n');
            cr_assert_not_null(end);
            described++;
        }
        line = end + 1;
    }
    cr_assert_geq(described, sizeof(names) / sizeof(names[0]));

    run(&o, "no-such-command --input x");
    cr_assert_eq(o.status, 2);
    cr_assert(strstr(o.err, "unknown command \"no-such-command\"") != NULL, "%s", o.err);
}

/* A command that needs the database, with SWF_DATABASE_URL unset and no
 * server where libpq looks by default: the error says which variable to
 * set. */
Test(cli_run, a_missing_database_url_is_named)
{
    unsetenv("SWF_DATABASE_URL");
    setenv("PGHOST", dir, 1); /* a folder with no server's socket in it */
    outcome_t o;
    run(&o, "list");
    unsetenv("PGHOST");
    cr_assert_eq(o.status, 3, "%s", o.err);
    cr_assert(strstr(o.err, "swf list: database connection: ") == o.err, "%s", o.err);
    cr_assert(strstr(o.err, "\n  SWF_DATABASE_URL is not set") != NULL, "%s", o.err);
}

/* Mocks map a state to an ARRAY of responses (README, the conformance
 * contract). A mock of another shape was passed over: the Task echoed its
 * input and the run "succeeded" (exit 0), with the user's Throw never
 * thrown. Every such shape is refused before anything runs. */
Test(cli_run, mocks_that_are_not_lists_of_responses_are_refused)
{
    static const char *const bad[] = {
        "{\"T\":{\"Throw\":{\"Error\":\"Boom\"}}}",             /* a response, not a list */
        "{\"T\":[]}",                                           /* no response */
        "{\"T\":[{\"Echo\":false}]}",                           /* Echo is true or absent */
        "{\"T\":[{\"Return\":1,\"Throw\":{\"Error\":\"E\"}}]}", /* two at once */
        "{\"T\":[{\"Throw\":{\"Error\":\"E\",\"Cause\":7}}]}",  /* a Cause is text */
        "{\"T\":[{\"Return\":1}],\"U\":5}",                     /* any state's entry */
    };
    const char *def =
        write_file("d.json", "{\"StartAt\":\"T\",\"States\":{\"T\":{\"Type\":\"Task\","
                             "\"Resource\":\"arn:aws:lambda:x:1:function:f\","
                             "\"End\":true}}}");
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        outcome_t o;
        char args[1024];
        snprintf(args, sizeof(args), "run --local %s --mocks %s", def,
                 write_file("m.json", bad[i]));
        run(&o, args);
        cr_assert_eq(o.status, 3, "%s: exit %d, stdout %s", bad[i], o.status, o.out);
        cr_assert_str_eq(o.out, "", "%s", bad[i]);
        cr_assert(strstr(o.err, "m.json: \"") != NULL, "%s: %s", bad[i], o.err);
    }
    /* The good shapes still run. */
    outcome_t o;
    char args[1024];
    snprintf(args, sizeof(args), "run --local %s --mocks %s", def,
             write_file("m.json", "{\"T\":[{\"Throw\":{\"Error\":\"E\"}},{\"Echo\":true}]}"));
    run(&o, args);
    cr_assert_eq(o.status, 1, "%s", o.err);
    cr_assert(strstr(o.out, "\"error\":\"E\"") != NULL, "%s", o.out);
}

/* "Exit status: 0 succeeded, 1 failed or invalid" holds with --history too
 * (it exited 0 for a failed execution). */
Test(cli_run, history_of_a_failed_execution_exits_one)
{
    outcome_t o;
    char args[1024];
    snprintf(args, sizeof(args), "run --local %s --history",
             write_file("d.json", "{\"StartAt\":\"F\",\"States\":{\"F\":{\"Type\":\"Fail\","
                                  "\"Error\":\"Nope\"}}}"));
    run(&o, args);
    cr_assert_eq(o.status, 1, "%s", o.err);
    cr_assert(strstr(o.out, "\"eventType\":\"WorkflowExecutionFailed\"") != NULL, "%s", o.out);
}

/* Output that cannot be written (a full disk) is a failure, not exit 0 with
 * a cut history. */
Test(cli_run, output_that_cannot_be_written_fails)
{
    char cmd[2048];
    snprintf(cmd, sizeof(cmd), "%s run --local %s --history >/dev/full 2>%s/err", SWF,
             write_file("d.json", PASS_MACHINE), dir);
    int rc = system(cmd);
    cr_assert(WIFEXITED(rc));
    cr_assert_eq(WEXITSTATUS(rc), 3);
    char err[8192], p[600];
    snprintf(p, sizeof(p), "%s/err", dir);
    slurp(p, err, sizeof(err));
    cr_assert(strstr(err, "swf run: writing the output failed") != NULL, "%s", err);
    snprintf(cmd, sizeof(cmd), "%s validate %s >/dev/full 2>/dev/null", SWF,
             write_file("d.json", PASS_MACHINE));
    rc = system(cmd);
    cr_assert(WIFEXITED(rc));
    cr_assert_eq(WEXITSTATUS(rc), 3);
}

/* Runs PASS_MACHINE with --local on input, more arguments after. */
static void run_pass(outcome_t *o, const char *input, const char *more)
{
    char args[1024];
    snprintf(args, sizeof(args), "run --local %s --input %s%s", write_file("d.json", PASS_MACHINE),
             write_file("i.json", input), more);
    run(o, args);
}

/* A 30-digit integer where it enters (the input, a mocked worker's answer,
 * a definition) is refused with the path, never rewritten; the numbers swf
 * keeps go from the input through the history to the output as written. */
Test(cli_run, a_30_digit_integer_is_refused_where_it_enters_and_kept_numbers_come_out_as_written)
{
    outcome_t o;
    char args[1024];
    run_pass(&o, "{\"order\":{\"id\":123456789012345678901234567890}}", "");
    cr_assert_eq(o.status, 3, "stderr: %s", o.err);
    cr_assert_str_eq(o.out, "");
    cr_assert(strstr(o.err, "$.order.id: the number 123456789012345678901234567890 is outside "
                            "the 64-bit integer range") != NULL,
              "%s", o.err);

    const char *task = "{\"StartAt\":\"T\",\"States\":{\"T\":{\"Type\":\"Task\","
                       "\"Resource\":\"arn:aws:states:::activity:a\",\"End\":true}}}";
    snprintf(
        args, sizeof(args), "run --local %s --mocks %s", write_file("t.json", task),
        write_file("m.json", "{\"T\":[{\"Return\":{\"n\":-123456789012345678901234567890}}]}"));
    run(&o, args);
    cr_assert_neq(o.status, 0);
    cr_assert(strstr(o.err, "the number -123456789012345678901234567890") != NULL, "%s", o.err);

    snprintf(args, sizeof(args), "run --local %s",
             write_file("r.json", "{\"StartAt\":\"P\",\"States\":{\"P\":{\"Type\":\"Pass\","
                                  "\"Result\":{\"x\":1e400},\"End\":true}}}"));
    run(&o, args);
    cr_assert_neq(o.status, 0);
    cr_assert(strstr(o.err, "$.States.P.Result.x: the number 1e400") != NULL, "%s", o.err);

    const char *kept = "{\"a\":9223372036854775807,\"b\":-9223372036854775808,\"c\":1e-300,"
                       "\"d\":0.1000000000000000000000000000001,\"e\":1.7976931348623157e308,"
                       "\"f\":-0.0,\"g\":1E+20,\"h\":-0,\"i\":[-0]}";
    run_pass(&o, kept, "");
    cr_assert_eq(o.status, 0, "stderr: %s", o.err);
    char want[1024];
    snprintf(want, sizeof(want), "{\"status\":\"SUCCEEDED\",\"output\":%s}\n", kept);
    cr_assert_str_eq(o.out, want);
    run_pass(&o, kept, " --history");
    cr_assert_eq(o.status, 0, "stderr: %s", o.err);
    char *started = strstr(o.out, "\"input\":");
    cr_assert(started != NULL && strncmp(started + 8, kept, strlen(kept)) == 0, "%s", o.out);
}

/* What a Map's ResultWriter task receives (decider/asl/PORTING.md): the
 * writer's Parameters with Key, MapRunArn, OutputType, Transformation and
 * Results, on the task list s3.putObject, after the reader's task (on
 * s3.getObject); and what the Map then outputs. */
Test(cli_run, a_result_writer_task_gets_the_results_and_the_map_outputs_the_manifest)
{
    const char *def =
        "{\"StartAt\":\"M\",\"States\":{\"M\":{\"Type\":\"Map\",\"Label\":\"Orders\","
        "\"ItemReader\":{\"Resource\":\"arn:aws:states:::s3:getObject\",\"ReaderConfig\":{"
        "\"InputType\":\"JSON\"},\"Parameters\":{\"Bucket\":\"in\",\"Key\":\"k\"}},"
        "\"ResultWriter\":{\"Resource\":\"arn:aws:states:::s3:putObject\",\"Parameters\":{"
        "\"Bucket\":\"out\",\"Prefix.$\":\"$.prefix\"},\"WriterConfig\":{\"OutputType\":\"JSONL\","
        "\"Transformation\":\"FLATTEN\"}},\"ItemProcessor\":{\"StartAt\":\"P\",\"States\":{\"P\":{"
        "\"Type\":\"Pass\",\"End\":true}}},\"End\":true}}}";
    outcome_t o;
    char args[1024];
    snprintf(args, sizeof(args), "run --local %s --input %s --mocks %s --history",
             write_file("d.json", def), write_file("i.json", "{\"prefix\":\"runs\"}"),
             write_file("m.json", "{\"M\":[{\"Return\":\"[[1,2],[3]]\"},{\"Return\":{}}]}"));
    run(&o, args);
    cr_assert_eq(o.status, 0, "stderr: %s", o.err);
    json_object *writer = NULL, *result = NULL;
    int scheduled = 0;
    for (char *line = strtok(o.out, "\n"); line != NULL; line = strtok(NULL, "\n")) {
        json_object *ev = json_tokener_parse(line), *attrs;
        const char *type = swf_json_get_string(ev, "eventType");
        if (strcmp(type, "ActivityTaskScheduled") == 0 &&
            swf_json_get(ev, "activityTaskScheduledEventAttributes", &attrs)) {
            json_object *at = NULL;
            swf_json_get(attrs, "activityType", &at);
            cr_expect_str_eq(swf_json_get_string(at, "name"),
                             scheduled++ == 0 ? "s3.getObject" : "s3.putObject");
            json_object_put(writer);
            json_object *in = NULL;
            swf_json_get(attrs, "input", &in);
            writer = json_object_get(in);
        } else if (strcmp(type, "WorkflowExecutionCompleted") == 0 &&
                   swf_json_get(ev, "workflowExecutionCompletedEventAttributes", &attrs)) {
            json_object *r = NULL;
            swf_json_get(attrs, "result", &r);
            result = json_object_get(r);
        }
        json_object_put(ev);
    }
    cr_assert_eq(scheduled, 2);
    const char *key = swf_json_get_string(writer, "Key");
    cr_assert(key != NULL && strncmp(key, "runs/local-", 11) == 0 &&
                  strcmp(key + strlen(key) - 14, "/manifest.json") == 0,
              "%s", swf_json_str(writer));
    char want[1024];
    snprintf(want, sizeof(want),
             "{\"Bucket\":\"out\",\"Prefix\":\"runs\",\"Key\":\"%s\",\"MapRunArn\":"
             "\"arn:aws:states:local:000000000000:mapRun:StateMachine/Orders:%.*s\","
             "\"OutputType\":\"JSONL\",\"Transformation\":\"FLATTEN\",\"Results\":[1,2,3]}",
             key, (int)(strlen(key) - 5 - 14), key + 5);
    json_object *w = json_tokener_parse(want);
    cr_expect(json_object_equal(writer, w), "the writer got %s, not %s", swf_json_str(writer),
              want);
    snprintf(want, sizeof(want),
             "{\"MapRunArn\":\"%s\",\"ResultWriterDetails\":{\"Bucket\":\"out\",\"Key\":\"%s\"}}",
             swf_json_get_string(writer, "MapRunArn"), key);
    json_object_put(w);
    w = json_tokener_parse(want);
    cr_expect(json_object_equal(result, w), "the Map output %s", swf_json_str(result));
    json_object_put(w);
    json_object_put(writer);
    json_object_put(result);
}
