/*
 * test_dev.c - `swf run --dev` (cli/dev.c) prints the same line as
 * `swf run --local` for the example order workflow (Task, Retry, Parallel,
 * Map, a one-hour Wait scaled down, Catch), on both of its mocks files,
 * and for a nested child given a Name.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "protocol/json.h"

/* The JSON line a `swf run` command prints (mode names it in messages). */
static json_object *line_of(const char *cmd, const char *mode)
{
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    static char line[1 << 16];
    size_t n = fread(line, 1, sizeof(line) - 1, p);
    line[n] = '\0';
    pclose(p);
    json_object *o = NULL;
    swf_error_t *err = swf_json_parse(line, n, sizeof(line), &o);
    cr_assert_null(err, "%s printed: %s", mode, line);
    return o;
}

static json_object *run(const char *mode, const char *mocks)
{
    char cmd[2048];
    snprintf(cmd, sizeof(cmd),
             "env -u SWF_DATABASE_URL -u SWF_KAFKA_BROKERS SWF_DEV_RUN_TIMEOUT=300 "
             "%s/swf run %s %s/examples/order.asl.json --input %s/examples/order.input.json "
             "--mocks %s/examples/%s",
             SWF_BINARY_DIR, mode, SWF_SOURCE_DIR, SWF_SOURCE_DIR, SWF_SOURCE_DIR, mocks);
    return line_of(cmd, mode);
}

Test(dev, run_dev_prints_what_run_local_prints, .timeout = 600)
{
    const char *mocks[] = {"order.mocks.json", "order.declined.mocks.json"};
    for (int i = 0; i < 2; i++) {
        json_object *dev = run("--dev", mocks[i]), *local = run("--local", mocks[i]);
        cr_assert(swf_json_equal(dev, local), "--dev %s, --local %s", swf_json_str(dev),
                  swf_json_str(local));
        json_object_put(dev);
        json_object_put(local);
    }
}

static void file_write(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

/* The line `swf run MODE DIR/parent.asl.json --mocks DIR/mocks.json` prints. */
static json_object *run_in(const char *mode, const char *dir)
{
    char cmd[2048];
    snprintf(cmd, sizeof(cmd),
             "env -u SWF_DATABASE_URL -u SWF_KAFKA_BROKERS SWF_DEV_RUN_TIMEOUT=120 %s/swf run %s "
             "%s/parent.asl.json --mocks %s/mocks.json",
             SWF_BINARY_DIR, mode, dir, dir);
    return line_of(cmd, mode);
}

/* A nested child given a Name (not the parent's id and '-') had its tasks
 * left unanswered by --dev's mock worker, which served the run's id and
 * the default child names only: the run waited until SWF_DEV_RUN_TIMEOUT.
 * Its tasks are on the run's own task lists (a child inherits the prefix),
 * and are answered from the mocks as --local answers them. The timeout is
 * run_dev_prints_what_run_local_prints's: with 300 s, the sanitizer build's
 * run of the suite (--jobs 2) ended with a leak of 48 bytes in Criterion's
 * runner when this test ended while that one still ran (seen each time). */
Test(dev, run_dev_serves_a_named_child_s_tasks_from_the_mocks_as_run_local_does, .timeout = 600)
{
    char dir[] = "/tmp/swf-devnest-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    file_write(dir, "parent.asl.json",
               "{\"StartAt\":\"Child\",\"States\":{\"Child\":{\"Type\":\"Task\","
               "\"Resource\":\"arn:aws:states:::states:startExecution.sync:2\","
               "\"Parameters\":{\"StateMachineArn\":\"arn:aws:states:us-east-1:123456789012:"
               "stateMachine:kid\",\"Name.$\":\"States.Format('kid-of-{}', $$.Execution.Name)\","
               "\"Input\":{\"n\":1}},\"OutputPath\":\"$.Output\",\"End\":true}}}");
    file_write(dir, "kid.asl.json",
               "{\"StartAt\":\"Work\",\"States\":{\"Work\":{\"Type\":\"Task\",\"Resource\":"
               "\"arn:aws:states:us-east-1:123456789012:activity:kidwork\",\"End\":true}}}");
    file_write(dir, "mocks.json", "{\"Work\":[{\"Return\":{\"done\":\"by the mock\"}}]}");
    json_object *dev = run_in("--dev", dir), *local = run_in("--local", dir);
    cr_assert_str_eq(swf_json_get_string(local, "status"), "SUCCEEDED", "%s", swf_json_str(local));
    cr_assert(swf_json_equal(dev, local), "--dev %s, --local %s", swf_json_str(dev),
              swf_json_str(local));
    json_object_put(dev);
    json_object_put(local);
    char rm[512];
    snprintf(rm, sizeof(rm), "rm -rf '%s'", dir);
    cr_assert_eq(system(rm), 0);
}

