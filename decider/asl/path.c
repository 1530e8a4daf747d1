/* path.c - STUB, being written. */
#include "decider/asl/path.h"
swf_error_t *swf_asl_path_check(const char *path, swf_asl_path_kind_t kind) { return NULL; }
bool swf_asl_path_is_definite(const char *path) { return true; }
swf_error_t *swf_asl_path_eval(const char *path, json_object *input, const swf_asl_env_t *env, json_object **out) { *out = NULL; return swf_error_states("States.Runtime", "not implemented"); }
swf_error_t *swf_asl_path_set(const char *path, json_object *input, json_object *value, json_object **out) { *out = NULL; return swf_error_states("States.Runtime", "not implemented"); }
