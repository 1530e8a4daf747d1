/*
 * pg_catalog.c - the API's catalogue in PostgreSQL (history/catalog.h).
 *
 * State machines stay where `swf register` puts them (state_machines, one
 * row per version); what only the API knows, the role ARN and type AWS's
 * clients send, is a row of state_machine_settings beside them, and a
 * machine without one (registered by the command line) reads as a STANDARD
 * machine with no role. Activities are rows of their own: an activity's
 * name is its task list, so nothing else is needed to run one.
 */
#include "history/catalog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history/pg_internal.h"
#include "protocol/json.h"
#include "protocol/limits.h"

void swf_history_catalog_entries_free(swf_history_catalog_entry_t *items, size_t count)
{
    for (size_t i = 0; items != NULL && i < count; i++) {
        free(items[i].name);
        free(items[i].role_arn);
        free(items[i].type);
    }
    free(items);
}

static swf_error_t *name_ok(const char *name)
{
    if (name == NULL || name[0] == '\0' || strlen(name) > SWF_LIMIT_NAME_BYTES)
        return swf_error_new(SWF_E_INPUT, NULL, "a name must be 1 to %d bytes",
                             SWF_LIMIT_NAME_BYTES);
    return NULL;
}

/* Row r of a result with columns name, created ms, updated ms, version,
 * role, type (the last four may be absent: ncols says). */
static void entry_fill(PGresult *res, int r, swf_history_catalog_entry_t *e)
{
    memset(e, 0, sizeof(*e));
    int nc = PQnfields(res);
    e->name = swf_history__strdup(PQgetvalue(res, r, 0));
    e->created_ms = strtoll(PQgetvalue(res, r, 1), NULL, 10);
    e->updated_ms = nc > 2 ? strtoll(PQgetvalue(res, r, 2), NULL, 10) : e->created_ms;
    if (nc > 3)
        e->version = atoi(PQgetvalue(res, r, 3));
    if (nc > 4 && !PQgetisnull(res, r, 4))
        e->role_arn = swf_history__strdup(PQgetvalue(res, r, 4));
    if (nc > 5)
        e->type = swf_history__strdup(PQgetisnull(res, r, 5) ? "STANDARD" : PQgetvalue(res, r, 5));
}

/* Runs a query on the store's connection; *res gets its rows. */
static swf_error_t *rows_query(swf_history_store_t *store, const char *sql, int n,
                               const char *const *params, PGresult **res)
{
    swf_history__pg_t *pg = swf_history__pg(store);
    *res = NULL;
    swf_error_t *err = swf_history__pg_ready(pg);
    if (err == NULL)
        err = swf_history__pg_query(pg->conn, sql, n, params, res);
    return err;
}

/* Runs a query and makes each row an item of `size` bytes with fill. */
typedef swf_error_t *(*row_fill_fn)(PGresult *res, int r, void *item);
static swf_error_t *items_query(swf_history_store_t *store, const char *sql, int n,
                                const char *const *params, size_t size, row_fill_fn fill,
                                void **items, size_t *count)
{
    *items = NULL;
    *count = 0;
    PGresult *res = NULL;
    swf_error_t *err = rows_query(store, sql, n, params, &res);
    if (err != NULL)
        return err;
    int rows = PQntuples(res);
    *items = calloc(rows > 0 ? (size_t)rows : 1, size);
    if (*items == NULL)
        abort();
    for (int r = 0; r < rows && err == NULL; r++) {
        err = fill(res, r, (char *)*items + (size_t)r * size);
        *count = (size_t)r + 1;
    }
    swf_history__pg_clear(res);
    return err;
}

static swf_error_t *text_row(PGresult *res, int r, void *item)
{
    *(char **)item = swf_history__strdup(PQgetvalue(res, r, 0));
    return NULL;
}

static swf_error_t *entry_row(PGresult *res, int r, void *item)
{
    entry_fill(res, r, item);
    return NULL;
}

/* Runs a query whose rows are entries. */
static swf_error_t *entries_query(swf_history_store_t *store, const char *sql, int n,
                                  const char *const *params, swf_history_catalog_entry_t **items,
                                  size_t *count)
{
    return items_query(store, sql, n, params, sizeof(**items), entry_row, (void **)items, count);
}

