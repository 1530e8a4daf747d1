/*
 * cmd.c - `swf-worker`: any shell command becomes an activity worker.
 *
 *   swf-worker --task-list NAME [--task-list NAME...] --exec 'COMMAND' [--concurrency N]
 *   swf-worker --task-list NAME [--task-list NAME...] --echo
 *
 * For each task, COMMAND runs under /bin/sh -c with the task's input (JSON)
 * on standard input and its ids in the environment (SWF_TASK_TOKEN,
 * SWF_EXECUTION_ID, SWF_ACTIVITY_ID, SWF_ACTIVITY_TYPE, SWF_STATE,
 * SWF_ATTEMPT). What it prints on standard output (JSON, at most
 * SWF_LIMIT_PAYLOAD_BYTES) is the result. Failures map to error names a
 * state's Retry and Catch can match:
 *
 *   exit status n != 0     swf.ExitCode.<n>, cause: the last 1 KiB of stderr,
 *                          unless stderr's last line is a JSON object
 *                          {"error": NAME, "cause": TEXT}: then those
 *   killed by signal n     swf.Signal.<n>
 *   stdout is not JSON     swf.InvalidOutput (also when it holds \u0000,
 *                          which a history cannot store)
 *   stdout too large       swf.OutputTooLarge (also when the answer would
 *                          exceed the Kafka message limit)
 *   ran past the task's startToCloseTimeout: killed, States.Timeout
 *
 * A command has ended when its shell exits: what it printed by then (and
 * within 0.1 s after) is its output; processes it left running in the
 * background are not waited for, even while they hold its stdout. While a
 * command runs, a heartbeat goes out every third of the task's
 * heartbeatTimeout, also after it closed its stdout and stderr. Up to N commands run at once, each
 * on a thread of its own that feeds, drains and waits for its child; the main thread only polls
 * (the library's in-flight limit is N, so polling at the limit takes nothing
 * and keeps the group membership alive). Children run in a process group of
 * their own, so a Ctrl-C at the terminal reaches swf-worker alone: it stops
 * taking tasks, lets the running commands finish and answers them, then
 * exits 0.
 *
 * One process may serve several task lists (--task-list again): one consumer
 * per list (its own group, as for any worker of that list), polled in turn,
 * each with up to N commands at once; the command tells them apart by
 * SWF_ACTIVITY_TYPE. Several small processes serving every list keep each
 * list served while one of them restarts.
 *
 * Deliberately not done: a shell-free exec of argv (the command is one
 * string for /bin/sh, as in a Makefile), and stdout streamed to Kafka (the
 * result is one message).
 *
 * The command line is read by cli/bin/swf-worker.c with the parser every
 * swf program shares (cli/args.h); this file takes the configuration it
 * makes, so the worker library needs nothing above protocol/.
 */
#define _GNU_SOURCE /* pipe2 */
#include "worker/cmd.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "protocol/json.h"
#include "protocol/limits.h"
#include "worker/worker.h"

extern char **environ;

/* Bytes of stderr kept: the last line may carry {"error","cause"}. */
#define STDERR_TAIL_BYTES 8192
/* How long output is still read after the command exits, while processes it
 * left running hold its pipes. */
#define EXIT_GRACE_S 0.1
/* Bytes of stderr given as the cause of a failure. */
#define CAUSE_TAIL_BYTES 1024

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
    (void)sig;
    stopping = 1;
}

typedef struct shared {
    const char *command;
    pthread_mutex_t lock;
    pthread_cond_t idle;
    unsigned running;
} shared_t;

typedef struct job {
    shared_t *sh;
    swf_worker_t *worker; /* the consumer the task came from, which answers it */
    swf_worker_task_t *task;
} job_t;