/* --dev answered a malformed mock differently from --local (a response
 * without Return, Throw or Echo was echoed, a Throw without Error became
 * States.TaskFailed); both now refuse it before anything starts. */
Test(dev, run_dev_refuses_malformed_mocks_like_run_local)
{
    const char *mocks[] = {"{\"Charge\":[{\"Bogus\":1}]}", "{\"Charge\":[{\"Throw\":{}}]}",
                           "{\"Charge\":{\"Return\":{}}}"};
    for (int i = 0; i < 3; i++) {
        char path[] = "/tmp/swf-dev-mocks-XXXXXX";
        int fd = mkstemp(path);
        cr_assert(fd >= 0);
        FILE *f = fdopen(fd, "w");
        fputs(mocks[i], f);
        fclose(f);
        for (int m = 0; m < 2; m++) {
            char cmd[2048];
            snprintf(cmd, sizeof(cmd),
                     "env -u SWF_DATABASE_URL -u SWF_KAFKA_BROKERS %s/swf run %s "
                     "%s/examples/order.asl.json --mocks %s >/dev/null 2>&1",
                     SWF_BINARY_DIR, m ? "--dev" : "--local", SWF_SOURCE_DIR, path);
            int rc = system(cmd);
            cr_assert(WIFEXITED(rc) && WEXITSTATUS(rc) == 3, "%s with %s: status %d",
                      m ? "--dev" : "--local", mocks[i], rc);
        }
        unlink(path);
    }
}

/* --deciders took atoi's reading: "two" ran with no decider at all. */
Test(dev, deciders_must_be_a_number)
{
    const char *bad[] = {"two", "", "2x", "-1", "17"};
    for (int i = 0; i < 5; i++) {
        char cmd[512];
        snprintf(cmd, sizeof(cmd), "timeout 30 %s/swf dev --deciders '%s' >/dev/null 2>&1",
                 SWF_BINARY_DIR, bad[i]);
        int rc = system(cmd);
        cr_assert(WIFEXITED(rc) && WEXITSTATUS(rc) == 2, "--deciders \"%s\": status %d", bad[i],
                  rc);
    }
}

Test(dev, kafka_must_name_brokers)
{
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "timeout 30 %s/swf dev --kafka '' >/dev/null 2>&1", SWF_BINARY_DIR);
    int rc = system(cmd);
    cr_assert(WIFEXITED(rc) && WEXITSTATUS(rc) == 2, "--kafka '': status %d", rc);
}

/* Runs a shell script with `sh -s -- BIN DIR` and returns its exit status. */
static int sh_script(const char *script, const char *dir)
{
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "sh -s -- '%s' '%s'", SWF_BINARY_DIR, dir);
    FILE *p = popen(cmd, "w");
    cr_assert_not_null(p);
    fputs(script, p);
    int rc = pclose(p);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* Whether DIR holds a cluster folder (swf-pg-*) still. */
static bool cluster_left_in(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "ls -d '%s'/swf-pg-* >/dev/null 2>&1", dir);
    return system(cmd) == 0;
}

/* Runs the script in dir, notes whether a cluster folder was left there,
 * and removes dir; returns the script's status. */
static int sh_script_then_clean(const char *script, const char *dir, bool *left)
{
    int rc = sh_script(script, dir);
    *left = cluster_left_in(dir);
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
    return rc;
}

/* The start of a script run by sh_script: `swf dev` in $d (with the
 * environment assignments ENV), its pid in $p, its exports read back. */
