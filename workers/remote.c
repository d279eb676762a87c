/*
 * The REST backend of `sluice worker`: a libcurl client of the task API
 * (/smila/tasks/...), the events API and the object store API
 * (/smila/store/...); or, given the object store the server uses (shared
 * storage such as S3), of the task and events APIs only, the objects
 * read and written in that store directly.  Only this file sees CURLcode.
 *
 * Bulks never sit in memory: an input object is downloaded into an
 * unlinked temporary file under $TMPDIR and read from there; an output
 * bulk is written into an unlinked temporary file and uploaded with a PUT
 * when the task commits it.  Closing the file descriptor removes the data.
 *
 * Threading: one conn (a curl easy handle) per thread.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <curl/curl.h>

#include "workers/workers_int.h"

#define JSON_REPLY_MAX  ((size_t)64 << 20) /* a task or an error body */
#define CONNECT_TIMEOUT 10L                /* seconds */
#define JSON_TIMEOUT    60L                /* seconds per JSON call */
#define LOW_SPEED_TIME  60L /* abort transfers stalled for this long */
#define TMP_NAME_MAX    4096

struct remote {
    char *server;         /* base URL without a trailing '/' */
    char *auth;           /* "Authorization: Bearer ..." or NULL */
    char *host;           /* reported host name */
    struct sl_obj *store; /* shared with the server (borrowed), or NULL */
};

struct conn {
    struct remote *r;
    CURL *h;
};

/* A temporary file: an input download or an output bulk. */
struct tmpobj {
    struct conn *c;
    int fd;
    char *store; /* outputs */
    char *id;    /* outputs */
};

/* ------------------------------------------------------------------------
 * Helpers.
 * --------------------------------------------------------------------- */

/* The SL_E* code of an API error code string ("NOT_FOUND"), or 0. */
static int
code_from_api(const char *api)
{
#define SL_XX_CODE(name, value, status, code, msg) SL_##name,
    static const int codes[] = {SL_ERRNO_MAP(SL_XX_CODE)};
#undef SL_XX_CODE
    size_t i = 0;

    for (i = 0; api != NULL && i < sizeof(codes) / sizeof(codes[0]); i++) {
        if (strcmp(sl_err_api_code(codes[i]), api) == 0) {
            return codes[i];
        }
    }
    return 0;
}

/*
 * Turn an error reply into an SL_E* code with the server's message and
 * field in @err; a body that is not the API's error shape falls back to
 * the HTTP status.
 */
static int
http_error(long status,
           const struct sl_buf *body,
           const char *what,
           struct sl_err *err)
{
    json_t *j = body->data ? json_loadb(body->data, body->len, 0, NULL) : NULL;
    json_t *e = json_object_get(j, "error");
    int code = code_from_api(json_string_value(json_object_get(e, "code")));
    const char *msg = json_string_value(json_object_get(e, "message"));
    const char *field = json_string_value(json_object_get(e, "field"));

    if (code == 0) {
        code = status == 404   ? SL_ENOENT
               : status == 410 ? SL_EGONE
               : status == 401 ? SL_EUNAUTH
               : status < 500  ? SL_EINVAL
                               : SL_EUPSTREAM;
    }
    (void)sl_err_set(err,
                     code,
                     field,
                     "%s: HTTP %ld: %s",
                     what,
                     status,
                     msg != NULL ? msg : sl_strerror(code));
    json_decref(j);
    return code;
}

static size_t
to_buf(char *data, size_t size, size_t nmemb, void *ud)
{
    struct sl_buf *b = ud;

    if (sl_buf_append(b, data, size * nmemb) != 0) {
        return 0; /* too large: curl fails the transfer */
    }
    return size * nmemb;
}

static size_t
to_fd(char *data, size_t size, size_t nmemb, void *ud)
{
    int *fd = ud;

    if (sl_write_all(*fd, data, size * nmemb) != 0) {
        return 0;
    }
    return size * nmemb;
}

static size_t
from_fd(char *data, size_t size, size_t nmemb, void *ud)
{
    int *fd = ud;
    ssize_t n = 0;

    do {
        n = read(*fd, data, size * nmemb);
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
        return CURL_READFUNC_ABORT;
    }
    return (size_t)n;
}

