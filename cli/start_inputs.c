/*
 * start_inputs.c - `swf start NAME --inputs FILE`: many executions started
 * by one process, one per line of a JSON Lines file.
 *
 * A line is a JSON object {"input": JSON, "workflowId": "..."}, both
 * members optional (input {} and the execution id, as `swf start` without
 * --input and --workflow-id); a line of white space only is skipped, as
 * `swf import` skips one. Standard output gets one line per line of the
 * file, in order: the new execution's id, or, when the line's workflow id
 * is already open, that execution's id (as `swf start` prints it), or "-"
 * when the line started nothing for another reason (said on stderr).
 *
 * All or nothing for the file: every line is read and checked (JSON that
 * swf accepts anywhere, the members, the workflow id, the input's size)
 * before anything starts, and the first bad line is named with its line
 * number, nothing started. The state machine is looked up once, before
 * any start. Then the lines are started in batches of START_BATCH (or
 * fewer, to keep a batch within START_BATCH_BYTES): one
 * append statement and one transaction per batch
 * (swf_history_pg_executions_start), and the batch's `decide` messages on
 * one producer for the whole command, flushed once per batch
 * (swf_cli_decide_post_many). A batch never holds two lines of one
 * workflow id, so the earlier line starts and the later one is refused as
 * `swf start` would refuse it. A batch the database fails as a whole
 * ends the command: the lines before it were started (their ids printed),
 * that batch and the rest were not, and stderr says so by line numbers.
 *
 * Limits: at most INPUTS_LINES lines that are not blank, the file at most
 * SWF_LIMIT_JSON_BYTES (64 MiB), a line at most the start input limit
 * (1 MiB, SWF_LIMIT_START_INPUT_BYTES) plus INPUTS_LINE_SLACK for its
 * workflow id and white space, and its input, serialised, within the start
 * input limit.
 *
 * Exit statuses (cli.h): 0 every line started; 1 a bad line or a missing
 * state machine (nothing started), or a line whose workflow id was open
 * (the others started); 3 the file could not be read, or the database
 * failed (what was started is said).
 */
#include "cli/cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "history/pg.h"
#include "protocol/hash.h"
#include "protocol/json.h"
#include "protocol/limits.h"
#include "protocol/time.h"

/* Lines of one file (AWS StartExecution has no batch; a Map's items are
 * at most SWF_LIMIT_MAP_ITEMS). */
#define INPUTS_LINES 100000
/* Bytes a line may hold beyond the start input limit. */
#define INPUTS_LINE_SLACK (64u * 1024u)
/* Starts per transaction and per wait for Kafka's delivery reports, and
 * the bytes of their lines and definitions at most (each start records its
 * whole definition, up to 1 MiB; one statement's jsonb stays far below
 * PostgreSQL's 255 MiB, and the command's memory bounded). */
#define START_BATCH 500
#define START_BATCH_BYTES (32u * 1024u * 1024u)

/* The file's text and where its lines that are not blank are. */
typedef struct inputs {
    const char *name; /* the path, or "stdin" */
    char *text;
    size_t len;
    size_t n;      /* lines that are not blank */
    size_t *at;    /* each one's offset in text */
    size_t *bytes; /* its length, without the newline */
    size_t *no;    /* its line number, from 1 */
} inputs_t;

static void inputs_free(inputs_t *in)
{
    free(in->text);
    free(in->at);
    free(in->bytes);
    free(in->no);
}

static bool blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
            return false;
    }
    return true;
}

/* Reads the whole file (SWF_E_IO when it cannot be read) and finds its
 * lines; a file or a line over its limit, or too many lines, is
 * SWF_E_LIMIT naming where. */
