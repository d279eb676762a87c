/*
 * The REST API (http/): the route table, the request plumbing and every
 * handler, with request bodies.  The real server runs in this process,
 * started once on 127.0.0.1 port 0 over a temporary data directory with
 * the object store, delta service, index, jobmanager (the repository's
 * config/ and workflows/, built-in workers registered, none running) and
 * bulkbuilder, as `sluice serve` wires them; each input is one request
 * sent over a new connection, so that it goes through the server's own
 * parser and connection code; a loopback connection per request is cheap
 * enough.
 *
 * The input: "METHOD PATH\n", then "Name: value\n" header lines up to an
 * empty line, then the body.  The harness writes the request line (bytes
 * that may not appear in it, such as spaces, percent-encoded), Host,
 * Connection: close and Content-Length itself.  Checks: an answer comes
 * within 20 s with a status line; no 500 (a handler that gave no reply,
 * an internal error); a JSON reply parses.
 *
 * An input that starts with '!' is sent as it is, the rest of it (raw
 * HTTP, malformed or pipelined), and the sending side is then shut: the
 * server may close without a word (an unfinished request), and each reply
 * it gives is checked as above, framed by its Content-Length (none after
 * a HEAD: http-parser finds the methods of the requests sent), and must
 * be JSON when it is an error.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <http_parser.h>

#include "core/sl.h"
#include "builtin/builtin.h"
#include "bulkbuilder/bulkbuilder.h"
#include "deltaservice/deltaservice.h"
#include "http/http.h"
#include "index/index.h"
#include "jobmanager/jobmanager.h"
#include "objectstore/objectstore.h"
#include "workers/workers.h"

#include "fuzz.h"
#include "tmpdir.h"

#define MAX_HEADERS 16
#define ANSWER_S    20

static struct {
    char dir[512];
    struct sl_obj *store;
    struct sl_delta *delta;
    struct sl_index_set *index;
    struct sl_jm *jm;
    struct sl_bb *bb;
    struct sl_http_server *http;
    unsigned port;
} g;

static void
run_end(void *arg, const char *job, const char *worker, const json_t *params)
{
    (void)arg;
    sl_worker_run_end(g.bb, job, worker, params);
}

static void
cleanup(void)
{
    sl_http_stop(g.http, 2000);
    sl_bb_close(g.bb);
    sl_jm_close(g.jm);
    sl_index_close(g.index);
    sl_delta_close(g.delta);
    sl_obj_close(g.store);
    (void)tmpdir_remove(g.dir);
}

static void
must(int rc, const char *what, const struct sl_err *err)
{
    SL_FUZZ_CHECK(rc == 0, "%s: %s (%s)", what, sl_err_name(rc), err->message);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const struct sl_worker_type *const *types = NULL;
    struct sl_jm_config jc;
    struct sl_bb_config bc;
    struct sl_http_config hc;
    struct sl_http_services svc;
    struct sl_err err;
    char *path = NULL;
    size_t n = 0;

    (void)argc;
    (void)argv;
    sl_fuzz_quiet();
    (void)signal(SIGPIPE, SIG_IGN);
    sl_err_clear(&err);
    SL_FUZZ_CHECK(tmpdir_make(g.dir, sizeof(g.dir), "fuzz_http.") != NULL,
                  "mkdtemp %s",
                  g.dir);

    path = sl_asprintf("%s/store", g.dir);
    must(sl_obj_open_fs(path, SL_DURABILITY_PROCESS, &g.store, &err),
         "object store",
         &err);
    sl_free(path);
    path = sl_asprintf("%s/delta", g.dir);
    must(sl_delta_open(
             path, 2, SL_DURABILITY_PROCESS, 64u << 20, &g.delta, &err),
         "delta service",
         &err);
    sl_free(path);
    path = sl_asprintf("%s/index", g.dir);
    must(sl_index_open(path, &g.index, &err), "index", &err);
    sl_free(path);
    (void)sl_index_set_shards(g.index, 1);

    memset(&jc, 0, sizeof(jc));
    path = sl_asprintf("%s/jobmanager", g.dir);
    jc.state_dir = path;
    jc.config_dir = SL_FUZZ_SOURCE_DIR "/config";
    jc.workflows_dir = SL_FUZZ_SOURCE_DIR "/workflows";
    jc.durability = SL_DURABILITY_PROCESS;
    jc.store = g.store;
    must(sl_jm_open(&jc, &g.jm, &err), "jobmanager", &err);
    sl_free(path);
    types = sl_builtin_workers(&n);
    must(sl_worker_register_all(g.jm, types, n, &err), "workers", &err);
    memset(&bc, 0, sizeof(bc));
    path = sl_asprintf("%s/bulkbuilder", g.dir);
    bc.dir = path;
    bc.durability = SL_DURABILITY_PROCESS;
    must(sl_bb_open(&bc, g.jm, g.store, &g.bb, &err), "bulkbuilder", &err);
    sl_free(path);
    sl_jm_set_start_check(g.jm, sl_worker_start_check, g.jm);
    sl_jm_set_run_end_hook(g.jm, run_end, NULL);
    must(sl_jm_start(g.jm, &err), "jobmanager start", &err);
    must(sl_bb_start(g.bb, &err), "bulkbuilder start", &err);

    memset(&hc, 0, sizeof(hc));
    hc.listen = "127.0.0.1:0";
    hc.threads = 2;
    hc.max_connections = 64;
    hc.max_body_bytes = 1u << 20;
    hc.max_header_bytes = 32u << 10;
    hc.request_timeout_s = 10;
    hc.max_object_bytes = 1u << 20;
    memset(&svc, 0, sizeof(svc));
    svc.store = g.store;
    svc.jm = g.jm;
    svc.delta = g.delta;
    svc.index = g.index;
    svc.bulkbuilder = g.bb;
    must(sl_http_start(&hc, &svc, &g.http, &err), "http", &err);
    g.port = sl_http_port(g.http);
    (void)atexit(cleanup);
    return 0;
}

/* ------------------------------------------------------------------------
 * The request.
 * --------------------------------------------------------------------- */