/* A page of a listing by name: sql takes $1 the name after which it
 * starts (NULL: the first) and $2 the page's size (1 to 1000). */
static swf_error_t *page_query(swf_history_store_t *store, const char *sql, const char *after,
                               size_t limit, swf_history_catalog_entry_t **items, size_t *count)
{
    char ls[24];
    snprintf(ls, sizeof(ls), "%zu", limit < 1 ? 1 : limit > 1000 ? 1000 : limit);
    const char *params[2] = {after, ls};
    return entries_query(store, sql, 2, params, items, count);
}

#define MACHINES_SELECT                                                                            \
    "SELECT m.name, (extract(epoch FROM min(m.created)) * 1000)::bigint,"                          \
    " (extract(epoch FROM max(m.created)) * 1000)::bigint, max(m.version),"                        \
    " s.role_arn, s.type FROM state_machines m"                                                    \
    " LEFT JOIN state_machine_settings s ON s.name = m.name "

swf_error_t *swf_history_pg_state_machines_list(swf_history_store_t *store, const char *after,
                                                size_t limit, swf_history_catalog_entry_t **items,
                                                size_t *count)
{
    return page_query(store,
                      MACHINES_SELECT "WHERE $1::text IS NULL OR m.name > $1"
                                      " GROUP BY m.name, s.role_arn, s.type"
                                      " ORDER BY m.name LIMIT $2::integer",
                      after, limit, items, count);
}

/* One entry of a query by name; SWF_E_NOTFOUND naming `what` when none. */
static swf_error_t *entry_one(swf_history_store_t *store, const char *sql, const char *what,
                              const char *name, swf_history_catalog_entry_t *out)
{
    memset(out, 0, sizeof(*out));
    swf_error_t *err = name_ok(name);
    if (err != NULL)
        return err;
    swf_history_catalog_entry_t *items;
    size_t count;
    const char *params[1] = {name};
    err = entries_query(store, sql, 1, params, &items, &count);
    if (err != NULL)
        return err;
    if (count == 0)
        err = swf_error_new(SWF_E_NOTFOUND, NULL, "no %s \"%s\"", what, name);
    else {
        *out = items[0];
        memset(&items[0], 0, sizeof(items[0]));
    }
    swf_history_catalog_entries_free(items, count);
    return err;
}

swf_error_t *swf_history_pg_state_machine_entry(swf_history_store_t *store, const char *name,
                                                swf_history_catalog_entry_t *out)
{
    return entry_one(store, MACHINES_SELECT "WHERE m.name = $1 GROUP BY m.name, s.role_arn, s.type",
                     "state machine", name, out);
}

/* Runs one statement that returns nothing. */
static swf_error_t *exec(swf_history_store_t *store, const char *sql, int n,
                         const char *const *params)
{
    swf_history__pg_t *pg = swf_history__pg(store);
    swf_error_t *err = swf_history__pg_ready(pg);
    if (err == NULL)
        err = swf_history__pg_query(pg->conn, sql, n, params, NULL);
    return err;
}

swf_error_t *swf_history_pg_state_machine_settings(swf_history_store_t *store, const char *name,
                                                   const char *role_arn, const char *type)
{
    swf_error_t *err = name_ok(name);
    if (err != NULL)
        return err;
    const char *params[3] = {name, role_arn, type};
    return exec(store,
                "INSERT INTO state_machine_settings (name, role_arn, type)"
                " VALUES ($1, coalesce($2, ''), coalesce($3, 'STANDARD'))"
                " ON CONFLICT (name) DO UPDATE SET"
                " role_arn = coalesce($2, state_machine_settings.role_arn),"
                " type = coalesce($3, state_machine_settings.type)",
                3, params);
}

swf_error_t *swf_history_pg_state_machine_delete(swf_history_store_t *store, const char *name)
{
    swf_error_t *err = name_ok(name);
    if (err != NULL)
        return err;
    const char *params[1] = {name};
    /* One statement, so a crash leaves both or neither. */
    return exec(store,
                "WITH s AS (DELETE FROM state_machine_settings WHERE name = $1),"
                " t AS (DELETE FROM tags WHERE resource = 'stateMachine:' || $1),"
                " a AS (DELETE FROM state_machine_aliases WHERE machine = $1)"
                " DELETE FROM state_machines WHERE name = $1",
                1, params);
}

