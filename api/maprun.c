/*
 * maprun.c - Map Runs: ListMapRuns, DescribeMapRun, UpdateMapRun, and
 * ListExecutions of a mapRunArn.
 *
 * In AWS a distributed Map (ItemProcessor.ProcessorConfig.Mode
 * DISTRIBUTED) starts a Map Run whose iterations are child executions. swf
 * runs a distributed Map's iterations inside the execution, as it runs an
 * inline Map's, so a Map Run is nothing stored: it is derived from the
 * history by the same replay GetExecutionHistory uses (history.c), which
 * shows MapRunStarted when the Map's iterations begin and MapRunSucceeded,
 * MapRunFailed or MapRunAborted when they end. The API and the history
 * therefore agree by construction, with no new state and nothing shared
 * with the interpreter but the map trace it reports (decider/asl/exec.h).
 *
 * A run's identity is where it is in its execution's history: its ARN is
 * arn:aws:states:REGION:ACCOUNT:mapRun:MACHINE/LABEL:EXECUTION-N, AWS's
 * MACHINE/LABEL:ID with the execution's name and the run's number in it
 * (from 1, in the order the runs started; LABEL is the Map's Label, else
 * its name), the same on every replay; the interpreter numbers the runs
 * alike for a ResultWriter's MapRunArn (decider/asl/exec_children.c), so
 * that ARN, with the interpreter's region and account, names the same run.
 * Parsing it back finds the execution (region and account are not read);
 * its history says whether run N exists and has that label.
 *
 * The counts are the iterations': executionCounts counts them as AWS
 * counts child executions (one per item, or per batch with ItemBatcher),
 * itemCounts counts their items. A redrive of the execution redrives a run
 * that failed or was aborted (history.c: MapRunRedriven), which keeps its
 * ARN and counts its redrives; the number the interpreter gives the
 * redriven begin names the same run. UpdateMapRun is a signed signal to the
 * execution's decider (SWF_ASL_MAP_UPDATE_SIGNAL): the interpreter applies
 * it from the history, and the map trace reports it back here.
 */
#include "api/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "decider/asl/exec.h"
#include "history/pg.h"
#include "protocol/message.h"
#include "protocol/json.h"
#include "protocol/limits.h"

/* The parts of a Map Run's ARN. */
typedef struct run_ref {
    char machine[SWF_API_NAME_BYTES + 1];
    char label[SWF_LIMIT_NAME_BYTES + 1];
    char execution[SWF_API_NAME_BYTES + 1];
    long number;
} run_ref_t;

/* Parses arn:aws:states:REGION:ACCOUNT:mapRun:MACHINE/LABEL:EXECUTION-N;
 * InvalidArn naming what is wrong. A machine, execution or label has no
 * ':' or '/' in AWS's alphabet, a state name used as the label may: the
 * machine ends at the first '/', the execution starts after the last ':'. */
static swf_error_t *run_arn_parse(const char *arn, run_ref_t *r)
{
    static const char prefix[] = "arn:aws:states:", kind[] = "mapRun:";
    if (strlen(arn) >= SWF_API_ARN_BYTES || strncmp(arn, prefix, sizeof(prefix) - 1) != 0)
        return swf_api__err("InvalidArn", "Invalid Arn: '%s'", arn);
    const char *p = arn + sizeof(prefix) - 1;
    for (int i = 0; i < 2 && p != NULL; i++)
        p = (p = strchr(p, ':')) ? p + 1 : NULL;
    if (p == NULL || strncmp(p, kind, sizeof(kind) - 1) != 0)
        return swf_api__err("InvalidArn", "Invalid Arn: '%s': not a mapRun ARN", arn);
    p += sizeof(kind) - 1;
    const char *slash = strchr(p, '/'), *colon = strrchr(p, ':');
    const char *dash = colon ? strrchr(colon, '-') : NULL;
    if (slash == NULL || colon == NULL || colon < slash || dash == NULL)
        return swf_api__err("InvalidArn",
                            "Invalid Arn: '%s': a Map Run ARN is "
                            "...:mapRun:MACHINE/LABEL:EXECUTION-NUMBER",
                            arn);
    size_t nm = (size_t)(slash - p), nl = (size_t)(colon - slash - 1),
           ne = (size_t)(dash - colon - 1);
    char *end;
    long n = strtol(dash + 1, &end, 10);
    if (nm == 0 || nm > SWF_API_NAME_BYTES || memchr(p, ':', nm) != NULL || nl == 0 ||
        nl > SWF_LIMIT_NAME_BYTES || ne == 0 || ne > SWF_API_NAME_BYTES || dash[1] < '1' ||
        dash[1] > '9' || *end != '\0' || n > SWF_LIMIT_HISTORY_EVENTS)
        return swf_api__err("InvalidArn", "Invalid Arn: '%s'", arn);
    snprintf(r->machine, sizeof(r->machine), "%.*s", (int)nm, p);
    snprintf(r->label, sizeof(r->label), "%.*s", (int)nl, slash + 1);
    snprintf(r->execution, sizeof(r->execution), "%.*s", (int)ne, colon + 1);
    r->number = n;
    return NULL;
}

