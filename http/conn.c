/*
 * The server's connections: a listener thread accepts them and starts a
 * thread for each, which reads its requests with http-parser, hands them
 * to server.c (sl__req_*) and writes the replies.  Every answer, to
 * malformed HTTP as well (a bad Content-Length, bad chunk syntax, a head
 * over the limits), is the JSON error body of docs/rest-api.md.
 *
 * Threads: the listener; one per connection, on a blocking socket whose
 * reads and writes time out after http.requestTimeoutSeconds without
 * progress.  A handler may work for seconds (a bulk of 16 MiB appended, a
 * finish that waits for the bulkbuilder); it holds only its own thread.
 * net->mu guards the list of connections.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <http_parser.h>

#include "http/http_int.h"

#define READ_BYTES   (64u * 1024)
#define STREAM_BYTES (64u * 1024)
/* After an early answer (an error before the body is read), the rest of
 * what the client sends is read and dropped for a while before the close,
 * so that the answer is not lost to a reset. */
#define LINGER_BYTES (64u << 20)
#define LINGER_MS    2000
/* Headers and query arguments of one request, at most. */
#define MAX_FIELDS 1024

struct conn {
    struct sl__net *net;
    struct conn *prev;
    struct conn *next;
    int fd;
    struct sockaddr_storage peer;
    http_parser p;
    struct sl__req *req; /* the request being read, or NULL */
    struct sl_buf url;   /* the request target as sent */
    struct sl_buf field; /* the header name being read */
    struct sl_buf value; /* and its value */
    int in_value;        /* the last bytes were a value's */
    int seen_field;      /* a header has begun (past the target) */
    size_t hcap;         /* headers the request has room for */
    int close;           /* close after this reply */
    int linger;          /* answered before the client was done */
    int head;            /* the request, read whole, is a HEAD */
};

struct sl__net {
    struct sl_http_server *s;
    const struct sl_http_config *cfg;
    int lfd;
    int wake[2]; /* the listener polls wake[0]; quiesce writes wake[1] */
    pthread_t thread;
    int running; /* the listener thread was started and not joined */
    unsigned port;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct conn *conns;
    unsigned nconns;
};

static const http_parser_settings settings;

/* ------------------------------------------------------------------------
 * Writing.
 * --------------------------------------------------------------------- */

static int
send_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = send(fd, data, len, MSG_NOSIGNAL);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return -1;
        }
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

/* The streamed body of @r, @r->size bytes from its reader. */
static int
send_stream(int fd, struct sl__resp *r)
{
    char *buf = sl_malloc(STREAM_BYTES);
    uint64_t pos = 0;
    int rc = 0;

    while (rc == 0 && pos < r->size) {
        size_t want = r->size - pos < STREAM_BYTES ? (size_t)(r->size - pos)
                                                   : STREAM_BYTES;
        ssize_t n = r->read(r->ctx, pos, buf, want);

        if (n <= 0 || (size_t)n > want) {
            rc = -1; /* the length was promised: close */
            break;
        }
        rc = send_all(fd, buf, (size_t)n);
        pos += (uint64_t)n;
    }
    sl_free(buf);
    return rc;
}

static int
body_allowed(unsigned status)
{
    return status >= 200 && status != 204 && status != 304;
}

