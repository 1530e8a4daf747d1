/*
 * mocks.h - answers to activity tasks from a mocks document, for
 * `swf run --local` (decider/local.c) and `swf run --dev` (cli/dev.c's
 * mock worker).
 *
 * The document is the conformance corpus's format: an object mapping a Task
 * state's name to a non-empty array of responses, consumed in invocation
 * order per state name (the last one repeats): {"Return": JSON},
 * {"Throw": {"Error": STRING, "Cause": STRING}} (Cause optional) or
 * {"Echo": true}. A Task without mocks echoes its input.
 *
 * A mock stands for a worker, so it answers only what a worker can: a
 * result or a failure. A Throw of "States.Timeout" is a failure with that
 * error name (ActivityTaskFailed), not ActivityTaskTimedOut: a timeout is
 * recorded by the system when no answer came in time, and no worker can
 * cause one by answering. The interpreter raises the same error either
 * way, so Retry and Catch behave alike.
 *
 * Ownership: a mocks handle takes a reference to its document; answers
 * borrow from the document and live as long as the handle. Thread-safety:
 * one handle per thread (the invocation counters are not locked).
 */
#ifndef SWF_DECIDER_MOCKS_H
#define SWF_DECIDER_MOCKS_H

#include <json-c/json.h>
#include <stdbool.h>

#include "protocol/error.h"

/* Checks a mocks document before anything runs: SWF_E_INPUT naming the
 * place of the first response of another shape (which would otherwise be
 * ignored, the Task echoing its input). */
swf_error_t *swf_decider_mocks_check(json_object *doc);

typedef struct swf_decider_mocks swf_decider_mocks_t;

/* A handle over a checked document; NULL: every Task echoes its input. */
swf_decider_mocks_t *swf_decider_mocks_new(json_object *doc);
void swf_decider_mocks_free(swf_decider_mocks_t *m);

/* Whether the document has responses for the Task state `state`. */
bool swf_decider_mocks_has(const swf_decider_mocks_t *m, const char *state);

/* One answer: a result, or a failure with an error name and a cause. */
typedef struct swf_decider_mock_answer {
    bool failed;
    json_object *result; /* !failed: borrowed (the document's, or the input) */
    const char *error;   /* failed */
    const char *cause;   /* failed: "" when the Throw has none */
} swf_decider_mock_answer_t;

/* The answer to the next invocation of the Task state `state` (NULL: an
 * unnamed one, echoed) whose input is `input` (borrowed). SWF_E_INPUT when
 * the response is of no known shape (a document that was not checked). */
swf_error_t *swf_decider_mocks_answer(swf_decider_mocks_t *m, const char *state, json_object *input,
                                      swf_decider_mock_answer_t *out);

#endif