swf_error_t *swf_history_pg_state_machine_versions(swf_history_store_t *store, const char *name,
                                                   int before, size_t limit,
                                                   swf_history_catalog_entry_t **items,
                                                   size_t *count)
{
    swf_error_t *err = name_ok(name);
    if (err != NULL)
        return err;
    char bs[16], ls[24];
    snprintf(bs, sizeof(bs), "%d", before);
    snprintf(ls, sizeof(ls), "%zu", limit < 1 ? 1 : limit > 1000 ? 1000 : limit);
    const char *params[3] = {name, before > 0 ? bs : NULL, ls};
    return entries_query(store,
                         "SELECT name, (extract(epoch FROM created) * 1000)::bigint,"
                         " (extract(epoch FROM created) * 1000)::bigint, version"
                         " FROM state_machines WHERE name = $1"
                         " AND ($2::integer IS NULL OR version < $2)"
                         " ORDER BY version DESC LIMIT $3::integer",
                         3, params, items, count);
}

swf_error_t *swf_history_pg_state_machine_version_delete(swf_history_store_t *store,
                                                         const char *name, int version)
{
    swf_error_t *err = name_ok(name);
    if (err != NULL)
        return err;
    char vs[16];
    snprintf(vs, sizeof(vs), "%d", version);
    const char *params[2] = {name, vs};
    return exec(store, "DELETE FROM state_machines WHERE name = $1 AND version = $2::integer", 2,
                params);
}

#define ACTIVITIES_SELECT                                                                          \
    "SELECT name, (extract(epoch FROM created) * 1000)::bigint FROM activities "

swf_error_t *swf_history_pg_activity_create(swf_history_store_t *store, const char *name,
                                            int64_t *created_ms)
{
    swf_error_t *err = name_ok(name);
    if (err != NULL)
        return err;
    const char *params[1] = {name};
    err =
        exec(store, "INSERT INTO activities (name) VALUES ($1) ON CONFLICT DO NOTHING", 1, params);
    if (err != NULL)
        return err;
    swf_history_catalog_entry_t e;
    err = swf_history_pg_activity_entry(store, name, &e);
    if (err == NULL && created_ms != NULL)
        *created_ms = e.created_ms;
    free(e.name);
    return err;
}

swf_error_t *swf_history_pg_activity_entry(swf_history_store_t *store, const char *name,
                                           swf_history_catalog_entry_t *out)
{
    return entry_one(store, ACTIVITIES_SELECT "WHERE name = $1", "activity", name, out);
}

swf_error_t *swf_history_pg_activities_list(swf_history_store_t *store, const char *after,
                                            size_t limit, swf_history_catalog_entry_t **items,
                                            size_t *count)
{
    return page_query(store,
                      ACTIVITIES_SELECT "WHERE $1::text IS NULL OR name > $1"
                                        " ORDER BY name LIMIT $2::integer",
                      after, limit, items, count);
}

swf_error_t *swf_history_pg_activity_delete(swf_history_store_t *store, const char *name)
{
    swf_error_t *err = name_ok(name);
    if (err != NULL)
        return err;
    const char *params[1] = {name};
    return exec(store,
                "WITH t AS (DELETE FROM tags WHERE resource = 'activity:' || $1)"
                " DELETE FROM activities WHERE name = $1",
                1, params);
}

/* ---- tags ------------------------------------------------------------------------- */

void swf_history_tags_free(swf_history_tag_t *tags, size_t n)
{
    for (size_t i = 0; tags != NULL && i < n; i++) {
        free(tags[i].key);
        free(tags[i].value);
    }
    free(tags);
}

/* The tags go in one statement (arrays of keys and values) with the
 * bound checked in it, so that concurrent TagResource calls cannot pass
 * the bound together: the advisory lock serialises the resource's tags. */