/* Writes the reply of @c's request; -1 when the connection is broken. */
static int
send_reply(struct conn *c)
{
    struct sl__req *req = c->req;
    struct sl__resp *r = &req->resp;
    const char *reason = http_status_str((enum http_status)req->status);
    int head_only = c->head || !body_allowed(req->status);
    uint64_t size = r->read != NULL ? r->size : r->len;
    struct sl_buf head;
    char date[64];
    struct tm tm;
    time_t now = time(NULL);
    int rc = 0;

    (void)strftime(
        date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", gmtime_r(&now, &tm));
    sl_buf_init(&head, 64 * 1024);
    (void)sl_buf_appendf(&head,
                         "HTTP/1.1 %u %s\r\nDate: %s\r\n%s",
                         req->status,
                         reason,
                         date,
                         r->headers.data != NULL ? r->headers.data : "");
    if (body_allowed(req->status)) {
        (void)sl_buf_appendf(
            &head, "Content-Length: %llu\r\n", (unsigned long long)size);
    }
    (void)sl_buf_appendf(
        &head, "%s\r\n", c->close ? "Connection: close\r\n" : "");
    if (head.failed) {
        sl_buf_free(&head);
        return -1;
    }
    if (!head_only && r->read == NULL && r->len > 0) {
        struct iovec iov[2] = {{head.data, head.len}, {r->text, r->len}};
        struct msghdr msg;
        size_t total = head.len + r->len;
        ssize_t n = 0;

        memset(&msg, 0, sizeof(msg));
        msg.msg_iov = iov;
        msg.msg_iovlen = 2;
        do {
            n = sendmsg(c->fd, &msg, MSG_NOSIGNAL);
        } while (n < 0 && errno == EINTR);
        if (n < 0) {
            rc = -1;
        } else if ((size_t)n < head.len) {
            rc = send_all(c->fd, head.data + n, head.len - (size_t)n);
            rc = rc == 0 ? send_all(c->fd, r->text, r->len) : rc;
        } else if ((size_t)n < total) {
            rc = send_all(c->fd, r->text + (n - head.len), total - (size_t)n);
        }
    } else {
        rc = send_all(c->fd, head.data, head.len);
        if (rc == 0 && !head_only && r->read != NULL) {
            rc = send_stream(c->fd, r);
        }
    }
    sl_buf_free(&head);
    return rc;
}

/* The request of @c is answered: write the reply and end the request. */
static int
finish(struct conn *c)
{
    int rc = send_reply(c);

    sl__req_finish(c->req);
    c->req = NULL;
    c->head = 0;
    if (rc != 0) {
        c->close = 1;
    }
    return rc;
}

/* ------------------------------------------------------------------------
 * The request target and the head.
 * --------------------------------------------------------------------- */

/*
 * A new string of the @n bytes at @s percent-decoded by libcurl (a
 * malformed escape stays as it is) and, when @plus, with '+' read as a
 * space first.  A decoded NUL would cut the string short and address
 * another resource, so it becomes 0x01, which every name check rejects as
 * a control character.
 */
static char *
decode(const char *s, size_t n, int plus)
{
    char *in = sl_strndup(s, n);
    char *dec = NULL;
    char *out = NULL;
    int len = 0;
    size_t i = 0;

    for (i = 0; plus && i < n; i++) {
        in[i] = in[i] == '+' ? ' ' : in[i];
    }
    dec = curl_easy_unescape(NULL, in, (int)n, &len);
    if (dec == NULL) {
        return in; /* out of memory: as it came */
    }
    for (i = 0; i < (size_t)len; i++) {
        dec[i] = dec[i] == '\0' ? '\1' : dec[i];
    }
    out = sl_strndup(dec, (size_t)len);
    curl_free(dec);
    sl_free(in);
    return out;
}

/* "a=b&c" into @req->args. */
static int
parse_query(struct sl__req *req, const char *q, size_t n)
{
    size_t cap = 0;

    while (n > 0) {
        const char *amp = memchr(q, '&', n);
        size_t len = amp != NULL ? (size_t)(amp - q) : n;
        const char *eq = memchr(q, '=', len);

        if (len > 0) {
            struct sl__kv *kv = NULL;

            if (req->nargs == MAX_FIELDS) {
                return -1;
            }
            if (req->nargs == cap) {
                cap = cap ? cap * 2 : 8;
                req->args = sl_realloc(req->args, cap * sizeof(*req->args));
            }
            kv = &req->args[req->nargs++];
            kv->name = decode(q, eq != NULL ? (size_t)(eq - q) : len, 1);
            kv->value = eq != NULL
                            ? decode(eq + 1, len - (size_t)(eq - q) - 1, 1)
                            : NULL;
        }
        q += len + (amp != NULL);
        n -= len + (amp != NULL);
    }
    return 0;
}

/* Path and query of the request target in @c->url into @req. */
static int
parse_target(struct conn *c, struct sl__req *req)
{
    struct http_parser_url u;
    const char *url = c->url.data != NULL ? c->url.data : "";
    size_t len = 0;

    http_parser_url_init(&u);
    if (http_parser_parse_url(url, c->url.len, 0, &u) != 0) {
        return -1;
    }
    sl_free(req->path);
    if (u.field_set & (1 << UF_PATH)) {
        char *path = decode(
            url + u.field_data[UF_PATH].off, u.field_data[UF_PATH].len, 0);

        /* without the trailing '/' */
        len = strlen(path);
        while (len > 1 && path[len - 1] == '/') {
            path[--len] = '\0';
        }
        req->path = path;
    } else {
        req->path = sl_strdup("/");
    }
    if (u.field_set & (1 << UF_QUERY)) {
        return parse_query(
            req, url + u.field_data[UF_QUERY].off, u.field_data[UF_QUERY].len);
    }
    return 0;
}

/* The header read into field and value goes into the request. */
static int
push_header(struct conn *c)
{
    struct sl__req *req = c->req;
    const char *v = NULL;
    size_t len = c->value.len;

    if (c->field.len == 0) {
        return 0;
    }
    if (req->nheaders == MAX_FIELDS) {
        return -1;
    }
    if (req->nheaders == c->hcap) {
        c->hcap = c->hcap ? c->hcap * 2 : 16;
        req->headers =
            sl_realloc(req->headers, c->hcap * sizeof(*req->headers));
    }
    v = c->value.data != NULL ? c->value.data : "";
    while (len > 0 && (v[len - 1] == ' ' || v[len - 1] == '\t')) {
        len--;
    }
    req->headers[req->nheaders].name = sl_strndup(c->field.data, c->field.len);
    req->headers[req->nheaders].value = sl_strndup(v, len);
    req->nheaders++;
    sl_buf_reset(&c->field);
    sl_buf_reset(&c->value);
    return 0;
}

/* ------------------------------------------------------------------------
 * Parser callbacks.  A callback that returns non-zero stops the parser:
 * the connection closes after what was answered.
 * --------------------------------------------------------------------- */

static int
on_message_begin(http_parser *p)
{
    struct conn *c = p->data;

    c->req = sl__req_new(c->net->s);
    sl_buf_reset(&c->url);
    sl_buf_reset(&c->field);
    sl_buf_reset(&c->value);
    c->in_value = 0;
    c->seen_field = 0;
    c->hcap = 0;
    c->head = 0;
    return 0;
}

static int
on_url(http_parser *p, const char *at, size_t len)
{
    struct conn *c = p->data;

    return sl_buf_append(&c->url, at, len) != 0 ? -1 : 0;
}

static int
on_header_field(http_parser *p, const char *at, size_t len)
{
    struct conn *c = p->data;

    c->seen_field = 1;
    if (c->in_value && push_header(c) != 0) {
        (void)sl__reply_error(
            c->req, SL_EHEADERS, "headers", "more than %d headers", MAX_FIELDS);
        c->close = 1;
        c->linger = 1;
        (void)finish(c);
        return -1;
    }
    c->in_value = 0;
    return sl_buf_append(&c->field, at, len) != 0 ? -1 : 0;
}

static int
on_header_value(http_parser *p, const char *at, size_t len)
{
    struct conn *c = p->data;

    c->in_value = 1;
    return sl_buf_append(&c->value, at, len) != 0 ? -1 : 0;
}

static int
body_expected(const http_parser *p)
{
    return (p->flags & F_CHUNKED) ||
           (p->content_length > 0 && p->content_length != ULLONG_MAX);
}

static int
on_headers_complete(http_parser *p)
{
    struct conn *c = p->data;
    struct sl__req *req = c->req;
    const char *expect = NULL;

    if (push_header(c) != 0) {
        (void)sl__reply_error(
            req, SL_EHEADERS, "headers", "more than %d headers", MAX_FIELDS);
    }
    sl_free(req->method);
    req->method = sl_strdup(http_method_str((enum http_method)p->method));
    c->head = p->method == HTTP_HEAD;
    if (!req->replied && parse_target(c, req) != 0) {
        (void)sl__reply_error(req,
                              SL_EINVAL,
                              "path",
                              "the request target is malformed or has more "
                              "than %d query arguments",
                              MAX_FIELDS);
    }
    if (!req->replied) {
        sl__req_begin(req);
    }
    if (req->replied) {
        if (!body_expected(p)) {
            return 0; /* answered when the message ends */
        }
        c->close = 1;
        c->linger = 1;
        (void)finish(c);
        return -1;
    }
    expect = sl__req_header(req, "Expect");
    if (body_expected(p) && expect != NULL &&
        strcasecmp(expect, "100-continue") == 0 && p->http_minor >= 1) {
        static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";

        if (send_all(c->fd, cont, sizeof(cont) - 1) != 0) {
            return -1;
        }
    }
    return 0;
}

static int
on_body(http_parser *p, const char *at, size_t len)
{
    struct conn *c = p->data;

    if (sl__req_body(c->req, at, len) != 0) {
        c->close = 1;
        c->linger = 1;
        (void)finish(c);
        return -1;
    }
    return 0;
}

static int
on_message_complete(http_parser *p)
{
    struct conn *c = p->data;

    if (!c->req->replied) {
        sl__req_end(c->req);
    }
    if (!http_should_keep_alive(p) || p->upgrade) {
        c->close = 1;
    }
    return finish(c) != 0 || c->close ? -1 : 0;
}

static const http_parser_settings settings = {
    .on_message_begin = on_message_begin,
    .on_url = on_url,
    .on_header_field = on_header_field,
    .on_header_value = on_header_value,
    .on_headers_complete = on_headers_complete,
    .on_body = on_body,
    .on_message_complete = on_message_complete,
};

/*
 * The parser refused what the client sent at @at (NULL: nothing left):
 * answer with the JSON error body when a request is open.
 */
static void
parse_error(struct conn *c, enum http_errno e, const char *at)
{
    struct sl__req *req = c->req;
    const char *desc = http_errno_description(e);

    if (e >= HPE_CB_message_begin && e <= HPE_CB_chunk_complete) {
        return; /* a callback stopped it: handled there */
    }
    if (e == HPE_INVALID_EOF_STATE || e == HPE_CLOSED_CONNECTION) {
        return;
    }
    if (req == NULL) {
        req = c->req = sl__req_new(c->net->s);
    }
    if (!req->replied) {
        if (e == HPE_HEADER_OVERFLOW) {
            (void)sl__reply_error(
                req,
                c->seen_field ? SL_EHEADERS : SL_EURITOOLONG,
                c->seen_field ? "headers" : "path",
                "the request %s is far over "
                "http.maxHeaderBytes (%llu bytes)",
                c->seen_field ? "line and headers" : "target",
                (unsigned long long)c->net->cfg->max_header_bytes);
        } else if (e == HPE_INVALID_CONTENT_LENGTH ||
                   e == HPE_UNEXPECTED_CONTENT_LENGTH) {
            int digit = at != NULL && *at >= '0' && *at <= '9';

            (void)sl__reply_error(req,
                                  digit ? SL_ETOOLARGE : SL_EINVAL,
                                  "Content-Length",
                                  digit ? "Content-Length is over 2^64"
                                        : "Content-Length is not one "
                                          "whole number: %s",
                                  desc);
        } else if (e == HPE_INVALID_CHUNK_SIZE) {
            (void)sl__reply_error(req,
                                  SL_EINVAL,
                                  "Transfer-Encoding",
                                  "bad chunk syntax in the chunked body");
        } else {
            (void)sl__reply_error(req,
                                  SL_EINVAL,
                                  "request",
                                  "malformed HTTP request: %s (%s)",
                                  desc,
                                  http_errno_name(e));
        }
    }
    c->close = 1;
    c->linger = 1;
    (void)finish(c);
}

/* ------------------------------------------------------------------------
 * A connection's thread.
 * --------------------------------------------------------------------- */

/* Read and drop what the client still sends, for a while, then close. */
static void
linger(int fd)
{
    char buf[16 * 1024];
    uint64_t total = 0;
    int64_t deadline = sl_mono_ms() + LINGER_MS;

    (void)shutdown(fd, SHUT_WR);
    while (total < LINGER_BYTES) {
        struct pollfd pfd = {fd, POLLIN, 0};
        int64_t left = deadline - sl_mono_ms();
        ssize_t n = 0;

        if (left <= 0 || poll(&pfd, 1, (int)left) <= 0) {
            break;
        }
        n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
        if (n <= 0) {
            break;
        }
        total += (uint64_t)n;
    }
}

static void
conn_free(struct conn *c)
{
    struct sl__net *net = c->net;

    if (c->req != NULL) {
        sl__req_finish(c->req); /* gone before it was answered */
    }
    if (c->linger) {
        linger(c->fd);
    }
    /* off the list before the close: a stop shuts down the sockets of the
     * list, and a closed number may already be another socket's */
    pthread_mutex_lock(&net->mu);
    if (c->prev != NULL) {
        c->prev->next = c->next;
    } else {
        net->conns = c->next;
    }
    if (c->next != NULL) {
        c->next->prev = c->prev;
    }
    pthread_mutex_unlock(&net->mu);
    (void)close(c->fd);
    sl_buf_free(&c->url);
    sl_buf_free(&c->field);
    sl_buf_free(&c->value);
    sl_free(c);
    pthread_mutex_lock(&net->mu);
    net->nconns--; /* counted until here: a stop waits for it */
    pthread_cond_broadcast(&net->cv);
    pthread_mutex_unlock(&net->mu);
}

static void *
conn_main(void *arg)
{
    struct conn *c = arg;
    char *buf = sl_malloc(READ_BYTES);

    (void)pthread_setname_np(pthread_self(), "sl-http");
    for (;;) {
        ssize_t n = recv(c->fd, buf, READ_BYTES, 0);
        size_t done = 0;

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break; /* closed, timed out or broken */
        }
        done = http_parser_execute(&c->p, &settings, buf, (size_t)n);
        if (HTTP_PARSER_ERRNO(&c->p) != HPE_OK) {
            parse_error(c,
                        HTTP_PARSER_ERRNO(&c->p),
                        done < (size_t)n ? buf + done : NULL);
            break;
        }
        if (c->close || c->p.upgrade) {
            break;
        }
    }
    sl_free(buf);
    conn_free(c);
    return NULL;
}

