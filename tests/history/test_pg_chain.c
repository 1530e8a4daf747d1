/*
 * test_pg_chain.c - proves history/pg_chain.c and migration 7: the hash
 * chain is the one history/CHAIN.md documents, whoever writes the events
 * (single and batch appends, start, import, a plain INSERT), existing
 * histories get it by migration, and the check names the first event an
 * owner altered.
 */
#include "test_pg_fixture.h"

#include "protocol/hash.h"
#include "protocol/json.h"

#define T0 1763719200000LL

static void ok(swf_error_t *err)
{
    cr_assert(err == NULL, "%s", err ? swf_error_message(err) : "");
}

static void expect_code(swf_error_t *err, swf_code_t code)
{
    cr_assert_eq(swf_error_code(err), code, "%s", err ? swf_error_message(err) : "no error");
    swf_error_free(err);
}

/* Appends to buf (at *n) a field of the canonical form: "LENGTH:BYTES,". */
static void netstring(char *buf, size_t *n, size_t size, const char *field)
{
    int w = snprintf(buf + *n, size - *n, "%zu:%s,", strlen(field), field);
    cr_assert(w > 0 && (size_t)w < size - *n);
    *n += (size_t)w;
}

/*
 * The chain of an execution recomputed here, in C, from the documented
 * form alone (history/CHAIN.md): for each event, SHA-256 of the previous
 * hash (32 zero bytes before event 1) and the netstrings of the execution
 * id, the event id, the type, the time in microseconds since the epoch and
 * the attributes as the database prints jsonb. Asserts that the database's
 * stored hashes are these and returns how many events there were.
 */
static int chain_matches_the_documented_form(const char *db, const char *execution_id)
{
    char conninfo[1024];
    snprintf(conninfo, sizeof(conninfo), "%s client_encoding=UTF8", db);
    PGconn *c = PQconnectdb(conninfo);
    cr_assert(PQstatus(c) == CONNECTION_OK, "%s", PQerrorMessage(c));
    const char *params[1] = {execution_id};
    PGresult *r = PQexecParams(
        c,
        "SELECT event_id, event_type, (EXTRACT(epoch FROM event_time) * 1000000)::bigint,"
        " attributes::text, encode(hash, 'hex') FROM events WHERE execution_id = $1"
        " ORDER BY event_id",
        1, NULL, params, NULL, NULL, 0);
    cr_assert_eq(PQresultStatus(r), PGRES_TUPLES_OK, "%s", PQerrorMessage(c));
    uint8_t prev[SWF_HASH_SHA256_BYTES] = {0};
    static char buf[1 << 16];
    for (int i = 0; i < PQntuples(r); i++) {
        memcpy(buf, prev, sizeof(prev));
        size_t n = sizeof(prev);
        netstring(buf, &n, sizeof(buf), execution_id);
        for (int col = 0; col < 4; col++)
            netstring(buf, &n, sizeof(buf), PQgetvalue(r, i, col));
        swf_hash_digest(SWF_HASH_SHA256, buf, n, prev);
        char hex[2 * SWF_HASH_SHA256_BYTES + 1];
        swf_hash_hex_encode(prev, sizeof(prev), hex);
        cr_assert_str_eq(PQgetvalue(r, i, 4), hex, "event %s", PQgetvalue(r, i, 0));
    }
    int count = PQntuples(r);
    PQclear(r);
    PQfinish(c);
    return count;
}

/* Appends one event of type t with attrs (JSON text) at id. */
static void append(swf_history_store_t *s, const char *id, int64_t at, swf_event_type_t t,
                   const char *attrs)
{
    swf_event_t ev = {0, t, T0 + at, json_tokener_parse(attrs)};
    cr_assert_not_null(ev.attrs, "%s", attrs);
    ok(swf_history_append(s, id, at, &ev, 1));
    json_object_put(ev.attrs);
}

static void start(swf_history_store_t *s, const char *id)
{
    append(s, id, 1, SWF_EVENT_WORKFLOW_EXECUTION_STARTED,
           "{\"input\":{\"é\":1.50,\"big\":123456789012345678901234567890,\"s\":\"a/b\"}}");
}

