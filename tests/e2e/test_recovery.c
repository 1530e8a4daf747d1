/*
 * test_recovery.c - the distributed runtime rides out its infrastructure
 * failing under it: the Kafka broker taken down and brought back, the
 * PostgreSQL server restarted, and both at once, each in the middle of a
 * run of hundreds of executions.
 *
 * Everything is real: the throwaway PostgreSQL cluster (history/cluster.h),
 * librdkafka's mock Kafka cluster (or a real Kafka: real_kafka.h), decider
 * daemons in one consumer group (two, or one where a rebalance could hide a
 * loss), swf-history firing timers and republishing the
 * outbox, and an activity worker built on the worker library (worker/worker.h), all from the dev
 * harness (cli/dev.h). Nothing is restarted by the test but the failed component: the daemons must
 * notice, wait, reconnect and go on by themselves.
 *
 * The workflow has three activity steps on two task lists, a retry (every
 * third execution's first Reserve fails with Flaky), a Wait (a timer) and
 * a failure path (every execution numbered 7 mod 10 is declined at
 * Charge). No activity has a timeout, so a lost task or a lost answer
 * cannot be papered over by a timeout and a retry: it leaves its execution
 * open, and the test fails on its hang guard naming it. Afterwards every
 * execution must have closed with the status and the output the workflow
 * defines for its number, every history must pass the invariant checker
 * (decider/check.h: dense ids, no duplicated result, replays cleanly), and
 * the outbox must drain.
 *
 * Hang guards only: the limits are generous and say what did not happen.
 */
#include <criterion/criterion.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/dev.h"
#include "decider/asl/exec.h"
#include "decider/check.h"
#include "kafka/kafka.h"
#include "history/pg.h"
#include "protocol/json.h"
#include "protocol/message.h"
#include "protocol/time.h"
#include "protocol/token.h"
#include "real_kafka.h"
#include "tests/dev_cluster.h"
#include "worker/worker.h"

/* Executions per run. */
#define EXECUTIONS 300
/* The broker or the database stays away this long. */
#define OUTAGE_MS 3000
/* Hang guards. */
#define PROGRESS_GUARD_S 120
#define CLOSE_GUARD_S 300

static const char *DEF =
    "{\"StartAt\":\"Reserve\",\"States\":{"
    "\"Reserve\":{\"Type\":\"Task\",\"Resource\":\"arn:aws:states:::activity:rec-a\","
    "  \"Parameters\":{\"step\":\"reserve\",\"n.$\":\"$.n\"},"
    "  \"Retry\":[{\"ErrorEquals\":[\"Flaky\"],\"IntervalSeconds\":1,\"MaxAttempts\":2}],"
    "  \"ResultPath\":\"$.reserve\",\"Next\":\"Pause\"},"
    "\"Pause\":{\"Type\":\"Wait\",\"Seconds\":1,\"Next\":\"Charge\"},"
    "\"Charge\":{\"Type\":\"Task\",\"Resource\":\"arn:aws:states:::activity:rec-b\","
    "  \"Parameters\":{\"step\":\"charge\",\"n.$\":\"$.n\"},"
    "  \"ResultPath\":\"$.charge\",\"Next\":\"Ship\"},"
    "\"Ship\":{\"Type\":\"Task\",\"Resource\":\"arn:aws:states:::activity:rec-a\","
    "  \"Parameters\":{\"step\":\"ship\",\"n.$\":\"$.n\"},"
    "  \"ResultPath\":\"$.ship\",\"End\":true}}}";

static const char *LISTS[] = {"rec-a", "rec-b"};
#define NLISTS 2

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char line[512];
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    cr_log_info("%s", line);
}

/* ---- the worker ------------------------------------------------------------ */

/* One thread polling a worker (worker/worker.h) per task list. */
typedef struct test_worker {
    swf_worker_t *w[NLISTS];
    pthread_t thread;
    volatile int stop;
    unsigned long answered; /* answers queued (atomic) */
} test_worker_t;