typedef struct output {
    char *buf;
    size_t len, cap, max;
    bool overflow; /* stdout only: more than max bytes came */
    bool tail;     /* stderr: keep the last bytes instead of the first */
} output_t;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void logf_task(const swf_worker_task_t *t, const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "swf-worker: %s/%s: ", swf_worker_task_execution_id(t),
            swf_worker_task_activity_id(t));
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
}

static void log_error(const char *what, swf_error_t *err)
{
    fprintf(stderr, "swf-worker: %s: %s%s%s\n", what, swf_error_message(err),
            swf_error_cause(err) ? ": " : "", swf_error_cause(err) ? swf_error_cause(err) : "");
}

/* Makes room for cap - 1 bytes and a terminator. */
static void output_reserve(output_t *o, size_t cap)
{
    if (cap <= o->cap)
        return;
    char *nb = realloc(o->buf, cap);
    if (nb == NULL)
        abort();
    o->buf = nb;
    o->cap = cap;
}

/* Appends what a pipe holds; false at end of file. */
static bool drain(int fd, output_t *o)
{
    char chunk[16384];
    ssize_t n = read(fd, chunk, sizeof(chunk));
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
        return false;
    if (n < 0)
        return true;
    size_t k = (size_t)n;
    if (o->tail && o->len + k > o->max) {
        /* keep the newest max bytes */
        output_reserve(o, o->max + 1);
        if (k >= o->max) {
            memcpy(o->buf, chunk + k - o->max, o->max);
            o->len = o->max;
            o->buf[o->len] = '\0';
            return true;
        }
        size_t drop = o->len + k - o->max;
        memmove(o->buf, o->buf + drop, o->len - drop);
        o->len -= drop;
    } else if (!o->tail && o->len + k > o->max) {
        o->overflow = true;
        return true; /* keep reading so the child is never blocked */
    }
    if (o->len + k + 1 > o->cap) {
        size_t cap = o->cap ? o->cap : 4096;
        while (cap < o->len + k + 1)
            cap *= 2;
        output_reserve(o, cap);
    }
    memcpy(o->buf + o->len, chunk, k);
    o->len += k;
    o->buf[o->len] = '\0';
    return true;
}

/* The environment of a command: ours plus the task's ids. */
static char **task_env(const swf_worker_task_t *t)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = calloc(n + 7, sizeof(char *));
    if (env == NULL)
        abort();
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "SWF_TASK_TOKEN=", 15) != 0)
            env[k++] = strdup(environ[i]);
    char attempt[32];
    snprintf(attempt, sizeof(attempt), "%lld", (long long)swf_worker_task_attempt(t));
    const char *pairs[][2] = {{"SWF_TASK_TOKEN", swf_worker_task_token(t)},
                              {"SWF_EXECUTION_ID", swf_worker_task_execution_id(t)},
                              {"SWF_ACTIVITY_ID", swf_worker_task_activity_id(t)},
                              {"SWF_ACTIVITY_TYPE", swf_worker_task_activity_type(t)},
                              {"SWF_STATE", swf_worker_task_state(t)},
                              {"SWF_ATTEMPT", attempt}};
    for (size_t i = 0; i < 6; i++) {
        size_t len = strlen(pairs[i][0]) + strlen(pairs[i][1]) + 2;
        env[k] = malloc(len);
        if (env[k] == NULL)
            abort();
        snprintf(env[k++], len, "%s=%s", pairs[i][0], pairs[i][1]);
    }
    env[k] = NULL;
    return env;
}

static void env_free(char **env)
{
    for (size_t i = 0; env[i]; i++)
        free(env[i]);
    free(env);
}