swf_error_t *swf_history_pg_tags_set(swf_history_store_t *store, const char *resource,
                                     const swf_history_tag_t *tags, size_t n)
{
    swf_history__pg_t *pg = swf_history__pg(store);
    if (n > SWF_HISTORY_TAGS)
        return swf_error_new(SWF_E_LIMIT, NULL, "more than %d tags", SWF_HISTORY_TAGS);
    json_object *keys = json_object_new_array(), *values = json_object_new_array();
    for (size_t i = 0; i < n; i++) {
        json_object_array_add(keys, json_object_new_string(tags[i].key));
        json_object_array_add(values, json_object_new_string(tags[i].value));
    }
    char limit[16];
    snprintf(limit, sizeof(limit), "%d", SWF_HISTORY_TAGS);
    const char *params[4] = {resource, swf_json_str(keys), swf_json_str(values), limit};
    swf_error_t *err = swf_history__pg_ready(pg);
    if (err == NULL)
        err = swf_history__pg_begin(pg->conn);
    PGresult *res = NULL;
    if (err == NULL)
        err = swf_history__pg_query(pg->conn, "SELECT pg_advisory_xact_lock(hashtext($1))", 1,
                                    params, NULL);
    if (err == NULL)
        err = swf_history__pg_query(
            pg->conn,
            "INSERT INTO tags (resource, key, value)"
            " SELECT $1, k, v FROM jsonb_array_elements_text($2::jsonb) WITH ORDINALITY a(k, i)"
            " JOIN jsonb_array_elements_text($3::jsonb) WITH ORDINALITY b(v, j) ON i = j"
            " ON CONFLICT (resource, key) DO UPDATE SET value = excluded.value",
            3, params, NULL);
    if (err == NULL)
        err = swf_history__pg_query(pg->conn,
                                    "SELECT count(*) > $2::integer FROM tags WHERE resource = $1",
                                    2, (const char *const[]){resource, limit}, &res);
    if (err == NULL) {
        if (strcmp(PQgetvalue(res, 0, 0), "t") == 0)
            err = swf_error_new(SWF_E_LIMIT, NULL, "more than %d tags", SWF_HISTORY_TAGS);
        swf_history__pg_clear(res);
    }
    if (err == NULL)
        err = swf_history__pg_commit(pg->conn);
    else
        swf_history__pg_rollback(pg->conn);
    json_object_put(keys);
    json_object_put(values);
    return err;
}

swf_error_t *swf_history_pg_tags_remove(swf_history_store_t *store, const char *resource,
                                        const char *const *keys, size_t n)
{
    json_object *a = json_object_new_array();
    for (size_t i = 0; i < n; i++)
        json_object_array_add(a, json_object_new_string(keys[i]));
    const char *params[2] = {resource, swf_json_str(a)};
    swf_error_t *err = exec(store,
                            "DELETE FROM tags WHERE resource = $1 AND key IN"
                            " (SELECT jsonb_array_elements_text($2::jsonb))",
                            2, params);
    json_object_put(a);
    return err;
}

swf_error_t *swf_history_pg_tags_list(swf_history_store_t *store, const char *resource,
                                      swf_history_tag_t **tags, size_t *n)
{
    swf_history__pg_t *pg = swf_history__pg(store);
    *tags = NULL;
    *n = 0;
    PGresult *res = NULL;
    const char *params[1] = {resource};
    swf_error_t *err = swf_history__pg_ready(pg);
    if (err == NULL)
        err = swf_history__pg_query(pg->conn,
                                    "SELECT key, value FROM tags WHERE resource = $1 ORDER BY key",
                                    1, params, &res);
    if (err != NULL)
        return err;
    int rows = PQntuples(res);
    *tags = calloc((size_t)rows + 1, sizeof(**tags));
    if (*tags == NULL)
        abort();
    for (int r = 0; r < rows; r++) {
        (*tags)[r].key = swf_history__strdup(PQgetvalue(res, r, 0));
        (*tags)[r].value = swf_history__strdup(PQgetvalue(res, r, 1));
    }
    *n = (size_t)rows;
    swf_history__pg_clear(res);
    return NULL;
}

