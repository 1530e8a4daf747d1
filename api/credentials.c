/*
 * credentials.c - the credentials file of swf-api (credentials.h).
 *
 * A plain text file rather than a database table: a deployment keeps its
 * secrets where it keeps its other secrets (a mounted file, a secret
 * store), and swf-api stays stateless. The file is read once at start; a
 * change is a restart, which a load balancer makes invisible.
 */
#include "api/credentials.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct key {
    char *id;
    char *secret;
    char **resources; /* "stateMachine:NAME", "activity:NAME" or "*" */
    size_t nresources;
} key_t_;

struct swf_api_credentials {
    key_t_ *keys;
    size_t nkeys;
};

void swf_api_credentials_free(swf_api_credentials_t *c)
{
    if (c == NULL)
        return;
    for (size_t i = 0; i < c->nkeys; i++) {
        free(c->keys[i].id);
        if (c->keys[i].secret != NULL) {
            memset(c->keys[i].secret, 0, strlen(c->keys[i].secret));
            free(c->keys[i].secret);
        }
        for (size_t j = 0; j < c->keys[i].nresources; j++)
            free(c->keys[i].resources[j]);
        free(c->keys[i].resources);
    }
    free(c->keys);
    free(c);
}

static char *dup_n(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d == NULL)
        abort();
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

/* Whether a resource field is one of the three forms. */
static bool resource_ok(const char *r)
{
    if (strcmp(r, "*") == 0)
        return true;
    const char *colon = strchr(r, ':');
    if (colon == NULL || colon[1] == '\0' || strlen(colon + 1) > 80)
        return false;
    size_t k = (size_t)(colon - r);
    return (k == 12 && strncmp(r, "stateMachine", 12) == 0) ||
           (k == 8 && strncmp(r, "activity", 8) == 0);
}

swf_error_t *swf_api_credentials_parse(const char *name, const char *text, size_t len,
                                       swf_api_credentials_t **out)
{
    *out = NULL;
    if (len > SWF_API_CREDENTIALS_BYTES)
        return swf_error_new(SWF_E_LIMIT, NULL, "%s: larger than %u bytes", name,
                             SWF_API_CREDENTIALS_BYTES);
    if (memchr(text, '\0', len) != NULL)
        return swf_error_new(SWF_E_INPUT, NULL, "%s: holds a NUL byte", name);
    swf_api_credentials_t *c = calloc(1, sizeof(*c));
    if (c == NULL)
        abort();
    swf_error_t *err = NULL;
    size_t line = 0;
    for (size_t pos = 0; pos < len && err == NULL;) {
        line++;
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len;
        /* The fields of this line. */
        const char *f[2 + SWF_API_CREDENTIALS_RESOURCES];
        size_t fl[2 + SWF_API_CREDENTIALS_RESOURCES], nf = 0;
        size_t i = pos;
        while (i < end && err == NULL) {
            while (i < end && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r'))
                i++;
            if (i >= end || (nf == 0 && text[i] == '#'))
                break;
            size_t s = i;
            while (i < end && text[i] != ' ' && text[i] != '\t' && text[i] != '\r')
                i++;
            if (nf == sizeof(f) / sizeof(f[0]))
                err = swf_error_new(SWF_E_LIMIT, NULL, "%s:%zu: more than %d resources", name, line,
                                    SWF_API_CREDENTIALS_RESOURCES);
            else {
                f[nf] = text + s;
                fl[nf++] = i - s;
            }
        }
        pos = end + 1;
        if (err != NULL || nf == 0)
            continue;
        if (nf < 2) {
            err = swf_error_new(SWF_E_INPUT, NULL,
                                "%s:%zu: expected ACCESS_KEY_ID SECRET_ACCESS_KEY RESOURCE...",
                                name, line);
            break;
        }
        if (fl[0] > SWF_API_CREDENTIALS_FIELD_BYTES || fl[1] > SWF_API_CREDENTIALS_FIELD_BYTES) {
            err = swf_error_new(SWF_E_LIMIT, NULL, "%s:%zu: a key id or secret over %d bytes", name,
                                line, SWF_API_CREDENTIALS_FIELD_BYTES);
            break;
        }
        if (c->nkeys == SWF_API_CREDENTIALS_KEYS) {
            err = swf_error_new(SWF_E_LIMIT, NULL, "%s:%zu: more than %d keys", name, line,
                                SWF_API_CREDENTIALS_KEYS);
            break;
        }
        char *id = dup_n(f[0], fl[0]);
        if (swf_api_credentials_secret(c, id) != NULL) {
            err =
                swf_error_new(SWF_E_INPUT, NULL, "%s:%zu: key %s is listed twice", name, line, id);
            free(id);
            break;
        }
        key_t_ *keys = realloc(c->keys, (c->nkeys + 1) * sizeof(*keys));
        if (keys == NULL)
            abort();
        c->keys = keys;
        key_t_ *k = &c->keys[c->nkeys++];
        k->id = id;
        k->secret = dup_n(f[1], fl[1]);
        k->nresources = nf - 2;
        k->resources = calloc(nf, sizeof(char *));
        if (k->resources == NULL)
            abort();
        for (size_t j = 2; j < nf; j++) {
            k->resources[j - 2] = dup_n(f[j], fl[j]);
            if (!resource_ok(k->resources[j - 2]) && err == NULL)
                err = swf_error_new(SWF_E_INPUT, NULL,
                                    "%s:%zu: resource %s is not stateMachine:NAME, "
                                    "activity:NAME or *",
                                    name, line, k->resources[j - 2]);
        }
    }
    if (err != NULL) {
        swf_api_credentials_free(c);
        return err;
    }
    if (c->nkeys == 0) {
        swf_api_credentials_free(c);
        return swf_error_new(SWF_E_INPUT, NULL, "%s: no keys", name);
    }
    *out = c;
    return NULL;
}

swf_error_t *swf_api_credentials_load(const char *path, swf_api_credentials_t **out)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return swf_error_new(SWF_E_IO, NULL, "%s: %s", path, strerror(errno));
    char *buf = malloc(SWF_API_CREDENTIALS_BYTES + 1);
    if (buf == NULL)
        abort();
    size_t n = fread(buf, 1, SWF_API_CREDENTIALS_BYTES + 1, f);
    bool bad = ferror(f);
    fclose(f);
    swf_error_t *err = bad ? swf_error_new(SWF_E_IO, NULL, "%s: read failed", path)
                           : swf_api_credentials_parse(path, buf, n, out);
    memset(buf, 0, n);
    free(buf);
    return err;
}

static const key_t_ *key_find(const swf_api_credentials_t *c, const char *id)
{
    for (size_t i = 0; i < c->nkeys; i++)
        if (strcmp(c->keys[i].id, id) == 0)
            return &c->keys[i];
    return NULL;
}

const char *swf_api_credentials_secret(const swf_api_credentials_t *c, const char *id)
{
    const key_t_ *k = key_find(c, id);
    return k ? k->secret : NULL;
}

bool swf_api_credentials_allows(const swf_api_credentials_t *c, const char *id, const char *kind,
                                const char *name)
{
    const key_t_ *k = key_find(c, id);
    if (k == NULL)
        return false;
    size_t kl = kind ? strlen(kind) : 0;
    for (size_t i = 0; i < k->nresources; i++) {
        const char *r = k->resources[i];
        if (strcmp(r, "*") == 0)
            return true;
        if (name != NULL && strncmp(r, kind, kl) == 0 && r[kl] == ':' &&
            strcmp(r + kl + 1, name) == 0)
            return true;
    }
    return false;
}
