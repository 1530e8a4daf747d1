/*
 * exec_children.c - Parallel and Map: states that run frames of their own.
 *
 * A Parallel state starts one child frame per branch, all at once, each
 * with the same input. A Map state starts one child frame per item, at most
 * MaxConcurrency at a time, in item order; a finished iteration's output
 * moves to the Map's results and its frame goes away, so memory follows
 * the items in flight. ItemBatcher groups the items into batches first.
 *
 * A child's end wakes its parent (swf_asl__child_done). The parent fails
 * with the first child error (or States.ExceedToleratedFailureThreshold
 * once more iterations failed than it tolerates), stopping its other
 * children at once, before any of them starts more work; otherwise, when
 * all are done, the results in order are the state's result.
 *
 * The fields are read through exec_io.c, in either query language.
 */
#include <assert.h>

#include "decider/asl/exec_internal.h"
#include "decider/asl/reader.h"
#include "decider/asl/writer.h"
#include "protocol/json.h"
#include "protocol/limits.h"

/* "Name[i]" under the parent's path: a child frame's position. */
static char *child_path(frame_t *f, size_t i)
{
    return xprintf("%s%s%s[%zu]", f->path, *f->path ? "/" : "", f->name, i);
}

/* Abandons the children still running. */
static void children_abandon(swf_asl_exec_t *ex, frame_t *f)
{
    for (size_t i = 0; i < f->nchildren; i++) {
        if (f->children[i] != NULL) {
            swf_asl__frame_abandon(ex, f->children[i]);
            f->children[i] = NULL;
        }
    }
}

step_t swf_asl__parallel_enter(swf_asl_exec_t *ex, frame_t *f)
{
    swf_asl_io_t io;
    json_object *eff = NULL, *params = NULL, *branches;
    swf_asl__io_open(&io, ex, f, NULL);
    /* Parameters (Arguments in JSONata) is what every branch gets. */
    swf_error_t *err = swf_asl__io_input(&io, &eff);
    if (err == NULL)
        err = swf_asl__io_arguments(&io, eff, &params);
    json_object_put(eff);
    swf_asl__io_close(&io);
    if (err != NULL)
        return swf_asl__state_fail_with(ex, f, err);
    json_object_put(f->effective);
    f->effective = params;
    swf_json_get(f->state, "Branches", &branches);
    swf_asl__frame_clear_children(f);
    size_t n = json_object_array_length(branches);
    f->nchildren = n;
    f->children = xcalloc(n, sizeof(frame_t *));
    f->results = xcalloc(n, sizeof(json_object *));
    f->phase = PH_CHILDREN;
    f->max_running = 0;
    f->tolerance = false;
    for (size_t i = 0; i < n; i++) {
        if (swf_asl__redrive_memo_take(f, i, &f->results[i])) {
            f->started++; /* a redrive keeps what the branch returned */
            f->finished++;
            continue;
        }
        frame_t *c = swf_asl__frame_new(ex, f, i, child_path(f, i),
                                        json_object_array_get_idx(branches, i), params);
        c->entered_ms = ex->now_ms;
        f->children[i] = c;
        f->started++;
        f->running++;
        swf_asl__enqueue(ex, c);
    }
    return f->finished == n ? STEP_CONTINUE : STEP_BLOCKED;
}

static swf_error_t *map_start_child(swf_asl_exec_t *ex, frame_t *f)
{
    size_t i = f->started;
    if (swf_asl__redrive_memo_take(f, i, &f->results[i])) {
        f->started++; /* a redrive keeps what the iteration returned */
        f->finished++;
        return NULL;
    }
    json_object *item = json_object_array_get_idx(f->items, i), *input = NULL;
    json_object *processor;
    if (!swf_json_get(f->state, "ItemProcessor", &processor))
        swf_json_get(f->state, "Iterator", &processor);
    if (f->batched) {
        input = swf_json_ref(item);
    } else {
        swf_error_t *err = swf_asl__io_item_input(ex, f, i, item, &input);
        if (err)
            return err;
    }
    frame_t *c = swf_asl__frame_new(ex, f, i, child_path(f, i), processor, input);
    json_object_put(input);
    c->entered_ms = ex->now_ms;
    f->children[i] = c;
    f->started++;
    f->running++;
    swf_asl__enqueue(ex, c);
    return NULL;
}

