/*
 * test_migrations.c - proves history/migrations.c: migrating is idempotent,
 * an older database is upgraded in place, a newer one is refused.
 */
#include "test_pg_fixture.h"

static void ok(swf_error_t *err)
{
    cr_assert(err == NULL, "%s", err ? swf_error_message(err) : "");
}

Test(history_migrations, running_twice_is_harmless)
{
    const char *db = fixture_db();
    swf_history_store_t *s;
    ok(swf_history_pg_connect(db, &s));
    int from, to;
    ok(swf_history_pg_migrate(s, 0, &from, &to));
    cr_assert_eq(from, 0);
    cr_assert_eq(to, swf_history_pg_schema_latest());
    ok(swf_history_pg_migrate(s, 0, &from, &to));
    cr_assert_eq(from, swf_history_pg_schema_latest());
    cr_assert_eq(to, swf_history_pg_schema_latest());
    swf_history_store_free(s);
    char latest[16];
    snprintf(latest, sizeof(latest), "%d", swf_history_pg_schema_latest());
    cr_assert_str_eq(fixture_sql(db, "SELECT count(*) FROM schema_migrations"), latest);
}

Test(history_migrations, upgrades_an_older_database_in_place)
{
    const char *db = fixture_db();
    int latest = swf_history_pg_schema_latest();
    cr_assert_geq(latest, 4);
    swf_history_store_t *s;
    ok(swf_history_pg_connect(db, &s));
    int from, to;
    ok(swf_history_pg_migrate(s, 1, &from, &to));
    cr_assert_eq(to, 1);
    swf_history_store_free(s);
    /* Data written at version 1 survives the upgrades. */
    cr_assert_not_null(fixture_sql(
        db, "INSERT INTO events VALUES ('old', 1, 'WorkflowExecutionStarted', now(), '{}')"));
    cr_assert_not_null(fixture_sql(db, "INSERT INTO outbox (execution_id, event_id, topic, payload)"
                                       " VALUES ('old', 1, 'charge', '{\"input\": \"{}\"}')"));
    /* An open execution with two activities that have a timeout, one of
     * them completed, and one without. */
    cr_assert_not_null(fixture_sql(
        db, "INSERT INTO executions VALUES ('old', 'old', 'm', '1', 'open', now(), NULL, 1);"
            "INSERT INTO events VALUES"
            " ('old', 2, 'ActivityTaskScheduled', now(), '{\"startToCloseTimeout\": 5}'),"
            " ('old', 3, 'ActivityTaskScheduled', now(), '{\"heartbeatTimeout\": 2}'),"
            " ('old', 4, 'ActivityTaskScheduled', now(), '{}'),"
            " ('old', 5, 'ActivityTaskCompleted', now(), '{\"scheduledEventId\": 2}'),"
            " ('old', 6, 'ActivityTaskHeartbeatRecorded', now(), '{\"scheduledEventId\": 3}')"));
    /* Timers the statements of schema 4 and before left behind: one of an
     * execution terminated during its Wait, one of the open execution. */
    cr_assert_not_null(fixture_sql(
        db, "INSERT INTO executions VALUES ('gone', 'gone', 'm', '1', 'terminated', now(), now(),"
            " 5);"
            "INSERT INTO timers VALUES ('gone', 't1', now(), 4), ('old', 't1', now(), 4)"));
    cr_assert_str_eq(
        fixture_sql(db,
                    "SELECT count(*) FROM pg_indexes WHERE indexname = 'executions_status_start'"),
        "0");
    cr_assert_str_eq(fixture_sql(db, "SELECT is_nullable FROM information_schema.columns"
                                     " WHERE table_name = 'outbox' AND column_name = 'payload'"),
                     "NO");
    ok(swf_history_pg_new(db, &s)); /* migrates automatically */
    swf_history_store_free(s);
    char v[16];
    snprintf(v, sizeof(v), "%d", latest);
    cr_assert_str_eq(fixture_sql(db, "SELECT max(version) FROM schema_migrations"), v);
    cr_assert_str_eq(
        fixture_sql(db,
                    "SELECT count(*) FROM pg_indexes WHERE indexname = 'executions_status_start'"),
        "1");
    /* 3: new outbox rows name their event instead of copying it. */
    cr_assert_str_eq(fixture_sql(db, "SELECT is_nullable FROM information_schema.columns"
                                     " WHERE table_name = 'outbox' AND column_name = 'payload'"),
                     "YES");
    cr_assert_str_eq(fixture_sql(db, "SELECT count(*) FROM events"), "6");
    cr_assert_str_eq(fixture_sql(db, "SELECT payload->>'input' FROM outbox"), "{}");
    /* 4: the activities to watch for a timeout, from the events. */
    cr_assert_str_eq(fixture_sql(db, "SELECT string_agg(format('%s %s %s %s', scheduled_event_id,"
                                     " start_to_close, heartbeat, last_heartbeat IS NOT NULL),"
                                     " ', ' ORDER BY scheduled_event_id) FROM activity_timeouts"),
                     "3  2 t");
    /* 5: the closed execution's timer is gone, the open one's kept. */
    cr_assert_str_eq(fixture_sql(db, "SELECT string_agg(execution_id, ',') FROM timers"), "old");
}

Test(history_migrations, refuses_a_newer_database)
{
    const char *db = fixture_db();
    swf_history_store_t *s;
    ok(swf_history_pg_new(db, &s));
    swf_history_store_free(s);
    cr_assert_not_null(fixture_sql(db, "INSERT INTO schema_migrations (version) VALUES (99)"));
    swf_error_t *err = swf_history_pg_new(db, &s);
    cr_assert(err != NULL);
    cr_assert(strstr(swf_error_message(err), "newer") != NULL, "%s", swf_error_message(err));
    swf_error_free(err);
}
