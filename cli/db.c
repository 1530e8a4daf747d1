/*
 * db.c - the commands over the PostgreSQL history: db migrate, register,
 * start, describe, list, history, export, import, admin rebuild-projections,
 * admin check (the invariants of decider/check.h, for one execution or all).
 *
 * Each command is a thin shell over history/pg.h: parse arguments, open the
 * store (SWF_DATABASE_URL, a libpq conninfo or URI, or libpq's PG*
 * variables), call one library function, print. Output is for a person by
 * default and JSON with --json; `history --json` and `export` write the
 * exported event form, one event per line, exactly as `swf run --local
 * --history` does, so `import` reads either.
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
#include "decider/check.h"
#include "history/pg.h"
#include "protocol/json.h"
#include "protocol/limits.h"
#include "protocol/time.h"

static int fail(const char *cmd, swf_error_t *err)
{
    fprintf(stderr, "swf %s: %s\n", cmd, swf_error_message(err));
    if (swf_error_cause(err) != NULL)
        fprintf(stderr, "  %s\n", swf_error_cause(err));
    int code;
    switch (swf_error_code(err)) {
    case SWF_E_INPUT:
    case SWF_E_LIMIT:
        code = SWF_EXIT_USAGE;
        break;
    case SWF_E_NOTFOUND:
    case SWF_E_CONFLICT:
        code = SWF_EXIT_NO;
        break;
    default:
        code = SWF_EXIT_ERROR;
    }
    swf_error_free(err);
    return code;
}

static int usage(const char *text)
{
    fprintf(stderr, "usage: swf %s\n", text);
    return SWF_EXIT_USAGE;
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

int swf_cli_db(int argc, char **argv)
{
    if (argc != 2 || strcmp(argv[1], "migrate") != 0)
        return usage("db migrate");
    swf_history_store_t *s;
    swf_error_t *err = swf_history_pg_connect(swf_history_pg_conninfo_env(), &s);
    if (err != NULL)
        return fail("db", err);
    int from, to;
    err = swf_history_pg_migrate(s, 0, &from, &to);
    swf_history_store_free(s);
    if (err != NULL)
        return fail("db", err);
    if (from == to)
        printf("schema at version %d, up to date\n", to);
    else
        printf("schema migrated from version %d to %d\n", from, to);
    return SWF_EXIT_OK;
}

/* ---- register ---------------------------------------------------------------- */

int swf_cli_register(int argc, char **argv)
{
    if (argc != 3)
        return usage("register NAME FILE");
    json_object *def;
    swf_error_t *err = swf_json_read_file(argv[2], SWF_LIMIT_DEFINITION_BYTES, &def);
    if (err != NULL)
        return fail("register", err);
    swf_asl_problems_t problems = {0};
    if (swf_asl_validate(def, &problems) > 0) {
        fprintf(stderr, "%s: invalid definition, not registered:\n", argv[2]);
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
        err = swf_history_pg_state_machine_register(s, argv[1], def, &version);
        swf_history_store_free(s);
    }
    json_object_put(def);
    if (err != NULL)
        return fail("register", err);
    printf("registered %s version %d\n", argv[1], version);
    return SWF_EXIT_OK;
}

/* ---- start ------------------------------------------------------------------- */

/* A random (version 4) UUID: execution ids need only be unique. */
static swf_error_t *uuid_new(char out[37])
{
    unsigned char b[16];
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return swf_error_new(SWF_E_IO, NULL, "/dev/urandom: %s", strerror(errno));
    ssize_t n = read(fd, b, sizeof(b));
    close(fd);
    if (n != (ssize_t)sizeof(b))
        return swf_error_new(SWF_E_IO, NULL, "/dev/urandom: short read");
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
             b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
    return NULL;
}

