/*
 * intrinsic.h - the States.* intrinsic functions.
 *
 * An intrinsic call is a string such as
 *   States.Format('Hello {}', $.name)
 * found as the value of a ".$" key in a payload template (or in ErrorPath,
 * CausePath, ...). Arguments are string literals in single quotes (escapes:
 * \' \{ \} \\ only), numbers, true/false/null, paths ($, $$, $var) and nested
 * calls. Every function of the AWS documentation is supported: Format,
 * StringToJson, JsonToString, Array, ArrayPartition, ArrayContains,
 * ArrayRange, ArrayGetItem, ArrayLength, ArrayUnique, Base64Encode,
 * Base64Decode, Hash (MD5, SHA-1, SHA-256, SHA-384, SHA-512), JsonMerge,
 * MathRandom, MathAdd, StringSplit, UUID.
 *
 * A failing call (wrong argument types or count, bad values) raises
 * States.IntrinsicFailure; a path argument that selects nothing raises
 * States.Runtime like any path.
 *
 * Thread-safety: reentrant.
 */
#ifndef SWF_ASL_INTRINSIC_H
#define SWF_ASL_INTRINSIC_H

#include <stdbool.h>
#include <json-c/json.h>

#include "decider/asl/env.h"
#include "protocol/error.h"

/* True when s looks like an intrinsic call ("States.X(" after optional
 * white space), as opposed to a path. */
bool swf_asl_intrinsic_is_call(const char *s);

/* Checks syntax, function names, literal escapes, the paths of arguments and
 * argument counts where they are fixed. NULL when valid; otherwise an
 * SWF_E_INPUT error with one sentence saying what is wrong. */
swf_error_t *swf_asl_intrinsic_check(const char *expr);

/* Evaluates a call. On success *out is a new reference. */
swf_error_t *swf_asl_intrinsic_eval(const char *expr, json_object *input, const swf_asl_env_t *env,
                                    json_object **out);

#endif
