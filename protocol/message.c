/*
 * message.c - parse, validate and build the Kafka messages of KAFKA.md.
 *
 * One table maps type names to types; one function per message type checks
 * the fields that type needs. Validation is strict about what the contract
 * says (field present, of the right JSON type, within its bound, "v" equal
 * to 1, a token that verifies) and lenient about what it does not (unknown
 * fields are ignored), so a newer sender can add fields without breaking an
 * older reader. Errors are the dead-letter reasons: short, lowercase, naming
 * the field, because the person reading the dead-letter topic has only them.
 *
 * The builders are the other half of the contract, so that no caller spells
 * a field name; a parse of a built message gives back what was built (the
 * tests check the round trip of every type).
 */
#include "protocol/message.h"

#include <assert.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <openssl/crypto.h>

#include "protocol/alloc.h"
#include "protocol/hash.h"
#include "protocol/json.h"
#include "protocol/limits.h"
#include "protocol/token.h"

static const struct {
    swf_msg_type_t type;
    const char *name;
} msg_names[] = {
    {SWF_MSG_DECIDE, "decide"},
    {SWF_MSG_ACTIVITY_COMPLETED, "activity.completed"},
    {SWF_MSG_ACTIVITY_FAILED, "activity.failed"},
    {SWF_MSG_ACTIVITY_HEARTBEAT, "activity.heartbeat"},
    {SWF_MSG_ACTIVITY_TIMED_OUT, "activity.timedOut"},
    {SWF_MSG_TIMER_FIRED, "timer.fired"},
    {SWF_MSG_EXECUTION_TIMED_OUT, "execution.timedOut"},
    {SWF_MSG_SIGNAL, "signal"},
    {SWF_MSG_CANCEL, "cancel"},
    {SWF_MSG_TERMINATE, "terminate"},
    {SWF_MSG_REDRIVE, "redrive"},
    {SWF_MSG_ACTIVITY_TASK, "activity.task"},
    {SWF_MSG_ACTIVITY_STARTED, "activity.started"},
    {SWF_MSG_NESTED_START, "nested.start"},
    {SWF_MSG_NESTED_CLOSED, "nested.closed"},
};

#define NNAMES (sizeof(msg_names) / sizeof(msg_names[0]))

const char *swf_msg_type_name(swf_msg_type_t type)
{
    for (size_t i = 0; i < NNAMES; i++) {
        if (msg_names[i].type == type)
            return msg_names[i].name;
    }
    return NULL;
}

swf_msg_type_t swf_msg_type_parse(const char *name)
{
    for (size_t i = 0; name != NULL && i < NNAMES; i++) {
        if (strcmp(msg_names[i].name, name) == 0)
            return msg_names[i].type;
    }
    return SWF_MSG_NONE;
}

/* A required (or optional, with required false) string member, at most max
 * bytes, not empty when required. */
static swf_error_t *get_str(json_object *obj, const char *key, bool required, size_t max,
                            char **out)
{
    json_object *v;
    if (!swf_json_get(obj, key, &v)) {
        if (required)
            return swf_error_new(SWF_E_INPUT, NULL, "missing \"%s\"", key);
        return NULL;
    }
    if (!json_object_is_type(v, json_type_string))
        return swf_error_new(SWF_E_INPUT, NULL, "\"%s\" must be a string, not %s", key,
                             swf_json_type_name(v));
    size_t len = (size_t)json_object_get_string_len(v);
    if (len > max)
        return swf_error_new(SWF_E_LIMIT, NULL, "\"%s\" is longer than %zu bytes", key, max);
    if (required && len == 0)
        return swf_error_new(SWF_E_INPUT, NULL, "\"%s\" must not be empty", key);
    *out = swf_strdup(json_object_get_string(v));
    return NULL;
}

/* A required integer member, at least min. */
static swf_error_t *get_int(json_object *obj, const char *key, int64_t min, int64_t *out)
{
    json_object *v;
    if (!swf_json_get(obj, key, &v))
        return swf_error_new(SWF_E_INPUT, NULL, "missing \"%s\"", key);
    int64_t n;
    if (!swf_json_as_int64(v, &n))
        return swf_error_new(SWF_E_INPUT, NULL, "\"%s\" must be an integer, not %s", key,
                             swf_json_type_name(v));
    if (n < min)
        return swf_error_new(SWF_E_INPUT, NULL, "\"%s\" must be at least %lld", key,
                             (long long)min);
    *out = n;
    return NULL;
}