Test(history_chain, every_writer_stores_the_chain_the_documented_form_gives)
{
    const char *db = fixture_db();
    swf_history_store_t *s = fixture_store(db);
    /* Single appends (the fast path and the projections' statement). */
    start(s, "single");
    append(s, "single", 2, SWF_EVENT_DECISION_TASK_SCHEDULED, "{}");
    append(s, "single", 3, SWF_EVENT_MARKER_RECORDED, "{\"markerName\":\"m\",\"details\":[1,2]}");
    append(s, "single", 4, SWF_EVENT_TIMER_STARTED, "{\"timerId\":\"t\",\"startToFireTimeout\":5}");
    cr_assert_eq(chain_matches_the_documented_form(db, "single"), 4);

    /* A batch of several executions, several events each: one statement,
     * whose trigger sees the rows it inserted before. */
    const char *ids[3] = {"b1", "b2", "b3"};
    for (int i = 0; i < 3; i++)
        start(s, ids[i]);
    swf_event_t evs[3][3];
    swf_history_append_t appends[3];
    swf_error_t *errors[3];
    for (int i = 0; i < 3; i++) {
        for (int k = 0; k < 3; k++) {
            evs[i][k] = (swf_event_t){0, SWF_EVENT_MARKER_RECORDED, T0 + 10 * k,
                                      json_tokener_parse("{\"markerName\":\"x\"}")};
        }
        appends[i] = (swf_history_append_t){ids[i], 2, evs[i], 3};
    }
    ok(swf_history_pg_batch_append(s, appends, 3, errors));
    for (int i = 0; i < 3; i++) {
        cr_assert_null(errors[i]);
        cr_assert_eq(chain_matches_the_documented_form(db, ids[i]), 4);
        for (int k = 0; k < 3; k++)
            json_object_put(evs[i][k].attrs);
    }

    /* A plain INSERT leaves the hash out and gets it. */
    cr_assert_not_null(fixture_sql(db, "INSERT INTO events VALUES"
                                       " ('plain', 1, 'WorkflowExecutionStarted', now(), '{}'),"
                                       " ('plain', 2, 'DecisionTaskScheduled', now(), '{}')"),
                       "%s", fixture_value);
    cr_assert_eq(chain_matches_the_documented_form(db, "plain"), 2);
    swf_history_store_free(s);
}

/* The migration hashes with cheaper SQL in a UTF8 database; in another
 * encoding the form must come out the same: lengths in UTF-8 bytes. */
Test(history_chain, a_latin1_database_stores_the_same_documented_form)
{
    const char *base = getenv("SWF_TEST_PG");
    char sql[256], db[512];
    snprintf(sql, sizeof(sql),
             "CREATE DATABASE swf_latin1_%d ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C'"
             " TEMPLATE template0",
             (int)getpid());
    cr_assert_not_null(fixture_sql(base, sql), "%s", fixture_value);
    snprintf(db, sizeof(db), "%s dbname=swf_latin1_%d client_encoding=UTF8", base, (int)getpid());
    swf_history_store_t *s = fixture_store(db);
    cr_assert_str_eq(fixture_sql(db, "SELECT getdatabaseencoding()"), "LATIN1");
    append(s, "é", 1, SWF_EVENT_WORKFLOW_EXECUTION_STARTED, "{\"input\":{\"café\":\"crème\"}}");
    append(s, "é", 2, SWF_EVENT_MARKER_RECORDED, "{\"markerName\":\"à\"}");
    cr_assert_eq(chain_matches_the_documented_form(db, "é"), 2);
    swf_history_store_free(s);
}

Test(history_chain, the_trigger_refuses_a_wrong_hash_and_an_event_with_nothing_to_chain_to)
{
    const char *db = fixture_db();
    swf_history_store_t *s = fixture_store(db);
    start(s, "x");
    cr_assert_null(fixture_sql(db, "INSERT INTO events VALUES"
                                   " ('x', 2, 'DecisionTaskScheduled', now(), '{}', sha256('x'))"));
    cr_assert(strstr(fixture_value, "event 2: the hash given is not the chain's") != NULL, "%s",
              fixture_value);
    cr_assert_null(fixture_sql(
        db, "INSERT INTO events VALUES ('x', 3, 'DecisionTaskScheduled', now(), '{}')"));
    cr_assert(strstr(fixture_value, "event 3 has no event 2 to chain to") != NULL, "%s",
              fixture_value);
    /* The right hash, given, is taken. */
    cr_assert_not_null(
        fixture_sql(db, "INSERT INTO events SELECT 'x', 2, 'DecisionTaskScheduled', "
                        "timestamptz '2026-01-01 00:00:00Z', '{}', swf_event_hash(hash, 'x', 2,"
                        " 'DecisionTaskScheduled', timestamptz '2026-01-01 00:00:00Z', '{}')"
                        " FROM events WHERE execution_id = 'x' AND event_id = 1"),
        "%s", fixture_value);
    cr_assert_eq(chain_matches_the_documented_form(db, "x"), 2);
    swf_history_store_free(s);
}

