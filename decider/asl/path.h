/*
 * path.h - JSONPath as ASL uses it (Jayway JsonPath syntax), and Reference
 * Paths.
 *
 * A path starts with "$" (the effective input), "$$" (the context object) or
 * "$name" (a workflow variable, from Assign). Supported: dot and bracket
 * notation ($.a.b, $['a b'], $["a"]), array indexes (negative too), slices
 * ([1:3], [::2]), wildcards (.*, [*]), unions ([0,2], ['a','b']), deep scan
 * (..name, ..*), and filters ([?(@.price < 10)], with ==, !=, <, <=, >, >=,
 * =~ /regex/ not supported, &&, ||, !, parentheses, existence [?(@.isbn)],
 * string/number/boolean/null literals, and @ paths).
 *
 * A path is *definite* when it can select at most one node (no wildcard,
 * slice, union, filter or deep scan); a Reference Path is a definite path
 * made only of field names and indexes (ResultPath, *Path fields).
 *
 * Evaluation: a definite path returns the one value it selects; one that
 * selects nothing is States.Runtime. An indefinite path returns an array of
 * all matches, in document order, possibly empty.
 *
 * Thread-safety: all functions are reentrant.
 */
#ifndef SWF_ASL_PATH_H
#define SWF_ASL_PATH_H

#include <stdbool.h>
#include <json-c/json.h>

#include "decider/asl/env.h"
#include "protocol/error.h"

typedef enum swf_asl_path_kind {
    SWF_ASL_PATH_ANY,       /* any JSONPath */
    SWF_ASL_PATH_REFERENCE, /* a Reference Path */
} swf_asl_path_kind_t;

/* Checks the syntax of a path. NULL when it is valid; otherwise an
 * SWF_E_INPUT error whose message is one sentence saying what is wrong
 * ("a Reference Path cannot contain a filter"). Does not say where: the
 * caller prefixes the JSON path of the field. */
swf_error_t *swf_asl_path_check(const char *path, swf_asl_path_kind_t kind);

/* True when the path is definite (see above). The path must be valid. */
bool swf_asl_path_is_definite(const char *path);

/* Evaluates a path. "$..." reads `input`, "$$..." reads env->context,
 * "$name..." reads env->variables. On success *out is a new reference.
 * Errors: States.Runtime naming the path when a definite path selects
 * nothing (or steps into a scalar, or a variable is undefined). */
swf_error_t *swf_asl_path_eval(const char *path, json_object *input, const swf_asl_env_t *env,
                               json_object **out);

/* Applies a ResultPath: *out is a new value equal to `input` with `value`
 * placed at `path` (a Reference Path starting with "$"), creating missing
 * intermediate objects; "$" gives `value` itself. `input` is not modified
 * (objects on the way to the target are copied, the rest is shared).
 * Errors: States.ResultPathMatchFailure when the path cannot be applied
 * (a field on a non-object, an index out of range or on a non-array). */
swf_error_t *swf_asl_path_set(const char *path, json_object *input, json_object *value,
                              json_object **out);

#endif
