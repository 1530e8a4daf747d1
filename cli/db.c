/*
 * db.c - the commands over the PostgreSQL history: db migrate, register,
 * start, describe, list, history, export, import, admin rebuild-projections,
 * admin check (the hash chain of history/CHAIN.md and the invariants of
 * decider/check.h, for one execution, all, or those of heads kept in a file).
 *
 * Each command is a thin shell over history/pg.h: parse arguments, open the
 * store (SWF_DATABASE_URL, a libpq conninfo or URI, or libpq's PG*
 * variables), call one library function, print. Output is for a person by
 * default and JSON with --json; `history --json` and `export` write the
 * exported event form, one event per line, as `swf run --local --history`
 * does plus each event's hash (eventHash, history/CHAIN.md), so `import`
 * reads either.
 *
 * Exit statuses follow cli.h: 1 for "no" (an invalid definition, an unknown
 * execution, a workflow id already running), 2 for bad arguments or input,
 * 3 for the database or a file failing.
 */
#include "cli/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decider/asl/validate.h"
#include "decider/sw/sw.h"
#include "decider/check.h"
#include "decider/nested.h"
#include "history/pg.h"
#include "protocol/hash.h"
#include "protocol/json.h"
#include "protocol/limits.h"
#include "protocol/time.h"

/* Fails on a file named on the command line: 3 when it could not be read,
 * 1 when what it holds is malformed or invalid (2 is for the command line
 * itself, README "Exit status"). */
static int fail_file(const char *cmd, swf_error_t *err)
{
    return swf_cli_fail_status(cmd, err,
                               swf_error_code(err) == SWF_E_IO ? SWF_EXIT_ERROR : SWF_EXIT_NO);
}

static swf_error_t *store_open(swf_history_store_t **s)
{
    return swf_history_pg_new(swf_history_pg_conninfo_env(), s);
}

static void time_str(int64_t ms, char *buf)
{
    if (ms < 0)
        strcpy(buf, "-");
    else
        swf_time_format_ms(ms, buf);
}

/* ---- db migrate ------------------------------------------------------------ */

static const swf_cli_cmd_t db_cmd = {
    "swf db", NULL, "Create the history's tables in PostgreSQL, or upgrade them to this version.",
    (const swf_cli_opt_t[]){
        {"ACTION", NULL, SWF_CLI_REQUIRED, "migrate: the only action", "swf db migrate"},
        {"--grant", "ROLE", 0,
         "then grant ROLE what swf's processes need (read and insert events, keep the "
         "projections) and nothing that can change or remove events; run as the owner",
         "swf db migrate --grant swf_runtime"},
        {"--chain", "auto|c|plpgsql", 0,
         "which trigger computes the hash chain (history/CHAIN.md; the same hashes): c, the "
         "extension swf_chain, which the server must have (history/pgext); plpgsql; auto "
         "(default): c when the server has it",
         "swf db migrate --chain plpgsql"},
        SWF_CLI_OPTS_END},
    "The database is SWF_DATABASE_URL (a libpq connection string or URI) or\n"
    "libpq's PG* variables. Migrate as the role that owns the tables; run the\n"
    "processes as the role given to --grant (README \"Production\").\n"};

int swf_cli_db(int argc, char **argv)
{
    swf_cli_args_t a;
    if (!swf_cli_args_parse(&db_cmd, argc, argv, &a))
        return a.status;
    if (strcmp(swf_cli_args_get(&a, "ACTION"), "migrate") != 0)
        return swf_cli_args_usage(&a, "unknown action '%s' (the action is migrate)",
                                  swf_cli_args_get(&a, "ACTION"));
    const char *chain = swf_cli_args_get(&a, "--chain");
    swf_history_chain_impl_t want = SWF_HISTORY_CHAIN_AUTO;
    if (chain != NULL && strcmp(chain, "c") == 0)
        want = SWF_HISTORY_CHAIN_C;
    else if (chain != NULL && strcmp(chain, "plpgsql") == 0)
        want = SWF_HISTORY_CHAIN_PLPGSQL;
    else if (chain != NULL && strcmp(chain, "auto") != 0)
        return swf_cli_args_usage(&a, "--chain %s: auto, c or plpgsql", chain);
    swf_history_store_t *s;
    swf_error_t *err = swf_history_pg_connect(swf_history_pg_conninfo_env(), &s);
    if (err != NULL)
        return swf_cli_fail("db", err);
    int from, to;
    err = swf_history_pg_migrate(s, 0, &from, &to);
    /* Which trigger computes the chain: every time, since the server may
     * have gained or lost the extension since the schema was migrated. */
    swf_history_chain_use_t use;
    if (err == NULL)
        err = swf_history_pg_chain_use(s, want, &use);
    const char *role = swf_cli_args_get(&a, "--grant");
    if (err == NULL && role != NULL)
        err = swf_history_pg_grant(s, role);
    swf_history_store_free(s);
    if (err != NULL)
        return swf_cli_fail("db", err);
    if (from == to)
        printf("schema at version %d, up to date\n", to);
    else
        printf("schema migrated from version %d to %d\n", from, to);
    printf("%s%s\n", use.says, use.changed ? " (switched now)" : "");
    if (role != NULL)
        printf("granted %s the runtime's privileges\n", role);
    return SWF_EXIT_OK;
}