#define DEV_START(ENV)                                                                             \
    "bin=$1 d=$2\n"                                                                                \
    "SWF_PG_TMPDIR=\"$d\" " ENV "\"$bin/swf\" dev >\"$d/env\" 2>\"$d/err\" & p=$!\n"               \
    "for i in $(seq 1 1200); do\n"                                                                 \
    "  [ \"$(wc -l <\"$d/env\")\" -ge 2 ] && break\n"                                              \
    "  kill -0 $p 2>/dev/null || break\n"                                                          \
    "  sleep 0.1\n"                                                                                \
    "done\n"                                                                                       \
    "eval \"$(cat \"$d/env\")\"\n"

/* SWF_PG_TMPDIR with a space: `swf dev` failed to start (the conninfo did
 * not parse); its exports must also read back whole through eval. The
 * database URL it hands out is the runtime role's (cli/dev.c). */
Test(dev, exports_eval_back_with_a_space_in_the_folder, .timeout = 300)
{
    char dir[] = "/tmp/swf dev-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    cr_assert_eq(chmod(dir, 0755), 0);
    const char *script = DEV_START(
        "") "rc=0\n"
            "case \"$SWF_DATABASE_URL\" in *\"$d/swf-pg-\"*) ;; *) rc=10 ;; esac\n"
            "case \"$SWF_DATABASE_URL\" in *' user=swf_runtime') ;; *) rc=13 ;; esac\n"
            "[ $rc = 0 ] && { \"$bin/swf\" list --limit 1 >/dev/null 2>>\"$d/err\" || rc=11; }\n"
            "kill -TERM $p 2>/dev/null; wait $p || rc=12\n"
            "[ $rc = 0 ] || cat \"$d/err\" >&2\n"
            "exit $rc\n";
    bool left;
    int rc = sh_script_then_clean(script, dir, &left);
    cr_assert_eq(rc, 0,
                 "status %d (10: export not read back, 11: swf list failed, 12: swf dev "
                 "failed, 13: not the runtime role swf_runtime)",
                 rc);
    cr_assert_not(left, "a cluster folder is left in %s", dir);
}

/* SIGTERM while `swf dev` was starting (initdb) stopped it, but only after
 * it had printed its exports: a script waiting for them used a system that
 * was already gone. */
Test(dev, a_signal_during_the_start_prints_no_exports, .timeout = 300)
{
    char dir[] = "/tmp/swf-devsig-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    cr_assert_eq(chmod(dir, 0755), 0);
    const char *script = "bin=$1 d=$2\n"
                         "SWF_PG_TMPDIR=\"$d\" \"$bin/swf\" dev >\"$d/env\" 2>\"$d/err\" & p=$!\n"
                         "sleep 0.3\n"
                         "kill -TERM $p\n"
                         "wait $p; rc=$?\n"
                         "[ -s \"$d/env\" ] && { cat \"$d/env\" >&2; exit 20; }\n"
                         "exit $rc\n";
    bool left;
    int rc = sh_script_then_clean(script, dir, &left);
    cr_assert_eq(rc, 0, "status %d (20: the exports were printed)", rc);
    cr_assert_not(left, "a cluster folder is left in %s", dir);
}

/* With `swf dev` running and a real worker serving the same task list,
 * `swf run --dev` gave the worker's answer (it took the mocked tasks) instead
 * of the mock's: the run now serves its mocks on task lists of its own.
 * The run's execution is apart from the user's too: its own state machine
 * name and execution id prefix. Under the virtual clock, a one-hour Wait
 * moves $$.State.EnteredTime by one hour, as in `swf run --local`. */
