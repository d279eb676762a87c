/*
 * The HTTP server's requests: routing, the token, the limits, the body
 * (buffered or streamed to the route) and the handler.  The connections
 * that carry them are conn.c's.  Shutdown closes the listener and waits
 * for in-flight requests before closing the connections.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "http/http_int.h"

struct sl_http_server {
    struct sl__net *net;
    struct sl_http_config cfg; /* strings below are owned copies */
    char *listen;
    char *api_token;
    struct sl_http_services svc;
    int need_token;     /* listening on a non-loopback address */
    atomic_uint active; /* requests between first call and completion */
    unsigned port;
    struct sl__http_metrics *metrics;
    struct sl__delta_counts *delta_counts;
};

/* ------------------------------------------------------------------------
 * Listen address parsing.
 * --------------------------------------------------------------------- */

/*
 * Split "host:port" or "[v6]:port" and resolve the host numerically or by
 * name (getaddrinfo), so "localhost:8080" works as well as "0.0.0.0:80".
 */
static int
parse_listen(const char *listen,
             struct sockaddr_storage *ss,
             socklen_t *len,
             struct sl_err *err)
{
    char host[256];
    const char *colon = strrchr(listen, ':');
    const char *h = listen;
    size_t hlen = 0;
    uint64_t port = 0;
    struct addrinfo hints;
    struct addrinfo *res = NULL;
    int gai = 0;

