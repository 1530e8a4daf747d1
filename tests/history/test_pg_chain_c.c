/*
 * test_pg_chain_c.c - proves history/pgext/swf_chain.c, the hash chain's
 * trigger in C, and its switch (swf_history_pg_chain_use, pg_chain.c): it
 * stores migration 7's plpgsql hashes byte for byte, for random events in
 * statements of several rows and executions and through COPY; it refuses
 * what the plpgsql trigger refuses, with the same SQLSTATE, message and
 * hint; the role that owns swf's tables creates it (a trusted extension)
 * and cannot replace its function, the runtime role can alter nothing of
 * it; a table of another shape is refused, never crashed on; the switch
 * goes back and forth on one chain; and an export of either imports into
 * the other with its hashes.
 *
 * Each test compares two databases of the same cluster, one migrated as it
 * is (plpgsql) and one pointed at the C trigger, or works on the latter
 * alone. Needs the extension installed on the server (scripts/test.sh
 * does, as root); skipped without it unless SWF_TEST_CHAIN_REQUIRED is set.
 * The random events print their seed on a failure; SWF_TEST_SEED replays.
 */
#include "test_pg_fixture.h"

#include <inttypes.h>
#include <time.h>

#include "../pg_state.h"

static unsigned seed, seed_start; /* of the random events; the start is printed on a failure */

static void ok(swf_error_t *err)
{
    cr_assert(err == NULL, "%s", err ? swf_error_message(err) : "");
}

/* swf admin check's verdict (its recomputation in SQL): the chain of id
 * holds, up to event head. */
static void chain_holds(swf_history_store_t *s, const char *id, int64_t head)
{
    swf_history_chain_t chain;
    ok(swf_history_pg_chain_check(s, id, &chain));
    cr_assert_eq(chain.broken_id, 0, "seed %u: %s: %s", seed_start, id, chain.broken);
    cr_assert_eq(chain.head_id, head, "%s", id);
}

/* Two fresh migrated databases: plain (plpgsql) and c (the C trigger);
 * their conninfos in the caller's buffers (512 bytes). */
static void two_databases(char *plain, char *c)
{
    snprintf(plain, 512, "%s", fixture_db());
    snprintf(c, 512, "%s", fixture_db());
    swf_history_store_free(fixture_store(plain));
    swf_history_store_t *s = fixture_store(c);
    fixture_chain_c(s);
    swf_history_store_free(s);
}

/* ---- random events ---------------------------------------------------------- */

static unsigned rnd(unsigned n)
{
    seed = seed * 1103515245u + 12345u;
    return (seed >> 8) % n;
}

typedef struct {
    char *data;
    size_t len, size;
} buf_t;

static void put(buf_t *b, const char *s)
{
    size_t n = strlen(s);
    if (b->len + n + 1 > b->size) {
        b->size = (b->len + n + 1) * 2;
        b->data = realloc(b->data, b->size);
        cr_assert_not_null(b->data);
    }
    memcpy(b->data + b->len, s, n + 1);
    b->len += n;
}

/* Pieces of JSON strings: multi-byte UTF-8, escapes of every kind jsonb
 * reads (and prints its own way), characters COPY and SQL quote. */
static const char *const pieces[] = {
    "a",    "é",         "中文",    "😀",       "\\u00e9", "\\ud83d\\ude00", "\\n", "\\t",
    "\\\"", "\\\\",      "\\/",     "\\u0001", " ",       "Ω≈ç√",           "'",   "%s",
    "$1",   "\\b\\f\\r", "\\u2028", "key",     ",",       "\\u007f",        "\t"};
static const char *const numbers[] = {"0",
                                      "-0",
                                      "1.50",
                                      "123456789012345678901234567890",
                                      "-1e-7",
                                      "1E+40",
                                      "3.141592653589793238462643383279",
                                      "9223372036854775808",
                                      "-9223372036854775809",
                                      "0.000001",
                                      "1e2",
                                      "42",
                                      "-17.250"};

static void json_string(buf_t *b)
{
    put(b, "\"");
    unsigned n = rnd(8);
    if (rnd(20) == 0)
        n = 2000 + rnd(20000); /* a long one */
    for (unsigned i = 0; i < n; i++) {
        const char *p = pieces[rnd(sizeof(pieces) / sizeof(pieces[0]))];
        put(b, strcmp(p, "\t") == 0 ? "\\t" : p);
    }
    put(b, "\"");
}