/* The Map Run the member mapRunArn of in names: *run a new reference to
 * its record (internal.h, swf_api__history_derive), ex its execution.
 * InvalidArn, AccessDeniedException, ResourceNotFound. */
static swf_error_t *run_find(swf_api_call_t *call, json_object *in, const char *key,
                             swf_history_execution_t *ex, json_object **run)
{
    const char *arn;
    run_ref_t r;
    *run = NULL;
    memset(ex, 0, sizeof(*ex));
    swf_error_t *err = swf_api__str(in, key, true, SWF_API_ARN_BYTES, &arn);
    if (err == NULL)
        err = run_arn_parse(arn, &r);
    if (err == NULL)
        err = swf_api__allowed(call, "stateMachine", r.machine);
    swf_history_store_t *s;
    if (err == NULL)
        err = swf_api__store(call, &s);
    if (err == NULL)
        err = swf_history_pg_execution_describe(s, r.execution, ex);
    bool found = err == NULL && strcmp(ex->state_machine, r.machine) == 0;
    if (err != NULL && swf_error_code(err) == SWF_E_NOTFOUND) {
        swf_error_free(err);
        err = NULL;
    }
    json_object *events = NULL, *runs = NULL;
    if (err == NULL && found)
        err = swf_api__execution_derive(call, ex, false, &events, &runs);
    json_object_put(events);
    json_object *rec = err == NULL && found && (size_t)r.number <= json_object_array_length(runs)
                           ? json_object_array_get_idx(runs, (size_t)r.number - 1)
                           : NULL;
    if (rec != NULL && strcmp(swf_json_get_string(rec, "label"), r.label) == 0)
        *run = json_object_get(rec);
    json_object_put(runs);
    if (err == NULL && *run == NULL)
        err = swf_api__err("ResourceNotFound", "Map Run Does Not Exist: '%s'", arn);
    if (err != NULL)
        swf_history_execution_free(ex);
    return err;
}

static void time_add(json_object *o, const char *key, json_object *rec, const char *member)
{
    json_object *v;
    if (swf_json_get(rec, member, &v))
        swf_json_add(o, key, swf_api__time(json_object_get_int64(v)));
}

static void arn_add(swf_api_call_t *call, json_object *o, const char *key, const char *kind,
                    const char *name, const char *sub)
{
    char arn[SWF_API_ARN_BYTES];
    swf_api__arn(call->api, kind, name, sub, arn);
    swf_json_add(o, key, json_object_new_string(arn));
}

/* The run's "stateMachineArn" (AWS: the Map's processor, MACHINE/LABEL). */
static void run_machine_add(swf_api_call_t *call, json_object *o, const char *machine,
                            json_object *rec)
{
    char name[SWF_API_NAME_BYTES + SWF_LIMIT_NAME_BYTES + 2];
    snprintf(name, sizeof(name), "%s/%s", machine, swf_json_get_string(rec, "label"));
    arn_add(call, o, "stateMachineArn", "stateMachine", name, NULL);
}

