/*
 * test_db.c - proves cli/db.c: the history commands in-process against a
 * throwaway PostgreSQL, including the export/import round trip.
 */
#include "../history/test_pg_fixture.h"

#include <fcntl.h>

#include "cli/cli.h"
#include "protocol/json.h"
#include "tests/pg_state.h"

#define T0 1763719200000LL

static char output[1 << 20], errors[1 << 16];

/* Reads what fd holds into buf (size bytes at most, NUL-terminated). */
static void read_back(int fd, char *buf, size_t size)
{
    lseek(fd, 0, SEEK_SET);
    ssize_t n = read(fd, buf, size - 1);
    buf[n > 0 ? n : 0] = '\0';
    close(fd);
}

/* Runs `swf ARGS...` with stdout captured into `output` and stderr into
 * `errors`; returns the exit status. */
static int swf(const char *db, const char *first, ...)
{
    setenv("SWF_DATABASE_URL", db, 1);
    char *argv[16] = {"swf", (char *)first};
    int argc = 2;
    va_list ap;
    va_start(ap, first);
    const char *a;
    while ((a = va_arg(ap, const char *)) != NULL && argc < 15)
        argv[argc++] = (char *)a;
    va_end(ap);
    argv[argc] = NULL;
    fflush(stdout);
    fflush(stderr);
    char out_path[] = "/tmp/swf-cli-out-XXXXXX", err_path[] = "/tmp/swf-cli-err-XXXXXX";
    int out_fd = mkstemp(out_path), err_fd = mkstemp(err_path);
    cr_assert(out_fd >= 0 && err_fd >= 0);
    unlink(out_path);
    unlink(err_path);
    int saved_out = dup(1), saved_err = dup(2);
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    int code = swf_cli_main(argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, 1);
    dup2(saved_err, 2);
    close(saved_out);
    close(saved_err);
    read_back(out_fd, output, sizeof(output));
    read_back(err_fd, errors, sizeof(errors));
    return code;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return strdup(buf);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

static void trim(char *s)
{
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' '))
        s[--n] = '\0';
}

/* Appends a decision task that closes execution id (started, events 1-2)
 * with `completed` as its completion's attributes, events step ms apart. */
static void close_execution(swf_history_store_t *s, const char *id, const char *completed, int step)
{
    const char *attrs[] = {"{\"scheduledEventId\":2,\"identity\":\"d1\"}",
                           "{\"scheduledEventId\":2,\"startedEventId\":3}", completed};
    swf_event_type_t types[] = {SWF_EVENT_DECISION_TASK_STARTED, SWF_EVENT_DECISION_TASK_COMPLETED,
                                SWF_EVENT_WORKFLOW_EXECUTION_COMPLETED};
    for (int i = 0; i < 3; i++) {
        swf_event_t ev = {0, types[i], T0 + step * i + 1, json_tokener_parse(attrs[i])};
        swf_error_t *err = swf_history_append(s, id, 3 + i, &ev, 1);
        cr_assert(err == NULL, "%s", swf_error_message(err));
        json_object_put(ev.attrs);
    }
}

static const char definition[] =
    "{\"StartAt\":\"A\",\"States\":{\"A\":{\"Type\":\"Pass\",\"End\":true}}}";

Test(cli_db, export_then_import_reproduces_the_history_exactly)
{
    char db1[512], db2[512];
    snprintf(db1, sizeof(db1), "%s", fixture_db());
    snprintf(db2, sizeof(db2), "%s", fixture_db());
    char def[] = "/tmp/swf-cli-def-XXXXXX";
    close(mkstemp(def));
    write_file(def, definition);
    cr_assert_eq(swf(db1, "db", "migrate", NULL), 0);
    cr_assert_eq(swf(db1, "register", "hello", def, NULL), 0, "%s", output);
    cr_assert_eq(
        swf(db1, "start", "hello", "--input", "{\"b\":[1,2.5,\"\\u00e9\"],\"a\":null}", NULL), 0);
    char id[64];
    snprintf(id, sizeof(id), "%.63s", output);
    trim(id);

    /* A decision task that closes the execution with odd values, at odd
     * times: a history the engine could have written, but not with this
     * definition (it would complete with its input), so it does not replay. */
    swf_history_store_t *s = fixture_store(db1);
    close_execution(s, id,
                    "{\"result\":{\"big\":12345678901234,\"neg\":-0.125,\"s\":\"a/b\\\"c\"},"
                    "\"decisionTaskCompletedEventId\":4}",
                    7);
    swf_event_list_t before = {0};
    cr_assert(swf_history_load(s, id, 0, 0, &before) == NULL);
    swf_history_store_free(s);

    char f1[] = "/tmp/swf-cli-exp1-XXXXXX", f2[] = "/tmp/swf-cli-exp2-XXXXXX";
    close(mkstemp(f1));
    close(mkstemp(f2));
    cr_assert_eq(swf(db1, "export", id, f1, NULL), 0);
    char *one = slurp(f1);
    /* The format is swf_event_to_json's, one event per line, with each
     * event's hash in the chain (history/CHAIN.md). */
    char *expect = calloc(1, 1 << 20);
    swf_event_hash_t hashes[8];
    s = fixture_store(db1);
    cr_assert(swf_history_pg_chain_load(s, id, before.count, hashes) == NULL);
    swf_history_store_free(s);
    for (size_t i = 0; i < before.count; i++) {
        json_object *o = swf_event_to_json(&before.items[i]);
        json_object_object_add(o, "eventHash", json_object_new_string(hashes[i]));
        strcat(expect, swf_json_str(o));
        strcat(expect, "\n");
        json_object_put(o);
    }
    cr_assert_str_eq(one, expect);
    cr_assert_eq(swf(db1, "history", id, "--json", NULL), 0);
    cr_assert_str_eq(output, one);

    /* It does not replay here: import refuses it, naming the problem, and
     * imports it only with --force, since it is closed (nothing acts on a
     * closed execution). */
    cr_assert_eq(swf(db2, "import", f1, NULL), 1, "%s", output);
    cr_assert(strstr(errors, "does not replay here") != NULL, "%s", errors);
    cr_assert(strstr(errors, "  event 5: ") != NULL, "%s", errors);
    cr_assert(strstr(errors, "nothing imported (--force imports a closed history anyway)") != NULL,
              "%s", errors);
    cr_assert_neq(swf(db2, "describe", id, NULL), 0, "imported: %s", output);
    cr_assert_str_eq(fixture_sql(db2, "SELECT count(*) FROM events"), "0");
    cr_assert_eq(swf(db2, "import", f1, "--force", NULL), 0, "%s", errors);
    cr_assert(strstr(errors, "warning: importing anyway (--force, a closed execution)") != NULL,
              "%s", errors);
    cr_assert(strstr(output, id) != NULL);
    cr_assert(strstr(output, "each one's hash as exported") != NULL, "%s", output);
    /* The same events and the same hashes. */
    cr_assert_eq(swf(db2, "export", id, f2, NULL), 0);
    char *two = slurp(f2);
    cr_assert_str_eq(two, one);

    s = fixture_store(db2);
    swf_event_list_t after = {0};
    cr_assert(swf_history_load(s, id, 0, 0, &after) == NULL);
    cr_assert_eq(after.count, before.count);
    for (size_t i = 0; i < after.count; i++) {
        cr_assert_eq(after.items[i].id, before.items[i].id);
        cr_assert_eq(after.items[i].type, before.items[i].type);
        cr_assert_eq(after.items[i].time_ms, before.items[i].time_ms);
        cr_assert(swf_json_equal(after.items[i].attrs, before.items[i].attrs));
    }
    swf_history_execution_t ex;
    cr_assert(swf_history_pg_execution_describe(s, id, &ex) == NULL);
    cr_assert_str_eq(ex.status, "succeeded");
    swf_history_execution_free(&ex);
    swf_history_store_free(s);
    /* A closed execution leaves nothing for swf-history to do: no timer
     * to fire, no task to publish again (its activities ran when it did). */
    cr_assert_str_eq(fixture_sql(db2, "SELECT count(*) FROM timers"), "0");
    cr_assert_str_eq(fixture_sql(db2, "SELECT count(*) FROM outbox"), "0");

    /* Importing it again is refused and changes nothing. */
    cr_assert_eq(swf(db2, "import", f1, "--force", NULL), 1);
    cr_assert_str_eq(fixture_sql(db2, "SELECT count(*) FROM events"), "5");
    swf_event_list_free(&before);
    swf_event_list_free(&after);
    free(one);
    free(two);
    free(expect);
    unlink(f1);
    unlink(f2);
    unlink(def);
}