/* ItemBatcher: replaces *items by batches {"Items": [...]} (with
 * "BatchInput" when given) of at most MaxItemsPerBatch items and
 * MaxInputBytesPerBatch bytes, each item after ItemSelector (AWS,
 * input-output-itembatcher.html). */
static swf_error_t *map_batch(swf_asl_io_t *io, json_object *batcher, json_object **items)
{
    swf_asl_exec_t *ex = io->ex;
    frame_t *f = io->f;
    double max_items = 0, max_bytes = 0;
    json_object *bi = NULL, *batches = NULL, *batch = NULL, *list = NULL;
    swf_error_t *err = swf_asl__io_batcher_limit(io, batcher, "MaxItemsPerBatch",
                                                 "MaxItemsPerBatchPath", &max_items);
    if (err == NULL)
        err = swf_asl__io_batcher_limit(io, batcher, "MaxInputBytesPerBatch",
                                        "MaxInputBytesPerBatchPath", &max_bytes);
    if (err == NULL)
        err = swf_asl__io_batch_input(io, batcher, &bi);
    if (err != NULL) {
        json_object_put(bi);
        return err;
    }
    size_t n = json_object_array_length(*items), in_batch = 0, bytes = 0;
    size_t base =
        strlen("{\"Items\":[]}") + (bi ? strlen(",\"BatchInput\":") + strlen(swf_json_str(bi)) : 0);
    batches = json_object_new_array();
    for (size_t i = 0; i < n; i++) {
        json_object *input = NULL;
        err = swf_asl__io_item_input(ex, f, i, json_object_array_get_idx(*items, i), &input);
        if (err != NULL)
            break;
        size_t size = strlen(swf_json_str(input)) + (in_batch > 0 ? 1 : 0);
        if (batch != NULL && ((max_items > 0 && (double)in_batch >= max_items) ||
                              (max_bytes > 0 && (double)(base + bytes + size) > max_bytes)))
            batch = NULL;
        if (batch == NULL) {
            batch = json_object_new_object();
            list = json_object_new_array();
            if (bi != NULL)
                swf_json_add(batch, "BatchInput", swf_json_ref(bi));
            swf_json_add(batch, "Items", list);
            json_object_array_add(batches, batch);
            in_batch = bytes = 0;
            size = strlen(swf_json_str(input));
        }
        json_object_array_add(list, input);
        in_batch++;
        bytes += size;
    }
    json_object_put(bi);
    if (err != NULL) {
        json_object_put(batches);
        return err;
    }
    json_object_put(*items);
    *items = batches;
    return NULL;
}

/* Whether a Map runs distributed: its ItemProcessor's (or the legacy
 * Iterator's) ProcessorConfig has Mode DISTRIBUTED. */
static bool map_distributed(json_object *state)
{
    json_object *proc = NULL, *cfg = NULL;
    if (!swf_json_get(state, "ItemProcessor", &proc))
        swf_json_get(state, "Iterator", &proc);
    const char *mode =
        swf_json_get(proc, "ProcessorConfig", &cfg) ? swf_json_get_string(cfg, "Mode") : NULL;
    return mode != NULL && strcmp(mode, "DISTRIBUTED") == 0;
}

/* Tells the map trace (exec.h) that the Map's iterations begin, or that
 * `update` changed their limits. */
static void map_trace(swf_asl_exec_t *ex, frame_t *f, size_t max, int64_t count, double pct,
                      json_object *update)
{
    if (ex->map_trace_fn == NULL || ex->sw)
        return;
    swf_asl_map_trace_t m = {.path = f->path,
                             .state = f->name,
                             .label = swf_json_get_string(f->state, "Label"),
                             .distributed = map_distributed(f->state),
                             .iterations = f->items,
                             .batched = f->batched,
                             .max_concurrency = max,
                             .tolerated_count = count,
                             .tolerated_pct = pct,
                             .time_ms = ex->now_ms,
                             .event_id = update ? f->began_id : ex->dt_started_id,
                             .update = update};
    ex->map_trace_fn(ex->map_trace_ctx, &m);
}

