/*
 * test_dev.c - `swf run --dev` (cli/dev.c) prints the same line as
 * `swf run --local` for the example order workflow (Task, Retry, Parallel,
 * Map, a one-hour Wait scaled down, Catch), on both of its mocks files.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "protocol/json.h"

static json_object *run(const char *mode, const char *mocks)
{
    char cmd[2048];
    snprintf(cmd, sizeof(cmd),
             "env -u SWF_DATABASE_URL -u SWF_KAFKA_BROKERS SWF_DEV_RUN_TIMEOUT=300 "
             "%s/swf run %s %s/examples/order.asl.json --input %s/examples/order.input.json "
             "--mocks %s/examples/%s",
             SWF_BINARY_DIR, mode, SWF_SOURCE_DIR, SWF_SOURCE_DIR, SWF_SOURCE_DIR, mocks);
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

/* SWF_PG_TMPDIR with a space: `swf dev` failed to start (the conninfo did
 * not parse); its exports must also read back whole through eval. */
Test(dev, exports_eval_back_with_a_space_in_the_folder, .timeout = 300)
{
    char dir[] = "/tmp/swf dev-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    cr_assert_eq(chmod(dir, 0755), 0);
    const char *script =
        "bin=$1 d=$2\n"
        "SWF_PG_TMPDIR=\"$d\" \"$bin/swf\" dev >\"$d/env\" 2>\"$d/err\" & p=$!\n"
        "for i in $(seq 1 1200); do\n"
        "  [ \"$(wc -l <\"$d/env\")\" -ge 2 ] && break\n"
        "  kill -0 $p 2>/dev/null || break\n"
        "  sleep 0.1\n"
        "done\n"
        "eval \"$(cat \"$d/env\")\"\n"
        "rc=0\n"
        "case \"$SWF_DATABASE_URL\" in *\"$d/swf-pg-\"*) ;; *) rc=10 ;; esac\n"
        "[ $rc = 0 ] && { \"$bin/swf\" list --limit 1 >/dev/null 2>>\"$d/err\" || rc=11; }\n"
        "kill -TERM $p 2>/dev/null; wait $p || rc=12\n"
        "[ $rc = 0 ] || cat \"$d/err\" >&2\n"
        "exit $rc\n";
    bool left;
    int rc = sh_script_then_clean(script, dir, &left);
    cr_assert_eq(rc, 0,
                 "status %d (10: export not read back, 11: swf list failed, 12: swf dev "
                 "failed)",
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
