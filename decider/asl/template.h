/*
 * template.h - payload templates (Parameters, ResultSelector, ItemSelector,
 * and the Arguments of JSONPath Task states).
 *
 * A template is any JSON value. Inside objects (at any depth, including
 * objects inside arrays), a key ending in ".$" is replaced by the key without
 * the suffix, and its value (a string) is evaluated: a path ("$...", "$$...",
 * "$var...") or an intrinsic call. Every other value is copied literally.
 *
 * Thread-safety: reentrant.
 */
#ifndef SWF_ASL_TEMPLATE_H
#define SWF_ASL_TEMPLATE_H

#include <json-c/json.h>

#include "decider/asl/env.h"
#include "protocol/error.h"

/* Evaluates a ".$" value: an intrinsic call or a path. *out: new reference. */
swf_error_t *swf_asl_expr_eval(const char *expr, json_object *input, const swf_asl_env_t *env,
                               json_object **out);

/* Evaluates a template against input. *out: new reference. Errors are those
 * of paths and intrinsics, with the key named in the message. */
swf_error_t *swf_asl_template_eval(json_object *tmpl, json_object *input, const swf_asl_env_t *env,
                                   json_object **out);

#endif