Test(history_chain, the_migration_chains_existing_histories_as_the_trigger_would)
{
    const char *db = fixture_db();
    swf_history_store_t *s;
    ok(swf_history_pg_connect(db, &s));
    int from, to;
    ok(swf_history_pg_migrate(s, 6, &from, &to));
    cr_assert_eq(to, 6);
    swf_history_store_free(s);
    /* Histories written before the chain, one of them with an odd time
     * (microseconds) and attributes jsonb normalises. */
    cr_assert_not_null(
        fixture_sql(db, "INSERT INTO events VALUES"
                        " ('old', 1, 'WorkflowExecutionStarted', '2026-01-01 00:00:00.123456Z',"
                        "  '{\"b\": 1.0, \"a\": [\"\\u00e9\"]}'),"
                        " ('old', 2, 'DecisionTaskScheduled', now(), '{}'),"
                        " ('old', 3, 'DecisionTaskStarted', now(), '{\"scheduledEventId\": 2}'),"
                        " ('other', 1, 'WorkflowExecutionStarted', now(), '{}')"),
        "%s", fixture_value);
    ok(swf_history_pg_new(db, &s)); /* migrates to the latest */
    cr_assert_eq(chain_matches_the_documented_form(db, "old"), 3);
    cr_assert_eq(chain_matches_the_documented_form(db, "other"), 1);
    swf_history_chain_t chain;
    ok(swf_history_pg_chain_check(s, "old", &chain));
    cr_assert_eq(chain.broken_id, 0, "%s", chain.broken);
    cr_assert_eq(chain.head_id, 3);
    /* Appends go on from the migrated chain. */
    append(s, "old", 4, SWF_EVENT_MARKER_RECORDED, "{\"markerName\":\"m\"}");
    cr_assert_eq(chain_matches_the_documented_form(db, "old"), 4);
    /* The events table stays append-only, for the owner too. */
    cr_assert_null(fixture_sql(db, "UPDATE events SET hash = sha256('x')"));
    cr_assert(strstr(fixture_value, "append-only") != NULL, "%s", fixture_value);
    swf_history_store_free(s);
}