/* Common options of every request on @c. */
static struct curl_slist *
setup(struct conn *c, const char *url, int json)
{
    struct curl_slist *hdr = NULL;

    curl_easy_reset(c->h);
    (void)curl_easy_setopt(c->h, CURLOPT_URL, url);
    (void)curl_easy_setopt(c->h, CURLOPT_NOSIGNAL, 1L);
    (void)curl_easy_setopt(c->h, CURLOPT_CONNECTTIMEOUT, CONNECT_TIMEOUT);
    (void)curl_easy_setopt(c->h, CURLOPT_LOW_SPEED_LIMIT, 1L);
    (void)curl_easy_setopt(c->h, CURLOPT_LOW_SPEED_TIME, LOW_SPEED_TIME);
    if (json) {
        (void)curl_easy_setopt(c->h, CURLOPT_TIMEOUT, JSON_TIMEOUT);
        hdr = curl_slist_append(hdr, "Content-Type: application/json");
    }
    hdr = curl_slist_append(hdr, "Expect:");
    if (c->r->auth != NULL) {
        hdr = curl_slist_append(hdr, c->r->auth);
    }
    (void)curl_easy_setopt(c->h, CURLOPT_HTTPHEADER, hdr);
    return hdr;
}

/* Run the prepared transfer; 0 and the status, or SL_EUPSTREAM. */
static int
perform(struct conn *c, const char *what, long *status, struct sl_err *err)
{
    CURLcode cc = curl_easy_perform(c->h);

    if (cc != CURLE_OK) {
        return sl_err_set(
            err, SL_EUPSTREAM, NULL, "%s: %s", what, curl_easy_strerror(cc));
    }
    (void)curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, status);
    return 0;
}

/*
 * POST @body (may be NULL: "{}") to @path; the reply body goes to @reply
 * (initialised here, caller frees).
 */
static int
post_json(struct conn *c,
          const char *path,
          const json_t *body,
          long *status,
          struct sl_buf *reply,
          struct sl_err *err)
{
    char *url = sl_asprintf("%s%s", c->r->server, path);
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    struct curl_slist *hdr = setup(c, url, 1);
    int rc = 0;

    sl_buf_init(reply, JSON_REPLY_MAX);
    (void)curl_easy_setopt(c->h, CURLOPT_POST, 1L);
    (void)curl_easy_setopt(c->h, CURLOPT_POSTFIELDS, text ? text : "{}");
    (void)curl_easy_setopt(c->h, CURLOPT_WRITEFUNCTION, to_buf);
    (void)curl_easy_setopt(c->h, CURLOPT_WRITEDATA, reply);
    rc = perform(c, path, status, err);
    curl_slist_free_all(hdr);
    sl_free(text);
    sl_free(url);
    return rc;
}

/* A new unlinked temporary file under $TMPDIR; -1 with @err set. */
static int
tmpfile_open(struct sl_err *err)
{
    const char *dir = getenv("TMPDIR");
    char name[TMP_NAME_MAX];
    int fd = -1;

    (void)snprintf(name,
                   sizeof(name),
                   "%s/sluice-worker.XXXXXX",
                   dir != NULL && dir[0] != '\0' ? dir : "/tmp");
    fd = mkstemp(name);
    if (fd < 0) {
        /* this host's $TMPDIR, not the server's disk: an ordinary error
         * (retried), never the NO_SPACE pause of every worker */
        int code = sl_err_from_errno(errno);

        (void)sl_err_set(err,
                         sl_err_nospace(code) ? SL_EIO : code,
                         NULL,
                         "cannot create a temporary file in %s: %s",
                         dir != NULL ? dir : "/tmp",
                         sl_errno_str(errno));
        return -1;
    }
    (void)unlink(name);
    return fd;
}

/* ------------------------------------------------------------------------
 * The backend operations.
 * --------------------------------------------------------------------- */

static void *
remote_conn_new(void *backend)
{
    struct conn *c = sl_calloc(1, sizeof(*c));

    c->r = backend;
    c->h = curl_easy_init();
    if (c->h == NULL) {
        sl_panic("workers: curl_easy_init failed");
    }
    return c;
}

