/*
 * machines.c - the state machine actions: Create, Describe, Update,
 * Delete, List, ValidateStateMachineDefinition and
 * DescribeStateMachineForExecution.
 *
 * A state machine is a name in the catalogue `swf register` writes
 * (history/pg.h, state_machines): every CreateStateMachine or
 * UpdateStateMachine with a definition is a new version there, and the
 * latest one is what StartExecution runs. Definitions are validated by the
 * interpreter's own validator before anything is written, and its problems
 * come back with their JSON paths (InvalidDefinition, and
 * ValidateStateMachineDefinition's diagnostics).
 *
 * AWS makes CreateStateMachine idempotent: the same name with the same
 * definition and role answers with the existing machine; another
 * definition is StateMachineAlreadyExists. So it is here.
 */
#include "api/internal.h"

#include <stdlib.h>
#include <string.h>

#include "decider/asl/validate.h"
#include "history/catalog.h"
#include "history/pg.h"
#include "protocol/json.h"
#include "protocol/limits.h"

/* AWS's bound on a definition (1 MiB), which is swf's as well. */
#define DEFINITION_BYTES SWF_LIMIT_DEFINITION_BYTES
#define ROLE_BYTES 256

/* Parses and validates a definition; InvalidDefinition lists the problems. */
static swf_error_t *definition_read(const char *text, json_object **out)
{
    *out = NULL;
    json_object *def = NULL;
    swf_error_t *err = swf_json_parse(text, strlen(text), DEFINITION_BYTES, &def);
    if (err != NULL) {
        swf_error_t *e = swf_api__err("InvalidDefinition", "Invalid State Machine Definition: %s",
                                      swf_error_message(err));
        swf_error_free(err);
        return e;
    }
    if (!json_object_is_type(def, json_type_object)) {
        json_object_put(def);
        return swf_api__err("InvalidDefinition",
                            "Invalid State Machine Definition: not a JSON object");
    }
    err = swf_api__definition_check(def);
    if (err != NULL) {
        json_object_put(def);
        return err;
    }
    *out = def;
    return NULL;
}

swf_error_t *swf_api__definition_check(json_object *def)
{
    swf_asl_problems_t problems = {0};
    if (swf_asl_validate(def, &problems) > 0) {
        char msg[900] = "";
        size_t n = 0;
        for (size_t i = 0; i < problems.count && n < sizeof(msg) - 1; i++)
            n += (size_t)snprintf(msg + n, sizeof(msg) - n, "%s%s: %s", i ? "; " : "",
                                  problems.items[i].where, problems.items[i].message);
        swf_asl_problems_free(&problems);
        return swf_api__err("InvalidDefinition", "Invalid State Machine Definition: %s", msg);
    }
    swf_asl_problems_free(&problems);
    return NULL;
}

/* The machine named by the member stateMachineArn (no version). */
static swf_error_t *machine_arn(swf_api_call_t *call, json_object *in,
                                char name[SWF_API_NAME_BYTES + 1])
{
    return swf_api__machine_arn(call, in, "stateMachineArn", name, NULL);
}

swf_error_t *swf_api__machine_entry(swf_api_call_t *call, const char *name,
                                    swf_history_catalog_entry_t *e)
{
    swf_history_store_t *s;
    swf_error_t *err = swf_api__store(call, &s);
    if (err == NULL)
        err = swf_history_pg_state_machine_entry(s, name, e);
    if (err != NULL && swf_error_code(err) == SWF_E_NOTFOUND) {
        swf_error_free(err);
        char arn[SWF_API_ARN_BYTES];
        swf_api__arn(call->api, "stateMachine", name, NULL, arn);
        return swf_api__err("StateMachineDoesNotExist", "State Machine Does Not Exist: '%s'", arn);
    }
    return err;
}

static void entry_clear(swf_history_catalog_entry_t *e)
{
    free(e->name);
    free(e->role_arn);
    free(e->type);
    memset(e, 0, sizeof(*e));
}

static const char *role_of(swf_api_call_t *call, const swf_history_catalog_entry_t *e,
                           char buf[SWF_API_ARN_BYTES])
{
    if (e->role_arn != NULL && e->role_arn[0] != '\0')
        return e->role_arn;
    snprintf(buf, SWF_API_ARN_BYTES, "arn:aws:iam::%s:role/swf", call->api->account);
    return buf;
}

