/*
 * validate.h - static validation of an ASL definition.
 *
 * Reports every problem the Amazon States Language specification (and AWS
 * CreateStateMachine) forbids, before anything runs, each with the JSON path
 * of the offending field ("$.States.Charge.Retry[1].ErrorEquals") and one
 * sentence a user understands. The interpreter only runs definitions that
 * passed, and relies on the shapes checked here.
 *
 * Thread-safety: reentrant.
 */
#ifndef SWF_ASL_VALIDATE_H
#define SWF_ASL_VALIDATE_H

#include <stddef.h>
#include <json-c/json.h>

typedef struct swf_asl_problem {
    char *where;   /* JSON path of the field, "$" for the whole definition */
    char *message; /* one sentence, no trailing period needed */
} swf_asl_problem_t;

typedef struct swf_asl_problems {
    swf_asl_problem_t *items;
    size_t count;
    size_t cap;
} swf_asl_problems_t;

/* Appends a problem (copies both strings; message is a printf format). */
void swf_asl_problems_add(swf_asl_problems_t *p, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Frees the problems; the list is empty and reusable afterwards. */
void swf_asl_problems_free(swf_asl_problems_t *p);

/* Validates a definition; appends every problem to `out`. Returns the number
 * of problems found (0: the definition is valid). */
size_t swf_asl_validate(json_object *definition, swf_asl_problems_t *out);

#endif