/* ---- register ---------------------------------------------------------------- */

static const swf_cli_cmd_t register_cmd = {
    "swf register", NULL,
    "Register a new version of a state machine (versions count from 1); the definition must "
    "be valid (swf validate).",
    (const swf_cli_opt_t[]){
        {"NAME", NULL, SWF_CLI_REQUIRED, "the state machine's name, which swf start takes",
         "swf register orders examples/order.asl.json"},
        {"FILE", NULL, SWF_CLI_REQUIRED, "the ASL definition (JSON; - reads standard input)",
         "swf register orders - < order.asl.json"},
        SWF_CLI_OPTS_END},
    NULL};

int swf_cli_register(int argc, char **argv)
{
    swf_cli_args_t a;
    if (!swf_cli_args_parse(&register_cmd, argc, argv, &a))
        return a.status;
    const char *name = swf_cli_args_get(&a, "NAME"), *file = swf_cli_args_get(&a, "FILE");
    json_object *def;
    swf_error_t *err = swf_json_read_file(file, SWF_LIMIT_DEFINITION_BYTES, &def);
    if (err != NULL)
        return fail_file("register", err);
    swf_asl_problems_t problems = {0};
    if (swf_sw_validate_any(def, &problems) > 0) {
        fprintf(stderr, "%s: invalid definition, not registered:\n", file);
        for (size_t i = 0; i < problems.count; i++)
            fprintf(stderr, "  %s: %s\n", problems.items[i].where, problems.items[i].message);
        swf_asl_problems_free(&problems);
        json_object_put(def);
        return SWF_EXIT_NO;
    }
    swf_asl_problems_free(&problems);
    swf_history_store_t *s;
    err = store_open(&s);
    int version = 0;
    if (err == NULL) {
        err = swf_history_pg_state_machine_register(s, name, def, &version);
        swf_history_store_free(s);
    }
    json_object_put(def);
    if (err != NULL)
        return swf_cli_fail("register", err);
    printf("registered %s version %d\n", name, version);
    return SWF_EXIT_OK;
}

/* ---- start ------------------------------------------------------------------- */

static const swf_cli_cmd_t start_cmd = {
    "swf start", NULL,
    "Start an execution of a registered state machine and print its id; a decider takes it up "
    "from the inbox (SWF_KAFKA_BROKERS), or swf-history's sweep does.",
    (const swf_cli_opt_t[]){
        {"NAME", NULL, SWF_CLI_REQUIRED, "the state machine, as registered", "swf start orders"},
        {"--input", "JSON|@FILE", 0, "the execution's input, {} when not given: " SWF_CLI_JSON_HELP,
         "swf start orders --input '{\"orderId\": 7}'"},
        {"--workflow-id", "WORKFLOW_ID", 0,
         "a name of your own for the execution; only one execution of a workflow id is open at "
         "a time (the default is the execution id)",
         "swf start orders --workflow-id order-7"},
        {"--version", "N", 0, "the state machine's version to run (default: the latest)",
         "swf start orders --version 2"},
        {"--wait", NULL, 0,
         "follow the execution to its end, printing its events; the exit status says how it "
         "ended",
         "swf start orders --wait"},
        {"--inputs", "FILE|-", 0,
         "start one execution per line of a JSON Lines file (- reads standard input), each "
         "line {\"input\": JSON, \"workflowId\": \"...\"} (both optional); print one "
         "execution id per line, in order. The whole file is checked first: a bad line is named "
         "and nothing starts. At most 100,000 lines",
         "swf start orders --inputs orders.jsonl"},
        SWF_CLI_OPTS_END},
    "With --inputs, a line whose workflow id is already open prints that execution's id and\n"
    "is named on stderr, as swf start names it; the other lines start (exit status 1). Lines\n"
    "start in batches of 500, one transaction each; convert a file of bare inputs with\n"
    "jq -c '{input: .}' inputs.jsonl | swf start orders --inputs -\n"};

