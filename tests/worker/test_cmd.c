/* test_cmd.c - swf-worker (worker/cmd.c), the real program against the mock
 * cluster: results and failures map to the documented names, heartbeats go
 * out while a command runs, commands run concurrently, SIGTERM drains. */
#include "tests/worker/kafka_fixture.h"

#include <sys/stat.h>

#include "protocol/message.h"

#define LIST "cmd"
#define BIN SWF_BINARY_DIR "/swf-worker"

TestSuite(swf_worker, .timeout = 300);

/* A temporary folder with one script per activity id. */
static char *scripts_dir(void)
{
    char *d = strdup("/tmp/swf-test-cmd-XXXXXX");
    cr_assert_not_null(mkdtemp(d));
    return d;
}

static void script(const char *dir, const char *id, const char *body)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s.sh", dir, id);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(body, f);
    fclose(f);
}

static void rm_rf(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

static void publish(fx_kafka_t *k, const char *exec, const char *act, const char *input, double hb)
{
    json_object *t = fx_task(exec, act, input, hb);
    fx_publish_task(k, LIST, t);
    json_object_put(t);
}

/* Reads answers (skipping heartbeats) until n came; fills by activity id. */
static void read_answers(rd_kafka_t *inbox, const char *exec, const char *const *ids, size_t n,
                         json_object **out, int *heartbeats)
{
    size_t got = 0;
    for (int i = 0; i < 200 && got < n; i++) {
        json_object *m = fx_read(inbox, 60000, NULL);
        cr_assert_not_null(m, "only %zu of %zu answers came", got, n);
        if (strcmp(swf_json_get_string(m, "type"), "activity.started") == 0) {
            cr_assert_not_null(fx_answer_activity(m, exec, ids, n), "a start of another task");
            json_object_put(m);
            continue;
        }
        if (strcmp(swf_json_get_string(m, "type"), "activity.heartbeat") == 0) {
            if (heartbeats)
                (*heartbeats)++;
            json_object_put(m);
            continue;
        }
        const char *id = fx_answer_activity(m, exec, ids, n);
        cr_assert_not_null(id, "an answer with an unknown token: %s", swf_json_str(m));
        size_t at = 0;
        while (strcmp(ids[at], id) != 0)
            at++;
        cr_assert_null(out[at], "two answers for %s", id);
        out[at] = m;
        got++;
    }
}

static void assert_failed(json_object *m, const char *error, const char *cause)
{
    cr_assert_str_eq(swf_json_get_string(m, "type"), "activity.failed", "%s", swf_json_str(m));
    cr_assert_str_eq(swf_json_get_string(m, "error"), error);
    if (cause)
        cr_assert_str_eq(swf_json_get_string(m, "cause"), cause);
}

static void assert_result(json_object *m, const char *want)
{
    cr_assert_str_eq(swf_json_get_string(m, "type"), "activity.completed", "%s", swf_json_str(m));
    json_object *r = NULL, *w = NULL;
    cr_assert(swf_json_get(m, "result", &r));
    cr_assert_null(swf_json_parse(want, strlen(want), 1 << 20, &w));
    cr_assert(swf_json_equal(r, w), "result %s, want %s", swf_json_str(r), want);
    json_object_put(w);
}

Test(swf_worker, results_and_failures_map_to_the_documented_error_names)
{
    fx_kafka_t k;
    fx_kafka_start(&k, LIST);
    char *dir = scripts_dir();
    const char *ids[] = {"upper", "exit3",     "jsonerr", "signal", "notjson",
                         "env",   "longcause", "empty",   "binary", "widecause"};
    script(dir, "upper", "tr a-z A-Z\n");
    script(dir, "exit3", "cat >/dev/null; echo boom >&2; exit 3\n");
    script(dir, "jsonerr",
           "echo noise >&2; echo '{\"error\":\"my.Err\",\"cause\":\"why\"}' >&2; exit 1\n");
    script(dir, "signal", "kill -9 $$\n");
    script(dir, "notjson", "echo not json\n");
    script(dir, "env",
           "printf '[\"%s\",\"%s\",%s]' \"$SWF_EXECUTION_ID\" \"$SWF_STATE\" "
           "\"$SWF_ATTEMPT\"\n");
    script(dir, "longcause",
           "i=0; while [ $i -lt 300 ]; do printf 'xxxxxxxxxx' >&2; "
           "i=$((i+1)); done; printf END >&2; exit 2\n");
    script(dir, "empty", "true\n");
    /* stderr that is not text, and a 1 KiB tail that would start inside a
     * character (600 two-byte characters and an x: 1,201 bytes) */
    script(dir, "binary", "printf 'bad \\377\\376 bytes' >&2; exit 1\n");
    script(dir, "widecause",
           "i=0; while [ $i -lt 600 ]; do printf '\\303\\251' >&2; "
           "i=$((i+1)); done; printf x >&2; exit 1\n");
    for (size_t i = 0; i < 10; i++)
        publish(&k, "exec-c1", ids[i], strcmp(ids[i], "upper") ? "{}" : "\"abc\"", 0);

    char command[600];
    snprintf(command, sizeof(command), ". '%s'/\"$SWF_ACTIVITY_ID\".sh", dir);
    char *argv[] = {BIN, "--task-list", LIST, "--exec", command, "--concurrency", "3", NULL};
    pid_t pid = fx_spawn(&k, argv);
    rd_kafka_t *inbox = fx_reader(&k, "swf.inbox", 1);
    json_object *ans[10] = {0};
    read_answers(inbox, "exec-c1", ids, 10, ans, NULL);
    int status = fx_stop(pid, SIGTERM, 60000);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "swf-worker exit status %d", status);

    assert_result(ans[0], "\"ABC\"");
    assert_failed(ans[1], "swf.ExitCode.3", "boom\n");
    assert_failed(ans[2], "my.Err", "why");
    assert_failed(ans[3], "swf.Signal.9", NULL);
    assert_failed(ans[4], "swf.InvalidOutput", NULL);
    assert_result(ans[5], "[\"exec-c1\",\"Upper\",0]");
    assert_failed(ans[6], "swf.ExitCode.2", NULL);
    const char *cause = swf_json_get_string(ans[6], "cause");
    cr_assert_eq(strlen(cause), 1024, "cause is the last 1 KiB of stderr");
    cr_assert_str_eq(cause + 1021, "END");
    assert_failed(ans[7], "swf.InvalidOutput", NULL);
    /* The answers are UTF-8 (fx_read parsed them): bad bytes became U+FFFD,
     * and the tail begins with the next whole character. */
    assert_failed(ans[8], "swf.ExitCode.1", "bad \xEF\xBF\xBD\xEF\xBF\xBD bytes");
    cause = swf_json_get_string(ans[9], "cause");
    cr_assert_eq(strlen(cause), 1023);
    cr_assert_eq(memcmp(cause, "\xC3\xA9", 2), 0);
    cr_assert_str_eq(cause + 1022, "x");
    for (size_t i = 0; i < 10; i++) {
        cr_assert_not_null(swf_json_get_string(ans[i], "identity"));
        json_object_put(ans[i]);
    }
    fx_reader_free(inbox);
    rm_rf(dir);
    free(dir);
    fx_kafka_stop(&k);
}

