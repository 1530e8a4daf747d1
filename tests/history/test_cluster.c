/*
 * test_cluster.c - proves history/cluster.c: a throwaway cluster starts,
 * answers on its Unix socket only, and leaves nothing behind when stopped.
 */
#include <criterion/criterion.h>
#include <libpq-fe.h>
#include <string.h>
#include <sys/stat.h>

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
