/*
 * event.c - event types, the exported (SWF-shaped) JSON form, event lists.
 *
 * The table of event types is one X-macro in event.h, so names, attribute
 * keys and the enum can never disagree.
 */
#include "protocol/event.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/alloc.h"
#include "protocol/json.h"
#include "protocol/limits.h"
#include "protocol/time.h"

static const char *const type_names[SWF_EVENT_TYPE_COUNT] = {
#define SWF_X(id, name) [SWF_EVENT_##id] = #name,
    SWF_EVENT_TYPES(SWF_X)
#undef SWF_X
};

/* "workflowExecutionStartedEventAttributes" etc. Filled once, under
 * pthread_once: a lazy fill without it was a data race between decider
 * threads (a reader could see the first byte set and the rest not yet). */
static char attr_keys[SWF_EVENT_TYPE_COUNT][64];
static pthread_once_t attr_keys_once = PTHREAD_ONCE_INIT;

static void swf_event_attr_keys_fill(void)
{
    for (int t = 1; t < SWF_EVENT_TYPE_COUNT; t++)
        snprintf(attr_keys[t], sizeof(attr_keys[t]), "%c%sEventAttributes",
                 tolower((unsigned char)type_names[t][0]), type_names[t] + 1);
}

const char *swf_event_type_name(swf_event_type_t type)
{
    if (type <= SWF_EVENT_NONE || type >= SWF_EVENT_TYPE_COUNT)
        return NULL;
    return type_names[type];
}

swf_event_type_t swf_event_type_parse(const char *name)
{
    if (name == NULL)
        return SWF_EVENT_NONE;
    for (int t = 1; t < SWF_EVENT_TYPE_COUNT; t++) {
        if (strcmp(type_names[t], name) == 0)
            return (swf_event_type_t)t;
    }
    return SWF_EVENT_NONE;
}

const char *swf_event_attrs_key(swf_event_type_t type)
{
    const char *name = swf_event_type_name(type);
    if (name == NULL)
        return NULL;
    pthread_once(&attr_keys_once, swf_event_attr_keys_fill);
    return attr_keys[type];
}

bool swf_event_type_is_close(swf_event_type_t type)
{
    switch (type) {
    case SWF_EVENT_WORKFLOW_EXECUTION_COMPLETED:
    case SWF_EVENT_WORKFLOW_EXECUTION_FAILED:
    case SWF_EVENT_WORKFLOW_EXECUTION_TIMED_OUT:
    case SWF_EVENT_WORKFLOW_EXECUTION_CANCELED:
    case SWF_EVENT_WORKFLOW_EXECUTION_TERMINATED:
        return true;
    default:
        return false;
    }
}

bool swf_event_type_is_decision(swf_event_type_t type)
{
    switch (type) {
    case SWF_EVENT_ACTIVITY_TASK_SCHEDULED:
    case SWF_EVENT_ACTIVITY_TASK_CANCEL_REQUESTED:
    case SWF_EVENT_TIMER_STARTED:
    case SWF_EVENT_TIMER_CANCELED:
    case SWF_EVENT_MARKER_RECORDED:
    case SWF_EVENT_WORKFLOW_EXECUTION_COMPLETED:
    case SWF_EVENT_WORKFLOW_EXECUTION_FAILED:
    case SWF_EVENT_WORKFLOW_EXECUTION_CANCELED:
        return true;
    default:
        return false;
    }
}

json_object *swf_event_to_json(const swf_event_t *ev)
{
    char ts[SWF_TIME_BUF];
    swf_time_format_ms(ev->time_ms, ts);
    json_object *obj = json_object_new_object();
    json_object_object_add(obj, "eventId", json_object_new_int64(ev->id));
    json_object_object_add(obj, "eventType", json_object_new_string(swf_event_type_name(ev->type)));
    json_object_object_add(obj, "eventTimestamp", json_object_new_string(ts));
    json_object_object_add(obj, swf_event_attrs_key(ev->type), swf_json_ref(ev->attrs));
    return obj;
}