/* An optional string member cut to at most max bytes, between characters
 * (KAFKA.md: a longer cause is cut, not refused, so that the failure of an
 * activity is still recorded). */
static swf_error_t *get_str_cut(json_object *obj, const char *key, size_t max, char **out)
{
    json_object *v;
    if (!swf_json_get(obj, key, &v))
        return NULL;
    if (!json_object_is_type(v, json_type_string))
        return swf_error_new(SWF_E_INPUT, NULL, "\"%s\" must be a string, not %s", key,
                             swf_json_type_name(v));
    const char *s = json_object_get_string(v);
    *out = strndup(s, swf_utf8_cut(s, (size_t)json_object_get_string_len(v), max));
    if (*out == NULL)
        abort();
    return NULL;
}

/* An optional request id; an empty one is no id (the schemas want at least
 * one character, and an empty id recorded once would make every later
 * request without a real id look like a duplicate). */
static swf_error_t *get_request_id(json_object *obj, char **out)
{
    swf_error_t *err = get_str(obj, "requestId", false, SWF_MSG_NAME_BYTES, out);
    if (err == NULL && *out != NULL && **out == '\0') {
        free(*out);
        *out = NULL;
    }
    return err;
}

/* An optional positive number of seconds; 0 when absent. */
static swf_error_t *get_seconds(json_object *obj, const char *key, double *out)
{
    json_object *v;
    *out = 0;
    if (!swf_json_get(obj, key, &v))
        return NULL;
    if (!swf_json_is_number(v) || !isfinite(json_object_get_double(v)) ||
        json_object_get_double(v) <= 0)
        return swf_error_new(SWF_E_INPUT, NULL, "\"%s\" must be a positive number of seconds", key);
    *out = json_object_get_double(v);
    return NULL;
}

/* The token of an answer: verified, and the ids it names. */
static swf_error_t *get_token(json_object *obj, const char *secret, swf_msg_t *m)
{
    swf_error_t *err = get_str(obj, "taskToken", true, SWF_TOKEN_MAX_BYTES, &m->task_token);
    if (err == NULL)
        err = swf_token_verify(secret, m->task_token, &m->execution_id, &m->activity_id);
    return err;
}

static swf_error_t *parse_activity_task(json_object *obj, const char *secret, swf_msg_t *m)
{
    json_object *at = NULL, *v;
    swf_error_t *err = get_str(obj, "taskToken", true, SWF_TOKEN_MAX_BYTES, &m->task_token);
    if (err == NULL)
        err = get_str(obj, "executionId", true, SWF_MSG_NAME_BYTES, &m->execution_id);
    if (err == NULL)
        err = get_str(obj, "activityId", true, SWF_MSG_NAME_BYTES, &m->activity_id);
    if (err == NULL &&
        (!swf_json_get(obj, "activityType", &at) || !json_object_is_type(at, json_type_object)))
        err = swf_error_new(SWF_E_INPUT, NULL, "\"activityType\" must be an object");
    if (err == NULL)
        err = get_str(at, "name", true, SWF_MSG_NAME_BYTES, &m->activity_type);
    if (err == NULL)
        err = get_str(at, "version", false, SWF_MSG_NAME_BYTES, &m->activity_version);
    if (err != NULL && at != NULL && json_object_is_type(at, json_type_object))
        swf_error_prefix(err, "activityType");
    if (err == NULL)
        err = get_str(obj, "state", false, SWF_LIMIT_NAME_BYTES, &m->state);
    if (err == NULL) {
        if (swf_json_get(obj, "input", &v))
            m->input = swf_json_ref(v);
        else
            err = swf_error_new(SWF_E_INPUT, NULL, "missing \"input\"");
    }
    if (err == NULL)
        err = get_int(obj, "attempt", 0, &m->attempt);
    if (err == NULL)
        err = get_int(obj, "scheduledEventId", 1, &m->scheduled_event_id);
    if (err == NULL)
        err = get_seconds(obj, "startToCloseTimeout", &m->start_to_close_timeout);
    if (err == NULL)
        err = get_seconds(obj, "heartbeatTimeout", &m->heartbeat_timeout);
    /* A worker may not know the secret: it only passes the token back. */
    if (err == NULL && secret != NULL) {
        char *e = NULL, *a = NULL;
        err = swf_token_verify(secret, m->task_token, &e, &a);
        if (err == NULL && (strcmp(e, m->execution_id) != 0 || strcmp(a, m->activity_id) != 0))
            err = swf_error_new(SWF_E_INPUT, NULL, "the task token names another activity");
        free(e);
        free(a);
    }
    return err;
}