Test(swf_worker, heartbeats_go_out_while_a_command_runs)
{
    fx_kafka_t k;
    fx_kafka_start(&k, LIST);
    publish(&k, "exec-c2", "1", "{}", 0.3); /* a heartbeat every 0.1 s */
    publish(&k, "exec-c2", "2", "{}", 0);   /* no heartbeatTimeout: none */
    char *argv[] = {BIN, "--task-list", LIST, "--exec", "sleep 2; echo '{\"ok\":1}'", NULL};
    pid_t pid = fx_spawn(&k, argv);
    rd_kafka_t *inbox = fx_reader(&k, "swf.inbox", 1);
    const char *ids[] = {"1", "2"};
    /* Tasks of one execution share a partition, so they run in order: the
     * heartbeats of task 1 all come before its answer and task 2's. */
    json_object *ans[2] = {0};
    int hb = 0;
    read_answers(inbox, "exec-c2", ids, 1, ans, &hb);
    cr_assert_geq(hb, 1, "no heartbeat while the command ran");
    assert_result(ans[0], "{\"ok\":1}");
    int hb2 = 0;
    read_answers(inbox, "exec-c2", ids + 1, 1, ans + 1, &hb2);
    cr_assert_eq(hb2, 0, "heartbeats for a task without heartbeatTimeout");
    fx_stop(pid, SIGTERM, 60000);
    json_object_put(ans[0]);
    json_object_put(ans[1]);
    fx_reader_free(inbox);
    fx_kafka_stop(&k);
}

