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

#include "decider/asl/env.h"
#include "protocol/error.h"

/* Limits of the JSONata evaluator (with the others of protocol/limits.h in
 * spirit; kept here because only this module enforces them). Exceeding one
 * is States.QueryEvaluationError (an SWF_E_INPUT error from the checker). */
/* Bytes of one expression (the text between {% and %}). */
#define SWF_LIMIT_JSONATA_BYTES 16384
/* Nesting depth of an expression (parentheses, constructors, operators). */
#define SWF_LIMIT_JSONATA_DEPTH 64
/* Items one range ([a..b] or $range) may produce. */
#define SWF_LIMIT_JSONATA_RANGE_ITEMS 100000
/* Nested function calls (lambdas and built-ins) of one evaluation: a
 * recursion deeper than this is an error, not a stack overflow. */
#define SWF_LIMIT_JSONATA_CALL_DEPTH 500
/* Nested evaluations (each node inside the one that uses its value, across
 * function calls): bounds the C stack the evaluator uses. */
#define SWF_LIMIT_JSONATA_EVAL_DEPTH 2000
/* Units of work of one evaluation: nodes evaluated, items visited,
 * comparisons made. About a second of work at most. */
#define SWF_LIMIT_JSONATA_STEPS 10000000
/* Bytes of new values one evaluation may build (an estimate that only
 * grows: strings, numbers, arrays, objects, sequences). Twice a payload. */
#define SWF_LIMIT_JSONATA_BUILT_BYTES (64u * 1024u * 1024u)

/* True when s is "{% ... %}". */
bool swf_asl_jsonata_is_expr(const char *s);

/* Checks the syntax of an expression (the text between {% and %}). NULL when
 * valid, else an SWF_E_INPUT error with one sentence. */
swf_error_t *swf_asl_jsonata_check(const char *expr);

/* Evaluates an expression (the text between {% and %}). `bindings` is an
 * object mapping variable names without '$' to values ({"states": {...},
 * "myVar": 1}); it may be NULL.
 *
 * The built-ins that would read a clock or draw random numbers read the
 * swf_asl_env_t (env.h) the interpreter attaches to `bindings` as its json-c
 * userdata (json_object_set_userdata), so that a replay gives the same:
 * $now() and $millis() give env->now_ms, the time of the decision being
 * made (refused where there is none), and $random(), $uuid() and $shuffle()
 * draw from env->rng (a fixed seed without one). The env is borrowed for
 * the call. */
swf_error_t *swf_asl_jsonata_eval(const char *expr, json_object *bindings, json_object **out,
                                  bool *defined);

/* Evaluates a JSON value in which "{% ... %}" strings, at any depth of
 * objects and arrays, are replaced by their values. An expression that is
 * undefined inside an object or array is States.QueryEvaluationError naming
 * the field; a whole-value expression that is undefined sets *defined false. */
swf_error_t *swf_asl_jsonata_template_eval(json_object *tmpl, json_object *bindings,
                                           json_object **out, bool *defined);

#endif
