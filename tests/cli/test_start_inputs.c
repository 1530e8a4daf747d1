/*
 * test_start_inputs.c - `swf start NAME --inputs FILE` as a user runs it:
 * the built binary against a dev system of this process (a throwaway
 * PostgreSQL, the librdkafka mock cluster, deciders on threads). Many lines
 * start that many executions, which the deciders run to completion from
 * the decide messages alone (no swf-history, so no sweep); the ids come out
 * in the file's order; a workflow id already open, or given twice, is
 * refused on its line as `swf start` refuses it; a bad line is named with
 * its number and nothing starts; an empty file starts nothing.
 */
#include <criterion/criterion.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/dev.h"
#include "protocol/time.h"
#include "tests/dev_cluster.h"

#define SWF SWF_BINARY_DIR "/swf"
#define PASS "{\"StartAt\":\"P\",\"States\":{\"P\":{\"Type\":\"Pass\",\"End\":true}}}"

static char tmp[] = "/tmp/swf-test-inputs-XXXXXX";
static swf_dev_t *dev;

/* What one command printed: stdout and stderr whole (malloc'd), its status. */
typedef struct ran {
    int status;
    char *out;
    char *err;
} ran_t;

static void ran_free(ran_t *r)
{
    free(r->out);
    free(r->err);
}

static char *file_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *s = malloc((size_t)n + 1);
    cr_assert_not_null(s);
    size_t got = fread(s, 1, (size_t)n, f);
    s[got] = '\0';
    fclose(f);
    return s;
}

/* Runs `swf ARGS` through the shell (ARGS may redirect stdin) with the dev
 * system's database and brokers in the environment. */
static ran_t swf(const char *args)
{
    char cmd[1024];
    int len = snprintf(cmd, sizeof(cmd), "%s %s >%s/out 2>%s/err", SWF, args, tmp, tmp);
    cr_assert(len > 0 && (size_t)len < sizeof(cmd));
    int rc = system(cmd);
    cr_assert(WIFEXITED(rc), "swf %s did not exit", args);
    char path[128];
    ran_t r = {.status = WEXITSTATUS(rc)};
    snprintf(path, sizeof(path), "%s/out", tmp);
    r.out = file_text(path);
    snprintf(path, sizeof(path), "%s/err", tmp);
    r.err = file_text(path);
    return r;
}

/* Writes `text` to the file `name` in the test's folder; returns its path
 * (static storage, until the next call). */
static const char *put(const char *name, const char *text)
{
    static char path[128];
    snprintf(path, sizeof(path), "%s/%s", tmp, name);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "%s", path);
    cr_assert(fputs(text, f) >= 0 && fclose(f) == 0, "%s", path);
    return path;
}

/* put() of a file of n lines "{}" (an execution each, input {}). */
static const char *put_empties(const char *name, size_t n)
{
    char *text = malloc(n * 3 + 1);
    cr_assert_not_null(text);
    for (size_t i = 0; i < n; i++)
        memcpy(text + i * 3, "{}\n", 3);
    text[n * 3] = '\0';
    const char *path = put(name, text);
    free(text);
    return path;
}

/* A dev system with `deciders` deciders and no swf-history, and the Pass
 * machine registered as M. */