static void json_value(buf_t *b, int depth)
{
    unsigned kind = rnd(depth > 4 ? 5 : 7);
    if (kind == 0)
        json_string(b);
    else if (kind == 1)
        put(b, numbers[rnd(sizeof(numbers) / sizeof(numbers[0]))]);
    else if (kind == 2)
        put(b, rnd(2) ? "true" : "false");
    else if (kind == 3)
        put(b, "null");
    else if (kind == 4)
        put(b, "[]");
    else if (kind == 5) {
        put(b, "[");
        for (unsigned i = 0, n = 1 + rnd(5); i < n; i++) {
            if (i > 0)
                put(b, rnd(2) ? "," : " , ");
            json_value(b, depth + 1);
        }
        put(b, "]");
    } else {
        put(b, "{");
        for (unsigned i = 0, n = rnd(6); i < n; i++) {
            if (i > 0)
                put(b, ",");
            json_string(b); /* duplicate keys too: jsonb keeps the last */
            put(b, rnd(2) ? ":" : " : ");
            json_value(b, depth + 1);
        }
        put(b, "}");
    }
}

/* A timestamptz literal of a random microsecond between the years 1019 and
 * 9892, into out (64 bytes). */
static void random_time(char *out)
{
    time_t sec = (time_t)((long long)rnd(2800000) * 100000LL - 30000000000LL + rnd(100000));
    struct tm tm;
    cr_assert_not_null(gmtime_r(&sec, &tm));
    snprintf(out, 64, "%04d-%02d-%02d %02d:%02d:%02d.%06u+00", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, rnd(1000000));
}

static const char *const execution_ids[] = {
    "exec-1",
    "é-ex",
    "x with spaces 'quoted' \"double\"",
    "中文-😀",
    "",
    "tab\there",
    "a-long-one-a-long-one-a-long-one-a-long-one-a-long-one-a-long-one-a-long-one-a-long-one"};
#define EXECUTIONS (sizeof(execution_ids) / sizeof(execution_ids[0]))
static const char *const event_types[] = {"ActivityTaskCompleted", "DecisionTaskScheduled",
                                          "MarkerRecorded", "Événement", "x"};

/* Runs sql with params on c, asserting success. */
static void exec_ok(PGconn *c, const char *sql, int n, const char *const *params)
{
    PGresult *r = n == 0 ? PQexec(c, sql) : PQexecParams(c, sql, n, NULL, params, NULL, NULL, 0);
    cr_assert(PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK,
              "seed %u: %s", seed_start, PQerrorMessage(c));
    PQclear(r);
}

/* Appends one statement of random events, the same to both connections:
 * 1 to 4 executions, each 1 to 6 events after next[x], rows interleaved
 * across executions (each execution's in order). */
static void random_statement(PGconn *const *conns, int64_t *next)
{
    enum { ROWS = 24 };
    static char ids[ROWS][32], times[ROWS][64];
    static buf_t attrs[ROWS];
    const char *params[ROWS * 5];
    unsigned pick[4], left[4], k = 1 + rnd(4), rows = 0;
    for (unsigned i = 0; i < k; i++) {
        pick[i] = rnd(EXECUTIONS);
        for (unsigned j = 0; j < i; j++)
            if (pick[j] == pick[i])
                pick[i] = (pick[i] + 1) % EXECUTIONS, j = (unsigned)-1;
        left[i] = 1 + rnd(6);
    }
    buf_t sql = {0};
    put(&sql, "INSERT INTO events (execution_id, event_id, event_type, event_time, attributes)"
              " VALUES ");
    for (bool more = true; more;) {
        more = false;
        for (unsigned i = 0; i < k; i++) {
            if (left[i] == 0)
                continue;
            left[i]--;
            more = more || left[i] > 0;
            unsigned x = pick[i];
            snprintf(ids[rows], sizeof(ids[rows]), "%" PRId64, ++next[x]);
            random_time(times[rows]);
            attrs[rows].len = 0;
            put(&attrs[rows], "");
            json_value(&attrs[rows], rnd(3) == 0 ? 5 : 0);
            params[rows * 5] = execution_ids[x];
            params[rows * 5 + 1] = ids[rows];
            params[rows * 5 + 2] = event_types[rnd(sizeof(event_types) / sizeof(event_types[0]))];
            params[rows * 5 + 3] = times[rows];
            params[rows * 5 + 4] = attrs[rows].data;
            char row[96];
            unsigned p = rows * 5;
            snprintf(row, sizeof(row), "%s($%u, $%u, $%u, $%u, $%u)", rows ? ", " : "", p + 1,
                     p + 2, p + 3, p + 4, p + 5);
            put(&sql, row);
            rows++;
        }
    }
    for (int d = 0; d < 2; d++)
        exec_ok(conns[d], sql.data, (int)rows * 5, params);
    free(sql.data);
}

