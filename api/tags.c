/*
 * tags.c - TagResource, UntagResource, ListTagsForResource, and the tags
 * CreateStateMachine and CreateActivity take.
 *
 * Tags belong to a state machine or an activity by name (history/
 * catalog.h), not by ARN, so a region or account configured differently
 * later still finds them. AWS's bounds: 50 tags per resource, keys of 1 to
 * 128 characters, values of at most 256.
 */
#include "api/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history/catalog.h"
#include "protocol/json.h"

#define TAG_KEY_BYTES 128
#define TAG_VALUE_BYTES 256

/* The catalogue's name of the resource a resourceArn names, once it is
 * known to exist and the key may use it. */
static swf_error_t *resource_of(swf_api_call_t *call, json_object *in, char *out, size_t cap)
{
    const char *arn;
    swf_error_t *err = swf_api__str(in, "resourceArn", true, SWF_API_ARN_BYTES, &arn);
    if (err != NULL)
        return err;
    char name[SWF_API_NAME_BYTES + 1];
    const char *kind = strstr(arn, ":activity:") != NULL ? "activity" : "stateMachine";
    err = swf_api__arn_parse(arn, kind, name, NULL);
    if (err == NULL)
        err = swf_api__allowed(call, kind, name);
    swf_history_store_t *s;
    if (err == NULL)
        err = swf_api__store(call, &s);
    swf_history_catalog_entry_t e = {0};
    if (err == NULL)
        err = strcmp(kind, "activity") == 0 ? swf_history_pg_activity_entry(s, name, &e)
                                            : swf_history_pg_state_machine_entry(s, name, &e);
    free(e.name);
    free(e.role_arn);
    free(e.type);
    if (err != NULL && swf_error_code(err) == SWF_E_NOTFOUND) {
        swf_error_free(err);
        return swf_api__err("ResourceNotFound", "Resource not found: '%s'", arn);
    }
    if (err == NULL)
        snprintf(out, cap, "%s:%s", kind, name);
    return err;
}

swf_error_t *swf_api__tags_apply(swf_api_call_t *call, const char *kind, const char *name,
                                 json_object *in)
{
    json_object *list = NULL;
    if (!swf_json_get(in, "tags", &list) || list == NULL)
        return NULL;
    if (!json_object_is_type(list, json_type_array))
        return swf_api__err("ValidationException", "'tags' must be a list");
    size_t n = json_object_array_length(list);
    if (n > SWF_HISTORY_TAGS)
        return swf_api__err("TooManyTags", "more than %d tags", SWF_HISTORY_TAGS);
    swf_history_tag_t tags[SWF_HISTORY_TAGS];
    swf_error_t *err = NULL;
    for (size_t i = 0; i < n && err == NULL; i++) {
        json_object *t = json_object_array_get_idx(list, i);
        const char *k = NULL, *v = NULL;
        err = swf_api__str(t, "key", true, TAG_KEY_BYTES, &k);
        if (err == NULL)
            err = swf_api__str(t, "value", false, TAG_VALUE_BYTES, &v);
        if (err == NULL && k[0] == '\0')
            err = swf_api__err("ValidationException", "a tag key must not be empty");
        tags[i] = (swf_history_tag_t){(char *)k, (char *)(v ? v : "")};
    }
    swf_history_store_t *s;
    if (err == NULL)
        err = swf_api__store(call, &s);
    char resource[SWF_API_NAME_BYTES + 32];
    snprintf(resource, sizeof(resource), "%s:%s", kind, name);
    if (err == NULL)
        err = swf_history_pg_tags_set(s, resource, tags, n);
    if (err != NULL && swf_error_code(err) == SWF_E_LIMIT) {
        swf_error_free(err);
        err = swf_api__err("TooManyTags", "more than %d tags on %s", SWF_HISTORY_TAGS, resource);
    }
    return err;
}

swf_error_t *swf_api__tag_resource(swf_api_call_t *call, json_object *in, json_object **out)
{
    char resource[SWF_API_NAME_BYTES + 32];
    swf_error_t *err = resource_of(call, in, resource, sizeof(resource));
    if (err == NULL) {
        char *colon = strchr(resource, ':');
        *colon = '\0';
        err = swf_api__tags_apply(call, resource, colon + 1, in);
    }
    if (err == NULL)
        *out = json_object_new_object();
    return err;
}

swf_error_t *swf_api__untag_resource(swf_api_call_t *call, json_object *in, json_object **out)
{
    char resource[SWF_API_NAME_BYTES + 32];
    swf_error_t *err = resource_of(call, in, resource, sizeof(resource));
    json_object *list = NULL;
    if (err == NULL &&
        (!swf_json_get(in, "tagKeys", &list) || !json_object_is_type(list, json_type_array) ||
         json_object_array_length(list) > SWF_HISTORY_TAGS))
        err = swf_api__err("ValidationException", "'tagKeys' must be a list of at most %d keys",
                           SWF_HISTORY_TAGS);
    const char *keys[SWF_HISTORY_TAGS];
    size_t n = err == NULL ? json_object_array_length(list) : 0;
    for (size_t i = 0; i < n && err == NULL; i++) {
        json_object *k = json_object_array_get_idx(list, i);
        if (!json_object_is_type(k, json_type_string) ||
            json_object_get_string_len(k) > TAG_KEY_BYTES)
            err = swf_api__err("ValidationException", "a tag key must be a string of at most %d",
                               TAG_KEY_BYTES);
        else
            keys[i] = json_object_get_string(k);
    }
    swf_history_store_t *s;
    if (err == NULL)
        err = swf_api__store(call, &s);
    if (err == NULL)
        err = swf_history_pg_tags_remove(s, resource, keys, n);
    if (err == NULL)
        *out = json_object_new_object();
    return err;
}

swf_error_t *swf_api__tags_list(swf_api_call_t *call, json_object *in, json_object **out)
{
    char resource[SWF_API_NAME_BYTES + 32];
    swf_error_t *err = resource_of(call, in, resource, sizeof(resource));
    swf_history_store_t *s;
    if (err == NULL)
        err = swf_api__store(call, &s);
    swf_history_tag_t *tags = NULL;
    size_t n = 0;
    if (err == NULL)
        err = swf_history_pg_tags_list(s, resource, &tags, &n);
    if (err != NULL)
        return err;
    json_object *list = json_object_new_array();
    for (size_t i = 0; i < n; i++) {
        json_object *t = json_object_new_object();
        swf_json_add(t, "key", json_object_new_string(tags[i].key));
        swf_json_add(t, "value", json_object_new_string(tags[i].value));
        json_object_array_add(list, t);
    }
    swf_history_tags_free(tags, n);
    *out = json_object_new_object();
    swf_json_add(*out, "tags", list);
    return NULL;
}