int swf_cli_start(int argc, char **argv)
{
    static const char *const use =
        "start NAME [--input JSON|@FILE] [--workflow-id ID] [--version N] [--wait]";
    const char *name = NULL, *input_arg = NULL, *workflow_id = NULL;
    int version = 0;
    bool wait = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--wait") == 0)
            wait = true;
        else if (strcmp(argv[i], "--input") == 0 && i + 1 < argc)
            input_arg = argv[++i];
        else if (strcmp(argv[i], "--workflow-id") == 0 && i + 1 < argc)
            workflow_id = argv[++i];
        else if (strcmp(argv[i], "--version") == 0 && i + 1 < argc) {
            /* A version is a number from 1 (what register printed); anything
             * else would silently start the latest one. */
            const char *v = argv[++i];
            char *end;
            errno = 0;
            long n = strtol(v, &end, 10);
            if (end == v || *end != '\0' || errno != 0 || n < 1 || n > INT_MAX) {
                fprintf(stderr, "swf start: --version \"%s\": a version is a number from 1\n", v);
                return usage(use);
            }
            version = (int)n;
        } else if (argv[i][0] != '-' && name == NULL)
            name = argv[i];
        else
            return usage(use);
    }
    if (name == NULL)
        return usage(use);
    json_object *input = NULL;
    swf_error_t *err = NULL;
    if (input_arg != NULL && input_arg[0] == '@')
        err = swf_json_read_file(input_arg + 1, SWF_LIMIT_JSON_BYTES, &input);
    else if (input_arg != NULL)
        err = swf_json_parse(input_arg, strlen(input_arg), SWF_LIMIT_JSON_BYTES, &input);
    else
        input = json_object_new_object();
    if (err != NULL) {
        swf_error_prefix(err, "--input");
        return fail("start", err);
    }
    char id[37];
    err = uuid_new(id);
    if (err != NULL) {
        json_object_put(input);
        return fail("start", err);
    }
    swf_history_store_t *s;
    err = store_open(&s);
    char *running = NULL;
    if (err == NULL) {
        swf_history_start_t req = {id, workflow_id, name, version, input, swf_time_now_ms(), NULL};
        err = swf_history_pg_execution_start(s, &req, &running);
        swf_history_store_free(s);
    }
    json_object_put(input);
    if (err != NULL) {
        if (running != NULL)
            printf("%s\n", running);
        free(running);
        return fail("start", err);
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

static bool has_flag(int argc, char **argv, const char *flag)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], flag) == 0)
            return true;
    }
    return false;
}

int swf_cli_describe(int argc, char **argv)
{
    bool json = has_flag(argc, argv, "--json");
    if (argc != (json ? 3 : 2))
        return usage("describe ID [--json]");
    const char *id = strcmp(argv[1], "--json") == 0 ? argv[2] : argv[1];
    swf_history_store_t *s;
    swf_error_t *err = store_open(&s);
    swf_history_execution_t ex;
    if (err == NULL) {
        err = swf_history_pg_execution_describe(s, id, &ex);
        swf_history_store_free(s);
    }
    if (err != NULL)
        return fail("describe", err);
    if (json) {
        json_object *o = execution_json(&ex);
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
    }
    swf_history_execution_free(&ex);
    return SWF_EXIT_OK;
}

int swf_cli_list(int argc, char **argv)
{
    static const char *const use =
        "list [--status open|closed|succeeded|failed|timed_out|canceled|terminated]"
        " [--state-machine NAME] [--limit N] [--json]";
    swf_history_filter_t f = {0};
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--status") == 0 && i + 1 < argc)
            f.status = argv[++i];
        else if (strcmp(argv[i], "--state-machine") == 0 && i + 1 < argc)
            f.state_machine = argv[++i];
        else if (strcmp(argv[i], "--limit") == 0 && i + 1 < argc) {
            char *end;
            long n = strtol(argv[++i], &end, 10);
            if (*end != '\0' || n < 1 || n > 100000)
                return usage(use);
            f.limit = (size_t)n;
        } else if (strcmp(argv[i], "--json") == 0)
            json = true;
        else
            return usage(use);
    }
    swf_history_store_t *s;
    swf_error_t *err = store_open(&s);
    swf_history_execution_t *items = NULL;
    size_t n = 0;
    if (err == NULL) {
        err = swf_history_pg_executions_list(s, &f, &items, &n);
        swf_history_store_free(s);
    }
    if (err != NULL)
        return fail("list", err);
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

