/*
 * External converters: one process per document (argv from the
 * `converters` configuration, no shell), fed on stdin or through a spool
 * file, with a timeout and an address space limit.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "text/text_int.h"

#define CONV_DEFAULT_TIMEOUT 30u  /* seconds */
#define CONV_DEFAULT_MEMORY  512u /* MiB of address space */
#define CONV_MAX_MEMORY      (1u << 20)
#define CONV_MAX_TIMEOUT     86400u
#define CONV_DEFAULT_DOCS    1000u /* a persistent converter's documents */
#define CONV_MAX_DOCS        1000000000u

/* ------------------------------------------------------------------------
 * External converters.
 * --------------------------------------------------------------------- */

/* Is @v, when there, an integer @lo..@hi? */
static int
int_ok(const json_t *v, json_int_t lo, json_int_t hi)
{
    return v == NULL || (json_is_integer(v) && json_integer_value(v) >= lo &&
                         json_integer_value(v) <= hi);
}

/* Is @v a non-empty array of strings, the first non-empty?  *@file is
 * set when one is "{file}". */
static int
argv_ok(const json_t *v, int *file)
{
    const json_t *a = NULL;
    size_t i = 0;
    int ok =
        json_array_size(v) > 0 && json_string_length(json_array_get(v, 0)) > 0;

    json_array_foreach(v, i, a)
    {
        ok = ok && json_is_string(a);
        *file = *file || (json_is_string(a) &&
                          strcmp(json_string_value(a), "{file}") == 0);
    }
    return ok;
}

int
sl_text_converter_valid(const json_t *c, struct sl_err *err)
{
    const json_t *meta = json_object_get(c, "metaCommand");
    const json_t *pkg = json_object_get(c, "package");
    const json_t *per = json_object_get(c, "persistent");
    int file = 0;
    int meta_file = 0;

    if (!json_is_object(c) || !argv_ok(json_object_get(c, "command"), &file)) {
        return sl_err_set(err,
                          SL_EINVAL,
                          "command",
                          "needs \"command\": a non-empty array of strings "
                          "(program, arguments)");
    }
    if (!int_ok(json_object_get(c, "timeoutSeconds"), 1, CONV_MAX_TIMEOUT) ||
        !int_ok(json_object_get(c, "maxMemoryMB"), 0, CONV_MAX_MEMORY) ||
        !int_ok(json_object_get(c, "maxDocuments"), 1, CONV_MAX_DOCS)) {
        return sl_err_set(err,
                          SL_EINVAL,
                          "timeoutSeconds",
                          "\"timeoutSeconds\" must be an integer 1..%u, "
                          "\"maxMemoryMB\" 0..%u, \"maxDocuments\" 1..%u",
                          CONV_MAX_TIMEOUT,
                          CONV_MAX_MEMORY,
                          CONV_MAX_DOCS);
    }
    if ((meta != NULL && !argv_ok(meta, &meta_file)) ||
        (pkg != NULL && !json_is_string(pkg)) ||
        (per != NULL && !json_is_boolean(per))) {
        return sl_err_set(err,
                          SL_EINVAL,
                          "metaCommand",
                          "\"metaCommand\" must be an array of strings, "
                          "\"package\" a string, \"persistent\" true or "
                          "false");
    }
    if (json_is_true(per) && file) {
        return sl_err_set(err,
                          SL_EINVAL,
                          "command",
                          "a persistent converter is given the file in its "
                          "requests: its \"command\" has no \"{file}\"");
    }
    return 0;
}

/*
 * Read a converter entry @cfg of @mime into @c (sl_text_converter_valid
 * says what it holds; an element "{file}" of `command` selects the spool
 * file mode).  Returns 0 or SL_EINVAL (logged).
 */