/* Every (execution, event, hash) of a database, in one string. */
static char *all_hashes(const char *db)
{
    PGconn *c = PQconnectdb(db);
    cr_assert(PQstatus(c) == CONNECTION_OK, "%s", PQerrorMessage(c));
    PGresult *r = PQexec(c, "SELECT count(*) || E'\\n' || string_agg(execution_id || ' '"
                            " || event_id || ' ' || encode(hash, 'hex'), E'\\n'"
                            " ORDER BY execution_id COLLATE \"C\", event_id) FROM events");
    cr_assert_eq(PQresultStatus(r), PGRES_TUPLES_OK, "%s", PQerrorMessage(c));
    char *all = strdup(PQgetvalue(r, 0, 0));
    PQclear(r);
    PQfinish(c);
    return all;
}

/* Where two strings of all_hashes first differ, for the message. */
static const char *first_difference(const char *a, const char *b)
{
    size_t line = 0;
    while (*a != '\0' && *a == *b) {
        if (*a == '\n')
            line = 0;
        else
            line++;
        a++, b++;
    }
    return a - line;
}

Test(history_chain_c, stores_the_plpgsql_triggers_hashes_byte_for_byte)
{
    char plain[512], c[512];
    two_databases(plain, c);
    const char *replay = getenv("SWF_TEST_SEED");
    seed = replay != NULL ? (unsigned)strtoul(replay, NULL, 10) : (unsigned)time(NULL);
    seed_start = seed;
    PGconn *conns[2] = {PQconnectdb(plain), PQconnectdb(c)};
    int64_t next[EXECUTIONS] = {0};
    for (int d = 0; d < 2; d++)
        cr_assert(PQstatus(conns[d]) == CONNECTION_OK, "%s", PQerrorMessage(conns[d]));
    /* Statements of one to many rows and executions, a few inside one
     * transaction (a later statement chains to an earlier one's rows). */
    for (int i = 0; i < 60; i++) {
        bool txn = i % 10 == 5;
        for (int d = 0; txn && d < 2; d++)
            exec_ok(conns[d], "BEGIN", 0, NULL);
        random_statement(conns, next);
        if (txn) {
            random_statement(conns, next);
            for (int d = 0; d < 2; d++)
                exec_ok(conns[d], "COMMIT", 0, NULL);
        }
    }
    /* COPY, which runs the row trigger row by row too. */
    for (int d = 0; d < 2; d++) {
        PGresult *r = PQexec(conns[d], "COPY events (execution_id, event_id, event_type,"
                                       " event_time, attributes) FROM STDIN (FORMAT csv)");
        cr_assert_eq(PQresultStatus(r), PGRES_COPY_IN, "%s", PQerrorMessage(conns[d]));
        PQclear(r);
        const char rows[] = "copied,1,WorkflowExecutionStarted,2026-01-01 00:00:00.5+00,"
                            "\"{\"\"é\"\": [1, 2.50, \"\"a,b\"\"]}\"\n"
                            "copied,2,DecisionTaskScheduled,2026-01-01 00:00:01+00,{}\n"
                            "copied,3,MarkerRecorded,1969-12-31 23:59:59.999999+00,"
                            "\"{\"\"details\"\": 123456789012345678901234567890}\"\n";
        cr_assert_eq(PQputCopyData(conns[d], rows, (int)strlen(rows)), 1);
        cr_assert_eq(PQputCopyEnd(conns[d], NULL), 1);
        r = PQgetResult(conns[d]);
        cr_assert_eq(PQresultStatus(r), PGRES_COMMAND_OK, "%s", PQerrorMessage(conns[d]));
        PQclear(r);
        PQclear(PQgetResult(conns[d]));
    }
    /* A big attributes value stored out of line (TOAST) in another table
     * and inserted from there: the trigger reads it through its pointer. */
    for (int d = 0; d < 2; d++)
        exec_ok(
            conns[d],
            "CREATE TABLE big AS SELECT jsonb_build_object('s', repeat('x€', 2000000),"
            " 'n', 123456789012345678901234567890) AS a;"
            " INSERT INTO events (execution_id, event_id, event_type, event_time, attributes)"
            " SELECT 'big', 1, 'WorkflowExecutionStarted', timestamptz '2026-01-01 00:00:00+00',"
            " a FROM big UNION ALL SELECT 'big', 2, 'MarkerRecorded',"
            " timestamptz '2026-01-01 00:00:01+00', a FROM big",
            0, NULL);
    for (int d = 0; d < 2; d++)
        PQfinish(conns[d]);

    char *a = all_hashes(plain), *b = all_hashes(c);
    cr_assert(strcmp(a, b) == 0, "seed %u: the C trigger's hashes differ from plpgsql's at: %.200s",
              seed_start, first_difference(b, a));
    cr_assert_gt(atoi(a), 100, "%s", a);
    free(a);
    free(b);

    /* And swf admin check's recomputation in SQL agrees with every chain. */
    swf_history_store_t *s = fixture_store(c);
    for (size_t x = 0; x < EXECUTIONS; x++) {
        if (next[x] == 0)
            continue;
        chain_holds(s, execution_ids[x], next[x]);
    }
    swf_history_store_free(s);
}

