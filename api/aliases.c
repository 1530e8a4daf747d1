/*
 * aliases.c - state machine aliases: CreateStateMachineAlias, Describe,
 * Update, Delete, ListStateMachineAliases, and StartExecution on an alias
 * ARN (arn:...:stateMachine:MACHINE:ALIAS).
 *
 * An alias is a row of the catalogue (history/catalog.h) routing to one or
 * two versions of its state machine, with weights from 0 to 100 that sum
 * to 100, as AWS validates them. StartExecution on an alias ARN draws the
 * version by those weights (getrandom: the choice is made once, here, and
 * the version run is in the history like any other start), and records
 * the version and alias the execution was started through, which
 * DescribeExecution shows as stateMachineVersionArn and
 * stateMachineAliasArn (a version ARN records its version alone).
 *
 * AWS's rules kept: an alias name is 1 to 80 of [A-Za-z0-9_.-] and not a
 * number (InvalidName); at most 100 aliases a machine
 * (ServiceQuotaExceededException); creating an alias again with the same
 * description and routing answers the existing one, otherwise
 * ConflictException; a version an alias routes to cannot be deleted
 * (ConflictException, machines.c); deleting a machine deletes its aliases.
 */
#include "api/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "history/catalog.h"
#include "history/pg.h"
#include "protocol/json.h"

#define DESCRIPTION_BYTES 256
#define ALIAS_ARN_BYTES 256

static bool all_digits(const char *s)
{
    return s[0] != '\0' && strspn(s, "0123456789") == strlen(s);
}

static swf_error_t *alias_name_check(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > SWF_API_NAME_BYTES ||
        strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") != n ||
        all_digits(name))
        return swf_api__err("InvalidName",
                            "Invalid Name: '%s' (an alias name is 1 to %d of A-Z, a-z, 0-9, _, . "
                            "and -, and not a number)",
                            name, SWF_API_NAME_BYTES);
    return NULL;
}

/* The alias the member `key` names: machine and alias names, and the key's
 * right to the machine. */
static swf_error_t *alias_arn(swf_api_call_t *call, json_object *in, const char *key,
                              char machine[SWF_API_NAME_BYTES + 1],
                              char alias[SWF_API_NAME_BYTES + 1])
{
    const char *arn;
    swf_error_t *err = swf_api__str(in, key, true, ALIAS_ARN_BYTES, &arn);
    if (err == NULL)
        err = swf_api__arn_parse(arn, "stateMachine", machine, alias);
    if (err == NULL && (alias[0] == '\0' || all_digits(alias)))
        err = swf_api__err("InvalidArn", "Invalid Arn: '%s': not a state machine alias ARN", arn);
    if (err == NULL)
        err = swf_api__allowed(call, "stateMachine", machine);
    return err;
}

static swf_error_t *not_found(swf_api_call_t *call, const char *machine, const char *alias)
{
    char arn[SWF_API_ARN_BYTES];
    swf_api__arn(call->api, "stateMachine", machine, alias, arn);
    return swf_api__err("ResourceNotFound", "Resource not found: '%s'", arn);
}

/* routingConfiguration (absent: *routing NULL) as the catalogue keeps it,
 * [{"version", "weight"}]; the versions must be of one machine (`machine`
 * when it is set, else it gets theirs) and exist. */