swf_error_t *swf_history_pg_execution_redrives(swf_history_store_t *store, const char *execution_id,
                                               int64_t *count, int64_t *last_ms)
{
    *count = 0;
    *last_ms = -1;
    PGresult *res = NULL;
    const char *params[1] = {execution_id};
    swf_error_t *err = rows_query(
        store,
        "SELECT count(*), coalesce(max((extract(epoch FROM event_time) * 1000)::bigint), -1)"
        " FROM events WHERE execution_id = $1 AND event_type = 'WorkflowExecutionRedriven'",
        1, params, &res);
    if (err != NULL)
        return err;
    *count = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
    *last_ms = strtoll(PQgetvalue(res, 0, 1), NULL, 10);
    swf_history__pg_clear(res);
    return NULL;
}

/* ---- aliases ---------------------------------------------------------------- */

void swf_history_aliases_free(swf_history_alias_t *items, size_t count)
{
    for (size_t i = 0; items != NULL && i < count; i++) {
        free(items[i].machine);
        free(items[i].name);
        free(items[i].description);
        json_object_put(items[i].routing);
    }
    free(items);
}

#define ALIAS_COLUMNS                                                                              \
    "SELECT machine, name, description, routing::text,"                                            \
    " (extract(epoch FROM created) * 1000)::bigint, (extract(epoch FROM updated) * 1000)::bigint"  \
    " FROM state_machine_aliases "

static swf_error_t *alias_row(PGresult *res, int r, void *item)
{
    swf_history_alias_t *a = item;
    a->machine = swf_history__strdup(PQgetvalue(res, r, 0));
    a->name = swf_history__strdup(PQgetvalue(res, r, 1));
    a->description = swf_history__strdup(PQgetvalue(res, r, 2));
    a->created_ms = strtoll(PQgetvalue(res, r, 4), NULL, 10);
    a->updated_ms = strtoll(PQgetvalue(res, r, 5), NULL, 10);
    const char *routing = PQgetvalue(res, r, 3);
    return swf_json_parse(routing, strlen(routing), SWF_LIMIT_DEFINITION_BYTES, &a->routing);
}

static swf_error_t *aliases_query(swf_history_store_t *store, const char *sql, int n,
                                  const char *const *params, swf_history_alias_t **items,
                                  size_t *count)
{
    return items_query(store, sql, n, params, sizeof(**items), alias_row, (void **)items, count);
}

swf_error_t *swf_history_pg_alias_create(swf_history_store_t *store, const char *machine,
                                         const char *name, const char *description,
                                         json_object *routing)
{
    char limit[16];
    snprintf(limit, sizeof(limit), "%d", SWF_HISTORY_ALIASES);
    const char *params[5] = {machine, name, description ? description : "", swf_json_str(routing),
                             limit};
    swf_history_alias_t *items;
    size_t count;
    /* Inserted unless it exists or the machine has its quota; the row
     * returned says which. */
    swf_error_t *err = aliases_query(
        store,
        "WITH n AS (SELECT count(*) AS c FROM state_machine_aliases WHERE machine = $1),"
        " i AS (INSERT INTO state_machine_aliases (machine, name, description, routing)"
        "  SELECT $1, $2, $3, $4::jsonb FROM n WHERE n.c < $5::int"
        "  ON CONFLICT DO NOTHING RETURNING machine)"
        " SELECT (SELECT count(*) FROM i)::text, (SELECT c FROM n)::text, '', '[]', 0, 0",
        5, params, &items, &count);
    if (err == NULL && count == 1 && strcmp(items[0].machine, "1") != 0)
        err = atoi(items[0].name) >= SWF_HISTORY_ALIASES
                  ? swf_error_new(SWF_E_LIMIT, NULL, "state machine %s has %d aliases already",
                                  machine, SWF_HISTORY_ALIASES)
                  : swf_error_new(SWF_E_CONFLICT, NULL, "alias %s:%s exists", machine, name);
    swf_history_aliases_free(items, count);
    return err;
}

