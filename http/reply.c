/*
 * Replies and request helpers.  Every reply goes through sl__reply_*, so
 * the error body of docs/rest-api.md and the JSON content type are set in one
 * place.
 */
#include <stdio.h>
#include <stdarg.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>

#include "http/http_int.h"

const char *
sl__req_param(const struct sl__req *req, const char *name)
{
    size_t i = 0;
    size_t nlen = strlen(name);

    for (i = 0; i < req->nparams; i++) {
        const char *pn = req->param_names[i];
        size_t plen = strcspn(pn, "/");

        if (plen == nlen && memcmp(pn, name, nlen) == 0) {
            return req->params[i];
        }
    }
    return NULL;
}

/* The value of the first argument named @name; a query argument without
 * '=' has none (NULL), as if absent. */
const char *
sl__req_query(const struct sl__req *req, const char *name)
{
    size_t i = 0;

    for (i = 0; i < req->nargs; i++) {
        if (strcmp(req->args[i].name, name) == 0) {
            return req->args[i].value;
        }
    }
    return NULL;
}

/* Header names compare without case (RFC 9110); the first one counts. */
const char *
sl__req_header(const struct sl__req *req, const char *name)
{
    size_t i = 0;

    for (i = 0; i < req->nheaders; i++) {
        if (strcasecmp(req->headers[i].name, name) == 0) {
            return req->headers[i].value;
        }
    }
    return NULL;
}

int
sl__req_query_u64(struct sl__req *req,
                  const char *name,
                  uint64_t def,
                  uint64_t max,
                  uint64_t *out)
{
    const char *v = sl__req_query(req, name);
    uint64_t n = 0;

    if (v == NULL) {
        *out = def;
        return 0;
    }
    if (sl_parse_u64(v, &n) != 0 || n > max) {
        (void)sl__reply_error(req,
                              SL_EINVAL,
                              name,
                              "query argument '%s' must be a whole number "
                              "from 0 to %llu, not '%s'",
                              name,
                              (unsigned long long)max,
                              v);
        return SL_EINVAL;
    }
    *out = n;
    return 0;
}

int
sl__req_body_json(struct sl__req *req, json_t **out)
{
    json_error_t jerr;
    json_t *j = NULL;
    char field[64];

    *out = NULL;
    if (req->body.len == 0) {
        return sl__reply_error(
            req, SL_EBADJSON, "body", "the request needs a JSON body");
    }
    j = json_loadb(
        req->body.data, req->body.len, JSON_REJECT_DUPLICATES, &jerr);
    if (j == NULL) {
        (void)snprintf(
            field, sizeof(field), "body:%d:%d", jerr.line, jerr.column);
        (void)sl__reply_error(req,
                              SL_EBADJSON,
                              field,
                              "malformed JSON at line %d, column %d: %s",
                              jerr.line,
                              jerr.column,
                              jerr.text);
        return SL_EBADJSON;
    }
    *out = j;
    return 0;
}

static int
has_control(const char *s)
{
    for (; *s != '\0'; s++) {
        if ((unsigned char)*s < 0x20 || *s == 0x7f) {
            return 1;
        }
    }
    return 0;
}

char *
sl__req_url(const struct sl__req *req, const char *path)
{
    const char *host = sl__req_header(req, "Host");

    if (host == NULL || host[0] == '\0' || strpbrk(host, " \"<>\\") != NULL ||
        !sl_utf8_valid(host, strlen(host)) || has_control(host)) {
        return sl_asprintf("http://%s%s", req->cfg->listen, path);
    }
    return sl_asprintf("http://%s%s", host, path);
}

/* The reply when a response cannot be built: valid JSON whatever failed. */
static const char fallback_body[] =
    "{\"error\":{\"code\":\"INTERNAL_ERROR\",\"message\":\"the server "
    "could not build its reply\"}}\n";

void
sl__resp_free(struct sl__resp *r)
{
    if (!r->fixed) {
        sl_free(r->text);
    }
    if (r->free_ctx != NULL) {
        r->free_ctx(r->ctx);
    }
    sl_buf_free(&r->headers);
    memset(r, 0, sizeof(*r));
}

/* A reply under construction; headers bounded, bodies owned. */
static void
resp_init(struct sl__resp *r)
{
    memset(r, 0, sizeof(*r));
    sl_buf_init(&r->headers, 16 * 1024);
}

/* Adds "name: value"; bytes that would end the line become spaces. */
static void
resp_header(struct sl__resp *r, const char *name, const char *value)
{
    size_t at = r->headers.len;
    size_t i = 0;

    if (sl_buf_appendf(&r->headers, "%s: %s\r\n", name, value) != 0) {
        return;
    }
    for (i = at; i + 2 < r->headers.len; i++) {
        if (r->headers.data[i] == '\r' || r->headers.data[i] == '\n') {
            r->headers.data[i] = ' ';
        }
    }
}

/*
 * Queue @r (taken over) as the reply; @ok 0 when it could not be built,
 * which replies 500 with the fallback body.
 */