Test(cli_db, commands_refuse_bad_input_and_write_nothing)
{
    const char *db = fixture_db();
    char def[] = "/tmp/swf-cli-def-XXXXXX", bad[] = "/tmp/swf-cli-bad-XXXXXX";
    close(mkstemp(def));
    close(mkstemp(bad));
    write_file(def, definition);
    write_file(bad, "{\"States\":{}}");
    cr_assert_eq(swf(db, "register", "broken", bad, NULL), 1);
    write_file(bad, "{not json");
    cr_assert_eq(swf(db, "register", "broken", bad, NULL), 1);
    cr_assert_eq(swf(db, "register", "x'; DROP TABLE events; --", def, NULL), 0);
    cr_assert_eq(swf(db, "register", "hello", def, NULL), 0);
    cr_assert_str_eq(output, "registered hello version 1\n");
    cr_assert_eq(swf(db, "register", "hello", def, NULL), 0);
    cr_assert_str_eq(output, "registered hello version 2\n");
    cr_assert_str_eq(fixture_sql(db, "SELECT count(*) FROM state_machines"), "3");

    cr_assert_eq(swf(db, "start", "hello", "--input", "{bad", NULL), 2);
    cr_assert_eq(swf(db, "start", "nope", NULL), 1);
    /* A 10 MB input is over the 1 MiB default limit. */
    FILE *f = fopen(bad, "wb");
    fputc('"', f);
    for (int i = 0; i < 10 * 1024 * 1024; i++)
        fputc('a', f);
    fputc('"', f);
    fclose(f);
    char at[64];
    snprintf(at, sizeof(at), "@%s", bad);
    cr_assert_eq(swf(db, "start", "hello", "--input", at, NULL), 2);
    cr_assert_str_eq(fixture_sql(db, "SELECT count(*) FROM events"), "0");

    cr_assert_eq(swf(db, "start", "hello", "--workflow-id", "w'; --", NULL), 0);
    char first[64];
    snprintf(first, sizeof(first), "%.63s", output);
    cr_assert_eq(swf(db, "start", "hello", "--workflow-id", "w'; --", NULL), 1);
    cr_assert_str_eq(output, first, "the running execution's id is printed");
    cr_assert_str_eq(fixture_sql(db, "SELECT count(*) FROM executions"), "1");

    cr_assert_eq(swf(db, "describe", "nope", NULL), 1);
    cr_assert_eq(swf(db, "history", "nope", NULL), 1);
    cr_assert_eq(swf(db, "export", "nope", NULL), 1);
    cr_assert_eq(swf(db, "list", "--status", "bogus", NULL), 2);
    cr_assert_eq(swf(db, "list", "--limit", "x", NULL), 2);
    write_file(bad, "{\"eventId\":1,\"eventType\":\"Nope\"}\n");
    cr_assert_eq(swf(db, "import", bad, NULL), 1);
    cr_assert_str_eq(fixture_sql(db, "SELECT count(*) FROM events"), "2");
    unlink(def);
    unlink(bad);
}

/* `--version` took atoi's reading: "abc", "-5", "1.5" and a number past
 * INT_MAX all started some version (0 meaning the latest) instead of being
 * refused; a script pinning a version by a variable that came out empty
 * or wrong ran whatever was newest. */
Test(cli_db, start_refuses_a_version_that_is_not_a_number_from_one)
{
    const char *db = fixture_db();
    char def[] = "/tmp/swf-cli-def-XXXXXX";
    close(mkstemp(def));
    write_file(def, definition);
    cr_assert_eq(swf(db, "register", "hello", def, NULL), 0);
    cr_assert_eq(swf(db, "register", "hello", def, NULL), 0);
    unlink(def);
    static const char *const bad[] = {"abc", "",   "-5",         "0",
                                      "1.5", "2x", "4294967297", "99999999999999999999"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cr_assert_eq(swf(db, "start", "hello", "--version", bad[i], NULL), 2, "--version \"%s\"",
                     bad[i]);
        cr_assert_str_eq(output, "");
    }
    cr_assert_str_eq(fixture_sql(db, "SELECT count(*) FROM executions"), "0");
    cr_assert_eq(swf(db, "start", "hello", "--version", "1", NULL), 0);
    char id[64];
    snprintf(id, sizeof(id), "%.63s", output);
    trim(id);
    cr_assert_eq(swf(db, "describe", id, NULL), 0);
    cr_assert(strstr(output, "hello (version 1)") != NULL, "%s", output);
}