static int
token_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') ||
           (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* Headers the harness writes itself. */
static int
own_header(const char *name, size_t n)
{
    static const char *const own[] = {
        "host", "content-length", "transfer-encoding", "connection", "expect"};
    size_t i = 0;

    for (i = 0; i < sizeof(own) / sizeof(own[0]); i++) {
        if (strlen(own[i]) == n && strncasecmp(name, own[i], n) == 0) {
            return 1;
        }
    }
    return 0;
}

/* Write the request of input @p (@n bytes) into @req. */
static void
build(const uint8_t *p, size_t n, struct sl_buf *req)
{
    static const char hex[] = "0123456789ABCDEF";
    const uint8_t *end = p + n;
    const uint8_t *nl = memchr(p, '\n', n);
    const uint8_t *line_end = nl != NULL ? nl : end;
    const uint8_t *sp = memchr(p, ' ', (size_t)(line_end - p));
    const uint8_t *q = NULL;
    size_t headers = 0;
    size_t k = 0;

    /* the method: letters only */
    for (q = p; sp != NULL && q < sp && k < 16; q++) {
        if (*q >= 'A' && *q <= 'Z') {
            (void)sl_buf_append(req, q, 1);
            k++;
        }
    }
    if (k == 0) {
        (void)sl_buf_append(req, "GET", 3);
    }
    (void)sl_buf_append(req, " ", 1);
    q = sp != NULL ? sp + 1 : p;
    if (q >= line_end || *q != '/') {
        (void)sl_buf_append(req, "/", 1);
    }
    for (; q < line_end; q++) {
        if (*q <= 0x20 || *q >= 0x7f || *q == '#') {
            char esc[3] = {'%', hex[*q >> 4], hex[*q & 15]};

            (void)sl_buf_append(req, esc, 3);
        } else {
            (void)sl_buf_append(req, q, 1);
        }
    }
    (void)sl_buf_appendf(req,
                         " HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n"
                         "Connection: close\r\n",
                         g.port);
    p = nl != NULL ? nl + 1 : end;
    /* header lines up to an empty one */
    while (p < end) {
        const uint8_t *e = memchr(p, '\n', (size_t)(end - p));
        const uint8_t *le = e != NULL ? e : end;
        const uint8_t *colon = memchr(p, ':', (size_t)(le - p));
        size_t len = (size_t)(le - p);

        if (len == 0 || (len == 1 && *p == '\r')) {
            p = le + (e != NULL);
            break;
        }
        for (q = p; colon != NULL && q < colon && token_char(*q); q++) {
        }
        if (colon != NULL && q == colon && colon > p &&
            !own_header((const char *)p, (size_t)(colon - p)) &&
            headers < MAX_HEADERS) {
            for (q = p; q < le; q++) {
                if (*q != '\r' && *q != '\0') {
                    (void)sl_buf_append(req, q, 1);
                }
            }
            (void)sl_buf_append(req, "\r\n", 2);
            headers++;
        }
        p = le + (e != NULL);
    }
    (void)sl_buf_appendf(req, "Content-Length: %zu\r\n\r\n", (size_t)(end - p));
    if (p < end) {
        (void)sl_buf_append(req, p, (size_t)(end - p));
    }
}

/* Send @req, read the answer into @ans until the server closes; @raw:
 * shut the sending side once @req is sent. */
static void
exchange(const struct sl_buf *req, struct sl_buf *ans, int raw)
{
    struct sockaddr_in sa;
    struct timeval tv = {ANSWER_S, 0};
    char buf[16384];
    size_t off = 0;
    int rc = 0;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    SL_FUZZ_CHECK(fd >= 0, "socket");
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)g.port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    (void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    /* A signal (libFuzzer's timers) may interrupt a connect that waits
     * for a place in the listen queue: it goes on, so wait for it. */
    rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
    while (rc != 0 && (errno == EINTR || errno == EALREADY)) {
        struct pollfd p = {fd, POLLOUT, 0};

        (void)poll(&p, 1, ANSWER_S * 1000);
        rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
        if (rc != 0 && errno == EISCONN) {
            rc = 0;
        }
    }
    SL_FUZZ_CHECK(rc == 0, "connect: %s", sl_errno_str(errno));
    while (off < req->len) {
        ssize_t w = send(fd, req->data + off, req->len - off, MSG_NOSIGNAL);

        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            break; /* the server may answer and close before the body */
        }
        off += (size_t)w;
    }
    if (raw) {
        (void)shutdown(fd, SHUT_WR);
    }
    for (;;) {
        ssize_t r = recv(fd, buf, sizeof(buf), 0);

        if (r < 0 && errno == EINTR) {
            continue;
        }
        SL_FUZZ_CHECK(r >= 0 || errno == ECONNRESET,
                      "no answer within %d s: %s\n%.*s",
                      ANSWER_S,
                      sl_errno_str(errno),
                      (int)(req->len < 2048 ? req->len : 2048),
                      req->data);
        if (r <= 0) {
            break;
        }
        (void)sl_buf_append(ans, buf, (size_t)r);
    }
    (void)close(fd);
}