static int
conv_config(struct sl__text_conv *c, const json_t *cfg, const char *mime)
{
    const json_t *cmd = json_object_get(cfg, "command");
    const json_t *t = json_object_get(cfg, "timeoutSeconds");
    const json_t *m = json_object_get(cfg, "maxMemoryMB");
    const json_t *docs = json_object_get(cfg, "maxDocuments");
    struct sl_err err;
    size_t n = json_array_size(cmd);
    size_t i = 0;

    sl_err_clear(&err);
    if (sl_text_converter_valid(cfg, &err) != 0) {
        SL_WARN("textExtractor: converter for %s: %s", mime, err.message);
        return SL_EINVAL;
    }
    c->timeout = 1000 * (int64_t)(t != NULL ? json_integer_value(t)
                                            : CONV_DEFAULT_TIMEOUT);
    c->memory =
        m != NULL ? (uint64_t)json_integer_value(m) : CONV_DEFAULT_MEMORY;
    c->persistent = json_is_true(json_object_get(cfg, "persistent"));
    c->max_docs =
        docs != NULL ? (uint64_t)json_integer_value(docs) : CONV_DEFAULT_DOCS;
    c->meta = json_object_get(cfg, "metaCommand");
    c->argv = sl_calloc(n + 1, sizeof(*c->argv));
    c->file_arg = SIZE_MAX;
    for (i = 0; i < n; i++) {
        const char *a = json_string_value(json_array_get(cmd, i));

        if (strcmp(a, "{file}") == 0) {
            c->file_arg = i;
        }
        c->argv[i] = (char *)(uintptr_t)a;
    }
    c->prog = sl__text_own_program(c->argv[0]);
    if (c->prog != NULL) {
        c->argv[0] = c->prog;
    }
    return 0;
}

static void
conv_close_fd(int *fd)
{
    if (*fd >= 0) {
        (void)close(*fd);
        *fd = -1;
    }
}

/*
 * In the child, between fork and exec (async-signal-safe calls only): its
 * own process group (killed as a whole at the deadline), the address
 * space limit, stdin/stdout/stderr, no other descriptor, default signal
 * dispositions and mask.
 */
_Noreturn void
sl__text_conv_child(
    const struct sl__text_conv *c, char **argv, int in, int out, int err)
{
    struct rlimit rl;
    sigset_t none;
    int sig = 0;

    (void)setpgid(0, 0);
    if (c->memory > 0) {
        rl.rlim_cur = (rlim_t)(c->memory << 20);
        rl.rlim_max = rl.rlim_cur;
        (void)setrlimit(RLIMIT_AS, &rl);
    }
    /* Above 2 first, in case the server runs with 0-2 closed and one of
     * them is such a descriptor. */
    in = fcntl(in, F_DUPFD, 3);
    out = fcntl(out, F_DUPFD, 3);
    err = fcntl(err, F_DUPFD, 3);
    if (in < 0 || out < 0 || err < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 ||
        dup2(err, 2) < 0) {
        _exit(127);
    }
    (void)close_range(3, ~0u, 0);
    for (sig = 1; sig < 32; sig++) {
        if (sig != SIGKILL && sig != SIGSTOP) {
            (void)signal(sig, SIG_DFL);
        }
    }
    (void)sigemptyset(&none);
    (void)sigprocmask(SIG_SETMASK, &none, NULL);
    execvp(argv[0], argv);
    _exit(127);
}

/*
 * Start the converter: stdin is a socket (so that writing to a converter
 * that exited gives EPIPE, never SIGPIPE, whatever the process does with
 * signals) or /dev/null in the {file} mode; stdout a pipe; stderr
 * /dev/null.  Returns 0 or SL_E* (logged).
 */
static int
conv_spawn(struct sl__text_conv *c)
{
    int in[2] = {-1, -1};
    int out[2] = {-1, -1};
    int null_in = -1;
    int null_err = -1;
    int rc = 0;

    if (c->file_arg != SIZE_MAX) {
        c->argv[c->file_arg] = c->path;
        null_in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    } else if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) != 0) {
        in[0] = in[1] = -1;
    }
    null_err = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if ((in[1] < 0 && null_in < 0) || null_err < 0 ||
        pipe2(out, O_CLOEXEC) != 0) {
        SL_WARN(
            "textExtractor: converter %s: %s", c->argv[0], sl_errno_str(errno));
        rc = SL_EIO;
        goto out;
    }
    c->pid = fork();
    if (c->pid == 0) {
        sl__text_conv_child(
            c, c->argv, null_in >= 0 ? null_in : in[1], out[1], null_err);
    }
    if (c->pid < 0) {
        SL_WARN("textExtractor: fork: %s", sl_errno_str(errno));
        c->pid = -1;
        rc = SL_EIO;
        goto out;
    }
    (void)setpgid(c->pid, c->pid);
    c->deadline = sl_mono_ms() + c->timeout;
    c->in_fd = in[0];
    in[0] = -1;
    c->out_fd = out[0];
    out[0] = -1;
    (void)fcntl(c->out_fd, F_SETFL, O_NONBLOCK);

