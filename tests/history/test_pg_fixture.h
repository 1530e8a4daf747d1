/*
 * test_pg_fixture.h - one throwaway PostgreSQL cluster per test binary.
 *
 * Criterion runs each test in a process of its own, forked from the runner.
 * The runner starts the cluster in its PRE_ALL hook and publishes the
 * conninfo in the environment (SWF_TEST_PG), which the test processes
 * inherit; POST_ALL stops it and removes its directory. Each test then gets a
 * fresh database of its own (fixture_db), so tests running in parallel never
 * see each other's rows. Set SWF_TEST_PG yourself to use a running server.
 *
 * Include once per test binary.
 */
#ifndef SWF_TEST_PG_FIXTURE_H
#define SWF_TEST_PG_FIXTURE_H

#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "history/cluster.h"
#include "history/pg.h"

static swf_history_cluster_t *fixture_cluster;

ReportHook(PRE_ALL)(struct criterion_test_set *set)
{
    (void)set;
    if (getenv("SWF_TEST_PG") != NULL)
        return;
    swf_error_t *err = swf_history_cluster_start(&fixture_cluster);
    if (err != NULL) {
        fprintf(stderr, "cannot start a PostgreSQL cluster: %s\n%s\n", swf_error_message(err),
                swf_error_cause(err) ? swf_error_cause(err) : "");
        swf_error_free(err);
        exit(3);
    }
    setenv("SWF_TEST_PG", swf_history_cluster_conninfo(fixture_cluster), 1);
}

ReportHook(POST_ALL)(struct criterion_global_stats *stats)
{
    (void)stats;
    swf_history_cluster_stop(fixture_cluster);
    fixture_cluster = NULL;
}

/* A fresh, empty database: returns its conninfo (static storage). */
static inline const char *fixture_db(void)
{
    static char conninfo[512];
    static int counter;
    const char *base = getenv("SWF_TEST_PG");
    cr_assert(base != NULL, "SWF_TEST_PG is not set");
    char name[64];
    snprintf(name, sizeof(name), "swf_test_%d_%d", (int)getpid(), counter++);
    PGconn *c = PQconnectdb(base);
    cr_assert(PQstatus(c) == CONNECTION_OK, "%s", PQerrorMessage(c));
    char sql[128];
    snprintf(sql, sizeof(sql), "CREATE DATABASE %s TEMPLATE template0", name);
    PGresult *r = PQexec(c, sql);
    cr_assert(PQresultStatus(r) == PGRES_COMMAND_OK, "%s", PQerrorMessage(c));
    PQclear(r);
    PQfinish(c);
    snprintf(conninfo, sizeof(conninfo), "%s dbname=%s", base, name);
    return conninfo;
}

/* Points the hash chain of s (migrated, its owner's) at the C trigger of
 * history/pgext. Skips the test when the server lacks the extension,
 * unless SWF_TEST_CHAIN_REQUIRED is set (scripts/test.sh installs it and
 * sets it): then the test fails. */
static inline void fixture_chain_c(swf_history_store_t *s)
{
    swf_history_chain_use_t use;
    swf_error_t *err = swf_history_pg_chain_use(s, SWF_HISTORY_CHAIN_C, &use);
    if (err != NULL && getenv("SWF_TEST_CHAIN_REQUIRED") == NULL &&
        strstr(swf_error_message(err), "not installed") != NULL) {
        swf_error_free(err);
        swf_history_store_free(s);
        cr_skip_test("the server has no extension swf_chain (cmake --install build --component "
                     "swf_chain, as root)");
    }
    cr_assert(err == NULL, "%s", swf_error_message(err));
    cr_assert_eq(use.impl, SWF_HISTORY_CHAIN_C);
}

/* A migrated store on a fresh database. With SWF_TEST_CHAIN=c in the
 * environment (the ctest runs named *_c_chain, CMakeLists.txt) its hash
 * chain is the C trigger's (fixture_chain_c), so that the same tests prove
 * both implementations. */
static inline swf_history_store_t *fixture_store(const char *conninfo)
{
    swf_history_store_t *s = NULL;
    swf_error_t *err = swf_history_pg_new(conninfo, &s);
    cr_assert(err == NULL, "%s", swf_error_message(err));
    const char *chain = getenv("SWF_TEST_CHAIN");
    if (chain != NULL && strcmp(chain, "c") == 0)
        fixture_chain_c(s);
    return s;
}

/* Runs SQL on a connection of its own; returns the first value of the first
 * row (static storage, "" when none) or NULL when the statement failed
 * (fixture_value then holds the error). */
static char fixture_value[4096]; /* after a failure: the error message */

static inline const char *fixture_sql(const char *conninfo, const char *sql)
{
    char *value = fixture_value;
    size_t size = sizeof(fixture_value);
    PGconn *c = PQconnectdb(conninfo);
    cr_assert(PQstatus(c) == CONNECTION_OK, "%s", PQerrorMessage(c));
    PGresult *r = PQexec(c, sql);
    ExecStatusType st = PQresultStatus(r);
    const char *out = NULL;
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
        snprintf(value, size, "%s",
                 PQntuples(r) > 0 && PQnfields(r) > 0 ? PQgetvalue(r, 0, 0) : "");
        out = value;
    } else {
        snprintf(value, size, "%s", PQresultErrorMessage(r));
    }
    PQclear(r);
    PQfinish(c);
    return out;
}

/* Runs sql as the events table's owner with its append-only trigger held
 * off: what the hash chain (history/CHAIN.md) must show. */
static inline void fixture_owner_rewrites(const char *conninfo, const char *sql)
{
    char all[2048];
    snprintf(all, sizeof(all),
             "ALTER TABLE events DISABLE TRIGGER events_append_only; %s;"
             " ALTER TABLE events ENABLE TRIGGER events_append_only",
             sql);
    cr_assert_not_null(fixture_sql(conninfo, all), "%s", fixture_value);
}

#endif