    if (colon == NULL || sl_parse_u64(colon + 1, &port) != 0 || port > 65535) {
        return sl_err_set(err,
                          SL_ECONFIG,
                          "listen",
                          "listen address '%s' must be HOST:PORT",
                          listen);
    }
    hlen = (size_t)(colon - listen);
    if (hlen >= 2 && h[0] == '[' && h[hlen - 1] == ']') {
        h++;
        hlen -= 2;
    }
    if (hlen == 0 || hlen >= sizeof(host)) {
        return sl_err_set(err,
                          SL_ECONFIG,
                          "listen",
                          "listen address '%s' has no host",
                          listen);
    }
    memcpy(host, h, hlen);
    host[hlen] = '\0';
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    gai = getaddrinfo(host, NULL, &hints, &res);
    if (gai != 0 || res == NULL) {
        return sl_err_set(err,
                          SL_ECONFIG,
                          "listen",
                          "cannot resolve listen host '%s': %s",
                          host,
                          gai_strerror(gai));
    }
    memcpy(ss, res->ai_addr, res->ai_addrlen);
    *len = res->ai_addrlen;
    freeaddrinfo(res);
    if (ss->ss_family == AF_INET) {
        ((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
    } else {
        ((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
    }
    return 0;
}

static int
is_loopback(const struct sockaddr_storage *ss)
{
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)ss;

        return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    }
    if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;

        return IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * Routing.
 * --------------------------------------------------------------------- */

/*
 * Match @path against one pattern; fills the captures of @req when
 * @capture is set.  Segments compare literally; ":x" takes one non-empty
 * segment, "*x" the non-empty rest.
 */
static int
match_pattern(const char *pattern,
              const char *path,
              struct sl__req *req,
              int capture)
{
    const char *p = pattern;
    const char *s = path;
    size_t n = 0;

    while (*p != '\0') {
        const char *pe = NULL;
        const char *se = NULL;

        if (*p != '/' || *s != '/') {
            return 0;
        }
        p++;
        s++;
        pe = strchr(p, '/');
        pe = pe ? pe : p + strlen(p);
        se = strchr(s, '/');
        se = se ? se : s + strlen(s);
        if (*p == '*') {
            if (*s == '\0') {
                return 0;
            }
            if (capture && n < SL__ROUTE_MAX_PARAMS) {
                req->param_names[n] = p + 1;
                req->params[n++] = sl_strdup(s);
            }
            req->nparams = capture ? n : req->nparams;
            return 1;
        }
        if (*p == ':') {
            if (se == s) {
                return 0;
            }
            if (capture && n < SL__ROUTE_MAX_PARAMS) {
                req->param_names[n] = p + 1;
                req->params[n++] = sl_strndup(s, (size_t)(se - s));
            }
        } else if ((size_t)(pe - p) != (size_t)(se - s) ||
                   memcmp(p, s, (size_t)(pe - p)) != 0) {
            return 0;
        }
        p = pe;
        s = se;
    }
    if (*s != '\0') {
        return 0;
    }
    if (capture) {
        req->nparams = n;
    }
    return 1;
}

static void
clear_params(struct sl__req *req)
{
    size_t i = 0;

    for (i = 0; i < req->nparams; i++) {
        SL_FREE(req->params[i]);
    }
    req->nparams = 0;
}

/*
 * Find the route for method and path.  Returns the route, or NULL with
 * @allow filled (comma-separated methods) when the path exists under other
 * methods, or NULL with an empty @allow when the path is unknown.
 */
static const struct sl__route *
route_find(struct sl__req *req, char *allow, size_t allow_cap)
{
    const struct sl__route *r = NULL;
    const char *method = req->method;

    allow[0] = '\0';
    if (strcmp(method, "HEAD") == 0) {
        method = "GET";
    }
    for (r = sl__routes; r->method != NULL; r++) {
        if (!match_pattern(r->pattern, req->path, req, 0)) {
            continue;
        }
        if (strcmp(r->method, method) == 0) {
            (void)match_pattern(r->pattern, req->path, req, 1);
            return r;
        }
        if (strstr(allow, r->method) == NULL) {
            size_t used = strlen(allow);

            (void)snprintf(allow + used,
                           allow_cap - used,
                           "%s%s",
                           used ? ", " : "",
                           r->method);
        }
    }
    if (allow[0] != '\0' && strstr(allow, "GET") != NULL) {
        size_t used = strlen(allow);

        (void)snprintf(allow + used, allow_cap - used, ", HEAD");
    }
    return NULL;
}

/* ------------------------------------------------------------------------
 * Request life cycle.
 * --------------------------------------------------------------------- */

static int
token_ok(struct sl_http_server *s, struct sl__req *req)
{
    const char *auth = sl__req_header(req, "Authorization");
    size_t want = strlen(s->api_token);
    size_t got = 0;

    if (auth == NULL || strncmp(auth, "Bearer ", 7) != 0) {
        return 0;
    }
    auth += 7;
    got = strlen(auth);
    return got == want && CRYPTO_memcmp(auth, s->api_token, want) == 0;
}

static void
req_free(struct sl__req *req)
{
    size_t i = 0;

    if (req == NULL) {
        return;
    }
    if (req->route != NULL && req->route->on_cleanup != NULL) {
        req->route->on_cleanup(req);
    }
    clear_params(req);
    sl_buf_free(&req->body);
    for (i = 0; i < req->nheaders; i++) {
        sl_free(req->headers[i].name);
        sl_free(req->headers[i].value);
    }
    for (i = 0; i < req->nargs; i++) {
        sl_free(req->args[i].name);
        sl_free(req->args[i].value);
    }
    sl_free(req->headers);
    sl_free(req->args);
    sl__resp_free(&req->resp);
    sl_free(req->method);
    sl_free(req->path);
    sl_free(req);
}

/*
 * Path parameters and query arguments reach handlers, stores and LMDB
 * keys as text: bytes that are not UTF-8 (a decoded %ff) are refused here
 * with a 400 that names the parameter, so no handler meets them.
 */
static int
check_request_text(struct sl__req *req)
{
    const char *bad = NULL;
    size_t i = 0;

    for (i = 0; i < req->nparams; i++) {
        if (!sl_utf8_valid(req->params[i], strlen(req->params[i]))) {
            /* param_names[i] points into the route pattern */
            char name[64];

            (void)snprintf(name,
                           sizeof(name),
                           "%.*s",
                           (int)strcspn(req->param_names[i], "/"),
                           req->param_names[i]);
            return sl__reply_error(req,
                                   SL_EBADNAME,
                                   name,
                                   "path parameter '%s' is not valid UTF-8 "
                                   "once percent-decoded: '%s'",
                                   name,
                                   req->params[i]);
        }
    }
    for (i = 0; i < req->nargs && bad == NULL; i++) {
        const struct sl__kv *a = &req->args[i];

        if (!sl_utf8_valid(a->name, strlen(a->name)) ||
            (a->value != NULL && !sl_utf8_valid(a->value, strlen(a->value)))) {
            bad = a->name;
        }
    }
    if (bad != NULL) {
        return sl__reply_error(req,
                               SL_EINVAL,
                               bad,
                               "query argument '%s' is not valid UTF-8 once "
                               "percent-decoded",
                               bad);
    }
    return 0;
}

/* The bytes of @n names and values, with a few for the separators. */
static uint64_t
kv_size(const struct sl__kv *kv, size_t n)
{
    uint64_t sum = 0;
    size_t i = 0;

    for (i = 0; i < n; i++) {
        sum += strlen(kv[i].name) +
               (kv[i].value != NULL ? strlen(kv[i].value) : 0) + 4;
    }
    return sum;
}

/*
 * The request line and headers against http.maxHeaderBytes: 414 when the
 * path and query alone are over it, 431 for the whole head.  (The parser
 * reads heads up to about twice the limit, see conn.c; past that it is
 * answered there.)
 */
static int
check_head(struct sl__req *req)
{
    uint64_t limit = req->server->cfg.max_header_bytes;
    uint64_t target = strlen(req->path) + kv_size(req->args, req->nargs);
    uint64_t head = kv_size(req->headers, req->nheaders);

    if (target > limit) {
        return sl__reply_error(req,
                               SL_EURITOOLONG,
                               "path",
                               "the request path and query have about %llu "
                               "bytes, more than http.maxHeaderBytes (%llu)",
                               (unsigned long long)target,
                               (unsigned long long)limit);
    }
    if (target + head > limit) {
        return sl__reply_error(req,
                               SL_EHEADERS,
                               "headers",
                               "the request line and headers have about %llu "
                               "bytes, more than http.maxHeaderBytes (%llu)",
                               (unsigned long long)(target + head),
                               (unsigned long long)limit);
    }
    return 0;
}

/*
 * A browser sends Origin with a request that changes state; one from a
 * page of another site (a form or a fetch aimed at 127.0.0.1) must not
 * start or cancel anything, even where no token is needed.  A request
 * other than GET and HEAD whose Origin is not this server's (http or
 * https, and the Host it asked for) gets 403; clients that send no Origin
 * (curl, the sluice commands, workers) are not concerned.  Returns 1 when it
 * answered.
 */
static int
cross_origin(struct sl__req *req)
{
    const char *origin = sl__req_header(req, "Origin");
    const char *host = sl__req_header(req, "Host");

    if (origin == NULL || strcmp(req->method, "GET") == 0 ||
        strcmp(req->method, "HEAD") == 0) {
        return 0;
    }
    if (strncmp(origin, "http://", 7) == 0) {
        origin += 7;
    } else if (strncmp(origin, "https://", 8) == 0) {
        origin += 8; /* behind a TLS proxy */
    }
    if (host != NULL && strcmp(origin, host) == 0) {
        return 0;
    }
    origin = sl__req_header(req, "Origin");
    req->route = NULL;
    (void)sl__reply_error(req,
                          SL_EACCES,
                          "Origin",
                          "a %s from the page of another site ('%s') is "
                          "refused",
                          req->method,
                          origin);
    return 1;
}

/*
 * The head of a request is read: route it, check the token and the
 * declared body size, and let streaming routes look at the request before
 * the body.  Whatever fails is answered at once, and the body is then not
 * read.
 */
void
sl__req_begin(struct sl__req *req)
{
    struct sl_http_server *s = req->server;
    const char *clen = NULL;
    uint64_t declared = 0;
    uint64_t limit = s->cfg.max_body_bytes;
    char allow[128];

    if (check_head(req) != 0) {
        return;
    }
    req->route = route_find(req, allow, sizeof(allow));
    if (s->need_token && !token_ok(s, req) &&
        (req->route == NULL || !(req->route->flags & SL__ROUTE_PUBLIC))) {
        /* the dashboard's files hold no data: the page asks for the
         * token itself; anything else, known or not, needs it */
        req->route = NULL;
        (void)sl__reply_error(req,
                              SL_EUNAUTH,
                              "Authorization",
                              "this server needs 'Authorization: Bearer "
                              "<token>' on every request");
        return;
    }
    if (cross_origin(req)) {
        return;
    }
    if (req->route == NULL) {
        if (allow[0] != '\0') {
            (void)sl__reply_method_not_allowed(req, allow);
        } else {
            (void)sl__reply_error(
                req, SL_ENOENT, "path", "no resource at '%s'", req->path);
        }
        return;
    }
    if (check_request_text(req) != 0) {
        return;
    }
    if ((req->route->flags & SL__ROUTE_STREAM_BODY) &&
        !(req->route->flags & SL__ROUTE_JSON_LIMIT)) {
        limit = s->cfg.max_object_bytes;
    }
    clen = sl__req_header(req, "Content-Length");
    if (clen != NULL && sl_parse_u64(clen, &declared) == 0 &&
        declared > limit) {
        (void)sl__reply_error(req,
                              SL_ETOOLARGE,
                              "Content-Length",
                              "request body of %llu bytes exceeds the limit "
                              "of %llu bytes",
                              (unsigned long long)declared,
                              (unsigned long long)limit);
        return;
    }
    if (req->route->on_begin != NULL) {
        (void)req->route->on_begin(req);
    }
}

/*
 * Body bytes: buffered up to max_body_bytes, or handed to the streaming
 * route.  A failure is answered at once (the connection then closes
 * without reading the rest).
 */
int
sl__req_body(struct sl__req *req, const char *data, size_t len)
{
    struct sl_http_server *s = req->server;
    uint64_t limit = s->cfg.max_body_bytes;
    int rc = 0;

    if (req->replied || req->route == NULL) {
        return -1;
    }
    req->body_bytes += len;
    if ((req->route->flags & SL__ROUTE_STREAM_BODY) &&
        !(req->route->flags & SL__ROUTE_JSON_LIMIT)) {
        limit = s->cfg.max_object_bytes;
    }
    if (req->body_bytes > limit) {
        (void)sl_err_set(&req->pending,
                         SL_ETOOLARGE,
                         "body",
                         "request body exceeds the limit of %llu bytes",
                         (unsigned long long)limit);
    } else if (req->route->flags & SL__ROUTE_STREAM_BODY) {
        rc = req->route->on_body(req, data, len, &req->pending);
        if (rc != 0 && req->pending.code == 0) {
            (void)sl_err_set(&req->pending, rc, "body", "%s", sl_strerror(rc));
        }
    } else if (sl_buf_append(&req->body, data, len) != 0) {
        (void)sl_err_set(&req->pending,
                         SL_ETOOLARGE,
                         "body",
                         "request body exceeds the limit of %llu bytes",
                         (unsigned long long)limit);
    }
    if (req->pending.code != 0) {
        (void)sl__reply_err(req, &req->pending);
        return -1;
    }
    return 0;
}

struct sl__req *
sl__req_new(struct sl_http_server *s)
{
    struct sl__req *req = sl_calloc(1, sizeof(*req));

    req->server = s;
    req->svc = &s->svc;
    req->cfg = &s->cfg;
    req->method = sl_strdup("");
    req->path = sl_strdup("");
    req->metrics = s->metrics;
    req->delta_counts = s->delta_counts;
    req->start_us = sl_mono_us();
    sl_buf_init(&req->body, (size_t)s->cfg.max_body_bytes);
    atomic_fetch_add(&s->active, 1);
    return req;
}

void
sl__req_end(struct sl__req *req)
{
    sl_test_delay("http.handler"); /* a handler that works for long */
    if (!req->replied && req->pending.code != 0) {
        (void)sl__reply_err(req, &req->pending);
    }
    if (!req->replied && req->route != NULL) {
        (void)req->route->handler(req);
    }
    if (!req->replied) {
        (void)sl__reply_error(req, SL_EINTERNAL, NULL, "handler gave no reply");
    }
}

void
sl__req_finish(struct sl__req *req)
{
    struct sl_http_server *s = req->server;

    if (req->status != 0 && s->metrics != NULL) {
        sl__http_metrics_observe(
            s->metrics, req->route, req->status, sl_mono_us() - req->start_us);
    }
    req_free(req);
    atomic_fetch_sub(&s->active, 1);
}

const struct sl_http_config *
sl__server_cfg(const struct sl_http_server *s)
{
    return &s->cfg;
}

/* ------------------------------------------------------------------------
 * Start and stop.
 * --------------------------------------------------------------------- */

int
sl_http_start(const struct sl_http_config *cfg,
              const struct sl_http_services *svc,
              struct sl_http_server **out,
              struct sl_err *err)
{
    struct sl_http_server *s = NULL;
    struct sockaddr_storage ss;
    socklen_t sslen = 0;
    int rc = 0;

    *out = NULL;
    memset(&ss, 0, sizeof(ss));
    rc = parse_listen(cfg->listen, &ss, &sslen, err);
    if (rc != 0) {
        return rc;
    }
    s = sl_calloc(1, sizeof(*s));
    s->cfg = *cfg;
    s->listen = sl_strdup(cfg->listen);
    s->api_token = sl_strdup(cfg->api_token ? cfg->api_token : "");
    s->cfg.listen = s->listen;
    s->cfg.api_token = s->api_token;
    s->svc = *svc;
    s->metrics = cfg->metrics_off ? NULL : sl__http_metrics_new();
    if (s->metrics != NULL && svc->delta != NULL) {
        s->delta_counts = sl__delta_counts_new(svc->delta);
    }
    s->need_token = !is_loopback(&ss);
    if (s->need_token && s->api_token[0] == '\0') {
        rc = sl_err_set(err,
                        SL_ECONFIG,
                        "apiToken",
                        "listening on the non-loopback address '%s' needs "
                        "an apiToken in the configuration",
                        cfg->listen);
        goto fail;
    }
    rc = sl__net_start(s, &ss, sslen, &s->net, err);
    if (rc != 0) {
        goto fail;
    }
    s->port = sl__net_port(s->net);
    *out = s;
    return 0;

fail:
    sl__delta_counts_free(s->delta_counts);
    sl__http_metrics_free(s->metrics);
    sl_free(s->listen);
    sl_free(s->api_token);
    sl_free(s);
    return rc;
}

unsigned
sl_http_port(const struct sl_http_server *s)
{
    return s->port;
}

unsigned
sl_http_active_requests(const struct sl_http_server *s)
{
    return atomic_load(&((struct sl_http_server *)s)->active);
}

void
sl_http_stop(struct sl_http_server *s, unsigned grace_ms)
{
    int64_t deadline = 0;

    if (s == NULL) {
        return;
    }
    sl__net_quiesce(s->net);
    deadline = sl_mono_ms() + grace_ms;
    while (atomic_load(&s->active) > 0 && sl_mono_ms() < deadline) {
        struct timespec ts = {0, 10 * 1000 * 1000};

        (void)nanosleep(&ts, NULL);
    }
    if (atomic_load(&s->active) > 0) {
        SL_WARN("http: stopping with %u request(s) still in flight",
                atomic_load(&s->active));
    }
    sl__net_stop(s->net);
    sl__delta_counts_free(s->delta_counts);
    sl__http_metrics_free(s->metrics);
    sl_free(s->listen);
    sl_free(s->api_token);
    sl_free(s);
}