swf_error_t *swf_history_pg_alias_update(swf_history_store_t *store, const char *machine,
                                         const char *name, const char *description,
                                         json_object *routing)
{
    const char *params[4] = {machine, name, description, routing ? swf_json_str(routing) : NULL};
    swf_history_alias_t *items;
    size_t count;
    swf_error_t *err =
        aliases_query(store,
                      "UPDATE state_machine_aliases SET description = coalesce($3, description),"
                      " routing = coalesce($4::jsonb, routing), updated = now()"
                      " WHERE machine = $1 AND name = $2"
                      " RETURNING machine, name, description, routing::text, 0, 0",
                      4, params, &items, &count);
    if (err == NULL && count == 0)
        err = swf_error_new(SWF_E_NOTFOUND, NULL, "no alias %s:%s", machine, name);
    swf_history_aliases_free(items, count);
    return err;
}

swf_error_t *swf_history_pg_alias_get(swf_history_store_t *store, const char *machine,
                                      const char *name, swf_history_alias_t *out)
{
    memset(out, 0, sizeof(*out));
    const char *params[2] = {machine, name};
    swf_history_alias_t *items;
    size_t count;
    swf_error_t *err = aliases_query(store, ALIAS_COLUMNS "WHERE machine = $1 AND name = $2", 2,
                                     params, &items, &count);
    if (err == NULL && count == 0)
        err = swf_error_new(SWF_E_NOTFOUND, NULL, "no alias %s:%s", machine, name);
    if (err == NULL) {
        *out = items[0];
        memset(&items[0], 0, sizeof(items[0]));
    }
    swf_history_aliases_free(items, count);
    return err;
}

swf_error_t *swf_history_pg_alias_delete(swf_history_store_t *store, const char *machine,
                                         const char *name)
{
    const char *params[2] = {machine, name};
    return exec(store, "DELETE FROM state_machine_aliases WHERE machine = $1 AND name = $2", 2,
                params);
}

swf_error_t *swf_history_pg_aliases_list(swf_history_store_t *store, const char *machine,
                                         int version, swf_history_alias_t **items, size_t *count)
{
    char v[16];
    snprintf(v, sizeof(v), "%d", version);
    const char *params[2] = {machine, v};
    return aliases_query(store,
                         ALIAS_COLUMNS "WHERE machine = $1 AND ($2::int = 0 OR routing @>"
                                       " jsonb_build_array(jsonb_build_object('version', $2::int)))"
                                       " ORDER BY name",
                         2, params, items, count);
}

swf_error_t *swf_history_pg_execution_target_set(swf_history_store_t *store,
                                                 const char *execution_id, int version,
                                                 const char *alias)
{
    char v[16];
    snprintf(v, sizeof(v), "%d", version);
    const char *params[3] = {execution_id, v, alias};
    return exec(store,
                "INSERT INTO execution_targets (execution_id, version, alias)"
                " VALUES ($1, $2::int, $3) ON CONFLICT DO NOTHING",
                3, params);
}

swf_error_t *swf_history_pg_execution_target_get(swf_history_store_t *store,
                                                 const char *execution_id, int *version,
                                                 char **alias)
{
    *version = 0;
    *alias = NULL;
    PGresult *res = NULL;
    const char *params[1] = {execution_id};
    swf_error_t *err =
        rows_query(store, "SELECT version, alias FROM execution_targets WHERE execution_id = $1", 1,
                   params, &res);
    if (err != NULL)
        return err;
    if (PQntuples(res) == 1) {
        *version = atoi(PQgetvalue(res, 0, 0));
        if (!PQgetisnull(res, 0, 1))
            *alias = swf_history__strdup(PQgetvalue(res, 0, 1));
    }
    swf_history__pg_clear(res);
    return NULL;
}

swf_error_t *swf_history_pg_workflow_taken(swf_history_store_t *store, const char *execution_id,
                                           char **other)
{
    *other = NULL;
    const char *params[1] = {execution_id};
    char **ids = NULL;
    size_t n = 0;
    swf_error_t *err = items_query(store,
                                   "SELECT o.execution_id FROM executions x JOIN executions o"
                                   " ON o.workflow_id = x.workflow_id AND o.status = 'open'"
                                   " AND o.execution_id <> x.execution_id"
                                   " WHERE x.execution_id = $1 LIMIT 1",
                                   1, params, sizeof(char *), text_row, (void **)&ids, &n);
    if (err == NULL && n == 1) {
        *other = ids[0];
        ids[0] = NULL;
    }
    for (size_t i = 0; i < n; i++)
        free(ids[i]);
    free(ids);
    return err;
}