/* The messages only swf's own processes may send: signed (swf_msg_sign). */
static bool is_control(swf_msg_type_t t)
{
    return t == SWF_MSG_DECIDE || t == SWF_MSG_ACTIVITY_TIMED_OUT || t == SWF_MSG_TIMER_FIRED ||
           t == SWF_MSG_EXECUTION_TIMED_OUT || t == SWF_MSG_SIGNAL || t == SWF_MSG_CANCEL ||
           t == SWF_MSG_TERMINATE || t == SWF_MSG_REDRIVE || t == SWF_MSG_NESTED_START ||
           t == SWF_MSG_NESTED_CLOSED;
}

swf_error_t *swf_msg_from_json(json_object *obj, const char *secret, swf_msg_t *out)
{
    memset(out, 0, sizeof(*out));
    swf_msg_t m = {0};
    json_object *v;
    swf_error_t *err = NULL;
    if (!json_object_is_type(obj, json_type_object))
        return swf_error_new(SWF_E_INPUT, NULL, "a message must be a JSON object, not %s",
                             swf_json_type_name(obj));
    const char *type = swf_json_get_string(obj, "type");
    int64_t version;
    if (!swf_json_get(obj, "v", &v)) {
        /* Optional on activity.task alone (KAFKA.md; older publishers). */
        if (swf_msg_type_parse(type) != SWF_MSG_ACTIVITY_TASK)
            return swf_error_new(SWF_E_INPUT, NULL, "missing \"v\" (the protocol version, 1)");
    } else if (!swf_json_as_int64(v, &version) || version != SWF_MSG_VERSION) {
        return swf_error_new(SWF_E_INPUT, NULL, "unsupported protocol version \"v\": %s",
                             swf_json_str(v));
    }
    if (type == NULL)
        return swf_error_new(SWF_E_INPUT, NULL, "missing \"type\"");
    m.type = swf_msg_type_parse(type);
    switch (m.type) {
    case SWF_MSG_NONE:
        return swf_error_new(SWF_E_INPUT, NULL, "unknown message type \"%.64s\"", type);
    case SWF_MSG_DECIDE:
    case SWF_MSG_EXECUTION_TIMED_OUT:
        err = get_str(obj, "executionId", true, SWF_MSG_NAME_BYTES, &m.execution_id);
        break;
    case SWF_MSG_ACTIVITY_COMPLETED:
        err = get_token(obj, secret, &m);
        if (err == NULL && !swf_json_get(obj, "result", &v))
            err = swf_error_new(SWF_E_INPUT, NULL, "missing \"result\"");
        if (err == NULL)
            m.result = swf_json_ref(v);
        if (err == NULL)
            err = get_str(obj, "identity", false, SWF_MSG_NAME_BYTES, &m.identity);
        break;
    case SWF_MSG_ACTIVITY_FAILED:
        err = get_token(obj, secret, &m);
        if (err == NULL)
            err = get_str(obj, "error", true, SWF_MSG_NAME_BYTES, &m.error);
        if (err == NULL)
            err = get_str_cut(obj, "cause", SWF_MSG_CAUSE_BYTES, &m.cause);
        if (err == NULL)
            err = get_str(obj, "identity", false, SWF_MSG_NAME_BYTES, &m.identity);
        break;
    case SWF_MSG_ACTIVITY_STARTED:
        err = get_token(obj, secret, &m);
        if (err == NULL)
            err = get_str(obj, "identity", false, SWF_MSG_NAME_BYTES, &m.identity);
        break;
    case SWF_MSG_ACTIVITY_HEARTBEAT:
        err = get_token(obj, secret, &m);
        if (err == NULL && swf_json_get(obj, "details", &v)) {
            m.details = swf_json_ref(v);
            m.has_details = true;
        }
        break;
    case SWF_MSG_NESTED_START:
    case SWF_MSG_NESTED_CLOSED:
        err = get_str(obj, "executionId", true, SWF_MSG_NAME_BYTES, &m.execution_id);
        if (err == NULL)
            err = get_int(obj, "scheduledEventId", 1, &m.scheduled_event_id);
        break;
    case SWF_MSG_ACTIVITY_TIMED_OUT:
        err = get_str(obj, "executionId", true, SWF_MSG_NAME_BYTES, &m.execution_id);
        if (err == NULL)
            err = get_int(obj, "scheduledEventId", 1, &m.scheduled_event_id);
        if (err == NULL)
            err = get_str(obj, "timeoutType", true, SWF_MSG_NAME_BYTES, &m.timeout_type);
        if (err == NULL && strcmp(m.timeout_type, "START_TO_CLOSE") != 0 &&
            strcmp(m.timeout_type, "HEARTBEAT") != 0)
            err = swf_error_new(SWF_E_INPUT, NULL,
                                "\"timeoutType\" must be START_TO_CLOSE or HEARTBEAT");
        break;
    case SWF_MSG_TIMER_FIRED:
        err = get_str(obj, "executionId", true, SWF_MSG_NAME_BYTES, &m.execution_id);
        if (err == NULL)
            err = get_str(obj, "timerId", true, SWF_MSG_NAME_BYTES, &m.timer_id);
        if (err == NULL)
            err = get_int(obj, "startedEventId", 1, &m.started_event_id);
        break;
    case SWF_MSG_SIGNAL:
        err = get_str(obj, "executionId", true, SWF_MSG_NAME_BYTES, &m.execution_id);
        if (err == NULL)
            err = get_str(obj, "signalName", true, SWF_MSG_NAME_BYTES, &m.signal_name);
        if (err == NULL && swf_json_get(obj, "input", &v))
            m.input = swf_json_ref(v);
        if (err == NULL)
            err = get_request_id(obj, &m.request_id);
        break;
    case SWF_MSG_CANCEL:
        err = get_str(obj, "executionId", true, SWF_MSG_NAME_BYTES, &m.execution_id);
        if (err == NULL)
            err = get_str(obj, "cause", false, SWF_MSG_CAUSE_BYTES, &m.cause);
        if (err == NULL)
            err = get_request_id(obj, &m.request_id);
        break;
    case SWF_MSG_TERMINATE:
        err = get_str(obj, "executionId", true, SWF_MSG_NAME_BYTES, &m.execution_id);
        if (err == NULL)
            err = get_str(obj, "reason", false, SWF_MSG_CAUSE_BYTES, &m.reason);
        if (err == NULL && swf_json_get(obj, "details", &v)) {
            m.details = swf_json_ref(v);
            m.has_details = true;
        }
        break;
    case SWF_MSG_REDRIVE:
        err = get_str(obj, "executionId", true, SWF_MSG_NAME_BYTES, &m.execution_id);
        if (err == NULL)
            err = get_int(obj, "redriveCount", 1, &m.redrive_count);
        break;
    case SWF_MSG_ACTIVITY_TASK:
        err = parse_activity_task(obj, secret, &m);
        break;
    }
    if (err == NULL && secret != NULL && is_control(m.type))
        err = swf_msg_signature_check(obj, secret);
    if (err != NULL) {
        swf_error_prefix(err, "%s", type);
        swf_msg_clear(&m);
        return err;
    }
    *out = m;
    return NULL;
}

