/*
 * test_histories.c - the determinism guard: every recorded history in
 * tests/histories/ (conformance cases and examples, recorded by
 * scripts/record-histories.sh) must replay through the current interpreter
 * with every decision derived exactly as recorded. A failure here means a
 * change would break executions that are running: either it is a bug, or
 * the change is intended and the histories are recorded again (say so in
 * the commit).
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decider/replay.h"

#define HISTORIES SWF_SOURCE_DIR "/tests/histories"

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

Test(histories, every_recorded_decision_is_derived_again)
{
    DIR *d = opendir(HISTORIES);
    cr_assert_not_null(d, "no %s", HISTORIES);
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len > 6 && strcmp(e->d_name + len - 6, ".jsonl") == 0) {
            names = realloc(names, (n + 1) * sizeof(*names));
            names[n++] = strdup(e->d_name);
        }
    }
    closedir(d);
    qsort(names, n, sizeof(*names), by_name);
    cr_assert_gt(n, 100, "only %zu recorded histories: run scripts/record-histories.sh", n);

    size_t failed = 0, events = 0;
    for (size_t i = 0; i < n; i++) {
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", HISTORIES, names[i]);
        swf_event_list_t list = {0};
        swf_error_t *err = swf_event_list_read_file(path, &list);
        swf_decider_replay_result_t res = {0};
        swf_decider_replay_options_t opt = {0};
        if (err == NULL)
            err = swf_decider_replay_run(&list, &opt, &res);
        if (err == NULL && res.error != NULL) {
            err = res.error;
            res.error = NULL;
        }
        if (err != NULL) {
            failed++;
            cr_log_error("%s: %s\n  %s", names[i], swf_error_message(err),
                         swf_error_cause(err) ? swf_error_cause(err) : "");
            swf_error_free(err);
        } else if (swf_asl_exec_status(res.exec) == SWF_ASL_RUNNING) {
            failed++;
            cr_log_error("%s: still running at the end of a complete history", names[i]);
        }
        events += list.count;
        swf_decider_replay_result_free(&res);
        swf_event_list_free(&list);
        free(names[i]);
    }
    free(names);
    cr_assert_eq(failed, 0, "%zu of %zu recorded histories no longer replay (see above)", failed,
                 n);
    cr_log_info("%zu histories, %zu events replayed, all decisions match", n, events);
}