Test(cli_db, describe_list_history_and_rebuild)
{
    const char *db = fixture_db();
    char def[] = "/tmp/swf-cli-def-XXXXXX";
    close(mkstemp(def));
    write_file(def, definition);
    cr_assert_eq(swf(db, "register", "hello", def, NULL), 0);
    cr_assert_eq(swf(db, "start", "hello", "--workflow-id", "order-1", NULL), 0);
    char id[64];
    snprintf(id, sizeof(id), "%.63s", output);
    trim(id);
    cr_assert_eq(swf(db, "describe", id, NULL), 0);
    cr_assert(strstr(output, "status         open") != NULL, "%s", output);
    cr_assert_eq(swf(db, "describe", id, "--json", NULL), 0);
    json_object *o = json_tokener_parse(output);
    cr_assert_str_eq(swf_json_get_string(o, "workflowId"), "order-1");
    cr_assert_str_eq(swf_json_get_string(o, "status"), "open");
    json_object_put(o);
    cr_assert_eq(swf(db, "list", "--status", "open", "--state-machine", "hello", NULL), 0);
    cr_assert(strstr(output, id) != NULL);
    cr_assert_eq(swf(db, "list", "--status", "closed", "--json", NULL), 0);
    cr_assert_str_eq(output, "");
    cr_assert_eq(swf(db, "history", id, "--reverse", NULL), 0);
    cr_assert(strstr(output, "DecisionTaskScheduled") < strstr(output, "WorkflowExecutionStarted"));
    cr_assert_eq(swf(db, "admin", "rebuild-projections", NULL), 0);
    cr_assert(strstr(output, "executions (1 rows)") != NULL, "%s", output);
    cr_assert_eq(swf(db, "db", "migrate", NULL), 0);
    cr_assert(strstr(output, "up to date") != NULL, "%s", output);
    unlink(def);
}

/* Writes `events` as an exported history, with the execution id and the
 * input of event `changed` (an ActivityTaskScheduled) replaced. */
static void write_edited(const char *path, const swf_event_list_t *events, const char *id,
                         int64_t changed)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    for (size_t i = 0; i < events->count; i++) {
        swf_event_t ev = events->items[i];
        ev.attrs = swf_json_copy(ev.attrs);
        if (ev.type == SWF_EVENT_WORKFLOW_EXECUTION_STARTED) {
            json_object_object_add(ev.attrs, "executionId", json_object_new_string(id));
            json_object_object_add(ev.attrs, "workflowId", json_object_new_string(id));
        }
        if (ev.id == changed)
            json_object_object_add(ev.attrs, "input", json_object_new_string("changed"));
        json_object *line = swf_event_to_json(&ev);
        fprintf(f, "%s\n", swf_json_str(line));
        json_object_put(line);
        json_object_put(ev.attrs);
    }
    fclose(f);
}

Test(cli_db, admin_check_reports_broken_histories_and_exits_1)
{
    char db[512];
    snprintf(db, sizeof(db), "%s", fixture_db());
    swf_event_list_t order = {0};
    swf_error_t *err = swf_event_list_read_file(
        SWF_SOURCE_DIR "/tests/histories/fixtures/order-before-nested.jsonl", &order);
    cr_assert(err == NULL, "%s", swf_error_message(err));
    char good[] = "/tmp/swf-check-good-XXXXXX", bad[] = "/tmp/swf-check-bad-XXXXXX";
    close(mkstemp(good));
    close(mkstemp(bad));
    write_edited(good, &order, "good-1", 0);
    /* Event 5 schedules Charge with another input than the definition
     * derives: the history no longer replays. */
    write_edited(bad, &order, "bad-1", 5);
    swf_event_list_free(&order);
    cr_assert_eq(swf(db, "import", good, NULL), 0, "%s", output);
    cr_assert_eq(swf(db, "import", bad, NULL), 1, "%s", output);
    cr_assert_eq(swf(db, "import", bad, "--force", NULL), 0, "%s", errors);
    unlink(good);
    unlink(bad);

    cr_assert_eq(swf(db, "admin", "check", "good-1", NULL), 0, "%s", output);
    cr_assert(strstr(output, "checked 1 execution: every history holds its invariants"), "%s",
              output);

    cr_assert_eq(swf(db, "admin", "check", "good-1", "bad-1", NULL), 1, "%s", output);
    cr_assert(strstr(output, "bad-1: event 5: replay fails (nondeterminism)"), "%s", output);
    cr_assert_null(strstr(output, "good-1:"), "%s", output);
    cr_assert(strstr(output, "checked 2 executions: 1 with problems"), "%s", output);

    cr_assert_eq(swf(db, "admin", "check", "--all", NULL), 1, "%s", output);
    cr_assert(strstr(output, "checked 2 executions: 1 with problems"), "%s", output);

    cr_assert_eq(swf(db, "admin", "check", "nope", NULL), 1, "%s", output);
    cr_assert(strstr(output, "nope: no such execution"), "%s", output);
    cr_assert_eq(swf(db, "admin", "check", NULL), 2);
    cr_assert_eq(swf(db, "admin", "check", "--all", "x", NULL), 2);
}

Test(cli_db, admin_check_all_pages_through_executions_started_in_one_millisecond)
{
    char db[512];
    snprintf(db, sizeof(db), "%s", fixture_db());
    cr_assert_eq(swf(db, "register", "m", SWF_SOURCE_DIR "/examples/order.asl.json", NULL), 0, "%s",
                 output);
    swf_history_store_t *s = fixture_store(db);
    /* More executions than a page (1000) at one start time, and a few
     * before it. */
    for (int i = 0; i < 1006; i++) {
        char id[32];
        snprintf(id, sizeof(id), "same-ms-%04d", i);
        swf_history_start_t st = {
            .execution_id = id, .state_machine = "m", .time_ms = i < 1001 ? T0 : T0 - 1};
        swf_error_t *err = swf_history_pg_execution_start(s, &st, NULL);
        cr_assert(err == NULL, "%s", swf_error_message(err));
    }
    swf_history_store_free(s);
    cr_assert_eq(swf(db, "admin", "check", "--all", NULL), 0, "%s", output);
    cr_assert(strstr(output, "checked 1006 executions: every history holds its invariants"), "%s",
              output);
}

#define EVENT(id, type, attrs)                                                                     \
    "{\"eventId\":" #id ",\"eventType\":\"" type "\",\"eventTimestamp\":\"2026-01-01T00:00:0" #id  \
    ".000Z\",\"" attrs "}\n"
#define STARTED(id)                                                                                \
    EVENT(                                                                                         \
        1, "WorkflowExecutionStarted",                                                             \
        "workflowExecutionStartedEventAttributes\":{\"executionId\":\"" id                         \
        "\",\"workflowId\":\"" id "\",\"workflowType\":{\"name\":\"m\",\"version\":\"1\"},"        \
        "\"definition\":{\"StartAt\":\"A\",\"States\":{\"A\":{\"Type\":\"Pass\",\"End\":true}}},"  \
        "\"input\":{}}")                                                                           \
    EVENT(2, "DecisionTaskScheduled", "decisionTaskScheduledEventAttributes\":{}")                 \
    EVENT(3, "DecisionTaskStarted", "decisionTaskStartedEventAttributes\":{\"scheduledEventId\":2}")