static void
remote_conn_free(void *conn)
{
    struct conn *c = conn;

    curl_easy_cleanup(c->h);
    sl_free(c);
}

static int
remote_take(void *conn, const char *worker, json_t **task, struct sl_err *err)
{
    struct conn *c = conn;
    char *w = sl_url_escape(worker, 0);
    char *path = sl_asprintf("/smila/tasks/%s/", w);
    json_t *body = json_pack("{s:s}", "host", c->r->host);
    struct sl_buf reply;
    long status = 0;
    int rc = 0;

    *task = NULL;
    rc = post_json(c, path, body, &status, &reply, err);
    if (rc != 0) {
        goto out;
    }
    if (status == 204) {
        rc = SL_ENOENT;
    } else if (status == 200) {
        *task = json_loadb(reply.data ? reply.data : "", reply.len, 0, NULL);
        if (!json_is_object(*task)) {
            json_decref(*task);
            *task = NULL;
            rc = sl_err_set(
                err, SL_EUPSTREAM, NULL, "%s: the task is not JSON", path);
        }
    } else {
        rc = http_error(status, &reply, path, err);
        if (rc == SL_ENOENT && strcmp(err->field, "worker") != 0) {
            rc = SL_EUPSTREAM; /* not our "none": a wrong server URL */
        }
    }
out:
    sl_buf_free(&reply);
    json_decref(body);
    sl_free(path);
    sl_free(w);
    return rc;
}

/* POST to /smila/tasks/<worker>/<task>/<verb>: 0, SL_EGONE or an error. */
static int
task_call(struct conn *c,
          const char *worker,
          const char *task_id,
          const char *verb,
          const json_t *body,
          struct sl_err *err)
{
    char *w = sl_url_escape(worker, 0);
    char *t = sl_url_escape(task_id, 0);
    char *path = sl_asprintf("/smila/tasks/%s/%s/%s", w, t, verb);
    struct sl_buf reply;
    long status = 0;
    int rc = 0;

    rc = post_json(c, path, body, &status, &reply, err);
    if (rc == 0 && status != 200) {
        rc = http_error(status, &reply, path, err);
    }
    sl_buf_free(&reply);
    sl_free(path);
    sl_free(t);
    sl_free(w);
    return rc;
}

static int
remote_keepalive(void *conn,
                 const char *worker,
                 const char *task_id,
                 struct sl_err *err)
{
    return task_call(conn, worker, task_id, "keepAlive", NULL, err);
}

static int
remote_finish(void *conn,
              const char *worker,
              const char *task_id,
              const json_t *result,
              struct sl_err *err)
{
    return task_call(conn, worker, task_id, "finish", result, err);
}

static char *
object_url(const struct conn *c, const char *store, const char *id)
{
    char *s = sl_url_escape(store, 0);
    char *i = sl_url_escape(id, 1);
    char *url = sl_asprintf("%s/smila/store/%s/%s", c->r->server, s, i);

    sl_free(s);
    sl_free(i);
    return url;
}

static void
tmpobj_free(struct tmpobj *t)
{
    if (t == NULL) {
        return;
    }
    if (t->fd >= 0) {
        (void)close(t->fd);
    }
    sl_free(t->store);
    sl_free(t->id);
    sl_free(t);
}

static int
remote_input_open(void *conn,
                  const char *store,
                  const char *id,
                  void **handle,
                  struct sl_source *src,
                  struct sl_err *err)
{
    struct conn *c = conn;
    struct tmpobj *t = sl_calloc(1, sizeof(*t));
    char *url = object_url(c, store, id);
    struct curl_slist *hdr = NULL;
    struct sl_buf ebody;
    long status = 0;
    int rc = 0;