int swf_cli_start(int argc, char **argv)
{
    swf_cli_args_t a;
    if (!swf_cli_args_parse(&start_cmd, argc, argv, &a))
        return a.status;
    const char *name = swf_cli_args_get(&a, "NAME"), *input_arg = swf_cli_args_get(&a, "--input");
    const char *workflow_id = swf_cli_args_get(&a, "--workflow-id");
    bool wait = swf_cli_args_has(&a, "--wait");
    /* A version is a number from 1 (what register printed); anything else
     * would silently start the latest one. */
    int64_t version = 0;
    if (swf_cli_args_has(&a, "--version") &&
        !swf_cli_args_int(&a, "--version", 1, INT_MAX, &version))
        return a.status;
    const char *inputs = swf_cli_args_get(&a, "--inputs");
    if (inputs != NULL) {
        /* Each line says its own input and workflow id (cli/start_inputs.c). */
        const char *other = input_arg != NULL     ? "--input"
                            : workflow_id != NULL ? "--workflow-id"
                            : wait                ? "--wait"
                                                  : NULL;
        if (other != NULL)
            return swf_cli_args_usage(&a,
                                      "%s does not go with --inputs (each line of the file gives "
                                      "its own input and workflowId)",
                                      other);
        return swf_cli_start_inputs(name, (int)version, inputs);
    }
    json_object *input = NULL;
    swf_error_t *err = NULL;
    if (input_arg != NULL)
        err = swf_cli_json_arg("--input", input_arg, SWF_LIMIT_JSON_BYTES, &input);
    else
        input = json_object_new_object();
    if (err != NULL)
        return swf_cli_fail("start", err);
    char id[37];
    err = swf_uuid_new(id);
    if (err != NULL) {
        json_object_put(input);
        return swf_cli_fail("start", err);
    }
    swf_history_store_t *s;
    err = store_open(&s);
    char *running = NULL;
    if (err == NULL) {
        swf_history_start_t req = {.execution_id = id,
                                   .workflow_id = workflow_id,
                                   .state_machine = name,
                                   .version = (int)version,
                                   .input = input,
                                   .time_ms = swf_time_now_ms()};
        err = swf_history_pg_execution_start(s, &req, &running);
        swf_history_store_free(s);
    }
    json_object_put(input);
    if (err != NULL) {
        if (running != NULL)
            printf("%s\n", running);
        free(running);
        return swf_cli_fail("start", err);
    }
    printf("%s\n", id);
    fflush(stdout);
    /* A decider picks the execution up from its inbox (cli/control.c); with
     * --wait, follow it to its end (cli/follow.c). The execution is started
     * whether or not that notice reached Kafka (a failure is reported on
     * stderr): a non-zero status would invite a retry that starts it twice. */
    (void)swf_cli_decide_post(id);
    return wait ? swf_cli_follow(id, stdout) : SWF_EXIT_OK;
}

/* ---- describe, list ---------------------------------------------------------- */

static json_object *execution_json(const swf_history_execution_t *ex)
{
    char t[SWF_TIME_BUF];
    json_object *o = json_object_new_object();
    json_object_object_add(o, "executionId", json_object_new_string(ex->execution_id));
    json_object_object_add(o, "workflowId", json_object_new_string(ex->workflow_id));
    json_object *type = json_object_new_object();
    json_object_object_add(type, "name", json_object_new_string(ex->state_machine));
    json_object_object_add(type, "version", json_object_new_string(ex->state_machine_version));
    json_object_object_add(o, "workflowType", type);
    json_object_object_add(o, "status", json_object_new_string(ex->status));
    time_str(ex->start_ms, t);
    json_object_object_add(o, "startTime", json_object_new_string(t));
    if (ex->close_ms >= 0) {
        time_str(ex->close_ms, t);
        json_object_object_add(o, "closeTime", json_object_new_string(t));
    }
    json_object_object_add(o, "lastEventId", json_object_new_int64(ex->last_event_id));
    return o;
}

static const swf_cli_cmd_t describe_cmd = {
    "swf describe", "(ID | --workflow-id WORKFLOW_ID) [--json]",
    "Show one execution: its workflow id, state machine, status, times, number of events, and "
    "the task list each of its tasks uses.",
    (const swf_cli_opt_t[]){SWF_CLI_OPTS_EXECUTION("describe"),
                            {"--json", NULL, 0, "one JSON object instead of text",
                             "swf describe --workflow-id order-7 --json"},
                            SWF_CLI_OPTS_END},
    NULL};

int swf_cli_describe(int argc, char **argv)
{
    swf_cli_args_t a;
    char *id = NULL;
    if (!swf_cli_args_parse(&describe_cmd, argc, argv, &a) ||
        !swf_cli_args_execution(&a, NULL, &id))
        return a.status;
    bool json = swf_cli_args_has(&a, "--json");
    swf_history_store_t *s;
    swf_error_t *err = store_open(&s);
    swf_history_execution_t ex = {0};
    json_object *tasks = NULL; /* the task lists its tasks use (cli/tasks.c) */
    json_object *links = NULL;
    if (err == NULL) {
        err = swf_history_pg_execution_describe(s, id, &ex);
        if (err == NULL)
            tasks = swf_cli_execution_tasks(s, id, &err);
        /* Nested executions: the parent and the children its history names
         * (decider/nested.h). */
        swf_event_list_t events = {0};
        if (err == NULL) {
            /* A row with no events (a projection rebuilt by hand) has no links. */
            swf_error_t *lerr = swf_history_load(s, id, 0, 0, &events);
            if (lerr != NULL && swf_error_code(lerr) != SWF_E_NOTFOUND)
                err = lerr;
            else
                swf_error_free(lerr);
        }
        if (err == NULL)
            links = swf_nested_links(&events);
        swf_event_list_free(&events);
        swf_history_store_free(s);
    }
    free(id);
    if (err != NULL) {
        swf_history_execution_free(&ex);
        return swf_cli_fail("describe", err);
    }
    json_object *parent = NULL, *children = NULL;
    swf_json_get(links, "parent", &parent);
    swf_json_get(links, "children", &children);
    if (json) {
        json_object *o = execution_json(&ex);
        if (tasks != NULL)
            json_object_object_add(o, "tasks", json_object_get(tasks));
        if (parent != NULL)
            json_object_object_add(o, "parent", swf_json_ref(parent));
        json_object_object_add(o, "children", swf_json_ref(children));
        printf("%s\n", swf_json_str(o));
        json_object_put(o);
    } else {
        char st[SWF_TIME_BUF], ct[SWF_TIME_BUF];
        time_str(ex.start_ms, st);
        time_str(ex.close_ms, ct);
        printf("execution      %s\nworkflow id    %s\nstate machine  %s (version %s)\n"
               "status         %s\nstarted        %s\nclosed         %s\nevents         %lld\n",
               ex.execution_id, ex.workflow_id, ex.state_machine, ex.state_machine_version,
               ex.status, st, ct, (long long)ex.last_event_id);
        for (size_t i = 0; tasks != NULL && i < json_object_array_length(tasks); i++) {
            json_object *t = json_object_array_get_idx(tasks, i);
            const char *list = swf_json_get_string(t, "taskList");
            printf("task list      %s (%s)\n", list ? list : "(none)",
                   swf_json_get_string(t, "path"));
        }
        if (parent != NULL)
            printf("parent         %s (its event %lld starts this one)\n",
                   swf_json_get_string(parent, "executionId"),
                   (long long)json_object_get_int64(
                       json_object_object_get(parent, "initiatedEventId")));
        for (size_t i = 0; i < json_object_array_length(children); i++) {
            json_object *c = json_object_array_get_idx(children, i);
            printf("%-15s%s (started by state %s, event %lld)\n", i == 0 ? "children" : "",
                   swf_json_get_string(c, "executionId"), swf_json_get_string(c, "state"),
                   (long long)json_object_get_int64(json_object_object_get(c, "scheduledEventId")));
        }
    }
    json_object_put(tasks);
    json_object_put(links);
    swf_history_execution_free(&ex);
    return SWF_EXIT_OK;
}