Test(swf_worker, commands_run_concurrently_up_to_the_limit)
{
    fx_kafka_t k;
    fx_kafka_start(&k, LIST);
    char *dir = scripts_dir();
    /* Each command marks itself started and waits (bounded) for its peer;
     * run one at a time, the first would see only itself. */
    char command[700];
    snprintf(command, sizeof(command),
             "touch '%s'/\"$SWF_ACTIVITY_ID\"; i=0; while [ $(ls '%s' | wc -l) -lt 2 ] && "
             "[ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done; ls '%s' | wc -l",
             dir, dir, dir);
    publish(&k, "exec-c3", "a", "{}", 0);
    publish(&k, "exec-c3", "b", "{}", 0);
    char *argv[] = {BIN, "--task-list", LIST, "--exec", command, "--concurrency", "2", NULL};
    pid_t pid = fx_spawn(&k, argv);
    rd_kafka_t *inbox = fx_reader(&k, "swf.inbox", 1);
    const char *ids[] = {"a", "b"};
    json_object *ans[2] = {0};
    read_answers(inbox, "exec-c3", ids, 2, ans, NULL);
    assert_result(ans[0], "2");
    assert_result(ans[1], "2");
    fx_stop(pid, SIGTERM, 60000);
    json_object_put(ans[0]);
    json_object_put(ans[1]);
    fx_reader_free(inbox);
    rm_rf(dir);
    free(dir);
    fx_kafka_stop(&k);
}

Test(swf_worker, sigterm_lets_the_running_command_finish_and_answers_it)
{
    fx_kafka_t k;
    fx_kafka_start(&k, LIST);
    char *dir = scripts_dir();
    char command[800], started[600];
    snprintf(started, sizeof(started), "%s/started", dir);
    snprintf(command, sizeof(command), "touch '%s'; sleep 1; echo '\"done\"'", started);
    publish(&k, "exec-c4", "1", "{}", 0);
    char *argv[] = {BIN, "--task-list", LIST, "--exec", command, NULL};
    pid_t pid = fx_spawn(&k, argv);
    struct stat st;
    for (int i = 0; i < 600 && stat(started, &st) != 0; i++)
        fx_sleep_ms(100);
    cr_assert_eq(stat(started, &st), 0, "the command never started");
    int status = fx_stop(pid, SIGTERM, 60000);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "exit status %d", status);
    rd_kafka_t *inbox = fx_reader(&k, "swf.inbox", 1);
    const char *ids[] = {"1"};
    json_object *ans[1] = {0};
    read_answers(inbox, "exec-c4", ids, 1, ans, NULL);
    assert_result(ans[0], "\"done\"");
    json_object_put(ans[0]);
    fx_reader_free(inbox);
    rm_rf(dir);
    free(dir);
    fx_kafka_stop(&k);
}

Test(swf_worker, echo_answers_every_task_with_its_input)
{
    fx_kafka_t k;
    fx_kafka_start(&k, LIST);
    publish(&k, "exec-c5", "1", "{\"a\":[1,2,{\"b\":null}]}", 0);
    char *argv[] = {BIN, "--task-list", LIST, "--echo", NULL};
    pid_t pid = fx_spawn(&k, argv);
    rd_kafka_t *inbox = fx_reader(&k, "swf.inbox", 1);
    const char *ids[] = {"1"};
    json_object *ans[1] = {0};
    read_answers(inbox, "exec-c5", ids, 1, ans, NULL);
    assert_result(ans[0], "{\"a\":[1,2,{\"b\":null}]}");
    fx_stop(pid, SIGINT, 60000);
    json_object_put(ans[0]);
    fx_reader_free(inbox);
    fx_kafka_stop(&k);
}