/* The events table is append-only: what import writes stays for good. So
 * nothing the engine could not have written gets in, --force or not, and
 * an open execution that does not replay (its decider would be stuck) is
 * refused too; --force only imports a closed one that does not replay. */
Test(cli_db, import_keeps_nothing_that_cannot_replay_even_with_force)
{
    char db[512];
    snprintf(db, sizeof(db), "%s", fixture_db());
    cr_assert_eq(swf(db, "db", "migrate", NULL), 0);
    char f[] = "/tmp/swf-import-XXXXXX";
    close(mkstemp(f));
    /* A decision without its DecisionTaskCompleted, after the close. */
    write_file(f, STARTED("broken-1")
                      EVENT(4, "WorkflowExecutionCompleted",
                            "workflowExecutionCompletedEventAttributes\":{\"result\":{}}")
                          EVENT(5, "TimerStarted",
                                "timerStartedEventAttributes\":{\"timerId\":\"t\","
                                "\"startToFireTimeout\":1,\"decisionTaskCompletedEventId\":4}"));
    cr_assert_eq(swf(db, "import", f, "--force", NULL), 1, "%s", output);
    cr_assert(strstr(errors, "not a history the engine could have written") != NULL, "%s", errors);
    cr_assert(strstr(errors, "nothing imported, --force or not") != NULL, "%s", errors);
    /* Sound, but the definition completes where this one schedules an
     * activity, and it is open. */
    write_file(f, STARTED("open-1")
                      EVENT(4, "DecisionTaskCompleted",
                            "decisionTaskCompletedEventAttributes\":{\"scheduledEventId\":2,"
                            "\"startedEventId\":3}")
                          EVENT(5, "ActivityTaskScheduled",
                                "activityTaskScheduledEventAttributes\":{\"activityId\":\"1\","
                                "\"activityType\":{\"name\":\"x\",\"version\":\"1\"},"
                                "\"taskList\":{\"name\":\"q\"},\"input\":{},"
                                "\"decisionTaskCompletedEventId\":4}"));
    cr_assert_eq(swf(db, "import", f, "--force", NULL), 1, "%s", output);
    cr_assert(strstr(errors, "does not replay here") != NULL, "%s", errors);
    cr_assert(strstr(errors, "an open execution must replay, --force or not") != NULL, "%s",
              errors);
    cr_assert_str_eq(fixture_sql(db, "SELECT count(*) FROM events"), "0");
    unlink(f);
}

/* README "Exit status": 3 when a file could not be read, 1 when what it
 * holds is invalid, 2 for the command line itself. */
Test(cli_db, a_file_that_cannot_be_read_exits_3_and_a_malformed_one_1)
{
    char db[512];
    snprintf(db, sizeof(db), "%s", fixture_db());
    const char *missing = "/tmp/swf-no-such-file-at-all";
    cr_assert_eq(swf(db, "import", missing, NULL), 3, "%s", errors);
    cr_assert(strstr(errors, "No such file or directory") != NULL, "%s", errors);
    cr_assert_eq(swf(db, "import", "/tmp", NULL), 3, "%s", errors); /* a directory */
    cr_assert_eq(swf(db, "register", "m", missing, NULL), 3, "%s", errors);
    cr_assert_eq(swf(db, "validate", missing, NULL), 3, "%s", errors);
    cr_assert_eq(swf(db, "validate", SWF_SOURCE_DIR "/examples/order.asl.json", missing, NULL), 3,
                 "%s", errors);
    cr_assert_eq(swf(db, "replay", "--file", missing, NULL), 3, "%s", errors);
    cr_assert_eq(swf(db, "timeline", "--file", missing, NULL), 3, "%s", errors);
    cr_assert_eq(swf(db, "run", "--local", missing, NULL), 3, "%s", errors);
    cr_assert_eq(swf(db, "start", "m", "--input", "@/tmp/swf-no-such-file-at-all", NULL), 3, "%s",
                 errors);
    char f[] = "/tmp/swf-malformed-XXXXXX";
    close(mkstemp(f));
    write_file(f, "{not json\n");
    cr_assert_eq(swf(db, "import", f, NULL), 1, "%s", errors);
    cr_assert_eq(swf(db, "validate", f, NULL), 1, "%s", errors);
    cr_assert_eq(swf(db, "register", "m", f, NULL), 1, "%s", errors);
    cr_assert_eq(swf(db, "replay", "--file", f, NULL), 1, "%s", errors);
    cr_assert_eq(swf(db, "timeline", "--file", f, NULL), 1, "%s", errors);
    cr_assert_eq(swf(db, "import", NULL), 2, "%s", errors);
    cr_assert_eq(swf(db, "replay", "x", "--file", f, NULL), 2, "%s", errors);
    unlink(f);
}

Test(cli_db, describe_names_the_task_list_each_task_uses)
{
    const char *db = fixture_db();
    char def[] = "/tmp/swf-cli-def-XXXXXX";
    close(mkstemp(def));
    write_file(def, "{\"StartAt\":\"Charge\",\"States\":{\"Charge\":{\"Type\":\"Task\","
                    "\"Resource\":\"arn:aws:states:::sqs:sendMessage.waitForTaskToken\","
                    "\"Next\":\"M\"},\"M\":{\"Type\":\"Map\",\"ResultWriter\":{"
                    "\"Resource\":\"arn:aws:states:::s3:putObject\",\"Parameters\":{"
                    "\"Bucket\":\"b\"}},\"ItemProcessor\":{\"StartAt\":\"P\",\"States\":{"
                    "\"P\":{\"Type\":\"Task\",\"Resource\":\"arn:aws:states:::activity:"
                    "pack\",\"End\":true}}},\"End\":true}}}");
    cr_assert_eq(swf(db, "register", "tasks", def, NULL), 0, "%s", errors);
    unlink(def);
    cr_assert_eq(swf(db, "start", "tasks", NULL), 0, "%s", errors);
    char id[64];
    snprintf(id, sizeof(id), "%.63s", output);
    trim(id);
    cr_assert_eq(swf(db, "describe", id, NULL), 0, "%s", errors);
    /* In the order of the stored definition (jsonb's: shorter names first). */
    cr_assert(strstr(output, "task list      s3.putObject ($.States.M.ResultWriter)\n"
                             "task list      pack ($.States.M.ItemProcessor.States.P)\n"
                             "task list      sqs.sendMessage ($.States.Charge)\n") != NULL,
              "%s", output);
    cr_assert_eq(swf(db, "describe", id, "--json", NULL), 0);
    json_object *o = json_tokener_parse(output), *tasks = NULL;
    cr_assert(swf_json_get(o, "tasks", &tasks) && json_object_array_length(tasks) == 3, "%s",
              output);
    cr_assert_str_eq(swf_json_get_string(json_object_array_get_idx(tasks, 0), "taskList"),
                     "s3.putObject");
    json_object_put(o);
}