static const swf_cli_cmd_t list_cmd = {
    "swf list", NULL, "List executions, newest first.",
    (const swf_cli_opt_t[]){
        {"--status", "STATUS", 0,
         "only these: open, closed (any but open), succeeded, failed, timed_out, canceled or "
         "terminated",
         "swf list --status open"},
        {"--state-machine", "NAME", 0, "only executions of this state machine",
         "swf list --state-machine orders"},
        {"--limit", "N", 0, "at most N executions, 1 to 100000 (default 100)",
         "swf list --limit 10"},
        {"--json", NULL, 0, "one JSON object per line instead of a table", "swf list --json"},
        SWF_CLI_OPTS_END},
    NULL};

int swf_cli_list(int argc, char **argv)
{
    swf_cli_args_t a;
    if (!swf_cli_args_parse(&list_cmd, argc, argv, &a))
        return a.status;
    swf_history_filter_t f = {.status = swf_cli_args_get(&a, "--status"),
                              .state_machine = swf_cli_args_get(&a, "--state-machine")};
    bool json = swf_cli_args_has(&a, "--json");
    int64_t limit = 0;
    if (swf_cli_args_has(&a, "--limit") && !swf_cli_args_int(&a, "--limit", 1, 100000, &limit))
        return a.status;
    f.limit = (size_t)limit;
    swf_history_store_t *s;
    swf_error_t *err = store_open(&s);
    swf_history_execution_t *items = NULL;
    size_t n = 0;
    if (err == NULL) {
        err = swf_history_pg_executions_list(s, &f, &items, &n);
        swf_history_store_free(s);
    }
    if (err != NULL)
        return swf_cli_fail("list", err);
    if (!json)
        printf("%-36s  %-10s  %-24s  %-24s  %s\n", "EXECUTION", "STATUS", "STARTED",
               "STATE MACHINE", "WORKFLOW ID");
    for (size_t i = 0; i < n; i++) {
        if (json) {
            json_object *o = execution_json(&items[i]);
            printf("%s\n", swf_json_str(o));
            json_object_put(o);
        } else {
            char st[SWF_TIME_BUF];
            time_str(items[i].start_ms, st);
            printf("%-36s  %-10s  %-24s  %-24s  %s\n", items[i].execution_id, items[i].status, st,
                   items[i].state_machine, items[i].workflow_id);
        }
    }
    swf_history_executions_free(items, n);
    return SWF_EXIT_OK;
}

/* ---- history, export, import ------------------------------------------------- */

/* Prints an event; in the exported form with its hash when hash is not
 * NULL (history/CHAIN.md). */
static void event_print(FILE *out, const swf_event_t *ev, bool json, const char *hash)
{
    if (json) {
        json_object *o = swf_event_to_json(ev);
        if (hash != NULL)
            json_object_object_add(o, "eventHash", json_object_new_string(hash));
        fprintf(out, "%s\n", swf_json_str(o));
        json_object_put(o);
        return;
    }
    char t[SWF_TIME_BUF];
    swf_time_format_ms(ev->time_ms, t);
    fprintf(out, "%6lld  %s  %-34s %s\n", (long long)ev->id, t, swf_event_type_name(ev->type),
            swf_json_str(ev->attrs));
}

/* Loads an execution's events (newest first when reverse) and, with
 * hashes, each one's hash in the chain (*hashes, indexed by id - 1; the
 * caller frees both). Appends after the events were read are left out of
 * both: the hashes of events 1 .. count never change. */
