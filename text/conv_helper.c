/*
 * Persistent converters (docs/formats.md "Persistent converters"): a
 * converter entry with "persistent": true names a program that is started
 * once and converts document after document, so that a document costs
 * its reading, not the start of a process (sluice-pdf: 2 ms a PDF against
 * 22 ms for a pdftotext and a pdfinfo process each).  The limits stay
 * the server's: the address space limit is set before exec, every
 * document has the entry's deadline (at which the process is killed; the
 * next document starts a new one), a process that misbehaves in any way
 * is killed, and one is replaced after maxDocuments documents.
 *
 * The protocol, on the program's stdin (a socket) and stdout (a pipe):
 *   request   "<path of the spooled document>\t<max text bytes>\n"
 *   response  "ok\n", metadata "Key: value\n" lines (as a metaCommand
 *             prints them), "\n", the text in chunks
 *             "<decimal length>\n<bytes>" ended by "0\n";
 *             or "error <message>\n" alone (the document is unreadable;
 *             the process goes on).
 *
 * Idle processes wait in one pool per server, at most POOL_MAX of them,
 * each taken by one document at a time; their descriptors are
 * close-on-exec, so a process sees EOF and ends when the server does.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "text/text_int.h"

#define POOL_MAX    16u                /* idle processes kept */
#define RBUF        ((size_t)64 << 10) /* a process's read buffer */
#define LINE_MAX_   4096u              /* a status or metadata line */
#define CHUNK_SLACK ((uint64_t)64 << 10)

/* A persistent converter process. */
struct sl__text_helper {
    char *key;     /* its argv, joined by '\n' */
    pid_t pid;     /* the process (and its process group) */
    int in_fd;     /* our end of its stdin (a socket) */
    int out_fd;    /* our end of its stdout (a pipe), O_NONBLOCK */
    uint64_t docs; /* documents it was given */
    char *buf;     /* RBUF bytes read ahead */
    size_t pos;    /* the first unread byte of buf */
    size_t len;    /* bytes in buf */
    struct sl__text_helper *next; /* in the pool */
};

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sl__text_helper *pool;
static size_t pool_n;

static char *
helper_key(char **argv)
{
    size_t n = 1;
    size_t i = 0;
    char *key = NULL;

    for (i = 0; argv[i] != NULL; i++) {
        n += strlen(argv[i]) + 1;
    }
    key = sl_malloc(n);
    key[0] = '\0';
    for (i = 0, n = 0; argv[i] != NULL; i++) {
        size_t k = strlen(argv[i]);

        memcpy(key + n, argv[i], k);
        n += k;
        key[n++] = '\n';
        key[n] = '\0';
    }
    return key;
}

/* Kill @h's process group, reap it, free @h.  Returns its wait status
 * (-1: none). */
static int
helper_close(struct sl__text_helper *h)
{
    int status = -1;

    if (h == NULL) {
        return -1;
    }
    if (h->in_fd >= 0) {
        (void)close(h->in_fd);
    }
    if (h->out_fd >= 0) {
        (void)close(h->out_fd);
    }
    if (h->pid > 0) {
        (void)kill(-h->pid, SIGKILL);
        (void)kill(h->pid, SIGKILL);
        while (waitpid(h->pid, &status, 0) < 0 && errno == EINTR) {
        }
    }
    sl_free(h->buf);
    sl_free(h->key);
    sl_free(h);
    return status;
}

/* Start the program of @c: stdin a socket, stdout a pipe, stderr
 * /dev/null, the address space limit of the entry.  NULL on failure
 * (logged). */
static struct sl__text_helper *
helper_spawn(const struct sl__text_conv *c, const char *key)
{
    struct sl__text_helper *h = NULL;
    int in[2] = {-1, -1};
    int out[2] = {-1, -1};
    int null_err = open("/dev/null", O_WRONLY | O_CLOEXEC);
    pid_t pid = -1;

    if (null_err < 0 ||
        socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) != 0 ||
        pipe2(out, O_CLOEXEC) != 0 || (pid = fork()) < 0) {
        SL_WARN(
            "textExtractor: converter %s: %s", c->argv[0], sl_errno_str(errno));
    } else if (pid == 0) {
        sl__text_conv_child(c, c->argv, in[1], out[1], null_err);
    } else {
        (void)setpgid(pid, pid);
        h = sl_calloc(1, sizeof(*h));
        h->key = sl_strdup(key);
        h->pid = pid;
        h->in_fd = in[0];
        h->out_fd = out[0];
        h->buf = sl_malloc(RBUF);
        in[0] = out[0] = -1;
        (void)fcntl(h->out_fd, F_SETFL, O_NONBLOCK);
    }
    for (int *fd = &in[0]; fd <= &in[1]; fd++) {
        if (*fd >= 0) {
            (void)close(*fd);
        }
    }
    for (int *fd = &out[0]; fd <= &out[1]; fd++) {
        if (*fd >= 0) {
            (void)close(*fd);
        }
    }
    if (null_err >= 0) {
        (void)close(null_err);
    }
    return h;
}