/* The frame running the Map `state` at `path`, or NULL: from the root
 * through each "Name[i]" of the path, the frame whose current state is
 * Name and its child i. */
static frame_t *map_frame_find(swf_asl_exec_t *ex, const char *path, const char *state)
{
    frame_t *f = ex->root;
    for (const char *p = path; f != NULL && *p != '\0';) {
        const char *open = strchr(p, '['), *close = open ? strchr(open, ']') : NULL;
        if (close == NULL || f->name == NULL || strlen(f->name) != (size_t)(open - p) ||
            strncmp(f->name, p, (size_t)(open - p)) != 0)
            return NULL;
        char *end;
        unsigned long i = strtoul(open + 1, &end, 10);
        if (end != close || f->children == NULL || i >= f->nchildren)
            return NULL;
        f = f->children[i];
        p = close[1] == '/' ? close + 2 : close + 1;
    }
    if (f == NULL || f->name == NULL || strcmp(f->name, state) != 0 || f->info->type != ST_MAP)
        return NULL;
    return f;
}

/* A member of an update: false when absent; *ok false when it is not a
 * number from 0 to hi (an integer unless fraction). */
static bool update_number(json_object *in, const char *key, double hi, bool fraction, double *out,
                          bool *ok)
{
    json_object *v = NULL;
    if (!swf_json_get(in, key, &v))
        return false;
    *out = swf_json_is_number(v) ? json_object_get_double(v) : -1;
    if (!(*out >= 0 && *out <= hi) || (!fraction && *out != (double)(int64_t)*out))
        *ok = false;
    return true;
}

void swf_asl__map_update(swf_asl_exec_t *ex, json_object *input)
{
    const char *path = swf_json_get_string(input, "path"),
               *state = swf_json_get_string(input, "state");
    json_object *began = NULL;
    swf_json_get(input, "beganEventId", &began);
    frame_t *f = path && state ? map_frame_find(ex, path, state) : NULL;
    if (f == NULL || f->phase != PH_CHILDREN || began == NULL ||
        json_object_get_int64(began) != f->began_id)
        return;
    double maxc = 0, count = 0, pct = 0;
    bool ok = true;
    bool has_max = update_number(input, "maxConcurrency", SWF_LIMIT_MAP_ITEMS, false, &maxc, &ok);
    bool has_count =
        update_number(input, "toleratedFailureCount", SWF_LIMIT_MAP_ITEMS, false, &count, &ok);
    bool has_pct = update_number(input, "toleratedFailurePercentage", 100, true, &pct, &ok);
    if (!ok)
        return;
    if (has_max)
        f->max_running = (size_t)maxc;
    if (has_count)
        f->tolerated_count = (size_t)count;
    if (has_pct)
        f->tolerated_pct = pct;
    f->tolerance = f->tolerance || has_count || has_pct;
    map_trace(ex, f, 0, 0, 0, input);
    swf_asl__enqueue(ex, f); /* more iterations may start now */
}

/* Enters a Map: with an ItemReader whose items are not read yet (read is
 * NULL), schedules the reader's task and waits for it; otherwise starts the
 * iterations over read (taken) or the items of the state's input. */
