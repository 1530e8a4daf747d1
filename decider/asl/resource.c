/*
 * resource.c - the task list a Task state's Resource is served on.
 *
 * A Step Functions definition names what a Task does by an ARN: an
 * activity, a Lambda function, or a service integration with its
 * integration pattern. swf serves every Task by a worker on a task list;
 * this file is the one rule (resource.h) that turns the ARN into the list,
 * so that people can guess it, `swf validate` can say it, and the decider,
 * `swf run --dev`'s worker and the docs agree. The deployment's map
 * (protocol/task_list.h) is recorded in each execution's
 * WorkflowExecutionStarted by whoever starts it, so that a replay uses the
 * map the execution ran with.
 */
#include "decider/asl/resource.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/json.h"
#include "protocol/task_list.h"

static swf_error_t *refuse(const char *fmt, const char *arg)
{
    return swf_error_new(SWF_E_INPUT, NULL, fmt, arg);
}

/* Writes n bytes of s to buf, each character outside [A-Za-z0-9._-] as '_'. */
static swf_error_t *put_name(const char *s, size_t n, char *buf, size_t size)
{
    if (n == 0)
        return refuse("the resource names no task list%s", "");
    if (n + 1 > size || n + 1 > SWF_TASK_LIST_BYTES)
        return swf_error_new(SWF_E_INPUT, NULL,
                             "the task list would be %zu bytes long; the limit is %d", n,
                             SWF_TASK_LIST_BYTES - 1);
    for (size_t i = 0; i < n; i++)
        buf[i] = swf_task_list_char(s[i]) ? s[i] : '_';
    buf[n] = '\0';
    return NULL;
}

/* The NAME of a Lambda function as FunctionName may give it: NAME,
 * NAME:QUALIFIER, ACCOUNT:function:NAME[:QUALIFIER] or its full ARN. */
static swf_error_t *function_name(const char *fn, char *buf, size_t size)
{
    const char *p = strstr(fn, ":function:");
    const char *name = p ? p + strlen(":function:") : fn;
    const char *end = strchr(name, ':');
    return put_name(name, end ? (size_t)(end - name) : strlen(name), buf, size);
}

/* lambda:invoke: the function its literal FunctionName names, or
 * lambda.invoke when the name is computed at run time. */
static swf_error_t *lambda_invoke(json_object *state, bool jsonata, char *buf, size_t size)
{
    json_object *args = NULL, *fn = NULL;
    swf_json_get(state, jsonata ? "Arguments" : "Parameters", &args);
    if (json_object_is_type(args, json_type_object) && swf_json_get(args, "FunctionName", &fn) &&
        json_object_is_type(fn, json_type_string)) {
        const char *s = json_object_get_string(fn);
        if (!(jsonata && strncmp(s, "{%", 2) == 0))
            return function_name(s, buf, size);
    }
    return put_name("lambda.invoke", strlen("lambda.invoke"), buf, size);
}

/* Takes the integration pattern off "SERVICE:ACTION[.PATTERN]": returns the
 * length without it, or 0 for a pattern swf does not know. */
static size_t strip_pattern(const char *api)
{
    const char *dot = strrchr(api, '.');
    if (dot == NULL)
        return strlen(api);
    const char *known[] = {".sync", ".sync:2", ".waitForTaskToken"};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(dot, known[i]) == 0)
            return (size_t)(dot - api);
    return 0;
}

static swf_error_t *by_rule(json_object *state, bool jsonata, const char *res, char *buf,
                            size_t size)
{
    /* arn:PARTITION:SERVICE:REGION:ACCOUNT:REST */
    const char *f[5];
    const char *p = res;
    size_t n = 0;
    if (strncmp(res, "arn:", 4) == 0)
        for (; n < 5 && (p = strchr(p, ':')) != NULL; n++)
            f[n] = ++p;
    if (n < 5) /* not an ARN: the resource names its list itself */
        return put_name(res, strlen(res), buf, size);
    const char *service = f[1], *rest = f[4];
    bool states = strncmp(service, "states:", 7) == 0;
    if (states && strncmp(rest, "activity:", 9) == 0)
        return put_name(rest + 9, strlen(rest + 9), buf, size);
    if (strncmp(service, "lambda:", 7) == 0 && strncmp(rest, "function:", 9) == 0)
        return function_name(rest + 9, buf, size);
    bool integration = states && f[2] == f[1] + 7 && f[3] == f[2] + 1 && f[4] == f[3] + 1;
    if (!integration) /* another ARN: served on a list named after it */
        return put_name(res, strlen(res), buf, size);
    size_t len = strip_pattern(rest);
    if (len == 0)
        return refuse("the integration pattern of '%s' is not one swf knows (.sync, .sync:2, "
                      ".waitForTaskToken)",
                      res);
    if (strncmp(rest, "lambda:invoke", len) == 0 && len == strlen("lambda:invoke"))
        return lambda_invoke(state, jsonata, buf, size);
    if (len + 1 > SWF_TASK_LIST_BYTES)
        return put_name(rest, len, buf, size); /* the length error */
    char tmp[SWF_TASK_LIST_BYTES];
    memcpy(tmp, rest, len);
    tmp[len] = '\0';
    for (size_t i = 0; i < len; i++)
        if (tmp[i] == ':')
            tmp[i] = '.';
    return put_name(tmp, len, buf, size);
}