static swf_error_t *events_load(const char *id, bool reverse, bool with_hashes,
                                swf_event_list_t *events, swf_event_hash_t **hashes)
{
    swf_history_store_t *s;
    swf_error_t *err = store_open(&s);
    if (err == NULL)
        err = reverse ? swf_history_pg_load_reverse(s, id, 0, 0, events)
                      : swf_history_load(s, id, 0, 0, events);
    if (err == NULL && with_hashes) {
        *hashes = calloc(events->count + 1, sizeof(**hashes));
        if (*hashes == NULL)
            abort();
        err = swf_history_pg_chain_load(s, id, events->count, *hashes);
    }
    swf_history_store_free(s);
    if (err != NULL) {
        swf_event_list_free(events);
        free(*hashes);
        *hashes = NULL;
    }
    return err;
}

static const swf_cli_cmd_t history_cmd = {
    "swf history",
    "(ID | --workflow-id WORKFLOW_ID) [--json] [--reverse] [--states [--file HISTORY]]",
    "Print an execution's events, one a line: id, time, type, attributes.",
    (const swf_cli_opt_t[]){
        SWF_CLI_OPTS_EXECUTION("history"),
        {"--json", NULL, 0, "the exported event form, one JSON object a line (as swf export)",
         "swf history --workflow-id order-7 --json"},
        {"--reverse", NULL, 0, "newest event first", "swf history --workflow-id order-7 --reverse"},
        {"--states", NULL, 0,
         "the ASL states entered and exited instead of the events: swf timeline",
         "swf history --workflow-id order-7 --states"},
        {"--file", "HISTORY", 0, "with --states: an exported history instead of ID",
         "swf history --states --file order-7.jsonl"},
        SWF_CLI_OPTS_END},
    NULL};

int swf_cli_history(int argc, char **argv)
{
    swf_cli_args_t a;
    if (!swf_cli_args_parse(&history_cmd, argc, argv, &a))
        return a.status;
    /* `history ID --states` is the timeline derived by replay (cli/timeline.c). */
    if (swf_cli_args_has(&a, "--states")) {
        if (swf_cli_args_has(&a, "--reverse"))
            return swf_cli_args_usage(&a, "--states and --reverse do not go together");
        return swf_cli_timeline(argc, argv);
    }
    if (swf_cli_args_has(&a, "--file"))
        return swf_cli_args_usage(&a, "--file goes with --states (swf import loads a file)");
    char *id = NULL;
    if (!swf_cli_args_execution(&a, NULL, &id))
        return a.status;
    bool json = swf_cli_args_has(&a, "--json"), reverse = swf_cli_args_has(&a, "--reverse");
    swf_event_list_t events = {0};
    swf_event_hash_t *hashes = NULL;
    swf_error_t *err = events_load(id, reverse, json, &events, &hashes);
    free(id);
    if (err != NULL)
        return swf_cli_fail("history", err);
    for (size_t i = 0; i < events.count; i++) {
        const swf_event_t *ev = &events.items[i];
        event_print(stdout, ev, json, hashes != NULL ? hashes[ev->id - 1] : NULL);
    }
    swf_event_list_free(&events);
    free(hashes);
    return SWF_EXIT_OK;
}

static const swf_cli_cmd_t export_cmd = {
    "swf export", "(ID | --workflow-id WORKFLOW_ID) [FILE]",
    "Write an execution's history as JSON lines, one event a line: what swf import, swf replay "
    "--file and swf timeline --file read.",
    (const swf_cli_opt_t[]){SWF_CLI_OPTS_EXECUTION("export"),
                            {"FILE", NULL, 0, "where to write it (default, or -: standard output)",
                             "swf export --workflow-id order-7 order-7.jsonl"},
                            SWF_CLI_OPTS_END},
    NULL};

int swf_cli_export(int argc, char **argv)
{
    swf_cli_args_t a;
    char *id = NULL;
    if (!swf_cli_args_parse(&export_cmd, argc, argv, &a) || !swf_cli_args_execution(&a, NULL, &id))
        return a.status;
    const char *path = swf_cli_args_get(&a, "FILE");
    swf_event_list_t events = {0};
    swf_event_hash_t *hashes = NULL;
    swf_error_t *err = events_load(id, false, true, &events, &hashes);
    free(id);
    if (err != NULL)
        return swf_cli_fail("export", err);
    FILE *out = path != NULL && strcmp(path, "-") != 0 ? fopen(path, "w") : stdout;
    if (out == NULL) {
        swf_event_list_free(&events);
        free(hashes);
        return swf_cli_fail("export",
                            swf_error_new(SWF_E_IO, NULL, "%s: %s", path, strerror(errno)));
    }
    for (size_t i = 0; i < events.count; i++)
        event_print(out, &events.items[i], true, hashes[i]);
    swf_event_list_free(&events);
    free(hashes);
    bool bad = ferror(out) != 0;
    if (out != stdout)
        bad |= fclose(out) != 0;
    else
        bad |= fflush(out) != 0;
    if (bad)
        return swf_cli_fail("export", swf_error_new(SWF_E_IO, NULL, "%s: write failed",
                                                    out != stdout ? path : "stdout"));
    return SWF_EXIT_OK;
}

/*
 * Nothing gets into the append-only events table that the engine could not
 * have written, since it stays there for good: deciders go on with an open
 * history, swf-history acts on its timers and tasks, and `swf admin check`
 * would report it for ever. So a history with a structural problem (ids,
 * start and close, decision tasks, activities, timers: decider/check.h) is
 * refused, --force or not; to look at one, `swf replay --file`, `swf
 * timeline --file` and `swf graph --history` read the file itself.
 *
 * A sound history that does not replay through this interpreter (recorded
 * under another deployment's token secret, or by an older interpreter) is
 * refused too, unless --force is given and it is closed: a closed
 * execution is only ever read, never advanced, so nothing acts on it. An
 * open one that does not replay would leave its decider stuck, so --force
 * does not import it either.
 */