Test(dev, run_dev_on_a_shared_system_answers_from_its_mocks_and_its_own_clock, .timeout = 300)
{
    char dir[] = "/tmp/swf-devshare-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    cr_assert_eq(chmod(dir, 0755), 0);
    const char *script = DEV_START(
        "SWF_DEV_TIME_SKIP=1 ") "\"$bin/swf-worker\" --task-list work --echo 2>\"$d/worker.err\" & "
                                "w=$!\n"
                                "cat >\"$d/task.json\" <<'J'\n"
                                "{\"StartAt\":\"T\",\"States\":{\"T\":{\"Type\":\"Task\",\"End\":"
                                "true,"
                                "\"Resource\":\"arn:aws:states:us-east-1:123456789012:activity:"
                                "work\"}}}\n"
                                "J\n"
                                "echo '{\"T\":[{\"Return\":\"mocked\"}]}' >\"$d/mocks.json\"\n"
                                "cat >\"$d/wait.json\" <<'J'\n"
                                "{\"StartAt\":\"W\",\"States\":{\"W\":{\"Type\":\"Wait\","
                                "\"Seconds\":3600,"
                                "\"Next\":\"P\"},\"P\":{\"Type\":\"Pass\",\"End\":true,"
                                "\"Parameters\":{"
                                "\"start.$\":\"$$.Execution.StartTime\",\"entered.$\":\"$$.State."
                                "EnteredTime\","
                                "\"machine.$\":\"$$.StateMachine.Name\",\"id.$\":\"$$.Execution."
                                "Name\"}}}}\n"
                                "J\n"
                                "rc=0\n"
                                "for i in 1 2 3; do\n"
                                "  SWF_DEV_RUN_TIMEOUT=120 \"$bin/swf\" run --dev \"$d/task.json\" "
                                "--mocks "
                                "\"$d/mocks.json\" >\"$d/out.$i\" 2>>\"$d/err\" || rc=10\n"
                                "  grep -q '\"status\": *\"SUCCEEDED\", *\"output\": *\"mocked\" "
                                "*}' \"$d/out.$i\" || "
                                "{ cat \"$d/out.$i\" >&2; rc=11; }\n"
                                "done\n"
                                "SWF_DEV_RUN_TIMEOUT=120 \"$bin/swf\" run --dev \"$d/wait.json\" "
                                ">\"$d/wait.out\" "
                                "2>>\"$d/err\" || rc=12\n"
                                "cat \"$d/wait.out\"\n"
                                "id=$(sed -n 's/.*\"id\": *\"\\([^\"]*\\)\".*/\\1/p' "
                                "\"$d/wait.out\")\n"
                                "\"$bin/swf\" history \"$id\" --json 2>>\"$d/err\" | grep "
                                "'\"TimerFired\"' || rc=14\n"
                                "kill -TERM $w; wait $w\n"
                                "kill -TERM $p 2>/dev/null; wait $p || rc=13\n"
                                "[ $rc = 0 ] || cat \"$d/err\" >&2\n"
                                "exit $rc\n";
    char cmd[4096];
    snprintf(cmd, sizeof(cmd), "sh -s -- '%s' '%s' <<'SCRIPT'\n%sSCRIPT\n", SWF_BINARY_DIR, dir,
             script);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    static char out[1 << 14];
    size_t n = fread(out, 1, sizeof(out) - 1, p);
    out[n] = '\0';
    int rc = pclose(p);
    char rm[512];
    snprintf(rm, sizeof(rm), "rm -rf '%s'", dir);
    cr_assert_eq(system(rm), 0);
    cr_assert(WIFEXITED(rc) && WEXITSTATUS(rc) == 0,
              "status %d (10/11: the mocked run failed or gave another answer, 12: the Wait "
              "run failed, 13: swf dev failed, 14: no TimerFired in swf history)",
              WIFEXITED(rc) ? WEXITSTATUS(rc) : -1);
    /* the result line, then the history's TimerFired */
    char *fired_line = strchr(out, '\n');
    cr_assert_not_null(fired_line, "printed: %s", out);
    *fired_line++ = '\0';
    json_object *line = NULL, *fired = NULL, *o;
    cr_assert_null(swf_json_parse(out, strlen(out), sizeof(out), &line), "printed: %s", out);
    cr_assert_null(swf_json_parse(fired_line, strlen(fired_line), sizeof(out), &fired),
                   "printed: %s", fired_line);
    cr_assert(swf_json_get(line, "output", &o), "%s", out);
    cr_assert_str_eq(swf_json_get_string(o, "machine"), "swf-run-dev");
    cr_assert_eq(strncmp(swf_json_get_string(o, "id"), "swf-run-dev-", 12), 0);
    struct tm start = {0}, entered = {0};
    int start_ms = 0, entered_ms = 0;
    cr_assert_eq(sscanf(swf_json_get_string(o, "start"), "%d-%d-%dT%d:%d:%d.%dZ", &start.tm_year,
                        &start.tm_mon, &start.tm_mday, &start.tm_hour, &start.tm_min, &start.tm_sec,
                        &start_ms),
                 7, "%s", out);
    cr_assert_eq(sscanf(swf_json_get_string(o, "entered"), "%d-%d-%dT%d:%d:%d.%dZ",
                        &entered.tm_year, &entered.tm_mon, &entered.tm_mday, &entered.tm_hour,
                        &entered.tm_min, &entered.tm_sec, &entered_ms),
                 7, "%s", out);
    start.tm_year -= 1900;
    entered.tm_year -= 1900;
    start.tm_mon--;
    entered.tm_mon--;
    long long ms = (long long)(timegm(&entered) - timegm(&start)) * 1000 + entered_ms - start_ms;
    cr_assert_eq(ms, 3600000LL, "EnteredTime - StartTime is %lld ms, not one hour: %s", ms, out);
    cr_assert_str_eq(swf_json_get_string(fired, "eventTimestamp"),
                     swf_json_get_string(o, "entered"),
                     "swf history shows the timer fired at the virtual time: %s", fired_line);
    json_object_put(line);
    json_object_put(fired);
}