static step_t map_begin(swf_asl_exec_t *ex, frame_t *f, json_object *read)
{
    swf_asl_io_t io;
    json_object *eff = NULL, *items = NULL, *reader;
    json_object_put(f->written); /* a Retry runs the Map again, writer included */
    f->written = NULL;
    swf_asl__map_manifest_clear(f);
    swf_asl__io_open(&io, ex, f, NULL);
    swf_error_t *err = swf_asl__io_input(&io, &eff);
    if (err == NULL && read == NULL && swf_json_get(f->state, "ItemReader", &reader)) {
        json_object *args = NULL;
        err = swf_asl__io_reader_arguments(&io, eff, reader, &args);
        swf_asl__io_close(&io);
        json_object_put(eff);
        if (err != NULL) {
            json_object_put(args);
            return swf_asl__state_fail_with(ex, f, err);
        }
        return swf_asl__activity_schedule(ex, f, reader, args, NULL, 0, 0);
    }
    if (err == NULL && read != NULL)
        items = read;
    else if (err == NULL)
        err = swf_asl__io_items(&io, eff, &items);
    else
        json_object_put(read);
    if (err == NULL && !json_object_is_type(items, json_type_array))
        err = swf_error_states(ERR_RUNTIME, "the Map state '%s' needs an array of items, not %s",
                               f->name, swf_json_type_name(items));
    if (err == NULL && json_object_array_length(items) > SWF_LIMIT_MAP_ITEMS)
        err = swf_error_states(ERR_RUNTIME, "the Map state '%s' has %zu items, the limit is %d",
                               f->name, json_object_array_length(items), SWF_LIMIT_MAP_ITEMS);
    double maxc = 0, tcount = 0, tpct = 0;
    bool has_max = false, has_count = false, has_pct = false;
    if (err == NULL)
        err = swf_asl__io_map_number(&io, eff, "MaxConcurrency", "MaxConcurrencyPath", &maxc,
                                     &has_max);
    if (err == NULL)
        err = swf_asl__io_map_number(&io, eff, "ToleratedFailureCount", "ToleratedFailureCountPath",
                                     &tcount, &has_count);
    if (err == NULL)
        err = swf_asl__io_map_number(&io, eff, "ToleratedFailurePercentage",
                                     "ToleratedFailurePercentagePath", &tpct, &has_pct);
    if (err != NULL) {
        swf_asl__io_close(&io);
        json_object_put(eff);
        json_object_put(items);
        return swf_asl__state_fail_with(ex, f, err);
    }
    json_object_put(f->effective);
    f->effective = eff;
    swf_asl__frame_clear_children(f);
    json_object *batcher;
    f->batched = swf_json_get(f->state, "ItemBatcher", &batcher) &&
                 json_object_is_type(batcher, json_type_object);
    if (f->batched)
        err = map_batch(&io, batcher, &items);
    swf_asl__io_close(&io);
    if (err != NULL) {
        json_object_put(items);
        return swf_asl__state_fail_with(ex, f, err);
    }
    size_t n = json_object_array_length(items);
    f->items = items;
    f->nchildren = n;
    f->children = xcalloc(n, sizeof(frame_t *));
    f->results = xcalloc(n, sizeof(json_object *));
    f->failed_at = xcalloc(n, 1);
    f->max_running = has_max ? (size_t)maxc : 0;
    f->tolerance = has_count || has_pct;
    f->tolerated_count = has_count ? (size_t)tcount : (size_t)-1;
    f->tolerated_pct = has_pct ? tpct : 100.0;
    if (!has_count && has_pct)
        f->tolerated_count = (size_t)-1;
    if (has_count && !has_pct)
        f->tolerated_pct = 100.0;
    f->phase = PH_CHILDREN;
    f->began_id = ex->dt_started_id;
    /* A Map Run: numbered in the execution as the API numbers it (the
     * map trace's order, api/maprun.c), for the ResultWriter's MapRunArn. */
    f->run_number = map_distributed(f->state) ? ++ex->map_runs : 0;
    map_trace(ex, f, has_max ? (size_t)maxc : 0, has_count ? (int64_t)tcount : -1,
              has_pct ? tpct : -1, NULL);
    return STEP_CONTINUE; /* children start in the PH_CHILDREN step */
}

step_t swf_asl__map_enter(swf_asl_exec_t *ex, frame_t *f)
{
    return map_begin(ex, f, NULL);
}

void swf_asl__map_manifest_clear(frame_t *f)
{
    json_object_put(f->manifest_files);
    json_object_put(f->manifest_schema);
    json_object_put(f->manifest_items);
    f->manifest_files = f->manifest_schema = f->manifest_items = NULL;
    f->manifest_next = 0;
}

/* An S3 inventory (InputType MANIFEST): the reader's first answer is the
 * manifest, each next one a data file's content; one task per file, on the
 * reader's task list, one at a time, until the files or MaxItems run out. */