out:
    conv_close_fd(&in[0]);
    conv_close_fd(&in[1]);
    conv_close_fd(&out[0]);
    conv_close_fd(&out[1]);
    conv_close_fd(&null_in);
    conv_close_fd(&null_err);
    return rc;
}

/* A new spool file under $TMPDIR (or /tmp) for the {file} mode. */
static int
conv_spool(struct sl__text_conv *c)
{
    const char *dir = getenv("TMPDIR");

    c->path = sl_asprintf("%s/sluice-text.XXXXXX",
                          dir != NULL && dir[0] != '\0' ? dir : "/tmp");
    c->file_fd = mkostemp(c->path, O_CLOEXEC);
    if (c->file_fd < 0) {
        SL_WARN("textExtractor: mkstemp %s: %s", c->path, sl_errno_str(errno));
        SL_FREE(c->path);
        return SL_EIO;
    }
    return 0;
}

/* Read what the converter wrote (one read) into the text; the text drops
 * what is beyond maxTextBytes.  Closes stdout at its end. */
static void
conv_read(struct sl_text *x, struct sl_text_doc *d)
{
    ssize_t n = read(d->conv.out_fd, x->obuf, SL_TEXT_CHUNK);

    if (n > 0) {
        sl__text_buf_bytes(&d->text, x->obuf, (size_t)n);
        if (d->text.full) {
            /* the text is complete: the rest would be dropped, so the
             * converter is stopped (one writing without end, too) */
            d->conv.enough = 1;
            conv_close_fd(&d->conv.out_fd);
        }
    } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        conv_close_fd(&d->conv.out_fd);
    }
}

/* Kill the converter's process group (leftover grandchildren too) and
 * reap the child if it was not reaped yet. */
static void
conv_kill(struct sl__text_conv *c)
{
    if (c->pid <= 0) {
        return;
    }
    (void)kill(-c->pid, SIGKILL);
    if (!c->reaped) {
        (void)kill(c->pid, SIGKILL);
        while (waitpid(c->pid, &c->status, 0) < 0 && errno == EINTR) {
        }
        c->reaped = 1;
    }
}

/*
 * One round of I/O with the converter, at most @wait ms: write what its
 * stdin takes of *@p (*@n bytes, may be NULL), read what it wrote.  At
 * the deadline the child is killed (timed_out, reaped).  Returns 0 or
 * SL_ECANCELED (the cancel callback said so: the child is killed).
 */
static int
conv_poll(struct sl_text *x,
          struct sl_text_doc *d,
          const char **p,
          size_t *n,
          int wait)
{
    struct sl__text_conv *c = &d->conv;
    struct pollfd fds[2];
    nfds_t k = 0;
    int win = -1;
    int rin = -1;
    int64_t left = c->deadline - sl_mono_ms();
    ssize_t sent = 0;

    if (x->canceled != NULL && x->canceled(x->arg)) {
        conv_kill(c);
        return SL_ECANCELED;
    }
    if (left <= 0) {
        c->timed_out = 1;
        conv_kill(c);
        return 0;
    }
    if (n != NULL && *n > 0 && c->in_fd >= 0) {
        fds[k].fd = c->in_fd;
        fds[k].events = POLLOUT;
        win = (int)k++;
    }
    if (c->out_fd >= 0) {
        fds[k].fd = c->out_fd;
        fds[k].events = POLLIN;
        rin = (int)k++;
    }
    if (poll(fds, k, left < wait ? (int)left : wait) <= 0) {
        return 0;
    }
    if (rin >= 0 && fds[rin].revents != 0) {
        conv_read(x, d);
    }
    if (win >= 0 && fds[win].revents != 0) {
        sent = send(c->in_fd, *p, *n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (sent > 0) {
            *p += sent;
            *n -= (size_t)sent;
        } else if (sent < 0 && errno != EAGAIN && errno != EINTR) {
            /* The converter does not read any more (EPIPE): the rest of
             * the content is dropped, its exit status decides. */
            conv_close_fd(&c->in_fd);
        }
    }
    return 0;
}

char *
sl__text_own_program(const char *prog)
{
    char self[4096];
    ssize_t n = 0;
    char *slash = NULL;
    char *path = NULL;

    if (prog == NULL || strncmp(prog, "sluice-", 7) != 0 ||
        strchr(prog, '/') != NULL) {
        return NULL;
    }
    n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0) {
        return NULL;
    }
    self[n] = '\0';
    slash = strrchr(self, '/');
    if (slash == NULL) {
        return NULL;
    }
    *slash = '\0';
    path = sl_asprintf("%s/%s", self, prog);
    if (access(path, X_OK) != 0) {
        SL_FREE(path);
    }
    return path;
}

