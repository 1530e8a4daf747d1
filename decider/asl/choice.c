/* choice.c - STUB, being written. */
#include "decider/asl/choice.h"
swf_error_t *swf_asl_choice_rule_eval(json_object *rule, json_object *input, const swf_asl_env_t *env, bool *matched) { *matched = false; return swf_error_states("States.Runtime", "not implemented"); }
swf_error_t *swf_asl_choice_eval(json_object *state, json_object *input, const swf_asl_env_t *env, json_object **rule) { *rule = NULL; return swf_error_states("States.Runtime", "not implemented"); }
