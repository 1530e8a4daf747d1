/*
 * errors.c - AWS's errors, ARNs, names and request members: the small
 * rules every action shares, in one place so that they answer alike.
 *
 * Errors: an action's error carries AWS's error name (swf_error_t's name);
 * the status is AWS's for that name: 400 for everything a client did
 * (AWS's JSON protocol answers its modelled errors with 400), 413 for a
 * body over the limit, 500 for swf's own failures, 503 when PostgreSQL or
 * Kafka is away and a retry can help (the SDKs retry 503 by themselves).
 * A failure without an AWS name never shows its internals to the client:
 * the message says "internal failure" and the server's log has the rest.
 */
#include "api/internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history/catalog.h"
#include "protocol/json.h"

swf_error_t *swf_api__err(const char *aws_name, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return swf_error_new(SWF_E_INPUT, aws_name, "%s", msg);
}

int swf_api__status(const swf_error_t *err)
{
    const char *name = swf_error_name(err);
    if (name != NULL && strcmp(name, "RequestEntityTooLarge") == 0)
        return 413;
    if (name != NULL && strcmp(name, "ServiceUnavailable") == 0)
        return 503;
    if (name != NULL && strcmp(name, "ConflictException") == 0)
        return 409; /* AWS's, for aliases and versions */
    if (name != NULL && strcmp(name, "ServiceQuotaExceededException") == 0)
        return 402;
    if (name != NULL)
        return 400;
    return swf_error_retriable(err) ? 503 : 500;
}

const char *swf_api__type(const swf_error_t *err)
{
    const char *name = swf_error_name(err);
    if (name != NULL)
        return name;
    return swf_error_retriable(err) ? "ServiceUnavailable" : "InternalFailure";
}

json_object *swf_api__error_body(const swf_error_t *err)
{
    json_object *o = json_object_new_object();
    swf_json_add(o, "__type", json_object_new_string(swf_api__type(err)));
    const char *msg = swf_error_name(err) != NULL ? swf_error_message(err)
                      : swf_error_retriable(err)  ? "service unavailable, retry"
                                                  : "internal failure";
    swf_json_add(o, "message", json_object_new_string(msg));
    return o;
}

void swf_api__arn(const swf_api_t *api, const char *kind, const char *name, const char *sub,
                  char buf[SWF_API_ARN_BYTES])
{
    snprintf(buf, SWF_API_ARN_BYTES, "arn:aws:states:%s:%s:%s:%s%s%s", api->region, api->account,
             kind, name, sub != NULL ? ":" : "", sub != NULL ? sub : "");
}

swf_error_t *swf_api__arn_parse(const char *arn, const char *kind,
                                char name[SWF_API_NAME_BYTES + 1], char sub[SWF_API_NAME_BYTES + 1])
{
    name[0] = '\0';
    if (sub != NULL)
        sub[0] = '\0';
    static const char prefix[] = "arn:aws:states:";
    if (arn == NULL || strlen(arn) >= SWF_API_ARN_BYTES ||
        strncmp(arn, prefix, sizeof(prefix) - 1) != 0)
        return swf_api__err("InvalidArn", "Invalid Arn: '%s'", arn ? arn : "");
    /* REGION:ACCOUNT:KIND:NAME[:SUB]; any region and account name this
     * deployment's catalogue (one deployment is one account). */
    const char *p = arn + sizeof(prefix) - 1;
    for (int i = 0; i < 2; i++) {
        p = strchr(p, ':');
        if (p == NULL)
            return swf_api__err("InvalidArn", "Invalid Arn: '%s'", arn);
        p++;
    }
    size_t k = strlen(kind);
    if (strncmp(p, kind, k) != 0 || p[k] != ':')
        return swf_api__err("InvalidArn", "Invalid Arn: '%s': not a %s ARN", arn, kind);
    p += k + 1;
    const char *colon = strchr(p, ':');
    size_t n = colon ? (size_t)(colon - p) : strlen(p);
    if (n == 0 || n > SWF_API_NAME_BYTES || (colon != NULL && sub == NULL) ||
        (colon != NULL && (strlen(colon + 1) == 0 || strlen(colon + 1) > SWF_API_NAME_BYTES ||
                           strchr(colon + 1, ':') != NULL)))
        return swf_api__err("InvalidArn", "Invalid Arn: '%s'", arn);
    memcpy(name, p, n);
    name[n] = '\0';
    if (colon != NULL)
        strcpy(sub, colon + 1);
    return NULL;
}

swf_error_t *swf_api__machine_arn(swf_api_call_t *call, json_object *in, const char *key,
                                  char name[SWF_API_NAME_BYTES + 1], int *version)
{
    const char *arn;
    char sub[SWF_API_NAME_BYTES + 1] = "";
    swf_error_t *err = swf_api__str(in, key, true, SWF_API_ARN_BYTES, &arn);
    if (err == NULL)
        err = swf_api__arn_parse(arn, "stateMachine", name, version ? sub : NULL);
    if (err == NULL && version != NULL) {
        *version = 0;
        char *end;
        long v = sub[0] ? strtol(sub, &end, 10) : 0;
        if (sub[0] != '\0' && (*end != '\0' || v < 1 || v > 99999999))
            err = swf_api__err("InvalidArn", "Invalid Arn: '%s': a version is wanted here", arn);
        else
            *version = (int)v;
    }
    if (err == NULL)
        err = swf_api__allowed(call, "stateMachine", name);
    return err;
}