Test(history_chain, the_check_names_the_first_event_the_owner_changed)
{
    const char *db = fixture_db();
    swf_history_store_t *s = fixture_store(db);
    const char *ids[] = {"attrs", "time", "type", "hash", "rehashed", "first"};
    for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
        start(s, ids[i]);
        append(s, ids[i], 2, SWF_EVENT_DECISION_TASK_SCHEDULED, "{}");
        append(s, ids[i], 3, SWF_EVENT_MARKER_RECORDED, "{\"markerName\":\"m\",\"details\":7}");
        append(s, ids[i], 4, SWF_EVENT_MARKER_RECORDED, "{\"markerName\":\"n\"}");
    }
    fixture_owner_rewrites(db,
                           "UPDATE events SET attributes = '{\"markerName\":\"m\",\"details\":8}'"
                           " WHERE execution_id = 'attrs' AND event_id = 3");
    fixture_owner_rewrites(db,
                           "UPDATE events SET event_time = event_time + interval '1 microsecond'"
                           " WHERE execution_id = 'time' AND event_id = 3");
    fixture_owner_rewrites(db, "UPDATE events SET event_type = 'DecisionTaskStarted'"
                               " WHERE execution_id = 'type' AND event_id = 3");
    fixture_owner_rewrites(db, "UPDATE events SET hash = sha256('x')"
                               " WHERE execution_id = 'hash' AND event_id = 3");
    /* An owner who recomputes the altered event's hash moves the break to
     * the next event, whose stored hash chained to the old one. */
    fixture_owner_rewrites(
        db, "UPDATE events e SET attributes = '{\"markerName\":\"z\"}',"
            " hash = swf_event_hash(p.hash, e.execution_id, e.event_id, e.event_type,"
            "  e.event_time, '{\"markerName\":\"z\"}')"
            " FROM events p WHERE p.execution_id = e.execution_id"
            " AND p.event_id = e.event_id - 1"
            " AND e.execution_id = 'rehashed' AND e.event_id = 3");
    fixture_owner_rewrites(db, "DELETE FROM events WHERE execution_id = 'first' AND event_id = 1");
    struct {
        const char *id;
        int64_t broken;
        const char *says;
    } expect[] = {
        {"attrs", 3, "MarkerRecorded does not match its hash"},
        {"time", 3, "MarkerRecorded does not match its hash"},
        {"type", 3, "DecisionTaskStarted does not match its hash"},
        {"hash", 3, "MarkerRecorded does not match its hash"},
        {"rehashed", 4, "or the hash of the event before it, changed"},
        {"first", 1, "missing: the history starts at event 2 (DecisionTaskScheduled)"},
    };
    for (size_t i = 0; i < sizeof(expect) / sizeof(expect[0]); i++) {
        swf_history_chain_t chain;
        ok(swf_history_pg_chain_check(s, expect[i].id, &chain));
        cr_assert_eq(chain.broken_id, expect[i].broken, "%s: %s", expect[i].id, chain.broken);
        cr_assert(strstr(chain.broken, expect[i].says) != NULL, "%s: %s", expect[i].id,
                  chain.broken);
        cr_assert_eq(chain.head_id, 4);
        cr_assert_eq(strlen(chain.head_hash), SWF_EVENT_HASH_HEX);
    }
    swf_history_chain_t chain;
    expect_code(swf_history_pg_chain_check(s, "nope", &chain), SWF_E_NOTFOUND);
    swf_history_store_free(s);
}

Test(history_chain, import_stores_the_hashes_given_or_refuses_naming_the_event)
{
    const char *db1 = fixture_db();
    static char db1s[512];
    snprintf(db1s, sizeof(db1s), "%s", db1);
    const char *db2 = fixture_db();
    swf_history_store_t *s1 = fixture_store(db1s), *s2 = fixture_store(db2);
    swf_event_list_t h = {0};
    swf_event_list_push(&h, SWF_EVENT_WORKFLOW_EXECUTION_STARTED, T0,
                        json_tokener_parse("{\"executionId\":\"imp\",\"input\":{}}"));
    swf_event_list_push(&h, SWF_EVENT_DECISION_TASK_SCHEDULED, T0 + 1, NULL);
    swf_event_list_push(&h, SWF_EVENT_MARKER_RECORDED, T0 + 2,
                        json_tokener_parse("{\"markerName\":\"m\"}"));
    ok(swf_history_pg_import(s1, &h, NULL));
    swf_event_hash_t hashes[3];
    ok(swf_history_pg_chain_load(s1, "imp", 3, hashes));
    expect_code(swf_history_pg_chain_load(s1, "imp", 4, hashes), SWF_E_NOTFOUND);

    /* A hash that is not the chain's: refused, nothing written. */
    swf_event_hash_t wrong[3];
    memcpy(wrong, hashes, sizeof(wrong));
    wrong[2][0] = wrong[2][0] == '0' ? '1' : '0';
    swf_error_t *err = swf_history_pg_import_chained(s2, &h, wrong, NULL);
    cr_assert_eq(swf_error_code(err), SWF_E_INPUT);
    cr_assert(strstr(swf_error_message(err), "event 3 (MarkerRecorded): its eventHash") != NULL,
              "%s", swf_error_message(err));
    swf_error_free(err);
    cr_assert_str_eq(fixture_sql(db2, "SELECT count(*) FROM events"), "0");

    /* The hashes given: stored as they were. */
    char *id = NULL;
    ok(swf_history_pg_import_chained(s2, &h, hashes, &id));
    cr_assert_str_eq(id, "imp");
    free(id);
    swf_event_hash_t again[3];
    ok(swf_history_pg_chain_load(s2, "imp", 3, again));
    cr_assert_arr_eq(again, hashes, sizeof(hashes));
    swf_event_list_free(&h);
    swf_history_store_free(s1);
    swf_history_store_free(s2);
}
