/*
 * pg_sw.c - reading sw_instances, the index of open Serverless Workflow
 * instances by state machine, correlation value and the triggers their
 * waiting states record (migration 10 keeps it, in the transaction of every
 * append that changes it; pg_admin.c's rebuild derives it from the events).
 *
 * `swf send-event` asks it which instances an event may reach (SPEC 11)
 * instead of replaying every open instance: the answer is a superset (an
 * instance whose waits are unknown, between a cloudevent signal and its
 * next decision, is included) that the caller narrows by replaying those
 * few histories, and that the decider narrows again when it applies the
 * signal. An instance whose correlation value is another one is never a
 * candidate: the value is set once, for the instance's life.
 */
#include "history/pg_internal.h"

#include <stdio.h>
#include <stdlib.h>

#include "protocol/json.h"

/* $1 state machine, $2 trigger, $3 the value as jsonb text (NULL: none). */
static const char candidates_sql[] = "SELECT i.execution_id FROM sw_instances i"
                                     " JOIN executions x ON x.execution_id = i.execution_id"
                                     " WHERE i.state_machine = $1 AND ("
                                     "  ($3::jsonb IS NOT NULL AND i.correlation = $3::jsonb)"
                                     "  OR (($3::jsonb IS NULL OR i.correlation IS NULL)"
                                     "   AND (i.waits IS NULL OR $2 = ANY (i.waits))))"
                                     " ORDER BY x.start_time, i.execution_id LIMIT $4";

swf_error_t *swf_history_pg_sw_candidates(swf_history_store_t *store, const char *state_machine,
                                          const char *trigger, json_object *value, size_t limit,
                                          char ***ids, size_t *count)
{
    swf_history__pg_t *pg = swf_history__pg(store);
    *ids = NULL;
    *count = 0;
    swf_error_t *err = swf_history__pg_ready(pg);
    if (err != NULL)
        return err;
    char lim[32];
    snprintf(lim, sizeof(lim), "%zu", limit);
    const char *params[4] = {state_machine, trigger, value != NULL ? swf_json_str(value) : NULL,
                             lim};
    PGresult *res = NULL;
    err = swf_history__pg_query(pg->conn, candidates_sql, 4, params, &res);
    if (err != NULL) {
        swf_error_prefix(err, "looking the event up in sw_instances");
        return err;
    }
    size_t n = (size_t)PQntuples(res);
    *ids = calloc(n + 1, sizeof(char *));
    if (*ids == NULL)
        abort();
    for (size_t r = 0; r < n; r++)
        (*ids)[r] = swf_history__strdup(PQgetvalue(res, (int)r, 0));
    *count = n;
    swf_history__pg_clear(res);
    return NULL;
}