swf_error_t *swf_api__machine_create(swf_api_call_t *call, json_object *in, json_object **out)
{
    const char *name = NULL, *text = NULL, *role = NULL, *type = NULL;
    swf_error_t *err = swf_api__str(in, "name", true, SWF_API_NAME_BYTES, &name);
    if (err == NULL)
        err = swf_api__str(in, "definition", true, DEFINITION_BYTES, &text);
    if (err == NULL)
        err = swf_api__str(in, "roleArn", true, ROLE_BYTES, &role);
    if (err == NULL)
        err = swf_api__machine_type(in, &type);
    if (err == NULL)
        err = swf_api__name_check(name);
    if (err == NULL)
        err = swf_api__allowed(call, "stateMachine", name);
    json_object *def = NULL;
    if (err == NULL)
        err = definition_read(text, &def);
    if (type == NULL)
        type = "STANDARD";
    if (err == NULL && strcmp(type, "EXPRESS") == 0)
        err = swf_api__express_check(def);
    swf_history_store_t *s = NULL;
    if (err == NULL)
        err = swf_api__store(call, &s);
    if (err != NULL) {
        json_object_put(def);
        return err;
    }
    /* The same name again: the same machine (idempotent) or a conflict. */
    json_object *old = NULL;
    int version = 0;
    err = swf_history_pg_state_machine_get(s, name, 0, &old, &version);
    char arn[SWF_API_ARN_BYTES];
    swf_api__arn(call->api, "stateMachine", name, NULL, arn);
    if (err == NULL) {
        bool same = swf_json_equal(old, def);
        json_object_put(old);
        swf_history_catalog_entry_t e;
        err = swf_history_pg_state_machine_entry(s, name, &e);
        if (err == NULL) {
            char rb[SWF_API_ARN_BYTES];
            if (!same || strcmp(role_of(call, &e, rb), role) != 0 ||
                strcmp(e.type ? e.type : "STANDARD", type) != 0)
                err = swf_api__err("StateMachineAlreadyExists",
                                   "State Machine Already Exists: '%s'", arn);
            else {
                *out = json_object_new_object();
                swf_json_add(*out, "stateMachineArn", json_object_new_string(arn));
                swf_json_add(*out, "creationDate", swf_api__time(e.created_ms));
            }
            entry_clear(&e);
        }
        json_object_put(def);
        return err;
    }
    if (swf_error_code(err) != SWF_E_NOTFOUND) {
        json_object_put(def);
        return err;
    }
    swf_error_free(err);
    err = swf_history_pg_state_machine_settings(s, name, role, type);
    if (err == NULL)
        err = swf_history_pg_state_machine_register(s, name, def, &version);
    if (err == NULL)
        err = swf_api__tags_apply(call, "stateMachine", name, in);
    json_object_put(def);
    swf_history_catalog_entry_t e = {0};
    if (err == NULL)
        err = swf_history_pg_state_machine_entry(s, name, &e);
    if (err == NULL) {
        *out = json_object_new_object();
        swf_json_add(*out, "stateMachineArn", json_object_new_string(arn));
        swf_json_add(*out, "creationDate", swf_api__time(e.created_ms));
    }
    entry_clear(&e);
    return err;
}

/* The answer of DescribeStateMachine (and ...ForExecution) for one version. */
static json_object *machine_json(swf_api_call_t *call, const swf_history_catalog_entry_t *e,
                                 json_object *def)
{
    char arn[SWF_API_ARN_BYTES], rb[SWF_API_ARN_BYTES];
    swf_api__arn(call->api, "stateMachine", e->name, NULL, arn);
    json_object *o = json_object_new_object();
    swf_json_add(o, "stateMachineArn", json_object_new_string(arn));
    swf_json_add(o, "name", json_object_new_string(e->name));
    swf_json_add(o, "status", json_object_new_string("ACTIVE"));
    swf_json_add(o, "definition", json_object_new_string(swf_json_str(def)));
    swf_json_add(o, "roleArn", json_object_new_string(role_of(call, e, rb)));
    swf_json_add(o, "type", json_object_new_string(e->type ? e->type : "STANDARD"));
    swf_json_add(o, "creationDate", swf_api__time(e->created_ms));
    json_object *logging = json_object_new_object();
    swf_json_add(logging, "level", json_object_new_string("OFF"));
    swf_json_add(o, "loggingConfiguration", logging);
    char rev[16];
    snprintf(rev, sizeof(rev), "%d", e->version);
    swf_json_add(o, "revisionId", json_object_new_string(rev));
    return o;
}