/* The failure a finished command stands for: its name and cause (malloc'd). */
static void failure_of(int status, const output_t *err, char **name, char **cause)
{
    char text[64];
    if (WIFSIGNALED(status)) {
        snprintf(text, sizeof(text), "swf.Signal.%d", WTERMSIG(status));
    } else {
        snprintf(text, sizeof(text), "swf.ExitCode.%d", WEXITSTATUS(status));
        /* The last non-empty line of stderr, if it is {"error": ..., "cause": ...}. */
        size_t end = err->len;
        while (end > 0 && (err->buf[end - 1] == '\n' || err->buf[end - 1] == '\r'))
            end--;
        size_t start = end;
        while (start > 0 && err->buf[start - 1] != '\n')
            start--;
        json_object *j = NULL;
        swf_error_t *perr =
            end > start ? swf_json_parse(err->buf + start, end - start, STDERR_TAIL_BYTES, &j)
                        : swf_error_new(SWF_E_INPUT, NULL, "empty");
        const char *e = perr == NULL ? swf_json_get_string(j, "error") : NULL;
        if (e != NULL && *e) {
            const char *c = swf_json_get_string(j, "cause");
            *name = strdup(e);
            *cause = strdup(c ? c : "");
            json_object_put(j);
            return;
        }
        swf_error_free(perr);
        json_object_put(j);
    }
    *name = strdup(text);
    size_t from = err->len > CAUSE_TAIL_BYTES ? err->len - CAUSE_TAIL_BYTES : 0;
    /* The tail starts at a character, not inside one (a character has at
     * most three continuation bytes; anything else is not text, and the
     * worker library marks it). */
    for (int k = 0; k < 3 && from > 0 && ((unsigned char)err->buf[from] & 0xC0) == 0x80; k++)
        from++;
    *cause = strndup(err->buf ? err->buf + from : "", err->len - from);
}

/* Spawns /bin/sh -c command with the three pipes; -1 on failure (errno set). */
static pid_t spawn(const char *command, char **env, int in, int out, int err)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in, 0);
    posix_spawn_file_actions_adddup2(&fa, out, 1);
    posix_spawn_file_actions_adddup2(&fa, err, 2);
    posix_spawnattr_init(&at);
    sigset_t none, dfl;
    sigemptyset(&none);
    sigemptyset(&dfl);
    sigaddset(&dfl, SIGPIPE);
    sigaddset(&dfl, SIGINT);
    sigaddset(&dfl, SIGTERM);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &dfl);
    posix_spawnattr_setpgroup(&at, 0);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
                                      POSIX_SPAWN_SETPGROUP);
    char *argv[] = {"/bin/sh", "-c", (char *)command, NULL};
    pid_t pid = -1;
    int rc = posix_spawn(&pid, "/bin/sh", &fa, &at, argv, env);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    if (rc != 0) {
        errno = rc;
        return -1;
    }
    return pid;
}

