/*
 * test_timeline.c - proves cli/timeline.c on recorded histories: states
 * nested by Parallel branch and Map iteration, retries, catches, a Wait's
 * duration (virtual time), failures, and `swf history --file F --states`.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "protocol/json.h"

#define H SWF_SOURCE_DIR "/tests/histories/"

static char output[1 << 20];

static int swf(const char *first, ...)
{
    char *argv[16] = {"swf", (char *)first};
    int argc = 2;
    va_list ap;
    va_start(ap, first);
    const char *a;
    while ((a = va_arg(ap, const char *)) != NULL && argc < 15)
        argv[argc++] = (char *)a;
    va_end(ap);
    argv[argc] = NULL;
    fflush(stdout);
    char path[] = "/tmp/swf-timeline-out-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    int saved = dup(1);
    dup2(fd, 1);
    int code = swf_cli_main(argc, argv);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    lseek(fd, 0, SEEK_SET);
    ssize_t n = read(fd, output, sizeof(output) - 1);
    output[n > 0 ? n : 0] = '\0';
    close(fd);
    unlink(path);
    return code;
}

Test(cli_timeline, states_nest_by_branch_and_iteration)
{
    cr_assert_eq(swf("timeline", "--file", H "src__debug.jsonl", NULL), 0, "%s", output);
    cr_assert(strstr(output, "execution local: SUCCEEDED") != NULL, "%s", output);
    /* Nested Map inside a Parallel: indentation grows with each level. */
    cr_assert(strstr(output, "    Batches (Map)  succeeded") != NULL, "%s", output);
    cr_assert(strstr(output, "        Items (Map)  succeeded") != NULL, "%s", output);
    cr_assert(strstr(output, "            Process (Task)  succeeded after 1 retry") != NULL, "%s",
              output);
    cr_assert(strstr(output, "branch 1") != NULL && strstr(output, "iteration 1") != NULL);
    cr_assert(strstr(output, "Audit (Task)  caught AuditDown -> AuditSkipped") != NULL, "%s",
              output);
    /* The Wait took a minute of virtual time. */
    cr_assert(strstr(output, "1m00.000s     Cool (Wait)  succeeded") != NULL, "%s", output);
    cr_assert(strstr(output, "in   {\"orderId\":\"B-7\"}") != NULL, "%s", output);
}

Test(cli_timeline, json_keeps_inputs_outputs_and_children)
{
    cr_assert_eq(swf("timeline", "--file", H "src__debug.jsonl", "--json", NULL), 0);
    json_object *o = NULL, *states, *work = NULL, *kids, *v;
    cr_assert_null(swf_json_parse(output, strlen(output), sizeof(output), &o), "%s", output);
    cr_assert(swf_json_get(o, "states", &states));
    for (size_t i = 0; i < json_object_array_length(states); i++) {
        json_object *s = json_object_array_get_idx(states, i);
        if (strcmp(swf_json_get_string(s, "state"), "Work") == 0)
            work = s;
    }
    cr_assert_not_null(work);
    cr_assert_str_eq(swf_json_get_string(work, "outcome"), "SUCCEEDED");
    cr_assert(swf_json_get(work, "durationMs", &v) && json_object_get_int64(v) == 1000);
    cr_assert(swf_json_get(work, "children", &kids));
    cr_assert_eq(json_object_array_length(kids), 3); /* Batches, Audit, AuditSkipped */
    cr_assert(swf_json_get(work, "output", &v) && v != NULL);
    json_object_put(o);
}

Test(cli_timeline, failure_and_history_states_form)
{
    cr_assert_eq(swf("history", "--file", H "examples__order-declined.jsonl", "--states", NULL), 0,
                 "%s", output);
    cr_assert(strstr(output, "execution local: FAILED") != NULL, "%s", output);
    cr_assert(strstr(output, "error OrderDeclined: card expired") != NULL, "%s", output);
    cr_assert(strstr(output, "Charge (Task)  caught Payment.Declined after 1 retry -> Declined") !=
                  NULL,
              "%s", output);
    cr_assert(strstr(output, "Declined (Fail)  FAILED: OrderDeclined") != NULL, "%s", output);
}

Test(cli_timeline, loops_give_one_entry_per_visit)
{
    cr_assert_eq(swf("timeline", "--file", H "choice__loop-until-condition.jsonl", "--json", NULL),
                 0, "%s", output);
    json_object *o = NULL, *states;
    cr_assert_null(swf_json_parse(output, strlen(output), sizeof(output), &o));
    cr_assert(swf_json_get(o, "states", &states));
    cr_assert_gt(json_object_array_length(states), 3, "%s", output);
    json_object_put(o);
}

Test(cli_timeline, bad_arguments)
{
    cr_assert_eq(swf("timeline", NULL), 2);
    cr_assert_eq(swf("timeline", "--file", "/nonexistent.jsonl", NULL), 3);
}

/* Open states were looked up by "path + state" keys cut at 1 KiB: below 14
 * Parallels with names of 80 characters (a valid definition) the keys of
 * different states ran together and the innermost states vanished from the
 * timeline without a word. */
Test(cli_timeline, states_nested_past_a_kilobyte_of_path_are_all_shown)
{
    /* Innermost: a Parallel Q whose two branches wait at once (W1, W2). */
    char *def = strdup("{\"StartAt\":\"Q\",\"States\":{\"Q\":{\"Type\":\"Parallel\",\"End\":true,"
                       "\"Branches\":[{\"StartAt\":\"W1\",\"States\":{\"W1\":{\"Type\":\"Wait\","
                       "\"Seconds\":5,\"End\":true}}},{\"StartAt\":\"W2\",\"States\":{\"W2\":{"
                       "\"Type\":\"Wait\",\"Seconds\":5,\"End\":true}}}]}}}");
    for (int d = 0; d < 14; d++) {
        char name[81];
        snprintf(name, sizeof(name), "P%02d%077d", d, 0);
        size_t n = strlen(def) + 2 * strlen(name) + 128;
        char *outer = malloc(n);
        snprintf(outer, n,
                 "{\"StartAt\":\"%s\",\"States\":{\"%s\":{\"Type\":\"Parallel\",\"End\":true,"
                 "\"Branches\":[%s]}}}",
                 name, name, def);
        free(def);
        def = outer;
    }
    const char *def_path = "/tmp/swf-timeline-deep.json", *hist = "/tmp/swf-timeline-deep.jsonl";
    FILE *f = fopen(def_path, "w");
    cr_assert_not_null(f);
    fputs(def, f);
    fclose(f);
    free(def);
    cr_assert_eq(swf("validate", def_path, NULL), 0, "%s", output);
    cr_assert_eq(swf("run", "--local", def_path, "--history", NULL), 0, "%s", output);
    f = fopen(hist, "w");
    cr_assert_not_null(f);
    fputs(output, f);
    fclose(f);

    cr_assert_eq(swf("timeline", "--file", hist, NULL), 0, "%s", output);
    cr_assert(strstr(output, "Q (Parallel)  succeeded") != NULL, "%s", output);
    cr_assert(strstr(output, "W1 (Wait)  succeeded") != NULL, "%s", output);
    cr_assert(strstr(output, "W2 (Wait)  succeeded") != NULL, "%s", output);
    unlink(def_path);
    unlink(hist);
}