static swf_error_t *inputs_read(const char *path, inputs_t *in)
{
    bool std = strcmp(path, "-") == 0;
    in->name = std ? "stdin" : path;
    FILE *f = std ? stdin : fopen(path, "rb");
    if (f == NULL)
        return swf_error_new(SWF_E_IO, NULL, "%s: %s", path, strerror(errno));
    size_t cap = 0;
    swf_error_t *err = NULL;
    for (;;) {
        if (in->len == cap) {
            if (cap > SWF_LIMIT_JSON_BYTES) {
                err = swf_error_new(SWF_E_LIMIT, NULL,
                                    "%s: larger than %u bytes; split it (swf start --inputs)",
                                    in->name, SWF_LIMIT_JSON_BYTES);
                break;
            }
            cap = cap == 0 ? 65536 : cap * 2;
            in->text = realloc(in->text, cap + 1);
            if (in->text == NULL)
                abort();
        }
        size_t got = fread(in->text + in->len, 1, cap - in->len, f);
        in->len += got;
        if (got == 0)
            break;
    }
    if (err == NULL && ferror(f))
        err = swf_error_new(SWF_E_IO, NULL, "%s: read failed", in->name);
    if (!std)
        fclose(f);
    if (err == NULL && in->len > SWF_LIMIT_JSON_BYTES)
        err = swf_error_new(SWF_E_LIMIT, NULL, "%s: larger than %u bytes; split it", in->name,
                            SWF_LIMIT_JSON_BYTES);
    if (err != NULL)
        return err;
    if (in->text == NULL)
        in->text = malloc(1);
    in->text[in->len] = '\0';
    size_t line_limit = swf_history_pg_start_input_limit() + INPUTS_LINE_SLACK;
    size_t cap_lines = 0, no = 0;
    for (size_t at = 0; at < in->len;) {
        const char *nl = memchr(in->text + at, '\n', in->len - at);
        size_t bytes = nl != NULL ? (size_t)(nl - (in->text + at)) : in->len - at;
        no++;
        if (bytes > line_limit)
            return swf_error_new(SWF_E_LIMIT, NULL,
                                 "%s:%zu: the line is %zu bytes, more than %zu (the start input "
                                 "limit, SWF_LIMIT_START_INPUT_BYTES, and %u for the rest)",
                                 in->name, no, bytes, line_limit, INPUTS_LINE_SLACK);
        if (!blank(in->text + at, bytes)) {
            if (in->n == INPUTS_LINES)
                return swf_error_new(SWF_E_LIMIT, NULL,
                                     "%s:%zu: more than %d lines; split the file", in->name, no,
                                     INPUTS_LINES);
            if (in->n == cap_lines) {
                cap_lines = cap_lines == 0 ? 1024 : cap_lines * 2;
                in->at = realloc(in->at, cap_lines * sizeof(*in->at));
                in->bytes = realloc(in->bytes, cap_lines * sizeof(*in->bytes));
                in->no = realloc(in->no, cap_lines * sizeof(*in->no));
                if (in->at == NULL || in->bytes == NULL || in->no == NULL)
                    abort();
            }
            in->at[in->n] = at;
            in->bytes[in->n] = bytes;
            in->no[in->n++] = no;
        }
        at += bytes + 1;
    }
    return NULL;
}

/* Line k's request: *obj the whole line (the caller's), *input and
 * *workflow_id borrowed from it (input {} when absent: *obj holds it then;
 * workflow_id NULL when absent). Errors name the line. */
static swf_error_t *line_parse(const inputs_t *in, size_t k, json_object **obj, json_object **input,
                               const char **workflow_id)
{
    *obj = NULL;
    *input = NULL;
    *workflow_id = NULL;
    json_object *v = NULL;
    swf_error_t *err = swf_json_parse(in->text + in->at[k], in->bytes[k], SWF_LIMIT_JSON_BYTES, &v);
    if (err == NULL && !json_object_is_type(v, json_type_object))
        err = swf_error_new(SWF_E_INPUT, NULL,
                            "a line is an object {\"input\": JSON, \"workflowId\": \"...\"} "
                            "(both optional), not %s",
                            swf_json_type_name(v));
    bool has_input = false;
    if (err == NULL) {
        json_object_object_foreach(v, key, val)
        {
            if (strcmp(key, "input") == 0) {
                *input = val;
                has_input = true;
            } else if (strcmp(key, "workflowId") == 0) {
                if (!json_object_is_type(val, json_type_string)) {
                    err = swf_error_new(SWF_E_INPUT, NULL, "workflowId is %s, not a string",
                                        swf_json_type_name(val));
                    break;
                }
                *workflow_id = json_object_get_string(val);
            } else {
                err = swf_error_new(SWF_E_INPUT, NULL,
                                    "unknown member \"%.64s\": a line is {\"input\": JSON, "
                                    "\"workflowId\": \"...\"}, both optional",
                                    key);
                break;
            }
        }
    }
    if (err == NULL && !has_input) {
        /* Absent: {}, as `swf start` without --input. */
        json_object *empty = json_object_new_object();
        json_object_object_add(v, "input", empty);
        *input = empty;
    }
    if (err != NULL) {
        json_object_put(v);
        *input = NULL;
        *workflow_id = NULL;
        swf_error_prefix(err, "%s:%zu", in->name, in->no[k]);
        return err;
    }
    *obj = v;
    return NULL;
}