static swf_error_t *routing_read(swf_api_call_t *call, json_object *in,
                                 char machine[SWF_API_NAME_BYTES + 1], json_object **routing)
{
    json_object *rc;
    *routing = NULL;
    if (!swf_json_get(in, "routingConfiguration", &rc) || rc == NULL)
        return NULL;
    size_t n = json_object_is_type(rc, json_type_array) ? json_object_array_length(rc) : 0;
    if (n < 1 || n > 2)
        return swf_api__err("ValidationException",
                            "routingConfiguration must be a list of 1 or 2 RoutingConfig");
    swf_history_store_t *s;
    swf_error_t *err = swf_api__store(call, &s);
    json_object *out = json_object_new_array();
    int64_t sum = 0, seen = 0;
    for (size_t i = 0; err == NULL && i < n; i++) {
        json_object *item = json_object_array_get_idx(rc, i), *w, *def = NULL;
        char m[SWF_API_NAME_BYTES + 1];
        int version = 0;
        int64_t weight = -1;
        if (!json_object_is_type(item, json_type_object)) {
            err = swf_api__err("ValidationException", "a RoutingConfig must be an object");
            break;
        }
        err = swf_api__machine_arn(call, item, "stateMachineVersionArn", m, &version);
        if (err == NULL && version == 0)
            err = swf_api__err("ValidationException",
                               "stateMachineVersionArn must be a state machine version ARN");
        if (err == NULL && !swf_json_get(item, "weight", &w))
            err = swf_api__err("ValidationException", "a RoutingConfig needs a weight");
        if (err == NULL)
            err = swf_api__int(item, "weight", 0, 100, &weight);
        if (err == NULL && machine[0] != '\0' && strcmp(machine, m) != 0)
            err = swf_api__err("ValidationException",
                               "the versions of an alias must be of one state machine (%s, %s)",
                               machine, m);
        if (err == NULL && version == seen)
            err = swf_api__err("ValidationException", "routingConfiguration names version %d twice",
                               version);
        if (err == NULL)
            err = swf_history_pg_state_machine_get(s, m, version, &def, NULL);
        json_object_put(def);
        if (err != NULL && swf_error_code(err) == SWF_E_NOTFOUND) {
            swf_error_free(err);
            char arn[SWF_API_ARN_BYTES], v[16];
            snprintf(v, sizeof(v), "%d", version);
            swf_api__arn(call->api, "stateMachine", m, v, arn);
            err = swf_api__err("ResourceNotFound", "Resource not found: '%s'", arn);
        }
        if (err != NULL)
            break;
        snprintf(machine, SWF_API_NAME_BYTES + 1, "%s", m);
        seen = version;
        sum += weight;
        json_object *r = json_object_new_object();
        swf_json_add(r, "version", json_object_new_int(version));
        swf_json_add(r, "weight", json_object_new_int64(weight));
        json_object_array_add(out, r);
    }
    if (err == NULL && sum != 100)
        err = swf_api__err("ValidationException",
                           "the weights of routingConfiguration must sum to 100, not %lld",
                           (long long)sum);
    if (err != NULL)
        json_object_put(out);
    else
        *routing = out;
    return err;
}

/* The catalogue's routing as AWS writes it. */
static json_object *routing_json(swf_api_call_t *call, const char *machine, json_object *routing)
{
    json_object *out = json_object_new_array(), *v;
    for (size_t i = 0; i < json_object_array_length(routing); i++) {
        json_object *r = json_object_array_get_idx(routing, i), *o = json_object_new_object();
        char arn[SWF_API_ARN_BYTES], ver[16];
        swf_json_get(r, "version", &v);
        snprintf(ver, sizeof(ver), "%d", json_object_get_int(v));
        swf_api__arn(call->api, "stateMachine", machine, ver, arn);
        swf_json_add(o, "stateMachineVersionArn", json_object_new_string(arn));
        swf_json_get(r, "weight", &v);
        swf_json_add(o, "weight", swf_json_ref(v));
        json_object_array_add(out, o);
    }
    return out;
}

/* Frees what an alias holds. */
static void alias_clear(swf_history_alias_t *a)
{
    free(a->machine);
    free(a->name);
    free(a->description);
    json_object_put(a->routing);
    memset(a, 0, sizeof(*a));
}

static swf_error_t *alias_get(swf_api_call_t *call, const char *machine, const char *alias,
                              swf_history_alias_t *a)
{
    swf_history_store_t *s;
    swf_error_t *err = swf_api__store(call, &s);
    if (err == NULL)
        err = swf_history_pg_alias_get(s, machine, alias, a);
    if (err != NULL && swf_error_code(err) == SWF_E_NOTFOUND) {
        swf_error_free(err);
        err = not_found(call, machine, alias);
    }
    return err;
}

/* The alias the request's stateMachineAliasArn names, found. */
static swf_error_t *alias_find(swf_api_call_t *call, json_object *in,
                               char machine[SWF_API_NAME_BYTES + 1],
                               char alias[SWF_API_NAME_BYTES + 1], swf_history_alias_t *a)
{
    swf_error_t *err = alias_arn(call, in, "stateMachineAliasArn", machine, alias);
    if (err == NULL)
        err = alias_get(call, machine, alias, a);
    return err;
}

static json_object *alias_answer(swf_api_call_t *call, const char *machine, const char *alias,
                                 int64_t created_ms)
{
    char arn[SWF_API_ARN_BYTES];
    swf_api__arn(call->api, "stateMachine", machine, alias, arn);
    json_object *o = json_object_new_object();
    swf_json_add(o, "stateMachineAliasArn", json_object_new_string(arn));
    swf_json_add(o, "creationDate", swf_api__time(created_ms));
    return o;
}