/* The offset of the first \u0000 escape in JSON text, or len. PostgreSQL's
 * jsonb cannot store the character, so a message carrying one could never
 * be recorded; it is refused here, where it can still go to the dead
 * letters with the reason, instead of failing the append. */
static size_t nul_escape_at(const char *buf, size_t len)
{
    bool in_string = false;
    for (size_t i = 0; i < len; i++) {
        if (!in_string) {
            in_string = buf[i] == '"';
        } else if (buf[i] == '"') {
            in_string = false;
        } else if (buf[i] == '\\' && i + 1 < len) {
            if (buf[i + 1] == 'u' && i + 6 <= len && memcmp(buf + i + 2, "0000", 4) == 0)
                return i;
            i++; /* the escaped character */
        }
    }
    return len;
}

swf_error_t *swf_msg_parse(const char *buf, size_t len, const char *secret, swf_msg_t *out)
{
    memset(out, 0, sizeof(*out));
    if (buf == NULL || len == 0)
        return swf_error_new(SWF_E_INPUT, NULL, "empty message");
    if (len > SWF_MSG_MAX_BYTES)
        return swf_error_new(SWF_E_LIMIT, NULL, "a message is at most %u bytes, this one has %zu",
                             SWF_MSG_MAX_BYTES, len);
    json_object *obj = NULL;
    swf_error_t *err = swf_json_parse(buf, len, SWF_MSG_MAX_BYTES, &obj);
    if (err != NULL) {
        if (strncmp(swf_error_message(err), "not JSON", 8) != 0)
            swf_error_prefix(err, "not JSON");
        return err;
    }
    size_t nul = nul_escape_at(buf, len);
    if (nul < len) {
        json_object_put(obj);
        return swf_error_new(SWF_E_INPUT, NULL,
                             "\\u0000 at byte %zu: the history cannot store that character", nul);
    }
    err = swf_msg_from_json(obj, secret, out);
    json_object_put(obj);
    return err;
}

