/*
 * pg_state.h - one SQL statement run on its own connection, for the tests
 * that check what a role may do (tests/cli/test_db.c, the daemon's).
 */
#ifndef SWF_TESTS_PG_STATE_H
#define SWF_TESTS_PG_STATE_H

#include <criterion/criterion.h>
#include <libpq-fe.h>
#include <stdio.h>

/* Runs sql on conninfo; returns its SQLSTATE ("" when it succeeded; a
 * static buffer) and, when value is not NULL, the first value of its first
 * row in value (256 bytes; "" for no row). */
static inline const char *pg_state(const char *conninfo, const char *sql, char *value)
{
    static char state[8];
    PGconn *c = PQconnectdb(conninfo);
    cr_assert(PQstatus(c) == CONNECTION_OK, "%s", PQerrorMessage(c));
    PGresult *r = PQexec(c, sql);
    const char *s = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    snprintf(state, sizeof(state), "%s", s != NULL ? s : "");
    if (value != NULL)
        snprintf(value, 256, "%s", PQntuples(r) > 0 ? PQgetvalue(r, 0, 0) : "");
    PQclear(r);
    PQfinish(c);
    return state;
}

#endif
