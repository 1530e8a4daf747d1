/*
 * test_cluster.c - proves history/cluster.c: a throwaway cluster starts,
 * answers on its Unix socket only, goes down and comes back with its data,
 * and leaves nothing behind when stopped, nor when its owner is killed.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <libpq-fe.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "history/cluster.h"

Test(history_cluster, starts_answers_and_cleans_up, .timeout = 120)
{
    swf_history_cluster_t *c = NULL;
    swf_error_t *err = swf_history_cluster_start(&c);
    cr_assert(err == NULL, "%s: %s", swf_error_message(err),
              swf_error_cause(err) ? swf_error_cause(err) : "");
    char dir[128];
    snprintf(dir, sizeof(dir), "%s", swf_history_cluster_dir(c));
    cr_assert(strstr(swf_history_cluster_conninfo(c), dir) != NULL);
    PGconn *conn = PQconnectdb(swf_history_cluster_conninfo(c));
    cr_assert_eq(PQstatus(conn), CONNECTION_OK, "%s", PQerrorMessage(conn));
    PGresult *r = PQexec(conn, "SELECT current_setting('listen_addresses'),"
                               " current_setting('fsync')");
    cr_assert_eq(PQresultStatus(r), PGRES_TUPLES_OK);
    cr_assert_str_eq(PQgetvalue(r, 0, 0), "");
    cr_assert_str_eq(PQgetvalue(r, 0, 1), "on");
    PQclear(r);
    PQfinish(conn);
    swf_history_cluster_stop(c);
    struct stat st;
    cr_assert_neq(stat(dir, &st), 0, "%s is still there", dir);
    swf_history_cluster_stop(NULL);
}

/* The value of one query on a new connection, or NULL when it cannot connect. */
static char *query_one(const char *conninfo, const char *sql)
{
    PGconn *conn = PQconnectdb(conninfo);
    char *out = NULL;
    if (PQstatus(conn) == CONNECTION_OK) {
        PGresult *r = PQexec(conn, sql);
        cr_assert_eq(PQresultStatus(r), PGRES_TUPLES_OK, "%s", PQerrorMessage(conn));
        out = strdup(PQgetvalue(r, 0, 0));
        PQclear(r);
    }
    PQfinish(conn);
    return out;
}

static void ok(swf_error_t *err)
{
    cr_assert(err == NULL, "%s: %s", swf_error_message(err),
              swf_error_cause(err) ? swf_error_cause(err) : "");
}

Test(history_cluster, goes_down_and_comes_back_with_its_data, .timeout = 120)
{
    swf_history_cluster_t *c = NULL;
    ok(swf_history_cluster_start(&c));
    const char *ci = swf_history_cluster_conninfo(c);
    PGconn *conn = PQconnectdb(ci);
    cr_assert_eq(PQstatus(conn), CONNECTION_OK, "%s", PQerrorMessage(conn));
    PGresult *r =
        PQexec(conn, "CREATE TABLE kept (v text); INSERT INTO kept VALUES ('still here')");
    cr_assert_eq(PQresultStatus(r), PGRES_COMMAND_OK, "%s", PQerrorMessage(conn));
    PQclear(r);

    ok(swf_history_cluster_down(c));
    ok(swf_history_cluster_down(c)); /* down twice is fine */
    /* The open connection was closed by the server, new ones are refused. */
    r = PQexec(conn, "SELECT 1");
    cr_assert_neq(PQresultStatus(r), PGRES_TUPLES_OK);
    PQclear(r);
    cr_assert_eq(PQstatus(conn), CONNECTION_BAD);
    char *v = query_one(ci, "SELECT 1");
    cr_assert_null(v, "a server that is down answered");

    ok(swf_history_cluster_up(c));
    ok(swf_history_cluster_up(c)); /* up twice is fine */
    /* Same socket and conninfo, same data; the old connection resets. */
    v = query_one(ci, "SELECT v FROM kept");
    cr_assert_not_null(v, "the server did not come back");
    cr_assert_str_eq(v, "still here");
    free(v);
    PQreset(conn);
    cr_assert_eq(PQstatus(conn), CONNECTION_OK, "%s", PQerrorMessage(conn));
    PQfinish(conn);

    ok(swf_history_cluster_restart(c));
    v = query_one(ci, "SELECT v FROM kept");
    cr_assert_not_null(v, "the server did not come back after a restart");
    free(v);
    char dir[128];
    snprintf(dir, sizeof(dir), "%s", swf_history_cluster_dir(c));
    swf_history_cluster_stop(c);
    struct stat st;
    cr_assert_neq(stat(dir, &st), 0, "%s is still there", dir);
}