/* The answer the workflow expects for one task: see the file comment. */
static swf_error_t *answer(swf_worker_t *w, swf_worker_task_t *t)
{
    json_object *in = swf_worker_task_input(t), *v;
    const char *step = swf_json_get_string(in, "step");
    int64_t n = swf_json_get(in, "n", &v) ? json_object_get_int64(v) : -1;
    json_object *r = json_object_new_object();
    swf_error_t *err = NULL;
    if (step != NULL && strcmp(step, "reserve") == 0) {
        if (n % 3 == 0 && swf_worker_task_attempt(t) == 0) {
            err = swf_worker_fail(w, t, "Flaky", "try again");
        } else {
            swf_json_add(r, "reserved", json_object_new_int64(n));
            err = swf_worker_complete(w, t, r);
        }
    } else if (step != NULL && strcmp(step, "charge") == 0) {
        if (n % 10 == 7) {
            char cause[64];
            snprintf(cause, sizeof(cause), "card %lld declined", (long long)n);
            err = swf_worker_fail(w, t, "Declined", cause);
        } else {
            swf_json_add(r, "charged", json_object_new_int64(n * 10));
            err = swf_worker_complete(w, t, r);
        }
    } else {
        swf_json_add(r, "shipped", json_object_new_int64(n));
        err = swf_worker_complete(w, t, r);
    }
    json_object_put(r);
    return err;
}

static void *worker_main(void *arg)
{
    test_worker_t *tw = arg;
    int64_t logged = 0;
    while (!tw->stop) {
        for (int i = 0; i < NLISTS && !tw->stop; i++) {
            swf_worker_task_t *t = NULL;
            swf_error_t *err = swf_worker_poll(tw->w[i], 20, &t);
            if (err != NULL) {
                /* Expected while the broker is away; the library retries. */
                if (mono_ms() - logged > 1000) {
                    say("worker: %s", swf_error_message(err));
                    logged = mono_ms();
                }
                swf_error_free(err);
            }
            if (t == NULL)
                continue;
            /* An answer that cannot even be queued is tried again: giving up
             * would abandon the task until a restart. */
            for (;;) {
                err = answer(tw->w[i], t);
                if (err == NULL || tw->stop)
                    break;
                say("worker: answering: %s", swf_error_message(err));
                swf_error_free(err);
                usleep(100000);
            }
            swf_error_free(err);
            __atomic_add_fetch(&tw->answered, 1, __ATOMIC_RELAXED);
            swf_worker_task_free(t);
        }
    }
    return NULL;
}

static test_worker_t *worker_start(const char *brokers)
{
    test_worker_t *tw = calloc(1, sizeof(*tw));
    cr_assert_not_null(tw);
    for (int i = 0; i < NLISTS; i++) {
        swf_worker_config_t cfg = {.brokers = brokers,
                                   .task_list = LISTS[i],
                                   .identity = "recovery-worker",
                                   .max_in_flight = 64,
                                   .session_timeout_ms = 30000};
        check(swf_worker_new(&cfg, &tw->w[i]));
    }
    cr_assert_eq(pthread_create(&tw->thread, NULL, worker_main, tw), 0);
    return tw;
}

static unsigned long worker_answered(test_worker_t *tw)
{
    return __atomic_load_n(&tw->answered, __ATOMIC_RELAXED);
}

static void worker_stop(test_worker_t *tw)
{
    if (tw == NULL)
        return;
    tw->stop = 1;
    pthread_join(tw->thread, NULL);
    for (int i = 0; i < NLISTS; i++)
        swf_worker_free(tw->w[i]);
    free(tw);
}

/* ---- the run --------------------------------------------------------------- */

/* Everything a test holds, freed by teardown whatever happened. */
static struct {
    swf_dev_t *dev;
    swf_history_store_t *store;
    test_worker_t *worker;
    rd_kafka_t *producer;
    pid_t daemons[2]; /* swf-decider and swf-history as programs, when started */
    bool kafka_down;  /* the test took the real Kafka down */
} run;