/* ---- roles: the owner migrates, the runtime role cannot rewrite ---------- */

/* Runs sql on conninfo; returns its SQLSTATE ("" when it succeeded). */
static const char *exec_state(const char *conninfo, const char *sql)
{
    return pg_state(conninfo, sql, NULL);
}

/* A fresh database owned by a fresh owner role, and a fresh runtime role:
 * their conninfos. */
static void two_roles(char *owner, char *runtime, char *runtime_role, size_t size)
{
    const char *db = fixture_db();
    char base[512], sql[1024];
    snprintf(base, sizeof(base), "%s", db);
    const char *dbname = base; /* the last dbname= is fixture_db's */
    for (const char *p = base; (p = strstr(p, "dbname=")) != NULL; p++)
        dbname = p + 7;
    static int counter;
    char owner_role[64];
    snprintf(owner_role, sizeof(owner_role), "swf_owner_%d_%d", (int)getpid(), counter);
    snprintf(runtime_role, 64, "swf_runtime_%d_%d", (int)getpid(), counter++);
    snprintf(sql, sizeof(sql), "CREATE ROLE %s LOGIN; CREATE ROLE %s LOGIN", owner_role,
             runtime_role);
    cr_assert_str_eq(exec_state(getenv("SWF_TEST_PG"), sql), "");
    snprintf(sql, sizeof(sql), "ALTER DATABASE %s OWNER TO %s", dbname, owner_role);
    cr_assert_str_eq(exec_state(getenv("SWF_TEST_PG"), sql), "");
    snprintf(sql, sizeof(sql), "GRANT ALL ON SCHEMA public TO %s", owner_role);
    cr_assert_str_eq(exec_state(base, sql), "");
    snprintf(owner, size, "%s user=%s", base, owner_role);
    snprintf(runtime, size, "%s user=%s", base, runtime_role);
}

Test(cli_db, a_runtime_role_granted_by_migrate_runs_executions_but_cannot_rewrite_events)
{
    char owner[640], runtime[640], role[64];
    two_roles(owner, runtime, role, sizeof(owner));
    cr_assert_eq(swf(owner, "db", "migrate", "--grant", role, NULL), 0, "%s", errors);
    cr_assert(strstr(output, "granted") != NULL, "%s", output);

    /* What the processes do: register, start, append (projections: the
     * executions row, the outbox, closing), read. */
    char def[] = "/tmp/swf-cli-def-XXXXXX";
    close(mkstemp(def));
    write_file(def, definition);
    cr_assert_eq(swf(runtime, "register", "hello", def, NULL), 0, "%s", errors);
    cr_assert_eq(swf(runtime, "start", "hello", "--input", "{\"a\":1}", NULL), 0, "%s", errors);
    char id[64];
    snprintf(id, sizeof(id), "%.63s", output);
    trim(id);
    swf_history_store_t *s = fixture_store(runtime);
    close_execution(s, id, "{\"result\":{\"a\":1},\"decisionTaskCompletedEventId\":4}", 1);
    swf_event_list_t events = {0};
    cr_assert(swf_history_load(s, id, 0, 0, &events) == NULL);
    cr_assert_eq(events.count, 5);
    swf_event_list_free(&events);
    swf_history_store_free(s);
    cr_assert_eq(swf(runtime, "describe", id, NULL), 0, "%s", errors);
    cr_assert(strstr(output, "succeeded") != NULL, "%s", output);

    /* What it must not do: each is refused for want of privilege (42501),
     * not by the trigger (SWF01), which the owner could disable. */
    const char *const forbidden[] = {
        "UPDATE events SET attributes = '{}'",
        "DELETE FROM events",
        "TRUNCATE events",
        "ALTER TABLE events DISABLE TRIGGER ALL",
        "DROP TRIGGER events_append_only ON events",
        "CREATE OR REPLACE FUNCTION swf_events_append_only() RETURNS trigger"
        " LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$",
        "DROP TABLE events",
    };
    for (size_t i = 0; i < sizeof(forbidden) / sizeof(forbidden[0]); i++)
        cr_assert_str_eq(exec_state(runtime, forbidden[i]), "42501", "%s", forbidden[i]);
    cr_assert_str_eq(exec_state(runtime, "SELECT count(*) FROM events"), "");

    /* The hash chain (history/CHAIN.md): the runtime cannot alter its
     * trigger, nor insert a hash the chain does not give, nor an event
     * with no event before it to chain to. */
    const char *const chain_forbidden[] = {
        "ALTER TABLE events DISABLE TRIGGER events_chain",
        "DROP TRIGGER events_chain ON events",
        "CREATE OR REPLACE FUNCTION swf_events_chain() RETURNS trigger"
        " LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$",
        "CREATE OR REPLACE FUNCTION swf_event_hash(bytea, text, bigint, text, timestamptz, jsonb)"
        " RETURNS bytea LANGUAGE sql AS $$ SELECT $1 $$",
        "UPDATE events SET hash = sha256('x')",
    };
    for (size_t i = 0; i < sizeof(chain_forbidden) / sizeof(chain_forbidden[0]); i++)
        cr_assert_str_eq(exec_state(runtime, chain_forbidden[i]), "42501", "%s",
                         chain_forbidden[i]);
    char sql[512];
    snprintf(sql, sizeof(sql),
             "INSERT INTO events (execution_id, event_id, event_type, event_time, attributes, hash)"
             " VALUES ('%s', 6, 'MarkerRecorded', now(), '{}', sha256('x'))",
             id);
    cr_assert_str_eq(exec_state(runtime, sql), "SWF02");
    snprintf(sql, sizeof(sql),
             "INSERT INTO events (execution_id, event_id, event_type, event_time, attributes)"
             " VALUES ('%s', 7, 'MarkerRecorded', now(), '{}')",
             id);
    cr_assert_str_eq(exec_state(runtime, sql), "SWF02");
    /* A temporary table named events, first in the session's search path,
     * does not change what the trigger chains to. */
    snprintf(sql, sizeof(sql),
             "CREATE TEMP TABLE events (execution_id text, event_id bigint, hash bytea);"
             " INSERT INTO pg_temp.events VALUES ('%1$s', 5, sha256('forged'));"
             " INSERT INTO public.events (execution_id, event_id, event_type, event_time,"
             " attributes) VALUES ('%1$s', 6, 'MarkerRecorded', now(), '{}')",
             id);
    cr_assert_str_eq(exec_state(runtime, sql), "");
    s = fixture_store(runtime);
    swf_history_chain_t chain;
    cr_assert(swf_history_pg_chain_check(s, id, &chain) == NULL);
    cr_assert_eq(chain.head_id, 6);
    cr_assert_eq(chain.broken_id, 0, "%s", chain.broken);
    swf_history_store_free(s);
}