/* Check the answer @ans to @req. */
static void
check(const struct sl_buf *req, const struct sl_buf *ans)
{
    const char *a = ans->data != NULL ? ans->data : "";
    const char *body = strstr(a, "\r\n\r\n");
    unsigned status = 0;
    json_t *j = NULL;

    SL_FUZZ_CHECK(ans->len >= 12 && strncmp(a, "HTTP/1.", 7) == 0 &&
                      sscanf(a + 9, "%3u", &status) == 1,
                  "no status line in '%.*s' for\n%.*s",
                  (int)(ans->len < 200 ? ans->len : 200),
                  a,
                  (int)(req->len < 2048 ? req->len : 2048),
                  req->data);
    SL_FUZZ_CHECK(status != 500,
                  "500 for\n%.*s\n---\n%s",
                  (int)(req->len < 2048 ? req->len : 2048),
                  req->data,
                  a);
    if (body == NULL) {
        return;
    }
    body += 4;
    if (strcasestr(a, "\r\nContent-Type: application/json") != NULL &&
        strcasestr(a, "\r\nContent-Type: application/json") < body &&
        *body != '\0') {
        j = json_loadb(body, ans->len - (size_t)(body - a), 0, NULL);
        SL_FUZZ_CHECK(j != NULL,
                      "a JSON reply that is not JSON for\n%.*s\n---\n%s",
                      (int)(req->len < 2048 ? req->len : 2048),
                      req->data,
                      a);
        json_decref(j);
    }
}