static void event_print(FILE *out, const swf_event_t *ev, bool json)
{
    if (json) {
        json_object *o = swf_event_to_json(ev);
        fprintf(out, "%s\n", swf_json_str(o));
        json_object_put(o);
        return;
    }
    char t[SWF_TIME_BUF];
    swf_time_format_ms(ev->time_ms, t);
    fprintf(out, "%6lld  %s  %-34s %s\n", (long long)ev->id, t, swf_event_type_name(ev->type),
            swf_json_str(ev->attrs));
}

int swf_cli_history(int argc, char **argv)
{
    /* `history ID --states` is the timeline derived by replay (cli/timeline.c). */
    if (has_flag(argc, argv, "--states"))
        return swf_cli_timeline(argc, argv);
    const char *id = NULL;
    bool json = false, reverse = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            json = true;
        else if (strcmp(argv[i], "--reverse") == 0)
            reverse = true;
        else if (argv[i][0] != '-' && id == NULL)
            id = argv[i];
        else
            return usage("history ID [--json] [--reverse]");
    }
    if (id == NULL)
        return usage("history ID [--json] [--reverse]");
    swf_history_store_t *s;
    swf_error_t *err = store_open(&s);
    swf_event_list_t events = {0};
    if (err == NULL) {
        err = reverse ? swf_history_pg_load_reverse(s, id, 0, 0, &events)
                      : swf_history_load(s, id, 0, 0, &events);
        swf_history_store_free(s);
    }
    if (err != NULL) {
        swf_event_list_free(&events);
        return fail("history", err);
    }
    for (size_t i = 0; i < events.count; i++)
        event_print(stdout, &events.items[i], json);
    swf_event_list_free(&events);
    return SWF_EXIT_OK;
}

int swf_cli_export(int argc, char **argv)
{
    if (argc != 2 && argc != 3)
        return usage("export ID [FILE]");
    swf_history_store_t *s;
    swf_error_t *err = store_open(&s);
    swf_event_list_t events = {0};
    if (err == NULL) {
        err = swf_history_load(s, argv[1], 0, 0, &events);
        swf_history_store_free(s);
    }
    if (err != NULL) {
        swf_event_list_free(&events);
        return fail("export", err);
    }
    FILE *out = argc == 3 && strcmp(argv[2], "-") != 0 ? fopen(argv[2], "w") : stdout;
    if (out == NULL) {
        swf_event_list_free(&events);
        return fail("export", swf_error_new(SWF_E_IO, NULL, "%s: %s", argv[2], strerror(errno)));
    }
    for (size_t i = 0; i < events.count; i++)
        event_print(out, &events.items[i], true);
    swf_event_list_free(&events);
    bool bad = ferror(out) != 0;
    if (out != stdout)
        bad |= fclose(out) != 0;
    else
        bad |= fflush(out) != 0;
    if (bad)
        return fail("export", swf_error_new(SWF_E_IO, NULL, "%s: write failed",
                                            argc == 3 ? argv[2] : "stdout"));
    return SWF_EXIT_OK;
}

/*
 * A history is imported only when the engine could have written it (ids,
 * start and close, decision tasks, activities, timers: decider/check.h),
 * since deciders go on with an open one and swf-history acts on its timers
 * and tasks. It is not replayed: one recorded under another deployment's
 * token secret, or by an older interpreter, is still worth importing to
 * look at. --force imports it anyway, its problems printed as warnings.
 */