static const swf_cli_cmd_t import_cmd = {
    "swf import", NULL,
    "Load a history written by swf export (or swf run --local --history) as a new execution, "
    "after checking that the engine could have written it and that it replays.",
    (const swf_cli_opt_t[]){
        {"FILE", NULL, SWF_CLI_REQUIRED, "the history, JSON lines (- reads standard input)",
         "swf import order-7.jsonl"},
        {"--force", NULL, 0,
         "import a closed history that does not replay here (another deployment's token secret, "
         "an older interpreter), its problems printed as warnings",
         "swf import order-7.jsonl --force"},
        SWF_CLI_OPTS_END},
    NULL};

/* Prints the problems of `file` under a heading. */
static void import_problems_print(const char *file, const char *heading,
                                  const swf_decider_check_problems_t *problems)
{
    fprintf(stderr, "swf import: %s: %s:\n", file, heading);
    for (size_t i = 0; i < problems->count; i++)
        fprintf(stderr, "  %s\n", problems->items[i]);
}

/* Checks a history read from `file` for import (see import_cmd). */
static swf_error_t *import_check(const char *file, const swf_event_list_t *events, bool force)
{
    swf_decider_check_problems_t problems = {0};
    swf_error_t *err = swf_decider_check_structure(events, &problems);
    if (err == NULL && problems.count > 0) {
        import_problems_print(file, "not a history the engine could have written", &problems);
        err = swf_error_new(SWF_E_INPUT, NULL, "%zu problem%s; nothing imported, --force or not",
                            problems.count, problems.count == 1 ? "" : "s");
    }
    if (err == NULL)
        err = swf_decider_check_events(events, &problems);
    bool closed =
        events->count > 0 && swf_event_type_is_close(events->items[events->count - 1].type);
    if (err == NULL && problems.count > 0) {
        bool anyway = force && closed;
        import_problems_print(file,
                              anyway ? "warning: importing anyway (--force, a closed execution) "
                                       "what does not replay here"
                                     : "does not replay here",
                              &problems);
        if (!anyway)
            err = swf_error_new(SWF_E_INPUT, NULL, "%zu problem%s; nothing imported (%s)",
                                problems.count, problems.count == 1 ? "" : "s",
                                closed ? "--force imports a closed history anyway"
                                       : "an open execution must replay, --force or not");
    }
    swf_decider_check_problems_free(&problems);
    return err;
}

int swf_cli_import(int argc, char **argv)
{
    swf_cli_args_t a;
    if (!swf_cli_args_parse(&import_cmd, argc, argv, &a))
        return a.status;
    const char *file = swf_cli_args_get(&a, "FILE");
    swf_event_list_t events = {0};
    swf_event_hash_t *hashes = NULL;
    swf_error_t *err = swf_event_list_read_file_hashes(file, &events, &hashes);
    if (err == NULL)
        err = import_check(file, &events, swf_cli_args_has(&a, "--force"));
    if (err != NULL) {
        swf_event_list_free(&events);
        free(hashes);
        return fail_file("import", err);
    }
    swf_history_store_t *s = NULL;
    char *id = NULL;
    err = store_open(&s);
    if (err == NULL)
        err = swf_history_pg_import_chained(s, &events, hashes, &id);
    swf_history_store_free(s);
    size_t count = events.count;
    bool hashed = hashes != NULL;
    swf_event_list_free(&events);
    free(hashes);
    /* A chain that does not hold is what the file holds (1), not usage. */
    if (err != NULL && swf_error_code(err) == SWF_E_INPUT) {
        swf_error_prefix(err, "%s", file);
        return fail_file("import", err);
    }
    if (err != NULL)
        return swf_cli_fail("import", err);
    printf("imported %s (%zu events%s)\n", id, count,
           hashed ? ", each one's hash as exported"
                  : "; the file carries no hashes: their chain starts here");
    free(id);
    return SWF_EXIT_OK;
}

/* ---- admin ------------------------------------------------------------------- */

/* Checks one execution: its hash chain first (history/CHAIN.md), then the
 * invariants; prints its problems, and with heads its head ("head ID
 * EVENT_ID HASH", what an operator keeps elsewhere). *bad counts
 * executions with problems (an unknown id is one). Returns an operating
 * error only. */
static swf_error_t *check_one(swf_history_store_t *s, const char *id, bool heads, size_t *bad)
{
    swf_decider_check_problems_t problems = {0};
    swf_error_t *err = swf_decider_check_execution(s, id, &problems);
    if (err != NULL && swf_error_code(err) == SWF_E_NOTFOUND) {
        printf("%s: no such execution\n", id);
        (*bad)++;
        swf_error_free(err);
        return NULL;
    }
    swf_history_chain_t chain;
    if (err == NULL)
        err = swf_history_pg_chain_check(s, id, &chain);
    if (err == NULL && chain.broken_id != 0)
        printf("%s: event %lld: the hash chain breaks: %s\n", id, (long long)chain.broken_id,
               chain.broken);
    if (err == NULL && problems.count > 0) {
        for (size_t i = 0; i < problems.count; i++)
            printf("%s: %s\n", id, problems.items[i]);
    }
    if (err == NULL && (problems.count > 0 || chain.broken_id != 0))
        (*bad)++;
    if (err == NULL && heads)
        printf("head %s %lld %s\n", id, (long long)chain.head_id, chain.head_hash);
    swf_decider_check_problems_free(&problems);
    return err;
}

