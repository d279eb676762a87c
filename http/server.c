/*
 * The HTTP server: libmicrohttpd in thread-pool mode.  One access-handler
 * entry point matches the route, checks the token and the limits, buffers
 * or streams the body and calls the handler; the completion callback frees
 * the request.  Shutdown quiesces the listener and waits for in-flight
 * requests before stopping the daemon.
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

#include <microhttpd.h>
#include <openssl/crypto.h>

#include "http/http_int.h"

/* Body bytes read and dropped after a failure before the connection is
 * closed instead of answered. */
#define DISCARD_MAX (64u << 20)

struct sl_http_server {
    struct MHD_Daemon *daemon;
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
token_ok(struct sl_http_server *s, struct MHD_Connection *conn)
{
    const char *auth =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
    size_t want = strlen(s->api_token);
    size_t got = 0;

    if (auth == NULL || strncmp(auth, "Bearer ", 7) != 0) {
        return 0;
    }
    auth += 7;
    got = strlen(auth);
    return got == want && CRYPTO_memcmp(auth, s->api_token, want) == 0;
}

static char *
normalize_path(const char *url)
{
    size_t len = strlen(url);

    while (len > 1 && url[len - 1] == '/') {
        len--;
    }
    return sl_strndup(url, len);
}

static void
req_free(struct sl__req *req)
{
    if (req == NULL) {
        return;
    }
    if (req->route != NULL && req->route->on_cleanup != NULL) {
        req->route->on_cleanup(req);
    }
    clear_params(req);
    sl_buf_free(&req->body);
    sl_free(req->method);
    sl_free(req->path);
    sl_free(req);
}

/* Finds the first query argument whose name or value is not UTF-8. */
static enum MHD_Result
find_bad_arg(void *cls,
             enum MHD_ValueKind kind,
             const char *key,
             const char *value)
{
    const char **bad = cls;

    (void)kind;
    if (!sl_utf8_valid(key, strlen(key)) ||
        (value != NULL && !sl_utf8_valid(value, strlen(value)))) {
        *bad = key;
        return MHD_NO;
    }
    return MHD_YES;
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
    (void)MHD_get_connection_values(
        req->conn, MHD_GET_ARGUMENT_KIND, find_bad_arg, &bad);
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

/* Adds the size of one header or query argument to *cls. */
static enum MHD_Result
add_size(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    uint64_t *sum = cls;

    (void)kind;
    *sum += strlen(key) + (value != NULL ? strlen(value) : 0) + 4;
    return MHD_YES;
}

/*
 * The request line and headers against http.maxHeaderBytes: 414 when the
 * path and query alone are over it, 431 for the whole head.  (The pool
 * is larger than the limit, see pool_bytes, so these are answered here.)
 */
static int
check_head(struct sl__req *req)
{
    uint64_t limit = req->server->cfg.max_header_bytes;
    uint64_t target = strlen(req->path);
    uint64_t head = 0;

    (void)MHD_get_connection_values(
        req->conn, MHD_GET_ARGUMENT_KIND, add_size, &target);
    if (target > limit) {
        return sl__reply_error(req,
                               SL_EURITOOLONG,
                               "path",
                               "the request path and query have about %llu "
                               "bytes, more than http.maxHeaderBytes (%llu)",
                               (unsigned long long)target,
                               (unsigned long long)limit);
    }
    (void)MHD_get_connection_values(
        req->conn, MHD_HEADER_KIND, add_size, &head);
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
 * First call of a request: route it, check the token and the declared body
 * size, and let streaming routes look at the request before the body.
 * Whatever fails is answered at once, and the body is then not read.
 */
static void
first_call(struct sl__req *req)
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
    if (s->need_token && !token_ok(s, req->conn) &&
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
    clen = MHD_lookup_connection_value(
        req->conn, MHD_HEADER_KIND, "Content-Length");
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
 * route.  libmicrohttpd cannot answer before the body is read, so a failure
 * here is kept in req->pending and answered when the body is complete; the
 * rest of the body is dropped.  Returns 0, or -1 to close the connection
 * when the client keeps sending far past a failure.
 */
static int
body_chunk(struct sl__req *req, const char *data, size_t len)
{
    struct sl_http_server *s = req->server;
    uint64_t limit = s->cfg.max_body_bytes;
    int rc = 0;

    if (req->replied || req->pending.code != 0 || req->route == NULL) {
        req->discarded += len;
        return req->discarded > DISCARD_MAX ? -1 : 0;
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
        return 0;
    }
    if (req->route->flags & SL__ROUTE_STREAM_BODY) {
        rc = req->route->on_body(req, data, len, &req->pending);
        if (rc != 0 && req->pending.code == 0) {
            (void)sl_err_set(&req->pending, rc, "body", "%s", sl_strerror(rc));
        }
        return 0;
    }
    rc = sl_buf_append(&req->body, data, len);
    if (rc != 0) {
        (void)sl_err_set(&req->pending,
                         SL_ETOOLARGE,
                         "body",
                         "request body exceeds the limit of %llu bytes",
                         (unsigned long long)limit);
    }
    return 0;
}

static enum MHD_Result
on_access(void *cls,
          struct MHD_Connection *conn,
          const char *url,
          const char *method,
          const char *version,
          const char *upload_data,
          size_t *upload_data_size,
          void **con_cls)
{
    struct sl_http_server *s = cls;
    struct sl__req *req = *con_cls;

    (void)version;
    if (req == NULL) {
        req = sl_calloc(1, sizeof(*req));
        req->server = s;
        req->conn = conn;
        req->svc = &s->svc;
        req->cfg = &s->cfg;
        req->method = sl_strdup(method);
        req->path = normalize_path(url);
        req->metrics = s->metrics;
        req->delta_counts = s->delta_counts;
        req->start_us = sl_mono_us();
        sl_buf_init(&req->body, (size_t)s->cfg.max_body_bytes);
        atomic_fetch_add(&s->active, 1);
        *con_cls = req;
        first_call(req);
        return MHD_YES;
    }
    if (*upload_data_size > 0) {
        if (body_chunk(req, upload_data, *upload_data_size) != 0) {
            SL_WARN("http: %s %s: closing the connection after %llu bytes "
                    "sent past an error",
                    req->method,
                    req->path,
                    (unsigned long long)req->discarded);
            return MHD_NO;
        }
        *upload_data_size = 0;
        return MHD_YES;
    }
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
    return MHD_YES;
}

static void
on_completed(void *cls,
             struct MHD_Connection *conn,
             void **con_cls,
             enum MHD_RequestTerminationCode toe)
{
    struct sl_http_server *s = cls;
    struct sl__req *req = *con_cls;

    (void)conn;
    if (req == NULL) {
        return;
    }
    if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK) {
        SL_DEBUG("http: %s %s ended early (code %d)",
                 req->method,
                 req->path,
                 (int)toe);
    }
    if (req->status != 0 && s->metrics != NULL) {
        sl__http_metrics_observe(
            s->metrics, req->route, req->status, sl_mono_us() - req->start_us);
    }
    req_free(req);
    *con_cls = NULL;
    atomic_fetch_sub(&s->active, 1);
}

/*
 * MHD unescapes the path before routing.  A decoded NUL would cut the path
 * short and address another resource, so it becomes 0x01, which every name
 * check rejects as a control character.
 */
static size_t
unescape(void *cls, struct MHD_Connection *conn, char *uri)
{
    size_t len = 0;
    size_t i = 0;

    (void)cls;
    (void)conn;
    for (i = 0; uri[i] != '\0'; i++) {
        if (uri[i] == '%' && uri[i + 1] == '0' && uri[i + 2] == '0') {
            uri[i + 2] = '1';
        }
    }
    len = MHD_http_unescape(uri);
    return len;
}

static void
mhd_log(void *cls, const char *fmt, va_list ap)
{
    char line[512];

    (void)cls;
    (void)vsnprintf(line, sizeof(line), fmt, ap);
    line[strcspn(line, "\n")] = '\0';
    SL_DEBUG("microhttpd: %s", line);
}

/* ------------------------------------------------------------------------
 * Start and stop.
 * --------------------------------------------------------------------- */

/*
 * The memory of one connection (libmicrohttpd's pool): twice the head
 * limit, so that a request line or headers somewhat over the limit are
 * still read whole and answered by check_head with the JSON error body;
 * only a head over twice the limit gets libmicrohttpd's own reply.
 */
static size_t
pool_bytes(const struct sl_http_config *cfg)
{
    return (size_t)cfg->max_header_bytes * 2 + 4096;
}

int
sl_http_start(const struct sl_http_config *cfg,
              const struct sl_http_services *svc,
              struct sl_http_server **out,
              struct sl_err *err)
{
    struct sl_http_server *s = NULL;
    struct sockaddr_storage ss;
    socklen_t sslen = 0;
    const union MHD_DaemonInfo *info = NULL;
    /* One thread per connection: a handler may work for seconds (a bulk
     * of 16 MiB appended while others wait for the journal, a finish that
     * waits for the bulkbuilder); in a shared pool thread that stalls the
     * other connections of the thread until their idle timeout closes
     * them without a reply.  Connections are bounded by maxConnections
     * and maxConnectionsPerIp. */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD |
                     MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL |
                     MHD_USE_ITC | MHD_USE_ERROR_LOG;
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
    if (ss.ss_family == AF_INET6) {
        flags |= MHD_USE_IPv6;
    }
    s->daemon = MHD_start_daemon(flags,
                                 0,
                                 NULL,
                                 NULL,
                                 on_access,
                                 s,
                                 MHD_OPTION_SOCK_ADDR,
                                 (struct sockaddr *)&ss,
                                 MHD_OPTION_CONNECTION_LIMIT,
                                 (unsigned)cfg->max_connections,
                                 MHD_OPTION_PER_IP_CONNECTION_LIMIT,
                                 cfg->max_conn_per_ip,
                                 MHD_OPTION_CONNECTION_MEMORY_LIMIT,
                                 pool_bytes(cfg),
                                 MHD_OPTION_CONNECTION_TIMEOUT,
                                 (unsigned)cfg->request_timeout_s,
                                 MHD_OPTION_NOTIFY_COMPLETED,
                                 on_completed,
                                 s,
                                 MHD_OPTION_UNESCAPE_CALLBACK,
                                 unescape,
                                 NULL,
                                 MHD_OPTION_EXTERNAL_LOGGER,
                                 mhd_log,
                                 NULL,
                                 MHD_OPTION_END);
    if (s->daemon == NULL) {
        rc = sl_err_set(err,
                        SL_EIO,
                        "listen",
                        "cannot listen on '%s' (address in use or not "
                        "available)",
                        cfg->listen);
        goto fail;
    }
    info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info != NULL ? info->port : 0;
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
    MHD_socket lsock = MHD_INVALID_SOCKET;

    if (s == NULL) {
        return;
    }
    lsock = MHD_quiesce_daemon(s->daemon);
    if (lsock != MHD_INVALID_SOCKET) {
        (void)close(lsock);
    }
    deadline = sl_mono_ms() + grace_ms;
    while (atomic_load(&s->active) > 0 && sl_mono_ms() < deadline) {
        struct timespec ts = {0, 10 * 1000 * 1000};

        (void)nanosleep(&ts, NULL);
    }
    if (atomic_load(&s->active) > 0) {
        SL_WARN("http: stopping with %u request(s) still in flight",
                atomic_load(&s->active));
    }
    MHD_stop_daemon(s->daemon);
    sl__delta_counts_free(s->delta_counts);
    sl__http_metrics_free(s->metrics);
    sl_free(s->listen);
    sl_free(s->api_token);
    sl_free(s);
}
