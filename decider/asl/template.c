/* template.c - STUB, being written. */
#include "decider/asl/template.h"
swf_error_t *swf_asl_expr_eval(const char *expr, json_object *input, const swf_asl_env_t *env, json_object **out) { *out = NULL; return swf_error_states("States.Runtime", "not implemented"); }
swf_error_t *swf_asl_template_eval(json_object *tmpl, json_object *input, const swf_asl_env_t *env, json_object **out) { *out = NULL; return swf_error_states("States.Runtime", "not implemented"); }