/* The chain's trigger (history/CHAIN.md, "The trigger in C"): migrate
 * says which computes the chain, and switches on request; C where the
 * server has the extension swf_chain (scripts/test.sh installs it). */
Test(cli_db, db_migrate_says_which_trigger_computes_the_chain_and_switches_it)
{
    const char *db = fixture_db();
    char value[256];
    cr_assert_str_eq(pg_state(db,
                              "SELECT count(*) FROM pg_available_extensions"
                              " WHERE name = 'swf_chain'",
                              value),
                     "");
    bool c = strcmp(value, "1") == 0;
    cr_assert_eq(swf(db, "db", "migrate", "--chain", "plpgsql", NULL), 0, "%s", errors);
    cr_assert(strstr(output, "hash chain: computed by the plpgsql trigger of migration 7: as "
                             "asked (--chain plpgsql)") != NULL,
              "%s", output);
    cr_assert_eq(swf(db, "db", "migrate", "--chain", "nope", NULL), 2, "%s", errors);
    cr_assert(strstr(errors, "--chain nope: auto, c or plpgsql") != NULL, "%s", errors);
    if (c) {
        cr_assert_eq(swf(db, "db", "migrate", NULL), 0, "%s", errors);
        cr_assert(strstr(output, "hash chain: computed by the C trigger of the extension "
                                 "swf_chain 1.0 (switched now)") != NULL,
                  "%s", output);
        cr_assert_eq(swf(db, "db", "migrate", "--chain", "c", NULL), 0, "%s", errors);
        cr_assert(strstr(output, "(switched now)") == NULL, "%s", output);
    } else {
        cr_assert_eq(swf(db, "db", "migrate", "--chain", "c", NULL), 3, "%s", output);
        cr_assert(strstr(errors, "--chain c: the extension swf_chain is not installed") != NULL,
                  "%s", errors);
        cr_assert_eq(swf(db, "db", "migrate", NULL), 0, "%s", errors);
        cr_assert(strstr(output, "plpgsql trigger of migration 7: the extension swf_chain is "
                                 "not installed") != NULL,
                  "%s", output);
    }
}

Test(cli_db, a_runtime_role_refuses_a_schema_behind_and_names_db_migrate)
{
    char owner[640], runtime[640], role[64];
    two_roles(owner, runtime, role, sizeof(owner));
    swf_history_store_t *s = NULL;
    cr_assert(swf_history_pg_connect(owner, &s) == NULL);
    int from, to;
    cr_assert(swf_history_pg_migrate(s, swf_history_pg_schema_latest() - 1, &from, &to) == NULL);
    swf_error_t *err = swf_history_pg_grant(s, role);
    cr_assert(err == NULL, "%s", swf_error_message(err));
    swf_history_store_free(s);

    s = NULL;
    err = swf_history_pg_new(runtime, &s);
    cr_assert_not_null(err);
    cr_assert_null(s);
    cr_assert(strstr(swf_error_cause(err), "swf db migrate") != NULL, "%s", swf_error_cause(err));
    swf_error_free(err);
    cr_assert_eq(swf(runtime, "list", NULL), 3);
    cr_assert(strstr(errors, "swf db migrate") != NULL, "%s", errors);

    /* Once the owner migrates, the runtime role connects. */
    cr_assert_eq(swf(owner, "db", "migrate", NULL), 0, "%s", errors);
    cr_assert_eq(swf(runtime, "list", NULL), 0, "%s", errors);
}

Test(cli_db, db_migrate_as_the_runtime_role_names_the_owner_instead_of_permission_denied)
{
    char owner[640], runtime[640], role[64];
    two_roles(owner, runtime, role, sizeof(owner));
    /* An empty schema the runtime role cannot create tables in. */
    cr_assert_eq(swf(runtime, "db", "migrate", NULL), 3, "%s", output);
    cr_assert(strstr(errors, "cannot create tables in schema \"public\"") != NULL, "%s", errors);
    cr_assert(strstr(errors, "permission denied") == NULL, "%s", errors);
    cr_assert_eq(swf(owner, "db", "migrate", "--grant", role, NULL), 0, "%s", errors);
    char owner_role[64];
    const char *user = owner; /* the last user= is two_roles' */
    for (const char *p = owner; (p = strstr(p, "user=")) != NULL; p++)
        user = p + 5;
    snprintf(owner_role, sizeof(owner_role), "%.63s", user);
    /* Up to date or not, the runtime role does not migrate: the message
     * names it, the owner, and how runtime roles are made. */
    cr_assert_eq(swf(runtime, "db", "migrate", NULL), 3, "%s", output);
    char want[256];
    snprintf(want, sizeof(want),
             "connected as role \"%s\", but swf's tables in schema \"public\" "
             "belong to role \"%s\": migrations must run as the owner",
             role, owner_role);
    cr_assert(strstr(errors, want) != NULL, "%s", errors);
    cr_assert(strstr(errors, "swf db migrate --grant ROLE") != NULL, "%s", errors);
    cr_assert(strstr(errors, "permission denied") == NULL, "%s", errors);
    cr_assert_eq(swf(runtime, "db", "migrate", "--grant", role, NULL), 3, "%s", output);
    cr_assert(strstr(errors, want) != NULL, "%s", errors);
    cr_assert_eq(swf(owner, "db", "migrate", NULL), 0, "%s", errors);
}

/* Migrates db and registers `hello` (the definition written to def, a
 * mkstemp template the caller unlinks). */
static void hello_db(const char *db, char *def)
{
    close(mkstemp(def));
    write_file(def, definition);
    cr_assert_eq(swf(db, "db", "migrate", NULL), 0, "%s", errors);
    cr_assert_eq(swf(db, "register", "hello", def, NULL), 0, "%s", output);
}

/* Starts `hello` with {"a":1} and closes it as the definition would (a
 * history that replays); returns its id in id (64 bytes). */
static void replayable_execution(const char *db, char *id)
{
    cr_assert_eq(swf(db, "start", "hello", "--input", "{\"a\":1}", NULL), 0, "%s", errors);
    snprintf(id, 64, "%.63s", output);
    trim(id);
    swf_history_store_t *s = fixture_store(db);
    close_execution(s, id, "{\"result\":{\"a\":1},\"decisionTaskCompletedEventId\":4}", 1);
    swf_history_store_free(s);
}