/* ---- the same errors ------------------------------------------------------- */

/* Runs sql on its own connection: "SQLSTATE|message|hint", or "ok HASH"
 * with the hash of the event ('x', 2) when it succeeded (static). */
static const char *outcome(const char *db, const char *sql)
{
    static char out[1024];
    PGconn *c = PQconnectdb(db);
    cr_assert(PQstatus(c) == CONNECTION_OK, "%s", PQerrorMessage(c));
    PGresult *r = PQexec(c, sql);
    if (PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK) {
        snprintf(out, sizeof(out), "ok %s", PQntuples(r) > 0 ? PQgetvalue(r, 0, 0) : "");
    } else {
        const char *hint = PQresultErrorField(r, PG_DIAG_MESSAGE_HINT);
        snprintf(out, sizeof(out), "%s|%s|%s", PQresultErrorField(r, PG_DIAG_SQLSTATE),
                 PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY), hint ? hint : "");
    }
    PQclear(r);
    PQfinish(c);
    return out;
}

Test(history_chain_c, refuses_what_the_plpgsql_trigger_refuses_with_the_same_error)
{
    char plain[512], c[512];
    two_databases(plain, c);
    const char *setup = "INSERT INTO events VALUES"
                        " ('x', 1, 'WorkflowExecutionStarted', '2026-01-01 00:00:00+00', '{}')";
    cr_assert_str_eq(outcome(plain, setup), "ok ");
    cr_assert_str_eq(outcome(c, setup), "ok ");
#define INS "INSERT INTO events VALUES "
#define RET " RETURNING encode(hash, 'hex')"
    struct {
        const char *sql, *state;
    } cases[] = {
        {INS "('x', 2, 'T', '2026-01-01 00:00:00+00', '{}', sha256('x'))", "SWF02"},
        {INS "('x', 2, 'T', '2026-01-01 00:00:00+00', '{}', '\\x00')", "SWF02"},
        {INS "('x', 2, 'T', '2026-01-01 00:00:00+00', '{}', '')", "SWF02"},
        {INS "('x', 3, 'T', '2026-01-01 00:00:00+00', '{}')", "SWF02"},
        {INS "('y', 5, 'T', '2026-01-01 00:00:00+00', '{}')", "SWF02"},
        {INS "('x', 0, 'T', '2026-01-01 00:00:00+00', '{}')", "SWF02"},
        {INS "('x', -9223372036854775808, 'T', '2026-01-01 00:00:00+00', '{}')", "22003"},
        {INS "('x', 9223372036854775807, 'T', '2026-01-01 00:00:00+00', '{}')", "SWF02"},
        {INS "(NULL, 2, 'T', '2026-01-01 00:00:00+00', '{}')", "SWF02"},
        {INS "('x', NULL, 'T', '2026-01-01 00:00:00+00', '{}')", "SWF02"},
        {INS "(NULL, 1, 'T', '2026-01-01 00:00:00+00', '{}')", "23502"},
        {INS "('z', 1, NULL, '2026-01-01 00:00:00+00', '{}')", "23502"},
        {INS "('z', 1, 'T', NULL, '{}')", "23502"},
        {INS "('z', 1, 'T', '2026-01-01 00:00:00+00', NULL)", "23502"},
        {INS "('z', 1, 'T', 'infinity', '{}')", "0A000"},
        {INS "('z', 1, 'T', '-infinity', '{}')", "0A000"},
        {INS "(NULL, 1, 'T', 'infinity', '{}')", "0A000"},
        {INS "('z', 1, 'T', '294276-12-31 23:59:59.999999Z', '{}')", "22003"},
        /* And what both take, with the same hash. */
        {INS "('p', 1, 'T', '4000-01-01 00:00:00+00 BC', '{\"a\": [1, 2.50, \"\\u00e9\"]}')" RET,
         "ok"},
        {INS "('q', 1, 'T', '2026-01-01 00:00:00+00', '{}', NULL)" RET, "ok"},
        {INS
         "('x', 2, 'T', '2026-01-01 00:00:00+00', '{}', (SELECT swf_event_hash(hash, 'x', 2, 'T',"
         " '2026-01-01 00:00:00+00', '{}') FROM events WHERE execution_id = 'x'))" RET,
         "ok"},
        {"INSERT INTO events (execution_id, event_id, event_type, event_time, attributes)"
         " SELECT 'x', i, 'T', '2026-01-01 00:00:00+00', jsonb_build_object('i', i)"
         " FROM generate_series(3, 50) i ORDER BY i DESC" RET,
         "SWF02"},
        {"INSERT INTO events (execution_id, event_id, event_type, event_time, attributes)"
         " SELECT 'x', i, 'T', '2026-01-01 00:00:00+00', jsonb_build_object('i', i)"
         " FROM generate_series(3, 50) i ORDER BY i" RET,
         "ok"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char want[1024];
        snprintf(want, sizeof(want), "%s", outcome(plain, cases[i].sql));
        cr_assert(strncmp(want, cases[i].state, strlen(cases[i].state)) == 0, "plpgsql: %s: %s",
                  cases[i].sql, want);
        cr_assert_str_eq(outcome(c, cases[i].sql), want, "%s", cases[i].sql);
    }
    /* Each case above ran in a transaction of its own: what succeeded is
     * stored in both, the same. */
    char *a = all_hashes(plain), *b = all_hashes(c);
    cr_assert_str_eq(a, b);
    free(a);
    free(b);
#undef INS
#undef RET
}

/* ---- roles ------------------------------------------------------------------ */

/* A fresh database owned by a fresh role that is no superuser, and a fresh
 * runtime role: their conninfos (640 bytes) and the runtime role's name. */
static void owned_database(char *owner, char *runtime, char *runtime_role)
{
    const char *base = getenv("SWF_TEST_PG");
    static int counter;
    char sql[512], owner_role[64], db[64];
    snprintf(owner_role, sizeof(owner_role), "chain_owner_%d_%d", (int)getpid(), counter);
    snprintf(runtime_role, 64, "chain_runtime_%d_%d", (int)getpid(), counter);
    snprintf(db, sizeof(db), "chain_db_%d_%d", (int)getpid(), counter++);
    snprintf(sql, sizeof(sql),
             "CREATE ROLE %s LOGIN NOSUPERUSER; CREATE ROLE %s LOGIN NOSUPERUSER;"
             " CREATE DATABASE %s OWNER %s TEMPLATE template0",
             owner_role, runtime_role, db, owner_role);
    for (char *stmt = strtok(sql, ";"); stmt != NULL; stmt = strtok(NULL, ";"))
        cr_assert_str_eq(pg_state(base, stmt, NULL), "", "%s", stmt);
    snprintf(owner, 640, "%s dbname=%s user=%s", base, db, owner_role);
    snprintf(runtime, 640, "%s dbname=%s user=%s", base, db, runtime_role);
}

Test(history_chain_c, the_owner_creates_it_and_neither_it_nor_the_runtime_role_can_replace_it)
{
    char owner[640], runtime[640], role[64];
    owned_database(owner, runtime, role);
    swf_history_store_t *s = fixture_store(owner);
    fixture_chain_c(s); /* a trusted extension: no superuser needed */
    ok(swf_history_pg_grant(s, role));
    swf_history_store_free(s);
    char value[256];
    cr_assert_str_eq(pg_state(owner,
                              "SELECT r.rolsuper FROM pg_proc p JOIN pg_roles r"
                              " ON r.oid = p.proowner WHERE p.proname = 'swf_chain_events'",
                              value),
                     "");
    cr_assert_str_eq(value, "t", "the function belongs to the bootstrap superuser");

    const char *const forbidden[] = {
        "ALTER TABLE events DISABLE TRIGGER events_chain",
        "DROP TRIGGER events_chain ON events",
        "CREATE OR REPLACE TRIGGER events_chain BEFORE INSERT ON events"
        " FOR EACH ROW EXECUTE FUNCTION swf_events_chain()",
        "CREATE OR REPLACE FUNCTION swf_chain_events() RETURNS trigger"
        " LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$",
        "ALTER FUNCTION swf_chain_events() RENAME TO gone",
        "DROP EXTENSION swf_chain",
        "ALTER EXTENSION swf_chain UPDATE",
        "DROP FUNCTION swf_chain_events()",
    };
    for (size_t i = 0; i < sizeof(forbidden) / sizeof(forbidden[0]); i++)
        cr_assert_str_eq(pg_state(runtime, forbidden[i], NULL), "42501", "%s", forbidden[i]);
    /* Nor can the owner change the function's body (it can drop the
     * extension with the trigger, as it can drop the trigger: the chain
     * holds against the runtime role, CHAIN.md says what it proves). */
    cr_assert_str_eq(pg_state(owner, forbidden[3], NULL), "42501");

    /* The runtime role appends through it, and gets its refusals. */
    s = fixture_store(runtime);
    swf_event_t ev = {0, SWF_EVENT_WORKFLOW_EXECUTION_STARTED, 1763719200000LL,
                      json_tokener_parse("{\"input\":{\"big\":123456789012345678901234567890}}")};
    ok(swf_history_append(s, "r", 1, &ev, 1));
    json_object_put(ev.attrs);
    cr_assert_str_eq(pg_state(runtime,
                              "INSERT INTO events VALUES ('r', 2, 'T', now(), '{}', sha256('x'))",
                              NULL),
                     "SWF02");
    cr_assert_str_eq(
        pg_state(runtime, "INSERT INTO events VALUES ('r', 3, 'T', now(), '{}')", NULL), "SWF02");
    chain_holds(s, "r", 1);
    swf_history_store_free(s);
}

Test(history_chain_c, refuses_a_table_of_another_shape_without_crashing)
{
    char owner[640], runtime[640], role[64];
    owned_database(owner, runtime, role);
    swf_history_store_t *s = fixture_store(owner);
    fixture_chain_c(s);
    swf_history_store_free(s);
    /* Anyone may attach it to a table of their own: each shape is refused
     * with what is wrong, and the server stays up. */
#define COLUMNS                                                                                    \
    "execution_id text, event_id bigint, event_type text, event_time timestamptz,"                 \
    " attributes jsonb, hash bytea"
#define FIRE(trigger) " CREATE TRIGGER c " trigger " EXECUTE FUNCTION swf_chain_events();"
#define ROW " INSERT INTO t VALUES ('a', 1, 'T', now(), '{}')"
    struct {
        const char *sql, *state, *says;
    } cases[] = {
        {"CREATE TABLE t (a int);" FIRE(
             "BEFORE INSERT ON t FOR EACH ROW") " INSERT INTO t VALUES (1)",
         "42P17", "has no column execution_id text"},
        {"CREATE TABLE t (execution_id text, event_id bigint, event_type text,"
         " event_time timestamptz, attributes jsonb, hash text, PRIMARY KEY (execution_id,"
         " event_id));" FIRE("BEFORE INSERT ON t FOR EACH ROW") ROW,
         "42P17", "has column hash of another type than bytea"},
        {"CREATE TABLE t (" COLUMNS ");" FIRE("BEFORE INSERT ON t FOR EACH ROW") ROW, "42P17",
         "has no primary key"},
        {"CREATE TABLE t (" COLUMNS
         ", PRIMARY KEY (event_id, execution_id));" FIRE("BEFORE INSERT ON t FOR EACH ROW") ROW,
         "42P17", "has a primary key other than"},
        {"CREATE TABLE t (" COLUMNS ", PRIMARY KEY (execution_id, event_id, event_type));" FIRE(
             "BEFORE INSERT ON t FOR EACH ROW") ROW,
         "42P17", "has a primary key other than"},
        {"CREATE TABLE t (" COLUMNS
         ", PRIMARY KEY (execution_id, event_id));" FIRE("AFTER INSERT ON t FOR EACH ROW") ROW,
         "39P01", "must be fired BEFORE INSERT FOR EACH ROW"},
        {"CREATE TABLE t (" COLUMNS ", PRIMARY KEY (execution_id, event_id));" FIRE(
             "BEFORE INSERT ON t FOR EACH STATEMENT") ROW,
         "39P01", "must be fired BEFORE INSERT FOR EACH ROW"},
        {"CREATE TABLE t (" COLUMNS ", PRIMARY KEY (execution_id, event_id));" FIRE(
             "BEFORE UPDATE ON t FOR EACH ROW") " INSERT INTO t VALUES ('a', 1, 'T', now(), '{}',"
                                                " '\\x00'); UPDATE t SET event_type = 'U'",
         "39P01", "must be fired BEFORE INSERT FOR EACH ROW"},
        {"CREATE TABLE t (" COLUMNS ", PRIMARY KEY (execution_id, event_id));" FIRE(
             "BEFORE INSERT ON t FOR EACH ROW") " ALTER TABLE t ENABLE ROW LEVEL SECURITY,"
                                                " FORCE ROW LEVEL SECURITY;"
                                                " CREATE POLICY p ON t USING (true);" ROW,
         "0A000", "row-level security applies to table \"t\""},
        {"SELECT swf_chain_events()", "39P01", "swf_chain_events: not called by a trigger"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char sql[1024];
        snprintf(sql, sizeof(sql), "BEGIN; %s", cases[i].sql);
        const char *got = outcome(owner, sql);
        cr_assert(strncmp(got, cases[i].state, 5) == 0 && strstr(got, cases[i].says) != NULL,
                  "%s: %s", cases[i].sql, got);
    }
    /* A table of the right shape in another schema, and a role that may
     * insert into it but not read it (plpgsql's lookup would need SELECT). */
    char sql[1024];
    snprintf(sql, sizeof(sql),
             "CREATE SCHEMA other; CREATE TABLE other.t (" COLUMNS
             ", PRIMARY KEY (execution_id, event_id));" FIRE(
                 "BEFORE INSERT ON other.t FOR EACH ROW") " INSERT INTO other.t VALUES ('a', 1, "
                                                          "'T', '2026-01-01 00:00:00+00', '{}'),"
                                                          " ('a', 2, 'T', '2026-01-01 "
                                                          "00:00:00+00', '{\"k\": 1}');"
                                                          " GRANT USAGE ON SCHEMA other TO %s; "
                                                          "GRANT INSERT ON other.t TO %s",
             role, role);
    cr_assert_str_eq(outcome(owner, sql), "ok ");
    cr_assert_str_eq(outcome(owner, "SELECT count(*) FROM other.t t"
                                    " WHERE t.hash = swf_event_hash(coalesce((SELECT p.hash"
                                    " FROM other.t p WHERE p.event_id = t.event_id - 1),"
                                    " '\\x0000000000000000000000000000000000000000000000000000"
                                    "000000000000'), t.execution_id, t.event_id, t.event_type,"
                                    " t.event_time, t.attributes)"),
                     "ok 2");
    cr_assert_str_eq(
        pg_state(runtime, "INSERT INTO other.t VALUES ('a', 3, 'T', now(), '{}')", NULL), "42501");
#undef COLUMNS
#undef FIRE
#undef ROW
}

/* ---- the switch, and what a row sees ------------------------------------------ */

static const char *chain_function(const char *db)
{
    static char value[256];
    cr_assert_str_eq(pg_state(db,
                              "SELECT tgfoid::regproc FROM pg_trigger"
                              " WHERE tgrelid = 'events'::regclass AND tgname = 'events_chain'",
                              value),
                     "");
    return value;
}

static void append_marker(swf_history_store_t *s, const char *id, int64_t at)
{
    swf_event_t ev = {0, at == 1 ? SWF_EVENT_WORKFLOW_EXECUTION_STARTED : SWF_EVENT_MARKER_RECORDED,
                      1763719200000LL + at, json_tokener_parse("{\"markerName\":\"é\"}")};
    ok(swf_history_append(s, id, at, &ev, 1));
    json_object_put(ev.attrs);
}

Test(history_chain_c, switching_back_and_forth_keeps_one_chain)
{
    const char *db = fixture_db();
    swf_history_store_t *s = fixture_store(db);
    swf_history_chain_use_t use;
    ok(swf_history_pg_chain_use(s, SWF_HISTORY_CHAIN_PLPGSQL, &use));
    cr_assert_str_eq(chain_function(db), "swf_events_chain");
    fixture_chain_c(s);
    cr_assert_str_eq(chain_function(db), "swf_chain_events");
    ok(swf_history_pg_chain_use(s, SWF_HISTORY_CHAIN_AUTO, &use));
    cr_assert_eq(use.impl, SWF_HISTORY_CHAIN_C);
    cr_assert_not(use.changed);
    cr_assert(strstr(use.says, "C trigger of the extension swf_chain 1.0") != NULL, "%s", use.says);
    append_marker(s, "sw", 1);
    append_marker(s, "sw", 2);
    ok(swf_history_pg_chain_use(s, SWF_HISTORY_CHAIN_PLPGSQL, &use));
    cr_assert_eq(use.impl, SWF_HISTORY_CHAIN_PLPGSQL);
    cr_assert(use.changed);
    cr_assert_str_eq(chain_function(db), "swf_events_chain");
    /* Unused, the extension went. */
    cr_assert_str_eq(
        fixture_sql(db, "SELECT count(*) FROM pg_extension WHERE extname = 'swf_chain'"), "0");
    append_marker(s, "sw", 3);
    fixture_chain_c(s);
    append_marker(s, "sw", 4);
    chain_holds(s, "sw", 4);
    swf_history_store_free(s);
}

Test(history_chain_c, chains_to_rows_of_its_transaction_and_committed_ones_only)
{
    const char *db = fixture_db();
    swf_history_store_t *s = fixture_store(db);
    fixture_chain_c(s);
    append_marker(s, "v", 1);
    PGconn *a = PQconnectdb(db), *b = PQconnectdb(db);
    exec_ok(a, "BEGIN", 0, NULL);
    exec_ok(a, "INSERT INTO events VALUES ('v', 2, 'T', now(), '{}')", 0, NULL);
    exec_ok(a, "INSERT INTO events VALUES ('v', 3, 'T', now(), '{}')", 0, NULL);
    /* Not committed: another transaction has nothing to chain to. */
    cr_assert_str_eq(pg_state(db, "INSERT INTO events VALUES ('v', 4, 'T', now(), '{}')", NULL),
                     "SWF02");
    /* A repeatable-read transaction whose snapshot predates the commit
     * still chains to it (plpgsql's query would not see it: swf_chain.c). */
    exec_ok(b, "BEGIN ISOLATION LEVEL REPEATABLE READ", 0, NULL);
    exec_ok(b, "SELECT count(*) FROM events", 0, NULL);
    exec_ok(a, "COMMIT", 0, NULL);
    exec_ok(b, "INSERT INTO events VALUES ('v', 4, 'T', now(), '{}')", 0, NULL);
    exec_ok(b, "COMMIT", 0, NULL);
    PQfinish(a);
    PQfinish(b);
    append_marker(s, "v", 5);
    chain_holds(s, "v", 5);
    swf_history_store_free(s);
}

/* A history imported where the C trigger computes the chain exports the
 * hashes a plpgsql database takes as its own, and the other way round:
 * swf import compares the file's hashes with those its database computes. */
Test(history_chain_c, an_export_of_either_imports_into_the_other_with_its_hashes)
{
    char plain[512], c[512];
    two_databases(plain, c);
    const char *from[2] = {c, plain}, *to[2] = {plain, c};
    for (int i = 0; i < 2; i++) {
        char id[32];
        snprintf(id, sizeof(id), "imp-%d", i);
        swf_event_list_t h = {0};
        json_object *start = json_tokener_parse("{\"input\":{\"é\":[1,2.50,\"\\u2028\"],"
                                                "\"big\":123456789012345678901234567890}}");
        json_object_object_add(start, "executionId", json_object_new_string(id));
        swf_event_list_push(&h, SWF_EVENT_WORKFLOW_EXECUTION_STARTED, 1763719200000LL, start);
        swf_event_list_push(&h, SWF_EVENT_DECISION_TASK_SCHEDULED, 1763719200001LL, NULL);
        swf_event_list_push(
            &h, SWF_EVENT_MARKER_RECORDED, 1763719200002LL,
            json_tokener_parse("{\"markerName\":\"m\",\"details\":{\"b\":1,\"a\":2}}"));
        swf_history_store_t *a = fixture_store(from[i]), *b = fixture_store(to[i]);
        ok(swf_history_pg_import(a, &h, NULL));
        swf_event_hash_t hashes[3], again[3];
        ok(swf_history_pg_chain_load(a, id, 3, hashes));
        ok(swf_history_pg_import_chained(b, &h, hashes, NULL));
        ok(swf_history_pg_chain_load(b, id, 3, again));
        cr_assert_arr_eq(again, hashes, sizeof(hashes));
        swf_event_list_free(&h);
        swf_history_store_free(a);
        swf_history_store_free(b);
    }
}
