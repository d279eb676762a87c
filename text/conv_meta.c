/*
 * The metadata of a document read by a converter: a converter entry's
 * `metaCommand` (an argv with "{file}", run on the spooled document once
 * the converter succeeded, under the same time and memory limits) prints
 * "Key: value" lines, as pdfinfo and `exiftool -S` do; the keys of
 * meta_keys become the document's title, author, created, modified and
 * pages.  What it prints beyond 64 KiB is not read; a command that fails
 * or times out leaves the document without metadata (logged), never
 * without its text.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "text/text_int.h"

#define META_MAX ((size_t)64 << 10)

/* Run @argv (a new array; its strings borrowed) with the limits of @c;
 * its stdout into @out (at most META_MAX bytes, NUL-terminated).  0 when
 * it exited with status 0 in time. */
static int
meta_run(const struct sl__text_conv *c, char **argv, char *out, size_t *len)
{
    int fds[2] = {-1, -1};
    int null_in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int null_err = open("/dev/null", O_WRONLY | O_CLOEXEC);
    int64_t deadline = sl_mono_ms() + c->timeout;
    int status = 0;
    pid_t pid = -1;

    *len = 0;
    if (null_in < 0 || null_err < 0 || pipe2(fds, O_CLOEXEC) != 0) {
        fds[0] = fds[1] = -1;
        goto fail;
    }
    pid = fork();
    if (pid == 0) {
        sl__text_conv_child(c, argv, null_in, fds[1], null_err);
    }
    (void)close(fds[1]);
    fds[1] = -1;
    while (pid > 0) {
        struct pollfd p = {fds[0], POLLIN, 0};
        int64_t left = deadline - sl_mono_ms();
        ssize_t n = 0;

        if (left <= 0 || poll(&p, 1, (int)left) <= 0) {
            break; /* timed out (or poll failed): killed below */
        }
        n = read(fds[0], out + *len, META_MAX - 1 - *len);
        if (n <= 0 || (*len += (size_t)n) == META_MAX - 1) {
            break;
        }
    }
    if (pid > 0) {
        (void)kill(-pid, SIGKILL);
        (void)kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
    }
fail:
    out[*len] = '\0';
    if (fds[0] >= 0) {
        (void)close(fds[0]);
    }
    if (fds[1] >= 0) {
        (void)close(fds[1]);
    }
    if (null_in >= 0) {
        (void)close(null_in);
    }
    if (null_err >= 0) {
        (void)close(null_err);
    }
    /* killed after EOF is fine: the output is complete */
    return pid > 0 && ((WIFEXITED(status) && WEXITSTATUS(status) == 0) ||
                       (WIFSIGNALED(status) && *len > 0))
               ? 0
               : -1;
}

enum meta_field {
    META_TITLE,
    META_AUTHOR,
    META_CREATED,
    META_MODIFIED,
    META_PAGES
};

/* The keys taken: pdfinfo's (CreationDate, ModDate) and exiftool's tag
 * names (CreateDate, ModifyDate; Slides, the page count of a
 * presentation, as in an OOXML docProps/app.xml). */
static const struct {
    const char *key;
    enum meta_field field;
} meta_keys[] = {
    {"Title", META_TITLE},
    {"Author", META_AUTHOR},
    {"CreationDate", META_CREATED},
    {"CreateDate", META_CREATED},
    {"ModDate", META_MODIFIED},
    {"ModifyDate", META_MODIFIED},
    {"Pages", META_PAGES},
    {"Slides", META_PAGES},
};

/* Is date @v no date at all: no digit other than 0?  An OLE2 property
 * that was never set is a zero FILETIME, which exiftool prints as "0"
 * (or "0000:00:00 00:00:00"), and a zero date is no creation date. */
static int
meta_date_unset(const char *v)
{
    return strpbrk(v, "123456789") == NULL;
}

void
sl__text_conv_meta_line(struct sl_text_doc *d, char *line)
{
    char *colon = strchr(line, ':');
    char *v = NULL;
    uint64_t pages = 0;
    size_t i = 0;

    if (colon == NULL) {
        return;
    }
    *colon = '\0';
    for (v = colon + 1; *v == ' ' || *v == '\t'; v++) {
    }
    if (v[0] == '\0' || !sl_utf8_valid(v, strlen(v))) {
        return;
    }
    for (i = 0; i < sizeof(meta_keys) / sizeof(meta_keys[0]); i++) {
        if (strcmp(line, meta_keys[i].key) == 0) {
            break;
        }
    }
    if (i == sizeof(meta_keys) / sizeof(meta_keys[0])) {
        return;
    }
    switch (meta_keys[i].field) {
    case META_TITLE:
        sl__text_buf_set(&d->title, SL_TEXT_TITLE_MAX, v);
        break;
    case META_AUTHOR:
        sl__text_buf_set(&d->author, SL_TEXT_TITLE_MAX, v);
        break;
    case META_CREATED:
        if (!meta_date_unset(v)) {
            sl__text_buf_set(&d->created, SL_TEXT_TITLE_MAX, v);
        }
        break;
    case META_MODIFIED:
        if (!meta_date_unset(v)) {
            sl__text_buf_set(&d->modified, SL_TEXT_TITLE_MAX, v);
        }
        break;
    case META_PAGES:
        if (sl_parse_u64(v, &pages) == 0 && pages > 0) {
            d->pages = pages;
        }
        break;
    }
}

void
sl__text_conv_meta(struct sl_text *x, struct sl_text_doc *d)
{
    const struct sl__text_conv *c = &d->conv;
    size_t n = json_array_size(c->meta);
    char **argv = sl_calloc(n + 1, sizeof(*argv));
    char *out = sl_malloc(META_MAX);
    char *line = NULL;
    char *save = NULL;
    size_t len = 0;
    size_t i = 0;

    (void)x;
    for (i = 0; i < n; i++) {
        const char *a = json_string_value(json_array_get(c->meta, i));

        argv[i] = (char *)(uintptr_t)(a == NULL                  ? ""
                                      : strcmp(a, "{file}") == 0 ? c->path
                                                                 : a);
    }
    if (meta_run(c, argv, out, &len) != 0) {
        SL_WARN("textExtractor: metadata command %s for %s failed; the "
                "document keeps its text",
                argv[0],
                d->mime);
    } else {
        for (line = strtok_r(out, "\n", &save); line != NULL;
             line = strtok_r(NULL, "\n", &save)) {
            sl__text_conv_meta_line(d, line);
        }
    }
    sl_free(out);
    sl_free(argv);
}