/* The methods of the requests that @req holds whole, in order. */
struct methods {
    unsigned char m[64];
    size_t n;
};

static int
on_method(http_parser *p)
{
    struct methods *ms = p->data;

    if (ms->n < sizeof(ms->m)) {
        ms->m[ms->n++] = (unsigned char)p->method;
    }
    return 0;
}

/* Each reply in @ans to the raw request @req. */
static void
check_raw(const struct sl_buf *req, const struct sl_buf *ans)
{
    const char *a = ans->data != NULL ? ans->data : "";
    const char *end = a + ans->len;
    http_parser_settings hs;
    http_parser hp;
    struct methods ms;
    size_t k = 0;

    memset(&hs, 0, sizeof(hs));
    memset(&ms, 0, sizeof(ms));
    hs.on_headers_complete = on_method;
    http_parser_init(&hp, HTTP_REQUEST);
    hp.data = &ms;
    (void)http_parser_execute(&hp, &hs, req->data, req->len);

    while (a < end) {
        const char *body = strstr(a, "\r\n\r\n");
        const char *cl = NULL;
        unsigned status = 0;
        unsigned long long len = 0;
        json_t *j = NULL;

        SL_FUZZ_CHECK(body != NULL && strncmp(a, "HTTP/1.1 ", 9) == 0 &&
                          sscanf(a + 9, "%3u", &status) == 1,
                      "no reply framed in '%.*s' for\n%.*s",
                      (int)(end - a < 200 ? end - a : 200),
                      a,
                      (int)(req->len < 2048 ? req->len : 2048),
                      req->data);
        body += 4;
        SL_FUZZ_CHECK(status != 500, "500 for\n%.*s", (int)req->len, req->data);
        cl = strcasestr(a, "\r\nContent-Length: ");
        if (status == 100) {
            a = body;
            continue;
        }
        if (status == 204 || status == 304 ||
            (k < ms.n && ms.m[k] == HTTP_HEAD)) {
            a = body; /* no body */
            k++;
            continue;
        }
        k++;
        SL_FUZZ_CHECK(cl != NULL && cl < body &&
                          sscanf(cl + 18, "%llu", &len) == 1 &&
                          len <= (unsigned long long)(end - body),
                      "a reply without its Content-Length's bytes for\n%.*s",
                      (int)req->len,
                      req->data);
        if (status >= 400 ||
            (strcasestr(a, "\r\nContent-Type: application/json") != NULL &&
             strcasestr(a, "\r\nContent-Type: application/json") < body)) {
            j = json_loadb(body, (size_t)len, 0, NULL);
            SL_FUZZ_CHECK(j != NULL || (len == 0 && status < 400),
                          "a %u reply that is not JSON for\n%.*s\n---\n%.*s",
                          status,
                          (int)req->len,
                          req->data,
                          (int)len,
                          body);
            json_decref(j);
        }
        a = body + len;
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sl_buf req;
    struct sl_buf ans;
    int raw = size > 0 && data[0] == '!';

    sl_buf_init(&req, 1u << 20);
    sl_buf_init(&ans, 64u << 20);
    if (raw) {
        (void)sl_buf_append(&req, data + 1, size - 1);
    } else {
        build(data, size, &req);
    }
    exchange(&req, &ans, raw);
    if (raw) {
        check_raw(&req, &ans);
    } else {
        check(&req, &ans);
    }
    sl_buf_free(&req);
    sl_buf_free(&ans);
    return 0;
}
