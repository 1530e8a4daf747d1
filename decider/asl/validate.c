/* validate.c - STUB, being written. */
#include "decider/asl/validate.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
void swf_asl_problems_add(swf_asl_problems_t *p, const char *where, const char *fmt, ...) { (void)p; (void)where; (void)fmt; }
void swf_asl_problems_free(swf_asl_problems_t *p) { p->count = 0; }
size_t swf_asl_validate(json_object *definition, swf_asl_problems_t *out) { return 0; }