/* Stops a daemon program: SIGTERM, then SIGKILL after 20 s. Returns how it
 * ended (a waitpid status), or -1 when it was not running. */
static int daemon_stop(pid_t pid)
{
    if (pid <= 0)
        return -1;
    kill(pid, SIGTERM);
    int status = 0;
    for (int i = 0; i < 400; i++) {
        if (waitpid(pid, &status, WNOHANG) == pid)
            return status;
        usleep(50000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return status;
}

static void teardown(void)
{
    /* Whatever a failed test left down comes back up, so that the daemons
     * stop cleanly and the cluster is removed. */
    if (run.dev != NULL) {
        if (swf_dev_mock_cluster(run.dev) != NULL)
            rd_kafka_mock_broker_set_up(swf_dev_mock_cluster(run.dev), 1);
        else if (run.kafka_down)
            real_kafka_set(true);
        if (swf_dev_pg_cluster(run.dev) != NULL)
            swf_error_free(swf_history_cluster_up(swf_dev_pg_cluster(run.dev)));
    }
    for (int i = 0; i < 2; i++)
        daemon_stop(run.daemons[i]);
    worker_stop(run.worker);
    if (run.producer != NULL)
        rd_kafka_destroy(run.producer);
    swf_history_store_free(run.store);
    swf_dev_stop(run.dev);
    memset(&run, 0, sizeof(run));
}

static void setup_daemons(int deciders, bool history_service)
{
    swf_dev_options_t opt = {.deciders = deciders,
                             .history_service = history_service,
                             .time_scale = 0.05,
                             .log = getenv("SWF_TEST_LOG") ? stderr : NULL};
    if (real_kafka_brokers() != NULL) {
        opt.brokers = real_kafka_brokers();
        real_kafka_topics(opt.brokers, LISTS, NLISTS);
    }
    check(swf_dev_start(&opt, &run.dev));
}

static void setup_clients(void)
{
    check(swf_history_pg_new(swf_dev_conninfo(run.dev), &run.store));
    check(swf_kafka_producer_new(
        &(swf_kafka_producer_config_t){.brokers = swf_dev_brokers(run.dev)}, &run.producer));
    run.worker = worker_start(swf_dev_brokers(run.dev));
}

static void setup(int deciders)
{
    setup_daemons(deciders, true);
    setup_clients();
}

static void exec_id(int i, char *buf, size_t size)
{
    snprintf(buf, size, "rec-%04d", i);
}

/* Registers the workflow, starts every execution and posts its "decide". */
static void start_all(void)
{
    json_object *def = parse(DEF);
    int version = 0;
    check(swf_history_pg_state_machine_register(run.store, "Recovery", def, &version));
    json_object_put(def);
    swf_kafka_names_t names;
    swf_kafka_names_env(&names);
    json_object *docs[EXECUTIONS];
    char ids[EXECUTIONS][16];
    swf_kafka_out_t outs[EXECUTIONS];
    for (int i = 0; i < EXECUTIONS; i++) {
        exec_id(i, ids[i], sizeof(ids[i]));
        json_object *input = json_object_new_object();
        swf_json_add(input, "n", json_object_new_int(i));
        swf_history_start_t st = {.execution_id = ids[i],
                                  .state_machine = "Recovery",
                                  .version = version,
                                  .input = input,
                                  .time_ms = swf_time_now_ms()};
        check(swf_history_pg_execution_start(run.store, &st, NULL));
        json_object_put(input);
        docs[i] = swf_msg_decide_new(NULL, ids[i]);
        const char *s = swf_json_str(docs[i]);
        outs[i] = (swf_kafka_out_t){names.inbox, ids[i], s, strlen(s), 0};
    }
    check(swf_kafka_send(run.producer, outs, EXECUTIONS));
    for (int i = 0; i < EXECUTIONS; i++)
        json_object_put(docs[i]);
}

/* Waits until the worker has answered `want` tasks in all. */
static void wait_answered(unsigned long want, const char *when)
{
    int64_t until = mono_ms() + PROGRESS_GUARD_S * 1000;
    while (worker_answered(run.worker) < want) {
        cr_assert(mono_ms() < until, "%s: the worker answered %lu tasks, not %lu, in %d s", when,
                  worker_answered(run.worker), want, PROGRESS_GUARD_S);
        usleep(10000);
    }
}

/* Open executions, counted on a connection that may have to reconnect: a
 * retriable failure (the database is restarting) counts as "unknown". */
static int count_open(char *first, size_t size)
{
    swf_history_filter_t f = {.status = "open", .limit = EXECUTIONS + 1};
    swf_history_execution_t *items = NULL;
    size_t n = 0;
    swf_error_t *err = swf_history_pg_executions_list(run.store, &f, &items, &n);
    if (err != NULL) {
        cr_assert(swf_error_retriable(err), "listing executions: %s", swf_error_message(err));
        swf_error_free(err);
        return -1;
    }
    if (n > 0)
        snprintf(first, size, "%s", items[n - 1].execution_id);
    swf_history_executions_free(items, n);
    return (int)n;
}

/* The last event of an execution, for the hang guard's message. */
static void last_event(const char *id, char *buf, size_t size)
{
    swf_event_list_t evs = {0};
    swf_error_t *err = swf_history_pg_load_reverse(run.store, id, 0, 1, &evs);
    snprintf(buf, size, "%s",
             err != NULL      ? swf_error_message(err)
             : evs.count == 0 ? "none"
                              : swf_event_type_name(evs.items[0].type));
    swf_error_free(err);
    swf_event_list_free(&evs);
}

static void wait_all_closed(const char *after)
{
    int64_t until = mono_ms() + CLOSE_GUARD_S * 1000;
    char first[64] = "";
    for (;;) {
        int open = count_open(first, sizeof(first));
        if (open == 0)
            return;
        if (mono_ms() >= until) {
            char last[256] = "";
            last_event(first, last, sizeof(last));
            cr_assert_fail("after %s, %d executions are still open after %d s (one is %s, whose "
                           "last event is %s): something was lost or a daemon did not recover",
                           after, open, CLOSE_GUARD_S, first, last);
        }
        usleep(100000);
    }
}

/* What execution n must end with: its status, and its output or error. */
static void expected(int n, const char **status, json_object **output, const char **error,
                     char *cause, size_t size)
{
    *output = NULL;
    *error = NULL;
    cause[0] = '\0';
    if (n % 10 == 7) {
        *status = "failed";
        *error = "Declined";
        snprintf(cause, size, "card %d declined", n);
        return;
    }
    *status = "succeeded";
    char text[256];
    snprintf(text, sizeof(text),
             "{\"n\":%d,\"reserve\":{\"reserved\":%d},\"charge\":{\"charged\":%d},"
             "\"ship\":{\"shipped\":%d}}",
             n, n, n * 10, n);
    *output = parse(text);
}

/* Every execution closed as the workflow says, and its history is sound. */
static void verify_all(void)
{
    for (int i = 0; i < EXECUTIONS; i++) {
        char id[16];
        exec_id(i, id, sizeof(id));
        const char *status, *error;
        json_object *want;
        char cause[64];
        expected(i, &status, &want, &error, cause, sizeof(cause));

        swf_history_execution_t ex;
        check(swf_history_pg_execution_describe(run.store, id, &ex));
        cr_assert_str_eq(ex.status, status, "%s", id);
        swf_history_execution_free(&ex);

        swf_decider_check_problems_t problems = {0};
        check(swf_decider_check_execution(run.store, id, &problems));
        cr_assert_eq(problems.count, 0, "%s: %zu problems, the first: %s", id, problems.count,
                     problems.count > 0 ? problems.items[0] : "");
        swf_decider_check_problems_free(&problems);

        /* The output or the error, from the history replayed. */
        swf_event_list_t evs = {0};
        check(swf_history_load(run.store, id, 0, 0, &evs));
        swf_asl_exec_t *exec = swf_asl_exec_new();
        swf_asl_exec_set_token_secret(exec, swf_token_secret_env());
        for (size_t k = 0; k < evs.count; k++)
            check(swf_asl_exec_apply(exec, &evs.items[k]));
        if (want != NULL) {
            cr_assert_eq(swf_asl_exec_status(exec), SWF_ASL_SUCCEEDED, "%s", id);
            cr_assert(swf_json_equal(swf_asl_exec_output(exec), want), "%s: output %s", id,
                      swf_json_str(swf_asl_exec_output(exec)));
        } else {
            cr_assert_eq(swf_asl_exec_status(exec), SWF_ASL_FAILED, "%s", id);
            cr_assert_str_eq(swf_asl_exec_error(exec), error, "%s", id);
            cr_assert_str_eq(swf_asl_exec_cause(exec), cause, "%s", id);
        }
        swf_asl_exec_free(exec);
        swf_event_list_free(&evs);
        json_object_put(want);
    }
}

/* Rows in the outbox, on a connection of its own. */
static long outbox_rows(void)
{
    PGconn *c = PQconnectdb(swf_dev_conninfo(run.dev));
    cr_assert_eq(PQstatus(c), CONNECTION_OK, "%s", PQerrorMessage(c));
    PGresult *res = PQexec(c, "SELECT count(*) FROM outbox");
    cr_assert_eq(PQresultStatus(res), PGRES_TUPLES_OK, "%s", PQerrorMessage(c));
    long n = atol(PQgetvalue(res, 0, 0));
    PQclear(res);
    PQfinish(c);
    return n;
}

/* Every activity task was published and its outbox row deleted (by the
 * decider, or by swf-history republishing what a failure left behind). */
static void wait_outbox_empty(void)
{
    int64_t until = mono_ms() + PROGRESS_GUARD_S * 1000;
    long n;
    while ((n = outbox_rows()) > 0) {
        cr_assert(mono_ms() < until, "%ld outbox rows are left after %d s", n, PROGRESS_GUARD_S);
        usleep(100000);
    }
}

typedef enum fault { KAFKA = 1, POSTGRES = 2 } fault_t;

/* Takes the Kafka broker down or brings it back: the mock's, or every node
 * of the real cluster (real_kafka.h; its nodes take seconds to start, so
 * there the outage lasts that much longer). */
static void kafka_set(bool up)
{
    rd_kafka_mock_cluster_t *mock = swf_dev_mock_cluster(run.dev);
    run.kafka_down = !up;
    if (mock == NULL)
        real_kafka_set(up);
    else if (up)
        cr_assert_eq(rd_kafka_mock_broker_set_up(mock, 1), 0);
    else
        cr_assert_eq(rd_kafka_mock_broker_set_down(mock, 1), 0);
}

/* Starts the run, lets a quarter of its work through, takes down what
 * `faults` names for OUTAGE_MS, brings it back, and checks the outcome. */
static void run_through(int faults, int outage_ms, const char *what)
{
    int64_t t0 = mono_ms();
    start_all();
    /* About 3.3 tasks per execution: a quarter of the run. */
    wait_answered(EXECUTIONS * 3 / 4, "before the outage");
    say("%s: down after %lld ms, %lu tasks answered", what, (long long)(mono_ms() - t0),
        worker_answered(run.worker));
    if (faults & KAFKA)
        kafka_set(false);
    if (faults & POSTGRES)
        check(swf_history_cluster_down(swf_dev_pg_cluster(run.dev)));
    usleep((useconds_t)outage_ms * 1000);
    if (faults & POSTGRES)
        check(swf_history_cluster_up(swf_dev_pg_cluster(run.dev)));
    if (faults & KAFKA)
        kafka_set(true);
    unsigned long at_up = worker_answered(run.worker);
    say("%s: up after %lld ms, %lu tasks answered", what, (long long)(mono_ms() - t0), at_up);
    wait_answered(at_up + 1, "after the outage");
    wait_all_closed(what);
    say("%s: all closed after %lld ms, %lu tasks answered", what, (long long)(mono_ms() - t0),
        worker_answered(run.worker));
    verify_all();
    wait_outbox_empty();
}

TestSuite(recovery, .fini = teardown, .timeout = 600);

/* Two deciders share the inbox: the broker is also their group's
 * coordinator, and the group must hold together through the outage. */
Test(recovery, kafka_broker_down_and_back_loses_nothing)
{
    setup(2);
    run_through(KAFKA, OUTAGE_MS, "a Kafka broker outage");
}

/* One decider: with two, a rebalance that fails commits can redeliver what
 * a decider dropped, and hide the loss this test is for. */
Test(recovery, postgres_restart_loses_nothing)
{
    setup(1);
    run_through(POSTGRES, OUTAGE_MS, "a PostgreSQL restart");
}

Test(recovery, kafka_and_postgres_down_together_lose_nothing)
{
    setup(2);
    run_through(KAFKA | POSTGRES, OUTAGE_MS, "a Kafka and PostgreSQL outage");
}

/* Longer than a send waits for Kafka (SWF_KAFKA_SEND_TIMEOUT_MS, shortened
 * here to keep the test short): the decider's publications fail and their
 * outbox rows wait for swf-history, whose own posts fail too until the
 * broker is back. (The worker library's answers wait longer: librdkafka's
 * default of 300 s.) */
Test(recovery, kafka_down_longer_than_a_send_waits_loses_nothing)
{
    setenv("SWF_KAFKA_SEND_TIMEOUT_MS", "2000", 1);
    setup(2);
    run_through(KAFKA, 6000, "a long Kafka broker outage");
}

/* Runs a daemon program of the build on the harness's PostgreSQL and Kafka.
 * The environment is set here, before the fork: between fork and exec only
 * async-signal-safe calls, as librdkafka's threads may hold locks. */
static pid_t daemon_start(const char *prog)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", SWF_BINARY_DIR, prog);
    setenv("SWF_DATABASE_URL", swf_dev_conninfo(run.dev), 1);
    setenv("SWF_KAFKA_BROKERS", swf_dev_brokers(run.dev), 1);
    setenv("SWF_DEV_TIME_SCALE", "0.05", 1);
    bool quiet = getenv("SWF_TEST_LOG") == NULL;
    pid_t parent = getpid();
    pid_t pid = fork();
    cr_assert(pid >= 0, "fork");
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive a crashed test */
        if (getppid() != parent)
            _exit(127);
        int null = quiet ? open("/dev/null", O_WRONLY) : -1;
        if (null >= 0) {
            dup2(null, 2);
            close(null);
        }
        execl(path, prog, (char *)NULL);
        _exit(127);
    }
    return pid;
}