swf_error_t *swf_api__alias_create(swf_api_call_t *call, json_object *in, json_object **out)
{
    const char *name, *description;
    char machine[SWF_API_NAME_BYTES + 1] = "";
    json_object *routing = NULL;
    swf_error_t *err = swf_api__str(in, "name", true, SWF_API_NAME_BYTES, &name);
    if (err == NULL)
        err = alias_name_check(name);
    if (err == NULL)
        err = swf_api__str(in, "description", false, DESCRIPTION_BYTES, &description);
    if (err == NULL)
        err = routing_read(call, in, machine, &routing);
    if (err == NULL && routing == NULL)
        err = swf_api__err("ValidationException", "routingConfiguration is required");
    swf_history_store_t *s;
    if (err == NULL)
        err = swf_api__store(call, &s);
    if (err == NULL)
        err = swf_history_pg_alias_create(s, machine, name, description, routing);
    if (err != NULL && swf_error_code(err) == SWF_E_LIMIT) {
        swf_error_free(err);
        err = swf_api__err("ServiceQuotaExceededException",
                           "state machine %s has %d aliases, the quota", machine,
                           SWF_HISTORY_ALIASES);
    }
    /* Created already: the same alias again answers it (AWS's idempotency). */
    bool again = err != NULL && swf_error_code(err) == SWF_E_CONFLICT;
    if (again) {
        swf_error_free(err);
        err = NULL;
    }
    swf_history_alias_t a = {0};
    if (err == NULL)
        err = alias_get(call, machine, name, &a);
    if (err == NULL && again &&
        (strcmp(a.description, description ? description : "") != 0 ||
         !swf_json_equal(a.routing, routing)))
        err = swf_api__err("ConflictException",
                           "alias %s of %s exists with another description or routing", name,
                           machine);
    if (err == NULL)
        *out = alias_answer(call, machine, name, a.created_ms);
    alias_clear(&a);
    json_object_put(routing);
    return err;
}

swf_error_t *swf_api__alias_describe(swf_api_call_t *call, json_object *in, json_object **out)
{
    char machine[SWF_API_NAME_BYTES + 1], alias[SWF_API_NAME_BYTES + 1];
    swf_history_alias_t a = {0};
    swf_error_t *err = alias_find(call, in, machine, alias, &a);
    if (err == NULL) {
        json_object *o = alias_answer(call, machine, alias, a.created_ms);
        swf_json_add(o, "name", json_object_new_string(alias));
        if (a.description[0] != '\0')
            swf_json_add(o, "description", json_object_new_string(a.description));
        swf_json_add(o, "routingConfiguration", routing_json(call, machine, a.routing));
        swf_json_add(o, "updateDate", swf_api__time(a.updated_ms));
        *out = o;
    }
    alias_clear(&a);
    return err;
}

swf_error_t *swf_api__alias_update(swf_api_call_t *call, json_object *in, json_object **out)
{
    char machine[SWF_API_NAME_BYTES + 1], alias[SWF_API_NAME_BYTES + 1];
    const char *description = NULL;
    json_object *routing = NULL;
    swf_history_alias_t a = {0};
    swf_error_t *err = alias_arn(call, in, "stateMachineAliasArn", machine, alias);
    if (err == NULL)
        err = swf_api__str(in, "description", false, DESCRIPTION_BYTES, &description);
    if (err == NULL)
        err = routing_read(call, in, machine, &routing);
    if (err == NULL && description == NULL && routing == NULL)
        err = swf_api__err("ValidationException",
                           "give a description or a routingConfiguration to update");
    swf_history_store_t *s;
    if (err == NULL)
        err = swf_api__store(call, &s);
    if (err == NULL)
        err = swf_history_pg_alias_update(s, machine, alias, description, routing);
    if (err != NULL && swf_error_code(err) == SWF_E_NOTFOUND) {
        swf_error_free(err);
        err = not_found(call, machine, alias);
    }
    if (err == NULL)
        err = alias_get(call, machine, alias, &a);
    if (err == NULL) {
        *out = json_object_new_object();
        swf_json_add(*out, "updateDate", swf_api__time(a.updated_ms));
    }
    alias_clear(&a);
    json_object_put(routing);
    return err;
}

swf_error_t *swf_api__alias_delete(swf_api_call_t *call, json_object *in, json_object **out)
{
    char machine[SWF_API_NAME_BYTES + 1], alias[SWF_API_NAME_BYTES + 1];
    swf_history_alias_t a = {0};
    swf_error_t *err = alias_find(call, in, machine, alias, &a);
    swf_history_store_t *s;
    if (err == NULL)
        err = swf_api__store(call, &s);
    if (err == NULL)
        err = swf_history_pg_alias_delete(s, machine, alias);
    if (err == NULL)
        *out = json_object_new_object();
    alias_clear(&a);
    return err;
}