/* An idle process for @c from the pool (one that exited meanwhile is
 * reaped), else a new one. */
static struct sl__text_helper *
helper_get(const struct sl__text_conv *c)
{
    char *key = helper_key(c->argv);
    struct sl__text_helper **pp = NULL;
    struct sl__text_helper *h = NULL;

    pthread_mutex_lock(&pool_lock);
    for (pp = &pool; *pp != NULL;) {
        struct sl__text_helper *e = *pp;

        if (strcmp(e->key, key) != 0) {
            pp = &e->next;
            continue;
        }
        *pp = e->next;
        pool_n--;
        if (waitpid(e->pid, NULL, WNOHANG) == 0) {
            h = e;
            break;
        }
        e->pid = -1; /* reaped */
        (void)helper_close(e);
    }
    pthread_mutex_unlock(&pool_lock);
    if (h == NULL) {
        h = helper_spawn(c, key);
    }
    sl_free(key);
    return h;
}

/* Give @h back to the pool, or end it (after @max_docs documents, or
 * when the pool is full). */
static void
helper_put(struct sl__text_helper *h, uint64_t max_docs)
{
    if (h->docs < max_docs && h->pos == h->len) {
        pthread_mutex_lock(&pool_lock);
        if (pool_n < POOL_MAX) {
            h->next = pool;
            pool = h;
            pool_n++;
            h = NULL;
        }
        pthread_mutex_unlock(&pool_lock);
    }
    (void)helper_close(h);
}

void
sl_text_helpers_close(void)
{
    struct sl__text_helper *h = NULL;

    pthread_mutex_lock(&pool_lock);
    h = pool;
    pool = NULL;
    pool_n = 0;
    pthread_mutex_unlock(&pool_lock);
    while (h != NULL) {
        struct sl__text_helper *next = h->next;

        (void)helper_close(h);
        h = next;
    }
}

/* ------------------------------------------------------------------------
 * One document.
 * --------------------------------------------------------------------- */

/* What went wrong with a document (enum sl_text_outcome), and why. */
enum { RUN_OK = 0, RUN_ERROR, RUN_BROKEN, RUN_TIMEOUT, RUN_CANCELED };

struct run {
    struct sl_text *x;
    struct sl_text_doc *d;
    struct sl__text_helper *h;
    int64_t deadline; /* sl_mono_ms() at which the process is killed */
    const char *why;  /* RUN_BROKEN, RUN_ERROR: what happened */
    char line[LINE_MAX_];
};

/* Wait (polling the cancel callback) until the process's stdout can be
 * read, then read what there is.  RUN_OK or why not. */
static int
run_fill(struct run *r)
{
    struct sl__text_helper *h = r->h;
    ssize_t n = 0;

    for (;;) {
        struct pollfd p = {h->out_fd, POLLIN, 0};
        int64_t left = r->deadline - sl_mono_ms();

        if (r->x->canceled != NULL && r->x->canceled(r->x->arg)) {
            return RUN_CANCELED;
        }
        if (left <= 0) {
            return RUN_TIMEOUT;
        }
        if (poll(&p, 1, left < 100 ? (int)left : 100) <= 0) {
            continue;
        }
        n = read(h->out_fd, h->buf, RBUF);
        if (n > 0) {
            h->pos = 0;
            h->len = (size_t)n;
            return RUN_OK;
        }
        if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
            r->why = "it exited";
            return RUN_BROKEN;
        }
    }
}

/* The next line (without its '\n') into r->line. */
static int
run_line(struct run *r)
{
    struct sl__text_helper *h = r->h;
    size_t n = 0;
    int rc = RUN_OK;

    for (;;) {
        if (h->pos == h->len && (rc = run_fill(r)) != RUN_OK) {
            return rc;
        }
        if (h->buf[h->pos] == '\n') {
            h->pos++;
            r->line[n] = '\0';
            return RUN_OK;
        }
        if (n == sizeof(r->line) - 1) {
            r->why = "it wrote a line that is too long";
            return RUN_BROKEN;
        }
        r->line[n++] = h->buf[h->pos++];
    }
}

