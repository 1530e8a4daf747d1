/*
 * template.c - payload templates: Parameters, ResultSelector, ItemSelector
 * and the Arguments of JSONPath Task states.
 *
 * A template is evaluated by walking it once. The walk is copy-on-write:
 * a subtree with no ".$" key anywhere in it is returned as a new reference
 * to the template's own subtree, and a container is only rebuilt from the
 * first child that changed. A Map that runs the same ItemSelector over
 * 100,000 items therefore allocates only the parts that differ per item,
 * and static parts are shared, which is safe because values are immutable.
 *
 * Errors of a path inside a template keep their name (States.Runtime) and
 * gain the key, as AWS words it: "the JSONPath '$.x' specified for the field
 * 'x.$' could not be found in the input '...'".
 */
#include "decider/asl/template.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decider/asl/intrinsic.h"
#include "decider/asl/path.h"
#include "protocol/json.h"
#include "protocol/limits.h"

swf_error_t *swf_asl_expr_eval(const char *expr, json_object *input, const swf_asl_env_t *env,
                               json_object **out)
{
    *out = NULL;
    if (swf_asl_intrinsic_is_call(expr))
        return swf_asl_intrinsic_eval(expr, input, env, out);
    return swf_asl_path_eval(expr, input, env, out);
}

/* Rewrites err so that it names the template key. A path error's message,
 * "the JSONPath 'P' could not be found ...", gets "specified for the field
 * 'K'" inserted; any other error is prefixed with the field. */
static swf_error_t *error_name_field(swf_error_t *err, const char *key)
{
    const char *msg = swf_error_message(err);
    const char *marker = " could not be found";
    const char *at = strstr(msg, marker);
    if (swf_error_code(err) != SWF_E_STATES || strncmp(msg, "the JSONPath '", 14) != 0 ||
        at == NULL) {
        swf_error_prefix(err, "the field '%s'", key);
        return err;
    }
    swf_error_t *named = swf_error_states(
        swf_error_name(err), "%.*s specified for the field '%s'%s", (int)(at - msg), msg, key, at);
    if (swf_error_cause(err) != NULL)
        swf_error_set_cause(named, swf_error_cause(err));
    swf_error_set_retriable(named, swf_error_retriable(err));
    swf_error_free(err);
    return named;
}

static swf_error_t *template_walk(json_object *tmpl, json_object *input, const swf_asl_env_t *env,
                                  int depth, json_object **out);

/* Evaluates one ".$" entry: the value must be a string expression. */
static swf_error_t *template_expr(const char *key, json_object *val, json_object *input,
                                  const swf_asl_env_t *env, json_object **out)
{
    *out = NULL;
    if (!json_object_is_type(val, json_type_string))
        return swf_error_states("States.Runtime",
                                "the value of the field '%s' must be a string (a path or an "
                                "intrinsic function), not a %s",
                                key, swf_json_type_name(val));
    swf_error_t *err = swf_asl_expr_eval(json_object_get_string(val), input, env, out);
    if (err != NULL)
        err = error_name_field(err, key);
    return err;
}

static swf_error_t *template_object(json_object *tmpl, json_object *input, const swf_asl_env_t *env,
                                    int depth, json_object **out)
{
    json_object *copy = NULL; /* created at the first entry that differs */
    json_object *val_out = NULL;
    char *name = NULL;
    size_t name_cap = 0;
    swf_error_t *err = NULL;
    size_t index = 0;

    json_object_object_foreach(tmpl, key, val)
    {
        size_t klen = strlen(key);
        bool dynamic = klen >= 2 && key[klen - 2] == '.' && key[klen - 1] == '$';
        if (dynamic) {
            err = template_expr(key, val, input, env, &val_out);
        } else if (json_object_is_type(val, json_type_object) ||
                   json_object_is_type(val, json_type_array)) {
            err = template_walk(val, input, env, depth + 1, &val_out);
        } else {
            val_out = swf_json_ref(val);
        }
        if (err != NULL)
            goto done;
        if (copy == NULL && (dynamic || val_out != val)) {
            /* The first change: copy the entries before this one. */
            copy = json_object_new_object();
            if (copy == NULL)
                goto nomem;
            size_t k = 0;
            json_object_object_foreach(tmpl, key2, val2)
            {
                if (k++ == index)
                    break;
                json_object_object_add(copy, key2, swf_json_ref(val2));
            }
        }
        if (copy != NULL) {
            const char *out_key = key;
            if (dynamic) {
                if (klen - 1 > name_cap) {
                    free(name);
                    name_cap = klen < 64 ? 64 : klen;
                    name = malloc(name_cap);
                    if (name == NULL)
                        goto nomem;
                }
                memcpy(name, key, klen - 2);
                name[klen - 2] = '\0';
                out_key = name;
            }
            if (json_object_object_add(copy, out_key, val_out) != 0)
                goto nomem;
        } else {
            json_object_put(val_out);
        }
        val_out = NULL;
        index++;
    }
    *out = copy != NULL ? copy : json_object_get(tmpl);
    copy = NULL;
    goto done;
nomem:
    err = swf_error_new(SWF_E_NOMEM, NULL, "out of memory");
done:
    json_object_put(val_out);
    json_object_put(copy);
    free(name);
    return err;
}

static swf_error_t *template_array(json_object *tmpl, json_object *input, const swf_asl_env_t *env,
                                   int depth, json_object **out)
{
    json_object *copy = NULL;
    json_object *val_out = NULL;
    swf_error_t *err = NULL;
    size_t len = json_object_array_length(tmpl);

    for (size_t i = 0; i < len; i++) {
        json_object *val = json_object_array_get_idx(tmpl, i);
        if (json_object_is_type(val, json_type_object) ||
            json_object_is_type(val, json_type_array)) {
            err = template_walk(val, input, env, depth + 1, &val_out);
            if (err != NULL)
                goto done;
        } else {
            val_out = swf_json_ref(val);
        }
        if (copy == NULL && val_out != val) {
            copy = json_object_new_array_ext((int)len);
            if (copy == NULL)
                goto nomem;
            for (size_t k = 0; k < i; k++)
                json_object_array_add(copy, swf_json_ref(json_object_array_get_idx(tmpl, k)));
        }
        if (copy != NULL) {
            if (json_object_array_add(copy, val_out) != 0)
                goto nomem;
        } else {
            json_object_put(val_out);
        }
        val_out = NULL;
    }
    *out = copy != NULL ? copy : json_object_get(tmpl);
    copy = NULL;
    goto done;
nomem:
    err = swf_error_new(SWF_E_NOMEM, NULL, "out of memory");
done:
    json_object_put(val_out);
    json_object_put(copy);
    return err;
}

static swf_error_t *template_walk(json_object *tmpl, json_object *input, const swf_asl_env_t *env,
                                  int depth, json_object **out)
{
    *out = NULL;
    /* Definitions are parsed with a depth limit, so this only guards
     * templates built some other way. */
    if (depth > SWF_LIMIT_JSON_DEPTH)
        return swf_error_new(SWF_E_LIMIT, NULL, "a payload template is nested deeper than %d",
                             SWF_LIMIT_JSON_DEPTH);
    if (json_object_is_type(tmpl, json_type_object))
        return template_object(tmpl, input, env, depth, out);
    if (json_object_is_type(tmpl, json_type_array))
        return template_array(tmpl, input, env, depth, out);
    *out = swf_json_ref(tmpl);
    return NULL;
}

swf_error_t *swf_asl_template_eval(json_object *tmpl, json_object *input, const swf_asl_env_t *env,
                                   json_object **out)
{
    return template_walk(tmpl, input, env, 0, out);
}