void swf_msg_clear(swf_msg_t *m)
{
    free(m->execution_id);
    free(m->activity_id);
    free(m->task_token);
    free(m->identity);
    json_object_put(m->result);
    free(m->error);
    free(m->cause);
    json_object_put(m->details);
    free(m->timeout_type);
    free(m->timer_id);
    free(m->signal_name);
    free(m->request_id);
    json_object_put(m->input);
    free(m->reason);
    free(m->activity_type);
    free(m->activity_version);
    free(m->state);
    memset(m, 0, sizeof(*m));
}

/* ---- signatures ---------------------------------------------------------- */

/* The members a signature covers, in the order they are signed. A member
 * not listed is not covered, and the parser ignores it. */
static const char *const signed_keys[] = {
    "v",           "type",         "executionId",    "scheduledEventId",
    "timeoutType", "timerId",      "startedEventId", "signalName",
    "input",       "requestId",    "cause",          "reason",
    "details",     "redriveCount",
};

/* The canonical bytes of msg: for each signed member present, its name, '=',
 * the length of its value, ':', the value and '\n'. A string's value is its
 * bytes; any other value is json-c's plain text of it. */
static char *signed_bytes(json_object *msg, size_t *len)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (f == NULL)
        abort();
    fputs("swf-msg-v1\n", f);
    for (size_t i = 0; i < sizeof(signed_keys) / sizeof(signed_keys[0]); i++) {
        json_object *v;
        if (!json_object_object_get_ex(msg, signed_keys[i], &v))
            continue;
        const char *s;
        size_t sl;
        if (json_object_is_type(v, json_type_string)) {
            s = json_object_get_string(v);
            sl = (size_t)json_object_get_string_len(v);
        } else {
            s = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN |
                                                      JSON_C_TO_STRING_NOSLASHESCAPE);
            sl = strlen(s);
        }
        fprintf(f, "%s=%zu:", signed_keys[i], sl);
        fwrite(s, 1, sl, f);
        fputc('\n', f);
    }
    if (fclose(f) != 0)
        abort();
    *len = n;
    return buf;
}

/* base64url without padding of the HMAC-SHA256 of msg's canonical bytes. */
static char *signature_of(json_object *msg, const char *secret)
{
    size_t n;
    char *bytes = signed_bytes(msg, &n);
    uint8_t mac[SWF_HASH_SHA256_BYTES];
    swf_hash_hmac_sha256(secret, strlen(secret), bytes, n, mac);
    free(bytes);
    char *out = NULL;
    if (swf_base64_encode(mac, sizeof(mac), &out) != NULL)
        abort();
    size_t k = strlen(out);
    while (k > 0 && out[k - 1] == '=')
        out[--k] = '\0';
    for (size_t i = 0; i < k; i++)
        out[i] = out[i] == '+' ? '-' : out[i] == '/' ? '_' : out[i];
    return out;
}