swf_error_t *swf_api__aliases_list(swf_api_call_t *call, json_object *in, json_object **out)
{
    int64_t max = 100;
    long offset = 0;
    swf_error_t *err = swf_api__max_results(in, &max);
    char machine[SWF_API_NAME_BYTES + 1];
    int version = 0;
    if (err == NULL)
        err = swf_api__machine_arn(call, in, "stateMachineArn", machine, &version);
    if (err == NULL)
        err = swf_api__page_token(in, SWF_HISTORY_ALIASES, &offset);
    swf_history_store_t *s;
    swf_history_catalog_entry_t e = {0};
    if (err == NULL)
        err = swf_api__store(call, &s);
    if (err == NULL)
        err = swf_api__machine_entry(call, machine, &e);
    free(e.name);
    free(e.role_arn);
    free(e.type);
    swf_history_alias_t *items = NULL;
    size_t n = 0;
    if (err == NULL)
        err = swf_history_pg_aliases_list(s, machine, version, &items, &n);
    if (err != NULL)
        return err;
    json_object *list = json_object_new_array();
    size_t end = n > (size_t)offset + (size_t)max ? (size_t)offset + (size_t)max : n;
    for (size_t i = (size_t)offset; i < end; i++)
        json_object_array_add(list,
                              alias_answer(call, machine, items[i].name, items[i].created_ms));
    *out = json_object_new_object();
    swf_json_add(*out, "stateMachineAliases", list);
    if (n > end) {
        char next[32];
        snprintf(next, sizeof(next), "%zu", end);
        swf_json_add(*out, "nextToken", json_object_new_string(next));
    }
    swf_history_aliases_free(items, n);
    return NULL;
}

/* ---- StartExecution and DescribeExecution ----------------------------------- */

swf_error_t *swf_api__machine_target(swf_api_call_t *call, json_object *in, const char *key,
                                     char machine[SWF_API_NAME_BYTES + 1], int *version,
                                     char alias[SWF_API_NAME_BYTES + 1])
{
    const char *arn;
    char sub[SWF_API_NAME_BYTES + 1] = "";
    alias[0] = '\0';
    swf_error_t *err = swf_api__str(in, key, true, SWF_API_ARN_BYTES, &arn);
    if (err == NULL)
        err = swf_api__arn_parse(arn, "stateMachine", machine, sub);
    if (err != NULL || sub[0] == '\0' || all_digits(sub))
        return err != NULL ? err : swf_api__machine_arn(call, in, key, machine, version);
    swf_history_alias_t a = {0};
    err = swf_api__allowed(call, "stateMachine", machine);
    if (err == NULL)
        err = alias_get(call, machine, sub, &a);
    if (err == NULL) {
        /* A draw in [0, 100): the first version takes weights below its own. */
        uint32_t r = 0;
        if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
            r = (uint32_t)rand();
        int64_t draw = r % 100, acc = 0;
        json_object *v;
        for (size_t i = 0; i < json_object_array_length(a.routing); i++) {
            json_object *route = json_object_array_get_idx(a.routing, i);
            swf_json_get(route, "weight", &v);
            acc += json_object_get_int64(v);
            swf_json_get(route, "version", &v);
            *version = json_object_get_int(v);
            if (draw < acc)
                break;
        }
        snprintf(alias, SWF_API_NAME_BYTES + 1, "%s", sub);
    }
    alias_clear(&a);
    return err;
}

void swf_api__execution_target_record(swf_api_call_t *call, const char *execution_id, int version,
                                      const char *alias)
{
    swf_history_store_t *s;
    if (version == 0)
        return;
    swf_error_t *err = swf_api__store(call, &s);
    if (err == NULL)
        err = swf_history_pg_execution_target_set(s, execution_id, version,
                                                  alias[0] != '\0' ? alias : NULL);
    swf_error_free(err); /* DescribeExecution then shows no version: the run is unharmed */
}

void swf_api__execution_target_describe(swf_api_call_t *call, const swf_history_execution_t *ex,
                                        json_object *o)
{
    swf_history_store_t *s;
    int version = 0;
    char *alias = NULL;
    swf_error_t *err = swf_api__store(call, &s);
    if (err == NULL)
        err = swf_history_pg_execution_target_get(s, ex->execution_id, &version, &alias);
    swf_error_free(err);
    if (version > 0) {
        char arn[SWF_API_ARN_BYTES], v[16];
        snprintf(v, sizeof(v), "%d", version);
        swf_api__arn(call->api, "stateMachine", ex->state_machine, v, arn);
        swf_json_add(o, "stateMachineVersionArn", json_object_new_string(arn));
    }
    if (alias != NULL) {
        char arn[SWF_API_ARN_BYTES];
        swf_api__arn(call->api, "stateMachine", ex->state_machine, alias, arn);
        swf_json_add(o, "stateMachineAliasArn", json_object_new_string(arn));
    }
    free(alias);
}
