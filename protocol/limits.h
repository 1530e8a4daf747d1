/*
 * limits.h - every bound on input from outside, in one place.
 *
 * Each limit is a compile-time default; the ones marked "configurable" can be
 * overridden where the component that enforces them is configured. Exceeding
 * a limit is always a clear SWF_E_LIMIT error, never a crash or a hang.
 * AWS Step Functions' own quotas are given where ours follow them.
 */
#ifndef SWF_PROTOCOL_LIMITS_H
#define SWF_PROTOCOL_LIMITS_H

/* Bytes of one JSON document read from a file, stdin or the command line
 * (definitions, inputs, mocks, exported histories are read line by line). */
#define SWF_LIMIT_JSON_BYTES (64u * 1024u * 1024u)

/* Bytes of an execution input, a state's input or output, or a task result,
 * as parsed. A state's output is further bounded by the execution's state
 * data limit: AWS's 256 KiB by default, at most this much
 * (SWF_STATE_DATA_LIMIT_BYTES, protocol/started.h). */
#define SWF_LIMIT_PAYLOAD_BYTES (32u * 1024u * 1024u)

/* Bytes of a Task's input (after InputPath and Parameters, or Arguments)
 * when it is scheduled: the activity task travels as one Kafka message of
 * at most 1 MiB (protocol/message.h), and 64 KiB of it are kept for the
 * task's other fields (token, ids, state path). A larger input fails the
 * state with States.DataLimitExceeded, as AWS fails a task input over its
 * 256 KiB quota, instead of leaving a task no worker can receive. */
#define SWF_LIMIT_TASK_INPUT_BYTES (960u * 1024u)

/* Bytes of one Kafka message of the protocol (KAFKA.md: at most 1 MiB),
 * read or written by any process, the worker library's included. */
#define SWF_LIMIT_MESSAGE_BYTES (1024u * 1024u)

/* Bytes of an id, a name or an error name inside a message. */
#define SWF_LIMIT_MESSAGE_NAME_BYTES 256

/* Bytes of an error cause or a reason (AWS: 32,768 characters). */
#define SWF_LIMIT_CAUSE_BYTES 32768

/* Nesting depth of any JSON document we parse (json-c's tokener depth). */
#define SWF_LIMIT_JSON_DEPTH 512

/* Bytes of an ASL definition. AWS: 1 MiB. */
#define SWF_LIMIT_DEFINITION_BYTES (1024u * 1024u)

/* States in one definition, counting those inside Parallel branches and Map
 * processors. */
#define SWF_LIMIT_STATES 10000

/* Events in one history. AWS Standard workflows: 25,000; ours is larger so
 * that a Map over 100,000 items fits in one execution. As on AWS, an
 * execution fails (States.Runtime) rather than outgrow it: a decision that
 * would leave too little room for the answers still to come fails it
 * instead (decider/asl/exec.c, history_limit_check). */
#define SWF_LIMIT_HISTORY_EVENTS 2000000

/* Seconds of a Task's TimeoutSeconds or HeartbeatSeconds and of a Wait's
 * Seconds, written in the definition or selected at run time by a *Path
 * or a JSONata expression (AWS: 99,999,999). A value past it fails the
 * state with States.Runtime. */
#define SWF_LIMIT_STATE_SECONDS 99999999
/* Seconds of any timer or timeout a history stores: a Wait's Timestamp may
 * be as late as the year 9999 (RFC 3339), and PostgreSQL's intervals hold
 * this much (about 31,700 years) with room. An append with more is
 * refused. */
#define SWF_LIMIT_TIMER_SECONDS 1e12
/* Executions nested in one another (a child started by a startExecution
 * Task counts one more than its parent); AWS has no such bound, but a
 * machine that starts itself would otherwise never end. */
#define SWF_LIMIT_NESTED_DEPTH 32

/* Items of one Map state. */
#define SWF_LIMIT_MAP_ITEMS 1000000

/* Bytes of a JSONPath or intrinsic function expression. */
#define SWF_LIMIT_PATH_BYTES 4096

/* Nesting depth of intrinsic function calls. */
#define SWF_LIMIT_INTRINSIC_DEPTH 16

/* Items States.ArrayRange may produce (AWS: 1000). */
#define SWF_LIMIT_ARRAY_RANGE_ITEMS 1000

/* Characters (UTF-16 code units, as AWS counts them) of the string argument
 * of States.Hash, States.Base64Encode and States.Base64Decode (AWS: 10,000
 * characters each). */
#define SWF_LIMIT_INTRINSIC_STRING_CHARS 10000

/* Decision tasks one local run may take before it is stopped as runaway
 * (an infinite loop of Pass/Choice states is caught per decision below). */
#define SWF_LIMIT_DECISION_TASKS 10000000

/* State transitions one chain of states (the top level, one Parallel
 * branch or one Map iteration) may make in one decision task, without
 * waiting for an activity or a timer: an infinite Choice loop ends as
 * States.Runtime. Counted per chain, so that a Map of SWF_LIMIT_MAP_ITEMS
 * iterations is not taken for a loop. */
#define SWF_LIMIT_TRANSITIONS_PER_DECISION 1000000

/* Steps of the interpreter in one decision task, every chain together (a
 * state entered, an answer taken, a Map or Parallel woken by a finished
 * iteration): room for a Map of SWF_LIMIT_MAP_ITEMS iterations of up to
 * eight states each, and a bound on a decision's work when many iterations
 * loop (a Map that tolerates failed iterations). Past it the execution
 * fails with States.Runtime. */
#define SWF_LIMIT_STEPS_PER_DECISION 10000000

/* Bytes of a state, execution or workflow name. AWS: 80 for execution names,
 * 128 for state names. */
#define SWF_LIMIT_NAME_BYTES 256

/* Bytes of the librdkafka properties file SWF_KAFKA_CONFIG_FILE names, and
 * of one of its lines (kafka/kafka.h). */
#define SWF_LIMIT_KAFKA_CONFIG_BYTES (64u * 1024u)
#define SWF_LIMIT_KAFKA_CONFIG_LINE_BYTES 4096u

#endif