static step_t map_inventory_read(swf_asl_exec_t *ex, frame_t *f, json_object *reader,
                                 json_object *result, size_t limit)
{
    swf_error_t *err;
    if (f->manifest_files == NULL) {
        err = swf_asl_reader_manifest(result, &f->manifest_files, &f->manifest_schema);
        f->manifest_items = json_object_new_array();
    } else {
        err = swf_asl_reader_inventory_rows(f->manifest_schema, result, limit, f->manifest_items);
    }
    if (err != NULL) {
        swf_asl__map_manifest_clear(f);
        return swf_asl__state_fail_with(ex, f, err);
    }
    if (f->manifest_next < json_object_array_length(f->manifest_files) &&
        json_object_array_length(f->manifest_items) < limit) {
        json_object *in = json_object_array_get_idx(f->manifest_files, f->manifest_next++);
        return swf_asl__activity_schedule(ex, f, reader, json_object_get(in), NULL, 0, 0);
    }
    json_object *items = json_object_get(f->manifest_items);
    swf_asl__map_manifest_clear(f);
    return map_begin(ex, f, items);
}

step_t swf_asl__map_items_read(swf_asl_exec_t *ex, frame_t *f, json_object *result)
{
    json_object *reader = NULL, *items = NULL, *eff = NULL;
    swf_json_get(f->state, "ItemReader", &reader);
    /* One past the limit, so that the Map's own check names it. */
    size_t limit = SWF_LIMIT_MAP_ITEMS + 1;
    swf_asl_io_t io;
    swf_asl__io_open(&io, ex, f, NULL);
    swf_error_t *err = swf_asl__io_input(&io, &eff);
    if (err == NULL)
        err = swf_asl__io_reader_max_items(&io, eff, reader, &limit);
    swf_asl__io_close(&io);
    json_object_put(eff);
    if (err == NULL && swf_asl_reader_is_manifest(reader))
        return map_inventory_read(ex, f, reader, result, limit);
    if (err == NULL)
        err = swf_asl_reader_items(reader, result, limit, &items);
    if (err != NULL)
        return swf_asl__state_fail_with(ex, f, err);
    return map_begin(ex, f, items);
}

/* The Map's iterations are done (results): with a ResultWriter, transforms
 * them as its WriterConfig says and, when it has a task, schedules it with
 * them (the Map's output waits in f->written); else the Map's result. */
static step_t map_results(swf_asl_exec_t *ex, frame_t *f, json_object *arr)
{
    json_object *writer = NULL;
    if (!swf_json_get(f->state, "ResultWriter", &writer) ||
        !json_object_is_type(writer, json_type_object)) {
        swf_asl__frame_clear_children(f);
        return swf_asl__state_result(ex, f, arr);
    }
    json_object *results =
        swf_asl_writer_results(writer, f->results, f->items, f->failed_at, f->nchildren);
    if (!swf_asl_writer_has_task(writer)) {
        swf_asl__frame_clear_children(f);
        step_t s = swf_asl__state_result(ex, f, results);
        json_object_put(results);
        return s;
    }
    json_object *args = NULL, *input = NULL, *output = NULL;
    swf_asl_io_t io;
    swf_asl__io_open(&io, ex, f, NULL);
    swf_error_t *err = swf_asl__io_reader_arguments(&io, f->effective, writer, &args);
    swf_asl__io_close(&io);
    if (err == NULL) {
        /* The run's id: the execution's and the run's number in it, as the
         * Step Functions API names the run (api/maprun.c); an inline Map's,
         * which is no Map Run, the writer task's activity id. The same on
         * every replay, unique in the bucket's prefix. */
        const char *label = swf_json_get_string(f->state, "Label");
        char *run_id = xprintf("%s-%lld", ex->execution_id,
                               (long long)(f->run_number > 0 ? f->run_number : ex->last_seq + 1));
        char *arn = xprintf("arn:aws:states:local:000000000000:mapRun:%s/%s:%s", ex->machine_name,
                            label ? label : f->name, run_id);
        err = swf_asl_writer_task(writer, args, run_id, arn, results, &input, &output);
        free(run_id);
        free(arn);
    }
    json_object_put(args);
    json_object_put(results);
    swf_asl__frame_clear_children(f);
    if (err != NULL)
        return swf_asl__state_fail_with(ex, f, err);
    f->written = output;
    return swf_asl__activity_schedule(ex, f, writer, input, NULL, 0, 0);
}