static const char *mapped(json_object *map, const char *key)
{
    json_object *v;
    if (map != NULL && swf_json_get(map, key, &v) && json_object_is_type(v, json_type_string))
        return json_object_get_string(v);
    return NULL;
}

const char *swf_asl_nested_pattern(const char *resource)
{
    return swf_task_list_nested_pattern(resource);
}

swf_error_t *swf_asl_task_list(json_object *state, bool jsonata, json_object *map, char *buf,
                               size_t size)
{
    const char *res = swf_json_get_string(state, "Resource");
    if (res == NULL)
        return refuse("a Task state needs a Resource%s", "");
    /* A nested execution is started by swf itself: no map moves it. */
    if (swf_asl_nested_pattern(res) != NULL)
        return put_name(SWF_ASL_NESTED_TASK_LIST, strlen(SWF_ASL_NESTED_TASK_LIST), buf, size);
    const char *to = mapped(map, res);
    if (to != NULL)
        return put_name(to, strlen(to), buf, size);
    swf_error_t *err = by_rule(state, jsonata, res, buf, size);
    if (err != NULL)
        return err;
    to = mapped(map, buf);
    return to != NULL ? put_name(to, strlen(to), buf, size) : NULL;
}

static bool is_jsonata(json_object *obj, bool inherited)
{
    const char *q = swf_json_get_string(obj, "QueryLanguage");
    return q ? strcmp(q, "JSONata") == 0 : inherited;
}

/* Adds {path, state, resource, taskList or error} for one task: a Task
 * state, or a Map's ItemReader or ResultWriter (holder). */
static void add_task(json_object *out, json_object *holder, bool jsonata, json_object *map,
                     const char *path, const char *state)
{
    char list[SWF_TASK_LIST_BYTES];
    swf_error_t *err = swf_asl_task_list(holder, jsonata, map, list, sizeof list);
    json_object *o = json_object_new_object();
    swf_json_add(o, "path", json_object_new_string(path));
    swf_json_add(o, "state", json_object_new_string(state));
    const char *res = swf_json_get_string(holder, "Resource");
    swf_json_add(o, "resource", res ? json_object_new_string(res) : NULL);
    if (err == NULL)
        swf_json_add(o, "taskList", json_object_new_string(list));
    const char *nested = err == NULL ? swf_asl_nested_pattern(res) : NULL;
    if (nested != NULL) /* started by swf: the list only records it */
        swf_json_add(o, "nestedExecution",
                     json_object_new_string(*nested ? nested + 1 : "requestResponse"));
    if (err != NULL)
        swf_json_add(o, "error", json_object_new_string(swf_error_message(err)));
    swf_error_free(err);
    json_object_array_add(out, o);
}

static void walk(json_object *machine, const char *prefix, bool jsonata, json_object *map,
                 json_object *out, int depth)
{
    json_object *states, *v;
    if (depth > 64 || !swf_json_get(machine, "States", &states) ||
        !json_object_is_type(states, json_type_object))
        return;
    json_object_object_foreach(states, name, st)
    {
        if (!json_object_is_type(st, json_type_object))
            continue;
        size_t plen = strlen(prefix) + strlen(name) + 16;
        char *path = malloc(plen);
        if (path == NULL)
            abort();
        snprintf(path, plen, "%s.States.%s", prefix, name);
        bool lang = is_jsonata(st, jsonata);
        const char *type = swf_json_get_string(st, "Type");
        if (type != NULL && strcmp(type, "Task") == 0)
            add_task(out, st, lang, map, path, name);
        /* A Map's reader and writer are tasks too (a writer with only
         * WriterConfig has none). */
        const char *holders[] = {"ItemReader", "ResultWriter"};
        for (size_t i = 0; i < 2 && type != NULL && strcmp(type, "Map") == 0; i++) {
            json_object *res;
            if (!swf_json_get(st, holders[i], &v) || !swf_json_get(v, "Resource", &res))
                continue;
            char *sub = malloc(strlen(path) + 16);
            if (sub == NULL)
                abort();
            sprintf(sub, "%s.%s", path, holders[i]);
            add_task(out, v, lang, map, sub, name);
            free(sub);
        }
        if (swf_json_get(st, "Branches", &v) && json_object_is_type(v, json_type_array)) {
            for (size_t i = 0; i < json_object_array_length(v); i++) {
                char *sub = malloc(strlen(path) + 32);
                if (sub == NULL)
                    abort();
                sprintf(sub, "%s.Branches[%zu]", path, i);
                walk(json_object_array_get_idx(v, i), sub, lang, map, out, depth + 1);
                free(sub);
            }
        }
        const char *procs[] = {"ItemProcessor", "Iterator"};
        for (size_t i = 0; i < 2; i++) {
            if (swf_json_get(st, procs[i], &v)) {
                char *sub = malloc(strlen(path) + 32);
                if (sub == NULL)
                    abort();
                sprintf(sub, "%s.%s", path, procs[i]);
                walk(v, sub, lang, map, out, depth + 1);
                free(sub);
            }
        }
        free(path);
    }
}

json_object *swf_asl_task_lists(json_object *definition, json_object *map)
{
    json_object *out = json_object_new_array();
    if (out == NULL)
        abort();
    walk(definition, "$", is_jsonata(definition, false), map, out, 0);
    return out;
}