/* Runs the command of one task to its end and answers the task. */
static void run_job(shared_t *sh, swf_worker_t *w, swf_worker_task_t *t)
{
    output_t out = {.max = SWF_LIMIT_PAYLOAD_BYTES}, err = {.max = STDERR_TAIL_BYTES, .tail = true};
    int in_p[2] = {-1, -1}, out_p[2] = {-1, -1}, err_p[2] = {-1, -1};
    char **env = task_env(t);
    char *fail_name = NULL, *fail_cause = NULL;
    json_object *result = NULL;
    swf_error_t *e = NULL;
    const char *input = swf_json_str(swf_worker_task_input(t));
    size_t input_len = strlen(input), written = 0;

    if (pipe2(in_p, O_CLOEXEC) || pipe2(out_p, O_CLOEXEC) || pipe2(err_p, O_CLOEXEC)) {
        fail_name = strdup("swf.SpawnFailed");
        fail_cause = strdup(strerror(errno));
        goto answer;
    }
    pid_t pid = spawn(sh->command, env, in_p[0], out_p[1], err_p[1]);
    close(in_p[0]);
    close(out_p[1]);
    close(err_p[1]);
    in_p[0] = out_p[1] = err_p[1] = -1;
    if (pid < 0) {
        fail_name = strdup("swf.SpawnFailed");
        fail_cause = strdup(strerror(errno));
        goto answer;
    }
    fcntl(in_p[1], F_SETFL, O_NONBLOCK);
    fcntl(out_p[0], F_SETFL, O_NONBLOCK);
    fcntl(err_p[0], F_SETFL, O_NONBLOCK);

    double start = now_s();
    double hb = swf_worker_task_heartbeat_timeout_s(t) / 3;
    if (hb > 0 && hb < 0.1)
        hb = 0.1;
    double next_hb = hb > 0 ? start + hb : 0;
    double stc = swf_worker_task_start_to_close_timeout_s(t);
    bool timed_out = false, out_open = true, err_open = true, exited = false;
    int status = 0;
    double exited_at = 0;
    /* The command's end is watched as well as its pipes: one that closes
     * them and goes on must still get heartbeats and be killed at its
     * timeout, and one that exits while something it left behind holds
     * them is answered once it exits (what the pipes hold by then, and
     * for EXIT_GRACE_S after, is its output). A pidfd tells when it exits;
     * without one (kernels before 5.3), polls in short steps do. */
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (input_len == 0) {
        close(in_p[1]);
        in_p[1] = -1;
    }
    while (!exited || out_open || err_open) {
        struct pollfd fds[4];
        int n = 0;
        if (in_p[1] >= 0)
            fds[n++] = (struct pollfd){.fd = in_p[1], .events = POLLOUT};
        if (out_open)
            fds[n++] = (struct pollfd){.fd = out_p[0], .events = POLLIN};
        if (err_open)
            fds[n++] = (struct pollfd){.fd = err_p[0], .events = POLLIN};
        if (!exited && pidfd >= 0)
            fds[n++] = (struct pollfd){.fd = pidfd, .events = POLLIN};
        double now = now_s(), wait = 1.0;
        if (hb > 0 && !exited && next_hb - now < wait)
            wait = next_hb - now;
        if (stc > 0 && !timed_out && start + stc - now < wait)
            wait = start + stc - now;
        if (!exited && pidfd < 0 && wait > 0.01)
            wait = 0.01;
        if (exited && exited_at + EXIT_GRACE_S - now < wait)
            wait = exited_at + EXIT_GRACE_S - now;
        int rc = poll(fds, (nfds_t)n, wait > 0 ? (int)(wait * 1000) + 1 : 0);
        if (rc < 0 && errno != EINTR)
            break;
        if (!exited && waitpid(pid, &status, WNOHANG) == pid) {
            exited = true;
            exited_at = now_s();
        }
        for (int i = 0; rc > 0 && i < n; i++) {
            if (fds[i].revents == 0)
                continue;
            if (fds[i].fd == in_p[1]) {
                ssize_t k = write(in_p[1], input + written, input_len - written);
                if (k > 0)
                    written += (size_t)k;
                if ((k < 0 && errno != EAGAIN && errno != EINTR) || written == input_len) {
                    close(in_p[1]); /* done, or the command closed its stdin */
                    in_p[1] = -1;
                }
            } else if (fds[i].fd == out_p[0]) {
                out_open = drain(out_p[0], &out);
            } else if (fds[i].fd == err_p[0]) {
                err_open = drain(err_p[0], &err);
            }
        }
        now = now_s();
        if (hb > 0 && now >= next_hb) {
            swf_error_t *he = swf_worker_heartbeat(w, t, NULL);
            if (he != NULL) {
                log_error("heartbeat", he);
                swf_error_free(he);
            }
            next_hb = now + hb;
        }
        if (stc > 0 && !timed_out && !exited && now >= start + stc) {
            timed_out = true;
            kill(-pid, SIGKILL); /* the whole process group */
        }
        if (exited && now >= exited_at + EXIT_GRACE_S)
            break; /* what it left running keeps the pipes: not waited for */
    }
    if (pidfd >= 0)
        close(pidfd);
    while (!exited && waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (timed_out) {
        fail_name = strdup("States.Timeout");
        char text[128];
        snprintf(text, sizeof(text), "command ran past startToCloseTimeout (%g s) and was killed",
                 stc);
        fail_cause = strdup(text);
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        failure_of(status, &err, &fail_name, &fail_cause);
    } else if (out.overflow) {
        fail_name = strdup("swf.OutputTooLarge");
        char text[128];
        snprintf(text, sizeof(text), "standard output exceeds %u bytes", SWF_LIMIT_PAYLOAD_BYTES);
        fail_cause = strdup(text);
    } else {
        swf_error_t *pe =
            swf_json_parse(out.buf ? out.buf : "", out.len, SWF_LIMIT_PAYLOAD_BYTES, &result);
        if (pe != NULL || out.len == 0) {
            fail_name = strdup("swf.InvalidOutput");
            char text[512];
            snprintf(text, sizeof(text), "standard output is not JSON: %s: %.200s",
                     pe ? swf_error_message(pe) : "empty", out.buf ? out.buf : "");
            fail_cause = strdup(text);
        }
        swf_error_free(pe);
    }

answer:
    if (fail_name == NULL) {
        e = swf_worker_complete(w, t, result);
        if (e != NULL && swf_error_code(e) == SWF_E_INPUT) {
            fail_name = strdup("swf.InvalidOutput");
            fail_cause = strdup(swf_error_message(e));
            swf_error_free(e);
            e = NULL;
        } else if (e != NULL && swf_error_code(e) == SWF_E_LIMIT) {
            fail_name = strdup("swf.OutputTooLarge");
            fail_cause = strdup(swf_error_message(e));
            swf_error_free(e);
            e = NULL;
        } else if (e == NULL) {
            logf_task(t, "completed%s%s", "", "");
        }
    }
    if (fail_name != NULL) {
        e = swf_worker_fail(w, t, fail_name, fail_cause);
        if (e == NULL)
            logf_task(t, "failed: %s%s", fail_name, "");
    }
    if (e != NULL) {
        log_error("answer", e);
        swf_error_free(e);
    }
    for (int i = 0; i < 2; i++) {
        if (in_p[i] >= 0)
            close(in_p[i]);
        if (out_p[i] >= 0)
            close(out_p[i]);
        if (err_p[i] >= 0)
            close(err_p[i]);
    }
    json_object_put(result);
    free(fail_name);
    free(fail_cause);
    free(out.buf);
    free(err.buf);
    env_free(env);
    swf_worker_task_free(t);
}

static void *job_main(void *arg)
{
    job_t *j = arg;
    shared_t *sh = j->sh;
    run_job(sh, j->worker, j->task);
    free(j);
    pthread_mutex_lock(&sh->lock);
    sh->running--;
    pthread_cond_signal(&sh->idle);
    pthread_mutex_unlock(&sh->lock);
    return NULL;
}

int swf_worker_cmd_run(const swf_worker_cmd_config_t *config)
{
    const char *const *task_lists = config->task_lists;
    size_t nlists = config->task_list_count;
    const char *command = config->command, *identity = config->identity;
    const char *brokers = config->brokers;
    bool echo = command == NULL;
    long concurrency = config->concurrency;
    assert(nlists >= 1 && nlists <= SWF_WORKER_CMD_TASK_LISTS_MAX);
    assert(concurrency >= 1 && concurrency <= SWF_WORKER_CMD_CONCURRENCY_MAX);
    assert(brokers != NULL);

    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    stopping = 0;

    /* The session timeout is the daemons' SWF_KAFKA_SESSION_TIMEOUT_MS,
     * which the library reads (kafka/kafka.h). */
    swf_worker_config_t cfg = {
        .brokers = brokers, .identity = identity, .max_in_flight = (unsigned)concurrency};
    shared_t sh = {.command = command, .running = 0};
    pthread_mutex_init(&sh.lock, NULL);
    pthread_cond_init(&sh.idle, NULL);
    swf_worker_t *workers[SWF_WORKER_CMD_TASK_LISTS_MAX] = {0};
    swf_error_t *err = NULL;
    char lists[1024] = "";
    for (size_t i = 0; i < nlists && err == NULL; i++) {
        cfg.task_list = task_lists[i];
        err = swf_worker_new(&cfg, &workers[i]);
        size_t len = strlen(lists);
        snprintf(lists + len, sizeof(lists) - len, "%s%s", i ? ", " : "", task_lists[i]);
    }
    if (err != NULL) {
        log_error("start", err);
        swf_error_free(err);
        for (size_t i = 0; i < nlists; i++)
            swf_worker_free(workers[i]);
        return 1;
    }
    fprintf(stderr, "swf-worker: %s: taking tasks of %s (%s, up to %ld at once%s)\n",
            swf_worker_identity(workers[0]), lists, echo ? "echo" : command, concurrency,
            nlists > 1 ? " per list" : "");

    /* The lists take turns. A poll waits only once a whole round found
     * nothing, so a busy list is not slowed by idle ones; the wait of a
     * round is 200 ms. */
    int wait_ms = 200 / (int)nlists;
    size_t empty = 0; /* polls in a row that found nothing */
    for (size_t turn = 0; !stopping; turn++) {
        swf_worker_t *w = workers[turn % nlists];
        swf_worker_task_t *t = NULL;
        err = swf_worker_poll(w, empty >= nlists ? wait_ms : 0, &t);
        if (err != NULL) {
            log_error("poll", err);
            swf_error_free(err);
            nanosleep(&(struct timespec){.tv_nsec = 200 * 1000 * 1000}, NULL);
            continue;
        }
        if (t == NULL) {
            empty++;
            continue;
        }
        empty = 0;
        if (echo) {
            err = swf_worker_complete(w, t, swf_worker_task_input(t));
            if (err != NULL && swf_error_code(err) == SWF_E_LIMIT) {
                /* As for a command's result (worker.h): answered, not dropped. */
                swf_error_t *fe =
                    swf_worker_fail(w, t, "swf.OutputTooLarge", swf_error_message(err));
                swf_error_free(err);
                err = fe;
            }
            if (err != NULL) {
                log_error("answer", err);
                swf_error_free(err);
            }
            swf_worker_task_free(t);
            continue;
        }
        job_t *j = calloc(1, sizeof(*j));
        if (j == NULL)
            abort();
        j->sh = &sh;
        j->worker = w;
        j->task = t;
        pthread_mutex_lock(&sh.lock);
        sh.running++;
        pthread_mutex_unlock(&sh.lock);
        pthread_t th;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        int rc = pthread_create(&th, &attr, job_main, j);
        pthread_attr_destroy(&attr);
        if (rc != 0) {
            /* No thread: leave the task unanswered; it is redelivered later. */
            fprintf(stderr, "swf-worker: cannot start a thread: %s\n", strerror(rc));
            swf_worker_task_free(t);
            free(j);
            pthread_mutex_lock(&sh.lock);
            sh.running--;
            pthread_mutex_unlock(&sh.lock);
        }
    }
    pthread_mutex_lock(&sh.lock);
    if (sh.running > 0)
        fprintf(stderr, "swf-worker: stopping: waiting for %u running command(s)\n", sh.running);
    while (sh.running > 0)
        pthread_cond_wait(&sh.idle, &sh.lock);
    pthread_mutex_unlock(&sh.lock);
    for (size_t i = 0; i < nlists; i++) {
        err = swf_worker_close(workers[i]);
        if (err != NULL) {
            log_error("stop", err);
            swf_error_free(err);
        }
    }
    pthread_cond_destroy(&sh.idle);
    pthread_mutex_destroy(&sh.lock);
    fprintf(stderr, "swf-worker: stopped\n");
    return 0;
}