/* Checks every line as it will be started; the first bad one is the error. */
static swf_error_t *inputs_check(const inputs_t *in, const char *name)
{
    for (size_t k = 0; k < in->n; k++) {
        json_object *obj, *input;
        const char *workflow_id;
        swf_error_t *err = line_parse(in, k, &obj, &input, &workflow_id);
        if (err != NULL)
            return err;
        /* Any id of the real one's length: only the others are checked. */
        swf_history_start_t st = {.execution_id = "00000000-0000-4000-8000-000000000000",
                                  .workflow_id = workflow_id,
                                  .state_machine = name,
                                  .input = input};
        err = swf_history_pg_start_check(&st);
        json_object_put(obj);
        if (err != NULL) {
            swf_error_prefix(err, "%s:%zu", in->name, in->no[k]);
            return err;
        }
    }
    return NULL;
}

/* What one batch holds (indices into the file's lines: [first, first + n)). */
typedef struct batch {
    swf_history_start_t starts[START_BATCH];
    json_object *lines[START_BATCH];
    char ids[START_BATCH][37];
    char *running[START_BATCH];
    swf_error_t *errors[START_BATCH];
    const char *posted[START_BATCH];
    size_t def_bytes; /* the definition's size, which each start records */
} batch_t;

/* How many lines from `first` go in one batch: at most START_BATCH, of at
 * most START_BATCH_BYTES with their definitions (one line at least), and
 * none whose workflow id an earlier line of the batch has. Reads the lines
 * into b (parsed by the check already, so they parse). */
static size_t batch_fill(const inputs_t *in, size_t first, const char *name, int version,
                         batch_t *b)
{
    size_t n = 0, bytes = 0;
    int64_t now = swf_time_now_ms();
    for (size_t k = first; k < in->n && n < START_BATCH; k++, n++) {
        size_t cost = in->bytes[k] + b->def_bytes;
        if (n > 0 && bytes + cost > START_BATCH_BYTES)
            break;
        bytes += cost;
        json_object *input;
        const char *wid;
        swf_error_t *err = line_parse(in, k, &b->lines[n], &input, &wid);
        if (err == NULL)
            err = swf_uuid_new(b->ids[n]);
        if (err != NULL) { /* checked already; a failing random source */
            fprintf(stderr, "swf start: %s\n", swf_error_message(err));
            swf_error_free(err);
            abort();
        }
        bool again = false;
        for (size_t j = 0; wid != NULL && j < n && !again; j++)
            again = b->starts[j].workflow_id != NULL && strcmp(b->starts[j].workflow_id, wid) == 0;
        if (again) {
            json_object_put(b->lines[n]);
            break;
        }
        b->starts[n] = (swf_history_start_t){.execution_id = b->ids[n],
                                             .workflow_id = wid,
                                             .state_machine = name,
                                             .version = version,
                                             .input = input,
                                             .time_ms = now};
    }
    return n;
}

/* Starts the lines from `first` (one batch); prints a line of output per
 * line; *done gets how many lines it took. Returns the exit status so far. */