swf_error_t *swf_api__machine_describe(swf_api_call_t *call, json_object *in, json_object **out)
{
    char name[SWF_API_NAME_BYTES + 1];
    int version = 0;
    swf_error_t *err = swf_api__machine_arn(call, in, "stateMachineArn", name, &version);
    swf_history_catalog_entry_t e = {0};
    if (err == NULL)
        err = swf_api__machine_entry(call, name, &e);
    swf_history_store_t *s;
    json_object *def = NULL;
    if (err == NULL)
        err = swf_api__store(call, &s);
    if (err == NULL)
        err = swf_history_pg_state_machine_get(s, name, version ? version : e.version, &def, NULL);
    if (err != NULL && swf_error_code(err) == SWF_E_NOTFOUND) {
        swf_error_free(err);
        err = swf_api__err("StateMachineDoesNotExist", "State Machine Does Not Exist: version %d",
                           version);
    }
    if (err == NULL) {
        *out = machine_json(call, &e, def);
        if (version > 0) {
            char arn[SWF_API_ARN_BYTES], vs[16];
            snprintf(vs, sizeof(vs), "%d", version);
            swf_api__arn(call->api, "stateMachine", name, vs, arn);
            json_object_object_add(*out, "stateMachineArn", json_object_new_string(arn));
            json_object_object_add(*out, "revisionId", json_object_new_string(vs));
        }
    }
    json_object_put(def);
    entry_clear(&e);
    return err;
}

swf_error_t *swf_api__machine_update(swf_api_call_t *call, json_object *in, json_object **out)
{
    char name[SWF_API_NAME_BYTES + 1];
    const char *text = NULL, *role = NULL;
    swf_error_t *err = machine_arn(call, in, name);
    if (err == NULL)
        err = swf_api__str(in, "definition", false, DEFINITION_BYTES, &text);
    if (err == NULL)
        err = swf_api__str(in, "roleArn", false, ROLE_BYTES, &role);
    if (err == NULL && text == NULL && role == NULL)
        err = swf_api__err("MissingRequiredParameter",
                           "either the definition or the roleArn must be given");
    swf_history_catalog_entry_t e = {0};
    if (err == NULL)
        err = swf_api__machine_entry(call, name, &e);
    json_object *def = NULL;
    if (err == NULL && text != NULL)
        err = definition_read(text, &def);
    if (err == NULL && def != NULL && e.type != NULL && strcmp(e.type, "EXPRESS") == 0)
        err = swf_api__express_check(def);
    swf_history_store_t *s;
    if (err == NULL)
        err = swf_api__store(call, &s);
    if (err == NULL && role != NULL)
        err = swf_history_pg_state_machine_settings(s, name, role, NULL);
    if (err == NULL && def != NULL)
        err = swf_history_pg_state_machine_register(s, name, def, NULL);
    json_object_put(def);
    entry_clear(&e);
    if (err == NULL)
        err = swf_api__machine_entry(call, name, &e);
    if (err == NULL) {
        *out = json_object_new_object();
        swf_json_add(*out, "updateDate", swf_api__time(e.updated_ms));
        char rev[16];
        snprintf(rev, sizeof(rev), "%d", e.version);
        swf_json_add(*out, "revisionId", json_object_new_string(rev));
    }
    entry_clear(&e);
    return err;
}

swf_error_t *swf_api__machine_delete(swf_api_call_t *call, json_object *in, json_object **out)
{
    char name[SWF_API_NAME_BYTES + 1];
    swf_error_t *err = machine_arn(call, in, name);
    swf_history_store_t *s;
    if (err == NULL)
        err = swf_api__store(call, &s);
    if (err == NULL)
        err = swf_history_pg_state_machine_delete(s, name);
    if (err == NULL)
        *out = json_object_new_object();
    return err;
}