step_t swf_asl__map_written(swf_asl_exec_t *ex, frame_t *f, bool ok, const char *error,
                            const char *cause)
{
    json_object *output = f->written;
    f->written = NULL;
    step_t s;
    if (ok)
        s = swf_asl__state_result(ex, f, output);
    else
        s = swf_asl__state_fail_with(ex, f,
                                     swf_error_states(SWF_ASL_ERR_WRITER,
                                                      "the ResultWriter's task failed: %s: %s",
                                                      error ? error : "", cause ? cause : ""));
    json_object_put(output);
    return s;
}

static bool tolerated(frame_t *f)
{
    if (!f->tolerance)
        return false;
    if (f->tolerated_count != (size_t)-1 && f->failed > f->tolerated_count)
        return false;
    if (f->nchildren > 0 && (double)f->failed * 100.0 / (double)f->nchildren > f->tolerated_pct)
        return false;
    return true;
}

step_t swf_asl__children_step(swf_asl_exec_t *ex, frame_t *f)
{
    if (f->child_failed) {
        children_abandon(ex, f);
        swf_asl__redrive_memo_save(f);
        char *error = f->child_error, *cause = f->child_cause;
        f->child_error = f->child_cause = NULL;
        swf_asl__frame_clear_children(f);
        step_t s = swf_asl__state_error(ex, f, error, cause);
        free(error);
        free(cause);
        return s;
    }
    if (f->info->type == ST_MAP) {
        while (f->started < f->nchildren && (f->max_running == 0 || f->running < f->max_running)) {
            swf_error_t *err = map_start_child(ex, f);
            if (err != NULL) {
                children_abandon(ex, f);
                swf_asl__frame_clear_children(f);
                return swf_asl__state_fail_with(ex, f, err);
            }
        }
    }
    if (f->finished < f->nchildren)
        return STEP_BLOCKED;
    json_object *arr = json_object_new_array_ext((int)f->nchildren);
    for (size_t i = 0; i < f->nchildren; i++)
        json_object_array_add(arr, swf_json_ref(f->results[i]));
    step_t s;
    if (f->info->type == ST_MAP && !swf_asl__sw_is_route(ex, f)) {
        s = map_results(ex, f, arr); /* clears the children */
    } else {
        swf_asl__frame_clear_children(f);
        s = swf_asl__sw_is_route(ex, f) ? swf_asl__sw_route(ex, f, arr)
                                        : swf_asl__state_result(ex, f, arr);
    }
    json_object_put(arr);
    return s;
}

void swf_asl__child_done(swf_asl_exec_t *ex, frame_t *c)
{
    frame_t *p = c->parent;
    assert(p != NULL && p->phase == PH_CHILDREN && p->children[c->index] == c);
    p->children[c->index] = NULL;
    p->finished++;
    p->running--;
    if (c->ok) {
        p->results[c->index] = c->output;
        c->output = NULL;
        swf_asl__redrive_child_ok(p, c->index);
    } else {
        p->failed++;
        if (p->failed_at != NULL)
            p->failed_at[c->index] = 1;
        p->results[c->index] = swf_asl__error_object(c->error, c->cause);
        if (!p->child_failed && !tolerated(p)) {
            /* Stop the siblings now, before any of them starts more work:
             * AWS starts no further iteration once one has failed. */
            p->child_failed = true;
            children_abandon(ex, p);
            if (p->tolerance) {
                p->child_error = swf_strdup(ERR_TOLERATED);
                p->child_cause = xprintf("the Map state '%s' failed because %zu of its %zu "
                                         "iterations failed, more than it tolerates",
                                         p->name, p->failed, p->nchildren);
            } else {
                p->child_error = swf_strdup(c->error);
                p->child_cause = swf_strdup(c->cause);
            }
        }
    }
    swf_asl__frame_bury(ex, c);
    swf_asl__enqueue(ex, p);
}