/* Rows of the executions projection per page of --all. */
#define CHECK_PAGE 1000

/* Every execution, newest first, a page at a time. Pages end at a start
 * time; the next one starts at that millisecond again (it may hold more
 * executions than the page took) and skips the ids already checked there. */
static swf_error_t *check_all(swf_history_store_t *s, bool heads, size_t *checked, size_t *bad)
{
    int64_t before_ms = 0;
    json_object *seen = json_object_new_object(); /* ids checked at before_ms - 1 */
    size_t page = CHECK_PAGE;
    swf_error_t *err = NULL;
    for (;;) {
        swf_history_filter_t f = {.started_before_ms = before_ms, .limit = page};
        swf_history_execution_t *items = NULL;
        size_t n = 0;
        err = swf_history_pg_executions_list(s, &f, &items, &n);
        if (err != NULL)
            break;
        int64_t oldest = n > 0 ? items[n - 1].start_ms : 0;
        json_object *next_seen = json_object_new_object();
        for (size_t i = 0; i < n && err == NULL; i++) {
            const char *id = items[i].execution_id;
            if (items[i].start_ms == oldest)
                json_object_object_add(next_seen, id, NULL);
            json_object *v;
            if (swf_json_get(seen, id, &v))
                continue;
            err = check_one(s, id, heads, bad);
            (*checked)++;
        }
        bool full = n == page;
        /* A page of one millisecond only: take a bigger one at it again. */
        bool stuck = full && n > 0 && items[0].start_ms == oldest && before_ms == oldest + 1;
        swf_history_executions_free(items, n);
        json_object_put(seen);
        seen = next_seen;
        if (err != NULL || !full)
            break;
        if (stuck)
            page *= 2;
        before_ms = oldest + 1;
    }
    json_object_put(seen);
    return err;
}

/* The longest line of a --heads-from file. */
#define HEADS_LINE_BYTES 1024

/* One line of a --heads-from file, "head ID EVENT_ID HASH", into its
 * parts (pointers into line, which it cuts); false when it is not one. */
static bool head_parse(char *line, const char **id, int64_t *event_id, const char **hash)
{
    char *save = NULL, *end = NULL;
    const char *word = strtok_r(line, " \t\r\n", &save);
    *id = strtok_r(NULL, " \t\r\n", &save);
    const char *n = strtok_r(NULL, " \t\r\n", &save);
    *hash = strtok_r(NULL, " \t\r\n", &save);
    if (word == NULL || strcmp(word, "head") != 0 || *id == NULL || n == NULL || *hash == NULL ||
        strtok_r(NULL, " \t\r\n", &save) != NULL)
        return false;
    errno = 0;
    long long v = strtoll(n, &end, 10);
    if (errno != 0 || *end != '\0' || v < 1 || strlen(*hash) != SWF_EVENT_HASH_HEX)
        return false;
    *event_id = v;
    return true;
}

/*
 * Checks every execution a --heads-from file names (what `check --heads`
 * printed earlier, kept where the database's owner cannot write): its
 * chain and invariants as check_one does, and that the event id kept is
 * still there with the hash kept. Histories only grow, so a hash that
 * differs means the history up to that event was rewritten, its hashes
 * recomputed: what the chain alone cannot show (history/CHAIN.md). A line
 * that is not a head is an SWF_E_INPUT error naming FILE:LINE.
 */
static swf_error_t *check_heads(swf_history_store_t *s, const char *file, size_t *checked,
                                size_t *bad)
{
    FILE *f = strcmp(file, "-") == 0 ? stdin : fopen(file, "r");
    if (f == NULL)
        return swf_error_new(SWF_E_IO, NULL, "%s: %s", file, strerror(errno));
    char line[HEADS_LINE_BYTES + 2];
    swf_error_t *err = NULL;
    for (size_t lineno = 1; err == NULL && fgets(line, sizeof(line), f) != NULL; lineno++) {
        const char *id, *kept;
        int64_t event_id;
        bool blank = strspn(line, " \t\r\n") == strlen(line);
        if (strchr(line, '\n') == NULL && !feof(f)) {
            err = swf_error_new(SWF_E_INPUT, NULL, "%s:%zu: longer than %d bytes", file, lineno,
                                HEADS_LINE_BYTES);
            break;
        }
        if (blank)
            continue;
        if (!head_parse(line, &id, &event_id, &kept)) {
            err = swf_error_new(SWF_E_INPUT, NULL,
                                "%s:%zu: not a head line (\"head ID EVENT_ID HASH\", as swf "
                                "admin check --heads prints them)",
                                file, lineno);
            break;
        }
        size_t found = 0;
        err = check_one(s, id, false, &found);
        (*checked)++;
        swf_event_hash_t stored;
        swf_error_t *gone = err == NULL ? swf_history_pg_chain_hash(s, id, event_id, stored) : NULL;
        if (gone != NULL && swf_error_code(gone) == SWF_E_NOTFOUND) {
            printf("%s: event %lld: the head kept in %s is gone: the history ends before it\n", id,
                   (long long)event_id, file);
            found = found ? found : 1;
            swf_error_free(gone);
        } else if (gone != NULL) {
            err = gone;
        } else if (err == NULL && strcmp(stored, kept) != 0) {
            printf("%s: event %lld: the head kept in %s (%.16s...) is not the stored hash "
                   "(%.16s...): the history up to this event was rewritten\n",
                   id, (long long)event_id, file, kept, stored);
            found = found ? found : 1;
        }
        *bad += found;
    }
    if (err == NULL && ferror(f))
        err = swf_error_new(SWF_E_IO, NULL, "%s: read failed", file);
    if (f != stdin)
        fclose(f);
    return err;
}