/* @n bytes of text into the document's text. */
static int
run_bytes(struct run *r, uint64_t n)
{
    struct sl__text_helper *h = r->h;
    int rc = RUN_OK;

    while (n > 0) {
        size_t k = 0;

        if (h->pos == h->len && (rc = run_fill(r)) != RUN_OK) {
            return rc;
        }
        k = h->len - h->pos < n ? h->len - h->pos : (size_t)n;
        sl__text_buf_bytes(&r->d->text, h->buf + h->pos, k);
        h->pos += k;
        n -= k;
    }
    return RUN_OK;
}

/* The request, written whole before the deadline. */
static int
run_request(struct run *r)
{
    char *req = sl_asprintf(
        "%s\t%llu\n", r->d->conv.path, (unsigned long long)r->x->max_text);
    size_t len = strlen(req);
    size_t off = 0;
    int rc = RUN_OK;

    while (off < len && rc == RUN_OK) {
        struct pollfd p = {r->h->in_fd, POLLOUT, 0};
        int64_t left = r->deadline - sl_mono_ms();
        ssize_t n = 0;

        if (left <= 0) {
            rc = RUN_TIMEOUT;
        } else if (poll(&p, 1, (int)left) > 0) {
            n = send(
                r->h->in_fd, req + off, len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n > 0) {
                off += (size_t)n;
            } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
                r->why = "it does not read its requests";
                rc = RUN_BROKEN;
            }
        }
    }
    sl_free(req);
    return rc;
}

/* The response: status, metadata, text. */
static int
run_response(struct run *r)
{
    uint64_t total = 0;
    int rc = run_line(r);

    if (rc != RUN_OK) {
        return rc;
    }
    if (strncmp(r->line, "error ", 6) == 0) {
        r->why = r->line + 6;
        return RUN_ERROR;
    }
    if (strcmp(r->line, "ok") != 0) {
        r->why = "its response does not begin with \"ok\" or \"error\"";
        return RUN_BROKEN;
    }
    while ((rc = run_line(r)) == RUN_OK && r->line[0] != '\0') {
        sl__text_conv_meta_line(r->d, r->line);
    }
    for (;;) {
        uint64_t n = 0;

        if (rc != RUN_OK || (rc = run_line(r)) != RUN_OK) {
            return rc;
        }
        if (sl_parse_u64(r->line, &n) != 0 ||
            (total += n) > r->x->max_text + CHUNK_SLACK) {
            r->why = "it wrote a malformed chunk or more than was asked";
            return RUN_BROKEN;
        }
        if (n == 0) {
            return RUN_OK;
        }
        rc = run_bytes(r, n);
    }
}

int
sl__text_helper_run(struct sl_text *x, struct sl_text_doc *d)
{
    struct sl__text_conv *c = &d->conv;
    struct run r;
    int status = -1;
    int rc = RUN_OK;

    memset(&r, 0, sizeof(r));
    r.x = x;
    r.d = d;
    r.deadline = sl_mono_ms() + c->timeout;
    r.h = helper_get(c);
    if (r.h == NULL) {
        d->outcome = SL_TEXT_CONV_FAILED;
        return 0;
    }
    r.h->docs++;
    rc = run_request(&r);
    if (rc == RUN_OK) {
        rc = run_response(&r);
    }
    if (rc == RUN_OK || rc == RUN_ERROR) {
        helper_put(r.h, c->max_docs);
    } else {
        status = helper_close(r.h);
    }
    switch (rc) {
    case RUN_OK:
        return 0;
    case RUN_CANCELED:
        return SL_ECANCELED;
    case RUN_TIMEOUT:
        d->outcome = SL_TEXT_CONV_TIMEOUT;
        SL_WARN("textExtractor: converter %s for %s timed out after %lld s",
                c->argv[0],
                d->mime,
                (long long)(c->timeout / 1000));
        return 0;
    case RUN_ERROR:
        d->outcome = SL_TEXT_CONV_FAILED;
        SL_WARN("textExtractor: converter %s cannot read a document of "
                "%s: %s",
                c->argv[0],
                d->mime,
                r.why);
        return 0;
    default:
        d->outcome = SL_TEXT_CONV_FAILED;
        if (status != -1 && WIFEXITED(status)) {
            SL_WARN("textExtractor: converter %s for %s exited (status %d) "
                    "before it answered",
                    c->argv[0],
                    d->mime,
                    WEXITSTATUS(status));
        } else if (status != -1 && WTERMSIG(status) != SIGKILL) {
            SL_WARN("textExtractor: converter %s for %s died (signal %d) "
                    "before it answered",
                    c->argv[0],
                    d->mime,
                    WTERMSIG(status));
        } else {
            SL_WARN("textExtractor: converter %s for %s was killed: %s",
                    c->argv[0],
                    d->mime,
                    r.why);
        }
        return 0;
    }
}