json_object *swf_msg_sign(json_object *msg, const char *secret)
{
    json_object_object_del(msg, "signature");
    char *sig = signature_of(msg, secret);
    swf_json_add(msg, "signature", json_object_new_string(sig));
    free(sig);
    return msg;
}

swf_error_t *swf_msg_signature_check(json_object *msg, const char *secret)
{
    json_object *got;
    if (!json_object_object_get_ex(msg, "signature", &got))
        return swf_error_new(SWF_E_INPUT, NULL, "unsigned control message");
    if (!json_object_is_type(got, json_type_string))
        return swf_error_new(SWF_E_INPUT, NULL, "\"signature\" must be a string");
    char *want = signature_of(msg, secret);
    size_t wl = strlen(want), gl = (size_t)json_object_get_string_len(got);
    bool forged = wl != gl || CRYPTO_memcmp(want, json_object_get_string(got), wl) != 0;
    free(want);
    return forged ? swf_error_new(SWF_E_INPUT, NULL, "forged or altered control message signature")
                  : NULL;
}

/* ---- builders ------------------------------------------------------------ */

static json_object *msg_new(swf_msg_type_t type)
{
    json_object *o = json_object_new_object();
    swf_json_add(o, "v", json_object_new_int(SWF_MSG_VERSION));
    swf_json_add(o, "type", json_object_new_string(swf_msg_type_name(type)));
    return o;
}

/* Strings from the caller (a command's stderr, a shell argument) may not be
 * UTF-8; the receiver refuses a message that is not, so bad bytes become
 * U+FFFD here. */
static json_object *text(const char *s)
{
    return swf_json_new_text(s, strlen(s));
}

/* text(s) of at most max bytes, cut between characters. The cut comes
 * after the replacement too, which makes each bad byte three. */
static json_object *text_cut(const char *s, size_t max)
{
    json_object *t = swf_json_new_text(s, swf_utf8_cut(s, strlen(s), max));
    const char *u = json_object_get_string(t);
    size_t n = (size_t)json_object_get_string_len(t), k = swf_utf8_cut(u, n, max);
    if (k == n)
        return t;
    json_object *cut = json_object_new_string_len(u, (int)k);
    json_object_put(t);
    return cut;
}

static json_object *msg_for(swf_msg_type_t type, const char *execution_id)
{
    json_object *o = msg_new(type);
    swf_json_add(o, "executionId", text(execution_id));
    return o;
}

/* A control message is signed with the deployment's secret: the caller's,
 * else the one in the environment (swf_token_secret_env). */
static json_object *signed_with(const char *secret, json_object *o)
{
    return swf_msg_sign(o, secret != NULL ? secret : swf_token_secret_env());
}

static json_object *signed_for(const char *secret, swf_msg_type_t type, const char *execution_id)
{
    return signed_with(secret, msg_for(type, execution_id));
}

json_object *swf_msg_decide_new(const char *secret, const char *execution_id)
{
    return signed_for(secret, SWF_MSG_DECIDE, execution_id);
}

json_object *swf_msg_activity_completed_new(const char *task_token, json_object *result,
                                            const char *identity)
{
    json_object *o = msg_new(SWF_MSG_ACTIVITY_COMPLETED);
    swf_json_add(o, "taskToken", text(task_token));
    swf_json_add(o, "result", swf_json_ref(result));
    if (identity != NULL)
        swf_json_add(o, "identity", text(identity));
    return o;
}

json_object *swf_msg_activity_failed_new(const char *task_token, const char *error,
                                         const char *cause, const char *identity)
{
    json_object *o = msg_new(SWF_MSG_ACTIVITY_FAILED);
    swf_json_add(o, "taskToken", text(task_token));
    swf_json_add(o, "error", text_cut(error, SWF_MSG_NAME_BYTES));
    swf_json_add(o, "cause", text_cut(cause ? cause : "", SWF_MSG_CAUSE_BYTES));
    if (identity != NULL)
        swf_json_add(o, "identity", text(identity));
    return o;
}

json_object *swf_msg_activity_heartbeat_new(const char *task_token, json_object *details,
                                            bool has_details)
{
    json_object *o = msg_new(SWF_MSG_ACTIVITY_HEARTBEAT);
    swf_json_add(o, "taskToken", text(task_token));
    if (has_details)
        swf_json_add(o, "details", swf_json_ref(details));
    return o;
}