int
sl_text_program_found(const char *prog)
{
    const char *path = getenv("PATH");
    const char *p = NULL;
    char *own = sl__text_own_program(prog);
    int found = own != NULL;

    sl_free(own);
    if (found) {
        return 1;
    }
    if (prog == NULL || prog[0] == '\0') {
        return 0;
    }
    if (strchr(prog, '/') != NULL) {
        return access(prog, X_OK) == 0;
    }
    for (p = path != NULL ? path : "/usr/bin:/bin"; !found;) {
        size_t n = strcspn(p, ":");
        char *full =
            sl_asprintf("%.*s/%s", (int)(n > 0 ? n : 1), n > 0 ? p : ".", prog);

        found = access(full, X_OK) == 0;
        sl_free(full);
        if (p[n] == '\0') {
            break;
        }
        p += n + 1;
    }
    return found;
}

/* Warn when @what @prog (NULL: none) of the converter for @mime is not
 * installed, naming @pkg; 1 when it is not. */
static size_t
warn_missing(const char *mime,
             const char *what,
             const char *prog,
             const char *pkg,
             const char *then)
{
    if (prog == NULL || sl_text_program_found(prog)) {
        return 0;
    }
    SL_WARN("textExtractor: converter for %s: %s '%s' is not installed%s%s%s; "
            "documents of this type %s",
            mime,
            what,
            prog,
            pkg != NULL ? " (Debian package " : "",
            pkg != NULL ? pkg : "",
            pkg != NULL ? ")" : "",
            then);
    return 1;
}

size_t
sl_text_converters_check(const json_t *converters)
{
    const char *mime = NULL;
    const json_t *c = NULL;
    size_t missing = 0;

    json_object_foreach((json_t *)(uintptr_t)converters, mime, c)
    {
        const char *prog =
            json_string_value(json_array_get(json_object_get(c, "command"), 0));
        const char *meta = json_string_value(
            json_array_get(json_object_get(c, "metaCommand"), 0));
        const char *pkg = json_string_value(json_object_get(c, "package"));

        missing +=
            warn_missing(mime,
                         "program",
                         prog,
                         pkg,
                         "are counted converter.missing and have no text");
        (void)warn_missing(
            mime, "metadata program", meta, pkg, "have no metadata");
    }
    return missing;
}

/* Start the converter configured by @cfg for the record. */
void
sl__text_conv_begin(struct sl_text_doc *d, const json_t *cfg)
{
    struct sl__text_conv *c = &d->conv;

    if (conv_config(c, cfg, d->mime) != 0) {
        d->outcome = SL_TEXT_CONV_FAILED;
        return;
    }
    if (!sl_text_program_found(c->argv[0])) {
        d->outcome = SL_TEXT_CONV_MISSING;
        return;
    }
    if (c->file_arg != SIZE_MAX || c->persistent) {
        if (conv_spool(c) != 0) {
            d->outcome = SL_TEXT_CONV_FAILED;
        }
        return;
    }
    if (conv_spawn(c) != 0) {
        d->outcome = SL_TEXT_CONV_FAILED;
    }
}

/* Give @n bytes of content to the converter: into the spool file, or to
 * its stdin while its stdout is read (so neither side can block the
 * other). */
