/*
 * replay_common.c - what the debugging commands (replay, timeline, graph)
 * share around the replay driver (decider/replay.c): finding the history
 * the user named, and reporting in the command line's terms.
 *
 * The fold itself is the decider's; these are the parts that belong to a
 * command line: a history is an execution id in PostgreSQL
 * (SWF_DATABASE_URL) or an exported file, an error becomes an exit status,
 * and a value is cut to fit a line.
 */
#include "cli/replay_common.h"

#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "history/pg.h"
#include "protocol/json.h"

swf_error_t *swf_cli_replay_history_load(const char *id, const char *file, swf_event_list_t *out)
{
    if (file != NULL)
        return swf_event_list_read_file(file, out);
    swf_history_store_t *store = NULL;
    swf_error_t *err = swf_history_pg_new(swf_history_pg_conninfo_env(), &store);
    if (err == NULL)
        err = swf_history_load(store, id, 0, 0, out);
    swf_history_store_free(store);
    return err;
}

const char *swf_cli_replay_execution_id(const swf_event_list_t *events)
{
    if (events->count == 0 || events->items[0].type != SWF_EVENT_WORKFLOW_EXECUTION_STARTED)
        return "?";
    const char *id = swf_json_get_string(events->items[0].attrs, "executionId");
    return id ? id : "?";
}

int swf_cli_replay_fail(const char *cmd, swf_error_t *err)
{
    switch (swf_error_code(err)) {
    case SWF_E_INPUT: /* what a file or a history holds: the command line is parsed before */
    case SWF_E_LIMIT:
    case SWF_E_NOTFOUND:
        return swf_cli_fail_status(cmd, err, SWF_EXIT_NO);
    default:
        return swf_cli_fail_status(cmd, err, SWF_EXIT_ERROR);
    }
}

const char *swf_cli_replay_json_cut(json_object *v, char *buf, size_t max)
{
    const char *s = swf_json_str(v);
    size_t len = strlen(s);
    if (len <= max) {
        memcpy(buf, s, len + 1);
    } else {
        memcpy(buf, s, max);
        memcpy(buf + max, "...", 4);
    }
    return buf;
}