Test(cli_db, admin_check_names_the_first_event_the_owner_altered_deleted_or_reordered)
{
    const char *db = fixture_db();
    char def[] = "/tmp/swf-cli-def-XXXXXX";
    hello_db(db, def);
    char good[64], altered[64], deleted[64], reordered[64], cut[64];
    replayable_execution(db, good);
    replayable_execution(db, altered);
    replayable_execution(db, deleted);
    replayable_execution(db, reordered);
    replayable_execution(db, cut);
    cr_assert_eq(swf(db, "admin", "check", "--all", NULL), 0, "%s", output);

    char sql[512];
    /* The owner edits a result in place, hash column untouched. */
    snprintf(sql, sizeof(sql),
             "UPDATE events SET attributes = jsonb_set(attributes, '{identity}', '\"d2\"')"
             " WHERE execution_id = '%s' AND event_id = 3",
             altered);
    fixture_owner_rewrites(db, sql);
    snprintf(sql, sizeof(sql), "DELETE FROM events WHERE execution_id = '%s' AND event_id = 4",
             deleted);
    fixture_owner_rewrites(db, sql);
    snprintf(sql, sizeof(sql),
             "UPDATE events SET event_id = 99 WHERE execution_id = '%1$s' AND event_id = 3;"
             " UPDATE events SET event_id = 3 WHERE execution_id = '%1$s' AND event_id = 4;"
             " UPDATE events SET event_id = 4 WHERE execution_id = '%1$s' AND event_id = 99",
             reordered);
    fixture_owner_rewrites(db, sql);
    snprintf(sql, sizeof(sql), "DELETE FROM events WHERE execution_id = '%s' AND event_id = 5",
             cut);
    fixture_owner_rewrites(db, sql);

    char expect[512];
    cr_assert_eq(swf(db, "admin", "check", altered, NULL), 1, "%s", output);
    snprintf(expect, sizeof(expect),
             "%s: event 3: the hash chain breaks: DecisionTaskStarted does not match its hash",
             altered);
    cr_assert(strstr(output, expect) != NULL, "%s", output);
    cr_assert_eq(swf(db, "admin", "check", deleted, NULL), 1, "%s", output);
    snprintf(expect, sizeof(expect),
             "%s: event 4: the hash chain breaks: missing: the ids jump from 3 to 5", deleted);
    cr_assert(strstr(output, expect) != NULL, "%s", output);
    cr_assert_eq(swf(db, "admin", "check", reordered, NULL), 1, "%s", output);
    snprintf(expect, sizeof(expect),
             "%s: event 3: the hash chain breaks: DecisionTaskCompleted does not match its hash",
             reordered);
    cr_assert(strstr(output, expect) != NULL, "%s", output);
    /* The last event deleted: the chain that remains holds, but the
     * executions row recorded the close. */
    cr_assert_eq(swf(db, "admin", "check", cut, NULL), 1, "%s", output);
    snprintf(expect, sizeof(expect),
             "%s: event 5: the hash chain breaks: missing: the history ends at event 4, and its "
             "executions row records event 5",
             cut);
    cr_assert(strstr(output, expect) != NULL, "%s", output);
    cr_assert_eq(swf(db, "admin", "check", "--all", NULL), 1, "%s", output);
    cr_assert(strstr(output, "checked 5 executions: 4 with problems"), "%s", output);

    /* --heads: each execution's last event and its hash, for keeping. */
    cr_assert_eq(swf(db, "admin", "check", good, "--heads", NULL), 0, "%s", output);
    swf_event_hash_t hashes[5];
    swf_history_store_t *s = fixture_store(db);
    cr_assert(swf_history_pg_chain_load(s, good, 5, hashes) == NULL);
    swf_history_store_free(s);
    snprintf(expect, sizeof(expect), "head %s 5 %s\n", good, hashes[4]);
    cr_assert(strstr(output, expect) != NULL, "%s", output);
    cr_assert_eq(swf(db, "admin", "rebuild-projections", "--heads", NULL), 2);
    unlink(def);
}

/* Replaces the first `from` in the file at path with `to`. */
static void file_edit(const char *path, const char *from, const char *to)
{
    char *text = slurp(path);
    char *at = strstr(text, from);
    cr_assert_not_null(at, "%s not in %s", from, text);
    char *edited = calloc(1, strlen(text) + strlen(to) + 1);
    memcpy(edited, text, (size_t)(at - text));
    strcat(edited, to);
    strcat(edited, at + strlen(from));
    write_file(path, edited);
    free(text);
    free(edited);
}

/* Removes every "eventHash" member (the last of each line) from the file
 * at path, or only the one of line `only` (1-based) when it is not 0. */
static void file_strip_hashes(const char *path, int only)
{
    char *text = slurp(path), *out = calloc(1, strlen(text) + 1);
    int line = 1;
    for (char *p = text; *p != '\0'; line++) {
        char *end = strchr(p, '\n');
        size_t n = end != NULL ? (size_t)(end - p + 1) : strlen(p);
        char *h = strstr(p, ",\"eventHash\":\"");
        if (h != NULL && h < p + n && (only == 0 || only == line)) {
            strncat(out, p, (size_t)(h - p));
            strcat(out, "}\n");
        } else {
            strncat(out, p, n);
        }
        p += n;
    }
    write_file(path, out);
    free(text);
    free(out);
}