int
sl__text_conv_feed(struct sl_text *x,
                   struct sl_text_doc *d,
                   const char *p,
                   size_t n)
{
    struct sl__text_conv *c = &d->conv;
    int rc = 0;

    if (d->outcome != SL_TEXT_EXTRACTED) {
        return SL_TEXT_STOP;
    }
    if (c->file_fd >= 0) {
        if (sl_write_all(c->file_fd, p, n) != 0) {
            SL_WARN(
                "textExtractor: spool %s: %s", c->path, sl_errno_str(errno));
            d->outcome = SL_TEXT_CONV_FAILED;
            return SL_TEXT_STOP;
        }
        return 0;
    }
    while (rc == 0 && n > 0 && c->in_fd >= 0 && !c->reaped && !c->enough) {
        rc = conv_poll(x, d, &p, &n, 100);
    }
    return rc != 0
               ? rc
               : (c->reaped || c->in_fd < 0 || c->enough ? SL_TEXT_STOP : 0);
}

/* Wait (until the deadline) for the child to exit while reading its
 * output; its process group is killed before it is reaped. */
static int
conv_wait(struct sl_text *x, struct sl_text_doc *d)
{
    struct sl__text_conv *c = &d->conv;
    siginfo_t si;
    int nap = 1;
    int rc = 0;

    while (!c->reaped) {
        if (c->enough) {
            conv_kill(c); /* its text is full: no need to wait */
            break;
        }
        memset(&si, 0, sizeof(si));
        if (waitid(P_PID, (id_t)c->pid, &si, WEXITED | WNOHANG | WNOWAIT) ==
                0 &&
            si.si_pid == c->pid) {
            while (c->out_fd >= 0 && !d->text.full &&
                   sl_mono_ms() < c->deadline) {
                struct pollfd pfd = {c->out_fd, POLLIN, 0};

                if (poll(&pfd, 1, 0) <= 0) {
                    break;
                }
                conv_read(x, d);
            }
            conv_kill(c);
            break;
        }
        if (c->out_fd >= 0) {
            rc = conv_poll(x, d, NULL, NULL, 100);
        } else {
            (void)poll(NULL, 0, nap);
            nap = nap < 50 ? nap * 2 : 50;
            rc = conv_poll(x, d, NULL, NULL, 0);
        }
        if (rc != 0) {
            break;
        }
    }
    return rc;
}

/* Finish the converter (unless @abort: kill it): the outcome from its
 * exit status; files and descriptors released. */
int
sl__text_conv_end(struct sl_text *x, struct sl_text_doc *d, int abort)
{
    struct sl__text_conv *c = &d->conv;
    int rc = 0;

    if (c->file_fd >= 0) {
        conv_close_fd(&c->file_fd);
        if (c->persistent) {
            if (!abort && d->outcome == SL_TEXT_EXTRACTED) {
                rc = sl__text_helper_run(x, d);
            }
        } else if (!abort && d->outcome == SL_TEXT_EXTRACTED &&
                   conv_spawn(c) != 0) {
            d->outcome = SL_TEXT_CONV_FAILED;
        }
    }
    conv_close_fd(&c->in_fd);
    if (c->pid > 0) {
        if (abort) {
            conv_kill(c);
        } else {
            rc = conv_wait(x, d);
        }
    }
    conv_close_fd(&c->out_fd);
    if (!abort && rc == 0 && c->pid > 0 && d->outcome == SL_TEXT_EXTRACTED &&
        !c->enough) {
        if (c->timed_out) {
            d->outcome = SL_TEXT_CONV_TIMEOUT;
            SL_WARN("textExtractor: converter %s for %s timed out after "
                    "%lld s",
                    c->argv[0],
                    d->mime,
                    (long long)(c->timeout / 1000));
        } else if (!WIFEXITED(c->status) || WEXITSTATUS(c->status) != 0) {
            d->outcome = SL_TEXT_CONV_FAILED;
            SL_WARN("textExtractor: converter %s for %s failed (%s %d)",
                    c->argv[0],
                    d->mime,
                    WIFEXITED(c->status) ? "exit status" : "signal",
                    WIFEXITED(c->status) ? WEXITSTATUS(c->status)
                                         : WTERMSIG(c->status));
        }
    }
    if (!abort && rc == 0 && d->outcome == SL_TEXT_EXTRACTED &&
        c->meta != NULL && c->path != NULL) {
        sl__text_conv_meta(x, d);
    }
    if (c->path != NULL) {
        (void)unlink(c->path);
        SL_FREE(c->path);
    }
    if (d->outcome != SL_TEXT_EXTRACTED) {
        sl__text_buf_clear(&d->text);
    }
    SL_FREE(c->argv);
    SL_FREE(c->prog);
    c->pid = -1;
    return rc;
}