static const swf_cli_cmd_t admin_cmd = {
    "swf admin", "(rebuild-projections | check (ID... | --all | --heads-from FILE) [--heads])",
    "Maintenance of the history: rebuild-projections recomputes the executions and timers "
    "tables from the events; check checks histories (the hash chain, dense ids, one close, one "
    "result per activity, replay) and exits 1 on a problem.",
    (const swf_cli_opt_t[]){
        {"ACTION", NULL, SWF_CLI_REQUIRED, "rebuild-projections or check",
         "swf admin rebuild-projections"},
        {"ID", NULL, SWF_CLI_MANY, "check: the executions to check", "swf admin check 3f2b8c1e"},
        {"--all", NULL, 0, "check: every execution, newest first", "swf admin check --all"},
        {"--heads", NULL, 0,
         "check: also print each execution's head, \"head ID EVENT_ID HASH\": keep them "
         "where the database's owner cannot write (README \"Production\")",
         "swf admin check --all --heads > heads-2026-11-27.txt"},
        {"--heads-from", "FILE", 0,
         "check: the executions of heads kept earlier (--heads), and that each kept head is "
         "still in its chain (- reads standard input)",
         "swf admin check --heads-from heads-2026-11-27.txt"},
        SWF_CLI_OPTS_END},
    NULL};

int swf_cli_admin(int argc, char **argv)
{
    swf_cli_args_t a;
    if (!swf_cli_args_parse(&admin_cmd, argc, argv, &a))
        return a.status;
    const char *action = swf_cli_args_get(&a, "ACTION");
    bool all = swf_cli_args_has(&a, "--all");
    if (strcmp(action, "check") == 0) {
        const char *kept = swf_cli_args_get(&a, "--heads-from");
        if ((int)all + (int)swf_cli_args_has(&a, "ID") + (int)(kept != NULL) != 1)
            return swf_cli_args_usage(&a, "check takes execution ids, --all or --heads-from FILE");
        bool heads = swf_cli_args_has(&a, "--heads");
        if (kept != NULL && heads)
            return swf_cli_args_usage(&a, "--heads-from checks kept heads; --heads prints them");
        swf_history_store_t *s;
        swf_error_t *err = store_open(&s);
        size_t checked = 0, bad = 0;
        if (err == NULL && all)
            err = check_all(s, heads, &checked, &bad);
        if (err == NULL && kept != NULL) {
            err = check_heads(s, kept, &checked, &bad);
            if (err != NULL &&
                (swf_error_code(err) == SWF_E_INPUT || swf_error_code(err) == SWF_E_IO)) {
                swf_history_store_free(s);
                return fail_file("admin check", err);
            }
        }
        int pos = 0;
        for (const char *id;
             err == NULL && swf_cli_args_has(&a, "ID") && (id = swf_cli_args_next(&a, "ID", &pos));
             checked++)
            err = check_one(s, id, heads, &bad);
        swf_history_store_free(s);
        if (err != NULL)
            return swf_cli_fail("admin check", err);
        if (bad == 0)
            printf("checked %zu execution%s: every history holds its invariants\n", checked,
                   checked == 1 ? "" : "s");
        else
            printf("checked %zu execution%s: %zu with problems\n", checked, checked == 1 ? "" : "s",
                   bad);
        return bad == 0 ? SWF_EXIT_OK : SWF_EXIT_NO;
    }
    if (strcmp(action, "rebuild-projections") != 0) {
        const char *actions[] = {"rebuild-projections", "check"};
        const char *close = swf_cli_args_closest(action, actions, 2);
        return swf_cli_args_usage(&a, "unknown action '%s'%s%s%s", action,
                                  close ? " (did you mean " : "", close ? close : "",
                                  close ? "?)" : "");
    }
    if (all || swf_cli_args_has(&a, "ID") || swf_cli_args_has(&a, "--heads") ||
        swf_cli_args_has(&a, "--heads-from"))
        return swf_cli_args_usage(&a, "rebuild-projections takes no arguments");
    swf_history_store_t *s;
    swf_error_t *err = store_open(&s);
    size_t executions = 0, timers = 0;
    if (err == NULL) {
        err = swf_history_pg_projections_rebuild(s, &executions, &timers);
        swf_history_store_free(s);
    }
    if (err != NULL)
        return swf_cli_fail("admin", err);
    printf("rebuilt executions (%zu rows) and timers (%zu rows) from the events; outbox kept\n",
           executions, timers);
    return SWF_EXIT_OK;
}