swf_error_t *swf_event_from_json(json_object *obj, swf_event_t *out)
{
    memset(out, 0, sizeof(*out));
    if (!json_object_is_type(obj, json_type_object))
        return swf_error_new(SWF_E_INPUT, NULL, "an event must be a JSON object, not %s",
                             swf_json_type_name(obj));
    json_object *id, *type, *ts, *attrs;
    if (!swf_json_get(obj, "eventId", &id) || !json_object_is_type(id, json_type_int) ||
        json_object_get_int64(id) < 1)
        return swf_error_new(SWF_E_INPUT, NULL, "eventId must be a positive integer");
    if (!swf_json_get(obj, "eventType", &type) || !json_object_is_type(type, json_type_string))
        return swf_error_new(SWF_E_INPUT, NULL, "eventType must be a string");
    swf_event_type_t t = swf_event_type_parse(json_object_get_string(type));
    if (t == SWF_EVENT_NONE)
        return swf_error_new(SWF_E_INPUT, NULL, "unknown eventType \"%s\"",
                             json_object_get_string(type));
    swf_time_t when;
    if (!swf_json_get(obj, "eventTimestamp", &ts) || !json_object_is_type(ts, json_type_string) ||
        !swf_time_parse(json_object_get_string(ts), &when))
        return swf_error_new(SWF_E_INPUT, NULL, "eventTimestamp must be an RFC 3339 timestamp");
    const char *key = swf_event_attrs_key(t);
    if (!swf_json_get(obj, key, &attrs))
        attrs = NULL;
    if (attrs != NULL && !json_object_is_type(attrs, json_type_object))
        return swf_error_new(SWF_E_INPUT, NULL, "%s must be an object", key);
    out->id = json_object_get_int64(id);
    out->type = t;
    out->time_ms = swf_time_to_ms(when);
    out->attrs = attrs ? json_object_get(attrs) : json_object_new_object();
    return NULL;
}

swf_event_t *swf_event_list_push(swf_event_list_t *list, swf_event_type_t type, int64_t time_ms,
                                 json_object *attrs)
{
    SWF_ARRAY_RESERVE(list->items, list->count, list->cap, 64);
    swf_event_t *ev = &list->items[list->count];
    ev->id = (int64_t)list->count + 1;
    ev->type = type;
    ev->time_ms = time_ms;
    ev->attrs = attrs ? attrs : json_object_new_object();
    list->count++;
    return ev;
}

void swf_event_list_push_copy(swf_event_list_t *list, const swf_event_t *ev)
{
    SWF_ARRAY_RESERVE(list->items, list->count, list->cap, 64);
    swf_event_t *copy = &list->items[list->count++];
    *copy = *ev;
    copy->attrs = swf_json_ref(ev->attrs);
}

void swf_event_list_clear(swf_event_list_t *list)
{
    for (size_t i = 0; i < list->count; i++)
        json_object_put(list->items[i].attrs);
    list->count = 0;
}

void swf_event_list_free(swf_event_list_t *list)
{
    swf_event_list_clear(list);
    free(list->items);
    list->items = NULL;
    list->cap = 0;
}

/* Reads one line (with its newline) into *line, growing it up to max bytes.
 * Returns its length, 0 at the end of the file, -1 when the line is longer
 * than max (the rest of it is not read into memory). */
static ssize_t read_line(FILE *f, char **line, size_t *cap, size_t max)
{
    size_t n = 0;
    int c;
    while ((c = getc_unlocked(f)) != EOF) {
        if (n + 2 > *cap) {
            if (*cap >= max + 2)
                return -1;
            size_t grown = *cap ? *cap * 2 : 4096;
            if (grown > max + 2)
                grown = max + 2;
            char *p = realloc(*line, grown);
            if (p == NULL)
                abort();
            *line = p;
            *cap = grown;
        }
        (*line)[n++] = (char)c;
        if (c == '\n')
            break;
    }
    if (n > 0)
        (*line)[n] = '\0';
    return (ssize_t)n;
}

/* Takes line `lineno`'s eventHash (obj's, or none) into hashes[at]; *seen
 * counts the lines that had one so far, so a mix is refused. */
