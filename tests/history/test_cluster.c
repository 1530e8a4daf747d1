/*
 * test_cluster.c - proves history/cluster.c: a throwaway cluster starts,
 * answers on its Unix socket only, goes down and comes back with its data,
 * and leaves nothing behind when stopped, nor when its owner is killed.
 */
#include <criterion/criterion.h>
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