Test(swf_worker, one_process_serves_several_task_lists)
{
    fx_kafka_t k;
    fx_kafka_start(&k, LIST);
    cr_assert_eq(rd_kafka_mock_topic_create(k.mock, "swf.tasks." LIST "2", FX_TASK_PARTITIONS, 1),
                 0);
    json_object *t = fx_task("exec-c6", "on-first", "{}", 0);
    fx_publish_task(&k, LIST, t);
    json_object_put(t);
    t = fx_task("exec-c6", "on-second", "{}", 0);
    fx_publish_task(&k, LIST "2", t);
    json_object_put(t);
    char *argv[] = {BIN,
                    "--task-list",
                    LIST,
                    "--task-list",
                    LIST "2",
                    "--exec",
                    "printf '\"%s\"' \"$SWF_ACTIVITY_ID\"",
                    NULL};
    pid_t pid = fx_spawn(&k, argv);
    rd_kafka_t *inbox = fx_reader(&k, "swf.inbox", 1);
    const char *ids[] = {"on-first", "on-second"};
    json_object *ans[2] = {0};
    read_answers(inbox, "exec-c6", ids, 2, ans, NULL);
    assert_result(ans[0], "\"on-first\"");
    assert_result(ans[1], "\"on-second\"");
    int status = fx_stop(pid, SIGTERM, 60000);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "swf-worker exit status %d", status);
    json_object_put(ans[0]);
    json_object_put(ans[1]);
    fx_reader_free(inbox);
    fx_kafka_stop(&k);
}

Test(swf_worker, usage_errors_exit_2)
{
    fx_kafka_t k;
    fx_kafka_start(&k, LIST);
    char *no_mode[] = {BIN, "--task-list", LIST, NULL};
    cr_assert_eq(WEXITSTATUS(fx_stop(fx_spawn(&k, no_mode), 0, 30000)), 2);
    char *both[] = {BIN, "--task-list", LIST, "--echo", "--exec", "true", NULL};
    cr_assert_eq(WEXITSTATUS(fx_stop(fx_spawn(&k, both), 0, 30000)), 2);
    char *bad_n[] = {BIN, "--task-list", LIST, "--echo", "--concurrency", "0", NULL};
    cr_assert_eq(WEXITSTATUS(fx_stop(fx_spawn(&k, bad_n), 0, 30000)), 2);
    char *bad_list[] = {BIN, "--task-list", "a/b", "--echo", NULL};
    cr_assert_eq(WEXITSTATUS(fx_stop(fx_spawn(&k, bad_list), 0, 30000)), 1);
    fx_kafka_stop(&k);
}

/* ---- what a command or Kafka can do that the tests above did not cover ----
 * Each stops its swf-worker before asserting, so a failure leaves no process. */

/* The next answer (heartbeats counted and skipped) within max_ms, or NULL. */
static json_object *next_answer(rd_kafka_t *inbox, int max_ms, int *heartbeats)
{
    for (;;) {
        json_object *m = fx_read(inbox, max_ms, NULL);
        if (m != NULL && strcmp(swf_json_get_string(m, "type"), "activity.started") == 0) {
            json_object_put(m); /* swf-worker took the task */
            continue;
        }
        if (m == NULL || strcmp(swf_json_get_string(m, "type"), "activity.heartbeat") != 0)
            return m;
        if (heartbeats)
            (*heartbeats)++;
        json_object_put(m);
    }
}

/* Ends swf-worker whatever it is doing; true when it was still running. */
static bool kill_worker(pid_t pid, int *status)
{
    bool alive = waitpid(pid, status, WNOHANG) == 0;
    if (alive) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
    return alive;
}

/* What one task did to a swf-worker --exec COMMAND. */
typedef struct one_run {
    json_object *answer; /* the first answer, or NULL */
    int heartbeats;      /* before it */
    bool alive;          /* swf-worker was still running then */
    int status;          /* else how it ended */
    int zombies;         /* unreaped children of swf-worker then */
} one_run_t;

/* Publishes one task (heartbeatTimeout hb, startToCloseTimeout stc; 0:
 * none), runs swf-worker --exec command on it, waits up to wait_ms for the
 * answer, then ends swf-worker whatever it is doing, so that a failing
 * assertion leaves no process behind. */
