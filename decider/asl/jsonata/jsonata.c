/*
 * jsonata.c - the entry points of jsonata.h. swf_asl_jsonata_check is the
 * front end alone (jn__parse); swf_asl_jsonata_eval parses, evaluates with a
 * context of its own (the bindings' env for time and randomness), and
 * refuses a function as the result, since no function is JSON; a template is
 * a JSON value in which each "{% %}" string is replaced by its value.
 */
#include "decider/asl/jsonata/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool swf_asl_jsonata_is_expr(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    return n >= 4 && s[0] == '{' && s[1] == '%' && s[n - 2] == '%' && s[n - 1] == '}';
}

swf_error_t *swf_asl_jsonata_check(const char *expr)
{
    char err[256];
    node_t *root = jn__parse(expr, err);
    if (root == NULL)
        return swf_error_new(SWF_E_INPUT, NULL, "invalid JSONata expression: %s", err);
    jn__node_free(root);
    return NULL;
}

swf_error_t *swf_asl_jsonata_eval(const char *expr, json_object *bindings, json_object **out,
                                  bool *is_defined)
{
    char msg[256];
    *out = NULL;
    *is_defined = false;
    node_t *root = jn__parse(expr, msg);
    if (root == NULL)
        return qerr("invalid JSONata expression: %s", msg);
    ctx_t ctx = {.bindings = bindings,
                 .env = bindings != NULL ? json_object_get_userdata(bindings) : NULL,
                 .fallback = {0x5eed5eed5eed5eedULL}};
    frame_t *top = jn__frame_new(NULL);
    val_t v = UNDEF;
    swf_error_t *err = jn__eval(&ctx, root, &UNDEF, top, &v);
    if (!err && jn__is_func(&v))
        err = qerr("the value of the expression is %s, not JSON", jn__func_what(&v));
    if (!err && jn__defined(&v)) {
        *out = v.j;
        v.j = NULL;
        *is_defined = true;
    }
    jn__val_free(&v);
    jn__frame_release(top);
    jn__ctx_free(&ctx);
    jn__node_free(root);
    return err;
}

/* `where` names the value for messages ("" at the top). */
static swf_error_t *template_eval(json_object *t, json_object *bindings, const char *where,
                                  int depth, json_object **out, bool *is_defined)
{
    *out = NULL;
    *is_defined = true;
    swf_error_t *err = NULL;
    if (depth > SWF_LIMIT_JSON_DEPTH)
        return qerr("the template is nested too deep");
    if (jn__is_string(t) && swf_asl_jsonata_is_expr(json_object_get_string(t))) {
        const char *s = json_object_get_string(t);
        char *expr = strndup(s + 2, strlen(s) - 4);
        if (expr == NULL)
            abort();
        err = swf_asl_jsonata_eval(expr, bindings, out, is_defined);
        free(expr);
        if (err && where[0])
            swf_error_prefix(err, "field %s", where);
        return err;
    }
    if (jn__is_object(t)) {
        json_object *obj = json_object_new_object();
        json_object_object_foreach(t, key, v)
        {
            char sub[256];
            snprintf(sub, sizeof sub, "%s%s%s", where, where[0] ? "." : "", key);
            json_object *r;
            bool d;
            if ((err = template_eval(v, bindings, sub, depth + 1, &r, &d)))
                break;
            if (!d) {
                err = qerr("the expression of field %s has no value (undefined)", sub);
                break;
            }
            json_object_object_add(obj, key, r);
        }
        if (err)
            json_object_put(obj);
        else
            *out = obj;
        return err;
    }
    if (jn__is_array(t)) {
        size_t n = json_object_array_length(t);
        json_object *arr = json_object_new_array_ext((int)n);
        for (size_t i = 0; i < n; i++) {
            char sub[256];
            snprintf(sub, sizeof sub, "%s[%zu]", where, i);
            json_object *r;
            bool d;
            if ((err = template_eval(json_object_array_get_idx(t, i), bindings, sub, depth + 1, &r,
                                     &d)))
                break;
            if (!d) {
                err = qerr("the expression of item %s has no value (undefined)", sub);
                break;
            }
            json_object_array_add(arr, r);
        }
        if (err)
            json_object_put(arr);
        else
            *out = arr;
        return err;
    }
    *out = swf_json_ref(t);
    return NULL;
}

swf_error_t *swf_asl_jsonata_template_eval(json_object *tmpl, json_object *bindings,
                                           json_object **out, bool *is_defined)
{
    swf_error_t *err = template_eval(tmpl, bindings, "", 0, out, is_defined);
    if (err) {
        json_object_put(*out);
        *out = NULL;
        *is_defined = false;
    }
    return err;
}