Test(cli_db, import_refuses_a_file_whose_chain_is_broken_naming_the_event)
{
    char db1[512], db2[512];
    snprintf(db1, sizeof(db1), "%s", fixture_db());
    snprintf(db2, sizeof(db2), "%s", fixture_db());
    char def[] = "/tmp/swf-cli-def-XXXXXX";
    hello_db(db1, def);
    cr_assert_eq(swf(db2, "db", "migrate", NULL), 0);
    char id[64];
    replayable_execution(db1, id);
    char f[] = "/tmp/swf-cli-chain-XXXXXX", orig[] = "/tmp/swf-cli-orig-XXXXXX";
    close(mkstemp(f));
    close(mkstemp(orig));
    cr_assert_eq(swf(db1, "export", id, orig, NULL), 0, "%s", errors);
    char *exported = slurp(orig);
    cr_assert(strstr(exported, "\"eventHash\":\"") != NULL, "%s", exported);

    /* A replay of the exported file is unaffected by the hashes. */
    cr_assert_eq(swf(db1, "replay", "--file", orig, NULL), 0, "%s%s", output, errors);

    /* An event edited after export: its own hash no longer matches. */
    write_file(f, exported);
    file_edit(f, "\"identity\":\"d1\"", "\"identity\":\"d9\"");
    cr_assert_eq(swf(db2, "import", f, NULL), 1, "%s", errors);
    cr_assert(strstr(errors, "event 3 (DecisionTaskStarted): its eventHash ") != NULL, "%s",
              errors);
    cr_assert(strstr(errors, "changed after export") != NULL, "%s", errors);
    cr_assert_str_eq(fixture_sql(db2, "SELECT count(*) FROM events"), "0");

    /* A hash edited: named the same way. */
    write_file(f, exported);
    char *h = strstr(strstr(exported, "\"eventId\":2"), "\"eventHash\":\"") + 13;
    char right[80], wrong[80];
    snprintf(right, sizeof(right), "\"eventHash\":\"%.64s", h);
    memcpy(wrong, right, sizeof(wrong));
    wrong[13] = wrong[13] == 'a' ? 'b' : 'a';
    file_edit(f, right, wrong);
    cr_assert_eq(swf(db2, "import", f, NULL), 1, "%s", errors);
    cr_assert(strstr(errors, "event 2 (DecisionTaskScheduled): its eventHash ") != NULL, "%s",
              errors);

    /* A line whose hash was removed, among lines that carry one; and a
     * hash that is not one. */
    write_file(f, exported);
    file_strip_hashes(f, 4);
    cr_assert_eq(swf(db2, "import", f, NULL), 1, "%s", errors);
    cr_assert(strstr(errors, ":4: no eventHash here, where the events before carry one") != NULL,
              "%s", errors);
    write_file(f, exported);
    file_edit(f, "\"eventHash\":\"", "\"eventHash\":\"XYZ");
    cr_assert_eq(swf(db2, "import", f, NULL), 1, "%s", errors);
    cr_assert(strstr(errors, ":1: eventHash must be 64 lowercase hexadecimal digits") != NULL, "%s",
              errors);
    cr_assert_str_eq(fixture_sql(db2, "SELECT count(*) FROM events"), "0");

    /* A file from before the chain (no hashes at all) is accepted, and its
     * chain computed here is the one it had: the same content. */
    write_file(f, exported);
    file_strip_hashes(f, 0);
    cr_assert_eq(swf(db2, "import", f, NULL), 0, "%s", errors);
    cr_assert(strstr(output, "the file carries no hashes: their chain starts here") != NULL, "%s",
              output);
    cr_assert_eq(swf(db2, "export", id, f, NULL), 0, "%s", errors);
    char *again = slurp(f);
    cr_assert_str_eq(again, exported);
    free(again);
    free(exported);
    unlink(f);
    unlink(orig);
    unlink(def);
}

Test(cli_db, heads_kept_elsewhere_show_a_history_rewritten_with_its_hashes_recomputed)
{
    const char *db = fixture_db();
    char def[] = "/tmp/swf-cli-def-XXXXXX", heads[] = "/tmp/swf-cli-heads-XXXXXX";
    close(mkstemp(heads));
    hello_db(db, def);
    char growing[64], rewritten[64];
    cr_assert_eq(swf(db, "start", "hello", "--input", "{\"a\":1}", NULL), 0, "%s", errors);
    snprintf(growing, sizeof(growing), "%.63s", output);
    trim(growing);
    replayable_execution(db, rewritten);
    /* Kept as the README says: the "head " lines (grep '^head '). */
    cr_assert_eq(swf(db, "admin", "check", "--all", "--heads", NULL), 0, "%s", output);
    char kept[1024] = "";
    for (char *line = strtok(output, "\n"); line != NULL; line = strtok(NULL, "\n")) {
        if (strncmp(line, "head ", 5) == 0)
            snprintf(kept + strlen(kept), sizeof(kept) - strlen(kept), "%s\n", line);
    }
    cr_assert_eq(strlen(kept), 2 * (5 + 36 + 3 + 64 + 1), "%s", kept);
    write_file(heads, kept);

    /* The open execution grows after its head was kept: still in its chain. */
    swf_history_store_t *s = fixture_store(db);
    swf_event_t ev = {0, SWF_EVENT_DECISION_TASK_STARTED, T0,
                      json_tokener_parse("{\"scheduledEventId\":2,\"identity\":\"d1\"}")};
    cr_assert(swf_history_append(s, growing, 3, &ev, 1) == NULL);
    json_object_put(ev.attrs);
    swf_history_store_free(s);

    /* The owner rewrites event 3 and recomputes every hash from there on:
     * a valid chain of another history, which the chain alone cannot tell. */
    char sql[1024];
    snprintf(sql, sizeof(sql),
             "UPDATE events SET attributes = '{\"scheduledEventId\": 2, \"identity\": \"evil\"}'"
             " WHERE execution_id = '%s' AND event_id = 3",
             rewritten);
    fixture_owner_rewrites(db, sql);
    for (int i = 3; i <= 5; i++) {
        snprintf(sql, sizeof(sql),
                 "UPDATE events e SET hash = swf_event_hash(p.hash, e.execution_id, e.event_id,"
                 " e.event_type, e.event_time, e.attributes) FROM events p"
                 " WHERE p.execution_id = e.execution_id AND p.event_id = e.event_id - 1"
                 " AND e.execution_id = '%s' AND e.event_id = %d",
                 rewritten, i);
        fixture_owner_rewrites(db, sql);
    }
    cr_assert_eq(swf(db, "admin", "check", rewritten, NULL), 0, "%s", output);

    /* The heads kept elsewhere show it. */
    cr_assert_eq(swf(db, "admin", "check", "--heads-from", heads, NULL), 1, "%s", output);
    char expect[512];
    snprintf(expect, sizeof(expect), "%s: event 5: the head kept in %s (", rewritten, heads);
    cr_assert(strstr(output, expect) != NULL, "%s", output);
    cr_assert(strstr(output, "the history up to this event was rewritten"), "%s", output);
    cr_assert(strstr(output, growing) == NULL, "%s", output);
    cr_assert(strstr(output, "checked 2 executions: 1 with problems"), "%s", output);

    /* A file that is not one of heads, or that cannot be read. */
    write_file(heads, "\nhead x 1 abc\n");
    cr_assert_eq(swf(db, "admin", "check", "--heads-from", heads, NULL), 1, "%s", errors);
    snprintf(expect, sizeof(expect), "%s:2: not a head line", heads);
    cr_assert(strstr(errors, expect) != NULL, "%s", errors);
    unlink(heads);
    cr_assert_eq(swf(db, "admin", "check", "--heads-from", heads, NULL), 3, "%s", errors);
    cr_assert_eq(swf(db, "admin", "check", "--all", "--heads-from", heads, NULL), 2);
    unlink(def);
}