static one_run_t run_one(const char *execution_id, double hb, int stc, const char *command,
                         int wait_ms)
{
    fx_kafka_t k;
    fx_kafka_start(&k, LIST);
    json_object *t = fx_task(execution_id, "1", "{}", hb);
    if (stc > 0)
        json_object_object_add(t, "startToCloseTimeout", json_object_new_int(stc));
    fx_publish_task(&k, LIST, t);
    json_object_put(t);
    char *argv[] = {BIN, "--task-list", LIST, "--exec", (char *)command, NULL};
    pid_t pid = fx_spawn(&k, argv);
    rd_kafka_t *inbox = fx_reader(&k, "swf.inbox", 1);
    one_run_t r = {0};
    r.answer = next_answer(inbox, wait_ms, &r.heartbeats);
    char ps[128];
    snprintf(ps, sizeof(ps), "ps -o stat= --ppid %d | grep -c '^Z'", (int)pid);
    FILE *f = popen(ps, "r");
    if (f != NULL) {
        if (fscanf(f, "%d", &r.zombies) != 1)
            r.zombies = 0;
        pclose(f);
    }
    r.alive = kill_worker(pid, &r.status);
    fx_reader_free(inbox);
    fx_kafka_stop(&k);
    return r;
}

/* Runs a command that fails after writing 60,000 bytes of stderr ending in
 * END, and checks swf-worker lives and answers with the last 1 KiB. */
static void expect_stderr_tail(const char *execution_id, const char *command)
{
    one_run_t r = run_one(execution_id, 0, 0, command, 30000);
    cr_expect(r.alive, "swf-worker died: %s %d", WIFSIGNALED(r.status) ? "signal" : "exit status",
              WIFSIGNALED(r.status) ? WTERMSIG(r.status) : WEXITSTATUS(r.status));
    cr_assert_not_null(r.answer, "no answer");
    assert_failed(r.answer, "swf.ExitCode.1", NULL);
    const char *cause = swf_json_get_string(r.answer, "cause");
    cr_assert_eq(strlen(cause), 1024);
    cr_assert_str_eq(cause + 1021, "END");
    json_object_put(r.answer);
}

/* A command whose stderr comes in reads larger than the 8 KiB tail kept of
 * it: drain() copied the newest 8 KiB into a buffer never allocated (NULL on
 * the first read)... */
Test(swf_worker, stderr_over_8k_in_one_read_is_kept_as_its_tail)
{
    expect_stderr_tail("exec-r1", "f=$(mktemp); head -c 60000 /dev/zero | tr '\\0' x > $f; "
                                  "printf END >> $f; cat $f >&2; rm -f $f; exit 1");
}

/* ...or, after a small first read, into the 4 KiB buffer that read had
 * allocated (a heap overflow). */
Test(swf_worker, stderr_over_8k_after_a_small_read_is_kept_as_its_tail)
{
    expect_stderr_tail("exec-r1b", "f=$(mktemp); head -c 60000 /dev/zero | tr '\\0' x > $f; "
                                   "printf END >> $f; printf y >&2; sleep 0.5; cat $f >&2; "
                                   "rm -f $f; exit 1");
}

/* A command that closes stdout and stderr and then hangs: the timeout the
 * task set must still kill it (KAFKA.md: States.Timeout), and heartbeats
 * must go on while it runs. run_job left its poll loop once both pipes
 * closed and blocked in waitpid() until the command ended by itself. */
Test(swf_worker, a_command_that_closes_its_output_and_hangs_is_killed_at_its_timeout)
{
    /* heartbeat every 0.2 s, killed after 2 s */
    one_run_t r = run_one("exec-r2", 0.6, 2, "exec >&- 2>&-; sleep 25", 15000);
    cr_expect_gt(r.heartbeats, 2, "%d heartbeat(s) while the command ran", r.heartbeats);
    cr_assert_not_null(r.answer, "no answer 15 s after a 2 s startToCloseTimeout (%d heartbeats)",
                       r.heartbeats);
    assert_failed(r.answer, "States.Timeout", NULL);
    json_object_put(r.answer);
}

/* A command that leaves a background child holding its stdout: the command
 * printed its result and exited at once, yet it is answered only when the
 * child ends (or is killed at the task's timeout: States.Timeout), and the
 * shell stays an unreaped zombie meanwhile. */
Test(swf_worker, a_background_child_holding_stdout_does_not_hold_the_answer)
{
    one_run_t r = run_one("exec-r3", 0, 20, "sleep 25 & echo '{\"ok\":1}'", 10000);
    cr_expect_eq(r.zombies, 0, "%d zombie child(ren) of swf-worker", r.zombies);
    cr_assert_not_null(r.answer, "no answer 10 s after the command printed its result and exited");
    assert_result(r.answer, "{\"ok\":1}");
    json_object_put(r.answer);
}