static json_object *machine_item(swf_api_call_t *call, const swf_history_catalog_entry_t *e)
{
    char arn[SWF_API_ARN_BYTES];
    swf_api__arn(call->api, "stateMachine", e->name, NULL, arn);
    json_object *o = json_object_new_object();
    swf_json_add(o, "stateMachineArn", json_object_new_string(arn));
    swf_json_add(o, "name", json_object_new_string(e->name));
    swf_json_add(o, "type", json_object_new_string(e->type ? e->type : "STANDARD"));
    swf_json_add(o, "creationDate", swf_api__time(e->created_ms));
    return o;
}

swf_error_t *swf_api__machines_list(swf_api_call_t *call, json_object *in, json_object **out)
{
    return swf_api__names_page(call, in, "stateMachine", swf_history_pg_state_machines_list,
                               machine_item, "stateMachines", out);
}

swf_error_t *swf_api__machine_validate(swf_api_call_t *call, json_object *in, json_object **out)
{
    const char *text, *type;
    swf_error_t *err = swf_api__str(in, "definition", true, DEFINITION_BYTES, &text);
    if (err == NULL)
        err = swf_api__machine_type(in, &type);
    if (err != NULL)
        return err;
    json_object *diags = json_object_new_array();
    json_object *def = NULL;
    swf_error_t *perr = swf_json_parse(text, strlen(text), DEFINITION_BYTES, &def);
    if (perr != NULL || !json_object_is_type(def, json_type_object)) {
        json_object *d = json_object_new_object();
        swf_json_add(d, "severity", json_object_new_string("ERROR"));
        swf_json_add(d, "code", json_object_new_string("INVALID_JSON_DESCRIPTION"));
        swf_json_add(d, "message",
                     json_object_new_string(perr ? swf_error_message(perr) : "not a JSON object"));
        swf_json_add(d, "location", json_object_new_string("/"));
        json_object_array_add(diags, d);
        swf_error_free(perr);
    } else {
        swf_asl_problems_t problems = {0};
        swf_asl_validate(def, &problems);
        for (size_t i = 0; i < problems.count; i++) {
            json_object *d = json_object_new_object();
            swf_json_add(d, "severity", json_object_new_string("ERROR"));
            swf_json_add(d, "code", json_object_new_string("SCHEMA_VALIDATION_FAILED"));
            swf_json_add(d, "message", json_object_new_string(problems.items[i].message));
            swf_json_add(d, "location", json_object_new_string(problems.items[i].where));
            json_object_array_add(diags, d);
        }
        swf_asl_problems_free(&problems);
        json_object *d = NULL;
        if (type != NULL && strcmp(type, "EXPRESS") == 0 &&
            (d = swf_api__express_diagnostic(def)) != NULL)
            json_object_array_add(diags, d);
    }
    json_object_put(def);
    *out = json_object_new_object();
    swf_json_add(*out, "result",
                 json_object_new_string(json_object_array_length(diags) ? "FAIL" : "OK"));
    swf_json_add(*out, "diagnostics", diags);
    return NULL;
}

swf_error_t *swf_api__machine_for_execution(swf_api_call_t *call, json_object *in,
                                            json_object **out)
{
    swf_history_execution_t ex = {0};
    swf_error_t *err = swf_api__execution_find(call, in, &ex);
    if (err != NULL)
        return err;
    /* The definition the execution runs is the one in its history. */
    swf_history_store_t *s;
    swf_event_list_t first = {0};
    err = swf_api__store(call, &s);
    if (err == NULL)
        err = swf_history_load(s, ex.execution_id, 0, 1, &first);
    json_object *def = NULL;
    if (err == NULL && first.count == 1)
        swf_json_get(first.items[0].attrs, "definition", &def);
    if (err == NULL) {
        swf_history_catalog_entry_t e = {.name = ex.state_machine,
                                         .created_ms = ex.start_ms,
                                         .version = atoi(ex.state_machine_version)};
        swf_history_catalog_entry_t cur = {0};
        if (swf_api__store(call, &s) == NULL &&
            swf_history_pg_state_machine_entry(s, ex.state_machine, &cur) == NULL)
            e.role_arn = cur.role_arn;
        *out = machine_json(call, &e, def);
        json_object_object_del(*out, "status");
        json_object_object_del(*out, "type");
        json_object_object_del(*out, "creationDate");
        swf_json_add(*out, "updateDate", swf_api__time(ex.start_ms));
        entry_clear(&cur);
    }
    swf_event_list_free(&first);
    swf_history_execution_free(&ex);
    return err;
}