json_object *swf_msg_activity_started_new(const char *task_token, const char *identity)
{
    json_object *o = msg_new(SWF_MSG_ACTIVITY_STARTED);
    swf_json_add(o, "taskToken", text(task_token));
    if (identity != NULL)
        swf_json_add(o, "identity", text(identity));
    return o;
}

json_object *swf_msg_activity_timed_out_new(const char *secret, const char *execution_id,
                                            int64_t scheduled_event_id, const char *timeout_type)
{
    json_object *o = msg_for(SWF_MSG_ACTIVITY_TIMED_OUT, execution_id);
    swf_json_add(o, "scheduledEventId", json_object_new_int64(scheduled_event_id));
    swf_json_add(o, "timeoutType", text(timeout_type));
    return signed_with(secret, o);
}

json_object *swf_msg_nested_new(const char *secret, swf_msg_type_t type, const char *execution_id,
                                int64_t scheduled_event_id)
{
    assert(type == SWF_MSG_NESTED_START || type == SWF_MSG_NESTED_CLOSED);
    json_object *o = msg_for(type, execution_id);
    swf_json_add(o, "scheduledEventId", json_object_new_int64(scheduled_event_id));
    return signed_with(secret, o);
}

json_object *swf_msg_timer_fired_new(const char *secret, const char *execution_id,
                                     const char *timer_id, int64_t started_event_id)
{
    json_object *o = msg_for(SWF_MSG_TIMER_FIRED, execution_id);
    swf_json_add(o, "timerId", text(timer_id));
    swf_json_add(o, "startedEventId", json_object_new_int64(started_event_id));
    return signed_with(secret, o);
}

json_object *swf_msg_execution_timed_out_new(const char *secret, const char *execution_id)
{
    return signed_for(secret, SWF_MSG_EXECUTION_TIMED_OUT, execution_id);
}

/* A request id of 128 random bits, in hex; none (no member) when the
 * system gives no random bytes. Kafka may deliver a message more than
 * once; the decider records a request id once. */
static void request_id_add(json_object *o)
{
    unsigned char raw[16];
    if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
        return;
    char hex[2 * sizeof(raw) + 1];
    for (size_t i = 0; i < sizeof(raw); i++)
        snprintf(hex + 2 * i, 3, "%02x", raw[i]);
    swf_json_add(o, "requestId", json_object_new_string(hex));
}

json_object *swf_msg_signal_new(const char *secret, const char *execution_id,
                                const char *signal_name, json_object *input)
{
    json_object *o = msg_for(SWF_MSG_SIGNAL, execution_id);
    swf_json_add(o, "signalName", text(signal_name));
    swf_json_add(o, "input", swf_json_ref(input));
    request_id_add(o);
    return signed_with(secret, o);
}

json_object *swf_msg_cancel_new(const char *secret, const char *execution_id, const char *cause)
{
    json_object *o = msg_for(SWF_MSG_CANCEL, execution_id);
    if (cause != NULL)
        swf_json_add(o, "cause", text(cause));
    request_id_add(o);
    return signed_with(secret, o);
}

json_object *swf_msg_terminate_new(const char *secret, const char *execution_id, const char *reason,
                                   json_object *details, bool has_details)
{
    json_object *o = msg_for(SWF_MSG_TERMINATE, execution_id);
    if (reason != NULL)
        swf_json_add(o, "reason", text(reason));
    if (has_details)
        swf_json_add(o, "details", swf_json_ref(details));
    return signed_with(secret, o);
}

json_object *swf_msg_redrive_new(const char *secret, const char *execution_id,
                                 int64_t redrive_count)
{
    json_object *o = msg_for(SWF_MSG_REDRIVE, execution_id);
    swf_json_add(o, "redriveCount", json_object_new_int64(redrive_count));
    return signed_with(secret, o);
}