Test(history_cluster, a_killed_owner_leaves_no_server_behind, .timeout = 120)
{
    /* A child starts a cluster, says where, and is killed outright: no
     * stop runs, and the reaper must shut the server down and remove it. */
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        swf_history_cluster_t *c = NULL;
        if (swf_history_cluster_start(&c) != NULL)
            _exit(1);
        const char *line = swf_history_cluster_conninfo(c);
        if (write(fds[1], line, strlen(line) + 1) < 0)
            _exit(1);
        for (;;)
            pause();
    }
    close(fds[1]);
    char conninfo[512] = {0};
    size_t got = 0;
    ssize_t n;
    while (got < sizeof(conninfo) - 1 &&
           (n = read(fds[0], conninfo + got, sizeof(conninfo) - 1 - got)) > 0) {
        got += (size_t)n;
        if (memchr(conninfo, '\0', got) != NULL)
            break;
    }
    close(fds[0]);
    cr_assert_gt(got, 0, "the child did not start a cluster");
    char *pid_text = query_one(conninfo, "SELECT pg_backend_pid()");
    cr_assert_not_null(pid_text, "the child's cluster does not answer");
    free(pid_text);
    /* "host=DIR port=..." */
    char dir[128];
    cr_assert_eq(sscanf(conninfo, "host=%127s", dir), 1);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    struct stat st;
    bool gone = false;
    for (int i = 0; i < 300 && !gone; i++) {
        gone = stat(dir, &st) != 0;
        if (!gone)
            usleep(100000);
    }
    cr_assert(gone, "%s is still there 30 s after its owner died", dir);
    char *after = query_one(conninfo, "SELECT 1");
    cr_assert_null(after, "the server still answers");
}

/* The error of a start that failed, message and cause, as one string. */
static char *start_error(void)
{
    swf_history_cluster_t *c = NULL;
    swf_error_t *err = swf_history_cluster_start(&c);
    if (err == NULL) {
        swf_history_cluster_stop(c);
        return NULL;
    }
    char *out = NULL;
    cr_assert(asprintf(&out, "%s: %s", swf_error_message(err),
                       swf_error_cause(err) ? swf_error_cause(err) : "") >= 0);
    swf_error_free(err);
    return out;
}

/* Debian keeps initdb, pg_ctl and postgres in /usr/lib/postgresql/15/bin,
 * off PATH; started with a bare argv[0], initdb looked for itself on PATH
 * and stopped with 'could not find a "initdb" to execute'. Our machines'
 * symlinks in /usr/local/bin hid it: here PATH holds none of them. */
Test(history_cluster, starts_with_no_server_program_on_path, .timeout = 120)
{
    if (access("/usr/lib/postgresql/15/bin/initdb", X_OK) != 0)
        cr_skip_test("no PostgreSQL in /usr/lib/postgresql/15/bin");
    setenv("PATH", "/usr/bin:/bin", 1);
    cr_assert_neq(access("/usr/bin/initdb", X_OK), 0, "initdb is on PATH after all");
    swf_history_cluster_t *c = NULL;
    swf_error_t *err = swf_history_cluster_start(&c);
    cr_assert(err == NULL, "%s: %s", swf_error_message(err),
              swf_error_cause(err) ? swf_error_cause(err) : "");
    char *v = query_one(swf_history_cluster_conninfo(c), "SELECT 'up'");
    swf_history_cluster_stop(c);
    cr_assert_str_eq(v, "up");
    free(v);
}

/* Missing server programs gave "initdb failed in /tmp/swf-pg-..." (a folder
 * already removed) and an empty cause: nothing said what was missing. */
Test(history_cluster, a_missing_server_program_is_named, .timeout = 60)
{
    setenv("SWF_PG_BINDIR", "/nonexistent-swf-pg-bin", 1);
    char *msg = start_error();
    unsetenv("SWF_PG_BINDIR");
    cr_assert_not_null(msg, "a cluster started without its programs");
    cr_assert(strstr(msg, "initdb") != NULL && strstr(msg, "SWF_PG_BINDIR") != NULL &&
                  strstr(msg, "/nonexistent-swf-pg-bin") != NULL,
              "%s", msg);
    free(msg);
}

/* SWF_PG_TMPDIR with a space: the server started, but the conninfo
 * "host=/tmp/a b/swf-pg-..." did not parse, so nothing could connect. */
Test(history_cluster, a_folder_with_a_space_works, .timeout = 120)
{
    char parent[] = "/tmp/swf pg-XXXXXX";
    cr_assert_not_null(mkdtemp(parent));
    cr_assert_eq(chmod(parent, 0755), 0); /* the postgres user goes through it */
    setenv("SWF_PG_TMPDIR", parent, 1);
    swf_history_cluster_t *c = NULL;
    swf_error_t *err = swf_history_cluster_start(&c);
    unsetenv("SWF_PG_TMPDIR");
    cr_assert(err == NULL, "%s: %s", swf_error_message(err),
              swf_error_cause(err) ? swf_error_cause(err) : "");
    char *v = query_one(swf_history_cluster_conninfo(c), "SELECT 'up'");
    swf_history_cluster_stop(c);
    cr_assert_eq(rmdir(parent), 0, "%s is not empty after the stop", parent);
    cr_assert_not_null(v, "cannot connect with \"%s\"", "the conninfo");
    cr_assert_str_eq(v, "up");
    free(v);
}

/* A folder the conninfo, postgresql.conf or pg_ctl's shell would misread,
 * or one too long for a socket path, is refused; a long one used to be
 * ignored in silence (the cluster went to /tmp). */