/* ---- versions --------------------------------------------------------------------- */

/* Every CreateStateMachine and UpdateStateMachine with a definition (and
 * every `swf register`) is a version already: PublishStateMachineVersion
 * names the latest one, whose ARN is NAME:N. */
swf_error_t *swf_api__version_publish(swf_api_call_t *call, json_object *in, json_object **out)
{
    char name[SWF_API_NAME_BYTES + 1];
    swf_error_t *err = machine_arn(call, in, name);
    swf_history_catalog_entry_t e = {0};
    if (err == NULL)
        err = swf_api__machine_entry(call, name, &e);
    if (err == NULL) {
        char arn[SWF_API_ARN_BYTES], vs[16];
        snprintf(vs, sizeof(vs), "%d", e.version);
        swf_api__arn(call->api, "stateMachine", name, vs, arn);
        *out = json_object_new_object();
        swf_json_add(*out, "creationDate", swf_api__time(e.updated_ms));
        swf_json_add(*out, "stateMachineVersionArn", json_object_new_string(arn));
    }
    entry_clear(&e);
    return err;
}

/* nextToken: the version the next page starts below. */
swf_error_t *swf_api__versions_list(swf_api_call_t *call, json_object *in, json_object **out)
{
    char name[SWF_API_NAME_BYTES + 1];
    int64_t max = 100;
    long before = 0;
    swf_error_t *err = machine_arn(call, in, name);
    if (err == NULL)
        err = swf_api__max_results(in, &max);
    if (err == NULL)
        err = swf_api__page_token(in, 99999999, &before);
    swf_history_store_t *s;
    if (err == NULL)
        err = swf_api__store(call, &s);
    swf_history_catalog_entry_t *items = NULL;
    size_t n = 0;
    if (err == NULL)
        err = swf_history_pg_state_machine_versions(s, name, (int)before, (size_t)max + 1, &items,
                                                    &n);
    if (err != NULL)
        return err;
    json_object *list = json_object_new_array();
    size_t shown = n > (size_t)max ? (size_t)max : n;
    for (size_t i = 0; i < shown; i++) {
        char arn[SWF_API_ARN_BYTES], vs[16];
        snprintf(vs, sizeof(vs), "%d", items[i].version);
        swf_api__arn(call->api, "stateMachine", name, vs, arn);
        json_object *o = json_object_new_object();
        swf_json_add(o, "stateMachineVersionArn", json_object_new_string(arn));
        swf_json_add(o, "creationDate", swf_api__time(items[i].created_ms));
        json_object_array_add(list, o);
    }
    *out = json_object_new_object();
    swf_json_add(*out, "stateMachineVersions", list);
    if (n > shown) {
        char next[16];
        snprintf(next, sizeof(next), "%d", items[shown - 1].version);
        swf_json_add(*out, "nextToken", json_object_new_string(next));
    }
    swf_history_catalog_entries_free(items, n);
    return NULL;
}

swf_error_t *swf_api__version_delete(swf_api_call_t *call, json_object *in, json_object **out)
{
    char name[SWF_API_NAME_BYTES + 1];
    int version = 0;
    swf_error_t *err = swf_api__machine_arn(call, in, "stateMachineVersionArn", name, &version);
    if (err == NULL && version == 0)
        err = swf_api__err("ValidationException", "stateMachineVersionArn must name a version");
    swf_history_store_t *s;
    if (err == NULL)
        err = swf_api__store(call, &s);
    swf_history_alias_t *aliases = NULL;
    size_t n = 0;
    if (err == NULL)
        err = swf_history_pg_aliases_list(s, name, version, &aliases, &n);
    if (err == NULL && n > 0)
        err = swf_api__err("ConflictException",
                           "version %d of %s is routed to by alias %s: update or delete the "
                           "alias first",
                           version, name, aliases[0].name);
    swf_history_aliases_free(aliases, n);
    if (err == NULL)
        err = swf_history_pg_state_machine_version_delete(s, name, version);
    if (err == NULL)
        *out = json_object_new_object();
    return err;
}