    sl_buf_init(&ebody, JSON_REPLY_MAX);
    t->fd = tmpfile_open(err);
    if (t->fd < 0) {
        rc = err->code;
        goto out;
    }
    hdr = setup(c, url, 0);
    (void)curl_easy_setopt(c->h, CURLOPT_WRITEFUNCTION, to_fd);
    (void)curl_easy_setopt(c->h, CURLOPT_WRITEDATA, &t->fd);
    rc = perform(c, url, &status, err);
    if (rc == 0 && status != 200) {
        /* The error body went to the file: read it back for the message. */
        char buf[4096];
        ssize_t n = pread(t->fd, buf, sizeof(buf), 0);

        if (n > 0) {
            (void)sl_buf_append(&ebody, buf, (size_t)n);
        }
        rc = http_error(status, &ebody, url, err);
    }
    if (rc == 0 && lseek(t->fd, 0, SEEK_SET) < 0) {
        rc = sl_err_set(err, SL_EIO, NULL, "lseek: %s", sl_errno_str(errno));
    }
out:
    curl_slist_free_all(hdr);
    sl_buf_free(&ebody);
    sl_free(url);
    if (rc != 0) {
        tmpobj_free(t);
        return rc;
    }
    t->c = c;
    sl_source_fd(src, &t->fd);
    *handle = t;
    return 0;
}

static void
remote_input_close(void *handle)
{
    tmpobj_free(handle);
}

/*
 * The sink of an output's temporary file.  A full $TMPDIR on this worker
 * host is not the server's full disk: an I/O error (the task is retried
 * as usual), not SL_ENOSPC, which would pause every worker of the server.
 */
static int
tmp_write(void *arg, const void *data, size_t len)
{
    struct tmpobj *t = arg;
    int rc = sl_write_all(t->fd, data, len);

    if (sl_err_nospace(rc)) {
        SL_WARN("worker: temporary file in %s: %s; the task is retried",
                getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp",
                sl_strerror(rc));
        rc = SL_EIO;
    }
    return rc;
}

static int
remote_output_open(void *conn,
                   const char *store,
                   const char *id,
                   void **handle,
                   struct sl_sink *sink,
                   struct sl_err *err)
{
    struct tmpobj *t = sl_calloc(1, sizeof(*t));

    t->fd = tmpfile_open(err);
    if (t->fd < 0) {
        sl_free(t);
        return err->code;
    }
    t->c = conn;
    t->store = sl_strdup(store);
    t->id = sl_strdup(id);
    sink->write = tmp_write;
    sink->ctx = t;
    *handle = t;
    return 0;
}

/* Upload the temporary file with a PUT; the object is visible after. */
static int
remote_output_commit(void *conn, void *handle, struct sl_err *err)
{
    struct conn *c = conn;
    struct tmpobj *t = handle;
    char *url = object_url(c, t->store, t->id);
    struct curl_slist *hdr = NULL;
    struct sl_buf reply;
    struct stat st;
    long status = 0;
    int rc = 0;

    sl_buf_init(&reply, JSON_REPLY_MAX);
    if (fstat(t->fd, &st) != 0 || lseek(t->fd, 0, SEEK_SET) < 0) {
        rc = sl_err_set(err,
                        sl_err_from_errno(errno),
                        NULL,
                        "temporary file: %s",
                        sl_errno_str(errno));
        goto out;
    }
    hdr = setup(c, url, 0);
    (void)curl_easy_setopt(c->h, CURLOPT_UPLOAD, 1L);
    (void)curl_easy_setopt(c->h, CURLOPT_READFUNCTION, from_fd);
    (void)curl_easy_setopt(c->h, CURLOPT_READDATA, &t->fd);
    (void)curl_easy_setopt(
        c->h, CURLOPT_INFILESIZE_LARGE, (curl_off_t)st.st_size);
    (void)curl_easy_setopt(c->h, CURLOPT_WRITEFUNCTION, to_buf);
    (void)curl_easy_setopt(c->h, CURLOPT_WRITEDATA, &reply);
    rc = perform(c, url, &status, err);
    if (rc == 0 && (status < 200 || status > 299)) {
        rc = http_error(status, &reply, url, err);
    }
out:
    curl_slist_free_all(hdr);
    sl_buf_free(&reply);
    sl_free(url);
    return rc;
}

static void
remote_output_free(void *handle)
{
    tmpobj_free(handle);
}