/* itemCounts (items) or executionCounts (!items) of a run. */
static json_object *run_counts(json_object *rec, bool items)
{
    static const char *const names[] = {"pending", "running", "succeeded", "failed", "aborted"};
    int64_t count[5] = {0}, total = 0, pending_redrive = 0;
    json_object *its = NULL;
    swf_json_get(rec, "iterations", &its);
    for (size_t i = 0; i < json_object_array_length(its); i++) {
        json_object *it = json_object_array_get_idx(its, i), *v = NULL;
        int64_t w = items && swf_json_get(it, "items", &v) ? json_object_get_int64(v) : 1;
        const char *st = swf_json_get_string(it, "status");
        for (size_t k = 0; k < 5; k++)
            if (strcasecmp(st, names[k]) == 0)
                count[k] += w;
        total += w;
        /* A redriven run's iterations waiting to run again. */
        if (strcmp(st, "PENDING") == 0 && json_object_object_get_ex(it, "redriveCount", NULL))
            pending_redrive += w;
    }
    json_object *o = json_object_new_object();
    for (size_t k = 0; k < 5; k++)
        swf_json_add(o, names[k], json_object_new_int64(count[k]));
    swf_json_add(o, "timedOut", json_object_new_int64(0));
    swf_json_add(o, "total", json_object_new_int64(total));
    /* The results a succeeded run kept (its tolerated failures' too). */
    const char *status = swf_json_get_string(rec, "status");
    swf_json_add(o, "resultsWritten",
                 json_object_new_int64(strcmp(status, "SUCCEEDED") == 0 ? count[2] + count[3] : 0));
    swf_json_add(o, "failuresNotRedrivable", json_object_new_int64(0));
    swf_json_add(o, "pendingRedrive", json_object_new_int64(pending_redrive));
    return o;
}

swf_error_t *swf_api__map_run_describe(swf_api_call_t *call, json_object *in, json_object **out)
{
    swf_history_execution_t ex;
    json_object *rec;
    swf_error_t *err = run_find(call, in, "mapRunArn", &ex, &rec);
    if (err != NULL)
        return err;
    json_object *o = json_object_new_object();
    swf_json_add(o, "mapRunArn", swf_json_ref(json_object_object_get(rec, "mapRunArn")));
    arn_add(call, o, "executionArn", "execution", ex.state_machine, ex.execution_id);
    swf_json_add(o, "status", swf_json_ref(json_object_object_get(rec, "status")));
    time_add(o, "startDate", rec, "startMs");
    time_add(o, "stopDate", rec, "stopMs");
    static const char *const keep[] = {"maxConcurrency", "toleratedFailurePercentage",
                                       "toleratedFailureCount"};
    for (size_t i = 0; i < sizeof(keep) / sizeof(*keep); i++)
        swf_json_add(o, keep[i], swf_json_ref(json_object_object_get(rec, keep[i])));
    swf_json_add(o, "itemCounts", run_counts(rec, true));
    swf_json_add(o, "executionCounts", run_counts(rec, false));
    /* A run redriven with its execution (history.c: MapRunRedriven). */
    json_object *v = NULL;
    swf_json_add(o, "redriveCount",
                 json_object_new_int64(
                     swf_json_get(rec, "redriveCount", &v) ? json_object_get_int64(v) : 0));
    time_add(o, "redriveDate", rec, "redriveMs");
    json_object_put(rec);
    swf_history_execution_free(&ex);
    *out = o;
    return NULL;
}

/* A page of `all` (an array) from offset, at most max, under member; a
 * nextToken when more follow. Takes all. */
static json_object *page_of(json_object *all, const char *member, long offset, int64_t max)
{
    size_t total = json_object_array_length(all);
    size_t end = (size_t)offset + (size_t)max < total ? (size_t)offset + (size_t)max : total;
    json_object *list = json_object_new_array(), *o = json_object_new_object();
    for (size_t k = (size_t)offset; k < end; k++)
        json_object_array_add(list, json_object_get(json_object_array_get_idx(all, k)));
    swf_json_add(o, member, list);
    if (end < total) {
        char next[32];
        snprintf(next, sizeof(next), "%zu", end);
        swf_json_add(o, "nextToken", json_object_new_string(next));
    }
    json_object_put(all);
    return o;
}