Test(history_cluster, an_unusable_folder_is_refused, .timeout = 60)
{
    const char *bad[] = {"/tmp/swf-it's", "/tmp/swf-a,b", "/tmp/swf$HOME",
                         "/tmp/swf-0123456789012345678901234567890123"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        /* The folder exists: only its name is wrong. */
        cr_assert(mkdir(bad[i], 0755) == 0 || errno == EEXIST, "%s", bad[i]);
        setenv("SWF_PG_TMPDIR", bad[i], 1);
        char *msg = start_error();
        unsetenv("SWF_PG_TMPDIR");
        char cmd[256];
        snprintf(cmd, sizeof(cmd), "rm -rf -- \"%s\"", bad[i]);
        cr_assert_eq(system(cmd), 0);
        cr_assert_not_null(msg, "SWF_PG_TMPDIR=%s was taken", bad[i]);
        cr_assert(strstr(msg, "SWF_PG_TMPDIR") != NULL, "%s", msg);
        free(msg);
    }
}

/* Whether a process whose command line holds `needle` is running. */
static bool process_with(const char *needle)
{
    FILE *p = popen("cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' '", "r");
    cr_assert_not_null(p);
    char *buf = NULL;
    size_t cap = 0, len = 0, n;
    char chunk[4096];
    while ((n = fread(chunk, 1, sizeof(chunk), p)) > 0) {
        buf = realloc(buf, cap = len + n + 1);
        memcpy(buf + len, chunk, n);
        len += n;
    }
    pclose(p);
    bool found = buf != NULL && (buf[len] = '\0', strstr(buf, needle) != NULL);
    free(buf);
    return found;
}

/* pg_ctl start giving up (its -t ran out, or Ctrl-C reached it) left the
 * server it had launched running - in a session of its own, so no signal
 * of ours reached it - while its folder was removed under it. Here a
 * pg_ctl that starts the server and then reports failure stands for it. */
Test(history_cluster, a_failed_start_leaves_no_server_behind, .timeout = 120)
{
    const char *real = getenv("SWF_PG_BINDIR");
    char realdir[512];
    snprintf(realdir, sizeof(realdir), "%s",
             real != NULL && real[0] ? real : "/usr/lib/postgresql/15/bin");
    char probe[600];
    snprintf(probe, sizeof(probe), "%s/pg_ctl", realdir);
    if (access(probe, X_OK) != 0)
        cr_skip_test("no PostgreSQL in %s", realdir);
    char bin[] = "/tmp/swf-pgbin-XXXXXX";
    cr_assert_not_null(mkdtemp(bin));
    cr_assert_eq(chmod(bin, 0755), 0);
    char cmd[2048];
    snprintf(cmd, sizeof(cmd),
             "ln -s %s/initdb %s/postgres %s/ && printf '%%s\\n' '#!/bin/sh' "
             "'%s/pg_ctl \"$@\"; rc=$?' "
             "'case \" $* \" in *\" start \"*) exit 1;; esac' 'exit $rc' > %s/pg_ctl && "
             "chmod 0755 %s/pg_ctl",
             realdir, realdir, bin, realdir, bin, bin);
    cr_assert_eq(system(cmd), 0);
    setenv("SWF_PG_BINDIR", bin, 1);
    char *msg = start_error();
    unsetenv("SWF_PG_BINDIR");
    snprintf(cmd, sizeof(cmd), "rm -rf %s", bin);
    cr_assert_eq(system(cmd), 0);
    cr_assert_not_null(msg, "the cluster started");
    /* "the PostgreSQL server in DIR did not start: ..." */
    const char *at = strstr(msg, "server in ");
    cr_assert_not_null(at, "%s", msg);
    char dir[128];
    cr_assert_eq(sscanf(at + strlen("server in "), "%127s", dir), 1);
    free(msg);
    char needle[160];
    snprintf(needle, sizeof(needle), "-D %s/data", dir);
    cr_assert_not(process_with(needle), "a server of %s still runs", dir);
    struct stat st;
    cr_assert_neq(stat(dir, &st), 0, "%s is still there", dir);
}

/* As root, a SWF_PG_TMPDIR the postgres user cannot go through failed with
 * "initdb failed in DIR" and an empty cause. */
Test(history_cluster, an_unreachable_folder_is_explained, .timeout = 60)
{
    if (geteuid() != 0)
        cr_skip_test("only root hands the cluster to another user");
    char parent[] = "/tmp/swf-closed-XXXXXX"; /* 0700, root's */
    cr_assert_not_null(mkdtemp(parent));
    setenv("SWF_PG_TMPDIR", parent, 1);
    char *msg = start_error();
    unsetenv("SWF_PG_TMPDIR");
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", parent);
    cr_assert_eq(system(cmd), 0);
    cr_assert_not_null(msg, "a cluster started in a folder its user cannot reach");
    cr_assert(strstr(msg, "cannot enter") != NULL && strstr(msg, "SWF_PG_TMPDIR") != NULL, "%s",
              msg);
    free(msg);
}
