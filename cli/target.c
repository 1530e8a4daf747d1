/*
 * target.c - which execution a command means: the operand ID, or
 * --workflow-id, which names the open execution of a workflow id or, when
 * none is open, the one started last (history/pg.h). Workflow ids are the
 * names people choose (`swf start orders --workflow-id order-7`), so every
 * command that takes an execution id takes one too; the lookup is one
 * indexed query on the executions projection.
 */
#include "cli/cli.h"

#include <stdlib.h>
#include <string.h>

#include "history/pg.h"
#include "protocol/alloc.h"

bool swf_cli_args_execution_of(swf_cli_args_t *a, const char *workflow_id, char **id)
{
    swf_history_store_t *s = NULL;
    swf_history_execution_t ex = {0};
    swf_error_t *err = swf_history_pg_new(swf_history_pg_conninfo_env(), &s);
    if (err == NULL)
        err = swf_history_pg_execution_of_workflow(s, workflow_id, &ex);
    swf_history_store_free(s);
    if (err != NULL) {
        fprintf(stderr, "%s: %s\n", a->cmd->name, swf_error_message(err));
        if (swf_error_cause(err) != NULL)
            fprintf(stderr, "  %s\n", swf_error_cause(err));
        a->status = swf_error_code(err) == SWF_E_NOTFOUND ? SWF_EXIT_NO : SWF_EXIT_ERROR;
        swf_error_free(err);
        return false;
    }
    *id = ex.execution_id;
    ex.execution_id = NULL;
    swf_history_execution_free(&ex);
    return true;
}

bool swf_cli_args_execution(swf_cli_args_t *a, const char *file_option, char **id)
{
    *id = NULL;
    const char *given = swf_cli_args_get(a, "ID");
    const char *workflow = swf_cli_args_get(a, "--workflow-id");
    const char *file = file_option ? swf_cli_args_get(a, file_option) : NULL;
    int ways = (given != NULL) + (workflow != NULL) + (file != NULL);
    if (ways == 0) {
        swf_cli_args_usage(a, "missing ID (or --workflow-id%s%s)", file_option ? " or " : "",
                           file_option ? file_option : "");
        return false;
    }
    if (ways > 1) { /* ID and --workflow-id together are the parser's to refuse */
        swf_cli_args_usage(a, "give one of ID, --workflow-id and %s", file_option);
        return false;
    }
    if (file != NULL)
        return true;
    if (given != NULL) {
        *id = swf_strdup(given);
        return true;
    }
    return swf_cli_args_execution_of(a, workflow, id);
}