swf_error_t *swf_api__map_runs_list(swf_api_call_t *call, json_object *in, json_object **out)
{
    int64_t max = 100;
    long offset = 0;
    swf_history_execution_t ex;
    swf_error_t *err = swf_api__max_results(in, &max);
    if (err == NULL)
        err = swf_api__page_token(in, SWF_LIMIT_HISTORY_EVENTS, &offset);
    if (err == NULL)
        err = swf_api__execution_find(call, in, &ex);
    if (err != NULL)
        return err;
    json_object *events = NULL, *runs = NULL;
    err = swf_api__execution_derive(call, &ex, false, &events, &runs);
    json_object_put(events);
    if (err == NULL) {
        json_object *all = json_object_new_array();
        for (size_t i = 0; i < json_object_array_length(runs); i++) {
            json_object *rec = json_object_array_get_idx(runs, i), *v = NULL;
            if (swf_json_get(rec, "number", &v) && json_object_get_int64(v) != (int64_t)i + 1)
                continue; /* a redriven run again, under the interpreter's number */
            json_object *o = json_object_new_object();
            arn_add(call, o, "executionArn", "execution", ex.state_machine, ex.execution_id);
            swf_json_add(o, "mapRunArn", swf_json_ref(json_object_object_get(rec, "mapRunArn")));
            run_machine_add(call, o, ex.state_machine, rec);
            time_add(o, "startDate", rec, "startMs");
            time_add(o, "stopDate", rec, "stopMs");
            json_object_array_add(all, o);
        }
        *out = page_of(all, "mapRuns", offset, max);
    }
    json_object_put(runs);
    swf_history_execution_free(&ex);
    return err;
}

/* UpdateMapRun: the arguments and the run are checked as AWS checks them,
 * then the change goes to the execution's decider as a signed signal
 * (SWF_ASL_MAP_UPDATE_SIGNAL, decider/asl/exec.h), which it records in the
 * history and the interpreter applies there, on every replay alike:
 * DescribeMapRun shows the new limits once it is recorded. */
swf_error_t *swf_api__map_run_update(swf_api_call_t *call, json_object *in, json_object **out)
{
    int64_t maxc = -1, count = -1;
    json_object *pct = NULL;
    swf_error_t *err = swf_api__int(in, "maxConcurrency", 0, SWF_LIMIT_MAP_ITEMS, &maxc);
    if (err == NULL)
        err = swf_api__int(in, "toleratedFailureCount", 0, SWF_LIMIT_MAP_ITEMS, &count);
    if (err == NULL && swf_json_get(in, "toleratedFailurePercentage", &pct) &&
        (!swf_json_is_number(pct) || !(json_object_get_double(pct) >= 0) ||
         json_object_get_double(pct) > 100))
        err = swf_api__err("ValidationException",
                           "1 validation error detected: Value at 'toleratedFailurePercentage' "
                           "failed to satisfy constraint: Member must be a number from 0 to 100");
    if (err == NULL && maxc < 0 && count < 0 && pct == NULL)
        err = swf_api__err("ValidationException", "Must provide at least one of maxConcurrency, "
                                                  "toleratedFailurePercentage or "
                                                  "toleratedFailureCount");
    swf_history_execution_t ex;
    json_object *rec = NULL;
    if (err == NULL)
        err = run_find(call, in, "mapRunArn", &ex, &rec);
    if (err != NULL)
        return err;
    const char *status = swf_json_get_string(rec, "status");
    if (strcmp(status, "RUNNING") != 0) {
        err = swf_api__err("ValidationException",
                           "the Map Run is %s: only a running one can be updated", status);
    } else {
        json_object *u = json_object_new_object();
        static const char *const keep[] = {"path", "state", "beganEventId"};
        for (size_t i = 0; i < sizeof(keep) / sizeof(*keep); i++)
            swf_json_add(u, keep[i], swf_json_ref(json_object_object_get(rec, keep[i])));
        if (maxc >= 0)
            swf_json_add(u, "maxConcurrency", json_object_new_int64(maxc));
        if (count >= 0)
            swf_json_add(u, "toleratedFailureCount", json_object_new_int64(count));
        if (pct != NULL)
            swf_json_add(u, "toleratedFailurePercentage",
                         json_object_new_double(json_object_get_double(pct)));
        json_object *m =
            swf_msg_signal_new(call->api->secret, ex.execution_id, SWF_ASL_MAP_UPDATE_SIGNAL, u);
        json_object_put(u);
        err = swf_api__inbox_send(call->api, ex.execution_id, m);
        json_object_put(m);
    }
    if (err == NULL)
        *out = json_object_new_object();
    json_object_put(rec);
    swf_history_execution_free(&ex);
    return err;
}