swf_error_t *swf_msg_activity_task_new(const char *secret, const char *execution_id,
                                       int64_t scheduled_event_id, json_object *a,
                                       json_object **out)
{
    *out = NULL;
    json_object *at, *control, *v;
    if (execution_id == NULL)
        execution_id = swf_json_get_string(a, "executionId");
    if (scheduled_event_id <= 0 && swf_json_get(a, "scheduledEventId", &v) &&
        json_object_is_type(v, json_type_int))
        scheduled_event_id = json_object_get_int64(v);
    const char *aid = swf_json_get_string(a, "activityId");
    if (execution_id == NULL || aid == NULL || scheduled_event_id <= 0 ||
        !swf_json_get(a, "activityType", &at) || swf_json_get_string(at, "name") == NULL)
        return swf_error_new(SWF_E_INPUT, NULL,
                             "an activity task needs executionId, activityId, activityType and "
                             "scheduledEventId");
    json_object *o = msg_new(SWF_MSG_ACTIVITY_TASK);
    char *token = swf_token_make(secret, execution_id, aid);
    swf_json_add(o, "taskToken", json_object_new_string(token));
    free(token);
    swf_json_add(o, "executionId", json_object_new_string(execution_id));
    swf_json_add(o, "activityId", json_object_new_string(aid));
    swf_json_add(o, "activityType", swf_json_ref(at));
    swf_json_get(a, "control", &control);
    const char *state = swf_json_get_string(control, "state");
    if (state != NULL)
        swf_json_add(o, "state", json_object_new_string(state));
    swf_json_add(o, "input", swf_json_get(a, "input", &v) ? swf_json_ref(v) : NULL);
    int64_t attempt = 0;
    if (swf_json_get(control, "attempt", &v) && json_object_is_type(v, json_type_int))
        attempt = json_object_get_int64(v);
    swf_json_add(o, "attempt", json_object_new_int64(attempt));
    swf_json_add(o, "scheduledEventId", json_object_new_int64(scheduled_event_id));
    if (swf_json_get(a, "startToCloseTimeout", &v) && swf_json_is_number(v))
        swf_json_add(o, "startToCloseTimeout", swf_json_ref(v));
    if (swf_json_get(a, "heartbeatTimeout", &v) && swf_json_is_number(v))
        swf_json_add(o, "heartbeatTimeout", swf_json_ref(v));
    *out = o;
    return NULL;
}

/* Moves a cut back to the start of a UTF-8 sequence. */
static json_object *dead_letter_build(const char *reason, const char *topic, int32_t partition,
                                      int64_t offset, const char *payload, size_t len, size_t keep)
{
    json_object *o = json_object_new_object();
    swf_json_add(o, "v", json_object_new_int(SWF_MSG_VERSION));
    swf_json_add(o, "type", json_object_new_string("dead-letter"));
    swf_json_add(o, "reason", text(reason));
    if (topic != NULL)
        swf_json_add(o, "topic", text(topic));
    swf_json_add(o, "partition", json_object_new_int(partition));
    swf_json_add(o, "offset", json_object_new_int64(offset));
    swf_json_add(o, "message", swf_json_new_text(payload ? payload : "", keep));
    if (keep > 0 && swf_json_utf8_invalid_at(payload, keep) < keep) {
        /* The text above has U+FFFD for the bad bytes; these are the bytes. */
        char *b64 = NULL;
        swf_error_t *err = swf_base64_encode(payload, keep, &b64);
        if (err == NULL)
            swf_json_add(o, "messageBase64", json_object_new_string(b64));
        swf_error_free(err);
        free(b64);
    }
    if (keep < len)
        swf_json_add(o, "truncated", json_object_new_boolean(1));
    return o;
}

json_object *swf_msg_dead_letter_new(const char *reason, const char *topic, int32_t partition,
                                     int64_t offset, const char *payload, size_t len)
{
    if (payload == NULL)
        len = 0;
    /* Half a message's bytes of the original, cut between characters; less
     * when escaping makes it longer (a control character takes six bytes
     * in JSON, and bytes that are not UTF-8 come twice, as U+FFFD and in
     * base64), so that the dead letter itself fits in a message. */
    size_t keep = swf_utf8_cut(payload, len, SWF_MSG_MAX_BYTES / 2);
    for (;;) {
        json_object *o = dead_letter_build(reason, topic, partition, offset, payload, len, keep);
        if (keep == 0 || strlen(swf_json_str(o)) <= SWF_MSG_MAX_BYTES)
            return o;
        json_object_put(o);
        keep = swf_utf8_cut(payload, keep, keep / 2);
    }
}

const char *swf_msg_str(json_object *msg)
{
    return swf_json_str(msg);
}
