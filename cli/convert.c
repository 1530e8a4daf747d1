/*
 * convert.c - `swf convert DEFINITION`: the interpreter form a Serverless
 * Workflow document becomes (decider/sw/README.md, "The interpreter form"),
 * for people who want to see what runs. The form is what the interpreter
 * derives from the document itself whenever it starts or replays an
 * execution; it is printed, never stored. An ASL definition is its own
 * interpreter form and is printed as it is, once valid.
 */
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>

#include "decider/sw/sw.h"
#include "protocol/json.h"
#include "protocol/limits.h"

static const swf_cli_cmd_t convert_cmd = {
    "swf convert", NULL,
    "Print the interpreter form of a definition as JSON: for a Serverless Workflow document, "
    "the ASL state machine (with the swf:ServerlessWorkflow extensions of "
    "decider/sw/README.md) that the interpreter runs; an ASL definition is printed as it is. "
    "An invalid definition prints its problems (as swf validate) and exits 1.",
    (const swf_cli_opt_t[]){{"DEFINITION", NULL, SWF_CLI_REQUIRED,
                             "a definition (JSON; - reads standard input)",
                             "swf convert loan.sw.json"},
                            SWF_CLI_OPTS_END},
    NULL};

int swf_cli_convert(int argc, char **argv)
{
    swf_cli_args_t a;
    if (!swf_cli_args_parse(&convert_cmd, argc, argv, &a))
        return a.status;
    const char *file = swf_cli_args_get(&a, "DEFINITION");
    json_object *def = NULL, *form = NULL;
    swf_asl_problems_t problems = {0};
    swf_error_t *err = swf_json_read_file(file, SWF_LIMIT_DEFINITION_BYTES, &def);
    if (err != NULL) {
        fprintf(stderr, "swf convert: %s\n", swf_error_message(err));
        int rc = swf_error_code(err) == SWF_E_IO ? SWF_EXIT_ERROR : SWF_EXIT_NO;
        swf_error_free(err);
        return rc;
    }
    int rc = SWF_EXIT_NO;
    if (swf_sw_validate_any(def, &problems) > 0) {
        for (size_t i = 0; i < problems.count; i++)
            fprintf(stderr, "%s: %s: %s\n", file, problems.items[i].where,
                    problems.items[i].message);
        goto done;
    }
    form = swf_sw_is_document(def) ? swf_sw_translate(def) : swf_json_ref(def);
    printf("%s\n",
           json_object_to_json_string_ext(form, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                    JSON_C_TO_STRING_NOSLASHESCAPE));
    rc = SWF_EXIT_OK;
done:
    swf_asl_problems_free(&problems);
    json_object_put(def);
    json_object_put(form);
    return rc;
}
