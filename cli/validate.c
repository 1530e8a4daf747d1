/*
 * validate.c - `swf validate [--json] FILE...`: check ASL definitions
 * without running them.
 *
 * Each file is read and validated on its own, so one bad file never hides
 * the verdict on the others. The human form prints every problem to stderr
 * as "FILE: WHERE: MESSAGE" (the shape compilers use, so editors can jump to
 * it) and "FILE: valid" to stdout, then "FILE: PATH: task list NAME" for
 * each Task state (the list its worker takes it from: decider/asl/resource.h,
 * under the deployment's SWF_TASK_LIST_MAP); --json prints one object per
 * file on stdout for tools, its "tasks" the same. An unreadable file counts as invalid: the
 * question the exit status answers is "are all of these definitions good".
 */
#include "cli/cli.h"

#include <stdbool.h>
#include <string.h>

#include "decider/asl/resource.h"
#include "decider/asl/validate.h"
#include "decider/sw/sw.h"
#include "protocol/json.h"
#include "protocol/limits.h"
#include "protocol/task_list.h"

static const swf_cli_cmd_t validate_cmd = {
    "swf validate", NULL,
    "Check ASL and Serverless Workflow definitions without running them: each problem is printed "
    "as FILE: WHERE: "
    "MESSAGE on stderr, each good file as FILE: valid, then FILE: PATH: task list NAME for "
    "each Task state (the task list its workers take it from, under the map SWF_TASK_LIST_MAP "
    "names). A Resource swf cannot serve is a problem, with the reason. Exit status 0 when "
    "every file is a valid definition, 1 otherwise.",
    (const swf_cli_opt_t[]){
        {"FILE", NULL, SWF_CLI_REQUIRED | SWF_CLI_MANY,
         "a definition (JSON; - reads standard input)", "swf validate examples/*.asl.json"},
        {"--json", NULL, 0,
         "one JSON object per file on stdout, for tools: file, valid, errors, tasks "
         "(path, state, resource, taskList)",
         "swf validate --json order.asl.json"},
        SWF_CLI_OPTS_END},
    NULL};

/* Prints the verdict on one file as a JSON line: read_error, when not NULL,
 * is why the file could not be read. */
static void report_json(const char *file, const char *read_error, const swf_asl_problems_t *p,
                        json_object *tasks)
{
    json_object *o = json_object_new_object();
    json_object *errors = json_object_new_array();
    if (read_error != NULL) {
        json_object *e = json_object_new_object();
        json_object_object_add(e, "path", json_object_new_string("$"));
        json_object_object_add(e, "message", json_object_new_string(read_error));
        json_object_array_add(errors, e);
    }
    for (size_t i = 0; i < p->count; i++) {
        json_object *e = json_object_new_object();
        json_object_object_add(e, "path", json_object_new_string(p->items[i].where));
        json_object_object_add(e, "message", json_object_new_string(p->items[i].message));
        json_object_array_add(errors, e);
    }
    json_object_object_add(o, "file", json_object_new_string(file));
    json_object_object_add(o, "valid",
                           json_object_new_boolean(read_error == NULL && p->count == 0));
    json_object_object_add(o, "errors", errors);
    if (tasks != NULL) /* each Task state's task list (decider/asl/resource.h) */
        json_object_object_add(o, "tasks", json_object_get(tasks));
    printf("%s\n", swf_json_str(o));
    json_object_put(o);
}

/* Validates one file; returns SWF_EXIT_OK when it is valid, SWF_EXIT_NO
 * when it is not (malformed JSON included), SWF_EXIT_ERROR when it could
 * not be read. */
static int validate_file(const char *file, bool as_json, json_object *map)
{
    json_object *def = NULL;
    swf_asl_problems_t problems = {0};
    bool ok = false;
    swf_error_t *err = swf_json_read_file(file, SWF_LIMIT_DEFINITION_BYTES, &def);
    int rc = err != NULL && swf_error_code(err) == SWF_E_IO ? SWF_EXIT_ERROR : SWF_EXIT_NO;
    if (err != NULL) {
        if (as_json)
            report_json(file, swf_error_message(err), &problems, NULL);
        else
            fprintf(stderr, "swf: %s\n", swf_error_message(err)); /* the message names the file */
        goto done;
    }
    ok = swf_sw_validate_any(def, &problems) == 0;
    /* A Serverless Workflow document's tasks are those of its translation
     * (decider/sw/README.md): their paths are the translation's. */
    json_object *machine = ok && swf_sw_is_document(def) ? swf_sw_translate(def) : NULL;
    json_object *tasks = swf_asl_task_lists(machine != NULL ? machine : def, map);
    json_object_put(machine);
    if (as_json) {
        report_json(file, NULL, &problems, tasks);
    } else if (ok) {
        printf("%s: valid\n", file);
        for (size_t i = 0; i < json_object_array_length(tasks); i++) {
            json_object *t = json_object_array_get_idx(tasks, i);
            const char *nested = swf_json_get_string(t, "nestedExecution");
            if (nested != NULL)
                printf("%s: %s: nested execution (%s), started by swf itself\n", file,
                       swf_json_get_string(t, "path"), nested);
            else
                printf("%s: %s: task list %s\n", file, swf_json_get_string(t, "path"),
                       swf_json_get_string(t, "taskList"));
        }
    } else {
        for (size_t i = 0; i < problems.count; i++)
            fprintf(stderr, "%s: %s: %s\n", file, problems.items[i].where,
                    problems.items[i].message);
    }
    json_object_put(tasks);
done:
    swf_error_free(err);
    swf_asl_problems_free(&problems);
    json_object_put(def);
    return ok ? SWF_EXIT_OK : rc;
}

int swf_cli_validate(int argc, char **argv)
{
    swf_cli_args_t a;
    if (!swf_cli_args_parse(&validate_cmd, argc, argv, &a))
        return a.status;
    bool as_json = swf_cli_args_has(&a, "--json");
    json_object *map = NULL; /* the deployment's, as swf-history records it */
    swf_error_t *err = swf_task_list_map_from_env(&map);
    if (err != NULL) {
        fprintf(stderr, "swf validate: SWF_TASK_LIST_MAP: %s\n", swf_error_message(err));
        swf_error_free(err);
        return SWF_EXIT_ERROR;
    }
    int rc = SWF_EXIT_OK; /* the worst: a file not read, then one invalid */
    int pos = 0;
    for (const char *file; (file = swf_cli_args_next(&a, "FILE", &pos)) != NULL;) {
        int one = validate_file(file, as_json, map);
        if (one == SWF_EXIT_ERROR || rc == SWF_EXIT_OK)
            rc = one;
    }
    json_object_put(map);
    fflush(stdout);
    return rc;
}
