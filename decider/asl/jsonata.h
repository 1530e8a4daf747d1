/*
 * jsonata.h - the JSONata query language, as ASL's QueryLanguage "JSONata"
 * uses it.
 *
 * In a JSONata state, a string of the form "{% EXPR %}" (the whole string,
 * after trimming nothing: "{%" first, "%}" last) is an expression; any other
 * string is literal. Expressions read variables: $states (input, result,
 * errorOutput, context) and the workflow variables, all passed as bindings.
 *
 * JSONata distinguishes "undefined" (no value) from null; evaluation reports
 * it through *defined. A failed evaluation, or an undefined value where a
 * value is needed, is States.QueryEvaluationError.
 *
 * Thread-safety: reentrant. Ownership: arguments borrowed; *out is a new
 * reference.
 */
#ifndef SWF_ASL_JSONATA_H
#define SWF_ASL_JSONATA_H

#include <stdbool.h>
#include <json-c/json.h>

#include "protocol/error.h"

/* True when s is "{% ... %}". */
bool swf_asl_jsonata_is_expr(const char *s);

/* Checks the syntax of an expression (the text between {% and %}). NULL when
 * valid, else an SWF_E_INPUT error with one sentence. */
swf_error_t *swf_asl_jsonata_check(const char *expr);

/* Evaluates an expression (the text between {% and %}). `bindings` is an
 * object mapping variable names without '$' to values ({"states": {...},
 * "myVar": 1}); it may be NULL. */
swf_error_t *swf_asl_jsonata_eval(const char *expr, json_object *bindings, json_object **out,
                                  bool *defined);

/* Evaluates a JSON value in which "{% ... %}" strings, at any depth of
 * objects and arrays, are replaced by their values. An expression that is
 * undefined inside an object or array is States.QueryEvaluationError naming
 * the field; a whole-value expression that is undefined sets *defined false. */
swf_error_t *swf_asl_jsonata_template_eval(json_object *tmpl, json_object *bindings,
                                           json_object **out, bool *defined);

#endif