swf_error_t *swf_api__name_check(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > SWF_API_NAME_BYTES)
        return swf_api__err("InvalidName", "Invalid Name: '%s' (1 to %d characters)", name,
                            SWF_API_NAME_BYTES);
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        if (*p <= 0x20 || *p == 0x7f || strchr("<>{}[]?*\"#%\\^|~`$&,;:/", *p) != NULL)
            return swf_api__err("InvalidName",
                                "Invalid Name: '%s' (no white space, brackets, wildcards, "
                                "control or special characters)",
                                name);
    }
    return NULL;
}

swf_error_t *swf_api__str(json_object *in, const char *key, bool required, size_t max,
                          const char **out)
{
    *out = NULL;
    json_object *v;
    if (!swf_json_get(in, key, &v) || v == NULL) {
        if (required)
            return swf_api__err("ValidationException",
                                "1 validation error detected: Value null at '%s' failed to "
                                "satisfy constraint: Member must not be null",
                                key);
        return NULL;
    }
    if (!json_object_is_type(v, json_type_string))
        return swf_api__err("ValidationException", "'%s' must be a string", key);
    if ((size_t)json_object_get_string_len(v) > max)
        return swf_api__err("ValidationException",
                            "1 validation error detected: Value at '%s' failed to satisfy "
                            "constraint: Member must have length less than or equal to %zu",
                            key, max);
    if (swf_json_holds_nul(v))
        return swf_api__err("ValidationException", "'%s' holds U+0000", key);
    *out = json_object_get_string(v);
    return NULL;
}

swf_error_t *swf_api__int(json_object *in, const char *key, int64_t lo, int64_t hi, int64_t *out)
{
    json_object *v;
    if (!swf_json_get(in, key, &v) || v == NULL)
        return NULL;
    int64_t x;
    if (!swf_json_as_int64(v, &x) || x < lo || x > hi)
        return swf_api__err("ValidationException",
                            "1 validation error detected: Value at '%s' failed to satisfy "
                            "constraint: Member must be an integer from %lld to %lld",
                            key, (long long)lo, (long long)hi);
    *out = x;
    return NULL;
}

swf_error_t *swf_api__bool(json_object *in, const char *key, bool *out)
{
    json_object *v;
    if (!swf_json_get(in, key, &v) || v == NULL)
        return NULL;
    if (!json_object_is_type(v, json_type_boolean))
        return swf_api__err("ValidationException", "'%s' must be a boolean", key);
    *out = json_object_get_boolean(v);
    return NULL;
}

swf_error_t *swf_api__max_results(json_object *in, int64_t *max)
{
    *max = 0;
    swf_error_t *err = swf_api__int(in, "maxResults", 0, 1000, max);
    if (*max == 0)
        *max = 100;
    return err;
}

swf_error_t *swf_api__page_token(json_object *in, long max_offset, long *offset)
{
    *offset = 0;
    const char *token;
    swf_error_t *err = swf_api__str(in, "nextToken", false, SWF_API_TOKEN_BYTES, &token);
    if (err != NULL || token == NULL)
        return err;
    char *end;
    long v = strtol(token, &end, 10);
    if (end == token || *end != '\0' || v < 0 || v > max_offset)
        return swf_api__err("InvalidToken", "Invalid Token: '%.100s'", token);
    *offset = v;
    return NULL;
}

swf_error_t *swf_api__names_page(swf_api_call_t *call, json_object *in, const char *kind,
                                 swf_api__list_fn list, swf_api__item_fn item, const char *member,
                                 json_object **out)
{
    int64_t max = 100;
    const char *token = NULL;
    swf_error_t *err = swf_api__max_results(in, &max);
    if (err == NULL)
        err = swf_api__str(in, "nextToken", false, SWF_API_TOKEN_BYTES, &token);
    /* The token is the last name of the page before: anything else is not
     * one this server gave. */
    swf_error_t *bad = token != NULL ? swf_api__name_check(token) : NULL;
    if (err == NULL && bad != NULL)
        err = swf_api__err("InvalidToken", "Invalid Token: '%.100s'", token);
    swf_error_free(bad);
    swf_history_store_t *s;
    if (err == NULL)
        err = swf_api__store(call, &s);
    swf_history_catalog_entry_t *items = NULL;
    size_t n = 0;
    if (err == NULL)
        err = list(s, token, (size_t)max + 1, &items, &n);
    if (err != NULL)
        return err;
    json_object *page = json_object_new_array();
    size_t shown = n > (size_t)max ? (size_t)max : n;
    for (size_t i = 0; i < shown; i++)
        if (swf_api_credentials_allows(call->api->creds, call->key, kind, items[i].name))
            json_object_array_add(page, item(call, &items[i]));
    *out = json_object_new_object();
    json_object_object_add(*out, member, page);
    if (n > shown)
        swf_json_add(*out, "nextToken", json_object_new_string(items[shown - 1].name));
    swf_history_catalog_entries_free(items, n);
    return NULL;
}

swf_error_t *swf_api__allowed(swf_api_call_t *call, const char *kind, const char *name)
{
    if (swf_api_credentials_allows(call->api->creds, call->key, kind, name))
        return NULL;
    return swf_api__err("AccessDeniedException",
                        "User %s is not authorized to access this resource: %s:%s", call->key, kind,
                        name ? name : "*");
}

json_object *swf_api__time(int64_t ms)
{
    return json_object_new_double((double)ms / 1000.0);
}