/* swf-decider and swf-history started while PostgreSQL is down (a compose
 * file starting everything at once, a restart during a database restart)
 * wait for it instead of exiting, then do their work. */
Test(recovery, daemons_started_before_postgres_wait_for_it)
{
    setup_daemons(0, false);
    check(swf_history_cluster_down(swf_dev_pg_cluster(run.dev)));
    run.daemons[0] = daemon_start("swf-decider");
    run.daemons[1] = daemon_start("swf-history");
    usleep(OUTAGE_MS * 1000);
    for (int i = 0; i < 2; i++) {
        int status;
        cr_assert_eq(waitpid(run.daemons[i], &status, WNOHANG), 0,
                     "%s exited (status %d) while PostgreSQL was down",
                     i == 0 ? "swf-decider" : "swf-history", status);
    }
    check(swf_history_cluster_up(swf_dev_pg_cluster(run.dev)));
    setup_clients();
    int64_t t0 = mono_ms();
    start_all();
    wait_all_closed("starting the daemons before PostgreSQL");
    say("daemons started first: all closed after %lld ms", (long long)(mono_ms() - t0));
    verify_all();
    wait_outbox_empty();
    for (int i = 0; i < 2; i++) {
        int status = daemon_stop(run.daemons[i]);
        run.daemons[i] = 0;
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s did not stop cleanly (%d)",
                  i == 0 ? "swf-decider" : "swf-history", status);
    }
}