static int batch_start(swf_history_store_t *s, const inputs_t *in, size_t first, const char *name,
                       int version, batch_t *b, swf_cli_decide_poster_t *poster, size_t *done)
{
    size_t n = batch_fill(in, first, name, version, b);
    *done = n;
    swf_error_t *err = swf_history_pg_executions_start(s, b->starts, n, b->running, b->errors);
    for (size_t i = 0; i < n; i++)
        json_object_put(b->lines[i]);
    if (err != NULL) {
        fflush(stdout);
        fprintf(stderr, "swf start: %s:%zu-%zu: %s\n", in->name, in->no[first],
                in->no[first + n - 1], swf_error_message(err));
        if (swf_error_cause(err) != NULL)
            fprintf(stderr, "  %s\n", swf_error_cause(err));
        if (first == 0)
            fprintf(stderr, "  nothing was started\n");
        else
            fprintf(stderr,
                    "  the lines before line %zu were started (their ids above); line %zu and "
                    "those after it were not\n",
                    in->no[first], in->no[first]);
        swf_error_free(err);
        *done = 0;
        return SWF_EXIT_ERROR;
    }
    int status = SWF_EXIT_OK;
    size_t started = 0;
    for (size_t i = 0; i < n; i++) {
        if (b->errors[i] == NULL) {
            printf("%s\n", b->ids[i]);
            b->posted[started++] = b->ids[i];
            continue;
        }
        printf("%s\n", b->running[i] != NULL ? b->running[i] : "-");
        fflush(stdout);
        fprintf(stderr, "swf start: %s:%zu: %s\n", in->name, in->no[first + i],
                swf_error_message(b->errors[i]));
        int code = swf_error_code(b->errors[i]);
        int line_status =
            code == SWF_E_CONFLICT || code == SWF_E_NOTFOUND ? SWF_EXIT_NO : SWF_EXIT_ERROR;
        status = line_status > status ? line_status : status;
        swf_error_free(b->errors[i]);
        free(b->running[i]);
    }
    fflush(stdout);
    /* Started whether or not the notice reaches Kafka (swf start says why
     * that is no failure of the command). */
    (void)swf_cli_decide_post_many(poster, b->posted, started);
    return status;
}

int swf_cli_start_inputs(const char *name, int version, const char *path)
{
    inputs_t in = {0};
    swf_error_t *err = inputs_read(path, &in);
    if (err == NULL)
        err = inputs_check(&in, name);
    if (err != NULL) {
        int status = swf_error_code(err) == SWF_E_IO ? SWF_EXIT_ERROR : SWF_EXIT_NO;
        inputs_free(&in);
        status = swf_cli_fail_status("start", err, status);
        fprintf(stderr, "  nothing was started\n");
        return status;
    }
    if (in.n == 0) {
        fprintf(stderr, "swf start: %s holds no lines; nothing was started\n", in.name);
        inputs_free(&in);
        return SWF_EXIT_OK;
    }
    swf_history_store_t *s = NULL;
    err = swf_history_pg_new(swf_history_pg_conninfo_env(), &s);
    json_object *def = NULL;
    size_t def_bytes = 0;
    if (err == NULL)
        err = swf_history_pg_state_machine_get(s, name, version, &def, NULL);
    if (err == NULL)
        def_bytes = strlen(swf_json_str(def));
    json_object_put(def);
    if (err != NULL) {
        swf_history_store_free(s);
        inputs_free(&in);
        int status = swf_cli_fail("start", err);
        fprintf(stderr, "  nothing was started\n");
        return status;
    }
    swf_cli_decide_poster_t *poster = swf_cli_decide_poster_new();
    batch_t *b = malloc(sizeof(*b));
    if (b == NULL)
        abort();
    b->def_bytes = def_bytes;
    int status = SWF_EXIT_OK;
    for (size_t first = 0; first < in.n;) {
        size_t done;
        int st = batch_start(s, &in, first, name, version, b, poster, &done);
        status = st > status ? st : status;
        if (done == 0)
            break;
        first += done;
    }
    free(b);
    swf_cli_decide_poster_free(poster);
    swf_history_store_free(s);
    inputs_free(&in);
    return status;
}
