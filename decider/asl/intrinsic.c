/* intrinsic.c - STUB, being written. */
#include "decider/asl/intrinsic.h"
bool swf_asl_intrinsic_is_call(const char *s) { return false; }
swf_error_t *swf_asl_intrinsic_check(const char *expr) { return NULL; }
swf_error_t *swf_asl_intrinsic_eval(const char *expr, json_object *input, const swf_asl_env_t *env, json_object **out) { *out = NULL; return swf_error_states("States.IntrinsicFailure", "not implemented"); }