int swf_cli_import(int argc, char **argv)
{
    bool force = argc == 3 && strcmp(argv[2], "--force") == 0;
    if (argc != 2 && !force)
        return usage("import FILE [--force]");
    swf_event_list_t events = {0};
    swf_error_t *err = swf_event_list_read_file(argv[1], &events);
    swf_decider_check_problems_t problems = {0};
    if (err == NULL)
        err = swf_decider_check_structure(&events, &problems);
    if (err == NULL && problems.count > 0) {
        fprintf(stderr, "swf import: %s: %s a history the engine could have written:\n", argv[1],
                force ? "warning: importing anyway (--force) what is not" : "not");
        for (size_t i = 0; i < problems.count; i++)
            fprintf(stderr, "  %s\n", problems.items[i]);
        if (!force)
            err = swf_error_new(SWF_E_INPUT, NULL,
                                "%zu problem%s; nothing imported (--force imports it anyway)",
                                problems.count, problems.count == 1 ? "" : "s");
    }
    swf_decider_check_problems_free(&problems);
    swf_history_store_t *s = NULL;
    char *id = NULL;
    if (err == NULL)
        err = store_open(&s);
    if (err == NULL)
        err = swf_history_pg_import(s, &events, &id);
    swf_history_store_free(s);
    size_t count = events.count;
    swf_event_list_free(&events);
    if (err != NULL)
        return fail("import", err);
    printf("imported %s (%zu events)\n", id, count);
    free(id);
    return SWF_EXIT_OK;
}

/* ---- admin ------------------------------------------------------------------- */

/* Checks one execution; prints its problems. *bad counts executions with
 * problems (an unknown id is one). Returns an operating error only. */
static swf_error_t *check_one(swf_history_store_t *s, const char *id, size_t *bad)
{
    swf_decider_check_problems_t problems = {0};
    swf_error_t *err = swf_decider_check_execution(s, id, &problems);
    if (err != NULL && swf_error_code(err) == SWF_E_NOTFOUND) {
        printf("%s: no such execution\n", id);
        (*bad)++;
        swf_error_free(err);
        return NULL;
    }
    if (err == NULL && problems.count > 0) {
        for (size_t i = 0; i < problems.count; i++)
            printf("%s: %s\n", id, problems.items[i]);
        (*bad)++;
    }
    swf_decider_check_problems_free(&problems);
    return err;
}

/* Rows of the executions projection per page of --all. */
#define CHECK_PAGE 1000

/* Every execution, newest first, a page at a time. Pages end at a start
 * time; the next one starts at that millisecond again (it may hold more
 * executions than the page took) and skips the ids already checked there. */
static swf_error_t *check_all(swf_history_store_t *s, size_t *checked, size_t *bad)
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
            err = check_one(s, id, bad);
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

int swf_cli_admin(int argc, char **argv)
{
    static const char usage_text[] =
        "admin rebuild-projections | admin check (EXECUTION_ID... | --all)";
    if (argc >= 2 && strcmp(argv[1], "check") == 0) {
        bool all = argc == 3 && strcmp(argv[2], "--all") == 0;
        for (int i = 2; i < argc && !all; i++) {
            if (argv[i][0] == '-')
                return usage(usage_text);
        }
        if (argc < 3)
            return usage(usage_text);
        swf_history_store_t *s;
        swf_error_t *err = store_open(&s);
        size_t checked = 0, bad = 0;
        if (err == NULL && all)
            err = check_all(s, &checked, &bad);
        for (int i = 2; err == NULL && !all && i < argc; i++, checked++)
            err = check_one(s, argv[i], &bad);
        swf_history_store_free(s);
        if (err != NULL)
            return fail("admin check", err);
        if (bad == 0)
            printf("checked %zu execution%s: every history holds its invariants\n", checked,
                   checked == 1 ? "" : "s");
        else
            printf("checked %zu execution%s: %zu with problems\n", checked, checked == 1 ? "" : "s",
                   bad);
        return bad == 0 ? SWF_EXIT_OK : SWF_EXIT_NO;
    }
    if (argc != 2 || strcmp(argv[1], "rebuild-projections") != 0)
        return usage(usage_text);
    swf_history_store_t *s;
    swf_error_t *err = store_open(&s);
    size_t executions = 0, timers = 0;
    if (err == NULL) {
        err = swf_history_pg_projections_rebuild(s, &executions, &timers);
        swf_history_store_free(s);
    }
    if (err != NULL)
        return fail("admin", err);
    printf("rebuilt executions (%zu rows) and timers (%zu rows) from the events; outbox kept\n",
           executions, timers);
    return SWF_EXIT_OK;
}