/* A second worker that joined a task list's group after it had formed
 * stopped every worker of that list for 44 s: librdkafka's mock cluster
 * makes a formed group's rebalance wait the session timeout less a second
 * (librdkafka's 45 s by default) while the members have given up their
 * partitions. `swf dev` now gives its clients 5 s and exports it, so the
 * rebalance ends within seconds (4 s, and as much again each time the
 * mock's SyncGroup race makes a member rejoin, about one time in four).
 * Worker b starts once a is serving; after 4 s a has heard of the
 * rebalance (a heartbeat is at most 3 s apart) and given up its
 * partitions; an execution started then took the rest of the 44 s. This
 * test checks the export and that the task list serves again after the
 * join; how long the rebalance takes is measured, not asserted (the
 * machines are shared: a busy one loses the mock's race several times in
 * a row), by scripts/bench-processes.sh ("the longest pause"). */
Test(dev, a_worker_joining_a_formed_group_gets_the_exported_session_and_serves, .timeout = 300)
{
    char dir[] = "/tmp/swf-devjoin-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    cr_assert_eq(chmod(dir, 0755), 0);
    const char *script = "unset SWF_KAFKA_SESSION_TIMEOUT_MS\n" DEV_START(
        "") "rc=0\n"
            "[ \"$SWF_KAFKA_SESSION_TIMEOUT_MS\" = 5000 ] || rc=10\n"
            "echo '{\"StartAt\":\"T\",\"States\":{\"T\":{\"Type\":\"Task\",\"End\":true,"
            "\"Resource\":\"arn:aws:states:::activity:join\"}}}' >\"$d/one.json\"\n"
            "\"$bin/swf\" register one \"$d/one.json\" >/dev/null 2>>\"$d/err\" || rc=11\n"
            "\"$bin/swf-worker\" --task-list join --echo --identity a 2>\"$d/a.err\" & a=$!\n"
            "timeout 60 \"$bin/swf\" start one --wait >/dev/null 2>>\"$d/err\" || rc=12\n"
            "\"$bin/swf-worker\" --task-list join --echo --identity b 2>\"$d/b.err\" & b=$!\n"
            "sleep 4\n"
            "timeout 150 \"$bin/swf\" start one --wait >/dev/null 2>>\"$d/err\" || rc=13\n"
            "kill -TERM $a $b; wait $a $b\n"
            "kill -TERM $p 2>/dev/null; wait $p || rc=14\n"
            "[ $rc = 0 ] || cat \"$d/err\" >&2\n"
            "exit $rc\n";
    bool left;
    int rc = sh_script_then_clean(script, dir, &left);
    cr_assert_eq(rc, 0,
                 "status %d (10: no SWF_KAFKA_SESSION_TIMEOUT_MS=5000 in the exports, 11: register "
                 "failed, 12: the first execution failed, 13: the execution after the join took "
                 "over 150 s or failed, 14: swf dev failed)",
                 rc);
    cr_assert_not(left, "a cluster folder is left in %s", dir);
}