static int
queue(struct sl__req *req, unsigned status, struct sl__resp *r, int ok)
{
    if (req->replied) {
        SL_WARN("http: %s %s: a second reply (%u) is dropped",
                req->method,
                req->path,
                status);
        sl__resp_free(r);
        return SL_EIO;
    }
    if (!ok || r->headers.failed) {
        SL_ERROR("http: %s %s: cannot create the %u response",
                 req->method,
                 req->path,
                 status);
        sl__resp_free(r);
        resp_init(r);
        status = 500;
        r->text = (char *)fallback_body;
        r->len = sizeof(fallback_body) - 1;
        r->fixed = 1;
        resp_header(r, "Content-Type", "application/json; charset=utf-8");
    }
    req->resp = *r;
    req->replied = 1;
    req->status = status;
    return ok ? 0 : SL_EINTERNAL;
}

/* @body (reference stolen) as the JSON reply in @r; 0 when it failed. */
static int
json_response(struct sl__resp *r, json_t *body)
{
    char *text = NULL;
    size_t len = 0;

    resp_init(r);
    text = json_dumps(body, JSON_COMPACT | JSON_ENCODE_ANY);
    json_decref(body);
    if (text == NULL) {
        return 0;
    }
    len = strlen(text);
    text = sl_realloc(text, len + 2);
    text[len++] = '\n';
    text[len] = '\0';
    r->text = text;
    r->len = len;
    resp_header(r, "Content-Type", "application/json; charset=utf-8");
    return 1;
}

int
sl__reply_json(struct sl__req *req, unsigned status, json_t *body)
{
    struct sl__resp r;
    int ok = json_response(&r, body);

    return queue(req, status, &r, ok);
}

/*
 * The error body.  Message and field may quote bytes from the request
 * (a path, a parameter), so bytes that are not UTF-8 are escaped: jansson
 * refuses such strings, and the reply must never fail for them.
 */
static json_t *
error_body(int code, const char *field, const char *message)
{
    char msg[1024];
    char fld[256];
    json_t *e = NULL;

    (void)sl_utf8_escape(msg, sizeof(msg), message);
    e = json_pack("{s:s, s:s}", "code", sl_err_api_code(code), "message", msg);
    if (e != NULL && field != NULL && field[0] != '\0') {
        (void)sl_utf8_escape(fld, sizeof(fld), field);
        (void)json_object_set_new(e, "field", json_string(fld));
    }
    return e != NULL ? json_pack("{s:o}", "error", e) : NULL;
}

int
sl__reply_error(
    struct sl__req *req, int code, const char *field, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    unsigned status = (unsigned)sl_err_http_status(code);
    struct sl__resp r;
    int ok = 0;

    va_start(ap, fmt);
    (void)vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (status >= 500) {
        SL_WARN("http: %s %s -> %u %s", req->method, req->path, status, msg);
    }
    ok = json_response(&r, error_body(code, field, msg));
    if (ok && code == SL_ENOTREADY) {
        resp_header(&r, "Retry-After", "1");
    }
    (void)queue(req, status, &r, ok);
    return code;
}

int
sl__reply_err(struct sl__req *req, const struct sl_err *err)
{
    int code = err->code ? err->code : SL_EINTERNAL;

    return sl__reply_error(req,
                           code,
                           err->field,
                           "%s",
                           err->message[0] ? err->message : sl_strerror(code));
}

int
sl__reply_method_not_allowed(struct sl__req *req, const char *allow)
{
    char msg[256];
    struct sl__resp r;
    int ok = 0;

    (void)snprintf(msg,
                   sizeof(msg),
                   "%s is not allowed on '%s'; use %s",
                   req->method,
                   req->path,
                   allow);
    ok = json_response(&r, error_body(SL_EMETHOD, "method", msg));
    if (ok) {
        resp_header(&r, "Allow", allow);
    }
    (void)queue(req, 405, &r, ok);
    return SL_EMETHOD;
}

int
sl__reply_stream(
    struct sl__req *req,
    unsigned status,
    const char *content_type,
    uint64_t size,
    ssize_t (*read)(void *ctx, uint64_t pos, char *buf, size_t max),
    void *ctx,
    void (*free_ctx)(void *ctx))
{
    struct sl__resp r;

    resp_init(&r);
    r.size = size;
    r.read = read;
    r.ctx = ctx;
    r.free_ctx = free_ctx;
    resp_header(&r, "Content-Type", content_type);
    return queue(req, status, &r, 1);
}

int
sl__reply_text_headers(struct sl__req *req,
                       unsigned status,
                       const char *content_type,
                       char *text,
                       size_t len,
                       ...)
{
    struct sl__resp r;
    const char *name = NULL;
    va_list ap;

    resp_init(&r);
    r.text = text;
    r.len = len;
    resp_header(&r, "Content-Type", content_type);
    va_start(ap, len);
    while ((name = va_arg(ap, const char *)) != NULL) {
        resp_header(&r, name, va_arg(ap, const char *));
    }
    va_end(ap);
    return queue(req, status, &r, 1);
}

int
sl__reply_empty(struct sl__req *req, unsigned status)
{
    struct sl__resp r;

    resp_init(&r);
    return queue(req, status, &r, 1);
}