static swf_error_t *hash_take(json_object *obj, size_t at, swf_event_hash_t **hashes, size_t *cap,
                              size_t *seen)
{
    json_object *h;
    bool has = swf_json_get(obj, "eventHash", &h);
    if (has != (*seen == at) && at > 0)
        return swf_error_new(SWF_E_INPUT, NULL,
                             has ? "eventHash here, where the events before carry none"
                                 : "no eventHash here, where the events before carry one");
    if (!has)
        return NULL;
    const char *hex = json_object_is_type(h, json_type_string) ? json_object_get_string(h) : "";
    bool ok = strlen(hex) == SWF_EVENT_HASH_HEX;
    for (size_t i = 0; ok && i < SWF_EVENT_HASH_HEX; i++)
        ok = (hex[i] >= '0' && hex[i] <= '9') || (hex[i] >= 'a' && hex[i] <= 'f');
    if (!ok)
        return swf_error_new(SWF_E_INPUT, NULL, "eventHash must be %d lowercase hexadecimal digits",
                             SWF_EVENT_HASH_HEX);
    SWF_ARRAY_RESERVE(*hashes, at, *cap, 64);
    memcpy((*hashes)[at], hex, SWF_EVENT_HASH_HEX + 1);
    (*seen)++;
    return NULL;
}

swf_error_t *swf_event_list_read_file(const char *path, swf_event_list_t *out)
{
    return swf_event_list_read_file_hashes(path, out, NULL);
}

swf_error_t *swf_event_list_read_file_hashes(const char *path, swf_event_list_t *out,
                                             swf_event_hash_t **hashes)
{
    swf_event_hash_t *taken = NULL;
    size_t taken_cap = 0, seen = 0;
    if (hashes != NULL)
        *hashes = NULL;
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (f == NULL)
        return swf_error_new(SWF_E_IO, NULL, "%s: %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    size_t lineno = 0;
    swf_error_t *err = NULL;
    while ((n = read_line(f, &line, &cap, SWF_LIMIT_JSON_BYTES)) != 0) {
        lineno++;
        if (n < 0) {
            err =
                swf_error_new(SWF_E_LIMIT, NULL, "line longer than %u bytes", SWF_LIMIT_JSON_BYTES);
            swf_error_prefix(err, "%s:%zu", path, lineno);
            break;
        }
        json_object *obj;
        bool blank = true;
        for (ssize_t i = 0; i < n && blank; i++)
            blank = isspace((unsigned char)line[i]);
        if (blank)
            continue;
        err = swf_json_parse(line, (size_t)n, SWF_LIMIT_JSON_BYTES, &obj);
        if (err == NULL) {
            swf_event_t ev;
            err = swf_event_from_json(obj, &ev);
            if (err == NULL && hashes != NULL) {
                err = hash_take(obj, out->count, &taken, &taken_cap, &seen);
                if (err != NULL)
                    json_object_put(ev.attrs);
            }
            json_object_put(obj);
            if (err == NULL) {
                if (ev.id != (int64_t)out->count + 1) {
                    err = swf_error_new(SWF_E_INPUT, NULL, "eventId %lld where %zu was expected",
                                        (long long)ev.id, out->count + 1);
                    json_object_put(ev.attrs);
                } else if (out->count >= SWF_LIMIT_HISTORY_EVENTS) {
                    err = swf_error_new(SWF_E_LIMIT, NULL, "more than %d events",
                                        SWF_LIMIT_HISTORY_EVENTS);
                    json_object_put(ev.attrs);
                } else {
                    SWF_ARRAY_RESERVE(out->items, out->count, out->cap, 64);
                    out->items[out->count++] = ev;
                }
            }
        }
        if (err != NULL) {
            swf_error_prefix(err, "%s:%zu", path, lineno);
            break;
        }
    }
    free(line);
    if (err == NULL && ferror(f))
        err = swf_error_new(SWF_E_IO, NULL, "%s: read failed", path);
    if (f != stdin)
        fclose(f);
    if (err == NULL && hashes != NULL && seen > 0)
        *hashes = taken;
    else
        free(taken);
    return err;
}