/* ListExecutions of a mapRunArn pages through the first iterations, as
 * ListExecutions of a state machine through its newest executions. */
#define ITERATIONS_LISTED 10000

/* Whether an iteration's status passes ListExecutions' statusFilter. */
static bool status_passes(const char *status, const char *filter)
{
    return filter == NULL || strcmp(status, filter) == 0;
}

swf_error_t *swf_api__map_run_executions(swf_api_call_t *call, json_object *in, const char *status,
                                         const char *redrive, int64_t max, long offset,
                                         json_object **out)
{
    swf_history_execution_t ex;
    json_object *rec;
    swf_error_t *err = run_find(call, in, "mapRunArn", &ex, &rec);
    if (err != NULL)
        return err;
    json_object *all = json_object_new_array(), *its = NULL;
    const char *run_arn = swf_json_get_string(rec, "mapRunArn");
    swf_json_get(rec, "iterations", &its);
    for (size_t i = 0;
         i < json_object_array_length(its) && json_object_array_length(all) < ITERATIONS_LISTED;
         i++) {
        json_object *it = json_object_array_get_idx(its, i), *v = NULL;
        const char *st = swf_json_get_string(it, "status");
        /* An iteration run again by a redrive of its run (history.c). */
        int64_t redriven = swf_json_get(it, "redriveCount", &v) ? json_object_get_int64(v) : 0;
        /* Waiting to run again: AWS's PENDING_REDRIVE child execution. */
        if (strcmp(st, "PENDING") == 0 && redriven > 0)
            st = "PENDING_REDRIVE";
        if (strcmp(st, "PENDING") == 0 || !status_passes(st, status) ||
            (redrive != NULL && (strcmp(redrive, "REDRIVEN") == 0) != (redriven > 0)))
            continue;
        char name[SWF_API_ARN_BYTES], machine[SWF_API_NAME_BYTES + SWF_LIMIT_NAME_BYTES + 2];
        snprintf(name, sizeof(name), "%s-%zu", strrchr(run_arn, ':') + 1, i);
        snprintf(machine, sizeof(machine), "%s/%s", ex.state_machine,
                 swf_json_get_string(rec, "label"));
        json_object *o = json_object_new_object();
        arn_add(call, o, "executionArn", "execution", machine, name);
        run_machine_add(call, o, ex.state_machine, rec);
        swf_json_add(o, "name", json_object_new_string(name));
        swf_json_add(o, "status", json_object_new_string(st));
        time_add(o, "startDate", it, "startMs");
        time_add(o, "stopDate", it, "stopMs");
        swf_json_add(o, "mapRunArn", json_object_new_string(run_arn));
        swf_json_get(it, "items", &v);
        swf_json_add(o, "itemCount", swf_json_ref(v));
        swf_json_add(o, "redriveCount", json_object_new_int64(redriven));
        json_object_array_add(all, o);
    }
    *out = page_of(all, "executions", offset, max);
    json_object_put(rec);
    swf_history_execution_free(&ex);
    return NULL;
}