static void up(int deciders)
{
    cr_assert_not_null(mkdtemp(tmp));
    swf_dev_options_t opt = {.deciders = deciders, .history_service = false};
    check(swf_dev_start(&opt, &dev));
    setenv("SWF_DATABASE_URL", swf_dev_conninfo(dev), 1);
    setenv("SWF_KAFKA_BROKERS", swf_dev_brokers(dev), 1);
    char args[256];
    snprintf(args, sizeof(args), "register M %s", put("m.json", PASS));
    ran_t r = swf(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    ran_free(&r);
}

static void down(void)
{
    swf_dev_stop(dev);
    dev = NULL;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
    cr_assert_eq(system(cmd), 0);
}

/* The first value of `sql` on the dev database, as a number. */
static long long query_num(const char *sql)
{
    PGconn *c = PQconnectdb(swf_dev_conninfo(dev));
    cr_assert_eq(PQstatus(c), CONNECTION_OK, "%s", PQerrorMessage(c));
    PGresult *res = PQexec(c, sql);
    cr_assert_eq(PQresultStatus(res), PGRES_TUPLES_OK, "%s", PQerrorMessage(c));
    long long v = atoll(PQgetvalue(res, 0, 0));
    PQclear(res);
    PQfinish(c);
    return v;
}

/* Splits text into its lines (in place); returns how many. */
static size_t lines_of(char *text, char **lines, size_t max)
{
    size_t n = 0;
    for (char *save = NULL, *l = strtok_r(text, "\n", &save); l != NULL && n < max;
         l = strtok_r(NULL, "\n", &save))
        lines[n++] = l;
    return n;
}

#define MANY 1200 /* three batches of START_BATCH (500) */

Test(cli_start_inputs, many_lines_start_that_many_executions_which_deciders_run_to_completion,
     .timeout = 600)
{
    up(1);
    size_t cap = MANY * 32 + 1;
    char *text = malloc(cap);
    size_t len = 0;
    for (int k = 0; k < MANY; k++)
        len += (size_t)snprintf(text + len, cap - len, "{\"input\":{\"k\":%d}}\n", k);
    char args[256];
    snprintf(args, sizeof(args), "start M --inputs - < %s", put("many.jsonl", text));
    free(text);
    int64_t t0 = swf_time_now_ms();
    ran_t r = swf(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_str_eq(r.err, "");
    char **ids = calloc(MANY + 1, sizeof(*ids));
    cr_assert_eq(lines_of(r.out, ids, MANY + 1), MANY, "one id per line");
    for (int k = 0; k < MANY; k++)
        cr_assert_eq(strlen(ids[k]), 36, "line %d: %s", k + 1, ids[k]);

    /* Every one runs to its end: only the decide messages reach the decider. */
    long long done = 0;
    while ((done = query_num("SELECT count(*) FROM executions WHERE status = 'succeeded'")) <
               MANY &&
           swf_time_now_ms() - t0 < 300000)
        usleep(200000);
    cr_assert_eq(done, MANY);

    /* In order: output line k is the execution of input line k. */
    PGconn *c = PQconnectdb(swf_dev_conninfo(dev));
    PGresult *res = PQexec(c, "SELECT execution_id, (attributes#>>'{input,k}')::int FROM events"
                              " WHERE event_id = 1");
    cr_assert_eq(PQresultStatus(res), PGRES_TUPLES_OK, "%s", PQerrorMessage(c));
    cr_assert_eq(PQntuples(res), MANY);
    for (int row = 0; row < PQntuples(res); row++) {
        int k = atoi(PQgetvalue(res, row, 1));
        cr_assert(k >= 0 && k < MANY);
        cr_assert_str_eq(PQgetvalue(res, row, 0), ids[k], "line %d", k + 1);
    }
    PQclear(res);
    PQfinish(c);
    free(ids);
    ran_free(&r);
    down();
}

Test(cli_start_inputs, a_workflow_id_open_or_given_twice_is_refused_on_its_line_as_start_refuses_it,
     .timeout = 600)
{
    up(0); /* no decider: what starts stays open */
    ran_t one = swf("start M --workflow-id c");
    cr_assert_eq(one.status, 0, "%s", one.err);
    one.out[strcspn(one.out, "\n")] = '\0';
    ran_t again = swf("start M --workflow-id c");
    cr_assert_eq(again.status, 1);

    const char *f = put("ids.jsonl", "{\"workflowId\":\"a\"}\n"
                                     "{\"workflowId\":\"c\",\"input\":[1]}\n"
                                     "\n"
                                     "{\"input\":{\"x\":1},\"workflowId\":\"a\"}\n"
                                     "{\"input\":5}\n");
    char args[256];
    snprintf(args, sizeof(args), "start M --inputs %s", f);
    ran_t r = swf(args);
    cr_assert_eq(r.status, 1, "%s", r.err);
    char *lines[8];
    cr_assert_eq(lines_of(r.out, lines, 8), 4, "one line of output per line of input");
    cr_assert_str_eq(lines[1], one.out, "line 2 prints the open execution of c");
    cr_assert_str_eq(lines[2], lines[0], "line 4 prints the execution line 1 started");
    cr_assert_str_neq(lines[3], lines[0]);
    /* The same sentence as swf start's, after the line's name. */
    char expect[512];
    snprintf(expect, sizeof(expect), "swf start: %s:2: %s", f, again.err + strlen("swf start: "));
    cr_assert(strstr(r.err, expect) != NULL, "%s\nexpected: %s", r.err, expect);
    snprintf(expect, sizeof(expect),
             "swf start: %s:4: workflow id \"a\" is already running as execution %s; no new "
             "execution was started\n",
             f, lines[0]);
    cr_assert(strstr(r.err, expect) != NULL, "%s\nexpected: %s", r.err, expect);
    cr_assert_eq(query_num("SELECT count(*) FROM executions"), 3);
    cr_assert_eq(query_num("SELECT count(*) FROM executions WHERE workflow_id = 'a'"), 1);
    ran_free(&one);
    ran_free(&again);
    ran_free(&r);
    down();
}

/* One bad line after a good one: the status, and the message names it. */
typedef struct bad {
    const char *line;
    const char *says;
} bad_t;

Test(cli_start_inputs, bad_lines_are_named_with_their_number_and_nothing_starts, .timeout = 600)
{
    up(0);
    setenv("SWF_LIMIT_START_INPUT_BYTES", "1000", 1);
    char big_input[2100], long_line[70000], long_id[400];
    snprintf(big_input, sizeof(big_input), "{\"input\":\"%01990d\"}", 0);
    memset(long_line, ' ', sizeof(long_line) - 1);
    long_line[0] = '{';
    long_line[sizeof(long_line) - 2] = '}';
    long_line[sizeof(long_line) - 1] = '\0';
    snprintf(long_id, sizeof(long_id), "{\"workflowId\":\"%0300d\"}", 0);
    const bad_t bad[] = {
        {"{\"input\":", "not JSON"},
        {"{\"input\":1,\"input\":2}", "duplicate"},
        {"{\"input\":123456789012345678901234567890}", "the number 123456789012345678901234567890"},
        {"[1]", "a line is an object"},
        {"{\"orderId\":7}", "unknown member \"orderId\""},
        {"{\"workflowId\":7}", "workflowId is number, not a string"},
        {"{\"workflowId\":\"\"}", "workflow id must not be empty"},
        {long_id, "workflow id is longer than 256 bytes"},
        {big_input, "more than the limit of 1000 (SWF_LIMIT_START_INPUT_BYTES)"},
        {long_line, "the line is 69999 bytes, more than 66536"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        size_t n = strlen(bad[i].line) + 64;
        char *text = malloc(n);
        snprintf(text, n, "{\"input\":{}}\n\n%s\n{}\n", bad[i].line);
        char args[256];
        snprintf(args, sizeof(args), "start M --inputs %s", put("bad.jsonl", text));
        free(text);
        ran_t r = swf(args);
        cr_assert_eq(r.status, 1, "case %zu: %s", i, r.err);
        cr_assert_str_eq(r.out, "", "case %zu", i);
        char where[160];
        snprintf(where, sizeof(where), "swf start: %s/bad.jsonl:3: ", tmp);
        cr_assert(strncmp(r.err, where, strlen(where)) == 0, "case %zu: %s", i, r.err);
        cr_assert(strstr(r.err, bad[i].says) != NULL, "case %zu: %s", i, r.err);
        cr_assert(strstr(r.err, "\n  nothing was started\n") != NULL, "case %zu: %s", i, r.err);
        ran_free(&r);
    }

    /* More lines than the limit: the first one over it is named. */
    char args[256];
    snprintf(args, sizeof(args), "start M --inputs %s", put_empties("over.jsonl", 100001));
    ran_t r = swf(args);
    cr_assert_eq(r.status, 1, "%s", r.err);
    cr_assert(strstr(r.err, "over.jsonl:100001: more than 100000 lines") != NULL, "%s", r.err);
    ran_free(&r);

    /* A file that cannot be read: 3; a state machine that does not exist: 1. */
    r = swf("start M --inputs /nonexistent/inputs.jsonl");
    cr_assert_eq(r.status, 3, "%s", r.err);
    ran_free(&r);
    snprintf(args, sizeof(args), "start Nope --inputs %s", put("ok.jsonl", "{}\n"));
    r = swf(args);
    cr_assert_eq(r.status, 1, "%s", r.err);
    cr_assert(strstr(r.err, "no state machine \"Nope\"") != NULL, "%s", r.err);
    ran_free(&r);

    /* --inputs gives each line its own input and workflow id. */
    snprintf(args, sizeof(args), "start M --workflow-id w --inputs %s", put("ok.jsonl", "{}\n"));
    r = swf(args);
    cr_assert_eq(r.status, 2, "%s", r.err);
    cr_assert(strstr(r.err, "--workflow-id does not go with --inputs") != NULL, "%s", r.err);
    ran_free(&r);

    cr_assert_eq(query_num("SELECT count(*) FROM executions"), 0);
    unsetenv("SWF_LIMIT_START_INPUT_BYTES");
    down();
}

Test(cli_start_inputs, an_empty_file_starts_nothing_and_says_so, .timeout = 600)
{
    up(0);
    const char *files[] = {"", "\n \n\t\n"};
    for (size_t i = 0; i < 2; i++) {
        char args[256];
        snprintf(args, sizeof(args), "start M --inputs - < %s", put("empty.jsonl", files[i]));
        ran_t r = swf(args);
        cr_assert_eq(r.status, 0, "%s", r.err);
        cr_assert_str_eq(r.out, "");
        cr_assert_str_eq(r.err, "swf start: stdin holds no lines; nothing was started\n");
        ran_free(&r);
    }
    cr_assert_eq(query_num("SELECT count(*) FROM executions"), 0);
    down();
}

/* Kafka away or not configured: the executions start all the same (the
 * sweep of swf-history hands them to a decider), stderr says none was
 * notified, and the status is 0, as for `swf start`; after the first
 * batch fails, the others are not held up waiting for Kafka again. */
Test(cli_start_inputs, without_kafka_the_lines_start_and_stderr_says_no_decider_was_notified,
     .timeout = 600)
{
    up(0);
    char args[256];
    snprintf(args, sizeof(args), "start M --inputs %s", put_empties("k.jsonl", MANY));

    setenv("SWF_KAFKA_BROKERS", "127.0.0.1:1", 1); /* nothing listens there */
    setenv("SWF_KAFKA_SEND_TIMEOUT_MS", "1000", 1);
    int64_t t0 = swf_time_now_ms();
    ran_t r = swf(args);
    int64_t took = swf_time_now_ms() - t0;
    cr_assert_eq(r.status, 0, "%s", r.err);
    char **ids = calloc(MANY + 1, sizeof(*ids));
    cr_assert_eq(lines_of(r.out, ids, MANY + 1), MANY);
    free(ids);
    cr_assert(strstr(r.err, "swf start: 500 of the 500 executions just started (from ") != NULL,
              "%s", r.err);
    cr_assert(strstr(r.err, "nor will those started after them be") != NULL, "%s", r.err);
    cr_assert(took < 20000, "one wait for Kafka, not one a batch: %lld ms", (long long)took);
    ran_free(&r);

    unsetenv("SWF_KAFKA_BROKERS");
    r = swf(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_str_eq(r.err, "swf start: SWF_KAFKA_BROKERS is not set, so no decider is notified; "
                            "swf-history's sweep will hand the executions to a decider\n");
    ran_free(&r);
    cr_assert_eq(query_num("SELECT count(*) FROM executions WHERE status = 'open'"), 2 * MANY);
    unsetenv("SWF_KAFKA_SEND_TIMEOUT_MS");
    down();
}

/* The database refuses the second batch as a whole (a trigger the owner
 * put on executions, as a full disk or a lost connection would): the
 * first batch's lines were started and printed, the rest were not, and
 * stderr says which by line number. */
Test(cli_start_inputs, a_batch_the_database_refuses_ends_the_command_saying_which_lines_started,
     .timeout = 600)
{
    up(1);
    PGconn *c = PQconnectdb(swf_dev_owner_conninfo(dev));
    PGresult *res = PQexec(
        c, "CREATE FUNCTION test_full() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
           " IF (SELECT count(*) FROM executions) >= 500 THEN RAISE EXCEPTION 'disk full'; END IF;"
           " RETURN NEW; END $$;"
           " CREATE TRIGGER test_full BEFORE INSERT ON executions"
           " FOR EACH ROW EXECUTE FUNCTION test_full()");
    cr_assert_eq(PQresultStatus(res), PGRES_COMMAND_OK, "%s", PQerrorMessage(c));
    PQclear(res);
    PQfinish(c);

    char args[256];
    snprintf(args, sizeof(args), "start M --inputs %s", put_empties("full.jsonl", MANY));
    ran_t r = swf(args);
    cr_assert_eq(r.status, 3, "%s", r.err);
    char **ids = calloc(MANY + 1, sizeof(*ids));
    cr_assert_eq(lines_of(r.out, ids, MANY + 1), 500, "the first batch's ids: %s", r.err);
    free(ids);
    char expect[512];
    snprintf(expect, sizeof(expect), "swf start: %s:501-1000: disk full",
             args + strlen("start M --inputs "));
    cr_assert(strstr(r.err, expect) != NULL, "%s\nexpected: %s", r.err, expect);
    cr_assert(strstr(r.err, "\n  the lines before line 501 were started (their ids above); line "
                            "501 and those after it were not\n") != NULL,
              "%s", r.err);
    /* Those 500 run to their end from their decide messages. */
    int64_t t0 = swf_time_now_ms();
    while (query_num("SELECT count(*) FROM executions WHERE status = 'succeeded'") < 500 &&
           swf_time_now_ms() - t0 < 120000)
        usleep(200000);
    cr_assert_eq(query_num("SELECT count(*) FROM executions WHERE status = 'succeeded'"), 500);
    cr_assert_eq(query_num("SELECT count(*) FROM executions"), 500);
    ran_free(&r);
    down();
}
