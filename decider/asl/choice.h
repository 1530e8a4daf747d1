/*
 * choice.h - Choice state rules.
 *
 * A rule is a comparison (Variable plus one operator: StringEquals,
 * StringEqualsPath, StringLessThan[Equals][Path], StringGreaterThan[Equals]
 * [Path], StringMatches, NumericEquals[Path], NumericLessThan[Equals][Path],
 * NumericGreaterThan[Equals][Path], BooleanEquals[Path], TimestampEquals
 * [Path], TimestampLessThan[Equals][Path], TimestampGreaterThan[Equals]
 * [Path], IsNull, IsPresent, IsNumeric, IsString, IsBoolean, IsTimestamp) or
 * a combination (And, Or, Not). A value of the wrong type never matches (no
 * coercion); strings order by UTF-16 code units, as Java's compareTo;
 * StringMatches treats only '*' as special (escape with \\*, \\\\ for a
 * backslash). A Variable (or *Path operand) that selects nothing is
 * States.Runtime, except under IsPresent.
 *
 * Thread-safety: reentrant.
 */
#ifndef SWF_ASL_CHOICE_H
#define SWF_ASL_CHOICE_H

#include <stdbool.h>
#include <json-c/json.h>

#include "decider/asl/env.h"
#include "protocol/error.h"

/* Evaluates one rule (top-level or nested; Next is ignored) against input. */
swf_error_t *swf_asl_choice_rule_eval(json_object *rule, json_object *input,
                                      const swf_asl_env_t *env, bool *matched);

/* Evaluates a Choice state's Choices in order. *rule is set to the first
 * matching rule (borrowed from `state`), or NULL when none matched (the
 * caller applies Default or raises States.NoChoiceMatched). */
swf_error_t *swf_asl_choice_eval(json_object *state, json_object *input, const swf_asl_env_t *env,
                                 json_object **rule);

#endif