static int
remote_event(void *conn, const char *name, int complete, struct sl_err *err)
{
    struct conn *c = conn;
    char *e = sl_url_escape(name, 0);
    char *path = sl_asprintf(
        "/smila/jobmanager/events/%s/%s", e, complete ? "complete" : "begin");
    struct sl_buf reply;
    json_t *j = NULL;
    long status = 0;
    int rc = 0;

    rc = post_json(c, path, NULL, &status, &reply, err);
    if (rc == 0 && status != 200) {
        rc = http_error(status, &reply, path, err);
    }
    if (rc == 0 && !complete) {
        j = json_loadb(reply.data ? reply.data : "", reply.len, 0, NULL);
        rc = json_is_true(json_object_get(j, "began")) ? 1 : 0;
        json_decref(j);
    }
    sl_buf_free(&reply);
    sl_free(path);
    sl_free(e);
    return rc;
}

/* With the server's object store at hand (shared storage): objects are
 * read and written there, only tasks and events go through the server. */

static int
shared_input_open(void *conn,
                  const char *store,
                  const char *id,
                  void **handle,
                  struct sl_source *src,
                  struct sl_err *err)
{
    struct conn *c = conn;

    return sl__wk_obj_input_open(c->r->store, store, id, handle, src, err);
}

static int
shared_output_open(void *conn,
                   const char *store,
                   const char *id,
                   void **handle,
                   struct sl_sink *sink,
                   struct sl_err *err)
{
    struct conn *c = conn;

    return sl__wk_obj_output_open(c->r->store, store, id, handle, sink, err);
}

static int
shared_output_open_copy(void *conn,
                        const char *store,
                        const char *id,
                        void *in_handle,
                        void **handle,
                        struct sl_err *err)
{
    struct conn *c = conn;

    return sl__wk_obj_output_open_copy(
        c->r->store, store, id, in_handle, handle, err);
}

static int
shared_output_commit(void *conn, void *handle, struct sl_err *err)
{
    (void)conn;
    return sl__wk_obj_output_commit(handle, err);
}

static int
shared_output_seal(void *conn, void *handle, struct sl_err *err)
{
    (void)conn;
    return sl__wk_obj_output_seal(handle, err);
}

static const struct sl__wk_ops shared_ops = {
    remote_conn_new,
    remote_conn_free,
    remote_take,
    remote_keepalive,
    remote_finish,
    shared_input_open,
    sl__wk_obj_input_close,
    shared_output_open,
    shared_output_commit,
    sl__wk_obj_output_free,
    remote_event,
    NULL,
    shared_output_seal,
    shared_output_open_copy,
};

static const struct sl__wk_ops remote_ops = {
    remote_conn_new,
    remote_conn_free,
    remote_take,
    remote_keepalive,
    remote_finish,
    remote_input_open,
    remote_input_close,
    remote_output_open,
    remote_output_commit,
    remote_output_free,
    remote_event,
    NULL,
    NULL, /* output_seal: the unlinked temporary file is the data */
    NULL, /* output_open_copy: the worker writes the records */
};

struct sl__wk_backend *
sl__wk_remote_new(const struct sl_worker_remote_config *cfg)
{
    struct sl__wk_backend *b = sl_calloc(1, sizeof(*b));
    struct remote *r = sl_calloc(1, sizeof(*r));
    size_t n = strlen(cfg->server);
    char hn[256];

    while (n > 0 && cfg->server[n - 1] == '/') {
        n--;
    }
    r->server = sl_strndup(cfg->server, n);
    if (cfg->token != NULL && cfg->token[0] != '\0') {
        r->auth = sl_asprintf("Authorization: Bearer %s", cfg->token);
    }
    if (cfg->host != NULL) {
        r->host = sl_strdup(cfg->host);
    } else {
        if (gethostname(hn, sizeof(hn)) != 0) {
            (void)snprintf(hn, sizeof(hn), "localhost");
        }
        hn[sizeof(hn) - 1] = '\0';
        r->host = sl_strdup(hn);
    }
    r->store = cfg->store;
    b->ops = cfg->store != NULL ? &shared_ops : &remote_ops;
    b->services.converters = cfg->converters;
    b->impl = r;
    return b;
}

void
sl__wk_remote_free(struct sl__wk_backend *b)
{
    struct remote *r = NULL;

    if (b == NULL) {
        return;
    }
    r = b->impl;
    sl_free(r->server);
    sl_free(r->auth);
    sl_free(r->host);
    sl_free(r);
    sl_free(b);
}
