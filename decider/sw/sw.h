/*
 * sw.h - CNCF Serverless Workflow 0.1 documents on the ASL engine.
 *
 * The language is ../shared/serverless-workflow/SPEC.md (every Decision
 * there is binding); decider/sw/README.md says how it is built. A
 * definition is a Serverless Workflow document when its top-level object
 * has a member "states" (lower case, SPEC 1). Such a document is validated
 * completely by swf_sw_validate() (SPEC 13), then translated by
 * swf_sw_translate() into the interpreter's own form: an ASL state machine
 * that uses a few internal extensions (README.md, "The interpreter form"),
 * which the interpreter runs with its Serverless Workflow dialect switched
 * on. The ASL interpreter does the translation itself when it applies a
 * WorkflowExecutionStarted event whose definition is a Serverless Workflow
 * document, so histories keep the document as written and replay derives
 * the same machine from it.
 *
 * Ownership: arguments are borrowed; swf_sw_translate() returns a new
 * reference. Thread-safety: reentrant.
 */
#ifndef SWF_SW_H
#define SWF_SW_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

#include "decider/asl/exec.h"
#include "decider/asl/validate.h"

/* The marker member of a translated machine (README.md): its value is the
 * language version, "0.1". */
#define SWF_SW_MARKER "swf:ServerlessWorkflow"

/* True when `doc` is an object with a member "states" (SPEC 1). */
bool swf_sw_is_document(json_object *doc);

/* Validates a Serverless Workflow document (SPEC 13); appends every problem
 * to `out`, each with the JSON path of the offending field. Returns the
 * number of problems (0: valid). */
size_t swf_sw_validate(json_object *doc, swf_asl_problems_t *out);

/* Validates either language: Serverless Workflow when swf_sw_is_document(),
 * ASL (swf_asl_validate) otherwise. */
size_t swf_sw_validate_any(json_object *doc, swf_asl_problems_t *out);

/* The interpreter form of a valid document (a new reference). NULL when
 * the document is not valid. */
json_object *swf_sw_translate(json_object *doc);

/* The picture form of a valid document, for `swf graph` (picture.c): the
 * document's states as an ASL-shaped machine that is drawn, never run. A
 * new reference; NULL when the document is not valid. */
json_object *swf_sw_picture(json_object *doc);

/* What an execution would do with a CloudEvent now (SPEC 11, interp.c),
 * without doing it: a waiting state records it, the instance keeps it as
 * pending, or it is dropped, *why saying why (a static string). `ex` has
 * had its history applied. */
typedef enum swf_sw_fate { SWF_SW_DROPPED, SWF_SW_RECORDED, SWF_SW_KEPT } swf_sw_fate_t;
swf_sw_fate_t swf_sw_event_fate(swf_asl_exec_t *ex, json_object *ce, const char **why);

/* Where an open instance stands for routing, for the PostgreSQL
 * projection sw_instances (history/migrations.c, migration 10): a new
 * object {"correlation": its correlation value or null, "waits": [the
 * trigger names a waiting state would record now, in trigger-defs order]},
 * or NULL when `ex` is not a running Serverless Workflow instance. The
 * decider puts it in DecisionTaskCompleted as "swRoute". */
json_object *swf_sw_route_state(swf_asl_exec_t *ex);

/* The trigger a well-formed CloudEvent belongs to in the document (SPEC
 * 4): true with *name (borrowed from `doc`) and *value (its correlation
 * value, a new reference, or NULL when the trigger has no token); false
 * when it belongs to none (malformed, no trigger fits, or its token selects
 * nothing or null). */
bool swf_sw_event_trigger(json_object *doc, json_object *ce, const char **name,
                          json_object **value);

/* True when an event no instance takes would start a new instance of the
 * document: it belongs to a trigger (SPEC 4) named in an expression of the
 * top-level start state, which is an EVENT state (SPEC 11). */
bool swf_sw_event_starts(json_object *doc, json_object *ce);

/* Reference paths (SPEC 2): true when `path` is one; names_only also
 * refuses index segments (ResultPath). */
bool swf_sw_path_valid(const char *path, bool names_only);

#endif