/* ------------------------------------------------------------------------
 * The listener.
 * --------------------------------------------------------------------- */

static int
same_host(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
    if (a->ss_family != b->ss_family) {
        return 0;
    }
    if (a->ss_family == AF_INET) {
        return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
               ((const struct sockaddr_in *)b)->sin_addr.s_addr;
    }
    if (a->ss_family == AF_INET6) {
        return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
                      &((const struct sockaddr_in6 *)b)->sin6_addr,
                      sizeof(struct in6_addr)) == 0;
    }
    return 0;
}

/* Whether one more connection from @peer fits the limits; net->mu held. */
static int
admit(struct sl__net *net, const struct sockaddr_storage *peer)
{
    unsigned same = 0;
    struct conn *c = NULL;

    if (net->nconns >= net->cfg->max_connections) {
        return 0;
    }
    if (net->cfg->max_conn_per_ip == 0) {
        return 1;
    }
    for (c = net->conns; c != NULL; c = c->next) {
        same += same_host(&c->peer, peer);
    }
    return same < net->cfg->max_conn_per_ip;
}

static void
set_timeouts(int fd, unsigned seconds)
{
    struct timeval tv = {(time_t)seconds, 0};
    int one = 1;

    if (seconds > 0) {
        (void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        (void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    }
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* A connection accepted on @fd from @peer: admitted with its thread, or
 * closed at once. */
static void
serve(struct sl__net *net, int fd, const struct sockaddr_storage *peer)
{
    struct conn *c = NULL;
    pthread_attr_t attr;
    pthread_t t;
    int ok = 0;

    pthread_mutex_lock(&net->mu);
    if (admit(net, peer)) {
        c = sl_calloc(1, sizeof(*c));
        c->net = net;
        c->fd = fd;
        c->peer = *peer;
        sl_buf_init(&c->url, (size_t)net->cfg->max_header_bytes * 4 + 4096);
        sl_buf_init(&c->field, (size_t)net->cfg->max_header_bytes * 4 + 4096);
        sl_buf_init(&c->value, (size_t)net->cfg->max_header_bytes * 4 + 4096);
        http_parser_init(&c->p, HTTP_REQUEST);
        c->p.data = c;
        c->next = net->conns;
        if (net->conns != NULL) {
            net->conns->prev = c;
        }
        net->conns = c;
        net->nconns++;
        set_timeouts(fd, net->cfg->request_timeout_s);
        (void)pthread_attr_init(&attr);
        (void)pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        ok = pthread_create(&t, &attr, conn_main, c) == 0;
        (void)pthread_attr_destroy(&attr);
    }
    pthread_mutex_unlock(&net->mu);
    if (c == NULL) {
        (void)close(fd); /* over maxConnections or maxConnectionsPerIp */
    } else if (!ok) {
        SL_WARN("http: cannot start a connection's thread");
        conn_free(c);
    }
}

static void *
listener_main(void *arg)
{
    struct sl__net *net = arg;

    (void)pthread_setname_np(pthread_self(), "sl-http-accept");
    for (;;) {
        struct pollfd pfd[2] = {{net->lfd, POLLIN, 0},
                                {net->wake[0], POLLIN, 0}};
        struct sockaddr_storage peer;
        socklen_t plen = sizeof(peer);
        int fd = -1;

        if (poll(pfd, 2, -1) < 0) {
            if (errno == EINTR) {
                continue;
            }
            SL_ERROR("http: poll: %s", sl_errno_str(errno));
            break;
        }
        if (pfd[1].revents != 0) {
            break;
        }
        memset(&peer, 0, sizeof(peer));
        fd = accept4(net->lfd, (struct sockaddr *)&peer, &plen, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE) {
                struct timespec ts = {0, 50 * 1000 * 1000};

                SL_WARN("http: accept: %s", sl_errno_str(errno));
                (void)nanosleep(&ts, NULL);
            }
            continue;
        }
        serve(net, fd, &peer);
    }
    return NULL;
}

int
sl__net_start(struct sl_http_server *s,
              const struct sockaddr_storage *ss,
              socklen_t sslen,
              struct sl__net **out,
              struct sl_err *err)
{
    struct sl__net *net = sl_calloc(1, sizeof(*net));
    const struct sl_http_config *cfg = sl__server_cfg(s);
    struct sockaddr_storage bound;
    socklen_t blen = sizeof(bound);
    int one = 1;

    net->s = s;
    net->cfg = cfg;
    net->wake[0] = net->wake[1] = -1;
    pthread_mutex_init(&net->mu, NULL);
    pthread_cond_init(&net->cv, NULL);
    /* A head is read up to about twice the limit, so that one somewhat
     * over it is answered by server.c with the field it is about; past
     * that the parser stops it.  (A setting of the library, the same for
     * every server of the process.) */
    http_parser_set_max_header_size(
        (uint32_t)(cfg->max_header_bytes * 2 + 4096));
    net->lfd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (net->lfd < 0 ||
        setsockopt(net->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) !=
            0 ||
        bind(net->lfd, (const struct sockaddr *)ss, sslen) != 0 ||
        listen(net->lfd, SOMAXCONN) != 0 ||
        getsockname(net->lfd, (struct sockaddr *)&bound, &blen) != 0 ||
        pipe2(net->wake, O_CLOEXEC) != 0) {
        int e = errno;

        sl__net_stop(net);
        return sl_err_set(err,
                          SL_EIO,
                          "listen",
                          "cannot listen on '%s': %s",
                          cfg->listen,
                          sl_errno_str(e));
    }
    net->port = ntohs(bound.ss_family == AF_INET6
                          ? ((struct sockaddr_in6 *)&bound)->sin6_port
                          : ((struct sockaddr_in *)&bound)->sin_port);
    if (pthread_create(&net->thread, NULL, listener_main, net) != 0) {
        sl__net_stop(net);
        return sl_err_set(
            err, SL_EIO, "listen", "cannot start the listener thread");
    }
    net->running = 1;
    *out = net;
    return 0;
}

unsigned
sl__net_port(const struct sl__net *n)
{
    return n->port;
}

void
sl__net_quiesce(struct sl__net *n)
{
    if (n->running) {
        (void)!write(n->wake[1], "x", 1);
        (void)pthread_join(n->thread, NULL);
        n->running = 0;
    }
    if (n->lfd >= 0) {
        (void)close(n->lfd);
        n->lfd = -1;
    }
}

void
sl__net_stop(struct sl__net *n)
{
    struct conn *c = NULL;

    sl__net_quiesce(n);
    pthread_mutex_lock(&n->mu);
    for (c = n->conns; c != NULL; c = c->next) {
        (void)shutdown(c->fd, SHUT_RDWR);
    }
    while (n->nconns > 0) {
        pthread_cond_wait(&n->cv, &n->mu);
    }
    pthread_mutex_unlock(&n->mu);
    if (n->wake[0] >= 0) {
        (void)close(n->wake[0]);
        (void)close(n->wake[1]);
    }
    pthread_mutex_destroy(&n->mu);
    pthread_cond_destroy(&n->cv);
    sl_free(n);
}