/* A result holding \u0000 is valid JSON but an answer the decider refuses
 * (KAFKA.md, "Dead letters": the history cannot store it), so the task would
 * stay unanswered until its timeout. It must be a failure the state machine
 * sees (swf.InvalidOutput), not a completion that is dead-lettered. */
Test(swf_worker, a_result_holding_u0000_is_not_sent_as_a_completion)
{
    one_run_t r = run_one("exec-r4", 0, 0, "printf '{\"a\":\"x\\\\u0000y\"}'", 30000);
    cr_assert_not_null(r.answer);
    const char *text = swf_json_str(r.answer);
    swf_msg_t msg;
    swf_error_t *err = swf_msg_parse(text, strlen(text), SWF_TOKEN_DEV_SECRET, &msg);
    cr_expect_null(err, "the decider refuses the answer %s: %s", text,
                   err ? swf_error_message(err) : "");
    if (err == NULL)
        swf_msg_clear(&msg);
    swf_error_free(err);
    assert_failed(r.answer, "swf.InvalidOutput", NULL);
    json_object_put(r.answer);
}

/* --echo answers with the task's own input. A task within the 1 MiB limit
 * whose answer is not (the answer carries the identity, up to 256 bytes,
 * where the task had its short ids) was left unanswered: echo logs the
 * SWF_E_LIMIT and frees the task, which abandons it (no answer ever, and the
 * partition's commits stop there until a restart, which does the same). As
 * --exec does, it must answer swf.OutputTooLarge. */
Test(swf_worker, echo_answers_a_task_whose_echo_is_too_large)
{
    fx_kafka_t k;
    fx_kafka_start(&k, LIST);
    json_object *t = fx_task("e", "1", "\"\"", 0);
    size_t base = strlen(swf_json_str(t));
    size_t fill = SWF_MSG_MAX_BYTES - 16 - base;
    char *s = malloc(fill + 1);
    cr_assert_not_null(s);
    memset(s, 'a', fill);
    s[fill] = '\0';
    json_object_object_add(t, "input", json_object_new_string(s));
    free(s);
    const char *text = swf_json_str(t);
    cr_assert_leq(strlen(text), SWF_MSG_MAX_BYTES);
    /* a producer that may send a whole 1 MiB message, as the decider's */
    char errstr[512];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "bootstrap.servers", k.brokers, errstr, sizeof(errstr));
    rd_kafka_conf_set(conf, "message.max.bytes", "2000000", errstr, sizeof(errstr));
    rd_kafka_t *p = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
    cr_assert_not_null(p);
    cr_assert_eq(rd_kafka_producev(p, RD_KAFKA_V_TOPIC("swf.tasks." LIST), RD_KAFKA_V_KEY("e", 1),
                                   RD_KAFKA_V_VALUE((void *)text, strlen(text)),
                                   RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END),
                 0);
    cr_assert_eq(rd_kafka_flush(p, 30000), 0);
    rd_kafka_destroy(p);
    json_object_put(t);
    char identity[257];
    memset(identity, 'w', 256);
    identity[256] = '\0';
    char *argv[] = {BIN, "--task-list", LIST, "--echo", "--identity", identity, NULL};
    pid_t pid = fx_spawn(&k, argv);
    rd_kafka_t *inbox = fx_reader(&k, "swf.inbox", 1);
    json_object *ans = next_answer(inbox, 20000, NULL);
    kill_worker(pid, NULL);
    fx_reader_free(inbox);
    fx_kafka_stop(&k);
    cr_assert_not_null(ans, "the task was never answered");
    assert_failed(ans, "swf.OutputTooLarge", NULL);
    json_object_put(ans);
}

/* KAFKA.md: "the answer must fit in a 1 MiB message". The worker's producer
 * keeps librdkafka's message.max.bytes (1,000,000), so a result of 1,020,000
 * bytes, well within 1 MiB, was refused as swf.OutputTooLarge. */
Test(swf_worker, a_result_within_1mib_is_sent)
{
    one_run_t r = run_one(
        "exec-r6", 0, 0, "printf '\"'; head -c 1020000 /dev/zero | tr '\\0' x; printf '\"'", 30000);
    cr_assert_not_null(r.answer);
    cr_assert_str_eq(swf_json_get_string(r.answer, "type"), "activity.completed", "%s: %s",
                     swf_json_get_string(r.answer, "error"),
                     swf_json_get_string(r.answer, "cause"));
    json_object_put(r.answer);
}
